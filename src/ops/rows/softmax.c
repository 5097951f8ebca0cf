// softmax / log_softmax along one axis (see softmax.h). Slices whose axis is the innermost dim
// are processed one at a time (contiguous f32 in and out directly, with no copy); otherwise
// tiles of up to 16 neighbouring slices are gathered so that every cache line read is used.
#include "ops/rows/softmax.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/cpu_level.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/vmath.h"
#include "base/vmath_ymm.h"
#include "base/vmath_zmm.h"
#include "ops/common/dev_ops.h"
#include "ops/reduce/reduce.h"
#include "ops/common/op_dispatch.h"

#define SM_TILE 16

// The library's one f32 exp (base/vmath.h, <= 2 ULP), with results below 2^-126
// (x < -87.33654) flushed to 0: softmax values that small are noise next to a sum >= 1, and the
// flush keeps the vector loop free of the subnormal path. Branch-free, so the loops vectorize.
// Inputs below the flush bound enter the exp at the bound: their 2^n scaling would underflow,
// and an underflowing multiply takes a microcode assist on AMD cores (the -inf padding lanes
// of a row of 17 doubled its time).
static inline float expf_fast(float x) {
    float y = hg_vm_exp_f32(x < -87.33654f ? -87.33654f : x);
    return x < -87.33654f ? 0.0f : y;
}

float hg_softmax_expf(float x) { return expf_fast(x); }

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

