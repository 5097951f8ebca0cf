// Internal: vmath.h's f32 exp and log on 8 lanes of an AVX2 register, bit for bit hg_vm_exp_f32 and
// hg_vm_log_f32 (the same operations in the same order). For kernels written with
// AVX2 intrinsics, where the compiler cannot be left to vectorize the scalar function (lanes
// that are rows, gathered). test_ops_softmax_norm checks the kernels built on it bit for bit.
#ifndef HG_BASE_VMATH_YMM_H
#define HG_BASE_VMATH_YMM_H

#include "base/cpu_targets.h"
#include "base/vmath.h"

#if defined(HG_HAVE_CPU_TARGETS)
#include <immintrin.h>


// e^xc for |xc| <= 110 (not NaN), as hg_vm_exp_core_f32 with hg_vm_scale_f32's scaling.
HG_TARGET_AVX2 static inline __m256 hg_vm_exp_core_ymm(__m256 xc) {
    const __m256 magic = _mm256_set1_ps(HG_VM_ROUND_MAGIC_F);
    __m256 t = _mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), magic);
    __m256 k = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_fmadd_ps(k, _mm256_set1_ps(-0.693145751953125f), xc);
    r = _mm256_fmadd_ps(k, _mm256_set1_ps(-1.428606765330187045e-06f), r);
    __m256 p = _mm256_set1_ps(0.000198527617612853646278381f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.00139304355252534151077271f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.00833336077630519866943359f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.0416664853692054748535156f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.166666671633720397949219f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256 y = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    // 2^n as two normal powers of two (n1 = floor(n / 2), n2 = n - n1): hg_vm_scale_f32.
    __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4b400000));
    __m256i n1 = _mm256_srai_epi32(n, 1), n2 = _mm256_sub_epi32(n, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}

// e^x for any x, as hg_vm_exp_f32: |x| clamped to 110 on the bit patterns, NaN gives x + x.
HG_TARGET_AVX2 static inline __m256 hg_vm_exp_ymm(__m256 x) {
    const __m256i absm = _mm256_set1_epi32(0x7fffffff), lim = _mm256_set1_epi32(0x42dc0000);
    __m256i u = _mm256_castps_si256(x);
    __m256i m = _mm256_min_epu32(_mm256_and_si256(u, absm), lim);
    __m256 xc = _mm256_castsi256_ps(_mm256_or_si256(m, _mm256_andnot_si256(absm, u)));
    __m256 y = hg_vm_exp_core_ymm(xc);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// log(x) for any x, as hg_vm_log_f32: x = 2^k (1 + f), Cephes' polynomial, the special values
// (+-0, < 0, inf, NaN) as hg_vm_log_special.
HG_TARGET_AVX2 static inline __m256 hg_vm_log_ymm(__m256 x) {
    const __m256 zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(INFINITY);
    __m256 sub = _mm256_cmp_ps(x, _mm256_set1_ps(1.17549435e-38f), _CMP_LT_OQ);
    __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(8388608.0f)), sub);
    __m256i u = _mm256_castps_si256(xs);
    __m256i t = _mm256_sub_epi32(u, _mm256_set1_epi32(0x3f3504f3));
    __m256 k = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_srai_epi32(t, 23)),
                             _mm256_and_ps(sub, _mm256_set1_ps(23.0f)));
    __m256i mb = _mm256_sub_epi32(u, _mm256_and_si256(t, _mm256_set1_epi32((int)0xff800000u)));
    __m256 f = _mm256_sub_ps(_mm256_castsi256_ps(mb), _mm256_set1_ps(1.0f));
    __m256 z = _mm256_mul_ps(f, f);
    __m256 y = _mm256_set1_ps(7.0376836292E-2f);
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(-1.1514610310E-1f));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(1.1676998740E-1f));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(-1.2420140846E-1f));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(1.4249322787E-1f));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(-1.6668057665E-1f));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(2.0000714765E-1f));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(-2.4999993993E-1f));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(3.3333331174E-1f));
    y = _mm256_mul_ps(_mm256_mul_ps(y, f), z);
    y = _mm256_fmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), y);
    y = _mm256_fmadd_ps(_mm256_set1_ps(-0.5f), z, y);
    __m256 r = _mm256_fmadd_ps(k, _mm256_set1_ps(0.693359375f), _mm256_add_ps(f, y));
    __m256 sp = _mm256_blendv_ps(_mm256_add_ps(x, x), _mm256_set1_ps(NAN),
                                 _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
    sp = _mm256_blendv_ps(sp, _mm256_set1_ps(-INFINITY), _mm256_cmp_ps(x, zero, _CMP_EQ_OQ));
    __m256 ok = _mm256_and_ps(_mm256_cmp_ps(x, zero, _CMP_GT_OQ), _mm256_cmp_ps(x, inf, _CMP_LT_OQ));
    return _mm256_blendv_ps(sp, r, ok);
}
#endif

#endif
