"""hologram_torch follows torch's rules, checked against torch itself: Python numbers and alpha
in promotion (dtypes x numbers x ops), clamp / where bounds, index values (negative ones raise),
class targets, reductions' dtype= and 0-d dims, softmax's dtype=, rms_norm's default eps,
binary_cross_entropy_with_logits' result dtype, addmm's zero coefficients, matmul's 1-D
gradient, embedding's max_norm accuracy, and the optimizers' all-or-nothing step."""
import math

import pytest

torch = pytest.importorskip("torch")
from conftest import import_hologram_torch  # noqa: E402

ht = import_hologram_torch()
F = ht.functional
TF = torch.nn.functional

TENSOR_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
                 torch.float16, torch.bfloat16, torch.float32, torch.float64]
NUMBERS = [0, 1, 2, -3, 7, 100, 1000, -300, 2 ** 40, 2.5, -0.5, 1e6, math.inf, math.nan, True,
           False]


def _tensor(dtype):
    """Values inside every dtype's range, zeros and negatives included."""
    v = torch.tensor([6, 9, 0, 1, -2, 127], dtype=torch.float64)
    if dtype == torch.bool:
        return v != 0
    if dtype == torch.uint8:
        v = v.abs()
    return v.to(dtype)


def _run(f):
    try:
        return f()
    except Exception as e:   # noqa: BLE001 - the class is what is compared
        return e


