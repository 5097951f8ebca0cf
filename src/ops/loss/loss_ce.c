// The host kernel of hg_cross_entropy (the composite layer's host override; the entry is
// src/composite/loss_api.c, the definition decomp_losses.c), as
// torch.nn.functional.cross_entropy (no class weights, no smoothing).
// logits (C), (N, C) or (N, C, d1, ...); one sample per position of the non-class dims. Per
// sample: lse = m + log(sum_c exp(x_c - m)) with m = max_c x_c (stable for any magnitude and
// for -inf entries), then
//   class indices:       loss = lse - x_target         (ignore_index: loss 0, not counted)
//   class probabilities: loss = sum_c t_c (lse - x_c)  (= -sum_c t_c log_softmax(x)_c)
// with lse - x_c formed as (m - x_c) + log(sum) so it keeps its digits next to large logits.
// f16/bf16/f32 logits: the shifted exps in f32, their sum and the rest in double; f64 in f64.
// MEAN divides by the number of non-ignored samples (indices) or of samples (probabilities).
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "base/shape.h"
#include "ops/loss/loss_common.h"

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

hg_status hg_loss_ce_host(hg_op_ctx* c, const hg_tensor* logits, const hg_tensor* target,
                          int32_t cdim, int probs, int64_t ignore_index, hg_dtype rt,
                          hg_reduction r, const hg_tensor* out) {
    hg_host_view xv, tv, ov;
    hg_status s;
    if ((s = hg_op_host_view(c, logits, &xv)) || (s = hg_op_host_view(c, target, &tv)) ||
        (s = hg_op_host_view(c, out, &ov)))
        return s;
    ce_loss L;
    memset(&L, 0, sizeof L);
    L.xdt = logits->dtype;
    L.tdt = target->dtype;
    L.ncls = logits->shape[cdim];
    L.probs = probs;
    L.ignore_index = ignore_index;
    L.rt = rt;
    L.od = out->dtype;
    L.write = r == HG_REDUCTION_NONE;
    size_t xes = hg_dtype_size(L.xdt), tes = hg_dtype_size(L.tdt), oes = hg_dtype_size(L.od);
    L.x_cs = logits->strides[cdim] * (int64_t)xes;
    L.t_cs = probs ? target->strides[cdim] * (int64_t)tes : 0;
    L.walk.nops = OP_COUNT;
    L.walk.base[OP_X] = xv.data;
    L.walk.base[OP_T] = tv.data;
    L.walk.base[OP_OUT] = L.write ? ov.data : L.dummy;
    // The walk over the samples: logits' dims without the class dim (the target's too for
    // probabilities; class indices have the sample shape).
    for (int32_t d = 0, q = 0; d < logits->ndim; d++) {
        if (d == cdim) continue;
        int32_t w = L.walk.ndim++;
        L.walk.shape[w] = logits->shape[d];
        L.walk.bstrides[OP_X][w] = logits->strides[d] * (int64_t)xes;
        L.walk.bstrides[OP_T][w] = target->strides[probs ? d : q++] * (int64_t)tes;
        if (L.write) L.walk.bstrides[OP_OUT][w] = ov.strides[w] * (int64_t)oes;
    }
    int64_t nsamples = hg_shape_numel(L.walk.ndim, L.walk.shape);
    double sum, cnt;
    s = hg_loss_run(c, nsamples, 8.0 * (double)(L.ncls + 1) * (probs ? 2 : 1), ce_chunk, &L,
                    &sum, &cnt);
    if (!s && !L.write) {
        double v = sum;
        if (r == HG_REDUCTION_MEAN) v = probs ? sum / (double)nsamples : sum / cnt;
        hg_loss_store(rt, out->dtype, ov.data, v);
    }
    return s;
}
