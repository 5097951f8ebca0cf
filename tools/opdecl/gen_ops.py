#!/usr/bin/env python3
"""Generates and checks the op surfaces from tools/opdecl/ops_decl.py (one record per op).

    python3 tools/opdecl/gen_ops.py            rewrite the generated files and regions
    python3 tools/opdecl/gen_ops.py --check    exit 1 naming every file that disagrees

Generated (whole file, or the region between `ops-decl: begin` / `ops-decl: end` markers):
  python/src/<src>_decl.h   argument names, required counts, defaults, docstrings, the method
                            table entries and the bodies of the `generated` bindings
  python/hologram/_C.pyi    the stubs of the op functions of hologram._C
  docs/<page>.md            the table of the ops the page documents
Checked only (hand-written, with logic beyond the signature):
  include/hologram/ops.h    each declared C prototype (the public header stays byte for byte),
                            and every function there has a record or an ELSEWHERE entry
  python/hologram/ops.py    each Python function's parameter names, order and defaults
  python/hologram/ops.pyi   each Python function's stub: names, order, types, which have defaults
  python/src/<src>.c        custom bindings exist and take their arguments from the header;
                            no declared op is bound by hand
The generated files are committed (readable in review, nothing to run at wheel build time) and
`--check` runs as the ctest op_decl_check and before the Python extension builds. Python 3.9+.
"""
import argparse
import ast
import os
import re
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECL = "tools/opdecl/ops_decl.py"
COMMAND = "python3 tools/opdecl/gen_ops.py"
BEGIN, END = "ops-decl: begin", "ops-decl: end"
ELSEWHERE = {}   # ops.h functions with no record (set by load)

# kind -> (_C.pyi type, ops.pyi type, what the binding does with it)
KINDS = {
    "tensor": ("_Operand", "_Operand", "input"),
    "tensor?": ("Optional[_Operand]", "Optional[_Operand]", "input?"),
    "operand": ("_Operand", "_Operand", "custom"),            # a tensor or a Python number
    "operand?": ("Optional[_Operand]", "Optional[_Operand]", "custom"),
    "tensor!": ("Tensor", "_C.Tensor", "custom"),             # written in place
    "tensor!?": ("Optional[Tensor]", "Optional[_C.Tensor]", "custom"),
    "tensors": ("Sequence[_Operand]", "Sequence[_Operand]", "custom"),
    "out": ("Optional[Tensor]", "_Out", "out"),               # None: the library allocates
    "out!": ("Tensor", "_C.Tensor", "out!"),                  # required, written in place
    "int": ("int", "int", "int"),
    "u64": ("int", "int", "custom"),
    "double": ("float", "float", "double"),
    "bool": ("bool", "bool", "bool"),
    "reduction": ("str", "_Reduction", "reduction"),
    "unary_op": ("int", "str", "unary_op"),
    "binary_op": ("int", "str", "custom"),
    "reduce_op": ("int", "str", "custom"),
    "axes": ("_Axis", "_Axis", "custom"),
    "dtype": ("_DType", "npt.DTypeLike", "custom"),
    "scalar": ("Union[bool, int, float]", "Union[bool, int, float]", "custom"),
}
OPCODE_COUNT = {"unary_op": "HG_UNARY_COUNT"}
REDUCTIONS = {"none": "HG_REDUCTION_NONE", "mean": "HG_REDUCTION_MEAN",
              "sum": "HG_REDUCTION_SUM"}


class DeclError(Exception):
    pass


# --- the declaration ---------------------------------------------------------------------------
class Arg:
    def __init__(self, text, index):
        m = re.fullmatch(r"(\w+): ([\w!?]+)(?: = (.+))?", text)
        if not m or m.group(2) not in KINDS:
            raise DeclError(f"{DECL}: bad argument {text!r} (want 'name: kind[ = default]', "
                            f"kinds {sorted(KINDS)})")
        self.name, self.kind, self.default_src = m.group(1), m.group(2), m.group(3)
        self.index = index
        self.has_default = self.default_src is not None
        self.default = None


