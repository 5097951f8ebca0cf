"""The op declarations (tools/opdecl/ops_decl.py) and their generator: the tree agrees with them,
a drift in any surface fails `gen_ops.py --check` naming the file (and, for the generated ones,
the command that rewrites it), and the generated bindings carry the declared defaults."""
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hologram as hg
from hologram import _C

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "tools" / "opdecl" / "gen_ops.py"
pytestmark = pytest.mark.skipif(not GEN.is_file(), reason="needs the source tree (tools/opdecl)")

# What the generator reads and writes, relative to the root.
FILES = ["tools/opdecl", "include/hologram/ops.h", "python/src", "python/hologram/_C.pyi",
         "python/hologram/ops.py", "python/hologram/ops.pyi", "docs"]


def check(root):
    r = subprocess.run([sys.executable, str(GEN), "--check", "--root", str(root)],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stderr


def load_decl():
    spec = importlib.util.spec_from_file_location("gen_ops", GEN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, {r.name: r for r in mod.load(str(ROOT))}


@pytest.fixture
def tree(tmp_path):
    for rel in FILES:
        src, dst = ROOT / rel, tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        else:
            shutil.copy(src, dst)
    return tmp_path


def edit(path, old, new):
    text = path.read_text()
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new))


def test_tree_agrees_with_the_declarations():
    rc, err = check(ROOT)
    assert rc == 0, err


@pytest.mark.parametrize("rel,old,new,says", [
    # a default changed in ops.py alone
    ("python/hologram/ops.py", "def rms_norm(x, normalized_shape=None, weight=None, eps=1e-6,",
     "def rms_norm(x, normalized_shape=None, weight=None, eps=1e-5,",
     "python/hologram/ops.py: rms_norm(eps=1e-05): the declared default is 1e-06"),
    # a parameter renamed in the stub
    ("python/hologram/ops.pyi", "def cross_entropy(logits: _Operand, target: _Operand, "
     "ignore_index: int = ...,", "def cross_entropy(logits: _Operand, target: _Operand, "
     "ignore: int = ...,", "python/hologram/ops.pyi: cross_entropy's parameters"),
    # a stub type
    ("python/hologram/ops.pyi", "def matmul(a: _Operand, b: _Operand, out: _Out = ...)",
     "def matmul(a: _Operand, b: int, out: _Out = ...)",
     "python/hologram/ops.pyi: matmul(b: int): declared _Operand"),
    # the public header's prototype
    ("include/hologram/ops.h", "int32_t nnorm, const hg_tensor* weight,\n"
     "                             double eps, hg_tensor* out);",
     "int32_t nnorm, const hg_tensor* weight,\n                             float eps, "
     "hg_tensor* out);", "include/hologram/ops.h: hg_rms_norm differs"),
    # a C op added to the header without a declaration
    ("include/hologram/ops.h", "HG_API hg_status hg_matmul(",
     "HG_API hg_status hg_new_op(const hg_tensor* x, hg_tensor* out);\n"
     "HG_API hg_status hg_matmul(", "include/hologram/ops.h: hg_new_op is neither declared"),
    # a hand edit of a generated file
    ("python/src/tensor_ops_decl.h", '"eps", 1e-06,', '"eps", 1e-07,',
     "python/src/tensor_ops_decl.h is out of date with tools/opdecl/ops_decl.py: run "
     "`python3 tools/opdecl/gen_ops.py`"),
    ("docs/ops_gradients.md", "dL/dlogits, the softmax fused in", "dL/dlogits",
     "docs/ops_gradients.md is out of date"),
    # an op bound by hand beside the generated table
    ("python/src/tensor_ops.c", "    HGPY_DECL_METHODS_tensor_ops\n",
     "    HGPY_DECL_METHODS_tensor_ops\n    HGPY_FASTCALL(\"matmul\", f_gemm, \"\"),\n",
     "python/src/tensor_ops.c: matmul is declared"),
])
def test_check_fails_on_drift_naming_the_file(tree, rel, old, new, says):
    assert check(tree)[0] == 0
    edit(tree / rel, old, new)
    rc, err = check(tree)
    assert rc == 1 and says in err, err


def test_a_declared_default_reaches_every_surface(tree):
    # Changing the declaration alone: the generated files are stale, and the hand-written
    # Python function (checked, not generated) disagrees until it is changed too.
    edit(tree / "tools/opdecl/ops_decl.py", '"eps: double = 1e-6"', '"eps: double = 1e-7"')
    rc, err = check(tree)
    assert rc == 1
    for rel in ("python/src/tensor_ops_decl.h", "docs/ops_reductions.md", "docs/ops_gradients.md"):
        assert f"{rel} is out of date" in err, err
    assert "ops.py: rms_norm(eps=1e-06): the declared default is 1e-07" in err, err
    # Rewriting fixes the generated ones (rms_norm_backward's eps follows: `=rms_norm.eps`).
    r = subprocess.run([sys.executable, str(GEN), "--root", str(tree)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1 and "out of date" not in r.stderr, r.stderr
    assert '"eps", 1e-07, &v_eps' in (tree / "python/src/tensor_ops_decl.h").read_text()
    assert "eps=1e-07, outputs=(True, True)" in (tree / "docs/ops_gradients.md").read_text()
    ops_py = tree / "python/hologram/ops.py"
    edit(ops_py, "def rms_norm(x, normalized_shape=None, weight=None, eps=1e-6,",
         "def rms_norm(x, normalized_shape=None, weight=None, eps=1e-7,")
    edit(ops_py, "def rms_norm_backward(grad, x, normalized_shape=None, weight=None, eps=1e-6,",
         "def rms_norm_backward(grad, x, normalized_shape=None, weight=None, eps=1e-7,")
    rc, err = check(tree)
    assert rc == 0, err


def test_bad_declaration_is_reported(tree):
    edit(tree / "tools/opdecl/ops_decl.py", '"eps: double = 1e-6"', '"eps: float = 1e-6"')
    rc, err = check(tree)
    assert rc == 1 and "bad argument 'eps: float = 1e-6'" in err, err


def test_bindings_take_the_declared_names_and_defaults():
    mod, recs = load_decl()
    for name, r in recs.items():
        f = getattr(_C, name)
        assert f.__doc__ == mod.doc_signature(r), name
    # Defaults in effect: omitted arguments give what the declared values give explicitly.
    x = hg.asarray(np.linspace(-2, 3, 24, dtype=np.float32).reshape(4, 6))
    w = hg.asarray(np.linspace(0.5, 1.5, 6, dtype=np.float32))
    for name, args in (("rms_norm", (x, 1, w)), ("layer_norm", (x, 1, w)),
                       ("softmax", (x,))):
        explicit = {a.name: a.default for a in recs[name].args[len(args):]
                    if a.kind not in ("out",)}
        got = getattr(_C, name)(*args).numpy()
        want = getattr(_C, name)(*args, **explicit).numpy()
        np.testing.assert_array_equal(got, want)
        other = dict(explicit, **{k: v * 10 for k, v in explicit.items()
                                  if isinstance(v, float) and v})
        if other != explicit:   # the default is the one that was used (another value differs)
            assert not np.array_equal(getattr(_C, name)(*args, **other).numpy(), got), name
    # Keyword names are the declared ones (a wrong name is refused, naming it).
    with pytest.raises(TypeError, match="epsilon"):
        _C.layer_norm(x, 1, epsilon=1e-3)
