// hologram.ops: the flat forms of the product documents (hg_vector_add ... hg_matvec_flat),
// called straight from METH_FASTCALL entry points. The per-call path is: type checks by pointer
// compare, handle loads, one library call with the GIL released, Py_None/result back.
#include "hgpy.h"

// Positional + keyword arguments into slots[0..nnames) (NULL = not given). Fast when no keywords.
int hgpy_parse_args(const char* fn, const char* const* names, int nnames, int nrequired,
                      PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                      PyObject** slots) {
    if (nargs > nnames) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fn, nnames,
                     nargs);
        return -1;
    }
    for (int i = 0; i < nnames; i++) slots[i] = i < nargs ? args[i] : NULL;
    if (kwnames) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
            PyObject* key = PyTuple_GET_ITEM(kwnames, k);
            int found = -1;
            for (int i = 0; i < nnames; i++)
                if (!PyUnicode_CompareWithASCIIString(key, names[i])) found = i;
            if (found < 0) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fn, key);
                return -1;
            }
            if (slots[found]) {
                PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                             names[found]);
                return -1;
            }
            slots[found] = args[nargs + k];
        }
    }
    for (int i = 0; i < nrequired; i++) {
        if (!slots[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
            return -1;
        }
    }
    return 0;
}

static inline HgExecutor* get_executor(const char* fn, PyObject* o) {
    if (Py_TYPE(o) != &HgExecutor_Type && !PyObject_TypeCheck(o, &HgExecutor_Type)) {
        PyErr_Format(PyExc_TypeError, "%s: argument 'executor' must be a hologram.Executor, got "
                     "%.100s", fn, Py_TYPE(o)->tp_name);
        return NULL;
    }
    HgExecutor* e = (HgExecutor*)o;
    if (e->closed) {
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "%s: Executor used after close()", fn);
        return NULL;
    }
    return e;
}

// A Buffer argument, or a Tensor that is a C-contiguous view starting at element 0 of its
// Buffer (then its elements are the Buffer's first ones, in C order). *count: the number of
// elements the argument holds (the Buffer's size, or the Tensor's).
static inline HgBuffer* get_buffer(const char* fn, const char* name, PyObject* o, HgExecutor* e,
                                   int written, size_t* count) {
    HgBuffer* b;
    if (Py_TYPE(o) == &HgBuffer_Type) {
        b = (HgBuffer*)o;
        *count = b->count;
    } else if (hgpy_is_tensor(o)) {
        HgTensor* t = (HgTensor*)o;
        int contig = 0;
        hg_tensor_is_contiguous(&t->t, &contig);
        b = t->base;
        if (!contig || t->t.offset != 0) {
            hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: Tensor '%s' is not a C-contiguous view "
                           "starting at element 0 of its Buffer; the flat ops work on buffers "
                           "(use x.contiguous(), or the numpy-style ops such as hologram.ops.add)",
                           fn, name);
            return NULL;
        }
        *count = (size_t)hgpy_numel(&t->t);
    } else {
        PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be a hologram.Buffer or Tensor, got "
                     "%.100s", fn, name, Py_TYPE(o)->tp_name);
        return NULL;
    }
    if (b->freed) {
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "%s: buffer '%s' used after %s", fn, name,
                       b->owner->closed ? "its Executor was closed" : "free()");
        return NULL;
    }
    if (b->owner != e) {
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: buffer '%s' belongs to another Executor",
                       fn, name);
        return NULL;
    }
    if (written && b->readonly) {
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: buffer '%s' wraps read-only memory", fn, name);
        return NULL;
    }
    return b;
}

// n elements needed from an argument that holds `have` (the library checks buffers itself; a
// Tensor argument may hold fewer elements than its Buffer).
static inline int need(const char* fn, const char* name, size_t want, size_t have) {
    if (want <= have) return 0;
    hgpy_raise_msg(HG_ERR_SIZE_MISMATCH, "%s: argument '%s' holds %zu elements, %zu are needed",
                   fn, name, have, want);
    return -1;
}

// A count argument; NULL or None gives `dflt`.
static inline int get_count(const char* fn, const char* name, PyObject* o, size_t dflt,
                            size_t* out) {
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    Py_ssize_t v = PyLong_AsSsize_t(o);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be an int, got %.100s", fn, name,
                         Py_TYPE(o)->tp_name);
        }
        return -1;
    }
    if (v < 0) {
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: argument '%s' must be >= 0, got %zd", fn,
                       name, v);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

