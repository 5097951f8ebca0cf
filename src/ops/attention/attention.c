// scaled_dot_product_attention on the host, fused per block of query rows: the block's scores
// q_blk k^T * scale (one product), the mask and the causal bound applied in place, each row's
// softmax in place (softmax.c's f32 slice kernel; f64 in f64), then one product with v into
// out's rows. Only a block's scores exist at a time (at most BLOCK x S values per worker), so
// memory grows linearly in the key count; for causal blocks the keys past the block's last
// row are never computed. Blocks of every (batch, head) are spread over the executor's
// threads, interleaved (causal blocks grow along the rows).
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/attention/attention.h"
#include "ops/rows/softmax_f32.h"

#define BLOCK 64   // query rows per task: the scores of 64 x S stay in L2 for S <= 2048

typedef struct attn_job {
    hg_attn_par par;                              // first: hg_attn_parallel's
    const hg_op_ctx* c;
    int f64;
    int64_t L, S, E, Ev, nblocks, ntasks;
    double scale;
    int causal;
    const unsigned char *q, *k, *v, *m;
    unsigned char *o, *lse;                      // lse: NULL when not asked
    hg_dtype mdt;
    int64_t q_rs, k_rs, v_rs, o_rs, m_rs, m_cs, l_rs;   // row strides (elements); mask column
    int64_t *qoff, *koff, *voff, *ooff, *moff, *loff;   // per batch: element offsets
} attn_job;

int hg_attention_host_ok(const hg_op_ctx* c, const hg_tensor* q, const hg_tensor* k,
                         const hg_tensor* v, const hg_tensor* out) {
    if (q->dtype != HG_DTYPE_F32 && q->dtype != HG_DTYPE_F64) return 0;
    const hg_tensor* ts[4] = {q, k, v, out};
    for (int i = 0; i < 4; i++) {
        const hg_tensor* t = ts[i];
        if (t->shape[t->ndim - 1] > 1 && t->strides[t->ndim - 1] != 1) return 0;
    }
    return hg_op_host_gemm_ok(c);
}

HG_ATTN_MASK_ROW(mask_row_f32_at, float)
HG_ATTN_MASK_ROW(mask_row_f64_at, double)

// The mask's element of query i, key 0, in batch b (NULL: no mask).
static const unsigned char* mask_at(const attn_job* j, int64_t b, int64_t i) {
    return j->m ? j->m + (j->moff[b] + i * j->m_rs) * (int64_t)hg_dtype_size(j->mdt) : NULL;
}

// Row i of the scores: the mask and the causal bound; whether any key is left.
static int mask_row_f32(const attn_job* j, float* s, int64_t b, int64_t i, int64_t nk) {
    return mask_row_f32_at(s, mask_at(j, b, i), j->mdt,
                           j->m_cs * (int64_t)hg_dtype_size(j->mdt), j->causal, i, nk);
}
static int mask_row_f64(const attn_job* j, double* s, int64_t b, int64_t i, int64_t nk) {
    return mask_row_f64_at(s, mask_at(j, b, i), j->mdt,
                           j->m_cs * (int64_t)hg_dtype_size(j->mdt), j->causal, i, nk);
}

// softmax of one f64 row in place (max, exp of the differences, their sum, the quotients);
// returns the row's logsumexp.
static double softmax_row_f64(double* s, int64_t n) {
    double mx = -INFINITY;
    for (int64_t t = 0; t < n; t++) mx = s[t] > mx || s[t] != s[t] ? s[t] : mx;
    double sum = 0.0;
    for (int64_t t = 0; t < n; t++) {
        s[t] = exp(s[t] - mx);
        sum += s[t];
    }
    for (int64_t t = 0; t < n; t++) s[t] /= sum;
    return mx + log(sum);
}

// The largest of n floats (NaN-blind: a NaN row's logsumexp comes out NaN from its softmax).
static float row_max_f32(const float* s, int64_t n) {
    float m = -INFINITY;
    for (int64_t t = 0; t < n; t++) m = s[t] > m ? s[t] : m;
    return m;
}

