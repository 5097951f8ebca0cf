"""torch's own signatures, as binders: hologram_torch.functional takes every call form torch takes.

A binder is built once per function at import from torch itself: for a Python function of
``torch.nn.functional`` its ``inspect.signature``; for a torch builtin (``torch.add``,
``torch.nn.functional.gelu``...) its ATen overloads from torch's schema registry
(``torch._C._jit_get_schemas_for_operator``), turned into the forms torch's Python argument
parser exposes: TorchScript-only overloads dropped, ``self`` spelled ``input``, ``out=`` where an
out variant exists, Tensor overloads tried before Scalar ones, Python numbers taken for the
tensors of the arithmetic ops. Binding follows the parser's rules (positional, keyword, defaults;
``int`` rejects bool and float, ``bool`` only a Python bool, ``Scalar`` a number or a 0-d tensor,
a dtype also ``float``/``int``/``bool``/``complex``), and what the parser rejects raises
TypeError, as torch. Values come back as the parser converts them (a 0-d tensor given for an
``int`` or a ``Scalar`` as a Python number, ``float`` as a dtype as torch.float64).

torch_form puts a function on its binder: hologram's executor argument taken off first, out=
and arguments of other types than a Python function's annotations run torch's own function,
and a call hologram refuses raises torch's own exception where torch refuses it too.
"""
import inspect
import numbers
import operator

import torch

import hologram as hg

from . import _bridge as B

_Tensor = torch.Tensor
_REQUIRED = object()
# torch's Python argument parser lets Python numbers stand for these ops' tensors
# (python_arg_parser.cpp's should_allow_numbers_as_tensors) and hides their Scalar overloads
# (gen_python_functions.py's SKIP_PYTHON_BINDINGS_SIGNATURES).
_NUMBERS_AS_TENSORS = frozenset(("add", "sub", "mul", "div"))
_PY_DTYPES = {float: torch.float64, int: torch.int64, bool: torch.bool,
              complex: torch.complex128}


def index(v):
    """An int as torch's parser takes one (not bool, not float; numpy ints and 0-d integer
    tensors), or None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, _Tensor):
        if v.dim() != 0 or v.dtype == torch.bool or v.is_floating_point() or v.is_complex():
            return None
        return int(v.item())
    if isinstance(v, numbers.Integral) or hasattr(type(v), "__index__"):
        try:
            return operator.index(v)
        except TypeError:
            return None
    return None


_BAD = object()   # a value the type does not take


def _is_tensor(v):
    return v if isinstance(v, _Tensor) else _BAD


def _is_tensor_or_number(v):
    return v if isinstance(v, (_Tensor, numbers.Number)) else _BAD


def _is_number(v):
    if isinstance(v, _Tensor):
        return v.item() if v.dim() == 0 else _BAD
    return v if isinstance(v, numbers.Number) else _BAD


def _is_int(v):
    if type(v) is int:
        return v
    i = index(v)
    return _BAD if i is None else i


def _int_list(single):
    def conv(v):
        if single and index(v) is not None:   # int[1]: one int for the list
            return v
        if isinstance(v, (tuple, list, torch.Size)) and all(index(e) is not None for e in v):
            return v
        return _BAD
    return conv


def _is_dtype(v):
    if isinstance(v, torch.dtype):
        return v
    return _PY_DTYPES.get(v, _BAD) if isinstance(v, type) else _BAD


def _of_type(t, conv=None):
    return lambda v: (v if conv is None else conv(v)) if isinstance(v, t) else _BAD


_RULES = {"number": _is_number, "int": _is_int, "List[int]": _int_list(False),
          "List[int]1": _int_list(True), "bool": lambda v: v if type(v) is bool else _BAD,
          "float": _of_type(numbers.Real, float), "str": _of_type(str),
          "ScalarType": _is_dtype, "List[Tensor]": _of_type((tuple, list)),
          "Generator": _of_type(torch.Generator)}


def _converter(kind, numbers_ok):
    """v -> v as torch's parser converts it for a parameter of type kind, or _BAD (None: a
    Python function's parameter, which its body checks)."""
    if kind is None:
        return None
    if kind.startswith("Optional["):
        inner = _converter(kind[9:-1], numbers_ok)
        return lambda v: None if v is None else inner(v)
    if kind == "Tensor":
        return _is_tensor_or_number if numbers_ok else _is_tensor
    if kind not in _RULES:
        raise AssertionError(f"no parser rule for {kind}")   # a schema type none of ours uses
    return _RULES[kind]


