"""torch's own OpInfo samples (torch.testing._internal.common_methods_invocations.op_db) through
every ATen op the compile backend lowers (_aten/table.py's TABLE and the fusion pass,
_aten/fuse.py + pointwise.py), eager and compiled.

Which OpInfos: every entry of op_db with float32 samples on the CPU whose first sample's ATen
graph (make_fx with the backend's decompositions) has at least one node that TABLE or the fusion
pass lowers (a few hundred of ~700). For each:

- eager (the bulk): the first SAMPLES samples in float32 and in float64 (integer-only OpInfos:
  their first integer dtype), the first sample of each dtype again with SPECIALS (NaN, +-inf,
  +-0, 1e30) written into its floating tensors, traced to an ATen GraphModule, run unlowered and
  with the backend's PASSES + lower() on the same inputs: same dtypes, shapes, values
  (helpers.TOL per dtype), or both raise the same exception type; and the first GRAD_SAMPLES
  float64 samples of an OpInfo that supports autograd, traced with their torch.autograd.grad
  (ATen's backward ops in the graph), the same way.
- compiled (a subset, torch.compile per call is ~0.2 s): the fewest OpInfos whose first samples
  cover every ATen op the eager run computed in hologram, each through
  torch.compile(fn, backend="hologram", fullgraph=True, dynamic=False) against eager torch:
  float32 values, and float64 values and input gradients (torch.autograd.grad) where the
  OpInfo supports autograd.

Every difference is hologram's bug (fixed) or listed in DOCUMENTED with the reason (also in
docs/torch.md, "OpInfo run"); OpInfos left out are in SKIPPED with the reason; and
test_every_lowered_op_is_exercised fails when a TABLE entry or fused op is computed by hologram
in no sample (unless NOT_EXERCISED says why), so coverage cannot silently shrink.
"""
import functools
from collections import Counter

import pytest
import torch

import opinfo_helpers as H
from hologram_torch import backend as BK
from hologram_torch._aten import pointwise as PW
from hologram_torch._aten.table import TABLE

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning",
                                        "ignore::DeprecationWarning")

SAMPLES = 6
GRAD_SAMPLES = 2   # float64 samples traced with their gradient
DTYPES = (torch.float32, torch.float64)

# OpInfos left out, and why (op_db names: name.variant)
SKIPPED = {
    # random ops: the lowered graph draws with hologram's Philox (native_dropout), the unlowered
    # one with torch's generator; test_torch_backend checks dropout's distribution and seeding
    "nn.functional.dropout": "random (hologram's Philox mask)",
    "nn.functional.dropout2d": "random (hologram's Philox mask)",
    "nn.functional.dropout3d": "random (hologram's Philox mask)",
    "nn.functional.alpha_dropout": "random (hologram's Philox mask)",
    "nn.functional.feature_alpha_dropout.with_train": "random (hologram's Philox mask)",
    "nn.functional.feature_alpha_dropout.without_train": "random (hologram's Philox mask)",
}
# OpInfos whose first sample make_fx cannot trace with FakeTensors, and why: nothing of theirs
# reaches the backend's graph compiler
_DATA_DEPENDENT = "a Python value or output shape read from tensor data (.item(), nonzero)"
UNTRACEABLE = {
    **{n: _DATA_DEPENDENT for n in ("allclose", "equal", "tensor_split", "cov", "corrcoef",
                                    "nn.functional.ctc_loss", "nn.functional.gaussian_nll_loss",
                                    "nn.functional.one_hot", "linalg.lstsq",
                                    "linalg.lstsq.grad_oriented")},
    **{n: "a CUDA-only jiterator kernel (no CPU implementation)" for n in (
        "jiterator_2inputs_2outputs", "jiterator_4inputs_with_extra_args", "jiterator_binary",
        "jiterator_binary_return_by_ref", "jiterator_unary")},
}

# differences found, documented (docs/torch.md, "OpInfo run"): (OpInfo name, case) -> reason
_GELU_INF = ("gelu(+-inf) (erf form), gelu(-inf) (tanh form): hologram gives the limits "
             "(inf, -0), torch 2.13's CPU kernel NaN (docs/torch.md, Ops)")
DOCUMENTED = {
    ("nn.functional.gelu", "torch.float32 sample 0 with specials"): _GELU_INF,
    ("nn.functional.gelu", "torch.float64 sample 0 with specials"): _GELU_INF,
}

# TABLE entries and fused ops no OpInfo sample computes in hologram, and why
_DECOMPOSED = ("the backend's core-ATen decompositions rewrite it before the passes (the fusion "
               "entry serves graphs that keep it)")
