"""Backward ops, registered in torch's dispatcher like the forward ones (_ops.py) and computed by
hologram. The activation, softmax / log_softmax, layer_norm / rms_norm and cross-entropy
gradients are the C library's backward ops (hg_activation_backward, ... in ops.h: one fused
kernel or row kernel each, on any backend); the loss, clamp and dropout gradients are
elementwise formulas fused by the graph compiler (_fused.py: one kernel each), on views of the
torch tensors.
The table (_aten/) calls them as the lowerings of ATen's backward ops; dropout's gradient is
registered on its op here.
"""
import torch

import hologram as hg
from hologram import _C

from . import _bridge as B
from . import _fused

_U = _C.unary_ops
from ._ops import (LIB, _define, _hg_args, _vmap_elementwise, dropout_run, dropout_seed,
                   nll_weights)
from ._ops import _vmap_front as _front


# The autograd kinds -> the C library's unary op (hg_activation_backward reads x and/or y as its
# formula needs; GELU's erf form takes Phi(x) = y / x from the saved output, so no erf).
_ACT_OP = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "exp": "exp", "log": "log",
           "sqrt": "sqrt", "neg": "neg", "abs": "abs", "softplus": "softplus", "silu": "silu",
           "gelu_none": "gelu_erf", "gelu_tanh": "gelu"}