def _same(got, want, what):
    """Both raise the same class (hologram's may be a subclass), or both give one dtype and
    torch's values (NaN where torch's, f16/bf16 within an ulp)."""
    if isinstance(want, Exception):
        assert isinstance(got, type(want)), (what, want, got)
        return
    assert not isinstance(got, Exception), (what, want, got)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    tol = {torch.float16: 1e-3, torch.bfloat16: 8e-3}.get(want.dtype, 1e-6)
    torch.testing.assert_close(got, want, rtol=tol, atol=tol, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")


@pytest.mark.parametrize("dtype", TENSOR_DTYPES, ids=str)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_arithmetic_with_python_numbers_as_torch(name, dtype):
    x = _tensor(dtype)
    tf, hf = getattr(torch, name), getattr(F, name)
    for v in NUMBERS:
        _same(_run(lambda: hf(x, v)), _run(lambda: tf(x, v)), f"{name}({dtype}, {v!r})")


@pytest.mark.parametrize("dtype", TENSOR_DTYPES, ids=str)
@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha_as_torch(name, dtype):
    x = _tensor(dtype)
    tf, hf = getattr(torch, name), getattr(F, name)
    others = [_tensor(d) for d in (torch.int16, torch.int8, torch.float64, dtype)]
    for alpha in (2, -1, 1000, 0.5, True, 1):
        for y in others + [3, 2.5]:
            _same(_run(lambda: hf(x, y, alpha=alpha)), _run(lambda: tf(x, y, alpha=alpha)),
                  f"{name}({dtype}, {y!r}, alpha={alpha!r})")


def test_issue_examples_of_scalar_promotion():
    u8 = torch.tensor([6, 9], dtype=torch.uint8)
    assert F.div(u8, -3).tolist() == [-2.0, -3.0]
    _same(F.div(torch.tensor([6, 9], dtype=torch.int8), 1000),
          torch.div(torch.tensor([6, 9], dtype=torch.int8), 1000), "div(int8, 1000)")
    got = F.sub(torch.tensor([1.0], dtype=torch.float64), torch.tensor([20000], dtype=torch.int16),
                alpha=2)
    assert got.dtype == torch.float64 and got.tolist() == [-39999.0]


@pytest.mark.parametrize("dtype", TENSOR_DTYPES, ids=str)
def test_clamp_number_bounds_as_torch(dtype):
    x = _tensor(dtype)
    bounds = [(2, 6), (2.5, 6), (-1, None), (None, 7), (-1, 300), (0, 1), (True, None),
              (None, 1e6), (-0.5, 0.5)]
    for lo, hi in bounds:
        for f, name in ((F.clamp, "clamp"), (F.clip, "clip")):
            _same(_run(lambda: f(x, lo, hi)), _run(lambda: torch.clamp(x, lo, hi)),
                  f"{name}({dtype}, {lo!r}, {hi!r})")


@pytest.mark.parametrize("dtype", TENSOR_DTYPES, ids=str)
def test_where_with_numbers_as_torch(dtype):
    x, cond = _tensor(dtype), torch.tensor([True, False, True, False, True, False])
    for v in NUMBERS:
        _same(_run(lambda: F.where(cond, x, v)), _run(lambda: torch.where(cond, x, v)),
              f"where({dtype}, {v!r})")
        _same(_run(lambda: F.where(cond, v, x)), _run(lambda: torch.where(cond, v, x)),
              f"where({v!r}, {dtype})")


# ---- index values: torch refuses negative indices (hologram's ops count them from the end) ---
@pytest.mark.parametrize("bad", [-1, -3, 3, 7])
def test_negative_and_large_indices_raise_as_torch(bad):
    x = torch.randn(3, 4)
    w0 = torch.randn(3, 4)
    cases = [
        ("gather", lambda m: m.gather(x, 0, torch.tensor([[bad, 0, 1, 2]]))),
        ("index_select", lambda m: m.index_select(x, 0, torch.tensor([0, bad]))),
        ("embedding", lambda m: (TF if m is torch else F).embedding(torch.tensor([[1, bad]]),
                                                                     w0.clone())),
    ]
    for name, f in cases:
        want, got = _run(lambda: f(torch)), _run(lambda: f(F))
        assert isinstance(want, Exception), (name, want)
        _same(got, want, f"{name} with index {bad}")
    # max_norm writes the named rows: a refused call writes none
    w = w0.clone()
    with pytest.raises(IndexError):
        F.embedding(torch.tensor([0, bad]), w, max_norm=0.1)
    assert torch.equal(w, w0)


def test_indices_in_range_still_match_torch():
    x = torch.randn(3, 4)
    idx = torch.tensor([[2, 0, 1, 2]])
    assert torch.equal(F.gather(x, 0, idx), torch.gather(x, 0, idx))
    assert torch.equal(F.index_select(x, 1, torch.tensor([3, 0])),
                       torch.index_select(x, 1, torch.tensor([3, 0])))


@pytest.mark.parametrize("target", [-1, 3, -5])
def test_class_targets_out_of_range_raise_as_torch(target):
    x = torch.randn(2, 3)
    t = torch.tensor([target, 0])
    w = torch.rand(3)
    calls = [
        ("nll_loss", lambda m: m.nll_loss(x.log_softmax(1), t)),
        ("nll_loss weight", lambda m: m.nll_loss(x.log_softmax(1), t, weight=w)),
        ("cross_entropy", lambda m: m.cross_entropy(x, t)),
        ("cross_entropy weight", lambda m: m.cross_entropy(x, t, weight=w)),
        ("cross_entropy smoothing", lambda m: m.cross_entropy(x, t, label_smoothing=0.1)),
        ("cross_entropy both", lambda m: m.cross_entropy(x, t, weight=w, label_smoothing=0.2)),
    ]
    for name, f in calls:
        want, got = _run(lambda: f(TF)), _run(lambda: f(F))
        assert isinstance(want, IndexError), (name, want)
        assert isinstance(got, IndexError), (name, got)
    # the same target as ignore_index is skipped, as torch
    x64 = torch.randn(2, 3, dtype=torch.float64)
    for kw in ({}, {"weight": w.double()}, {"label_smoothing": 0.1}):
        _same(F.cross_entropy(x64, t, ignore_index=target, **kw),
              TF.cross_entropy(x64, t, ignore_index=target, **kw), f"ignore {target} {kw}")
    _same(F.nll_loss(x64, t, ignore_index=target), TF.nll_loss(x64, t, ignore_index=target),
          f"nll ignore {target}")


# ---- reductions, softmax, norms, losses ------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.bool, torch.int8, torch.uint8, torch.int32, torch.int64,
                                   torch.float16, torch.float32, torch.float64], ids=str)
def test_sum_dtype_as_torch(dtype):
    x = torch.tensor([[100, 27, 0], [1, 2, 3]], dtype=torch.int64)
    for d in (None, 0, 1):
        kw = {} if d is None else {"dim": d}
        _same(F.sum(x, dtype=dtype, **kw), torch.sum(x, dtype=dtype, **kw), f"sum {dtype} {d}")


@pytest.mark.parametrize("dim", [0, -1, [0], [-1]])
def test_reductions_of_0d_tensors_take_dim_0_and_minus_1(dim):
    x = torch.tensor(3.5)
    _same(F.sum(x, dim=dim), torch.sum(x, dim=dim), f"sum dim={dim}")
    _same(F.mean(x, dim=dim), torch.mean(x, dim=dim), f"mean dim={dim}")
    _same(F.sum(x, dim=dim, keepdim=True), torch.sum(x, dim=dim, keepdim=True), "keepdim")
    for bad in (1, -2):
        assert isinstance(_run(lambda: F.sum(x, dim=bad)), IndexError)
    g = torch.tensor(2.0, requires_grad=True)
    F.mean(g, dim=dim).backward()
    assert g.grad.item() == 1.0


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16],
                         ids=str)
