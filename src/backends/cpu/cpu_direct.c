// The direct path of the CPU backend: a kernel of the shape every one-op elementwise call of
// the op library compiles to,
//
//     p = %gid.x < n;  if p;  [ld.global r_k, buf_k[%gid.x]]*;  r = op(...);
//     st.global out[%gid.x], r;  endif
//
// launched 1-D on one worker, runs as one call of the op's kernel on the buffers themselves
// (constants as lanes on the stack). The general path costs ~750 instructions of fixed work
// per launch (arena, constants, chunk setup, the interpreter loop); this one ~100. Same kernel
// function, same lanes, same results: loads of plain types are the buffer's bytes, and the op
// writes the store's elements (find_store_fusion's conditions, checked at compile time).
#include "backends/cpu/cpu_internal.h"
#include "base/dtype.h"
#include "base/trace.h"

#define DIRECT_BLOCK 512u   // lanes per kernel call when a source is a constant

static int const_of_slot(const cpu_plan* p, uint32_t slot, uint32_t* index) {
    for (uint32_t i = 0; i < p->nconsts; i++)
        if (p->consts[i].slot == slot) {
            *index = i;
            return 1;
        }
    return 0;
}

static int plain(uint8_t t) {
    return t != HG_DTYPE_BOOL && t != HG_DTYPE_F16 && t != HG_DTYPE_BF16;
}

void hg_cpu_find_direct(cpu_plan* p) {
    cpu_direct* D = &p->direct;
    memset(D, 0, sizeof *D);
    uint32_t gid = p->special_slot[HG_SREG_GID_X];
    if (p->block_mode || p->lane_specials || p->nzero || gid == CPU_NO_SLOT || p->nops < 5)
        return;
    uint32_t nld = p->nops - 5;
    const cpu_op* guard = &p->ops[0];
    const cpu_op* iff = &p->ops[1];
    const cpu_op* alu = &p->ops[2 + nld];
    const cpu_op* st = &p->ops[3 + nld];
    if (guard->kind != CPU_K_ALU || guard->guard != 2 || !guard->tail_guard || guard->a != gid ||
        !const_of_slot(p, guard->b, &D->bound) || iff->kind != CPU_K_IF ||
        iff->a != guard->d || p->ops[p->nops - 1].kind != CPU_K_ENDIF)
        return;
    for (uint32_t i = 2; i < 2 + nld; i++) {
        const cpu_op* ld = &p->ops[i];
        if (ld->kind != CPU_K_LD || ld->space != HG_SPACE_GLOBAL || ld->a != gid ||
            !plain(ld->type))
            return;
    }
    if (alu->kind != CPU_K_ALU || !alu->fuse_st || alu->guard || alu->borrow || !alu->fn ||
        st->kind != CPU_K_ST || st->space != HG_SPACE_GLOBAL || st->a != gid || st->b != alu->d)
        return;
    const uint32_t src[3] = {alu->a, alu->b, alu->c};
    for (int k = 0; k < 3; k++) {
        if (src[k] == p->idx_slot) continue;   // absent operand (CPU_DIRECT_NONE)
        uint32_t j = 2;
        while (j < 2 + nld && p->ops[j].d != src[k]) j++;
        if (j < 2 + nld) {
            D->src_kind[k] = CPU_DIRECT_LOAD;
            D->src_ref[k] = j;
        } else if (const_of_slot(p, src[k], &D->src_ref[k])) {
            D->src_kind[k] = CPU_DIRECT_CONST;
        } else {
            return;
        }
    }
    D->alu = 2 + nld;
    D->st = 3 + nld;
    D->ok = 1;
}

static uint64_t const_bits(const cpu_plan* p, const hg_bound_arg* args, uint32_t index) {
    const cpu_const* c = &p->consts[index];
    return c->is_param ? args[c->param].bits : c->bits;
}

// A direct launch's operands, resolved from its arguments once.
typedef struct direct_call {
    hg_cpu_kfn fn;
    uint64_t n;
    uint8_t* dst;
    size_t es_out;
    uint32_t out_arg;
    const uint8_t* src[3];
    size_t step[3];        // element size of a loaded source (0: lanes on the stack)
    uint32_t arg[3];       // the argument of a loaded source or of a parameter const
    uint8_t param[3];      // the source is a scalar parameter's lanes
    uint32_t fill[3];      // lanes a constant source fills (1: the kernel reads lane 0 only)
    int consts;            // a constant source is read as a lane array
    _Alignas(64) uint8_t lanes[3][DIRECT_BLOCK * 8];
} direct_call;

// Whether a loaded source at base (es bytes per element) may run against the output: the same
// elements (in place) are read before they are written; any other overlap takes the general
// path, which copies the loads first.
static int disjoint_or_same(const direct_call* C, const uint8_t* base, size_t es) {
    const uint8_t* dst = C->dst;
    return !C->n || base == dst || base >= dst + C->n * C->es_out || dst >= base + C->n * es;
}

