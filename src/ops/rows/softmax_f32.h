// Internal: the f32 kernels of softmax / log_softmax, one set per CPU level (softmax_f32.c:
// portable, and the level dispatch; softmax_f32_avx2.c; softmax_f32_avx512.c). softmax.c runs
// them on contiguous f32 slices and on f16/bf16/strided slices gathered into f32.
//
// What every kernel of a level computes, so that a slice gives the same bits on every path of
// that level (contiguous rows, strided rows, in place):
// - m = the max of the slice (NaN anywhere gives NaN); d = x - m; e = hg_sm_expf(d).
// - Slices (hg_sm_slice_f32) and contiguous rows longer than 16: the sum of e in W f32 lanes
//   (W = 16 on AVX-512, else 8) over blocks of 256 elements, element k of a block into lane
//   k % W in order; each block's lanes folded in f64 by hg_sm_fold_lanes; the blocks added in
//   f64. softmax: e * (float)(1 / sum); log_softmax: d - log((float)sum) with vmath.h's f32 log.
// - Contiguous rows of at most 16 (hg_sm_rows_f32): the sum in f32 as _mm512_reduce_add_ps adds
//   16 lanes padded with +0 (lanes j + 8, then j + 4, then (0 + 2) + (1 + 3)); softmax
//   e * (1.0f / sum); log_softmax d - the f32 log of the sum. The same bits on every level.
#ifndef HG_OPS_ROWS_SOFTMAX_F32_H
#define HG_OPS_ROWS_SOFTMAX_F32_H
#include <stdint.h>
#include "base/vmath.h"

// The library's one f32 exp (base/vmath.h, <= 2 ULP), with results below 2^-126
// (x < -87.33654) flushed to 0: softmax values that small are noise next to a sum >= 1, and the
// flush keeps the vector loops free of the subnormal path. Inputs below the bound enter the
// exp at the bound: their 2^n scaling would underflow, and an underflowing multiply takes a
// microcode assist on AMD cores (the -inf padding lanes of a row of 17 doubled its time).
// Branch-free, so loops over it vectorize.
static inline float hg_sm_expf(float x) {
    float y = hg_vm_exp_f32(x < -87.33654f ? -87.33654f : x);
    return x < -87.33654f ? 0.0f : y;
}

// W lane sums (W = 8 or 16) in f64, as a tree (lanes j + W/2 first): a serial chain of f64
// adds was a fifth of a row of 16.
static inline __attribute__((always_inline)) double hg_sm_fold_lanes(const float* p, int W) {
    double d[16];
    for (int j = 0; j < W; j++) d[j] = (double)p[j];
    for (int w = W / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) d[j] += d[j + w];
    return d[0];
}

// log_softmax's last step for n <= 16 rows of L that hold d: y -= the f32 log of each row's
// sum, the logs vectorized over the rows (libm's f64 log per row was 14% of a row of 17).
static inline __attribute__((always_inline)) void hg_sm_log_rows(float* y, int64_t L,
                                                                const double* s, int n) {
    float ls[16];
    for (int i = 0; i < 16; i++) ls[i] = i < n ? (float)s[i] : 1.0f;
    for (int i = 0; i < 16; i++) ls[i] = hg_vm_log_f32(ls[i]);
    for (int i = 0; i < n; i++)
        for (int64_t l = 0; l < L; l++) y[i * L + l] -= ls[i];
}

// One contiguous slice of n >= 1 (t may be y).
void hg_sm_slice_f32(const float* t, float* y, int64_t n, int take_log);
// rows contiguous rows of L >= 1 laid end to end (row r at x + r * L; x may be y).
void hg_sm_rows_f32(const float* x, float* y, int64_t rows, int64_t L, int take_log);

// x[i] = hg_sm_expf(x[i] - c) for i < n (probabilities from a given logsumexp: the attention's
// backward), vectorized at the CPU's level, the same bits on every level.
void hg_sm_exp_shift_f32(float* x, int64_t n, float c);

// The level kernels behind them (x86-64 GCC builds): rows of L <= 64 only.
void hg_sm_slice_f32_avx2(const float* t, float* y, int64_t n, int take_log);
void hg_sm_rows_f32_avx2(const float* x, float* y, int64_t rows, int64_t L, int take_log);
void hg_sm_slice_f32_avx512(const float* t, float* y, int64_t n, int take_log);
void hg_sm_rows_f32_avx512(const float* x, float* y, int64_t rows, int64_t L, int take_log);
void hg_sm_exp_shift_f32_avx2(float* x, int64_t n, float c);
void hg_sm_exp_shift_f32_avx512(float* x, int64_t n, float c);

#endif
