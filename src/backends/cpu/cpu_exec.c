// Runs a compiled plan: splits the launch into chunks of lanes handed to the worker pool,
// fills constant and special registers, and walks the instructions of each chunk with the
// structured-control-flow mask stack of docs/isa.md §7.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/cpu_internal.h"
#include "base/error.h"

// Constant registers and the launch-uniform special registers, once per worker and launch,
// unless the worker's arena holds them already from its previous launch (same plan, chunk and
// dimensions: a loop of same-shaped calls, the rows of a row launch): then only the parameters
// whose value changed.
static void fill_constants(cpu_launch* L, cpu_worker* W) {
    const cpu_plan* p = L->plan;
    uint8_t* base = W->arena;
    uint32_t n = (uint32_t)L->chunk;
    const uint32_t dims[6] = {L->cfg.block.x, L->cfg.block.y, L->cfg.block.z,
                              L->cfg.grid.x, L->cfg.grid.y, L->cfg.grid.z};
    cpu_filled* f = &W->filled;
    int same = f->plan_id == p->id && f->chunk == n && p->nconsts <= CPU_FILLED_MAX &&
               !memcmp(f->dims, dims, sizeof dims);
    if (same) {
        // Only the parameters whose value changed (a row launch's per-row values: refilling
        // every constant per row was a third of a 64 x 1000 cross-entropy gradient's work).
        for (uint32_t i = 0; i < p->nconsts; i++) {
            const cpu_const* c = &p->consts[i];
            if (!c->is_param || f->bits[i] == L->args[c->param].bits) continue;
            f->bits[i] = L->args[c->param].bits;
            hg_cpu_fill_lanes(base + (size_t)c->slot * L->slot_bytes,
                              hg_cpu_storage_bits(c->type, f->bits[i]),
                              hg_cpu_storage_size(c->type), n);
        }
        return;
    }
    W->mask_ones = 0;   // the mask's place in the arena moves with the plan and chunk
    f->plan_id = p->nconsts <= CPU_FILLED_MAX ? p->id : 0;
    f->chunk = n;
    memcpy(f->dims, dims, sizeof dims);
    for (uint32_t i = 0; i < p->nconsts; i++) {
        const cpu_const* c = &p->consts[i];
        uint64_t bits = c->is_param ? L->args[c->param].bits : c->bits;
        if (i < CPU_FILLED_MAX) f->bits[i] = bits;
        hg_cpu_fill_lanes(base + (size_t)c->slot * L->slot_bytes,
                          hg_cpu_storage_bits(c->type, bits), hg_cpu_storage_size(c->type), n);
    }
    // %ntid and %nctaid, straight from the table (a tiny launch pays for every branch here).
    static const uint8_t uniform[6] = {HG_SREG_NTID_X, HG_SREG_NTID_Y, HG_SREG_NTID_Z,
                                       HG_SREG_NCTAID_X, HG_SREG_NCTAID_Y, HG_SREG_NCTAID_Z};
    for (int k = 0; k < 6; k++) {
        uint32_t slot = p->special_slot[uniform[k]];
        if (slot != CPU_NO_SLOT)
            hg_cpu_fill_lanes(base + (size_t)slot * L->slot_bytes, dims[k], 4, n);
    }
}

static void fill_run_const(uint32_t* d, uint32_t v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) d[i] = v;
}

