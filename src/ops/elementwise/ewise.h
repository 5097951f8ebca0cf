// Internal: elementwise expressions and their ISA kernels — the one place where the semantics
// of every elementwise op (hg_unary_op, hg_binary_op, where, fma, cast, clip) is turned into
// Atlas ISA. Eager elementwise ops are one-node expressions; the graph compiler's fuse pass
// hands whole chains (with broadcasts) to the same generator, so fused and unfused results
// agree by construction: each node rounds to its own dtype exactly as the eager op would.
//
//     hg_ew_expr e;  hg_ew_expr_init(&e, 1, (int64_t[]){n});
//     int32_t a = hg_ew_input(&e, HG_DTYPE_F32, 1, (int64_t[]){n});
//     int32_t b = hg_ew_input(&e, HG_DTYPE_F32, 1, (int64_t[]){n});
//     int32_t y = hg_ew_binary(&e, HG_BINARY_ADD, a, b);      // < 0 on error (message set)
//     hg_ew_output(&e, y, HG_DTYPE_F32);
//     hg_ew_kernel* k;  hg_ew_kernel_create(ex, &e, &k);       // ISA program, compiled
//     hg_ew_kernel_run(k, (hg_tensor[]){ta, tb}, (hg_tensor[]){ty});
#ifndef HG_OPS_EWISE_H
#define HG_OPS_EWISE_H
#include <stdint.h>
#include "runtime/objects.h"
#include "hologram.h"
#include "isa/program.h"

#define HG_EW_MAX_NODES 256
#define HG_EW_MAX_INPUTS 16
#define HG_EW_MAX_OUTPUTS 8

// ---- dtype rules (numpy), shared by eager ops, the graph builder and the emitter ----
// Result dtype of a unary op on x (HG_ERR_DTYPE_MISMATCH with a message if unsupported).
hg_status hg_ew_unary_dtype(hg_unary_op op, hg_dtype x, hg_dtype* out);
// Result dtype of a binary op, and the dtype both operands are converted to before it.
hg_status hg_ew_binary_dtype(hg_binary_op op, hg_dtype a, hg_dtype b, hg_dtype* out,
                             hg_dtype* operands);
// Dtype of a weak scalar next to a tensor of dtype t (NEP 50; see hg_scalar in hologram.h).
hg_dtype hg_ew_scalar_dtype(hg_scalar s, hg_dtype t);
// NEP 50: an integer scalar must fit the dtype t it takes (HG_ERR_OUT_OF_RANGE with fn's
// message otherwise).
hg_status hg_ew_check_int_scalar(const char* fn, hg_scalar s, hg_dtype t);
// numpy's answer for an integer scalar that does not fit the dtype it takes next to a tensor of
// dtype t, as one rewrite of the call (the eager op and the graph builder both take it):
// comparisons answer by value, for every element (*op becomes logical or/and with a bool
// scalar, *scalar_first 0); true division takes the int as an f64; logical ops only whether it
// is zero. Anything else is refused as hg_ew_check_int_scalar refuses. Fitting scalars pass
// unchanged.
hg_status hg_ew_scalar_operand(const char* fn, hg_binary_op* op, hg_scalar* s, hg_dtype t,
                               int* scalar_first);

typedef enum hg_ew_kind {
    HG_EW_INPUT = 0,   // kernel input `input`, broadcast to the iteration shape
    HG_EW_CONST,       // 0-d constant `value` of `dtype`
    HG_EW_UNARY,       // op = hg_unary_op, in[0]
    HG_EW_BINARY,      // op = hg_binary_op, in[0], in[1]
    HG_EW_WHERE,       // in[0] ? in[1] : in[2] (in[0] any dtype, nonzero = true)
    HG_EW_FMA,         // in[0] * in[1] + in[2], one rounding for floats
    HG_EW_CAST,        // in[0] converted to dtype (cvt semantics)
    HG_EW_KIND_COUNT
} hg_ew_kind;

typedef struct hg_ew_node {
    hg_ew_kind kind;
    int32_t op;            // hg_unary_op / hg_binary_op
    hg_dtype dtype;        // result dtype (what the eager op would produce)
    int32_t in[3];         // operand nodes (indices of earlier nodes; -1 unused)
    int32_t input;         // INPUT: index into inputs[]
    hg_scalar value;       // CONST
} hg_ew_node;

typedef struct hg_ew_operand {
    hg_dtype dtype;
    int32_t ndim;
    int64_t shape[HG_MAX_DIMS];   // broadcastable to the iteration shape (numpy rules)
} hg_ew_operand;

typedef struct hg_ew_expr {
    int32_t ndim;                          // iteration (output) shape
    int64_t shape[HG_MAX_DIMS];
    int32_t nnodes;
    hg_ew_node nodes[HG_EW_MAX_NODES];
    int32_t ninputs;
    hg_ew_operand inputs[HG_EW_MAX_INPUTS];
    int32_t noutputs;
    struct { int32_t node; hg_dtype dtype; } outputs[HG_EW_MAX_OUTPUTS];  // stored with cvt
} hg_ew_expr;

// Building (each returns the new node index, or -1 with hg_last_error set; dtypes follow the
// rules above, so a builder error is the same error the eager op gives).
void hg_ew_expr_init(hg_ew_expr* e, int32_t ndim, const int64_t* shape);
int32_t hg_ew_input(hg_ew_expr* e, hg_dtype dtype, int32_t ndim, const int64_t* shape);
int32_t hg_ew_const(hg_ew_expr* e, hg_dtype dtype, hg_scalar value);
int32_t hg_ew_unary(hg_ew_expr* e, hg_unary_op op, int32_t x);
int32_t hg_ew_binary(hg_ew_expr* e, hg_binary_op op, int32_t a, int32_t b);
int32_t hg_ew_where(hg_ew_expr* e, int32_t cond, int32_t a, int32_t b);
int32_t hg_ew_fma(hg_ew_expr* e, int32_t a, int32_t b, int32_t c);
int32_t hg_ew_cast(hg_ew_expr* e, int32_t x, hg_dtype dtype);
hg_status hg_ew_output(hg_ew_expr* e, int32_t node, hg_dtype store_dtype);

// Emits the instructions that compute every node of e into registers of prog, given registers
// holding each input's element (in the input's dtype). node_regs[i] receives node i's register
// (of node i's dtype). Used by the kernel generator below and by fused reductions.
hg_status hg_ew_emit(hg_prog* prog, const hg_ew_expr* e, const uint32_t* input_regs,
                     uint32_t* node_regs);

// A compiled kernel for one expression on one executor. It runs for any strides of its
// inputs and outputs (specialized internally on layout classes, e.g. all C-contiguous).
typedef struct hg_ew_kernel hg_ew_kernel;
hg_status hg_ew_kernel_create(hg_executor_obj* ex, const hg_ew_expr* e, hg_ew_kernel** out);
// The same with ex->launch_lock already held by the caller.
hg_status hg_ew_kernel_create_locked(hg_executor_obj* ex, const hg_ew_expr* e,
                                     hg_ew_kernel** out);
void hg_ew_kernel_destroy(hg_ew_kernel* k);
// Inputs/outputs: checked tensors of the expression's dtypes and shapes on k's executor
// (outputs: the iteration shape). The caller has checked aliasing.
hg_status hg_ew_kernel_run(hg_ew_kernel* k, const hg_tensor* inputs, const hg_tensor* outputs);
// Number of ISA instructions per element (for plan printing and tests).
int32_t hg_ew_kernel_instr_count(const hg_ew_kernel* k);

#endif
