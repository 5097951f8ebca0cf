"""Backward ops, registered in torch's dispatcher like the forward ones (_ops.py) and computed by
hologram: activation, softmax / log_softmax, layer_norm / rms_norm and cross-entropy gradients.
Each is a short sequence of hologram ops on views of the torch tensors; the formulas are the
usual ones (written next to each). _autograd.py calls them from the autograd.Functions.
"""
import math
import struct

import torch

import hologram as hg

from . import _bridge as B
from ._ops import _define, _hg_args, dropout_mask_scale, nll_picked

_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_BCE_EPS = struct.unpack("f", struct.pack("f", 1e-12))[0]


def _act_grad(kind, g, x, y):
    """dL/dx for y = act(x), from g = dL/dy (hologram Tensors)."""
    if kind == "relu":
        return hg.where(hg.greater(x, 0), g, 0)
    if kind == "sigmoid":                       # y (1 - y)
        return hg.multiply(g, hg.multiply(y, hg.subtract(1, y)))
    if kind == "tanh":                          # 1 - y^2
        return hg.multiply(g, hg.subtract(1, hg.multiply(y, y)))
    if kind == "exp":
        return hg.multiply(g, y)
    if kind == "log":
        return hg.divide(g, x)
    if kind == "sqrt":                          # 1 / (2 y)
        return hg.divide(g, hg.multiply(y, 2))
    if kind == "neg":
        return hg.negative(g)
    if kind == "abs":
        return hg.multiply(g, hg.sign(x))
    if kind == "softplus":                      # sigmoid(x)
        return hg.multiply(g, hg.sigmoid(x))
    if kind == "silu":                          # s (1 + x (1 - s)), s = sigmoid(x)
        s = hg.sigmoid(x)
        return hg.multiply(g, hg.multiply(s, hg.add(1, hg.multiply(x, hg.subtract(1, s)))))
    if kind == "gelu_none":                     # Phi(x) + x phi(x), Phi(x) = y / x (no erf)
        cdf = hg.where(hg.equal(x, 0), 0.5, hg.divide(y, x))
        pdf = hg.multiply(hg.exp(hg.multiply(hg.multiply(x, x), -0.5)), _INV_SQRT_2PI)
        return hg.multiply(g, hg.add(cdf, hg.multiply(x, pdf)))
    if kind == "gelu_tanh":   # 0.5 (1 + t) + 0.5 x (1 - t^2) u', u = c (x + 0.044715 x^3)
        x2 = hg.multiply(x, x)
        t = hg.tanh(hg.multiply(hg.multiply(x, hg.add(1, hg.multiply(x2, 0.044715))),
                                _SQRT_2_PI))
        du = hg.multiply(hg.add(1, hg.multiply(x2, 3 * 0.044715)), _SQRT_2_PI)
        a = hg.multiply(hg.add(1, t), 0.5)
        b = hg.multiply(hg.multiply(hg.multiply(x, 0.5), hg.subtract(1, hg.multiply(t, t))), du)
        return hg.multiply(g, hg.add(a, b))
    raise ValueError(f"activation_backward: unknown kind {kind!r}")


_ACT_GRAD_FUSED = {}


def _act_grad_fused(kind):
    """_act_grad(kind) as one fused kernel (@hg.jit): a single pass over g, x and y instead of
    one per op (gelu's 12 ops on 256 x 1024 f32: 592 -> 368 us)."""
    f = _ACT_GRAD_FUSED.get(kind)
    if f is None:
        f = _ACT_GRAD_FUSED[kind] = hg.jit(lambda g, x, y: _act_grad(kind, g, x, y))
    return f


