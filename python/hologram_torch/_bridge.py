"""Torch tensors in and out of hologram without copies, and the executor each call runs on.

A torch tensor becomes a hologram Tensor over the same memory through a DLPack capsule
(``torch._C._to_dlpack``, 0.25 us, then ``hologram._C._from_capsule``; ``t.__dlpack__()`` alone
costs 2.3 us in torch 2.13). Results are allocated by hologram (its allocator reuses freed
blocks) and handed to torch the same way (:func:`empty_pair`), so what a caller gets back is an
ordinary torch tensor.

Executors cross torch's dispatcher as integers (an op's schema can only carry ints): 0 is the
default executor of the tensor's device, other ids come from :func:`executor_id`.
"""

import threading

import torch

import hologram as hg
from hologram import _C
from hologram._fork import fork_safe_lock

# torch dtype -> hologram dtype name: the dtypes hologram ops run on.
DTYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64",
    torch.uint8: "u8", torch.bool: "bool",
}
FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)

_lock = fork_safe_lock()
_executors = {}          # id -> Executor (ids are never reused); closed ones are dropped
_devices = {}            # id -> the executor's (backend, device index)
_ids = {}                # id(Executor) -> id
_next = [1]
_sweep_at = [16]         # registry size at which closed executors are next dropped
_cpu = [None]            # the default CPU executor, cached
_cuda = {}               # device index -> the default CUDA executor, cached
# Executor.set_stream / Executor.stream: CUDA executors that enqueue on a given stream.
_HAS_STREAMS = hasattr(hg.Executor, "set_stream")
_RAW_STREAM = getattr(torch._C, "_cuda_getCurrentRawStream", None)   # CUDA builds of torch


class _Scope(threading.local):
    ex = 0   # the executor id that stands for 0 (the device's default) in this thread


_scope = _Scope()
scoped = [0]   # threads inside run_on: the fast paths read the thread-local only when nonzero


def executor_id(ex):
    """The int that names ``ex`` in an op call (0 for None: the device's default executor)."""
    if ex is None:
        return 0
    if not isinstance(ex, hg.Executor):
        raise TypeError(f"executor must be a hologram.Executor or None, got {type(ex).__name__}")
    with _lock:
        i = _ids.get(id(ex))
        if i is None or _executors.get(i) is not ex:
            i = _next[0]
            _next[0] += 1
            _executors[i] = ex
            _devices[i] = (ex.backend, ex.device["index"])
            _ids[id(ex)] = i
            if len(_executors) >= _sweep_at[0]:
                _drop_closed()
        return i


def _drop_closed():
    """Forgets the closed executors (caller holds _lock): a loop that makes and closes an
    executor per step keeps none of them. Amortized O(1): the next sweep waits until the
    registry has doubled."""
    for i in [i for i, e in _executors.items() if e.closed]:
        e = _executors.pop(i)
        _devices.pop(i, None)
        if _ids.get(id(e)) == i:
            del _ids[id(e)]
    _sweep_at[0] = max(16, 2 * len(_executors))


def registered_executors():
    """How many executors the registry holds (tests: closed ones must not accumulate)."""
    with _lock:
        return len(_executors)


def run_on(ex_id, fn, *args):
    """fn(*args) with every op inside that names no executor (id 0) running on ex_id's: the
    eager gradients' lowered ATen graphs (_aten/grad.py) on the executor the caller gave."""
    prev = _scope.ex
    with _lock:
        scoped[0] += 1
    _scope.ex = ex_id
    try:
        return fn(*args)
    finally:
        _scope.ex = prev
        with _lock:
            scoped[0] -= 1


def executor_of(ex_id, device, fn):
    """The Executor an op runs on for tensors on ``device``: ex_id's, which must be of that
    device, or the device's default (inside :func:`run_on`: its executor). Nothing is moved
    across devices. A CUDA executor is set to enqueue on torch's current stream of the device
    first (:func:`follow_stream`)."""
    if not ex_id and scoped[0]:
        ex_id = _scope.ex
    if not ex_id and device.type == "cpu":
        ex = _cpu[0]
        if ex is None or ex.closed:   # hg.default_cpu_executor() takes a lock: 0.5 us
            ex = _cpu[0] = hg.default_cpu_executor()
        return ex
    if ex_id:
        ex = _executors.get(ex_id)
        if ex is None:   # dropped from the registry: it was closed
            raise hg.errors.InvalidHandleError(f"{fn}: the executor was closed (Executor used "
                                               f"after close())")
        backend, index = _devices[ex_id]
        want = "cpu" if device.type == "cpu" else "cuda" if device.type == "cuda" else None
        if backend != want or (want == "cuda" and index != (device.index or 0)):
            raise ValueError(
                f"{fn}: the tensors are on {device} but the executor runs on "
                f"'{backend}'" + (f" device {index}" if backend == "cuda" else "") +
                "; move the tensors (.to(...)) or pass an executor of their device "
                "(nothing is copied across devices)")
    elif device.type == "cuda":
        ex = _cuda.get(device.index or 0)
        if ex is None or ex.closed:
            ex = _cuda[device.index or 0] = hg.default_cuda_executor(device.index or 0)
    else:
        raise ValueError(f"{fn}: tensors on {device} are not supported (CPU and CUDA tensors "
                         f"are)")
    if device.type == "cuda":
        follow_stream(ex, device.index or 0)
    return ex


