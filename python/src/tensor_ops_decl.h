// GENERATED from tools/opdecl/ops_decl.py by tools/opdecl/gen_ops.py: do not edit; change
// the declaration and run `python3 tools/opdecl/gen_ops.py`. Included once, by tensor_ops.c,
// after the helpers the bodies use. Per op: its argument names, required count, name in
// messages, defaults (HGPY_DFLT_<op>_<arg>, for the bindings written by hand), the body
// of a generated binding, and its method table entry (in HGPY_DECL_METHODS_<src>).
#ifndef HGPY_TENSOR_OPS_DECL_H
#define HGPY_TENSOR_OPS_DECL_H

// --- unary: hg_unary
static const char* const hgpy_names_unary[] = {"op", "x", "out"};
#define HGPY_NREQ_unary 2
#define HGPY_FN_unary "unary"

// --- binary: hg_binary, hg_binary_scalar
static const char* const hgpy_names_binary[] = {"op", "a", "b", "out"};
#define HGPY_NREQ_binary 3
#define HGPY_FN_binary "binary"

// --- where: hg_where
static const char* const hgpy_names_where[] = {"cond", "a", "b", "out"};
#define HGPY_NREQ_where 3
#define HGPY_FN_where "where"

static PyObject* f_where(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
    PARSE_DECL(where);
    FAIL_IF(hgpy_call_out(&c, a_[3]) || hgpy_call_arg(&c, a_[0], 0, "cond") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "a") < 0 || hgpy_call_arg(&c, a_[2], 0, "b") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_where(T(&c, 0), T(&c, 1), T(&c, 2), &c.out));
    return hgpy_call_result(&c, s);
}

// --- fma: hg_fma
static const char* const hgpy_names_fma[] = {"a", "b", "c", "out"};
#define HGPY_NREQ_fma 3
#define HGPY_FN_fma "fma"

static PyObject* f_fma(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
    PARSE_DECL(fma);
    FAIL_IF(hgpy_call_out(&c, a_[3]) || hgpy_call_arg(&c, a_[0], 0, "a") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "b") < 0 || hgpy_call_arg(&c, a_[2], 0, "c") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_fma(T(&c, 0), T(&c, 1), T(&c, 2), &c.out));
    return hgpy_call_result(&c, s);
}

// --- clip: hg_clip, hg_clip_scalar
static const char* const hgpy_names_clip[] = {"x", "lo", "hi", "out"};
#define HGPY_NREQ_clip 1
#define HGPY_FN_clip "clip"

// --- cast: hg_cast
static const char* const hgpy_names_cast[] = {"x", "dtype", "out"};
#define HGPY_NREQ_cast 2
#define HGPY_FN_cast "astype"

// --- reduce: hg_reduce, hg_var, hg_std
static const char* const hgpy_names_reduce[] = {"op", "x", "axis", "keepdims", "out", "ddof"};
#define HGPY_NREQ_reduce 2
#define HGPY_FN_reduce "reduce"
#define HGPY_DFLT_reduce_keepdims 0
#define HGPY_DFLT_reduce_ddof 0.0

// --- softmax: hg_softmax, hg_log_softmax
static const char* const hgpy_names_softmax[] = {"x", "axis", "log", "out"};
#define HGPY_NREQ_softmax 1
#define HGPY_FN_softmax "softmax"

