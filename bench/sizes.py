#!/usr/bin/env python3
"""Hologram against numpy and torch eager over sizes, per op family, from Python.

    python3 bench/sizes.py [--threads 1,2] [--repeats 7] [--max-size 16777216] [--min-size 1]
                           [--families binary_out,softmax,...] [--decimal] [--json out.json]
                           [--plots DIR] [--md out.md]

For every family and size (powers of 4 elements, f32; with --decimal the flat elementwise
families also at 10, 100, ..., 10^7), each side runs the same call in the
same process: hologram on a CPU executor with T threads, torch with torch.set_num_threads(T),
numpy as it is (its ufuncs and reductions use one thread) with its BLAS limited to T threads
(each thread count runs in its own process with OPENBLAS/OMP/MKL_NUM_THREADS=T, and with
OPENBLAS_THREAD_TIMEOUT=4 and OMP_WAIT_POLICY=passive, so that no side's idle threads spin
on the cores the next side runs on).
Rounds alternate the sides (hologram, numpy, torch), with a 2 ms pause between sides so that
torch's OpenMP threads, which spin for a while after each call, do not take the cores from
the next side. Each sample times a batch of calls long enough to measure (>= 200 us); the best
sample of each side is reported, per call. Allocation: the *_out families write into
preallocated outputs on every side; every other family returns a new result on every side.

ratio = (the faster of numpy and torch) / hologram: > 1 means hologram is faster.
Writes JSON (--json), a markdown table (stdout, --md) and, with matplotlib, one PNG per thread
count (ratio against size, a line per family at its worst case per size) into --plots.
Progress goes to stderr.
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # numpy only
    torch = None

import hologram as hg

PAUSE_S = 0.002
MIN_SAMPLE_S = 200e-6


def per_call(fn, k):
    t0 = time.perf_counter()
    for _ in range(k):
        fn()
    return (time.perf_counter() - t0) / k


def calls_per_sample(fn):
    """Calls per timed sample so that one sample lasts at least MIN_SAMPLE_S."""
    fn()
    k = 1
    while k < 100000:
        if per_call(fn, k) * k >= MIN_SAMPLE_S:
            return k
        k *= 4
    return k


def measure(sides, repeats):
    """sides: name -> callable or None. Returns name -> best seconds per call (None: absent)."""
    fns = {k: v for k, v in sides.items() if v is not None}
    ks = {k: calls_per_sample(f) for k, f in fns.items()}
    best = {k: math.inf for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            best[k] = min(best[k], per_call(f, ks[k]))
            time.sleep(PAUSE_S)
    return {k: best.get(k) for k in sides}


# ---- families: each maps (size, threads, executor) to cases (label, shape, sides) -------------
def f32(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def on_all(ex, *arrays):
    """Each array as a hologram tensor on ex and as a torch tensor (own copies)."""
    hs = [hg.asarray(a.copy(), executor=ex) for a in arrays]
    ts = [torch.from_numpy(a.copy()) for a in arrays] if torch else [None] * len(arrays)
    return hs, ts


def fam_binary_out(n, ex):
    x, y, o = f32(n, 1), f32(n, 2), np.empty(n, np.float32)
    (hx, hy, ho), (tx, ty, to) = on_all(ex, x, y, o)
    yield "add out=", (n,), {
        "hologram": lambda: hg.add(hx, hy, out=ho),
        "numpy": lambda: np.add(x, y, out=o),
        "torch": (lambda: torch.add(tx, ty, out=to)) if torch else None}


def fam_binary_new(n, ex):
    x, y = f32(n, 1), f32(n, 2)
    (hx, hy), (tx, ty) = on_all(ex, x, y)
    yield "x + y", (n,), {"hologram": lambda: hx + hy, "numpy": lambda: x + y,
                          "torch": (lambda: tx + ty) if torch else None}


def fam_unary(n, ex):
    x, o = f32(n, 1), np.empty(n, np.float32)
    (hx, ho), (tx, to) = on_all(ex, x, o)
    yield "exp out=", (n,), {
        "hologram": lambda: hg.exp(hx, out=ho), "numpy": lambda: np.exp(x, out=o),
        "torch": (lambda: torch.exp(tx, out=to)) if torch else None}


def fam_fused(n, ex):
    a, b, c = f32(n, 1), f32(n, 2), f32(n, 3)
    (ha, hb, hc), (ta, tb, tc) = on_all(ex, a, b, c)

    @hg.jit
    def chain(p, q, r):
        return hg.maximum(p * q + r, 0.0) * 0.5

    yield "relu(a*b+c)*0.5", (n,), {
        "hologram": lambda: chain(ha, hb, hc),
        "numpy": lambda: np.maximum(a * b + c, 0.0) * 0.5,
        "torch": (lambda: torch.relu(ta * tb + tc) * 0.5) if torch else None}


def square_shape(n):
    r = 1 << (int(math.log2(n)) // 2)
    return (r, n // r)


def fam_binary_layout(n, ex):
    """x op y where y is not laid out like x: a row broadcast along the columns ((rows, 1):
    x - mean), a column vector broadcast along the rows ((cols,): x * weight), and a transposed
    operand (x + y.T); new results on every side."""
    if n < 16:
        return
    shape = square_shape(n)
    r, c = shape
    x, col, row, yt = f32(n, 1).reshape(shape), f32(r, 2).reshape(r, 1), f32(c, 3), \
        f32(n, 4).reshape(c, r)
    (hx, hcol, hrow, hyt), (tx, tcol, trow, tyt) = on_all(ex, x, col, row, yt)
    yield "x - y[:, None] (row broadcast)", shape, {
        "hologram": lambda: hx - hcol, "numpy": lambda: x - col,
        "torch": (lambda: tx - tcol) if torch else None}
    yield "x * w (column vector)", shape, {
        "hologram": lambda: hx * hrow, "numpy": lambda: x * row,
        "torch": (lambda: tx * trow) if torch else None}
    yield "x + y.T (transposed)", shape, {
        "hologram": lambda: hx + hyt.T, "numpy": lambda: x + yt.T,
        "torch": (lambda: tx + tyt.T) if torch else None}


def fam_sum(n, ex):
    x = f32(n, 1)
    (hx,), (tx,) = on_all(ex, x)
    yield "sum", (n,), {"hologram": lambda: hx.sum(), "numpy": lambda: x.sum(),
                        "torch": (lambda: tx.sum()) if torch else None}
    if n >= 16:
        shape = square_shape(n)
        x2 = x.reshape(shape)
        hx2, tx2 = hx.reshape(shape), (tx.reshape(shape) if torch else None)
        for axis in (0, 1):
            yield f"sum axis {axis}", shape, {
                "hologram": lambda axis=axis: hx2.sum(axis=axis),
                "numpy": lambda axis=axis: x2.sum(axis=axis),
                "torch": (lambda axis=axis: tx2.sum(dim=axis)) if torch else None}


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_log_softmax(x):
    d = x - x.max(axis=-1, keepdims=True)
    return d - np.log(np.exp(d).sum(axis=-1, keepdims=True))


def np_layer_norm(x, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def np_rms_norm(x, eps=1e-6):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)


ROW_LENGTHS = (1, 16, 64, 256, 1024, 4096, 65536)


def fam_rows(n, ex):
    for length in ROW_LENGTHS:
        if length > n:
            break
        shape = (n // length, length)
        x = f32(shape, 1)
        (hx,), (tx,) = on_all(ex, x)
        ops = {
            "softmax": (lambda: hg.softmax(hx, -1), lambda: np_softmax(x),
                        lambda: torch.softmax(tx, -1)),
            "log_softmax": (lambda: hg.log_softmax(hx, -1), lambda: np_log_softmax(x),
                            lambda: torch.log_softmax(tx, -1)),
            "layer_norm": (lambda: hg.layer_norm(hx), lambda: np_layer_norm(x),
                           lambda: F.layer_norm(tx, (length,))),
            "rms_norm": (lambda: hg.rms_norm(hx), lambda: np_rms_norm(x),
                         lambda: F.rms_norm(tx, (length,))),
        }
        for name, (h, npf, tf) in ops.items():
            yield f"{name} rows of {length}", shape, {
                "hologram": h, "numpy": npf, "torch": tf if torch else None}


def fam_matmul(n, ex):
    shape = square_shape(n)
    if shape[0] != shape[1] or shape[0] < 2:
        return
    k = shape[0]
    a, b = f32((k, k), 1), f32((k, k), 2)
    (ha, hb), (ta, tb) = on_all(ex, a, b)
    yield f"matmul {k}x{k}", (k, k), {"hologram": lambda: ha @ hb, "numpy": lambda: a @ b,
                                     "torch": (lambda: ta @ tb) if torch else None}


def fam_matmul_shapes(n, ex):
    # Sizes here are the fixed shapes of users' layers; run once (at the smallest size).
    if n != 1:
        return
    for m, kk, nn in ((64, 784, 256), (256, 784, 256), (64, 1024, 1024), (256, 4096, 1024),
                      (64, 256, 10), (1, 4096, 4096), (4096, 64, 64)):
        a, b = f32((m, kk), 1), f32((kk, nn), 2)
        (ha, hb), (ta, tb) = on_all(ex, a, b)
        yield f"matmul {m}x{kk}.{kk}x{nn}", (m, kk, nn), {
            "hologram": lambda ha=ha, hb=hb: ha @ hb, "numpy": lambda a=a, b=b: a @ b,
            "torch": (lambda ta=ta, tb=tb: ta @ tb) if torch else None}
    # The small MLP forward of the issue: 64x784 -> 256 (relu) -> 10 (softmax).
    x, w1, w2 = f32((64, 784), 1), f32((784, 256), 2), f32((256, 10), 3)
    (hx, hw1, hw2), (tx, tw1, tw2) = on_all(ex, x, w1, w2)
    yield "MLP 64x784->256->10", (64, 784), {
        "hologram": lambda: hg.softmax(hg.maximum(hx @ hw1, 0.0) @ hw2, -1),
        "numpy": lambda: np_softmax(np.maximum(x @ w1, 0.0) @ w2),
        "torch": (lambda: torch.softmax(torch.relu(tx @ tw1) @ tw2, -1)) if torch else None}


FAMILIES = {
    "binary_out": fam_binary_out, "binary_new": fam_binary_new,
    "binary_layout": fam_binary_layout, "unary": fam_unary,
    "fused_chain": fam_fused, "reduce": fam_sum, "rows": fam_rows, "matmul": fam_matmul,
    "matmul_shapes": fam_matmul_shapes,
}


# Families over flat 1-D tensors, which also run at the --decimal sizes.
FLAT_FAMILIES = {"binary_out", "binary_new", "unary", "fused_chain"}


def sizes(lo, hi, fam="", decimal=False):
    """Powers of 4; with decimal, flat families also get 10, 100, ..., 10^7: sizes that are
    no multiple of any block or chunk (a launch's last chunk is then partial)."""
    out = set()
    n = 1
    while n <= hi:
        out.add(n)
        n *= 4
    if decimal and fam in FLAT_FAMILIES:
        n = 10
        while n <= hi:
            out.add(n)
            n *= 10
    return [n for n in sorted(out) if n >= lo]


def run(args):
    rows = []
    for threads in args.threads:
        ex = hg.Executor("cpu", num_threads=threads)
        if torch:
            torch.set_num_threads(threads)
        for fam in args.families:
            for n in sizes(args.min_size, args.max_size, fam, args.decimal):
                for label, shape, sides in FAMILIES[fam](n, ex):
                    t = measure(sides, args.repeats)
                    peers = [v for k, v in t.items() if k != "hologram" and v is not None]
                    row = {"family": fam, "case": label, "elements": n, "shape": list(shape),
                           "threads": threads, "hologram_s": t["hologram"],
                           "numpy_s": t["numpy"], "torch_s": t["torch"],
                           "ratio": min(peers) / t["hologram"] if peers else None}
                    rows.append(row)
                    print(f"sizes: T={threads} {fam:13s} {label:28s} {n:>9d}: ours "
                          f"{t['hologram'] * 1e6:10.2f} us, ratio {row['ratio']:.2f}",
                          file=sys.stderr)
    return rows


def run_each_thread_count(args):
    """Each thread count in a child process whose BLAS (numpy's matmul) uses that many threads."""
    rows = []
    for threads in args.threads:
        # Idle threads of every side sleep instead of spinning: OpenBLAS's wait ~2^28 cycles
        # and OpenMP's (torch) spin after each call and took a core of this 2-core VM from the
        # next side (hologram's 2-thread matmul and softmax ran slower than its 1-thread ones).
        # Hologram's own pool sleeps on a condition variable between calls.
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads), OPENBLAS_THREAD_TIMEOUT="4",
                   OMP_WAIT_POLICY="passive")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "rows.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--threads", str(threads),
                   "--repeats", str(args.repeats), "--min-size", str(args.min_size),
                   "--max-size", str(args.max_size), "--families", ",".join(args.families),
                   "--json", out, "--in-process"] + (["--decimal"] if args.decimal else [])
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
            with open(out) as f:
                rows += json.load(f)["rows"]
    return rows


