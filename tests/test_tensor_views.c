// Tensor views: every view op against an independent reference (tests/common/tensor_ref.h).
// The reference reads a view by enumerating all its indices in C order and computing
// offset + sum(index * stride) into a host array; each op's expected result is stated as an
// index mapping onto its input (permute: out[i] = in[i permuted], reshape: flat position k of
// out = flat position k of in, ...), so the library's stride arithmetic is checked against the
// definition, not against itself. Buffers hold their own element indices (value i at element
// i). Copies and hg_tensor_contiguous are in test_tensor_copy.c.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "tensor_ref.h"

// ---------------------------------------------------------------------------------------------
// Basic creation and queries
// ---------------------------------------------------------------------------------------------

static void test_create(tref_ctx* ctx) {
    hg_buffer b;
    CHECK_OK(hg_buffer_create(ctx->ex, HG_DTYPE_F32, 24, &b));
    hg_tensor t;
    CHECK_OK(hg_tensor_from_buffer(b, 3, (int64_t[]){2, 3, 4}, &t));
    CHECK(t.ndim == 3 && t.dtype == HG_DTYPE_F32 && t.offset == 0);
    CHECK(t.strides[0] == 12 && t.strides[1] == 4 && t.strides[2] == 1);
    int64_t n = 0;
    int c = -1;
    CHECK_OK(hg_tensor_numel(&t, &n));
    CHECK(n == 24);
    CHECK_OK(hg_tensor_is_contiguous(&t, &c));
    CHECK(c == 1);
    // Size-0 dims count as 1 in the strides (numpy).
    hg_buffer e;
    CHECK_OK(hg_buffer_create(ctx->ex, HG_DTYPE_F32, 0, &e));
    CHECK_OK(hg_tensor_from_buffer(e, 3, (int64_t[]){2, 0, 3}, &t));
    CHECK(t.strides[0] == 3 && t.strides[1] == 3 && t.strides[2] == 1);
    CHECK_OK(hg_tensor_numel(&t, &n));
    CHECK(n == 0);
    // A 0-dim view of one element.
    hg_buffer one;
    CHECK_OK(hg_buffer_create(ctx->ex, HG_DTYPE_I64, 1, &one));
    CHECK_OK(hg_tensor_from_buffer(one, 0, NULL, &t));
    CHECK(t.ndim == 0);
    CHECK_OK(hg_tensor_numel(&t, &n));
    CHECK(n == 1);
    // Views: NULL strides = contiguous; an offset; the last element exactly in range.
    CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){2, 3}, NULL, 18, &t));
    CHECK(t.strides[0] == 3 && t.strides[1] == 1 && t.offset == 18);
    CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){4, 6}, (int64_t[]){-6, -1}, 23, &t));
    CHECK_OK(hg_tensor_is_contiguous(&t, &c));
    CHECK(c == 0);
    CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){5, 7}, (int64_t[]){0, 0}, 23, &t));  // broadcast
    CHECK_OK(hg_tensor_view(b, 1, (int64_t[]){0}, (int64_t[]){1000}, 24, &t));  // empty at end
    // Contiguity ignores size-1 strides and the offset.
    CHECK_OK(hg_tensor_view(b, 3, (int64_t[]){2, 1, 3}, (int64_t[]){3, 99, 1}, 5, &t));
    CHECK_OK(hg_tensor_is_contiguous(&t, &c));
    CHECK(c == 1);
    CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){2, 3}, (int64_t[]){4, 1}, 0, &t));
    CHECK_OK(hg_tensor_is_contiguous(&t, &c));
    CHECK(c == 0);
    hg_buffer_destroy(b);
    hg_buffer_destroy(e);
    hg_buffer_destroy(one);
}

// ---------------------------------------------------------------------------------------------
// Random view ops against their index mappings
// ---------------------------------------------------------------------------------------------