class _Param:
    __slots__ = ("name", "kind", "kw_only", "default", "conv")

    def __init__(self, name, kind, kw_only, default, numbers_ok=False):
        self.name, self.kind, self.kw_only, self.default = name, kind, kw_only, default
        self.conv = _converter(kind, numbers_ok)

    def spelled(self):
        """As torch's parser spells it: 'int[1]? dim', 'Number alpha = 1'."""
        t = self.kind or ""
        opt = t.startswith("Optional[")
        t = t[9:-1] if opt else t
        t = {"number": "Number", "List[Tensor]": "Tensor[]", "List[int]": "int[]",
             "List[int]1": "int[1]"}.get(t, t) + ("?" if opt else "")
        d = "" if self.default is _REQUIRED else f" = {self.default!r}"
        return f"{t} {self.name}{d}".strip()


class _Form:
    """One overload: its parameters, in order. lenient (a Python function's form): a value
    that does not match its annotation is kept and the Bound marked not exact."""

    def __init__(self, name, params, numbers_ok, lenient=False):
        self.name, self.params, self.numbers_ok, self.lenient = name, params, numbers_ok, lenient
        self.position = {p.name: i for i, p in enumerate(params)}
        self.npos = sum(not p.kw_only for p in params)
        self.scalars = sum((p.kind or "").endswith("number") or
                           (p.kind or "").endswith("number]") for p in params)

    def bind(self, fn, args, kw):
        """(values by name, None) or (None, why it does not take the call)."""
        n = len(args)
        if n > self.npos:
            return None, (f"{fn}() takes {self.npos} positional argument"
                          f"{'s' if self.npos != 1 else ''} but {n} were given")
        for k in kw:
            i = self.position.get(k)
            if i is None:
                return None, f"{fn}() got an unexpected keyword argument '{k}'"
            if i < n:
                return None, f"{fn}() got multiple values for argument '{k}'"
        out = Bound()
        out.exact = True
        for i, p in enumerate(self.params):
            if i < n:
                given = args[i]
            else:
                given = kw.get(p.name, _REQUIRED) if kw else _REQUIRED
                if given is _REQUIRED:
                    if p.default is _REQUIRED:
                        return None, (f"{fn}() missing required argument '{p.name}' "
                                      f"(pos {i + 1})")
                    out[p.name] = p.default
                    continue
            v = given if p.conv is None else p.conv(given)
            if v is _BAD:
                if not self.lenient:
                    return None, (f"{fn}(): argument '{p.name}' (position {i + 1}) must be "
                                  f"{p.spelled().split(' ')[0]}, not {type(given).__name__}")
                v, out.exact = given, False
            out[p.name] = v
        out.overload = self.name
        return out, None

    def spelled(self):
        pos = [p.spelled() for p in self.params if not p.kw_only]
        kwo = [p.spelled() for p in self.params if p.kw_only]
        return "(" + ", ".join(pos + (["*"] + kwo if kwo else [])) + ")"


class Bound(dict):
    """The call's arguments by torch's names (defaults filled in); .overload names the ATen
    overload taken ('' for the default one, None for a Python function); .exact is False where
    a Python function's argument does not match its annotation as torch's parser would take it
    (torch's function then decides: its inner call refuses most, some it takes); .torch()
    makes the same call to torch's own function."""
    __slots__ = ("overload", "exact", "_call")

    def torch(self):
        ref, args, kw = self._call
        return ref(*args, **kw)


class Binder:
    def __init__(self, public, ref, forms):
        self.public, self.ref, self.forms = public, ref, forms

    def bind(self, args, kw):
        """The Bound arguments of fn(*args, **kw) by torch's signature; TypeError as torch."""
        why = []
        for form in self.forms:
            b, err = form.bind(self.public, args, kw)
            if b is not None:
                b._call = (self.ref, args, kw)
                return b
            why.append(err)
        if len(self.forms) == 1:
            raise TypeError(why[0])
        got = ", ".join([type(a).__name__ for a in args] +
                        [f"{k}={type(v).__name__}" for k, v in kw.items()])
        raise TypeError(f"{self.public}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n" +
                        "\n".join(f" * {f.spelled()}: {w}" for f, w in zip(self.forms, why)))


