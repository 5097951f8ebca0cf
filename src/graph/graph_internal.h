// Internal: the objects behind hg_graph / hg_plan handles and the compiler's passes
// (canonicalize -> fuse -> lower -> plan; docs/graph.md).
//
// Ownership: a graph object owns its IR. A plan owns its kernels, its lowered IR copy and its
// pool of intermediate-memory arenas; it is linked into its executor's HG_EXT_GRAPH list so that
// hg_executor_destroy destroys it (after which its handle is dead).
#ifndef HG_GRAPH_GRAPH_INTERNAL_H
#define HG_GRAPH_GRAPH_INTERNAL_H
#include <pthread.h>
#include <stdint.h>
#include "runtime/objects.h"
#include "graph/graph_ir.h"
#include "graph/rules.h"
#include "hologram.h"
#include "ops/elementwise/ewise.h"

typedef struct hg_graph_obj {
    uint64_t handle;
    hg_gir ir;
} hg_graph_obj;

// The graph of a live handle, or NULL with HG_ERR_INVALID_HANDLE naming fn.
hg_graph_obj* hg_graph_resolve(hg_graph g, const char* fn);

// The builder call of the internal node kinds (not in the public header): 0, 1, ..., n - 1 in
// dtype (a real or integer dtype; n >= 0), for decompositions that compare against indices.
hg_status hg_graph_arange(hg_graph g, hg_dtype dtype, int64_t n, int32_t* out_node);

// Compiler switches (the public compile takes them from the environment; tests set them).
typedef struct hg_compile_opts {
    int rewrites;    // apply the rule table (0: keep every node as built)
    int fold;        // constant folding
    int fusion;      // HOLOGRAM_DISABLE_FUSION=1 clears it
    int dump;        // HOLOGRAM_DUMP=passes sets it: print the IR after each pass to stderr
} hg_compile_opts;
void hg_compile_opts_from_env(hg_compile_opts* o);
hg_status hg_graph_compile_opts(hg_graph g, hg_executor ex, const hg_compile_opts* o,
                                hg_plan* out);

// ---- passes ----
// canonicalize: rewrites g in place (rules, constant folding on ex, CSE by rebuilding through
// hash-consing, DCE). *rewrites counts rule applications and folds; rule_hits (HG_RULE_COUNT
// entries, may be NULL) counts each rule.
hg_status hg_pass_canonicalize(hg_gir* g, hg_executor_obj* ex, const hg_compile_opts* o,
                               int32_t* rewrites, int32_t* rule_hits);
// fuse: assigns each node a kernel group (-1: not in a group: inputs, library nodes, reshapes).
// A group is a set of elementwise nodes computed by one hg_ew_expr over the shape of its root;
// a trailing reduction joins its operand's group (fused_reduce[group] = reduce node, else -1);
// a group that the kernels reading it recompute, with no step of its own, is marked
// HG_GROUP_RECOMPUTED there.
#define HG_GROUP_RECOMPUTED (-2)
// emit_at[gid]: the node id at which the group's kernel runs (its root, or an earlier one where
// a later sibling group joined it: pass_fuse.c merge_siblings); -1 for a group left empty.
hg_status hg_pass_fuse(const hg_gir* g, int fusion, int32_t* group, int32_t* ngroups,
                       int32_t* fused_reduce, int32_t* emit_at);

// ---- plans ----
typedef enum hg_step_kind {
    HG_STEP_EW = 0,        // one elementwise kernel (a fusion group)
    HG_STEP_EW_REDUCE,     // elementwise group + trailing full reduction in one ISA kernel
    HG_STEP_REDUCE,        // library call hg_reduce_into
    HG_STEP_SOFTMAX,       // library call hg_softmax_into
    HG_STEP_NORM,          // library call hg_layer_norm / hg_rms_norm
    HG_STEP_MATMUL,        // library call hg_matmul_into
    HG_STEP_ARANGE,        // library call hg_arange (no inputs)
    HG_STEP_RESHAPE,       // view of the source (copied into its slot where no view exists)
    HG_STEP_COPY,          // output = value (an output that is an input, or listed twice)
    HG_STEP_VIEW,          // permute / slice: a strided view of the source (never a copy)
    HG_STEP_CONCAT,        // each input copied into its range of the output along the axis
    HG_STEP_KIND_COUNT
} hg_step_kind;