static void test_permute_transpose(tref_ctx* ctx) {
    for (int it = 0; it < 300; it++) {
        hg_tensor t, r;
        if (!tref_rand_view(ctx, &t)) continue;
        int32_t perm[HG_MAX_DIMS], p[HG_MAX_DIMS];
        for (int32_t i = 0; i < t.ndim; i++) p[i] = i;
        for (int32_t i = t.ndim - 1; i > 0; i--) {
            int32_t j = (int32_t)tref_rnd(ctx, 0, i), x = p[i];
            p[i] = p[j];
            p[j] = x;
        }
        for (int32_t i = 0; i < t.ndim; i++) perm[i] = tref_rnd(ctx, 0, 1) ? p[i] - t.ndim : p[i];
        CHECK_OK(hg_tensor_permute(&t, perm, &r));
        CHECK(tref_same_base(&r, &t) && r.ndim == t.ndim);
        int64_t idx[HG_MAX_DIMS] = {0}, src[HG_MAX_DIMS];
        int bad = 0;
        if (tref_numel(r.ndim, r.shape) > 0) {
            do {
                for (int32_t i = 0; i < r.ndim; i++) src[p[i]] = idx[i];
                bad += tref_value_at(ctx, &r, idx) != tref_value_at(ctx, &t, src);
            } while (tref_next_index(r.ndim, r.shape, idx));
        }
        CHECK_MSG(bad == 0, "permute: %d mismatches", bad);
        if (t.ndim >= 1) {
            int32_t d0 = (int32_t)tref_rnd(ctx, -t.ndim, t.ndim - 1);
            int32_t d1 = (int32_t)tref_rnd(ctx, -t.ndim, t.ndim - 1);
            CHECK_OK(hg_tensor_transpose(&t, d0, d1, &r));
            int32_t a = d0 < 0 ? d0 + t.ndim : d0, b = d1 < 0 ? d1 + t.ndim : d1;
            memset(idx, 0, sizeof idx);
            bad = 0;
            if (tref_numel(r.ndim, r.shape) > 0) {
                do {
                    memcpy(src, idx, sizeof src);
                    src[a] = idx[b];
                    src[b] = idx[a];
                    bad += tref_value_at(ctx, &r, idx) != tref_value_at(ctx, &t, src);
                } while (tref_next_index(r.ndim, r.shape, idx));
            }
            CHECK_MSG(bad == 0, "transpose: %d mismatches", bad);
        }
    }
}

// Python slice semantics, written as a filter over all indices (not as the library's
// count-and-clamp): the selected indices of range(len) in order.
static int64_t ref_slice(int64_t len, int64_t start, int64_t stop, int64_t step, int64_t* out) {
    int64_t n = 0;
    if (step > 0) {
        int64_t b = start == HG_SLICE_NONE ? 0 : start < 0 ? start + len : start;
        int64_t e = stop == HG_SLICE_NONE ? len : stop < 0 ? stop + len : stop;
        if (b < 0) b = 0;  // the walk starts at the first index inside
        for (int64_t j = 0; j < len; j++)
            if (j >= b && j < e && (j - b) % step == 0) out[n++] = j;
    } else {
        int64_t b = start == HG_SLICE_NONE ? len - 1 : start < 0 ? start + len : start;
        int64_t e = stop == HG_SLICE_NONE ? -1 : stop < 0 ? stop + len : stop;
        if (e < -1) e = -1;
        if (b > len - 1) b = len - 1;
        for (int64_t j = len - 1; j >= 0; j--)
            if (j <= b && j > e && (b - j) % -step == 0) out[n++] = j;
    }
    return n;
}

static void test_slice_select(tref_ctx* ctx) {
    // Known numpy results on a length-10 dim.
    static const struct { int64_t start, stop, step; int64_t n; int64_t first; } known[] = {
        {8, 2, -3, 2, 8},                        // [8, 5]
        {-1, HG_SLICE_NONE, -1, 10, 9},          // 9..0
        {HG_SLICE_NONE, HG_SLICE_NONE, -2, 5, 9},// [9, 7, 5, 3, 1]
        {-100, 100, 1, 10, 0},
        {5, 1, 1, 0, 0},
        {100, -100, -1, 10, 9},
        {3, HG_SLICE_END, 4, 2, 3},              // [3, 7]
        {-3, HG_SLICE_NONE, 1, 3, 7},
        {0, 10, INT64_MAX, 1, 0},
        {9, HG_SLICE_NONE, INT64_MIN, 1, 9},
    };
    hg_tensor t, r;
    CHECK_OK(hg_tensor_view(ctx->iota, 1, (int64_t[]){10}, NULL, 100, &t));
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        CHECK_OK(hg_tensor_slice(&t, 0, known[k].start, known[k].stop, known[k].step, &r));
        CHECK_MSG(r.shape[0] == known[k].n, "known slice %zu: %lld elements", k,
                  (long long)r.shape[0]);
        if (r.shape[0] > 0) CHECK(tref_value_at(ctx, &r, (int64_t[]){0}) == 100 + known[k].first);
    }
    for (int it = 0; it < 400; it++) {
        if (!tref_rand_view(ctx, &t) || t.ndim == 0) continue;
        int32_t d = (int32_t)tref_rnd(ctx, 0, t.ndim - 1);
        int64_t step = tref_rnd(ctx, 0, 4) ? tref_rnd(ctx, 1, 4) * (tref_rnd(ctx, 0, 1) ? 1 : -1)
                                           : (tref_rnd(ctx, 0, 1) ? 100 : -100);
        int64_t start = tref_rnd(ctx, 0, 3) ? tref_rnd(ctx, -8, 8) : HG_SLICE_NONE;
        int64_t stop = tref_rnd(ctx, 0, 3) ? tref_rnd(ctx, -8, 8) : HG_SLICE_NONE;
        int64_t sel[64];
        int64_t n = ref_slice(t.shape[d], start, stop, step, sel);
        int32_t dd = tref_rnd(ctx, 0, 1) ? d - t.ndim : d;
        CHECK_OK(hg_tensor_slice(&t, dd, start, stop, step, &r));
        CHECK(tref_same_base(&r, &t) && r.ndim == t.ndim);
        CHECK_MSG(r.shape[d] == n, "slice len %lld [%lld:%lld:%lld]: got %lld want %lld",
                  (long long)t.shape[d], (long long)start, (long long)stop, (long long)step,
                  (long long)r.shape[d], (long long)n);
        if (r.shape[d] != n) continue;
        int64_t idx[HG_MAX_DIMS] = {0}, src[HG_MAX_DIMS];
        int bad = 0;
        if (tref_numel(r.ndim, r.shape) > 0) {
            do {
                memcpy(src, idx, sizeof src);
                src[d] = sel[idx[d]];
                bad += tref_value_at(ctx, &r, idx) != tref_value_at(ctx, &t, src);
            } while (tref_next_index(r.ndim, r.shape, idx));
        }
        CHECK_MSG(bad == 0, "slice: %d mismatches", bad);
        // select: drop the dim at a random valid index.
        if (t.shape[d] > 0) {
            int64_t index = tref_rnd(ctx, -t.shape[d], t.shape[d] - 1);
            CHECK_OK(hg_tensor_select(&t, dd, index, &r));
            CHECK(tref_same_base(&r, &t) && r.ndim == t.ndim - 1);
            memset(idx, 0, sizeof idx);
            bad = 0;
            if (tref_numel(r.ndim, r.shape) > 0) {
                do {
                    for (int32_t i = 0, j = 0; i < t.ndim; i++)
                        src[i] = i == d ? (index < 0 ? index + t.shape[d] : index) : idx[j++];
                    bad += tref_value_at(ctx, &r, idx) != tref_value_at(ctx, &t, src);
                } while (tref_next_index(r.ndim, r.shape, idx));
            }
            CHECK_MSG(bad == 0, "select: %d mismatches", bad);
        }
    }
}


