"""What the table's families share: the Lowering record and the compile-time checks that read an
FX node's FakeTensor metadata (node.meta["val"]) to decide whether hologram computes exactly what
the ATen op does."""
from typing import Callable, NamedTuple

import torch
import torch.fx

REAL_FLOATS = (torch.float32, torch.float64)   # hologram's accumulation matches ATen's here
DEVICES = ("cpu", "cuda")


class Lowering(NamedTuple):
    """fn takes the ATen overload's arguments (torch tensors at run time) and returns what the
    op returns, computed by hologram; accepts(node) -> bool decides at compile time."""
    fn: Callable
    accepts: Callable


UNKNOWN = object()   # a Node without FakeTensor metadata: no check accepts it


def val(a):
    """The FakeTensor (or constant) an FX argument stands for; lists of them element-wise."""
    return torch.fx.node.map_arg(a, lambda n: n.meta.get("val", UNKNOWN))


def args_of(node):
    """node.args with each Node replaced by its FakeTensor, then its keyword arguments in the
    schema's order (keyword-only ones such as addmm's beta arrive as kwargs), defaults filled."""
    vals = [val(a) for a in node.args]
    if node.kwargs:
        for arg in node.target._schema.arguments[len(vals):]:
            if arg.name in node.kwargs:
                vals.append(val(node.kwargs[arg.name]))
            elif arg.has_default_value():
                vals.append(arg.default_value)
    return vals


def plain(t, dtypes=REAL_FLOATS):
    """A dense tensor of one of dtypes on a CPU or CUDA device (None: absent, accepted)."""
    return t is None or (isinstance(t, torch.Tensor) and t.layout == torch.strided and
                         t.dtype in dtypes and t.device.type in DEVICES)


def tensors_ok(ts, dtypes=REAL_FLOATS, same_dtype=True):
    """Every tensor plain, all on one device and (same_dtype) of one dtype."""
    ts = [t for t in ts if t is not None]
    if not all(plain(t, dtypes) for t in ts):
        return False
    return (len({t.device for t in ts}) <= 1 and
            (not same_dtype or len({t.dtype for t in ts}) <= 1))

