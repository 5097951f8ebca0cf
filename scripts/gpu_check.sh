#!/usr/bin/env bash
# The whole GPU check in one command (docs/cuda.md, "The GPU check"):
#
#   scripts/gpu_check.sh OUTDIR [--emulate] [--steps env,build,c,python,sanitize,bench] [--pack]
#
# Steps, each logged to OUTDIR/logs/<step>.log; a failing step never stops the ones after it:
#   env       the GPU (nvidia-smi), nvcc, compute-sanitizer, python/torch, the NVRTC and cuBLAS
#             libraries found (exported as HOLOGRAM_NVRTC / HOLOGRAM_CUBLAS)
#   build     release build with all cores, the CUDA tests registered for the device
#             (-DHG_CUDA_TESTS=device: *_cuda tests), then `hologram info`
#   c         the whole C suite (ctest), the CUDA tests on the GPU
#   python    the package installed into the build folder (pip --target, no build isolation),
#             then the Python suite twice: as CI runs it (where Executor('auto') picks the GPU)
#             and against a CUDA executor (HG_TEST_BACKEND=cuda, tests/python/conftest.py),
#             then hologram_torch on torch CUDA tensors (the tests marked torch_cuda, left out
#             of the two runs before); its parts are also steps of their own: python-install,
#             python-cpu, python-cuda, python-torch
#   sanitize  compute-sanitizer memcheck on the device tests (device ops, examples, instructions,
#             row kernels, parity) and racecheck on the block-cooperative kernels (reductions,
#             softmax, norms, losses and their gradients, the row kernels at every shape)
#   bench     bench/cuda_bench.py: OUTDIR/cuda_bench.json and OUTDIR/cuda_bench.md
# then OUTDIR/summary.md and OUTDIR/summary.json (step, status, seconds, failing lines). Exit
# status 0 only when every step passed.
#
# --emulate runs the same steps on the CUDA backend's host emulation (HOLOGRAM_CUDA_EMULATE=1):
# the dry run where no GPU is lent (sanitize then runs its commands without the sanitizer, and
# the benchmark with tiny sizes; the numbers mean nothing). --pack replaces OUTDIR/logs by
# OUTDIR/logs.tar.gz (the device tool returns at most 8 files). HG_JOBS sets the parallelism,
# HG_PYTHON the interpreter (default: build/venv/bin/python if present, else python3),
# HG_GPU_BUILD the build folder (default build/gpu, or build/gpu-emu with --emulate).
# HG_CTEST_ARGS, HG_PYTEST_ARGS and HG_BENCH_ARGS add arguments to ctest, pytest and
# bench/cuda_bench.py (a short lease: ctest "-R _cuda" runs only the CUDA tests; pytest "-n 8"
# where pytest-xdist is installed; the bench "--quick").
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
out="" emulate=0 pack=0 steps="env,build,c,python,sanitize,bench"
while [ $# -gt 0 ]; do
  case "$1" in
    --emulate) emulate=1 ;;
    --pack) pack=1 ;;
    --steps) steps=${2:-}; shift ;;
    --steps=*) steps=${1#--steps=} ;;
    -h|--help) usage 0 ;;
    -*) echo "gpu_check.sh: unknown option '$1'" >&2; usage 2 ;;
    *) [ -z "$out" ] || { echo "gpu_check.sh: one OUTDIR, got '$out' and '$1'" >&2; exit 2; }
       out=$1 ;;
  esac
  shift
done
[ -n "$out" ] || { echo "gpu_check.sh: OUTDIR missing" >&2; usage 2; }
for s in ${steps//,/ }; do
  case "$s" in env|build|c|python|python-install|python-cpu|python-cuda|python-torch|sanitize|bench) ;;
    *) echo "gpu_check.sh: unknown step '$s' (env, build, c, python[-install|-cpu|-cuda|-torch]," \
            "sanitize, bench)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out/logs" || exit 2
