"""native_dropout and its backward with hologram's Philox, one library op each (hg.ops.dropout
writes the output and the mask in one pass; hg.ops.dropout_backward is g * mask * scale). The
seed is drawn when the graph runs, from torch's default (CPU) generator: every call draws a
fresh mask, torch.manual_seed reproduces it, and nothing in the graph depends on a Python value
(no graph break, no recompilation)."""
import torch

import hologram as hg

from .. import _bridge as B
from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten
_seed_source = torch.empty((), dtype=torch.int64)


def draw_seed():
    """A 63-bit seed from torch's default generator (advances it, as torch's dropout does)."""
    return int(_seed_source.random_())


def dropout_with_mask(hx, p, seed, e):
    """(out, mask) of hg.ops.dropout on the hologram tensor hx: the mask as the graph's bool
    output (ATen's native_dropout returns it for the backward)."""
    mask = hg.empty(tuple(hx.shape), "bool", executor=e)
    return hg._C.dropout(hx, p, seed, 0, None, mask), mask


def _native_dropout(x, p, train):
    e, dev, (hx,) = _ops._hg_args("aten.native_dropout", 0, x)
    out, mask = dropout_with_mask(hx, p, draw_seed(), e)
    return B.to_torch(out), B.to_torch(mask)


def _dropout_accepts(node):
    x, p, train = args_of(node)
    # train False / p 0 or 1: ATen's own special cases (a copy, all dropped) stay torch's
    return tensors_ok((x,)) and bool(train) and 0.0 < float(p) < 1.0


def _native_dropout_bw(g, mask, scale):
    e, dev, (hg_g, hm) = _ops._hg_args("aten.native_dropout_backward", 0, g, mask)
    return B.to_torch(hg._C.dropout_backward(hg_g, hm, scale, None))


def _dropout_bw_accepts(node):
    g, mask, scale = args_of(node)
    return (tensors_ok((g,)) and isinstance(mask, torch.Tensor) and mask.dtype == torch.bool
            and mask.device == g.device)


ENTRIES = {
    aten.native_dropout.default: Lowering(_native_dropout, _dropout_accepts),
    aten.native_dropout_backward.default: Lowering(_native_dropout_bw, _dropout_bw_accepts),
}
