"""vmap rules of hologram_torch's ops (torch.func.vmap without torch's batched fallback loop),
per-sample gradients with vmap of grad, and the losses with every target ignored: each against
torch's own ops."""
import pytest

torch = pytest.importorskip("torch")
from test_torch_autograd import F, TF, ht, rand  # noqa: E402  (the gradient tests' inputs)


def test_vmap_rules_of_the_row_ops():
    """softmax / log_softmax along any dim and layer_norm / rms_norm under vmap, the batch dim
    anywhere (one call for the batch), and a batched weight (per element)."""
    TF = torch.nn.functional
    x = torch.randn(3, 5, 4, dtype=torch.float64)
    for in_dim in (0, 1, 2):
        for dim in (0, -1, 1):
            torch.testing.assert_close(
                torch.func.vmap(lambda v: F.softmax(v, dim), in_dims=in_dim)(x),
                torch.func.vmap(lambda v: torch.softmax(v, dim), in_dims=in_dim)(x))
            torch.testing.assert_close(
                torch.func.vmap(lambda v: F.log_softmax(v, dim), in_dims=in_dim)(x),
                torch.func.vmap(lambda v: torch.log_softmax(v, dim), in_dims=in_dim)(x))
        n = x.movedim(in_dim, 0).shape[-1]
        w = torch.randn(n, dtype=torch.float64)
        torch.testing.assert_close(
            torch.func.vmap(lambda v: F.layer_norm(v, (n,), w), in_dims=in_dim)(x),
            torch.func.vmap(lambda v: TF.layer_norm(v, (n,), w), in_dims=in_dim)(x))
        torch.testing.assert_close(
            torch.func.vmap(lambda v: F.rms_norm(v, (n,), w), in_dims=in_dim)(x),
            torch.func.vmap(lambda v: TF.rms_norm(v, (n,), w), in_dims=in_dim)(x))
    s = torch.randn(5, dtype=torch.float64)   # 0-d elements, and the gradients' rules
    for fo, ft in ((F.softmax, torch.softmax), (F.log_softmax, torch.log_softmax)):
        torch.testing.assert_close(torch.func.vmap(lambda v: fo(v, 0))(s),
                                   torch.func.vmap(lambda v: ft(v, 0))(s))
        torch.testing.assert_close(
            torch.func.vmap(torch.func.grad(lambda v: (fo(v, 0) ** 2).sum()))(s),
            torch.func.vmap(torch.func.grad(lambda v: (ft(v, 0) ** 2).sum()))(s))
        for dim in (0, 1):
            torch.testing.assert_close(
                torch.func.vmap(torch.func.grad(lambda v: (fo(v, dim) ** 2).sum()),
                                in_dims=1)(x),
                torch.func.vmap(torch.func.grad(lambda v: (ft(v, dim) ** 2).sum()),
                                in_dims=1)(x))
    ws = torch.randn(3, 4, dtype=torch.float64)
    torch.testing.assert_close(
        torch.func.vmap(lambda v, wt: F.layer_norm(v, (4,), wt))(x, ws),
        torch.func.vmap(lambda v, wt: TF.layer_norm(v, (4,), wt))(x, ws))


def _no_fallback():
    """torch's batched fallback warns (a loop over the batch): an error here."""
    import warnings
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.filterwarnings("error", message=".*batching rule.*")
    return ctx


@pytest.mark.parametrize("sa,sb,dims", [
    ((5, 3, 4), (4, 2), (0, None)), ((3, 5, 4), (4, 2), (1, None)), ((5, 4), (4, 2), (0, None)),
    ((5, 4), (5, 4), (0, 0)), ((4,), (5, 4, 2), (None, 0)), ((5, 2, 3, 4), (5, 4, 6), (0, 0)),
    ((5, 3, 4), (2, 1, 4, 6), (0, None)), ((2, 3, 4), (4, 6, 5), (None, 2)),
    ((5, 4), (4,), (0, None)), ((4, 5), (4,), (1, None)), ((5, 4), (5, 4, 3), (0, 0))])
def test_vmap_rule_of_matmul(sa, sb, dims):
    a = torch.randn(*sa, dtype=torch.float64)
    b = torch.randn(*sb, dtype=torch.float64)
    ctx = _no_fallback()
    try:
        got = torch.func.vmap(F.matmul, in_dims=dims)(a, b)
    finally:
        ctx.__exit__(None, None, None)
    torch.testing.assert_close(got, torch.func.vmap(torch.matmul, in_dims=dims)(a, b))


