"""Gradients of hologram's eager ops from ATen's own derivative formulas, run through THE table.

Each differentiable op of ``functional`` / ``nn`` names its ATen form: a function of tensors made
of ``torch.ops.aten`` calls that computes what the hologram op computes (softmax:
``aten._softmax(x, dim, False)``). Per (op, static arguments, the tensors' shapes / strides /
dtypes / devices / requires_grad) AOTAutograd traces that form once into a forward and a backward
ATen graph (torch's derivatives: ``_softmax_backward_data``, ``native_layer_norm_backward``, two
``mm`` for ``mm``, ...); both go through the compile backend's passes and ``lower()``
(backend.lower_graph: one code path with ``torch.compile(backend="hologram")``) and are cached
(an LRU of ``CACHE_SIZE``). :class:`_Traced` is the one autograd Function: its forward runs the
lowered forward graph (outputs and the tensors the backward reads), its backward the lowered
backward graph.

Double backward (``create_graph=True``): the backward runs torch's own ATen form again and
differentiates it with torch (the saved inputs are the Function's inputs, so the second
derivative is connected): every formula is torch's, at any order.
"""
import collections
import threading

import torch
from torch.autograd import Function

from .. import _bridge as _B

aten = torch.ops.aten
CACHE_SIZE = 512   # traced (op, signature) entries kept; a trace costs ~10-60 ms

_cache = collections.OrderedDict()
_lock = threading.RLock()   # a trace inside a trace (another op's) takes it again
_traces = collections.Counter()   # op name -> traces made (tests and the docs read it)


def traces():
    """How many times each op was traced (a new signature or one evicted from the LRU)."""
    return dict(_traces)


_functorch_active = torch._C._are_functorch_transforms_active
_compiling = torch.compiler.is_compiling


class _Entry:
    __slots__ = ("fw", "bw", "n_out", "n_in", "from_inputs", "n_reused")

    def __init__(self, fw, bw, n_out, n_in, from_inputs, n_reused):
        self.fw, self.bw, self.n_out, self.n_in = fw, bw, n_out, n_in
        self.from_inputs, self.n_reused = from_inputs, n_reused   # n_reused: _reuse_outputs




def _same(t):
    return t


def _trace(name, form, tensors):
    """AOTAutograd's forward and backward graphs of form over tensors like these, lowered."""
    from functorch.compile import default_partition, make_boxed_func
    from torch._functorch.aot_autograd import aot_function

    from ..backend import decompositions, lower_graph
    got = {}

    def capture(kind):
        def compile_graph(gm, example_inputs):
            got[kind] = gm
            return make_boxed_func(gm.forward)
        return compile_graph

    present = [t for t in tensors if t is not None]
    where = [i for i, t in enumerate(tensors) if t is not None]

    def flat(*ts):   # form over the tensors given (None where absent)
        full = [None] * len(tensors)
        for i, t in zip(where, ts):
            full[i] = t
        out = form(*full)
        return out if isinstance(out, tuple) else (out,)

    traced = aot_function(flat, capture("fw"), capture("bw"), partition_fn=default_partition,
                          decompositions=decompositions(training=True))
    # example tensors: fresh leaves over the inputs' own memory (any strides, expanded ones
    # too); the form only reads them. Running it once also makes AOTAutograd compile its
    # backward, which it does lazily
    ex = [t.detach().requires_grad_(t.requires_grad) for t in present]
    # identity saved-tensor hooks: the trace's own autograd graph must not meet the caller's
    # (torch.utils.checkpoint's hooks would recompute the caller's forward inside the trace)
    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(_same, _same):
        outs = traced(*ex)
        diff = [o for o in outs if o.requires_grad]
        if diff:
            torch.autograd.backward(diff, [torch.ones_like(o) for o in diff])
    _traces[name] += 1
    n_reused = _reuse_outputs(got["fw"], got.get("bw"), len(outs))
    _fuse_ce_backward(got["fw"], got.get("bw"), len(outs))
    _drop_aliases(got["fw"], False)
    if "bw" in got:
        _drop_aliases(got["bw"], True)
    fw_outs = [n for n in got["fw"].graph.nodes if n.op == "output"][0].args[0]
    places = [n for n in got["fw"].graph.nodes if n.op == "placeholder"]
    saved = fw_outs[len(outs):len(fw_outs) - n_reused]
    # the saved tensors as input positions, when the backward reads only inputs (add, mul,
    # matmul, ...: apply_eager's condition); else None
    from_inputs = (tuple(places.index(n) for n in saved)
                   if all(n in places for n in saved) else None)
    fw = lower_graph(got["fw"])
    bw = lower_graph(got["bw"]) if "bw" in got else None
    return _Entry(fw.forward, bw.forward if bw is not None else None, len(outs), len(present),
                  from_inputs if not n_reused else None, n_reused)


def _unalias(n):
    while isinstance(n, torch.fx.Node) and n.target is aten.alias.default:
        n = n.args[0]
    return n


