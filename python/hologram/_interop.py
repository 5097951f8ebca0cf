"""Getting data in and out: asarray / tensor / from_dlpack (zero-copy where possible), the
default executors, creation functions (zeros, ones, full, arange, random) and the operand hook
the C layer calls for arrays, lists and numpy scalars."""

import numbers
import os

import numpy as np

from . import _C
from ._fork import fork_safe_lock
from .errors import InvalidArgumentError, UnsupportedError
from ._dtypes import _dtype_name, _is_bf16
from .tensor import Tensor

_default_lock = fork_safe_lock()
_default_cpu = None
_default_any = None   # default_executor() when HOLOGRAM_BACKEND names a backend ...
_default_env = None   # ... and that name


def default_cpu_executor():
    """The shared CPU Executor that wraps host memory (from_dlpack, asarray) when no executor is
    given. Created once; recreated if closed."""
    global _default_cpu
    with _default_lock:
        if _default_cpu is None or _default_cpu.closed:
            _default_cpu = _C.Executor("cpu")
        return _default_cpu


def default_executor():
    """The shared Executor that creation functions (zeros, tensor, ...) and array operands use
    when none is given: the backend HOLOGRAM_BACKEND names, else the CPU executor (the same
    object as default_cpu_executor()). As in torch, new tensors stay on the CPU unless asked
    for elsewhere (executor=..., or HOLOGRAM_BACKEND=cuda), so a script does the same on
    machines with and without a GPU; Executor('auto') is the way to take the best device."""
    global _default_any, _default_env
    env = os.environ.get("HOLOGRAM_BACKEND", "").strip().lower()
    if env in ("", "cpu"):
        return default_cpu_executor()
    with _default_lock:
        if _default_any is None or _default_any.closed or _default_env != env:
            # Executor('auto') resolves HOLOGRAM_BACKEND, with its errors for a bad name.
            _default_any, _default_env = _C.Executor("auto"), env
        return _default_any


_default_cuda = {}


def default_cuda_executor(device=0):
    """The shared CUDA Executor of ``device`` that wraps CUDA memory (from_dlpack of a torch
    CUDA tensor) when no executor is given. Created once per device; recreated if closed."""
    with _default_lock:
        ex = _default_cuda.get(device)
        if ex is None or ex.closed:
            ex = _C.Executor("cuda", device=device)
            _default_cuda[device] = ex
        return ex


def _host_array(obj, dtype=None):
    arr = np.asarray(obj, dtype=_np_dtype(dtype) if dtype is not None else None)
    if arr.dtype.kind not in "biuf" and not _is_bf16(arr.dtype):
        raise TypeError(f"hologram has no dtype for {arr.dtype} (expected bool, integer or float "
                        "data)")
    return arr


def _np_dtype(dtype):
    name = _dtype_name(dtype)
    return np.uint16 if name == "bf16" else np.dtype(
        {"bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
         "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "float16",
         "f32": "float32", "f64": "float64"}[name])


def _copy_in(arr, executor, dtype_name=None):
    """A new C-contiguous Tensor holding a copy of host array arr (dtype_name: store as bf16)."""
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")   # (np.ascontiguousarray would make 0-d arrays 1-d)
    t = _C.empty(executor, arr.shape, dtype_name or arr.dtype)
    if arr.size:
        t.buffer.from_numpy(arr.reshape(-1))
    return t


def _wrap(obj, executor):
    """A zero-copy Tensor over obj's host memory (DLPack, else the buffer protocol), or None."""
    if executor.backend != "cpu":
        return None
    if hasattr(obj, "__dlpack__") and not isinstance(obj, (Tensor, _C.Buffer)):
        try:
            buf, shape, strides, offset = _C._import_dlpack(obj, executor)
        except (BufferError, UnsupportedError, TypeError):
            buf = None
        if buf is not None:
            return Tensor(buf, shape, strides, offset)
    buf = _C._wrap_buffer(obj, executor)
    if buf is None:
        return None
    shape = getattr(obj, "shape", None)
    return Tensor(buf, tuple(shape) if shape is not None else None)


