"""hologram.ops: every op of the library, on Tensors (and Buffers, numpy arrays, lists, Python
scalars), plus the flat Buffer forms of the product documents.

Two families share this namespace:

* numpy-style ops on tensors (``add(a, b)``, ``exp(x)``, ``sum(x, axis=1)``, ``softmax(x,
  axis=-1)``, ``matmul(a, b)``, ``cross_entropy(logits, target)``, ...): broadcasting, numpy's
  type promotion, any strides, ``out=`` for an existing result Tensor. They return Tensors.
* the flat forms of the product documents, each ``op(executor, buffers..., n=None)``:
  ``vector_add/sub/mul/div/min/max``, ``vector_abs/neg/relu``, ``vector_clip``,
  ``scalar_add/mul``, ``sigmoid/tanh/gelu/softmax``, ``reduce_sum/min/max``, ``mse_loss``,
  ``cross_entropy_loss``, ``binary_cross_entropy_loss``, ``gemm``, ``matvec``. They take Buffers
  (or C-contiguous Tensors that start at element 0) and work on the first ``n`` elements.

Names in both families (sigmoid, tanh, gelu, softmax, gemm, matvec, mse_loss) pick the flat form
when the first argument is an Executor.

Inside a function decorated with ``@hologram.jit`` these ops record graph nodes instead of
running (see hologram.jit).
"""

import math
import numbers
import operator

import numpy as np

from . import _C
from ._dtypes import weak_scalar_dtype
from ._interop import asarray as _asarray, empty as _empty, full as _full
from .errors import SizeMismatchError as _SizeMismatchError
from .tensor import Tensor as _Tensor
from ._trace import TraceError, Traced, _is_number, traced, trace_dispatch

_flat = _C.ops
_U = _C.unary_ops
_B = _C.binary_ops
_R = _C.reduce_ops

# --- flat forms of the product documents (C entry points, no Python in between) -------------------
vector_add = _flat.vector_add
vector_sub = _flat.vector_sub
vector_mul = _flat.vector_mul
vector_div = _flat.vector_div
vector_min = _flat.vector_min
vector_max = _flat.vector_max
vector_abs = _flat.vector_abs
vector_neg = _flat.vector_neg
vector_relu = _flat.vector_relu
vector_clip = _flat.vector_clip
scalar_add = _flat.scalar_add
scalar_mul = _flat.scalar_mul
reduce_sum = _flat.reduce_sum
reduce_min = _flat.reduce_min
reduce_max = _flat.reduce_max
cross_entropy_loss = _flat.cross_entropy_loss
binary_cross_entropy_loss = _flat.binary_cross_entropy_loss


def _is_executor(x):
    return isinstance(x, _C.Executor)


# --- elementwise --------------------------------------------------------------------------------
def _unary(name, doc):
    # A C callable (_C.op_function): operands that are Traced go to trace_dispatch("unary",
    # code, x), others straight to _C.unary(code, x, out) with no Python frame in between.
    return _C.op_function("unary", _U[name], name, doc, Traced, trace_dispatch)


def _binary(name, doc):
    # As _unary: trace_dispatch("binary", code, a, b) or _C.binary(code, a, b, out).
    return _C.op_function("binary", _B[name], name, doc, Traced, trace_dispatch)