def _drop_aliases(gm, of_inputs):
    """aten.alias (AOTAutograd's copy of a result it also saves) replaced by the tensor: _Traced
    saves what the forward returns, and the backward graph only reads (one ~1.5 us torch call
    less each). In the forward graph an alias of an input stays (of_inputs False: a Function
    returning its input unchanged is another case for autograd)."""
    changed = False
    for node in list(gm.graph.nodes):
        if node.target is aten.alias.default and (of_inputs or node.args[0].op != "placeholder"):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
            changed = True
    if changed:
        gm.recompile()


def _fuse_ce_backward(fw, bw, n_out):
    """cross_entropy's backward, _log_softmax_backward_data(nll_loss_backward(g, lsm, t, None,
    r, ii, total), lsm), as one kernel (losses.ce_bw_from_log_softmax; composed of ~12 library
    ops and a target check otherwise)."""
    from .losses import ce_bw_from_log_softmax
    if bw is None:
        return
    outs = [n for n in fw.graph.nodes if n.op == "output"][0].args[0]
    places = [n for n in bw.graph.nodes if n.op == "placeholder"]
    origin = dict(zip(places, outs[n_out:]))   # bw placeholder -> the fw node it saved

    def fw_node(n):
        n = _unalias(n)
        return _unalias(origin.get(n, n))

    for node in list(bw.graph.nodes):
        if node.target is not aten._log_softmax_backward_data.default:
            continue
        nll, y, dim, dt = node.args
        if (getattr(nll, "target", None) is not aten.nll_loss_backward.default or
                len(nll.users) != 1):
            continue
        g, lsm, t, w, r, ii, _ = nll.args
        v = lsm.meta.get("val")
        if (w is not None or fw_node(y) is not fw_node(lsm) or v is None or
                dim != (1 if v.dim() >= 2 else 0) or dt != v.dtype or v.dtype not in
                (torch.float32, torch.float64)):
            continue
        node.target, node.args = ce_bw_from_log_softmax, (g, lsm, t, r, ii)
    bw.graph.eliminate_dead_code()
    bw.recompile()


def _reuse_outputs(fw, bw, n_out):
    """Where the backward graph recomputes a forward result (gelu_backward(g, x): Phi(x) again,
    activations.FROM_OUTPUT), the forward graph also returns that result (after the saved
    tensors) and the backward reads it; returns how many such results were added. _Traced keeps
    them unsaved (a result written in place after the op is passed as None and recomputed, so
    the op reads what torch's does)."""
    from .activations import FROM_OUTPUT
    if bw is None:
        return 0
    out = [n for n in fw.graph.nodes if n.op == "output"][0]
    outs = list(out.args[0])
    n_saved = len(outs) - n_out
    places = [n for n in bw.graph.nodes if n.op == "placeholder"]
    if len(places) <= n_saved:
        return 0
    added = []
    for node in list(bw.graph.nodes):
        rule = FROM_OUTPUT.get(node.target) if node.op == "call_function" else None
        if rule is None or node.args[1] not in places[:n_saved]:
            continue
        x = outs[n_out + places.index(node.args[1])]
        rest = node.args[2:]
        y = next((u for u in x.users if u.target is rule[0] and u.args[0] is x and
                  u.args[1:] == rest and u.kwargs == node.kwargs), None)
        if y is None:
            continue
        outs.append(y)
        with bw.graph.inserting_before(places[n_saved]):   # after the saved, before tangents
            p = bw.graph.placeholder(f"reused_{y.name}")
        p.meta.update(y.meta)
        node.target, node.args = rule[1], (node.args[0], node.args[1], p) + tuple(rest)
        added.append(y)
    if added:
        out.args = (tuple(outs),)
        fw.recompile()
        bw.recompile()
    return len(added)


def _key(name, static, tensors):
    """The cache key: one flat tuple (a tuple per tensor and the calls to make it cost ~1 us of
    a 1-element call)."""
    k = [name, static]
    for t in tensors:
        if t is None:
            k.append(None)
        else:
            k += (t.shape, t.stride(), t.dtype, t.device, t.requires_grad)
    return tuple(k)


def _entry(name, static, form, tensors):
    key = _key(name, static, tensors)
    e = _cache.get(key)
    if e is not None:
        _cache.move_to_end(key)
        return e
    with _lock:
        e = _cache.get(key)
        if e is None:
            e = _cache[key] = _trace(name, form, tensors)
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return e


