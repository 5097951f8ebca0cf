"""The one place that holds the backward formulas: a torch.autograd.Function per op family,
around the dispatcher ops of _ops.py (forward) and _grad_ops.py (the fused backward ops).
Backward passes run on hologram: matmul and linear gradients are matmuls of transposed views,
elementwise gradients products and quotients of the same ops, reductions' gradients broadcasts
(views), the rest the backward ops. Gradients made of differentiable ops here (binary ops,
matmul, linear, sum/mean, mse) are themselves differentiable (double backward); the fused
backward ops are not (once_differentiable: a second derivative raises a clear error).

The public functions take ``ex`` (an executor id, _bridge.executor_id) and call the op directly
when no input needs a gradient (the Function costs 5.3 us per call on its own).
"""
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable

from . import _grad_ops as G
from . import _ops as O


def _needs_grad(*ts):
    if not torch.is_grad_enabled():
        return False
    for t in ts:   # a loop: any() over a generator cost 0.2 us of a 1-element call
        if t is not None and t.requires_grad:
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


def _sum_to(g, shape, ex):
    """g summed over the dims it was broadcast along, to shape (a view where nothing is)."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and g.shape[lead + i] != 1]
    return sum_(g, dims, True, ex).reshape(shape) if dims else g.reshape(shape)


# ---- binary ----------------------------------------------------------------------------------
class _Binary(Function):
    @staticmethod
    def forward(ctx, a, b, ex, kind):
        ctx.ex, ctx.kind = ex, kind
        if kind in ("add", "sub"):   # their gradients need only the shapes and dtypes
            ctx.meta = (a.shape, a.dtype, b.shape, b.dtype)
        else:
            ctx.save_for_backward(a, b)
        return _BINARY_OPS[kind](a, b, ex)

    @staticmethod
    def backward(ctx, g):
        ex, kind = ctx.ex, ctx.kind
        na, nb = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        ga = gb = None
        if kind in ("add", "sub"):
            a_shape, a_dtype, b_shape, b_dtype = ctx.meta
        else:
            a, b = ctx.saved_tensors
            a_shape, a_dtype, b_shape, b_dtype = a.shape, a.dtype, b.shape, b.dtype
        if kind == "add":
            ga, gb = g, g
        elif kind == "sub":
            ga, gb = g, (neg(g, ex) if nb else None)
        elif kind == "mul":
            ga = mul(g, b, ex) if na else None
            gb = mul(g, a, ex) if nb else None
        elif kind == "div":
            ga = div(g, b, ex) if na else None
            gb = neg(div(mul(g, a, ex), mul(b, b, ex), ex), ex) if nb else None
        ga = _sum_to(ga, a_shape, ex).to(a_dtype) if na else None
        gb = _sum_to(gb, b_shape, ex).to(b_dtype) if nb else None
        return ga, gb, None, None


_BINARY_OPS = {"add": O.add, "sub": O.sub, "mul": O.mul, "div": O.div}


def _binary(kind):
    op = _BINARY_OPS[kind]

    grad_enabled = torch.is_grad_enabled

    def f(a, b, ex=0):
        if grad_enabled() and (a.requires_grad or b.requires_grad):   # _needs_grad, inlined
            return _Binary.apply(a, b, ex, kind)
        return op(a, b, ex)

    f.__name__ = kind
    return f


add, sub, mul, div = (_binary(k) for k in ("add", "sub", "mul", "div"))


# ---- unary activations -----------------------------------------------------------------------
class _Activation(Function):
    @staticmethod
    def forward(ctx, x, ex, kind):
        ctx.ex, ctx.kind = ex, kind
        if kind == "gelu_none":
            y = O.gelu(x, "none", ex)
        elif kind == "gelu_tanh":
            y = O.gelu(x, "tanh", ex)
        else:
            y = _UNARY_OPS[kind](x, ex)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        if ctx.kind == "neg":
            return neg(g, ctx.ex), None, None
        return G.activation_backward(g.contiguous(), x, y, ctx.kind, ctx.ex), None, None


_UNARY_OPS = {"relu": O.relu, "neg": O.neg, "abs": O.abs, "exp": O.exp, "log": O.log,
              "sqrt": O.sqrt, "sigmoid": O.sigmoid, "tanh": O.tanh, "silu": O.silu,
              "softplus": O.softplus}


def _unary(kind):
    op = _UNARY_OPS[kind]

    def f(x, ex=0):
        if _needs_grad(x):
            return _Activation.apply(x, ex, kind)
        return op(x, ex)

    f.__name__ = kind
    return f


(relu, neg, abs_, exp, log, sqrt, sigmoid, tanh, silu, softplus) = (
    _unary(k) for k in ("relu", "neg", "abs", "exp", "log", "sqrt", "sigmoid", "tanh", "silu",
                        "softplus"))


def gelu(x, approximate="none", ex=0):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"hologram_torch.gelu: approximate must be 'none' or 'tanh', got "
                         f"{approximate!r}")
    if _needs_grad(x):
        return _Activation.apply(x, ex, "gelu_" + approximate)
    return O.gelu(x, approximate, ex)


# ---- softmax / log_softmax -------------------------------------------------------------------
class _Softmax(Function):
    @staticmethod
    def forward(ctx, x, dim, log, ex):
        y = (O.log_softmax if log else O.softmax)(x, dim, ex)
        ctx.dim, ctx.log, ctx.ex = dim, log, ex
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return G.softmax_backward(g.contiguous(), y, ctx.dim, ctx.log, ctx.ex), None, None, None


def softmax(x, dim, ex=0, log=False):
    if _needs_grad(x):
        return _Softmax.apply(x, dim, log, ex)
    return (O.log_softmax if log else O.softmax)(x, dim, ex)


# ---- layer_norm / rms_norm -------------------------------------------------------------------
class _Norm(Function):
    @staticmethod
    def forward(ctx, x, shape, weight, bias, eps, rms, ex):
        if rms:
            y = O.rms_norm(x, shape, weight, eps, ex)
        else:
            y = O.layer_norm(x, shape, weight, bias, eps, ex)
        ctx.shape, ctx.eps, ctx.rms, ctx.ex = shape, eps, rms, ex
        ctx.save_for_backward(x, weight)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        eps = ctx.eps if ctx.eps is not None else torch.finfo(x.dtype).eps
        gx, gw, gb = G.norm_backward(g.contiguous(), x, ctx.shape, w, eps, ctx.rms, ctx.ex)
        return (gx if ctx.needs_input_grad[0] else None, None,
                gw if ctx.needs_input_grad[2] else None,
                gb if ctx.needs_input_grad[3] else None, None, None, None)


def layer_norm(x, shape, weight=None, bias=None, eps=1e-5, ex=0):
    shape = list(shape)
    if _needs_grad(x, weight, bias):
        return _Norm.apply(x, shape, weight, bias, eps, False, ex)
    return O.layer_norm(x, shape, weight, bias, eps, ex)


def rms_norm(x, shape, weight=None, eps=None, ex=0):
    shape = list(shape)
    if _needs_grad(x, weight):
        return _Norm.apply(x, shape, weight, None, eps, True, ex)
    return O.rms_norm(x, shape, weight, eps, ex)


# ---- matmul / linear -------------------------------------------------------------------------
def _mT(t):
    return t.transpose(-1, -2)


class _Matmul(Function):
    @staticmethod
    def forward(ctx, a, b, ex):
        ctx.ex = ex
        ctx.save_for_backward(a, b)
        return O.matmul(a, b, ex)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ex = ctx.ex
        # 1-D operands as matrices (torch.matmul's rule), then the dims put back.
        a2 = a.unsqueeze(0) if a.dim() == 1 else a
        b2 = b.unsqueeze(-1) if b.dim() == 1 else b
        g2 = g
        if a.dim() == 1:
            g2 = g2.unsqueeze(-2)
        if b.dim() == 1:
            g2 = g2.unsqueeze(-1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = _sum_to(matmul(g2, _mT(b2), ex), a2.shape, ex).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            gb = _sum_to(matmul(_mT(a2), g2, ex), b2.shape, ex).reshape(b.shape)
        return ga, gb, None


def matmul(a, b, ex=0):
    a, b = autocast_lower(a, a, b)
    if _needs_grad(a, b):
        return _Matmul.apply(a, b, ex)
    return O.matmul(a, b, ex)


class _Linear(Function):
    @staticmethod
    def forward(ctx, x, w, b, ex):
        ctx.ex = ex
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        return O.linear(x, w, b, ex)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        ex = ctx.ex
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = matmul(g, w, ex) if w.dim() == 2 else mul(g.unsqueeze(-1), w, ex)
        g2 = g.reshape(-1, w.shape[0]) if w.dim() == 2 else g.reshape(-1, 1)
        x2 = x.reshape(-1, x.shape[-1])
        if ctx.needs_input_grad[1]:
            gw = matmul(_mT(g2), x2, ex).reshape(w.shape)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = sum_(g2, [0], False, ex).reshape(()) if w.dim() == 1 else sum_(g2, [0], False, ex)
        return gx, gw, gb, None


def linear(x, w, b=None, ex=0):
    x, w, b = autocast_lower(x, x, w, b)
    if _needs_grad(x, w, b):
        return _Linear.apply(x, w, b, ex)
    return O.linear(x, w, b, ex)


# ---- reductions ------------------------------------------------------------------------------
def _kept_shape(x, dims):
    nd = max(x.dim(), 1)
    ds = set(range(x.dim())) if not dims else {d % nd for d in dims}
    return tuple(1 if i in ds else s for i, s in enumerate(x.shape))


class _Reduce(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim, mean_, ex):
        ctx.dims, ctx.mean, ctx.ex = dims, mean_, ex
        ctx.xshape = x.shape
        ctx.kept = _kept_shape(x, dims)
        ctx.n = max(x.numel(), 1) // max(1, _prod(ctx.kept))
        return (O.mean if mean_ else O.sum)(x, dims, keepdim, ex)

    @staticmethod
    def backward(ctx, g):
        g = g.reshape(ctx.kept).expand(ctx.xshape)
        if ctx.mean:
            g = div(g, torch.tensor(float(ctx.n), dtype=g.dtype, device=g.device), ctx.ex)
        return g, None, None, None, None


def _prod(s):
    r = 1
    for v in s:
        r *= v
    return r


def sum_(x, dims=None, keepdim=False, ex=0):
    dims = None if dims is None else list(dims)
    if _needs_grad(x):
        return _Reduce.apply(x, dims, keepdim, False, ex)
    return O.sum(x, dims, keepdim, ex)


def mean(x, dims=None, keepdim=False, ex=0):
    dims = None if dims is None else list(dims)
    if _needs_grad(x):
        return _Reduce.apply(x, dims, keepdim, True, ex)
    return O.mean(x, dims, keepdim, ex)


# ---- losses ----------------------------------------------------------------------------------
def mse_loss(a, b, reduction="mean", ex=0):
    a, b = autocast_fp32(a, a, b)
    if not _needs_grad(a, b):
        return O.mse_loss(a, b, reduction, ex)
    d = sub(a, b, ex)          # differentiable composition: double backward works
    sq = mul(d, d, ex)
    if reduction == "none":
        return sq
    return mean(sq, None, False, ex) if reduction == "mean" else sum_(sq, None, False, ex)


class _CrossEntropy(Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, reduction, ex):
        ctx.ii, ctx.red, ctx.ex = ignore_index, reduction, ex
        ctx.save_for_backward(logits, target)
        return O.cross_entropy(logits, target, ignore_index, reduction, ex)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        logits, target = ctx.saved_tensors
        gl = G.cross_entropy_backward(g.contiguous(), logits, target, ctx.ii, ctx.red, ctx.ex)
        return gl, None, None, None, None


def cross_entropy(logits, target, ignore_index=-100, reduction="mean", ex=0):
    logits, target = autocast_fp32(logits, logits, target)
    if _needs_grad(logits):
        if target.requires_grad:
            raise NotImplementedError("hologram_torch.cross_entropy: gradients with respect to "
                                      "the target are not computed (torch computes them for "
                                      "probability targets); detach the target")
        return _CrossEntropy.apply(logits, target, ignore_index, reduction, ex)
    return O.cross_entropy(logits, target, ignore_index, reduction, ex)


# ---- data ------------------------------------------------------------------------------------
class _Cat(Function):
    """cat / stack: each input's gradient is its slice of g (a view)."""

    @staticmethod
    def forward(ctx, dim, stack, ex, *tensors):
        ctx.dim, ctx.stack = dim, stack
        ctx.sizes = [t.shape[dim] if not stack else 1 for t in tensors]
        ctx.dtypes = [t.dtype for t in tensors]
        return (O.stack if stack else O.cat)(list(tensors), dim, ex)

    @staticmethod
    def backward(ctx, g):
        d = ctx.dim % g.dim()
        grads, off = [], 0
        for n, dt in zip(ctx.sizes, ctx.dtypes):
            part = g.select(d, off) if ctx.stack else g.narrow(d, off, n)
            grads.append(part.to(dt) if dt.is_floating_point else None)
            off += n
        return (None, None, None, *grads)


