// Plans: compile (the pass pipeline), run, info, print, destroy, and the executor's list of
// live plans (destroyed with the executor).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/error.h"
#include "base/handles.h"
#include "base/shape.h"
#include "graph/graph_internal.h"
#include "ops/common/op_common.h"
#include "ops/common/op_dispatch.h"
#include "tensor/tensor_internal.h"
#include "ops/reduce/reduce.h"
#include "ops/rows/norm.h"
#include "ops/rows/softmax.h"
#include "ops/linalg/matmul.h"

// ---- the executor's live plans ----

typedef struct plan_list {
    pthread_mutex_t lock;
    hg_plan_obj* head;
} plan_list;

// fork(): the list's and the plans' arena locks are leaves (their holders wait for no lock but
// the handle table's), taken under the executor's locks. A fused reduction's lock is held
// across launches, so its holder may wait for the executor: the child only makes it anew (its
// partials are scratch of the run the fork interrupted).
static void plan_list_fork(void* ext, hg_fork_phase phase) {
    plan_list* l = ext;
    if (phase == HG_FORK_PREPARE) pthread_mutex_lock(&l->lock);
    for (hg_plan_obj* p = l->head; p; p = p->next) {
        hg_fork_mutex(&p->pool_lock, phase);
        if (phase == HG_FORK_CHILD)
            for (int32_t i = 0; i < p->nsteps; i++)
                if (p->steps[i].fred) hg_fused_reduce_fork_child(p->steps[i].fred);
    }
    if (phase != HG_FORK_PREPARE) hg_fork_mutex(&l->lock, phase);
}

static void* plan_list_create(void) {
    hg_executor_ext_fork(HG_EXT_GRAPH, plan_list_fork);
    plan_list* l = calloc(1, sizeof *l);
    if (l) pthread_mutex_init(&l->lock, NULL);
    return l;
}

static void plan_free(hg_plan_obj* p) {
    hg_plan_release(p);
    pthread_mutex_destroy(&p->pool_lock);
    free(p);
}

// Executor destroy: every plan still alive dies with it (its handle stops resolving).
static void plan_list_destroy(void* ext) {
    plan_list* l = ext;
    hg_plan_obj* p = l->head;
    while (p) {
        hg_plan_obj* next = p->next;
        hg_handle_remove(p->handle, HG_HANDLE_PLAN);
        plan_free(p);
        p = next;
    }
    pthread_mutex_destroy(&l->lock);
    free(l);
}

static plan_list* plans_of(hg_executor_obj* ex) {
    return hg_executor_ext(ex, HG_EXT_GRAPH, plan_list_create, plan_list_destroy);
}

static hg_plan_obj* plan_resolve(hg_plan h, const char* fn) {
    hg_plan_obj* p = hg_handle_get(h.handle, HG_HANDLE_PLAN);
    if (p) return p;
    if (h.handle == 0)
        hg_error(HG_ERR_INVALID_HANDLE, "%s: the plan handle is zero (never compiled?)", fn);
    else if ((h.handle >> 56) != HG_HANDLE_PLAN)
        hg_error(HG_ERR_INVALID_HANDLE, "%s: handle 0x%016llx is not a plan handle", fn,
                 (unsigned long long)h.handle);
    else
        hg_error(HG_ERR_INVALID_HANDLE, "%s: plan handle 0x%016llx is not live (destroyed, or its "
                 "executor was destroyed)", fn, (unsigned long long)h.handle);
    return NULL;
}

static void arena_free(hg_plan_obj* p, hg_plan_arena* a) {
    for (int32_t k = 0; k < p->nslots; k++)
        if (a->buffers[k].handle) hg_buffer_destroy(a->buffers[k]);
    free(a->buffers);
    free(a);
}

void hg_plan_release(hg_plan_obj* p) {
    for (int32_t i = 0; i < p->nsteps; i++) {
        hg_plan_step* st = &p->steps[i];
        if (st->kernel) hg_ew_kernel_destroy(st->kernel);
        if (st->fred) hg_fused_reduce_destroy(st->fred);
        free(st->in);
        free(st->out);
    }
    free(p->steps);
    p->steps = NULL;
    p->nsteps = 0;
    while (p->pool) {
        hg_plan_arena* a = p->pool;
        p->pool = a->next;
        arena_free(p, a);
    }
    free(p->values);
    free(p->slots);
    free(p->input_value);
    free(p->output_value);
    p->values = NULL;
    p->slots = NULL;
    p->input_value = p->output_value = NULL;
    hg_gir_free(&p->ir);
}

