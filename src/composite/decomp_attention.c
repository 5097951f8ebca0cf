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

// The inputs in the computation dtype, grouped when Hq != Hk: q (..., Hk, G, L, E); k, v
// (..., Hk, 1, S, E); grad_out and out (the backward's) as q.
typedef struct attn_in {
    int32_t q, k, v, go, o;
    int grouped;
    int32_t gnd;      // the rank of the products (nd + 1 when grouped)
    int64_t hk, hq;
} attn_in;

static attn_in attn_inputs(hg_db* b, const hg_cop_call* k, int32_t qi, int32_t ki, int32_t vi,
                           int32_t goi, int32_t oi, const hg_tensor* go) {
    const hg_tensor *q = k->in[0], *kt = k->in[1];
    hg_dtype cdt = hg_db_stat_dtype(q->dtype);
    int32_t nd = q->ndim;
    attn_in a = {.q = hg_db_cast(b, qi, cdt), .k = hg_db_cast(b, ki, cdt),
                 .v = hg_db_cast(b, vi, cdt), .go = -1, .o = -1};
    if (goi >= 0) a.go = hg_db_cast(b, goi, cdt), a.o = hg_db_cast(b, oi, cdt);
    a.hq = nd >= 3 ? q->shape[nd - 3] : 1;
    a.hk = nd >= 3 ? kt->shape[nd - 3] : 1;
    a.grouped = a.hq != a.hk;
    a.gnd = a.grouped ? nd + 1 : nd;
    if (a.grouped) {
        int64_t gs[HG_MAX_DIMS + 1];
        grouped_shape(q, a.hk, a.hq / a.hk, gs);
        a.q = hg_db_reshape(b, a.q, nd + 1, gs);
        if (goi >= 0) {
            grouped_shape(go, a.hk, a.hq / a.hk, gs);
            a.go = hg_db_reshape(b, a.go, nd + 1, gs);
            a.o = hg_db_reshape(b, a.o, nd + 1, gs);
        }
        grouped_shape(kt, a.hk, 1, gs);
        a.k = hg_db_reshape(b, a.k, nd + 1, gs);
        grouped_shape(k->in[2], a.hk, 1, gs);
        a.v = hg_db_reshape(b, a.v, nd + 1, gs);
    }
    return a;
}

// The scores q k^T * scale, masked (bool: -inf where false; float: added) and causal-bounded
// (-inf above the diagonal), as (..., Hq, L, S).
static int32_t masked_scores(hg_db* b, const hg_cop_call* k, const attn_in* a, int32_t mask_in,
                             int32_t ninf) {
    const hg_tensor *q = k->in[0], *mask = mask_in >= 0 ? k->in[k->op == HG_COP_ATTENTION ? 3 : 6]
                                                        : NULL;
    int32_t nd = q->ndim;
    int64_t L = q->shape[nd - 2], S = k->in[1]->shape[nd - 2];
    int32_t s = hg_db_scalar(b, HG_BINARY_MUL, matmul(b, a->q, permute_last2(b, a->k, a->gnd)),
                             k->eps);
    int64_t sshape[HG_MAX_DIMS];
    for (int32_t d = 0; d < nd - 1; d++) sshape[d] = q->shape[d];
    sshape[nd - 1] = S;
    if (a->grouped) s = hg_db_reshape(b, s, nd, sshape);
    if (mask && mask->dtype == HG_DTYPE_BOOL) s = hg_db_where(b, mask_in, s, ninf);
    else if (mask) s = hg_db_binary(b, HG_BINARY_ADD, s, hg_db_cast(b, mask_in, hg_db_stat_dtype(q->dtype)));
    if (k->flags & 1) {   // query i attends keys j <= i
        int32_t ri = -1, ci = -1;
        if (!b->s) b->s = hg_graph_arange(b->g, HG_DTYPE_I64, L, &ri);
        if (!b->s) b->s = hg_graph_arange(b->g, HG_DTYPE_I64, S, &ci);
        int64_t col[2] = {L, 1};
        int32_t keep = hg_db_binary(b, HG_BINARY_LE, ci, hg_db_reshape(b, ri, 2, col));
        s = hg_db_where(b, keep, s, ninf);
    }
    return s;
}

// x (..., Hq, L, X) as (..., Hk, G, L, X) when grouped.
static int32_t to_grouped(hg_db* b, const attn_in* a, int32_t x, const hg_tensor* q, int64_t X) {
    if (!a->grouped) return x;
    int64_t gs[HG_MAX_DIMS + 1];
    grouped_shape(q, a->hk, a->hq / a->hk, gs);
    gs[q->ndim] = X;
    return hg_db_reshape(b, x, q->ndim + 1, gs);
}

