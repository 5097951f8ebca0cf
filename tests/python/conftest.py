import numpy as np
import pytest

import hologram as hg

# (dtype spec accepted by allocate, numpy dtype of to_numpy)
ALL_DTYPES = [
    ("bool", np.bool_), ("int8", np.int8), ("int16", np.int16), ("int32", np.int32),
    ("int64", np.int64), ("uint8", np.uint8), ("uint16", np.uint16), ("uint32", np.uint32),
    ("uint64", np.uint64), ("float16", np.float16), ("bfloat16", np.uint16),
    ("float32", np.float32), ("float64", np.float64),
]


@pytest.fixture
def ex():
    with hg.Executor(backend="cpu") as e:
        yield e


def random_array(np_dtype, n, rng):
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        return rng.integers(info.min, info.max, n, dtype=np_dtype, endpoint=True)
    return rng.standard_normal(n).astype(np_dtype)
