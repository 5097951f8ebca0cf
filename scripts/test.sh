#!/usr/bin/env bash
# Builds everything and runs all tests: the Python environment first (build/venv: the package
# via pip install ., and NVIDIA's NVRTC wheel for the CUDA code generator's checks), then the
# optimized build and its C suite (including the CUDA backend on its host emulation), the same
# suite under AddressSanitizer + UBSan with halt on error, the multi-threaded tests under
# ThreadSanitizer, the library and C tests built by clang, and the Python tests (on CPU
# executors, then against a CUDA executor on the host emulation). The instruction-count guard
# (docs/testing.md) runs as the release build's ctest `perf_guard` and, for its Python cases,
# in the Python tests; it skips in the other builds. Exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure_tools.sh
jobs=${HG_JOBS:-$(nproc)}

echo "== Python environment (build/venv)" >&2
py=$(scripts/python_env.sh)
# NVRTC from the wheel (when installed): the CUDA checks compile generated kernels with it.
nvrtc=$("$py" - <<'PY'
import glob, os
try:
    import nvidia.cuda_nvrtc as m
    libs = sorted(glob.glob(os.path.join(list(m.__path__)[0], "lib", "libnvrtc.so.*")))
    print(next((l for l in libs if "builtins" not in l and ".alt." not in l), ""))
except Exception:
    print("")
PY
)
if [ -n "$nvrtc" ]; then
  export HOLOGRAM_NVRTC="$nvrtc" HOLOGRAM_CUDA_EMULATE_NVRTC=90
  echo "   NVRTC for the CUDA checks: $nvrtc" >&2
fi

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
# die_after_fork=0: test_fork's children start thread pools anew after a multi-threaded fork.
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
  ctest --test-dir build/tsan --output-on-failure -R 'test_threads|test_fork|test_handles_lockfree|test_cpu_backend|test_cpu_fastpaths|test_cpu_direct|test_cpu_memory|test_instructions_atomics|test_graph$|test_ops_reduce_large|test_ops_data|test_ops_grad$|test_optim$|test_ops_elementwise_rows|test_ops_elementwise_packed$|test_ops_elementwise_layout$|test_ops_dropout$|test_attention$'

# The same library and C tests built by clang (macOS's compiler and libFuzzer's): warning-free
# under -Werror, the same results; the CUDA emulation's tests are left to the gcc builds (their
# kernels are compiled by the host C++ compiler either way).
clang_cc=$(command -v clang || command -v clang-14)
echo "== clang build ($("$clang_cc" --version | head -1)) + tests" >&2
CC="$clang_cc" cmake -S . -B build/clang -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/clang -j"$jobs"
ctest --test-dir build/clang --output-on-failure -j"$jobs" -LE cuda_emu

echo "== Python tests" >&2
"$py" -m pytest -q -p no:cacheprovider tests/python

# The same suite against a CUDA executor on the host emulation (tests/python/conftest.py): the
# package's device paths, as scripts/gpu_check.sh runs them on a GPU.
if command -v "${HOLOGRAM_CUDA_EMULATE_CXX:-${CXX:-c++}}" >/dev/null 2>&1; then
  echo "== Python tests against a CUDA executor (host emulation)" >&2
  HOLOGRAM_CUDA_EMULATE=1 HG_TEST_BACKEND=cuda HOLOGRAM_CACHE_DIR=build/python-cuda-emu-cache \
    "$py" -m pytest -q -p no:cacheprovider tests/python
else
  echo "== Python tests against a CUDA executor: skipped (no host C++ compiler for the emulation)" >&2
fi
