// Internal: the element count of a shape already checked (sizes >= 0, the product fits in
// int64: hg_tensor_numel is the checked, public form). The one loop for it in the library.
#ifndef HG_BASE_SHAPE_H
#define HG_BASE_SHAPE_H
#include <stdint.h>
#include "hologram.h"

static inline int64_t hg_shape_numel(int32_t ndim, const int64_t* shape) {
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

// The element count of a view (its shape's).
static inline int64_t hg_view_numel(const hg_tensor* t) { return hg_shape_numel(t->ndim, t->shape); }

#endif