static inline __attribute__((always_inline)) float max_f32(const float* x, int64_t n) {
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

// W lane sums (W = 8 or 16) in f64, as a tree: a serial chain of f64 adds was a fifth of a
// row of 16.
static inline __attribute__((always_inline)) double fold_lanes(const float* p, int W) {
    double d[16];
    for (int j = 0; j < W; j++) d[j] = (double)p[j];
    for (int w = W / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) d[j] += d[j + w];
    return d[0];
}

// log_softmax's last step for n <= 16 rows of L already holding d = x - max: y -= the f32 log of
// each row's sum (slice_f32's), the logs vectorized over the rows.
static inline __attribute__((always_inline)) void log_rows(float* y, int64_t L, const double* s,
                                                          int n) {
    float ls[16];
    for (int i = 0; i < 16; i++) ls[i] = i < n ? (float)s[i] : 1.0f;
    for (int i = 0; i < 16; i++) ls[i] = hg_vm_log_f32(ls[i]);
    for (int i = 0; i < n; i++)
        for (int64_t l = 0; l < L; l++) y[i * L + l] -= ls[i];
}

// In place on a contiguous slice (t may alias y). Three passes over the (cache-resident) slice:
// max; exp with the sum (W f32 lanes over blocks of up to 256, block sums added in f64) and, for
// softmax, the store of exp; then the scale (or, for log_softmax, x - max - log(sum)). W is the
// vector width of the build (8: SSE/AVX2, 16: AVX-512), a constant after inlining.
static inline __attribute__((always_inline)) void slice_f32_body(const float* t, float* y,
                                                                 int64_t n, int take_log, int W) {
    float m = max_f32(t, n);
    double s = 0.0;
    int64_t i = 0;
    for (; i + 256 <= n; i += 256) {
        float e[256], part[16] = {0};
        for (int k = 0; k < 256; k += W)
            for (int j = 0; j < W; j++) {
                e[k + j] = expf_fast(t[i + k + j] - m);
                part[j] += e[k + j];
            }
        s += fold_lanes(part, W);
        // Through the local block: t and y may be the same array, which keeps the compiler
        // from vectorizing a direct loop.
        if (!take_log) memcpy(y + i, e, sizeof e);
    }
    // The rest of the slice (all of a row shorter than 256) in the same W-lane steps, so the
    // exp stays vectorized for short rows; the last n % W elements join the first lanes (as a
    // vector kernel adds a last vector padded with zeros: no serial f64 adds per element).
    if (i < n) {
        float e[256], part[16] = {0};
        int64_t r = (n - i) / W * W;
        for (int64_t k = 0; k < r; k += W)
            for (int j = 0; j < W; j++) {
                e[k + j] = expf_fast(t[i + k + j] - m);
                part[j] += e[k + j];
            }
        for (int64_t k = r; k < n - i; k++) {
            e[k] = expf_fast(t[i + k] - m);
            part[k - r] += e[k];
        }
        s += fold_lanes(part, W);
        if (!take_log) memcpy(y + i, e, (size_t)(n - i) * sizeof e[0]);
    }
    if (take_log) {
        // The f32 log of the sum (vmath.h's, <= 2 ULP), as the short-row kernels take it for
        // many rows at once (libm's f64 log per row was 14% of a log_softmax row of 17).
        float ls = hg_vm_log_f32((float)s);
        for (i = 0; i < n; i++) y[i] = (t[i] - m) - ls;
        return;
    }
    float inv = (float)(1.0 / s);
    for (i = 0; i < n; i++) y[i] *= inv;
}

static void slice_f32_generic(const float* t, float* y, int64_t n, int take_log) {
    slice_f32_body(t, y, n, take_log, 8);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// The same code compiled for AVX2+FMA (8-wide exp) and AVX-512 (16-wide), picked at run time.
__attribute__((target("avx2,fma"))) static void slice_f32_avx2(const float* t, float* y,
                                                                int64_t n, int take_log) {
    slice_f32_body(t, y, n, take_log, 8);
}
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,prefer-vector-width=512")))
static void slice_f32_avx512(const float* t, float* y, int64_t n, int take_log) {
    slice_f32_body(t, y, n, take_log, 16);
}

// Rows of at most 16 (L), one after another (row r at x + r * L): each row is one masked
// vector - max and sum by in-register reductions, no per-row passes over lanes (a row of 16 by
// slice_f32 cost ~100 cycles, half of them folding lanes). The sum is f32 (at most 16 terms),
// and so is log_softmax's log of it (vmath.h's, <= 2 ULP, which vectorizes over the rows of
// rows16x_avx512: libm's logf per row was most of a log_softmax row of one);
// padding lanes are -inf, whose exp is 0. NaN and inf give what slice_f32 gives (a NaN row).
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,prefer-vector-width=512")))
static void rows16_avx512(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
    __mmask16 k = (__mmask16)((1u << L) - 1u);
    __m512 ninf = _mm512_set1_ps(-INFINITY);
    for (int64_t r = 0; r < rows; r++, x += L, y += L) {
        __m512 v = _mm512_mask_loadu_ps(ninf, k, x);
        float m = _mm512_reduce_max_ps(v);
        float d[16], e[16];
        _mm512_storeu_ps(d, _mm512_sub_ps(v, _mm512_set1_ps(m)));
        for (int j = 0; j < 16; j++) e[j] = expf_fast(d[j]);
        __m512 ev = _mm512_loadu_ps(e);
        float sum = _mm512_reduce_add_ps(ev);
        if (take_log) {
            float ls = hg_vm_log_f32(sum);
            _mm512_mask_storeu_ps(y, k, _mm512_sub_ps(_mm512_loadu_ps(d), _mm512_set1_ps(ls)));
        } else {
            _mm512_mask_storeu_ps(y, k, _mm512_mul_ps(ev, _mm512_set1_ps(1.0f / sum)));
        }
    }
}
#define HG_SM_HAVE_ROWS16 1

#define SM_ZMM \
    __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,prefer-vector-width=512")))
// expf_fast on 16 lanes (bit for bit): vmath_zmm.h's exp, results below 2^-126 flushed to 0.
SM_ZMM static inline __m512 expf_fast_zmm(__m512 d) {
    __mmask16 tiny = _mm512_cmp_ps_mask(d, _mm512_set1_ps(-87.33654f), _CMP_LT_OQ);
    return _mm512_mask_mov_ps(hg_vm_exp_zmm(d), tiny, _mm512_setzero_ps());
}

// Rows of fewer than 16 (L), 16 rows at a time across the rows: lane r of a register holds
// row r's element l (gathered), so a block of 16 rows takes L exps instead of 16
// (rows16_avx512 works a whole vector per row: ~22 ns per row for L < 16 on Zen 4; softmax of
// (16384, 1) ran at 0.06 of numpy's speed). The max, exp, sum (in rows16_avx512's
// _mm512_reduce_add_ps order: lanes j + 8, then j + 4, then (0 + 2) + (1 + 3), over zeros past
// L), scale and log are the row kernel's, so the results are the same bits. The last
// rows % 16 rows take rows16_avx512.
SM_ZMM static void rows16x_avx512(const float* x, float* y, int64_t rows, int64_t L,
                                  int take_log) {
    const __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32((int)L));
    const __m512 zero = _mm512_setzero_ps();
    if (L == 16) {   // whole aligned vectors per row: 13 ns per row here, across the rows 21
        rows16_avx512(x, y, rows, L, take_log);
        return;
    }
    int64_t r = 0;
    for (; r + 16 <= rows; r += 16, x += 16 * L, y += 16 * L) {
        __m512 v[16], e[16];
        __m512 m = _mm512_set1_ps(-INFINITY);
        for (int l = 0; l < L; l++) {
            v[l] = L == 1 ? _mm512_loadu_ps(x)   // rows of one: 16 neighbours
                          : _mm512_i32gather_ps(_mm512_add_epi32(idx, _mm512_set1_epi32(l)), x, 4);
            m = _mm512_max_ps(m, v[l]);
        }
        for (int l = 0; l < 16; l++) {
            if (l >= L) { e[l] = zero; continue; }
            v[l] = _mm512_sub_ps(v[l], m);   // d
            e[l] = expf_fast_zmm(v[l]);
        }
        // Partial sums k >= L are zeros (exps are >= +0, so x + 0 is x): those adds are left out.
        __m512 t3[8], t6[4];
        for (int j = 0; j < 8; j++) t3[j] = j + 8 < L ? _mm512_add_ps(e[j + 8], e[j]) : e[j];
        for (int j = 0; j < 4; j++) t6[j] = j + 4 < L ? _mm512_add_ps(t3[j + 4], t3[j]) : t3[j];
        __m512 a = L > 2 ? _mm512_add_ps(t6[0], t6[2]) : t6[0];
        __m512 b = L > 3 ? _mm512_add_ps(t6[1], t6[3]) : t6[1];
        __m512 s = L > 1 ? _mm512_add_ps(a, b) : a;
        if (take_log) {
            float sl[16];
            _mm512_storeu_ps(sl, s);
            for (int j = 0; j < 16; j++) sl[j] = hg_vm_log_f32(sl[j]);
            __m512 ls = _mm512_loadu_ps(sl);
            for (int l = 0; l < L; l++) e[l] = _mm512_sub_ps(v[l], ls);
        } else {
            __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f), s);
            for (int l = 0; l < L; l++) e[l] = _mm512_mul_ps(e[l], inv);
        }
        if (L == 1) _mm512_storeu_ps(y, e[0]);
        else
            for (int l = 0; l < L; l++)
                _mm512_i32scatter_ps(y, _mm512_add_epi32(idx, _mm512_set1_epi32(l)), e[l], 4);
    }
    if (r < rows) rows16_avx512(x, y, rows - r, L, take_log);
}

