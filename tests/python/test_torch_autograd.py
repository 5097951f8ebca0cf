"""Gradients of hologram_torch: torch.autograd.gradcheck in float64 for every op (gradgradcheck
where the backward is made of differentiable ops), f32 gradients against torch's own ops, and
torch.library.opcheck on every registered op (schema, fake implementation, dispatch)."""
import warnings

import pytest

torch = pytest.importorskip("torch")
from conftest import import_hologram_torch  # noqa: E402

ht = import_hologram_torch()

F = ht.functional
TF = torch.nn.functional


def rand(*shape, dtype=torch.float64, seed=0, positive=False, grad=True):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tuple(shape), generator=g, dtype=torch.float64)
    if positive:
        x = x.abs() + 0.5
    return x.to(dtype).requires_grad_(grad)


CASES = {
    # name: (function of the inputs, inputs, double-differentiable)
    "add": (F.add, lambda: (rand(3, 4), rand(4, seed=1)), True),
    "sub": (F.sub, lambda: (rand(3, 1), rand(1, 5, seed=1)), True),
    "mul": (F.mul, lambda: (rand(2, 3, 4), rand(3, 1, seed=1)), True),
    "div": (F.div, lambda: (rand(3, 4), rand(3, 4, seed=1, positive=True)), True),
    "relu": (F.relu, lambda: (rand(5, 6) + 0.05,), False),
    "sigmoid": (F.sigmoid, lambda: (rand(5, 6),), False),
    "tanh": (F.tanh, lambda: (rand(5, 6),), False),
    "exp": (F.exp, lambda: (rand(5, 6),), False),
    "log": (F.log, lambda: (rand(5, 6, positive=True),), False),
    "sqrt": (F.sqrt, lambda: (rand(5, 6, positive=True),), False),
    "neg": (F.neg, lambda: (rand(5, 6),), False),
    "abs": (F.abs, lambda: (rand(5, 6) + 0.05,), False),
    "silu": (F.silu, lambda: (rand(5, 6),), False),
    "softplus": (F.softplus, lambda: (rand(5, 6),), False),
    "gelu": (F.gelu, lambda: (rand(5, 6),), False),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda: (rand(5, 6),), False),
    "softmax": (lambda x: F.softmax(x, 1), lambda: (rand(4, 7),), False),
    "softmax_dim0": (lambda x: F.softmax(x, 0), lambda: (rand(4, 7).t(),), False),
    "log_softmax": (lambda x: F.log_softmax(x, -1), lambda: (rand(3, 2, 5),), False),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (6,), w, b),
                   lambda: (rand(4, 6), rand(6, seed=1), rand(6, seed=2)), False),
    "layer_norm_2d": (lambda x: F.layer_norm(x, (3, 4)), lambda: (rand(2, 3, 4) * 5 + 3,), False),
    "rms_norm": (lambda x, w: F.rms_norm(x, (6,), w), lambda: (rand(4, 6), rand(6, seed=1)),
                 False),
    "matmul": (F.matmul, lambda: (rand(3, 4), rand(4, 5, seed=1)), True),
    "matmul_batched": (F.matmul, lambda: (rand(2, 3, 4), rand(4, 2, seed=1)), True),
    "matmul_vec": (F.matmul, lambda: (rand(4), rand(2, 4, 3, seed=1)), True),
    "matmul_mv": (F.matmul, lambda: (rand(3, 4), rand(4, seed=1)), True),
    "linear": (F.linear, lambda: (rand(2, 3, 4), rand(5, 4, seed=1), rand(5, seed=2)), True),
    "linear_nobias": (F.linear, lambda: (rand(3, 4), rand(5, 4, seed=1)), True),
    "sum": (lambda x: F.sum(x, dim=(0, 2), keepdim=False), lambda: (rand(2, 3, 4),), True),
    "sum_all": (F.sum, lambda: (rand(2, 3),), True),
    "mean": (lambda x: F.mean(x, dim=1, keepdim=True), lambda: (rand(2, 3, 4),), True),
    "mse": (F.mse_loss, lambda: (rand(3, 4), rand(3, 4, seed=1)), True),
    "mse_none": (lambda a, b: F.mse_loss(a, b, reduction="none"),
                 lambda: (rand(3, 4), rand(3, 4, seed=1)), True),
    "cross_entropy": (lambda x: F.cross_entropy(x, torch.tensor([0, 2, -100, 1])),
                      lambda: (rand(4, 3),), False),
    "cross_entropy_sum": (lambda x: F.cross_entropy(x, torch.tensor([[0, 2], [1, 1]]),
                                                    reduction="sum"),
                          lambda: (rand(2, 3, 2),), False),
    "cross_entropy_none": (lambda x: F.cross_entropy(x, torch.tensor([2, 0]), reduction="none"),
                           lambda: (rand(2, 3),), False),
    "cat": (lambda a, b: F.cat([a, b], 1), lambda: (rand(2, 3), rand(2, 4, seed=1)), True),
    "stack": (lambda a, b: F.stack([a, b], 0), lambda: (rand(2, 3), rand(2, 3, seed=1)), True),
    "where": (lambda a, b: F.where(torch.tensor([[True, False, True]]), a, b),
              lambda: (rand(2, 3), rand(3, seed=1)), True),
    "clamp": (lambda x: F.clamp(x, -0.7, 0.4), lambda: (rand(4, 5),), False),
    "bce_with_logits": (lambda x: F.binary_cross_entropy_with_logits(
        x, torch.rand(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1)),
        pos_weight=torch.full((4,), 1.5, dtype=torch.float64)), lambda: (rand(3, 4),), False),
    "cross_entropy_probs": (lambda x: F.cross_entropy(
        x, torch.softmax(torch.arange(6.0, dtype=torch.float64).reshape(2, 3), 1)),
        lambda: (rand(2, 3),), False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    f, inputs, double = CASES[name]
    args = inputs()
    assert torch.autograd.gradcheck(f, args, eps=1e-6, atol=1e-5, rtol=1e-4)
    if double:
        assert torch.autograd.gradgradcheck(f, inputs(), eps=1e-6, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("name", ["tanh", "softmax", "layer_norm", "cross_entropy"])
def test_double_backward_matches_torch(name):
    """Gradients are ATen's backward ops (_aten/grad.py): with create_graph the backward is
    torch's ATen form again, so second derivatives are torch's (float64)."""
    x = rand(3, 4)
    ref = {"tanh": torch.tanh, "softmax": lambda t: torch.softmax(t, -1),
           "layer_norm": lambda t: torch.nn.functional.layer_norm(t, (4,)),
           "cross_entropy": lambda t: torch.nn.functional.cross_entropy(
               t, torch.tensor([0, 3, 1]))}[name]
    ours = {"tanh": F.tanh, "softmax": lambda t: F.softmax(t, -1),
            "layer_norm": lambda t: F.layer_norm(t, (4,)),
            "cross_entropy": lambda t: F.cross_entropy(t, torch.tensor([0, 3, 1]))}[name]
    w = torch.randn(3, 4, dtype=torch.float64)
    got, want = [], []
    for f, out in ((ours, got), (ref, want)):
        (g,) = torch.autograd.grad((f(x) * w).sum(), x, create_graph=True)
        (gg,) = torch.autograd.grad((g * g).sum(), x)
        out += [g.detach(), gg]
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)
    assert torch.autograd.gradgradcheck(ours, (rand(3, 4),), eps=1e-6, atol=1e-5, rtol=1e-4)


F32 = [
    (lambda m, x: m.relu(x), "relu"), (lambda m, x: m.sigmoid(x), "sigmoid"),
    (lambda m, x: m.tanh(x), "tanh"), (lambda m, x: m.silu(x), "silu"),
    (lambda m, x: m.gelu(x), "gelu"), (lambda m, x: m.gelu(x, approximate="tanh"), "gelu_t"),
    (lambda m, x: m.softmax(x, -1), "softmax"), (lambda m, x: m.log_softmax(x, 0), "lsm"),
    (lambda m, x: m.layer_norm(x, (x.shape[-1],)), "layer_norm"),
]


@pytest.mark.parametrize("shape", [(7,), (16, 33), (4, 5, 64)])
@pytest.mark.parametrize("k", range(len(F32)))
def test_f32_gradients_match_torch(k, shape):
    fn, _ = F32[k]
    x = rand(*shape, dtype=torch.float32, seed=k)
    g = rand(*shape, dtype=torch.float32, seed=99, grad=False)
    (ours,) = torch.autograd.grad(fn(F, x), x, g)
    (want,) = torch.autograd.grad(fn(TF, x), x, g)
    torch.testing.assert_close(ours, want, rtol=1e-4, atol=1e-5)


def test_f32_matmul_linear_loss_gradients_match_torch():
    x = rand(8, 20, dtype=torch.float32)
    w = rand(10, 20, dtype=torch.float32, seed=1)
    b = rand(10, dtype=torch.float32, seed=2)
    t = torch.randint(0, 10, (8,), generator=torch.Generator().manual_seed(0))
    grads = []
    for m in (F, TF):
        loss = m.cross_entropy(m.linear(x, w, b), t) + m.mse_loss(x @ w.t(), torch.zeros(8, 10))
        grads.append(torch.autograd.grad(loss, (x, w, b)))
    for ours, want in zip(*grads):
        torch.testing.assert_close(ours, want, rtol=1e-4, atol=1e-5)


def _opcheck_cases():
    f64 = dict(dtype=torch.float64, grad=False)
    x, y = rand(3, 4, **f64), rand(3, 4, seed=1, **f64)
    ops = torch.ops.hologram
    return [
        (ops.add.default, (x, y)), (ops.sub.default, (x, y)), (ops.mul.default, (x, y)),
        (ops.div.default, (x, y.abs() + 1)), (ops.relu.default, (x,)),
        (ops.neg.default, (x,)), (ops.abs.default, (x,)), (ops.exp.default, (x,)),
        (ops.log.default, (y.abs() + 1,)), (ops.sqrt.default, (y.abs(),)),
        (ops.sigmoid.default, (x,)), (ops.tanh.default, (x,)), (ops.silu.default, (x,)),
        (ops.softplus.default, (x,)), (ops.gelu.default, (x, "tanh")),
        (ops.softmax.default, (x, 1)), (ops.log_softmax.default, (x, 0)),
        (ops.layer_norm.default, (x, [4], y[0], y[1], 1e-5)),
        (ops.rms_norm.default, (x, [4], y[0], None)),
        (ops.matmul.default, (x, y.t())), (ops.linear.default, (x, y, y[:, 0].contiguous())),
        (ops.sum.default, (x, [1], True)), (ops.mean.default, (x, None, False)),
        (ops.mse_loss.default, (x, y, "sum")),
        (ops.cross_entropy.default, (x, torch.tensor([0, 3, 1]), -100, "mean")),
        (ops.activation_backward.default, (y, x, x.tanh(), "tanh")),
        (ops.softmax_backward.default, (y, x.softmax(1), 1, False)),
        (ops.cat.default, ([x, y], 1)), (ops.stack.default, ([x, y], 0)),
        (ops.where.default, (x > 0, x, y)), (ops.clamp.default, (x, -0.5, 0.5)),
        (ops.binary_cross_entropy_with_logits.default, (x, y.sigmoid(), None, None, "mean")),
        (ops.binary_cross_entropy.default, (x.sigmoid(), y.sigmoid(), None, "none")),
        (ops.binary_cross_entropy_backward.default, (torch.tensor(1.0, dtype=torch.float64),
                                                     x.sigmoid(), y.sigmoid(), None, "mean")),
        (ops.nll_loss.default, (x.log_softmax(1), torch.tensor([0, 3, -100]), y[0].abs(), -100,
                                "mean")),
        (ops.nll_loss_backward.default, (torch.tensor(1.0, dtype=torch.float64),
                                         x.log_softmax(1), torch.tensor([0, 3, 1]), None, -100,
                                         "sum")),
        (ops.dropout.default, (x, 0.3, torch.tensor(12345))),
        (ops.dropout_backward.default, (y, 0.3, torch.tensor(12345))),
        (ops.index_select.default, (x, 1, torch.tensor([3, 0, 3]))),
        (ops.gather.default, (x, 0, torch.tensor([[0, 2], [1, 1]]))),
        (ops.index_add_zeros.default, (y, 0, torch.tensor([2, 0, 2]), [5, 4], False)),
        (ops.index_add_zeros.default, (y, 1, torch.tensor([[0, 1, 1, 3]] * 3), [3, 6], True)),
        (ops.maximum.default, (x, y)), (ops.minimum.default, (x, y[0])),
        (ops.embedding_renorm_.default, (x.clone(), torch.tensor([[2, 0], [2, 1]]), 0.5, 2.0)),
        (ops.embedding_freq_scale.default, (x, torch.tensor([2, 0, 2]), 4)),
    ]


def test_every_registered_op_has_an_opcheck_case():
    """A new op in torch.ops.hologram without an opcheck case fails here."""
    names = {str(op).split(".")[1] for op, _ in _opcheck_cases()}
    registered = {n for n in dir(torch.ops.hologram)
                  if isinstance(getattr(torch.ops.hologram, n), torch._ops.OpOverloadPacket)}
    assert registered, "no ops registered"
    assert registered - names == set()


@pytest.mark.parametrize("k", range(len(_opcheck_cases())))
def test_opcheck(k):
    op, args = _opcheck_cases()[k]
    # Autograd of these ops is registered outside them (autograd.Function), so the
    # autograd-registration test does not apply; schema, fake and dispatch checks do.
    torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor",
                                                 "test_aot_dispatch_static"))


