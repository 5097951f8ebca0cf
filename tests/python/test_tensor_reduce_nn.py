"""Reductions, softmax/norms, matmul/gemm/matvec, losses and data ops on Tensors against numpy
(float64 references) and torch (losses, when installed)."""
import numpy as np
import pytest

import hologram as hg
from hologram import ops

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")
RNG = np.random.default_rng(99)


def randn(*shape, dt=np.float32):
    return RNG.standard_normal(shape).astype(dt)


# --- reductions -----------------------------------------------------------------------------------
REDUCTIONS = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "min": np.min, "max": np.max,
              "argmin": np.argmin, "argmax": np.argmax, "var": np.var, "std": np.std,
              "any": np.any, "all": np.all}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims):
    x = randn(3, 4, 5, dt=np.float64)
    if name in ("argmin", "argmax") and isinstance(axis, tuple):
        pytest.skip("numpy's argmin/argmax take one axis")
    kw = {"keepdims": keepdims} if name not in ("argmin", "argmax") or axis is not None else {}
    want = REDUCTIONS[name](x, axis=axis, **kw) if name not in ("argmin", "argmax") else \
        REDUCTIONS[name](x, axis=axis, keepdims=keepdims)
    got = getattr(hg.asarray(x), name)(axis=axis, keepdims=keepdims)
    got_f = getattr(ops, {"min": "amin", "max": "amax"}.get(name, name))(x, axis=axis,
                                                                         keepdims=keepdims)
    want = np.asarray(want)
    for g in (got, got_f):
        assert g.shape == want.shape and g.dtype == want.dtype, (name, g.shape, want.shape)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint16, np.int32, np.float16, np.float32])
def test_reduction_dtypes_follow_numpy(dt):
    x = (RNG.integers(0, 5, (4, 6)) if np.dtype(dt).kind in "biu" else randn(4, 6)).astype(dt)
    for name in ("sum", "prod", "mean", "max"):
        want = getattr(np, name)(x, axis=1)
        got = getattr(hg.asarray(x), name)(axis=1)
        assert got.dtype == want.dtype, (name, dt, got.dtype, want.dtype)
        np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64),
                                   rtol=2e-3 if dt == np.float16 else 1e-6)


def test_reduction_special_values_and_empty():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    assert np.isnan(hg.asarray(x).max().item())
    assert hg.asarray(x).argmax().item() == 1   # first NaN, as numpy
    e = hg.zeros((0,))
    assert e.sum().item() == 0 and e.prod().item() == 1
    assert np.isnan(e.mean().item())
    with pytest.raises(hg.InvalidArgumentError):
        e.max()   # numpy raises too
    with pytest.raises(hg.HologramError) as err:
        hg.zeros((2, 3)).sum(axis=3)
    assert "axis" in str(err.value)
    assert hg.zeros((2, 3)).var(ddof=1).item() == 0.0
    np.testing.assert_allclose(hg.asarray(np.arange(5.0)).std(ddof=1).item(),
                               np.std(np.arange(5.0), ddof=1))


def test_sum_is_stable_at_1e7():
    x = np.full(10_000_000, 0.1, np.float32)
    got = hg.asarray(x).sum().item()
    want = float(np.sum(x.astype(np.float64)))
    assert abs(got - want) / want <= 1e-5


def test_logsumexp():
    x = randn(4, 7) * 100
    got = ops.logsumexp(x, axis=1).numpy()
    m = x.astype(np.float64).max(axis=1, keepdims=True)
    want = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_numpy_functions_on_tensors():
    x = randn(3, 4)
    t = hg.asarray(x)
    e = np.exp(t)                      # __array_ufunc__ -> hologram op
    assert isinstance(e, hg.Tensor)
    np.testing.assert_allclose(e.numpy(), np.exp(x), rtol=1e-6)
    assert isinstance(np.add(t, 1), hg.Tensor)
    np.testing.assert_allclose(float(np.sum(t)), x.sum(dtype=np.float64), rtol=1e-6)
    assert np.hypot(t, t).shape == (3, 4)   # no such op: numpy on a host view
    assert isinstance(x + t, hg.Tensor)     # numpy defers to the Tensor's reflected operator


