"""hologram_torch.optim (Adam, AdamW on the C library's hg_adam_step) against torch.optim on
the same parameters and gradients (on CPU tensors, and on CUDA tensors where torch has a GPU:
the `torch_device` fixture): every option, f64/f32/f16/bf16, param groups,
non-contiguous parameters, state_dicts loaded both ways, closures, refusals; and the digits MLP
trained with it on the same loss curve as torch.nn + torch.optim.Adam."""
import copy

import pytest

torch = pytest.importorskip("torch")
import hologram as hg  # noqa: E402
from conftest import import_hologram_torch  # noqa: E402

ht = import_hologram_torch()
O = ht.optim

TOL = {torch.float64: (1e-12, 1e-14), torch.float32: (2e-6, 1e-7),
       torch.float16: (2e-3, 1e-3), torch.bfloat16: (2e-2, 1e-2)}


def _pair(dtype, seed=0, shapes=((20, 30), (20,), (5, 20)), device="cpu"):
    g = torch.Generator().manual_seed(seed)
    a = [torch.nn.Parameter(torch.randn(s, generator=g).to(device, dtype)) for s in shapes]
    b = [torch.nn.Parameter(p.detach().clone()) for p in a]
    return a, b


def _run(ours, theirs, pa, pb, steps, seed=1, grad_scale=1.0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        for p, q in zip(pa, pb):
            gr = (torch.randn(p.shape, generator=g) * grad_scale).to(p.device, p.dtype)
            p.grad, q.grad = gr.clone(), gr.clone()
        ours.step()
        theirs.step()
        for p, q in zip(pa, pb):
            rtol, atol = TOL[p.dtype]
            torch.testing.assert_close(p.detach(), q.detach(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.05}, {"amsgrad": True},
                                {"maximize": True, "amsgrad": True},
                                {"betas": (0.0, 0.5), "eps": 1e-3},
                                {"betas": (0.3, 0.99), "weight_decay": 0.1,
                                 "decoupled_weight_decay": True}])
def test_adam_matches_torch(dtype, kw, torch_device):
    pa, pb = _pair(dtype, device=torch_device)
    _run(O.Adam(pa, lr=1e-2, **kw), torch.optim.Adam(pb, lr=1e-2, **kw), pa, pb, 6)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.3, "amsgrad": True}])
