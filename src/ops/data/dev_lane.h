// Internal: the frame of the lane-per-element device kernels (the data ops' dev_data.c and
// random's dev_random.c). Lane i takes element i of out in C order, turns i into coordinates
// with out's sizes and adds them times each tensor's strides, so any view works without copies.
//
// A kernel is built in this order: hg_dd_declare (the frame's params and registers), the
// kernel's own params and registers, hg_dd_begin (out's dims, then the code up to the lane's
// offsets oo and xo inside `if i < n`), the body computing ov, and hg_dd_run (the store of ov,
// the program and its launches).
#ifndef HG_OPS_DATA_DEV_LANE_H
#define HG_OPS_DATA_DEV_LANE_H
#include <stdint.h>
#include "isa/builder.h"
#include "ops/common/dev_kernel.h"

// Lanes per block, and the most lanes of one launch (larger calls take several, `first` on).
#define HG_DD_BLOCK 256u
#define HG_DD_LAUNCH_MAX (UINT64_C(1) << 30)

// One kernel being built: o (out) and, when has_x, x (read, of out's shape); n, first, ooff
// and xoff (xoff is declared and used even without x, so every kernel has the same frame).
typedef struct hg_dd_kernel {
    hg_kb b;
    hg_dtype odt, xdt;
    int has_x;
    uint32_t o, x;                          // memory slots
    hg_operand n, first, ooff, xoff;        // scalars
    hg_dk_dim_params dims;                  // out's (and x's) dims: d_s<k>, d_a<k>, d_b<k>
    uint32_t i;                             // u64: the element
    hg_dk_scratch sc;                       // dq, dr (u64), dc, dt (i64)
    uint32_t oo, xo, in, ov, xv;            // i64 offsets, bool, out's and x's values
} hg_dd_kernel;

// The frame's params and registers on a new program named name (xdt ignored without x).
void hg_dd_declare(hg_dd_kernel* k, const char* name, hg_dtype odt, int has_x, hg_dtype xdt);
// The dims' params (nd of them), x's value register, then the code through the offsets.
void hg_dd_begin(hg_dd_kernel* k, int32_t nd);

// A call over out's elements: out's dims (with x's strides when x is given; x has out's
// shape), merged when merge is set (C order is kept, so element i is still the i-th of out).
typedef struct hg_dd_call {
    hg_op_ctx* c;
    const hg_tensor* out;
    const hg_tensor* x;   // or NULL
    hg_dk_dims dims;
    uint64_t n;
} hg_dd_call;
void hg_dd_setup(hg_dd_call* k, hg_op_ctx* c, const hg_tensor* out, const hg_tensor* x,
                 int merge);

// Ends k (stores ov at oo) and launches its program over call's elements: args o (and x),
// n, first, the offsets, extra (the kernel's own params, in their order), then the dims.
hg_status hg_dd_run(const hg_dd_call* call, hg_dd_kernel* k, const hg_arg* extra,
                    size_t nextra);

#endif