def test_vmap_rules_of_linear_and_reductions():
    x = torch.randn(7, 3, 4, dtype=torch.float64)
    w, b = torch.randn(6, 4, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    ws, bs = torch.randn(7, 6, 4, dtype=torch.float64), torch.randn(7, 6, dtype=torch.float64)
    vm = torch.func.vmap
    ctx = _no_fallback()
    try:
        cases = [((x, w, b), (0, None, None)), ((x, ws, bs), (0, 0, 0)),
                 ((x, ws, bs), (None, 0, 0)), ((x, ws, b), (0, 0, None)),
                 ((x.transpose(0, 1), ws, b), (1, 0, None)), ((x, w, bs), (0, None, 0))]
        for args, dims in cases:
            torch.testing.assert_close(vm(F.linear, in_dims=dims)(*args),
                                       vm(TF.linear, in_dims=dims)(*args))
        xi = torch.randint(-5, 5, (4, 3, 5))
        for t in (x, xi):
            for in_dim in (0, 1, 2):
                for dim, keep in ((None, False), (0, False), (-1, True), ((0, 1), False)):
                    got = vm(lambda v: F.sum(v, dim=dim, keepdim=keep), in_dims=in_dim)(t)
                    want = vm(lambda v: torch.sum(v, dim=dim, keepdim=keep), in_dims=in_dim)(t)
                    assert got.dtype == want.dtype
                    torch.testing.assert_close(got, want)
                    if t.is_floating_point():
                        torch.testing.assert_close(
                            vm(lambda v: F.mean(v, dim=dim, keepdim=keep), in_dims=in_dim)(t),
                            vm(lambda v: torch.mean(v, dim=dim, keepdim=keep), in_dims=in_dim)(t))
        s = torch.randn(5, dtype=torch.float64)   # 0-d per element
        torch.testing.assert_close(vm(F.sum)(s), s)
        torch.testing.assert_close(vm(lambda v: F.mean(v, dim=0))(s), s)
    finally:
        ctx.__exit__(None, None, None)


def test_per_sample_gradients_with_vmap_of_grad():
    """functorch's per-sample-gradient recipe on a hologram model, one batched call per op
    (no fallback loop), against the same recipe on torch.nn."""
    torch.manual_seed(0)
    ours = torch.nn.Sequential(ht.nn.Linear(4, 8), ht.nn.GELU(), ht.nn.LayerNorm(8),
                               ht.nn.Linear(8, 3)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.LayerNorm(8),
                                 torch.nn.Linear(8, 3)).double()
    theirs.load_state_dict(ours.state_dict())
    params = {k: v.detach() for k, v in ours.named_parameters()}
    xs, ys = torch.randn(10, 4, dtype=torch.float64), torch.randint(0, 3, (10,))

    def loss(model, ce):
        def f(p, x, y):
            out = torch.func.functional_call(model, p, (x.unsqueeze(0),))
            return ce(out, y.unsqueeze(0))
        return f

    ctx = _no_fallback()
    try:
        g1 = torch.func.vmap(torch.func.grad(loss(ours, F.cross_entropy)),
                             in_dims=(None, 0, 0))(params, xs, ys)
    finally:
        ctx.__exit__(None, None, None)
    g2 = torch.func.vmap(torch.func.grad(loss(theirs, TF.cross_entropy)),
                         in_dims=(None, 0, 0))(params, xs, ys)
    for k in g1:
        assert g1[k].shape == (10,) + params[k].shape
        torch.testing.assert_close(g1[k], g2[k])


@pytest.mark.parametrize("lshape,tshape", [((5,), ()), ((3, 5), (3,)), ((3, 5, 2), (3, 2))])
def test_vmap_rules_of_cross_entropy_and_its_gradient(lshape, tshape):
    """The batch folded into the samples (one call), per-element 'mean' over the targets
    counted; class indices (one ignored) and probabilities; against torch's vmap."""
    torch.manual_seed(1)
    vm, size = torch.func.vmap, 4
    lg = torch.randn(size, *lshape, dtype=torch.float64)
    tg = torch.randint(0, 5, (size,) + tshape)
    if tshape:
        tg.view(-1)[0] = -100
    probs = torch.softmax(torch.randn(size, *lshape, dtype=torch.float64),
                          dim=1 if len(lshape) > 1 else -1)
    ctx = _no_fallback()
    try:
        for t, reds in ((tg, ("mean", "sum", "none")), (probs, ("mean", "sum"))):
            for red in reds:
                def ours(v, w):
                    return F.cross_entropy(v, w, reduction=red)

                def theirs(v, w):
                    return TF.cross_entropy(v, w, reduction=red)

                torch.testing.assert_close(vm(ours)(lg, t), vm(theirs)(lg, t))
                torch.testing.assert_close(
                    vm(torch.func.grad(lambda v, w: ours(v, w).sum()))(lg, t),
                    vm(torch.func.grad(lambda v, w: theirs(v, w).sum()))(lg, t))
    finally:
        ctx.__exit__(None, None, None)


def test_cross_entropy_with_every_target_ignored():
    """The loss is 0 / 0 = NaN and the gradient 0, as torch's (eager and under vmap)."""
    lg = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    t = torch.full((3,), -100)
    assert torch.isnan(F.cross_entropy(lg, t)) and torch.isnan(TF.cross_entropy(lg, t))
    g = torch.autograd.grad(F.cross_entropy(lg, t), lg)[0]
    torch.testing.assert_close(g, torch.autograd.grad(TF.cross_entropy(lg, t), lg)[0])
    assert torch.equal(g, torch.zeros_like(g))
    tb = torch.randint(0, 5, (2, 3))
    tb[1] = -100
    lb = torch.randn(2, 3, 5, dtype=torch.float64)
    torch.testing.assert_close(
        torch.func.vmap(torch.func.grad(lambda v, w: F.cross_entropy(v, w)))(lb, tb),
        torch.func.vmap(torch.func.grad(lambda v, w: TF.cross_entropy(v, w)))(lb, tb))


def test_vmap_rules_of_where_clamp_and_mse_loss():
    """where, clamp and its gradient, mse_loss (each reduction, either operand batched, 0-d
    elements) under vmap: one call on the batch, against torch's vmap."""
    vm = torch.func.vmap
    x = torch.randn(4, 3, 5, dtype=torch.float64)
    y = torch.randn(3, 5, dtype=torch.float64)
    c = torch.rand(4, 3, 5) > 0.5
    ctx = _no_fallback()
    try:
        torch.testing.assert_close(vm(F.where)(c, x, x * 2), vm(torch.where)(c, x, x * 2))
        torch.testing.assert_close(vm(F.where, in_dims=(0, 0, None))(c, x, y),
                                   vm(torch.where, in_dims=(0, 0, None))(c, x, y))
        torch.testing.assert_close(vm(lambda v: F.clamp(v, -0.5, 0.5))(x),
                                   vm(lambda v: torch.clamp(v, -0.5, 0.5))(x))
        torch.testing.assert_close(
            vm(torch.func.grad(lambda v: (F.clamp(v, -0.5, 0.5) ** 2).sum()))(x),
            vm(torch.func.grad(lambda v: (torch.clamp(v, -0.5, 0.5) ** 2).sum()))(x))
        for red in ("mean", "sum", "none"):
            for dims, a, b in (((0, None), x, y), ((0, 0), x, x * 3), ((None, 1), y,
                                                                     x.transpose(0, 1))):
                def ours(u, w):
                    return F.mse_loss(u, w, reduction=red)

                def theirs(u, w):
                    return TF.mse_loss(u, w, reduction=red)

                torch.testing.assert_close(vm(ours, in_dims=dims)(a, b),
                                           vm(theirs, in_dims=dims)(a, b))
                torch.testing.assert_close(
                    vm(torch.func.grad(lambda u, w: ours(u, w).sum()), in_dims=dims)(a, b),
                    vm(torch.func.grad(lambda u, w: theirs(u, w).sum()), in_dims=dims)(a, b))
        s, t = torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
        torch.testing.assert_close(vm(F.mse_loss)(s, t), vm(TF.mse_loss)(s, t))
    finally:
        ctx.__exit__(None, None, None)


def test_vmap_rules_of_index_select_gather_and_embedding():
    """index_select (batched input or batched index), gather (either batched) and their
    gradients, and embedding's per-sample weight gradients, one call each under vmap."""
    vm = torch.func.vmap
    torch.manual_seed(0)
    x = torch.randn(4, 6, 5, dtype=torch.float64)
    w = torch.randn(6, 5, dtype=torch.float64)
    ib, iu = torch.randint(0, 6, (4, 3)), torch.tensor([5, 0, 2, 2])
    ctx = _no_fallback()
    try:
        for dim, n in ((0, 6), (1, 5)):
            i1, i2 = iu % n, ib % n
            torch.testing.assert_close(vm(lambda v: F.index_select(v, dim, i1))(x),
                                       vm(lambda v: torch.index_select(v, dim, i1))(x))
            torch.testing.assert_close(vm(lambda i: F.index_select(w, dim, i))(i2),
                                       vm(lambda i: torch.index_select(w, dim, i))(i2))
            torch.testing.assert_close(
                vm(torch.func.grad(lambda v: (F.index_select(v, dim, i1) ** 2).sum()))(x),
                vm(torch.func.grad(lambda v: (torch.index_select(v, dim, i1) ** 2).sum()))(x))
            torch.testing.assert_close(
                vm(torch.func.grad(lambda u, i: (F.index_select(u, dim, i) ** 2).sum()),
                   in_dims=(None, 0))(w, i2),
                vm(torch.func.grad(lambda u, i: (torch.index_select(u, dim, i) ** 2).sum()),
                   in_dims=(None, 0))(w, i2))
        emb, ids = torch.randn(10, 3, dtype=torch.float64), torch.randint(0, 10, (4, 7))
        got = vm(torch.func.grad(lambda e, i: (F.embedding(i, e) ** 2).sum()),
                 in_dims=(None, 0))(emb, ids)
        assert got.shape == (4, 10, 3)
        torch.testing.assert_close(
            got, vm(torch.func.grad(lambda e, i: (TF.embedding(i, e) ** 2).sum()),
                    in_dims=(None, 0))(emb, ids))
        gi = torch.randint(0, 5, (4, 6, 2))
        for dims, xx, ii in (((0, 0), x, gi), ((0, None), x, gi[0]), ((None, 0), w, gi)):
            torch.testing.assert_close(vm(lambda v, i: F.gather(v, 1, i), in_dims=dims)(xx, ii),
                                       vm(lambda v, i: torch.gather(v, 1, i),
                                          in_dims=dims)(xx, ii))
            torch.testing.assert_close(
                vm(torch.func.grad(lambda v, i: (F.gather(v, 1, i) ** 2).sum()),
                   in_dims=dims)(xx, ii),
                vm(torch.func.grad(lambda v, i: (torch.gather(v, 1, i) ** 2).sum()),
                   in_dims=dims)(xx, ii))
    finally:
        ctx.__exit__(None, None, None)


def test_vmap_rules_of_cat_stack_bmm_addmm():
    vm = torch.func.vmap
    a, c = torch.randn(4, 2, 3, dtype=torch.float64), torch.randn(4, 2, 3, dtype=torch.float64)
    ctx = _no_fallback()
    try:
        for dim, other in ((0, torch.randn(5, 3, dtype=torch.float64)),
                           (1, torch.randn(2, 5, dtype=torch.float64)),
                           (-1, torch.randn(2, 5, dtype=torch.float64))):
            torch.testing.assert_close(
                vm(lambda x, y: F.cat([x, y], dim), in_dims=(0, None))(a, other),
                vm(lambda x, y: torch.cat([x, y], dim), in_dims=(0, None))(a, other))
        for dim in (0, 1, 2, -1):
            torch.testing.assert_close(vm(lambda x, y: F.stack([x, y], dim))(a, c),
                                       vm(lambda x, y: torch.stack([x, y], dim))(a, c))
            torch.testing.assert_close(
                vm(torch.func.grad(lambda x, y: (F.stack([x, y], dim) ** 2).sum()))(a, c),
                vm(torch.func.grad(lambda x, y: (torch.stack([x, y], dim) ** 2).sum()))(a, c))
        s = torch.randn(4, dtype=torch.float64)   # 0-d elements
        torch.testing.assert_close(vm(lambda x: F.stack([x, x]))(s),
                                   vm(lambda x: torch.stack([x, x]))(s))
        m1 = torch.randn(4, 2, 3, 5, dtype=torch.float64)
        m2 = torch.randn(4, 2, 5, 6, dtype=torch.float64)
        torch.testing.assert_close(vm(F.bmm)(m1, m2), vm(torch.bmm)(m1, m2))
        i = torch.randn(4, 3, 6, dtype=torch.float64)
        torch.testing.assert_close(vm(F.addmm)(i, m1[:, 0], m2[:, 0]),
                                   vm(torch.addmm)(i, m1[:, 0], m2[:, 0]))
    finally:
        ctx.__exit__(None, None, None)


def test_vmap_rules_of_the_other_losses():
    """binary_cross_entropy[_with_logits] (weights, pos_weight, an unbatched target), nll_loss
    (class weights, an ignored target) and so cross_entropy with weight / label_smoothing, and
    their gradients: one call under vmap; against torch's vmap, or a loop where torch's own
    vmap refuses (cross_entropy with label_smoothing)."""
    vm, size = torch.func.vmap, 4
    torch.manual_seed(0)
    p = torch.rand(size, 3, 5, dtype=torch.float64) * 0.9 + 0.05
    t = torch.rand(size, 3, 5, dtype=torch.float64)
    w = torch.rand(5, dtype=torch.float64)
    x = torch.randn(size, 3, 5, dtype=torch.float64)
    lp = torch.log_softmax(torch.randn(size, 3, 5, dtype=torch.float64), -1)
    tg = torch.randint(0, 5, (size, 3))
    tg[0, 1] = -100
    ctx = _no_fallback()
    try:
        for red in ("mean", "sum", "none"):
            for kw in ({}, {"weight": w}):
                cases = [
                    (lambda a, b: F.binary_cross_entropy(a, b, reduction=red, **kw),
                     lambda a, b: TF.binary_cross_entropy(a, b, reduction=red, **kw), p, t,
                     (0, 0)),
                    (lambda a, b: F.binary_cross_entropy(a, b, reduction=red, **kw),
                     lambda a, b: TF.binary_cross_entropy(a, b, reduction=red, **kw), p, t[0],
                     (0, None)),
                    (lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=red,
                                                                     pos_weight=w, **kw),
                     lambda a, b: TF.binary_cross_entropy_with_logits(a, b, reduction=red,
                                                                      pos_weight=w, **kw),
                     x, t, (0, 0)),
                    (lambda a, b: F.nll_loss(a, b, reduction=red, **kw),
                     lambda a, b: TF.nll_loss(a, b, reduction=red, **kw), lp, tg, (0, 0)),
                    (lambda a, b: F.nll_loss(a, b, reduction=red, **kw),
                     lambda a, b: TF.nll_loss(a, b, reduction=red, **kw), lp[:, 0], tg[:, 0],
                     (0, 0))]
                for ours, theirs, a, b, dims in cases:
                    torch.testing.assert_close(vm(ours, in_dims=dims)(a, b),
                                               vm(theirs, in_dims=dims)(a, b))
                    torch.testing.assert_close(
                        vm(torch.func.grad(lambda u, v: ours(u, v).sum()), in_dims=dims)(a, b),
                        vm(torch.func.grad(lambda u, v: theirs(u, v).sum()),
                           in_dims=dims)(a, b))
        lg = torch.randn(size, 3, 5, dtype=torch.float64)
        for kw in ({"weight": w}, {"label_smoothing": 0.1},
                   {"weight": w, "label_smoothing": 0.2}):
            torch.testing.assert_close(
                vm(lambda a, b: F.cross_entropy(a, b, **kw))(lg, tg),
                torch.stack([TF.cross_entropy(lg[i], tg[i], **kw) for i in range(size)]))
            torch.testing.assert_close(
                vm(torch.func.grad(lambda a, b: F.cross_entropy(a, b, **kw)))(lg, tg),
                torch.stack([torch.func.grad(lambda a: TF.cross_entropy(a, tg[i], **kw))(lg[i])
                             for i in range(size)]))
    finally:
        ctx.__exit__(None, None, None)


def test_nll_loss_with_every_target_ignored():
    """As cross_entropy: the loss is NaN, the gradient 0 (torch's), with and without weights."""
    lp = torch.log_softmax(torch.randn(3, 5, dtype=torch.float64), -1).requires_grad_()
    t = torch.full((3,), -100)
    for kw in ({}, {"weight": torch.rand(5, dtype=torch.float64)}):
        assert torch.isnan(F.nll_loss(lp, t, **kw))
        g = torch.autograd.grad(F.nll_loss(lp, t, **kw), lp)[0]
        torch.testing.assert_close(g, torch.autograd.grad(TF.nll_loss(lp, t, **kw), lp)[0])
        assert torch.equal(g, torch.zeros_like(g))
