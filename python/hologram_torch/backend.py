"""``torch.compile(model, backend="hologram")``: AOTAutograd's forward and backward ATen graphs
run by hologram.

Each graph goes through the graph compiler: the FX passes of ``PASSES`` in order (the fusion of
pointwise nodes, _aten/fuse.py, is one of them), then :func:`lower`: every call of an ATen op
that ``_aten.table.TABLE`` has and accepts is replaced by its hologram function. The
GraphModule's own generated Python is the program (no interpreter loop). What is not lowered
runs in torch inside the same compiled graph; :func:`reports` says per graph how many nodes ran
where (also one INFO line on the logger ``hologram_torch.backend``).

Views (view, permute, expand, slice, ...) stay torch's metadata ops over the same memory: they
copy nothing, and hologram reads the strided results in place (those with a Tensor method are
called through it: _aten/views.py).
"""
import dataclasses
import functools
import importlib.abc
import importlib.metadata
import importlib.util
import logging
import operator
import sys
from collections import Counter

import torch

from ._aten.attention import ungroup_kv_heads, ungroup_kv_heads_joint
from ._aten.fuse import fuse_elementwise
from ._aten.patterns import gelu_tanh_formula
from ._aten.table import TABLE
from ._aten.views import fast_views

log = logging.getLogger(__name__)
aten = torch.ops.aten

# ATen's metadata ops: a view over the same memory, no computation.
VIEWS = frozenset([
    aten.view.default, aten._unsafe_view.default, aten.permute.default, aten.t.default,
    aten.transpose.int, aten.expand.default, aten.slice.Tensor, aten.select.int,
    aten.as_strided.default, aten.reshape.default, aten.unsqueeze.default,
    aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default, aten.alias.default,
    aten.detach.default, aten.unflatten.int, aten.split.Tensor, aten.split_with_sizes.default,
    aten.unbind.int, aten.diagonal.default,
])

# FX passes on the ATen GraphModule, run in order before lower(); each takes the GraphModule
# and changes it in place. gelu_tanh_formula (_aten/patterns.py) replaces the tanh GELU written
# out in ATen ops by aten.gelu; ungroup_kv_heads (_aten/attention.py) has the attention read
# grouped key / value heads without repeat_kv's copies; fuse_elementwise (_aten/fuse.py) turns pointwise clusters into
# hologram kernels; the nodes it makes carry node.meta["hologram_fused"] = [ATen op names].
PASSES = [gelu_tanh_formula, ungroup_kv_heads, fuse_elementwise]


# Decompositions whose gradients are wrong in torch 2.13 (CPU): the core-ATen decomposition of
# _scaled_dot_product_flash_attention_for_cpu gives a causal GPT-2's weights gradients up to
# 9x off (aot_autograd with core_aten_decompositions and no hologram at all; without it 4e-7).
# The op stays whole in every graph (the table lowers its forward: _aten/attention.py; its
# backward op stays torch's).
_WRONG_IN_TRAINING = frozenset([aten._scaled_dot_product_flash_attention_for_cpu.default])


@functools.lru_cache(maxsize=2)
def decompositions(training=False):
    """torch's core-ATen decompositions, minus the ops the table lowers whole (softmax, layer
    norm, gelu, ... stay one node for one hologram kernel) and, when training, those above.
    Built once per mode (~60 ms each); callers must not change the dict."""
    from torch._decomp import core_aten_decompositions
    skip = _WRONG_IN_TRAINING if training else ()
    return {op: fn for op, fn in core_aten_decompositions().items()
            if op not in TABLE and op not in skip}


def lower(gm):
    """Points each accepted call of a TABLE op at its hologram function; returns gm
    (recompiled)."""
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        lowering = TABLE.get(node.target)
        if lowering is None or not lowering.accepts(node):
            continue
        fn = lowering.fn
        specialize = getattr(fn, "specialize", None)
        node.meta["hologram_lowered"] = str(node.target)
        node.target = specialize(node) if specialize else fn
    gm.recompile()
    return gm


@dataclasses.dataclass
class Report:
    """Where the ATen nodes of one compiled graph run."""
    graph: str                     # "forward", "backward" or "inference"
    hologram: Counter              # ATen op name -> nodes run by hologram (lowered or fused)
    torch: Counter                 # ATen op name -> nodes left to torch
    views: Counter                 # view / metadata op name -> nodes

    def __str__(self):
        def fmt(c):
            return ", ".join(f"{k} {v}" for k, v in c.most_common()) or "-"
        h, t, v = (sum(c.values()) for c in (self.hologram, self.torch, self.views))
        return (f"hologram {self.graph} graph: {h} nodes in hologram ({fmt(self.hologram)}); "
                f"{t} in torch ({fmt(self.torch)}); {v} views")


_reports = []
_MAX_REPORTS = 256   # a long-running process that recompiles keeps the newest only


def reports():
    """The reports of the graphs compiled in this process, newest last."""
    return list(_reports)


def last_report():
    """The newest report (None before the first compiled graph)."""
    return _reports[-1] if _reports else None