// Per-chunk special registers (tid, ctaid, gid), filled in runs of lanes along x. In 1-D
// launches %gid.x is left for hg_cpu_fill_lazy.
static void fill_specials(cpu_chunk* c) {
    const cpu_launch* L = c->L;
    const cpu_plan* p = L->plan;
    if (!p->lane_specials && L->x_linear) {   // every elementwise kernel: at most %gid.x
        c->lazy = (void*)c->gid_x;
        return;
    }
    uint32_t* tid[3], *cta[3], *gid[3];
    int any = 0;
    for (int k = 0; k < 3; k++) {
        uint32_t s1 = p->special_slot[HG_SREG_TID_X + k], s2 = p->special_slot[HG_SREG_CTAID_X + k],
                 s3 = p->special_slot[HG_SREG_GID_X + k];
        tid[k] = s1 == CPU_NO_SLOT ? NULL : cpu_own(c, s1);
        cta[k] = s2 == CPU_NO_SLOT ? NULL : cpu_own(c, s2);
        gid[k] = s3 == CPU_NO_SLOT ? NULL : cpu_own(c, s3);
    }
    c->lazy = NULL;
    if (L->x_linear && gid[0]) {
        c->lazy = gid[0];
        gid[0] = NULL;
    }
    for (int k = 0; k < 3; k++) any |= tid[k] || cta[k] || gid[k];
    if (!any) return;
    const hg_launch_config* g = &L->cfg;
    const uint64_t bd[3] = {g->block.x, g->block.y, g->block.z};
    const uint64_t gd[3] = {g->grid.x, g->grid.y, g->grid.z};
    hg_cpu_lane_pos q = hg_cpu_lane_at(L, c->first);
    uint32_t i = 0;
    while (i < c->n) {
        uint32_t run = (uint32_t)(bd[0] - q.t[0]);
        if (run > c->n - i) run = c->n - i;
        for (int k = 0; k < 3; k++) {
            uint32_t t = (uint32_t)q.t[k], cc = (uint32_t)q.c[k];
            uint32_t gv = (uint32_t)(q.c[k] * bd[k] + q.t[k]);
            if (k == 0) {
                if (tid[0]) hg_cpu_fill_iota(tid[0] + i, t, run);
                if (gid[0]) hg_cpu_fill_iota(gid[0] + i, gv, run);
            } else {
                if (tid[k]) fill_run_const(tid[k] + i, t, run);
                if (gid[k]) fill_run_const(gid[k] + i, gv, run);
            }
            if (cta[k]) fill_run_const(cta[k] + i, cc, run);
        }
        i += run;
        // Advance to the start of the next row of lanes, carrying into y, z, then the block.
        q.t[0] = 0;
        if (++q.t[1] == bd[1]) {
            q.t[1] = 0;
            if (++q.t[2] == bd[2]) {
                q.t[2] = 0;
                if (++q.c[0] == gd[0]) {
                    q.c[0] = 0;
                    if (++q.c[1] == gd[1]) { q.c[1] = 0; q.c[2]++; }
                }
            }
        }
    }
}

// One level of the mask stack.
typedef struct mframe {
    uint8_t* saved;       // lanes active before the if/loop (they continue after it)
    uint8_t* elsem;       // if: lanes that take the else part
    uint32_t cnt_saved, cnt_else;
    uint32_t resume;      // where to go when no lane is active inside
    int is_loop;
    int full;             // if: every lane was active and took the if part; saved/elsem are
                          // not written (saved = all lanes, elsem = none)
} mframe;

static uint32_t count_mask(const uint8_t* m, uint32_t n) {
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; i++) s += m[i];
    return s;
}

// Removes lanes `gone` from the frames [from, depth).
static void drop_lanes(mframe* fr, uint32_t from, uint32_t depth, const uint8_t* gone, uint32_t n) {
    for (uint32_t f = from; f < depth; f++) {
        if (fr[f].full) {
            memset(fr[f].saved, 1, n);
            memset(fr[f].elsem, 0, n);
            fr[f].full = 0;
        }
        for (uint32_t i = 0; i < n; i++) fr[f].saved[i] &= (uint8_t)~gone[i];
        fr[f].cnt_saved = count_mask(fr[f].saved, n);
        if (!fr[f].is_loop) {
            for (uint32_t i = 0; i < n; i++) fr[f].elsem[i] &= (uint8_t)~gone[i];
            fr[f].cnt_else = count_mask(fr[f].elsem, n);
        }
    }
}

