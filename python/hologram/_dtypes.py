"""dtype names and numpy's weak-scalar rule: what the Tensor class, the constructors
(_interop), the tracer (_trace) and hologram.ops share, below all of them."""
import numbers

import numpy as np

from . import _C

_NAMES = {np.dtype(k): v for k, v in [
    ("bool", "bool"), ("int8", "i8"), ("int16", "i16"), ("int32", "i32"), ("int64", "i64"),
    ("uint8", "u8"), ("uint16", "u16"), ("uint32", "u32"), ("uint64", "u64"),
    ("float16", "f16"), ("float32", "f32"), ("float64", "f64")]}


def _dtype_name(dtype):
    """hologram's dtype name for a dtype spec ('f32', 'bf16', ...)."""
    if isinstance(dtype, str):
        low = dtype.lower()
        if low in ("bf16", "bfloat16"):
            return "bf16"
        if low in _C.dtype_names:
            return low
    d = np.dtype(dtype)
    return "bf16" if _is_bf16(d) else _NAMES[d]


def _is_bf16(d):
    """True for ml_dtypes.bfloat16 (numpy's own dtypes have no bfloat16)."""
    return d.name == "bfloat16"


def weak_scalar_dtype(value, dtype_name):
    """The dtype of a Python scalar beside an operand of dtype_name, as numpy (NEP 50): the
    operand's, unless the scalar's kind is higher (a float beside integers or bools: f64; an
    int beside bools: i64)."""
    if isinstance(value, bool):
        return dtype_name
    kind = "b" if dtype_name == "bool" else "f" if dtype_name in ("f16", "bf16", "f32", "f64") \
        else "i"
    if isinstance(value, numbers.Integral):
        return dtype_name if kind != "b" else "i64"
    return dtype_name if kind == "f" else "f64"
