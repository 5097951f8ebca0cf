#!/usr/bin/env bash
# Builds everything and runs the main job: `hologram info`, the example programs (checked
# against numpy), `hologram bench` (results in build/release/bench.json) and the Python
# package's benchmarks against numpy and torch (build/venv, made by scripts/python_env.sh),
# among them the size sweep up to 1M elements (build/release/sizes.{md,json}, plots in
# build/release/sizes/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure_tools.sh
# The Python environment first: the example check compares with numpy from it.
py=$(scripts/python_env.sh)
jobs=${HG_JOBS:-$(nproc)}
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$jobs"
cli=build/release/hologram

echo "== hologram info"
"$cli" info
echo
echo "== example programs (checked against numpy)"
"$py" scripts/run_examples.py "$cli"
echo
echo "== hologram bench"
"$cli" bench --json build/release/bench.json
echo
echo "== Python package: per-call overhead, 16M add / fused chain vs the C benchmark, zero-copy"
"$py" bench/python_overhead.py --cli "$cli" --rounds 3 --md build/release/python_overhead.md
echo
"$py" bench/python_zero_copy.py --repeats 3
echo
echo "== Size sweep: every op family, 1 .. 1M elements, threads 1 and 2, against numpy and torch"
"$py" bench/sizes.py --threads 1,2 --repeats 3 --max-size 1048576 --decimal --json build/release/sizes.json \
  --md build/release/sizes.md --plots build/release/sizes > /dev/null
tail -n 1 build/release/sizes.md
echo
echo "== A manylinux wheel (pip wheel + auditwheel), installed alone in a new venv and smoke-tested"
scripts/build_wheel.sh
