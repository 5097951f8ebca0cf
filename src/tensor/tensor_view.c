// Tensor views: metadata-only operations (numpy semantics). Nothing here touches element data;
// every result is checked to reach only elements inside its buffer, so later copies and
// kernels can trust a tensor's metadata after one hg_tensor_check.
#include <stdio.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "tensor/slice_indices.h"
#include "tensor/tensor_internal.h"

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

const char* hg_tensor_format_dims(char* buf, int32_t ndim, const int64_t* dims) {
    size_t n = 0;
    buf[n++] = '(';
    for (int32_t i = 0; i < ndim && i < HG_MAX_DIMS; i++)
        n += (size_t)snprintf(buf + n, HG_DIMS_TEXT - n, i ? ", %lld" : "%lld",
                              (long long)dims[i]);
    // A 1-dim shape is written as Python writes a 1-tuple: "(5,)".
    if (ndim == 1) buf[n++] = ',';
    buf[n++] = ')';
    buf[n] = 0;
    return buf;
}

void hg_tensor_contiguous_strides(int32_t ndim, const int64_t* shape, int64_t* strides) {
    int64_t acc = 1;
    for (int32_t i = ndim - 1; i >= 0; i--) {
        strides[i] = acc;
        // check_meta guarantees the product of the nonzero sizes fits in int64.
        if (shape[i] > 1) acc *= shape[i];
    }
}

int hg_tensor_extent(int32_t ndim, const int64_t* shape, const int64_t* strides, int64_t offset,
                     int64_t* lo, int64_t* hi) {
    int64_t l = offset, h = offset;
    for (int32_t i = 0; i < ndim; i++) {
        int64_t span;
        if (__builtin_mul_overflow(shape[i] - 1, strides[i], &span)) return 0;
        if (span < 0 ? __builtin_add_overflow(l, span, &l) : __builtin_add_overflow(h, span, &h))
            return 0;
    }
    *lo = l;
    *hi = h;
    return 1;
}

// Checks view metadata against a buffer of `count` elements; stores numel. fn NULL: silent
// (the status only, no message: the repeated-call path formats nothing unless a check fails).
#define META_FAIL(code, ...) return fn ? hg_error(code, __VA_ARGS__) : (code)
static hg_status check_meta(const char* fn, int32_t ndim, const int64_t* shape,
                            const int64_t* strides, int64_t offset, size_t count,
                            int64_t* out_numel) {
    char sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT];
    if (ndim < 0 || ndim > HG_MAX_DIMS)
        META_FAIL(HG_ERR_INVALID_ARGUMENT, "%s: ndim %d is out of range (valid: 0..%d)", fn,
                  (int)ndim, HG_MAX_DIMS);
    int64_t numel = 1, nonzero = 1;
    for (int32_t i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            META_FAIL(HG_ERR_INVALID_ARGUMENT,
                      "%s: shape %s has a negative size %lld in dim %d (sizes must be >= 0)",
                      fn, hg_tensor_format_dims(sb, ndim, shape), (long long)shape[i],
                      (int)i);
        if (shape[i] == 0) numel = 0;
        // As numpy: even an empty shape must have a representable product of its other sizes,
        // so contiguous strides always exist.
        if (shape[i] > 1 && __builtin_mul_overflow(nonzero, shape[i], &nonzero))
            META_FAIL(HG_ERR_INVALID_ARGUMENT,
                      "%s: shape %s has too many elements (the product overflows int64)",
                      fn, hg_tensor_format_dims(sb, ndim, shape));
    }
    if (numel) numel = nonzero;
    if (numel == 0) {
        if (offset < 0 || (uint64_t)offset > count)
            META_FAIL(HG_ERR_OUT_OF_RANGE,
                      "%s: offset %lld of an empty view is outside the buffer of %zu "
                      "elements (valid: 0..%zu)",
                      fn, (long long)offset, count, count);
    } else {
        int64_t lo, hi;
        if (!hg_tensor_extent(ndim, shape, strides, offset, &lo, &hi))
            META_FAIL(HG_ERR_OUT_OF_RANGE,
                      "%s: view of shape %s, strides %s, offset %lld reaches element "
                      "indices that overflow int64",
                      fn, hg_tensor_format_dims(sb, ndim, shape),
                      hg_tensor_format_dims(tb, ndim, strides), (long long)offset);
        if (lo < 0 || (uint64_t)hi >= count)
            META_FAIL(HG_ERR_OUT_OF_RANGE,
                      "%s: view of shape %s, strides %s, offset %lld reaches elements "
                      "%lld..%lld, outside the buffer of %zu elements (valid: 0..%lld)",
                      fn, hg_tensor_format_dims(sb, ndim, shape),
                      hg_tensor_format_dims(tb, ndim, strides), (long long)offset,
                      (long long)lo, (long long)hi, count, (long long)count - 1);
    }
    *out_numel = numel;
    return HG_OK;
}
#undef META_FAIL

