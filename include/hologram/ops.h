// hologram/ops.h — part of libhologram's public header: the op library on tensor views
// (elementwise, reductions, norms, matmul, losses, data ops, random, the flat seed forms).
// Include <hologram.h>, which includes every part; the conventions at its top (errors,
// handles, ownership, thread safety) apply here.
#ifndef HOLOGRAM_OPS_H
#define HOLOGRAM_OPS_H

#include "hologram/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Ops (numpy semantics) on tensor views. Reference: docs/ops.md.
//
//     hg_tensor a, b, c = {0};                       // c.buffer.handle == 0: "allocate for me"
//     hg_tensor_from_buffer(buf_a, 2, (int64_t[]){64, 128}, &a);
//     hg_tensor_from_buffer(buf_b, 1, (int64_t[]){128}, &b);
//     hg_binary(HG_BINARY_ADD, &a, &b, &c);          // broadcast (64,128) + (128,) -> (64,128)
//     ...  hg_buffer_destroy(c.buffer);
//
// Conventions shared by every op below:
// - Inputs are any strided views (zero and negative strides too); they are only read.
// - `out` is in/out. If out->buffer.handle == 0 the op allocates a C-contiguous buffer of the
//   result dtype and shape on the inputs' executor and stores the tensor in *out (the caller
//   then owns out->buffer and releases it with hg_buffer_destroy). Otherwise *out names an
//   existing tensor the result is written into: its shape must equal the result shape; its dtype
//   may differ from the result dtype when numpy's "same_kind" casting allows it (the result is
//   computed in the result dtype and converted once on store).
// - Overlap (numpy's rule): out may share memory with any input - the same buffer or two
//   buffers wrapping the same memory - and the result is as if every input were read before
//   anything is written (an overlapping input is copied first; out exactly an input's view
//   runs in place where the op reads each element before writing it). A failing op writes
//   nothing.
// - All tensors of one call must live on one executor (HG_ERR_INVALID_ARGUMENT otherwise).
// - dtypes: every numeric dtype where numpy defines the op; f16 and bf16 are computed in f32
//   and rounded once. Type promotion follows numpy (hg_result_type; bf16 with f16 gives f32,
//   bf16 with an integer gives bf16). Unsupported dtype for an op: HG_ERR_DTYPE_MISMATCH.
// - Each call is compiled once per (op, dtypes, shapes, layout class, backend) and the plan is
//   cached on the executor, so repeated calls cost little more than the work.
// ---------------------------------------------------------------------------------------------

// numpy's result_type of two dtypes (bool < ints < floats; u64 with a signed int gives f64).
HG_API hg_status hg_result_type(hg_dtype a, hg_dtype b, hg_dtype* out);

typedef enum hg_unary_op {
    HG_UNARY_NEG = 0,      // -x (bool: refused)
    HG_UNARY_ABS,
    HG_UNARY_SIGN,         // -1, 0, +1 (NaN stays NaN; -0.0 gives -0.0, where numpy 2 gives +0.0)
    HG_UNARY_SQRT,         // float functions: integer and bool inputs give a float result
    HG_UNARY_RSQRT,        //   (numpy's rule: 8-bit and bool -> f16, 16-bit -> f32, else f64)
    HG_UNARY_RECIPROCAL,   // 1/x (integers: computed as numpy's integer reciprocal)
    HG_UNARY_SQUARE,
    HG_UNARY_EXP,
    HG_UNARY_EXPM1,
    HG_UNARY_EXP2,
    HG_UNARY_LOG,
    HG_UNARY_LOG1P,
    HG_UNARY_LOG2,
    HG_UNARY_SIN,
    HG_UNARY_COS,
    HG_UNARY_TANH,
    HG_UNARY_SIGMOID,      // 1 / (1 + exp(-x))
    HG_UNARY_RELU,         // max(x, 0); NaN stays NaN
    HG_UNARY_GELU,         // tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    HG_UNARY_GELU_ERF,     // erf form: 0.5 x (1 + erf(x / sqrt(2)))
    HG_UNARY_SILU,         // x * sigmoid(x)
    HG_UNARY_SOFTPLUS,     // log(1 + exp(x)), computed without overflow
    HG_UNARY_ERF,
    HG_UNARY_FLOOR,        // floor/ceil/round/trunc of integers: the integer itself
    HG_UNARY_CEIL,
    HG_UNARY_ROUND,        // half to even (numpy.round)
    HG_UNARY_TRUNC,
    HG_UNARY_LOGICAL_NOT,  // -> bool
    HG_UNARY_BITWISE_NOT,  // integers and bool
    HG_UNARY_ISNAN,        // -> bool
    HG_UNARY_ISINF,        // -> bool
    HG_UNARY_ISFINITE,     // -> bool
    HG_UNARY_COUNT
} hg_unary_op;

