import gc
import sys

import numpy as np
import pytest

import hologram as hg
from conftest import ALL_DTYPES, random_array
from dlpack_ctypes import capsule_name, consume, open_capsule

# Zero-copy views of host memory: skipped on a device run (tests/python/conftest.py).
pytestmark = pytest.mark.host_memory

try:
    import torch
except ImportError:  # the torch tests skip; the rest runs with numpy alone
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def pointer(arr):
    return arr.__array_interface__["data"][0]


# --- to_numpy / buffer protocol / __array_interface__ -------------------------------------------
def test_to_numpy_is_a_view(ex):
    buf = ex.allocate(16, np.float32)
    view = buf.to_numpy()
    assert pointer(view) == buf.data_ptr != 0
    assert view.flags.writeable and not view.flags.owndata
    view[3] = 42.0  # numpy -> hologram
    assert buf.to_numpy(copy=True)[3] == 42.0
    buf.fill(7)  # hologram -> numpy
    assert (view == 7).all()
    copy = buf.to_numpy(copy=True)
    assert pointer(copy) != buf.data_ptr
    copy[0] = -1
    assert view[0] == 7


def test_view_keeps_buffer_alive_after_del(ex):
    buf = ex.allocate(8, np.int32)
    buf.from_numpy(np.arange(8, dtype=np.int32))
    view = buf.to_numpy()
    del buf
    gc.collect()
    assert view.tolist() == list(range(8))
    view[0] = 5  # still writable memory


def test_free_with_live_view_defers_release(ex):
    buf = ex.allocate(8, np.float64)
    buf.fill(3)
    view = buf.to_numpy()
    assert buf._users == 1
    buf.free()
    with pytest.raises(hg.InvalidHandleError):
        buf.to_numpy()
    assert buf._memory_alive  # the numpy view still reads it
    assert (view == 3).all()
    del view
    gc.collect()
    assert not buf._memory_alive


def test_executor_close_with_live_view(ex):
    with hg.Executor("cpu") as e2:
        buf = e2.allocate(4, np.int16)
        buf.fill(9)
        view = buf.to_numpy()
        other = e2.allocate(4)
    assert other.freed and not other._memory_alive  # no view: released at close
    assert buf.freed and buf._memory_alive
    assert view.tolist() == [9, 9, 9, 9]
    del view
    gc.collect()
    assert not buf._memory_alive


def test_array_interface(ex):
    buf = ex.allocate(5, np.uint16)
    ai = buf.__array_interface__
    assert ai["shape"] == (5,) and ai["typestr"] == "<u2" and ai["version"] == 3
    assert ai["data"] == (buf.data_ptr, False)
    holder = type("Holder", (), {})()
    holder.__array_interface__ = ai
    arr = np.asarray(holder)
    arr[:] = 11
    assert buf.to_numpy(copy=True).tolist() == [11] * 5
    # The protocol has no release hook: after it was handed out, free() keeps the memory until
    # the Buffer object itself goes.
    buf.free()
    assert buf._memory_alive


@pytest.mark.parametrize("spec,np_dtype", ALL_DTYPES)
def test_memoryview_format(ex, spec, np_dtype):
    buf = ex.allocate(3, spec)
    m = memoryview(buf)
    assert m.itemsize == np.dtype(np_dtype).itemsize and m.shape == (3,)
    # PEP 3118 has no bfloat16: the buffer protocol carries bf16 as its uint16 bits.
    assert np.asarray(m).dtype == np.dtype(np.uint16 if spec == "bfloat16" else np_dtype)
    m.release()
    assert buf._users == 0


# --- DLPack export ------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,np_dtype", ALL_DTYPES)
def test_numpy_from_dlpack(ex, spec, np_dtype):
    if spec == "bfloat16":
        pytest.skip("numpy has no bfloat16 (torch test covers it)")
    buf = ex.allocate(9, spec)
    data = random_array(np_dtype, 9, np.random.default_rng(1))
    buf.from_numpy(data)
    arr = np.from_dlpack(buf)
    assert arr.dtype == np.dtype(np_dtype)
    assert pointer(arr) == buf.data_ptr
    np.testing.assert_array_equal(arr, data)
    assert buf._users == 1
    del arr
    gc.collect()
    assert buf._users == 0


@needs_torch
def test_torch_from_dlpack_shares_memory(ex):
    buf = ex.allocate(6, np.float32)
    buf.from_numpy(np.arange(6, dtype=np.float32))
    t = torch.from_dlpack(buf)
    assert t.data_ptr() == buf.data_ptr
    assert t.dtype == torch.float32 and t.shape == (6,)
    t[0] = 100.0  # torch -> hologram
    assert buf.to_numpy()[0] == 100.0
    buf.fill(2)  # hologram -> torch
    assert t.tolist() == [2.0] * 6
    assert buf._users == 1
    del t
    gc.collect()
    assert buf._users == 0  # deleter ran (exactly once: never negative)


