// cross_entropy_backward's host override (overrides.c): f32/f64 logits over a last class dim,
// out C-contiguous; class indices, or probabilities of the logits' dtype in C-contiguous rows.
// Each row is written once: p = softmax(row) by the softmax row kernels (f32 (N, C) rows:
// blocks of rows of about 16 KiB, each scaled while it is in cache; other logits:
// hg_softmax_host into out first), then, with the decomposition's scalars in its order
// (decomp_loss.c), so the two agree bit for bit:
//   class indices: p * w - (w at the target class); w = scale where t != ignore_index, else
//   0 * scale; an ignored sample's target is class 0; scale = grad (SUM), grad per sample
//   (NONE), grad / max(samples counted, 1) (MEAN);
//   probabilities: (p * ts - t) * scale; ts = the row's sum of t as the graph's reduce adds it
//   (hg_reduce_sum_rows_f32 / hg_reduce_sum_f64, rounded once); scale = grad / samples (MEAN).
// The composed form this replaced ran ~10 eager ops over the logits' shape; the decomposition's
// plan 8 kernels (docs/performance.md "cross_entropy_backward").
#include <string.h>
#include "base/dtype.h"
#include "base/shape.h"
#include "composite/composite.h"
#include "ops/reduce/reduce.h"
#include "ops/rows/rows_grad.h"
#include "ops/rows/softmax.h"
#include "ops/rows/softmax_f32.h"

typedef struct ce_job {
    unsigned char* o;             // out: rows of C in the compute dtype
    const unsigned char* x;       // logits (fused f32 path), else NULL (out holds p already)
    const unsigned char* tp;      // probabilities: C-contiguous rows of C; else NULL
    hg_host_view t, g;            // target (class indices), grad (0-d unless NONE)
    int64_t rows, C, block, ign;
    int f64, per_sample, nw;
    double count;                 // MEAN: the samples counted (probabilities: all), at least 1
} ce_job;

// The element offset of sample r (C order over v's dims) in v.
static int64_t sample_off(const hg_host_view* v, int64_t r) {
    int64_t off = 0;
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
        off += r % v->shape[d] * v->strides[d];
        r /= v->shape[d];
    }
    return off;
}

// Sample r's class (0 where ignored: w is +-0 there, as the decomposition's) and its scale
// in f64 (exact for both compute dtypes: the caller rounds it as the graph's cast did).
static int64_t sample_target(const ce_job* j, int64_t r, int* keep) {
    int64_t ti = hg_op_load_i64(j->t.dtype, j->t.data + sample_off(&j->t, r) *
                                (int64_t)hg_dtype_size(j->t.dtype));
    *keep = ti != j->ign;
    if (!*keep) return 0;
    return ti < 0 ? ti + j->C : ti;
}

static double sample_grad(const ce_job* j, int64_t r) {
    int64_t off = j->per_sample ? sample_off(&j->g, r) : 0;
    return hg_op_load_f64(j->g.dtype, j->g.data + off * (int64_t)hg_dtype_size(j->g.dtype));
}

// The scale of sample r in the compute dtype (the graph's cast of grad, then / count).
static float scale_f32(const ce_job* j, int64_t r, float g) {
    float sc = j->per_sample ? (float)sample_grad(j, r) : g;
    return j->count > 0 ? sc / (float)j->count : sc;
}

static double scale_f64(const ce_job* j, int64_t r, double g) {
    double sc = j->per_sample ? sample_grad(j, r) : g;
    return j->count > 0 ? sc / j->count : sc;
}

static void rows_f32(const ce_job* j, int64_t r0, int64_t r1) {
    float g = (float)sample_grad(j, 0);
    for (int64_t r = r0; r < r1; r++) {
        float* o = (float*)j->o + r * j->C;
        int keep;
        int64_t tc = sample_target(j, r, &keep);
        float w = (float)keep * scale_f32(j, r, g);
        for (int64_t c = 0; c < j->C; c++) o[c] = o[c] * w;
        o[tc] = o[tc] - w;   // p * w - w at the target (the product was rounded first)
    }
}

static void rows_f64(const ce_job* j, int64_t r0, int64_t r1) {
    double g = sample_grad(j, 0);
    for (int64_t r = r0; r < r1; r++) {
        double* o = (double*)j->o + r * j->C;
        int keep;
        int64_t tc = sample_target(j, r, &keep);
        double w = (double)keep * scale_f64(j, r, g);
        for (int64_t c = 0; c < j->C; c++) o[c] = o[c] * w;
        o[tc] = o[tc] - w;
    }
}

