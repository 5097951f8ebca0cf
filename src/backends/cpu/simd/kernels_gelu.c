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
// negative branch rounds once when the result is subnormal. (The vector forms divide x e by
// 1 + e 2^-64 and scale by 2^-64 after, mul_pow2_down: the same bits, since that quotient is
// exact wherever the result is subnormal: the divisor is then 1, or 2 for |x| < 2^-100.) |x| is clamped to 11.4 (|u| ~ 124:
// gelu is 0 below -11.4 and x above 11.4 in f32), which keeps k>>4 in [-115, 64].
// Measured maximum error 3.6 ULP against a double reference (tests/test_math_ulp.c; bound 6).
//
// The portable, AVX2 and AVX-512 builds perform the same IEEE operations in the same order
// (fmaf is exact everywhere), so all kernel sets give bit-identical results. f16/bf16 compute
// in f32 and round once; f64 is x * sigmoid(u) in double (libm-free, vmath.h), -inf -> -0.
#include <float.h>
#include <math.h>
#include "backends/cpu/simd/simd_common.h"
#include "base/vmath.h"
#include "backends/cpu/simd/vwrap.h"

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

// 2^((1024 - A) / 16) for A = ah + al in [0, ~2500] (double-f32): z = 1024 - A = k + r with k
// an integer and |r| <= 1/2 (the first steps exact), 2^(z/16) = 2^(k>>4) T[k&15] 2^(r/16), the
// last factor a cubic. Shared by both GELU forms; the vector forms below follow it operation for
// operation.
static inline float gelu_exp_lane(float ah, float al) {
    float t = GELU_MAGIC - ah;                        // bits: 0x4b400000 + k
    float r = ((GELU_MAGIC - t) - ah) - al;           // (1024 - k) - ah is exact (Sterbenz)
    uint32_t q = hg_f2u(t);
    float tv = hg_vm_exp2_16th[q & 15u];
    uint32_t eadd = (q << 19) & 0xff800000u;          // (k >> 4) << 23
    float p = fmaf(r, GELU_C3, GELU_C2);
    p = fmaf(p, r, GELU_C1);
    float y = fmaf(tv * r, p, tv);
    return hg_u2f(hg_f2u(y) + eadd);
}

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
    float e = gelu_exp_lane(ah, al);                  // e^-|u| 2^64
    float den = fmaf(e, 0x1p-64f, 1.0f);
    int neg = x < 0.0f;
    den = neg ? den * 0x1p64f : den;
    float mm = neg ? e : 1.0f;
    float xf = -16.0f > x ? -16.0f : x;               // -inf -> -16 (result -0); NaN stays
    return (xf * mm) / den;
}

#if defined(HG_VWRAP)
static inline vf gelu_exp_vec(vf ah, vf al) {   // gelu_exp_lane
    vf mg = V(set1_ps)(GELU_MAGIC);
    vf t = V(sub_ps)(mg, ah);
    vf r = V(sub_ps)(V(sub_ps)(V(sub_ps)(mg, t), ah), al);
    vi q = vf_bits(t);
    vf tv = tab16(hg_vm_exp2_16th, q);
    vi eadd = vi_and(V(slli_epi32)(q, 19), V(set1_epi32)((int)0xff800000u));
    vf p = V(fmadd_ps)(r, V(set1_ps)(GELU_C3), V(set1_ps)(GELU_C2));
    p = V(fmadd_ps)(p, r, V(set1_ps)(GELU_C1));
    vf y = V(fmadd_ps)(V(mul_ps)(tv, r), p, tv);
    return vf_from(V(add_epi32)(vf_bits(y), eadd));
}

