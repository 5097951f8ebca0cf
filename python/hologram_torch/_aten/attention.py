"""scaled_dot_product_attention in inference graphs: ATen's CPU flash op
(``_scaled_dot_product_flash_attention_for_cpu``, what F.scaled_dot_product_attention becomes on
CPU tensors) as hologram's fused attention (hg_scaled_dot_product_attention: a block of query
rows' scores at a time, never the whole attention matrix). Only where the graph reads the output
alone and dropout is 0: the logsumexp a training graph saves for the backward is not computed,
so training graphs keep torch's op (its forward and backward kernels; backend._WRONG_IN_TRAINING
keeps it whole there)."""
import math
import operator

import torch

from hologram import _C

from .. import _bridge as B
from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten


def _output_only(node):
    """Every user reads output 0 (or reads nothing)."""
    return all(u.target is operator.getitem and (u.args[1] == 0 or not u.users)
               for u in node.users)


def _sdpa(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None,
          _stride=None):
    e, dev, (hq, hk, hv, hm) = _ops._hg_args("aten._scaled_dot_product_flash_attention_for_cpu",
                                             0, query, key, value, attn_mask)
    shape = tuple(query.shape[:-1]) + (value.shape[-1],)
    if _stride is None:   # ATen's result follows the query's layout: the FakeTensor's strides
        out, out_h = B.empty_pair(shape, query.dtype, e)
    else:
        out = torch.empty_strided(shape, _stride, dtype=query.dtype, device=dev)
        out_h = B.to_hg(out, e)
    _C.scaled_dot_product_attention(hq, hk, hv, hm, bool(is_causal),
                                    math.nan if scale is None else float(scale), out_h)
    return out, None


def _specialize(node):
    """_sdpa writing into the strides ATen's result has (from the node's FakeTensor)."""
    out = node.meta["val"][0]
    if out.is_contiguous():
        return _sdpa
    stride = tuple(out.stride())

    def sdpa_strided(*args, **kwargs):
        return _sdpa(*args, _stride=stride, **kwargs)
    return sdpa_strided


_sdpa.specialize = _specialize


def _sdpa_accepts(node):
    vals = args_of(node)
    for arg in node.target._schema.arguments[len(vals):]:   # the defaults args_of leaves out
        vals.append(arg.default_value if arg.has_default_value() else None)
    q, k, v, dropout_p, is_causal, mask, scale = vals
    val = node.meta.get("val")
    return (tensors_ok((q, k, v)) and q.dim() == 4 and k.dim() == 4 and v.dim() == 4 and
            float(dropout_p) == 0.0 and _output_only(node) and
            isinstance(val, (tuple, list)) and isinstance(val[0], torch.Tensor) and
            (mask is None or (isinstance(mask, torch.Tensor) and
                              mask.dtype in (torch.bool, q.dtype) and mask.device == q.device
                              and mask.layout == torch.strided)) and
            (scale is None or math.isfinite(float(scale))) and
            not (mask is not None and is_causal))


ENTRIES = {
    aten._scaled_dot_product_flash_attention_for_cpu.default: Lowering(_sdpa, _sdpa_accepts),
}
