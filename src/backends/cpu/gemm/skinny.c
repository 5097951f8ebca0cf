// Skinny SGEMM driver: C with at most HG_SGEMM_SKINNY_MAX rows (or HG_SGEMM_SKINNY_COLS_MAX
// columns, computed as C^T = op(B)^T op(A)^T) goes to the unpacked kernels of
// simd/gemv_kernel.c; the large operand is read in place, once per group of 4 rows, and its
// columns are split over the pool's threads.
#include "backends/cpu/gemm/gemm.h"
#include "base/cpu_level.h"
#include <stdlib.h>
#include <string.h>

typedef struct skinny_job {
    const hg_sgemm_skinny_set* set;
    int m, dots, parts;
    int64_t n, k, chunk;
    float alpha, beta;
    const float* s;
    int64_t s_rs, s_cs;
    const float* srow[HG_SGEMM_SKINNY_MAX];
    const float* l;
    int64_t ldl;
    float* c;
    int64_t c_rs, c_cs;
} skinny_job;

static const hg_sgemm_skinny_set sets[] = {
    {"generic", hg_sgemm_skinny_rows_generic, hg_sgemm_skinny_dots_generic, NULL},
#if defined(HG_HAVE_AVX2_KERNELS)
    {"avx2", hg_sgemm_skinny_rows_avx2, hg_sgemm_skinny_dots_avx2, hg_sgemm_narrow_avx2},
    {"avx512", hg_sgemm_skinny_rows_avx2, hg_sgemm_skinny_dots_avx2, hg_sgemm_narrow_avx512},
#endif
};

static int set_ok(size_t i) {
    return i == 0 || hg_cpu_level_get() >= (i == 1 ? HG_CPU_AVX2 : HG_CPU_AVX512);
}

// ---- narrow: C with at most HG_SGEMM_NARROW_MAX columns, A and B row-major ------------------
typedef struct narrow_job {
    hg_sgemm_narrow_fn fn;
    int64_t m, k, chunk;
    int n;
    float alpha, beta;
    const float* a;
    int64_t lda;
    const float* b;
    int64_t ldb;
    float* c;
    int64_t ldc;
} narrow_job;

static void narrow_part(void* ctx, int w) {
    const narrow_job* j = ctx;
    int64_t lo = (int64_t)w * j->chunk;
    if (lo >= j->m) return;
    int64_t cnt = j->m - lo < j->chunk ? j->m - lo : j->chunk;
    j->fn(cnt, j->n, j->k, j->alpha, j->a + lo * j->lda, j->lda, j->b, j->ldb, j->beta,
          j->c + lo * j->ldc, j->ldc);
}

static void narrow_run(hg_sgemm_narrow_fn fn, int64_t m, int n, int64_t k, float alpha,
                       const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                       float* c, int64_t ldc, hg_pool* pool) {
    narrow_job j = {fn, m, k, m, n, alpha, beta, a, lda, b, ldb, c, ldc};
    int threads = pool ? hg_pool_size(pool) : 1, parts = 1;
    // Rows in multiples of 8 per thread.
    if (threads > 1 && 2.0 * (double)m * n * (double)k >= HG_SGEMM_PARALLEL_FLOPS && m >= 16) {
        int64_t per = (m + threads - 1) / threads;
        j.chunk = (per + 7) / 8 * 8;
        parts = (int)((m + j.chunk - 1) / j.chunk);
    }
    if (parts <= 1) narrow_part(&j, 0);
    else hg_pool_run(pool, parts, narrow_part, &j);
}

const hg_sgemm_skinny_set* hg_cpu_sgemm_skinny_set_named(const char* name) {
    const hg_sgemm_skinny_set* best = NULL;
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        if (!set_ok(i)) continue;
        if (name && !strcmp(name, sets[i].name)) return &sets[i];
        best = &sets[i];
    }
    return name ? NULL : best;
}

// Rows [i0, i0 + mg) of S against columns [lo, lo + cnt) of L.
static void skinny_piece(const skinny_job* j, int i0, int mg, int64_t lo, int64_t cnt) {
    float* c = j->c + i0 * j->c_rs + lo * j->c_cs;
    if (j->dots)
        j->set->dots(mg, cnt, j->k, j->alpha, j->srow + i0, j->l + lo * j->ldl, j->ldl, j->beta, c,
                     j->c_rs, j->c_cs);
    else
        j->set->rows(mg, cnt, j->k, j->alpha, j->s + i0 * j->s_rs, j->s_rs, j->s_cs, j->l + lo,
                     j->ldl, j->beta, c, j->c_rs, j->c_cs);
}

