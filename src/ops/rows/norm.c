// layer_norm and rms_norm over the last nnorm dims (torch semantics), library kernels on the
// executor's threads. Per row: the statistics are accumulated in f64 and rounded to f32 (kept in
// f64 for f64 inputs); the row is then normalized in that precision. layer_norm's mean and rstd
// (hg_layer_norm_stats) are written from the same pass: the rounded mean and the rstd it used.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_ops.h"
#include "ops/common/op_common.h"
#include "ops/reduce/reduce.h"
#include "base/cpu_targets.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"
#include "ops/rows/norm.h"

typedef struct norm_job {
    const unsigned char* x;
    unsigned char* o;
    hg_dtype xdt, odt;
    int64_t xsz, osz;
    int rms;
    double eps;
    int nrow, nin;                                  // outer (row) dims, normalized dims
    int64_t rs[HG_MAX_DIMS], rx[HG_MAX_DIMS], ro[HG_MAX_DIMS];
    int64_t is[HG_MAX_DIMS], ix[HG_MAX_DIMS], io[HG_MAX_DIMS];
    int64_t R, rows;
    int contig;                                     // rows contiguous f32 in and out
    const double* w;                                // R values or NULL (f64 inputs)
    const double* b;
    const float* wf;                                // the same as f32 (other inputs)
    const float* bf;
    unsigned char *sm, *sr;                         // mean, rstd: NULL, or C-contiguous of xdt
    int stats;                                      // sm or sr
    // row_f32_pick(); st / sm, sr: where the rows' (mean, rstd) go, or NULL
    void (*row_f32)(const struct norm_job* j, const float* t, float* y, float* st);
    void (*rows_f32)(const struct norm_job* j, const float* const* t, float* const* y,
                     float (*st)[2]);
    void (*rows1_f32)(const struct norm_job* j, const float* t, float* y, int64_t n, float* sm,
                      float* sr);
    int flat;                                       // contig, and the rows end to end
    int nw;
    unsigned char* scratch;
    size_t scratch_bytes;
} norm_job;

// Row r's index over the row dims (k) and its x / out offsets: divisions, once per worker.
static void rows_offsets(const norm_job* j, int64_t r, int64_t* k, int64_t* xo, int64_t* oo) {
    int64_t a = 0, b = 0;
    for (int d = j->nrow - 1; d >= 0; d--) {
        k[d] = r % j->rs[d];
        r /= j->rs[d];
        a += k[d] * j->rx[d];
        b += k[d] * j->ro[d];
    }
    *xo = a;
    *oo = b;
}

// The next row's index and offsets, by carrying (a row of 16 cost as much as two 64-bit
// divisions per row).
static void rows_next(const norm_job* j, int64_t* k, int64_t* xo, int64_t* oo) {
    for (int d = j->nrow - 1; d >= 0; d--) {
        *xo += j->rx[d];
        *oo += j->ro[d];
        if (++k[d] < j->rs[d]) return;
        *xo -= k[d] * j->rx[d];
        *oo -= k[d] * j->ro[d];
        k[d] = 0;
    }
}

// Visits the R elements of a row in C order: fn gets (i, x offset, out offset).
#define ROW_WALK(j, BODY)                                                                     \
    do {                                                                                      \
        int64_t ki_[HG_MAX_DIMS] = {0}, xo_ = 0, oo_ = 0;                                     \
        (void)xo_; (void)oo_; /* each walk's BODY reads one of the two offsets */             \
        for (int64_t i = 0; i < (j)->R; i++) {                                                \
            BODY;                                                                             \
            for (int d_ = (j)->nin - 1; d_ >= 0; d_--) {                                      \
                xo_ += (j)->ix[d_]; oo_ += (j)->io[d_];                                       \
                if (++ki_[d_] < (j)->is[d_]) break;                                           \
                xo_ -= (j)->ix[d_] * (j)->is[d_]; oo_ -= (j)->io[d_] * (j)->is[d_];           \
                ki_[d_] = 0;                                                                  \
            }                                                                                 \
        }                                                                                     \
    } while (0)