def asarray(obj, dtype=None, *, copy=None, executor=None):
    """A Tensor of ``obj`` (numpy array, torch tensor, anything with ``__dlpack__`` or the
    buffer protocol, Buffer, Tensor, nested lists, scalars).

    Parameters
    ----------
    obj : array-like
    dtype : dtype spec, optional
        Convert to this dtype (a copy when it differs). ``ml_dtypes.bfloat16`` arrays become
        bf16 tensors; uint16 arrays given with ``dtype='bf16'`` are taken as raw bf16 bits.
    copy : bool, optional
        None (default): a zero-copy view of obj's memory when possible (CPU executor, same
        dtype; any strides through DLPack, C-contiguous bfloat16 arrays), else a copy.
        False: a view or InvalidArgumentError. True: always a copy.
    executor : Executor, optional
        Default: the CPU executor for host data, else :func:`default_executor`.

    Returns
    -------
    Tensor
        A view keeps obj's memory alive; writes are visible both ways.

    Examples
    --------
    >>> a = np.arange(3.0)
    >>> t = hg.asarray(a)
    >>> t[0] = 5.0
    >>> float(a[0])
    5.0
    """
    ex = executor
    if isinstance(obj, Tensor):
        if ex is not None and ex is not obj.executor:
            if copy is False:
                raise InvalidArgumentError("asarray(copy=False): the Tensor is on another "
                                           "Executor; moving it needs a copy", 100)
            obj = to_executor(obj, ex)
            copy = False if dtype is None else copy
        if dtype is not None and _dtype_name(dtype) != obj.dtype_name:
            if copy is False:
                raise InvalidArgumentError("asarray(copy=False): a dtype change needs a copy", 100)
            return obj.astype(dtype)
        return obj.copy() if copy else obj
    if isinstance(obj, _C.Buffer):
        return asarray(Tensor(obj), dtype, copy=copy, executor=ex)
    if ex is None:
        ex = default_cpu_executor() if _is_host_data(obj) else default_executor()
    want = _dtype_name(dtype) if dtype is not None else None
    if copy is not True:
        view = None
        src_dtype = getattr(obj, "dtype", None)
        same = want is None or (src_dtype is not None and _same_dtype(src_dtype, want))
        if same:
            view = _wrap(obj, ex)
        if view is not None:
            return view
        if copy is False:
            raise InvalidArgumentError(
                "asarray(copy=False): cannot wrap without copying (the input has no zero-copy "
                "host memory of the requested dtype, or the executor is not a CPU executor)", 100)
    if want == "bf16":
        # ml_dtypes.bfloat16 and uint16 data (raw bf16 bits) are copied as they are, anything
        # else is converted (rounded to nearest even) by the library.
        src = _host_array(obj)
        if src.dtype == np.uint16 or _is_bf16(src.dtype):
            return _copy_in(src.view(np.uint16), ex, "bf16")
        return _copy_in(src, ex).astype("bf16")
    src = _host_array(obj, dtype)
    if _is_bf16(src.dtype):   # the buffer protocol cannot carry it: its bits
        return _copy_in(src.view(np.uint16), ex, "bf16")
    return _copy_in(src, ex)


def _same_dtype(src_dtype, want):
    try:
        return _dtype_name(src_dtype) == want
    except (KeyError, TypeError):
        name = str(src_dtype).replace("torch.", "")
        try:
            return _dtype_name(name) == want
        except (KeyError, TypeError):
            return False


def _is_host_data(obj):
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None:
        try:
            return dev()[0] == 1
        except Exception:
            return True
    return True


def tensor(data, dtype=None, *, executor=None):
    """A new Tensor holding a copy of ``data`` (like numpy.array / torch.tensor)."""
    return asarray(data, dtype, copy=True, executor=executor)


def from_dlpack(x, *, executor=None, copy=None):
    """A zero-copy Tensor over the memory of ``x`` (anything with ``__dlpack__``: numpy, torch,
    hologram), with x's shape and strides. The Tensor keeps x's memory alive (the producer's
    deleter runs when it is released); writes through it are visible in x. copy=True copies.
    CPU memory goes to a CPU executor, CUDA memory (DLPack device type 2) to a CUDA executor of
    its device (default_cuda_executor when none is given)."""
    if isinstance(x, Tensor) and executor in (None, x.executor):
        return x.copy() if copy else x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not support DLPack (no __dlpack__)")
    ex = executor
    if ex is None:
        dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
        ex = default_cuda_executor(int(dev[1])) if int(dev[0]) == 2 else default_cpu_executor()
    buf, shape, strides, offset = _C._import_dlpack(x, ex)
    t = Tensor(buf, shape, strides, offset)
    return t.copy() if copy else t


