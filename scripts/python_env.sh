#!/usr/bin/env bash
# Makes build/venv: a virtual environment with the Python package installed the way users
# install it (`pip install .` from this clone: scikit-build-core builds libhologram and the
# extension hologram._C) plus what the tests and benchmarks use: numpy, pytest, matplotlib (the
# size sweep's plots; HG_NO_PLOTS=1 skips it, the sweep then writes no plots), the CPU build of
# torch (pip install torch==2.13.0 takes the local wheel; HG_NO_TORCH=1 skips it, and the torch
# tests then skip; with it scikit-learn, whose bundled digits data set the hologram_torch training
# test uses) and NVIDIA's NVRTC wheel, with which the tests compile the CUDA code
# generator's output without a GPU (HG_NO_NVRTC=1 skips it; those checks then skip).
# Idempotent; prints the venv's python on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${HG_VENV:-build/venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2 || {
    # Debian's python3 without ensurepip: install python3-venv (as root) and retry.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv "$venv" >&2
    else
      echo "python3 -m venv failed (install python3-venv)" >&2; exit 1
    fi
  }
fi
py="$venv/bin/python"
deps=(numpy pytest)
[ "${HG_NO_PLOTS:-0}" = 1 ] || deps+=(matplotlib)
[ "${HG_NO_TORCH:-0}" = 1 ] || deps+=("torch==2.13.0" scikit-learn)
[ "${HG_NO_NVRTC:-0}" = 1 ] || deps+=("nvidia-cuda-nvrtc-cu12")
"$py" -m pip install -q "${deps[@]}" >&2
"$py" -m pip install -q . >&2
echo "$py"