static void st_val(hg_dtype rdt, hg_dtype odt, unsigned char* p, double v) {
    if (odt != rdt) {
        uint64_t tmp = 0;
        hg_op_store_f64(rdt, &tmp, v);
        v = hg_op_load_f64(rdt, &tmp);
    }
    hg_op_store_f64(odt, p, v);
}

// Sum over the row of (t[i] - c)^2 in f64 (c = 0: the sum of squares): 32 f64 lanes (four
// chains of 8), so a wide ISA runs 8 lanes per instruction and 4 independent chains (4 scalar
// f64 chains ran at one element per cycle). wide (a constant after inlining): the chains as
// 8-lane GCC vectors, for AVX-512; else each as two 4-lane halves, the same lanes and operations
// (the same bits): GCC lowered the 8-lane type for AVX2 through general registers and the
// stack (docs/performance.md).
typedef double norm_v8d __attribute__((vector_size(64)));
typedef float norm_v8f __attribute__((vector_size(32)));
typedef double norm_v4d __attribute__((vector_size(32)));
typedef float norm_v4f __attribute__((vector_size(16)));
#define NORM_SQ_STEP8(acc, off)                                                      \
    do {                                                                             \
        norm_v8f f_;                                                                 \
        memcpy(&f_, t + i + (off), sizeof f_);                                       \
        norm_v8d d_ = __builtin_convertvector(f_, norm_v8d) - c;                     \
        acc += d_ * d_;                                                              \
    } while (0)
#define NORM_SQ_STEP4(acc, off)                                                      \
    do {                                                                             \
        norm_v4f f_;                                                                 \
        memcpy(&f_, t + i + (off), sizeof f_);                                       \
        norm_v4d d_ = __builtin_convertvector(f_, norm_v4d) - c;                     \
        acc += d_ * d_;                                                              \
    } while (0)

static inline __attribute__((always_inline)) double sq_dev_f32(const float* t, int64_t R,
                                                               double c, int wide) {
    if (R < 8) {
        // No vector step: the lanes' fold below is +0, so the result is 0 + tail (the fold
        // cost the AVX2 build most of a short row).
        double tail = 0.0;
        for (int64_t i = 0; i < R; i++) { double d = t[i] - c; tail += d * d; }
        return 0.0 + tail;
    }
    int64_t i = 0;
    double u[4];   // lanes j + 4 of the folded chains added to lanes j
    if (wide) {
        norm_v8d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (; i + 32 <= R; i += 32) {
            NORM_SQ_STEP8(a0, 0);
            NORM_SQ_STEP8(a1, 8);
            NORM_SQ_STEP8(a2, 16);
            NORM_SQ_STEP8(a3, 24);
        }
        // Rows shorter than 32 (and the rest of longer ones) 8 lanes at a time too: 16 scalar
        // steps of one f64 chain were most of a row of 16.
        for (; i + 8 <= R; i += 8) NORM_SQ_STEP8(a1, 0);
        a0 += a1;
        a2 += a3;
        a0 += a2;
        for (int k = 0; k < 4; k++) u[k] = a0[k] + a0[k + 4];
    } else {
        norm_v4d a0 = {0}, b0 = {0}, a1 = {0}, b1 = {0}, a2 = {0}, b2 = {0}, a3 = {0}, b3 = {0};
        for (; i + 32 <= R; i += 32) {
            NORM_SQ_STEP4(a0, 0);
            NORM_SQ_STEP4(b0, 4);
            NORM_SQ_STEP4(a1, 8);
            NORM_SQ_STEP4(b1, 12);
            NORM_SQ_STEP4(a2, 16);
            NORM_SQ_STEP4(b2, 20);
            NORM_SQ_STEP4(a3, 24);
            NORM_SQ_STEP4(b3, 28);
        }
        for (; i + 8 <= R; i += 8) {
            NORM_SQ_STEP4(a1, 0);
            NORM_SQ_STEP4(b1, 4);
        }
        a0 += a1;
        b0 += b1;
        a2 += a3;
        b2 += b3;
        a0 += a2;
        b0 += b2;
        for (int k = 0; k < 4; k++) u[k] = a0[k] + b0[k];
    }
    double tail = 0.0;
    for (; i < R; i++) { double d = t[i] - c; tail += d * d; }
    return ((u[0] + u[1]) + (u[2] + u[3])) + tail;
}