def test_torch_compile_sees_the_ops_in_one_graph():
    """torch.compile (dynamo + AOTAutograd, the aot_eager backend: no C++ toolchain needed)
    traces the functional ops, their autograd.Functions and the nn layers without a graph break
    (fullgraph=True), and gives the eager values and gradients."""
    seen = []

    def backend(gm, example_inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return torch._dynamo.backends.debugging.aot_eager(gm, example_inputs)

    def f(x, y, w):
        return F.log_softmax(F.linear(F.gelu(F.add(x, y)), w), -1).sum()

    x, y, w = rand(4, 6), rand(6, seed=1), rand(3, 6, seed=2)
    c = torch.compile(f, backend=backend, fullgraph=True)
    got = c(x, y, w)
    want = f(x, y, w)
    torch.testing.assert_close(got, want)
    g1 = torch.autograd.grad(got, (x, y, w))
    g2 = torch.autograd.grad(want, (x, y, w))
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b)
    assert seen, "the backend saw no graph"
    model = torch.nn.Sequential(ht.nn.Linear(6, 5), ht.nn.ReLU(), ht.nn.LayerNorm(5))
    xin = rand(2, 6, dtype=torch.float32, grad=False)
    torch.testing.assert_close(torch.compile(model, backend="aot_eager", fullgraph=True)(xin),
                               model(xin))


