"""Backend queries: which backends this machine can run, and which ``'auto'`` picks."""

from __future__ import annotations

import os
from typing import Any, Dict

from . import _C

BACKENDS = ("auto", "cpu", "cuda", "metal")


def backend_info(name: str) -> Dict[str, Any]:
    """Facts about one concrete backend: dict(name, available, device_count, reason)."""
    return _C.backend_query(name)


def is_available(name: str) -> bool:
    """True if an executor can be created on backend ``name`` ('cpu', 'cuda', 'metal') now."""
    return bool(_C.backend_query(name)["available"])


def is_cuda_available() -> bool:
    """True if an executor can be created on the CUDA backend now."""
    return is_available("cuda")


def is_metal_available() -> bool:
    """True if an executor can be created on the Metal backend now."""
    return is_available("metal")


def is_cpu_available() -> bool:
    """True if an executor can be created on the CPU backend (always, in a working build)."""
    return is_available("cpu")


def get_default_backend() -> str:
    """The backend ``Executor(backend='auto')`` uses: HOLOGRAM_BACKEND when set, else the first
    available of cuda, metal, cpu."""
    env = os.environ.get("HOLOGRAM_BACKEND", "").strip().lower()
    if env and env != "auto" and env in BACKENDS:
        return env
    for name in ("cuda", "metal", "cpu"):
        if is_available(name):
            return name
    return "cpu"


def set_cpu_threading(mode: str) -> None:
    """Which threads run the parallel parts of CPU executors' work, process-wide:
    ``'own'`` (hologram's worker threads, the default) or ``'openmp'`` (the OpenMP runtime already
    loaded in the process, e.g. by PyTorch's CPU build: one set of threads instead of two pools
    spinning on the same cores). ``'openmp'`` with no OpenMP runtime loaded raises
    UnsupportedError and changes nothing. ``hologram_torch`` chooses ``'openmp'`` on import when
    torch runs on OpenMP and HOLOGRAM_CPU_THREADING is not set (docs/architecture.md
    "Threads")."""
    _C.set_cpu_threading(mode)


def cpu_threading() -> str:
    """``'own'`` or ``'openmp'``: the threads CPU executors' parallel parts run on now
    (``'own'`` in a process forked after ``'openmp'`` was chosen)."""
    return _C.cpu_threading()


__all__ = ["BACKENDS", "set_cpu_threading", "cpu_threading", "backend_info", "is_available", "is_cuda_available",
           "is_metal_available", "is_cpu_available", "get_default_backend"]
