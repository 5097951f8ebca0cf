// Tensor views: every view op against an independent reference. The reference reads a view by
// enumerating all its indices in C order and computing offset + sum(index * stride) into a
// host array; each op's expected result is stated as an index mapping onto its input (permute:
// out[i] = in[i permuted], reshape: flat position k of out = flat position k of in, ...), so
// the library's stride arithmetic is checked against the definition, not against itself.
// Buffers hold their own element indices (value i at element i) for the view tests, random
// bytes for the copy tests.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"

static hg_executor g_ex;
static uint64_t g_rng = 12345;

static int64_t rnd(int64_t lo, int64_t hi) {  // uniform in [lo, hi]
    return lo + (int64_t)(hg_test_rand(&g_rng) % (uint64_t)(hi - lo + 1));
}

// ---------------------------------------------------------------------------------------------
// Reference helpers
// ---------------------------------------------------------------------------------------------

// Advances idx in C order; 0 when it wraps around (all indices visited).
static int next_index(int32_t ndim, const int64_t* shape, int64_t* idx) {
    for (int32_t i = ndim - 1; i >= 0; i--) {
        if (++idx[i] < shape[i]) return 1;
        idx[i] = 0;
    }
    return 0;
}

static int64_t numel_of(int32_t ndim, const int64_t* shape) {
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

// Element index of idx in view t (the definition of a strided view).
static int64_t elem_of(const hg_tensor* t, const int64_t* idx) {
    int64_t e = t->offset;
    for (int32_t i = 0; i < t->ndim; i++) e += idx[i] * t->strides[i];
    return e;
}

// All element indices of t in C order (malloc'd, numel entries; NULL for an empty view).
static int64_t* elems_of(const hg_tensor* t) {
    int64_t n = numel_of(t->ndim, t->shape);
    if (n == 0) return NULL;
    int64_t* out = malloc((size_t)n * sizeof *out);
    int64_t idx[HG_MAX_DIMS] = {0};
    int64_t k = 0;
    do out[k++] = elem_of(t, idx);
    while (next_index(t->ndim, t->shape, idx));
    return out;
}

static hg_buffer g_iota;     // i32, value i at element i
static int32_t* g_iota_host;
enum { IOTA_N = 4096 };

// Value of view t at idx, read from the host array (must equal the element index).
static int64_t value_at(const hg_tensor* t, const int64_t* idx) {
    return g_iota_host[elem_of(t, idx)];
}

// Random sizes 0..5 (mostly >= 1), total at most cap elements.
static void rand_shape(int32_t ndim, int64_t* shape, int64_t cap) {
    for (int32_t i = 0; i < ndim; i++) shape[i] = rnd(0, 9) == 0 ? 0 : rnd(1, 5);
    for (;;) {
        int64_t n = 1;
        for (int32_t i = 0; i < ndim; i++) n *= shape[i];
        if (n <= cap) return;
        int32_t big = 0;
        for (int32_t i = 1; i < ndim; i++) if (shape[i] > shape[big]) big = i;
        shape[big]--;
    }
}

// A random view of g_iota: either arbitrary strides in [-6, 6] (zero = broadcast) or a
// contiguous tensor sliced with random steps and permuted.
static int rand_view(hg_tensor* out) {
    int32_t ndim = (int32_t)rnd(0, HG_MAX_DIMS);
    int64_t shape[HG_MAX_DIMS], strides[HG_MAX_DIMS];
    if (rnd(0, 1)) {
        rand_shape(ndim, shape, 1500);
        for (int32_t i = 0; i < ndim; i++) strides[i] = rnd(-6, 6);
        for (;;) {
            int64_t lo = 0, hi = 0;
            for (int32_t i = 0; i < ndim; i++) {
                int64_t span = (shape[i] > 0 ? shape[i] - 1 : 0) * strides[i];
                if (span < 0) lo += span; else hi += span;
            }
            if (hi - lo < IOTA_N) {
                int64_t off = -lo + rnd(0, IOTA_N - 1 - (hi - lo));
                hg_status s = hg_tensor_view(g_iota, ndim, shape, strides, off, out);
                CHECK_MSG(s == HG_OK, "rand_view: %s", hg_last_error());
                return s == HG_OK;
            }
            for (int32_t i = 0; i < ndim; i++) strides[i] /= 2;
        }
    }
    // Contiguous base of sizes 1..4 (room for slicing), then slices and a permutation.
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; i++) {
        shape[i] = rnd(1, 4);
        n *= shape[i];
    }
    hg_tensor t;
    if (hg_tensor_view(g_iota, ndim, shape, NULL, rnd(0, IOTA_N - n), &t) != HG_OK) return 0;
    for (int32_t i = 0; i < ndim; i++) {
        if (rnd(0, 2) == 0) continue;
        int64_t step = rnd(1, 3) * (rnd(0, 1) ? 1 : -1);
        int64_t start = rnd(0, 3) ? rnd(-5, 5) : HG_SLICE_NONE;
        int64_t stop = rnd(0, 3) ? rnd(-5, 5) : HG_SLICE_NONE;
        if (hg_tensor_slice(&t, i, start, stop, step, &t) != HG_OK) return 0;
    }
    if (ndim > 1 && rnd(0, 1)) {
        int32_t perm[HG_MAX_DIMS];
        for (int32_t i = 0; i < ndim; i++) perm[i] = i;
        for (int32_t i = ndim - 1; i > 0; i--) {
            int32_t j = (int32_t)rnd(0, i), x = perm[i];
            perm[i] = perm[j];
            perm[j] = x;
        }
        if (hg_tensor_permute(&t, perm, &t) != HG_OK) return 0;
    }
    *out = t;
    return 1;
}