typedef enum hg_binary_op {
    HG_BINARY_ADD = 0,
    HG_BINARY_SUB,
    HG_BINARY_MUL,
    HG_BINARY_DIV,          // true division: integer inputs give f64 (numpy)
    HG_BINARY_FLOOR_DIVIDE, // numpy //: floor of the quotient (integers: x // 0 = 0)
    HG_BINARY_REMAINDER,    // numpy %: sign of the divisor (integers: x % 0 = 0)
    HG_BINARY_POW,          // floats: C pow; integers: a negative exponent is refused (numpy's
                            // ValueError; inside a fused expression, unchecked: it gives 0)
    HG_BINARY_MINIMUM,      // NaN-propagating (numpy.minimum); -0.0 < +0.0 (IEEE 754-2019)
    HG_BINARY_MAXIMUM,
    HG_BINARY_EQ,           // comparisons -> bool
    HG_BINARY_NE,
    HG_BINARY_LT,
    HG_BINARY_LE,
    HG_BINARY_GT,
    HG_BINARY_GE,
    HG_BINARY_LOGICAL_AND,  // -> bool (nonzero = true)
    HG_BINARY_LOGICAL_OR,
    HG_BINARY_LOGICAL_XOR,
    HG_BINARY_BITWISE_AND,  // integers and bool
    HG_BINARY_BITWISE_OR,
    HG_BINARY_BITWISE_XOR,
    HG_BINARY_LEFT_SHIFT,   // integers; shift >= width gives 0 (numpy)
    HG_BINARY_RIGHT_SHIFT,  // arithmetic for signed
    HG_BINARY_COUNT
} hg_binary_op;

// Names ("exp", "floor_divide") and lookup by name.
HG_API const char* hg_unary_op_name(hg_unary_op op);
HG_API const char* hg_binary_op_name(hg_binary_op op);

// A scalar operand with numpy's "weak" promotion (NEP 50, like a Python number): it takes the
// tensor's dtype, except that a float scalar with an integer/bool tensor gives f64 and an
// integer scalar with a bool tensor gives i64.
typedef enum hg_scalar_kind { HG_SCALAR_BOOL = 0, HG_SCALAR_INT, HG_SCALAR_FLOAT, HG_SCALAR_KIND_COUNT } hg_scalar_kind;
typedef struct hg_scalar {
    hg_scalar_kind kind;
    int64_t i;               // BOOL (0/1) and INT
    double f;                // FLOAT
} hg_scalar;
static inline hg_scalar hg_scalar_f(double v) { hg_scalar s = {HG_SCALAR_FLOAT, 0, v}; return s; }
static inline hg_scalar hg_scalar_i(int64_t v) { hg_scalar s = {HG_SCALAR_INT, v, 0.0}; return s; }
static inline hg_scalar hg_scalar_b(int v) { hg_scalar s = {HG_SCALAR_BOOL, v ? 1 : 0, 0.0}; return s; }

HG_API hg_status hg_unary(hg_unary_op op, const hg_tensor* x, hg_tensor* out);
HG_API hg_status hg_binary(hg_binary_op op, const hg_tensor* a, const hg_tensor* b,
                           hg_tensor* out);
// a (op) s, or s (op) a when scalar_first is 1.
HG_API hg_status hg_binary_scalar(hg_binary_op op, const hg_tensor* a, hg_scalar s,
                                  int scalar_first, hg_tensor* out);
// cond ? a : b with broadcasting of all three (cond: any dtype, nonzero = true).
HG_API hg_status hg_where(const hg_tensor* cond, const hg_tensor* a, const hg_tensor* b,
                          hg_tensor* out);
// minimum(maximum(x, lo), hi) as numpy.clip; lo or hi may be NULL (no bound).
HG_API hg_status hg_clip(const hg_tensor* x, const hg_tensor* lo, const hg_tensor* hi,
                         hg_tensor* out);
