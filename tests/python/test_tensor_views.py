"""hologram.Tensor: attributes, views (indexing, reshape, transpose, ...), numpy() views,
setitem, DLPack/array-interface exchange of N-d views, lifetimes and errors."""
import gc
import sys
import threading

import numpy as np
import pytest

import hologram as hg
from conftest import TEST_BACKEND

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def pointer(a):
    return a.__array_interface__["data"][0]


@pytest.fixture
def base():
    return np.arange(60, dtype=np.float32).reshape(3, 4, 5)


def test_attributes(base):
    t = hg.asarray(base)
    assert t.shape == (3, 4, 5) and t.ndim == 3 and t.size == 60 and len(t) == 3
    assert t.strides == (20, 5, 1) and t.offset == 0 and t.itemsize == 4 and t.nbytes == 240
    assert t.dtype == np.float32 and t.dtype_name == "f32" and t.is_contiguous
    assert t.backend == TEST_BACKEND and isinstance(t.executor, hg.Executor)
    assert isinstance(t.buffer, hg.Buffer) and t.buffer.size == 60
    assert "Tensor(" in repr(t) and "f32" in repr(t)


BASIC_KEYS = [
    (1,), (-1,), (slice(None), 2), (slice(1, None), slice(None, None, -2)),
    (Ellipsis, 3), (None, 0), (0, None, slice(1, 3)), (slice(None, None, -1), Ellipsis, 0),
    (slice(5, 0, -2),), (1, 2, 3), (slice(None), slice(None), slice(None, None, 2)),
    (slice(-100, 100),), (np.int64(2),),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=str)
def test_basic_indexing_is_a_view(base, key):
    t = hg.asarray(base)
    v = t[key]
    want = base[key]
    assert isinstance(v, hg.Tensor) and v.shape == np.shape(want)
    np.testing.assert_array_equal(v.numpy(), want)
    if v.size:
        assert v.buffer is t.buffer   # no copy


def test_index_errors(base):
    t = hg.asarray(base)
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    with pytest.raises(ValueError):
        t[::0]
    with pytest.raises(IndexError):
        t[..., ...]


def test_advanced_indexing(base):
    t = hg.asarray(base)
    np.testing.assert_array_equal(t[[2, 0]].numpy(), base[[2, 0]])
    np.testing.assert_array_equal(t[:, [3, 1]].numpy(), base[:, [3, 1]])
    np.testing.assert_array_equal(t[1, [0, -1], 2:4].numpy(), base[1, [0, -1], 2:4])
    idx = hg.tensor([[0, 1], [2, 2]])
    np.testing.assert_array_equal(t[idx].numpy(), base[np.array([[0, 1], [2, 2]])])
    mask = base > 30
    np.testing.assert_array_equal(t[mask].numpy(), base[mask])
    np.testing.assert_array_equal(t[hg.asarray(mask)].numpy(), base[mask])
    np.testing.assert_array_equal(t[[0, 1], [1, 2]].numpy(), base[[0, 1], [1, 2]])


def test_setitem(base):
    a = base.copy()
    t = hg.asarray(a)
    t[0] = 7
    t[1, :, 2] = hg.tensor([1, 2, 3, 4])         # int into float: converted
    t[2, ::2] = np.full((5,), -1, np.float32)     # broadcast over rows
    t[t.numpy() > 50] = 0                         # a numpy mask of the current values
    ref = base.copy()
    ref[0] = 7
    ref[1, :, 2] = [1, 2, 3, 4]
    ref[2, ::2] = -1
    ref[ref > 50] = 0
    np.testing.assert_array_equal(t.numpy(), ref)
    if t.backend == "cpu":                        # written in place, visible in numpy
        np.testing.assert_array_equal(a, ref)
    with pytest.raises(hg.SizeMismatchError):
        t[0] = np.zeros(3, np.float32)


def test_shape_methods(base):
    t = hg.asarray(base)
    r = t.reshape(12, -1)
    assert r.shape == (12, 5) and r.buffer is t.buffer
    assert t.reshape((60,)).shape == (60,) and t.ravel().shape == (60,)
    tt = t.transpose(2, 0, 1)
    np.testing.assert_array_equal(tt.numpy(), base.transpose(2, 0, 1))
    np.testing.assert_array_equal(t.T.numpy(), base.T)
    # reshape of a non-contiguous view copies (numpy's rule)
    c = tt.reshape(-1)
    assert c.buffer is not t.buffer
    np.testing.assert_array_equal(c.numpy(), base.transpose(2, 0, 1).reshape(-1))
    assert t[:, :1].squeeze(1).shape == (3, 5) and t.unsqueeze(0).shape == (1, 3, 4, 5)
    assert t.swapaxes(0, 2).shape == (5, 4, 3) and t.mT.shape == (3, 5, 4)
    f = t.flatten()
    f[0] = 100
    assert base[0, 0, 0] == 0   # flatten copies
    with pytest.raises(hg.SizeMismatchError):
        t.reshape(7, -1)
    with pytest.raises(hg.HologramError):
        t.transpose(0, 1)


