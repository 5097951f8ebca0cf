"""The compile backend's direct calls, beside the table entries' value checks of
test_torch_backend.py: the view ops left in a lowered graph run as Tensor methods (the same ATen
ops, aliasing and autograd), and table functions that call hologram without _ops' checked custom
ops keep torch's errors."""
import pytest

torch = pytest.importorskip("torch")
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

import hologram_torch  # noqa: E402,F401  (registers backend="hologram")
from hologram_torch import backend  # noqa: E402
from hologram_torch._aten.table import TABLE  # noqa: E402

aten = torch.ops.aten


def test_views_left_to_torch_run_as_tensor_methods():
    """The view ops between kernels run as the Tensor methods of the same ATen ops: the same
    values, strides and aliasing, gradients through them, and they count as views."""
    from hologram_torch._aten.views import METHODS

    def f(x, w):
        y = torch.mm(x.view(6, 4), w)                       # view
        a = y.t().unsqueeze(0).expand(2, 5, 6)              # t, unsqueeze, expand
        b = y.view(2, 3, 5).transpose(0, 2).select(1, 2)    # transpose, select
        c = y.view(1, 6, 1, 5).squeeze(2).squeeze().squeeze(0).permute(1, 0)
        d = torch.ops.aten.squeeze.dims(y.view(1, 6, 1, 5), [0, 2])
        return torch.mm(a[0], y) + 1, torch.mm(b, b.t()), torch.mm(c, y), torch.mm(d.t(), d)
    x, w = torch.randn(2, 3, 4), torch.randn(4, 5)
    gm = backend.lower_graph(make_fx(f)(x, w))
    left = [n.meta["hologram_view"] for n in gm.graph.nodes if "hologram_view" in n.meta]
    assert {aten.view.default, aten.t.default, aten.unsqueeze.default, aten.expand.default,
            aten.transpose.int, aten.select.int, aten.squeeze.dim, aten.squeeze.default,
            aten.permute.default, aten.squeeze.dims} <= set(left) <= set(METHODS)
    assert not any(n.target in METHODS for n in gm.graph.nodes)
    r = backend.report_of(gm, "inference")
    assert sum(r.views.values()) >= len(left) and not set(r.torch) & {"view", "permute", "t"}
    for g, want in zip(gm(x, w), f(x, w)):
        torch.testing.assert_close(g, want)
        assert g.stride() == want.stride()
    # aliasing: a view of an input is that input's memory, written through as in eager
    v = backend.lower_graph(make_fx(lambda t: t.view(12).unsqueeze(1))(torch.randn(3, 4)))
    t = torch.randn(3, 4)
    out = v(t)
    out[5, 0] = 7.0
    assert t[1, 1] == 7.0 and out._base is t
    torch._dynamo.reset()
    xs = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    ws = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    got = torch.compile(f, backend="hologram")(xs, ws)
    gx, gw = torch.autograd.grad(sum(o.sum() for o in got), (xs, ws))
    ex, ew = torch.autograd.grad(sum(o.sum() for o in f(xs, ws)), (xs, ws))
    torch.testing.assert_close(gx, ex)
    torch.testing.assert_close(gw, ew)


def test_embedding_strided_empty_and_out_of_range():
    """embedding's lowering on a transposed weight and an empty index equals ATen's; an index
    outside [0, rows) raises IndexError as ATen's does (hologram's index_select would count a
    negative one from the end)."""
    fn = TABLE[aten.embedding.default].fn
    for w, idx in ((torch.randn(4, 10, dtype=torch.float64).t(), torch.tensor([[9], [0]])),
                   (torch.randn(10, 4), torch.zeros(0, 3, dtype=torch.long))):
        got, want = fn(w, idx), aten.embedding.default(w, idx)
        assert got.shape == want.shape and got.dtype == want.dtype and torch.equal(got, want)
    w = torch.randn(10, 4)
    for idx in (torch.tensor([[1, -1]]), torch.tensor([10]), torch.tensor([3, -11])):
        for fn in (TABLE[aten.embedding.default].fn, aten.embedding.default):
            with pytest.raises(IndexError):
                fn(w, idx)
