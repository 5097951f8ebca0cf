"""@hologram.jit's repeated call in C (_C.JitFunction): a call whose signature was seen runs the
plan without the Python wrapper; its results equal the Python path's and numpy's, signatures
tell scalars apart by type and bits, and whatever the C path does not take still works."""
import collections
import gc

import numpy as np
import pytest

import hologram as hg
from hologram import ops

RNG = np.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def chain_ref(a, b, c):
    return np.maximum(a.astype(np.float64) * b + c, 0) * 0.5


def test_repeated_calls_run_in_c_and_match_numpy():
    @hg.jit
    def chain(a, b, c):
        return ops.relu(a * b + c) * 0.5

    for shape in [(1,), (7,), (1000,), (3, 5), ()]:
        xs = [f32(*shape) for _ in range(3)]
        hs = [hg.asarray(x) for x in xs]
        first = chain(*hs)                           # traced, registered
        for _ in range(3):
            xs = [f32(*shape) for _ in range(3)]     # new values, same signature
            hs = [hg.asarray(x) for x in xs]
            got = chain(*hs)
            assert got.shape == shape and got.dtype_name == "f32"
            np.testing.assert_allclose(got.numpy(), chain_ref(*xs), rtol=2e-7, atol=1e-7)
        assert first is not got
    assert chain.c_signatures == 5 and len(chain.cache) == 5


def test_outputs_are_new_tensors_each_call():
    f = hg.jit(lambda a: a * 2)
    a = hg.asarray(np.arange(4, dtype=np.float32))
    r1, r2 = f(a), f(a)
    assert r1 is not r2
    r1.fill(0)
    assert r2.tolist() == [0, 2, 4, 6]


def test_scalar_signatures_by_type_and_bits():
    @hg.jit
    def f(x, s):
        return x * s

    x = hg.asarray(np.array([1.0, -2.0], np.float32))
    pos, neg = f(x, 0.0), f(x, -0.0)
    assert list(np.signbit(pos.numpy())) == [False, True]
    assert list(np.signbit(neg.numpy())) == [True, False]
    for _ in range(2):   # the C path keeps them apart too
        assert list(np.signbit(f(x, -0.0).numpy())) == [True, False]
        assert list(np.signbit(f(x, 0.0).numpy())) == [False, True]
    assert f(x, 3).tolist() == [3, -6] and f(x, 3.5).tolist() == [3.5, -7]
    assert f(x, True).tolist() == [1, -2] and f(x, False).tolist() == [0, -0.0]
    assert f(x, 3).tolist() == [3, -6] and f(x, 3.5).tolist() == [3.5, -7]
    assert len(f.cache) == 6 and f.c_signatures == 6


def test_tuple_and_list_results_keep_their_structure():
    tup = hg.jit(lambda a, b: (a + b, a * b))
    lst = hg.jit(lambda a, b: [a - b])
    x, y = f32(6), f32(6)
    for _ in range(2):
        s, p = tup(hg.asarray(x), hg.asarray(y))
        d = lst(hg.asarray(x), hg.asarray(y))
        assert type(d) is list and len(d) == 1
        np.testing.assert_array_equal(s.numpy(), x + y)
        np.testing.assert_array_equal(p.numpy(), x * y)
        np.testing.assert_array_equal(d[0].numpy(), x - y)


def test_namedtuple_results_stay_on_the_python_path():
    Pair = collections.namedtuple("Pair", "s d")
    f = hg.jit(lambda a, b: Pair(a + b, a - b))
    a, b = hg.ones((2,)), hg.ones((2,))
    for _ in range(2):
        r = f(a, b)
        assert type(r) is Pair and r.s.tolist() == [2, 2] and r.d.tolist() == [0, 0]
    assert f.c_signatures == 0


def test_captured_tensor_current_value_on_the_c_path():
    bias = hg.zeros((3,))

    @hg.jit
    def f(x):
        return x + bias

    x = hg.ones((3,))
    for v in (0, 5, -2):
        bias.fill(v)
        assert f(x).tolist() == [1 + v] * 3
    assert f.c_signatures == 1


