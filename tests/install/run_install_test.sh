#!/usr/bin/env bash
# Usage: run_install_test.sh CMAKE BUILD_DIR CONSUMER_SRC CC [CONFIG]
# Installs BUILD_DIR into a fresh prefix, then moves the whole prefix elsewhere (an install must
# be relocatable), and builds + runs the consumer against the moved package (CMake config
# files, then pkg-config without overrides) and runs the installed CLI without a library path
# (its RPATH). Exit status 0 only if all of them work.
set -euo pipefail
cmake_bin=$1
build=$2
consumer=$3
cc_bin=$4
config=${5:-}

work="$build/install-test"
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

config_args=()
if [ -n "$config" ]; then config_args=(--config "$config"); fi

echo "== cmake --install $build --prefix $work/first, moved to $prefix"
"$cmake_bin" --install "$build" --prefix "$work/first" "${config_args[@]}" >"$work/install.log"
mv "$work/first" "$prefix"

# A sanitized library needs the sanitizer runtime in the consumer too.
san_flags=""
if grep -q '^HG_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  san_flags="-fsanitize=address,undefined -fno-omit-frame-pointer"
fi

pcfile=$(find "$prefix" -name hologram.pc | head -1)
libdir=$(dirname "$(dirname "$pcfile")")
test -f "$prefix/include/hologram.h" || { echo "hologram.h was not installed" >&2; exit 1; }
ls "$libdir"/libhologram.so* >/dev/null || { echo "libhologram.so was not installed in $libdir" >&2; exit 1; }

echo "== consumer with find_package(hologram)"
"$cmake_bin" -S "$consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc_bin" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$san_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$san_flags" >"$work/consumer-configure.log" \
  || { cat "$work/consumer-configure.log" >&2; exit 1; }
"$cmake_bin" --build "$work/consumer-build" >"$work/consumer-build.log" \
  || { cat "$work/consumer-build.log" >&2; exit 1; }
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/consumer-build/consumer"

echo "== consumer with pkg-config"
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "SKIPPED: pkg-config is not installed, so the pkg-config consumer was not built"
else
  # The .pc file finds its prefix from its own place: no --define-variable.
  flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs hologram)
  echo "pkg-config flags: $flags"
  case "$flags" in
    *"$prefix/"*) ;;
    *) echo "pkg-config flags do not point into the moved prefix $prefix" >&2; exit 1 ;;
  esac
  # shellcheck disable=SC2086
  "$cc_bin" -std=c11 $san_flags "$consumer/main.c" -o "$work/consumer_pc" $flags
  LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/consumer_pc"
fi
echo "== the installed CLI, moved, without LD_LIBRARY_PATH"
if [ -x "$prefix/bin/hologram" ]; then
  out=$(env -u LD_LIBRARY_PATH "$prefix/bin/hologram" --version)
  echo "$out"
  case "$out" in hologram\ *) ;; *) echo "the installed CLI did not run" >&2; exit 1 ;; esac
fi
rm -rf "$work"
echo "install test passed"
