"""hologram_torch.functional takes torch's own signatures (python/hologram_torch/_signatures.py).

torch's OpInfo samples (torch.testing._internal.common_methods_invocations.op_db, the entries of
our functions' torch ops; the first 8 per dtype, float32 and float64) are re-spelled in every form
torch's signature allows (as given, all positional, all keyword with torch's names, mixed) and
each spelling is run through torch and through hologram_torch.functional: both return the same
values, dtype and shape, or both raise the same exception type; the first float64 samples' input
gradients match torch's. torch's error_inputs of the same ops must raise torch's exception type
here too. Then the calls the issue found wrong, unknown and duplicate keywords, out=, and
hologram's executor argument.
"""
import itertools
import sys
import types
import unittest

import pytest
import torch
import torch.nn.functional as TF

import hologram as hg
import hologram_torch.functional as F
from hologram_torch import _signatures as SG

try:
    import expecttest  # noqa: F401 (torch's test utilities import it; scripts/python_env.sh)
except ImportError:   # a venv made before it was listed: importing op_db reaches only this
    _m = types.ModuleType("expecttest")
    _m.TestCase = unittest.TestCase
    sys.modules["expecttest"] = _m

pytestmark = pytest.mark.filterwarnings(   # torch's own, for the legacy arguments it is given
    "ignore:size_average and reduce args will be deprecated:UserWarning",
    "ignore:An output with one or more elements was resized:UserWarning")

# our function: (torch's function, the OpInfo entries' name)
REFS = {n: (getattr(torch, n), n) for n in (
    "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "sigmoid", "tanh", "softmax",
    "log_softmax", "matmul", "sum", "mean", "cat", "stack", "where", "clamp", "bmm", "addmm",
    "index_select", "gather")}
REFS["clip"] = (torch.clip, "clamp")
for _n in ("relu", "gelu", "silu", "softplus", "layer_norm", "rms_norm", "linear", "mse_loss",
           "cross_entropy", "binary_cross_entropy_with_logits", "binary_cross_entropy",
           "nll_loss", "embedding"):
    REFS[_n] = (getattr(TF, _n), "nn.functional." + _n)
SAMPLES = 8
DTYPES = (torch.float32, torch.float64)
TOL = {torch.float32: dict(rtol=2e-5, atol=2e-5), torch.float64: dict(rtol=1e-9, atol=1e-9)}


def test_every_function_has_a_torch_reference():
    # dropout is random: its forms are checked in test_dropout_forms
    assert set(F.__all__) == set(REFS) | {"dropout"}


_op_db = None


def opinfos(name):
    global _op_db
    if _op_db is None:
        from torch.testing._internal.common_methods_invocations import op_db
        _op_db = op_db
    return [o for o in _op_db if o.name == name and o.variant_test_name != "complex"]


def torch_call(opname, sample):
    """(args, kwargs) of the torch function for an OpInfo sample (its op's own argument
    order, where the OpInfo wraps the function in a lambda)."""
    args, kw = (sample.input,) + tuple(sample.args), dict(sample.kwargs)
    if opname == "where":            # lambda self, condition, other: where(condition, self, other)
        args = (args[1], args[0]) + args[2:]
    elif opname == "nn.functional.embedding":   # lambda weight, idx, **kw: embedding(idx, weight)
        args = (args[1], args[0]) + args[2:]
    return args, kw


def spellings(ref, args, kw):
    """The forms torch's signature allows for the call ref(*args, **kw): as given, all
    positional, all keyword (torch's names), the first positional and the rest keyword; then
    two it refuses (an unknown keyword, the first argument twice)."""
    yield args, kw
    try:
        bound = SG.binder(ref.__name__, ref).bind(args, kw)
    except TypeError:
        return   # a call torch's signature does not take: as given only
    form = next(f for f in SG.binder(ref.__name__, ref).forms if f.name == bound.overload)
    pos = [p.name for p in form.params if not p.kw_only]
    given = dict(zip(pos, args), **kw)   # the values as the caller wrote them
    kw_only = {k: v for k, v in given.items() if k not in pos}
    last = max((pos.index(k) for k in given if k in pos), default=-1)
    # all positional: torch's defaults fill the gaps before the last given one
    yield tuple(given.get(p, bound[p]) for p in pos[:last + 1]), kw_only
    yield (), dict(given)
    if pos and pos[0] in given:
        yield (given[pos[0]],), {k: v for k, v in given.items() if k != pos[0]}
        # and what torch refuses: a keyword it does not have, an argument given twice
        yield args, dict(kw, bogus_keyword=1)
        yield (given[pos[0]],), {pos[0]: given[pos[0]]}


def run(f, args, kw):
    try:
        return f(*args, **kw), None
    except Exception as e:   # noqa: BLE001 (compared with torch's)
        return None, e


