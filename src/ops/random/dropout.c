// hg_dropout and hg_dropout_backward: one pass over x each. The mask draws four elements per
// Philox counter (a block of 64 elements takes the words of 16 counters, word-major: element
// k of the block is word k / 16 of counter k % 16), so 16 counters give 64 contiguous
// elements and a vector of words is a vector of elements. Element i depends only on (seed,
// offset, i): the same mask for any thread count, split or backend (dev_random.c).
#include <math.h>
#include <string.h>
#include "base/cpu_targets.h"
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_ops.h"
#include "ops/common/op_dispatch.h"
#include "ops/data/data_common.h"
#include "ops/random/random.h"
#include "runtime/objects.h"

enum { DROP_BLOCK = 64, DROP_GRAIN = 16384 };   // per block; per worker at least (performance.md)

typedef struct drop_job {
    hg_host_view x, out, mask;   // mask.data NULL: none (forward); the input mask (backward)
    uint64_t seed, offset, thr;  // keep iff word >= thr (thr = 2^32: none kept)
    double scale;                // rounded to f32 for f16/bf16/f32 (scale_f)
    float scale_f;
    int fast;                    // every view 1-D contiguous f32
} drop_job;

uint64_t hg_dropout_threshold(double p) { return (uint64_t)ceil(p * 4294967296.0); }

// The words of block b (64 elements): w[k] for element 64 b + k.
static void block_words(const drop_job* j, int64_t b, uint32_t w[DROP_BLOCK]) {
    uint32_t (*w4)[16] = (uint32_t (*)[16])(void*)w;
    if (j->thr > UINT32_MAX) memset(w, 0, DROP_BLOCK * sizeof *w);   // none kept: no draws
    else hg_random_words16(j->seed, j->offset, (uint64_t)b * 16u, w4);
}

// The contiguous f32 loops (one copy per CPU level, picked at run time): keep iff w >= t,
// nothing kept when none.
static inline void fwd_f32_body(const uint32_t* w, uint32_t t, int none, float s, const float* x,
                                float* o, unsigned char* m, int n) {
    if (m) {
        for (int k = 0; k < n; k++) {
            int keep = !none & (w[k] >= t);
            o[k] = x[k] * (keep ? s : 0.0f);
            m[k] = (unsigned char)keep;
        }
    } else {
        for (int k = 0; k < n; k++) o[k] = x[k] * ((!none & (w[k] >= t)) ? s : 0.0f);
    }
}
static inline void bwd_f32_body(const unsigned char* m, float s, const float* g, float* o,
                                int64_t n) {
    for (int64_t k = 0; k < n; k++) o[k] = g[k] * (m[k] ? s : 0.0f);
}
typedef void (*fwd_fn)(const uint32_t*, uint32_t, int, float, const float*, float*,
                       unsigned char*, int);
typedef void (*bwd_fn)(const unsigned char*, float, const float*, float*, int64_t);
static void fwd_base(const uint32_t* w, uint32_t t, int none, float s, const float* x, float* o,
                     unsigned char* m, int n) {
    fwd_f32_body(w, t, none, s, x, o, m, n);
}
static void bwd_base(const unsigned char* m, float s, const float* g, float* o, int64_t n) {
    bwd_f32_body(m, s, g, o, n);
}
#ifdef HG_HAVE_CPU_TARGETS
HG_TARGET_AVX2 static void fwd_avx2(const uint32_t* w, uint32_t t, int none, float s,
                                    const float* x, float* o, unsigned char* m, int n) {
    fwd_f32_body(w, t, none, s, x, o, m, n);
}
HG_TARGET_AVX512_WIDE static void fwd_avx512(const uint32_t* w, uint32_t t, int none, float s,
                                             const float* x, float* o, unsigned char* m, int n) {
    fwd_f32_body(w, t, none, s, x, o, m, n);
}
HG_TARGET_AVX2 static void bwd_avx2(const unsigned char* m, float s, const float* g, float* o,
                                    int64_t n) {
    bwd_f32_body(m, s, g, o, n);
}
HG_TARGET_AVX512_WIDE static void bwd_avx512(const unsigned char* m, float s, const float* g,
                                             float* o, int64_t n) {
    bwd_f32_body(m, s, g, o, n);
}
#endif