// Resolves the call for `args` and `total` lanes; 0 when the general path must run it (it
// reports out-of-range accesses; overlaps).
static int direct_bind(const cpu_plan* p, const hg_bound_arg* args, uint64_t total,
                       direct_call* C) {
    const cpu_direct* D = &p->direct;
    uint64_t bound = (uint32_t)const_bits(p, args, D->bound);
    uint64_t n = total < bound ? total : bound;
    const cpu_op* st = &p->ops[D->st];
    const hg_bound_arg* out = &args[st->mem];
    if (n > out->count) return 0;
    C->fn = p->ops[D->alu].fn;
    C->n = n;
    C->out_arg = st->mem;
    C->es_out = hg_dtype_size((hg_dtype)st->type);
    C->dst = out->base;
    C->consts = 0;
    for (int k = 0; k < 3; k++) {
        C->step[k] = 0;
        C->param[k] = 0;
        C->fill[k] = 0;
        switch (D->src_kind[k]) {
        case CPU_DIRECT_LOAD: {
            const cpu_op* ld = &p->ops[D->src_ref[k]];
            const hg_bound_arg* a = &args[ld->mem];
            size_t es = hg_dtype_size((hg_dtype)ld->type);
            if (n > a->count || !disjoint_or_same(C, a->base, es)) return 0;
            C->src[k] = a->base;
            C->step[k] = es;
            C->arg[k] = ld->mem;
            break;
        }
        case CPU_DIRECT_CONST: {
            const cpu_const* c = &p->consts[D->src_ref[k]];
            C->fill[k] = k == 1 && p->ops[D->alu].b_once ? 1 : n < DIRECT_BLOCK ? (uint32_t)n : DIRECT_BLOCK;
            hg_cpu_fill_lanes(C->lanes[k], hg_cpu_storage_bits(c->type, const_bits(p, args, D->src_ref[k])),
                              hg_cpu_storage_size(c->type), C->fill[k]);
            C->src[k] = C->lanes[k];
            C->param[k] = c->is_param;
            C->arg[k] = c->param;
            if (C->fill[k] > 1) C->consts = 1;   // lane arrays: the call goes in blocks
            break;
        }
        default:
            C->src[k] = C->lanes[k];   // never read
            break;
        }
    }
    return 1;
}

// Lanes lo..hi-1 of the call.
static void direct_exec_range(const direct_call* C, uint64_t lo, uint64_t hi) {
    uint64_t n = hi, block = C->consts ? DIRECT_BLOCK : hi - lo;
    size_t es_out = C->es_out;
    uint8_t* dst = C->dst;
    // The first few lanes alone, so that the rest stores whole 64-byte lines: memory from
    // numpy is 16-byte aligned, and a 64-byte store across two lines cost a 65,536-element
    // add or exp 15-25% in L2.
    uint64_t i = lo, head = 0;
    uintptr_t mis = (uintptr_t)(dst + lo * es_out) & 63;
    if (hi - lo >= 256 && mis && mis % es_out == 0) head = (64 - mis) / es_out;
    if (head) {
        C->fn(dst + i * es_out, C->src[0] + i * C->step[0], C->src[1] + i * C->step[1],
              C->src[2] + i * C->step[2], (size_t)head);
        i += head;
    }
    for (; i < n; i += block) {
        size_t m = (size_t)(n - i < block ? n - i : block);
        C->fn(dst + i * es_out, C->src[0] + i * C->step[0], C->src[1] + i * C->step[1],
              C->src[2] + i * C->step[2], m);
    }
}

static void direct_exec(const direct_call* C) { direct_exec_range(C, 0, C->n); }

typedef struct direct_job {
    direct_call C;
    int parts;
} direct_job;

// Part p of a split call: contiguous ranges whose inner boundaries fall on 64-byte lines of
// the output (no line is written by two threads), the same range for the same part on every
// call of that size (static parts keep a core's share in its cache).
static void direct_part(void* ctx, int part) {
    const direct_job* j = ctx;
    const direct_call* C = &j->C;
    uint64_t line = 64 / C->es_out;
    uint64_t skew = (((uintptr_t)C->dst & 63) / C->es_out) % line;   // lanes before a line start
    uint64_t lines = (C->n + skew + line - 1) / line;
    uint64_t lo = part == 0 ? 0 : (lines * (uint64_t)part / (uint64_t)j->parts) * line - skew;
    uint64_t hi = part == j->parts - 1 ? C->n
                                       : (lines * (uint64_t)(part + 1) / (uint64_t)j->parts) * line - skew;
    if (lo < hi) direct_exec_range(C, lo, hi);
}

