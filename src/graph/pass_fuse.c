// fuse: groups elementwise nodes into kernels (one hg_ew_expr each) and attaches trailing
// reductions.
//
// Groups grow from a root (the last node of the group in topological order, processed from the
// end of the graph) towards the inputs: an elementwise node joins when every consumer of it is
// already in the group (so nothing outside needs it materialized) and its shape broadcasts to
// the root's (it is then recomputed per iteration element, which is exact: elementwise ops are
// pure). A member that is also a graph output joins only when it has the root's shape (it is
// stored as an extra output of the kernel); its consumers outside the group, when they all come
// after the root, then read it from memory. A member of a much smaller shape is not recomputed
// per element of a large root (recompute_ok). Constants never form groups of their own
// unless they are outputs: every kernel that reads one inlines it. Limits: HG_EW_MAX_NODES nodes
// and HG_EW_MAX_INPUTS distinct inputs per kernel (members are given back until it fits).
#include <stdlib.h>
#include <string.h>
#include "base/error.h"
#include "base/shape.h"
#include "graph/graph_internal.h"

static int is_ew(const hg_gnode* n) { return hg_gop_table[n->kind].elementwise; }

// Ops that cost more than a few instructions an element: divisions, powers and the
// transcendental functions (several of them evaluated in f64).
static int is_costly(const hg_gnode* n) {
    if (n->kind == HG_GOP_BINARY)
        return n->op == HG_BINARY_DIV || n->op == HG_BINARY_FLOOR_DIVIDE ||
               n->op == HG_BINARY_REMAINDER || n->op == HG_BINARY_POW;
    if (n->kind != HG_GOP_UNARY) return 0;
    switch ((hg_unary_op)n->op) {
    case HG_UNARY_NEG: case HG_UNARY_ABS: case HG_UNARY_SIGN: case HG_UNARY_SQUARE:
    case HG_UNARY_RELU: case HG_UNARY_FLOOR: case HG_UNARY_CEIL: case HG_UNARY_ROUND:
    case HG_UNARY_TRUNC: case HG_UNARY_LOGICAL_NOT: case HG_UNARY_BITWISE_NOT:
    case HG_UNARY_ISNAN: case HG_UNARY_ISINF: case HG_UNARY_ISFINITE:
        return 0;
    default:
        return 1;
    }
}

// A member is recomputed for every element of its root's iteration space. A member of a much
// smaller shape (a per-row statistic broadcast over the row, rsqrt(var + eps)) stays out when the
// root is large: it is then the root of a small kernel of its own, with the small nodes that feed
// only it, computed once per element of its own shape, and the large kernel reads the result
// broadcast. Each recomputed op costs about a cycle an element (more for a broadcast along the
// innermost axis, and tens of cycles for the f64 transcendentals), a separate launch a few
// microseconds (docs/performance.md).
#define FUSE_RECOMPUTE_RATIO 8
#define FUSE_RECOMPUTE_MIN 16384          // root elements from which a small member stays out
#define FUSE_RECOMPUTE_MIN_COSTLY 2048    // the same for a costly member

static int recompute_ok(const hg_gnode* on, const hg_gnode* r) {
    int64_t m = hg_shape_numel(on->ndim, on->shape), n = hg_shape_numel(r->ndim, r->shape);
    if (m == n || on->kind == HG_GOP_EXPAND || n < FUSE_RECOMPUTE_RATIO * m) return 1;
    return n < (is_costly(on) ? FUSE_RECOMPUTE_MIN_COSTLY : FUSE_RECOMPUTE_MIN);
}

typedef struct fuse_ctx {
    const hg_gir* g;
    int32_t *cons_start, *cons;    // CSR: consumers of each node
    char* is_output;
    int32_t* group;
} fuse_ctx;

static int all_consumers_in(const fuse_ctx* f, int32_t o, int32_t gid) {
    int32_t a = f->cons_start[o], b = f->cons_start[o + 1];
    if (a == b) return 0;
    for (int32_t i = a; i < b; i++)
        if (f->group[f->cons[i]] != gid) return 0;
    return 1;
}

