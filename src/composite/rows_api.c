// The public entries of the row ops defined as composites: softmax / log_softmax, layer_norm /
// rms_norm and the backward ops of both (ops.h). Each checks its arguments once, resolves
// its outputs and hands the call to hg_cop_dispatch (an override, else the decomposition).
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "composite/composite.h"
#include "composite/op_outputs.h"

// The softmax axis of a tensor of ndim dims: a 0-d tensor takes 0 or -1.
static hg_status softmax_axis(hg_op_ctx* c, int32_t ndim, int32_t axis, int32_t* ax) {
    *ax = 0;
    if (ndim > 0) return hg_op_axis(c, ndim, axis, ax);
    if (axis != 0 && axis != -1)
        return hg_error(HG_ERR_OUT_OF_RANGE, "%s: axis %d is out of range for a tensor of 0 dims "
                        "(valid: -1, 0)", c->fn, (int)axis);
    return HG_OK;
}

// x and out given, x a checked float tensor (need: what the message says after x's dtype).
static hg_status check_x(hg_op_ctx* c, const hg_tensor* x, const hg_tensor* out,
                         const char* need) {
    if (!x) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'x' is NULL", c->fn);
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'out' is NULL", c->fn);
    hg_status s = hg_op_input(c, x, "x", NULL, NULL);
    if (s) return s;
    if (!hg_dtype_is_float((int)x->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: x has dtype %s; %s (f16, bf16, f32, f64)",
                        c->fn, hg_dtype_name(x->dtype), need);
    return HG_OK;
}

static hg_status softmax_call(const char* fn, const hg_tensor* x, int32_t axis, int log,
                              hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    hg_status s = check_x(&c, x, out, "softmax needs a float dtype");
    if (s) return s;
    int32_t ax;
    if ((s = softmax_axis(&c, x->ndim, axis, &ax))) return s;
    if ((s = hg_op_output(&c, out, x->dtype, x->ndim, x->shape, 1))) return s;
    if ((s = hg_op_read_first(&c, out, &x, 1))) return hg_op_finish(&c, out, s);
    hg_cop_call k = {.op = log ? HG_COP_LOG_SOFTMAX : HG_COP_SOFTMAX, .c = &c, .in = {x},
                     .out = {out}, .axis = ax};
    return hg_op_finish(&c, out, hg_cop_dispatch(&k));
}

hg_status hg_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out) {
    return softmax_call("hg_softmax", x, axis, 0, out);
}

hg_status hg_log_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out) {
    return softmax_call("hg_log_softmax", x, axis, 1, out);
}

// layer_norm / rms_norm's weight and bias: checked, shape = the normalized dims, any float dtype.
static hg_status check_param(hg_op_ctx* c, const hg_tensor* t, const char* name,
                             const hg_tensor* x, int32_t nnorm) {
    hg_status s = hg_op_input(c, t, name, NULL, NULL);
    if (s) return s;
    if (!hg_dtype_is_float((int)t->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: '%s' has dtype %s; expected a float dtype",
                        c->fn, name, hg_dtype_name(t->dtype));
    int same = t->ndim == nnorm;
    for (int32_t d = 0; same && d < nnorm; d++)
        same = t->shape[d] == x->shape[x->ndim - nnorm + d];
    if (!same) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: '%s' has shape %s; expected the last %d dims "
                        "of x, %s", c->fn, name, hg_op_dims(a, t->ndim, t->shape), (int)nnorm,
                        hg_op_dims(b, nnorm, x->shape + (x->ndim - nnorm)));
    }
    return HG_OK;
}

// nnorm and eps of the norms and their gradients.
static hg_status check_nnorm_eps(hg_op_ctx* c, const hg_tensor* x, int32_t nnorm, double eps) {
    if (nnorm < 1 || nnorm > x->ndim)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: nnorm %d is out of range for x of %d dims "
                        "(valid: 1..%d)", c->fn, (int)nnorm, (int)x->ndim, (int)x->ndim);
    if (!(eps >= 0.0) || isinf(eps))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: eps %g must be finite and >= 0", c->fn, eps);
    return HG_OK;
}