def test_fake_tensor_mode_uses_the_fake_implementations():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a = torch.empty(3, 1, dtype=torch.float32)
        b = torch.empty(1, 5, dtype=torch.float64)
        r = F.add(a, b)
        m = F.matmul(torch.empty(2, 3, 4), torch.empty(4, 7))
    assert r.shape == (3, 5) and r.dtype == torch.float64
    assert m.shape == (2, 3, 7)


# ---- torch.func: grad / jacrev / vmap through the Functions (setup_context form) and the
# elementwise ops' vmap rules -----------------------------------------------------------------
def _func_cases():
    TF = torch.nn.functional
    F = ht.functional
    w = torch.randn(5, 3, dtype=torch.float64)
    return [
        ("tanh", lambda x: F.tanh(x).sum(), lambda x: torch.tanh(x).sum()),
        ("gelu", lambda x: F.gelu(x).sum(), lambda x: TF.gelu(x).sum()),
        ("mul", lambda x: F.mul(x, x).sum(), lambda x: (x * x).sum()),
        ("softmax", lambda x: (F.softmax(x, -1) ** 2).sum(), lambda x: (torch.softmax(x, -1) ** 2).sum()),
        ("layer_norm", lambda x: (F.layer_norm(x, (3,)) ** 3).sum(),
         lambda x: (TF.layer_norm(x, (3,)) ** 3).sum()),
        ("linear", lambda x: (F.linear(x, w) ** 2).sum(), lambda x: (TF.linear(x, w) ** 2).sum()),
        ("sum", lambda x: F.sum(F.exp(x)), lambda x: torch.exp(x).sum()),
    ]


