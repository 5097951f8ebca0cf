// softmax / log_softmax f32 kernels for AVX-512 (see softmax_f32.h for what they compute): 16
// lanes, vmath_zmm.h's exp (vmath.h's bit for bit).
#include "ops/rows/softmax_f32.h"
#include "base/cpu_targets.h"
#if defined(HG_HAVE_CPU_TARGETS)
#include <immintrin.h>
#include <math.h>
#include "base/vmath_zmm.h"

#define SM_ZMM HG_TARGET_AVX512_WIDE

// hg_sm_expf on 16 lanes (bit for bit): inputs below the flush bound enter at the bound.
SM_ZMM static inline __m512 expf_fast_zmm(__m512 d) {
    const __m512 lo = _mm512_set1_ps(-87.33654f);
    __mmask16 tiny = _mm512_cmp_ps_mask(d, lo, _CMP_LT_OQ);
    __m512 y = hg_vm_exp_zmm(_mm512_max_ps(lo, d));   // NaN stays d
    return _mm512_mask_mov_ps(y, tiny, _mm512_setzero_ps());
}

// hg_sm_fold_lanes(part, 16) in registers.
SM_ZMM static inline double fold16(__m512 part) {
    __m512d h8 = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(part)),
                               _mm512_cvtps_pd(_mm512_extractf32x8_ps(part, 1)));
    __m256d h4 = _mm256_add_pd(_mm512_castpd512_pd256(h8), _mm512_extractf64x4_pd(h8, 1));
    __m128d h2 = _mm_add_pd(_mm256_castpd256_pd128(h4), _mm256_extractf128_pd(h4, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h2, _mm_unpackhi_pd(h2, h2)));
}

// Rows of at most 16 (L), one after another: each row is one masked vector, max and sum by
// in-register reductions (a row of 16 through a slice kernel cost ~100 cycles, half of them
// folding lanes); padding lanes are -inf, whose exp is 0.
SM_ZMM static void rows16(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
    __mmask16 k = (__mmask16)((1u << L) - 1u);
    __m512 ninf = _mm512_set1_ps(-INFINITY);
    double sums[16];
    int ns = 0;
    for (int64_t r = 0; r < rows; r++, x += L, y += L) {
        __m512 v = _mm512_mask_loadu_ps(ninf, k, x);
        __m512 d = _mm512_sub_ps(v, _mm512_set1_ps(_mm512_reduce_max_ps(v)));
        __m512 ev = expf_fast_zmm(d);
        float sum = _mm512_reduce_add_ps(ev);
        if (take_log) {   // d now, the logs of 16 rows' sums at once
            _mm512_mask_storeu_ps(y, k, d);
            sums[ns++] = sum;
            if (ns == 16 || r + 1 == rows) {
                hg_sm_log_rows(y - (ns - 1) * L, L, sums, ns);
                ns = 0;
            }
        } else {
            _mm512_mask_storeu_ps(y, k, _mm512_mul_ps(ev, _mm512_set1_ps(1.0f / sum)));
        }
    }
}

// Rows of fewer than 16 (L), 16 rows at a time across the rows: lane r of a register holds
// row r's element l (gathered), so a block of 16 rows takes L exps instead of 16 (rows16 works
// a whole vector per row, mostly idle lanes for such rows: docs/performance.md). rows16's
// operations in its order, so the same bits; the last rows % 16 rows take rows16.
SM_ZMM static inline __attribute__((always_inline)) void rows16x_block(const float* x, float* y,
                                                                       int64_t L, int take_log,
                                                                       __m512i idx) {
    const __m512 zero = _mm512_setzero_ps();
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

SM_ZMM static void rows16x(const float* x, float* y, int64_t rows, int64_t L, int take_log) {
    const __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32((int)L));
    if (L == 16) {   // whole aligned vectors per row beat the gathers (docs/performance.md)
        rows16(x, y, rows, L, take_log);
        return;
    }
    int64_t r = 0;
    if (L == 1) {   // a loop of its own: the generic one reloads its constants
        for (; r + 16 <= rows; r += 16, x += 16, y += 16) rows16x_block(x, y, 1, take_log, idx);
    } else {
        for (; r + 16 <= rows; r += 16, x += 16 * L, y += 16 * L)
            rows16x_block(x, y, L, take_log, idx);
    }
    if (r < rows) rows16(x, y, rows - r, L, take_log);
}