// The statistics' shape: x's leading dims, the nnorm normalized dims as size 1.
static void stats_shape(const hg_tensor* x, int32_t nnorm, int64_t* shape) {
    for (int32_t d = 0; d < x->ndim; d++) shape[d] = d < x->ndim - nnorm ? x->shape[d] : 1;
}

static hg_status norm_call(const char* fn, int rms, const hg_tensor* x, int32_t nnorm,
                           const hg_tensor* weight, const hg_tensor* bias, double eps,
                           hg_tensor* out, hg_tensor* mean, hg_tensor* rstd) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    hg_status s = check_x(&c, x, out, "expected a float dtype");
    if (s) return s;
    if ((s = check_nnorm_eps(&c, x, nnorm, eps))) return s;
    // Parameters are checked before out is resolved, so a bad parameter never allocates.
    if (weight && (s = check_param(&c, weight, "weight", x, nnorm))) return s;
    if (bias && (s = check_param(&c, bias, "bias", x, nnorm))) return s;
    hg_cop_call k = {.op = rms ? HG_COP_RMS_NORM : HG_COP_LAYER_NORM, .c = &c,
                     .in = {x, weight, bias}, .out = {out, mean, rstd}, .axis = nnorm,
                     .eps = eps};
    if (mean || rstd) {   // hg_layer_norm_stats: three outputs
        int32_t nd[3] = {x->ndim, x->ndim, x->ndim};
        int64_t sshape[HG_MAX_DIMS];
        stats_shape(x, nnorm, sshape);
        const int64_t* shapes[3] = {x->shape, sshape, sshape};
        hg_dtype dts[3] = {x->dtype, x->dtype, x->dtype};
        const hg_tensor* ins[3] = {x, weight, bias};
        hg_tensor* outs[3] = {out, mean, rstd};
        int alloc[3];
        if ((s = hg_cop_outputs_resolve(&c, outs, nd, shapes, dts, 3, ins, 3, 1, alloc))) return s;
        k.in[0] = ins[0], k.in[1] = ins[1], k.in[2] = ins[2];
        int64_t n = 0;
        if (!(s = hg_tensor_numel(x, &n)) && !n) {   // rows of no element: torch's mean 0, rstd NaN
            if (mean) s = hg_fill(mean, hg_scalar_f(0.0));
            if (!s && rstd) s = hg_fill(rstd, hg_scalar_f(NAN));
            if (s) s = hg_error_prefix(s, "%s", fn);
        } else if (!s) {
            s = hg_cop_dispatch(&k);
        }
        if (s) hg_cop_outputs_release(outs, alloc, 3);
        return s;
    }
    // numpy's overlap rule: parameters overlapping the caller's out are copied first (the
    // kernels may read them in place).
    if ((s = hg_op_read_first(&c, out, &weight, 0)) || (s = hg_op_read_first(&c, out, &bias, 0)))
        return s;
    if ((s = hg_op_output(&c, out, x->dtype, x->ndim, x->shape, 1))) return s;
    if ((s = hg_op_read_first(&c, out, &x, 1))) return hg_op_finish(&c, out, s);
    k.in[0] = x, k.in[1] = weight, k.in[2] = bias;
    return hg_op_finish(&c, out, hg_cop_dispatch(&k));
}

hg_status hg_layer_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                        const hg_tensor* bias, double eps, hg_tensor* out) {
    return norm_call("hg_layer_norm", 0, x, nnorm, weight, bias, eps, out, NULL, NULL);
}

hg_status hg_layer_norm_stats(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                              const hg_tensor* bias, double eps, hg_tensor* out, hg_tensor* mean,
                              hg_tensor* rstd) {
    return norm_call("hg_layer_norm_stats", 0, x, nnorm, weight, bias, eps, out, mean, rstd);
}

hg_status hg_rms_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight, double eps,
                      hg_tensor* out) {
    return norm_call("hg_rms_norm", 1, x, nnorm, weight, NULL, eps, out, NULL, NULL);
}

