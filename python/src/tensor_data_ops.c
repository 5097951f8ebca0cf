// The _C functions behind hologram.ops' data ops and creation: fill, arange, random, concat,
// index_select, gather, index_add, scatter_add (declared in tools/opdecl/ops_decl.py, the last
// four generated whole into tensor_data_ops_decl.h), copy and empty (the conventions of
// tensor_ops.c; op_call.h).
#include <string.h>
#include "op_call.h"

// --- data ---------------------------------------------------------------------------------------
// The functions that write an existing tensor: out must be given (a Tensor or Buffer).
static int need_out(call* c, PyObject* o) {
    if (!o || o == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: out is required", c->fn);
        return -1;
    }
    if (hgpy_call_out(c, o)) return -1;
    c->elems = hgpy_numel(&c->out);
    return 0;
}

// Declared in tools/opdecl/ops_decl.py: argument names, defaults and method entries come from
// the generated header, index_select, gather, index_add and scatter_add whole.
#include "tensor_data_ops_decl.h"

static PyObject* f_fill(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(fill);
    hg_scalar v;
    FAIL_IF(need_out(&c, a_[0]) || hgpy_get_scalar(&c, a_[1], "value", &v));
    hg_status s;
    CALL_RUN(&c, s, s = hg_fill(&c.out, v));
    return hgpy_call_result(&c, s);
}

static PyObject* f_arange(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(arange);
    double start = 0.0, step = 1.0;
    FAIL_IF(need_out(&c, a_[0]) ||
            hgpy_get_dbl(&c, a_[1], "start", HGPY_DFLT_arange_start, &start) ||
            hgpy_get_dbl(&c, a_[2], "step", HGPY_DFLT_arange_step, &step));
    hg_status s;
    CALL_RUN(&c, s, s = hg_arange(&c.out, start, step));
    return hgpy_call_result(&c, s);
}

static PyObject* f_random(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(random);
    int normal = PyObject_IsTrue(a_[1]);
    uint64_t seed = 0, offset = 0;
    double pa = 0.0, pb = 1.0;
    c.fn = normal > 0 ? "random_normal" : "random_uniform";
    FAIL_IF(normal < 0 || need_out(&c, a_[0]) ||
            hgpy_get_u64(&c, a_[2], "seed", HGPY_DFLT_random_seed, &seed) ||
            hgpy_get_u64(&c, a_[3], "offset", HGPY_DFLT_random_offset, &offset) ||
            hgpy_get_dbl(&c, a_[4], normal ? "mean" : "low", HGPY_DFLT_random_a, &pa) ||
            hgpy_get_dbl(&c, a_[5], normal ? "std" : "high", HGPY_DFLT_random_b, &pb));
    hg_status s;
    if (normal) CALL_RUN(&c, s, s = hg_random_normal(&c.out, seed, offset, pa, pb));
    else CALL_RUN(&c, s, s = hg_random_uniform(&c.out, seed, offset, pa, pb));
    return hgpy_call_result(&c, s);
}

// dropout(x, p, seed, offset, out, mask): hg_dropout; mask (a Tensor or None) is written too.
static PyObject* f_dropout(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(dropout);
    double p = 0.0;
    uint64_t seed = 0, offset = 0;
    FAIL_IF(hgpy_get_dbl(&c, a_[1], "p", HGPY_DFLT_dropout_p, &p) ||
            hgpy_get_u64(&c, a_[2], "seed", HGPY_DFLT_dropout_seed, &seed) ||
            hgpy_get_u64(&c, a_[3], "offset", HGPY_DFLT_dropout_offset, &offset) ||
            hgpy_call_out(&c, a_[4]) || hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    int im = -1;
    if (a_[5] && a_[5] != Py_None) {
        if (!hgpy_is_tensor(a_[5])) {
            call_end(&c);
            PyErr_Format(PyExc_TypeError, "%s: mask must be a Tensor or None", c.fn);
            return NULL;
        }
        FAIL_IF((im = hgpy_call_arg(&c, a_[5], 0, "mask")) < 0);
    }
    hg_status s;
    CALL_RUN(&c, s, s = hg_dropout(T(&c, 0), p, seed, offset, &c.out, im >= 0 ? T(&c, im) : NULL));
    return hgpy_call_result(&c, s);
}

static PyObject* f_concat(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(concat);
    long long axis = 0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "axis", HGPY_DFLT_concat_axis, &axis) ||
            hgpy_call_out(&c, a_[2]));
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
        c.elems += hgpy_numel(&ts[got]);
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
    r = hgpy_call_result(&c, s);
