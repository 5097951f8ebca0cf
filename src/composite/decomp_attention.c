// The decomposition of scaled_dot_product_attention (the op's definition; composite.h), after
// torch's math form with its safe softmax: scores = q k^T * scale, masked (bool: -inf where
// false; float: added; causal: -inf above the diagonal), softmax over the keys, rows with no
// key attended set to zero, then the product with v; the logsumexp of the scores where asked
// (0 for those rows). Grouped-query heads broadcast k and v through an added dim: q (..., Hk,
// G, L, E) against k (..., Hk, 1, S, E). Computed in f32 for f16/bf16/f32 and in f64 for f64,
// rounded to q's dtype once.
#include <math.h>
#include "composite/decomp.h"
#include "graph/graph_internal.h"

static int32_t permute_last2(hg_db* b, int32_t x, int32_t ndim) {
    int32_t perm[HG_MAX_DIMS], r = -1;
    for (int32_t d = 0; d < ndim; d++) perm[d] = d;
    perm[ndim - 1] = ndim - 2;
    perm[ndim - 2] = ndim - 1;
    if (!b->s) b->s = hg_graph_permute(b->g, x, ndim, perm, &r);
    return r;
}

static int32_t matmul(hg_db* b, int32_t x, int32_t y) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_matmul(b->g, x, y, &r);
    return r;
}

// t's shape with the head dim (ndim - 3) split into (heads, group): the grouped form.
static void grouped_shape(const hg_tensor* t, int64_t heads, int64_t group, int64_t* shape) {
    int32_t h = t->ndim - 3, o = 0;
    for (int32_t d = 0; d < t->ndim; d++) {
        if (d == h) {
            shape[o++] = heads;
            shape[o++] = group;
        } else {
            shape[o++] = t->shape[d];
        }
    }
}

hg_status hg_decomp_attention(hg_graph g, const hg_cop_call* k, const int32_t* in,
                              int32_t* out) {
    hg_db b = {g, HG_OK};
    const hg_tensor *q = k->in[0], *kt = k->in[1], *mask = k->in[3];
    hg_dtype cdt = hg_db_stat_dtype(q->dtype);
    int32_t nd = q->ndim;
    int64_t L = q->shape[nd - 2], S = kt->shape[nd - 2];
    int32_t qn = hg_db_cast(&b, in[0], cdt), kn = hg_db_cast(&b, in[1], cdt);
    int32_t vn = hg_db_cast(&b, in[2], cdt);
    int64_t hq = nd >= 3 ? q->shape[nd - 3] : 1, hk = nd >= 3 ? kt->shape[nd - 3] : 1;
    int grouped = hq != hk;
    int64_t gs[HG_MAX_DIMS + 1];
    if (grouped) {   // q (..., Hk, G, L, E); k, v (..., Hk, 1, S, E)
        grouped_shape(q, hk, hq / hk, gs);
        qn = hg_db_reshape(&b, qn, nd + 1, gs);
        grouped_shape(kt, hk, 1, gs);
        kn = hg_db_reshape(&b, kn, nd + 1, gs);
        grouped_shape(k->in[2], hk, 1, gs);
        vn = hg_db_reshape(&b, vn, nd + 1, gs);
    }
    int32_t gnd = grouped ? nd + 1 : nd;
    int32_t s = hg_db_scalar(&b, HG_BINARY_MUL, matmul(&b, qn, permute_last2(&b, kn, gnd)),
                             k->eps);
    int64_t sshape[HG_MAX_DIMS];   // the scores as (..., Hq, L, S)
    for (int32_t d = 0; d < nd - 1; d++) sshape[d] = q->shape[d];
    sshape[nd - 1] = S;
    if (grouped) s = hg_db_reshape(&b, s, nd, sshape);
    int32_t ninf = -1;
    if (!b.s) b.s = hg_graph_constant(g, cdt, hg_scalar_f(-INFINITY), &ninf);
    if (mask && mask->dtype == HG_DTYPE_BOOL) s = hg_db_where(&b, in[3], s, ninf);
    else if (mask) s = hg_db_binary(&b, HG_BINARY_ADD, s, hg_db_cast(&b, in[3], cdt));
    if (k->flags & 1) {   // query i attends keys j <= i
        int32_t ri = -1, ci = -1;
        if (!b.s) b.s = hg_graph_arange(g, HG_DTYPE_I64, L, &ri);
        if (!b.s) b.s = hg_graph_arange(g, HG_DTYPE_I64, S, &ci);
        int64_t col[2] = {L, 1};
        int32_t keep = hg_db_binary(&b, HG_BINARY_LE, ci, hg_db_reshape(&b, ri, 2, col));
        s = hg_db_where(&b, keep, s, ninf);
    }
    int32_t ax = nd - 1;
    if (k->out[1]) {   // logsumexp of each query's scores, 0 where it attends nothing
        int32_t dead0 = hg_db_binary(&b, HG_BINARY_EQ, hg_db_reduce(&b, HG_REDUCE_MAX, s, 1, &ax,
                                                                    0), ninf);
        int32_t zero0 = -1;
        if (!b.s) b.s = hg_graph_constant(g, cdt, hg_scalar_f(0.0), &zero0);
        out[1] = hg_db_where(&b, dead0, zero0, hg_db_reduce(&b, HG_REDUCE_LOGSUMEXP, s, 1, &ax,
                                                             0));
    }
    int32_t p = -1;
    if (!b.s) b.s = hg_graph_softmax(g, s, ax, 0, &p);
    // A row of -inf scores attends nothing: zeros (torch's safe softmax), not softmax's NaN.
    int32_t dead = hg_db_binary(&b, HG_BINARY_EQ, hg_db_reduce(&b, HG_REDUCE_MAX, s, 1, &ax, 1),
                                ninf);
    int32_t zero = -1;
    if (!b.s) b.s = hg_graph_constant(g, cdt, hg_scalar_f(0.0), &zero);
    p = hg_db_where(&b, dead, zero, p);
    if (grouped) {
        grouped_shape(q, hk, hq / hk, gs);
        gs[nd] = S;
        p = hg_db_reshape(&b, p, nd + 1, gs);
    }
    int32_t o = matmul(&b, p, vn);
    if (grouped) {
        int64_t oshape[HG_MAX_DIMS];
        for (int32_t d = 0; d < nd - 1; d++) oshape[d] = q->shape[d];
        oshape[nd - 1] = k->in[2]->shape[nd - 1];
        o = hg_db_reshape(&b, o, nd, oshape);
    }
    out[0] = hg_db_cast(&b, o, q->dtype);
    return b.s;
}
