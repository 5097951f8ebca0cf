// hologram/graph.h — part of libhologram's public header: graphs and plans: the graph compiler's
// API.
// Include <hologram.h>, which includes every part; the conventions at its top (errors,
// handles, ownership, thread safety) apply here.
#ifndef HOLOGRAM_GRAPH_H
#define HOLOGRAM_GRAPH_H

#include "hologram/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Graphs and plans ("canonical form compilation"; docs/graph.md).
//
//     hg_graph g;  int32_t a, b, c, t, y;  hg_plan plan;
//     hg_graph_create(&g);
//     hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &a);   ... b, c
//     hg_graph_binary(g, HG_BINARY_MUL, a, b, &t);
//     hg_graph_binary(g, HG_BINARY_ADD, t, c, &t);
//     hg_graph_unary(g, HG_UNARY_RELU, t, &t);
//     hg_graph_binary_scalar(g, HG_BINARY_MUL, t, hg_scalar_f(0.5), 0, &y);
//     hg_graph_output(g, y);
//     hg_graph_compile(g, ex, &plan);                 // one fused ISA kernel
//     hg_plan_run(plan, 3, (hg_tensor[]){ta, tb, tc}, 1, (hg_tensor[]){ty});
//
// Nodes are int32 ids local to the graph. Building validates shapes and dtypes at once (same
// rules and messages as the eager ops). Passes, in order: canonicalize (rewrite rules, constant
// folding, CSE by hash-consing, DCE) -> fuse -> lower -> plan. HOLOGRAM_DUMP=passes prints the
// graph after each pass to stderr; HOLOGRAM_DISABLE_FUSION=1 turns fusion off.
// Thread safety: building one graph is not thread-safe; a compiled plan is immutable and may be
// run from several threads at once (each run uses its own intermediate memory).
// ---------------------------------------------------------------------------------------------
typedef struct hg_graph { uint64_t handle; } hg_graph;
typedef struct hg_plan { uint64_t handle; } hg_plan;

// Release with hg_graph_destroy.
HG_API hg_status hg_graph_create(hg_graph* out);
HG_API hg_status hg_graph_destroy(hg_graph g);
// An input bound at run time (in the order of creation).
HG_API hg_status hg_graph_input(hg_graph g, hg_dtype dtype, int32_t ndim, const int64_t* shape,
                                int32_t* out_node);
// A 0-d constant of dtype.
HG_API hg_status hg_graph_constant(hg_graph g, hg_dtype dtype, hg_scalar value,
                                   int32_t* out_node);
HG_API hg_status hg_graph_unary(hg_graph g, hg_unary_op op, int32_t x, int32_t* out_node);
HG_API hg_status hg_graph_binary(hg_graph g, hg_binary_op op, int32_t a, int32_t b,
                                 int32_t* out_node);
HG_API hg_status hg_graph_binary_scalar(hg_graph g, hg_binary_op op, int32_t a, hg_scalar s,
                                        int scalar_first, int32_t* out_node);
HG_API hg_status hg_graph_where(hg_graph g, int32_t cond, int32_t a, int32_t b,
                                int32_t* out_node);
HG_API hg_status hg_graph_fma(hg_graph g, int32_t a, int32_t b, int32_t c, int32_t* out_node);
HG_API hg_status hg_graph_cast(hg_graph g, int32_t x, hg_dtype dtype, int32_t* out_node);
HG_API hg_status hg_graph_expand(hg_graph g, int32_t x, int32_t ndim, const int64_t* shape,
                                 int32_t* out_node);
HG_API hg_status hg_graph_reshape(hg_graph g, int32_t x, int32_t ndim, const int64_t* shape,
                                  int32_t* out_node);
// Views (no copy: a kernel reading one reads its operand through strides) and concatenation.
// permute: out dim i is x's dim perm[i] (ndim == x's ndim; negative entries count from the end).
HG_API hg_status hg_graph_permute(hg_graph g, int32_t x, int32_t ndim, const int32_t* perm,
                                  int32_t* out_node);