def fmt_us(s):
    return "—" if s is None else f"{s * 1e6:.2f}"


def markdown(rows, header):
    out = [header, "", "| threads | family | case | elements | hologram µs | numpy µs | torch µs "
           "| faster peer ÷ ours |", "|---:|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['threads']} | {r['family']} | {r['case']} | {r['elements']} | "
                   f"{fmt_us(r['hologram_s'])} | {fmt_us(r['numpy_s'])} | {fmt_us(r['torch_s'])} "
                   f"| {r['ratio']:.2f} |")
    below = [r for r in rows if r["ratio"] is not None and r["ratio"] < 1.0]
    out += ["", f"{len(below)} of {len(rows)} points below 1.0 (hologram slower than the faster "
            "peer)."]
    return "\n".join(out) + "\n"


def plots(rows, outdir, header):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("sizes: matplotlib is not installed; no plots (pip install matplotlib)",
              file=sys.stderr)
        return []
    os.makedirs(outdir, exist_ok=True)
    paths = []
    for threads in sorted({r["threads"] for r in rows}):
        fig, ax = plt.subplots(figsize=(10, 6))
        # One line per family (the row ops one per op): at each size its worst case (the
        # lowest ratio over row lengths, axes, ...). matmul_shapes is no size series: table only.
        lines = {}
        for r in rows:
            if r["threads"] != threads or r["ratio"] is None or r["family"] == "matmul_shapes":
                continue
            key = r["family"] if r["family"] != "rows" else r["case"].split(" rows")[0]
            pts = lines.setdefault(key, {})
            pts[r["elements"]] = min(pts.get(r["elements"], math.inf), r["ratio"])
        for key, pts in sorted(lines.items()):
            xs = sorted(pts)
            ax.plot(xs, [pts[x] for x in xs], marker="o", label=key)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log", base=4)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("elements (f32)")
        ax.set_ylabel("faster of numpy/torch ÷ hologram, worst case per family (> 1: faster)")
        ax.set_title(f"{header} — {threads} thread{'s' if threads > 1 else ''}")
        ax.legend(fontsize=8)
        path = os.path.join(outdir, f"sizes_t{threads}.png")
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        paths.append(path)
    return paths


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--min-size", type=int, default=1)
    p.add_argument("--max-size", type=int, default=1 << 24)
    p.add_argument("--families", default=",".join(FAMILIES), help=", ".join(FAMILIES))
    p.add_argument("--decimal", action="store_true",
                   help="flat families also at 10, 100, ..., 10^7 elements")
    p.add_argument("--json")
    p.add_argument("--md")
    p.add_argument("--plots", help="folder for the PNG plots")
    p.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.families = [f for f in args.families.split(",") if f]
    unknown = [f for f in args.families if f not in FAMILIES]
    if unknown:
        p.error(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    header = (f"hologram {hg.__version__} vs numpy {np.__version__}"
              f"{' and torch ' + torch.__version__ if torch else ''}, {platform.machine()} "
              f"({platform.processor() or 'cpu'}), {time.strftime('%Y-%m-%d')}")
    # A single thread count too runs in a child with the BLAS thread variables set (run in this
    # process, numpy's OpenBLAS took both cores in a 1-thread sweep).
    rows = run(args) if args.in_process else run_each_thread_count(args)
    md = markdown(rows, header)
    sys.stdout.write(md)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    paths = plots(rows, args.plots, header) if args.plots else []
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "rows": rows, "plots": paths}, f, indent=1)


if __name__ == "__main__":
    main()
