"""hologram_torch.nn: the torch.nn layers' constructors, parameters and state_dicts, outputs and
gradients against torch.nn, training (linear regression; an MLP on scikit-learn's bundled
digits data set to >= 95% test accuracy, with the same loss curve as the torch.nn model), and
torch.utils.checkpoint through the modules."""
import pytest

torch = pytest.importorskip("torch")
import hologram as hg  # noqa: E402
from conftest import import_hologram_torch  # noqa: E402

ht = import_hologram_torch()

N = ht.nn


def test_layers_are_torch_layers_with_torch_state():
    torch.manual_seed(0)
    ours = N.Linear(12, 5)
    torch.manual_seed(0)
    theirs = torch.nn.Linear(12, 5)
    assert isinstance(ours, torch.nn.Linear)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "bias"]
    for k in ("weight", "bias"):   # torch's own initialisation, the same draws
        assert torch.equal(ours.state_dict()[k], theirs.state_dict()[k])
    theirs.load_state_dict(ours.state_dict())
    ours.load_state_dict(theirs.state_dict())
    assert N.Linear(3, 4, bias=False).bias is None
    assert N.Linear(3, 4, dtype=torch.float64).weight.dtype == torch.float64
    ln = N.LayerNorm((4, 6), eps=1e-3)
    assert list(ln.state_dict()) == list(torch.nn.LayerNorm((4, 6)).state_dict())
    assert N.RMSNorm(8).weight.shape == (8,)
    assert "Linear(in_features=12, out_features=5, bias=True)" == repr(ours)


def test_executor_forms():
    ex = hg.Executor("cpu", num_threads=1)
    x = torch.randn(7, 12)
    for layer in (N.Linear(ex, 12, 5), N.Linear(12, 5, executor=ex), N.Linear(12, 5,
                                                                             backend="cpu")):
        torch.testing.assert_close(layer(x), torch.nn.functional.linear(x, layer.weight,
                                                                        layer.bias))
    assert N.Linear(ex, 12, 5).executor is ex
    assert N.ReLU(ex).executor is ex
    with pytest.raises(TypeError, match="either"):
        N.Linear(12, 5, executor=ex, backend="cpu")
    if not hg.is_metal_available():
        with pytest.raises(hg.BackendUnavailableError, match="metal"):
            N.Linear(512, 256, backend="metal")


LAYERS = [
    (lambda: N.ReLU(), lambda: torch.nn.ReLU()),
    (lambda: N.GELU(), lambda: torch.nn.GELU()),
    (lambda: N.GELU(approximate="tanh"), lambda: torch.nn.GELU(approximate="tanh")),
    (lambda: N.SiLU(), lambda: torch.nn.SiLU()),
    (lambda: N.Sigmoid(), lambda: torch.nn.Sigmoid()),
    (lambda: N.Tanh(), lambda: torch.nn.Tanh()),
    (lambda: N.Softmax(dim=1), lambda: torch.nn.Softmax(dim=1)),
    (lambda: N.LogSoftmax(dim=-1), lambda: torch.nn.LogSoftmax(dim=-1)),
    (lambda: N.LayerNorm(16), lambda: torch.nn.LayerNorm(16)),
    (lambda: N.RMSNorm(16), lambda: torch.nn.RMSNorm(16)),
    (lambda: N.Linear(16, 3), lambda: torch.nn.Linear(16, 3)),
]


@pytest.mark.parametrize("k", range(len(LAYERS)))
def test_layer_outputs_and_gradients_match_torch(k):
    ours, theirs = LAYERS[k][0](), LAYERS[k][1]()
    theirs.load_state_dict(ours.state_dict())
    with torch.no_grad():   # parameters away from their initial 1 / 0
        for p in ours.parameters():
            p.add_(torch.randn(p.shape) * 0.1)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(8, 16, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    g = torch.randn(ours(x).shape)
    ours(x).backward(g)
    theirs(x2).backward(g)
    torch.testing.assert_close(ours(x), theirs(x2), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-4, atol=1e-5)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5)


