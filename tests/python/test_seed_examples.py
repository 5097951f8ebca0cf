"""The Python examples of the product documents (tests/python/seed_examples/), run as written."""
import linecache
import pathlib
import runpy
import sys
import traceback

import numpy as np
import pytest

import hologram as hg
from conftest import import_hologram_torch

HERE = pathlib.Path(__file__).parent / "seed_examples"


def run_example(name):
    """Runs the file; returns (namespace, exception, line of the raising statement)."""
    path = str(HERE / name)
    try:
        ns = runpy.run_path(path, run_name="__seed__")
        return ns, None, None
    except Exception as e:  # noqa: BLE001 - the test inspects it
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
        line = linecache.getline(path, frames[-1].lineno) if frames else ""
        return None, e, line


def expect_backend_error_at(name, backend):
    ns, err, line = run_example(name)
    if hg.is_metal_available():
        pytest.skip("this machine has Metal: the example runs further than this test checks")
    assert isinstance(err, hg.BackendUnavailableError), err
    assert f"backend='{backend}'" in line
    assert backend in str(err)


def test_seed000_backend_selection_raises_where_metal_is_missing():
    expect_backend_error_at("seed000_0.py", "metal")


def test_seed000_quickstart_with_torch():
    pytest.importorskip("torch")
    ns, err, _ = run_example("seed000_1.py")
    assert err is None, err
    assert np.allclose(ns["c"].numpy(), (ns["a"] + ns["b"]).numpy())


def test_seed001_backend_selection_raises_where_metal_is_missing():
    expect_backend_error_at("seed001_0.py", "metal")


def test_seed001_numpy_quickstart():
    ns, err, _ = run_example("seed001_1.py")
    assert err is None, err
    a, b = ns["a"].to_numpy(), ns["b"].to_numpy()
    assert ns["result"].dtype == np.float32
    np.testing.assert_array_equal(ns["result"], a + b)


def test_seed001_hologram_torch_example():
    """Verbatim, it stops at its Metal executor here (as Executor(backend='metal') does); with
    'metal' read as 'cpu' it runs to the end: the functional add and the nn.Module give torch's
    values."""
    torch = pytest.importorskip("torch")
    import_hologram_torch()
    if not hg.is_metal_available():
        expect_backend_error_at("seed001_2.py", "metal")
    src = (HERE / "seed001_2.py").read_text().replace("backend='metal'", "backend='cpu'")
    ns = {"__name__": "__seed__"}
    if hg.Executor(backend="auto").backend != "cpu":
        # Its model takes an Executor('auto'), a device one here, and CPU tensors: a clear
        # error, nothing copied across devices (HG_TEST_BACKEND=cuda runs this).
        with pytest.raises(ValueError, match="nothing is copied across devices"):
            exec(compile(src, "seed001_2_cpu.py", "exec"), ns)   # noqa: S102
        return
    exec(compile(src, "seed001_2_cpu.py", "exec"), ns)   # noqa: S102 - the example itself
    torch.testing.assert_close(ns["z"], ns["x"] + ns["y"])
    model = ns["model"]
    assert tuple(ns["output"].shape) == (32, 256)
    x = torch.randn(32, 512)
    want = torch.relu(torch.nn.functional.linear(x, model.linear.weight, model.linear.bias))
    torch.testing.assert_close(model(x), want, rtol=1e-5, atol=1e-5)


def test_seed001_availability_with_fallback(capsys):
    ns, err, _ = run_example("seed001_3.py")
    assert err is None, err
    out = capsys.readouterr().out
    assert f"CUDA available: {hg.is_cuda_available()}" in out
    assert f"Default backend: {hg.get_default_backend()}" in out
    if not hg.is_cuda_available():
        assert "CUDA not available:" in out and "Falling back to CPU" in out
        assert ns["exec"].backend == "cpu"


def test_seed004_backend_selection_raises_where_metal_is_missing():
    expect_backend_error_at("seed004_0.py", "metal")
