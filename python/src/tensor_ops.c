// The op library on Tensors: operand conversion, the operator slots of Tensor (a + b, ...), and
// the _C functions behind hologram.ops (unary, binary, reduce, softmax, matmul, losses, data).
//
// Every function takes tensors (Tensor, Buffer as 1-D, or anything the package's _as_tensor hook
// turns into a Tensor: numpy arrays, lists, numpy scalars) and Python scalars where the library
// takes hg_scalar. `out=None` lets the library allocate the result on the inputs' executor;
// an `out` Tensor receives it (numpy's out rules, docs/ops.md) and is returned.
//
// The GIL: small calls (fewer than HGPY_GIL_ELEMS input elements) keep it (releasing and
// re-taking it costs about as much as a 1-element op, numpy does the same); larger ones release
// it while the library works, holding each Buffer (users) so a concurrent free() waits.
#include <string.h>
#include "hgpy.h"

#define HGPY_GIL_ELEMS 16384
#define MAX_OPERANDS 8

static PyObject* g_as_tensor = NULL;        // hologram._interop._as_tensor(obj, executor)
static PyObject* g_default_executor = NULL; // hologram._interop.default_executor()

static PyObject* m_set_hooks(PyObject* self, PyObject* args) {
    PyObject *as_tensor, *dflt;
    if (!PyArg_ParseTuple(args, "OO", &as_tensor, &dflt)) return NULL;
    Py_INCREF(as_tensor);
    Py_INCREF(dflt);
    Py_XSETREF(g_as_tensor, as_tensor);
    Py_XSETREF(g_default_executor, dflt);
    Py_RETURN_NONE;
}

static int64_t numel_of(const hg_tensor* t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}

// --- operands -----------------------------------------------------------------------------------
static void tensor_of_buffer(HgBuffer* b, hg_tensor* t) {
    memset(t, 0, sizeof *t);
    t->buffer = b->buf;
    t->dtype = b->dtype;
    t->ndim = 1;
    t->shape[0] = (int64_t)b->count;
    t->strides[0] = 1;
}

static HgExecutor* default_executor(void) {
    if (!g_default_executor) {
        PyErr_SetString(PyExc_RuntimeError, "hologram: the package did not register its hooks");
        return NULL;
    }
    PyObject* e = PyObject_CallNoArgs(g_default_executor);
    if (!e) return NULL;
    if (!PyObject_TypeCheck(e, &HgExecutor_Type)) {
        Py_DECREF(e);
        PyErr_SetString(PyExc_TypeError, "default executor hook returned a non-Executor");
        return NULL;
    }
    Py_DECREF(e);   // the package keeps it alive
    return (HgExecutor*)e;
}

int hgpy_operand_get(PyObject* obj, HgExecutor* executor, int allow_scalar, int allow_other,
                     const char* what, hgpy_operand* out) {
    out->is_scalar = 0;
    out->base = NULL;
    out->keep = NULL;
    if (hgpy_is_tensor(obj)) {
        HgTensor* t = (HgTensor*)obj;
        if (hgpy_tensor_check(t)) return -1;
        out->t = t->t;
        out->base = t->base;
        return 0;
    }
    if (Py_TYPE(obj) == &HgBuffer_Type) {
        HgBuffer* b = (HgBuffer*)obj;
        if (hgpy_buffer_check(b)) return -1;
        tensor_of_buffer(b, &out->t);
        out->base = b;
        return 0;
    }
    if (allow_scalar) {
        if (PyBool_Check(obj)) {
            out->is_scalar = 1;
            out->s = hg_scalar_b(obj == Py_True);
            return 0;
        }
        if (PyLong_CheckExact(obj) || (PyLong_Check(obj) && !PyBool_Check(obj))) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
            if (v == -1 && PyErr_Occurred()) return -1;
            if (overflow) {
                PyErr_Format(PyExc_OverflowError, "%s: Python int %R does not fit in int64 "
                             "(scalar operands are int64 or float64; use a uint64 Tensor)", what,
                             obj);
                return -1;
            }
            out->is_scalar = 1;
            out->s = hg_scalar_i(v);
            return 0;
        }
        if (PyFloat_Check(obj)) {
            out->is_scalar = 1;
            out->s = hg_scalar_f(PyFloat_AS_DOUBLE(obj));
            return 0;
        }
    }
    if (!g_as_tensor) {
        PyErr_SetString(PyExc_RuntimeError, "hologram: the package did not register its hooks");
        return -1;
    }
    if (!executor && !(executor = default_executor())) return -1;
    PyObject* t = PyObject_CallFunctionObjArgs(g_as_tensor, obj, (PyObject*)executor, NULL);
    if (!t) {
        if (allow_other && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            return 1;
        }
        return -1;
    }
    if (!hgpy_is_tensor(t)) {
        Py_DECREF(t);
        PyErr_Format(PyExc_TypeError, "%s: _as_tensor hook returned a non-Tensor", what);
        return -1;
    }
    out->t = ((HgTensor*)t)->t;
    out->base = ((HgTensor*)t)->base;
    out->keep = t;
    return 0;
}

void hgpy_operand_release(hgpy_operand* o) { Py_CLEAR(o->keep); }

// --- one library call ---------------------------------------------------------------------------
// Operands, the executor results go to, the output and the GIL decision for one call.
typedef struct call {
    const char* fn;
    hgpy_operand op[MAX_OPERANDS];
    int n;
    HgExecutor* ex;          // of the first tensor operand (NULL until one is seen)
    PyObject* out_obj;       // the user's out Tensor (borrowed) or NULL
    hg_tensor out;           // out->buffer.handle == 0: the library allocates
    HgBuffer* out_base;
    int64_t elems;           // input elements, for the GIL decision
    HgBuffer* held[MAX_OPERANDS + 1];
    int nheld;
} call;

