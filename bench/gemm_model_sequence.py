#!/usr/bin/env python3
"""The matmuls of a transformer training step against torch's (MKL on the CPU build), in the
same run: the products of bench/torch_model_zoo.py's Llama (4 layers, 256 tokens: q, k, v, o,
gate, up, down projections; forward x W^T, input gradient dY W, weight gradient dY^T X), each
layer with buffers of its own, so the weights come from L3 as they do inside a model (a loop
over one product keeps them hot in L2).

    PYTHONPATH=python OMP_NUM_THREADS=2 build/venv/bin/python bench/gemm_model_sequence.py [rounds]

Prints the best time of the whole sequence for hologram's matmul (the compile backend's `mm`)
and torch.mm, rounds alternated, and the same per kind of product.
"""
import sys
import time

import torch

import hologram_torch  # noqa: F401  (sets up the shared threads)
from hologram_torch._aten.matmul import _mm

torch.set_num_threads(2)
torch.manual_seed(0)
M = 256
DIMS = [(256, 256), (256, 128), (256, 128), (256, 256), (256, 688), (256, 688), (688, 256)]
KINDS = ["forward x W^T", "input grad dY W", "weight grad dY^T X"]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    seq = []
    for _layer in range(4):
        for din, dout in DIMS:
            x, w, dy = torch.randn(M, din), torch.randn(dout, din), torch.randn(M, dout)
            seq += [(x, w.t()), (dy, w), (dy.t(), x)]
    flops = sum(2 * a.shape[0] * a.shape[1] * b.shape[1] for a, b in seq)

    def run(f, products):
        t0 = time.perf_counter()
        for a, b in products:
            f(a, b)
        return time.perf_counter() - t0

    best = {}
    for kind in [None, 0, 1, 2]:
        products = seq if kind is None else seq[kind::3]
        h = t = float("inf")
        for _ in range(rounds):
            h = min(h, run(_mm, products))
            t = min(t, run(torch.mm, products))
        best[kind] = (h, t)
    h, t = best[None]
    print(f"{len(seq)} products: hologram {h * 1e3:.2f} ms ({flops / h / 1e9:.0f} GFLOP/s), "
          f"torch {t * 1e3:.2f} ms ({flops / t / 1e9:.0f}); torch time / ours {t / h:.3f}")
    for kind in range(3):
        h, t = best[kind]
        print(f"  {KINDS[kind]:20s} hologram {h * 1e3:.2f} ms, torch {t * 1e3:.2f} ms, "
              f"ratio {t / h:.3f}")


if __name__ == "__main__":
    main()