# --- softmax and norms ---------------------------------------------------------------------------
def np_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_and_log_softmax(axis):
    x = randn(5, 6, 7).astype(np.float64) * 1e4   # large magnitudes: must stay finite
    x[0, 0, :3] = -np.inf                           # masks
    got = ops.softmax(x, axis=axis).numpy()
    want = np_softmax(x, axis)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    lg = ops.log_softmax(x, axis=axis).numpy()
    m = np.max(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        want_log = x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    np.testing.assert_allclose(lg, want_log, rtol=1e-9)
    f32 = ops.softmax(randn(4, 9), axis=axis)
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32.numpy().sum(axis=axis), 1.0, rtol=1e-6)


def test_layer_norm_and_rms_norm():
    x = randn(4, 3, 8)
    w, b = randn(8), randn(8)
    got = ops.layer_norm(x, 8, w, b, eps=1e-5).numpy()
    xd = x.astype(np.float64)
    mu = xd.mean(-1, keepdims=True)
    var = xd.var(-1, keepdims=True)
    want = (xd - mu) / np.sqrt(var + 1e-5) * w + b
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    got2 = ops.layer_norm(x, (3, 8)).numpy()
    mu2 = xd.mean((-2, -1), keepdims=True)
    want2 = (xd - mu2) / np.sqrt(xd.var((-2, -1), keepdims=True) + 1e-5)
    np.testing.assert_allclose(got2, want2, rtol=1e-5, atol=1e-5)
    r = ops.rms_norm(x, 8, w, eps=1e-6).numpy()
    want3 = xd / np.sqrt((xd ** 2).mean(-1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(r, want3, rtol=1e-5, atol=1e-5)
    with pytest.raises(hg.SizeMismatchError):
        ops.layer_norm(x, (4,))


# --- linear algebra ------------------------------------------------------------------------------
@pytest.mark.parametrize("sa,sb", [((5, 7), (7, 3)), ((7,), (7, 3)), ((5, 7), (7,)), ((7,), (7,)),
                                   ((2, 5, 7), (7, 3)), ((2, 1, 5, 7), (3, 7, 4)), ((0, 4), (4, 2))])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32])
def test_matmul_matches_numpy(sa, sb, dt):
    a = (RNG.integers(-5, 5, sa) if dt == np.int32 else RNG.standard_normal(sa)).astype(dt)
    b = (RNG.integers(-5, 5, sb) if dt == np.int32 else RNG.standard_normal(sb)).astype(dt)
    want = a @ b
    got = hg.asarray(a) @ hg.asarray(b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dt == np.float32 else 1e-12,
                               atol=1e-5)


def test_matmul_transposed_views_and_errors():
    a = randn(64, 48)
    t = hg.asarray(a)
    np.testing.assert_allclose((t.T @ t).numpy(), a.T @ a, rtol=1e-4, atol=1e-4)
    with pytest.raises(hg.SizeMismatchError):
        t @ t
    with pytest.raises(ValueError, match="at least 1 dim"):
        t @ 2.0   # numpy raises ValueError too


def test_gemm_and_matvec_tensor_forms():
    a, b = randn(6, 4), randn(5, 4)
    c = hg.asarray(np.ones((6, 5), np.float32))
    r = ops.gemm(a, b, c, alpha=2.0, beta=0.5, trans_b=True)
    assert r is c
    np.testing.assert_allclose(c.numpy(), 2 * a @ b.T + 0.5, rtol=1e-5)
    x = randn(4)
    np.testing.assert_allclose(ops.matvec(a, x).numpy(), a @ x, rtol=1e-5)