// shfl: lane i of the block reads the value of lane (i & ~31) + j, j from the mode and b & 31;
// a j outside the warp (down, up) or a lane beyond the block gives lane i its own value.
// Through the temporary slot: d may be a.
void hg_cpu_exec_shfl(cpu_chunk* c, const cpu_op* op) {
    const uint8_t* a = cpu_slot(c, op->a);
    const uint32_t* lane = cpu_slot(c, op->b);
    uint8_t* tmp = cpu_own(c, c->L->plan->tmp_slot);
    size_t es = (size_t)1 << op->dlog2;
    uint32_t n = c->n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = i & 31u, b = lane[i] & 31u, j;
        switch (op->aop) {
        case HG_SHFL_BFLY: j = l ^ b; break;
        case HG_SHFL_DOWN: j = l + b; break;
        case HG_SHFL_UP: j = l - b; break;   // wraps to >= 32 below lane 0
        default: j = b; break;
        }
        uint32_t src = j < 32 && (i & ~31u) + j < n ? (i & ~31u) + j : i;
        memcpy(tmp + i * es, a + (size_t)src * es, es);
    }
    uint8_t* d = cpu_wslot(c, op->d, c->cnt == n);
    if (c->cnt == n) memcpy(d, tmp, (size_t)n * es);
    else c->L->k->blend[op->dlog2](d, tmp, c->cur, n);
}

