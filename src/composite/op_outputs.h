// Internal (composite): the outputs of an op with several optional ones (the backward ops):
// resolved (allocated where the caller gave a tensor without a buffer), checked against the
// inputs and each other, and released again when the call fails.
#ifndef HG_COMPOSITE_OP_OUTPUTS_H
#define HG_COMPOSITE_OP_OUTPUTS_H
#include "ops/common/op_common.h"

// Releases the outputs a failing call allocated (the caller's tensors as they were).
static inline void hg_cop_outputs_release(hg_tensor* const* outs, const int* alloc, int n) {
    for (int o = 0; o < n; o++)
        if (alloc[o]) {
            hg_buffer_destroy(outs[o]->buffer);
            outs[o]->buffer.handle = 0;
        }
}

// Resolves the optional outputs outs[0..n) (NULL: not asked for) of dtypes dts and shapes
// (ndims, shapes; an existing output may have a same_kind dtype), reading the inputs
// ins[0..nin) first where an output overlaps one (ins[0] may be outs[0] itself when same0) and
// refusing outputs that overlap each other. On failure the buffers it allocated are released (the caller's tensors as they
// were); *alloc says which it allocated, for the caller to release on a later failure.
static inline __attribute__((always_inline)) hg_status hg_cop_outputs_resolve(
    hg_op_ctx* c, hg_tensor* const* outs, const int32_t* ndims, const int64_t* const* shapes,
    const hg_dtype* dts, int n, const hg_tensor** ins, int nin, int same0, int* alloc) {
    hg_status s = HG_OK;
    for (int o = 0; o < n; o++) {
        int a = outs[o] && outs[o]->buffer.handle == 0;
        if (outs[o] && !s) s = hg_op_output(c, outs[o], dts[o], ndims[o], shapes[o], 1);
        alloc[o] = a && !s;
    }
    c->allocated = 0;   // released below or by the caller, not by hg_op_finish
    for (int o = 0; o < n && !s; o++)
        for (int i = 0; i < nin && !s; i++)
            if (outs[o] && ins[i])
                s = hg_op_read_first(c, outs[o], &ins[i], same0 && o == 0 && i == 0);
    for (int o = 0; o < n && !s; o++)
        for (int q = o + 1; q < n && !s; q++)
            if (outs[o] && outs[q] && hg_op_overlaps(outs[o], outs[q]))
                s = hg_error(HG_ERR_INVALID_ARGUMENT, "%s: the outputs overlap", c->fn);
    if (s) hg_cop_outputs_release(outs, alloc, n);
    return s;
}

#endif
