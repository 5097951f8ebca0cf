#!/usr/bin/env bash
# Installs what the build needs on a fresh Debian machine, from Debian's packages (apt, as root):
# a C and a C++ compiler (the CUDA emulation's kernels), clang (the test suite also builds with
# it), make, CMake >= 3.16, pkg-config (the install test), valgrind (the instruction-count
# guard: callgrind and its client-request header) and Python 3 with venv and its headers (the
# extension). Nothing goes into the
# system Python with pip (Debian forbids it, PEP 668): the Python packages the tests use go into
# build/venv (scripts/python_env.sh). Idempotent and quiet; not root and something missing: it
# says what to install and fails.
set -euo pipefail
need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
command -v clang >/dev/null 2>&1 || command -v clang-14 >/dev/null 2>&1 || need_apt+=(clang)
command -v make >/dev/null 2>&1 || need_apt+=(make)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
# Debian's valgrind package also holds the headers the guard's driver includes.
{ command -v valgrind >/dev/null 2>&1 && [ -f /usr/include/valgrind/callgrind.h ]; } ||
  need_apt+=(valgrind)
cmake_ok=0
if command -v cmake >/dev/null 2>&1; then
  v=$(cmake --version | head -1 | sed 's/[^0-9.]*\([0-9][0-9.]*\).*/\1/')
  [ "$(printf '%s\n3.16\n' "$v" | sort -V | head -1)" = "3.16" ] && cmake_ok=1
fi
[ $cmake_ok = 1 ] || need_apt+=(cmake)
if ! command -v python3 >/dev/null 2>&1; then
  need_apt+=(python3 python3-venv python3-dev)
else
  # Debian's python3 lacks ensurepip (venv) and Python.h until python3-venv / python3-dev.
  python3 -c 'import ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
  python3 - <<'PY' || need_apt+=(python3-dev)
import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))
PY
fi
[ ${#need_apt[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "missing: ${need_apt[*]} (on Debian/Ubuntu: sudo apt-get install ${need_apt[*]})" >&2
  exit 1
fi
echo "installing with apt: ${need_apt[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" \
  >/dev/null
