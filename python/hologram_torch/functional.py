"""hologram's ops on torch tensors, with gradients: ``hologram_torch.functional``.

Every function takes an optional executor first (the product documents' form,
``add(exec, x, y)``) or as ``executor=``; without one, the executor of the tensors' device is
used (hologram.default_cpu_executor() for CPU tensors). The other arguments are torch's
(``torch.nn.functional`` / ``torch``): type promotion, broadcasting, ``dim``/``keepdim``,
``reduction``. Results are torch tensors on the inputs' device; inputs are read in place (no
copies, any strides).
"""
import numbers

import torch

import hologram as hg

from . import _autograd as A
from . import _bridge as B
from . import _ops as O
from . import _scalars as S

_Tensor = torch.Tensor
_MISSING = object()   # an argument not given

__all__ = ["add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid",
           "tanh", "gelu", "silu", "softplus", "softmax", "log_softmax", "layer_norm", "rms_norm",
           "linear", "matmul", "sum", "mean", "mse_loss", "cross_entropy", "cat", "stack", "where",
           "clamp", "clip", "binary_cross_entropy_with_logits", "binary_cross_entropy",
           "nll_loss", "dropout", "bmm", "addmm", "embedding", "index_select", "gather"]


def _split(fn, args, kw, n):
    """(executor id, the n positional arguments): an Executor may come first or as executor=."""
    ex = kw.pop("executor", None)
    if args and isinstance(args[0], hg.Executor):
        if ex is not None:
            raise TypeError(f"{fn}: executor given twice")
        ex, args = args[0], args[1:]
    if len(args) < n:
        raise TypeError(f"{fn}: expected {n} tensor argument(s), got {len(args)}")
    return B.executor_id(ex), args


def _binary(name, op):
    plain = getattr(O, name)   # the op without autograd
    grad_enabled = torch.is_grad_enabled
    with_grad = op.with_grad

    def f(a=_MISSING, b=_MISSING, *rest, **kw):
        # the common call f(tensor, tensor), checked by the op itself (named parameters: no
        # argument tuple to build)
        if type(a) is _Tensor and type(b) is _Tensor and not rest and not kw:
            if grad_enabled() and (a.requires_grad or b.requires_grad):
                return with_grad(a, b)
            return plain(a, b, 0)
        args = tuple(x for x in (a, b) if x is not _MISSING) + rest
        fn = f"hologram_torch.functional.{name}"
        alpha = kw.pop("alpha", None) if name in ("add", "sub") else None
        ex, (a, b) = _split(fn, args, kw, 2)
        if kw:
            raise TypeError(f"{fn}: unexpected keyword arguments {sorted(kw)}")
        if name == "sub":
            S.check_sub(a, b)
        rdt = S.arith_dtype(name, a, b)   # torch's, Python numbers as wrapped numbers
        cdt = S.compute_dtype(name, rdt, a, b, alpha)
        a, b = S.operands(fn, a, b, cdt)
        if cdt != rdt:   # float16 / bfloat16 beside a number: computed in float32
            a, b = (t if t.dtype == cdt else t.to(cdt) for t in (a, b))
        if alpha is not None:
            al = S.alpha_operand(alpha, cdt, b.device)
            if al is not None:   # other * alpha in the op's dtype, as torch
                b = A.mul(b if b.dtype == cdt else b.to(cdt), al, ex)
        out = op(a, b, ex)
        return out if cdt == rdt else out.to(rdt)

    f.__name__ = name
    f.__doc__ = f"torch.{name}(input, other) on hologram: broadcasting and torch's promotion."
    return f


add = _binary("add", A.add)
sub = _binary("sub", A.sub)
mul = _binary("mul", A.mul)
div = _binary("div", A.div)


def _unary(name, op, doc):
    def f(*args, **kw):
        fn = f"hologram_torch.functional.{name}"
        inplace = kw.pop("inplace", False)
        ex, (x,) = _split(fn, args, kw, 1)
        if kw:
            raise TypeError(f"{fn}: unexpected keyword arguments {sorted(kw)}")
        if inplace:
            raise ValueError(f"{fn}: inplace=True is not supported (results are new tensors)")
        B.check_tensor(x, "input", fn)
        return op(x, ex)

    f.__name__ = name
    f.__doc__ = doc
    return f


