// Internal: the op library's device implementations (backends whose memory is not
// host-visible). Each is called by the op's host entry point after the same argument checks,
// with the same contract as the host version it stands for.
#ifndef HG_OPS_DEVICE_DEV_OPS_H
#define HG_OPS_DEVICE_DEV_OPS_H
#include <stdint.h>
#include "hologram.h"
#include "ops/op_common.h"

// 1 when t's buffer lives on a backend whose memory the host cannot read (t checked already).
int hg_dev_on_device(const hg_tensor* t);

// hg_reduce_into (ops/reduce.h) on the device (dev_reduce.c).
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

#endif