def cat(tensors, dim=0, ex=0, stack=False):
    tensors = list(tensors)
    if _needs_grad(*tensors):
        return _Cat.apply(dim, stack, ex, *tensors)
    return (O.stack if stack else O.cat)(tensors, dim, ex)


class _Where(Function):
    @staticmethod
    def forward(ctx, cond, a, b, ex):
        ctx.ex = ex
        ctx.save_for_backward(cond, a, b)
        return O.where(cond, a, b, ex)

    @staticmethod
    def backward(ctx, g):
        cond, a, b = ctx.saved_tensors
        zero = torch.zeros((), dtype=g.dtype, device=g.device)
        ga = gb = None
        if ctx.needs_input_grad[1]:
            ga = _sum_to(where(cond, g, zero, ctx.ex), a.shape, ctx.ex).to(a.dtype)
        if ctx.needs_input_grad[2]:
            gb = _sum_to(where(cond, zero, g, ctx.ex), b.shape, ctx.ex).to(b.dtype)
        return None, ga, gb, None


def where(cond, a, b, ex=0):
    if _needs_grad(a, b):
        return _Where.apply(cond, a, b, ex)
    return O.where(cond, a, b, ex)


class _Clamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi, ex):
        ctx.lo, ctx.hi, ctx.ex = lo, hi, ex
        ctx.save_for_backward(x)
        return O.clamp(x, lo, hi, ex)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return G.clamp_backward(g.contiguous(), x, ctx.lo, ctx.hi, ctx.ex), None, None, None


