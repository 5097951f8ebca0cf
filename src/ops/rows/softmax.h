// Internal: softmax / log_softmax as a library kernel on host-visible backends, for the eager ops
// and for the graph compiler (which lowers softmax nodes to hg_softmax_into).
//
//     s = hg_softmax_into(&c, x, axis, /*log=*/0, out);
//
// Each slice along the axis is max-shifted: y = exp(x - max) / sum, log form (x - max) - log(sum),
// computed in f32 for f16/bf16/f32 (sums and log as softmax_f32.h states) and in f64 for f64.
#ifndef HG_OPS_SOFTMAX_H
#define HG_OPS_SOFTMAX_H
#include <stdint.h>
#include "hologram.h"
#include "ops/common/op_common.h"

// x: a float tensor checked by the caller (hg_op_input); out: checked by hg_op_output with x's
// shape and a float dtype (x's dtype or a same_kind cast of it: the result is rounded to x's dtype
// first). axis in [-ndim, ndim) (a 0-d x takes 0 or -1). HG_ERR_DTYPE_MISMATCH for non-float x;
// HG_ERR_OUT_OF_RANGE for a bad axis. Writes out only on success.
hg_status hg_softmax_into(hg_op_ctx* c, const hg_tensor* x, int32_t axis, int log,
                          const hg_tensor* out);

// The host kernel of hg_softmax_into (the op's host override, src/composite/overrides.c): x
// and out checked, ax normalized (0 for a 0-d x).
hg_status hg_softmax_host(hg_op_ctx* c, const hg_tensor* x, int32_t ax, int log,
                          const hg_tensor* out);

// exp for the kernels (hg_sm_expf, softmax_f32.h): vmath.h's f32 exp (<= 2 ULP); NaN stays NaN,
// -inf gives 0, results below 2^-126 (x < -87.34) are flushed to 0.
float hg_softmax_expf(float x);

#endif
