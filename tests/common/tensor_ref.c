// Reference helpers for the tensor view and copy tests (see tensor_ref.h).
#include "tensor_ref.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

hg_status tref_init(tref_ctx* ctx, hg_executor ex, uint64_t seed) {
    memset(ctx, 0, sizeof *ctx);
    ctx->ex = ex;
    ctx->rng = seed;
    hg_status s = hg_buffer_create(ex, HG_DTYPE_I32, TREF_IOTA_N, &ctx->iota);
    if (s != HG_OK) return s;
    int32_t* host = NULL;
    s = hg_buffer_map(ctx->iota, (void**)&host);
    if (s != HG_OK) return s;
    for (int i = 0; i < TREF_IOTA_N; i++) host[i] = i;
    ctx->iota_host = host;
    return HG_OK;
}

void tref_fini(tref_ctx* ctx) {
    if (ctx->iota.handle) hg_buffer_destroy(ctx->iota);
    memset(ctx, 0, sizeof *ctx);
}

int64_t tref_rnd(tref_ctx* ctx, int64_t lo, int64_t hi) {
    return lo + (int64_t)(hg_test_rand(&ctx->rng) % (uint64_t)(hi - lo + 1));
}

void tref_fill_random(tref_ctx* ctx, unsigned char* p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)hg_test_rand(&ctx->rng);
}

// Advances idx in C order; 0 when it wraps around (all indices visited).
int tref_next_index(int32_t ndim, const int64_t* shape, int64_t* idx) {
    for (int32_t i = ndim - 1; i >= 0; i--) {
        if (++idx[i] < shape[i]) return 1;
        idx[i] = 0;
    }
    return 0;
}

int64_t tref_numel(int32_t ndim, const int64_t* shape) {
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

// Element index of idx in view t (the definition of a strided view).
int64_t tref_elem_of(const hg_tensor* t, const int64_t* idx) {
    int64_t e = t->offset;
    for (int32_t i = 0; i < t->ndim; i++) e += idx[i] * t->strides[i];
    return e;
}

// All element indices of t in C order (malloc'd, numel entries; NULL for an empty view).
int64_t* tref_elems_of(const hg_tensor* t) {
    int64_t n = tref_numel(t->ndim, t->shape);
    if (n == 0) return NULL;
    int64_t* out = malloc((size_t)n * sizeof *out);
    int64_t idx[HG_MAX_DIMS] = {0};
    int64_t k = 0;
    do out[k++] = tref_elem_of(t, idx);
    while (tref_next_index(t->ndim, t->shape, idx));
    return out;
}

// Value of view t at idx, read from the host array (must equal the element index).
int64_t tref_value_at(const tref_ctx* ctx, const hg_tensor* t, const int64_t* idx) {
    return ctx->iota_host[tref_elem_of(t, idx)];
}

// Random sizes 0..5 (mostly >= 1), total at most cap elements.
void tref_rand_shape(tref_ctx* ctx, int32_t ndim, int64_t* shape, int64_t cap) {
    for (int32_t i = 0; i < ndim; i++)
        shape[i] = tref_rnd(ctx, 0, 9) == 0 ? 0 : tref_rnd(ctx, 1, 5);
    for (;;) {
        int64_t n = 1;
        for (int32_t i = 0; i < ndim; i++) n *= shape[i];
        if (n <= cap) return;
        int32_t big = 0;
        for (int32_t i = 1; i < ndim; i++) if (shape[i] > shape[big]) big = i;
        shape[big]--;
    }
}

// A random view of ctx->iota: either arbitrary strides in [-6, 6] (zero = broadcast) or a
// contiguous tensor sliced with random steps and permuted.
int tref_rand_view(tref_ctx* ctx, hg_tensor* out) {
    int32_t ndim = (int32_t)tref_rnd(ctx, 0, HG_MAX_DIMS);
    int64_t shape[HG_MAX_DIMS], strides[HG_MAX_DIMS];
    if (tref_rnd(ctx, 0, 1)) {
        tref_rand_shape(ctx, ndim, shape, 1500);
        for (int32_t i = 0; i < ndim; i++) strides[i] = tref_rnd(ctx, -6, 6);
        for (;;) {
            int64_t lo = 0, hi = 0;
            for (int32_t i = 0; i < ndim; i++) {
                int64_t span = (shape[i] > 0 ? shape[i] - 1 : 0) * strides[i];
                if (span < 0) lo += span; else hi += span;
            }
            if (hi - lo < TREF_IOTA_N) {
                int64_t off = -lo + tref_rnd(ctx, 0, TREF_IOTA_N - 1 - (hi - lo));
                hg_status s = hg_tensor_view(ctx->iota, ndim, shape, strides, off, out);
                CHECK_MSG(s == HG_OK, "rand_view: %s", hg_last_error());
                return s == HG_OK;
            }
            for (int32_t i = 0; i < ndim; i++) strides[i] /= 2;
        }
    }
    // Contiguous base of sizes 1..4 (room for slicing), then slices and a permutation.
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; i++) {
        shape[i] = tref_rnd(ctx, 1, 4);
        n *= shape[i];
    }
    hg_tensor t;
    int64_t off = tref_rnd(ctx, 0, TREF_IOTA_N - n);
    if (hg_tensor_view(ctx->iota, ndim, shape, NULL, off, &t) != HG_OK) return 0;
    for (int32_t i = 0; i < ndim; i++) {
        if (tref_rnd(ctx, 0, 2) == 0) continue;
        int64_t step = tref_rnd(ctx, 1, 3) * (tref_rnd(ctx, 0, 1) ? 1 : -1);
        int64_t start = tref_rnd(ctx, 0, 3) ? tref_rnd(ctx, -5, 5) : HG_SLICE_NONE;
        int64_t stop = tref_rnd(ctx, 0, 3) ? tref_rnd(ctx, -5, 5) : HG_SLICE_NONE;
        if (hg_tensor_slice(&t, i, start, stop, step, &t) != HG_OK) return 0;
    }
    if (ndim > 1 && tref_rnd(ctx, 0, 1)) {
        int32_t perm[HG_MAX_DIMS];
        for (int32_t i = 0; i < ndim; i++) perm[i] = i;
        for (int32_t i = ndim - 1; i > 0; i--) {
            int32_t j = (int32_t)tref_rnd(ctx, 0, i), x = perm[i];
            perm[i] = perm[j];
            perm[j] = x;
        }
        if (hg_tensor_permute(&t, perm, &t) != HG_OK) return 0;
    }
    *out = t;
    return 1;
}