// Executes the plan for one chunk. 0 on success, -1 after a recorded failure.
static int run_chunk(cpu_chunk* c, uint8_t* masks, size_t mask_bytes) {
    const cpu_launch* L = c->L;
    const cpu_plan* p = L->plan;
    const hg_cpu_kernels* k = L->k;
    uint32_t n = c->n;   // cut down by a tail guard
    mframe fr[HG_MAX_NESTING + 2];
    uint32_t depth = 0;
    uint8_t* scratch = masks + mask_bytes;          // cur is masks[0], scratch masks[1]
    uint8_t* frames = masks + 2 * mask_bytes;
    uint8_t* cur = c->cur;
    uint32_t pc = 0;
    while (pc < p->nops) {
        const cpu_op* op = &p->ops[pc];
        if (op->strip_end && c->cnt == n && n > HG_CPU_STRIP && hg_cpu_run_strips(c, pc)) {
            pc = op->strip_end;
            continue;
        }
        switch ((cpu_kind)op->kind) {
        case CPU_K_ALU: {
            if (op->guard && c->cnt == n && L->x_linear && c->ptr[op->a] == c->gid_x) {
                // i < n with i = %gid.x: when the chunk's last lane is below the (uniform)
                // bound, every lane passes; no need to look at the lanes.
                uint32_t bound = *(const uint32_t*)c->ptr[op->b];
                if (c->first + n <= bound) {
                    if (op->guard != 2) memset(cpu_wslot(c, op->d, 1), 1, n);
                    c->ones_pc = pc;
                    break;
                }
                if (op->tail_guard && !p->block_mode) {
                    // The lanes from the bound on have nothing left to do: the chunk ends
                    // there (rather than running the rest under a partial mask, lane by lane
                    // in every load and store).
                    if (bound <= c->first) return 0;
                    n = c->n = c->cnt = (uint32_t)(bound - c->first);
                    c->ones_pc = pc;
                    break;
                }
            }
            c->ones_pc = UINT32_MAX;
            if (op->fuse_st && c->cnt == n) {
                void* dst = hg_cpu_store_target(c, op + 1);
                if (dst) {
                    op->fn(dst, cpu_slot(c, op->a), cpu_slot(c, op->b), cpu_slot(c, op->c), n);
                    pc += 2;
                    continue;
                }
            }
            if (op->borrow && c->cnt == n) {  // may borrow the unfilled %gid.x lanes too
                c->ptr[op->d] = c->ptr[op->a];
                break;
            }
            // Sources first: taking back the destination's storage must not move a source.
            void* a = cpu_slot(c, op->a);
            void* b = cpu_slot(c, op->b);
            void* cc = cpu_slot(c, op->c);
            if (c->cnt == n) {
                if (op->borrow) c->ptr[op->d] = a;
                else op->fn(cpu_wslot(c, op->d, 1), a, b, cc, n);
            } else {
                void* tmp = cpu_own(c, p->tmp_slot);
                op->fn(tmp, a, b, cc, n);
                k->blend[op->dlog2](cpu_wslot(c, op->d, 0), tmp, cur, n);
            }
            break;
        }
        case CPU_K_LD:
            if (hg_cpu_exec_ld(c, op, pc)) return -1;
            break;
        case CPU_K_ST:
            if (hg_cpu_exec_st(c, op, pc)) return -1;
            break;
        case CPU_K_ATOM:
            if (hg_cpu_exec_atom(c, op, pc)) return -1;
            break;
        case CPU_K_LDV:
        case CPU_K_STV:
            if (hg_cpu_exec_vec(c, op, pc)) return -1;
            break;
        case CPU_K_IF: {
            mframe* f = &fr[depth];
            f->saved = frames + (size_t)(2 * depth) * mask_bytes;
            f->elsem = f->saved + mask_bytes;
            f->is_loop = 0;
            f->resume = op->target;
            f->cnt_saved = c->cnt;
            f->full = 0;
            depth++;
            if (c->cnt == n && pc > 0 && c->ones_pc == pc - 1 && p->ops[pc - 1].d == op->a) {
                // The guard just before found every lane in bounds: all lanes take the if part.
                f->full = 1;
                f->cnt_else = 0;
                break;
            }
            const uint8_t* pv = cpu_slot(c, op->a);
            uint8_t* sv = f->saved;
            uint8_t* ev = f->elsem;
            uint32_t t = 0;
            for (uint32_t i = 0; i < n; i++) {
                uint8_t m = cur[i], q = pv[i];
                sv[i] = m;
                ev[i] = m & (uint8_t)(q ^ 1u);
                cur[i] = m & q;
                t += m & q;
            }
            f->cnt_else = c->cnt - t;
            c->cnt = t;
            if (!t) { pc = op->target; continue; }
            break;
        }
        case CPU_K_ELSE: {
            mframe* f = &fr[depth - 1];
            if (f->full) {  // no lane takes the else part
                c->cnt = 0;
                pc = op->target;
                continue;
            }
            memcpy(cur, f->elsem, n);
            c->cnt = f->cnt_else;
            f->resume = op->target;
            if (!c->cnt) { pc = op->target; continue; }
            break;
        }
        case CPU_K_ENDIF:
        case CPU_K_ENDLOOP: {
            mframe* f = &fr[depth - 1];
            if (op->kind == CPU_K_ENDLOOP && c->cnt) { pc = op->target + 1; continue; }
            if (f->full) {
                if (c->cnt != n) memset(cur, 1, n);
            } else {
                memcpy(cur, f->saved, n);
            }
            c->cnt = f->cnt_saved;
            depth--;
            if (!c->cnt) goto resume;
            break;
        }
        case CPU_K_LOOP: {
            mframe* f = &fr[depth];
            f->saved = frames + (size_t)(2 * depth) * mask_bytes;
            f->elsem = NULL;
            f->is_loop = 1;
            f->full = 0;
            f->resume = op->target;
            f->cnt_saved = c->cnt;
            memcpy(f->saved, cur, n);
            depth++;
            break;
        }
        case CPU_K_BREAK: {
            // Lanes leaving the loop: out of the current mask and of the ifs inside the loop;
            // the loop frame's saved mask brings them back after endloop.
            uint32_t lf = depth;
            while (lf > 0 && !fr[lf - 1].is_loop) lf--;
            const uint8_t* pv = op->a == CPU_NO_SLOT ? NULL : cpu_slot(c, op->a);
            uint32_t gone = 0;
            for (uint32_t i = 0; i < n; i++) {
                uint8_t g = pv ? (uint8_t)(cur[i] & pv[i]) : cur[i];
                scratch[i] = g;
                cur[i] &= (uint8_t)~g;
                gone += g;
            }
            if (gone) {
                drop_lanes(fr, lf, depth, scratch, n);
                c->cnt -= gone;
            }
            if (!c->cnt) goto resume;
            break;
        }
        case CPU_K_EXIT:
            memcpy(scratch, cur, n);
            memset(cur, 0, n);
            c->cnt = 0;
            drop_lanes(fr, 0, depth, scratch, n);
            goto resume;
        case CPU_K_BAR:
            hg_cpu_unborrow(c, NULL, NULL);
            // All lanes of the block run every instruction before the next one starts, and
            // bar only appears in block-uniform control flow: nothing to wait for.
            break;
        case CPU_K_FENCE:
            hg_cpu_unborrow(c, NULL, NULL);
            atomic_thread_fence(memory_order_seq_cst);
            break;
        case CPU_K_SHFL:
            hg_cpu_exec_shfl(c, op);
            break;
        default:
            hg_cpu_fail(c->L, HG_ERR_INTERNAL, "cpu: unknown plan operation %u at instruction %u",
                        op->kind, pc);
            return -1;
        }
        pc++;
        continue;
    resume:
        // No lane is active here: continue where the innermost if/loop picks lanes up again.
        if (!depth) return 0;
        pc = fr[depth - 1].resume;
    }
    return 0;
}


