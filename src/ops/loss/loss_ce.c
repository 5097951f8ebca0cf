// hg_cross_entropy as torch.nn.functional.cross_entropy (no class weights, no smoothing).
// logits (C), (N, C) or (N, C, d1, ...); one sample per position of the non-class dims. Per
// sample: lse = m + log(sum_c exp(x_c - m)) with m = max_c x_c (stable for any magnitude and
// for -inf entries), then
//   class indices:       loss = lse - x_target         (ignore_index: loss 0, not counted)
//   class probabilities: loss = sum_c t_c (lse - x_c)  (= -sum_c t_c log_softmax(x)_c)
// with lse - x_c formed as (m - x_c) + log(sum) so it keeps its digits next to large logits.
// f16/bf16/f32 logits: the shifted exps in f32, their sum and the rest in double; f64 in f64. MEAN divides by the number of non-ignored samples (indices) or of samples (probabilities).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"
#include "ops/loss/loss_common.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"

enum { OP_X = 0, OP_T, OP_OUT, OP_COUNT };

typedef struct ce_loss {
    hg_loss_walk walk;       // over the sample shape
    hg_dtype xdt, tdt, rt, od;
    int64_t ncls;
    int64_t x_cs, t_cs;      // class strides in bytes (t_cs: probabilities only)
    int probs, write;
    int64_t ignore_index;
    unsigned char dummy[8];
} ce_loss;

static inline float ld32(hg_dtype dt, const unsigned char* p) {
    if (dt == HG_DTYPE_F32) { float v; memcpy(&v, p, 4); return v; }
    uint16_t h;
    memcpy(&h, p, 2);
    return dt == HG_DTYPE_F16 ? hg_f16_to_f32(h) : hg_bf16_to_f32(h);
}

// Loss of one sample in f32 (f16/bf16/f32 logits). counted = 0 for an ignored sample.
static double sample_f32(const ce_loss* L, const unsigned char* x, const unsigned char* t, int* counted) {
    int64_t C = L->ncls, cs = L->x_cs;
    float m = -INFINITY;
    for (int64_t k = 0; k < C; k++) {
        float v = ld32(L->xdt, x + k * cs);
        m = v > m || v != v ? v : m;   // NaN propagates into m
    }
    double se = 0;
    for (int64_t k = 0; k < C; k++) se += (double)expf(ld32(L->xdt, x + k * cs) - m);
    // lse - x_c as (m - x_c) + log(se): no rounding of lse at the logits' magnitude, so a
    // loss of 0.3 next to logits of 1e4 keeps its digits.
    double lse_m = log(se), md = (double)m;
    *counted = 1;
    if (!L->probs) {
        int64_t ti = hg_op_load_i64(L->tdt, t);
        if (ti == L->ignore_index) { *counted = 0; return 0.0; }
        return (md - (double)ld32(L->xdt, x + ti * cs)) + lse_m;
    }
    double l = 0;
    for (int64_t k = 0; k < C; k++)
        l += hg_op_load_f64(L->tdt, t + k * L->t_cs) *
             ((md - (double)ld32(L->xdt, x + k * cs)) + lse_m);
    return l;
}

static double sample_f64(const ce_loss* L, const unsigned char* x, const unsigned char* t, int* counted) {
    int64_t C = L->ncls, cs = L->x_cs;
    double m = -INFINITY, v;
    for (int64_t k = 0; k < C; k++) {
        memcpy(&v, x + k * cs, 8);
        m = v > m || v != v ? v : m;
    }
    double se = 0;
    for (int64_t k = 0; k < C; k++) {
        memcpy(&v, x + k * cs, 8);
        se += exp(v - m);
    }
    double lse_m = log(se);
    *counted = 1;
    if (!L->probs) {
        int64_t ti = hg_op_load_i64(L->tdt, t);
        if (ti == L->ignore_index) { *counted = 0; return 0.0; }
        memcpy(&v, x + ti * cs, 8);
        return (m - v) + lse_m;
    }
    double l = 0;
    for (int64_t k = 0; k < C; k++) {
        memcpy(&v, x + k * cs, 8);
        l += hg_op_load_f64(L->tdt, t + k * L->t_cs) * ((m - v) + lse_m);
    }
    return l;
}

static void ce_chunk(void* ctx, int64_t e0, int64_t e1, double* sum, double* count) {
    const ce_loss* L = ctx;
    hg_loss_walk w = L->walk;
    hg_loss_walk_start(&w, e0);
    double s = 0, cnt = 0;
    for (int64_t e = e0; e < e1; e++) {
        int counted;
        double l = L->xdt == HG_DTYPE_F64 ? sample_f64(L, w.p[OP_X], w.p[OP_T], &counted)
                                          : sample_f32(L, w.p[OP_X], w.p[OP_T], &counted);
        if (L->write) hg_loss_store(L->rt, L->od, w.p[OP_OUT], l);
        s += l;
        cnt += counted;
        hg_loss_walk_next(&w);
    }
    *sum = s;
    *count = cnt;
}

// Every class index is in [0, C) or equals ignore_index (checked before anything is written).
static hg_status check_indices(hg_op_ctx* c, const ce_loss* L, int64_t nsamples) {
    hg_loss_walk w = L->walk;
    hg_loss_walk_start(&w, 0);
    for (int64_t e = 0; e < nsamples; e++) {
        int64_t ti = hg_op_load_i64(L->tdt, w.p[OP_T]);
        int big_unsigned = hg_dtype_is_unsigned_int((int)L->tdt) && ti < 0;
        if (ti != L->ignore_index && (ti < 0 || ti >= L->ncls || big_unsigned)) {
            if (big_unsigned)
                return hg_error(HG_ERR_OUT_OF_RANGE, "%s: target class index %llu (sample %lld "
                                "in C order) is out of range [0, %lld)", c->fn,
                                (unsigned long long)ti, (long long)e, (long long)L->ncls);
            return hg_error(HG_ERR_OUT_OF_RANGE, "%s: target class index %lld (sample %lld in C "
                            "order) is out of range [0, %lld) and is not ignore_index (%lld)",
                            c->fn, (long long)ti, (long long)e, (long long)L->ncls,
                            (long long)L->ignore_index);
        }
        hg_loss_walk_next(&w);
    }
    return HG_OK;
}

