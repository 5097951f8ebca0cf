// canonicalize: algebraic rewrites (rules.c), constant folding, CSE and DCE.
//
// The pass rebuilds the graph node by node through hash-consing, so equal subgraphs become one
// node (CSE) as they are rebuilt; each new node is first folded (all operands constant: the
// value is computed by the elementwise kernel itself on the executor, so folding has exactly the
// kernels' semantics), then offered to the rule table (a rewrite's new nodes are simplified the
// same way). Dead nodes are dropped at the end; inputs always stay (the run binds them by
// position). The sweep repeats until nothing changes.
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "graph/graph_internal.h"

typedef struct canon {
    hg_gir* g;
    hg_executor_obj* ex;
    const hg_compile_opts* o;
    int32_t rewrites;
    int32_t* hits;
    int depth;
    // Views already moved in this sweep (a view node as key, hash-consed; memo_val[id] its
    // result): a DAG that reads a node many ways moves each view of it once, not once per path.
    hg_gir memo;
    int32_t* memo_val;
    int32_t memo_cap;
    int keep_transpose;   // the node being rebuilt is a transpose only matmuls read (stays)
} canon;

// Value of a 1-element result as a scalar; 0 when a scalar cannot hold it exactly (u64 values
// above INT64_MAX).
static int scalar_from_bits(hg_dtype t, const unsigned char* p, hg_scalar* out) {
    switch (t) {
    case HG_DTYPE_BOOL: *out = hg_scalar_b(p[0] != 0); return 1;
    case HG_DTYPE_I8: { int8_t v; memcpy(&v, p, 1); *out = hg_scalar_i(v); return 1; }
    case HG_DTYPE_I16: { int16_t v; memcpy(&v, p, 2); *out = hg_scalar_i(v); return 1; }
    case HG_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); *out = hg_scalar_i(v); return 1; }
    case HG_DTYPE_I64: { int64_t v; memcpy(&v, p, 8); *out = hg_scalar_i(v); return 1; }
    case HG_DTYPE_U8: *out = hg_scalar_i(p[0]); return 1;
    case HG_DTYPE_U16: { uint16_t v; memcpy(&v, p, 2); *out = hg_scalar_i(v); return 1; }
    case HG_DTYPE_U32: { uint32_t v; memcpy(&v, p, 4); *out = hg_scalar_i(v); return 1; }
    case HG_DTYPE_U64: {
        uint64_t v;
        memcpy(&v, p, 8);
        if (v > (uint64_t)INT64_MAX) return 0;
        *out = hg_scalar_i((int64_t)v);
        return 1;
    }
    case HG_DTYPE_F16: { uint16_t v; memcpy(&v, p, 2); *out = hg_scalar_f(hg_f16_to_f32(v)); return 1; }
    case HG_DTYPE_BF16: { uint16_t v; memcpy(&v, p, 2); *out = hg_scalar_f(hg_bf16_to_f32(v)); return 1; }
    case HG_DTYPE_F32: { float v; memcpy(&v, p, 4); *out = hg_scalar_f(v); return 1; }
    case HG_DTYPE_F64: { double v; memcpy(&v, p, 8); *out = hg_scalar_f(v); return 1; }
    default: return 0;
    }
}