static inline int get_double(const char* fn, const char* name, PyObject* o, double* out) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be a number, got %.100s", fn, name,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = v;
    return 0;
}

// Runs `call`: with the GIL released while the buffers are held (a concurrent free() waits)
// when it touches at least HGPY_GIL_ELEMS elements, else with the GIL kept (releasing and
// re-taking it cost about as much as a 1-element op: vector_add on 1 element 360 ns against
// numpy's 250 ns; op_call.h makes the same choice).
#define RUN_RELEASED(status, elems, call, ...)                                 \
    do {                                                                       \
        if ((size_t)(elems) < HGPY_GIL_ELEMS) {                                \
            status = (call);                                                   \
            break;                                                             \
        }                                                                      \
        HgBuffer* held_[] = {__VA_ARGS__};                                     \
        const int nheld_ = (int)(sizeof held_ / sizeof held_[0]);              \
        for (int i_ = 0; i_ < nheld_; i_++) held_[i_]->users++;                \
        Py_BEGIN_ALLOW_THREADS                                                 \
        status = (call);                                                       \
        Py_END_ALLOW_THREADS                                                   \
        for (int i_ = 0; i_ < nheld_; i_++) hgpy_buffer_unhold(held_[i_]);     \
    } while (0)

// --- a + b -> c ------------------------------------------------------------------------------------
typedef hg_status (*binary_fn)(hg_buffer, hg_buffer, hg_buffer, size_t);
static const char* const k_binary_names[] = {"executor", "a", "b", "c", "n"};

static PyObject* run_binary(const char* fn, binary_fn f, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    PyObject* s[5];
    if (nargs >= 4 && nargs <= 5 && !kwnames) {
        s[0] = args[0]; s[1] = args[1]; s[2] = args[2]; s[3] = args[3];
        s[4] = nargs == 5 ? args[4] : NULL;
    } else if (hgpy_parse_args(fn, k_binary_names, 5, 4, args, nargs, kwnames, s)) {
        return NULL;
    }
    HgExecutor* e;
    HgBuffer *a, *b, *c;
    size_t n_a = 0, n_b = 0, n_c = 0;
    size_t n;
    if (!(e = get_executor(fn, s[0])) || !(a = get_buffer(fn, "a", s[1], e, 0, &n_a)) ||
        !(b = get_buffer(fn, "b", s[2], e, 0, &n_b)) || !(c = get_buffer(fn, "c", s[3], e, 1, &n_c)) ||
        get_count(fn, "n", s[4], n_a, &n))
        return NULL;
    if (need(fn, "a", n, n_a) || need(fn, "b", n, n_b) || need(fn, "c", n, n_c)) return NULL;
    hg_status st;
    RUN_RELEASED(st, n, f(a->buf, b->buf, c->buf, n), a, b, c);
    if (st != HG_OK) return hgpy_raise_status(st, NULL);
    return Py_NewRef((PyObject*)c);
}

#define BINARY_OP(pyname, cfn)                                                                   \
    static PyObject* op_##pyname(PyObject* m, PyObject* const* a, Py_ssize_t n, PyObject* kw) { \
        return run_binary(#pyname, cfn, a, n, kw);                                              \
    }
BINARY_OP(vector_add, hg_vector_add)
BINARY_OP(vector_sub, hg_vector_sub)
BINARY_OP(vector_mul, hg_vector_mul)
BINARY_OP(vector_div, hg_vector_div)
BINARY_OP(vector_min, hg_vector_min)
BINARY_OP(vector_max, hg_vector_max)

// --- f(a) -> c -------------------------------------------------------------------------------------
typedef hg_status (*unary_fn)(hg_buffer, hg_buffer, size_t);
static const char* const k_unary_names[] = {"executor", "a", "c", "n"};

static PyObject* run_unary(const char* fn, unary_fn f, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
    PyObject* s[4];
    if (hgpy_parse_args(fn, k_unary_names, 4, 3, args, nargs, kwnames, s)) return NULL;
    HgExecutor* e;
    HgBuffer *a, *c;
    size_t n_a = 0, n_c = 0;
    size_t n;
    if (!(e = get_executor(fn, s[0])) || !(a = get_buffer(fn, "a", s[1], e, 0, &n_a)) ||
        !(c = get_buffer(fn, "c", s[2], e, 1, &n_c)) || get_count(fn, "n", s[3], n_a, &n))
        return NULL;
    if (need(fn, "a", n, n_a) || need(fn, "c", n, n_c)) return NULL;
    hg_status st;
    RUN_RELEASED(st, n, f(a->buf, c->buf, n), a, c);
    if (st != HG_OK) return hgpy_raise_status(st, NULL);
    return Py_NewRef((PyObject*)c);
}

