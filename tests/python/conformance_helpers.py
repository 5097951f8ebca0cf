"""Shared pieces of the numpy conformance tests (test_numpy_conformance_*.py): the dtypes, value
and shape strategies (hypothesis), views made the same way on both sides, and the comparison of
numpy's outcome with hologram's: raise on both sides or on neither, then dtype, shape and values
(exact for integers, bool and data movement; within a few ulps of the result dtype for floats).
Where hologram differs from numpy on purpose (docs/python.md, "Differences from numpy"), the
tests say so at the call."""
import math
import warnings

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hologram as hg

try:   # bf16 is compared where numpy has a dtype for it
    from ml_dtypes import bfloat16 as BF16
except ImportError:   # pragma: no cover - ml_dtypes is installed with the test dependencies
    BF16 = None

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"] + (["bfloat16"] if BF16 is not None else [])
DTYPES = ["bool"] + INTS + FLOATS

# Repeatable (derandomize) and quick: the four modules run in well under a minute.
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def settings_n(n):
    return settings(SETTINGS, max_examples=n)


def np_dtype(name):
    return np.dtype(BF16) if name == "bfloat16" else np.dtype(name)


def is_float(dt):
    return np.dtype(dt).kind == "f" or (BF16 is not None and np.dtype(dt) == np.dtype(BF16))


def eps(dt):
    return 2.0 ** -7 if np.dtype(dt) == np.dtype(BF16) else float(np.finfo(dt).eps)


# --- values ------------------------------------------------------------------------------------
def values(dt, shape, seed, special=True):
    """Random values of dtype name dt: floats mix normal values with NaN, +-inf, +-0, 1e4 and
    a subnormal; integers mix small values with the whole range; bool 0/1."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dt == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dt in INTS:
        info = np.iinfo(dt)
        small = np.clip(rng.integers(-9, 10, n), info.min, info.max).astype(dt)
        full = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        return np.where(rng.random(n) < 0.7, small, full).reshape(shape)
    f = (rng.standard_normal(n) * 4).astype(np.float32 if dt == "bfloat16" else dt)
    if special:
        tiny = 2.0 ** -133 if dt == "bfloat16" else float(np.finfo(dt).smallest_subnormal)
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 1e4, tiny],
                            f.dtype)
        pick = rng.random(n) < 0.15
        f[pick] = specials[rng.integers(0, len(specials), n)][pick]
    return f.astype(np_dtype(dt)).reshape(shape)


def to_hg(arr):
    """A hologram copy of a numpy array (bf16 through float32: exact)."""
    if BF16 is not None and arr.dtype == np.dtype(BF16):
        return hg.asarray(np.array(arr, np.float32, order="C")).astype("bfloat16")
    return hg.asarray(np.array(arr, copy=True))


def to_np(r):
    """numpy value of a hologram result (bf16 as ml_dtypes.bfloat16, exact)."""
    if isinstance(r, hg.Tensor):
        if r.dtype_name == "bf16":
            return r.astype("float32").numpy(copy=True).astype(BF16)
        return r.numpy(copy=True)
    return np.asarray(r)


# --- shapes and views --------------------------------------------------------------------------
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
VIEWS = ["contig", "transposed", "reversed", "stepped", "broadcast"]


@st.composite
def view_pairs(draw, dtypes=DTYPES, shape=None):
    """(numpy view, hologram view of the same values, dtype name): the view is made by the same
    indexing on both sides (hologram's own views: transposes, negative and stepped slices,
    broadcast dims of stride 0)."""
    dt = draw(st.sampled_from(dtypes))
    shape = draw(shapes) if shape is None else shape
    return make_view(dt, shape, draw(st.sampled_from(VIEWS)), draw(st.integers(0, 2**31)))


def make_view(dt, shape, view, seed):
    shape = tuple(shape)
    if view == "transposed":
        base_shape = shape[::-1]
        fn = _transpose
    elif view == "stepped":
        base_shape = tuple(2 * s for s in shape)
        fn = _stepped
    elif view == "broadcast":
        base_shape = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
        fn = _broadcast(shape)
    elif view == "reversed":
        base_shape = shape
        fn = _reversed
    else:
        base_shape = shape
        fn = _same
    base = values(dt, base_shape, seed)
    return np.asarray(fn(base)), fn(to_hg(base)), dt   # (x[()] of 0-d: a numpy scalar)


def _same(x):
    return x


def _transpose(x):
    return x.T


def _stepped(x):
    return x[(slice(None, None, 2),) * x.ndim]


def _reversed(x):
    return x[(slice(None, None, -1),) * x.ndim]


def _broadcast(shape):
    def f(x):
        return np.broadcast_to(x, shape) if isinstance(x, np.ndarray) else x.broadcast_to(shape)
    return f


# --- comparison --------------------------------------------------------------------------------
def outcome(fn, *args):
    """('ok', numpy value) or ('raise', exception) of fn(*args); numpy's warnings are silenced
    (numpy warns where it returns; the returned values are compared)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # "Mean of empty slice", ...
            r = fn(*args)
        return "ok", to_np(r) if isinstance(r, hg.Tensor) else np.asarray(r)
    except Exception as e:   # noqa: BLE001 (the outcome is what is compared)
        return "raise", e