// grad and x (or y) of one float dtype and one shape.
static hg_status check_grad_pair(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* x,
                                 const char* xname) {
    hg_status s;
    if ((s = hg_op_input(c, grad, "grad", NULL, NULL)) ||
        (s = hg_op_input(c, x, xname, NULL, NULL)))
        return s;
    if (!hg_dtype_is_float((int)x->dtype) || grad->dtype != x->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: grad is %s and %s is %s; expected one float "
                        "dtype (f16, bf16, f32, f64) for both", c->fn, hg_dtype_name(grad->dtype),
                        xname, hg_dtype_name(x->dtype));
    int same = grad->ndim == x->ndim;
    for (int32_t d = 0; same && d < x->ndim; d++) same = grad->shape[d] == x->shape[d];
    if (!same) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: grad has shape %s and %s %s; expected equal "
                        "shapes", c->fn, hg_op_dims(a, grad->ndim, grad->shape), xname,
                        hg_op_dims(b, x->ndim, x->shape));
    }
    return HG_OK;
}

static hg_status smb_call(const char* fn, int log, const hg_tensor* grad, const hg_tensor* y,
                          int32_t axis, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    if (!grad || !y || !out)
        return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", fn,
                        !grad ? "grad" : !y ? "y" : "out");
    hg_status s;
    int32_t ax;
    if ((s = check_grad_pair(&c, grad, y, "y")) || (s = softmax_axis(&c, y->ndim, axis, &ax)))
        return s;
    if ((s = hg_op_output(&c, out, y->dtype, y->ndim, y->shape, 1))) return s;
    // out may be grad or y exactly (each element is read before it is written).
    if ((s = hg_op_read_first(&c, out, &grad, 1)) || (s = hg_op_read_first(&c, out, &y, 1)))
        return hg_op_finish(&c, out, s);
    hg_cop_call k = {.op = log ? HG_COP_LOG_SOFTMAX_BW : HG_COP_SOFTMAX_BW, .c = &c,
                     .in = {grad, y}, .out = {out}, .axis = ax};
    return hg_op_finish(&c, out, hg_cop_dispatch(&k));
}

hg_status hg_softmax_backward(const hg_tensor* grad, const hg_tensor* y, int32_t axis,
                              hg_tensor* out) {
    return smb_call("hg_softmax_backward", 0, grad, y, axis, out);
}

hg_status hg_log_softmax_backward(const hg_tensor* grad, const hg_tensor* y, int32_t axis,
                                  hg_tensor* out) {
    return smb_call("hg_log_softmax_backward", 1, grad, y, axis, out);
}

// The given statistics of hg_layer_norm_backward_stats: float, the statistics' shape.
static hg_status check_stats(hg_op_ctx* c, const hg_tensor* x, int32_t nnorm,
                             const hg_tensor* t, const char* name) {
    hg_status s;
    if (!t) return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", c->fn, name);
    if ((s = hg_op_input(c, t, name, NULL, NULL))) return s;
    int64_t want[HG_MAX_DIMS];
    stats_shape(x, nnorm, want);
    int ok = t->ndim == x->ndim;
    for (int32_t d = 0; ok && d < x->ndim; d++) ok = t->shape[d] == want[d];
    if (ok && hg_dtype_is_float((int)t->dtype)) return HG_OK;
    char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
    return hg_error(ok ? HG_ERR_DTYPE_MISMATCH : HG_ERR_SIZE_MISMATCH, "%s: %s is %s %s; "
                    "expected a float tensor of shape %s (x's leading dims, the %d normalized "
                    "dims as 1)", c->fn, name, hg_dtype_name(t->dtype),
                    hg_op_dims(a, t->ndim, t->shape), hg_op_dims(b, x->ndim, want), (int)nnorm);
}

static hg_status check_norm_weight(hg_op_ctx* c, const hg_tensor* x, int32_t nnorm,
                                   const hg_tensor* weight) {
    hg_status s;
    if ((s = hg_op_input(c, weight, "weight", NULL, NULL))) return s;
    int ok = hg_dtype_is_float((int)weight->dtype) && weight->ndim == nnorm;
    for (int32_t d = 0; ok && d < nnorm; d++)
        ok = weight->shape[d] == x->shape[x->ndim - nnorm + d];
    if (ok) return HG_OK;
    char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
    return hg_error(hg_dtype_is_float((int)weight->dtype) ? HG_ERR_SIZE_MISMATCH
                                                          : HG_ERR_DTYPE_MISMATCH,
                    "%s: weight is %s %s; expected a float tensor of the last %d dims of x, %s",
                    c->fn, hg_dtype_name(weight->dtype), hg_op_dims(a, weight->ndim, weight->shape),
                    (int)nnorm, hg_op_dims(b, nnorm, x->shape + (x->ndim - nnorm)));
}

