// softmax / log_softmax f32 kernels for AVX2 + FMA (see softmax_f32.h for what they compute):
// 8 lanes, vmath_ymm.h's exp and log (vmath.h's bit for bit).
#include "ops/rows/softmax_f32.h"
#include "base/cpu_targets.h"
#if defined(HG_HAVE_CPU_TARGETS)
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "base/vmath_ymm.h"

#define SM_YMM HG_TARGET_AVX2

// hg_sm_expf on 8 lanes (bit for bit): inputs below the flush bound enter at the bound.
SM_YMM static inline __m256 expf_fast_ymm(__m256 d) {
    const __m256 lo = _mm256_set1_ps(-87.33654f);
    __m256 tiny = _mm256_cmp_ps(d, lo, _CMP_LT_OQ);
    return _mm256_andnot_ps(tiny, hg_vm_exp_ymm(_mm256_max_ps(lo, d)));   // NaN stays d
}

// hg_sm_fold_lanes(part, 8) in registers.
SM_YMM static inline double fold8(__m256 part) {
    __m256d h4 = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(part)),
                               _mm256_cvtps_pd(_mm256_extractf128_ps(part, 1)));
    __m128d h2 = _mm_add_pd(_mm256_castpd256_pd128(h4), _mm256_extractf128_pd(h4, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h2, _mm_unpackhi_pd(h2, h2)));
}

// The max of 8 lanes.
SM_YMM static inline float hmax8(__m256 v) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
}

// Rows of at most 16 (L), 8 rows at a time across the rows: lane q holds row q's element l
// (gathered; a row of one is a plain load), results stored through a local block (AVX2 has no
// scatter). The compiler did not vectorize the portable kernel's lane loops well here (a scalar
// max, vector loads of scalar stores; docs/performance.md).
SM_YMM static inline __attribute__((always_inline)) void rows8x_block(const float* x, float* y,
                                                                     int64_t L, int take_log,
                                                                     __m256i idx) {
    __m256 v[16], e[16];
    __m256 m = _mm256_set1_ps(-INFINITY);
    for (int l = 0; l < L; l++) {
        v[l] = L == 1 ? _mm256_loadu_ps(x)
                      : _mm256_i32gather_ps(x, _mm256_add_epi32(idx, _mm256_set1_epi32(l)), 4);
        m = _mm256_max_ps(v[l], m);   // v > m ? v : m
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
    float o[16][8];
    for (int l = 0; l < L; l++) _mm256_storeu_ps(o[l], e[l]);
    for (int q = 0; q < 8; q++)
        for (int l = 0; l < L; l++) y[q * L + l] = o[l][q];
}

SM_YMM static void rows8x(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32((int)L));
    int64_t r = 0;
    if (L == 1)   // a loop of its own: the generic one reloads its constants (register pressure)
        for (; r + 8 <= rows; r += 8, x += 8, y += 8) rows8x_block(x, y, 1, take_log, idx);
    else
        for (; r + 8 <= rows; r += 8, x += 8 * L, y += 8 * L) rows8x_block(x, y, L, take_log, idx);
    if (r == rows) return;
    float px[8 * 16] = {0}, py[8 * 16];   // the last rows padded with zeros: the same bits
    memcpy(px, x, (size_t)((rows - r) * L) * sizeof(float));
    rows8x_block(px, py, L, take_log, idx);
    memcpy(y, py, (size_t)((rows - r) * L) * sizeof(float));
}

// The last `tail` (1..7) elements of a row of L >= 8 without masked loads or stores: loaded
// as the row's last 8 with lanes moved down by 8 - tail (the rest -inf), stored as the row's
// last 8 from the lanes of the last full vector and the tail moved up (vmaskmovps, or a local
// block in between, cost more here).
typedef struct tail8 {
    __m256i down, up;
    __m256 intail, fromtail;
} tail8;

SM_YMM static inline tail8 tail8_of(int64_t tail) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    tail8 t;
    t.down = _mm256_add_epi32(lane, _mm256_set1_epi32((int)(8 - tail)));
    t.intail = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)tail), lane));
    t.up = _mm256_and_si256(_mm256_add_epi32(lane, _mm256_set1_epi32((int)tail)),
                            _mm256_set1_epi32(7));
    t.fromtail = _mm256_castsi256_ps(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)(7 - tail))));
    return t;
}

// The tail of the row ending at end (end - 8 .. end - 1 readable) in lanes 0..tail-1.
SM_YMM static inline __m256 tail8_load(const float* end, tail8 t) {
    return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY),
                            _mm256_permutevar8x32_ps(_mm256_loadu_ps(end - 8), t.down), t.intail);
}