# --- losses ---------------------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_torch(reduction):
    F = torch.nn.functional
    p, t = randn(8, 5), randn(8, 5)
    np.testing.assert_allclose(ops.mse_loss(p, t, reduction=reduction).numpy(),
                               F.mse_loss(torch.from_numpy(p), torch.from_numpy(t),
                                          reduction=reduction).numpy(), rtol=1e-5)
    logits = randn(8, 5)
    cls = RNG.integers(0, 5, 8)
    cls[2] = -100
    want = F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(cls),
                           reduction=reduction).numpy()
    np.testing.assert_allclose(ops.cross_entropy(logits, cls, reduction=reduction).numpy(), want,
                               rtol=1e-5, atol=1e-6)
    probs = np_softmax(randn(8, 5).astype(np.float64), 1).astype(np.float32)
    want = F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(probs),
                           reduction=reduction).numpy()
    np.testing.assert_allclose(ops.cross_entropy(logits, probs, reduction=reduction).numpy(),
                               want, rtol=1e-5, atol=1e-6)
    pr = RNG.uniform(0, 1, (6, 3)).astype(np.float32)
    pr[0, 0], pr[0, 1] = 0.0, 1.0       # logs clamped at -100 as torch
    tg = RNG.uniform(0, 1, (6, 3)).astype(np.float32)
    w = randn(3) ** 2
    want = F.binary_cross_entropy(torch.from_numpy(pr), torch.from_numpy(tg),
                                  weight=torch.from_numpy(w), reduction=reduction).numpy()
    np.testing.assert_allclose(ops.binary_cross_entropy(pr, tg, w, reduction=reduction).numpy(),
                               want, rtol=1e-5, atol=1e-5)
    lg = randn(6, 3) * 20
    pw = randn(3) ** 2
    want = F.binary_cross_entropy_with_logits(torch.from_numpy(lg), torch.from_numpy(tg),
                                              pos_weight=torch.from_numpy(pw),
                                              reduction=reduction).numpy()
    got = ops.binary_cross_entropy_with_logits(lg, tg, pos_weight=pw, reduction=reduction)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def _reduce(v, reduction, den=None):
    if reduction == "none":
        return v
    return v.sum() if reduction == "sum" else v.sum() / (v.size if den is None else den)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_float64_formulas(reduction):
    """The loss bindings against their definitions in float64 numpy (runs without torch)."""
    p, t = randn(8, 5), randn(8, 5)
    want = _reduce((p.astype(np.float64) - t) ** 2, reduction)
    np.testing.assert_allclose(ops.mse_loss(p, t, reduction=reduction).numpy(), want, rtol=1e-5)
    logits = randn(8, 5)
    lsm = np.log(np_softmax(logits.astype(np.float64), 1))
    cls = RNG.integers(0, 5, 8)
    cls[2] = -100                        # ignore_index: no loss, not counted by 'mean'
    kept = cls != -100
    per = np.where(kept, -lsm[np.arange(8), np.where(kept, cls, 0)], 0.0)
    np.testing.assert_allclose(ops.cross_entropy(logits, cls, reduction=reduction).numpy(),
                               _reduce(per, reduction, kept.sum()), rtol=1e-5, atol=1e-6)
    probs = np_softmax(randn(8, 5).astype(np.float64), 1).astype(np.float32)
    per = -(probs * lsm).sum(1)
    np.testing.assert_allclose(ops.cross_entropy(logits, probs, reduction=reduction).numpy(),
                               _reduce(per, reduction), rtol=1e-5, atol=1e-6)
    pr = RNG.uniform(0, 1, (6, 3)).astype(np.float32)
    pr[0, 0], pr[0, 1] = 0.0, 1.0       # logs clamped at -100
    tg = RNG.uniform(0, 1, (6, 3)).astype(np.float32)
    w = randn(3) ** 2
    p64 = pr.astype(np.float64)
    with np.errstate(divide="ignore"):
        per = -w * (tg * np.maximum(np.log(p64), -100) +
                    (1 - tg) * np.maximum(np.log(1 - p64), -100))
    np.testing.assert_allclose(ops.binary_cross_entropy(pr, tg, w, reduction=reduction).numpy(),
                               _reduce(per, reduction), rtol=1e-5, atol=1e-5)
    lg = randn(6, 3) * 20
    pw = randn(3) ** 2
    x = lg.astype(np.float64)
    log_sig, log_one_minus = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    per = -(pw * tg * log_sig + (1 - tg) * log_one_minus)
    got = ops.binary_cross_entropy_with_logits(lg, tg, pos_weight=pw, reduction=reduction)
    np.testing.assert_allclose(got.numpy(), _reduce(per, reduction), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_bce_with_logits_keeps_the_tiny_term_of_large_logits(dt):
    """t = 1 and a large x: the loss is log1p(exp(-x)), down to 1e-35; within a few ulp."""
    x = np.array([80, 30, 20, 15.5, 5, 1e-3, 0, -1e-3, -5, -20, 1e-8], dt)
    got = ops.binary_cross_entropy_with_logits(x, np.ones_like(x), reduction="none").numpy()
    want = np.logaddexp(0, -x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dt).eps, atol=0)


