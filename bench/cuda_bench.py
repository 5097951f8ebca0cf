#!/usr/bin/env python3
"""The CUDA backend's benchmarks (issues 5 and 31) in one run on one GPU, each against a limit
or a peer measured in the same process on the same device, device work timed with CUDA events
on each side's stream (bench/cuda_timing.py):

  bandwidth  add and relu(a*b+c)*0.5 (one @hg.jit kernel) on --size f32 elements, as bytes
             moved per second over the device-to-device copy bandwidth (the better of
             hologram's copy and torch's copy_), and the chain against torch eager and
             torch.compile on the same memory (hologram wraps torch's tensors zero-copy)
  rows       softmax, log_softmax, layer_norm (weight and bias), rms_norm (weight) and
             cross_entropy (class indices, mean) over the last dim of f32 rows, and the
             backward ops of softmax, log_softmax, layer_norm and cross_entropy, for --rows shapes (default 4096x4096, 8192x1024, 262144x64 short rows, 65536x4096
             beyond L2): torch's time over ours, and bytes moved over the copy bandwidth
  matmul     f32, bf16, f16 n x n for --mm sizes: hologram (cuBLAS) over torch.matmul
  bmm        f32, bf16, f16 batched products for --bmm shapes (batch x m x k x n; a trailing
             "t": b a transposed view, as attention's q @ k^T): ours over torch.bmm
  launch     a 1-element add from Python: synchronous (op + synchronize per call),
             asynchronous (calls back to back, one synchronize at the end; hg_async_us), and
             the device time per call from events; torch's add measured the same ways
  torch      hologram_torch's MLP training step on CUDA tensors against torch eager, and
             the library calls its bmm and matmul make (bench/cuda_bench_torch.py; skipped,
             with the reason, where it cannot run)
  compile    NVRTC cold compile of a new kernel, then a memory-cache hit, then a disk-cache
             hit in a fresh process (HOLOGRAM_CACHE_DIR in a temporary folder)

  old        the kernels from before issue 31 (HOLOGRAM_DEV_ROWS=generic,
             HOLOGRAM_EW_VECTOR=0) on the bandwidth and rows cases, in a child process
             (bench/cuda_bench_old.py): `old_ms` and `old_over_ours` beside torch's ratios

    python bench/cuda_bench.py [--size 268435456] [--mm 1024,2048,4096,8192] [--repeats 20]
                               [--rows 4096x4096,...] [--bmm 64x512x512x512,...] [--json FILE]
                               [--sections bandwidth,rows,...] [--no-old] [--quick] [--emulate]

--sections runs only the sections named (bandwidth always runs: it measures the copy
bandwidth the other cases are compared with); --no-old skips the old kernels' child process;
--quick halves the repeats and the launch calls and keeps matmul at n = 4096 (a short lease).
--emulate runs the hologram side on the backend's host emulation with tiny sizes (checks the
script where there is no GPU; the numbers mean nothing). Without torch (or without a CUDA
torch) the peer columns are left empty. Prints markdown tables, the issue's targets first;
progress goes to stderr.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_timing import (L2_FLUSH_BYTES, device_ms, hologram_clock, host_us,  # noqa: E402
                         torch_clock)
from cuda_bench_torch import bmm_route, mlp_step  # noqa: E402
from cuda_bench_old import merge_old, old_summary, run_old, select_kernels  # noqa: E402

SECTIONS = ("bandwidth", "rows", "matmul", "bmm", "launch", "torch", "compile", "old")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# Results that differ from their reference: reported at the end (the run exits non-zero) rather
# than stopping the run, so that one wrong case does not cost a GPU lease the other numbers.
FAILED = []


def check(ok, what):
    if not ok:
        log(f"CHECK FAILED: {what}")
        FAILED.append(what)
    return ok


def torch_module():
    try:
        import torch
    except Exception:
        return None
    return torch


def torch_cuda():
    torch = torch_module()
    return torch if torch is not None and torch.cuda.is_available() else None


def bandwidth(hg, ex, torch, n, repeats, hc, tc, peers=True):
    log(f"bandwidth: {n} f32 elements per array")
    rows = []
    rng = np.random.default_rng(1)
    if torch is not None:
        ta, tb, tc_, ty = (torch.rand(n, device="cuda") - 0.5 for _ in range(4))
        torch.cuda.synchronize()
        a, b, c, y = (hg.from_dlpack(t, executor=ex) for t in (ta, tb, tc_, ty))
    else:
        a, b, c, y = (hg.asarray((rng.random(n, dtype=np.float32) - 0.5), executor=ex)
                      for _ in range(4))

    @hg.jit
    def chain(a, b, c):
        return hg.ops.relu(a * b + c) * 0.5

    res = {}
    res["hg_copy"] = device_ms(lambda: hg.ops.copy(a, out=y), hc, repeats)
    res["hg_add"] = device_ms(lambda: hg.ops.add(a, b, out=y), hc, repeats)
    res["hg_chain"] = device_ms(lambda: chain(a, b, c), hc, repeats)
    got = chain(a, b, c).numpy(copy=True)
    ah, bh, ch = (t.numpy(copy=True) for t in (a, b, c))
    want = np.maximum(ah * bh + ch, 0) * np.float32(0.5)
    check(np.array_equal(got, want), "fused chain result differs from numpy")
    if torch is not None and peers:
        res["torch_copy"] = device_ms(lambda: ty.copy_(ta), tc, repeats)
        res["torch_chain"] = device_ms(lambda: torch.relu(ta * tb + tc_) * 0.5, tc, repeats)
        compiled = torch.compile(lambda a, b, c: torch.relu(a * b + c) * 0.5)
        for _ in range(3):
            compiled(ta, tb, tc_)
        res["torch_compile_chain"] = device_ms(lambda: compiled(ta, tb, tc_), tc, repeats)
    copy_best = min(min(res["hg_copy"]), min(res.get("torch_copy", [float("inf")]))) / 1e3
    copy_bw = 8 * n / copy_best
    for name, nbytes in (("hg_copy", 8), ("hg_add", 12), ("hg_chain", 16), ("torch_copy", 8),
                         ("torch_chain", 16), ("torch_compile_chain", 16)):
        if name not in res:
            continue
        b_, m_ = min(res[name]) / 1e3, statistics.median(res[name]) / 1e3
        rows.append({"case": name, "best_ms": b_ * 1e3, "median_ms": m_ * 1e3,
                     "GBps": nbytes * n / b_ / 1e9, "of_copy": nbytes * n / b_ / copy_bw})
    out = {"copy_GBps": copy_bw / 1e9}
    if "torch_chain" in res:
        hc_ = min(res["hg_chain"])
        out.update(torch_eager_over_ours=min(res["torch_chain"]) / hc_,
                     torch_compile_over_ours=min(res["torch_compile_chain"]) / hc_)
    return rows, out


# ---- rows ------------------------------------------------------------------------------------
# op -> bytes moved per element: forward ops read x and write y; backward ops read the gradient
# and y (softmax) or x (layer_norm) and write dx.
# cross_entropy (mean over rows of class-index targets) reads the logits and writes one value;
# its backward (dL/dlogits, softmax fused) reads the logits and writes dx.
ROW_OPS = {"softmax": 8, "log_softmax": 8, "layer_norm": 8, "rms_norm": 8,
           "softmax_backward": 12, "log_softmax_backward": 12, "layer_norm_backward": 12,
           "cross_entropy": 4, "cross_entropy_backward": 8}


def row_reference(op, x, w, b, g, y, t=None, n=None):
    """float64 numpy of op on host rows: x the input, w/b the weights, g the incoming gradient,
    y the forward output the backward op is given (softmax / log_softmax of x); t the rows'
    class indices and n the batch's row count (cross_entropy: the per-row losses; its backward:
    dL/dx of the mean)."""
    if op.startswith("cross_entropy"):
        z = x - x.max(-1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
        rows = np.arange(len(x))
        if op == "cross_entropy":
            return -logp[rows, t]
        d = np.exp(logp)
        d[rows, t] -= 1
        return d / n
    if op == "softmax_backward":
        return y * (g - (g * y).sum(-1, keepdims=True))
    if op == "log_softmax_backward":
        return g - np.exp(y) * g.sum(-1, keepdims=True)
    if op in ("softmax", "log_softmax"):
        z = x - x.max(-1, keepdims=True)
        lse = np.log(np.exp(z).sum(-1, keepdims=True))
        return np.exp(z - lse) if op == "softmax" else z - lse
    if op == "rms_norm":
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
    mu, rstd = x.mean(-1, keepdims=True), 1 / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    xhat = (x - mu) * rstd
    if op == "layer_norm":
        return xhat * w + b
    dxh = g * w   # layer_norm_backward: dL/dx
    return rstd * (dxh - dxh.mean(-1, keepdims=True) - xhat * (dxh * xhat).mean(-1, keepdims=True))


def rows_ops(hg, ex, torch, shapes, repeats, copy_GBps, hc, tc, peers=True):
    """Each row op on each shape, each side with its inputs shared (hologram wraps torch's
    tensors zero-copy) and its own output; results checked on a sample of rows against float64
    numpy."""
    out = []
    for r, c in shapes:
        log(f"rows {r}x{c}")
        if torch is not None:
            tx, tg = torch.randn(r, c, device="cuda"), torch.randn(r, c, device="cuda")
            tw, tb = torch.rand(c, device="cuda") + 0.5, torch.randn(c, device="cuda")
            tys, tyl = torch.softmax(tx, -1), torch.log_softmax(tx, -1)
            _, tmean, trstd = torch.native_layer_norm(tx, (c,), tw, tb, 1e-5)
            tt = torch.randint(0, c, (r,), device="cuda")
            torch.cuda.synchronize()
            x, g, w, b, ys, yl, t = (hg.from_dlpack(v, executor=ex)
                                     for v in (tx, tg, tw, tb, tys, tyl, tt))
        else:
            rng = np.random.default_rng(4)
            x, g = (hg.asarray(rng.standard_normal((r, c)).astype(np.float32), executor=ex)
                    for _ in range(2))
            w = hg.asarray((rng.random(c) + 0.5).astype(np.float32), executor=ex)
            b = hg.asarray(rng.standard_normal(c).astype(np.float32), executor=ex)
            ys, yl = hg.ops.softmax(x, axis=-1), hg.ops.log_softmax(x, -1)
            t = hg.asarray(rng.integers(0, c, r), executor=ex)
        y = hg.empty((r, c), "float32", executor=ex)
        one = hg.asarray(np.array(1.0, np.float32), executor=ex)   # dL/dloss of the mean
        ours = {
            "softmax": lambda: hg.ops.softmax(x, axis=-1, out=y),
            "log_softmax": lambda: hg.ops.log_softmax(x, -1, out=y),
            "layer_norm": lambda: hg.ops.layer_norm(x, c, w, b, out=y),
            "rms_norm": lambda: hg.ops.rms_norm(x, c, w, out=y),
            "softmax_backward": lambda: hg.ops.softmax_backward(g, ys, -1, out=y),
            "log_softmax_backward": lambda: hg.ops.log_softmax_backward(g, yl, -1, out=y),
            "layer_norm_backward": lambda: hg.ops.layer_norm_backward(g, x, c, w),
            "cross_entropy": lambda: hg.ops.cross_entropy(x, t),
            "cross_entropy_backward": lambda: hg.ops.cross_entropy_backward(one, x, t, out=y),
        }
        theirs = {}
        if torch is not None and peers:
            F = torch.nn.functional
            tone = torch.ones((), device="cuda")
            tnw = torch.ops.aten.nll_loss_forward(tyl, tt, None, 1, -100)[1]   # total weight
            # torch's own best forms: new tensors from its caching allocator
            theirs = {
                "softmax": lambda: torch.softmax(tx, -1),
                "log_softmax": lambda: torch.log_softmax(tx, -1),
                "layer_norm": lambda: F.layer_norm(tx, (c,), tw, tb),
                "rms_norm": (lambda: F.rms_norm(tx, (c,), tw, eps=1e-6))
                            if hasattr(F, "rms_norm") else None,
                "softmax_backward": lambda: torch._softmax_backward_data(tg, tys, -1, tx.dtype),
                "log_softmax_backward":
                    lambda: torch._log_softmax_backward_data(tg, tyl, -1, tx.dtype),
                "layer_norm_backward": lambda: torch.ops.aten.native_layer_norm_backward(
                    tg, tx, [c], tmean, trstd, tw, tb, [True, True, True]),
                "cross_entropy": lambda: F.cross_entropy(tx, tt),
                # what torch's autograd runs for it: nll_loss's backward, then log_softmax's
                "cross_entropy_backward": lambda: torch._log_softmax_backward_data(
                    torch.ops.aten.nll_loss_backward(tone, tyl, tt, None, 1, -100, tnw),
                    tyl, -1, tx.dtype),
            }
        k = min(r, 256)   # rows checked: the first k and the last
        def sample(v):
            return np.concatenate([v[:k].numpy(copy=True), v[r - 1:].numpy(copy=True)])

        host = {name: sample(v).astype(np.float64)
                for name, v in (("x", x), ("g", g), ("ys", ys), ("yl", yl))}
        th = sample(t)
        wh, bh = w.numpy(copy=True).astype(np.float64), b.numpy(copy=True).astype(np.float64)
        for op, nbytes in ROW_OPS.items():
            if op == "cross_entropy":   # checked per row (reduction 'none'), timed as the mean
                got = hg.ops.cross_entropy(x, t, reduction="none")
            else:
                res = ours[op]()
                got = res[0] if op == "layer_norm_backward" else y
            got = sample(got)
            ref = row_reference(op, host["x"], wh, bh, host["g"],
                                host["ys"] if op.startswith("softmax") else host["yl"], th, r)
            err = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1.0))
            check(err < 1e-4, f"{op} {r}x{c}: error {err:.3g} against float64 numpy")
            t_ours = device_ms(ours[op], hc, repeats)
            row = {"op": op, "rows": r, "cols": c, "ours_ms": min(t_ours),
                   "ours_median_ms": statistics.median(t_ours), "bytes_per_elem": nbytes,
                   "of_copy": nbytes * r * c / (min(t_ours) / 1e3) / 1e9 / copy_GBps,
                   "max_rel_err": err}
            if theirs.get(op) is not None:
                t_theirs = device_ms(theirs[op], tc, repeats)
                row.update(torch_ms=min(t_theirs), torch_median_ms=statistics.median(t_theirs),
                           torch_over_ours=min(t_theirs) / min(t_ours))
            out.append(row)
    return out


# ---- matrix products ---------------------------------------------------------------------------
def operands(hg, ex, torch, dt, shape_a, shape_b, seed, bt=False):
    """(a, b, out) for hologram and (ta, tb) for torch (None without torch) of dtype dt, b given
    as a transposed view when bt (stored as shape_b with its last two dims swapped)."""
    sb = shape_b[:-2] + (shape_b[-1], shape_b[-2]) if bt else shape_b
    if torch is not None:
        tdt = getattr(torch, dt)
        gen = torch.Generator(device="cuda").manual_seed(seed)
        ta = torch.randn(shape_a, device="cuda", generator=gen).to(tdt)
        tb = torch.randn(sb, device="cuda", generator=gen).to(tdt)
        if bt:
            tb = tb.mT
        torch.cuda.synchronize()
        a, b = hg.from_dlpack(ta, executor=ex), hg.from_dlpack(tb, executor=ex)
    else:
        rng = np.random.default_rng(seed)
        a = hg.asarray(rng.standard_normal(shape_a).astype(dt), executor=ex)
        b = hg.asarray(rng.standard_normal(sb).astype(dt), executor=ex)
        b = b.mT if bt else b
        ta = tb = None
    oshape = tuple(shape_a[:-1]) + (shape_b[-1],)
    return a, b, hg.empty(oshape, dt, executor=ex), ta, tb


def check_product(hg_out, want, dt, what):
    tol = {"float32": 1e-4, "bfloat16": 2e-2, "float16": 4e-3}[dt]
    got = hg_out.astype(np.float64)
    err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1.0))
    check(err < tol, f"{what} {dt}: error {err:.3g} (limit {tol})")


def host_f64(t):
    """A product's value on the host in float64 (bf16 through torch, numpy has no bf16)."""
    return t.float().cpu().double().numpy() if hasattr(t, "cpu") else t.astype(np.float64)


