// SGEMM driver: blocking, packing and work split (the micro-kernels are in simd/gemm_kernel.c).
// Loop nest (BLIS): jc over NC columns -> pc over KC depth (pack a KC x NC block of op(B), held
// in L2/L3) -> ic over MC rows (pack an MC x KC block of op(A), held in L2) -> jr over NR
// columns (one B micro-panel, held in L1) -> ir over MR rows -> micro-kernel. With a pool, C is
// cut into one independent slab per thread (columns, or rows when C is taller than wide), so the
// threads never wait on each other; each packs its own panels.
#include "backends/cpu/gemm/gemm.h"
#include "base/cpu_level.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// Cache blocking per micro-kernel (docs/gemm.md): KC x NR B micro-panels stay in L1 while the
// MC x KC A block stays in L2 and the KC x NC B block in L3; the sizes per micro-kernel are
// the best measured on the dev machines (docs/performance.md).
#define NC 4096

#if defined(HG_HAVE_AVX2_KERNELS)
#define HG_GEMM_HAS_AVX2 1
#endif

// ---- pack buffers ---------------------------------------------------------------------------
// Fresh multi-MiB allocations cost a page fault per 4 KiB on every call, so buffers are kept in
// a small cache and reused (they stay reachable from it, so leak checkers do not report them).
#define CACHE_SLOTS 8
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { float* p; size_t n; } cache[CACHE_SLOTS];

static float* buf_get(size_t n) {
    pthread_mutex_lock(&cache_lock);
    int best = -1;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].p && cache[i].n >= n && (best < 0 || cache[i].n < cache[best].n)) best = i;
    float* p = NULL;
    if (best >= 0) {
        p = cache[best].p;
        cache[best].p = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    if (p) return p;
    size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
    p = aligned_alloc(64, bytes);
#ifdef MADV_HUGEPAGE
    if (p && bytes >= (2u << 20)) madvise(p, bytes, MADV_HUGEPAGE);  // best effort
#endif
    return p;
}

// Returns a buffer to the cache; when the cache is full the smallest buffer is freed.
static void buf_put(float* p, size_t n) {
    if (!p) return;
    pthread_mutex_lock(&cache_lock);
    int slot = -1;
    for (int i = 0; i < CACHE_SLOTS && slot < 0; i++)
        if (!cache[i].p) slot = i;
    if (slot < 0) {
        slot = 0;
        for (int i = 1; i < CACHE_SLOTS; i++)
            if (cache[i].n < cache[slot].n) slot = i;
        if (cache[slot].n >= n) {
            pthread_mutex_unlock(&cache_lock);
            free(p);
            return;
        }
        free(cache[slot].p);
    }
    cache[slot].p = p;
    cache[slot].n = n;
    pthread_mutex_unlock(&cache_lock);
}

void hg_cpu_gemm_fork(hg_fork_phase phase) { hg_fork_mutex(&cache_lock, phase); }

