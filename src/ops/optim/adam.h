// Internal: the fused host kernel of hg_adam_step (adam.c), the host override of the composite
// op (src/composite/optim_api.c checks the arguments, forms the scalars and dispatches; the
// op's definition is its decomposition, src/composite/decomp_optim.c).
#ifndef HG_OPS_OPTIM_ADAM_H
#define HG_OPS_OPTIM_ADAM_H
#include <stdint.h>
#include "ops/common/op_common.h"

// The update's scalars, formed in double by the entry; each is rounded to the tensors' dtype
// where it is used (as torch's Python scalars are).
typedef enum hg_adam_scalar {
    HG_ADAM_WD = 0,      // weight_decay (Adam's L2 term)
    HG_ADAM_DECAY,       // 1 - lr weight_decay (AdamW)
    HG_ADAM_B1W,         // the lerp weight: 1 - beta1 (lerp_lo), beta1 (lerp_hi)
    HG_ADAM_B2,          // beta2
    HG_ADAM_OMB2,        // 1 - beta2
    HG_ADAM_BC2S,        // sqrt(1 - beta2^step)
    HG_ADAM_EPS,
    HG_ADAM_NEG_STEP,    // -lr / (1 - beta1^step)
    HG_ADAM_SCALAR_COUNT
} hg_adam_scalar;

// The update's options (which steps run; the shape of the decomposition).
enum {
    HG_ADAM_L2 = 1u,          // g = g + wd p
    HG_ADAM_DECOUPLED = 2u,   // p = p (1 - lr wd)
    HG_ADAM_AMSGRAD = 4u,
    HG_ADAM_MAXIMIZE = 8u,
    HG_ADAM_LERP_HI = 16u,    // torch's lerp for weights >= 1/2: g - (g - m) beta1
};

// The fused pass over C-contiguous f32/f64 tensors ts = {param, grad, exp_avg, exp_avg_sq,
// max_exp_avg_sq (NULL without amsgrad)}, split across the call's threads above 64K elements.
// The tensors are checked by the caller.
hg_status hg_adam_host(hg_op_ctx* c, const double* scalars, uint32_t flags,
                       const hg_tensor* const* ts);

#endif
