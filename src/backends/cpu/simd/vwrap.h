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

#endif
#endif
