#!/usr/bin/env python3
"""Where a zoo model's time goes under torch.compile(backend="hologram"): the compile report of
each graph, then the seconds per call of every node target of the compiled graphs (hologram's
lowered functions and fused kernels by name, ATen ops left to torch, views), summed by target.

    python3 bench/torch_backend_profile.py gpt2 [--mode train] [--steps 10] [--threads 2]
    python3 bench/torch_backend_profile.py gpt2 --mode train --ab native_dropout.default
    python3 bench/torch_backend_profile.py llama --ab-views

Each call_function node's target is wrapped in a timer after hologram's compiler has lowered
the graph (the wrappers add ~1 us per node: compare targets with each other, not the total with
bench/torch_models.py). --ab OP[,OP...] instead times the step twice in one process, in
interleaved rounds: those TABLE entries run by hologram, then by ATen's own op (torch) —
whether a lowering pays on this model, measured on the same machine state (best and median;
torch's side runs as the backend runs what it leaves: on one thread in graphs with hologram
nodes and no convolution).
--ab-views times the step with the fusion pass as it is against the pass without strided views
and concatenation (permute / t / transpose / slice / split parts / cat left to torch between
kernels, as before the graph IR had those nodes): each captured graph compiled both ways, the two
run in interleaved rounds in one process; prints each variant's fused kernels and the view and
cat nodes left to torch.
The step is bench/torch_models.py's: forward (eval, no_grad) or forward + loss + backward +
Adam's step (train).
"""
import argparse
import collections
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--mode", choices=("eval", "train"), default="eval")
    p.add_argument("--steps", type=int, default=10, help="steps per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=25, help="targets listed")
    p.add_argument("--ab", default="", help="TABLE ops (e.g. native_dropout.default) to A/B")
    p.add_argument("--ab-views", action="store_true",
                   help="A/B the fusion pass with and without strided views and cat")
    return p.parse_args(argv)


def _timed_targets(gm, kind, totals, calls):
    """Wraps each call_function target of gm in a timer keyed (graph kind, target name)."""
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        fn = node.target
        key = (kind, str(fn) if hasattr(fn, "overloadpacket") else
               getattr(fn, "__name__", str(fn)))

        def timed(*a, _fn=fn, _key=key, **k):
            t0 = time.perf_counter()
            try:
                return _fn(*a, **k)
            finally:
                totals[_key] += time.perf_counter() - t0
                calls[_key] += 1
        node.target = timed
    gm.recompile()


def instrument(backend, totals, calls):
    """The backend's compiler, after it has lowered a graph and counted its nodes
    (backend.report_of), wraps the graph's targets in the timers; graphs named g0, g1, ... in
    compile order (the order of backend.reports())."""
    report_of, count = backend.report_of, [0]

    def report_and_time(gm, kind):
        r = report_of(gm, kind)
        _timed_targets(gm, f"g{count[0]}", totals, calls)
        count[0] += 1
        return r
    backend.report_of = report_and_time


def ab_switch(table, names, use_torch):
    """Replaces TABLE[op] of each name by a switch between hologram's fn and ATen's op."""
    import torch
    from hologram_torch._aten.common import Lowering
    for name in names:
        packet, overload = name.split(".")
        op = getattr(getattr(torch.ops.aten, packet), overload)
        low = table[op]
        specialize = getattr(low.fn, "specialize", None)

        def pick(fn, _op=op):
            return lambda *a, **k: _op(*a, **k) if use_torch[0] else fn(*a, **k)
        fn = pick(low.fn)
        if specialize is not None:
            fn.specialize = lambda node, _s=specialize, _pick=pick: _pick(_s(node))
        table[op] = Lowering(fn, low.accepts)


def ab_views_backend(backend, variant, counts):
    """A backend compiling each graph twice: with the fusion pass's strided views and cat
    ("views") and without ("no views"); variant[0] picks the one that runs."""
    import copy
    from hologram_torch._aten import pointwise as pw
    own = (pw._lower_strided, pw._lower_cat, pw._lower_split_item)
    lower = backend.lower

    def counting_lower(gm):
        c = counts[variant[0]]
        for n in gm.graph.nodes:
            name = str(n.target)
            if "hologram_fused" in n.meta:
                c["fused kernels"] += 1
            elif name.startswith("aten.") and name.split(".")[1] in (
                    "permute", "transpose", "t", "slice", "cat", "split", "split_with_sizes"):
                c["torch " + name.split(".")[1]] += 1
        return lower(gm)
    backend.lower = counting_lower

    def compile_both(gm, example_inputs):
        fns = {}
        for v in ("no views", "views"):
            variant[0] = v
            pw._lower_strided, pw._lower_cat, pw._lower_split_item = (
                own if v == "views" else (lambda *a: None,) * 3)
            fns[v] = backend.hologram_backend(copy.deepcopy(gm), example_inputs)
        return lambda *a: fns[variant[0]](*a)
    return compile_both


def main(argv=None):
    args = parse_args(argv)
    for var in ("OMP_NUM_THREADS", "HOLOGRAM_NUM_THREADS"):   # before torch and hologram load
        os.environ.setdefault(var, str(args.threads))
    sys.path.insert(0, HERE)
    import torch
    import torch_model_zoo as zoo
    import hologram_torch.backend as backend
    from hologram_torch._aten.table import TABLE
    torch.set_num_threads(args.threads)

    totals, calls, use_torch = collections.Counter(), collections.Counter(), [False]
    variant, counts = ["views"], collections.defaultdict(collections.Counter)
    if args.ab:
        ab_switch(TABLE, args.ab.split(","), use_torch)
    elif not args.ab_views:
        instrument(backend, totals, calls)
    model, make_inputs, loss_fn = zoo.build(args.model)
    x = make_inputs(1)
    compiled = torch.compile(model, backend=ab_views_backend(backend, variant, counts)
                             if args.ab_views else "hologram")
    if args.mode == "train":
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(compiled(**x), x).backward()
            opt.step()
    else:
        model.eval()

        def step():
            with torch.no_grad():
                compiled(**x)

    def run_round():
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        return (time.perf_counter() - t0) / args.steps * 1e3

    step()
    if args.ab_views:   # training: each variant's backward graphs compile on its first step
        for v in ("no views", "views", "no views", "views"):
            variant[0] = v
            step()
        for v in ("no views", "views"):
            print(f"{v}: {dict(counts[v])}")
        ms = {"no views": [], "views": []}
        for r in range(args.rounds):
            for v in (("no views", "views") if r % 2 == 0 else ("views", "no views")):
                variant[0] = v
                ms[v].append(run_round())
        for v in ms:
            print(f"{args.model} {args.mode}, fusion pass with {v}: best {min(ms[v]):.2f} ms, "
                  f"median {statistics.median(ms[v]):.2f} ms")
        return
    for i, r in enumerate(backend.reports()):
        print(f"g{i}: {r}")
    if args.ab:
        use_torch[0] = True
        step()
        ms = {False: [], True: []}
        for r in range(args.rounds):
            for v in ((False, True) if r % 2 == 0 else (True, False)):
                use_torch[0] = v
                ms[v].append(run_round())
        for v, who in ((False, "hologram"), (True, "torch")):
            print(f"{args.model} {args.mode}, {args.ab} by {who}: best {min(ms[v]):.2f} ms, "
                  f"median {statistics.median(ms[v]):.2f} ms")
        return
    totals.clear()
    calls.clear()
    best = min(run_round() for _ in range(args.rounds))
    n = args.steps * args.rounds
    print(f"{args.model} {args.mode}: best {best:.2f} ms per step; in graph nodes "
          f"{sum(totals.values()) / n * 1e3:.2f} ms per step (all rounds)")
    for key, t in totals.most_common(args.top):
        print(f"{t / n * 1e3:9.3f} ms {calls[key] // n:4d}x  {key[0]:4s} {key[1]}")


if __name__ == "__main__":
    main()
