#!/usr/bin/env python3
"""The real-model zoo (bench/torch_model_zoo.py) through torch eager, torch.compile (inductor),
torch.compile(backend="hologram") and hologram_torch.nn.convert, in the same run (issue 34).

    python3 bench/torch_models.py [--models gpt2,llama] [--rounds 5] [--threads 2] [--quick]

For each model: the forward (eval, no_grad) and the training step (train mode: forward, the
model's loss, backward, torch.optim.Adam's step: the same optimizer on every side, so that the
step measures the model) of each variant, on its own copy of the same weights and the same
input. Every variant runs once per round and the order reverses every other round (load from
other users of a shared machine hits all alike); best and median over rounds, each a batch of
calls of at least --min-s seconds. The first call of each (compiling, for torch.compile) is on
another input and timed alone: the compile time, reported beside inductor's (cold: inductor
gets a fresh on-disk cache unless --warm-cache). Each variant's
result is checked against eager: the forward's output on the timing input (rel_err of
torch_model_zoo), the first training step's gradients (same weights, same input) where the
model has no dropout, and with dropout only that no gradient is all-zero where eager's is not.
Threads: torch.set_num_threads and OMP_NUM_THREADS (inductor's kernels), HOLOGRAM_NUM_THREADS
(the default executor, which torch.compile's backend uses) and convert's executor. The
backend="hologram" variant is skipped, with the reason printed, where no such dynamo backend is
registered. Writes bench/out/torch_models-<time>.json and prints a markdown
table (ratio: inductor's time / the variant's, > 1: faster than inductor).
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ("eager", "inductor", "hologram", "convert")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="", help="comma-separated names (default: all)")
    p.add_argument("--rounds", type=int, default=None, help="default 5 (--quick: 3)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-s", type=float, default=0.2, help="seconds per timed batch of calls")
    p.add_argument("--quick", action="store_true",
                   help="batches of >= 0.05 s, 3 rounds unless --rounds (a smoke run)")
    p.add_argument("--warm-cache", action="store_true",
                   help="keep inductor's on-disk cache (default: a fresh one, cold compiles)")
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    args = p.parse_args(argv)
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    if args.quick:
        args.min_s = 0.05
    return args


def timed(fn, min_s):
    """Seconds per call of fn, over a batch of calls lasting at least min_s."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= min_s:
            return t / n
        n = max(n + 1, int(n * min_s / max(t, 1e-9) * 1.2))


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        return platform.processor()


def git_rev():
    try:
        return subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class Runner:
    """The variants of one model: a forward copy and a training copy (with its Adam) each."""

    def __init__(self, torch, ht, zoo, name, executor, hologram_reason):
        self.torch, self.zoo, self.name = torch, zoo, name
        self.skipped = {}
        self.convert_kept = ""
        makers = {"eager": lambda m: m,
                  "inductor": lambda m: torch.compile(m),
                  "hologram": lambda m: torch.compile(m, backend="hologram"),
                  "convert": lambda m: self._convert(ht, m, executor)}
        if hologram_reason:
            self.skipped["hologram"] = hologram_reason
        model, self.make_inputs, self.loss_fn = zoo.build(name)
        self.fwd, self.train, self.opt, self.base = {}, {}, {}, {}
        for v in VARIANTS:
            if v in self.skipped:
                continue
            fm, tm = zoo.copy_model(model).eval(), zoo.copy_model(model).train()
            self.base[v] = tm   # the module whose parameters the optimizer holds
            self.fwd[v], self.train[v] = makers[v](fm), makers[v](tm)
            self.opt[v] = torch.optim.Adam(tm.parameters(), lr=1e-4)
        self.x = self.make_inputs(1)

    def _convert(self, ht, model, executor):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ht.nn.convert(model, executor)
        self.convert_kept = "; ".join(str(w.message) for w in caught)
        return model

    def forward(self, v, x=None):
        with self.torch.no_grad():
            return self.fwd[v](**(x or self.x))

    def step(self, v, x=None):
        x = x or self.x
        self.opt[v].zero_grad(set_to_none=True)
        self.loss_fn(self.train[v](**x), x).backward()
        self.opt[v].step()

    def first_calls(self):
        """{mode: {variant: seconds of the first call}} on another input (compile time), and
        the checks against eager on the timing input."""
        zoo, first, check = self.zoo, {"forward": {}, "train": {}}, {"forward": {}, "train": {}}
        x0 = self.make_inputs(0)
        for v in self.fwd:
            t0 = time.perf_counter()
            self.forward(v, x0)
            first["forward"][v] = time.perf_counter() - t0
        want = zoo.output_tensor(self.forward("eager"))
        for v in self.fwd:
            check["forward"][v] = {"rel_err": zoo.rel_err(zoo.output_tensor(self.forward(v)),
                                                          want)}
        for v in self.train:
            # The first step's gradients (before its optimizer step) against eager's: the
            # weights and input are the same on every side.
            opt, model, x = self.opt[v], self.train[v], x0
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            self.loss_fn(model(**x), x).backward()
            first["train"][v] = time.perf_counter() - t0
        for v in self.train:
            errs = zoo.grad_errors(self.base[v], self.base["eager"])
            zero = [k for k, p in self.base[v].named_parameters()
                    if p.grad is not None and not p.grad.any()
                    and dict(self.base["eager"].named_parameters())[k].grad.any()]
            c = {"all_zero_grads": zero}
            if not zoo.MODELS[self.name].has_dropout:
                c["grad_rel_err"] = max((e for e in errs.values() if e is not None), default=0.0)
            check["train"][v] = c
        for v in self.train:
            self.opt[v].step()
        return first, check


