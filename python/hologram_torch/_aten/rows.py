"""Row ops: softmax / log_softmax and their backward (the C library's row kernels), layer norm
forward (with the mean and rstd ATen saves for the backward) and backward."""
import math
import operator

import torch

from hologram import _C

from .. import _bridge as B
from .. import _grad_ops, _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten


def _softmax(x, dim, half_to_float):
    return _ops.softmax(x, dim)


def _log_softmax(x, dim, half_to_float):
    return _ops.log_softmax(x, dim)


def _softmax_accepts(node):
    x, dim, half_to_float = args_of(node)
    return tensors_ok((x,)) and not half_to_float


def _softmax_bw(g, y, dim, input_dtype):
    return _grad_ops.softmax_backward(g, y, dim, False)


def _log_softmax_bw(g, y, dim, input_dtype):
    return _grad_ops.softmax_backward(g, y, dim, True)


def _softmax_bw_accepts(node):
    g, y, dim, input_dtype = args_of(node)
    return tensors_ok((g, y)) and input_dtype == g.dtype


def _stats_shape(x, nnorm):
    """ATen's shape of the saved mean and rstd: x's leading dims, the normalized ones as 1."""
    return tuple(x.shape[:x.dim() - nnorm]) + (1,) * nnorm


def _native_layer_norm(x, normalized_shape, weight, bias, eps):
    """out and the mean and rstd ATen saves for the backward, from one pass of the C row kernel
    (hg_layer_norm_stats)."""
    nn = len(normalized_shape)
    e, dev, (hx, hw, hb) = _ops._hg_args("aten.native_layer_norm", 0, x, weight, bias)
    out, out_h = B.empty_pair(x.shape, x.dtype, e)
    mean, mean_h = B.empty_pair(_stats_shape(x, nn), x.dtype, e)
    rstd, rstd_h = B.empty_pair(_stats_shape(x, nn), x.dtype, e)
    if mean.numel():
        _C.layer_norm_stats(hx, nn, hw, hb, eps, out_h, mean_h, rstd_h)
    return out, mean, rstd


def _native_layer_norm_out(x, normalized_shape, weight, bias, eps):
    """The graph reads only the normalized output (inference): no statistics computed."""
    return _ops.layer_norm(x, normalized_shape, weight, bias, eps), None, None


def _stats_unused(node):
    return all(u.target is operator.getitem and (u.args[1] == 0 or not u.users)
               for u in node.users)


def _pick_layer_norm(node):
    return _native_layer_norm_out if _stats_unused(node) else _native_layer_norm


_native_layer_norm.specialize = _pick_layer_norm


def _layer_norm_accepts(node):
    x, shape, w, b, eps = args_of(node)
    # ATen takes any eps (a negative one is an OpInfo sample); hologram's kernel refuses what
    # is not finite and >= 0
    return (tensors_ok((x, w, b)) and len(shape) >= 1 and isinstance(eps, (int, float)) and
            math.isfinite(eps) and eps >= 0)


def _native_layer_norm_bw(g, x, normalized_shape, mean, rstd, weight, bias, output_mask):
    """ATen's gradients from the saved mean and rstd as given (eps is not an argument of the
    backward): one pass of the C row kernel (hg_layer_norm_backward_stats). grad_weight and
    grad_bias are sums over the leading dims (zeros when there are no rows)."""
    nn = len(normalized_shape)
    shape = tuple(normalized_shape)
    e, dev, (hg_g, hx, hm, hr, hw) = _ops._hg_args("aten.native_layer_norm_backward", 0,
                                                    g, x, mean, rstd, weight)
    gx = gw = gb = gx_h = gw_h = gb_h = None
    if output_mask[0]:
        gx, gx_h = B.empty_pair(x.shape, x.dtype, e)
    if output_mask[1] and weight is not None:
        gw, gw_h = B.empty_pair(shape, weight.dtype, e)
    if output_mask[2] and bias is not None:
        gb, gb_h = B.empty_pair(shape, bias.dtype, e)
    if x.numel() and any(h is not None for h in (gx_h, gw_h, gb_h)):
        # positional (keywords cost ~1 us to parse); eps is unused with the statistics given
        _C.norm_backward(hg_g, hx, nn, hw, 0.0, False, gx_h, gw_h, gb_h, hm, hr)
    elif not x.numel():
        for t in (gw, gb):
            if t is not None:
                t.zero_()
    return gx, gw, gb


def _layer_norm_bw_accepts(node):
    g, x, shape, mean, rstd, w, b, mask = args_of(node)
    # The C op takes the statistics in ATen's shape only (ATen reads any of as many elements).
    # ATen raises ("tensor does not have a device") when asked for the gradient of an absent
    # weight or bias: left to it, so the same error appears.
    quirk = (mask[1] and w is None) or (mask[2] and b is None)
    return (tensors_ok((g, x, mean, rstd, w, b)) and len(shape) >= 1 and not quirk and
            tuple(mean.shape) == tuple(rstd.shape) == _stats_shape(x, len(shape)))


ENTRIES = {
    aten._softmax.default: Lowering(_softmax, _softmax_accepts),
    aten._log_softmax.default: Lowering(_log_softmax, _softmax_accepts),
    aten._softmax_backward_data.default: Lowering(_softmax_bw, _softmax_bw_accepts),
    aten._log_softmax_backward_data.default: Lowering(_log_softmax_bw, _softmax_bw_accepts),
    aten.native_layer_norm.default: Lowering(_native_layer_norm, _layer_norm_accepts),
    aten.native_layer_norm_backward.default: Lowering(_native_layer_norm_bw,
                                                      _layer_norm_bw_accepts),
}