hg_status hg_decomp_attention(hg_graph g, const hg_cop_call* k, const int32_t* in,
                              int32_t* out) {
    hg_db b = {g, HG_OK};
    const hg_tensor *q = k->in[0], *kt = k->in[1], *mask = k->in[3];
    hg_dtype cdt = hg_db_stat_dtype(q->dtype);
    int32_t nd = q->ndim;
    int64_t S = kt->shape[nd - 2];
    attn_in a = attn_inputs(&b, k, in[0], in[1], in[2], -1, -1, NULL);
    int32_t ninf = -1;
    if (!b.s) b.s = hg_graph_constant(g, cdt, hg_scalar_f(-INFINITY), &ninf);
    int32_t s = masked_scores(&b, k, &a, mask ? in[3] : -1, ninf);
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
    p = to_grouped(&b, &a, hg_db_where(&b, dead, zero, p), q, S);
    int32_t o = matmul(&b, p, a.v);
    if (a.grouped) {
        int64_t oshape[HG_MAX_DIMS];
        for (int32_t d = 0; d < nd - 1; d++) oshape[d] = q->shape[d];
        oshape[nd - 1] = k->in[2]->shape[nd - 1];
        o = hg_db_reshape(&b, o, nd, oshape);
    }
    out[0] = hg_db_cast(&b, o, q->dtype);
    return b.s;
}

// The backward from the forward's lse: P = exp(scores - lse) (0 where masked, and for a query
// that attended nothing: lse 0, scores -inf); grad_v = P^T grad_out; dS = P * (grad_out v^T -
// rowsum(grad_out * out)) * scale; grad_q = dS k; grad_k = dS^T q; grouped heads summed over
// their group. in: q, k, v, grad_out, out, lse, mask.
hg_status hg_decomp_attention_bw(hg_graph g, const hg_cop_call* k, const int32_t* in,
                                 int32_t* out) {
    hg_db b = {g, HG_OK};
    const hg_tensor *q = k->in[0], *kt = k->in[1], *mask = k->in[6];
    hg_dtype cdt = hg_db_stat_dtype(q->dtype);
    int32_t nd = q->ndim;
    int64_t S = kt->shape[nd - 2];
    attn_in a = attn_inputs(&b, k, in[0], in[1], in[2], in[3], in[4], k->in[3]);
    int32_t ninf = -1;
    if (!b.s) b.s = hg_graph_constant(g, cdt, hg_scalar_f(-INFINITY), &ninf);
    int32_t s = masked_scores(&b, k, &a, mask ? in[6] : -1, ninf);
    int64_t lshape[HG_MAX_DIMS];   // lse as (..., Hq, L, 1)
    for (int32_t d = 0; d < nd - 1; d++) lshape[d] = q->shape[d];
    lshape[nd - 1] = 1;
    int32_t lse = hg_db_reshape(&b, hg_db_cast(&b, in[5], cdt), nd, lshape);
    int32_t p = hg_db_unary(&b, HG_UNARY_EXP, hg_db_binary(&b, HG_BINARY_SUB, s, lse));
    p = to_grouped(&b, &a, p, q, S);
    int32_t gv = matmul(&b, permute_last2(&b, p, a.gnd), a.go);
    int32_t dp = matmul(&b, a.go, permute_last2(&b, a.v, a.gnd));
    int32_t ax = a.gnd - 1;
    int32_t dd = hg_db_reduce(&b, HG_REDUCE_SUM, hg_db_binary(&b, HG_BINARY_MUL, a.go, a.o), 1,
                              &ax, 1);
    int32_t ds = hg_db_scalar(&b, HG_BINARY_MUL,
                              hg_db_binary(&b, HG_BINARY_MUL, p,
                                           hg_db_binary(&b, HG_BINARY_SUB, dp, dd)), k->eps);
    int32_t gq = matmul(&b, ds, a.k);
    int32_t gk = matmul(&b, permute_last2(&b, ds, a.gnd), a.q);
    if (a.grouped) {   // (..., Hk, G, X, Y): q's shape back; k's and v's summed over G
        int32_t gax = nd - 2;
        gq = hg_db_reshape(&b, gq, nd, q->shape);
        gk = hg_db_reduce(&b, HG_REDUCE_SUM, gk, 1, &gax, 0);
        gv = hg_db_reduce(&b, HG_REDUCE_SUM, gv, 1, &gax, 0);
    }
    out[0] = hg_db_cast(&b, gq, q->dtype);
    out[1] = hg_db_cast(&b, gk, q->dtype);
    out[2] = hg_db_cast(&b, gv, q->dtype);
    return b.s;
}
