// hg_cross_entropy_backward (ops.h): d loss / d logits with the softmax fused in, composed of
// library ops so that it runs on every backend:
//   class probabilities t:  (softmax(x) sum_c t_c - t) * scale
//   class indices t:        softmax(x) * w, then -w scattered into the target's class
//                           (hg_scatter_add), w = scale where t != ignore_index, else 0
// scale = grad per sample (NONE), grad (SUM), grad / (samples counted) (MEAN), in f32 (f64 for
// f64 logits).
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/op_common.h"
#include "ops/common/op_temps.h"
#include "ops/loss/loss_common.h"
#include "tensor/tensor_internal.h"

static hg_status ce_bw_composed(const hg_tensor* grad, const hg_tensor* logits,
                                const hg_tensor* target, int32_t cdim, int64_t nsamples,
                                int64_t ignore_index, hg_reduction red, hg_tensor* out) {
    hg_op_temps p = {.n = 0};
    hg_dtype cdt = logits->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    const hg_tensor *lc, *gc;
    hg_status s = hg_op_temp_cast(&p, logits, cdt, &lc);
    if (!s) s = hg_op_temp_cast(&p, grad, cdt, &gc);
    hg_tensor* prob = hg_op_temp(&p);
    if (!s) s = hg_softmax(lc, cdim, prob);
    hg_tensor* res = hg_op_temp(&p);
    if (hg_dtype_is_float((int)target->dtype)) {
        const hg_tensor* tc;
        hg_tensor *d = hg_op_temp(&p), *sc = hg_op_temp(&p), *ts = hg_op_temp(&p);
        if (!s) s = hg_op_temp_cast(&p, target, cdt, &tc);
        // d/dx of sum_c t_c (lse - x_c): softmax * sum_c t_c - t (targets need not sum to 1)
        if (!s) s = hg_reduce(HG_REDUCE_SUM, tc, 1, &cdim, 1, ts);
        if (!s) s = hg_binary(HG_BINARY_MUL, prob, ts, d);
        if (!s) s = hg_binary(HG_BINARY_SUB, d, tc, d);
        hg_tensor scale = *gc;
        if (!s && red == HG_REDUCTION_MEAN) {
            s = hg_binary_scalar(HG_BINARY_DIV, gc, hg_scalar_f((double)nsamples), 0, sc);
            scale = *sc;
        }
        if (red == HG_REDUCTION_NONE) scale = hg_op_expand_dim(gc, cdim);
        if (!s) s = hg_binary(HG_BINARY_MUL, d, &scale, out);
        hg_op_temps_release(&p);
        return s;
    }
    const hg_tensor* t64;
    hg_tensor *mask = hg_op_temp(&p), *idx = hg_op_temp(&p), *keep = hg_op_temp(&p);
    hg_tensor *w = hg_op_temp(&p), *negw = hg_op_temp(&p);
    if (!s) s = hg_op_temp_cast(&p, target, HG_DTYPE_I64, &t64);
    if (!s) s = hg_binary_scalar(HG_BINARY_NE, t64, hg_scalar_i(ignore_index), 0, mask);
    if (!s) s = hg_binary(HG_BINARY_MUL, t64, mask, idx);   // ignored rows point at class 0
    if (!s) s = hg_cast(mask, cdt, keep);
    if (red == HG_REDUCTION_MEAN) {
        hg_tensor *count = hg_op_temp(&p), *sc = hg_op_temp(&p);
        if (!s) s = hg_reduce(HG_REDUCE_SUM, keep, 0, NULL, 0, count);
        // Every row ignored: no row takes the scale, so the gradient is 0 as torch's (the loss
        // itself is 0 / 0 = NaN); counting at least 1 keeps 0 * inf out of it.
        if (!s) s = hg_binary_scalar(HG_BINARY_MAXIMUM, count, hg_scalar_f(1.0), 0, count);
        if (!s) s = hg_binary(HG_BINARY_DIV, gc, count, sc);
        if (!s) s = hg_binary(HG_BINARY_MUL, keep, sc, w);
    } else if (!s) {
        s = hg_binary(HG_BINARY_MUL, keep, gc, w);
    }
    if (!s) s = hg_unary(HG_UNARY_NEG, w, negw);
    hg_tensor we, ne, ie;
    if (!s) {
        we = hg_op_expand_dim(w, cdim);
        ne = hg_op_expand_dim(negw, cdim);
        ie = hg_op_expand_dim(idx, cdim);
        s = hg_binary(HG_BINARY_MUL, prob, &we, res);
    }
    if (!s && (s = hg_scatter_add(res, cdim, &ie, &ne)))
        s = hg_error_prefix(s, "hg_cross_entropy_backward: target");
    if (!s) s = hg_cast(res, out->dtype, out);
    hg_op_temps_release(&p);
    return s;
}

