"""The one place that maps torch ops to hologram ops: each op is defined once in torch's
dispatcher (namespace ``hologram``, ``torch.library`` define + impl for CPU and CUDA tensors)
with a fake (meta) implementation, so that ``torch.compile``, ``torch.library.opcheck`` and
FakeTensor tracing see it. The implementations run hologram on views of the torch tensors and
write into a result torch allocated. Gradients: _autograd.py.

Measured on a 2-core Zen 4 VM, torch 2.13, 1-element tensors: a define/impl op costs 1.3-1.4 us of
dispatch (torch.add 1.2 in total), a ``torch.autograd.Function`` 5.3 us more; see docs/torch.md.
"""
import torch

import hologram as hg

from . import _bridge as B

LIB = torch.library.Library("hologram", "DEF")
# The bridge's conversions, bound here for the binary ops' per-call path (B.to_hg / B.to_torch
# are these calls; a Python call less each costs ~0.1 us of a 1-element add).
_to_dlpack, _from_dlpack, _from_capsule = torch._C._to_dlpack, torch._C._from_dlpack, hg._C._from_capsule
_capsule_binary = hg._C._capsule_binary
_C_NAMES = {"sub": "subtract", "mul": "multiply", "div": "divide"}   # torch name -> hologram's


def _eager():
    """True when a call may skip the dispatcher: nothing traces or transforms it (torch.compile,
    torch.func, dispatch or function modes such as FakeTensorMode). The dispatcher's boxed call
    of a Python kernel cost ~3 us of an 8 us 1-element add; under any of these the op goes
    through it, so they see torch.ops.hologram.<name>."""
    if torch.compiler.is_compiling():   # first: dynamo reads it as a constant
        return False
    return not (torch._C._len_torch_dispatch_stack() or torch._C._is_torch_function_mode_enabled()
                or torch._C._are_functorch_transforms_active())


def _define(schema, impl, fake):
    """Registers the op; returns a callable that runs it (directly in plain eager mode on plain
    tensors, else through the dispatcher: .overload is the torch.ops.hologram OpOverload)."""
    name = schema.split("(")[0]
    LIB.define(schema)
    for key in ("CPU", "CUDA"):
        LIB.impl(name, impl, key)
    torch.library.register_fake(f"hologram::{name}", fake, lib=LIB)
    overload = getattr(torch.ops.hologram, name).default
    Tensor = torch.Tensor

    def call(*args):
        if _eager():
            for a in args:   # tensor subclasses (FakeTensor, ...) take the dispatcher
                if type(a) is not Tensor and isinstance(a, Tensor):
                    return overload(*args)
            return impl(*args)
        return overload(*args)

    call.overload = overload
    call.__name__ = name
    return call


def _batched_front(ts, dims, size):
    """vmap: each tensor with its batch dim first and 1s padded up to the largest logical rank,
    so elementwise ops broadcast the logical shapes as unbatched calls would (None: unbatched)."""
    nd = max(t.dim() - (d is not None) for t, d in zip(ts, dims))
    out = []
    for t, d in zip(ts, dims):
        if d is None:
            out.append(t)
            continue
        t = t.movedim(d, 0)
        out.append(t.reshape((size,) + (1,) * (nd - t.dim() + 1) + tuple(t.shape[1:])))
    return out


def _vmap_elementwise(name, ntensors):
    """A vmap rule for an elementwise op whose first ntensors arguments are tensors: one call on
    the batched tensors (torch's fallback would loop over the batch)."""
    def rule(info, in_dims, *args):
        ts = _batched_front(args[:ntensors], in_dims[:ntensors], info.batch_size)
        return getattr(torch.ops.hologram, name)(*ts, *args[ntensors:]), 0

    torch.library.register_vmap(f"hologram::{name}", rule, lib=LIB)


def _hg_args(fn, ex_id, *ts):
    dev = B.same_device(fn, *ts)
    ex = B.executor_of(ex_id, dev, fn)
    return ex, dev, [None if t is None else B.to_hg(t, ex) for t in ts]


def _cast(h, dtype):
    name = B.DTYPES[dtype]
    return h if h.dtype_name == name else hg.cast(h, name)


# ---- elementwise, binary: torch's type promotion and broadcasting ----------------------------
def _binary(name, hg_fn):
    code = hg._C.binary_ops[_C_NAMES.get(name, name)]

    def rtype(a, b):
        rdt = torch.result_type(a, b)
        if name == "div" and not rdt.is_floating_point:
            rdt = torch.get_default_dtype()   # true division, as torch.div
        return rdt

    def fake(a, b, ex=0):
        return a.new_empty(B.broadcast_shape(f"hologram_torch.{name}", a.shape, b.shape),
                           dtype=rtype(a, b))

    def impl(a, b, ex=0):
        fn = f"hologram_torch.{name}"
        B.check_tensor(a, "a", fn)
        B.check_tensor(b, "b", fn)
        if a.shape != b.shape:
            B.broadcast_shape(fn, a.shape, b.shape)   # torch's message before anything runs
        da, db = a.dtype, b.dtype
        rdt = da if da == db and (name != "div" or da.is_floating_point) else rtype(a, b)
        dev = a.device
        e = B.executor_of(ex, dev if b.device == dev else B.same_device(fn, a, b), fn)
        if da == db and da == rdt:   # one dtype: the whole op in one C call
            return _from_dlpack(_capsule_binary(code, _to_dlpack(a), _to_dlpack(b), e))
        ha, hb = _from_capsule(_to_dlpack(a), e), _from_capsule(_to_dlpack(b), e)   # B.to_hg
        # Operands in torch's result dtype: hologram's result is then that dtype too.
        if da != rdt:
            ha = _cast(ha, rdt)
        if db != rdt:
            hb = _cast(hb, rdt)
        return _from_dlpack(hg_fn(ha, hb).__dlpack__())   # B.to_torch

    slow = _define(f"{name}(Tensor a, Tensor b, int ex=0) -> Tensor", impl, fake)
    _vmap_elementwise(name, 2)
    Tensor, strided = torch.Tensor, torch.strided
    floats_only = name == "div"   # integer division promotes: the general path
    fast_dt = frozenset(B.FLOATS if floats_only else B.DTYPES)
    is_compiling = torch.compiler.is_compiling
    dispatch_depth = torch._C._len_torch_dispatch_stack
    function_mode = torch._C._is_torch_function_mode_enabled
    functorch = torch._C._are_functorch_transforms_active
    cpu = B._cpu

    def call(a, b, ex=0):
        """The common call (plain CPU tensors of one dtype, the default executor, plain eager
        mode) in one C call: 1-element add 4.8 -> ~2.9 us. Anything else: slow (the dispatcher
        when traced or transformed, else impl)."""
        if (not ex and type(a) is Tensor and type(b) is Tensor and a.dtype is b.dtype and
                a.dtype in fast_dt and a.is_cpu and b.is_cpu and a.layout is strided and
                b.layout is strided):
            e = cpu[0]
            if (e is not None and not e.closed and not is_compiling() and not dispatch_depth()
                    and not function_mode() and not functorch()):
                # hg_binary broadcasts as torch does; shapes that do not broadcast fail here
                # and take impl, which raises torch's message (comparing the shapes up front
                # cost 0.34 us of every call)
                try:
                    return _from_dlpack(_capsule_binary(code, _to_dlpack(a), _to_dlpack(b), e))
                except hg.HologramError:
                    pass
        return slow(a, b, ex)

    call.overload = slow.overload
    call.__name__ = name
    return call


