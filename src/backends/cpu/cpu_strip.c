// Strip-mined execution of straight-line runs of ld / ALU / st (the body of every elementwise
// kernel). Run op by op over a whole chunk, such a body makes one pass per instruction over
// chunk-sized register arrays, which then live in L2 and push the streamed inputs out of L1.
// Here the run is replayed over strips of STRIP lanes instead, so that a strip's registers stay
// in L1 while all of the run's loads and stores advance together, as in a plain C loop.
//
// Taken only when every lane of the chunk is active, the launch is 1-D, and every load and store
// of the run indexes with %gid.x (so its range is first..first+n-1), in bounds, with a type
// whose register storage is its memory layout, and no store overlaps a load of the run.
// Anything else runs op by op (which also reports out-of-bounds accesses).
//
// Registers that live only inside the run ("local": written there, read only there after the
// write, not in a loop) keep each strip's values in the first STRIP lanes of their storage;
// constants are read from their first lanes too (every lane holds the same value). Only
// registers that come from a load (pointers into the buffer) are read at the strip's offset.
#include <stdlib.h>
#include "backends/cpu/cpu_internal.h"

#define STRIP 512u  // 2 KiB per f32 register

static int plain_type(unsigned t) {
    return t != HG_DTYPE_BOOL && t != HG_DTYPE_F16 && t != HG_DTYPE_BF16;
}

static int is_run_op(const cpu_op* op) {
    return op->kind == CPU_K_ALU || op->kind == CPU_K_LD || op->kind == CPU_K_ST;
}

// Marks runs (strip_end on their first op).
static void mark_runs(const hg_prog* g, cpu_plan* p) {
    uint32_t i = 0;
    while (i < p->nops) {
        if (!is_run_op(&p->ops[i])) { i++; continue; }
        uint32_t j = i;
        while (j < p->nops && is_run_op(&p->ops[j])) j++;
        int ok = 1, mem = 0;
        for (uint32_t q = i; q < j && ok; q++) {
            const cpu_op* op = &p->ops[q];
            const hg_instr* in = &g->instrs[q];
            if (op->kind == CPU_K_ALU) {
                // A mov from a constant or special register borrows its lanes (perhaps the
                // not yet filled %gid.x): such runs stay op by op.
                ok = !(in->op == HG_OP_MOV && in->src[0].kind != HG_OPERAND_REG);
                continue;
            }
            mem = 1;
            const hg_operand* ix = &in->src[0];
            ok = op->space == HG_SPACE_GLOBAL && plain_type(op->type) &&
                 op->idx_type == HG_DTYPE_U32 &&
                 (ix->kind == HG_OPERAND_REG || ix->kind == HG_OPERAND_SPECIAL);
            // The index must keep its value through the run: it is checked once up front.
            for (uint32_t w = i; w < j && ok && ix->kind == HG_OPERAND_REG; w++)
                if (g->instrs[w].dst.kind == HG_OPERAND_REG && g->instrs[w].dst.index == ix->index)
                    ok = 0;
        }
        if (ok && mem && j - i >= 2 && j - i <= HG_CPU_STRIP_MAX_OPS) p->ops[i].strip_end = j;
        i = j;
    }
}

