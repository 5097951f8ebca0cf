"""Locks of the Python layers that a forked child gets unlocked (the library's own C locks have
their pthread_atfork handlers, docs/architecture.md "fork()"): a thread of the parent may hold
one at the fork (it runs Python code, or a library call with the GIL released, inside it), and
the child would wait on it for ever."""
import os
import threading
import weakref

_locks: "weakref.WeakSet[threading.Lock]" = weakref.WeakSet()


def fork_safe_lock() -> threading.Lock:
    """A threading.Lock that is unlocked in a forked child."""
    lock = threading.Lock()
    _locks.add(lock)
    return lock


def _after_in_child() -> None:
    for lock in list(_locks):
        lock._at_fork_reinit()  # type: ignore[attr-defined]  # as threading and logging do


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_in_child)
