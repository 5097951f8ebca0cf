// The gradients of scaled_dot_product_attention on the host, fused per key/value head. A task
// owns one key/value head (of one batch): it zeroes that head's grad_k and grad_v rows, then
// for every query head reading it and every block of query rows recomputes the block's scores
// (one product), masks them, turns them into the forward's probabilities P = exp(score - lse)
// (no max or sum pass: lse is the forward's), and adds the block's parts:
//   grad_v += P^T grad_out,  dS = P * (grad_out v^T - rowsum(grad_out * out)) * scale,
//   grad_q  = dS k,          grad_k += dS^T q
// (five products). Only a block's scores and their gradient exist at a time (2 x BLOCK x S
// values per worker); causal blocks stop at their last row's key. Tasks write disjoint rows, so
// the sums over query heads and blocks need no atomics and come out the same on any thread
// count.
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/attention/attention.h"
#include "ops/rows/softmax_f32.h"

#define BLOCK 64   // query rows per step, as the forward's blocks

typedef struct bw_job {
    hg_attn_par par;          // first: hg_attn_parallel's; scratch per worker: P and dS
                              // (BLOCK x S each), f64 also one S x max(E, Ev) product
    const hg_op_ctx* c;
    int f64, causal;
    int64_t L, S, E, Ev, group, nblocks, ntasks;
    double scale;
    const unsigned char *q, *k, *v, *go, *o, *lse, *m;
    unsigned char *dq, *dk, *dv;
    hg_dtype mdt;
    int64_t q_rs, k_rs, v_rs, go_rs, o_rs, l_rs, m_rs, m_cs, dq_rs, dk_rs, dv_rs;
    // per batch of q's leading dims: element offsets (k, v, dk, dv: of its key/value head)
    int64_t *qoff, *koff, *voff, *gooff, *ooff, *loff, *moff, *dqoff, *dkoff, *dvoff;
} bw_job;

HG_ATTN_MASK_ROW(mask_f32, float)
HG_ATTN_MASK_ROW(mask_f64, double)

int hg_attention_bw_host_ok(const hg_op_ctx* c, const hg_tensor* const* ts, int n) {
    if (ts[0]->dtype != HG_DTYPE_F32 && ts[0]->dtype != HG_DTYPE_F64) return 0;
    for (int i = 0; i < n; i++) {   // one dtype (an output of another one: the decomposition)
        const hg_tensor* t = ts[i];
        if (t->dtype != ts[0]->dtype) return 0;
        if (t->shape[t->ndim - 1] > 1 && t->strides[t->ndim - 1] != 1) return 0;
    }
    return hg_op_host_gemm_ok(c);
}

// The mask's element of query i, key 0, in batch b (NULL: no mask).
static const unsigned char* mask_at(const bw_job* j, int64_t b, int64_t i) {
    return j->m ? j->m + (j->moff[b] + i * j->m_rs) * (int64_t)hg_dtype_size(j->mdt) : NULL;
}

static void zero_rows(unsigned char* p, int64_t rows, int64_t cols, int64_t rs, size_t es) {
    if (rows <= 0 || cols <= 0) return;   // (an empty tensor's data may be NULL)
    for (int64_t r = 0; r < rows; r++) memset(p + (size_t)(r * rs) * es, 0, (size_t)cols * es);
}

