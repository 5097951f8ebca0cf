"""The fusion pass of the hologram compile backend: the pointwise ATen nodes of a graph (and
the reductions over them, and the matmuls between them) grouped into clusters, each run as one
plan of hologram's graph compiler (its elementwise chains fused into kernels, its matmuls
library steps): a transformer layer's norms, matmuls, activations and residual adds are one
call from Python. After a large matmul, every op's own Python and torch code comes back from
outside the core's caches (~3 us for any Python call, ~10 for a torch op on the Intel VM:
docs/performance.md), so fewer calls is most of the gain.

``fuse_elementwise(gm)`` rewrites gm in place: every maximal connected cluster of nodes that
pointwise.py lowers becomes one call_function node whose target is a :class:`FusedKernel`;
results used outside the cluster come out of it (a tuple and getitem nodes when there are
several). What pointwise.py does not take, and clusters that hologram's graph builder refuses
for the graph's static shapes and dtypes, stay torch.
"""
import heapq
import operator

import torch

import hologram as hg

from .. import _bridge as B
from .pointwise import Build, Ref, aten, lower

__all__ = ["fuse_elementwise", "FusedKernel"]

# the per-call path's names, bound once (each attribute lookup is ~40 ns of a ~3 us call)
_Tensor, _Param, _grad_enabled = torch.Tensor, torch.nn.Parameter, torch.is_grad_enabled
_to_dlpack, _from_dlpack, _from_capsule = (torch._C._to_dlpack, torch._C._from_dlpack,
                                           hg._C._from_capsule)
_cpu, _scoped = B._cpu, B.scoped


