// The decompositions of the row ops (the ops' definitions; composite.h): softmax and
// log_softmax, layer_norm and rms_norm, and the backward ops of both, after torch's _decomp
// formulas, in today's accuracy contract: statistics in f32 for f16/bf16/f32 inputs and in f64
// for f64 (casts in the graph), except the forward norms', in f64 always as their host kernel
// accumulates them; the result rounded to the input's dtype (the forward ops) or cast from the
// statistics' dtype to the output's (the backward ops, as their composed forms did).
#include "composite/decomp.h"

// A 0-d operand becomes a 1-element row (the axis is 0 then) and the result goes back to 0-d.
static const int64_t k_one[1] = {1};

hg_status hg_decomp_softmax(hg_graph g, const hg_cop_call* k, const int32_t* in,
                                int32_t* out) {
    hg_db b = {g, HG_OK};
    hg_dtype xdt = k->in[0]->dtype;
    int scalar = k->in[0]->ndim == 0;
    int32_t ax = k->axis;
    int32_t x = hg_db_cast(&b, in[0], hg_db_stat_dtype(xdt));
    if (scalar) x = hg_db_reshape(&b, x, 1, k_one);
    int32_t m = hg_db_reduce(&b, HG_REDUCE_MAX, x, 1, &ax, 1);
    int32_t d = hg_db_binary(&b, HG_BINARY_SUB, x, m);
    int32_t e = hg_db_unary(&b, HG_UNARY_EXP, d);
    int32_t s = hg_db_reduce(&b, HG_REDUCE_SUM, e, 1, &ax, 1);
    int32_t y = k->op == HG_COP_LOG_SOFTMAX
                    ? hg_db_binary(&b, HG_BINARY_SUB, d, hg_db_unary(&b, HG_UNARY_LOG, s))
                    : hg_db_binary(&b, HG_BINARY_DIV, e, s);
    if (scalar) y = hg_db_reshape(&b, y, 0, k_one);
    out[0] = hg_db_cast(&b, y, xdt);
    return b.s;
}

// softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g) (torch's _softmax_backward_data
// and _log_softmax_backward_data).
hg_status hg_decomp_softmax_bw(hg_graph g, const hg_cop_call* k, const int32_t* in,
                                   int32_t* out) {
    hg_db b = {g, HG_OK};
    hg_dtype cdt = hg_db_stat_dtype(k->in[1]->dtype);
    int scalar = k->in[1]->ndim == 0;
    int32_t ax = k->axis;
    int32_t gr = hg_db_cast(&b, in[0], cdt), y = hg_db_cast(&b, in[1], cdt), r;
    if (scalar) {
        gr = hg_db_reshape(&b, gr, 1, k_one);
        y = hg_db_reshape(&b, y, 1, k_one);
    }
    if (k->op == HG_COP_LOG_SOFTMAX_BW) {
        int32_t s = hg_db_reduce(&b, HG_REDUCE_SUM, gr, 1, &ax, 1);
        r = hg_db_binary(&b, HG_BINARY_SUB, gr,
                         hg_db_binary(&b, HG_BINARY_MUL, hg_db_unary(&b, HG_UNARY_EXP, y), s));
    } else {
        int32_t s = hg_db_reduce(&b, HG_REDUCE_SUM, hg_db_binary(&b, HG_BINARY_MUL, gr, y), 1,
                                 &ax, 1);
        // (g - s) * y, the difference first: the CPU's fused pairs (cpu_strip.c) take the
        // sub's result as the mul's first operand, one pass with no intermediate.
        r = hg_db_binary(&b, HG_BINARY_MUL, hg_db_binary(&b, HG_BINARY_SUB, gr, s), y);
    }
    out[0] = scalar ? hg_db_reshape(&b, r, 0, k_one) : r;
    return b.s;
}

// The statistics of the norms over the last nnorm dims of x (in cdt): the centered x (x for
// rms) with the mean (-1 for rms), rstd = 1 / sqrt(mean(centered^2) + eps) and xhat =
// centered * rstd.
static void norm_stats(hg_db* b, int32_t x, int rms, int32_t nnorm, const int32_t* axes,
                       double eps, int32_t* mean, int32_t* rstd, int32_t* xhat) {
    int32_t cen = x;
    *mean = -1;
    if (!rms) {
        *mean = hg_db_reduce(b, HG_REDUCE_MEAN, x, nnorm, axes, 1);
        cen = hg_db_binary(b, HG_BINARY_SUB, x, *mean);
    }
    int32_t var = hg_db_reduce(b, HG_REDUCE_MEAN, hg_db_binary(b, HG_BINARY_MUL, cen, cen),
                               nnorm, axes, 1);
    *rstd = hg_db_unary(b, HG_UNARY_RSQRT, hg_db_scalar(b, HG_BINARY_ADD, var, eps));
    *xhat = hg_db_binary(b, HG_BINARY_MUL, cen, *rstd);
}