// Query rows [i0, i0 + n) of batch b (f32).
static hg_status block_f32(const bw_job* j, float* P, float* dS, int64_t b, int64_t i0,
                           int64_t n) {
    const hg_op_ctx* c = j->c;
    int64_t nk = j->causal && i0 + n < j->S ? i0 + n : j->S;
    const float* q = (const float*)j->q + j->qoff[b] + i0 * j->q_rs;
    const float* k = (const float*)j->k + j->koff[b];
    const float* v = (const float*)j->v + j->voff[b];
    const float* go = (const float*)j->go + j->gooff[b] + i0 * j->go_rs;
    const float* o = (const float*)j->o + j->ooff[b] + i0 * j->o_rs;
    const float* lse = (const float*)j->lse + j->loff[b] + i0 * j->l_rs;
    float* dq = (float*)j->dq + j->dqoff[b] + i0 * j->dq_rs;
    float* dk = (float*)j->dk + j->dkoff[b];
    float* dv = (float*)j->dv + j->dvoff[b];
    if (nk == 0) {
        zero_rows((unsigned char*)dq, n, j->E, j->dq_rs, sizeof(float));
        return HG_OK;
    }
    hg_status s = hg_op_host_sgemm(c, 0, 1, n, nk, j->E, (float)j->scale, q, j->q_rs, k,
                                   j->k_rs, 0.0f, P, nk);
    int64_t mcs = j->m_cs * (int64_t)(j->m ? hg_dtype_size(j->mdt) : 0);
    for (int64_t r = 0; r < n && !s; r++) {
        float* p = P + r * nk;
        if (j->m || j->causal) mask_f32(p, mask_at(j, b, i0 + r), j->mdt, mcs, j->causal, i0 + r, nk);
        float l = lse[r * j->l_rs];
        hg_sm_exp_shift_f32(p, nk, l);
    }
    if (!s && j->Ev > 0)   // grad_v += P^T grad_out
        s = hg_op_host_sgemm(c, 1, 0, nk, j->Ev, n, 1.0f, P, nk, go, j->go_rs, 1.0f, dv, j->dv_rs);
    if (!s)   // grad_out v^T (zero when Ev is 0)
        s = hg_op_host_sgemm(c, 0, 1, n, nk, j->Ev, 1.0f, go, j->go_rs, v, j->v_rs, 0.0f, dS, nk);
    float scale = (float)j->scale;
    for (int64_t r = 0; r < n && !s; r++) {
        const float *gr = go + r * j->go_rs, *orow = o + r * j->o_rs, *p = P + r * nk;
        double dd = 0.0;   // rowsum(grad_out * out), accumulated in f64
        for (int64_t e = 0; e < j->Ev; e++) dd += (double)gr[e] * (double)orow[e];
        float d = (float)dd;
        float* ds = dS + r * nk;
        for (int64_t t = 0; t < nk; t++) ds[t] = p[t] * (ds[t] - d) * scale;
    }
    if (!s && j->E > 0)   // grad_q = dS k
        s = hg_op_host_sgemm(c, 0, 0, n, j->E, nk, 1.0f, dS, nk, k, j->k_rs, 0.0f, dq, j->dq_rs);
    if (!s && j->E > 0)   // grad_k += dS^T q
        s = hg_op_host_sgemm(c, 1, 0, nk, j->E, n, 1.0f, dS, nk, q, j->q_rs, 1.0f, dk, j->dk_rs);
    return s;
}

// dst (rows x cols, row stride rs) += src (rows x cols, contiguous).
static void add_rows_f64(double* dst, int64_t rs, const double* src, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t e = 0; e < cols; e++) dst[r * rs + e] += src[r * cols + e];
}