def matmul(hg, ex, torch, sizes, repeats, hc, tc):
    rows = []
    for dt in ("float32", "bfloat16", "float16"):
        if torch is None and dt == "bfloat16":
            continue   # numpy has no bfloat16 to fill the inputs from
        for n in sizes:
            log(f"matmul {dt} n={n}")
            a, b, o, ta, tb = operands(hg, ex, torch, dt, (n, n), (n, n), 2)
            ours = device_ms(lambda: hg.ops.matmul(a, b, out=o), hc, repeats)
            fl = 2.0 * n ** 3
            row = {"dtype": dt, "n": n, "ours_TFLOPs": fl / min(ours) / 1e9}
            if torch is not None:
                to = torch.empty(n, n, device="cuda", dtype=ta.dtype)
                theirs = device_ms(lambda: torch.matmul(ta, tb, out=to), tc, repeats)
                row["torch_TFLOPs"] = fl / min(theirs) / 1e9
                row["ours_over_torch"] = min(theirs) / min(ours)
            rows.append(row)
    return rows


def bmm(hg, ex, torch, shapes, repeats, hc, tc):
    """Batched products (batch, m, k, n[, transposed b]): hg.ops.matmul into a preallocated
    out (one strided-batched cuBLAS call) against torch.bmm(out=) on the same operands."""
    rows = []
    for dt in ("float32", "bfloat16", "float16"):
        if torch is None and dt == "bfloat16":
            continue
        for (z, m, k, n, bt) in shapes:
            log(f"bmm {dt} {z}x{m}x{k}x{n}{' b^T' if bt else ''}")
            a, b, o, ta, tb = operands(hg, ex, torch, dt, (z, m, k), (z, k, n), 5, bt)
            hg.ops.matmul(a, b, out=o)
            if torch is not None:
                to = torch.empty(z, m, n, device="cuda", dtype=ta.dtype)
                torch.bmm(ta, tb, out=to)
                want = host_f64(to)
            else:
                want = np.matmul(a.numpy(copy=True).astype(np.float64),
                                 b.numpy(copy=True).astype(np.float64))
            got = host_f64(torch.from_dlpack(o)) if torch is not None else o.numpy(copy=True)
            check_product(got, want, dt, f"bmm {z}x{m}x{k}x{n}")
            ours = device_ms(lambda: hg.ops.matmul(a, b, out=o), hc, repeats)
            fl = 2.0 * z * m * n * k
            row = {"dtype": dt, "batch": z, "m": m, "k": k, "n": n, "b_transposed": bt,
                   "ours_ms": min(ours), "ours_TFLOPs": fl / min(ours) / 1e9}
            if torch is not None:
                theirs = device_ms(lambda: torch.bmm(ta, tb, out=to), tc, repeats)
                row.update(torch_ms=min(theirs), torch_TFLOPs=fl / min(theirs) / 1e9,
                           ours_over_torch=min(theirs) / min(ours))
            rows.append(row)
    return rows


