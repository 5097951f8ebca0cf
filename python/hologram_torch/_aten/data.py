"""embedding and embedding_dense_backward (hologram's index_select and index_add), cat and
clone (hologram's copies)."""
import torch

import hologram as hg

from .. import _bridge as B
from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten
INDEX_DTYPES = (torch.int64, torch.int32)


# hologram's index_select called directly: the checked custom op of _ops (its dispatch, fake
# tensor and checks) took 20 us for a lookup of 256 rows of 256 (5 us in C; docs/performance.md)
def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    flat = indices.reshape(-1)
    _ops.check_index_range("aten.embedding", flat, weight.shape[0], 0)   # torch's IndexError
    e, dev, (hw, hi) = _ops._hg_args("aten.embedding", 0, weight, flat)
    return B.to_torch(hg.index_select(hw, 0, hi)).reshape(
        tuple(indices.shape) + (weight.shape[1],))


def _embedding_accepts(node):
    weight, indices = args_of(node)[:2]
    return (tensors_ok((weight,)) and weight.dim() == 2 and
            tensors_ok((indices,), INDEX_DTYPES) and indices.device == weight.device)


def _embedding_bw(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    return _ops.embedding_grad(grad_output, indices.reshape(-1),
                               (num_weights, grad_output.shape[-1]),
                               padding_idx if padding_idx >= 0 else None, scale_grad_by_freq)


def _embedding_bw_accepts(node):
    g, indices = args_of(node)[:2]
    return (tensors_ok((g,)) and tensors_ok((indices,), INDEX_DTYPES) and
            indices.device == g.device)


def _cat(tensors, dim=0):
    return _ops.cat(list(tensors), dim)


def _cat_accepts(node):
    ts, *rest = args_of(node)
    # one dtype (ATen promotes mixed ones) and one rank (ATen skips legacy empty 1-D operands)
    return (bool(ts) and tensors_ok(ts, tuple(B.DTYPES)) and
            len({t.dim() for t in ts}) == 1 and ts[0].dim() >= 1)


def _clone(x, memory_format=None):
    e, dev, (hx,) = _ops._hg_args("aten.clone", 0, x)
    return B.to_torch(hg.ops.copy(hx))


def _clone_accepts(node):
    x = args_of(node)[0]
    out = node.meta.get("val")
    # hologram's copy is C-contiguous: where ATen's result keeps other strides, torch's clone
    return (tensors_ok((x,), tuple(B.DTYPES)) and isinstance(out, torch.Tensor) and
            out.is_contiguous())


ENTRIES = {
    aten.cat.default: Lowering(_cat, _cat_accepts),
    aten.clone.default: Lowering(_clone, _clone_accepts),
    aten.embedding.default: Lowering(_embedding, _embedding_accepts),
    aten.embedding_dense_backward.default: Lowering(_embedding_bw, _embedding_bw_accepts),
}
