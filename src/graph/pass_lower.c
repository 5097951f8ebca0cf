// lower: turns the fused graph into plan steps — one ISA kernel per fusion group (hg_ew_expr ->
// hg_ew_kernel), a fused kernel for a group with its trailing reduction, library calls for
// reductions, softmax and matmul, views for reshapes — and the value table the plan pass gives
// memory to.
#include <stdlib.h>
#include <string.h>
#include "base/error.h"
#include "graph/graph_internal.h"

typedef struct lower_ctx {
    hg_plan_obj* p;
    int32_t* value_of;      // node -> value (-1: none)
    int32_t cap_values, cap_steps;
    char* read_outside;     // node -> read by a node outside its group (stored by its kernel)
} lower_ctx;

static int32_t new_value(lower_ctx* L, int32_t node, hg_value_home home, int32_t index) {
    hg_plan_obj* p = L->p;
    if (p->nvalues == L->cap_values) {
        int32_t cap = L->cap_values ? L->cap_values * 2 : 16;
        hg_plan_value* v = realloc(p->values, (size_t)cap * sizeof *v);
        if (!v) return -1;
        p->values = v;
        L->cap_values = cap;
    }
    hg_plan_value* v = &p->values[p->nvalues];
    memset(v, 0, sizeof *v);
    const hg_gnode* n = &p->ir.nodes[node];
    v->node = node;
    v->dtype = n->dtype;
    v->ndim = n->ndim;
    memcpy(v->shape, n->shape, sizeof v->shape);
    v->home = home;
    v->index = index;
    v->src = -1;
    return p->nvalues++;
}

static hg_plan_step* new_step(lower_ctx* L, hg_step_kind kind, int32_t node, int32_t nin,
                              int32_t nout) {
    hg_plan_obj* p = L->p;
    if (p->nsteps == L->cap_steps) {
        int32_t cap = L->cap_steps ? L->cap_steps * 2 : 16;
        hg_plan_step* s = realloc(p->steps, (size_t)cap * sizeof *s);
        if (!s) return NULL;
        p->steps = s;
        L->cap_steps = cap;
    }
    hg_plan_step* s = &p->steps[p->nsteps];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->node = node;
    s->in = calloc((size_t)nin + 1, sizeof *s->in);
    s->out = calloc((size_t)nout + 1, sizeof *s->out);
    if (!s->in || !s->out) { free(s->in); free(s->out); return NULL; }
    s->nin = nin;
    s->nout = nout;
    p->nsteps++;
    return s;
}

static int32_t emit_op(hg_ew_expr* e, const hg_gnode* n, const int32_t* in) {
    switch (n->kind) {
    case HG_GOP_CONST: return hg_ew_const(e, n->dtype, n->value);
    case HG_GOP_UNARY: return hg_ew_unary(e, (hg_unary_op)n->op, in[0]);
    case HG_GOP_BINARY: return hg_ew_binary(e, (hg_binary_op)n->op, in[0], in[1]);
    case HG_GOP_WHERE: return hg_ew_where(e, in[0], in[1], in[2]);
    case HG_GOP_FMA: return hg_ew_fma(e, in[0], in[1], in[2]);
    case HG_GOP_CAST: return hg_ew_cast(e, in[0], n->dtype);
    case HG_GOP_EXPAND: return in[0];   // broadcasting is implicit in the expression
    default: return -1;
    }
}

typedef struct expr_ctx {
    lower_ctx* L;
    const int32_t* group;
    const int32_t* fused_reduce;   // HG_GROUP_RECOMPUTED: computed where it is read
    hg_ew_expr* e;
    int32_t* en;                   // node -> expression node
    int32_t *ext, *next;
} expr_ctx;