class PyParam:
    def __init__(self, name, type_src, has_default, default_src, kwonly):
        self.name, self.type_src, self.kwonly = name, type_src, kwonly
        self.has_default, self.default_src, self.default = has_default, default_src, None


class PyFn:
    def __init__(self, text, record):
        m = re.fullmatch(r"(\w+)\((.*)\)(?:->(\w+))?", text, re.S)
        if not m:
            raise DeclError(f"{DECL}: {record.name}: bad py entry {text!r}")
        self.name, self.c_fn = m.group(1), m.group(3) or record.c_names[0]
        if self.c_fn not in record.c_names:
            raise DeclError(f"{DECL}: {record.name}: {self.name} reaches {self.c_fn}, which is "
                            f"not among its C functions {record.c_names}")
        self.params, kwonly = [], False
        for item in split_top(m.group(2)):
            if item == "*":
                kwonly = True
                continue
            pm = re.fullmatch(r"(\w+)(?:: ([^=]+?))?(?:=(.*))?", item, re.S)
            if not pm:
                raise DeclError(f"{DECL}: {record.name}: bad parameter {item!r} of {self.name}")
            name, type_src, dflt = pm.group(1), pm.group(2), pm.group(3)
            arg = record.arg(name)
            if type_src is None:
                if arg is None:
                    raise DeclError(f"{DECL}: {self.name}: {name} needs a type (no binding "
                                    f"argument of that name)")
                type_src = KINDS[arg.kind][1]
            self.params.append(PyParam(name, type_src, dflt is not None, dflt, kwonly))