// Rows of 17..64 (L), one after another: slice_f32's arithmetic exactly (the same exp, here
// base/vmath_zmm.h's, bit for bit vmath.h's; the 16 lane sums folded in f64, the tail added one
// by one, the same scale), each row in at most four zmm registers from load to store (a row of
// 64 by slice_f32 cost 54 ns on the Intel VM, torch 47; through memory arrays between the
// passes, as first written here, 59 ns on Zen 4, torch 50). Rows of 32 and 64 get the loops
// unrolled for their length.
SM_ZMM static inline __attribute__((always_inline)) void rows64_body(const float* x, float* y,
                                                                     int64_t rows, int64_t L,
                                                                     int take_log) {
    const int nfull = (int)(L / 16), nv = (int)((L + 15) / 16);
    const int64_t tail = L - 16 * (int64_t)nfull;
    const __mmask16 kt = (__mmask16)((1u << tail) - 1u);
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    double sums[16];
    int ns = 0;
    for (int64_t r = 0; r < rows; r++, x += L, y += L) {
        __m512 v[4], d[4], e[4];
        __m512 mx = ninf;
        __mmask16 un = 0;
        for (int q = 0; q < nv; q++) {
            v[q] = q < nfull ? _mm512_loadu_ps(x + 16 * q)
                             : _mm512_mask_loadu_ps(ninf, kt, x + 16 * q);
            mx = _mm512_max_ps(mx, v[q]);
            un |= _mm512_cmp_ps_mask(v[q], v[q], _CMP_UNORD_Q);
        }
        float m = un ? NAN : _mm512_reduce_max_ps(mx);   // max_f32: NaN anywhere gives NaN
        __m512 mv = _mm512_set1_ps(m), part = _mm512_setzero_ps();
        for (int q = 0; q < nv; q++) {
            d[q] = _mm512_sub_ps(v[q], mv);
            e[q] = expf_fast_zmm(d[q]);
            if (q < nfull) part = _mm512_add_ps(part, e[q]);
        }
        if (tail) part = _mm512_add_ps(part, e[nfull]);   // its padding lanes are +0
        __m512d h8 = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(part)),
                                   _mm512_cvtps_pd(_mm512_extractf32x8_ps(part, 1)));
        __m256d h4 = _mm256_add_pd(_mm512_castpd512_pd256(h8), _mm512_extractf64x4_pd(h8, 1));
        __m128d h2 = _mm_add_pd(_mm256_castpd256_pd128(h4), _mm256_extractf128_pd(h4, 1));
        double s = _mm_cvtsd_f64(_mm_add_sd(h2, _mm_unpackhi_pd(h2, h2)));   // fold_lanes' tree
        if (take_log) {   // d now, the logs of 16 rows' sums at once
            for (int q = 0; q < nv; q++) e[q] = d[q];
            sums[ns++] = s;
        } else {
            __m512 f = _mm512_set1_ps((float)(1.0 / s));
            for (int q = 0; q < nv; q++) e[q] = _mm512_mul_ps(e[q], f);
        }
        for (int q = 0; q < nv; q++) {
            if (q < nfull) _mm512_storeu_ps(y + 16 * q, e[q]);
            else _mm512_mask_storeu_ps(y + 16 * q, kt, e[q]);
        }
        if (ns == 16 || (ns && r + 1 == rows)) {
            log_rows(y - (ns - 1) * L, L, sums, ns);
            ns = 0;
        }
    }
}