// A row's statistics: the f32 mean split in two (mean + mean_lo == the f64 mean to 2^-48
// relative: x - mean is exact for x near the mean, so inputs with a large mean keep full f32
// accuracy) and the f64 sum of squared deviations.
typedef struct norm_stats {
    float mean, mean_lo;
    double ss;
} norm_stats;

static inline __attribute__((always_inline)) norm_stats row_stats_f32(const norm_job* j,
                                                                      const float* t, int wide) {
    norm_stats st = {0.0f, 0.0f, 0.0};
    if (j->rms) {
        st.ss = sq_dev_f32(t, j->R, 0.0, wide);
    } else {
        double m = hg_reduce_sum_f32(t, j->R) / (double)j->R;
        st.mean = (float)m;
        st.mean_lo = (float)(m - (double)st.mean);
        st.ss = sq_dev_f32(t, j->R, m, wide);
    }
    return st;
}

static inline __attribute__((always_inline)) float row_rstd(const norm_job* j, double ss) {
    return (float)(1.0 / sqrt(ss / (double)j->R + j->eps));
}

static inline __attribute__((always_inline)) void row_apply_f32(const norm_job* j, const float* t,
                                                                float* y, norm_stats st,
                                                                float rstd) {
    int64_t R = j->R;
    float mean = st.mean, mean_lo = st.mean_lo;
    const float* w = j->wf;
    const float* b = j->bf;
    if (w && b)
        for (int64_t i = 0; i < R; i++) y[i] = ((t[i] - mean) - mean_lo) * rstd * w[i] + b[i];
    else if (w) for (int64_t i = 0; i < R; i++) y[i] = ((t[i] - mean) - mean_lo) * rstd * w[i];
    else if (b) for (int64_t i = 0; i < R; i++) y[i] = ((t[i] - mean) - mean_lo) * rstd + b[i];
    else for (int64_t i = 0; i < R; i++) y[i] = ((t[i] - mean) - mean_lo) * rstd;
}

static inline __attribute__((always_inline)) void row_f32_body(const norm_job* j, const float* t,
                                                               float* y, int wide, float* so) {
    norm_stats st = row_stats_f32(j, t, wide);
    float rstd = row_rstd(j, st.ss);
    if (so) so[0] = st.mean, so[1] = rstd;
    row_apply_f32(j, t, y, st, rstd);
}

// NORM_BATCH short contiguous rows at once, the same operations per row (the same bits): one
// row's statistics end in a divide, a square root and a divide (~50 cycles of latency); over a
// batch they run as vector instructions, and the rows' sums overlap (docs/performance.md).
#define NORM_BATCH 8
#define NORM_SHORT_ROW 64
static inline __attribute__((always_inline)) void rows_f32_body(const norm_job* j,
                                                                const float* const* t,
                                                                float* const* y, int wide,
                                                                float (*so)[2]) {
    norm_stats st[NORM_BATCH];
    double ss[NORM_BATCH];
    float rstd[NORM_BATCH];
    for (int r = 0; r < NORM_BATCH; r++) {
        st[r] = row_stats_f32(j, t[r], wide);
        ss[r] = st[r].ss;
    }
    for (int r = 0; r < NORM_BATCH; r++) rstd[r] = row_rstd(j, ss[r]);
    for (int r = 0; so && r < NORM_BATCH; r++) so[r][0] = st[r].mean, so[r][1] = rstd[r];
    for (int r = 0; r < NORM_BATCH; r++) row_apply_f32(j, t[r], y[r], st[r], rstd[r]);
}

