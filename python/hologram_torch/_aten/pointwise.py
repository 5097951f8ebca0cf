"""The ATen pointwise ops (and the reductions, constants and matmuls around them) that the
fusion pass (fuse.py) lowers to hologram graph nodes, each with the conditions under which
hologram computes it as ATen does.

How ATen's semantics are kept: every op reads its tensor operands cast to one compute dtype (the
node's result dtype, or for comparisons the operands' promoted dtype: the explicit form of what
ATen's TensorIterator does), and Python numbers become 0-d constants of that dtype (ATen casts a
scalar to the compute dtype the same way). So hologram's own (numpy-style) promotion never
decides a dtype, and the fusion pass checks every built node's dtype and shape against the FX
node's FakeTensor. Compute dtypes are float32/float64 for math, also the integer dtypes for the
ops that wrap alike in both (add, sub, mul, neg, abs, max/min, relu, bitwise, where); float16 and
bfloat16 appear only as cast sources and targets (a chain computing in them stays torch: ATen
rounds each op to them on the CPU but computes some in float, per kernel).
"""
import math
import operator

import torch

from hologram import _C

from .. import _bridge as B

aten = torch.ops.aten
prims = torch.ops.prims
_U, _BIN, _R = _C.unary_ops, _C.binary_ops, _C.reduce_ops

FLOAT = (torch.float32, torch.float64)
INT = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
NUM = FLOAT + INT
ANY = NUM + (torch.bool,)


class Ref:
    """A hologram graph node id (a tensor operand while building; numbers are constants)."""
    __slots__ = ("id",)

    def __init__(self, i):
        self.id = i


class Build:
    """Emits nodes into a hologram Graph; t() is an operand in a given torch dtype."""

    def __init__(self, g, host=True):
        self.g = g
        self.host = host   # for a host (cpu) executor: library steps that exist there only

    def t(self, x, dt):
        name = B.DTYPES[dt]
        if isinstance(x, Ref):
            return x.id if self.g.node_info(x.id)[0] == name else self.g.cast(x.id, name)
        if isinstance(x, float) and not dt.is_floating_point:
            # ATen converts such a scalar by C++ rules (truncation, UB out of range): not ours
            raise TypeError(f"a float scalar in a {dt} computation")
        return self.g.constant(name, x)

    def bin(self, op, a, b):
        return self.g.binary(_BIN[op], a, b)

    def un(self, op, a):
        return self.g.unary(_U[op], a)


class Lowering:
    """What one FX node becomes: emit(b, dtype, *operands) -> hologram node id. operands hold FX
    nodes (tensor operands, replaced by Refs at build time) and Python numbers / None / tuples."""
    __slots__ = ("emit", "dtype", "operands", "kind")

    def __init__(self, emit, dtype, operands, kind="pw"):
        self.emit, self.dtype, self.operands, self.kind = emit, dtype, operands, kind


def _is_num(x):
    return type(x) in (bool, int, float)


def _tensor_val(x):
    v = x.meta.get("val") if isinstance(x, torch.fx.Node) else None
    if isinstance(v, torch.Tensor) and v.dtype in B.DTYPES and v.layout == torch.strided \
            and all(type(s) is int for s in v.shape) and all(type(s) is int for s in v.stride()):
        return v
    return None


def _result_type(*ops):
    """ATen's promoted dtype of tensor operands (FX nodes) and Python numbers, from meta tensors
    of the operands' dtypes and ranks (0-d tensors promote differently)."""
    args = []
    for o in ops:
        if isinstance(o, torch.fx.Node):
            v = o.meta["val"]
            args.append(torch.empty((1,) * min(v.dim(), 1), dtype=v.dtype, device="meta"))
        else:
            args.append(o)
    if len(args) == 1:
        return args[0].dtype
    r = torch.result_type(args[0], args[1])
    for a in args[2:]:
        r = torch.promote_types(r, a.dtype if isinstance(a, torch.Tensor)
                                else torch.result_type(torch.empty(1, dtype=r, device="meta"), a))
    return r


# --- emitters ------------------------------------------------------------------------------

def _binary(op):
    def emit(b, dt, x, y):
        return b.bin(op, b.t(x, dt), b.t(y, dt))
    return emit


def _add_sub(op):
    def emit(b, dt, x, y, alpha):
        y = b.t(y, dt)
        if alpha != 1:   # ATen: self + alpha * other
            y = b.bin("multiply", y, b.t(alpha, dt))
        return b.bin(op, b.t(x, dt), y)
    return emit


def _rsub(b, dt, x, y, alpha):
    # ATen: other - alpha * self
    x = b.t(x, dt)
    if alpha != 1:
        x = b.bin("multiply", x, b.t(alpha, dt))
    return b.bin("subtract", b.t(y, dt), x)


def _unary(op):
    def emit(b, dt, x):
        return b.un(op, b.t(x, dt))
    return emit


