"""The instruction-count guard (tests/perf_guard/perf_guard.py, docs/testing.md): its
comparison logic on made-up counts, and its Python cases (the 1-element call through the
package) measured under callgrind against tests/perf_guard/counts.json. The C cases run as the
ctest `perf_guard`."""
import importlib.util
import json
import os
import shutil
import sys

import pytest

from conftest import TEST_BACKEND

HERE = os.path.dirname(os.path.abspath(__file__))
GUARD_DIR = os.path.join(HERE, "..", "perf_guard")

_spec = importlib.util.spec_from_file_location("perf_guard", os.path.join(GUARD_DIR, "perf_guard.py"))
pg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pg)

REL, ABS = 0.02, 100


def kinds(stored, measured):
    return {name: kind for name, kind, _, _ in pg.compare(stored, measured, REL, ABS)}


def test_growth_beyond_the_tolerance_fails():
    rows = pg.compare({"big": 100_000}, {"big": 102_001}, REL, ABS)
    assert rows == [("big", "slower", 100_000, 102_001)]
    lines, failed = pg.report(rows, verbose=False)
    assert failed and "FAIL" in lines[0] and "+2.00%" in lines[0]


def test_growth_within_the_tolerance_passes():
    assert kinds({"big": 100_000}, {"big": 102_000}) == {"big": "ok"}
    assert pg.report(pg.compare({"big": 100_000}, {"big": 101_000}, REL, ABS), False) == ([], False)


def test_small_cases_have_an_absolute_floor():
    # 2% of 2000 is 40: the floor of 100 instructions decides for small cases.
    assert kinds({"tiny": 2000}, {"tiny": 2100}) == {"tiny": "ok"}
    assert kinds({"tiny": 2000}, {"tiny": 2101}) == {"tiny": "slower"}


def test_a_much_cheaper_case_is_reported_not_failed():
    rows = pg.compare({"big": 100_000}, {"big": 90_000}, REL, ABS)
    assert rows[0][1] == "faster"
    lines, failed = pg.report(rows, verbose=False)
    assert not failed and "--update" in lines[0]


def test_new_and_missing_cases_fail():
    rows = pg.compare({"gone": 10}, {"added": 10}, REL, ABS)
    assert {r[0]: r[1] for r in rows} == {"added": "new", "gone": "missing"}
    assert pg.report(rows, verbose=False)[1]


def test_parse_dump_reads_the_case_and_its_count():
    dump = ("# callgrind format\nversion: 1\ndesc: Trigger: Client Request: softmax_f32_4x16\n"
            "\npositions: line\nevents: Ir\nsummary: 2495\n\nob=(1) /lib/x.so\n")
    assert pg.parse_dump(dump) == ("softmax_f32_4x16", 2495)
    # The dump written at program exit belongs to no case.
    assert pg.parse_dump("desc: Trigger: Program termination\nsummary: 0\n") is None


def test_another_toolchain_is_told_apart():
    stored = "compiler=gcc 12.2.0; build_type=Release; features=cpu avx2-kernels; kernels=avx2"
    assert pg.same_build(stored, "compiler=gcc 12.2.0; build_type=Release; features=cpu avx2-kernels",
                         pg.BUILD_FIELDS)
    assert not pg.same_build(stored, "compiler=clang 14.0.6; build_type=Release; "
                             "features=cpu avx2-kernels", pg.BUILD_FIELDS)
    assert not pg.same_build(stored, "compiler=gcc 12.2.0; build_type=RelWithDebInfo; "
                             "features=cpu avx2-kernels asan", pg.BUILD_FIELDS)
    amd = stored + "; cpu_vendor=AuthenticAMD"
    assert not pg.same_build(amd, stored + "; cpu_vendor=GenuineIntel", pg.BUILD_FIELDS)


def test_stored_counts_are_whole_and_positive():
    with open(os.path.join(GUARD_DIR, "counts.json"), encoding="utf-8") as f:
        data = json.load(f)
    assert 0 < data["tolerance"]["relative"] < 0.1 and data["tolerance"]["absolute"] >= 0
    for section in ("c", "python"):
        counts = data[section]["counts"]
        assert counts and all(isinstance(v, int) and v > 0 for v in counts.values()), section


@pytest.mark.skipif(TEST_BACKEND != "cpu",
                    reason="the guard measures CPU executors; it runs in the default (cpu) run")
def test_python_calls_are_no_more_expensive_than_stored(capsys):
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind not found on PATH (scripts/ensure_tools.sh installs it on Debian)")
    status = pg.main(["python", "--python", sys.executable])
    out = capsys.readouterr().out
    if status == pg.SKIP:
        pytest.skip(out.strip())
    assert status == 0, out