SM_ZMM static void rows64_avx512(const float* x, float* y, int64_t rows, int64_t L,
                                 int take_log) {
    if (L == 64) rows64_body(x, y, rows, 64, take_log);
    else if (L == 32) rows64_body(x, y, rows, 32, take_log);
    else rows64_body(x, y, rows, L, take_log);
}

static void slice_f32(const float* t, float* y, int64_t n, int take_log) {
    hg_cpu_level lv = hg_cpu_level_get();
    if (lv >= HG_CPU_AVX512) slice_f32_avx512(t, y, n, take_log);
    else if (lv >= HG_CPU_AVX2) slice_f32_avx2(t, y, n, take_log);
    else slice_f32_generic(t, y, n, take_log);
}
#else
static void slice_f32(const float* t, float* y, int64_t n, int take_log) {
    slice_f32_generic(t, y, n, take_log);
}
#endif

// Contiguous f32 rows of at most 16 (L) below AVX-512 (the AVX2 and baseline builds), 8 rows
// at a time across the rows: lane q of each 8-wide step is row q, so the loops over the lanes
// vectorize (AVX2 kernels on Zen 4: softmax of (16384, 1) one row at a time 507 us, numpy 18.6;
// a row of 16 through slice_f32 paid two lane folds and three passes). The operations are
// rows16_avx512's: the f32 max, expf_fast, the f32 sum in the order of _mm512_reduce_add_ps over
// 16 lanes padded with +0 (lanes j + 8, then j + 4, then (0 + 2) + (1 + 3)), log_softmax's
// f32 log of the sum (vmath.h's), softmax's product with 1 / sum; so results are the same bits
// as on AVX-512. The last rows % 8 rows run as a block padded with zeros, so they match too.
#define SM_ACROSS 8
static inline __attribute__((always_inline)) void rows8x_block(const float* x, float* y,
                                                               int64_t L, int take_log) {
    float v[16][SM_ACROSS], e[16][SM_ACROSS], m[SM_ACROSS], s[SM_ACROSS];
    for (int64_t l = 0; l < L; l++)
        for (int q = 0; q < SM_ACROSS; q++) v[l][q] = x[q * L + l];
    for (int q = 0; q < SM_ACROSS; q++) m[q] = -INFINITY;
    for (int64_t l = 0; l < L; l++)
        for (int q = 0; q < SM_ACROSS; q++) m[q] = v[l][q] > m[q] ? v[l][q] : m[q];
    for (int64_t l = 0; l < L; l++)
        for (int q = 0; q < SM_ACROSS; q++) {
            v[l][q] -= m[q];   // d
            e[l][q] = expf_fast(v[l][q]);
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

static inline __attribute__((always_inline)) void rows8x_body(const float* x, float* y,
                                                              int64_t rows, int64_t L,
                                                              int take_log) {
    int64_t r = 0;
    for (; r + SM_ACROSS <= rows; r += SM_ACROSS, x += SM_ACROSS * L, y += SM_ACROSS * L)
        rows8x_block(x, y, L, take_log);
    if (r == rows) return;
    float px[SM_ACROSS * 16] = {0}, py[SM_ACROSS * 16];
    memcpy(px, x, (size_t)((rows - r) * L) * sizeof(float));
    rows8x_block(px, py, L, take_log);
    memcpy(y, py, (size_t)((rows - r) * L) * sizeof(float));
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SM_YMM __attribute__((target("avx2,fma")))
// expf_fast on 8 lanes (bit for bit): vmath_ymm.h's exp, results below 2^-126 flushed to 0.
SM_YMM static inline __m256 expf_fast_ymm(__m256 d) {
    const __m256 lo = _mm256_set1_ps(-87.33654f);
    __m256 tiny = _mm256_cmp_ps(d, lo, _CMP_LT_OQ);
    return _mm256_andnot_ps(tiny, hg_vm_exp_ymm(_mm256_max_ps(lo, d)));   // NaN stays d
}

// rows8x_block with AVX2 intrinsics: the rows' elements gathered into lanes (a row of one is a
// plain load), the results stored through a local block (AVX2 has no scatter). GCC did not
// vectorize rows8x_block's lane loops well here (scalar max, vector loads of scalar stores).
SM_YMM static inline __attribute__((always_inline)) void rows8x_block_avx2(const float* x,
                                                                          float* y, int64_t L,
                                                                          int take_log,
                                                                          __m256i idx) {
    __m256 v[16], e[16];
    __m256 m = _mm256_set1_ps(-INFINITY);
    for (int l = 0; l < L; l++) {
        v[l] = L == 1 ? _mm256_loadu_ps(x)
                      : _mm256_i32gather_ps(x, _mm256_add_epi32(idx, _mm256_set1_epi32(l)), 4);
        m = _mm256_max_ps(v[l], m);   // v > m ? v : m, as rows8x_block
    }
    for (int l = 0; l < L; l++) {
        v[l] = _mm256_sub_ps(v[l], m);
        e[l] = expf_fast_ymm(v[l]);
    }
    __m256 p8[8], t[4];
    for (int j = 0; j < 8; j++)
        p8[j] = j + 8 < L ? _mm256_add_ps(e[j], e[j + 8]) : j < L ? e[j] : _mm256_setzero_ps();
    for (int j = 0; j < 4; j++) t[j] = j + 4 < L ? _mm256_add_ps(p8[j], p8[j + 4]) : p8[j];
    __m256 s = _mm256_add_ps(_mm256_add_ps(t[0], t[2]), _mm256_add_ps(t[1], t[3]));
    if (take_log) {
        s = hg_vm_log_ymm(s);
        for (int l = 0; l < L; l++) e[l] = _mm256_sub_ps(v[l], s);
    } else {
        s = _mm256_div_ps(_mm256_set1_ps(1.0f), s);
        for (int l = 0; l < L; l++) e[l] = _mm256_mul_ps(e[l], s);
    }
    if (L == 1) {
        _mm256_storeu_ps(y, e[0]);
        return;
    }
    float o[16][SM_ACROSS];
    for (int l = 0; l < L; l++) _mm256_storeu_ps(o[l], e[l]);
    for (int q = 0; q < SM_ACROSS; q++)
        for (int l = 0; l < L; l++) y[q * L + l] = o[l][q];
}

SM_YMM static void rows8x_avx2(const float* x, float* y, int64_t rows, int64_t L,
                               int take_log) {
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32((int)L));
    int64_t r = 0;
    for (; r + SM_ACROSS <= rows; r += SM_ACROSS, x += SM_ACROSS * L, y += SM_ACROSS * L)
        rows8x_block_avx2(x, y, L, take_log, idx);
    if (r == rows) return;
    float px[SM_ACROSS * 16] = {0}, py[SM_ACROSS * 16];
    memcpy(px, x, (size_t)((rows - r) * L) * sizeof(float));
    rows8x_block_avx2(px, py, L, take_log, idx);
    memcpy(y, py, (size_t)((rows - r) * L) * sizeof(float));
}

// Rows of 17..64 (L) with AVX2, one after another: slice_f32_avx2's arithmetic exactly (its
// 8 lane sums folded in f64, the tail added one by one, the same scale and log), each row in
// at most eight ymm registers from load to store, as rows64_avx512.
SM_YMM static inline __attribute__((always_inline)) void rows64_avx2_body(const float* x,
                                                                         float* y, int64_t rows,
                                                                         int64_t L,
                                                                         int take_log) {
    const int nfull = (int)(L / 8), nv = (int)((L + 7) / 8);
    const int64_t tail = L - 8 * (int64_t)nfull;
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    // The tail: the row's last 8 elements loaded (L >= 8), lanes moved down by 8 - tail, the
    // rest -inf; on the way out lanes of the last full vector and the tail moved up into the
    // row's last 8 (vmaskmovps, or a local block in between, cost 3x here on rows of 17).
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i down = _mm256_add_epi32(lane, _mm256_set1_epi32((int)(8 - tail)));
    const __m256 intail = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)tail), lane));
    const __m256i up = _mm256_and_si256(_mm256_add_epi32(lane, _mm256_set1_epi32((int)tail)),
                                        _mm256_set1_epi32(7));
    const __m256 fromtail = _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)(7 - tail))));
    double sums[16];
    int ns = 0;
    for (int64_t r = 0; r < rows; r++, x += L, y += L) {
        __m256 v[8], e[8];
        __m256 mx = ninf, un = _mm256_setzero_ps();
        for (int q = 0; q < nv; q++) {
            v[q] = q < nfull ? _mm256_loadu_ps(x + 8 * q)
                             : _mm256_blendv_ps(ninf,
                                                _mm256_permutevar8x32_ps(
                                                    _mm256_loadu_ps(x + L - 8), down),
                                                intail);
            mx = _mm256_max_ps(mx, v[q]);
            un = _mm256_or_ps(un, _mm256_cmp_ps(v[q], v[q], _CMP_UNORD_Q));
        }
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        float m = _mm256_movemask_ps(un) ? NAN : _mm_cvtss_f32(h);   // max_f32's NaN rule
        __m256 mv = _mm256_set1_ps(m), part = _mm256_setzero_ps();
        for (int q = 0; q < nv; q++) {
            v[q] = _mm256_sub_ps(v[q], mv);   // d
            e[q] = expf_fast_ymm(v[q]);
            if (q < nfull) part = _mm256_add_ps(part, e[q]);
        }
        if (tail) part = _mm256_add_ps(part, e[nfull]);   // its padding lanes are +0
        __m256d h4 = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(part)),
                                   _mm256_cvtps_pd(_mm256_extractf128_ps(part, 1)));
        __m128d h2 = _mm_add_pd(_mm256_castpd256_pd128(h4), _mm256_extractf128_pd(h4, 1));
        double s = _mm_cvtsd_f64(_mm_add_sd(h2, _mm_unpackhi_pd(h2, h2)));   // fold_lanes' tree
        if (take_log) {   // d now, the logs of 16 rows' sums at once
            for (int q = 0; q < nv; q++) e[q] = v[q];
            sums[ns++] = s;
        } else {
            __m256 f = _mm256_set1_ps((float)(1.0 / s));
            for (int q = 0; q < nv; q++) e[q] = _mm256_mul_ps(e[q], f);
        }
        for (int q = 0; q < nfull; q++) _mm256_storeu_ps(y + 8 * q, e[q]);
        if (tail)
            _mm256_storeu_ps(y + L - 8,
                             _mm256_blendv_ps(_mm256_permutevar8x32_ps(e[nfull - 1], up),
                                              _mm256_permutevar8x32_ps(e[nfull], up), fromtail));
        if (ns == 16 || (ns && r + 1 == rows)) {
            log_rows(y - (ns - 1) * L, L, sums, ns);
            ns = 0;
        }
    }
}