def clamp(x, lo=None, hi=None, ex=0):
    lo = None if lo is None else float(lo)
    hi = None if hi is None else float(hi)
    if _needs_grad(x):
        return _Clamp.apply(x, lo, hi, ex)
    return O.clamp(x, lo, hi, ex)


class _BCEWithLogits(Function):
    @staticmethod
    def forward(ctx, x, t, w, pw, reduction, ex):
        ctx.red, ctx.ex = reduction, ex
        ctx.save_for_backward(x, t, w, pw)
        return O.binary_cross_entropy_with_logits(x, t, w, pw, reduction, ex)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, t, w, pw = ctx.saved_tensors
        gx = G.bce_with_logits_backward(g.contiguous(), x, t, w, pw, ctx.red, ctx.ex)
        return gx, None, None, None, None, None


def binary_cross_entropy_with_logits(x, t, w=None, pw=None, reduction="mean", ex=0):
    x, t, w, pw = autocast_fp32(x, x, t, w, pw)
    if _needs_grad(x):
        if _needs_grad(t, w, pw):
            raise NotImplementedError("hologram_torch.binary_cross_entropy_with_logits: "
                                      "gradients with respect to target, weight or pos_weight "
                                      "are not computed; detach them")
        return _BCEWithLogits.apply(x, t, w, pw, reduction, ex)
    return O.binary_cross_entropy_with_logits(x, t, w, pw, reduction, ex)


