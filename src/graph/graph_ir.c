// The graph IR: node table with hash-consing, verifier and printer (see graph_ir.h).
#include "graph/graph_ir.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"

const hg_gop_info hg_gop_table[HG_GOP_COUNT] = {
    [HG_GOP_INPUT] = {"input", 0, 0},
    [HG_GOP_CONST] = {"const", 0, 1},
    [HG_GOP_UNARY] = {"unary", 1, 1},
    [HG_GOP_BINARY] = {"binary", 2, 1},
    [HG_GOP_WHERE] = {"where", 3, 1},
    [HG_GOP_FMA] = {"fma", 3, 1},
    [HG_GOP_CAST] = {"cast", 1, 1},
    [HG_GOP_EXPAND] = {"expand", 1, 1},
    [HG_GOP_RESHAPE] = {"reshape", 1, 0},
    [HG_GOP_REDUCE] = {"reduce", 1, 0},
    [HG_GOP_SOFTMAX] = {"softmax", 1, 0},
    [HG_GOP_MATMUL] = {"matmul", 2, 0},
    [HG_GOP_ARANGE] = {"arange", 0, 0},
    [HG_GOP_PERMUTE] = {"permute", 1, 0},
    [HG_GOP_SLICE] = {"slice", 1, 0},
    [HG_GOP_CONCAT] = {"concat", 2, 0},
    [HG_GOP_NORM] = {"norm", 3, 0},
    [HG_GOP_NORM_STAT] = {"norm_stat", 1, 0},
};
_Static_assert(sizeof hg_gop_table / sizeof hg_gop_table[0] == HG_GOP_COUNT, "gop table size");

void hg_gir_init(hg_gir* g) { memset(g, 0, sizeof *g); }

void hg_gir_free(hg_gir* g) {
    free(g->nodes);
    free(g->table);
    free(g->outputs);
    memset(g, 0, sizeof *g);
}

hg_gnode hg_gnode_make(hg_gop kind, int32_t op, hg_dtype dtype, int32_t ndim, const int64_t* shape) {
    hg_gnode n;
    memset(&n, 0, sizeof n);
    n.kind = kind;
    n.op = op;
    n.dtype = dtype;
    n.ndim = ndim;
    for (int32_t i = 0; i < ndim; i++) n.shape[i] = shape[i];
    n.in[0] = n.in[1] = n.in[2] = -1;
    return n;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xFF51AFD7ED558CCDull;
}

static uint64_t double_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static uint64_t node_hash(const hg_gnode* n) {
    uint64_t h = mix(0, (uint64_t)n->kind);
    h = mix(h, (uint64_t)(uint32_t)n->op);
    h = mix(h, (uint64_t)n->dtype);
    h = mix(h, (uint64_t)n->ndim);
    for (int32_t i = 0; i < n->ndim; i++) h = mix(h, (uint64_t)n->shape[i]);
    for (int i = 0; i < 3; i++) h = mix(h, (uint64_t)(uint32_t)n->in[i]);
    h = mix(h, (uint64_t)n->aux);
    h = mix(h, (uint64_t)n->aux2);
    h = mix(h, (uint64_t)n->value.kind);
    h = mix(h, (uint64_t)n->value.i);
    h = mix(h, double_bits(n->value.f));
    return h;
}

static int node_equal(const hg_gnode* a, const hg_gnode* b) {
    if (a->kind != b->kind || a->op != b->op || a->dtype != b->dtype || a->ndim != b->ndim ||
        a->aux != b->aux || a->aux2 != b->aux2 || a->value.kind != b->value.kind || a->value.i != b->value.i ||
        double_bits(a->value.f) != double_bits(b->value.f))
        return 0;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    for (int i = 0; i < 3; i++)
        if (a->in[i] != b->in[i]) return 0;
    return 1;
}

static int table_grow(hg_gir* g) {
    uint32_t cap = g->table_cap ? g->table_cap * 2 : 64;
    int32_t* t = calloc(cap, sizeof *t);
    if (!t) return 0;
    for (int32_t id = 0; id < g->n; id++) {
        uint32_t h = (uint32_t)node_hash(&g->nodes[id]) & (cap - 1);
        while (t[h]) h = (h + 1) & (cap - 1);
        t[h] = id + 1;
    }
    free(g->table);
    g->table = t;
    g->table_cap = cap;
    return 1;
}