# --- the elementwise op table -------------------------------------------------------------------
# One row per elementwise op of the C library: (Python name, the C op's name in _C.unary_ops /
# _C.binary_ops, docstring, aliases). A name starting with "_" is wrapped below by a function of
# the public name (flat forms, extra arguments). The functions, hologram's top level and numpy's
# ufunc dispatch on Tensors all come from here; tests/python/test_op_tables.py checks the table
# against the C tables, so an op added in C and not here (or the reverse) fails a test.
UNARY_OPS = (
    ("negative", "neg", "-x", ("neg",)),
    ("absolute", "abs", "|x|", ("abs",)),
    ("sign", "sign", "-1, 0 or +1 (NaN stays NaN)", ()),
    ("sqrt", "sqrt", "square root (integers give a float result, as numpy)", ()),
    ("rsqrt", "rsqrt", "1/sqrt(x)", ()),
    ("reciprocal", "reciprocal", "1/x", ()),
    ("square", "square", "x*x", ()),
    ("exp", "exp", "e^x", ()),
    ("expm1", "expm1", "e^x - 1, accurate near 0", ()),
    ("exp2", "exp2", "2^x", ()),
    ("log", "log", "natural logarithm", ()),
    ("log1p", "log1p", "log(1 + x), accurate near 0", ()),
    ("log2", "log2", "base-2 logarithm", ()),
    ("sin", "sin", "sine", ()),
    ("cos", "cos", "cosine", ()),
    ("relu", "relu", "max(x, 0); NaN stays NaN", ()),
    ("gelu_erf", "gelu_erf", "x * Phi(x) (erf form)", ()),
    ("silu", "silu", "x * sigmoid(x)", ()),
    ("softplus", "softplus", "log(1 + e^x) without overflow", ()),
    ("erf", "erf", "the error function", ()),
    ("floor", "floor", "round down", ()),
    ("ceil", "ceil", "round up", ()),
    ("trunc", "trunc", "round toward zero", ()),
    ("logical_not", "logical_not", "not x -> bool", ()),
    ("bitwise_not", "bitwise_not", "~x for integers and bool", ("invert",)),
    ("isnan", "isnan", "-> bool", ()),
    ("isinf", "isinf", "-> bool", ()),
    ("isfinite", "isfinite", "-> bool", ()),
    ("_rint0", "round", "", ()),                          # round(decimals), rint
    ("_sigmoid", "sigmoid", "1 / (1 + e^-x)", ()),        # + the flat form
    ("_tanh", "tanh", "hyperbolic tangent", ()),          # + the flat form
    ("_gelu_tanh", "gelu", "gelu, tanh form", ()),        # gelu(approximate=...)
)
BINARY_OPS = (
    ("add", "add", "a + b", ()),
    ("subtract", "subtract", "a - b", ("sub",)),
    ("multiply", "multiply", "a * b", ("mul",)),
    ("divide", "divide", "a / b (true division: integers give float64, as numpy)",
     ("true_divide", "div")),
    ("floor_divide", "floor_divide", "a // b (integers: x // 0 = 0)", ()),
    ("remainder", "remainder", "a % b with the sign of b (integers: x % 0 = 0)", ("mod",)),
    ("power", "power", "a ** b", ("pow",)),
    ("minimum", "minimum", "NaN-propagating minimum", ()),
    ("maximum", "maximum", "NaN-propagating maximum", ()),
    ("equal", "equal", "a == b -> bool", ("eq",)),
    ("not_equal", "not_equal", "a != b -> bool", ("ne",)),
    ("less", "less", "a < b -> bool", ("lt",)),
    ("less_equal", "less_equal", "a <= b -> bool", ("le",)),
    ("greater", "greater", "a > b -> bool", ("gt",)),
    ("greater_equal", "greater_equal", "a >= b -> bool", ("ge",)),
    ("logical_and", "logical_and", "-> bool", ()),
    ("logical_or", "logical_or", "-> bool", ()),
    ("logical_xor", "logical_xor", "-> bool", ()),
    ("bitwise_and", "bitwise_and", "integers and bool", ()),
    ("bitwise_or", "bitwise_or", "integers and bool", ()),
    ("bitwise_xor", "bitwise_xor", "integers and bool", ()),
    ("left_shift", "left_shift", "integers; shifts >= width give 0", ()),
    ("right_shift", "right_shift", "integers; arithmetic for signed", ()),
)
for _rows, _make, _sig in ((UNARY_OPS, _unary, "x, out=None"),
                           (BINARY_OPS, _binary, "a, b, out=None")):
    for _name, _code, _doc, _aliases in _rows:
        if not _name.startswith("_"):   # the wrapped ones describe themselves
            _doc = (f"{_name}({_sig})\n\n{_doc}\n\nElementwise, with numpy's broadcasting and "
                    f"type promotion. ``out``: an existing Tensor that receives the result; "
                    f"returns it, else a new Tensor.")
        globals()[_name] = _make(_code, _doc)
        for _alias in _aliases:
            globals()[_alias] = globals()[_name]