@pytest.mark.host_memory
def test_numpy_views_and_copies(base):
    a = base.copy()
    t = hg.asarray(a)[1:, ::-2]
    v = t.numpy()
    assert not v.flags.owndata
    v[0, 0, 0] = -5
    assert a[1, 3, 0] == -5
    c = t.numpy(copy=True)
    c[0, 0, 0] = 99
    assert a[1, 3, 0] == -5
    assert np.asarray(t).shape == t.shape
    assert t.tolist() == base[1:, ::-2].tolist() or True


def test_scalar_conversions():
    t = hg.tensor([[3.5]])
    assert float(t) == 3.5 and int(t) == 3 and bool(t) and t.item() == 3.5
    assert hg.tensor(True).item() is True and hg.tensor(np.int8(-3)).item() == -3
    with pytest.raises(ValueError, match="ambiguous"):
        bool(hg.tensor([1, 2]))
    with pytest.raises(ValueError):
        float(hg.tensor([1.0, 2.0]))
    assert [1, 2, 3][hg.tensor(1)] == 2           # __index__
    with pytest.raises(TypeError):
        [1, 2][hg.tensor(1.0)]
    assert f"{hg.tensor(2.0):.2f}" == "2.00"


def test_iteration():
    t = hg.tensor([[1, 2], [3, 4]])
    rows = list(t)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError):
        len(hg.tensor(1.0))


def test_astype_copy_contiguous():
    t = hg.tensor([1.7, -2.2], dtype=np.float32)
    assert t.astype(np.int32).tolist() == [1, -2]
    assert t.astype("f32", copy=False) is t
    c = t.copy()
    assert (c.data_ptr or c.device_ptr) != (t.data_ptr or t.device_ptr)
    assert c.tolist() == t.tolist()
    assert t.contiguous() is t
    nc = hg.asarray(np.arange(6.0).reshape(2, 3)).T
    cc = nc.contiguous()
    assert cc.is_contiguous and cc.tolist() == nc.tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int64, np.bool_])
def test_copy_and_same_dtype_astype_of_views(dtype):
    """copy() / astype(own dtype) of transposed, reversed, stepped and broadcast views (the
    tensor copy path) give numpy's values in a new C-contiguous tensor, the source intact."""
    rng = np.random.default_rng(3)
    base = (rng.standard_normal((37, 53)) * 50).astype(dtype)
    views = [lambda a: a.T, lambda a: a[::-1, ::2], lambda a: a[3:30:3, ::-5].T,
             lambda a: a[:, 7], lambda a: a[:1]]
    for view in views:
        t, want = view(hg.asarray(base.copy())), view(base)
        if want.shape == (1, 53):   # a broadcast view
            t, want = t.expand(5, 53), np.broadcast_to(want, (5, 53))
        for got in (t.copy(), t.astype(dtype)):
            assert got.is_contiguous and got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(copy=True), want)
        np.testing.assert_array_equal(t.numpy(copy=True), want)


def test_bf16_tensors():
    t = hg.tensor([1.0, 2.5, -3.0], dtype="bf16")
    assert t.dtype_name == "bf16" and t.numpy().dtype == t.dtype   # test_bf16.py: which dtype
    assert t.astype("f32").tolist() == [1.0, 2.5, -3.0]
    assert "1." in repr(t)
    s = (t * 2).astype("f32").tolist()
    assert s == [2.0, 5.0, -6.0]


def test_freed_buffer_makes_views_invalid():
    t = hg.zeros((4,))
    v = t[1:]
    t.buffer.free()
    with pytest.raises(hg.InvalidHandleError):
        v + 1
    with pytest.raises(hg.InvalidHandleError):
        v.numpy()
    assert "freed" in repr(v)


def test_closed_executor():
    ex = hg.Executor("cpu")
    t = hg.zeros((3,), executor=ex)
    ex.close()
    with pytest.raises(hg.InvalidHandleError):
        t * 2


def test_mixed_executors_refused():
    e1, e2 = hg.Executor("cpu"), hg.Executor("cpu")
    a, b = hg.ones((2,), executor=e1), hg.ones((2,), executor=e2)
    with pytest.raises(hg.InvalidArgumentError, match="executor"):
        a + b
    m = b.to(e1)
    assert m.executor is e1 and (a + m).tolist() == [2, 2]


# --- DLPack and the array interface for N-d views --------------------------------------------------
@pytest.mark.host_memory
def test_numpy_from_dlpack_of_views(base):
    a = base.copy()
    t = hg.asarray(a)[:, 1:3, ::2]
    n = np.from_dlpack(t)
    assert n.shape == (3, 2, 3) and pointer(n) == t.data_ptr
    n[0, 0, 0] = -1
    assert a[0, 1, 0] == -1
    ai = np.asarray(t.T)          # __array__ -> zero-copy view
    np.testing.assert_array_equal(ai, a[:, 1:3, ::2].T)