def to_executor(t, executor):
    """t's values on another Executor (self when already there)."""
    if t.executor is executor:
        return t
    src = t.contiguous()
    out = _C.empty(executor, src.shape, src.dtype_name)
    if src.size:
        out.buffer.from_bytes(src.buffer.to_bytes()[src.offset * src.itemsize:
                                                    (src.offset + src.size) * src.itemsize])
    return out


def _as_tensor(obj, executor):
    """The C layer's hook for operands that are not Tensors/Buffers/Python scalars."""
    if isinstance(obj, (str, bytes, dict, set)) or obj is None:
        raise TypeError(f"unsupported operand type {type(obj).__name__}")
    if isinstance(obj, (np.generic, numbers.Number)) and not isinstance(obj, np.ndarray):
        arr = np.asarray(obj)
        if _is_bf16(arr.dtype):
            return _copy_in(arr.reshape(()).view(np.uint16), executor, "bf16")
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"unsupported operand type {type(obj).__name__}")
        return _copy_in(arr.reshape(()), executor)
    return asarray(obj, executor=executor)


# --- creation ---------------------------------------------------------------------------------
def _shape(shape):
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def empty(shape, dtype=np.float32, *, executor=None):
    """A new C-contiguous Tensor with unspecified contents (numpy.empty)."""
    return _C.empty(executor or default_executor(), _shape(shape), dtype)


def zeros(shape, dtype=np.float32, *, executor=None):
    """A new C-contiguous Tensor of zeros (numpy.zeros).

    Parameters
    ----------
    shape : int or sequence of int
    dtype : dtype spec, default float32
        A numpy dtype or type, or a name such as ``'f32'`` or ``'bfloat16'``.
    executor : Executor, optional
        Where the memory lives; default: :func:`default_executor`.

    Examples
    --------
    >>> hg.zeros((2, 3), 'f64').shape
    (2, 3)
    """
    return _C.empty(executor or default_executor(), _shape(shape), dtype, True)


def full(shape, value, dtype=None, *, executor=None):
    """A new Tensor with every element = value; dtype None: bool, int64 or float32 from the
    value's Python type."""
    if dtype is None:
        dtype = np.bool_ if isinstance(value, bool) else \
            np.int64 if isinstance(value, numbers.Integral) else np.float32
    t = empty(shape, dtype, executor=executor)
    _C.fill(t, value)
    return t


def ones(shape, dtype=np.float32, *, executor=None):
    """A new C-contiguous Tensor of ones (numpy.ones)."""
    return full(shape, 1, np.float32 if dtype is None else dtype, executor=executor)


def zeros_like(x, dtype=None):
    """zeros of x's shape, dtype (or dtype) and executor."""
    return zeros(x.shape, dtype or x.dtype_name, executor=x.executor)


def ones_like(x, dtype=None):
    """ones of x's shape, dtype (or dtype) and executor."""
    return full(x.shape, 1, dtype or x.dtype_name, executor=x.executor)


def full_like(x, value, dtype=None):
    """full of x's shape, dtype (or dtype) and executor."""
    return full(x.shape, value, dtype or x.dtype_name, executor=x.executor)


def empty_like(x, dtype=None):
    """empty of x's shape, dtype (or dtype) and executor."""
    return empty(x.shape, dtype or x.dtype_name, executor=x.executor)