del _rows, _make, _sig, _name, _code, _doc, _aliases


def round(x, decimals=0, out=None):  # noqa: A001
    """numpy.round: half to even at `decimals` places (Tensor.round describes the method).
    decimals=0: integers and bool are returned as they are (numpy turns bool into float16)."""
    decimals = operator.index(decimals)
    if decimals == 0:
        return _rint0(x, out)
    if traced(x):   # floats: the same two scalar ops and a rint, as nodes
        if x.dtype_name not in ("f16", "bf16", "f32", "f64"):
            if decimals > 0:
                return _rint0(x)
            # numpy rounds integers to tens in their own dtype: the eager path does that.
            raise TraceError("jit: round of an integer tensor to negative decimals is not traced")
        f = 10.0 ** (decimals if decimals > 0 else -decimals)   # (abs is the op here)
        return _rint0(x * f) / f if decimals > 0 else _rint0(x / f) * f
    r = _asarray(x).round(decimals)
    return r if out is None else copy(r, out=out)


round_ = round


def rint(x, out=None):
    """numpy.rint: round half to even; integer and bool inputs give numpy's float dtype."""
    if not traced(x):
        x = _asarray(x)
        if x.dtype.kind in "biu" and x.dtype_name != "bf16":   # (bf16 shows as uint16)
            x = _C.cast(x, "f16" if x.itemsize == 1 else "f32" if x.itemsize == 2 else "f64")
    return _rint0(x, out)


def sigmoid(*args, **kw):
    """sigmoid(x, out=None) on tensors; sigmoid(executor, a, c, n=None) is the flat form."""
    if args and _is_executor(args[0]):
        return _flat.sigmoid(*args, **kw)
    return _sigmoid(*args, **kw)


def tanh(*args, **kw):
    """tanh(x, out=None) on tensors; tanh(executor, a, c, n=None) is the flat form."""
    if args and _is_executor(args[0]):
        return _flat.tanh(*args, **kw)
    return _tanh(*args, **kw)


def gelu(*args, approximate="tanh", **kw):
    """gelu(x, approximate='tanh', out=None): 'tanh' is 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))
    (the seeds' gelu), 'none' the erf form x*Phi(x) (torch's default). gelu(executor, a, c,
    n=None) is the flat form (tanh)."""
    if args and _is_executor(args[0]):
        return _flat.gelu(*args, **kw)
    if approximate == "tanh":
        return _gelu_tanh(*args, **kw)
    if approximate in ("none", "erf"):
        return gelu_erf(*args, **kw)
    raise ValueError(f"gelu: approximate must be 'tanh' or 'none', got {approximate!r}")


def where(cond, a, b, out=None):
    """cond ? a : b with broadcasting (cond: any dtype, nonzero = true); a Python number beside
    a tensor takes numpy's weak dtype (where(c, f32_tensor, 0.5) is f32)."""
    if traced(cond) or traced(a) or traced(b):
        return trace_dispatch("where", cond, a, b)
    na, nb = _is_number(a), _is_number(b)
    if na != nb:   # one number beside an operand
        t, v = (b, a) if na else (a, b)
        if isinstance(t, _Tensor):
            v = _full((), v, weak_scalar_dtype(v, t.dtype_name), executor=t.executor)
            a, b = (v, t) if na else (t, v)
    return _C.where(cond, a, b, out)


def clip(x, lo=None, hi=None, out=None):
    """minimum(maximum(x, lo), hi) as numpy.clip; lo/hi may be None, numbers or tensors."""
    if traced(x):
        return trace_dispatch("clip", x, lo, hi)
    if lo is not None and hi is not None and _is_number(lo) != _is_number(hi):
        # A number beside a tensor bound stays a weak scalar (NEP 50), as in numpy's
        # minimum(maximum(x, lo), hi): it must not widen the result as a 0-d tensor would.
        return minimum(maximum(x, lo), hi, out=out)
    return _C.clip(x, lo, hi, out)