// x[..., start:stop:step, ...] on axis with Python's rules (negative start/stop count from the
// end, out of range clamps, HG_SLICE_NONE is None); step >= 1 (a reversed view is refused).
HG_API hg_status hg_graph_slice(hg_graph g, int32_t x, int32_t axis, int64_t start, int64_t stop,
                                int64_t step, int32_t* out_node);
// numpy.concatenate of n >= 1 nodes along axis: one dtype, equal shapes except on axis (n == 1
// returns nodes[0]).
HG_API hg_status hg_graph_concat(hg_graph g, int32_t n, const int32_t* nodes, int32_t axis,
                                 int32_t* out_node);
HG_API hg_status hg_graph_reduce(hg_graph g, hg_reduce_op op, int32_t x, int32_t naxes,
                                 const int32_t* axes, int keepdims, int32_t* out_node);
HG_API hg_status hg_graph_softmax(hg_graph g, int32_t x, int32_t axis, int log, int32_t* out_node);
HG_API hg_status hg_graph_matmul(hg_graph g, int32_t a, int32_t b, int32_t* out_node);
// hg_layer_norm (rms = 0) / hg_rms_norm (rms = 1) of x over its last nnorm dims, as one library
// step of the plan (statistics in f64 per row, one pass). weight and bias: nodes of x's dtype
// and its last nnorm dims, or -1 for none (rms: bias must be -1).
HG_API hg_status hg_graph_norm(hg_graph g, int32_t x, int32_t nnorm, int32_t weight, int32_t bias,
                               double eps, int rms, int32_t* out_node);
// The row statistics a layer norm node (hg_graph_norm, rms 0) normalized with, as
// hg_layer_norm_stats writes them: which 0 the mean, 1 rstd = 1 / sqrt(var + eps); x's dtype,
// x's shape with the normalized dims as 1. Computed by the norm's own step (no second pass) on
// host executors; a device's row kernels write no statistics (hg_plan_run: HG_ERR_UNSUPPORTED
// there, build them as reductions).
HG_API hg_status hg_graph_norm_stat(hg_graph g, int32_t norm, int which, int32_t* out_node);
// Marks a node as an output (in the order of the calls).
HG_API hg_status hg_graph_output(hg_graph g, int32_t node);
// Node facts (for tracers): dtype, ndim and shape (shape needs HG_MAX_DIMS entries).
HG_API hg_status hg_graph_node_info(hg_graph g, int32_t node, hg_dtype* dtype, int32_t* ndim,
                                    int64_t* shape);
// Text of the graph (one node per line); release with hg_free.
HG_API hg_status hg_graph_print(hg_graph g, char** out_text);

// Runs the passes and compiles the kernels for ex. The plan does not refer to g afterwards.
// Release with hg_plan_destroy (or with the executor).
HG_API hg_status hg_graph_compile(hg_graph g, hg_executor ex, hg_plan* out);
HG_API hg_status hg_plan_destroy(hg_plan plan);
// Runs the plan: inputs in creation order, outputs in hg_graph_output order; shapes and dtypes
// must match the graph's exactly (any strides). Outputs follow the ops' out rules, except that
// they must exist (no allocation).
HG_API hg_status hg_plan_run(hg_plan plan, int32_t ninputs, const hg_tensor* inputs,
                             int32_t noutputs, const hg_tensor* outputs);
typedef struct hg_plan_info {
    int32_t kernels;          // ISA kernels launched per run
    int32_t library_calls;    // library calls (GEMM, reductions, ...) per run
    int32_t nodes;            // nodes after canonicalization
    int32_t rewrites;         // rewrite rules applied
    uint64_t peak_bytes;      // peak intermediate memory of one run
} hg_plan_info;
HG_API hg_status hg_plan_info_get(hg_plan plan, hg_plan_info* out);
// Text of the plan (kernels and calls; for HOLOGRAM_DUMP and debugging); release with hg_free.
HG_API hg_status hg_plan_print(hg_plan plan, char** out_text);

#ifdef __cplusplus
}
#endif
#endif  // HOLOGRAM_GRAPH_H