// Stores tail lanes 0..tail-1 at end - tail, rewriting the lanes before them from last (the
// row's last full vector, already stored with the same values).
SM_YMM static inline void tail8_store(float* end, __m256 last, __m256 tailv, tail8 t) {
    _mm256_storeu_ps(end - 8, _mm256_blendv_ps(_mm256_permutevar8x32_ps(last, t.up),
                                               _mm256_permutevar8x32_ps(tailv, t.up),
                                               t.fromtail));
}

// Rows of 8..16 (L), one after another, each in two registers: the first 8 elements and the
// last 8 moved down by 16 - L (lanes past the row -inf): rows8x's sum tree is then one add of
// the halves, one of their 128-bit halves and (0 + 2) + (1 + 3), the same bits; log_softmax's
// logs 16 rows at a time. Rows of 8..16 do not pay rows8x's gathers and scalar stores.
SM_YMM static inline __attribute__((always_inline)) void rows16_body(const float* x, float* y,
                                                                    int64_t rows, int64_t L,
                                                                    int take_log) {
    const int64_t tail = L - 8;
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    const tail8 tp = tail8_of(tail);
    double sums[16];
    int ns = 0;
    // Two rows per step, phase by phase: one row is a chain of dependent steps (max, exp, sum,
    // divide) too long for the core to overlap with the next row on its own.
    for (int64_t r = 0; r < rows; r += 2, x += 2 * L, y += 2 * L) {
        const int k = r + 1 < rows ? 2 : 1;
        __m256 lo[2], hi[2], elo[2], ehi[2];
        float sum[2];
        for (int i = 0; i < k; i++) {
            lo[i] = _mm256_loadu_ps(x + i * L);
            hi[i] = tail ? tail8_load(x + i * L + L, tp) : ninf;
        }
        for (int i = 0; i < k; i++) {
            __m256 mv = _mm256_set1_ps(hmax8(_mm256_max_ps(lo[i], hi[i])));
            lo[i] = _mm256_sub_ps(lo[i], mv);
            hi[i] = _mm256_sub_ps(hi[i], mv);
            elo[i] = expf_fast_ymm(lo[i]);
            ehi[i] = tail ? expf_fast_ymm(hi[i]) : _mm256_setzero_ps();
        }
        for (int i = 0; i < k; i++) {
            __m256 p8 = tail ? _mm256_add_ps(elo[i], ehi[i]) : elo[i];
            __m128 t = _mm_add_ps(_mm256_castps256_ps128(p8), _mm256_extractf128_ps(p8, 1));
            t = _mm_add_ps(t, _mm_movehl_ps(t, t));   // (0 + 2), (1 + 3)
            sum[i] = _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
        }
        for (int i = 0; i < k; i++) {
            if (take_log) {
                elo[i] = lo[i];
                ehi[i] = hi[i];
                sums[ns++] = sum[i];
            } else {
                __m256 f = _mm256_set1_ps(1.0f / sum[i]);
                elo[i] = _mm256_mul_ps(elo[i], f);
                ehi[i] = _mm256_mul_ps(ehi[i], f);
            }
            _mm256_storeu_ps(y + i * L, elo[i]);
            if (tail) tail8_store(y + i * L + L, elo[i], ehi[i], tp);
        }
        if (ns == 16 || (ns && r + k == rows)) {
            hg_sm_log_rows(y + (k - ns) * L, L, sums, ns);
            ns = 0;
        }
    }
}

// Rows of 17..64 (L), one after another, each in at most eight registers from load to store
// (the tail by tail8); log_softmax's logs 16 rows at a time.
SM_YMM static inline __attribute__((always_inline)) void rows64_body(const float* x, float* y,
                                                                    int64_t rows, int64_t L,
                                                                    int take_log) {
    const int nfull = (int)(L / 8), nv = (int)((L + 7) / 8);
    const int64_t tail = L - 8 * (int64_t)nfull;
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    const tail8 tp = tail8_of(tail);
    double sums[16];
    int ns = 0;
    for (int64_t r = 0; r < rows; r++, x += L, y += L) {
        __m256 v[8], e[8];
        __m256 mx = ninf, un = _mm256_setzero_ps();
        for (int q = 0; q < nv; q++) {
            v[q] = q < nfull ? _mm256_loadu_ps(x + 8 * q) : tail8_load(x + L, tp);
            mx = _mm256_max_ps(mx, v[q]);
            un = _mm256_or_ps(un, _mm256_cmp_ps(v[q], v[q], _CMP_UNORD_Q));
        }
        __m256 mv = _mm256_set1_ps(_mm256_movemask_ps(un) ? NAN : hmax8(mx));
        __m256 part = _mm256_setzero_ps();
        for (int q = 0; q < nv; q++) {
            v[q] = _mm256_sub_ps(v[q], mv);   // d
            e[q] = expf_fast_ymm(v[q]);
            part = _mm256_add_ps(part, e[q]);   // the tail's padding lanes add +0
        }
        double s = fold8(part);
        if (take_log) {
            for (int q = 0; q < nv; q++) e[q] = v[q];
            sums[ns++] = s;
        } else {
            __m256 f = _mm256_set1_ps((float)(1.0 / s));
            for (int q = 0; q < nv; q++) e[q] = _mm256_mul_ps(e[q], f);
        }
        for (int q = 0; q < nfull; q++) _mm256_storeu_ps(y + 8 * q, e[q]);
        if (tail) tail8_store(y + L, e[nfull - 1], e[nfull], tp);
        if (ns == 16 || (ns && r + 1 == rows)) {
            hg_sm_log_rows(y - (ns - 1) * L, L, sums, ns);
            ns = 0;
        }
    }
}

