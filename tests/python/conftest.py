"""Shared fixtures. HG_TEST_BACKEND=cuda (scripts/gpu_check.sh sets it) runs the same tests
against a CUDA executor: the `ex` fixture is a CUDA Executor, host data given to hg.asarray /
hg.tensor without an executor is copied onto it, and numpy() of a device Tensor returns a host
copy so that the comparisons with numpy stay as written. Tests that assert host-memory semantics
(zero-copy views of numpy memory, __array_interface__, data_ptr) carry the `host_memory` marker
and are skipped there with that reason; the default run (cpu) runs everything."""
import functools
import os

import numpy as np
import pytest

TEST_BACKEND = os.environ.get("HG_TEST_BACKEND", "").strip().lower() or "cpu"
if TEST_BACKEND != "cpu":
    # Creation functions (hg.zeros, hg.empty, ...) without an executor use the default one.
    os.environ["HOLOGRAM_BACKEND"] = TEST_BACKEND

import hologram as hg  # noqa: E402 - after HOLOGRAM_BACKEND is set
from hologram.tensor import Tensor  # noqa: E402

try:   # bf16's numpy dtype: ml_dtypes.bfloat16 where it is installed, else its uint16 bits
    from ml_dtypes import bfloat16 as BF16_NUMPY
except ImportError:
    BF16_NUMPY = np.uint16

# (dtype spec accepted by allocate, numpy dtype of to_numpy)
ALL_DTYPES = [
    ("bool", np.bool_), ("int8", np.int8), ("int16", np.int16), ("int32", np.int32),
    ("int64", np.int64), ("uint8", np.uint8), ("uint16", np.uint16), ("uint32", np.uint32),
    ("uint64", np.uint64), ("float16", np.float16), ("bfloat16", BF16_NUMPY),
    ("float32", np.float32), ("float64", np.float64),
]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "host_memory: asserts CPU-memory semantics (zero-copy views of host memory); "
        "skipped when HG_TEST_BACKEND names a device backend")
    config.addinivalue_line(
        "markers", "torch_cuda: hologram_torch on torch CUDA tensors (skipped without a GPU)")


def pytest_report_header(config):
    return f"hologram test backend: {TEST_BACKEND} (HG_TEST_BACKEND)"


def pytest_collection_modifyitems(config, items):
    if TEST_BACKEND == "cpu":
        return
    skip = pytest.mark.skip(reason=f"asserts host-memory semantics (HG_TEST_BACKEND={TEST_BACKEND})")
    for item in items:
        if "host_memory" in item.keywords:
            item.add_marker(skip)


def executor_under_test():
    """The Executor the tests run on: the shared CPU one, or the package's default executor,
    which HOLOGRAM_BACKEND makes a device executor (so operands converted by the package and by
    the tests land on the same one)."""
    if TEST_BACKEND == "cpu":
        return hg.default_cpu_executor()
    ex = hg.default_executor()
    assert ex.backend == TEST_BACKEND, f"HG_TEST_BACKEND={TEST_BACKEND} but the default is {ex}"
    return ex


@pytest.fixture
def ex():
    if TEST_BACKEND != "cpu":
        yield executor_under_test()
        return
    with hg.Executor(backend="cpu") as e:
        yield e


@pytest.fixture(autouse=True)
def _place_on_test_backend(monkeypatch):
    """On a device run: host data without an executor goes to the device, numpy() copies back."""
    if TEST_BACKEND == "cpu":
        yield
        return
    dev = executor_under_test()
    real_asarray, real_tensor, real_numpy = hg.asarray, hg.tensor, Tensor.numpy

    # (functools.wraps: the stand-ins keep the real functions' docstrings and signatures, which
    # test_docstrings and test_typing read)
    @functools.wraps(real_asarray)
    def asarray(obj, dtype=None, *, copy=None, executor=None):
        if executor is None and not isinstance(obj, (Tensor, hg.Buffer)):
            executor = dev
            copy = None if copy is False else copy   # a host view cannot live on the device
        return real_asarray(obj, dtype, copy=copy, executor=executor)

    @functools.wraps(real_tensor)
    def tensor(data, dtype=None, *, executor=None):
        return real_tensor(data, dtype, executor=executor or dev)

    @functools.wraps(real_numpy)
    def numpy(self, copy=False):
        return real_numpy(self, copy=copy or self.backend != "cpu")

    monkeypatch.setattr(hg, "asarray", asarray)
    monkeypatch.setattr(hg, "tensor", tensor)
    monkeypatch.setattr(Tensor, "numpy", numpy)
    yield


def random_array(np_dtype, n, rng):
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        return rng.integers(info.min, info.max, n, dtype=np_dtype, endpoint=True)
    return rng.standard_normal(n).astype(np_dtype)


def torch_cuda_missing():
    """Why torch CUDA tensors cannot be tested here (None where they can): a CUDA build of torch
    with a GPU and hologram's CUDA backend (the emulation does not count: its memory is host
    memory, which torch would not take as a CUDA tensor)."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return (f"no CUDA tensors here (torch {torch.__version__}, CUDA build: "
                f"{torch.version.cuda or 'no'}, GPU: no)")
    if os.environ.get("HOLOGRAM_CUDA_EMULATE", "0") not in ("", "0"):
        return "HOLOGRAM_CUDA_EMULATE is set: hologram's CUDA executor would not run on the GPU"
    if not hg.is_cuda_available():
        return "hologram's CUDA backend is unavailable (hologram info says why)"
    return None


# The devices the hologram_torch tests that take the `torch_device` fixture run on; the CUDA
# ones carry the `torch_cuda` marker (scripts/gpu_check.sh runs them as a step of their own).
@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.torch_cuda)])
def torch_device(request):
    import torch
    if request.param == "cuda":
        why = torch_cuda_missing()
        if why:
            pytest.skip(why)
    return torch.device(request.param)


@pytest.fixture
def cuda_device():
    """The CUDA device of tests that only mean something there (streams, synchronization)."""
    import torch
    why = torch_cuda_missing()
    if why:
        pytest.skip(why)
    return torch.device("cuda", torch.cuda.current_device())


def import_hologram_torch():
    """hologram_torch, or a skip of the calling module where torch is missing or older than the
    package supports (the GPU machine's image carries its own torch); any other import failure
    is an error."""
    pytest.importorskip("torch")
    try:
        import hologram_torch
    except ImportError as e:
        if "hologram_torch needs PyTorch >=" not in str(e):
            raise
        pytest.skip(str(e), allow_module_level=True)
    return hologram_torch
