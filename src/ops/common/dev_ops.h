// Internal: the op library's device implementations (backends whose memory is not
// host-visible). Each is called by the op's entry point after the same argument checks, where
// the dispatch (op_dispatch.h) routes the op's family to the device, with the same contract as
// the host version it stands for.
#ifndef HG_OPS_DEVICE_DEV_OPS_H
#define HG_OPS_DEVICE_DEV_OPS_H
#include <stdint.h>
#include "hologram.h"
#include "ops/common/op_common.h"

// hg_reduce_into (ops/reduce/reduce.h) on the device (dev_reduce.c).
hg_status hg_dev_reduce_into(hg_op_ctx* c, hg_reduce_op op, const hg_tensor* x,
                             uint32_t axes_mask, double ddof, const hg_tensor* out);

// Row-wise ops (dev_rows.c): softmax / log_softmax along the axis first_inner, layer_norm /
// rms_norm over the dims from first_inner on (weight and bias: NULL or of those dims' shape, any
// float dtype; bias only for layer_norm). x and out checked by the caller (x float, out of x's
// shape, dtype x's or a float one); eps >= 0.
typedef enum hg_dev_row_op {
    HG_DEV_SOFTMAX, HG_DEV_LOG_SOFTMAX, HG_DEV_LAYER_NORM, HG_DEV_RMS_NORM
} hg_dev_row_op;
hg_status hg_dev_rows(hg_op_ctx* c, hg_dev_row_op op, const hg_tensor* x, int32_t first_inner,
                      const hg_tensor* weight, const hg_tensor* bias, double eps,
                      const hg_tensor* out);

// A matrix product's layout (element strides; batch dims with each operand's stride, 0 where
// it broadcasts): for each batch index, O[i, j] = sum_p A[i, p] B[p, j].
typedef struct hg_dev_mm {
    int64_t m, n, k;
    int64_t a_rs, a_cs, b_rs, b_cs, o_rs, o_cs;
    int32_t nbatch;
    int64_t bshape[HG_MAX_DIMS], a_bs[HG_MAX_DIMS], b_bs[HG_MAX_DIMS], o_bs[HG_MAX_DIMS];
} hg_dev_mm;
// The product as a tiled ISA kernel (dev_matmul.c), computed in rt (f32 for f16/bf16; integers
// wrap, bool is OR of ANDs), rounded to rt, then stored as out's dtype. gemm: out = alpha * t +
// beta * out in double instead (alpha == 0 ignores the product, beta == 0 never reads out).
// Tensors supply buffers, offsets and dtypes; out must not overlap a or b.
hg_status hg_dev_matmul(hg_op_ctx* c, const hg_dev_mm* p, const hg_tensor* a, const hg_tensor* b,
                        hg_dtype rt, const hg_tensor* out, int gemm, double alpha, double beta);

// Data ops (dev_data.c), each after the host entry point's checks. fill: value_bits is the
// value's bytes in out's dtype (little-endian).
hg_status hg_dev_fill(hg_op_ctx* c, const hg_tensor* out, uint64_t value_bits);
hg_status hg_dev_arange(hg_op_ctx* c, const hg_tensor* out, double start, double step);
// dst = src converted to dst's dtype (cvt rules); equal shapes, no overlap.
hg_status hg_dev_copy_cast(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* src);
// index_select (gather = 0: idx holds one resolved index per position along axis) or gather
// (idx holds one per element of out, C order); nidx indices, already range-checked and >= 0.
// via_temp: out is x itself.
hg_status hg_dev_index(hg_op_ctx* c, const hg_tensor* x, int32_t axis, const int64_t* idx,
                       int64_t nidx, int gather, const hg_tensor* out, int via_temp);
// acc[..., idx, ...] += src[...] with atomic adds (index_add: idx per position along axis of
// src; scatter_add: one per element of src, C order); equal dtypes with an atomic add (f32, f64,
// i32, u32, i64, u64), indices range-checked and >= 0, no overlap.
hg_status hg_dev_index_add(hg_op_ctx* c, const hg_tensor* acc, int32_t axis, const int64_t* idx,
                           int64_t nidx, int scatter, const hg_tensor* src);

// dst (bool, src's shape) = !(0 <= src <= 1), NaN included.
hg_status hg_dev_flag_not_unit(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* src);

// random uniform / normal (dev_random.c), after the host entry point's checks, with the CPU's
// parameters (random.c).
hg_status hg_dev_random(hg_op_ctx* c, const hg_tensor* out, uint64_t seed, uint64_t offset,
                        int normal, double a, double scale, double lo_q, double hi_q);

// Dropout (dev_random.c, dropout.c's mask layout), after the host entry points' checks: the
// mask (when given) and out = x scaled where kept; the backward copies grad into out (unless
// out is grad) and scales it in place where mask.
hg_status hg_dev_dropout(hg_op_ctx* c, const hg_tensor* x, const hg_tensor* out,
                         const hg_tensor* mask, uint64_t seed, uint64_t offset, uint64_t thr,
                         double scale);
hg_status hg_dev_dropout_backward(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* mask,
                                  const hg_tensor* out, double scale);

// Losses (dev_loss.c): the composite layer's device overrides (src/composite/loss_dev.c), after
// the entries' checks. Each loss in f64 is rounded to rt and stored in out (raw handle 0:
// reduction NONE), or stored as it is in raw (f64, C-contiguous over the loss shape) for the
// caller to sum. Elementwise ones: in = {x, t, w, pw} (w, pw may be NULL) with their strides
// broadcast onto the loss shape (nd, shape).
typedef enum hg_dev_loss { HG_DEV_MSE, HG_DEV_BCE, HG_DEV_BCE_LOGITS } hg_dev_loss;
hg_status hg_dev_ew_loss(hg_op_ctx* c, hg_dev_loss kind, const hg_tensor* const* in,
                         int64_t st[4][HG_MAX_DIMS], int32_t nd, const int64_t* shape,
                         hg_dtype rt, hg_buffer raw, const hg_tensor* out);
// Cross entropy over class dim cdim; target indices (checked already) or probabilities. cnt
// (raw only; handle 0: none): 1 per sample not ignored, 0 per ignored one (f64, C order).
hg_status hg_dev_cross_entropy(hg_op_ctx* c, const hg_tensor* x, const hg_tensor* t, int32_t cdim,
                               int probs, int64_t ignore_index, hg_dtype rt, hg_buffer raw,
                               hg_buffer cnt, const hg_tensor* out);
// out = (mean: sums[0] / divisor, the divisor sums[1] when counted else n; else sums[0])
// rounded to rt, then stored as out's dtype (sums: f64 on the device).
hg_status hg_dev_loss_finish(hg_op_ctx* c, hg_buffer sums, int mean, int counted, double n,
                             hg_dtype rt, const hg_tensor* out);

#endif