// Sets strip_zero on every op of a run: which operands are read at offset 0 (bits 0-2: a, b,
// c) and whether the destination is written at offset 0 (bit 3).
static void mark_offsets(const hg_prog* g, cpu_plan* p) {
    uint32_t nr = g->nregs;
    int64_t* run_of = nr ? malloc(nr * sizeof *run_of) : NULL;
    uint8_t* nonlocal = nr ? calloc(nr, 1) : NULL;
    uint8_t* from_alu = nr ? calloc(nr, 1) : NULL;  // last write in the run was a local ALU op
    if (nr && (!run_of || !nonlocal || !from_alu)) goto done;  // an optimization only
    for (uint32_t r = 0; r < nr; r++) run_of[r] = -1;
    int64_t run = -1;
    uint32_t run_end = 0, depth = 0;
    for (uint32_t i = 0; i < p->nops; i++) {
        const cpu_op* op = &p->ops[i];
        const hg_instr* in = &g->instrs[i];
        if (op->kind == CPU_K_LOOP) depth++;
        if (op->kind == CPU_K_ENDLOOP && depth) depth--;
        if (op->strip_end && !depth) { run = i; run_end = op->strip_end; }
        if (run >= 0 && i >= run_end) run = -1;
        for (int k = 0; k < 3; k++) {
            if (in->src[k].kind != HG_OPERAND_REG) continue;
            uint32_t r = in->src[k].index;
            if (run < 0 || run_of[r] != run) nonlocal[r] = 1;  // read outside or before a write
        }
        if (in->dst.kind != HG_OPERAND_REG) continue;
        uint32_t r = in->dst.index;
        if (run < 0 || (run_of[r] >= 0 && run_of[r] != run)) nonlocal[r] = 1;
        else run_of[r] = run;
    }
    for (uint32_t i = 0; i < p->nops; i++) {
        cpu_op* op = &p->ops[i];
        const hg_instr* in = &g->instrs[i];
        if (op->strip_end)
            for (uint32_t r = 0; r < nr; r++) from_alu[r] = 0;
        uint8_t m = 0;
        for (int k = 0; k < 3; k++) {
            const hg_operand* o = &in->src[k];
            if ((o->kind == HG_OPERAND_REG && from_alu[o->index]) ||
                o->kind == HG_OPERAND_IMM || o->kind == HG_OPERAND_PARAM)
                m |= (uint8_t)(1u << k);
        }
        if (in->dst.kind == HG_OPERAND_REG) {
            uint32_t r = in->dst.index;
            int local_alu = op->kind == CPU_K_ALU && !op->fuse_st && !nonlocal[r] && run_of[r] >= 0;
            if (local_alu) m |= 8u;
            if (op->kind == CPU_K_LD || op->kind == CPU_K_ALU) from_alu[r] = (uint8_t)local_alu;
        }
        op->strip_zero = m;
    }
done:
    free(run_of);
    free(nonlocal);
    free(from_alu);
}

void hg_cpu_mark_strips(const hg_prog* g, cpu_plan* p) {
    mark_runs(g, p);
    mark_offsets(g, p);
}

typedef struct saved_ptr { uint32_t slot; void* ptr; } saved_ptr;

