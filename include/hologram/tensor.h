// hologram/tensor.h — part of libhologram's public header: tensor views (strided views of buffers
// with numpy semantics) and strided copies.
// Include <hologram.h>, which includes every part; the conventions at its top (errors,
// handles, ownership, thread safety) apply here.
#ifndef HOLOGRAM_TENSOR_H
#define HOLOGRAM_TENSOR_H

#include "hologram/core.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Tensor views (numpy semantics). A tensor is a plain value describing a strided view of a
// buffer: dtype, shape (up to HG_MAX_DIMS dims), strides in elements (zero and negative
// allowed) and the element offset of index (0, ..., 0). It owns nothing: copying the struct is
// free, and a tensor is invalid once its buffer is destroyed (calls then give
// HG_ERR_INVALID_HANDLE). Every call checks the tensors it is given (buffer handle, dtype, dims,
// every reachable element inside the buffer), writes *out only on success and never copies data
// unless its name says so (hg_tensor_copy, hg_tensor_contiguous). Shapes with 0 elements are
// valid everywhere. Entries of shape/strides beyond ndim are 0 in results. Thread safety: the
// view functions are pure; hg_tensor_copy writes dst's buffer under the buffer rules above.
//
//     hg_tensor t, tt, row;                          // t: a 3x4 matrix over buffer `buf`
//     hg_tensor_from_buffer(buf, 2, (int64_t[]){3, 4}, &t);
//     hg_tensor_transpose(&t, 0, 1, &tt);            // 4x3 view, strides (1, 4), no copy
//     hg_tensor_slice(&t, 1, HG_SLICE_NONE, HG_SLICE_NONE, -1, &row);   // t[:, ::-1]
// ---------------------------------------------------------------------------------------------
#define HG_MAX_DIMS 8
// Python's None as a slice start or stop: the first (stop: past the last) element in the
// direction of the step. Any other value is clamped like Python clamps it; HG_SLICE_END is a
// stop past the end for positive steps.
#define HG_SLICE_NONE INT64_MIN
#define HG_SLICE_END INT64_MAX
// hg_tensor_squeeze: remove every size-1 dim.
#define HG_ALL_DIMS INT32_MIN

typedef struct hg_tensor {
    hg_buffer buffer;
    hg_dtype dtype;                 // the buffer's dtype
    int32_t ndim;                   // 0..HG_MAX_DIMS (0 = a scalar view of one element)
    int64_t shape[HG_MAX_DIMS];
    int64_t strides[HG_MAX_DIMS];   // in elements; may be 0 (broadcast) or negative
    int64_t offset;                 // element index in the buffer of index (0, ..., 0)
} hg_tensor;

// C-contiguous view of the whole buffer at offset 0; the product of shape must equal the
// buffer's count (HG_ERR_SIZE_MISMATCH otherwise). shape may be NULL when ndim is 0.
HG_API hg_status hg_tensor_from_buffer(hg_buffer buf, int32_t ndim, const int64_t* shape,
                                       hg_tensor* out);
// A view with any strides (NULL = C-contiguous) at an element offset. Every reachable element
// must lie inside the buffer (HG_ERR_OUT_OF_RANGE naming the lowest/highest element otherwise);
// an empty view needs 0 <= offset <= count.
HG_API hg_status hg_tensor_view(hg_buffer buf, int32_t ndim, const int64_t* shape,
                                const int64_t* strides, int64_t offset, hg_tensor* out);
// Number of elements (product of shape; 1 for ndim 0).
HG_API hg_status hg_tensor_numel(const hg_tensor* t, int64_t* out);
// 1 if the elements are laid out in C order with no gaps (strides of size-1 dims are ignored;
// empty tensors are contiguous), whatever the offset; else 0.
HG_API hg_status hg_tensor_is_contiguous(const hg_tensor* t, int* out);
// Same elements in C order with a new shape; one entry may be -1 (inferred). The result is a
// view whenever numpy's reshape would make one, also for many non-contiguous tensors; otherwise
// HG_ERR_UNSUPPORTED (call hg_tensor_contiguous first, then reshape).
HG_API hg_status hg_tensor_reshape(const hg_tensor* t, int32_t ndim, const int64_t* shape,
                                   hg_tensor* out);
// Reorders the dims: out dim i is t's dim perm[i] (negative axes count from the end; perm has
// t->ndim entries and must be a permutation).
HG_API hg_status hg_tensor_permute(const hg_tensor* t, const int32_t* perm, hg_tensor* out);
// Swaps two dims (negative allowed).
HG_API hg_status hg_tensor_transpose(const hg_tensor* t, int32_t dim0, int32_t dim1,
                                     hg_tensor* out);
// t[..., start:stop:step, ...] on dim with Python's rules: negative start/stop count from the
// end, out-of-range values are clamped, HG_SLICE_NONE is None, step may be negative but not 0.
HG_API hg_status hg_tensor_slice(const hg_tensor* t, int32_t dim, int64_t start, int64_t stop,
                                 int64_t step, hg_tensor* out);
// t[..., index, ...]: removes dim (index in [-size, size)).
HG_API hg_status hg_tensor_select(const hg_tensor* t, int32_t dim, int64_t index,
                                  hg_tensor* out);
// numpy.broadcast_to: ndim >= t->ndim; t's dims align with the last ones of shape; a size-1 dim
// may become any size (stride 0); new leading dims get stride 0; -1 keeps t's size.
HG_API hg_status hg_tensor_expand(const hg_tensor* t, int32_t ndim, const int64_t* shape,
                                  hg_tensor* out);
// Removes dim (which must have size 1), or every size-1 dim with HG_ALL_DIMS.
HG_API hg_status hg_tensor_squeeze(const hg_tensor* t, int32_t dim, hg_tensor* out);
// Inserts a size-1 dim at position dim in [-(ndim+1), ndim] (negative counts from the end).
HG_API hg_status hg_tensor_unsqueeze(const hg_tensor* t, int32_t dim, hg_tensor* out);
// numpy's broadcast of two shapes (dims aligned at the end; equal, or one of them 1).
// out_shape needs room for max(na, nb) entries. HG_ERR_SIZE_MISMATCH names both shapes.
HG_API hg_status hg_broadcast_shapes(int32_t na, const int64_t* a, int32_t nb, const int64_t* b,
                                     int32_t* out_ndim, int64_t* out_shape);
// dst[...] = src[...] elementwise: same dtype, same executor, src's shape must broadcast to dst's.
// dst may not reach one element through a zero stride on a dim of size > 1. Overlapping views
// of the same memory (one buffer, or two wrapping the same memory) behave as if src were read
// completely before dst is written. On devices an ISA copy kernel does the same.
HG_API hg_status hg_tensor_copy(const hg_tensor* dst, const hg_tensor* src);
// If t is C-contiguous: *out = *t and *out_copied = 0. Otherwise allocates a new buffer of
// numel elements on t's executor, copies t into it, *out = that C-contiguous tensor and
// *out_copied = 1: the caller then owns out->buffer and releases it with hg_buffer_destroy.
HG_API hg_status hg_tensor_contiguous(const hg_tensor* t, hg_tensor* out, int* out_copied);

#ifdef __cplusplus
}
#endif
#endif  // HOLOGRAM_TENSOR_H