// Folds n (all operands constant) into a constant node: >= 0 the node, -1 not folded, -2 error.
static int32_t fold(canon* c, const hg_gnode* n) {
    hg_ew_expr* e = malloc(sizeof *e);
    if (!e) { hg_error(HG_ERR_OUT_OF_MEMORY, "graph canonicalize: out of memory"); return -2; }
    hg_ew_expr_init(e, 0, NULL);
    int arity = hg_gop_table[n->kind].arity;
    int32_t in[3] = {-1, -1, -1};
    for (int i = 0; i < arity; i++) {
        const hg_gnode* k = &c->g->nodes[n->in[i]];
        in[i] = hg_ew_const(e, k->dtype, k->value);
    }
    int32_t r = -1;
    switch (n->kind) {
    case HG_GOP_UNARY: r = hg_ew_unary(e, (hg_unary_op)n->op, in[0]); break;
    case HG_GOP_BINARY: r = hg_ew_binary(e, (hg_binary_op)n->op, in[0], in[1]); break;
    case HG_GOP_WHERE: r = hg_ew_where(e, in[0], in[1], in[2]); break;
    case HG_GOP_FMA: r = hg_ew_fma(e, in[0], in[1], in[2]); break;
    case HG_GOP_CAST: r = hg_ew_cast(e, in[0], n->dtype); break;
    default: break;
    }
    int32_t result = -2;
    hg_ew_kernel* k = NULL;
    hg_buffer buf = {0};
    if (r < 0 || e->nodes[r].dtype != n->dtype || hg_ew_output(e, r, n->dtype)) goto done;
    if (hg_ew_kernel_create(c->ex, e, &k)) goto done;
    hg_executor exh = {c->ex->handle};
    if (hg_buffer_create(exh, n->dtype, 1, &buf)) goto done;
    hg_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = buf;
    t.dtype = n->dtype;
    hg_tensor dummy_in;
    memset(&dummy_in, 0, sizeof dummy_in);
    if (hg_ew_kernel_run(k, &dummy_in, &t)) goto done;
    unsigned char bytes[8] = {0};
    if (hg_buffer_read(buf, 0, bytes, 1)) goto done;
    hg_scalar v;
    if (!scalar_from_bits(n->dtype, bytes, &v)) { result = -1; goto done; }
    hg_gnode cn = hg_gnode_make(HG_GOP_CONST, 0, n->dtype, 0, NULL);
    cn.value = v;
    result = hg_gir_add(c->g, &cn);
    if (result < 0) result = -2;
done:
    if (buf.handle) hg_buffer_destroy(buf);
    if (k) hg_ew_kernel_destroy(k);
    free(e);
    if (result == -2) hg_error_prefix(HG_ERR_INTERNAL, "graph canonicalize: folding a %s", hg_gnode_op_name(n));
    return result;
}

static int foldable(const hg_gir* g, const hg_gnode* n) {
    if (n->kind != HG_GOP_UNARY && n->kind != HG_GOP_BINARY && n->kind != HG_GOP_WHERE &&
        n->kind != HG_GOP_FMA && n->kind != HG_GOP_CAST)
        return 0;
    for (int i = 0; i < hg_gop_table[n->kind].arity; i++)
        if (g->nodes[n->in[i]].kind != HG_GOP_CONST) return 0;
    return 1;
}

static int32_t simplify(void* vc, const hg_gnode* n);

// ---- views (permute, slice, reshape) and concat ----
// A view of an elementwise node is the node of views of its operands (elementwise ops are pure
// and per element, so this is exact): views move to the values in memory (inputs, library
// results), where a kernel reads them through strides, and the chains on both sides of a view
// become one kernel. An elementwise node read both directly and through a view is then computed
// in both kernels (recomputation, as fusion does).

static int pushable(const hg_gnode* x) {
    return x->kind == HG_GOP_UNARY || x->kind == HG_GOP_BINARY || x->kind == HG_GOP_WHERE ||
           x->kind == HG_GOP_FMA || x->kind == HG_GOP_CAST || x->kind == HG_GOP_EXPAND;
}

// View v applied to operand o of a node of rank nd and shape pshape that broadcasts o (o's dims
// align with the last ones). The node, -1 on error. A permute that moves one of the broadcast
// leading dims between o's own (a (T, D) table read by a (B, H, T, D) -> (B, T, H, D)
// transpose) views o with those dims as 1s: a reshape of o to rank nd, then the permute.
static int32_t view_operand(canon* c, const hg_gnode* v, int32_t nd, const int64_t* pshape,
                            int32_t o) {
    hg_gnode on = c->g->nodes[o];
    if (on.ndim == 0) return o;   // broadcasts to anything
    int32_t lead = nd - on.ndim;
    hg_gnode w = *v;
    w.in[0] = o;
    w.dtype = on.dtype;
    w.ndim = on.ndim;
    memcpy(w.shape, on.shape, sizeof w.shape);
    if (v->kind == HG_GOP_PERMUTE) {
        int32_t p[HG_MAX_DIMS], identity = 1;
        for (int32_t i = 0; i < lead; i++)
            if (hg_gperm_get(v, i) >= lead) {
                int64_t rs[HG_MAX_DIMS];
                for (int32_t d = 0; d < nd; d++) rs[d] = d < lead ? 1 : on.shape[d - lead];
                hg_gnode r = hg_gnode_make(HG_GOP_RESHAPE, 0, on.dtype, nd, rs);
                r.in[0] = o;
                int32_t ro = simplify(c, &r);
                if (ro < 0) return ro;
                w.in[0] = ro;
                w.ndim = nd;
                for (int32_t d = 0; d < nd; d++) w.shape[d] = r.shape[hg_gperm_get(v, d)];
                int32_t wo = simplify(c, &w), k = 0;
                while (k < nd && w.shape[k] == 1) k++;
                if (wo < 0 || k == 0) return wo;
                // leading 1s of a broadcast operand say nothing: dropped (kernels then see the
                // operand's own rank, as the rest of the graph's broadcasts)
                hg_gnode s = hg_gnode_make(HG_GOP_RESHAPE, 0, on.dtype, nd - k, w.shape + k);
                s.in[0] = wo;
                return simplify(c, &s);
            }
        for (int32_t j = 0; j < on.ndim; j++) {
            p[j] = hg_gperm_get(v, lead + j) - lead;
            w.shape[j] = on.shape[p[j]];
            identity &= p[j] == j;
        }
        if (identity) return o;
        w.aux = hg_gperm_pack(on.ndim, p);
    } else {
        int32_t ax = v->op - lead;
        if (ax < 0 || (on.shape[ax] == 1 && pshape[v->op] != 1)) return o;   // broadcast axis
        w.op = ax;
        w.shape[ax] = v->shape[v->op];
    }
    return simplify(c, &w);
}