NOT_EXERCISED = {
    **{n: _DECOMPOSED for n in ("_unsafe_view", "clamp_max", "hardsigmoid", "hardswish",
                                "isfinite", "masked_fill", "ones_like", "zeros_like", "rsub",
                                "silu", "silu_backward", "sigmoid_backward", "tanh_backward")},
    "reshape": "make_fx and AOTAutograd record view (reshape is CompositeImplicit)",
    "convert_element_type": "a prims op: core-ATen graphs cast with _to_copy",
    "amin": "fused only behind a pointwise op of its cluster (a lone amin is not in TABLE); "
            "the amin OpInfo's graph is amin alone",
    "native_dropout": "random: the dropout OpInfos are SKIPPED; test_torch_backend checks it",
    "_scaled_dot_product_flash_attention_for_cpu": "the sdpa OpInfo's first samples are 3-D "
        "(torch's math path: matmuls and softmax) or have dropout; test_torch_backend's "
        "samples and models run ATen's 4-D CPU flash op through it",
    "_scaled_dot_product_flash_attention_for_cpu_backward": "as its forward: no OpInfo sample "
        "reaches the 4-D flash op; test_torch_backend's samples (from ATen's own forward) and "
        "the models' training graphs run it",
}
# OpInfos the compiled subset passes over (fullgraph=True cannot capture the call), and why
_SEEDED = ("the OpInfo wraps the call in wrapper_set_seed, whose freeze_rng_state dynamo "
           "cannot trace (a graph break); the eager run covers its ATen graph")
NOT_COMPILED = {"nn.functional.scaled_dot_product_attention": _SEEDED,
                "nn.functional.multi_head_attention_forward": _SEEDED}


def fused_ops():
    """Every ATen op the fusion pass (pointwise.py) can lower."""
    ops = set()
    for table in (PW._ARITH, PW._ADD, PW._CMP, PW._FLOAT_UNARY, PW._NUM_UNARY, PW._TEST,
                  PW._LOGICAL, PW._BACKWARD, PW._HARD, PW._REDUCE, PW._LIKE_FILL):
        ops |= set(table)
    ops |= set(PW._CASTS) | set(PW._CONSTS) | set(PW._VIEWS)
    aten = torch.ops.aten
    ops |= {aten.rsub.Scalar, aten.rsub.Tensor, aten.sigmoid.default, aten.silu.default,
            aten.relu.default, aten.logical_not.default, aten.bitwise_not.default,
            aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar,
            aten.masked_fill.Scalar, aten.masked_fill.Tensor, aten.clamp.default,
            aten.clamp_min.default, aten.clamp_max.default, aten.pow.Tensor_Scalar,
            aten.pow.Scalar, aten.slice_scatter.default}
    return ops


def dtypes_of(info):
    """float32 and float64 where the OpInfo has them; else its first integer or bool dtype
    (the bitwise ops)."""
    have = info.supported_dtypes("cpu")
    return [d for d in DTYPES if d in have] or [
        d for d in (torch.int64, torch.int32, torch.uint8, torch.bool) if d in have][:1]


def _samples(info, dt, grad=False):
    """The OpInfo's samples from its own generator, seeded: OpInfo.sample_inputs around it
    crawls the call stack (inspect.stack) for a unittest test per call, 22 ms of each here."""
    torch.manual_seed(0)
    try:
        return iter(info.sample_inputs_func(info, "cpu", dt, grad))
    except Exception:   # noqa: BLE001 - an OpInfo without samples for this dtype
        return iter(())


def _first(info, dt, grad=False):
    return next(iter(_samples(info, dt, grad)), None)


class Run:
    """The eager run's results: ran[name] (cases run), problems [(name, case, what)],
    coverage (ATen op name -> cases hologram computed it in), per_op[name] (op names of the
    first sample's forward and gradient graphs), untraceable {name}."""

    def __init__(self):
        self.ran, self.problems, self.coverage = Counter(), [], Counter()
        self.per_op, self.untraceable, self.grads = {}, set(), {}

    def check(self, name, case, fn, inputs, traced=None):
        try:
            gm, low = traced or (H.trace(fn, inputs), None)
        except Exception as e:   # noqa: BLE001
            self.problems.append((name, case, f"trace: {e!r}"[:200]))
            return Counter()
        problem, ops = H.run_pair(gm, inputs, low)
        self.ran[name] += 1
        self.coverage.update({k: 1 for k in ops})
        if problem:
            self.problems.append((name, case, problem))
        return ops


