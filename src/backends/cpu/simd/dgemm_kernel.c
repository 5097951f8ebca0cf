// DGEMM micro-kernels (gemm/dgemm.c): one MR x NR tile of C from a
// packed A micro-panel (MR doubles per k step, a[p*MR + i]) and a packed B micro-panel (NR
// doubles per k step, b[p*NR + j]), both 64-byte aligned. The tile is written (not
// accumulated) row-major into c with row stride NR; the driver adds it to C.
//   generic build: 4 x 8 in plain C (the compiler vectorizes the j loop for the baseline ISA)
//   AVX2 build:    6 x 8 with FMA: 12 ymm accumulators + 2 B + 1 broadcast = 15 of 16 registers
//                  and, by a target attribute, 12 x 16 AVX-512F (24 zmm accumulators; per k
//                  step 2 B loads and 12 broadcasts feed 24 FMAs).
#include <stdint.h>

#if defined(HG_SIMD_AVX2)
#include <immintrin.h>

void hg_dgemm_ukernel_avx2(int64_t kc, const double* a, const double* b, double* c);
void hg_dgemm_ukernel_avx512(int64_t kc, const double* a, const double* b, double* c);

void hg_dgemm_ukernel_avx2(int64_t kc, const double* a, const double* b, double* c) {
    __m256d c00 = _mm256_setzero_pd(), c01 = _mm256_setzero_pd();
    __m256d c10 = _mm256_setzero_pd(), c11 = _mm256_setzero_pd();
    __m256d c20 = _mm256_setzero_pd(), c21 = _mm256_setzero_pd();
    __m256d c30 = _mm256_setzero_pd(), c31 = _mm256_setzero_pd();
    __m256d c40 = _mm256_setzero_pd(), c41 = _mm256_setzero_pd();
    __m256d c50 = _mm256_setzero_pd(), c51 = _mm256_setzero_pd();
    for (int64_t p = 0; p < kc; p++) {
        __m256d b0 = _mm256_load_pd(b), b1 = _mm256_load_pd(b + 4);
        __m256d av = _mm256_broadcast_sd(a + 0);
        c00 = _mm256_fmadd_pd(av, b0, c00); c01 = _mm256_fmadd_pd(av, b1, c01);
        av = _mm256_broadcast_sd(a + 1);
        c10 = _mm256_fmadd_pd(av, b0, c10); c11 = _mm256_fmadd_pd(av, b1, c11);
        av = _mm256_broadcast_sd(a + 2);
        c20 = _mm256_fmadd_pd(av, b0, c20); c21 = _mm256_fmadd_pd(av, b1, c21);
        av = _mm256_broadcast_sd(a + 3);
        c30 = _mm256_fmadd_pd(av, b0, c30); c31 = _mm256_fmadd_pd(av, b1, c31);
        av = _mm256_broadcast_sd(a + 4);
        c40 = _mm256_fmadd_pd(av, b0, c40); c41 = _mm256_fmadd_pd(av, b1, c41);
        av = _mm256_broadcast_sd(a + 5);
        c50 = _mm256_fmadd_pd(av, b0, c50); c51 = _mm256_fmadd_pd(av, b1, c51);
        a += 6;
        b += 8;
    }
    _mm256_storeu_pd(c + 0, c00);  _mm256_storeu_pd(c + 4, c01);
    _mm256_storeu_pd(c + 8, c10);  _mm256_storeu_pd(c + 12, c11);
    _mm256_storeu_pd(c + 16, c20); _mm256_storeu_pd(c + 20, c21);
    _mm256_storeu_pd(c + 24, c30); _mm256_storeu_pd(c + 28, c31);
    _mm256_storeu_pd(c + 32, c40); _mm256_storeu_pd(c + 36, c41);
    _mm256_storeu_pd(c + 40, c50); _mm256_storeu_pd(c + 44, c51);
}

// Only called where the CPU and OS support AVX-512F (checked by the driver).
__attribute__((target("avx512f"))) void hg_dgemm_ukernel_avx512(int64_t kc, const double* a,
                                                                const double* b, double* c) {
    __m512d acc0[12], acc1[12];
    for (int i = 0; i < 12; i++) acc0[i] = acc1[i] = _mm512_setzero_pd();
    for (int64_t p = 0; p < kc; p++) {
        __m512d b0 = _mm512_load_pd(b), b1 = _mm512_load_pd(b + 8);
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++) {
            __m512d av = _mm512_set1_pd(a[i]);
            acc0[i] = _mm512_fmadd_pd(av, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_pd(av, b1, acc1[i]);
        }
        a += 12;
        b += 16;
    }
    for (int i = 0; i < 12; i++) {
        _mm512_storeu_pd(c + i * 16, acc0[i]);
        _mm512_storeu_pd(c + i * 16 + 8, acc1[i]);
    }
}

#else

void hg_dgemm_ukernel_generic(int64_t kc, const double* a, const double* b, double* c);

void hg_dgemm_ukernel_generic(int64_t kc, const double* a, const double* b, double* c) {
    double acc[4][8] = {{0}};
    for (int64_t p = 0; p < kc; p++) {
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 8; j++) acc[i][j] += a[i] * b[j];
        a += 4;
        b += 8;
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++) c[i * 8 + j] = acc[i][j];
}

#endif
