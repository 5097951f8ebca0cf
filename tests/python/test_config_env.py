"""Environment variables through the library's one parser, seen from Python: each in a fresh
interpreter with the variable set. Documented values (booleans in any case) are taken without a
word; anything else is a warning naming the variable, the value and what is accepted."""
import functools
import os
import subprocess
import sys

import pytest

import hologram as hg

# The child imports the hologram this process tests (installed, or a source tree with its
# extension), not python/ of the checkout, which has no built extension in a fresh clone.
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(hg.__file__)))
PYTHONPATH = os.pathsep.join(p for p in [_PKG, os.environ.get("PYTHONPATH", "")] if p)

SCRIPT = """
import numpy as np, hologram as hg
ex = hg.Executor('auto')
print('backend', ex.backend)
print('cuda', hg.is_cuda_available())
np.testing.assert_allclose((hg.asarray(np.arange(5.0)) * 2 + 1).numpy(), np.arange(5.0) * 2 + 1)
f = hg.jit(lambda a: a * 2 + 1)   # a graph compile: reads HOLOGRAM_DISABLE_FUSION, HOLOGRAM_DUMP
np.testing.assert_allclose(f(hg.asarray(np.arange(5.0))).numpy(), np.arange(5.0) * 2 + 1)
"""


@functools.lru_cache(maxsize=None)
def run_cached(*items):
    return run(dict(items))


def run(env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLOGRAM_")}
    env.update(env_extra)
    env["PYTHONPATH"] = PYTHONPATH
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr


@pytest.mark.parametrize("value", ["false", "no", "off", "0", "OFF", "False"])
def test_cuda_emulate_off_values_keep_emulation_off(value):
    out, err = run({"HOLOGRAM_CUDA_EMULATE": value})
    on, _ = run_cached(("HOLOGRAM_CUDA_EMULATE", "1"))
    assert "cuda True" in on          # emulation on makes CUDA available
    assert "backend cuda" in on
    if "cuda False" in run_cached()[0]:   # no GPU here: off must mean no CUDA at all
        assert "cuda False" in out and "backend cpu" in out
    assert "ignoring" not in err


@pytest.mark.parametrize("var,value,accepted", [
    ("HOLOGRAM_CUDA_EMULATE", "maybe", "yes/no"),
    ("HOLOGRAM_CPU_LEVEL", "garbage", "generic, avx2, avx512"),
    ("HOLOGRAM_LOG_LEVEL", "garbage", "trace, debug, info, warn, error, off"),
    ("HOLOGRAM_NUM_THREADS", "many", "positive integer"),
    ("HOLOGRAM_CPU_MEMORY_CACHE", "1GB", "byte count"),
    ("HOLOGRAM_STREAM_STORES", "big", "byte count"),
    ("HOLOGRAM_DISABLE_FUSION", "maybe", "true/false"),
    ("HOLOGRAM_DUMP", "everything", "passes"),
])
def test_bad_values_warn_naming_variable_value_and_accepted(var, value, accepted):
    _, err = run({var: value})
    assert f"{var}='{value}'" in err and accepted in err, err


@pytest.mark.parametrize("var,value", [
    ("HOLOGRAM_CPU_LEVEL", "AVX2"), ("HOLOGRAM_CPU_LEVEL", "Generic"),
    ("HOLOGRAM_LOG_LEVEL", "ERROR"), ("HOLOGRAM_DISABLE_FUSION", "false"),
    ("HOLOGRAM_DISABLE_FUSION", "Yes"), ("HOLOGRAM_CUDA_TF32", "on"),
    ("HOLOGRAM_NUM_THREADS", " 2 "), ("HOLOGRAM_STREAM_STORES", "0"),
    ("HOLOGRAM_CPU_MEMORY_CACHE", "1048576"),
])
def test_documented_values_are_taken_silently(var, value):
    _, err = run({var: value})
    assert "ignoring" not in err, err


def test_bad_backend_is_an_error():
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLOGRAM_")}
    env.update({"HOLOGRAM_BACKEND": "gpu", "PYTHONPATH": PYTHONPATH})
    r = subprocess.run([sys.executable, "-c", "import hologram as hg; hg.Executor('auto')"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "HOLOGRAM_BACKEND" in r.stderr and "gpu" in r.stderr