def relevant(info):
    """(graph, lowered graph) of the first float32 sample when the backend lowers some node of
    it; None when it lowers none; 'untraceable' when make_fx fails."""
    dts = dtypes_of(info)
    s = _first(info, dts[0]) if dts else None
    if s is None:
        return None
    call = H.Call(info, s)
    try:
        gm = H.trace(call.fn, call.tensors)
    except Exception:   # noqa: BLE001
        return "untraceable"
    low = H.lowered(gm)
    return (gm, low) if BK.report_of(low, "opinfo").hologram else None


@functools.lru_cache(maxsize=None)
def eager_run():
    r = Run()
    for info in H.op_db():
        name = H.name_of(info)
        if name in SKIPPED:
            continue
        rel = relevant(info)
        if rel == "untraceable":
            r.untraceable.add(name)
            continue
        if rel is None:
            continue
        fw = Counter()
        dts = dtypes_of(info)
        for dt in dts:
            for i, s in enumerate(_samples(info, dt)):
                if i == SAMPLES:
                    break
                call = H.Call(info, s)
                ops = r.check(name, f"{dt} sample {i}", call.fn, call.tensors,
                              rel if (dt, i) == (dts[0], 0) else None)
                if i == 0:
                    fw |= ops
                    sp = call.with_specials()
                    if sp is not None:
                        r.check(name, f"{dt} sample 0 with specials", sp.fn, sp.tensors)
        bw = Counter()
        gsamples = _samples(info, torch.float64, grad=True) if info.supports_autograd else ()
        for i, s in enumerate(gsamples):
            if i == GRAD_SAMPLES:
                break
            call = H.Call(info, s)
            gis = call.grad_inputs()
            torch.manual_seed(0)
            gos = [torch.randn_like(o) for o in H.diff_outputs(call, gis)] if gis else []
            if gos:
                r.grads[name] = r.grads.get(name, 0) + 1
                ops = r.check(name, f"float64 gradient {i}", H.grad_fn(call, gis, gos),
                              call.tensors + gos)
                if not bw:
                    bw = ops
        r.per_op[name] = (info, set(fw), set(bw))
    return r


def test_opinfo_eager_lowered_graphs_match_aten():
    r = eager_run()
    assert len(r.per_op) > 200, len(r.per_op)   # a few hundred OpInfos reach hologram
    undocumented = [p for p in r.problems if p[:2] not in DOCUMENTED]
    assert not undocumented, "\n".join(f"{n} [{c}]: {w}" for n, c, w in undocumented)


def test_documented_differences_still_differ():
    found = {p[:2] for p in eager_run().problems}
    assert set(DOCUMENTED) <= found, sorted(set(DOCUMENTED) - found)


def test_tables_name_opinfos_that_exist():
    names = {H.name_of(i) for i in H.op_db()}
    assert set(SKIPPED) | set(NOT_COMPILED) | {n for n, _ in DOCUMENTED} <= names


def test_untraceable_opinfos_are_the_known_ones():
    assert eager_run().untraceable == set(UNTRACEABLE)


def _op_names(ops):
    return {BK._op_name(op) for op in ops}


def test_decomposed_ops_are_decomposed():
    dec = {BK._op_name(op) for op in BK.decompositions(training=False)}
    assert {n for n, why in NOT_EXERCISED.items() if why is _DECOMPOSED} <= dec


def test_every_lowered_op_is_exercised():
    """Every TABLE entry and every op the fusion pass lowers is computed by hologram in at least
    one OpInfo sample (or NOT_EXERCISED says why not)."""
    cov = eager_run().coverage
    want = _op_names(TABLE) | _op_names(fused_ops())
    missing = sorted(want - set(cov) - set(NOT_EXERCISED))
    assert not missing, missing
    assert not set(NOT_EXERCISED) & set(cov), "NOT_EXERCISED lists ops that are exercised"


def compiled_cases():
    """Greedy cover: the fewest OpInfos whose first forward and gradient graphs compute every
    ATen op the eager run saw in hologram."""
    per = {n: v for n, v in eager_run().per_op.items() if n not in NOT_COMPILED}
    left = set().union(*(fw | bw for _, fw, bw in per.values()))
    chosen = []
    while left:
        name = max(sorted(per), key=lambda n: len((per[n][1] | per[n][2]) & left))
        gain = (per[name][1] | per[name][2]) & left
        if not gain:
            break
        chosen.append(name)
        left -= gain
    return chosen


def _compiled(fn):
    torch._dynamo.reset()
    return torch.compile(fn, backend="hologram", fullgraph=True, dynamic=False)