// One task: batch b, query rows [i0, i0 + n).
static hg_status run_block(const attn_job* j, unsigned char* buf, int64_t b, int64_t i0,
                           int64_t n) {
    // Causal: the rows' keys end at the block's last row (keys past it are masked anyway).
    int64_t nk = j->causal && i0 + n < j->S ? i0 + n : j->S;
    int alive[BLOCK];
    hg_status s = HG_OK;
    if (!j->f64) {
        const float* q = (const float*)j->q + j->qoff[b] + i0 * j->q_rs;
        const float* k = (const float*)j->k + j->koff[b];
        const float* v = (const float*)j->v + j->voff[b];
        float* o = (float*)j->o + j->ooff[b] + i0 * j->o_rs;
        float* sc = (float*)buf;
        if (nk > 0)
            s = hg_op_host_sgemm(j->c, 0, 1, n, nk, j->E, (float)j->scale, q, j->q_rs, k, j->k_rs,
                                 0.0f, sc, nk);
        int all = 1;
        float smax[BLOCK];   // lse: each row's largest score, before its softmax
        for (int64_t r = 0; r < n && !s; r++) {
            alive[r] = j->m || j->causal ? mask_row_f32(j, sc + r * nk, b, i0 + r, nk) : 1;
            all &= alive[r];
            if (j->lse) smax[r] = row_max_f32(sc + r * nk, nk);
        }
        if (!s && all && nk > 0) {   // the block's rows end to end: softmax.c's row kernels
            hg_sm_rows_f32(sc, sc, n, nk, 0);
        } else {
            for (int64_t r = 0; r < n && !s; r++) {
                float* row = sc + r * nk;
                if (alive[r]) hg_sm_slice_f32(row, row, nk, 0);
                else memset(row, 0, (size_t)nk * sizeof(float));
            }
        }
        // lse = max + log(sum of exp(s - max)) = max - log(the largest probability)
        for (int64_t r = 0; j->lse && r < n && !s; r++) {
            float* lp = (float*)j->lse + j->loff[b] + (i0 + r) * j->l_rs;
            double pm = nk > 0 && alive[r] ? (double)row_max_f32(sc + r * nk, nk) : 0.0;
            *lp = nk > 0 && alive[r] ? (float)((double)smax[r] - log(pm)) : 0.0f;
        }
        if (!s && nk > 0 && j->Ev > 0)
            s = hg_op_host_sgemm(j->c, 0, 0, n, j->Ev, nk, 1.0f, sc, nk, v, j->v_rs, 0.0f, o,
                                 j->o_rs);
        for (int64_t r = 0; r < n && !s; r++)   // no key at all: zeros (the product's NaN-free 0s
            if (nk == 0 || !alive[r])           // would do, but v may hold inf / NaN)
                memset(o + r * j->o_rs, 0, (size_t)j->Ev * sizeof(float));
    } else {
        const double* q = (const double*)j->q + j->qoff[b] + i0 * j->q_rs;
        const double* k = (const double*)j->k + j->koff[b];
        const double* v = (const double*)j->v + j->voff[b];
        double* o = (double*)j->o + j->ooff[b] + i0 * j->o_rs;
        double* sc = (double*)buf;
        if (nk > 0 && j->E > 0) {
            s = hg_op_host_dgemm(j->c, n, nk, j->E, q, j->q_rs, 1, k, 1, j->k_rs, sc, nk, 1);
            for (int64_t t = 0; t < n * nk; t++) sc[t] *= j->scale;
        } else if (nk > 0) {
            memset(sc, 0, (size_t)(n * nk) * sizeof(double));
        }
        for (int64_t r = 0; r < n && !s; r++) {
            double* row = sc + r * nk;
            alive[r] = j->m || j->causal ? mask_row_f64(j, row, b, i0 + r, nk) : 1;
            double l = 0.0;
            if (alive[r] && nk > 0) l = softmax_row_f64(row, nk);
            else memset(row, 0, (size_t)nk * sizeof(double));
            if (j->lse) *((double*)j->lse + j->loff[b] + (i0 + r) * j->l_rs) = l;
        }
        if (!s && nk > 0 && j->Ev > 0)
            s = hg_op_host_dgemm(j->c, n, j->Ev, nk, sc, nk, 1, v, j->v_rs, 1, o, j->o_rs, 1);
        for (int64_t r = 0; r < n && !s; r++)
            if (nk == 0 || !alive[r]) memset(o + r * j->o_rs, 0, (size_t)j->Ev * sizeof(double));
    }
    return s;
}

