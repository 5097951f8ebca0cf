// softmax / log_softmax f32 kernels: the portable set (W = 8, for CPUs below AVX2) and the
// choice of the CPU level's set (see softmax_f32.h for what they compute).
#include "ops/rows/softmax_f32.h"
#include <math.h>
#include <string.h>
#include "base/cpu_targets.h"
#include "ops/rows/softmax.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define SM_W 8
#define SM_ACROSS 8

float hg_softmax_expf(float x) { return hg_sm_expf(x); }

#if defined(HG_HAVE_CPU_TARGETS)
#define SM_HAVE_LEVELS 1
#endif

static float max_f32(const float* x, int64_t n) {
    float r = -INFINITY;
    int nan = 0;
    int64_t i = 0;
#if defined(__SSE2__)
    // The compiler keeps the NaN test of the portable loop scalar: two max lanes and an
    // unordered-compare mask, 8 floats per step.
    __m128 m0 = _mm_set1_ps(-INFINITY), m1 = m0, u = _mm_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
        m0 = _mm_max_ps(m0, a);
        m1 = _mm_max_ps(m1, b);
        u = _mm_or_ps(u, _mm_cmpunord_ps(a, b));
    }
    float lanes[4];
    _mm_storeu_ps(lanes, _mm_max_ps(m0, m1));
    for (int j = 0; j < 4; j++) r = lanes[j] > r ? lanes[j] : r;
    nan = _mm_movemask_ps(u) != 0;
#endif
    for (; i < n; i++) {
        r = x[i] > r ? x[i] : r;
        nan |= x[i] != x[i];
    }
    return nan ? NAN : r;
}

// Three passes over the (cache-resident) slice: max; exp with the sum (through a local block:
// t and y may be the same array, which keeps the compiler from vectorizing a direct loop) and,
// for softmax, the store of exp; then the scale (or, for log_softmax, d - log(sum)).
static void slice_portable(const float* t, float* y, int64_t n, int take_log) {
    float m = max_f32(t, n);
    double s = 0.0;
    for (int64_t i = 0; i < n; i += 256) {
        float e[256], part[SM_W] = {0};
        int64_t b = n - i < 256 ? n - i : 256, r = b / SM_W * SM_W;
        for (int64_t k = 0; k < r; k += SM_W)
            for (int j = 0; j < SM_W; j++) {
                e[k + j] = hg_sm_expf(t[i + k + j] - m);
                part[j] += e[k + j];
            }
        for (int64_t k = r; k < b; k++) {   // the block's last b % W into the first lanes
            e[k] = hg_sm_expf(t[i + k] - m);
            part[k - r] += e[k];
        }
        s += hg_sm_fold_lanes(part, SM_W);
        if (!take_log) memcpy(y + i, e, (size_t)b * sizeof e[0]);
    }
    if (take_log) {
        float ls = hg_vm_log_f32((float)s);
        for (int64_t i = 0; i < n; i++) y[i] = (t[i] - m) - ls;
        return;
    }
    float inv = (float)(1.0 / s);
    for (int64_t i = 0; i < n; i++) y[i] *= inv;
}