out=$(cd "$out" && pwd)
logs=$out/logs
jobs=${HG_JOBS:-$(nproc)}
build=${HG_GPU_BUILD:-build/gpu$([ $emulate = 1 ] && echo -emu)}
case "$build" in /*) ;; *) build=$root/$build ;; esac
scratch=$build/check
mkdir -p "$scratch"
if [ -n "${HG_PYTHON:-}" ]; then py=$HG_PYTHON
elif [ -x build/venv/bin/python ]; then py=$root/build/venv/bin/python
else py=$(command -v python3); fi
export PYTHONUNBUFFERED=1 HOLOGRAM_CACHE_DIR=$scratch/kernel-cache
if [ $emulate = 1 ]; then
  export HOLOGRAM_CUDA_EMULATE=1 HG_TEST_IMM_PICKS=1
fi

results=()   # "step<TAB>status<TAB>seconds<TAB>what"
want() { [[ ",$steps," == *",$1,"* ]]; }
# run_step NAME WHAT CMD...: runs CMD with its output in logs/NAME.log; records pass/fail.
run_step() {
  local name=$1 what=$2; shift 2
  local t0=$SECONDS rc
  echo "== $name: $what" >&2
  { echo "\$ $*"; "$@"; } >"$logs/$name.log" 2>&1
  rc=$?
  local st=pass
  [ $rc = 0 ] || st="fail (exit $rc)"
  results+=("$name"$'\t'"$st"$'\t'"$((SECONDS - t0))"$'\t'"$what")
  echo "   $st in $((SECONDS - t0)) s" >&2
  return 0
}
skip_step() { results+=("$1"$'\t'"skipped: $3"$'\t'"0"$'\t'"$2"); echo "== $1: skipped ($3)" >&2; }

# The first library file of a name that exists: ldconfig's cache, CUDA's folders, the NVIDIA
# wheels of the interpreter.
find_lib() {
  local base=$1 f
  f=$(ldconfig -p 2>/dev/null | awk -v b="$base" '$1 ~ "^"b"\\.so" {print $NF; exit}')
  [ -n "$f" ] && { echo "$f"; return; }
  for f in "${CUDA_HOME:-/usr/local/cuda}"/lib64/"$base".so* /usr/local/cuda/lib64/"$base".so* \
           $("$py" -c 'import site,sys; print(" ".join(site.getsitepackages()))' 2>/dev/null |
             tr ' ' '\n' | sed "s|\$|/nvidia/*/lib/$base.so*|"); do
    for g in $f; do
      case "$g" in *builtins*|*.alt.*) continue ;; esac
      [ -e "$g" ] && { echo "$g"; return; }
    done
  done
}

env_report() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  cores: $(nproc)  emulate: $emulate"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv || true
  else echo "nvidia-smi: not found"; fi
  command -v nvcc >/dev/null && nvcc --version | tail -2 || echo "nvcc: not found"
  command -v compute-sanitizer >/dev/null && compute-sanitizer --version | head -2 ||
    echo "compute-sanitizer: not found"
  echo "python: $py ($("$py" --version 2>&1))"
  "$py" -c 'import numpy; print("numpy", numpy.__version__)' 2>&1
  "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
             "available", torch.cuda.is_available())' 2>&1 | tail -1
  echo "HOLOGRAM_NVRTC=${HOLOGRAM_NVRTC:-}"
  echo "HOLOGRAM_CUBLAS=${HOLOGRAM_CUBLAS:-}"
  echo "cmake: $(cmake --version | head -1)  ninja: $(command -v ninja || echo none)"
}

# NVRTC and cuBLAS by explicit path where the loader's default names would not find them.
[ -n "${HOLOGRAM_NVRTC:-}" ] || { f=$(find_lib libnvrtc); [ -n "$f" ] && export HOLOGRAM_NVRTC=$f; }
[ -n "${HOLOGRAM_CUBLAS:-}" ] || { f=$(find_lib libcublas); [ -n "$f" ] && export HOLOGRAM_CUBLAS=$f; }
[ $emulate = 1 ] && [ -n "${HOLOGRAM_NVRTC:-}" ] && export HOLOGRAM_CUDA_EMULATE_NVRTC=90

want env && run_step env "machine, GPU, toolchain, libraries" env_report

if want build; then
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  build_all() {
    cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DHG_CUDA_TESTS=device &&
      cmake --build "$build" -j"$jobs" && "$build/hologram" info
  }
  run_step build "release build (-j$jobs), hologram info" build_all
fi

if want c; then
  if [ -x "$build/hologram" ]; then
    run_step c "C suite (ctest -j$jobs), CUDA tests on the $([ $emulate = 1 ] && echo emulation || echo GPU)" \
      ctest --test-dir "$build" --output-on-failure -j"$jobs" ${HG_CTEST_ARGS:-}
  else skip_step c "C suite" "no build in $build (run the build step)"; fi
fi

want python && steps="$steps,python-install,python-cpu,python-cuda,python-torch"
site=$scratch/site
if want python-install; then
  install_pkg() {
    # The device machine has no network: build with the interpreter's own scikit-build-core;
    # elsewhere pip may fetch it for an isolated build.
    rm -rf "$site" && { "$py" -m pip install -q --no-deps --no-build-isolation --target "$site" . ||
      "$py" -m pip install -q --no-deps --target "$site" .; }
  }
  run_step python-install "pip install --target (no build isolation: no network there)" install_pkg