static PyObject* f_softmax(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
    PARSE_DECL(softmax);
    int v_log = a_[2] ? PyObject_IsTrue(a_[2]) : 0;
    if (v_log) c.fn = "log_softmax";
    long long v_axis = 0;
    FAIL_IF(v_log < 0 || hgpy_get_int(&c, a_[1], "axis", -1, &v_axis) || hgpy_call_out(&c, a_[3]) ||
            hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    hg_status s;
    if (v_log) CALL_RUN(&c, s, s = hg_log_softmax(T(&c, 0), (int32_t)v_axis, &c.out));
    else CALL_RUN(&c, s, s = hg_softmax(T(&c, 0), (int32_t)v_axis, &c.out));
    return hgpy_call_result(&c, s);
}

// --- layer_norm: hg_layer_norm
static const char* const hgpy_names_layer_norm[] = {"x", "nnorm", "weight", "bias", "eps", "out"};
#define HGPY_NREQ_layer_norm 2
#define HGPY_FN_layer_norm "layer_norm"

static PyObject* f_layer_norm(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
    PARSE_DECL(layer_norm);
    long long v_nnorm = 0;
    double v_eps = 0.0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "nnorm", 1, &v_nnorm) ||
            hgpy_get_dbl(&c, a_[4], "eps", 1e-05, &v_eps) || hgpy_call_out(&c, a_[5]) ||
            hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    int i_weight = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((i_weight = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    int i_bias = -1;
    if (a_[3] && a_[3] != Py_None) FAIL_IF((i_bias = hgpy_call_arg(&c, a_[3], 0, "bias")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_layer_norm(T(&c, 0), (int32_t)v_nnorm,
            i_weight >= 0 ? T(&c, i_weight) : NULL, i_bias >= 0 ? T(&c, i_bias) : NULL,
            (double)v_eps, &c.out));
    return hgpy_call_result(&c, s);
}

// --- layer_norm_stats: hg_layer_norm_stats
static const char* const hgpy_names_layer_norm_stats[] = {"x", "nnorm", "weight", "bias", "eps",
    "out", "mean", "rstd"};
#define HGPY_NREQ_layer_norm_stats 6
#define HGPY_FN_layer_norm_stats "layer_norm_stats"
#define HGPY_DFLT_layer_norm_stats_nnorm 1
#define HGPY_DFLT_layer_norm_stats_eps 1e-05

// --- rms_norm: hg_rms_norm
static const char* const hgpy_names_rms_norm[] = {"x", "nnorm", "weight", "eps", "out"};
#define HGPY_NREQ_rms_norm 2
#define HGPY_FN_rms_norm "rms_norm"

static PyObject* f_rms_norm(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    PARSE_DECL(rms_norm);
    long long v_nnorm = 0;
    double v_eps = 0.0;
    FAIL_IF(hgpy_get_int(&c, a_[1], "nnorm", 1, &v_nnorm) ||
            hgpy_get_dbl(&c, a_[3], "eps", 1e-06, &v_eps) || hgpy_call_out(&c, a_[4]) ||
            hgpy_call_arg(&c, a_[0], 0, "x") < 0);
    int i_weight = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((i_weight = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_rms_norm(T(&c, 0), (int32_t)v_nnorm,
            i_weight >= 0 ? T(&c, i_weight) : NULL, (double)v_eps, &c.out));
    return hgpy_call_result(&c, s);
}

// --- scaled_dot_product_attention: hg_scaled_dot_product_attention
static const char* const hgpy_names_scaled_dot_product_attention[] = {"q", "k", "v", "mask",
    "is_causal", "scale", "out", "lse"};
#define HGPY_NREQ_scaled_dot_product_attention 3
#define HGPY_FN_scaled_dot_product_attention "scaled_dot_product_attention"
#define HGPY_DFLT_scaled_dot_product_attention_is_causal 0
#define HGPY_DFLT_scaled_dot_product_attention_scale NAN

// --- matmul: hg_matmul
static const char* const hgpy_names_matmul[] = {"a", "b", "out"};
#define HGPY_NREQ_matmul 2
#define HGPY_FN_matmul "matmul"

static PyObject* f_matmul(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
    PARSE_DECL(matmul);
    FAIL_IF(hgpy_call_out(&c, a_[2]) || hgpy_call_arg(&c, a_[0], 0, "a") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "b") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_matmul(T(&c, 0), T(&c, 1), &c.out));
    return hgpy_call_result(&c, s);
}

// --- matvec: hg_matvec
static const char* const hgpy_names_matvec[] = {"a", "x", "out"};
#define HGPY_NREQ_matvec 2
#define HGPY_FN_matvec "matvec"

static PyObject* f_matvec(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
    PARSE_DECL(matvec);
    FAIL_IF(hgpy_call_out(&c, a_[2]) || hgpy_call_arg(&c, a_[0], 0, "a") < 0 ||
            hgpy_call_arg(&c, a_[1], 0, "x") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_matvec(T(&c, 0), T(&c, 1), &c.out));
    return hgpy_call_result(&c, s);
}

// --- gemm: hg_gemm
static const char* const hgpy_names_gemm[] = {"a", "b", "c", "alpha", "beta", "trans_a", "trans_b"};
#define HGPY_NREQ_gemm 3
#define HGPY_FN_gemm "gemm"
#define HGPY_DFLT_gemm_alpha 1.0
#define HGPY_DFLT_gemm_beta 0.0
#define HGPY_DFLT_gemm_trans_a 0
#define HGPY_DFLT_gemm_trans_b 0

// --- mse_loss: hg_mse_loss
static const char* const hgpy_names_mse_loss[] = {"pred", "target", "reduction", "out"};
#define HGPY_NREQ_mse_loss 2
#define HGPY_FN_mse_loss "mse_loss"

static PyObject* f_mse_loss(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
    PARSE_DECL(mse_loss);
    hg_reduction v_reduction = HG_REDUCTION_MEAN;
    FAIL_IF(hgpy_get_reduction(&c, a_[2], &v_reduction) || hgpy_call_out(&c, a_[3]) ||
            hgpy_call_arg(&c, a_[0], 0, "pred") < 0 || hgpy_call_arg(&c, a_[1], 0, "target") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_mse_loss(T(&c, 0), T(&c, 1), v_reduction, &c.out));
    return hgpy_call_result(&c, s);
}

// --- cross_entropy: hg_cross_entropy
static const char* const hgpy_names_cross_entropy[] = {"logits", "target", "ignore_index",
    "reduction", "out"};
#define HGPY_NREQ_cross_entropy 2
#define HGPY_FN_cross_entropy "cross_entropy"

static PyObject* f_cross_entropy(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames) {
    PARSE_DECL(cross_entropy);
    long long v_ignore_index = 0;
    hg_reduction v_reduction = HG_REDUCTION_MEAN;
    FAIL_IF(hgpy_get_int(&c, a_[2], "ignore_index", -100, &v_ignore_index) ||
            hgpy_get_reduction(&c, a_[3], &v_reduction) || hgpy_call_out(&c, a_[4]) ||
            hgpy_call_arg(&c, a_[0], 0, "logits") < 0 || hgpy_call_arg(&c, a_[1], 0, "target") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_cross_entropy(T(&c, 0), T(&c, 1), (int64_t)v_ignore_index, v_reduction,
            &c.out));
    return hgpy_call_result(&c, s);
}

// --- binary_cross_entropy: hg_binary_cross_entropy
static const char* const hgpy_names_binary_cross_entropy[] = {"prob", "target", "weight",
    "reduction", "out"};
#define HGPY_NREQ_binary_cross_entropy 2
#define HGPY_FN_binary_cross_entropy "binary_cross_entropy"

static PyObject* f_binary_cross_entropy(PyObject* m, PyObject* const* args,
                                        Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(binary_cross_entropy);
    hg_reduction v_reduction = HG_REDUCTION_MEAN;
    FAIL_IF(hgpy_get_reduction(&c, a_[3], &v_reduction) || hgpy_call_out(&c, a_[4]) ||
            hgpy_call_arg(&c, a_[0], 0, "prob") < 0 || hgpy_call_arg(&c, a_[1], 0, "target") < 0);
    int i_weight = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((i_weight = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_binary_cross_entropy(T(&c, 0), T(&c, 1),
            i_weight >= 0 ? T(&c, i_weight) : NULL, v_reduction, &c.out));
    return hgpy_call_result(&c, s);
}

// --- binary_cross_entropy_with_logits: hg_binary_cross_entropy_with_logits
static const char* const hgpy_names_binary_cross_entropy_with_logits[] = {"logits", "target",
    "weight", "pos_weight", "reduction", "out"};
#define HGPY_NREQ_binary_cross_entropy_with_logits 2
#define HGPY_FN_binary_cross_entropy_with_logits "binary_cross_entropy_with_logits"

static PyObject* f_binary_cross_entropy_with_logits(PyObject* m, PyObject* const* args,
                                                    Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(binary_cross_entropy_with_logits);
    hg_reduction v_reduction = HG_REDUCTION_MEAN;
    FAIL_IF(hgpy_get_reduction(&c, a_[4], &v_reduction) || hgpy_call_out(&c, a_[5]) ||
            hgpy_call_arg(&c, a_[0], 0, "logits") < 0 || hgpy_call_arg(&c, a_[1], 0, "target") < 0);
    int i_weight = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((i_weight = hgpy_call_arg(&c, a_[2], 0, "weight")) < 0);
    int i_pos_weight = -1;
    if (a_[3] && a_[3] != Py_None)
        FAIL_IF((i_pos_weight = hgpy_call_arg(&c, a_[3], 0, "pos_weight")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_binary_cross_entropy_with_logits(T(&c, 0), T(&c, 1),
            i_weight >= 0 ? T(&c, i_weight) : NULL,
            i_pos_weight >= 0 ? T(&c, i_pos_weight) : NULL, v_reduction, &c.out));
    return hgpy_call_result(&c, s);
}

// --- activation_backward: hg_activation_backward
static const char* const hgpy_names_activation_backward[] = {"op", "grad", "x", "y", "out"};
#define HGPY_NREQ_activation_backward 2
#define HGPY_FN_activation_backward "activation_backward"

static PyObject* f_activation_backward(PyObject* m, PyObject* const* args,
                                       Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(activation_backward);
    long long v_op = 0;
    FAIL_IF(hgpy_get_int(&c, a_[0], "op", 0, &v_op));
    if (v_op < 0 || v_op >= HG_UNARY_COUNT) {
        call_end(&c);
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT,
                              "activation_backward: op code %lld out of range", v_op);
    }
    FAIL_IF(hgpy_call_out(&c, a_[4]) || hgpy_call_arg(&c, a_[1], 0, "grad") < 0);
    int i_x = -1;
    if (a_[2] && a_[2] != Py_None) FAIL_IF((i_x = hgpy_call_arg(&c, a_[2], 0, "x")) < 0);
    int i_y = -1;
    if (a_[3] && a_[3] != Py_None) FAIL_IF((i_y = hgpy_call_arg(&c, a_[3], 0, "y")) < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_activation_backward((hg_unary_op)v_op, T(&c, 0),
            i_x >= 0 ? T(&c, i_x) : NULL, i_y >= 0 ? T(&c, i_y) : NULL, &c.out));
    return hgpy_call_result(&c, s);
}

// --- softmax_backward: hg_softmax_backward, hg_log_softmax_backward
static const char* const hgpy_names_softmax_backward[] = {"grad", "y", "axis", "log", "out"};
#define HGPY_NREQ_softmax_backward 2
#define HGPY_FN_softmax_backward "softmax_backward"

static PyObject* f_softmax_backward(PyObject* m, PyObject* const* args, Py_ssize_t nargs,
                                    PyObject* kwnames) {
    PARSE_DECL(softmax_backward);
    int v_log = a_[3] ? PyObject_IsTrue(a_[3]) : 0;
    if (v_log) c.fn = "log_softmax_backward";
    long long v_axis = 0;
    FAIL_IF(v_log < 0 || hgpy_get_int(&c, a_[2], "axis", -1, &v_axis) || hgpy_call_out(&c, a_[4]) ||
            hgpy_call_arg(&c, a_[0], 0, "grad") < 0 || hgpy_call_arg(&c, a_[1], 0, "y") < 0);
    hg_status s;
    if (v_log) CALL_RUN(&c, s, s = hg_log_softmax_backward(T(&c, 0), T(&c, 1), (int32_t)v_axis,
            &c.out));
    else CALL_RUN(&c, s, s = hg_softmax_backward(T(&c, 0), T(&c, 1), (int32_t)v_axis, &c.out));
    return hgpy_call_result(&c, s);
}

// --- norm_backward: hg_layer_norm_backward, hg_rms_norm_backward, hg_layer_norm_backward_stats
static const char* const hgpy_names_norm_backward[] = {"grad", "x", "nnorm", "weight", "eps",
    "rms", "grad_x", "grad_weight", "grad_bias", "mean", "rstd"};
#define HGPY_NREQ_norm_backward 3
#define HGPY_FN_norm_backward "norm_backward"
#define HGPY_DFLT_norm_backward_nnorm 1
#define HGPY_DFLT_norm_backward_eps 1e-05
#define HGPY_DFLT_norm_backward_rms 0

// --- scaled_dot_product_attention_backward: hg_scaled_dot_product_attention_backward
static const char* const hgpy_names_scaled_dot_product_attention_backward[] = {"grad_out", "q",
    "k", "v", "out", "lse", "mask", "is_causal", "scale", "grad_q", "grad_k", "grad_v"};
#define HGPY_NREQ_scaled_dot_product_attention_backward 6
#define HGPY_FN_scaled_dot_product_attention_backward "scaled_dot_product_attention_backward"
#define HGPY_DFLT_scaled_dot_product_attention_backward_is_causal 0
#define HGPY_DFLT_scaled_dot_product_attention_backward_scale NAN

// --- cross_entropy_backward: hg_cross_entropy_backward
static const char* const hgpy_names_cross_entropy_backward[] = {"grad", "logits", "target",
    "ignore_index", "reduction", "out"};
#define HGPY_NREQ_cross_entropy_backward 3
#define HGPY_FN_cross_entropy_backward "cross_entropy_backward"

static PyObject* f_cross_entropy_backward(PyObject* m, PyObject* const* args,
                                          Py_ssize_t nargs, PyObject* kwnames) {
    PARSE_DECL(cross_entropy_backward);
    long long v_ignore_index = 0;
    hg_reduction v_reduction = HG_REDUCTION_MEAN;
    FAIL_IF(hgpy_get_int(&c, a_[3], "ignore_index", -100, &v_ignore_index) ||
            hgpy_get_reduction(&c, a_[4], &v_reduction) || hgpy_call_out(&c, a_[5]) ||
            hgpy_call_arg(&c, a_[0], 0, "grad") < 0 || hgpy_call_arg(&c, a_[1], 0, "logits") < 0 ||
            hgpy_call_arg(&c, a_[2], 0, "target") < 0);
    hg_status s;
    CALL_RUN(&c, s, s = hg_cross_entropy_backward(T(&c, 0), T(&c, 1), T(&c, 2),
            (int64_t)v_ignore_index, v_reduction, &c.out));
    return hgpy_call_result(&c, s);
}

// --- adam_step: hg_adam_step
static const char* const hgpy_names_adam_step[] = {"param", "grad", "exp_avg", "exp_avg_sq",
    "max_exp_avg_sq", "lr", "beta1", "beta2", "eps", "weight_decay", "step",
    "decoupled_weight_decay", "amsgrad", "maximize"};
#define HGPY_NREQ_adam_step 11
#define HGPY_FN_adam_step "adam_step"
#define HGPY_DFLT_adam_step_lr 0.001
#define HGPY_DFLT_adam_step_beta1 0.9
#define HGPY_DFLT_adam_step_beta2 0.999
#define HGPY_DFLT_adam_step_eps 1e-08
#define HGPY_DFLT_adam_step_weight_decay 0.0
#define HGPY_DFLT_adam_step_step 1
#define HGPY_DFLT_adam_step_decoupled_weight_decay 0
#define HGPY_DFLT_adam_step_amsgrad 0
#define HGPY_DFLT_adam_step_maximize 0

#define HGPY_DECL_METHODS_tensor_ops \
    HGPY_FASTCALL("unary", f_unary, \
                  "unary(op, x, out=None)"), \
    HGPY_FASTCALL("binary", f_binary, \
                  "binary(op, a, b, out=None)"), \
    HGPY_FASTCALL("where", f_where, \
                  "where(cond, a, b, out=None)"), \
    HGPY_FASTCALL("fma", f_fma, \
                  "fma(a, b, c, out=None)"), \
    HGPY_FASTCALL("clip", f_clip, \
                  "clip(x, lo=None, hi=None, out=None)"), \
    HGPY_FASTCALL("cast", f_cast, \
                  "cast(x, dtype, out=None)"), \
    HGPY_FASTCALL("reduce", f_reduce, \
                  "reduce(op, x, axis=None, keepdims=False, out=None, ddof=0)"), \
    HGPY_FASTCALL("softmax", f_softmax, \
                  "softmax(x, axis=-1, log=False, out=None)"), \
    HGPY_FASTCALL("layer_norm", f_layer_norm, \
                  "layer_norm(x, nnorm, weight=None, bias=None, eps=1e-05, out=None)"), \
    HGPY_FASTCALL("layer_norm_stats", f_layer_norm_stats, \
                  "layer_norm_stats(x, nnorm, weight, bias, eps, out, mean=None, rstd=None)"), \
    HGPY_FASTCALL("rms_norm", f_rms_norm, \
                  "rms_norm(x, nnorm, weight=None, eps=1e-06, out=None)"), \
    HGPY_FASTCALL("scaled_dot_product_attention", f_scaled_dot_product_attention, \
                  "scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, " \
                  "scale=nan, out=None, lse=None)"), \
    HGPY_FASTCALL("matmul", f_matmul, \
                  "matmul(a, b, out=None)"), \
    HGPY_FASTCALL("matvec", f_matvec, \
                  "matvec(a, x, out=None)"), \
    HGPY_FASTCALL("gemm", f_gemm, \
                  "gemm(a, b, c, alpha=1.0, beta=0.0, trans_a=False, trans_b=False)"), \
    HGPY_FASTCALL("mse_loss", f_mse_loss, \
                  "mse_loss(pred, target, reduction='mean', out=None)"), \
    HGPY_FASTCALL("cross_entropy", f_cross_entropy, \
                  "cross_entropy(logits, target, ignore_index=-100, reduction='mean', out=None)"), \
    HGPY_FASTCALL("binary_cross_entropy", f_binary_cross_entropy, \
                  "binary_cross_entropy(prob, target, weight=None, reduction='mean', out=None)"), \
    HGPY_FASTCALL("binary_cross_entropy_with_logits", f_binary_cross_entropy_with_logits, \
                  "binary_cross_entropy_with_logits(logits, target, weight=None, " \
                  "pos_weight=None, reduction='mean', out=None)"), \
    HGPY_FASTCALL("activation_backward", f_activation_backward, \
                  "activation_backward(op, grad, x=None, y=None, out=None)"), \
    HGPY_FASTCALL("softmax_backward", f_softmax_backward, \
                  "softmax_backward(grad, y, axis=-1, log=False, out=None)"), \
    HGPY_FASTCALL("norm_backward", f_norm_backward, \
                  "norm_backward(grad, x, nnorm, weight=None, eps=1e-05, rms=False, " \
                  "grad_x=None, grad_weight=None, grad_bias=None, mean=None, rstd=None)"), \
    HGPY_FASTCALL("scaled_dot_product_attention_backward", f_scaled_dot_product_attention_backward, \
                  "scaled_dot_product_attention_backward(grad_out, q, k, v, out, lse, " \
                  "mask=None, is_causal=False, scale=nan, grad_q=None, grad_k=None, " \
                  "grad_v=None)"), \
    HGPY_FASTCALL("cross_entropy_backward", f_cross_entropy_backward, \
                  "cross_entropy_backward(grad, logits, target, ignore_index=-100, " \
                  "reduction='mean', out=None)"), \
    HGPY_FASTCALL("adam_step", f_adam_step, \
                  "adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, beta1, " \
                  "beta2, eps, weight_decay, step, decoupled_weight_decay=False, " \
                  "amsgrad=False, maximize=False)"), \

#endif  // HGPY_TENSOR_OPS_DECL_H
