#!/usr/bin/env python3
"""The compile backend's pointwise fusion (hologram_torch._aten.fuse) against torch: NewGELU
written out (8 ATen nodes) on --n float32 as one fused hologram kernel, torch eager,
torch.compile (inductor) and torch's own gelu(approximate="tanh"); and the call overhead of a
1-element fused add (the FusedKernel, and the FX GraphModule around it) against torch.add,
hologram_torch.functional.add and inductor; Llama's rotary embedding on a (B, S, H, D) q
(transpose, slices, neg, cat, multiplies by cos / sin, add) fused with the graph's view nodes,
fused without them (views and cat left to torch between kernels), eager and inductor. Best of
--rounds interleaved rounds.

    OMP_NUM_THREADS=2 python3 bench/torch_fuse.py [--n 1048576] [--threads 2] [--rounds 7]
        [--rotary 4,512,8,64]
"""
import argparse
import math
import time

import torch
from torch.fx.experimental.proxy_tensor import make_fx

import hologram_torch.functional as F
from hologram_torch._aten.fuse import FusedKernel, fuse_elementwise


def newgelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                       (x + 0.044715 * torch.pow(x, 3.0))))


def best(cases, n, rounds):
    out = {k: math.inf for k in cases}
    for _ in range(rounds):
        for k, (f, args) in cases.items():
            t = time.perf_counter()
            for _ in range(n):
                f(*args)
            out[k] = min(out[k], (time.perf_counter() - t) / n)
    return out


def fused(fn, *args):
    gm = make_fx(fn)(*args)
    fuse_elementwise(gm)
    return gm


def rotary(q, cos, sin):
    qt = q.transpose(1, 2)
    h = qt.shape[-1] // 2
    return qt * cos + torch.cat((-qt[..., h:], qt[..., :h]), dim=-1) * sin


def fused_without_views(fn, *args):
    """fused(), with the pass leaving permute / slice / split parts / cat to torch."""
    from hologram_torch._aten import pointwise as pw
    own = (pw._lower_strided, pw._lower_cat, pw._lower_split_item)
    pw._lower_strided, pw._lower_cat, pw._lower_split_item = (lambda *a: None,) * 3
    try:
        return fused(fn, *args)
    finally:
        pw._lower_strided, pw._lower_cat, pw._lower_split_item = own


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--rotary", default="4,512,8,64", help="B,S,H,D of the rotary case")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    x = torch.randn(a.n)
    ind = torch.compile(newgelu)
    ind(x)
    r = best({"hologram fused": (fused(newgelu, x), (x,)), "torch eager": (newgelu, (x,)),
              "inductor": (ind, (x,)),
              "torch gelu(tanh)": (lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
                                   (x,))}, 20, a.rounds)
    print(f"NewGELU, {a.n} float32:", ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in r.items()))
    p, q = torch.randn(1), torch.randn(1)
    gm = fused(lambda u, v: u + v, p, q)
    kernel = next(n.target for n in gm.graph.nodes if isinstance(n.target, FusedKernel))
    inda = torch.compile(lambda u, v: u + v)
    inda(p, q)
    r = best({"FusedKernel": (kernel, (p, q)), "fused GraphModule": (gm, (p, q)),
              "torch.add": (torch.add, (p, q)), "functional.add": (F.add, (p, q)),
              "inductor": (inda, (p, q))}, 20000, a.rounds)
    print("1-element add:", ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in r.items()))
    b, s, h, d = (int(v) for v in a.rotary.split(","))
    args = (torch.randn(b, s, h, d), torch.randn(s, d), torch.randn(s, d))
    indr = torch.compile(rotary)
    indr(*args)
    r = best({"fused with views": (fused(rotary, *args), args),
              "fused without views": (fused_without_views(rotary, *args), args),
              "torch eager": (rotary, args), "inductor": (indr, args)}, 10, a.rounds)
    print(f"rotary {a.rotary}:", ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in r.items()))
    # The rotary kernel's core on its own: a fused chain over a permuted operand against one op
    # (the packed-rows path of the CPU's elementwise kernel, docs/ops.md).
    c = torch.randn(b, h, s, d)
    for name, fn in (("qt*cos + c", lambda u, w, x: u.transpose(1, 2) * w + x),
                     ("qt + c", lambda u, w, x: u.transpose(1, 2) + x)):
        r = best({"fused": (fused(fn, args[0], args[1], c), (args[0], args[1], c)),
                  "torch eager": (fn, (args[0], args[1], c))}, 10, a.rounds)
        print(f"{name} {a.rotary}:", ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in r.items()))


if __name__ == "__main__":
    main()
