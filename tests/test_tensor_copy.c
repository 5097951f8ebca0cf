// Tensor copies: hg_tensor_copy (random views of every dtype, into the same or another buffer,
// broadcast sources, overlapping views, wraps aliasing the same memory) and
// hg_tensor_contiguous, against an independent reference (tests/common/tensor_ref.h) that
// writes each element through the definition of a strided view. Buffers hold random bytes.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "tensor_ref.h"

// ---------------------------------------------------------------------------------------------
// Copies
// ---------------------------------------------------------------------------------------------

// Expected result of dst = src into a snapshot: reads src from src_host (taken before the
// copy), writes dst_host.
static void ref_copy(const hg_tensor* dst, unsigned char* dst_host, const hg_tensor* src,
                     const unsigned char* src_host, size_t es) {
    if (tref_numel(dst->ndim, dst->shape) == 0) return;
    int32_t lead = dst->ndim - src->ndim;
    int64_t idx[HG_MAX_DIMS] = {0}, si[HG_MAX_DIMS];
    do {
        for (int32_t j = 0; j < src->ndim; j++) si[j] = src->shape[j] == 1 ? 0 : idx[j + lead];
        int64_t de = tref_elem_of(dst, idx) * (int64_t)es, se = tref_elem_of(src, si) * (int64_t)es;
        memcpy(dst_host + de, src_host + se, es);
    } while (tref_next_index(dst->ndim, dst->shape, idx));
}

// Re-targets a random view of ctx->iota (an i32 buffer of TREF_IOTA_N) to buffer b of dtype dt.
static hg_tensor retarget(hg_tensor t, hg_buffer b, hg_dtype dt) {
    t.buffer = b;
    t.dtype = dt;
    return t;
}

// A dst view without repeated elements: contiguous-based random view (no zero strides).
static int rand_dst_view(tref_ctx* ctx, hg_tensor* out) {
    for (int tries = 0; tries < 100; tries++) {
        hg_tensor t;
        if (!tref_rand_view(ctx, &t)) return 0;
        int ok = 1;
        for (int32_t i = 0; i < t.ndim; i++) ok &= t.shape[i] <= 1 || t.strides[i] != 0;
        // Different indices must reach different elements.
        int64_t n = tref_numel(t.ndim, t.shape);
        if (ok && n > 1) {
            int64_t* e = tref_elems_of(&t);
            char* seen = calloc(TREF_IOTA_N, 1);
            for (int64_t k = 0; k < n && ok; k++) ok = !seen[e[k]]++;
            free(seen);
            free(e);
        }
        if (ok) {
            *out = t;
            return 1;
        }
    }
    return 0;
}

// src shape: dst's shape with some leading dims dropped and some dims set to 1.
static int rand_src_view_for(tref_ctx* ctx, const hg_tensor* dst, hg_tensor* out) {
    int32_t drop = (int32_t)tref_rnd(ctx, 0, dst->ndim);
    if (tref_rnd(ctx, 0, 1)) drop = 0;
    int32_t nd = dst->ndim - drop;
    int64_t shape[HG_MAX_DIMS], strides[HG_MAX_DIMS];
    for (int32_t i = 0; i < nd; i++) {
        shape[i] = tref_rnd(ctx, 0, 3) ? dst->shape[i + drop] : 1;
        strides[i] = tref_rnd(ctx, -6, 6);
    }
    int64_t lo = 0, hi = 0;
    for (int32_t i = 0; i < nd; i++) {
        int64_t span = (shape[i] > 0 ? shape[i] - 1 : 0) * strides[i];
        if (span < 0) lo += span; else hi += span;
    }
    if (hi - lo >= TREF_IOTA_N) return 0;
    int64_t off = -lo + tref_rnd(ctx, 0, TREF_IOTA_N - 1 - (hi - lo));
    return hg_tensor_view(ctx->iota, nd, shape, strides, off, out) == HG_OK;
}

static const hg_dtype k_dtypes[] = {HG_DTYPE_U8, HG_DTYPE_I16, HG_DTYPE_F32, HG_DTYPE_F64};

