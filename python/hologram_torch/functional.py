"""hologram's ops on torch tensors, with gradients: ``hologram_torch.functional``.

Every function takes the call forms of its torch counterpart (``torch.nn.functional.<name>``
where that exists, else ``torch.<name>``), bound by torch's own signature (_signatures.py):
positional, keyword (torch's names: ``input=``, ``other=``, ``tensors=``), defaults; what torch
rejects raises torch's exception type. Besides, an optional executor first (the product
documents' form, ``add(exec, x, y)``) or as ``executor=``; without one, the executor of the
tensors' device is used (hologram.default_cpu_executor() for CPU tensors). ``out=`` and the
arguments hologram cannot honour exactly run torch's own function. Results are torch tensors on
the inputs' device; inputs are read in place (no copies, any strides).
"""
import numbers

import torch
from torch.nn import functional as _F

from . import _differentiable as A
from . import _bridge as B
from . import _ops as O
from . import _scalars as S
from . import _signatures as SG

_Tensor = torch.Tensor
_MISSING = object()   # an argument not given
_OPERAND = (_Tensor, numbers.Number)   # what torch's parser takes for add's tensors

__all__ = ["add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid",
           "tanh", "gelu", "silu", "softplus", "softmax", "log_softmax", "layer_norm", "rms_norm",
           "linear", "matmul", "sum", "mean", "mse_loss", "cross_entropy", "cat", "stack", "where",
           "clamp", "clip", "binary_cross_entropy_with_logits", "binary_cross_entropy",
           "nll_loss", "dropout", "bmm", "addmm", "embedding", "index_select", "gather"]


def _binary(name, op):
    plain = getattr(O, name)   # the op without autograd
    grad_enabled = torch.is_grad_enabled
    with_grad = op.with_grad
    fn = f"hologram_torch.functional.{name}"
    ref = getattr(torch, name)
    bind = SG.binder(name, ref).bind

    def f(a=_MISSING, b=_MISSING, /, *rest, **kw):
        # the common call f(tensor, tensor), checked by the op itself (named parameters: no
        # argument tuple to build)
        if type(a) is _Tensor and type(b) is _Tensor and not rest and not kw:
            try:
                if grad_enabled() and (a.requires_grad or b.requires_grad):
                    return with_grad(a, b)
                return plain(a, b, 0)
            except Exception as e:   # noqa: BLE001 (re-raised: torch's or this one)
                SG.torch_error(e, lambda: ref(a, b))
        if not rest and not kw and isinstance(a, _OPERAND) and isinstance(b, _OPERAND) and (
                type(a) is _Tensor or type(b) is _Tensor):
            try:   # f(tensor or number, tensor or number): what the binder would take
                return arith(0, a, b, None)
            except Exception as e:   # noqa: BLE001 (re-raised: torch's or this one)
                SG.torch_error(e, lambda: ref(a, b))
        args = tuple(x for x in (a, b) if x is not _MISSING) + rest
        ex, args = SG.executor(fn, args, kw)
        bound = bind(args, kw)
        if (bound.get("out") is not None or bound.get("rounding_mode") is not None or
                not isinstance(bound["input"], _Tensor) and not isinstance(bound["other"],
                                                                          _Tensor)):
            return bound.torch()   # out=: torch's rules; rounding division, two numbers: torch's
        try:
            return arith(ex, bound["input"], bound["other"], bound.get("alpha"))
        except Exception as e:   # noqa: BLE001 (re-raised: torch's or this one)
            SG.torch_error(e, bound.torch)

    def arith(ex, a, b, alpha):
        if type(alpha) is int and alpha == 1:
            alpha = None
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

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"torch.{name}'s forms on hologram: broadcasting and torch's promotion; "
                 f"out= (and div's rounding_mode) run torch.{name}.")
    return f


add = _binary("add", A.add)
sub = _binary("sub", A.sub)
mul = _binary("mul", A.mul)
div = _binary("div", A.div)