def _sigmoid_of(b, dt, x):
    # ATen's CPU kernel: 1 / (1 + exp(-x)), so its zero below -88 (f32) and its NaN-free
    # limits come out as in torch (hologram's sigmoid instruction keeps the subnormal tail)
    return b.bin("divide", b.t(1, dt), b.bin("add", b.t(1, dt), b.un("exp", b.un("neg", x))))


def _sigmoid(b, dt, x):
    return _sigmoid_of(b, dt, b.t(x, dt))


def _silu(b, dt, x):
    # ATen: x / (1 + exp(-x)): silu(-inf) is NaN there (hologram's silu instruction gives -0)
    x = b.t(x, dt)
    return b.bin("divide", x, b.bin("add", b.t(1, dt), b.un("exp", b.un("neg", x))))


def _relu(b, dt, x):
    # ATen: x < 0 ? 0 : x, which keeps -0.0 and NaN (hologram's relu gives +0.0 for -0.0)
    x = b.t(x, dt)
    return b.g.where(b.bin("less", x, b.t(0, dt)), b.t(0, dt), x)


def _cast(b, dt, x):
    return b.t(x, dt)


def _where(b, dt, c, x, y):
    return b.g.where(b.t(c, torch.bool), b.t(x, dt), b.t(y, dt))


def _masked_fill(b, dt, x, mask, value):
    return b.g.where(b.t(mask, torch.bool), b.t(value, dt), b.t(x, dt))


def _clamp(b, dt, x, lo, hi):
    r = b.t(x, dt)            # ATen: min(max(x, lo), hi); NaN x stays NaN
    if lo is not None:
        r = b.bin("maximum", r, b.t(lo, dt))
    if hi is not None:
        r = b.bin("minimum", r, b.t(hi, dt))
    return r


def _pow_scalar(b, dt, x, e):
    # ATen's pow kernel special-cases these exponents; the same formulas give its bits
    x = b.t(x, dt)
    if e == 2:
        return b.bin("multiply", x, x)
    if e == 3:
        return b.bin("multiply", b.bin("multiply", x, x), x)
    if e == 0.5:
        return b.un("sqrt", x)
    if e == -1:
        return b.bin("divide", b.t(1, dt), x)
    if e == -2:
        return b.bin("divide", b.t(1, dt), b.bin("multiply", x, x))
    return b.bin("power", x, b.t(e, dt))


def _logical(op):
    def emit(b, dt, x, y):
        return b.bin(op, b.t(x, torch.bool), b.t(y, torch.bool))
    return emit


def _not(b, dt, x):
    if dt == torch.bool:
        return b.un("logical_not", b.t(x, torch.bool))
    return b.un("bitwise_not", b.t(x, dt))


def _threshold_backward(b, dt, grad, x, thr):
    # ATen: x <= threshold ? 0 : grad
    return b.g.where(b.bin("less_equal", b.t(x, dt), b.t(thr, dt)), b.t(0, dt), b.t(grad, dt))


def _dropout_backward(b, dt, grad, mask, scale):
    # ATen: grad * (mask * scale), the mask bool (NaN where an infinite grad was dropped)
    return b.bin("multiply", b.t(grad, dt), b.bin("multiply", b.t(mask, dt), b.t(scale, dt)))


def _sigmoid_backward(b, dt, grad, y):
    y = b.t(y, dt)            # ATen: grad * (1 - y) * y
    return b.bin("multiply", b.bin("multiply", b.t(grad, dt),
                                   b.bin("subtract", b.t(1, dt), y)), y)


def _tanh_backward(b, dt, grad, y):
    y = b.t(y, dt)            # ATen: grad * (1 - y * y)
    return b.bin("multiply", b.t(grad, dt),
                 b.bin("subtract", b.t(1, dt), b.bin("multiply", y, y)))


def _silu_backward(b, dt, grad, x):
    x = b.t(x, dt)            # ATen: grad * s * (1 + x * (1 - s)), s = sigmoid(x)
    s = _sigmoid_of(b, dt, x)
    inner = b.bin("add", b.t(1, dt), b.bin("multiply", x, b.bin("subtract", b.t(1, dt), s)))
    return b.bin("multiply", b.bin("multiply", b.t(grad, dt), s), inner)


def _hard(kind):
    def emit(b, dt, x, a, c):
        x = b.t(x, dt)
        if kind == "hardtanh":            # ATen: x < lo ? lo : (x > hi ? hi : x) (keeps -0.0)
            lo, hi = b.t(a, dt), b.t(c, dt)
            return b.g.where(b.bin("less", x, lo), lo,
                             b.g.where(b.bin("greater", x, hi), hi, x))
        if kind == "leaky_relu":          # ATen: x > 0 ? x : x * slope
            return b.g.where(b.bin("greater", x, b.t(0, dt)), x, b.bin("multiply", x, b.t(a, dt)))
        # ATen: min(max(x + 3, 0), 6) / 6; hardswish: x * min(max(x + 3, 0), 6) / 6
        r = _clamp(b, dt, Ref(b.bin("add", x, b.t(3, dt))), 0, 6)
        return b.bin("divide", b.bin("multiply", x, r) if kind == "hardswish" else r, b.t(6, dt))
    return emit


