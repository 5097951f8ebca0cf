// Internal (CPU backend): every GEMM of the CPU backend - f32 (hg_cpu_sgemm, the foundation of
// matmul) and f64 (hg_cpu_dgemm) - with micro-kernels chosen by the process's one CPU-level
// decision (base/cpu_level.h).
//
//   hg_cpu_sgemm(0, 0, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n, pool);   // C = A * B
//
// C = alpha * op(A) * op(B) + beta * C, row-major, leading dimensions in elements; op(X) is X
// (trans = 0) or X^T (trans != 0); op(A) is m x k, op(B) is k x n, C is m x n. beta == 0 never
// reads C (NaNs there are ignored, as in BLAS); alpha == 0 or k == 0 never reads A or B.
// pool: the executor's worker pool (work is split over its threads), or NULL for the calling
// thread only. Calls are thread-safe as long as no two of them share a pool at the same time
// (the pool's rule) and their C matrices do not overlap. Sizes and leading dimensions are the
// caller's to check (lda >= k or m, ...); this layer trusts them.
//
// Structure (BLIS/GotoBLAS; docs/gemm.md): B is packed in KC x NC blocks, A in MC x KC blocks,
// and a register-blocked MR x NR micro-kernel (simd/gemm_kernel.c, portable and AVX2+FMA builds
// chosen at run time) multiplies one A micro-panel by one B micro-panel.
#ifndef HG_BACKENDS_CPU_GEMM_H
#define HG_BACKENDS_CPU_GEMM_H
#include <stdint.h>
#include "backends/cpu/thread_pool.h"
#include "hologram.h"

// Products of fewer FLOPs stay on the calling thread: waking the pool's workers costs some
// microseconds (packed and skinny SGEMM drivers alike).
#define HG_SGEMM_PARALLEL_FLOPS 2e6

// The largest micro-tile of any set (sizes the edge-tile scratch).
#define HG_SGEMM_MAX_TILE 256

// One micro-kernel call: the MR x NR tile c (row stride ldc) becomes
// alpha * A_panel * B_panel + beta * c, where a holds kc steps of MR values (a[p*MR + i]) and b
// kc steps of NR values (b[p*NR + j]). beta == 0 does not read c.
typedef void (*hg_sgemm_ukernel)(int64_t kc, const float* a, const float* b, float* c,
                                 int64_t ldc, float alpha, float beta);
typedef struct hg_sgemm_kernel {
    const char* name;   // "generic", "avx2", "avx512"
    hg_sgemm_ukernel fn;
    int mr, nr;         // tile rows and columns
    int kc, mc;         // depth and row block sizes of its cache blocking (gemm.c)
    // Optional: packs mr <= MR rows of a row-major A (row stride lda) over kc steps into one
    // micro-panel (dst[p*MR + i], rows past mr zero); NULL: the portable pack.
    void (*pack_a_rows)(int64_t mr, int64_t kc, const float* a, int64_t lda, float* dst);
    // Optional: packs nr <= NR rows of a row-major matrix (row stride ldb; each row is one column
    // of op(B) = B^T) over kc steps into one B micro-panel (dst[p*NR + j], rows past nr zero);
    // NULL: the portable pack.
    void (*pack_bt_rows)(int64_t nr, int64_t kc, const float* b, int64_t ldb, float* dst);
    // Optional: fn reading the MR rows of a row-major A in place (row i at a + i*lda), used
    // for A's full micro-tiles instead of packing them; NULL: A is always packed.
    void (*fn_lda)(int64_t kc, const float* a, int64_t lda, const float* b, float* c,
                   int64_t ldc, float alpha, float beta);
} hg_sgemm_kernel;

// The packing cache's part in fork() (base/fork.h).
#include "base/fork.h"
void hg_cpu_gemm_fork(hg_fork_phase phase);

void hg_cpu_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                  float* c, int64_t ldc, hg_pool* pool);

