// Internal: vmath.h's f32 exp on 16 lanes of an AVX-512 register, bit for bit hg_vm_exp_f32
// (the same clamp, reduction and polynomial; the scaling by 2^n as one vscalefps, a single
// rounding as hg_vm_scale_f32's two-step scaling gives: exact for normal results, one rounding
// for subnormal ones; 18 instructions per 16 elements instead of 26). For AVX-512 builds and
// functions with the AVX-512 target; test_math_ulp checks the kernels built on it bit for bit.
#ifndef HG_BASE_VMATH_ZMM_H
#define HG_BASE_VMATH_ZMM_H

#include "base/cpu_targets.h"
#include "base/vmath.h"

#if defined(HG_HAVE_CPU_TARGETS)
#include <immintrin.h>


// e^xc for |xc| <= 110 (not NaN), as hg_vm_exp_core_f32.
HG_TARGET_AVX512 static inline __m512 hg_vm_exp_core_zmm(__m512 xc) {
    const __m512 magic = _mm512_set1_ps(HG_VM_ROUND_MAGIC_F);
    __m512 t = _mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), magic);
    __m512 k = _mm512_sub_ps(t, magic);
    __m512 r = _mm512_fmadd_ps(k, _mm512_set1_ps(-0.693145751953125f), xc);
    r = _mm512_fmadd_ps(k, _mm512_set1_ps(-1.428606765330187045e-06f), r);
    __m512 p = _mm512_set1_ps(0.000198527617612853646278381f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.00139304355252534151077271f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.00833336077630519866943359f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.0416664853692054748535156f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.166666671633720397949219f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(_mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f)), k);
}

// e^x for any x, as hg_vm_exp_f32: |x| clamped to 110 on the bit patterns, NaN gives x + x.
HG_TARGET_AVX512 static inline __m512 hg_vm_exp_zmm(__m512 x) {
    const __m512i absm = _mm512_set1_epi32(0x7fffffff), lim = _mm512_set1_epi32(0x42dc0000);
    __m512i u = _mm512_castps_si512(x);
    __m512i m = _mm512_min_epu32(_mm512_and_si512(u, absm), lim);
    __m512 xc = _mm512_castsi512_ps(_mm512_or_si512(m, _mm512_andnot_si512(absm, u)));
    __m512 y = hg_vm_exp_core_zmm(xc);
    return _mm512_mask_add_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x, x);
}
#endif

#endif