def _reduce(op):
    def emit(b, dt, x, axes, keepdim):
        return b.g.reduce(_R[op], b.t(x, dt), axes, keepdim)
    return emit


def _view(b, dt, x, shape, expand):
    return b.g.expand(x.id, shape) if expand else b.g.reshape(x.id, shape)


def _permute(b, dt, x, perm):
    return b.g.permute(x.id, perm)


def _slice(b, dt, x, dim, start, end, step):
    return b.g.slice(x.id, dim, start, end, step)


def _cat(b, dt, dim, *xs):
    return b.g.concat([b.t(x, dt) for x in xs], dim)


def _slice_scatter(b, dt, x, src, dim, start, end, size):
    """x with [start, end) of dim replaced by src: the concatenation of x's parts around it and
    src (the same values, no arithmetic: ATen's slice_backward is this into zeros)."""
    parts = [b.t(src, dt)]
    if start > 0:
        parts.insert(0, b.g.slice(b.t(x, dt), dim, 0, start, 1))
    if end < size:
        parts.append(b.g.slice(b.t(x, dt), dim, end, size, 1))
    return b.g.concat(parts, dim) if len(parts) > 1 else parts[0]


def _matmul(b, dt, x, y):
    return b.g.matmul(b.t(x, dt), b.t(y, dt))


def _addmm(b, dt, bias, x, y):
    return b.bin("add", _matmul(b, dt, x, y), b.t(bias, dt))


def _layer_norm_item(b, dt, i, x, nnorm, w, bias, eps, step):
    """native_layer_norm(x, shape, w, bias, eps)[i], 0 the normalized x, 1 the mean and 2 rstd
    (for the backward). As a graph norm node (the op table's row kernel as one step of the
    plan: one pass per row) with step (the graph reads no statistics: inference) or on a host
    executor (the statistics come from the same step: hg_graph_norm_stat); else all three in
    graph nodes, the graph compiler computing the shared statistics once (hash-consing). The
    statistics in float64, as the row kernel has them: the squared deviations of a float32 row
    cannot overflow (ATen's float accumulation gives NaN or rstd = 0 there: docs/torch.md)."""
    x = b.t(x, dt)
    if step or b.host:
        y = b.g.norm(x, nnorm, -1 if w is None else b.t(w, dt),
                     -1 if bias is None else b.t(bias, dt), float(eps))
        return y if i == 0 else b.g.norm_stat(y, i - 1)
    nd = len(b.g.node_info(x)[1])
    axes = tuple(range(nd - nnorm, nd))
    x64 = b.t(Ref(x), torch.float64)
    mean = b.g.reduce(_R["mean"], x64, axes, True)
    xc = b.bin("subtract", x64, mean)
    var = b.g.reduce(_R["mean"], b.bin("multiply", xc, xc), axes, True)
    rstd = b.un("rsqrt", b.bin("add", var, b.t(eps, torch.float64)))
    if i == 1:
        return b.t(Ref(mean), dt)
    if i == 2:
        return b.t(Ref(rstd), dt)
    y = b.t(Ref(b.bin("multiply", xc, rstd)), dt)
    if w is not None:
        y = b.bin("multiply", y, b.t(w, dt))
    return y if bias is None else b.bin("add", y, b.t(bias, dt))


def _layer_norm_bw_item(b, dt, i, g, x, nnorm, mean, rstd, w):
    """native_layer_norm_backward(...)[i] from the saved mean and rstd: 0 the input's gradient
    rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w, xhat = (x - mean) * rstd
    (ATen's formula); 1 sum(g * xhat) and 2 sum(g) over the leading dims."""
    g, x = b.t(g, dt), b.t(x, dt)
    nd = len(b.g.node_info(x)[1])
    xhat = b.bin("multiply", b.bin("subtract", x, b.t(mean, dt)), b.t(rstd, dt))
    if i == 0:
        axes = tuple(range(nd - nnorm, nd))
        gw = g if w is None else b.bin("multiply", g, b.t(w, dt))
        m1 = b.g.reduce(_R["mean"], gw, axes, True)
        m2 = b.g.reduce(_R["mean"], b.bin("multiply", gw, xhat), axes, True)
        inner = b.bin("subtract", b.bin("subtract", gw, m1), b.bin("multiply", xhat, m2))
        return b.bin("multiply", b.t(rstd, dt), inner)
    lead = tuple(range(nd - nnorm))
    v = b.bin("multiply", g, xhat) if i == 1 else g
    return b.g.reduce(_R["sum"], v, lead, False) if lead else v


