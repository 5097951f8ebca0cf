"""FX pass of the hologram compile backend, before the fusion pass: formulas written out in
ATen ops that compute a function hologram has one kernel for, replaced by that function's ATen
op (which the table then lowers).

The tanh form of GELU written out, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (Hugging
Face's ``NewGELUActivation``, GPT-2's ``gelu_new``; ``gelu_pytorch_tanh`` already calls
``gelu(approximate='tanh')``), becomes ``aten.gelu(x, approximate='tanh')``: hologram's gelu
kernel computes that function within 3.5 ULP (docs/math_accuracy.md) in one pass, where the
eight ops of the written-out form ran as a fused chain ~3x slower; the written-out form in f32
(torch's eager result) differs from the exact function by a few ULP, so the compiled result
differs from eager by that much (far inside the backend's 1e-4 tolerance). Only where every
intermediate of the formula is used inside it alone (a training graph that saves the tanh for
the backward keeps the formula).
"""
import math

import torch

aten = torch.ops.aten

__all__ = ["gelu_tanh_formula"]

_C0 = math.sqrt(2.0 / math.pi)


def _close(v, want):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v - want) <= 1e-6 * abs(want)


def _call(n, *targets):
    return isinstance(n, torch.fx.Node) and n.op == "call_function" and n.target in targets


def _mul_by(n, c):
    """The tensor operand of n = mul(t, c) or mul(c, t) with c close to the constant, else
    None."""
    if not _call(n, aten.mul.Tensor) or len(n.args) != 2 or n.kwargs:
        return None
    a, b = n.args
    if isinstance(a, torch.fx.Node) and _close(b, c):
        return a
    if isinstance(b, torch.fx.Node) and _close(a, c):
        return b
    return None


def _add_parts(n):
    """The operands (a, b) of n = add(a, b) with alpha 1, else None."""
    if not _call(n, aten.add.Tensor) or len(n.args) != 2 or n.kwargs.get("alpha", 1) != 1:
        return None
    return n.args


def _single_use(*nodes):
    return all(len(n.users) == 1 for n in nodes)


def _match_gelu_tanh(tanh):
    """(x, out, inner nodes) of the written-out tanh GELU around this tanh node, else None."""
    if len(tanh.args) != 1 or len(tanh.users) != 1:
        return None
    m2 = tanh.args[0]
    a1 = _mul_by(m2, _C0)
    parts = _add_parts(a1) if a1 is not None else None
    if parts is None:
        return None
    for x, m1 in (parts, parts[::-1]):
        p = _mul_by(m1, 0.044715) if isinstance(x, torch.fx.Node) else None
        if p is None or not _call(p, aten.pow.Tensor_Scalar) or p.args[0] is not x or \
                not _close(p.args[1], 3.0):
            continue
        a2 = next(iter(tanh.users))
        one = _add_parts(a2)
        if one is None or not any(_close(v, 1.0) for v in one) or tanh not in one:
            return None
        out = next(iter(a2.users)) if len(a2.users) == 1 else None
        if out is None or not _call(out, aten.mul.Tensor) or len(out.args) != 2:
            return None
        half = out.args[1] if out.args[0] is a2 else out.args[0]
        if _mul_by(half, 0.5) is not x:
            return None
        inner = (p, m1, a1, m2, tanh, a2, half)
        if not _single_use(*inner):
            return None
        return x, out, inner
    return None


def gelu_tanh_formula(gm: torch.fx.GraphModule) -> int:
    """Replaces each written-out tanh GELU of float32/float64 in gm by aten.gelu(x,
    approximate='tanh'); returns how many."""
    graph = gm.graph
    made = 0
    for tanh in [n for n in graph.nodes if _call(n, aten.tanh.default)]:
        if tanh.graph is not graph or tanh not in graph.nodes:
            continue
        m = _match_gelu_tanh(tanh)
        if m is None:
            continue
        x, out, inner = m
        xv, ov = x.meta.get("val"), out.meta.get("val")
        if not (isinstance(xv, torch.Tensor) and isinstance(ov, torch.Tensor) and
                xv.dtype in (torch.float32, torch.float64) and ov.dtype == xv.dtype and
                ov.shape == xv.shape):
            continue
        with graph.inserting_before(out):
            g = graph.call_function(aten.gelu.default, (x,), {"approximate": "tanh"})
        g.meta.update(out.meta)
        out.replace_all_uses_with(g)
        graph.erase_node(out)
        for n in reversed(inner):
            graph.erase_node(n)
        made += 1
    if made:
        graph.lint()
        gm.recompile()
    return made