@pytest.mark.parametrize("name,ours,theirs", _func_cases(), ids=[c[0] for c in _func_cases()])
def test_torch_func_grad_and_vmap(name, ours, theirs):
    x = torch.randn(4, 3, dtype=torch.float64)
    torch.testing.assert_close(torch.func.grad(ours)(x), torch.func.grad(theirs)(x))
    torch.testing.assert_close(torch.func.vmap(torch.func.grad(ours))(x),
                               torch.func.vmap(torch.func.grad(theirs))(x))


def test_torch_func_jacrev_and_vmap_broadcasting():
    F = ht.functional
    x = torch.randn(3, dtype=torch.float64)
    torch.testing.assert_close(torch.func.jacrev(lambda v: F.softmax(v, -1))(x),
                               torch.func.jacrev(lambda v: torch.softmax(v, -1))(x))
    a = torch.randn(5, 2, 3, dtype=torch.float64)
    b = torch.randn(2, 1, dtype=torch.float64)
    torch.testing.assert_close(torch.func.vmap(F.sub, in_dims=(0, None))(a, b), a - b)
    c = torch.randn(2, 3, 5, dtype=torch.float64)
    d = torch.randn(5, 3, dtype=torch.float64)
    torch.testing.assert_close(torch.func.vmap(F.mul, in_dims=(2, 0))(c, d),
                               c.movedim(2, 0) * d[:, None, :])


