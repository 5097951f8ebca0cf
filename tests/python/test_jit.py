"""@hologram.jit: traced once per signature, compiled into one fused plan, results equal to
eager execution; fallbacks for what the graph cannot express."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import hologram as hg
from hologram import ops

RNG = np.random.default_rng(5)


def randn(*shape):
    return hg.asarray(RNG.standard_normal(shape).astype(np.float32))


def test_fused_chain_is_one_kernel_and_matches_eager():
    @hg.jit
    def chain(a, b, c):
        return ops.relu(a * b + c) * 0.5

    a, b, c = randn(1000), randn(1000), randn(1000)
    got = chain(a, b, c)
    want = np.maximum(a.numpy() * b.numpy() + c.numpy(), 0) * np.float32(0.5)
    # One rounding may differ where the compiler formed an FMA (documented): within 1 ULP.
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-7, atol=1e-7)
    (plan,) = chain.plans().values()
    assert plan.info()["kernels"] == 1
    assert chain(a, b, c).tolist() == got.tolist()   # cached plan, same result
    assert len(chain.cache) == 1


def test_one_plan_per_signature_and_scalars_baked_in():
    @hg.jit
    def f(x, k):
        return x * k + 1

    x = randn(4, 3)
    assert np.allclose(f(x, 2).numpy(), x.numpy() * 2 + 1)
    assert np.allclose(f(x, 3).numpy(), x.numpy() * 3 + 1)
    y = randn(5)
    got = f(y, 2)
    assert got.shape == (5,)
    np.testing.assert_allclose(got.numpy(), y.numpy() * 2 + 1, rtol=1e-6)
    assert len(f.cache) == 3


def test_reductions_softmax_matmul_and_tuple_outputs():
    @hg.jit
    def g(x, w):
        h = ops.matmul(x, w)
        s = ops.softmax(h, axis=-1)
        return s, h.sum(axis=1), ops.exp(h).max()

    x, w = randn(8, 16), randn(16, 4)
    s, rs, mx = g(x, w)
    h = x.numpy().astype(np.float64) @ w.numpy()
    e = np.exp(h - h.max(-1, keepdims=True))
    np.testing.assert_allclose(s.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rs.numpy(), h.sum(1), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mx.item(), np.exp(h).max(), rtol=1e-4)


def test_captured_tensors_are_bound_each_call():
    bias = hg.zeros((3,))

    @hg.jit
    def f(x):
        return x + bias

    x = hg.ones((2, 3))
    assert f(x).tolist() == [[1, 1, 1]] * 2
    bias.fill(5)
    assert f(x).tolist() == [[6, 6, 6]] * 2   # current value, same plan
    assert len(f.cache) == 1


def test_unsupported_ops_fall_back_to_eager_with_a_warning():
    @hg.jit
    def f(x):
        return x.T * 2

    x = randn(2, 3)
    with pytest.warns(RuntimeWarning, match="eagerly"):
        r = f(x)
    np.testing.assert_allclose(r.numpy(), x.numpy().T * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)   # no second warning for the same signature
    assert f.fallbacks == 1


def test_data_dependent_control_flow_falls_back():
    @hg.jit
    def f(x):
        return x * 2 if (x.sum() > 0) else x

    with pytest.warns(RuntimeWarning):
        r = f(hg.ones((3,)))
    assert r.tolist() == [2, 2, 2]


def test_jit_matches_unfused_compilation():
    code = (
        "import numpy as np, hologram as hg\n"
        "from hologram import ops\n"
        "rng = np.random.default_rng(3)\n"
        "a = hg.asarray(rng.standard_normal((64, 33)).astype(np.float32))\n"
        "b = hg.asarray(rng.standard_normal((33,)).astype(np.float32))\n"
        "f = hg.jit(lambda a, b: ops.tanh(a - b) * ops.sigmoid(b) + ops.exp(-abs(a)))\n"
        "r = f(a, b)\n"
        "print(list(f.plans().values())[0].info()['kernels'])\n"
        "np.save(__import__('sys').argv[1], r.numpy())\n")
    outs = []
    for env_fusion in ("0", "1"):
        env = dict(os.environ, HOLOGRAM_DISABLE_FUSION=env_fusion)
        path = f"/tmp/hg_jit_{os.getpid()}_{env_fusion}.npy"
        p = subprocess.run([sys.executable, "-c", code, path], env=env, capture_output=True,
                           text=True, check=True)
        outs.append((int(p.stdout.strip().splitlines()[-1]), np.load(path)))
        os.unlink(path)
    (k_fused, r_fused), (k_unfused, r_unfused) = outs
    # one kernel for the (64, 33) chain, one for sigmoid(b) at b's own (33,) shape: a costly
    # member of a much smaller shape is not recomputed per element of the root (docs/graph.md)
    assert k_fused == 2 and k_unfused > 2
    np.testing.assert_allclose(r_fused, r_unfused, rtol=1e-6, atol=1e-7)


def test_graph_api_by_hand():
    g = hg.Graph()
    x = g.input("f32", (4,))
    y = g.binary_scalar(hg._C.binary_ops["multiply"], x, 3.0)
    z = g.unary(hg._C.unary_ops["exp"], y)
    g.output(z)
    assert g.node_info(z) == ("f32", (4,))
    assert "exp" in g.print()
    a = hg.tensor([0.0, 1.0, -1.0, 0.5], dtype=np.float32)
    plan = g.compile(a.executor)
    out = hg.empty((4,))
    plan.run([a], [out])
    np.testing.assert_allclose(out.numpy(), np.exp(3 * a.numpy()), rtol=1e-6)
    with pytest.raises(hg.SizeMismatchError):
        plan.run([hg.zeros((5,))], [out])
    with pytest.raises(hg.HologramError):
        g.binary(0, x, 999)


def test_graph_views_by_hand():
    """Graph.permute / slice / concat against numpy: x.T[1:, ::2] joined with -x.T[:1, ::2]."""
    g = hg.Graph()
    x = g.input("f32", (4, 3))
    t = g.permute(x, (1, 0))
    a = g.slice(t, 0, 1, None)
    b = g.unary(hg._C.unary_ops["neg"], g.slice(t, -2, None, 1))
    y = g.slice(g.concat([a, b], 0), 1, None, None, 2)
    g.output(y)
    assert g.node_info(y) == ("f32", (3, 2))
    xs = RNG.standard_normal((4, 3)).astype(np.float32)
    plan = g.compile(hg.tensor(xs).executor)
    out = hg.empty((3, 2))
    plan.run([hg.tensor(xs)], [out])
    want = np.concatenate([xs.T[1:], -xs.T[:1]], 0)[:, ::2]
    np.testing.assert_array_equal(out.numpy(), want)
    with pytest.raises(hg.HologramError, match="perm"):
        g.permute(x, (0, 0))
    with pytest.raises(hg.HologramError, match="step"):
        g.slice(x, 0, None, None, 0)
    with pytest.raises(hg.HologramError, match="nodes\\[1\\]"):
        g.concat([x, t], 0)
    with pytest.raises(TypeError):
        g.slice(x, 0, "a", None)


def test_var_std_with_ddof_are_traced():
    @hg.jit
    def stats(a):
        return ops.var(a, axis=1, ddof=1), ops.std(a, ddof=2), ops.var(a, axis=0, ddof=3)

    x = RNG.standard_normal((3, 7)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # traced, no eager fallback
        v1, s2, v3 = stats(hg.asarray(x))
    # The ddof-0 reduction times n / (n - ddof): one rounding more than numpy's division.
    np.testing.assert_allclose(v1.numpy(), x.var(axis=1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(s2.numpy(), x.std(ddof=2), rtol=1e-5)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")          # numpy's "Degrees of freedom <= 0"
        want = x.var(axis=0, ddof=3)             # n == ddof: inf, as numpy
    assert np.array_equal(v3.numpy(), want)

    @hg.jit
    def too_few(a):
        return ops.std(a, ddof=7)                 # n - ddof < 0: NaN, as numpy
    assert np.isnan(too_few(hg.asarray(x[:, :2])).numpy()).all()


def test_round_with_decimals_is_traced():
    x = (RNG.standard_normal(500) * 100).astype(np.float32)

    @hg.jit
    def r(a):
        return ops.round(a, 2), ops.round(a, -1)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got2, got_1 = r(hg.asarray(x))
    np.testing.assert_array_equal(got2.numpy(), np.round(x, 2))
    np.testing.assert_array_equal(got_1.numpy(), np.round(x, -1))


@pytest.mark.parametrize("shape", [(7, 40), (300, 257), (2, 3, 4, 33), (600, 1024)])
def test_fused_chain_over_broadcast_rows(shape):
    """(x - mu) * w + b with mu one value per row and w, b one value per column: on the CPU the
    fused kernel runs once per row (rows over a thread's share split across threads)."""
    @hg.jit
    def norm_affine(x, mu, w, b):
        return (x - mu) * w + b

    x = RNG.standard_normal(shape).astype(np.float32)
    mu = x.mean(-1, keepdims=True)
    w, b = (RNG.standard_normal(shape[-1]).astype(np.float32) for _ in range(2))
    got = norm_affine(*(hg.asarray(a) for a in (x, mu, w, b))).numpy()
    want = (x.astype(np.float64) - mu) * w + b
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # A transposed x (rows strided) into the same plan's other layout.
    xt = np.ascontiguousarray(RNG.standard_normal(shape[::-1]).astype(np.float32))
    xv = hg.asarray(xt).transpose() if len(shape) == 2 else None
    if xv is not None:
        got = norm_affine(xv, hg.asarray(mu), hg.asarray(w), hg.asarray(b)).numpy()
        np.testing.assert_allclose(got, (xt.T.astype(np.float64) - mu) * w + b, rtol=1e-6,
                                   atol=1e-6)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16])