def arange(start, stop=None, step=1, dtype=None, *, executor=None):
    """numpy.arange: values start + i*step below stop (computed in f64, then converted)."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise InvalidArgumentError("arange: step must not be zero", 100)
    n = max(0, int(np.ceil((stop - start) / step)))
    if dtype is None:
        ints = all(isinstance(v, numbers.Integral) for v in (start, stop, step))
        dtype = np.int64 if ints else np.float64
    t = empty((n,), dtype, executor=executor)
    _arange_fits(t, start, step)
    ints = all(isinstance(v, numbers.Integral) for v in (start, step))
    if n and ints and t.dtype_name not in ("bf16", "i64") and t.dtype.kind in "iu":
        # numpy wraps past the dtype's range: int64 values, then the (wrapping) integer cast
        wide = empty((n,), np.int64, executor=executor)
        _C.arange(wide, float(start), float(step))
        _C.cast(wide, t.dtype_name, t)
    elif n:
        _C.arange(t, float(start), float(step))
    return t


def _arange_fits(t, start, step):
    """numpy's checks: a bool arange has at most 2 elements, and the first two values (Python
    ints) must fit an integer dtype."""
    if t.dtype_name == "bool" and t.size > 2:
        raise TypeError("arange: a bool result has at most 2 elements (numpy); got "
                        f"{t.size}")
    if t.dtype_name != "bf16" and t.dtype.kind in "iu":
        info = np.iinfo(t.dtype)
        for v in (start, start + step)[:t.size]:
            if isinstance(v, numbers.Integral) and not info.min <= v <= info.max:
                raise OverflowError(f"arange: {v} is out of bounds for {t.dtype_name}")


def linspace(start, stop, num=50, endpoint=True, dtype=np.float32, *, executor=None):
    """numpy.linspace: num evenly spaced values from start to stop (included if endpoint)."""
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    t = empty((num,), dtype, executor=executor)
    if num and t.dtype_name != "bf16" and t.dtype.kind in "iu":
        # numpy floors toward -inf for integer dtypes (the cast alone truncates toward 0)
        f = empty((num,), np.float64, executor=executor)
        _C.arange(f, float(start), float(step))
        if endpoint and num > 1:
            f[num - 1] = float(stop)
        _C.cast(_C.unary(_C.unary_ops["floor"], f), t.dtype_name, t)
    elif num:
        _C.arange(t, float(start), float(step))
        if endpoint and num > 1:   # exactly stop, as numpy (start + (num-1)*step may round)
            t[num - 1] = float(stop)
    return t


class _Random:
    """Counter-based random numbers (Philox-4x32-10): the same numbers for any thread count
    and backend. Each call advances the offset, so calls give new numbers."""

    def __init__(self, seed=0):
        self.seed = int(seed)
        self.offset = 0
        self._lock = fork_safe_lock()

    def _take(self, n):
        with self._lock:
            off = self.offset
            self.offset += n
        return off

    def uniform(self, shape, low=0.0, high=1.0, dtype=np.float32, *, executor=None):
        """A new Tensor of uniform random values in [low, high)."""
        t = empty(shape, dtype, executor=executor)
        _C.random(t, False, self.seed, self._take(t.size), low, high)
        return t

    def normal(self, shape, mean=0.0, std=1.0, dtype=np.float32, *, executor=None):
        """A new Tensor of normal random values (mean, std)."""
        t = empty(shape, dtype, executor=executor)
        _C.random(t, True, self.seed, self._take(t.size), mean, std)
        return t


_global_random = _Random(0)


def manual_seed(seed):
    """Seeds the global generator behind rand / randn (offset back to 0)."""
    global _global_random
    _global_random = _Random(seed)


def Generator(seed=0):
    """An independent counter-based generator: .uniform(shape, low, high), .normal(shape,
    mean, std)."""
    return _Random(seed)


def rand(*shape, dtype=np.float32, executor=None):
    """Uniform random values in [0, 1) from the global generator (rand(2, 3) or rand((2, 3)));
    manual_seed makes them repeatable."""
    return _global_random.uniform(_shape(shape[0] if len(shape) == 1 and not
                                         isinstance(shape[0], numbers.Integral) else shape),
                                  dtype=dtype, executor=executor)


def randn(*shape, dtype=np.float32, executor=None):
    """Standard normal random values from the global generator (see rand)."""
    return _global_random.normal(_shape(shape[0] if len(shape) == 1 and not
                                        isinstance(shape[0], numbers.Integral) else shape),
                                 dtype=dtype, executor=executor)


_C._set_hooks(_as_tensor, default_executor)
