"""The kernels from before issue 31 beside the new ones, for bench/cuda_bench.py.

Two switches select the old kernels: HOLOGRAM_DEV_ROWS=generic (the strided row kernel: a
block per row, the row read three times) and HOLOGRAM_EW_VECTOR=0 (the scalar elementwise
kernels: a lane per element). HOLOGRAM_EW_VECTOR is read once per process, so the old kernels
run in a child process: `cuda_bench.py --old-kernels`, which sets both switches before it
imports hologram and runs the bandwidth and rows sections with the parent's sizes and
repeats, hologram's side only (torch makes the inputs). The parent merges the child's times
into its own rows as `old_ms` and `old_over_ours` (the old kernel's time over the new one's:
above 1, the new kernel is faster), next to `torch_over_ours`.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

OLD_KERNELS = {"HOLOGRAM_DEV_ROWS": "generic", "HOLOGRAM_EW_VECTOR": "0"}
OLD_SECTIONS = "bandwidth,rows"
# ~20 s on a GPU (start-up, kernel compiles, the cases): a hung child must not cost the lease
CHILD_TIMEOUT_S = 300
# bandwidth cases the switches change, with the bytes each moves per element
OLD_CASES = (("hg_add", 12), ("hg_chain", 16))


def select_kernels(old, log):
    """Before hologram is imported: the old kernels (old=True: the child) or the new ones
    (switches left in the environment by the caller are removed, with a note)."""
    for k, v in OLD_KERNELS.items():
        if old:
            os.environ[k] = v
        elif os.environ.pop(k, None) is not None:
            log(f"{k} removed from the environment: this run measures the new kernels "
                "(the old ones run in a child process)")


def run_old(script, args, log):
    """The child's JSON (bench/cuda_bench.py --old-kernels with args' sizes), with the
    seconds it took; {"error": ...} where it gave none."""
    log(f"old kernels: child process with {' '.join(f'{k}={v}' for k, v in OLD_KERNELS.items())}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "old.json")
        cmd = [sys.executable, script, "--old-kernels", "--sections", OLD_SECTIONS,
               "--json", path, "--size", str(args.size), "--rows", args.rows,
               "--repeats", str(args.repeats)] + (["--emulate"] if args.emulate else [])
        try:   # progress stays on stderr
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return {"error": f"the child ran over {CHILD_TIMEOUT_S} s and was stopped"}
        if not os.path.exists(path):
            return {"error": f"the child exited with status {r.returncode} and wrote no JSON"}
        with open(path) as f:
            old = json.load(f)
    old["seconds"] = time.perf_counter() - t0
    return old


def merge_old(res, old, n):
    """The child's results into res: bandwidth cases `<case>_old` (their 'of copy' over this
    run's copy bandwidth), `old_ms` / `old_over_ours` on each row case, and res["old_kernels"]
    (the switches, the child's seconds and failed checks). n: elements per bandwidth array."""
    info = {"env": OLD_KERNELS, "sections": OLD_SECTIONS}
    if "error" in old:
        info["error"] = old["error"]
        res["old_kernels"] = info
        return [f"old kernels: {old['error']}"]
    info.update(seconds=old["seconds"], failed_checks=old.get("failed_checks", []))
    res["old_kernels"] = info
    copy = res["peers"]["copy_GBps"] * 1e9
    new_bw = {r["case"]: r for r in res["bandwidth"]}
    old_bw = {r["case"]: r for r in old.get("bandwidth", [])}
    for case, nbytes in OLD_CASES:
        if case in old_bw and case in new_bw:
            o = old_bw[case]
            res["bandwidth"].append({"case": case + "_old", "best_ms": o["best_ms"],
                                     "median_ms": o["median_ms"], "GBps": o["GBps"],
                                     "of_copy": nbytes * n / (o["best_ms"] / 1e3) / copy})
            res["peers"][case[3:] + "_old_over_ours"] = o["best_ms"] / new_bw[case]["best_ms"]
    old_rows = {(r["op"], r["rows"], r["cols"]): r for r in old.get("rows", [])}
    for r in res.get("rows", []):
        o = old_rows.get((r["op"], r["rows"], r["cols"]))
        if o:
            r.update(old_ms=o["ours_ms"], old_median_ms=o["ours_median_ms"],
                     old_over_ours=o["ours_ms"] / r["ours_ms"])
    return [f"old kernels: {w}" for w in info["failed_checks"]]


def old_summary(res):
    """One line on the new kernels against the old ones, for the report; None without them."""
    ok = res.get("old_kernels")
    if not ok:
        return None
    if "error" in ok:
        return f"old kernels not measured: {ok['error']}"
    parts = []
    peers = res["peers"]
    for case, label in (("add", "add"), ("chain", "fused chain")):
        if case + "_old_over_ours" in peers:
            parts.append(f"{label} {peers[case + '_old_over_ours']:.2f}x")
    rows = [r for r in res.get("rows", []) if "old_over_ours" in r]
    if rows:
        lo = min(rows, key=lambda r: r["old_over_ours"])
        hi = max(rows, key=lambda r: r["old_over_ours"])
        parts.append(f"row cases {lo['old_over_ours']:.2f}x ({lo['op']} {lo['rows']}x{lo['cols']})"
                     f" to {hi['old_over_ours']:.2f}x ({hi['op']} {hi['rows']}x{hi['cols']})")
    env = " ".join(f"{k}={v}" for k, v in OLD_KERNELS.items())
    return (f"New kernels over the old ones (old time / new time; the old ones with {env} in a "
            f"child process, {ok['seconds']:.0f} s): " + ", ".join(parts) + ".")