HG_API hg_status hg_clip_scalar(const hg_tensor* x, hg_scalar lo, hg_scalar hi, hg_tensor* out);
// a*b + c; floats are rounded once (a fused multiply-add), integers wrap.
HG_API hg_status hg_fma(const hg_tensor* a, const hg_tensor* b, const hg_tensor* c,
                        hg_tensor* out);
// Conversion to dtype (cvt semantics, docs/isa.md: float->int truncates and saturates, NaN->0).
// With an existing out, out's dtype must equal dtype.
HG_API hg_status hg_cast(const hg_tensor* x, hg_dtype dtype, hg_tensor* out);

// Reductions over a set of axes. axes == NULL reduces over all axes (numpy axis=None); naxes
// = 0 with axes != NULL reduces over none. Negative axes count from the end; repeats refused.
// keepdims keeps reduced dims as size 1. Result dtypes as numpy: sum/prod of bool and signed
// ints -> i64, unsigned -> u64; mean/var/std of integers -> f64; f16/bf16 accumulate in f32.
// f32 sums accumulate in SIMD partial sums combined in f64 (relative error ~1e-7, not growing
// with n); f64 sums pairwise; var/std in two f64 passes. Empty reductions: sum 0,
// prod 1, mean/var/std NaN, logsumexp -inf; min/max/argmin/argmax of empty refused
// (HG_ERR_INVALID_ARGUMENT, as numpy raises). NaN propagates through min/max; argmin/argmax
// return the first NaN's index like numpy.
typedef enum hg_reduce_op {
    HG_REDUCE_SUM = 0,
    HG_REDUCE_MEAN,
    HG_REDUCE_PROD,
    HG_REDUCE_MIN,
    HG_REDUCE_MAX,
    HG_REDUCE_ARGMIN,      // -> i64; index into the flattened reduced axes (C order)
    HG_REDUCE_ARGMAX,
    HG_REDUCE_VAR,         // ddof 0 (hg_var for others)
    HG_REDUCE_STD,
    HG_REDUCE_LOGSUMEXP,   // stable (max-shifted)
    HG_REDUCE_ANY,         // -> bool
    HG_REDUCE_ALL,         // -> bool
    HG_REDUCE_COUNT
} hg_reduce_op;
HG_API const char* hg_reduce_op_name(hg_reduce_op op);
HG_API hg_status hg_reduce(hg_reduce_op op, const hg_tensor* x, int32_t naxes,
                           const int32_t* axes, int keepdims, hg_tensor* out);
// var/std with numpy's ddof (divisor n - ddof; n - ddof <= 0 gives NaN/inf as numpy).
HG_API hg_status hg_var(const hg_tensor* x, int32_t naxes, const int32_t* axes, int keepdims,
                        double ddof, hg_tensor* out);
HG_API hg_status hg_std(const hg_tensor* x, int32_t naxes, const int32_t* axes, int keepdims,
                        double ddof, hg_tensor* out);

// softmax / log_softmax along axis (floats only; stable for large magnitudes and -inf entries;
// a slice that is all -inf gives NaN, as torch; f32 softmax results below 2^-126 are 0).
HG_API hg_status hg_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out);
HG_API hg_status hg_log_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out);
// Normalization over the last `nnorm` dims (torch's normalized_shape = x's last nnorm sizes).
// weight/bias (shape = those dims) may be NULL. Statistics in f32 (f64 for f64 inputs).
HG_API hg_status hg_layer_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                               const hg_tensor* bias, double eps, hg_tensor* out);
HG_API hg_status hg_rms_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                             double eps, hg_tensor* out);
// hg_layer_norm that also writes the row statistics it normalized with, as torch's
// native_layer_norm returns them: mean and rstd = 1 / sqrt(var + eps), x's dtype, shape x's
// leading dims with the nnorm normalized dims kept as size 1 (each NULL when not wanted). out
// is hg_layer_norm's, bit for bit; the statistics come from the same pass. Rows of no element
// (a normalized dim of size 0) get torch's statistics: mean 0, rstd NaN.
HG_API hg_status hg_layer_norm_stats(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                                     const hg_tensor* bias, double eps, hg_tensor* out,
                                     hg_tensor* mean, hg_tensor* rstd);

