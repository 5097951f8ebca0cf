#!/usr/bin/env python3
"""Hologram against numpy and torch on the same cases, in the same run.

    python3 bench/peers.py [--build build/release] [--n 16777216] [--threads 2]
                           [--repeats 20] [--rounds 2] [--json out.json] [--md out.md]

Runs `hologram bench --json` (our numbers, with the machine's measured limits) and then the same
cases in numpy and torch (when importable; `pip install torch==2.13.0` gives the CPU build) with
the same thread count, alternating rounds so that load from other users of a shared machine hits
all sides alike. Reported per case: best and median time of each side, and the ratios
peer_time / our_time (> 1: we are faster), computed from the bests and from the medians.
Progress goes to stderr; the markdown table to stdout (and --md).
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

# Our case name in `hologram bench --json` -> peer case key below. Cases missing on either
# side are reported as such, never guessed.
OURS_TO_PEER = {
    "op_add": "add",
    "graph_fused_chain": "fused_chain",
    "op_sum": "sum",
    "op_exp": "exp",
    "op_tanh": "tanh",
    "op_sigmoid": "sigmoid",
    "op_gelu": "gelu",
    "op_add_1elem_latency": "add_1elem",
}

PEER_WORKER = r"""
import json, os, sys, time, statistics
n, repeats, which = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
import numpy as np
rng = np.random.default_rng(7)
a = rng.standard_normal(n, dtype=np.float32)
b = rng.standard_normal(n, dtype=np.float32)
c = rng.standard_normal(n, dtype=np.float32)
out = np.empty(n, dtype=np.float32)
res = {}