// ---- compile ----

void hg_compile_opts_from_env(hg_compile_opts* o) {
    o->rewrites = 1;
    o->fold = 1;
    o->fusion = !hg_config_bool("HOLOGRAM_DISABLE_FUSION", 0);
    static const char* const dumps[] = {"passes"};
    o->dump = hg_config_choice("HOLOGRAM_DUMP", dumps, 1, -1) == 0;
}

static void dump_ir(const hg_gir* g, const int32_t* group, const char* pass) {
    char* text = NULL;
    if (hg_gir_print(g, group, &text)) return;
    fprintf(stderr, "=== hologram graph after %s ===\n%s", pass, text);
    free(text);
}

hg_status hg_graph_compile_opts(hg_graph gh, hg_executor exh, const hg_compile_opts* o,
                                hg_plan* out) {
    static const char fn[] = "hg_graph_compile";
    hg_graph_obj* g = hg_graph_resolve(gh, fn);
    if (!g) return HG_ERR_INVALID_HANDLE;
    hg_executor_obj* ex = hg_executor_resolve(exh, fn);
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    if (g->ir.noutputs == 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: the graph has no outputs (mark them with "
                        "hg_graph_output)", fn);
    plan_list* list = plans_of(ex);
    if (!list) return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    hg_plan_obj* p = calloc(1, sizeof *p);
    if (!p) return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    pthread_mutex_init(&p->pool_lock, NULL);
    p->ex = ex;
    p->ninputs = g->ir.ninputs;
    p->noutputs = g->ir.noutputs;
    int32_t *group = NULL, *fused = NULL, *emit = NULL, ngroups = 0;
    hg_status s = hg_gir_copy(&p->ir, &g->ir);
    if (s) goto fail;
    if (o->dump) dump_ir(&p->ir, NULL, "build");
    if ((s = hg_pass_canonicalize(&p->ir, ex, o, &p->info.rewrites, p->rule_hits))) goto fail;
    p->info.nodes = p->ir.n;
    if (o->dump) dump_ir(&p->ir, NULL, "canonicalize");
    group = malloc(((size_t)p->ir.n + 1) * sizeof *group);
    fused = malloc(((size_t)p->ir.n + 1) * sizeof *fused);
    emit = malloc(((size_t)p->ir.n + 1) * sizeof *emit);
    if (!group || !fused || !emit) { s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn); goto fail; }
    if ((s = hg_pass_fuse(&p->ir, o->fusion, group, &ngroups, fused, emit))) goto fail;
    if (o->dump) dump_ir(&p->ir, group, "fuse");
    if ((s = hg_pass_lower(p, group, ngroups, fused, emit))) goto fail;
    if ((s = hg_pass_plan(p))) goto fail;
    for (int32_t i = 0; i < p->nsteps; i++) {
        hg_step_kind k = p->steps[i].kind;
        if (k == HG_STEP_EW || k == HG_STEP_EW_REDUCE) p->info.kernels++;
        else if (k == HG_STEP_REDUCE || k == HG_STEP_SOFTMAX || k == HG_STEP_NORM || k == HG_STEP_MATMUL ||
                 k == HG_STEP_ARANGE)
            p->info.library_calls++;
    }
    if (o->dump) {
        char* text = NULL;
        if (!hg_plan_print_text(p, &text)) {
            fprintf(stderr, "=== hologram graph after lower+plan ===\n%s", text);
            free(text);
        }
    }
    free(group);
    free(fused);
    free(emit);
    p->handle = hg_handle_insert(HG_HANDLE_PLAN, p);
    if (!p->handle) {
        plan_free(p);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of handles", fn);
    }
    pthread_mutex_lock(&list->lock);
    p->next = list->head;
    if (list->head) list->head->prev = p;
    list->head = p;
    pthread_mutex_unlock(&list->lock);
    out->handle = p->handle;
    return HG_OK;
fail:
    free(group);
    free(fused);
    free(emit);
    plan_free(p);
    return s;
}

hg_status hg_graph_compile(hg_graph g, hg_executor ex, hg_plan* out) {
    hg_compile_opts o;
    hg_compile_opts_from_env(&o);
    return hg_graph_compile_opts(g, ex, &o, out);
}

