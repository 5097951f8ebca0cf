// Internal (rows family): softmax, log_softmax, layer_norm and rms_norm on devices for rows
// that are contiguous (unit stride) at a constant row stride, each row held in registers
// (dev_rows_reg.c). dev_rows.c picks it and keeps its generic strided kernel for the rest.
#ifndef HG_OPS_ROWS_DEV_ROWS_REG_H
#define HG_OPS_ROWS_DEV_ROWS_REG_H
#include <stdint.h>
#include "ops/common/dev_ops.h"
#include "runtime/objects.h"

// Longest row held in registers (1024 lanes x 32 elements); longer rows take the generic kernel.
#define HG_DEV_ROWS_REG_MAX 32768u

typedef struct hg_dev_rows_job {
    const char* fn;
    hg_executor_obj* ex;
    hg_dev_row_op op;
    hg_dtype xdt, odt, wdt, bdt;
    uint64_t M, R;                       // rows, elements per row (1 <= R <= HG_DEV_ROWS_REG_MAX)
    hg_buffer x, o, w, b;                // w, b: zero handles when absent
    int has_w, has_b;
    int64_t xoff, ooff, woff, boff;      // first elements
    int64_t xrs, ors;                    // row strides (elements)
    double eps;
} hg_dev_rows_job;

hg_status hg_dev_rows_reg(const hg_dev_rows_job* j);

#endif
