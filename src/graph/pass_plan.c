// plan: gives every intermediate value memory. Values live from the step that writes them to
// the last step that reads them (a reshape view's reads count as reads of its source; a
// concat's output from the first write of a part placed in it, pass_lower.c); an arena
// slot is typed (buffers are) and is reused by a later value of its dtype once the earlier
// value is dead, growing to the largest value it holds. peak_bytes is the arena's size.
#include <stdlib.h>
#include <string.h>
#include "base/error.h"
#include "base/shape.h"
#include "graph/graph_internal.h"

// The value whose memory a value is (a view's source chain ends in a real value).
static int32_t base_of(const hg_plan_obj* p, int32_t v) {
    while (p->values[v].home == HG_HOME_VIEW && p->values[v].src >= 0) v = p->values[v].src;
    return v;
}

// 1 when a view of value v may need its own copy: a reshape whose base is not a C-contiguous
// slot, or that reads through a permute / slice (those are always views themselves).
static int view_needs_slot(const hg_plan_obj* p, int32_t v) {
    if (p->values[v].strided) return 0;
    for (int32_t u = p->values[v].src; u >= 0 && p->values[u].home == HG_HOME_VIEW; u = p->values[u].src)
        if (p->values[u].strided) return 1;
    return p->values[base_of(p, v)].home != HG_HOME_SLOT;
}

hg_status hg_pass_plan(hg_plan_obj* p) {
    int32_t nv = p->nvalues;
    int32_t* def = malloc(((size_t)nv + 1) * sizeof *def);
    int32_t* last = malloc(((size_t)nv + 1) * sizeof *last);
    int32_t* owner = NULL;   // slot -> value holding it (-1 free)
    char* needs = calloc((size_t)nv + 1, 1);
    hg_status s = HG_OK;
    if (!def || !last || !needs) goto oom;
    for (int32_t v = 0; v < nv; v++) def[v] = last[v] = -1;
    for (int32_t i = 0; i < p->nsteps; i++) {
        const hg_plan_step* st = &p->steps[i];
        for (int32_t j = 0; j < st->nout; j++) {
            if (def[st->out[j]] < 0) def[st->out[j]] = i;
            if (last[st->out[j]] < i) last[st->out[j]] = i;
        }
        for (int32_t j = 0; j < st->nin; j++)
            for (int32_t v = st->in[j]; v >= 0; v = p->values[v].home == HG_HOME_VIEW ? p->values[v].src : -1)
                if (last[v] < i) last[v] = i;
    }
    // A concat's output lives from the first write of a part placed in it (HG_HOME_PART).
    for (int32_t v = 0; v < nv; v++) {
        const hg_plan_value* pv = &p->values[v];
        if (pv->home == HG_HOME_PART && def[v] >= 0 && def[v] < def[pv->src]) def[pv->src] = def[v];
    }
    for (int32_t v = 0; v < nv; v++) {
        hg_plan_value* pv = &p->values[v];
        needs[v] = pv->home == HG_HOME_SLOT || (pv->home == HG_HOME_VIEW && view_needs_slot(p, v));
        if (last[v] < def[v]) last[v] = def[v];
        pv->index = pv->home == HG_HOME_SLOT || pv->home == HG_HOME_VIEW ? -1 : pv->index;
    }
    int32_t cap = 0;
    for (int32_t i = 0; i < p->nsteps; i++) {
        // Values dead before step i give their slots back.
        for (int32_t v = 0; v < nv; v++)
            if (needs[v] && p->values[v].index >= 0 && last[v] < i && owner[p->values[v].index] == v)
                owner[p->values[v].index] = -1;
        for (int32_t v = 0; v < nv; v++) {   // the values first written at step i
            if (!needs[v] || def[v] != i) continue;
            hg_plan_value* pv = &p->values[v];
            int64_t want = hg_shape_numel(pv->ndim, pv->shape);
            int32_t best = -1;
            for (int32_t k = 0; k < p->nslots; k++) {
                if (owner[k] >= 0 || p->slots[k].dtype != pv->dtype) continue;
                if (best < 0) { best = k; continue; }
                int64_t cb = p->slots[best].count, ck = p->slots[k].count;
                // Prefer the smallest slot that fits, else the largest (grown least).
                if ((ck >= want && (cb < want || ck < cb)) || (cb < want && ck > cb)) best = k;
            }
            if (best < 0) {
                if (p->nslots == cap) {
                    int32_t nc = cap ? cap * 2 : 8;
                    hg_plan_slot* ns = realloc(p->slots, (size_t)nc * sizeof *ns);
                    if (!ns) goto oom;
                    p->slots = ns;
                    int32_t* no = realloc(owner, (size_t)nc * sizeof *no);
                    if (!no) goto oom;
                    owner = no;
                    cap = nc;
                }
                best = p->nslots++;
                p->slots[best].dtype = pv->dtype;
                p->slots[best].count = 0;
            }
            if (p->slots[best].count < want) p->slots[best].count = want;
            owner[best] = v;
            pv->index = best;
        }
    }
    uint64_t peak = 0;
    for (int32_t k = 0; k < p->nslots; k++)
        peak += (uint64_t)p->slots[k].count * hg_dtype_size(p->slots[k].dtype);
    p->info.peak_bytes = peak;
    goto done;
oom:
    s = hg_error(HG_ERR_OUT_OF_MEMORY, "graph plan: out of memory");
done:
    free(def);
    free(last);
    free(owner);
    free(needs);
    return s;
}