def _softmax(b, dt, x, dim, log):
    return b.g.softmax(b.t(x, dt), dim, log)


def _softmax_backward(b, dt, g, y, dim, log):
    """ATen's formulas: softmax y * (g - sum(g * y)), log_softmax g - exp(y) * sum(g), the
    sums over dim (kept)."""
    g, y = b.t(g, dt), b.t(y, dt)
    if log:
        s = b.g.reduce(_R["sum"], g, (dim,), True)
        return b.bin("subtract", g, b.bin("multiply", b.un("exp", y), s))
    s = b.g.reduce(_R["sum"], b.bin("multiply", g, y), (dim,), True)
    return b.bin("multiply", y, b.bin("subtract", g, s))


def _constant(b, dt, value, shape):
    c = b.t(value, dt)
    return b.g.expand(c, shape) if shape else c


# --- the table: FX node -> Lowering or None -------------------------------------------------

_ARITH = {   # op -> (hologram op, result dtypes it runs exactly)
    aten.mul.Tensor: ("multiply", NUM), aten.mul.Scalar: ("multiply", NUM),
    aten.div.Tensor: ("divide", FLOAT), aten.div.Scalar: ("divide", FLOAT),
    aten.maximum.default: ("maximum", NUM), aten.minimum.default: ("minimum", NUM),
    aten.pow.Tensor_Tensor: ("power", FLOAT),
    aten.bitwise_and.Tensor: ("bitwise_and", INT + (torch.bool,)),
    aten.bitwise_or.Tensor: ("bitwise_or", INT + (torch.bool,)),
    aten.bitwise_xor.Tensor: ("bitwise_xor", INT + (torch.bool,)),
}
_ADD = {aten.add.Tensor: "add", aten.add.Scalar: "add",
        aten.sub.Tensor: "subtract", aten.sub.Scalar: "subtract"}
_CMP = {}
for _n, _h in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
               ("gt", "greater"), ("ge", "greater_equal")):
    _CMP[getattr(aten, _n).Tensor] = _h
    _CMP[getattr(aten, _n).Scalar] = _h
_FLOAT_UNARY = {getattr(aten, n).default: h for n, h in (
    ("exp", "exp"), ("exp2", "exp2"), ("expm1", "expm1"), ("log", "log"), ("log2", "log2"),
    ("log1p", "log1p"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"), ("reciprocal", "reciprocal"),
    ("tanh", "tanh"), ("erf", "erf"),
    ("sin", "sin"), ("cos", "cos"), ("floor", "floor"), ("ceil", "ceil"), ("trunc", "trunc"),
    ("round", "round"))}
_NUM_UNARY = {aten.neg.default: "neg", aten.abs.default: "abs"}
_TEST = {aten.isnan.default: "isnan", aten.isinf.default: "isinf",
         aten.isfinite.default: "isfinite"}
_LOGICAL = {aten.logical_and.default: "logical_and", aten.logical_or.default: "logical_or",
            aten.logical_xor.default: "logical_xor"}
_BACKWARD = {aten.threshold_backward.default: (_threshold_backward, ("grad_output", "input",
                                                                     "threshold")),
             aten.sigmoid_backward.default: (_sigmoid_backward, ("grad_output", "output")),
             aten.tanh_backward.default: (_tanh_backward, ("grad_output", "output")),
             aten.silu_backward.default: (_silu_backward, ("grad_output", "input"))}
_HARD = {aten.hardtanh.default: ("hardtanh", ("min_val", "max_val"), (-1, 1)),
         aten.leaky_relu.default: ("leaky_relu", ("negative_slope",), (0.01,)),
         aten.hardsigmoid.default: ("hardsigmoid", (), ()),
         aten.hardswish.default: ("hardswish", (), ())}
_REDUCE = {aten.sum.default: "sum", aten.sum.dim_IntList: "sum", aten.mean.default: "mean",
           aten.mean.dim: "mean", aten.amax.default: "max", aten.amin.default: "min"}
_SOFTMAX = (aten._softmax.default, aten._log_softmax.default, aten._softmax_backward_data.default,
            aten._log_softmax_backward_data.default)
_CASTS = (aten._to_copy.default, prims.convert_element_type.default, aten.clone.default)
_LIKE_FILL = {aten.zeros_like.default: 0, aten.ones_like.default: 1}
_CONSTS = (aten.full.default, aten.scalar_tensor.default, aten.full_like.default,
           aten.zeros_like.default, aten.ones_like.default)
# views a kernel reads its operand through (C-order reshapes, broadcasts): rebuilt inside each
# cluster that reads them, so a view between two pointwise ops does not split their kernel
_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default,
          aten.unsqueeze.default, aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims,
          aten.expand.default, aten.alias.default)


# strided views (permute, transpose, slice): hologram graph views, also absorbed into each
# cluster that reads them; the graph compiler moves them to the values in memory, where the
# kernel reads through strides
_STRIDED = (aten.permute.default, aten.t.default, aten.transpose.int, aten.slice.Tensor)


