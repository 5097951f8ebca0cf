// The losses' entries (ops.h): each checks its arguments once, resolves out and hands the call
// to hg_cop_dispatch, which runs the op's override (overrides.c: the host kernels of
// ops/loss, the device kernels through loss_dev.c) or its decomposition (decomp_losses.c,
// decomp_loss.c).
//   hg_mse_loss, hg_binary_cross_entropy (its probabilities checked in [0, 1] first),
//   hg_binary_cross_entropy_with_logits: operands broadcast onto the loss shape, the result
//   dtype the promotion of all of them;
//   hg_cross_entropy (class indices checked: each in [0, C) or ignore_index);
//   hg_cross_entropy_backward: d loss / d logits with the softmax fused in (class indices each
//   in [-C, C) or ignore_index); class indices on a device over contiguous class rows take the
//   register row kernel (the override below), everything else the decomposition.
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "composite/composite.h"
#include "ops/common/dev_kernel.h"
#include "composite/op_temps.h"
#include "ops/loss/loss_common.h"
#include "ops/rows/dev_rows_reg.h"

// Every class index is ignore_index or in [lo, C) (lo = -C: a negative one counts from the
// end, as the backward op's scatter took; lo = 0: the forward op's, as torch).
static hg_status check_targets(hg_op_ctx* c, const hg_tensor* target, int64_t lo, int64_t ncls,
                               int64_t ignore_index) {
    hg_host_view v;
    void* staged = NULL;
    hg_status s = hg_dk_download(c, target, &v, &staged);
    if (s) return s;
    size_t es = hg_dtype_size(target->dtype);
    for (int64_t i = 0; i < v.numel && !s; i++) {
        int64_t k[HG_MAX_DIMS], r = i, off = 0;
        for (int32_t d = v.ndim - 1; d >= 0; d--) {   // element i in C order
            k[d] = r % v.shape[d];
            r /= v.shape[d];
            off += k[d] * v.strides[d];
        }
        const unsigned char* q = (const unsigned char*)v.data + off * (int64_t)es;
        int64_t ti = hg_op_load_i64(target->dtype, q);
        int big = hg_dtype_is_unsigned_int((int)target->dtype) && ti < 0;
        if (ti != ignore_index && (big || ti < lo || ti >= ncls))
            s = hg_error(HG_ERR_OUT_OF_RANGE, "%s: target class index %s%lld (sample %lld in C "
                         "order) is out of range [%lld, %lld) and is not ignore_index (%lld)",
                         c->fn, big ? "2^64 + " : "", (long long)ti, (long long)i,
                         (long long)lo, (long long)ncls, (long long)ignore_index);
    }
    free(staged);
    return s;
}

// The per-sample scale of class-index targets: mask = (t != ignore_index), w = mask * scale
// in cdt (temporaries of p); MEAN divides by the samples counted (at least 1).
static hg_status ce_bw_scale(hg_op_temps* p, const hg_tensor* gc, const hg_tensor* t64,
                             int64_t ignore_index, hg_reduction red, hg_dtype cdt, hg_tensor* w) {
    hg_tensor *mask = hg_op_temp(p), *keep = hg_op_temp(p);
    hg_status s = hg_binary_scalar(HG_BINARY_NE, t64, hg_scalar_i(ignore_index), 0, mask);
    if (!s) s = hg_cast(mask, cdt, keep);
    if (red == HG_REDUCTION_MEAN) {
        hg_tensor *count = hg_op_temp(p), *sc = hg_op_temp(p);
        if (!s) s = hg_reduce(HG_REDUCE_SUM, keep, 0, NULL, 0, count);
        if (!s) s = hg_binary_scalar(HG_BINARY_MAXIMUM, count, hg_scalar_f(1.0), 0, count);
        if (!s) s = hg_binary(HG_BINARY_DIV, gc, count, sc);
        if (!s) s = hg_binary(HG_BINARY_MUL, keep, sc, w);
    } else if (!s) {
        s = hg_binary(HG_BINARY_MUL, keep, gc, w);
    }
    return s;
}

