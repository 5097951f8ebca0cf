"""Row ops: softmax / log_softmax and their backward (the C library's row kernels), layer norm
forward (with the mean and rstd ATen saves for the backward) and backward."""
import math
import operator

import torch

import hologram as hg

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


def _norm_dims(x, normalized_shape):
    return tuple(range(x.dim() - len(normalized_shape), x.dim()))


def _stats(hx, dims, eps, e):
    """(mean, rstd) over dims, kept as size-1 dims: what ATen's native_layer_norm returns."""
    mean = hg.mean(hx, axis=dims, keepdims=True)
    rstd = hg.divide(1.0, hg.sqrt(hg.add(hg.var(hx, axis=dims, keepdims=True), eps)))
    return mean, rstd


def _native_layer_norm(x, normalized_shape, weight, bias, eps):
    out = _ops.layer_norm(x, normalized_shape, weight, bias, eps)
    e, dev, (hx,) = _ops._hg_args("aten.native_layer_norm", 0, x)
    if not x.numel():
        stat = x.new_empty(tuple(x.shape[:x.dim() - len(normalized_shape)]) +
                           (1,) * len(normalized_shape))
        return out, stat, stat.clone()
    mean, rstd = _stats(hx, _norm_dims(x, normalized_shape), eps, e)
    return out, B.to_torch(mean), B.to_torch(rstd)


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
    """ATen's formula from the saved mean and rstd (eps is not an argument of the backward, so
    the C kernel that recomputes the statistics cannot be used):
    xhat = (x - mean) rstd, gx = rstd (gw - mean(gw) - xhat mean(gw xhat)) with gw = g weight,
    grad_weight = sum of g xhat and grad_bias = sum of g over the leading dims."""
    e, dev, (hg_g, hx, hm, hr, hw) = _ops._hg_args("aten.native_layer_norm_backward", 0,
                                                    g, x, mean, rstd, weight)
    dims = _norm_dims(x, normalized_shape)
    lead = tuple(range(x.dim() - len(normalized_shape)))
    if not x.numel():
        z = [torch.zeros(tuple(normalized_shape), dtype=x.dtype, device=dev) for _ in range(2)]
        return ((torch.empty_like(x) if output_mask[0] else None),
                z[0] if output_mask[1] and weight is not None else None,
                z[1] if output_mask[2] and bias is not None else None)
    xhat = hg.multiply(hg.subtract(hx, hm), hr)
    gx = gw = gb = None
    if output_mask[0]:
        gwx = hg_g if hw is None else hg.multiply(hg_g, hw)
        c1 = hg.mean(hg.multiply(gwx, xhat), axis=dims, keepdims=True)
        c2 = hg.mean(gwx, axis=dims, keepdims=True)
        gx = B.to_torch(hg.multiply(hr, hg.subtract(hg.subtract(gwx, c2),
                                                    hg.multiply(xhat, c1))))
    if output_mask[1] and weight is not None:
        p = hg.multiply(hg_g, xhat)
        gw = B.to_torch(hg.sum(p, axis=lead) if lead else hg.ops.copy(p))
    if output_mask[2] and bias is not None:
        gb = B.to_torch(hg.sum(hg_g, axis=lead) if lead else hg.ops.copy(hg_g))
    return gx, gw, gb


def _layer_norm_bw_accepts(node):
    g, x, shape, mean, rstd, w, b, mask = args_of(node)
    return tensors_ok((g, x, mean, rstd, w, b)) and len(shape) >= 1


ENTRIES = {
    aten._softmax.default: Lowering(_softmax, _softmax_accepts),
    aten._log_softmax.default: Lowering(_log_softmax, _softmax_accepts),
    aten._softmax_backward_data.default: Lowering(_softmax_bw, _softmax_bw_accepts),
    aten._log_softmax_backward_data.default: Lowering(_log_softmax_bw, _softmax_bw_accepts),
    aten.native_layer_norm.default: Lowering(_native_layer_norm, _layer_norm_accepts),
    aten.native_layer_norm_backward.default: Lowering(_native_layer_norm_bw,
                                                      _layer_norm_bw_accepts),
}
