"""Routes the library's log messages to the ``logging`` logger ``"hologram"``."""

from __future__ import annotations

import atexit
import logging
from typing import Union

from . import _C

logger = logging.getLogger("hologram")

TRACE = 5  # logging has no TRACE level; hologram's trace messages use 5
logging.addLevelName(TRACE, "TRACE")

# hg_log_level (trace, debug, info, warn, error, off) -> logging level
_TO_LOGGING = (TRACE, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR)
_NAMES = {"trace": 0, "debug": 1, "info": 2, "warn": 3, "warning": 3, "error": 4, "off": 5}


def _dispatch(level: int, message: str) -> None:
    logger.log(_TO_LOGGING[level] if 0 <= level < len(_TO_LOGGING) else logging.ERROR, message)


def set_log_level(level: Union[str, int]) -> None:
    """Sets the library's level (which messages are produced at all): 'trace', 'debug', 'info',
    'warn', 'error', 'off', or a logging level (logging.DEBUG, ...). The initial level comes from
    HOLOGRAM_LOG_LEVEL (default warn). The ``hologram`` logger then filters as usual."""
    if isinstance(level, str):
        try:
            code = _NAMES[level.lower()]
        except KeyError:
            raise ValueError(f"unknown log level {level!r}; expected one of "
                             f"{sorted(_NAMES)}") from None
    elif isinstance(level, int):
        code = 5
        for i, lv in enumerate(_TO_LOGGING):
            if level <= lv:
                code = i
                break
    else:
        raise TypeError(f"log level must be a str or int, got {type(level).__name__}")
    _C._set_log_level(code)


def get_log_level() -> str:
    """The library's current level name."""
    return ("trace", "debug", "info", "warn", "error", "off")[_C._get_log_level()]


def _install() -> None:
    _C._set_log_handler(_dispatch)
    # Restore the library's stderr default before the interpreter shuts down, so that no library
    # thread calls into Python during finalization.
    atexit.register(_C._set_log_handler, None)
