"""Assignment broadcasts as numpy's does: the value may have more dims than the target when the
extra leading ones have size 1 (numpy drops them), on basic-index assignment and copyto alike;
anything else is refused with a clear message and leaves the target intact."""
import numpy as np
import pytest

import hologram as hg


@pytest.mark.parametrize("target_shape,value_shape,key", [
    ((3,), (1, 3), Ellipsis),
    ((3,), (1, 1, 3), Ellipsis),
    ((3,), (1, 1), Ellipsis),
    ((2, 3), (1, 1, 3), 0),
    ((2, 3), (1, 2, 1), Ellipsis),
    ((4, 2), (1, 1, 2, 2), slice(1, 3)),
    ((3,), (1, 3), slice(None)),
])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_leading_size_one_dims_are_dropped(target_shape, value_shape, key, as_tensor):
    rng = np.random.default_rng(len(target_shape) * 10 + len(value_shape))
    base = rng.standard_normal(target_shape).astype(np.float32)
    value = rng.standard_normal(value_shape).astype(np.float32)
    want = base.copy()
    want[key] = value
    t = hg.asarray(base.copy())
    t[key] = hg.asarray(value) if as_tensor else value
    np.testing.assert_array_equal(t.numpy(), want)


def test_nested_list_value():
    want = np.zeros(3, np.float32)
    want[...] = np.array([[4, 5, 6]])
    t = hg.asarray(np.zeros(3, np.float32))
    t[...] = [[4, 5, 6]]
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize("value_shape", [(2, 3), (3, 1, 3), (2, 1, 3)])
def test_non_unit_leading_dims_are_refused_like_numpy(value_shape):
    base = np.arange(3, dtype=np.float32)
    with pytest.raises(ValueError):
        base.copy()[...] = np.ones(value_shape, np.float32)   # numpy refuses too
    t = hg.asarray(base.copy())
    with pytest.raises(ValueError, match="broadcast"):
        t[...] = np.ones(value_shape, np.float32)
    np.testing.assert_array_equal(t.numpy(), base)   # intact