def test_softmax_dtype_argument(dtype):
    x = torch.randn(3, 5)
    for hf, tf in ((F.softmax, torch.softmax), (F.log_softmax, torch.log_softmax)):
        _same(hf(x, 1, dtype=dtype), tf(x, 1, dtype=dtype), f"{hf.__name__} {dtype}")
        _same(hf(x, dim=0, dtype=dtype), TF.softmax(x, dim=0, dtype=dtype) if hf is F.softmax
              else TF.log_softmax(x, dim=0, dtype=dtype), "keyword form")
        _same(hf(x, 1, dtype), tf(x, 1, dtype), "torch.softmax's positional dtype")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64],
                         ids=str)
def test_rms_norm_default_eps_as_torch(dtype):
    # tiny values: the eps decides the result (bf16's own eps gave 0.11 where torch gives 0.73)
    x = (torch.randn(4, 8, dtype=torch.float64) * 1e-4).to(dtype)
    w = torch.rand(8, dtype=dtype)
    _same(F.rms_norm(x, [8]), TF.rms_norm(x, [8]), "rms_norm eps=None")
    _same(F.rms_norm(x, [8], w), TF.rms_norm(x, [8], w), "with weight")
    xg = x.detach().clone().requires_grad_(True)
    xt = x.detach().clone().requires_grad_(True)
    F.rms_norm(xg, [8]).sum().backward()
    TF.rms_norm(xt, [8]).sum().backward()
    tol = {torch.float16: 2e-2, torch.bfloat16: 6e-2}.get(dtype, 1e-5)
    torch.testing.assert_close(xg.grad, xt.grad, rtol=tol, atol=tol * xt.grad.abs().max().item())


def test_binary_cross_entropy_with_logits_dtype_as_torch():
    dts = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
    for xd in dts:
        for td in dts:
            for pw in (None, torch.full((3,), 2.0, dtype=torch.float64)):
                for red in ("mean", "none"):
                    x, t = torch.randn(3).to(xd), torch.rand(3).to(td)
                    want = TF.binary_cross_entropy_with_logits(x, t, pos_weight=pw,
                                                               reduction=red)
                    got = F.binary_cross_entropy_with_logits(x, t, pos_weight=pw, reduction=red)
                    assert got.dtype == want.dtype, (xd, td, got.dtype, want.dtype)
                    lo = torch.float16 in (xd, td) or torch.bfloat16 in (xd, td)
                    tol = 2e-2 if lo else 1e-6
                    torch.testing.assert_close(got.double(), want.double(), rtol=tol, atol=tol)
    x = torch.randn(4, dtype=torch.float32, requires_grad=True)
    t = torch.rand(4, dtype=torch.float64)
    F.binary_cross_entropy_with_logits(x, t).backward()
    assert x.grad.dtype == torch.float32
    x2 = x.detach().clone().requires_grad_(True)
    TF.binary_cross_entropy_with_logits(x2, t).backward()
    torch.testing.assert_close(x.grad, x2.grad)


def test_addmm_zero_alpha_and_beta_as_torch():
    big = torch.full((1, 2), 1e38)
    for m1 in (big, torch.full((1, 2), math.nan)):
        _same(F.addmm(torch.ones(1, 1), m1, big.T, alpha=0),
              torch.addmm(torch.ones(1, 1), m1, big.T, alpha=0), "alpha=0")
    for shape in ((2, 0), (2, 3)):
        c = torch.randn(2, 2, requires_grad=True)
        a, b = torch.randn(shape), torch.randn(tuple(reversed(shape)))
        got = F.addmm(c, a, b, beta=0)
        want = torch.addmm(c, a, b, beta=0)
        assert got.requires_grad and want.requires_grad
        _same(got.detach(), want.detach(), f"beta=0 {shape}")
        got.sum().backward()
        assert torch.equal(c.grad, torch.zeros(2, 2))
    c = torch.full((2, 2), math.nan, requires_grad=True)
    _same(F.addmm(c, torch.ones(2, 3), torch.ones(3, 2), beta=0).detach(),
          torch.addmm(c, torch.ones(2, 3), torch.ones(3, 2), beta=0).detach(), "NaN input")


