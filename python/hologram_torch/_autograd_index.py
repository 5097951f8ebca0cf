"""The autograd Functions of the indexing ops: index_select, gather (with torch's sparse
gradient), embedding (padding_idx, scale_grad_by_freq, sparse). Their backward passes are
hologram's index_add / scatter_add into zeros (_ops.index_add_zeros); the sparse gradients are
torch COO tensors of the coordinates and a view of the incoming gradient. Re-exported by
_autograd."""
import torch
from torch.autograd.function import once_differentiable

from . import _ops as O
from ._autograd import _Fn, _needs_grad, sum_


# ---- indexing --------------------------------------------------------------------------------
class _IndexSelect(_Fn):
    @staticmethod
    def forward(x, dim, index, ex):
        return O.index_select(x, dim, index, ex)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim, index, ex = inputs
        ctx.dim, ctx.shape, ctx.ex = dim % max(x.dim(), 1), tuple(x.shape), ex
        ctx.save_for_backward(index)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        if not ctx.shape:   # a 0-d input: its one element got every selected gradient
            return sum_(g, None, False, ctx.ex), None, None, None
        g = g.contiguous().reshape(
            ctx.shape[:ctx.dim] + (index.numel(),) + ctx.shape[ctx.dim + 1:])
        return O.index_add_zeros(g, ctx.dim, index, list(ctx.shape), False, ctx.ex), None, None, None


def index_select(x, dim, index, ex=0):
    if _needs_grad(x):
        return _IndexSelect.apply(x, dim, index, ex)
    return O.index_select(x, dim, index, ex)


class _Gather(_Fn):
    @staticmethod
    def forward(x, dim, index, ex, sparse=False):
        return O.gather(x, dim, index, ex)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim, index, ex, *sparse = inputs
        ctx.dim, ctx.shape, ctx.ex = dim % max(x.dim(), 1), tuple(x.shape), ex
        ctx.sparse = bool(sparse and sparse[0])
        ctx.save_for_backward(index)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        if ctx.sparse:
            return _gather_sparse_grad(g, ctx.dim, index, ctx.shape), None, None, None, None
        if not ctx.shape:
            return g.clone(), None, None, None, None
        return (O.index_add_zeros(g.contiguous(), ctx.dim, index, list(ctx.shape), True, ctx.ex),
                None, None, None, None)


def _gather_sparse_grad(g, dim, index, shape):
    """torch's sparse gradient of gather (sparse_grad=True): a COO tensor of input's shape with
    g's values at the gathered coordinates (index along dim, g's own position on the others),
    repeats left uncoalesced. Only coordinates and a view of g: nothing is computed."""
    if not shape:
        return torch.sparse_coo_tensor(torch.empty((0, g.numel()), dtype=torch.long,
                                                   device=g.device),
                                       g.reshape(-1), shape, check_invariants=False)
    coords = []
    for d in range(len(shape)):
        if d == dim:   # the forward refused indices outside [0, shape[d])
            coords.append(index.to(torch.long).reshape(-1))
        else:
            c = torch.arange(g.shape[d], device=g.device).reshape(
                [-1 if k == d else 1 for k in range(g.dim())])
            coords.append(c.expand(g.shape).reshape(-1))
    return torch.sparse_coo_tensor(torch.stack(coords), g.reshape(-1), shape,
                                   check_invariants=False)


def gather(x, dim, index, ex=0, sparse=False):
    if _needs_grad(x):
        return _Gather.apply(x, dim, index, ex, sparse)
    return O.gather(x, dim, index, ex)


class _Embedding(_Fn):
    """weight rows at input's indices; the weight gradient sums g's rows per index (index_add),
    each divided by its index's count with scale_grad_by_freq; the padding_idx row gets none.
    sparse: a COO gradient of g's rows at the indices (torch's layout)."""

    @staticmethod
    def forward(input, weight, padding_idx, ex, freq=False, sparse=False):
        rows = O.index_select(weight, 0, input.reshape(-1), ex)
        return rows.reshape(tuple(input.shape) + (weight.shape[1],))

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, padding_idx, ex, *opts = inputs
        ctx.pad, ctx.shape, ctx.ex = padding_idx, tuple(weight.shape), ex
        ctx.freq, ctx.sparse = (bool(opts[0]), bool(opts[1])) if opts else (False, False)
        ctx.save_for_backward(input.reshape(-1))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (flat,) = ctx.saved_tensors
        g = g.contiguous().reshape(flat.numel(), ctx.shape[1])
        none = (None,) * 4
        if ctx.sparse:
            if ctx.freq:
                raise RuntimeError("hologram_torch.functional.embedding: scale_grad_by_freq is not "
                                   "supported with sparse gradients (as in torch)")
            if ctx.pad is not None:   # torch leaves the padding row's entries out
                keep = flat != ctx.pad
                flat, g = flat[keep], g[keep]
            return (None, torch.sparse_coo_tensor(flat.to(torch.long).reshape(1, -1), g,
                                                  ctx.shape, check_invariants=False)) + none
        return (None, O.embedding_grad(g, flat, ctx.shape, ctx.pad, ctx.freq, ctx.ex)) + none


def embedding(input, weight, padding_idx=None, ex=0, freq=False, sparse=False):
    if _needs_grad(weight):
        return _Embedding.apply(input, weight, padding_idx, ex, freq, sparse)
    rows = O.index_select(weight, 0, input.reshape(-1), ex)
    return rows.reshape(tuple(input.shape) + (weight.shape[1],))