// Every consumer of o outside group gid comes after the root: a graph output the kernel stores
// anyway can then be read from memory by those (it cannot feed back into the kernel).
static int consumers_after(const fuse_ctx* f, int32_t o, int32_t gid, int32_t root) {
    for (int32_t i = f->cons_start[o]; i < f->cons_start[o + 1]; i++)
        if (f->group[f->cons[i]] != gid && f->cons[i] < root) return 0;
    return 1;
}

// Distinct operands from outside the group (constants are inlined, so they do not count).
static int32_t count_inputs(const fuse_ctx* f, int32_t gid, int32_t root, char* seen) {
    int32_t k = 0;
    memset(seen, 0, (size_t)f->g->n);
    for (int32_t id = 0; id <= root; id++) {
        if (f->group[id] != gid) continue;
        const hg_gnode* n = &f->g->nodes[id];
        for (int i = 0; i < hg_gop_table[n->kind].arity; i++) {
            int32_t o = n->in[i];
            if (f->group[o] == gid || seen[o] || f->g->nodes[o].kind == HG_GOP_CONST) continue;
            seen[o] = 1;
            k++;
        }
    }
    return k;
}

// Groups recomputed by the kernels that read them (red[gid] = HG_GROUP_RECOMPUTED) instead of
// stored: a small group of cheap ops with the shape of its readers, read only by elementwise
// members of other groups (none of them fused with a reduction), that is no output. A node read
// by two kernels (a residual sum feeding a reduction's operand and the gradient; dy * w in
// RMSNorm's backward) is otherwise a kernel of its own that writes it and two that read it
// back. Decided from the last group down: a group read by a recomputed one is computed by that
// one's readers in turn (up to RECOMPUTE_MAX_DEPTH levels), and every kernel that ends up
// computing it keeps its node and input counts within the kernel limits.
#define RECOMPUTE_MAX_MEMBERS 4
#define RECOMPUTE_MAX_DEPTH 3

typedef struct recompute_ctx {
    const fuse_ctx* f;
    int32_t *red, *members, *inputs, *root;
} recompute_ctx;

// Whether the kernels that would compute group k (its readers, and through recomputed readers
// theirs) can take add_m more members and add_i more inputs; with charge, adds them (a reader
// reached twice is charged twice: an upper bound).
static int grow(const recompute_ctx* c, int32_t k, int32_t add_m, int32_t add_i, int charge,
                int depth) {
    const fuse_ctx* f = c->f;
    if (depth > RECOMPUTE_MAX_DEPTH) return 0;
    for (int32_t id = 0; id <= c->root[k]; id++) {
        if (f->group[id] != k) continue;
        for (int32_t i = f->cons_start[id]; i < f->cons_start[id + 1]; i++) {
            int32_t cg = f->group[f->cons[i]];
            if (cg == k) continue;
            if (cg < 0) return 0;
            if (c->red[cg] == HG_GROUP_RECOMPUTED) {
                if (!grow(c, cg, add_m, add_i, charge, depth + 1)) return 0;
            } else if (charge) {
                c->members[cg] += add_m;
                c->inputs[cg] += add_i;
            } else if (c->red[cg] != -1 || c->members[cg] + add_m > HG_EW_MAX_NODES / 4 ||
                       c->inputs[cg] + add_i > HG_EW_MAX_INPUTS) {
                return 0;
            }
        }
    }
    return 1;
}