neg = _unary("neg", A.neg, "-input.")
abs = _unary("abs", A.abs_, "|input|.")   # noqa: A001 (torch's name)
exp = _unary("exp", A.exp, "e^input.")
log = _unary("log", A.log, "natural logarithm.")
sqrt = _unary("sqrt", A.sqrt, "square root.")
relu = _unary("relu", A.relu, "max(input, 0) (torch.nn.functional.relu).")
sigmoid = _unary("sigmoid", A.sigmoid, "1 / (1 + e^-input).")
tanh = _unary("tanh", A.tanh, "hyperbolic tangent.")
silu = _unary("silu", A.silu, "input * sigmoid(input) (torch.nn.functional.silu).")


def softplus(*args, beta=1.0, threshold=20.0, **kw):
    """torch.nn.functional.softplus: log(1 + e^(beta input)) / beta, and the input itself where
    beta * input > threshold (hologram's softplus never overflows; the threshold is torch's
    switch to the linear part, kept so results and gradients match torch's there)."""
    fn = "hologram_torch.functional.softplus"
    ex, (x, *rest) = _split(fn, args, kw, 1)
    if rest:
        beta = rest[0]
    if len(rest) > 1:
        threshold = rest[1]
    B.check_tensor(x, "input", fn, floats_only=True)
    beta, threshold = float(beta), float(threshold)
    if beta == 0.0 or beta != beta:
        raise ValueError(f"{fn}: beta must be a nonzero number, got {beta}")
    if beta == 1.0 and threshold >= 20.0 and x.dtype != torch.float64:
        return A.softplus(x, ex)   # torch's default: the same values above 20 (f16/bf16/f32)
    b = B.scalar(beta, x.dtype, x.device)
    bx = A.mul(x, b, ex) if beta != 1.0 else x
    y = A.softplus(bx, ex)
    if beta != 1.0:
        y = A.div(y, b, ex)
    return A.where(bx.detach() > threshold, x, y, ex)   # the mask only: no gradient through it


def gelu(*args, approximate="none", **kw):
    """torch.nn.functional.gelu: 'none' x Phi(x) (the erf form, torch's default) or 'tanh'."""
    fn = "hologram_torch.functional.gelu"
    ex, (x,) = _split(fn, args, kw, 1)
    B.check_tensor(x, "input", fn)
    return A.gelu(x, approximate, ex)


def _dim_arg(fn, args, kw, name="dim"):
    if name in kw:
        return kw.pop(name)
    if args:
        return args[0]
    raise TypeError(f"{fn}: missing argument '{name}' (softmax needs the dim, as torch's)")


def _softmax_input(fn, x, rest, kw):
    """softmax's input in its dtype= (torch casts the input first; the third positional
    argument or the keyword); after _dim_arg took the dim."""
    pos = [r for r in rest[1:] if type(r) is type(torch.float32)]   # torch.softmax(x, d, dtype)
    dtype = kw.pop("dtype", pos[0] if pos else None)
    kw.pop("_stacklevel", None)   # torch.nn.functional's
    if kw:
        raise TypeError(f"{fn}: unexpected keyword arguments {sorted(kw)}")
    B.check_tensor(x, "input", fn)
    return x if dtype is None or x.dtype == dtype else x.to(dtype)


def softmax(*args, **kw):
    """torch.softmax(input, dim, dtype=None) along dim (dtype: the input cast first)."""
    fn = "hologram_torch.functional.softmax"
    ex, (x, *rest) = _split(fn, args, kw, 1)
    dim, x = _dim_arg(fn, rest, kw), _softmax_input(fn, x, rest, kw)
    return A.softmax(x, int(dim), ex)


def log_softmax(*args, **kw):
    """torch.log_softmax(input, dim, dtype=None) along dim (dtype: the input cast first)."""
    fn = "hologram_torch.functional.log_softmax"
    ex, (x, *rest) = _split(fn, args, kw, 1)
    dim, x = _dim_arg(fn, rest, kw), _softmax_input(fn, x, rest, kw)
    return A.softmax(x, int(dim), ex, log=True)


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return [int(normalized_shape)]
    return [int(s) for s in normalized_shape]


def layer_norm(*args, weight=None, bias=None, eps=1e-5, **kw):
    """torch.nn.functional.layer_norm(input, normalized_shape, weight, bias, eps)."""
    fn = "hologram_torch.functional.layer_norm"
    ex, (x, *rest) = _split(fn, args, kw, 2)
    shape = rest[0]
    if len(rest) > 1:
        weight = rest[1]
    if len(rest) > 2:
        bias = rest[2]
    if len(rest) > 3:
        eps = rest[3]
    return A.layer_norm(x, _shape(shape), weight, bias, float(eps), ex)