def test_loss_errors():
    with pytest.raises(hg.InvalidArgumentError, match="reduction"):
        ops.mse_loss(randn(3), randn(3), reduction="avg")
    with pytest.raises(hg.InvalidArgumentError):
        ops.binary_cross_entropy(np.array([1.5], np.float32), np.array([1.0], np.float32))
    with pytest.raises(hg.OutOfRangeError):
        ops.cross_entropy(randn(2, 3), np.array([0, 7]))


# --- data ops -------------------------------------------------------------------------------------
def test_creation_functions():
    assert hg.zeros((2, 3)).tolist() == [[0, 0, 0], [0, 0, 0]]
    assert hg.ones(3, np.int8).dtype == np.int8
    assert hg.full((2,), 7).tolist() == [7, 7] and hg.full((2,), 7).dtype == np.int64
    np.testing.assert_array_equal(hg.arange(5).numpy(), np.arange(5))
    np.testing.assert_allclose(hg.arange(1.0, 2.0, 0.25).numpy(), np.arange(1.0, 2.0, 0.25))
    assert hg.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    np.testing.assert_allclose(hg.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5), rtol=1e-6)
    t = hg.tensor([[1, 2], [3, 4]], dtype=np.float32)
    assert hg.zeros_like(t).shape == (2, 2) and hg.ones_like(t).sum().item() == 4
    assert hg.empty((3,), "bf16").dtype_name == "bf16"


