// The decompositions of the forward losses (the ops' definitions; composite.h), after
// torch.nn.functional, in the accuracy contract of their kernels: each element's (sample's)
// loss in f64 and rounded once to the result dtype rdtype (NONE), or summed in f64 (MEAN
// divides the sum); where the kernels take a step in f32 below f64 inputs, so does the graph:
//   mse_loss:                 (x - t)^2
//   binary_cross_entropy:     -(t lp + (1 - t) lq) w, lp = max(log x, -100),
//                             lq = max(log(1 - x), -100), the logs in f32 below f64 (as torch)
//   ..._with_logits:          ((1 - t) x + lw sp) w, sp = log1p(exp(-|x|)) + max(-x, 0),
//                             lw = 1 + (pos_weight - 1) t; log1p(e) in f32 below f64 as
//                             log(u) e / (u - 1) with u = 1 + e (e where u rounds to 1)
//   cross_entropy:            per sample, with m = max_c x_c and lse_m = log(sum_c exp(x_c - m))
//                             (the exps in f32 below f64, their sum in f64):
//                             class indices: (m - x_t) + lse_m (ignore_index: 0, not counted)
//                             probabilities: sum_c t_c ((m - x_c) + lse_m)
// The inputs broadcast onto the loss shape as the entry checked (graph broadcasting).
#include "base/dtype.h"
#include "base/shape.h"
#include "composite/decomp.h"
#include "graph/graph_internal.h"

// v - x (v a weak float scalar).
static int32_t rsub(hg_db* b, double v, int32_t x) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_binary_scalar(b->g, HG_BINARY_SUB, x, hg_scalar_f(v), 1, &r);
    return r;
}

// The reduced loss from the per-element losses l (f64, nd dims, nd >= 1): SUM, or MEAN over
// count (a node; -1: over n), in f64; NONE: l itself reshaped to (ns, sshape). Rounded to rt.
static int32_t reduce_loss(hg_db* b, const hg_cop_call* k, int32_t l, int32_t count, int64_t n,
                           int32_t ns, const int64_t* sshape) {
    hg_dtype rt = (hg_dtype)k->rdtype;
    if (k->reduction == HG_REDUCTION_NONE)
        return hg_db_cast(b, hg_db_reshape(b, l, ns, sshape), rt);
    int32_t s = hg_db_reduce(b, HG_REDUCE_SUM, l, 0, NULL, 0);
    if (k->reduction == HG_REDUCTION_MEAN)
        s = count >= 0 ? hg_db_binary(b, HG_BINARY_DIV, s, count)
                       : hg_db_scalar(b, HG_BINARY_DIV, s, (double)n);
    return hg_db_cast(b, s, rt);
}

// log1p(exp(-|x|)) in f64 (rt f64) or in f32 (below), as f64.
static int32_t softplus_tail(hg_db* b, int32_t x, int f64) {
    if (f64)
        return hg_db_unary(b, HG_UNARY_LOG1P,
                           hg_db_unary(b, HG_UNARY_EXP,
                                       hg_db_unary(b, HG_UNARY_NEG,
                                                   hg_db_unary(b, HG_UNARY_ABS, x))));
    int32_t xf = hg_db_cast(b, x, HG_DTYPE_F32);
    int32_t e = hg_db_unary(b, HG_UNARY_EXP,
                            hg_db_unary(b, HG_UNARY_NEG, hg_db_unary(b, HG_UNARY_ABS, xf)));
    int32_t u = hg_db_scalar(b, HG_BINARY_ADD, e, 1.0);
    int32_t um = hg_db_scalar(b, HG_BINARY_SUB, u, 1.0);
    int32_t r = hg_db_binary(b, HG_BINARY_MUL, hg_db_unary(b, HG_UNARY_LOG, u),
                             hg_db_binary(b, HG_BINARY_DIV, e, um));
    int32_t one = hg_db_scalar(b, HG_BINARY_EQ, u, 1.0);
    return hg_db_cast(b, hg_db_where(b, one, e, r), HG_DTYPE_F64);
}

// max(log(v), -100) of v (f64) in f64, or in f32 below f64, as f64.
static int32_t clamped_log(hg_db* b, int32_t v, int f64) {
    int32_t lv = f64 ? hg_db_unary(b, HG_UNARY_LOG, v)
                     : hg_db_cast(b, hg_db_unary(b, HG_UNARY_LOG, v), HG_DTYPE_F64);
    return hg_db_scalar(b, HG_BINARY_MAXIMUM, lv, -100.0);
}

