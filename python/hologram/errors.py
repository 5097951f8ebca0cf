"""Exceptions raised by hologram, mapped from the library's status codes (hg_status).

Every class derives from :class:`HologramError` and from the builtin exception that matches its
meaning, so ``except ValueError`` keeps working for bad arguments.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Type

from . import _C


class HologramError(Exception):
    """Base class. ``status`` is the numeric hg_status, ``status_name`` its constant name."""

    status: Optional[int]
    status_name: Optional[str]

    def __init__(self, message: str, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.status_name = _C.status_string(status) if status is not None else None


class InvalidArgumentError(HologramError, ValueError):
    """A value out of its documented range (HG_ERR_INVALID_ARGUMENT, HG_ERR_NULL_POINTER)."""


class InvalidHandleError(HologramError, ValueError):
    """A freed buffer, a closed executor, or another dead handle (HG_ERR_INVALID_HANDLE)."""


class DtypeError(HologramError, TypeError):
    """Element types do not match or are not supported (HG_ERR_DTYPE_MISMATCH)."""


class SizeMismatchError(HologramError, ValueError):
    """Sizes, counts or offsets do not fit (HG_ERR_SIZE_MISMATCH)."""


class OutOfRangeError(HologramError, ValueError, IndexError):
    """An index or value outside its valid range (HG_ERR_OUT_OF_RANGE)."""


class UnsupportedError(HologramError, NotImplementedError):
    """A valid request this backend or dtype does not support (HG_ERR_UNSUPPORTED)."""


class ProgramError(HologramError, ValueError):
    """An Atlas ISA program problem (2xx codes)."""


class ParseError(ProgramError):
    """The program text does not parse (HG_ERR_PARSE)."""


class InvalidProgramError(ProgramError):
    """The program fails validation (HG_ERR_INVALID_PROGRAM)."""


class BadFormatError(ProgramError):
    """A binary program or file has a bad format (HG_ERR_BAD_FORMAT)."""


class LaunchConfigError(ProgramError):
    """The launch configuration is invalid (HG_ERR_LAUNCH_CONFIG)."""


class ArgumentBindingError(ProgramError):
    """Program arguments do not match its parameters (HG_ERR_ARGUMENT_BINDING)."""


class ExecutionError(HologramError, RuntimeError):
    """A failure while work ran (3xx codes)."""


class OutOfBoundsError(ExecutionError, IndexError):
    """A kernel lane accessed memory outside a buffer; nothing was written
    (HG_ERR_OUT_OF_BOUNDS)."""


class ExecutorDeadError(ExecutionError):
    """An earlier unrecoverable error disabled the executor (HG_ERR_EXECUTOR_DEAD)."""


class OutOfMemoryError(HologramError, MemoryError):
    """Host or device memory is exhausted (HG_ERR_OUT_OF_MEMORY)."""


class BackendUnavailableError(HologramError, RuntimeError):
    """The backend is not built in, has no driver/device, or not on this platform
    (HG_ERR_BACKEND_UNAVAILABLE)."""


class HologramIOError(HologramError, OSError):
    """A file could not be read or written (HG_ERR_IO)."""

    def __init__(self, message: str, status: Optional[int] = None) -> None:
        # OSError's constructor treats a 2-tuple (errno, strerror) specially: keep one message.
        HologramError.__init__(self, message, status)


class InternalError(HologramError, RuntimeError):
    """A bug in the library (HG_ERR_INTERNAL): please report it."""


STATUS_CLASSES: Dict[int, Type[HologramError]] = {
    100: InvalidArgumentError,
    101: InvalidArgumentError,
    102: InvalidHandleError,
    103: DtypeError,
    104: SizeMismatchError,
    105: OutOfRangeError,
    106: UnsupportedError,
    200: ParseError,
    201: InvalidProgramError,
    202: BadFormatError,
    203: LaunchConfigError,
    204: ArgumentBindingError,
    300: OutOfBoundsError,
    301: ExecutionError,
    302: ExecutorDeadError,
    400: OutOfMemoryError,
    401: BackendUnavailableError,
    402: HologramIOError,
    499: InternalError,
}

_C._set_error_classes(STATUS_CLASSES, HologramError)

__all__: List[str] = [name for name, obj in globals().items()
           if isinstance(obj, type) and issubclass(obj, HologramError)]