// x * (keep ? scale : 0) in x's dtype (f16/bf16 computed in f32, rounded once).
static void scale_elem(const drop_job* j, hg_dtype dt, const unsigned char* xp, unsigned char* op,
                       int keep) {
    if (dt == HG_DTYPE_F32) {   // strided f32 (the torch backend's permuted views): no f64 trip
        float f;
        memcpy(&f, xp, 4);
        f *= keep ? j->scale_f : 0.0f;
        memcpy(op, &f, 4);
        return;
    }
    double v = hg_op_load_f64(dt, xp);
    if (dt == HG_DTYPE_F64) v *= keep ? j->scale : 0.0;
    else v = (double)((float)v * (keep ? j->scale_f : 0.0f));
    hg_convert_from_double(dt, v, op);
}

static void fwd_range(void* ctx, int64_t b, int64_t e) {
    const drop_job* j = ctx;
    uint32_t w[DROP_BLOCK];
    int none = j->thr > UINT32_MAX;
    uint32_t t = none ? 0u : (uint32_t)j->thr;
    if (j->fast) {
        fwd_fn f = HG_PICK_LEVEL(fwd_base, fwd_avx2, fwd_avx512);
        const float* x = (const float*)(const void*)j->x.data;
        float* o = (float*)(void*)j->out.data;
        unsigned char* m = j->mask.data;
        for (int64_t i = b; i < e;) {
            int64_t blk = i / DROP_BLOCK, k0 = i - blk * DROP_BLOCK;
            int64_t n = e - i < DROP_BLOCK - k0 ? e - i : DROP_BLOCK - k0;
            block_words(j, blk, w);
            f(w + k0, t, none, j->scale_f, x + i, o + i, m ? m + i : NULL, (int)n);
            i += n;
        }
        return;
    }
    hg_cursor cx, co, cm;
    memset(&cm, 0, sizeof cm);
    hg_cursor_init(&cx, &j->x, b);
    hg_cursor_init(&co, &j->out, b);
    if (j->mask.data) hg_cursor_init(&cm, &j->mask, b);
    int64_t have = -1;
    for (int64_t i = b; i < e; i++) {
        if (i / DROP_BLOCK != have) block_words(j, have = i / DROP_BLOCK, w);
        int keep = !none && w[i % DROP_BLOCK] >= t;
        scale_elem(j, j->x.dtype, cx.p, co.p, keep);
        hg_cursor_next(&cx);
        hg_cursor_next(&co);
        if (j->mask.data) {
            *cm.p = (unsigned char)keep;
            hg_cursor_next(&cm);
        }
    }
}

static void bwd_range(void* ctx, int64_t b, int64_t e) {
    const drop_job* j = ctx;
    if (j->fast) {
        bwd_fn f = HG_PICK_LEVEL(bwd_base, bwd_avx2, bwd_avx512);
        f(j->mask.data + b, j->scale_f, (const float*)(const void*)j->x.data + b,
          (float*)(void*)j->out.data + b, e - b);
        return;
    }
    hg_cursor cx, co, cm;
    hg_cursor_init(&cx, &j->x, b);
    hg_cursor_init(&co, &j->out, b);
    hg_cursor_init(&cm, &j->mask, b);
    for (int64_t i = b; i < e; i++) {
        scale_elem(j, j->x.dtype, cx.p, co.p, *cm.p != 0);
        hg_cursor_next(&cx);
        hg_cursor_next(&co);
        hg_cursor_next(&cm);
    }
}

static int contiguous_1d(const hg_host_view* v) {
    return v->numel <= 1 || (v->ndim == 1 && v->strides[0] == 1);
}

// The host views of the job's tensors (coalesced: C order kept, so index i is still element
// i), and whether the contiguous f32 loops take them.
static hg_status host_views(hg_op_ctx* c, drop_job* j, const hg_tensor* x, const hg_tensor* out,
                            const hg_tensor* mask) {
    hg_status s = hg_op_host_view(c, x, &j->x);
    if (!s) s = hg_op_host_view(c, out, &j->out);
    if (!s && mask) s = hg_op_host_view(c, mask, &j->mask);
    if (s) return s;
    hg_view_coalesce(&j->x);
    hg_view_coalesce(&j->out);
    if (mask) hg_view_coalesce(&j->mask);
    j->fast = j->x.dtype == HG_DTYPE_F32 && contiguous_1d(&j->x) && contiguous_1d(&j->out) &&
              (!mask || contiguous_1d(&j->mask));
    return HG_OK;
}