def test_matmul_of_two_vectors_has_a_gradient():
    a = torch.randn(5, dtype=torch.float64, requires_grad=True)
    b = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda u, v: F.matmul(u, v), (a, b))
    ga, gb = torch.autograd.grad(F.matmul(a, b), (a, b))
    assert torch.allclose(ga, b) and torch.allclose(gb, a)
    for shapes in (((5,), (5, 3)), ((4, 5), (5,)), ((2, 4, 5), (5,)), ((5,), (2, 5, 3))):
        u = torch.randn(shapes[0], dtype=torch.float64, requires_grad=True)
        v = torch.randn(shapes[1], dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(lambda p, q: F.matmul(p, q), (u, v)), shapes


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64],
                         ids=str)
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_embedding_max_norm_as_accurate_as_torch(dtype, norm_type):
    g = torch.Generator().manual_seed(7)
    w0 = (torch.randn(10, 16, generator=g, dtype=torch.float64) * 3).to(dtype)
    idx = torch.tensor([[1, 2, 2, 5], [5, 9, 0, 1]])
    ref = w0.double()
    for r in idx.unique():
        n = ref[r].norm(norm_type)
        if n > 1.0:
            ref[r] *= 1.0 / (n + 1e-7)
    wh, wt = w0.clone(), w0.clone()
    out = F.embedding(idx, wh, max_norm=1.0, norm_type=norm_type)
    TF.embedding(idx, wt, max_norm=1.0, norm_type=norm_type)
    err_hg = (wh.double() - ref).abs().max().item()
    err_torch = (wt.double() - ref).abs().max().item()
    # scaled rows have entries <= 1: an ulp of the dtype at 1 (bf16 was 0.08 off before)
    assert err_hg <= max(torch.finfo(dtype).eps, 2 * err_torch), (err_hg, err_torch)
    untouched = [r for r in range(10) if r not in idx.unique().tolist()]
    assert torch.equal(wh[untouched], w0[untouched])
    assert torch.equal(out, wh[idx])


# ---- optimizers: a refused step changes nothing ------------------------------------------------
def _bits(t):
    return t.detach().clone().view(torch.int8 if t.element_size() == 1 else
                                   {2: torch.int16, 4: torch.int32, 8: torch.int64}[
                                       t.element_size()])


def _snapshot(opt):
    params = [p for g in opt.param_groups for p in g["params"]]
    state = {i: {k: (_bits(v) if isinstance(v, torch.Tensor) else v)
                 for k, v in opt.state[p].items()} for i, p in enumerate(params)
             if p in opt.state}
    return [_bits(p) for p in params], state


def _assert_same(a, b):
    (pa, sa), (pb, sb) = a, b
    assert len(pa) == len(pb) and all(torch.equal(x, y) for x, y in zip(pa, pb))
    assert sa.keys() == sb.keys()
    for i in sa:
        assert sa[i].keys() == sb[i].keys()
        for k in sa[i]:
            x, y = sa[i][k], sb[i][k]
            assert torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y, (i, k)


def _params(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=g, dtype=torch.float64).to(dtype))
            for s in ((4, 3), (5,), (2, 2), (3,))]


def _grads(ps, seed):
    g = torch.Generator().manual_seed(seed)
    for p in ps:
        p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype)


@pytest.mark.parametrize("opt_name", ["Adam", "AdamW"])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("fresh", [False, True])
def test_refused_step_is_all_or_nothing_as_torch(opt_name, amsgrad, fresh):
    for make in (getattr(ht.optim, opt_name), getattr(torch.optim, opt_name)):
        ps = _params(torch.float32, 0)
        opt = make(ps, lr=0.1, amsgrad=amsgrad, weight_decay=0.01)
        if not fresh:   # moments and step counters to keep
            _grads(ps, 1)
            opt.step()
        _grads(ps, 2)
        ps[2].grad = ps[2].grad.to_sparse()   # the third of four is refused
        before = _snapshot(opt)
        with pytest.raises(RuntimeError, match="sparse"):
            opt.step()
        after = _snapshot(opt)
        if make.__module__.startswith("torch") and fresh:
            # torch makes the earlier parameters' (zero) state before it refuses; its
            # parameters stay as they were
            _assert_same((before[0], {}), (after[0], {}))
        else:
            _assert_same(before, after)
        ps[2].grad = ps[2].grad.to_dense()
        opt.step()   # the same step goes through once the gradient is dense
        assert not torch.equal(_bits(ps[0]), before[0][0])


def _stepped_adam(seed):
    """Adam over four parameters after one step, with the next step's gradients."""
    ps = _params(torch.float32, seed)
    opt = ht.optim.Adam(ps, lr=0.1)
    _grads(ps, seed + 1)
    opt.step()
    _grads(ps, seed + 2)
    return ps, opt