int32_t hg_gir_add(hg_gir* g, const hg_gnode* src) {
    hg_gnode n = *src;
    for (int32_t i = n.ndim; i < HG_MAX_DIMS; i++) n.shape[i] = 0;
    if (n.kind != HG_GOP_CONST && n.kind != HG_GOP_NORM) memset(&n.value, 0, sizeof n.value);
    uint64_t h = node_hash(&n);
    if (g->table_cap) {
        for (uint32_t p = (uint32_t)h & (g->table_cap - 1); g->table[p];
             p = (p + 1) & (g->table_cap - 1))
            if (node_equal(&g->nodes[g->table[p] - 1], &n)) return g->table[p] - 1;
    }
    if ((uint32_t)(g->n + 1) * 2 > g->table_cap && !table_grow(g)) goto oom;
    if (g->n == g->cap) {
        int32_t cap = g->cap ? g->cap * 2 : 32;
        hg_gnode* nn = realloc(g->nodes, (size_t)cap * sizeof *nn);
        if (!nn) goto oom;
        g->nodes = nn;
        g->cap = cap;
    }
    int32_t id = g->n++;
    g->nodes[id] = n;
    uint32_t p = (uint32_t)h & (g->table_cap - 1);
    while (g->table[p]) p = (p + 1) & (g->table_cap - 1);
    g->table[p] = id + 1;
    return id;
oom:
    hg_error(HG_ERR_OUT_OF_MEMORY, "graph: out of memory adding node %d", (int)g->n);
    return -1;
}

hg_status hg_gir_add_output(hg_gir* g, int32_t node) {
    if (g->noutputs == g->out_cap) {
        int32_t cap = g->out_cap ? g->out_cap * 2 : 8;
        int32_t* o = realloc(g->outputs, (size_t)cap * sizeof *o);
        if (!o) return hg_error(HG_ERR_OUT_OF_MEMORY, "graph: out of memory adding an output");
        g->outputs = o;
        g->out_cap = cap;
    }
    g->outputs[g->noutputs++] = node;
    return HG_OK;
}

hg_status hg_gir_copy(hg_gir* dst, const hg_gir* src) {
    hg_gir_init(dst);
    for (int32_t i = 0; i < src->n; i++)
        if (hg_gir_add(dst, &src->nodes[i]) != i) goto fail;
    for (int32_t i = 0; i < src->noutputs; i++)
        if (hg_gir_add_output(dst, src->outputs[i])) goto fail;
    dst->ninputs = src->ninputs;
    return HG_OK;
fail:
    hg_gir_free(dst);
    return hg_error(HG_ERR_OUT_OF_MEMORY, "graph: out of memory copying the graph");
}

int64_t hg_gir_numel(const hg_gnode* n) {
    return hg_shape_numel(n->ndim, n->shape);
}

int64_t hg_gperm_pack(int32_t ndim, const int32_t* perm) {
    uint64_t a = 0;
    for (int32_t i = 0; i < ndim; i++) a |= (uint64_t)perm[i] << (4 * i);
    return (int64_t)a;
}