// Only the fields read before they are written are set: the struct is large (operand views)
// and a one-element op is over in a few hundred nanoseconds.
static void call_init(call* c, const char* fn) {
    c->fn = fn;
    c->n = 0;
    c->ex = NULL;
    c->out_obj = NULL;
    c->out.buffer.handle = 0;   // the library allocates the result
    c->out_base = NULL;
    c->elems = 0;
    c->nheld = 0;
}

static void call_end(call* c) {
    for (int i = 0; i < c->n; i++) hgpy_operand_release(&c->op[i]);
}

// Adds an operand (a tensor, or a scalar when allow_scalar); returns its index or -1.
static int call_arg(call* c, PyObject* obj, int allow_scalar, const char* name) {
    hgpy_operand* o = &c->op[c->n];
    char what[96];
    snprintf(what, sizeof what, "%s: argument '%s'", c->fn, name);
    int r = hgpy_operand_get(obj, c->ex, allow_scalar, 0, what, o);
    if (r) return -1;
    c->n++;
    if (!o->is_scalar) {
        if (!c->ex) c->ex = o->base->owner;
        c->elems += numel_of(&o->t);
    }
    return c->n - 1;
}

// The out argument: None/NULL, a Tensor or a Buffer (1-D view). Must be writable.
static int call_out(call* c, PyObject* obj) {
    if (!obj || obj == Py_None) return 0;
    HgBuffer* b;
    if (hgpy_is_tensor(obj)) {
        HgTensor* t = (HgTensor*)obj;
        if (hgpy_tensor_check(t)) return -1;
        c->out = t->t;
        b = t->base;
    } else if (Py_TYPE(obj) == &HgBuffer_Type) {
        b = (HgBuffer*)obj;
        if (hgpy_buffer_check(b)) return -1;
        tensor_of_buffer(b, &c->out);
    } else {
        PyErr_Format(PyExc_TypeError, "%s: out must be a hologram.Tensor or Buffer, got %.100s",
                     c->fn, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (b->readonly) {
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: out wraps read-only memory", c->fn);
        return -1;
    }
    c->out_obj = obj;
    c->out_base = b;
    if (!c->ex) c->ex = b->owner;
    return 0;
}

static int call_release_gil(call* c) { return c->elems >= HGPY_GIL_ELEMS; }

static void call_hold(call* c) {
    c->nheld = 0;
    for (int i = 0; i < c->n; i++)
        if (!c->op[i].is_scalar) c->held[c->nheld++] = c->op[i].base;
    if (c->out_base) c->held[c->nheld++] = c->out_base;
    for (int i = 0; i < c->nheld; i++) hgpy_buffer_hold(c->held[i]);
}

static void call_unhold(call* c) {
    for (int i = 0; i < c->nheld; i++) hgpy_buffer_unhold(c->held[i]);
}

// Runs `stmt` (which sets hg_status s) with the GIL released for large calls.
#define CALL_RUN(c, s, stmt)                     \
    do {                                         \
        if (call_release_gil(c)) {               \
            call_hold(c);                        \
            Py_BEGIN_ALLOW_THREADS               \
            stmt;                                \
            Py_END_ALLOW_THREADS                 \
            call_unhold(c);                      \
        } else {                                 \
            stmt;                                \
        }                                        \
    } while (0)

// The Python result of a call: the out object, or a Tensor over the buffer the library made.
static PyObject* call_result(call* c, hg_status s) {
    PyObject* r;
    if (s != HG_OK) r = hgpy_raise_status(s, NULL);
    else if (c->out_obj) r = Py_NewRef(c->out_obj);
    else r = hgpy_tensor_from_result(c->ex, &c->out);
    call_end(c);
    return r;
}

static const hg_tensor* T(call* c, int i) { return &c->op[i].t; }

// --- operators ----------------------------------------------------------------------------------
PyObject* hgpy_binary_operator(hg_binary_op op, PyObject* a, PyObject* b, int inplace) {
    int a_first = hgpy_is_tensor(a);
    PyObject* tobj = a_first ? a : b;
    PyObject* other = a_first ? b : a;
    HgTensor* t = (HgTensor*)tobj;
    if (hgpy_tensor_check(t)) return NULL;
    hgpy_operand o;
    int r = hgpy_operand_get(other, t->base->owner, 1, 1, "operator", &o);
    if (r < 0) return NULL;
    if (r > 0) Py_RETURN_NOTIMPLEMENTED;
    call c;
    call_init(&c, hg_binary_op_name(op));
    c.ex = t->base->owner;
    c.elems = numel_of(&t->t) + (o.is_scalar ? 0 : numel_of(&o.t));
    c.op[0].t = t->t;
    c.op[0].base = t->base;
    c.op[0].is_scalar = 0;
    c.op[0].keep = NULL;
    c.op[1] = o;
    c.n = 2;
    if (inplace) {
        if (!a_first) {
            call_end(&c);
            Py_RETURN_NOTIMPLEMENTED;
        }
        if (call_out(&c, a)) {
            call_end(&c);
            return NULL;
        }
    }
    hg_status s;
    if (o.is_scalar) {
        CALL_RUN(&c, s, s = hg_binary_scalar(op, &c.op[0].t, o.s, !a_first, &c.out));
    } else {
        const hg_tensor* x = a_first ? &c.op[0].t : &c.op[1].t;
        const hg_tensor* y = a_first ? &c.op[1].t : &c.op[0].t;
        CALL_RUN(&c, s, s = hg_binary(op, x, y, &c.out));
    }
    return call_result(&c, s);
}

PyObject* hgpy_unary_operator(hg_unary_op op, PyObject* x) {
    HgTensor* t = (HgTensor*)x;
    if (hgpy_tensor_check(t)) return NULL;
    call c;
    call_init(&c, hg_unary_op_name(op));
    c.ex = t->base->owner;
    c.elems = numel_of(&t->t);
    c.op[0].t = t->t;
    c.op[0].base = t->base;
    c.op[0].is_scalar = 0;
    c.op[0].keep = NULL;
    c.n = 1;
    hg_status s;
    CALL_RUN(&c, s, s = hg_unary(op, &c.op[0].t, &c.out));
    return call_result(&c, s);
}

PyObject* hgpy_matmul_operator(PyObject* a, PyObject* b, int inplace) {
    HgTensor* t = (HgTensor*)(hgpy_is_tensor(a) ? a : b);
    if (hgpy_tensor_check(t)) return NULL;
    if (inplace) {
        // numpy refuses a @= b unless the result keeps a's shape; keep it simple: out = a.
        PyObject* r = hgpy_matmul_operator(a, b, 0);
        return r;
    }
    call c;
    call_init(&c, "matmul");
    c.ex = t->base->owner;
    hgpy_operand oa, ob;
    int r = hgpy_operand_get(a, c.ex, 0, 1, "matmul", &oa);
    if (r) return r < 0 ? NULL : (Py_INCREF(Py_NotImplemented), Py_NotImplemented);
    r = hgpy_operand_get(b, c.ex, 0, 1, "matmul", &ob);
    if (r) {
        hgpy_operand_release(&oa);
        return r < 0 ? NULL : (Py_INCREF(Py_NotImplemented), Py_NotImplemented);
    }
    c.op[0] = oa;
    c.op[1] = ob;
    c.n = 2;
    c.elems = numel_of(&oa.t) + numel_of(&ob.t);
    hg_status s;
    CALL_RUN(&c, s, s = hg_matmul(&c.op[0].t, &c.op[1].t, &c.out));
    return call_result(&c, s);
}

// --- argument helpers ---------------------------------------------------------------------------
static int get_int(call* c, PyObject* o, const char* name, long long dflt, long long* out) {
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    PyObject* ix = PyNumber_Index(o);
    if (!ix) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be an int, got %.100s", c->fn,
                     name, Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = PyLong_AsLongLong(ix);
    Py_DECREF(ix);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int get_dbl(call* c, PyObject* o, const char* name, double dflt, double* out) {
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be a number, got %.100s", c->fn,
                     name, Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = v;
    return 0;
}

static int get_u64(call* c, PyObject* o, const char* name, uint64_t dflt, uint64_t* out) {
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be an int, got %.100s", c->fn,
                     name, Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = PyLong_AsUnsignedLongLongMask(o);   // any Python int: its low 64 bits
    return *out == (uint64_t)-1 && PyErr_Occurred() ? -1 : 0;
}

// axis: None (all), an int, or a sequence of ints.
static int get_axes(call* c, PyObject* o, int32_t* axes, int32_t* naxes, int* all) {
    *all = 0;
    if (!o || o == Py_None) {
        *all = 1;
        *naxes = 0;
        return 0;
    }
    if (PyLong_Check(o)) {
        long v = PyLong_AsLong(o);
        if (v == -1 && PyErr_Occurred()) return -1;
        axes[0] = (int32_t)v;
        *naxes = 1;
        return 0;
    }
    PyObject* fast = PySequence_Fast(o, "axis must be None, an int or a tuple of ints");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > HG_MAX_DIMS) {
        Py_DECREF(fast);
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: %zd axes given, at most %d", c->fn, n,
                       HG_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        axes[i] = (int32_t)v;
    }
    *naxes = (int32_t)n;
    Py_DECREF(fast);
    return 0;
}

static int get_reduction(call* c, PyObject* o, hg_reduction* out) {
    long long v;
    if (o && PyUnicode_Check(o)) {
        const char* s = PyUnicode_AsUTF8(o);
        if (!s) return -1;
        if (!strcmp(s, "none")) *out = HG_REDUCTION_NONE;
        else if (!strcmp(s, "mean")) *out = HG_REDUCTION_MEAN;
        else if (!strcmp(s, "sum")) *out = HG_REDUCTION_SUM;
        else {
            hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: reduction must be 'none', 'mean' or "
                           "'sum', got '%s'", c->fn, s);
            return -1;
        }
        return 0;
    }
    if (get_int(c, o, "reduction", HG_REDUCTION_MEAN, &v)) return -1;
    if (v < 0 || v >= HG_REDUCTION_COUNT) {
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: reduction code %lld out of range", c->fn, v);
        return -1;
    }
    *out = (hg_reduction)v;
    return 0;
}

// A scalar for hg_fill / hg_clip_scalar: bool, int or float.
static int get_scalar(call* c, PyObject* o, const char* name, hg_scalar* out) {
    hgpy_operand tmp;
    if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o)) {
        if (hgpy_operand_get(o, c->ex, 1, 0, name, &tmp)) return -1;
        *out = tmp.s;
        return 0;
    }
    double v = PyFloat_AsDouble(o);   // numpy scalars and other numbers
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be a number, got %.100s", c->fn,
                     name, Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = hg_scalar_f(v);
    return 0;
}