def _operands_ok(node, val, ops):
    """Tensor operands: static dense tensors of hologram dtypes on the node's device; the rest
    Python numbers (SymInts / SymFloats stay torch), None or tuples of ints (axes, shapes)."""
    for o in ops:
        if isinstance(o, torch.fx.Node):
            v = _tensor_val(o)
            if v is None or v.device != val.device:
                return False
        elif isinstance(o, tuple):
            if not all(type(i) is int for i in o):
                return False
        elif o is not None and not _is_num(o):
            return False
    return True


def _args(gm, node):
    """node's arguments by name (a Tensor self also as "input"), or None."""
    try:
        p = node.normalized_arguments(gm, normalize_to_only_use_kwargs=True)
    except Exception:   # a schema torch cannot match: leave the node alone
        return None
    k = None if p is None else p.kwargs
    if k is not None and "self" in k and "input" not in k:   # normalization names it "self"
        k["input"] = k["self"]
    return k


def lower(gm, node):
    """The Lowering of an FX node, or None when it stays torch."""
    t = node.target
    if node.op == "call_function" and t is operator.getitem:
        val = _tensor_val(node)
        low = _lower_split_item(node) or _lower_norm_item(node, val)
        return low if low is not None and _operands_ok(node, val, low.operands) else None
    if node.op != "call_function" or not isinstance(t, torch._ops.OpOverload):
        return None
    val = _tensor_val(node)
    if val is None or val.device.type not in ("cpu", "cuda"):
        return None
    k = _args(gm, node)
    if k is None:
        return None
    low = _lower_rms_norm(gm, k, val) if t is aten.mul.Tensor else None
    low = low or _lower(t, k, val)
    if low is None or not _operands_ok(node, val, low.operands):
        return None
    return low


def _call_args(gm, node, target):
    """node's arguments by name when it calls target, else None."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function" or node.target is not target:
        return None
    return _args(gm, node)


def _lower_rms_norm(gm, k, val):
    """x * rsqrt(mean(x ** 2, trailing dims, keepdim) + eps), RMSNorm as Hugging Face's Llama
    (and T5, Mistral, Qwen) write it: a graph norm node (rms), the row kernel of the op table's
    hg_rms_norm in one pass per row (its sum of squares in float64; torch's in float32 differs
    by rounding), where nothing else reads the rsqrt (inference). The weight multiply after it
    stays an elementwise node. k: the mul's arguments."""
    if val.dtype not in FLOAT:
        return None
    for x, r in ((k.get("input"), k.get("other")), (k.get("other"), k.get("input"))):
        xv = _tensor_val(x) if isinstance(x, torch.fx.Node) else None
        kr = _call_args(gm, r, aten.rsqrt.default)
        ka = kr and _call_args(gm, kr["input"], aten.add.Tensor)
        if not ka or xv is None or xv.dtype != val.dtype or tuple(xv.shape) != tuple(val.shape) \
                or xv.numel() == 0 or ka.get("alpha", 1) != 1:
            continue
        if len(r.users) != 1:   # the rsqrt is read elsewhere (saved for the backward): its
            continue            # reduction runs anyway, and the product is one kernel more
        for m, eps in ((ka["input"], ka["other"]), (ka["other"], ka["input"])):
            km = _call_args(gm, m, aten.mean.dim)
            kp = km and _call_args(gm, km["input"], aten.pow.Tensor_Scalar)
            if not kp or kp["input"] is not x or kp["exponent"] != 2 or not _is_num(eps) or \
                    not math.isfinite(eps) or eps < 0 or not km.get("keepdim") or \
                    km.get("dtype") not in (None, val.dtype):
                continue
            nd = xv.dim()
            dims = sorted(d % nd for d in km.get("dim") or ())
            n = len(dims)
            if n and dims == list(range(nd - n, nd)):
                return Lowering(_rms_norm, val.dtype, (x, r, n, float(eps)))
    return None


def _rms_norm(b, dt, x, rstd, nnorm, eps):
    """rstd (the matched rsqrt) stays an operand, so the cluster keeps the mul's edges; the
    graph compiler drops it where nothing else reads it."""
    return b.g.norm(b.t(x, dt), nnorm, -1, -1, eps, True)