def _named(name, doc, impl):
    impl.__name__, impl.__doc__ = name, doc
    return impl


def _unary(name, op, doc, ref=None):
    """torch.<name> (ref: torch.nn.functional's, whose inplace=True runs ref: in place on the
    input, torch's own)."""
    def impl(ex, a):
        if a.get("inplace"):
            return a.torch()
        x = a["input"]
        B.check_tensor(x, "input", f"hologram_torch.functional.{name}")
        return op(x, ex)

    return SG.torch_form(ref or getattr(torch, name))(
        _named(name, doc, impl))


neg = _unary("neg", A.neg, "torch.neg: -input.")
abs = _unary("abs", A.abs_, "torch.abs: |input|.")   # noqa: A001 (torch's name)
exp = _unary("exp", A.exp, "torch.exp: e^input.")
log = _unary("log", A.log, "torch.log: natural logarithm.")
sqrt = _unary("sqrt", A.sqrt, "torch.sqrt: square root.")
relu = _unary("relu", A.relu, "torch.nn.functional.relu: max(input, 0).", _F.relu)
sigmoid = _unary("sigmoid", A.sigmoid, "torch.sigmoid: 1 / (1 + e^-input).")
tanh = _unary("tanh", A.tanh, "torch.tanh: hyperbolic tangent.")
silu = _unary("silu", A.silu, "torch.nn.functional.silu: input * sigmoid(input).", _F.silu)


@SG.torch_form(_F.softplus)
def softplus(ex, a):
    """torch.nn.functional.softplus(input, beta=1, threshold=20): log(1 + e^(beta input)) / beta,
    and the input itself where beta * input > threshold (hologram's softplus never overflows;
    the threshold is torch's switch to the linear part, kept so results and gradients match
    torch's there)."""
    fn = "hologram_torch.functional.softplus"
    x = a["input"]
    B.check_tensor(x, "input", fn, floats_only=True)
    beta, threshold = float(a["beta"]), float(a["threshold"])
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


@SG.torch_form(_F.gelu)
def gelu(ex, a):
    """torch.nn.functional.gelu(input, *, approximate='none'): x Phi(x) (the erf form) or
    'tanh'."""
    x = a["input"]
    B.check_tensor(x, "input", "hologram_torch.functional.gelu")
    return A.gelu(x, a["approximate"], ex)


def _softmax(name, log):
    def impl(ex, a):
        x, dtype = a["input"], a["dtype"]
        B.check_tensor(x, "input", f"hologram_torch.functional.{name}")
        if dtype is not None and x.dtype != dtype:   # torch casts the input first
            x = x.to(dtype)
        return A.softmax(x, a["dim"], ex, log=log)

    return SG.torch_form(getattr(torch, name))(_named(
        name, f"torch.{name}(input, dim, dtype=None) along dim (dtype: the input cast first; "
              f"torch.nn.functional's implicit dim and _stacklevel are not taken).", impl))


softmax = _softmax("softmax", False)
log_softmax = _softmax("log_softmax", True)


def _shape(normalized_shape):
    if SG.index(normalized_shape) is not None:
        return [SG.index(normalized_shape)]
    return [int(s) for s in normalized_shape]


@SG.torch_form(_F.layer_norm)
def layer_norm(ex, a):
    """torch.nn.functional.layer_norm(input, normalized_shape, weight, bias, eps)."""
    if a["eps"] < 0:
        return a.torch()   # hologram takes eps >= 0; torch computes with any
    return A.layer_norm(a["input"], _shape(a["normalized_shape"]), a["weight"], a["bias"],
                        float(a["eps"]), ex)


@SG.torch_form(_F.rms_norm)
def rms_norm(ex, a):
    """torch.nn.functional.rms_norm(input, normalized_shape, weight, eps)."""
    eps = a["eps"]
    if eps is not None and eps < 0:
        return a.torch()   # hologram takes eps >= 0; torch computes with any
    return A.rms_norm(a["input"], _shape(a["normalized_shape"]), a["weight"],
                      None if eps is None else float(eps), ex)


