#!/usr/bin/env python3
"""check_layers.py's call rules on a small tree made here: each violation it must report, and
the uses it must let pass (so the check on src/ is known to be able to fail).

    python3 tests/scripts/check_layers_selftest.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402

TREE = {
    "base/conf.c": 'int hg_conf(void) { return hg_exec_find("cpu"); }\n',
    "runtime/exec.c": '// hg_conf() in a comment is no use\n'
                      'int hg_exec_find(const char* s) { return s[0] + hg_conf(); }\n',
    "ops/common/temps.c": 'int hg_temp(void) { return hg_cast_it(1); }\n',
    "ops/elementwise/ew.c": 'int hg_cast_it(int x) { return x; }\n'
                            'static int local(void) { return 1; }\n',
    "ops/reduce/red.c": 'int hg_sum(int x) { return x + hg_conf(); }\n',
    "ops/rows/soft.c": 'int hg_soft(int x) { return hg_sum(x) + hg_cast_it(x); }\n'
                       'int local(void) { return 2; }\n'
                       'const char* s = "hg_cast_it(3)";\n',
    "ops/rows/soft_in.c": 'int hg_soft_in(int x) { struct { int (*f)(int); } v = {hg_sum};\n'
                          '    return v.f(x); }\n',
    "backends/cpu/cpu.c": 'int hg_cpu_backend = 1; int hg_cpu_run(void) { return 0; }\n',
    "backends/registry.c": 'int hg_reg(void) { return hg_cpu_backend + hg_cpu_run(); }\n',
    "backends/cpu/cpu_lanes.c": 'int hg_cpu_l(void) { return hg_cpu_x(); }\n',
    "backends/cpu/cpu_exec.c": 'int hg_cpu_x(void) { return 0; }\n'
                               'int hg_cpu_y(void) { return hg_cpu_l(); }\n',
}
PUBLIC = "int hg_cast_it(int x);\nint hg_sum(int x);\n"
EXPECT = {
    "base/conf.c uses hg_exec_find",           # a lower layer calling a higher one
    "ops/common/temps.c uses hg_cast_it",      # common is below the families
    "ops/rows/soft.c uses hg_cast_it",         # a family's public entry, not in FAMILY_USES
    "backends/registry.c uses hg_cpu_run",     # a backend's files are private (not its vtable)
    "backends/cpu/cpu_lanes.c uses hg_cpu_x",  # a file above it in FILE_ORDER
}


def main():
    with tempfile.TemporaryDirectory() as root:
        src = os.path.join(root, "src")
        for rel, text in TREE.items():
            os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
            with open(os.path.join(src, rel), "w") as f:
                f.write(text)
        os.makedirs(os.path.join(root, "include", "hologram"))
        with open(os.path.join(root, "include", "hologram", "ops.h"), "w") as f:
            f.write(PUBLIC)
        got = {" ".join(b.split()[:3]) for b in check_layers.check_calls(src, moving=set())}
        stale = check_layers.check_calls(src, moving={("ops/rows/soft.c", "hg_nothing")})
    bad = sorted(got ^ EXPECT)
    for b in bad:
        print(("unexpected: " if b in got else "missed: ") + b)
    if not any("no longer does" in b for b in stale):
        bad.append("a stale MOVING entry was not reported")
        print(bad[-1])
    print(f"check_layers_selftest: {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