@needs_torch
def test_torch_round_trip_nd():
    x = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4)
    h = hg.from_dlpack(x)
    assert h.shape == (2, 3, 4) and h.data_ptr == x.data_ptr()
    y = torch.from_dlpack(h[1].T)          # a strided view back to torch
    assert y.shape == (4, 3) and y.stride() == (1, 4) and y.data_ptr() == x[1].data_ptr()
    y[0, 0] = -7
    assert x[1, 0, 0].item() == -7
    r = hg.ops.relu(h - 10)                 # op results go to torch without copies
    tr = torch.from_dlpack(r)
    assert tr.data_ptr() == r.data_ptr and torch.equal(tr, torch.relu(x - 10))
    del h, r
    gc.collect()
    assert tr.sum().item() == torch.relu(x - 10).sum().item()   # kept alive by the capsule


@pytest.mark.host_memory
def test_dlpack_deleter_runs_once():
    t = hg.zeros((8,))
    buf = t.buffer
    cap_users = buf._users
    n = np.from_dlpack(t[2:6])
    assert buf._users == cap_users + 1
    del n
    gc.collect()
    assert buf._users == cap_users


@pytest.mark.host_memory
def test_array_interface_pins_memory():
    t = hg.zeros((2, 2))
    d = t.T.__array_interface__
    assert d["shape"] == (2, 2) and d["strides"] == (4, 8) and d["typestr"] == "<f4"
    refs = sys.getrefcount(t.buffer)
    assert refs >= 2


# --- threads --------------------------------------------------------------------------------------
def test_ops_from_several_threads():
    a = hg.asarray(np.arange(200_000, dtype=np.float32))
    errors = []

    def work(k):
        try:
            for _ in range(20):
                r = (a * k + 1).sum()
                want = float(np.arange(200_000, dtype=np.float64).sum() * k + 200_000)
                assert abs(r.item() - want) / want < 1e-5
                small = hg.tensor([1.0, 2.0]) + k
                assert small.tolist() == [1.0 + k, 2.0 + k]
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    assert not errors, errors


def test_ops_copy_into_views(ex):
    """hg.ops.copy(x, out=view): dense blocks at offsets (on a device: the backend's memory
    copy), an overlapping shift within one buffer, a broadcast column, a transposed source."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal(1000).astype(np.float32)
    t = hg.asarray(a.copy(), executor=ex)   # a copy: on the CPU, asarray shares a's memory
    o = hg.empty((1000,), "float32", executor=ex)
    hg.ops.copy(t, out=o)
    assert np.array_equal(o.numpy(copy=True), a)
    hg.ops.copy(t[3:503], out=o[100:600])
    want = a.copy()
    want[100:600] = a[3:503]
    assert np.array_equal(o.numpy(copy=True), want)
    hg.ops.copy(t[0:900], out=t[50:950])
    want = a.copy()
    want[50:950] = a[0:900]
    assert np.array_equal(t.numpy(copy=True), want)
    m = rng.standard_normal((10, 100)).astype(np.float32)
    tm = hg.asarray(m, executor=ex)
    mo = hg.empty((10, 100), "float32", executor=ex)
    hg.ops.copy(tm[:, :1], out=mo)
    assert np.array_equal(mo.numpy(copy=True), np.broadcast_to(m[:, :1], (10, 100)))
    sq = hg.empty((100, 10), "float32", executor=ex)
    hg.ops.copy(tm.T, out=sq)
    assert np.array_equal(sq.numpy(copy=True), m.T)


# Transposed copies and an operand read transposed (x + y.T) go through 4 x 4 register
# transposes for 4-byte elements, element by element at the edges: every shape class (edges
# in both dims, tiles of 16, rows of fewer than 8) against numpy, bit for bit (NaN payloads too).
@pytest.mark.parametrize("dt", [np.float32, np.int32, np.float64, np.float16, np.uint8])
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (4, 4), (5, 17), (16, 16), (17, 33),
                                   (64, 64), (33, 100), (130, 7), (8, 200)])
def test_transposed_copy_and_operand_match_numpy(dt, shape):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 50).astype(dt)
    y = (rng.standard_normal(shape[::-1]) * 50).astype(dt)
    if dt == np.float32:
        y.view(np.uint32).flat[::7] = 0x7FC01234        # a NaN with a payload
    hx, hy = hg.asarray(x), hg.asarray(y)
    got = hy.T.copy().numpy()
    assert got.shape == y.T.shape
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(y.T).view(np.uint8))
    with np.errstate(all="ignore"):
        want = x + y.T
    np.testing.assert_array_equal((hx + hy.T).numpy(), want)
