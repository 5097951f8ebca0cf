// SGEMM micro-kernels (see backends/cpu/gemm/gemm.h): one MR x NR = 6 x 16 tile of C from a
// packed A micro-panel (6 floats per k step) and a packed B micro-panel (16 floats per k step).
// AVX2+FMA: 12 ymm accumulators + 2 for the B row + 1 broadcast = 15 of the 16 registers, and
// per k step 2 loads + 6 broadcasts feed 12 FMAs (6 cycles on two FMA pipes), so the loads and
// the front end keep up and the loop runs at the FMA rate.
#include "backends/cpu/simd/simd_common.h"
#include "backends/cpu/gemm/gemm.h"


#if defined(HG_SIMD_AVX2)
#include <immintrin.h>

// Writes one 8-wide part of a C row: alpha * acc (+ beta * c).
static inline void store8(float* c, __m256 acc, __m256 va, __m256 vb, int beta0) {
    __m256 r = _mm256_mul_ps(acc, va);
    if (!beta0) r = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c), r);
    _mm256_storeu_ps(c, r);
}

void HG_SIMD_NAME(hg_sgemm_ukernel_)(int64_t kc, const float* a, const float* b, float* c,
                                     int64_t ldc, float alpha, float beta) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    // The C tile is needed only at the end: start fetching it now so the stores do not wait.
    for (int i = 0; i < 6; i++) {
        _mm_prefetch((const char*)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char*)(c + i * ldc + 15), _MM_HINT_T0);
    }
#define HG_GEMM_STEP(p)                                                    \
    do {                                                                   \
        __m256 b0 = _mm256_load_ps(b + (p) * 16);                          \
        __m256 b1 = _mm256_load_ps(b + (p) * 16 + 8);                      \
        __m256 av = _mm256_broadcast_ss(a + (p) * 6 + 0);                  \
        c00 = _mm256_fmadd_ps(av, b0, c00); c01 = _mm256_fmadd_ps(av, b1, c01); \
        av = _mm256_broadcast_ss(a + (p) * 6 + 1);                         \
        c10 = _mm256_fmadd_ps(av, b0, c10); c11 = _mm256_fmadd_ps(av, b1, c11); \
        av = _mm256_broadcast_ss(a + (p) * 6 + 2);                         \
        c20 = _mm256_fmadd_ps(av, b0, c20); c21 = _mm256_fmadd_ps(av, b1, c21); \
        av = _mm256_broadcast_ss(a + (p) * 6 + 3);                         \
        c30 = _mm256_fmadd_ps(av, b0, c30); c31 = _mm256_fmadd_ps(av, b1, c31); \
        av = _mm256_broadcast_ss(a + (p) * 6 + 4);                         \
        c40 = _mm256_fmadd_ps(av, b0, c40); c41 = _mm256_fmadd_ps(av, b1, c41); \
        av = _mm256_broadcast_ss(a + (p) * 6 + 5);                         \
        c50 = _mm256_fmadd_ps(av, b0, c50); c51 = _mm256_fmadd_ps(av, b1, c51); \
    } while (0)
    int64_t p = 0;
    for (; p + 4 <= kc; p += 4) {
        // B runs ahead 8 steps (512 bytes) in L1; the packed panels are sequential, so this
        // only hides the L2 latency at the start of a panel.
        _mm_prefetch((const char*)(b + 128), _MM_HINT_T0);
        _mm_prefetch((const char*)(b + 144), _MM_HINT_T0);
        HG_GEMM_STEP(0);
        HG_GEMM_STEP(1);
        HG_GEMM_STEP(2);
        HG_GEMM_STEP(3);
        a += 24;
        b += 64;
    }
    for (; p < kc; p++) {
        HG_GEMM_STEP(0);
        a += 6;
        b += 16;
    }
#undef HG_GEMM_STEP
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    int beta0 = beta == 0.0f;
    store8(c, c00, va, vb, beta0); store8(c + 8, c01, va, vb, beta0); c += ldc;
    store8(c, c10, va, vb, beta0); store8(c + 8, c11, va, vb, beta0); c += ldc;
    store8(c, c20, va, vb, beta0); store8(c + 8, c21, va, vb, beta0); c += ldc;
    store8(c, c30, va, vb, beta0); store8(c + 8, c31, va, vb, beta0); c += ldc;
    store8(c, c40, va, vb, beta0); store8(c + 8, c41, va, vb, beta0); c += ldc;
    store8(c, c50, va, vb, beta0); store8(c + 8, c51, va, vb, beta0);
}

// AVX-512F, 16 x 16: 16 zmm accumulators; per k step one B load and 16 FMAs whose A operand
// is an embedded broadcast from memory, so per 256 FLOPs the core decodes 17 instructions instead
// of 2 x 20 with ymm. On Zen 4 (512-bit ops on 256-bit pipes) the FMA rate is the same as AVX2,
// but the lighter front end and load traffic let the loop sit closer to it. Compiled here with
// a target attribute and used only where the CPU (and OS) support AVX-512F.
__attribute__((target("avx512f"))) void hg_sgemm_ukernel16_avx512(
    int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
    __m512 acc[16];
    for (int i = 0; i < 16; i++) {
        acc[i] = _mm512_setzero_ps();
        _mm_prefetch((const char*)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char*)(c + i * ldc + 15), _MM_HINT_T0);
    }
    for (int64_t p = 0; p < kc; p++) {
        __m512 bv = _mm512_load_ps(b);
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i]), bv, acc[i]);
        a += 16;
        b += 16;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int i = 0; i < 16; i++) {
        __m512 r = _mm512_mul_ps(acc[i], va);
        if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + i * ldc), r);
        _mm512_storeu_ps(c + i * ldc, r);
    }
}

#else

// Portable: the 16-wide inner loops vectorize with whatever the baseline ISA offers.
void HG_SIMD_NAME(hg_sgemm_ukernel_)(int64_t kc, const float* a, const float* b, float* c,
                                     int64_t ldc, float alpha, float beta) {
    float acc[6][16];
    memset(acc, 0, sizeof acc);
    for (int64_t p = 0; p < kc; p++) {
        const float* bp = b + p * 16;
        for (int i = 0; i < 6; i++) {
            float ai = a[p * 6 + i];
            for (int j = 0; j < 16; j++) acc[i][j] += ai * bp[j];
        }
    }
    for (int i = 0; i < 6; i++) {
        float* ci = c + i * ldc;
        if (beta == 0.0f) {
            for (int j = 0; j < 16; j++) ci[j] = alpha * acc[i][j];
        } else {
            for (int j = 0; j < 16; j++) ci[j] = alpha * acc[i][j] + beta * ci[j];
        }
    }
}

#endif