def _current_stream(index):
    """torch's current stream of CUDA device ``index`` as the driver's handle (an int; 0 is the
    legacy default stream), through the public API (~3 us; CUDA builds of torch have the
    0.1 us _RAW_STREAM that torch.compile's generated code calls)."""
    return torch.cuda.current_stream(index).cuda_stream


def follow_stream(ex, index):
    """Makes the CUDA executor ex enqueue its work on torch's current stream of device index, so
    that hologram's kernels and torch's are ordered by the stream (no synchronization either
    way); set only when it changed (``with torch.cuda.stream(s):`` moves it). Executors
    without streams (hologram before Executor.set_stream) finish every call before returning
    and synchronize the device before reading a torch tensor, which orders them too."""
    if not _HAS_STREAMS:
        return
    # torch's default stream reads 0; hologram takes 0 as "the executor's own stream" and the
    # legacy default stream as CU_STREAM_LEGACY (1), the stream torch's 0 is
    s = (_RAW_STREAM or _current_stream)(index) or 1
    if ex.stream != s:
        ex.set_stream(s)


def check_tensor(t, what, fn, floats_only=False):
    """Raises a clear error for what hologram cannot take: not a tensor, sparse, quantized,
    complex, or a dtype it has no kernels for."""
    if isinstance(t, torch.Tensor) and t.layout == torch.strided and (
            t.dtype in FLOATS if floats_only else t.dtype in DTYPES):
        return   # the common case, in two attribute reads
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{fn}: {what} must be a torch.Tensor, got {type(t).__name__}")
    if t.layout != torch.strided:
        raise TypeError(f"{fn}: {what} is a {t.layout} tensor; only dense (strided) tensors "
                        f"are supported (use .to_dense())")
    if t.is_quantized:
        raise TypeError(f"{fn}: {what} is quantized ({t.dtype}); dequantize it first")
    if t.is_complex():
        raise TypeError(f"{fn}: {what} is complex ({t.dtype}); hologram has no complex dtypes")
    if t.dtype not in DTYPES:
        raise TypeError(f"{fn}: {what} has dtype {t.dtype}, which hologram does not support "
                        f"(supported: {', '.join(str(d) for d in DTYPES)})")
    if floats_only and t.dtype not in FLOATS:
        raise TypeError(f"{fn}: {what} has dtype {t.dtype}; expected a floating dtype "
                        f"(float32, float64, float16, bfloat16)")


def same_device(fn, *ts):
    """The one device of the tensors ts (None entries skipped); a clear error when they differ."""
    dev = None
    for t in ts:
        if t is None:
            continue
        if dev is None:
            dev = t.device
        elif t.device != dev:
            raise ValueError(f"{fn}: tensors on different devices ({dev} and {t.device}); "
                             f"nothing is copied across devices")
    return dev


def to_hg(t, ex):
    """A hologram Tensor over t's memory (no copy; it keeps t's storage alive). Real dtypes
    only (check_tensor), so there are no conjugate or negative views to resolve."""
    return _C._from_capsule(torch._C._to_dlpack(t), ex)


def to_torch(h):
    """A torch tensor over a hologram Tensor's memory (no copy; it keeps the memory alive).
    stream=-1 (DLPack: no ordering to add): on a GPU the executor queued the result on torch's
    current stream (follow_stream), where torch uses it next.
    Letting hologram allocate a result and handing it over costs ~1 us; torch.empty plus a view
    for hologram to write into cost 2.4."""
    return torch._C._from_dlpack(h.__dlpack__(stream=-1))


def scalar(v, dtype, device):
    """A 0-d tensor of the number v as torch.tensor(v, dtype=dtype) makes it, on device without
    waiting: torch.tensor(v, device=<a GPU>) synchronizes the stream after its copy, a
    non-blocking copy of the host tensor does not (the driver stages pageable memory before the
    call returns)."""
    t = torch.tensor(v, dtype=dtype)
    return t if device.type == "cpu" else t.to(device, non_blocking=True)


def empty_pair(shape, dtype, ex):
    """A new C-contiguous result allocated by hologram on ex: (the torch tensor, the hologram
    Tensor over the same memory) for an op to write into. hologram's allocator keeps freed blocks
    for reuse; torch.empty maps and faults in fresh pages for every large result (a 16M f32
    GELU: ~20 of its 46 ms)."""
    h = _C.empty(ex, tuple(shape), DTYPES[dtype])
    return torch._C._from_dlpack(h.__dlpack__(stream=-1)), h


def broadcast_shape(fn, a, b):
    """torch.broadcast_shapes of two shapes (torch's own is Python code costing 6 us)."""
    if a == b:
        return tuple(a)
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"{fn}: shapes {list(a)} and {list(b)} do not broadcast (size "
                               f"{x} and {y} in dim {i})")
        out.append(y if x == 1 else x)
    return tuple(out)