def test_adamw_matches_torch(dtype, kw, torch_device):
    pa, pb = _pair(dtype, device=torch_device)
    _run(O.AdamW(pa, lr=3e-2, **kw), torch.optim.AdamW(pb, lr=3e-2, **kw), pa, pb, 6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_parameters_match_torch(dtype, torch_device):
    # gradients of about 1: (1 - beta2) g^2 stays normal in f16 (below it underflows there
    # exactly as in torch's own f16 update)
    pa, pb = _pair(dtype, device=torch_device)
    _run(O.Adam(pa, lr=1e-2, eps=1e-4), torch.optim.Adam(pb, lr=1e-2, eps=1e-4), pa, pb, 4)


def test_threaded_size_and_noncontiguous_parameters():
    base = torch.randn(400, 300)
    pa = [torch.nn.Parameter(base.clone()), torch.nn.Parameter(base.clone().t())]  # 120K, view
    pb = [torch.nn.Parameter(p.detach().clone()) for p in pa]
    assert not pa[1].is_contiguous()
    _run(O.Adam(pa, lr=1e-3, weight_decay=0.01), torch.optim.Adam(pb, lr=1e-3, weight_decay=0.01),
         pa, pb, 3)


def test_param_groups_and_skipped_parameters():
    pa, pb = _pair(torch.float32)
    groups = lambda ps: [{"params": ps[:2], "lr": 1e-2}, {"params": ps[2:], "lr": 1e-1,
                                                          "amsgrad": True}]
    ours, theirs = O.Adam(groups(pa)), torch.optim.Adam(groups(pb))
    _run(ours, theirs, pa, pb, 2)
    before = pa[0].detach().clone()
    pa[0].grad = None
    pb[0].grad = None
    ours.step()
    assert torch.equal(pa[0].detach(), before)   # no gradient: untouched, as torch


def test_state_dict_loads_both_ways(torch_device):
    pa, pb = _pair(torch.float32, device=torch_device)
    ours, theirs = O.Adam(pa, lr=1e-2, amsgrad=True), torch.optim.Adam(pb, lr=1e-2, amsgrad=True)
    _run(ours, theirs, pa, pb, 3)
    sd = ours.state_dict()
    assert set(sd["state"][0]) == set(theirs.state_dict()["state"][0])
    assert sd["state"][0]["step"].dtype == theirs.state_dict()["state"][0]["step"].dtype
    # ours -> a fresh torch optimizer, torch's -> a fresh one of ours: both continue alike
    pc = [torch.nn.Parameter(p.detach().clone()) for p in pa]
    pd = [torch.nn.Parameter(p.detach().clone()) for p in pb]
    t2 = torch.optim.Adam(pc, lr=1e-2, amsgrad=True)
    t2.load_state_dict(copy.deepcopy(sd))
    o2 = O.Adam(pd, lr=1e-2, amsgrad=True)
    o2.load_state_dict(copy.deepcopy(theirs.state_dict()))
    _run(o2, t2, pd, pc, 3, seed=5)


def test_closure_and_executor():
    ex = hg.Executor("cpu", num_threads=1)
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    opt = O.Adam([p], lr=0.1, executor=ex)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == pytest.approx(14.0)
    # first step of Adam moves each weight by lr against its gradient's sign
    torch.testing.assert_close(p.detach(), torch.tensor([0.9, -1.9, 2.9]))


def test_refusals_leave_parameters_alone():
    p = torch.nn.Parameter(torch.ones(3))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        O.Adam([p], lr=-1.0)
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        O.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="epsilon"):
        O.Adam([p], eps=-1e-8)
    with pytest.raises(ValueError, match="weight_decay"):
        O.AdamW([p], weight_decay=-0.1)
    with pytest.raises(ValueError, match="differentiable"):
        O.Adam([p], differentiable=True)
    with pytest.raises(TypeError, match="executor"):
        O.Adam([p], executor="cpu")
    opt = O.Adam([p])
    p.grad_dtype = None   # torch refuses a gradient of another dtype unless told not to
    p.grad = torch.ones(3, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="its gradient .*float64.* do not match"):
        opt.step()
    assert torch.equal(p.detach(), torch.ones(3))
    assert not opt.state.get(p)   # a refused step makes no state either
    p.grad = torch.ones(3).to_sparse()
    with pytest.raises(RuntimeError, match="sparse"):
        opt.step()
    q = torch.nn.Parameter(torch.ones(3, dtype=torch.complex64))
    q.grad = torch.ones(3, dtype=torch.complex64)
    with pytest.raises(TypeError, match="complex"):
        O.Adam([q]).step()
    assert torch.equal(p.detach(), torch.ones(3))


def test_hologram_adam_step_without_torch_objects():
    # hologram.ops.adam_step on hologram Tensors, against the formula in float64
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    p0, g, m0, v0 = (rng.standard_normal(50) for _ in range(4))
    v0 = np.abs(v0)
    p, m, v = hg.tensor(p0), hg.tensor(m0), hg.tensor(v0)
    hg.ops.adam_step(p, hg.tensor(g), m, v, step=3, lr=0.01, weight_decay=0.1,
                     decoupled_weight_decay=True)
    pd = p0 * (1 - 0.01 * 0.1)
    mw = 0.9 * m0 + 0.1 * g
    vw = 0.999 * v0 + 0.001 * g * g
    want = pd - 0.01 / (1 - 0.9 ** 3) * mw / (np.sqrt(vw) / np.sqrt(1 - 0.999 ** 3) + 1e-8)
    np.testing.assert_allclose(m.numpy(), mw, rtol=1e-14)
    np.testing.assert_allclose(v.numpy(), vw, rtol=1e-14)
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-13)
    with pytest.raises(TypeError, match="updated in place"):
        hg.ops.adam_step(p0, hg.tensor(g), m, v, step=1)
    with pytest.raises(Exception, match="step 0 must be >= 1"):
        hg.ops.adam_step(p, hg.tensor(g), m, v, step=0)