def test_refused_state_or_hyperparameter_changes_nothing():
    ps, opt = _stepped_adam(3)
    good = opt.state[ps[3]]["exp_avg"]
    opt.state[ps[3]]["exp_avg"] = torch.zeros(7)   # a state of another shape (a wrong load)
    before = _snapshot(opt)
    with pytest.raises(RuntimeError, match="exp_avg"):
        opt.step()
    _assert_same(before, _snapshot(opt))
    opt.state[ps[3]]["exp_avg"] = good
    opt.param_groups[0]["lr"] = math.nan
    before = _snapshot(opt)
    with pytest.raises(ValueError, match="learning rate"):
        opt.step()
    _assert_same(before, _snapshot(opt))
    # a refused parameter in a later group: the earlier group is not updated either
    opt.param_groups[0]["lr"] = 0.1
    a, b = _params(torch.float64, 6)[:2]
    opt2 = ht.optim.AdamW([{"params": [a]}, {"params": [b], "lr": 0.2}])
    a.grad, b.grad = torch.ones_like(a), torch.ones_like(b).to_sparse()
    before = _snapshot(opt2)
    with pytest.raises(RuntimeError, match="sparse"):
        opt2.step()
    _assert_same(before, _snapshot(opt2))


def test_gradient_or_state_sharing_memory_is_refused_before_any_update():
    a, b = _params(torch.float32, 8)[:2]
    opt = ht.optim.Adam([a, b], lr=0.1)
    a.grad, b.grad = torch.ones_like(a), torch.ones_like(b)
    opt.step()
    before = _snapshot(opt)
    b.grad = b.detach()   # the gradient is the parameter's own memory
    with pytest.raises(RuntimeError, match="shares memory"):
        opt.step()
    _assert_same(before, _snapshot(opt))
    b.grad = torch.ones_like(b)
    opt.state[b]["exp_avg_sq"] = opt.state[b]["exp_avg"]   # one moment twice
    before = _snapshot(opt)
    with pytest.raises(RuntimeError, match="shares memory"):
        opt.step()
    _assert_same(before, _snapshot(opt))


@pytest.mark.parametrize("case", ["grad is param, fresh", "moments overlap by half",
                                  "transposed moments, one memory", "amsgrad max is exp_avg"])
def test_partly_shared_memory_is_refused_before_any_update(case):
    # the step screens contiguous ranges and checks the rest exactly: each kind of overlap is
    # refused with nothing written (the first parameter would be updated first)
    a = _params(torch.float32, 12)[0]
    b = torch.nn.Parameter(torch.randn(4, 3))
    opt = ht.optim.Adam([a, b], lr=0.1, amsgrad=case.startswith("amsgrad"))
    a.grad, b.grad = torch.ones_like(a), torch.ones_like(b)
    if case.endswith("fresh"):
        b.grad = b.detach()
    else:
        opt.step()
        st = opt.state[b]
        if case == "moments overlap by half":
            buf = torch.zeros(18)
            st["exp_avg"], st["exp_avg_sq"] = buf[:12].view(4, 3), buf[6:].view(4, 3)
        elif case == "transposed moments, one memory":
            base = torch.zeros(4, 4)   # rows 0-2 and rows 1-3, each transposed
            st["exp_avg"], st["exp_avg_sq"] = base[:3].t(), base[1:].t()
            assert not st["exp_avg"].is_contiguous()
        else:
            st["max_exp_avg_sq"] = st["exp_avg"]
    before = _snapshot(opt)
    with pytest.raises(RuntimeError, match="shares memory"):
        opt.step()
    _assert_same(before, _snapshot(opt))


def test_incomplete_or_foreign_state_is_refused_before_any_update():
    ps, opt = _stepped_adam(9)
    good = opt.state[ps[3]]
    for bad, err, match in (({"step": good["step"]}, KeyError, "exp_avg"),   # as torch's Adam
                            (dict(good, exp_avg_sq=0.5), RuntimeError, "exp_avg_sq .a float"),
                            ({"exp_avg": good["exp_avg"], "exp_avg_sq": good["exp_avg_sq"]},
                             KeyError, "step"),
                            (dict(good, step=torch.ones(2)), RuntimeError, "step counter"),
                            (dict(good, step="3"), RuntimeError, "step counter is a str")):
        opt.state[ps[3]] = bad
        before = _snapshot(opt)
        with pytest.raises(err, match=match):
            opt.step()
        _assert_same(before, _snapshot(opt))
    opt.state[ps[3]] = good
    opt.step()
