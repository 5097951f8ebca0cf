"""numpy conformance of the data-movement, shape, selection, linear-algebra and creation
functions (hologram.ops / the top level / Tensor methods of numpy's names): random shapes and
views, every dtype; results compared exactly (they move values), matmul/dot within the rounding
of a k-term sum."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hologram as hg
from conformance_helpers import (DTYPES, FLOATS, INTS, assert_conforms, make_view, settings_n,
                                 shapes, to_hg, values, view_pairs)

COVERED_OPS = ("where", "clip", "concatenate", "concat", "stack", "take", "take_along_axis",
               "copy", "astype", "matmul", "matvec")
COVERED_TOP = ("arange", "linspace", "zeros", "ones", "empty", "full", "zeros_like",
               "ones_like", "empty_like", "full_like", "asarray", "from_dlpack")
COVERED_METHODS = ("reshape", "ravel", "transpose", "swapaxes", "squeeze", "expand_dims",
                   "broadcast_to", "copy", "astype", "clip", "matmul", "dot", "exp", "log",
                   "sqrt", "round", "shape", "ndim", "size", "dtype")
small = st.integers(-2, 4)


@settings_n(60)
@given(v=view_pairs(), data=st.data())
def test_shape_methods(v, data):
    xn, xh, _ = v
    nd = xn.ndim
    axis = st.integers(-nd - 1, nd)
    case = data.draw(st.sampled_from(["reshape", "ravel", "transpose", "swapaxes", "squeeze",
                                      "expand_dims", "broadcast_to", "T", "copy", "props"]))
    if case == "reshape":
        new = tuple(data.draw(st.lists(st.sampled_from([-1, 0, 1, 2, 3, xn.size]), max_size=3)))
        fn = lambda x: x.reshape(new)   # noqa: E731
    elif case == "transpose":
        perm = data.draw(st.one_of(st.none(), st.permutations(range(nd)),
                                   st.lists(axis, min_size=nd, max_size=nd)))
        fn = (lambda x: x.transpose()) if perm is None else (lambda x: x.transpose(*perm))
    elif case == "swapaxes":
        a, b = data.draw(axis), data.draw(axis)
        fn = lambda x: x.swapaxes(a, b)   # noqa: E731
    elif case == "squeeze":
        ax = data.draw(st.one_of(st.none(), axis, st.lists(axis, max_size=2).map(tuple)))
        fn = lambda x: x.squeeze(axis=ax)   # noqa: E731
    elif case == "expand_dims":
        ax = data.draw(st.one_of(st.integers(-nd - 2, nd + 1),
                                 st.lists(st.integers(-nd - 2, nd + 1), max_size=2).map(tuple)))
        fn = lambda x: x.expand_dims(ax) if isinstance(x, hg.Tensor) \
            else np.expand_dims(x, ax)   # noqa: E731
    elif case == "broadcast_to":
        shape = data.draw(hnp.broadcastable_shapes(xn.shape, min_side=0, max_side=3) | shapes)
        fn = lambda x: x.broadcast_to(shape) if isinstance(x, hg.Tensor) \
            else np.broadcast_to(x, shape)   # noqa: E731
    elif case == "props":
        fn = lambda x: np.array([x.ndim, x.size, *x.shape, x.dtype.itemsize])   # noqa: E731
    else:
        fn = {"ravel": lambda x: x.ravel(), "T": lambda x: x.T, "copy": lambda x: x.copy()}[case]
    assert_conforms(fn, fn, (xn,), (xh,), exact=True)


@settings_n(40)
@given(v=view_pairs(), d2=st.sampled_from(DTYPES), method=st.booleans())
def test_astype(v, d2, method):
    """Exact conversions; floats to integers only for values in range (out of range, NaN:
    hologram saturates and gives 0 on purpose, where numpy's result is undefined)."""
    xn, xh, dt = v
    if dt in FLOATS and d2 in INTS:
        info = np.iinfo(d2)
        ok = np.isfinite(xn) & (xn >= info.min) & (xn <= min(info.max, 2**53))
        xn = np.where(ok, xn, 0).astype(xn.dtype)
        xh = to_hg(xn)
    if method:
        assert_conforms(lambda x: x.astype(d2 if d2 != "bfloat16" else np.float32),
                        lambda x: x.astype(d2), (xn,), (xh,), exact=True,
                        dtype_of=_bf16_target(d2))
    else:
        assert_conforms(lambda x: np.astype(x, d2 if d2 != "bfloat16" else np.float32),
                        lambda x: hg.ops.astype(x, d2), (xn,), (xh,), exact=True,
                        dtype_of=_bf16_target(d2))


def _bf16_target(d2):
    if d2 != "bfloat16":
        return None
    from conformance_helpers import BF16
    return lambda d: np.dtype(BF16)


def test_float_to_int_casts_saturate():
    """The deliberate difference (docs/python.md): out-of-range floats saturate, NaN gives 0."""
    x = hg.asarray(np.array([np.nan, -300.0, 300.0, np.inf], np.float32))
    assert x.astype("uint8").tolist() == [0, 0, 255, 255]
    assert x.astype("int8").tolist() == [0, -128, 127, 127]


@st.composite
def joinables(draw):
    n = draw(st.integers(1, 3))
    base = list(draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3)))
    axis = draw(st.integers(-len(base) - 1, len(base)))
    same = draw(st.booleans())
    out = []
    for _ in range(n):
        s = list(base)
        if not same and -len(s) <= axis < len(s):
            s[axis] = draw(st.integers(0, 3))
        if draw(st.integers(0, 9)) == 0:   # sometimes a wrong rank or size
            s = s[:-1] if draw(st.booleans()) else s + [2]
        out.append(make_view(draw(st.sampled_from(DTYPES)), s,
                             draw(st.sampled_from(["contig", "transposed", "reversed"])),
                             draw(st.integers(0, 2**31))))
    return out, draw(st.one_of(st.none(), st.just(axis))) if not same else axis