#define PARSE(fn, names, nreq)                                                                  \
    PyObject* a_[sizeof(names) / sizeof(names[0])];                                             \
    if (hgpy_parse_args(fn, names, (int)(sizeof(names) / sizeof(names[0])), nreq, args, nargs,  \
                        kwnames, a_))                                                           \
        return NULL;                                                                            \
    call c;                                                                                     \
    call_init(&c, fn)

#define FAIL_IF(cond) \
    do {              \
        if (cond) {   \
            call_end(&c); \
            return NULL;  \
        }             \
    } while (0)

// --- elementwise --------------------------------------------------------------------------------
static PyObject* f_unary(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"op", "x", "out"};
    PARSE("unary", names, 2);
    long long op = 0;
    FAIL_IF(get_int(&c, a_[0], "op", 0, &op));
    if (op < 0 || op >= HG_UNARY_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "unary: op code %lld out of range", op);
    }
    c.fn = hg_unary_op_name((hg_unary_op)op);
    FAIL_IF(call_arg(&c, a_[1], 0, "x") < 0 || call_out(&c, a_[2]));
    hg_status s;
    CALL_RUN(&c, s, s = hg_unary((hg_unary_op)op, T(&c, 0), &c.out));
    return call_result(&c, s);
}

static PyObject* f_binary(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"op", "a", "b", "out"};
    PARSE("binary", names, 3);
    long long op = 0;
    FAIL_IF(get_int(&c, a_[0], "op", 0, &op));
    if (op < 0 || op >= HG_BINARY_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "binary: op code %lld out of range", op);
    }
    c.fn = hg_binary_op_name((hg_binary_op)op);
    // The first tensor operand decides the executor: look at b first when a is a scalar.
    int a_scalar = PyBool_Check(a_[1]) || PyLong_Check(a_[1]) || PyFloat_Check(a_[1]);
    int b_scalar = PyBool_Check(a_[2]) || PyLong_Check(a_[2]) || PyFloat_Check(a_[2]);
    FAIL_IF(call_out(&c, a_[3]));
    int ia, ib;
    if (a_scalar && !b_scalar) {
        FAIL_IF((ib = call_arg(&c, a_[2], 0, "b")) < 0 || (ia = call_arg(&c, a_[1], 1, "a")) < 0);
    } else {
        FAIL_IF((ia = call_arg(&c, a_[1], !b_scalar, "a")) < 0 ||
                (ib = call_arg(&c, a_[2], 1, "b")) < 0);
    }
    hg_status s;
    if (c.op[ib].is_scalar)
        CALL_RUN(&c, s, s = hg_binary_scalar((hg_binary_op)op, T(&c, ia), c.op[ib].s, 0, &c.out));
    else if (c.op[ia].is_scalar)
        CALL_RUN(&c, s, s = hg_binary_scalar((hg_binary_op)op, T(&c, ib), c.op[ia].s, 1, &c.out));
    else
        CALL_RUN(&c, s, s = hg_binary((hg_binary_op)op, T(&c, ia), T(&c, ib), &c.out));
    return call_result(&c, s);
}

