"""mm, bmm, addmm: hologram's GEMM on strided views of the operands (a transposed weight from
ATen's permute/t is read in place)."""
import torch

import hologram as hg

from .. import _bridge as B
from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten

_Tensor, _strided, _FLOATS = torch.Tensor, torch.strided, (torch.float32, torch.float64)
_to_dlpack, _from_dlpack, _capsule_matmul = (torch._C._to_dlpack, torch._C._from_dlpack,
                                             hg._C._capsule_matmul)


def _mm(a, b):
    """Plain CPU float tensors of one dtype on the default executor (a compiled graph's matmuls):
    one C call from DLPack capsules (~3 us less per call than _ops.matmul's Python); anything
    else, and shapes hg_matmul refuses (then with torch's message), through _ops.matmul."""
    if (type(a) is _Tensor and type(b) is _Tensor and a.dtype is b.dtype and a.dtype in _FLOATS
            and a.is_cpu and b.is_cpu and a.layout is _strided and b.layout is _strided
            and not B.scoped[0]):
        e = B._cpu[0]
        if e is not None and not e.closed:
            try:
                return _from_dlpack(_capsule_matmul(_to_dlpack(a), _to_dlpack(b), e))
            except hg.HologramError:
                pass
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