hg_status hg_tensor_check(const hg_tensor* t, const char* fn, const char* name,
                          hg_buffer_obj** out_buf, int64_t* out_numel) {
    if (!t) return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", fn, name);
    // The common case first, without formatting anything (two snprintf were most of the
    // argument checks of a small reduction or plan run); a failure goes the long way below
    // for its message.
    hg_buffer_obj* fb = hg_handle_get(t->buffer.handle, HG_HANDLE_BUFFER);
    int64_t fnumel = 0;
    if (fb && t->dtype == fb->dtype &&
        check_meta(NULL, t->ndim, t->shape, t->strides, t->offset, fb->count, &fnumel) == HG_OK) {
        if (out_buf) *out_buf = fb;
        if (out_numel) *out_numel = fnumel;
        return HG_OK;
    }
    char what[160];
    snprintf(what, sizeof what, "%s (%s's buffer)", fn, name);
    hg_buffer_obj* b = hg_handle_resolve(t->buffer.handle, HG_HANDLE_BUFFER, what);
    if (!b) return HG_ERR_INVALID_HANDLE;
    if (t->dtype != b->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: %s has dtype %s (%d) but its buffer holds %s elements", fn, name,
                        hg_dtype_valid((int)t->dtype) ? hg_dtype_name(t->dtype) : "invalid",
                        (int)t->dtype, hg_dtype_name(b->dtype));
    int64_t numel = 0;
    snprintf(what, sizeof what, "%s (argument '%s')", fn, name);
    hg_status s = check_meta(what, t->ndim, t->shape, t->strides, t->offset, b->count, &numel);
    if (s) return s;
    if (out_buf) *out_buf = b;
    if (out_numel) *out_numel = numel;
    return HG_OK;
}

// A fresh result over t's buffer with unused entries zeroed (so results compare with memcmp).
static hg_tensor result_of(const hg_tensor* t) {
    hg_tensor r;
    memset(&r, 0, sizeof r);
    r.buffer = t->buffer;
    r.dtype = t->dtype;
    r.offset = t->offset;
    return r;
}

