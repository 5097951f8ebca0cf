// SGEMM micro-kernels (see backends/cpu/gemm/gemm.h): one MR x NR = 6 x 16 tile of C from a
// packed A micro-panel (6 floats per k step) and a packed B micro-panel (16 floats per k step).
// AVX2+FMA: 12 ymm accumulators + 2 for the B row + 2 broadcasts = all 16 registers, and per k
// step 2 loads + 6 broadcasts feed 12 FMAs (6 cycles on two FMA pipes), so the loads and the
// front end keep up and the loop runs at the FMA rate.
#include "backends/cpu/simd/simd_common.h"
#include "backends/cpu/gemm/gemm.h"


#if defined(HG_SIMD_AVX2)
#include <immintrin.h>

void HG_SIMD_NAME(hg_sgemm_ukernel_)(int64_t kc, const float* a, const float* b, float* c,
                                     int64_t ldc, float alpha, float beta) {
    // The C tile is needed only at the end: start fetching it now so the stores do not wait.
    for (int i = 0; i < 6; i++) {
        _mm_prefetch((const char*)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char*)(c + i * ldc + 15), _MM_HINT_T0);
    }
    // The k loop in inline assembly: with intrinsics GCC rotates the accumulators through
    // registers and reloads broadcasts ahead, and the loop ran at 0.90 of the FMA peak (105
    // GFLOP/s on a Zen 4 core, L1-resident panels); this schedule runs at 0.98 (115). Registers:
    // accumulators ymm4-15 (row i in ymm4+2i, ymm5+2i), the B row in ymm0-1, A broadcasts in
    // ymm2-3; the next step's B row is loaded right after its last use in this step.
    float acc[96] __attribute__((aligned(32)));
    __asm__ volatile(
        "vxorps %%ymm4, %%ymm4, %%ymm4\n\t vxorps %%ymm5, %%ymm5, %%ymm5\n\t"
        "vxorps %%ymm6, %%ymm6, %%ymm6\n\t vxorps %%ymm7, %%ymm7, %%ymm7\n\t"
        "vxorps %%ymm8, %%ymm8, %%ymm8\n\t vxorps %%ymm9, %%ymm9, %%ymm9\n\t"
        "vxorps %%ymm10, %%ymm10, %%ymm10\n\t vxorps %%ymm11, %%ymm11, %%ymm11\n\t"
        "vxorps %%ymm12, %%ymm12, %%ymm12\n\t vxorps %%ymm13, %%ymm13, %%ymm13\n\t"
        "vxorps %%ymm14, %%ymm14, %%ymm14\n\t vxorps %%ymm15, %%ymm15, %%ymm15\n\t"
        "test %[k], %[k]\n\t jle 2f\n\t"
        "vmovaps (%[b]), %%ymm0\n\t vmovaps 32(%[b]), %%ymm1\n\t"
        ".p2align 5\n"
        "1:\n\t"
        "vbroadcastss (%[a]), %%ymm2\n\t vbroadcastss 4(%[a]), %%ymm3\n\t"
        "vfmadd231ps %%ymm0, %%ymm2, %%ymm4\n\t vfmadd231ps %%ymm1, %%ymm2, %%ymm5\n\t"
        "vfmadd231ps %%ymm0, %%ymm3, %%ymm6\n\t vfmadd231ps %%ymm1, %%ymm3, %%ymm7\n\t"
        "vbroadcastss 8(%[a]), %%ymm2\n\t vbroadcastss 12(%[a]), %%ymm3\n\t"
        "vfmadd231ps %%ymm0, %%ymm2, %%ymm8\n\t vfmadd231ps %%ymm1, %%ymm2, %%ymm9\n\t"
        "vfmadd231ps %%ymm0, %%ymm3, %%ymm10\n\t vfmadd231ps %%ymm1, %%ymm3, %%ymm11\n\t"
        "vbroadcastss 16(%[a]), %%ymm2\n\t vbroadcastss 20(%[a]), %%ymm3\n\t"
        "vfmadd231ps %%ymm0, %%ymm2, %%ymm12\n\t vfmadd231ps %%ymm1, %%ymm2, %%ymm13\n\t"
        "dec %[k]\n\t jz 3f\n\t"
        "vfmadd231ps %%ymm0, %%ymm3, %%ymm14\n\t vmovaps 64(%[b]), %%ymm0\n\t"
        "vfmadd231ps %%ymm1, %%ymm3, %%ymm15\n\t vmovaps 96(%[b]), %%ymm1\n\t"
        "add $24, %[a]\n\t add $64, %[b]\n\t"
        "jmp 1b\n"
        "3:\n\t"   // the last step: no B row past the panel's end is read
        "vfmadd231ps %%ymm0, %%ymm3, %%ymm14\n\t vfmadd231ps %%ymm1, %%ymm3, %%ymm15\n"
        "2:\n\t"
        "vmovaps %%ymm4, (%[o])\n\t vmovaps %%ymm5, 32(%[o])\n\t"
        "vmovaps %%ymm6, 64(%[o])\n\t vmovaps %%ymm7, 96(%[o])\n\t"
        "vmovaps %%ymm8, 128(%[o])\n\t vmovaps %%ymm9, 160(%[o])\n\t"
        "vmovaps %%ymm10, 192(%[o])\n\t vmovaps %%ymm11, 224(%[o])\n\t"
        "vmovaps %%ymm12, 256(%[o])\n\t vmovaps %%ymm13, 288(%[o])\n\t"
        "vmovaps %%ymm14, 320(%[o])\n\t vmovaps %%ymm15, 352(%[o])\n\t"
        : [a] "+r"(a), [b] "+r"(b), [k] "+r"(kc)
        : [o] "r"(acc)
        : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
          "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    for (int i = 0; i < 6; i++, c += ldc)
        for (int h = 0; h < 16; h += 8) {
            __m256 r = _mm256_mul_ps(_mm256_load_ps(acc + i * 16 + h), va);
            if (beta != 0.0f) r = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + h), r);
            _mm256_storeu_ps(c + h, r);
        }
}

