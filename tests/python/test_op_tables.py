"""The Python op names come from one table (hologram/ops.py: UNARY_OPS, BINARY_OPS), checked
here against the C library's op tables: an elementwise op added in C without its row (or a row
naming no C op) fails, as does a top-level name that does not resolve."""
import numpy as np
import pytest

import hologram as hg
from hologram import _C, ops


@pytest.mark.parametrize("rows,c_table", [(ops.UNARY_OPS, _C.unary_ops),
                                          (ops.BINARY_OPS, _C.binary_ops)])
def test_every_c_op_has_one_row(rows, c_table):
    c_names = [code for _, code, _, _ in rows]
    assert sorted(c_names) == sorted(c_table), (
        f"rows without a C op: {sorted(set(c_names) - set(c_table))}; C ops without a row: "
        f"{sorted(set(c_table) - set(c_names))}")
    assert len(set(c_names)) == len(c_names)


def test_rows_make_functions_that_run_the_c_op():
    x = hg.asarray(np.array([0.25, 4.0], np.float32))
    for name, code, doc, aliases in ops.UNARY_OPS + ops.BINARY_OPS:
        f = getattr(ops, name)
        assert f.__name__ == code and doc in f.__doc__   # the row's text, with the signature
        for alias in aliases:
            assert getattr(ops, alias) is f
    np.testing.assert_array_equal(ops.rsqrt(x).numpy(), [2.0, 0.5])
    np.testing.assert_array_equal(ops.true_divide(x, x).numpy(), [1.0, 1.0])


def test_top_level_and_ufunc_names_resolve():
    names = set(ops.TOP_LEVEL)
    assert len(names) == len(ops.TOP_LEVEL)
    for name in ops.TOP_LEVEL:
        assert getattr(hg, name) is getattr(ops, name), name
        assert name in hg.__all__
    assert not any(n.startswith("_") for n in names)
    table = ops.numpy_ufuncs()
    for key, f in table.items():
        assert isinstance(getattr(np, key, None), np.ufunc) or key in {
            u.__name__ for u in vars(np).values() if isinstance(u, np.ufunc)}, key
    x = hg.asarray(np.array([3, 5], np.int32))
    for ufunc in (np.exp, np.invert, np.bitwise_not, np.true_divide, np.absolute, np.rint):
        args = (x, x) if ufunc.nin == 2 else (x,)
        got = ufunc(*args)
        assert isinstance(got, hg.Tensor), ufunc
        np.testing.assert_array_equal(got.numpy(), ufunc(*(np.array([3, 5], np.int32),) * ufunc.nin))


def test_elementwise_functions_are_c_callables_with_the_python_calling_forms():
    # hg.add, hg.exp, ... are _C.OpFunction objects (no Python frame per call): every calling
    # form of the former Python functions works, with numpy's results.
    x = np.array([0.5, -1.25, 3.0], np.float32)
    y = np.array([2.0, 0.25, -4.0], np.float32)
    hx, hy = hg.asarray(x), hg.asarray(y)
    assert type(ops.add).__name__ == "OpFunction"
    assert ops.add.__module__ == "hologram.ops" and "add" in repr(ops.add)
    np.testing.assert_array_equal(ops.add(hx, hy).numpy(), x + y)
    np.testing.assert_array_equal(ops.add(a=hx, b=hy).numpy(), x + y)
    np.testing.assert_array_equal(ops.add(hx, b=hy).numpy(), x + y)
    o = hg.empty(3, dtype="float32")
    assert ops.add(hx, hy, out=o) is o and ops.add(hx, hy, o) is o
    np.testing.assert_array_equal(o.numpy(), x + y)
    np.testing.assert_allclose(ops.exp(x=hx).numpy(), np.exp(x), rtol=2.5e-7)
    np.testing.assert_array_equal(ops.multiply(hx, 2.0).numpy(), x * np.float32(2.0))
    np.testing.assert_array_equal(ops.subtract(1, hx).numpy(), 1 - x)
    np.testing.assert_array_equal(ops.negative(x).numpy(), -x)   # numpy input converted


@pytest.mark.parametrize("call,match", [
    (lambda hx: ops.add(hx), "b"),
    (lambda hx: ops.add(hx, hx, None, hx), "at most"),
    (lambda hx: ops.add(hx, hx, c=hx), "c"),
    (lambda hx: ops.exp(), "x"),
    (lambda hx: ops.exp(hx, out=3), "out"),
])
def test_elementwise_function_argument_errors(call, match):
    hx = hg.asarray(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=match):
        call(hx)


def test_elementwise_functions_trace_inside_jit_by_position_and_by_name():
    x = hg.asarray(np.array([1.0, -2.0, 3.0], np.float32))

    @hg.jit
    def f(a, b):
        return ops.maximum(a=ops.add(a, b), b=0.0) + ops.exp(x=b)

    got = f(x, x).numpy()
    want = np.maximum(x.numpy() * 2, 0) + np.exp(x.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-6)
    (plan,) = f.plans().values()
    assert plan.info()["kernels"] == 1

    @hg.jit
    def bad(a):
        return ops.add(a, a, c=a)

    # The trace fails, the call runs eagerly (with the jit's warning) and fails there too.
    with pytest.warns(RuntimeWarning, match="'c'"), pytest.raises(TypeError, match="'c'"):
        bad(x)