// n rows of one element (R == 1) laid end to end, as one loop over the rows (it vectorizes):
// row_f32_body's operations for R == 1, in the same order (the same bits; tested against the
// strided path): sq_dev_f32 is 0 + (0 + d*d), and the mean is hg_reduce_sum_f32's sum of one
// element, 0.0 + x. One row at a time cost a call's overhead per element.
static inline __attribute__((always_inline)) float row1_stats(const norm_job* j, float x,
                                                              float* mean, float* mean_lo) {
    double c = 0.0;
    *mean = *mean_lo = 0.0f;
    if (!j->rms) {
        c = (0.0 + (double)x) / 1.0;
        *mean = (float)c;
        *mean_lo = (float)(c - (double)*mean);
    }
    double d = x - c;
    double ss = 0.0 + (0.0 + d * d);
    return (float)(1.0 / sqrt(ss / 1.0 + j->eps));
}

static inline __attribute__((always_inline)) void rows1_f32_body(const norm_job* j,
                                                                 const float* t, float* y,
                                                                 int64_t n, float* sm,
                                                                 float* sr) {
    const float* w = j->wf;
    const float* b = j->bf;
    // The statistics in a loop of their own, before y (which may be t) is written; the loop
    // below stays the one hg_layer_norm runs (the same operations: the same bits).
    for (int64_t i = 0; (sm || sr) && i < n; i++) {
        float mean, mean_lo, rstd = row1_stats(j, t[i], &mean, &mean_lo);
        if (sm) sm[i] = mean;
        if (sr) sr[i] = rstd;
    }
    for (int64_t i = 0; i < n; i++) {
        float mean = 0.0f, mean_lo = 0.0f;
        double c = 0.0;
        if (!j->rms) {
            c = (0.0 + (double)t[i]) / 1.0;
            mean = (float)c;
            mean_lo = (float)(c - (double)mean);
        }
        double d = t[i] - c;
        double ss = 0.0 + (0.0 + d * d);
        float rstd = (float)(1.0 / sqrt(ss / 1.0 + j->eps));
        float v = ((t[i] - mean) - mean_lo) * rstd;
        if (w && b) y[i] = v * w[0] + b[0];
        else if (w) y[i] = v * w[0];
        else if (b) y[i] = v + b[0];
        else y[i] = v;
    }
}

// The row kernels built for the baseline, AVX2 and AVX-512 (the same operations in the same
// order: the same bits), picked once per call.
typedef void (*norm_row_fn)(const norm_job* j, const float* t, float* y, float* st);
typedef void (*norm_rows_fn)(const norm_job* j, const float* const* t, float* const* y,
                             float (*st)[2]);
typedef void (*norm_rows1_fn)(const norm_job* j, const float* t, float* y, int64_t n, float* sm,
                              float* sr);
// The _st forms write the statistics; the others are the kernels hg_layer_norm always ran.
#define NORM_KERNELS(sfx, attr, wide)                                                          \
    attr static void row_f32_##sfx(const norm_job* j, const float* t, float* y, float* st) {   \
        row_f32_body(j, t, y, wide, NULL);                                                     \
    }                                                                                          \
    attr static void row_f32_st_##sfx(const norm_job* j, const float* t, float* y,             \
                                      float* st) {                                             \
        row_f32_body(j, t, y, wide, st);                                                       \
    }                                                                                          \
    attr static void rows_f32_##sfx(const norm_job* j, const float* const* t,                  \
                                    float* const* y, float (*st)[2]) {                         \
        rows_f32_body(j, t, y, wide, NULL);                                                    \
    }                                                                                          \
    attr static void rows_f32_st_##sfx(const norm_job* j, const float* const* t,               \
                                       float* const* y, float (*st)[2]) {                      \
        rows_f32_body(j, t, y, wide, st);                                                      \
    }                                                                                          \
    attr static void rows1_f32_##sfx(const norm_job* j, const float* t, float* y, int64_t n,   \
                                     float* sm, float* sr) {                                   \
        rows1_f32_body(j, t, y, n, sm, sr);                                                    \
    }
