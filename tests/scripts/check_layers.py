#!/usr/bin/env python3
"""The layers of src/ (docs/architecture.md), checked on every #include "dir/...": the file
exists (a stale path after a move is caught here, before a build), and a file may
include its own layer or a lower one, never a higher one; a backend implementation
(src/backends/<name>/) is included by no file outside its own folder (the registry finds it
through the vtable it exports), and the op families include one another only as listed.

The same rules are checked on calls (and function pointers): a name used in one file and
defined in another (c_symbols.py reads both from the source text) obeys them as an include
would, so a family that reaches another through the public header (hologram.h declares every
family's entries) is seen too. ops/common is below the families: it uses none of them.

    python3 tests/scripts/check_layers.py SRC_DIR
"""
import fnmatch
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import c_symbols  # noqa: E402

LEVELS = {"base": 0, "isa": 1, "backends": 2, "runtime": 3, "tensor": 4, "ops": 5, "graph": 6,
          "composite": 7}
# Families an op family may use besides ops/common: softmax/norms reuse the row reductions;
# random walks host views with data's helpers and builds its device kernel on data's
# lane-per-element frame (data/dev_lane.h); cross-entropy with class indices is a row op on
# devices (log-softmax and the pick in one read of the row: rows/dev_rows_reg.h).
# Elementwise integer powers read the exponent's minimum (hg_reduce) to refuse negative ones
# as numpy does. Attention's fused kernel turns each block of scores into probabilities with
# softmax's row kernels (rows/softmax_f32.h).
FAMILY_USES = {("rows", "reduce"), ("random", "data"), ("loss", "rows"),
               ("elementwise", "reduce"), ("attention", "rows")}
# The order of the files inside a folder, bottom up (a file uses only the groups before its
# own; inside a group, its files use one another): the CPU backend's execution files, whose
# call circle was broken (issue 33; cpu_internal.h says what each does).
FILE_ORDER = {
    "backends/cpu": [
        ("thread_pool.*", "cpu_threading.*"),   # the pool hands jobs to OpenMP, which runs its parts
        ("cpu_features.*",), ("cpu_kernels.h",), ("simd/*",),
        ("cpu_kernels.c",), ("gemm/*",), ("cpu_stream.c",), ("cpu_memory.c",),
        ("cpu_internal.h", "cpu_lanes.c"),   # the shared types, and the helpers under them all
        ("cpu_memory_ops.c",), ("cpu_strip.c",), ("cpu_direct.c",), ("cpu_compile.c",),
        ("cpu_exec.c",), ("cpu_rows.c",), ("cpu_backend.c",),
    ],
}
# Uses that cross the rules today, each to go: {(file, name used)}; remove an entry when its use
# is gone (an entry that no longer matches is reported). Empty since issue 33 moved the composed
# ops into src/composite; a crossing that must land before its fix is listed here with the why.
MOVING = set()
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)


def layer_of(rel):
    parts = rel.split("/")
    return parts[0], parts[1] if len(parts) > 2 else None


def main(src):
    bad = []
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            top, sub = layer_of(rel)
            if top not in LEVELS:
                bad.append(f"{rel}: folder src/{top} is in no layer (add it to LEVELS)")
                continue
            text = open(path, encoding="utf-8").read()
            for m in INCLUDE.finditer(text):
                itop, rest = m.group(1), m.group(2)
                isub = rest.split("/")[0] if "/" in rest else None
                inc = f"{itop}/{rest}"
                public = os.path.join(src, os.pardir, "include", inc)
                if not any(os.path.isfile(p) for p in (os.path.join(src, inc),
                                                       os.path.join(root, inc), public)):
                    bad.append(f"{rel} includes {inc}: no such file in src/ or include/")
                    continue
                if itop not in LEVELS:
                    continue
                if LEVELS[itop] > LEVELS[top]:
                    bad.append(f"{rel} includes {inc}: layer {itop} is above {top}")
                elif itop == "backends" and isub and not (top == "backends" and sub == isub):
                    bad.append(f"{rel} includes {inc}: a backend's own files are private to it")
                elif (top == itop == "ops" and sub != isub and isub != "common"
                      and (sub, isub) not in FAMILY_USES):
                    bad.append(f"{rel} includes {inc}: family {sub} does not use family {isub}")
    bad += check_calls(src)
    for b in bad:
        print(b)
    print(f"check_layers: {len(bad)} violation(s)")
    return 1 if bad else 0


