#!/usr/bin/env python3
"""Python-level speed of the hologram package, side by side with numpy and torch in one run.

    python bench/python_overhead.py [--cli build/release/hologram] [--threads 2] [--rounds 5]
                                    [--json out.json] [--md out.md]

Cases (each run in interleaved rounds, best and median reported):
  1. per-call overhead on 1 element: hologram.ops.vector_add(ex, a, b, c) and a Tensor `+`
     against numpy's np.add(a, b, out=c) and a + b, and torch.add(out=) / a + b;
  2. 16M f32 `c = a + b` (hologram.ops.vector_add) and the fused chain relu(a*b+c)*0.5
     (@hologram.jit) against the C benchmark (`hologram bench --json`, run by this script in the
     same session) and numpy;
  3. Tensor.numpy() / Buffer.to_numpy() time for 1K...16M elements (should not grow: O(1));
  4. Buffer.from_numpy bandwidth against numpy's np.copyto of the same bytes.
Progress goes to stderr; a markdown table to stdout (and --md).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import hologram as hg

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def per_call(fn, calls, repeats):
    """Best and median seconds per call over `repeats` batches of `calls`."""
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        ts.append((time.perf_counter() - t0) / calls)
    return ts


def timed(fn, repeats):
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def summarize(samples):
    return min(samples), statistics.median(samples)


def c_bench(cli, threads, n):
    """op_add and graph_fused_chain best/median ms from `hologram bench --json`."""
    if not cli or not os.path.exists(cli):
        return {}
    path = f"/tmp/hg_pybench_{os.getpid()}.json"
    cmd = [cli, "bench", "--size", str(n), "--repeats", "20", "--json", path]
    if threads:
        cmd += ["--threads", str(threads)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(path) as f:
        data = json.load(f)
    os.unlink(path)
    out = {}
    for c in data.get("results", []):
        if c.get("name") in ("op_add", "graph_fused_chain", "c_add", "c_fused"):
            out[c["name"]] = (c["best_s"] * 1e3, c["median_s"] * 1e3)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/release/hologram")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--json")
    ap.add_argument("--md")
    args = ap.parse_args()
    if args.threads:
        os.environ["HOLOGRAM_NUM_THREADS"] = str(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    ex = hg.Executor("cpu", num_threads=args.threads)
    rows, res = [], {}

    # 1. per-call overhead
    a1, b1, c1 = ex.allocate(1), ex.allocate(1), ex.allocate(1)
    ta, tb = hg.Tensor(a1), hg.Tensor(b1)
    na, nb, nc = np.ones(1, np.float32), np.ones(1, np.float32), np.empty(1, np.float32)
    va = hg.ops.vector_add
    cases = {
        "hg vector_add(ex,a,b,c)": lambda: va(ex, a1, b1, c1),
        "hg Tensor a + b": lambda: ta + tb,
        "np.add(a,b,out=c)": lambda: np.add(na, nb, out=nc),
        "numpy a + b": lambda: na + nb,
    }
    if torch is not None:
        xa, xb, xc = torch.ones(1), torch.ones(1), torch.empty(1)
        cases["torch.add(a,b,out=c)"] = lambda: torch.add(xa, xb, out=xc)
        cases["torch a + b"] = lambda: xa + xb
    samples = {k: [] for k in cases}
    for r in range(args.rounds):
        print(f"per-call round {r + 1}/{args.rounds}", file=sys.stderr)
        for k, f in cases.items():
            samples[k] += per_call(f, 20000, 3)
    for k in cases:
        res[k] = summarize(samples[k])
    ref = res["np.add(a,b,out=c)"]
    rows.append(("## per-call time, 1 element", "best ns", "median ns", "vs np.add(out=) best",
                 "vs np.add(out=) median"))
    for k in cases:
        b, m = res[k]
        rows.append((k, f"{b * 1e9:.0f}", f"{m * 1e9:.0f}", f"{b / ref[0]:.2f}",
                     f"{m / ref[1]:.2f}"))

    # 2. 16M add and fused chain
    n = args.n
    print(f"allocating 16M-element cases ({n} f32)", file=sys.stderr)
    rng = np.random.default_rng(1)
    host = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    bufs = [ex.allocate(n) for _ in range(4)]
    for bb, h in zip(bufs, host):
        bb.from_numpy(h)
    A, B, C, D = bufs
    TA, TB, TC = (hg.Tensor(x) for x in (A, B, C))
    chain = hg.jit(lambda a, b, c: hg.ops.relu(a * b + c) * 0.5)
    out_np = np.empty(n, np.float32)

    def np_chain():
        np.multiply(host[0], host[1], out=out_np)
        np.add(out_np, host[2], out=out_np)
        np.maximum(out_np, 0, out=out_np)
        np.multiply(out_np, np.float32(0.5), out=out_np)

    big = {"hg vector_add 16M": lambda: va(ex, A, B, D),
           "hg @jit relu(a*b+c)*0.5 16M": lambda: chain(TA, TB, TC),
           "numpy add 16M (out=)": lambda: np.add(host[0], host[1], out=out_np),
           "numpy chain 16M (out=, 4 passes)": np_chain}
    bsamp = {k: [] for k in big}
    # The C benchmark runs before and after the Python rounds (the machine's load moves; the
    # better of the two is the reference).
    print("C benchmark (hologram bench) before the Python rounds", file=sys.stderr)
    cres = c_bench(args.cli, args.threads, n)
    for r in range(args.rounds):
        print(f"16M round {r + 1}/{args.rounds}", file=sys.stderr)
        for k, f in big.items():
            bsamp[k] += timed(f, 6)
    print("C benchmark (hologram bench) after the Python rounds", file=sys.stderr)
    for name, (b, m) in c_bench(args.cli, args.threads, n).items():
        if name not in cres or b < cres[name][0]:
            cres[name] = (b, m)
    rows.append(("## 16M f32 (64 MiB per array)", "best ms", "median ms", "C bench best ms",
                 "Python / C (best)"))
    cmap = {"hg vector_add 16M": "op_add", "hg @jit relu(a*b+c)*0.5 16M": "graph_fused_chain"}
    for k in big:
        b, m = summarize(bsamp[k])
        res[k] = (b, m)
        cb = cres.get(cmap.get(k, ""), (None, None))[0]
        rows.append((k, f"{b * 1e3:.2f}", f"{m * 1e3:.2f}",
                     f"{cb:.2f}" if cb else "-", f"{b * 1e3 / cb:.2f}" if cb else "-"))

    # 3. to_numpy O(1)
    rows.append(("## to_numpy / numpy() (zero-copy)", "best us", "median us", "", ""))
    for size in (1024, 1024 * 1024, n):
        buf = ex.allocate(size)
        t = hg.Tensor(buf)
        for name, f in (("Buffer.to_numpy", buf.to_numpy), ("Tensor.numpy", t.numpy)):
            b, m = summarize(per_call(f, 2000, 5))
            rows.append((f"{name} {size} elements", f"{b * 1e6:.2f}", f"{m * 1e6:.2f}", "", ""))
        buf.free()

    # 4. from_numpy bandwidth
    src = host[0]
    tgt = np.empty_like(src)
    fs = summarize(timed(lambda: A.from_numpy(src), 10))
    cs = summarize(timed(lambda: np.copyto(tgt, src), 10))
    gb = 2 * src.nbytes / 1e9
    rows.append(("## from_numpy 16M f32", "best GB/s", "median GB/s", "np.copyto best GB/s",
                 "ours / copyto"))
    rows.append(("Buffer.from_numpy", f"{gb / fs[0]:.1f}", f"{gb / fs[1]:.1f}",
                 f"{gb / cs[0]:.1f}", f"{cs[0] / fs[0]:.2f}"))

    head = (f"python_overhead: {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} CPUs, threads={ex.num_threads}, numpy {np.__version__}, "
            f"torch {torch.__version__ if torch else '-'}, hologram {hg.__version__}, "
            f"{time.strftime('%Y-%m-%d')}")
    lines = [head, ""]
    for r in rows:
        if r[0].startswith("## "):
            lines += ["", f"| {r[0][3:]} | {' | '.join(r[1:])} |",
                      "|---|" + "---:|" * (len(r) - 1)]
        else:
            lines.append(f"| {' | '.join(r)} |")
    text = "\n".join(lines)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": head, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