hg_status hg_plan_destroy(hg_plan h) {
    hg_plan_obj* p = plan_resolve(h, "hg_plan_destroy");
    if (!p) return HG_ERR_INVALID_HANDLE;
    plan_list* list = plans_of(p->ex);
    if (list) pthread_mutex_lock(&list->lock);
    // Removed under the list lock: an executor destroy racing with this finds it gone.
    if (!hg_handle_remove(h.handle, HG_HANDLE_PLAN)) {
        if (list) pthread_mutex_unlock(&list->lock);
        return hg_error(HG_ERR_INVALID_HANDLE, "hg_plan_destroy: plan already destroyed");
    }
    if (list) {
        if (p->prev) p->prev->next = p->next;
        else list->head = p->next;
        if (p->next) p->next->prev = p->prev;
        pthread_mutex_unlock(&list->lock);
    }
    plan_free(p);
    return HG_OK;
}

hg_status hg_plan_info_get(hg_plan h, hg_plan_info* out) {
    hg_plan_obj* p = plan_resolve(h, "hg_plan_info_get");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = p->info;
    return HG_OK;
}

// ---- printing ----

static const char* step_name(hg_step_kind k) {
    static const char* const names[HG_STEP_KIND_COUNT] = {
        "kernel", "kernel+reduce", "call hg_reduce", "call hg_softmax", "call hg_norm",
        "call hg_matmul",
        "call hg_arange", "view reshape", "copy", "view", "concat"};
    return (unsigned)k < HG_STEP_KIND_COUNT ? names[k] : "?";
}

static void print_value(hg_strbuf* b, const hg_plan_obj* p, int32_t v) {
    const hg_plan_value* pv = &p->values[v];
    static const char* const homes[] = {"in", "out", "tmp", "view", "part"};
    hg_sb_printf(b, "%%%d:%s", (int)pv->node, homes[pv->home]);
    if (pv->home == HG_HOME_PART) hg_sb_printf(b, "(%%%d)", (int)p->values[pv->src].node);
    else if (pv->index >= 0) hg_sb_printf(b, "%d", (int)pv->index);
}

hg_status hg_plan_print_text(const hg_plan_obj* p, char** out_text) {
    hg_strbuf b = {0};
    hg_sb_printf(&b, "plan: %d kernels, %d library calls, %d nodes, %d rewrites, %llu peak bytes\n",
                 (int)p->info.kernels, (int)p->info.library_calls, (int)p->info.nodes,
                 (int)p->info.rewrites, (unsigned long long)p->info.peak_bytes);
    for (int32_t i = 0; i < p->nsteps; i++) {
        const hg_plan_step* st = &p->steps[i];
        hg_sb_printf(&b, "step %d: %s", (int)i, step_name(st->kind));
        if (st->kind == HG_STEP_EW)
            hg_sb_printf(&b, " (%d nodes, %d instructions)", (int)st->ew_nodes,
                         (int)hg_ew_kernel_instr_count(st->kernel));
        if (st->kind == HG_STEP_EW_REDUCE)
            hg_sb_printf(&b, " (%d nodes + %s, %d instructions)", (int)st->ew_nodes,
                         hg_gnode_op_name(&p->ir.nodes[st->node]),
                         (int)hg_fused_reduce_instr_count(st->fred));
        hg_sb_printf(&b, " ");
        for (int32_t j = 0; j < st->nout; j++) {
            if (j) hg_sb_printf(&b, ", ");
            print_value(&b, p, st->out[j]);
        }
        hg_sb_printf(&b, " <-");
        for (int32_t j = 0; j < st->nin; j++) {
            hg_sb_printf(&b, j ? ", " : " ");
            print_value(&b, p, st->in[j]);
        }
        hg_sb_printf(&b, "\n");
    }
    for (int32_t k = 0; k < p->nslots; k++)
        hg_sb_printf(&b, "tmp%d: %s x %lld\n", (int)k, hg_dtype_name(p->slots[k].dtype),
                     (long long)p->slots[k].count);
    char* s = hg_sb_take(&b);
    if (!s) return HG_ERR_OUT_OF_MEMORY;
    *out_text = s;
    return HG_OK;
}

hg_status hg_plan_print(hg_plan h, char** out_text) {
    hg_plan_obj* p = plan_resolve(h, "hg_plan_print");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out_text, "out_text");
    return hg_plan_print_text(p, out_text);
}

// ---- run ----

