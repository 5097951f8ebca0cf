"""hologram.ops' backward ops (the C library's hg_*_backward) from Python: against torch's
autograd where torch is installed, and against numpy central differences of hologram's own
forward ops in float64 everywhere; errors raise before anything is written."""
import numpy as np
import pytest

import hologram as hg

try:
    import torch
except ImportError:   # the numpy references below still run
    torch = None

rng = np.random.default_rng(7)
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _fd(f, x, g, h=1e-6):
    """d sum(g * f(x)) / dx by central differences (float64 numpy)."""
    out = np.empty_like(x)
    flat = x.reshape(-1)
    for i in range(flat.size):
        keep = flat[i]
        flat[i] = keep + h
        a = float(np.sum(g * f(x)))
        flat[i] = keep - h
        b = float(np.sum(g * f(x)))
        flat[i] = keep
        out.reshape(-1)[i] = (a - b) / (2 * h)
    return out


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "relu", "gelu", "gelu_erf", "silu", "softplus",
                                "exp", "log", "sqrt", "abs", "neg", "sin", "erf"])
def test_activation_backward_against_differences(op):
    positive = op in ("log", "sqrt")
    x = rng.uniform(0.3 if positive else -3, 3, (4, 5))
    x[np.abs(x) < 0.05] += 0.2
    g = rng.uniform(-1, 1, (4, 5))
    fwd = hg.negative if op == "neg" else getattr(hg, op)
    y = fwd(hg.asarray(x))
    got = hg.ops.activation_backward(op, hg.asarray(g), hg.asarray(x), y).numpy()
    want = _fd(lambda v: fwd(hg.asarray(v)).numpy(), x.copy(), g)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op,tfn", [("tanh", "tanh"), ("sigmoid", "sigmoid"), ("relu", "relu"),
                                    ("gelu_erf", "gelu"), ("silu", "silu")])
def test_activation_backward_against_torch(op, tfn, dtype):
    x = rng.standard_normal((64, 33)).astype(dtype)
    g = rng.standard_normal((64, 33)).astype(dtype)
    tx = torch.tensor(x, requires_grad=True)
    ty = getattr(torch.nn.functional, tfn)(tx) if hasattr(torch.nn.functional, tfn) \
        else getattr(torch, tfn)(tx)
    ty.backward(torch.tensor(g))
    hy = hg.asarray(ty.detach().numpy())
    got = hg.ops.activation_backward(op, hg.asarray(g), hg.asarray(x), hy).numpy()
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, tx.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_backward_against_differences(log, axis):
    x = rng.uniform(-3, 3, (3, 6))
    g = rng.uniform(-1, 1, (3, 6))
    fwd = hg.log_softmax if log else hg.softmax
    y = fwd(hg.asarray(x), axis=axis)
    bwd = hg.ops.log_softmax_backward if log else hg.ops.softmax_backward
    got = bwd(hg.asarray(g), y, axis=axis).numpy()
    want = _fd(lambda v: fwd(hg.asarray(v), axis=axis).numpy(), x.copy(), g)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    # f32, transposed views: the same values to f32 precision
    gt = hg.asarray(np.ascontiguousarray(g.T.astype(np.float32))).T
    yt = hg.asarray(np.ascontiguousarray(y.numpy().T.astype(np.float32))).T
    np.testing.assert_allclose(bwd(gt, yt, axis=axis).numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rms", [False, True])
def test_norm_backward_against_differences(rms):
    x = rng.uniform(-2, 3, (3, 8))
    g = rng.uniform(-1, 1, (3, 8))
    w = rng.uniform(0.5, 1.5, 8)
    if rms:
        fwd = lambda v, wt=w: hg.rms_norm(hg.asarray(v), 8, hg.asarray(wt), eps=1e-5).numpy()  # noqa: E731
        gx, gw = hg.ops.rms_norm_backward(hg.asarray(g), hg.asarray(x), 8, hg.asarray(w), 1e-5)
    else:
        b = np.zeros(8)
        fwd = lambda v, wt=w: hg.layer_norm(hg.asarray(v), 8, hg.asarray(wt), hg.asarray(b)).numpy()  # noqa: E731
        gx, gw, gb = hg.ops.layer_norm_backward(hg.asarray(g), hg.asarray(x), 8, hg.asarray(w))
        np.testing.assert_allclose(gb.numpy(), g.sum(0), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), _fd(fwd, x.copy(), g), rtol=1e-6, atol=1e-7)
    want_w = _fd(lambda wt: fwd(x, wt), w.copy(), g)
    np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-6, atol=1e-7)
    # only grad_weight asked for
    out = (hg.ops.rms_norm_backward(hg.asarray(g), hg.asarray(x), 8, hg.asarray(w), 1e-5,
                                    outputs=(False, True)) if rms else
           hg.ops.layer_norm_backward(hg.asarray(g), hg.asarray(x), 8, hg.asarray(w),
                                      outputs=(False, True, False)))
    assert out[0] is None and out[-1 if rms else 2] is None or rms
    np.testing.assert_allclose(out[1].numpy(), want_w, rtol=1e-6, atol=1e-7)


