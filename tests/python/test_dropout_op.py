"""hologram.ops.dropout / dropout_backward (hg_dropout: one pass, docs/ops_data.md "Dropout"):
the output against the mask it returns, computed in torch (float64 for the scale), on every
float dtype and on views; the mask's law and its reproducibility (seed, offset, views); the
backward against ATen's native_dropout_backward bit for bit; refused arguments."""
import numpy as np
import pytest

import hologram as hg

torch = pytest.importorskip("torch")
from hologram_torch import _bridge as B  # noqa: E402

EX = B.executor_of(0, torch.device("cpu"), "test")
DTYPES = [("f32", torch.float32), ("f64", torch.float64), ("f16", torch.float16),
          ("bf16", torch.bfloat16)]


def _run(x, p, seed, offset=0):
    hx = B.to_hg(x, EX)
    mask = hg.empty(tuple(x.shape), "bool", executor=hx.executor)
    out = hg.ops.dropout(hx, p, seed, offset, mask=mask)
    return B.to_torch(out), B.to_torch(mask)


@pytest.mark.parametrize("name,dt", DTYPES, ids=[d[0] for d in DTYPES])
def test_values_follow_the_mask(name, dt):
    x = torch.randn(37, 129, dtype=torch.float64).to(dt)
    x[0, :3] = torch.tensor([float("inf"), float("nan"), -1.0]).to(dt)
    for p in (0.1, 0.5, 0.9):
        out, mask = _run(x, p, 1234)
        assert out.dtype == dt and mask.dtype == torch.bool
        scale = 1.0 / (1.0 - p)
        if dt == torch.float64:
            want = x * mask * scale
        else:   # f32 product of x and scale rounded to f32, rounded once to dt
            s32 = torch.tensor(scale, dtype=torch.float32)
            want = ((x.float() * mask) * s32).to(dt)
        assert torch.equal(out.nan_to_num(7.0), want.nan_to_num(7.0))
        assert torch.equal(out.isnan(), want.isnan())
        assert torch.equal(torch.signbit(out), torch.signbit(want))   # -0 where dropped
        assert abs(mask.double().mean().item() - (1 - p)) < 0.02


def test_mask_is_reproducible_and_follows_offsets_and_views():
    x = torch.ones(64 * 50)
    _, m0 = _run(x, 0.3, 99)
    _, m1 = _run(x, 0.3, 99)
    _, m2 = _run(x, 0.3, 100)
    assert torch.equal(m0, m1) and not torch.equal(m0, m2)
    # offset k (in counters) starts at element 64 k / 16 = 4 k of offset 0's stream
    _, m3 = _run(x[: 64 * 40], 0.3, 99, offset=160)
    assert torch.equal(m3, m0[640:])
    # a transposed view: element i in C order of the view gets element i of the stream
    xt = torch.ones(50, 64).t()
    _, mt = _run(xt, 0.3, 99)
    assert torch.equal(mt.reshape(-1), m0)


def test_p_zero_and_one():
    x = torch.randn(1000)
    out, mask = _run(x, 0.0, 5)
    assert torch.equal(out, x) and bool(mask.all())
    out, mask = _run(x, 1.0, 5)
    assert not bool(mask.any()) and torch.equal(out, x * 0)


@pytest.mark.parametrize("name,dt", DTYPES, ids=[d[0] for d in DTYPES])
def test_backward_is_atens(name, dt):
    g = torch.randn(300, 70, dtype=torch.float64).to(dt)
    g[0, :4] = torch.tensor([float("inf"), -float("inf"), float("nan"), -2.0]).to(dt)
    mask = torch.rand(300, 70) > 0.3
    mask[0, :4] = False
    got = B.to_torch(hg.ops.dropout_backward(B.to_hg(g, EX), B.to_hg(mask, EX), 1 / 0.7))
    want = torch.ops.aten.native_dropout_backward(g, mask, 1 / 0.7)
    assert torch.equal(got.nan_to_num(7.0), want.nan_to_num(7.0))
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(torch.signbit(got), torch.signbit(want))


def test_refusals():
    x = hg.asarray(np.ones(8, np.float32))
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="p must lie in"):
            hg.ops.dropout(x, p)
    with pytest.raises(TypeError, match="mask must be a Tensor"):
        hg.ops.dropout(x, 0.5, mask=np.ones(8, bool))
    with pytest.raises(Exception, match="'mask' has dtype f32; need bool"):
        hg.ops.dropout(x, 0.5, mask=hg.empty((8,), "f32"))
    with pytest.raises(Exception, match="'x' has dtype i32"):
        hg.ops.dropout(hg.asarray(np.ones(8, np.int32)), 0.5)
    out = hg.asarray(np.full(8, 9, np.float32))
    with pytest.raises(Exception, match="'mask' must have the shape"):
        hg.ops.dropout(x, 0.5, out=out, mask=hg.empty((4,), "bool"))
    assert np.array_equal(out.numpy(copy=True), np.full(8, 9, np.float32))   # nothing written