def assert_conforms(np_fn, hg_fn, np_args, hg_args, ulps=1, atol_ulps=0, exact=False,
                    dtype_of=None, operands=True):
    """numpy raises <=> hologram raises (with a Python exception); else the same dtype
    (dtype_of(numpy's dtype) where hologram differs on purpose), shape and values: exact for
    integer and bool results (and `exact`), else within `ulps` of the result dtype relative
    (+ `atol_ulps` absolute, for results near zero). NaN where numpy has NaN; infinities
    equal. operands=False: the other arrays are indices, not operands of a bf16 op."""
    np_args, bf16_rule = _bf16_stand_ins(np_args, operands)
    dtype_of = dtype_of or bf16_rule
    (nk, nv), (hk, hv) = outcome(np_fn, *np_args), outcome(hg_fn, *hg_args)
    if hk == "raise" and not isinstance(hv, Exception):
        raise AssertionError(f"hologram raised a non-Exception {hv!r}")
    assert nk == hk, f"numpy: {nk} {_show(nv)}; hologram: {hk} {_show(hv)}"
    if nk == "raise":
        return
    want = np.dtype(dtype_of(nv.dtype)) if dtype_of else nv.dtype
    assert hv.dtype == want, f"dtype: numpy {nv.dtype}, hologram {hv.dtype}"
    assert hv.shape == nv.shape, f"shape: numpy {nv.shape}, hologram {hv.shape}"
    assert_values(hv, nv.astype(want), ulps, atol_ulps, exact)


def assert_values(got, want, ulps=1, atol_ulps=0, exact=False):
    if not is_float(want.dtype) or exact:
        if is_float(want.dtype):
            np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
        else:
            np.testing.assert_array_equal(got, want)
        return
    e = eps(want.dtype)
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=ulps * e, atol=atol_ulps * e, equal_nan=True)
    # signs of infinities and NaN positions: assert_allclose checks both


def _is_bf16(a):
    return BF16 is not None and isinstance(a, np.ndarray) and a.dtype == np.dtype(BF16)


def _bf16_stand_ins(args, operands=True):
    """numpy computes bf16 operands as float32 stand-ins (exact); the result dtype hologram
    gives is bf16 where the other operands are bf16, integers or bool (docs/ops.md: bf16
    follows torch there, where numpy with ml_dtypes would go to float64 beside int32)."""
    if not any(_is_bf16(a) for a in args):
        return args, None
    others = [a.dtype for a in args if isinstance(a, np.ndarray) and not _is_bf16(a)]
    keeps = all(d.kind in "biu" for d in others) or not operands

    def rule(d):
        return np.dtype(BF16) if keeps and d.kind == "f" else d

    def stand_in(a):   # where the op runs in bf16, the other operands are rounded to it first
        if _is_bf16(a) or (keeps and operands and isinstance(a, np.ndarray)):
            return a.astype(BF16).astype(np.float32)
        if keeps and operands and isinstance(a, (int, float)) and not isinstance(a, bool):
            with np.errstate(over="ignore"):   # (a huge int or float: inf, as in bf16)
                return float(np.float32(a).astype(BF16))
        return a
    return [stand_in(a) for a in args], rule


def _show(v):
    if isinstance(v, Exception):
        return f"{type(v).__name__}: {v}"
    return f"{v.dtype} {v.shape} {v!r}"[:400]
