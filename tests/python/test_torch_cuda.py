"""hologram_torch on torch CUDA tensors, against torch's own ops on the same device: linear,
softmax, layer_norm, cross_entropy (values and gradients), Adam and the MLP training step of
bench/torch_peers.py; then what only a GPU shows: results stay on the device, torch's current
stream orders hologram's work (a side stream included), no call synchronizes.

The `torch_device` tests run on the CPU too (the same checks, so the test code itself is
exercised everywhere); their CUDA cases and the `cuda_device` tests skip with the reason where
torch has no GPU (CI, the emulation). Tolerances are the CPU tests'."""
import pytest

torch = pytest.importorskip("torch")
import hologram as hg  # noqa: E402
from conftest import import_hologram_torch  # noqa: E402

ht = import_hologram_torch()
B = ht._bridge
F, N, TF = ht.functional, ht.nn, torch.nn.functional

TOL = {torch.float32: (2e-6, 1e-5), torch.float64: (1e-12, 1e-12)}
FLOATS = [torch.float32, torch.float64]


def rand(dev, *shape, dtype=torch.float32, seed=0, grad=False):
    """Normal values made on the host (the same on every device), then moved."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype).to(dev)
    return x.requires_grad_() if grad else x


def close(got, want, tol=None):
    assert got.device == want.device and got.dtype == want.dtype and got.shape == want.shape
    rtol, atol = tol or TOL[want.dtype]
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)


def grads(out, inputs, g):
    return torch.autograd.grad(out, inputs, g)


@pytest.mark.parametrize("dtype", FLOATS)
def test_linear(torch_device, dtype):
    x, w, b = (rand(torch_device, *s, dtype=dtype, seed=i, grad=True)
               for i, s in enumerate([(8, 5, 48), (24, 48), (24,)]))
    ours, theirs = F.linear(x, w, b), TF.linear(x, w, b)
    # cuBLAS on both sides, possibly different algorithms: f32 sums of 48 products
    tol = (1e-5, 1e-5) if dtype == torch.float32 else None
    close(ours, theirs, tol)
    g = rand(torch_device, *theirs.shape, dtype=dtype, seed=9)
    for a, e in zip(grads(ours, (x, w, b), g), grads(theirs, (x, w, b), g)):
        close(a, e, (1e-5, 1e-4) if dtype == torch.float32 else None)
    layer = N.Linear(48, 24, device=torch_device, dtype=dtype)
    close(layer(x.detach()), TF.linear(x.detach(), layer.weight, layer.bias), tol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax(torch_device, dtype, log):
    ours_f, theirs_f = (F.log_softmax, TF.log_softmax) if log else (F.softmax, TF.softmax)
    for shape, dim in (((6, 300), -1), ((4, 7, 33), 1), ((2049,), 0)):
        x = (rand(torch_device, *shape, dtype=dtype, seed=len(shape)) * 4).requires_grad_()
        ours, theirs = ours_f(x, dim), theirs_f(x, dim)
        close(ours, theirs)
        g = rand(torch_device, *shape, dtype=dtype, seed=5)
        close(grads(ours, x, g)[0], grads(theirs, x, g)[0])
    x = torch.tensor([[0.0, float("inf"), 1.0], [float("-inf"), 2.0, 2.0],
                      [float("nan"), 0.0, 1.0]], dtype=dtype, device=torch_device)
    close(ours_f(x, 1), theirs_f(x, 1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm(torch_device, dtype):
    x = (rand(torch_device, 16, 3, 96, dtype=dtype) * 3 + 1).requires_grad_()
    w = rand(torch_device, 96, dtype=dtype, seed=1, grad=True)
    b = rand(torch_device, 96, dtype=dtype, seed=2, grad=True)
    ours, theirs = F.layer_norm(x, (96,), w, b, 1e-5), TF.layer_norm(x, (96,), w, b, 1e-5)
    close(ours, theirs, (1e-5, 1e-5) if dtype == torch.float32 else None)
    g = rand(torch_device, 16, 3, 96, dtype=dtype, seed=3)
    for a, e in zip(grads(ours, (x, w, b), g), grads(theirs, (x, w, b), g)):
        close(a, e, (1e-4, 1e-4) if dtype == torch.float32 else None)
    layer = N.LayerNorm(96, device=torch_device, dtype=dtype)
    close(layer(x.detach()), TF.layer_norm(x.detach(), (96,), layer.weight, layer.bias),
          (1e-5, 1e-5) if dtype == torch.float32 else None)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"},
                                {"ignore_index": 2}, {"label_smoothing": 0.1},
                                {"weight": True, "ignore_index": 1}])
def test_cross_entropy(torch_device, dtype, kw):
    kw = dict(kw)
    if kw.get("weight"):
        kw["weight"] = rand(torch_device, 10, dtype=dtype, seed=4).abs() + 0.1
    x = rand(torch_device, 32, 10, dtype=dtype, grad=True)
    t = torch.randint(0, 10, (32,), generator=torch.Generator().manual_seed(1)).to(torch_device)
    ours, theirs = F.cross_entropy(x, t, **kw), TF.cross_entropy(x, t, **kw)
    close(ours, theirs, (1e-5, 1e-5) if dtype == torch.float32 else None)
    g = torch.ones_like(theirs)
    close(grads(ours, x, g)[0], grads(theirs, x, g)[0],
          (1e-5, 1e-6) if dtype == torch.float32 else None)
    # probabilities as targets, (N, C, d) logits
    x3 = rand(torch_device, 4, 10, 6, dtype=dtype, seed=7, grad=True)
    p = torch.softmax(rand(torch_device, 4, 10, 6, dtype=dtype, seed=8), 1)
    close(F.cross_entropy(x3, p), TF.cross_entropy(x3, p),
          (1e-5, 1e-5) if dtype == torch.float32 else None)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.05, "amsgrad": True},
                                {"decoupled_weight_decay": True, "weight_decay": 0.1}])
def test_adam(torch_device, dtype, kw):
    pa = [torch.nn.Parameter(rand(torch_device, *s, dtype=dtype, seed=i))
          for i, s in enumerate([(20, 30), (30,), (3, 20)])]
    pb = [torch.nn.Parameter(p.detach().clone()) for p in pa]
    ours, theirs = ht.optim.Adam(pa, lr=1e-2, **kw), torch.optim.Adam(pb, lr=1e-2, **kw)
    for step in range(6):
        for i, (p, q) in enumerate(zip(pa, pb)):
            p.grad = rand(torch_device, *p.shape, dtype=dtype, seed=100 + 10 * step + i)
            q.grad = p.grad.clone()
        ours.step()
        theirs.step()
        for p, q in zip(pa, pb):
            close(p.detach(), q.detach(), (2e-6, 1e-7) if dtype == torch.float32 else
                  (1e-12, 1e-14))
    for p in pa:   # the state lives beside the parameter; the step counter on the host
        st = ours.state[p]
        assert st["exp_avg"].device == p.device and not st["step"].is_cuda


def mlp(nn, dev):
    """bench/torch_peers.py's MLP (784 -> 1024 -> 1024 -> 10 there), smaller."""
    return torch.nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.LayerNorm(128),
                               nn.Linear(128, 128), nn.GELU(), nn.LayerNorm(128),
                               nn.Linear(128, 10)).to(dev)


