"""The list of hologram's numpy-named functions that the conformance tests run against numpy,
written out, and checks that it is complete: a new top-level, hologram.ops or Tensor name that
numpy also has fails here until a conformance test covers it (or it is listed as not numpy's
function under the same name, with the reason)."""
import numpy as np

import hologram as hg
import test_numpy_conformance_data as data
import test_numpy_conformance_elementwise as elementwise
import test_numpy_conformance_reduce as reduce

ELEMENTWISE = (
    "abs", "absolute", "negative", "sign", "sqrt", "square", "reciprocal", "exp", "expm1", "exp2",
    "log", "log1p", "log2", "sin", "cos", "tanh", "floor", "ceil", "trunc", "rint", "round",
    "logical_not", "bitwise_not", "invert", "isnan", "isinf", "isfinite",
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
    "power", "pow", "minimum", "maximum", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "right_shift")
REDUCTIONS = ("sum", "mean", "prod", "min", "max", "amin", "amax", "argmin", "argmax", "var",
              "std", "any", "all")
DATA = ("where", "clip", "concatenate", "concat", "stack", "take", "take_along_axis", "copy",
        "astype", "matmul", "matvec")
CREATION = ("arange", "linspace", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
            "empty_like", "full_like", "asarray", "from_dlpack")
METHODS = ("sum", "mean", "prod", "min", "max", "amin", "amax", "argmin", "argmax", "var", "std",
           "any", "all", "reshape", "ravel", "transpose", "swapaxes", "squeeze", "expand_dims",
           "broadcast_to", "copy", "astype", "clip", "matmul", "dot", "exp", "log", "sqrt",
           "round", "shape", "ndim", "size", "dtype")
#: numpy has a function of the name, but hologram's is another thing (not compared)
NOT_NUMPYS = {}


def _numpy_named(namespace):
    return {n for n in dir(namespace) if not n.startswith("_") and hasattr(np, n)
            and n not in NOT_NUMPYS}


def test_every_numpy_named_op_is_covered():
    listed = set(ELEMENTWISE + REDUCTIONS + DATA)
    missing = _numpy_named(hg.ops) - listed
    assert not missing, f"hologram.ops names numpy has, not in the conformance list: {missing}"
    stale = listed - set(dir(hg.ops))
    assert not stale, f"listed but not in hologram.ops: {stale}"


def test_every_numpy_named_top_level_function_is_covered():
    listed = set(ELEMENTWISE + REDUCTIONS + DATA + CREATION)
    missing = _numpy_named(hg) - listed
    assert not missing, f"top-level names numpy has, not in the conformance list: {missing}"
    for name in _numpy_named(hg) & set(dir(hg.ops)):
        assert getattr(hg, name) is getattr(hg.ops, name), name   # so the ops tests cover it


def test_every_numpy_named_tensor_method_is_covered():
    missing = _numpy_named(hg.Tensor) - set(METHODS)
    assert not missing, f"Tensor members numpy has, not in the conformance list: {missing}"


def test_the_list_is_what_the_modules_run():
    assert set(ELEMENTWISE) == set(elementwise.COVERED_OPS)
    assert set(REDUCTIONS) == set(reduce.COVERED_OPS) == set(reduce.COVERED_METHODS)
    assert set(DATA) == set(data.COVERED_OPS)
    assert set(CREATION) == set(data.COVERED_TOP)
    assert set(METHODS) == set(data.COVERED_METHODS) | set(reduce.COVERED_METHODS)


def test_numpy_edges_named_by_the_issue():
    """hg.abs exists (numpy's alias of absolute), hg.any / hg.all too."""
    assert hg.abs is hg.absolute
    assert bool(hg.any(hg.asarray([0, 1]))) and not bool(hg.all(hg.asarray([0, 1])))