@pytest.mark.parametrize("name", ["concatenate", "concat", "stack"])
@settings_n(40)
@given(j=joinables())
def test_join(name, j):
    views, axis = j
    if name == "stack" and axis is None:
        axis = 0
    ns = [v[0] for v in views]
    hs = [v[1] for v in views]
    np_fn = getattr(np, name)
    from conformance_helpers import BF16
    if any(n.dtype == np.dtype(BF16) for n in ns):   # bf16: float32 stand-ins, see helpers
        return _join_bf16(np_fn, getattr(hg.ops, name), ns, hs, axis)
    assert_conforms(lambda *a: np_fn(list(a), axis=axis),
                    lambda *a: getattr(hg.ops, name)(list(a), axis=axis), ns, hs, exact=True)


def _join_bf16(np_fn, hg_fn, ns, hs, axis):
    from conformance_helpers import BF16
    others = {n.dtype.name for n in ns if n.dtype != np.dtype(BF16)}
    wide = "float64" if "float64" in others else \
        "float32" if others & {"float16", "float32"} else "bfloat16"
    std = [n.astype(BF16).astype(np.float32) if wide == "bfloat16" else n.astype(np.float32)
           if n.dtype == np.dtype(BF16) else n for n in ns]
    assert_conforms(lambda *a: np_fn(list(a), axis=axis), lambda *a: hg_fn(list(a), axis=axis),
                    std, hs, exact=True,
                    dtype_of=lambda d: np.dtype(BF16) if wide == "bfloat16" else np.dtype(wide))


@settings_n(60)
@given(data=st.data())
def test_where_and_clip(data):
    s = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, min_side=0,
                                                    max_side=3)).input_shapes
    c, a, b = (data.draw(view_pairs(shape=x)) for x in s)
    scalar = data.draw(st.one_of(st.none(), st.sampled_from([0, 1, 2.5, True, -0.5])))
    bn, bh = (b[0], b[1]) if scalar is None else (scalar, scalar)
    if data.draw(st.booleans()):
        # The condition counts only as true/false and is no operand of the result dtype: numpy
        # gets it as bool, so the bf16 stand-ins' promotion rule sees only the values a and b.
        cn = np.asarray(c[0] != 0)
        assert_conforms(np.where, hg.where, (cn, a[0], bn), (c[1], a[1], bh), exact=True)
    else:   # clip(x, lo, hi) = minimum(maximum(x, lo), hi)
        hi = data.draw(st.one_of(st.none(), st.sampled_from([3, 0.5])))
        if scalar is None:   # a number beside a tensor bound: test_clip_number_beside_tensor
            hi = None if data.draw(st.booleans()) else b[0]
            bn, bh = (None, None) if hi is not None else (bn, bh)
            hi_h = None if hi is None else b[1]
        else:
            hi_h = hi
        assert_conforms(lambda x, lo: np.clip(x, lo, hi), lambda x, lo: hg.clip(x, lo, hi_h),
                        (a[0], bn), (a[1], bh), exact=True)
        # The method form (Tensor.clip) as ndarray.clip.
        assert_conforms(lambda x, lo: x.clip(lo, hi), lambda x, lo: x.clip(lo, hi_h),
                        (a[0], bn), (a[1], bh), exact=True)


