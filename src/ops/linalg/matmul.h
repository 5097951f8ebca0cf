// Internal: numpy.matmul for the op library and the graph compiler, and the kernels behind it.
//
//     int32_t nd;  int64_t shape[HG_MAX_DIMS];
//     hg_matmul_shape(&c, a->ndim, a->shape, b->ndim, b->shape, &nd, shape);   // checks shapes
//     ... out checked / allocated with that shape, dtype hg_result_type(a, b) ...
//     hg_matmul_into(&c, a, b, out);
//
// f32 goes to the backend's sgemm slot without copies whenever each operand has a unit stride
// in one of its last two dims (transpose flags and leading dimensions describe the rest);
// f16/bf16 are converted to f32, multiplied by sgemm and rounded once; f64 goes to the
// backend's dgemm_strided slot (the CPU's blocked DGEMM, backends/cpu/gemm); integers and bool accumulate in the result dtype and wrap as numpy.
// docs/ops_linalg_losses.md has the details and measurements.
#ifndef HG_OPS_MATMUL_H
#define HG_OPS_MATMUL_H
#include <stdint.h>
#include "hologram.h"
#include "ops/common/op_common.h"

// numpy.matmul's shape rule: 1-D operands are promoted ((k) -> (1, k) for a, (k, 1) for b) and
// the added dim removed from the result; leading (batch) dims broadcast. 0-d operands,
// unequal inner dims and batch dims that do not broadcast are refused with a message naming
// both shapes. out_shape holds HG_MAX_DIMS entries.
hg_status hg_matmul_shape(hg_op_ctx* c, int32_t na, const int64_t* a, int32_t nb, const int64_t* b,
                          int32_t* out_ndim, int64_t* out_shape);

// out = a @ b. Inputs and out are checked by the caller (live, one executor, out's shape from
// hg_matmul_shape, out's dtype hg_result_type(a, b) or a same_kind cast target of it); an
// out that overlaps a or b is computed into scratch first (numpy's overlap rule). The result
// is computed in the result dtype and converted once on store. Fails only on a backend without
// host access or sgemm, or when memory runs out (scratch is allocated before anything is
// written; the f64 kernel's pack buffers are allocated per product, so a batched f64 call may
// fail part-way on exhaustion).
hg_status hg_matmul_into(hg_op_ctx* c, const hg_tensor* a, const hg_tensor* b,
                         const hg_tensor* out);

// ---- kernels (matmul_int.c; f64 products: the backend's dgemm_strided) ----
// C = A * B for an integer or bool dtype dt: A (m x k), B (k x n) and C (m x n) are
// C-contiguous arrays of dt; products and sums wrap in dt's width (bool: OR of ANDs).
hg_status hg_mm_int(hg_op_ctx* c, hg_dtype dt, int64_t m, int64_t n, int64_t k, const void* a,
                    const void* b, void* out);

#endif