def crossing(top, sub, otop, osub, public):
    """Why a file in (top, sub) may not use a name defined in (otop, osub), or None."""
    if LEVELS[otop] > LEVELS[top]:
        return f"layer {otop} is above {top}"
    if otop == "backends" and osub and not (top == "backends" and sub == osub):
        return "a backend's own files are private to it"
    if top == otop == "ops" and sub != osub and osub != "common":
        if sub == "common":
            return f"ops/common is below the families (defined in family {osub})"
        if (sub, osub) in FAMILY_USES:
            return None
        kind = "public entry" if public else "internal function"
        return f"family {sub} does not use family {osub} (a {kind} of it)"
    return None


def file_rank(rel):
    """(folder, rank of rel's group in FILE_ORDER[folder]), or None when not ordered."""
    for folder, groups in FILE_ORDER.items():
        if rel.startswith(folder + "/"):
            name = rel[len(folder) + 1:]
            for i, group in enumerate(groups):
                if any(fnmatch.fnmatch(name, g) for g in group):
                    return folder, i
            return folder, -1
    return None


def out_of_order(rel, orel):
    """Why rel may not use a name orel defines under FILE_ORDER, or None."""
    a, b = file_rank(rel), file_rank(orel)
    if not a or not b or a[0] != b[0]:
        return None
    if a[1] < 0 or b[1] < 0:
        return f"{rel if a[1] < 0 else orel} is not in FILE_ORDER[{a[0]!r}] (add it)"
    if b[1] > a[1]:
        return f"{orel} is above it in FILE_ORDER[{a[0]!r}]"
    return None


def check_calls(src, moving=None):
    """The layer rules on every name a file uses that another file defines (moving: the
    allowed crossings, MOVING by default)."""
    moving = MOVING if moving is None else moving
    files = c_symbols.scan_tree(src)
    owner = {}
    for rel, fs in files.items():
        for name in fs.defines:
            if name.startswith(("hg_", "HG_")):   # the library's external names (a local
                owner.setdefault(name, set()).add(rel)   # variable may share a plain one)
    include = os.path.join(src, os.pardir, "include", "hologram")
    public = set()
    for h in sorted(os.listdir(include)) if os.path.isdir(include) else []:
        public |= c_symbols.declared_names(os.path.join(include, h))
    bad, seen = [], set()
    for rel, fs in sorted(files.items()):
        top, sub = layer_of(rel)
        if top not in LEVELS:
            continue
        for name in sorted(fs.uses - fs.local - fs.defines):
            where = {layer_of(o) for o in owner.get(name, ())}
            if len(where) != 1:
                continue   # not ours, or defined in several layers (per-backend copies)
            orel = sorted(owner[name])[0]
            otop, osub = layer_of(orel)
            if otop not in LEVELS:
                continue
            # the registry names each backend through the vtable it exports
            if rel == "backends/registry.c" and otop == "backends" and name == f"hg_{osub}_backend":
                continue
            why = crossing(top, sub, otop, osub, name in public)
            if not why and len(owner[name]) == 1:
                why = out_of_order(rel, orel)
            if why and (rel, name) in moving:
                seen.add((rel, name))
            elif why:
                bad.append(f"{rel} uses {name} ({orel}): {why}")
    for rel, name in sorted(moving - seen):
        bad.append(f"MOVING lists {rel} using {name}, which it no longer does: remove the entry")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