class _Traced(Function):
    """The one autograd Function: forward and backward of a traced, lowered ATen form."""

    @staticmethod
    def forward(ctx, spec, *ts):
        # spec: (entry, form, nones: which of form's tensors are absent, executor id), one
        # argument (torch's apply costs ~0.8 us per argument)
        entry, form, nones, ex = spec
        res = entry.fw(*ts) if not ex else _B.run_on(ex, entry.fw, *ts)
        n = entry.n_out
        ctx.entry, ctx.form, ctx.nones, ctx.ex = entry, form, nones, ex
        # what the backward graph reads; the inputs (double backward re-runs form on them) are
        # kept unsaved with their versions, so that an in-place write after the op (ReLU's
        # inplace=True writes the result into x) only fails a double backward that reads them
        k = entry.n_reused
        if k:   # forward results the backward reads (_reuse_outputs): detached, no cycle
            ctx.reused = [t.detach() for t in res[-k:]]
            ctx.reused_versions = [t._version for t in ctx.reused]
            res = res[:-k]
        ctx.save_for_backward(*res[n:])
        ctx.inputs = ts
        ctx.versions = [t._version for t in ts]
        outs = tuple(res[:n])
        return outs[0] if n == 1 else outs

    @staticmethod
    def backward(ctx, *grads):
        entry = ctx.entry
        rest = ctx.saved_tensors
        if torch.is_grad_enabled():   # create_graph: torch differentiates its own ATen form
            ts = ctx.inputs
            if [t._version for t in ts] != ctx.versions:
                raise RuntimeError("hologram_torch: an input of an op was modified in place "
                                   "after the op; its double backward (create_graph=True) "
                                   "needs the original values")
            return (None,) + _grad_of_form(ctx, ts, grads)
        gs = [g if g is None or g.is_contiguous() else g.contiguous() for g in grads]
        if entry.n_reused:   # a result written in place since: None, recomputed
            rest = rest + tuple(t if t._version == v else None
                                for t, v in zip(ctx.reused, ctx.reused_versions))
        gs = entry.bw(*rest, *gs) if not ctx.ex else _B.run_on(ctx.ex, entry.bw, *rest, *gs)
        return (None,) + tuple(gs[:entry.n_in])


def _grad_of_form(ctx, ts, grads):
    nones = ctx.nones
    full, it = list(ts), iter(ts)
    if nones is not None:
        full = [None if absent else next(it) for absent in nones]
    outs = ctx.form(*full)
    outs = outs if isinstance(outs, tuple) else (outs,)
    pairs = [(o, g) for o, g in zip(outs, grads) if o.requires_grad and g is not None]
    need = [t for t in ts if t.requires_grad]
    got = iter(torch.autograd.grad([o for o, _ in pairs], need, [g for _, g in pairs],
                                   create_graph=True, allow_unused=True)) if pairs and need \
        else iter(())
    return tuple(next(got, None) if t.requires_grad else None for t in ts)


def apply(ex, name, static, form, *tensors):
    """form(*tensors) with gradients: ATen's derivatives, lowered to hologram, run on executor
    id ex (0: the tensors' device's). static: the hashable non-tensor arguments form closes over
    (part of the cache key); tensors may hold None (an absent optional tensor)."""
    if _functorch_active() or _compiling():
        # torch.func's transforms and dynamo see torch's own ATen ops (dynamo hands them to the
        # backend, which lowers them; torch.func differentiates and batches them itself)
        return form(*tensors)
    e = _entry(name, static, form, tensors)
    for t in tensors:
        if t is None:
            break
    else:   # the common case: no filtering (`None in tensors` would call ==)
        return _Traced.apply((e, form, None, ex), *tensors)
    nones = tuple([t is None for t in tensors])
    return _Traced.apply((e, form, nones, ex), *(t for t in tensors if t is not None))


class _Eager2(Function):
    """The cheapest correct path of the binary ops (add, sub, mul, div of two tensors, the
    functional call that must stay ~as fast as without the table): the forward is the hologram
    op itself, nothing traced until a backward; the backward is the same traced, lowered ATen
    backward graph (their backward reads only inputs: checked, else the traced forward runs).
    One subclass per op (eager2), so that apply takes the two tensors only."""
    name = form = op = None

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.inputs, ctx.versions = (a, b), (a._version, b._version)
        return cls.op(a, b, 0)

    @classmethod
    def backward(cls, ctx, g):
        name, form = cls.name, cls.form
        a, b = ts = ctx.inputs
        grad_grad = torch.is_grad_enabled()
        e = None if grad_grad else _entry(name, (), form, ts)
        if (grad_grad or e.from_inputs) and ctx.versions != (a._version, b._version):
            # only where the backward reads them (add's and sub's never do, as torch's)
            raise RuntimeError(f"hologram_torch: an input of {name} was modified in place "
                               f"after the op; its backward needs the original values")
        if grad_grad:   # create_graph: torch differentiates the ATen form
            ctx.nones, ctx.form = None, form
            return _grad_of_form(ctx, ts, (g,))
        if e.from_inputs is None:   # not for the binary ops (their backward reads inputs only)
            raise RuntimeError(f"hologram_torch: {name}'s backward reads a forward result")
        gs = e.bw(*(ts[i] for i in e.from_inputs), g if g.is_contiguous() else g.contiguous())
        return gs[0], gs[1]


def eager2(name, form, op):
    """form(a, b) with gradients, its forward op(a, b, 0): a function of (a, b)."""
    apply = type(f"_Eager2_{name}", (_Eager2,), {"name": name, "form": form, "op": op}).apply

    def f(a, b):
        if _functorch_active() or _compiling():
            return form(a, b)
        return apply(a, b)
    return f
