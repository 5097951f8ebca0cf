// The _C functions behind hologram.ops for computation (unary, binary, where, fma, clip, cast,
// reductions, softmax and norms, matmul/matvec/gemm, losses) and the operator slots of Tensor
// (a + b, -a, a @ b, ...). Every function takes tensors (Tensor, Buffer as 1-D, or anything the
// package's _as_tensor hook turns into a Tensor) and Python scalars where the library takes
// hg_scalar. `out=None` lets the library allocate the result on the inputs' executor; an `out`
// Tensor receives it (numpy's out rules, docs/ops.md) and is returned. Data ops and creation:
// tensor_data_ops.c; the shared call machinery: op_call.h.
#include <string.h>
#include "op_call.h"

// --- operators ----------------------------------------------------------------------------------
// The result of `x op y` for an arithmetic op on floats of one dtype, or of a float tensor and
// a Python float: that dtype, C-contiguous in the tensor's shape, in a spare buffer of the
// executor when there is one (see hgpy_spare). 0: the library allocates the result.
static int spare_result(HgExecutor* ex, hg_binary_op op, const hg_tensor* t, hg_tensor* out) {
    const hg_dtype dt = t->dtype;
    if (op > HG_BINARY_MAXIMUM || !(dt == HG_DTYPE_F32 || dt == HG_DTYPE_F64 ||
                                    dt == HG_DTYPE_F16 || dt == HG_DTYPE_BF16))
        return 0;
    size_t count = hgpy_numel(t);
    if (!ex->nspare || !hgpy_executor_take_spare(ex, dt, count, &out->buffer)) return 0;
    out->dtype = dt;
    out->ndim = t->ndim;
    out->offset = 0;
    int64_t step = 1;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        out->shape[d] = t->shape[d];
        out->strides[d] = step;
        step *= t->shape[d];
    }
    return 1;
}

