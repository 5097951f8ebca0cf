// Lane-array kernels of the gelu instruction (tanh form, docs/isa.md §5):
// gelu(x) = x * sigmoid(u), u = 2 sqrt(2/pi) (x + 0.044715 x^3).
//
// Why a kernel of its own: for x < 0 the relative error of sigmoid(-|u|) is the absolute error
// of u, and |u| reaches ~107 before the result underflows, so u needs ~7 bits more than f32
// holds (an f32 u costs up to ~50 ULP). Evaluating u in f64 costs conversions that run at a
// fraction of the FMA rate; this kernel computes it in double-f32 arithmetic (exact products by
// fma, one exact two-sum) and takes e^-|u| from a 16-entry table and a cubic:
//   A = |x| (alpha + beta x^2) = 16 log2(e) |u|            (double-f32: Ah + Al)
//   z = 1024 - A = k + r, k integer, |r| <= 1/2             (the first steps exact)
//   e = 2^(z/16) = 2^(k>>4) * T[k&15] * 2^(r/16) = e^-|u| * 2^64
//   x >= 0: x / (1 + e 2^-64)         x < 0: x e / (2^64 + e)
// The 2^64 keeps e normal down to |u| = 107, below which the result is 0 anyway, and the
// negative branch rounds once when the result is subnormal. |x| is clamped to 11.4 (|u| ~ 124:
// gelu is 0 below -11.4 and x above 11.4 in f32), which keeps k>>4 in [-115, 64].
// Measured maximum error 3.6 ULP against a double reference (tests/test_math_ulp.c; bound 6).
//
// The portable, AVX2 and AVX-512 builds perform the same IEEE operations in the same order
// (fmaf is exact everywhere), so all kernel sets give bit-identical results. f16/bf16 compute
// in f32 and round once; f64 is x * sigmoid(u) in double (libm-free, vmath.h), -inf -> -0.
#include <float.h>
#include "backends/cpu/simd/simd_common.h"
#include "backends/cpu/simd/vmath.h"
#if defined(HG_SIMD_AVX2) || defined(HG_SIMD_AVX512)
#include <immintrin.h>
#endif

// 2^(j/16) rounded to f32 (at most 0.45 ULP off).
static const float k_exp2_16th[16] = {
    1.0f,       1.0442737f, 1.0905077f, 1.1387886f, 1.1892071f, 1.2418578f,
    1.2968396f, 1.3542556f, 1.4142135f, 1.4768262f, 1.5422108f, 1.6104903f,
    1.6817929f, 1.7562522f, 1.8340081f, 1.9152066f,
};
// alpha = 16 log2(e) 2 sqrt(2/pi) and beta = 0.044715 alpha, each as hi + lo in f32.
#define GELU_AH 36.83533f
#define GELU_AL 2.0717444e-07f
#define GELU_BH 1.6470919f
#define GELU_BL (-3.2259177e-08f)
#define GELU_WMAX_BITS 0x41366666u           // 11.4f
#define GELU_MAGIC (12582912.0f + 1024.0f)   // 1.5 * 2^23 + 1024: t = MAGIC - A rounds to k
// 2^(r/16) = 1 + r (C1 + r (C2 + r C3)) on |r| <= 1/2, relative error 1.6e-9.
#define GELU_C1 0.0433217f
#define GELU_C2 0.00093841535f
#define GELU_C3 1.3549881e-05f

// One lane; the reference sequence the vector forms follow operation for operation.
static inline float gelu_f32_lane(float x) {
    uint32_t wb = hg_f2u(x) & 0x7fffffffu;
    wb = wb < GELU_WMAX_BITS ? wb : GELU_WMAX_BITS;   // NaN -> 11.4 (x carries it through)
    float w = hg_u2f(wb);
    float s = w * w, sl = fmaf(w, w, -s);             // w^2 = s + sl exactly
    float m = GELU_BH * s, ml = fmaf(GELU_BH, s, -m);  // BH s = m + ml exactly
    float hi = m > GELU_AH ? m : GELU_AH, lo = m > GELU_AH ? GELU_AH : m;
    float ph = hi + lo, pl = lo - (ph - hi);          // AH + m = ph + pl exactly (fast two-sum)
    float c = fmaf(GELU_BL, s, GELU_AL);
    c = fmaf(GELU_BH, sl, c);
    pl = pl + (c + ml);                               // alpha + beta w^2 = ph + pl
    float ah = w * ph, al = fmaf(w, ph, -ah);
    al = fmaf(w, pl, al);                             // A = ah + al
    float t = GELU_MAGIC - ah;                        // bits: 0x4b400000 + k
    float r = ((GELU_MAGIC - t) - ah) - al;           // (1024 - k) - ah is exact (Sterbenz)
    uint32_t q = hg_f2u(t);
    float tv = k_exp2_16th[q & 15u];
    uint32_t eadd = (q << 19) & 0xff800000u;          // (k >> 4) << 23
    float p = fmaf(r, GELU_C3, GELU_C2);
    p = fmaf(p, r, GELU_C1);
    float y = fmaf(tv * r, p, tv);
    float e = hg_u2f(hg_f2u(y) + eadd);               // e^-|u| 2^64
    float den = fmaf(e, 0x1p-64f, 1.0f);
    int neg = x < 0.0f;
    den = neg ? den * 0x1p64f : den;
    float mm = neg ? e : 1.0f;
    float xf = -16.0f > x ? -16.0f : x;               // -inf -> -16 (result -0); NaN stays
    return (xf * mm) / den;
}