// y = xhat * weight + bias (torch's native_layer_norm), rounded to x's dtype; layer_norm's
// mean and rstd (out[1], out[2]) from the same f64 statistics.
hg_status hg_decomp_norm(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out) {
    hg_db b = {g, HG_OK};
    const hg_tensor* xt = k->in[0];
    hg_dtype cdt = hg_db_stat_dtype(xt->dtype);
    int32_t nnorm = k->axis, axes[HG_MAX_DIMS], mean, rstd, y;
    for (int32_t d = 0; d < nnorm; d++) axes[d] = xt->ndim - nnorm + d;
    // The statistics and xhat in f64 (as the host kernel accumulates them: an f32 square of
    // 1e30 would overflow), then the affine part in cdt.
    norm_stats(&b, hg_db_cast(&b, in[0], HG_DTYPE_F64), k->op == HG_COP_RMS_NORM, nnorm, axes,
               k->eps, &mean, &rstd, &y);
    if (k->op == HG_COP_LAYER_NORM) {
        out[1] = mean;
        out[2] = rstd;
    }
    y = hg_db_cast(&b, y, cdt);
    if (in[1] >= 0) y = hg_db_binary(&b, HG_BINARY_MUL, y, hg_db_cast(&b, in[1], cdt));
    if (k->op == HG_COP_LAYER_NORM && in[2] >= 0)
        y = hg_db_binary(&b, HG_BINARY_ADD, y, hg_db_cast(&b, in[2], cdt));
    out[0] = hg_db_cast(&b, y, xt->dtype);
    return b.s;
}

// With xhat = (x - mean) rstd (rms: x rstd), rstd = 1 / sqrt(mean(centered^2) + eps) (or the
// mean and rstd given: in[3], in[4]) and q = grad * weight (torch's native_layer_norm_backward):
//   grad_x = rstd (q - mean(q) - xhat mean(q xhat))     (rms: no mean(q) term)
//   grad_weight = sum over the rows of grad xhat, grad_bias = sum over the rows of grad.
hg_status hg_decomp_norm_bw(hg_graph g, const hg_cop_call* k, const int32_t* in,
                                int32_t* out) {
    hg_db b = {g, HG_OK};
    const hg_tensor* xt = k->in[1];
    hg_dtype cdt = hg_db_stat_dtype(xt->dtype);
    int rms = k->op == HG_COP_RMS_NORM_BW;
    int32_t nnorm = k->axis, nlead = xt->ndim - nnorm;
    int32_t axes[HG_MAX_DIMS], lead[HG_MAX_DIMS];
    for (int32_t d = 0; d < nnorm; d++) axes[d] = nlead + d;
    for (int32_t d = 0; d < nlead; d++) lead[d] = d;
    int32_t gr = hg_db_cast(&b, in[0], cdt), x = hg_db_cast(&b, in[1], cdt), mean, rstd, xhat;
    if (!rms && in[3] >= 0) {   // the statistics given (broadcast over the normalized dims)
        rstd = hg_db_cast(&b, in[4], cdt);
        xhat = hg_db_binary(&b, HG_BINARY_MUL,
                            hg_db_binary(&b, HG_BINARY_SUB, x, hg_db_cast(&b, in[3], cdt)), rstd);
    } else {
        norm_stats(&b, x, rms, nnorm, axes, k->eps, &mean, &rstd, &xhat);
    }
    // the column sums (nothing to sum where the normalized dims are all of x)
    int32_t gxhat = hg_db_binary(&b, HG_BINARY_MUL, gr, xhat);
    out[1] = nlead ? hg_db_reduce(&b, HG_REDUCE_SUM, gxhat, nlead, lead, 0) : gxhat;
    if (!rms) out[2] = nlead ? hg_db_reduce(&b, HG_REDUCE_SUM, gr, nlead, lead, 0) : gr;
    int32_t q = in[2] >= 0 ? hg_db_binary(&b, HG_BINARY_MUL, gr, hg_db_cast(&b, in[2], cdt)) : gr;
    int32_t mb = hg_db_reduce(&b, HG_REDUCE_MEAN, hg_db_binary(&b, HG_BINARY_MUL, q, xhat), nnorm,
                              axes, 1);
    int32_t t = hg_db_binary(&b, HG_BINARY_MUL, xhat, mb);
    int32_t base = q;
    if (!rms)
        base = hg_db_binary(&b, HG_BINARY_SUB, q,
                            hg_db_reduce(&b, HG_REDUCE_MEAN, q, nnorm, axes, 1));
    out[0] = hg_db_binary(&b, HG_BINARY_MUL, hg_db_binary(&b, HG_BINARY_SUB, base, t), rstd);
    return b.s;
}