def _check_compiled(info, dt, grad):
    s = _first(info, dt, grad)
    call = H.Call(info, s)
    gis = call.grad_inputs() if grad else []
    if grad and not gis:
        return None
    n0 = len(BK.reports())
    cf = _compiled(call.fn)

    def results(f):
        ts = [t.detach().clone().requires_grad_(i in gis) for i, t in enumerate(call.tensors)]
        torch.manual_seed(0)
        try:
            with torch.set_grad_enabled(grad):
                outs = H.outputs(f(*ts))
        except Exception as e:   # noqa: BLE001
            return None, None, e
        diff = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        gs = None
        if gis and diff:
            torch.manual_seed(1)
            gos = [torch.randn_like(o) for o in diff]
            gs = list(torch.autograd.grad(diff, [ts[i] for i in gis], gos, allow_unused=True))
        return [o.detach() if isinstance(o, torch.Tensor) else o for o in outs], gs, None

    want, wg, werr = results(call.fn)
    got, gg, gerr = results(cf)
    if werr is not None or gerr is not None:
        if werr is None or gerr is None or type(werr) is not type(gerr):
            return f"raises: torch {werr!r}, compiled {gerr!r}"
        return None
    assert any(r.hologram for r in BK.reports()[n0:]), "nothing ran in hologram"
    problem = H.compare(got, want)
    if problem is None and wg is not None:
        problem = H.compare([g for g in gg if g is not None], [g for g in wg if g is not None],
                            H.GRAD_TOL)
        problem = problem and "gradient " + problem
    return problem


def test_opinfo_compiled_matches_eager():
    per = eager_run().per_op
    problems = []
    for name in compiled_cases():
        info = per[name][0]
        for dt, grad in ((dtypes_of(info)[0], False), (torch.float64, True)):
            if dt not in info.supported_dtypes("cpu") or (grad and not info.supports_autograd):
                continue
            p = _check_compiled(info, dt, grad)
            if p:
                problems.append(f"{name} [{dt}{' grad' if grad else ''}]: {p}")
    assert not problems, "\n".join(problems)


ERROR_INPUTS = 2   # per OpInfo of the compiled subset


def _outcome(fn, tensors, backend):
    """The exception type torch.compile(fn) raises with backend, or None when it returns."""
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend=backend, fullgraph=True, dynamic=False)(*tensors)
    except Exception as e:   # noqa: BLE001
        return e
    return None


def test_opinfo_error_inputs_raise_compiled():
    """torch's error_inputs of the compiled subset: compiled with hologram, each raises torch's
    exception type (or dynamo's wrapper of it, carrying it as __cause__), or does what
    torch.compile does with torch's own aot_eager backend (dynamo turns an error of its fake
    tensor run, a ValueError included, into TorchRuntimeError before any backend is called, and
    returns NotImplemented for a reflected operator on a Python number)."""
    per = eager_run().per_op
    problems, ran = [], 0
    for name in compiled_cases():
        info = per[name][0]
        try:
            errs = list(info.error_inputs("cpu"))[:ERROR_INPUTS]
        except Exception:   # noqa: BLE001 - no error_inputs for this OpInfo
            errs = []
        for e in errs:
            call = H.Call(info, e.sample_input)
            try:
                call.fn(*call.tensors)
                continue
            except Exception as werr:   # noqa: BLE001
                want = werr
            got = _outcome(call.fn, call.tensors, "hologram")
            ran += 1
            if got is not None and (isinstance(got, type(want)) or
                                    isinstance(got.__cause__, type(want))):
                continue
            ref = _outcome(call.fn, call.tensors, "aot_eager")
            if type(ref) is not type(got):
                problems.append(f"{name}: torch {want!r}, hologram {got!r}, aot_eager {ref!r}"
                                [:300])
    assert ran and not problems, "\n".join(problems)


def test_layer_norm_eps_outside_hologram_stays_torch():
    # an OpInfo sample has eps=-0.5: ATen takes it, hologram's kernel refuses it
    x = torch.randn(3, 4, dtype=torch.float64)
    f = _compiled(lambda x: torch.nn.functional.layer_norm(x, (4,), eps=-0.5))
    torch.testing.assert_close(f(x), torch.nn.functional.layer_norm(x, (4,), eps=-0.5),
                               equal_nan=True)   # a negative variance + eps: NaN in both
    assert "native_layer_norm" in BK.last_report().torch


def test_report_opinfo_counts(capsys):
    """Prints the run's counts (pytest -s shows them; docs/torch.md quotes them)."""
    r = eager_run()
    with capsys.disabled():
        print(f"\nOpInfo run: {len(r.per_op)} OpInfos reach hologram, {sum(r.ran.values())} "
              f"cases ({sum(r.grads.values())} gradient), {len(r.problems)} differences, "
              f"{len(r.untraceable)} untraceable, {len(compiled_cases())} compiled")
        print("hologram computed (cases per ATen op):",
              ", ".join(f"{k} {v}" for k, v in sorted(r.coverage.items())))
    assert r.coverage
