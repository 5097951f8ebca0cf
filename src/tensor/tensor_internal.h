// Internal: helpers shared by the tensor view files (metadata checks, shape formatting).
#ifndef HG_TENSOR_INTERNAL_H
#define HG_TENSOR_INTERNAL_H
#include <stdint.h>
#include "runtime/objects.h"
#include "hologram.h"

// Longest text hg_tensor_format_dims writes: "(" + 8 * ("-9223372036854775808" + ", ") + ")".
#define HG_DIMS_TEXT 200

// Writes "(2, 3, 4)" (or "()" for no dims) into buf of HG_DIMS_TEXT bytes; returns buf.
const char* hg_tensor_format_dims(char* buf, int32_t ndim, const int64_t* dims);

// Checks a tensor given to function fn as argument `name`: live buffer, dtype equal to the
// buffer's, 0 <= ndim <= HG_MAX_DIMS, sizes >= 0, numel fits int64, every reachable element in
// the buffer. On success stores the buffer object (if out_buf) and numel (if out_numel).
hg_status hg_tensor_check(const hg_tensor* t, const char* fn, const char* name,
                          hg_buffer_obj** out_buf, int64_t* out_numel);

// Lowest and highest reachable element index of a nonempty view (overflow-checked; returns 0
// on overflow).
int hg_tensor_extent(int32_t ndim, const int64_t* shape, const int64_t* strides, int64_t offset,
                     int64_t* lo, int64_t* hi);

// 1 if the byte ranges two checked views reach in their buffers' memory intersect (0 when
// either is empty): numpy's conservative may_share_memory test. Addresses are compared, so
// two buffers wrapping the same memory overlap too; ab and bb are the views' buffers.
int hg_tensor_overlap(const hg_tensor* a, const hg_buffer_obj* ab, const hg_tensor* b,
                      const hg_buffer_obj* bb);
// hg_tensor_overlap's first test, inline for the ops' repeated-call path: 1 when the buffers'
// whole memory ranges are apart (separate allocations, or one of them empty), so no views of
// them overlap.
static inline int hg_tensor_mem_apart(const hg_buffer_obj* a, const hg_buffer_obj* b) {
    uintptr_t a0 = (uintptr_t)a->mem, b0 = (uintptr_t)b->mem;
    return a0 + a->nbytes <= b0 || b0 + b->nbytes <= a0;
}
// 1 if the two views are the same elements in the same order: equal dtype and shape, the same
// first address and equal strides on every dim longer than 1 (any buffers).
int hg_tensor_same_view(const hg_tensor* a, const hg_buffer_obj* ab, const hg_tensor* b,
                        const hg_buffer_obj* bb);

// 1 if a checked tensor with numel elements is C-contiguous (hg_tensor_is_contiguous's rule).
int hg_tensor_is_c_contiguous(const hg_tensor* t, int64_t numel);

// C-contiguous strides for shape (size-0 dims count as 1, so strides stay meaningful; they do
// not matter for empty tensors anyway).
void hg_tensor_contiguous_strides(int32_t ndim, const int64_t* shape, int64_t* strides);

// src's strides as seen in dst's shape (numpy broadcasting into out); 0 if src does not
// broadcast to dst (tensor_copy.c).
int hg_tensor_broadcast_strides(const hg_tensor* dst, int32_t ndim, const int64_t* shape,
                                const int64_t* strides, int64_t* out);
// dst[...] = src[...] on a backend whose memory is not host-visible, with an ISA copy kernel
// (tensor_copy_device.c); sstr: src's strides broadcast to dst's shape; overlap: the views
// share memory (then through a temporary).
hg_status hg_tensor_copy_device(const hg_tensor* dst, const hg_tensor* src, const int64_t* sstr,
                                int64_t src_numel, int overlap);

#endif