def timeit(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return ts

def per_call(fn, calls):
    fn()
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(calls): fn()
        ts.append((time.perf_counter() - t0) / calls)
    return ts

if which == "numpy":
    tmp = np.empty(n, dtype=np.float32)
    def chain():
        np.multiply(a, b, out=tmp); np.add(tmp, c, out=tmp); np.maximum(tmp, 0, out=tmp)
        np.multiply(tmp, np.float32(0.5), out=out)
    def sigmoid():
        np.negative(a, out=tmp); np.exp(tmp, out=tmp); np.add(tmp, 1, out=tmp)
        np.reciprocal(tmp, out=out)
    k = np.float32(0.7978845608028654)
    def gelu():
        # (in-place operators would make tmp a local of gelu: ufuncs with out= instead)
        np.multiply(a, a, out=tmp); np.multiply(tmp, a, out=tmp)
        np.multiply(tmp, np.float32(0.044715), out=tmp); np.add(tmp, a, out=tmp)
        np.multiply(tmp, k, out=tmp); np.tanh(tmp, out=tmp); np.add(tmp, 1, out=tmp)
        np.multiply(a, tmp, out=out); np.multiply(out, np.float32(0.5), out=out)
    cases = {
        "add": lambda: np.add(a, b, out=out),
        "fused_chain": chain,
        "sum": lambda: a.sum(),
        "exp": lambda: np.exp(a, out=out),
        "tanh": lambda: np.tanh(a, out=out),
        "sigmoid": sigmoid,
        "gelu": gelu,
    }
    for name, fn in cases.items():
        res[name] = timeit(fn, repeats)
    x1, y1, z1 = np.ones(1, np.float32), np.ones(1, np.float32), np.empty(1, np.float32)
    res["add_1elem"] = per_call(lambda: np.add(x1, y1, out=z1), 100000)
else:
    import torch
    torch.set_num_threads(int(os.environ.get("PEER_THREADS", "1")))
    ta, tb, tc, to = (torch.from_numpy(v) for v in (a, b, c, out))
    cases = {
        "add": lambda: torch.add(ta, tb, out=to),
        "fused_chain": lambda: torch.mul(torch.relu(ta * tb + tc), 0.5, out=to),
        "sum": lambda: ta.sum(),
        "exp": lambda: torch.exp(ta, out=to),
        "tanh": lambda: torch.tanh(ta, out=to),
        "sigmoid": lambda: torch.sigmoid(ta, out=to),
        "gelu": lambda: torch.nn.functional.gelu(ta, approximate="tanh"),
    }
    for name, fn in cases.items():
        res[name] = timeit(fn, repeats)
    x1, y1, z1 = torch.ones(1), torch.ones(1), torch.empty(1)
    res["add_1elem"] = per_call(lambda: torch.add(x1, y1, out=z1), 100000)
print(json.dumps(res))
"""


def run_ours(build, n, threads, repeats):
    exe = os.path.join(build, "hologram")
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    cmd = [exe, "bench", "--size", str(n), "--threads", str(threads), "--repeats", str(repeats),
           "--json", path]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        data = json.load(f)
    os.unlink(path)
    got = {}
    for r in data.get("results", []):
        key = OURS_TO_PEER.get(r.get("name"))
        if key and r.get("times_s"):
            got[key] = list(r["times_s"])
    return got, data


def run_peer(which, n, threads, repeats):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PEER_THREADS=str(threads))
    p = subprocess.run([sys.executable, "-c", PEER_WORKER, str(n), str(repeats), which],
                       env=env, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"peers: {which} unavailable: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build/release")
    ap.add_argument("--n", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--md")
    args = ap.parse_args()

    sides = {"hologram": {}, "numpy": {}, "torch": {}}
    meta = None
    for r in range(args.rounds):
        print(f"peers: round {r + 1}/{args.rounds}: hologram", file=sys.stderr)
        ours, meta = run_ours(args.build, args.n, args.threads, args.repeats)
        for k, v in ours.items():
            sides["hologram"].setdefault(k, []).extend(v)
        for which in ("numpy", "torch"):
            print(f"peers: round {r + 1}/{args.rounds}: {which}", file=sys.stderr)
            got = run_peer(which, args.n, args.threads, args.repeats)
            if got is None:
                continue
            for k, v in got.items():
                sides[which].setdefault(k, []).extend(v)

    cases = ["add", "fused_chain", "sum", "exp", "tanh", "sigmoid", "gelu", "add_1elem"]
    rows = []
    for case in cases:
        row = {"case": case}
        for side, d in sides.items():
            ts = d.get(case)
            if ts:
                row[side] = {"best_s": min(ts), "median_s": statistics.median(ts), "runs": len(ts)}
        h = row.get("hologram")
        for peer in ("numpy", "torch"):
            p = row.get(peer)
            if h and p:
                row[f"{peer}_over_ours_best"] = p["best_s"] / h["best_s"]
                row[f"{peer}_over_ours_median"] = p["median_s"] / h["median_s"]
        rows.append(row)

    machine = (meta or {}).get("machine", {})
    header = (f"n = {args.n} f32, {args.threads} threads, {platform.processor() or platform.machine()}"
              f" ({machine.get('cpu', '?')}), {time.strftime('%Y-%m-%d', time.gmtime())}")

    def fmt_t(x):
        return "—" if x is None else (f"{x * 1e9:.0f} ns" if x < 1e-5 else f"{x * 1e3:.2f} ms")

    lines = [header, "",
             "| case | hologram best / median | numpy best / median | torch best / median | "
             "numpy ÷ ours (best / median) | torch ÷ ours (best / median) |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        cells = [row["case"]]
        for side in ("hologram", "numpy", "torch"):
            s = row.get(side)
            cells.append(f"{fmt_t(s['best_s'])} / {fmt_t(s['median_s'])}" if s else "—")
        for peer in ("numpy", "torch"):
            b = row.get(f"{peer}_over_ours_best")
            m = row.get(f"{peer}_over_ours_median")
            cells.append(f"{b:.2f} / {m:.2f}" if b else "—")
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "rows": rows, "hologram_bench": meta}, f, indent=1)


if __name__ == "__main__":
    main()