def test_out_of_range_int_scalars_as_eager(dtype):
    """A Python int the tensor's dtype cannot hold: traced graphs give numpy's answer as the
    eager ops do (comparisons by value, true division in f64, logical ops by zero-ness)."""
    x = np.array([0, 1, 5, 100, 127], dtype=dtype)
    cases = {
        "div": (lambda a: a / -300, lambda a: a / -300),
        "rdiv": (lambda a: 70000 / (a + 1), lambda a: 70000 / (a + 1)),
        "lt": (lambda a: a < 300, lambda a: a < 300),
        "ge_first": (lambda a: ops.greater_equal(-300, a), lambda a: np.greater_equal(-300, a)),
        "ne": (lambda a: a != 70000, lambda a: a != 70000),
        "and": (lambda a: ops.logical_and(a, 70000), lambda a: np.logical_and(a, 70000)),
        "xor": (lambda a: ops.logical_xor(a, -70000), lambda a: np.logical_xor(a, -70000)),
    }
    for name, (ours, ref) in cases.items():
        want = ref(x)
        eager = ours(hg.asarray(x)).numpy()
        traced = hg.jit(ours)(hg.asarray(x)).numpy()
        for got, how in ((eager, "eager"), (traced, "jit")):
            assert got.dtype == want.dtype, (name, how, got.dtype, want.dtype)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{name} {how}")
    # Still refused where numpy refuses (NEP 50): arithmetic other than true division.
    for f in (lambda a: a + 70000, lambda a: a * -70000):
        with pytest.raises(hg.OutOfRangeError):
            f(hg.asarray(x))
        with pytest.raises(hg.OutOfRangeError):
            hg.jit(f)(hg.asarray(x))