HG_API hg_status hg_cross_entropy(const hg_tensor* logits, const hg_tensor* target,
                                  int64_t ignore_index, hg_reduction reduction, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_cross_entropy");
    hg_status s;
    if ((s = hg_op_input(&c, logits, "logits", NULL, NULL)) ||
        (s = hg_op_input(&c, target, "target", NULL, NULL)) ||
        (s = hg_loss_float(&c, logits, "logits")) || (s = hg_loss_reduction(&c, reduction)))
        return s;
    // numpy's overlap rule before the views below are taken (out is checked further down).
    if ((s = hg_op_read_first(&c, out, &logits, 1)) || (s = hg_op_read_first(&c, out, &target, 1)))
        return s;
    int probs = hg_dtype_is_float((int)target->dtype);
    if (!probs && !hg_dtype_is_int((int)target->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "hg_cross_entropy: 'target' has dtype %s; it must "
                        "hold class indices (an integer dtype) or class probabilities (a float "
                        "dtype)", hg_dtype_name(target->dtype));
    if (logits->ndim < 1)
        return hg_error(HG_ERR_SIZE_MISMATCH, "hg_cross_entropy: 'logits' must be (C), (N, C) or "
                        "(N, C, d1, ...), got shape ()");
    // Sample shape: logits' shape without the class dim; the target's shape checked against it.
    int32_t cdim, ns;
    int64_t sshape[HG_MAX_DIMS], xst[HG_MAX_DIMS];
    if ((s = hg_ce_shapes(&c, logits, target, probs, &cdim, &ns, sshape))) return s;
    for (int32_t d = 0, k = 0; d < logits->ndim; d++)
        if (d != cdim) xst[k++] = logits->strides[d];
    int dev = hg_op_route_of(&c, HG_OPF_LOSS, logits->dtype) == HG_ROUTE_DEVICE;
    void* staged = NULL;   // a device target read back for the index check
    hg_host_view xv, tv;
    memset(&xv, 0, sizeof xv);
    if (dev) {
        if (!probs && (s = hg_dk_download(&c, target, &tv, &staged))) return s;
    } else if ((s = hg_op_host_view(&c, logits, &xv)) || (s = hg_op_host_view(&c, target, &tv))) {
        return s;
    }
    ce_loss L;
    memset(&L, 0, sizeof L);
    L.xdt = logits->dtype;
    L.tdt = target->dtype;
    L.ncls = logits->shape[cdim];
    L.probs = probs;
    L.ignore_index = ignore_index;
    size_t xes = hg_dtype_size(L.xdt), tes = hg_dtype_size(L.tdt);
    L.x_cs = logits->strides[cdim] * (int64_t)xes;
    L.walk.ndim = ns;
    L.walk.nops = OP_COUNT;
    int64_t nsamples = 1;
    for (int32_t d = 0; d < ns; d++) {
        L.walk.shape[d] = sshape[d];
        L.walk.bstrides[OP_X][d] = xst[d] * (int64_t)xes;
        nsamples *= sshape[d];
    }
    L.walk.base[OP_X] = xv.data;
    L.walk.base[OP_T] = tv.data;
    L.walk.base[OP_OUT] = L.dummy;
    if (probs) {
        L.t_cs = target->strides[cdim] * (int64_t)tes;
        for (int32_t d = 0, q = 0; d < target->ndim; d++)
            if (d != cdim) L.walk.bstrides[OP_T][q++] = target->strides[d] * (int64_t)tes;
    } else {
        // A staged target is C-contiguous (tv's strides), a host one strided as the tensor.
        for (int32_t d = 0; d < ns; d++)
            L.walk.bstrides[OP_T][d] = (staged ? tv.strides[d] : target->strides[d]) * (int64_t)tes;
        s = check_indices(&c, &L, nsamples);
        free(staged);
        if (s) return s;
    }
    hg_dtype rt = L.xdt;
    if ((s = hg_loss_output(&c, out, reduction, rt, ns, sshape))) return s;
    if (dev)
        return hg_op_finish(&c, out, hg_dev_cross_entropy(&c, logits, target, cdim, probs,
                                                          ignore_index, rt, reduction, out));
    hg_host_view ov;
    if ((s = hg_op_host_view(&c, out, &ov))) return hg_op_finish(&c, out, s);
    L.rt = rt;
    L.od = out->dtype;
    L.write = reduction == HG_REDUCTION_NONE;
    if (L.write) {
        size_t oes = hg_dtype_size(out->dtype);
        for (int32_t d = 0; d < ns; d++) L.walk.bstrides[OP_OUT][d] = ov.strides[d] * (int64_t)oes;
        L.walk.base[OP_OUT] = ov.data;
    }
    double sum, cnt;
    s = hg_loss_run(&c, nsamples, 8.0 * (double)(L.ncls + 1) * (probs ? 2 : 1), ce_chunk, &L, &sum,
                    &cnt);
    if (!s && !L.write) {
        double v = sum;
        if (reduction == HG_REDUCTION_MEAN) v = probs ? sum / (double)nsamples : sum / cnt;
        hg_loss_store(rt, out->dtype, ov.data, v);
    }
    return hg_op_finish(&c, out, s);
}