@SG.torch_form(_F.linear)
def linear(ex, a):
    """torch.nn.functional.linear(input, weight, bias=None): input @ weight.T + bias."""
    return A.linear(a["input"], a["weight"], a["bias"], ex)


@SG.torch_form(torch.matmul)
def matmul(ex, a):
    """torch.matmul(input, other) (1-D, 2-D and batched operands, broadcast batch dims)."""
    return A.matmul(a["input"], a["other"], ex)


def _dims(dim):
    if dim is None:
        return None
    if SG.index(dim) is not None:
        return [SG.index(dim)]
    return [SG.index(d) for d in dim]


def _reduction(name, op, doc):
    def impl(ex, a):
        x, dim, keepdim, dtype = a["input"], a.get("dim"), a.get("keepdim", False), a["dtype"]
        B.check_tensor(x, "input", f"hologram_torch.functional.{name}")
        if dtype is None:
            return op(x, _dims(dim), keepdim, ex)
        # torch: the input cast to dtype, the result in dtype (hologram sums integers and bool
        # in int64: the cast back wraps as an int8 accumulator would; bool is "any nonzero")
        r = op(x.to(dtype), _dims(dim), keepdim, ex)
        return r if r.dtype == dtype else r.to(dtype)

    return SG.torch_form(getattr(torch, name))(_named(name, doc, impl))


sum = _reduction(   # noqa: A001 (torch's name)
    "sum", A.sum_, "torch.sum(input, dim, keepdim=False, *, dtype=None): integers and bool sum "
    "to int64, as torch.")
mean = _reduction("mean", A.mean, "torch.mean(input, dim, keepdim=False, *, dtype=None) of a "
                  "floating tensor.")


def _reduction_arg(fn, a):
    """The loss's reduction; None where the legacy size_average / reduce are given (torch's
    own function then runs: hologram does not take them)."""
    if a["size_average"] is not None or a["reduce"] is not None:
        return None
    if a["reduction"] not in ("none", "mean", "sum"):
        raise ValueError(f"{fn}: reduction must be 'none', 'mean' or 'sum', got "
                         f"{a['reduction']!r}")
    return a["reduction"]


@SG.torch_form(_F.mse_loss)
def mse_loss(ex, a):
    """torch.nn.functional.mse_loss(input, target, size_average, reduce, reduction) (weight=,
    where torch has it, and size_average / reduce run torch's)."""
    fn = "hologram_torch.functional.mse_loss"
    reduction = _reduction_arg(fn, a)
    if reduction is None or a.get("weight") is not None:
        return a.torch()
    B.check_tensor(a["input"], "input", fn, floats_only=True)
    B.check_tensor(a["target"], "target", fn, floats_only=True)
    return A.mse_loss(a["input"], a["target"], reduction, ex)


@SG.torch_form(_F.cross_entropy)
def cross_entropy(ex, a):
    """torch.nn.functional.cross_entropy(input, target, weight, size_average, ignore_index,
    reduce, reduction, label_smoothing): input (N, C, ...) or (C,) logits, target class indices
    (integers) or class probabilities (floats). Without weight and label_smoothing one fused op
    (softmax and the pick in one pass, the backward fused with the softmax); with them, as torch
    defines them: log_softmax, then nll_loss with the weights, plus label_smoothing / C times the
    (weighted) sum of -log-probabilities over the classes."""
    fn = "hologram_torch.functional.cross_entropy"
    reduction = _reduction_arg(fn, a)
    if reduction is None:
        return a.torch()
    x, t, weight, smoothing = a["input"], a["target"], a["weight"], a["label_smoothing"]
    if not 0.0 <= float(smoothing) <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be between 0.0 and 1.0, got {smoothing}")
    B.check_tensor(x, "input", fn, floats_only=True)
    B.check_tensor(t, "target", fn)
    if weight is None and not smoothing:
        return A.cross_entropy(x, t, int(a["ignore_index"]), reduction, ex)
    return _cross_entropy_composed(fn, x, t, weight, int(a["ignore_index"]), reduction,
                                   float(smoothing), ex)


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