def rms_norm(*args, weight=None, eps=None, **kw):
    """torch.nn.functional.rms_norm(input, normalized_shape, weight, eps)."""
    fn = "hologram_torch.functional.rms_norm"
    ex, (x, *rest) = _split(fn, args, kw, 2)
    shape = rest[0]
    if len(rest) > 1:
        weight = rest[1]
    if len(rest) > 2:
        eps = rest[2]
    return A.rms_norm(x, _shape(shape), weight, None if eps is None else float(eps), ex)


def linear(*args, bias=None, **kw):
    """torch.nn.functional.linear(input, weight, bias): input @ weight.T + bias."""
    fn = "hologram_torch.functional.linear"
    ex, (x, w, *rest) = _split(fn, args, kw, 2)
    if rest:
        bias = rest[0]
    return A.linear(x, w, bias, ex)


def matmul(*args, **kw):
    """torch.matmul(input, other) (1-D, 2-D and batched operands, broadcast batch dims)."""
    fn = "hologram_torch.functional.matmul"
    ex, (a, b) = _split(fn, args, kw, 2)
    return A.matmul(a, b, ex)


def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, numbers.Integral):
        return [int(dim)]
    return [int(d) for d in dim]


def _reduction(name, op, doc):
    def f(*args, dim=None, keepdim=False, dtype=None, **kw):
        fn = f"hologram_torch.functional.{name}"
        ex, (x, *rest) = _split(fn, args, kw, 1)
        if rest:
            dim = rest[0]
        if len(rest) > 1:
            keepdim = rest[1]
        B.check_tensor(x, "input", fn)
        if dtype is None:
            return op(x, _dims(dim), bool(keepdim), ex)
        # torch: the input cast to dtype, the result in dtype (hologram sums integers and bool
        # in int64: the cast back wraps as an int8 accumulator would; bool is "any nonzero")
        r = op(x.to(dtype), _dims(dim), bool(keepdim), ex)
        return r if r.dtype == dtype else r.to(dtype)

    f.__name__ = name
    f.__doc__ = doc
    return f


sum = _reduction("sum", A.sum_, "torch.sum(input, dim, keepdim, dtype): integers and bool sum "   # noqa: A001
                 "to int64, as torch.")
mean = _reduction("mean", A.mean, "torch.mean(input, dim, keepdim, dtype) of a floating tensor.")


def mse_loss(*args, reduction="mean", **kw):
    """torch.nn.functional.mse_loss(input, target, reduction)."""
    fn = "hologram_torch.functional.mse_loss"
    ex, (a, b) = _split(fn, args, kw, 2)
    B.check_tensor(a, "input", fn, floats_only=True)
    B.check_tensor(b, "target", fn, floats_only=True)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{fn}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    return A.mse_loss(a, b, reduction, ex)


def cross_entropy(*args, ignore_index=-100, reduction="mean", label_smoothing=0.0, weight=None,
                  **kw):
    """torch.nn.functional.cross_entropy(input, target, weight, ignore_index, reduction,
    label_smoothing): input (N, C, ...) or (C,) logits, target class indices (integers) or class
    probabilities (floats). Without weight and label_smoothing one fused op (softmax and the
    pick in one pass, the backward fused with the softmax); with them, as torch defines them:
    log_softmax, then nll_loss with the weights, plus label_smoothing / C times the (weighted)
    sum of -log-probabilities over the classes."""
    fn = "hologram_torch.functional.cross_entropy"
    ex, (x, t, *rest) = _split(fn, args, kw, 2)
    if rest:
        weight = rest[0]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{fn}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    if not 0.0 <= float(label_smoothing) <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be between 0.0 and 1.0, got "
                         f"{label_smoothing}")
    B.check_tensor(x, "input", fn, floats_only=True)
    B.check_tensor(t, "target", fn)
    if weight is None and not label_smoothing:
        return A.cross_entropy(x, t, int(ignore_index), reduction, ex)
    return _cross_entropy_composed(fn, x, t, weight, int(ignore_index), reduction,
                                   float(label_smoothing), ex)