// torch.nn.functional.scaled_dot_product_attention (dropout 0): out = softmax(q k^T * scale +
// mask) v over the last two dims. q (..., Hq, L, E), k (..., Hk, S, E), v (..., Hk, S, Ev) of
// one float dtype and rank >= 2, the leading dims equal but for the head dim (rank - 3), where
// Hq may be a multiple of Hk (grouped-query heads, torch's enable_gqa=True: q head h reads k/v
// head h / (Hq / Hk)). mask: NULL, bool (true: attend) or q's dtype (added to the scores),
// broadcastable to (..., Hq, L, S). is_causal: query i attends keys j <= i (torch's top-left
// alignment; not with a mask). scale: NaN for 1 / sqrt(E). A query that attends no key gets a
// row of zeros (torch's). out (..., Hq, L, Ev), q's dtype. lse: NULL, or an existing tensor of
// shape (..., Hq, L), f32 (f64 for f64 inputs), any strides, that receives each query's
// logsumexp of its scaled, masked scores (0 where it attends no key: torch's CPU flash
// kernel's second output, which its backward reads). f32/f64 on host memory run one fused
// kernel that holds a block of query rows' scores at a time (memory linear in S), others the
// decomposition (matmul, softmax, matmul).
HG_API hg_status hg_scaled_dot_product_attention(const hg_tensor* q, const hg_tensor* k,
                                                 const hg_tensor* v, const hg_tensor* mask,
                                                 int is_causal, double scale, hg_tensor* out,
                                                 hg_tensor* lse);

// numpy.matmul: 1-D operands are promoted (and the added dim removed), leading dims broadcast.
// Floats and integers (integers accumulate in their own type, wrapping, as numpy).
HG_API hg_status hg_matmul(const hg_tensor* a, const hg_tensor* b, hg_tensor* out);
// BLAS gemm on 2-D tensors: c = alpha * op(a) @ op(b) + beta * c, op = transpose when trans_*
// is 1. c must exist (it is read when beta != 0; beta == 0 ignores its contents, NaN included);
// a or b overlapping c is read first (the overlap rule above). Float dtypes only (integers:
// use hg_matmul).
HG_API hg_status hg_gemm(int trans_a, int trans_b, double alpha, const hg_tensor* a,
                         const hg_tensor* b, double beta, const hg_tensor* c);
// y = a @ x with a 2-D (m, n) and x 1-D (n): out 1-D (m).
HG_API hg_status hg_matvec(const hg_tensor* a, const hg_tensor* x, hg_tensor* out);

// Losses (floats). reduction: NONE keeps the per-element (per-sample) loss.
typedef enum hg_reduction {
    HG_REDUCTION_NONE = 0, HG_REDUCTION_MEAN, HG_REDUCTION_SUM, HG_REDUCTION_COUNT
} hg_reduction;
HG_API hg_status hg_mse_loss(const hg_tensor* pred, const hg_tensor* target,
                             hg_reduction reduction, hg_tensor* out);
// logits (N, C) or (N, C, d1, ...) or (C); target either class indices (integer dtype, shape
// without the C dim; entries equal to ignore_index are skipped and not counted by MEAN) or class
// probabilities (same shape as logits, float). As torch.nn.functional.cross_entropy.
HG_API hg_status hg_cross_entropy(const hg_tensor* logits, const hg_tensor* target,
                                  int64_t ignore_index, hg_reduction reduction, hg_tensor* out);
// Probabilities in [0, 1] (outside: HG_ERR_INVALID_ARGUMENT naming the first bad value); the
// logs are clamped at -100 as torch does. weight (broadcast to the input) may be NULL.
HG_API hg_status hg_binary_cross_entropy(const hg_tensor* prob, const hg_tensor* target,
                                         const hg_tensor* weight, hg_reduction reduction,
                                         hg_tensor* out);
// Stable form max(x,0) - x*t + log1p(exp(-|x|)) (torch's pos_weight form); weight and
// pos_weight (each broadcast to the input) may be NULL.
HG_API hg_status hg_binary_cross_entropy_with_logits(const hg_tensor* logits,
                                                     const hg_tensor* target,
                                                     const hg_tensor* weight,
                                                     const hg_tensor* pos_weight,
                                                     hg_reduction reduction, hg_tensor* out);

