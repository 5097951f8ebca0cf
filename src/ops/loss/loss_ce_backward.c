// hg_cross_entropy_backward (ops.h): d loss / d logits with the softmax fused in. Class
// indices on a device over contiguous class rows: one register row kernel (ce_bw_rows). Else
// composed of library ops so that it runs on every backend:
//   class probabilities t:  (softmax(x) sum_c t_c - t) * scale
//   class indices t:        softmax(x) * w, then -w scattered into the target's class
//                           (hg_scatter_add), w = scale where t != ignore_index, else 0
// scale = grad per sample (NONE), grad (SUM), grad / (samples counted) (MEAN), in f32 (f64 for
// f64 logits).
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/op_common.h"
#include "ops/common/op_dispatch.h"
#include "ops/common/op_temps.h"
#include "ops/loss/loss_common.h"
#include "ops/rows/dev_rows_reg.h"
#include "tensor/tensor_internal.h"

// The per-sample scale of class-index targets: mask = (t != ignore_index), w = mask * scale
// in cdt (temporaries of p).
static hg_status ce_bw_scale(hg_op_temps* p, const hg_tensor* gc, const hg_tensor* t64,
                             int64_t ignore_index, hg_reduction red, hg_dtype cdt,
                             hg_tensor* mask, hg_tensor* w) {
    hg_tensor* keep = hg_op_temp(p);
    hg_status s = hg_binary_scalar(HG_BINARY_NE, t64, hg_scalar_i(ignore_index), 0, mask);
    if (!s) s = hg_cast(mask, cdt, keep);
    if (red == HG_REDUCTION_MEAN) {
        hg_tensor *count = hg_op_temp(p), *sc = hg_op_temp(p);
        if (!s) s = hg_reduce(HG_REDUCE_SUM, keep, 0, NULL, 0, count);
        // Every row ignored: no row takes the scale, so the gradient is 0 as torch's (the loss
        // itself is 0 / 0 = NaN); counting at least 1 keeps 0 * inf out of it.
        if (!s) s = hg_binary_scalar(HG_BINARY_MAXIMUM, count, hg_scalar_f(1.0), 0, count);
        if (!s) s = hg_binary(HG_BINARY_DIV, gc, count, sc);
        if (!s) s = hg_binary(HG_BINARY_MUL, keep, sc, w);
    } else if (!s) {
        s = hg_binary(HG_BINARY_MUL, keep, gc, w);
    }
    return s;
}

// Whether every class index is ignore_index or in [-C, C) (the composed form's acceptance: its
// scatter_add reports the first other one, so such targets go that way).
static hg_status ce_bw_targets_ok(hg_op_ctx* c, const hg_tensor* target, int64_t ncls,
                                  int64_t ignore_index, int* ok) {
    hg_host_view v;
    void* staged = NULL;
    *ok = 1;
    hg_status s = hg_dk_download(c, target, &v, &staged);
    if (s) return s;
    size_t es = hg_dtype_size(target->dtype);
    for (int64_t i = 0; i < v.numel && *ok; i++) {
        const unsigned char* q = (const unsigned char*)v.data + (size_t)i * es;
        int64_t ti = hg_op_load_i64(target->dtype, q);
        int big = hg_dtype_is_unsigned_int((int)target->dtype) && ti < 0;
        *ok = ti == ignore_index || (!big && ti >= -ncls && ti < ncls);
    }
    free(staged);
    return HG_OK;
}

// Class indices on a device, logits rows contiguous along the class dim (the last) at one row
// stride: the register row kernel (dev_rows_reg_bw.c) reads each row once and writes
// (softmax(x) - onehot(t)) * w. *done = 0 where it does not apply.
static hg_status ce_bw_rows(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* logits,
                            const hg_tensor* target, int32_t cdim, int64_t ignore_index,
                            hg_reduction red, hg_tensor* out, int* done) {
    *done = 0;
    if (hg_dtype_is_float((int)target->dtype) || cdim != logits->ndim - 1 ||
        hg_op_route_of(c, HG_OPF_LOSS, logits->dtype) != HG_ROUTE_DEVICE)
        return HG_OK;
    const hg_tensor* ts[2] = {logits, out};
    hg_dev_rows_job j;
    memset(&j, 0, sizeof j);
    int64_t rs[2], trs;
    uint64_t tm, tr;
    // the target as rows of one element (a class dim of 1): its sample stride
    hg_tensor tv = hg_op_expand_dim(target, cdim);
    const hg_tensor* tt = &tv;
    if (!hg_dev_rows_layout(ts, 2, cdim, &j.M, &j.R, rs) ||
        !hg_dev_rows_layout(&tt, 1, cdim, &tm, &tr, &trs))
        return HG_OK;
    int ok;
    hg_status s = ce_bw_targets_ok(c, target, logits->shape[cdim], ignore_index, &ok);
    if (s || !ok) return s;
    hg_op_temps p = {.n = 0};
    hg_dtype cdt = logits->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    const hg_tensor *gc, *t64;
    hg_tensor *mask = hg_op_temp(&p), *w = hg_op_temp(&p);
    s = hg_op_temp_cast(&p, grad, cdt, &gc);
    if (!s) s = hg_op_temp_cast(&p, target, HG_DTYPE_I64, &t64);
    if (!s) s = ce_bw_scale(&p, gc, t64, ignore_index, red, cdt, mask, w);
    if (!s) {
        j.fn = c->fn;
        j.ex = c->ex;
        j.op = HG_DEV_ROWS_CE_BW;
        j.xdt = logits->dtype, j.tdt = target->dtype, j.sdt = cdt, j.odt = out->dtype;
        j.x = logits->buffer, j.xoff = logits->offset, j.xrs = rs[0];
        j.o = out->buffer, j.ooff = out->offset, j.ors = rs[1];
        j.t = target->buffer, j.toff = target->offset, j.trs = trs;
        j.s = w->buffer, j.soff = w->offset, j.srs = 1;   // w: C-contiguous over the samples
        j.ign = ignore_index;
        s = hg_dev_rows_reg(&j);
        *done = 1;
    }
    hg_op_temps_release(&p);
    return s;
}

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
    hg_tensor *mask = hg_op_temp(&p), *idx = hg_op_temp(&p), *w = hg_op_temp(&p);
    hg_tensor* negw = hg_op_temp(&p);
    if (!s) s = hg_op_temp_cast(&p, target, HG_DTYPE_I64, &t64);
    if (!s) s = ce_bw_scale(&p, gc, t64, ignore_index, red, cdt, mask, w);
    if (!s) s = hg_binary(HG_BINARY_MUL, t64, mask, idx);   // ignored rows point at class 0
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
    int done;
    s = ce_bw_rows(&c, grad, logits, target, cdim, ignore_index, reduction, out, &done);
    if (!s && !done)
        s = ce_bw_composed(grad, logits, target, cdim, nsamples, ignore_index, reduction, out);
    return hg_op_finish(&c, out, s);
}
