"""hologram.set_cpu_threading / cpu_threading: the OpenMP choice needs a loaded OpenMP runtime,
hologram_torch chooses it where torch runs on OpenMP (unless HOLOGRAM_CPU_THREADING says
otherwise), results are bit-identical on both kinds of threads, and a forked child runs."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import hologram as hg

torch = pytest.importorskip("torch")


def package_dirs():
    """Where this process's hologram and hologram_torch come from (the source tree or an
    installed wheel): the child imports the same ones."""
    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(hg.__file__)))]
    spec = importlib.util.find_spec("hologram_torch")
    if spec is not None and spec.origin:
        dirs.append(os.path.dirname(os.path.dirname(os.path.abspath(spec.origin))))
    return list(dict.fromkeys(dirs))


def run_child(code, **env):
    e = dict(os.environ)
    e.pop("HOLOGRAM_CPU_THREADING", None)
    e.update(env)
    e["PYTHONPATH"] = os.pathsep.join(package_dirs() + [e.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]


def torch_uses_openmp():
    return "parallel backend: OpenMP" in torch.__config__.parallel_info()


def test_bad_modes_refused():
    before = hg.cpu_threading()
    with pytest.raises(ValueError, match="'own' or 'openmp'"):
        hg.set_cpu_threading("threads")
    with pytest.raises(TypeError, match="'own' or 'openmp'"):
        hg.set_cpu_threading(1)
    assert hg.cpu_threading() == before


def test_openmp_needs_a_runtime():
    # hologram alone (numpy's OpenBLAS uses pthreads): no OpenMP runtime in the process
    out = run_child("import hologram as hg\n"
                    "try:\n    hg.set_cpu_threading('openmp')\n"
                    "except hg.UnsupportedError as e:\n    print('refused', 'no OpenMP runtime' in str(e), hg.cpu_threading())\n"
                    "else:\n    print('set', hg.cpu_threading())")
    assert out == "refused True own"


def test_hologram_torch_chooses_openmp():
    want = "openmp" if torch_uses_openmp() else "own"
    code = "import torch, hologram as hg, hologram_torch; print(hg.cpu_threading())"
    assert run_child(code) == want
    assert run_child(code, HOLOGRAM_CPU_THREADING="own") == "own"
    assert run_child("import torch, hologram as hg; print(hg.cpu_threading())",
                     HOLOGRAM_CPU_THREADING="openmp") == want


def ops(x, y, m):
    a, b = hg.asarray(x), hg.asarray(y)
    return [(a * b + a).numpy(), hg.exp(a).numpy(), hg.sum(a, axis=0).numpy(),
            (hg.asarray(m) @ hg.asarray(m)).numpy()]


@pytest.mark.skipif(not torch_uses_openmp(), reason="torch does not run on OpenMP here")
def test_same_results_on_both():
    import hologram_torch  # noqa: F401  (loads torch's OpenMP runtime and chooses it)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((512, 700)).astype(np.float32)
    y = rng.standard_normal((512, 700)).astype(np.float32)
    m = rng.standard_normal((300, 300)).astype(np.float32)
    before = hg.cpu_threading()
    try:
        hg.set_cpu_threading("own")
        own = ops(x, y, m)
        hg.set_cpu_threading("openmp")
        assert hg.cpu_threading() == "openmp"
        omp = ops(x, y, m)
    finally:
        hg.set_cpu_threading(before)
    for o, p in zip(own, omp):
        np.testing.assert_array_equal(o, p)
    np.testing.assert_allclose(own[3], m.astype(np.float64) @ m, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(own[1], np.exp(x.astype(np.float64)), rtol=1e-6)


@pytest.mark.skipif(not hasattr(os, "fork") or not torch_uses_openmp(),
                    reason="needs fork() and torch on OpenMP")
def test_forked_child_runs_on_own_threads():
    code = ("import os, numpy as np, torch, hologram as hg, hologram_torch\n"
            "x = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)\n"
            "a = hg.asarray(x)\n"
            "assert hg.cpu_threading() == 'openmp'\n"
            "hg.exp(a).numpy()\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    ok = hg.cpu_threading() == 'own' and np.allclose(hg.exp(a).numpy(), np.exp(x), rtol=1e-6)\n"
            "    os._exit(0 if ok else 3)\n"
            "_, st = os.waitpid(pid, 0)\n"
            "print(os.waitstatus_to_exitcode(st), hg.cpu_threading())")
    assert run_child(code) == "0 openmp"