static hg_status arena_take(hg_plan_obj* p, hg_plan_arena** out) {
    pthread_mutex_lock(&p->pool_lock);
    hg_plan_arena* a = p->pool;
    if (a) p->pool = a->next;
    pthread_mutex_unlock(&p->pool_lock);
    if (a) { *out = a; return HG_OK; }
    a = calloc(1, sizeof *a);
    if (a) a->buffers = calloc((size_t)p->nslots + 1, sizeof *a->buffers);
    if (!a || !a->buffers) {
        if (a) free(a->buffers);
        free(a);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "hg_plan_run: out of memory");
    }
    hg_executor exh = {p->ex->handle};
    for (int32_t k = 0; k < p->nslots; k++) {
        hg_status s = hg_buffer_create_ex(exh, p->slots[k].dtype, (size_t)p->slots[k].count, HG_BUFFER_UNINITIALIZED, &a->buffers[k]);
        if (s) {
            arena_free(p, a);
            return hg_error_prefix(s, "hg_plan_run: allocating intermediate memory");
        }
    }
    *out = a;
    return HG_OK;
}

// A plan keeps the intermediate memory of its runs for the next one when it is at most this
// large; a larger arena goes back to the executor after each run, whose memory cache hands the
// same blocks to the next plan (the next layer of a model): with matmuls inside plans (a
// transformer layer's projections) every plan keeping its arena would hold the activations of
// every layer at once, several GB for a 7B model at 2048 tokens.
#define PLAN_KEEP_ARENA_BYTES ((uint64_t)32 << 20)

static void arena_give(hg_plan_obj* p, hg_plan_arena* a) {
    if (p->info.peak_bytes > PLAN_KEEP_ARENA_BYTES) {
        arena_free(p, a);
        return;
    }
    pthread_mutex_lock(&p->pool_lock);
    a->next = p->pool;
    p->pool = a;
    pthread_mutex_unlock(&p->pool_lock);
}

static hg_tensor slot_tensor(const hg_plan_obj* p, const hg_plan_arena* a, int32_t slot,
                             const hg_plan_value* v) {
    hg_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = a->buffers[slot];
    t.dtype = v->dtype;
    t.ndim = v->ndim;
    memcpy(t.shape, v->shape, sizeof t.shape);
    hg_tensor_contiguous_strides(v->ndim, t.shape, t.strides);
    (void)p;
    return t;
}

static int same_shape_t(const hg_tensor* t, const hg_plan_value* v) {
    if (t->ndim != v->ndim) return 0;
    for (int32_t i = 0; i < v->ndim; i++)
        if (t->shape[i] != v->shape[i]) return 0;
    return 1;
}

static hg_status check_args(hg_plan_obj* p, int32_t ninputs, const hg_tensor* inputs,
                            int32_t noutputs, const hg_tensor* outputs) {
    static const char fn[] = "hg_plan_run";
    char sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT], name[48];
    if (ninputs != p->ninputs)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: %d inputs given, the graph has %d", fn,
                        (int)ninputs, (int)p->ninputs);
    if (noutputs != p->noutputs)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: %d outputs given, the graph has %d", fn,
                        (int)noutputs, (int)p->noutputs);
    if (ninputs > 0 && !inputs) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'inputs' is NULL", fn);
    if (!outputs) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'outputs' is NULL", fn);
    // Not traced: the run's span is run_steps'.
    hg_op_ctx c = {.fn = fn, .ex = p->ex};
    for (int32_t i = 0; i < ninputs + noutputs; i++) {
        int is_in = i < ninputs;
        int32_t k = is_in ? i : i - ninputs;
        const hg_tensor* t = is_in ? &inputs[k] : &outputs[k];
        const hg_plan_value* v = &p->values[is_in ? p->input_value[k] : p->output_value[k]];
        // Names are formatted only for a message (one snprintf per tensor was a fifth of a
        // 1-element run): a failed check is repeated with the name.
        hg_status s = is_in ? hg_op_input(&c, t, "?", NULL, NULL) : hg_op_existing_output(&c, t, "?");
        if (!s && t->dtype == v->dtype && same_shape_t(t, v)) continue;
        snprintf(name, sizeof name, "%s[%d]", is_in ? "inputs" : "outputs", (int)k);
        if (s) return is_in ? hg_op_input(&c, t, name, NULL, NULL) : hg_op_existing_output(&c, t, name);
        if (t->dtype != v->dtype)
            return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: %s has dtype %s, the graph's %s %d is %s",
                            fn, name, hg_dtype_name(t->dtype), is_in ? "input" : "output", (int)k,
                            hg_dtype_name(v->dtype));
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: %s has shape %s, the graph's %s %d has "
                        "shape %s", fn, name, hg_op_dims(sb, t->ndim, t->shape),
                        is_in ? "input" : "output", (int)k, hg_op_dims(tb, v->ndim, v->shape));
    }
    // An output overlapping an input is allowed (numpy's rule, as for the ops): run_plan then
    // computes that output into temporary memory and copies it at the end.
    for (int32_t k = 0; k < noutputs; k++) {
        for (int32_t j = 0; j < k; j++)
            if (hg_op_overlaps(&outputs[k], &outputs[j]))
                return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: outputs[%d] overlaps outputs[%d]",
                                fn, (int)k, (int)j);
    }
    return HG_OK;
}