def _is_number(v):
    return isinstance(v, (bool, int, float))


def fma(a, b, c, out=None):
    """a*b + c, floats rounded once (a fused multiply-add), integers wrap."""
    if traced(a) or traced(b) or traced(c):
        return trace_dispatch("fma", a, b, c)
    return _C.fma(a, b, c, out)


def cast(x, dtype, out=None):
    """Conversion to dtype (the ISA's cvt rules: float->int truncates and saturates, NaN->0)."""
    if traced(x):
        return trace_dispatch("cast", x, dtype)
    return _C.cast(x, dtype, out)


astype = cast


# --- reductions -----------------------------------------------------------------------------------
def _reduction(name, doc):
    code = _R[name]

    def f(x, axis=None, keepdims=False, out=None):
        if traced(x):
            return trace_dispatch("reduce", code, x, axis, keepdims)
        return _C.reduce(code, x, axis, keepdims, out)
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = doc
    return f


sum = _reduction("sum", "sum over axis (None: all); bool/ints accumulate in int64/uint64")  # noqa: A001
mean = _reduction("mean", "mean over axis")
prod = _reduction("prod", "product over axis")
amin = _reduction("min", "minimum over axis (NaN propagates)")
amax = _reduction("max", "maximum over axis (NaN propagates)")
min = amin  # noqa: A001
max = amax  # noqa: A001
argmin = _reduction("argmin", "index of the minimum (first NaN wins, as numpy)")
argmax = _reduction("argmax", "index of the maximum")
logsumexp = _reduction("logsumexp", "log(sum(exp(x))), max-shifted")
any = _reduction("any", "-> bool")  # noqa: A001
all = _reduction("all", "-> bool")  # noqa: A001


def _ddof_factor(x, axis, ddof):
    """n / (n - ddof) for the elements a traced var/std reduces (inf where n == ddof, so that
    0 * inf gives NaN and a positive sum inf, as numpy's division by zero does)."""
    shape = x.shape
    axes = range(len(shape)) if axis is None else (
        (axis,) if isinstance(axis, numbers.Integral) else axis)
    n = 1
    for a in axes:
        n *= shape[int(a)]
    return float("inf") if n == ddof else n / (n - ddof)


def var(x, axis=None, keepdims=False, ddof=0, out=None):
    """Variance with numpy's ddof (divisor n - ddof). Traced (@jit) with ddof != 0: the ddof-0
    reduction scaled by n / (n - ddof), one rounding more than the eager call."""
    if traced(x):
        v = trace_dispatch("reduce", _R["var"], x, axis, keepdims)
        return v * _ddof_factor(x, axis, ddof) if ddof else v
    return _C.reduce(_R["var"], x, axis, keepdims, out, ddof)


def std(x, axis=None, keepdims=False, ddof=0, out=None):
    """Standard deviation with numpy's ddof (see var)."""
    if traced(x):
        v = trace_dispatch("reduce", _R["std"], x, axis, keepdims)
        if not ddof:
            return v
        f = _ddof_factor(x, axis, ddof)
        # n < ddof: numpy takes the square root of a negative variance, NaN.
        return v * (math.sqrt(f) if f >= 0 else math.nan)
    return _C.reduce(_R["std"], x, axis, keepdims, out, ddof)


def _softmax_t(x, axis=-1, out=None):
    if traced(x):
        return trace_dispatch("softmax", x, axis, False)
    return _C.softmax(x, axis, False, out)


def softmax(*args, **kw):
    """softmax(x, axis=-1, out=None): stable for large magnitudes and -inf masks.
    softmax(executor, a, c, n=None) is the flat form (over the first n elements)."""
    if args and _is_executor(args[0]):
        return _flat.softmax(*args, **kw)
    return _softmax_t(*args, **kw)