#if defined(HG_SIMD_AVX512)
static void gelu_f32_block(float* d, const float* a, size_t n) {
    const __m512 tab = _mm512_loadu_ps(k_exp2_16th);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(a + i);
        __m512i wb = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
        wb = _mm512_min_epu32(wb, _mm512_set1_epi32((int)GELU_WMAX_BITS));
        __m512 w = _mm512_castsi512_ps(wb);
        __m512 s = _mm512_mul_ps(w, w), sl = _mm512_fmsub_ps(w, w, s);
        __m512 bh = _mm512_set1_ps(GELU_BH), ahc = _mm512_set1_ps(GELU_AH);
        __m512 m = _mm512_mul_ps(bh, s), ml = _mm512_fmsub_ps(bh, s, m);
        __m512 hi = _mm512_max_ps(m, ahc), lo = _mm512_min_ps(m, ahc);
        __m512 ph = _mm512_add_ps(hi, lo), pl = _mm512_sub_ps(lo, _mm512_sub_ps(ph, hi));
        __m512 c = _mm512_fmadd_ps(_mm512_set1_ps(GELU_BL), s, _mm512_set1_ps(GELU_AL));
        c = _mm512_fmadd_ps(bh, sl, c);
        pl = _mm512_add_ps(pl, _mm512_add_ps(c, ml));
        __m512 ah = _mm512_mul_ps(w, ph), al = _mm512_fmsub_ps(w, ph, ah);
        al = _mm512_fmadd_ps(w, pl, al);
        __m512 mg = _mm512_set1_ps(GELU_MAGIC);
        __m512 t = _mm512_sub_ps(mg, ah);
        __m512 r = _mm512_sub_ps(_mm512_sub_ps(_mm512_sub_ps(mg, t), ah), al);
        __m512i q = _mm512_castps_si512(t);
        __m512 tv = _mm512_permutexvar_ps(q, tab);   // uses the low 4 bits of each lane
        __m512i eadd = _mm512_and_si512(_mm512_slli_epi32(q, 19),
                                        _mm512_set1_epi32((int)0xff800000u));
        __m512 p = _mm512_fmadd_ps(r, _mm512_set1_ps(GELU_C3), _mm512_set1_ps(GELU_C2));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GELU_C1));
        __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(tv, r), p, tv);
        __m512 e = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(y), eadd));
        __m512 den = _mm512_fmadd_ps(e, _mm512_set1_ps(0x1p-64f), _mm512_set1_ps(1.0f));
        __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
        den = _mm512_mask_mul_ps(den, neg, den, _mm512_set1_ps(0x1p64f));
        __m512 mm = _mm512_mask_mov_ps(_mm512_set1_ps(1.0f), neg, e);
        __m512 xf = _mm512_max_ps(_mm512_set1_ps(-16.0f), x);   // NaN: the second operand
        _mm512_storeu_ps(d + i, _mm512_div_ps(_mm512_mul_ps(xf, mm), den));
    }
    for (; i < n; i++) d[i] = gelu_f32_lane(a[i]);
}
#elif defined(HG_SIMD_AVX2)
static void gelu_f32_block(float* d, const float* a, size_t n) {
    const __m256 tab_lo = _mm256_loadu_ps(k_exp2_16th), tab_hi = _mm256_loadu_ps(k_exp2_16th + 8);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(a + i);
        __m256i wb = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
        wb = _mm256_min_epu32(wb, _mm256_set1_epi32((int)GELU_WMAX_BITS));
        __m256 w = _mm256_castsi256_ps(wb);
        __m256 s = _mm256_mul_ps(w, w), sl = _mm256_fmsub_ps(w, w, s);
        __m256 bh = _mm256_set1_ps(GELU_BH), ahc = _mm256_set1_ps(GELU_AH);
        __m256 m = _mm256_mul_ps(bh, s), ml = _mm256_fmsub_ps(bh, s, m);
        __m256 hi = _mm256_max_ps(m, ahc), lo = _mm256_min_ps(m, ahc);
        __m256 ph = _mm256_add_ps(hi, lo), pl = _mm256_sub_ps(lo, _mm256_sub_ps(ph, hi));
        __m256 c = _mm256_fmadd_ps(_mm256_set1_ps(GELU_BL), s, _mm256_set1_ps(GELU_AL));
        c = _mm256_fmadd_ps(bh, sl, c);
        pl = _mm256_add_ps(pl, _mm256_add_ps(c, ml));
        __m256 ah = _mm256_mul_ps(w, ph), al = _mm256_fmsub_ps(w, ph, ah);
        al = _mm256_fmadd_ps(w, pl, al);
        __m256 mg = _mm256_set1_ps(GELU_MAGIC);
        __m256 t = _mm256_sub_ps(mg, ah);
        __m256 r = _mm256_sub_ps(_mm256_sub_ps(_mm256_sub_ps(mg, t), ah), al);
        __m256i q = _mm256_castps_si256(t);
        // 16 entries from two 8-entry permutes; bit 3 of q (shifted into the sign) picks one.
        __m256 tv = _mm256_blendv_ps(_mm256_permutevar8x32_ps(tab_lo, q),
                                     _mm256_permutevar8x32_ps(tab_hi, q),
                                     _mm256_castsi256_ps(_mm256_slli_epi32(q, 28)));
        __m256i eadd = _mm256_and_si256(_mm256_slli_epi32(q, 19),
                                        _mm256_set1_epi32((int)0xff800000u));
        __m256 p = _mm256_fmadd_ps(r, _mm256_set1_ps(GELU_C3), _mm256_set1_ps(GELU_C2));
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GELU_C1));
        __m256 y = _mm256_fmadd_ps(_mm256_mul_ps(tv, r), p, tv);
        __m256 e = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(y), eadd));
        __m256 den = _mm256_fmadd_ps(e, _mm256_set1_ps(0x1p-64f), _mm256_set1_ps(1.0f));
        __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
        den = _mm256_blendv_ps(den, _mm256_mul_ps(den, _mm256_set1_ps(0x1p64f)), neg);
        __m256 mm = _mm256_blendv_ps(_mm256_set1_ps(1.0f), e, neg);
        __m256 xf = _mm256_max_ps(_mm256_set1_ps(-16.0f), x);   // NaN: the second operand
        _mm256_storeu_ps(d + i, _mm256_div_ps(_mm256_mul_ps(xf, mm), den));
    }
    for (; i < n; i++) d[i] = gelu_f32_lane(a[i]);
}
#else
static void gelu_f32_block(float* d, const float* a, size_t n) {
    for (size_t i = 0; i < n; i++) d[i] = gelu_f32_lane(a[i]);
}
#endif