# ---- gradients with respect to loss targets (torch computes them for probability targets of
# cross_entropy, binary_cross_entropy and binary_cross_entropy_with_logits) -----------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_target_gradients_match_torch(reduction):
    TF = torch.nn.functional
    torch.manual_seed(5)
    x = torch.randn(4, 3, 2, dtype=torch.float64)
    p = torch.rand(4, 3, dtype=torch.float64) * 0.9 + 0.05
    t = torch.rand(4, 3, 2, dtype=torch.float64)
    t2 = torch.rand(4, 3, dtype=torch.float64)
    w = torch.rand(3, dtype=torch.float64)
    pw = torch.rand(3, dtype=torch.float64) * 2
    cases = [
        (lambda a, b: F.cross_entropy(a, b, reduction=reduction),
         lambda a, b: TF.cross_entropy(a, b, reduction=reduction), x, t.softmax(1)),
        (lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction),
         lambda a, b: TF.binary_cross_entropy(a, b, reduction=reduction), p, t2),
        (lambda a, b: F.binary_cross_entropy(a, b, weight=w, reduction=reduction),
         lambda a, b: TF.binary_cross_entropy(a, b, weight=w, reduction=reduction), p, t2),
        (lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction),
         lambda a, b: TF.binary_cross_entropy_with_logits(a, b, reduction=reduction), x[:, :, 0],
         t2),
        (lambda a, b: F.binary_cross_entropy_with_logits(a, b, weight=w, pos_weight=pw,
                                                         reduction=reduction),
         lambda a, b: TF.binary_cross_entropy_with_logits(a, b, weight=w, pos_weight=pw,
                                                          reduction=reduction), x[:, :, 0], t2),
    ]
    for ours, theirs, inp, tgt in cases:
        for wrt_input in (True, False):
            grads = []
            for f in (ours, theirs):
                a = inp.clone().requires_grad_(wrt_input)
                b = tgt.clone().requires_grad_()
                out = f(a, b)
                out.backward(torch.ones_like(out) if reduction == "none" else None)
                grads.append((a.grad, b.grad))
            torch.testing.assert_close(grads[0][1], grads[1][1])
            if wrt_input:
                torch.testing.assert_close(grads[0][0], grads[1][0])
        b = tgt.clone().requires_grad_()
        assert torch.autograd.gradcheck(lambda v, f=ours, a=inp: f(a, v), (b,))


REFUSED = "not differentiable with respect to argument .weight"


