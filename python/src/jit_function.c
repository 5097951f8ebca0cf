// hologram._C.JitFunction: the callable @hologram.jit returns (python/hologram/jit.py). A call
// whose arguments match a signature seen before runs here, in C: the outputs are allocated and
// the compiled plan runs, with no Python frame in between (the Python wrapper cost 2 us of a
// 2.9 us 1-element fused chain). Anything else (a new signature, arguments the Python side
// converts, keyword arguments) goes to the Python function `slow`, which traces, compiles and
// registers the signature with _add.
//
// A signature: the executor the plan runs on; per argument a Tensor's dtype and shape (exact
// type hologram.Tensor), or a Python bool / int / float and its exact value (scalars are baked
// into the plan; floats compare by their bits, so 0.0 and -0.0 are different signatures).
#include <string.h>
#include "hgpy.h"

#define JIT_MAX_ENTRIES 64   // more signatures than this still run, through `slow`
#define JIT_STACK_VIEWS 16

enum { JIT_TENSOR, JIT_BOOL, JIT_INT, JIT_FLOAT };

typedef struct jit_arg {
    int kind;
    hg_dtype dtype;
    int32_t ndim;
    int64_t shape[HG_MAX_DIMS];
    long long i;     // JIT_BOOL / JIT_INT
    double f;        // JIT_FLOAT (compared by bits)
} jit_arg;

typedef struct jit_entry {
    HgPlan* plan;          // strong; plan->ex is the signature's executor
    PyObject* captured;    // tuple of Tensors bound after the arguments (strong)
    PyObject* structure;   // None (one output), or the tuple / list type (strong)
    int32_t nargs, ntensors, nouts;
    jit_arg* outs;         // dtype, ndim and shape of each output
    jit_arg args[];
} jit_entry;

typedef struct HgJitFunction {
    PyObject_HEAD
    PyObject* slow;        // the Python path
    PyObject* executor;    // the executor the decorator fixed, or None
    PyObject* dict;        // __name__, __doc__, __wrapped__, cache, plans, fallbacks, ...
    vectorcallfunc vectorcall;
    int n;
    jit_entry* entries[JIT_MAX_ENTRIES];
} HgJitFunction;

// The executor of a call: the fixed one, else that of the first Tensor argument.
static HgExecutor* call_executor(HgJitFunction* self, PyObject* const* args, Py_ssize_t n) {
    if (self->executor != Py_None) return (HgExecutor*)self->executor;
    for (Py_ssize_t i = 0; i < n; i++)
        if (Py_TYPE(args[i]) == hgpy_tensor_type && ((HgTensor*)args[i])->base)
            return ((HgTensor*)args[i])->base->owner;
    return NULL;
}

