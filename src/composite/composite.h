// Internal: the composite layer (docs/architecture.md "Composite ops"). A composite op is
// defined once, as a decomposition: a function that adds the op's nodes over the graph
// compiler's primitives (elementwise, cast, reshape, reduce, ...) to a graph. Its public entry
// checks the arguments once, then runs the override the table (overrides.c) has for the op on
// the call's route when its dtypes and layout predicate hold - the tuned row kernels of
// src/ops/rows - and otherwise the decomposition, compiled for the call's executor, dtypes and
// shapes and cached per executor (composite_run.c).
//
//     hg_cop_call k = {.op = HG_COP_SOFTMAX_BW, .c = &c, .in = {grad, y}, .out = {out},
//                      .axis = ax};
//     s = hg_cop_dispatch(&k);          // an override, else the compiled decomposition
//
// This layer sits above the op families and the graph compiler; no family calls into it.
#ifndef HG_COMPOSITE_COMPOSITE_H
#define HG_COMPOSITE_COMPOSITE_H
#include <stdatomic.h>
#include <stdint.h>
#include "hologram.h"
#include "ops/common/dev_ops.h"
#include "ops/common/op_common.h"
#include "ops/common/op_dispatch.h"

typedef enum hg_cop {
    HG_COP_SOFTMAX = 0,        // in: x; out: y; axis
    HG_COP_LOG_SOFTMAX,
    HG_COP_SOFTMAX_BW,         // in: grad, y; out: grad_x; axis
    HG_COP_LOG_SOFTMAX_BW,
    HG_COP_LAYER_NORM_BW,      // in: grad, x, weight?, mean?, rstd? (both or neither: given, the
                               //   statistics are not recomputed); out: grad_x?, grad_weight?,
    HG_COP_RMS_NORM_BW,        //   grad_bias?; axis = nnorm, eps. rms: in grad, x, weight?
    HG_COP_LAYER_NORM,         // in: x, weight?, bias?; out: y, mean?, rstd?; axis = nnorm, eps
    HG_COP_RMS_NORM,           // in: x, weight?; out: y; axis = nnorm, eps
    HG_COP_CE_BW,              // in: logits, target, grad; out: grad_logits; axis = the class
                               //   dim, ignore_index, reduction (targets checked by the entry)
    HG_COP_ADAM,               // in: param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq?; out:
                               //   param, exp_avg, exp_avg_sq, max_exp_avg_sq? (in place);
                               //   scalars: ops/optim/adam.h's hg_adam_scalar; flags: its options
    HG_COP_MSE,                // in: pred, target; out: loss; reduction, rdtype
    HG_COP_BCE,                // in: prob, target, weight?; out: loss; reduction, rdtype
    HG_COP_BCE_LOGITS,         // in: logits, target, weight?, pos_weight?; out: loss; the same
    HG_COP_CE,                 // in: logits, target; out: loss; axis = the class dim,
                               //   ignore_index, reduction, rdtype (targets checked by the entry)
    HG_COP_ATTENTION,          // in: q, k, v, mask?; out: out, lse?; eps = scale (resolved), flags:
                               //   1 = is_causal (hg_scaled_dot_product_attention)
    HG_COP_ATTENTION_BW,       // in: q, k, v, grad_out, out, lse, mask?; out: grad_q, grad_k,
                               //   grad_v; eps, flags as HG_COP_ATTENTION
    HG_COP_COUNT
} hg_cop;

#define HG_COP_MAX_IN 7
#define HG_COP_MAX_OUT 4
// Scalars given per call (not compiled into the plan: Adam's change every step).
#define HG_COP_MAX_SCALARS 8

// One call after its checks: inputs and outputs in the op's order, NULL where an optional one
// is absent (an output not asked for). axis: normalized (softmax) or nnorm (norms).
typedef struct hg_cop_call {
    hg_cop op;
    hg_op_ctx* c;
    const hg_tensor* in[HG_COP_MAX_IN];
    hg_tensor* out[HG_COP_MAX_OUT];
    int32_t axis;
    double eps;
    int64_t ignore_index;
    int32_t reduction;         // hg_reduction
    uint32_t flags;            // the op's options that shape its decomposition (Adam's)
    const double* scalars;     // hg_cop_info.nscalars values, inputs of the plan (0-d tensors
                               //   of in[0]'s dtype: each rounded to it once, as weak scalars)
    int32_t rdtype;            // losses: the dtype each loss is rounded to once (hg_dtype)
} hg_cop_call;

// A decomposition: adds the op's nodes to g from the input nodes (in[i] = -1 where the input
// is absent; in[HG_COP_MAX_IN + j]: the 0-d node of scalars[j]) and sets out[o] to the node of
// each output (in its computation dtype: the runner
// casts it to the output tensor's dtype). Builder errors are returned as they are.
typedef hg_status (*hg_cop_decomp_fn)(hg_graph g, const hg_cop_call* k, const int32_t* in,
                                      int32_t* out);

typedef struct hg_cop_info {
    const char* name;          // the public function ("hg_softmax")
    int nin, nout, nscalars;
    hg_cop_decomp_fn decomp;   // decomp_*.c
    hg_op_family family;       // whose route picks the override (op_dispatch.h)
} hg_cop_info;
extern const hg_cop_info hg_cop_table[HG_COP_COUNT];

