"""Batched matmul on the CUDA backend's host emulation (HOLOGRAM_CUDA_EMULATE=1, in a subprocess
so the rest of the suite keeps its backends): hg.matmul, the @ operator and a @hg.jit graph
reach one strided-batched library call ("gemm_strided_batched" launches in hg.profile) where
the batch dims collapse, one per run of collapsing dims where they do not, and agree with
numpy in float64. hologram_torch's bmm / matmul call hg.matmul (hologram_torch/_ops.py), so
they take the same path on CUDA tensors. Skipped when no host C++ compiler can build emulated
kernels."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(r'''
    import numpy as np
    import hologram as hg

    ex = hg.Executor("cuda")
    rng = np.random.default_rng(7)

    def launches(prof):
        return [(e["name"], e.get("args", {}).get("detail", "")) for e in prof.events
                if e.get("cat") == "launch" and e["name"].startswith("gemm")]

    def check(got, a, b, dt, what):
        want = np.matmul(a.astype(np.float64), b.astype(np.float64))
        tol = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-3}[dt]
        err = np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), 1.0)
        assert got.shape == want.shape and err <= tol, (what, dt, got.shape, err)

    for dt in ("float32", "float64", "float16"):
        # (6, 3, 5) @ (6, 5, 4): one call of 6 (the emulation splits it in two library calls)
        a = rng.standard_normal((6, 3, 5)).astype(dt)
        b = rng.standard_normal((6, 5, 4)).astype(dt)
        ha, hb = hg.asarray(a, executor=ex), hg.asarray(b, executor=ex)
        with hg.profile() as prof:
            got = hg.matmul(ha, hb)
        assert launches(prof) == [("gemm_strided_batched", "batch 6 m 3 n 4 k 5")], launches(prof)
        check(got.numpy(copy=True), a, b, dt, "3-D")
        # a transposed view as a, b broadcast over the batch: still one call
        at = rng.standard_normal((6, 5, 3)).astype(dt)
        b1 = rng.standard_normal((1, 5, 4)).astype(dt)
        with hg.profile() as prof:
            got = hg.asarray(at, executor=ex).mT @ hg.asarray(b1, executor=ex)
        assert [n for n, _ in launches(prof)] == ["gemm_strided_batched"], launches(prof)
        check(got.numpy(copy=True), np.swapaxes(at, -1, -2), b1, dt, "transposed, broadcast")
        # 4-D whose batch dims do not collapse (b broadcast over the outer one): one call per
        # outer index
        a4 = rng.standard_normal((2, 3, 4, 5)).astype(dt)
        b3 = rng.standard_normal((3, 5, 2)).astype(dt)
        with hg.profile() as prof:
            got = hg.matmul(hg.asarray(a4, executor=ex), hg.asarray(b3, executor=ex))
        assert launches(prof) == [("gemm_strided_batched", "batch 3 m 4 n 2 k 5")] * 2, launches(prof)
        check(got.numpy(copy=True), a4, b3, dt, "4-D")

    # The graph compiler's matmul step takes the same route.
    @hg.jit
    def f(x, y):
        return hg.matmul(x, y) * 2.0

    a = rng.standard_normal((4, 3, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5, 6)).astype(np.float32)
    ha, hb = hg.asarray(a, executor=ex), hg.asarray(b, executor=ex)
    f(ha, hb)
    with hg.profile() as prof:
        got = f(ha, hb)
    assert [n for n, _ in launches(prof)] == ["gemm_strided_batched"], launches(prof)
    check(got.numpy(copy=True) / 2.0, a, b, "float32", "jit")
    print("cuda bmm ok")
''')


def test_batched_matmul_on_emulation(tmp_path):
    if not (shutil.which(os.environ.get("HOLOGRAM_CUDA_EMULATE_CXX", "c++")) or shutil.which("g++")):
        pytest.skip("no host C++ compiler for the CUDA emulation")
    env = dict(os.environ, HOLOGRAM_CUDA_EMULATE="1", HOLOGRAM_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cuda bmm ok" in r.stdout