def _cross_entropy_composed(fn, x, t, weight, ignore_index, reduction, eps, ex):
    x, t, weight = A.autocast_fp32(x, x, t, weight)   # torch.autocast runs the loss in f32
    cdim = 1 if x.dim() >= 2 else 0
    C = x.shape[cdim]
    if weight is not None:
        B.check_tensor(weight, "weight", fn, floats_only=True)
        if tuple(weight.shape) != (C,):
            raise ValueError(f"{fn}: weight must have one entry per class ({C}), got shape "
                             f"{list(weight.shape)}")
    wb = None if weight is None else weight.reshape((C,) + (1,) * (x.dim() - cdim - 1))
    lp = A.softmax(x, cdim, ex, log=True)
    if eps:   # the smoothing's weights: 1 - eps on the target, eps / C on every class
        keep_w, spread_w = B.scalar(1.0 - eps, x.dtype, x.device), B.scalar(eps / C, x.dtype,
                                                                            x.device)
    if t.dtype.is_floating_point:   # class probabilities: -sum_c w_c t'_c log p_c, t' smoothed
        if t.shape != x.shape:
            raise ValueError(f"{fn}: probability target of shape {list(t.shape)} must have the "
                             f"input's shape {list(x.shape)}")
        soft = t if not eps else A.add(A.mul(t.to(x.dtype), keep_w, ex), spread_w, ex)
        prod = A.mul(lp, soft.to(x.dtype), ex)
        if wb is not None:
            prod = A.mul(prod, wb.to(x.dtype), ex)
        per = A.neg(A.sum_(prod, [cdim], False, ex), ex)
        if reduction == "none":
            return per
        return A.mean(per, None, False, ex) if reduction == "mean" else A.sum_(per, None, False, ex)
    nll = A.nll_loss(lp, t, weight, ignore_index, reduction, ex)
    if not eps:
        return nll
    smooth = A.neg(A.sum_(lp if wb is None else A.mul(lp, wb.to(x.dtype), ex), [cdim], False,
                          ex), ex)
    keep = t != ignore_index                      # index data: no gradient flows through it
    smooth = A.where(keep, smooth, B.scalar(0.0, x.dtype, x.device), ex)
    if reduction == "sum":
        smooth = A.sum_(smooth, None, False, ex)
    elif reduction == "mean":
        with torch.no_grad():   # nll_loss's denominator: the counted targets' summed weights
            den = (weight[t.clamp(0, C - 1)] * keep).sum() if weight is not None else keep.sum()
        smooth = A.div(A.sum_(smooth, None, False, ex), den.to(x.dtype), ex)
    return A.add(A.mul(nll, keep_w, ex), A.mul(smooth, spread_w, ex), ex)


def cat(*args, dim=0, **kw):
    """torch.cat(tensors, dim) (torch's promotion across the tensors)."""
    fn = "hologram_torch.functional.cat"
    ex, (tensors, *rest) = _split(fn, args, kw, 1)
    return A.cat(list(tensors), int(rest[0] if rest else dim), ex)


def stack(*args, dim=0, **kw):
    """torch.stack(tensors, dim)."""
    fn = "hologram_torch.functional.stack"
    ex, (tensors, *rest) = _split(fn, args, kw, 1)
    return A.cat(list(tensors), int(rest[0] if rest else dim), ex, stack=True)


def where(*args, **kw):
    """torch.where(condition, input, other): broadcasting, torch's promotion; Python numbers
    for input/other (converted with torch's overflow check)."""
    fn = "hologram_torch.functional.where"
    ex, (cond, a, b) = _split(fn, args, kw, 3)
    B.check_tensor(cond, "condition", fn)
    if S.is_number(a) and S.is_number(b):
        raise TypeError(f"{fn}: input or other must be a tensor")
    a, b = S.operands(fn, a, b, arith=False)
    return A.where(cond, a, b, ex)


