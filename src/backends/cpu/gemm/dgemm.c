// f64 GEMM (hg_cpu_dgemm, see gemm.h): the BLIS loop nest over any operand strides.
//
//   for jc in columns, step NC        (per thread: its own column or row slab of C)
//     for pc in depth, step KC        pack B(pc.., jc..) into NR-wide micro-panels
//       for ic in rows, step MC       pack A(ic.., pc..) into MR-high micro-panels
//         for jr, ir                  micro-kernel (simd/dgemm_kernel.c) -> tile -> C
//
// Packing reads the operands through their strides (transposed and negative-stride views cost
// nothing extra), and zero-pads edge panels so the micro-kernel always runs full tiles. The
// tile is added into C through C's strides (the first depth block stores, later ones add).
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/gemm/gemm.h"
#include "base/cpu_level.h"
#include "base/error.h"

typedef void (*dgemm_ukernel)(int64_t kc, const double* a, const double* b, double* c);

// Exported by simd/dgemm_kernel.c (generic: every build; AVX2 and AVX-512: x86-64 builds).
void hg_dgemm_ukernel_generic(int64_t kc, const double* a, const double* b, double* c);
void hg_dgemm_ukernel_avx2(int64_t kc, const double* a, const double* b, double* c);
void hg_dgemm_ukernel_avx512(int64_t kc, const double* a, const double* b, double* c);

typedef struct dgemm_set {
    const char* name;
    dgemm_ukernel fn;
    int mr, nr;
} dgemm_set;

// The micro-kernel of the process's CPU level (base/cpu_level.h).
static dgemm_set the_set(void) {
    switch (hg_cpu_level_get()) {
#if defined(HG_HAVE_AVX2_KERNELS)
    case HG_CPU_AVX512: return (dgemm_set){"avx512", hg_dgemm_ukernel_avx512, 12, 16};
    case HG_CPU_AVX2: return (dgemm_set){"avx2", hg_dgemm_ukernel_avx2, 6, 8};
#endif
    default: return (dgemm_set){"generic", hg_dgemm_ukernel_generic, 4, 8};
    }
}

const char* hg_cpu_dgemm_kernel_name(void) { return the_set().name; }

enum { KC = 256, MC = 96, NC = 2048 };

typedef struct dgemm_job {
    dgemm_set set;
    int64_t m, n, k;
    const double* a;
    int64_t a_rs, a_cs;
    const double* b;
    int64_t b_rs, b_cs;
    double* c;
    int64_t c_rs, c_cs;
    int nworkers;
    int64_t ap_len, bp_len;   // doubles in a worker's packed A block and B block
    int by_rows;          // slabs of rows (tall C) instead of columns
    double* pack[64];     // per worker: A block, B block and one tile
    int failed;
} dgemm_job;

static void pack_a(const dgemm_job* j, int64_t i0, int64_t mc, int64_t p0, int64_t kc, double* ap) {
    int mr = j->set.mr;
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int64_t rows = mc - ir < mr ? mc - ir : mr;
        for (int64_t p = 0; p < kc; p++) {
            const double* src = j->a + (i0 + ir) * j->a_rs + (p0 + p) * j->a_cs;
            int64_t i = 0;
            for (; i < rows; i++) ap[p * mr + i] = src[i * j->a_rs];
            for (; i < mr; i++) ap[p * mr + i] = 0.0;
        }
        ap += kc * mr;
    }
}

static void pack_b(const dgemm_job* j, int64_t p0, int64_t kc, int64_t j0, int64_t nc, double* bp) {
    int nr = j->set.nr;
    for (int64_t jr = 0; jr < nc; jr += nr) {
        int64_t cols = nc - jr < nr ? nc - jr : nr;
        for (int64_t p = 0; p < kc; p++) {
            const double* src = j->b + (p0 + p) * j->b_rs + (j0 + jr) * j->b_cs;
            int64_t q = 0;
            if (j->b_cs == 1)
                for (; q < cols; q++) bp[p * nr + q] = src[q];
            else
                for (; q < cols; q++) bp[p * nr + q] = src[q * j->b_cs];
            for (; q < nr; q++) bp[p * nr + q] = 0.0;
        }
        bp += kc * nr;
    }
}

// C(i0.., j0..) (+)= tile (rows x cols of the MR x NR tile).
static void put_tile(const dgemm_job* j, const double* tile, int64_t i0, int64_t j0, int64_t rows,
                     int64_t cols, int accumulate) {
    int nr = j->set.nr;
    for (int64_t i = 0; i < rows; i++) {
        double* dst = j->c + (i0 + i) * j->c_rs + j0 * j->c_cs;
        const double* t = tile + i * nr;
        if (j->c_cs == 1) {
            if (accumulate) for (int64_t q = 0; q < cols; q++) dst[q] += t[q];
            else for (int64_t q = 0; q < cols; q++) dst[q] = t[q];
        } else {
            if (accumulate) for (int64_t q = 0; q < cols; q++) dst[q * j->c_cs] += t[q];
            else for (int64_t q = 0; q < cols; q++) dst[q * j->c_cs] = t[q];
        }
    }
}

