"""The type stubs (python/hologram/*.pyi, py.typed) as installed: mypy --strict passes on the
package and on a typed user program, reports a deliberate error, and the stub of the C extension
names exactly what hologram._C exports."""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hologram as hg
from hologram import _C

PKG = Path(hg.__file__).parent
HERE = Path(__file__).parent


def run_mypy(tmp_path, monkeypatch, *args):
    api = pytest.importorskip("mypy.api")
    # From an empty folder, so that `hologram` resolves to the installed package, not sources.
    monkeypatch.chdir(tmp_path)
    out, err, status = api.run(["--strict", "--no-error-summary", "--cache-dir",
                                str(tmp_path / "cache"), *args])
    return status, out + err


def test_installed_package_is_typed():
    assert (PKG / "py.typed").is_file()
    for stub in ("__init__", "_C", "ops", "tensor", "_interop", "jit"):
        assert (PKG / f"{stub}.pyi").is_file(), stub


def test_mypy_strict_on_package(tmp_path, monkeypatch):
    status, out = run_mypy(tmp_path, monkeypatch, "-p", "hologram")
    assert status == 0, out


def test_mypy_strict_on_user_program(tmp_path, monkeypatch):
    prog = tmp_path / "prog.py"
    prog.write_text((HERE / "typed_user_program.py").read_text())
    status, out = run_mypy(tmp_path, monkeypatch, str(prog))
    assert status == 0, out


def test_user_program_runs():
    env = dict(os.environ, PYTHONPATH="")
    env.pop("HOLOGRAM_BACKEND", None)   # a CPU program (numpy views), whatever the test backend
    r = subprocess.run([sys.executable, str(HERE / "typed_user_program.py")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_mypy_reports_type_errors(tmp_path, monkeypatch):
    prog = tmp_path / "bad.py"
    prog.write_text(
        "import hologram as hg\n"
        "t: hg.Tensor = hg.zeros((2, 3))\n"
        "n: int = t.shape\n"                      # a tuple is not an int
        "ex: hg.Executor = hg.Executor(backend=1)\n"  # backend is a str
        "t.no_such_method()\n")
    status, out = run_mypy(tmp_path, monkeypatch, str(prog))
    assert status == 1
    assert "bad.py:3: error: Incompatible types in assignment" in out, out
    assert "bad.py:4: error: Argument \"backend\"" in out, out
    assert "bad.py:5: error: \"Tensor\" has no attribute \"no_such_method\"" in out, out


# --- the stubs name exactly the runtime's names -------------------------------------------------
def stub_names(path):
    """Top-level names a stub defines, and per class the names in its body."""
    tree = ast.parse(path.read_text())
    top, classes = set(), {}

    def names_of(body):
        out = set()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                out.add(node.target.id)
            elif isinstance(node, ast.Assign):
                out.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                # `import x as x` / `from m import y as y`: the re-export form of stubs
                out.update(a.asname for a in node.names if a.asname and a.asname == a.name)
        return out

    top = names_of(tree.body)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = names_of(node.body)
    return top, classes


def public(names):
    return {n for n in names if not n.startswith("_")}


def test_C_stub_matches_runtime():
    top, classes = stub_names(PKG / "_C.pyi")
    assert public(dir(_C)) == public(top)
    for name in public(dir(_C)):
        obj = getattr(_C, name)
        if isinstance(obj, type):
            assert public(vars(obj)) == public(classes[name]), name
    flat = public(dir(_C.ops))
    assert flat == public(classes["_FlatOps"])


@pytest.mark.parametrize("module", ["hologram", "hologram.ops"])
def test_python_stubs_match_runtime(module):
    mod = sys.modules[module]
    stub = PKG / ("__init__.pyi" if module == "hologram" else module.split(".")[1] + ".pyi")
    top, _ = stub_names(stub)
    assert set(mod.__all__) == public(top) | ({"__version__"} & set(mod.__all__))
