"""Where numpy's behaviour is the contract at the edges: integers to negative integer powers
raise ValueError (tensor or scalar exponent, either side, the functions and the operators),
reductions without an identity (min, max, argmin, argmax) raise over an empty reduced axis even
when the result is empty too, and 0-d tensors take axis 0 / -1 where numpy does. Each case is
compared with numpy itself (same raise, or same values and dtype)."""
import numpy as np
import pytest

import hologram as hg


def both(fn, *arrays):
    """(numpy's outcome, hologram's): ('raise', exception type) or ('ok', array)."""
    out = []
    for conv in (np.asarray, hg.asarray):
        try:
            r = fn(*[conv(a) for a in arrays])
            out.append(("ok", r.numpy(copy=True) if isinstance(r, hg.Tensor) else np.asarray(r)))
        except Exception as e:   # noqa: BLE001 (the outcome is what is compared)
            out.append(("raise", e))
    return out


def assert_same(fn, *arrays, exc=None):
    (nk, nv), (hk, hv) = both(fn, *arrays)
    assert nk == hk, f"numpy {nk} {nv!r}, hologram {hk} {hv!r}"
    if nk == "raise":
        assert isinstance(hv, exc or type(nv)), f"hologram raised {type(hv)}, numpy {type(nv)}"
    else:
        assert hv.dtype == nv.dtype and hv.shape == nv.shape
        if hv.dtype.kind == "f":   # pow is not correctly rounded in either: an ulp apart
            np.testing.assert_allclose(hv, nv, rtol=4e-16)
        else:
            np.testing.assert_array_equal(hv, nv)


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64"])
def test_integer_power_with_negative_exponents_raises(dt):
    x = np.array([2, 3, -1, 1, 0], dt)
    neg = np.array([1, -1, 2, 0, 3], dt)
    pos = np.array([1, 2, 3, 0, 1], dt)
    assert_same(lambda a, b: np.power(a, b) if isinstance(a, np.ndarray) else hg.power(a, b),
                x, neg)
    assert_same(lambda a, b: a ** b, x, neg)
    assert_same(lambda a: a ** -1, x)
    assert_same(lambda a: a ** -2, x)
    assert_same(lambda a, b: 2 ** b, x, neg)
    assert_same(lambda a, b: a ** b, x, pos)          # non-negative: values as numpy
    assert_same(lambda a: a ** 3, x)
    assert_same(lambda a, b: a ** b, x, pos.astype("uint8"))
    assert_same(lambda a: a ** 0.5, np.abs(x))        # a float exponent: a float result
    with pytest.raises(ValueError, match="negative integer powers"):
        hg.power(hg.asarray(x), -1)
    # nothing written into an out= tensor on the refusal
    out = hg.asarray(np.full(5, 7, dt))
    with pytest.raises(ValueError):
        hg.power(hg.asarray(x), hg.asarray(neg), out=out)
    np.testing.assert_array_equal(out.numpy(copy=True), np.full(5, 7, dt))


@pytest.mark.parametrize("name", ["min", "max", "argmin", "argmax", "amin", "amax"])
@pytest.mark.parametrize("shape,axis", [((0, 0), 0), ((0, 0), 1), ((0, 3), 0), ((0, 3), None),
                                        ((3, 0), 1), ((2, 0, 3), 1), ((0, 3), 1), ((2, 0), 0)])
def test_reductions_without_identity_over_empty_axes(name, shape, axis):
    """numpy raises ValueError whenever the reduced axis is empty (also when the result is
    empty); over a non-empty axis of an empty array it returns an empty result."""
    a = np.zeros(shape, np.float32)
    assert_same(lambda x: getattr(np if isinstance(x, np.ndarray) else hg, name)(x, axis=axis),
                a, exc=ValueError)


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "argmin", "argmax"])
@pytest.mark.parametrize("axis", [0, -1, None])
def test_zero_d_tensors_take_axis_0_and_minus_1(name, axis):
    a = np.array(2.5, np.float32)
    assert_same(lambda x: getattr(np if isinstance(x, np.ndarray) else hg, name)(x, axis=axis), a)