int hg_cpu_run_strips(cpu_chunk* c, uint32_t pc) {
    const cpu_launch* L = c->L;
    const cpu_op* ops = L->plan->ops;
    const uint32_t len = ops[pc].strip_end - pc, n = c->n;
    const uint64_t first = c->first;
    // A chunk of at most one strip runs op by op just as well (its registers are in L1
    // anyway) without the setup below: the path of tiny launches.
    if (!L->x_linear || !c->gid_x || n <= STRIP) return 0;

    uint8_t* base[HG_CPU_STRIP_MAX_OPS];   // ld/st: address of element `first`
    uint8_t es_log2[HG_CPU_STRIP_MAX_OPS];
    for (uint32_t q = 0; q < len; q++) {
        const cpu_op* op = &ops[pc + q];
        if (op->kind == CPU_K_ALU) continue;
        if (c->ptr[op->a] != c->gid_x) return 0;
        const hg_bound_arg* a = &L->args[op->mem];
        if (first + n > a->count) return 0;
        es_log2[q] = (uint8_t)hg_cpu_storage_log2(op->type);
        base[q] = (uint8_t*)a->base + (first << es_log2[q]);
    }
    // A store must not overwrite what a load of the same run reads in a later strip.
    for (uint32_t s = 0; s < len; s++) {
        if (ops[pc + s].kind != CPU_K_ST) continue;
        const uint8_t *slo = base[s], *shi = slo + ((size_t)n << es_log2[s]);
        for (uint32_t l = 0; l < len; l++) {
            if (ops[pc + l].kind != CPU_K_LD) continue;
            const uint8_t *llo = base[l], *lhi = llo + ((size_t)n << es_log2[l]);
            if (slo < lhi && llo < shi) return 0;
        }
    }
    // Registers borrowing memory that a store overwrites take their own copy first.
    for (uint32_t s = 0; s < len; s++) {
        if (ops[pc + s].kind != CPU_K_ST) continue;
        const hg_bound_arg* a = &L->args[ops[pc + s].mem];
        hg_cpu_unborrow(c, a->base, (const uint8_t*)a->base + (a->count << es_log2[s]));
    }
    // Where each register written by the run points at its start: every strip starts from
    // there, so values from before the run are read at the strip's own lanes. Those sources
    // need real lanes (this fills %gid.x if one of them borrows it).
    saved_ptr entry[HG_CPU_STRIP_MAX_OPS];
    uint32_t nentry = 0;
    for (uint32_t q = 0; q < len; q++) {
        const cpu_op* op = &ops[pc + q];
        if (op->kind == CPU_K_ALU) {
            (void)cpu_slot(c, op->a);
            (void)cpu_slot(c, op->b);
            (void)cpu_slot(c, op->c);
        }
        if (op->kind == CPU_K_ST) {
            (void)cpu_slot(c, op->b);
            continue;
        }
        if (op->d == CPU_NO_SLOT) continue;
        uint32_t e = 0;
        while (e < nentry && entry[e].slot != op->d) e++;
        if (e == nentry) entry[nentry++] = (saved_ptr){op->d, c->ptr[op->d]};
    }

    for (uint32_t s = 0; s < n; s += STRIP) {
        const uint32_t m = n - s < STRIP ? n - s : STRIP;
        for (uint32_t e = 0; e < nentry; e++) c->ptr[entry[e].slot] = entry[e].ptr;
        for (uint32_t q = 0; q < len; q++) {
            const cpu_op* op = &ops[pc + q];
            const uint8_t z = op->strip_zero;
            switch ((cpu_kind)op->kind) {
            case CPU_K_LD:
                c->ptr[op->d] = base[q];  // borrowed for the whole chunk
                break;
            case CPU_K_ST:
                memcpy(base[q] + ((size_t)s << es_log2[q]),
                       (const uint8_t*)c->ptr[op->b] + (z & 2 ? 0 : (size_t)s << es_log2[q]),
                       (size_t)m << es_log2[q]);
                break;
            default: {
                const uint8_t* a = (const uint8_t*)c->ptr[op->a] + (z & 1 ? 0 : (size_t)s << op->slog2[0]);
                const uint8_t* b = (const uint8_t*)c->ptr[op->b] + (z & 2 ? 0 : (size_t)s << op->slog2[1]);
                const uint8_t* cc = (const uint8_t*)c->ptr[op->c] + (z & 4 ? 0 : (size_t)s << op->slog2[2]);
                if (op->fuse_st) {  // the next op is this result's store, in this run
                    q++;
                    op->fn(base[q] + ((size_t)s << es_log2[q]), a, b, cc, m);
                    break;
                }
                uint8_t* own = cpu_own(c, op->d);
                c->ptr[op->d] = own;
                op->fn(own + (z & 8 ? 0 : (size_t)s << op->dlog2), a, b, cc, m);
                break;
            }
            }
        }
    }
    // Registers left pointing into buffers are borrowers: later stores must give them back.
    for (uint32_t q = 0; q < len; q++) {
        const cpu_op* op = &ops[pc + q];
        if (op->kind != CPU_K_LD || c->ptr[op->d] != base[q]) continue;
        uint32_t j = 0;
        while (j < c->nborrowed && c->borrowed[j] != op->d) j++;
        if (j == c->nborrowed) c->borrowed[c->nborrowed++] = op->d;
    }
    return 1;
}