// The device row kernel (dev_rows_reg_bw.c) reads each logits row once and writes
// (softmax(x) - onehot(t)) * w: class indices, the class dim last, rows at one row stride.
static int ce_rows_layout(const hg_cop_call* k, hg_dev_rows_job* j) {
    const hg_tensor *logits = k->in[0], *target = k->in[1];
    int32_t cdim = k->axis;
    if (hg_dtype_is_float((int)target->dtype) || cdim != logits->ndim - 1) return 0;
    const hg_tensor* ts[2] = {logits, k->out[0]};
    int64_t rs[2], trs;
    uint64_t tm, tr;
    hg_tensor tv = hg_op_expand_dim(target, cdim);   // rows of one element: the sample stride
    const hg_tensor* tt = &tv;
    if (!hg_dev_rows_layout(ts, 2, cdim, &j->M, &j->R, rs) ||
        !hg_dev_rows_layout(&tt, 1, cdim, &tm, &tr, &trs))
        return 0;
    j->xrs = rs[0], j->ors = rs[1], j->trs = trs;
    return 1;
}

int hg_cop_ce_bw_dev_ok(const hg_cop_call* k) {
    hg_dev_rows_job j;
    return ce_rows_layout(k, &j);
}

hg_status hg_cop_ce_bw_dev(const hg_cop_call* k) {
    hg_op_ctx* c = k->c;
    const hg_tensor *logits = k->in[0], *target = k->in[1], *grad = k->in[2];
    hg_dev_rows_job j;
    memset(&j, 0, sizeof j);
    if (!ce_rows_layout(k, &j))
        return hg_error(HG_ERR_INTERNAL, "%s: the row kernel got rows it does not take", c->fn);
    hg_op_temps p = {.n = 0};
    hg_dtype cdt = logits->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    const hg_tensor *gc, *t64;
    hg_tensor* w = hg_op_temp(&p);
    hg_status s = hg_op_temp_cast(&p, grad, cdt, &gc);
    if (!s) s = hg_op_temp_cast(&p, target, HG_DTYPE_I64, &t64);
    if (!s) s = ce_bw_scale(&p, gc, t64, k->ignore_index, (hg_reduction)k->reduction, cdt, w);
    if (!s) {
        j.fn = c->fn;
        j.ex = c->ex;
        j.op = HG_DEV_ROWS_CE_BW;
        j.xdt = logits->dtype, j.tdt = target->dtype, j.sdt = cdt, j.odt = k->out[0]->dtype;
        j.x = logits->buffer, j.xoff = logits->offset;
        j.o = k->out[0]->buffer, j.ooff = k->out[0]->offset;
        j.t = target->buffer, j.toff = target->offset;
        j.s = w->buffer, j.soff = w->offset, j.srs = 1;   // w: C-contiguous over the samples
        j.ign = k->ignore_index;
        s = hg_dev_rows_reg(&j);
    }
    hg_op_temps_release(&p);
    return s;
}

// cross_entropy's target kind (class indices: an integer dtype; probabilities: a float dtype)
// and logits' rank: 1 (C) to max_ndim; *probs set. Shared by the forward and backward entries.
static hg_status ce_target_kind(hg_op_ctx* c, const hg_tensor* logits, const hg_tensor* target,
                                int32_t max_ndim, int* probs) {
    *probs = hg_dtype_is_float((int)target->dtype);
    if (!*probs && !hg_dtype_is_int((int)target->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: 'target' has dtype %s; it must hold class "
                        "indices (an integer dtype) or class probabilities (a float dtype)", c->fn,
                        hg_dtype_name(target->dtype));
    char a[HG_DIMS_TEXT];
    if (logits->ndim < 1 || logits->ndim > max_ndim)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: 'logits' must be (C), (N, C) or (N, C, d1, "
                        "...) with at most %d dims, got shape %s", c->fn, (int)max_ndim,
                        hg_op_dims(a, logits->ndim, logits->shape));
    return HG_OK;
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
    int probs;
    if ((s = ce_target_kind(&c, logits, target, HG_MAX_DIMS - 1, &probs))) return s;
    char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
    int32_t cdim, ns;
    int64_t sshape[HG_MAX_DIMS];
    if ((s = hg_ce_shapes(&c, logits, target, probs, &cdim, &ns, sshape))) return s;
    int64_t nsamples = hg_shape_numel(ns, sshape);
    int gnd = reduction == HG_REDUCTION_NONE ? ns : 0;
    int same = grad->ndim == gnd;
    for (int32_t d = 0; same && d < gnd; d++) same = grad->shape[d] == sshape[d];
    if (!same)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: 'grad' has shape %s; expected the loss's shape "
                        "%s", fn, hg_op_dims(a, grad->ndim, grad->shape),
                        hg_op_dims(b, gnd, sshape));
    int64_t ncls = logits->shape[cdim];
    if (!probs && nsamples && (s = check_targets(&c, target, -ncls, ncls, ignore_index)))
        return s;
    if ((s = hg_op_output(&c, out, logits->dtype, logits->ndim, logits->shape, 1))) return s;
    if ((s = hg_op_read_first(&c, out, &logits, 1)) ||
        (s = hg_op_read_first(&c, out, &target, 1)) || (s = hg_op_read_first(&c, out, &grad, 1)))
        return hg_op_finish(&c, out, s);
    if (nsamples == 0 || logits->shape[cdim] == 0) return hg_op_finish(&c, out, HG_OK);
    hg_cop_call k = {.op = HG_COP_CE_BW, .c = &c, .in = {logits, target, grad}, .out = {out},
                     .axis = cdim, .ignore_index = ignore_index, .reduction = (int32_t)reduction};
    return hg_op_finish(&c, out, hg_cop_dispatch(&k));
}