// stats: 1 for hg_layer_norm_backward_stats (mean and rstd given, eps unused).
static hg_status nb_call(const char* fn, int rms, const hg_tensor* grad, const hg_tensor* x,
                         int32_t nnorm, const hg_tensor* weight, double eps, int stats,
                         const hg_tensor* mean, const hg_tensor* rstd, hg_tensor* gx,
                         hg_tensor* gw, hg_tensor* gb) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    if (!grad || !x)
        return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", fn, !grad ? "grad" : "x");
    if (!gx && !gw && !gb)
        return hg_error(HG_ERR_NULL_POINTER, "%s: no output asked for (grad_x, grad_weight%s are "
                        "all NULL)", fn, rms ? "" : ", grad_bias");
    hg_status s;
    if ((s = check_grad_pair(&c, grad, x, "x"))) return s;
    if (stats) {
        if ((s = check_nnorm_eps(&c, x, nnorm, 0.0)) ||
            (s = check_stats(&c, x, nnorm, mean, "mean")) ||
            (s = check_stats(&c, x, nnorm, rstd, "rstd")))
            return s;
    } else if ((s = check_nnorm_eps(&c, x, nnorm, eps))) {
        return s;
    }
    if (weight && (s = check_norm_weight(&c, x, nnorm, weight))) return s;
    hg_dtype pdt = weight ? weight->dtype : x->dtype;
    hg_tensor* outs[3] = {gx, gw, gb};
    int32_t nd[3] = {x->ndim, nnorm, nnorm};
    const int64_t* pshape = x->shape + (x->ndim - nnorm);
    const int64_t* shapes[3] = {x->shape, pshape, pshape};
    hg_dtype dts[3] = {x->dtype, pdt, pdt};
    const hg_tensor* ins[5] = {grad, x, weight, mean, rstd};   // grad_x may be grad itself
    int alloc[3];
    if ((s = hg_cop_outputs_resolve(&c, outs, nd, shapes, dts, 3, ins, stats ? 5 : 3, 1, alloc)))
        return s;
    hg_cop_call k = {.op = rms ? HG_COP_RMS_NORM_BW : HG_COP_LAYER_NORM_BW, .c = &c,
                     .in = {ins[0], ins[1], ins[2], ins[3], ins[4]}, .out = {gx, gw, gb},
                     .axis = nnorm, .eps = eps};
    if ((s = hg_cop_dispatch(&k))) hg_cop_outputs_release(outs, alloc, 3);
    return s;
}

hg_status hg_layer_norm_backward(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm,
                                 const hg_tensor* weight, double eps, hg_tensor* grad_x,
                                 hg_tensor* grad_weight, hg_tensor* grad_bias) {
    return nb_call("hg_layer_norm_backward", 0, grad, x, nnorm, weight, eps, 0, NULL, NULL,
                   grad_x, grad_weight, grad_bias);
}

hg_status hg_layer_norm_backward_stats(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm,
                                       const hg_tensor* mean, const hg_tensor* rstd,
                                       const hg_tensor* weight, hg_tensor* grad_x,
                                       hg_tensor* grad_weight, hg_tensor* grad_bias) {
    return nb_call("hg_layer_norm_backward_stats", 0, grad, x, nnorm, weight, 0.0, 1, mean, rstd,
                   grad_x, grad_weight, grad_bias);
}

hg_status hg_rms_norm_backward(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm,
                               const hg_tensor* weight, double eps, hg_tensor* grad_x,
                               hg_tensor* grad_weight) {
    return nb_call("hg_rms_norm_backward", 1, grad, x, nnorm, weight, eps, 0, NULL, NULL, grad_x,
                   grad_weight, NULL);
}
