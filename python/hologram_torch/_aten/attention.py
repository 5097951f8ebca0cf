"""scaled_dot_product_attention: ATen's CPU flash op (``_scaled_dot_product_flash_attention_for_cpu``,
what F.scaled_dot_product_attention becomes on CPU tensors) as hologram's fused attention
(hg_scaled_dot_product_attention: a block of query rows' scores at a time, never the whole
attention matrix), in inference and training graphs. Its second output, the logsumexp that
ATen's backward op reads, is written only where the graph reads it, in ATen's layout (0 for a
query that attends no key, as ATen); the backward stays ATen's op (issue 35 adds hologram's).
Dropout must be 0."""
import math

import torch

from hologram import _C

from .. import _bridge as B
from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten


def _lse_used(node):
    """Whether a user of the node reads output 1 (the logsumexp)."""
    return any(u.args[1] != 0 and u.users for u in node.users)


def _sdpa(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None,
          _layout=None):
    e, dev, (hq, hk, hv, hm) = _ops._hg_args("aten._scaled_dot_product_flash_attention_for_cpu",
                                             0, query, key, value, attn_mask)
    shape = tuple(query.shape[:-1]) + (value.shape[-1],)
    out_stride, lse_stride = _layout or (None, None)
    if out_stride is None:   # ATen's result follows the query's layout: the FakeTensor's strides
        out, out_h = B.empty_pair(shape, query.dtype, e)
    else:
        out = torch.empty_strided(shape, out_stride, dtype=query.dtype, device=dev)
        out_h = B.to_hg(out, e)
    lse = lse_h = None
    if lse_stride is not None:
        lse = torch.empty_strided(shape[:-1], lse_stride, dtype=query.dtype, device=dev)
        lse_h = B.to_hg(lse, e)
    _C.scaled_dot_product_attention(hq, hk, hv, hm, bool(is_causal),
                                    math.nan if scale is None else float(scale), out_h, lse_h)
    return out, lse


def _specialize(node):
    """_sdpa writing into the strides ATen's results have (from the node's FakeTensors), the
    logsumexp only where the graph reads it."""
    out, lse = node.meta["val"][:2]
    layout = (None if out.is_contiguous() else tuple(out.stride()),
              tuple(lse.stride()) if _lse_used(node) else None)
    if layout == (None, None):
        return _sdpa

    def sdpa_strided(*args, **kwargs):
        return _sdpa(*args, _layout=layout, **kwargs)
    return sdpa_strided


_sdpa.specialize = _specialize


def _sdpa_accepts(node):
    vals = args_of(node)
    for arg in node.target._schema.arguments[len(vals):]:   # the defaults args_of leaves out
        vals.append(arg.default_value if arg.has_default_value() else None)
    q, k, v, dropout_p, is_causal, mask, scale = vals
    val = node.meta.get("val")
    return (tensors_ok((q, k, v)) and q.dim() == 4 and k.dim() == 4 and v.dim() == 4 and
            float(dropout_p) == 0.0 and isinstance(val, (tuple, list)) and
            all(isinstance(t, torch.Tensor) for t in val[:2]) and val[1].dtype == q.dtype and
            (mask is None or (isinstance(mask, torch.Tensor) and
                              mask.dtype in (torch.bool, q.dtype) and mask.device == q.device
                              and mask.layout == torch.strided)) and
            (scale is None or math.isfinite(float(scale))) and
            not (mask is not None and is_causal))


ENTRIES = {
    aten._scaled_dot_product_flash_attention_for_cpu.default: Lowering(_sdpa, _sdpa_accepts),
}
