#!/usr/bin/env python3
"""The CUDA backend's benchmarks (issue 5, section 4) in one run on one GPU, each against a limit
or a peer measured in the same process on the same device:

  bandwidth  add and relu(a*b+c)*0.5 (one @hg.jit kernel) on --size f32 elements, as bytes
             moved per second over the device-to-device copy bandwidth (the better of
             hologram's copy and torch's copy_), and the chain against torch eager and
             torch.compile on the same memory (hologram wraps torch's tensors zero-copy)
  rows       softmax and layer_norm (with weight and bias) over the last dim of f32 rows for
             --rows shapes: torch's time over ours, and bytes moved over the copy bandwidth
  matmul     f32, bf16, f16 n x n for --mm sizes: hologram (cuBLAS) over torch.matmul
  launch     a 1-element add per call, host timing (hologram's calls return complete) and,
             with torch, CUDA events around a batch of calls; torch's own 1-element add
  compile    NVRTC cold compile of a new kernel, then a memory-cache hit, then a disk-cache
             hit in a fresh process (HOLOGRAM_CACHE_DIR in a temporary folder)

    python bench/cuda_bench.py [--size 268435456] [--mm 1024,2048,4096,8192] [--repeats 20]
                               [--rows 4096x4096,8192x1024] [--json FILE] [--emulate]

--emulate runs the hologram side on the backend's host emulation with tiny sizes (checks the
script where there is no GPU; the numbers mean nothing). Without torch (or without a CUDA
torch) the peer columns are left empty. Prints markdown tables; progress goes to stderr.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def best_median(ts):
    return min(ts), statistics.median(ts)


def timed(fn, repeats, sync=None):
    """Seconds per call of fn over `repeats` calls (one warm-up call first)."""
    fn()
    if sync:
        sync()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        ts.append(time.perf_counter() - t0)
    return ts


def torch_cuda():
    try:
        import torch
    except Exception:
        return None
    return torch if torch.cuda.is_available() else None


def bandwidth(hg, ex, torch, n, repeats):
    log(f"bandwidth: {n} f32 elements per array")
    rows = []
    rng = np.random.default_rng(1)
    if torch is not None:
        ta, tb, tc, ty = (torch.rand(n, device="cuda") - 0.5 for _ in range(4))
        a, b, c, y = (hg.from_dlpack(t, executor=ex) for t in (ta, tb, tc, ty))
    else:
        a, b, c, y = (hg.asarray((rng.random(n, dtype=np.float32) - 0.5), executor=ex)
                      for _ in range(4))

    @hg.jit
    def chain(a, b, c):
        return hg.ops.relu(a * b + c) * 0.5

    res = {}
    res["hg_copy"] = timed(lambda: hg.ops.copy(a, out=y), repeats)
    res["hg_add"] = timed(lambda: hg.ops.add(a, b, out=y), repeats)
    res["hg_chain"] = timed(lambda: chain(a, b, c), repeats)
    check = chain(a, b, c).numpy(copy=True)
    ah, bh, ch = (t.numpy(copy=True) for t in (a, b, c))
    want = np.maximum(ah * bh + ch, 0) * np.float32(0.5)
    assert np.array_equal(check, want), "fused chain result differs from numpy"
    if torch is not None:
        sync = torch.cuda.synchronize
        res["torch_copy"] = timed(lambda: ty.copy_(ta), repeats, sync)
        res["torch_chain"] = timed(lambda: torch.relu(ta * tb + tc) * 0.5, repeats, sync)
        compiled = torch.compile(lambda a, b, c: torch.relu(a * b + c) * 0.5)
        for _ in range(3):
            compiled(ta, tb, tc)
        res["torch_compile_chain"] = timed(lambda: compiled(ta, tb, tc), repeats, sync)
    copy_best = min(min(res["hg_copy"]), min(res.get("torch_copy", [float("inf")])))
    copy_bw = 8 * n / copy_best
    for name, nbytes in (("hg_copy", 8), ("hg_add", 12), ("hg_chain", 16), ("torch_copy", 8),
                         ("torch_chain", 16), ("torch_compile_chain", 16)):
        if name not in res:
            continue
        b_, m_ = best_median(res[name])
        rows.append({"case": name, "best_ms": b_ * 1e3, "median_ms": m_ * 1e3,
                     "GBps": nbytes * n / b_ / 1e9, "of_copy": nbytes * n / b_ / copy_bw})
    peers = {"copy_GBps": copy_bw / 1e9}
    if torch is not None:
        hc = min(res["hg_chain"])
        peers.update(torch_eager_over_ours=min(res["torch_chain"]) / hc,
                     torch_compile_over_ours=min(res["torch_compile_chain"]) / hc)
    return rows, peers


def rows_ops(hg, ex, torch, shapes, repeats, copy_GBps):
    """softmax and layer_norm over the last dim, each side writing into its own preallocated
    output (out=), inputs shared zero-copy when torch is there."""
    out = []
    for r, c in shapes:
        log(f"rows {r}x{c}")
        if torch is not None:
            tx = torch.randn(r, c, device="cuda")
            tw, tb = torch.rand(c, device="cuda") + 0.5, torch.randn(c, device="cuda")
            ty = torch.empty_like(tx)
            x, w, b, y = (hg.from_dlpack(t, executor=ex) for t in (tx, tw, tb, ty))
        else:
            rng = np.random.default_rng(4)
            x = hg.asarray(rng.standard_normal((r, c)).astype(np.float32), executor=ex)
            w = hg.asarray((rng.random(c) + 0.5).astype(np.float32), executor=ex)
            b = hg.asarray(rng.standard_normal(c).astype(np.float32), executor=ex)
            y = hg.empty((r, c), "float32", executor=ex)
        cases = {
            "softmax": (lambda: hg.ops.softmax(x, axis=-1, out=y),
                        (lambda: torch.softmax(tx, -1, out=ty)) if torch is not None else None),
            "layer_norm": (lambda: hg.ops.layer_norm(x, c, w, b, out=y),
                           # torch has no out= here: its own best form, a new tensor from
                           # its caching allocator
                           (lambda: torch.nn.functional.layer_norm(tx, (c,), tw, tb))
                           if torch is not None else None),
        }
        xh = x.numpy(copy=True).astype(np.float64)
        e = np.exp(xh - xh.max(-1, keepdims=True))
        mu, var = xh.mean(-1, keepdims=True), xh.var(-1, keepdims=True)
        refs = {"softmax": e / e.sum(-1, keepdims=True),
                "layer_norm": (xh - mu) / np.sqrt(var + 1e-5) * w.numpy(copy=True) +
                              b.numpy(copy=True)}
        for name, (ours_fn, theirs_fn) in cases.items():
            ours_fn()
            err = np.abs(y.numpy(copy=True) - refs[name]).max()
            assert err < 1e-4, f"{name} {r}x{c}: max error {err} against float64 numpy"
            ours = timed(ours_fn, repeats)
            row = {"op": name, "rows": r, "cols": c, "ours_ms": min(ours) * 1e3,
                   "of_copy": 8 * r * c / min(ours) / 1e9 / copy_GBps}
            if theirs_fn is not None:
                theirs = timed(theirs_fn, repeats, torch.cuda.synchronize)
                row["torch_ms"] = min(theirs) * 1e3
                row["torch_over_ours"] = min(theirs) / min(ours)
            out.append(row)
    return out


def matmul(hg, ex, torch, sizes, repeats):
    rows = []
    dts = ["float32", "bfloat16", "float16"]
    for dt in dts:
        for n in sizes:
            log(f"matmul {dt} n={n}")
            if torch is not None:
                tdt = getattr(torch, dt)
                ta = torch.randn(n, n, device="cuda").to(tdt)
                tb = torch.randn(n, n, device="cuda").to(tdt)
                to = torch.empty(n, n, device="cuda", dtype=tdt)
                a, b, o = (hg.from_dlpack(t, executor=ex) for t in (ta, tb, to))
            else:
                if dt == "bfloat16":
                    continue   # numpy has no bfloat16 to fill the inputs from
                a = hg.asarray(np.random.default_rng(2).standard_normal((n, n)).astype(dt),
                               executor=ex)
                b = hg.asarray(np.random.default_rng(3).standard_normal((n, n)).astype(dt),
                               executor=ex)
                o = hg.empty((n, n), dt, executor=ex)
            ours = timed(lambda: hg.ops.matmul(a, b, out=o), repeats)
            fl = 2.0 * n ** 3
            row = {"dtype": dt, "n": n, "ours_TFLOPs": fl / min(ours) / 1e12}
            if torch is not None:
                theirs = timed(lambda: torch.matmul(ta, tb, out=to), repeats,
                               torch.cuda.synchronize)
                row["torch_TFLOPs"] = fl / min(theirs) / 1e12
                row["ours_over_torch"] = min(theirs) / min(ours)
            rows.append(row)
    return rows


def launch(hg, ex, torch, calls):
    log("launch overhead")
    x = hg.asarray(np.ones(1, np.float32), executor=ex)
    y = hg.empty((1,), "float32", executor=ex)
    out = {}
    for _ in range(100):
        hg.ops.add(x, x, out=y)
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            hg.ops.add(x, x, out=y)
        ts.append((time.perf_counter() - t0) / calls)
    out["hg_host_us"] = min(ts) * 1e6
    if torch is not None:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        e0.record()
        for _ in range(calls):
            hg.ops.add(x, x, out=y)
        e1.record()
        torch.cuda.synchronize()
        out["hg_events_us"] = e0.elapsed_time(e1) * 1e3 / calls
        tx = torch.ones(1, device="cuda")
        ty = torch.empty(1, device="cuda")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            torch.add(tx, tx, out=ty)
        torch.cuda.synchronize()
        out["torch_async_us"] = (time.perf_counter() - t0) / calls * 1e6
        t0 = time.perf_counter()
        for _ in range(calls):
            torch.add(tx, tx, out=ty)
            torch.cuda.synchronize()
        out["torch_synced_us"] = (time.perf_counter() - t0) / calls * 1e6
    return out


COMPILE_CHILD = r"""
import sys, time, numpy as np, hologram as hg
ex = hg.Executor("cuda")
x = hg.asarray(np.arange(1000, dtype=np.float32), executor=ex)
k = float(sys.argv[1])   # a constant no earlier run used: a kernel never compiled before
t0 = time.perf_counter(); y = hg.ops.tanh(x * k + 0.25); first = time.perf_counter() - t0
t0 = time.perf_counter(); y = hg.ops.tanh(x * k + 0.25); second = time.perf_counter() - t0
print(first, second)
"""


def compile_times(emulate):
    log("NVRTC compile and kernel caches")
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as d:
        env["HOLOGRAM_CACHE_DIR"] = d
        if emulate:
            env["HOLOGRAM_CUDA_EMULATE"] = "1"
        k = repr(1.0 + (time.time_ns() % 1000003) / 1e7)
        runs = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", COMPILE_CHILD, k], env=env, check=True,
                               capture_output=True, text=True)
            runs.append([float(v) for v in r.stdout.split()])
    # The first call compiles the three eager kernels (mul, add, tanh) the expression needs.
    return {"cold_compile_ms": runs[0][0] * 1e3, "memory_hit_ms": runs[0][1] * 1e3,
            "disk_hit_ms": runs[1][0] * 1e3}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=256 * 1024 * 1024)
    ap.add_argument("--mm", default="1024,2048,4096,8192")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--rows", default="4096x4096,8192x1024")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--json")
    ap.add_argument("--emulate", action="store_true")
    args = ap.parse_args()
    if args.emulate:
        os.environ["HOLOGRAM_CUDA_EMULATE"] = "1"
        args.size, args.mm, args.repeats, args.calls, args.rows = 4096, "32", 2, 50, "16x64"
    import hologram as hg
    torch = None if args.emulate else torch_cuda()
    ex = hg.Executor("cuda")
    info = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(),
            "emulated": args.emulate, "torch": getattr(torch, "__version__", None)}
    if torch is not None:
        info["gpu"] = torch.cuda.get_device_name(0)
    bw, peers = bandwidth(hg, ex, torch, args.size, args.repeats)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.rows.split(",")]
    ro = rows_ops(hg, ex, torch, shapes, args.repeats, peers["copy_GBps"])
    mm = matmul(hg, ex, torch, [int(s) for s in args.mm.split(",")], args.repeats)
    la = launch(hg, ex, torch, args.calls)
    cc = compile_times(args.emulate)
    result = {"info": info, "bandwidth": bw, "peers": peers, "rows": ro, "matmul": mm, "launch": la,
              "compile": cc}

    print(f"# CUDA benchmarks, {info['date']}, {info.get('gpu', 'emulation' if args.emulate else '?')}"
          f", torch {info['torch']}\n")
    print(f"{args.size} f32 elements; 'of copy' = bytes moved per second over the best "
          "device-to-device copy in this run.\n")
    print("| case | best ms | median ms | GB/s | of copy |\n|---|---:|---:|---:|---:|")
    for r in bw:
        print(f"| {r['case']} | {r['best_ms']:.3f} | {r['median_ms']:.3f} | {r['GBps']:.1f} | "
              f"{r['of_copy']:.3f} |")
    if "torch_eager_over_ours" in peers:
        print(f"\nfused chain: torch eager / ours = {peers['torch_eager_over_ours']:.2f} "
              f"(target >= 3), torch.compile / ours = {peers['torch_compile_over_ours']:.2f} "
              "(target >= 1)")
    print("\nrows (f32, over the last dim; 'of copy' counts 8 bytes per element):\n")
    print("| op | shape | ours ms | torch ms | torch / ours | of copy |\n|---|---|---:|---:|---:|---:|")
    for r in ro:
        print(f"| {r['op']} | {r['rows']}x{r['cols']} | {r['ours_ms']:.3f} | "
              f"{r.get('torch_ms', float('nan')):.3f} | {r.get('torch_over_ours', float('nan')):.2f} | "
              f"{r['of_copy']:.3f} |")
    print("\n| dtype | n | ours TFLOP/s | torch TFLOP/s | ours / torch |\n|---|---:|---:|---:|---:|")
    for r in mm:
        print(f"| {r['dtype']} | {r['n']} | {r['ours_TFLOPs']:.2f} | "
              f"{r.get('torch_TFLOPs', float('nan')):.2f} | {r.get('ours_over_torch', float('nan')):.3f} |")
    print("\nlaunch (1-element add), us per call: " +
          ", ".join(f"{k} {v:.2f}" for k, v in la.items()))
    print("kernel compile/caches, ms: " + ", ".join(f"{k} {v:.2f}" for k, v in cc.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