SM_YMM static void rows64_avx2(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
    if (L == 64) rows64_avx2_body(x, y, rows, 64, take_log);
    else if (L == 32) rows64_avx2_body(x, y, rows, 32, take_log);
    else rows64_avx2_body(x, y, rows, L, take_log);
}
#endif
static void rows8x_generic(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
    rows8x_body(x, y, rows, L, take_log);
}
static void rows8x_f32(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (hg_cpu_level_get() >= HG_CPU_AVX2) {
        rows8x_avx2(x, y, rows, L, take_log);
        return;
    }
#endif
    rows8x_generic(x, y, rows, L, take_log);
}

static void slice_f64(double* t, int64_t n, int take_log) {
    double m = -INFINITY;
    int nan = 0;
    for (int64_t i = 0; i < n; i++) { m = t[i] > m ? t[i] : m; nan |= t[i] != t[i]; }
    if (nan) m = NAN;
    if (take_log) {
        double s = 0.0;
        for (int64_t i = 0; i < n; i++) s += exp(t[i] - m);
        double ls = log(s);
        for (int64_t i = 0; i < n; i++) t[i] = (t[i] - m) - ls;
        return;
    }
    for (int64_t i = 0; i < n; i++) t[i] = exp(t[i] - m);
    double inv = 1.0 / hg_reduce_sum_f64(t, n);
    for (int64_t i = 0; i < n; i++) t[i] *= inv;
}