static void attn_worker(void* ctx, int w) {
    attn_job* j = ctx;
    unsigned char* buf = j->par.scratch + (size_t)w * j->par.scratch_bytes;   // BLOCK x S scores
    for (int64_t t = w; t < j->ntasks; t += j->par.nw) {
        if (atomic_load_explicit(&j->par.failed, memory_order_relaxed)) return;
        int64_t b = t / j->nblocks, i0 = t % j->nblocks * BLOCK;
        int64_t n = j->L - i0 < BLOCK ? j->L - i0 : BLOCK;
        if (run_block(j, buf, b, i0, n)) atomic_store(&j->par.failed, 1);
    }
}

hg_status hg_attn_parallel(hg_op_ctx* c, hg_attn_par* par, double flops, int64_t ntasks,
                           int64_t S, void (*worker)(void*, int), void* job) {
    int nw = flops < 2e5 ? 1 : hg_op_num_threads(c);
    if (nw > ntasks) nw = (int)ntasks;
    par->nw = nw;
    par->scratch = aligned_alloc(64, par->scratch_bytes * (size_t)nw);
    if (!par->scratch)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for the scores of %d rows x %lld "
                        "keys", c->fn, BLOCK, (long long)S);
    atomic_init(&par->failed, 0);
    hg_status s = hg_op_parallel(c, nw, worker, job, &par->nw);
    if (!s && atomic_load(&par->failed))
        s = hg_error(HG_ERR_INTERNAL, "%s: a block's product failed", c->fn);
    free(par->scratch);
    par->scratch = NULL;
    return s;
}

void hg_attn_batch_offsets(const int64_t* qshape, int32_t nl, const hg_host_view* t,
                           int32_t lead, int64_t group, int64_t nbatch, int64_t* out) {
    int64_t st[HG_MAX_DIMS] = {0}, idx[HG_MAX_DIMS] = {0};
    for (int32_t d = 0; d < nl; d++) {
        int32_t td = d - lead;
        st[d] = td >= 0 && t->shape[td] != 1 ? t->strides[td] : 0;
    }
    for (int64_t b = 0; b < nbatch; b++) {
        int64_t o = 0;
        for (int32_t d = 0; d < nl; d++) o += (d == nl - 1 ? idx[d] / group : idx[d]) * st[d];
        out[b] = o;
        for (int32_t d = nl - 1; d >= 0; d--) {
            if (++idx[d] < qshape[d]) break;
            idx[d] = 0;
        }
    }
}

// The element offsets per batch of q's leading dims of q's, k's, v's, out's, the mask's and
// lse's matrices: k and v take head h / group; the mask is right-aligned to the scores' dims.
static void batch_offsets(attn_job* j, const hg_host_view* qv, const hg_host_view* kv,
                          const hg_host_view* vv, const hg_host_view* ov, const hg_host_view* mv,
                          const hg_host_view* lv, int64_t nbatch) {
    int32_t nl = qv->ndim - 2, hd = qv->ndim - 3;
    int64_t group = hd >= 0 ? qv->shape[hd] / kv->shape[hd] : 1;
    hg_attn_batch_offsets(qv->shape, nl, qv, 0, 1, nbatch, j->qoff);
    hg_attn_batch_offsets(qv->shape, nl, kv, 0, group, nbatch, j->koff);
    hg_attn_batch_offsets(qv->shape, nl, vv, 0, group, nbatch, j->voff);
    hg_attn_batch_offsets(qv->shape, nl, ov, 0, 1, nbatch, j->ooff);
    if (mv) hg_attn_batch_offsets(qv->shape, nl, mv, qv->ndim - mv->ndim, 1, nbatch, j->moff);
    if (lv) hg_attn_batch_offsets(qv->shape, nl, lv, 0, 1, nbatch, j->loff);
}