def run_model(torch, ht, zoo, name, args, executor, hologram_reason):
    torch._dynamo.reset()
    r = Runner(torch, ht, zoo, name, executor, hologram_reason)
    first, check = r.first_calls()
    times = {"forward": {v: [] for v in r.fwd}, "train": {v: [] for v in r.train}}
    for i in range(args.rounds):
        order = list(r.fwd) if i % 2 == 0 else list(reversed(r.fwd))
        for v in order:
            times["forward"][v].append(timed(lambda: r.forward(v), args.min_s))
            times["train"][v].append(timed(lambda: r.step(v), args.min_s))
    result = {"config": zoo.MODELS[name].config, "skipped": r.skipped,
              "convert_kept": r.convert_kept}
    for mode in times:
        result[mode] = {v: {"best_s": min(ts), "median_s": statistics.median(ts),
                            "first_call_s": first[mode][v], **check[mode][v]}
                        for v, ts in times[mode].items()}
    return result


def _ms(s):
    return f"{s * 1e3:.2f}"


def markdown(results):
    lines = ["| model | mode | eager ms | inductor ms | hologram ms | convert ms | "
             "eager / inductor | hologram / inductor | convert / inductor | "
             "first call s: inductor / hologram |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for name, res in results.items():
        for mode in ("forward", "train"):
            row = res[mode]
            ind = row.get("inductor", {}).get("best_s")
            cells = [_ms(row[v]["best_s"]) if v in row else "—" for v in VARIANTS]
            ratios = [f"{ind / row[v]['best_s']:.2f}" if v in row and ind else "—"
                      for v in ("eager", "hologram", "convert")]
            comp = " / ".join(f"{row[v]['first_call_s']:.1f}" if v in row else "—"
                              for v in ("inductor", "hologram"))
            lines.append(f"| {name} | {mode} | " + " | ".join(cells + ratios) + f" | {comp} |")
            for v, c in row.items():
                if c.get("all_zero_grads"):
                    notes.append(f"{name} train, {v}: all-zero gradients where eager's are not: "
                                 + ", ".join(c["all_zero_grads"]))
                err = c.get("rel_err", c.get("grad_rel_err"))
                tol = 1e-4 if mode == "forward" else 1e-3
                if err is not None and err > tol:
                    notes.append(f"{name} {mode}, {v}: {'output' if mode == 'forward' else 'grad'}"
                                 f" rel_err {err:.2e} against eager (> {tol:g})")
    return "\n".join(lines), notes


def main(argv=None):
    args = parse_args(argv)
    for var in ("OMP_NUM_THREADS", "HOLOGRAM_NUM_THREADS"):   # before torch and hologram load
        os.environ[var] = str(args.threads)
    cache = None
    if not args.warm_cache:   # inductor's on-disk caches would make a rerun's compile ~free
        cache = tempfile.mkdtemp(prefix="torch_models_inductor_")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    try:
        run(args)
    finally:
        if cache:
            shutil.rmtree(cache, ignore_errors=True)


def run(args):
    import torch
    import hologram as hg
    import hologram_torch as ht
    sys.path.insert(0, HERE)
    import torch_model_zoo as zoo

    torch.set_num_threads(args.threads)
    executor = hg.Executor("cpu", num_threads=args.threads)
    try:
        torch._dynamo.lookup_backend("hologram")
        hologram_reason = ""
    except Exception as e:   # torch._dynamo.exc.InvalidBackend, or the backend's own failure
        hologram_reason = f"backend 'hologram' not available: {type(e).__name__}: {e}"
        print(f"skipping torch.compile(backend='hologram'): {hologram_reason}", flush=True)
    names = [n for n in args.models.split(",") if n] or list(zoo.MODELS)
    unknown = [n for n in names if n not in zoo.MODELS]
    if unknown:
        sys.exit(f"unknown models {unknown}; known: {', '.join(zoo.MODELS)}")
    results = {}
    for name in names:
        t0 = time.perf_counter()
        results[name] = run_model(torch, ht, zoo, name, args, executor, hologram_reason)
        print(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    table, notes = markdown(results)
    try:
        import transformers
        tf_version = transformers.__version__
    except ImportError:
        tf_version = None
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "cpu": cpu_name(), "threads": args.threads, "rounds": args.rounds,
            "min_s": args.min_s, "torch": torch.__version__, "transformers": tf_version,
            "hologram": hg.__version__, "git": git_rev(), "optimizer": "torch.optim.Adam(lr=1e-4)",
            "hologram_cpu_threading": hg.cpu_threading()}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "torch_models-" + time.strftime("%Y%m%d-%H%M%S") + ".json")
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": results, "notes": notes}, f, indent=1)
    print(f"\n{meta['cpu']}, {args.threads} threads (hologram's on "
          f"{meta['hologram_cpu_threading']} threads), torch {meta['torch']}, transformers "
          f"{tf_version}, best of {args.rounds} rounds (ms per call), at {meta['git']}\n")
    print(table)
    if hologram_reason:
        print(f"\nhologram: skipped ({hologram_reason})")
    if notes:
        print("\nNotes:\n" + "\n".join(f"- {n}" for n in notes))
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