// ---- reshape ----
// A reshape moves the same way when it keeps each operand a view: an operand with all of the
// node's elements is reshaped itself (same C order), a broadcast one must vary only along the
// dims the reshape leaves alone at the end (a bias over the last dim of a (B*T, C) product read
// as (B, T, C)). It stops at values in memory (inputs, library results), which a reshape views
// without a copy; one reaching a strided view (permute, slice) would copy, so it stays.

// Dims at the end that a and b share.
static int32_t common_suffix(const hg_gnode* a, const hg_gnode* b) {
    int32_t k = 0;
    while (k < a->ndim && k < b->ndim && a->shape[a->ndim - 1 - k] == b->shape[b->ndim - 1 - k])
        k++;
    return k;
}

// Whether broadcast operand on of node x (right-aligned) varies only along the last `suffix`
// dims of x.
static int varies_in_suffix(const hg_gnode* on, int32_t suffix) {
    for (int32_t j = 0; j < on->ndim - suffix; j++)
        if (on->shape[j] != 1) return 0;
    return 1;
}

// Whether a reshape of node o to v's shape moves down to values in memory without a copy.
static int reshape_moves(const hg_gir* g, int32_t o, const hg_gnode* v, int depth) {
    const hg_gnode* x = &g->nodes[o];
    if (x->kind == HG_GOP_PERMUTE || x->kind == HG_GOP_SLICE) return 0;
    if (x->kind == HG_GOP_RESHAPE) return reshape_moves(g, x->in[0], v, depth);
    if (!pushable(x)) return 1;
    if (depth > 8 || hg_gir_numel(x) == 0) return 0;
    int32_t suffix = common_suffix(x, v);
    for (int i = 0; i < hg_gop_table[x->kind].arity; i++) {
        const hg_gnode* on = &g->nodes[x->in[i]];
        if (on->ndim == 0) continue;
        if (hg_gir_numel(on) == hg_gir_numel(x)) {
            if (!reshape_moves(g, x->in[i], v, depth + 1)) return 0;
        } else if (!varies_in_suffix(on, suffix)) {
            return 0;
        }
    }
    return 1;
}

// Operand o of node x, for x reshaped to v's shape (reshape_moves said it can).
static int32_t reshape_operand(canon* c, const hg_gnode* v, const hg_gnode* x, int32_t o) {
    hg_gnode on = c->g->nodes[o];
    if (on.ndim == 0) return o;
    hg_gnode w = *v;
    w.in[0] = o;
    w.dtype = on.dtype;
    if (hg_gir_numel(&on) != hg_gir_numel(x)) {
        int32_t keep = common_suffix(x, v);
        if (keep >= on.ndim) return o;   // broadcasts to v's shape as it is
        w.ndim = keep;                   // drop its leading 1s
        memset(w.shape, 0, sizeof w.shape);
        memcpy(w.shape, on.shape + (on.ndim - keep), (size_t)keep * sizeof w.shape[0]);
    }
    return simplify(c, &w);
}

