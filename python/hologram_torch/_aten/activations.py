"""gelu and ATen's activation backward ops (gelu_backward, threshold_backward) on the C
library's hg_activation_backward. Pointwise: the fusion pass (fuse.py) takes them first where it
fuses; these lower what it leaves."""
import torch

from .. import _grad_ops, _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten


def _gelu(x, approximate="none"):
    return _ops.gelu(x, approximate)


def _gelu_bw(g, x, approximate="none"):
    # hg_activation_backward's erf form reads Phi(x) = y / x from the output: computed here
    return _grad_ops.activation_backward(g, x, _ops.gelu(x, approximate), "gelu_" + approximate)


def _gelu_accepts(node):
    a = args_of(node)
    return tensors_ok([t for t in a if isinstance(t, torch.Tensor)]) and \
        (a[-1] if isinstance(a[-1], str) else "none") in ("none", "tanh")


def _threshold_bw(g, y, threshold):
    # g where y > 0 else 0: relu's gradient read from its output (y > 0 exactly where x > 0)
    return _grad_ops.activation_backward(g, y, y, "relu")


def _threshold_bw_accepts(node):
    g, y, threshold = args_of(node)
    return tensors_ok((g, y)) and threshold == 0


ENTRIES = {
    aten.gelu.default: Lowering(_gelu, _gelu_accepts),
    aten.gelu_backward.default: Lowering(_gelu_bw, _gelu_accepts),
    aten.threshold_backward.default: Lowering(_threshold_bw, _threshold_bw_accepts),
}