static PyObject* f_where(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"cond", "a", "b", "out"};
    PARSE("where", names, 3);
    FAIL_IF(call_out(&c, a_[3]) || call_arg(&c, a_[0], 0, "cond") < 0 ||
            call_arg(&c, a_[1], 0, "a") < 0 || call_arg(&c, a_[2], 0, "b") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_where(T(&c, 0), T(&c, 1), T(&c, 2), &c.out));
    return call_result(&c, s);
}

static PyObject* f_fma(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"a", "b", "c", "out"};
    PARSE("fma", names, 3);
    FAIL_IF(call_out(&c, a_[3]) || call_arg(&c, a_[0], 0, "a") < 0 ||
            call_arg(&c, a_[1], 0, "b") < 0 || call_arg(&c, a_[2], 0, "c") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_fma(T(&c, 0), T(&c, 1), T(&c, 2), &c.out));
    return call_result(&c, s);
}

// clip(x, lo, hi, out): lo/hi None, Python numbers (weak promotion, as numpy) or tensors.
static PyObject* f_clip(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"x", "lo", "hi", "out"};
    PARSE("clip", names, 1);
    FAIL_IF(call_out(&c, a_[3]) || call_arg(&c, a_[0], 0, "x") < 0);
    PyObject *lo = a_[1] ? a_[1] : Py_None, *hi = a_[2] ? a_[2] : Py_None;
    int lo_num = PyBool_Check(lo) || PyLong_Check(lo) || PyFloat_Check(lo);
    int hi_num = PyBool_Check(hi) || PyLong_Check(hi) || PyFloat_Check(hi);
    hg_status s;
    hg_scalar sl, sh;
    if (lo_num && hi_num) {
        FAIL_IF(get_scalar(&c, lo, "lo", &sl) || get_scalar(&c, hi, "hi", &sh));
        CALL_RUN(&c, s, s = hg_clip_scalar(T(&c, 0), sl, sh, &c.out));
        return call_result(&c, s);
    }
    if (lo_num && hi == Py_None) {
        FAIL_IF(get_scalar(&c, lo, "lo", &sl));
        CALL_RUN(&c, s, s = hg_binary_scalar(HG_BINARY_MAXIMUM, T(&c, 0), sl, 0, &c.out));
        return call_result(&c, s);
    }
    if (hi_num && lo == Py_None) {
        FAIL_IF(get_scalar(&c, hi, "hi", &sh));
        CALL_RUN(&c, s, s = hg_binary_scalar(HG_BINARY_MINIMUM, T(&c, 0), sh, 0, &c.out));
        return call_result(&c, s);
    }
    int ilo = -1, ihi = -1;
    if (lo != Py_None) FAIL_IF((ilo = call_arg(&c, lo, 0, "lo")) < 0);
    if (hi != Py_None) FAIL_IF((ihi = call_arg(&c, hi, 0, "hi")) < 0);
    CALL_RUN(&c, s, s = hg_clip(T(&c, 0), ilo >= 0 ? T(&c, ilo) : NULL,
                                ihi >= 0 ? T(&c, ihi) : NULL, &c.out));
    return call_result(&c, s);
}

