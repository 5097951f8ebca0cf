// Internal: what the data ops (fill.c, random.c, concat.c, index_ops.c) share on host-visible
// backends: walking a strided host view in C order from any element, splitting a C-order range
// over the executor's threads, and converting one element between dtypes with the op library's
// casting rules.
#ifndef HG_OPS_DATA_COMMON_H
#define HG_OPS_DATA_COMMON_H
#include <stdint.h>
#include <string.h>
#include "ops/common/op_common.h"

// Position in a strided view while visiting its elements in C order. Strides are in bytes.
typedef struct hg_cursor {
    int32_t ndim;
    int64_t shape[HG_MAX_DIMS];
    int64_t bstrides[HG_MAX_DIMS];
    int64_t idx[HG_MAX_DIMS];
    unsigned char* p;   // the current element
} hg_cursor;

// Starts at C-order element `start` (0 <= start < numel) of v.
void hg_cursor_init(hg_cursor* cur, const hg_host_view* v, int64_t start);
// Moves to the next element in C order (undefined past the last one).
static inline void hg_cursor_next(hg_cursor* cur) {
    for (int32_t d = cur->ndim - 1; d >= 0; d--) {
        cur->p += cur->bstrides[d];
        if (++cur->idx[d] < cur->shape[d]) return;
        cur->p -= cur->bstrides[d] * cur->shape[d];
        cur->idx[d] = 0;
    }
}

// Merges dims that are walked as one (stride[i] == stride[i+1] * shape[i+1]) and drops size-1
// dims; the C-order sequence of elements stays the same. Only for a single view walked alone.
void hg_view_coalesce(hg_host_view* v);

// Runs fn(ctx, begin, end) over [0, n) split into contiguous chunks, one per worker of the
// executor's pool; at most n / grain workers (at least 1, which runs inline).
typedef void (*hg_range_fn)(void* ctx, int64_t begin, int64_t end);
hg_status hg_for_range(hg_op_ctx* c, int64_t n, int64_t grain, hg_range_fn fn, void* ctx);

// dst (dtype dd) = src (dtype sd) converted with the op library's rules (hg_cast, docs/isa.md
// cvt): int -> int wraps, float -> int truncates and saturates (NaN -> 0), to bool is != 0,
// others round to nearest even. Equal dtypes copy the bytes (NaN payloads kept).
void hg_convert_elem(hg_dtype dd, void* dst, hg_dtype sd, const void* src);

// Elements [b, e) in C order of src into the same elements of dst (same shape; dtypes may
// differ: hg_convert_elem). Walks the innermost dim as a strided run.
void hg_copy_range(const hg_host_view* dst, const hg_host_view* src, int64_t b, int64_t e);

// Copies one element of es bytes (1, 2, 4 or 8).
static inline void hg_copy_elem(unsigned char* d, const unsigned char* s, size_t es) {
    switch (es) {
    case 1: *d = *s; break;
    case 2: { uint16_t v; memcpy(&v, s, 2); memcpy(d, &v, 2); break; }
    case 4: { uint32_t v; memcpy(&v, s, 4); memcpy(d, &v, 4); break; }
    default: { uint64_t v; memcpy(&v, s, 8); memcpy(d, &v, 8); break; }
    }
}

#endif