// Node id computed in the expression: its operands first (constants inlined, members of a
// recomputed group computed here too, other values read as inputs), then its op.
static hg_status emit_node(expr_ctx* X, int32_t id) {
    const hg_gir* g = &X->L->p->ir;
    const hg_gnode* n = &g->nodes[id];
    int32_t in[3] = {-1, -1, -1};
    hg_status s;
    for (int i = 0; i < hg_gop_table[n->kind].arity; i++) {
        int32_t o = n->in[i];
        if (X->en[o] < 0) {
            const hg_gnode* on = &g->nodes[o];
            int32_t og = X->group[o];
            if (on->kind == HG_GOP_CONST) {
                X->en[o] = hg_ew_const(X->e, on->dtype, on->value);
            } else if (og >= 0 && X->fused_reduce && X->fused_reduce[og] == HG_GROUP_RECOMPUTED) {
                if ((s = emit_node(X, o))) return s;
            } else {
                if (X->L->value_of[o] < 0 || *X->next >= HG_EW_MAX_INPUTS)
                    return hg_error(HG_ERR_INTERNAL, "graph lower: node %%%d reads %%%d, which "
                                    "has no value (or one input too many)", (int)id, (int)o);
                X->en[o] = hg_ew_input(X->e, on->dtype, on->ndim, on->shape);
                X->ext[(*X->next)++] = X->L->value_of[o];
            }
            if (X->en[o] < 0) return hg_error_prefix(HG_ERR_INTERNAL, "graph lower");
        }
        in[i] = X->en[o];
    }
    X->en[id] = emit_op(X->e, n, in);
    if (X->en[id] < 0) return hg_error_prefix(HG_ERR_INTERNAL, "graph lower: node %%%d", (int)id);
    if (X->e->nodes[X->en[id]].dtype != n->dtype)
        return hg_error(HG_ERR_INTERNAL, "graph lower: node %%%d has dtype %s in the graph and %s "
                        "in its kernel", (int)id, hg_dtype_name(n->dtype),
                        hg_dtype_name(X->e->nodes[X->en[id]].dtype));
    return HG_OK;
}

// Builds the expression of group gid (root = its highest node). ext receives the values read
// (in input order), outs the member nodes stored (root first, then members that are outputs).
static hg_status build_expr(lower_ctx* L, int32_t gid, int32_t root, const int32_t* group,
                            const int32_t* fused_reduce, const char* is_output, int with_root,
                            hg_ew_expr* e, int32_t* ext, int32_t* next, int32_t* outs,
                            int32_t* nouts) {
    const hg_gir* g = &L->p->ir;
    int32_t* en = malloc((size_t)g->n * sizeof *en);   // node -> expression node
    if (!en) return hg_error(HG_ERR_OUT_OF_MEMORY, "graph lower: out of memory");
    for (int32_t i = 0; i < g->n; i++) en[i] = -1;
    const hg_gnode* r = &g->nodes[root];
    hg_ew_expr_init(e, r->ndim, r->shape);
    *next = 0;
    *nouts = 0;
    hg_status s = HG_OK;
    expr_ctx X = {L, group, fused_reduce, e, en, ext, next};
    for (int32_t id = 0; id <= root && !s; id++)
        if (group[id] == gid) s = emit_node(&X, id);
    if (!s && with_root) {
        outs[(*nouts)++] = root;
        s = hg_ew_output(e, en[root], r->dtype);
    }
    for (int32_t id = 0; id < root && !s; id++)
        if (group[id] == gid && (is_output[id] || L->read_outside[id])) {
            outs[(*nouts)++] = id;
            s = hg_ew_output(e, en[id], g->nodes[id].dtype);
        }
    if (s && hg_last_error()[0] == 0) s = hg_error(s, "graph lower: building group %d", (int)gid);
    free(en);
    return s;
}