static PyObject* f_cast(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"x", "dtype", "out"};
    PARSE("astype", names, 2);
    hg_dtype dt;
    FAIL_IF(hgpy_dtype_from_object(a_[1], &dt));
    FAIL_IF(call_out(&c, a_[2]) || call_arg(&c, a_[0], 0, "x") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_cast(T(&c, 0), dt, &c.out));
    return call_result(&c, s);
}

// --- reductions, softmax, norms -----------------------------------------------------------------
static PyObject* f_reduce(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"op", "x", "axis", "keepdims", "out", "ddof"};
    PARSE("reduce", names, 2);
    long long op = 0;
    FAIL_IF(get_int(&c, a_[0], "op", 0, &op));
    if (op < 0 || op >= HG_REDUCE_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "reduce: op code %lld out of range", op);
    }
    c.fn = hg_reduce_op_name((hg_reduce_op)op);
    int32_t axes[HG_MAX_DIMS], naxes;
    int all, keep = a_[3] ? PyObject_IsTrue(a_[3]) : 0;
    double ddof = 0.0;
    FAIL_IF(keep < 0 || get_axes(&c, a_[2], axes, &naxes, &all) ||
            get_dbl(&c, a_[5], "ddof", 0.0, &ddof));
    FAIL_IF(call_out(&c, a_[4]) || call_arg(&c, a_[1], 0, "x") < 0);
    const int32_t* ax = all ? NULL : axes;
    hg_status s;
    if (op == HG_REDUCE_VAR && ddof != 0.0)
        CALL_RUN(&c, s, s = hg_var(T(&c, 0), naxes, ax, keep, ddof, &c.out));
    else if (op == HG_REDUCE_STD && ddof != 0.0)
        CALL_RUN(&c, s, s = hg_std(T(&c, 0), naxes, ax, keep, ddof, &c.out));
    else
        CALL_RUN(&c, s, s = hg_reduce((hg_reduce_op)op, T(&c, 0), naxes, ax, keep, &c.out));
    return call_result(&c, s);
}

static PyObject* f_softmax(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"x", "axis", "log", "out"};
    PARSE("softmax", names, 1);
    long long axis = 0;
    int lg = a_[2] ? PyObject_IsTrue(a_[2]) : 0;
    if (lg) c.fn = "log_softmax";
    FAIL_IF(lg < 0 || get_int(&c, a_[1], "axis", -1, &axis));
    FAIL_IF(call_out(&c, a_[3]) || call_arg(&c, a_[0], 0, "x") < 0);
    hg_status s;
    if (lg) CALL_RUN(&c, s, s = hg_log_softmax(T(&c, 0), (int32_t)axis, &c.out));
    else CALL_RUN(&c, s, s = hg_softmax(T(&c, 0), (int32_t)axis, &c.out));
    return call_result(&c, s);
}

static PyObject* f_layer_norm(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
    static const char* const names[] = {"x", "nnorm", "weight", "bias", "eps", "out"};
    PARSE("layer_norm", names, 2);
    long long nn = 1;
    double eps = 0.0;
    FAIL_IF(get_int(&c, a_[1], "nnorm", 1, &nn) || get_dbl(&c, a_[4], "eps", 1e-5, &eps));
    FAIL_IF(call_out(&c, a_[5]) || call_arg(&c, a_[0], 0, "x") < 0);
    int iw = -1, ib = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = call_arg(&c, a_[2], 0, "weight")) < 0);
    if (a_[3] && a_[3] != Py_None) FAIL_IF((ib = call_arg(&c, a_[3], 0, "bias")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_layer_norm(T(&c, 0), (int32_t)nn, iw >= 0 ? T(&c, iw) : NULL,
                                      ib >= 0 ? T(&c, ib) : NULL, eps, &c.out));
    return call_result(&c, s);
}

static PyObject* f_rms_norm(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    static const char* const names[] = {"x", "nnorm", "weight", "eps", "out"};
    PARSE("rms_norm", names, 2);
    long long nn = 1;
    double eps = 0.0;
    FAIL_IF(get_int(&c, a_[1], "nnorm", 1, &nn) || get_dbl(&c, a_[3], "eps", 1e-6, &eps));
    FAIL_IF(call_out(&c, a_[4]) || call_arg(&c, a_[0], 0, "x") < 0);
    int iw = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = call_arg(&c, a_[2], 0, "weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_rms_norm(T(&c, 0), (int32_t)nn, iw >= 0 ? T(&c, iw) : NULL, eps,
                                    &c.out));
    return call_result(&c, s);
}

// --- linear algebra -----------------------------------------------------------------------------
static PyObject* f_matmul(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"a", "b", "out"};
    PARSE("matmul", names, 2);
    FAIL_IF(call_out(&c, a_[2]) || call_arg(&c, a_[0], 0, "a") < 0 ||
            call_arg(&c, a_[1], 0, "b") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_matmul(T(&c, 0), T(&c, 1), &c.out));
    return call_result(&c, s);
}

static PyObject* f_matvec(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"a", "x", "out"};
    PARSE("matvec", names, 2);
    FAIL_IF(call_out(&c, a_[2]) || call_arg(&c, a_[0], 0, "a") < 0 ||
            call_arg(&c, a_[1], 0, "x") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_matvec(T(&c, 0), T(&c, 1), &c.out));
    return call_result(&c, s);
}