static int same_shape(const hg_tensor* a, const hg_tensor* b) {
    if (a->ndim != b->ndim) return 0;
    for (int32_t d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

// `x op y` of two hologram.Tensors, or of one and a Python float, small enough to keep the GIL:
// straight to the library with the operands' own views (the general path below copies them
// into the call's operand table first). NULL with no exception: take the general path.
static PyObject* binary_operator_fast(hg_binary_op op, PyObject* a, PyObject* b) {
    HgTensor* ta = Py_TYPE(a) == hgpy_tensor_type ? (HgTensor*)a : NULL;
    HgTensor* tb = Py_TYPE(b) == hgpy_tensor_type ? (HgTensor*)b : NULL;
    HgTensor* t = ta ? ta : tb;
    if (!t || !t->base || t->base->freed) return NULL;
    HgExecutor* ex = t->base->owner;
    hg_tensor out;
    out.buffer.handle = 0;
    int spare = 0;
    hg_status s;
    if (ta && tb) {
        if (!tb->base || tb->base->freed ||
            hgpy_numel(&ta->t) + hgpy_numel(&tb->t) >= HGPY_GIL_ELEMS)
            return NULL;
        spare = tb->t.dtype == ta->t.dtype && tb->base->owner == ex &&
                same_shape(&ta->t, &tb->t) && spare_result(ex, op, &ta->t, &out);
        s = hg_binary(op, &ta->t, &tb->t, &out);
    } else {
        PyObject* other = ta ? b : a;
        if (!PyFloat_CheckExact(other) || hgpy_numel(&t->t) >= HGPY_GIL_ELEMS) return NULL;
        spare = spare_result(ex, op, &t->t, &out);
        s = hg_binary_scalar(op, &t->t, hg_scalar_f(PyFloat_AS_DOUBLE(other)), ta == NULL, &out);
    }
    if (s != HG_OK) {
        if (spare && !hgpy_executor_park(ex, out.buffer, out.dtype, hgpy_numel(&out)))
            hg_buffer_destroy(out.buffer);
        return hgpy_raise_status(s, NULL);
    }
    return hgpy_tensor_from_result(ex, &out);
}

// How a Python scalar beside t is taken: ints beyond int64 as floats beside a float tensor.
static int scalar_kind_beside(const hg_tensor* t) {
    hg_dtype d = t->dtype;
    return d == HG_DTYPE_F16 || d == HG_DTYPE_BF16 || d == HG_DTYPE_F32 || d == HG_DTYPE_F64
               ? HGPY_BIG_INT_AS_FLOAT : 1;
}

PyObject* hgpy_binary_operator(hg_binary_op op, PyObject* a, PyObject* b, int inplace) {
    if (!inplace) {
        PyObject* r = binary_operator_fast(op, a, b);
        if (r || PyErr_Occurred()) return r;
    }
    int a_first = hgpy_is_tensor(a);
    PyObject* tobj = a_first ? a : b;
    PyObject* other = a_first ? b : a;
    HgTensor* t = (HgTensor*)tobj;
    if (hgpy_tensor_check(t)) return NULL;
    hgpy_operand o;
    int r = hgpy_operand_get(other, t->base->owner, scalar_kind_beside(&t->t), 1, "operator",
                             &o);
    if (r < 0) return NULL;
    if (r > 0) Py_RETURN_NOTIMPLEMENTED;
    call c;
    call_init(&c, hg_binary_op_name(op));
    c.ex = t->base->owner;
    c.elems = hgpy_numel(&t->t) + (o.is_scalar ? 0 : hgpy_numel(&o.t));
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
        if (hgpy_call_out(&c, a)) {
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
    return hgpy_call_result(&c, s);
}

PyObject* hgpy_unary_operator(hg_unary_op op, PyObject* x) {
    HgTensor* t = (HgTensor*)x;
    if (hgpy_tensor_check(t)) return NULL;
    call c;
    call_init(&c, hg_unary_op_name(op));
    c.ex = t->base->owner;
    c.elems = hgpy_numel(&t->t);
    c.op[0].t = t->t;
    c.op[0].base = t->base;
    c.op[0].is_scalar = 0;
    c.op[0].keep = NULL;
    c.n = 1;
    hg_status s;
    CALL_RUN(&c, s, s = hg_unary(op, &c.op[0].t, &c.out));
    return hgpy_call_result(&c, s);
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
    c.elems = hgpy_numel(&oa.t) + hgpy_numel(&ob.t);
    hg_status s;
    CALL_RUN(&c, s, s = hg_matmul(&c.op[0].t, &c.op[1].t, &c.out));
    return hgpy_call_result(&c, s);
}

// --- elementwise --------------------------------------------------------------------------------
static PyObject* f_unary(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"op", "x", "out"};
    PARSE("unary", names, 2);
    long long op = 0;
    FAIL_IF(hgpy_get_int(&c, a_[0], "op", 0, &op));
    if (op < 0 || op >= HG_UNARY_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "unary: op code %lld out of range", op);
    }
    c.fn = hg_unary_op_name((hg_unary_op)op);
    FAIL_IF(hgpy_call_arg(&c, a_[1], 0, "x") < 0 || hgpy_call_out(&c, a_[2]));
    hg_status s;
    CALL_RUN(&c, s, s = hg_unary((hg_unary_op)op, T(&c, 0), &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_binary(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"op", "a", "b", "out"};
    PARSE("binary", names, 3);
    long long op = 0;
    FAIL_IF(hgpy_get_int(&c, a_[0], "op", 0, &op));
    if (op < 0 || op >= HG_BINARY_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "binary: op code %lld out of range", op);
    }
    c.fn = hg_binary_op_name((hg_binary_op)op);
    // The first tensor operand decides the executor: look at b first when a is a scalar.
    int a_scalar = PyBool_Check(a_[1]) || PyLong_Check(a_[1]) || PyFloat_Check(a_[1]);
    int b_scalar = PyBool_Check(a_[2]) || PyLong_Check(a_[2]) || PyFloat_Check(a_[2]);
    FAIL_IF(hgpy_call_out(&c, a_[3]));
    int ia, ib;
    if (a_scalar && !b_scalar) {
        FAIL_IF((ib = hgpy_call_arg(&c, a_[2], 0, "b")) < 0 ||
                (ia = hgpy_call_arg(&c, a_[1], scalar_kind_beside(T(&c, ib)), "a")) < 0);
    } else {
        FAIL_IF((ia = hgpy_call_arg(&c, a_[1], !b_scalar, "a")) < 0);
        int kind = c.op[ia].is_scalar ? 1 : scalar_kind_beside(T(&c, ia));
        FAIL_IF((ib = hgpy_call_arg(&c, a_[2], kind, "b")) < 0);
    }
    hg_status s;
    if (c.op[ib].is_scalar)
        CALL_RUN(&c, s, s = hg_binary_scalar((hg_binary_op)op, T(&c, ia), c.op[ib].s, 0, &c.out));
    else if (c.op[ia].is_scalar)
        CALL_RUN(&c, s, s = hg_binary_scalar((hg_binary_op)op, T(&c, ib), c.op[ia].s, 1, &c.out));
    else
        CALL_RUN(&c, s, s = hg_binary((hg_binary_op)op, T(&c, ia), T(&c, ib), &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_where(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"cond", "a", "b", "out"};
    PARSE("where", names, 3);
    FAIL_IF(hgpy_call_out(&c, a_[3]) || hgpy_call_arg(&c, a_[0], 0, "cond") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "a") < 0 || hgpy_call_arg(&c, a_[2], 0, "b") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_where(T(&c, 0), T(&c, 1), T(&c, 2), &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_fma(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"a", "b", "c", "out"};
    PARSE("fma", names, 3);
    FAIL_IF(hgpy_call_out(&c, a_[3]) || hgpy_call_arg(&c, a_[0], 0, "a") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "b") < 0 || hgpy_call_arg(&c, a_[2], 0, "c") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_fma(T(&c, 0), T(&c, 1), T(&c, 2), &c.out));
    return hgpy_call_result(&c, s);
}

// clip(x, lo, hi, out): lo/hi None, Python numbers (weak promotion, as numpy) or tensors.
static PyObject* f_clip(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"x", "lo", "hi", "out"};
    PARSE("clip", names, 1);
    FAIL_IF(hgpy_call_out(&c, a_[3]) || hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    PyObject *lo = a_[1] ? a_[1] : Py_None, *hi = a_[2] ? a_[2] : Py_None;
    int lo_num = PyBool_Check(lo) || PyLong_Check(lo) || PyFloat_Check(lo);
    int hi_num = PyBool_Check(hi) || PyLong_Check(hi) || PyFloat_Check(hi);
    hg_status s;
    hg_scalar sl, sh;
    if (lo_num && hi_num) {
        FAIL_IF(hgpy_get_scalar(&c, lo, "lo", &sl) || hgpy_get_scalar(&c, hi, "hi", &sh));
        CALL_RUN(&c, s, s = hg_clip_scalar(T(&c, 0), sl, sh, &c.out));
        return hgpy_call_result(&c, s);
    }
    if (lo_num && hi == Py_None) {
        FAIL_IF(hgpy_get_scalar(&c, lo, "lo", &sl));
        CALL_RUN(&c, s, s = hg_binary_scalar(HG_BINARY_MAXIMUM, T(&c, 0), sl, 0, &c.out));
        return hgpy_call_result(&c, s);
    }
    if (hi_num && lo == Py_None) {
        FAIL_IF(hgpy_get_scalar(&c, hi, "hi", &sh));
        CALL_RUN(&c, s, s = hg_binary_scalar(HG_BINARY_MINIMUM, T(&c, 0), sh, 0, &c.out));
        return hgpy_call_result(&c, s);
    }
    int ilo = -1, ihi = -1;
    if (lo != Py_None) FAIL_IF((ilo = hgpy_call_arg(&c, lo, 0, "lo")) < 0);
    if (hi != Py_None) FAIL_IF((ihi = hgpy_call_arg(&c, hi, 0, "hi")) < 0);
    CALL_RUN(&c, s, s = hg_clip(T(&c, 0), ilo >= 0 ? T(&c, ilo) : NULL,
                                ihi >= 0 ? T(&c, ihi) : NULL, &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_cast(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"x", "dtype", "out"};
    PARSE("astype", names, 2);
    hg_dtype dt;
    FAIL_IF(hgpy_dtype_from_object(a_[1], &dt));
    FAIL_IF(hgpy_call_out(&c, a_[2]) || hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_cast(T(&c, 0), dt, &c.out));
    return hgpy_call_result(&c, s);
}

// --- reductions, softmax, norms -----------------------------------------------------------------
static PyObject* f_reduce(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"op", "x", "axis", "keepdims", "out", "ddof"};
    PARSE("reduce", names, 2);
    long long op = 0;
    FAIL_IF(hgpy_get_int(&c, a_[0], "op", 0, &op));
    if (op < 0 || op >= HG_REDUCE_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "reduce: op code %lld out of range", op);
    }
    c.fn = hg_reduce_op_name((hg_reduce_op)op);
    int32_t axes[HG_MAX_DIMS], naxes;
    int all, keep = a_[3] ? PyObject_IsTrue(a_[3]) : 0;
    double ddof = 0.0;
    FAIL_IF(keep < 0 || hgpy_get_axes(&c, a_[2], axes, &naxes, &all) ||
            hgpy_get_dbl(&c, a_[5], "ddof", 0.0, &ddof));
    FAIL_IF(hgpy_call_out(&c, a_[4]) || hgpy_call_arg(&c, a_[1], 0, "x") < 0);
    // numpy: argmin/argmax take one int axis; a 0-d input takes an int 0 or -1 but no tuple.
    int axis_seq = !all && !PyLong_Check(a_[2]);
    if (axis_seq && (op == HG_REDUCE_ARGMIN || op == HG_REDUCE_ARGMAX)) {
        call_end(&c);
        PyErr_Format(PyExc_TypeError, "%s: axis must be None or an int, got %.50s", c.fn,
                     Py_TYPE(a_[2])->tp_name);
        return NULL;
    }
    if (axis_seq && naxes > 0 && T(&c, 0)->ndim == 0) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_OUT_OF_RANGE, "%s: axis %d is out of range for a 0-d "
                              "tensor (numpy takes an int 0 or -1 there, not a tuple)", c.fn,
                              (int)axes[0]);
    }
    const int32_t* ax = all ? NULL : axes;
    hg_status s;
    if (op == HG_REDUCE_VAR && ddof != 0.0)
        CALL_RUN(&c, s, s = hg_var(T(&c, 0), naxes, ax, keep, ddof, &c.out));
    else if (op == HG_REDUCE_STD && ddof != 0.0)
        CALL_RUN(&c, s, s = hg_std(T(&c, 0), naxes, ax, keep, ddof, &c.out));
    else
        CALL_RUN(&c, s, s = hg_reduce((hg_reduce_op)op, T(&c, 0), naxes, ax, keep, &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_softmax(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
    static const char* const names[] = {"x", "axis", "log", "out"};
    PARSE("softmax", names, 1);
    long long axis = 0;
    int lg = a_[2] ? PyObject_IsTrue(a_[2]) : 0;
    if (lg) c.fn = "log_softmax";
    FAIL_IF(lg < 0 || hgpy_get_int(&c, a_[1], "axis", -1, &axis));
    FAIL_IF(hgpy_call_out(&c, a_[3]) || hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    hg_status s;
    if (lg) CALL_RUN(&c, s, s = hg_log_softmax(T(&c, 0), (int32_t)axis, &c.out));
    else CALL_RUN(&c, s, s = hg_softmax(T(&c, 0), (int32_t)axis, &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_layer_norm(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
    static const char* const names[] = {"x", "nnorm", "weight", "bias", "eps", "out"};
    PARSE("layer_norm", names, 2);
    long long nn = 1;
    double eps = 0.0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "nnorm", 1, &nn) || hgpy_get_dbl(&c, a_[4], "eps", 1e-5, &eps));
    FAIL_IF(hgpy_call_out(&c, a_[5]) || hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    int iw = -1, ib = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    if (a_[3] && a_[3] != Py_None) FAIL_IF((ib = hgpy_call_arg(&c, a_[3], 0, "bias")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_layer_norm(T(&c, 0), (int32_t)nn, iw >= 0 ? T(&c, iw) : NULL,
                                      ib >= 0 ? T(&c, ib) : NULL, eps, &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_rms_norm(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    static const char* const names[] = {"x", "nnorm", "weight", "eps", "out"};
    PARSE("rms_norm", names, 2);
    long long nn = 1;
    double eps = 0.0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "nnorm", 1, &nn) || hgpy_get_dbl(&c, a_[3], "eps", 1e-6, &eps));
    FAIL_IF(hgpy_call_out(&c, a_[4]) || hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    int iw = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_rms_norm(T(&c, 0), (int32_t)nn, iw >= 0 ? T(&c, iw) : NULL, eps,
                                    &c.out));
    return hgpy_call_result(&c, s);
}

// --- gradients (the backward ops) -----------------------------------------------------------------
static PyObject* f_activation_backward(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                       PyObject* kwnames) {
    static const char* const names[] = {"op", "grad", "x", "y", "out"};
    PARSE("activation_backward", names, 2);
    long long op = 0;
    FAIL_IF(hgpy_get_int(&c, a_[0], "op", 0, &op));
    if (op < 0 || op >= HG_UNARY_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT,
                              "activation_backward: op code %lld out of range", op);
    }
    FAIL_IF(hgpy_call_out(&c, a_[4]) || hgpy_call_arg(&c, a_[1], 0, "grad") < 0);
    int ix = -1, iy = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((ix = hgpy_call_arg(&c, a_[2], 0, "x")) < 0);
    if (a_[3] && a_[3] != Py_None) FAIL_IF((iy = hgpy_call_arg(&c, a_[3], 0, "y")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_activation_backward((hg_unary_op)op, T(&c, 0),
                                               ix >= 0 ? T(&c, ix) : NULL,
                                               iy >= 0 ? T(&c, iy) : NULL, &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_softmax_backward(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                    PyObject* kwnames) {
    static const char* const names[] = {"grad", "y", "axis", "log", "out"};
    PARSE("softmax_backward", names, 2);
    long long axis = -1;
    int lg = a_[3] ? PyObject_IsTrue(a_[3]) : 0;
    if (lg) c.fn = "log_softmax_backward";
    FAIL_IF(lg < 0 || hgpy_get_int(&c, a_[2], "axis", -1, &axis));
    FAIL_IF(hgpy_call_out(&c, a_[4]) || hgpy_call_arg(&c, a_[0], 0, "grad") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "y") < 0);
    hg_status s;
    if (lg) CALL_RUN(&c, s, s = hg_log_softmax_backward(T(&c, 0), T(&c, 1), (int32_t)axis, &c.out));
    else CALL_RUN(&c, s, s = hg_softmax_backward(T(&c, 0), T(&c, 1), (int32_t)axis, &c.out));
    return hgpy_call_result(&c, s);
}

// norm_backward(grad, x, nnorm, weight, eps, rms, grad_x, grad_weight, grad_bias): the outputs
// are existing Tensors (or None: not computed); returns None.
static PyObject* f_norm_backward(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames) {
    static const char* const names[] = {"grad", "x", "nnorm", "weight", "eps", "rms",
                                        "grad_x", "grad_weight", "grad_bias"};
    PARSE("norm_backward", names, 3);
    long long nn = 1;
    double eps = 0.0;
    int rms = a_[5] ? PyObject_IsTrue(a_[5]) : 0;
    if (rms) c.fn = "rms_norm_backward";
    FAIL_IF(rms < 0 || hgpy_get_int(&c, a_[2], "nnorm", 1, &nn) ||
            hgpy_get_dbl(&c, a_[4], "eps", 1e-5, &eps));
    FAIL_IF(hgpy_call_arg(&c, a_[0], 0, "grad") < 0 || hgpy_call_arg(&c, a_[1], 0, "x") < 0);
    int iw = -1, io[3] = {-1, -1, -1};
    static const char* const onames[3] = {"grad_x", "grad_weight", "grad_bias"};
    if (a_[3] && a_[3] != Py_None) FAIL_IF((iw = hgpy_call_arg(&c, a_[3], 0, "weight")) < 0);
    for (int k = 0; k < 3; k++)
        if (a_[6 + k] && a_[6 + k] != Py_None) {
            if (!hgpy_is_tensor(a_[6 + k])) {
                call_end(&c);
                PyErr_Format(PyExc_TypeError, "%s: %s must be a Tensor or None", c.fn, onames[k]);
                return NULL;
            }
            FAIL_IF((io[k] = hgpy_call_arg(&c, a_[6 + k], 0, onames[k])) < 0);
        }
    if (rms && io[2] >= 0) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "rms_norm_backward: rms_norm has no bias "
                              "(grad_bias must be None)");
    }
    hg_tensor outs[3];
    for (int k = 0; k < 3; k++)
        if (io[k] >= 0) outs[k] = *T(&c, io[k]);
    hg_tensor* o[3];
    for (int k = 0; k < 3; k++) o[k] = io[k] >= 0 ? &outs[k] : NULL;
    const hg_tensor* w = iw >= 0 ? T(&c, iw) : NULL;
    hg_status s;
    if (rms) CALL_RUN(&c, s, s = hg_rms_norm_backward(T(&c, 0), T(&c, 1), (int32_t)nn, w, eps,
                                                      o[0], o[1]));
    else CALL_RUN(&c, s, s = hg_layer_norm_backward(T(&c, 0), T(&c, 1), (int32_t)nn, w, eps, o[0],
                                                    o[1], o[2]));
    call_end(&c);
    if (s) return hgpy_raise_status(s, NULL);
    Py_RETURN_NONE;
}

// --- optimizers -----------------------------------------------------------------------------------
// adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, beta1, beta2, eps,
// weight_decay, step, decoupled, amsgrad, maximize): hg_adam_step in place; the written tensors
// must be Tensors (a converted copy would take the update); returns None.
static PyObject* f_adam_step(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) {
    static const char* const names[] = {"param", "grad", "exp_avg", "exp_avg_sq",
                                        "max_exp_avg_sq", "lr", "beta1", "beta2", "eps",
                                        "weight_decay", "step", "decoupled", "amsgrad",
                                        "maximize"};
    PARSE("adam_step", names, 11);
    hg_adam_options o;
    memset(&o, 0, sizeof o);
    long long step = 0;
    int fl[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) FAIL_IF(a_[11 + k] && (fl[k] = PyObject_IsTrue(a_[11 + k])) < 0);
    FAIL_IF(hgpy_get_dbl(&c, a_[5], "lr", 1e-3, &o.lr) ||
            hgpy_get_dbl(&c, a_[6], "beta1", 0.9, &o.beta1) ||
            hgpy_get_dbl(&c, a_[7], "beta2", 0.999, &o.beta2) ||
            hgpy_get_dbl(&c, a_[8], "eps", 1e-8, &o.eps) ||
            hgpy_get_dbl(&c, a_[9], "weight_decay", 0.0, &o.weight_decay) ||
            hgpy_get_int(&c, a_[10], "step", 1, &step));
    o.step = step;
    o.decoupled_weight_decay = fl[0];
    o.amsgrad = fl[1];
    o.maximize = fl[2];
    static const char* const tnames[5] = {"param", "grad", "exp_avg", "exp_avg_sq",
                                          "max_exp_avg_sq"};
    int idx[5] = {-1, -1, -1, -1, -1};
    for (int k = 0; k < 5; k++) {
        if (k == 4 && (!a_[4] || a_[4] == Py_None)) continue;
        if (k != 1 && !hgpy_is_tensor(a_[k])) {
            call_end(&c);
            PyErr_Format(PyExc_TypeError, "adam_step: %s must be a hologram Tensor (it is "
                         "updated in place), got %s", tnames[k], Py_TYPE(a_[k])->tp_name);
            return NULL;
        }
        FAIL_IF((idx[k] = hgpy_call_arg(&c, a_[k], 0, tnames[k])) < 0);
    }
    hg_status s;
    CALL_RUN(&c, s, s = hg_adam_step(&o, T(&c, idx[0]), T(&c, idx[1]), T(&c, idx[2]),
                                     T(&c, idx[3]), idx[4] >= 0 ? T(&c, idx[4]) : NULL));
    call_end(&c);
    if (s) return hgpy_raise_status(s, NULL);
    Py_RETURN_NONE;
}

static PyObject* f_cross_entropy_backward(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                          PyObject* kwnames) {
    static const char* const names[] = {"grad", "logits", "target", "ignore_index", "reduction",
                                        "out"};
    PARSE("cross_entropy_backward", names, 3);
    hg_reduction red = HG_REDUCTION_MEAN;
    long long ii = -100;
    FAIL_IF(hgpy_get_int(&c, a_[3], "ignore_index", -100, &ii) ||
            hgpy_get_reduction(&c, a_[4], &red) || hgpy_call_out(&c, a_[5]) ||
            hgpy_call_arg(&c, a_[0], 0, "grad") < 0 || hgpy_call_arg(&c, a_[1], 0, "logits") < 0 ||
            hgpy_call_arg(&c, a_[2], 0, "target") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_cross_entropy_backward(T(&c, 0), T(&c, 1), T(&c, 2), ii, red, &c.out));
    return hgpy_call_result(&c, s);
}

// --- linear algebra -----------------------------------------------------------------------------
static PyObject* f_matmul(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"a", "b", "out"};
    PARSE("matmul", names, 2);
    FAIL_IF(hgpy_call_out(&c, a_[2]) || hgpy_call_arg(&c, a_[0], 0, "a") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "b") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_matmul(T(&c, 0), T(&c, 1), &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_matvec(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"a", "x", "out"};
    PARSE("matvec", names, 2);
    FAIL_IF(hgpy_call_out(&c, a_[2]) || hgpy_call_arg(&c, a_[0], 0, "a") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "x") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_matvec(T(&c, 0), T(&c, 1), &c.out));
    return hgpy_call_result(&c, s);
}

// gemm(a, b, c, alpha=1, beta=0, trans_a=False, trans_b=False): c = alpha op(a) op(b) + beta c.
static PyObject* f_gemm(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"a", "b", "c", "alpha", "beta", "trans_a", "trans_b"};
    PARSE("gemm", names, 3);
    double alpha = 1.0, beta = 0.0;
    int ta = a_[5] ? PyObject_IsTrue(a_[5]) : 0, tb = a_[6] ? PyObject_IsTrue(a_[6]) : 0;
    FAIL_IF(ta < 0 || tb < 0 || hgpy_get_dbl(&c, a_[3], "alpha", 1.0, &alpha) ||
            hgpy_get_dbl(&c, a_[4], "beta", 0.0, &beta));
    if (!hgpy_is_tensor(a_[2]) && Py_TYPE(a_[2]) != &HgBuffer_Type) {
        call_end(&c);
        return PyErr_Format(PyExc_TypeError, "gemm: c must be a hologram.Tensor (it is written), "
                            "got %.100s", Py_TYPE(a_[2])->tp_name);
    }
    FAIL_IF(hgpy_call_out(&c, a_[2]) || hgpy_call_arg(&c, a_[0], 0, "a") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "b") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_gemm(ta, tb, alpha, T(&c, 0), T(&c, 1), beta, &c.out));
    return hgpy_call_result(&c, s);
}

// --- losses -------------------------------------------------------------------------------------
static PyObject* f_mse_loss(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    static const char* const names[] = {"pred", "target", "reduction", "out"};
    PARSE("mse_loss", names, 2);
    hg_reduction red = HG_REDUCTION_MEAN;
    FAIL_IF(hgpy_get_reduction(&c, a_[2], &red) || hgpy_call_out(&c, a_[3]) ||
            hgpy_call_arg(&c, a_[0], 0, "pred") < 0 || hgpy_call_arg(&c, a_[1], 0, "target") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_mse_loss(T(&c, 0), T(&c, 1), red, &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_cross_entropy(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames) {
    static const char* const names[] = {"logits", "target", "ignore_index", "reduction", "out"};
    PARSE("cross_entropy", names, 2);
    hg_reduction red = HG_REDUCTION_MEAN;
    long long ii = -100;
    FAIL_IF(hgpy_get_int(&c, a_[2], "ignore_index", -100, &ii) ||
            hgpy_get_reduction(&c, a_[3], &red) ||
            hgpy_call_out(&c, a_[4]) || hgpy_call_arg(&c, a_[0], 0, "logits") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "target") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_cross_entropy(T(&c, 0), T(&c, 1), ii, red, &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_bce(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"prob", "target", "weight", "reduction", "out"};
    PARSE("binary_cross_entropy", names, 2);
    hg_reduction red = HG_REDUCTION_MEAN;
    int iw = -1;
    FAIL_IF(hgpy_get_reduction(&c, a_[3], &red) || hgpy_call_out(&c, a_[4]) ||
            hgpy_call_arg(&c, a_[0], 0, "prob") < 0 || hgpy_call_arg(&c, a_[1], 0, "target") < 0);
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_binary_cross_entropy(T(&c, 0), T(&c, 1), iw >= 0 ? T(&c, iw) : NULL,
                                                red, &c.out));
    return hgpy_call_result(&c, s);
}

static PyObject* f_bce_logits(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
    static const char* const names[] = {"logits", "target", "weight", "pos_weight", "reduction",
                                        "out"};
    PARSE("binary_cross_entropy_with_logits", names, 2);
    hg_reduction red = HG_REDUCTION_MEAN;
    int iw = -1, ip = -1;
    FAIL_IF(hgpy_get_reduction(&c, a_[4], &red) || hgpy_call_out(&c, a_[5]) ||
            hgpy_call_arg(&c, a_[0], 0, "logits") < 0 || hgpy_call_arg(&c, a_[1], 0, "target") < 0);
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    if (a_[3] && a_[3] != Py_None) FAIL_IF((ip = hgpy_call_arg(&c, a_[3], 0, "pos_weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_binary_cross_entropy_with_logits(
                        T(&c, 0), T(&c, 1), iw >= 0 ? T(&c, iw) : NULL,
                        ip >= 0 ? T(&c, ip) : NULL, red, &c.out));
    return hgpy_call_result(&c, s);
}

PyObject* hgpy_unary_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return f_unary(NULL, args, nargs, kwnames);
}

PyObject* hgpy_binary_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return f_binary(NULL, args, nargs, kwnames);
}

PyMethodDef hgpy_tensor_op_methods[] = {
    {"_set_hooks", hgpy_set_hooks, METH_VARARGS, "_set_hooks(as_tensor, default_executor)"},
    HGPY_FASTCALL("unary", f_unary, "unary(op, x, out=None)"),
    HGPY_FASTCALL("binary", f_binary, "binary(op, a, b, out=None)"),
    HGPY_FASTCALL("where", f_where, "where(cond, a, b, out=None)"),
    HGPY_FASTCALL("fma", f_fma, "fma(a, b, c, out=None)"),
    HGPY_FASTCALL("clip", f_clip, "clip(x, lo, hi, out=None)"),
    HGPY_FASTCALL("cast", f_cast, "cast(x, dtype, out=None)"),
    HGPY_FASTCALL("reduce", f_reduce,
                  "reduce(op, x, axis=None, keepdims=False, out=None, ddof=0)"),
    HGPY_FASTCALL("softmax", f_softmax, "softmax(x, axis=-1, log=False, out=None)"),
    HGPY_FASTCALL("layer_norm", f_layer_norm,
                  "layer_norm(x, nnorm, weight=None, bias=None, eps=1e-5, out=None)"),
    HGPY_FASTCALL("rms_norm", f_rms_norm, "rms_norm(x, nnorm, weight=None, eps=1e-6, out=None)"),
    HGPY_FASTCALL("matmul", f_matmul, "matmul(a, b, out=None)"),
    HGPY_FASTCALL("matvec", f_matvec, "matvec(a, x, out=None)"),
    HGPY_FASTCALL("gemm", f_gemm, "gemm(a, b, c, alpha=1, beta=0, trans_a=False, trans_b=False)"),
    HGPY_FASTCALL("mse_loss", f_mse_loss, "mse_loss(pred, target, reduction='mean', out=None)"),
    HGPY_FASTCALL("activation_backward", f_activation_backward,
                  "activation_backward(op, grad, x=None, y=None, out=None)"),
    HGPY_FASTCALL("softmax_backward", f_softmax_backward,
                  "softmax_backward(grad, y, axis=-1, log=False, out=None)"),
    HGPY_FASTCALL("adam_step", f_adam_step,
                  "adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, beta1, beta2, "
                  "eps, weight_decay, step, decoupled=False, amsgrad=False, maximize=False)"),
    HGPY_FASTCALL("norm_backward", f_norm_backward,
                  "norm_backward(grad, x, nnorm, weight=None, eps=1e-5, rms=False, grad_x=None, "
                  "grad_weight=None, grad_bias=None)"),
    HGPY_FASTCALL("cross_entropy_backward", f_cross_entropy_backward,
                  "cross_entropy_backward(grad, logits, target, ignore_index=-100, "
                  "reduction='mean', out=None)"),
    HGPY_FASTCALL("cross_entropy", f_cross_entropy,
                  "cross_entropy(logits, target, ignore_index=-100, reduction='mean', out=None)"),
    HGPY_FASTCALL("binary_cross_entropy", f_bce,
                  "binary_cross_entropy(prob, target, weight=None, reduction='mean', out=None)"),
    HGPY_FASTCALL("binary_cross_entropy_with_logits", f_bce_logits,
                  "binary_cross_entropy_with_logits(logits, target, weight=None, "
                  "pos_weight=None, reduction='mean', out=None)"),
    {NULL, NULL, 0, NULL},
};