// Maps dim (negative counts from the end) into [0, ndim).
static hg_status norm_dim(const char* fn, const char* arg, int32_t dim, int32_t ndim,
                          int32_t* out) {
    if (ndim == 0)
        return hg_error(HG_ERR_OUT_OF_RANGE, "%s: %s %d is out of range: the tensor has 0 dims",
                        fn, arg, (int)dim);
    if (dim < -ndim || dim >= ndim)
        return hg_error(HG_ERR_OUT_OF_RANGE,
                        "%s: %s %d is out of range for a tensor of %d dims (valid: %d..%d)", fn,
                        arg, (int)dim, (int)ndim, (int)-ndim, (int)ndim - 1);
    *out = dim < 0 ? dim + ndim : dim;
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Creation and queries
// ---------------------------------------------------------------------------------------------

// Shared by hg_tensor_view and hg_tensor_from_buffer (fn names the caller in messages).
// NULL strides mean C-contiguous; `whole` additionally requires the view to cover exactly the
// buffer's elements.
static hg_status make_view(const char* fn, hg_buffer buf, int32_t ndim, const int64_t* shape,
                           const int64_t* strides, int64_t offset, int whole, hg_tensor* out) {
    hg_buffer_obj* b = hg_handle_resolve(buf.handle, HG_HANDLE_BUFFER, fn);
    if (!b) return HG_ERR_INVALID_HANDLE;
    if (ndim > 0) HG_CHECK_NULL(shape, "shape");
    HG_CHECK_NULL(out, "out");
    if (ndim < 0 || ndim > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: ndim %d is out of range (valid: 0..%d)", fn,
                        (int)ndim, HG_MAX_DIMS);
    hg_tensor r;
    memset(&r, 0, sizeof r);
    r.buffer = buf;
    r.dtype = b->dtype;
    r.ndim = ndim;
    r.offset = offset;
    for (int32_t i = 0; i < ndim; i++) r.shape[i] = shape[i];
    int64_t numel = 0;
    // Sizes first (with a 1-element pseudo buffer the extent check may fail: ignore that).
    hg_status s = check_meta(fn, ndim, r.shape, r.strides, 0, 1, &numel);
    if (s && s != HG_ERR_OUT_OF_RANGE) return s;
    char sb[HG_DIMS_TEXT];
    if (whole && (uint64_t)numel != b->count)
        return hg_error(HG_ERR_SIZE_MISMATCH,
                        "%s: shape %s has %lld elements but the buffer has %zu "
                        "(use hg_tensor_view for a part of a buffer)",
                        fn, hg_tensor_format_dims(sb, ndim, r.shape), (long long)numel, b->count);
    if (strides)
        for (int32_t i = 0; i < ndim; i++) r.strides[i] = strides[i];
    else
        hg_tensor_contiguous_strides(ndim, r.shape, r.strides);
    if ((s = check_meta(fn, ndim, r.shape, r.strides, offset, b->count, &numel))) return s;
    *out = r;
    return HG_OK;
}

hg_status hg_tensor_view(hg_buffer buf, int32_t ndim, const int64_t* shape,
                         const int64_t* strides, int64_t offset, hg_tensor* out) {
    return make_view("hg_tensor_view", buf, ndim, shape, strides, offset, 0, out);
}

hg_status hg_tensor_from_buffer(hg_buffer buf, int32_t ndim, const int64_t* shape,
                                hg_tensor* out) {
    return make_view("hg_tensor_from_buffer", buf, ndim, shape, NULL, 0, 1, out);
}

hg_status hg_tensor_numel(const hg_tensor* t, int64_t* out) {
    int64_t numel = 0;
    hg_status s = hg_tensor_check(t, "hg_tensor_numel", "t", NULL, &numel);
    if (s) return s;
    HG_CHECK_NULL(out, "out");
    *out = numel;
    return HG_OK;
}

// C order with no gaps; size-1 dims' strides do not matter and empty tensors are contiguous.
static int is_contiguous(const hg_tensor* t, int64_t numel) {
    if (numel == 0) return 1;
    int64_t expect = 1;
    for (int32_t i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] == 1) continue;
        if (t->strides[i] != expect) return 0;
        expect *= t->shape[i];
    }
    return 1;
}

hg_status hg_tensor_is_contiguous(const hg_tensor* t, int* out) {
    int64_t numel = 0;
    hg_status s = hg_tensor_check(t, "hg_tensor_is_contiguous", "t", NULL, &numel);
    if (s) return s;
    HG_CHECK_NULL(out, "out");
    *out = is_contiguous(t, numel);
    return HG_OK;
}

int hg_tensor_is_c_contiguous(const hg_tensor* t, int64_t numel) { return is_contiguous(t, numel); }

// ---------------------------------------------------------------------------------------------
// Dim reordering
// ---------------------------------------------------------------------------------------------

hg_status hg_tensor_permute(const hg_tensor* t, const int32_t* perm, hg_tensor* out) {
    hg_status s = hg_tensor_check(t, "hg_tensor_permute", "t", NULL, NULL);
    if (s) return s;
    if (t->ndim > 0) HG_CHECK_NULL(perm, "perm");
    HG_CHECK_NULL(out, "out");
    hg_tensor r = result_of(t);
    r.ndim = t->ndim;
    int seen[HG_MAX_DIMS] = {0};
    for (int32_t i = 0; i < t->ndim; i++) {
        int32_t d = 0;
        char arg[32];
        snprintf(arg, sizeof arg, "perm[%d]", (int)i);
        if ((s = norm_dim("hg_tensor_permute", arg, perm[i], t->ndim, &d))) return s;
        if (seen[d])
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "hg_tensor_permute: perm[%d] = %d repeats dim %d: perm must name each "
                            "of the %d dims exactly once",
                            (int)i, (int)perm[i], (int)d, (int)t->ndim);
        seen[d] = 1;
        r.shape[i] = t->shape[d];
        r.strides[i] = t->strides[d];
    }
    *out = r;
    return HG_OK;
}