@settings_n(60)
@given(v=view_pairs(), data=st.data())
def test_take_and_take_along_axis(v, data):
    xn, xh, _ = v
    nd = xn.ndim
    axis = data.draw(st.one_of(st.none(), st.integers(-nd - 1, nd)))
    n = xn.size if axis is None else (xn.shape[axis] if -nd <= axis < nd else 1)
    idx = np.array(data.draw(st.lists(st.integers(-n - 1, n), max_size=4)), np.int64)
    if data.draw(st.booleans()):
        assert_conforms(lambda x, i: np.take(x, i, axis=axis),
                        lambda x, i: hg.take(x, i, axis=axis), (xn, idx), (xh, to_hg(idx)),
                        exact=True, operands=False)
    elif axis is not None and nd:
        shape = list(xn.shape)
        if -nd <= axis < nd:
            shape[axis] = data.draw(st.integers(0, 3))
        ii = np.random.default_rng(len(idx)).integers(-n, max(n, 1), shape)
        assert_conforms(lambda x, i: np.take_along_axis(x, i, axis=axis),
                        lambda x, i: hg.take_along_axis(x, i, axis=axis), (xn, ii),
                        (xh, to_hg(ii)), exact=True, operands=False)


@settings_n(30)
@given(v=view_pairs(), method=st.booleans())
def test_copy(v, method):
    xn, xh, _ = v
    f = (lambda x: x.copy()) if method else None
    assert_conforms(f or np.copy, f or hg.ops.copy, (xn,), (xh,), exact=True)


@st.composite
def matmul_pairs(draw):
    nd1, nd2 = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    s1 = batch.input_shapes[0][:max(nd1 - 2, 0)] + ((m, k) if nd1 >= 2 else (k,) * nd1)
    s2 = batch.input_shapes[1][:max(nd2 - 2, 0)] + ((k, n) if nd2 >= 2 else (k,) * nd2)
    if draw(st.integers(0, 9)) == 0 and s2:   # an inner size that does not match
        s2 = s2[:-2] + (k + 1,) + s2[-1:] if len(s2) >= 2 else (k + 1,)
    dts = [d for d in DTYPES if d != "bfloat16"]
    dt = draw(st.sampled_from(dts))
    a = make_view(dt, s1, draw(st.sampled_from(["contig", "transposed"])), draw(small) + 5)
    b = make_view(draw(st.sampled_from([dt, draw(st.sampled_from(dts))])), s2,
                  draw(st.sampled_from(["contig", "reversed"])), draw(small) + 9)
    return a, b


@pytest.mark.parametrize("name", ["matmul", "dot", "method_matmul", "matvec"])
@settings_n(40)
@given(p=matmul_pairs())
def test_products(name, p):
    (an, ah, _), (bn, bh, _) = p
    if name == "matvec" and not (an.ndim == 2 and bn.ndim == 1):
        return   # hologram's matvec is the 2-D x 1-D case of np.matvec
    nf = {"matmul": np.matmul, "dot": lambda a, b: a.dot(b),
          "method_matmul": lambda a, b: a.matmul(b) if isinstance(a, hg.Tensor) else a @ b,
          "matvec": np.matvec}[name]
    hf = {"matmul": hg.matmul, "dot": lambda a, b: a.dot(b),
          "method_matmul": lambda a, b: a.matmul(b) if isinstance(a, hg.Tensor) else a @ b,
          "matvec": hg.ops.matvec}[name]
    k = an.shape[-1] if an.ndim else 1
    finite = np.concatenate([an.ravel(), bn.ravel()]).astype(np.float64)
    big = np.abs(finite[np.isfinite(finite)]).max(initial=1.0)
    assert_conforms(nf, hf, (an, bn), (ah, bh), 4 * k + 4, 4 * (k + 1) * big * big)


def test_clip_number_beside_tensor():
    """A number beside a tensor bound is a weak scalar (NEP 50): it does not widen the result."""
    x, lo = np.array([True, False]), np.array(7, np.int8)
    for hi in (3, 2.5):
        want = np.clip(x, lo, hi)
        for got in (hg.clip(hg.asarray(x), hg.asarray(lo), hi),
                    hg.asarray(x).clip(hg.asarray(lo), hi)):
            assert got.dtype == want.dtype and np.array_equal(got.numpy(), want), (hi, got)
    with pytest.raises(OverflowError):   # 200 does not fit int8: numpy raises too
        np.clip(x, lo, 200)
    with pytest.raises(hg.OutOfRangeError):   # (a ValueError; numpy's is an OverflowError)
        hg.clip(hg.asarray(x), hg.asarray(lo), 200)
    f = np.array([0.5, -3.0, 9.0], np.float32)
    want = np.clip(f, -1, np.array([1.0, 2.0, 3.0], np.float32))
    got = hg.clip(hg.asarray(f), -1, hg.asarray(np.array([1.0, 2.0, 3.0], np.float32)))
    assert got.dtype == want.dtype and np.array_equal(got.numpy(), want)