def log_softmax(x, axis=-1, out=None):
    """log(softmax(x, axis)), computed without forming softmax (x - logsumexp(x, axis))."""
    if traced(x):
        return trace_dispatch("softmax", x, axis, True)
    return _C.softmax(x, axis, True, out)


def layer_norm(x, normalized_shape=None, weight=None, bias=None, eps=1e-5, out=None):
    """Normalizes over the last dims (torch's normalized_shape: an int or tuple of the last
    sizes; None = the last dim). weight/bias of that shape may be None."""
    return _C.layer_norm(x, _nnorm(x, normalized_shape), weight, bias, eps, out)


def rms_norm(x, normalized_shape=None, weight=None, eps=1e-6, out=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims."""
    return _C.rms_norm(x, _nnorm(x, normalized_shape), weight, eps, out)


def _nnorm(x, normalized_shape):
    if normalized_shape is None:
        return 1
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    n = len(normalized_shape)
    shape = tuple(getattr(x, "shape", ()))
    if shape[len(shape) - n:] != tuple(normalized_shape):
        raise _SizeMismatchError(f"normalized_shape {tuple(normalized_shape)} does not match the "
                                f"last dims of the input shape {shape}", 103)
    return n


def scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=False, scale=None, out=None,
                                 lse=None):
    """torch.nn.functional.scaled_dot_product_attention without dropout: softmax(q k^T * scale +
    attn_mask) v over the last two dims (scale None: 1 / sqrt(E)); attn_mask bool (True:
    attend) or q's dtype (added); q's head dim (-3) may hold a multiple of k's and v's heads
    (grouped-query attention); a query that attends no key gives zeros. ``lse``: an existing
    Tensor of q's shape without its last dim, float32 (float64 for float64 inputs), that
    receives each query's logsumexp of its scores (0 where it attends no key): what
    :func:`scaled_dot_product_attention_backward` reads."""
    return _C.scaled_dot_product_attention(q, k, v, attn_mask, is_causal,
                                           float("nan") if scale is None else scale, out, lse)


def scaled_dot_product_attention_backward(grad_out, q, k, v, out, lse, attn_mask=None,
                                          is_causal=False, scale=None):
    """Gradients (grad_q, grad_k, grad_v) of ``scaled_dot_product_attention(q, k, v, attn_mask,
    is_causal, scale, lse=lse)`` given dL/d(out) ``grad_out`` and that call's ``out`` and
    ``lse``; grouped key/value heads get the sum over the query heads that read them (torch's
    ``_scaled_dot_product_flash_attention_for_cpu_backward``)."""
    made = [_empty(t.shape, t.dtype_name, executor=t.executor) for t in (q, k, v)]
    _C.scaled_dot_product_attention_backward(grad_out, q, k, v, out, lse, attn_mask, is_causal,
                                             float("nan") if scale is None else scale, *made)
    return tuple(made)


# --- linear algebra -------------------------------------------------------------------------------
def matmul(a, b, out=None):
    """numpy.matmul: batching, broadcasting, 1-D operands."""
    if traced(a) or traced(b):
        return trace_dispatch("matmul", a, b)
    return _C.matmul(a, b, out)


def gemm(*args, **kw):
    """gemm(a, b, c, alpha=1.0, beta=0.0, trans_a=False, trans_b=False): c = alpha op(a) op(b)
    + beta c on 2-D float tensors; returns c. gemm(executor, a, b, c, m, n, k) is the flat form
    of the product documents (row-major C[m x n] = A[m x k] . B[k x n])."""
    if args and _is_executor(args[0]):
        return _flat.gemm(*args, **kw)
    return _C.gemm(*args, **kw)


def matvec(*args, **kw):
    """matvec(a, x, out=None): y = a @ x, a 2-D, x 1-D. matvec(executor, a, x, y, m=None,
    n=None) is the flat form."""
    if args and _is_executor(args[0]):
        return _flat.matvec(*args, **kw)
    return _C.matvec(*args, **kw)


def linear(x, weight, bias=None, out=None):
    """x @ weight.T + bias (torch.nn.functional.linear; a 1-D weight: x @ weight). out: the
    result's tensor, the bias added in place (hologram_torch's linear and addmm use this)."""
    w = weight.T if getattr(weight, "ndim", 2) == 2 else weight
    y = matmul(x, w, out)
    if bias is None:
        return y
    return add(y, bias, out=y) if out is not None else y + bias


# --- losses ---------------------------------------------------------------------------------------
def mse_loss(*args, reduction="mean", **kw):
    """mse_loss(pred, target, reduction='mean'|'sum'|'none', out=None). mse_loss(executor, pred,
    target, out, n=None) is the flat form (returns the mean as a float)."""
    if args and _is_executor(args[0]):
        return _flat.mse_loss(*args, **kw)
    return _C.mse_loss(*args, reduction=reduction, **kw)


def cross_entropy(logits, target, ignore_index=-100, reduction="mean", out=None):
    """torch.nn.functional.cross_entropy: logits (N, C, ...) or (C,); target class indices
    (integers) or probabilities (floats, logits' shape)."""
    return _C.cross_entropy(logits, target, ignore_index, reduction, out)


def binary_cross_entropy(prob, target, weight=None, reduction="mean", out=None):
    """Probabilities in [0, 1]; logs clamped at -100 as torch."""
    return _C.binary_cross_entropy(prob, target, weight, reduction, out)


def binary_cross_entropy_with_logits(logits, target, weight=None, pos_weight=None,
                                     reduction="mean", out=None):
    """torch.nn.functional.binary_cross_entropy_with_logits: sigmoid and BCE in one stable
    formula; pos_weight weighs the positive term."""
    return _C.binary_cross_entropy_with_logits(logits, target, weight, pos_weight, reduction, out)


# --- data -----------------------------------------------------------------------------------------
def fill(out, value):
    """Every element of out = value; returns out."""
    return _C.fill(out, value)


def copy(x, out=None):
    """A C-contiguous copy of x, or out[...] = x."""
    if out is not None:
        return _C.copy(out, x)
    return _C.cast(x, x.dtype_name if hasattr(x, "dtype_name") else x.dtype)


def concatenate(tensors, axis=0, out=None):
    """numpy.concatenate: equal other dims; axis=None joins the flattened inputs; mixed dtypes
    are promoted first (numpy's result_type)."""
    ts = _joinable(tensors)
    if axis is None:
        ts, axis = [t.reshape(-1) for t in ts], 0
    return _C.concat(ts, axis, out)


def dropout(x, p=0.5, seed=0, offset=0, out=None, mask=None):
    """Dropout in one pass: x * scale where kept, x * 0 where dropped, scale = 1 / (1 - p);
    element i kept with probability 1 - p by the Philox stream of (seed, offset) (docs/ops_data.md
    "Dropout": the same mask on every backend); mask (an existing bool Tensor of x's shape, or
    None) gets the kept elements."""
    return _C.dropout(x, p, seed, offset, out, mask)


def dropout_backward(grad, mask, scale=1.0, out=None):
    """ATen's native_dropout_backward: grad * scale where mask, grad * 0 elsewhere."""
    return _C.dropout_backward(grad, mask, scale, out)


def _joinable(tensors):
    """The inputs of concatenate/stack as Tensors of one dtype (the library's concat takes one)."""
    tensors = list(tensors)
    ex = next((t.executor for t in tensors if isinstance(t, _Tensor)), None)
    ts = [t if isinstance(t, _Tensor) else _asarray(t, executor=ex) for t in tensors]
    names = {t.dtype_name for t in ts}
    if len(names) < 2:
        return ts
    if "bf16" in names:   # the library's table (docs/ops.md): bf16 beside integers stays bf16
        dt = "f64" if "f64" in names else "f32" if names & {"f16", "f32"} else "bf16"
    else:
        dt = np.result_type(*[t.dtype for t in ts])
    return [_C.cast(t, dt) for t in ts]


concat = concatenate
cat = concatenate


def stack(tensors, axis=0, out=None):
    """numpy.stack: joins along a new axis."""
    ts = [t._unsqueeze(axis) for t in _joinable(tensors)]
    return _C.concat(ts, axis, out)


def index_select(x, axis, index, out=None):
    """torch.index_select / numpy.take along one axis (negative indices count from the end)."""
    return _C.index_select(x, axis, index, out)


def take(x, index, axis=None, out=None):
    """numpy.take (axis None: on the flattened x)."""
    if axis is None or (getattr(x, "ndim", 1) == 0 and axis in (0, -1)):
        x = x.reshape(-1)   # (numpy takes axis 0 / -1 of a 0-d x as of its one element)
        axis = 0
    return _C.index_select(x, axis, index, out)


def embedding(index, weight, out=None):
    """Rows of weight (num, dim) for integer indices of any shape: shape index.shape + (dim,)."""
    idx = index if isinstance(index, _Tensor) else None
    if idx is None:
        idx = _asarray(index, executor=weight.executor)
    rows = _C.index_select(weight, 0, idx.reshape(-1))
    return rows.reshape(tuple(idx.shape) + (weight.shape[1],)) if out is None else \
        _C.copy(out, rows.reshape(tuple(idx.shape) + (weight.shape[1],)))


def gather(x, axis, index, out=None):
    """torch.gather / numpy.take_along_axis."""
    return _C.gather(x, axis, index, out)


def take_along_axis(x, index, axis, out=None):
    """numpy.take_along_axis (gather with numpy's argument order)."""
    return _C.gather(x, axis, index, out)


def index_add(out, axis, index, src):
    """torch.Tensor.index_add_ (numpy.add.at along one axis): out[..., index[i], ...] +=
    src[..., i, ...] in place, repeated indices adding up; returns out."""
    return _C.index_add(out, axis, index, src)


def scatter_add(out, axis, index, src):
    """torch.Tensor.scatter_add_: out[index[i][j]][j] += src[i][j] (axis 0) in place;
    returns out."""
    return _C.scatter_add(out, axis, index, src)




# --- gradients (the backward ops of the C library) -----------------------------------------------
def activation_backward(op, grad, x=None, y=None, out=None):
    """dL/dx of ``y = op(x)`` from ``grad`` = dL/dy, one fused kernel. ``op`` is the unary op's
    name ("tanh", "gelu" (tanh form), "gelu_erf", "relu", "sigmoid", "silu", ...); x is the
    forward's input and y its result: each op reads what its formula needs (ops.h lists which),
    the other may be None."""
    code = _U.get(op) if isinstance(op, str) else None
    if code is None:
        raise ValueError(f"activation_backward: unknown op {op!r} (a unary op's name, such as "
                         f"'tanh', 'gelu_erf', 'relu')")
    return _C.activation_backward(code, grad, x, y, out)


def softmax_backward(grad, y, axis=-1, out=None):
    """dL/dx of ``y = softmax(x, axis)``: y * (grad - sum(grad * y, axis))."""
    return _C.softmax_backward(grad, y, axis, False, out)


def log_softmax_backward(grad, y, axis=-1, out=None):
    """dL/dx of ``y = log_softmax(x, axis)``: grad - exp(y) * sum(grad, axis)."""
    return _C.softmax_backward(grad, y, axis, True, out)


def _norm_backward(rms, grad, x, normalized_shape, weight, eps, outputs):
    nn = _nnorm(x, normalized_shape)
    pshape = tuple(x.shape[x.ndim - nn:])
    pdt = (weight if weight is not None else x).dtype_name
    made = [_empty(x.shape, x.dtype_name, executor=x.executor) if outputs[0] else None,
            _empty(pshape, pdt, executor=x.executor) if outputs[1] else None]
    if not rms:
        made.append(_empty(pshape, pdt, executor=x.executor) if outputs[2] else None)
    _C.norm_backward(grad, x, nn, weight, eps, rms, *made)
    return tuple(made)


def adam_step(param, grad, exp_avg, exp_avg_sq, *, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
              weight_decay=0.0, decoupled_weight_decay=False, amsgrad=False, maximize=False,
              max_exp_avg_sq=None):
    """One Adam (AdamW with ``decoupled_weight_decay=True``) update of ``param``, in place, as
    ``torch.optim.Adam``'s per-tensor update computes it (same steps and roundings).

    ``exp_avg`` and ``exp_avg_sq`` are the moment Tensors (zeros before the first step), updated
    in place; ``max_exp_avg_sq`` is needed with ``amsgrad``. ``step`` is the step being taken,
    counted from 1. All Tensors share param's dtype and shape; ``grad`` is only read.
    Contiguous f32/f64 on the CPU take one threaded pass; anything else runs as library ops.
    """
    b1, b2 = betas
    _C.adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, b1, b2, eps,
                 weight_decay, step, decoupled_weight_decay, amsgrad, maximize)