#define UNARY_OP(pyname, cfn)                                                                    \
    static PyObject* op_##pyname(PyObject* m, PyObject* const* a, Py_ssize_t n, PyObject* kw) { \
        return run_unary(#pyname, cfn, a, n, kw);                                               \
    }
UNARY_OP(vector_abs, hg_vector_abs)
UNARY_OP(vector_neg, hg_vector_neg)
UNARY_OP(vector_relu, hg_vector_relu)
UNARY_OP(sigmoid, hg_vector_sigmoid)
UNARY_OP(tanh, hg_vector_tanh)
UNARY_OP(gelu, hg_vector_gelu)
UNARY_OP(softmax, hg_vector_softmax)

// --- clip / scalar ------------------------------------------------------------------------------------
static PyObject* op_vector_clip(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                PyObject* kwnames) {
    static const char* const names[] = {"executor", "a", "c", "lo", "hi", "n"};
    const char* fn = "vector_clip";
    PyObject* s[6];
    if (hgpy_parse_args(fn, names, 6, 5, args, nargs, kwnames, s)) return NULL;
    HgExecutor* e;
    HgBuffer *a, *c;
    size_t n_a = 0, n_c = 0;
    double lo, hi;
    size_t n;
    if (!(e = get_executor(fn, s[0])) || !(a = get_buffer(fn, "a", s[1], e, 0, &n_a)) ||
        !(c = get_buffer(fn, "c", s[2], e, 1, &n_c)) || get_double(fn, "lo", s[3], &lo) ||
        get_double(fn, "hi", s[4], &hi) || get_count(fn, "n", s[5], n_a, &n))
        return NULL;
    if (need(fn, "a", n, n_a) || need(fn, "c", n, n_c)) return NULL;
    hg_status st;
    RUN_RELEASED(st, n, hg_vector_clip(a->buf, c->buf, lo, hi, n), a, c);
    if (st != HG_OK) return hgpy_raise_status(st, NULL);
    return Py_NewRef((PyObject*)c);
}

typedef hg_status (*scalar_fn)(hg_buffer, hg_buffer, double, size_t);
static PyObject* run_scalar(const char* fn, scalar_fn f, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    static const char* const names[] = {"executor", "a", "c", "s", "n"};
    PyObject* s[5];
    if (hgpy_parse_args(fn, names, 5, 4, args, nargs, kwnames, s)) return NULL;
    HgExecutor* e;
    HgBuffer *a, *c;
    size_t n_a = 0, n_c = 0;
    double v;
    size_t n;
    if (!(e = get_executor(fn, s[0])) || !(a = get_buffer(fn, "a", s[1], e, 0, &n_a)) ||
        !(c = get_buffer(fn, "c", s[2], e, 1, &n_c)) || get_double(fn, "s", s[3], &v) ||
        get_count(fn, "n", s[4], n_a, &n))
        return NULL;
    if (need(fn, "a", n, n_a) || need(fn, "c", n, n_c)) return NULL;
    hg_status st;
    RUN_RELEASED(st, n, f(a->buf, c->buf, v, n), a, c);
    if (st != HG_OK) return hgpy_raise_status(st, NULL);
    return Py_NewRef((PyObject*)c);
}
static PyObject* op_scalar_add(PyObject* m, PyObject* const* a, Py_ssize_t n, PyObject* kw) {
    return run_scalar("scalar_add", hg_scalar_add, a, n, kw);
}
static PyObject* op_scalar_mul(PyObject* m, PyObject* const* a, Py_ssize_t n, PyObject* kw) {
    return run_scalar("scalar_mul", hg_scalar_mul, a, n, kw);
}