// AVX-512F, 8 x 32: 16 zmm accumulators; per k step two B loads and 8 broadcasts feed 16 FMAs.
// A 16 x 16 tile (one B load, 16 FMAs with an embedded broadcast of A) needs 17 loads per 16
// FMAs: on cores with two load ports and two 512-bit FMA pipes the loads bound it. 8 rows
// divide every batch that is a multiple of 8; 12 rows fit the 64-row products users have
// badly (docs/performance.md).
// The 8 x 32 tile: row i of A at step p is a[i * rs + p * cs] (a packed panel: rs 1, cs 8; a
// row-major A read in place: rs lda, cs 1), B a packed 32-wide panel.
static inline __attribute__((always_inline, target("avx512f"))) void tile8x32(
    int64_t kc, const float* a, int64_t rs, int64_t cs, const float* b, float* c, int64_t ldc,
    float alpha, float beta) {
    __m512 acc0[8], acc1[8];
    for (int i = 0; i < 8; i++) {
        acc0[i] = _mm512_setzero_ps();
        acc1[i] = _mm512_setzero_ps();
        _mm_prefetch((const char*)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char*)(c + i * ldc + 31), _MM_HINT_T0);
    }
    for (int64_t p = 0; p < kc; p++) {
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            __m512 ai = _mm512_set1_ps(a[i * rs]);
            acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
        }
        a += cs;
        b += 32;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int i = 0; i < 8; i++) {
        __m512 r0 = _mm512_mul_ps(acc0[i], va), r1 = _mm512_mul_ps(acc1[i], va);
        if (beta != 0.0f) {
            r0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + i * ldc), r0);
            r1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + i * ldc + 16), r1);
        }
        _mm512_storeu_ps(c + i * ldc, r0);
        _mm512_storeu_ps(c + i * ldc + 16, r1);
    }
}

__attribute__((target("avx512f"))) void hg_sgemm_ukernel8x32_avx512(
    int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
    tile8x32(kc, a, 1, 8, b, c, ldc, alpha, beta);
}