def clamp(*args, min=None, max=None, **kw):   # noqa: A002 (torch's names)
    """torch.clamp(input, min, max): number or tensor bounds (at least one; tensors broadcast
    against the input). The result dtype is torch's promotion of all three, numbers as wrapped
    numbers (an integer tensor with integer bounds stays integer; bool with number bounds is
    int64); number bounds of an integer result are converted with torch's overflow check. NaN
    in the input or a bound gives NaN; min > max gives max, as torch."""
    fn = "hologram_torch.functional.clamp"
    ex, (x, *rest) = _split(fn, args, kw, 1)
    if rest:
        min = rest[0]
    if len(rest) > 1:
        max = rest[1]
    B.check_tensor(x, "input", fn)
    if min is None and max is None:
        raise ValueError(f"{fn}: at least one of min and max must be given")
    rdt = S.bound_dtype(x, (min, max))
    tensors = isinstance(min, torch.Tensor) or isinstance(max, torch.Tensor)
    if not tensors and rdt.is_floating_point:   # one op with the bounds as parameters
        min, max = (None if v is None else S.checked_bound(v, rdt) for v in (min, max))
        return A.clamp(x if x.dtype == rdt else x.to(rdt), min, max, ex)
    if rdt == torch.bool and not tensors:
        raise NotImplementedError(f"{fn}: clamp of a bool tensor with bool bounds is not "
                                  f"implemented (as in torch)")
    for b in (min, max):
        if isinstance(b, torch.Tensor):
            B.check_tensor(b, "min" if b is min else "max", fn)

    def as_t(b):
        if b is None:
            return None
        if not isinstance(b, torch.Tensor):
            return B.scalar(b, rdt, x.device)
        return b if b.dtype == rdt else b.to(rdt)

    lo, hi = as_t(min), as_t(max)
    B.same_device(fn, x, lo, hi)
    shape = x.shape
    for b in (lo, hi):
        if b is not None:
            shape = B.broadcast_shape(fn, shape, b.shape)
    return A.clamp_tensor(x if x.dtype == rdt else x.to(rdt), lo, hi, ex)


clip = clamp


def binary_cross_entropy_with_logits(*args, weight=None, reduction="mean", pos_weight=None,
                                     **kw):
    """torch.nn.functional.binary_cross_entropy_with_logits(input, target, weight, reduction,
    pos_weight): the stable form max(x, 0) - x t + log(1 + e^-|x|)."""
    fn = "hologram_torch.functional.binary_cross_entropy_with_logits"
    ex, (x, t) = _split(fn, args, kw, 2)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{fn}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    return A.binary_cross_entropy_with_logits(x, t, weight, pos_weight, reduction, ex)


def binary_cross_entropy(*args, weight=None, reduction="mean", **kw):
    """torch.nn.functional.binary_cross_entropy(input, target, weight, reduction): input
    probabilities in [0, 1] (outside: an error naming the first bad value); the logs are
    clamped at -100 as torch does."""
    fn = "hologram_torch.functional.binary_cross_entropy"
    ex, (p, t, *rest) = _split(fn, args, kw, 2)
    if rest:
        weight = rest[0]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{fn}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    return A.binary_cross_entropy(p, t, weight, reduction, ex)


def nll_loss(*args, weight=None, ignore_index=-100, reduction="mean", **kw):
    """torch.nn.functional.nll_loss(input, target, weight, ignore_index, reduction): input
    log-probabilities (N, C, ...) or (C,), target class indices; 'mean' divides by the summed
    weights of the counted targets."""
    fn = "hologram_torch.functional.nll_loss"
    ex, (x, t, *rest) = _split(fn, args, kw, 2)
    if rest:
        weight = rest[0]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{fn}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    return A.nll_loss(x, t, weight, int(ignore_index), reduction, ex)


def dropout(*args, p=0.5, training=True, inplace=False, generator=None, **kw):
    """torch.nn.functional.dropout(input, p, training, inplace): each element zeroed with
    probability p, the rest scaled by 1 / (1 - p). The mask comes from hologram's counter-based
    generator (Philox) under a seed drawn from torch's generator (``generator=`` or the default
    one, so ``torch.manual_seed`` makes it repeatable); the backward regenerates it."""
    fn = "hologram_torch.functional.dropout"
    ex, (x, *rest) = _split(fn, args, kw, 1)
    if rest:
        p = rest[0]
    if len(rest) > 1:
        training = rest[1]
    if len(rest) > 2:
        inplace = rest[2]
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{fn}: dropout probability has to be between 0 and 1, but got {p}")
    B.check_tensor(x, "input", fn, floats_only=True)
    if not training or p == 0:
        return x
    if p == 1:
        out = A.mul(x, torch.zeros((), dtype=x.dtype, device=x.device), ex)
    else:
        # the seed stays a tensor (a torch op that compile / trace / export record, no .item())
        seed = torch.randint(0, 2 ** 62, (), generator=generator)   # int64
        out = A.dropout(x, float(p), seed, ex)
    if inplace:
        return x.copy_(out)
    return out


def bmm(*args, **kw):
    """torch.bmm(input, mat2): (b, n, m) @ (b, m, p)."""
    fn = "hologram_torch.functional.bmm"
    ex, (a, b) = _split(fn, args, kw, 2)
    B.check_tensor(a, "input", fn)
    B.check_tensor(b, "mat2", fn)
    if a.dim() != 3 or b.dim() != 3:
        raise ValueError(f"{fn}: batch1 and batch2 must be 3-D, got {a.dim()}-D and {b.dim()}-D")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(f"{fn}: shapes {list(a.shape)} and {list(b.shape)} cannot be "
                         f"multiplied (expected (b, n, m) and (b, m, p))")
    return A.matmul(a, b, ex)