static void test_copy_random(tref_ctx* ctx, int same_buffer) {
    for (size_t di = 0; di < sizeof k_dtypes / sizeof k_dtypes[0]; di++) {
        hg_dtype dt = k_dtypes[di];
        size_t es = hg_dtype_size(dt);
        hg_buffer a, b;
        CHECK_OK(hg_buffer_create(ctx->ex, dt, TREF_IOTA_N, &a));
        CHECK_OK(hg_buffer_create(ctx->ex, dt, TREF_IOTA_N, &b));
        unsigned char *ha = NULL, *hb = NULL;
        CHECK_OK(hg_buffer_map(a, (void**)&ha));
        CHECK_OK(hg_buffer_map(b, (void**)&hb));
        unsigned char* snap_a = malloc(TREF_IOTA_N * es);
        unsigned char* want = malloc(TREF_IOTA_N * es);
        int fails = 0;
        for (int it = 0; it < 250 && fails < 5; it++) {
            hg_tensor d0, s0;
            if (!rand_dst_view(ctx, &d0) || !rand_src_view_for(ctx, &d0, &s0)) continue;
            tref_fill_random(ctx, ha, TREF_IOTA_N * es);
            tref_fill_random(ctx, hb, TREF_IOTA_N * es);
            hg_tensor dst = retarget(d0, same_buffer ? a : b, dt), src = retarget(s0, a, dt);
            unsigned char* dh = same_buffer ? ha : hb;
            memcpy(snap_a, ha, TREF_IOTA_N * es);
            memcpy(want, dh, TREF_IOTA_N * es);
            ref_copy(&dst, want, &src, snap_a, es);
            hg_status s = hg_tensor_copy(&dst, &src);
            CHECK_MSG(s == HG_OK, "copy: %s", hg_last_error());
            int ok = memcmp(want, dh, TREF_IOTA_N * es) == 0;
            if (!same_buffer) ok &= memcmp(snap_a, ha, TREF_IOTA_N * es) == 0;  // src untouched
            CHECK_MSG(ok, "copy %s same_buffer=%d: dst ndim %d, src ndim %d differs from the "
                      "reference", hg_dtype_name(dt), same_buffer, dst.ndim, src.ndim);
            fails += !ok;
        }
        free(snap_a);
        free(want);
        hg_buffer_destroy(a);
        hg_buffer_destroy(b);
    }
}

