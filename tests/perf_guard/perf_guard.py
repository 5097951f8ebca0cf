#!/usr/bin/env python3
"""The instruction-count guard (docs/testing.md "Instruction-count guard").

    perf_guard.py c DRIVER [--update] [--filter S] [--verbose]    the C cases (perf_guard.c)
    perf_guard.py python [--python PY] [--update] [--verbose]     the Python cases (python_case.py)
    perf_guard.py skip MESSAGE                                     print MESSAGE, exit 77

Runs the cases under `valgrind --tool=callgrind --instr-atstart=no` (one dump per case: the
instructions of exactly the measured call), then compares each count with counts.json beside
this file: a case that grew by more than the tolerance fails, one that shrank by more is
reported with the hint to update, a case missing on either side fails. --update rewrites the
section's counts (and its toolchain) with the measured ones instead of comparing.

Counts belong to one toolchain (compiler, build type, build features, the kernel set valgrind
lets the library pick, the thread count, the CPU vendor; for Python also the Python and numpy
versions); on another one the guard skips with a message instead of failing on noise. Exit
status: 0 pass, 1 failure, 77 skipped (ctest's SKIP_RETURN_CODE), 2 usage error.
"""
import argparse
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
COUNTS_FILE = os.path.join(HERE, "counts.json")
SKIP = 77

# Environment variables that change what the library runs (threads, fusion, tracing, levels):
# none reach the measured program, so the counts do not depend on the caller's shell.
SCRUBBED_PREFIXES = ("HOLOGRAM_", "OMP_")


class Skip(Exception):
    """The guard cannot run here (no valgrind, another toolchain); the message says why."""


def compare(stored, measured, relative, absolute):
    """Classifies each case: 'ok', 'slower' (grew beyond the tolerance), 'faster' (shrank beyond
    it), 'new' (measured, not stored) or 'missing' (stored, not measured). The tolerance of a
    case stored at n instructions is max(relative * n, absolute). Returns a list of
    (name, kind, stored or None, measured or None) in name order."""
    rows = []
    for name in sorted(set(stored) | set(measured)):
        s, m = stored.get(name), measured.get(name)
        if s is None:
            kind = "new"
        elif m is None:
            kind = "missing"
        else:
            allowed = max(relative * s, absolute)
            kind = "slower" if m > s + allowed else "faster" if m < s - allowed else "ok"
        rows.append((name, kind, s, m))
    return rows


FAILING = ("slower", "new", "missing")


def report(rows, verbose):
    """The lines to print for compare()'s rows, and whether any case failed."""
    lines = []
    for name, kind, s, m in rows:
        if kind == "ok" and not verbose:
            continue
        change = f"{(m - s) / s:+.2%}" if s and m is not None else ""
        hint = {"slower": "FAIL: more instructions than stored",
                "faster": "cheaper: run with --update to store the new count",
                "new": "FAIL: not in counts.json (run with --update)",
                "missing": "FAIL: stored but not measured (a removed case: run with --update)",
                "ok": ""}[kind]
        lines.append(f"  {name:40s} {s if s is not None else '-':>10} -> "
                     f"{m if m is not None else '-':>10} {change:>8}  {hint}")
    failed = any(kind in FAILING for _, kind, _, _ in rows)
    return lines, failed


def parse_dump(text):
    """(case name, instruction count) of one callgrind dump written at a client request, or
    None for other dumps (the one at program exit)."""
    name = re.search(r"^desc: Trigger: Client Request: (.+)$", text, re.M)
    total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    if not name or not total:
        return None
    return name.group(1).strip(), int(total.group(1))


def cpu_vendor():
    """The CPU's vendor (x86 vendor_id): glibc picks its string and math functions by CPU
    model, so counts of another vendor may differ by a few instructions."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine() or "unknown"


def parse_toolchain(stdout):
    """The program's `toolchain:` line, with the CPU vendor appended."""
    line = next((l for l in stdout.splitlines() if l.startswith("toolchain: ")), None)
    if line is None:
        raise RuntimeError(f"no 'toolchain:' line in the program's output:\n{stdout}")
    return f"{line[len('toolchain: '):].strip()}; cpu_vendor={cpu_vendor()}"


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
    env.update(extra or {})
    return env


def valgrind_version():
    exe = shutil.which("valgrind")
    if exe is None:
        raise Skip("valgrind not found on PATH (install it: scripts/ensure_tools.sh does on Debian)")
    return subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()


def run_callgrind(argv, env):
    """Runs argv under callgrind; returns (stdout, {case: instructions})."""
    with tempfile.TemporaryDirectory(prefix="hg_perf_guard_") as tmp:
        out = os.path.join(tmp, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               f"--callgrind-out-file={out}", *argv]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {p.returncode}:\n{p.stdout}\n{p.stderr}")
        counts = {}
        for path in sorted(glob.glob(out + ".*")):
            with open(path, encoding="utf-8", errors="replace") as f:
                case = parse_dump(f.read())
            if case is not None:
                if case[0] in counts:
                    raise RuntimeError(f"case {case[0]} measured twice")
                counts[case[0]] = case[1]
        if not counts:
            raise RuntimeError(f"no measured case in the dumps of {' '.join(cmd)}:\n{p.stderr}")
        return p.stdout, counts


