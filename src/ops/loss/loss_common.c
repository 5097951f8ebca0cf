// Shared argument handling and drivers of the loss functions (see loss_common.h).
#include "ops/loss/loss_common.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "tensor/tensor_internal.h"

hg_status hg_loss_reduction(hg_op_ctx* c, hg_reduction r) {
    if ((int)r < 0 || r >= HG_REDUCTION_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "%s: reduction %d is not one of HG_REDUCTION_NONE (0), MEAN (1), SUM (2)",
                        c->fn, (int)r);
    return HG_OK;
}

hg_status hg_loss_output(hg_op_ctx* c, hg_tensor* out, hg_reduction r, hg_dtype rt, int32_t nd,
                         const int64_t* shape) {
    if (r == HG_REDUCTION_NONE) return hg_op_output(c, out, rt, nd, shape, 1);
    return hg_op_output(c, out, rt, 0, NULL, 1);
}

hg_status hg_loss_float(hg_op_ctx* c, const hg_tensor* t, const char* name) {
    if (!hg_dtype_is_float((int)t->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: '%s' has dtype %s; losses take float tensors "
                        "(f16, bf16, f32, f64)", c->fn, name, hg_dtype_name(t->dtype));
    return HG_OK;
}

hg_status hg_loss_broadcast(hg_op_ctx* c, const hg_tensor* t, const char* name, int32_t nd,
                            const int64_t* shape, int64_t* strides) {
    char st[HG_DIMS_TEXT], ss[HG_DIMS_TEXT];
    if (t->ndim > nd)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: '%s' of shape %s has more dims than the input "
                        "shape %s it must broadcast to", c->fn, name,
                        hg_op_dims(st, t->ndim, t->shape), hg_op_dims(ss, nd, shape));
    int32_t lead = nd - t->ndim;
    for (int32_t d = 0; d < nd; d++) {
        if (d < lead) { strides[d] = 0; continue; }
        int64_t td = t->shape[d - lead];
        if (td != shape[d] && td != 1)
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: '%s' of shape %s does not broadcast to "
                            "the input shape %s", c->fn, name, hg_op_dims(st, t->ndim, t->shape),
                            hg_op_dims(ss, nd, shape));
        strides[d] = td == 1 ? 0 : t->strides[d - lead];
    }
    return HG_OK;
}

hg_status hg_loss_shape(hg_op_ctx* c, const hg_tensor* x, const char* xname, const hg_tensor* t,
                        int32_t* nd, int64_t* shape) {
    *nd = x->ndim > t->ndim ? x->ndim : t->ndim;
    for (int32_t d = 0; d < *nd; d++) {
        int32_t ix = d - (*nd - x->ndim), it = d - (*nd - t->ndim);
        int64_t a = ix >= 0 ? x->shape[ix] : 1, b = it >= 0 ? t->shape[it] : 1;
        if (a != b && a != 1 && b != 1) {
            char sx[HG_DIMS_TEXT], st[HG_DIMS_TEXT];
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: %s %s and target %s do not broadcast",
                            c->fn, xname, hg_op_dims(sx, x->ndim, x->shape),
                            hg_op_dims(st, t->ndim, t->shape));
        }
        shape[d] = a == 1 ? b : a;
    }
    return HG_OK;
}

void hg_loss_walk_start(hg_loss_walk* w, int64_t start) {
    for (int32_t q = 0; q < w->nops; q++) w->p[q] = w->base[q];
    for (int32_t d = w->ndim - 1; d >= 0; d--) {
        int64_t n = w->shape[d] > 0 ? w->shape[d] : 1;
        w->idx[d] = start % n;
        start /= n;
        for (int32_t q = 0; q < w->nops; q++) w->p[q] += w->idx[d] * w->bstrides[q][d];
    }
}

