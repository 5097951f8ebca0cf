"""The differentiable entry points of functional / nn: each op without a gradient runs its
hologram op directly (_ops.py); with one, its ATen form through _aten/grad.py (torch's
derivatives as ATen backward ops, traced once per signature and lowered by THE table: no
hand-written formula here). Dropout's gradient is the formula registered on
torch.ops.hologram.dropout (_grad_ops.py); sparse gradients are torch's own ops.

The functions take ``ex`` (an executor id, _bridge.executor_id, 0: the tensors' device's); with
a gradient the table's lowerings run on it too (_bridge.run_on).
"""
import torch

from . import _ops as O
from ._aten import grad as _G


# torch.jit.trace on: _get_tracing_state, which dynamo folds to a constant when it traces
# these functions (it refuses _ops._tracing = _is_tracing, faster, used where dynamo never looks)
_tracing_state = torch._C._get_tracing_state


def refuse_traced_grad():
    """torch.jit.trace with gradients on: a Function would be recorded as a Python call (which
    TorchScript cannot save, and trace's check, run without gradients, records differently),
    and the op without it has no gradient (None, silently): refused."""
    raise RuntimeError("hologram_torch: torch.jit.trace with gradients enabled cannot record "
                       "hologram's gradients; trace under torch.no_grad() (every op is then "
                       "recorded as hologram::<op>; the trace saves, loads and runs hologram)")


def _needs_grad(*ts):
    """Whether the op's Function is needed: grad mode and an input that requires grad (under
    torch.jit.trace: refused, refuse_traced_grad)."""
    if not torch.is_grad_enabled():
        return False
    for t in ts:   # a loop: any() over a generator cost 0.2 us of a 1-element call
        if t is not None and t.requires_grad:
            if _tracing_state() is not None:
                refuse_traced_grad()
            return True
    return False


# ---- torch.autocast: the dtypes its op lists give (CPU, torch 2.13: matmul-like ops run in the
# autocast dtype, losses in float32, the rest as their inputs); float64 is never cast -------------
_LOWER = (torch.float16, torch.bfloat16)


def autocast_lower(t, *ts):
    """ts cast to the autocast dtype where autocast is on for t's device (f32 and lower floats)."""
    dev = t.device.type
    if not torch.is_autocast_enabled(dev):
        return ts
    dt = torch.get_autocast_dtype(dev)
    return tuple(u.to(dt) if u is not None and u.is_floating_point() and u.dtype != torch.float64
                 else u for u in ts)


def autocast_fp32(t, *ts):
    """ts with float16 / bfloat16 cast to float32 where autocast is on for t's device."""
    if not torch.is_autocast_enabled(t.device.type):
        return ts
    return tuple(u.float() if u is not None and u.dtype in _LOWER else u for u in ts)


# ---- binary: the common call of functional (two tensors, the default executor) -------------
_BINARY_OPS = {"add": O.add, "sub": O.sub, "mul": O.mul, "div": O.div}


def _binary(kind):
    op = _BINARY_OPS[kind]
    form = getattr(torch.ops.aten, kind).Tensor
    grad_enabled = torch.is_grad_enabled
    apply, apply2 = _G.apply, _G.eager2(kind, form, op)

    def f(a, b, ex=0):
        if grad_enabled() and (a.requires_grad or b.requires_grad):   # _needs_grad, inlined
            if _tracing_state() is not None:
                refuse_traced_grad()
            return apply2(a, b) if not ex else apply(ex, kind, (), form, a, b)
        return op(a, b, ex)

    def with_grad(a, b):
        """f(a, b) for operands known to need a gradient (functional's common call)."""
        if _tracing_state() is not None:   # _needs_grad's rule
            refuse_traced_grad()
        return apply2(a, b)

    f.__name__ = kind
    f.with_grad = with_grad
    return f


add, sub, mul, div = (_binary(k) for k in ("add", "sub", "mul", "div"))


# ---- every other op: its ATen form, differentiated by torch, lowered (_aten/grad.py) ---------
# Each form is the ATen call the hologram op computes; its forward and backward graphs run
# through THE table (the forward values are hologram's, as without gradients).
aten = torch.ops.aten
_REDUCTION = {"none": 0, "mean": 1, "sum": 2}   # ATen's reduction enum


def _unary(kind, form):
    op = _UNARY_OPS[kind]

    def f(x, ex=0):
        if _needs_grad(x):
            return _G.apply(ex, kind, (), form, x)
        return op(x, ex)

    f.__name__ = kind
    return f


_UNARY_OPS = {"relu": O.relu, "neg": O.neg, "abs": O.abs, "exp": O.exp, "log": O.log,
              "sqrt": O.sqrt, "sigmoid": O.sigmoid, "tanh": O.tanh, "silu": O.silu,
              "softplus": O.softplus}