// Gradients: the backward passes of the ops above (hologram_torch's autograd runs on these).
// grad is dL/d(result); every result has the dtype of the forward's input (f16/bf16 computed in
// f32, rounded once) and follows the out rules above. Float dtypes only; the tensors of one
// call share one dtype and the shapes below (HG_ERR_DTYPE_MISMATCH / HG_ERR_SIZE_MISMATCH).
//
// dL/dx of y = op(x) (elementwise, one fused kernel). x is the forward's input, y its result;
// each op reads what its formula needs and the other may be NULL: x for abs, square, log,
// log1p, log2, sin, cos, relu (0 at x = 0), erf, softplus, silu, gelu; y for sqrt, rsqrt,
// reciprocal, exp, expm1, exp2, tanh, sigmoid; both for gelu_erf (Phi(x) = y / x); neither for
// neg, sign and the rounding ops (zero gradient). Other ops: HG_ERR_INVALID_ARGUMENT.
HG_API hg_status hg_activation_backward(hg_unary_op op, const hg_tensor* grad,
                                        const hg_tensor* x, const hg_tensor* y, hg_tensor* out);
// From y = softmax(x, axis): out = y * (grad - sum(grad * y, axis)); from y = log_softmax(x,
// axis): out = grad - exp(y) * sum(grad, axis). grad and y of one shape.
HG_API hg_status hg_softmax_backward(const hg_tensor* grad, const hg_tensor* y, int32_t axis,
                                     hg_tensor* out);
HG_API hg_status hg_log_softmax_backward(const hg_tensor* grad, const hg_tensor* y, int32_t axis,
                                         hg_tensor* out);
// Gradients of hg_layer_norm / hg_rms_norm (same x, nnorm, weight and eps as the forward; the
// statistics are recomputed from x in f32, f64 for f64). grad_x: x's shape; grad_weight and
// grad_bias: the normalized dims (sum over the other dims of grad * xhat and of grad), each
// NULL when not wanted (grad_weight is computed even when weight is NULL).
HG_API hg_status hg_layer_norm_backward(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm,
                                        const hg_tensor* weight, double eps, hg_tensor* grad_x,
                                        hg_tensor* grad_weight, hg_tensor* grad_bias);
HG_API hg_status hg_rms_norm_backward(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm,
                                      const hg_tensor* weight, double eps, hg_tensor* grad_x,
                                      hg_tensor* grad_weight);
// hg_layer_norm_backward from given statistics (torch's native_layer_norm_backward): xhat =
// (x - mean) rstd with mean and rstd as given (any values; float, shape x's leading dims with
// the normalized dims as size 1, as hg_layer_norm_stats writes them); eps is not needed.
HG_API hg_status hg_layer_norm_backward_stats(const hg_tensor* grad, const hg_tensor* x,
                                              int32_t nnorm, const hg_tensor* mean,
                                              const hg_tensor* rstd, const hg_tensor* weight,
                                              hg_tensor* grad_x, hg_tensor* grad_weight,
                                              hg_tensor* grad_bias);
// Gradients of hg_scaled_dot_product_attention (torch's
// _scaled_dot_product_flash_attention_for_cpu_backward): grad_out is dL/dout; q, k, v, mask,
// is_causal and scale as the forward's; out and lse its results (lse: (..., Hq, L), f32, f64
// for f64 inputs: the probabilities are exp(score - lse), so a query that attended no key,
// lse 0 and every score -inf, passes no gradient). grad_q takes q's shape, grad_k and grad_v
// k's and v's (grouped heads: the sum over the query heads that read them); all three q's
// dtype, existing or allocated as the out rules above say. f32/f64 on host memory run one
// fused kernel per key/value head (a block of query rows' scores at a time), others the
// decomposition.
HG_API hg_status hg_scaled_dot_product_attention_backward(
    const hg_tensor* grad_out, const hg_tensor* q, const hg_tensor* k, const hg_tensor* v,
    const hg_tensor* out, const hg_tensor* lse, const hg_tensor* mask, int is_causal,
    double scale, hg_tensor* grad_q, hg_tensor* grad_k, hg_tensor* grad_v);
// Gradient of hg_cross_entropy wrt the logits, the softmax fused in: (softmax(logits) -
// onehot(target)) along the class dim, times grad (a 0-d grad for MEAN/SUM, the per-sample
// loss's shape for NONE); rows whose target is ignore_index get 0 and MEAN divides by the
// rows counted. Targets as hg_cross_entropy (class indices, or probabilities: softmax *
// sum(target along the class dim) - target).
HG_API hg_status hg_cross_entropy_backward(const hg_tensor* grad, const hg_tensor* logits,
                                           const hg_tensor* target, int64_t ignore_index,
                                           hg_reduction reduction, hg_tensor* out);