class FusedKernel:
    """A cluster of ATen nodes run as one hologram plan over torch tensors.

    Called with the cluster's tensor inputs (torch tensors, read in place through DLPack), it
    returns its outputs (one tensor, or a tuple) with the dtypes, shapes and strides of the FX
    graph's FakeTensors. Plans are compiled on the first call per executor (the executor of the
    tensors' device). Inputs the plan cannot take (FakeTensors and other subclasses, tensors on
    other devices or on several, inputs that require grad while grad mode is on: the call must
    then be differentiable) run the cluster's ATen ops in torch instead (``fallbacks`` counts
    them)."""

    def __init__(self, recipe, in_specs, outputs, out_specs, fallback, ops):
        self.recipe = recipe          # [(Lowering, resolved operands)], slots in order
        self.in_specs = in_specs      # [(hologram dtype name, shape)] of the inputs
        self.outputs = outputs        # slots of the outputs
        self.out_specs = out_specs    # [(torch dtype, shape, stride or None: contiguous)]
        self.fallback = fallback      # GraphModule of the cluster's ATen nodes
        self.ops = ops                # str of each ATen node it replaced
        self.single = len(outputs) == 1
        self._plans = {}
        self._unsupported, self._ran = set(), set()   # executors that cannot / did run it
        self.fallbacks = 0            # calls that ran the ATen nodes in torch
        self._jit = hg._C.JitFunction(self._slow) if all(
            st is None for _, _, st in out_specs) else None
        self.__name__ = f"hologram_fused_{len(ops)}"

    def __deepcopy__(self, memo):   # immutable but for its plan caches: shared by copies
        return self

    def __repr__(self):
        return f"FusedKernel({', '.join(self.ops)})"

    def build(self, g, host=True):
        """Adds the cluster to the hologram Graph g (for a host executor or not); returns the
        output node ids."""
        b = Build(g, host)
        env = [g.input(dt, shape) for dt, shape in self.in_specs]
        for low, ops in self.recipe:
            env.append(low.emit(b, low.dtype, *[Ref(env[o.i]) if isinstance(o, _Slot) else o
                                                for o in ops]))
        return [env[i] for i in self.outputs]

    def _compile(self, ex):
        g = hg._C.Graph()
        try:
            for o in self.build(g, ex.backend == "cpu"):
                g.output(o)
            return g.compile(ex)
        finally:
            g.destroy()

    def __call__(self, *args):
        grad = _grad_enabled()
        for a in args:   # the common case, plain CPU tensors, in a few attribute reads
            if (type(a) is not _Tensor and type(a) is not _Param) or not a.is_cpu or (
                    grad and a.requires_grad):
                return self._general(args, grad)
        ex = _cpu[0]
        if ex is None or ex.closed or _scoped[0]:
            ex = B.executor_of(0, args[0].device, self.__name__)
        return self._run(ex, args)

    def _general(self, args, grad):
        dev = args[0].device
        for a in args:
            if (type(a) is not _Tensor and type(a) is not _Param) or a.device != dev or (
                    grad and a.requires_grad):
                self.fallbacks += 1
                return self.fallback(*args)
        return self._run(B.executor_of(0, dev, self.__name__), args)

    def _run(self, ex, args):
        try:
            if self._jit is not None:   # contiguous outputs: the repeated call runs in C
                out = self._jit(*[_from_capsule(_to_dlpack(a), ex) for a in args])   # B.to_hg
                if self.single:
                    return _from_dlpack(out.__dlpack__(stream=-1))                   # B.to_torch
                return tuple(B.to_torch(o) for o in out)
            return self._run_strided(ex, args)
        except _Unsupported:
            self.fallbacks += 1
            return self.fallback(*args)

    def _run_strided(self, ex, args):
        dev = args[0].device
        plan = self._plan(ex)
        touts, houts = [], []
        for dt, shape, stride in self.out_specs:
            if stride is None:
                t, h = B.empty_pair(shape, dt, ex)
            else:
                t = torch.empty_strided(shape, stride, dtype=dt, device=dev)
                h = B.to_hg(t, ex)
            touts.append(t)
            houts.append(h)
        self._first_run(ex, plan, [B.to_hg(a, ex) for a in args], houts)
        return touts[0] if self.single else tuple(touts)

    def _plan(self, ex):
        plan = self._plans.get(ex)
        if plan is None:
            if ex in self._unsupported:
                raise _Unsupported
            try:
                plan = self._compile(ex)
            except hg.HologramError:
                self._unsupported.add(ex)
                raise _Unsupported from None
            self._plans[ex] = plan
        return plan

    def _first_run(self, ex, plan, ins, outs):
        """plan.run; the first run per executor that fails (a step its backend cannot run,
        such as a library call on a device without host-visible memory: docs/graph.md) makes
        the kernel run in torch there from then on. A failing run writes nothing."""
        if ex in self._ran:
            return plan.run(ins, outs)
        try:
            plan.run(ins, outs)
        except hg.HologramError:
            self._unsupported.add(ex)
            del self._plans[ex]
            raise _Unsupported from None
        self._ran.add(ex)

    def _slow(self, *hargs):
        """A call _C.JitFunction has no signature for yet: compile for the executor, run, then
        register the signature (so the C path takes only plans that ran)."""
        ex = hargs[0].executor
        plan = self._plan(ex)
        specs = [(B.DTYPES[dt], shape) for dt, shape, _ in self.out_specs]
        outs = [hg._C.empty(ex, shape, dt) for dt, shape in specs]
        self._first_run(ex, plan, list(hargs), outs)
        self._jit._add(hargs, plan, [], specs, None if self.single else tuple)
        return outs[0] if self.single else tuple(outs)


class _Unsupported(Exception):
    """The executor cannot run this kernel's plan: run the ATen nodes in torch."""


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


# ops whose outputs (getitem) pointwise.py lowers one by one
_MULTI_OUTPUT = (aten.split.Tensor, aten.split_with_sizes.default, aten.native_layer_norm.default,
                 aten.native_layer_norm_backward.default)


