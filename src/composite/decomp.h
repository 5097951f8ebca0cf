// Internal: a small builder for decompositions (decomp_*.c): each call adds one node to the
// graph through the public builder (so every node is checked as the eager op checks it) and
// keeps the first error, so that a decomposition reads as its formula and returns b.s once.
#ifndef HG_COMPOSITE_DECOMP_H
#define HG_COMPOSITE_DECOMP_H
#include "composite/composite.h"

typedef struct hg_db {
    hg_graph g;
    hg_status s;     // the first builder error (then every later call adds nothing)
} hg_db;

static inline int32_t hg_db_unary(hg_db* b, hg_unary_op op, int32_t x) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_unary(b->g, op, x, &r);
    return r;
}

static inline int32_t hg_db_binary(hg_db* b, hg_binary_op op, int32_t x, int32_t y) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_binary(b->g, op, x, y, &r);
    return r;
}

// x op v with v a weak (NEP 50) float scalar, as hg_binary_scalar.
static inline int32_t hg_db_scalar(hg_db* b, hg_binary_op op, int32_t x, double v) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_binary_scalar(b->g, op, x, hg_scalar_f(v), 0, &r);
    return r;
}

// x converted to t (x itself when it has dtype t already).
static inline int32_t hg_db_cast(hg_db* b, int32_t x, hg_dtype t) {
    int32_t r = x, nd;
    hg_dtype dt;
    int64_t shape[HG_MAX_DIMS];
    if (!b->s) b->s = hg_graph_node_info(b->g, x, &dt, &nd, shape);
    if (!b->s && dt != t) b->s = hg_graph_cast(b->g, x, t, &r);
    return r;
}

static inline int32_t hg_db_reduce(hg_db* b, hg_reduce_op op, int32_t x, int32_t naxes,
                                   const int32_t* axes, int keepdims) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_reduce(b->g, op, x, naxes, axes, keepdims, &r);
    return r;
}

// x op v with v a weak integer scalar.
static inline int32_t hg_db_scalar_i(hg_db* b, hg_binary_op op, int32_t x, int64_t v) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_binary_scalar(b->g, op, x, hg_scalar_i(v), 0, &r);
    return r;
}

static inline int32_t hg_db_where(hg_db* b, int32_t cond, int32_t x, int32_t y) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_where(b->g, cond, x, y, &r);
    return r;
}

static inline int32_t hg_db_reshape(hg_db* b, int32_t x, int32_t ndim, const int64_t* shape) {
    int32_t r = -1;
    if (!b->s) b->s = hg_graph_reshape(b->g, x, ndim, shape, &r);
    return r;
}

// The statistics' dtype of the row ops: f64 for f64, else f32 (f16/bf16 computed in f32).
static inline hg_dtype hg_db_stat_dtype(hg_dtype t) {
    return t == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
}

// The decompositions (hg_cop_decomp_fn), listed in hg_cop_table (composite_run.c).
hg_status hg_decomp_softmax(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out);
hg_status hg_decomp_softmax_bw(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out);
hg_status hg_decomp_ce_bw(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out);
hg_status hg_decomp_norm(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out);
hg_status hg_decomp_ew_loss(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out);
hg_status hg_decomp_ce(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out);
hg_status hg_decomp_norm_bw(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out);
hg_status hg_decomp_adam(hg_graph g, const hg_cop_call* k, const int32_t* in, int32_t* out);
hg_status hg_decomp_attention(hg_graph g, const hg_cop_call* k, const int32_t* in,
                              int32_t* out);
hg_status hg_decomp_attention_bw(hg_graph g, const hg_cop_call* k, const int32_t* in,
                                 int32_t* out);

#endif
