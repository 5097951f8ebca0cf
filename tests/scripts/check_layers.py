#!/usr/bin/env python3
"""The layers of src/ (docs/architecture.md), checked on every #include "dir/...": the file
exists (a stale path after a move is caught here, before a build), and a file may
include its own layer or a lower one, never a higher one; a backend implementation
(src/backends/<name>/) is included by no file outside its own folder (the registry finds it
through the vtable it exports), and the op families include one another only as listed.

    python3 tests/scripts/check_layers.py SRC_DIR
"""
import os
import re
import sys

LEVELS = {"base": 0, "isa": 1, "backends": 2, "runtime": 3, "tensor": 4, "ops": 5, "graph": 6,
          "composite": 7}
# Families an op family may use besides ops/common: softmax/norms reuse the row reductions;
# random walks host views with data's helpers and builds its device kernel on data's
# lane-per-element frame (data/dev_lane.h); cross-entropy with class indices is a row op on
# devices (log-softmax and the pick in one read of the row: rows/dev_rows_reg.h).
FAMILY_USES = {("rows", "reduce"), ("random", "data"), ("loss", "rows")}
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
    for b in bad:
        print(b)
    print(f"check_layers: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