// The same in f64 (the host dgemm has no alpha / beta: scaled and accumulated here).
static hg_status block_f64(const bw_job* j, double* P, double* dS, double* T, int64_t b,
                           int64_t i0, int64_t n) {
    const hg_op_ctx* c = j->c;
    int64_t nk = j->causal && i0 + n < j->S ? i0 + n : j->S;
    const double* q = (const double*)j->q + j->qoff[b] + i0 * j->q_rs;
    const double* k = (const double*)j->k + j->koff[b];
    const double* v = (const double*)j->v + j->voff[b];
    const double* go = (const double*)j->go + j->gooff[b] + i0 * j->go_rs;
    const double* o = (const double*)j->o + j->ooff[b] + i0 * j->o_rs;
    const double* lse = (const double*)j->lse + j->loff[b] + i0 * j->l_rs;
    double* dq = (double*)j->dq + j->dqoff[b] + i0 * j->dq_rs;
    double* dk = (double*)j->dk + j->dkoff[b];
    double* dv = (double*)j->dv + j->dvoff[b];
    if (nk == 0 || j->E == 0) {   // no key, or scores of no terms (all 0)
        if (nk == 0) {
            zero_rows((unsigned char*)dq, n, j->E, j->dq_rs, sizeof(double));
            return HG_OK;
        }
        memset(P, 0, (size_t)(n * nk) * sizeof(double));
    }
    hg_status s = HG_OK;
    if (j->E > 0) {
        s = hg_op_host_dgemm(c, n, nk, j->E, q, j->q_rs, 1, k, 1, j->k_rs, P, nk, 1);
        for (int64_t t = 0; t < n * nk; t++) P[t] *= j->scale;
    }
    int64_t mcs = j->m_cs * (int64_t)(j->m ? hg_dtype_size(j->mdt) : 0);
    for (int64_t r = 0; r < n && !s; r++) {
        double* p = P + r * nk;
        if (j->m || j->causal) mask_f64(p, mask_at(j, b, i0 + r), j->mdt, mcs, j->causal, i0 + r, nk);
        double l = lse[r * j->l_rs];
        for (int64_t t = 0; t < nk; t++) p[t] = exp(p[t] - l);
    }
    if (!s && j->Ev > 0) {   // grad_v += P^T grad_out
        s = hg_op_host_dgemm(c, nk, j->Ev, n, P, 1, nk, go, j->go_rs, 1, T, j->Ev, 1);
        if (!s) add_rows_f64(dv, j->dv_rs, T, nk, j->Ev);
    }
    if (!s && j->Ev > 0) s = hg_op_host_dgemm(c, n, nk, j->Ev, go, j->go_rs, 1, v, 1, j->v_rs, dS, nk, 1);
    else if (!s) memset(dS, 0, (size_t)(n * nk) * sizeof(double));
    for (int64_t r = 0; r < n && !s; r++) {
        const double *gr = go + r * j->go_rs, *orow = o + r * j->o_rs, *p = P + r * nk;
        double d = 0.0;
        for (int64_t e = 0; e < j->Ev; e++) d += gr[e] * orow[e];
        double* ds = dS + r * nk;
        for (int64_t t = 0; t < nk; t++) ds[t] = p[t] * (ds[t] - d) * j->scale;
    }
    if (!s && j->E > 0) s = hg_op_host_dgemm(c, n, j->E, nk, dS, nk, 1, k, j->k_rs, 1, dq, j->dq_rs, 1);
    if (!s && j->E > 0) {   // grad_k += dS^T q
        s = hg_op_host_dgemm(c, nk, j->E, n, dS, 1, nk, q, j->q_rs, 1, T, j->E, 1);
        if (!s) add_rows_f64(dk, j->dk_rs, T, nk, j->E);
    }
    return s;
}

// Task t: key/value head t of its batch, read by query batches t * group .. + group - 1.
static hg_status run_task(const bw_job* j, unsigned char* buf, int64_t t) {
    size_t es = j->f64 ? sizeof(double) : sizeof(float);
    int64_t b0 = t * j->group;
    zero_rows(j->dk + (size_t)j->dkoff[b0] * es, j->S, j->E, j->dk_rs, es);
    zero_rows(j->dv + (size_t)j->dvoff[b0] * es, j->S, j->Ev, j->dv_rs, es);
    size_t scores = (size_t)BLOCK * (size_t)(j->S ? j->S : 1);
    hg_status s = HG_OK;
    for (int64_t g = 0; g < j->group && !s; g++)
        for (int64_t i0 = 0; i0 < j->L && !s; i0 += BLOCK) {
            int64_t n = j->L - i0 < BLOCK ? j->L - i0 : BLOCK;
            if (j->f64)
                s = block_f64(j, (double*)buf, (double*)buf + scores, (double*)buf + 2 * scores,
                              b0 + g, i0, n);
            else
                s = block_f32(j, (float*)buf, (float*)buf + scores, b0 + g, i0, n);
        }
    return s;
}

static void bw_worker(void* ctx, int w) {
    bw_job* j = ctx;
    unsigned char* buf = j->par.scratch + (size_t)w * j->par.scratch_bytes;
    for (int64_t t = w; t < j->ntasks; t += j->par.nw) {
        if (atomic_load_explicit(&j->par.failed, memory_order_relaxed)) return;
        if (run_task(j, buf, t)) atomic_store(&j->par.failed, 1);
    }
}