// Optimizers. One update of a parameter, in place, with its state tensors (same dtype and
// shape as param; grad read only; the written tensors must not share memory).
typedef struct hg_adam_options {
    double lr, beta1, beta2, eps, weight_decay;   // torch.optim.Adam's meanings and defaults
    int64_t step;                 // the step being taken, counted from 1 (bias corrections)
    int decoupled_weight_decay;   // 1: AdamW (p *= 1 - lr * weight_decay); 0: Adam (L2 in grad)
    int amsgrad, maximize;
} hg_adam_options;
// Adam / AdamW as torch.optim.Adam's per-tensor update computes it (same steps and roundings;
// docs/ops_gradients.md "The optimizer step"): exp_avg and exp_avg_sq are the moments (zeros before step 1);
// max_exp_avg_sq is needed with amsgrad only (NULL otherwise). lr, eps, weight_decay >= 0,
// betas in [0, 1), step >= 1, else HG_ERR_INVALID_ARGUMENT with nothing written.
HG_API hg_status hg_adam_step(const hg_adam_options* options, const hg_tensor* param,
                              const hg_tensor* grad, const hg_tensor* exp_avg,
                              const hg_tensor* exp_avg_sq, const hg_tensor* max_exp_avg_sq);

// Data. These write into an existing out (no allocation: they have no input to take an
// executor from).
// An integer value must fit an integer dtype exactly (HG_ERR_OUT_OF_RANGE); a float value into
// an integer dtype converts with cvt rules.
HG_API hg_status hg_fill(const hg_tensor* out, hg_scalar value);
// out[i] = start + i * step over the elements in C order (computed in f64, then converted).
HG_API hg_status hg_arange(const hg_tensor* out, double start, double step);
// Counter-based random numbers (Philox-4x32-10): element i (C order of out) gets the numbers of
// counter (offset + i) under key seed, so results do not depend on threads or backend.
// uniform: [low, high); normal: Box-Muller, mean + std * N(0, 1). Float dtypes only.
HG_API hg_status hg_random_uniform(const hg_tensor* out, uint64_t seed, uint64_t offset,
                                   double low, double high);
HG_API hg_status hg_random_normal(const hg_tensor* out, uint64_t seed, uint64_t offset,
                                  double mean, double std);
// Dropout (ATen's native_dropout) in one pass. Element i (C order of x) is kept iff its 32-bit
// word w >= ceil(p * 2^32) (probability 1 - p, to 2^-32), where w is word (i % 64) / 16 of
// Philox counter offset + 16 * (i / 64) + i % 16 under seed (the stream of docs/ops_data.md
// "Dropout": the same on every backend and thread count). out = x * scale where kept, x * 0
// where dropped (NaN for an infinite or NaN x, as ATen), scale = 1 / (1 - p) (0 for p = 1)
// rounded to f32 for f16/bf16/f32. x float; out optional (x's dtype and shape; may be x);
// mask NULL or an existing bool tensor of x's shape, not overlapping x or out: 1 where kept.
// p outside [0, 1]: HG_ERR_INVALID_ARGUMENT.
HG_API hg_status hg_dropout(const hg_tensor* x, double p, uint64_t seed, uint64_t offset,
                            hg_tensor* out, const hg_tensor* mask);
// ATen's native_dropout_backward: out = grad * scale where mask, grad * 0 elsewhere (scale
// rounded as hg_dropout's). grad float; mask bool of grad's shape; out optional (grad's dtype).
HG_API hg_status hg_dropout_backward(const hg_tensor* grad, const hg_tensor* mask, double scale,
                                     hg_tensor* out);
// numpy.concatenate along axis (same dtype, equal other dims; n >= 1).
HG_API hg_status hg_concat(int32_t n, const hg_tensor* inputs, int32_t axis, hg_tensor* out);
// numpy.take along one axis / torch.index_select (index: integer 1-D; negative indices count
// from the end; out of range: HG_ERR_OUT_OF_RANGE naming it). Embedding lookup = axis 0.
HG_API hg_status hg_index_select(const hg_tensor* x, int32_t axis, const hg_tensor* index,
                                 hg_tensor* out);
