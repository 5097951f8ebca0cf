// Running composite ops: the dispatch (an override, else the decomposition), the table of
// decompositions, and the per-executor cache of compiled decompositions.
//
// The cache maps (op, input dtypes and shapes, output dtypes and which outputs are asked,
// axis, eps) to a plan compiled for the executor: at most HG_COP_CACHE_MAX plans, the least
// recently used one evicted (destroyed) for a new one. A plan counts the runs in progress
// (users) and is never evicted while one runs on another thread; when every plan is running,
// a call compiles its own and destroys it after the run. The plans left are the graph
// layer's, destroyed with the executor (the graph ext is freed before this one, which then
// only frees its table).
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/fork.h"
#include "composite/decomp.h"
#include "ops/optim/adam.h"
#include "runtime/objects.h"

const hg_cop_info hg_cop_table[HG_COP_COUNT] = {
    [HG_COP_SOFTMAX] = {"hg_softmax", 1, 1, 0, hg_decomp_softmax, HG_OPF_ROWS},
    [HG_COP_LOG_SOFTMAX] = {"hg_log_softmax", 1, 1, 0, hg_decomp_softmax, HG_OPF_ROWS},
    [HG_COP_SOFTMAX_BW] = {"hg_softmax_backward", 2, 1, 0, hg_decomp_softmax_bw, HG_OPF_ROWS},
    [HG_COP_LOG_SOFTMAX_BW] = {"hg_log_softmax_backward", 2, 1, 0, hg_decomp_softmax_bw,
                               HG_OPF_ROWS},
    [HG_COP_LAYER_NORM_BW] = {"hg_layer_norm_backward", 5, 3, 0, hg_decomp_norm_bw, HG_OPF_ROWS},
    [HG_COP_RMS_NORM_BW] = {"hg_rms_norm_backward", 3, 2, 0, hg_decomp_norm_bw, HG_OPF_ROWS},
    [HG_COP_LAYER_NORM] = {"hg_layer_norm", 3, 3, 0, hg_decomp_norm, HG_OPF_ROWS},
    [HG_COP_RMS_NORM] = {"hg_rms_norm", 2, 1, 0, hg_decomp_norm, HG_OPF_ROWS},
    [HG_COP_CE_BW] = {"hg_cross_entropy_backward", 3, 1, 0, hg_decomp_ce_bw, HG_OPF_ROWS},
    [HG_COP_MSE] = {"hg_mse_loss", 2, 1, 0, hg_decomp_ew_loss, HG_OPF_LOSS},
    [HG_COP_BCE] = {"hg_binary_cross_entropy", 3, 1, 0, hg_decomp_ew_loss, HG_OPF_LOSS},
    [HG_COP_BCE_LOGITS] = {"hg_binary_cross_entropy_with_logits", 4, 1, 0, hg_decomp_ew_loss,
                           HG_OPF_LOSS},
    [HG_COP_CE] = {"hg_cross_entropy", 2, 1, 0, hg_decomp_ce, HG_OPF_LOSS},
    [HG_COP_ATTENTION] = {"hg_scaled_dot_product_attention", 4, 2, 0, hg_decomp_attention,
                          HG_OPF_ROWS},
    [HG_COP_ATTENTION_BW] = {"hg_scaled_dot_product_attention_backward", 7, 3, 0,
                             hg_decomp_attention_bw, HG_OPF_ROWS},
    [HG_COP_ADAM] = {"hg_adam_step", 5, 4, HG_ADAM_SCALAR_COUNT, hg_decomp_adam, HG_OPF_OPTIM},
};
_Static_assert(HG_ADAM_SCALAR_COUNT <= HG_COP_MAX_SCALARS, "Adam's scalars fit a call");
_Static_assert(sizeof hg_cop_table / sizeof hg_cop_table[0] == HG_COP_COUNT,
               "one decomposition per composite op");

// ---- mode ----

_Atomic int hg_cop_mode_now = -1;

