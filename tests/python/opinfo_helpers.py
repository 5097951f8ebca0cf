"""torch's OpInfo samples as the hologram compile backend sees them (test_torch_opinfo.py).

A sample call ``op(input, *args, **kwargs)`` becomes a function of its tensors (every tensor in
input, args and kwargs, lists included, is a parameter; the rest stays constant). :func:`trace`
makes its ATen graph with make_fx and the backend's decompositions, for a gradient case the
graph of the call and its torch.autograd.grad (ATen's backward ops, as AOTAutograd's joint
graph has them); :func:`lowered` applies the backend's PASSES and lower() to a copy.
:func:`run_pair` runs both graphs on the same real inputs and compares them; :func:`hologram_ops`
counts the ATen ops a run actually computed in hologram (lowered nodes, and fused nodes whose
kernel did not fall back to torch).
"""
import copy
import functools
import operator
import sys
import types
import unittest
from collections import Counter

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils import _pytree as pytree

from hologram_torch import backend as BK
from hologram_torch._aten.fuse import FusedKernel

try:
    import expecttest  # noqa: F401 (torch's test utilities import it; scripts/python_env.sh)
except ImportError:   # a venv made before it was listed: importing op_db reaches only this
    _m = types.ModuleType("expecttest")
    _m.TestCase = unittest.TestCase
    sys.modules["expecttest"] = _m

# assert_close tolerances per dtype: hologram's reductions and fused kernels sum in another
# order than ATen's and use their own (correctly rounded to ~1 ulp) exp/log/erf/tanh
TOL = {torch.float32: dict(rtol=1.3e-5, atol=1e-5), torch.float64: dict(rtol=1e-9, atol=1e-9)}
GRAD_TOL = {torch.float64: dict(rtol=1e-7, atol=1e-7)}
SPECIALS = (float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e30)


def op_db():
    from torch.testing._internal.common_methods_invocations import op_db as db
    return db


def name_of(info):
    return info.name + ("." + info.variant_test_name if info.variant_test_name else "")


class Call:
    """A sample call as a function of its tensors: fn(*tensors) -> op's result."""

    def __init__(self, info, sample):
        self.info = info
        self.flat, self.spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
        self.pos = [i for i, a in enumerate(self.flat) if isinstance(a, torch.Tensor)]
        self.tensors = [self.flat[i] for i in self.pos]

    def fn(self, *ts):
        full = list(self.flat)
        for i, t in zip(self.pos, ts):
            full[i] = t
        a, args, kwargs = pytree.tree_unflatten(full, self.spec)
        return self.info.op(a, *args, **kwargs)

    def grad_inputs(self):
        """Indices of the tensors the gradient is taken for: float64 ones that require grad."""
        return [i for i, t in enumerate(self.tensors)
                if t.requires_grad and t.dtype == torch.float64]

    def with_specials(self):
        """A copy whose floating tensors hold NaN, +-inf, +-0 and a huge value in their first
        entries (None when no tensor is large enough)."""
        c = copy.copy(self)
        ts, hit = [], False
        for t in self.tensors:
            if t.dtype.is_floating_point and t.numel() >= len(SPECIALS):
                t = t.detach().clone()
                t.view(-1)[:len(SPECIALS)] = torch.tensor(SPECIALS, dtype=t.dtype)
                hit = True
            ts.append(t)
        c.tensors = ts
        return c if hit else None


def outputs(r):
    return pytree.tree_leaves(r)


def grad_fn(call, gis, gos):
    """fn(*tensors, *grad_outputs) -> (results, grads of the gis inputs) by torch.autograd.grad
    over the differentiable float outputs (traced by make_fx: ATen's backward ops in the graph)."""
    n = len(call.tensors)

    def f(*args):
        ts = [t.detach().requires_grad_(i in gis) if t.dtype.is_floating_point else t
              for i, t in enumerate(args[:n])]
        with torch.enable_grad():
            outs = [o for o in outputs(call.fn(*ts))]
            diff = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
            gs = torch.autograd.grad(diff, [ts[i] for i in gis], list(args[n:]),
                                     allow_unused=True)
        return [o.detach() if isinstance(o, torch.Tensor) else o for o in outs], \
            [g for g in gs]
    return f