// The signature of one argument; 0 when it has one, -1 when only the Python path takes it.
static int arg_signature(PyObject* a, jit_arg* s) {
    if (Py_TYPE(a) == hgpy_tensor_type) {
        const HgTensor* t = (const HgTensor*)a;
        if (!t->base) return -1;
        s->kind = JIT_TENSOR;
        s->dtype = t->t.dtype;
        s->ndim = t->t.ndim;
        memcpy(s->shape, t->t.shape, sizeof(int64_t) * (size_t)t->t.ndim);
        return 0;
    }
    if (PyBool_Check(a)) {
        s->kind = JIT_BOOL;
        s->i = a == Py_True;
        return 0;
    }
    if (PyLong_CheckExact(a)) {
        int overflow = 0;
        s->kind = JIT_INT;
        s->i = PyLong_AsLongLongAndOverflow(a, &overflow);
        if (overflow || (s->i == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return -1;
        }
        return 0;
    }
    if (PyFloat_CheckExact(a)) {
        s->kind = JIT_FLOAT;
        s->f = PyFloat_AS_DOUBLE(a);
        return 0;
    }
    return -1;
}

static int arg_matches(const jit_arg* s, PyObject* a) {
    jit_arg x;
    if (arg_signature(a, &x) || x.kind != s->kind) return 0;
    switch (s->kind) {
    case JIT_TENSOR:
        return x.dtype == s->dtype && x.ndim == s->ndim &&
               !memcmp(x.shape, s->shape, sizeof(int64_t) * (size_t)s->ndim);
    case JIT_FLOAT:
        return !memcmp(&x.f, &s->f, sizeof x.f);
    default:
        return x.i == s->i;
    }
}

static jit_entry* lookup(HgJitFunction* self, PyObject* const* args, Py_ssize_t n) {
    HgExecutor* ex = call_executor(self, args, n);
    if (!ex) return NULL;
    for (int e = 0; e < self->n; e++) {
        jit_entry* en = self->entries[e];
        if (en->nargs != n || en->plan->ex != ex) continue;
        Py_ssize_t i = 0;
        while (i < n && arg_matches(&en->args[i], args[i])) i++;
        if (i == n) return en;
    }
    return NULL;
}

static PyObject* run_entry(jit_entry* en, PyObject* const* args, Py_ssize_t n) {
    Py_ssize_t ncap = PyTuple_GET_SIZE(en->captured);
    int32_t ni = (int32_t)(en->ntensors + ncap), no = en->nouts;
    hg_tensor stack_views[JIT_STACK_VIEWS];
    HgBuffer* stack_bases[JIT_STACK_VIEWS];
    PyObject* stack_outs[JIT_STACK_VIEWS];
    size_t nv = (size_t)ni + (size_t)no;
    int heap = nv > JIT_STACK_VIEWS;
    hg_tensor* views = heap ? PyMem_Malloc(nv * sizeof *views) : stack_views;
    HgBuffer** bases = heap ? PyMem_Malloc(nv * sizeof *bases) : stack_bases;
    PyObject** outs = heap ? PyMem_Calloc((size_t)no + 1, sizeof *outs) : stack_outs;
    PyObject* result = NULL;
    if (!views || !bases || !outs) {
        PyErr_NoMemory();
        goto done;
    }
    if (!heap) memset(outs, 0, sizeof(PyObject*) * (size_t)no);
    int32_t k = 0;
    int64_t elems = 0;
    for (Py_ssize_t i = 0; i < n + ncap; i++) {
        PyObject* a = i < n ? args[i] : PyTuple_GET_ITEM(en->captured, i - n);
        if (i < n && en->args[i].kind != JIT_TENSOR) continue;
        HgTensor* t = (HgTensor*)a;
        if (hgpy_tensor_check(t)) goto done;
        views[k] = t->t;
        bases[k++] = t->base;
        elems += hgpy_numel(&t->t);
    }
    for (int32_t o = 0; o < no; o++) {
        const jit_arg* s = &en->outs[o];
        outs[o] = hgpy_tensor_empty(en->plan->ex, s->ndim, s->shape, s->dtype,
                                    HG_BUFFER_UNINITIALIZED, "jit");
        if (!outs[o]) goto done;
        views[ni + o] = ((HgTensor*)outs[o])->t;
        bases[ni + o] = ((HgTensor*)outs[o])->base;
    }
    if (hgpy_plan_run_views(en->plan, ni, views, bases, no, views + ni, bases + ni, elems))
        goto done;
    if (en->structure == Py_None) {
        result = outs[0];
        outs[0] = NULL;
    } else {
        result = en->structure == (PyObject*)&PyList_Type ? PyList_New(no) : PyTuple_New(no);
        for (int32_t o = 0; result && o < no; o++) {
            if (PyList_Check(result)) PyList_SET_ITEM(result, o, outs[o]);
            else PyTuple_SET_ITEM(result, o, outs[o]);
            outs[o] = NULL;
        }
    }
done:
    if (outs)
        for (int32_t o = 0; o < no; o++) Py_XDECREF(outs[o]);
    if (heap) {
        PyMem_Free(views);
        PyMem_Free(bases);
        PyMem_Free(outs);
    }
    return result;
}

static PyObject* JitFunction_vectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                                        PyObject* kwnames) {
    HgJitFunction* self = (HgJitFunction*)callable;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (!kwnames) {
        jit_entry* en = lookup(self, args, n);
        if (en) return run_entry(en, args, n);
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static void entry_free(jit_entry* en) {
    Py_XDECREF(en->plan);
    Py_XDECREF(en->captured);
    Py_XDECREF(en->structure);
    PyMem_Free(en->outs);
    PyMem_Free(en);
}

// _add(args, plan, captured, outputs, structure): registers the signature of args (a tuple)
// for plan. outputs: [(dtype name, shape)]; structure: None, tuple or list. Returns True when
// registered; False when args have no C signature, the plan runs on another executor than
// the call's, or the table is full.
static PyObject* JitFunction_add(HgJitFunction* self, PyObject* a) {
    PyObject *args, *plan, *captured, *outputs, *structure;
    if (!PyArg_ParseTuple(a, "O!O!OOO:_add", &PyTuple_Type, &args, &HgPlan_Type, &plan,
                          &captured, &outputs, &structure))
        return NULL;
    if (structure != Py_None && structure != (PyObject*)&PyTuple_Type &&
        structure != (PyObject*)&PyList_Type)
        Py_RETURN_FALSE;   // tuple / list subclasses: the Python path builds them
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    HgExecutor* ex = call_executor(self, &PyTuple_GET_ITEM(args, 0), n);
    if (self->n >= JIT_MAX_ENTRIES || !ex || ((HgPlan*)plan)->ex != ex ||
        lookup(self, &PyTuple_GET_ITEM(args, 0), n))
        Py_RETURN_FALSE;
    PyObject* cap = PySequence_Tuple(captured);
    PyObject* outs = cap ? PySequence_Fast(outputs, "_add: outputs must be a sequence") : NULL;
    if (!outs) {
        Py_XDECREF(cap);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cap); i++)
        if (Py_TYPE(PyTuple_GET_ITEM(cap, i)) != hgpy_tensor_type) {
            Py_DECREF(cap);
            Py_DECREF(outs);
            Py_RETURN_FALSE;   // the Python path binds (and checks) these
        }
    Py_ssize_t no = PySequence_Fast_GET_SIZE(outs);
    jit_entry* en = PyMem_Calloc(1, sizeof *en + (size_t)n * sizeof(jit_arg));
    if (en) en->outs = PyMem_Calloc((size_t)no + 1, sizeof(jit_arg));
    if (!en || !en->outs) {
        if (en) PyMem_Free(en);
        Py_DECREF(cap);
        Py_DECREF(outs);
        return PyErr_NoMemory();
    }
    en->plan = (HgPlan*)Py_NewRef(plan);
    en->captured = cap;
    en->structure = Py_NewRef(structure);
    en->nargs = (int32_t)n;
    en->nouts = (int32_t)no;
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        ok = !arg_signature(PyTuple_GET_ITEM(args, i), &en->args[i]);
        if (ok && en->args[i].kind == JIT_TENSOR) en->ntensors++;
    }
    for (Py_ssize_t o = 0; ok && o < no; o++) {
        PyObject* dt_shape = PySequence_Fast_GET_ITEM(outs, o);
        PyObject *dt, *shape_obj, *shape = NULL;
        jit_arg* s = &en->outs[o];
        int bad = !PyArg_ParseTuple(dt_shape, "OO", &dt, &shape_obj) ||
                  hgpy_dtype_from_object(dt, &s->dtype) || !(shape = PySequence_Tuple(shape_obj));
        if (!bad && PyTuple_GET_SIZE(shape) > HG_MAX_DIMS) {
            PyErr_SetString(PyExc_ValueError, "_add: output shape has too many dimensions");
            bad = 1;
        }
        s->kind = JIT_TENSOR;
        s->ndim = bad ? 0 : (int32_t)PyTuple_GET_SIZE(shape);
        for (int32_t d = 0; !bad && d < s->ndim; d++) {
            s->shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
            if (s->shape[d] < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "_add: negative output dimension");
                bad = 1;
            }
        }
        Py_XDECREF(shape);
        if (bad) {
            Py_DECREF(outs);
            entry_free(en);
            return NULL;
        }
    }
    Py_DECREF(outs);
    if (!ok || (en->structure == Py_None && en->nouts != 1)) {
        entry_free(en);
        Py_RETURN_FALSE;
    }
    self->entries[self->n++] = en;
    Py_RETURN_TRUE;
}