static int choose_recomputed(const fuse_ctx* f, int32_t ng, int32_t* red, char* seen) {
    const hg_gir* g = f->g;
    int32_t* info = malloc(((size_t)ng * 3 + 1) * sizeof *info);   // members, inputs, root
    if (!info) return 1;
    recompute_ctx c = {f, red, info, info + ng, info + 2 * ng};
    for (int32_t k = 0; k < ng; k++) c.members[k] = 0;
    for (int32_t id = 0; id < g->n; id++)
        if (f->group[id] >= 0) { c.members[f->group[id]]++; c.root[f->group[id]] = id; }
    for (int32_t k = 0; k < ng; k++) c.inputs[k] = count_inputs(f, k, c.root[k], seen);
    for (int32_t k = ng - 1; k >= 0; k--) {
        int ok = red[k] == -1 && c.members[k] <= RECOMPUTE_MAX_MEMBERS, readers = 0;
        int64_t numel = hg_gir_numel(&g->nodes[c.root[k]]);
        for (int32_t id = 0; id <= c.root[k] && ok; id++) {
            if (f->group[id] != k) continue;
            ok = !f->is_output[id] && !is_costly(&g->nodes[id]) &&
                 g->nodes[id].kind != HG_GOP_CONST;
            for (int32_t i = f->cons_start[id]; i < f->cons_start[id + 1] && ok; i++) {
                int32_t cg = f->group[f->cons[i]];
                if (cg == k) continue;
                ok = cg >= 0 && hg_gir_numel(&g->nodes[c.root[cg]]) == numel;
                readers++;
            }
        }
        if (!ok || !readers || !grow(&c, k, c.members[k], c.inputs[k], 0, 0)) continue;
        red[k] = HG_GROUP_RECOMPUTED;
        grow(&c, k, c.members[k], c.inputs[k], 1, 0);
    }
    free(info);
    return 0;
}

// Sibling kernels: two plain groups of one shape where the later one (B) reads what the earlier
// one (A) reads or computes run as one kernel at A's place, storing what either stores: Llama's
// SiLU backward wrote sigmoid(gate) in one kernel, read it with the gradient and gate in a
// second (d_up, read by a matmul) and again in a third (d_gate). B joins A when every value it
// reads from outside is computed before A's place (so the merged kernel can run there); a
// plain group read only by the merged one (the sigmoid) then joins it too, its value no longer
// stored. Concat parts and groups with fused or recomputed reductions stay as they are.
typedef struct merge_ctx {
    const fuse_ctx* f;
    const int32_t* red;
    int32_t *emit, *members, *root;
    char* seen;
} merge_ctx;

// Every value the members of group k read from outside groups a and k is ready before position
// `at` (computed by a step before it), and none of k's members is read by a concat.
static int ready_before(const merge_ctx* m, int32_t k, int32_t a, int32_t at) {
    const hg_gir* g = m->f->g;
    const int32_t* group = m->f->group;
    for (int32_t id = 0; id < g->n; id++) {
        if (group[id] != k) continue;
        const hg_gnode* n = &g->nodes[id];
        for (int i = 0; i < hg_gop_table[n->kind].arity; i++) {
            int32_t o = n->in[i], og = group[o];
            if (og == k || og == a || (g->nodes[o].kind == HG_GOP_CONST && og < 0)) continue;
            if (o >= at) return 0;
            if (og >= 0 && (m->red[og] == HG_GROUP_RECOMPUTED || m->emit[og] >= at)) return 0;
        }
        for (int32_t i = m->f->cons_start[id]; i < m->f->cons_start[id + 1]; i++)
            if (g->nodes[m->f->cons[i]].kind == HG_GOP_CONCAT) return 0;
    }
    return 1;
}

// Members of a and b, distinct outside operands, and values stored (read outside the union, or
// outputs, and the union's last member) of the union of groups a and b.
static void union_counts(const merge_ctx* m, int32_t a, int32_t b, int32_t* nodes,
                         int32_t* inputs, int32_t* stored) {
    const fuse_ctx* f = m->f;
    const hg_gir* g = f->g;
    int32_t last = -1;
    *nodes = *inputs = *stored = 0;
    memset(m->seen, 0, (size_t)g->n);
    for (int32_t id = 0; id < g->n; id++) {
        int32_t k = f->group[id];
        if (k != a && k != b) continue;
        last = id;
        ++*nodes;
        const hg_gnode* n = &g->nodes[id];
        for (int i = 0; i < hg_gop_table[n->kind].arity; i++) {
            int32_t o = n->in[i], og = f->group[o];
            if (og == a || og == b || m->seen[o] || g->nodes[o].kind == HG_GOP_CONST) continue;
            m->seen[o] = 1;
            ++*inputs;
        }
    }
    for (int32_t id = 0; id < last; id++) {
        int32_t k = f->group[id];
        if (k != a && k != b) continue;
        int out = f->is_output[id];
        for (int32_t i = f->cons_start[id]; i < f->cons_start[id + 1] && !out; i++)
            out = f->group[f->cons[i]] != a && f->group[f->cons[i]] != b;
        *stored += out;
    }
    ++*stored;   // the last member
}