// The block C(r0..r1, c0..c1).
static void dgemm_block(dgemm_job* j, double* ws, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    int mr = j->set.mr, nr = j->set.nr;
    double* ap = ws;
    double* bp = ap + j->ap_len;
    double* tile = bp + j->bp_len;
    for (int64_t jc = c0; jc < c1; jc += NC) {
        int64_t nc = c1 - jc < NC ? c1 - jc : NC;
        for (int64_t pc = 0; pc < j->k; pc += KC) {
            int64_t kc = j->k - pc < KC ? j->k - pc : KC;
            pack_b(j, pc, kc, jc, nc, bp);
            for (int64_t ic = r0; ic < r1; ic += MC) {
                int64_t mc = r1 - ic < MC ? r1 - ic : MC;
                pack_a(j, ic, mc, pc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += nr) {
                    int64_t cols = nc - jr < nr ? nc - jr : nr;
                    for (int64_t ir = 0; ir < mc; ir += mr) {
                        int64_t rows = mc - ir < mr ? mc - ir : mr;
                        j->set.fn(kc, ap + ir * kc, bp + jr * kc, tile);
                        put_tile(j, tile, ic + ir, jc + jr, rows, cols, pc > 0);
                    }
                }
            }
        }
    }
}

static void dgemm_worker(void* ctx, int w) {
    dgemm_job* j = ctx;
    if (!j->pack[w]) return;
    int64_t total = j->by_rows ? j->m : j->n;
    int64_t unit = j->by_rows ? j->set.mr : j->set.nr;
    int64_t units = (total + unit - 1) / unit;
    int64_t u0 = units * w / j->nworkers, u1 = units * (w + 1) / j->nworkers;
    int64_t lo = u0 * unit, hi = u1 * unit < total ? u1 * unit : total;
    if (lo >= hi) return;
    if (j->by_rows) dgemm_block(j, j->pack[w], lo, hi, 0, j->n);
    else dgemm_block(j, j->pack[w], 0, j->m, lo, hi);
}

hg_status hg_cpu_dgemm(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs,
                       int64_t a_cs, const double* b, int64_t b_rs, int64_t b_cs, double* out,
                       int64_t c_rs, int64_t c_cs, hg_pool* pool) {
    dgemm_job j;
    memset(&j, 0, sizeof j);
    j.set = the_set();
    j.m = m; j.n = n; j.k = k;
    j.a = a; j.a_rs = a_rs; j.a_cs = a_cs;
    j.b = b; j.b_rs = b_rs; j.b_cs = b_cs;
    j.c = out; j.c_rs = c_rs; j.c_cs = c_cs;
    // Small products stay on the calling thread (a wake-up costs more than they take).
    double flops = 2.0 * (double)m * (double)n * (double)k;
    int nw = flops < 4e6 || !pool ? 1 : hg_pool_size(pool);
    if (nw > 64) nw = 64;
    j.by_rows = m > n;
    int64_t units = j.by_rows ? (m + j.set.mr - 1) / j.set.mr : (n + j.set.nr - 1) / j.set.nr;
    if (nw > units) nw = (int)units;
    if (nw < 1) nw = 1;
    j.nworkers = nw;
    // Pack buffers sized for this product (small products must not pay for megabytes).
    int64_t kc = k < KC ? k : KC;
    int64_t mr = j.set.mr, nr = j.set.nr;
    int64_t mc = (m + mr - 1) / mr * mr, nc = (n + nr - 1) / nr * nr;
    j.ap_len = (mc < MC ? mc : MC) * kc;
    j.bp_len = (nc < NC ? nc : NC) * kc;
    // Each part rounded up to 8 doubles so the next one stays 64-byte aligned.
    j.ap_len = (j.ap_len + 7) / 8 * 8;
    j.bp_len = (j.bp_len + 7) / 8 * 8;
    size_t ws = (size_t)(j.ap_len + j.bp_len + 16 * 16) * sizeof(double);
    for (int w = 0; w < nw; w++) {
        j.pack[w] = aligned_alloc(64, ws);
        if (!j.pack[w]) {
            for (int q = 0; q < w; q++) free(j.pack[q]);
            return hg_error(HG_ERR_OUT_OF_MEMORY,
                            "no memory for the f64 matmul pack buffers (%zu bytes)", ws);
        }
    }
    if (nw == 1) dgemm_worker(&j, 0);
    else hg_pool_run(pool, nw, dgemm_worker, &j);
    for (int w = 0; w < nw; w++) free(j.pack[w]);
    return HG_OK;
}