_Atomic int64_t hg_graph_reduce_fallbacks = 0;

// A fused reduction whose inputs the fused kernel cannot read directly: the group's kernel
// into temporary memory, then the library reduction.
static hg_status reduce_fallback(hg_plan_obj* p, const hg_plan_step* st, const hg_tensor* ins,
                                 const hg_tensor* out, hg_op_ctx* c) {
    hg_graph_reduce_fallbacks++;
    const hg_gnode* r = &p->ir.nodes[st->node];
    const hg_gnode* x = &p->ir.nodes[r->in[0]];
    hg_executor exh = {p->ex->handle};
    hg_buffer buf;
    hg_status s = hg_buffer_create_ex(exh, x->dtype, (size_t)hg_gir_numel(x), HG_BUFFER_UNINITIALIZED, &buf);
    if (s) return s;
    hg_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = buf;
    t.dtype = x->dtype;
    t.ndim = x->ndim;
    memcpy(t.shape, x->shape, sizeof t.shape);
    hg_tensor_contiguous_strides(t.ndim, t.shape, t.strides);
    s = hg_gir_numel(x) ? hg_ew_kernel_run(st->kernel, ins, &t) : HG_OK;
    if (!s) s = hg_reduce_into(c, (hg_reduce_op)r->op, &t, (uint32_t)r->aux, 0.0, out);
    hg_buffer_destroy(buf);
    return s;
}

// Each part copied into its range of out along the concat's axis.
// A part's copy into its slice of the output on the executor's threads: the copy split along
// its longest dim other than the concat axis (hg_tensor_copy runs on the caller; a concat of
// Llama's rotary halves, rows of 32 floats, ran at ~4 GB/s on one thread,
// docs/performance.md).
#define CONCAT_PARALLEL_MIN 32768   // elements: below, one thread
#define CONCAT_MAX_PARTS 64
typedef struct concat_job {
    const hg_tensor *dst, *src;
    int32_t dim;
    int parts;
    hg_status err[CONCAT_MAX_PARTS];
} concat_job;

static void concat_part(void* ctx, int w) {
    concat_job* j = ctx;
    int64_t n = j->dst->shape[j->dim], lo = n * w / j->parts, hi = n * (w + 1) / j->parts;
    hg_tensor d, s;
    hg_status st = hg_tensor_slice(j->dst, j->dim, lo, hi, 1, &d);
    if (!st) st = hg_tensor_slice(j->src, j->dim, lo, hi, 1, &s);
    if (!st && hi > lo) st = hg_tensor_copy(&d, &s);
    j->err[w] = st;
}

// dst = src; on host memory with a dim to split and no overlap, on the executor's threads.
static hg_status copy_part(const hg_plan_obj* p, const hg_tensor* dst, const hg_tensor* src,
                           int32_t ax) {
    hg_op_ctx c = {.fn = "hg_plan_run", .ex = p->ex};
    int32_t dim = -1;
    for (int32_t d = 0; d < src->ndim; d++)
        if (d != ax && src->shape[d] > 1 && (dim < 0 || src->shape[d] > src->shape[dim])) dim = d;
    int parts = hg_op_num_threads(&c);
    if (parts > CONCAT_MAX_PARTS) parts = CONCAT_MAX_PARTS;
    if (dim < 0 || parts < 2 || !p->ex->vt->host_visible ||
        hg_view_numel(src) < CONCAT_PARALLEL_MIN || hg_op_overlaps(dst, src))
        return hg_tensor_copy(dst, src);
    concat_job j = {dst, src, dim, parts < src->shape[dim] ? parts : (int)src->shape[dim], {0}};
    int ran = 0;
    hg_status s = hg_op_parallel(&c, j.parts, concat_part, &j, &ran);
    if (s == HG_ERR_UNSUPPORTED) {
        hg_clear_error();
        return hg_tensor_copy(dst, src);
    }
    for (int w = 0; w < j.parts && !s; w++) s = j.err[w];
    return s;
}

