#!/usr/bin/env python3
"""Hologram's own times in two runs of bench/sizes.py, case by case: before and after a change.

    python3 bench/sizes_compare.py BEFORE.json[,MORE.json] AFTER.json[,MORE.json] [--md out.md]
                                   [--worst 10]

Rows are matched by (family, case, elements, threads); with several runs of one side (comma-
separated, best run alternately before and after), each case takes its best time over them. For each family and thread count it
prints the geometric mean of after/before (< 1: faster after), the best and the worst case,
and how many cases moved by more than 10% either way; then the worst cases overall. Timings
on a shared VM move by 10-50% between runs (docs/performance.md), so a single case beyond 10%
is a reason to rerun it, not a verdict; the instruction-count guard (tests/perf_guard) is the
exact check.
"""
import argparse
import json
import math
import sys


def load(paths):
    header, rows = None, {}
    for path in paths.split(","):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        header = header or d.get("header", path)
        for r in d["rows"]:
            key = (r["family"], r["case"], r["elements"], r["threads"])
            rows[key] = min(rows.get(key, math.inf), r["hologram_s"])
    return header, rows


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--md", help="also write the table here")
    p.add_argument("--worst", type=int, default=10, help="cases listed at the end")
    a = p.parse_args(argv)
    hb, before = load(a.before)
    ha, after = load(a.after)
    common = sorted(set(before) & set(after))
    if not common:
        print("no case is in both runs", file=sys.stderr)
        return 1
    groups = {}
    for k in common:
        groups.setdefault((k[0], k[3]), []).append((after[k] / before[k], k))
    out = [f"before: {hb}  ", f"after: {ha}", "",
           "| family | threads | cases | geomean after/before | best | worst | >10% slower | >10% faster |",
           "|---|---|---|---|---|---|---|---|"]
    for (fam, thr), v in sorted(groups.items()):
        rs = [r for r, _ in v]
        gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
        out.append(f"| {fam} | {thr} | {len(rs)} | {gm:.3f} | {min(rs):.2f} | {max(rs):.2f} | "
                   f"{sum(r > 1.10 for r in rs)} | {sum(r < 1 / 1.10 for r in rs)} |")
    allr = sorted(((after[k] / before[k], k) for k in common), reverse=True)
    out += ["", f"Slowest after/before ({a.worst}):", "",
            "| family | case | elements | threads | before us | after us | after/before |",
            "|---|---|---|---|---|---|---|"]
    for r, k in allr[:a.worst]:
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {before[k] * 1e6:.3f} | "
                   f"{after[k] * 1e6:.3f} | {r:.2f} |")
    missing = len(set(before) ^ set(after))
    if missing:
        out.append(f"\n{missing} case(s) in only one run (not compared)")
    text = "\n".join(out)
    print(text)
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
