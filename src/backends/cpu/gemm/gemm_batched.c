// hg_cpu_sgemm_batched (gemm.h): products too small to split (below HG_SGEMM_PARALLEL_FLOPS)
// are spread over the pool's workers whole, each worker running its share of the batch on
// its own thread; larger ones run one after another, each split over the pool as
// hg_cpu_sgemm splits it. Per batch element the arithmetic is the same either way.
#include "backends/cpu/gemm/gemm.h"

typedef struct sb_job {
    int ta, tb;
    int64_t m, n, k, lda, ldb, ldc, sa, sb, sc, batch;
    float alpha, beta;
    const float *a, *b;
    float* c;
    int nw;
} sb_job;

static void sb_worker(void* ctx, int w) {
    const sb_job* j = ctx;
    int64_t i0 = j->batch * w / j->nw, i1 = j->batch * (w + 1) / j->nw;
    for (int64_t i = i0; i < i1; i++)
        hg_cpu_sgemm(j->ta, j->tb, j->m, j->n, j->k, j->alpha, j->a + i * j->sa, j->lda,
                     j->b + i * j->sb, j->ldb, j->beta, j->c + i * j->sc, j->ldc, NULL);
}

void hg_cpu_sgemm_batched(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                          float alpha, const float* a, int64_t lda, int64_t stride_a,
                          const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
                          int64_t ldc, int64_t stride_c, int64_t batch, hg_pool* pool) {
    int threads = pool ? hg_pool_size(pool) : 1;
    if (batch < 2 || threads < 2 || 2.0 * (double)m * (double)n * (double)k >=
                                         HG_SGEMM_PARALLEL_FLOPS) {
        for (int64_t i = 0; i < batch; i++)
            hg_cpu_sgemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda,
                         b + i * stride_b, ldb, beta, c + i * stride_c, ldc, pool);
        return;
    }
    sb_job j = {trans_a, trans_b, m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, batch,
                alpha, beta, a, b, c, (int)(batch < threads ? batch : threads)};
    hg_pool_run(pool, j.nw, sb_worker, &j);
}
