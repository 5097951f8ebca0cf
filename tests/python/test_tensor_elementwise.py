"""hologram.ops elementwise ops and Tensor operators against numpy (float64 references where
numpy has no such function): every dtype, random and special values, broadcasting, scalars,
non-contiguous inputs, empty and 0-d tensors. numpy's own TypeError for a dtype means hologram
must refuse it too (DtypeError, a TypeError)."""
import math
import warnings

import numpy as np
import pytest

import hologram as hg
from hologram import ops

NP_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
             np.uint64, np.float16, np.float32, np.float64]
FLOATS = [np.float16, np.float32, np.float64]
RNG = np.random.default_rng(1234)


def sample(dt, shape, rng=RNG, special=True, positive=False):
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = 1 if positive else max(info.min, -100)
        x = rng.integers(lo, min(info.max, 100), n, endpoint=True).astype(dt)
        if special and n >= 4 and not positive:
            x[:2] = [info.min, info.max]
        return x.reshape(shape)
    x = (rng.standard_normal(n) * 3).astype(dt)
    if positive:
        x = np.abs(x) + dt.type(0.1)
    elif special and n >= 8:
        x[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).tiny / 4]
    return x.reshape(shape)


def address(t):
    """The first element's address, in host or device memory."""
    return t.data_ptr or t.device_ptr


def ulps_f(dt):
    return {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-13}[
        np.dtype(dt)]


def check_close(got, want, rtol, atol=0.0):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f" or got.dtype.kind == "f":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(w)), (got, want)
        inf = np.isinf(w)
        assert np.array_equal(g[inf], w[inf]), (got, want)
        fin = ~np.isnan(w) & ~inf
        err = np.abs(g[fin] - w[fin])
        tol = atol + rtol * np.abs(w[fin])
        bad = err > tol
        assert not bad.any(), (g[fin][bad][:5], w[fin][bad][:5])
    else:
        np.testing.assert_array_equal(got, want)


# --- unary ----------------------------------------------------------------------------------------
def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