static hg_status run_concat(const hg_plan_obj* p, const hg_plan_step* st, const hg_tensor* tv,
                            const hg_tensor* out) {
    int32_t ax = p->ir.nodes[st->node].op;
    int64_t at = 0;
    for (int32_t j = 0; j < st->nin; j++) {
        const hg_tensor* part = &tv[st->in[j]];
        int64_t len = part->shape[ax];
        // empty, or written in place by its kernel (HG_HOME_PART)
        if (len == 0 || hg_view_numel(part) == 0 || p->values[st->in[j]].home == HG_HOME_PART) {
            at += len;
            continue;
        }
        hg_tensor dst;
        hg_status s = hg_tensor_slice(out, ax, at, at + len, 1, &dst);
        if (!s) s = copy_part(p, &dst, part, ax);
        if (s) return s;
        at += len;
    }
    return HG_OK;
}

// A layer norm step that also writes its statistics (hg_graph_norm_stat; each NULL where the
// graph reads none): the host row kernel writes them from the same pass, through a temporary
// where the tensor is not C-contiguous. A device's row kernels write none (documented: build
// them as graph nodes there).
static hg_status run_norm_stats(hg_op_ctx* c, const hg_tensor* x, int32_t nnorm,
                                const hg_tensor* w, const hg_tensor* b, double eps,
                                const hg_tensor* out, const hg_tensor* mean,
                                const hg_tensor* rstd) {
    if (hg_op_route_of(c, HG_OPF_ROWS, x->dtype) == HG_ROUTE_DEVICE)
        return hg_error(HG_ERR_UNSUPPORTED, "hg_plan_run: a layer norm's statistics "
                        "(hg_graph_norm_stat) are computed on host executors only; on this "
                        "device build them as graph nodes (reductions)");
    if (hg_view_numel(x) == 0) {   // rows of no element (or none): torch's mean 0, rstd NaN
        hg_status s = mean ? hg_fill(mean, hg_scalar_f(0.0)) : HG_OK;
        return s || !rstd ? s : hg_fill(rstd, hg_scalar_f(NAN));
    }
    const hg_tensor* st[2] = {mean, rstd};
    hg_tensor tmp[2];
    hg_buffer buf[2] = {{0}, {0}};
    hg_status s = HG_OK;
    for (int i = 0; i < 2 && !s; i++) {
        if (!st[i] || hg_tensor_is_c_contiguous(st[i], hg_view_numel(st[i]))) continue;
        s = hg_buffer_create_ex((hg_executor){c->ex->handle}, x->dtype,
                                (size_t)hg_view_numel(st[i]), HG_BUFFER_UNINITIALIZED, &buf[i]);
        if (!s) s = hg_tensor_view(buf[i], st[i]->ndim, st[i]->shape, NULL, 0, &tmp[i]);
    }
    if (!s)
        s = hg_norm_rows(c, 0, x, nnorm, w, b, eps, out, buf[0].handle ? &tmp[0] : mean,
                         buf[1].handle ? &tmp[1] : rstd);
    for (int i = 0; i < 2; i++) {
        if (!s && buf[i].handle) s = hg_tensor_copy(st[i], &tmp[i]);
        if (buf[i].handle) hg_buffer_destroy(buf[i]);
    }
    return s;
}