hg_cop_mode hg_cop_mode_read(void) {
    static const char* const names[HG_COP_MODE_COUNT] = {"auto", "decomp"};
    int m = hg_config_choice("HOLOGRAM_COMPOSITE", names, HG_COP_MODE_COUNT, HG_COP_AUTO);
    atomic_store_explicit(&hg_cop_mode_now, m, memory_order_relaxed);
    return (hg_cop_mode)m;
}

void hg_cop_mode_set(hg_cop_mode m) { atomic_store(&hg_cop_mode_now, (int)m); }

// ---- the cache ----

typedef struct cop_key {
    int32_t op, axis;
    double eps;
    int64_t ignore_index;
    int32_t reduction, rdtype;
    uint32_t flags;
    int32_t in_dtype[HG_COP_MAX_IN], in_ndim[HG_COP_MAX_IN];   // dtype -1: absent
    int64_t in_shape[HG_COP_MAX_IN][HG_MAX_DIMS];
    int32_t out_dtype[HG_COP_MAX_OUT];                          // -1: not asked
} cop_key;

typedef struct cop_entry {
    cop_key key;
    uint32_t hash;
    int32_t users;             // runs of the plan in progress: never evicted while > 0
    uint64_t used;             // the cache's clock at the entry's last use
    hg_plan plan;              // handle 0: a free entry
} cop_entry;

#define COP_SLOTS (2 * HG_COP_CACHE_MAX)

typedef struct cop_cache {
    pthread_mutex_t lock;      // a leaf: nothing else is taken while it is held
    int64_t n, hits, compiles;
    uint64_t clock;
    cop_entry ents[HG_COP_CACHE_MAX];
    int16_t index[COP_SLOTS];  // open addressing over ents: entry + 1, 0 an empty slot
} cop_cache;
_Static_assert(HG_COP_CACHE_MAX < 32767, "entries are indexed by int16_t");

static void cache_fork(void* ext, hg_fork_phase phase) {
    hg_fork_mutex(&((cop_cache*)ext)->lock, phase);
}

static void* cache_create(void) {
    hg_executor_ext_fork(HG_EXT_COMPOSITE, cache_fork);
    cop_cache* cc = calloc(1, sizeof *cc);
    if (cc) pthread_mutex_init(&cc->lock, NULL);
    return cc;
}

static void cache_destroy(void* ext) {
    cop_cache* cc = ext;
    pthread_mutex_destroy(&cc->lock);
    free(cc);
}

static void key_fill(const hg_cop_call* k, cop_key* key) {
    memset(key, 0, sizeof *key);
    key->op = (int32_t)k->op;
    key->axis = k->axis;
    key->eps = k->eps;
    key->ignore_index = k->ignore_index;
    key->reduction = k->reduction;
    key->flags = k->flags;
    key->rdtype = k->rdtype;
    for (int i = 0; i < HG_COP_MAX_IN; i++) {
        const hg_tensor* t = k->in[i];
        key->in_dtype[i] = t ? (int32_t)t->dtype : -1;
        if (!t) continue;
        key->in_ndim[i] = t->ndim;
        memcpy(key->in_shape[i], t->shape, sizeof(int64_t) * (size_t)t->ndim);
    }
    for (int o = 0; o < HG_COP_MAX_OUT; o++)
        key->out_dtype[o] = k->out[o] ? (int32_t)k->out[o]->dtype : -1;
}

// FNV-1a over the key's 64-bit words (the key is memset first: padding hashes as zeros).
static uint32_t key_hash(const cop_key* key) {
    const unsigned char* p = (const unsigned char*)key;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i + 8 <= sizeof *key; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    return (uint32_t)(h ^ (h >> 29));
}
_Static_assert(sizeof(cop_key) % 8 == 0, "the key hashes in 64-bit words");