// gemm(a, b, c, alpha=1, beta=0, trans_a=False, trans_b=False): c = alpha op(a) op(b) + beta c.
static PyObject* f_gemm(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"a", "b", "c", "alpha", "beta", "trans_a", "trans_b"};
    PARSE("gemm", names, 3);
    double alpha = 1.0, beta = 0.0;
    int ta = a_[5] ? PyObject_IsTrue(a_[5]) : 0, tb = a_[6] ? PyObject_IsTrue(a_[6]) : 0;
    FAIL_IF(ta < 0 || tb < 0 || get_dbl(&c, a_[3], "alpha", 1.0, &alpha) ||
            get_dbl(&c, a_[4], "beta", 0.0, &beta));
    if (!hgpy_is_tensor(a_[2]) && Py_TYPE(a_[2]) != &HgBuffer_Type) {
        call_end(&c);
        return PyErr_Format(PyExc_TypeError, "gemm: c must be a hologram.Tensor (it is written), "
                            "got %.100s", Py_TYPE(a_[2])->tp_name);
    }
    FAIL_IF(call_out(&c, a_[2]) || call_arg(&c, a_[0], 0, "a") < 0 ||
            call_arg(&c, a_[1], 0, "b") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_gemm(ta, tb, alpha, T(&c, 0), T(&c, 1), beta, &c.out));
    return call_result(&c, s);
}

// --- losses -------------------------------------------------------------------------------------
static PyObject* f_mse_loss(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    static const char* const names[] = {"pred", "target", "reduction", "out"};
    PARSE("mse_loss", names, 2);
    hg_reduction red = HG_REDUCTION_MEAN;
    FAIL_IF(get_reduction(&c, a_[2], &red) || call_out(&c, a_[3]) ||
            call_arg(&c, a_[0], 0, "pred") < 0 || call_arg(&c, a_[1], 0, "target") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_mse_loss(T(&c, 0), T(&c, 1), red, &c.out));
    return call_result(&c, s);
}

static PyObject* f_cross_entropy(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames) {
    static const char* const names[] = {"logits", "target", "ignore_index", "reduction", "out"};
    PARSE("cross_entropy", names, 2);
    hg_reduction red = HG_REDUCTION_MEAN;
    long long ii = -100;
    FAIL_IF(get_int(&c, a_[2], "ignore_index", -100, &ii) || get_reduction(&c, a_[3], &red) ||
            call_out(&c, a_[4]) || call_arg(&c, a_[0], 0, "logits") < 0 ||
            call_arg(&c, a_[1], 0, "target") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_cross_entropy(T(&c, 0), T(&c, 1), ii, red, &c.out));
    return call_result(&c, s);
}

static PyObject* f_bce(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"prob", "target", "weight", "reduction", "out"};
    PARSE("binary_cross_entropy", names, 2);
    hg_reduction red = HG_REDUCTION_MEAN;
    int iw = -1;
    FAIL_IF(get_reduction(&c, a_[3], &red) || call_out(&c, a_[4]) ||
            call_arg(&c, a_[0], 0, "prob") < 0 || call_arg(&c, a_[1], 0, "target") < 0);
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = call_arg(&c, a_[2], 0, "weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_binary_cross_entropy(T(&c, 0), T(&c, 1), iw >= 0 ? T(&c, iw) : NULL,
                                                red, &c.out));
    return call_result(&c, s);
}

static PyObject* f_bce_logits(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
    static const char* const names[] = {"logits", "target", "weight", "pos_weight", "reduction",
                                        "out"};
    PARSE("binary_cross_entropy_with_logits", names, 2);
    hg_reduction red = HG_REDUCTION_MEAN;
    int iw = -1, ip = -1;
    FAIL_IF(get_reduction(&c, a_[4], &red) || call_out(&c, a_[5]) ||
            call_arg(&c, a_[0], 0, "logits") < 0 || call_arg(&c, a_[1], 0, "target") < 0);
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = call_arg(&c, a_[2], 0, "weight")) < 0);
    if (a_[3] && a_[3] != Py_None) FAIL_IF((ip = call_arg(&c, a_[3], 0, "pos_weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_binary_cross_entropy_with_logits(
                        T(&c, 0), T(&c, 1), iw >= 0 ? T(&c, iw) : NULL,
                        ip >= 0 ? T(&c, ip) : NULL, red, &c.out));
    return call_result(&c, s);
}

// --- data ---------------------------------------------------------------------------------------
// The functions that write an existing tensor: out must be given (a Tensor or Buffer).
static int need_out(call* c, PyObject* o) {
    if (!o || o == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: out is required", c->fn);
        return -1;
    }
    if (call_out(c, o)) return -1;
    c->elems = numel_of(&c->out);
    return 0;
}

static PyObject* f_fill(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"out", "value"};
    PARSE("fill", names, 2);
    hg_scalar v;
    FAIL_IF(need_out(&c, a_[0]) || get_scalar(&c, a_[1], "value", &v));
    hg_status s;
    CALL_RUN(&c, s, s = hg_fill(&c.out, v));
    return call_result(&c, s);
}

static PyObject* f_arange(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"out", "start", "step"};
    PARSE("arange", names, 1);
    double start = 0.0, step = 1.0;
    FAIL_IF(need_out(&c, a_[0]) || get_dbl(&c, a_[1], "start", 0.0, &start) ||
            get_dbl(&c, a_[2], "step", 1.0, &step));
    hg_status s;
    CALL_RUN(&c, s, s = hg_arange(&c.out, start, step));
    return call_result(&c, s);
}

