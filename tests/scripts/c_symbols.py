"""The functions (and exported variables) each C file of src/ defines and uses, read from the
source text: comments, strings and character literals blanked, preprocessor lines set apart
(a function-like macro's body counts as uses of the header that defines it), then one pass
over the tokens that follows brace depth. At depth 0 a name followed by a parameter list and
a body is a definition (file-local when its declaration says `static`); every identifier
inside a body (or an initializer) is a use, calls and function pointers alike. Needs only
Python, no build: check_layers.py runs it as a ctest. (Against `nm` of the built library it
finds every external function but the per-CPU-level copies named by macros, HG_SIMD_NAME.)
"""
import os
import re

_TOKEN = re.compile(r"[A-Za-z_]\w*|\S")
_KEYWORDS = frozenset("""
    if else for while do switch case default return sizeof _Alignof alignof _Static_assert
    static_assert typedef struct union enum static extern inline const volatile restrict
    register auto void char short int long float double signed unsigned _Bool bool
    __attribute__ __typeof__ typeof goto break continue _Generic __asm__ asm
""".split())


def strip_c(text):
    """The text with comments, strings and char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_preprocessor(text):
    """(code without preprocessor lines, [(macro name, body)] of function-like #defines)."""
    lines = text.split("\n")
    code, macros = [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("#"):
            full = line
            while full.endswith("\\") and i + 1 < len(lines):
                i += 1
                full = full[:-1] + " " + lines[i]
                code.append("")
            m = re.match(r"\s*#\s*define\s+([A-Za-z_]\w*)\(([^)]*)\)(.*)", full)
            if m:
                macros.append((m.group(1), m.group(3)))
            code.append("")
        else:
            code.append(line)
        i += 1
    return "\n".join(code), macros


class FileSymbols:
    """defines: external names this file defines; local: its static ones; uses: names used
    inside its bodies and initializers (macro bodies included)."""

    def __init__(self):
        self.defines = set()
        self.local = set()
        self.uses = set()


def _scan(code, fs):
    toks = _TOKEN.findall(code)
    depth = 0
    stmt = []  # the tokens of the current depth-0 statement
    i = 0
    while i < len(toks):
        t = toks[i]
        if depth > 0:
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    stmt = []
            elif (t[0].isalpha() or t[0] == "_") and t not in _KEYWORDS:
                member = i >= 2 and (toks[i - 1] == "." or toks[i - 2:i] == ["-", ">"])
                if not member:   # a.name and p->name are members
                    fs.uses.add(t)
            i += 1
            continue
        if t == "{":
            _define(stmt, fs)
            depth = 1
        elif t == ";":
            _define(stmt, fs, declaration=True)
            stmt = []
        else:
            stmt.append(t)
        i += 1


def _define(stmt, fs, declaration=False):
    """Records the name a depth-0 statement defines: a function (name, then its parameter
    list, then the body: `declaration` is false) or a variable with an initializer."""
    if not stmt or stmt[0] == "typedef" or "extern" in stmt:
        return
    name = None
    if "=" in stmt:
        name = _var_name(stmt)
    elif not declaration and stmt[-1] == ")":
        # the identifier before the '(' that opens the last parameter list
        d = 0
        for k in range(len(stmt) - 1, -1, -1):
            d += stmt[k] == ")"
            d -= stmt[k] == "("
            if d == 0:
                if k and _is_name(stmt[k - 1]):
                    name = stmt[k - 1]
                break
    if name:
        (fs.local if "static" in stmt else fs.defines).add(name)


def _is_name(t):
    return bool(re.match(r"[A-Za-z_]\w*$", t)) and t not in _KEYWORDS


def _var_name(stmt):
    k = stmt.index("=")
    while k > 0 and stmt[k - 1] == "]":  # name[...] = {...}
        while k > 0 and stmt[k - 1] != "[":
            k -= 1
        k -= 1
    if k > 0 and _is_name(stmt[k - 1]):
        return stmt[k - 1]
    return None


def read_symbols(path):
    """The FileSymbols of one .c or .h file."""
    text = strip_c(open(path, encoding="utf-8").read())
    code, macros = split_preprocessor(text)
    fs = FileSymbols()
    _scan(code, fs)
    for name, body in macros:
        if path.endswith(".c"):
            fs.local.add(name)
        else:
            fs.defines.add(name)
        fs.uses.update(t for t in _TOKEN.findall(body)
                       if (t[0].isalpha() or t[0] == "_") and t not in _KEYWORDS)
    if path.endswith(".h"):
        # a header's static inline functions are its own (every includer gets a copy)
        fs.defines |= fs.local
        fs.local = set()
    return fs


def declared_names(path):
    """The function names a (public) header declares at depth 0."""
    text = strip_c(open(path, encoding="utf-8").read())
    code, _ = split_preprocessor(text)
    return set(re.findall(r"\b(hg_\w+)\s*\(", code))


def scan_tree(src):
    """{relative path: FileSymbols} for every .c and .h under src."""
    out = {}
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                path = os.path.join(root, f)
                out[os.path.relpath(path, src)] = read_symbols(path)
    return out