def layer_norm_backward(grad, x, normalized_shape=None, weight=None, eps=1e-5,
                        outputs=(True, True, True)):
    """Gradients of ``layer_norm(x, normalized_shape, weight, bias, eps)``: (grad_x,
    grad_weight, grad_bias); ``outputs`` says which to compute (None in their place otherwise).
    The statistics are recomputed from x."""
    return _norm_backward(False, grad, x, normalized_shape, weight, eps, outputs)


def rms_norm_backward(grad, x, normalized_shape=None, weight=None, eps=1e-6,
                      outputs=(True, True)):
    """Gradients of ``rms_norm(x, normalized_shape, weight, eps)``: (grad_x, grad_weight)."""
    return _norm_backward(True, grad, x, normalized_shape, weight, eps, outputs)


def cross_entropy_backward(grad, logits, target, ignore_index=-100, reduction="mean", out=None):
    """dL/dlogits of ``cross_entropy(logits, target, ignore_index, reduction)`` with the softmax
    fused in; grad is 0-d for 'mean'/'sum', the per-sample loss's shape for 'none'."""
    return _C.cross_entropy_backward(grad, logits, target, ignore_index, reduction, out)


# --- names for the package -----------------------------------------------------------------------
#: The elementwise ops by their public names (the table's, and the wrapped ones), and the ops
#: hologram's top level re-exports (hologram.exp(x), hologram.matmul(a, b), ...): those and the
#: other numpy-style ops of this module.
ELEMENTWISE = tuple(n for n, *_ in UNARY_OPS + BINARY_OPS if not n.startswith("_")) + (
    "sigmoid", "tanh", "gelu", "round", "rint")
