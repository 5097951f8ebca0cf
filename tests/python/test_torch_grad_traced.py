"""Eager gradients through traced ATen graphs (_aten/grad.py): one trace per signature, the
binary ops' in-place rule, an explicit executor, the eager graphs' rewrites."""
import pytest

torch = pytest.importorskip("torch")
from conftest import import_hologram_torch  # noqa: E402
from test_torch_autograd import rand  # noqa: E402

ht = import_hologram_torch()

F = ht.functional
TF = torch.nn.functional


def test_each_signature_traced_once():
    """The forward / backward graphs are cached per (op, static arguments, tensor signature)."""
    from hologram_torch._aten import grad as G
    x = rand(7, 3)
    before = G.traces().get("softplus", 0)
    for _ in range(3):
        F.softplus(x.float()).sum().backward()
    assert G.traces()["softplus"] == before + 1


def test_in_place_write_after_binary_op_as_torch():
    """add's backward reads no input (an input written in place afterwards is fine, as in
    torch); mul's reads both (torch's RuntimeError)."""
    for ours, theirs in ((F.add, torch.add), (F.mul, torch.mul)):
        outs = []
        for f in (ours, theirs):
            x = torch.randn(3, dtype=torch.float64, requires_grad=True)
            b = torch.randn(3, dtype=torch.float64)
            u = x * 2
            y = f(u, b)
            b.add_(1)
            try:
                y.sum().backward()
                outs.append(x.grad)
            except RuntimeError:
                outs.append("raised")
        if isinstance(outs[1], str):
            assert outs[0] == "raised"
        else:
            torch.testing.assert_close(outs[0], outs[1])


def test_explicit_executor_runs_the_gradients():
    """An executor given to a module (or an op) runs its forward and backward with gradients on,
    as without: every hologram call inside goes to it (none to the default executor), and a
    closed one raises as it does without gradients."""
    import hologram as hg
    from hologram_torch import _bridge as B
    ex = hg.Executor("cpu")
    torch.manual_seed(3)
    m = torch.nn.Sequential(ht.nn.Linear(6, 8), ht.nn.GELU(), ht.nn.LayerNorm(8),
                            ht.nn.Linear(8, 3))
    ref = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.LayerNorm(8),
                              torch.nn.Linear(8, 3))
    ref.load_state_dict(m.state_dict())
    for mod in m:
        mod._set_executor(ex)
    x, t = torch.randn(5, 6), torch.randint(0, 3, (5,))
    used, real = [], B.executor_of

    def spy(ex_id, device, fn):
        e = real(ex_id, device, fn)
        used.append(e)
        return e
    B.executor_of = spy
    try:
        TF.cross_entropy(m(x), t).backward()   # torch's loss: every hologram call is m's
    finally:
        B.executor_of = real
    TF.cross_entropy(ref(x), t).backward()
    assert len(used) >= 8 and all(u is ex for u in used)
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5)
    ex.close()
    with pytest.raises(hg.errors.InvalidHandleError, match="close"):
        m(x)


def test_traced_graph_rewrites_read_what_torch_reads():
    """The eager graphs' rewrites (_aten/grad.py): gelu's backward reads the forward's result,
    recomputed when that result was written in place after the op (torch's gelu_backward reads
    only x, so torch allows the write); cross_entropy's backward is one kernel on the
    log-softmax, equal to torch's for every reduction with ignored targets."""
    from hologram_torch._aten import grad as G
    for approximate in ("none", "tanh"):
        x = torch.randn(6, 5, dtype=torch.float64, requires_grad=True)
        xr = x.detach().clone().requires_grad_()
        y, yr = F.gelu(x, approximate=approximate), TF.gelu(xr, approximate=approximate)
        y.mul_(3)
        yr.mul_(3)
        y.sum().backward()
        yr.sum().backward()
        torch.testing.assert_close(x.grad, xr.grad)
    for red in ("mean", "sum", "none"):
        x = torch.randn(7, 4, dtype=torch.float64, requires_grad=True)
        xr = x.detach().clone().requires_grad_()
        t = torch.tensor([0, 3, -100, 1, 2, 2, -100])
        g = torch.rand(7 if red == "none" else (), dtype=torch.float64)
        F.cross_entropy(x, t, reduction=red).backward(g)
        TF.cross_entropy(xr, t, reduction=red).backward(g)
        torch.testing.assert_close(x.grad, xr.grad)
    bws = [e.bw.__self__.code for k, e in G._cache.items()
           if k[0] == "cross_entropy" and k[2] == torch.Size([7, 4]) and k[4] == torch.float64]
    assert bws and all("ce_bw_from_log_softmax" in c and "nll_loss_backward" not in c
                       for c in bws)