static int JitFunction_init(HgJitFunction* self, PyObject* args, PyObject* kw) {
    PyObject *slow, *executor = Py_None;
    static char* names[] = {"slow", "executor", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:JitFunction", names, &slow, &executor))
        return -1;
    if (!PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_TypeError, "JitFunction: slow must be callable");
        return -1;
    }
    if (executor != Py_None && !PyObject_TypeCheck(executor, &HgExecutor_Type)) {
        PyErr_Format(PyExc_TypeError, "JitFunction: executor must be a hologram.Executor or "
                     "None, got %.100s", Py_TYPE(executor)->tp_name);
        return -1;
    }
    Py_XSETREF(self->slow, Py_NewRef(slow));
    Py_XSETREF(self->executor, Py_NewRef(executor));
    self->vectorcall = JitFunction_vectorcall;
    return 0;
}

static PyObject* JitFunction_new(PyTypeObject* type, PyObject* args, PyObject* kw) {
    HgJitFunction* self = (HgJitFunction*)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->executor = Py_NewRef(Py_None);
    self->vectorcall = JitFunction_vectorcall;
    return (PyObject*)self;
}

static int JitFunction_traverse(HgJitFunction* self, visitproc visit, void* arg) {
    Py_VISIT(self->slow);
    Py_VISIT(self->executor);
    Py_VISIT(self->dict);
    for (int e = 0; e < self->n; e++) {
        Py_VISIT(self->entries[e]->plan);
        Py_VISIT(self->entries[e]->captured);
    }
    return 0;
}