// Concatenation chains: a concat read only by a concat along the same axis (its first operand)
// and not an output is absorbed by it, so an n-way concat is one step writing each part once
// (at most HG_EW_MAX_INPUTS parts per step).
static hg_status mark_absorbed(const hg_gir* g, const char* is_output, char* absorbed) {
    int32_t* uses = calloc((size_t)g->n + 1, sizeof *uses);
    if (!uses) return hg_error(HG_ERR_OUT_OF_MEMORY, "graph lower: out of memory");
    for (int32_t id = 0; id < g->n; id++)
        for (int i = 0; i < hg_gop_table[g->nodes[id].kind].arity; i++) uses[g->nodes[id].in[i]]++;
    for (int32_t id = g->n - 1; id >= 0; id--) {
        const hg_gnode* n = &g->nodes[id];
        if (n->kind != HG_GOP_CONCAT || absorbed[id]) continue;
        int32_t parts = 2;
        for (int32_t k = n->in[0]; parts < HG_EW_MAX_INPUTS; k = g->nodes[k].in[0], parts++) {
            const hg_gnode* kn = &g->nodes[k];
            if (kn->kind != HG_GOP_CONCAT || kn->op != n->op || uses[k] != 1 || is_output[k] ||
                n->in[1] == k)
                break;
            absorbed[k] = 1;
        }
    }
    free(uses);
    return HG_OK;
}

static hg_status lower_concat(lower_ctx* L, int32_t id, const char* absorbed) {
    const hg_gir* g = &L->p->ir;
    int32_t parts[HG_EW_MAX_INPUTS], np = 0, k = id;
    for (; g->nodes[k].kind == HG_GOP_CONCAT && (k == id || absorbed[k]); k = g->nodes[k].in[0])
        parts[np++] = g->nodes[k].in[1];
    parts[np++] = k;
    hg_plan_step* st = new_step(L, HG_STEP_CONCAT, id, np, 1);
    if (!st) return hg_error(HG_ERR_OUT_OF_MEMORY, "graph lower: out of memory");
    for (int32_t j = 0; j < np; j++) {
        st->in[j] = L->value_of[parts[np - 1 - j]];
        if (st->in[j] < 0)
            return hg_error(HG_ERR_INTERNAL, "graph lower: concat %%%d reads %%%d, which has no "
                            "value", (int)id, (int)parts[np - 1 - j]);
    }
    int32_t v = new_value(L, id, HG_HOME_SLOT, -1);
    if (v < 0) return hg_error(HG_ERR_OUT_OF_MEMORY, "graph lower: out of memory");
    L->p->steps[L->p->nsteps - 1].out[0] = L->value_of[id] = v;
    return HG_OK;
}

// Concat parts written in place: a part that a kernel step computes for the concat alone (read
// by no other step, viewed by no value, not an output, the concat's dtype) gets no memory of
// its own: it is its range of the concat's output, which the kernel writes directly and the
// concat step then skips (the producer's output is a strided view: ew_rows' packed layouts).
static void place_concat_parts(hg_plan_obj* p) {
    for (int32_t ci = 0; ci < p->nsteps; ci++) {
        const hg_plan_step* c = &p->steps[ci];
        if (c->kind != HG_STEP_CONCAT) continue;
        const hg_plan_value* out = &p->values[c->out[0]];
        if (out->home != HG_HOME_SLOT && out->home != HG_HOME_OUTPUT) continue;
        int32_t axis = p->ir.nodes[c->node].op;
        int64_t at = 0;
        for (int32_t j = 0; j < c->nin; j++) {
            int32_t v = c->in[j];
            hg_plan_value* pv = &p->values[v];
            int64_t len = pv->shape[axis];
            int ok = pv->home == HG_HOME_SLOT && pv->dtype == out->dtype && len > 0;
            for (int32_t k = 0; k < c->nin && ok; k++) ok = k == j || c->in[k] != v;
            for (int32_t k = 0; k < p->noutputs && ok; k++) ok = p->output_value[k] != v;
            for (int32_t w = 0; w < p->nvalues && ok; w++)
                ok = !(p->values[w].src == v && (p->values[w].home == HG_HOME_VIEW ||
                                                 p->values[w].home == HG_HOME_PART));
            int32_t producer = -1;
            for (int32_t i = 0; i < p->nsteps && ok; i++) {
                const hg_plan_step* st = &p->steps[i];
                for (int32_t k = 0; k < st->nout; k++)
                    if (st->out[k] == v) producer = i;
                for (int32_t k = 0; k < st->nin && ok; k++) ok = i == ci || st->in[k] != v;
            }
            if (ok && producer >= 0 && producer < ci && p->steps[producer].kind == HG_STEP_EW) {
                pv->home = HG_HOME_PART;
                pv->src = c->out[0];
                pv->part_axis = axis;
                pv->part_at = at;
                pv->index = -1;
            }
            at += len;
        }
    }
}

