"""hologram.ops.scaled_dot_product_attention against torch.nn.functional.scaled_dot_product_attention
(and a float64 numpy reference where torch is absent): shapes of one and several query blocks,
causal, bool and float masks broadcast from fewer dims, rows that attend nothing, grouped-query
heads, scale, f32 / f64, strided operands, out=, and the refusals."""
import math

import numpy as np
import pytest

import hologram as hg
from hologram import ops


def probabilities(q, k, v, mask=None, causal=False, scale=None):
    """float64 (p, k, v, scale): softmax(q k^T * scale + mask) with rows that attend nothing 0,
    k and v repeated for grouped heads."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    group = q.shape[-3] // k.shape[-3] if q.ndim >= 3 else 1
    if group > 1:
        k, v = np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3)
    sc = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * sc
    if mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask.astype(np.float64)
    if causal:
        L, S = s.shape[-2:]
        s = np.where(np.arange(S)[None, :] <= np.arange(L)[:, None], s, -np.inf)
    mx = s.max(-1, keepdims=True)
    dead = mx == -np.inf
    e = np.exp(s - np.where(dead, 0, mx))
    return np.where(dead, 0, e / np.where(dead, 1, e.sum(-1, keepdims=True))), k, v, sc


def reference(q, k, v, mask=None, causal=False, scale=None):
    """float64: softmax(q k^T * scale + mask) v, rows that attend nothing give zeros."""
    p, _, v, _ = probabilities(q, k, v, mask, causal, scale)
    return p @ v


def rnd(rng, *shape, dt=np.float32):
    return rng.standard_normal(shape).astype(dt)


CASES = [  # (q shape, S, Ev, causal, mask kind)
    ((2, 3, 10, 8), 12, 8, False, None),
    ((2, 3, 70, 16), 50, 8, True, None),        # two query blocks, L > S
    ((1, 2, 30, 8), 90, 8, True, None),         # L < S
    ((2, 2, 72, 16), 40, 16, False, "bool"),    # rows and a block's rows attending nothing
    ((2, 2, 20, 8), 33, 4, False, "float"),
    ((5, 7, 3), 9, 2, False, None),             # rank 3
    ((6, 4), 5, 3, True, None),                 # rank 2
]


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_against_reference(case, dt):
    rng = np.random.default_rng(case)
    qs, S, Ev, causal, mk = CASES[case]
    q = rnd(rng, *qs, dt=dt)
    k = rnd(rng, *(qs[:-2] + (S, qs[-1])), dt=dt)
    v = rnd(rng, *(qs[:-2] + (S, Ev)), dt=dt)
    L = qs[-2]
    mask = None
    if mk == "bool":
        mask = rng.random((L, S)) < 0.7
        mask[2] = False
        mask[64:70] = False
    elif mk == "float":
        mask = rnd(rng, qs[0], 1, L, S, dt=dt)
        mask[rng.random(mask.shape) < 0.2] = -np.inf
        mask[:, :, 3] = -np.inf
    got = ops.scaled_dot_product_attention(q, k, v, mask, causal).numpy()
    want = reference(q, k, v, mask, causal)
    assert got.dtype == dt and got.shape == want.shape
    tol = 1e-12 if dt == np.float64 else 2e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_against_torch(dt):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    tdt = getattr(torch, dt)
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, n, 16, dtype=tdt) for n in (40, 70, 70))
    qt = torch.randn(2, 40, 4, 16, dtype=tdt).transpose(1, 2)   # strided rows
    m = torch.randn(40, 70, dtype=tdt)
    mb = torch.rand(2, 1, 40, 70) > 0.4
    kg, vg = torch.randn(2, 2, 70, 16, dtype=tdt), torch.randn(2, 2, 70, 16, dtype=tdt)
    tol = dict(rtol=1e-12, atol=1e-12) if dt == "float64" else dict(rtol=2e-5, atol=2e-5)
    for args, kw in [((q, k, v), {}), ((q, k, v), dict(is_causal=True)),
                     ((qt, k, v), dict(scale=0.3)), ((q, k, v), dict(attn_mask=m)),
                     ((q, k, v), dict(attn_mask=mb)), ((q, kg, vg), dict(is_causal=True))]:
        want = F.scaled_dot_product_attention(*args, **kw, enable_gqa=args[1] is kg)
        hkw = {n: (hg.asarray(a.numpy()) if isinstance(a, torch.Tensor) else a)
               for n, a in kw.items()}
        got = ops.scaled_dot_product_attention(*(hg.asarray(a.numpy()) for a in args), **hkw)
        torch.testing.assert_close(torch.from_numpy(got.numpy()), want, **tol)


def test_out_and_special_values():
    rng = np.random.default_rng(7)
    q, k, v = rnd(rng, 1, 2, 5, 4), rnd(rng, 1, 2, 6, 4), rnd(rng, 1, 2, 6, 3)
    out = hg.empty((1, 2, 5, 3), "float32")
    r = ops.scaled_dot_product_attention(q, k, v, out=out)
    np.testing.assert_allclose(out.numpy(), reference(q, k, v), rtol=2e-5, atol=2e-5)
    np.testing.assert_array_equal(r.numpy(), out.numpy())
    q[0, 1, 2, 0] = np.nan   # a NaN query row: NaN out (torch's f32 CPU kernel: zeros)
    got = ops.scaled_dot_product_attention(q, k, v).numpy()
    assert np.isnan(got[0, 1, 2]).all() and not np.isnan(got[0, 0]).any()
    z = ops.scaled_dot_product_attention(q, np.zeros((1, 2, 0, 4), np.float32),
                                         np.zeros((1, 2, 0, 3), np.float32))
    assert z.shape == (1, 2, 5, 3) and not z.numpy().any()   # no keys: zeros


def test_refusals():
    rng = np.random.default_rng(3)
    q, k, v = rnd(rng, 2, 4, 3), rnd(rng, 2, 5, 3), rnd(rng, 2, 5, 2)
    with pytest.raises(hg.InvalidArgumentError, match="is_causal with a mask"):
        ops.scaled_dot_product_attention(q, k, v, np.ones((4, 5), bool), True)
    with pytest.raises(hg.DtypeError, match="mask has dtype i32"):
        ops.scaled_dot_product_attention(q, k, v, np.ones((4, 5), np.int32))
    with pytest.raises(hg.SizeMismatchError, match="not broadcastable"):
        ops.scaled_dot_product_attention(q, k, v, np.ones((4, 6), bool))
    with pytest.raises(hg.SizeMismatchError, match="multiple of k's"):
        ops.scaled_dot_product_attention(rnd(rng, 3, 4, 3), k, v)
    with pytest.raises(hg.SizeMismatchError, match="last dims"):
        ops.scaled_dot_product_attention(q, rnd(rng, 2, 5, 4), v)
    with pytest.raises(hg.DtypeError, match="one float dtype"):
        ops.scaled_dot_product_attention(q, k.astype(np.float64), v)
    with pytest.raises(hg.InvalidArgumentError, match="must be finite"):
        ops.scaled_dot_product_attention(q, k, v, scale=math.inf)


def reference_grads(q, k, v, go, mask=None, causal=False, scale=None):
    """float64 gradients (dq, dk, dv) from the definition (grouped heads summed)."""
    p, kr, vr, sc = probabilities(q, k, v, mask, causal, scale)
    q, go = np.asarray(q, np.float64), np.asarray(go, np.float64)
    group = q.shape[-3] // k.shape[-3]
    out = p @ vr
    dv = np.swapaxes(p, -1, -2) @ go
    dp = go @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (go * out).sum(-1, keepdims=True)) * sc
    dq, dk = ds @ kr, np.swapaxes(ds, -1, -2) @ q
    fold = lambda g: g.reshape(g.shape[:-3] + (k.shape[-3], group) + g.shape[-2:]).sum(-3)  # noqa: E731
    return dq, fold(dk), fold(dv)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", [((2, 4, 70, 16), 2, 50, False, None), ((1, 4, 33, 8), 1, 40, True, None),
                                  ((2, 2, 9, 8), 2, 12, False, "bool"), ((2, 2, 9, 8), 2, 12, False, "float")],
                         ids=["grouped-2-blocks", "grouped-causal", "bool-mask", "float-mask"])
def test_backward_against_reference(case, dt):
    """scaled_dot_product_attention_backward from the forward's out and lse= against float64
    gradients of the definition; a query attending nothing passes no gradient."""
    (b, h, L, E), hk, S, causal, kind = case
    rng = np.random.default_rng(7)
    q, k, v = rnd(rng, b, h, L, E, dt=dt), rnd(rng, b, hk, S, E, dt=dt), rnd(rng, b, hk, S, 6, dt=dt)
    go = rnd(rng, b, h, L, 6, dt=dt)
    mask = None
    if kind == "bool":
        mask = rng.random((L, S)) < 0.7
        mask[2] = False
    elif kind == "float":
        mask = rnd(rng, b, 1, L, S, dt=dt)
        mask[0, 0, 3] = -np.inf
    lse = hg.empty((b, h, L), dtype="f64" if dt == np.float64 else "f32")
    out = ops.scaled_dot_product_attention(q, k, v, mask, causal, lse=lse)
    hq, hk_, hv = (hg.asarray(a) for a in (q, k, v))
    got = ops.scaled_dot_product_attention_backward(go, hq, hk_, hv, out, lse, mask, causal)
    want = reference_grads(q, k, v, go, mask, causal)
    tol = dict(rtol=1e-10, atol=1e-12) if dt == np.float64 else dict(rtol=2e-4, atol=2e-5)
    for g, w, name in zip(got, want, ("grad_q", "grad_k", "grad_v")):
        assert g.dtype_name == ("f64" if dt == np.float64 else "f32"), name
        np.testing.assert_allclose(g.numpy(), w, err_msg=name, **tol)
    if kind == "bool":
        assert (got[0].numpy()[:, :, 2] == 0).all()


def test_backward_refusals():
    rng = np.random.default_rng(3)
    q, k, v = (hg.asarray(rnd(rng, 1, 2, 4, 3)) for _ in range(3))
    lse = hg.empty((1, 2, 4), dtype="f32")
    out = ops.scaled_dot_product_attention(q, k, v, lse=lse)
    with pytest.raises(hg.DtypeError, match="lse"):
        ops.scaled_dot_product_attention_backward(out, q, k, v, out, hg.empty((1, 2, 4), dtype="f64"))
    with pytest.raises(hg.SizeMismatchError, match="grad_out"):
        ops.scaled_dot_product_attention_backward(hg.empty((1, 2, 4, 2), dtype="f32"), q, k, v, out,
                                                  lse)
    with pytest.raises(hg.InvalidArgumentError, match="is_causal"):
        ops.scaled_dot_product_attention_backward(out, q, k, v, out, lse,
                                                  np.ones((4, 4), bool), True)
