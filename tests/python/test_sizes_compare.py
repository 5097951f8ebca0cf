"""bench/sizes_compare.py: the after/before ratios of two sizes.py runs, matched case by case."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "sizes_compare.py")


def _run(tmp_path, before, after):
    paths = []
    for name, rows in (("b.json", before), ("a.json", after)):
        p = tmp_path / name
        p.write_text(json.dumps({"header": name, "rows": rows}))
        paths.append(str(p))
    md = tmp_path / "out.md"
    r = subprocess.run([sys.executable, SCRIPT, *paths, "--md", str(md)],
                       capture_output=True, text=True)
    return r, md


def _row(fam, case, n, t, s):
    return {"family": fam, "case": case, "elements": n, "threads": t, "hologram_s": s}


def test_ratios_per_family_and_worst_case(tmp_path):
    before = [_row("rows", "softmax", 16, 1, 2e-6), _row("rows", "softmax", 64, 1, 4e-6),
              _row("reduce", "sum", 16, 1, 1e-6), _row("reduce", "sum", 64, 2, 1e-6)]
    after = [_row("rows", "softmax", 16, 1, 2e-6 * 1.5), _row("rows", "softmax", 64, 1, 4e-6 / 1.5),
             _row("reduce", "sum", 16, 1, 1e-6), _row("matmul", "mm", 8, 1, 1e-6)]
    r, md = _run(tmp_path, before, after)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    rows_line = next(l for l in lines if l.startswith("| rows | 1 |"))
    # geomean of 1.5 and 1/1.5 is 1; one case slower and one faster by more than 10%
    assert rows_line.split("|")[4].strip() == "1.000"
    assert rows_line.split("|")[7].strip() == "1" and rows_line.split("|")[8].strip() == "1"
    worst = lines[lines.index("Slowest after/before (10):") + 4]
    assert "| rows | softmax | 16 | 1 |" in worst and worst.endswith("| 1.50 |")
    assert "2 case(s) in only one run" in r.stdout   # (reduce, 64, 2) and (matmul, 8, 1)
    assert md.read_text().strip() == r.stdout.strip()


def test_no_common_case_is_an_error(tmp_path):
    r, _ = _run(tmp_path, [_row("rows", "a", 1, 1, 1e-6)], [_row("rows", "b", 1, 1, 1e-6)])
    assert r.returncode == 1 and "no case is in both runs" in r.stderr


def test_several_runs_take_the_best_time(tmp_path):
    b1, b2, a1 = (tmp_path / n for n in ("b1.json", "b2.json", "a1.json"))
    b1.write_text(json.dumps({"header": "b", "rows": [_row("rows", "s", 16, 1, 4e-6)]}))
    b2.write_text(json.dumps({"header": "b", "rows": [_row("rows", "s", 16, 1, 2e-6)]}))
    a1.write_text(json.dumps({"header": "a", "rows": [_row("rows", "s", 16, 1, 3e-6)]}))
    r = subprocess.run([sys.executable, SCRIPT, f"{b1},{b2}", str(a1)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "| rows | 1 | 1 | 1.500 |" in r.stdout