def _op_name(op):
    """The short name of an ATen op: "mul" of aten.mul.Tensor, its OpOverload or its string."""
    if hasattr(op, "overloadpacket"):
        return op.overloadpacket.__name__
    name = str(op)
    return name.split(".")[1] if name.startswith("aten.") else name


def report_of(gm, kind):
    """Counts the call_function nodes of a lowered graph: lowered or fused (hologram), views,
    the rest (torch). getitem of a multi-output op is bookkeeping: not counted."""
    hologram, left, views = Counter(), Counter(), Counter()
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if "hologram_lowered" in node.meta:
            hologram[_op_name(node.meta["hologram_lowered"])] += 1
        elif "hologram_fused" in node.meta:
            for name in node.meta["hologram_fused"]:
                hologram[_op_name(name)] += 1
        elif node.meta.get("hologram_view", node.target) in VIEWS:
            views[_op_name(node.meta.get("hologram_view", node.target))] += 1
        else:
            left[_op_name(node.target)] += 1
    return Report(kind, hologram, left, views)


# Ops left to torch that are worth torch's threads (a graph with one keeps them). Not
# attention: a GPT-2 training step (2 layers, 2 cores) whose graphs keep torch's CPU attention
# kernel took 180-450 ms with torch's threads and 31-41 ms with one.
_TORCH_HEAVY = ("convolution",)


def _single_threaded_torch(gm, report):
    """Whether the graph's torch ops run on one thread: between hologram's kernels, torch's
    OpenMP workers spin after each parallel region on the cores hologram's threads need (a
    GPT-2 forward of 2 layers, 2 cores: 60-310 ms against 13 ms with torch on one thread for
    its light ops: copies, concatenations, index arithmetic). A graph whose torch part has
    convolutions or that runs on no CPU tensor keeps torch's threads."""
    if not report.hologram or any(h in name for name in report.torch for h in _TORCH_HEAVY):
        return False
    return any(isinstance(v, torch.Tensor) and v.device.type == "cpu"
               for v in (n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"))


def lower_graph(gm):
    """The graph compiler on an ATen GraphModule: PASSES, then lower(), then the views left to
    torch called as Tensor methods (_aten/views.py); returns gm. The eager gradients
    (_aten/grad.py) run their traced graphs through it too."""
    for p in PASSES:
        p(gm)
    return fast_views(lower(gm))


def _compiler(kind):
    def compile_graph(gm, example_inputs):
        lower_graph(gm)
        r = report_of(gm, kind)
        _reports.append(r)
        del _reports[:-_MAX_REPORTS]
        log.info("%s", r)
        run = gm.forward
        if not _single_threaded_torch(gm, r):
            from functorch.compile import make_boxed_func
            return make_boxed_func(run)
        get, set_ = torch.get_num_threads, torch.set_num_threads

        def run_one_thread(args):
            n = get()
            set_(1)
            try:
                return run(*args)
            finally:
                set_(n)
        run_one_thread._boxed_call = True   # AOTAutograd's calling convention: one list
        return run_one_thread
    return compile_graph


def hologram_backend(gm, example_inputs, **options):
    """The dynamo backend: AOTAutograd traces gm into ATen forward / backward graphs (with the
    decompositions above) and hands each to hologram's graph compiler."""
    if options:
        raise TypeError(f"hologram backend: unknown options {sorted(options)}")
    from torch._dynamo.backends.common import aot_autograd
    # AOTAutograd makes a training (joint) graph on the same condition
    training = torch.is_grad_enabled() and any(
        isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs)
    return aot_autograd(fw_compiler=_compiler("forward"), bw_compiler=_compiler("backward"),
                        inference_compiler=_compiler("inference"), partition_fn=_partition,
                        decompositions=decompositions(training))(gm, example_inputs)


def _partition(joint_module, joint_inputs, **kwargs):
    """The joint graph's passes (ungroup_kv_heads_joint: grouped key / value heads read by
    the attention and its backward op, nothing saved of repeat_kv's copies), then the min-cut
    partitioner (inductor's): the forward saves fewer tensors and the backward recomputes
    cheap pointwise values (never a random one) inside its fused kernels."""
    from functorch.compile import min_cut_rematerialization_partition
    ungroup_kv_heads_joint(joint_module)
    return min_cut_rematerialization_partition(joint_module, joint_inputs, **kwargs)


def _register_in(registry):
    if any(ep.name == "hologram" for ep in importlib.metadata.entry_points(
            group="torch_dynamo_backends")):
        return   # torch loads the installed entry point on first use (registering twice fails)
    try:
        registry.register_backend(hologram_backend, name="hologram")
    except AssertionError:   # "duplicate name": registered before
        pass


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Registers the backend when torch imports its backend registry: importing torch._dynamo
    here would add ~1 s to ``import hologram_torch``."""
    NAME = "torch._dynamo.backends.registry"

    def find_spec(self, name, path, target=None):
        if name != self.NAME:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _register_in(module)
        spec.loader.exec_module = exec_module
        return spec


def register():
    """Makes backend="hologram" known to torch.compile: now if torch's registry is loaded, else
    when it is; nothing when the installed entry point provides it."""
    registry = sys.modules.get(_RegisterOnImport.NAME)
    if registry is not None:
        _register_in(registry)
    elif not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())