int hg_cpu_run_direct(const cpu_launch* L, int parts) {
    direct_job j;
    direct_call* C = &j.C;
    if (!direct_bind(L->plan, L->args, L->total_lanes, C)) return 0;
    // Outputs the strip path writes with streaming stores go there. Below that the direct
    // call's line-aligned stores are the faster (docs/performance.md).
    size_t stream = L->st->stream_bytes;
    if (L->total_lanes > HG_CPU_DIRECT_MAX_LANES && stream &&
        L->args[C->out_arg].count * C->es_out >= stream)
        return 0;
    if (64 % C->es_out || (uint64_t)parts > C->n / 64) parts = 1;
    if (hg_trace_on()) hg_trace_note_threads(parts);
    if (parts <= 1) {
        direct_exec(C);
        return 1;
    }
    j.parts = parts;
    hg_pool_run(L->st->pool, parts, direct_part, &j);
    return 1;
}

// The elements of gathered input i in row r (r0 <= r < r1), in scratch: a tiled input reads
// HG_CPU_ROW_TILE rows at a time at tile starts, others one row.
static const uint8_t* gathered(const cpu_plan* p, const hg_bound_arg* args, const hg_row_args* ra,
                               uint8_t* scratch, uint32_t i, uint64_t r, uint64_t r0, uint64_t r1) {
    size_t es = hg_dtype_size((hg_dtype)p->prog->params[i].dtype);
    uint64_t n = args[i].count;
    const uint8_t* row = (const uint8_t*)args[i].base + (int64_t)r * ra->row_step[i];
    if (!hg_cpu_rows_tiled(ra, i, es)) {
        hg_cpu_gather_lanes(scratch, row, n, ra->lane_step[i], es);
        return scratch;
    }
    uint64_t t = (r - r0) % HG_CPU_ROW_TILE;
    if (t == 0)
        hg_cpu_gather_tile(scratch, row, n, r1 - r < HG_CPU_ROW_TILE ? r1 - r : HG_CPU_ROW_TILE,
                           ra->lane_step[i], es);
    return scratch + t * n * es;
}

uint64_t hg_cpu_run_direct_rows(const cpu_plan* p, const hg_bound_arg* args, uint64_t lanes,
                                uint64_t r0, uint64_t r1, const hg_row_args* ra,
                                uint8_t* const* scratch) {
    if (r0 >= r1) return r1;
    direct_call C;
    hg_bound_arg a[3 + 1 + 1 + 1];   // direct plans: up to 3 inputs, the output, n
    uint32_t nargs = p->prog->nparams;
    if (nargs > sizeof a / sizeof *a) return r0;
    const int64_t* step = ra->row_step;
    int gath[sizeof a / sizeof *a];
    // Row r0's arguments: moved, per-row values loaded, strided inputs gathered.
    for (uint32_t i = 0; i < nargs; i++) {
        a[i] = args[i];
        int64_t off = (int64_t)r0 * step[i];
        gath[i] = a[i].base && ra->lane_step[i] && !ra->value[i];
        if (ra->value[i])
            a[i].bits = hg_dtype_load_bits(p->prog->params[i].dtype, (const uint8_t*)ra->value[i] + off);
        else if (gath[i])
            a[i].base = (void*)gathered(p, args, ra, scratch[i], i, r0, r0, r1);
        else if (a[i].base)
            a[i].base = (uint8_t*)a[i].base + off;
    }
    if (!direct_bind(p, a, lanes, &C)) return r0;
    for (uint64_t r = r0;;) {
        direct_exec(&C);
        if (++r == r1) return r1;
        C.dst += step[C.out_arg];
        const uint8_t* g[sizeof a / sizeof *a];
        for (uint32_t i = 0; i < nargs; i++)   // the next row of each gathered input
            if (gath[i]) g[i] = gathered(p, args, ra, scratch[i], i, r, r0, r1);
        for (int k = 0; k < 3; k++) {
            if (C.step[k] && gath[C.arg[k]]) {
                C.src[k] = g[C.arg[k]];
            } else if (C.step[k]) {
                C.src[k] += step[C.arg[k]];
                if (!disjoint_or_same(&C, C.src[k], C.step[k])) return r;
            } else if (C.param[k] && ra->value[C.arg[k]]) {
                uint8_t t = p->consts[p->direct.src_ref[k]].type;
                uint64_t bits = hg_dtype_load_bits(p->prog->params[C.arg[k]].dtype,
                                                   (const uint8_t*)ra->value[C.arg[k]] +
                                                       (int64_t)r * step[C.arg[k]]);
                hg_cpu_fill_lanes(C.lanes[k], hg_cpu_storage_bits(t, bits), hg_cpu_storage_size(t),
                                  C.fill[k]);
            }
        }
    }
}
