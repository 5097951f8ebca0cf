import numpy as np
import pytest

import hologram as hg

rng = np.random.default_rng(1234)
N = 1000


def bufs(ex, *arrays):
    out = []
    for a in arrays:
        b = ex.allocate(a.size, a.dtype)
        b.from_numpy(a)
        out.append(b)
    return out


def special(n, dtype):
    a = rng.standard_normal(n).astype(dtype)
    a[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30]
    return a


BINARY = [
    ("vector_add", np.add), ("vector_sub", np.subtract), ("vector_mul", np.multiply),
    ("vector_div", np.divide), ("vector_min", np.minimum), ("vector_max", np.maximum),
]


@pytest.mark.parametrize("name,ref", BINARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_ops_float(ex, name, ref, dtype):
    a, b = special(N, dtype), rng.standard_normal(N).astype(dtype)
    ba, bb = bufs(ex, a, b)
    bc = ex.allocate(N, dtype)
    with np.errstate(all="ignore"):
        expected = ref(a, b)
    assert getattr(hg.ops, name)(ex, ba, bb, bc) is bc
    np.testing.assert_allclose(bc.to_numpy(), expected, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name,ref", [op for op in BINARY if op[0] != "vector_div"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_binary_ops_int(ex, name, ref, dtype):
    a = rng.integers(0, 100, N).astype(dtype)
    b = rng.integers(0, 100, N).astype(dtype)
    ba, bb = bufs(ex, a, b)
    bc = ex.allocate(N, dtype)
    getattr(hg.ops, name)(ex, ba, bb, bc)
    np.testing.assert_array_equal(bc.to_numpy(), ref(a, b))


def test_explicit_n_and_aliasing(ex):
    a = rng.standard_normal(10).astype(np.float32)
    ba, = bufs(ex, a)
    bc = ex.allocate(10)
    hg.ops.vector_add(ex, ba, ba, bc, 4)
    np.testing.assert_allclose(bc.to_numpy()[:4], 2 * a[:4])
    assert not bc.to_numpy()[4:].any()  # untouched beyond n
    hg.ops.vector_mul(ex, ba, ba, ba, n=10)  # output may alias inputs exactly
    np.testing.assert_allclose(ba.to_numpy(), a * a, rtol=1e-6)
    hg.ops.vector_add(a=ba, b=ba, c=bc, executor=ex)
    np.testing.assert_allclose(bc.to_numpy(), 2 * a * a, rtol=1e-6)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def gelu(x):  # the library's vector_gelu is the tanh form
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


UNARY = [
    ("vector_abs", np.abs, 0), ("vector_neg", np.negative, 0),
    ("vector_relu", lambda x: np.maximum(x, 0), 0), ("sigmoid", sigmoid, 1e-6),
    ("tanh", np.tanh, 1e-6), ("gelu", gelu, 1e-5),
]


@pytest.mark.parametrize("name,ref,tol", UNARY)
def test_unary_ops(ex, name, ref, tol):
    a = rng.standard_normal(N).astype(np.float32) * 4
    ba, = bufs(ex, a)
    bc = ex.allocate(N)
    getattr(hg.ops, name)(ex, ba, bc)
    np.testing.assert_allclose(bc.to_numpy(), ref(a.astype(np.float64)).astype(np.float32),
                               rtol=tol, atol=tol)


def test_unary_special_values(ex):
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], np.float32)
    ba, = bufs(ex, a)
    bc = ex.allocate(5)
    hg.ops.vector_abs(ex, ba, bc)
    np.testing.assert_array_equal(bc.to_numpy(), np.abs(a))
    hg.ops.sigmoid(ex, ba, bc)
    np.testing.assert_array_equal(bc.to_numpy(), [np.nan, 1, 0, 0.5, 0.5])
    hg.ops.vector_neg(ex, ba, bc)
    assert not np.signbit(bc.to_numpy()[3])


def test_softmax(ex):
    a = rng.standard_normal(N).astype(np.float32) * 10
    ba, = bufs(ex, a)
    bc = ex.allocate(N)
    hg.ops.softmax(ex, ba, bc)
    e = np.exp(a.astype(np.float64) - a.max())
    np.testing.assert_allclose(bc.to_numpy(), e / e.sum(), rtol=1e-5, atol=1e-9)