hg_status hg_tensor_transpose(const hg_tensor* t, int32_t dim0, int32_t dim1, hg_tensor* out) {
    hg_status s = hg_tensor_check(t, "hg_tensor_transpose", "t", NULL, NULL);
    if (s) return s;
    HG_CHECK_NULL(out, "out");
    int32_t a = 0, b = 0;
    if ((s = norm_dim("hg_tensor_transpose", "dim0", dim0, t->ndim, &a))) return s;
    if ((s = norm_dim("hg_tensor_transpose", "dim1", dim1, t->ndim, &b))) return s;
    hg_tensor r = *t;
    r.shape[a] = t->shape[b];
    r.strides[a] = t->strides[b];
    r.shape[b] = t->shape[a];
    r.strides[b] = t->strides[a];
    *out = r;
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Indexing
// ---------------------------------------------------------------------------------------------

int64_t hg_slice_indices(int64_t len, int64_t* start, int64_t stop, int64_t step) {
    if (step > 0) {
        int64_t b = *start, e = stop;
        if (b == HG_SLICE_NONE) b = 0;
        else if (b < 0) b = b + len < 0 ? 0 : b + len;
        else if (b > len) b = len;
        if (e == HG_SLICE_NONE) e = len;
        else if (e < 0) e = e + len < 0 ? 0 : e + len;
        else if (e > len) e = len;
        *start = b;
        return e > b ? (e - b - 1) / step + 1 : 0;
    }
    int64_t b = *start, e = stop;
    if (b == HG_SLICE_NONE) b = len - 1;
    else if (b < 0) b = b + len < 0 ? -1 : b + len;
    else if (b >= len) b = len - 1;
    if (e == HG_SLICE_NONE) e = -1;
    else if (e < 0) e = e + len < 0 ? -1 : e + len;
    else if (e >= len) e = len - 1;
    *start = b;
    // step >= -INT64_MAX here (the caller clamps INT64_MIN), so -step is defined.
    return b > e ? (b - e - 1) / -step + 1 : 0;
}

hg_status hg_tensor_slice(const hg_tensor* t, int32_t dim, int64_t start, int64_t stop,
                          int64_t step, hg_tensor* out) {
    int64_t numel = 0;
    hg_status s = hg_tensor_check(t, "hg_tensor_slice", "t", NULL, &numel);
    if (s) return s;
    HG_CHECK_NULL(out, "out");
    int32_t d = 0;
    if ((s = norm_dim("hg_tensor_slice", "dim", dim, t->ndim, &d))) return s;
    if (step == 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_tensor_slice: step 0 is not allowed (use a nonzero step, negative to "
                        "go backwards)");
    if (step == INT64_MIN) step = -INT64_MAX;  // as Python: the same elements, -step defined
    int64_t first = start;
    int64_t n = hg_slice_indices(t->shape[d], &first, stop, step);
    hg_tensor r = *t;
    r.shape[d] = n;
    // Another dim of 0: the result is empty too and its offset stays put (numpy's x[:, ::-1]
    // of a (0, 3) array), since an empty view's offset must stay within its buffer.
    if (n > 0 && numel > 0) {
        // first is a valid index and, for n > 1, first + step is too, so these products are
        // bounded by the (checked) extent of t; the checks only guard that reasoning.
        int64_t move, stride;
        if (__builtin_mul_overflow(first, t->strides[d], &move) ||
            __builtin_add_overflow(r.offset, move, &r.offset))
            return hg_error(HG_ERR_INTERNAL, "hg_tensor_slice: offset overflow");
        if (n > 1) {
            if (__builtin_mul_overflow(t->strides[d], step, &stride))
                return hg_error(HG_ERR_INTERNAL, "hg_tensor_slice: stride overflow");
            r.strides[d] = stride;
        }
    }
    *out = r;
    return HG_OK;
}

hg_status hg_tensor_select(const hg_tensor* t, int32_t dim, int64_t index, hg_tensor* out) {
    int64_t numel = 0;
    hg_status s = hg_tensor_check(t, "hg_tensor_select", "t", NULL, &numel);
    if (s) return s;
    HG_CHECK_NULL(out, "out");
    int32_t d = 0;
    if ((s = norm_dim("hg_tensor_select", "dim", dim, t->ndim, &d))) return s;
    int64_t len = t->shape[d];
    if (index < -len || index >= len)
        return hg_error(HG_ERR_OUT_OF_RANGE,
                        "hg_tensor_select: index %lld is out of range for dim %d of size %lld "
                        "(valid: %lld..%lld)",
                        (long long)index, (int)d, (long long)len, (long long)-len,
                        (long long)len - 1);
    if (index < 0) index += len;
    hg_tensor r = result_of(t);
    r.ndim = t->ndim - 1;
    // A reachable element, so no overflow; an empty t (another dim of 0) keeps its offset,
    // which must stay within the buffer.
    if (numel > 0) r.offset = t->offset + index * t->strides[d];
    for (int32_t i = 0, j = 0; i < t->ndim; i++) {
        if (i == d) continue;
        r.shape[j] = t->shape[i];
        r.strides[j++] = t->strides[i];
    }
    *out = r;
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Broadcasting, squeeze, unsqueeze
// ---------------------------------------------------------------------------------------------

hg_status hg_broadcast_shapes(int32_t na, const int64_t* a, int32_t nb, const int64_t* b,
                              int32_t* out_ndim, int64_t* out_shape) {
    if (na < 0 || na > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_broadcast_shapes: na %d is out of range (valid: 0..%d)", (int)na,
                        HG_MAX_DIMS);
    if (nb < 0 || nb > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_broadcast_shapes: nb %d is out of range (valid: 0..%d)", (int)nb,
                        HG_MAX_DIMS);
    if (na > 0) HG_CHECK_NULL(a, "a");
    if (nb > 0) HG_CHECK_NULL(b, "b");
    HG_CHECK_NULL(out_ndim, "out_ndim");
    int32_t n = na > nb ? na : nb;
    if (n > 0) HG_CHECK_NULL(out_shape, "out_shape");
    char sa[HG_DIMS_TEXT], sb[HG_DIMS_TEXT];
    int64_t r[HG_MAX_DIMS];
    for (int32_t i = 0; i < n; i++) {
        // Dim i counted from the end; a missing dim acts as size 1.
        int64_t x = i < na ? a[na - 1 - i] : 1, y = i < nb ? b[nb - 1 - i] : 1;
        if (x < 0 || y < 0)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "hg_broadcast_shapes: shapes %s and %s: sizes must be >= 0",
                            hg_tensor_format_dims(sa, na, a), hg_tensor_format_dims(sb, nb, b));
        if (x != y && x != 1 && y != 1)
            return hg_error(HG_ERR_SIZE_MISMATCH,
                            "hg_broadcast_shapes: shapes %s and %s do not broadcast: sizes %lld "
                            "and %lld in dim %d from the end differ and neither is 1",
                            hg_tensor_format_dims(sa, na, a), hg_tensor_format_dims(sb, nb, b),
                            (long long)x, (long long)y, (int)-(i + 1));
        r[n - 1 - i] = x == 1 ? y : x;
    }
    *out_ndim = n;
    for (int32_t i = 0; i < n; i++) out_shape[i] = r[i];
    return HG_OK;
}

hg_status hg_tensor_expand(const hg_tensor* t, int32_t ndim, const int64_t* shape,
                           hg_tensor* out) {
    hg_status s = hg_tensor_check(t, "hg_tensor_expand", "t", NULL, NULL);
    if (s) return s;
    if (ndim > 0) HG_CHECK_NULL(shape, "shape");
    HG_CHECK_NULL(out, "out");
    if (ndim < t->ndim || ndim > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_tensor_expand: ndim %d is out of range for a tensor of %d dims "
                        "(valid: %d..%d)",
                        (int)ndim, (int)t->ndim, (int)t->ndim, HG_MAX_DIMS);
    char st[HG_DIMS_TEXT], sn[HG_DIMS_TEXT];
    hg_tensor r = result_of(t);
    r.ndim = ndim;
    int32_t lead = ndim - t->ndim;
    for (int32_t i = 0; i < ndim; i++) {
        int64_t want = shape[i];
        if (i < lead) {
            if (want < 0)
                return hg_error(HG_ERR_INVALID_ARGUMENT,
                                "hg_tensor_expand: shape %s has size %lld in new leading dim %d "
                                "(new dims need a size >= 0; -1 only keeps an existing size)",
                                hg_tensor_format_dims(sn, ndim, shape), (long long)want, (int)i);
            r.shape[i] = want;
            r.strides[i] = 0;
            continue;
        }
        int64_t have = t->shape[i - lead];
        if (want == -1) want = have;
        if (want < 0)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "hg_tensor_expand: shape %s has size %lld in dim %d (sizes must be "
                            ">= 0, or -1 to keep the size)",
                            hg_tensor_format_dims(sn, ndim, shape), (long long)want, (int)i);
        if (want == have) {
            r.shape[i] = have;
            r.strides[i] = t->strides[i - lead];
        } else if (have == 1) {
            r.shape[i] = want;
            r.strides[i] = 0;
        } else {
            return hg_error(HG_ERR_SIZE_MISMATCH,
                            "hg_tensor_expand: cannot broadcast shape %s to %s: dim %d has size "
                            "%lld, which is neither %lld nor 1",
                            hg_tensor_format_dims(st, t->ndim, t->shape),
                            hg_tensor_format_dims(sn, ndim, shape), (int)(i - lead),
                            (long long)have, (long long)want);
        }
    }
    // Sizes may have grown: check that the element count still fits.
    hg_buffer_obj* b = hg_handle_get(t->buffer.handle, HG_HANDLE_BUFFER);
    int64_t numel = 0;
    if (!b) return hg_error(HG_ERR_INVALID_HANDLE, "hg_tensor_expand: buffer destroyed");
    if ((s = check_meta("hg_tensor_expand", r.ndim, r.shape, r.strides, r.offset, b->count,
                        &numel)))
        return s;
    *out = r;
    return HG_OK;
}

hg_status hg_tensor_squeeze(const hg_tensor* t, int32_t dim, hg_tensor* out) {
    hg_status s = hg_tensor_check(t, "hg_tensor_squeeze", "t", NULL, NULL);
    if (s) return s;
    HG_CHECK_NULL(out, "out");
    int32_t d = -1;
    if (dim != HG_ALL_DIMS) {
        if ((s = norm_dim("hg_tensor_squeeze", "dim", dim, t->ndim, &d))) return s;
        if (t->shape[d] != 1)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "hg_tensor_squeeze: dim %d has size %lld; only a size-1 dim can be "
                            "removed",
                            (int)dim, (long long)t->shape[d]);
    }
    hg_tensor r = result_of(t);
    for (int32_t i = 0; i < t->ndim; i++) {
        if (d >= 0 ? i == d : t->shape[i] == 1) continue;
        r.shape[r.ndim] = t->shape[i];
        r.strides[r.ndim++] = t->strides[i];
    }
    *out = r;
    return HG_OK;
}