# ---- launch latency ----------------------------------------------------------------------------
def launch(hg, ex, torch, calls, hc, tc):
    """A 1-element add from Python, microseconds per call."""
    log("launch overhead")
    x = hg.asarray(np.ones(1, np.float32), executor=ex)
    y = hg.empty((1,), "float32", executor=ex)
    f = lambda: hg.ops.add(x, x, out=y)  # noqa: E731
    out = {"hg_host_us": host_us(f, calls),                         # the call alone
           "hg_sync_us": host_us(f, calls, sync=hc.sync, each=True),
           "hg_async_us": host_us(f, calls, sync=hc.sync)}
    if hc.event is not None:
        out["hg_events_us"] = min(device_ms(f, hc, 5, inner=calls)) * 1e3
    elif torch is not None:   # calls that complete on return: torch's events see them
        out["hg_events_us"] = min(device_ms(f, tc, 5, inner=calls)) * 1e3
    if torch is not None:
        tx, ty = torch.ones(1, device="cuda"), torch.empty(1, device="cuda")
        g = lambda: torch.add(tx, tx, out=ty)  # noqa: E731
        out["torch_async_us"] = host_us(g, calls, sync=tc.sync)
        out["torch_synced_us"] = host_us(g, calls, sync=tc.sync, each=True)
        out["torch_events_us"] = min(device_ms(g, tc, 5, inner=calls)) * 1e3
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