@needs_torch
def test_torch_bfloat16_and_bool(ex):
    b = ex.allocate(2, hg.bfloat16)
    b.fill(1.5)
    t = torch.from_dlpack(b)
    assert t.dtype == torch.bfloat16 and t.tolist() == [1.5, 1.5]
    m = ex.allocate(3, bool)
    m.from_numpy(np.array([True, False, True]))
    assert torch.from_dlpack(m).tolist() == [True, False, True]


@needs_torch
def test_producer_deleted_first(ex):
    with hg.Executor("cpu") as e2:
        buf = e2.allocate(4, np.int64)
        buf.from_numpy(np.array([1, 2, 3, 4], np.int64))
        t = torch.from_dlpack(buf)
        del buf
    gc.collect()  # buffer object gone and executor closed: the capsule keeps the memory
    assert t.tolist() == [1, 2, 3, 4]
    t += 1
    assert t.tolist() == [2, 3, 4, 5]


def test_versioned_and_unversioned_capsules(ex):
    buf = ex.allocate(4, np.float32)
    cap = buf.__dlpack__(max_version=(1, 0))
    assert capsule_name(cap) == "dltensor_versioned"
    name, _, mt = open_capsule(cap)
    assert mt.version.major == 1 and mt.flags == 0
    t = mt.dl_tensor
    assert t.data == buf.data_ptr and t.ndim == 1 and t.shape[0] == 4 and t.strides[0] == 1
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (2, 32, 1)
    assert (t.device.device_type, t.device.device_id) == (1, 0)
    for kwargs in ({}, {"max_version": None}, {"max_version": (0, 8)}):
        c = buf.__dlpack__(**kwargs)
        assert capsule_name(c) == "dltensor"
        _, _, m = open_capsule(c)
        assert m.dl_tensor.data == buf.data_ptr
        del c
    assert buf.__dlpack_device__() == (1, 0)
    del cap, mt, t
    gc.collect()
    assert buf._users == 0  # unconsumed capsules call the deleter from their destructor


@pytest.mark.parametrize("max_version", [(1, 1), None])
def test_deleter_called_exactly_once_by_consumer(ex, max_version):
    buf = ex.allocate(3, np.float32)
    cap = buf.__dlpack__(max_version=max_version)
    assert buf._users == 1
    mt, call_deleter = consume(cap)
    buf.free()
    assert buf._memory_alive  # the consumer still owns an export
    del cap
    gc.collect()
    assert buf._users == 1  # a consumed capsule's destructor does not call the deleter
    call_deleter()
    assert buf._users == 0
    assert not buf._memory_alive  # freed + last export gone


def test_dlpack_arguments(ex):
    buf = ex.allocate(2)
    with pytest.raises(ValueError, match="stream"):
        buf.__dlpack__(stream=5)
    assert capsule_name(buf.__dlpack__(stream=-1)) == "dltensor"
    with pytest.raises(BufferError):
        buf.__dlpack__(dl_device=(2, 0))
    assert capsule_name(buf.__dlpack__(dl_device=(1, 0), max_version=(1, 1))) == \
        "dltensor_versioned"
    with pytest.raises(TypeError):
        buf.__dlpack__(bogus=1)
    buf.fill(4)
    cap = buf.__dlpack__(copy=True, max_version=(1, 1))
    _, _, mt = open_capsule(cap)
    assert mt.flags & 2  # IS_COPIED
    assert mt.dl_tensor.data != buf.data_ptr
    copy = np.from_dlpack(type("P", (), {"__dlpack__": lambda self, **k: buf.__dlpack__(copy=True, **k),
                                         "__dlpack_device__": lambda self: (1, 0)})())
    assert copy.tolist() == [4.0, 4.0]
    assert pointer(copy) != buf.data_ptr


# --- import: from_dlpack / asarray (Tensors over the producer's memory) ---------------------------
def test_from_dlpack_numpy_zero_copy():
    arr = np.arange(10, dtype=np.float64)
    refs = sys.getrefcount(arr)
    t = hg.from_dlpack(arr)
    assert isinstance(t, hg.Tensor)
    assert t.data_ptr == pointer(arr) and t.size == 10 and t.dtype == np.float64
    assert t.shape == (10,)
    assert sys.getrefcount(arr) > refs  # the capsule's manager holds the array
    t.fill(1)
    assert (arr == 1).all()
    arr[2] = 5
    assert t.to_numpy()[2] == 5
    t.buffer.free()
    del t
    gc.collect()
    assert sys.getrefcount(arr) == refs  # deleter ran once: reference given back, not more


def test_from_dlpack_numpy_deleted_first():
    arr = np.arange(6, dtype=np.int32)
    t = hg.from_dlpack(arr)
    del arr
    gc.collect()
    assert t.to_numpy().tolist() == list(range(6))


@needs_torch
def test_from_dlpack_torch_both_orders():
    t = torch.arange(8, dtype=torch.float32)
    h = hg.from_dlpack(t)
    assert h.data_ptr == t.data_ptr()
    t[1] = 50
    assert h.to_numpy()[1] == 50
    h.fill(3)
    assert t.tolist() == [3.0] * 8
    del t
    gc.collect()
    assert h.to_numpy().tolist() == [3.0] * 8  # producer deleted first
    t2 = torch.ones(4, dtype=torch.int16)
    h2 = hg.from_dlpack(t2)
    del h2
    gc.collect()
    assert t2.tolist() == [1, 1, 1, 1]  # consumer deleted first