def _ignored(t, value, ex):
    """value broadcast to t's and value's shape, with a zero gradient for t (an operand that a
    zero coefficient drops: its values, NaN included, are not read)."""
    shape = B.broadcast_shape("hologram_torch.functional.addmm", t.shape, value.shape)
    drop = torch.zeros((), dtype=torch.bool, device=value.device).expand(shape)
    return A.where(drop, t, value, ex)


def addmm(*args, beta=1, alpha=1, **kw):
    """torch.addmm(input, mat1, mat2, beta, alpha): beta * input + alpha * (mat1 @ mat2), input
    broadcast to the product's shape; beta = 0 ignores input (NaN in it included), as torch."""
    fn = "hologram_torch.functional.addmm"
    ex, (c, a, b) = _split(fn, args, kw, 3)
    for t, name in ((c, "input"), (a, "mat1"), (b, "mat2")):
        B.check_tensor(t, name, fn)
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"{fn}: mat1 and mat2 must be 2-D, got {a.dim()}-D and {b.dim()}-D")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"{fn}: mat1 {list(a.shape)} and mat2 {list(b.shape)} cannot be "
                         f"multiplied")
    B.broadcast_shape(fn, c.shape, (a.shape[0], b.shape[1]))
    (c,) = A.autocast_lower(a, c)
    out = A.matmul(a, b, ex)
    if alpha == 0:   # the product ignored (inf or NaN in it included), as torch
        out = _ignored(out, torch.zeros((), dtype=out.dtype, device=out.device), ex)
    elif alpha != 1:
        out = A.mul(out, B.scalar(alpha, out.dtype, out.device), ex)
    if beta == 0:   # input ignored; it still gets its (zero) gradient, as torch
        return _ignored(c, out, ex) if A._needs_grad(c) else out
    if beta != 1:
        c = A.mul(c, B.scalar(beta, c.dtype, c.device), ex)
    return A.add(c, out, ex)


def index_select(*args, **kw):
    """torch.index_select(input, dim, index): index 0-d or 1-D, int64 or int32."""
    fn = "hologram_torch.functional.index_select"
    ex, (x, dim, index) = _split(fn, args, kw, 3)
    return A.index_select(x, int(dim), index, ex)


def gather(*args, sparse_grad=False, **kw):
    """torch.gather(input, dim, index, sparse_grad=False): index of input's ndim, at most
    input's size on every dim but dim; every index in [0, input.size(dim)) (a negative one
    raises RuntimeError, as torch).
    sparse_grad: input's gradient is a sparse COO tensor, as torch's."""
    fn = "hologram_torch.functional.gather"
    ex, (x, dim, index) = _split(fn, args, kw, 3)
    return A.gather(x, int(dim), index, ex, bool(sparse_grad))


def embedding(*args, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False, **kw):
    """torch.nn.functional.embedding(input, weight, padding_idx, max_norm, norm_type,
    scale_grad_by_freq, sparse): weight's rows at the integer indices of input (any shape); the
    weight gradient adds the rows' gradients per index (each divided by its index's count in
    input with scale_grad_by_freq) and leaves the padding_idx row at 0; sparse: the gradient is
    a sparse COO tensor, as torch's. max_norm: the named rows whose norm_type-norm exceeds it
    are first scaled to it in place (torch's renorm, under no_grad)."""
    fn = "hologram_torch.functional.embedding"
    ex, (idx, weight, *rest) = _split(fn, args, kw, 2)
    if rest:
        padding_idx = rest[0]
    B.check_tensor(weight, "weight", fn, floats_only=True)
    O._check_index(fn, idx, "input")
    if weight.dim() != 2:
        raise ValueError(f"{fn}: weight must be 2-D (num_embeddings, embedding_dim), got "
                         f"{list(weight.shape)}")
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise ValueError(f"{fn}: padding_idx {padding_idx} must be within num_embeddings "
                             f"({n})")
        padding_idx %= n
    if max_norm is not None:
        with torch.no_grad():
            O.embedding_renorm_(weight, idx, float(max_norm), float(norm_type), ex)
    return A.embedding(idx, weight, padding_idx, ex, bool(scale_grad_by_freq), bool(sparse))