def _schema_forms(op):
    """torch's Python forms of aten::op: see the module's docstring."""
    numbers_ok = op in _NUMBERS_AS_TENSORS
    schemas = torch._C._jit_get_schemas_for_operator("aten::" + op)

    def is_out(a):
        return a.kwarg_only and a.alias_info is not None and a.alias_info.is_write

    def key(s):
        return tuple((a.name, str(a.real_type), a.kwarg_only) for a in s.arguments
                     if not is_out(a))

    outs = {key(s) for s in schemas if any(is_out(a) for a in s.arguments)}
    forms = []
    for s in schemas:
        args = s.arguments
        if any(is_out(a) for a in args):
            continue
        if not any("Tensor" in str(a.real_type) for a in args):
            continue   # TorchScript's overloads on Python numbers and lists
        if numbers_ok and s.overload_name.startswith("Scalar"):
            continue
        params = []
        for a in args:
            kind = str(a.real_type)
            name = "input" if a.name == "self" and kind == "Tensor" else a.name
            if a.N == 1 and "List[int]" in kind:
                kind = kind.replace("List[int]", "List[int]1")   # int[1]: one int for the list
            default = a.default_value if a.has_default_value() else _REQUIRED
            params.append(_Param(name, kind, a.kwarg_only, default, numbers_ok))
        if key(s) in outs:
            params.append(_Param("out", "Optional[Tensor]", True, None))
        forms.append(_Form(s.overload_name, params, numbers_ok))
    forms.sort(key=lambda f: f.scalars)   # stable: Tensor overloads first, as the parser
    return forms


def binder(public, ref):
    """The binder of hologram_torch.functional.<public>, taking the signature of torch's ref:
    its Python signature, or for a builtin the ATen overloads of its name."""
    try:
        sig = inspect.signature(ref)
    except ValueError:   # a builtin: torch's parser, from the schemas
        return Binder(public, ref, _schema_forms(ref.__name__))
    params = []
    for p in sig.parameters.values():
        default = _REQUIRED if p.default is inspect.Parameter.empty else p.default
        params.append(_Param(p.name, _annotated_kind(p.annotation), p.kind == p.KEYWORD_ONLY,
                             default))
    return Binder(public, ref, [_Form(None, params, False, lenient=True)])


_ANNOTATED = {"Tensor": "Tensor", "int": "int", "bool": "bool", "float": "float", "str": "str",
              "list[int]": "List[int]", "List[int]": "List[int]"}


def _annotated_kind(annotation):
    """The parser type of a torch.nn.functional parameter's annotation ('float | None' ->
    'Optional[float]'), None for one without a rule (its value is not checked)."""
    if annotation is inspect.Parameter.empty:
        return None
    text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
    text = text.replace("torch.", "").replace(" ", "")
    optional = text.startswith("Optional[") or text.endswith("|None")
    text = text[9:-1] if text.startswith("Optional[") else text.removesuffix("|None")
    kind = _ANNOTATED.get(text)
    return None if kind is None else f"Optional[{kind}]" if optional else kind


# The call side: hologram_torch.functional's functions on these binders.
def executor(fn, args, kw):
    """(executor id, the other positional arguments): an Executor may come first or as
    executor= (hologram's one parameter beside torch's)."""
    ex = kw.pop("executor", None)
    if args and isinstance(args[0], hg.Executor):
        if ex is not None:
            raise TypeError(f"{fn}: executor given twice")
        ex, args = args[0], args[1:]
    return B.executor_id(ex), args


def torch_form(ref, writes=None):
    """The decorated impl(ex, a) as a function taking the call forms of torch's ref: a is the
    call bound by ref's signature (_signatures.Bound). out= runs ref itself (torch's resize /
    dtype rules and errors, exactly), and so does a value of another type than ref's annotation
    says; impl runs ref (a.torch()) for any other argument it cannot honour exactly. When impl
    raises, torch's exception for the call is raised where torch refuses it too, except when
    the argument named writes is given (torch would write its input before refusing)."""
    def deco(impl):
        name = impl.__name__
        fn = f"hologram_torch.functional.{name}"
        bind = binder(name, ref).bind

        def f(*args, **kw):
            ex, args = executor(fn, args, kw)
            a = bind(args, kw)
            if a.get("out") is not None or not a.exact:
                return a.torch()
            try:
                return impl(ex, a)
            except Exception as e:   # noqa: BLE001 (re-raised: torch's or this one)
                if writes is not None and a[writes] is not None:
                    raise
                torch_error(e, a.torch)

        f.__name__ = f.__qualname__ = name
        f.__doc__ = impl.__doc__
        return f
    return deco


def torch_error(e, call):
    """hologram rejected a call (e): where torch rejects it too, torch's own exception (its type
    and message, as torch raises it); else hologram's (a call hologram cannot run)."""
    try:
        call()
    except Exception as te:   # noqa: BLE001 (torch's, whatever it is)
        raise te from None
    raise e
