"""The one place that maps torch ops to hologram ops: each op is defined once in torch's
dispatcher (namespace ``hologram``, ``torch.library`` define + impl for CPU and CUDA tensors)
with a fake (meta) implementation, so that ``torch.compile``, ``torch.library.opcheck`` and
FakeTensor tracing see it. The implementations run hologram on views of the torch tensors and
write into a result torch allocated. Gradients: _differentiable.py and _aten/grad.py; the
losses and dropout: _ops_loss.py; the indexing and data ops: _ops_data.py (re-exported at the end).

Measured on a 2-core Zen 4 VM, torch 2.13, 1-element tensors: a define/impl op costs 1.3-1.4 us of
dispatch (torch.add 1.2 in total), a ``torch.autograd.Function`` 5.3 us more; see docs/torch.md.
"""
import torch

import hologram as hg

from . import _bridge as B
from . import _scalars as S

LIB = torch.library.Library("hologram", "DEF")
# The bridge's conversions, bound here for the binary ops' per-call path (B.to_hg / B.to_torch
# are these calls; a Python call less each costs ~0.1 us of a 1-element add).
_to_dlpack, _from_dlpack, _from_capsule = torch._C._to_dlpack, torch._C._from_dlpack, hg._C._from_capsule
_capsule_binary = hg._C._capsule_binary
_C_NAMES = {"sub": "subtract", "mul": "multiply", "div": "divide"}   # torch name -> hologram's


_tracing = torch._C._is_tracing   # torch.jit.is_tracing's (25 ns; _get_tracing_state 41)


def _eager():
    """True when a call may skip the dispatcher: nothing traces or transforms it (torch.compile,
    torch.jit.trace, torch.func, dispatch or function modes such as FakeTensorMode). The
    dispatcher's boxed call of a Python kernel cost ~3 us of an 8 us 1-element add; under any of
    these the op goes through it, so they see torch.ops.hologram.<name> (jit.trace records a
    call that skipped it as a constant: its result would be frozen into the trace)."""
    if torch.compiler.is_compiling():   # first: dynamo reads it as a constant
        return False
    return not (torch._C._len_torch_dispatch_stack() or torch._C._is_torch_function_mode_enabled()
                or torch._C._are_functorch_transforms_active() or _tracing())


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


def _vmap_front(t, d, size):
    """t with the vmap dim first; an unbatched t expanded to the batch (a view)."""
    return t.movedim(d, 0) if d is not None else t.expand((size,) + tuple(t.shape))


def _vmap_loop(op, info, in_dims, args):
    """The per-element calls stacked (the cases a rule does not batch)."""
    outs = [op(*(a.select(d, i) if isinstance(d, int) else a for a, d in zip(args, in_dims)))
            for i in range(info.batch_size)]
    return torch.stack(outs), 0


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
        if name == "sub" and torch.bool in (da, db):   # torch's refusal
            S.check_sub(a, b)
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
        return _from_dlpack(hg_fn(ha, hb).__dlpack__(stream=-1))   # B.to_torch

    slow = _define(f"{name}(Tensor a, Tensor b, int ex=0) -> Tensor", impl, fake)
    _vmap_elementwise(name, 2)
    Tensor, strided = torch.Tensor, torch.strided
    floats_only = name == "div"   # integer division promotes: the general path
    fast_dt = frozenset(B.FLOATS if floats_only else B.DTYPES)
    is_compiling = torch.compiler.is_compiling
    dispatch_depth = torch._C._len_torch_dispatch_stack
    function_mode = torch._C._is_torch_function_mode_enabled
    functorch = torch._C._are_functorch_transforms_active
    tracing = _tracing
    cpu, scoped = B._cpu, B.scoped

    def call(a, b, ex=0):
        """The common call (plain CPU tensors of one dtype, the default executor, plain eager
        mode) in one C call: 1-element add 4.8 -> ~2.9 us. Anything else: slow (the dispatcher
        when traced or transformed, else impl)."""
        if (not ex and not scoped[0] and type(a) is Tensor and type(b) is Tensor and a.dtype is b.dtype and
                a.dtype in fast_dt and a.is_cpu and b.is_cpu and a.layout is strided and
                b.layout is strided):
            e = cpu[0]
            if (e is not None and not e.closed and not is_compiling() and not dispatch_depth()
                    and not function_mode() and not functorch() and not tracing()):
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


def rms_norm_eps(dtype):
    """torch's eps=None for rms_norm: the machine epsilon of the dtype it computes in (float32
    for float16 / bfloat16 inputs, as torch's opmath type)."""
    return torch.finfo(torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype).eps


def _rms_norm_fake(x, normalized_shape, weight=None, eps=None, ex=0):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _rms_norm_impl(x, normalized_shape, weight=None, eps=None, ex=0):
    fn = "hologram_torch.rms_norm"
    shape = _norm_check(fn, x, normalized_shape, weight, None)
    if eps is None:
        eps = rms_norm_eps(x.dtype)
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
    batch = () if len(ma) == len(mb) == 2 else B.broadcast_shape(fn, ma[:-2], mb[:-2])
    shape = batch + (ma[-2], mb[-1])
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
    return _linear_into(e, hx, hw, hb, _linear_shape(x, weight), x.dtype)


def _linear_into(e, hx, hw, hbias, shape, dtype):
    """hologram.ops.linear (the one composition of linear) into a new result of shape."""
    out, ho = B.empty_pair(shape, dtype, e)
    if out.numel():
        hg.ops.linear(hx, hw, None if hbias is None else _cast(hbias, dtype), out=ho)
    return out


def matmul_bias(e, ha, hb, hbias, shape, dtype):
    """a @ b (+ bias, broadcast): ATen's addmm (_aten/matmul.py), as linear of b's transposed
    view."""
    return _linear_into(e, ha, hb.T, hbias, shape, dtype)


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
        if x.dim() == 0:   # dim 0 or -1 of a 0-d tensor (torch takes them): the value itself
            dims = None
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


# The losses and the data ops live in their own modules; they register on import and are
# re-exported here so that the autograd layer and functional reach every op as _ops.<name>.
from ._ops_loss import (binary_cross_entropy,  # noqa: E402,F401
                        binary_cross_entropy_with_logits, cross_entropy, dropout,
                        dropout_run, dropout_seed, mse_loss, nll_check, nll_loss,
                        nll_weights)
from ._ops_data import (_check_index, cat, check_index_range, clamp,  # noqa: E402,F401
                        embedding_freq_scale, embedding_grad, embedding_renorm_, gather,
                        index_add_zeros, index_select, stack, where)