def test_mlp_training_step(torch_device):
    """hologram layers + hologram_torch.optim.Adam against torch.nn + torch.optim.Adam, step for
    step (the losses as in test_torch_nn's digits MLP: within 1e-4)."""
    torch.manual_seed(7)
    ours = mlp(N, torch_device)
    theirs = mlp(torch.nn, torch_device)
    theirs.load_state_dict(ours.state_dict())
    opt_a = ht.optim.Adam(ours.parameters(), lr=3e-3)
    opt_b = torch.optim.Adam(theirs.parameters(), lr=3e-3)
    x = rand(torch_device, 32, 64, seed=11)   # one batch, learnt by heart
    y = torch.randint(0, 10, (32,), generator=torch.Generator().manual_seed(2)).to(torch_device)
    la, lb = [], []
    for _ in range(20):
        for model, opt, lossf, out in ((ours, opt_a, N.CrossEntropyLoss(), la),
                                       (theirs, opt_b, torch.nn.CrossEntropyLoss(), lb)):
            opt.zero_grad()
            loss = lossf(model(x), y)
            loss.backward()
            opt.step()
            out.append(loss.detach())
    la, lb = torch.stack(la), torch.stack(lb)
    assert la.device == torch_device
    torch.testing.assert_close(la, lb, rtol=1e-4, atol=1e-6)
    assert lb[-1] < 0.5 * lb[0]   # it learns