relu = _unary("relu", aten.relu.default)
neg = _unary("neg", aten.neg.default)
abs_ = _unary("abs", aten.abs.default)
exp = _unary("exp", aten.exp.default)
log = _unary("log", aten.log.default)
sqrt = _unary("sqrt", aten.sqrt.default)
sigmoid = _unary("sigmoid", aten.sigmoid.default)
tanh = _unary("tanh", aten.tanh.default)
silu = _unary("silu", aten.silu.default)
softplus = _unary("softplus", lambda x: aten.softplus.default(x, 1, 20))


def gelu(x, approximate="none", ex=0):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"hologram_torch.gelu: approximate must be 'none' or 'tanh', got "
                         f"{approximate!r}")
    if _needs_grad(x):
        return _G.apply(ex, "gelu", (approximate,),
                        lambda x: aten.gelu.default(x, approximate=approximate), x)
    return O.gelu(x, approximate, ex)


def softmax(x, dim, ex=0, log=False):
    if _needs_grad(x):
        op = aten._log_softmax.default if log else aten._softmax.default
        return _G.apply(ex, "log_softmax" if log else "softmax", (dim,),
                        lambda x: op(x, dim, False), x)
    return (O.log_softmax if log else O.softmax)(x, dim, ex)


def layer_norm(x, shape, weight=None, bias=None, eps=1e-5, ex=0):
    shape = list(shape)
    if _needs_grad(x, weight, bias):
        return _G.apply(ex, "layer_norm", (tuple(shape), eps), lambda x, w, b: (
            aten.native_layer_norm.default(x, shape, w, b, eps)[0]), x, weight, bias)
    return O.layer_norm(x, shape, weight, bias, eps, ex)


def rms_norm(x, shape, weight=None, eps=None, ex=0):
    shape = list(shape)
    if _needs_grad(x, weight):
        return _G.apply(ex, "rms_norm", (tuple(shape), eps), lambda x, w: (
            aten.rms_norm.default(x, shape, w, eps)), x, weight)
    return O.rms_norm(x, shape, weight, eps, ex)


def matmul(a, b, ex=0):
    a, b = autocast_lower(a, a, b)
    if _needs_grad(a, b):
        return _G.apply(ex, "matmul", (), aten.matmul.default, a, b)
    return O.matmul(a, b, ex)


def linear(x, w, b=None, ex=0):
    x, w, b = autocast_lower(x, x, w, b)
    if _needs_grad(x, w, b):
        return _G.apply(ex, "linear", (), aten.linear.default, x, w, b)
    return O.linear(x, w, b, ex)


def _reduce(name, op, dims_form, all_form):
    def f(x, dims=None, keepdim=False, ex=0):
        dims = None if dims is None else list(dims)
        if _needs_grad(x):
            if dims is None:
                return _G.apply(ex, name, (keepdim,), (lambda x: all_form(x)) if not keepdim else
                                (lambda x: dims_form(x, list(range(x.dim())), True)), x)
            return _G.apply(ex, name, (tuple(dims), keepdim),
                            lambda x: dims_form(x, dims, keepdim), x)
        return op(x, dims, keepdim, ex)
    f.__name__ = name
    return f


sum_ = _reduce("sum", O.sum, aten.sum.dim_IntList, aten.sum.default)
mean = _reduce("mean", O.mean, aten.mean.dim, aten.mean.default)


# ---- losses ----------------------------------------------------------------------------------
def mse_loss(a, b, reduction="mean", ex=0):
    a, b = autocast_fp32(a, a, b)
    if not _needs_grad(a, b):
        return O.mse_loss(a, b, reduction, ex)
    r = _REDUCTION[reduction]
    return _G.apply(ex, "mse_loss", (r,), lambda a, b: aten.mse_loss.default(a, b, r), a, b)


def cross_entropy(logits, target, ignore_index=-100, reduction="mean", ex=0):
    logits, target = autocast_fp32(logits, logits, target)
    if _needs_grad(logits, target):
        r = _REDUCTION[reduction]
        return _G.apply(ex, "cross_entropy", (ignore_index, r), lambda x, t: (
            aten.cross_entropy_loss.default(x, t, None, r, ignore_index, 0.0)), logits, target)
    return O.cross_entropy(logits, target, ignore_index, reduction, ex)


# ---- data ------------------------------------------------------------------------------------
def cat(tensors, dim=0, ex=0, stack=False):
    tensors = list(tensors)
    if _needs_grad(*tensors):
        op = aten.stack.default if stack else aten.cat.default
        return _G.apply(ex, "stack" if stack else "cat", (dim, len(tensors)),
                        lambda *ts: op(list(ts), dim), *tensors)
    return (O.stack if stack else O.cat)(tensors, dim, ex)


def where(cond, a, b, ex=0):
    if _needs_grad(a, b):
        return _G.apply(ex, "where", (), aten.where.self, cond, a, b)
    return O.where(cond, a, b, ex)


def clamp(x, lo=None, hi=None, ex=0):
    lo = None if lo is None else float(lo)
    hi = None if hi is None else float(hi)
    if _needs_grad(x):
        return _G.apply(ex, "clamp", (lo, hi), lambda x: aten.clamp.default(x, lo, hi), x)
    return O.clamp(x, lo, hi, ex)


