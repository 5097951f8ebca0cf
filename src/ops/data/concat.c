// hg_concat: numpy.concatenate along one axis on host-visible backends. Each input is copied
// into its block of out (a strided sub-view), split over the executor's threads when large.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/data/data_common.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"

enum { CONCAT_GRAIN = 1 << 15 };   // elements per worker

typedef struct concat_job {
    hg_host_view dst, src;
} concat_job;

static void concat_range(void* ctx, int64_t b, int64_t e) {
    concat_job* j = ctx;
    hg_copy_range(&j->dst, &j->src, b, e);
}

// Each input into its block of out (inputs apart from out).
static hg_status concat_into(hg_op_ctx* c, int32_t n, const hg_tensor* inputs, int32_t ax,
                             hg_tensor* out) {
    hg_status s = HG_OK;
    if (hg_op_route_of(c, HG_OPF_DATA, out->dtype) == HG_ROUTE_DEVICE) {   // converted too
        int64_t at = 0;
        for (int32_t k = 0; k < n && !s; k++) {
            hg_tensor dst = *out;
            dst.shape[ax] = inputs[k].shape[ax];
            if (hg_view_numel(&inputs[k])) dst.offset += at * out->strides[ax];
            at += inputs[k].shape[ax];
            s = hg_dev_copy_cast(c, &dst, &inputs[k]);
        }
        return s;
    }
    hg_host_view ov;
    if ((s = hg_op_host_view(c, out, &ov))) return s;
    int64_t at = 0;
    size_t oes = hg_dtype_size(out->dtype);
    for (int32_t k = 0; k < n && !s; k++) {
        concat_job j;
        if ((s = hg_op_host_view(c, &inputs[k], &j.src))) break;
        // out[..., at : at + len_k, ...] as a view with the input's shape.
        j.dst = ov;
        j.dst.shape[ax] = j.src.shape[ax];
        j.dst.numel = j.src.numel;
        if (j.src.numel) j.dst.data = ov.data + at * ov.strides[ax] * (int64_t)oes;
        at += j.src.shape[ax];
        s = hg_for_range(c, j.src.numel, CONCAT_GRAIN, concat_range, &j);
    }
    return s;
}

hg_status hg_concat(int32_t n, const hg_tensor* inputs, int32_t axis, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_concat");
    if (n < 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_concat: n is %d; at least 1 input is needed",
                        (int)n);
    if (!inputs) return hg_error(HG_ERR_NULL_POINTER, "hg_concat: argument 'inputs' is NULL");
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "hg_concat: argument 'out' is NULL");
    char name[32], sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT];
    const hg_tensor* t0 = &inputs[0];
    hg_status s;
    for (int32_t k = 0; k < n; k++) {
        snprintf(name, sizeof name, "inputs[%d]", (int)k);
        if ((s = hg_op_input(&c, &inputs[k], name, NULL, NULL))) return s;
    }
    if (t0->ndim == 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_concat: inputs[0] is 0-d; 0-d tensors cannot be concatenated "
                        "(as numpy)");
    int32_t ax = 0;
    if ((s = hg_op_axis(&c, t0->ndim, axis, &ax))) return s;
    int64_t shape[HG_MAX_DIMS];
    for (int32_t d = 0; d < t0->ndim; d++) shape[d] = t0->shape[d];
    shape[ax] = 0;
    for (int32_t k = 0; k < n; k++) {
        const hg_tensor* t = &inputs[k];
        if (t->dtype != t0->dtype)
            return hg_error(HG_ERR_DTYPE_MISMATCH,
                            "hg_concat: inputs[%d] has dtype %s, inputs[0] has %s (all inputs "
                            "must have one dtype)", (int)k, hg_dtype_name(t->dtype),
                            hg_dtype_name(t0->dtype));
        int ok = t->ndim == t0->ndim;
        for (int32_t d = 0; ok && d < t0->ndim; d++) ok = d == ax || t->shape[d] == t0->shape[d];
        if (!ok)
            return hg_error(HG_ERR_SIZE_MISMATCH,
                            "hg_concat: inputs[%d] has shape %s, inputs[0] has %s (all dims but "
                            "axis %d must be equal)", (int)k, hg_op_dims(sb, t->ndim, t->shape),
                            hg_op_dims(tb, t0->ndim, t0->shape), (int)ax);
        if (t->shape[ax] > INT64_MAX - shape[ax])
            return hg_error(HG_ERR_SIZE_MISMATCH, "hg_concat: the result size along axis %d "
                            "overflows int64", (int)ax);
        shape[ax] += t->shape[ax];
    }
    // The result's element count must fit too (each input's does, but the sum may not).
    int64_t numel = 1;
    for (int32_t d = 0; d < t0->ndim; d++) {
        if (shape[d] && numel > INT64_MAX / shape[d])
            return hg_error(HG_ERR_SIZE_MISMATCH, "hg_concat: the result shape %s has more than "
                            "INT64_MAX elements", hg_op_dims(sb, t0->ndim, shape));
        numel *= shape[d];
    }
    if ((s = hg_op_output(&c, out, t0->dtype, t0->ndim, shape, 1))) return s;
    // numpy's overlap rule: every input overlapping out is copied before anything is written.
    hg_tensor* ins = NULL;   // the inputs with those copies, when there are any
    for (int32_t k = 0; k < n && !s; k++) {
        const hg_tensor* in = &inputs[k];
        if ((s = hg_op_read_first(&c, out, &in, 0)) || in == &inputs[k]) continue;
        if (!ins && (ins = malloc((size_t)n * sizeof *ins)))
            memcpy(ins, inputs, (size_t)n * sizeof *ins);
        if (!ins) s = hg_error(HG_ERR_OUT_OF_MEMORY, "hg_concat: out of memory");
        else ins[k] = *in;
    }
    if (!s) s = concat_into(&c, n, ins ? ins : inputs, ax, out);
    free(ins);
    return hg_op_finish(&c, out, s);
}
