// The library's one overlap rule (numpy's may_share_memory bounds test): two views may share
// memory when the byte ranges they reach intersect. Addresses are compared rather than buffer
// handles, so two buffers over the same memory (one numpy array wrapped twice, one device
// address given to hg_buffer_wrap_device twice) are seen as overlapping as well as two views
// of one buffer. hg_tensor_copy and the op layer's hg_op_read_first act on the answer.
#include "tensor/tensor_internal.h"
#include "base/dtype.h"

// First and one-past-last byte a nonempty view reaches in b's memory; 0 for an empty view.
static int byte_span(const hg_tensor* t, const hg_buffer_obj* b, uintptr_t* lo, uintptr_t* hi) {
    for (int32_t i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) return 0;
    int64_t l, h;
    size_t es = hg_dtype_size(t->dtype);
    // Checked tensors never overflow; an unchecked one reads as reaching everything.
    if (!hg_tensor_extent(t->ndim, t->shape, t->strides, t->offset, &l, &h)) {
        *lo = 0;
        *hi = UINTPTR_MAX;
        return 1;
    }
    uintptr_t base = (uintptr_t)b->mem;
    *lo = base + (uintptr_t)l * es;
    *hi = base + (uintptr_t)(h + 1) * es;
    return 1;
}

int hg_tensor_overlap(const hg_tensor* a, const hg_buffer_obj* ab, const hg_tensor* b,
                      const hg_buffer_obj* bb) {
    // Separate allocations (the usual case) are told apart by their whole ranges.
    if (!ab->mem || !bb->mem || hg_tensor_mem_apart(ab, bb)) return 0;
    uintptr_t alo, ahi, blo, bhi;
    if (!byte_span(a, ab, &alo, &ahi) || !byte_span(b, bb, &blo, &bhi)) return 0;
    return alo < bhi && blo < ahi;
}

int hg_tensor_same_view(const hg_tensor* a, const hg_buffer_obj* ab, const hg_tensor* b,
                        const hg_buffer_obj* bb) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    size_t es = hg_dtype_size(a->dtype);
    if ((uintptr_t)ab->mem + (uintptr_t)a->offset * es !=
        (uintptr_t)bb->mem + (uintptr_t)b->offset * es)
        return 0;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i]))
            return 0;
    return 1;
}