hg_status hg_decomp_ew_loss(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out) {
    hg_db b = {g, HG_OK};
    const hg_tensor* o = k->out[0];
    int f64 = k->rdtype == HG_DTYPE_F64;
    int32_t nd, x = hg_db_cast(&b, in[0], HG_DTYPE_F64), t = hg_db_cast(&b, in[1], HG_DTYPE_F64);
    int64_t shape[HG_MAX_DIMS];
    hg_dtype dt;
    int32_t l = -1;
    if (k->op == HG_COP_MSE) {
        int32_t d = hg_db_binary(&b, HG_BINARY_SUB, x, t);
        l = hg_db_binary(&b, HG_BINARY_MUL, d, d);
    } else if (k->op == HG_COP_BCE) {
        // 1 - x of the input in f32 below f64 (the host kernel's (float)x, then 1.0f - xf)
        int32_t xc = f64 ? x : hg_db_cast(&b, in[0], HG_DTYPE_F32);
        int32_t lp = clamped_log(&b, xc, f64), lq = clamped_log(&b, rsub(&b, 1.0, xc), f64);
        l = hg_db_binary(&b, HG_BINARY_ADD, hg_db_binary(&b, HG_BINARY_MUL, t, lp),
                         hg_db_binary(&b, HG_BINARY_MUL, rsub(&b, 1.0, t), lq));
        l = hg_db_unary(&b, HG_UNARY_NEG, l);
    } else {
        int32_t sp = hg_db_binary(&b, HG_BINARY_ADD, softplus_tail(&b, x, f64),
                                  hg_db_scalar(&b, HG_BINARY_MAXIMUM,
                                               hg_db_unary(&b, HG_UNARY_NEG, x), 0.0));
        if (in[3] >= 0) {
            int32_t pw = hg_db_cast(&b, in[3], HG_DTYPE_F64);
            int32_t lw = hg_db_binary(&b, HG_BINARY_MUL, hg_db_scalar(&b, HG_BINARY_SUB, pw, 1.0),
                                      t);
            sp = hg_db_binary(&b, HG_BINARY_MUL, hg_db_scalar(&b, HG_BINARY_ADD, lw, 1.0), sp);
        }
        l = hg_db_binary(&b, HG_BINARY_ADD,
                         hg_db_binary(&b, HG_BINARY_MUL, rsub(&b, 1.0, t), x), sp);
    }
    if (k->op != HG_COP_MSE && in[2] >= 0)
        l = hg_db_binary(&b, HG_BINARY_MUL, l, hg_db_cast(&b, in[2], HG_DTYPE_F64));
    if (!b.s) b.s = hg_graph_node_info(g, l, &dt, &nd, shape);
    if (b.s) return b.s;
    int64_t n = hg_shape_numel(nd, shape);
    if (nd == 0) {   // a 0-d loss: summed as one element
        int64_t one = 1;
        l = hg_db_reshape(&b, l, 1, &one);
    }
    out[0] = reduce_loss(&b, k, l, -1, n, o->ndim, o->shape);
    return b.s;
}

hg_status hg_decomp_ce(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out) {
    hg_db b = {g, HG_OK};
    const hg_tensor *lt = k->in[0], *tt = k->in[1];
    hg_dtype ct = hg_db_stat_dtype(lt->dtype);
    int32_t cdim = k->axis, nd = lt->ndim, ns = 0;
    int64_t ncls = lt->shape[cdim], kshape[HG_MAX_DIMS], sshape[HG_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++) {   // the logits' shape with a class dim of 1
        kshape[d] = d == cdim ? 1 : lt->shape[d];
        if (d != cdim) sshape[ns++] = lt->shape[d];
    }
    int64_t nsamples = hg_shape_numel(ns, sshape);
    int32_t x = hg_db_cast(&b, in[0], ct);
    int32_t m = hg_db_reduce(&b, HG_REDUCE_MAX, x, 1, &cdim, 1);
    int32_t e = hg_db_unary(&b, HG_UNARY_EXP, hg_db_binary(&b, HG_BINARY_SUB, x, m));
    int32_t se = hg_db_reduce(&b, HG_REDUCE_SUM, hg_db_cast(&b, e, HG_DTYPE_F64), 1, &cdim, 1);
    int32_t lse = hg_db_unary(&b, HG_UNARY_LOG, se), md = hg_db_cast(&b, m, HG_DTYPE_F64);
    int32_t xd = hg_db_cast(&b, x, HG_DTYPE_F64), l, count = -1;
    if (hg_dtype_is_float((int)tt->dtype)) {
        // (m - x_c) + lse_m first: its digits survive next to large logits
        int32_t v = hg_db_binary(&b, HG_BINARY_ADD, hg_db_binary(&b, HG_BINARY_SUB, md, xd), lse);
        l = hg_db_binary(&b, HG_BINARY_MUL, hg_db_cast(&b, in[1], HG_DTYPE_F64), v);
        l = hg_db_reduce(&b, HG_REDUCE_SUM, l, 1, &cdim, 1);
    } else {
        int32_t t = hg_db_reshape(&b, hg_db_cast(&b, in[1], HG_DTYPE_I64), nd, kshape);
        int64_t cshape[HG_MAX_DIMS];   // the class ids along the class dim
        for (int32_t d = 0; d < nd; d++) cshape[d] = d == cdim ? ncls : 1;
        int32_t ids = -1, zero = -1;
        if (!b.s) b.s = hg_graph_arange(g, HG_DTYPE_I64, ncls, &ids);
        if (!b.s) b.s = hg_graph_constant(g, HG_DTYPE_F64, hg_scalar_f(0.0), &zero);
        ids = hg_db_reshape(&b, ids, nd, cshape);
        // x at the target class: one term of the sum, every other +0 (an ignored sample
        // names no class: its terms are all 0, and its loss is replaced below)
        int32_t at = hg_db_where(&b, hg_db_binary(&b, HG_BINARY_EQ, ids, t), xd, zero);
        int32_t xt = hg_db_reduce(&b, HG_REDUCE_SUM, at, 1, &cdim, 1);
        l = hg_db_binary(&b, HG_BINARY_ADD, hg_db_binary(&b, HG_BINARY_SUB, md, xt), lse);
        int32_t keep = hg_db_scalar_i(&b, HG_BINARY_NE, t, k->ignore_index);
        l = hg_db_where(&b, keep, l, zero);
        if (k->reduction == HG_REDUCTION_MEAN)
            count = hg_db_reduce(&b, HG_REDUCE_SUM, hg_db_cast(&b, keep, HG_DTYPE_F64), 0, NULL,
                                 0);
    }
    out[0] = reduce_loss(&b, k, l, count, nsamples, ns, sshape);
    return b.s;
}