typedef struct sm_job {
    const unsigned char* x;
    unsigned char* o;
    hg_dtype xdt, odt;
    int64_t xsz, osz;
    int log;
    int64_t L, sx, so;                    // axis: length, x stride, out stride
    int64_t C, cx, co;                    // tile dim (0 size when none)
    int nouter;                           // other dims: sizes and strides
    int64_t os[HG_MAX_DIMS], ox[HG_MAX_DIMS], oo[HG_MAX_DIMS];
    int64_t B, tiles, items;
    int nw;
    unsigned char* scratch;
    size_t scratch_bytes;
} sm_job;

// Element i of (p, stride) in f32 / f64.
static float ld_f32(hg_dtype dt, const unsigned char* p) {
    switch (dt) {
    case HG_DTYPE_F16: return hg_f16_to_f32(*(const uint16_t*)p);
    case HG_DTYPE_BF16: return hg_bf16_to_f32(*(const uint16_t*)p);
    default: return *(const float*)p;
    }
}

// Rounds to the result dtype rdt (x's), then stores as odt.
static void st_val(hg_dtype rdt, hg_dtype odt, unsigned char* p, double v) {
    if (odt == HG_DTYPE_F32 && rdt == HG_DTYPE_F32) { *(float*)p = (float)v; return; }
    if (odt != rdt) {
        uint64_t tmp = 0;
        hg_op_store_f64(rdt, &tmp, v);
        v = hg_op_load_f64(rdt, &tmp);
    }
    hg_op_store_f64(odt, p, v);
}

