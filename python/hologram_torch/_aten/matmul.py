"""mm, bmm, addmm: hologram's GEMM on strided views of the operands (a transposed weight from
ATen's permute/t is read in place)."""
import torch

from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten


def _mm(a, b):
    return _ops.matmul(a, b)


def _mm_accepts(node, ndim=2):
    a, b = args_of(node)[:2]
    return tensors_ok((a, b)) and a.dim() == ndim and b.dim() == ndim


def _addmm(bias, m1, m2, beta=1, alpha=1):
    e, dev, (hbias, h1, h2) = _ops._hg_args("aten.addmm", 0, bias, m1, m2)
    return _ops.matmul_bias(e, h1, h2, hbias, (m1.shape[0], m2.shape[1]), m1.dtype)


def _addmm_accepts(node):
    bias, m1, m2, *rest = args_of(node)
    beta, alpha = (list(rest) + [1, 1])[:2]
    # beta/alpha other than 1 would scale; a bias of a broadcastable shape is added as ATen does
    return (tensors_ok((bias, m1, m2)) and beta == 1 and alpha == 1 and m1.dim() == 2 and
            m2.dim() == 2 and bias.dim() <= 2)


ENTRIES = {
    aten.mm.default: Lowering(_mm, _mm_accepts),
    aten.bmm.default: Lowering(_mm, lambda node: _mm_accepts(node, 3)),
    aten.addmm.default: Lowering(_addmm, _addmm_accepts),
}