done:
    for (Py_ssize_t i = 0; i < got; i++) hgpy_operand_release(&ops[i]);
    PyMem_Free(ops);
    PyMem_Free(ts);
    PyMem_Free(held);
    Py_DECREF(fast);
    if (!r) call_end(&c);
    return r;
}

// copy_(dst, src): dst[...] = src (src broadcast to dst's shape, converted to dst's dtype). As
// numpy's assignment and copyto, src may have more dims than dst where the extra leading ones
// have size 1 (t[...] = np.ones((1, 3)) into a (3,) tensor): they are dropped first.
static PyObject* f_copy(PyObject* m, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const char* const names[] = {"dst", "src"};
    PARSE("copy", names, 2);
    FAIL_IF(need_out(&c, a_[0]) || hgpy_call_arg(&c, a_[1], 1, "src") < 0);
    hg_status s;
    if (c.op[0].is_scalar) {
        CALL_RUN(&c, s, s = hg_fill(&c.out, c.op[0].s));
        return hgpy_call_result(&c, s);
    }
    hg_tensor src = c.op[0].t;
    while (src.ndim > c.out.ndim && src.shape[0] == 1) {
        hg_tensor q;
        if ((s = hg_tensor_squeeze(&src, 0, &q)) != HG_OK) return hgpy_call_result(&c, s);
        src = q;
    }
    if (src.ndim > c.out.ndim) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "could not broadcast a value of %d dims "
                              "(leading size %lld) into a tensor of %d dims: only leading dims of "
                              "size 1 may be dropped", (int)src.ndim, (long long)src.shape[0],
                              (int)c.out.ndim);
    }
    if (src.ndim != c.out.ndim || memcmp(src.shape, c.out.shape, sizeof src.shape)) {
        hg_tensor e;
        if ((s = hg_tensor_expand(&src, c.out.ndim, c.out.shape, &e)) != HG_OK)
            return hgpy_call_result(&c, s);
        src = e;
    }
    if (src.dtype == c.out.dtype) CALL_RUN(&c, s, s = hg_tensor_copy(&c.out, &src));
    else CALL_RUN(&c, s, s = hg_cast(&src, c.out.dtype, &c.out));
    return hgpy_call_result(&c, s);
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
    return hgpy_tensor_empty(e, nd, shape, dt, zero ? HG_BUFFER_DEFAULT : HG_BUFFER_UNINITIALIZED,
                             "empty");
}

PyObject* hgpy_tensor_empty(HgExecutor* e, int32_t nd, const int64_t* shape, hg_dtype dt,
                            uint32_t flags, const char* fn) {
    int64_t count = 1;
    for (int32_t d = 0; d < nd; d++) count *= shape[d];
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
    if (s != HG_OK) return hgpy_raise_status(s, fn);
    HgBuffer* b = hgpy_buffer_new_known(e, h, dt, (size_t)count);
    if (!b) return NULL;
    hg_tensor t;
    s = hg_tensor_from_buffer(h, nd, shape, &t);
    PyObject* r = s == HG_OK ? hgpy_tensor_new(b, &t) : hgpy_raise_status(s, fn);
    Py_DECREF(b);
    return r;
}

PyMethodDef hgpy_tensor_data_methods[] = {
    HGPY_DECL_METHODS_tensor_data_ops
    HGPY_FASTCALL("copy", f_copy, "copy(dst, src): dst[...] = src"),
    HGPY_FASTCALL("empty", f_empty, "empty(executor, shape, dtype=float32, zero=False)"),
    
    {NULL, NULL, 0, NULL},
};