// Larger transposes and permutes (the tiled path), reversed and broadcast sources, the
// identical view, wraps aliasing the same memory.
static void test_copy_cases(tref_ctx* ctx) {
    enum { R = 67, C = 45 };
    for (size_t di = 0; di < sizeof k_dtypes / sizeof k_dtypes[0]; di++) {
        hg_dtype dt = k_dtypes[di];
        size_t es = hg_dtype_size(dt);
        size_t n = 4 * R * C + 8;
        hg_buffer a, b;
        CHECK_OK(hg_buffer_create(ctx->ex, dt, n, &a));
        CHECK_OK(hg_buffer_create(ctx->ex, dt, n, &b));
        unsigned char *ha, *hb;
        CHECK_OK(hg_buffer_map(a, (void**)&ha));
        CHECK_OK(hg_buffer_map(b, (void**)&hb));
        unsigned char* want = malloc(n * es);
        hg_tensor src, dst, tmp;
        struct { int32_t nd; int64_t shape[4]; int32_t perm[4]; } cases[] = {
            {2, {R, C}, {1, 0}}, {3, {4, R, C}, {0, 2, 1}}, {3, {4, R, C}, {2, 1, 0}},
            {4, {2, 2, R, C}, {3, 1, 0, 2}}, {2, {R * C, 1}, {1, 0}},
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            tref_fill_random(ctx, ha, n * es);
            tref_fill_random(ctx, hb, n * es);
            int64_t cnt = tref_numel(cases[k].nd, cases[k].shape);
            CHECK_OK(hg_tensor_view(a, cases[k].nd, cases[k].shape, NULL, 0, &tmp));
            CHECK_OK(hg_tensor_permute(&tmp, cases[k].perm, &src));
            CHECK_OK(hg_tensor_view(b, src.ndim, src.shape, NULL, 1, &dst));
            memcpy(want, hb, n * es);
            ref_copy(&dst, want, &src, ha, es);
            CHECK_OK(hg_tensor_copy(&dst, &src));
            CHECK_MSG(memcmp(want, hb, n * es) == 0, "permute copy case %zu %s", k,
                      hg_dtype_name(dt));
            // Scatter back: contiguous src into a permuted dst.
            CHECK_OK(hg_tensor_view(a, src.ndim, src.shape, NULL, (int64_t)n - cnt, &src));
            CHECK_OK(hg_tensor_view(b, cases[k].nd, cases[k].shape, NULL, 0, &tmp));
            CHECK_OK(hg_tensor_permute(&tmp, cases[k].perm, &dst));
            memcpy(want, hb, n * es);
            ref_copy(&dst, want, &src, ha, es);
            CHECK_OK(hg_tensor_copy(&dst, &src));
            CHECK_MSG(memcmp(want, hb, n * es) == 0, "permuted-dst copy case %zu %s", k,
                      hg_dtype_name(dt));
        }
        // Reverse in place: a[::-1] = a (overlap through a temporary).
        tref_fill_random(ctx, ha, n * es);
        CHECK_OK(hg_tensor_from_buffer(a, 1, (int64_t[]){(int64_t)n}, &src));
        CHECK_OK(hg_tensor_slice(&src, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &dst));
        for (size_t i = 0; i < n; i++) memcpy(want + i * es, ha + (n - 1 - i) * es, es);
        CHECK_OK(hg_tensor_copy(&dst, &src));
        CHECK(memcmp(want, ha, n * es) == 0);
        // Shift by one in place: a[1:] = a[:-1] (memmove semantics).
        tref_fill_random(ctx, ha, n * es);
        memcpy(want, ha, es);
        memcpy(want + es, ha, (n - 1) * es);
        CHECK_OK(hg_tensor_slice(&src, 0, 1, HG_SLICE_NONE, 1, &dst));
        CHECK_OK(hg_tensor_slice(&src, 0, 0, -1, 1, &tmp));
        CHECK_OK(hg_tensor_copy(&dst, &tmp));
        CHECK(memcmp(want, ha, n * es) == 0);
        // In-place transpose of a square matrix: a = a.T.
        tref_fill_random(ctx, ha, n * es);
        CHECK_OK(hg_tensor_view(a, 2, (int64_t[]){C, C}, NULL, 3, &dst));
        CHECK_OK(hg_tensor_transpose(&dst, 0, 1, &tmp));
        memcpy(want, ha, n * es);
        for (int i = 0; i < C; i++)
            for (int j = 0; j < C; j++)
                memcpy(want + (3 + (size_t)i * C + j) * es, ha + (3 + (size_t)j * C + i) * es, es);
        CHECK_OK(hg_tensor_copy(&dst, &tmp));
        CHECK(memcmp(want, ha, n * es) == 0);
        // Identical view: a no-op. Scalar broadcast: a fill.
        memcpy(want, ha, n * es);
        CHECK_OK(hg_tensor_copy(&dst, &dst));
        CHECK(memcmp(want, ha, n * es) == 0);
        CHECK_OK(hg_tensor_view(b, 0, NULL, NULL, 5, &src));
        for (int i = 0; i < C * C; i++) memcpy(want + (3 + (size_t)i) * es, hb + 5 * es, es);
        CHECK_OK(hg_tensor_copy(&dst, &src));
        CHECK(memcmp(want, ha, n * es) == 0);
        free(want);
        hg_buffer_destroy(a);
        hg_buffer_destroy(b);
    }
    // Two wraps of the same memory overlap: detected through the addresses.
    int32_t mem[64], want[64];
    for (int i = 0; i < 64; i++) mem[i] = i;
    hg_buffer w1, w2;
    CHECK_OK(hg_buffer_wrap(ctx->ex, HG_DTYPE_I32, mem, 64, &w1));
    CHECK_OK(hg_buffer_wrap(ctx->ex, HG_DTYPE_I32, mem + 8, 56, &w2));
    hg_tensor d, s;
    CHECK_OK(hg_tensor_view(w1, 1, (int64_t[]){48}, NULL, 0, &s));
    CHECK_OK(hg_tensor_view(w2, 1, (int64_t[]){48}, NULL, 0, &d));  // mem[8..56) = mem[0..48)
    for (int i = 0; i < 64; i++) want[i] = i < 8 ? i : i < 56 ? i - 8 : i;
    CHECK_OK(hg_tensor_copy(&d, &s));
    CHECK(memcmp(mem, want, sizeof mem) == 0);
    hg_buffer_destroy(w1);
    hg_buffer_destroy(w2);
}

static void test_contiguous(tref_ctx* ctx) {
    for (int it = 0; it < 200; it++) {
        hg_tensor t, r;
        if (!tref_rand_view(ctx, &t)) continue;
        int c = -1, copied = -1;
        int64_t n = tref_numel(t.ndim, t.shape);
        CHECK_OK(hg_tensor_is_contiguous(&t, &c));
        CHECK_OK(hg_tensor_contiguous(&t, &r, &copied));
        CHECK(copied == !c);
        if (!copied) {
            CHECK(memcmp(&r, &t, sizeof r) == 0);
            continue;
        }
        size_t count = 0;
        CHECK_OK(hg_buffer_count(r.buffer, &count));
        CHECK(r.buffer.handle != t.buffer.handle && (int64_t)count == n && r.offset == 0);
        int c2 = 0;
        CHECK_OK(hg_tensor_is_contiguous(&r, &c2));
        CHECK(c2 == 1 && r.ndim == t.ndim && memcmp(r.shape, t.shape, sizeof r.shape) == 0);
        int32_t* h = NULL;
        CHECK_OK(hg_buffer_map(r.buffer, (void**)&h));
        int64_t* e = tref_elems_of(&t);
        int bad = 0;
        for (int64_t k = 0; k < n; k++) bad += h[k] != ctx->iota_host[e[k]];
        CHECK_MSG(bad == 0, "contiguous: %d mismatches", bad);
        free(e);
        // Reshape of the copy is always a view.
        CHECK_OK(hg_tensor_reshape(&r, 1, (int64_t[]){-1}, &t));
        CHECK_OK(hg_buffer_destroy(r.buffer));
    }
}