// torch.gather: out[i][j][k] = x[index[i][j][k]][j][k] for axis 0 (index has x's ndim; out
// has index's shape; negative indices count from the end, as numpy.take_along_axis).
HG_API hg_status hg_gather(const hg_tensor* x, int32_t axis, const hg_tensor* index,
                           hg_tensor* out);
// Accumulate in place (the backward of index_select / embedding and of gather), out and src of
// one dtype (not bool); src overlapping out is read first (numpy.add.at); indices as above,
// range-checked before anything is added.
// torch.Tensor.index_add_: out[..., index[i], ...] += src[..., i, ...] along axis (index 1-D;
// src is out's shape with len(index) along axis). Repeated indices add up.
HG_API hg_status hg_index_add(const hg_tensor* out, int32_t axis, const hg_tensor* index,
                              const hg_tensor* src);
// torch.Tensor.scatter_add_: out[index[i][j]][j] += src[i][j] for axis 0 (index, src and out of
// equal ndim; index no larger than src on any dim, nor than out on any but axis).
HG_API hg_status hg_scatter_add(const hg_tensor* out, int32_t axis, const hg_tensor* index,
                                const hg_tensor* src);
// On a device (CUDA) the adds are atomic, so float sums may differ from the CPU's in the last
// bits and between runs; dtypes there: f32, f64, i32, u32, i64, u64 (others: HG_ERR_UNSUPPORTED).


// The flat forms of the product documents: contiguous buffers, n elements from the start
// (buffers must hold at least n; outputs may alias inputs exactly). Same dtype for all buffers.
HG_API hg_status hg_vector_add(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_sub(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_mul(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_div(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_min(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_max(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_abs(hg_buffer a, hg_buffer c, size_t n);
HG_API hg_status hg_vector_neg(hg_buffer a, hg_buffer c, size_t n);
HG_API hg_status hg_vector_relu(hg_buffer a, hg_buffer c, size_t n);
HG_API hg_status hg_vector_clip(hg_buffer a, hg_buffer c, double lo, double hi, size_t n);
HG_API hg_status hg_scalar_add(hg_buffer a, hg_buffer c, double s, size_t n);
HG_API hg_status hg_scalar_mul(hg_buffer a, hg_buffer c, double s, size_t n);
HG_API hg_status hg_vector_sigmoid(hg_buffer in, hg_buffer out, size_t n);
HG_API hg_status hg_vector_tanh(hg_buffer in, hg_buffer out, size_t n);
HG_API hg_status hg_vector_gelu(hg_buffer in, hg_buffer out, size_t n);
HG_API hg_status hg_vector_softmax(hg_buffer in, hg_buffer out, size_t n);
// out[0] = reduction of in[0..n) (out holds >= 1 element of in's dtype; value also in *result
// when result != NULL, converted to double).
HG_API hg_status hg_reduce_sum(hg_buffer in, hg_buffer out, size_t n, double* result);
HG_API hg_status hg_reduce_min(hg_buffer in, hg_buffer out, size_t n, double* result);
HG_API hg_status hg_reduce_max(hg_buffer in, hg_buffer out, size_t n, double* result);
// Mean losses over n elements into out[0] (and *result).
HG_API hg_status hg_mse_loss_flat(hg_buffer pred, hg_buffer target, hg_buffer out, size_t n,
                                  double* result);
// pred: probabilities; -(1/n) sum t*log(p) (log clamped at -100).
HG_API hg_status hg_cross_entropy_loss_flat(hg_buffer pred, hg_buffer target, hg_buffer out,
                                            size_t n, double* result);
HG_API hg_status hg_binary_cross_entropy_loss_flat(hg_buffer pred, hg_buffer target,
                                                   hg_buffer out, size_t n, double* result);
// Row-major C[m x n] = A[m x k] . B[k x n] (argument order of the product documents).
HG_API hg_status hg_gemm_flat(hg_buffer a, hg_buffer b, hg_buffer c, size_t m, size_t n,
                              size_t k);
// y[m] = A[m x n] . x[n]
HG_API hg_status hg_matvec_flat(hg_buffer a, hg_buffer x, hg_buffer y, size_t m, size_t n);

#ifdef __cplusplus
}
#endif
#endif  // HOLOGRAM_OPS_H