def test_losses_match_torch():
    x = torch.randn(6, 4, requires_grad=True)
    t = torch.randint(0, 4, (6,))
    y = torch.randn(6, 4)
    for ours, theirs, target in ((N.CrossEntropyLoss(), torch.nn.CrossEntropyLoss(), t),
                                 (N.CrossEntropyLoss(reduction="sum"),
                                  torch.nn.CrossEntropyLoss(reduction="sum"), t),
                                 (N.MSELoss(), torch.nn.MSELoss(), y)):
        a = ours(x, target)
        b = theirs(x, target)
        torch.testing.assert_close(a, b)
        ga, = torch.autograd.grad(a, x)
        gb, = torch.autograd.grad(b, x)
        torch.testing.assert_close(ga, gb)
    w = torch.rand(4) + 0.1
    y01 = torch.rand(6, 4)
    p = torch.sigmoid(torch.randn(6, 4))
    for ours, theirs, inp, target in (
            (N.CrossEntropyLoss(weight=w, label_smoothing=0.1),
             torch.nn.CrossEntropyLoss(weight=w, label_smoothing=0.1), x, t),
            (N.NLLLoss(weight=w, reduction="sum"), torch.nn.NLLLoss(weight=w, reduction="sum"),
             torch.log_softmax(x, 1), t),
            (N.BCELoss(), torch.nn.BCELoss(), p.clone().requires_grad_(), y01),
            (N.BCEWithLogitsLoss(pos_weight=w), torch.nn.BCEWithLogitsLoss(pos_weight=w),
             x, y01)):
        leaf = inp if inp.is_leaf else x
        a, b = ours(inp, target), theirs(inp, target)
        torch.testing.assert_close(a, b)
        torch.testing.assert_close(torch.autograd.grad(a, leaf, retain_graph=True)[0],
                                   torch.autograd.grad(b, leaf)[0])
        assert ours.state_dict().keys() == theirs.state_dict().keys()


def test_dropout_module():
    d = N.Dropout(0.3)
    assert isinstance(d, torch.nn.Dropout) and d.p == 0.3
    x = torch.randn(200, 50)
    torch.manual_seed(11)
    y = d(x)
    torch.manual_seed(11)
    assert torch.equal(d(x), y)
    kept = y != 0
    assert 0.6 < kept.float().mean().item() < 0.8
    torch.testing.assert_close(y[kept], x[kept] / 0.7)
    d.eval()
    assert torch.equal(d(x), x)
    model = torch.nn.Sequential(N.Linear(50, 8), N.Dropout(0.5), N.ReLU())
    model(x).sum().backward()
    assert model[0].weight.grad is not None


def test_linear_regression_trains():
    torch.manual_seed(1)
    x = torch.randn(256, 3)
    w_true = torch.tensor([[2.0, -3.0, 0.5]])
    y = x @ w_true.t() + 0.7
    model = N.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = N.MSELoss()
    for _ in range(200):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    assert loss.item() < 1e-6
    torch.testing.assert_close(model.weight.detach(), w_true, atol=1e-3, rtol=0)
    assert abs(model.bias.item() - 0.7) < 1e-3


def _digits():
    datasets = pytest.importorskip("sklearn.datasets")
    d = datasets.load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target, dtype=torch.int64)
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(len(x), generator=g)
    x, y = x[perm], y[perm]
    return x[:1400], y[:1400], x[1400:], y[1400:]


def _mlp(nn):
    return torch.nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.LayerNorm(128),
                               nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def _train(model, loss_fn, xs, ys, steps, optimizer=torch.optim.Adam):
    torch.manual_seed(123)
    opt = optimizer(model.parameters(), lr=3e-3)
    losses = []
    for step in range(steps):
        idx = torch.randint(0, len(xs), (64,))
        opt.zero_grad()
        loss = loss_fn(model(xs[idx]), ys[idx])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_mlp_on_digits_trains_like_torch_nn():
    xtr, ytr, xte, yte = _digits()
    torch.manual_seed(7)
    ours = _mlp(N)
    torch.manual_seed(7)
    theirs = _mlp(torch.nn)
    theirs.load_state_dict(ours.state_dict())
    a = _train(ours, N.CrossEntropyLoss(), xtr, ytr, 400)
    b = _train(theirs, torch.nn.CrossEntropyLoss(), xtr, ytr, 50)
    for step in range(50):   # the same loss curve, step for step
        assert abs(a[step] - b[step]) <= 1e-4 * abs(b[step]) + 1e-6, (step, a[step], b[step])
    with torch.no_grad():
        acc = (ours(xte).argmax(1) == yte).float().mean().item()
    assert acc >= 0.95, acc