NORM_KERNELS(base, , 0)
#if defined(HG_HAVE_CPU_TARGETS)
NORM_KERNELS(avx2, HG_TARGET_AVX2, 0)
NORM_KERNELS(avx512, HG_TARGET_AVX512_WIDE, 1)
#endif
static void row_f32_pick(norm_job* j) {
    int st = j->stats;
    j->row_f32 = st ? row_f32_st_base : row_f32_base;
    j->rows_f32 = st ? rows_f32_st_base : rows_f32_base;
    j->rows1_f32 = rows1_f32_base;
#if defined(HG_HAVE_CPU_TARGETS)
    hg_cpu_level lv = hg_cpu_level_get();
    if (lv >= HG_CPU_AVX512) {
        j->row_f32 = st ? row_f32_st_avx512 : row_f32_avx512;
        j->rows_f32 = st ? rows_f32_st_avx512 : rows_f32_avx512;
        j->rows1_f32 = rows1_f32_avx512;
    } else if (lv >= HG_CPU_AVX2) {
        j->row_f32 = st ? row_f32_st_avx2 : row_f32_avx2;
        j->rows_f32 = st ? rows_f32_st_avx2 : rows_f32_avx2;
        j->rows1_f32 = rows1_f32_avx2;
    }
#endif
}

static void row_f64(const norm_job* j, double* t, double* so) {
    int64_t R = j->R;
    double mean = 0.0, ss = 0.0;
    if (!j->rms) mean = hg_reduce_sum_f64(t, R) / (double)R;
    for (int64_t i = 0; i < R; i++) { double d = t[i] - mean; ss += d * d; }
    double rstd = 1.0 / sqrt(ss / (double)R + j->eps);
    so[0] = mean, so[1] = rstd;
    for (int64_t i = 0; i < R; i++) {
        double v = (t[i] - mean) * rstd;
        if (j->w) v *= j->w[i];
        if (j->b) v += j->b[i];
        t[i] = v;
    }
}

// Row r's (mean, rstd) into the statistics (x's dtype: f32 stored as it is, f16 / bf16
// rounded once from f32, f64 as it is).
static void put_stats(const norm_job* j, int64_t r, double mean, double rstd) {
    if (j->sm) hg_op_store_f64(j->xdt, j->sm + r * j->xsz, mean);
    if (j->sr) hg_op_store_f64(j->xdt, j->sr + r * j->xsz, rstd);
}

static void norm_worker(void* ctx, int w) {
    norm_job* j = ctx;
    int64_t r0 = j->rows * w / j->nw, r1 = j->rows * (w + 1) / j->nw;
    unsigned char* buf = j->scratch + (size_t)w * j->scratch_bytes;
    int64_t k[HG_MAX_DIMS], xo = 0, oo = 0;
    if (r0 < r1) rows_offsets(j, r0, k, &xo, &oo);
    int64_t r = r0;
    if (j->flat && j->R == 1) {   // f32 statistics, contiguous
        j->rows1_f32(j, (const float*)j->x + r0, (float*)j->o + r0, r1 - r0,
                     j->sm ? (float*)j->sm + r0 : NULL, j->sr ? (float*)j->sr + r0 : NULL);
        return;
    }
    if (j->contig && j->R < NORM_SHORT_ROW) {
        for (; r + NORM_BATCH <= r1; r += NORM_BATCH) {
            const float* t[NORM_BATCH];
            float* y[NORM_BATCH];
            float st[NORM_BATCH][2];   // written by the _st kernels (j->stats)
            for (int q = 0; q < NORM_BATCH; q++, rows_next(j, k, &xo, &oo)) {
                t[q] = (const float*)(j->x + xo * j->xsz);
                y[q] = (float*)(j->o + oo * j->osz);
            }
            j->rows_f32(j, t, y, st);
            for (int q = 0; j->stats && q < NORM_BATCH; q++)
                put_stats(j, r + q, st[q][0], st[q][1]);
        }
    }
    for (; r < r1; r++, rows_next(j, k, &xo, &oo)) {
        const unsigned char* xp = j->x + xo * j->xsz;
        unsigned char* op = j->o + oo * j->osz;
        float st[2];   // written by the _st kernels (j->stats)
        if (j->contig) {
            j->row_f32(j, (const float*)xp, (float*)op, st);
            if (j->stats) put_stats(j, r, st[0], st[1]);
            continue;
        }
        if (j->xdt == HG_DTYPE_F64) {
            double* t = (double*)buf;
            double sd[2];
            ROW_WALK(j, t[i] = *(const double*)(xp + xo_ * 8));
            row_f64(j, t, sd);
            put_stats(j, r, sd[0], sd[1]);
            ROW_WALK(j, st_val(j->xdt, j->odt, op + oo_ * j->osz, t[i]));
        } else {
            float* t = (float*)buf;
            ROW_WALK(j, t[i] = (float)hg_op_load_f64(j->xdt, xp + xo_ * j->xsz));
            j->row_f32(j, t, t, st);
            if (j->stats) put_stats(j, r, st[0], st[1]);
            ROW_WALK(j, st_val(j->xdt, j->odt, op + oo_ * j->osz, t[i]));
        }
    }
}