// ---- packing --------------------------------------------------------------------------------
// op(A) block rows [0, mc), depth [0, kc) -> micro-panels of MR rows: dst[ir*kc + p*MR + i].
// Rows past mc are zero so the kernel always computes full tiles.
static void pack_a(const hg_sgemm_kernel* kern, int ta, int64_t mc, int64_t kc, const float* a,
                   int64_t lda, float* dst) {
    const int MR = kern->mr;
    for (int64_t ir = 0; ir < mc; ir += MR) {
        int64_t mr = mc - ir < MR ? mc - ir : MR;
        float* d = dst + ir * kc;
        if (!ta && kern->pack_a_rows && lda < INT32_MAX / 16) {
            kern->pack_a_rows(mr, kc, a + ir * lda, lda, d);
        } else if (!ta) {
            // Row-major A: each of the MR rows is contiguous along p.
            const float* r[HG_SGEMM_MAX_TILE];
            for (int i = 0; i < MR; i++) r[i] = a + (ir + (i < mr ? i : 0)) * lda;
            if (mr == MR) {
                for (int64_t p = 0; p < kc; p++)
                    for (int i = 0; i < MR; i++) d[p * MR + i] = r[i][p];
            } else {
                for (int64_t p = 0; p < kc; p++)
                    for (int i = 0; i < MR; i++) d[p * MR + i] = i < mr ? r[i][p] : 0.0f;
            }
        } else if (mr == MR) {
            // A^T: op(A)(i, p) = a[p*lda + i], so the MR values of one step are contiguous:
            // one copy per step, of a constant size where the set's MR is known (a weight
            // gradient dY^T X packs this way; an element loop with the edge test was a third of
            // a 256 x 256 x 256 product: docs/performance.md).
            const float* s = a + ir;
            if (MR == 8) {
                for (int64_t p = 0; p < kc; p++) memcpy(d + p * 8, s + p * lda, 8 * sizeof(float));
            } else if (MR == 6) {
                for (int64_t p = 0; p < kc; p++) memcpy(d + p * 6, s + p * lda, 6 * sizeof(float));
            } else {
                for (int64_t p = 0; p < kc; p++)
                    memcpy(d + p * MR, s + p * lda, (size_t)MR * sizeof(float));
            }
        } else {
            for (int64_t p = 0; p < kc; p++) {
                const float* s = a + p * lda + ir;
                for (int i = 0; i < MR; i++) d[p * MR + i] = i < mr ? s[i] : 0.0f;
            }
        }
    }
}

// op(B) block depth [0, kc), columns [0, nc) -> micro-panels of NR columns: dst[jr*kc + p*NR + j].
static void pack_b(const hg_sgemm_kernel* kern, int tb, int NR, int64_t kc, int64_t nc,
                   const float* b, int64_t ldb, float* dst) {
    int64_t nfull = nc / NR * NR;
    if (!tb && nfull > NR) {
        // Row-major B, whole panels: read each source row once, sequentially (walking panel by
        // panel would touch a new page every NR floats), and scatter its NR-wide pieces.
        for (int64_t p = 0; p < kc; p++) {
            const float* src = b + p * ldb;
            // Constant sizes: inlined moves instead of a memcpy call per piece.
            if (NR == 16) {
                for (int64_t jr = 0; jr < nfull; jr += 16)
                    memcpy(dst + jr * kc + p * 16, src + jr, 16 * sizeof(float));
            } else if (NR == 32) {
                for (int64_t jr = 0; jr < nfull; jr += 32)
                    memcpy(dst + jr * kc + p * 32, src + jr, 32 * sizeof(float));
            } else {
                for (int64_t jr = 0; jr < nfull; jr += NR)
                    memcpy(dst + jr * kc + p * NR, src + jr, (size_t)NR * sizeof(float));
            }
        }
        if (nfull == nc) return;
        b += nfull;
        dst += nfull * kc;
        nc -= nfull;
    }
    for (int64_t jr = 0; jr < nc; jr += NR) {
        int64_t nr = nc - jr < NR ? nc - jr : NR;
        float* d = dst + jr * kc;
        if (!tb) {
            // Row-major B: one step of the panel is NR contiguous floats.
            if (nr == NR && NR == 16) {   // constant sizes: inlined moves, not a memcpy call
                for (int64_t p = 0; p < kc; p++) memcpy(d + p * 16, b + p * ldb + jr, 16 * sizeof(float));
            } else if (nr == NR && NR == 32) {
                for (int64_t p = 0; p < kc; p++) memcpy(d + p * 32, b + p * ldb + jr, 32 * sizeof(float));
            } else if (nr == NR) {
                for (int64_t p = 0; p < kc; p++) memcpy(d + p * NR, b + p * ldb + jr, (size_t)NR * sizeof(float));
            } else {
                for (int64_t p = 0; p < kc; p++)
                    for (int j = 0; j < NR; j++) d[p * NR + j] = j < nr ? b[p * ldb + jr + j] : 0.0f;
            }
        } else if (kern->pack_bt_rows) {
            kern->pack_bt_rows(nr, kc, b + jr * ldb, ldb, d);
        } else {
            // B^T: op(B)(p, j) = b[j*ldb + p]; each of the NR source rows is contiguous along p,
            // so walk them in short runs of p to keep all NR streams in L1.
            for (int64_t p0 = 0; p0 < kc; p0 += 16) {
                int64_t pe = p0 + 16 < kc ? p0 + 16 : kc;
                for (int j = 0; j < NR; j++) {
                    if (j < nr) {
                        const float* s = b + (jr + j) * ldb;
                        for (int64_t p = p0; p < pe; p++) d[p * NR + j] = s[p];
                    } else {
                        for (int64_t p = p0; p < pe; p++) d[p * NR + j] = 0.0f;
                    }
                }
            }
        }
    }
}

