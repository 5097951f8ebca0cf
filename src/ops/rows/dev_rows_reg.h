// Internal (rows family): row kernels on devices for rows that are contiguous (unit stride) at
// a constant row stride, each row held in registers (dev_rows_reg.c; the backward ops and
// cross-entropy in dev_rows_reg_bw.c): softmax, log_softmax, layer_norm and rms_norm
// (dev_rows.c picks them and keeps its generic strided kernel for the rest), their backward ops
// (softmax_backward.c, norm_backward.c) and cross-entropy with class indices, forward and
// backward (src/ops/loss: dev_loss.c, loss_ce_backward.c).
#ifndef HG_OPS_ROWS_DEV_ROWS_REG_H
#define HG_OPS_ROWS_DEV_ROWS_REG_H
#include <stdint.h>
#include "ops/common/dev_ops.h"
#include "runtime/objects.h"

// Longest row held in registers (1024 lanes x 32 elements); longer rows take the generic kernel.
#define HG_DEV_ROWS_REG_MAX 32768u

// The kernels. The first four equal hg_dev_row_op's values.
typedef enum hg_dev_rows_kind {
    HG_DEV_ROWS_SOFTMAX, HG_DEV_ROWS_LOG_SOFTMAX, HG_DEV_ROWS_LAYER_NORM, HG_DEV_ROWS_RMS_NORM,
    // out = y (g - sum(g y)) / g - exp(y) sum(g); x holds y
    HG_DEV_ROWS_SOFTMAX_BW, HG_DEV_ROWS_LOG_SOFTMAX_BW,
    // out = grad_x of layer_norm / rms_norm (w: the weight or absent)
    HG_DEV_ROWS_LAYER_NORM_BW, HG_DEV_ROWS_RMS_NORM_BW,
    // cross-entropy of logits rows x with class indices t (one per row): o[row] = the loss
    // (0 where t == ign), cn[row] = 1 or 0 (counted); or its gradient o = (softmax(x) - onehot(t))
    // * s[row] (s: the per-row scale, 0 where t == ign)
    HG_DEV_ROWS_CE, HG_DEV_ROWS_CE_BW,
    HG_DEV_ROWS_KIND_COUNT
} hg_dev_rows_kind;

typedef struct hg_dev_rows_job {
    const char* fn;
    hg_executor_obj* ex;
    hg_dev_rows_kind op;
    hg_dtype xdt, odt, wdt, bdt, gdt, tdt, sdt;
    uint64_t M, R;                       // rows, elements per row (1 <= R <= HG_DEV_ROWS_REG_MAX)
    hg_buffer x, o, w, b, g, t, s, cn;   // zero handles when absent
    int has_w, has_b;
    int64_t xoff, ooff, woff, boff, goff, toff, soff, cnoff;   // first elements
    int64_t xrs, ors, grs, trs, srs;     // row strides (elements; CE: o and cn per row)
    double eps;
    int64_t ign;                         // CE: ignore_index
    int raw;                             // CE: o gets the f64 loss (else rounded to x's dtype)
} hg_dev_rows_job;

hg_status hg_dev_rows_reg(const hg_dev_rows_job* j);

// Whether rows of R elements at these unit strides can take the register kernels (the length
// bound, and HOLOGRAM_DEV_ROWS=generic turning them off for side-by-side measurements).
int hg_dev_rows_reg_ok(uint64_t R);

// Whether nt (<= 5) tensors of one shape hold rows for the register kernels: the dims from
// first_inner on contiguous (unit stride once merged) in each, the dims before it one constant
// row stride per tensor (rs[q]; 0 for a single row), the row length accepted by
// hg_dev_rows_reg_ok and not 0. *M, *R: rows and their length.
int hg_dev_rows_layout(const hg_tensor* const* ts, int nt, int32_t first_inner, uint64_t* M,
                       uint64_t* R, int64_t* rs);

#endif
