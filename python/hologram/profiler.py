"""Where the time goes: ``hologram.profile()`` records every op call, graph plan step and kernel
launch of the library while it is open, as ``HOLOGRAM_TRACE=trace.json`` does for a whole
process (docs/trace.md)::

    with hg.profile() as prof:
        y = model(x)
    print(prof.table())              # one line per op, slowest first (torch.profiler's table)
    prof.save("trace.json")          # open in https://ui.perfetto.dev or chrome://tracing

and for a trace file written by ``HOLOGRAM_TRACE``::

    python -m hologram.profiler summary trace.json

Events are Chrome trace "complete" events: ``name``, ``cat`` ("op", "step" or "launch"),
``ts`` and ``dur`` in microseconds, ``tid``, and ``args`` with ``threads`` and, where known,
``executor``, ``dtype``, ``shape``, ``bytes`` and ``detail``. Spans nest by time on a thread: a
plan run contains its steps, an op its kernel launches.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from types import TracebackType
from typing import Any, Dict, Iterable, List, Optional, Sequence, Type, Union


from . import _C

__all__ = ["profile", "Profile", "load", "summarize"]


class Profile:
    """The events of one trace (``events``: a list of dicts in Chrome trace form)."""

    def __init__(self, events: Optional[Iterable[Dict[str, Any]]] = None,
                 other: Optional[Dict[str, Any]] = None) -> None:
        self.events: List[Dict[str, Any]] = list(events or [])
        self.other: Dict[str, Any] = dict(other or {})

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the trace as Chrome trace JSON."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"displayTimeUnit": "ns", "otherData": self.other,
                       "traceEvents": self.events}, f)

    def summary(self, cat: Optional[str] = "op") -> List[Dict[str, Any]]:
        """Per name of category ``cat`` ("op", "step", "launch" or None for all): a list of
        dicts (name, cat, calls, total_us, mean_us, max_us, self_us, bytes, threads), slowest
        total first. ``self_us`` leaves out the time of the spans nested inside."""
        return summarize(self.events, cat)

    def table(self, cat: Optional[str] = "op", limit: Optional[int] = None) -> str:
        """The summary as a text table (torch.profiler's key_averages().table() as the model)."""
        rows = self.summary(cat)
        if limit is not None:
            rows = rows[:limit]
        total = sum(r["total_us"] for r in rows) or 1.0
        head = (f"{'name':<32} {'cat':<7} {'calls':>7} {'total us':>11} {'%':>6} "
                f"{'mean us':>10} {'max us':>10} {'self us':>11} {'MB':>9} {'threads':>7}")
        lines = [head, "-" * len(head)]
        for r in rows:
            lines.append(
                f"{r['name'][:32]:<32} {r['cat']:<7} {r['calls']:>7} {r['total_us']:>11.1f} "
                f"{100 * r['total_us'] / total:>6.1f} {r['mean_us']:>10.2f} {r['max_us']:>10.1f} "
                f"{r['self_us']:>11.1f} {r['bytes'] / 1e6:>9.2f} {r['threads']:>7}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<hologram.Profile {len(self.events)} events>"


def summarize(events: Iterable[Dict[str, Any]],
              cat: Optional[str] = "op") -> List[Dict[str, Any]]:
    """Per-name totals of the events of category ``cat`` (None: all); see Profile.summary."""
    evs = sorted((e for e in events if e.get("ph") == "X"),
                 key=lambda e: (e.get("tid", 0), e["ts"], -e["dur"]))
    # Self time: each span's duration less that of its direct children (same thread, nested).
    child = [0.0] * len(evs)
    stack: List[int] = []
    for i, e in enumerate(evs):
        end = e["ts"] + e["dur"]
        while stack and (evs[stack[-1]].get("tid") != e.get("tid") or
                         evs[stack[-1]]["ts"] + evs[stack[-1]]["dur"] < end - 1e-6):
            stack.pop()
        if stack:
            child[stack[-1]] += e["dur"]
        stack.append(i)
    rows: Dict[Any, Dict[str, Any]] = {}
    for i, e in enumerate(evs):
        if cat is not None and e.get("cat") != cat:
            continue
        a = e.get("args", {})
        r = rows.setdefault((e["name"], e.get("cat", "")), {
            "name": e["name"], "cat": e.get("cat", ""), "calls": 0, "total_us": 0.0,
            "max_us": 0.0, "self_us": 0.0, "bytes": 0, "threads": 0})
        r["calls"] += 1
        r["total_us"] += e["dur"]
        r["max_us"] = max(r["max_us"], e["dur"])
        r["self_us"] += max(e["dur"] - child[i], 0.0)
        r["bytes"] += max(a.get("bytes", 0), 0)
        r["threads"] = max(r["threads"], a.get("threads", 1))
    out = sorted(rows.values(), key=lambda r: -r["total_us"])
    for r in out:
        r["mean_us"] = r["total_us"] / r["calls"]
    return out


def load(path: Union[str, "os.PathLike[str]"]) -> Profile:
    """A Profile of a trace file (HOLOGRAM_TRACE's or Profile.save's)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data, list):   # the bare-array form of the Chrome format
        return Profile(data)
    return Profile(data.get("traceEvents", []), data.get("otherData"))


class profile:
    """Context manager: traces the library's work inside the block; ``with hg.profile() as p``
    gives a Profile, filled when the block ends. Only one trace runs at a time in a process
    (also not with HOLOGRAM_TRACE): a second raises InvalidArgumentError."""

    def __init__(self) -> None:
        self.result = Profile()
        self._path: Optional[str] = None

    def __enter__(self) -> Profile:
        fd, self._path = tempfile.mkstemp(prefix="hologram-trace-", suffix=".json")
        os.close(fd)
        try:
            _C.trace_start(self._path)
        except BaseException:
            os.unlink(self._path)
            raise
        return self.result

    def __exit__(self, t: Optional[Type[BaseException]], v: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        assert self._path is not None
        try:
            _C.trace_stop()
            got = load(self._path)
            self.result.events[:] = got.events
            self.result.other.update(got.other)
        finally:
            os.unlink(self._path)


def _main(argv: Sequence[str]) -> int:
    if len(argv) < 2 or argv[0] != "summary":
        print("usage: python -m hologram.profiler summary TRACE.json [--cat op|step|launch|all] "
              "[--limit N]", file=sys.stderr)
        return 2
    cat: Optional[str] = "op"
    limit: Optional[int] = None
    rest = list(argv[2:])
    while rest:
        if rest[0] == "--cat" and len(rest) > 1:
            cat = None if rest[1] == "all" else rest[1]
            rest = rest[2:]
        elif rest[0] == "--limit" and len(rest) > 1:
            limit = int(rest[1])
            rest = rest[2:]
        else:
            print(f"unknown argument {rest[0]!r}", file=sys.stderr)
            return 2
    prof = load(argv[1])
    print(prof.table(cat, limit))
    dropped = prof.other.get("dropped_events", 0)
    if dropped:
        print(f"({dropped} events were dropped: the trace held its maximum)")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