// Rows of at most 16, 8 rows at a time across the rows: lane q of each step is row q, so the
// loops over the lanes vectorize (one row at a time paid the whole per-row overhead for one to
// sixteen elements). The last rows % 8 rows run as a block padded with zeros, so they give the
// same bits as in a block.
static void rows8x_block(const float* x, float* y, int64_t L, int take_log) {
    float v[16][SM_ACROSS], e[16][SM_ACROSS], m[SM_ACROSS], s[SM_ACROSS];
    for (int64_t l = 0; l < L; l++)
        for (int q = 0; q < SM_ACROSS; q++) v[l][q] = x[q * L + l];
    for (int q = 0; q < SM_ACROSS; q++) m[q] = -INFINITY;
    for (int64_t l = 0; l < L; l++)
        for (int q = 0; q < SM_ACROSS; q++) m[q] = v[l][q] > m[q] ? v[l][q] : m[q];
    for (int64_t l = 0; l < L; l++)
        for (int q = 0; q < SM_ACROSS; q++) {
            v[l][q] -= m[q];   // d
            e[l][q] = hg_sm_expf(v[l][q]);
        }
    // The sum tree; terms past L are +0 (exps are >= +0, so x + 0 is x) and are left out.
    float p8[8][SM_ACROSS], t[4][SM_ACROSS];
    for (int j = 0; j < 8; j++)
        for (int q = 0; q < SM_ACROSS; q++)
            p8[j][q] = j + 8 < L ? e[j][q] + e[j + 8][q] : j < L ? e[j][q] : 0.0f;
    for (int j = 0; j < 4; j++)
        for (int q = 0; q < SM_ACROSS; q++) t[j][q] = j + 4 < L ? p8[j][q] + p8[j + 4][q] : p8[j][q];
    for (int q = 0; q < SM_ACROSS; q++) s[q] = (t[0][q] + t[2][q]) + (t[1][q] + t[3][q]);
    if (take_log) {
        for (int q = 0; q < SM_ACROSS; q++) s[q] = hg_vm_log_f32(s[q]);
        for (int64_t l = 0; l < L; l++)
            for (int q = 0; q < SM_ACROSS; q++) v[l][q] -= s[q];
    } else {
        for (int q = 0; q < SM_ACROSS; q++) s[q] = 1.0f / s[q];
        for (int64_t l = 0; l < L; l++)
            for (int q = 0; q < SM_ACROSS; q++) v[l][q] = e[l][q] * s[q];
    }
    for (int64_t l = 0; l < L; l++)
        for (int q = 0; q < SM_ACROSS; q++) y[q * L + l] = v[l][q];
}

static void rows8x_portable(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
    int64_t r = 0;
    for (; r + SM_ACROSS <= rows; r += SM_ACROSS, x += SM_ACROSS * L, y += SM_ACROSS * L)
        rows8x_block(x, y, L, take_log);
    if (r == rows) return;
    float px[SM_ACROSS * 16] = {0}, py[SM_ACROSS * 16];
    memcpy(px, x, (size_t)((rows - r) * L) * sizeof(float));
    rows8x_block(px, py, L, take_log);
    memcpy(y, py, (size_t)((rows - r) * L) * sizeof(float));
}

typedef void (*slice_fn)(const float*, float*, int64_t, int);

static slice_fn slice_of_level(void) {
#if defined(SM_HAVE_LEVELS)
    hg_cpu_level lv = hg_cpu_level_get();
    if (lv >= HG_CPU_AVX512) return hg_sm_slice_f32_avx512;
    if (lv >= HG_CPU_AVX2) return hg_sm_slice_f32_avx2;
#endif
    return slice_portable;
}

void hg_sm_slice_f32(const float* t, float* y, int64_t n, int take_log) {
    slice_of_level()(t, y, n, take_log);
}

void hg_sm_exp_shift_f32(float* x, int64_t n, float c) {
#if defined(SM_HAVE_LEVELS)
    hg_cpu_level lv = hg_cpu_level_get();
    if (lv >= HG_CPU_AVX512) { hg_sm_exp_shift_f32_avx512(x, n, c); return; }
    if (lv >= HG_CPU_AVX2) { hg_sm_exp_shift_f32_avx2(x, n, c); return; }
#endif
    for (int64_t i = 0; i < n; i++) x[i] = hg_sm_expf(x[i] - c);
}

void hg_sm_rows_f32(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
#if defined(SM_HAVE_LEVELS)
    if (L <= 64) {
        hg_cpu_level lv = hg_cpu_level_get();
        if (lv >= HG_CPU_AVX512) { hg_sm_rows_f32_avx512(x, y, rows, L, take_log); return; }
        if (lv >= HG_CPU_AVX2) { hg_sm_rows_f32_avx2(x, y, rows, L, take_log); return; }
    }
#endif
    if (L <= 16) {
        rows8x_portable(x, y, rows, L, take_log);
        return;
    }
    slice_fn f = slice_of_level();
    for (int64_t r = 0; r < rows; r++, x += L, y += L) f(x, y, L, take_log);
}
