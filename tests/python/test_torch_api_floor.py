"""hologram_torch uses only torch APIs that its oldest supported torch has.

An AST scan of python/hologram_torch (with its subpackages) lists every torch name the package reaches: attribute
chains from `torch` and from names imported out of it (`torch.library.register_fake`,
`from torch.autograd import Function`), `getattr(torch.<chain>, "<name>")` lookups, and the
keyword arguments of calls of those names (`torch.optim.Optimizer.__init__` is not a call the
scan sees; keywords appear as `torch.full(dtype=)`). The list must equal the committed one,
tests/python/torch_api_floor.txt, whose entries were resolved against the floor release named
in its header (= hologram_torch.SUPPORTED_TORCH): a new name fails here until it is checked
there and added. Every listed name must also resolve in the torch this runs with (names under
torch._C._cuda need a CUDA build of torch; keywords are checked where Python can read the
callable's signature). Tensor methods are not seen (the scan knows no types).

    python tests/python/test_torch_api_floor.py          # the scan, as the list's lines
    python tests/python/test_torch_api_floor.py --check  # resolve the list in this torch
"""
import ast
import importlib
import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "hologram_torch"
LIST = pathlib.Path(__file__).resolve().parent / "torch_api_floor.txt"
OWN = "torch.ops.hologram"   # hologram_torch's own op namespace (registered at import)


def _dotted(node, aliases):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        name = ".".join([aliases[node.id]] + parts[::-1])
        return OWN if name.startswith(OWN + ".") else name
    return None


def scan_file(path):
    """The torch names one module uses."""
    tree = ast.parse(path.read_text(), str(path))
    aliases, used = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" or a.name.startswith("torch."):
                    aliases[a.asname or "torch"] = a.name if a.asname else "torch"
                    used.add(a.name)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module == "torch" or node.module.startswith("torch.")):
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                used.add(f"{node.module}.{a.name}")
    parent = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            up = parent.get(node)
            if isinstance(up, ast.Attribute) and up.value is node:
                continue   # not the whole chain
            name = _dotted(node, aliases)
            if name:
                used.add(name)
        if isinstance(node, ast.Call):
            name = _dotted(node.func, aliases)
            if name and name != OWN:
                used.update(f"{name}({k.arg}=)" for k in node.keywords if k.arg)
            if (isinstance(node.func, ast.Name) and node.func.id == "getattr" and
                    len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
                base = _dotted(node.args[0], aliases)
                if base:
                    used.add(f"{base}.{node.args[1].value}")
    return used


def scan():
    used = set()
    for path in sorted(PACKAGE.rglob("*.py")):   # subpackages too (_aten)
        used |= scan_file(path)
    return used


def read_list():
    """(floor version from the header, the names)."""
    floor, names = None, set()
    for line in LIST.read_text().splitlines():
        if line.startswith("# floor:"):
            floor = line.split(":", 1)[1].split()[0]
        elif line.strip() and not line.startswith("#"):
            names.add(line.strip())
    return floor, names


def needs_cuda_build(name):
    return name.startswith("torch._C._cuda")


def resolve(name):
    """The object a dotted torch name names (submodules imported on the way)."""
    parts = name.split(".")
    obj = importlib.import_module(parts[0])
    for i in range(1, len(parts)):
        try:
            obj = getattr(obj, parts[i])
        except AttributeError:
            obj = importlib.import_module(".".join(parts[:i + 1]))
    return obj


def check_name(entry):
    """None if entry resolves in this torch, else why not."""
    import torch
    name, kw = entry, None
    if entry.endswith("=)"):
        name, kw = entry[:-2].split("(")
    if needs_cuda_build(name) and not torch.version.cuda:
        return None   # CPU builds have no CUDA entry points
    try:
        obj = resolve(name)
    except (AttributeError, ImportError) as e:
        return f"{name} not found ({e})"
    if kw is None:
        return None
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return None   # a builtin without a signature: the test suite's run covers it
    if kw in params or any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return None
    return f"{name} has no keyword {kw!r}"


def test_scan_matches_the_verified_list():
    floor, listed = read_list()
    used = scan()
    new, gone = sorted(used - listed), sorted(listed - used)
    assert not new, (f"hologram_torch now uses torch names not verified against torch {floor}: "
                     f"{new}. Check them there (python {__file__} --check in a venv with torch "
                     f"{floor}) and add them to {LIST.name}, or use an older API.")
    assert not gone, f"{LIST.name} lists names hologram_torch no longer uses: {gone}"


def test_the_floor_is_the_supported_version():
    import pytest
    pytest.importorskip("torch")
    from conftest import import_hologram_torch
    ht = import_hologram_torch()
    floor, _ = read_list()
    assert floor.split(".")[:2] == ht.SUPPORTED_TORCH.split(".")[:2], (floor, ht.SUPPORTED_TORCH)


def test_the_listed_names_resolve_in_this_torch():
    import pytest
    pytest.importorskip("torch")
    _, listed = read_list()
    bad = [why for why in map(check_name, sorted(listed)) if why]
    assert not bad, bad


def test_scan_sees_aliases_getattr_and_keywords(tmp_path):
    """The scanner itself, on a module written for it (it must see every form the package uses,
    and nothing that is not torch's)."""
    src = ("import torch\nimport torch.nn.functional as TF\nfrom torch.autograd import Function\n"
           "from . import functional as F\n"
           "x = torch.library.register_fake('a', None, lib=None)\n"
           "y = TF.relu(x); z = F.relu(x); w = torch.ops.hologram.add(x, x)\n"
           "raw = getattr(torch._C, '_cuda_getCurrentRawStream', None)\n"
           "class A(Function):\n    pass\n")
    path = tmp_path / "m.py"
    path.write_text(src)
    assert scan_file(path) == {
        "torch", "torch.nn.functional", "torch.autograd.Function", "torch.library.register_fake",
        "torch.library.register_fake(lib=)", "torch.nn.functional.relu", "torch.ops.hologram",
        "torch._C", "torch._C._cuda_getCurrentRawStream"}


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        import torch
        floor, listed = read_list()
        bad = [why for why in map(check_name, sorted(listed)) if why]
        print(f"torch {torch.__version__} (cuda {torch.version.cuda}): {len(listed)} names, "
              f"{len(bad)} not resolved")
        for why in bad:
            print("  " + why)
        sys.exit(1 if bad else 0)
    print("\n".join(sorted(scan())))