// Result shares the input's buffer and dtype, and its unused entries are zero.
static int same_base(const hg_tensor* r, const hg_tensor* t) {
    if (r->buffer.handle != t->buffer.handle || r->dtype != t->dtype) return 0;
    for (int32_t i = r->ndim; i < HG_MAX_DIMS; i++)
        if (r->shape[i] || r->strides[i]) return 0;
    return 1;
}

// ---------------------------------------------------------------------------------------------
// Basic creation and queries
// ---------------------------------------------------------------------------------------------

static void test_create(void) {
    hg_buffer b;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 24, &b));
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
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 0, &e));
    CHECK_OK(hg_tensor_from_buffer(e, 3, (int64_t[]){2, 0, 3}, &t));
    CHECK(t.strides[0] == 3 && t.strides[1] == 3 && t.strides[2] == 1);
    CHECK_OK(hg_tensor_numel(&t, &n));
    CHECK(n == 0);
    // A 0-dim view of one element.
    hg_buffer one;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_I64, 1, &one));
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

static void test_permute_transpose(void) {
    for (int it = 0; it < 300; it++) {
        hg_tensor t, r;
        if (!rand_view(&t)) continue;
        int32_t perm[HG_MAX_DIMS], p[HG_MAX_DIMS];
        for (int32_t i = 0; i < t.ndim; i++) p[i] = i;
        for (int32_t i = t.ndim - 1; i > 0; i--) {
            int32_t j = (int32_t)rnd(0, i), x = p[i];
            p[i] = p[j];
            p[j] = x;
        }
        for (int32_t i = 0; i < t.ndim; i++) perm[i] = rnd(0, 1) ? p[i] - t.ndim : p[i];
        CHECK_OK(hg_tensor_permute(&t, perm, &r));
        CHECK(same_base(&r, &t) && r.ndim == t.ndim);
        int64_t idx[HG_MAX_DIMS] = {0}, src[HG_MAX_DIMS];
        int bad = 0;
        if (numel_of(r.ndim, r.shape) > 0) {
            do {
                for (int32_t i = 0; i < r.ndim; i++) src[p[i]] = idx[i];
                bad += value_at(&r, idx) != value_at(&t, src);
            } while (next_index(r.ndim, r.shape, idx));
        }
        CHECK_MSG(bad == 0, "permute: %d mismatches", bad);
        if (t.ndim >= 1) {
            int32_t d0 = (int32_t)rnd(-t.ndim, t.ndim - 1), d1 = (int32_t)rnd(-t.ndim, t.ndim - 1);
            CHECK_OK(hg_tensor_transpose(&t, d0, d1, &r));
            int32_t a = d0 < 0 ? d0 + t.ndim : d0, b = d1 < 0 ? d1 + t.ndim : d1;
            memset(idx, 0, sizeof idx);
            bad = 0;
            if (numel_of(r.ndim, r.shape) > 0) {
                do {
                    memcpy(src, idx, sizeof src);
                    src[a] = idx[b];
                    src[b] = idx[a];
                    bad += value_at(&r, idx) != value_at(&t, src);
                } while (next_index(r.ndim, r.shape, idx));
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

static void test_slice_select(void) {
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
    CHECK_OK(hg_tensor_view(g_iota, 1, (int64_t[]){10}, NULL, 100, &t));
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        CHECK_OK(hg_tensor_slice(&t, 0, known[k].start, known[k].stop, known[k].step, &r));
        CHECK_MSG(r.shape[0] == known[k].n, "known slice %zu: %lld elements", k,
                  (long long)r.shape[0]);
        if (r.shape[0] > 0) CHECK(value_at(&r, (int64_t[]){0}) == 100 + known[k].first);
    }
    for (int it = 0; it < 400; it++) {
        if (!rand_view(&t) || t.ndim == 0) continue;
        int32_t d = (int32_t)rnd(0, t.ndim - 1);
        int64_t step = rnd(0, 4) ? rnd(1, 4) * (rnd(0, 1) ? 1 : -1) : (rnd(0, 1) ? 100 : -100);
        int64_t start = rnd(0, 3) ? rnd(-8, 8) : HG_SLICE_NONE;
        int64_t stop = rnd(0, 3) ? rnd(-8, 8) : HG_SLICE_NONE;
        int64_t sel[64];
        int64_t n = ref_slice(t.shape[d], start, stop, step, sel);
        int32_t dd = rnd(0, 1) ? d - t.ndim : d;
        CHECK_OK(hg_tensor_slice(&t, dd, start, stop, step, &r));
        CHECK(same_base(&r, &t) && r.ndim == t.ndim);
        CHECK_MSG(r.shape[d] == n, "slice len %lld [%lld:%lld:%lld]: got %lld want %lld",
                  (long long)t.shape[d], (long long)start, (long long)stop, (long long)step,
                  (long long)r.shape[d], (long long)n);
        if (r.shape[d] != n) continue;
        int64_t idx[HG_MAX_DIMS] = {0}, src[HG_MAX_DIMS];
        int bad = 0;
        if (numel_of(r.ndim, r.shape) > 0) {
            do {
                memcpy(src, idx, sizeof src);
                src[d] = sel[idx[d]];
                bad += value_at(&r, idx) != value_at(&t, src);
            } while (next_index(r.ndim, r.shape, idx));
        }
        CHECK_MSG(bad == 0, "slice: %d mismatches", bad);
        // select: drop the dim at a random valid index.
        if (t.shape[d] > 0) {
            int64_t index = rnd(-t.shape[d], t.shape[d] - 1);
            CHECK_OK(hg_tensor_select(&t, dd, index, &r));
            CHECK(same_base(&r, &t) && r.ndim == t.ndim - 1);
            memset(idx, 0, sizeof idx);
            bad = 0;
            if (numel_of(r.ndim, r.shape) > 0) {
                do {
                    for (int32_t i = 0, j = 0; i < t.ndim; i++)
                        src[i] = i == d ? (index < 0 ? index + t.shape[d] : index) : idx[j++];
                    bad += value_at(&r, idx) != value_at(&t, src);
                } while (next_index(r.ndim, r.shape, idx));
            }
            CHECK_MSG(bad == 0, "select: %d mismatches", bad);
        }
    }
}

// Flat order is unchanged by squeeze/unsqueeze; shapes are checked separately.
static int same_flat(const hg_tensor* a, const hg_tensor* b) {
    int64_t n = numel_of(a->ndim, a->shape);
    if (n != numel_of(b->ndim, b->shape)) return 0;
    int64_t *ea = elems_of(a), *eb = elems_of(b);
    int ok = 1;
    for (int64_t k = 0; k < n; k++) ok &= g_iota_host[ea[k]] == g_iota_host[eb[k]];
    free(ea);
    free(eb);
    return ok;
}

static void test_squeeze_unsqueeze_expand(void) {
    for (int it = 0; it < 300; it++) {
        hg_tensor t, r;
        if (!rand_view(&t)) continue;
        // squeeze all
        CHECK_OK(hg_tensor_squeeze(&t, HG_ALL_DIMS, &r));
        int32_t want = 0;
        for (int32_t i = 0; i < t.ndim; i++) {
            if (t.shape[i] == 1) continue;
            CHECK(r.shape[want] == t.shape[i]);
            want++;
        }
        CHECK(r.ndim == want && same_base(&r, &t) && same_flat(&r, &t));
        // squeeze one size-1 dim (negative allowed)
        for (int32_t i = 0; i < t.ndim; i++) {
            if (t.shape[i] != 1) continue;
            CHECK_OK(hg_tensor_squeeze(&t, rnd(0, 1) ? i : i - t.ndim, &r));
            CHECK(r.ndim == t.ndim - 1 && same_flat(&r, &t));
            for (int32_t j = 0; j < r.ndim; j++) CHECK(r.shape[j] == t.shape[j < i ? j : j + 1]);
            break;
        }
        // unsqueeze
        if (t.ndim < HG_MAX_DIMS) {
            int32_t d = (int32_t)rnd(-(t.ndim + 1), t.ndim);
            int32_t p = d < 0 ? d + t.ndim + 1 : d;
            CHECK_OK(hg_tensor_unsqueeze(&t, d, &r));
            CHECK(r.ndim == t.ndim + 1 && r.shape[p] == 1 && same_base(&r, &t));
            CHECK(same_flat(&r, &t));
            for (int32_t j = 0; j < t.ndim; j++) CHECK(r.shape[j < p ? j : j + 1] == t.shape[j]);
            int c1 = 0, c2 = 0;
            CHECK_OK(hg_tensor_is_contiguous(&t, &c1));
            CHECK_OK(hg_tensor_is_contiguous(&r, &c2));
            CHECK(c1 == c2);
        }
        // expand: random new leading dims, size-1 dims grown, -1 kept.
        int32_t lead = (int32_t)rnd(0, HG_MAX_DIMS - t.ndim);
        int32_t nd = t.ndim + lead;
        int64_t shape[HG_MAX_DIMS];
        for (int32_t i = 0; i < nd; i++) {
            int32_t j = i - lead;
            if (j < 0) shape[i] = rnd(0, 3);
            else if (t.shape[j] == 1) shape[i] = rnd(0, 3);
            else shape[i] = rnd(0, 1) ? -1 : t.shape[j];
        }
        if (numel_of(nd, shape) < 0) continue;  // -1 entries make the product meaningless
        CHECK_OK(hg_tensor_expand(&t, nd, shape, &r));
        CHECK(r.ndim == nd && same_base(&r, &t));
        for (int32_t i = 0; i < nd; i++)
            CHECK(r.shape[i] == (shape[i] == -1 ? t.shape[i - lead] : shape[i]));
        int64_t idx[HG_MAX_DIMS] = {0}, src[HG_MAX_DIMS];
        int bad = 0;
        if (numel_of(r.ndim, r.shape) > 0) {
            do {
                for (int32_t j = 0; j < t.ndim; j++) src[j] = t.shape[j] == 1 ? 0 : idx[j + lead];
                bad += value_at(&r, idx) != value_at(&t, src);
            } while (next_index(r.ndim, r.shape, idx));
        }
        CHECK_MSG(bad == 0, "expand: %d mismatches", bad);
    }
    // expand of a 0-dim tensor and of an empty dim; bad sizes.
    hg_tensor s, r;
    CHECK_OK(hg_tensor_view(g_iota, 0, NULL, NULL, 7, &s));
    CHECK_OK(hg_tensor_expand(&s, 2, (int64_t[]){3, 2}, &r));
    CHECK(r.strides[0] == 0 && r.strides[1] == 0 && value_at(&r, (int64_t[]){2, 1}) == 7);
    CHECK_OK(hg_tensor_view(g_iota, 2, (int64_t[]){1, 3}, NULL, 0, &s));
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
    int64_t n = numel_of(nd, shape);
    if (n == 0) return 1;
    int64_t* e = elems_of(t);
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
    } while (next_index(nd, shape, idx));
    free(e);
    return ok;
}

static void check_reshape(const hg_tensor* t, int32_t nd, const int64_t* shape_in) {
    int64_t shape[HG_MAX_DIMS];
    memcpy(shape, shape_in, (size_t)nd * sizeof shape[0]);
    int64_t n = numel_of(t->ndim, t->shape), known = 1;
    for (int32_t i = 0; i < nd; i++) if (shape[i] != -1) known *= shape[i];
    for (int32_t i = 0; i < nd; i++) if (shape[i] == -1) shape[i] = n / known;
    int view = ref_reshape_is_view(t, nd, shape);
    hg_tensor r;
    hg_status s = hg_tensor_reshape(t, nd, shape_in, &r);
    CHECK_MSG(s == (view ? HG_OK : HG_ERR_UNSUPPORTED), "reshape: %s, reference says %s (%s)",
              hg_status_string(s), view ? "view" : "copy", hg_last_error());
    if (s == HG_ERR_UNSUPPORTED) CHECK(strstr(hg_last_error(), "hg_tensor_contiguous") != NULL);
    if (s != HG_OK) return;
    CHECK(same_base(&r, t) && r.ndim == nd && memcmp(r.shape, shape, (size_t)nd * 8) == 0);
    CHECK(same_flat(&r, t));
}

static void test_reshape(void) {
    // Known numpy cases on x = arange(24).reshape(4, 6).
    hg_tensor x, y, r;
    CHECK_OK(hg_tensor_view(g_iota, 2, (int64_t[]){4, 6}, NULL, 0, &x));
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
    CHECK_OK(hg_tensor_view(g_iota, 2, (int64_t[]){0, 3}, NULL, 0, &y));
    CHECK_STATUS(hg_tensor_reshape(&y, 2, (int64_t[]){0, -1}, &r), HG_ERR_SIZE_MISMATCH);
    CHECK_OK(hg_tensor_reshape(&y, 3, (int64_t[]){3, 0, 5}, &r));
    // 0-dim <-> (1, 1, 1)
    CHECK_OK(hg_tensor_view(g_iota, 0, NULL, NULL, 9, &y));
    CHECK_OK(hg_tensor_reshape(&y, 3, (int64_t[]){1, -1, 1}, &r));
    CHECK(r.ndim == 3 && r.shape[1] == 1 && value_at(&r, (int64_t[]){0, 0, 0}) == 9);
    CHECK_OK(hg_tensor_reshape(&r, 0, NULL, &y));
    CHECK(y.ndim == 0 && y.offset == 9);

    // Random: new shapes by splitting/merging the input's dims, or random factorizations.
    for (int it = 0; it < 600; it++) {
        hg_tensor t;
        if (!rand_view(&t)) continue;
        int64_t n = numel_of(t.ndim, t.shape);
        int64_t shape[HG_MAX_DIMS];
        int32_t nd = 0;
        if (rnd(0, 1)) {
            // Merge runs of adjacent dims and split some into a factor pair.
            for (int32_t i = 0; i < t.ndim;) {
                int64_t s = t.shape[i++];
                while (i < t.ndim && rnd(0, 2) == 0) s *= t.shape[i++];
                if (s % 2 == 0 && s > 2 && nd + 2 <= HG_MAX_DIMS && rnd(0, 1)) {
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
            nd = (int32_t)rnd(n == 0 ? 1 : 0, HG_MAX_DIMS);
            for (int32_t i = 0; i < nd; i++) shape[i] = 1;
            if (n == 0) {
                for (int32_t i = 0; i < nd; i++) shape[i] = rnd(0, 3);
                shape[rnd(0, nd - 1)] = 0;
            } else if (nd == 0) {
                if (n != 1) continue;
            } else {
                for (int64_t f = 2; left > 1; f++) {
                    while (left % f == 0) {
                        shape[rnd(0, nd - 1)] *= f;
                        left /= f;
                    }
                }
            }
        }
        if (n > 0 && nd > 0 && rnd(0, 2) == 0) shape[rnd(0, nd - 1)] = -1;
        check_reshape(&t, nd, shape);
    }
}

// ---------------------------------------------------------------------------------------------
// Copies
// ---------------------------------------------------------------------------------------------

// Expected result of dst = src into a snapshot: reads src from src_host (taken before the
// copy), writes dst_host.
static void ref_copy(const hg_tensor* dst, unsigned char* dst_host, const hg_tensor* src,
                     const unsigned char* src_host, size_t es) {
    if (numel_of(dst->ndim, dst->shape) == 0) return;
    int32_t lead = dst->ndim - src->ndim;
    int64_t idx[HG_MAX_DIMS] = {0}, si[HG_MAX_DIMS];
    do {
        for (int32_t j = 0; j < src->ndim; j++) si[j] = src->shape[j] == 1 ? 0 : idx[j + lead];
        int64_t de = elem_of(dst, idx) * (int64_t)es, se = elem_of(src, si) * (int64_t)es;
        memcpy(dst_host + de, src_host + se, es);
    } while (next_index(dst->ndim, dst->shape, idx));
}

static void fill_random(unsigned char* p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)hg_test_rand(&g_rng);
}

// Re-targets a random view of g_iota (an i32 buffer of IOTA_N) to buffer b of dtype dt.
static hg_tensor retarget(hg_tensor t, hg_buffer b, hg_dtype dt) {
    t.buffer = b;
    t.dtype = dt;
    return t;
}

// A dst view without repeated elements: contiguous-based random view (no zero strides).
static int rand_dst_view(hg_tensor* out) {
    for (int tries = 0; tries < 100; tries++) {
        hg_tensor t;
        if (!rand_view(&t)) return 0;
        int ok = 1;
        for (int32_t i = 0; i < t.ndim; i++) ok &= t.shape[i] <= 1 || t.strides[i] != 0;
        // Different indices must reach different elements.
        int64_t n = numel_of(t.ndim, t.shape);
        if (ok && n > 1) {
            int64_t* e = elems_of(&t);
            char* seen = calloc(IOTA_N, 1);
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
static int rand_src_view_for(const hg_tensor* dst, hg_tensor* out) {
    int32_t drop = (int32_t)rnd(0, dst->ndim);
    if (rnd(0, 1)) drop = 0;
    int32_t nd = dst->ndim - drop;
    int64_t shape[HG_MAX_DIMS], strides[HG_MAX_DIMS];
    for (int32_t i = 0; i < nd; i++) {
        shape[i] = rnd(0, 3) ? dst->shape[i + drop] : 1;
        strides[i] = rnd(-6, 6);
    }
    int64_t lo = 0, hi = 0;
    for (int32_t i = 0; i < nd; i++) {
        int64_t span = (shape[i] > 0 ? shape[i] - 1 : 0) * strides[i];
        if (span < 0) lo += span; else hi += span;
    }
    if (hi - lo >= IOTA_N) return 0;
    return hg_tensor_view(g_iota, nd, shape, strides, -lo + rnd(0, IOTA_N - 1 - (hi - lo)), out) ==
           HG_OK;
}

static const hg_dtype k_dtypes[] = {HG_DTYPE_U8, HG_DTYPE_I16, HG_DTYPE_F32, HG_DTYPE_F64};

static void test_copy_random(int same_buffer) {
    for (size_t di = 0; di < sizeof k_dtypes / sizeof k_dtypes[0]; di++) {
        hg_dtype dt = k_dtypes[di];
        size_t es = hg_dtype_size(dt);
        hg_buffer a, b;
        CHECK_OK(hg_buffer_create(g_ex, dt, IOTA_N, &a));
        CHECK_OK(hg_buffer_create(g_ex, dt, IOTA_N, &b));
        unsigned char *ha = NULL, *hb = NULL;
        CHECK_OK(hg_buffer_map(a, (void**)&ha));
        CHECK_OK(hg_buffer_map(b, (void**)&hb));
        unsigned char* snap_a = malloc(IOTA_N * es);
        unsigned char* want = malloc(IOTA_N * es);
        int fails = 0;
        for (int it = 0; it < 250 && fails < 5; it++) {
            hg_tensor d0, s0;
            if (!rand_dst_view(&d0) || !rand_src_view_for(&d0, &s0)) continue;
            fill_random(ha, IOTA_N * es);
            fill_random(hb, IOTA_N * es);
            hg_tensor dst = retarget(d0, same_buffer ? a : b, dt), src = retarget(s0, a, dt);
            unsigned char* dh = same_buffer ? ha : hb;
            memcpy(snap_a, ha, IOTA_N * es);
            memcpy(want, dh, IOTA_N * es);
            ref_copy(&dst, want, &src, snap_a, es);
            hg_status s = hg_tensor_copy(&dst, &src);
            CHECK_MSG(s == HG_OK, "copy: %s", hg_last_error());
            int ok = memcmp(want, dh, IOTA_N * es) == 0;
            if (!same_buffer) ok &= memcmp(snap_a, ha, IOTA_N * es) == 0;  // src untouched
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
static void test_copy_cases(void) {
    enum { R = 67, C = 45 };
    for (size_t di = 0; di < sizeof k_dtypes / sizeof k_dtypes[0]; di++) {
        hg_dtype dt = k_dtypes[di];
        size_t es = hg_dtype_size(dt);
        size_t n = 4 * R * C + 8;
        hg_buffer a, b;
        CHECK_OK(hg_buffer_create(g_ex, dt, n, &a));
        CHECK_OK(hg_buffer_create(g_ex, dt, n, &b));
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
            fill_random(ha, n * es);
            fill_random(hb, n * es);
            int64_t cnt = numel_of(cases[k].nd, cases[k].shape);
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
        fill_random(ha, n * es);
        CHECK_OK(hg_tensor_from_buffer(a, 1, (int64_t[]){(int64_t)n}, &src));
        CHECK_OK(hg_tensor_slice(&src, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &dst));
        for (size_t i = 0; i < n; i++) memcpy(want + i * es, ha + (n - 1 - i) * es, es);
        CHECK_OK(hg_tensor_copy(&dst, &src));
        CHECK(memcmp(want, ha, n * es) == 0);
        // Shift by one in place: a[1:] = a[:-1] (memmove semantics).
        fill_random(ha, n * es);
        memcpy(want, ha, es);
        memcpy(want + es, ha, (n - 1) * es);
        CHECK_OK(hg_tensor_slice(&src, 0, 1, HG_SLICE_NONE, 1, &dst));
        CHECK_OK(hg_tensor_slice(&src, 0, 0, -1, 1, &tmp));
        CHECK_OK(hg_tensor_copy(&dst, &tmp));
        CHECK(memcmp(want, ha, n * es) == 0);
        // In-place transpose of a square matrix: a = a.T.
        fill_random(ha, n * es);
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
    CHECK_OK(hg_buffer_wrap(g_ex, HG_DTYPE_I32, mem, 64, &w1));
    CHECK_OK(hg_buffer_wrap(g_ex, HG_DTYPE_I32, mem + 8, 56, &w2));
    hg_tensor d, s;
    CHECK_OK(hg_tensor_view(w1, 1, (int64_t[]){48}, NULL, 0, &s));
    CHECK_OK(hg_tensor_view(w2, 1, (int64_t[]){48}, NULL, 0, &d));  // mem[8..56) = mem[0..48)
    for (int i = 0; i < 64; i++) want[i] = i < 8 ? i : i < 56 ? i - 8 : i;
    CHECK_OK(hg_tensor_copy(&d, &s));
    CHECK(memcmp(mem, want, sizeof mem) == 0);
    hg_buffer_destroy(w1);
    hg_buffer_destroy(w2);
}

static void test_contiguous(void) {
    for (int it = 0; it < 200; it++) {
        hg_tensor t, r;
        if (!rand_view(&t)) continue;
        int c = -1, copied = -1;
        int64_t n = numel_of(t.ndim, t.shape);
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
        int64_t* e = elems_of(&t);
        int bad = 0;
        for (int64_t k = 0; k < n; k++) bad += h[k] != g_iota_host[e[k]];
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

#define SENTINEL 0xAB
static hg_tensor g_out;
static int untouched(void) {
    const unsigned char* p = (const unsigned char*)&g_out;
    for (size_t i = 0; i < sizeof g_out; i++)
        if (p[i] != SENTINEL) return 0;
    return 1;
}
#define CHECK_ERR(expr, want)                                                               \
    do {                                                                                    \
        memset(&g_out, SENTINEL, sizeof g_out);                                             \
        CHECK_STATUS(expr, want);                                                           \
        CHECK_MSG(untouched(), "%s wrote out on failure", #expr);                           \
        CHECK(hg_last_error()[0] != 0);                                                     \
    } while (0)

static void test_errors(void) {
    hg_buffer b, dead, other_buf;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 24, &b));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 4, &dead));
    CHECK_OK(hg_buffer_destroy(dead));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_I32, 24, &other_buf));
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

    // Malformed tensors given to every op.
    const hg_tensor* bads[5];
    hg_tensor b0 = t, b1 = t, b2 = t, b3 = t, b4 = t;
    b0.buffer = dead;                 // destroyed buffer
    b1.dtype = HG_DTYPE_I32;          // dtype differs from the buffer's
    b2.ndim = 9;                      // too many dims
    b3.offset = 1;                    // reaches element 24
    b4.shape[1] = -6;                 // negative size
    bads[0] = &b0; bads[1] = &b1; bads[2] = &b2; bads[3] = &b3; bads[4] = &b4;
    hg_status want[5] = {HG_ERR_INVALID_HANDLE, HG_ERR_DTYPE_MISMATCH, HG_ERR_INVALID_ARGUMENT,
                         HG_ERR_OUT_OF_RANGE, HG_ERR_INVALID_ARGUMENT};
    for (int k = 0; k < 5; k++) {
        const hg_tensor* x = bads[k];
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
        CHECK_STATUS(hg_tensor_copy(x, &t), want[k]);
        CHECK_STATUS(hg_tensor_copy(&t, x), want[k]);
        c = -5;
        CHECK_ERR(hg_tensor_contiguous(x, &g_out, &c), want[k]);
        CHECK(c == -5);
    }

    // NULL pointers.
    int c = 0;
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
    CHECK_STATUS(hg_tensor_copy(NULL, &t), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_copy(&t, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_tensor_contiguous(&t, NULL, &c), HG_ERR_NULL_POINTER);
    CHECK_ERR(hg_tensor_contiguous(&t, &g_out, NULL), HG_ERR_NULL_POINTER);

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
    // A tensor outlives nothing: destroying the executor invalidates its buffers' tensors.
    CHECK_OK(hg_executor_destroy(ex2));
    CHECK_ERR(hg_tensor_transpose(&u, 0, 1, &g_out), HG_ERR_INVALID_HANDLE);

    CHECK_OK(hg_buffer_destroy(b));
    CHECK_OK(hg_buffer_destroy(other_buf));
    CHECK_ERR(hg_tensor_transpose(&t, 0, 1, &g_out), HG_ERR_INVALID_HANDLE);
}

int main(void) {
    hg_status s = hg_executor_create(HG_BACKEND_CPU, &g_ex);
    CHECK_OK(s);
    if (s != HG_OK) return hg_test_finish("test_tensor_views");
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_I32, IOTA_N, &g_iota));
    CHECK_OK(hg_buffer_map(g_iota, (void**)&g_iota_host));
    for (int i = 0; i < IOTA_N; i++) g_iota_host[i] = i;
    test_create();
    test_permute_transpose();
    test_slice_select();
    test_squeeze_unsqueeze_expand();
    test_broadcast_shapes();
    test_reshape();
    test_copy_random(0);
    test_copy_random(1);
    test_copy_cases();
    test_contiguous();
    test_errors();
    CHECK_OK(hg_executor_destroy(g_ex));
    return hg_test_finish("test_tensor_views");
}
