// Shared helpers of the data ops (see data_common.h).
#include "ops/data/data_common.h"
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "runtime/objects.h"

void hg_cursor_init(hg_cursor* cur, const hg_host_view* v, int64_t start) {
    int64_t es = (int64_t)hg_dtype_size(v->dtype);
    cur->ndim = v->ndim;
    cur->p = v->data;
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
        cur->shape[d] = v->shape[d];
        cur->bstrides[d] = v->strides[d] * es;
        cur->idx[d] = v->shape[d] ? start % v->shape[d] : 0;
        start = v->shape[d] ? start / v->shape[d] : 0;
        cur->p += cur->idx[d] * cur->bstrides[d];
    }
}

void hg_view_coalesce(hg_host_view* v) {
    int32_t nd = 0;
    int64_t shape[HG_MAX_DIMS], strides[HG_MAX_DIMS];
    for (int32_t d = 0; d < v->ndim; d++) {
        if (v->shape[d] == 1) continue;
        if (nd > 0 && strides[nd - 1] == v->strides[d] * v->shape[d]) {
            shape[nd - 1] *= v->shape[d];
            strides[nd - 1] = v->strides[d];
            continue;
        }
        shape[nd] = v->shape[d];
        strides[nd] = v->strides[d];
        nd++;
    }
    // An empty view keeps its zero-size dim so numel stays 0.
    if (v->numel == 0) return;
    v->ndim = nd;
    for (int32_t d = 0; d < HG_MAX_DIMS; d++) {
        v->shape[d] = d < nd ? shape[d] : 0;
        v->strides[d] = d < nd ? strides[d] : 0;
    }
}

typedef struct range_job {
    hg_range_fn fn;
    void* ctx;
    int64_t n;
    int nworkers;   // written by hg_op_parallel before the first call
} range_job;

static void range_worker(void* p, int w) {
    range_job* j = p;
    int64_t nw = j->nworkers;
    int64_t b = j->n / nw * w + (w < j->n % nw ? w : j->n % nw);
    int64_t e = b + j->n / nw + (w < j->n % nw ? 1 : 0);
    if (b < e) j->fn(j->ctx, b, e);
}

hg_status hg_for_range(hg_op_ctx* c, int64_t n, int64_t grain, hg_range_fn fn, void* ctx) {
    if (n <= 0) return HG_OK;
    int64_t want = grain > 0 ? n / grain : n;
    int threads = hg_op_num_threads(c);
    if (want > threads) want = threads;
    if (want <= 1) {
        fn(ctx, 0, n);
        return HG_OK;
    }
    range_job j = {fn, ctx, n, 1};
    return hg_op_parallel(c, (int)want, range_worker, &j, &j.nworkers);
}

void hg_convert_elem(hg_dtype dd, void* dst, hg_dtype sd, const void* src) {
    if (dd == sd) {
        memcpy(dst, src, hg_dtype_size(dd));
        return;
    }
    int src_int = hg_dtype_is_int((int)sd) || sd == HG_DTYPE_BOOL;
    if (src_int && hg_dtype_is_int((int)dd)) {
        // Two's complement truncation: store the low bytes of the 64-bit value.
        uint64_t u = (uint64_t)hg_op_load_i64(sd, src);
        switch (hg_dtype_size(dd)) {
        case 1: { uint8_t x = (uint8_t)u; memcpy(dst, &x, 1); break; }
        case 2: { uint16_t x = (uint16_t)u; memcpy(dst, &x, 2); break; }
        case 4: { uint32_t x = (uint32_t)u; memcpy(dst, &x, 4); break; }
        default: memcpy(dst, &u, 8); break;
        }
        return;
    }
    if (src_int && dd == HG_DTYPE_F32) {
        // One rounding from the integer (via double would round twice above 2^53).
        float x = sd == HG_DTYPE_U64 ? (float)*(const uint64_t*)src
                                     : (float)hg_op_load_i64(sd, src);
        memcpy(dst, &x, 4);
        return;
    }
    hg_convert_from_double(dd, hg_op_load_f64(sd, src), dst);
}

// Moves a cursor by k >= 1 elements along its innermost dim, where k does not pass the end of
// that dim's run (the caller then calls hg_cursor_next for the step that may carry).
static void cursor_skip_inner(hg_cursor* cur, int64_t k) {
    int32_t d = cur->ndim - 1;
    cur->idx[d] += k;
    cur->p += k * cur->bstrides[d];
}

void hg_copy_range(const hg_host_view* dst, const hg_host_view* src, int64_t b, int64_t e) {
    if (b >= e) return;
    hg_cursor cd, cs;
    hg_cursor_init(&cd, dst, b);
    hg_cursor_init(&cs, src, b);
    size_t es = hg_dtype_size(dst->dtype);
    int same = dst->dtype == src->dtype;
    if (dst->ndim == 0) {
        if (same) hg_copy_elem(cd.p, cs.p, es);
        else hg_convert_elem(dst->dtype, cd.p, src->dtype, cs.p);
        return;
    }
    int32_t last = dst->ndim - 1;
    int64_t dstr = cd.bstrides[last], sstr = cs.bstrides[last];
    for (int64_t i = b; i < e;) {
        int64_t run = dst->shape[last] - cd.idx[last];
        if (run > e - i) run = e - i;
        unsigned char* dp = cd.p;
        const unsigned char* sp = cs.p;
        if (same && dstr == (int64_t)es && sstr == (int64_t)es) {
            memmove(dp, sp, (size_t)run * es);
        } else if (same) {
            for (int64_t r = 0; r < run; r++) hg_copy_elem(dp + r * dstr, sp + r * sstr, es);
        } else {
            for (int64_t r = 0; r < run; r++)
                hg_convert_elem(dst->dtype, dp + r * dstr, src->dtype, sp + r * sstr);
        }
        i += run;
        if (i >= e) break;
        if (run > 1) {
            cursor_skip_inner(&cd, run - 1);
            cursor_skip_inner(&cs, run - 1);
        }
        hg_cursor_next(&cd);
        hg_cursor_next(&cs);
    }
}