class _BCE(Function):
    @staticmethod
    def forward(ctx, p, t, w, reduction, ex):
        ctx.red, ctx.ex = reduction, ex
        ctx.save_for_backward(p, t, w)
        return O.binary_cross_entropy(p, t, w, reduction, ex)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        p, t, w = ctx.saved_tensors
        gp = G.binary_cross_entropy_backward(g.contiguous(), p, t, w, ctx.red, ctx.ex)
        return gp, None, None, None, None


def binary_cross_entropy(p, t, w=None, reduction="mean", ex=0):
    p, t, w = autocast_fp32(p, p, t, w)
    if _needs_grad(p):
        if _needs_grad(t, w):
            raise NotImplementedError("hologram_torch.binary_cross_entropy: gradients with "
                                      "respect to target or weight are not computed; detach "
                                      "them")
        return _BCE.apply(p, t, w, reduction, ex)
    return O.binary_cross_entropy(p, t, w, reduction, ex)


class _NLL(Function):
    @staticmethod
    def forward(ctx, x, target, w, ignore_index, reduction, ex):
        ctx.ii, ctx.red, ctx.ex = ignore_index, reduction, ex
        ctx.save_for_backward(x, target, w)
        return O.nll_loss(x, target, w, ignore_index, reduction, ex)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, target, w = ctx.saved_tensors
        gx = G.nll_loss_backward(g.contiguous(), x, target, w, ctx.ii, ctx.red, ctx.ex)
        return gx, None, None, None, None, None