// Whether group b reads a value group a reads or computes.
static int shares(const merge_ctx* m, int32_t a, int32_t b) {
    const fuse_ctx* f = m->f;
    const hg_gir* g = f->g;
    memset(m->seen, 0, (size_t)g->n);
    for (int32_t id = 0; id < g->n; id++) {
        if (f->group[id] != a) continue;
        m->seen[id] = 1;
        const hg_gnode* n = &g->nodes[id];
        for (int i = 0; i < hg_gop_table[n->kind].arity; i++) m->seen[n->in[i]] = 1;
    }
    for (int32_t id = 0; id < g->n; id++) {
        if (f->group[id] != b) continue;
        const hg_gnode* n = &g->nodes[id];
        for (int i = 0; i < hg_gop_table[n->kind].arity; i++)
            if (m->seen[n->in[i]] && g->nodes[n->in[i]].kind != HG_GOP_CONST) return 1;
    }
    return 0;
}

static int fits(const merge_ctx* m, int32_t a, int32_t b) {
    int32_t nodes, inputs, stored;
    union_counts(m, a, b, &nodes, &inputs, &stored);
    return nodes <= HG_EW_MAX_NODES / 4 && inputs <= HG_EW_MAX_INPUTS &&
           stored <= HG_EW_MAX_OUTPUTS;
}

static void join(merge_ctx* m, int32_t a, int32_t b) {
    int32_t* group = m->f->group;
    for (int32_t id = 0; id < m->f->g->n; id++)
        if (group[id] == b) group[id] = a;
    m->members[a] += m->members[b];
    m->members[b] = 0;
    if (m->root[b] > m->root[a]) m->root[a] = m->root[b];
    m->emit[b] = -1;
}

// Group c's members are read only by c itself and group a.
static int read_only_by(const fuse_ctx* f, int32_t c, int32_t a) {
    for (int32_t id = 0; id < f->g->n; id++) {
        if (f->group[id] != c) continue;
        if (f->is_output[id] || f->cons_start[id] == f->cons_start[id + 1]) return 0;
        for (int32_t i = f->cons_start[id]; i < f->cons_start[id + 1]; i++)
            if (f->group[f->cons[i]] != c && f->group[f->cons[i]] != a) return 0;
    }
    return 1;
}

// Candidates: the SIBLING_WINDOW groups before a group (in root order), where siblings are in
// practice; the pass stays linear in the graph's size (each check walks the graph).
#define SIBLING_WINDOW 8

