#!/usr/bin/env bash
# Makes build/venv: a virtual environment with the Python package installed the way users
# install it (`pip install .` from this clone: scikit-build-core builds libhologram and the
# extension hologram._C) plus what the tests and benchmarks use: numpy, pytest, hypothesis (the
# numpy conformance tests), mypy (the type stubs' check), ml_dtypes (bf16 as a numpy dtype),
# matplotlib (the size sweep's plots; HG_NO_PLOTS=1 skips it, the sweep then writes no plots),
# the CPU build of torch (pip install torch==2.13.0 takes the local wheel; HG_NO_TORCH=1 skips
# it, and the torch tests then skip; with it scikit-learn, whose bundled digits data set the
# hologram_torch training test uses, and transformers, pure Python, whose small-config models
# the compile backend's tests run on real models' ATen graphs) and NVIDIA's NVRTC wheel, with which the tests compile the
# CUDA code generator's output without a GPU (HG_NO_NVRTC=1 skips it; those checks then skip).
# Idempotent; prints the venv's python on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${HG_VENV:-build/venv}
scripts/ensure_tools.sh   # python3 with venv and headers
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
py="$venv/bin/python"
deps=(numpy pytest hypothesis mypy ml_dtypes)
[ "${HG_NO_PLOTS:-0}" = 1 ] || deps+=(matplotlib)
[ "${HG_NO_TORCH:-0}" = 1 ] || deps+=("torch==2.13.0" scikit-learn "transformers==5.24.0")
[ "${HG_NO_NVRTC:-0}" = 1 ] || deps+=("nvidia-cuda-nvrtc-cu12")
"$py" -m pip install -q "${deps[@]}" >&2
"$py" -m pip install -q . >&2
echo "$py"