static void prob_rows_f32(const ce_job* j, int64_t r0, int64_t r1) {
    float g = (float)sample_grad(j, 0);
    for (int64_t r = r0; r < r1; r++) {
        float* o = (float*)j->o + r * j->C;
        const float* t = (const float*)j->tp + r * j->C;
        double sum;
        hg_reduce_sum_rows_f32(t, j->C, 1, j->C, &sum);
        float ts = (float)sum, sc = scale_f32(j, r, g);
        for (int64_t c = 0; c < j->C; c++) o[c] = (o[c] * ts - t[c]) * sc;
    }
}

static void prob_rows_f64(const ce_job* j, int64_t r0, int64_t r1) {
    double g = sample_grad(j, 0);
    for (int64_t r = r0; r < r1; r++) {
        double* o = (double*)j->o + r * j->C;
        const double* t = (const double*)j->tp + r * j->C;
        // 0 + the sum, as the reduce's accumulator starts (a row of -0 sums to +0)
        double ts = 0.0 + hg_reduce_sum_f64(t, j->C), sc = scale_f64(j, r, g);
        for (int64_t c = 0; c < j->C; c++) o[c] = (o[c] * ts - t[c]) * sc;
    }
}

static void ce_worker(void* ctx, int w) {
    const ce_job* j = ctx;
    int64_t i0 = j->rows * w / j->nw, i1 = j->rows * (w + 1) / j->nw;
    for (int64_t r = i0; r < i1; r += j->block) {
        int64_t n = i1 - r < j->block ? i1 - r : j->block;
        if (j->x)
            hg_sm_rows_f32((const float*)j->x + r * j->C, (float*)j->o + r * j->C, n, j->C, 0);
        if (j->tp && j->f64) prob_rows_f64(j, r, r + n);
        else if (j->tp) prob_rows_f32(j, r, r + n);
        else if (j->f64) rows_f64(j, r, r + n);
        else rows_f32(j, r, r + n);
    }
}

int hg_cop_ce_bw_host_ok(const hg_cop_call* k) {
    const hg_tensor *logits = k->in[0], *out = k->out[0];
    const hg_tensor* t = k->in[1];
    if (k->axis != logits->ndim - 1 || out->dtype != logits->dtype || !hg_rg_c_contig(out))
        return 0;
    if (!hg_dtype_is_float((int)t->dtype)) return 1;
    // Probabilities: rows of the logits' dtype (the graph's cast is then none). Rows of 2^19
    // or more the graph's reduce may split over the threads (another order of the sum).
    return t->dtype == logits->dtype && hg_rg_c_contig(t) && logits->shape[k->axis] < (1 << 19);
}

hg_status hg_cop_ce_bw_host(const hg_cop_call* k) {
    hg_op_ctx* c = k->c;
    const hg_tensor *logits = k->in[0], *out = k->out[0];
    ce_job j;
    memset(&j, 0, sizeof j);
    hg_host_view xv, ov;
    hg_status s;
    if ((s = hg_op_host_view_checked(c, logits, &xv)) ||
        (s = hg_op_host_view_checked(c, out, &ov)) ||
        (s = hg_op_host_view_checked(c, k->in[1], &j.t)) ||
        (s = hg_op_host_view_checked(c, k->in[2], &j.g)))
        return s;
    j.o = ov.data;
    j.C = logits->shape[k->axis];
    j.rows = ov.numel / j.C;   // the entry ran nothing for an empty out
    j.ign = k->ignore_index;
    j.f64 = logits->dtype == HG_DTYPE_F64;
    j.per_sample = k->reduction == HG_REDUCTION_NONE;
    int probs = hg_dtype_is_float((int)k->in[1]->dtype);
    if (probs) j.tp = j.t.data;
    if (probs && k->reduction == HG_REDUCTION_MEAN) j.count = (double)j.rows;
    else if (k->reduction == HG_REDUCTION_MEAN) {
        int64_t n = 0;
        for (int64_t r = 0; r < j.rows; r++) {
            int keep;
            sample_target(&j, r, &keep);
            n += keep;
        }
        j.count = n > 1 ? (double)n : 1.0;
    }
    // The rows hg_softmax_host runs through hg_sm_rows_f32 (its bits: rows of at most 16 sum
    // in another order than slices do); other logits go through it first.
    int fused = !j.f64 && logits->ndim == 2 && logits->strides[0] == j.C &&
                logits->strides[1] == 1 && out->strides[0] == j.C && out->strides[1] == 1;
    if (fused) j.x = xv.data;
    else if ((s = hg_softmax_host(c, logits, k->axis, 0, out))) return s;
    j.block = 4096 / j.C > 1 ? 4096 / j.C : 1;
    int nw = ov.numel < 32768 ? 1 : hg_op_num_threads(c);
    if (nw > j.rows) nw = (int)j.rows;
    j.nw = nw;
    return hg_op_parallel(c, nw, ce_worker, &j, &j.nw);
}