def test_follow_stream_sets_the_stream_when_it_changed(monkeypatch):
    """The executor follows torch's current stream, set only when it changed; torch's default
    stream (handle 0) is CU_STREAM_LEGACY (1) for hologram, whose 0 is the executor's own.
    (Stand-ins for torch's stream query and the executor: this runs without a GPU.)"""
    class Ex:
        stream = 0x5000   # its own stream
        set_to = []

        def set_stream(self, s):
            self.set_to.append(s)
            self.stream = s

    current = iter([0, 0, 0x7700, 0x7700, 0])
    monkeypatch.setattr(B, "_HAS_STREAMS", True)
    monkeypatch.setattr(B, "_RAW_STREAM", lambda index: next(current))
    ex = Ex()
    for _ in range(5):
        B.follow_stream(ex, 0)
    assert ex.set_to == [1, 0x7700, 1]


def test_executor_of_a_cuda_device(monkeypatch):
    """The executor chosen for CUDA tensors: the device's default (cached) or the one given,
    which must be of the tensors' backend and device index. Runs on the emulation
    (HOLOGRAM_CUDA_EMULATE=1), where torch itself needs no GPU: only devices are compared."""
    try:
        emu = hg.Executor("cuda")
    except hg.BackendUnavailableError:
        pytest.skip("no CUDA backend here (HOLOGRAM_CUDA_EMULATE=1 gives the emulation)")
    monkeypatch.setattr(B, "_HAS_STREAMS", False)   # torch's stream query needs a GPU
    dev0, dev1 = torch.device("cuda", 0), torch.device("cuda", 1)
    ex_id = B.executor_id(emu)
    assert B.executor_of(ex_id, dev0, "f") is emu
    with pytest.raises(ValueError, match="'cuda' device 0; .*nothing is copied"):
        B.executor_of(ex_id, dev1, "f")
    with pytest.raises(ValueError, match="runs on 'cuda' device 0"):
        B.executor_of(ex_id, torch.device("cpu"), "f")
    with pytest.raises(ValueError, match="runs on 'cpu'"):
        B.executor_of(B.executor_id(hg.Executor("cpu")), dev0, "f")
    default = B.executor_of(0, dev0, "f")
    assert default is hg.default_cuda_executor(0) and B.executor_of(0, dev0, "f") is default


# ---- only on a GPU ------------------------------------------------------------------------
@pytest.mark.torch_cuda
def test_results_stay_on_the_device(cuda_device):
    x = rand(cuda_device, 64, 33)
    for out in (F.add(x, x), F.add(x, 2.5), F.relu(x), F.softmax(x, 1), F.sum(x, 1),
                F.linear(x, rand(cuda_device, 7, 33)), ht.jit(lambda a: a * 2.0)(x)):
        assert out.device == cuda_device
    ex = B.executor_of(0, cuda_device, "test")
    assert ex.backend == "cuda" and ex.device["index"] == cuda_device.index
    assert B.executor_of(0, cuda_device, "test") is ex   # cached