def _tensor_list(fn, tensors):
    for i, t in enumerate(tensors):
        if not isinstance(t, _Tensor):
            raise TypeError(f"{fn}: expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return list(tensors)


@SG.torch_form(torch.cat)
def cat(ex, a):
    """torch.cat(tensors, dim=0) (torch's promotion across the tensors)."""
    tensors = _tensor_list("hologram_torch.functional.cat", a["tensors"])
    if len(tensors) > 1 and any(t.dim() == 1 and t.numel() == 0 for t in tensors):
        return a.torch()   # torch's legacy rule: 1-D empty tensors are skipped
    return A.cat(tensors, a["dim"], ex)


@SG.torch_form(torch.stack)
def stack(ex, a):
    """torch.stack(tensors, dim=0)."""
    return A.cat(_tensor_list("hologram_torch.functional.stack", a["tensors"]), a["dim"], ex,
                 stack=True)


@SG.torch_form(torch.where)
def where(ex, a):
    """torch.where(condition, input, other): broadcasting, torch's promotion; a Python number for
    input or other (converted with torch's overflow check). where(condition) and two numbers
    run torch's."""
    if a.overload in ("", "Scalar"):
        return a.torch()
    fn = "hologram_torch.functional.where"
    cond = a["condition"]
    B.check_tensor(cond, "condition", fn)
    x, y = S.operands(fn, a["input"] if "input" in a else a["self"], a["other"], arith=False)
    return A.where(cond, x, y, ex)


def _clamp(name):
    def impl(ex, a):
        fn = f"hologram_torch.functional.{name}"
        x, lo, hi = a["input"], a["min"], a["max"]
        B.check_tensor(x, "input", fn)
        if lo is None and hi is None:
            raise RuntimeError(f"{fn}: At least one of 'min' or 'max' must not be None")
        rdt = S.bound_dtype(x, (lo, hi))
        tensors = isinstance(lo, _Tensor) or isinstance(hi, _Tensor)
        if not tensors and rdt.is_floating_point:   # one op with the bounds as parameters
            lo, hi = (None if v is None else S.checked_bound(v, rdt) for v in (lo, hi))
            return A.clamp(x if x.dtype == rdt else x.to(rdt), lo, hi, ex)
        if rdt == torch.bool and not tensors:
            raise NotImplementedError(f"{fn}: clamp of a bool tensor with bool bounds is not "
                                      f"implemented (as in torch)")
        for b, what in ((lo, "min"), (hi, "max")):
            if isinstance(b, _Tensor):
                B.check_tensor(b, what, fn)

        def as_t(b):
            if b is None:
                return None
            if not isinstance(b, _Tensor):
                return B.scalar(b, rdt, x.device)
            return b if b.dtype == rdt else b.to(rdt)

        lo, hi = as_t(lo), as_t(hi)
        B.same_device(fn, x, lo, hi)
        shape = x.shape
        for b in (lo, hi):
            if b is not None:
                shape = B.broadcast_shape(fn, shape, b.shape)
        return A.clamp_tensor(x if x.dtype == rdt else x.to(rdt), lo, hi, ex)

    return SG.torch_form(getattr(torch, name))(_named(
        name, f"torch.{name}(input, min=None, max=None): number or tensor bounds (at least one; "
              f"tensors broadcast against the input). The result dtype is torch's promotion of "
              f"all three, numbers as wrapped numbers; number bounds of an integer result are "
              f"converted with torch's overflow check. NaN in the input or a bound gives NaN; "
              f"min > max gives max, as torch.", impl))


clamp = _clamp("clamp")
clip = _clamp("clip")


@SG.torch_form(_F.binary_cross_entropy_with_logits)
def binary_cross_entropy_with_logits(ex, a):
    """torch.nn.functional.binary_cross_entropy_with_logits(input, target, weight,
    size_average, reduce, reduction, pos_weight): the stable form
    max(x, 0) - x t + log(1 + e^-|x|)."""
    reduction = _reduction_arg("hologram_torch.functional.binary_cross_entropy_with_logits", a)
    if reduction is None:
        return a.torch()
    return A.binary_cross_entropy_with_logits(a["input"], a["target"], a["weight"],
                                              a["pos_weight"], reduction, ex)


@SG.torch_form(_F.binary_cross_entropy)
def binary_cross_entropy(ex, a):
    """torch.nn.functional.binary_cross_entropy(input, target, weight, size_average, reduce,
    reduction): input probabilities in [0, 1] (outside: an error naming the first bad value);
    the logs are clamped at -100 as torch does."""
    reduction = _reduction_arg("hologram_torch.functional.binary_cross_entropy", a)
    if reduction is None:
        return a.torch()
    return A.binary_cross_entropy(a["input"], a["target"], a["weight"], reduction, ex)


@SG.torch_form(_F.nll_loss)
def nll_loss(ex, a):
    """torch.nn.functional.nll_loss(input, target, weight, size_average, ignore_index, reduce,
    reduction): input log-probabilities (N, C, ...) or (C,), target class indices; 'mean'
    divides by the summed weights of the counted targets."""
    reduction = _reduction_arg("hologram_torch.functional.nll_loss", a)
    if reduction is None:
        return a.torch()
    return A.nll_loss(a["input"], a["target"], a["weight"], int(a["ignore_index"]), reduction,
                      ex)


@SG.torch_form(_F.dropout)
def dropout(ex, a):
    """torch.nn.functional.dropout(input, p=0.5, training=True, inplace=False): each element
    zeroed with probability p, the rest scaled by 1 / (1 - p). The mask comes from hologram's
    counter-based generator (Philox) under a seed drawn from torch's default generator (so
    ``torch.manual_seed`` makes it repeatable); the backward regenerates it."""
    fn = "hologram_torch.functional.dropout"
    x, p, training = a["input"], a["p"], a["training"]
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{fn}: dropout probability has to be between 0 and 1, but got {p}")
    B.check_tensor(x, "input", fn, floats_only=True)
    if not training or p == 0:
        return x
    if p == 1:
        out = A.mul(x, torch.zeros((), dtype=x.dtype, device=x.device), ex)
    else:
        # the seed stays a tensor (a torch op that compile / trace / export record, no .item());
        # generator= given (None: the default one) keeps inductor on torch's own randint, so a
        # compiled model draws the masks eager draws under the same torch.manual_seed
        seed = torch.randint(0, 2 ** 62, (), generator=None)   # int64
        out = A.dropout(x, float(p), seed, ex)
    if a["inplace"]:
        return x.copy_(out)
    return out


@SG.torch_form(torch.bmm)
def bmm(ex, a):
    """torch.bmm(input, mat2): (b, n, m) @ (b, m, p); out_dtype runs torch's."""
    if a.overload == "dtype":
        return a.torch()
    fn = "hologram_torch.functional.bmm"
    x, y = a["input"], a["mat2"]
    B.check_tensor(x, "input", fn)
    B.check_tensor(y, "mat2", fn)
    if x.dim() != 3 or y.dim() != 3:
        raise ValueError(f"{fn}: batch1 and batch2 must be 3-D, got {x.dim()}-D and {y.dim()}-D")
    if x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]:
        raise ValueError(f"{fn}: shapes {list(x.shape)} and {list(y.shape)} cannot be "
                         f"multiplied (expected (b, n, m) and (b, m, p))")
    return A.matmul(x, y, ex)


