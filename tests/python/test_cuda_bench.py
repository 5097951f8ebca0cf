"""bench/cuda_bench.py's dry run on the CUDA backend's host emulation (what
`scripts/gpu_check.sh --emulate` runs): its sections, its checks against float64 numpy and the
old kernels' child process, so that a bug in the script does not cost a GPU lease (the first
GPU run lost its bench step to one). Tiny sizes; the numbers mean nothing and are not
asserted."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import hologram as hg

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "cuda_bench.py")


@pytest.mark.skipif(os.environ.get("HG_TEST_BACKEND", "cpu") != "cpu",
                    reason="runs its own emulated CUDA executor: once, in the default run")
def test_cuda_bench_dry_run(tmp_path):
    if not (shutil.which(os.environ.get("HOLOGRAM_CUDA_EMULATE_CXX", "c++")) or shutil.which("g++")):
        pytest.skip("no host C++ compiler for the CUDA emulation")
    if not os.path.exists(BENCH):
        pytest.skip(f"no {BENCH} (tests run outside the source tree)")
    out = tmp_path / "bench.json"
    env = dict(os.environ)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(hg.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg, env.get("PYTHONPATH")) if p)
    r = subprocess.run([sys.executable, BENCH, "--emulate", "--sections", "rows,bmm,launch,old",
                        "--json", str(out)], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:] + r.stdout[-3000:]
    res = json.loads(out.read_text())
    assert res["failed_checks"] == []
    assert res["info"]["timing_hologram"] == "cuda events"   # hologram.Event, not host time
    assert res["info"]["sections"] == ["bandwidth", "rows", "bmm", "launch", "old"]
    sys.path.insert(0, os.path.dirname(BENCH))
    try:
        from cuda_bench import ROW_OPS
        from cuda_bench_old import OLD_KERNELS
    finally:
        sys.path.remove(os.path.dirname(BENCH))
    # every row op at both shapes, each checked (max_rel_err) and with the old kernel's time
    assert sorted((x["op"], x["rows"]) for x in res["rows"]) == sorted(
        (op, rows) for op in ROW_OPS for rows in (16, 3))
    for row in res["rows"]:
        assert row["max_rel_err"] < 1e-4 and row["old_ms"] > 0, row
        assert row["old_over_ours"] == pytest.approx(row["old_ms"] / row["ours_ms"])
    assert res["old_kernels"]["env"] == OLD_KERNELS and res["old_kernels"]["failed_checks"] == []
    cases = {b["case"] for b in res["bandwidth"]}
    assert {"hg_add", "hg_chain", "hg_add_old", "hg_chain_old"} <= cases
    assert res["peers"]["add_old_over_ours"] > 0 and res["peers"]["chain_old_over_ours"] > 0
    assert len(res["bmm"]) == 4 and res["launch"]["hg_async_us"] > 0
    assert [t["target"] for t in res["targets"]] == ["add >= 0.95 of the device copy"]
    md = r.stdout
    assert "| old ms | old / ours |" in md and "New kernels over the old ones" in md