hg_status hg_attention_bw_host(hg_op_ctx* c, const hg_tensor* q, const hg_tensor* k,
                               const hg_tensor* v, const hg_tensor* grad_out,
                               const hg_tensor* out, const hg_tensor* lse, const hg_tensor* mask,
                               int causal, double scale, const hg_tensor* grad_q,
                               const hg_tensor* grad_k, const hg_tensor* grad_v) {
    enum { Q, K, V, GO, O, LSE, DQ, DK, DV, M, NV };
    const hg_tensor* ts[NV] = {q, k, v, grad_out, out, lse, grad_q, grad_k, grad_v, mask};
    hg_host_view hv[NV];
    hg_status s;
    for (int i = 0; i < NV; i++)
        if (ts[i] && (s = hg_op_host_view_checked(c, ts[i], &hv[i]))) return s;
    int32_t nd = hv[Q].ndim, nl = nd - 2;
    bw_job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.f64 = hv[Q].dtype == HG_DTYPE_F64;
    j.causal = causal;
    j.scale = scale;
    j.L = hv[Q].shape[nd - 2], j.E = hv[Q].shape[nd - 1];
    j.S = hv[K].shape[nd - 2], j.Ev = hv[V].shape[nd - 1];
    j.group = nd >= 3 ? hv[Q].shape[nd - 3] / hv[K].shape[nd - 3] : 1;
    j.q = hv[Q].data, j.k = hv[K].data, j.v = hv[V].data, j.go = hv[GO].data, j.o = hv[O].data;
    j.lse = hv[LSE].data, j.dq = hv[DQ].data, j.dk = hv[DK].data, j.dv = hv[DV].data;
    j.q_rs = hv[Q].strides[nd - 2], j.k_rs = hv[K].strides[nd - 2];
    j.v_rs = hv[V].strides[nd - 2], j.go_rs = hv[GO].strides[nd - 2];
    j.o_rs = hv[O].strides[nd - 2], j.dq_rs = hv[DQ].strides[nd - 2];
    j.dk_rs = hv[DK].strides[nd - 2], j.dv_rs = hv[DV].strides[nd - 2];
    j.l_rs = hv[LSE].shape[nd - 2] != 1 ? hv[LSE].strides[nd - 2] : 0;
    if (mask) {
        const hg_host_view* mv = &hv[M];
        j.m = mv->data;
        j.mdt = mv->dtype;
        j.m_rs = mv->ndim >= 2 && mv->shape[mv->ndim - 2] != 1 ? mv->strides[mv->ndim - 2] : 0;
        j.m_cs = mv->ndim >= 1 && mv->shape[mv->ndim - 1] != 1 ? mv->strides[mv->ndim - 1] : 0;
    }
    int64_t nbatch = 1;
    for (int32_t d = 0; d < nl; d++) nbatch *= hv[Q].shape[d];
    j.ntasks = nbatch / j.group;
    if (j.ntasks == 0 || (j.S == 0 && j.L == 0)) return HG_OK;
    int64_t* offs = malloc((size_t)nbatch * 10 * sizeof(int64_t));
    if (!offs) return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of memory", c->fn);
    int64_t** dst[10] = {&j.qoff, &j.koff, &j.voff, &j.gooff, &j.ooff, &j.loff, &j.dqoff, &j.dkoff,
                         &j.dvoff, &j.moff};
    for (int i = 0; i < 10; i++) *dst[i] = offs + (size_t)i * (size_t)nbatch;
    const int kv_side[NV] = {[K] = 1, [V] = 1, [DK] = 1, [DV] = 1};
    for (int i = 0; i < NV; i++) {
        if (!ts[i]) continue;
        int32_t lead = i == M ? nd - hv[M].ndim : 0;
        hg_attn_batch_offsets(hv[Q].shape, nl, &hv[i], lead, kv_side[i] ? j.group : 1, nbatch,
                              *dst[i]);
    }
    double flops = 8.0 * (double)nbatch * (double)j.L * (double)j.S * (double)(j.E + j.Ev) / 2;
    size_t es = j.f64 ? sizeof(double) : sizeof(float);
    size_t scores = (size_t)BLOCK * (size_t)(j.S ? j.S : 1);
    int64_t wide = j.E > j.Ev ? j.E : j.Ev;
    size_t extra = j.f64 ? (size_t)(j.S ? j.S : 1) * (size_t)(wide ? wide : 1) : 0;
    j.par.scratch_bytes = ((2 * scores + extra) * es + 63) & ~(size_t)63;
    s = hg_attn_parallel(c, &j.par, flops, j.ntasks, j.S, bw_worker, &j);
    free(offs);
    return s;
}