def test_clip_and_scalar(ex):
    a = special(N, np.float32)
    ba, = bufs(ex, a)
    bc = ex.allocate(N)
    hg.ops.vector_clip(ex, ba, bc, -0.5, 0.25)
    np.testing.assert_array_equal(bc.to_numpy(), np.clip(a, -0.5, 0.25))
    hg.ops.scalar_add(ex, ba, bc, 1.5)
    np.testing.assert_array_equal(bc.to_numpy(), a + np.float32(1.5))
    hg.ops.scalar_mul(ex, ba, bc, -2)
    np.testing.assert_array_equal(bc.to_numpy(), a * np.float32(-2))


@pytest.mark.parametrize("name,ref", [("reduce_sum", np.sum), ("reduce_min", np.min),
                                      ("reduce_max", np.max)])
def test_reductions(ex, name, ref):
    a = rng.standard_normal(N).astype(np.float64)
    ba, = bufs(ex, a)
    out = ex.allocate(1, np.float64)
    r = getattr(hg.ops, name)(ex, ba, out)
    assert isinstance(r, float)
    np.testing.assert_allclose(r, ref(a), rtol=1e-12)
    assert out.to_numpy()[0] == r
    r5 = getattr(hg.ops, name)(ex, ba, out, 5)
    np.testing.assert_allclose(r5, ref(a[:5]), rtol=1e-12)


def test_losses(ex):
    p = rng.uniform(0.01, 0.99, N)
    t = rng.uniform(0, 1, N)
    bp, bt = bufs(ex, p, t)
    out = ex.allocate(1, np.float64)
    np.testing.assert_allclose(hg.ops.mse_loss(ex, bp, bt, out), np.mean((p - t) ** 2), rtol=1e-10)
    np.testing.assert_allclose(hg.ops.cross_entropy_loss(ex, bp, bt, out),
                               -np.sum(t * np.log(p)) / N, rtol=1e-10)
    np.testing.assert_allclose(hg.ops.binary_cross_entropy_loss(ex, bp, bt, out),
                               -np.mean(t * np.log(p) + (1 - t) * np.log(1 - p)), rtol=1e-10)
    assert out.to_numpy()[0] != 0


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-12)])
def test_gemm_and_matvec(ex, dtype, tol):
    m, n, k = 7, 5, 9
    A = rng.standard_normal((m, k)).astype(dtype)
    B = rng.standard_normal((k, n)).astype(dtype)
    x = rng.standard_normal(k).astype(dtype)
    bA, bB, bx = bufs(ex, A.ravel(), B.ravel(), x)
    bC = ex.allocate(m * n, dtype)
    hg.ops.gemm(ex, bA, bB, bC, m, n, k)
    np.testing.assert_allclose(bC.to_numpy().reshape(m, n), A.astype(np.float64) @ B, rtol=tol,
                               atol=tol)
    by = ex.allocate(m, dtype)
    hg.ops.matvec(ex, bA, bx, by)  # m = y.size, n = x.size
    np.testing.assert_allclose(by.to_numpy(), A.astype(np.float64) @ x, rtol=tol, atol=tol)


