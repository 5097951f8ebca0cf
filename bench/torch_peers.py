#!/usr/bin/env python3
"""hologram_torch against torch on the same tensors, in the same run (issue 15 §5).

    python3 bench/torch_peers.py [--threads 2] [--repeats 9] [--quick] [--md out.md]

Cases: hologram_torch.functional on 16M f32 (add, exp, tanh, gelu), softmax of 4096 x 4096 and
layer_norm of 8192 x 1024 against the torch op; the fused chain relu(a*b+c)*0.5 through
hologram_torch.jit against torch eager; one training step of an MLP (batch 256, 784 -> 1024 ->
1024 -> 10, GELU, LayerNorm, cross-entropy, Adam) built from hologram_torch.nn against the same
model from torch.nn (forward, backward and the whole step with torch.optim.Adam on both sides;
then the hologram modules with hologram_torch.optim.Adam against torch.nn with torch's default
Adam and with Adam(fused=True)); the first layer's product and the Adam update alone; and the
per-call cost of a
1-element add without and with grad. Each side runs with the same thread count (torch:
torch.set_num_threads; hologram: an Executor of that many threads), the sides alternate
within each round, and best and median are reported; ratio = torch time / ours (> 1: ours is
faster). --quick: 1M elements and fewer repeats (a smoke run for the tests).
"""
import argparse
import statistics
import sys
import time

import torch

import hologram as hg
import hologram_torch as ht


def timed(fn, min_s=0.02):
    """Seconds per call of fn, over a batch long enough to measure."""
    fn()
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= min_s or n >= 1 << 20:
            return t / n
        n *= 4


def compare(ours, theirs, repeats):
    a, b = [], []
    for _ in range(repeats):   # interleaved rounds
        a.append(timed(ours))
        b.append(timed(theirs))
    return min(a), statistics.median(a), min(b), statistics.median(b)


def mlp(nn):
    return torch.nn.Sequential(nn.Linear(784, 1024), nn.GELU(), nn.LayerNorm(1024),
                               nn.Linear(1024, 1024), nn.GELU(), nn.LayerNorm(1024),
                               nn.Linear(1024, 10))


def mlp_setup(nn, adam, ex):
    """(model, optimizer, loss) of the MLP from nn (hologram modules run on ex); adam: a module
    with an Adam class (hologram_torch.optim, or another revision's: bench/adam_step.py),
    "torch" or "fused" (torch.optim.Adam, for-loop or fused)."""
    torch.manual_seed(1)
    m = mlp(nn)
    if nn is ht.nn:
        for mod in m:
            if isinstance(mod, ht.nn._HgModule):
                mod._set_executor(ex)
    if isinstance(adam, str):
        opt = torch.optim.Adam(m.parameters(), lr=1e-3, fused=adam == "fused" or None)
    else:
        opt = adam.Adam(m.parameters(), lr=1e-3, executor=ex)
    loss_fn = ht.nn.CrossEntropyLoss(ex) if nn is ht.nn else torch.nn.CrossEntropyLoss()
    return m, opt, loss_fn