// Position of C-order element `start`: per-dim index and the byte offset into op.
static int64_t start_pos(int32_t nd, const int64_t* shape, const hg_loss_operand* op,
                         int64_t start, int64_t* idx) {
    int64_t off = 0;
    for (int32_t d = nd - 1; d >= 0; d--) {
        int64_t n = shape[d] > 0 ? shape[d] : 1;
        idx[d] = start % n;
        start /= n;
        off += idx[d] * op->bstrides[d];
    }
    return off;
}

// Advances idx/off past a run of `len` elements that ended the last dim.
static int64_t next_row(int32_t nd, const int64_t* shape, const hg_loss_operand* op, int64_t* idx,
                        int64_t off) {
    for (int32_t d = nd - 2; d >= 0; d--) {
        off += op->bstrides[d];
        if (++idx[d] < shape[d]) return off;
        off -= op->bstrides[d] * shape[d];
        idx[d] = 0;
    }
    return off;
}

void hg_loss_gather(int32_t nd, const int64_t* shape, const hg_loss_operand* op, int64_t start,
                    int64_t n, double* dst) {
    if (nd == 0) {
        if (n > 0) dst[0] = hg_op_load_f64(op->dt, op->base);
        return;
    }
    int64_t idx[HG_MAX_DIMS];
    int64_t off = start_pos(nd, shape, op, start, idx);
    int64_t last = shape[nd - 1], bs = op->bstrides[nd - 1];
    while (n > 0) {
        int64_t run = last - idx[nd - 1] < n ? last - idx[nd - 1] : n;
        const unsigned char* p = op->base + off;
        if (op->dt == HG_DTYPE_F32 && bs == 4) {
            const float* f = (const float*)(const void*)p;
            for (int64_t i = 0; i < run; i++) dst[i] = f[i];
        } else if (op->dt == HG_DTYPE_F64 && bs == 8) {
            memcpy(dst, p, (size_t)run * 8);
        } else if (op->dt == HG_DTYPE_F32) {
            for (int64_t i = 0; i < run; i++) { float v; memcpy(&v, p + i * bs, 4); dst[i] = v; }
        } else {
            for (int64_t i = 0; i < run; i++) dst[i] = hg_op_load_f64(op->dt, p + i * bs);
        }
        dst += run;
        n -= run;
        off += run * bs;
        idx[nd - 1] += run;
        if (idx[nd - 1] == last) {
            off -= last * bs;
            idx[nd - 1] = 0;
            off = next_row(nd, shape, op, idx, off);
        }
    }
}

void hg_loss_scatter(int32_t nd, const int64_t* shape, const hg_loss_operand* op, hg_dtype rt,
                     int64_t start, int64_t n, const double* src) {
    if (nd == 0) {
        if (n > 0) hg_loss_store(rt, op->dt, op->base, src[0]);
        return;
    }
    int64_t idx[HG_MAX_DIMS];
    int64_t off = start_pos(nd, shape, op, start, idx);
    int64_t last = shape[nd - 1], bs = op->bstrides[nd - 1];
    while (n > 0) {
        int64_t run = last - idx[nd - 1] < n ? last - idx[nd - 1] : n;
        unsigned char* p = op->base + off;
        if (op->dt == HG_DTYPE_F32 && rt == HG_DTYPE_F32) {
            for (int64_t i = 0; i < run; i++) { float v = (float)src[i]; memcpy(p + i * bs, &v, 4); }
        } else if (op->dt == HG_DTYPE_F64 && rt == HG_DTYPE_F64) {
            for (int64_t i = 0; i < run; i++) memcpy(p + i * bs, &src[i], 8);
        } else {
            for (int64_t i = 0; i < run; i++) hg_loss_store(rt, op->dt, p + i * bs, src[i]);
        }
        src += run;
        n -= run;
        off += run * bs;
        idx[nd - 1] += run;
        if (idx[nd - 1] == last) {
            off -= last * bs;
            idx[nd - 1] = 0;
            off = next_row(nd, shape, op, idx, off);
        }
    }
}

