"""The loss ops of torch.ops.hologram (mse, cross-entropy, binary cross-entropy with and
without logits, nll) and dropout: schema, implementation on hologram, fake, and vmap rules.
Registered on import of _ops (which re-exports them)."""
import torch

import hologram as hg

from . import _bridge as B
from ._ops import (LIB, _batched_front, _cast, _define, _hg_args, _vmap_front,
                   _vmap_loop)

# ---- losses ----------------------------------------------------------------------------------
REDUCTIONS = ("none", "mean", "sum")


def _mse_fake(a, b, reduction="mean", ex=0):
    shape = torch.broadcast_shapes(a.shape, b.shape)
    return a.new_empty(shape if reduction == "none" else ())


def _mse_impl(a, b, reduction="mean", ex=0):
    fn = "hologram_torch.mse_loss"
    B.check_tensor(a, "input", fn, floats_only=True)
    B.check_tensor(b, "target", fn, floats_only=True)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    e, dev, (ha, hb) = _hg_args(fn, ex, a, b)
    shape = torch.broadcast_shapes(a.shape, b.shape)
    out, out_h = B.empty_pair(shape if reduction == "none" else (), a.dtype, e)
    hg.ops.mse_loss(ha, _cast(hb, a.dtype), reduction=reduction, out=out_h)
    return out


mse_loss = _define("mse_loss(Tensor input, Tensor target, str reduction='mean', int ex=0) -> "
                   "Tensor", _mse_impl, _mse_fake)


def _mse_vmap(info, in_dims, a, b, reduction="mean", ex=0):
    """The elementwise loss on the batched operands, then each element's sum or mean over its
    own (broadcast) elements."""
    a, b = _batched_front((a, b), in_dims[:2], info.batch_size)
    per = torch.ops.hologram.mse_loss(a, b, "none", ex)
    if reduction == "none" or per.dim() == 1:   # 0-d elements: their own value
        return per, 0
    op = torch.ops.hologram.sum if reduction == "sum" else torch.ops.hologram.mean
    return op(per, list(range(1, per.dim())), False, ex), 0


torch.library.register_vmap("hologram::mse_loss", _mse_vmap, lib=LIB)


def _ce_shape(logits, reduction):
    if reduction != "none":
        return ()
    return (logits.shape[0],) + tuple(logits.shape[2:]) if logits.dim() >= 2 else ()


def _ce_fake(logits, target, ignore_index=-100, reduction="mean", ex=0):
    return logits.new_empty(_ce_shape(logits, reduction))


def _ce_impl(logits, target, ignore_index=-100, reduction="mean", ex=0):
    fn = "hologram_torch.cross_entropy"
    B.check_tensor(logits, "input", fn, floats_only=True)
    B.check_tensor(target, "target", fn)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    e, dev, (hl, ht) = _hg_args(fn, ex, logits, target)
    out, out_h = B.empty_pair(_ce_shape(logits, reduction), logits.dtype, e)
    hg.ops.cross_entropy(hl, ht, ignore_index=ignore_index, reduction=reduction,
                         out=out_h)
    return out


cross_entropy = _define("cross_entropy(Tensor input, Tensor target, int ignore_index=-100, "
                        "str reduction='mean', int ex=0) -> Tensor", _ce_impl, _ce_fake)


def _bce_fake(p, t, weight=None, reduction="mean", ex=0):
    return p.new_empty(p.shape if reduction == "none" else ())


def _check_elementwise_loss(fn, x, t, reduction):
    """A loss of one value per input element: float input and target of one shape."""
    B.check_tensor(x, "input", fn, floats_only=True)
    B.check_tensor(t, "target", fn, floats_only=True)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if t.shape != x.shape:
        raise ValueError(f"{fn}: target of shape {list(t.shape)} must have the input's shape "
                         f"{list(x.shape)}")


def _bce_impl(p, t, weight=None, reduction="mean", ex=0):
    fn = "hologram_torch.binary_cross_entropy"
    _check_elementwise_loss(fn, p, t, reduction)
    e, dev, (hp, ht, hw) = _hg_args(fn, ex, p, t, weight)
    out, out_h = B.empty_pair(p.shape if reduction == "none" else (), p.dtype, e)
    hg.ops.binary_cross_entropy(hp, _cast(ht, p.dtype), None if hw is None else _cast(hw, p.dtype),
                                reduction=reduction, out=out_h)
    return out


binary_cross_entropy = _define(
    "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, "
    "str reduction='mean', int ex=0) -> Tensor", _bce_impl, _bce_fake)