static void sm_worker(void* ctx, int w) {
    sm_job* j = ctx;
    int64_t i0 = j->items * w / j->nw, i1 = j->items * (w + 1) / j->nw;
    unsigned char* buf = j->scratch + (size_t)w * j->scratch_bytes;
    int f64 = j->xdt == HG_DTYPE_F64;
#if defined(HG_SM_HAVE_ROWS16)
    // Short contiguous f32 rows laid end to end: the whole range in one call.
    if (j->xdt == HG_DTYPE_F32 && j->odt == HG_DTYPE_F32 && j->L >= 1 && j->L <= 16 &&
        j->sx == 1 && j->so == 1 && j->tiles == 1 && j->nouter == 1 && j->ox[0] == j->L &&
        j->oo[0] == j->L && hg_cpu_level_get() >= HG_CPU_AVX512) {
        rows16x_avx512((const float*)j->x + i0 * j->L, (float*)j->o + i0 * j->L, i1 - i0, j->L,
                       j->log);
        return;
    }
    if (j->xdt == HG_DTYPE_F32 && j->odt == HG_DTYPE_F32 && j->L > 16 && j->L <= 64 &&
        j->sx == 1 && j->so == 1 && j->tiles == 1 && j->nouter == 1 && j->ox[0] == j->L &&
        j->oo[0] == j->L && hg_cpu_level_get() >= HG_CPU_AVX512) {
        rows64_avx512((const float*)j->x + i0 * j->L, (float*)j->o + i0 * j->L, i1 - i0, j->L,
                      j->log);
        return;
    }
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (j->xdt == HG_DTYPE_F32 && j->odt == HG_DTYPE_F32 && j->L > 16 && j->L <= 64 &&
        j->sx == 1 && j->so == 1 && j->tiles == 1 && j->nouter == 1 && j->ox[0] == j->L &&
        j->oo[0] == j->L && hg_cpu_level_get() >= HG_CPU_AVX2) {
        rows64_avx2((const float*)j->x + i0 * j->L, (float*)j->o + i0 * j->L, i1 - i0, j->L,
                    j->log);
        return;
    }
#endif
    // Short contiguous f32 rows laid end to end below AVX-512: across the rows.
    if (j->xdt == HG_DTYPE_F32 && j->odt == HG_DTYPE_F32 && j->L >= 1 && j->L <= 16 &&
        j->sx == 1 && j->so == 1 && j->tiles == 1 && j->nouter == 1 && j->ox[0] == j->L &&
        j->oo[0] == j->L) {
        rows8x_f32((const float*)j->x + i0 * j->L, (float*)j->o + i0 * j->L, i1 - i0, j->L,
                       j->log);
        return;
    }
    for (int64_t it = i0; it < i1; it++) {
        // No divisions where there is one tile per slice or one outer dim (short rows: two
        // 64-bit divisions per row cost as much as the row's softmax).
        int64_t outer = j->tiles == 1 ? it : it / j->tiles;
        int64_t c0 = j->tiles == 1 ? 0 : it % j->tiles * j->B;
        int64_t bx = 0, bo = 0, t = outer;
        for (int d = j->nouter - 1; d >= 1; d--) {
            int64_t k = t % j->os[d];
            t /= j->os[d];
            bx += k * j->ox[d];
            bo += k * j->oo[d];
        }
        if (j->nouter > 0) {   // the outermost dim takes what is left
            bx += t * j->ox[0];
            bo += t * j->oo[0];
        }
        int64_t nb = j->C - c0 < j->B ? j->C - c0 : j->B;
        if (j->C == 0) nb = 1;
        bx += c0 * j->cx;
        bo += c0 * j->co;
        const unsigned char* xp = j->x + bx * j->xsz;
        unsigned char* op = j->o + bo * j->osz;
        if (!f64 && nb == 1 && j->xdt == HG_DTYPE_F32 && j->odt == HG_DTYPE_F32 && j->sx == 1 &&
            j->so == 1) {
            slice_f32((const float*)xp, (float*)op, j->L, j->log);
            continue;
        }
        for (int64_t b = 0; b < nb; b++) {   // gather the tile: slice b at buf[b * L]
            const unsigned char* sp = xp + b * j->cx * j->xsz;
            if (f64) {
                double* d = (double*)buf + b * j->L;
                for (int64_t l = 0; l < j->L; l++) d[l] = *(const double*)(sp + l * j->sx * 8);
            } else {
                float* d = (float*)buf + b * j->L;
                for (int64_t l = 0; l < j->L; l++) d[l] = ld_f32(j->xdt, sp + l * j->sx * j->xsz);
            }
        }
        for (int64_t b = 0; b < nb; b++) {
            unsigned char* dp = op + b * j->co * j->osz;
            if (f64) {
                double* d = (double*)buf + b * j->L;
                slice_f64(d, j->L, j->log);
                for (int64_t l = 0; l < j->L; l++)
                    st_val(j->xdt, j->odt, dp + l * j->so * j->osz, d[l]);
            } else {
                float* d = (float*)buf + b * j->L;
                slice_f32(d, d, j->L, j->log);
                for (int64_t l = 0; l < j->L; l++)
                    st_val(j->xdt, j->odt, dp + l * j->so * j->osz, d[l]);
            }
        }
    }
}