// ---------------------------------------------------------------------------------------------
// Bad input: each error with its status, and out untouched
// ---------------------------------------------------------------------------------------------

static hg_tensor g_out;
#define CHECK_ERR(expr, want) TREF_CHECK_ERR(&g_out, expr, want)

static void test_errors(tref_ctx* ctx) {
    hg_buffer b, dead, other_buf;
    CHECK_OK(hg_buffer_create(ctx->ex, HG_DTYPE_F32, 24, &b));
    CHECK_OK(hg_buffer_create(ctx->ex, HG_DTYPE_F32, 4, &dead));
    CHECK_OK(hg_buffer_destroy(dead));
    CHECK_OK(hg_buffer_create(ctx->ex, HG_DTYPE_I32, 24, &other_buf));
    hg_tensor t;
    CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){4, 6}, &t));
    int64_t s46[] = {4, 6};

    // Malformed tensors given to copy and contiguous (view ops: test_tensor_views).
    hg_tensor bads[TREF_N_BAD];
    hg_status want[TREF_N_BAD];
    tref_bad_tensors(&t, dead, bads, want);
    for (int k = 0; k < TREF_N_BAD; k++) {
        const hg_tensor* x = &bads[k];
        CHECK_STATUS(hg_tensor_copy(x, &t), want[k]);
        CHECK_STATUS(hg_tensor_copy(&t, x), want[k]);
        int c = -5;
        CHECK_ERR(hg_tensor_contiguous(x, &g_out, &c), want[k]);
        CHECK(c == -5);
    }

    // NULL pointers.
    int c = 0;
    CHECK_STATUS(hg_tensor_copy(NULL, &t), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_copy(&t, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_contiguous(&t, NULL, &c), HG_ERR_NULL_POINTER);
    CHECK_ERR(hg_tensor_contiguous(&t, &g_out, NULL), HG_ERR_NULL_POINTER);

    // Copies: shapes, dtypes, executors, writes through a broadcast view.
    hg_tensor u, v;
    CHECK_OK(hg_tensor_from_buffer(other_buf, 2, s46, &u));
    CHECK_STATUS(hg_tensor_copy(&t, &u), HG_ERR_DTYPE_MISMATCH);
    CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){4, 5}, NULL, 0, &v));
    CHECK_STATUS(hg_tensor_copy(&t, &v), HG_ERR_SIZE_MISMATCH);
    CHECK_OK(hg_tensor_view(b, 3, (int64_t[]){1, 4, 6}, NULL, 0, &v));
    CHECK_STATUS(hg_tensor_copy(&t, &v), HG_ERR_SIZE_MISMATCH);  // src has more dims
    CHECK_OK(hg_tensor_view(b, 2, s46, (int64_t[]){0, 1}, 0, &v));
    CHECK_STATUS(hg_tensor_copy(&v, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "stride 0") != NULL);
    hg_executor ex2;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex2));
    hg_buffer eb;
    CHECK_OK(hg_buffer_create(ex2, HG_DTYPE_F32, 24, &eb));
    CHECK_OK(hg_tensor_from_buffer(eb, 2, s46, &u));
    CHECK_STATUS(hg_tensor_copy(&t, &u), HG_ERR_INVALID_ARGUMENT);
    CHECK_OK(hg_executor_destroy(ex2));

    CHECK_OK(hg_buffer_destroy(b));
    CHECK_OK(hg_buffer_destroy(other_buf));
}

int main(void) {
    hg_executor ex;
    hg_status s = hg_executor_create(HG_BACKEND_CPU, &ex);
    CHECK_OK(s);
    if (s != HG_OK) return hg_test_finish("test_tensor_copy");
    // The RNG state test_tensor_views reached before the copy tests when both lived in one
    // file, so the random copies are the same cases as before the split.
    tref_ctx ctx;
    s = tref_init(&ctx, ex, UINT64_C(13928373150220456488));
    CHECK_OK(s);
    if (s == HG_OK) {
        test_copy_random(&ctx, 0);
        test_copy_random(&ctx, 1);
        test_copy_cases(&ctx);
        test_contiguous(&ctx);
        test_errors(&ctx);
    }
    tref_fini(&ctx);
    CHECK_OK(hg_executor_destroy(ex));
    return hg_test_finish("test_tensor_copy");
}