// --- reductions and losses: out[0] = value, also returned as a float -----------------------------
typedef hg_status (*reduce_fn)(hg_buffer, hg_buffer, size_t, double*);
static PyObject* run_reduce(const char* fn, reduce_fn f, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    static const char* const names[] = {"executor", "a", "out", "n"};
    PyObject* s[4];
    if (hgpy_parse_args(fn, names, 4, 3, args, nargs, kwnames, s)) return NULL;
    HgExecutor* e;
    HgBuffer *a, *o;
    size_t n_a = 0, n_out = 0;
    size_t n;
    if (!(e = get_executor(fn, s[0])) || !(a = get_buffer(fn, "a", s[1], e, 0, &n_a)) ||
        !(o = get_buffer(fn, "out", s[2], e, 1, &n_out)) || get_count(fn, "n", s[3], n_a, &n))
        return NULL;
    if (need(fn, "a", n, n_a) || need(fn, "out", 1, n_out)) return NULL;
    hg_status st;
    double r = 0;
    RUN_RELEASED(st, n, f(a->buf, o->buf, n, &r), a, o);
    if (st != HG_OK) return hgpy_raise_status(st, NULL);
    return PyFloat_FromDouble(r);
}
#define REDUCE_OP(pyname, cfn)                                                                   \
    static PyObject* op_##pyname(PyObject* m, PyObject* const* a, Py_ssize_t n, PyObject* kw) { \
        return run_reduce(#pyname, cfn, a, n, kw);                                              \
    }
REDUCE_OP(reduce_sum, hg_reduce_sum)
REDUCE_OP(reduce_min, hg_reduce_min)
REDUCE_OP(reduce_max, hg_reduce_max)

typedef hg_status (*loss_fn)(hg_buffer, hg_buffer, hg_buffer, size_t, double*);
static PyObject* run_loss(const char* fn, loss_fn f, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
    static const char* const names[] = {"executor", "pred", "target", "out", "n"};
    PyObject* s[5];
    if (hgpy_parse_args(fn, names, 5, 4, args, nargs, kwnames, s)) return NULL;
    HgExecutor* e;
    HgBuffer *p, *t, *o;
    size_t n_pred = 0, n_target = 0, n_out = 0;
    size_t n;
    if (!(e = get_executor(fn, s[0])) || !(p = get_buffer(fn, "pred", s[1], e, 0, &n_pred)) ||
        !(t = get_buffer(fn, "target", s[2], e, 0, &n_target)) || !(o = get_buffer(fn, "out", s[3], e, 1, &n_out)) ||
        get_count(fn, "n", s[4], n_pred, &n))
        return NULL;
    if (need(fn, "pred", n, n_pred) || need(fn, "target", n, n_target) || need(fn, "out", 1, n_out))
        return NULL;
    hg_status st;
    double r = 0;
    RUN_RELEASED(st, n, f(p->buf, t->buf, o->buf, n, &r), p, t, o);
    if (st != HG_OK) return hgpy_raise_status(st, NULL);
    return PyFloat_FromDouble(r);
}
#define LOSS_OP(pyname, cfn)                                                                     \
    static PyObject* op_##pyname(PyObject* m, PyObject* const* a, Py_ssize_t n, PyObject* kw) { \
        return run_loss(#pyname, cfn, a, n, kw);                                                \
    }
LOSS_OP(mse_loss, hg_mse_loss_flat)
LOSS_OP(cross_entropy_loss, hg_cross_entropy_loss_flat)
LOSS_OP(binary_cross_entropy_loss, hg_binary_cross_entropy_loss_flat)

// --- matrices ------------------------------------------------------------------------------------------
static PyObject* op_gemm(PyObject* mod, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
    static const char* const names[] = {"executor", "a", "b", "c", "m", "n", "k"};
    const char* fn = "gemm";
    PyObject* s[7];
    if (hgpy_parse_args(fn, names, 7, 7, args, nargs, kwnames, s)) return NULL;
    HgExecutor* e;
    HgBuffer *a, *b, *c;
    size_t n_a = 0, n_b = 0, n_c = 0;
    size_t m, n, k;
    if (!(e = get_executor(fn, s[0])) || !(a = get_buffer(fn, "a", s[1], e, 0, &n_a)) ||
        !(b = get_buffer(fn, "b", s[2], e, 0, &n_b)) || !(c = get_buffer(fn, "c", s[3], e, 1, &n_c)) ||
        get_count(fn, "m", s[4], 0, &m) || get_count(fn, "n", s[5], 0, &n) ||
        get_count(fn, "k", s[6], 0, &k))
        return NULL;
    if (need(fn, "a", m * k, n_a) || need(fn, "b", k * n, n_b) || need(fn, "c", m * n, n_c))
        return NULL;
    hg_status st;
    RUN_RELEASED(st, (size_t)m * n * k, hg_gemm_flat(a->buf, b->buf, c->buf, m, n, k), a, b, c);
    if (st != HG_OK) return hgpy_raise_status(st, NULL);
    return Py_NewRef((PyObject*)c);
}