static void worker_main(void* ctx, int w) {
    cpu_launch* L = ctx;
    const cpu_plan* p = L->plan;
    cpu_worker* W = &L->st->workers[w];
    uint8_t* base = W->arena;
    fill_constants(L, W);
    size_t mask_bytes = (L->chunk + 63) & ~(size_t)63;
    uint8_t* masks = base + (size_t)p->nslots * L->slot_bytes;
    cpu_chunk c;
    c.L = L;
    c.w = W;
    c.base = base;
    c.cur = masks;
    c.arena_end = masks;
    c.ptr = (void**)(masks + (2 * p->max_depth + 2) * mask_bytes);
    c.borrowed = (uint32_t*)(c.ptr + p->nslots);
    c.gid_x = p->special_slot[HG_SREG_GID_X] == CPU_NO_SLOT
                  ? NULL : cpu_own(&c, p->special_slot[HG_SREG_GID_X]);
    // Leading lanes of the active mask known to be 1 (lanes past a chunk's n are never
    // written): the mask is only set again when a chunk needs more, or one ended with some
    // lane inactive. Kept across launches with the constants (fill_constants).
    uint32_t ones = W->mask_ones;
    W->mask_ones = 0;   // until this launch is done
    int done = 0;
    for (;;) {
        if (atomic_load_explicit(&L->failed, memory_order_relaxed)) return;
        uint64_t g, end;
        if (L->static_parts) {
            // Part w's own share: the same pool thread (so core) runs the same memory on
            // every call, where its L2 still holds it.
            uint64_t q = L->nchunks / (uint64_t)L->nparts, r = L->nchunks % (uint64_t)L->nparts;
            g = q * (uint64_t)w + ((uint64_t)w < r ? (uint64_t)w : r);
            end = g + q + ((uint64_t)w < r);
            if (done) g = end;
            done = 1;
        } else {
            g = atomic_fetch_add(&L->next, L->group);
            end = g + L->group < L->nchunks ? g + L->group : L->nchunks;
        }
        if (g >= end || g >= L->nchunks) {
            W->mask_ones = ones;
            return;
        }
        for (uint64_t ci = g; ci < end; ci++) {
            c.first = ci * L->chunk;
            uint64_t left = L->total_lanes - c.first;
            c.n = (uint32_t)(left < L->chunk ? left : L->chunk);
            for (uint32_t s = 0; s < p->nslots; s++) c.ptr[s] = cpu_own(&c, s);
            c.nborrowed = 0;
            for (uint32_t z = 0; z < p->nzero; z++) {
                uint32_t r = p->zero_regs[z];
                memset(cpu_own(&c, r), 0, (size_t)c.n * p->reg_size[r]);
            }
            fill_specials(&c);
            if (L->shared_bytes) memset(W->shared, 0, L->shared_bytes);
            if (ones < c.n) {
                memset(c.cur, 1, c.n);
                ones = c.n;
            }
            c.cnt = c.n;
            c.ones_pc = UINT32_MAX;
            if (run_chunk(&c, masks, mask_bytes)) return;
            if (c.cnt != c.n) ones = 0;
        }
    }
}

