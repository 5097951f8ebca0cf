#!/usr/bin/env bash
# Extracts the C quickstarts from README.md (the first two ```c blocks), builds them against the
# just-built library and checks their output, so the README's examples cannot rot.
set -euo pipefail
src_dir=$1; bin_dir=$2; cc=${3:-cc}; flags=${4:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Block k (1-based) of the README's ```c blocks.
extract() { awk -v want="$1" '/^```c$/{n++; if(n==want){f=1}; next} /^```$/{if(f){exit}} f' "$src_dir/README.md"; }
build_run() {
  # shellcheck disable=SC2086
  "$cc" -std=c11 -Wall -Wextra -Werror $flags -I"$src_dir/include" "$1" \
    "$bin_dir/libhologram.a" -lpthread -lm -ldl -o "$1.bin"
  "$1.bin"
}
extract 1 > "$tmp/quickstart.c"
extract 2 > "$tmp/ops.c"
test -s "$tmp/quickstart.c"
test -s "$tmp/ops.c"
out=$(build_run "$tmp/quickstart.c")
echo "$out"
[ "$out" = "c[999] = 999.5" ]
out=$(build_run "$tmp/ops.c")
echo "$out"
[ "$out" = "$(printf 'row sums: 62 55\nkernels: 1, y[4] = 10.5')" ]