def fuse_elementwise(gm: torch.fx.GraphModule) -> int:
    """Fuses gm's pointwise ATen nodes into hologram kernels in place; returns the number of
    fused nodes made (clusters)."""
    graph = gm.graph
    index = {n: i for i, n in enumerate(graph.nodes)}
    lows = {}
    for n in graph.nodes:
        low = lower(gm, n)
        if low is not None:
            lows[n] = low
    while True:   # a member that closes a cycle between clusters, or that the graph builder
        # refuses, is taken out (it stays torch), then re-cluster
        clusters, root = _clusters(graph, lows)
        bad = _cycle(graph, clusters, root, lows)
        if bad is None:
            bad = next((b for b in (_check(_Cluster(m, lows, index)) for m in clusters)
                        if b is not None), None)
        if bad is None:
            break
        del lows[bad]
    made = 0
    for members in clusters:
        c = _Cluster(members, lows, index)
        made += bool(c.outputs)
        subst = _replace(graph, c)
        for n, low in lows.items():   # later clusters read the new node instead
            if any(o in subst for o in low.operands if isinstance(o, torch.fx.Node)):
                low.operands = tuple(subst.get(o, o) if isinstance(o, torch.fx.Node) else o
                                     for o in low.operands)
    for n in list(graph.nodes):   # a split whose parts all became slices inside kernels, a
        # layer norm whose outputs all became graph nodes
        if n.target in _MULTI_OUTPUT and not n.users:
            graph.erase_node(n)
    if clusters:
        _topo_sort(graph)
        graph.lint()
        gm.recompile()
    return made


def _clusters(graph, lows):
    """Maximal connected clusters of pointwise/reduction/matmul nodes, acyclic: no path leaves a
    cluster and comes back into it. Constants and views (reshape, expand) are not clustered:
    each cluster that reads one rebuilds it (a view of its source, which for the analysis
    stands in for it). Reductions join only a cluster their input is in (a lone reduction is
    the op table's). Union-find over clusters; anc[n]: the clusters n depends on."""
    parent = {}

    def find(c):
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    cl, anc, canc, root = {}, {}, {}, {}
    for n in graph.nodes:
        a = set()
        for q in n.all_input_nodes:
            a |= anc[q]
            if q in cl:
                a.add(cl[q])
        anc[n] = a
        low = lows.get(n)
        if low is None or low.kind == "const":
            continue
        if low.kind == "view":
            src = low.operands[0]
            root[n] = root.get(src, src)
            continue
        ins = _reads(n, root, lows)
        cands = {find(cl[q]) for q in ins if q in cl}
        if low.kind == "red" and not cands:
            continue
        for k in ([cands] if len(cands) < 2 else [cands] + [{c} for c in cands]):
            if _can_merge(k, ins, cl, anc, canc, find):
                break
        else:
            k = set()
        c = len(parent)
        parent[c] = c
        canc[c] = set(a)
        for o in k:
            parent[o] = c
            canc[c] |= canc.pop(o)
        cl[n] = c
    groups = {}
    for n, c in cl.items():
        groups.setdefault(find(c), []).append(n)
    # a cluster of copies alone (clone, cat) computes nothing: torch's copy (or the op table's
    # cat) is as good; one of matmuls alone is the op table's matmul call
    return [m for m in groups.values() if any(
        lows[x].kind == "pw" and x.target not in (aten.clone.default, aten.cat.default)
        for x in m)], root


def _cycle(graph, clusters, root, lows):
    """None when the graph with each cluster contracted to one node is acyclic; else a member
    to take out of its cluster. (_clusters keeps each cluster free of paths that leave it and
    come back, but two clusters can still each feed the other through outside nodes when one
    grew after the other read it.) Kahn's algorithm on the contracted graph."""
    group = {}
    for i, members in enumerate(clusters):
        for m in members:
            group[m] = i
    key = lambda n: ("c", group[n]) if n in group else n   # noqa: E731
    deps = {}
    for n in graph.nodes:
        ins = n.all_input_nodes
        if n in group:   # a member reads an absorbed view's source; absorbed constants: nothing
            ins = _reads(n, root, lows)
        d = deps.setdefault(key(n), set())
        d.update(key(q) for q in ins if key(q) != key(n))
    users = {}
    for k, d in deps.items():
        for q in d:
            users.setdefault(q, []).append(k)
    pending = {k: len(d) for k, d in deps.items()}
    ready = [k for k, c in pending.items() if c == 0]
    while ready:
        k = ready.pop()
        for u in users.get(k, ()):
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
    stuck = {k for k, c in pending.items() if c}
    for members in clusters:   # a stuck cluster's member that reads a stuck outside node
        for m in members:
            if key(m) in stuck and any(key(q) in stuck and key(q) != key(m)
                                       for q in _reads(m, root, lows)):
                return m
    return None