def _lower(t, k, val):
    dt = val.dtype
    if t in _ADD:
        ops = (k["input"], k["other"], k.get("alpha", 1))
        return Lowering(_add_sub(_ADD[t]), dt, ops) if dt in NUM and _is_num(ops[2]) else None
    if t in (aten.rsub.Scalar, aten.rsub.Tensor):
        ops = (k["input"], k["other"], k.get("alpha", 1))
        return Lowering(_rsub, dt, ops) if dt in NUM and _is_num(ops[2]) else None
    if t in _ARITH:
        op, dts = _ARITH[t]
        key = "exponent" if t is aten.pow.Tensor_Tensor else "other"
        return Lowering(_binary(op), dt, (k["input"], k[key])) if dt in dts else None
    if t in _CMP:
        c = _result_type(k["input"], k["other"])
        return Lowering(_binary(_CMP[t]), c, (k["input"], k["other"])) if c in ANY else None
    if t in _FLOAT_UNARY:
        return Lowering(_unary(_FLOAT_UNARY[t]), dt, (k["input"],)) if dt in FLOAT else None
    if t in (aten.sigmoid.default, aten.silu.default):
        fn = _sigmoid if t is aten.sigmoid.default else _silu
        return Lowering(fn, dt, (k["input"],)) if dt in FLOAT else None
    if t is aten.relu.default:
        return Lowering(_relu, dt, (k["input"],)) if dt in NUM else None
    if t in _NUM_UNARY:
        return Lowering(_unary(_NUM_UNARY[t]), dt, (k["input"],)) if dt in NUM else None
    if t in _TEST:
        x = k["input"]
        c = x.meta["val"].dtype if isinstance(x, torch.fx.Node) else None
        return Lowering(_unary(_TEST[t]), c, (x,)) if c in FLOAT else None
    if t in _LOGICAL:
        return Lowering(_logical(_LOGICAL[t]), dt, (k["input"], k["other"])) \
            if dt == torch.bool else None
    if t in (aten.logical_not.default, aten.bitwise_not.default):
        if t is aten.logical_not.default and dt != torch.bool:
            return None
        return Lowering(_not, dt, (k["input"],)) if dt in INT + (torch.bool,) else None
    if t in (aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar):
        return Lowering(_where, dt, (k["condition"], k["input"], k["other"])) \
            if dt in ANY else None
    if t in (aten.masked_fill.Scalar, aten.masked_fill.Tensor):
        return Lowering(_masked_fill, dt, (k["input"], k["mask"], k["value"])) \
            if dt in ANY else None
    if t in (aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default):
        lo, hi = k.get("min"), k.get("max")
        if any(isinstance(b, float) and math.isnan(b) for b in (lo, hi)) or dt not in NUM:
            return None   # a NaN bound: ATen's kernels differ on it
        return Lowering(_clamp, dt, (k["input"], lo, hi))
    if t in _HARD:
        kind, names, defaults = _HARD[t]
        extra = [k.get(n, d) for n, d in zip(names, defaults)]
        ok = dt in FLOAT and all(_is_num(e) for e in extra)
        return Lowering(_hard(kind), dt, (k["input"], *extra, *[None] * (2 - len(extra)))) \
            if ok else None
    if t is aten.pow.Tensor_Scalar:
        e = k["exponent"]
        return Lowering(_pow_scalar, dt, (k["input"], e)) \
            if dt in FLOAT and _is_num(e) else None
    if t is aten.pow.Scalar:
        return Lowering(_binary("power"), dt, (k["input"], k["exponent"])) \
            if dt in FLOAT else None
    if t is aten.native_dropout_backward.default:
        m, scale = k["mask"], k["scale"]
        mv = _tensor_val(m) if isinstance(m, torch.fx.Node) else None
        ok = dt in FLOAT and mv is not None and mv.dtype == torch.bool and _is_num(scale)
        return Lowering(_dropout_backward, dt, (k["grad_output"], m, float(scale))) if ok else None
    if t in _BACKWARD:
        fn, names = _BACKWARD[t]
        return Lowering(fn, dt, tuple(k[n] for n in names)) if dt in FLOAT else None
    if t in _CASTS:
        return _lower_cast(t, k, val)
    if t in _REDUCE:
        return _lower_reduce(t, k, val)
    if t in _VIEWS:
        x = k["input"]
        ok = isinstance(x, torch.fx.Node) and _tensor_val(x) is not None
        return Lowering(_view, dt, (x, tuple(val.shape), t is aten.expand.default), "view") \
            if ok else None
    if t in _STRIDED:
        return _lower_strided(t, k, val)
    if t is aten.cat.default:
        return _lower_cat(k, val)
    if t is aten.slice_scatter.default:
        return _lower_slice_scatter(k, val)
    if t is aten.gelu.default:
        a = k.get("approximate", "none")
        op = {"none": "gelu_erf", "tanh": "gelu"}.get(a)
        return Lowering(_unary(op), dt, (k["input"],)) if dt in FLOAT and op else None
    if t in _SOFTMAX:
        return _lower_softmax(t, k, val)
    if t in (aten.mm.default, aten.bmm.default):
        return Lowering(_matmul, dt, (k["input"], k["mat2"]), "mm") if dt in FLOAT else None
    if t is aten.addmm.default:
        ok = dt in FLOAT and k.get("beta", 1) == 1 and k.get("alpha", 1) == 1
        return Lowering(_addmm, dt, (k["input"], k["mat1"], k["mat2"]), "mm") if ok else None
    if t in _CONSTS:
        v = _LIKE_FILL.get(t, k.get("fill_value", k.get("s")))
        shape = tuple(k["size"]) if "size" in k else tuple(val.shape)
        ok = _is_num(v) and dt in ANY and all(type(s) is int for s in shape)
        return Lowering(_constant, dt, (v, shape), "const") if ok else None
    return None


