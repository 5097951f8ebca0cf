"""torch.jit.trace, torch.export and torch.compile of hologram_torch models: every op recorded
(no result frozen into the graph), the traced / exported / compiled model run on a NEW input
against eager torch; dropout fresh on each call and repeatable with torch.manual_seed."""
import copy
import io
import warnings

import pytest

torch = pytest.importorskip("torch")
import hologram_torch as ht  # noqa: E402

F = ht.functional


def _convert(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the summary of what stays torch's
        return ht.nn.convert(model)


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32),
                               torch.nn.GELU(), torch.nn.Tanh(), torch.nn.LayerNorm(32),
                               torch.nn.Linear(32, 6), torch.nn.Softmax(-1))


class Block(torch.nn.Module):
    """A pre-norm transformer block; with ``hologram_functional`` its attention and residual
    adds are hologram_torch.functional calls (else torch's)."""

    def __init__(self, d=16, heads=2, hologram_functional=False, p=0.0):
        super().__init__()
        self.heads, self.hf = heads, hologram_functional
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc1, self.act, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.GELU(), \
            torch.nn.Linear(4 * d, d)
        self.drop = torch.nn.Dropout(p)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        if self.hf:
            att = F.softmax(F.mul(F.matmul(q, k.transpose(-1, -2)), (d // self.heads) ** -0.5), -1)
            y = F.matmul(att, v).transpose(1, 2).reshape(b, t, d)
            x = F.add(x, self.drop(self.proj(y)))
            return F.add(x, self.drop(self.fc2(self.act(self.fc1(self.ln2(x))))))
        att = torch.softmax(q @ k.transpose(-1, -2) * (d // self.heads) ** -0.5, -1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.drop(self.proj(y))
        return x + self.drop(self.fc2(self.act(self.fc1(self.ln2(x)))))


def _models():
    torch.manual_seed(1)
    return [("mlp", _mlp(), (4, 8)), ("block", Block(), (2, 5, 16)),
            ("block_functional", Block(hologram_functional=True), (2, 5, 16))]


@pytest.mark.parametrize("k", range(3))
def test_jit_trace_records_every_op(k):
    """Fails on fe55c9d: the calls skipped the dispatcher under the tracer and ReLU / GELU /
    Tanh / Softmax outputs were frozen as constants. Now each is a hologram::<op> node and the
    trace (torch's default check included) gives eager torch's values on a new input."""
    name, ref, shape = _models()[k]
    model = _convert(copy.deepcopy(ref)).eval()
    ref.eval()
    x = torch.randn(shape)
    with torch.no_grad():
        traced = torch.jit.trace(model, x)
    graph = str(traced.inlined_graph)
    for op in ("hologram::linear", "hologram::layer_norm", "hologram::gelu"):
        assert op in graph, (op, graph)
    if name == "mlp":
        for op in ("hologram::relu", "hologram::tanh", "hologram::softmax"):
            assert op in graph, (op, graph)
    if name == "block_functional":
        for op in ("hologram::matmul", "hologram::softmax", "hologram::add"):
            assert op in graph, (op, graph)
    x2 = torch.randn(shape) * 3   # a new input, far from the traced one
    with torch.no_grad():
        torch.testing.assert_close(traced(x2), ref(x2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("k", range(3))
def test_jit_trace_with_gradients_is_refused(k):
    """With gradients on, the trace could record neither the gradient (the op alone: None
    gradients, silently) nor a saveable graph (the autograd.Function: a Python call that
    trace's own no-grad check records differently): a clear error, naming the way that works.
    Inputs that need no gradient trace as before."""
    name, ref, shape = _models()[k]
    model = _convert(copy.deepcopy(ref)).eval()
    with pytest.raises(RuntimeError, match=r"trace under torch.no_grad\(\)"):
        torch.jit.trace(model, torch.randn(shape))
    for p in model.parameters():
        p.requires_grad_(False)
    x2 = torch.randn(shape)
    torch.testing.assert_close(torch.jit.trace(model, torch.randn(shape))(x2), ref(x2),
                               rtol=1e-4, atol=1e-5)


def test_jit_trace_saves_and_loads():
    """The trace holds only dispatcher ops: it saves, loads (hologram_torch imported) and runs
    hologram."""
    ref = _mlp()
    model = _convert(copy.deepcopy(ref))
    x = torch.randn(4, 8)
    with torch.no_grad():
        traced = torch.jit.trace(model, x, check_trace=False)
    buf = io.BytesIO()
    torch.jit.save(traced, buf)
    buf.seek(0)
    loaded = torch.jit.load(buf)
    assert "hologram::relu" in str(loaded.inlined_graph)
    x2 = torch.randn(4, 8) - 2
    torch.testing.assert_close(loaded(x2), ref(x2), rtol=1e-4, atol=1e-5)


def test_jit_trace_of_dropout_draws_fresh_masks():
    """The seed is drawn by a torch op (aten::randint) that the trace records: the traced
    model in training mode draws a new mask per call, repeatable with torch.manual_seed (fe55c9d
    froze the seed of the traced call into the graph)."""
    model = _convert(torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.Dropout(0.5)))
    x = torch.randn(16, 8)
    with torch.no_grad():
        traced = torch.jit.trace(model, x, check_trace=False)
        graph = str(traced.inlined_graph)
        assert "hologram::dropout" in graph and "aten::randint" in graph
        torch.manual_seed(5)
        a, b = traced(x), traced(x)
        torch.manual_seed(5)
        assert torch.equal(traced(x), a)
        assert not torch.equal(a, b)
        torch.manual_seed(5)
        assert torch.equal(model(x), a)   # the eager draw


@pytest.mark.parametrize("k", range(3))
def test_export_sees_every_op_and_runs_on_a_new_input(k):
    name, ref, shape = _models()[k]
    model = _convert(copy.deepcopy(ref)).eval()
    ref.eval()
    with torch.no_grad():   # no gradient needed: the hologram ops themselves
        ep = torch.export.export(model, (torch.randn(shape),))
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert {"hologram.linear.default", "hologram.layer_norm.default",
            "hologram.gelu.default"} <= targets, targets
    if name == "block_functional":
        assert {"hologram.matmul.default", "hologram.add.default"} <= targets, targets
    x2 = torch.randn(shape) * 3
    torch.testing.assert_close(ep.module()(x2), ref(x2), rtol=1e-4, atol=1e-5)
    # parameters that need gradients: the differentiable path records each op's ATen form
    # (_aten/grad.py; torch.compile(backend="hologram") lowers them to hologram again)
    ep = torch.export.export(model, (torch.randn(shape),))
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert {"aten.linear.default", "aten.gelu.default"} <= targets, targets
    assert not any(t.startswith("hologram.") for t in targets), targets
    torch.testing.assert_close(ep.module()(x2), ref(x2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_in_training_with_dropout_fullgraph(backend):
    """torch.compile(fullgraph=True) of a converted model with Dropout in training: no graph
    break (fe55c9d read the seed with Tensor.item()), the eager values and gradients under the
    same torch.manual_seed, a fresh mask per call, no recompilation per call."""
    if backend == "inductor":
        pytest.importorskip("torch._inductor")
    torch.manual_seed(2)
    ref = Block(p=0.3)
    model = _convert(copy.deepcopy(ref)).train()
    compiled = torch.compile(model, backend=backend, fullgraph=True)
    x = torch.randn(2, 5, 16)
    torch.manual_seed(9)
    outs = [compiled(x)]
    with torch._dynamo.config.patch(error_on_recompile=True):
        outs += [compiled(x) for _ in range(3)]
    assert not torch.equal(outs[0], outs[1])
    torch.manual_seed(9)
    want = model(x)   # eager hologram: the same seeds drawn in the same order
    torch.testing.assert_close(outs[0], want, rtol=1e-4, atol=1e-5)
    g_c = torch.autograd.grad(outs[0].square().sum(), list(model.parameters()))
    g_e = torch.autograd.grad(want.square().sum(), list(model.parameters()))
    for a, b in zip(g_c, g_e):
        torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-5)
    kept = (outs[2] != 0).float().mean().item()
    assert 0.5 < kept <= 1.0


def test_dropout_seed_is_a_tensor_input():
    """The op's seed is a one-element int64 CPU tensor; anything else is refused."""
    x = torch.randn(10)
    with pytest.raises(ValueError, match="seed must be a one-element int64 CPU tensor"):
        torch.ops.hologram.dropout(x, 0.5, torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="seed must be a one-element int64 CPU tensor"):
        torch.ops.hologram.dropout(x, 0.5, torch.tensor(1.0))
    s = torch.tensor(77)
    torch.testing.assert_close(torch.ops.hologram.dropout(x, 0.5, s),
                               torch.ops.hologram.dropout(x, 0.5, s))


def test_jit_trace_refuses_hologram_torch_jit_functions():
    """hologram_torch.jit's fused kernel runs outside the dispatcher: tracing it would freeze
    its result, so the tracer gets a clear error instead."""
    import hologram as hg

    @ht.jit
    def fused(a, b):
        return hg.relu(a * b) * 0.5

    a, b = torch.randn(8), torch.randn(8)
    torch.testing.assert_close(fused(a, b), torch.relu(a * b) * 0.5)
    with pytest.raises(RuntimeError, match="torch.jit.trace cannot record it"):
        torch.jit.trace(fused, (a, b), check_trace=False)


def test_dropout_under_vmap_follows_vmaps_randomness():
    """The seed is a torch random op, so vmap's randomness modes apply as to torch's dropout."""
    x = torch.ones(3, 500)
    same = torch.func.vmap(lambda v: F.dropout(v, 0.5), randomness="same")(x)
    assert torch.equal(same[0], same[1]) and torch.equal(same[1], same[2])
    diff = torch.func.vmap(lambda v: F.dropout(v, 0.5), randomness="different")(x)
    assert not torch.equal(diff[0], diff[1])
    for y in (same, diff):
        assert set(y.unique().tolist()) <= {0.0, 2.0} and 0.35 < (y != 0).float().mean() < 0.65
    with pytest.raises(RuntimeError, match="randomness"):
        torch.func.vmap(lambda v: F.dropout(v, 0.5))(x)
