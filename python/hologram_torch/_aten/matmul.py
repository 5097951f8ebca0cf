"""mm, bmm, addmm: hologram's GEMM on strided views of the operands (a transposed weight from
ATen's permute/t is read in place)."""
import torch

import hologram as hg

from .. import _bridge as B
from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten

_Tensor, _strided, _FLOATS = torch.Tensor, torch.strided, (torch.float32, torch.float64)
_to_dlpack, _from_dlpack = torch._C._to_dlpack, torch._C._from_dlpack
_capsule_matmul, _capsule_addmm = hg._C._capsule_matmul, hg._C._capsule_addmm


def _plain_executor(*ts):
    """The default CPU executor when every t is a plain dense CPU tensor of one float dtype
    (a compiled graph's matmul operands), else None: such calls go in one C call from DLPack
    capsules (~3 us less per call than the Python of _ops' general path)."""
    dt = ts[0].dtype
    if dt not in _FLOATS or B.scoped[0]:
        return None
    for t in ts:
        if type(t) is not _Tensor or t.dtype is not dt or not t.is_cpu or t.layout is not _strided:
            return None
    e = B._cpu[0]
    return e if e is not None and not e.closed else None


def _mm(a, b):
    """a @ b (mm, bmm); shapes hg_matmul refuses go through _ops.matmul (its error)."""
    e = _plain_executor(a, b)
    if e is not None:
        try:
            return _from_dlpack(_capsule_matmul(_to_dlpack(a), _to_dlpack(b), e))
        except hg.HologramError:
            pass
    return _ops.matmul(a, b)


def _mm_accepts(node, ndim=2):
    a, b = args_of(node)[:2]
    return tensors_ok((a, b)) and a.dim() == ndim and b.dim() == ndim


def _addmm(bias, m1, m2, beta=1, alpha=1):
    e = _plain_executor(m1, m2, bias)
    if e is not None:
        try:
            return _from_dlpack(_capsule_addmm(_to_dlpack(bias), _to_dlpack(m1), _to_dlpack(m2), e))
        except hg.HologramError:
            pass
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