static PyObject* f_random(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"out", "normal", "seed", "offset", "a", "b"};
    PARSE("random", names, 2);
    int normal = PyObject_IsTrue(a_[1]);
    uint64_t seed = 0, offset = 0;
    double pa = 0.0, pb = 1.0;
    c.fn = normal > 0 ? "random_normal" : "random_uniform";
    FAIL_IF(normal < 0 || need_out(&c, a_[0]) || get_u64(&c, a_[2], "seed", 0, &seed) ||
            get_u64(&c, a_[3], "offset", 0, &offset) ||
            get_dbl(&c, a_[4], normal ? "mean" : "low", 0.0, &pa) ||
            get_dbl(&c, a_[5], normal ? "std" : "high", 1.0, &pb));
    hg_status s;
    if (normal) CALL_RUN(&c, s, s = hg_random_normal(&c.out, seed, offset, pa, pb));
    else CALL_RUN(&c, s, s = hg_random_uniform(&c.out, seed, offset, pa, pb));
    return call_result(&c, s);
}

static PyObject* f_concat(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"tensors", "axis", "out"};
    PARSE("concat", names, 1);
    long long axis = 0;
    FAIL_IF(get_int(&c, a_[1], "axis", 0, &axis) || call_out(&c, a_[2]));
    PyObject* fast = PySequence_Fast(a_[0], "concat: tensors must be a sequence");
    FAIL_IF(!fast);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    hgpy_operand* ops = n ? PyMem_Calloc((size_t)n, sizeof *ops) : NULL;
    hg_tensor* ts = n ? PyMem_Calloc((size_t)n, sizeof *ts) : NULL;
    HgBuffer** held = n ? PyMem_Calloc((size_t)n + 1, sizeof *held) : NULL;
    PyObject* r = NULL;
    Py_ssize_t got = 0;
    if (n && (!ops || !ts || !held)) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < n; got++) {
        if (hgpy_operand_get(PySequence_Fast_GET_ITEM(fast, got), c.ex, 0, 0, "concat",
                             &ops[got]))
            goto done;
        if (!c.ex) c.ex = ops[got].base->owner;
        ts[got] = ops[got].t;
        c.elems += numel_of(&ts[got]);
    }
    hg_status s;
    int rel = c.elems >= HGPY_GIL_ELEMS, nh = 0;
    if (rel) {
        for (Py_ssize_t i = 0; i < n; i++) held[nh++] = ops[i].base;
        if (c.out_base) held[nh++] = c.out_base;
        for (int i = 0; i < nh; i++) hgpy_buffer_hold(held[i]);
        Py_BEGIN_ALLOW_THREADS
        s = hg_concat((int32_t)n, ts, (int32_t)axis, &c.out);
        Py_END_ALLOW_THREADS
        for (int i = 0; i < nh; i++) hgpy_buffer_unhold(held[i]);
    } else {
        s = hg_concat((int32_t)n, ts, (int32_t)axis, &c.out);
    }
    if (!c.ex && s == HG_OK) s = HG_ERR_INTERNAL;
    r = call_result(&c, s);
done:
    for (Py_ssize_t i = 0; i < got; i++) hgpy_operand_release(&ops[i]);
    PyMem_Free(ops);
    PyMem_Free(ts);
    PyMem_Free(held);
    Py_DECREF(fast);
    if (!r) call_end(&c);
    return r;
}

static PyObject* index_op(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, int gather) {
    static const char* const names[] = {"x", "axis", "index", "out"};
    PARSE(gather ? "gather" : "index_select", names, 3);
    long long axis = 0;
    FAIL_IF(get_int(&c, a_[1], "axis", 0, &axis) || call_out(&c, a_[3]) ||
            call_arg(&c, a_[0], 0, "x") < 0 || call_arg(&c, a_[2], 0, "index") < 0);
    hg_status s;
    if (gather) CALL_RUN(&c, s, s = hg_gather(T(&c, 0), (int32_t)axis, T(&c, 1), &c.out));
    else CALL_RUN(&c, s, s = hg_index_select(T(&c, 0), (int32_t)axis, T(&c, 1), &c.out));
    return call_result(&c, s);
}
static PyObject* f_index_select(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                PyObject* kwnames) {
    return index_op(args, nargs, kwnames, 0);
}
static PyObject* f_gather(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return index_op(args, nargs, kwnames, 1);
}

// copy_(dst, src): dst[...] = src (src broadcast to dst's shape, converted to dst's dtype).
static PyObject* f_copy(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"dst", "src"};
    PARSE("copy", names, 2);
    FAIL_IF(need_out(&c, a_[0]) || call_arg(&c, a_[1], 1, "src") < 0);
    hg_status s;
    if (c.op[0].is_scalar) {
        CALL_RUN(&c, s, s = hg_fill(&c.out, c.op[0].s));
        return call_result(&c, s);
    }
    hg_tensor src = c.op[0].t;
    if (src.ndim != c.out.ndim || memcmp(src.shape, c.out.shape, sizeof src.shape)) {
        hg_tensor e;
        if ((s = hg_tensor_expand(&src, c.out.ndim, c.out.shape, &e)) != HG_OK)
            return call_result(&c, s);
        src = e;
    }
    if (src.dtype == c.out.dtype) CALL_RUN(&c, s, s = hg_tensor_copy(&c.out, &src));
    else CALL_RUN(&c, s, s = hg_cast(&src, c.out.dtype, &c.out));
    return call_result(&c, s);
}