static PyObject* op_matvec(PyObject* mod, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
    static const char* const names[] = {"executor", "a", "x", "y", "m", "n"};
    const char* fn = "matvec";
    PyObject* s[6];
    if (hgpy_parse_args(fn, names, 6, 4, args, nargs, kwnames, s)) return NULL;
    HgExecutor* e;
    HgBuffer *a, *x, *y;
    size_t n_a = 0, n_x = 0, n_y = 0;
    size_t m, n;
    if (!(e = get_executor(fn, s[0])) || !(a = get_buffer(fn, "a", s[1], e, 0, &n_a)) ||
        !(x = get_buffer(fn, "x", s[2], e, 0, &n_x)) || !(y = get_buffer(fn, "y", s[3], e, 1, &n_y)) ||
        get_count(fn, "m", s[4], n_y, &m) || get_count(fn, "n", s[5], n_x, &n))
        return NULL;
    if (need(fn, "a", m * n, n_a) || need(fn, "x", n, n_x) || need(fn, "y", m, n_y)) return NULL;
    hg_status st;
    RUN_RELEASED(st, (size_t)m * n, hg_matvec_flat(a->buf, x->buf, y->buf, m, n), a, x, y);
    if (st != HG_OK) return hgpy_raise_status(st, NULL);
    return Py_NewRef((PyObject*)y);
}

#define FC(name, doc) \
    {#name, (PyCFunction)(void (*)(void))op_##name, METH_FASTCALL | METH_KEYWORDS, doc}
PyMethodDef hgpy_ops_methods[] = {
    FC(vector_add, "vector_add(executor, a, b, c, n=a.size): c[i] = a[i] + b[i] for i < n"),
    FC(vector_sub, "vector_sub(executor, a, b, c, n=a.size): c[i] = a[i] - b[i]"),
    FC(vector_mul, "vector_mul(executor, a, b, c, n=a.size): c[i] = a[i] * b[i]"),
    FC(vector_div, "vector_div(executor, a, b, c, n=a.size): c[i] = a[i] / b[i]"),
    FC(vector_min, "vector_min(executor, a, b, c, n=a.size): c[i] = min(a[i], b[i])"),
    FC(vector_max, "vector_max(executor, a, b, c, n=a.size): c[i] = max(a[i], b[i])"),
    FC(vector_abs, "vector_abs(executor, a, c, n=a.size): c[i] = |a[i]|"),
    FC(vector_neg, "vector_neg(executor, a, c, n=a.size): c[i] = -a[i]"),
    FC(vector_relu, "vector_relu(executor, a, c, n=a.size): c[i] = max(a[i], 0)"),
    FC(vector_clip, "vector_clip(executor, a, c, lo, hi, n=a.size): c[i] = clip(a[i], lo, hi)"),
    FC(scalar_add, "scalar_add(executor, a, c, s, n=a.size): c[i] = a[i] + s"),
    FC(scalar_mul, "scalar_mul(executor, a, c, s, n=a.size): c[i] = a[i] * s"),
    FC(sigmoid, "sigmoid(executor, a, c, n=a.size)"),
    FC(tanh, "tanh(executor, a, c, n=a.size)"),
    FC(gelu, "gelu(executor, a, c, n=a.size)"),
    FC(softmax, "softmax(executor, a, c, n=a.size): softmax over the first n elements"),
    FC(reduce_sum, "reduce_sum(executor, a, out, n=a.size) -> float; out[0] = the sum"),
    FC(reduce_min, "reduce_min(executor, a, out, n=a.size) -> float; out[0] = the minimum"),
    FC(reduce_max, "reduce_max(executor, a, out, n=a.size) -> float; out[0] = the maximum"),
    FC(mse_loss, "mse_loss(executor, pred, target, out, n=pred.size) -> float (mean)"),
    FC(cross_entropy_loss,
       "cross_entropy_loss(executor, pred, target, out, n=pred.size) -> float; pred holds "
       "probabilities: -(1/n) sum t*log(p)"),
    FC(binary_cross_entropy_loss,
       "binary_cross_entropy_loss(executor, pred, target, out, n=pred.size) -> float (mean)"),
    FC(gemm, "gemm(executor, a, b, c, m, n, k): row-major C[m x n] = A[m x k] . B[k x n]"),
    FC(matvec, "matvec(executor, a, x, y, m=y.size, n=x.size): y[m] = A[m x n] . x[n]"),
    {NULL, NULL, 0, NULL},
};