def same(ours, theirs, dtype):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b, dtype)
        return
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ours.is_sparse or theirs.is_sparse:
        ours, theirs = ours.to_dense(), theirs.to_dense()
    torch.testing.assert_close(ours, theirs, equal_nan=True, **TOL[dtype])


def clone(v):
    """Fresh tensors for a call (embedding's max_norm renormalises its weight in place)."""
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, (tuple, list)):
        return type(v)(clone(e) for e in v)
    return v


@pytest.mark.parametrize("name", sorted(REFS))
def test_opinfo_samples_in_every_spelling(name):
    ref, opname = REFS[name]
    ours = getattr(F, name)
    infos = opinfos(opname)
    assert infos, f"no OpInfo named {opname}"
    checked = 0
    for info, dtype in itertools.product(infos, DTYPES):
        if dtype not in info.supported_dtypes("cpu"):
            continue
        for sample in itertools.islice(info.sample_inputs("cpu", dtype), SAMPLES):
            args, kw = torch_call(opname, sample)
            for a, k in spellings(ref, args, kw):
                theirs, terr = run(ref, clone(a), clone(k))
                mine, err = run(ours, clone(a), clone(k))
                where = f"{name}(*{a!r:.300}, **{k!r:.200})"
                if terr is not None:
                    assert err is not None, f"{where}: torch raises {terr!r}, ours returns"
                    assert type(err) is type(terr) or isinstance(err, type(terr)), (
                        f"{where}: torch raises {terr!r}, ours {err!r}")
                else:
                    assert err is None, f"{where}: torch returns, ours raises {err!r}"
                    same(mine, theirs, dtype)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("name", sorted(REFS))
def test_opinfo_error_inputs_raise_torchs_type(name):
    ref, opname = REFS[name]
    for info in opinfos(opname):
        if info.error_inputs_func is None:
            continue
        for e in itertools.islice(info.error_inputs("cpu"), SAMPLES):
            args, kw = torch_call(opname, e.sample_input)
            # the tensors as given (some error inputs alias out= with an input)
            with pytest.raises(e.error_type):
                ref(*args, **kw)   # the OpInfo's claim, checked on this torch
            with pytest.raises(e.error_type):
                getattr(F, name)(*args, **kw)


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, generator=torch.Generator().manual_seed(sum(shape)), dtype=dtype)


def test_the_issues_positional_calls():
    x, t = rand(4, 5), torch.tensor([0, 3, 1, 4])
    assert F.cross_entropy(x, t, None, None, -100, None, "sum").item() == pytest.approx(
        TF.cross_entropy(x, t, reduction="sum").item(), rel=1e-6)
    p, y = torch.rand(4, 5), torch.rand(4, 5)
    torch.testing.assert_close(F.binary_cross_entropy(p, y, None, None, None, "sum"),
                               TF.binary_cross_entropy(p, y, reduction="sum"))
    lp = torch.log_softmax(x, 1)
    assert F.nll_loss(lp, t, None, None, -100, None, "none").shape == (4,)
    w = rand(10, 3) * 5
    w2 = w.clone()
    F.embedding(torch.tensor([1, 2]), w, None, 1.0)          # positional max_norm
    TF.embedding(torch.tensor([1, 2]), w2, None, 1.0)
    torch.testing.assert_close(w, w2)
    assert w[1].norm() <= 1.0 + 1e-6
    assert F.softmax(x, 1, torch.float64).dtype == torch.float64   # torch.softmax's dtype
    assert F.log_softmax(x, 1, torch.float64).dtype == torch.float64


def test_unknown_duplicate_and_surplus_arguments_raise_typeerror():
    x = rand(3, 4)
    for call, ref in ((lambda f: f(x, dimm=1), torch.sum),
                      (lambda f: f(x, 1, dim=1), torch.sum),
                      (lambda f: f(x, x, x), torch.add),
                      (lambda f: f(x, 1, False, torch.float64), torch.sum),
                      (lambda f: f(x, keepdim=True), torch.sum),
                      (lambda f: f(x, 1, 1), torch.sum),              # keepdim must be bool
                      (lambda f: f(x, 1.0), torch.softmax),           # dim must be int
                      (lambda f: f(x, dim=1, _stacklevel=3), torch.softmax),
                      (lambda f: f(x, x, self=x), torch.add),
                      (lambda f: f(x), torch.add)):
        with pytest.raises(TypeError):
            call(ref)
        with pytest.raises(TypeError):
            call(getattr(F, ref.__name__))
    with pytest.raises(TypeError, match="unexpected keyword"):
        F.relu(x, foo=1)
    with pytest.raises(TypeError, match="multiple values"):
        F.cross_entropy(x, torch.tensor([0, 1, 2]), None, weight=None)
    with pytest.raises(TypeError):
        F.gelu(x, "tanh")   # approximate is keyword-only, as torch's
    with pytest.raises(TypeError):
        F.cat(x, x)         # tensors is one sequence