typedef struct hg_fused_reduce hg_fused_reduce;   // reduce_fused.c

typedef struct hg_plan_step {
    hg_step_kind kind;
    int32_t node;              // the node it computes (the group's root)
    int32_t nin, nout;
    int32_t* in;               // value ids
    int32_t* out;              // value ids
    hg_ew_kernel* kernel;      // EW
    hg_fused_reduce* fred;     // EW_REDUCE
    int32_t ew_nodes;          // EW: graph nodes in the kernel
} hg_plan_step;

typedef enum hg_value_home {
    HG_HOME_INPUT = 0,   // the caller's input tensor `index`
    HG_HOME_OUTPUT,      // the caller's output tensor `index`
    HG_HOME_SLOT,        // arena slot `index` (C-contiguous)
    HG_HOME_VIEW,        // a view of value `src`: a reshape (slot `index` holds a copy if
                         // needed), or a permute / slice (`strided`: always a view, no slot)
    HG_HOME_PART,        // a concat's part written in place: the range [part_at, part_at +
                         // shape[part_axis]) of value `src` (the concat's output) along part_axis
} hg_value_home;

typedef struct hg_plan_value {
    int32_t node;
    hg_dtype dtype;
    int32_t ndim;
    int64_t shape[HG_MAX_DIMS];
    hg_value_home home;
    int32_t index;
    int32_t src;
    int32_t strided;     // HG_HOME_VIEW of a permute / slice node
    int32_t part_axis;   // HG_HOME_PART
    int64_t part_at;
} hg_plan_value;

typedef struct hg_plan_slot {
    hg_dtype dtype;
    int64_t count;       // elements
} hg_plan_slot;

// One run's intermediate memory: a buffer per slot.
typedef struct hg_plan_arena {
    hg_buffer* buffers;
    struct hg_plan_arena* next;
} hg_plan_arena;

typedef struct hg_plan_obj {
    uint64_t handle;
    hg_executor_obj* ex;
    hg_gir ir;                 // after canonicalization (printing, shapes)
    int32_t ninputs, noutputs;
    hg_plan_value* values;     // value table (one per materialized node, plus views)
    int32_t nvalues;
    int32_t* input_value;      // input index -> value
    int32_t* output_value;     // output index -> value computed for it
    hg_plan_step* steps;
    int32_t nsteps;
    hg_plan_slot* slots;
    int32_t nslots;
    hg_plan_info info;
    int32_t rule_hits[HG_RULE_COUNT];
    pthread_mutex_t pool_lock; // guards `pool`
    hg_plan_arena* pool;       // arenas not in use
    struct hg_plan_obj *prev, *next;   // executor's list
} hg_plan_obj;

// lower + plan: builds the steps, values and slots of p from the fused IR.
hg_status hg_pass_lower(hg_plan_obj* p, const int32_t* group, int32_t ngroups,
                        const int32_t* fused_reduce, const int32_t* emit_at);
hg_status hg_pass_plan(hg_plan_obj* p);
// Releases everything a plan owns (not its handle).
void hg_plan_release(hg_plan_obj* p);
hg_status hg_plan_print_text(const hg_plan_obj* p, char** out_text);

// ---- fused trailing reduction (reduce_fused.c) ----
// A kernel computing expression e's single output and reducing it over all elements with op
// (sum / mean / min / max), result of dtype rdt. NULL with HG_ERR_UNSUPPORTED when the case is
// not handled (the caller then lowers the group and the reduction separately).
hg_status hg_fused_reduce_create(hg_executor_obj* ex, const hg_ew_expr* e, hg_reduce_op op,
                                 hg_dtype rdt, hg_fused_reduce** out);
void hg_fused_reduce_destroy(hg_fused_reduce* f);
// In a forked child: the lock made anew (its holder, if any, is gone).
void hg_fused_reduce_fork_child(hg_fused_reduce* f);
// inputs: e's inputs; out: 0-d (or all-ones shape) tensor of rdt. HG_ERR_UNSUPPORTED when the
// input layouts are not ones the kernel reads directly (contiguous or single-element).
hg_status hg_fused_reduce_run(hg_fused_reduce* f, const hg_tensor* inputs, const hg_tensor* out);
int32_t hg_fused_reduce_instr_count(const hg_fused_reduce* f);
// Runs that took the fallback (for tests).
extern _Atomic int64_t hg_graph_reduce_fallbacks;

#endif
