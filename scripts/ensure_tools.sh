#!/usr/bin/env bash
# Installs what the build needs on a fresh machine (Debian + Python): a C and a C++ compiler (the
# CUDA emulation's kernels), CMake >= 3.16,
# pkg-config (install test) and numpy (the main job's example inputs). Idempotent and quiet.
set -euo pipefail
need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
# The CUDA backend's host emulation (the CUDA tests without a GPU) compiles kernels as C++.
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
command -v make >/dev/null 2>&1 || need_apt+=(make)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "missing tools: ${need_apt[*]} (install them, or run as root)" >&2; exit 1
  fi
fi
cmake_ok=0
if command -v cmake >/dev/null 2>&1; then
  v=$(cmake --version | head -1 | sed 's/[^0-9.]*\([0-9][0-9.]*\).*/\1/')
  [ "$(printf '%s\n3.16\n' "$v" | sort -V | head -1)" = "3.16" ] && cmake_ok=1
fi
if [ $cmake_ok = 0 ]; then python3 -m pip install -q "cmake>=3.16"; fi
if [ "${HG_NEED_NUMPY:-0}" = 1 ]; then
  python3 -c 'import numpy' 2>/dev/null || python3 -m pip install -q numpy
fi