static int32_t view_push(canon* c, const hg_gnode* v) {
    hg_gnode x = c->g->nodes[v->in[0]], nn = x;
    memcpy(nn.shape, v->shape, sizeof nn.shape);
    nn.ndim = v->ndim;
    for (int i = 0; i < hg_gop_table[x.kind].arity; i++) {
        int32_t r = v->kind == HG_GOP_RESHAPE ? reshape_operand(c, v, &x, x.in[i])
                                              : view_operand(c, v, x.ndim, x.shape, x.in[i]);
        if (r < 0) return r;
        nn.in[i] = r;
    }
    return simplify(c, &nn);
}

// Whether n swaps its last two dims only (a matmul reads such a view of a value in place: a
// BLAS transpose flag).
static int last_two_swapped(const hg_gnode* n) {
    if (n->kind != HG_GOP_PERMUTE || n->ndim < 2) return 0;
    for (int32_t i = 0; i < n->ndim - 2; i++)
        if (hg_gperm_get(n, i) != i) return 0;
    return hg_gperm_get(n, n->ndim - 2) == n->ndim - 1 && hg_gperm_get(n, n->ndim - 1) == n->ndim - 2;
}

// Per node of g: 1 for a transpose of its last two dims that only matmuls read. Such a view
// stays where it is rather than moving into its elementwise operand: the matmul reads the
// value transposed for free, where the moved view would have the elementwise kernel compute in
// transposed order through gathered inputs (a weight gradient dY^T X: the ReLU gradient of an
// MLP computed as a (1024, 128) transpose on one thread, 5x its time in order,
// docs/performance.md), and computed twice when the value is also read in order.
static char* matmul_transposes(const hg_gir* g) {
    char* keep = calloc((size_t)(g->n ? g->n : 1), 1);
    char* other = calloc((size_t)(g->n ? g->n : 1), 1);
    if (keep && other) {
        for (int32_t id = 0; id < g->n; id++) {
            const hg_gnode* u = &g->nodes[id];
            for (int i = 0; i < hg_gop_table[u->kind].arity; i++) {
                if (u->kind == HG_GOP_MATMUL) keep[u->in[i]] = 1;
                else other[u->in[i]] = 1;
            }
        }
        for (int32_t i = 0; i < g->noutputs; i++) other[g->outputs[i]] = 1;
        for (int32_t id = 0; id < g->n; id++)
            keep[id] = keep[id] && !other[id] && last_two_swapped(&g->nodes[id]);
    }
    free(other);
    return keep;
}

