#!/usr/bin/env python3
"""SGEMM side by side: hologram's hg_cpu_sgemm (build/hg_gemm_bench) against numpy's matmul
(OpenBLAS from the wheel) on the same shapes and thread counts, in the same run.

    python3 bench/gemm_peers.py [--build build] [--rounds 3] [--threads 1,2]
                                [--shapes 256,512,1024,2048,4096,64x4096x4096] [--json out.json]
                                [--avx2]

Each round runs numpy (in a subprocess with OPENBLAS_NUM_THREADS=T, so the thread count is
really T) and then ours, for every thread count; rounds interleave the two so load from other
users of a shared machine hits both alike. Reported: best GFLOP/s over all runs of all rounds,
the median, and ours / OpenBLAS of the bests. Progress goes to stderr.
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

NUMPY_WORKER = r"""
import json, sys, time
import numpy as np
shapes = json.loads(sys.argv[1]); budget = float(sys.argv[2]); out = []
rng = np.random.default_rng(12345)
for m, n, k in shapes:
    a = rng.random((m, k), dtype=np.float32) - 0.5
    b = rng.random((k, n), dtype=np.float32) - 0.5
    c = np.empty((m, n), dtype=np.float32)
    np.matmul(a, b, out=c)
    t0 = time.perf_counter(); np.matmul(a, b, out=c); once = time.perf_counter() - t0
    reps = int(min(50, max(3, budget / max(once, 1e-9))))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); np.matmul(a, b, out=c); ts.append(time.perf_counter() - t0)
    fl = 2.0 * m * n * k
    out.append({"m": m, "n": n, "k": k, "gflops": [fl / t * 1e-9 for t in ts]})
print(json.dumps(out))
"""


def parse_shapes(s):
    out = []
    for tok in s.split(","):
        dims = [int(x) for x in tok.split("x")]
        out.append(tuple(dims) if len(dims) == 3 else (dims[0],) * 3)
    return out


def run_numpy(shapes, threads, budget, coretype=None):
    env = dict(os.environ)
    if coretype:   # OpenBLAS's kernel family for this run (e.g. Haswell: its AVX2 kernels)
        env["OPENBLAS_CORETYPE"] = coretype
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    res = subprocess.run([sys.executable, "-c", NUMPY_WORKER, json.dumps(shapes), str(budget)],
                         env=env, check=True, capture_output=True, text=True)
    return {(r["m"], r["n"], r["k"]): r["gflops"] for r in json.loads(res.stdout)}


def run_ours(exe, shapes, threads, kernel=None):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ours.json")
        spec = ",".join(f"{m}x{n}x{k}" for m, n, k in shapes)
        cmd = [exe, "--threads", str(threads), "--shapes", spec, "--json", path]
        if kernel:
            cmd += ["--kernel", kernel]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            data = json.load(f)
    out = {}
    for r in data["results"]:
        out[(r["m"], r["n"], r["k"])] = (r["gflops_best"], r["gflops_median"], r["fma_peak_gflops"])
    return out, data.get("kernel", "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="CMake build directory holding hg_gemm_bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--shapes", default="256,512,1024,2048,4096,64x4096x4096")
    ap.add_argument("--budget", type=float, default=0.5, help="seconds of numpy runs per shape")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--avx2", action="store_true",
                    help="both sides on their AVX2 kernels on an AVX-512 machine: ours with "
                         "--kernel avx2, OpenBLAS with OPENBLAS_CORETYPE=Haswell")
    args = ap.parse_args()
    exe = os.path.join(args.build, "hg_gemm_bench")
    if not os.path.exists(exe):
        sys.exit(f"{exe} not found: build it with cmake --build {args.build} --target hg_gemm_bench")
    shapes = parse_shapes(args.shapes)
    threads = [int(t) for t in args.threads.split(",")]
    import numpy as np
    ours = {}   # (t, shape) -> list of (best, median, peak)
    peer = {}   # (t, shape) -> list of gflops
    kernel = "?"
    for rnd in range(args.rounds):
        for t in threads:
            print(f"round {rnd + 1}/{args.rounds}, {t} thread(s): numpy", file=sys.stderr, flush=True)
            for s, g in run_numpy(shapes, t, args.budget, "Haswell" if args.avx2 else None).items():
                peer.setdefault((t, s), []).extend(g)
            print(f"round {rnd + 1}/{args.rounds}, {t} thread(s): hologram", file=sys.stderr, flush=True)
            res, kernel = run_ours(exe, shapes, t, "avx2" if args.avx2 else None)
            for s, v in res.items():
                ours.setdefault((t, s), []).append(v)
    rows = []
    for t in threads:
        for s in shapes:
            o, p = ours[(t, s)], peer[(t, s)]
            rows.append({
                "threads": t, "m": s[0], "n": s[1], "k": s[2],
                "ours_best": max(x[0] for x in o), "ours_median": statistics.median(x[1] for x in o),
                "openblas_best": max(p), "openblas_median": statistics.median(p),
                "fma_peak": max(x[2] for x in o),
            })
    print(f"SGEMM, C = A*B row-major float32; {time.strftime('%Y-%m-%d')}, {platform.node()}, "
          f"{os.cpu_count()} CPUs, numpy {np.__version__}, our kernel: {kernel}"
          f"{', OpenBLAS forced to Haswell (AVX2)' if args.avx2 else ''}; "
          f"best of {args.rounds} interleaved rounds\n")
    print("| threads | m x n x k | ours GFLOP/s best (median) | OpenBLAS best (median) | ours / OpenBLAS | ours / FMA peak |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["ours_best"] / r["openblas_best"]
        print(f"| {r['threads']} | {r['m']}x{r['n']}x{r['k']} | {r['ours_best']:.1f} ({r['ours_median']:.1f}) | "
              f"{r['openblas_best']:.1f} ({r['openblas_median']:.1f}) | {ratio:.3f} | "
              f"{r['ours_best'] / r['fma_peak']:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d %H:%M"), "host": platform.node(),
                       "numpy": np.__version__, "kernel": kernel, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