hg_status hg_cross_entropy_backward(const hg_tensor* grad, const hg_tensor* logits,
                                    const hg_tensor* target, int64_t ignore_index,
                                    hg_reduction reduction, hg_tensor* out) {
    HG_OP_CTX(c);
    const char* fn = "hg_cross_entropy_backward";
    hg_op_begin(&c, fn);
    if (!grad || !logits || !target || !out)
        return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", fn,
                        !grad ? "grad" : !logits ? "logits" : !target ? "target" : "out");
    hg_status s;
    if ((s = hg_op_input(&c, grad, "grad", NULL, NULL)) ||
        (s = hg_op_input(&c, logits, "logits", NULL, NULL)) ||
        (s = hg_op_input(&c, target, "target", NULL, NULL)) ||
        (s = hg_loss_float(&c, logits, "logits")) || (s = hg_loss_float(&c, grad, "grad")) ||
        (s = hg_loss_reduction(&c, reduction)))
        return s;
    int probs = hg_dtype_is_float((int)target->dtype);
    if (!probs && !hg_dtype_is_int((int)target->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: 'target' has dtype %s; it must hold class "
                        "indices (an integer dtype) or class probabilities (a float dtype)", fn,
                        hg_dtype_name(target->dtype));
    char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
    if (logits->ndim < 1 || logits->ndim >= HG_MAX_DIMS)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: 'logits' must be (C), (N, C) or (N, C, d1, "
                        "...) with at most %d dims, got shape %s", fn, HG_MAX_DIMS - 1,
                        hg_op_dims(a, logits->ndim, logits->shape));
    int32_t cdim, ns;
    int64_t sshape[HG_MAX_DIMS], nsamples = 1;
    if ((s = hg_ce_shapes(&c, logits, target, probs, &cdim, &ns, sshape))) return s;
    for (int32_t d = 0; d < ns; d++) nsamples *= sshape[d];
    int gnd = reduction == HG_REDUCTION_NONE ? ns : 0;
    int same = grad->ndim == gnd;
    for (int32_t d = 0; same && d < gnd; d++) same = grad->shape[d] == sshape[d];
    if (!same)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: 'grad' has shape %s; expected the loss's shape "
                        "%s", fn, hg_op_dims(a, grad->ndim, grad->shape),
                        hg_op_dims(b, gnd, sshape));
    if ((s = hg_op_output(&c, out, logits->dtype, logits->ndim, logits->shape, 1))) return s;
    if ((s = hg_op_read_first(&c, out, &logits, 1)) ||
        (s = hg_op_read_first(&c, out, &target, 1)) || (s = hg_op_read_first(&c, out, &grad, 1)))
        return hg_op_finish(&c, out, s);
    if (nsamples == 0 || logits->shape[cdim] == 0) return hg_op_finish(&c, out, HG_OK);
    s = ce_bw_composed(grad, logits, target, cdim, nsamples, ignore_index, reduction, out);
    return hg_op_finish(&c, out, s);
}
