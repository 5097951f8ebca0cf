// Internal: reductions (hg_reduce, hg_var, hg_std) as library kernels on host-visible backends,
// for the eager ops and for the graph compiler, which lowers reduction nodes to hg_reduce_into.
//
//     hg_dtype rt;  hg_reduce_dtype(HG_REDUCE_SUM, x->dtype, &rt);
//     ... hg_op_input(&c, x, ...); hg_op_output(&c, out, rt, ndim, shape, 1); ...
//     s = hg_reduce_into(&c, HG_REDUCE_SUM, x, mask, 0.0, out);
//
// Layout handling: dims of size 1 are dropped, negative strides flipped (except for
// argmin/argmax, whose index is in C order), dims sorted by stride and merged where contiguous.
// Then either the innermost dim is reduced ("runs": each output reduces contiguous runs) or it is
// kept ("rows": each reduced index adds a row of x into a vector of partials), so memory is
// walked in order both for reductions over the last and over the first axis.
#ifndef HG_OPS_REDUCE_H
#define HG_OPS_REDUCE_H
#include <stdint.h>
#include "hologram.h"
#include "ops/common/op_common.h"

// Result dtype of op on x (numpy): sum/prod of bool and signed ints -> i64, unsigned -> u64;
// mean/var/std/logsumexp of bool and ints -> f64; min/max keep the dtype; argmin/argmax -> i64;
// any/all -> bool; floats keep their dtype otherwise. HG_ERR_INVALID_ARGUMENT for a bad op,
// HG_ERR_DTYPE_MISMATCH for a bad dtype.
hg_status hg_reduce_dtype(hg_reduce_op op, hg_dtype x, hg_dtype* out);

// out = op over the dims of x in axes_mask (bit i = dim i). x and out were checked by the caller
// (hg_op_input / hg_op_output); out has x's shape with the reduced dims removed (out->ndim <
// x->ndim) or kept as size 1 (out->ndim == x->ndim); out's dtype is the result dtype or one
// reachable from it by same_kind casting (integers to narrower integers wrap, as numpy's cast).
// ddof is used by VAR and STD only. Empty min/max/argmin/argmax with a non-empty out give
// HG_ERR_INVALID_ARGUMENT. Runs on the executor's threads; writes out only on success.
hg_status hg_reduce_into(hg_op_ctx* c, hg_reduce_op op, const hg_tensor* x, uint32_t axes_mask,
                         double ddof, const hg_tensor* out);

// Sum of n contiguous floats: 32 f32 lanes over blocks of 512, block partials added in f64
// (relative error about 16 f32 ulps, independent of n). Used by softmax and norms too.
double hg_reduce_sum_f32(const float* x, int64_t n);
// out[r] = hg_reduce_sum_f32(x + r * ld, n) for r < rows, bit for bit: the rows' dependency
// chains overlap in the core (one call per row leaves each row's add chain and final fold to
// run alone).
void hg_reduce_sum_rows_f32(const float* x, int64_t ld, int64_t rows, int64_t n, double* out);
// f[c] += (double)(sum over the nrows (<= 16) rows rp[g][c]) for c < kc: the rows added 4 at a
// time in f32 ((x0 + x1) + (x2 + x3), 4 memory streams), the block sum into f64; tmp holds kc
// floats of scratch. Built for AVX2 and AVX-512 (the same additions, the same bits): the
// baseline build adds only 4 floats per instruction.
void hg_reduce_colsum_block_f32(const float* const* rp, int nrows, int64_t kc, float* tmp,
                                double* f);
// Sum of n contiguous doubles, blocked pairwise (16 lanes, blocks of 128, binary cascade).
double hg_reduce_sum_f64(const double* x, int64_t n);

#endif
