// GENERATED from tools/opdecl/ops_decl.py by tools/opdecl/gen_ops.py: do not edit; change
// the declaration and run `python3 tools/opdecl/gen_ops.py`. Included once, by tensor_data_ops.c,
// after the helpers the bodies use. Per op: its argument names, required count, name in
// messages, defaults (HGPY_DFLT_<op>_<arg>, for the bindings written by hand), the body
// of a generated binding, and its method table entry (in HGPY_DECL_METHODS_<src>).
#ifndef HGPY_TENSOR_DATA_OPS_DECL_H
#define HGPY_TENSOR_DATA_OPS_DECL_H

// --- fill: hg_fill
static const char* const hgpy_names_fill[] = {"out", "value"};
#define HGPY_NREQ_fill 2
#define HGPY_FN_fill "fill"

// --- arange: hg_arange
static const char* const hgpy_names_arange[] = {"out", "start", "step"};
#define HGPY_NREQ_arange 1
#define HGPY_FN_arange "arange"
#define HGPY_DFLT_arange_start 0.0
#define HGPY_DFLT_arange_step 1.0

// --- random: hg_random_uniform, hg_random_normal
static const char* const hgpy_names_random[] = {"out", "normal", "seed", "offset", "a", "b"};
#define HGPY_NREQ_random 2
#define HGPY_FN_random "random"
#define HGPY_DFLT_random_normal 0
#define HGPY_DFLT_random_seed 0
#define HGPY_DFLT_random_offset 0
#define HGPY_DFLT_random_a 0.0
#define HGPY_DFLT_random_b 1.0

// --- dropout: hg_dropout
static const char* const hgpy_names_dropout[] = {"x", "p", "seed", "offset", "out", "mask"};
#define HGPY_NREQ_dropout 1
#define HGPY_FN_dropout "dropout"
#define HGPY_DFLT_dropout_p 0.5
#define HGPY_DFLT_dropout_seed 0
#define HGPY_DFLT_dropout_offset 0

// --- dropout_backward: hg_dropout_backward
static const char* const hgpy_names_dropout_backward[] = {"grad", "mask", "scale", "out"};
#define HGPY_NREQ_dropout_backward 2
#define HGPY_FN_dropout_backward "dropout_backward"

static PyObject* f_dropout_backward(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                    PyObject* kwnames) {
    PARSE_DECL(dropout_backward);
    double v_scale = 0.0;
    FAIL_IF(hgpy_get_dbl(&c, a_[2], "scale", 1.0, &v_scale) || hgpy_call_out(&c, a_[3]) ||
            hgpy_call_arg(&c, a_[0], 0, "grad") < 0 || hgpy_call_arg(&c, a_[1], 0, "mask") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_dropout_backward(T(&c, 0), T(&c, 1), (double)v_scale, &c.out));
    return hgpy_call_result(&c, s);
}

// --- concat: hg_concat
static const char* const hgpy_names_concat[] = {"tensors", "axis", "out"};
#define HGPY_NREQ_concat 1
#define HGPY_FN_concat "concat"
#define HGPY_DFLT_concat_axis 0

// --- index_select: hg_index_select
static const char* const hgpy_names_index_select[] = {"x", "axis", "index", "out"};
#define HGPY_NREQ_index_select 3
#define HGPY_FN_index_select "index_select"

static PyObject* f_index_select(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                PyObject* kwnames) {
    PARSE_DECL(index_select);
    long long v_axis = 0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "axis", 0, &v_axis) || hgpy_call_out(&c, a_[3]) ||
            hgpy_call_arg(&c, a_[0], 0, "x") < 0 || hgpy_call_arg(&c, a_[2], 0, "index") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_index_select(T(&c, 0), (int32_t)v_axis, T(&c, 1), &c.out));
    return hgpy_call_result(&c, s);
}

// --- gather: hg_gather
static const char* const hgpy_names_gather[] = {"x", "axis", "index", "out"};
#define HGPY_NREQ_gather 3
#define HGPY_FN_gather "gather"

static PyObject* f_gather(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
    PARSE_DECL(gather);
    long long v_axis = 0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "axis", 0, &v_axis) || hgpy_call_out(&c, a_[3]) ||
            hgpy_call_arg(&c, a_[0], 0, "x") < 0 || hgpy_call_arg(&c, a_[2], 0, "index") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_gather(T(&c, 0), (int32_t)v_axis, T(&c, 1), &c.out));
    return hgpy_call_result(&c, s);
}

// --- index_add: hg_index_add
static const char* const hgpy_names_index_add[] = {"out", "axis", "index", "src"};
#define HGPY_NREQ_index_add 4
#define HGPY_FN_index_add "index_add"

static PyObject* f_index_add(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) {
    PARSE_DECL(index_add);
    long long v_axis = 0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "axis", 0, &v_axis) || need_out(&c, a_[0]) ||
            hgpy_call_arg(&c, a_[2], 0, "index") < 0 || hgpy_call_arg(&c, a_[3], 0, "src") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_index_add(&c.out, (int32_t)v_axis, T(&c, 0), T(&c, 1)));
    return hgpy_call_result(&c, s);
}

// --- scatter_add: hg_scatter_add
static const char* const hgpy_names_scatter_add[] = {"out", "axis", "index", "src"};
#define HGPY_NREQ_scatter_add 4
#define HGPY_FN_scatter_add "scatter_add"

static PyObject* f_scatter_add(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                               PyObject* kwnames) {
    PARSE_DECL(scatter_add);
    long long v_axis = 0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "axis", 0, &v_axis) || need_out(&c, a_[0]) ||
            hgpy_call_arg(&c, a_[2], 0, "index") < 0 || hgpy_call_arg(&c, a_[3], 0, "src") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_scatter_add(&c.out, (int32_t)v_axis, T(&c, 0), T(&c, 1)));
    return hgpy_call_result(&c, s);
}

#define HGPY_DECL_METHODS_tensor_data_ops \
    HGPY_FASTCALL("fill", f_fill, \
                  "fill(out, value)"), \
    HGPY_FASTCALL("arange", f_arange, \
                  "arange(out, start=0.0, step=1.0)"), \
    HGPY_FASTCALL("random", f_random, \
                  "random(out, normal, seed=0, offset=0, a=0.0, b=1.0)"), \
    HGPY_FASTCALL("dropout", f_dropout, \
                  "dropout(x, p=0.5, seed=0, offset=0, out=None, mask=None)"), \
    HGPY_FASTCALL("dropout_backward", f_dropout_backward, \
                  "dropout_backward(grad, mask, scale=1.0, out=None)"), \
    HGPY_FASTCALL("concat", f_concat, \
                  "concat(tensors, axis=0, out=None)"), \
    HGPY_FASTCALL("index_select", f_index_select, \
                  "index_select(x, axis, index, out=None)"), \
    HGPY_FASTCALL("gather", f_gather, \
                  "gather(x, axis, index, out=None)"), \
    HGPY_FASTCALL("index_add", f_index_add, \
                  "index_add(out, axis, index, src)"), \
    HGPY_FASTCALL("scatter_add", f_scatter_add, \
                  "scatter_add(out, axis, index, src)"), \

#endif  // HGPY_TENSOR_DATA_OPS_DECL_H
