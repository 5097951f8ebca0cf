"""bfloat16 in numpy: ml_dtypes.bfloat16 arrays where ml_dtypes is installed (values checked
against float64 references rounded to bf16), the raw bits as uint16 where it is not (simulated
by hiding the module and making the extension look it up again)."""
import sys

import numpy as np
import pytest

import hologram as hg
from hologram import _C


def bf16_round(x64):
    """float64 values (exact in float32) rounded to bfloat16, nearest even: (bits, values)."""
    u = np.asarray(x64, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    values = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits, values


@pytest.fixture
def data():
    rng = np.random.default_rng(16)
    return (rng.standard_normal(101) * 100).astype(np.float32).astype(np.float64)


@pytest.fixture
def ml():
    mod = pytest.importorskip("ml_dtypes")
    _C._reset_bf16()   # a previous test may have hidden it
    return mod


@pytest.fixture
def no_ml_dtypes(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)   # `import ml_dtypes` fails
    _C._reset_bf16()
    yield
    _C._reset_bf16()   # looked up again (with the real module) on the next use


# --- with ml_dtypes -------------------------------------------------------------------------
def test_numpy_gives_ml_dtypes_bfloat16(ml, data):
    t = hg.asarray(data.astype(np.float32)).astype("bf16")
    _, want = bf16_round(data)
    host = (np.asarray(t), t.to_numpy()) if t.backend == "cpu" else ()   # views: host memory
    for arr in (t.numpy(), t.numpy(copy=True), t.buffer.to_numpy(),
                t.buffer.to_numpy(copy=True)) + host:
        assert arr.dtype == ml.bfloat16
        np.testing.assert_array_equal(arr.astype(np.float64), want)
    assert t.dtype == ml.bfloat16 and t.buffer.dtype == ml.bfloat16
    assert t.tolist() == want.tolist()


def test_ops_round_once_to_bf16(ml, data):
    _, a = bf16_round(data)
    _, b = bf16_round(data[::-1])
    x = hg.asarray(a.astype(ml.bfloat16))
    y = hg.asarray(b.astype(ml.bfloat16))
    # Products of two bf16 values are exact in float64: one rounding to bf16 is the reference.
    np.testing.assert_array_equal((x * y).numpy().astype(np.float64), bf16_round(a * b)[1])
    np.testing.assert_array_equal(hg.negative(x).numpy().astype(np.float64), -a)


@pytest.mark.host_memory
def test_views_share_memory(ml):
    t = hg.tensor([1.0, 2.5, -3.0], dtype="bf16")
    arr = np.asarray(t)
    arr[0] = 8
    assert t.tolist()[0] == 8.0 and np.shares_memory(arr, t.numpy())
    with pytest.raises(AttributeError):   # the protocol cannot name bfloat16; numpy uses __array__
        t.__array_interface__
    a = np.array([1.5, -2.0, 0.25, 7.0], dtype=ml.bfloat16)
    v = hg.asarray(a)   # a zero-copy view, as for numpy's own dtypes
    assert v.dtype_name == "bf16" and v.data_ptr == a.ctypes.data
    a[1] = 3
    assert v.tolist() == [1.5, 3.0, 0.25, 7.0]
    with pytest.raises(hg.InvalidArgumentError):
        hg.asarray(a[::2], copy=False)   # strided bfloat16: only a copy


def test_from_numpy_bfloat16(ml, ex):
    a = np.array([[1.5, -2.0], [0.1, 3e38]], dtype=ml.bfloat16)
    want = a.astype(np.float64).tolist()
    assert hg.tensor(a, executor=ex).tolist() == want
    assert hg.asarray(a, executor=ex).dtype_name == "bf16"
    assert hg.asarray(a.T, executor=ex).tolist() == a.T.astype(np.float64).tolist()
    assert hg.asarray(a, "f32", executor=ex).dtype_name == "f32"
    assert hg.asarray(np.float32([0.1]), ml.bfloat16, executor=ex).tolist() == [want[1][0]]
    buf = ex.allocate(4, "bf16")
    buf.from_numpy(a)
    np.testing.assert_array_equal(buf.to_numpy(), a.reshape(-1))
    t = hg.zeros(2, ml.bfloat16, executor=ex)
    assert t.dtype_name == "bf16" and t.astype(t.dtype).dtype_name == "bf16"
    assert (t + ml.bfloat16(1.5)).tolist() == [1.5, 1.5]


# --- without ml_dtypes: the uint16 bits -----------------------------------------------------
def test_without_ml_dtypes_uint16_bits(no_ml_dtypes, data):
    t = hg.asarray(data.astype(np.float32)).astype("bf16")
    bits, want = bf16_round(data)
    assert t.dtype == np.uint16 and t.buffer.dtype == np.uint16
    host = (np.asarray(t),) if t.backend == "cpu" else ()
    for arr in (t.numpy(copy=True), t.buffer.to_numpy()) + host:
        assert arr.dtype == np.uint16
        np.testing.assert_array_equal(arr, bits)
    assert t.tolist() == want.tolist()   # values, not bits
    back = hg.asarray(bits, dtype="bf16")   # uint16 given as bf16: taken as the bits
    assert back.dtype_name == "bf16" and back.tolist() == want.tolist()


@pytest.mark.host_memory
def test_without_ml_dtypes_array_interface(no_ml_dtypes):
    t = hg.tensor([1.0, -2.0], dtype="bf16")
    assert t.__array_interface__["typestr"] == "<u2"
    assert t.numpy().tolist() == [0x3F80, 0xC000]