// Simplifies a permute, slice or concat: the node, -1 on error, -3 when n stays as it is.
static int32_t simplify_view(canon* c, const hg_gnode* n) {
    const hg_gnode* x = &c->g->nodes[n->in[0]];
    int keep = c->keep_transpose;   // for the node the sweep rebuilds, not those made from it
    c->keep_transpose = 0;
    if (n->kind == HG_GOP_PERMUTE) {
        int identity = 1;
        for (int32_t i = 0; i < n->ndim; i++) identity &= hg_gperm_get(n, i) == i;
        if (identity) return n->in[0];
        if (x->kind == HG_GOP_PERMUTE) {   // out dim i = x's dim p[i] = x's operand's q[p[i]]
            int32_t p[HG_MAX_DIMS];
            for (int32_t i = 0; i < n->ndim; i++) p[i] = hg_gperm_get(x, hg_gperm_get(n, i));
            hg_gnode m = *n;
            m.in[0] = x->in[0];
            m.aux = hg_gperm_pack(n->ndim, p);
            return simplify(c, &m);
        }
        // Moving only dims of size 1 keeps C order: a reshape (kernels read it as a plain
        // broadcast, not through gathered strides), where that reshape moves on as far as the
        // permute would. Not of a slice, which a reshape may copy.
        int kept = x->kind != HG_GOP_SLICE;
        for (int32_t i = 0, last = -1; kept && i < n->ndim; i++) {
            int32_t d = hg_gperm_get(n, i);
            if (x->shape[d] == 1) continue;
            kept = d > last;
            last = d;
        }
        hg_gnode m = hg_gnode_make(HG_GOP_RESHAPE, 0, n->dtype, n->ndim, n->shape);
        m.in[0] = n->in[0];
        if (kept && (!pushable(x) || reshape_moves(c->g, n->in[0], &m, 0))) return simplify(c, &m);
    } else if (n->kind == HG_GOP_SLICE) {
        int32_t ax = n->op;
        if (n->aux == 0 && (n->aux2 == 1 || n->shape[ax] <= 1) && n->shape[ax] == x->shape[ax])
            return n->in[0];
        if (x->kind == HG_GOP_SLICE && x->op == ax) {
            hg_gnode m = *n;
            m.in[0] = x->in[0];
            m.aux = n->shape[ax] ? x->aux + n->aux * x->aux2 : 0;
            m.aux2 = n->shape[ax] > 1 ? n->aux2 * x->aux2 : 1;
            return simplify(c, &m);
        }
        if (x->kind == HG_GOP_CONCAT && x->op == ax) {   // inside one operand: a slice of it
            int64_t na = c->g->nodes[x->in[0]].shape[ax];
            int64_t last = n->aux + (n->shape[ax] ? (n->shape[ax] - 1) * n->aux2 : 0);
            int side = last < na ? 0 : n->aux >= na ? 1 : -1;
            if (side >= 0) {
                hg_gnode m = *n;
                m.in[0] = x->in[side];
                if (side == 1 && n->shape[ax]) m.aux -= na;
                return simplify(c, &m);
            }
        }
    } else if (n->kind == HG_GOP_RESHAPE) {
        if (hg_gir_same_shape(x, n)) return n->in[0];
        if (x->kind == HG_GOP_RESHAPE) {
            hg_gnode m = *n;
            m.in[0] = x->in[0];
            return simplify(c, &m);
        }
        if (!reshape_moves(c->g, n->in[0], n, 0)) return -3;
    } else {
        int32_t ax = n->op;
        const hg_gnode* y = &c->g->nodes[n->in[1]];
        if (y->shape[ax] == 0) return n->in[0];
        if (x->shape[ax] == 0) return n->in[1];
        // x[a:b] joined with x[b:e] (steps 1) is x[a:e].
        if (x->kind == HG_GOP_SLICE && y->kind == HG_GOP_SLICE && x->op == ax && y->op == ax &&
            x->in[0] == y->in[0] && (x->aux2 == 1 || x->shape[ax] == 1) &&
            (y->aux2 == 1 || y->shape[ax] == 1) && y->aux == x->aux + x->shape[ax]) {
            hg_gnode m = *x;
            m.shape[ax] = n->shape[ax];
            m.aux2 = 1;
            return simplify(c, &m);
        }
        return -3;
    }
    if (!pushable(x) || keep) return -3;
    int32_t before = c->memo.n, key = hg_gir_add(&c->memo, n);
    if (key < 0) return -1;
    if (key < before) return c->memo_val[key];
    if (key >= c->memo_cap) {
        int32_t cap = c->memo_cap ? c->memo_cap * 2 : 64;
        int32_t* v = realloc(c->memo_val, (size_t)cap * sizeof *v);
        if (!v) { hg_error(HG_ERR_OUT_OF_MEMORY, "graph canonicalize: out of memory"); return -1; }
        c->memo_val = v;
        c->memo_cap = cap;
    }
    c->memo_val[key] = -3;   // a view reached again while it is being moved stays a view
    int32_t r = view_push(c, n);
    c->memo_val[key] = r < 0 && r != -3 ? -3 : r;
    return r;
}

static int32_t simplify(void* vc, const hg_gnode* n) {
    canon* c = vc;
    if (n->kind == HG_GOP_PERMUTE || n->kind == HG_GOP_SLICE || n->kind == HG_GOP_CONCAT ||
        n->kind == HG_GOP_RESHAPE) {
        int32_t r = simplify_view(c, n);
        if (r != -3) return r;
    }
    // Structural no-ops (not rules): a broadcast to the operand's own shape, and a broadcast
    // of a broadcast.
    if (n->kind == HG_GOP_EXPAND) {
        const hg_gnode* x = &c->g->nodes[n->in[0]];
        if (hg_gir_same_shape(x, n)) return n->in[0];
        if (x->kind == HG_GOP_EXPAND) {
            hg_gnode e = *n;
            e.in[0] = x->in[0];
            return simplify(c, &e);
        }
    }
    if (c->o->fold && foldable(c->g, n)) {
        int32_t r = fold(c, n);
        if (r >= 0) { c->rewrites++; return r; }
        if (r == -2) return -1;
    }
    int32_t id = hg_gir_add(c->g, n);
    if (id < 0 || !c->o->rewrites || c->depth > 16) return id;
    c->depth++;
    int rule = -1;
    int32_t r = hg_rules_apply(c->g, id, simplify, c, &rule);
    c->depth--;
    if (r == -2) return -1;
    if (r >= 0) {
        c->rewrites++;
        if (c->hits) c->hits[rule]++;
        return r;
    }
    return id;
}