// ---- the forward losses ----

// The common arguments: inputs live and float (x, t required), reduction valid.
static hg_status ew_inputs(hg_op_ctx* c, const hg_tensor* const* in, const char* const* names,
                           hg_reduction r) {
    hg_status s;
    for (int q = 0; q < 4; q++) {
        if (q < 2 && !in[q])
            return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", c->fn, names[q]);
        if (in[q] && ((s = hg_op_input(c, in[q], names[q], NULL, NULL)) ||
                      (s = hg_loss_float(c, in[q], names[q]))))
            return s;
    }
    return hg_loss_reduction(c, r);
}

static hg_status same_shape(hg_op_ctx* c, const hg_tensor* x, const char* xn, const hg_tensor* t,
                            const char* tn) {
    int same = x->ndim == t->ndim;
    for (int32_t d = 0; same && d < x->ndim; d++) same = x->shape[d] == t->shape[d];
    if (same) return HG_OK;
    char sx[HG_DIMS_TEXT], st[HG_DIMS_TEXT];
    return hg_error(HG_ERR_SIZE_MISMATCH, "%s: '%s' has shape %s but '%s' has shape %s (they must "
                    "be equal)", c->fn, tn, hg_op_dims(st, t->ndim, t->shape), xn,
                    hg_op_dims(sx, x->ndim, x->shape));
}

// After ew_inputs: the loss shape (x and t broadcast; every other input broadcasts onto it),
// the result dtype, out, the inputs that overlap out copied; then the override or the
// decomposition.
static hg_status ew_run(hg_op_ctx* c, hg_cop op, const hg_tensor* const* in,
                        const char* const* names, hg_reduction r, hg_tensor* out) {
    int32_t nd;
    int64_t shape[HG_MAX_DIMS], st[HG_MAX_DIMS];
    hg_dtype rt = in[0]->dtype;
    hg_status s = hg_loss_shape(c, in[0], names[0], in[1], &nd, shape);
    for (int q = 1; q < 4 && !s; q++)
        if (in[q] && (s = hg_result_type(rt, in[q]->dtype, &rt)))
            s = hg_error_prefix(s, "%s", c->fn);
    for (int q = 0; q < 4 && !s; q++)
        if (in[q]) s = hg_loss_broadcast(c, in[q], names[q], nd, shape, st);
    if (s || (s = hg_loss_output(c, out, r, rt, nd, shape))) return s;
    hg_cop_call k = {.op = op, .c = c, .out = {out}, .reduction = (int32_t)r,
                     .rdtype = (int32_t)rt};
    for (int q = 0; q < 4; q++) {
        k.in[q] = in[q];
        if ((s = hg_op_read_first(c, out, &k.in[q], 1))) return hg_op_finish(c, out, s);
    }
    return hg_op_finish(c, out, hg_cop_dispatch(&k));
}

