#!/usr/bin/env bash
# Extracts the C quickstart from README.md, builds it against the just-built library and checks
# its output, so the README's example cannot rot.
set -euo pipefail
src_dir=$1; bin_dir=$2; cc=${3:-cc}; flags=${4:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
awk '/^```c$/{f=1;next} /^```$/{if(f){exit}} f' "$src_dir/README.md" > "$tmp/quickstart.c"
test -s "$tmp/quickstart.c"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror $flags -I"$src_dir/include" "$tmp/quickstart.c" \
  "$bin_dir/libhologram.a" -lpthread -lm -ldl -o "$tmp/quickstart"
out=$("$tmp/quickstart")
echo "$out"
[ "$out" = "c[999] = 999.5" ]