static void merge_siblings(const fuse_ctx* f, int32_t ng, const int32_t* red, int32_t* emit,
                           char* seen) {
    const hg_gir* g = f->g;
    int32_t* members = calloc((size_t)ng * 2 + 1, sizeof *members);
    if (!members) return;   // an optimization: without memory the groups stay as they are
    merge_ctx m = {f, red, emit, members, members + ng, seen};
    for (int32_t id = 0; id < g->n; id++)
        if (f->group[id] >= 0) members[f->group[id]]++, m.root[f->group[id]] = id;
    for (int32_t b = 1; b < ng; b++) {
        if (red[b] != -1 || !members[b]) continue;
        int32_t rb = m.root[b];
        for (int32_t a = b - 1; a >= 0 && a >= b - SIBLING_WINDOW; a--) {
            if (red[a] != -1 || !members[a] || emit[a] < 0) continue;
            int32_t ra = m.root[a];
            if (!hg_gir_same_shape(&g->nodes[ra], &g->nodes[rb]) || !shares(&m, a, b) ||
                !ready_before(&m, b, a, emit[a]) || !ready_before(&m, a, b, emit[a]) ||
                !fits(&m, a, b))
                continue;
            join(&m, a, b);
            // Groups read only by the union now join it (their values no longer stored).
            const hg_gnode* r = &g->nodes[m.root[a]];
            int32_t lo = a - SIBLING_WINDOW > 0 ? a - SIBLING_WINDOW : 0;
            for (int changed = 1; changed;) {
                changed = 0;
                for (int32_t c = lo; c < b; c++) {
                    if (c == a || red[c] != -1 || !members[c] || emit[c] < 0) continue;
                    const hg_gnode* cr = &g->nodes[m.root[c]];
                    if (!hg_shape_broadcasts_to(cr->ndim, cr->shape, r->ndim, r->shape) ||
                        !recompute_ok(cr, r) || !read_only_by(f, c, a) ||
                        !ready_before(&m, c, a, emit[a]) || !fits(&m, a, c))
                        continue;
                    join(&m, a, c);
                    changed = 1;
                }
            }
            break;
        }
    }
    free(members);
}