// ---- overrides (overrides.c) ----
// A tuned kernel for (op, route, dtypes, layout): taken when the call's executor routes the op's
// family (hg_cop_info.family: rows, loss or optim; every family but matmul routes
// alike: host memory HOST, device memory DEVICE) to `route` (LIBRARY is never a route of those
// families), in[0]'s dtype (the op's main float input: inputs are ordered so) is in `dtypes` (a
// mask of 1u << hg_dtype) and `when` (NULL: always) holds.
typedef int (*hg_cop_pred_fn)(const hg_cop_call* k);
typedef hg_status (*hg_cop_kernel_fn)(const hg_cop_call* k);
typedef struct hg_cop_override {
    hg_cop op;
    hg_op_route route;
    uint32_t dtypes;
    hg_cop_pred_fn when;
    hg_cop_kernel_fn run;
    const char* name;          // for the parity harness and docs ("host f32/f64 rows")
} hg_cop_override;
// The routes an op family can take without a library (hg_op_route: HOST, DEVICE).
#define HG_COP_ROUTES 2
// The table: at most one override per (op, route); run NULL where there is none.
extern const hg_cop_override hg_cop_overrides[HG_COP_COUNT][HG_COP_ROUTES];

// The override for the call, or NULL (then the decomposition runs). Inline, as the dispatch:
// an index, the dtype mask and the predicate.
static inline const hg_cop_override* hg_cop_override_find(const hg_cop_call* k) {
    hg_dtype t = k->in[0]->dtype;
    hg_op_route r = hg_op_route_of(k->c, hg_cop_table[k->op].family, t);
    if ((unsigned)r >= HG_COP_ROUTES) return NULL;
    const hg_cop_override* o = &hg_cop_overrides[k->op][r];
    return o->run && (o->dtypes >> t & 1u) && (!o->when || o->when(k)) ? o : NULL;
}

// ---- running ----
// The decomposition compiled for the call's executor, dtypes, shapes and parameters (cached per
// executor: at most HG_COP_CACHE_MAX plans, the least recently used one not running evicted
// for a new one). Inputs may have any strides; outputs may overlap inputs (hg_plan_run).
#define HG_COP_CACHE_MAX 256
hg_status hg_cop_run_decomp(const hg_cop_call* k);

// HOLOGRAM_COMPOSITE: "auto" (overrides where they apply, the default) or "decomp" (every
// composite op runs its decomposition: for the parity harness and for measuring).
typedef enum hg_cop_mode { HG_COP_AUTO = 0, HG_COP_DECOMP, HG_COP_MODE_COUNT } hg_cop_mode;
extern _Atomic int hg_cop_mode_now;   // -1 until the environment is read
hg_cop_mode hg_cop_mode_read(void);
static inline hg_cop_mode hg_cop_mode_get(void) {
    int m = atomic_load_explicit(&hg_cop_mode_now, memory_order_relaxed);
    return m >= 0 ? (hg_cop_mode)m : hg_cop_mode_read();
}
// Tests: sets the mode for the process (over the environment).
void hg_cop_mode_set(hg_cop_mode m);
// Override or decomposition (HG_COP_DECOMP: always the decomposition). Inline: a 1-row softmax
// of 16 elements is ~2,100 instructions, and every call layer shows.
static inline hg_status hg_cop_dispatch(const hg_cop_call* k) {
    if (hg_cop_mode_get() == HG_COP_AUTO) {
        const hg_cop_override* o = hg_cop_override_find(k);
        if (o) return o->run(k);
    }
    return hg_cop_run_decomp(k);
}

// hg_adam_step's host override (optim_api.c): C-contiguous f32/f64, the fused kernel.
int hg_cop_adam_host_ok(const hg_cop_call* k);
hg_status hg_cop_adam_host(const hg_cop_call* k);

// hg_scaled_dot_product_attention's host override (attention_api.c): f32/f64 rows of unit
// stride, the fused kernel of ops/attention.
int hg_cop_attention_host_ok(const hg_cop_call* k);
hg_status hg_cop_attention_host(const hg_cop_call* k);
// Its backward's (the fused kernel of ops/attention/attention_bw.c).
int hg_cop_attention_bw_host_ok(const hg_cop_call* k);
hg_status hg_cop_attention_bw_host(const hg_cop_call* k);

// cross_entropy_backward's device override (loss_api.c): class indices over a last class dim,
// rows at one row stride.
int hg_cop_ce_bw_dev_ok(const hg_cop_call* k);
hg_status hg_cop_ce_bw_dev(const hg_cop_call* k);
// Its host override (loss_host.c): class indices over a last class dim, out C-contiguous.
int hg_cop_ce_bw_host_ok(const hg_cop_call* k);
hg_status hg_cop_ce_bw_host(const hg_cop_call* k);

// The losses' device overrides (loss_dev.c): the device kernels of ops/loss/dev_loss.c, their
// per-element losses summed by the reduce family's device kernel.
hg_status hg_cop_loss_ew_dev(const hg_cop_call* k);
// The loss family's kind of an elementwise loss op (HG_COP_MSE, _BCE, _BCE_LOGITS).
static inline hg_dev_loss hg_cop_loss_kind(hg_cop op) {
    return op == HG_COP_MSE ? HG_DEV_MSE : op == HG_COP_BCE ? HG_DEV_BCE : HG_DEV_BCE_LOGITS;
}
hg_status hg_cop_ce_dev(const hg_cop_call* k);
// The first element of prob outside [0, 1] (C order, NaN included) on a device: *at its index
// (-1: none), *bad its value.
hg_status hg_cop_first_bad_prob_dev(hg_op_ctx* c, const hg_tensor* prob, int64_t* at,
                                    double* bad);

// Cache statistics of ex (tests): plans held, hits, compiles.
void hg_cop_cache_stats(hg_executor ex, int64_t* plans, int64_t* hits, int64_t* compiles);

#endif
