import logging
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import hologram as hg


def run_threads(target, n):
    errors = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_threads_do_buffer_work_concurrently():
    ex = hg.Executor("cpu")
    size = 50_000  # large enough that the GIL is released for real work

    def work(i):
        rng = np.random.default_rng(i)
        a, b, c = ex.allocate(size), ex.allocate(size), ex.allocate(size)
        for _ in range(30):
            x = rng.standard_normal(size).astype(np.float32)
            y = rng.standard_normal(size).astype(np.float32)
            a.from_numpy(x)
            b.copy_from(y)
            hg.ops.vector_add(ex, a, b, c)
            np.testing.assert_array_equal(c.to_numpy(), x + y)
            c.fill(i)
            assert c.to_bytes() == np.full(size, i, np.float32).tobytes()
            assert hg.ops.reduce_sum(ex, c, a) == pytest.approx(i * size)

    run_threads(work, 6)


def test_free_racing_with_work_never_crashes():
    ex = hg.Executor("cpu")
    size = 200_000
    for _ in range(20):
        a, c = ex.allocate(size), ex.allocate(size)
        a.fill(1)
        outcome = []

        def user(_):
            try:
                for _ in range(5):
                    hg.ops.vector_relu(ex, a, c)
                outcome.append("ok")
            except hg.InvalidHandleError:
                outcome.append("freed")

        def freer(_):
            a.free()

        run_threads(lambda i: user(i) if i == 0 else freer(i), 2)
        assert outcome in (["ok"], ["freed"])
        assert not a._memory_alive  # released once the in-flight call finished


def test_library_errors_are_logged(caplog):
    ex = hg.Executor("cpu")
    old = hg.get_log_level()
    hg.set_log_level("debug")
    try:
        with caplog.at_level(logging.DEBUG, logger="hologram"):
            with pytest.raises(hg.DtypeError):
                hg.ops.vector_add(ex, ex.allocate(2), ex.allocate(2, np.int32), ex.allocate(2))
    finally:
        hg.set_log_level(old)
    records = [r for r in caplog.records if r.name == "hologram"]
    assert any("HG_ERR_DTYPE_MISMATCH" in r.getMessage() and r.levelno == logging.DEBUG
               for r in records), [r.getMessage() for r in records]
    assert hg.get_log_level() == old


def test_logging_from_threads_that_released_the_gil(caplog):
    ex = hg.Executor("cpu")
    a, b = ex.allocate(4), ex.allocate(4, np.float64)
    hg.set_log_level("debug")
    try:
        with caplog.at_level(logging.DEBUG, logger="hologram"):
            def fail(_):
                for _ in range(50):
                    with pytest.raises(hg.DtypeError):
                        hg.ops.vector_add(ex, a, b, a)
            run_threads(fail, 4)
    finally:
        hg.set_log_level("warn")
    n = sum("HG_ERR_DTYPE_MISMATCH" in r.getMessage() for r in caplog.records)
    assert n == 200


def test_set_log_level_arguments():
    old = hg.get_log_level()
    try:
        hg.set_log_level(logging.ERROR)
        assert hg.get_log_level() == "error"
        hg.set_log_level("OFF")
        assert hg.get_log_level() == "off"
        with pytest.raises(ValueError, match="unknown log level"):
            hg.set_log_level("loud")
        with pytest.raises(TypeError):
            hg.set_log_level(1.5)
    finally:
        hg.set_log_level(old)


def test_environment_warning_reaches_logging_and_exit_is_clean():
    code = (
        "import logging, hologram as hg\n"
        "seen = []\n"
        "class H(logging.Handler):\n"
        "    def emit(self, r): seen.append((r.levelname, r.getMessage()))\n"
        "logging.getLogger('hologram').addHandler(H())\n"
        "ex = hg.Executor('cpu')\n"
        "print(seen)\n"
        "keep = ex.allocate(4).to_numpy()  # alive at interpreter exit\n"
    )
    env = dict(os.environ, HOLOGRAM_NUM_THREADS="lots", HOLOGRAM_LOG_LEVEL="warn")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "WARNING" in r.stdout and "HOLOGRAM_NUM_THREADS" in r.stdout, r.stdout + r.stderr