// The entry holding key, or NULL; *slot: its index slot, or the empty one where it would go.
static cop_entry* cache_find(cop_cache* cc, const cop_key* key, uint32_t h, uint32_t* slot) {
    for (uint32_t i = 0;; i++) {   // never full: at most half the slots are taken
        uint32_t q = (h + i) % COP_SLOTS;
        int e = cc->index[q];
        *slot = q;
        if (!e) return NULL;
        cop_entry* x = &cc->ents[e - 1];
        if (x->hash == h && !memcmp(&x->key, key, sizeof *key)) return x;
    }
}

// Makes room for one more entry: a free one while fewer than HG_COP_CACHE_MAX are held, else
// the least recently used plan no run holds, taken out (*evicted: its plan, for the caller
// to destroy after unlocking) and the index rebuilt without it (only after a compile, which
// costs far more). NULL: every plan is running.
static cop_entry* cache_room(cop_cache* cc, hg_plan* evicted) {
    evicted->handle = 0;
    if (cc->n < HG_COP_CACHE_MAX) return &cc->ents[cc->n++];
    cop_entry* v = NULL;
    for (int i = 0; i < HG_COP_CACHE_MAX; i++) {
        cop_entry* x = &cc->ents[i];
        if (!x->users && (!v || x->used < v->used)) v = x;
    }
    if (!v) return NULL;
    *evicted = v->plan;
    v->plan.handle = 0;
    memset(cc->index, 0, sizeof cc->index);
    for (int i = 0; i < HG_COP_CACHE_MAX; i++) {
        cop_entry* x = &cc->ents[i];
        if (!x->plan.handle) continue;
        uint32_t q = x->hash % COP_SLOTS;
        while (cc->index[q]) q = (q + 1) % COP_SLOTS;
        cc->index[q] = (int16_t)(i + 1);
    }
    return v;
}

// Builds the decomposition for the call and compiles it for ex.
static hg_status cop_compile(const hg_cop_call* k, hg_plan* plan) {
    const hg_cop_info* info = &hg_cop_table[k->op];
    hg_graph g;
    hg_status s = hg_graph_create(&g);
    if (s) return s;
    int32_t in[HG_COP_MAX_IN + HG_COP_MAX_SCALARS], out[HG_COP_MAX_OUT];
    for (int i = 0; i < HG_COP_MAX_IN + HG_COP_MAX_SCALARS; i++) in[i] = -1;
    for (int o = 0; o < HG_COP_MAX_OUT; o++) out[o] = -1;
    for (int i = 0; i < info->nin && !s; i++)
        if (k->in[i])
            s = hg_graph_input(g, k->in[i]->dtype, k->in[i]->ndim, k->in[i]->shape, &in[i]);
    for (int j = 0; j < info->nscalars && !s; j++)   // after the tensors, as the run passes them
        s = hg_graph_input(g, k->in[0]->dtype, 0, NULL, &in[HG_COP_MAX_IN + j]);
    if (!s) s = info->decomp(g, k, in, out);
    hg_db b = {g, s};
    for (int o = 0; o < info->nout && !b.s; o++) {
        if (!k->out[o]) continue;
        int32_t n = hg_db_cast(&b, out[o], k->out[o]->dtype);
        if (!b.s) b.s = hg_graph_output(g, n);
    }
    if (!b.s) b.s = hg_graph_compile(g, (hg_executor){k->c->ex->handle}, plan);
    hg_graph_destroy(g);
    return b.s;
}

// The call's scalars as 0-d views of one buffer of in[0]'s dtype (each rounded once).
static hg_status scalars_bind(const hg_cop_call* k, hg_buffer* sb, hg_tensor* views) {
    int n = hg_cop_table[k->op].nscalars;
    hg_dtype t = k->in[0]->dtype;
    unsigned char host[HG_COP_MAX_SCALARS * 8];
    size_t es = hg_dtype_size(t);
    for (int j = 0; j < n; j++) hg_convert_from_double(t, k->scalars[j], host + (size_t)j * es);
    hg_status s = hg_buffer_create_ex((hg_executor){k->c->ex->handle}, t, (size_t)n,
                                      HG_BUFFER_UNINITIALIZED, sb);
    if (!s) s = hg_buffer_write(*sb, 0, host, (size_t)n);
    for (int j = 0; j < n && !s; j++) s = hg_tensor_view(*sb, 0, NULL, NULL, j, &views[j]);
    return s;
}

