// What the row-kernel shape tests (test_ops_rows_shapes.c, test_ops_rows_bw_shapes.c) share:
// values as stored in a float dtype, buffers filled from doubles, and the NMSE bound per output
// dtype.
#ifndef HG_TEST_OPS_ROWS_UTIL_H
#define HG_TEST_OPS_ROWS_UTIL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"

// Value v as stored in dt, and back (so the reference sees exactly the inputs).
static inline double rows_round_to(hg_dtype dt, double v) {
    switch (dt) {
    case HG_DTYPE_F32: return (float)v;
    case HG_DTYPE_F16: return hg_f16_to_f32(hg_f32_to_f16((float)v));
    case HG_DTYPE_BF16: return hg_bf16_to_f32(hg_f32_to_bf16((float)v));
    default: return v;
    }
}

static inline void rows_put(unsigned char* p, hg_dtype dt, double v) {
    switch (dt) {
    case HG_DTYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case HG_DTYPE_F16: { uint16_t u = hg_f32_to_f16((float)v); memcpy(p, &u, 2); break; }
    case HG_DTYPE_BF16: { uint16_t u = hg_f32_to_bf16((float)v); memcpy(p, &u, 2); break; }
    case HG_DTYPE_I64: { int64_t i = (int64_t)v; memcpy(p, &i, 8); break; }
    case HG_DTYPE_I32: { int32_t i = (int32_t)v; memcpy(p, &i, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

static inline double rows_get(const unsigned char* p, hg_dtype dt) {
    switch (dt) {
    case HG_DTYPE_F32: { float f; memcpy(&f, p, 4); return f; }
    case HG_DTYPE_F16: { uint16_t u; memcpy(&u, p, 2); return hg_f16_to_f32(u); }
    case HG_DTYPE_BF16: { uint16_t u; memcpy(&u, p, 2); return hg_bf16_to_f32(u); }
    default: { double d; memcpy(&d, p, 8); return d; }
    }
}

// A buffer of n elements of dt on ex holding v (NaN where v is NULL).
static inline hg_buffer rows_make_buf(hg_executor ex, hg_dtype dt, int64_t n, const double* v) {
    hg_buffer b;
    CHECK_OK(hg_buffer_create(ex, dt, (size_t)n, &b));
    size_t es = hg_dtype_size(dt);
    unsigned char* h = malloc((size_t)n * es);
    for (int64_t i = 0; i < n; i++) rows_put(h + (size_t)i * es, dt, v ? v[i] : NAN);
    CHECK_OK(hg_buffer_write(b, 0, h, (size_t)n));
    free(h);
    return b;
}

static inline double rows_nmse_limit(hg_dtype dt) {
    switch (dt) {
    case HG_DTYPE_F64: return 1e-24;
    case HG_DTYPE_F32: return 1e-9;   // the CPU: 8e-10 with rows at 1e4 +- 4
    case HG_DTYPE_F16: return 1e-6;
    default: return 1e-4;
    }
}

// float64 references of one row of R elements. softmax_backward of grad g at y (log:
// log_softmax_backward) into o.
// Layouts of (M, R) operands: C-contiguous rows; every other element of rows twice as long;
// the transpose of an (R, M) buffer (the row axis at stride M).
enum { LAY_ROWS, LAY_STRIDED, LAY_TRANSPOSED, LAY_COUNT };

// An (M, R) operand in layout lay, uniform in [lo, hi) from *rng, rounded to dt: its buffer, the
// view and the values as stored (row-major).
typedef struct rows_operand {
    hg_buffer buf;
    hg_tensor t;
    double* v;
} rows_operand;

static inline rows_operand rows_make_operand(hg_executor ex, uint64_t* rng, hg_dtype dt,
                                             int64_t M, int64_t R, int lay, double lo,
                                             double hi) {
    rows_operand o;
    int64_t n = M * R, cap = lay == LAY_STRIDED ? 2 * n : n;
    double* raw = malloc((size_t)(cap ? cap : 1) * sizeof *raw);
    o.v = malloc((size_t)(n ? n : 1) * sizeof *o.v);
    for (int64_t i = 0; i < cap; i++)
        raw[i] = rows_round_to(dt, lo + (hi - lo) * (double)(hg_test_rand(rng) >> 11) * 0x1p-53);
    o.buf = rows_make_buf(ex, dt, cap, raw);
    int64_t shape[2] = {M, R}, st[2] = {R, 1};
    if (lay == LAY_STRIDED) st[0] = 2 * R, st[1] = 2;
    if (lay == LAY_TRANSPOSED) st[0] = 1, st[1] = M;
    CHECK_OK(hg_tensor_view(o.buf, 2, shape, st, 0, &o.t));
    for (int64_t r = 0; r < M; r++)
        for (int64_t j = 0; j < R; j++) o.v[r * R + j] = raw[r * st[0] + j * st[1]];
    free(raw);
    return o;
}

static inline void rows_operand_free(rows_operand* o) {
    hg_buffer_destroy(o->buf);
    free(o->v);
}

// NMSE of got against want (NaN where want has one, equal infinities), want rounded to dt;
// relative to mag where it is larger, when given (the norms' gradients of rows of 1 or 2
// elements are ~0 by cancellation: their error's scale is the size of the terms).
static inline double rows_nmse(const double* got, const double* want, const double* mag,
                               int64_t n, hg_dtype dt, int* bad) {
    double num = 0, den = 0;
    *bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double w = rows_round_to(dt, want[i]), g = got[i];
        if (!isfinite(w) || !isfinite(g)) {
            *bad += isnan(w) ? !isnan(g) : g != w;
            continue;
        }
        num += (g - w) * (g - w);
        den += mag && mag[i] > fabs(w) ? mag[i] * mag[i] : w * w;
    }
    return den > 0 ? num / den : num;
}

static inline void rows_ref_softmax_bw(const double* y, const double* g, int64_t R, int log,
                                       double* o) {
    double s = 0;
    for (int64_t j = 0; j < R; j++) s += log ? g[j] : g[j] * y[j];
    for (int64_t j = 0; j < R; j++) o[j] = log ? g[j] - exp(y[j]) * s : y[j] * (g[j] - s);
}

// layer_norm_backward (rms: rms_norm_backward) with weight w: grad_x into o, the size of its
// terms (rstd |g w|: the error's scale where they cancel, rows of 1 or 2) into mag, and the
// row's grad_weight / grad_bias terms added to gw / gb (NULL: not wanted).
static inline void rows_ref_norm_bw(const double* x, const double* g, const double* w, int64_t R,
                                    int rms, double eps, double* o, double* mag, double* gw,
                                    double* gb) {
    double m = 0, v = 0, a = 0, b = 0;
    for (int64_t j = 0; j < R && !rms; j++) m += x[j] / (double)R;
    for (int64_t j = 0; j < R; j++) v += (x[j] - m) * (x[j] - m) / (double)R;
    double rstd = 1 / sqrt(v + eps);
    for (int64_t j = 0; j < R; j++) {
        a += g[j] * w[j] / (double)R;
        b += g[j] * w[j] * (x[j] - m) * rstd / (double)R;
    }
    for (int64_t j = 0; j < R; j++) {
        double xh = (x[j] - m) * rstd;
        o[j] = rstd * (g[j] * w[j] - (rms ? 0 : a) - xh * b);
        mag[j] = rstd * fabs(g[j] * w[j]);
        if (gw) gw[j] += g[j] * xh, gb[j] += g[j];
    }
}

#endif