def _lower_softmax(t, k, val):
    """_softmax / _log_softmax (a graph softmax node: the same row kernel as the table's op) and
    their backward ops (ATen's formulas) over a static dim of a float tensor."""
    log = t in (aten._log_softmax.default, aten._log_softmax_backward_data.default)
    nd = val.dim()
    dim = k.get("dim")
    if val.dtype not in FLOAT or nd == 0 or type(dim) is not int or not -nd <= dim < nd \
            or val.numel() == 0:
        return None
    if t in (aten._softmax.default, aten._log_softmax.default):
        x = k["input"]
        ok = not k.get("half_to_float") and _float_tensor(x, val.dtype)
        return Lowering(_softmax, val.dtype, (x, dim % nd, log)) if ok else None
    g, y = k["grad_output"], k["output"]
    ok = k.get("input_dtype") == val.dtype and _float_tensor(g, val.dtype) and \
        _float_tensor(y, val.dtype) and tuple(g.meta["val"].shape) == tuple(val.shape) == \
        tuple(y.meta["val"].shape)
    return Lowering(_softmax_backward, val.dtype, (g, y, dim % nd, log)) if ok else None


def _lower_cast(t, k, val):
    x = k["input"] if "input" in k else k["a"]
    if not isinstance(x, torch.fx.Node) or _tensor_val(x) is None:
        return None
    if t is aten._to_copy.default and (
            k.get("layout") not in (None, torch.strided) or k.get("pin_memory")
            or (k.get("device") is not None and torch.device(k["device"]) != val.device)):
        return None
    src, dst = x.meta["val"].dtype, val.dtype
    if src.is_floating_point and not dst.is_floating_point and dst != torch.bool:
        return None   # float -> int: ATen's is undefined out of range, hologram's saturates
    return Lowering(_cast, dst, (x,))


def _lower_reduce(t, k, val):
    x = k["input"]
    xv = _tensor_val(x) if isinstance(x, torch.fx.Node) else None
    if xv is None or xv.dtype != val.dtype or val.dtype not in FLOAT or xv.numel() == 0 \
            or k.get("dtype") not in (None, val.dtype):
        return None
    dims = k.get("dim")
    nd = xv.dim()
    if dims is None or len(dims) == 0 or nd == 0:
        axes = None
    else:
        axes = tuple(sorted(d % nd for d in dims))
        if len(axes) == nd:
            axes = None
    return Lowering(_reduce(_REDUCE[t]), val.dtype, (x, axes, bool(k.get("keepdim", False))),
                    "red")


def _lower_strided(t, k, val):
    x = k["input"]
    xv = _tensor_val(x) if isinstance(x, torch.fx.Node) else None
    if xv is None:
        return None
    nd = xv.dim()
    if t is aten.slice.Tensor:
        dim, start, end, step = k.get("dim", 0), k.get("start"), k.get("end"), k.get("step", 1)
        if nd == 0 or not all(v is None or type(v) is int for v in (dim, start, end, step)) \
                or step is None or step < 1:
            return None
        return Lowering(_slice, val.dtype, (x, dim % nd, start, end, step), "view")
    if t is aten.permute.default:
        perm = tuple(k["dims"])
    else:
        d0, d1 = (0, 1) if t is aten.t.default else (k["dim0"], k["dim1"])
        perm = list(range(nd))
        if nd >= 2:
            perm[d0 % nd], perm[d1 % nd] = perm[d1 % nd], perm[d0 % nd]
        perm = tuple(perm)
    if len(perm) != nd or not all(type(p) is int for p in perm):
        return None
    return Lowering(_permute, val.dtype, (x, perm), "view")


def _lower_cat(k, val):
    xs, dim = list(k["tensors"]), k.get("dim", 0)
    vs = [_tensor_val(x) if isinstance(x, torch.fx.Node) else None for x in xs]
    # torch's legacy rule (1-d empty tensors of any shape are skipped) and mixed ranks stay torch
    if not xs or any(v is None or v.dim() != val.dim() for v in vs) or val.dim() == 0 \
            or type(dim) is not int or val.dtype not in ANY:
        return None
    return Lowering(_cat, val.dtype, (dim % val.dim(), *xs))


