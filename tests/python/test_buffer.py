import numpy as np
import pytest

import hologram as hg
from conftest import ALL_DTYPES, random_array


@pytest.mark.parametrize("spec,np_dtype", ALL_DTYPES)
def test_round_trip_all_dtypes(ex, spec, np_dtype):
    rng = np.random.default_rng(7)
    n = 37
    buf = ex.allocate(n, dtype=spec)
    assert buf.size == n and len(buf) == n
    assert buf.dtype == np.dtype(np_dtype)
    assert buf.nbytes == n * np.dtype(np_dtype).itemsize
    assert not buf.to_numpy().any()  # new buffers are zero
    data = random_array(np_dtype, n, rng)
    buf.from_numpy(data)
    np.testing.assert_array_equal(buf.to_numpy(), data)
    np.testing.assert_array_equal(buf.to_numpy(copy=True), data)
    assert buf.to_bytes() == data.tobytes()
    other = ex.allocate(n, dtype=spec)
    other.from_bytes(data[::-1].tobytes())
    np.testing.assert_array_equal(other.to_numpy(), data[::-1])
    other.copy_from(buf)
    np.testing.assert_array_equal(other.to_numpy(), data)


@pytest.mark.parametrize("spec", ["float32", np.float32, np.dtype("float32"), "f32", "<f4"])
def test_dtype_spellings(ex, spec):
    assert ex.allocate(2, dtype=spec).dtype == np.float32


def test_numpy_types_as_dtype(ex):
    assert ex.allocate(2, dtype=bool).dtype == np.bool_
    assert ex.allocate(2, dtype=np.int64).dtype == np.int64
    assert ex.allocate(2, dtype=np.float16).dtype == np.float16


def test_int64_view_has_numpy_int64_type(ex):
    assert ex.allocate(2, np.int64).to_numpy().dtype.type is np.int64


def test_bfloat16_bits(ex):
    buf = ex.allocate(3, dtype=hg.bfloat16)
    assert buf.dtype_name == "bf16"
    assert buf.dtype.itemsize == 2   # ml_dtypes.bfloat16 or uint16: test_bf16.py
    buf.fill(1.5)  # bf16(1.5) = 0x3FC0
    np.testing.assert_array_equal(buf.to_numpy().view(np.uint16), np.full(3, 0x3FC0, np.uint16))
    buf.from_numpy(np.array([0x4000, 0xBF80, 0x7FC0], np.uint16))  # 2, -1, NaN
    assert buf.to_bytes() == np.array([0x4000, 0xBF80, 0x7FC0], np.uint16).tobytes()
    with pytest.raises(hg.DtypeError):
        buf.from_numpy(np.ones(3, np.float32))


@pytest.mark.parametrize("spec,value,expected", [
    ("float32", 2.5, 2.5), ("int32", -7, -7), ("uint8", 200, 200), ("bool", 3.0, True),
    ("float16", 0.1, np.float16(0.1)), ("float64", -0.0, -0.0), ("int64", 2**40, 2**40),
])
def test_fill(ex, spec, value, expected):
    buf = ex.allocate(5, spec)
    buf.fill(value)
    np.testing.assert_array_equal(buf.to_numpy(), np.full(5, expected, dtype=buf.dtype))


def test_fill_special_values(ex):
    buf = ex.allocate(2, "float32")
    buf.fill(float("nan"))
    assert np.isnan(buf.to_numpy()).all()
    buf.fill(float("-inf"))
    assert (buf.to_numpy() == -np.inf).all()
    buf.fill(-0.0)
    assert np.signbit(buf.to_numpy()).all()
    with pytest.raises(TypeError):
        buf.fill("x")


def test_from_numpy_rejects_wrong_dtype_and_size(ex):
    buf = ex.allocate(4, "float32")
    with pytest.raises(hg.DtypeError, match="does not match"):
        buf.from_numpy(np.ones(4, np.float64))
    with pytest.raises(hg.SizeMismatchError, match="4"):
        buf.from_numpy(np.ones(5, np.float32))
    with pytest.raises(TypeError, match="buffer protocol"):
        buf.from_numpy([1.0, 2.0, 3.0, 4.0])
    assert not buf.to_numpy().any()  # nothing written


def test_from_numpy_non_contiguous_and_2d(ex):
    buf = ex.allocate(4, "int32")
    src = np.arange(8, dtype=np.int32)[::2]
    buf.from_numpy(src)
    np.testing.assert_array_equal(buf.to_numpy(), src)
    buf.from_numpy(np.arange(4, dtype=np.int32).reshape(2, 2))
    np.testing.assert_array_equal(buf.to_numpy(), np.arange(4))


def test_from_bytes_size_checked(ex):
    buf = ex.allocate(2, "int16")
    with pytest.raises(hg.SizeMismatchError, match="4 bytes"):
        buf.from_bytes(b"abc")
    buf.from_bytes(bytearray(b"\x01\x00\x02\x00"))
    assert buf.to_numpy().tolist() == [1, 2]


def test_copy_from_checks(ex):
    a = ex.allocate(3, "float32")
    with pytest.raises(hg.SizeMismatchError):
        a.copy_from(ex.allocate(4, "float32"))
    with pytest.raises(hg.DtypeError):
        a.copy_from(ex.allocate(3, "float64"))
    a.copy_from(np.array([1, 2, 3], np.float32))
    assert a.to_numpy().tolist() == [1, 2, 3]


def test_zero_size_buffer(ex):
    buf = ex.allocate(0, "float64")
    assert buf.to_numpy().shape == (0,)
    assert buf.to_bytes() == b""
    buf.from_numpy(np.empty(0))
    buf.fill(1)


def test_use_after_free_raises_for_every_method(ex):
    buf = ex.allocate(4)
    buf.free()
    assert buf.freed
    buf.free()  # idempotent
    calls = [
        lambda: buf.to_numpy(), lambda: buf.to_numpy(copy=True), lambda: buf.to_bytes(),
        lambda: buf.from_numpy(np.ones(4, np.float32)), lambda: buf.from_bytes(b"0" * 16),
        lambda: buf.fill(1), lambda: buf.copy_from(ex.allocate(4)), lambda: buf.__dlpack__(),
        lambda: buf.__array_interface__, lambda: np.asarray(buf), lambda: memoryview(buf),
        lambda: ex.allocate(4).copy_from(buf), lambda: buf.data_ptr,
        lambda: hg.ops.vector_add(ex, buf, buf, buf),
    ]
    for call in calls:
        with pytest.raises(hg.InvalidHandleError, match="after free"):
            call()
    assert buf.size == 4  # plain attributes stay readable
    assert "freed" in repr(buf)


def test_buffer_cannot_be_constructed_directly():
    with pytest.raises(TypeError):
        hg.Buffer()


def test_to_numpy_keyword_checked(ex):
    with pytest.raises(TypeError):
        ex.allocate(1).to_numpy(cpy=True)
