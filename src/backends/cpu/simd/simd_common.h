// Internal (CPU backend, simd/): helpers shared by the kernel files. Everything here is
// branch-free and inline so loops that use it vectorize; both builds (portable and AVX2) run
// the same integer/IEEE operations, so their results are bit-identical.
#ifndef HG_BACKENDS_CPU_SIMD_COMMON_H
#define HG_BACKENDS_CPU_SIMD_COMMON_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "backends/cpu/cpu_kernels.h"
#include "base/vmath.h"   // hg_f2u and the other bit-pattern helpers

// The build compiles simd/*.c twice: -DHG_SIMD_SUFFIX=generic and (x86-64) =avx2, and the
// kernels_*.c files also with =avx512.
#ifndef HG_SIMD_SUFFIX
#error "simd/ sources are compiled by CMakeLists.txt with -DHG_SIMD_SUFFIX=generic, =avx2 or =avx512"
#endif
#ifndef HG_SIMD_NAME
#define HG_SIMD_NAME(x) HG_CAT(x, HG_SIMD_SUFFIX)
#endif

// Each lane is independent: an output array may be the very same array as an input (a register
// used as source and destination), which is no loop-carried dependence.
#if defined(__clang__)
#define HG_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define HG_IVDEP _Pragma("GCC ivdep")
#else
#define HG_IVDEP
#endif


// float -> binary16 bits, round to nearest even; NaN keeps its top payload bits (so f16 values
// held as f32 in registers come back bit-exact) and is made quiet only when those bits are
// zero, so it never turns into inf (the same results as hg_f32_to_f16 in base/half.c).
static inline uint32_t hg_v_f32_to_f16(float f) {
    uint32_t x = hg_f2u(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    // Normal f16 range: rebias the exponent and round the 13 dropped bits to nearest even.
    uint32_t nrm = (x + 0xc8000fffu + ((x >> 13) & 1u)) >> 13;
    // Below 2^-14 the result is subnormal: adding 0.5f aligns the 10 kept bits at the bottom
    // and the FPU rounds to nearest even for us.
    uint32_t sub = hg_f2u(hg_u2f(x) + 0.5f) - 0x3f000000u;
    uint32_t pay = (x >> 13) & 0x3ffu;
    uint32_t spec = x > 0x7f800000u ? (0x7c00u | pay | (pay ? 0u : 0x200u)) : 0x7c00u;
    uint32_t o = x < (113u << 23) ? sub : nrm;
    o = x >= (143u << 23) ? spec : o;
    return o | sign;
}

// binary16 bits -> float (exact).
static inline float hg_v_f16_to_f32(uint32_t h) {
    uint32_t o = (h & 0x7fffu) << 13;
    uint32_t e = o & 0x0f800000u;
    o += 0x38000000u;
    uint32_t infnan = o + 0x38000000u;
    uint32_t den = hg_f2u(hg_u2f(o + 0x00800000u) - hg_u2f(0x38800000u));
    o = e == 0x0f800000u ? infnan : o;
    o = e == 0 ? den : o;
    return hg_u2f(o | ((h & 0x8000u) << 16));
}

// Rounds a float to the nearest binary16 value (as a float).
static inline float hg_v_round_f16(float f) { return hg_v_f16_to_f32(hg_v_f32_to_f16(f)); }

// float -> bfloat16 bits, round to nearest even; NaN keeps its top payload bits (quiet only
// when they are zero, so it never turns into inf).
static inline uint32_t hg_v_f32_to_bf16(float f) {
    uint32_t u = hg_f2u(f);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = (u >> 16) | ((u >> 16) & 0x7fu ? 0u : 0x40u);
    return (u & 0x7fffffffu) > 0x7f800000u ? nan : r;
}
static inline float hg_v_round_bf16(float f) { return hg_u2f(hg_v_f32_to_bf16(f) << 16); }

#endif
