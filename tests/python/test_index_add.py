"""hg.index_add and hg.scatter_add (torch's index_add_ / scatter_add_, numpy's add.at): in-place
accumulation against numpy's add.at on random data with repeated and negative indices, every
axis, strided views, each dtype the backend adds (devices: atomic adds), and bad input that
leaves out untouched. Runs on the test backend (HG_TEST_BACKEND: CPU, or CUDA and its
emulation, where the adds are atomics)."""
import numpy as np
import pytest

import hologram as hg
from conftest import TEST_BACKEND

RNG = np.random.default_rng(5)
HOST_DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.int16]
DEVICE_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64]
DTYPES = HOST_DTYPES if TEST_BACKEND == "cpu" else DEVICE_DTYPES


def values(shape, dt):
    if np.issubdtype(dt, np.integer):
        return RNG.integers(0, 50, shape).astype(dt)
    return RNG.standard_normal(shape).astype(dt)


def ref_index_add(out, axis, idx, src):
    want = out.astype(np.float64) if out.dtype == np.float16 else out.copy()
    n = len(idx)
    for i in range(n):   # one add at a time, in order (numpy's add.at), rounded per dtype
        sl = [slice(None)] * out.ndim
        sl[axis] = idx[i]
        ss = [slice(None)] * out.ndim
        ss[axis] = i
        if out.dtype == np.float16:
            want[tuple(sl)] = (want[tuple(sl)].astype(np.float32) +
                               src[tuple(ss)].astype(np.float32)).astype(np.float16)
        else:
            want[tuple(sl)] += src[tuple(ss)]
    return want.astype(out.dtype)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,axis", [((6,), 0), ((5, 3), 0), ((5, 3), 1), ((4, 3, 6), 1),
                                        ((4, 3, 6), -1)])
def test_index_add_matches_numpy(ex, dt, shape, axis):
    out = values(shape, dt)
    ax = axis % len(shape)
    idx = RNG.integers(-shape[ax], shape[ax], 9)     # repeats and negative indices
    sshape = list(shape)
    sshape[ax] = len(idx)
    src = values(tuple(sshape), dt)
    h = hg.asarray(out.copy(), executor=ex)
    got = hg.index_add(h, axis, hg.asarray(idx, executor=ex), hg.asarray(src, executor=ex))
    assert got is h
    want = ref_index_add(out, ax, idx % shape[ax], src)
    if np.issubdtype(dt, np.floating) and TEST_BACKEND != "cpu":
        np.testing.assert_allclose(h.numpy(), want, rtol=1e-5, atol=1e-5)   # atomic order
    else:
        np.testing.assert_array_equal(h.numpy(), want)


@pytest.mark.parametrize("dt", [np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_index_add_strided_views_and_embedding_backward(ex, dt):
    table = values((8, 10), dt)
    h = hg.asarray(table.copy(), executor=ex)
    view = h[:, ::2]                                  # out: every other column
    idx = np.array([3, 0, 3, 7, 3])
    src = values((5, 10), dt)
    hs = hg.asarray(src, executor=ex)[:, 1::2]        # src: a strided view too
    hg.index_add(view, 0, hg.asarray(idx, executor=ex), hs)
    want = table.copy()
    np.add.at(want[:, ::2], (idx,), src[:, 1::2])
    np.testing.assert_array_equal(h.numpy(), want)
    # embedding's backward: the gradient rows summed into a zero table
    grad = hg.zeros((8, 4), dtype=np.dtype(dt).name, executor=ex)
    rows = values((6, 4), dt)
    ids = np.array([1, 1, 5, 0, 1, 5])
    hg.index_add(grad, 0, hg.asarray(ids, executor=ex), hg.asarray(rows, executor=ex))
    want = np.zeros((8, 4), dt)
    np.add.at(want, (ids,), rows)
    np.testing.assert_allclose(grad.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_add_matches_torch_semantics(ex, dt, axis):
    out = values((4, 5), dt)
    src = values((6, 7), dt)
    ishape = (6, 5) if axis == 0 else (4, 7)          # index larger than out along axis
    ax = axis % 2
    idx = RNG.integers(0, out.shape[ax], ishape)
    h = hg.asarray(out.copy(), executor=ex)
    hg.scatter_add(h, axis, hg.asarray(idx, executor=ex), hg.asarray(src, executor=ex))
    want = out.copy()
    for i in range(ishape[0]):
        for j in range(ishape[1]):
            pos = (idx[i, j], j) if ax == 0 else (i, idx[i, j])
            want[pos] += src[i, j]
    if np.issubdtype(dt, np.floating):
        np.testing.assert_allclose(h.numpy(), want, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(h.numpy(), want)


def test_bad_input_raises_and_leaves_out_untouched(ex):
    out = np.arange(12, dtype=np.float32).reshape(4, 3)
    h = hg.asarray(out.copy(), executor=ex)
    src = hg.asarray(np.ones((2, 3), np.float32), executor=ex)
    with pytest.raises(hg.OutOfRangeError, match="out of range"):
        hg.index_add(h, 0, hg.asarray(np.array([1, 4]), executor=ex), src)
    with pytest.raises(hg.HologramError, match="dtype"):
        hg.index_add(h, 0, hg.asarray(np.array([1, 2]), executor=ex),
                     hg.asarray(np.ones((2, 3), np.float64), executor=ex))
    with pytest.raises(hg.HologramError, match="shape"):
        hg.index_add(h, 0, hg.asarray(np.array([1, 2, 3]), executor=ex), src)
    with pytest.raises(hg.HologramError, match="1-D"):
        hg.index_add(h, 0, hg.asarray(np.array([[1, 2]]), executor=ex), src)
    with pytest.raises(hg.HologramError, match="integer"):
        hg.index_add(h, 0, hg.asarray(np.array([1.0, 2.0]), executor=ex), src)
    with pytest.raises(hg.HologramError, match="axis"):
        hg.index_add(h, 2, hg.asarray(np.array([1, 2]), executor=ex), src)
    with pytest.raises(hg.HologramError, match="index"):
        hg.scatter_add(h, 0, hg.asarray(np.zeros((5, 3), np.int64), executor=ex), src)
    with pytest.raises(hg.HologramError, match="bool"):
        hg.index_add(hg.asarray(np.zeros(3, bool), executor=ex), 0,
                     hg.asarray(np.array([0]), executor=ex),
                     hg.asarray(np.ones(1, bool), executor=ex))
    with pytest.raises(TypeError, match="out is required"):
        hg.index_add(None, 0, hg.asarray(np.array([0]), executor=ex), src)
    np.testing.assert_array_equal(h.numpy(), out)


@pytest.mark.skipif(TEST_BACKEND == "cpu", reason="the dtypes a device has no atomic add for")
def test_device_refuses_dtypes_without_atomic_add(ex):
    h = hg.asarray(np.zeros(4, np.float16), executor=ex)
    with pytest.raises(hg.HologramError, match="atomic add"):
        hg.index_add(h, 0, hg.asarray(np.array([0]), executor=ex),
                     hg.asarray(np.ones(1, np.float16), executor=ex))
