// The decomposition of hg_adam_step (the op's definition; composite.h): torch's
// _single_tensor_adam, one node per step in the tensors' dtype (each rounds to it, as torch's
// per-tensor ops do), the scalars 0-d inputs of that dtype (ops/optim/adam.h):
//   g = grad (-grad with maximize); Adam: g = g + p wd; AdamW: p = p decay
//   m = m + (g - m) w (w = 1 - beta1 < 1/2), else g - (g - m) beta1   (torch's lerp)
//   v = v beta2 + (g omb2) g;  amsgrad: vmax = maximum(vmax, v), read as v below
//   p = p + (m neg_step) / (sqrt(v) / bc2s + eps)
// The host's fused kernel (adam.c) is the same steps in the same order.
#include "composite/decomp.h"
#include "ops/optim/adam.h"

hg_status hg_decomp_adam(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out) {
    hg_db b = {g, HG_OK};
    const int32_t* sc = in + HG_COP_MAX_IN;
    uint32_t f = k->flags;
    int32_t p = in[0], gr = in[1], m = in[2], v = in[3];
    if (f & HG_ADAM_MAXIMIZE) gr = hg_db_unary(&b, HG_UNARY_NEG, gr);
    if (f & HG_ADAM_L2) {
        int32_t wp = hg_db_binary(&b, HG_BINARY_MUL, p, sc[HG_ADAM_WD]);
        gr = hg_db_binary(&b, HG_BINARY_ADD, gr, wp);
    }
    if (f & HG_ADAM_DECOUPLED) p = hg_db_binary(&b, HG_BINARY_MUL, p, sc[HG_ADAM_DECAY]);
    int32_t d = hg_db_binary(&b, HG_BINARY_MUL, hg_db_binary(&b, HG_BINARY_SUB, gr, m),
                             sc[HG_ADAM_B1W]);
    m = hg_db_binary(&b, f & HG_ADAM_LERP_HI ? HG_BINARY_SUB : HG_BINARY_ADD,
                     f & HG_ADAM_LERP_HI ? gr : m, d);
    int32_t gg = hg_db_binary(&b, HG_BINARY_MUL,
                              hg_db_binary(&b, HG_BINARY_MUL, gr, sc[HG_ADAM_OMB2]), gr);
    v = hg_db_binary(&b, HG_BINARY_ADD, hg_db_binary(&b, HG_BINARY_MUL, v, sc[HG_ADAM_B2]), gg);
    int32_t vv = v;
    if (f & HG_ADAM_AMSGRAD) vv = out[3] = hg_db_binary(&b, HG_BINARY_MAXIMUM, in[4], v);
    int32_t den = hg_db_binary(&b, HG_BINARY_DIV, hg_db_unary(&b, HG_UNARY_SQRT, vv),
                               sc[HG_ADAM_BC2S]);
    den = hg_db_binary(&b, HG_BINARY_ADD, den, sc[HG_ADAM_EPS]);
    int32_t u = hg_db_binary(&b, HG_BINARY_MUL, m, sc[HG_ADAM_NEG_STEP]);
    out[0] = hg_db_binary(&b, HG_BINARY_ADD, p, hg_db_binary(&b, HG_BINARY_DIV, u, den));
    out[1] = m;
    out[2] = v;
    return b.s;
}