// hg_sgemm_ukernel8x32_avx512 reading a row-major A in place: row i of the tile is
// a[i*lda + p]. x W^T and dY W need no packed copy of A then; the 8 rows stream through L1 as
// the packed panel's one stream would (each line serves 16 steps), and the two threads of a
// column split no longer each pack the whole of A (docs/performance.md).
__attribute__((target("avx512f"))) void hg_sgemm_ukernel8x32_lda_avx512(
    int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, float alpha,
    float beta) {
    tile8x32(kc, a, lda, 1, b, c, ldc, alpha, beta);
}

// Packs rows [0, mr) (mr <= 8) of a row-major A block (row stride lda < 2^31 / 16 elements)
// over kc steps into one 8-row micro-panel, dst[p*8 + i]; rows past mr are zero. Full panels go
// 16 steps at a time through an in-register 8 x 16 transpose (32 shuffles per 128 values); the
// rest, one gather per step. A gather per step throughout was 14% of a 64 x 784 x 256 product.
__attribute__((target("avx512f"))) void hg_sgemm_pack_a8_avx512(int64_t mr, int64_t kc,
                                                                 const float* a, int64_t lda,
                                                                 float* dst) {
    int64_t p = 0;
    if (mr == 8) {
        for (; p + 16 <= kc; p += 16) {
            __m512 r[8], u[4], v[4];
            for (int i = 0; i < 8; i++) r[i] = _mm512_loadu_ps(a + i * lda + p);
            // Per 128-bit lane L: u[j] holds rows 0-3 of step 4L + j, v[j] rows 4-7.
            for (int h = 0; h < 2; h++) {
                __m512* o = h ? v : u;
                const __m512* q = r + 4 * h;
                __m512 t0 = _mm512_unpacklo_ps(q[0], q[1]), t1 = _mm512_unpackhi_ps(q[0], q[1]);
                __m512 t2 = _mm512_unpacklo_ps(q[2], q[3]), t3 = _mm512_unpackhi_ps(q[2], q[3]);
                o[0] = _mm512_shuffle_ps(t0, t2, 0x44);
                o[1] = _mm512_shuffle_ps(t0, t2, 0xEE);
                o[2] = _mm512_shuffle_ps(t1, t3, 0x44);
                o[3] = _mm512_shuffle_ps(t1, t3, 0xEE);
            }
            // Step 4L + j goes to dst[(p + 4L + j) * 8]: lanes u[j][L], v[j][L] side by side,
            // two steps (j, j + 1) per 16-float store.
            for (int j = 0; j < 4; j += 2) {
                __m512 x01 = _mm512_shuffle_f32x4(u[j], v[j], 0x44);       // u[j] L0 L1, v[j] L0 L1
                __m512 y01 = _mm512_shuffle_f32x4(u[j + 1], v[j + 1], 0x44);
                __m512 x23 = _mm512_shuffle_f32x4(u[j], v[j], 0xEE);       // lanes 2 and 3
                __m512 y23 = _mm512_shuffle_f32x4(u[j + 1], v[j + 1], 0xEE);
                float* d = dst + (p + j) * 8;
                _mm512_storeu_ps(d + 0 * 32, _mm512_shuffle_f32x4(x01, y01, 0x88));   // L = 0
                _mm512_storeu_ps(d + 1 * 32, _mm512_shuffle_f32x4(x01, y01, 0xDD));   // L = 1
                _mm512_storeu_ps(d + 2 * 32, _mm512_shuffle_f32x4(x23, y23, 0x88));   // L = 2
                _mm512_storeu_ps(d + 3 * 32, _mm512_shuffle_f32x4(x23, y23, 0xDD));   // L = 3
            }
        }
    }
    __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0),
        _mm512_set1_epi32((int)lda));
    __mmask16 k = (__mmask16)(mr >= 8 ? 0xffu : (1u << mr) - 1u);
    for (; p < kc; p++)
        _mm512_mask_storeu_ps(dst + p * 8, 0xffu,
                              _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, idx, a + p, 4));
}

