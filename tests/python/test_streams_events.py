"""Executor.stream / set_stream / synchronize and hologram.Event on the executor under test
(CPU, or a CUDA executor with HG_TEST_BACKEND=cuda): timing against the host clock, ordering,
the torch.cuda.Event names, and the errors for misuse. The CUDA emulation's stream bookkeeping
and DLPack's stream argument are checked in test_cuda_interop.py."""
import time

import numpy as np
import pytest

import hologram as hg


class FakeStream:
    """What torch.cuda.Stream looks like to set_stream: a cuda_stream attribute."""
    def __init__(self, handle):
        self.cuda_stream = handle


def test_stream_of_the_executor(ex):
    own = ex.stream
    assert isinstance(own, int) and own >= 0
    if ex.backend == "cpu":
        assert own == 0
    ex.set_stream(None)
    assert ex.stream == own
    ex.set_stream(0)                      # 0 is the executor's own stream too
    assert ex.stream == own
    with pytest.raises(TypeError, match="cuda_stream"):
        ex.set_stream("stream")
    with pytest.raises(ValueError, match="2\\*\\*64"):
        ex.set_stream(-5)
    if ex.backend == "cpu":
        with pytest.raises(hg.UnsupportedError, match="no streams"):
            ex.set_stream(0x1234)
        with pytest.raises(hg.UnsupportedError, match="no streams"):
            ex.set_stream(FakeStream(0))   # torch's default stream is the legacy stream, 1
        assert ex.stream == 0


def test_synchronize_then_results(ex):
    x = np.random.default_rng(3).standard_normal(10_000).astype(np.float32)
    t = hg.asarray(x, executor=ex)
    for _ in range(5):
        t = t * 1.5 + 1.0
    ex.synchronize()
    want = x                               # each op rounds once in f32, as numpy's
    for _ in range(5):
        want = want * np.float32(1.5) + np.float32(1.0)
    np.testing.assert_array_equal(t.numpy(), want)


def test_event_timing_within_host_time(ex):
    start, end = hg.Event(ex), hg.Event(ex, enable_timing=True)
    assert start.executor is ex
    assert start.query() is True           # never recorded: nothing to wait for
    start.synchronize()
    x = hg.asarray(np.ones(1 << 16, np.float32), executor=ex)
    ex.synchronize()
    t0 = time.perf_counter()
    start.record()
    for _ in range(4):
        x = x + 1.0
    end.record()
    end.synchronize()
    t1 = time.perf_counter()
    assert end.query() is True
    ms = start.elapsed_time(end)
    assert 0.0 <= ms <= (t1 - t0) * 1e3 + 1e-3, (ms, (t1 - t0) * 1e3)
    assert end.elapsed_time(start) <= 0.0
    end.wait()                              # the executor's stream waits for itself
    np.testing.assert_array_equal(x.numpy(), np.full(1 << 16, 5.0, np.float32))


def test_event_misuse(ex):
    a, b = hg.Event(ex), hg.Event(ex)
    with pytest.raises(hg.InvalidArgumentError, match="never recorded"):
        a.elapsed_time(b)
    with pytest.raises(TypeError, match="hologram.Event"):
        a.elapsed_time(3)
    with pytest.raises(TypeError, match="Executor"):
        hg.Event("cuda")
    untimed = hg.Event(ex, enable_timing=False)
    untimed.record()
    a.record()
    with pytest.raises(ValueError, match="enable_timing"):
        a.elapsed_time(untimed)
    if ex.backend == "cpu":
        with pytest.raises(hg.UnsupportedError):
            a.wait(stream=0x99)
    with pytest.raises(hg.InvalidArgumentError, match="set_stream"):
        a.record(stream=0x99)
    other = hg.Executor("cpu")
    c = hg.Event(other)
    c.record()
    if ex is not other:
        with pytest.raises(hg.InvalidArgumentError, match="different executors"):
            a.elapsed_time(c)
    other.close()
    with pytest.raises(hg.InvalidHandleError, match="closed"):
        c.record()
    del c                                    # its handle went with the executor: no error


def test_event_on_the_default_executor():
    e = hg.Event()
    assert e.executor is hg.default_executor()
    e.record()
    e.synchronize()
    assert "Event" in hg.__all__ and hg.Event is hg._C.Event