// Flat order is unchanged by squeeze/unsqueeze; shapes are checked separately.
static int same_flat(tref_ctx* ctx, const hg_tensor* a, const hg_tensor* b) {
    int64_t n = tref_numel(a->ndim, a->shape);
    if (n != tref_numel(b->ndim, b->shape)) return 0;
    int64_t *ea = tref_elems_of(a), *eb = tref_elems_of(b);
    int ok = 1;
    for (int64_t k = 0; k < n; k++) ok &= ctx->iota_host[ea[k]] == ctx->iota_host[eb[k]];
    free(ea);
    free(eb);
    return ok;
}

static void test_squeeze_unsqueeze_expand(tref_ctx* ctx) {
    for (int it = 0; it < 300; it++) {
        hg_tensor t, r;
        if (!tref_rand_view(ctx, &t)) continue;
        // squeeze all
        CHECK_OK(hg_tensor_squeeze(&t, HG_ALL_DIMS, &r));
        int32_t want = 0;
        for (int32_t i = 0; i < t.ndim; i++) {
            if (t.shape[i] == 1) continue;
            CHECK(r.shape[want] == t.shape[i]);
            want++;
        }
        CHECK(r.ndim == want && tref_same_base(&r, &t) && same_flat(ctx, &r, &t));
        // squeeze one size-1 dim (negative allowed)
        for (int32_t i = 0; i < t.ndim; i++) {
            if (t.shape[i] != 1) continue;
            CHECK_OK(hg_tensor_squeeze(&t, tref_rnd(ctx, 0, 1) ? i : i - t.ndim, &r));
            CHECK(r.ndim == t.ndim - 1 && same_flat(ctx, &r, &t));
            for (int32_t j = 0; j < r.ndim; j++) CHECK(r.shape[j] == t.shape[j < i ? j : j + 1]);
            break;
        }
        // unsqueeze
        if (t.ndim < HG_MAX_DIMS) {
            int32_t d = (int32_t)tref_rnd(ctx, -(t.ndim + 1), t.ndim);
            int32_t p = d < 0 ? d + t.ndim + 1 : d;
            CHECK_OK(hg_tensor_unsqueeze(&t, d, &r));
            CHECK(r.ndim == t.ndim + 1 && r.shape[p] == 1 && tref_same_base(&r, &t));
            CHECK(same_flat(ctx, &r, &t));
            for (int32_t j = 0; j < t.ndim; j++) CHECK(r.shape[j < p ? j : j + 1] == t.shape[j]);
            int c1 = 0, c2 = 0;
            CHECK_OK(hg_tensor_is_contiguous(&t, &c1));
            CHECK_OK(hg_tensor_is_contiguous(&r, &c2));
            CHECK(c1 == c2);
        }
        // expand: random new leading dims, size-1 dims grown, -1 kept.
        int32_t lead = (int32_t)tref_rnd(ctx, 0, HG_MAX_DIMS - t.ndim);
        int32_t nd = t.ndim + lead;
        int64_t shape[HG_MAX_DIMS];
        for (int32_t i = 0; i < nd; i++) {
            int32_t j = i - lead;
            if (j < 0) shape[i] = tref_rnd(ctx, 0, 3);
            else if (t.shape[j] == 1) shape[i] = tref_rnd(ctx, 0, 3);
            else shape[i] = tref_rnd(ctx, 0, 1) ? -1 : t.shape[j];
        }
        if (tref_numel(nd, shape) < 0) continue;  // -1 entries make the product meaningless
        CHECK_OK(hg_tensor_expand(&t, nd, shape, &r));
        CHECK(r.ndim == nd && tref_same_base(&r, &t));
        for (int32_t i = 0; i < nd; i++)
            CHECK(r.shape[i] == (shape[i] == -1 ? t.shape[i - lead] : shape[i]));
        int64_t idx[HG_MAX_DIMS] = {0}, src[HG_MAX_DIMS];
        int bad = 0;
        if (tref_numel(r.ndim, r.shape) > 0) {
            do {
                for (int32_t j = 0; j < t.ndim; j++) src[j] = t.shape[j] == 1 ? 0 : idx[j + lead];
                bad += tref_value_at(ctx, &r, idx) != tref_value_at(ctx, &t, src);
            } while (tref_next_index(r.ndim, r.shape, idx));
        }
        CHECK_MSG(bad == 0, "expand: %d mismatches", bad);
    }
    // expand of a 0-dim tensor and of an empty dim; bad sizes.
    hg_tensor s, r;
    CHECK_OK(hg_tensor_view(ctx->iota, 0, NULL, NULL, 7, &s));
    CHECK_OK(hg_tensor_expand(&s, 2, (int64_t[]){3, 2}, &r));
    CHECK(r.strides[0] == 0 && r.strides[1] == 0 && tref_value_at(ctx, &r, (int64_t[]){2, 1}) == 7);
    CHECK_OK(hg_tensor_view(ctx->iota, 2, (int64_t[]){1, 3}, NULL, 0, &s));
    CHECK_OK(hg_tensor_expand(&s, 2, (int64_t[]){0, 3}, &r));
    CHECK(r.shape[0] == 0);
    CHECK_STATUS(hg_tensor_expand(&s, 2, (int64_t[]){2, 4}, &r), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_tensor_expand(&s, 3, (int64_t[]){-1, 1, 3}, &r), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_tensor_expand(&s, 1, (int64_t[]){3}, &r), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_tensor_expand(&s, 2, (int64_t[]){-2, 3}, &r), HG_ERR_INVALID_ARGUMENT);
    int64_t huge = INT64_C(1) << 40;
    CHECK_STATUS(hg_tensor_expand(&s, 3, (int64_t[]){huge, huge, 3}, &r), HG_ERR_INVALID_ARGUMENT);
}