// Packs rows [0, nr) (nr <= 32) of a row-major matrix (row stride ldb), each row one column of
// op(B) = B^T, over kc steps into one 32-wide B micro-panel, dst[p*32 + j]; rows past nr are
// zero. Whole 16-row halves go 16 steps at a time through an in-register 16 x 16 transpose
// (64 shuffles per 256 values); the rest element by element (a scalar scatter is a visible
// part of an MLP training step, whose forward x @ W^T packs W^T: docs/performance.md).
__attribute__((target("avx512f"))) void hg_sgemm_pack_bt32_avx512(int64_t nr, int64_t kc,
                                                                  const float* b, int64_t ldb,
                                                                  float* dst) {
    for (int h = 0; h < 2; h++) {
        int64_t j0 = 16 * h, rows = nr - j0;
        int64_t p = 0;
        if (rows >= 16) {
            for (; p + 16 <= kc; p += 16) {
                __m512 r[16], t[16], u[16];
                for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(b + (j0 + i) * ldb + p);
                for (int i = 0; i < 8; i++) {   // per 128-bit lane: row pairs interleaved
                    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
                    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
                }
                for (int i = 0; i < 4; i++) {   // u[4i + j], lane L: rows 4i..4i+3 of step 4L+j
                    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
                    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
                    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
                    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
                }
                for (int j = 0; j < 4; j++) {   // a 4 x 4 transpose of 128-bit lanes
                    __m512 a01 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44);
                    __m512 a23 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xEE);
                    __m512 c01 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44);
                    __m512 c23 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xEE);
                    float* d = dst + (p + j) * 32 + j0;
                    _mm512_storeu_ps(d + 0 * 128, _mm512_shuffle_f32x4(a01, c01, 0x88));
                    _mm512_storeu_ps(d + 1 * 128, _mm512_shuffle_f32x4(a01, c01, 0xDD));
                    _mm512_storeu_ps(d + 2 * 128, _mm512_shuffle_f32x4(a23, c23, 0x88));
                    _mm512_storeu_ps(d + 3 * 128, _mm512_shuffle_f32x4(a23, c23, 0xDD));
                }
            }
        }
        for (; p < kc; p++)
            for (int64_t j = 0; j < 16; j++)
                dst[p * 32 + j0 + j] = j < rows ? b[(j0 + j) * ldb + p] : 0.0f;
    }
}

// hg_sgemm_pack_bt32_avx512 for the AVX2 set's 16-wide panels: 8-row groups, 8 steps at a
// time through an in-register 8 x 8 transpose (24 shuffles per 64 values).
void hg_sgemm_pack_bt16_avx2(int64_t nr, int64_t kc, const float* b, int64_t ldb, float* dst) {
    for (int h = 0; h < 2; h++) {
        int64_t j0 = 8 * h, rows = nr - j0;
        int64_t p = 0;
        if (rows >= 8) {
            for (; p + 8 <= kc; p += 8) {
                __m256 r[8], t[8], u[8];
                for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(b + (j0 + i) * ldb + p);
                for (int i = 0; i < 4; i++) {
                    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
                    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
                }
                for (int i = 0; i < 2; i++) {   // u[4i + j], lane L: rows 4i..4i+3 of step 4L+j
                    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
                    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
                    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
                    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
                }
                for (int j = 0; j < 4; j++) {
                    _mm256_storeu_ps(dst + (p + j) * 16 + j0,
                                     _mm256_permute2f128_ps(u[j], u[4 + j], 0x20));
                    _mm256_storeu_ps(dst + (p + 4 + j) * 16 + j0,
                                     _mm256_permute2f128_ps(u[j], u[4 + j], 0x31));
                }
            }
        }
        for (; p < kc; p++)
            for (int64_t j = 0; j < 8; j++)
                dst[p * 16 + j0 + j] = j < rows ? b[(j0 + j) * ldb + p] : 0.0f;
    }
}