add = _binary("add", hg.add)
sub = _binary("sub", hg.subtract)
mul = _binary("mul", hg.multiply)
div = _binary("div", hg.divide)
maximum = _binary("maximum", hg.maximum)   # NaN-propagating, as torch.maximum (clamp's bounds)
minimum = _binary("minimum", hg.minimum)


# ---- elementwise, unary ----------------------------------------------------------------------
def _unary(name, hg_fn, floats_only=True):
    def fake(x, ex=0):
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    def impl(x, ex=0):
        fn = f"hologram_torch.{name}"
        B.check_tensor(x, "x", fn, floats_only=floats_only)
        e, dev, (hx,) = _hg_args(fn, ex, x)
        return B.to_torch(hg_fn(hx))

    op = _define(f"{name}(Tensor x, int ex=0) -> Tensor", impl, fake)
    _vmap_elementwise(name, 1)
    return op


relu = _unary("relu", hg.relu, floats_only=False)
neg = _unary("neg", hg.negative, floats_only=False)
abs = _unary("abs", hg.absolute, floats_only=False)   # noqa: A001 (torch's name)
exp = _unary("exp", hg.exp)
log = _unary("log", hg.log)
sqrt = _unary("sqrt", hg.sqrt)
sigmoid = _unary("sigmoid", hg.sigmoid)
tanh = _unary("tanh", hg.tanh)
silu = _unary("silu", hg.silu)
softplus = _unary("softplus", hg.softplus)