def test_checkpoint_through_modules():
    torch.manual_seed(3)
    block = torch.nn.Sequential(N.Linear(10, 10), N.GELU(), N.LayerNorm(10))
    x = torch.randn(4, 10, requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    out.sum().backward()
    g1 = x.grad.clone()
    x.grad = None
    block(x).sum().backward()
    torch.testing.assert_close(g1, x.grad)


def test_embedding_module():
    ours = N.Embedding(12, 5, padding_idx=2)
    theirs = torch.nn.Embedding(12, 5, padding_idx=2)
    theirs.load_state_dict(ours.state_dict())
    assert isinstance(ours, torch.nn.Embedding) and ours.state_dict().keys() == \
        theirs.state_dict().keys()
    assert torch.equal(ours.weight[2], torch.zeros(5))        # torch's own init zeroes the row
    idx = torch.tensor([[2, 7, 7, 11], [0, 2, 5, 7]])
    a, b = ours(idx), theirs(idx)
    torch.testing.assert_close(a, b)
    g = torch.randn(2, 4, 5)
    torch.testing.assert_close(torch.autograd.grad(a, ours.weight, g)[0],
                               torch.autograd.grad(b, theirs.weight, g)[0])
    # max_norm and sparse: trained with SGD (which takes sparse gradients), as torch.nn's
    torch.manual_seed(4)
    ours = N.Embedding(12, 5, max_norm=1.0, norm_type=2.0, sparse=True)
    theirs = torch.nn.Embedding(12, 5, max_norm=1.0, norm_type=2.0, sparse=True)
    theirs.load_state_dict(ours.state_dict())
    opt_a = torch.optim.SGD(ours.parameters(), lr=0.5)
    opt_b = torch.optim.SGD(theirs.parameters(), lr=0.5)
    for _ in range(5):
        for m, opt in ((ours, opt_a), (theirs, opt_b)):
            opt.zero_grad()
            (m(idx) ** 2).sum().backward()
            opt.step()
    torch.testing.assert_close(ours.weight, theirs.weight, rtol=1e-6, atol=1e-6)


def test_convert_replaces_layers_in_place_and_names_the_rest():
    torch.manual_seed(3)
    model = torch.nn.Sequential(
        torch.nn.Embedding(20, 8), torch.nn.Linear(8, 16), torch.nn.GELU(),
        torch.nn.LayerNorm(16), torch.nn.Dropout(0.0), torch.nn.ReLU(inplace=True),
        torch.nn.Conv1d(3, 3, 1), torch.nn.Linear(16, 4))
    idx = torch.randint(0, 20, (6,))
    head = torch.nn.Sequential(*list(model)[:6], model[7])
    want = head(idx)
    params = list(model.parameters())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)   # made before the conversion
    with pytest.warns(UserWarning) as rec:
        assert N.convert(model) is model
    msg = str(rec[0].message)
    assert msg.endswith("kept torch's forward for 1 Conv1d (no hologram counterpart)"), msg
    kinds = [type(m) for m in model]
    assert kinds[:6] == [N.Embedding, N.Linear, N.GELU, N.LayerNorm, N.Dropout, N.ReLU]
    assert kinds[6] is torch.nn.Conv1d and kinds[7] is N.Linear
    assert list(model.parameters()) == params                 # the same Parameter objects
    got = head(idx)
    torch.testing.assert_close(got, want)
    before = [p.detach().clone() for p in model[1].parameters()]
    got.sum().backward()
    opt.step()
    assert all(not torch.equal(a, b) for a, b in zip(before, model[1].parameters()))
    with pytest.raises(TypeError, match="torch.nn.Module"):
        N.convert(object())


def test_autocast_bfloat16_through_the_modules():
    """torch.autocast('cpu', bfloat16): matmul-like layers run in bfloat16, losses in float32,
    the rest as their inputs (torch's CPU op lists); the same dtypes as torch.nn's model, values
    within bfloat16 rounding, gradients into the float32 parameters."""
    def model(nn):
        torch.manual_seed(1)
        return torch.nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32),
                                   nn.Linear(32, 5))
    ours, theirs = model(N), model(torch.nn)
    x, t = torch.randn(8, 16), torch.randint(0, 5, (8,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ya, yb = ours(x), theirs(x)
        assert ya.dtype == yb.dtype == torch.bfloat16
        torch.testing.assert_close(ya.float(), yb.float(), rtol=2e-2, atol=2e-2)
        la = N.CrossEntropyLoss(label_smoothing=0.1)(ya, t)
        lb = torch.nn.CrossEntropyLoss(label_smoothing=0.1)(yb, t)
        assert la.dtype == lb.dtype == torch.float32
        torch.testing.assert_close(la, lb, rtol=2e-2, atol=2e-2)
        m = N.MSELoss()(ya, yb.detach())
        assert m.dtype == torch.nn.MSELoss()(yb, yb.detach()).dtype == torch.float32
        f64 = N.Linear(4, 2).double()
        assert f64(torch.randn(3, 4, dtype=torch.float64)).dtype == torch.float64
    la.backward()
    lb.backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert p.grad.dtype == torch.float32
        torch.testing.assert_close(p.grad, q.grad, rtol=5e-2, atol=1e-2)
