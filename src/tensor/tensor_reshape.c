// hg_tensor_reshape: numpy's reshape as a view. The new strides come from numpy's
// _attempt_nocopy_reshape (C order): the old and new shapes are split into the shortest runs of
// dims with equal products; each run of old dims must be "contiguous within itself" (stride[k] ==
// size[k+1] * stride[k+1]), and then the new dims of that run get strides derived from the
// run's innermost stride. So a slice with a step on the last dim, or a transpose followed by a
// reshape that keeps the transposed dims apart, still gives a view; merging dims that are not
// laid out one after the other does not.
#include <string.h>
#include "base/error.h"
#include "tensor/tensor_internal.h"

// Fills new_strides when the view exists (numel > 0); returns 0 when a copy would be needed.
static int nocopy_strides(const hg_tensor* t, int32_t newnd, const int64_t* newdims,
                          int64_t* newstrides) {
    int64_t olddims[HG_MAX_DIMS], oldstrides[HG_MAX_DIMS];
    int32_t oldnd = 0;
    // Size-1 dims have no effect on the layout and any stride: drop them.
    for (int32_t i = 0; i < t->ndim; i++) {
        if (t->shape[i] != 1) {
            olddims[oldnd] = t->shape[i];
            oldstrides[oldnd++] = t->strides[i];
        }
    }
    // [oi, oj) and [ni, nj) are the runs of old and new dims currently matched. The products
    // stay <= numel (checked to fit) because all sizes are >= 1 here.
    int32_t oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < newnd && oi < oldnd) {
        int64_t np = newdims[ni], op = olddims[oi];
        while (np != op) {
            if (np < op) np *= newdims[nj++];  // trailing 1s of the run are handled below
            else op *= olddims[oj++];
        }
        for (int32_t ok = oi; ok < oj - 1; ok++)
            if (oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1]) return 0;
        newstrides[nj - 1] = oldstrides[oj - 1];
        for (int32_t nk = nj - 1; nk > ni; nk--) newstrides[nk - 1] = newstrides[nk] * newdims[nk];
        ni = nj++;
        oi = oj++;
    }
    // New trailing size-1 dims: any stride works; continue the last one as numpy does.
    int64_t last = ni >= 1 ? newstrides[ni - 1] : 1;
    for (int32_t nk = ni; nk < newnd; nk++) newstrides[nk] = last;
    return 1;
}

hg_status hg_tensor_reshape(const hg_tensor* t, int32_t ndim, const int64_t* shape,
                            hg_tensor* out) {
    int64_t numel = 0;
    hg_status s = hg_tensor_check(t, "hg_tensor_reshape", "t", NULL, &numel);
    if (s) return s;
    if (ndim > 0) HG_CHECK_NULL(shape, "shape");
    HG_CHECK_NULL(out, "out");
    if (ndim < 0 || ndim > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_tensor_reshape: ndim %d is out of range (valid: 0..%d)", (int)ndim,
                        HG_MAX_DIMS);
    char so[HG_DIMS_TEXT], sn[HG_DIMS_TEXT], ss[HG_DIMS_TEXT];
    hg_tensor r;
    memset(&r, 0, sizeof r);
    r.buffer = t->buffer;
    r.dtype = t->dtype;
    r.ndim = ndim;
    r.offset = t->offset;
    int32_t unknown = -1;
    int64_t known = 1;
    int overflow = 0;
    for (int32_t i = 0; i < ndim; i++) {
        r.shape[i] = shape[i];
        if (shape[i] == -1) {
            if (unknown >= 0)
                return hg_error(HG_ERR_INVALID_ARGUMENT,
                                "hg_tensor_reshape: shape %s has more than one -1 (dims %d and "
                                "%d); only one size can be inferred",
                                hg_tensor_format_dims(sn, ndim, shape), (int)unknown, (int)i);
            unknown = i;
        } else if (shape[i] < 0) {
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "hg_tensor_reshape: shape %s has size %lld in dim %d (sizes must be "
                            ">= 0, or -1 for one inferred size)",
                            hg_tensor_format_dims(sn, ndim, shape), (long long)shape[i], (int)i);
        } else if (!overflow && __builtin_mul_overflow(known, shape[i], &known)) {
            overflow = 1;
        }
    }
    if (unknown >= 0) {
        if (overflow || known == 0 || numel % known != 0)
            return hg_error(HG_ERR_SIZE_MISMATCH,
                            "hg_tensor_reshape: cannot reshape a tensor of shape %s (%lld "
                            "elements) into shape %s: the -1 size cannot be inferred",
                            hg_tensor_format_dims(so, t->ndim, t->shape), (long long)numel,
                            hg_tensor_format_dims(sn, ndim, shape));
        r.shape[unknown] = numel / known;
    } else if (overflow || known != numel) {
        return hg_error(HG_ERR_SIZE_MISMATCH,
                        "hg_tensor_reshape: cannot reshape a tensor of shape %s (%lld elements) "
                        "into shape %s (a different number of elements)",
                        hg_tensor_format_dims(so, t->ndim, t->shape), (long long)numel,
                        hg_tensor_format_dims(sn, ndim, shape));
    }
    if (numel == 0) {
        // Nothing is reachable: any strides describe the same (empty) view.
        hg_tensor_contiguous_strides(ndim, r.shape, r.strides);
    } else if (!nocopy_strides(t, ndim, r.shape, r.strides)) {
        return hg_error(HG_ERR_UNSUPPORTED,
                        "hg_tensor_reshape: a tensor of shape %s with strides %s cannot be viewed "
                        "as shape %s without copying (its elements are not laid out in that "
                        "order); call hg_tensor_contiguous first and reshape the result",
                        hg_tensor_format_dims(so, t->ndim, t->shape),
                        hg_tensor_format_dims(ss, t->ndim, t->strides),
                        hg_tensor_format_dims(sn, ndim, r.shape));
    }
    *out = r;
    return HG_OK;
}