def _gelu_fake(x, approximate="none", ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _gelu_impl(x, approximate="none", ex=0):
    fn = "hologram_torch.gelu"
    B.check_tensor(x, "x", fn, floats_only=True)
    if approximate not in ("none", "tanh"):
        raise ValueError(f"{fn}: approximate must be 'none' or 'tanh', got {approximate!r}")
    e, dev, (hx,) = _hg_args(fn, ex, x)
    out, out_h = B.empty_pair(x.shape, x.dtype, e)
    if out.numel():
        hg.gelu(hx, approximate=approximate, out=out_h)
    return out


gelu = _define("gelu(Tensor x, str approximate='none', int ex=0) -> Tensor", _gelu_impl,
               _gelu_fake)
_vmap_elementwise("gelu", 1)


# ---- rows: softmax, log_softmax, layer_norm, rms_norm ----------------------------------------
def _dim(fn, dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{fn}: dim {dim} is out of range for a tensor of {ndim} dims "
                         f"(valid: {-n}..{n - 1})")
    return dim % n


def _softmax_op(name, hg_fn):
    def fake(x, dim, ex=0):
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    def impl(x, dim, ex=0):
        fn = f"hologram_torch.{name}"
        B.check_tensor(x, "x", fn, floats_only=True)
        d = _dim(fn, dim, x.dim())
        e, dev, (hx,) = _hg_args(fn, ex, x)
        out, out_h = B.empty_pair(x.shape, x.dtype, e)
        if out.numel():
            hg_fn(hx, axis=d, out=out_h)
        return out

    op = _define(f"{name}(Tensor x, int dim, int ex=0) -> Tensor", impl, fake)

    def vmap_rule(info, in_dims, x, dim, ex=0):
        """The batch dim first, the softmax dim moved past it: one call for the batch."""
        if in_dims[0] is None:
            return getattr(torch.ops.hologram, name)(x, dim, ex), None
        x = x.movedim(in_dims[0], 0)
        op = getattr(torch.ops.hologram, name)
        if x.dim() == 1:   # 0-d elements: along an added dim of size 1
            _dim(f"hologram_torch.{name}", dim, 0)
            return op(x.unsqueeze(1), 1, ex).squeeze(1), 0
        return op(x, dim % (x.dim() - 1) + 1, ex), 0

    torch.library.register_vmap(f"hologram::{name}", vmap_rule, lib=LIB)
    return op


softmax = _softmax_op("softmax", hg.softmax)
log_softmax = _softmax_op("log_softmax", hg.log_softmax)


def _norm_check(fn, x, shape, w, b):
    B.check_tensor(x, "input", fn, floats_only=True)
    shape = tuple(int(s) for s in shape)
    if not shape or tuple(x.shape[x.dim() - len(shape):]) != shape or len(shape) > x.dim():
        raise ValueError(f"{fn}: normalized_shape {list(shape)} does not match the last dims of "
                         f"the input of shape {list(x.shape)}")
    for t, what in ((w, "weight"), (b, "bias")):
        if t is not None:
            B.check_tensor(t, what, fn, floats_only=True)
            if tuple(t.shape) != shape:
                raise ValueError(f"{fn}: {what} has shape {list(t.shape)}; expected "
                                 f"normalized_shape {list(shape)}")
    return shape


def _layer_norm_fake(x, normalized_shape, weight=None, bias=None, eps=1e-5, ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _layer_norm_impl(x, normalized_shape, weight=None, bias=None, eps=1e-5, ex=0):
    fn = "hologram_torch.layer_norm"
    shape = _norm_check(fn, x, normalized_shape, weight, bias)
    e, dev, (hx, hw, hb) = _hg_args(fn, ex, x, weight, bias)
    out, out_h = B.empty_pair(x.shape, x.dtype, e)
    if out.numel():
        hg.layer_norm(hx, shape, hw, hb, eps=eps, out=out_h)
    return out


layer_norm = _define("layer_norm(Tensor x, int[] normalized_shape, Tensor? weight=None, "
                     "Tensor? bias=None, float eps=1e-05, int ex=0) -> Tensor",
                     _layer_norm_impl, _layer_norm_fake)


def _vmap_norm(name):
    """layer_norm / rms_norm normalize the last dims: with the batch dim first they stay last,
    one call for the batch. A batched weight or bias (one per batch element) runs per element."""
    def rule(info, in_dims, x, normalized_shape, *rest):
        op = getattr(torch.ops.hologram, name)
        if all(not isinstance(d, int) for d in in_dims[2:]):
            x = x if in_dims[0] is None else x.movedim(in_dims[0], 0)
            return op(x, normalized_shape, *rest), (None if in_dims[0] is None else 0)
        args = (x, normalized_shape) + tuple(rest)
        outs = []
        for i in range(info.batch_size):
            outs.append(op(*(a.select(d, i) if isinstance(d, int) else a
                             for a, d in zip(args, in_dims))))
        return torch.stack(outs), 0

    torch.library.register_vmap(f"hologram::{name}", rule, lib=LIB)


_vmap_norm("layer_norm")


def _rms_norm_fake(x, normalized_shape, weight=None, eps=None, ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _rms_norm_impl(x, normalized_shape, weight=None, eps=None, ex=0):
    fn = "hologram_torch.rms_norm"
    shape = _norm_check(fn, x, normalized_shape, weight, None)
    if eps is None:
        eps = torch.finfo(x.dtype).eps   # torch's default
    e, dev, (hx, hw) = _hg_args(fn, ex, x, weight)
    out, out_h = B.empty_pair(x.shape, x.dtype, e)
    if out.numel():
        hg.rms_norm(hx, shape, hw, eps=eps, out=out_h)
    return out


rms_norm = _define("rms_norm(Tensor x, int[] normalized_shape, Tensor? weight=None, "
                   "float? eps=None, int ex=0) -> Tensor", _rms_norm_impl, _rms_norm_fake)
_vmap_norm("rms_norm")


# ---- matmul, linear -------------------------------------------------------------------------
def _mm_check(fn, a, b):
    B.check_tensor(a, "input", fn, floats_only=True)
    B.check_tensor(b, "other", fn, floats_only=True)
    if a.dim() == 0 or b.dim() == 0:
        raise ValueError(f"{fn}: both arguments need at least 1 dim, got {a.dim()} and "
                         f"{b.dim()}")
    if a.dtype != b.dtype:
        raise TypeError(f"{fn}: expected both arguments to have the same dtype, got {a.dtype} "
                        f"and {b.dtype}")


def _matmul_shape(fn, a, b):
    """torch.matmul's result shape (1-D operands get a dim added and removed again)."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    ma = (1,) + sa if len(sa) == 1 else sa
    mb = sb + (1,) if len(sb) == 1 else sb
    if ma[-1] != mb[-2]:
        raise ValueError(f"{fn}: shapes {list(sa)} and {list(sb)} cannot be multiplied "
                         f"({ma[-1]} != {mb[-2]})")
    shape = tuple(torch.broadcast_shapes(ma[:-2], mb[:-2])) + (ma[-2], mb[-1])
    if len(sb) == 1:
        shape = shape[:-1]
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:] if len(sb) > 1 else shape[:-1]
    return shape


def _matmul_fake(a, b, ex=0):
    return a.new_empty(_matmul_shape("hologram_torch.matmul", a, b))


def _matmul_impl(a, b, ex=0):
    fn = "hologram_torch.matmul"
    _mm_check(fn, a, b)
    e, dev, (ha, hb) = _hg_args(fn, ex, a, b)
    out, out_h = B.empty_pair(_matmul_shape(fn, a, b), a.dtype, e)
    if out.numel():
        hg.matmul(ha, hb, out=out_h)
    return out


matmul = _define("matmul(Tensor a, Tensor b, int ex=0) -> Tensor", _matmul_impl, _matmul_fake)


def _vmap_matmul_operands(a, da, b, db):
    """matmul's operands for one batched call: each batched operand with its batch dim first,
    1-D operands as matrices (a: a row, b: a column) and the batched ones' own batch dims padded
    with 1s up to the larger count, so the vmap dim lines up with the vmap dim and the others
    broadcast as in the unbatched call. Returns (a, b, drop_row, drop_col)."""
    def prep(t, d, is_a):
        t = t if d is None else t.movedim(d, 0)
        one_d = t.dim() - (d is not None) == 1
        if one_d:
            t = t.unsqueeze(-2 if is_a else -1)
        return t, one_d

    (a, a1), (b, b1) = prep(a, da, True), prep(b, db, False)
    ra, rb = a.dim() - 2 - (da is not None), b.dim() - 2 - (db is not None)
    r = max(ra, rb)
    if da is not None and ra < r:
        a = a.reshape((a.shape[0],) + (1,) * (r - ra) + tuple(a.shape[1:]))
    if db is not None and rb < r:
        b = b.reshape((b.shape[0],) + (1,) * (r - rb) + tuple(b.shape[1:]))
    return a, b, a1, b1


def _vmap_matmul(info, in_dims, a, b, ex=0):
    a, b, a1, b1 = _vmap_matmul_operands(a, in_dims[0], b, in_dims[1])
    out = torch.ops.hologram.matmul(a, b, ex)
    if b1:
        out = out.squeeze(-1)
    if a1:   # a's row: last once b's column is gone
        out = out.squeeze(-1 if b1 else -2)
    return out, 0


torch.library.register_vmap("hologram::matmul", _vmap_matmul, lib=LIB)


def _linear_shape(x, w):
    return tuple(x.shape[:-1]) + (w.shape[0],) if w.dim() == 2 else tuple(x.shape[:-1])


def _linear_fake(x, weight, bias=None, ex=0):
    return x.new_empty(_linear_shape(x, weight))


def _linear_impl(x, weight, bias=None, ex=0):
    fn = "hologram_torch.linear"
    _mm_check(fn, x, weight)
    if weight.dim() not in (1, 2) or x.shape[-1] != weight.shape[-1]:
        raise ValueError(f"{fn}: input of shape {list(x.shape)} and weight of shape "
                         f"{list(weight.shape)} do not match (weight: (out_features, "
                         f"{x.shape[-1]}))")
    if bias is not None:
        B.check_tensor(bias, "bias", fn, floats_only=True)
    e, dev, (hx, hw, hb) = _hg_args(fn, ex, x, weight, bias)
    out, out_h = B.empty_pair(_linear_shape(x, weight), x.dtype, e)
    if out.numel():
        ho = out_h
        hg.matmul(hx, hw.T if weight.dim() == 2 else hw, out=ho)   # the transposed view
        if hb is not None:
            hg.add(ho, _cast(hb, x.dtype), out=ho)
    return out


linear = _define("linear(Tensor x, Tensor weight, Tensor? bias=None, int ex=0) -> Tensor",
                 _linear_impl, _linear_fake)


def _vmap_linear(info, in_dims, x, weight, bias=None, ex=0):
    """Batched input only (per-sample gradients, batched data): one call with the batch dim
    first, linear's leading dims take it. A batched weight or bias: the batched matmul of x and
    weight^T, plus the bias with the batch dim first."""
    dx, dw = in_dims[0], in_dims[1]
    dbias = in_dims[2] if len(in_dims) > 2 else None   # bias left at its default: no entry
    if dw is None and dbias is None:
        return torch.ops.hologram.linear(x.movedim(dx, 0), weight, bias, ex), 0
    wt = weight.movedim(dw, 0) if dw is not None else weight
    wt = wt.transpose(-1, -2) if wt.dim() - (dw is not None) == 2 else wt
    out, _ = _vmap_matmul(info, (dx, 0 if dw is not None else None), x, wt, ex)
    if bias is not None:
        bb = bias.movedim(dbias, 0) if dbias is not None else bias
        if dbias is not None:   # (B, n) against out (B, ..., n): 1s for out's middle dims
            bb = bb.reshape((bb.shape[0],) + (1,) * (out.dim() - bb.dim()) + tuple(bb.shape[1:]))
        out = torch.ops.hologram.add(out, bb.to(out.dtype), ex)
    return out, 0


torch.library.register_vmap("hologram::linear", _vmap_linear, lib=LIB)


# ---- reductions ------------------------------------------------------------------------------
def _red_shape(x, dims, keepdim):
    if dims is None or len(dims) == 0:
        dims = list(range(x.dim()))
    dims = {d % max(x.dim(), 1) for d in dims}
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(x.shape))
    return tuple(s for i, s in enumerate(x.shape) if i not in dims)


def _reduction(name, hg_fn):
    def fake(x, dim=None, keepdim=False, ex=0):
        return x.new_empty(_red_shape(x, dim, keepdim))

    def impl(x, dim=None, keepdim=False, ex=0):
        fn = f"hologram_torch.{name}"
        B.check_tensor(x, "x", fn, floats_only=name == "mean")
        dims = None if dim is None or len(dim) == 0 else tuple(_dim(fn, d, x.dim()) for d in dim)
        e, dev, (hx,) = _hg_args(fn, ex, x)
        rdt = x.dtype if x.dtype.is_floating_point else torch.int64
        out, out_h = B.empty_pair(_red_shape(x, dim, keepdim), rdt, e)
        hg_fn(hx, axis=dims, keepdims=keepdim, out=out_h)
        return out

    op = _define(f"{name}(Tensor x, int[]? dim=None, bool keepdim=False, int ex=0) -> Tensor",
                 impl, fake)

    def vmap_rule(info, in_dims, x, dim=None, keepdim=False, ex=0):
        """The logical dims shifted past the batch dim (first); a 0-d logical tensor reduces
        over an added dim of size 1 (the value itself, in the result dtype)."""
        x = x.movedim(in_dims[0], 0)
        nd = x.dim() - 1
        if nd == 0:
            return getattr(torch.ops.hologram, name)(x.unsqueeze(-1), [1], False, ex), 0
        dims = range(nd) if dim is None or len(dim) == 0 else [_dim(f"hologram_torch.{name}", d,
                                                                      nd) for d in dim]
        return getattr(torch.ops.hologram, name)(x, [d + 1 for d in dims], keepdim, ex), 0

    torch.library.register_vmap(f"hologram::{name}", vmap_rule, lib=LIB)
    return op


sum = _reduction("sum", hg.sum)   # noqa: A001 (torch's name)
mean = _reduction("mean", hg.mean)


# ---- losses ----------------------------------------------------------------------------------
REDUCTIONS = ("none", "mean", "sum")


def _mse_fake(a, b, reduction="mean", ex=0):
    shape = torch.broadcast_shapes(a.shape, b.shape)
    return a.new_empty(shape if reduction == "none" else ())


def _mse_impl(a, b, reduction="mean", ex=0):
    fn = "hologram_torch.mse_loss"
    B.check_tensor(a, "input", fn, floats_only=True)
    B.check_tensor(b, "target", fn, floats_only=True)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    e, dev, (ha, hb) = _hg_args(fn, ex, a, b)
    shape = torch.broadcast_shapes(a.shape, b.shape)
    out, out_h = B.empty_pair(shape if reduction == "none" else (), a.dtype, e)
    hg.ops.mse_loss(ha, _cast(hb, a.dtype), reduction=reduction, out=out_h)
    return out


mse_loss = _define("mse_loss(Tensor input, Tensor target, str reduction='mean', int ex=0) -> "
                   "Tensor", _mse_impl, _mse_fake)


def _mse_vmap(info, in_dims, a, b, reduction="mean", ex=0):
    """The elementwise loss on the batched operands, then each element's sum or mean over its
    own (broadcast) elements."""
    a, b = _batched_front((a, b), in_dims[:2], info.batch_size)
    per = torch.ops.hologram.mse_loss(a, b, "none", ex)
    if reduction == "none" or per.dim() == 1:   # 0-d elements: their own value
        return per, 0
    op = torch.ops.hologram.sum if reduction == "sum" else torch.ops.hologram.mean
    return op(per, list(range(1, per.dim())), False, ex), 0


torch.library.register_vmap("hologram::mse_loss", _mse_vmap, lib=LIB)


def _ce_shape(logits, reduction):
    if reduction != "none":
        return ()
    return (logits.shape[0],) + tuple(logits.shape[2:]) if logits.dim() >= 2 else ()


def _ce_fake(logits, target, ignore_index=-100, reduction="mean", ex=0):
    return logits.new_empty(_ce_shape(logits, reduction))


def _ce_impl(logits, target, ignore_index=-100, reduction="mean", ex=0):
    fn = "hologram_torch.cross_entropy"
    B.check_tensor(logits, "input", fn, floats_only=True)
    B.check_tensor(target, "target", fn)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    e, dev, (hl, ht) = _hg_args(fn, ex, logits, target)
    out, out_h = B.empty_pair(_ce_shape(logits, reduction), logits.dtype, e)
    hg.ops.cross_entropy(hl, ht, ignore_index=ignore_index, reduction=reduction,
                         out=out_h)
    return out


cross_entropy = _define("cross_entropy(Tensor input, Tensor target, int ignore_index=-100, "
                        "str reduction='mean', int ex=0) -> Tensor", _ce_impl, _ce_fake)


def _bce_fake(p, t, weight=None, reduction="mean", ex=0):
    return p.new_empty(p.shape if reduction == "none" else ())


def _check_elementwise_loss(fn, x, t, reduction):
    """A loss of one value per input element: float input and target of one shape."""
    B.check_tensor(x, "input", fn, floats_only=True)
    B.check_tensor(t, "target", fn, floats_only=True)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if t.shape != x.shape:
        raise ValueError(f"{fn}: target of shape {list(t.shape)} must have the input's shape "
                         f"{list(x.shape)}")


def _bce_impl(p, t, weight=None, reduction="mean", ex=0):
    fn = "hologram_torch.binary_cross_entropy"
    _check_elementwise_loss(fn, p, t, reduction)
    e, dev, (hp, ht, hw) = _hg_args(fn, ex, p, t, weight)
    out, out_h = B.empty_pair(p.shape if reduction == "none" else (), p.dtype, e)
    hg.ops.binary_cross_entropy(hp, _cast(ht, p.dtype), None if hw is None else _cast(hw, p.dtype),
                                reduction=reduction, out=out_h)
    return out


binary_cross_entropy = _define(
    "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, "
    "str reduction='mean', int ex=0) -> Tensor", _bce_impl, _bce_fake)


def _vmap_elementwise_loss(name, ntensors):
    """vmap of a loss of one value per element (binary cross-entropy, with logits): the loss
    unreduced on the batched operands (the optional weights broadcast as in the unbatched
    call), then each element's sum or mean."""
    def rule(info, in_dims, *args):
        # the arguments as called (trailing defaults may be left out): tensors, reduction, ex
        args = tuple(args) + (None,) * (ntensors - min(len(args), ntensors))
        in_dims = tuple(in_dims) + (None,) * (ntensors - min(len(in_dims), ntensors))
        ts, dims = args[:ntensors], in_dims[:ntensors]
        reduction = args[ntensors] if len(args) > ntensors else "mean"
        ex = args[ntensors + 1] if len(args) > ntensors + 1 else 0
        size = info.batch_size
        # input and target share a shape (both with the batch first); a weight broadcasts:
        # unbatched as in the unbatched call, batched with 1s up to the input's rank
        full = [_vmap_front(ts[0], dims[0], size), _vmap_front(ts[1], dims[1], size)]
        nd = full[0].dim() - 1
        for t, d in zip(ts[2:], dims[2:]):
            if t is not None and d is not None:
                t = t.movedim(d, 0)
                t = t.reshape((size,) + (1,) * (nd - t.dim() + 1) + tuple(t.shape[1:]))
            full.append(t)
        per = getattr(torch.ops.hologram, name)(*full, "none", ex)
        if reduction == "none" or per.dim() == 1:
            return per, 0
        op = torch.ops.hologram.sum if reduction == "sum" else torch.ops.hologram.mean
        return op(per, list(range(1, per.dim())), False, ex), 0

    torch.library.register_vmap(f"hologram::{name}", rule, lib=LIB)


_vmap_elementwise_loss("binary_cross_entropy", 3)


def nll_check(fn, x, target, weight):
    """The class dim of torch's nll_loss / cross_entropy layouts: input (N, C, d1, ...) with
    target (N, d1, ...), or input (C,) with a 0-d target."""
    B.check_tensor(x, "input", fn, floats_only=True)
    B.check_tensor(target, "target", fn)
    if target.dtype.is_floating_point or target.dtype == torch.bool:
        raise TypeError(f"{fn}: target must hold class indices (an integer dtype), got "
                        f"{target.dtype}")
    if x.dim() == 0:
        raise ValueError(f"{fn}: input must have 1 or more dims (C,) or (N, C, ...), got 0-d")
    cdim = 1 if x.dim() >= 2 else 0
    want = (x.shape[0],) + tuple(x.shape[2:]) if cdim else ()
    if tuple(target.shape) != want:
        raise ValueError(f"{fn}: target of shape {list(target.shape)} does not match input of "
                         f"shape {list(x.shape)} (expected {list(want)})")
    if weight is not None:
        B.check_tensor(weight, "weight", fn, floats_only=True)
        if tuple(weight.shape) != (x.shape[cdim],):
            raise ValueError(f"{fn}: weight must have one entry per class ({x.shape[cdim]}), "
                             f"got shape {list(weight.shape)}")
    return cdim


def nll_picked(hx, ht, hw, cdim, ignore_index, dt):
    """(-x[target] * w[target] per sample with 0 where ignored, w[target] per sample with 0
    where ignored) as hologram tensors of target's shape, in dt."""
    if not cdim:   # (C,) with a 0-d target: as (1, C) with (1,)
        hx, ht = hx.reshape((1,) + tuple(hx.shape)), ht.reshape((1,))
    keep = hg.not_equal(ht, ignore_index)
    safe = hg.where(keep, ht, 0)                  # ignored entries pick class 0, then drop
    picked = hg.take_along_axis(hx, safe.expand_dims(1), axis=1).squeeze(1)
    wt = hg.cast(keep, B.DTYPES[dt])
    if hw is not None:
        wt = hg.multiply(wt, hg.take(_cast(hw, dt), safe.reshape(-1)).reshape(tuple(safe.shape)))
    loss = hg.negative(hg.multiply(_cast(picked, dt), wt))
    if not cdim:
        loss, wt = loss.reshape(()), wt.reshape(())
    return loss, wt


def _nll_fake(x, target, weight=None, ignore_index=-100, reduction="mean", ex=0):
    return x.new_empty(_ce_shape(x, reduction))


def _nll_impl(x, target, weight=None, ignore_index=-100, reduction="mean", ex=0):
    fn = "hologram_torch.nll_loss"
    if reduction not in REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    cdim = nll_check(fn, x, target, weight)
    e, dev, (hx, ht, hw) = _hg_args(fn, ex, x, target, weight)
    loss, wt = nll_picked(hx, ht, hw, cdim, ignore_index, x.dtype)
    if reduction == "sum":
        loss = hg.sum(loss)
    elif reduction == "mean":           # torch: the sum over the summed weights (NaN when 0)
        loss = hg.divide(hg.sum(loss), hg.sum(wt))
    out, out_h = B.empty_pair(_ce_shape(x, reduction), x.dtype, e)
    hg.ops.copy(_cast(loss, x.dtype), out=out_h)
    return out


nll_loss = _define("nll_loss(Tensor input, Tensor target, Tensor? weight=None, "
                   "int ignore_index=-100, str reduction='mean', int ex=0) -> Tensor",
                   _nll_impl, _nll_fake)


def _nll_vmap(info, in_dims, x, target, weight=None, ignore_index=-100, reduction="mean",
              ex=0):
    """The batch folded into the samples, the loss unreduced, then each element's sum or its
    mean over the summed weights of its counted targets (NaN when 0, as torch). A batched
    weight: per element."""
    if len(in_dims) > 2 and in_dims[2] is not None:
        return _vmap_loop(torch.ops.hologram.nll_loss, info, in_dims,
                          (x, target, weight, ignore_index, reduction, ex))
    size = info.batch_size
    xb, tb = _vmap_front(x, in_dims[0], size), _vmap_front(target, in_dims[1], size)
    samples = () if xb.dim() == 2 else (xb.shape[1],) + tuple(xb.shape[3:])
    xf = xb if not samples else xb.reshape((-1,) + tuple(xb.shape[2:]))
    tf = tb if not samples else tb.reshape((-1,) + tuple(tb.shape[2:]))
    per = torch.ops.hologram.nll_loss(xf, tf, weight, ignore_index, "none", ex).reshape(
        (size,) + samples)
    if reduction == "none":
        return per, 0
    total = torch.ops.hologram.sum(per, list(range(1, per.dim())), False, ex) if samples else per
    if reduction == "sum":
        return total, 0
    kept = tb != ignore_index
    w = (weight.to(per.dtype)[tb.clamp(min=0)] if weight is not None else
         torch.ones_like(tb, dtype=per.dtype))
    den = (w * kept).reshape(size, -1).sum(1)
    return torch.ops.hologram.div(total, den, ex), 0


torch.library.register_vmap("hologram::nll_loss", _nll_vmap, lib=LIB)


def dropout_mask_scale(hx, p, seed, e):
    """The kept elements (uniform(seed) >= p, Philox: the same numbers on every call with this
    seed, so the backward regenerates the forward's mask) and the scale 1 / (1 - p)."""
    u = hg.empty(tuple(hx.shape), "f32", executor=e)
    if u.size:
        hg._C.random(u, False, seed, 0, 0.0, 1.0)
    return hg.greater_equal(u, p), 1.0 / (1.0 - p)


def _dropout_fake(x, p, seed, ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _dropout_impl(x, p, seed, ex=0):
    fn = "hologram_torch.dropout"
    B.check_tensor(x, "input", fn, floats_only=True)
    e, dev, (hx,) = _hg_args(fn, ex, x)
    keep, scale = dropout_mask_scale(hx, p, seed, e)
    return B.to_torch(hg.where(keep, hg.multiply(hx, scale), 0))


dropout = _define("dropout(Tensor input, float p, int seed, int ex=0) -> Tensor", _dropout_impl,
                  _dropout_fake)


# ---- indexing: index_select / gather and their backward (index_add / scatter_add) --------------
def _check_index(fn, index, what="index"):
    B.check_tensor(index, what, fn)
    if index.dtype.is_floating_point or index.dtype == torch.bool:
        raise TypeError(f"{fn}: {what} must have an integer dtype (int64 or int32), got "
                        f"{index.dtype}")


def _index_select_fake(x, dim, index, ex=0):
    shape = list(x.shape)
    if shape:
        shape[dim % len(shape)] = index.numel()
    return x.new_empty(shape)


def _index_select_impl(x, dim, index, ex=0):
    fn = "hologram_torch.index_select"
    B.check_tensor(x, "input", fn)
    _check_index(fn, index)
    if index.dim() > 1:
        raise ValueError(f"{fn}: index must be 0-d or 1-D, got {index.dim()}-D")
    if x.dim() == 0 and index.numel() != 1:
        raise ValueError(f"{fn}: an index into a 0-d input can have only 1 value, got "
                         f"{index.numel()}")
    d = _dim(fn, dim, x.dim())
    e, dev, (hx, hi) = _hg_args(fn, ex, x, index.reshape(-1))
    if x.dim() == 0:
        hx = hx.reshape((1,))
    return B.to_torch(hg.index_select(hx, d, hi)).reshape(_index_select_fake(x, dim, index).shape)


index_select = _define("index_select(Tensor input, int dim, Tensor index, int ex=0) -> Tensor",
                       _index_select_impl, _index_select_fake)


def _gather_fake(x, dim, index, ex=0):
    return x.new_empty(index.shape)


def _gather_impl(x, dim, index, ex=0):
    fn = "hologram_torch.gather"
    B.check_tensor(x, "input", fn)
    _check_index(fn, index)
    d = _dim(fn, dim, x.dim())
    e, dev, (hx, hi) = _hg_args(fn, ex, x, index)
    return B.to_torch(hg.gather(hx, d, hi))


gather = _define("gather(Tensor input, int dim, Tensor index, int ex=0) -> Tensor", _gather_impl,
                 _gather_fake)


def _add_back_fake(g, dim, index, shape, scatter, ex=0):
    return g.new_empty(shape)


def _add_back_impl(g, dim, index, shape, scatter, ex=0):
    """Zeros of `shape` with g added at index along dim: index_add (scatter=False, index 1-D:
    the backward of index_select / embedding) or scatter_add (the backward of gather)."""
    fn = "hologram_torch.index_add_zeros"
    out = torch.zeros(shape, dtype=g.dtype, device=g.device)
    if not g.numel():
        return out
    e, dev, (hg_g, hi, ho) = _hg_args(fn, ex, g, index.reshape(-1) if not scatter else index, out)
    (hg.scatter_add if scatter else hg.index_add)(ho, dim, hi, hg_g)
    return out


index_add_zeros = _define("index_add_zeros(Tensor g, int dim, Tensor index, SymInt[] shape, "
                          "bool scatter, int ex=0) -> Tensor", _add_back_impl, _add_back_fake)


def _vmap_front(t, d, size):
    """t with the vmap dim first; an unbatched t expanded to the batch (a view)."""
    return t.movedim(d, 0) if d is not None else t.expand((size,) + tuple(t.shape))


def _vmap_loop(op, info, in_dims, args):
    """The per-element calls stacked (the cases a rule does not batch)."""
    outs = [op(*(a.select(d, i) if isinstance(d, int) else a for a, d in zip(args, in_dims)))
            for i in range(info.batch_size)]
    return torch.stack(outs), 0


def _index_select_vmap(info, in_dims, x, dim, index, ex=0):
    """A batched input: one call along the shifted dim. A batched index (embedding lookups of
    batched ids): one call with the elements' indices flattened, the batch then split out of
    the selected dim."""
    dx, di = in_dims[0], in_dims[2]
    nd = x.dim() - (dx is not None)
    if nd == 0 or (dx is not None and di is not None):
        return _vmap_loop(torch.ops.hologram.index_select, info, in_dims, (x, dim, index, ex))
    d = _dim("hologram_torch.index_select", dim, nd)
    if di is None:
        return torch.ops.hologram.index_select(x.movedim(dx, 0), d + 1, index, ex), 0
    idx = index.movedim(di, 0).reshape(info.batch_size, -1)
    out = torch.ops.hologram.index_select(x, d, idx.reshape(-1), ex)
    out = out.reshape(tuple(x.shape[:d]) + tuple(idx.shape) + tuple(x.shape[d + 1:]))
    return out.movedim(d, 0), 0


torch.library.register_vmap("hologram::index_select", _index_select_vmap, lib=LIB)


def _gather_vmap(info, in_dims, x, dim, index, ex=0):
    nd = x.dim() - (in_dims[0] is not None)
    if nd == 0:
        return _vmap_loop(torch.ops.hologram.gather, info, in_dims, (x, dim, index, ex))
    d = _dim("hologram_torch.gather", dim, nd)
    size = info.batch_size
    return torch.ops.hologram.gather(_vmap_front(x, in_dims[0], size), d + 1,
                                     _vmap_front(index, in_dims[2], size), ex), 0


torch.library.register_vmap("hologram::gather", _gather_vmap, lib=LIB)


def _add_back_vmap(info, in_dims, g, dim, index, shape, scatter, ex=0):
    """The gradients of index_select / embedding (index_add) and gather (scatter_add) per
    element: one call, a batched 1-D index offset by each element's slab of the added dim."""
    size, shape = info.batch_size, tuple(shape)
    if not shape:
        return _vmap_loop(torch.ops.hologram.index_add_zeros, info, in_dims,
                          (g, dim, index, list(shape), scatter, ex))
    d = _dim("hologram_torch.index_add_zeros", dim, len(shape))
    gb = _vmap_front(g, in_dims[0], size)
    if scatter or in_dims[2] is None:
        idx = _vmap_front(index, in_dims[2], size) if scatter else index
        return torch.ops.hologram.index_add_zeros(gb, d + 1, idx, [size] + list(shape), scatter,
                                                  ex), 0
    idx = index.movedim(in_dims[2], 0).reshape(size, -1)
    idx = (idx + torch.arange(size, device=idx.device).unsqueeze(1) * shape[d]).reshape(-1)
    gm = gb.movedim(0, d)   # (..., B, n, ...): the batch next to the added dim, then merged
    gm = gm.reshape(tuple(gm.shape[:d]) + (-1,) + tuple(gm.shape[d + 2:]))
    big = list(shape[:d]) + [size * shape[d]] + list(shape[d + 1:])
    out = torch.ops.hologram.index_add_zeros(gm, d, idx, big, False, ex)
    out = out.reshape(shape[:d] + (size, shape[d]) + shape[d + 1:])
    return out.movedim(d, 0), 0


torch.library.register_vmap("hologram::index_add_zeros", _add_back_vmap, lib=LIB)


# ---- data: cat, stack, where, clamp ----------------------------------------------------------
def _cat_like(name, hg_fn, torch_fn):
    def fake(tensors, dim=0, ex=0):
        return torch_fn(list(tensors), dim)

    def impl(tensors, dim=0, ex=0):
        fn = f"hologram_torch.{name}"
        if not tensors:
            raise ValueError(f"{fn}: expected a non-empty list of tensors")
        for i, t in enumerate(tensors):
            B.check_tensor(t, f"tensors[{i}]", fn)
        rdt = tensors[0].dtype
        for t in tensors[1:]:
            rdt = torch.promote_types(rdt, t.dtype)
        e, dev, hs = _hg_args(fn, ex, *tensors)
        nd = tensors[0].dim() + (1 if name == "stack" else 0)
        d = _dim(fn, dim, nd)
        return B.to_torch(hg_fn([_cast(h, rdt) for h in hs], axis=d))

    op = _define(f"{name}(Tensor[] tensors, int dim=0, int ex=0) -> Tensor", impl, fake)

    def vmap_rule(info, in_dims, tensors, dim=0, ex=0):
        """Every tensor with the batch first (the unbatched ones expanded, views), the dim
        shifted past it: one call."""
        dims = in_dims[0]
        ts = [_vmap_front(t, d, info.batch_size) for t, d in zip(tensors, dims)]
        nd = ts[0].dim() - 1 + (name == "stack")   # stack adds a dim
        d = _dim(f"hologram_torch.{name}", dim, nd) if nd else 0
        return getattr(torch.ops.hologram, name)(ts, d + 1, ex), 0

    torch.library.register_vmap(f"hologram::{name}", vmap_rule, lib=LIB)
    return op


cat = _cat_like("cat", hg.concatenate, torch.cat)
stack = _cat_like("stack", hg.stack, torch.stack)


def _where_fake(cond, a, b, ex=0):
    shape = torch.broadcast_shapes(cond.shape, a.shape, b.shape)
    return a.new_empty(shape, dtype=torch.result_type(a, b))


def _where_impl(cond, a, b, ex=0):
    fn = "hologram_torch.where"
    if cond.dtype != torch.bool:
        raise TypeError(f"{fn}: condition must be a bool tensor, got {cond.dtype}")
    B.check_tensor(a, "input", fn)
    B.check_tensor(b, "other", fn)
    torch.broadcast_shapes(cond.shape, a.shape, b.shape)   # torch's error first
    rdt = torch.result_type(a, b)
    e, dev, (hc, ha, hb) = _hg_args(fn, ex, cond, a, b)
    return B.to_torch(hg.where(hc, _cast(ha, rdt), _cast(hb, rdt)))


where = _define("where(Tensor condition, Tensor input, Tensor other, int ex=0) -> Tensor",
                _where_impl, _where_fake)
_vmap_elementwise("where", 3)


def _clamp_fake(x, min=None, max=None, ex=0):   # noqa: A002 (torch's names)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _clamp_impl(x, min=None, max=None, ex=0):   # noqa: A002
    fn = "hologram_torch.clamp"
    B.check_tensor(x, "input", fn)
    if min is None and max is None:
        raise ValueError(f"{fn}: at least one of min and max must be given")
    e, dev, (hx,) = _hg_args(fn, ex, x)
    return B.to_torch(hg.clip(hx, min, max))


clamp = _define("clamp(Tensor x, float? min=None, float? max=None, int ex=0) -> Tensor",
                _clamp_impl, _clamp_fake)
_vmap_elementwise("clamp", 1)


def _bcel_fake(x, t, weight=None, pos_weight=None, reduction="mean", ex=0):
    return x.new_empty(x.shape if reduction == "none" else ())


def _bcel_impl(x, t, weight=None, pos_weight=None, reduction="mean", ex=0):
    fn = "hologram_torch.binary_cross_entropy_with_logits"
    _check_elementwise_loss(fn, x, t, reduction)
    e, dev, (hx, ht, hw, hp) = _hg_args(fn, ex, x, t, weight, pos_weight)
    dt = x.dtype
    return B.to_torch(hg.ops.binary_cross_entropy_with_logits(
        hx, _cast(ht, dt), None if hw is None else _cast(hw, dt),
        None if hp is None else _cast(hp, dt), reduction=reduction))


binary_cross_entropy_with_logits = _define(
    "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, str reduction='mean', int ex=0) -> Tensor", _bcel_impl, _bcel_fake)
_vmap_elementwise_loss("binary_cross_entropy_with_logits", 4)