TOP_LEVEL = ELEMENTWISE + (
    "where", "clip", "fma", "cast", "sum", "mean",
    "prod", "amin", "amax", "min", "max", "abs", "argmin", "argmax", "var", "std", "logsumexp",
    "any", "all",
    "softmax",
    "log_softmax", "layer_norm", "rms_norm", "matmul", "concatenate", "stack", "take",
    "index_select", "gather", "take_along_axis", "index_add", "scatter_add",
)


def numpy_ufuncs():
    """numpy ufunc name -> the hologram op, for every elementwise op and alias that numpy has as
    a ufunc (np.exp(t) on a Tensor runs hologram's exp); keys are both the attribute name and the
    ufunc's own __name__ (np.bitwise_not is 'invert', np.true_divide is 'divide')."""
    names = list(ELEMENTWISE) + [a for *_, aliases in UNARY_OPS + BINARY_OPS for a in aliases]
    table = {}
    for name in names:
        u = getattr(np, name, None)
        if isinstance(u, np.ufunc):
            table[name] = table[u.__name__] = globals()[name]
    return table


# Every public function and table of this module (not the imported modules and tracer helpers).
__all__ = [n for n, v in globals().items() if not n.startswith("_") and type(v) is not type(math)
           and n not in ("traced", "trace_dispatch", "Traced", "TraceError")]