// A checked parameter in the compute precision (host-visible backends): f64 for f64 inputs
// (*d64), else f32 (*d32). A C-contiguous parameter already in that dtype is used where it is
// (*owned stays NULL): gathering one of 4096 elements through hg_op_load_f64 and converting it
// again was two thirds of a layer_norm of (8, 4096). Otherwise gathered into *owned.
static hg_status load_param(hg_op_ctx* c, const hg_tensor* t, const char* name, int f64,
                            const void** data, void** owned) {
    hg_status s;
    hg_host_view v;
    if ((s = hg_op_host_view_checked(c, t, &v))) return s;
    hg_dtype want = f64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    int contig = v.dtype == want;
    int64_t ex = 1;
    for (int32_t a = v.ndim - 1; a >= 0 && contig; a--) {
        contig = v.shape[a] == 1 || v.strides[a] == ex;
        ex *= v.shape[a];
    }
    if (contig) {
        *data = v.data;
        return HG_OK;
    }
    size_t esz = f64 ? sizeof(double) : sizeof(float);
    unsigned char* d = malloc((size_t)(v.numel ? v.numel : 1) * esz);
    if (!d) return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for '%s'", c->fn, name);
    int64_t k[HG_MAX_DIMS] = {0};
    size_t sz = hg_dtype_size(v.dtype);
    for (int64_t i = 0; i < v.numel; i++) {
        int64_t off = 0;
        for (int32_t a = 0; a < v.ndim; a++) off += k[a] * v.strides[a];
        double e = hg_op_load_f64(v.dtype, v.data + off * (int64_t)sz);
        if (f64) ((double*)d)[i] = e;
        else ((float*)d)[i] = (float)e;
        for (int32_t a = v.ndim - 1; a >= 0; a--) {
            if (++k[a] < v.shape[a]) break;
            k[a] = 0;
        }
    }
    *data = d;
    *owned = d;
    return HG_OK;
}