def test_converted_arguments_take_the_python_path():
    f = hg.jit(lambda a, b: a * b + 1)
    x, y = f32(5), f32(5)
    for _ in range(2):
        np.testing.assert_allclose(f(x, hg.asarray(y)).numpy(), x * y + 1, rtol=1e-6)
    with pytest.warns(RuntimeWarning, match="eagerly"):   # numpy scalars: eager, as before
        np.testing.assert_allclose(f(hg.asarray(x), np.float32(2.0)).numpy(), x * 2 + 1,
                                   rtol=1e-6)
    assert f.c_signatures == 0
    with pytest.raises(TypeError):
        f(hg.asarray(x), b=hg.asarray(y))          # keyword arguments: as before, refused
    with pytest.raises(TypeError, match="no dtype"):
        f(hg.asarray(x), "2")


def test_non_contiguous_views_share_the_signature_of_their_shape():
    f = hg.jit(lambda a: a * 2 + 1)
    base = f32(4, 6)
    f(hg.asarray(np.ascontiguousarray(base[:, ::2])))
    got = f(hg.asarray(base)[:, ::2])                  # strided view, same shape and dtype
    np.testing.assert_allclose(got.numpy(), base[:, ::2] * 2 + 1, rtol=1e-6)


def test_more_signatures_than_the_c_table_still_run():
    f = hg.jit(lambda a, k: a + k)
    x = hg.asarray(np.zeros(2, np.float32))
    for k in range(80):
        assert f(x, k).tolist() == [k, k]
    for k in range(80):
        assert f(x, k).tolist() == [k, k]
    assert f.c_signatures == 64 and len(f.cache) == 80


def test_freed_argument_and_closed_executor_raise():
    f = hg.jit(lambda a: a + 1)
    x = hg.asarray(np.ones(3, np.float32))
    f(x)
    y = hg.asarray(np.ones(3, np.float32))
    y.buffer.free()
    with pytest.raises(hg.HologramError, match="free"):
        f(y)
    ex = hg.Executor("cpu", num_threads=1)
    z = hg.asarray(np.ones(3, np.float32), executor=ex)
    assert f(z).tolist() == [2, 2, 2]
    assert f(z).tolist() == [2, 2, 2]
    ex.close()
    with pytest.raises(hg.HologramError):
        f(z)


def test_fixed_executor_signature():
    ex = hg.Executor("cpu", num_threads=1)
    f = hg.jit(executor=ex)(lambda a: a * 3)
    x = hg.asarray(np.ones(2, np.float32), executor=ex)
    assert f(x).tolist() == [3, 3] and f(x).tolist() == [3, 3]
    assert f.c_signatures == 1


def test_wrapper_metadata_and_collection():
    def fn(a):
        """doc of fn"""
        return a + 1

    f = hg.jit(fn)
    assert f.__name__ == "fn" and f.__doc__ == "doc of fn" and f.__wrapped__ is fn
    assert isinstance(f, hg._C.JitFunction)
    f(hg.ones((2,)))
    before = len(gc.get_objects())
    for _ in range(50):
        g = hg.jit(lambda a: a * 2)
        g(hg.ones((2,)))
        g(hg.ones((2,)))
        del g
    gc.collect()
    assert len(gc.get_objects()) < before + 200   # the wrapper <-> slow-path cycle is collected


def test_bad_add_arguments():
    f = hg.jit(lambda a: a + 1)
    with pytest.raises(TypeError):
        f._add([1], None, [], [], None)
    with pytest.raises(TypeError):
        hg._C.JitFunction(3)
    with pytest.raises(TypeError, match="Executor"):
        hg._C.JitFunction(len, executor=3)


def test_array_arguments_go_to_the_tensor_arguments_executor():
    # A numpy array beside a Tensor of another executor than the default one is converted onto
    # that executor (it was converted onto the default one, and the plan refused the mix).
    f = hg.jit(lambda a, b: a * b + 1)
    x, y = f32(5), f32(5)
    with hg.Executor(backend=hg.default_executor().backend) as other:
        ty = hg.asarray(y, executor=other)
        for _ in range(2):
            r = f(x, ty)
            assert r.executor == other
            np.testing.assert_allclose(r.numpy(), x * y + 1, rtol=1e-6)
        g = hg.jit(lambda a: a + 1, executor=other)   # the decorator's executor, no Tensors
        r = g(x)
        assert r.executor == other
        np.testing.assert_allclose(r.numpy(), x + 1, rtol=1e-6)