// A slice of any length in three passes over it (max; exp, sum and for softmax the store of
// e; the scale or d - log), 8 lanes with a masked last vector.
SM_YMM void hg_sm_slice_f32_avx2(const float* t, float* y, int64_t n, int take_log) {
    const int64_t nf = n / 8 * 8;
    const __m256i kt = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - nf)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
#define SM_TAIL_LOAD(p) _mm256_blendv_ps(ninf, _mm256_maskload_ps(p, kt), _mm256_castsi256_ps(kt))
    __m256 m0 = ninf, m1 = ninf, un = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= nf; i += 16) {
        __m256 a = _mm256_loadu_ps(t + i), b = _mm256_loadu_ps(t + i + 8);
        m0 = _mm256_max_ps(m0, a);
        m1 = _mm256_max_ps(m1, b);
        un = _mm256_or_ps(un, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
    }
    for (; i < n; i += 8) {
        __m256 a = i < nf ? _mm256_loadu_ps(t + i) : SM_TAIL_LOAD(t + i);
        m0 = _mm256_max_ps(m0, a);
        un = _mm256_or_ps(un, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    }
    const float m = _mm256_movemask_ps(un) ? NAN : hmax8(_mm256_max_ps(m0, m1));
    const __m256 mv = _mm256_set1_ps(m);
    double s = 0.0;
    for (int64_t b = 0; b < n; b += 256) {
        int64_t be = b + 256 < n ? b + 256 : n;
        __m256 part = _mm256_setzero_ps();
        for (i = b; i < be; i += 8) {
            int full = i < nf;
            __m256 e = expf_fast_ymm(_mm256_sub_ps(full ? _mm256_loadu_ps(t + i)
                                                        : SM_TAIL_LOAD(t + i), mv));
            part = _mm256_add_ps(part, e);
            if (take_log) continue;
            if (full) _mm256_storeu_ps(y + i, e);
            else _mm256_maskstore_ps(y + i, kt, e);
        }
        s += fold8(part);
    }
    if (take_log) {
        const __m256 ls = _mm256_set1_ps(hg_vm_log_f32((float)s));
        for (i = 0; i < nf; i += 8)
            _mm256_storeu_ps(y + i, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(t + i), mv), ls));
        if (nf < n)
            _mm256_maskstore_ps(y + nf, kt,
                                _mm256_sub_ps(_mm256_sub_ps(_mm256_maskload_ps(t + nf, kt), mv), ls));
        return;
    }
    const __m256 inv = _mm256_set1_ps((float)(1.0 / s));
    for (i = 0; i < nf; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
    if (nf < n)
        _mm256_maskstore_ps(y + nf, kt, _mm256_mul_ps(_mm256_maskload_ps(y + nf, kt), inv));
#undef SM_TAIL_LOAD
}

SM_YMM void hg_sm_rows_f32_avx2(const float* x, float* y, int64_t rows, int64_t L,
                                int take_log) {
    if (L < 8) rows8x(x, y, rows, L, take_log);
    else if (L == 16) rows16_body(x, y, rows, 16, take_log);
    else if (L <= 16) rows16_body(x, y, rows, L, take_log);
    else if (L == 64) rows64_body(x, y, rows, 64, take_log);
    else if (L == 32) rows64_body(x, y, rows, 32, take_log);
    else rows64_body(x, y, rows, L, take_log);
}
SM_YMM void hg_sm_exp_shift_f32_avx2(float* x, int64_t n, float c) {
    const __m256 cv = _mm256_set1_ps(c);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, expf_fast_ymm(_mm256_sub_ps(_mm256_loadu_ps(x + i), cv)));
    if (i < n) {   // the tail through a padded block (the same lanes' bits)
        float t[8] = {0};
        memcpy(t, x + i, (size_t)(n - i) * sizeof(float));
        _mm256_storeu_ps(t, expf_fast_ymm(_mm256_sub_ps(_mm256_loadu_ps(t), cv)));
        memcpy(x + i, t, (size_t)(n - i) * sizeof(float));
    }
}

#endif
