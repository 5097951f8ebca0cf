// The elementwise functions of hologram.ops (hg.add, hg.exp, ...) as C callables: a Python
// function around _C.binary cost as much as the op itself on small tensors (519 ns for a
// 1-element add with out=, numpy 239 ns). Each object holds its op code and the package's
// tracing hooks: when an operand is a Traced value (inside @hologram.jit) the call goes to
// the trace dispatcher, as the Python function did; otherwise straight to the C op.
#include "hgpy.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int binary;              // 2 operands (else 1)
    PyObject* code;          // the C op code (int)
    PyObject* name;
    PyObject* qualname;
    PyObject* doc;
    PyObject* traced_type;   // hologram._trace.Traced
    PyObject* dispatch;      // hologram._trace.trace_dispatch(kind, code, *operands)
} HgOpFunction;

#define MAX_ARGS 8

static int is_traced(HgOpFunction* f, PyObject* o) {
    return PyObject_TypeCheck(o, (PyTypeObject*)f->traced_type);
}

static PyObject* op_function_call(PyObject* self, PyObject* const* args, size_t nargsf,
                                  PyObject* kwnames) {
    HgOpFunction* f = (HgOpFunction*)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw + 1 > MAX_ARGS)
        return PyErr_Format(PyExc_TypeError, "%U() takes at most %d arguments (%zd given)",
                            f->name, f->binary ? 3 : 2, nargs + nkw);
    // Operands are the arguments other than out, by position or by name.
    int traced = 0;
    for (Py_ssize_t i = 0; i < nargs + nkw && !traced; i++) {
        if (i >= nargs &&
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i - nargs), "out") == 0)
            continue;
        traced = is_traced(f, args[i]);
    }
    if (traced) {
        // The dispatcher takes the operands in order, given by position or by name (a, b or
        // x); out does not apply to traced calls.
        int nops = f->binary ? 2 : 1;
        PyObject* ops[2] = {NULL, NULL};
        for (Py_ssize_t i = 0; i < nargs && i < nops; i++) ops[i] = args[i];
        for (Py_ssize_t i = 0; i < nkw; i++) {
            PyObject* k = PyTuple_GET_ITEM(kwnames, i);
            int at = f->binary ? (PyUnicode_CompareWithASCIIString(k, "a") == 0   ? 0
                                  : PyUnicode_CompareWithASCIIString(k, "b") == 0 ? 1
                                                                                  : -1)
                               : (PyUnicode_CompareWithASCIIString(k, "x") == 0 ? 0 : -1);
            if (at >= 0 && !ops[at]) ops[at] = args[nargs + i];
            else if (PyUnicode_CompareWithASCIIString(k, "out") != 0)
                return PyErr_Format(PyExc_TypeError, "%U() got an unexpected or repeated "
                                    "keyword argument '%U'", f->name, k);
        }
        if (nargs > nops + 1 || !ops[0] || (nops == 2 && !ops[1]))
            return PyErr_Format(PyExc_TypeError, "%U() takes %d operand(s)", f->name, nops);
        PyObject* call[4];
        call[0] = PyUnicode_FromString(f->binary ? "binary" : "unary");
        if (!call[0]) return NULL;
        call[1] = f->code;
        call[2] = ops[0];
        call[3] = ops[1];
        PyObject* r = PyObject_Vectorcall(f->dispatch, call, (size_t)(2 + nops), NULL);
        Py_DECREF(call[0]);
        return r;
    }
    PyObject* call[MAX_ARGS];
    call[0] = f->code;
    for (Py_ssize_t i = 0; i < nargs + nkw; i++) call[i + 1] = args[i];
    return f->binary ? hgpy_binary_call(call, nargs + 1, kwnames)
                     : hgpy_unary_call(call, nargs + 1, kwnames);
}

static void op_function_dealloc(PyObject* self) {
    HgOpFunction* f = (HgOpFunction*)self;
    Py_XDECREF(f->code);
    Py_XDECREF(f->name);
    Py_XDECREF(f->qualname);
    Py_XDECREF(f->doc);
    Py_XDECREF(f->traced_type);
    Py_XDECREF(f->dispatch);
    Py_TYPE(self)->tp_free(self);
}

static PyObject* get_name(PyObject* self, void* unused) {
    return Py_NewRef(((HgOpFunction*)self)->name);
}
static PyObject* get_qualname(PyObject* self, void* unused) {
    return Py_NewRef(((HgOpFunction*)self)->qualname);
}
static PyObject* get_doc(PyObject* self, void* unused) {
    return Py_NewRef(((HgOpFunction*)self)->doc);
}
static PyObject* get_module(PyObject* self, void* unused) {
    return PyUnicode_FromString("hologram.ops");
}

static PyObject* op_function_repr(PyObject* self) {
    return PyUnicode_FromFormat("<hologram function %U>", ((HgOpFunction*)self)->name);
}

static PyGetSetDef op_function_getset[] = {
    {"__name__", get_name, NULL, NULL, NULL},
    {"__qualname__", get_qualname, NULL, NULL, NULL},
    {"__doc__", get_doc, NULL, NULL, NULL},
    {"__module__", get_module, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject HgOpFunction_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hologram._C.OpFunction",
    .tp_basicsize = sizeof(HgOpFunction),
    .tp_dealloc = op_function_dealloc,
    .tp_vectorcall_offset = offsetof(HgOpFunction, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = op_function_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "An elementwise op of hologram.ops (made by _C.op_function).",
    .tp_getset = op_function_getset,
};

// _C.op_function(kind, code, name, doc, traced_type, dispatch)
PyObject* hgpy_op_function(PyObject* self, PyObject* args) {
    const char* kind;
    PyObject *code, *name, *doc, *traced_type, *dispatch;
    if (!PyArg_ParseTuple(args, "sOUOOO", &kind, &code, &name, &doc, &traced_type, &dispatch))
        return NULL;
    int binary = strcmp(kind, "binary") == 0;
    if (!binary && strcmp(kind, "unary") != 0)
        return PyErr_Format(PyExc_ValueError, "op_function: kind must be 'unary' or 'binary', "
                            "got '%s'", kind);
    if (!PyLong_Check(code) || !PyType_Check(traced_type) || !PyCallable_Check(dispatch))
        return PyErr_Format(PyExc_TypeError, "op_function: expected (kind, int code, str name, "
                            "doc, a type, a callable)");
    HgOpFunction* f = PyObject_New(HgOpFunction, &HgOpFunction_Type);
    if (!f) return NULL;
    f->vectorcall = op_function_call;
    f->binary = binary;
    f->code = Py_NewRef(code);
    f->name = Py_NewRef(name);
    f->qualname = Py_NewRef(name);
    f->doc = Py_NewRef(doc);
    f->traced_type = Py_NewRef(traced_type);
    f->dispatch = Py_NewRef(dispatch);
    return (PyObject*)f;
}
