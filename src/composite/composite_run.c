// Running composite ops: the dispatch (an override, else the decomposition), the table of
// decompositions, and the per-executor cache of compiled decompositions.
//
// The cache maps (op, input dtypes and shapes, output dtypes and which outputs are asked,
// axis, eps) to a plan compiled for the executor. It never evicts (a plan may be running on
// another thread): beyond HG_COP_CACHE_MAX plans, a call compiles its own plan and destroys it
// after the run. The plans themselves are the graph layer's, destroyed with the executor (the
// graph ext is freed before this one, which then only frees its table).
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/error.h"
#include "base/fork.h"
#include "composite/decomp.h"

const hg_cop_info hg_cop_table[HG_COP_COUNT] = {
    [HG_COP_SOFTMAX] = {"hg_softmax", 1, 1, hg_decomp_softmax, HG_OPF_ROWS},
    [HG_COP_LOG_SOFTMAX] = {"hg_log_softmax", 1, 1, hg_decomp_softmax, HG_OPF_ROWS},
    [HG_COP_SOFTMAX_BW] = {"hg_softmax_backward", 2, 1, hg_decomp_softmax_bw, HG_OPF_ROWS},
    [HG_COP_LOG_SOFTMAX_BW] = {"hg_log_softmax_backward", 2, 1, hg_decomp_softmax_bw,
                               HG_OPF_ROWS},
    [HG_COP_LAYER_NORM_BW] = {"hg_layer_norm_backward", 3, 3, hg_decomp_norm_bw, HG_OPF_ROWS},
    [HG_COP_RMS_NORM_BW] = {"hg_rms_norm_backward", 3, 2, hg_decomp_norm_bw, HG_OPF_ROWS},
    [HG_COP_LAYER_NORM] = {"hg_layer_norm", 3, 1, hg_decomp_norm, HG_OPF_ROWS},
    [HG_COP_RMS_NORM] = {"hg_rms_norm", 2, 1, hg_decomp_norm, HG_OPF_ROWS},
    [HG_COP_CE_BW] = {"hg_cross_entropy_backward", 3, 1, hg_decomp_ce_bw, HG_OPF_ROWS},
    [HG_COP_MSE] = {"hg_mse_loss", 2, 1, hg_decomp_ew_loss, HG_OPF_LOSS},
    [HG_COP_BCE] = {"hg_binary_cross_entropy", 3, 1, hg_decomp_ew_loss, HG_OPF_LOSS},
    [HG_COP_BCE_LOGITS] = {"hg_binary_cross_entropy_with_logits", 4, 1, hg_decomp_ew_loss,
                           HG_OPF_LOSS},
    [HG_COP_CE] = {"hg_cross_entropy", 2, 1, hg_decomp_ce, HG_OPF_LOSS},
};
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
    int32_t in_dtype[HG_COP_MAX_IN], in_ndim[HG_COP_MAX_IN];   // dtype -1: absent
    int64_t in_shape[HG_COP_MAX_IN][HG_MAX_DIMS];
    int32_t out_dtype[HG_COP_MAX_OUT];                          // -1: not asked
} cop_key;

typedef struct cop_entry {
    cop_key key;
    hg_plan plan;              // handle 0: empty slot
} cop_entry;

#define COP_SLOTS (2 * HG_COP_CACHE_MAX)

typedef struct cop_cache {
    pthread_mutex_t lock;      // a leaf: nothing else is taken while it is held
    int64_t n, hits, compiles;
    cop_entry slots[COP_SLOTS];
} cop_cache;

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

// The slot of key, or the empty slot where it would go (NULL: table full of other keys).
static cop_entry* cache_slot(cop_cache* cc, const cop_key* key, uint32_t h) {
    for (uint32_t i = 0; i < COP_SLOTS; i++) {
        cop_entry* e = &cc->slots[(h + i) % COP_SLOTS];
        if (!e->plan.handle || !memcmp(&e->key, key, sizeof *key)) return e;
    }
    return NULL;
}

// Builds the decomposition for the call and compiles it for ex.
static hg_status cop_compile(const hg_cop_call* k, hg_plan* plan) {
    const hg_cop_info* info = &hg_cop_table[k->op];
    hg_graph g;
    hg_status s = hg_graph_create(&g);
    if (s) return s;
    int32_t in[HG_COP_MAX_IN] = {-1, -1, -1, -1}, out[HG_COP_MAX_OUT] = {-1, -1, -1};
    for (int i = 0; i < info->nin && !s; i++)
        if (k->in[i])
            s = hg_graph_input(g, k->in[i]->dtype, k->in[i]->ndim, k->in[i]->shape, &in[i]);
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

hg_status hg_cop_run_decomp(const hg_cop_call* k) {
    const hg_cop_info* info = &hg_cop_table[k->op];
    hg_tensor ins[HG_COP_MAX_IN], outs[HG_COP_MAX_OUT];
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
    hg_plan plan = {0};
    if (cc) {
        pthread_mutex_lock(&cc->lock);
        cop_entry* e = cache_slot(cc, &key, h);
        if (e && e->plan.handle) {
            plan = e->plan;
            cc->hits++;
        }
        pthread_mutex_unlock(&cc->lock);
    }
    int own = 0;
    if (!plan.handle) {
        hg_status s = cop_compile(k, &plan);
        if (s) return hg_error_prefix(s, "%s (its decomposition)", k->c->fn);
        own = 1;
        if (cc) {   // keep it unless the table is full; a plan another thread made first wins
            pthread_mutex_lock(&cc->lock);
            cc->compiles++;
            cop_entry* e = cache_slot(cc, &key, h);
            hg_plan mine = plan;
            if (e && e->plan.handle) {
                plan = e->plan;
            } else if (e && cc->n < HG_COP_CACHE_MAX) {
                e->key = key;
                e->plan = plan;
                cc->n++;
                own = 0;
            }
            pthread_mutex_unlock(&cc->lock);
            if (own && plan.handle != mine.handle) {
                hg_plan_destroy(mine);
                own = 0;
            }
        }
    }
    hg_status s = hg_plan_run(plan, ni, ins, no, outs);
    if (own) hg_plan_destroy(plan);
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