def torch_section(hg, torch, args, res):
    """res["torch"] and res["torch_bmm_route"], checked. --emulate: the section's code on CPU
    tensors (a check of the script and of hologram_torch where there is no GPU; the numbers
    mean nothing)."""
    log("hologram_torch MLP step")
    tt, dev = (torch_module(), "cpu") if args.emulate else (torch, "cuda")
    try:
        res["torch"] = mlp_step(tt, max(3, args.repeats // 4), steps=3 if args.emulate else 20,
                                device=dev)
    except Exception as e:   # recorded, the rest of the run is kept
        res["torch"] = {"error": f"{type(e).__name__}: {e}"}
    try:
        res["torch_bmm_route"] = bmm_route(hg, tt, device=dev)
    except Exception as e:
        res["torch_bmm_route"] = {"error": f"{type(e).__name__}: {e}"}
    for k in ("torch", "torch_bmm_route"):
        check("error" not in res[k], f"{k} section: {res[k].get('error')}")
    check_torch(res["torch"], res["torch_bmm_route"], dev)


def check_torch(tm, route, dev):
    """The hologram_torch section's results: the first losses of the same model and batch
    agree, the batched products match torch.bmm, and on CUDA each is one strided-batched call."""
    if "loss_rel_diff" in tm:
        check(tm["loss_rel_diff"] < 1e-3, f"MLP step: first loss {tm['first_loss_ours']} vs "
              f"torch's {tm['first_loss_torch']} (relative difference {tm['loss_rel_diff']:.3g})")
    if "skipped" in route or "error" in route:
        return
    for name, v in route.items():
        check(v["max_abs_err"] < 1e-3, f"hologram_torch {name}: max abs error {v['max_abs_err']:.3g}"
              " against torch.bmm")
        if dev == "cuda":
            check(v["calls"] == ["gemm_strided_batched"], f"hologram_torch {name}: library calls "
                  f"{v['calls']}, expected one gemm_strided_batched")


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


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def targets(res):
    """The issue's GPU targets against this run: (target, measured, met) rows."""
    out = []
    bw = {r["case"]: r for r in res["bandwidth"]}
    rows = [r for r in res.get("rows", []) if "torch_over_ours" in r]
    if rows:
        worst = min(rows, key=lambda r: r["torch_over_ours"])
        out.append(("every row case >= 1.0x torch", f"lowest {worst['torch_over_ours']:.2f} "
                    f"({worst['op']} {worst['rows']}x{worst['cols']}); "
                    f"{sum(r['torch_over_ours'] >= 1.0 for r in rows)} of {len(rows)} met",
                    worst["torch_over_ours"] >= 1.0))
    out.append(("add >= 0.95 of the device copy", f"{bw['hg_add']['of_copy']:.3f}",
                bw["hg_add"]["of_copy"] >= 0.95))
    if "torch_compile_over_ours" in res["peers"]:
        v = res["peers"]["torch_compile_over_ours"]
        out.append(("fused chain >= 1.0x torch.compile", f"{v:.2f}", v >= 1.0))
    bm = [r for r in res.get("bmm", []) if "ours_over_torch" in r]
    if bm:
        worst = min(bm, key=lambda r: r["ours_over_torch"])
        out.append(("bmm >= 0.95x torch.bmm", f"lowest {worst['ours_over_torch']:.3f} "
                    f"({worst['dtype']} {worst['batch']}x{worst['m']}x{worst['k']}x{worst['n']})",
                    worst["ours_over_torch"] >= 0.95))
    la = res.get("launch", {})
    if "torch_async_us" in la:
        out.append(("1-element add, asynchronous, <= torch's", f"{la['hg_async_us']:.2f} us vs "
                    f"{la['torch_async_us']:.2f} us", la["hg_async_us"] <= la["torch_async_us"]))
    tm = res.get("torch")
    if tm is None:
        pass
    elif "torch_over_ours" in tm:
        v = max(tm["torch_over_ours"], tm["torch_over_ours_hg_adam"])
        dry = "CPU tensors, the dry run: " if tm.get("device") == "cpu" else ""
        out.append(("hologram_torch MLP step >= 1.0x torch eager", f"{dry}{v:.2f} (torch's Adam "
                    f"{tm['torch_over_ours']:.2f}, hologram_torch's {tm['torch_over_ours_hg_adam']:.2f})",
                    v >= 1.0))
    else:
        out.append(("hologram_torch MLP step >= 1.0x torch eager",
                    f"not run: {tm.get('skipped') or tm.get('error')}", False))
    return out


def report(res, args):
    info, bw, peers = res["info"], res["bandwidth"], res["peers"]
    p = print
    p(f"# CUDA benchmarks, {info['date']}, {info.get('gpu', 'emulation' if args.emulate else '?')}"
      f", torch {info['torch']}\n")
    p(f"Device time from {info['timing_hologram']} (hologram)"
      f"{' and cuda events (torch)' if info['timing_torch'] else ''}, best of {args.repeats}; "
      f"L2 flushed ({info['l2_flush_bytes'] / 2**20:g} MiB written) before each sample.\n")
    p("| target | measured | met |\n|---|---|---|")
    for t in res["targets"]:
        p(f"| {t['target']} | {t['measured']} | {'yes' if t['met'] else '**no**'} |")
    line = old_summary(res)
    if line:
        p(f"\n{line}")
    p(f"\n{args.size} f32 elements; 'of copy' = bytes moved per second over the best "
      "device-to-device copy in this run; `_old`: the kernels from before issue 31.\n")
    p("| case | best ms | median ms | GB/s | of copy |\n|---|---:|---:|---:|---:|")
    for r in bw:
        p(f"| {r['case']} | {r['best_ms']:.3f} | {r['median_ms']:.3f} | {r['GBps']:.1f} | "
          f"{r['of_copy']:.3f} |")
    if "torch_eager_over_ours" in peers:
        p(f"\nfused chain: torch eager / ours = {peers['torch_eager_over_ours']:.2f}, "
          f"torch.compile / ours = {peers['torch_compile_over_ours']:.2f} (target >= 1)")
    for section, fn in (("rows", report_rows), ("matmul", report_matmul), ("bmm", report_bmm),
                        ("torch_bmm_route", lambda r: report_route(r, res["torch"])),
                        ("launch", report_launch),
                        ("torch", report_torch)):
        if section in res:
            fn(res[section])
    if "compile" in res:
        p("\nkernel compile/caches, ms: " +
          ", ".join(f"{k} {v:.2f}" for k, v in res["compile"].items()))
    p("\nseconds per section (the old kernels' child included in `old`): " +
      ", ".join(f"{k} {v:g}" for k, v in info["seconds"].items()))


def report_rows(rows):
    print("\nrows (f32, over the last dim; 'of copy' counts the bytes each op must move: 8 per "
          "element forward, 12 backward, 4 and 8 for cross_entropy and its backward; old: the kernels from before issue 31, "
          "old / ours above 1 where the new one is faster):\n")
    print("| op | shape | ours ms | torch ms | torch / ours | old ms | old / ours | of copy |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['op']} | {r['rows']}x{r['cols']} | {r['ours_ms']:.4f} "
              f"| {fmt(r.get('torch_ms'), '.4f')} | {fmt(r.get('torch_over_ours'), '.2f')} "
              f"| {fmt(r.get('old_ms'), '.4f')} | {fmt(r.get('old_over_ours'), '.2f')} "
              f"| {r['of_copy']:.3f} |")


def report_matmul(rows):
    print("\nmatmul, n x n:\n")
    print("| dtype | n | ours TFLOP/s | torch TFLOP/s | ours / torch |\n|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['dtype']} | {r['n']} | {r['ours_TFLOPs']:.2f} "
              f"| {fmt(r.get('torch_TFLOPs'), '.2f')} | {fmt(r.get('ours_over_torch'))} |")


def report_bmm(rows):
    print("\nbmm (batch x m x k x n; b^T: b a transposed view), against torch.bmm:\n")
    print("| dtype | shape | ours ms | ours TFLOP/s | torch TFLOP/s | ours / torch |\n"
          "|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['dtype']} | {r['batch']}x{r['m']}x{r['k']}x{r['n']}"
              f"{' b^T' if r['b_transposed'] else ''} | {r['ours_ms']:.4f} "
              f"| {r['ours_TFLOPs']:.2f} | {fmt(r.get('torch_TFLOPs'), '.2f')} "
              f"| {fmt(r.get('ours_over_torch'))} |")


def report_route(route, tm):
    print(f"\nhologram_torch on {tm.get('device', 'cuda').upper()} tensors, library calls: " + (
        "; ".join(f"{k}: {', '.join(v['calls']) or 'none'} (max abs error vs torch.bmm "
                  f"{v['max_abs_err']:.2g})" for k, v in route.items())
        if "skipped" not in route and "error" not in route
        else f"not run ({route.get('skipped') or route.get('error')})"))


def report_launch(la):
    p = print
    p("\nlaunch (1-element add from Python), us per call:\n")
    p("| | hologram | torch |\n|---|---:|---:|")
    p(f"| asynchronous (calls back to back, one synchronize) | {la['hg_async_us']:.2f} | "
      f"{fmt(la.get('torch_async_us'), '.2f')} |")
    p(f"| synchronous (synchronize after each call) | {la['hg_sync_us']:.2f} | "
      f"{fmt(la.get('torch_synced_us'), '.2f')} |")
    p(f"| device time per call (events around the calls) | {fmt(la.get('hg_events_us'), '.2f')} "
      f"| {fmt(la.get('torch_events_us'), '.2f')} |")
    p(f"| the call alone (host, no synchronize) | {la['hg_host_us']:.2f} | - |")


def report_torch(tm):
    p = print
    if "ours_ms" not in tm:
        p(f"\nhologram_torch MLP step: not run ({tm.get('skipped') or tm.get('error')})")
        return
    p(f"\nhologram_torch MLP training step on {tm['device'].upper()} tensors (batch {tm['batch']}), "
      "ms per step "
      f"(first loss ours {tm['first_loss_ours']:.6f}, torch {tm['first_loss_torch']:.6f}):\n")
    p("| variant | ms | torch / this |\n|---|---:|---:|")
    for name, label in (("ours", "hologram_torch.nn + torch.optim.Adam"),
                        ("ours_hg_adam", "hologram_torch.nn + hologram_torch.optim.Adam"),
                        ("torch", "torch.nn + torch.optim.Adam"),
                        ("torch_fused", "torch.nn + Adam(fused=True)")):
        p(f"| {label} | {tm[name + '_ms']:.3f} | {tm['torch_ms'] / tm[name + '_ms']:.2f} |")


def parse_bmm(spec):
    """'64x512x512x512,512x128x64x128t' -> [(64, 512, 512, 512, False), ...]."""
    out = []
    for s in spec.split(","):
        bt = s.endswith("t")
        z, m, k, n = (int(v) for v in s.rstrip("t").split("x"))
        out.append((z, m, k, n, bt))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=256 * 1024 * 1024)
    ap.add_argument("--mm", default="1024,2048,4096,8192")
    ap.add_argument("--bmm", default="64x512x512x512,8x2048x2048x2048,512x128x64x128t")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--rows", default="4096x4096,8192x1024,262144x64,65536x4096")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--no-old", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--old-kernels", action="store_true",
                    help="the child process of the 'old' section (bench/cuda_bench_old.py)")
    ap.add_argument("--json")
    ap.add_argument("--emulate", action="store_true")
    args = ap.parse_args()
    want = set(args.sections.split(",")) | {"bandwidth"}
    if not want <= set(SECTIONS):
        ap.error(f"--sections: unknown {sorted(want - set(SECTIONS))}; "
                 f"known: {', '.join(SECTIONS)}")
    if args.no_old or args.old_kernels:
        want.discard("old")
    flush_elems = L2_FLUSH_BYTES // 4
    if args.quick:
        args.repeats, args.calls, args.mm = max(2, args.repeats // 2), args.calls // 4, "4096"
    if args.emulate:
        os.environ["HOLOGRAM_CUDA_EMULATE"] = "1"
        args.size, args.mm, args.repeats, args.calls = 4096, "32", 2, 50
        args.rows, args.bmm, flush_elems = "16x64,3x1500", "3x8x8x8,4x6x5x7t", 4096
    select_kernels(args.old_kernels, log)
    t_start, secs = time.perf_counter(), {}   # seconds per section: what the GPU lease pays

    def timed(name, fn, *a):
        t0 = time.perf_counter()
        try:
            return fn(*a)
        finally:
            secs[name] = round(time.perf_counter() - t0, 2)

    # the old kernels first, in their own process, while this one holds no device memory
    old = timed("old", run_old, os.path.abspath(__file__), args, log) if "old" in want else None
    import hologram as hg
    torch = None if args.emulate else torch_cuda()
    peers = not args.old_kernels   # the child times hologram's side only
    ex = hg.Executor("cuda")
    hc = hologram_clock(hg, ex, flush_elems)
    tc = torch_clock(torch, flush_elems) if torch is not None else None
    info = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(),
            "emulated": args.emulate, "torch": getattr(torch, "__version__", None),
            "timing_hologram": hc.method, "timing_torch": "cuda events" if tc else None,
            "repeats": args.repeats, "l2_flush_bytes": flush_elems * 4,
            "sections": [s for s in SECTIONS if s in want], "quick": args.quick, "seconds": secs}
    if torch is not None:
        info["gpu"] = torch.cuda.get_device_name(0)
    bw, bw_peers = timed("bandwidth", bandwidth, hg, ex, torch, args.size, args.repeats, hc, tc,
                         peers)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.rows.split(",")]
    res = {"info": info, "bandwidth": bw, "peers": bw_peers}
    if "rows" in want:
        res["rows"] = timed("rows", rows_ops, hg, ex, torch, shapes, args.repeats,
                            bw_peers["copy_GBps"], hc, tc, peers)
    if "matmul" in want:
        res["matmul"] = timed("matmul", matmul, hg, ex, torch,
                              [int(s) for s in args.mm.split(",")], args.repeats, hc, tc)
    if "bmm" in want:
        res["bmm"] = timed("bmm", bmm, hg, ex, torch, parse_bmm(args.bmm), args.repeats, hc, tc)
    if "launch" in want:
        res["launch"] = timed("launch", launch, hg, ex, torch, args.calls, hc, tc)
    if "torch" in want:
        timed("torch", torch_section, hg, torch, args, res)
    if "compile" in want:
        res["compile"] = timed("compile", compile_times, args.emulate)
    secs["total"] = round(time.perf_counter() - t_start, 2)
    log("seconds: " + ", ".join(f"{k} {v:g}" for k, v in secs.items()))
    if old is not None:
        FAILED.extend(merge_old(res, old, args.size))
    res["targets"] = [{"target": t, "measured": m, "met": ok} for t, m, ok in targets(res)]
    report(res, args)
    res["failed_checks"] = FAILED
    if FAILED:
        print("\n## Results that differ from their reference\n")
        for what in FAILED:
            print(f"- {what}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