// empty(executor, shape, dtype, zero=False): a new C-contiguous Tensor; its contents are
// unspecified unless zero is true (numpy's empty / zeros).
static PyObject* f_empty(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"executor", "shape", "dtype", "zero"};
    PARSE("empty", names, 2);
    call_end(&c);
    if (!PyObject_TypeCheck(a_[0], &HgExecutor_Type))
        return PyErr_Format(PyExc_TypeError, "empty: executor must be a hologram.Executor, got "
                            "%.100s", Py_TYPE(a_[0])->tp_name);
    HgExecutor* e = (HgExecutor*)a_[0];
    if (e->closed) return hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "Executor used after close()");
    int64_t shape[HG_MAX_DIMS];
    int32_t nd = 0;
    PyObject* fast = PySequence_Fast(a_[1], "shape must be a sequence of ints");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > HG_MAX_DIMS) {
        Py_DECREF(fast);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "shape has %zd dims, at most %d", n,
                              HG_MAX_DIMS);
    }
    int64_t count = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject* ix = PyNumber_Index(PySequence_Fast_GET_ITEM(fast, i));
        long long v = ix ? PyLong_AsLongLong(ix) : -1;
        Py_XDECREF(ix);
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return NULL;
        }
        if (v < 0) {
            Py_DECREF(fast);
            return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "negative dimension %lld in shape", v);
        }
        shape[nd++] = v;
        if (v && count > INT64_MAX / v) {
            Py_DECREF(fast);
            return hgpy_raise_msg(HG_ERR_OUT_OF_MEMORY, "shape has more than 2^63 elements");
        }
        count *= v;
    }
    Py_DECREF(fast);
    hg_dtype dt = HG_DTYPE_F32;
    if (a_[2] && a_[2] != Py_None && hgpy_dtype_from_object(a_[2], &dt)) return NULL;
    int zero = a_[3] ? PyObject_IsTrue(a_[3]) : 0;
    if (zero < 0) return NULL;
    uint32_t flags = zero ? HG_BUFFER_DEFAULT : HG_BUFFER_UNINITIALIZED;
    hg_buffer h;
    hg_status s;
    size_t nbytes = (size_t)count * hg_dtype_size(dt);
    if (nbytes >= ((size_t)1 << 20)) {   // big: the allocation may touch pages
        Py_BEGIN_ALLOW_THREADS
        s = hg_buffer_create_ex(e->ex, dt, (size_t)count, flags, &h);
        Py_END_ALLOW_THREADS
    } else {
        s = hg_buffer_create_ex(e->ex, dt, (size_t)count, flags, &h);
    }
    if (s != HG_OK) return hgpy_raise_status(s, "empty");
    HgBuffer* b = hgpy_buffer_new_known(e, h, dt, (size_t)count);
    if (!b) return NULL;
    hg_tensor t;
    s = hg_tensor_from_buffer(h, nd, shape, &t);
    PyObject* r = s == HG_OK ? hgpy_tensor_new(b, &t) : hgpy_raise_status(s, "empty");
    Py_DECREF(b);
    return r;
}

#define FC(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, doc}
PyMethodDef hgpy_tensor_op_methods[] = {
    {"_set_hooks", m_set_hooks, METH_VARARGS, "_set_hooks(as_tensor, default_executor)"},
    FC("unary", f_unary, "unary(op, x, out=None)"),
    FC("binary", f_binary, "binary(op, a, b, out=None)"),
    FC("where", f_where, "where(cond, a, b, out=None)"),
    FC("fma", f_fma, "fma(a, b, c, out=None)"),
    FC("clip", f_clip, "clip(x, lo, hi, out=None)"),
    FC("cast", f_cast, "cast(x, dtype, out=None)"),
    FC("reduce", f_reduce, "reduce(op, x, axis=None, keepdims=False, out=None, ddof=0)"),
    FC("softmax", f_softmax, "softmax(x, axis=-1, log=False, out=None)"),
    FC("layer_norm", f_layer_norm, "layer_norm(x, nnorm, weight=None, bias=None, eps=1e-5, out=None)"),
    FC("rms_norm", f_rms_norm, "rms_norm(x, nnorm, weight=None, eps=1e-6, out=None)"),
    FC("matmul", f_matmul, "matmul(a, b, out=None)"),
    FC("matvec", f_matvec, "matvec(a, x, out=None)"),
    FC("gemm", f_gemm, "gemm(a, b, c, alpha=1, beta=0, trans_a=False, trans_b=False)"),
    FC("mse_loss", f_mse_loss, "mse_loss(pred, target, reduction='mean', out=None)"),
    FC("cross_entropy", f_cross_entropy,
       "cross_entropy(logits, target, ignore_index=-100, reduction='mean', out=None)"),
    FC("binary_cross_entropy", f_bce,
       "binary_cross_entropy(prob, target, weight=None, reduction='mean', out=None)"),
    FC("binary_cross_entropy_with_logits", f_bce_logits,
       "binary_cross_entropy_with_logits(logits, target, weight=None, pos_weight=None, "
       "reduction='mean', out=None)"),
    FC("fill", f_fill, "fill(out, value)"),
    FC("arange", f_arange, "arange(out, start=0, step=1)"),
    FC("random", f_random, "random(out, normal, seed=0, offset=0, a, b)"),
    FC("concat", f_concat, "concat(tensors, axis=0, out=None)"),
    FC("index_select", f_index_select, "index_select(x, axis, index, out=None)"),
    FC("gather", f_gather, "gather(x, axis, index, out=None)"),
    FC("copy", f_copy, "copy(dst, src): dst[...] = src"),
    FC("empty", f_empty, "empty(executor, shape, dtype=float32, zero=False)"),
    {NULL, NULL, 0, NULL},
};
#undef FC