@needs_torch
@pytest.mark.parametrize("shape,nn", [((256, 1024), 1), ((4, 6, 10), 2), ((7, 3), 1)])
def test_layer_norm_backward_against_torch(shape, nn):
    x = rng.standard_normal(shape).astype(np.float32) * 3 + 1
    g = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(shape[-nn:]).astype(np.float32)
    b = rng.standard_normal(shape[-nn:]).astype(np.float32)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    torch.nn.functional.layer_norm(tx, shape[-nn:], tw, tb).backward(torch.tensor(g))
    gx, gw, gb = hg.ops.layer_norm_backward(hg.asarray(g), hg.asarray(x), shape[-nn:],
                                            hg.asarray(w))
    for got, want in ((gx, tx.grad), (gw, tw.grad), (gb, tb.grad)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_backward_against_differences(reduction):
    x = rng.uniform(-3, 3, (6, 4))
    t = np.array([0, 3, -100, 2, 1, 3], dtype=np.int64)
    ht = hg.asarray(t)
    g = rng.uniform(0.5, 2.0, (6,) if reduction == "none" else ())
    fwd = lambda v: hg.ops.cross_entropy(hg.asarray(v), ht, reduction=reduction).numpy()  # noqa: E731
    got = hg.ops.cross_entropy_backward(hg.asarray(np.asarray(g)), hg.asarray(x), ht,
                                        reduction=reduction).numpy()
    np.testing.assert_allclose(got, _fd(fwd, x.copy(), g), rtol=1e-6, atol=1e-8)
    assert np.all(got[2] == 0)   # the ignored row


def test_errors_write_nothing():
    g = hg.asarray(np.ones((2, 3), np.float32))
    y = hg.asarray(np.ones((3, 2), np.float32))
    out = hg.asarray(np.full((2, 3), 7.0, np.float32))
    with pytest.raises(hg.SizeMismatchError, match="grad has shape"):
        hg.ops.softmax_backward(g, y, out=out)
    with pytest.raises(hg.DtypeError):
        hg.ops.softmax_backward(g, hg.asarray(np.ones((2, 3))), out=out)
    with pytest.raises(ValueError, match="unknown op"):
        hg.ops.activation_backward("nope", g, g, g)
    with pytest.raises(hg.InvalidArgumentError, match="needs 'y'"):
        hg.ops.activation_backward("tanh", g, g, None, out=out)
    with pytest.raises(hg.InvalidArgumentError, match="no gradient"):
        hg.ops.activation_backward("isnan", g, g, g)
    with pytest.raises(hg.OutOfRangeError):
        hg.ops.cross_entropy_backward(hg.asarray(np.float32(1)), g,
                                      hg.asarray(np.array([0, 5])))
    assert np.all(out.numpy() == 7.0)
