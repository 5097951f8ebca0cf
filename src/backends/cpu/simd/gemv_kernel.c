// Skinny SGEMM kernels (see backends/cpu/gemm/gemm.h): C = alpha * S * L + beta * C where S, the
// small operand, has at most HG_SGEMM_SKINNY_GROUP rows and L, the large one, is read once, in
// place, without packing. A packed GEMM copies all of L into micro-panels for one or two rows of
// C (a 1 x 4096 . 4096 x 4096 product packs 64 MiB to use each value once).
//
// Two layouts of L (k x n), as its memory allows:
//   rows: L(p, j) at l[p*ldl + j] - each step p is a contiguous row; C's columns are walked in
//         blocks whose accumulators stay in L1 while four rows of L stream past;
//   dots: L(p, j) at l[j*ldl + p] - each column j is contiguous; every C value is a dot product
//         of S's row with that column, summed in vector lanes.
// Both builds use GCC vector types: 8 floats in the AVX2 build, 4 (SSE2) in the portable one;
// sums are formed in a fixed order per build, so results repeat exactly from call to call.
#include "backends/cpu/simd/simd_common.h"
#include "backends/cpu/gemm/gemm.h"

#if defined(HG_SIMD_AVX2)
#include <immintrin.h>
#define VL 8
#else
#define VL 4
#endif
typedef float vf __attribute__((vector_size(VL * sizeof(float))));

// acc + x * y, fused where the build has FMA.
static inline vf fmav(vf x, vf y, vf acc) {
#if defined(HG_SIMD_AVX2)
    return (vf)_mm256_fmadd_ps((__m256)x, (__m256)y, (__m256)acc);
#else
    return acc + x * y;
#endif
}