def train_step(m, opt, loss_fn, x, t):
    """One training step of model m on (x, t) as a function of no arguments."""
    def f():
        opt.zero_grad(set_to_none=True)
        loss_fn(m(x), t).backward()
        opt.step()
    return f


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--md")
    p.add_argument("--cases", help="run only the cases whose name contains this text")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    ex = hg.Executor("cpu", num_threads=args.threads)
    F, TF = ht.functional, torch.nn.functional
    n = 1 << 20 if args.quick else 1 << 24
    reps = 3 if args.quick else args.repeats
    torch.manual_seed(0)
    a, b, c = (torch.randn(n) for _ in range(3))
    rows = 1024 if args.quick else 4096
    sm = torch.randn(rows, 4096)
    ln = torch.randn(rows * 2, 1024)
    w, bias = torch.randn(1024), torch.randn(1024)

    @ht.jit(executor=ex)
    def chain(x, y, z):
        return hg.relu(x * y + z) * 0.5

    cases = [
        (f"add, {n:,} f32", lambda: F.add(ex, a, b), lambda: torch.add(a, b), 1.0),
        (f"exp, {n:,} f32", lambda: F.exp(ex, a), lambda: torch.exp(a), 1.0),
        (f"tanh, {n:,} f32", lambda: F.tanh(ex, a), lambda: torch.tanh(a), 1.0),
        (f"gelu, {n:,} f32", lambda: F.gelu(ex, a), lambda: TF.gelu(a), 1.0),
        (f"softmax, {rows} x 4096", lambda: F.softmax(ex, sm, -1), lambda: torch.softmax(sm, -1),
         1.0),
        (f"layer_norm, {rows * 2} x 1024", lambda: F.layer_norm(ex, ln, (1024,), w, bias),
         lambda: TF.layer_norm(ln, (1024,), w, bias), 1.0),
        (f"fused chain relu(a*b+c)*0.5 (hologram_torch.jit), {n:,}", lambda: chain(a, b, c),
         lambda: torch.relu(a * b + c) * 0.5, 3.0),
    ]
    # The MLP training step.
    batch = 64 if args.quick else 256
    x = torch.randn(batch, 784)
    t = torch.randint(0, 10, (batch,))
    # name -> (model, optimizer, loss): hologram modules with torch's Adam ("ours") or with
    # hologram_torch.optim.Adam ("ours+hg adam"); torch.nn with torch's default Adam (for-loop on
    # the CPU) or its fused one.
    variants = (("ours", ht.nn, "torch"), ("ours+hg adam", ht.nn, ht.optim),
                ("torch", torch.nn, "torch"), ("torch fused", torch.nn, "fused"))
    models = {name: mlp_setup(nn, adam, ex) for name, nn, adam in variants}

    def fwd(name):
        m, _, loss_fn = models[name]
        return lambda: loss_fn(m(x), t)

    def fwd_bwd(name):
        m, _, loss_fn = models[name]

        def f():
            m.zero_grad(set_to_none=True)
            loss_fn(m(x), t).backward()
        return f

    def step(name):
        return train_step(*models[name], x, t)

    cases += [
        (f"MLP forward, batch {batch}", fwd("ours"), fwd("torch"), 1.0),
        (f"MLP forward + backward, batch {batch}", fwd_bwd("ours"), fwd_bwd("torch"), 1.0),
        (f"MLP training step (Adam), batch {batch}", step("ours"), step("torch"), 1.0),
        (f"MLP training step, hologram_torch.optim.Adam vs torch.optim.Adam, batch {batch}",
         step("ours+hg adam"), step("torch"), 1.0),
        (f"MLP training step, hologram_torch.optim.Adam vs Adam(fused=True), batch {batch}",
         step("ours+hg adam"), step("torch fused"), 1.0),
    ]
    # The pieces: the first layer's product (x @ W^T packs W^T) and the Adam update alone.
    xl, wl, bl = torch.randn(batch, 784), torch.randn(1024, 784), torch.randn(1024)
    cases.append((f"linear {batch} x 784 -> 1024", lambda: F.linear(ex, xl, wl, bl),
                  lambda: TF.linear(xl, wl, bl), 1.0))
    adam_params = {}
    for name in ("hg", "torch", "fused"):
        torch.manual_seed(2)
        ps = [torch.nn.Parameter(p.detach().clone()) for p in mlp(torch.nn).parameters()]
        for p in ps:
            p.grad = torch.randn_like(p)
        adam_params[name] = (ht.optim.Adam(ps, lr=1e-3, executor=ex) if name == "hg" else
                             torch.optim.Adam(ps, lr=1e-3, fused=name == "fused" or None))
    cases += [
        ("Adam update of the MLP's 1.87M parameters, vs torch.optim.Adam",
         adam_params["hg"].step, adam_params["torch"].step, 1.0),
        ("Adam update of the MLP's 1.87M parameters, vs Adam(fused=True)",
         adam_params["hg"].step, adam_params["fused"].step, 1.0),
    ]
    # Short rows with a broadcast row (the grouped row layout) and a loss gradient (a fused
    # formula): no targets of issue 15, measured beside torch.
    xs, ws_ = torch.randn((1 << 20) // 10 * 10).reshape(-1, 10), torch.randn(10)
    ts_ = torch.randn(xs.shape)

    @ht.jit(executor=ex)
    def row_chain(x, y, r):
        return (x * y + 1) * r

    lg, lt = torch.randn(batch, 1024), torch.rand(batch, 1024)
    lw, lpw = torch.rand(1024), torch.rand(1024) + 0.5

    def bcel(fn, x):
        def f():
            x.grad = None
            fn(x, lt, weight=lw, pos_weight=lpw).backward()
        return f
    lg_a, lg_b = lg.clone().requires_grad_(), lg.clone().requires_grad_()
    cases += [
        (f"mul by a broadcast row, {xs.shape[0]:,} x 10", lambda: F.mul(ex, xs, ws_),
         lambda: torch.mul(xs, ws_), 0),
        (f"fused (x*t+1)*w, w a broadcast row, {xs.shape[0]:,} x 10 (hologram_torch.jit)",
         lambda: row_chain(xs, ts_, ws_), lambda: (xs * ts_ + 1) * ws_, 0),
        (f"binary_cross_entropy_with_logits forward + backward, {batch} x 1024",
         bcel(F.binary_cross_entropy_with_logits, lg_a),
         bcel(TF.binary_cross_entropy_with_logits, lg_b), 0),
    ]
    one_a, one_b = torch.randn(1), torch.randn(1)
    one_g = torch.randn(1, requires_grad=True)
    cases += [
        ("add, 1 element, no grad (per call)", lambda: F.add(one_a, one_b),
         lambda: torch.add(one_a, one_b), None),
        ("add, 1 element, with grad (per call)", lambda: F.add(one_g, one_b),
         lambda: torch.add(one_g, one_b), None),
    ]
    header = (f"hologram_torch {hg.__version__} vs torch {torch.__version__}, "
              f"{args.threads} thread(s), {time.strftime('%Y-%m-%d')}")
    out = [header, "", "| case | ours best / median | torch best / median | torch ÷ ours "
           "(best) | target |", "|---|---:|---:|---:|---:|"]
    for name, ours, theirs, target in cases:
        if args.cases and args.cases not in name:
            continue
        print(f"torch_peers: {name}", file=sys.stderr, flush=True)
        ob, om, tb, tm = compare(ours, theirs, reps)
        unit, k = ("µs", 1e6)
        if ob > 1e-3:
            unit, k = ("ms", 1e3)
        tgt = f"≥ {target:.1f}" if target else "≤ 4 µs / 8 µs" if target is None else "—"
        out.append(f"| {name} | {ob * k:.2f} / {om * k:.2f} {unit} | {tb * k:.2f} / {tm * k:.2f} "
                   f"{unit} | {tb / ob:.2f} | {tgt} |")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
