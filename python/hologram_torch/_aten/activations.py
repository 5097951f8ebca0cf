"""gelu, gelu_backward (the C library's hg_activation_backward) and threshold_backward (relu's
gradient). Pointwise: the fusion pass (fuse.py) takes them first where it
fuses; these lower what it leaves."""
import torch

import hologram as hg

from .. import _bridge as B
from .. import _grad_ops, _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten


def _gelu(x, approximate="none"):
    return _ops.gelu(x, approximate)


def _gelu_bw(g, x, approximate="none"):
    if approximate == "tanh":   # hg_activation_backward's tanh form reads x only (y: unused)
        return _grad_ops.activation_backward(g, x, x, "gelu_tanh")
    # the erf form reads Phi(x) = y / x from the output: recomputed here (a fused kernel with
    # erf from x alone was 8-23% slower, docs/performance.md)
    return _grad_ops.activation_backward(g, x, _ops.gelu(x, approximate), "gelu_none")


def gelu_bw_from_output(g, x, y, approximate="none"):
    """gelu_backward given the forward's gelu(x) (None: written in place since; recomputed):
    hg_activation_backward in one kernel (the eager gradients' graphs pass y: grad.py)."""
    if y is None or approximate != "none" or not (g.dtype == x.dtype == y.dtype):
        return _gelu_bw(g, x, approximate)
    return _grad_ops.activation_backward(g, x, y, "gelu_none")


# ATen backward op -> (the forward op whose result it can read, the function that reads it):
# the eager gradients keep that result for the backward (_aten/grad.py), where a compiled
# graph's partition decides what is saved
FROM_OUTPUT = {aten.gelu_backward.default: (aten.gelu.default, gelu_bw_from_output)}


def _gelu_accepts(node):
    a = args_of(node)
    return tensors_ok([t for t in a if isinstance(t, torch.Tensor)]) and \
        (a[-1] if isinstance(a[-1], str) else "none") in ("none", "tanh")


def _threshold_bw(g, self, threshold):
    """ATen's rule: 0 where self <= threshold, else g (a NaN self passes g)."""
    e, dev, (hg_g, hs) = _ops._hg_args("aten.threshold_backward", 0, g, self)
    return B.to_torch(hg.where(hg.less_equal(hs, threshold), 0, hg_g))


def _threshold_bw_accepts(node):
    g, y, threshold = args_of(node)
    return tensors_ok((g, y)) and isinstance(threshold, (int, float))


ENTRIES = {
    aten.gelu.default: Lowering(_gelu, _gelu_accepts),
    aten.gelu_backward.default: Lowering(_gelu_bw, _gelu_accepts),
    aten.threshold_backward.default: Lowering(_threshold_bw, _threshold_bw_accepts),
}