def _vmap_elementwise_loss(name, ntensors):
    """vmap of a loss of one value per element (binary cross-entropy, with logits): the loss
    unreduced on the batched operands (the optional weights broadcast as in the unbatched
    call), then each element's sum or mean."""
    def rule(info, in_dims, *args):
        # the arguments as called (trailing defaults may be left out): tensors, reduction, ex
        args = tuple(args) + (None,) * (ntensors - min(len(args), ntensors))
        in_dims = tuple(in_dims) + (None,) * (ntensors - min(len(in_dims), ntensors))
        ts, dims = args[:ntensors], in_dims[:ntensors]
        reduction = args[ntensors] if len(args) > ntensors else "mean"
        ex = args[ntensors + 1] if len(args) > ntensors + 1 else 0
        size = info.batch_size
        # input and target share a shape (both with the batch first); a weight broadcasts:
        # unbatched as in the unbatched call, batched with 1s up to the input's rank
        full = [_vmap_front(ts[0], dims[0], size), _vmap_front(ts[1], dims[1], size)]
        nd = full[0].dim() - 1
        for t, d in zip(ts[2:], dims[2:]):
            if t is not None and d is not None:
                t = t.movedim(d, 0)
                t = t.reshape((size,) + (1,) * (nd - t.dim() + 1) + tuple(t.shape[1:]))
            full.append(t)
        per = getattr(torch.ops.hologram, name)(*full, "none", ex)
        if reduction == "none" or per.dim() == 1:
            return per, 0
        op = torch.ops.hologram.sum if reduction == "sum" else torch.ops.hologram.mean
        return op(per, list(range(1, per.dim())), False, ex), 0

    torch.library.register_vmap(f"hologram::{name}", rule, lib=LIB)


_vmap_elementwise_loss("binary_cross_entropy", 3)


def nll_check(fn, x, target, weight):
    """The class dim of torch's nll_loss / cross_entropy layouts: input (N, C, d1, ...) with
    target (N, d1, ...), or input (C,) with a 0-d target."""
    B.check_tensor(x, "input", fn, floats_only=True)
    B.check_tensor(target, "target", fn)
    if target.dtype.is_floating_point or target.dtype == torch.bool:
        raise TypeError(f"{fn}: target must hold class indices (an integer dtype), got "
                        f"{target.dtype}")
    if x.dim() == 0:
        raise ValueError(f"{fn}: input must have 1 or more dims (C,) or (N, C, ...), got 0-d")
    cdim = 1 if x.dim() >= 2 else 0
    want = (x.shape[0],) + tuple(x.shape[2:]) if cdim else ()
    if tuple(target.shape) != want:
        raise ValueError(f"{fn}: target of shape {list(target.shape)} does not match input of "
                         f"shape {list(x.shape)} (expected {list(want)})")
    if weight is not None:
        B.check_tensor(weight, "weight", fn, floats_only=True)
        if tuple(weight.shape) != (x.shape[cdim],):
            raise ValueError(f"{fn}: weight must have one entry per class ({x.shape[cdim]}), "
                             f"got shape {list(weight.shape)}")
    return cdim


def check_targets(fn, target, C, ignore_index):
    """torch's rule for class targets: each in [0, C) or ignore_index (a negative one raises
    IndexError, where hologram's take would count it from the end)."""
    if not target.numel():
        return
    lo, hi = torch.aminmax(target)   # the common case in one op (five for the exact rule)
    if int(lo) >= 0 and int(hi) < C:
        return
    bad = ((target < 0) | (target >= C)) & (target != ignore_index)
    if bool(bad.any()):
        v = int(target[bad].reshape(-1)[0])
        raise IndexError(f"{fn}: target {v} is out of bounds (valid: 0..{C - 1}, or "
                         f"ignore_index {ignore_index})")


def nll_weights(ht, hw, ignore_index, dt):
    """(the targets with ignored entries as class 0, w[target] per sample with 0 where ignored
    in dt) as hologram tensors of target's shape."""
    keep = hg.not_equal(ht, ignore_index)
    safe = hg.where(keep, ht, 0)                  # ignored entries pick class 0, then drop
    wt = hg.cast(keep, B.DTYPES[dt])
    if hw is not None:
        wt = hg.multiply(wt, hg.take(_cast(hw, dt), safe.reshape(-1)).reshape(tuple(safe.shape)))
    return safe, wt


def nll_picked(hx, ht, hw, cdim, ignore_index, dt):
    """(-x[target] * w[target] per sample with 0 where ignored, w[target] per sample with 0
    where ignored) as hologram tensors of target's shape, in dt."""
    if not cdim:   # (C,) with a 0-d target: as (1, C) with (1,)
        hx, ht = hx.reshape((1,) + tuple(hx.shape)), ht.reshape((1,))
    safe, wt = nll_weights(ht, hw, ignore_index, dt)
    picked = hg.take_along_axis(hx, safe.expand_dims(1), axis=1).squeeze(1)
    loss = hg.negative(hg.multiply(_cast(picked, dt), wt))
    if not cdim:
        loss, wt = loss.reshape(()), wt.reshape(())
    return loss, wt


def _nll_fake(x, target, weight=None, ignore_index=-100, reduction="mean", ex=0):
    return x.new_empty(_ce_shape(x, reduction))


def _nll_impl(x, target, weight=None, ignore_index=-100, reduction="mean", ex=0):
    return nll_forward(x, target, weight, ignore_index, reduction, ex)[0]