fi
for mode in cpu cuda; do
  want python-$mode || continue
  if [ $mode = cpu ]; then what="Python suite as CI runs it (Executor('auto') may pick the GPU)"
  else what="Python suite against a CUDA executor (HG_TEST_BACKEND=cuda)"; fi
  if [ -d "$site/hologram" ]; then
    run_step python-$mode "$what" env PYTHONPATH="$site" $([ $mode = cuda ] && echo HG_TEST_BACKEND=cuda) \
      "$py" -m pytest -q -p no:cacheprovider -rs -m "not torch_cuda" ${HG_PYTEST_ARGS:-} tests/python
  else skip_step python-$mode "$what" "the package is not installed (python-install step)"; fi
done
if want python-torch; then
  what="hologram_torch on torch CUDA tensors (pytest -m torch_cuda; skipped without a GPU)"
  torch_cuda_tests() {
    PYTHONPATH="$site" "$py" -m pytest -q -p no:cacheprovider -rs -m torch_cuda \
      ${HG_PYTEST_ARGS:-} tests/python/test_torch_*.py
    local rc=$?
    [ $rc = 5 ] && { echo "no test collected (no torch here)"; return 0; }
    return $rc
  }
  if [ -d "$site/hologram" ]; then
    run_step python-torch "$what" torch_cuda_tests
  else skip_step python-torch "$what" "the package is not installed (python-install step)"; fi
fi

if want sanitize; then
  if [ ! -x "$build/tests/test_device_ops" ]; then
    skip_step sanitize "compute-sanitizer" "no build in $build (run the build step)"
  else
    if [ $emulate = 1 ]; then
      san() { shift 2; "$@"; }    # the dry run: the wrapped commands, without the sanitizer
      how="dry run on the emulation, no sanitizer"
    elif command -v compute-sanitizer >/dev/null; then
      san() { local tool=$1; shift 2; compute-sanitizer --tool "$tool" --error-exitcode 99 "$@"; }
      how="compute-sanitizer"
    else
      how=""
    fi
    if [ -z "$how" ]; then
      skip_step sanitize "compute-sanitizer" "compute-sanitizer not found"
    else
      t=$build/tests
      memcheck_all() {
        local rc=0
        for prog in test_device_ops test_backend_examples test_instructions_memory \
                    test_instructions_atomics test_instructions_vector test_instructions_shfl \
                    test_async test_ops_rows_shapes test_ops_rows_bw_shapes test_parity; do
          echo "--- memcheck $prog"
          HG_TEST_BACKEND=cuda HG_PARITY_BACKENDS=cuda san memcheck -- timeout 900 "$t/$prog" ||
            rc=1
        done
        return $rc
      }
      racecheck_rows() {
        # the block-cooperative kernels: shared memory + barriers; the register-resident row
        # kernels (a block per row: warp partials in shared memory) at every shape they take
        local rc=0 prog
        HG_PARITY_BACKENDS=cuda \
        HG_PARITY_OPS=reduce,var,std,softmax,log_softmax,layer_norm,rms_norm,mse_loss,cross_entropy,binary_cross \
          san racecheck -- timeout 900 "$t/test_parity" || rc=1
        for prog in test_ops_rows_shapes test_ops_rows_bw_shapes test_instructions_shfl; do
          echo "--- racecheck $prog"
          HG_TEST_BACKEND=cuda san racecheck -- timeout 900 "$t/$prog" || rc=1
        done
        return $rc
      }
      run_step memcheck "memcheck: device ops, examples, memory/atomic/vector/shfl instructions,\
 async, row shapes, parity ($how)" memcheck_all
      run_step racecheck "racecheck: reductions, softmax, norms, losses, row shapes, shfl ($how)" \
        racecheck_rows
    fi
  fi
fi

if want bench; then
  if [ -d "$site/hologram" ]; then
    bench() {
      PYTHONPATH="$site" "$py" bench/cuda_bench.py --json "$out/cuda_bench.json" \
        $([ $emulate = 1 ] && echo --emulate) ${HG_BENCH_ARGS:-} >"$out/cuda_bench.md"
    }
    run_step bench "bench/cuda_bench.py$([ $emulate = 1 ] && echo ' --emulate')" bench
  else skip_step bench "bench/cuda_bench.py" "the package is not installed (python step)"; fi
fi