// batch products C_i = alpha * op(A_i) * op(B_i) + beta * C_i, X_i starting stride_x elements
// after X_(i-1) (stride_a / stride_b may be 0; the C_i must not overlap). Small products run
// whole on the pool's workers, several at once (gemm_batched.c).
void hg_cpu_sgemm_batched(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                          float alpha, const float* a, int64_t lda, int64_t stride_a,
                          const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
                          int64_t ldc, int64_t stride_c, int64_t batch, hg_pool* pool);

// The same with a given micro-kernel (tests run every built set).
void hg_cpu_sgemm_with(const hg_sgemm_kernel* kern, int trans_a, int trans_b, int64_t m, int64_t n,
                       int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float beta, float* c, int64_t ldc, hg_pool* pool);

// The micro-kernel of a set by name ("generic", "avx2", "avx512"); NULL when not built or not
// supported by this CPU. NULL name: the set hg_cpu_sgemm uses (the widest supported).
const hg_sgemm_kernel* hg_cpu_sgemm_kernel_named(const char* name);

// C = A * B in doubles: A is m x k (element (i, p) at a[i*a_rs + p*a_cs]), B is k x n, C is
// m x n with strides c_rs, c_cs (written, never read); any strides, k >= 1. Structure as sgemm's
// (gemm/dgemm.c, micro-kernels in simd/dgemm_kernel.c). pool as for hg_cpu_sgemm.
// HG_ERR_OUT_OF_MEMORY (nothing written) when the pack buffers cannot be allocated.
hg_status hg_cpu_dgemm(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs,
                       int64_t a_cs, const double* b, int64_t b_rs, int64_t b_cs, double* c,
                       int64_t c_rs, int64_t c_cs, hg_pool* pool);
// Name of the f64 micro-kernel in use ("generic", "avx2", "avx512").
const char* hg_cpu_dgemm_kernel_name(void);

// Skinny products: C has at most HG_SGEMM_SKINNY_MAX rows or columns, so the large operand is
// read in place instead of packed (gemm/skinny.c), by kernels that take HG_SGEMM_SKINNY_GROUP
// rows of the small operand at a time (simd/gemv_kernel.c, portable and AVX2 builds). Up to
// 16 rows or 12 columns they beat packing (docs/gemm.md, docs/performance.md).
#define HG_SGEMM_SKINNY_MAX 16
#define HG_SGEMM_SKINNY_COLS_MAX 12
#define HG_SGEMM_SKINNY_GROUP 4
// C (m x n, element (i, j) at c[i*c_rs + j*c_cs]) = alpha * S * L + beta * C, m <= GROUP.
// S(i, p) at s[i*s_rs + p*s_cs]; L(p, j) at l[p*ldl + j] ("rows").
typedef void (*hg_sgemm_skinny_rows_fn)(int m, int64_t n, int64_t k, float alpha, const float* s,
                                        int64_t s_rs, int64_t s_cs, const float* l, int64_t ldl,
                                        float beta, float* c, int64_t c_rs, int64_t c_cs);
// The same with L(p, j) at l[j*ldl + p] ("dots") and S's rows contiguous: S(i, p) = srow[i][p].
typedef void (*hg_sgemm_skinny_dots_fn)(int m, int64_t n, int64_t k, float alpha,
                                        const float* const* srow, const float* l, int64_t ldl,
                                        float beta, float* c, int64_t c_rs, int64_t c_cs);