// The "step" span of plan step i (its output's dtype and shape, the step's kind).
static void trace_step(const hg_plan_obj* p, const hg_plan_step* st, int32_t i,
                       const hg_tensor* out, hg_trace_span* sp) {
    static const char* const kinds[HG_STEP_KIND_COUNT] = {
        "fused elementwise", "fused elementwise + reduction", "reduction", "softmax", "norm",
        "matmul",
        "arange", "reshape", "copy", "view", "concat"};
    char name[48];
    snprintf(name, sizeof name, "step %d: %s", (int)i, hg_gnode_op_name(&p->ir.nodes[st->node]));
    hg_trace_event e;
    hg_trace_event_init(&e, "step", name);
    e.executor = hg_backend_name(p->ex->kind);
    e.executor_id = p->ex->handle;
    if (out) {   // NULL: the step failed before making its output
        e.dtype = out->dtype;
        e.ndim = out->ndim;
        memcpy(e.shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    }
    snprintf(e.detail, sizeof e.detail, "%s",
             st->kind >= 0 && st->kind < HG_STEP_KIND_COUNT ? kinds[st->kind] : "?");
    hg_trace_span_end(sp, &e);
}

static hg_status run_steps(hg_plan_obj* p, hg_plan_arena* a, const hg_tensor* inputs,
                           const hg_tensor* outputs, hg_tensor* tv) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_plan_run");
    c.ex = p->ex;
    c.threads_awake = 1;
    for (int32_t v = 0; v < p->nvalues; v++) {
        const hg_plan_value* pv = &p->values[v];
        if (pv->home == HG_HOME_INPUT) tv[v] = inputs[pv->index];
        else if (pv->home == HG_HOME_OUTPUT) tv[v] = outputs[pv->index];
        else if (pv->home == HG_HOME_SLOT) tv[v] = slot_tensor(p, a, pv->index, pv);
    }
    for (int32_t v = 0; v < p->nvalues; v++) {   // parts placed in a concat's output
        const hg_plan_value* pv = &p->values[v];
        if (pv->home != HG_HOME_PART) continue;
        hg_status s = hg_tensor_slice(&tv[pv->src], pv->part_axis, pv->part_at,
                                      pv->part_at + pv->shape[pv->part_axis], 1, &tv[v]);
        if (s) return hg_error_prefix(s, "hg_plan_run: part %%%d", (int)pv->node);
    }
    hg_tensor ins[HG_EW_MAX_INPUTS], outs[HG_EW_MAX_OUTPUTS + 1];
    for (int32_t i = 0; i < p->nsteps; i++) {
        const hg_plan_step* st = &p->steps[i];
        hg_status s = HG_OK;
        for (int32_t j = 0; j < st->nin && j < HG_EW_MAX_INPUTS; j++) ins[j] = tv[st->in[j]];
        for (int32_t j = 0; j < st->nout && j <= HG_EW_MAX_OUTPUTS; j++) outs[j] = tv[st->out[j]];
        hg_trace_span sp = {0, 0};
        if (hg_trace_on()) hg_trace_span_begin(&sp);
        switch (st->kind) {
        case HG_STEP_EW:
            if (hg_view_numel(&outs[0]) == 0) break;
            s = hg_ew_kernel_run(st->kernel, ins, outs);
            break;
        case HG_STEP_EW_REDUCE:
            s = hg_fused_reduce_run(st->fred, ins, &outs[0]);
            if (s == HG_ERR_UNSUPPORTED) {
                hg_clear_error();
                s = reduce_fallback(p, st, ins, &outs[0], &c);
            }
            break;
        case HG_STEP_REDUCE: {
            const hg_gnode* n = &p->ir.nodes[st->node];
            s = hg_reduce_into(&c, (hg_reduce_op)n->op, &ins[0], (uint32_t)n->aux, 0.0, &outs[0]);
            break;
        }
        case HG_STEP_SOFTMAX: {
            const hg_gnode* n = &p->ir.nodes[st->node];
            s = hg_softmax_into(&c, &ins[0], (int32_t)n->aux, n->op, &outs[0]);
            break;
        }
        case HG_STEP_MATMUL:
            s = hg_matmul_into(&c, &ins[0], &ins[1], &outs[0]);
            break;
        case HG_STEP_NORM: {   // the same row kernels as hg_layer_norm / hg_rms_norm
            const hg_gnode* n = &p->ir.nodes[st->node];
            const hg_tensor* w = (n->aux2 & HG_GNORM_WEIGHT) ? &ins[1] : NULL;
            const hg_tensor* b = (n->aux2 & HG_GNORM_BIAS) ? &ins[2] : NULL;
            if (st->nout == 1) {
                s = hg_norm_into(&c, n->op, &ins[0], (int32_t)n->aux, w, b, n->value.f, &outs[0]);
                break;
            }
            const hg_tensor* stat[2] = {NULL, NULL};   // mean, rstd (hg_graph_norm_stat)
            for (int32_t j = 1; j < st->nout; j++)
                stat[p->ir.nodes[p->values[st->out[j]].node].op] = &outs[j];
            s = run_norm_stats(&c, &ins[0], (int32_t)n->aux, w, b, n->value.f, &outs[0], stat[0],
                               stat[1]);
            break;
        }
        case HG_STEP_ARANGE:
            s = hg_arange(&outs[0], 0.0, 1.0);
            break;
        case HG_STEP_RESHAPE: {
            const hg_plan_value* pv = &p->values[st->out[0]];
            s = hg_tensor_reshape(&ins[0], pv->ndim, pv->shape, &tv[st->out[0]]);
            if (s == HG_ERR_UNSUPPORTED && pv->index >= 0) {
                // No view of these strides: copy into the value's slot, then view that.
                hg_clear_error();
                hg_plan_value src = *pv;
                src.ndim = ins[0].ndim;
                memcpy(src.shape, ins[0].shape, sizeof src.shape);
                hg_tensor tmp = slot_tensor(p, a, pv->index, &src);
                s = hg_tensor_copy(&tmp, &ins[0]);
                if (!s) s = hg_tensor_reshape(&tmp, pv->ndim, pv->shape, &tv[st->out[0]]);
            }
            break;
        }
        case HG_STEP_VIEW: {
            const hg_gnode* n = &p->ir.nodes[st->node];
            if (n->kind == HG_GOP_PERMUTE) {
                int32_t perm[HG_MAX_DIMS];
                for (int32_t d = 0; d < n->ndim; d++) perm[d] = hg_gperm_get(n, d);
                s = hg_tensor_permute(&ins[0], perm, &tv[st->out[0]]);
            } else {
                s = hg_tensor_slice(&ins[0], n->op, n->aux, n->aux + n->shape[n->op] * n->aux2,
                                    n->aux2, &tv[st->out[0]]);
            }
            break;
        }
        case HG_STEP_CONCAT:
            s = run_concat(p, st, tv, &outs[0]);
            break;
        case HG_STEP_COPY:
            if (hg_view_numel(&outs[0]) == 0) break;
            s = hg_tensor_copy(&outs[0], &ins[0]);
            break;
        default:
            s = hg_error(HG_ERR_INTERNAL, "hg_plan_run: step %d has kind %d", (int)i, (int)st->kind);
        }
        // The step's output as computed: a view or reshape step sets tv[out] itself.
        if (sp.t0) trace_step(p, st, i, st->nout > 0 && !s ? &tv[st->out[0]] : NULL, &sp);
        if (s) return hg_error_prefix(s, "hg_plan_run: step %d (%s of node %%%d)", (int)i,
                                      hg_gnode_op_name(&p->ir.nodes[st->node]), (int)st->node);
    }
    return HG_OK;
}