static void skinny_part(void* ctx, int w) {
    const skinny_job* j = ctx;
    int64_t lo = (int64_t)w * j->chunk;
    if (lo >= j->n) return;
    int64_t cnt = j->n - lo < j->chunk ? j->n - lo : j->chunk;
    // Groups of up to 4 rows: each group reads this part of L once.
    for (int i0 = 0; i0 < j->m; i0 += HG_SGEMM_SKINNY_GROUP) {
        int mg = j->m - i0 < HG_SGEMM_SKINNY_GROUP ? j->m - i0 : HG_SGEMM_SKINNY_GROUP;
        skinny_piece(j, i0, mg, lo, cnt);
    }
}

int hg_cpu_sgemm_skinny(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                        const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                        float* c, int64_t ldc, hg_pool* pool) {
    if (m <= 0 || n <= 0 || k <= 0 || alpha == 0.0f) return 0;
    const hg_sgemm_skinny_set* set = hg_cpu_sgemm_skinny_set_named(NULL);
    if (set->narrow && !trans_a && !trans_b && n <= HG_SGEMM_NARROW_MAX && m >= n) {
        narrow_run(set->narrow, m, (int)n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
        return 1;
    }
    int rows = m <= HG_SGEMM_SKINNY_MAX, cols = n <= HG_SGEMM_SKINNY_COLS_MAX;
    if (set->narrow && !trans_a && !trans_b && !rows && n <= HG_SGEMM_PANEL_MAX_COLS &&
        (double)m * (double)n * (double)k <= HG_SGEMM_PANEL_MAX_MNK) {
        for (int64_t j0 = 0; j0 < n; j0 += HG_SGEMM_NARROW_MAX) {
            int nb = n - j0 < HG_SGEMM_NARROW_MAX ? (int)(n - j0) : HG_SGEMM_NARROW_MAX;
            narrow_run(set->narrow, m, nb, k, alpha, a, lda, b + j0, ldb, beta, c + j0, ldc, pool);
        }
        return 1;
    }
    if (!rows && !cols) return 0;
    skinny_job j = {.set = set, .k = k, .alpha = alpha, .beta = beta, .c = c};
    if (rows && (m <= n || !cols)) {
        // S = op(A) (m x k), L = op(B) (k x n), C as given.
        j.m = (int)m;
        j.n = n;
        j.s = a;
        j.s_rs = trans_a ? 1 : lda;
        j.s_cs = trans_a ? lda : 1;
        j.l = b;
        j.ldl = ldb;
        j.dots = trans_b != 0;
        j.c_rs = ldc;
        j.c_cs = 1;
    } else {
        // C^T (n x m) = op(B)^T op(A)^T: S = op(B)^T (n x k), L = op(A)^T (k x m).
        j.m = (int)n;
        j.n = m;
        j.s = b;
        j.s_rs = trans_b ? ldb : 1;
        j.s_cs = trans_b ? 1 : ldb;
        j.l = a;
        j.ldl = lda;
        j.dots = trans_a == 0;
        j.c_rs = 1;
        j.c_cs = ldc;
    }
    float* scratch = NULL;
    if (j.dots) {
        // The dots kernel reads S's rows contiguous: copy them when they are not (k x m floats,
        // small beside the k x n the product reads).
        if (j.s_cs == 1) {
            for (int i = 0; i < j.m; i++) j.srow[i] = j.s + i * j.s_rs;
        } else {
            scratch = malloc((size_t)j.m * (size_t)k * sizeof(float));
            if (!scratch) return 0;   // the packed path needs no such copy
            for (int i = 0; i < j.m; i++) {
                for (int64_t p = 0; p < k; p++) scratch[i * k + p] = j.s[i * j.s_rs + p * j.s_cs];
                j.srow[i] = scratch + i * k;
            }
        }
    }
    int threads = pool ? hg_pool_size(pool) : 1;
    double flops = 2.0 * (double)j.m * (double)j.n * (double)k;
    j.parts = 1;
    j.chunk = j.n;
    // Columns in multiples of 64 per thread.
    if (threads > 1 && flops >= HG_SGEMM_PARALLEL_FLOPS && j.n >= 128) {
        int64_t per = (j.n + threads - 1) / threads;
        j.chunk = (per + 63) / 64 * 64;
        j.parts = (int)((j.n + j.chunk - 1) / j.chunk);
    }
    if (j.parts <= 1) skinny_part(&j, 0);
    else hg_pool_run(pool, j.parts, skinny_part, &j);
    free(scratch);
    return 1;
}