int hg_gir_same_shape(const hg_gnode* a, const hg_gnode* b) {
    if (a->ndim != b->ndim) return 0;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

int hg_shape_broadcasts_to(int32_t na, const int64_t* a, int32_t nb, const int64_t* b) {
    if (na > nb) return 0;
    for (int32_t i = 0; i < na; i++) {
        int64_t x = a[na - 1 - i], y = b[nb - 1 - i];
        if (x != y && x != 1) return 0;
    }
    return 1;
}

// Why a permute / slice / concat node's shape does not follow from its operands (NULL: it does).
static const char* view_problem(const hg_gir* g, const hg_gnode* n) {
    const hg_gnode* x = &g->nodes[n->in[0]];
    if (n->dtype != x->dtype || n->ndim != x->ndim) return "dtype or ndim differs from operand 0";
    if (n->kind == HG_GOP_PERMUTE) {
        uint32_t seen = 0;
        for (int32_t i = 0; i < n->ndim; i++) {
            int32_t p = hg_gperm_get(n, i);
            if (p >= n->ndim || (seen >> p & 1u)) return "perm is not a permutation";
            seen |= 1u << p;
            if (n->shape[i] != x->shape[p]) return "shape is not the permuted operand shape";
        }
        return NULL;
    }
    int32_t ax = n->op;
    if (ax < 0 || ax >= n->ndim) return "axis out of range";
    for (int32_t i = 0; i < n->ndim; i++)
        if (i != ax && n->shape[i] != x->shape[i]) return "a dim other than the axis changed";
    if (n->kind == HG_GOP_SLICE) {
        if (n->aux2 < 1 || n->aux < 0) return "start < 0 or step < 1";
        if (n->shape[ax] > 0 && n->aux + (n->shape[ax] - 1) * n->aux2 >= x->shape[ax])
            return "the slice reads past the end of the axis";
        return NULL;
    }
    const hg_gnode* y = &g->nodes[n->in[1]];
    if (y->dtype != n->dtype || y->ndim != n->ndim) return "operand 1's dtype or ndim differs";
    for (int32_t i = 0; i < n->ndim; i++)
        if (i != ax && n->shape[i] != y->shape[i]) return "operand 1's shape differs off the axis";
    if (n->shape[ax] != x->shape[ax] + y->shape[ax]) return "the axis is not the operands' sum";
    return NULL;
}

hg_status hg_gir_verify(const hg_gir* g, const char* after) {
    int32_t inputs_seen = 0;
    for (int32_t id = 0; id < g->n; id++) {
        const hg_gnode* n = &g->nodes[id];
        if (n->kind < 0 || n->kind >= HG_GOP_COUNT)
            return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): node %%%d has kind %d",
                            after, (int)id, (int)n->kind);
        if (!hg_dtype_valid(n->dtype) || n->ndim < 0 || n->ndim > HG_MAX_DIMS)
            return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): node %%%d has dtype %d "
                            "ndim %d", after, (int)id, (int)n->dtype, (int)n->ndim);
        int arity = hg_gop_table[n->kind].arity;
        for (int i = 0; i < 3; i++) {
            int32_t o = n->in[i];
            if (i < arity && (o < 0 || o >= id))
                return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): node %%%d operand %d "
                                "is %%%d (must be an earlier node)", after, (int)id, i, (int)o);
            if (i >= arity && o != -1)
                return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): node %%%d (%s) has "
                                "an extra operand %d", after, (int)id, hg_gnode_op_name(n), i);
        }
        if (hg_gop_table[n->kind].elementwise && n->kind != HG_GOP_CONST) {
            // Elementwise results have the broadcast shape of their operands.
            for (int i = 0; i < arity; i++) {
                const hg_gnode* o = &g->nodes[n->in[i]];
                if (!hg_shape_broadcasts_to(o->ndim, o->shape, n->ndim, n->shape))
                    return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): node %%%d's "
                                    "operand %%%d does not broadcast to its shape", after,
                                    (int)id, (int)n->in[i]);
            }
        }
        if (n->kind == HG_GOP_CONST && n->ndim != 0)
            return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): constant %%%d is not 0-d",
                            after, (int)id);
        if (n->kind == HG_GOP_ARANGE && n->ndim != 1)
            return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): arange %%%d is not 1-d",
                            after, (int)id);
        if (n->kind == HG_GOP_RESHAPE && hg_gir_numel(n) != hg_gir_numel(&g->nodes[n->in[0]]))
            return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): reshape %%%d changes the "
                            "element count", after, (int)id);
        if (n->kind >= HG_GOP_PERMUTE && n->kind <= HG_GOP_CONCAT) {
            const char* why = view_problem(g, n);
            if (why)
                return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): %s %%%d: %s", after,
                                hg_gnode_op_name(n), (int)id, why);
        }
        if (n->kind == HG_GOP_NORM) {
            int ok = n->aux >= 1 && n->aux <= n->ndim && hg_gir_same_shape(n, &g->nodes[n->in[0]]);
            for (int i = 1; i < 3 && ok; i++) {
                const hg_gnode* q = &g->nodes[n->in[i]];
                if (!(n->aux2 & (i == 1 ? HG_GNORM_WEIGHT : HG_GNORM_BIAS))) {
                    ok = n->in[i] == n->in[0];
                    continue;
                }
                ok = q->ndim == n->aux && q->dtype == n->dtype;
                for (int32_t d = 0; ok && d < q->ndim; d++)
                    ok = q->shape[d] == n->shape[n->ndim - q->ndim + d];
            }
            if (!ok)
                return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): norm %%%d's operands "
                                "do not match its %lld normalized dims", after, (int)id,
                                (long long)n->aux);
        }
        if (n->kind == HG_GOP_NORM_STAT) {
            const hg_gnode* m = &g->nodes[n->in[0]];
            int ok = m->kind == HG_GOP_NORM && m->op == 0 && n->aux == m->aux &&
                     n->ndim == m->ndim && n->dtype == m->dtype && (n->op == 0 || n->op == 1);
            for (int32_t d = 0; ok && d < n->ndim; d++)
                ok = n->shape[d] == (d < n->ndim - n->aux ? m->shape[d] : 1);
            if (!ok)
                return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): norm_stat %%%d is not "
                                "a statistic of the layer norm it reads", after, (int)id);
        }
        if (n->kind == HG_GOP_INPUT) {
            if (n->aux < 0 || n->aux >= g->ninputs)
                return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): input %%%d has index "
                                "%lld of %d", after, (int)id, (long long)n->aux, (int)g->ninputs);
            inputs_seen++;
        }
    }
    if (inputs_seen != g->ninputs)
        return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): %d input nodes, %d inputs",
                        after, (int)inputs_seen, (int)g->ninputs);
    for (int32_t i = 0; i < g->noutputs; i++)
        if (g->outputs[i] < 0 || g->outputs[i] >= g->n)
            return hg_error(HG_ERR_INTERNAL, "graph verify (after %s): output %d is node %%%d",
                            after, (int)i, (int)g->outputs[i]);
    return HG_OK;
}