def _lower_slice_scatter(k, val):
    x, src = k["input"], k["src"]
    xv, sv = (_tensor_val(o) if isinstance(o, torch.fx.Node) else None for o in (x, src))
    dim, start, end, step = k.get("dim", 0), k.get("start"), k.get("end"), k.get("step", 1)
    if xv is None or sv is None or xv.dim() == 0 or step != 1 or val.dtype not in ANY or \
            not all(v is None or type(v) is int for v in (dim, start, end)):
        return None
    dim %= xv.dim()
    n = xv.shape[dim]
    # torch's slice bounds: None is an end, negative counts from the end, then clamped
    start = 0 if start is None else min(max(start + n if start < 0 else start, 0), n)
    end = n if end is None else min(max(end + n if end < 0 else end, start), n)
    if end == start:   # nothing scattered (an empty src): torch's copy
        return None
    want = list(xv.shape)
    want[dim] = end - start
    # the shapes ATen checks (an error stays torch's) and one dtype (no conversion in a copy)
    if list(sv.shape) != want or not xv.dtype == sv.dtype == val.dtype or \
            list(val.shape) != list(xv.shape):
        return None
    return Lowering(_slice_scatter, val.dtype, (x, src, dim, start, end, n))


def _float_tensor(x, dt):
    v = _tensor_val(x) if isinstance(x, torch.fx.Node) else None
    return v is not None and v.dtype == dt


def _lower_norm_item(node, val):
    """getitem i of native_layer_norm / native_layer_norm_backward: the part of the norm that
    output is, in graph nodes (reductions over the normalized dims), so a layer norm and its
    neighbours become one plan instead of a library call between two."""
    src, i = node.args
    if not isinstance(src, torch.fx.Node) or type(i) is not int or val is None or \
            val.dtype not in FLOAT:
        return None
    dt = val.dtype
    if src.target is aten.native_layer_norm.default and len(src.args) == 5 and not src.kwargs:
        x, shape, w, bias, eps = src.args
        n = len(shape) if isinstance(shape, (list, tuple)) else 0
        xv = _tensor_val(x) if isinstance(x, torch.fx.Node) else None
        ok = (xv is not None and xv.dtype == dt and 1 <= n <= xv.dim() and xv.numel() > 0 and
              tuple(shape) == tuple(xv.shape[xv.dim() - n:]) and _is_num(eps) and
              math.isfinite(eps) and eps >= 0 and 0 <= i <= 2 and
              all(o is None or _float_tensor(o, dt) for o in (w, bias)))
        # the norm step where nothing reads the statistics (the backward reads them in
        # training: computed as graph nodes, the output is one kernel more from them)
        step = i == 0 and not any(u.target is operator.getitem and u.args[1] != 0 and u.users
                                  for u in src.users)
        return Lowering(_layer_norm_item, dt, (i, x, n, w, bias, eps, step)) if ok else None
    if src.target is aten.native_layer_norm_backward.default and len(src.args) == 8 and \
            not src.kwargs:
        g, x, shape, mean, rstd, w, bias, mask = src.args
        n = len(shape) if isinstance(shape, (list, tuple)) else 0
        xv = _tensor_val(x) if isinstance(x, torch.fx.Node) else None
        ok = (xv is not None and xv.dtype == dt and 1 <= n <= xv.dim() and xv.numel() > 0 and
              tuple(shape) == tuple(xv.shape[xv.dim() - n:]) and 0 <= i <= 2 and mask[i] and
              all(_float_tensor(o, dt) for o in (g, mean, rstd)) and
              (w is None or _float_tensor(w, dt)) and
              (i != 1 or w is not None) and (i != 2 or bias is not None) and
              tuple(mean.meta["val"].shape) == tuple(rstd.meta["val"].shape) ==
              tuple(xv.shape[:xv.dim() - n]) + (1,) * n)
        return Lowering(_layer_norm_bw_item, dt, (i, g, x, n, mean, rstd, w)) if ok else None
    return None


def _lower_split_item(node):
    """split(x, size, dim)[i] / split_with_sizes(x, sizes, dim)[i]: a slice of x."""
    src, i = node.args
    val = _tensor_val(node)
    if not isinstance(src, torch.fx.Node) or type(i) is not int or val is None or src.target not in (
            aten.split.Tensor, aten.split_with_sizes.default):
        return None
    x, sizes = src.args[0], src.args[1]
    dim = src.args[2] if len(src.args) > 2 else src.kwargs.get("dim", 0)
    xv = _tensor_val(x) if isinstance(x, torch.fx.Node) else None
    if xv is None or xv.dim() == 0 or type(dim) is not int:
        return None
    dim %= xv.dim()
    if src.target is aten.split.Tensor:
        if type(sizes) is not int or sizes <= 0:
            return None
        start, stop = i * sizes, min((i + 1) * sizes, xv.shape[dim])
    else:
        if not all(type(k) is int for k in sizes) or not 0 <= i < len(sizes):
            return None
        start = sum(sizes[:i])
        stop = start + sizes[i]
    return Lowering(_slice, val.dtype, (x, dim, start, stop, 1), "view")