// ---- serial driver on one slab of C --------------------------------------------------------
typedef struct gemm_args {
    const hg_sgemm_kernel* kern;
    int ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    const float* a;
    int64_t lda;
    const float* b;
    int64_t ldb;
    float* c;
    int64_t ldc;
} gemm_args;

// Splits len into the fewest blocks of at most max, of near-equal size rounded up to unit
// (a 257-deep product runs as 129 + 128, not 256 + 1).
static int64_t balanced_block(int64_t len, int64_t max, int64_t unit) {
    int64_t nb = (len + max - 1) / max;
    int64_t bs = (len + nb - 1) / nb;
    bs = (bs + unit - 1) / unit * unit;
    return bs < max ? bs : max;
}

// C = beta * C (the whole product when alpha == 0 or k == 0).
static void scale_c(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
    for (int64_t i = 0; i < m; i++) {
        float* ci = c + i * ldc;
        if (beta == 0.0f) memset(ci, 0, (size_t)n * sizeof(float));
        else if (beta != 1.0f)
            for (int64_t j = 0; j < n; j++) ci[j] *= beta;
    }
}

static void gemm_serial(const gemm_args* g) {
    int64_t m = g->m, n = g->n, k = g->k;
    const int MR = g->kern->mr, NR = g->kern->nr;
    hg_sgemm_ukernel kern = g->kern->fn;
    if (m <= 0 || n <= 0) return;
    if (k <= 0 || g->alpha == 0.0f) {
        scale_c(m, n, g->beta, g->c, g->ldc);
        return;
    }
    int64_t kcb = balanced_block(k, g->kern->kc, 1);
    int64_t mcb = balanced_block(m, g->kern->mc, MR);
    int64_t ncb = balanced_block(n, NC, NR);
    size_t na = (size_t)mcb * (size_t)kcb, nb = (size_t)ncb * (size_t)kcb;
    float* pa = buf_get(na);
    float* pb = buf_get(nb);
    if (!pa || !pb) {
        // Out of memory for a few hundred KiB: fall back to the plain loop rather than fail a
        // void call (the result is the same).
        buf_put(pa, na);
        buf_put(pb, nb);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++)
                    s += (g->ta ? g->a[p * g->lda + i] : g->a[i * g->lda + p]) *
                         (g->tb ? g->b[j * g->ldb + p] : g->b[p * g->ldb + j]);
                float* cij = g->c + i * g->ldc + j;
                *cij = g->beta == 0.0f ? g->alpha * s : g->alpha * s + g->beta * *cij;
            }
        return;
    }
    float tile[HG_SGEMM_MAX_TILE] __attribute__((aligned(64)));
    // With a single row block (skinny C) each B micro-panel is used by that block only: pack a
    // group of 8 panels right before its use, so B goes from memory to L2 once instead of
    // through an L3-sized block; the group's rows are read as runs of 8 * NR floats (one panel
    // at a time touched a new page every NR floats: a quarter of a 64 x 1024 x 1024 product).
    int fused = m <= mcb;
    int in_place = !g->ta && g->kern->fn_lda != NULL;   // A's full micro-tiles read in place
    for (int64_t jc = 0; jc < n; jc += ncb) {
        int64_t nc = n - jc < ncb ? n - jc : ncb;
        int64_t group = fused ? 8 * (int64_t)NR : nc;
        for (int64_t pc = 0; pc < k; pc += kcb) {
            int64_t kc = k - pc < kcb ? k - pc : kcb;
            float beta = pc == 0 ? g->beta : 1.0f;  // later depth blocks accumulate
            const float* bsrc = g->tb ? g->b + jc * g->ldb + pc : g->b + pc * g->ldb + jc;
            if (!fused) pack_b(g->kern, g->tb, NR, kc, nc, bsrc, g->ldb, pb);
            for (int64_t ic = 0; ic < m; ic += mcb) {
                int64_t mc = m - ic < mcb ? m - ic : mcb;
                const float* asrc = g->ta ? g->a + pc * g->lda + ic : g->a + ic * g->lda + pc;
                // A read in place: only a last partial micro-tile is packed.
                int64_t packed_from = in_place ? mc / MR * MR : 0;
                if (packed_from < mc)
                    pack_a(g->kern, g->ta, mc - packed_from, kc,
                           asrc + (in_place ? packed_from * g->lda : 0), g->lda,
                           pa + packed_from * kc);
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    int64_t nr = nc - jr < NR ? nc - jr : NR;
                    const float* bp = pb + jr * kc;
                    if (fused && jr % group == 0) {
                        int64_t gw = nc - jr < group ? nc - jr : group;
                        pack_b(g->kern, g->tb, NR, kc, gw,
                               g->tb ? bsrc + jr * g->ldb : bsrc + jr, g->ldb,
                               pb + jr * kc);
                    }
                    for (int64_t ir = 0; ir < mc; ir += MR) {
                        int64_t mr = mc - ir < MR ? mc - ir : MR;
                        float* ct = g->c + (ic + ir) * g->ldc + jc + jr;
                        // A partial tile is computed aside (tile, beta 0), then its valid
                        // part merged.
                        int full = mr == MR && nr == NR;
                        float* dst = full ? ct : tile;
                        int64_t ldd = full ? g->ldc : NR;
                        float bd = full ? beta : 0.0f;
                        if (in_place && mr == MR)
                            g->kern->fn_lda(kc, asrc + ir * g->lda, g->lda, bp, dst, ldd,
                                            g->alpha, bd);
                        else
                            kern(kc, pa + ir * kc, bp, dst, ldd, g->alpha, bd);
                        if (full) continue;
                        for (int64_t i = 0; i < mr; i++)
                            for (int64_t j = 0; j < nr; j++) {
                                float* cij = ct + i * g->ldc + j;
                                *cij = beta == 0.0f ? tile[i * NR + j] : tile[i * NR + j] + beta * *cij;
                            }
                    }
                }
            }
        }
    }
    buf_put(pa, na);
    buf_put(pb, nb);
}