// ---- printing ----

void hg_sb_printf(hg_strbuf* b, const char* fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int k = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { b->failed = 1; return; }
        if (b->s && (size_t)k < room) { b->len += (size_t)k; return; }
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + (size_t)k + 1) cap *= 2;
        char* s = realloc(b->s, cap);
        if (!s) { b->failed = 1; return; }
        b->s = s;
        b->cap = cap;
    }
}

char* hg_sb_take(hg_strbuf* b) {
    if (b->failed || !b->s) {
        if (!b->failed && !b->s) {
            char* e = malloc(1);
            if (e) { e[0] = 0; return e; }
        }
        free(b->s);
        b->s = NULL;
        hg_error(HG_ERR_OUT_OF_MEMORY, "graph: out of memory printing");
        return NULL;
    }
    char* s = b->s;
    b->s = NULL;
    return s;
}

const char* hg_gscalar_text(hg_dtype dtype, hg_scalar v, char* buf, size_t len) {
    if (v.kind == HG_SCALAR_FLOAT) {
        if (isnan(v.f)) snprintf(buf, len, "nan");
        else if (isinf(v.f)) snprintf(buf, len, v.f < 0 ? "-inf" : "inf");
        else snprintf(buf, len, "%.17g", v.f);
    } else if (v.kind == HG_SCALAR_BOOL) {
        snprintf(buf, len, v.i ? "true" : "false");
    } else if (dtype == HG_DTYPE_U64) {
        snprintf(buf, len, "%llu", (unsigned long long)(uint64_t)v.i);
    } else {
        snprintf(buf, len, "%lld", (long long)v.i);
    }
    return buf;
}

