"""Every public function, class, method and property of hologram (and hologram_torch, where torch
is installed) has a docstring: the names in each module's __all__ (or its public names defined
there), and the public members those classes define (C members: PyMethodDef/PyGetSetDef docs)."""
import importlib
import inspect

import pytest

from conftest import import_hologram_torch

MODULES = ["hologram", "hologram.ops", "hologram.errors", "hologram.backend", "hologram.jit",
           "hologram.profiler", "hologram.tensor", "hologram._C"]
TORCH_MODULES = ["hologram_torch", "hologram_torch.functional", "hologram_torch.nn",
                 "hologram_torch.optim"]
DATA = (str, int, float, tuple, list, dict, type(None))


def public_names(mod):
    names = getattr(mod, "__all__", None)
    if names is not None:
        return list(names)
    return [n for n in dir(mod) if not n.startswith("_") and
            getattr(getattr(mod, n), "__module__", mod.__name__) == mod.__name__]


def ours(cls):
    return (cls.__module__ or "").startswith("hologram")


def undocumented(module_names):
    missing, seen = [], set()

    def check(qual, obj):
        doc = getattr(obj, "__doc__", None)
        if not doc or not doc.strip():
            missing.append(qual)

    for mname in module_names:
        mod = importlib.import_module(mname)
        check(mname, mod)
        for name in public_names(mod):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or isinstance(obj, DATA) or id(obj) in seen:
                continue
            seen.add(id(obj))
            check(f"{mname}.{name}", obj)
            if not isinstance(obj, type):
                continue
            # Public members the class (or a base of ours) defines: not torch's or object's.
            for base in obj.__mro__:
                if not ours(base):
                    continue
                for attr, member in vars(base).items():
                    if attr.startswith("_") or isinstance(member, DATA):
                        continue
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    check(f"{mname}.{name}.{attr}", member)
    return missing


def test_hologram_public_api_documented():
    assert undocumented(MODULES) == []


def test_hologram_torch_public_api_documented():
    import_hologram_torch()
    assert undocumented(TORCH_MODULES) == []


@pytest.mark.parametrize("name", ["add", "exp", "true_divide", "invert"])
def test_op_function_docs_name_their_signature(name):
    import hologram as hg
    doc = getattr(hg.ops, name).__doc__
    assert "out=None" in doc and "broadcasting" in doc
