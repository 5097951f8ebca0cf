"""nll_loss_forward / nll_loss_backward (cross_entropy is log_softmax + nll_loss in ATen),
mse_loss, binary_cross_entropy and its backward. ATen passes reduction as its enum (an int)."""
import torch

import hologram as hg

from .. import _bridge as B
from .. import _grad_ops, _ops, _ops_loss
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten
_REDUCTION = {0: "none", 1: "mean", 2: "sum"}   # ATen's Reduction enum


def _nll_fw(x, target, weight, reduction, ignore_index):
    out, total = _ops_loss.nll_forward(x, target, weight, ignore_index, _REDUCTION[reduction])
    if reduction == 0 and x.dim() == 2:   # ATen's total_weight of unreduced rows is 0
        return out, x.new_zeros(())
    return out, B.to_torch(_ops_loss._cast(total, x.dtype))


def _nll_bw(g, x, target, weight, reduction, ignore_index, total_weight):
    # the 'mean' denominator is the forward's total_weight, recomputed from the same targets
    return _grad_ops.nll_loss_backward(g, x, target, weight, ignore_index,
                                       _REDUCTION[reduction])


def ce_bw_from_log_softmax(g, lsm, target, reduction, ignore_index):
    """_log_softmax_backward_data(nll_loss_backward(g, lsm, target, None, ...), lsm) in one
    kernel: hg_cross_entropy_backward with lsm as the logits (softmax(lsm) = exp(lsm), the
    softmax ATen's backward takes; 'mean' over the counted rows, as total_weight without a
    weight). The eager gradients' graphs call it (grad.py _fuse_ce_backward)."""
    fn = "aten.nll_loss_backward"
    e, dev, (hg_g, hl, ht) = _ops._hg_args(fn, 0, g, lsm, target)
    out, out_h = B.empty_pair(lsm.shape, lsm.dtype, e)
    if out.numel():
        hg._C.cross_entropy_backward(hg_g, hl, ht, ignore_index, _REDUCTION[reduction], out_h)
    return out


def _targets_ok(x, target, weight):
    return (tensors_ok((x, weight)) and isinstance(target, torch.Tensor) and
            target.dtype in (torch.int64, torch.int32, torch.uint8) and
            target.device == x.device and 1 <= x.dim() <= 2)


def _nll_fw_accepts(node):
    x, target, weight, reduction, ignore_index = args_of(node)
    return _targets_ok(x, target, weight) and reduction in _REDUCTION


def _nll_bw_accepts(node):
    g, x, target, weight, reduction, ignore_index, total = args_of(node)
    return (_targets_ok(x, target, weight) and tensors_ok((g, x)) and
            reduction in _REDUCTION)


def _mse(x, target, reduction=1):
    return _ops.mse_loss(x, target, _REDUCTION[reduction])


def _bce(x, target, weight=None, reduction=1):
    return _ops.binary_cross_entropy(x, target, weight, _REDUCTION[reduction])


def _bce_bw(grad_output, x, target, weight=None, reduction=1):
    return _grad_ops.binary_cross_entropy_backward(grad_output, x, target, weight,
                                                   _REDUCTION[reduction])


def _loss_ok(x, target, weight, reduction, g=None):
    """Input, target, weight (and g) of one float dtype, target and weight of the input's shape
    (hologram's losses do not broadcast them as ATen's mse_loss can), a known reduction."""
    return (tensors_ok((x, target, weight, g)) and target.shape == x.shape and
            (weight is None or weight.shape == x.shape) and reduction in _REDUCTION)


def _mse_accepts(node):
    x, target, *r = args_of(node)
    return _loss_ok(x, target, None, r[0] if r else 1)


def _bce_accepts(node):
    x, target, *r = args_of(node)
    return _loss_ok(x, target, r[0] if r else None, r[1] if len(r) > 1 else 1)


def _bce_bw_accepts(node):
    g, x, target, *r = args_of(node)
    return _loss_ok(x, target, r[0] if r else None, r[1] if len(r) > 1 else 1, g)


ENTRIES = {
    aten.nll_loss_forward.default: Lowering(_nll_fw, _nll_fw_accepts),
    aten.nll_loss_backward.default: Lowering(_nll_bw, _nll_bw_accepts),
    aten.mse_loss.default: Lowering(_mse, _mse_accepts),
    aten.binary_cross_entropy.default: Lowering(_bce, _bce_accepts),
    aten.binary_cross_entropy_backward.default: Lowering(_bce_bw, _bce_bw_accepts),
}