hg_status hg_softmax_into(hg_op_ctx* c, const hg_tensor* x, int32_t axis, int log,
                          const hg_tensor* out) {
    if (!hg_dtype_is_float((int)x->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: x has dtype %s; softmax needs a float dtype (f16, bf16, f32, f64)",
                        c->fn, hg_dtype_name(x->dtype));
    int32_t ax = 0;
    hg_status s;
    if (x->ndim == 0) {
        if (axis != 0 && axis != -1)
            return hg_error(HG_ERR_OUT_OF_RANGE, "%s: axis %d is out of range for a tensor of 0 "
                            "dims (valid: -1, 0)", c->fn, (int)axis);
    } else if ((s = hg_op_axis(c, x->ndim, axis, &ax))) {
        return s;
    }
    if (hg_op_route_of(c, HG_OPF_ROWS, x->dtype) == HG_ROUTE_DEVICE)
        return hg_dev_rows(c, log ? HG_DEV_LOG_SOFTMAX : HG_DEV_SOFTMAX, x, ax, NULL, NULL, 0.0, out);
    hg_host_view xv, ov;
    if ((s = hg_op_host_view(c, x, &xv)) || (s = hg_op_host_view(c, out, &ov))) return s;
    if (xv.numel == 0) return HG_OK;
    sm_job j;
    memset(&j, 0, sizeof j);
    j.x = xv.data; j.o = ov.data;
    j.xdt = xv.dtype; j.odt = ov.dtype;
    j.xsz = (int64_t)hg_dtype_size(xv.dtype); j.osz = (int64_t)hg_dtype_size(ov.dtype);
    j.log = log;
    j.L = 1;
    if (xv.ndim > 0) { j.L = xv.shape[ax]; j.sx = xv.strides[ax]; j.so = ov.strides[ax]; }
    // The other dim with the smallest x stride becomes the tile dim when the axis is not the
    // innermost one.
    int cdim = -1;
    for (int d = 0; d < xv.ndim; d++)
        if (d != ax && xv.shape[d] > 1 &&
            (cdim < 0 || llabs(xv.strides[d]) < llabs(xv.strides[cdim])))
            cdim = d;
    int tiled = cdim >= 0 && j.L > 1 && llabs(xv.strides[cdim]) < llabs(j.sx);
    j.B = 1;
    j.C = 0;
    if (tiled) {
        j.C = xv.shape[cdim]; j.cx = xv.strides[cdim]; j.co = ov.strides[cdim];
        j.B = SM_TILE;
    }
    for (int d = 0; d < xv.ndim; d++)
        if (d != ax && !(tiled && d == cdim)) {
            j.os[j.nouter] = xv.shape[d];
            j.ox[j.nouter] = xv.strides[d];
            j.oo[j.nouter] = ov.strides[d];
            j.nouter++;
        }
    int64_t outer = 1;
    for (int d = 0; d < j.nouter; d++) outer *= j.os[d];
    j.tiles = tiled ? (j.C + j.B - 1) / j.B : 1;
    j.items = outer * j.tiles;
    int nw = xv.numel < 32768 ? 1 : hg_op_num_threads(c);
    if (nw > j.items) nw = (int)j.items;
    j.nw = nw;
    j.scratch_bytes = (size_t)j.B * (size_t)j.L * 8 + 64;
    j.scratch = malloc(j.scratch_bytes * (size_t)nw);
    if (!j.scratch)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for %lld slices of %lld elements",
                        c->fn, (long long)nw * (long long)j.B, (long long)j.L);
    s = hg_op_parallel(c, nw, sm_worker, &j, &j.nw);
    free(j.scratch);
    return s;
}

static hg_status softmax_call(const char* fn, const hg_tensor* x, int32_t axis, int log,
                              hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    if (!x) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'x' is NULL", fn);
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'out' is NULL", fn);
    hg_status s = hg_op_input(&c, x, "x", NULL, NULL);
    if (s) return s;
    if (!hg_dtype_is_float((int)x->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: x has dtype %s; softmax needs a float dtype (f16, bf16, f32, f64)",
                        fn, hg_dtype_name(x->dtype));
    int32_t ax = 0;
    if (x->ndim == 0 ? (axis != 0 && axis != -1) : 0)
        return hg_error(HG_ERR_OUT_OF_RANGE, "%s: axis %d is out of range for a tensor of 0 dims "
                        "(valid: -1, 0)", fn, (int)axis);
    if (x->ndim > 0 && (s = hg_op_axis(&c, x->ndim, axis, &ax))) return s;
    if ((s = hg_op_output(&c, out, x->dtype, x->ndim, x->shape, 1))) return s;
    if ((s = hg_op_no_overlap(&c, out, x, "x"))) return hg_op_finish(&c, out, s);
    s = hg_softmax_into(&c, x, axis, log, out);
    return hg_op_finish(&c, out, s);
}

hg_status hg_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out) {
    return softmax_call("hg_softmax", x, axis, 0, out);
}

hg_status hg_log_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out) {
    return softmax_call("hg_log_softmax", x, axis, 1, out);
}