static void gelu_f32_block(float* d, const float* a, size_t n) {
    size_t i = 0;
    for (; i + VW <= n; i += VW) {
        vf x = V(loadu_ps)(a + i);
        vi wb = vi_and(vf_bits(x), V(set1_epi32)(0x7fffffff));
        wb = V(min_epu32)(wb, V(set1_epi32)((int)GELU_WMAX_BITS));
        vf w = vf_from(wb);
        vf s = V(mul_ps)(w, w), sl = V(fmsub_ps)(w, w, s);
        vf bh = V(set1_ps)(GELU_BH), ahc = V(set1_ps)(GELU_AH);
        vf m = V(mul_ps)(bh, s), ml = V(fmsub_ps)(bh, s, m);
        vf hi = V(max_ps)(m, ahc), lo = V(min_ps)(m, ahc);
        vf ph = V(add_ps)(hi, lo), pl = V(sub_ps)(lo, V(sub_ps)(ph, hi));
        vf c = V(fmadd_ps)(V(set1_ps)(GELU_BL), s, V(set1_ps)(GELU_AL));
        c = V(fmadd_ps)(bh, sl, c);
        pl = V(add_ps)(pl, V(add_ps)(c, ml));
        vf ah = V(mul_ps)(w, ph), al = V(fmsub_ps)(w, ph, ah);
        al = V(fmadd_ps)(w, pl, al);
        vf e = gelu_exp_vec(ah, al);
        // e < 2^38 leaves 1 + e 2^-64 = 1; taken as 0 there (an fma whose product would be
        // subnormal takes an assist on Intel: mul_pow2_down)
        vf den = V(fmadd_ps)(zero_below(e, 0x1p38f), V(set1_ps)(0x1p-64f), V(set1_ps)(1.0f));
        vf xf = V(max_ps)(V(set1_ps)(-16.0f), x);   // NaN: the second operand
        vf q = V(div_ps)(V(mul_ps)(xf, sel_neg(x, e, V(set1_ps)(1.0f))), den);
        V(storeu_ps)(d + i, sel_neg(x, mul_pow2_down(q, 64), q));
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

// gelu_erf (ISA 1.2) of f32: x Phi(x), Phi(x) = erfc(a) / 2 for x < 0 and 1 - erfc(a) / 2 above
// (a = |x| / sqrt 2; no cancellation anywhere: torch's 0.5 x (1 + erf(x / sqrt 2)) in f32 loses
// the negative tail), all in f32 (an f64 evaluation is much slower: docs/performance.md):
//   erfc(a) = t e^(-x^2/2 + P(t)),  t = 1 / (1 + a/2),  P a degree-10 fit in u = (t - UM) UH
// (absolute error 3.1e-8 with its f32 coefficients; fitted with t defined by GERF_A2 as
// rounded), the classic form whose P is smooth on all of a >= 0. The exponent needs more bits than f32
// holds (x^2/2 reaches 105): D = x^2/2 - P is formed in double-f32 (x^2 exact by fma, one exact
// two-sum), and e^-D 2^64 comes from the same 16-entry table and cubic as the tanh form above
// (A = 16 log2(e) D, z = 1024 - A = k + r). The 2^64 keeps it normal down to |x| = 14.6, past
// which the result is -0 (x < 0) or x; |x| is clamped there (NaN too: x carries it through).
//   x < 0: (x (t/2) e) 2^-64 (rounded once where the result is subnormal)
//   x >= 0: x (1 - (t/2) e 2^-64)
// Measured maximum error ~3 ULP against a double reference (tests/test_math_ulp.c; bound 6).
#define GERF_WMAX_BITS 0x41699999u           // 14.6f
#define GERF_A2 0.35355338f                   // 1 / (2 sqrt 2): t = 1 / (1 + GERF_A2 |x|)
#define GERF_UM 0.5811441f                    // u = (t - UM) UH in [-1, 1]
#define GERF_UH 2.3874557f
#define GERF_CH 23.08312f                     // 16 log2(e) = CH + CL
#define GERF_CL 3.0815409e-07f
static const float k_gerf_p[11] = {-0.561591446f,   0.57313484f,     0.0163807571f,
                                   -0.0299136043f,  -0.00117043057f, 0.00381337921f,
                                   -0.000256951345f, -0.000558431086f, 0.000125013627f,
                                   5.81249333e-05f, -2.12043578e-05f};

// One lane; the reference sequence the vector forms follow operation for operation.
static inline float gelu_erf_f32_lane(float x) {
    uint32_t wb = hg_f2u(x) & 0x7fffffffu;
    wb = wb < GERF_WMAX_BITS ? wb : GERF_WMAX_BITS;
    float w = hg_u2f(wb);
    // t = 1 / (1 + GERF_A2 w) as t + tl: the denominator's and the division's residuals are
    // exact by fma (t alone cost 1-2 ULP of the result)
    float den = fmaf(w, GERF_A2, 1.0f);
    float dlo = fmaf(w, GERF_A2, 1.0f - den);         // 1 - den is exact
    float t = 1.0f / den;
    float tl = t * fmaf(-t, dlo, fmaf(-t, den, 1.0f));
    float u = fmaf(tl, GERF_UH, (t - GERF_UM) * GERF_UH);
    float p = k_gerf_p[10];
    for (int i = 9; i >= 0; i--) p = fmaf(p, u, k_gerf_p[i]);
    float s = w * w, sl = fmaf(w, w, -s);             // w^2 = s + sl exactly
    float hs = 0.5f * s, np = -p;                     // D = hs + np, both >= 0
    float hi = hs > np ? hs : np, lo = hs > np ? np : hs;
    float dh = hi + lo, dl = lo - (dh - hi);          // exact (fast two-sum)
    dl = fmaf(0.5f, sl, dl);
    float ah = dh * GERF_CH, al = fmaf(dh, GERF_CH, -ah);
    al = fmaf(dh, GERF_CL, fmaf(dl, GERF_CH, al));    // A = ah + al
    float e = gelu_exp_lane(ah, al);                  // e^-D 2^64
    // h = (t + tl) e / 2 = erfc(a) 2^63 as hh + hl
    float pe = t * e, hl = 0.5f * fmaf(tl, e, fmaf(t, e, -pe)), hh = 0.5f * pe;
    float xf = -16.0f > x ? -16.0f : x;               // -inf -> -16 (result -0); NaN stays
    float neg = fmaf(xf, hh, xf * hl) * 0x1p-64f;
    float ph = fmaf(-hh, 0x1p-64f, 1.0f);              // 1 - h 2^-64 = ph + pl
    float pl = fmaf(-hl, 0x1p-64f, fmaf(-hh, 0x1p-64f, 1.0f - ph));
    float xc = 16.0f < x ? 16.0f : x;                 // +inf: pl is ~0, and inf * 0 is NaN
    float pos = fmaf(xc, pl, x * ph);
    return x < 0.0f ? neg : pos;
}

#if defined(HG_VWRAP)
// The two branches of gelu_erf_f32_lane without subnormal intermediates (each would cost a
// microcode assist on Intel: 8x slower on inputs of standard deviation 8-16, docs/performance.md),
// bit for bit the lane's results. x < 0: (x h) 2^-64 by mul_pow2_down (subnormal or 0 from
// |x| ~ 13.2 on; every lane computes this branch).
static inline vf gelu_erf_neg(vf xf, vf hh, vf hl) {
    return mul_pow2_down(V(fmadd_ps)(xf, hh, V(mul_ps)(xf, hl)), 64);
}

// x >= 0: x (1 - h 2^-64) = x ph + x pl. Where h < 2^14, h 2^-64 < 2^-50 leaves ph = 1 and
// |x pl| far below half an ULP of x (x > 7.5 there): the result is x, and h, hl are taken as 0
// (the lane's pl would be subnormal from |x| ~ 13 on).
static inline vf gelu_erf_pos(vf x, vf hh, vf hl, vf sc) {
#if defined(HG_SIMD_AVX512)
    __mmask16 big = _mm512_cmp_ps_mask(hh, _mm512_set1_ps(0x1p14f), _CMP_GE_OQ);
    hh = _mm512_maskz_mov_ps(big, hh);
    hl = _mm512_maskz_mov_ps(big, hl);
#else
    vf big = _mm256_cmp_ps(hh, _mm256_set1_ps(0x1p14f), _CMP_GE_OQ);
    hh = _mm256_and_ps(big, hh);
    hl = _mm256_and_ps(big, hl);
#endif
    vf one = V(set1_ps)(1.0f);
    vf ph = V(fnmadd_ps)(hh, sc, one);
    vf pl = V(fnmadd_ps)(hl, sc, V(fnmadd_ps)(hh, sc, V(sub_ps)(one, ph)));
    vf xc = V(min_ps)(V(set1_ps)(16.0f), x);    // +inf: pl is ~0, and inf * 0 is NaN
    return V(fmadd_ps)(xc, pl, V(mul_ps)(x, ph));
}

static void gelu_erf_f32_block(float* d, const float* a, size_t n) {
    size_t i = 0;
    for (; i + VW <= n; i += VW) {
        vf x = V(loadu_ps)(a + i);
        vi wb = vi_and(vf_bits(x), V(set1_epi32)(0x7fffffff));
        wb = V(min_epu32)(wb, V(set1_epi32)((int)GERF_WMAX_BITS));
        vf w = vf_from(wb), one = V(set1_ps)(1.0f), a2 = V(set1_ps)(GERF_A2);
        vf den = V(fmadd_ps)(w, a2, one);
        vf dlo = V(fmadd_ps)(w, a2, V(sub_ps)(one, den));
        vf t = V(div_ps)(one, den);
        vf tl = V(mul_ps)(t, V(fnmadd_ps)(t, dlo, V(fnmadd_ps)(t, den, one)));
        vf uh = V(set1_ps)(GERF_UH);
        vf u = V(fmadd_ps)(tl, uh, V(mul_ps)(V(sub_ps)(t, V(set1_ps)(GERF_UM)), uh));
        vf p = V(set1_ps)(k_gerf_p[10]);
        for (int k = 9; k >= 0; k--) p = V(fmadd_ps)(p, u, V(set1_ps)(k_gerf_p[k]));
        vf s = V(mul_ps)(w, w), sl = V(fmsub_ps)(w, w, s);
        vf half = V(set1_ps)(0.5f);
        vf hs = V(mul_ps)(half, s), np = V(sub_ps)(V(setzero_ps)(), p);
        vf hi = V(max_ps)(hs, np), lo = V(min_ps)(hs, np);
        vf dh = V(add_ps)(hi, lo), dl = V(sub_ps)(lo, V(sub_ps)(dh, hi));
        dl = V(fmadd_ps)(half, sl, dl);
        vf ch = V(set1_ps)(GERF_CH);
        vf ah = V(mul_ps)(dh, ch), al = V(fmsub_ps)(dh, ch, ah);
        al = V(fmadd_ps)(dh, V(set1_ps)(GERF_CL), V(fmadd_ps)(dl, ch, al));
        vf e = gelu_exp_vec(ah, al);
        vf pe = V(mul_ps)(t, e), hh = V(mul_ps)(half, pe);
        vf hl = V(mul_ps)(half, V(fmadd_ps)(tl, e, V(fmsub_ps)(t, e, pe)));
        vf xf = V(max_ps)(V(set1_ps)(-16.0f), x);   // NaN: the second operand
        vf sc = V(set1_ps)(0x1p-64f);
        V(storeu_ps)(d + i, sel_neg(x, gelu_erf_neg(xf, hh, hl), gelu_erf_pos(x, hh, hl, sc)));
    }
    for (; i < n; i++) d[i] = gelu_erf_f32_lane(a[i]);
}
#else
static void gelu_erf_f32_block(float* d, const float* a, size_t n) {
    for (size_t i = 0; i < n; i++) d[i] = gelu_erf_f32_lane(a[i]);
}
#endif

static void gelu_erf_f32(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    (void)bv; (void)cv;
    gelu_erf_f32_block(dv, av, n);
}
static void gelu_erf_f16(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    float* d = dv;
    gelu_erf_f32(dv, av, bv, cv, n);
    HG_IVDEP for (size_t i = 0; i < n; i++) d[i] = hg_v_round_f16(d[i]);
}
static void gelu_erf_bf16(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    float* d = dv;
    gelu_erf_f32(dv, av, bv, cv, n);
    HG_IVDEP for (size_t i = 0; i < n; i++) d[i] = hg_v_round_bf16(d[i]);
}
static void gelu_erf_f64(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    (void)bv; (void)cv;
    double* d = dv;
    const double* a = av;
    for (size_t i = 0; i < n; i++) {
        double x = a[i] < -DBL_MAX ? -DBL_MAX : a[i];
        d[i] = x * 0.5 * erfc(x * -0.7071067811865476);
    }
}

void HG_SIMD_NAME(hg_cpu_fill_gelu_)(hg_cpu_kernels* k) {
    k->op[HG_OP_GELU_ERF][HG_DTYPE_F32] = gelu_erf_f32;
    k->op[HG_OP_GELU_ERF][HG_DTYPE_F16] = gelu_erf_f16;
    k->op[HG_OP_GELU_ERF][HG_DTYPE_BF16] = gelu_erf_bf16;
    k->op[HG_OP_GELU_ERF][HG_DTYPE_F64] = gelu_erf_f64;
    k->op[HG_OP_GELU][HG_DTYPE_F32] = gelu_f32;
    k->op[HG_OP_GELU][HG_DTYPE_F16] = gelu_f16;
    k->op[HG_OP_GELU][HG_DTYPE_BF16] = gelu_bf16;
    k->op[HG_OP_GELU][HG_DTYPE_F64] = gelu_f64;
}