def load_counts(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def save_counts(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


def same_build(stored_toolchain, toolchain, fields):
    """Whether two toolchain lines agree on the given fields ("compiler=gcc 12.2.0; ...")."""
    def pick(line):
        parts = dict(p.strip().split("=", 1) for p in line.split(";") if "=" in p)
        return {k: parts.get(k) for k in fields}
    return pick(stored_toolchain) == pick(toolchain)


# The fields a native run can tell before valgrind starts (a sanitizer build differs here and
# would not run under valgrind at all).
BUILD_FIELDS = ("compiler", "build_type", "features", "cpu_vendor")


def guard(section, toolchain_native, argv, env, update, path, filt, verbose):
    """Measures and compares (or updates) one section of counts.json; returns the exit status."""
    vg = valgrind_version()
    data = load_counts(path)
    sec = data.get(section, {})
    if not sec.get("counts") and not update:
        raise RuntimeError(f"{path} holds no {section} counts: store them with "
                           + update_hint(section))
    stored_tc = sec.get("toolchain", "")
    if not update and not same_build(stored_tc, toolchain_native, BUILD_FIELDS):
        raise Skip(f"counts.json's {section} counts are for [{stored_tc}], this build is "
                   f"[{toolchain_native}]: skipped (the counts hold for one toolchain; "
                   f"docs/testing.md says how to store them for another)")
    stdout, measured = run_callgrind(argv, env)
    toolchain = parse_toolchain(stdout)
    if update:
        if filt and toolchain != stored_tc:
            raise RuntimeError(f"--filter updates only part of the counts, which are for "
                               f"[{stored_tc}], not this run's [{toolchain}]: update them all")
        counts = dict(sec.get("counts", {})) if filt else {}
        counts.update(measured)
        data[section] = {"toolchain": toolchain, "valgrind": vg, "counts": counts}
        save_counts(path, data)
        print(f"perf_guard: {len(measured)} {section} counts written to {path} [{toolchain}]")
        return 0
    if toolchain != stored_tc:
        raise Skip(f"counts.json's {section} counts are for [{stored_tc}], this run is "
                   f"[{toolchain}]: skipped")
    stored = sec.get("counts", {})
    if filt:
        stored = {k: v for k, v in stored.items() if filt in k}
    tol = data["tolerance"]
    rows = compare(stored, measured, tol["relative"], tol["absolute"])
    lines, failed = report(rows, verbose)
    print(f"perf_guard {section}: {len(measured)} cases [{toolchain}; {vg}], tolerance "
          f"max({tol['relative']:.0%}, {tol['absolute']} instructions)")
    print("\n".join(lines) if lines else "  every case within the tolerance")
    if failed:
        print("perf_guard: FAILED. A slower case is a regression to fix; after an intended "
              "change, store the new counts: " + update_hint(section))
    return 1 if failed else 0


def update_hint(section):
    if section == "c":
        return "python3 tests/perf_guard/perf_guard.py c build/release/tests/perf_guard --update"
    return "python3 tests/perf_guard/perf_guard.py python --python build/venv/bin/python --update"


def native_toolchain(argv, env):
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return parse_toolchain(p.stdout)


def main_c(args):
    env = clean_env()
    driver = os.path.abspath(args.driver)
    tc = native_toolchain([driver, "--toolchain"], env)
    argv = [driver] + ([args.filter] if args.filter else [])
    try:
        return guard("c", tc, argv, env, args.update, args.counts, args.filter, args.verbose)
    except Skip as e:
        # Not measured here, but every call still runs once natively (under the sanitizers in
        # their builds): a call that fails fails the test.
        p = subprocess.run(argv, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited with {p.returncode}:\n{p.stdout}\n"
                               f"{p.stderr}") from e
        raise Skip(f"{e} (the cases ran without valgrind: every call succeeded)") from e


def build_shim(tmp):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise Skip("no C compiler to build the callgrind shim")
    so = os.path.join(tmp, "hg_guard_shim.so")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", os.path.join(HERE, "callgrind_shim.c"),
                    "-o", so], check=True)
    return so


def main_python(args):
    py = args.python
    env = clean_env({"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    with tempfile.TemporaryDirectory(prefix="hg_perf_guard_shim_") as tmp:
        valgrind_version()
        shim = build_shim(tmp)
        script = os.path.join(HERE, "python_case.py")
        # The build facts without valgrind: python_case.py prints them before any case runs.
        probe = subprocess.run(
            [py, "-c", "import hologram as hg; i = hg.build_info(); "
             "print(f\"toolchain: compiler={i['compiler']}; build_type={i['build_type']}; "
             "features={i['features']}\")"], capture_output=True, text=True, env=env)
        if probe.returncode != 0:
            raise RuntimeError(f"{py} cannot import hologram:\n{probe.stderr}")
        tc = parse_toolchain(probe.stdout)
        return guard("python", tc, [py, script, shim], env, args.update, args.counts, None,
                     args.verbose)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="section", required=True)
    for name in ("c", "python"):
        p = sub.add_parser(name)
        if name == "c":
            p.add_argument("driver", help="the perf_guard program (build/release/tests/perf_guard)")
            p.add_argument("--filter", help="only the cases whose name contains this")
        else:
            p.add_argument("--python", default=sys.executable,
                           help="the Python that imports hologram (default: this one)")
        p.add_argument("--update", action="store_true", help="store the measured counts")
        p.add_argument("--counts", default=COUNTS_FILE, help=argparse.SUPPRESS)
        p.add_argument("--verbose", action="store_true", help="print every case")
    sk = sub.add_parser("skip")
    sk.add_argument("message")
    args = ap.parse_args(argv)
    if args.section == "skip":
        print(f"perf_guard: skipped: {args.message}")
        return SKIP
    try:
        return main_c(args) if args.section == "c" else main_python(args)
    except Skip as e:
        print(f"perf_guard: skipped: {e}")
        return SKIP
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"perf_guard: error: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