// Rows of 17..64 (L), one after another, each in at most four registers from load to store
// (a slice kernel, or memory arrays between the passes, were slower than torch:
// docs/performance.md); log_softmax's logs 16 rows at a time. Rows of 32 and 64 get the loops unrolled for their length.
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
        __m512 v[4], e[4];
        __m512 mx = ninf;
        __mmask16 un = 0;
        for (int q = 0; q < nv; q++) {
            v[q] = q < nfull ? _mm512_loadu_ps(x + 16 * q)
                             : _mm512_mask_loadu_ps(ninf, kt, x + 16 * q);
            mx = _mm512_max_ps(mx, v[q]);
            un |= _mm512_cmp_ps_mask(v[q], v[q], _CMP_UNORD_Q);
        }
        __m512 mv = _mm512_set1_ps(un ? NAN : _mm512_reduce_max_ps(mx));
        __m512 part = _mm512_setzero_ps();
        for (int q = 0; q < nv; q++) {
            v[q] = _mm512_sub_ps(v[q], mv);   // d
            e[q] = expf_fast_zmm(v[q]);
            part = _mm512_add_ps(part, e[q]);   // the tail's padding lanes add +0
        }
        double s = fold16(part);
        if (take_log) {
            for (int q = 0; q < nv; q++) e[q] = v[q];
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
            hg_sm_log_rows(y - (ns - 1) * L, L, sums, ns);
            ns = 0;
        }
    }
}

// A slice of any length in three passes over it (max; exp, sum and for softmax the store of
// e; the scale or d - log), 16 lanes with a masked last vector.
SM_ZMM void hg_sm_slice_f32_avx512(const float* t, float* y, int64_t n, int take_log) {
    const int64_t nf = n / 16 * 16;
    const __mmask16 kt = (__mmask16)((1u << (n - nf)) - 1u);
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 m0 = ninf, m1 = ninf;
    __mmask16 un = 0;
    int64_t i = 0;
    for (; i + 32 <= nf; i += 32) {
        __m512 a = _mm512_loadu_ps(t + i), b = _mm512_loadu_ps(t + i + 16);
        m0 = _mm512_max_ps(m0, a);
        m1 = _mm512_max_ps(m1, b);
        un |= _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
    }
    for (; i < n; i += 16) {
        __m512 a = i < nf ? _mm512_loadu_ps(t + i) : _mm512_mask_loadu_ps(ninf, kt, t + i);
        m0 = _mm512_max_ps(m0, a);
        un |= _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
    }
    const float m = un ? NAN : _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
    const __m512 mv = _mm512_set1_ps(m);
    double s = 0.0;
    for (int64_t b = 0; b < n; b += 256) {
        int64_t be = b + 256 < n ? b + 256 : n;
        __m512 part = _mm512_setzero_ps();
        for (i = b; i < be; i += 16) {
            int full = i < nf;
            __m512 a = full ? _mm512_loadu_ps(t + i) : _mm512_mask_loadu_ps(ninf, kt, t + i);
            __m512 e = expf_fast_zmm(_mm512_sub_ps(a, mv));
            part = _mm512_add_ps(part, e);
            if (take_log) continue;
            if (full) _mm512_storeu_ps(y + i, e);
            else _mm512_mask_storeu_ps(y + i, kt, e);
        }
        s += fold16(part);
    }
    if (take_log) {
        const __m512 ls = _mm512_set1_ps(hg_vm_log_f32((float)s));
        for (i = 0; i < nf; i += 16)
            _mm512_storeu_ps(y + i, _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(t + i), mv), ls));
        if (nf < n)
            _mm512_mask_storeu_ps(y + nf, kt,
                                  _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(kt, t + nf), mv), ls));
        return;
    }
    const __m512 inv = _mm512_set1_ps((float)(1.0 / s));
    for (i = 0; i < nf; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
    if (nf < n)
        _mm512_mask_storeu_ps(y + nf, kt, _mm512_mul_ps(_mm512_maskz_loadu_ps(kt, y + nf), inv));
}

SM_ZMM void hg_sm_rows_f32_avx512(const float* x, float* y, int64_t rows, int64_t L,
                                  int take_log) {
    if (L <= 16) rows16x(x, y, rows, L, take_log);
    else if (L == 64) rows64_body(x, y, rows, 64, take_log);
    else if (L == 32) rows64_body(x, y, rows, 32, take_log);
    else rows64_body(x, y, rows, L, take_log);
}
SM_ZMM void hg_sm_exp_shift_f32_avx512(float* x, int64_t n, float c) {
    const __m512 cv = _mm512_set1_ps(c);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(x + i, expf_fast_zmm(_mm512_sub_ps(_mm512_loadu_ps(x + i), cv)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), cv);
        _mm512_mask_storeu_ps(x + i, m, expf_fast_zmm(d));
    }
}

#endif