static hg_status grow(uint8_t** buf, size_t* cap, size_t need) {
    if (*cap >= need) return HG_OK;
    size_t sz = (need + 63) & ~(size_t)63;
    void* q = aligned_alloc(64, sz);
    if (!q) return hg_error(HG_ERR_OUT_OF_MEMORY, "cpu: out of memory allocating %zu bytes of "
                            "worker scratch", sz);
    free(*buf);
    *buf = q;
    *cap = sz;
    return HG_OK;
}

// The launch-wide fields of L for cfg's lanes (no chunking yet).
static hg_status launch_init(cpu_state* st, const cpu_plan* plan, const hg_launch_config* cfg,
                             const hg_bound_arg* args, cpu_launch* L) {
    L->plan = plan;
    L->k = hg_cpu_kernels_get();
    L->cfg = *cfg;
    L->args = args;
    L->st = st;
    L->lanes_per_block = (uint64_t)cfg->block.x * cfg->block.y * cfg->block.z;
    uint64_t blocks, total;
    if (__builtin_mul_overflow((uint64_t)cfg->grid.x * cfg->grid.y, (uint64_t)cfg->grid.z, &blocks) ||
        __builtin_mul_overflow(blocks, L->lanes_per_block, &total) || total > (1ull << 62)) {
        return hg_error(HG_ERR_LAUNCH_CONFIG, "grid (%u,%u,%u) x block (%u,%u,%u) has more lanes "
                        "than the CPU backend can count (2^62)", cfg->grid.x, cfg->grid.y,
                        cfg->grid.z, cfg->block.x, cfg->block.y, cfg->block.z);
    }
    L->total_lanes = total;
    return HG_OK;
}

// Chunking and workers of L (at most max_workers); the arena bytes a worker needs.
static size_t launch_chunks(cpu_launch* L, int max_workers) {
    const cpu_plan* plan = L->plan;
    const hg_launch_config* cfg = &L->cfg;
    uint64_t total = L->total_lanes;
    uint64_t grain = plan->chunk < HG_CPU_PARALLEL_LANES ? plan->chunk : HG_CPU_PARALLEL_LANES;
    L->dyn_shared_count = 0;
    L->shared_bytes = 0;
    L->err = HG_OK;
    L->chunk = plan->block_mode ? L->lanes_per_block : plan->chunk;
    // Workers: one per full HG_CPU_PARALLEL_LANES lanes (or plan chunk, when smaller) at most:
    // a smaller share takes less time than handing it to another thread.
    uint64_t units = plan->block_mode ? 0 : total / grain > 1 ? total / grain : 1;
    // Small launches: no bigger chunk (and register arrays to fill) than the lanes there are.
    if (!plan->block_mode && total < L->chunk) L->chunk = total < 8 ? 8 : (total + 7) & ~7ull;
    // A launch of a few chunks fills every constant register over a whole chunk per worker
    // (64K lanes: 256 KiB each, a third of a 64K-element add): use chunks of an eighth of it,
    // at least 8K lanes.
    if (!plan->block_mode && L->chunk > 8192 && total <= 4 * (uint64_t)plan->chunk) {
        uint64_t c = ((total / 8) + 63) & ~63ull;
        L->chunk = c < 8192 ? 8192 : c;
    }
    L->x_linear = cfg->block.y == 1 && cfg->block.z == 1 && cfg->grid.y == 1 && cfg->grid.z == 1;
    L->nchunks = (total + L->chunk - 1) / L->chunk;
    L->slot_bytes = ((size_t)L->chunk * 8 + 63) & ~(size_t)63;
    size_t mask_bytes = (L->chunk + 63) & ~(size_t)63;
    size_t arena = (size_t)plan->nslots * L->slot_bytes + (2 * plan->max_depth + 2) * mask_bytes +
                   (size_t)plan->nslots * sizeof(void*) + (size_t)plan->prog->nregs * 4;
    if (plan->block_mode) {
        const hg_shared_decl* dyn = plan->has_dynamic_shared
                                        ? &plan->prog->shared[plan->dynamic_shared_index] : NULL;
        size_t es = dyn ? hg_dtype_size((hg_dtype)dyn->dtype) : 1;
        L->dyn_shared_count = dyn ? cfg->shared_bytes / (uint32_t)es : 0;
        L->shared_bytes = plan->shared_static_bytes + (size_t)L->dyn_shared_count * es;
    }
    int nworkers = max_workers;
    if ((uint64_t)nworkers > L->nchunks) nworkers = (int)L->nchunks;
    if (units && (uint64_t)nworkers > units) nworkers = (int)units;
    // Grabbing several chunks at once keeps the shared counter cold; 8 grabs per worker
    // still balance uneven chunks.
    // Uniform chunks split statically: with dynamic grabs a call's chunks land on other cores
    // than the last call's (docs/performance.md).
    L->nparts = nworkers;
    L->static_parts = plan->uniform && !plan->block_mode && nworkers > 1;
    L->group = L->nchunks / ((uint64_t)nworkers * 8);
    if (L->group < 1) L->group = 1;
    if (L->group > 64) L->group = 64;
    return arena;
}

