"""Tracing (docs/trace.md): hg.profile() and HOLOGRAM_TRACE write Chrome trace JSON whose events
are the calls made, nested op > launch and plan run > step on the calling thread, with the
executor, dtype, shape, bytes and threads of each; the summary table adds them up."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import hologram as hg


def _spans(prof, cat):
    return [e for e in prof.events if e["cat"] == cat]


def _inside(inner, outer):
    return (inner["tid"] == outer["tid"] and inner["ts"] >= outer["ts"] - 1e-3 and
            inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3)


def test_profile_records_each_call_with_its_facts():
    ex = hg.Executor("cpu", num_threads=2)
    x = hg.asarray(np.ones((300, 200), np.float32), executor=ex)
    w = hg.asarray(np.ones((200, 50), np.float32), executor=ex)
    with hg.profile() as prof:
        y = hg.add(x, x)
        hg.exp(y, out=y)
        m = x @ w
        s = hg.softmax(m, -1)
    assert not hg._C.trace_enabled()
    ops = _spans(prof, "op")
    assert [e["name"] for e in ops] == ["add", "exp", "matmul", "softmax"]
    add, exp, mm, sm = ops
    assert add["args"]["shape"] == [300, 200] and add["args"]["dtype"] == "f32"
    assert add["args"]["bytes"] == 3 * 300 * 200 * 4            # two inputs and the result
    assert exp["args"]["bytes"] == 2 * 300 * 200 * 4
    assert mm["args"]["shape"] == [300, 50]
    assert mm["args"]["bytes"] == (300 * 200 + 200 * 50 + 300 * 50) * 4
    assert sm["args"]["shape"] == [300, 50]
    for e in ops:
        assert e["args"]["executor"] == "cpu" and 1 <= e["args"]["threads"] <= 2
        assert e["ph"] == "X" and e["dur"] >= 0
    # Calls are in order and do not overlap on the thread.
    for a, b in zip(ops, ops[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + 1e-3
    # Every kernel launch lies inside the op that made it; the two elementwise ops launched.
    launches = _spans(prof, "launch")
    assert len(launches) >= 2
    for ln in launches:
        assert any(_inside(ln, op) for op in ops), ln
        assert "lanes" in ln["args"]["detail"]
    assert any(_inside(ln, add) for ln in launches) and any(_inside(ln, exp) for ln in launches)
    np.testing.assert_allclose(s.numpy().sum(axis=1), 1.0, rtol=1e-5)


def test_plan_steps_nest_in_the_plan_run():
    x = hg.asarray(np.linspace(-1, 1, 4096, dtype=np.float32))

    @hg.jit
    def f(a):
        return (hg.maximum(a * 2.0 + 1.0, 0.0)).sum()

    f(x)   # compiled outside the trace
    with hg.profile() as prof:
        got = f(x)
    runs = [e for e in _spans(prof, "op") if e["name"] == "plan_run"]
    steps = _spans(prof, "step")
    assert len(runs) == 1 and steps
    for st in steps:
        assert _inside(st, runs[0]) and st["name"].startswith("step ")
        assert "detail" in st["args"]
    want = np.maximum(x.numpy() * 2 + 1, 0).sum(dtype=np.float64)
    assert abs(float(got.numpy()) - want) <= 1e-4 * abs(want)


def test_view_steps_are_traced_with_the_shape_they_made():
    """A plan's permute / slice / reshape steps make their output when they run: the trace
    reads that view (it read the slot before the step ran: garbage, once a crash)."""
    g = hg.Graph()
    x = g.input("f32", (4, 6))
    t = g.slice(g.permute(x, (1, 0)), 0, 1, None)           # (5, 4), a view
    y = g.unary(hg._C.unary_ops["neg"], g.reshape(t, (20,)))
    g.output(y)
    xs = np.arange(24, dtype=np.float32).reshape(4, 6)
    plan = g.compile(hg.tensor(xs).executor)
    out = hg.empty((20,))
    for _ in range(3):
        with hg.profile() as prof:
            plan.run([hg.tensor(xs)], [out])
        shapes = {st["name"].split(": ")[1]: st["args"].get("shape") for st in _spans(prof, "step")}
        assert shapes["permute"] == [6, 4] and shapes["slice"] == [5, 4], shapes
        assert shapes["reshape"] == [20] and shapes["neg"] == [20], shapes
    np.testing.assert_array_equal(out.numpy(), -xs.T[1:].reshape(20))


def test_table_sums_calls_and_self_time():
    x = hg.asarray(np.ones(1000, np.float32))
    with hg.profile() as prof:
        for _ in range(5):
            hg.add(x, x)
        hg.multiply(x, x)
    rows = {r["name"]: r for r in prof.summary()}
    assert rows["add"]["calls"] == 5 and rows["multiply"]["calls"] == 1
    assert rows["add"]["bytes"] == 5 * 3 * 4000
    total = sum(e["dur"] for e in prof.events if e["name"] == "add")
    assert rows["add"]["total_us"] == pytest.approx(total)
    assert 0 <= rows["add"]["self_us"] <= rows["add"]["total_us"] + 1e-6
    text = prof.table()
    assert text.splitlines()[0].split()[:3] == ["name", "cat", "calls"]
    assert any(line.startswith("add ") for line in text.splitlines())
    all_rows = prof.summary(cat=None)
    assert {r["cat"] for r in all_rows} >= {"op", "launch"}


def test_save_and_load_round_trip(tmp_path):
    x = hg.asarray(np.ones(10, np.float32))
    with hg.profile() as prof:
        hg.negative(x)
    p = tmp_path / "t.json"
    prof.save(p)
    again = hg.profiler.load(p)
    assert again.events == prof.events


def test_one_trace_at_a_time_and_clear_errors(tmp_path):
    with hg.profile():
        with pytest.raises(hg.InvalidArgumentError, match="already running"):
            hg._C.trace_start(str(tmp_path / "b.json"))
    with pytest.raises(hg.InvalidArgumentError, match="no trace is running"):
        hg._C.trace_stop()
    with pytest.raises(hg.HologramError, match="cannot write"):
        hg._C.trace_start(str(tmp_path / "missing-dir" / "t.json"))
    assert not hg._C.trace_enabled()


def test_environment_variable_traces_the_process_and_the_summary_command(tmp_path):
    trace = tmp_path / "trace.json"
    code = ("import numpy as np, hologram as hg\n"
            "x = hg.asarray(np.ones(64, np.float32))\n"
            "for _ in range(3): hg.add(x, x)\n"
            "hg.sqrt(x)\n")
    env = dict(os.environ, HOLOGRAM_TRACE=str(trace))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    data = json.loads(trace.read_text())
    names = [e["name"] for e in data["traceEvents"] if e["cat"] == "op"]
    assert names == ["add", "add", "add", "sqrt"]
    assert data["otherData"]["dropped_events"] == 0
    out = subprocess.run([sys.executable, "-m", "hologram.profiler", "summary", str(trace)],
                         check=True, capture_output=True, text=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("add "))
    assert line.split()[1:3] == ["op", "3"]
    bad = subprocess.run([sys.executable, "-m", "hologram.profiler", "nonsense"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr
    # An unwritable HOLOGRAM_TRACE says so and leaves tracing off; the program still runs.
    env["HOLOGRAM_TRACE"] = str(tmp_path / "no-such-dir" / "t.json")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "tracing is off" in r.stderr
