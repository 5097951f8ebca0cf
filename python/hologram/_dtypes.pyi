# Type stub of hologram._dtypes: the dtype rules the Tensor class, the constructors, the tracer
# and ops share.
from typing import Any, Dict, Union

import numpy as np
import numpy.typing as npt

_NAMES: Dict[np.dtype[Any], str]

def _dtype_name(dtype: npt.DTypeLike) -> str: ...
def _is_bf16(d: np.dtype[Any]) -> bool: ...
def weak_scalar_dtype(value: Union[bool, int, float], dtype_name: str) -> str: ...
