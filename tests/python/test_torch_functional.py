"""hologram_torch.functional against the torch ops themselves: values, dtypes, shapes,
broadcasting, strided views, 0-d and empty tensors, NaN/inf, the executor forms, and errors.
The elementwise tests also run on CUDA tensors where torch has a GPU (`torch_device`)."""
import math

import pytest

torch = pytest.importorskip("torch")
import hologram as hg  # noqa: E402
from conftest import import_hologram_torch  # noqa: E402

ht = import_hologram_torch()

F = ht.functional
TF = torch.nn.functional

TOL = {torch.float32: (2e-6, 1e-5), torch.float64: (1e-12, 1e-12),
       torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}


def close(got, want, dtype=None):
    assert isinstance(got, torch.Tensor)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.device == want.device
    rtol, atol = TOL.get(dtype or want.dtype, (0, 0))
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)


def rand(*shape, dtype=torch.float32, seed=0, special=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tuple(shape), generator=g, dtype=torch.float64) * 3
    if special and x.numel() >= 4:
        flat = x.view(-1)
        flat[0], flat[1], flat[2] = math.nan, math.inf, -math.inf
    return x.to(dtype)


def views(dtype=torch.float32):
    """Contiguous, transposed, sliced with a step, expanded, 0-d and empty tensors."""
    base = rand(6, 8, dtype=dtype, seed=1)
    return [base, base.t(), base[::2, 1::3], rand(1, 8, dtype=dtype).expand(5, 8),
            rand(dtype=dtype, seed=2), rand(0, 3, dtype=dtype)]


def raises_as_torch(ours, theirs):
    """ours raises what torch raises for the same call: its type and message (functional
    rejects what torch rejects with torch's own exception)."""
    with pytest.raises(Exception) as t:
        theirs()
    with pytest.raises(type(t.value)) as o:
        ours()
    assert str(o.value) == str(t.value)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_binary_matches_torch(name, dtype, torch_device):
    f, tf = getattr(F, name), getattr(torch, name)
    for a in views(dtype):
        a = a.to(torch_device)
        for b in (rand(*a.shape, dtype=dtype, seed=3), rand(a.shape[-1] if a.dim() else 1,
                                                            dtype=dtype, seed=4)):
            b = b.to(torch_device)
            if a.dim() == 0 and b.dim() == 1:
                b = b[:1]
            close(f(a, b), tf(a, b), dtype)
    x = rand(5, 7, dtype=dtype, special=True).to(torch_device)
    close(f(x, x.flip(0)), tf(x, x.flip(0)), dtype)


def test_binary_promotion_scalars_and_alpha():
    i = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    f = rand(2, 3)
    d = rand(3, dtype=torch.float64)
    close(F.add(i, f), torch.add(i, f))           # int32 + f32 -> f32 (numpy would give f64)
    close(F.mul(f, d), torch.mul(f, d))           # f32 * f64 -> f64
    close(F.div(i, i + 1), torch.div(i, i + 1))   # true division of integers -> f32
    close(F.add(i, i), torch.add(i, i))
    close(F.add(f, 2.5), torch.add(f, 2.5))
    close(F.mul(3, f), torch.mul(3, f))
    close(F.add(i, 0.5), torch.add(i, 0.5))
    close(F.add(f, f, alpha=-2.0), torch.add(f, f, alpha=-2.0))
    close(F.sub(f, d, alpha=3), torch.sub(f, d, alpha=3))