hg_status hg_pass_fuse(const hg_gir* g, int fusion, int32_t* group, int32_t* ngroups,
                       int32_t* fused_reduce, int32_t* emit_at) {
    int32_t n = g->n;
    fuse_ctx f = {g, calloc((size_t)n + 1, sizeof(int32_t)), NULL, calloc((size_t)n + 1, 1), group};
    char* seen = malloc((size_t)n + 1);
    int32_t* fill = calloc((size_t)n + 1, sizeof(int32_t));
    int32_t* renum = malloc(((size_t)n + 1) * sizeof(int32_t));
    int32_t* red = malloc(((size_t)n + 1) * sizeof(int32_t));
    hg_status s = HG_OK;
    if (!f.cons_start || !f.is_output || !seen || !fill || !renum || !red) goto oom;
    int32_t edges = 0;
    for (int32_t id = 0; id < n; id++)
        for (int i = 0; i < hg_gop_table[g->nodes[id].kind].arity; i++) {
            f.cons_start[g->nodes[id].in[i] + 1]++;
            edges++;
        }
    for (int32_t id = 0; id < n; id++) f.cons_start[id + 1] += f.cons_start[id];
    f.cons = malloc(((size_t)edges + 1) * sizeof(int32_t));
    if (!f.cons) goto oom;
    for (int32_t id = 0; id < n; id++)
        for (int i = 0; i < hg_gop_table[g->nodes[id].kind].arity; i++) {
            int32_t o = g->nodes[id].in[i];
            f.cons[f.cons_start[o] + fill[o]++] = id;
        }
    for (int32_t i = 0; i < g->noutputs; i++) f.is_output[g->outputs[i]] = 1;
    for (int32_t id = 0; id < n; id++) group[id] = -1;

    int32_t ng = 0;
    for (int32_t root = n - 1; root >= 0; root--) {
        const hg_gnode* r = &g->nodes[root];
        if (!is_ew(r) || group[root] >= 0) continue;
        if (r->kind == HG_GOP_CONST && !f.is_output[root]) {
            // Inlined by the kernels that read it, unless a library call needs it in memory.
            int lib = 0;
            for (int32_t i = f.cons_start[root]; i < f.cons_start[root + 1]; i++)
                lib |= !is_ew(&g->nodes[f.cons[i]]);
            if (!lib) continue;
        }
        int32_t gid = ng++;
        group[root] = gid;
        if (!fusion) continue;
        int32_t members = 1, extra_outputs = 0;
        for (int32_t o = root - 1; o >= 0; o--) {
            const hg_gnode* on = &g->nodes[o];
            if (group[o] >= 0 || !is_ew(on) || on->kind == HG_GOP_CONST) continue;
            // Each member adds at most 3 operand nodes (inputs, constants) to the expression.
            if (members >= HG_EW_MAX_NODES / 4) break;
            if (!hg_shape_broadcasts_to(on->ndim, on->shape, r->ndim, r->shape)) continue;
            if (!recompute_ok(on, r)) continue;
            if (f.is_output[o] && (!hg_gir_same_shape(on, r) || extra_outputs >= HG_EW_MAX_OUTPUTS - 1))
                continue;
            if (!all_consumers_in(&f, o, gid) &&
                !(f.is_output[o] && consumers_after(&f, o, gid, root)))
                continue;
            group[o] = gid;
            members++;
            extra_outputs += f.is_output[o];
        }
        // Too many inputs: give members back (lowest first, with whatever then has a consumer
        // outside) until the kernel's inputs fit.
        while (count_inputs(&f, gid, root, seen) > HG_EW_MAX_INPUTS) {
            for (int32_t o = 0; o < root; o++)
                if (group[o] == gid) { group[o] = -1; break; }
            for (int changed = 1; changed;) {
                changed = 0;
                for (int32_t o = root - 1; o >= 0; o--)
                    if (group[o] == gid && !all_consumers_in(&f, o, gid)) { group[o] = -1; changed = 1; }
            }
        }
        // Given-back members are roots of groups of their own: the loop above visits them
        // later (lower ids), since it walks downward from this root.
    }
    // Number groups in the order of their roots (their highest member): a topological order
    // of the kernels.
    for (int32_t k = 0; k < ng; k++) red[k] = -1;
    for (int32_t id = 0; id < n; id++)
        if (group[id] >= 0) red[group[id]] = id;
    int32_t next = 0;
    for (int32_t id = 0; id < n; id++)
        if (group[id] >= 0 && red[group[id]] == id) renum[group[id]] = next++;
    for (int32_t id = 0; id < n; id++)
        if (group[id] >= 0) group[id] = renum[group[id]];
    for (int32_t k = 0; k < ng; k++) red[k] = -1;
    // Trailing full reductions (sum/mean/min/max over every element) of a group's root that
    // only the reduction reads join that group.
    for (int32_t id = 0; fusion && id < n; id++) {
        const hg_gnode* r = &g->nodes[id];
        if (r->kind != HG_GOP_REDUCE) continue;
        if (r->op != HG_REDUCE_SUM && r->op != HG_REDUCE_MEAN && r->op != HG_REDUCE_MIN &&
            r->op != HG_REDUCE_MAX)
            continue;
        int32_t x = r->in[0];
        const hg_gnode* xn = &g->nodes[x];
        uint32_t all = xn->ndim >= 32 ? 0xFFFFFFFFu : ((1u << xn->ndim) - 1u);
        if ((uint32_t)r->aux != all || group[x] < 0 || f.is_output[x] || xn->kind == HG_GOP_CONST)
            continue;
        if (f.cons_start[x + 1] - f.cons_start[x] != 1) continue;
        int32_t gid = group[x];
        int root = 1;   // x must be the group's root (its highest member)
        for (int32_t j = x + 1; j < n && root; j++) root = group[j] != gid;
        if (!root || red[gid] >= 0) continue;
        red[gid] = id;
    }
    if (fusion && choose_recomputed(&f, ng, red, seen)) goto oom;
    for (int32_t k = 0; k < ng; k++) emit_at[k] = -1;
    for (int32_t id = 0; id < n; id++)
        if (group[id] >= 0) emit_at[group[id]] = id;   // a group's kernel runs at its root
    if (fusion) merge_siblings(&f, ng, red, emit_at, seen);
    for (int32_t k = 0; k < ng; k++) fused_reduce[k] = red[k];
    *ngroups = ng;
    goto done;
oom:
    s = hg_error(HG_ERR_OUT_OF_MEMORY, "graph fuse: out of memory");
done:
    free(f.cons_start);
    free(f.cons);
    free(f.is_output);
    free(seen);
    free(fill);
    free(renum);
    free(red);
    return s;
}