def test_dot_of_nd_is_numpys_not_matmuls():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    b = np.arange(40, dtype=np.float64).reshape(2, 4, 5)
    assert_conforms(np.dot, lambda x, y: x.dot(y), (a, b), (to_hg(a), to_hg(b)))   # (2,3,2,5)
    assert_conforms(np.dot, lambda x, y: x.dot(y), (a[0, 0, 0], b), (to_hg(a)[0, 0, 0], to_hg(b)))


# --- creation --------------------------------------------------------------------------------
def _default_float(d):
    # Deliberate (docs/python.md): hologram's default float dtype is float32 (numpy: float64).
    return np.dtype(np.float32) if d == np.float64 else d


@settings_n(60)
@given(args=st.lists(st.one_of(st.integers(-5, 300), st.sampled_from([0.5, -1.25, 2.0])),
                     min_size=1, max_size=3),
       dt=st.sampled_from([None] + [d for d in DTYPES if d != "bfloat16"]))
def test_arange(args, dt):
    if dt in INTS and any(isinstance(a, float) for a in args):
        return   # numpy computes those from truncated first two values: not the contract here
    assert_conforms(lambda: np.arange(*args, dtype=dt), lambda: hg.arange(*args, dtype=dt),
                    (), (), ulps=2, atol_ulps=2 * 300)


@settings_n(40)
@given(start=st.integers(-9, 9), stop=st.sampled_from([-3, 0, 1, 2.5, 7]),
       num=st.integers(-1, 9), endpoint=st.booleans(),
       dt=st.sampled_from([None, "float64", "float32", "float16", "int32", "int8", "uint8"]))
def test_linspace(start, stop, num, endpoint, dt):
    kw = {"endpoint": endpoint} if dt is None else {"endpoint": endpoint, "dtype": dt}
    if dt in ("uint8",) and min(start, stop) < 0:
        return   # numpy wraps negative values into uint8; hologram's cast saturates (above)
    assert_conforms(lambda: np.linspace(start, stop, num, **kw),
                    lambda: hg.linspace(start, stop, num, **kw), (), (), ulps=4,
                    atol_ulps=4 * 9, dtype_of=_default_float if dt is None else None)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full"])
@settings_n(20)
@given(shape=st.one_of(shapes, st.integers(-1, 4)), dt=st.sampled_from([None] + DTYPES[:-1]),
       value=st.sampled_from([1, 2.5, True, -1]))
def test_creation(name, shape, dt, value):
    args = (shape, value) if name == "full" else (shape,)
    if name == "full" and dt in INTS and (isinstance(value, float) or
                                          (value < 0 and dt.startswith("u"))):
        return   # numpy converts 2.5 / -1 unsafely into integers; hologram refuses
    fn = (lambda m: lambda: getattr(m, name)(*args, dtype=dt))
    if name == "empty":   # unspecified contents: the dtype, shape and raising
        fn = (lambda m: lambda: getattr(m, name)(*args, dtype=dt).astype(bool) * False)
        dtype_of = None
    else:
        dtype_of = None if dt else _default_float
    assert_conforms(fn(np), fn(hg), (), (), exact=True, dtype_of=dtype_of)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
@settings_n(20)
@given(v=view_pairs(dtypes=[d for d in DTYPES if d != "bfloat16"]),
       dt=st.sampled_from([None, "float32", "int16", "bool"]))
def test_like(name, v, dt):
    xn, xh, _ = v
    args = (7,) if name == "full_like" else ()
    (np_r, hg_r) = (getattr(np, name)(xn, *args, dtype=dt), getattr(hg, name)(xh, *args, dtype=dt))
    assert hg_r.dtype == np_r.dtype and hg_r.shape == np_r.shape
    if name != "empty_like":
        np.testing.assert_array_equal(hg_r.numpy(), np_r)


@settings_n(30)
@given(obj=st.recursive(st.one_of(st.integers(-5, 5), st.floats(-3, 3), st.booleans()),
                        lambda c: st.lists(c, max_size=3), max_leaves=6))
def test_asarray_of_python_data(obj):
    assert_conforms(lambda: np.asarray(obj), lambda: hg.asarray(obj), (), (), exact=True)


@settings_n(20)
@given(v=view_pairs(dtypes=[d for d in DTYPES if d != "bfloat16"]))
def test_from_dlpack(v):
    xn, _, _ = v
    assert_conforms(np.from_dlpack, hg.from_dlpack, (xn,), (xn,), exact=True)


def test_values_strategy_is_random_enough():
    x = values("float32", (64,), 3)
    assert np.isnan(x).any() or np.isinf(x).any()
    assert len(np.unique(values("int64", (64,), 3))) > 10