typedef struct run_job {
    void (*chunk)(void*, int64_t, int64_t, double*, double*);
    void* ctx;
    int64_t n, nchunks;
    int nworkers;
    double* sums;     // per chunk
    double* counts;
} run_job;

static void run_worker(void* ctx, int w) {
    run_job* j = ctx;
    int64_t c0 = j->nchunks * w / j->nworkers, c1 = j->nchunks * (w + 1) / j->nworkers;
    for (int64_t ch = c0; ch < c1; ch++) {
        int64_t e0 = ch * HG_LOSS_CHUNK, e1 = e0 + HG_LOSS_CHUNK < j->n ? e0 + HG_LOSS_CHUNK : j->n;
        double s = 0, cnt = 0;
        j->chunk(j->ctx, e0, e1, &s, &cnt);
        j->sums[ch] = s;
        j->counts[ch] = cnt;
    }
}

hg_status hg_loss_run(hg_op_ctx* c, int64_t n, double cost_per_item,
                      void (*chunk)(void* ctx, int64_t e0, int64_t e1, double* sum, double* count),
                      void* ctx, double* sum, double* count) {
    *sum = 0;
    *count = 0;
    if (n <= 0) return HG_OK;
    run_job j = {chunk, ctx, n, (n + HG_LOSS_CHUNK - 1) / HG_LOSS_CHUNK, 1, NULL, NULL};
    j.sums = malloc((size_t)j.nchunks * 2 * sizeof(double));
    if (!j.sums)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for %lld partial sums", c->fn,
                        (long long)j.nchunks);
    j.counts = j.sums + j.nchunks;
    // Below ~50 us of work one thread is faster than waking the pool.
    int nw = (double)n * cost_per_item < 5e4 ? 1 : hg_op_num_threads(c);
    if (nw > j.nchunks) nw = (int)j.nchunks;
    hg_status s = HG_OK;
    if (nw <= 1) run_worker(&j, 0);
    else {
        j.nworkers = nw;
        s = hg_op_parallel(c, nw, run_worker, &j, &j.nworkers);
    }
    for (int64_t ch = 0; !s && ch < j.nchunks; ch++) {
        *sum += j.sums[ch];
        *count += j.counts[ch];
    }
    free(j.sums);
    return s;
}

void hg_loss_store(hg_dtype rt, hg_dtype od, void* dst, double v) {
    if (rt != od && rt != HG_DTYPE_F64) {
        unsigned char tmp[8];
        hg_op_store_f64(rt, tmp, v);
        v = hg_op_load_f64(rt, tmp);
    }
    hg_op_store_f64(od, dst, v);
}

hg_status hg_ce_shapes(hg_op_ctx* c, const hg_tensor* logits, const hg_tensor* target, int probs,
                       int32_t* cdim, int32_t* ns, int64_t* sshape) {
    *cdim = logits->ndim == 1 ? 0 : 1;
    *ns = 0;
    for (int32_t d = 0; d < logits->ndim; d++)
        if (d != *cdim) sshape[(*ns)++] = logits->shape[d];
    int32_t tnd = probs ? logits->ndim : *ns;
    const int64_t* tshape = probs ? logits->shape : sshape;
    int same = target->ndim == tnd;
    for (int32_t d = 0; same && d < tnd; d++) same = target->shape[d] == tshape[d];
    if (same) return HG_OK;
    char sl[HG_DIMS_TEXT], st[HG_DIMS_TEXT], se[HG_DIMS_TEXT];
    return hg_error(HG_ERR_SIZE_MISMATCH, "%s: 'target' of shape %s does not fit 'logits' of "
                    "shape %s: class %s need shape %s", c->fn,
                    hg_op_dims(st, target->ndim, target->shape),
                    hg_op_dims(sl, logits->ndim, logits->shape),
                    probs ? "probabilities (a float target)" : "indices (an integer target)",
                    hg_op_dims(se, tnd, tshape));
}
