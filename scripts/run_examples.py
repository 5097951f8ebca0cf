#!/usr/bin/env python3
"""Runs every example program in examples/ through `hologram run` on random inputs and checks
the outputs against numpy (float64 references). Part of the main job (scripts/run_main.sh)."""
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/release/hologram")
rng = np.random.default_rng(2026)


def run(prog, args, outs, grid=None, block="256"):
    cmd = [CLI, "run", os.path.join(ROOT, "examples", prog), "--block", block]
    if grid:
        cmd += ["--grid", grid]
    for k, v in args.items():
        cmd += ["--arg", f"{k}={v}"]
    for k, v in outs.items():
        cmd += ["--out", f"{k}={v}"]
    subprocess.run(cmd, check=True)


def check(name, got, want, rtol):
    err = np.max(np.abs(got.astype(np.float64) - want) / (np.abs(want) + 1e-30)) if want.size else 0.0
    ok = got.shape == want.shape and err <= rtol
    print(f"{name:14s} n={want.size:<9d} max rel err {err:.2e} (tolerance {rtol:g}) {'ok' if ok else 'FAIL'}")
    return ok


def main():
    ok = True
    with tempfile.TemporaryDirectory() as d:
        p = lambda n: os.path.join(d, n)  # noqa: E731
        n = 1_000_003
        a, b, c = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
        for nm, arr in (("a", a), ("b", b), ("c", c)):
            np.save(p(nm + ".npy"), arr)
        run("vector_add.hasm", {"a": p("a.npy"), "b": p("b.npy"), "c": f"zeros:{n}", "n": n},
            {"c": p("out.npy")})
        ok &= check("vector_add", np.load(p("out.npy")), (a + b).astype(np.float64), 0.0)
        run("fused_chain.hasm", {"a": p("a.npy"), "b": p("b.npy"), "c": p("c.npy"),
                                 "y": f"zeros:{n}", "n": n}, {"y": p("y.npy")})
        ok &= check("fused_chain", np.load(p("y.npy")),
                    (np.maximum(a * b + c, np.float32(0)) * np.float32(0.5)).astype(np.float64), 0.0)

        g = (n + 255) // 256
        run("block_reduce.hasm", {"x": p("a.npy"), "partial": f"zeros:{g}", "n": n},
            {"partial": p("part.npy")})
        part = np.load(p("part.npy"))
        pad = np.zeros(g * 256); pad[:n] = a
        # f32 tree sums: compare the error with the sum of |terms| of each block
        want = pad.reshape(g, 256).sum(axis=1)
        scale = np.abs(pad).reshape(g, 256).sum(axis=1)
        err = np.max(np.abs(part.astype(np.float64) - want) / scale)
        print(f"block_reduce   n={n:<9d} max err/sum|terms| {err:.2e} (tolerance 1e-6) {'ok' if err <= 1e-6 else 'FAIL'}")
        ok &= bool(err <= 1e-6)
        ok &= check("  total", np.array([part.astype(np.float64).sum()]),
                    np.array([a.astype(np.float64).sum()]), 1e-4)

        M, N, K = 300, 257, 129
        A = rng.standard_normal((M, K), dtype=np.float32)
        B = rng.standard_normal((K, N), dtype=np.float32)
        np.save(p("A.npy"), A); np.save(p("B.npy"), B)
        run("tiled_matmul.hasm", {"A": p("A.npy"), "B": p("B.npy"), "C": f"zeros:{M * N}",
                                  "M": M, "N": N, "K": K},
            {"C": p("C.npy")}, grid=f"{(N + 15) // 16},{(M + 15) // 16}", block="16,16")
        C = np.load(p("C.npy")).reshape(M, N).astype(np.float64)
        ref = A.astype(np.float64) @ B.astype(np.float64)
        scale = np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
        err = np.max(np.abs(C - ref) / scale)
        print(f"tiled_matmul   {M}x{K}x{N} max err/sum|terms| {err:.2e} (tolerance 1e-6) {'ok' if err <= 1e-6 else 'FAIL'}")
        ok &= bool(err <= 1e-6)
    print("examples:", "all ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