static void gelu_f32(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    (void)bv; (void)cv;
    gelu_f32_block(dv, av, n);
}

// f16/bf16 registers hold floats rounded to the type: the f32 result rounded once more.
static void gelu_f16(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    (void)bv; (void)cv;
    float* d = dv;
    gelu_f32_block(d, av, n);
    HG_IVDEP for (size_t i = 0; i < n; i++) d[i] = hg_v_round_f16(d[i]);
}
static void gelu_bf16(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    (void)bv; (void)cv;
    float* d = dv;
    gelu_f32_block(d, av, n);
    HG_IVDEP for (size_t i = 0; i < n; i++) d[i] = hg_v_round_bf16(d[i]);
}

// f64: x * sigmoid(2 sqrt(2/pi) x (1 + 0.044715 x^2)), the f64 rounding of the argument being
// the limit (docs/ops.md); -inf * sigmoid(-inf) = -inf * 0 is the limit -0.
static void gelu_f64(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    (void)bv; (void)cv;
    double* d = dv;
    const double* a = av;
    HG_IVDEP for (size_t i = 0; i < n; i++) {
        double x = a[i];
        double poly = fma(x * 0.044715, x, 1.0);
        double z = (x * poly) * (2.0 * 0.7978845608028654);
        double r = x * hg_vm_sigmoid_f64(z);
        d[i] = x == -INFINITY ? -0.0 : r;
    }
}

void HG_SIMD_NAME(hg_cpu_fill_gelu_)(hg_cpu_kernels* k) {
    k->op[HG_OP_GELU][HG_DTYPE_F32] = gelu_f32;
    k->op[HG_OP_GELU][HG_DTYPE_F16] = gelu_f16;
    k->op[HG_OP_GELU][HG_DTYPE_BF16] = gelu_bf16;
    k->op[HG_OP_GELU][HG_DTYPE_F64] = gelu_f64;
}