def test_loss_weight_gradients_refused_as_torch():
    # torch's own RuntimeError (functional raises torch's exception where torch refuses)
    w = torch.rand(3, dtype=torch.float64, requires_grad=True)
    p = torch.rand(4, 3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match=REFUSED):
        F.binary_cross_entropy(p, torch.rand(4, 3, dtype=torch.float64), weight=w)
    with pytest.raises(RuntimeError, match=REFUSED):
        F.binary_cross_entropy_with_logits(p, torch.rand(4, 3, dtype=torch.float64), weight=w)
    with pytest.raises(RuntimeError, match=REFUSED):   # the input needing none too
        F.nll_loss(torch.rand(4, 3), torch.tensor([0, 1, 2, 0]), weight=w.float())
    with pytest.raises(RuntimeError, match=REFUSED):
        F.binary_cross_entropy(p.detach(), torch.rand(4, 3, dtype=torch.float64), weight=w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_fused_gradient_formulas_compile_and_match_torch(dtype):
    """The loss, clamp, dropout, gelu gradients (ATen's backward ops lowered by the table: fused
    hologram.jit kernels or the pointwise fusion pass) trace without an eager fallback, on 2-D
    and 3-D shapes, and equal torch's gradient (weights, pos_weight, reductions, bounds)."""
    from hologram_torch import _fused
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else {}
    torch.manual_seed(11)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="hologram.jit")
        for shape in ((6, 5), (3, 4, 5)):
            x = torch.randn(shape, dtype=dtype)
            p = torch.rand(shape, dtype=dtype) * 0.9 + 0.05
            t = torch.rand(shape, dtype=dtype)
            w = torch.rand(shape[-1], dtype=dtype)
            for red in ("mean", "sum", "none"):
                cases = [(F.binary_cross_entropy_with_logits,
                          TF.binary_cross_entropy_with_logits, x,
                          dict(weight=w, pos_weight=w + 0.5)),
                         (F.binary_cross_entropy_with_logits,
                          TF.binary_cross_entropy_with_logits, x, {}),
                         (F.binary_cross_entropy, TF.binary_cross_entropy, p,
                          dict(weight=w)),
                         (F.binary_cross_entropy, TF.binary_cross_entropy, p,
                          {})]
                for ours_fn, ref_fn, inp, kw in cases:
                    a, b = inp.clone().requires_grad_(), inp.clone().requires_grad_()
                    ga = torch.autograd.grad(ours_fn(a, t, reduction=red, **kw).sum(), a)[0]
                    gb = torch.autograd.grad(ref_fn(b, t, reduction=red, **kw).sum(), b)[0]
                    torch.testing.assert_close(ga, gb, **tol)
                logits = torch.randn(shape[0], shape[-1], dtype=dtype)
                tgt = torch.randint(0, shape[-1], (shape[0],))
                tgt[0] = -100
                a, b = logits.clone().requires_grad_(), logits.clone().requires_grad_()
                ga = torch.autograd.grad(F.nll_loss(a, tgt, weight=w, reduction=red).sum(), a)[0]
                gb = torch.autograd.grad(TF.nll_loss(b, tgt, weight=w, reduction=red).sum(), b)[0]
                torch.testing.assert_close(ga, gb, **tol)
            for mn, mx in ((-0.5, 0.5), (None, 0.25), (-0.25, None), (w - 1, w)):
                a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
                ga = torch.autograd.grad(F.clamp(a, min=mn, max=mx).sum(), a)[0]
                gb = torch.autograd.grad(torch.clamp(b, min=mn, max=mx).sum(), b)[0]
                torch.testing.assert_close(ga, gb)
            for approximate in ("none", "tanh"):   # gelu_backward's lowerings (the C op)
                xs = torch.cat([x.flatten(), torch.tensor([0.0, -0.0, 1e-30, 9.0, -9.0],
                                                          dtype=dtype)])
                a, b = xs.clone().requires_grad_(), xs.clone().requires_grad_()
                ga = torch.autograd.grad(F.gelu(a, approximate=approximate), a, xs)[0]
                gb = torch.autograd.grad(TF.gelu(b, approximate=approximate), b, xs)[0]
                torch.testing.assert_close(ga, gb, **tol)
            a = x.clone().requires_grad_()
            torch.manual_seed(5)
            y = F.dropout(a, p=0.3, training=True)
            (ga,) = torch.autograd.grad(y, a, torch.ones_like(y))
            torch.testing.assert_close(ga, (y != 0).to(dtype) / 0.7, **tol)
    assert _fused.fallbacks() == 0
    assert all(f.plans() for f in _fused._made.values())