static void test_broadcast_shapes(void) {
    static const struct {
        int32_t na; int64_t a[4];
        int32_t nb; int64_t b[4];
        hg_status want; int32_t nr; int64_t r[4];
    } rows[] = {
        {2, {3, 1}, 1, {4}, HG_OK, 2, {3, 4}},
        {0, {0}, 2, {2, 5}, HG_OK, 2, {2, 5}},
        {3, {1, 0, 3}, 2, {1, 3}, HG_OK, 3, {1, 0, 3}},
        {1, {1}, 1, {0}, HG_OK, 1, {0}},
        {4, {8, 1, 6, 1}, 3, {7, 1, 5}, HG_OK, 4, {8, 7, 6, 5}},
        {1, {3}, 1, {4}, HG_ERR_SIZE_MISMATCH, 0, {0}},
        {2, {2, 1}, 3, {8, 4, 3}, HG_ERR_SIZE_MISMATCH, 0, {0}},
        {1, {0}, 1, {2}, HG_ERR_SIZE_MISMATCH, 0, {0}},
        {1, {-1}, 1, {2}, HG_ERR_INVALID_ARGUMENT, 0, {0}},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        int32_t nr = -7;
        int64_t r[HG_MAX_DIMS];
        memset(r, 0x5a, sizeof r);
        hg_status s = hg_broadcast_shapes(rows[k].na, rows[k].a, rows[k].nb, rows[k].b, &nr, r);
        CHECK_MSG(s == rows[k].want, "row %zu: %s (%s)", k, hg_status_string(s), hg_last_error());
        if (s == HG_OK) {
            CHECK(nr == rows[k].nr && memcmp(r, rows[k].r, (size_t)nr * sizeof r[0]) == 0);
        } else {
            CHECK(nr == -7 && r[0] == 0x5a5a5a5a5a5a5a5aLL);
        }
        if (rows[k].want == HG_ERR_SIZE_MISMATCH)  // the message names both shapes
            CHECK_MSG(strstr(hg_last_error(), "(3,)") || strstr(hg_last_error(), "(2, 1)") ||
                          strstr(hg_last_error(), "(0,)"),
                      "%s", hg_last_error());
    }
    CHECK_STATUS(hg_broadcast_shapes(9, (int64_t[9]){0}, 0, NULL, &(int32_t){0}, (int64_t[9]){0}),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_broadcast_shapes(1, NULL, 0, NULL, &(int32_t){0}, (int64_t[1]){0}),
                 HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_broadcast_shapes(1, (int64_t[]){2}, 0, NULL, NULL, (int64_t[1]){0}),
                 HG_ERR_NULL_POINTER);
}