def diff_outputs(call, gis):
    """The differentiable outputs of the call (eager), whose shapes the grad_outputs take."""
    ts = [t.detach().requires_grad_(i in gis) if t.dtype.is_floating_point else t
          for i, t in enumerate(call.tensors)]
    with torch.enable_grad():
        return [o for o in outputs(call.fn(*ts))
                if isinstance(o, torch.Tensor) and o.requires_grad]


@functools.lru_cache(maxsize=None)
def _decompositions():
    return BK.decompositions(training=False)   # ~60 ms a call: torch materializes its table


def trace(fn, inputs):
    """The ATen graph, functionalized where it mutates (in-place ops rewritten, as AOTAutograd
    hands the backend its graphs; a lowered op's fresh result must not be written through)."""
    gm = make_fx(fn, tracing_mode="fake",
                 decomposition_table=_decompositions())(*inputs)
    if any(isinstance(n.target, torch._ops.OpOverload) and n.target._schema.is_mutable
           for n in gm.graph.nodes):
        gm = make_fx(torch.func.functionalize(gm), tracing_mode="fake")(*inputs)
    return gm


def lowered(gm):
    g = copy.deepcopy(gm)
    for p in BK.PASSES:
        p(g)
    return BK.lower(g)


def fresh(ts):
    return [t.detach().clone() for t in ts]


def run(gm, inputs, seed=0):
    """(result leaves, None) or (None, the exception)."""
    torch.manual_seed(seed)
    try:
        return outputs(gm(*fresh(inputs))), None
    except Exception as e:   # noqa: BLE001 - raises-iff compares the type
        return None, e


def _kernels(gm):
    return [n.target for n in gm.graph.nodes if isinstance(n.target, FusedKernel)]


def hologram_ops(gm, fallbacks_before):
    """Counter of ATen op names computed in hologram by the last run of gm."""
    c = Counter()
    for n in gm.graph.nodes:
        if n.op != "call_function" or n.target is operator.getitem:
            continue
        if "hologram_lowered" in n.meta:
            c[BK._op_name(n.meta["hologram_lowered"])] += 1
        elif "hologram_fused" in n.meta and n.target.fallbacks == fallbacks_before[n.target]:
            for name in n.meta["hologram_fused"]:
                c[BK._op_name(name)] += 1
    return c


def run_pair(gm, inputs, low=None):
    """Runs gm unlowered and lowered (low: lowered(gm) made before) on the same inputs; returns
    (problem or None, Counter of the ATen ops hologram computed)."""
    want, werr = run(gm, inputs)
    low = lowered(gm) if low is None else low
    before = {k: k.fallbacks for k in _kernels(low)}
    got, gerr = run(low, inputs)
    if werr is not None or gerr is not None:
        if werr is None or gerr is None or type(werr) is not type(gerr):
            return f"raises: torch {werr!r}, hologram {gerr!r}", Counter()
        return None, Counter()
    return compare(got, want), hologram_ops(low, before)


def compare(got, want, tol=TOL):
    """None when the result leaves agree in kind, dtype, shape and value; else what differs."""
    if len(got) != len(want):
        return f"{len(got)} results, torch {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, torch.Tensor):
            if g != w:
                return f"result {i}: {g!r}, torch {w!r}"
            continue
        if not isinstance(g, torch.Tensor):
            return f"result {i}: {type(g).__name__}, torch a tensor"
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"result {i}: {g.dtype}{tuple(g.shape)}, torch {w.dtype}{tuple(w.shape)}"
        try:
            torch.testing.assert_close(g, w, equal_nan=True, check_stride=False,
                                       **tol.get(w.dtype, {}))
        except AssertionError as e:
            return f"result {i}: " + str(e).splitlines()[0] + " " + " ".join(
                line.strip() for line in str(e).splitlines()[1:4])
    return None
