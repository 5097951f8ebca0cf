// Operand conversion and the shared pieces of one op-library call from Python (op_call.h):
// tensors from Tensors, Buffers (1-D) and anything the package's _as_tensor hook converts
// (numpy arrays, lists, numpy scalars); Python scalars where the library takes hg_scalar; the
// out argument; the result; and the common argument parsers.
#include <string.h>
#include "op_call.h"

static PyObject* g_as_tensor = NULL;        // hologram._interop._as_tensor(obj, executor)
static PyObject* g_default_executor = NULL; // hologram._interop.default_executor()

PyObject* hgpy_set_hooks(PyObject* self, PyObject* args) {
    PyObject *as_tensor, *dflt;
    if (!PyArg_ParseTuple(args, "OO", &as_tensor, &dflt)) return NULL;
    Py_INCREF(as_tensor);
    Py_INCREF(dflt);
    Py_XSETREF(g_as_tensor, as_tensor);
    Py_XSETREF(g_default_executor, dflt);
    Py_RETURN_NONE;
}


// --- operands -----------------------------------------------------------------------------------
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
            if (overflow && allow_scalar == HGPY_BIG_INT_AS_FLOAT) {
                // Beside a float tensor numpy converts the int to that float dtype.
                double d = PyLong_AsDouble(obj);
                if (d == -1.0 && PyErr_Occurred()) return -1;
                out->is_scalar = 1;
                out->s = hg_scalar_f(d);
                return 0;
            }
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

// --- argument helpers ---------------------------------------------------------------------------
int hgpy_get_int(call* c, PyObject* o, const char* name, long long dflt, long long* out) {
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

int hgpy_get_dbl(call* c, PyObject* o, const char* name, double dflt, double* out) {
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

int hgpy_get_u64(call* c, PyObject* o, const char* name, uint64_t dflt, uint64_t* out) {
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
int hgpy_get_axes(call* c, PyObject* o, int32_t* axes, int32_t* naxes, int* all) {
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

int hgpy_get_reduction(call* c, PyObject* o, hg_reduction* out) {
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
    if (hgpy_get_int(c, o, "reduction", HG_REDUCTION_MEAN, &v)) return -1;
    if (v < 0 || v >= HG_REDUCTION_COUNT) {
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: reduction code %lld out of range", c->fn, v);
        return -1;
    }
    *out = (hg_reduction)v;
    return 0;
}

// A scalar for hg_fill / hg_clip_scalar: bool, int or float.
int hgpy_get_scalar(call* c, PyObject* o, const char* name, hg_scalar* out) {
    hgpy_operand tmp;
    if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o)) {
        if (hgpy_operand_get(o, c->ex, 1, 0, name, &tmp)) return -1;
        *out = tmp.s;
        return 0;
    }
    // numpy scalars and other numbers (None is no number here: get_dbl would take its default)
    double v;
    if (o == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be a number, got None", c->fn, name);
        return -1;
    }
    if (hgpy_get_dbl(c, o, name, 0.0, &v)) return -1;
    *out = hg_scalar_f(v);
    return 0;
}

