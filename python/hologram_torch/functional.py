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

_Tensor = torch.Tensor

__all__ = ["add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid",
           "tanh", "gelu", "silu", "softplus", "softmax", "log_softmax", "layer_norm", "rms_norm",
           "linear", "matmul", "sum", "mean", "mse_loss", "cross_entropy", "cat", "stack", "where",
           "clamp", "clip", "binary_cross_entropy_with_logits"]


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


def _tensor_pair(fn, a, b):
    """Python numbers as 0-d tensors of torch's result dtype (torch treats them as weak)."""
    if isinstance(a, numbers.Number) and isinstance(b, torch.Tensor):
        a = torch.tensor(a, dtype=torch.result_type(b, a), device=b.device)
    if isinstance(b, numbers.Number) and isinstance(a, torch.Tensor):
        b = torch.tensor(b, dtype=torch.result_type(a, b), device=a.device)
    B.check_tensor(a, "input", fn)
    B.check_tensor(b, "other", fn)
    return a, b


def _binary(name, op):
    def f(*args, **kw):
        if not kw and len(args) == 2 and type(args[0]) is _Tensor and type(args[1]) is _Tensor:
            return op(args[0], args[1], 0)   # the common call, checked by the op itself
        fn = f"hologram_torch.functional.{name}"
        alpha = kw.pop("alpha", None) if name in ("add", "sub") else None
        ex, (a, b) = _split(fn, args, kw, 2)
        if kw:
            raise TypeError(f"{fn}: unexpected keyword arguments {sorted(kw)}")
        a, b = _tensor_pair(fn, a, b)
        if alpha is not None and alpha != 1:
            b = A.mul(b, torch.tensor(alpha, dtype=torch.result_type(b, alpha), device=b.device),
                      ex)
        return op(a, b, ex)

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
    """log(1 + e^input) (torch.nn.functional.softplus with beta=1; above threshold torch
    returns the input, which is the same f32 value there)."""
    fn = "hologram_torch.functional.softplus"
    ex, (x,) = _split(fn, args, kw, 1)
    if beta != 1.0 or threshold != 20.0:
        raise ValueError(f"{fn}: only beta=1 and threshold=20 (torch's defaults) are supported, "
                         f"got beta={beta}, threshold={threshold}")
    B.check_tensor(x, "input", fn)
    return A.softplus(x, ex)


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


def softmax(*args, **kw):
    """torch.softmax(input, dim) along dim."""
    fn = "hologram_torch.functional.softmax"
    ex, (x, *rest) = _split(fn, args, kw, 1)
    dim = _dim_arg(fn, rest, kw)
    B.check_tensor(x, "input", fn)
    return A.softmax(x, int(dim), ex)


def log_softmax(*args, **kw):
    """torch.log_softmax(input, dim) along dim."""
    fn = "hologram_torch.functional.log_softmax"
    ex, (x, *rest) = _split(fn, args, kw, 1)
    dim = _dim_arg(fn, rest, kw)
    B.check_tensor(x, "input", fn)
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
        if dtype is not None:
            x = x.to(dtype)
        return op(x, _dims(dim), bool(keepdim), ex)

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
    """torch.nn.functional.cross_entropy(input, target, ignore_index, reduction): input (N, C,
    ...) or (C,) logits, target class indices (integers) or class probabilities (floats)."""
    fn = "hologram_torch.functional.cross_entropy"
    ex, (x, t) = _split(fn, args, kw, 2)
    if weight is not None or label_smoothing:
        raise NotImplementedError(f"{fn}: class weights and label_smoothing are not supported "
                                  f"yet (weight={weight is not None}, "
                                  f"label_smoothing={label_smoothing})")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{fn}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    B.check_tensor(x, "input", fn, floats_only=True)
    B.check_tensor(t, "target", fn)
    return A.cross_entropy(x, t, int(ignore_index), reduction, ex)


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
    for input/other."""
    fn = "hologram_torch.functional.where"
    ex, (cond, a, b) = _split(fn, args, kw, 3)
    B.check_tensor(cond, "condition", fn)
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        raise TypeError(f"{fn}: input or other must be a tensor")
    ref = a if isinstance(a, torch.Tensor) else b
    a, b = _tensor_pair(fn, a if isinstance(a, torch.Tensor) else
                        torch.tensor(a, dtype=torch.result_type(ref, a), device=ref.device), b)
    return A.where(cond, a, b, ex)


def clamp(*args, min=None, max=None, **kw):   # noqa: A002 (torch's names)
    """torch.clamp(input, min, max) with number bounds (at least one)."""
    fn = "hologram_torch.functional.clamp"
    ex, (x, *rest) = _split(fn, args, kw, 1)
    if rest:
        min = rest[0]
    if len(rest) > 1:
        max = rest[1]
    if isinstance(min, torch.Tensor) or isinstance(max, torch.Tensor):
        raise TypeError(f"{fn}: tensor bounds are not supported; give numbers")
    B.check_tensor(x, "input", fn)
    return A.clamp(x, min, max, ex)


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
