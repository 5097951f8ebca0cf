// Internal (CPU backend, simd/): thin wrappers that let one intrinsics body serve the AVX2
// (8 lanes) and AVX-512 (16 lanes) builds of a kernel: V(op) names the width's intrinsic
// (V(add_ps) is _mm256_add_ps or _mm512_add_ps), plus the few operations whose spelling or
// form differs (bit casts, integer and, a 16-entry table lookup, a select on x < 0).
// Kernels written with them keep a scalar form performing the same IEEE operations in the same
// order for the portable build and the tails, so every kernel set rounds identically.
#ifndef HG_BACKENDS_CPU_SIMD_VWRAP_H
#define HG_BACKENDS_CPU_SIMD_VWRAP_H
#if defined(HG_SIMD_AVX2) || defined(HG_SIMD_AVX512)
#include <immintrin.h>
#define HG_VWRAP 1

#if defined(HG_SIMD_AVX512)
#define VW 16
typedef __m512 vf;
typedef __m512i vi;
#define V(op) _mm512_##op
#define VSI(op) _mm512_##op##_si512     // integer-vector ops: _mm512_and_si512, ...
#define VF_FROM_BITS _mm512_castsi512_ps
// tab[q & 15] per lane: one permute (it reads the low 4 bits of q).
static inline vf tab16(const float* tab, vi q) {
    return _mm512_permutexvar_ps(q, _mm512_loadu_ps(tab));
}
// x < 0 ? if_neg : otherwise (NaN and -0 take otherwise).
static inline vf sel_neg(vf x, vf if_neg, vf otherwise) {
    __mmask16 m = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mask_mov_ps(otherwise, m, if_neg);
}
#else
#define VW 8
typedef __m256 vf;
typedef __m256i vi;
#define V(op) _mm256_##op
#define VSI(op) _mm256_##op##_si256
#define VF_FROM_BITS _mm256_castsi256_ps
// 16 entries from two 8-entry permutes; bit 3 of q (shifted into the sign) picks one.
static inline vf tab16(const float* tab, vi q) {
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(tab), q),
                            _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab + 8), q),
                            _mm256_castsi256_ps(_mm256_slli_epi32(q, 28)));
}
static inline vf sel_neg(vf x, vf if_neg, vf otherwise) {
    return _mm256_blendv_ps(otherwise, if_neg, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
}
#endif

static inline vi vi_and(vi a, vi b) { return VSI(and)(a, b); }
static inline vi vf_bits(vf a) { return VSI(castps)(a); }
static inline vf vf_from(vi a) { return VF_FROM_BITS(a); }

// v where v >= lim, 0 below (and for NaN).
static inline vf zero_below(vf v, float lim) {
#if defined(HG_SIMD_AVX512)
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_set1_ps(lim), _CMP_GE_OQ), v);
#else
    return _mm256_and_ps(_mm256_cmp_ps(v, _mm256_set1_ps(lim), _CMP_GE_OQ), v);
#endif
}

// v * 2^-k (24 <= k <= 125) rounded as the multiplication rounds it, without a subnormal
// result in floating point: such a multiplication (or an fma whose product is that small, even
// with a normal result) takes a microcode assist on Intel CPUs, ~100+ cycles for the whole
// vector. Lanes whose result is below the smallest normal (|v| < 2^(k-126), zeros and
// subnormals included) shift their significand right by s = k + 1 - e bits (at most 26: 0),
// rounding to nearest even ((m + half - 1 + lsb) >> s), and enter the multiplication as 0.
static inline vf mul_pow2_down(vf v, int k) {
    vi b = vf_bits(v);
    vi a = vi_and(b, V(set1_epi32)(0x7fffffff));
    vi lim = V(set1_epi32)((127 + k - 126) << 23);
#if defined(HG_SIMD_AVX512)
    __mmask16 tiny = _mm512_cmplt_epi32_mask(a, lim);
    if (!tiny) return V(mul_ps)(v, vf_from(V(set1_epi32)((127 - k) << 23)));
#else
    vi tiny = _mm256_cmpgt_epi32(lim, a);
    if (_mm256_testz_si256(tiny, tiny))
        return V(mul_ps)(v, vf_from(V(set1_epi32)((127 - k) << 23)));
#endif
    vi e = V(srli_epi32)(a, 23);
    vi m = VSI(or)(vi_and(a, V(set1_epi32)(0x7fffff)), V(set1_epi32)(0x800000));
    vi sh = V(min_epi32)(V(sub_epi32)(V(set1_epi32)(k + 1), e), V(set1_epi32)(26));
    vi lsb = vi_and(V(srlv_epi32)(m, sh), V(set1_epi32)(1));
    vi half = V(sllv_epi32)(V(set1_epi32)(1), V(sub_epi32)(sh, V(set1_epi32)(1)));
    vi rounded = V(srlv_epi32)(V(add_epi32)(V(add_epi32)(m, lsb),
                                            V(sub_epi32)(half, V(set1_epi32)(1))), sh);
    vf sub = vf_from(VSI(or)(VSI(xor)(b, a), rounded));
    vf scale = vf_from(V(set1_epi32)((127 - k) << 23));
    // (the barrier: the compiler would multiply v itself, the tiny lanes' products being unused)
#if defined(HG_SIMD_AVX512)
    vf w = _mm512_mask_mov_ps(v, tiny, _mm512_setzero_ps());
    __asm__("" : "+v"(w));
    return _mm512_mask_mov_ps(V(mul_ps)(w, scale), tiny, sub);
#else
    vf w = vf_from(VSI(andnot)(tiny, b));
    __asm__("" : "+x"(w));
    return _mm256_blendv_ps(V(mul_ps)(w, scale), sub, vf_from(tiny));
#endif
}

#endif
#endif