// ---------------------------------------------------------------------------------------------
// Reshape: view exactly when the elements are an affine function of the new index
// ---------------------------------------------------------------------------------------------

// Brute-force reference: can flat order E of t be written with some strides for shape?
static int ref_reshape_is_view(const hg_tensor* t, int32_t nd, const int64_t* shape) {
    int64_t n = tref_numel(nd, shape);
    if (n == 0) return 1;
    int64_t* e = tref_elems_of(t);
    int64_t cs[HG_MAX_DIMS], st[HG_MAX_DIMS], acc = 1;
    for (int32_t i = nd - 1; i >= 0; i--) {
        cs[i] = acc;
        acc *= shape[i];
    }
    for (int32_t i = 0; i < nd; i++) st[i] = shape[i] > 1 ? e[cs[i]] - e[0] : 0;
    int64_t idx[HG_MAX_DIMS] = {0}, k = 0;
    int ok = 1;
    do {
        int64_t want = e[0];
        for (int32_t i = 0; i < nd; i++) want += idx[i] * st[i];
        ok &= e[k++] == want;
    } while (tref_next_index(nd, shape, idx));
    free(e);
    return ok;
}

static void check_reshape(tref_ctx* ctx, const hg_tensor* t, int32_t nd, const int64_t* shape_in) {
    int64_t shape[HG_MAX_DIMS];
    memcpy(shape, shape_in, (size_t)nd * sizeof shape[0]);
    int64_t n = tref_numel(t->ndim, t->shape), known = 1;
    for (int32_t i = 0; i < nd; i++) if (shape[i] != -1) known *= shape[i];
    for (int32_t i = 0; i < nd; i++) if (shape[i] == -1) shape[i] = n / known;
    int view = ref_reshape_is_view(t, nd, shape);
    hg_tensor r;
    hg_status s = hg_tensor_reshape(t, nd, shape_in, &r);
    CHECK_MSG(s == (view ? HG_OK : HG_ERR_UNSUPPORTED), "reshape: %s, reference says %s (%s)",
              hg_status_string(s), view ? "view" : "copy", hg_last_error());
    if (s == HG_ERR_UNSUPPORTED) CHECK(strstr(hg_last_error(), "hg_tensor_contiguous") != NULL);
    if (s != HG_OK) return;
    CHECK(tref_same_base(&r, t) && r.ndim == nd && memcmp(r.shape, shape, (size_t)nd * 8) == 0);
    CHECK(same_flat(ctx, &r, t));
}

