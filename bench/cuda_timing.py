"""Device timing for bench/cuda_bench.py: CUDA events on the stream that runs the work, for
hologram (hologram.Event on the executor's stream, where the package has it) and for torch
(torch.cuda.Event on its current stream), so both sides are timed the same way.

A sample is an event pair around `inner` calls, after a write of a buffer larger than the GPU's
L2 cache queued on the same stream: the calls then read their inputs from device memory, as a
model's layers do, and the host's launch of the calls overlaps that write, so the pair measures
the device's time and not the host's (without it, the device would sit idle between the start
event and the launch). Without hologram.Event (a package from before it) the hologram side
falls back to host time around the calls and a synchronize.
"""
import time

L2_FLUSH_BYTES = 256 << 20   # well above the 50 MiB L2 of an H100 / H200


class Clock:
    """How one side is timed: `event()` makes a timing event (None: host timing), `sync()`
    waits for the side's work, `flush()` evicts L2 on the side's stream (None: no flush)."""

    def __init__(self, name, event, sync, flush=None):
        self.name, self.event, self.sync, self.flush = name, event, sync, flush

    @property
    def method(self):
        return "cuda events" if self.event else "host time + synchronize"


def hologram_clock(hg, ex, flush_elems):
    """hologram on executor ex; flush_elems f32 elements are written to evict L2."""
    sync = getattr(ex, "synchronize", lambda: None)   # calls complete on return before it
    event = (lambda: hg.Event(ex, enable_timing=True)) if hasattr(hg, "Event") else None
    buf = hg.empty((flush_elems,), "float32", executor=ex)
    return Clock("hologram", event, sync, lambda: buf.fill(0.0))


def torch_clock(torch, flush_elems):
    buf = torch.empty(flush_elems, device="cuda")
    return Clock("torch", lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize,
                 buf.zero_)


def device_ms(fn, clock, repeats, inner=1, flush=True):
    """Milliseconds per call of fn: `repeats` samples of `inner` calls each (one warm-up call
    first), each after clock.flush() (flush=False: back to back)."""
    fn()
    clock.sync()
    flush_fn = clock.flush if flush else None
    if clock.event is None:
        ts = []
        for _ in range(repeats):
            if flush_fn:
                flush_fn()
                clock.sync()
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            clock.sync()
            ts.append((time.perf_counter() - t0) * 1e3 / inner)
        return ts
    pairs = []
    for _ in range(repeats):
        if flush_fn:
            flush_fn()
        start, end = clock.event(), clock.event()
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        pairs.append((start, end))
    clock.sync()
    return [s.elapsed_time(e) / inner for s, e in pairs]


def host_us(fn, calls, rounds=5, sync=None, each=False):
    """Microseconds per call of fn on the host, best of `rounds` rounds of `calls` calls:
    sync() after every call (each=True) or once at the end of a round (the asynchronous
    cost: the calls queue and the device catches up at the end)."""
    for _ in range(min(calls, 100)):
        fn()
    if sync:
        sync()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
            if each and sync:
                sync()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6