static int JitFunction_clear(HgJitFunction* self) {
    Py_CLEAR(self->slow);
    Py_CLEAR(self->executor);
    Py_CLEAR(self->dict);
    int n = self->n;
    self->n = 0;
    for (int e = 0; e < n; e++) entry_free(self->entries[e]);
    return 0;
}

static void JitFunction_dealloc(HgJitFunction* self) {
    PyObject_GC_UnTrack(self);
    JitFunction_clear(self);
    Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* JitFunction_signatures(HgJitFunction* self, void* unused) {
    return PyLong_FromLong(self->n);
}

static PyMethodDef JitFunction_methods[] = {
    {"_add", (PyCFunction)JitFunction_add, METH_VARARGS,
     "_add(args, plan, captured, outputs, structure) -> bool: run plan in C for calls with "
     "args' signature"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef JitFunction_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"c_signatures", (getter)JitFunction_signatures, NULL,
     "How many signatures run in C (at most 64; the others through the Python path).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject HgJitFunction_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hologram._C.JitFunction",
    .tp_basicsize = sizeof(HgJitFunction),
    .tp_dealloc = (destructor)JitFunction_dealloc,
    .tp_vectorcall_offset = offsetof(HgJitFunction, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "JitFunction(slow, executor=None): the callable @hologram.jit returns; calls "
              "with a registered signature run the compiled plan in C, the others call slow.",
    .tp_traverse = (traverseproc)JitFunction_traverse,
    .tp_clear = (inquiry)JitFunction_clear,
    .tp_methods = JitFunction_methods,
    .tp_getset = JitFunction_getset,
    .tp_dictoffset = offsetof(HgJitFunction, dict),
    .tp_init = (initproc)JitFunction_init,
    .tp_new = JitFunction_new,
};
