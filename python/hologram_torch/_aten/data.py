"""embedding and embedding_dense_backward: hologram's index_select and index_add."""
import torch

from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten
INDEX_DTYPES = (torch.int64, torch.int32)


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    rows = _ops.index_select(weight, 0, indices.reshape(-1))
    return rows.reshape(tuple(indices.shape) + (weight.shape[1],))


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


ENTRIES = {
    aten.embedding.default: Lowering(_embedding, _embedding_accepts),
    aten.embedding_dense_backward.default: Lowering(_embedding_bw, _embedding_bw_accepts),
}
