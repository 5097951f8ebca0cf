"""fork() while other threads run ops (DataLoader workers and multiprocessing fork exactly so):
the child gets a working library and checks its results against numpy, the parent goes on
unaffected. A child that hangs is killed after a timeout and fails the test (the issue saw 8 of
10 forks hang in a lock of the extension)."""
import multiprocessing
import os
import sys
import threading
import time
import traceback

import numpy as np
import pytest

import hologram as hg

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")

N = 100_000          # several parts on the thread pool
BUSY_N = 1_000_000
FORKS = 10
CHILD_TIMEOUT = 60   # seconds: far above a child's run, so only a hang reaches it


def ops_ok(ex, seed):
    """Elementwise chain, reduction and matmul on ex, against numpy."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    a, b = hg.asarray(x, executor=ex), hg.asarray(y, executor=ex)
    np.testing.assert_allclose(((a + b) * b).numpy(), (x + y) * y, rtol=1e-6)
    np.testing.assert_allclose(hg.exp(a).numpy(), np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(float(hg.sum(a).numpy()), float(x.astype(np.float64).sum()),
                               rtol=1e-4, atol=1e-2)
    m = rng.standard_normal((64, 64)).astype(np.float32)
    np.testing.assert_allclose((hg.asarray(m, executor=ex) @ hg.asarray(m, executor=ex)).numpy(),
                               m.astype(np.float64) @ m, rtol=1e-4, atol=1e-4)
    return True


class Busy:
    """Threads running ops in a loop on ex until stopped; records a wrong result."""

    def __init__(self, ex, n=2):
        self.ex, self.stop, self.rounds, self.errors = ex, threading.Event(), 0, []
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(n)]
        for t in self.threads:
            t.start()

    def run(self, i):
        # Mostly inside the library (the GIL released), where a fork finds its locks held.
        rng = np.random.default_rng(i)
        x = rng.standard_normal(BUSY_N).astype(np.float32)
        y = rng.standard_normal(BUSY_N).astype(np.float32)
        a, b = hg.asarray(x, executor=self.ex), hg.asarray(y, executor=self.ex)
        try:
            while not self.stop.is_set():
                for _ in range(10):
                    c = a * b + a
                np.testing.assert_allclose(c.numpy(), x * y + x, rtol=1e-6)
                self.rounds += 1
        except BaseException as e:  # noqa: BLE001 - reported by close()
            self.errors.append(e)

    def wait_for_round(self, i):
        start = self.rounds
        deadline = time.monotonic() + 30
        while self.rounds == start and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(0.0007 * (i % 7))   # fork at varied points of the threads' ops

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join()
        if self.errors:
            raise self.errors[0]


def child_work(ex):
    """The child's part: ops on the executor the threads were using and on a new one."""
    ops_ok(ex, 100)
    ops_ok(hg.Executor("cpu"), 101)


def run_in_child(fn, *args):
    """In a forked child: runs fn and exits with its return value (None: 0), or 3 after an
    exception (printed); never returns into the test runner."""
    code = 3
    try:
        code = fn(*args) or 0
    except BaseException:  # noqa: BLE001 - the exit code tells the parent
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def _mp_target(ex):
    run_in_child(child_work, ex)


def test_multiprocessing_fork_while_threads_run_ops():
    ex = hg.Executor("cpu")
    busy = Busy(ex)
    ctx = multiprocessing.get_context("fork")
    try:
        for i in range(FORKS):
            busy.wait_for_round(i)
            p = ctx.Process(target=_mp_target, args=(ex,))
            p.start()
            p.join(CHILD_TIMEOUT)
            if p.is_alive():
                p.kill()
                p.join()
                pytest.fail(f"fork {i}: the child hung")
            assert p.exitcode == 0, f"fork {i}: the child failed (exit code {p.exitcode})"
    finally:
        busy.close()
    assert busy.rounds > 0
    ops_ok(ex, 7)   # the parent is unaffected


def wait_pid(pid, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def test_os_fork_while_threads_run_ops():
    ex = hg.Executor("cpu")
    busy = Busy(ex, n=3)
    try:
        for i in range(FORKS):
            busy.wait_for_round(i)
            pid = os.fork()
            if pid == 0:
                run_in_child(child_work, ex)
            code = wait_pid(pid, CHILD_TIMEOUT)
            assert code is not None, f"fork {i}: the child hung"
            assert code == 0, f"fork {i}: the child failed (exit code {code})"
    finally:
        busy.close()
    ops_ok(ex, 8)


def test_cuda_executor_made_before_fork_refuses_in_child(monkeypatch):
    """CUDA forbids using a context after fork(): the child's calls fail with a clear error (the
    host emulation behaves as a GPU does), and an executor made in the child works."""
    monkeypatch.setenv("HOLOGRAM_CUDA_EMULATE", "1")
    cu = hg.Executor("cuda")
    buf = cu.allocate(8)
    buf.from_numpy(np.arange(8, dtype=np.float32))
    def child():
        try:
            cu.allocate(8)
            return 4
        except hg.errors.ExecutorDeadError as e:
            if "created before fork()" not in str(e) or "create a new one in the child" not in str(e):
                print("unexpected message:", e, file=sys.stderr)
                return 5
        fresh = hg.Executor("cuda")
        b = fresh.allocate(8)
        b.from_numpy(np.arange(8, dtype=np.float32) * 2)
        return 0 if np.array_equal(b.to_numpy(), np.arange(8, dtype=np.float32) * 2) else 6

    pid = os.fork()
    if pid == 0:
        run_in_child(child)
    code = wait_pid(pid, CHILD_TIMEOUT)
    assert code == 0, f"the child failed (exit code {code})"
    np.testing.assert_array_equal(buf.to_numpy(), np.arange(8, dtype=np.float32))


def test_python_layer_locks_are_free_in_the_child():
    """A thread of the parent inside a lock of the Python layers at the fork (here the default
    executor's): the child takes it (hologram._fork re-makes them) instead of waiting for ever."""
    from hologram import _interop
    held, release = threading.Event(), threading.Event()

    def holder():
        with _interop._default_lock:
            held.set()
            release.wait()

    t = threading.Thread(target=holder)
    t.start()
    held.wait()
    pid = os.fork()
    if pid == 0:
        run_in_child(lambda: 0 if _interop._default_lock.acquire(timeout=10) else 9)
    release.set()
    t.join()
    assert wait_pid(pid, CHILD_TIMEOUT) == 0