def test_random_is_reproducible_and_well_distributed():
    g1, g2 = hg.Generator(42), hg.Generator(42)
    a, b = g1.normal((100_000,)), g2.normal((100_000,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = g1.normal((100_000,))
    assert not np.array_equal(a.numpy(), c.numpy())   # the offset advanced
    x = a.numpy().astype(np.float64)
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02
    u = hg.Generator(1).uniform((100_000,), 2.0, 3.0).numpy()
    assert u.min() >= 2.0 and u.max() < 3.0 and abs(u.mean() - 2.5) < 0.01
    hg.manual_seed(5)
    r1 = hg.rand(10)
    hg.manual_seed(5)
    assert hg.rand(10).tolist() == r1.tolist()


def test_concat_stack_take_gather_embedding():
    a, b = randn(2, 3), randn(4, 3)
    np.testing.assert_array_equal(ops.concatenate([a, b]).numpy(), np.concatenate([a, b]))
    np.testing.assert_array_equal(ops.stack([a, a], axis=1).numpy(), np.stack([a, a], axis=1))
    idx = np.array([3, 0, -1, 2])
    np.testing.assert_array_equal(ops.index_select(b, 0, idx).numpy(), np.take(b, idx, axis=0))
    np.testing.assert_array_equal(ops.take(b, idx).numpy(), np.take(b, idx))
    gi = RNG.integers(0, 3, (4, 3))
    np.testing.assert_array_equal(ops.gather(b, 1, gi).numpy(), np.take_along_axis(b, gi, 1))
    w = randn(10, 4)
    ids = np.array([[1, 2], [9, 0]])
    np.testing.assert_array_equal(ops.embedding(ids, hg.asarray(w)).numpy(), w[ids])
    with pytest.raises(hg.OutOfRangeError):
        ops.index_select(b, 0, np.array([4]))
    with pytest.raises(hg.SizeMismatchError):
        ops.concatenate([a, randn(2, 4)])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("length", list(range(1, 18)) + [31, 64])
def test_softmax_short_rows_against_float64(threads, length):
    # Short contiguous f32 rows take a one-vector-per-row path on AVX-512 machines (rows of at
    # most 16); lengths around it, many rows split over threads, and special values: a row
    # with NaN is all NaN, a row with +inf or all -inf is NaN, large values do not overflow.
    ex = hg.Executor("cpu", num_threads=threads)
    rng = np.random.default_rng(length)
    x = (rng.standard_normal((67, length)) * 8).astype(np.float32)
    x[3, 0] = np.nan
    x[5, :] = -np.inf
    x[7, -1] = np.inf
    x[9, :] = 3.0e38
    x[11, 0] = -np.inf
    hx = hg.asarray(x, executor=ex)
    d = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        m = d.max(axis=1, keepdims=True)
        e = np.exp(d - m)
        want = e / e.sum(axis=1, keepdims=True)
        want_log = (d - m) - np.log(e.sum(axis=1, keepdims=True))
    got = hg.softmax(hx, -1).numpy()
    got_log = hg.log_softmax(hx, -1).numpy()
    np.testing.assert_allclose(got, want, rtol=4e-6, atol=1e-37)
    np.testing.assert_allclose(got_log, want_log, rtol=4e-6, atol=4e-6)
    for r in (3, 5, 7):
        assert np.isnan(got[r]).all() and np.isnan(got_log[r]).all()


@pytest.mark.parametrize("name", ["sum", "prod", "amin", "amax", "min", "max", "argmin", "argmax",
                                  "mean", "var", "std"])
@pytest.mark.parametrize("axis", [0, -1, 1, (0, -1)])
def test_zero_d_reductions_take_numpy_axes(ex, name, axis):
    """A 0-d tensor: where numpy reduces along axis 0 or -1 (its ufunc reductions) hologram
    gives its value, eagerly and traced; where numpy raises (mean/var/std, other axes) hologram
    raises too."""
    a = np.array(np.float32(2.5))
    t = hg.asarray(a, executor=ex)
    try:
        want = getattr(np, name)(a, axis=axis)
    except (ValueError, IndexError, TypeError):   # numpy's AxisError is both
        for f in (getattr(hg, name), hg.jit(lambda x: getattr(hg, name)(x, axis=axis))):
            # (argmin/argmax of a tuple axis: TypeError, as numpy's)
            with pytest.raises((hg.HologramError, TypeError)):
                f(t, axis=axis) if f is getattr(hg, name) else f(t)
        return
    for got in (getattr(hg, name)(t, axis=axis), hg.jit(lambda x: getattr(hg, name)(x, axis=axis))(t)):
        np.testing.assert_allclose(np.asarray(got.numpy(copy=True)), want)


def test_numpy_top_level_names():
    """hg.abs, hg.min and hg.max exist at the top level, as numpy's np.abs/np.min/np.max."""
    x = np.array([[-1.5, 2.0, -0.0], [3.0, -4.0, 7.5]], np.float32)
    t = hg.asarray(x)
    np.testing.assert_array_equal(hg.abs(t).numpy(), np.abs(x))
    assert hg.min(t).item() == np.min(x) and hg.max(t).item() == np.max(x)
    np.testing.assert_array_equal(hg.max(t, axis=1).numpy(), np.max(x, axis=1))
    np.testing.assert_array_equal(hg.min(t, axis=0).numpy(), np.min(x, axis=0))
