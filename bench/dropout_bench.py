#!/usr/bin/env python3
"""Per-call time of dropout on GPT-2's shapes (bench/torch_models.py's config): ATen's
native_dropout / native_dropout_backward (torch), the backend's lowerings (hologram: one pass
each, hg.ops.dropout / dropout_backward) and the three-pass form they replaced (before: a
uniform f32 tensor, a fused where, a compare for the mask). One process, the variants
interleaved round by round, best and median of the rounds.

    OMP_NUM_THREADS=2 python3 bench/dropout_bench.py [--rounds 30] [--threads 2]
"""
import argparse
import os
import statistics
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--rounds", type=int, default=30)
ap.add_argument("--threads", type=int, default=2)
args = ap.parse_args()
for var in ("OMP_NUM_THREADS", "HOLOGRAM_NUM_THREADS"):   # before torch and hologram load
    os.environ[var] = str(args.threads)

import torch  # noqa: E402

import hologram as hg  # noqa: E402
from hologram_torch import _bridge as B  # noqa: E402
from hologram_torch._aten import dropout as D  # noqa: E402

aten = torch.ops.aten
P = 0.1


def before_forward(x, p):
    """The lowering before one-pass dropout: uniform numbers, a fused apply, the mask."""
    e = B.executor_of(0, x.device, "bench")
    hx = B.to_hg(x, e)
    u = hg.empty(tuple(hx.shape), "f32", executor=e)
    hg._C.random(u, False, D.draw_seed(), 0, 0.0, 1.0)
    out = _before_apply(p)(hx, u)
    return B.to_torch(out), B.to_torch(hg.greater_equal(u, p))


_made = {}


def _before_apply(p):
    if p not in _made:
        _made[p] = hg.jit(lambda x, u: hg.where(u >= p, x * (1.0 / (1.0 - p)), 0))
    return _made[p]


def before_backward(g, mask, scale):
    e = B.executor_of(0, g.device, "bench")
    key = ("bw", scale)
    if key not in _made:
        _made[key] = hg.jit(lambda g, m: hg.where(m, g * scale, g * 0.0))
    return B.to_torch(_made[key](B.to_hg(g, e), B.to_hg(mask, e)))


def timed(fn, reps):
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


def main():
    torch.set_num_threads(args.threads)
    shapes = [(4, 64, 256), (4, 4, 64, 64), (4, 64, 1024)]
    print(f"dropout p={P}, f32, {args.threads} threads, best / median of {args.rounds} "
          f"interleaved rounds, us per call")
    for shape in shapes:
        x = torch.randn(shape)
        g = torch.randn(shape)
        mask = torch.rand(shape) > P
        scale = 1 / (1 - P)
        variants = {
            "fwd torch": lambda: aten.native_dropout(x, P, True),
            "fwd hologram": lambda: D._native_dropout(x, P, True),
            "fwd before": lambda: before_forward(x, P),
            "bwd torch": lambda: aten.native_dropout_backward(g, mask, scale),
            "bwd hologram": lambda: D._native_dropout_bw(g, mask, scale),
            "bwd before": lambda: before_backward(g, mask, scale),
        }
        reps = max(3, int(2e6 // x.numel()))
        for f in variants.values():
            f()
        times = {k: [] for k in variants}
        for _ in range(args.rounds):
            for k, f in variants.items():
                times[k].append(timed(f, reps))
        n = x.numel()
        print(f"{str(shape):>16} ({n} elements):")
        for k, ts in times.items():
            best, med = min(ts) * 1e6, statistics.median(ts) * 1e6
            gbs = n * (4 + 4 + 1) / min(ts) / 1e9
            print(f"  {k:<13} {best:8.1f} {med:8.1f}   ({gbs:5.1f} GB/s of x, out, mask)")


if __name__ == "__main__":
    main()
