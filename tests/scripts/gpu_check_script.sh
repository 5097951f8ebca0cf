#!/usr/bin/env bash
# scripts/gpu_check.sh's own behaviour, checked without a GPU and in seconds: bad arguments are
# refused with a message and exit status 2, a step without a build is reported as skipped, an
# emulated env-only run writes summary.md / summary.json, and --pack leaves logs.tar.gz in
# place of logs/. (The whole script runs on the emulation in a session's dry run; see
# docs/cuda.md.)
set -euo pipefail
src=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
s=$src/scripts/gpu_check.sh
export HG_GPU_BUILD=$tmp/build HG_PYTHON=${HG_PYTHON:-python3}

expect_usage_error() {   # expect_usage_error PATTERN ARGS...
  local pat=$1; shift
  set +e; "$s" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"; local rc=$?; set -e
  [ $rc = 2 ] || { echo "gpu_check.sh $*: exit $rc, expected 2"; exit 1; }
  grep -q "$pat" "$tmp/err.txt" || { echo "gpu_check.sh $*: no '$pat' in:"; cat "$tmp/err.txt"; exit 1; }
}
expect_usage_error "OUTDIR missing"
expect_usage_error "unknown step 'bogus'" "$tmp/o" --steps bogus
expect_usage_error "unknown option '--fast'" "$tmp/o" --fast
expect_usage_error "one OUTDIR" "$tmp/o" "$tmp/p"

"$s" "$tmp/skip" --emulate --steps c,sanitize 2>/dev/null >/dev/null
grep -q "| c | skipped: no build in $tmp/build" "$tmp/skip/summary.md"
grep -q "| sanitize | skipped: no build" "$tmp/skip/summary.md"
# issue 31's targets: a skipped step is not met, one not asked for is not run
grep -q "^## Issue 31's targets" "$tmp/skip/summary.md"
grep -q "^| C suite passes, the CUDA tests on the GPU | c: skipped: no build in $tmp/build.* | \*\*no\*\* |" \
  "$tmp/skip/summary.md"
grep -q "^| memcheck: 0 errors | memcheck: not run | not run |" "$tmp/skip/summary.md"

"$s" "$tmp/env" --emulate --steps env --pack 2>/dev/null >"$tmp/stdout.txt"
grep -q "^| env | pass |" "$tmp/env/summary.md"
grep -q "emulate: 1" "$tmp/env/summary.md"
cmp -s "$tmp/stdout.txt" "$tmp/env/summary.md"
test -f "$tmp/env/logs.tar.gz" && test ! -e "$tmp/env/logs"
tar -tzf "$tmp/env/logs.tar.gz" | grep -q "logs/env.log"
"$HG_PYTHON" - "$tmp/env/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["emulate"] is True and d["ok"] is True, d
assert [s["step"] for s in d["steps"]] == ["env"] and d["steps"][0]["status"] == "pass", d
PY
echo "gpu_check_script: ok"