hg_status hg_tensor_unsqueeze(const hg_tensor* t, int32_t dim, hg_tensor* out) {
    hg_status s = hg_tensor_check(t, "hg_tensor_unsqueeze", "t", NULL, NULL);
    if (s) return s;
    HG_CHECK_NULL(out, "out");
    if (t->ndim >= HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_tensor_unsqueeze: the tensor already has %d dims (at most %d)",
                        (int)t->ndim, HG_MAX_DIMS);
    int32_t n = t->ndim + 1;
    if (dim < -n || dim >= n)
        return hg_error(HG_ERR_OUT_OF_RANGE,
                        "hg_tensor_unsqueeze: dim %d is out of range for a tensor of %d dims "
                        "(valid: %d..%d)",
                        (int)dim, (int)t->ndim, (int)-n, (int)t->ndim);
    int32_t d = dim < 0 ? dim + n : dim;
    hg_tensor r = result_of(t);
    r.ndim = n;
    for (int32_t i = 0, j = 0; i < n; i++) {
        if (i == d) {
            // The stride of a size-1 dim never matters; pick the one that keeps a contiguous
            // tensor's strides contiguous-looking (as torch does).
            int64_t st = 1;
            if (d < t->ndim && __builtin_mul_overflow(t->shape[d], t->strides[d], &st)) st = 1;
            r.shape[i] = 1;
            r.strides[i] = st;
            continue;
        }
        r.shape[i] = t->shape[j];
        r.strides[i] = t->strides[j++];
    }
    *out = r;
    return HG_OK;
}