// ---- threads --------------------------------------------------------------------------------
typedef struct gemm_job {
    gemm_args g;
    int parts;
    int split_n;      // slabs of columns (else of rows)
    int64_t chunk;    // slab width / height, a multiple of NR / MR
} gemm_job;

static void gemm_worker(void* ctx, int w) {
    const gemm_job* job = ctx;
    gemm_args s = job->g;
    int64_t lo = (int64_t)w * job->chunk;
    int64_t len = job->split_n ? s.n : s.m;
    if (lo >= len) return;
    int64_t cnt = len - lo < job->chunk ? len - lo : job->chunk;
    if (job->split_n) {
        s.n = cnt;
        s.b += s.tb ? lo * s.ldb : lo;
        s.c += lo;
    } else {
        s.m = cnt;
        s.a += s.ta ? lo : lo * s.lda;
        s.c += lo * s.ldc;
    }
    gemm_serial(&s);
}

static const hg_sgemm_kernel kernels[] = {
    {"generic", hg_sgemm_ukernel_generic, 6, 16, 256, 72, NULL, NULL, NULL},
#ifdef HG_GEMM_HAS_AVX2
    {"avx2", hg_sgemm_ukernel_avx2, 6, 16, 256, 72, NULL, hg_sgemm_pack_bt16_avx2, NULL},
    {"avx512", hg_sgemm_ukernel8x32_avx512, 8, 32, 256, 96, hg_sgemm_pack_a8_avx512,
     hg_sgemm_pack_bt32_avx512, hg_sgemm_ukernel8x32_lda_avx512},
#endif
};
#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))
static int kernel_ok[NKERNELS];
static const hg_sgemm_kernel* chosen_kernel;
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;

