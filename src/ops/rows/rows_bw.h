// Internal (rows family): the tuned kernels of the row gradients, which the composite layer
// registers as overrides of softmax_backward / log_softmax_backward and layer_norm_backward /
// rms_norm_backward (src/composite/overrides.c holds the conditions each one takes). The
// arguments are checked by the public entries (src/composite); outputs are resolved.
#ifndef HG_OPS_ROWS_ROWS_BW_H
#define HG_OPS_ROWS_ROWS_BW_H
#include <stdint.h>
#include "hologram.h"
#include "ops/common/op_common.h"

// Host: C-contiguous f32/f64 grad, y and out of y's dtype, softmax axis the last one.
hg_status hg_softmax_backward_rows(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* y,
                                   int log, const hg_tensor* out);
// Device: the last axis ax, rows contiguous at a constant row stride in grad, y and out
// (hg_dev_rows_layout).
hg_status hg_softmax_backward_dev(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* y,
                                  int32_t ax, int log, const hg_tensor* out);

// Host: C-contiguous f32/f64 grad, x, weight, the given statistics (mean and rstd: both NULL,
// recomputed from eps, or both given, of the statistics' shape) and outputs (NULL: not asked),
// all of x's dtype.
hg_status hg_norm_backward_rows(hg_op_ctx* c, int rms, const hg_tensor* grad,
                                const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                                const hg_tensor* mean, const hg_tensor* rstd, double eps,
                                const hg_tensor* gx, const hg_tensor* gw, const hg_tensor* gb);
// Device: 1 when grad_x (gx, not NULL) can come from the row kernel (the normalized dims
// contiguous at a constant row stride in x, grad and gx; weight contiguous).
int hg_norm_backward_dev_ok(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* x,
                            int32_t nnorm, const hg_tensor* weight, const hg_tensor* gx);
// Device: grad_x only, where hg_norm_backward_dev_ok holds.
hg_status hg_norm_backward_dev_gx(hg_op_ctx* c, int rms, const hg_tensor* grad,
                                  const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                                  double eps, const hg_tensor* gx);

#endif
