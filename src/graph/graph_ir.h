// Internal: the graph IR of the graph compiler (docs/graph.md).
//
// A small flat IR: an op enum (hg_gop) with a metadata table, and nodes that are plain structs
// referring to their operands by index. Operands always precede their users, so node order is a
// topological order. Nodes are hash-consed: adding a node equal to an existing one returns the
// existing id, which is CSE by construction (inputs are never merged: each carries its index).
//
//     hg_gir g;  hg_gir_init(&g);
//     hg_gnode n = hg_gnode_make(HG_GOP_INPUT, 0, HG_DTYPE_F32, 1, (int64_t[]){n});
//     n.aux = g.ninputs++;
//     int32_t a = hg_gir_add(&g, &n);          // -1 only when out of memory
//     ...  hg_gir_verify(&g);  hg_gir_print(&g, NULL, &text);  hg_gir_free(&g);
#ifndef HG_GRAPH_GRAPH_IR_H
#define HG_GRAPH_GRAPH_IR_H
#include <stddef.h>
#include <stdint.h>
#include "hologram.h"

typedef enum hg_gop {
    HG_GOP_INPUT = 0,   // aux = input index (creation order)
    HG_GOP_CONST,       // 0-d constant: value (the scalar as given; dtype says how it converts)
    HG_GOP_UNARY,       // op = hg_unary_op, in[0]
    HG_GOP_BINARY,      // op = hg_binary_op, in[0], in[1] (broadcast)
    HG_GOP_WHERE,       // in[0] ? in[1] : in[2]
    HG_GOP_FMA,         // in[0] * in[1] + in[2], one rounding for floats
    HG_GOP_CAST,        // in[0] converted to dtype
    HG_GOP_EXPAND,      // in[0] broadcast to shape
    HG_GOP_RESHAPE,     // in[0]'s elements in C order with shape
    HG_GOP_REDUCE,      // op = hg_reduce_op, aux = axes mask | keepdims << 32
    HG_GOP_SOFTMAX,     // op = log flag, aux = axis (normalized)
    HG_GOP_MATMUL,      // in[0] @ in[1]
    HG_GOP_ARANGE,      // 1-d 0, 1, ..., n - 1 in dtype (internal: decompositions' class ids)
    HG_GOP_PERMUTE,     // in[0] with dims reordered: out dim i is dim perm[i]; aux = perm, 4 bits
                        // per dim (hg_gperm_get)
    HG_GOP_SLICE,       // in[0][..., start::step, ...] on dim op, shape[op] elements; aux = start,
                        // aux2 = step (> 0)
    HG_GOP_CONCAT,      // in[0] and in[1] joined along dim op (n inputs: a left fold)
    HG_GOP_NORM,        // layer norm (op 0) / rms norm (op 1) of in[0] over its last aux dims;
                        // in[1] weight, in[2] bias, each in[0] itself where absent (aux2 bits:
                        // HG_GNORM_WEIGHT, HG_GNORM_BIAS); eps in value.f
    HG_GOP_NORM_STAT,   // the mean (op 0) / rstd (op 1) a layer norm node in[0] normalized with:
                        // its shape with the last aux (its dims) as 1; no step of its own, an
                        // output of in[0]'s norm step
    HG_GOP_COUNT
} hg_gop;

typedef struct hg_gop_info {
    const char* name;
    int arity;          // operands
    int elementwise;    // 1: fusable into one hg_ew_expr (expand is a broadcast: a no-op there)
} hg_gop_info;
extern const hg_gop_info hg_gop_table[HG_GOP_COUNT];
#define HG_GNORM_WEIGHT 1
#define HG_GNORM_BIAS 2

typedef struct hg_gnode {
    int32_t kind;                 // hg_gop
    int32_t op;                   // sub-op (see hg_gop)
    hg_dtype dtype;
    int32_t ndim;
    int64_t shape[HG_MAX_DIMS];   // entries beyond ndim are 0
    int32_t in[3];                // operands (-1 unused)
    int64_t aux;
    int64_t aux2;                 // SLICE: step
    hg_scalar value;              // CONST
} hg_gnode;

typedef struct hg_gir {
    hg_gnode* nodes;
    int32_t n, cap;
    int32_t* table;               // hash-consing: open addressing, node id + 1 (0 = empty)
    uint32_t table_cap;
    int32_t* outputs;             // node ids in hg_graph_output order
    int32_t noutputs, out_cap;
    int32_t ninputs;
} hg_gir;

void hg_gir_init(hg_gir* g);
void hg_gir_free(hg_gir* g);
// A node with kind/op/dtype/shape set, operands -1, aux 0, value 0.
hg_gnode hg_gnode_make(hg_gop kind, int32_t op, hg_dtype dtype, int32_t ndim, const int64_t* shape);
// Adds n (or finds an equal node). Returns the id, or -1 with HG_ERR_OUT_OF_MEMORY set.
int32_t hg_gir_add(hg_gir* g, const hg_gnode* n);
hg_status hg_gir_add_output(hg_gir* g, int32_t node);
// Deep copy (dst uninitialized). HG_ERR_OUT_OF_MEMORY on failure (dst then empty).
hg_status hg_gir_copy(hg_gir* dst, const hg_gir* src);
int64_t hg_gir_numel(const hg_gnode* n);
// A permutation packed into PERMUTE's aux (4 bits per dim) and read back.
int64_t hg_gperm_pack(int32_t ndim, const int32_t* perm);
static inline int32_t hg_gperm_get(const hg_gnode* n, int32_t i) {
    return (int32_t)(((uint64_t)n->aux >> (4 * i)) & 15u);
}
int hg_gir_same_shape(const hg_gnode* a, const hg_gnode* b);
// 1 if a shape broadcasts to another (numpy rules, dims aligned at the end).
int hg_shape_broadcasts_to(int32_t na, const int64_t* a, int32_t nb, const int64_t* b);
// Structural checks (operands earlier, arity, dtypes, shapes, outputs). HG_ERR_INTERNAL with the
// node and the problem on failure: a failing verify after a pass is a bug in that pass.
hg_status hg_gir_verify(const hg_gir* g, const char* after_pass);
// One node per line ("%3 = add %1, %2 : f32(16)"). group (may be NULL) gives each node's fusion
// group (-1: none), printed as "[k2]". Text is malloc'd.
hg_status hg_gir_print(const hg_gir* g, const int32_t* group, char** out_text);
// Name of the node's operation for printing ("add", "relu", "reduce.sum", "input", ...).
const char* hg_gnode_op_name(const hg_gnode* n);
// Text of a scalar constant in its dtype, into buf (64 bytes).
const char* hg_gscalar_text(hg_dtype dtype, hg_scalar v, char* buf, size_t len);

// A growable text buffer for printers.
typedef struct hg_strbuf {
    char* s;
    size_t len, cap;
    int failed;
} hg_strbuf;
void hg_sb_printf(hg_strbuf* b, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
// Returns the text (NULL with HG_ERR_OUT_OF_MEMORY set if any append failed).
char* hg_sb_take(hg_strbuf* b);

#endif