const char* hg_gnode_op_name(const hg_gnode* n) {
    static const char* const reduce_names[HG_REDUCE_COUNT] = {
        "reduce.sum", "reduce.mean", "reduce.prod", "reduce.min", "reduce.max",
        "reduce.argmin", "reduce.argmax", "reduce.var", "reduce.std", "reduce.logsumexp",
        "reduce.any", "reduce.all"};
    switch (n->kind) {
    case HG_GOP_UNARY: return hg_unary_op_name((hg_unary_op)n->op);
    case HG_GOP_BINARY: return hg_binary_op_name((hg_binary_op)n->op);
    case HG_GOP_REDUCE:
        return (n->op >= 0 && n->op < HG_REDUCE_COUNT) ? reduce_names[n->op] : "reduce.?";
    case HG_GOP_SOFTMAX: return n->op ? "log_softmax" : "softmax";
    case HG_GOP_NORM: return n->op ? "rms_norm" : "layer_norm";
    case HG_GOP_NORM_STAT: return n->op ? "norm_rstd" : "norm_mean";
    default: return (n->kind >= 0 && n->kind < HG_GOP_COUNT) ? hg_gop_table[n->kind].name : "?";
    }
}

static void print_shape(hg_strbuf* b, const hg_gnode* n) {
    hg_sb_printf(b, "%s(", hg_dtype_name(n->dtype));
    for (int32_t i = 0; i < n->ndim; i++)
        hg_sb_printf(b, "%s%lld", i ? ", " : "", (long long)n->shape[i]);
    hg_sb_printf(b, ")");
}

hg_status hg_gir_print(const hg_gir* g, const int32_t* group, char** out_text) {
    hg_strbuf b = {0};
    for (int32_t id = 0; id < g->n; id++) {
        const hg_gnode* n = &g->nodes[id];
        hg_sb_printf(&b, "%%%d = %s", (int)id, hg_gnode_op_name(n));
        char vb[64];
        if (n->kind == HG_GOP_INPUT) hg_sb_printf(&b, " #%lld", (long long)n->aux);
        if (n->kind == HG_GOP_CONST) hg_sb_printf(&b, " %s", hg_gscalar_text(n->dtype, n->value, vb, sizeof vb));
        for (int i = 0; i < hg_gop_table[n->kind].arity; i++)
            hg_sb_printf(&b, "%s%%%d", i ? ", " : " ", (int)n->in[i]);
        if (n->kind == HG_GOP_REDUCE) {
            hg_sb_printf(&b, " axes=[");
            int first = 1;
            for (int d = 0; d < 32; d++)
                if ((uint64_t)n->aux & (1ull << d)) { hg_sb_printf(&b, "%s%d", first ? "" : ",", d); first = 0; }
            hg_sb_printf(&b, "]%s", (n->aux >> 32) ? " keepdims" : "");
        }
        if (n->kind == HG_GOP_SOFTMAX) hg_sb_printf(&b, " axis=%lld", (long long)n->aux);
        if (n->kind == HG_GOP_PERMUTE) {
            hg_sb_printf(&b, " perm=[");
            for (int32_t i = 0; i < n->ndim; i++) hg_sb_printf(&b, "%s%d", i ? "," : "", (int)hg_gperm_get(n, i));
            hg_sb_printf(&b, "]");
        }
        if (n->kind == HG_GOP_SLICE)
            hg_sb_printf(&b, " axis=%d start=%lld step=%lld", (int)n->op, (long long)n->aux,
                         (long long)n->aux2);
        if (n->kind == HG_GOP_CONCAT) hg_sb_printf(&b, " axis=%d", (int)n->op);
        if (n->kind == HG_GOP_NORM)
            hg_sb_printf(&b, " dims=%lld eps=%g%s%s", (long long)n->aux, n->value.f,
                         (n->aux2 & HG_GNORM_WEIGHT) ? " weight" : "",
                         (n->aux2 & HG_GNORM_BIAS) ? " bias" : "");
        hg_sb_printf(&b, " : ");
        print_shape(&b, n);
        if (group && group[id] >= 0) hg_sb_printf(&b, " [k%d]", (int)group[id]);
        hg_sb_printf(&b, "\n");
    }
    hg_sb_printf(&b, "outputs:");
    for (int32_t i = 0; i < g->noutputs; i++) hg_sb_printf(&b, " %%%d", (int)g->outputs[i]);
    hg_sb_printf(&b, "\n");
    char* s = hg_sb_take(&b);
    if (!s) return HG_ERR_OUT_OF_MEMORY;
    *out_text = s;
    return HG_OK;
}