static void test_reshape(tref_ctx* ctx) {
    // Known numpy cases on x = arange(24).reshape(4, 6).
    hg_tensor x, y, r;
    CHECK_OK(hg_tensor_view(ctx->iota, 2, (int64_t[]){4, 6}, NULL, 0, &x));
    // x.T.reshape(24) copies; x.T.reshape(3, 2, 4) is a view (splits dims without merging).
    CHECK_OK(hg_tensor_transpose(&x, 0, 1, &y));
    CHECK_STATUS(hg_tensor_reshape(&y, 1, (int64_t[]){24}, &r), HG_ERR_UNSUPPORTED);
    CHECK_OK(hg_tensor_reshape(&y, 3, (int64_t[]){3, 2, 4}, &r));
    CHECK(r.strides[0] == 2 && r.strides[1] == 1 && r.strides[2] == 6);
    // x[:, ::2] has strides (6, 2): every reshape is a view, (12,) with stride 2.
    CHECK_OK(hg_tensor_slice(&x, 1, HG_SLICE_NONE, HG_SLICE_NONE, 2, &y));
    CHECK_OK(hg_tensor_reshape(&y, 3, (int64_t[]){2, 2, 3}, &r));
    CHECK(r.strides[0] == 12 && r.strides[1] == 6 && r.strides[2] == 2);
    CHECK_OK(hg_tensor_reshape(&y, 1, (int64_t[]){12}, &r));
    CHECK(r.strides[0] == 2 && r.offset == 0);
    // x[:, :4:2] has shape (4, 2), strides (6, 2): (2, 2, 2) and (4, 1, 2, 1) are views,
    // (8,) copies (the gap after each row).
    CHECK_OK(hg_tensor_slice(&x, 1, HG_SLICE_NONE, 4, 2, &y));
    CHECK_OK(hg_tensor_reshape(&y, 3, (int64_t[]){2, 2, 2}, &r));
    CHECK(r.strides[0] == 12 && r.strides[1] == 6 && r.strides[2] == 2);
    CHECK_OK(hg_tensor_reshape(&y, 4, (int64_t[]){4, 1, 2, 1}, &r));
    CHECK(r.strides[0] == 6 && r.strides[2] == 2);
    CHECK_STATUS(hg_tensor_reshape(&y, 1, (int64_t[]){8}, &r), HG_ERR_UNSUPPORTED);
    // x[::-1] reshaped to (24,): not a view (rows reversed, columns not).
    CHECK_OK(hg_tensor_slice(&x, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &y));
    CHECK_STATUS(hg_tensor_reshape(&y, 1, (int64_t[]){-1}, &r), HG_ERR_UNSUPPORTED);
    // x[::-1, ::-1] reshaped to (24,) is a view with stride -1.
    CHECK_OK(hg_tensor_slice(&y, 1, HG_SLICE_NONE, HG_SLICE_NONE, -1, &y));
    CHECK_OK(hg_tensor_reshape(&y, 1, (int64_t[]){-1}, &r));
    CHECK(r.shape[0] == 24 && r.strides[0] == -1 && r.offset == 23);
    // -1 inference and its errors.
    CHECK_OK(hg_tensor_reshape(&x, 3, (int64_t[]){2, -1, 3}, &r));
    CHECK(r.shape[1] == 4);
    CHECK_STATUS(hg_tensor_reshape(&x, 2, (int64_t[]){-1, 5}, &r), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_tensor_reshape(&x, 2, (int64_t[]){-1, -1}, &r), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_tensor_reshape(&x, 2, (int64_t[]){5, 5}, &r), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_tensor_reshape(&x, 2, (int64_t[]){-3, -8}, &r), HG_ERR_INVALID_ARGUMENT);
    CHECK_OK(hg_tensor_view(ctx->iota, 2, (int64_t[]){0, 3}, NULL, 0, &y));
    CHECK_STATUS(hg_tensor_reshape(&y, 2, (int64_t[]){0, -1}, &r), HG_ERR_SIZE_MISMATCH);
    CHECK_OK(hg_tensor_reshape(&y, 3, (int64_t[]){3, 0, 5}, &r));
    // 0-dim <-> (1, 1, 1)
    CHECK_OK(hg_tensor_view(ctx->iota, 0, NULL, NULL, 9, &y));
    CHECK_OK(hg_tensor_reshape(&y, 3, (int64_t[]){1, -1, 1}, &r));
    CHECK(r.ndim == 3 && r.shape[1] == 1 && tref_value_at(ctx, &r, (int64_t[]){0, 0, 0}) == 9);
    CHECK_OK(hg_tensor_reshape(&r, 0, NULL, &y));
    CHECK(y.ndim == 0 && y.offset == 9);

    // Random: new shapes by splitting/merging the input's dims, or random factorizations.
    for (int it = 0; it < 600; it++) {
        hg_tensor t;
        if (!tref_rand_view(ctx, &t)) continue;
        int64_t n = tref_numel(t.ndim, t.shape);
        int64_t shape[HG_MAX_DIMS];
        int32_t nd = 0;
        if (tref_rnd(ctx, 0, 1)) {
            // Merge runs of adjacent dims and split some into a factor pair.
            for (int32_t i = 0; i < t.ndim;) {
                int64_t s = t.shape[i++];
                while (i < t.ndim && tref_rnd(ctx, 0, 2) == 0) s *= t.shape[i++];
                if (s % 2 == 0 && s > 2 && nd + 2 <= HG_MAX_DIMS && tref_rnd(ctx, 0, 1)) {
                    shape[nd++] = 2;
                    shape[nd++] = s / 2;
                } else if (nd < HG_MAX_DIMS) {
                    shape[nd++] = s;
                } else {
                    shape[nd - 1] *= s;
                }
            }
        } else {
            // Random factorization of n (n = 0: a zero somewhere).
            int64_t left = n;
            nd = (int32_t)tref_rnd(ctx, n == 0 ? 1 : 0, HG_MAX_DIMS);
            for (int32_t i = 0; i < nd; i++) shape[i] = 1;
            if (n == 0) {
                for (int32_t i = 0; i < nd; i++) shape[i] = tref_rnd(ctx, 0, 3);
                shape[tref_rnd(ctx, 0, nd - 1)] = 0;
            } else if (nd == 0) {
                if (n != 1) continue;
            } else {
                for (int64_t f = 2; left > 1; f++) {
                    while (left % f == 0) {
                        shape[tref_rnd(ctx, 0, nd - 1)] *= f;
                        left /= f;
                    }
                }
            }
        }
        if (n > 0 && nd > 0 && tref_rnd(ctx, 0, 2) == 0) shape[tref_rnd(ctx, 0, nd - 1)] = -1;
        check_reshape(ctx, &t, nd, shape);
    }
}

// ---------------------------------------------------------------------------------------------
// Bad input: each error with its status, and out untouched
// ---------------------------------------------------------------------------------------------

static hg_tensor g_out;
#define CHECK_ERR(expr, want) TREF_CHECK_ERR(&g_out, expr, want)