def test_from_dlpack_hologram_counts_deleter(ex):
    src = ex.allocate(5, np.int8)
    src.fill(3)
    t = hg.from_dlpack(src, executor=ex)
    assert src._users == 1 and t.data_ptr == src.data_ptr
    t.buffer.free()
    assert src._users == 0


@needs_torch
def test_from_dlpack_torch_2d_and_bf16():
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    h = hg.from_dlpack(t)
    assert h.shape == (2, 3) and h.to_numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    tb = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    b = hg.from_dlpack(tb)
    assert b.dtype_name == "bf16" and b.numpy().view(np.uint16).tolist() == [0x3FC0, 0xC000]
    assert b.astype("float32").tolist() == [1.5, -2.0]


@needs_torch
def test_from_dlpack_strided_views_without_copy():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    h = hg.from_dlpack(t)
    assert h.shape == (4, 3) and h.strides == (1, 4) and h.data_ptr == t.data_ptr()
    assert h.to_numpy().tolist() == t.tolist()
    t[1, 2] = -7   # shared memory: visible through the strided view
    assert h[1, 2].item() == -7
    a = np.arange(10.0)
    v = hg.from_dlpack(a[::2])
    assert v.strides == (2,) and v.tolist() == [0, 2, 4, 6, 8]
    v[1] = 42
    assert a[2] == 42
    r = hg.from_dlpack(a[::-1])
    assert r.strides == (-1,) and r.tolist() == a[::-1].tolist()


def test_from_dlpack_errors():
    with pytest.raises(TypeError, match="DLPack"):
        hg.from_dlpack([1, 2, 3])
    with pytest.raises(hg.UnsupportedError, match="dtype"):
        hg.from_dlpack(np.zeros(2, np.complex64))


def test_from_dlpack_readonly_numpy():
    arr = np.arange(4, dtype=np.float32)
    arr.flags.writeable = False
    try:
        arr.__dlpack__(max_version=(1, 0))
    except (BufferError, TypeError):
        pytest.skip("this numpy cannot export read-only arrays (needs numpy >= 2.1)")
    t = hg.from_dlpack(arr)
    assert t.readonly
    with pytest.raises(hg.InvalidArgumentError, match="read-only"):
        t.fill(1)
    with pytest.raises(ValueError, match="read-only"):
        t[0] = 1
    assert t.to_numpy().tolist() == [0, 1, 2, 3]
    assert not t.to_numpy().flags.writeable


def test_asarray_view_and_copy():
    arr = np.arange(5, dtype=np.uint32)
    view = hg.asarray(arr, copy=False)
    assert view.data_ptr == pointer(arr)
    view.fill(8)
    assert arr.tolist() == [8] * 5
    copy = hg.asarray(arr, copy=True)
    assert copy.data_ptr != pointer(arr) and copy.to_numpy().tolist() == [8] * 5
    strided = np.arange(10.0)[::2]
    sv = hg.asarray(strided, copy=False)   # strided: still a view (through DLPack)
    assert sv.data_ptr == pointer(strided) and sv.tolist() == [0, 2, 4, 6, 8]
    assert hg.asarray([1.0, 2.0], dtype=np.float32).dtype == np.float32
    lst = hg.asarray([1, 2, 3])  # no buffer protocol: copied (copy=None)
    assert lst.dtype == np.int64 and lst.to_numpy().tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="without copying"):
        hg.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="without copying"):
        hg.asarray(np.arange(3.0), dtype=np.float32, copy=False)
    m = np.arange(6, dtype=np.int16).reshape(2, 3)
    mt = hg.asarray(m)
    assert mt.shape == (2, 3) and mt.data_ptr == pointer(m)


def test_asarray_keeps_producer_alive():
    arr = np.arange(4, dtype=np.int64)
    t = hg.asarray(arr)
    del arr
    gc.collect()
    assert t.to_numpy().tolist() == [0, 1, 2, 3]
    # The view holds a reference to its producer while it lives, and gives it back after:
    # the count is taken from the same array before, during and after.
    arr2 = np.ones(3)
    before = sys.getrefcount(arr2)
    t2 = hg.asarray(arr2)
    assert sys.getrefcount(arr2) > before
    del t2
    gc.collect()
    assert sys.getrefcount(arr2) == before


def test_from_dlpack_and_asarray_empty():
    assert hg.from_dlpack(np.empty(0, np.float32)).size == 0
    assert hg.asarray(np.empty(0, np.int8)).size == 0
    if torch is not None:
        b = hg.from_dlpack(torch.empty(0))
        assert b.size == 0 and b.to_numpy().shape == (0,)
        e = hg.from_dlpack(torch.empty(3, 0))
        assert e.size == 0 and e.shape == (3, 0)


def test_from_dlpack_0d():
    b = hg.from_dlpack(np.array(7.5))
    assert b.size == 1 and b.shape == () and b.item() == 7.5