def test_digits_mlp_with_hologram_adam_trains_like_torch():
    from test_torch_nn import _digits, _mlp, _train
    xtr, ytr, xte, yte = _digits()
    torch.manual_seed(7)
    ours = _mlp(ht.nn)
    theirs = _mlp(torch.nn)
    theirs.load_state_dict(ours.state_dict())
    a = _train(ours, ht.nn.CrossEntropyLoss(), xtr, ytr, 400, optimizer=O.Adam)
    b = _train(theirs, torch.nn.CrossEntropyLoss(), xtr, ytr, 50)
    for step in range(50):
        assert abs(a[step] - b[step]) <= 1e-4 * abs(b[step]) + 1e-6, (step, a[step], b[step])
    with torch.no_grad():
        acc = (ours(xte).argmax(1) == yte).float().mean().item()
    assert acc >= 0.95, acc


def test_step_bumps_autograd_versions():
    """hologram writes through DLPack; the step still moves the version counters as torch's
    in-place updates do, so a graph that saved a parameter before the step refuses its
    backward afterwards (as with torch.optim.Adam) instead of using the new values."""
    for make in (O.Adam, torch.optim.Adam):
        w = torch.nn.Parameter(torch.randn(4))
        x = torch.randn(4, requires_grad=True)
        loss = (w * x).sum()   # saves w for x's gradient
        w.grad = torch.ones(4)
        v0 = w._version
        make([w], lr=0.1).step()
        assert w._version > v0
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


@pytest.mark.parametrize("kind", ["float32", "float64", "int64", "float16", "number"])
def test_step_counters_advance_as_torch(kind):
    """A counter of torch's layout (one float32 / float64 host element) is advanced through a
    view of its memory, any other by a torch op: either way as torch.optim.Adam advances it
    (the same value and dtype), with its autograd version moved as by torch's in-place add."""
    pa, pb = _pair(torch.float32, shapes=((6, 5), (5,)))
    ours, theirs = O.Adam(pa, lr=1e-2), torch.optim.Adam(pb, lr=1e-2)
    _run(ours, theirs, pa, pb, 1)
    dtype = torch.float32 if kind == "number" else getattr(torch, kind)
    for p, q in zip(pa, pb):
        ours.state[p]["step"] = 4.0 if kind == "number" else torch.tensor(4, dtype=dtype)
        theirs.state[q]["step"] = torch.tensor(4, dtype=dtype)
    _run(ours, theirs, pa, pb, 1, seed=3)   # bias corrections of step 5, as torch's
    versions = [ours.state[p]["step"]._version for p in pa]
    _run(ours, theirs, pa, pb, 1, seed=4)
    for p, q, v in zip(pa, pb, versions):
        a, b = ours.state[p]["step"], theirs.state[q]["step"]
        assert a.dtype == b.dtype == dtype and a.item() == b.item() == 6.0
        assert a._version > v


def test_step_leaves_the_garbage_collector_as_it_was():
    # the step holds its views with the collector off; a refused step and a user's own
    # gc.disable() come out as they went in
    import gc
    p = torch.nn.Parameter(torch.ones(3))
    opt = O.Adam([p], lr=0.1)
    p.grad = torch.ones(3)
    assert gc.isenabled()
    opt.step()
    assert gc.isenabled()
    p.grad = torch.ones(3).to_sparse()
    with pytest.raises(RuntimeError, match="sparse"):
        opt.step()
    assert gc.isenabled()
    gc.disable()
    try:
        p.grad = torch.ones(3)
        opt.step()
        assert not gc.isenabled()
    finally:
        gc.enable()