hg_status hg_attention_host(hg_op_ctx* c, const hg_tensor* q, const hg_tensor* k,
                            const hg_tensor* v, const hg_tensor* mask, int causal, double scale,
                            const hg_tensor* out, const hg_tensor* lse) {
    hg_host_view qv, kv, vv, ov, mv, lv;
    hg_status s;
    if ((s = hg_op_host_view_checked(c, q, &qv)) || (s = hg_op_host_view_checked(c, k, &kv)) ||
        (s = hg_op_host_view_checked(c, v, &vv)) || (s = hg_op_host_view_checked(c, out, &ov)) ||
        (mask && (s = hg_op_host_view_checked(c, mask, &mv))) ||
        (lse && (s = hg_op_host_view_checked(c, lse, &lv))))
        return s;
    if (ov.numel == 0 && (!lse || lv.numel == 0)) return HG_OK;
    int32_t nd = qv.ndim;
    attn_job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.f64 = qv.dtype == HG_DTYPE_F64;
    j.L = qv.shape[nd - 2], j.E = qv.shape[nd - 1];
    j.S = kv.shape[nd - 2], j.Ev = vv.shape[nd - 1];
    j.scale = scale;
    j.causal = causal;
    j.q = qv.data, j.k = kv.data, j.v = vv.data, j.o = ov.data;
    j.q_rs = qv.strides[nd - 2], j.k_rs = kv.strides[nd - 2];
    j.v_rs = vv.strides[nd - 2], j.o_rs = ov.strides[nd - 2];
    if (lse) {
        j.lse = lv.data;
        j.l_rs = lv.shape[nd - 2] != 1 ? lv.strides[nd - 2] : 0;
    }
    if (mask) {
        j.m = mv.data;
        j.mdt = mv.dtype;
        j.m_rs = mv.ndim >= 2 && mv.shape[mv.ndim - 2] != 1 ? mv.strides[mv.ndim - 2] : 0;
        j.m_cs = mv.ndim >= 1 && mv.shape[mv.ndim - 1] != 1 ? mv.strides[mv.ndim - 1] : 0;
    }
    int64_t nbatch = 1;
    for (int32_t d = 0; d < nd - 2; d++) nbatch *= qv.shape[d];
    j.nblocks = (j.L + BLOCK - 1) / BLOCK;
    j.ntasks = nbatch * j.nblocks;
    int64_t* offs = malloc((size_t)nbatch * 6 * sizeof(int64_t));
    if (!offs) return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of memory", c->fn);
    j.qoff = offs, j.koff = offs + nbatch, j.voff = offs + 2 * nbatch;
    j.ooff = offs + 3 * nbatch, j.moff = offs + 4 * nbatch, j.loff = offs + 5 * nbatch;
    batch_offsets(&j, &qv, &kv, &vv, &ov, mask ? &mv : NULL, lse ? &lv : NULL, nbatch);
    double flops = 4.0 * (double)nbatch * (double)j.L * (double)j.S * (double)(j.E + j.Ev) / 2;
    size_t esz = j.f64 ? sizeof(double) : sizeof(float);
    j.par.scratch_bytes = ((size_t)BLOCK * (size_t)(j.S ? j.S : 1) * esz + 63) & ~(size_t)63;
    s = hg_attn_parallel(c, &j.par, flops, j.ntasks, j.S, attn_worker, &j);
    free(offs);
    return s;
}