// Narrow products: C (m x n, n <= HG_SGEMM_NARROW_MAX) = alpha * A * B + beta * C with A
// (m x k, row stride lda) and B (k x n, row stride ldb) row-major and read in place: each row of
// B is one masked vector load, each element of A one broadcast (AVX-512: 8 rows of C at a time;
// AVX2: 6 rows, or 12 for up to 8 columns).
#define HG_SGEMM_NARROW_MAX 16
// Small products with C up to 64 columns (and more than HG_SGEMM_SKINNY_MAX rows) run as
// narrow products over 16-column panels of B and C, unpacked: packing A and B, and the edge
// tiles of the 8 x 32 tile, cost more than they save there (docs/performance.md).
#define HG_SGEMM_PANEL_MAX_COLS 64
#define HG_SGEMM_PANEL_MAX_MNK (128.0 * 128.0 * 64.0)
typedef void (*hg_sgemm_narrow_fn)(int64_t m, int n, int64_t k, float alpha, const float* a,
                                   int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                                   int64_t ldc);
typedef struct hg_sgemm_skinny_set {
    const char* name;   // "generic", "avx2", "avx512"
    hg_sgemm_skinny_rows_fn rows;
    hg_sgemm_skinny_dots_fn dots;
    hg_sgemm_narrow_fn narrow;   // NULL: narrow products go through rows/dots or the packed path
} hg_sgemm_skinny_set;
// A set by name (NULL when not built or not supported here); NULL name: the one in use.
const hg_sgemm_skinny_set* hg_cpu_sgemm_skinny_set_named(const char* name);
void hg_sgemm_skinny_rows_generic(int m, int64_t n, int64_t k, float alpha, const float* s,
                                  int64_t s_rs, int64_t s_cs, const float* l, int64_t ldl,
                                  float beta, float* c, int64_t c_rs, int64_t c_cs);
void hg_sgemm_skinny_rows_avx2(int m, int64_t n, int64_t k, float alpha, const float* s,
                               int64_t s_rs, int64_t s_cs, const float* l, int64_t ldl,
                               float beta, float* c, int64_t c_rs, int64_t c_cs);
void hg_sgemm_skinny_dots_generic(int m, int64_t n, int64_t k, float alpha,
                                  const float* const* srow, const float* l, int64_t ldl,
                                  float beta, float* c, int64_t c_rs, int64_t c_cs);
void hg_sgemm_skinny_dots_avx2(int m, int64_t n, int64_t k, float alpha,
                               const float* const* srow, const float* l, int64_t ldl,
                               float beta, float* c, int64_t c_rs, int64_t c_cs);

// hg_cpu_sgemm's path for C with at most HG_SGEMM_SKINNY_MAX rows or columns (gemm/skinny.c):
// returns 1 when it computed C, 0 when the product is not skinny (or is trivial: m, n or k <= 0,
// alpha == 0) and the caller must compute it.
int hg_cpu_sgemm_skinny(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                        const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                        float* c, int64_t ldc, hg_pool* pool);

// Exported by simd/gemm_kernel.c: 6 x 16 tiles in both builds (generic, avx2), and from the AVX2
// build an 8 x 32 AVX-512F kernel (compiled for that target by a function attribute).
void hg_sgemm_ukernel_generic(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                              float alpha, float beta);
void hg_sgemm_ukernel_avx2(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                           float alpha, float beta);
void hg_sgemm_ukernel8x32_avx512(int64_t kc, const float* a, const float* b, float* c,
                                  int64_t ldc, float alpha, float beta);
void hg_sgemm_ukernel8x32_lda_avx512(int64_t kc, const float* a, int64_t lda, const float* b,
                                     float* c, int64_t ldc, float alpha, float beta);
void hg_sgemm_pack_a8_avx512(int64_t mr, int64_t kc, const float* a, int64_t lda, float* dst);
void hg_sgemm_pack_bt32_avx512(int64_t nr, int64_t kc, const float* b, int64_t ldb, float* dst);
void hg_sgemm_pack_bt16_avx2(int64_t nr, int64_t kc, const float* b, int64_t ldb, float* dst);
void hg_sgemm_narrow_avx512(int64_t m, int n, int64_t k, float alpha, const float* a, int64_t lda,
                            const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void hg_sgemm_narrow_avx2(int64_t m, int n, int64_t k, float alpha, const float* a, int64_t lda,
                          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

#endif
