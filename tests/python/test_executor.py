import os
import subprocess
import sys

import numpy as np
import pytest

import hologram as hg


def test_cpu_executor_and_context_manager():
    with hg.Executor(backend="cpu") as ex:
        assert ex.backend == "cpu"
        assert not ex.closed
        assert ex.num_threads >= 1
        assert ex.device["backend"] == "cpu"
        buf = ex.allocate(8)
        assert buf.executor is ex
    assert ex.closed
    assert buf.freed
    with pytest.raises(hg.InvalidHandleError, match=r"after close\(\)"):
        ex.allocate(4)
    with pytest.raises(hg.InvalidHandleError, match="closed"):
        buf.to_bytes()
    ex.close()  # idempotent


def test_auto_picks_default_backend():
    ex = hg.Executor(backend="auto")
    assert ex.backend in ("cpu", "cuda", "metal")
    assert ex.backend == hg.get_default_backend()
    assert hg.Executor().backend == ex.backend  # backend defaults to 'auto'
    assert "backend='%s'" % ex.backend in repr(ex)


def test_backend_name_is_case_insensitive():
    assert hg.Executor(backend="CPU").backend == "cpu"


def test_invalid_backend_name_lists_valid_names():
    with pytest.raises(ValueError) as ei:
        hg.Executor(backend="tpu")
    msg = str(ei.value)
    assert "tpu" in msg
    for name in ("auto", "cpu", "cuda", "metal"):
        assert name in msg
    assert isinstance(ei.value, hg.InvalidArgumentError)
    assert ei.value.status == 100
    assert ei.value.status_name == "HG_ERR_INVALID_ARGUMENT"


def test_backend_must_be_str():
    with pytest.raises(TypeError, match="backend must be a str"):
        hg.Executor(backend=3)


@pytest.mark.parametrize("name", ["cuda", "metal"])
def test_unavailable_backend_gives_reason(name):
    info = hg.backend.backend_info(name)
    if info["available"]:
        pytest.skip(f"{name} is available here")
    assert info["reason"]
    with pytest.raises(hg.BackendUnavailableError) as ei:
        hg.Executor(backend=name)
    assert isinstance(ei.value, RuntimeError)
    assert info["reason"] in str(ei.value)
    assert ei.value.status == 401


def test_backend_queries_match_library():
    assert hg.is_cuda_available() == hg.backend.backend_info("cuda")["available"]
    assert hg.is_metal_available() == hg.backend.backend_info("metal")["available"]
    assert hg.backend.is_cuda_available is hg.is_cuda_available
    assert isinstance(hg.is_cuda_available(), bool)
    assert hg.backend.is_cpu_available()
    assert hg.get_default_backend() in ("cpu", "cuda", "metal")
    with pytest.raises(ValueError, match="not a concrete backend"):
        hg.backend.backend_info("auto")


def test_default_backend_honours_environment():
    code = "import hologram as hg; print(hg.get_default_backend(), hg.Executor().backend)"
    env = dict(os.environ, HOLOGRAM_BACKEND="cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["cpu", "cpu"]


@pytest.mark.parametrize("lib,want", [
    ("/nonexistent/libcuda.so.1", "HOLOGRAM_CUDA_DRIVER='/nonexistent/libcuda.so.1' could not be loaded"),
    ("libm.so.6", "libcuda.so.1 has no symbol cuInit: the library is too old or not the real"),
])
def test_cuda_driver_that_does_not_load_is_reported(lib, want):
    # The driver is loaded once per process: each case in its own.
    code = ("import hologram as hg\n"
            "info = hg.backend.backend_info('cuda')\n"
            "assert not info['available']\n"
            "try:\n    hg.Executor('cuda')\n"
            "except hg.errors.BackendUnavailableError as e:\n    print(info['reason']); print(e)\n")
    env = dict(os.environ, HOLOGRAM_CUDA_DRIVER=lib)
    env.pop("HOLOGRAM_CUDA_EMULATE", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    reason, err = r.stdout.splitlines()[:2]
    assert want in reason and want in err, r.stdout


def test_allocate_arguments():
    ex = hg.Executor("cpu")
    assert ex.allocate(3).dtype == np.float32  # default dtype
    assert ex.allocate(0).size == 0
    with pytest.raises(ValueError, match=">= 0"):
        ex.allocate(-1)
    with pytest.raises(TypeError, match="unsupported dtype"):
        ex.allocate(4, dtype=np.complex64)
    with pytest.raises(hg.DtypeError, match="expected one of"):
        ex.allocate(4, dtype="float128x")


def test_many_buffers_no_cap():
    ex = hg.Executor("cpu")
    bufs = [ex.allocate(1) for _ in range(500)]
    assert all(b.size == 1 for b in bufs)


def test_build_info():
    info = hg.build_info()
    assert info["version"] == hg.__version__


def test_executor_options():
    ex = hg.Executor("cpu", num_threads=1)
    assert ex.num_threads == 1
    with pytest.raises(TypeError):
        hg.Executor("cpu", 0)  # device and num_threads are keyword-only
    with pytest.raises(hg.HologramError):
        hg.Executor("cpu", device=5)