def nll_forward(x, target, weight, ignore_index, reduction, ex=0):
    """(the loss, the summed weights of the counted targets as a hologram 0-d tensor): nll_loss
    and ATen's nll_loss_forward (_aten/losses.py), whose second result is that sum."""
    fn = "hologram_torch.nll_loss"
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    cdim = nll_check(fn, x, target, weight)
    check_targets(fn, target, x.shape[cdim], ignore_index)
    e, dev, (hx, ht, hw) = _hg_args(fn, ex, x, target, weight)
    loss, wt = nll_picked(hx, ht, hw, cdim, ignore_index, x.dtype)
    total = hg.sum(wt)
    if reduction == "sum":
        loss = hg.sum(loss)
    elif reduction == "mean":           # torch: the sum over the summed weights (NaN when 0)
        loss = hg.divide(hg.sum(loss), total)
    out, out_h = B.empty_pair(_ce_shape(x, reduction), x.dtype, e)
    hg.ops.copy(_cast(loss, x.dtype), out=out_h)
    return out, total


nll_loss = _define("nll_loss(Tensor input, Tensor target, Tensor? weight=None, "
                   "int ignore_index=-100, str reduction='mean', int ex=0) -> Tensor",
                   _nll_impl, _nll_fake)


def _nll_vmap(info, in_dims, x, target, weight=None, ignore_index=-100, reduction="mean",
              ex=0):
    """The batch folded into the samples, the loss unreduced, then each element's sum or its
    mean over the summed weights of its counted targets (NaN when 0, as torch). A batched
    weight: per element."""
    if len(in_dims) > 2 and in_dims[2] is not None:
        return _vmap_loop(torch.ops.hologram.nll_loss, info, in_dims,
                          (x, target, weight, ignore_index, reduction, ex))
    size = info.batch_size
    xb, tb = _vmap_front(x, in_dims[0], size), _vmap_front(target, in_dims[1], size)
    samples = () if xb.dim() == 2 else (xb.shape[1],) + tuple(xb.shape[3:])
    xf = xb if not samples else xb.reshape((-1,) + tuple(xb.shape[2:]))
    tf = tb if not samples else tb.reshape((-1,) + tuple(tb.shape[2:]))
    per = torch.ops.hologram.nll_loss(xf, tf, weight, ignore_index, "none", ex).reshape(
        (size,) + samples)
    if reduction == "none":
        return per, 0
    total = torch.ops.hologram.sum(per, list(range(1, per.dim())), False, ex) if samples else per
    if reduction == "sum":
        return total, 0
    kept = tb != ignore_index
    w = (weight.to(per.dtype)[tb.clamp(min=0)] if weight is not None else
         torch.ones_like(tb, dtype=per.dtype))
    den = (w * kept).reshape(size, -1).sum(1)
    return torch.ops.hologram.div(total, den, ex), 0


torch.library.register_vmap("hologram::nll_loss", _nll_vmap, lib=LIB)


def dropout_run(hx, p, seed):
    """hx with dropout's mask of the seed applied, hx * scale where kept (hg.ops.dropout: one
    pass, the same mask on every call with this seed, so the backward applies the forward's
    mask to the gradient by running it again)."""
    return hg._C.dropout(hx, p, seed, 0, None, None)


def dropout_seed(fn, seed):
    """The int of dropout's seed tensor: a one-element int64 CPU tensor drawn by torch's
    generator (functional.dropout). A tensor, not an int, so that the draw is a torch op that
    torch.compile, jit.trace and torch.export record (an int is frozen into their graphs, and
    reading it with .item() breaks torch.compile's graph)."""
    if seed.dtype != torch.int64 or seed.numel() != 1 or seed.device.type != "cpu":
        raise ValueError(f"{fn}: seed must be a one-element int64 CPU tensor, got "
                         f"{seed.dtype} of shape {list(seed.shape)} on {seed.device}")
    return int(seed)


def _dropout_fake(x, p, seed, ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _dropout_impl(x, p, seed, ex=0):
    fn = "hologram_torch.dropout"
    B.check_tensor(x, "input", fn, floats_only=True)
    s = dropout_seed(fn, seed)
    e, dev, (hx,) = _hg_args(fn, ex, x)
    return B.to_torch(dropout_run(hx, p, s))


dropout = _define("dropout(Tensor input, float p, Tensor seed, int ex=0) -> Tensor",
                  _dropout_impl, _dropout_fake)


def _bcel_fake(x, t, weight=None, pos_weight=None, reduction="mean", ex=0):
    return x.new_empty(x.shape if reduction == "none" else ())


def _bcel_impl(x, t, weight=None, pos_weight=None, reduction="mean", ex=0):
    fn = "hologram_torch.binary_cross_entropy_with_logits"
    _check_elementwise_loss(fn, x, t, reduction)
    e, dev, (hx, ht, hw, hp) = _hg_args(fn, ex, x, t, weight, pos_weight)
    dt = x.dtype
    return B.to_torch(hg.ops.binary_cross_entropy_with_logits(
        hx, _cast(ht, dt), None if hw is None else _cast(hw, dt),
        None if hp is None else _cast(hp, dt), reduction=reduction))


binary_cross_entropy_with_logits = _define(
    "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, str reduction='mean', int ex=0) -> Tensor", _bcel_impl, _bcel_fake)
_vmap_elementwise_loss("binary_cross_entropy_with_logits", 4)