hg_status hg_pass_lower(hg_plan_obj* p, const int32_t* group, int32_t ngroups,
                        const int32_t* fused_reduce, const int32_t* emit_at) {
    const hg_gir* g = &p->ir;
    lower_ctx L = {p, malloc((size_t)(g->n + 1) * sizeof(int32_t)), 0, 0,
                   calloc((size_t)g->n + 1, 1)};
    char* is_output = calloc((size_t)g->n + 1, 1);
    char* reduce_done = calloc((size_t)g->n + 1, 1);
    char* absorbed = calloc((size_t)g->n + 1, 1);
    int32_t* root_of = malloc(((size_t)ngroups + 1) * sizeof(int32_t));
    int32_t* stat_of = malloc(((size_t)g->n + 1) * 2 * sizeof(int32_t));   // norm -> stat nodes
    hg_ew_expr* e = malloc(sizeof *e);
    int32_t ext[HG_EW_MAX_INPUTS], outs[HG_EW_MAX_OUTPUTS + 1];
    hg_status s = HG_OK;
    p->input_value = malloc(((size_t)p->ninputs + 1) * sizeof(int32_t));
    p->output_value = malloc(((size_t)p->noutputs + 1) * sizeof(int32_t));
    if (!L.value_of || !L.read_outside || !is_output || !reduce_done || !absorbed || !root_of ||
        !stat_of || !e || !p->input_value || !p->output_value) {
        s = hg_error(HG_ERR_OUT_OF_MEMORY, "graph lower: out of memory");
        goto done;
    }
    for (int32_t i = 0; i < g->n; i++) L.value_of[i] = stat_of[2 * i] = stat_of[2 * i + 1] = -1;
    for (int32_t id = 0; id < g->n; id++)   // hash-consed: one node per norm and statistic
        if (g->nodes[id].kind == HG_GOP_NORM_STAT)
            stat_of[2 * g->nodes[id].in[0] + g->nodes[id].op] = id;
    for (int32_t id = 0; id < g->n; id++)
        for (int i = 0; i < hg_gop_table[g->nodes[id].kind].arity; i++) {
            int32_t o = g->nodes[id].in[i];
            if (group[o] >= 0 && group[o] != group[id]) L.read_outside[o] = 1;
        }
    for (int32_t i = 0; i < g->noutputs; i++) is_output[g->outputs[i]] = 1;
    if ((s = mark_absorbed(g, is_output, absorbed))) goto done;
    for (int32_t k = 0; k < ngroups; k++) root_of[k] = -1;
    for (int32_t id = 0; id < g->n; id++)
        if (group[id] >= 0) root_of[group[id]] = id;

    for (int32_t id = 0; id < g->n && !s; id++) {
        const hg_gnode* n = &g->nodes[id];
        int32_t gid = group[id];
        if (n->kind == HG_GOP_INPUT) {
            int32_t v = new_value(&L, id, HG_HOME_INPUT, (int32_t)n->aux);
            if (v < 0) goto oom;
            L.value_of[id] = v;
            p->input_value[n->aux] = v;
            continue;
        }
        if (gid >= 0) {
            if (emit_at[gid] != id) continue;
            if (fused_reduce && fused_reduce[gid] == HG_GROUP_RECOMPUTED) continue;
            int32_t r = root_of[gid];   // the kernel runs here; its expression ends at r
            int32_t next, nouts;
            int32_t red = fused_reduce ? fused_reduce[gid] : -1;
            // A fused trailing reduction: the group's root is not stored, only the reduction.
            if (red >= 0 && !is_output[r]) {
                if ((s = build_expr(&L, gid, r, group, fused_reduce, is_output, 1, e, ext, &next,
                                    outs, &nouts)))
                    break;
                hg_fused_reduce* fr = NULL;
                if (nouts == 1) {
                    s = hg_fused_reduce_create(p->ex, e, (hg_reduce_op)g->nodes[red].op,
                                               g->nodes[red].dtype, &fr);
                    if (s == HG_ERR_UNSUPPORTED) { hg_clear_error(); s = HG_OK; }
                    if (s) break;
                }
                if (fr) {
                    // The plain kernel too: the run falls back to it (and a library reduction)
                    // when the inputs' layouts are not ones the fused kernel reads.
                    hg_ew_kernel* k = NULL;
                    if ((s = hg_ew_kernel_create(p->ex, e, &k))) { hg_fused_reduce_destroy(fr); break; }
                    hg_plan_step* st = new_step(&L, HG_STEP_EW_REDUCE, red, next, 1);
                    if (!st) { hg_fused_reduce_destroy(fr); hg_ew_kernel_destroy(k); goto oom; }
                    st->fred = fr;
                    st->kernel = k;
                    memcpy(st->in, ext, (size_t)next * sizeof *ext);
                    for (int32_t m = 0; m <= r; m++) st->ew_nodes += group[m] == gid;
                    int32_t v = new_value(&L, red, HG_HOME_SLOT, -1);
                    if (v < 0) goto oom;
                    st->out[0] = L.value_of[red] = v;
                    reduce_done[red] = 1;
                    continue;
                }
            }
            if ((s = build_expr(&L, gid, r, group, fused_reduce, is_output, 1, e, ext, &next, outs,
                                &nouts)))
                break;
            hg_ew_kernel* k = NULL;
            if ((s = hg_ew_kernel_create(p->ex, e, &k))) {
                s = hg_error_prefix(s, "graph lower: kernel for %%%d", (int)r);
                break;
            }
            hg_plan_step* st = new_step(&L, HG_STEP_EW, r, next, nouts);
            if (!st) { hg_ew_kernel_destroy(k); goto oom; }
            st->kernel = k;
            memcpy(st->in, ext, (size_t)next * sizeof *ext);
            for (int32_t m = 0; m <= r; m++) st->ew_nodes += group[m] == gid;
            for (int32_t j = 0; j < nouts; j++) {
                int32_t v = new_value(&L, outs[j], HG_HOME_SLOT, -1);
                if (v < 0) goto oom;
                st->out[j] = L.value_of[outs[j]] = v;
            }
            continue;
        }
        if (n->kind == HG_GOP_CONST) continue;   // inlined where it is read
        if (n->kind == HG_GOP_REDUCE && reduce_done[id]) continue;
        if (n->kind == HG_GOP_ARANGE) {
            hg_plan_step* st = new_step(&L, HG_STEP_ARANGE, id, 0, 1);
            if (!st) goto oom;
            int32_t v = new_value(&L, id, HG_HOME_SLOT, -1);
            if (v < 0) goto oom;
            p->steps[p->nsteps - 1].out[0] = L.value_of[id] = v;
            continue;
        }
        if (n->kind == HG_GOP_NORM_STAT) continue;   // an output of its norm's step
        if (n->kind == HG_GOP_CONCAT) {
            if (absorbed[id]) continue;
            if ((s = lower_concat(&L, id, absorbed))) break;
            continue;
        }
        int32_t x = L.value_of[n->in[0]];
        if (x < 0) { s = hg_error(HG_ERR_INTERNAL, "graph lower: %%%d reads a node with no value", (int)id); break; }
        hg_step_kind kind = n->kind == HG_GOP_REDUCE ? HG_STEP_REDUCE
                            : n->kind == HG_GOP_SOFTMAX ? HG_STEP_SOFTMAX
                            : n->kind == HG_GOP_NORM ? HG_STEP_NORM
                            : n->kind == HG_GOP_MATMUL ? HG_STEP_MATMUL
                            : n->kind == HG_GOP_RESHAPE ? HG_STEP_RESHAPE
                            : n->kind == HG_GOP_PERMUTE || n->kind == HG_GOP_SLICE ? HG_STEP_VIEW
                            : HG_STEP_KIND_COUNT;
        if (kind == HG_STEP_KIND_COUNT) {
            s = hg_error(HG_ERR_INTERNAL, "graph lower: node %%%d (%s) has no lowering", (int)id,
                         hg_gnode_op_name(n));
            break;
        }
        int nin = kind == HG_STEP_MATMUL ? 2 : kind == HG_STEP_NORM ? 3 : 1;
        // a layer norm's statistics read by the graph: more outputs of its step
        int32_t stats[2] = {kind == HG_STEP_NORM ? stat_of[2 * id] : -1,
                            kind == HG_STEP_NORM ? stat_of[2 * id + 1] : -1};
        int nout = 1 + (stats[0] >= 0) + (stats[1] >= 0);
        hg_plan_step* st = new_step(&L, kind, id, nin, nout);
        if (!st) goto oom;
        st->in[0] = x;
        for (int i = 1; i < nin; i++) {
            st->in[i] = L.value_of[n->in[i]];
            if (st->in[i] < 0) {
                s = hg_error(HG_ERR_INTERNAL, "graph lower: %s operand %d has no value",
                             hg_gnode_op_name(n), i);
                break;
            }
        }
        if (s) break;
        int view = kind == HG_STEP_RESHAPE || kind == HG_STEP_VIEW;
        int32_t v = new_value(&L, id, view ? HG_HOME_VIEW : HG_HOME_SLOT, -1);
        if (v < 0) goto oom;
        if (view) p->values[v].src = x;
        p->values[v].strided = kind == HG_STEP_VIEW;
        p->steps[p->nsteps - 1].out[0] = L.value_of[id] = v;
        for (int j = 0, k = 1; j < 2; j++) {
            if (stats[j] < 0) continue;
            int32_t sv = new_value(&L, stats[j], HG_HOME_SLOT, -1);
            if (sv < 0) goto oom;
            p->steps[p->nsteps - 1].out[k++] = L.value_of[stats[j]] = sv;
        }
    }
    // Outputs: computed in place in the caller's tensor where possible, else copied there.
    for (int32_t k = 0; k < g->noutputs && !s; k++) {
        int32_t v = L.value_of[g->outputs[k]];
        if (v < 0) { s = hg_error(HG_ERR_INTERNAL, "graph lower: output %d has no value", (int)k); break; }
        if (p->values[v].home == HG_HOME_SLOT) {
            p->values[v].home = HG_HOME_OUTPUT;
            p->values[v].index = k;
            p->output_value[k] = v;
            continue;
        }
        int32_t w = new_value(&L, g->outputs[k], HG_HOME_OUTPUT, k);
        if (w < 0) goto oom;
        hg_plan_step* st = new_step(&L, HG_STEP_COPY, g->outputs[k], 1, 1);
        if (!st) goto oom;
        st->in[0] = v;
        st->out[0] = w;
        p->output_value[k] = w;
    }
    if (!s) place_concat_parts(p);
    goto done;
oom:
    s = hg_error(HG_ERR_OUT_OF_MEMORY, "graph lower: out of memory");
done:
    free(L.value_of);
    free(is_output);
    free(reduce_done);
    free(absorbed);
    free(root_of);
    free(stat_of);
    free(L.read_outside);
    free(e);
    return s;
}