def test_op_errors(ex):
    a = ex.allocate(4)
    b = ex.allocate(4, np.float64)
    short = ex.allocate(2)
    with pytest.raises(hg.DtypeError, match="dtype"):
        hg.ops.vector_add(ex, a, b, a)
    with pytest.raises(hg.SizeMismatchError, match="2 elements"):
        hg.ops.vector_add(ex, a, a, short)
    with pytest.raises(TypeError, match="'b' must be a hologram.Buffer"):
        hg.ops.vector_add(ex, a, np.ones(4, np.float32), a)
    with pytest.raises(TypeError, match="'executor' must be"):
        hg.ops.vector_add(None, a, a, a)
    with pytest.raises(TypeError, match="missing required argument 'c'"):
        hg.ops.vector_add(ex, a, a)
    with pytest.raises(TypeError, match="unexpected keyword"):
        hg.ops.vector_add(ex, a, a, a, m=3)
    with pytest.raises(TypeError, match="multiple values"):
        hg.ops.vector_add(ex, a, a, a, a=a)
    with pytest.raises(ValueError, match=">= 0"):
        hg.ops.vector_add(ex, a, a, a, -1)
    with pytest.raises(TypeError, match="'s' must be a number"):
        hg.ops.scalar_add(ex, a, a, "x")
    other = hg.Executor("cpu").allocate(4)
    with pytest.raises(hg.InvalidArgumentError, match="another Executor"):
        hg.ops.vector_add(ex, a, other, a)
    with pytest.raises(hg.DtypeError):
        hg.ops.sigmoid(ex, ex.allocate(4, np.int32), ex.allocate(4, np.int32))


@pytest.mark.host_memory
def test_read_only_host_memory_is_not_an_output(ex):
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    rob = hg.asarray(ro, executor=ex)
    a = ex.allocate(4)
    with pytest.raises(hg.InvalidArgumentError, match="read-only"):
        hg.ops.vector_add(ex, a, a, rob)
    assert not ro.any()


# --- the product documents' examples, as written -------------------------------------------------
def test_seed_quick_start():
    torch = pytest.importorskip("torch")
    import hologram as hg  # noqa: F811

    # Create executor with automatic backend selection
    # (Metal on Apple Silicon, CUDA on NVIDIA GPUs, CPU fallback)
    exec = hg.Executor(backend='auto')

    # Allocate buffers
    buf_a = exec.allocate(1024)
    buf_b = exec.allocate(1024)
    buf_c = exec.allocate(1024)

    # Copy data from PyTorch
    a = torch.randn(1024)
    b = torch.randn(1024)
    buf_a.from_numpy(a.numpy())
    buf_b.from_numpy(b.numpy())

    # Execute operation (currently via CPU, GPU execution pending)
    hg.ops.vector_add(exec, buf_a, buf_b, buf_c, 1024)

    # Read result
    c = torch.from_numpy(buf_c.to_numpy())
    assert torch.allclose(c, a + b)


def test_seed_sdk_usage():
    import hologram as hg  # noqa: F811
    import numpy as np  # noqa: F811

    # Create executor with automatic backend selection
    exec = hg.Executor(backend='auto')  # Selects best GPU or CPU

    # Allocate buffers
    a = exec.allocate(1024, dtype=np.float32)
    b = exec.allocate(1024, dtype=np.float32)
    c = exec.allocate(1024, dtype=np.float32)

    # Load data (zero-copy with memoryview)
    a.from_numpy(np.random.randn(1024).astype(np.float32))
    b.from_numpy(np.random.randn(1024).astype(np.float32))

    # Execute operation
    hg.ops.vector_add(exec, a, b, c)

    # Get results (zero-copy)
    result = c.to_numpy()
    np.testing.assert_allclose(result, a.to_numpy() + b.to_numpy())


def test_seed_backend_selection(capsys):
    import hologram as hg  # noqa: F811

    # Automatic backend selection (Metal → CUDA → CPU)
    exec = hg.Executor(backend='auto')

    # Specific backend
    exec_cpu = hg.Executor(backend='cpu')
    # Check availability
    assert isinstance(hg.is_metal_available(), bool)
    assert isinstance(hg.is_cuda_available(), bool)
    assert hg.get_default_backend() in ('metal', 'cuda', 'cpu')

    print(f"Metal available: {hg.backend.is_metal_available()}")
    print(f"CUDA available: {hg.backend.is_cuda_available()}")
    print(f"Default backend: {hg.backend.get_default_backend()}")

    # Explicit selection with error handling
    try:
        exec = hg.Executor(backend='cuda')
        print("Using CUDA backend")
    except Exception as e:
        print(f"CUDA not available: {e}")
        exec = hg.Executor(backend='cpu')
        print("Falling back to CPU")
    out = capsys.readouterr().out
    assert "Default backend: " in out
    assert exec.backend in ("cuda", "cpu") and exec_cpu.backend == "cpu"