def _ignored(t, value, ex):
    """value broadcast to t's and value's shape, with a zero gradient for t (an operand that a
    zero coefficient drops: its values, NaN included, are not read)."""
    shape = B.broadcast_shape("hologram_torch.functional.addmm", t.shape, value.shape)
    drop = torch.zeros((), dtype=torch.bool, device=value.device).expand(shape)
    return A.where(drop, t, value, ex)




@SG.torch_form(torch.addmm)
def addmm(ex, a):
    """torch.addmm(input, mat1, mat2, *, beta=1, alpha=1): beta * input + alpha * (mat1 @ mat2),
    input broadcast to the product's shape; beta = 0 ignores input (NaN in it included), as
    torch; out_dtype runs torch's."""
    if a.overload == "dtype":
        return a.torch()
    fn = "hologram_torch.functional.addmm"
    c, x, y, beta, alpha = a["input"], a["mat1"], a["mat2"], a["beta"], a["alpha"]
    for t, name in ((c, "input"), (x, "mat1"), (y, "mat2")):
        B.check_tensor(t, name, fn)
    if x.dim() != 2 or y.dim() != 2:
        raise ValueError(f"{fn}: mat1 and mat2 must be 2-D, got {x.dim()}-D and {y.dim()}-D")
    if x.shape[1] != y.shape[0]:
        raise ValueError(f"{fn}: mat1 {list(x.shape)} and mat2 {list(y.shape)} cannot be "
                         f"multiplied")
    B.broadcast_shape(fn, c.shape, (x.shape[0], y.shape[1]))
    (c,) = A.autocast_lower(x, c)
    out = A.matmul(x, y, ex)
    if alpha == 0:   # the product ignored (inf or NaN in it included), as torch
        out = _ignored(out, torch.zeros((), dtype=out.dtype, device=out.device), ex)
    elif alpha != 1:
        out = A.mul(out, B.scalar(alpha, out.dtype, out.device), ex)
    if beta == 0:   # input ignored; it still gets its (zero) gradient, as torch
        return _ignored(c, out, ex) if A._needs_grad(c) else out
    if beta != 1:
        c = A.mul(c, B.scalar(beta, c.dtype, c.device), ex)
    return A.add(c, out, ex)