@pytest.mark.torch_cuda
def test_devices_are_never_mixed(cuda_device):
    x, c = rand(cuda_device, 5), rand("cpu", 5)
    with pytest.raises(ValueError, match="different devices"):
        F.add(x, c)
    with pytest.raises(ValueError, match="nothing is copied across devices"):
        F.add(hg.Executor("cpu"), x, x)
    with pytest.raises(ValueError, match="nothing is copied across devices"):
        F.relu(c, executor=hg.Executor("cuda", device=cuda_device.index))


@pytest.mark.torch_cuda
def test_torch_syncs_nothing_in_a_training_step(cuda_device):
    """torch's sync debug mode raises at any synchronizing torch call (item, a blocking host
    copy such as torch.tensor(v, device='cuda')) inside hologram_torch."""
    torch.manual_seed(3)
    model = mlp(N, cuda_device)
    opt = ht.optim.Adam(model.parameters(), lr=1e-3)
    x, y = rand(cuda_device, 32, 64), torch.randint(0, 10, (32,), device=cuda_device)
    opt.zero_grad()
    N.CrossEntropyLoss()(model(x), y).backward()
    opt.step()   # first step: the state is created
    torch.cuda.synchronize()
    prev = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(2):
            opt.zero_grad()
            loss = N.CrossEntropyLoss(label_smoothing=0.1)(model(x), y)
            loss = F.add(F.mul(loss, 0.5), F.mse_loss(model(x), torch.zeros_like(model(x))))
            loss.backward()
            opt.step()
    finally:
        torch.cuda.set_sync_debug_mode(prev)
    assert torch.isfinite(loss)


@pytest.mark.torch_cuda
def test_the_current_stream_orders_the_work(cuda_device):
    """torch's writes queued behind a long kernel, then a hologram op reading them, on a side
    stream: right only if hologram's work is ordered by that stream (or waits for the GPU)."""
    src = rand(cuda_device, 1 << 20)
    x = torch.zeros_like(src)
    ht.functional.mul(x, x)   # compiled and warm
    torch.cuda.synchronize()
    side = torch.cuda.Stream(cuda_device)
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)   # tens of ms of GPU time before the copy
        x.copy_(src)
        y = F.mul(x, x)
        z = F.softmax(y.view(1024, 1024), 1)
        if B._HAS_STREAMS:
            assert B.executor_of(0, cuda_device, "test").stream == side.cuda_stream
    side.synchronize()
    torch.testing.assert_close(y, src * src)
    torch.testing.assert_close(z, torch.softmax(src.view(1024, 1024) ** 2, 1), rtol=2e-6,
                               atol=1e-6)


@pytest.mark.torch_cuda
@pytest.mark.skipif(not B._HAS_STREAMS, reason="hologram has no Executor.set_stream: every "
                    "call finishes its GPU work before it returns")
def test_calls_return_before_the_gpu_is_done(cuda_device):
    """Calls only enqueue: queued behind ~0.5 s of GPU sleep, the stream is still busy when a
    training step of hologram layers (forward, backward, Adam) has returned (no wall-clock bound
    is asserted, only the order of events). The loss is mse_loss: cross_entropy with class
    indices reads its targets back to check their range (hg_cross_entropy), which waits."""
    torch.manual_seed(5)
    model = mlp(N, cuda_device)
    opt = ht.optim.Adam(model.parameters(), lr=1e-3)
    x, want = rand(cuda_device, 32, 64), rand(cuda_device, 32, 10, seed=1)

    def step():
        opt.zero_grad()
        loss = F.mse_loss(model(x), want)
        loss.backward()
        opt.step()
        return loss

    step()
    torch.cuda.synchronize()
    torch.cuda._sleep(1_000_000_000)
    loss = step()
    busy = not torch.cuda.current_stream(cuda_device).query()
    torch.cuda.synchronize()
    assert busy
    assert torch.isfinite(loss)
