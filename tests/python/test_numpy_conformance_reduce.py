"""numpy conformance of the reductions (hologram.ops, the top level and the Tensor methods):
random shapes (0-d, empty dims) and views, every dtype, axis None / int / tuple (negative,
repeated, out of range, () ) and keepdims, ddof for var/std, dtype= for the methods. Compared
with numpy: raise or not, dtype, shape, values (exact for integers and bool; floats within the
rounding a sum of n terms may differ by)."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hologram as hg
from conformance_helpers import (assert_conforms, eps, is_float, np_dtype, settings_n,
                                 view_pairs)

REDUCTIONS = ("sum", "mean", "prod", "min", "max", "amin", "amax", "argmin", "argmax", "var",
              "std", "any", "all")
#: the numpy-named functions and methods this module covers
COVERED_OPS = REDUCTIONS
COVERED_METHODS = REDUCTIONS


@st.composite
def axes(draw, ndim):
    """None, an int (in range or one past either end), or a tuple (maybe repeated or out of
    range, maybe empty)."""
    one = st.integers(-ndim - 1, ndim)
    return draw(st.one_of(st.none(), one, st.lists(one, max_size=3).map(tuple)))


def _tolerance(name, xn):
    """(ulps, absolute ulps): a sum of n terms may round differently by about n ulps of the
    largest magnitude; products and the extremes are exactly rounded (or exact)."""
    n = max(xn.size, 1)
    if name in ("min", "max", "amin", "amax", "argmin", "argmax", "any", "all"):
        return 0, 0
    if name == "prod":
        return 4 * n, 0
    finite = np.abs(xn[np.isfinite(xn)].astype(np.float64)) if is_float(xn.dtype) else \
        np.abs(xn.astype(np.float64))
    big = float(finite.max()) if finite.size else 1.0
    scale = max(big, 1.0) ** (2 if name == "var" else 1)
    return 4 * n, 4 * n * scale


@pytest.mark.parametrize("name", REDUCTIONS)
@settings_n(40)
@given(data=st.data(), keepdims=st.booleans(), ddof=st.sampled_from([0, 1, 2]))
def test_reduction_functions(name, data, keepdims, ddof):
    xn, xh, dt = data.draw(view_pairs())
    axis = data.draw(axes(xn.ndim))
    kw = {"axis": axis, "keepdims": keepdims}
    if name in ("var", "std"):
        kw["ddof"] = ddof
    ulps, atol = _tolerance(name, xn.astype(np.float32) if dt == "bfloat16" else xn)
    assert_conforms(lambda x: getattr(np, name)(x, **kw), lambda x: getattr(hg.ops, name)(x, **kw),
                    (xn,), (xh,), ulps, atol)


@pytest.mark.parametrize("name", REDUCTIONS)
@settings_n(25)
@given(data=st.data(), keepdims=st.booleans(), use_dtype=st.booleans())
def test_reduction_methods(name, data, keepdims, use_dtype):
    """ndarray.sum(...) against Tensor.sum(...), with dtype= where numpy's method takes it."""
    xn, xh, dt = data.draw(view_pairs())
    axis = data.draw(axes(xn.ndim))
    if name in ("argmin", "argmax") and isinstance(axis, tuple):
        axis = None if not axis else axis[0]
    kw = {"axis": axis, "keepdims": keepdims}
    if use_dtype and name in ("sum", "mean", "prod", "var", "std"):
        kw["dtype"] = data.draw(st.sampled_from(["float64", "float32", "int64"]))
        if kw["dtype"] == "int64" and name in ("mean", "var", "std"):
            kw["dtype"] = "float64"
    ulps, atol = _tolerance(name, xn.astype(np.float32) if dt == "bfloat16" else xn)
    # ndarray has no amin/amax methods: numpy's functions; dtype= names the result's dtype
    np_fn = (lambda x: getattr(np, name)(x, **kw)) if name in ("amin", "amax") else \
        (lambda x: getattr(x, name)(**kw))
    assert_conforms(np_fn, lambda x: getattr(x, name)(**kw), (xn,), (xh,), ulps, atol,
                    dtype_of=(lambda d: d) if "dtype" in kw else None)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [0, -1, None, (), 1, -2, (0,), (-1,), (0, 0)])
def test_zero_d_axes(name, axis):
    """numpy takes an int axis 0 / -1 on a 0-d array for its ufunc reductions (sum, prod, min,
    max, any, all, argmin, argmax), axis=() and None everywhere, and refuses a tuple (0,), any
    other int and, for argmin/argmax, any tuple."""
    x = np.array(2.5, np.float32)
    assert_conforms(lambda a: getattr(np, name)(a, axis=axis),
                    lambda a: getattr(hg.ops, name)(a, axis=axis), (x,), (hg.asarray(x),))


def test_top_level_reductions_are_the_ops():
    for name in REDUCTIONS:
        assert getattr(hg, name) is getattr(hg.ops, name), name


def test_sum_tolerance_is_meaningful():
    """The tolerance above is n ulps of the largest term: a value off by 1 % fails it."""
    x = np.arange(1, 9, dtype=np.float32)
    ulps, atol = _tolerance("sum", x)
    got = np.float32(x.sum() * 1.01)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(got, x.sum(), rtol=ulps * eps(x.dtype),
                                   atol=atol * eps(x.dtype))
    assert math.isclose(float(hg.sum(hg.asarray(x))), 36.0)
    assert np_dtype("float32") == np.float32