def _reads(n, root, lows):
    """The nodes a cluster member depends on: its Lowering's tensor operands (for an output of
    a multi-output op, that op's inputs, not the op), an absorbed view replaced by the view's
    source, absorbed constants (rebuilt in the kernel) left out."""
    ins = [o for o in lows[n].operands if isinstance(o, torch.fx.Node)] if n in lows else \
        n.all_input_nodes
    return [root.get(q, q) for q in ins if not (q in lows and lows[q].kind == "const")]


def _can_merge(k, ins, cl, anc, canc, find):
    for q in ins:
        if q in cl and find(cl[q]) in k:
            continue
        if any(find(c) in k for c in anc[q]):
            return False   # q is outside and depends on the cluster: a cycle
    for c in k:
        if any(find(d) in k and find(d) != c for d in canc[c]):
            return False
    return True


class _Cluster:
    """A cluster's plan: inputs (the FX nodes it reads), order (absorbed constants and views
    and the members, in graph order), recipe (over slots: inputs first, then order), outputs
    (members used outside), erasable (absorbed nodes that only the cluster reads)."""

    def __init__(self, members, lows, index):
        mset = set(members)
        absorbed, inputs, slot = set(), [], {}

        def visit(q):
            if q in mset or q in slot or q in absorbed:
                return
            lq = lows.get(q)
            if lq is not None and lq.kind in ("const", "view"):
                absorbed.add(q)
                for o in lq.operands:
                    if isinstance(o, torch.fx.Node):
                        visit(o)
            else:
                slot[q] = len(inputs)
                inputs.append(q)
        for m in members:
            for q in lows[m].operands:
                if isinstance(q, torch.fx.Node):
                    visit(q)
        order = sorted(mset | absorbed, key=index.__getitem__)
        for i, n in enumerate(order):
            slot[n] = len(inputs) + i
        inside = set(mset)
        for a in sorted(absorbed, key=index.__getitem__, reverse=True):
            if all(u in inside for u in a.users):
                inside.add(a)
        self.members, self.inputs, self.order, self.slot = members, inputs, order, slot
        self.lows = lows
        self.erasable = [a for a in order if a in inside and a not in mset]
        self.replaced = [n for n in order if n in inside]
        self.recipe = [(lows[n], tuple(_Slot(slot[o]) if isinstance(o, torch.fx.Node) else o
                                       for o in lows[n].operands)) for n in order]
        self.outputs = [m for m in members if any(u not in inside for u in m.users)]


def _check(c):
    """None when hologram's builder takes the cluster with the FX graph's dtypes and shapes;
    else the first member it refuses or computes differently (an absorbed node's first user)."""
    if not c.inputs:
        return c.members[0]
    g = hg._C.Graph()
    try:
        b = Build(g)
        env = [g.input(B.DTYPES[q.meta["val"].dtype], tuple(q.meta["val"].shape))
               for q in c.inputs]
        for n, (low, ops) in zip(c.order, c.recipe):
            v = n.meta["val"]
            try:
                i = low.emit(b, low.dtype, *[Ref(env[o.i]) if isinstance(o, _Slot) else o
                                             for o in ops])
                ok = g.node_info(i) == (B.DTYPES[v.dtype], tuple(v.shape))
            except Exception:
                ok = False
            if not ok:
                return n if n in c.members else _user_of(n, c)
            env.append(i)
    finally:
        g.destroy()
    return None