# --- summary ------------------------------------------------------------------------------------
step_status() {   # the status of step $1, or "not run"
  local r n st
  for r in "${results[@]}"; do
    IFS=$'\t' read -r n st _ _ <<<"$r"
    [ "$n" = "$1" ] && { echo "$st"; return; }
  done
  echo "not run"
}
target_row() {   # target_row TARGET STEP DETAIL: met when the step passed
  local st met; st=$(step_status "$2")
  case "$st" in
    pass) met=yes ;;
    "not run") met="not run"; set -- "$1" "$2" ;;   # no log: no detail
    *) met="**no**" ;;
  esac
  echo "| $1 | $2: $st${3:+; $3} | $met |"
}
san_summary() {   # compute-sanitizer's summary lines in step $2's log, counted
  grep -ho "$1: .*" "$logs/$2.log" 2>/dev/null | sort | uniq -c | tr -s ' ' | paste -sd ';'
}
# Issue 31's targets (docs/cuda.md, "The GPU check"): the steps that must pass, with the counts
# of their logs, then the benchmark's targets from cuda_bench.json.
targets_table() {
  local l=$logs
  echo "## Issue 31's targets"; echo
  echo "| target | measured | met |"; echo "|---|---|---|"
  target_row "C suite passes, the CUDA tests on the GPU" c \
    "$(grep -ho '[0-9]*% tests passed.*' "$l/c.log" 2>/dev/null | tail -1)"
  target_row "Python suite against a CUDA executor passes" python-cuda \
    "$(grep -hoE '[0-9]+ (passed|failed).* in [0-9.]+s' "$l/python-cuda.log" 2>/dev/null | tail -1)"
  local tsk
  tsk=$(awk '/SKIPPED \[[0-9]+\] tests\/python\/test_torch/ {gsub(/[^0-9]/, "", $2); n += $2}
             END {print n + 0}' "$l/python-cuda.log" 2>/dev/null)
  target_row "hologram_torch tests run (none skipped) in that suite" python-cuda \
    "${tsk:-?} skipped in tests/python/test_torch_*" |
    { [ "${tsk:-0}" = 0 ] && cat || sed 's/| yes |$/| **no** |/'; }
  target_row "memcheck: 0 errors" memcheck \
    "$(san_summary 'ERROR SUMMARY' memcheck)"
  target_row "racecheck: 0 hazards" racecheck \
    "$(san_summary 'RACECHECK SUMMARY' racecheck)"
  if [ -f "$out/cuda_bench.json" ]; then
    "$py" - "$out/cuda_bench.json" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1])).get("targets", []):
    print(f"| {t['target']} | bench: {t['measured']} | {'yes' if t['met'] else '**no**'} |")
PY
  else
    target_row "the benchmark's targets (bench/cuda_bench.py)" bench "no cuda_bench.json"
  fi
}

fails=0
{
  echo "# GPU check, $(date -u +%Y-%m-%d) $([ $emulate = 1 ] && echo '(host emulation: a dry run)')"
  echo
  [ -f "$logs/env.log" ] && { echo '```'; sed -n '1,12p' "$logs/env.log"; echo '```'; echo; }
  echo "| step | status | seconds | what |"
  echo "|---|---|---:|---|"
  for r in "${results[@]}"; do
    IFS=$'\t' read -r n st sec what <<<"$r"
    echo "| $n | $st | $sec | $what |"
  done
  echo; targets_table
  for r in "${results[@]}"; do
    IFS=$'\t' read -r n st sec what <<<"$r"
    case "$st" in
      pass|skipped*) ;;
      *) echo; echo "## $n: $st"; echo '```'
         grep -E 'FAIL|Failed|failed|ERROR|Error|error:|Assert|\*\*\*' "$logs/$n.log" | head -40
         echo '...'; tail -n 15 "$logs/$n.log"; echo '```' ;;
    esac
  done
  [ -f "$out/cuda_bench.md" ] && { echo; cat "$out/cuda_bench.md"; }
} >"$out/summary.md"
"$py" - "$out/summary.json" "$emulate" "${results[@]}" <<'PY'
import json, sys
path, emulate, rows = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
steps = [dict(zip(("step", "status", "seconds", "what"), r.split("\t"))) for r in rows]
for s in steps:
    s["seconds"] = int(s["seconds"])
json.dump({"emulate": emulate, "steps": steps,
           "ok": all(s["status"] == "pass" or s["status"].startswith("skipped") for s in steps)},
          open(path, "w"), indent=1)
PY
for r in "${results[@]}"; do
  IFS=$'\t' read -r n st _ _ <<<"$r"
  case "$st" in pass|skipped*) ;; *) fails=$((fails + 1)) ;; esac
done
if [ $pack = 1 ]; then
  tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
fi
cat "$out/summary.md"
echo "gpu_check: $fails step(s) failed; summary in $out/summary.md" >&2
[ $fails = 0 ]