def _act_fake(g, x, y, kind, ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _act_impl(g, x, y, kind, ex=0):
    fn = "hologram_torch.activation_backward"
    e, dev, (hg_g, hx, hy) = _hg_args(fn, ex, g, x, y)
    out = B.empty(x.shape, x.dtype, dev)
    if out.numel():
        r = _act_grad_fused(kind)(hg_g, hx, hy)
        hg.ops.copy(r, out=B.to_hg(out, e))
    return out


activation_backward = _define("activation_backward(Tensor g, Tensor x, Tensor y, str kind, "
                              "int ex=0) -> Tensor", _act_impl, _act_fake)


def _softmax_bw_fake(g, y, dim, log, ex=0):
    return torch.empty_like(y, memory_format=torch.contiguous_format)


def _softmax_bw_impl(g, y, dim, log, ex=0):
    """softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g), sums along dim."""
    fn = "hologram_torch.softmax_backward"
    e, dev, (hg_g, hy) = _hg_args(fn, ex, g, y)
    out = B.empty(y.shape, y.dtype, dev)
    if out.numel():
        d = dim % max(y.dim(), 1)
        if log:
            r = hg.subtract(hg_g, hg.multiply(hg.exp(hy), hg.sum(hg_g, axis=d, keepdims=True)))
        else:
            s = hg.sum(hg.multiply(hg_g, hy), axis=d, keepdims=True)
            r = hg.multiply(hy, hg.subtract(hg_g, s))
        hg.ops.copy(r, out=B.to_hg(out, e))
    return out


softmax_backward = _define("softmax_backward(Tensor g, Tensor y, int dim, bool log, int ex=0) "
                           "-> Tensor", _softmax_bw_impl, _softmax_bw_fake)


def _norm_bw_fake(g, x, normalized_shape, weight, eps, rms, ex=0):
    gw = x.new_empty(tuple(normalized_shape))
    return torch.empty_like(x, memory_format=torch.contiguous_format), gw, x.new_empty(
        tuple(normalized_shape))


def _norm_bw_impl(g, x, normalized_shape, weight, eps, rms, ex=0):
    """xhat = (x - mean) rstd (rms: x rstd); gxhat = g w; gx = rstd (gxhat - mean(gxhat) -
    xhat mean(gxhat xhat)) (rms: no mean(gxhat) term); gw = sum(g xhat), gb = sum(g) over the
    leading dims. Statistics in f32 for f32/f16/bf16 (f64 for f64), as the forward."""
    fn = "hologram_torch.norm_backward"
    e, dev, (hg_g, hx, hw) = _hg_args(fn, ex, g, x, weight)
    nd = len(normalized_shape)
    axes = tuple(range(x.dim() - nd, x.dim()))
    lead = tuple(range(x.dim() - nd))
    cdt = "f64" if x.dtype == torch.float64 else "f32"
    xf = hg.cast(hx, cdt)
    gf = hg.cast(hg_g, cdt)
    if rms:
        ms = hg.mean(hg.multiply(xf, xf), axis=axes, keepdims=True)
        rstd = hg.rsqrt(hg.add(ms, eps))
        xhat = hg.multiply(xf, rstd)
    else:
        mu = hg.mean(xf, axis=axes, keepdims=True)
        xc = hg.subtract(xf, mu)
        var = hg.mean(hg.multiply(xc, xc), axis=axes, keepdims=True)
        rstd = hg.rsqrt(hg.add(var, eps))
        xhat = hg.multiply(xc, rstd)
    gxh = hg.multiply(gf, hg.cast(hw, cdt)) if hw is not None else gf
    t = hg.multiply(xhat, hg.mean(hg.multiply(gxh, xhat), axis=axes, keepdims=True))
    inner = hg.subtract(gxh, t) if rms else hg.subtract(
        hg.subtract(gxh, hg.mean(gxh, axis=axes, keepdims=True)), t)
    gx = B.empty(x.shape, x.dtype, dev)
    gw = B.empty(tuple(normalized_shape), x.dtype if weight is None else weight.dtype, dev)
    gb = B.empty(tuple(normalized_shape), gw.dtype, dev)
    if gx.numel():
        hg.ops.copy(hg.multiply(inner, rstd), out=B.to_hg(gx, e))
    if gw.numel():
        if lead:
            hg.sum(hg.multiply(gf, xhat), axis=lead, out=B.to_hg(gw, e))
            hg.sum(gf, axis=lead, out=B.to_hg(gb, e))
        else:
            hg.ops.copy(hg.multiply(gf, xhat), out=B.to_hg(gw, e))
            hg.ops.copy(gf, out=B.to_hg(gb, e))
    return gx, gw, gb


norm_backward = _define("norm_backward(Tensor g, Tensor x, int[] normalized_shape, "
                        "Tensor? weight, float eps, bool rms, int ex=0) -> (Tensor, Tensor, Tensor)",
                        _norm_bw_impl, _norm_bw_fake)


def _ce_bw_fake(g, logits, target, ignore_index, reduction, ex=0):
    return torch.empty_like(logits, memory_format=torch.contiguous_format)


def _ce_bw_impl(g, logits, target, ignore_index, reduction, ex=0):
    """(softmax(logits) - onehot(target)) along the class dim, times g; rows whose target is
    ignore_index get 0; 'mean' divides by the number of rows counted."""
    fn = "hologram_torch.cross_entropy_backward"
    e, dev, (hg_g, hl, ht) = _hg_args(fn, ex, g, logits, target)
    out = B.empty(logits.shape, logits.dtype, dev)
    if not out.numel():
        return out
    cdim = 1 if logits.dim() >= 2 else 0
    p = hg.softmax(hl, axis=cdim)
    if target.dtype.is_floating_point:           # class probabilities
        r = hg.subtract(p, ht)
        scale = hg_g
        if reduction == "mean":
            n = logits.numel() // logits.shape[cdim]
            scale = hg.divide(hg_g, n)
        hg.ops.copy(hg.multiply(r, scale.expand_dims(cdim) if reduction == "none"
                                else scale), out=B.to_hg(out, e))
        return out
    tgt = ht.expand_dims(cdim)               # (N, 1, ...) class indices
    C = logits.shape[cdim]
    cls_shape = [1] * logits.dim()
    cls_shape[cdim] = C
    cls = hg.arange(C, dtype=ht.dtype_name, executor=e).reshape(tuple(cls_shape))
    onehot = hg.cast(hg.equal(cls, tgt), p.dtype_name)
    keep = hg.cast(hg.not_equal(tgt, ignore_index), p.dtype_name)
    r = hg.multiply(hg.subtract(p, onehot), keep)
    if reduction == "none":
        r = hg.multiply(r, hg_g.expand_dims(cdim))
    else:
        scale = hg_g
        if reduction == "mean":
            count = float(hg.sum(keep).item())
            scale = hg.divide(hg_g, count) if count else hg.multiply(hg_g, float("nan"))
        r = hg.multiply(r, scale)
    hg.ops.copy(r, out=B.to_hg(out, e))
    return out


cross_entropy_backward = _define("cross_entropy_backward(Tensor g, Tensor logits, Tensor target, "
                                 "int ignore_index, str reduction, int ex=0) -> Tensor",
                                 _ce_bw_impl, _ce_bw_fake)


def _clamp_bw_fake(g, x, min=None, max=None, ex=0):   # noqa: A002
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _clamp_bw_impl(g, x, min=None, max=None, ex=0):   # noqa: A002
    """g where min <= x <= max (torch's clamp passes the gradient at the bounds), else 0."""
    e, dev, (hg_g, hx) = _hg_args("hologram_torch.clamp_backward", ex, g, x)
    keep = None
    if min is not None:
        keep = hg.greater_equal(hx, min)
    if max is not None:
        le = hg.less_equal(hx, max)
        keep = le if keep is None else hg.logical_and(keep, le)
    return B.to_torch(hg.where(keep, hg_g, 0))


clamp_backward = _define("clamp_backward(Tensor g, Tensor x, float? min=None, float? max=None, "
                         "int ex=0) -> Tensor", _clamp_bw_impl, _clamp_bw_fake)


def _bcel_bw_fake(g, x, t, weight=None, pos_weight=None, reduction="mean", ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _bcel_bw_impl(g, x, t, weight=None, pos_weight=None, reduction="mean", ex=0):
    """d/dx of w (-(p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))) =
    w ((p t + 1 - t) sigmoid(x) - p t), times g ('mean': / numel)."""
    e, dev, (hg_g, hx, ht, hw, hp) = _hg_args("hologram_torch.bce_with_logits_backward", ex,
                                             g, x, t, weight, pos_weight)
    s = hg.sigmoid(hx)
    if hp is None:
        r = hg.subtract(s, ht)
    else:
        pt = hg.multiply(hp, ht)
        r = hg.subtract(hg.multiply(hg.add(hg.subtract(pt, ht), 1), s), pt)
    if hw is not None:
        r = hg.multiply(r, hw)
    scale = hg_g
    if reduction == "mean":
        scale = hg.divide(hg_g, max(x.numel(), 1))
    return B.to_torch(hg.multiply(r, scale))


bce_with_logits_backward = _define(
    "bce_with_logits_backward(Tensor g, Tensor x, Tensor t, Tensor? weight=None, "
    "Tensor? pos_weight=None, str reduction='mean', int ex=0) -> Tensor", _bcel_bw_impl,
    _bcel_bw_fake)


def _bce_bw_fake(g, p, t, weight=None, reduction="mean", ex=0):
    return torch.empty_like(p, memory_format=torch.contiguous_format)


def _bce_bw_impl(g, p, t, weight=None, reduction="mean", ex=0):
    """d/dp of -w (t log p + (1 - t) log(1 - p)) = w (p - t) / max(p (1 - p), eps), times g
    ('mean': / numel). eps is torch's: 1e-12 as a float32 (9.9999999600e-13, also for f64 inputs;
    the exact 1e-12 differs from torch by 4e-9 relative where p is 0 or 1)."""
    e, dev, (hg_g, hp, ht, hw) = _hg_args("hologram_torch.binary_cross_entropy_backward", ex,
                                          g, p, t, weight)
    den = hg.maximum(hg.multiply(hp, hg.subtract(1, hp)), _BCE_EPS)
    r = hg.divide(hg.subtract(hp, ht), den)
    if hw is not None:
        r = hg.multiply(r, hw)
    scale = hg.divide(hg_g, max(p.numel(), 1)) if reduction == "mean" else hg_g
    return B.to_torch(hg.ops.cast(hg.multiply(r, scale), B.DTYPES[p.dtype]))


binary_cross_entropy_backward = _define(
    "binary_cross_entropy_backward(Tensor g, Tensor p, Tensor t, Tensor? weight=None, "
    "str reduction='mean', int ex=0) -> Tensor", _bce_bw_impl, _bce_bw_fake)


def _nll_bw_fake(g, x, target, weight=None, ignore_index=-100, reduction="mean", ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _nll_bw_impl(g, x, target, weight=None, ignore_index=-100, reduction="mean", ex=0):
    """-w[target] at the target's class, 0 elsewhere and where ignored; times g per sample
    ('none'), g ('sum') or g / sum of the counted weights ('mean')."""
    fn = "hologram_torch.nll_loss_backward"
    e, dev, (hg_g, hx, ht, hw) = _hg_args(fn, ex, g, x, target, weight)
    cdim = 1 if x.dim() >= 2 else 0
    _, wt = nll_picked(hx, ht, hw, cdim, ignore_index, x.dtype)   # (N, ...) weights, 0 ignored
    C = x.shape[cdim]
    cls_shape = [1] * x.dim()
    cls_shape[cdim] = C
    cls = hg.arange(C, dtype=ht.dtype_name, executor=e).reshape(tuple(cls_shape))
    onehot = hg.cast(hg.equal(cls, ht.expand_dims(cdim) if cdim else ht), B.DTYPES[x.dtype])
    r = hg.negative(hg.multiply(onehot, wt.expand_dims(cdim) if cdim else wt))
    if reduction == "none":
        r = hg.multiply(r, hg_g.expand_dims(cdim) if cdim else hg_g)
    elif reduction == "sum":
        r = hg.multiply(r, hg_g)
    else:
        r = hg.multiply(r, hg.divide(hg_g, hg.sum(wt)))
    return B.to_torch(hg.ops.cast(r, B.DTYPES[x.dtype]))


nll_loss_backward = _define(
    "nll_loss_backward(Tensor g, Tensor x, Tensor target, Tensor? weight=None, "
    "int ignore_index=-100, str reduction='mean', int ex=0) -> Tensor", _nll_bw_impl,
    _nll_bw_fake)


def _dropout_bw_fake(g, p, seed, ex=0):
    return torch.empty_like(g, memory_format=torch.contiguous_format)


def _dropout_bw_impl(g, p, seed, ex=0):
    """g / (1 - p) where the forward kept the element (its mask regenerated from the seed)."""
    fn = "hologram_torch.dropout_backward"
    e, dev, (hg_g,) = _hg_args(fn, ex, g)
    keep, scale = dropout_mask_scale(hg_g, p, seed, e)
    return B.to_torch(hg.where(keep, hg.multiply(hg_g, scale), 0))


dropout_backward = _define("dropout_backward(Tensor g, float p, int seed, int ex=0) -> Tensor",
                           _dropout_bw_impl, _dropout_bw_fake)