hg_status hg_cop_run_decomp(const hg_cop_call* k) {
    const hg_cop_info* info = &hg_cop_table[k->op];
    hg_tensor ins[HG_COP_MAX_IN + HG_COP_MAX_SCALARS], outs[HG_COP_MAX_OUT];
    int32_t ni = 0, no = 0;
    int64_t written = 0;
    for (int i = 0; i < info->nin; i++)
        if (k->in[i]) ins[ni++] = *k->in[i];
    for (int o = 0; o < info->nout; o++) {
        if (!k->out[o]) continue;
        int64_t n = 0;
        hg_tensor_numel(k->out[o], &n);
        written += n;
        outs[no++] = *k->out[o];
    }
    // Nothing to write (the graph would refuse the empty max of a softmax over no element).
    if (written == 0) return HG_OK;
    cop_key key;
    key_fill(k, &key);
    uint32_t h = key_hash(&key);
    cop_cache* cc = hg_executor_ext(k->c->ex, HG_EXT_COMPOSITE, cache_create, cache_destroy);
    hg_plan plan = {0}, mine = {0}, evicted = {0};
    cop_entry* e = NULL;
    uint32_t slot = 0;
    if (cc) {
        pthread_mutex_lock(&cc->lock);
        if ((e = cache_find(cc, &key, h, &slot))) {
            e->users++;
            e->used = ++cc->clock;
            plan = e->plan;
            cc->hits++;
        }
        pthread_mutex_unlock(&cc->lock);
    }
    if (!plan.handle) {
        hg_status s = cop_compile(k, &mine);
        if (s) return hg_error_prefix(s, "%s (its decomposition)", k->c->fn);
        plan = mine;
        if (cc) {   // kept unless every plan is running; a plan another thread made first wins
            pthread_mutex_lock(&cc->lock);
            cc->compiles++;
            if ((e = cache_find(cc, &key, h, &slot))) {
                plan = e->plan;
            } else if ((e = cache_room(cc, &evicted))) {
                if (evicted.handle) cache_find(cc, &key, h, &slot);   // the index was rebuilt
                e->key = key;
                e->hash = h;
                e->plan = mine;
                cc->index[slot] = (int16_t)(e - cc->ents + 1);
                mine.handle = 0;
            }
            if (e) {
                e->users++;
                e->used = ++cc->clock;
            }
            pthread_mutex_unlock(&cc->lock);
            if (evicted.handle) hg_plan_destroy(evicted);
            if (e && mine.handle) {   // another thread's plan runs instead
                hg_plan_destroy(mine);
                mine.handle = 0;
            }
        }
    }
    hg_buffer sb = {0};
    hg_status s = info->nscalars ? scalars_bind(k, &sb, ins + ni) : HG_OK;
    if (!s) s = hg_plan_run(plan, ni + info->nscalars, ins, no, outs);
    if (sb.handle) hg_buffer_destroy(sb);
    if (e) {
        pthread_mutex_lock(&cc->lock);
        e->users--;
        pthread_mutex_unlock(&cc->lock);
    }
    if (mine.handle) hg_plan_destroy(mine);
    return s ? hg_error_prefix(s, "%s (its decomposition)", k->c->fn) : HG_OK;
}

void hg_cop_cache_stats(hg_executor ex, int64_t* plans, int64_t* hits, int64_t* compiles) {
    *plans = *hits = *compiles = 0;
    hg_executor_obj* e = hg_executor_resolve(ex, "hg_cop_cache_stats");
    cop_cache* cc = e ? hg_executor_ext(e, HG_EXT_COMPOSITE, cache_create, cache_destroy) : NULL;
    if (!cc) return;
    pthread_mutex_lock(&cc->lock);
    *plans = cc->n;
    *hits = cc->hits;
    *compiles = cc->compiles;
    pthread_mutex_unlock(&cc->lock);
}