static inline vf ldv(const float* p) {
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void stv(float* p, vf v) { memcpy(p, &v, sizeof v); }

static inline vf splat(float x) {
    vf v;
    for (int i = 0; i < VL; i++) v[i] = x;
    return v;
}

static inline float hsum(vf v) {
    float t = 0.0f;
    for (int i = 0; i < VL; i++) t += v[i];
    return t;
}

// Accumulators of the rows layout: 16 KiB, which stay in L1. M rows of S get blocks of
// ROWS_ACC / M columns, so each step reads runs of 4 KiB (M = 4) to 16 KiB (M = 1) of L's rows.
// (A fixed 1,024-column block read B in 4 KiB runs, 16 KiB apart, each a new page for the
// prefetchers: docs/performance.md.)
#define ROWS_ACC (HG_SGEMM_SKINNY_GROUP * 1024)

// out = alpha * acc + beta * out for one row of C (beta == 0 does not read C).
static inline void store_row(float* c, int64_t c_cs, const float* acc, int64_t w, float alpha,
                             float beta) {
    for (int64_t j = 0; j < w; j++) {
        float* o = c + j * c_cs;
        *o = beta == 0.0f ? alpha * acc[j] : alpha * acc[j] + beta * *o;
    }
}

// Rows layout, M rows of S (a compile-time constant after inlining).
static inline __attribute__((always_inline)) void rows_m(
    int M, int64_t n, int64_t k, float alpha, const float* s, int64_t s_rs, int64_t s_cs,
    const float* l, int64_t ldl, float beta, float* c, int64_t c_rs, int64_t c_cs) {
    float accbuf[ROWS_ACC] __attribute__((aligned(32)));
    const int64_t block = ROWS_ACC / M;
    float* acc[HG_SGEMM_SKINNY_GROUP];
    for (int i = 0; i < M; i++) acc[i] = accbuf + i * block;
    for (int64_t j0 = 0; j0 < n; j0 += block) {
        int64_t w = n - j0 < block ? n - j0 : block;
        int64_t wv = w / VL * VL;
        for (int i = 0; i < M; i++) memset(acc[i], 0, (size_t)w * sizeof(float));
        int64_t p = 0;
        for (; p + 4 <= k; p += 4) {
            const float* l0 = l + p * ldl + j0;
            const float* l1 = l0 + ldl;
            const float* l2 = l1 + ldl;
            const float* l3 = l2 + ldl;
            vf a[HG_SGEMM_SKINNY_GROUP][4];
            for (int i = 0; i < M; i++)
                for (int q = 0; q < 4; q++) a[i][q] = splat(s[i * s_rs + (p + q) * s_cs]);
            for (int64_t j = 0; j < wv; j += VL) {
                vf b0 = ldv(l0 + j), b1 = ldv(l1 + j), b2 = ldv(l2 + j), b3 = ldv(l3 + j);
                for (int i = 0; i < M; i++) {
                    vf t = fmav(a[i][1], b1, fmav(a[i][0], b0, ldv(acc[i] + j)));
                    stv(acc[i] + j, fmav(a[i][3], b3, fmav(a[i][2], b2, t)));
                }
            }
            for (int64_t j = wv; j < w; j++)
                for (int i = 0; i < M; i++)
                    acc[i][j] += a[i][0][0] * l0[j] + a[i][1][0] * l1[j] + a[i][2][0] * l2[j] +
                                 a[i][3][0] * l3[j];
        }
        for (; p < k; p++) {
            const float* lp = l + p * ldl + j0;
            for (int i = 0; i < M; i++) {
                float ai = s[i * s_rs + p * s_cs];
                for (int64_t j = 0; j < w; j++) acc[i][j] += ai * lp[j];
            }
        }
        for (int i = 0; i < M; i++)
            store_row(c + i * c_rs + j0 * c_cs, c_cs, acc[i], w, alpha, beta);
    }
}

void HG_SIMD_NAME(hg_sgemm_skinny_rows_)(int m, int64_t n, int64_t k, float alpha, const float* s,
                                         int64_t s_rs, int64_t s_cs, const float* l, int64_t ldl,
                                         float beta, float* c, int64_t c_rs, int64_t c_cs) {
    switch (m) {
    case 1: rows_m(1, n, k, alpha, s, s_rs, s_cs, l, ldl, beta, c, c_rs, c_cs); break;
    case 2: rows_m(2, n, k, alpha, s, s_rs, s_cs, l, ldl, beta, c, c_rs, c_cs); break;
    case 3: rows_m(3, n, k, alpha, s, s_rs, s_cs, l, ldl, beta, c, c_rs, c_cs); break;
    default: rows_m(4, n, k, alpha, s, s_rs, s_cs, l, ldl, beta, c, c_rs, c_cs); break;
    }
}

// Dots layout, M rows of S and G columns of L at a time (M * G >= 4 where M allows: each S
// load then feeds G products, and 2 * M * G independent sums keep both FMA pipes busy). S's rows
// are contiguous (the driver copies them so), so the loop reads only contiguous streams.
static inline __attribute__((always_inline)) void dots_block(
    int M, int G, int64_t k, float alpha, const float* const* srow, const float* l, int64_t ldl,
    float beta, float* c, int64_t c_rs, int64_t c_cs) {
    int64_t kv = k / (2 * VL) * (2 * VL);
    vf acc[HG_SGEMM_SKINNY_GROUP][4][2];
    for (int i = 0; i < M; i++)
        for (int g = 0; g < G; g++) acc[i][g][0] = acc[i][g][1] = splat(0.0f);
    for (int64_t p = 0; p < kv; p += 2 * VL) {
        vf b[4][2];
        for (int g = 0; g < G; g++) {
            b[g][0] = ldv(l + g * ldl + p);
            b[g][1] = ldv(l + g * ldl + p + VL);
        }
        for (int i = 0; i < M; i++) {
            vf s0 = ldv(srow[i] + p), s1 = ldv(srow[i] + p + VL);
            for (int g = 0; g < G; g++) {
                acc[i][g][0] = fmav(s0, b[g][0], acc[i][g][0]);
                acc[i][g][1] = fmav(s1, b[g][1], acc[i][g][1]);
            }
        }
    }
    for (int i = 0; i < M; i++)
        for (int g = 0; g < G; g++) {
            const float* lg = l + g * ldl;
            float t = hsum(acc[i][g][0] + acc[i][g][1]);
            for (int64_t p = kv; p < k; p++) t += srow[i][p] * lg[p];
            float* o = c + i * c_rs + g * c_cs;
            *o = beta == 0.0f ? alpha * t : alpha * t + beta * *o;
        }
}

static inline __attribute__((always_inline)) void dots_m(
    int M, int64_t n, int64_t k, float alpha, const float* const* srow, const float* l,
    int64_t ldl, float beta, float* c, int64_t c_rs, int64_t c_cs) {
    const int G = M == 1 ? 4 : M == 2 ? 2 : 1;
    int64_t j = 0;
    for (; j + G <= n; j += G)
        dots_block(M, G, k, alpha, srow, l + j * ldl, ldl, beta, c + j * c_cs, c_rs, c_cs);
    for (; j < n; j++)
        dots_block(M, 1, k, alpha, srow, l + j * ldl, ldl, beta, c + j * c_cs, c_rs, c_cs);
}

void HG_SIMD_NAME(hg_sgemm_skinny_dots_)(int m, int64_t n, int64_t k, float alpha,
                                         const float* const* srow, const float* l, int64_t ldl,
                                         float beta, float* c, int64_t c_rs, int64_t c_cs) {
    const float* r[HG_SGEMM_SKINNY_GROUP];
    for (int i = 0; i < HG_SGEMM_SKINNY_GROUP; i++) r[i] = srow[i < m ? i : 0];
    switch (m) {
    case 1: dots_m(1, n, k, alpha, r, l, ldl, beta, c, c_rs, c_cs); break;
    case 2: dots_m(2, n, k, alpha, r, l, ldl, beta, c, c_rs, c_cs); break;
    case 3: dots_m(3, n, k, alpha, r, l, ldl, beta, c, c_rs, c_cs); break;
    default: dots_m(4, n, k, alpha, r, l, ldl, beta, c, c_rs, c_cs); break;
    }
}