// One sweep: rebuilds g into a new graph through simplify, then drops dead nodes.
static hg_status sweep(hg_gir* g, canon* c) {
    hg_status s = HG_OK;
    hg_gir ng, live;
    hg_gir_init(&ng);
    hg_gir_init(&live);
    int32_t* map = malloc((size_t)(g->n ? g->n : 1) * sizeof *map);
    int32_t* map2 = NULL;
    char* mark = NULL;
    char* keep = matmul_transposes(g);
    if (!map || !keep) { s = hg_error(HG_ERR_OUT_OF_MEMORY, "graph canonicalize: out of memory"); goto done; }
    ng.ninputs = g->ninputs;
    c->g = &ng;
    hg_gir_free(&c->memo);   // keys are node ids of this sweep's graph
    for (int32_t id = 0; id < g->n; id++) {
        hg_gnode n = g->nodes[id];
        for (int i = 0; i < hg_gop_table[n.kind].arity; i++) n.in[i] = map[n.in[i]];
        c->keep_transpose = keep[id];
        map[id] = n.kind == HG_GOP_INPUT ? hg_gir_add(&ng, &n) : simplify(c, &n);
        c->keep_transpose = 0;
        if (map[id] < 0) { s = hg_error_prefix(HG_ERR_INTERNAL, "graph canonicalize"); goto done; }
    }
    // DCE: keep what the outputs need, and every input.
    mark = calloc((size_t)(ng.n ? ng.n : 1), 1);
    map2 = malloc((size_t)(ng.n ? ng.n : 1) * sizeof *map2);
    if (!mark || !map2) { s = hg_error(HG_ERR_OUT_OF_MEMORY, "graph canonicalize: out of memory"); goto done; }
    for (int32_t i = 0; i < g->noutputs; i++) mark[map[g->outputs[i]]] = 1;
    for (int32_t id = ng.n - 1; id >= 0; id--) {
        if (ng.nodes[id].kind == HG_GOP_INPUT) mark[id] = 1;
        if (!mark[id]) continue;
        for (int i = 0; i < hg_gop_table[ng.nodes[id].kind].arity; i++) mark[ng.nodes[id].in[i]] = 1;
    }
    live.ninputs = ng.ninputs;
    for (int32_t id = 0; id < ng.n; id++) {
        if (!mark[id]) continue;
        hg_gnode n = ng.nodes[id];
        for (int i = 0; i < hg_gop_table[n.kind].arity; i++) n.in[i] = map2[n.in[i]];
        if ((map2[id] = hg_gir_add(&live, &n)) < 0) { s = HG_ERR_OUT_OF_MEMORY; goto done; }
    }
    for (int32_t i = 0; i < g->noutputs; i++)
        if ((s = hg_gir_add_output(&live, map2[map[g->outputs[i]]]))) goto done;
    hg_gir_free(g);
    *g = live;
    hg_gir_init(&live);
done:
    c->g = NULL;
    hg_gir_free(&ng);
    hg_gir_free(&live);
    free(map);
    free(map2);
    free(mark);
    free(keep);
    return s;
}

hg_status hg_pass_canonicalize(hg_gir* g, hg_executor_obj* ex, const hg_compile_opts* o,
                               int32_t* rewrites, int32_t* rule_hits) {
    canon c = {.ex = ex, .o = o, .hits = rule_hits};
    for (int iter = 0; iter < 8; iter++) {
        int32_t before = c.rewrites, nodes = g->n;
        hg_status s = sweep(g, &c);
        if (!s) s = hg_gir_verify(g, "canonicalize");
        if (s) {
            hg_gir_free(&c.memo);
            free(c.memo_val);
            return s;
        }
        if (c.rewrites == before && g->n == nodes) break;
    }
    hg_gir_free(&c.memo);
    free(c.memo_val);
    *rewrites = c.rewrites;
    return HG_OK;
}
