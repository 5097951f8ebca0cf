"""The view ops a lowered graph leaves to torch, called through the Tensor methods that run the
same ATen op: the same result, aliasing and autograd, ~1 us less per call than the OpOverload's
Python ``__call__`` (a Llama training step has ~250 of them: docs/performance.md)."""
import torch

aten = torch.ops.aten

# op -> (method, most positional arguments the method takes the same way)
METHODS = {aten.permute.default: (torch.Tensor.permute, 2),
           aten.view.default: (torch.Tensor.view, 2),
           aten.t.default: (torch.Tensor.t, 1),
           aten.transpose.int: (torch.Tensor.transpose, 3),
           aten.unsqueeze.default: (torch.Tensor.unsqueeze, 2),
           aten.squeeze.dim: (torch.Tensor.squeeze, 2),
           aten.squeeze.dims: (torch.Tensor.squeeze, 2),
           aten.squeeze.default: (torch.Tensor.squeeze, 1),
           aten.expand.default: (torch.Tensor.expand, 2),
           aten.select.int: (torch.Tensor.select, 3)}


def fast_views(gm):
    """Points gm's view nodes at the Tensor methods in place (node.meta["hologram_view"] keeps
    the op for the report); returns gm."""
    changed = False
    for node in gm.graph.nodes:
        m = METHODS.get(node.target) if node.op == "call_function" else None
        # expand's implicit flag (a third argument) and keywords: the OpOverload's
        if m is not None and not node.kwargs and len(node.args) <= m[1]:
            node.meta["hologram_view"] = node.target
            node.target = m[0]
            changed = True
    if changed:
        gm.recompile()
    return gm
