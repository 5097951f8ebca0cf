// Internal: the canonicalizer's algebraic rewrite rules, as data (docs/graph.md has the table).
//
// Each rule is {pattern, rewrite, condition, identity}: patterns and rewrites are
// s-expressions over the elementwise ops, named as hg_unary_op_name / hg_binary_op_name name
// them, plus `where` and `cast` (a rewrite's cast converts to the matched node's dtype);
// `x`, `y`, `z` capture nodes (a variable used twice matches one node, which hash-consing makes
// the same as matching equal subgraphs); numbers match constants (0-d, or expanded 0-d) whose
// value in their dtype is exactly that number (-0.0 matches only negative zero). A rule applies
// when the condition holds for x's dtype (and, for a constant rewrite, for the matched node's
// dtype too: mixed dtypes may promote) and the rewrite has the matched node's dtype; a smaller
// rewrite is broadcast back to the node's shape. Every rule gives bit-identical results for all
// inputs (NaNs stay NaN; a NaN's sign and payload may differ where the comment says so).
#ifndef HG_GRAPH_RULES_H
#define HG_GRAPH_RULES_H
#include <stdint.h>
#include "graph/graph_ir.h"

typedef enum hg_rule_when {
    HG_WHEN_ANY = 0,     // every dtype
    HG_WHEN_NUM,         // integers and floats (not bool)
    HG_WHEN_INT,         // integers (not bool)
    HG_WHEN_FLOAT,       // floats
    HG_WHEN_BOOL,        // bool
    HG_WHEN_INT_BOOL,    // integers and bool
    HG_WHEN_LOSSLESS,    // the inner cast converts x's dtype without loss (and, for an
                         // integer target, the two conversions are of one kind)
    HG_WHEN_SIGNED,      // signed integers and floats
    HG_WHEN_COUNT
} hg_rule_when;

typedef struct hg_rule {
    const char* pattern;
    const char* rewrite;
    hg_rule_when when;
    const char* identity;   // why the rewrite is exact
} hg_rule;

#define HG_RULE_COUNT 58
extern const hg_rule hg_rule_table[HG_RULE_COUNT];
const char* hg_rule_when_name(hg_rule_when w);

// Parsed patterns (for the matcher and for tests that instantiate every rule).
typedef enum hg_pat_kind {
    HG_PAT_VAR = 0, HG_PAT_CONST, HG_PAT_UNARY, HG_PAT_BINARY, HG_PAT_WHERE, HG_PAT_CAST,
    HG_PAT_KIND_COUNT
} hg_pat_kind;
typedef struct hg_pat {
    hg_pat_kind kind;
    int32_t op;          // UNARY / BINARY op, VAR index (0 = x, 1 = y, 2 = z)
    double value;        // CONST
    int32_t nkids;
    int32_t kid[3];      // indices into the same pool
} hg_pat;
// The parsed pattern (which = 0) or rewrite (which = 1) of a rule: *pool and the root index.
// HG_ERR_INTERNAL if the table does not parse (a bug, caught by the tests).
hg_status hg_rule_parsed(int rule, int which, const hg_pat** pool, int32_t* root);

// 1 if every value of dtype `from` converts to `to` and back without change.
int hg_dtype_lossless(hg_dtype from, hg_dtype to);

// Adds a node through the caller (which simplifies and hash-conses it); -1 on failure.
typedef int32_t (*hg_rule_mk)(void* ctx, const hg_gnode* n);
// Tries the rules in table order on node id of g. Returns the replacement node (>= 0; *rule =
// its index), -1 when none applies, or -2 on failure (error set).
int32_t hg_rules_apply(hg_gir* g, int32_t id, hg_rule_mk mk, void* ctx, int* rule);

#endif