static void pick_kernel(void) {
    kernel_ok[0] = 1;
#ifdef HG_GEMM_HAS_AVX2
    kernel_ok[1] = hg_cpu_level_get() >= HG_CPU_AVX2;
    kernel_ok[2] = hg_cpu_level_get() >= HG_CPU_AVX512;
#endif
    for (int i = 0; i < NKERNELS; i++) {
        _Static_assert(HG_SGEMM_MAX_TILE >= 16 * 16, "edge tile scratch too small");
        if (kernel_ok[i]) chosen_kernel = &kernels[i];
    }
}

const hg_sgemm_kernel* hg_cpu_sgemm_kernel_named(const char* name) {
    pthread_once(&kernel_once, pick_kernel);
    if (!name) return chosen_kernel;
    for (int i = 0; i < NKERNELS; i++)
        if (kernel_ok[i] && !strcmp(name, kernels[i].name)) return &kernels[i];
    return NULL;
}

void hg_cpu_sgemm_with(const hg_sgemm_kernel* kern, int trans_a, int trans_b, int64_t m, int64_t n,
                       int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float beta, float* c, int64_t ldc, hg_pool* pool) {
    gemm_job job = {
        .g = {kern, trans_a != 0, trans_b != 0, m, n, k, alpha, beta, a, lda, b, ldb, c, ldc},
        .parts = 1,
    };
    if (m <= 0 || n <= 0) return;
    int threads = pool ? hg_pool_size(pool) : 1;
    // Waking the workers costs some microseconds: small products stay on the caller.
    double flops = 2.0 * (double)m * (double)n * (double)k;
    if (threads > 1 && flops >= HG_SGEMM_PARALLEL_FLOPS && k > 0 && alpha != 0.0f) {
        // Cut the longer side of C, in whole micro-tiles; a side too short for every thread to
        // get at least one tile gives fewer slabs.
        job.split_n = n >= m;
        int64_t len = job.split_n ? n : m, unit = job.split_n ? kern->nr : kern->mr;
        int64_t tiles = (len + unit - 1) / unit;
        int parts = tiles < threads ? (int)tiles : threads;
        job.chunk = (tiles + parts - 1) / parts * unit;
        job.parts = (int)((len + job.chunk - 1) / job.chunk);
    }
    if (job.parts <= 1) {
        gemm_serial(&job.g);
        return;
    }
    hg_pool_run(pool, job.parts, gemm_worker, &job);
}

void hg_cpu_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                  float* c, int64_t ldc, hg_pool* pool) {
    // One or a few rows (or columns) of C: packing would copy the whole large operand to use
    // each value a few times; the skinny kernels read it in place.
    if (hg_cpu_sgemm_skinny(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool))
        return;
    hg_cpu_sgemm_with(hg_cpu_sgemm_kernel_named(NULL), trans_a, trans_b, m, n, k, alpha, a, lda,
                      b, ldb, beta, c, ldc, pool);
}
