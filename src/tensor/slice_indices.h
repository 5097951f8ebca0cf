// Internal: Python's slice bounds (PySlice_AdjustIndices), shared by hg_tensor_slice and the
// graph's slice node.
#ifndef HG_TENSOR_SLICE_INDICES_H
#define HG_TENSOR_SLICE_INDICES_H
#include <stdint.h>
#include "hologram.h"

// Clamps *start / stop for a dim of size len with Python's rules (negative counts from the end,
// HG_SLICE_NONE is None; step != 0 and > INT64_MIN) and returns the element count; *start
// becomes the first index.
int64_t hg_slice_indices(int64_t len, int64_t* start, int64_t stop, int64_t step);

#endif