@SG.torch_form(torch.index_select)
def index_select(ex, a):
    """torch.index_select(input, dim, index): index 0-d or 1-D, int64 or int32."""
    return A.index_select(a["input"], a["dim"], a["index"], ex)


@SG.torch_form(torch.gather)
def gather(ex, a):
    """torch.gather(input, dim, index, *, sparse_grad=False): index of input's ndim, at most
    input's size on every dim but dim; every index in [0, input.size(dim)) (a negative one
    raises RuntimeError, as torch). sparse_grad: input's gradient is a sparse COO tensor, as
    torch's."""
    x, index = a["input"], a["index"]
    if isinstance(index, _Tensor) and isinstance(x, _Tensor) and index.dim() != x.dim():
        return a.torch()   # torch's rule (an empty index, a 0-d input): torch decides
    return A.gather(x, a["dim"], index, ex, a["sparse_grad"])


@SG.torch_form(_F.embedding, writes="max_norm")
def embedding(ex, a):
    """torch.nn.functional.embedding(input, weight, padding_idx, max_norm, norm_type,
    scale_grad_by_freq, sparse): weight's rows at the integer indices of input (any shape); the
    weight gradient adds the rows' gradients per index (each divided by its index's count in
    input with scale_grad_by_freq) and leaves the padding_idx row at 0; sparse: the gradient is
    a sparse COO tensor, as torch's. max_norm: the named rows whose norm_type-norm exceeds it
    are first scaled to it in place (torch's renorm, under no_grad)."""
    fn = "hologram_torch.functional.embedding"
    idx, weight, padding_idx, max_norm = a["input"], a["weight"], a["padding_idx"], a["max_norm"]
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
            O.embedding_renorm_(weight, idx, float(max_norm), float(a["norm_type"]), ex)
    return A.embedding(idx, weight, padding_idx, ex, bool(a["scale_grad_by_freq"]),
                       bool(a["sparse"]))
