// Internal: what the row gradients (softmax_backward.c, norm_backward.c) share: row sums of
// contiguous f32 data in 16 f32 lanes folded in f64 (a serial f64 chain ran at one element per
// 4 cycles), and the general path's precondition test.
#ifndef HG_OPS_ROWS_GRAD_H
#define HG_OPS_ROWS_GRAD_H
#include <stdint.h>
#include <string.h>
#include "hologram.h"

typedef float hg_rg_v8f __attribute__((vector_size(32)));

// sum of a[i] * b[i] (b NULL: sum of a[i]) over n contiguous floats.
static inline double hg_rg_dot_f32(const float* a, const float* b, int64_t n) {
    hg_rg_v8f s0 = {0}, s1 = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        hg_rg_v8f a0, a1, b0, b1;
        memcpy(&a0, a + i, 32);
        memcpy(&a1, a + i + 8, 32);
        if (b) {
            memcpy(&b0, b + i, 32);
            memcpy(&b1, b + i + 8, 32);
            a0 *= b0;
            a1 *= b1;
        }
        s0 += a0;
        s1 += a1;
    }
    s0 += s1;
    double r = 0.0;
    for (int k = 0; k < 8; k++) r += (double)s0[k];
    for (; i < n; i++) r += b ? (double)a[i] * (double)b[i] : (double)a[i];
    return r;
}

static inline double hg_rg_dot_f64(const double* a, const double* b, int64_t n) {
    double s[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++) s[k] += b ? a[i + k] * b[i + k] : a[i + k];
    for (; i < n; i++) s[0] += b ? a[i] * b[i] : a[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

// 1 when t is C-contiguous (size-1 dims may have any stride).
static inline int hg_rg_c_contig(const hg_tensor* t) {
    int64_t ex = 1;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != ex) return 0;
        ex *= t->shape[d];
    }
    return 1;
}

#endif