hg_status hg_norm_rows(hg_op_ctx* c, int rms, const hg_tensor* x, int32_t nnorm,
                       const hg_tensor* weight, const hg_tensor* bias, double eps,
                       const hg_tensor* out, const hg_tensor* mean, const hg_tensor* rstd) {
    const char* fn = c->fn;
    hg_status s = HG_OK;
    norm_job j;
    memset(&j, 0, sizeof j);
    const void *w = NULL, *b = NULL;   // in the compute precision (load_param)
    void *w_owned = NULL, *b_owned = NULL;
    int f64 = x->dtype == HG_DTYPE_F64;
    if (weight && (s = load_param(c, weight, "weight", f64, &w, &w_owned))) goto done;
    if (bias && (s = load_param(c, bias, "bias", f64, &b, &b_owned))) goto done;
    hg_host_view xv, ov;
    if ((s = hg_op_host_view_checked(c, x, &xv)) || (s = hg_op_host_view_checked(c, out, &ov)))
        goto done;
    if (xv.numel == 0) goto done;
    hg_host_view mv, rv;
    if ((mean && (s = hg_op_host_view_checked(c, mean, &mv))) ||
        (rstd && (s = hg_op_host_view_checked(c, rstd, &rv))))
        goto done;
    j.sm = mean ? mv.data : NULL;
    j.sr = rstd ? rv.data : NULL;
    j.stats = mean || rstd;
    j.x = xv.data; j.o = ov.data;
    j.xdt = xv.dtype; j.odt = ov.dtype;
    j.xsz = (int64_t)hg_dtype_size(xv.dtype); j.osz = (int64_t)hg_dtype_size(ov.dtype);
    j.rms = rms;
    j.eps = eps;
    j.nrow = xv.ndim - nnorm;
    j.nin = nnorm;
    j.R = 1;
    j.rows = 1;
    for (int d = 0; d < j.nrow; d++) {
        j.rs[d] = xv.shape[d]; j.rx[d] = xv.strides[d]; j.ro[d] = ov.strides[d];
        j.rows *= xv.shape[d];
    }
    int contig = j.xdt == HG_DTYPE_F32 && j.odt == HG_DTYPE_F32;
    int64_t ex = 1;
    for (int d = nnorm - 1; d >= 0; d--) {
        int a = j.nrow + d;
        j.is[d] = xv.shape[a]; j.ix[d] = xv.strides[a]; j.io[d] = ov.strides[a];
        if (xv.shape[a] != 1 && (xv.strides[a] != ex || ov.strides[a] != ex)) contig = 0;
        ex *= xv.shape[a];
        j.R *= xv.shape[a];
    }
    j.contig = contig;
    j.flat = contig;   // rows end to end: the row dims C-contiguous with row stride R
    int64_t rex = j.R;
    for (int d = j.nrow - 1; d >= 0 && j.flat; d--) {
        if (j.rs[d] != 1 && (j.rx[d] != rex || j.ro[d] != rex)) j.flat = 0;
        rex *= j.rs[d];
    }
    row_f32_pick(&j);
    if (f64) {
        j.w = w;
        j.b = b;
    } else {
        j.wf = w;
        j.bf = b;
    }
    int nw = xv.numel < 32768 ? 1 : hg_op_num_threads(c);
    if (nw > j.rows) nw = (int)j.rows;
    j.nw = nw;
    // Rows that are not contiguous f32 are gathered into a per-worker row buffer. Contiguous
    // ones need none: a long row's buffer is above glibc's mmap threshold, mapped and unmapped
    // on every call (most of such a call's time).
    j.scratch_bytes = contig ? 0 : (size_t)j.R * 8 + 64;
    j.scratch = contig ? NULL : malloc(j.scratch_bytes * (size_t)nw);
    if (!contig && !j.scratch) {
        s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for rows of %lld elements", fn,
                     (long long)j.R);
        goto done;
    }
    s = hg_op_parallel(c, nw, norm_worker, &j, &j.nw);
done:
    free(j.scratch);
    free(w_owned);
    free(b_owned);
    return s;
}

hg_status hg_norm_into(hg_op_ctx* c, int rms, const hg_tensor* x, int32_t nnorm,
                       const hg_tensor* weight, const hg_tensor* bias, double eps,
                       const hg_tensor* out) {
    if (hg_op_route_of(c, HG_OPF_ROWS, x->dtype) == HG_ROUTE_DEVICE)
        return hg_dev_rows(c, rms ? HG_DEV_RMS_NORM : HG_DEV_LAYER_NORM, x, x->ndim - nnorm,
                           weight, rms ? NULL : bias, eps, out);
    return hg_norm_rows(c, rms, x, nnorm, weight, bias, eps, out, NULL, NULL);
}