def test_torchs_keyword_names():
    x, y = rand(3, 4), rand(3, 4) + 3
    torch.testing.assert_close(F.add(input=x, other=y, alpha=2), torch.add(x, y, alpha=2))
    torch.testing.assert_close(F.cat(tensors=[x, y], dim=1), torch.cat([x, y], 1))
    torch.testing.assert_close(F.where(condition=x > 0, input=x, other=y),
                               torch.where(x > 0, x, y))
    torch.testing.assert_close(F.sum(input=x, dim=(0, 1), keepdim=True, dtype=torch.float64),
                               torch.sum(x, (0, 1), True, dtype=torch.float64))
    torch.testing.assert_close(F.linear(input=x, weight=y), TF.linear(x, y))
    torch.testing.assert_close(F.clamp(x, min=torch.tensor(-0.5)),
                               torch.clamp(x, torch.tensor(-0.5)))


@pytest.mark.parametrize("name,args", [
    ("add", lambda: (rand(3, 4), rand(3, 4))), ("sum", lambda: (rand(3, 4), 1)),
    ("softmax", lambda: (rand(3, 4), 1)), ("matmul", lambda: (rand(3, 4), rand(4, 2))),
    ("cat", lambda: ([rand(3, 4), rand(2, 4)],)), ("clamp", lambda: (rand(3, 4), -0.5, 0.5)),
    ("gelu", lambda: (rand(3, 4),)), ("linear", lambda: (rand(3, 4), rand(2, 4)))])
def test_out_is_torchs(name, args):
    """out= runs torch's own function: the result written into out (resized), torch's dtype
    rule and error."""
    a = args()
    ref = getattr(torch, name, None) or getattr(TF, name)
    want = ref(*a)
    out = torch.empty(0)
    assert getattr(F, name)(*a, out=out) is out
    torch.testing.assert_close(out, want)
    # an int64 out: torch's dtype rule (sum casts into it, the others raise)
    theirs, terr = run(ref, a, {"out": torch.empty(0, dtype=torch.long)})
    mine, err = run(getattr(F, name), a, {"out": torch.empty(0, dtype=torch.long)})
    assert type(err) is type(terr) and str(err) == str(terr)
    if terr is None:
        assert torch.equal(mine, theirs)


def test_arguments_hologram_does_not_take_run_torchs():
    x, y = rand(3, 4), rand(3, 4)
    for mode in ("floor", "trunc"):
        torch.testing.assert_close(F.div(x, y, rounding_mode=mode), torch.div(x, y,
                                                                             rounding_mode=mode))
    lp, t = torch.log_softmax(x, 1), torch.tensor([0, 3, 1])
    torch.testing.assert_close(F.nll_loss(lp, t, size_average=False),
                               TF.nll_loss(lp, t, size_average=False))
    torch.testing.assert_close(F.mse_loss(x, y, reduce=False), TF.mse_loss(x, y, reduce=False))
    ours, theirs = F.where(x > 0), torch.where(x > 0)
    assert type(ours) is tuple and all(torch.equal(a, b) for a, b in zip(ours, theirs))
    torch.testing.assert_close(F.where(x > 0, 2.0, 3.0), torch.where(x > 0, 2.0, 3.0))
    xi = x.clone()
    assert F.silu(xi, True) is xi and torch.equal(xi, TF.silu(x))


def test_dropout_forms():
    x = torch.ones(1000)
    for args, kw in (((x, 0.3), {}), ((x,), {"p": 0.3}), ((), {"input": x, "p": 0.3}),
                     ((x, 0.3, True, False), {})):
        y = F.dropout(*args, **kw)
        assert set(y.unique().tolist()) <= {0.0, torch.tensor(1 / 0.7).item()}
        assert 0.2 < (y == 0).float().mean().item() < 0.4
    assert F.dropout(x, 0.3, False) is x   # positional training
    with pytest.raises(TypeError):
        F.dropout(x, 0.3, generator=torch.Generator())   # torch's dropout has no generator=


def test_executor_first_or_by_keyword():
    ex = hg.default_cpu_executor()
    x, y = rand(3, 4), rand(3, 4)
    for f, args in ((F.add, (x, y)), (F.sum, (x, 1)), (F.cross_entropy, (x, torch.tensor(
            [0, 1, 2])))):
        want = getattr(torch, f.__name__, None) or getattr(TF, f.__name__)
        torch.testing.assert_close(f(ex, *args), want(*args))
        torch.testing.assert_close(f(*args, executor=ex), want(*args))
        with pytest.raises(TypeError, match="twice"):
            f(ex, *args, executor=ex)