def nll_loss(x, target, w=None, ignore_index=-100, reduction="mean", ex=0):
    x, w = autocast_fp32(x, x, w)
    if _needs_grad(x):
        if _needs_grad(w):
            raise NotImplementedError("hologram_torch.nll_loss: gradients with respect to the "
                                      "class weights are not computed; detach them")
        return _NLL.apply(x, target, w, ignore_index, reduction, ex)
    return O.nll_loss(x, target, w, ignore_index, reduction, ex)


class _Dropout(Function):
    @staticmethod
    def forward(ctx, x, p, seed, ex):
        ctx.p, ctx.seed, ctx.ex = p, seed, ex
        return O.dropout(x, p, seed, ex)

    @staticmethod
    def backward(ctx, g):
        return dropout_backward_op(g, ctx.p, ctx.seed, ctx.ex), None, None, None


class _DropoutBackward(Function):
    """The backward of dropout is dropout's own mask and scale again: differentiable."""

    @staticmethod
    def forward(ctx, g, p, seed, ex):
        ctx.p, ctx.seed, ctx.ex = p, seed, ex
        return G.dropout_backward(g.contiguous(), p, seed, ex)

    @staticmethod
    def backward(ctx, gg):
        return dropout_backward_op(gg, ctx.p, ctx.seed, ctx.ex), None, None, None


def dropout_backward_op(g, p, seed, ex=0):
    if _needs_grad(g):
        return _DropoutBackward.apply(g, p, seed, ex)
    return G.dropout_backward(g.contiguous(), p, seed, ex)


def dropout(x, p, seed, ex=0):
    if _needs_grad(x):
        return _Dropout.apply(x, p, seed, ex)
    return O.dropout(x, p, seed, ex)


class _IndexSelect(Function):
    @staticmethod
    def forward(ctx, x, dim, index, ex):
        ctx.dim, ctx.shape, ctx.ex = dim % max(x.dim(), 1), tuple(x.shape), ex
        ctx.save_for_backward(index)
        return O.index_select(x, dim, index, ex)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        if not ctx.shape:   # a 0-d input: its one element got every selected gradient
            return sum_(g, None, False, ctx.ex), None, None, None
        g = g.contiguous().reshape(
            ctx.shape[:ctx.dim] + (index.numel(),) + ctx.shape[ctx.dim + 1:])
        return O.index_add_zeros(g, ctx.dim, index, list(ctx.shape), False, ctx.ex), None, None, None


def index_select(x, dim, index, ex=0):
    if _needs_grad(x):
        return _IndexSelect.apply(x, dim, index, ex)
    return O.index_select(x, dim, index, ex)


class _Gather(Function):
    @staticmethod
    def forward(ctx, x, dim, index, ex):
        ctx.dim, ctx.shape, ctx.ex = dim % max(x.dim(), 1), tuple(x.shape), ex
        ctx.save_for_backward(index)
        return O.gather(x, dim, index, ex)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        if not ctx.shape:
            return g.clone(), None, None, None
        return (O.index_add_zeros(g.contiguous(), ctx.dim, index, list(ctx.shape), True, ctx.ex),
                None, None, None)


def gather(x, dim, index, ex=0):
    if _needs_grad(x):
        return _Gather.apply(x, dim, index, ex)
    return O.gather(x, dim, index, ex)


class _Embedding(Function):
    """weight rows at input's indices; the weight gradient sums g's rows per index (index_add),
    the padding_idx row gets none."""

    @staticmethod
    def forward(ctx, input, weight, padding_idx, ex):
        ctx.pad, ctx.shape, ctx.ex = padding_idx, tuple(weight.shape), ex
        flat = input.reshape(-1)
        ctx.save_for_backward(flat)
        rows = O.index_select(weight, 0, flat, ex)
        return rows.reshape(tuple(input.shape) + (weight.shape[1],))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (flat,) = ctx.saved_tensors
        g = g.contiguous().reshape(flat.numel(), ctx.shape[1])
        gw = O.index_add_zeros(g, 0, flat, list(ctx.shape), False, ctx.ex)
        if ctx.pad is not None:
            gw[ctx.pad] = 0
        return None, gw, None, None


def embedding(input, weight, padding_idx=None, ex=0):
    if _needs_grad(weight):
        return _Embedding.apply(input, weight, padding_idx, ex)
    rows = O.index_select(weight, 0, input.reshape(-1), ex)
    return rows.reshape(tuple(input.shape) + (weight.shape[1],))
