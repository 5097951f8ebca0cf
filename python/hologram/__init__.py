"""Hologram: compute SDK (Python bindings of libhologram).

    import hologram as hg
    import numpy as np

    with hg.Executor(backend='auto') as ex:
        a = ex.allocate(1024, dtype=np.float32)
        b = ex.allocate(1024, dtype=np.float32)
        c = ex.allocate(1024, dtype=np.float32)
        a.from_numpy(np.random.randn(1024).astype(np.float32))
        b.from_numpy(np.random.randn(1024).astype(np.float32))
        hg.ops.vector_add(ex, a, b, c)
        result = c.to_numpy()      # zero-copy view of CPU memory
"""

try:
    from . import _C
except ImportError as _e:  # pragma: no cover - depends on how the library was built
    if "static TLS" not in str(_e):
        raise
    raise ImportError(
        f"{_e}\nhologram._C is loaded with dlopen, so the library objects it contains must not "
        "use initial-exec thread-local storage (tls_model(\"initial-exec\")) for more TLS than "
        "glibc reserves for dlopen. This is a build defect of libhologram; as a stopgap, set "
        "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 before starting Python.") from _e
from . import errors
from .errors import *  # noqa: F401,F403  (the exception classes)
from .errors import HologramError
from . import backend
from .backend import (is_cuda_available, is_metal_available, get_default_backend,
                      set_cpu_threading, cpu_threading)
from . import _log
from ._log import set_log_level, get_log_level
from .tensor import Tensor
from ._interop import (from_dlpack, asarray, tensor, default_cpu_executor, default_cuda_executor,
                       default_executor, empty, zeros, ones, full, empty_like, zeros_like, ones_like, full_like,
                       arange, linspace, rand, randn, manual_seed, Generator)
from . import ops
from .jit import jit
from ._trace import TraceError
from . import profiler
from .profiler import profile, Profile

Executor = _C.Executor
Buffer = _C.Buffer
Event = _C.Event
Graph = _C.Graph
Plan = _C.Plan

__version__ = _C.__version__
#: dtype name for bfloat16 (numpy shows it as ml_dtypes.bfloat16 when installed, else uint16 bits)
bfloat16 = "bfloat16"
bf16 = bfloat16

# The numpy-style ops are also at top level (hologram.exp(x), hologram.matmul(a, b), ...).
for _name in ops.TOP_LEVEL:
    globals()[_name] = getattr(ops, _name)
del _name


def build_info():
    """Library version, compiler, build type, build features and CPU features."""
    return _C.build_info()


_log._install()

__all__ = [
    "Executor", "Buffer", "Event", "Tensor", "Graph", "Plan", "ops", "backend", "errors", "jit",
    "HologramError", "TraceError", "is_cuda_available", "is_metal_available",
    "get_default_backend", "set_cpu_threading", "cpu_threading", "from_dlpack", "asarray", "tensor", "default_cpu_executor",
    "default_cuda_executor", "default_executor", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
    "ones_like", "full_like", "arange", "linspace", "rand", "randn", "manual_seed", "Generator",
    "set_log_level", "get_log_level", "profile", "Profile", "profiler", "bfloat16", "bf16", "build_info", "__version__",
] + list(ops.TOP_LEVEL) + errors.__all__
