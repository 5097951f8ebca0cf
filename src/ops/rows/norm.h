// Internal (rows family): layer_norm / rms_norm as a host row kernel, the ops' host override
// (src/composite/overrides.c; on devices hg_dev_rows, dev_ops.h): every layout (contiguous f32
// rows directly, others gathered per row; statistics accumulated in f64 and rounded to f32,
// kept in f64 for f64).
#ifndef HG_OPS_ROWS_NORM_H
#define HG_OPS_ROWS_NORM_H
#include <stdint.h>
#include "hologram.h"
#include "ops/common/op_common.h"

// x, weight, bias (NULL: absent; bias NULL for rms) and out checked and resolved by the caller
// (weight and bias of the last nnorm dims' shape, any float dtype; out of x's shape), on a
// host-visible backend. mean and rstd (layer_norm only): each NULL or C-contiguous of x's
// dtype and the statistics' shape (hg_layer_norm_stats), written from the same pass.
hg_status hg_norm_rows(hg_op_ctx* c, int rms, const hg_tensor* x, int32_t nnorm,
                       const hg_tensor* weight, const hg_tensor* bias, double eps,
                       const hg_tensor* out, const hg_tensor* mean, const hg_tensor* rstd);

// The graph compiler's norm step (HG_GOP_NORM): hg_norm_rows without statistics on the host,
// the device row kernels on a device; x, weight, bias and out as checked when the graph was
// built (weight and bias of x's dtype, NULL where absent).
hg_status hg_norm_into(hg_op_ctx* c, int rms, const hg_tensor* x, int32_t nnorm,
                       const hg_tensor* weight, const hg_tensor* bias, double eps,
                       const hg_tensor* out);

#endif