// The arenas (and shared memory) of workers 0 .. n-1 grown for L.
static hg_status grow_workers(cpu_launch* L, int n, size_t arena) {
    cpu_state* st = L->st;
    hg_status s = HG_OK;
    for (int w = 0; w < n && !s; w++) {
        uint8_t* was = st->workers[w].arena;
        s = grow(&st->workers[w].arena, &st->workers[w].arena_cap, arena);
        if (st->workers[w].arena != was) st->workers[w].filled.plan_id = 0;
        if (!s && L->shared_bytes)
            s = grow(&st->workers[w].shared, &st->workers[w].shared_cap, L->shared_bytes);
    }
    return s;
}

hg_status hg_cpu_launch(cpu_state* st, const cpu_plan* plan, const hg_launch_config* cfg,
                        const hg_bound_arg* args, size_t nargs) {
    (void)nargs;
    // The launch lives on this stack frame: hg_pool_run returns when every worker is done, and
    // a tiny launch then costs no allocation at all. Fields are set one by one (msg is written
    // only on failure and read only after one).
    cpu_launch launch;
    cpu_launch* L = &launch;
    hg_status s = launch_init(st, plan, cfg, args, L);
    if (s) return s;
    // A one-op elementwise kernel (cpu_direct) whose output is not streamed: no arena, chunks
    // or lane arrays; one part per grain of lanes, at most one per thread.
    uint64_t grain = plan->chunk < HG_CPU_PARALLEL_LANES ? plan->chunk : HG_CPU_PARALLEL_LANES;
    if (plan->direct.ok && cfg->block.y == 1 && cfg->block.z == 1 && cfg->grid.y == 1 &&
        cfg->grid.z == 1) {
        uint64_t parts = L->total_lanes / grain;
        if (parts > (uint64_t)st->nthreads) parts = (uint64_t)st->nthreads;
        if (hg_cpu_run_direct(L, parts < 1 ? 1 : (int)parts)) return HG_OK;
    }
    size_t arena = launch_chunks(L, st->nthreads);
    s = grow_workers(L, L->nparts, arena);
    if (!s) {
        atomic_init(&L->next, 0);
        atomic_init(&L->failed, 0);
        hg_pool_run(st->pool, L->nparts, worker_main, L);
        if (atomic_load(&L->failed)) s = hg_error(L->err, "%s", L->msg);
    }
    return s;
}

hg_status hg_cpu_launch_serial_setup(cpu_state* st, const cpu_plan* plan,
                                     const hg_launch_config* cfg, int parts, cpu_launch* L) {
    hg_status s = launch_init(st, plan, cfg, NULL, L);
    if (!s) s = grow_workers(L, parts, launch_chunks(L, parts));
    L->nparts = 1;
    L->static_parts = 0;
    L->group = 1;
    return s;
}

hg_status hg_cpu_launch_serial_run(cpu_launch* L, const hg_bound_arg* args, int w) {
    L->args = args;
    atomic_init(&L->next, 0);
    atomic_init(&L->failed, 0);
    worker_main(L, w);
    return atomic_load(&L->failed) ? L->err : HG_OK;
}
