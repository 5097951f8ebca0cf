// hg_adam_step (ops.h): one Adam / AdamW update of a parameter and its moment tensors, in
// place, as torch.optim.Adam's per-tensor update (docs/ops_gradients.md "The optimizer step").
// The entry checks everything before anything is written, forms the update's scalars in double
// (ops/optim/adam.h) and hands the call to hg_cop_dispatch: C-contiguous f32/f64 on a host
// backend take the fused kernel (the override below); everything else (strided views,
// f16/bf16, devices) runs the op's decomposition (decomp_optim.c), whose plan computes in
// place outputs into temporaries and copies them at the end.
#include <math.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "composite/composite.h"
#include "ops/optim/adam.h"
#include "tensor/tensor_internal.h"

int hg_cop_adam_host_ok(const hg_cop_call* k) {
    int64_t n = hg_view_numel(k->in[0]);
    for (int i = 0; i < HG_COP_MAX_IN; i++)
        if (k->in[i] && !hg_tensor_is_c_contiguous(k->in[i], n)) return 0;
    return 1;
}

hg_status hg_cop_adam_host(const hg_cop_call* k) {
    return hg_adam_host(k->c, k->scalars, k->flags, k->in);
}

static int adam_bad(double x, double lo, int lo_open, double hi) {
    return !(lo_open ? x > lo : x >= lo) || !(x < hi) || isnan(x);
}

hg_status hg_adam_step(const hg_adam_options* o, const hg_tensor* param, const hg_tensor* grad,
                       const hg_tensor* exp_avg, const hg_tensor* exp_avg_sq,
                       const hg_tensor* max_exp_avg_sq) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_adam_step");
    const char* fn = c.fn;
    if (!o || !param || !grad || !exp_avg || !exp_avg_sq)
        return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", fn,
                        !o ? "options" : !param ? "param" : !grad ? "grad" : !exp_avg ?
                        "exp_avg" : "exp_avg_sq");
    if (o->amsgrad && !max_exp_avg_sq)
        return hg_error(HG_ERR_NULL_POINTER, "%s: amsgrad needs max_exp_avg_sq (it is NULL)", fn);
    if (adam_bad(o->lr, 0.0, 0, INFINITY))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: lr %g must be finite and >= 0", fn, o->lr);
    if (adam_bad(o->eps, 0.0, 0, INFINITY))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: eps %g must be finite and >= 0", fn, o->eps);
    if (adam_bad(o->beta1, 0.0, 0, 1.0) || adam_bad(o->beta2, 0.0, 0, 1.0))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: betas (%g, %g) must each be in [0, 1)", fn,
                        o->beta1, o->beta2);
    if (adam_bad(o->weight_decay, 0.0, 0, INFINITY))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: weight_decay %g must be finite and >= 0",
                        fn, o->weight_decay);
    if (o->step < 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: step %lld must be >= 1 (the step being "
                        "taken, counted from 1)", fn, (long long)o->step);
    const hg_tensor* ts[5] = {param, grad, exp_avg, exp_avg_sq, o->amsgrad ? max_exp_avg_sq : NULL};
    static const char* const names[5] = {"param", "grad", "exp_avg", "exp_avg_sq",
                                         "max_exp_avg_sq"};
    hg_status s;
    for (int i = 0; i < 5; i++) {
        if (!ts[i]) continue;
        s = i == 1 ? hg_op_input(&c, ts[i], names[i], NULL, NULL)
                   : hg_op_existing_output(&c, ts[i], names[i]);
        if (s) return s;
    }
    if (!hg_dtype_is_float((int)param->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: param is %s; expected a float dtype (f16, "
                        "bf16, f32, f64)", fn, hg_dtype_name(param->dtype));
    for (int i = 1; i < 5; i++) {
        if (!ts[i]) continue;
        if (ts[i]->dtype != param->dtype)
            return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: %s is %s and param %s; expected the "
                            "param's dtype", fn, names[i], hg_dtype_name(ts[i]->dtype),
                            hg_dtype_name(param->dtype));
        int same = ts[i]->ndim == param->ndim;
        for (int32_t d = 0; same && d < param->ndim; d++)
            same = ts[i]->shape[d] == param->shape[d];
        if (!same) {
            char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: %s has shape %s and param %s; expected "
                            "the param's shape", fn, names[i],
                            hg_op_dims(a, ts[i]->ndim, ts[i]->shape),
                            hg_op_dims(b, param->ndim, param->shape));
        }
    }
    for (int i = 0; i < 5; i++)   // grad is read while the others are written: all apart
        for (int q = i + 1; q < 5; q++)
            if (ts[i] && ts[q] && hg_op_overlaps(ts[i], ts[q]))
                return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: %s and %s share memory; expected "
                                "separate tensors", fn, names[i], names[q]);
    if (hg_view_numel(param) == 0) return HG_OK;
    double sc[HG_ADAM_SCALAR_COUNT];
    double bc1 = 1.0 - pow(o->beta1, (double)o->step), bc2 = 1.0 - pow(o->beta2, (double)o->step);
    double omb1 = 1.0 - o->beta1;
    int lerp_hi = !(omb1 < 0.5);
    sc[HG_ADAM_WD] = o->weight_decay;
    sc[HG_ADAM_DECAY] = 1.0 - o->lr * o->weight_decay;
    sc[HG_ADAM_B1W] = lerp_hi ? 1.0 - omb1 : omb1;   // torch's 1 - weight above 1/2
    sc[HG_ADAM_B2] = o->beta2;
    sc[HG_ADAM_OMB2] = 1.0 - o->beta2;
    sc[HG_ADAM_BC2S] = sqrt(bc2);
    sc[HG_ADAM_EPS] = o->eps;
    sc[HG_ADAM_NEG_STEP] = -(o->lr / bc1);
    uint32_t flags = (lerp_hi ? HG_ADAM_LERP_HI : 0u) | (o->amsgrad ? HG_ADAM_AMSGRAD : 0u) |
                     (o->maximize ? HG_ADAM_MAXIMIZE : 0u);
    if (o->weight_decay != 0.0)
        flags |= o->decoupled_weight_decay ? HG_ADAM_DECOUPLED : HG_ADAM_L2;
    // Written in place: the outputs are the caller's tensors (their descriptors are only read).
    hg_cop_call k = {.op = HG_COP_ADAM, .c = &c, .in = {param, grad, exp_avg, exp_avg_sq, ts[4]},
                     .out = {(hg_tensor*)param, (hg_tensor*)exp_avg, (hg_tensor*)exp_avg_sq,
                             (hg_tensor*)ts[4]},
                     .flags = flags, .scalars = sc};
    return hg_cop_dispatch(&k);
}