def _user_of(node, c):
    u = next(m for m in c.order if node in m.all_input_nodes)
    return u if u in c.members else _user_of(u, c)


def _replace(graph, c):
    if not c.outputs:   # nothing reads the cluster: its (pure) nodes are dead code
        for n in reversed(c.replaced):
            graph.erase_node(n)
        return {}
    out_specs = []
    for o in c.outputs:
        v = o.meta["val"]
        stride = None if v.is_contiguous() else tuple(v.stride())
        out_specs.append((v.dtype, tuple(v.shape), stride))
    inside = set(c.replaced)
    # an output of a multi-output op (getitem) is named after that op
    ops = [str(n.args[0].target if n.target is operator.getitem else n.target)
           for n in c.replaced]
    kernel = FusedKernel(c.recipe, [(B.DTYPES[q.meta["val"].dtype], tuple(q.meta["val"].shape))
                                    for q in c.inputs],
                         [c.slot[o] for o in c.outputs], out_specs,
                         _fallback_module(c.inputs, c.order, c.outputs, c.lows), ops)
    with graph.inserting_after(c.members[-1]):
        fused = graph.call_function(kernel, tuple(c.inputs))
    fused.meta["hologram_fused"] = ops
    vals = [o.meta["val"] for o in c.outputs]
    fused.meta["val"] = vals[0] if len(vals) == 1 else tuple(vals)
    subst = {}
    if len(c.outputs) == 1:
        c.outputs[0].replace_all_uses_with(fused, lambda u: u not in inside)
        subst[c.outputs[0]] = fused
    else:
        for i, o in enumerate(c.outputs):
            with graph.inserting_after(fused):
                gi = graph.call_function(operator.getitem, (fused, i))
            gi.meta["val"] = o.meta["val"]
            o.replace_all_uses_with(gi, lambda u: u not in inside)
            subst[o] = gi
    for n in reversed(c.replaced):
        graph.erase_node(n)
    return subst


def _fallback_module(inputs, nodes, outputs, lows):
    """The cluster's own ATen nodes as a GraphModule (what runs for inputs hologram cannot
    take)."""
    g = torch.fx.Graph()
    env = {}
    for q in inputs:
        env[q] = g.placeholder(q.name)
        env[q].meta = dict(q.meta)
    for n in nodes:
        low = lows[n]
        if low.kind == "view" and n.target is operator.getitem:   # a split's part: its slice
            x, dim, start, stop, _ = low.operands
            env[n] = g.call_function(aten.slice.Tensor, (env[x], dim, start, stop))
            env[n].meta = dict(n.meta)
        elif all(q in env for q in n.all_input_nodes):
            env[n] = g.node_copy(n, lambda x: env[x])
        else:   # a full_like of a tensor outside: the same constant by aten.full
            v = n.meta["val"]
            env[n] = g.call_function(aten.full.default,
                                     (list(v.shape), low.operands[0]),
                                     {"dtype": v.dtype, "device": v.device})
            env[n].meta = dict(n.meta)
    outs = [env[o] for o in outputs]
    g.output(outs[0] if len(outs) == 1 else tuple(outs))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _topo_sort(graph):
    """Reorders the graph's nodes topologically, keeping the original order wherever the
    dependences allow (a fused node sits at its last member's place; users of its earlier
    members that came before move after it)."""
    nodes = list(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    pending = {n: len(set(n.all_input_nodes)) for n in nodes}
    ready = [index[n] for n in nodes if pending[n] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        n = nodes[heapq.heappop(ready)]
        order.append(n)
        for u in n.users:
            pending[u] -= 1
            if pending[u] == 0:
                heapq.heappush(ready, index[u])
    assert len(order) == len(nodes), "fuse_elementwise: the rewritten graph has a cycle"
    if order == nodes:
        return
    prev = order[0]
    for n in order[1:]:
        prev.append(n)
        prev = n
