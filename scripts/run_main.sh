#!/usr/bin/env bash
# Builds everything and runs the main job: `hologram info`, the example programs (checked
# against numpy) and `hologram bench` (results in build/release/bench.json).
set -euo pipefail
cd "$(dirname "$0")/.."
HG_NEED_NUMPY=1 scripts/ensure_tools.sh
jobs=${HG_JOBS:-$(nproc)}
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$jobs"
cli=build/release/hologram

echo "== hologram info"
"$cli" info
echo
echo "== example programs (checked against numpy)"
python3 scripts/run_examples.py "$cli"
echo
echo "== hologram bench"
"$cli" bench --json build/release/bench.json
