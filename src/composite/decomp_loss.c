// The decomposition of cross_entropy_backward (the op's definition; composite.h): with
// p = softmax(logits) along the class dim (the graph's softmax node: the row kernel),
//   class probabilities t:  (p sum_c t_c - t) * scale      (targets need not sum to 1)
//   class indices t:        p * w - (w at the target class, +0 elsewhere),
//                           w = scale where t != ignore_index, else 0
// scale = grad per sample (NONE), grad (SUM), grad / samples (MEAN; class indices: / the
// samples counted, at least 1), in f32 (f64 for f64 logits). A class index in [-C, 0) counts
// from the end (the entry has checked that every index is in [-C, C) or ignore_index). The
// class-index form equals the composed one it replaced bit for bit (p * w rounded, then w
// subtracted at the target, as its scatter_add of -w did).
#include "base/dtype.h"
#include "base/shape.h"
#include "composite/decomp.h"
#include "graph/graph_internal.h"

hg_status hg_decomp_ce_bw(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out) {
    hg_db b = {g, HG_OK};
    const hg_tensor *lt = k->in[0], *tt = k->in[1];
    hg_dtype cdt = hg_db_stat_dtype(lt->dtype);
    int32_t cdim = k->axis, nd = lt->ndim;
    int64_t ncls = lt->shape[cdim], kshape[HG_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++)   // the logits' shape with a class dim of 1
        kshape[d] = d == cdim ? 1 : lt->shape[d];
    int64_t nsamples = hg_shape_numel(nd, kshape);
    int32_t p = -1, sc = hg_db_cast(&b, in[2], cdt);
    if (!b.s) b.s = hg_graph_softmax(g, hg_db_cast(&b, in[0], cdt), cdim, 0, &p);
    if (hg_dtype_is_float((int)tt->dtype)) {
        int32_t t = hg_db_cast(&b, in[1], cdt);
        int32_t ts = hg_db_reduce(&b, HG_REDUCE_SUM, t, 1, &cdim, 1);
        int32_t d = hg_db_binary(&b, HG_BINARY_MUL, p, ts);
        d = hg_db_binary(&b, HG_BINARY_SUB, d, t);
        if (k->reduction == HG_REDUCTION_MEAN)
            sc = hg_db_scalar(&b, HG_BINARY_DIV, sc, (double)nsamples);
        if (k->reduction == HG_REDUCTION_NONE) sc = hg_db_reshape(&b, sc, nd, kshape);
        out[0] = hg_db_binary(&b, HG_BINARY_MUL, d, sc);
        return b.s;
    }
    int32_t t = hg_db_cast(&b, in[1], HG_DTYPE_I64);
    int32_t mask = hg_db_scalar_i(&b, HG_BINARY_NE, t, k->ignore_index);
    int32_t keep = hg_db_cast(&b, mask, cdt);
    if (k->reduction == HG_REDUCTION_MEAN) {
        // Every sample ignored: no row takes the scale, so the gradient is 0 as torch's;
        // counting at least 1 keeps 0 * inf out of it.
        int32_t cnt = hg_db_reduce(&b, HG_REDUCE_SUM, keep, 0, NULL, 0);
        sc = hg_db_binary(&b, HG_BINARY_DIV, sc, hg_db_scalar(&b, HG_BINARY_MAXIMUM, cnt, 1.0));
    }
    int32_t w = hg_db_reshape(&b, hg_db_binary(&b, HG_BINARY_MUL, keep, sc), nd, kshape);
    // ignored samples point at class 0 (where w is +-0), as the composed form's scatter did
    t = hg_db_reshape(&b, hg_db_binary(&b, HG_BINARY_MUL, t, mask), nd, kshape);
    int32_t neg = hg_db_scalar_i(&b, HG_BINARY_LT, t, 0);
    t = hg_db_where(&b, neg, hg_db_scalar_i(&b, HG_BINARY_ADD, t, ncls), t);
    int64_t cshape[HG_MAX_DIMS];   // the class ids along the class dim
    for (int32_t d = 0; d < nd; d++) cshape[d] = d == cdim ? ncls : 1;
    int32_t ids = -1;
    if (!b.s) b.s = hg_graph_arange(g, HG_DTYPE_I64, ncls, &ids);
    ids = hg_db_reshape(&b, ids, nd, cshape);
    // w where the class is the target, else +0 (so that p * w keeps its sign of zero)
    int32_t zero = -1;
    if (!b.s) b.s = hg_graph_constant(g, cdt, hg_scalar_f(0.0), &zero);
    int32_t at = hg_db_where(&b, hg_db_binary(&b, HG_BINARY_EQ, ids, t), w, zero);
    out[0] = hg_db_binary(&b, HG_BINARY_SUB, hg_db_binary(&b, HG_BINARY_MUL, p, w), at);
    return b.s;
}
