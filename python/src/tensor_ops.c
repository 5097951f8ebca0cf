// The _C functions behind hologram.ops for computation (unary, binary, where, fma, clip, cast,
// reductions, softmax and norms, matmul/matvec/gemm, losses) and the operator slots of Tensor
// (a + b, -a, a @ b, ...). Every function takes tensors (Tensor, Buffer as 1-D, or anything the
// package's _as_tensor hook turns into a Tensor) and Python scalars where the library takes
// hg_scalar. `out=None` lets the library allocate the result on the inputs' executor; an `out`
// Tensor receives it (numpy's out rules, docs/ops.md) and is returned. Each op function is
// declared in tools/opdecl/ops_decl.py (tensor_ops_decl.h is generated from it). Data ops and
// creation: tensor_data_ops.c; the shared call machinery: op_call.h.
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

// --- the op functions ---------------------------------------------------------------------------
// Declared in tools/opdecl/ops_decl.py: the generated header holds each one's argument names,
// defaults and method entry, and the whole binding of the ops whose arguments follow the common
// pattern (where, fma, softmax, the norms, matmul, matvec, the losses, most gradients). The
// functions below are the ones written by hand (body="custom" there).
#include "tensor_ops_decl.h"

// --- elementwise --------------------------------------------------------------------------------
static PyObject* f_unary(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(unary);
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
    PARSE_DECL(binary);
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

// clip(x, lo, hi, out): lo/hi None, Python numbers (weak promotion, as numpy) or tensors.
static PyObject* f_clip(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(clip);
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
    PARSE_DECL(cast);
    hg_dtype dt;
    FAIL_IF(hgpy_dtype_from_object(a_[1], &dt));
    FAIL_IF(hgpy_call_out(&c, a_[2]) || hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_cast(T(&c, 0), dt, &c.out));
    return hgpy_call_result(&c, s);
}

// --- reductions ----------------------------------------------------------------------------------
static PyObject* f_reduce(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(reduce);
    long long op = 0;
    FAIL_IF(hgpy_get_int(&c, a_[0], "op", 0, &op));
    if (op < 0 || op >= HG_REDUCE_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "reduce: op code %lld out of range", op);
    }
    c.fn = hg_reduce_op_name((hg_reduce_op)op);
    int32_t axes[HG_MAX_DIMS], naxes;
    int all, keep = a_[3] ? PyObject_IsTrue(a_[3]) : HGPY_DFLT_reduce_keepdims;
    double ddof = 0.0;
    FAIL_IF(keep < 0 || hgpy_get_axes(&c, a_[2], axes, &naxes, &all) ||
            hgpy_get_dbl(&c, a_[5], "ddof", HGPY_DFLT_reduce_ddof, &ddof));
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

// Outputs given as existing Tensors or None (not computed): io[k] the call's index of a_[k], or
// -1. -1 with the error set when one is neither.
static int opt_outputs(call* c, PyObject* const* a, int n, const char* const* names, int* io) {
    for (int k = 0; k < n; k++) {
        io[k] = -1;
        if (!a[k] || a[k] == Py_None) continue;
        if (!hgpy_is_tensor(a[k])) {
            PyErr_Format(PyExc_TypeError, "%s: %s must be a Tensor or None", c->fn, names[k]);
            return -1;
        }
        if ((io[k] = hgpy_call_arg(c, a[k], 0, names[k])) < 0) return -1;
    }
    return 0;
}

// layer_norm_stats(x, nnorm, weight, bias, eps, out, mean, rstd): the outputs are existing
// Tensors (mean, rstd: or None, not computed); returns None.
static PyObject* f_layer_norm_stats(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                    PyObject* kwnames) {
    PARSE_DECL(layer_norm_stats);
    long long nn = 1;
    double eps = 0.0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "nnorm", HGPY_DFLT_layer_norm_stats_nnorm, &nn) ||
            hgpy_get_dbl(&c, a_[4], "eps", HGPY_DFLT_layer_norm_stats_eps, &eps));
    FAIL_IF(hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    int iw = -1, ib = -1, io[3];
    static const char* const onames[3] = {"out", "mean", "rstd"};
    if (a_[2] && a_[2] != Py_None) FAIL_IF((iw = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    if (a_[3] && a_[3] != Py_None) FAIL_IF((ib = hgpy_call_arg(&c, a_[3], 0, "bias")) < 0);
    FAIL_IF(opt_outputs(&c, a_ + 5, 3, onames, io));
    if (io[0] < 0) {
        call_end(&c);
        PyErr_Format(PyExc_TypeError, "%s: out must be a Tensor", c.fn);
        return NULL;
    }
    hg_tensor outs[3], *o[3];
    for (int k = 0; k < 3; k++) {
        if (io[k] >= 0) outs[k] = *T(&c, io[k]);
        o[k] = io[k] >= 0 ? &outs[k] : NULL;
    }
    hg_status s;
    CALL_RUN(&c, s, s = hg_layer_norm_stats(T(&c, 0), (int32_t)nn, iw >= 0 ? T(&c, iw) : NULL,
                                            ib >= 0 ? T(&c, ib) : NULL, eps, o[0], o[1], o[2]));
    call_end(&c);
    if (s) return hgpy_raise_status(s, NULL);
    Py_RETURN_NONE;
}

// scaled_dot_product_attention(q, k, v, mask, is_causal, scale, out, lse): a generated body but
// for the bool (the generator binds bools only as variant flags) and lse (an existing Tensor
// written in place, or None).
static PyObject* f_scaled_dot_product_attention(PyObject* m, PyObject* const* args,
                                                Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(scaled_dot_product_attention);
    double scale = 0.0;
    int causal = a_[4] ? PyObject_IsTrue(a_[4])
                       : HGPY_DFLT_scaled_dot_product_attention_is_causal;
    FAIL_IF(causal < 0 ||
            hgpy_get_dbl(&c, a_[5], "scale", HGPY_DFLT_scaled_dot_product_attention_scale,
                         &scale) ||
            hgpy_call_out(&c, a_[6]) || hgpy_call_arg(&c, a_[0], 0, "q") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "k") < 0 || hgpy_call_arg(&c, a_[2], 0, "v") < 0);
    int i_mask = -1, i_lse = -1;
    if (a_[3] && a_[3] != Py_None) FAIL_IF((i_mask = hgpy_call_arg(&c, a_[3], 0, "mask")) < 0);
    static const char* const lname[1] = {"lse"};
    FAIL_IF(opt_outputs(&c, a_ + 7, 1, lname, &i_lse));
    hg_tensor lse;
    if (i_lse >= 0) lse = *T(&c, i_lse);
    hg_status s;
    CALL_RUN(&c, s, s = hg_scaled_dot_product_attention(T(&c, 0), T(&c, 1), T(&c, 2),
                                                        i_mask >= 0 ? T(&c, i_mask) : NULL,
                                                        causal, scale, &c.out,
                                                        i_lse >= 0 ? &lse : NULL));
    return hgpy_call_result(&c, s);
}

// scaled_dot_product_attention_backward(grad_out, q, k, v, out, lse, mask, is_causal, scale,
// grad_q, grad_k, grad_v): the gradients are existing Tensors written in place (required; the
// Python wrapper allocates them); returns None.
static PyObject* f_scaled_dot_product_attention_backward(PyObject* m, PyObject* const* args,
                                                         Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(scaled_dot_product_attention_backward);
    double scale = 0.0;
    int causal = a_[7] ? PyObject_IsTrue(a_[7])
                       : HGPY_DFLT_scaled_dot_product_attention_backward_is_causal;
    FAIL_IF(causal < 0 ||
            hgpy_get_dbl(&c, a_[8], "scale",
                         HGPY_DFLT_scaled_dot_product_attention_backward_scale, &scale));
    static const char* const inames[6] = {"grad_out", "q", "k", "v", "out", "lse"};
    for (int i = 0; i < 6; i++) FAIL_IF(hgpy_call_arg(&c, a_[i], 0, inames[i]) < 0);
    int i_mask = -1, io[3];
    if (a_[6] && a_[6] != Py_None) FAIL_IF((i_mask = hgpy_call_arg(&c, a_[6], 0, "mask")) < 0);
    static const char* const onames[3] = {"grad_q", "grad_k", "grad_v"};
    FAIL_IF(opt_outputs(&c, a_ + 9, 3, onames, io));
    for (int o = 0; o < 3; o++)
        if (io[o] < 0) {
            call_end(&c);
            PyErr_Format(PyExc_TypeError, "%s: %s must be a Tensor", c.fn, onames[o]);
            return NULL;
        }
    hg_tensor g[3] = {*T(&c, io[0]), *T(&c, io[1]), *T(&c, io[2])};
    hg_status s;
    CALL_RUN(&c, s, s = hg_scaled_dot_product_attention_backward(
                        T(&c, 0), T(&c, 1), T(&c, 2), T(&c, 3), T(&c, 4), T(&c, 5),
                        i_mask >= 0 ? T(&c, i_mask) : NULL, causal, scale, &g[0], &g[1], &g[2]));
    call_end(&c);
    if (s) return hgpy_raise_status(s, NULL);
    Py_RETURN_NONE;
}

// --- gradients (the backward ops) -----------------------------------------------------------------
// norm_backward(grad, x, nnorm, weight, eps, rms, grad_x, grad_weight, grad_bias, mean, rstd):
// the outputs are existing Tensors (or None: not computed); returns None. mean and rstd given
// (layer_norm only): hg_layer_norm_backward_stats, eps unused.
static PyObject* f_norm_backward(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames) {
    PARSE_DECL(norm_backward);
    long long nn = 1;
    double eps = 0.0;
    int rms = a_[5] ? PyObject_IsTrue(a_[5]) : HGPY_DFLT_norm_backward_rms;
    if (rms) c.fn = "rms_norm_backward";
    FAIL_IF(rms < 0 || hgpy_get_int(&c, a_[2], "nnorm", HGPY_DFLT_norm_backward_nnorm, &nn) ||
            hgpy_get_dbl(&c, a_[4], "eps", HGPY_DFLT_norm_backward_eps, &eps));
    FAIL_IF(hgpy_call_arg(&c, a_[0], 0, "grad") < 0 || hgpy_call_arg(&c, a_[1], 0, "x") < 0);
    int iw = -1, io[3], is[2] = {-1, -1};
    static const char* const onames[3] = {"grad_x", "grad_weight", "grad_bias"};
    static const char* const snames[2] = {"mean", "rstd"};
    if (a_[3] && a_[3] != Py_None) FAIL_IF((iw = hgpy_call_arg(&c, a_[3], 0, "weight")) < 0);
    FAIL_IF(opt_outputs(&c, a_ + 6, 3, onames, io));
    for (int k = 0; k < 2; k++)
        if (a_[9 + k] && a_[9 + k] != Py_None)
            FAIL_IF((is[k] = hgpy_call_arg(&c, a_[9 + k], 0, snames[k])) < 0);
    if ((rms && io[2] >= 0) || (is[0] >= 0) != (is[1] >= 0) || (rms && is[0] >= 0)) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, rms ? "rms_norm_backward: rms_norm has no "
                              "bias or given statistics (grad_bias, mean and rstd must be None)"
                              : "norm_backward: mean and rstd are given together or not at all");
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
    else if (is[0] >= 0)
        CALL_RUN(&c, s, s = hg_layer_norm_backward_stats(T(&c, 0), T(&c, 1), (int32_t)nn,
                                                         T(&c, is[0]), T(&c, is[1]), w, o[0],
                                                         o[1], o[2]));
    else CALL_RUN(&c, s, s = hg_layer_norm_backward(T(&c, 0), T(&c, 1), (int32_t)nn, w, eps, o[0],
                                                    o[1], o[2]));
    call_end(&c);
    if (s) return hgpy_raise_status(s, NULL);
    Py_RETURN_NONE;
}