NUMPY_UNARY = {
    "negative": np.negative, "absolute": np.absolute, "sign": np.sign, "sqrt": np.sqrt,
    "reciprocal": np.reciprocal, "square": np.square, "exp": np.exp, "expm1": np.expm1,
    "exp2": np.exp2, "log": np.log, "log1p": np.log1p, "log2": np.log2, "sin": np.sin,
    "cos": np.cos, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "rint": np.rint,
    "trunc": np.trunc, "round": np.round, "logical_not": np.logical_not, "bitwise_not": np.bitwise_not,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
}
# Functions numpy lacks: float64 references.
F64_UNARY = {
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "silu": lambda x: np.where(x == -np.inf, -0.0, x / (1 + np.exp(-x))),
    "softplus": lambda x: np.logaddexp(0, x),
    "erf": _erf,
    # gelu(-inf) = silu(-inf) = -0 (the limits, documented), where the formulas give NaN.
    # Forms without cancellation: tanh form as x * sigmoid(2u), erf form with erfc.
    "gelu": lambda x: np.where(x == -np.inf, -0.0, x / (1 + np.exp(
        -2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    "gelu_erf": lambda x: np.where(x == -np.inf, -0.0, 0.5 * x * np.vectorize(
        math.erfc, otypes=[np.float64])(-x / math.sqrt(2))),
}
TRANSCENDENTAL = {"exp", "expm1", "exp2", "log", "log1p", "log2", "sin", "cos", "tanh", "rsqrt",
                  "sigmoid", "silu", "softplus", "erf", "gelu", "gelu_erf"}


def float_result(dt):
    """numpy's float dtype for a float function of dt."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return dt
    if dt == np.bool_ or dt.itemsize == 1:
        return np.dtype(np.float16)
    return np.dtype(np.float32) if dt.itemsize == 2 else np.dtype(np.float64)


@pytest.mark.parametrize("name", sorted(NUMPY_UNARY))
@pytest.mark.parametrize("dt", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_unary_matches_numpy(name, dt):
    x = sample(dt, (7, 9))
    if name == "reciprocal" and np.dtype(dt).kind in "iu":
        x = np.where(x == 0, 1, x).astype(dt)   # numpy's integer 1/0 is undefined
    f = NUMPY_UNARY[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = f(x)
        except TypeError:
            with pytest.raises(TypeError):
                getattr(ops, name)(x)
            return
    got = getattr(ops, name)(x)
    assert isinstance(got, hg.Tensor)
    if name == "round" and np.dtype(dt) == np.bool_:
        want = x    # hologram returns bool as it is (numpy: float16), documented
    if name == "sign" and np.dtype(dt).kind == "f":
        want = np.where(x == 0, x, want)    # hologram keeps the sign of zero (documented)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    rtol = ulps_f(want.dtype) * (8 if name in TRANSCENDENTAL else 1) if want.dtype.kind == "f" else 0
    if np.dtype(dt) == np.float16 and name in TRANSCENDENTAL:
        rtol = 1e-3   # f16: computed in f32, rounded once (<= 1 f16 ULP)
    check_close(got.numpy(), want, rtol, atol=0 if want.dtype.kind != "f" else
                np.finfo(want.dtype).tiny * 4)


@pytest.mark.parametrize("name", sorted(F64_UNARY))
@pytest.mark.parametrize("dt", FLOATS + [np.int32, np.uint8], ids=lambda d: np.dtype(d).name)
def test_unary_against_float64(name, dt):
    x = sample(dt, (5, 11))
    with np.errstate(all="ignore"):
        want = F64_UNARY[name](x.astype(np.float64))
    got = getattr(ops, name)(x)
    rdt = float_result(dt) if name != "relu" else np.dtype(dt)
    assert got.dtype == rdt
    want = want.astype(rdt) if rdt.kind == "f" else want.astype(rdt)
    if rdt.kind != "f":
        np.testing.assert_array_equal(got.numpy(), want)
        return
    rtol = {np.dtype(np.float16): 1.5e-3, np.dtype(np.float32): 8e-7 * 6,
            np.dtype(np.float64): 1e-12}[rdt]
    if name in ("gelu", "gelu_erf", "silu") and rdt == np.float64:
        rtol = 1e-9   # the reference itself loses accuracy in the far negative tail
    check_close(got.numpy(), want, rtol, atol=float(np.finfo(rdt).tiny) * 8)


def test_unary_bf16_rounds_once():
    x = np.array([1.0, -2.5, 0.1, 3.14159, 1e-3, 65504.0], np.float32)
    t = hg.asarray(x).astype("bf16")
    got = ops.exp(t).astype("float32").numpy()
    # Reference: exp in float64, rounded to bfloat16 (nearest even) by bit manipulation.
    e = np.exp(x.astype(np.float64)).astype(np.float32)
    bits = e.view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    np.testing.assert_array_equal(got, rounded.view(np.float32))


# --- binary ---------------------------------------------------------------------------------------
NUMPY_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "power": np.power,
    "minimum": np.minimum, "maximum": np.maximum, "equal": np.equal, "not_equal": np.not_equal,
    "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift,
    "right_shift": np.right_shift,
}
DT_PAIRS = [(np.float32, np.float32), (np.float64, np.float32), (np.int32, np.float32),
            (np.int8, np.uint8), (np.int64, np.int64), (np.uint16, np.uint32), (np.bool_, np.bool_),
            (np.bool_, np.int16), (np.float16, np.float16), (np.float16, np.int8),
            (np.uint64, np.int64), (np.uint8, np.uint8)]


def binary_inputs(name, da, db, shape_a=(6, 5), shape_b=(6, 5)):
    a = sample(da, shape_a)
    b = sample(db, shape_b, positive=name in ("power", "left_shift", "right_shift"))
    if name in ("left_shift", "right_shift") and np.dtype(db).kind in "iu":
        b = (b % (8 * np.dtype(db).itemsize)).astype(db)
    if name == "power" and np.dtype(db).kind in "iu":
        b = (b % 5).astype(db)
    if name == "power" and np.dtype(da).kind in "iu":
        a = (a % 7).astype(da)
    return a, b


@pytest.mark.parametrize("name", sorted(NUMPY_BINARY))
@pytest.mark.parametrize("da,db", DT_PAIRS, ids=lambda d: np.dtype(d).name)
def test_binary_matches_numpy(name, da, db):
    a, b = binary_inputs(name, da, db)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with np.errstate(all="ignore"):
                want = NUMPY_BINARY[name](a, b)
        except (TypeError, np.exceptions.DTypePromotionError if hasattr(np, "exceptions") else
                TypeError):
            with pytest.raises(TypeError):
                getattr(ops, name)(a, b)
            return
    got = getattr(ops, name)(a, b)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    rtol = 0
    if want.dtype.kind == "f":
        rtol = ulps_f(want.dtype) * (4 if name == "power" else 1)
    check_close(got.numpy(), want, rtol, atol=0)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==",
                                "!=", "&", "|", "^", "<<", ">>"])
def test_operators_tensor_scalar_array(op):
    ints = op in ("&", "|", "^", "<<", ">>")
    dt = np.int32 if ints else np.float32
    a = sample(dt, (4, 3), special=False, positive=True)
    b = sample(dt, (3,), special=False, positive=True)
    if ints:
        a, b = a % 16, b % 8
    ta, tb = hg.asarray(a.copy()), hg.asarray(b.copy())
    f = eval(f"lambda x, y: x {op} y")  # noqa: S307 - test-local operator table
    with np.errstate(all="ignore"):
        for x, y, hx, hy in [(a, b, ta, tb), (a, 3, ta, 3), (2, a, 2, ta), (a, 1.5, ta, 1.5),
                             (a, b, ta, b), (a, b, a, tb)]:
            if ints and isinstance(y, float):
                continue
            want = f(x, y)
            got = f(hx, hy)
            assert isinstance(got, hg.Tensor)
            assert got.dtype == want.dtype, (op, x, y, got.dtype, want.dtype)
            check_close(got.numpy(), want, 1e-6 if want.dtype.kind == "f" else 0)


def test_weak_scalars_keep_the_tensor_dtype():
    x = hg.asarray(np.array([1, 2, 3], np.float16))
    assert (x + 1.5).dtype == np.float16 and (x * 2).dtype == np.float16
    i = hg.asarray(np.array([1, 2, 3], np.uint8))
    assert (i + 1).dtype == np.uint8
    assert (i + 1.5).dtype == np.float64
    b = hg.asarray(np.array([True, False]))
    assert (b + 1).dtype == np.int64
    with pytest.raises(hg.OutOfRangeError):
        i + 300   # numpy 2 raises too
    assert (i < 300).all().item()


def test_inplace_operators_write_the_same_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = hg.asarray(a)
    ptr = address(t)
    t += 1
    t *= hg.asarray(np.array([1, 2, 3], np.float32))
    t -= 0.5
    assert address(t) == ptr
    want = (np.arange(6).reshape(2, 3) + 1) * [1, 2, 3] - 0.5
    np.testing.assert_array_equal(t.numpy(), want)
    if t.backend == "cpu":                       # a view of a's memory: numpy sees the writes
        np.testing.assert_array_equal(a, want)
    i = hg.asarray(np.arange(4, dtype=np.int32))
    with pytest.raises(hg.DtypeError):
        i += 1.5   # same_kind: float result into an int tensor is refused (numpy too)


def test_unary_operators():
    x = np.array([-2.0, -0.0, 3.5], np.float32)
    t = hg.asarray(x)
    np.testing.assert_array_equal((-t).numpy(), -x)
    np.testing.assert_array_equal(abs(t).numpy(), np.abs(x))
    p = +t
    assert address(p) != address(t) and p.tolist() == x.tolist()
    i = hg.asarray(np.array([0, 5, -1], np.int16))
    np.testing.assert_array_equal((~i).numpy(), ~np.array([0, 5, -1], np.int16))
    b = hg.asarray(np.array([True, False]))
    assert (~b).tolist() == [False, True]


def test_broadcasting_shapes_and_errors():
    a = sample(np.float32, (4, 1, 3), special=False)
    b = sample(np.float32, (5, 1), special=False)
    got = ops.add(a, b)
    assert got.shape == (4, 5, 3)
    check_close(got.numpy(), a + b, 0)
    with pytest.raises(hg.SizeMismatchError) as e:
        ops.add(np.zeros((2, 3), np.float32), np.zeros((4,), np.float32))
    assert "(2, 3)" in str(e.value) or "2, 3" in str(e.value) or "[2, 3]" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_non_contiguous_inputs():
    base = sample(np.float64, (6, 8), special=False)
    t = hg.asarray(base)
    views = [(t.T, base.T), (t[::2, ::-3], base[::2, ::-3]), (t[1:, 2], base[1:, 2]),
             (t[None, :, 1:5], base[None, :, 1:5])]
    for tv, nv in views:
        check_close(ops.exp(tv).numpy(), np.exp(nv), 1e-15)
        check_close((tv * 2 + tv).numpy(), nv * 2 + nv, 1e-15)
    e = t.broadcast_to((3, 6, 8))
    assert e.strides[0] == 0
    check_close((e + 1).numpy(), np.broadcast_to(base, (3, 6, 8)) + 1, 1e-15)


def test_empty_and_zero_d():
    e = hg.zeros((0, 3))
    assert (e + 1).shape == (0, 3) and ops.exp(e).size == 0
    z = hg.tensor(2.5)
    assert z.shape == () and (z * 2).item() == 5.0 and float(ops.sqrt(hg.tensor(4.0))) == 2.0
    assert (z + np.ones((2, 2), np.float64)).shape == (2, 2)


def test_out_argument_and_aliasing():
    a = hg.asarray(np.arange(4, dtype=np.float32))
    out = hg.zeros((4,), np.float64)
    r = ops.multiply(a, 2, out=out)
    assert r is out and out.tolist() == [0, 2, 4, 6]
    with pytest.raises(hg.SizeMismatchError):
        ops.add(a, a, out=hg.zeros((3,)))
    with pytest.raises(hg.DtypeError):
        ops.add(a, a, out=hg.zeros((4,), np.int32))   # same_kind refuses float -> int
    # out overlapping an input without being it: numpy's rule, as if a were read first
    ops.add(a[1:], a[1:], out=a[:3])
    assert a.tolist() == [2, 4, 6, 3]


def test_where_clip_fma_cast():
    c = np.array([True, False, True, False])
    a = np.arange(4, dtype=np.float32)
    b = np.full(4, -1, np.int16)
    np.testing.assert_array_equal(ops.where(c, a, b).numpy(), np.where(c, a, b))
    x = sample(np.float32, (10,), special=False)
    np.testing.assert_array_equal(ops.clip(x, -1, 1).numpy(), np.clip(x, -1, 1))
    np.testing.assert_array_equal(ops.clip(x, None, 0.5).numpy(), np.minimum(x, np.float32(0.5)))
    lo = np.full(10, -0.5, np.float32)
    np.testing.assert_array_equal(ops.clip(x, lo, 2.0).numpy(), np.clip(x, lo, 2.0))
    f = ops.fma(np.float32(3) * np.ones(3, np.float32), np.array([1, 2, 3], np.float32),
                np.array([0.5, 0.5, 0.5], np.float32))
    assert f.tolist() == [3.5, 6.5, 9.5]
    y = np.array([1.7, -1.7, np.nan, 1e20], np.float32)
    assert ops.cast(y, np.int32).tolist() == [1, -1, 0, 2147483647]   # cvt: truncate, saturate
    assert hg.asarray(y).astype("f64").dtype == np.float64


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_round_decimals_matches_numpy(dt):
    x = (RNG_ROUND.standard_normal(2000) * 10.0 ** RNG_ROUND.integers(-3, 5, 2000)).astype(dt)
    x[:6] = [2.5, -2.5, 0.125, 15.0, 25.0, -0.0]
    t = hg.asarray(x)
    for d in (-3, -1, 0, 1, 2, 4):
        with np.errstate(over="ignore"):
            want = np.round(x, d)
        got = t.round(d).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=f"{dt} decimals={d}")


def test_round_decimals_integers():
    x = np.array([15, 25, -15, -25, 1234, -9999, 0], np.int64)
    for d in (-2, -1, 0, 2):
        np.testing.assert_array_equal(hg.asarray(x).round(d).numpy(), np.round(x, d))
    with pytest.raises(TypeError):
        hg.asarray(x).round(1.5)


RNG_ROUND = np.random.default_rng(11)


def test_array_operands_join_the_executor_of_the_tensor_operand():
    # The executor of a call is that of its first Tensor argument wherever it stands, so an
    # array in front of it is converted onto that executor (on a GPU: onto the device).
    with hg.Executor("cpu") as e2:
        t = hg.asarray(np.array([1.0, 2.0], np.float32), executor=e2)
        x = np.array([10.0, 20.0], np.float32)
        for r in (hg.ops.add(x, t), x + t, hg.ops.where(np.array([True, False]), x, t),
                  hg.ops.add([1, 2], t)):
            assert r.executor is e2
        np.testing.assert_array_equal((x - t).numpy(), [9.0, 18.0])
        other = hg.asarray(np.ones(2, np.float32))          # a Tensor on another executor
        with pytest.raises(hg.InvalidArgumentError, match="another executor"):
            hg.ops.add(other, t)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.float32, np.float16, np.float64, np.bool_])
@pytest.mark.parametrize("value", [0.5, 3, True, -2.0])
def test_where_python_scalar_takes_numpy_weak_dtype(ex, dtype, value):
    """where(c, tensor, number) and where(c, number, tensor): numpy's dtype (NEP 50) and values,
    eager and under @hg.jit."""
    rng = np.random.default_rng(2)
    c = rng.random(17) < 0.5
    a = (rng.standard_normal(17) * 4).astype(dtype)
    hc, ha = hg.asarray(c, executor=ex), hg.asarray(a, executor=ex)
    jitted = hg.jit(lambda c, a: (hg.where(c, a, value), hg.where(c, value, a)))
    for got1, got2 in ((hg.where(hc, ha, value), hg.where(hc, value, ha)), jitted(hc, ha)):
        for got, want in ((got1, np.where(c, a, value)), (got2, np.where(c, value, a))):
            assert got.numpy(copy=True).dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(copy=True), want)