hg_status hg_plan_run(hg_plan h, int32_t ninputs, const hg_tensor* inputs, int32_t noutputs,
                      const hg_tensor* outputs) {
    hg_plan_obj* p = plan_resolve(h, "hg_plan_run");
    if (!p) return HG_ERR_INVALID_HANDLE;
    hg_status s = check_args(p, ninputs, inputs, noutputs, outputs);
    if (s) return s;
    hg_plan_arena* a = NULL;
    if ((s = arena_take(p, &a))) return s;
    hg_tensor* tv = calloc((size_t)p->nvalues + 1, sizeof *tv);   // views: set by their steps
    hg_tensor* outs = malloc(((size_t)noutputs + 1) * sizeof *outs);
    hg_buffer* tmp = calloc((size_t)noutputs + 1, sizeof *tmp);
    if (!tv || !outs || !tmp) {
        s = hg_error(HG_ERR_OUT_OF_MEMORY, "hg_plan_run: out of memory");
        goto done;
    }
    // Outputs that are exactly an input (in place) are computed into temporary memory.
    hg_executor exh = {p->ex->handle};
    for (int32_t k = 0; k < noutputs && !s; k++) {
        outs[k] = outputs[k];
        for (int32_t i = 0; i < ninputs; i++) {
            if (!hg_op_overlaps(&outputs[k], &inputs[i])) continue;
            const hg_tensor* o = &outputs[k];
            int64_t n = hg_view_numel(o);
            if ((s = hg_buffer_create_ex(exh, o->dtype, (size_t)n, HG_BUFFER_UNINITIALIZED, &tmp[k]))) break;
            hg_tensor t;
            memset(&t, 0, sizeof t);
            t.buffer = tmp[k];
            t.dtype = o->dtype;
            t.ndim = o->ndim;
            memcpy(t.shape, o->shape, sizeof t.shape);
            hg_tensor_contiguous_strides(t.ndim, t.shape, t.strides);
            outs[k] = t;
            break;
        }
    }
    if (!s) s = run_steps(p, a, inputs, outs, tv);
    for (int32_t k = 0; k < noutputs && !s; k++)
        if (tmp[k].handle && hg_view_numel(&outputs[k]) > 0) s = hg_tensor_copy(&outputs[k], &outs[k]);
done:
    for (int32_t k = 0; tmp && k < noutputs; k++)
        if (tmp[k].handle) hg_buffer_destroy(tmp[k]);
    free(tv);
    free(outs);
    free(tmp);
    arena_give(p, a);
    return s;
}