static hg_status check_float(hg_op_ctx* c, const hg_tensor* t, const char* name) {
    if (!hg_dtype_is_float((int)t->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: '%s' has dtype %s; need a float dtype (f16, "
                        "bf16, f32 or f64)", c->fn, name, hg_dtype_name(t->dtype));
    return HG_OK;
}

// mask: a bool tensor of x's shape that overlaps neither x nor out.
static hg_status check_mask(hg_op_ctx* c, const hg_tensor* mask, int input, const hg_tensor* x,
                            const hg_tensor* out) {
    hg_status s = input ? hg_op_input(c, mask, "mask", NULL, NULL)
                        : hg_op_existing_output(c, mask, "mask");
    if (s) return s;
    if (mask->dtype != HG_DTYPE_BOOL)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: 'mask' has dtype %s; need bool", c->fn,
                        hg_dtype_name(mask->dtype));
    int same = mask->ndim == x->ndim;
    for (int32_t d = 0; same && d < x->ndim; d++) same = mask->shape[d] == x->shape[d];
    if (!same)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: 'mask' must have the shape of '%s' (%d "
                        "dims; got %d)", c->fn, input ? "grad" : "x", (int)x->ndim,
                        (int)mask->ndim);
    if (hg_op_overlaps(mask, out) || (!input && hg_op_overlaps(mask, x)))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: 'mask' overlaps '%s'", c->fn,
                        hg_op_overlaps(mask, out) ? "out" : "x");
    return HG_OK;
}

static double drop_scale(double p) { return p == 1.0 ? 0.0 : 1.0 / (1.0 - p); }

hg_status hg_dropout(const hg_tensor* x, double p, uint64_t seed, uint64_t offset,
                     hg_tensor* out, const hg_tensor* mask) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_dropout");
    if (!x || !out) return hg_error(HG_ERR_NULL_POINTER, "hg_dropout: argument '%s' is NULL",
                                    x ? "out" : "x");
    hg_status s = hg_op_input(&c, x, "x", NULL, NULL);
    if (!s) s = check_float(&c, x, "x");
    if (s) return s;
    if (!(p >= 0.0 && p <= 1.0))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_dropout: p must lie in [0, 1], got %g", p);
    if ((s = hg_op_output(&c, out, x->dtype, x->ndim, x->shape, 0))) return s;
    if (mask && (s = check_mask(&c, mask, 0, x, out))) return hg_op_finish(&c, out, s);
    if ((s = hg_op_read_first(&c, out, &x, 1))) return hg_op_finish(&c, out, s);
    drop_job j;
    memset(&j, 0, sizeof j);
    j.seed = seed;
    j.offset = offset;
    j.thr = hg_dropout_threshold(p);
    j.scale = drop_scale(p);
    j.scale_f = (float)j.scale;
    if (hg_op_route_of(&c, HG_OPF_RANDOM, x->dtype) == HG_ROUTE_DEVICE)
        s = hg_dev_dropout(&c, x, out, mask, seed, offset, j.thr, j.scale);
    else if (!(s = host_views(&c, &j, x, out, mask)))
        s = hg_for_range(&c, j.x.numel, DROP_GRAIN, fwd_range, &j);
    return hg_op_finish(&c, out, s);
}

hg_status hg_dropout_backward(const hg_tensor* grad, const hg_tensor* mask, double scale,
                              hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_dropout_backward");
    if (!grad || !mask || !out)
        return hg_error(HG_ERR_NULL_POINTER, "hg_dropout_backward: argument '%s' is NULL",
                        !grad ? "grad" : !mask ? "mask" : "out");
    hg_status s = hg_op_input(&c, grad, "grad", NULL, NULL);
    if (!s) s = check_float(&c, grad, "grad");
    if (s) return s;
    if (!isfinite(scale))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_dropout_backward: scale must be finite, "
                        "got %g", scale);
    if ((s = hg_op_output(&c, out, grad->dtype, grad->ndim, grad->shape, 0))) return s;
    if ((s = check_mask(&c, mask, 1, grad, out))) return hg_op_finish(&c, out, s);
    if ((s = hg_op_read_first(&c, out, &grad, 1))) return hg_op_finish(&c, out, s);
    drop_job j;
    memset(&j, 0, sizeof j);
    j.scale = scale;
    j.scale_f = (float)scale;
    if (hg_op_route_of(&c, HG_OPF_RANDOM, grad->dtype) == HG_ROUTE_DEVICE)
        s = hg_dev_dropout_backward(&c, grad, mask, out, scale);
    else if (!(s = host_views(&c, &j, grad, out, mask)))
        s = hg_for_range(&c, j.x.numel, DROP_GRAIN, bwd_range, &j);
    return hg_op_finish(&c, out, s);
}