// --- optimizers -----------------------------------------------------------------------------------
// adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, beta1, beta2, eps,
// weight_decay, step, decoupled_weight_decay, amsgrad, maximize): hg_adam_step in place; the written tensors
// must be Tensors (a converted copy would take the update); returns None.
static PyObject* f_adam_step(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) {
    PARSE_DECL(adam_step);
    hg_adam_options o;
    memset(&o, 0, sizeof o);
    long long step = 0;
    int fl[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) FAIL_IF(a_[11 + k] && (fl[k] = PyObject_IsTrue(a_[11 + k])) < 0);
    FAIL_IF(hgpy_get_dbl(&c, a_[5], "lr", HGPY_DFLT_adam_step_lr, &o.lr) ||
            hgpy_get_dbl(&c, a_[6], "beta1", HGPY_DFLT_adam_step_beta1, &o.beta1) ||
            hgpy_get_dbl(&c, a_[7], "beta2", HGPY_DFLT_adam_step_beta2, &o.beta2) ||
            hgpy_get_dbl(&c, a_[8], "eps", HGPY_DFLT_adam_step_eps, &o.eps) ||
            hgpy_get_dbl(&c, a_[9], "weight_decay", HGPY_DFLT_adam_step_weight_decay,
                         &o.weight_decay) ||
            hgpy_get_int(&c, a_[10], "step", HGPY_DFLT_adam_step_step, &step));
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

// --- linear algebra -----------------------------------------------------------------------------
// gemm(a, b, c, alpha=1, beta=0, trans_a=False, trans_b=False): c = alpha op(a) op(b) + beta c.
static PyObject* f_gemm(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(gemm);
    double alpha = 1.0, beta = 0.0;
    int ta = a_[5] ? PyObject_IsTrue(a_[5]) : HGPY_DFLT_gemm_trans_a;
    int tb = a_[6] ? PyObject_IsTrue(a_[6]) : HGPY_DFLT_gemm_trans_b;
    FAIL_IF(ta < 0 || tb < 0 || hgpy_get_dbl(&c, a_[3], "alpha", HGPY_DFLT_gemm_alpha, &alpha) ||
            hgpy_get_dbl(&c, a_[4], "beta", HGPY_DFLT_gemm_beta, &beta));
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

PyObject* hgpy_unary_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return f_unary(NULL, args, nargs, kwnames);
}

PyObject* hgpy_binary_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return f_binary(NULL, args, nargs, kwnames);
}

PyMethodDef hgpy_tensor_op_methods[] = {
    {"_set_hooks", hgpy_set_hooks, METH_VARARGS, "_set_hooks(as_tensor, default_executor)"},
    HGPY_DECL_METHODS_tensor_ops
    {NULL, NULL, 0, NULL},
};