// Narrow C (n <= 16 columns, gemm.h): 8 rows at a time, one accumulator per row. Per k step
// one masked load of B's row and 8 broadcasts from A's rows feed 8 FMAs; nothing is packed (B's
// k x n values stay in L1/L2 across the row blocks, each A value is read once).
__attribute__((target("avx512f"))) void hg_sgemm_narrow_avx512(
    int64_t m, int n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
    int64_t ldb, float beta, float* c, int64_t ldc) {
    __mmask16 mk = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int64_t i0 = 0; i0 < m; i0 += 8) {
        int r = m - i0 < 8 ? (int)(m - i0) : 8;
        // Rows past the end repeat row i0 (computed, never stored).
        const float* ap[8];
        for (int i = 0; i < 8; i++) ap[i] = a + (i0 + (i < r ? i : 0)) * lda;
        __m512 acc[8];
        for (int i = 0; i < 8; i++) acc[i] = _mm512_setzero_ps();
        for (int64_t p = 0; p < k; p++) {
            __m512 bv = _mm512_maskz_loadu_ps(mk, b + p * ldb);
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(ap[i][p]), bv, acc[i]);
        }
        // Constant indices (unrolled, the row count tested inside): with `i < r` as the loop
        // bound GCC kept acc[] on the stack and stored all 8 every k step.
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            if (i >= r) break;
            float* ci = c + (i0 + i) * ldc;
            __m512 o = _mm512_mul_ps(acc[i], va);
            if (beta != 0.0f) o = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mk, ci), o);
            _mm512_mask_storeu_ps(ci, mk, o);
        }
    }
}

// Narrow C (n <= 16 columns, gemm.h) with AVX2: hg_sgemm_narrow_avx512's scheme in 8-wide
// registers. Columns 9..16: 6 rows at a time, two accumulators per row (12 + 2 for B's row + a
// broadcast: the 16 registers); up to 8 columns: 12 rows at a time, one accumulator each. B's
// row is one or two masked loads per k step (AVX2 on Zen 4 through the packed path: 64 x 256 x
// 10 ran at 0.77 of numpy's time, 4096 x 64 x 64 at 0.86).
static inline __attribute__((always_inline)) void narrow_rows_avx2(
    int R, int two, int64_t m, int n, int64_t k, float alpha, const float* a, int64_t lda,
    const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane);
    const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - 8), lane);
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    for (int64_t i0 = 0; i0 < m; i0 += R) {
        int r = m - i0 < R ? (int)(m - i0) : R;
        const float* ap[12];   // rows past the end repeat row i0 (computed, never stored)
        for (int i = 0; i < R; i++) ap[i] = a + (i0 + (i < r ? i : 0)) * lda;
        __m256 lo[12], hi[12];
        for (int i = 0; i < R; i++) lo[i] = hi[i] = _mm256_setzero_ps();
        for (int64_t p = 0; p < k; p++) {
            const float* bp = b + p * ldb;
            __m256 b0 = _mm256_maskload_ps(bp, m0);
            __m256 b1 = two ? _mm256_maskload_ps(bp + 8, m1) : b0;
#pragma GCC unroll 12
            for (int i = 0; i < R; i++) {
                __m256 ai = _mm256_broadcast_ss(ap[i] + p);
                lo[i] = _mm256_fmadd_ps(ai, b0, lo[i]);
                if (two) hi[i] = _mm256_fmadd_ps(ai, b1, hi[i]);
            }
        }
#pragma GCC unroll 12
        for (int i = 0; i < R; i++) {
            if (i >= r) break;
            float* ci = c + (i0 + i) * ldc;
            __m256 o = _mm256_mul_ps(lo[i], va);
            if (beta != 0.0f) o = _mm256_fmadd_ps(vb, _mm256_maskload_ps(ci, m0), o);
            _mm256_maskstore_ps(ci, m0, o);
            if (!two) continue;
            o = _mm256_mul_ps(hi[i], va);
            if (beta != 0.0f) o = _mm256_fmadd_ps(vb, _mm256_maskload_ps(ci + 8, m1), o);
            _mm256_maskstore_ps(ci + 8, m1, o);
        }
    }
}

void hg_sgemm_narrow_avx2(int64_t m, int n, int64_t k, float alpha, const float* a, int64_t lda,
                          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    if (n > 8) narrow_rows_avx2(6, 1, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else narrow_rows_avx2(12, 0, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