@pytest.mark.parametrize("name,tname", [
    ("relu", "relu"), ("sigmoid", "sigmoid"), ("tanh", "tanh"), ("exp", "exp"), ("log", "log"),
    ("sqrt", "sqrt"), ("neg", "neg"), ("abs", "abs"), ("silu", "silu"), ("softplus", "softplus"),
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_unary_matches_torch(name, tname, dtype, torch_device):
    tf = getattr(TF, tname, None) or getattr(torch, tname)
    # silu at -inf is compared in test_limits_at_infinity (torch gives NaN there).
    for x in views(dtype) + [rand(33, dtype=dtype, special=name != "silu")]:
        x = x.to(torch_device)
        if name in ("log", "sqrt"):
            x = x.abs() + 0.1
        close(getattr(F, name)(x), tf(x), dtype)


def test_limits_at_infinity():
    """Where torch's formula gives NaN at an infinity (silu(-inf), gelu(+-inf) of the erf form,
    gelu(-inf) of the tanh form), hologram gives the limit (-0 or inf): a deliberate
    difference, documented in docs/torch.md. Elsewhere NaN and inf are torch's."""
    x = torch.tensor([-math.inf, math.inf, math.nan, -1e30, 1e30, 0.0])
    want = torch.tensor([-0.0, math.inf, math.nan, -0.0, 1e30, 0.0])
    for got in (F.silu(x), F.gelu(x), F.gelu(x, approximate="tanh")):
        torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
        assert torch.signbit(got[0])


def test_integer_unary_and_gelu():
    i = torch.tensor([-3, 0, 5], dtype=torch.int64)
    close(F.relu(i), torch.relu(i))
    close(F.neg(i), torch.neg(i))
    close(F.abs(i), torch.abs(i))
    x = rand(4, 9)
    x[0, 0] = math.nan
    for approx in ("none", "tanh"):
        close(F.gelu(x, approximate=approx), TF.gelu(x, approximate=approx))
    raises_as_torch(lambda: F.gelu(x, approximate="erf"), lambda: TF.gelu(x, approximate="erf"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_softmax_log_softmax(dtype):
    for x in (rand(4, 7, 5, dtype=dtype, special=False), rand(3, 16, dtype=dtype).t(),
              rand(10, dtype=dtype), rand(dtype=dtype)):
        for dim in range(-max(x.dim(), 1), max(x.dim(), 1)):
            close(F.softmax(x, dim), torch.softmax(x, dim), dtype)
            close(F.log_softmax(x, dim=dim), torch.log_softmax(x, dim), dtype)
    m = rand(3, 6)
    m[0] = -math.inf
    m[1, 2] = math.inf
    close(F.softmax(m, 1), torch.softmax(m, 1))
    with pytest.raises(IndexError, match="out of range"):
        F.softmax(m, 2)


def f64_ref(f, *args, **kw):
    """torch's op computed in float64, rounded to the inputs' dtype (a reference that f32's own
    rounding does not blur: with a mean of 100, torch's f32 layer_norm is off by 2e-5)."""
    dt = args[0].dtype
    up = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
          for a in args]
    return f(*up, **kw).to(dt)


def test_norms():
    x = rand(4, 3, 8, seed=5) + 100.0
    w, b = rand(8, seed=6), rand(8, seed=7)
    close(F.layer_norm(x, (8,), w, b), f64_ref(TF.layer_norm, x, (8,), w, b))
    close(F.layer_norm(x, [3, 8]), f64_ref(TF.layer_norm, x, [3, 8]))
    xt = x.transpose(0, 1)
    close(F.layer_norm(xt, (8,), eps=1e-3), f64_ref(TF.layer_norm, xt, (8,), eps=1e-3))
    raises_as_torch(lambda: F.layer_norm(xt, 8), lambda: TF.layer_norm(xt, 8))   # a list of ints
    close(F.rms_norm(x, (8,), w), f64_ref(TF.rms_norm, x, (8,), w))
    close(F.rms_norm(x, (8,), eps=1e-2), f64_ref(TF.rms_norm, x, (8,), eps=1e-2))
    xd = x.double()
    close(F.layer_norm(xd, (8,), w.double(), b.double()), TF.layer_norm(xd, (8,), w.double(),
                                                                        b.double()))
    raises_as_torch(lambda: F.layer_norm(x, (7,)), lambda: TF.layer_norm(x, (7,)))
    raises_as_torch(lambda: F.layer_norm(x, (8,), rand(3)), lambda: TF.layer_norm(x, (8,), rand(3)))


def test_matmul_and_linear():
    for sa, sb in [((5, 7), (7, 3)), ((7,), (7, 3)), ((5, 7), (7,)), ((7,), (7,)),
                   ((2, 5, 7), (7, 3)), ((2, 1, 5, 7), (3, 7, 4)), ((4, 7), (2, 7, 3))]:
        a, b = rand(*sa, seed=8), rand(*sb, seed=9)
        close(F.matmul(a, b), torch.matmul(a, b))
    a = rand(6, 5).t()   # strided operand
    close(F.matmul(a, rand(6, 2)), torch.matmul(a, rand(6, 2)))
    x, w, bias = rand(3, 4, 10), rand(6, 10, seed=1), rand(6, seed=2)
    close(F.linear(x, w, bias), TF.linear(x, w, bias))
    close(F.linear(x, w), TF.linear(x, w))
    close(F.linear(x, rand(10, seed=3)), TF.linear(x, rand(10, seed=3)))
    raises_as_torch(lambda: F.matmul(rand(3, 4), rand(5, 2)),
                    lambda: torch.matmul(rand(3, 4), rand(5, 2)))
    raises_as_torch(lambda: F.linear(rand(3, 4), rand(2, 5)),
                    lambda: TF.linear(rand(3, 4), rand(2, 5)))
    raises_as_torch(lambda: F.matmul(rand(3, 4), rand(4, 2, dtype=torch.float64)),
                    lambda: torch.matmul(rand(3, 4), rand(4, 2, dtype=torch.float64)))


def test_reductions():
    x = rand(3, 4, 5, special=False)
    for dim in (None, 0, -1, (0, 2), [1]):
        for keepdim in (False, True):
            close(F.sum(x, dim, keepdim), torch.sum(x, dim, keepdim))
            close(F.mean(x, dim=dim, keepdim=keepdim), torch.mean(x, dim=dim, keepdim=keepdim))
    close(F.sum(x), torch.sum(x))
    close(F.mean(input=x), torch.mean(input=x))
    i = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    close(F.sum(i, 1), torch.sum(i, 1))   # int32 sums to int64, as torch
    close(F.sum(x.t() if x.dim() == 2 else x.transpose(0, 2), 0), torch.sum(x.transpose(0, 2), 0))
    close(F.sum(rand(0, 3), 0), torch.sum(rand(0, 3), 0))


def test_losses():
    a, b = rand(4, 6, seed=1), rand(4, 6, seed=2)
    for red in ("mean", "sum", "none"):
        close(F.mse_loss(a, b, reduction=red), TF.mse_loss(a, b, reduction=red))
    logits = rand(5, 4, seed=3)
    tgt = torch.tensor([0, 3, 1, -100, 2])
    for red in ("mean", "sum", "none"):
        close(F.cross_entropy(logits, tgt, reduction=red), TF.cross_entropy(logits, tgt,
                                                                            reduction=red))
    probs = torch.softmax(rand(5, 4, seed=4), 1)
    close(F.cross_entropy(logits, probs), TF.cross_entropy(logits, probs))
    img = rand(2, 3, 4, 4, seed=5)
    t4 = torch.randint(0, 3, (2, 4, 4), generator=torch.Generator().manual_seed(0))
    close(F.cross_entropy(img, t4), TF.cross_entropy(img, t4))
    raises_as_torch(lambda: F.cross_entropy(logits, tgt, label_smoothing=1.5),
                    lambda: TF.cross_entropy(logits, tgt, label_smoothing=1.5))
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(a, b, reduction="avg")


# Class weights and label smoothing (composed: log_softmax, nll_loss, the smoothing term),
# nll_loss and binary_cross_entropy: values and float64 gradients against torch, every
# reduction, class-index and probability targets, ignored entries, (N, C, d) and (C,) inputs.
@pytest.mark.parametrize("shape,tshape", [((5, 4), (5,)), ((2, 4, 3), (2, 3)), ((4,), ())])
def test_cross_entropy_weights_smoothing_and_nll(shape, tshape):
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(shape, generator=g, dtype=torch.float64, requires_grad=True)
    C = shape[1] if len(shape) > 1 else shape[0]
    t = torch.randint(0, C, tshape, generator=g)
    if len(tshape) == 1:
        t[2] = -100
    probs = torch.rand(shape, generator=g, dtype=torch.float64).softmax(1 if len(shape) > 1 else 0)
    w = torch.rand(C, generator=g, dtype=torch.float64) + 0.1
    lp = torch.log_softmax(x.detach(), 1 if len(shape) > 1 else 0).requires_grad_()
    for red in ("mean", "sum", "none"):
        for wt in (None, w):
            for eps in (0.0, 0.2):
                for target in (t, probs):
                    kw = dict(weight=wt, reduction=red, label_smoothing=eps)
                    close(F.cross_entropy(x, target, **kw), TF.cross_entropy(x, target, **kw))
                    assert torch.autograd.gradcheck(
                        lambda x, target=target, kw=kw: F.cross_entropy(x, target, **kw), (x,))
            kw = dict(weight=wt, reduction=red)
            close(F.nll_loss(lp, t, **kw), TF.nll_loss(lp, t, **kw))
            assert torch.autograd.gradcheck(lambda lp, kw=kw: F.nll_loss(lp, t, **kw), (lp,))
    for x32 in (torch.randn(6, 3, generator=g), torch.randn(6, 3, generator=g)[::2]):
        lp32 = torch.log_softmax(x32, 1).requires_grad_()
        t32 = torch.tensor([2, 0, 1, 1, 0, 2][:x32.shape[0]])
        a, b = F.nll_loss(lp32, t32), TF.nll_loss(lp32, t32)
        close(a, b)
        close(torch.autograd.grad(a, lp32)[0], torch.autograd.grad(b, lp32)[0])


def test_nll_and_bce_errors():
    lp = torch.log_softmax(torch.randn(3, 4), 1)
    raises_as_torch(lambda: F.nll_loss(lp, torch.tensor([1, 2])),
                    lambda: TF.nll_loss(lp, torch.tensor([1, 2])))
    raises_as_torch(lambda: F.nll_loss(lp, torch.tensor([1.0, 2.0, 0.0])),
                    lambda: TF.nll_loss(lp, torch.tensor([1.0, 2.0, 0.0])))
    raises_as_torch(lambda: F.nll_loss(lp, torch.tensor([1, 2, 0]), weight=torch.ones(3)),
                    lambda: TF.nll_loss(lp, torch.tensor([1, 2, 0]), weight=torch.ones(3)))
    raises_as_torch(lambda: F.nll_loss(lp, torch.tensor([1, 7, 0])),
                    lambda: TF.nll_loss(lp, torch.tensor([1, 7, 0])))
    p, t = torch.tensor([0.5, 1.5]), torch.tensor([0.0, 1.0])
    raises_as_torch(lambda: F.binary_cross_entropy(p, t), lambda: TF.binary_cross_entropy(p, t))
    p, t = torch.tensor([0.5, 0.5]), torch.tensor([0.0])
    raises_as_torch(lambda: F.binary_cross_entropy(p, t), lambda: TF.binary_cross_entropy(p, t))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_binary_cross_entropy(dtype):
    g = torch.Generator().manual_seed(3)
    p = (torch.rand(4, 5, generator=g, dtype=torch.float64) * 0.9 + 0.05).to(dtype)
    p[0, 0], p[0, 1] = 0.0, 1.0                     # the logs clamp at -100
    t = torch.rand(4, 5, generator=g, dtype=torch.float64).to(dtype)
    w = torch.rand(5, generator=g, dtype=torch.float64).to(dtype)
    for red in ("mean", "sum", "none"):
        for wt in (None, w.expand(4, 5)):
            close(F.binary_cross_entropy(p, t, weight=wt, reduction=red),
                  TF.binary_cross_entropy(p, t, weight=wt, reduction=red))
    q = p[1:].clone().to(torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda q: F.binary_cross_entropy(q, t[1:].double()), (q,))
    q32 = p.clone().requires_grad_()
    a, b = F.binary_cross_entropy(q32, t), TF.binary_cross_entropy(q32, t)
    close(torch.autograd.grad(a, q32)[0], torch.autograd.grad(b, q32)[0])


def test_dropout():
    x = torch.randn(1000, 64, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(7)
    y = F.dropout(x, 0.25)
    torch.manual_seed(7)
    assert torch.equal(F.dropout(x, 0.25), y)        # torch.manual_seed makes it repeatable
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.75) < 0.01
    torch.testing.assert_close(y[kept], x[kept] / 0.75)
    assert not torch.equal(F.dropout(x, 0.25), y)    # a new draw
    with pytest.raises(TypeError, match="generator"):   # torch's F.dropout has no generator=
        F.dropout(x, 0.5, generator=torch.Generator())
    assert F.dropout(x, 0.5, training=False) is x and F.dropout(x, 0.0) is x
    assert torch.equal(F.dropout(x, 1.0), torch.zeros_like(x))
    xg = x.clone().requires_grad_()
    out = F.dropout(xg, 0.4)
    (gx,) = torch.autograd.grad(out.sum(), xg)
    torch.testing.assert_close(gx, (out != 0).float() / 0.6)   # the forward's own mask
    xd = torch.randn(30, dtype=torch.float64, requires_grad=True)

    def seeded(v):   # the same mask every call: torch's default generator reseeded
        torch.manual_seed(4)
        return F.dropout(v, 0.3)

    assert torch.autograd.gradcheck(seeded, (xd,))
    assert torch.autograd.gradgradcheck(seeded, (xd,))
    w = torch.ones(10)
    assert F.dropout(w, 0.5, inplace=True) is w
    assert set(w.tolist()) <= {0.0, 2.0}
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)
    raises_as_torch(lambda: F.dropout(torch.ones(3, dtype=torch.int64), 0.5),
                    lambda: TF.dropout(torch.ones(3, dtype=torch.int64), 0.5))


def test_bmm_addmm():
    g = torch.Generator().manual_seed(9)
    a = torch.randn(3, 4, 5, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 5, 2, generator=g, dtype=torch.float64, requires_grad=True)
    close(F.bmm(a, b), torch.bmm(a, b))
    assert torch.autograd.gradcheck(F.bmm, (a, b))
    close(F.bmm(a.float()[:, ::2], b.float().transpose(1, 2).contiguous().transpose(1, 2)),
          torch.bmm(a.float()[:, ::2], b.float()))
    c = torch.randn(4, 2, generator=g, dtype=torch.float64, requires_grad=True)
    m1 = torch.randn(4, 5, generator=g, dtype=torch.float64, requires_grad=True)
    m2 = torch.randn(5, 2, generator=g, dtype=torch.float64, requires_grad=True)
    for beta, alpha in ((1, 1), (0.5, 2.0), (0, 1)):
        close(F.addmm(c, m1, m2, beta=beta, alpha=alpha), torch.addmm(c, m1, m2, beta=beta,
                                                                         alpha=alpha))
        assert torch.autograd.gradcheck(
            lambda c, m1, m2, be=beta, al=alpha: F.addmm(c, m1, m2, beta=be, alpha=al),
            (c, m1, m2))
    bias = torch.randn(2, dtype=torch.float64)
    close(F.addmm(bias, m1, m2), torch.addmm(bias, m1, m2))       # input broadcast
    nan = torch.full((4, 2), math.nan, dtype=torch.float64)
    close(F.addmm(nan, m1, m2, beta=0), torch.addmm(nan, m1, m2, beta=0))
    raises_as_torch(lambda: F.bmm(a[0], b[0]), lambda: torch.bmm(a[0], b[0]))
    raises_as_torch(lambda: F.bmm(a, a), lambda: torch.bmm(a, a))
    raises_as_torch(lambda: F.addmm(c, m1, m1), lambda: torch.addmm(c, m1, m1))


def test_executor_forms_and_results_share_nothing_with_inputs():
    ex = hg.Executor("cpu", num_threads=1)
    x, y = rand(100), rand(100, seed=1)
    for z in (F.add(ex, x, y), F.add(x, y, executor=ex), F.add(x, y)):
        close(z, x + y)
        assert z.data_ptr() not in (x.data_ptr(), y.data_ptr())
    close(F.relu(ex, x), torch.relu(x))
    close(F.softmax(ex, x, 0), torch.softmax(x, 0))
    with pytest.raises(TypeError, match="twice"):
        F.add(ex, x, y, executor=ex)


def test_inputs_are_read_in_place():
    """Zero copy: a view's elements are read where they are (a huge stride costs nothing)."""
    big = torch.zeros(1000, 1000)
    v = big[::999, ::999]            # 2 x 2 view spread over 4 MB
    v.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    close(F.mul(v, v), v * v)


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_bad_inputs_raise_clear_errors():
    x = rand(3)
    with pytest.raises(TypeError, match="complex"):
        F.add(torch.ones(3, dtype=torch.complex64), torch.ones(3, dtype=torch.complex64))
    with pytest.raises(TypeError, match="sparse|strided"):
        F.relu(torch.eye(3).to_sparse())
    with pytest.raises(TypeError, match="quantized"):
        F.relu(torch.quantize_per_tensor(x, 0.1, 0, torch.quint8))
    raises_as_torch(lambda: F.relu([1.0, 2.0]), lambda: TF.relu([1.0, 2.0]))
    raises_as_torch(lambda: F.softmax(torch.arange(3), 0),
                    lambda: torch.softmax(torch.arange(3), 0))
    with pytest.raises(RuntimeError, match="broadcast|size"):
        F.add(rand(3), rand(4))
    with pytest.raises(TypeError, match="unexpected keyword"):
        F.relu(x, foo=1)
    assert torch.equal(x, rand(3))   # inputs intact after every error
    xi = x.clone()
    assert F.relu(xi, inplace=True) is xi and torch.equal(xi, x.relu())   # torch's own, in place


def test_metal_executor_raises_like_executor():
    if hg.is_metal_available():
        pytest.skip("this machine has Metal")
    with pytest.raises(hg.BackendUnavailableError, match="metal"):
        ht.nn.Linear(512, 256, backend="metal")


def test_cat_stack_where_clamp_bce():
    a, b = rand(2, 3), rand(4, 3, seed=1)
    i = torch.arange(3, dtype=torch.int32).reshape(1, 3)
    close(F.cat([a, b]), torch.cat([a, b]))
    close(F.cat([a.t(), b.t()], dim=1), torch.cat([a.t(), b.t()], dim=1))
    close(F.cat([a, i]), torch.cat([a, i]))                 # promotion across the list
    close(F.stack([a, a * 2], 1), torch.stack([a, a * 2], 1))
    cond = rand(4, 3, seed=2) > 0
    close(F.where(cond, b, rand(3, seed=3)), torch.where(cond, b, rand(3, seed=3)))
    close(F.where(cond, b, 0.5), torch.where(cond, b, 0.5))
    close(F.where(cond, 2, b.double()), torch.where(cond, 2, b.double()))
    x = rand(5, 6, special=True)
    close(F.clamp(x, -1.0, 2.0), torch.clamp(x, -1.0, 2.0))
    close(F.clamp(x, min=0.5), torch.clamp(x, min=0.5))
    close(F.clip(x, max=0.0), torch.clip(x, max=0.0))
    t = torch.rand(5, 6)
    w, pw = torch.rand(5, 6), torch.rand(6) + 0.5
    for red in ("none", "mean", "sum"):
        close(F.binary_cross_entropy_with_logits(x.nan_to_num(0, 50, -50), t, weight=w,
                                                 pos_weight=pw, reduction=red),
              TF.binary_cross_entropy_with_logits(x.nan_to_num(0, 50, -50), t, weight=w,
                                                  pos_weight=pw, reduction=red))
    raises_as_torch(lambda: F.where(b, b, b), lambda: torch.where(b, b, b))
    with pytest.raises(RuntimeError, match="At least one"):   # as torch
        F.clamp(x)
    with pytest.raises(ValueError, match="non-empty"):
        F.cat([])


# embedding / index_select / gather: values against torch, float64 gradients (gradcheck; their
# backward is hologram's index_add / scatter_add), repeated indices, strided inputs, padding_idx,
# int32 indices, 0-d inputs, and errors.
def test_embedding_index_select_gather():
    g = torch.Generator().manual_seed(12)
    w = torch.randn(10, 4, generator=g, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([[1, 3, 1], [9, 0, 3]])
    close(F.embedding(idx, w), TF.embedding(idx, w))
    assert torch.autograd.gradcheck(lambda w: F.embedding(idx, w), (w,))
    gout = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
    for pad in (3, -1, None):
        a, = torch.autograd.grad(F.embedding(idx, w, padding_idx=pad), w, gout)
        b, = torch.autograd.grad(TF.embedding(idx, w, padding_idx=pad), w, gout)
        close(a, b)
    w32 = w.detach().float()[:, ::2].requires_grad_()      # a strided weight, int32 indices
    i32 = idx.to(torch.int32)
    a = F.embedding(i32, w32)
    b = TF.embedding(i32, w32)
    close(a, b)
    close(torch.autograd.grad(a.sum(), w32)[0], torch.autograd.grad(b.sum(), w32)[0])
    x = torch.randn(4, 5, generator=g, dtype=torch.float64, requires_grad=True)
    for dim, ix in ((1, torch.tensor([4, 0, 4])), (0, torch.tensor([3, 3])), (-1, torch.tensor(2))):
        close(F.index_select(x, dim, ix), torch.index_select(x, dim, ix))
        assert torch.autograd.gradcheck(lambda x, d=dim, i=ix: F.index_select(x, d, i), (x,))
    gi = torch.tensor([[0, 1, 1, 2, 0], [3, 3, 2, 0, 1]])
    for dim, ix in ((0, gi), (1, gi[:, :3])):
        close(F.gather(x, dim, ix), torch.gather(x, dim, ix))
        assert torch.autograd.gradcheck(lambda x, d=dim, i=ix: F.gather(x, d, i), (x,))
    s = torch.tensor(5.0, dtype=torch.float64, requires_grad=True)
    close(F.index_select(s, 0, torch.tensor([0])), torch.index_select(s, 0, torch.tensor([0])))
    with pytest.raises(IndexError, match="out of range"):   # torch's class
        F.embedding(torch.tensor([10]), w)
    raises_as_torch(lambda: F.index_select(x, 0, torch.tensor([0.0])),
                    lambda: torch.index_select(x, 0, torch.tensor([0.0])))
    raises_as_torch(lambda: F.index_select(x, 0, gi), lambda: torch.index_select(x, 0, gi))
    with pytest.raises(IndexError, match="out of range"):
        F.gather(x, 2, gi)
    raises_as_torch(lambda: F.embedding(idx, w, padding_idx=10),
                    lambda: TF.embedding(idx, w, padding_idx=10))
    raises_as_torch(lambda: F.embedding(idx, w[0]), lambda: TF.embedding(idx, w[0]))


def test_binary_fast_path_and_capsule_errors():
    """The one-C-call path of plain same-dtype CPU tensors (hologram._C._capsule_binary):
    results as torch's for floats, integers and 0-d operands; bad input raises, nothing written."""
    import hologram as hg
    import hologram_torch as ht
    F = ht.functional
    for dt in (torch.float32, torch.float64, torch.int32, torch.int64, torch.float16):
        a = (torch.arange(12) - 5).to(dt).reshape(3, 4)
        b = (torch.arange(12) % 5 + 1).to(dt).reshape(3, 4)
        for f, t in ((F.add, torch.add), (F.sub, torch.sub), (F.mul, torch.mul)):
            assert torch.equal(f(a, b), t(a, b))
            assert torch.equal(f(a, b[0, 0]), t(a, b[0, 0]))   # 0-d operand
    assert torch.equal(F.div(torch.ones(3), torch.full((3,), 4.0)), torch.full((3,), 0.25))
    td = torch._C._to_dlpack
    e = hg.default_cpu_executor()
    x = torch.ones(3)
    with pytest.raises(hg.InvalidArgumentError, match="out of range"):
        hg._C._capsule_binary(99, td(x), td(x), e)
    with pytest.raises(TypeError, match="DLPack capsule"):
        hg._C._capsule_binary(0, x, td(x), e)
    with pytest.raises(hg.SizeMismatchError):
        hg._C._capsule_binary(0, td(x), td(torch.ones(2)), e)
    assert torch.equal(x, torch.ones(3))
    r = torch._C._from_dlpack(hg._C._capsule_binary(2, td(x), td(torch.full((3,), 2.0)), e))
    assert torch.equal(r, torch.full((3,), 2.0))


def test_matmul_capsule_path_and_errors():
    """The compile backend's mm / bmm / addmm in one C call (hologram._C._capsule_matmul and
    _capsule_addmm through _aten.matmul's _mm and _addmm): torch's values for 2-D and batched operands, transposed and sliced views,
    float32 and float64; float16 and refused shapes take _ops.matmul (its error); bad
    capsules raise, nothing written."""
    import hologram as hg
    from hologram_torch._aten.matmul import _mm
    torch.manual_seed(0)
    for dt in (torch.float32, torch.float64):
        cases = [(torch.randn(5, 7, dtype=dt), torch.randn(7, 3, dtype=dt)),
                 (torch.randn(7, 5, dtype=dt).t(), torch.randn(3, 7, dtype=dt).t()),
                 (torch.randn(4, 5, 6, dtype=dt), torch.randn(4, 6, 2, dtype=dt)),
                 (torch.randn(4, 6, 5, dtype=dt).transpose(1, 2), torch.randn(4, 6, 4, dtype=dt)[:, :, ::2]),
                 (torch.randn(0, 3, dtype=dt), torch.randn(3, 4, dtype=dt))]
        for a, b in cases:
            got = _mm(a, b)
            assert got.dtype == dt and got.shape == torch.matmul(a, b).shape
            torch.testing.assert_close(got, torch.matmul(a, b))
    ah, bh = torch.randn(3, 8).half(), torch.randn(8, 2).half()   # float16: the general path
    torch.testing.assert_close(_mm(ah, bh), ah @ bh, rtol=2e-3, atol=2e-3)
    with pytest.raises(ValueError, match="cannot be multiplied"):
        _mm(torch.randn(2, 3), torch.randn(4, 5))
    td = torch._C._to_dlpack
    e = hg.default_cpu_executor()
    x = torch.ones(2, 2)
    with pytest.raises(TypeError, match="DLPack capsule"):
        hg._C._capsule_matmul(x, td(x), e)
    with pytest.raises(hg.HologramError):
        hg._C._capsule_matmul(td(x), td(torch.ones(3, 3)), e)
    assert torch.equal(x, torch.ones(2, 2))
    r = torch._C._from_dlpack(hg._C._capsule_matmul(td(x), td(torch.full((2, 2), 2.0)), e))
    assert torch.equal(r, torch.full((2, 2), 4.0))
    # addmm (bias + a @ b, one C call): biases of every broadcast shape, a transposed weight
    from hologram_torch._aten.matmul import _addmm
    for dt in (torch.float32, torch.float64):
        x, w = torch.randn(4, 5, dtype=dt), torch.randn(3, 5, dtype=dt).t()
        for bias in (torch.randn(3, dtype=dt), torch.randn(4, 3, dtype=dt),
                     torch.randn(1, 3, dtype=dt), torch.randn(4, 1, dtype=dt),
                     torch.randn(3, dtype=dt)[None].expand(4, 3)):
            torch.testing.assert_close(_addmm(bias, x, w), torch.addmm(bias, x, w))
    with pytest.raises(hg.HologramError):   # a bias that does not broadcast to the product
        hg._C._capsule_addmm(td(torch.ones(5)), td(x.float()), td(w.float()), e)


def test_cuda_executor_refuses_cpu_tensors():
    """A CUDA executor (the CUDA backend's emulation in CI's emulated run) with CPU tensors: a
    clear error before anything runs, nothing copied across devices. (CUDA tensors themselves
    need a CUDA build of torch: the emulation's buffers are DLPack kCUDA memory.)"""
    import hologram as hg
    try:
        ex = hg.Executor("cuda")
    except hg.BackendUnavailableError:
        pytest.skip("no CUDA backend here (HOLOGRAM_CUDA_EMULATE=1 gives the emulation)")
    F = ht.functional
    x = torch.randn(3)
    keep = x.clone()
    for call in (lambda: F.add(ex, x, x), lambda: F.tanh(x, executor=ex),
                 lambda: ht.nn.Linear(4, 3, executor=ex)(torch.randn(2, 4)),
                 lambda: F.softmax(ex, x, 0)):
        with pytest.raises(ValueError, match="nothing is copied across devices"):
            call()
    assert torch.equal(x, keep)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("beta,threshold", [(1.0, 20.0), (2.0, 5.0), (0.5, 20.0), (-1.0, 3.0),
                                            (1.0, 2.0)])
def test_softplus_beta_threshold(beta, threshold, dtype):
    x = torch.tensor([-40.0, -3.0, -0.5, 0.0, 0.7, 2.5, 4.0, 12.0, 25.0, 100.0], dtype=dtype)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    ours = ht.functional.softplus(xa, beta=beta, threshold=threshold)
    theirs = torch.nn.functional.softplus(xb, beta=beta, threshold=threshold)
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(ours, theirs, **tol)
    ours.sum().backward()
    theirs.sum().backward()
    torch.testing.assert_close(xa.grad, xb.grad, **tol)
    with pytest.raises(ValueError, match="beta"):
        ht.functional.softplus(x, beta=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_clamp_tensor_bounds_match_torch(dtype):
    torch.manual_seed(3)
    x = torch.randn(4, 5, dtype=dtype) * 2
    x[0, 0] = float("nan")
    lo = torch.randn(5, dtype=dtype) - 1
    hi = torch.randn(4, 1, dtype=dtype) + 1
    hi[2, 0] = -3.0              # crossed bounds in row 2: torch gives max there
    lo2 = lo.clone()
    lo2[3] = float("nan")        # a NaN bound gives NaN
    # equal bounds: torch gives min no gradient (its rule needs min < max), max where x > max
    for mn, mx in ((lo, hi), (lo, None), (None, hi), (lo2, hi), (lo, 0.5), (-0.25, hi),
                   (lo, lo.clone())):
        args = [t.clone().requires_grad_() if isinstance(t, torch.Tensor) else t
                for t in (x, mn, mx)]
        # torch takes both bounds as numbers or both as tensors, and so do we
        ref = [t.clone().requires_grad_() if isinstance(t, torch.Tensor) else
               (torch.tensor(t, dtype=dtype) if t is not None else None) for t in (x, mn, mx)]
        if any(isinstance(t, float) for t in args):
            with pytest.raises(TypeError, match="invalid combination"):
                ht.functional.clamp(args[0], min=args[1], max=args[2])
            with pytest.raises(TypeError, match="invalid combination"):
                torch.clamp(args[0], min=args[1], max=args[2])
            args = ref
        ours = ht.functional.clamp(args[0], min=args[1], max=args[2])
        theirs = torch.clamp(ref[0], min=ref[1], max=ref[2])
        torch.testing.assert_close(ours, theirs, equal_nan=True)
        g = torch.randn(theirs.shape, dtype=dtype)
        ours.backward(g)
        theirs.backward(g)
        for a, b in zip(args, ref):
            if isinstance(a, torch.Tensor):
                torch.testing.assert_close(a.grad, b.grad)
    # integer input with float bounds: torch's promotion
    xi = torch.arange(-3, 3)
    torch.testing.assert_close(ht.functional.clamp(xi, min=torch.tensor(-1.5)),
                               torch.clamp(xi, min=torch.tensor(-1.5)))
    raises_as_torch(lambda: ht.functional.clamp(x, min=torch.zeros(3)),
                    lambda: torch.clamp(x, min=torch.zeros(3)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_embedding_max_norm_freq_and_sparse_match_torch(dtype):
    """max_norm renorms the named rows in place (every norm type torch takes), once however often
    a row is named, and bumps weight's version as torch's in-place renorm does;
    scale_grad_by_freq divides each row's gradient by its count; sparse gives torch's COO
    gradient (padding rows left out); sparse with scale_grad_by_freq is refused at backward, as
    torch refuses it."""
    torch.manual_seed(7)
    idx = torch.tensor([[1, 2, 2, 9], [3, 1, 0, 2]])
    ulp = dict(rtol=4 * torch.finfo(dtype).eps, atol=4 * torch.finfo(dtype).eps)
    for norm_type in (2.0, 1.0, 3.0, 0.5, float("inf"), float("-inf"), 0.0):
        for freq in (False, True):
            w0 = torch.randn(10, 4, dtype=dtype) * 2
            w0[9] = 0.1            # one named row under max_norm: unchanged
            wa, wb = w0.clone().requires_grad_(), w0.clone().requires_grad_()
            va = wa._version
            ya = F.embedding(idx, wa, max_norm=1.5, norm_type=norm_type,
                             scale_grad_by_freq=freq)
            yb = torch.nn.functional.embedding(idx, wb, max_norm=1.5, norm_type=norm_type,
                                               scale_grad_by_freq=freq)
            assert wa._version > va
            torch.testing.assert_close(wa.detach(), wb.detach(), **ulp)
            torch.testing.assert_close(ya, yb, **ulp)
            assert torch.equal(wa.detach()[[4, 5, 6, 7, 8]], w0[[4, 5, 6, 7, 8]])
            g = torch.randn(ya.shape, dtype=dtype)
            ya.backward(g)
            yb.backward(g)
            torch.testing.assert_close(wa.grad, wb.grad)
    # sparse gradients: the same COO tensor as torch's, with and without a padding row
    for pad in (None, 1):
        w0 = torch.randn(10, 3, dtype=dtype)
        wa, wb = w0.clone().requires_grad_(), w0.clone().requires_grad_()
        g = torch.randn(2, 4, 3, dtype=dtype)
        F.embedding(idx, wa, padding_idx=pad, sparse=True).backward(g)
        torch.nn.functional.embedding(idx, wb, padding_idx=pad, sparse=True).backward(g)
        assert wa.grad.is_sparse and wa.grad.shape == wb.grad.shape
        assert torch.equal(wa.grad._indices(), wb.grad._indices())
        torch.testing.assert_close(wa.grad._values(), wb.grad._values())
        torch.testing.assert_close(wa.grad.to_dense(), wb.grad.to_dense())
    w = torch.randn(10, 3, dtype=dtype, requires_grad=True)
    y = F.embedding(idx, w, sparse=True, scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq"):
        y.sum().backward()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_sparse_grad_matches_torch(dim):
    """sparse_grad=True: input's gradient is torch's COO tensor (coordinates in torch's order,
    repeats uncoalesced), also for 3-D and 0-d inputs; negative indices are refused, as by
    torch."""
    torch.manual_seed(2)
    for shape in ((4, 5), (3, 4, 5)):
        x = torch.randn(shape, dtype=torch.float64)
        ishape = list(shape)
        ishape[dim] = 3
        ishape[-1 if dim != -1 else 0] = 2
        index = torch.randint(0, shape[dim], ishape)
        a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
        g = torch.randn(ishape, dtype=torch.float64)
        F.gather(a, dim, index, sparse_grad=True).backward(g)
        torch.gather(b, dim, index, sparse_grad=True).backward(g)
        assert a.grad.is_sparse
        assert torch.equal(a.grad._indices(), b.grad._indices())
        torch.testing.assert_close(a.grad._values(), b.grad._values())
        c = x.clone().requires_grad_()
        raises_as_torch(lambda: F.gather(c, dim, index - shape[dim], sparse_grad=True),
                        lambda: torch.gather(c, dim, index - shape[dim], sparse_grad=True))
    s = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    F.gather(s, 0, torch.tensor(0), sparse_grad=True).backward()
    assert s.grad.is_sparse and s.grad.to_dense().item() == 1.0