def split_top(s):
    """Splits s at the commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Record:
    def __init__(self, d):
        self.d = d
        self.name = d["name"]
        self.src, self.body, self.doc = d["src"], d["body"], d.get("doc", "")
        self.fn = d.get("fn", self.name)
        self.c = [norm_proto(p) for p in d["c"]]
        self.c_names = [p.split("(")[0] for p in self.c]
        self.args = [Arg(t, i) for i, t in enumerate(d["args"])]
        first_default = next((a.index for a in self.args if a.has_default), len(self.args))
        self.nreq = d.get("nreq", first_default)
        self.variant = d.get("variant")
        self.returns = d.get("returns", "tensor")
        self.dtypes, self.computes = d.get("dtypes", ""), d.get("computes", "")
        self.py = [PyFn(t, self) for t in d.get("py", [])]
        self.py_impl = d.get("py_impl", {})
        for a in self.args[self.nreq:]:
            if not a.has_default:
                raise DeclError(f"{DECL}: {self.name}: optional argument {a.name} has no default")

    def arg(self, name):
        return next((a for a in self.args if a.name == name), None)


def norm_proto(p):
    p = re.sub(r"\s+", " ", p.strip())
    return p.replace("( ", "(").replace(" )", ")")


def load(root):
    ns = {}
    path = os.path.join(root, DECL)
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), ns)
    records = [Record(d) for d in ns["OPS"]]
    global ELSEWHERE
    ELSEWHERE = ns.get("ELSEWHERE", {})
    names = [r.name for r in records]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise DeclError(f"{DECL}: declared twice: {sorted(dup)}")
    # Defaults: Python literals, or another record's argument (`cross_entropy.reduction`).
    env = {"nan": float("nan")}   # a double's default may be nan (NAN in C)
    for r in records:
        own = {}
        for a in r.args:
            if a.has_default:
                a.default = eval(a.default_src, {"__builtins__": {}}, env)
                own[a.name] = a.default
        env[r.name] = types.SimpleNamespace(**own)
    for r in records:
        for fn in r.py:
            for p in fn.params:
                if not p.has_default:
                    continue
                if p.default_src.strip() == "":
                    arg = r.arg(p.name)
                    if arg is None or not arg.has_default:
                        raise DeclError(f"{DECL}: {fn.name}: '{p.name}=' names no default of "
                                        f"{r.name}")
                    p.default = arg.default
                else:
                    p.default = eval(p.default_src, {"__builtins__": {}}, env)
    return records


# --- generated C: python/src/<src>_decl.h ------------------------------------------------------
def c_literal(arg):
    v = arg.default
    if arg.kind == "reduction":
        return REDUCTIONS[v]
    if arg.kind == "bool":
        return "1" if v else "0"
    if arg.kind == "double":
        return "NAN" if v != v else repr(float(v))
    if v is None:
        return "NULL"
    return str(v)


def py_repr(v):
    return repr(v)


def doc_signature(r):
    parts = []
    for a in r.args:
        parts.append(a.name if a.index < r.nreq else f"{a.name}={py_repr(a.default)}")
    return f"{r.name}({', '.join(parts)})"


def c_params(proto):
    inner = proto[proto.index("(") + 1:-1]
    out = []
    for p in inner.split(","):
        m = re.fullmatch(r"(.+?)\s*(\w+)", p.strip())
        out.append((m.group(1).strip(), m.group(2)))
    return out


def c_call(r, proto):
    fn = proto.split("(")[0]
    exprs = []
    for ctype, pname in c_params(proto):
        a = r.arg(pname)
        if a is None:
            raise DeclError(f"{DECL}: {r.name}: {fn}'s parameter {pname} is no argument of the "
                            f"binding (generated bodies pass arguments by name)")
        role = KINDS[a.kind][2]
        if role == "input":
            exprs.append(f"T(&c, {required_inputs(r).index(a)})")
        elif role == "input?":
            exprs.append(f"i_{a.name} >= 0 ? T(&c, i_{a.name}) : NULL")
        elif role in ("out", "out!"):
            exprs.append("&c.out")
        elif role in ("int", "double"):
            exprs.append(f"({ctype})v_{a.name}")
        elif role == "unary_op":
            exprs.append(f"({ctype})v_{a.name}")
        elif role == "reduction":
            exprs.append(f"v_{a.name}")
        else:
            raise DeclError(f"{DECL}: {r.name}: kind {a.kind} needs a custom body")
    return fn, exprs


def required_inputs(r):
    return [a for a in r.args if KINDS[a.kind][2] == "input"]


def wrap_join(prefix, items, sep, suffix, indent):
    """prefix + items joined by sep + suffix, broken after a separator where a line would pass
    100 columns (continuations indented by `indent`)."""
    lines, cur = [], prefix + items[0]
    for item in items[1:]:
        if len(cur) + len(sep) + 1 + len(item) + len(suffix) > 100:
            lines.append(cur + sep)
            cur = " " * indent + item
        else:
            cur += f"{sep} {item}"
    lines.append(cur + suffix)
    return lines


def call_lines(prefix, call, indent):
    """A C call statement `prefix fn(args));` wrapped between its arguments."""
    fn, args = call
    return wrap_join(f"{prefix}{fn}(", args, ",", "));", indent)


def gen_body(r):
    head = f"static PyObject* f_{r.name}("
    if len(head) + 64 <= 100:
        L = [f"{head}PyObject* m, PyObject* const* args, Py_ssize_t nargs,",
             f"{' ' * len(head)}PyObject* kwnames) {{"]
    else:
        L = [f"{head}PyObject* m, PyObject* const* args,",
             f"{' ' * len(head)}Py_ssize_t nargs, PyObject* kwnames) {{"]
    L += [
          f"    PARSE_DECL({r.name});"]
    conds, flag = [], None
    if r.variant:
        flag = r.arg(r.variant[0])
        L.append(f"    int v_{flag.name} = a_[{flag.index}] ? PyObject_IsTrue(a_[{flag.index}]) : "
                 f"{c_literal(flag)};")
        L.append(f"    if (v_{flag.name}) c.fn = \"{r.variant[2]}\";")
        conds.append(f"v_{flag.name} < 0")
    opcode = None
    for a in r.args:
        role = KINDS[a.kind][2]
        if a is flag:
            continue
        if role in ("int", "unary_op"):
            L.append(f"    long long v_{a.name} = 0;")
            conds.append(f"hgpy_get_int(&c, a_[{a.index}], \"{a.name}\", "
                         f"{c_literal(a) if a.has_default else 0}, &v_{a.name})")
            if role == "unary_op":
                opcode = a
        elif role == "double":
            L.append(f"    double v_{a.name} = 0.0;")
            conds.append(f"hgpy_get_dbl(&c, a_[{a.index}], \"{a.name}\", {c_literal(a)}, "
                         f"&v_{a.name})")
        elif role == "reduction":
            L.append(f"    hg_reduction v_{a.name} = {c_literal(a)};")
            conds.append(f"hgpy_get_reduction(&c, a_[{a.index}], &v_{a.name})")
        elif role == "bool":
            raise DeclError(f"{DECL}: {r.name}: a bool other than the variant flag needs a "
                            f"custom body")
    if opcode is not None:
        # The code is checked before any operand is converted (a bad code converts nothing).
        L += wrap_join("    FAIL_IF(", conds, " ||", ");", 12)
        L += [f"    if (v_{opcode.name} < 0 || v_{opcode.name} >= {OPCODE_COUNT[opcode.kind]}) {{",
              "        call_end(&c);",
              "        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT,",
              f"                              \"{r.fn}: {opcode.name} code %lld out of range\", "
              f"v_{opcode.name});",
              "    }"]
        conds = []
    for a in r.args:
        role = KINDS[a.kind][2]
        if role == "out":
            conds.append(f"hgpy_call_out(&c, a_[{a.index}])")
        elif role == "out!":
            conds.append(f"need_out(&c, a_[{a.index}])")
    for a in required_inputs(r):
        conds.append(f"hgpy_call_arg(&c, a_[{a.index}], 0, \"{a.name}\") < 0")
    L += wrap_join("    FAIL_IF(", conds, " ||", ");", 12)
    for a in r.args:
        if KINDS[a.kind][2] == "input?":
            L.append(f"    int i_{a.name} = -1;")
            test = f"    if (a_[{a.index}] && a_[{a.index}] != Py_None)"
            get = f"FAIL_IF((i_{a.name} = hgpy_call_arg(&c, a_[{a.index}], 0, \"{a.name}\")) < 0);"
            L += [f"{test} {get}"] if len(test) + len(get) < 100 else [test, f"        {get}"]
    L.append("    hg_status s;")
    calls = [c_call(r, p) for p in r.c]
    if r.variant:
        alt = r.c_names.index(r.variant[1])
        L += call_lines(f"    if (v_{flag.name}) CALL_RUN(&c, s, s = ", calls[alt], 12)
        L += call_lines("    else CALL_RUN(&c, s, s = ", calls[1 - alt], 12)
    else:
        L += call_lines("    CALL_RUN(&c, s, s = ", calls[0], 12)
    L += ["    return hgpy_call_result(&c, s);", "}", ""]
    return L


def gen_header(records, src):
    guard = f"HGPY_{src.upper()}_DECL_H"
    L = [f"// GENERATED from {DECL} by tools/opdecl/gen_ops.py: do not edit; change",
         f"// the declaration and run `{COMMAND}`. Included once, by {src}.c,",
         "// after the helpers the bodies use. Per op: its argument names, required count, name in",
         "// messages, defaults (HGPY_DFLT_<op>_<arg>, for the bindings written by hand), the body",
         "// of a generated binding, and its method table entry (in HGPY_DECL_METHODS_<src>).",
         f"#ifndef {guard}", f"#define {guard}", ""]
    mine = [r for r in records if r.src == src]
    for r in mine:
        L.append(f"// --- {r.name}: {', '.join(r.c_names)}")
        L += wrap_join(f"static const char* const hgpy_names_{r.name}[] = {{",
                       [f'"{a.name}"' for a in r.args], ",", "};", 4)
        L.append(f"#define HGPY_NREQ_{r.name} {r.nreq}")
        L.append(f"#define HGPY_FN_{r.name} \"{r.fn}\"")
        if r.body == "custom":
            for a in r.args:
                if a.has_default and a.default is not None and not isinstance(a.default, str):
                    L.append(f"#define HGPY_DFLT_{r.name}_{a.name} {c_literal(a)}")
        L.append("")
        if r.body == "generated":
            L += gen_body(r)
    L.append(f"#define HGPY_DECL_METHODS_{src} \\")
    for r in mine:
        L.append(f"    HGPY_FASTCALL(\"{r.name}\", f_{r.name}, \\")
        doc = doc_signature(r)
        while doc:   # adjacent string literals of at most 76 characters, cut after a comma
            cut = len(doc) if len(doc) <= 76 else doc.rindex(", ", 0, 76) + 2
            L.append(f"                  \"{doc[:cut]}\"{'), ' if cut == len(doc) else ' '}\\")
            doc = doc[cut:]
    L += ["", f"#endif  // {guard}", ""]
    return "\n".join(L)


# --- generated stubs and docs ------------------------------------------------------------------
def wrap_def(head, params, tail):
    """`head(params` + tail (") -> T: ...") wrapped at 100 columns, continuation under the '('."""
    line = f"{head}({', '.join(params)}{tail}"
    if len(line) <= 100:
        return [line]
    out, cur, ind = [], f"{head}(", " " * (len(head) + 1)
    for i, p in enumerate(params):
        piece = p + (", " if i < len(params) - 1 else tail)
        if len(cur) + len(piece.rstrip()) > 100 and cur.strip() != f"{head}(":
            out.append(cur.rstrip())
            cur = ind
        cur += piece
    out.append(cur.rstrip())
    return out


def gen_c_stubs(records):
    L = []
    for r in records:
        params = []
        for a in r.args:
            t = KINDS[a.kind][0]
            params.append(f"{a.name}: {t}" + (" = ..." if a.index >= r.nreq else ""))
        ret = "None" if r.returns == "None" else "_PyTensor"
        L += wrap_def(f"def {r.name}", params, f") -> {ret}: ...")
    return L


def c_short(proto):
    return f"{proto.split('(')[0]}({', '.join(n for _, n in c_params(proto))})"


def py_signature(fn):
    parts, star = [], False
    for p in fn.params:
        if p.kwonly and not star:
            parts.append("*")
            star = True
        parts.append(f"{p.name}={py_repr(p.default)}" if p.has_default else p.name)
    return f"{fn.name}({', '.join(parts)})"


def gen_doc_table(records, page):
    L = ["| C function | Python (`hologram.ops`) | dtypes | computes |", "|---|---|---|---|"]
    for r in records:
        if r.doc != page:
            continue
        computes = r.computes if isinstance(r.computes, list) else [r.computes] * len(r.c)
        for proto, cname, what in zip(r.c, r.c_names, computes):
            pys = [f"`{py_signature(f)}`" for f in r.py if f.c_fn == cname]
            L.append(f"| `{c_short(proto)}` | {'<br>'.join(pys) or '—'} | {r.dtypes} | {what} |")
    return L


# --- regions -----------------------------------------------------------------------------------
def replace_region(text, lines, path):
    """text with the lines between the BEGIN and END marker lines replaced."""
    src = text.split("\n")
    b = [i for i, s in enumerate(src) if BEGIN in s]
    e = [i for i, s in enumerate(src) if END in s]
    if len(b) != 1 or len(e) != 1 or b[0] > e[0]:
        raise DeclError(f"{path}: needs one '{BEGIN}' line and one '{END}' line after it")
    return "\n".join(src[:b[0] + 1] + lines + src[e[0]:])


def outputs(root, records):
    """{relative path: wanted text} of every generated file and region."""
    out = {}
    for src in sorted({r.src for r in records}):
        out[f"python/src/{src}_decl.h"] = gen_header(records, src)
    stub = "python/hologram/_C.pyi"
    out[stub] = replace_region(read(root, stub), gen_c_stubs(records), stub)
    for page in sorted({r.doc for r in records if r.doc}):
        path = f"docs/{page}.md"
        out[path] = replace_region(read(root, path), gen_doc_table(records, page), path)
    return out


def read(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read()


# --- checks of the hand-written files ----------------------------------------------------------
def check_header(root, records):
    rel = "include/hologram/ops.h"
    text = read(root, rel)
    protos = {}
    for m in re.finditer(r"HG_API hg_status (hg_\w+)\((.*?)\);", text, re.S):
        protos[m.group(1)] = norm_proto(f"{m.group(1)}({m.group(2)})")
    errs = []
    declared = {n for r in records for n in r.c_names}
    for m in re.finditer(r"HG_API [\w ]+?\**\s*(hg_\w+)\(", text):
        name = m.group(1)
        if name not in declared and name not in ELSEWHERE:
            errs.append(f"{rel}: {name} is neither declared in {DECL} nor listed in its "
                        f"ELSEWHERE (where its Python surface is)")
    for name in sorted(set(ELSEWHERE) & declared):
        errs.append(f"{DECL}: {name} is declared and listed in ELSEWHERE")
    for r in records:
        for p, name in zip(r.c, r.c_names):
            if name not in protos:
                errs.append(f"{rel}: {name} (declared by {r.name}) is not declared there")
            elif protos[name] != p:
                errs.append(f"{rel}: {name} differs from its declaration in {DECL}:\n"
                            f"    header:      {protos[name]}\n    declaration: {p}\n"
                            f"  the header is written by hand: make the two agree")
    return errs


def py_defs(tree):
    defs = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defs.setdefault(node.name, []).append(node)
    return defs


def params_of(fdef):
    a = fdef.args
    pos = a.posonlyargs + a.args
    out = []
    for i, p in enumerate(pos):
        k = i - (len(pos) - len(a.defaults))
        out.append((p, False, a.defaults[k] if k >= 0 else None))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p, True, d))
    return out


def check_python(root, records):
    errs = []
    impl_rel, stub_rel = "python/hologram/ops.py", "python/hologram/ops.pyi"
    impl, stub = py_defs(ast.parse(read(root, impl_rel))), py_defs(ast.parse(read(root, stub_rel)))
    for r in records:
        for fn in r.py:
            want = [(p.name, p.kwonly) for p in fn.params]
            # ops.py: names, order, keyword-only split and default values.
            iname = r.py_impl.get(fn.name, fn.name)
            if iname is not None:
                got = impl.get(iname.split(".")[0])
                if got and "." in iname:   # a function defined inside a factory
                    got = [n for n in ast.walk(got[0]) if isinstance(n, ast.FunctionDef) and
                           n.name == iname.split(".")[1]]
                if not got:
                    errs.append(f"{impl_rel}: no function {iname} (declared by {r.name})")
                else:
                    ps = params_of(got[0])
                    if [(p.arg, kw) for p, kw, _ in ps] != want:
                        errs.append(f"{impl_rel}: {iname}'s parameters "
                                    f"{[(p.arg, kw) for p, kw, _ in ps]} differ from {r.name}'s "
                                    f"declaration {want} (name, keyword-only)")
                    else:
                        for (p, _, d), dp in zip(ps, fn.params):
                            if dp.has_default != (d is not None):
                                errs.append(f"{impl_rel}: {iname}({p.arg}): default "
                                            f"{'missing' if dp.has_default else 'not declared'}")
                            elif d is not None and literal(d) != dp.default:
                                errs.append(f"{impl_rel}: {iname}({p.arg}={ast.unparse(d)}): the "
                                            f"declared default is {dp.default!r}")
            # ops.pyi: the (tensor form of the) stub.
            defs = stub.get(fn.name, [])
            defs = [d for d in defs if not (d.args.args and d.args.args[0].arg == "executor")]
            if not defs:
                errs.append(f"{stub_rel}: no stub of {fn.name} (declared by {r.name})")
                continue
            ps = params_of(defs[0])
            if [(p.arg, kw) for p, kw, _ in ps] != want:
                errs.append(f"{stub_rel}: {fn.name}'s parameters "
                            f"{[(p.arg, kw) for p, kw, _ in ps]} differ from the declaration "
                            f"{want}")
                continue
            for (p, _, d), dp in zip(ps, fn.params):
                t = ast.unparse(ast.parse(dp.type_src, mode="eval").body)
                got_t = ast.unparse(p.annotation) if p.annotation is not None else None
                if got_t != t:
                    errs.append(f"{stub_rel}: {fn.name}({p.arg}: {got_t}): declared {t}")
                if dp.has_default != (d is not None):
                    errs.append(f"{stub_rel}: {fn.name}({p.arg}): default "
                                f"{'missing' if dp.has_default else 'not declared'}")
    return errs


def literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def check_bindings(root, records):
    errs = []
    for src in sorted({r.src for r in records}):
        rel = f"python/src/{src}.c"
        text = read(root, rel)
        mine = [r for r in records if r.src == src]
        if f'#include "{src}_decl.h"' not in text or f"HGPY_DECL_METHODS_{src}" not in text:
            errs.append(f"{rel}: must include {src}_decl.h and list HGPY_DECL_METHODS_{src}")
        declared = {r.name for r in records}
        for m in re.finditer(r'HGPY_FASTCALL\("(\w+)"', text):
            if m.group(1) in declared:
                errs.append(f"{rel}: {m.group(1)} is declared in {DECL}: its method entry "
                            f"comes from {src}_decl.h, not by hand")
        for r in mine:
            if r.body == "custom":
                if not re.search(rf"static PyObject\* f_{r.name}\(", text):
                    errs.append(f"{rel}: the custom binding f_{r.name} is missing")
                elif f"PARSE_DECL({r.name})" not in text:
                    errs.append(f"{rel}: f_{r.name} must parse with PARSE_DECL({r.name})")
            elif re.search(rf"static PyObject\* f_{r.name}\(", text):
                errs.append(f"{rel}: f_{r.name} is generated ({src}_decl.h): remove the hand "
                            f"copy or declare it body=\"custom\"")
    return errs


# --- main --------------------------------------------------------------------------------------
def run(root, check):
    records = load(root)
    wanted = outputs(root, records)
    stale = []
    for rel, text in wanted.items():
        path = os.path.join(root, rel)
        have = open(path).read() if os.path.exists(path) else None
        if have != text:
            stale.append(rel)
            if not check:
                with open(path, "w") as f:
                    f.write(text)
    errs = check_header(root, records) + check_python(root, records) + \
        check_bindings(root, records)
    return stale, errs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 on drift")
    ap.add_argument("--root", default=ROOT, help="the source tree (default: this one)")
    args = ap.parse_args(argv)
    try:
        stale, errs = run(args.root, args.check)
    except DeclError as e:
        print(f"gen_ops: {e}", file=sys.stderr)
        return 1
    for rel in stale:
        if args.check:
            print(f"gen_ops: {rel} is out of date with {DECL}: run `{COMMAND}` to rewrite it",
                  file=sys.stderr)
        else:
            print(f"gen_ops: wrote {rel}")
    for e in errs:
        print(f"gen_ops: {e}", file=sys.stderr)
    return 1 if errs or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