static void test_errors(tref_ctx* ctx) {
    hg_buffer b, dead;
    CHECK_OK(hg_buffer_create(ctx->ex, HG_DTYPE_F32, 24, &b));
    CHECK_OK(hg_buffer_create(ctx->ex, HG_DTYPE_F32, 4, &dead));
    CHECK_OK(hg_buffer_destroy(dead));
    hg_tensor t;
    CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){4, 6}, &t));
    int64_t s46[] = {4, 6};

    // Creation.
    CHECK_ERR(hg_tensor_from_buffer(dead, 2, s46, &g_out), HG_ERR_INVALID_HANDLE);
    CHECK_ERR(hg_tensor_from_buffer((hg_buffer){0}, 2, s46, &g_out), HG_ERR_INVALID_HANDLE);
    CHECK_ERR(hg_tensor_from_buffer(b, 2, NULL, &g_out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_from_buffer(b, 2, s46, NULL), HG_ERR_NULL_POINTER);
    CHECK_ERR(hg_tensor_from_buffer(b, 9, (int64_t[9]){1}, &g_out), HG_ERR_INVALID_ARGUMENT);
    CHECK_ERR(hg_tensor_from_buffer(b, -1, s46, &g_out), HG_ERR_INVALID_ARGUMENT);
    CHECK_ERR(hg_tensor_from_buffer(b, 2, (int64_t[]){5, 6}, &g_out), HG_ERR_SIZE_MISMATCH);
    CHECK_ERR(hg_tensor_from_buffer(b, 2, (int64_t[]){-4, -6}, &g_out), HG_ERR_INVALID_ARGUMENT);
    CHECK_ERR(hg_tensor_view(b, 2, s46, (int64_t[]){6, 1}, 1, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK(strstr(hg_last_error(), "24") != NULL);
    CHECK_ERR(hg_tensor_view(b, 2, s46, (int64_t[]){-6, 1}, 0, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_view(b, 1, (int64_t[]){1}, NULL, -1, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_view(b, 1, (int64_t[]){0}, NULL, 25, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_view(b, 2, (int64_t[]){3, 3}, (int64_t[]){INT64_MAX, 1}, 0, &g_out),
              HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_view(b, 2, (int64_t[]){INT64_MAX, 3}, (int64_t[]){0, 0}, 0, &g_out),
              HG_ERR_INVALID_ARGUMENT);
    CHECK_ERR(hg_tensor_view(dead, 0, NULL, NULL, 0, &g_out), HG_ERR_INVALID_HANDLE);

    // Malformed tensors given to every view op (copies: test_tensor_copy).
    hg_tensor bads[TREF_N_BAD];
    hg_status want[TREF_N_BAD];
    tref_bad_tensors(&t, dead, bads, want);
    for (int k = 0; k < TREF_N_BAD; k++) {
        const hg_tensor* x = &bads[k];
        int64_t n = -5;
        int c = -5;
        CHECK_STATUS(hg_tensor_numel(x, &n), want[k]);
        CHECK(n == -5);
        CHECK_STATUS(hg_tensor_is_contiguous(x, &c), want[k]);
        CHECK(c == -5);
        CHECK_ERR(hg_tensor_reshape(x, 1, (int64_t[]){24}, &g_out), want[k]);
        CHECK_ERR(hg_tensor_permute(x, (int32_t[]){1, 0}, &g_out), want[k]);
        CHECK_ERR(hg_tensor_transpose(x, 0, 1, &g_out), want[k]);
        CHECK_ERR(hg_tensor_slice(x, 0, 0, 1, 1, &g_out), want[k]);
        CHECK_ERR(hg_tensor_select(x, 0, 0, &g_out), want[k]);
        CHECK_ERR(hg_tensor_expand(x, 2, s46, &g_out), want[k]);
        CHECK_ERR(hg_tensor_squeeze(x, HG_ALL_DIMS, &g_out), want[k]);
        CHECK_ERR(hg_tensor_unsqueeze(x, 0, &g_out), want[k]);
    }

    // NULL pointers (copies: test_tensor_copy).
    CHECK_STATUS(hg_tensor_numel(NULL, &(int64_t){0}), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_numel(&t, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_is_contiguous(&t, NULL), HG_ERR_NULL_POINTER);
    CHECK_ERR(hg_tensor_reshape(NULL, 1, (int64_t[]){24}, &g_out), HG_ERR_NULL_POINTER);
    CHECK_ERR(hg_tensor_reshape(&t, 1, NULL, &g_out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_reshape(&t, 1, (int64_t[]){24}, NULL), HG_ERR_NULL_POINTER);
    CHECK_ERR(hg_tensor_permute(&t, NULL, &g_out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_permute(&t, (int32_t[]){1, 0}, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_transpose(&t, 0, 1, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_slice(&t, 0, 0, 1, 1, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_select(&t, 0, 0, NULL), HG_ERR_NULL_POINTER);
    CHECK_ERR(hg_tensor_expand(&t, 2, NULL, &g_out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_squeeze(&t, 0, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_unsqueeze(&t, 0, NULL), HG_ERR_NULL_POINTER);

    // Dims, axes and indices out of range.
    CHECK_ERR(hg_tensor_permute(&t, (int32_t[]){0, 0}, &g_out), HG_ERR_INVALID_ARGUMENT);
    CHECK_ERR(hg_tensor_permute(&t, (int32_t[]){1, -1}, &g_out), HG_ERR_INVALID_ARGUMENT);
    CHECK_ERR(hg_tensor_permute(&t, (int32_t[]){0, 2}, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK(strstr(hg_last_error(), "perm[1]") && strstr(hg_last_error(), "-2..1"));
    CHECK_ERR(hg_tensor_transpose(&t, 0, 2, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_transpose(&t, -3, 0, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_slice(&t, 2, 0, 1, 1, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_slice(&t, 0, 0, 1, 0, &g_out), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "step 0") != NULL);
    CHECK_ERR(hg_tensor_select(&t, 0, 4, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_select(&t, 1, -7, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_select(&t, -3, 0, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_squeeze(&t, 0, &g_out), HG_ERR_INVALID_ARGUMENT);  // size 4
    CHECK_ERR(hg_tensor_squeeze(&t, 2, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_unsqueeze(&t, 3, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_unsqueeze(&t, -4, &g_out), HG_ERR_OUT_OF_RANGE);
    hg_tensor s0;
    CHECK_OK(hg_tensor_view(b, 0, NULL, NULL, 3, &s0));
    CHECK_ERR(hg_tensor_select(&s0, 0, 0, &g_out), HG_ERR_OUT_OF_RANGE);
    CHECK_ERR(hg_tensor_transpose(&s0, 0, 0, &g_out), HG_ERR_OUT_OF_RANGE);
    hg_tensor t8;
    CHECK_OK(hg_tensor_view(b, 8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1}, NULL, 0, &t8));
    CHECK_ERR(hg_tensor_unsqueeze(&t8, 0, &g_out), HG_ERR_INVALID_ARGUMENT);
    CHECK_ERR(hg_tensor_expand(&t, 9, (int64_t[9]){1}, &g_out), HG_ERR_INVALID_ARGUMENT);
    CHECK_ERR(hg_tensor_reshape(&t, 9, (int64_t[9]){1}, &g_out), HG_ERR_INVALID_ARGUMENT);

    // A tensor outlives nothing: destroying the executor invalidates its buffers' tensors.
    hg_executor ex2;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex2));
    hg_buffer eb;
    CHECK_OK(hg_buffer_create(ex2, HG_DTYPE_F32, 24, &eb));
    hg_tensor u;
    CHECK_OK(hg_tensor_from_buffer(eb, 2, s46, &u));
    CHECK_OK(hg_executor_destroy(ex2));
    CHECK_ERR(hg_tensor_transpose(&u, 0, 1, &g_out), HG_ERR_INVALID_HANDLE);

    CHECK_OK(hg_buffer_destroy(b));
    CHECK_ERR(hg_tensor_transpose(&t, 0, 1, &g_out), HG_ERR_INVALID_HANDLE);
}

// numpy slices and selects along a dim of an empty view (x[::-1] of a (2, 0) array, x[1] of
// it): an empty result whose offset stays within the buffer (here one of 0 elements).
static void test_empty_view_slices(hg_executor ex) {
    hg_buffer b;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 0, &b));
    hg_tensor t, r;
    CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){2, 0}, NULL, 0, &t));
    CHECK_OK(hg_tensor_slice(&t, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &r));
    CHECK(r.shape[0] == 2 && r.shape[1] == 0 && r.offset == 0);
    CHECK_OK(hg_tensor_slice(&t, 0, 1, HG_SLICE_END, 1, &r));
    CHECK(r.shape[0] == 1 && r.offset == 0);
    CHECK_OK(hg_tensor_select(&t, 0, 1, &r));
    CHECK(r.ndim == 1 && r.shape[0] == 0 && r.offset == 0);
    hg_buffer_destroy(b);
}

int main(void) {
    hg_executor ex;
    hg_status s = hg_executor_create(HG_BACKEND_CPU, &ex);
    CHECK_OK(s);
    if (s != HG_OK) return hg_test_finish("test_tensor_views");
    tref_ctx ctx;
    s = tref_init(&ctx, ex, 12345);
    CHECK_OK(s);
    if (s == HG_OK) {
        test_create(&ctx);
        test_permute_transpose(&ctx);
        test_slice_select(&ctx);
        test_squeeze_unsqueeze_expand(&ctx);
        test_broadcast_shapes();
        test_reshape(&ctx);
        test_errors(&ctx);
        test_empty_view_slices(ex);
    }
    tref_fini(&ctx);
    CHECK_OK(hg_executor_destroy(ex));
    return hg_test_finish("test_tensor_views");
}