def _clamp_t_values(x, lo, hi, ex):
    y = x if lo is None else O.maximum(x, lo, ex)   # NaN in x or a bound gives NaN, as torch
    return y if hi is None else O.minimum(y, hi, ex)


def clamp_tensor(x, lo=None, hi=None, ex=0):
    """clamp with tensor bounds (lo / hi tensors or None, of x's dtype)."""
    if _needs_grad(x, lo, hi):
        return _G.apply(ex, "clamp_tensor", (), aten.clamp.Tensor, x, lo, hi)
    return _clamp_t_values(x, lo, hi, ex)


def binary_cross_entropy_with_logits(x, t, w=None, pw=None, reduction="mean", ex=0):
    x, t, w, pw = autocast_fp32(x, x, t, w, pw)
    if x.dtype != t.dtype and x.is_floating_point() and t.is_floating_point():
        # torch builds the loss in place on (1 - target): the result has the target's dtype,
        # computed in the promoted one
        dt = torch.promote_types(x.dtype, t.dtype)
        return binary_cross_entropy_with_logits(x.to(dt), t.to(dt), w, pw, reduction,
                                                ex).to(t.dtype)
    if _needs_grad(x, t, w, pw):
        if _needs_grad(w, pw):
            raise NotImplementedError("hologram_torch.binary_cross_entropy_with_logits: "
                                      "gradients with respect to weight or pos_weight are not "
                                      "computed (torch's are not either); detach them")
        r = _REDUCTION[reduction]
        return _G.apply(ex, "bce_with_logits", (r,), lambda x, t, w, pw: (
            aten.binary_cross_entropy_with_logits.default(x, t, w, pw, r)), x, t, w, pw)
    return O.binary_cross_entropy_with_logits(x, t, w, pw, reduction, ex)


def binary_cross_entropy(p, t, w=None, reduction="mean", ex=0):
    p, t, w = autocast_fp32(p, p, t, w)
    if _needs_grad(p, t, w):
        if _needs_grad(w):
            raise NotImplementedError("hologram_torch.binary_cross_entropy: gradients with "
                                      "respect to weight are not computed (torch's are not "
                                      "either); detach it")
        r = _REDUCTION[reduction]
        return _G.apply(ex, "binary_cross_entropy", (r,), lambda p, t, w: (
            aten.binary_cross_entropy.default(p, t, w, r)), p, t, w)
    return O.binary_cross_entropy(p, t, w, reduction, ex)


def nll_loss(x, target, w=None, ignore_index=-100, reduction="mean", ex=0):
    x, w = autocast_fp32(x, x, w)
    if _needs_grad(w):   # refused whether or not x needs a gradient, as torch refuses it
        raise NotImplementedError("hologram_torch.nll_loss: gradients with respect to the "
                                  "class weights are not computed (torch's are not either); "
                                  "detach them")
    if _needs_grad(x):
        r = _REDUCTION[reduction]
        return _G.apply(ex, "nll_loss", (ignore_index, r), lambda x, t, w: (
            aten.nll_loss_nd.default(x, t, w, r, ignore_index)), x, target, w)
    return O.nll_loss(x, target, w, ignore_index, reduction, ex)


# ---- dropout: hologram's Philox mask from a seed tensor (no ATen op draws the same mask): its
# gradient is the registered formula of torch.ops.hologram.dropout (_grad_ops.py) ------------------
def dropout(x, p, seed, ex=0):
    if _needs_grad(x):
        return O.dropout.overload(x, p, seed, ex)   # the dispatcher: its autograd formula
    return O.dropout(x, p, seed, ex)


# ---- indexing: dense gradients through the ATen forms; torch's sparse gradients (sparse_grad,
# sparse=True) come from torch's own ops (hologram makes no sparse tensors) -------------------------
def index_select(x, dim, index, ex=0):
    if _needs_grad(x):
        # a 0-d index as its 1-element 1-D view (the same result; the core-ATen decomposition
        # of the backward mis-broadcasts a 0-d one in torch 2.13)
        return _G.apply(ex, "index_select", (dim,), lambda x, i: aten.index_select.default(
            x, dim, i.reshape(1) if i.dim() == 0 else i), x, index)
    return O.index_select(x, dim, index, ex)


def gather(x, dim, index, ex=0, sparse=False):
    if _needs_grad(x):
        if sparse:
            return aten.gather.default(x, dim, index, sparse_grad=True)
        return _G.apply(ex, "gather", (dim,), lambda x, i: aten.gather.default(x, dim, i), x, index)
    return O.gather(x, dim, index, ex)


def embedding(input, weight, padding_idx=None, ex=0, freq=False, sparse=False):
    if _needs_grad(weight):
        pad = -1 if padding_idx is None else padding_idx
        if sparse:
            return aten.embedding.default(weight, input, pad, freq, True)
        return _G.apply(ex, "embedding", (pad, freq), lambda w, i: aten.embedding.default(
            w, i, pad, freq), weight, input)
    rows = O.index_select(weight, 0, input.reshape(-1), ex)
    return rows.reshape(tuple(input.shape) + (weight.shape[1],))
