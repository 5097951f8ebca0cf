#!/usr/bin/env bash
# Builds everything and runs all tests: the optimized build, then the same suite under
# AddressSanitizer + UBSan with halt on error, then the multi-threaded tests under
# ThreadSanitizer, then the Python package (pip install . into build/venv) and its pytest suite.
# Exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure_tools.sh
jobs=${HG_JOBS:-$(nproc)}

echo "== release build + tests" >&2
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$jobs"
ctest --test-dir build/release --output-on-failure -j"$jobs"

echo "== AddressSanitizer + UBSan build + tests" >&2
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHG_SANITIZE=ON >/dev/null
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs"

echo "== ThreadSanitizer build + the multi-threaded tests" >&2
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHG_TSAN=ON >/dev/null
cmake --build build/tsan -j"$jobs"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan --output-on-failure -R 'test_threads|test_handles_lockfree|test_cpu_backend|test_cpu_fastpaths|test_instructions_atomics|test_graph$|test_ops_reduce_large|test_ops_data'

echo "== Python package (pip install . into build/venv) + pytest" >&2
py=$(scripts/python_env.sh)
"$py" -m pytest -q -p no:cacheprovider tests/python