// Result shares the input's buffer and dtype, and its unused entries are zero.
int tref_same_base(const hg_tensor* r, const hg_tensor* t) {
    if (r->buffer.handle != t->buffer.handle || r->dtype != t->dtype) return 0;
    for (int32_t i = r->ndim; i < HG_MAX_DIMS; i++)
        if (r->shape[i] || r->strides[i]) return 0;
    return 1;
}

void tref_bad_tensors(const hg_tensor* t, hg_buffer dead, hg_tensor bad[TREF_N_BAD],
                      hg_status want[TREF_N_BAD]) {
    for (int k = 0; k < TREF_N_BAD; k++) bad[k] = *t;
    bad[0].buffer = dead;              // destroyed buffer
    want[0] = HG_ERR_INVALID_HANDLE;
    bad[1].dtype = HG_DTYPE_I32;       // dtype differs from the buffer's
    want[1] = HG_ERR_DTYPE_MISMATCH;
    bad[2].ndim = 9;                   // too many dims
    want[2] = HG_ERR_INVALID_ARGUMENT;
    bad[3].offset = 1;                 // reaches element 24
    want[3] = HG_ERR_OUT_OF_RANGE;
    bad[4].shape[1] = -6;              // negative size
    want[4] = HG_ERR_INVALID_ARGUMENT;
}

int tref_untouched(const hg_tensor* out) {
    const unsigned char* p = (const unsigned char*)out;
    for (size_t i = 0; i < sizeof *out; i++)
        if (p[i] != TREF_SENTINEL) return 0;
    return 1;
}

unsigned char* tref_read_view(const hg_tensor* t) {
    size_t es = hg_dtype_size(t->dtype), cnt = 0;
    int64_t n = tref_numel(t->ndim, t->shape);
    if (hg_buffer_count(t->buffer, &cnt)) return NULL;
    unsigned char* all = malloc(cnt * es + 1);
    unsigned char* out = malloc((size_t)n * es + 1);
    if (!all || !out || hg_buffer_read(t->buffer, 0, all, cnt)) {
        free(all);
        free(out);
        return NULL;
    }
    int64_t idx[HG_MAX_DIMS] = {0};
    for (int64_t k = 0; k < n; k++) {
        memcpy(out + (size_t)k * es, all + (size_t)tref_elem_of(t, idx) * es, es);
        tref_next_index(t->ndim, t->shape, idx);
    }
    free(all);
    return out;
}

int tref_is_nan(hg_dtype dt, const unsigned char* p) {
    uint16_t h;
    float f;
    double d;
    switch (dt) {
    case HG_DTYPE_F16: memcpy(&h, p, 2); return (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
    case HG_DTYPE_BF16: memcpy(&h, p, 2); return (h & 0x7F80) == 0x7F80 && (h & 0x7F);
    case HG_DTYPE_F32: memcpy(&f, p, 4); return isnan(f);
    case HG_DTYPE_F64: memcpy(&d, p, 8); return isnan(d);
    default: return 0;
    }
}