def test_python_functions_arguments_of_other_types_behave_as_torchs():
    """torch.nn.functional's Python functions hand their arguments to builtins that check
    them: a value of another type than the annotation runs torch's function (which refuses it
    with its own error, or takes it, as relu's inplace=1)."""
    x, t = rand(5, 3), torch.tensor([0, 1, 2, 0, 1])
    calls = [lambda m: m.embedding(torch.tensor([1, 2]), x, padding_idx=1.5),
             lambda m: m.cross_entropy(x, t, ignore_index=1.5),
             lambda m: m.nll_loss(torch.log_softmax(x, 1), t, ignore_index=True),
             lambda m: m.dropout(x, 0.5, training=None),
             lambda m: m.layer_norm(x, 3),
             lambda m: m.layer_norm(x, [3], eps="1e-5"),
             lambda m: m.mse_loss(x, [1.0]),
             lambda m: m.cross_entropy(x, t, reduction=None),
             lambda m: m.relu(x.clone(), 1),
             lambda m: m.dropout(x, 0.0, True, 0)]
    for call in calls:
        theirs, terr = run(lambda: call(TF), (), {})
        mine, err = run(lambda: call(F), (), {})
        assert type(err) is type(terr), (terr, err)
        if terr is None:
            torch.testing.assert_close(mine, theirs)


def test_numbers_and_0d_tensors_take_torchs_overloads():
    """Which overload a call takes (Tensor before Scalar, numbers for add's tensors, 0-d
    tensors for an int or a Scalar) decides the result's dtype: each as torch."""
    x = rand(3, 4)
    c, xi = x > 0, torch.arange(12).reshape(3, 4)
    calls = [lambda m: m.where(c, 2.0, x), lambda m: m.where(c, x, 2),
             lambda m: m.where(c, xi, 2.5), lambda m: m.where(c, 2, xi),
             lambda m: m.clamp(xi, torch.tensor(1), torch.tensor(5)),
             lambda m: m.clamp(xi, 1.5), lambda m: m.clip(x, min=torch.tensor(0.1)),
             lambda m: m.add(xi, 2.5), lambda m: m.add(2.5, xi), lambda m: m.mul(True, xi),
             lambda m: m.sub(xi, x, alpha=2), lambda m: m.add(x, x, alpha=torch.tensor(2.0)),
             lambda m: m.div(xi, 2), lambda m: m.sum(xi, dtype=float),
             lambda m: m.mean(x, (0, 1), True), lambda m: m.softmax(x, torch.tensor(1)),
             lambda m: m.index_select(x, torch.tensor(1), torch.tensor([0])),
             lambda m: m.cat((x, xi)), lambda m: m.stack([x, x], -1)]
    for call in calls:
        theirs, ours = call(torch), call(F)
        assert ours.dtype == theirs.dtype
        torch.testing.assert_close(ours, theirs)


def _leaves(v, out):
    """The floating tensors of a call's arguments, as fresh leaves that require grad."""
    if isinstance(v, torch.Tensor):
        if v.is_floating_point() and not v.is_sparse:
            leaf = v.detach().clone().requires_grad_()
            out.append(leaf)
            return leaf
        return v
    if isinstance(v, (tuple, list)):
        return type(v)(_leaves(e, out) for e in v)
    if isinstance(v, dict):
        return {k: _leaves(e, out) for k, e in v.items()}
    return v


GRAD_SAMPLES = 3


@pytest.mark.parametrize("name", sorted(REFS))
def test_opinfo_samples_float64_gradients(name):
    """The gradients of each input of the first float64 samples, through torch and ours."""
    ref, opname = REFS[name]
    compared = 0
    for info in opinfos(opname):
        if not info.supports_autograd or torch.float64 not in info.supported_dtypes("cpu"):
            continue
        for sample in itertools.islice(info.sample_inputs("cpu", torch.float64), GRAD_SAMPLES):
            args, kw = torch_call(opname, sample)
            grads = []
            for f in (ref, getattr(F, name)):
                leaves = []
                # a loss's class weights take no gradient (torch refuses one)
                fixed = {"weight"} if "loss" in name or "entropy" in name else set()
                a = _leaves(args, leaves)
                k = {n: v if n in fixed else _leaves(v, leaves) for n, v in kw.items()}
                out = f(*a, **k)
                if not leaves or not out.requires_grad:
                    break
                g = torch.autograd.grad(out, leaves, torch.ones_like(out), allow_unused=True)
                grads.append([torch.zeros_like(l) if d is None else d
                              for l, d in zip(leaves, g)])
            if len(grads) == 2:
                for mine, theirs in zip(grads[1], grads[0]):
                    torch.testing.assert_close(mine, theirs, rtol=1e-7, atol=1e-7)
                compared += 1
    assert compared > 0
