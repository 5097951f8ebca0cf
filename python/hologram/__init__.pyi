# Type stub of the hologram package (python/hologram/__init__.py). tests/python/test_typing.py
# checks that it names every public name of the package.
from typing import Dict, List

from . import _C, backend as backend, errors as errors, ops as ops, profiler as profiler
from .errors import (ArgumentBindingError as ArgumentBindingError,
    BackendUnavailableError as BackendUnavailableError, BadFormatError as BadFormatError,
    DtypeError as DtypeError, ExecutionError as ExecutionError,
    ExecutorDeadError as ExecutorDeadError, HologramError as HologramError,
    HologramIOError as HologramIOError, InternalError as InternalError,
    InvalidArgumentError as InvalidArgumentError, InvalidHandleError as InvalidHandleError,
    InvalidProgramError as InvalidProgramError, LaunchConfigError as LaunchConfigError,
    OutOfBoundsError as OutOfBoundsError, OutOfMemoryError as OutOfMemoryError,
    OutOfRangeError as OutOfRangeError, ParseError as ParseError, ProgramError as ProgramError,
    SizeMismatchError as SizeMismatchError, UnsupportedError as UnsupportedError)
from .backend import (get_default_backend as get_default_backend,
                      set_cpu_threading as set_cpu_threading,
                      cpu_threading as cpu_threading,
                      is_cuda_available as is_cuda_available,
                      is_metal_available as is_metal_available)
from ._log import get_log_level as get_log_level, set_log_level as set_log_level
from .tensor import Tensor as Tensor
from ._interop import (from_dlpack as from_dlpack, asarray as asarray, tensor as tensor,
    default_cpu_executor as default_cpu_executor, default_cuda_executor as default_cuda_executor,
    default_executor as default_executor, empty as empty, zeros as zeros, ones as ones,
    full as full, empty_like as empty_like, zeros_like as zeros_like, ones_like as ones_like,
    full_like as full_like, arange as arange, linspace as linspace, rand as rand, randn as randn,
    manual_seed as manual_seed, Generator as Generator)
from .jit import jit as jit
from ._trace import TraceError as TraceError
from .profiler import Profile as Profile, profile as profile
# The numpy-style ops of hologram.ops at top level (ops.TOP_LEVEL).
from .ops import (negative as negative, absolute as absolute, sign as sign, sqrt as sqrt,
    rsqrt as rsqrt, reciprocal as reciprocal, square as square, exp as exp, expm1 as expm1,
    exp2 as exp2, log as log, log1p as log1p, log2 as log2, sin as sin, cos as cos, relu as relu,
    gelu_erf as gelu_erf, silu as silu, softplus as softplus, erf as erf, floor as floor,
    ceil as ceil, trunc as trunc, logical_not as logical_not, bitwise_not as bitwise_not,
    isnan as isnan, isinf as isinf, isfinite as isfinite, add as add, subtract as subtract,
    multiply as multiply, divide as divide, floor_divide as floor_divide, remainder as remainder,
    power as power, minimum as minimum, maximum as maximum, equal as equal, not_equal as not_equal,
    less as less, less_equal as less_equal, greater as greater, greater_equal as greater_equal,
    logical_and as logical_and, logical_or as logical_or, logical_xor as logical_xor,
    bitwise_and as bitwise_and, bitwise_or as bitwise_or, bitwise_xor as bitwise_xor,
    left_shift as left_shift, right_shift as right_shift, sigmoid as sigmoid, tanh as tanh,
    gelu as gelu, round as round, rint as rint, where as where, clip as clip, fma as fma,
    cast as cast, sum as sum, mean as mean, prod as prod, amin as amin, amax as amax, min as min,
    max as max, abs as abs, argmin as argmin, argmax as argmax, var as var, std as std,
    logsumexp as logsumexp, any as any, all as all, softmax as softmax,
    log_softmax as log_softmax,
    layer_norm as layer_norm, rms_norm as rms_norm, matmul as matmul, concatenate as concatenate,
    stack as stack, take as take, index_select as index_select, gather as gather,
    take_along_axis as take_along_axis, index_add as index_add, scatter_add as scatter_add)

Executor = _C.Executor
Buffer = _C.Buffer
Event = _C.Event
Graph = _C.Graph
Plan = _C.Plan

__version__: str
bfloat16: str
bf16: str
__all__: List[str]

def build_info() -> Dict[str, str]: ...