def _act_fake(g, x, y, kind, ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _act_impl(g, x, y, kind, ex=0):
    fn = "hologram_torch.activation_backward"
    op = _ACT_OP.get(kind)
    if op is None:
        raise ValueError(f"{fn}: unknown kind {kind!r}")
    e, dev, (hg_g, hx, hy) = _hg_args(fn, ex, g, x, y)
    out, out_h = B.empty_pair(x.shape, x.dtype, e)
    if out.numel():
        _C.activation_backward(_U[op], hg_g, hx, hy, out_h)
    return out


activation_backward = _define("activation_backward(Tensor g, Tensor x, Tensor y, str kind, "
                              "int ex=0) -> Tensor", _act_impl, _act_fake)
_vmap_elementwise("activation_backward", 3)


def _softmax_bw_fake(g, y, dim, log, ex=0):
    return torch.empty_like(y, memory_format=torch.contiguous_format)


def _softmax_bw_impl(g, y, dim, log, ex=0):
    """softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g), sums along dim (the C
    library's hg_softmax_backward / hg_log_softmax_backward)."""
    fn = "hologram_torch.softmax_backward"
    e, dev, (hg_g, hy) = _hg_args(fn, ex, g, y)
    out, out_h = B.empty_pair(y.shape, y.dtype, e)
    if out.numel():
        _C.softmax_backward(hg_g, hy, dim % max(y.dim(), 1), log, out_h)
    return out


softmax_backward = _define("softmax_backward(Tensor g, Tensor y, int dim, bool log, int ex=0) "
                           "-> Tensor", _softmax_bw_impl, _softmax_bw_fake)


def _softmax_bw_vmap(info, in_dims, g, y, dim, log, ex=0):
    nd = y.dim() - (in_dims[1] is not None)
    g, y = _front(g, in_dims[0], info.batch_size), _front(y, in_dims[1], info.batch_size)
    if nd == 0:   # 0-d elements: along an added dim of size 1
        return softmax_backward(g.unsqueeze(1), y.unsqueeze(1), 1, log, ex).squeeze(1), 0
    return softmax_backward(g, y, dim % nd + 1, log, ex), 0


torch.library.register_vmap("hologram::softmax_backward", _softmax_bw_vmap, lib=LIB)


def _vmap_loss_backward(name, nweights):
    """vmap of the binary cross-entropy gradients (g, input, target, weights..., reduction):
    unreduced on the batched operands, each element's g spread over its elements ('mean':
    divided by their count); input and target share a shape, the weights broadcast."""
    def rule(info, in_dims, g, x, t, *rest):
        size = info.batch_size
        rest = tuple(rest) + (None,) * (nweights - min(len(rest), nweights))
        dims = tuple(in_dims) + (None,) * (3 + nweights - len(in_dims))
        weights, reduction = rest[:nweights], rest[nweights] if len(rest) > nweights else "mean"
        ex = rest[nweights + 1] if len(rest) > nweights + 1 else 0
        xb, tb = _front(x, dims[1], size), _front(t, dims[2], size)
        ws = []
        for w, d in zip(weights, dims[3:3 + nweights]):
            if w is not None and d is not None:
                w = w.movedim(d, 0)
                w = w.reshape((size,) + (1,) * (xb.dim() - w.dim()) + tuple(w.shape[1:]))
            ws.append(w)
        gb = _front(g, dims[0], size)
        if reduction != "none":
            if reduction == "mean":
                n = max(xb.numel() // max(size, 1), 1)
                gb = torch.ops.hologram.div(gb, B.scalar(float(n), gb.dtype, gb.device), ex)
            gb = gb.reshape((size,) + (1,) * (xb.dim() - 1))
        gb = gb.expand(xb.shape)
        return getattr(torch.ops.hologram, name)(gb, xb, tb, *ws, "none", ex), 0

    torch.library.register_vmap(f"hologram::{name}", rule, lib=LIB)


# ---- vmap of cross_entropy and its gradient: the batch folded into the samples -------------
def _ce_vmap_layout(info, in_dims, logits, target):
    """(logits, target) with the batch first and folded into the sample dim: (B*N, C, d...) and
    (B*N, d...) or, for one sample per element, (B, C) and (B,); plus the per-element sample
    shape (N, d...) or () and whether the targets are probabilities."""
    size = info.batch_size
    lg, tg = _front(logits, in_dims[0], size), _front(target, in_dims[1], size)
    probs = tg.is_floating_point()
    if lg.dim() == 2:
        return lg, tg, (), probs
    samples = (lg.shape[1],) + tuple(lg.shape[3:])
    lg = lg.reshape((-1,) + tuple(lg.shape[2:]))
    tg = tg.reshape((-1,) + tuple(tg.shape[2:]))
    return lg, tg, samples, probs


def _ce_counts(tg, samples, probs, ignore_index, size, dtype):
    """Per batch element, what 'mean' divides by: the targets not ignored (class indices) or
    the samples (probabilities)."""
    if probs:
        n = 1
        for s in samples:
            n *= s
        return torch.full((size,), float(n), dtype=dtype, device=tg.device)
    return (tg != ignore_index).reshape(size, -1).sum(1).to(dtype)


def _ce_vmap(info, in_dims, logits, target, ignore_index=-100, reduction="mean", ex=0):
    size = info.batch_size
    lg, tg, samples, probs = _ce_vmap_layout(info, in_dims, logits, target)
    per = torch.ops.hologram.cross_entropy(lg, tg, ignore_index, "none", ex).reshape(
        (size,) + samples)
    if reduction == "none":
        return per, 0
    total = (torch.ops.hologram.sum(per, list(range(1, per.dim())), False, ex) if samples
             else per)
    if reduction == "sum":
        return total, 0
    counts = _ce_counts(tg, samples, probs, ignore_index, size, per.dtype)
    return torch.ops.hologram.div(total, counts, ex), 0   # 0 / 0 = NaN as torch


torch.library.register_vmap("hologram::cross_entropy", _ce_vmap, lib=LIB)


def _bce_bw_fake(g, p, t, weight=None, reduction="mean", ex=0):
    return torch.empty_like(p, memory_format=torch.contiguous_format)


def _bce_bw_impl(g, p, t, weight=None, reduction="mean", ex=0):
    """_fused.bce_grad ('mean': g / numel), in p's dtype."""
    e, dev, (hg_g, hp, ht, hw) = _hg_args("hologram_torch.binary_cross_entropy_backward", ex,
                                          g, p, t, weight)
    n = max(p.numel(), 1) if reduction == "mean" else 1
    return B.to_torch(_fused.bce_grad(hg_g, hp, ht, hw, n, B.DTYPES[p.dtype]))


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
    _, wt = nll_weights(ht, hw, ignore_index, x.dtype)   # (N, ...) weights, 0 where ignored
    C = x.shape[cdim]
    cls_shape = [1] * x.dim()
    cls_shape[cdim] = C
    cls = hg.arange(C, dtype=ht.dtype_name, executor=e).reshape(tuple(cls_shape))
    if reduction == "none":
        scale = hg_g.expand_dims(cdim) if cdim else hg_g
    elif reduction == "sum":
        scale = hg_g
    else:   # every target ignored (summed weight 0): no row takes g / 0, as torch
        den = hg.sum(wt)
        scale = hg.divide(hg_g, hg.where(hg.equal(den, 0), 1, den))
    dt = B.DTYPES[x.dtype]
    return B.to_torch(_fused.nll_grad(cls, ht.expand_dims(cdim) if cdim else ht,
                                      wt.expand_dims(cdim) if cdim else wt, scale, dt))


nll_loss_backward = _define(
    "nll_loss_backward(Tensor g, Tensor x, Tensor target, Tensor? weight=None, "
    "int ignore_index=-100, str reduction='mean', int ex=0) -> Tensor", _nll_bw_impl,
    _nll_bw_fake)


def _nll_bw_vmap(info, in_dims, g, x, target, weight=None, ignore_index=-100,
                 reduction="mean", ex=0):
    """The batch folded into the samples: each element's g spread over its samples ('mean':
    divided by its summed counted weights, 1 when 0), then the unreduced gradient. A batched
    weight: per element."""
    size = info.batch_size
    if len(in_dims) > 3 and in_dims[3] is not None:
        outs = [nll_loss_backward(*(a.select(d, i) if isinstance(d, int) else a for a, d in
                                    zip((g, x, target, weight, ignore_index, reduction, ex),
                                        tuple(in_dims) + (None,) * 3)))
                for i in range(size)]
        return torch.stack(outs), 0
    xb, tb, gb = _front(x, in_dims[1], size), _front(target, in_dims[2], size), \
        _front(g, in_dims[0], size)
    samples = () if xb.dim() == 2 else (xb.shape[1],) + tuple(xb.shape[3:])
    if reduction != "none":
        if reduction == "mean":
            kept = tb != ignore_index
            w = (weight.to(xb.dtype)[tb.clamp(min=0)] if weight is not None else
                 torch.ones_like(tb, dtype=xb.dtype))
            den = (w * kept).reshape(size, -1).sum(1)
            gb = torch.ops.hologram.div(gb, torch.where(den == 0, 1.0, den).to(gb.dtype), ex)
        gb = gb.reshape((size,) + (1,) * len(samples)).expand((size,) + samples)
    xf = xb if not samples else xb.reshape((-1,) + tuple(xb.shape[2:]))
    tf = tb if not samples else tb.reshape((-1,) + tuple(tb.shape[2:]))
    gf = gb if not samples else gb.reshape((-1,) + samples[1:])
    out = nll_loss_backward(gf, xf, tf, weight, ignore_index, "none", ex)
    return out.reshape(xb.shape), 0


torch.library.register_vmap("hologram::nll_loss_backward", _nll_bw_vmap, lib=LIB)


def _dropout_bw_fake(g, p, seed, ex=0):
    return torch.empty_like(g, memory_format=torch.contiguous_format)


def _dropout_bw_impl(g, p, seed, ex=0):
    """g / (1 - p) where the forward kept the element (its numbers regenerated from the seed)."""
    fn = "hologram_torch.dropout_backward"
    s = dropout_seed(fn, seed)
    e, dev, (hg_g,) = _hg_args(fn, ex, g)
    return B.to_torch(dropout_run(hg_g, p, s))


dropout_backward = _define("dropout_backward(Tensor g, float p, Tensor seed, int ex=0) -> "
                           "Tensor",
                           _dropout_bw_impl, _dropout_bw_fake)


_vmap_loss_backward("binary_cross_entropy_backward", 1)


# dropout's gradient, registered on the ops (torch's autograd runs it: no Python Function, so
# jit.trace and torch.func see the ops): the backward of dropout and of dropout_backward is
# dropout_backward with the same seed (the same mask and scale), differentiable again
def _dropout_setup(ctx, inputs, output):
    x, p, seed, *ex = inputs
    ctx.p, ctx.ex = p, ex[0] if ex else 0
    ctx.save_for_backward(seed)


def _dropout_grad(ctx, g):
    (seed,) = ctx.saved_tensors
    return dropout_backward.overload(g.contiguous(), ctx.p, seed, ctx.ex), None, None, None


for _name in ("dropout", "dropout_backward"):
    torch.library.register_autograd(f"hologram::{_name}", _dropout_grad,
                                    setup_context=_dropout_setup, lib=LIB)
