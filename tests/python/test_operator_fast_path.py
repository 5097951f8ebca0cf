"""Tensor operators on small operands (`x + y`, `x * 0.5`, `2.0 - x`) take a short path straight
to the library; their results must equal numpy's on every operator, both operand orders, mixed
dtypes, broadcasting, 0-d and empty tensors, specials, and errors must be the same as before."""
import operator

import numpy as np
import pytest

import hologram as hg

RNG = np.random.default_rng(21)
OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]


def data(shape, dt):
    x = RNG.standard_normal(shape).astype(dt)
    if x.size >= 4:
        x.flat[:4] = [0.0, -0.0, np.inf, np.nan]
    return x


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((1,), (1,)), ((7,), (7,)), ((3, 4), (4,)), ((), ()),
                                    ((0,), (0,)), ((2, 1), (1, 5))])
def test_tensor_tensor_matches_numpy(op, shapes):
    a, b = data(shapes[0], np.float32), np.abs(data(shapes[1], np.float32)) + 0.5
    with np.errstate(all="ignore"):
        want = op(a, b)
        got = op(hg.asarray(a), hg.asarray(b))
    assert got.shape == want.shape and got.dtype_name == "f32"
    np.testing.assert_allclose(got.numpy(), want, rtol=3e-6, atol=1e-30, equal_nan=True)


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("s", [0.5, -2.0, 0.0, float("inf")])
def test_tensor_float_both_orders(op, s):
    a = np.abs(data((9,), np.float32)) + 0.25
    ha = hg.asarray(a)
    with np.errstate(all="ignore"):
        for got, want in ((op(ha, s), op(a, np.float32(s))), (op(s, ha), op(np.float32(s), a))):
            assert got.dtype_name == "f32"
            np.testing.assert_allclose(got.numpy(), want, rtol=3e-6, atol=1e-30, equal_nan=True)


def test_mixed_dtypes_promote_as_numpy():
    a = np.arange(5, dtype=np.int32)
    b = np.linspace(-1, 1, 5).astype(np.float64)
    got = hg.asarray(a) + hg.asarray(b)
    assert got.dtype_name == "f64"
    np.testing.assert_array_equal(got.numpy(), a + b)
    got = hg.asarray(a) * 0.5                       # int tensor and a Python float: f64, as numpy
    assert got.numpy().dtype == (a * 0.5).dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), a * 0.5)


def test_errors_as_before():
    x = hg.asarray(np.ones(3, np.float32))
    with pytest.raises(hg.HologramError):
        x + hg.asarray(np.ones(4, np.float32))      # shapes that do not broadcast
    y = hg.asarray(np.ones(3, np.float32))
    y.buffer.free()
    with pytest.raises(hg.HologramError, match="free"):
        x + y
    with pytest.raises(hg.HologramError, match="free"):
        y * 0.5


# Results of small ops leave their library buffer to the executor when freed, and the next
# `x op y` of that dtype and size computes into it (hgpy_spare): every value must still be the
# op's own, whatever buffer came back, and a buffer someone still views is never reused.
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
def test_reused_result_buffers_hold_each_calls_values(dt):
    ex = hg.Executor("cpu", num_threads=1)
    a = [data((3, 5), dt) for _ in range(6)]
    h = [hg.asarray(x, executor=ex) for x in a]
    prev = None
    for i in range(40):
        j, k = i % 6, (i * 5 + 1) % 6
        op = OPS[i % 4]
        with np.errstate(all="ignore"):
            got = op(h[j], h[k]) if i % 3 else op(h[j], 1.5)
            want = op(a[j], a[k]) if i % 3 else op(a[j], dt(1.5))
        assert got.shape == (3, 5) and got.numpy().dtype == dt
        np.testing.assert_array_equal(got.numpy(), want)
        if i % 7 == 0:
            del prev                                # several results alive, then freed together
        prev = got
    ex.close()


def test_reused_result_buffers_spare_what_is_still_viewed():
    ex = hg.Executor("cpu", num_threads=1)
    x = hg.asarray(np.arange(8, dtype=np.float32), executor=ex)
    z = x + x
    view = z.numpy()                                # numpy's view keeps z's memory alive
    kept = np.from_dlpack(x * 3.0)                  # and numpy's DLPack import of a result
    del z
    zs = [x * float(i) for i in range(1, 9)]        # spares come from elsewhere, never z's
    np.testing.assert_array_equal(view, np.arange(8, dtype=np.float32) * 2)
    np.testing.assert_array_equal(kept, np.arange(8, dtype=np.float32) * 3)
    for i, t in enumerate(zs, 1):
        np.testing.assert_array_equal(t.numpy(), np.arange(8, dtype=np.float32) * i)
    del zs
    z2 = x - x                                      # a spare after results died: zeros
    np.testing.assert_array_equal(z2.numpy(), np.zeros(8, np.float32))
    ex.close()


def test_reused_result_buffers_and_errors_and_close():
    ex = hg.Executor("cpu", num_threads=1)
    x = hg.asarray(np.ones(4, np.float32), executor=ex)
    z = x + x
    del z                                           # a spare of 4 f32
    with pytest.raises(hg.HologramError):
        x + hg.asarray(np.ones(4, np.float32), executor=hg.Executor("cpu", num_threads=1))
    np.testing.assert_array_equal((x + x).numpy(), np.full(4, 2, np.float32))
    w = x * 2.0
    del w
    ex.close()                                      # spares go with the executor
    with pytest.raises(hg.HologramError):
        x + x