HG_API hg_status hg_mse_loss(const hg_tensor* pred, const hg_tensor* target,
                             hg_reduction reduction, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_mse_loss");
    const hg_tensor* in[4] = {pred, target, NULL, NULL};
    const char* names[4] = {"pred", "target", "", ""};
    hg_status s = ew_inputs(&c, in, names, reduction);
    // torch broadcasts pred against target: the loss shape is the broadcast shape
    return s ? s : ew_run(&c, HG_COP_MSE, in, names, reduction, out);
}

HG_API hg_status hg_binary_cross_entropy(const hg_tensor* prob, const hg_tensor* target,
                                         const hg_tensor* weight, hg_reduction reduction,
                                         hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_binary_cross_entropy");
    const hg_tensor* in[4] = {prob, target, weight, NULL};
    const char* names[4] = {"prob", "target", "weight", ""};
    hg_status s = ew_inputs(&c, in, names, reduction);
    if (s || (s = same_shape(&c, prob, "prob", target, "target"))) return s;
    double bad = 0;
    int64_t at = -1;
    if (hg_op_route_of(&c, HG_OPF_LOSS, prob->dtype) == HG_ROUTE_DEVICE) {
        if ((s = hg_cop_first_bad_prob_dev(&c, prob, &at, &bad))) return s;
    } else {
        hg_host_view pv;
        if ((s = hg_op_host_view(&c, prob, &pv))) return s;
        at = hg_loss_first_bad_prob(&pv, &bad);
    }
    if (at >= 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_binary_cross_entropy: 'prob' element %lld (C "
                        "order) is %g; probabilities must be in [0, 1]", (long long)at, bad);
    return ew_run(&c, HG_COP_BCE, in, names, reduction, out);
}

HG_API hg_status hg_binary_cross_entropy_with_logits(const hg_tensor* logits,
                                                     const hg_tensor* target,
                                                     const hg_tensor* weight,
                                                     const hg_tensor* pos_weight,
                                                     hg_reduction reduction, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_binary_cross_entropy_with_logits");
    const hg_tensor* in[4] = {logits, target, weight, pos_weight};
    const char* names[4] = {"logits", "target", "weight", "pos_weight"};
    hg_status s = ew_inputs(&c, in, names, reduction);
    if (s || (s = same_shape(&c, logits, "logits", target, "target"))) return s;
    return ew_run(&c, HG_COP_BCE_LOGITS, in, names, reduction, out);
}

HG_API hg_status hg_cross_entropy(const hg_tensor* logits, const hg_tensor* target,
                                  int64_t ignore_index, hg_reduction reduction, hg_tensor* out) {
    HG_OP_CTX(c);
    const char* fn = "hg_cross_entropy";
    hg_op_begin(&c, fn);
    hg_status s;
    if ((s = hg_op_input(&c, logits, "logits", NULL, NULL)) ||
        (s = hg_op_input(&c, target, "target", NULL, NULL)) ||
        (s = hg_loss_float(&c, logits, "logits")) || (s = hg_loss_reduction(&c, reduction)))
        return s;
    int probs;
    if ((s = ce_target_kind(&c, logits, target, HG_MAX_DIMS, &probs))) return s;
    // the sample shape: logits' shape without the class dim; the target's checked against it
    int32_t cdim, ns;
    int64_t sshape[HG_MAX_DIMS];
    if ((s = hg_ce_shapes(&c, logits, target, probs, &cdim, &ns, sshape))) return s;
    if (!probs && hg_shape_numel(ns, sshape) &&
        (s = check_targets(&c, target, 0, logits->shape[cdim], ignore_index)))
        return s;
    if ((s = hg_loss_output(&c, out, reduction, logits->dtype, ns, sshape))) return s;
    if ((s = hg_op_read_first(&c, out, &logits, 1)) || (s = hg_op_read_first(&c, out, &target, 1)))
        return hg_op_finish(&c, out, s);
    hg_cop_call k = {.op = HG_COP_CE, .c = &c, .in = {logits, target}, .out = {out},
                     .axis = cdim, .ignore_index = ignore_index, .reduction = (int32_t)reduction,
                     .rdtype = (int32_t)logits->dtype};
    return hg_op_finish(&c, out, hg_cop_dispatch(&k));
}
