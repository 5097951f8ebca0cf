"""sum / mean over dims (the bias gradients of linear layers, means of losses), amax, any of a
boolean mask (the padding checks of Hugging Face's attention masks)."""
import torch

import hologram as hg

from .. import _bridge as B
from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten


def _dims(x, dim):
    """hologram's axes of ATen's dim list (None or empty: all dims, as ATen's sum / mean)."""
    return tuple(d % x.dim() for d in dim) if dim and x.dim() else None


# hologram's sum / mean called directly, not through _ops' checked custom ops (their dispatch
# is ~3 us of a ~9 us bias-gradient sum over 256 rows of 256)
def _sum(x, dim, keepdim=False, dtype=None):
    e, dev, (hx,) = _ops._hg_args("aten.sum", 0, x)
    return B.to_torch(hg.sum(hx, axis=_dims(x, dim), keepdims=keepdim))


def _mean(x, dim, keepdim=False, dtype=None):
    e, dev, (hx,) = _ops._hg_args("aten.mean", 0, x)
    return B.to_torch(hg.mean(hx, axis=_dims(x, dim), keepdims=keepdim))


def _red_accepts(node):
    x, dim, *rest = args_of(node)
    dtype = rest[1] if len(rest) > 1 else None
    return tensors_ok((x,)) and dtype is None


def _amax(x, dim=(), keepdim=False):
    e, dev, (hx,) = _ops._hg_args("aten.amax", 0, x)
    return B.to_torch(hg.amax(hx, axis=_dims(x, dim), keepdims=keepdim))


def _amax_accepts(node):
    x = args_of(node)[0]
    # ATen refuses an empty reduction: that error stays torch's
    return tensors_ok((x,)) and x.dim() >= 1 and all(int(s) > 0 for s in x.shape)


def _any(x, dim, keepdim=False):
    e, dev, (hx,) = _ops._hg_args("aten.any", 0, x)
    return B.to_torch(hg.any(hx, axis=(dim % x.dim(),), keepdims=keepdim))


def _any_accepts(node):
    x = args_of(node)[0]
    # a bool mask of rank >= 1 (a 0-d input's dim -1/0 and other dtypes' truth stay torch's)
    return tensors_ok((x,), (torch.bool,)) and x.dim() >= 1


ENTRIES = {
    aten.sum.dim_IntList: Lowering(_sum, _red_accepts),
    aten.mean.dim: Lowering(_mean, _red_accepts),
    aten.amax.default: Lowering(_amax, _amax_accepts),
    aten.any.dim: Lowering(_any, _any_accepts),
}
