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
//
// Within a run, two f32 add/sub/mul/min/max where the second consumes the first's result (with
// only loads between them) run as one pass of a fused pair kernel when nothing else reads that
// intermediate value: the value stays in a vector register instead of a trip through a strip
// array, and the pair's input streams are read in the same loop (mark_pairs).
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/cpu_internal.h"

#define STRIP HG_CPU_STRIP  // 2 KiB per f32 register

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

static int const_operand(const hg_operand* o) {
    return o->kind == HG_OPERAND_IMM || o->kind == HG_OPERAND_PARAM;
}

// Whether register r, read by op j of a run ending at run_end, is dead after j: written (by j
// itself or later) before anything reads it.
static int dead_after(const hg_prog* g, uint32_t r, uint32_t j, uint32_t run_end) {
    const hg_instr* in = &g->instrs[j];
    if (in->dst.kind == HG_OPERAND_REG && in->dst.index == r) return 1;
    for (uint32_t q = j + 1; q < run_end; q++) {
        for (int k = 0; k < 3; k++)
            if (g->instrs[q].src[k].kind == HG_OPERAND_REG && g->instrs[q].src[k].index == r)
                return 0;
        if (g->instrs[q].dst.kind == HG_OPERAND_REG && g->instrs[q].dst.index == r) return 1;
    }
    return 1;
}

// Whether ALU op i of a run ending at run_end and the next ALU op j (only loads between them)
// can run as one pass of a fused f32 pair (see pair_f32): both f32 add/sub/mul/min/max, op j
// reads op i's result r as its first operand (and not as its second), and that value of r is
// read nowhere else (r is local to the run, nothing between or after reads it before it is
// written again), so it need not be stored. Returns the pair code; *j_out = j.
static uint8_t pair_code(const hg_prog* g, const cpu_plan* p, uint32_t i, uint32_t run_end,
                         const uint8_t* nonlocal, uint32_t* j_out) {
    const hg_instr* in1 = &g->instrs[i];
    const cpu_op* o1 = &p->ops[i];
    if (o1->kind != CPU_K_ALU || o1->fuse_st || o1->borrow || in1->type != HG_DTYPE_F32 ||
        in1->dst.kind != HG_OPERAND_REG)
        return 0;
    const uint32_t r = in1->dst.index;
    uint32_t j = i + 1;
    for (; j < run_end && p->ops[j].kind == CPU_K_LD; j++)
        if (g->instrs[j].dst.index == r || (g->instrs[j].src[0].kind == HG_OPERAND_REG &&
                                            g->instrs[j].src[0].index == r))
            return 0;
    if (j >= run_end) return 0;
    const hg_instr* in2 = &g->instrs[j];
    const cpu_op* o2 = &p->ops[j];
    if (o2->kind != CPU_K_ALU || o2->borrow || in2->type != HG_DTYPE_F32) return 0;
    int p1 = hg_cpu_pair_index(in1->op), p2 = hg_cpu_pair_index(in2->op);
    if (p1 < 0 || p2 < 0 || nonlocal[r] || in2->src[0].kind != HG_OPERAND_REG ||
        in2->src[0].index != r ||
        (in2->src[1].kind == HG_OPERAND_REG && in2->src[1].index == r))
        return 0;
    if (!dead_after(g, r, j, run_end)) return 0;
    *j_out = j;
    int variant = const_operand(&in1->src[1]) + 2 * const_operand(&in2->src[1]);
    return (uint8_t)(1 + (p1 * HG_CPU_PAIR_OPS + p2) * 4 + variant);
}

static int chain_binary(unsigned op) {
    return op == HG_OP_ADD || op == HG_OP_SUB || op == HG_OP_MUL || op == HG_OP_DIV;
}

static int chain_unary(const hg_instr* in) { return !chain_binary(in->op); }

static int chain_instr(const hg_instr* in, const cpu_op* o) {
    if (o->kind != CPU_K_ALU || o->borrow || in->type != HG_DTYPE_F32 ||
        in->dst.kind != HG_OPERAND_REG || !hg_cpu_chain_op(in->op))
        return 0;
    for (int k = 0; k < 2 - chain_unary(in); k++)
        if (in->src[k].kind != HG_OPERAND_REG && !const_operand(&in->src[k])) return 0;
    return 1;
}

// The chain of f32 ops (hg_cpu_chain_op) from ALU op i of a run ending at run_end: each next
// ALU op (only loads between) reads the previous result r (as either operand or both), which
// stays in a vector register; where r is also read later (or outside the run) the chain
// stores it to r's register as well (CPU_CHAIN_TEE). It ends at an op whose result is stored
// (fuse_st) or not read by the next ALU op. Returns the number of ALU ops (0 when under 2) and
// sets their chain_op / chain_form (not chain).
static unsigned mark_chain(const hg_prog* g, cpu_plan* p, uint32_t i, uint32_t run_end,
                           const uint8_t* nonlocal) {
    const hg_instr* in = &g->instrs[i];
    if (!chain_instr(in, &p->ops[i])) return 0;
    const int unary = chain_unary(in);
    p->ops[i].chain_op = in->op;
    p->ops[i].chain_form = (uint8_t)((const_operand(&in->src[0]) ? CPU_CHAIN_A_K : 0) |
                                     (unary || const_operand(&in->src[1]) ? HG_CPU_CHAIN_K : 0));
    unsigned len = 1;
    while (len + 1 < HG_CPU_CHAIN_MAX && !p->ops[i].fuse_st) {
        const uint32_t r = in->dst.index;
        uint32_t j = i + 1;
        for (; j < run_end && p->ops[j].kind == CPU_K_LD; j++)
            if (g->instrs[j].dst.index == r || (g->instrs[j].src[0].kind == HG_OPERAND_REG &&
                                                g->instrs[j].src[0].index == r))
                return len < 2 ? 0 : len;
        if (j >= run_end) break;
        const hg_instr* in2 = &g->instrs[j];
        if (!chain_instr(in2, &p->ops[j])) break;
        const int un2 = chain_unary(in2);
        const int r0 = in2->src[0].kind == HG_OPERAND_REG && in2->src[0].index == r;
        const int r1 = !un2 && in2->src[1].kind == HG_OPERAND_REG && in2->src[1].index == r;
        if (!r0 && !r1) break;
        // r read again later (or outside the run): the chain also writes it to its register
        if (nonlocal[r] || !dead_after(g, r, j, run_end)) p->ops[i].chain_form |= CPU_CHAIN_TEE;
        uint8_t form = r0 && r1 ? HG_CPU_CHAIN_SELF | HG_CPU_CHAIN_K
                       : r1 ? (uint8_t)(HG_CPU_CHAIN_SWAP |
                                        (const_operand(&in2->src[0]) ? HG_CPU_CHAIN_K : 0))
                            : (uint8_t)(un2 || const_operand(&in2->src[1]) ? HG_CPU_CHAIN_K : 0);
        p->ops[j].chain_op = in2->op;
        p->ops[j].chain_form = form;
        i = j;
        in = in2;
        len++;
    }
    return len < 2 ? 0 : len;
}

static void mark_pairs(const hg_prog* g, cpu_plan* p, const uint8_t* nonlocal, int chains) {
    uint32_t run_end = 0, depth = 0;
    int in_run = 0;
    for (uint32_t i = 0; i < p->nops; i++) {
        const cpu_op* op = &p->ops[i];
        if (op->kind == CPU_K_LOOP) depth++;
        if (op->kind == CPU_K_ENDLOOP && depth) depth--;
        if (op->strip_end && !depth) { in_run = 1; run_end = op->strip_end; }
        if (in_run && i >= run_end) in_run = 0;
        if (!in_run || i + 1 >= run_end) continue;
        uint32_t j = 0;
        p->ops[i].pair = pair_code(g, p, i, run_end, nonlocal, &j);
        // A chain of three ops or more, or of ops that do not pair, runs as a chain.
        unsigned len = chains ? mark_chain(g, p, i, run_end, nonlocal) : 0;
        if (len >= 3 || (len == 2 && !p->ops[i].pair)) {
            p->ops[i].pair = 0;
            p->ops[i].chain = (uint8_t)len;
            for (unsigned k = 1; k < len; k++) {   // on to its last op
                i++;
                while (p->ops[i].kind == CPU_K_LD) i++;
            }
            continue;
        }
        // The second op of a pair starts none; the loads between are plain run ops.
        if (p->ops[i].pair) i = j;
    }
}

// Sets strip_zero on every op of a run: which operands are read at offset 0 (bits 0-2: a, b,
// c) and whether the destination is written at offset 0 (bit 3).
static void mark_offsets(const hg_prog* g, cpu_plan* p, int chains) {
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
    mark_pairs(g, p, nonlocal, chains);
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

// Sets strip_whole on runs whose ALU ops all compute straight into a store (fuse_st, or a
// pair whose second op has it): loads only borrow buffer lanes, so no register array would
// be walked and nothing is gained by strips; one pass over the chunk saves the per-strip
// work (a 64K-element add: 128 strips, a third of its instructions).
static void mark_whole(cpu_plan* p) {
    for (uint32_t i = 0; i < p->nops; i++) {
        if (!p->ops[i].strip_end) continue;
        int whole = 1;
        for (uint32_t q = i; q < p->ops[i].strip_end && whole; q++) {
            const cpu_op* op = &p->ops[q];
            if (op->kind != CPU_K_ALU) continue;
            if (op->pair) {
                while (q + 1 < p->ops[i].strip_end && p->ops[q + 1].kind == CPU_K_LD) q++;
                op = &p->ops[++q];
            }
            int tee = 0;   // a chain that also writes a register array: strips
            for (unsigned k = op->chain; k > 1; k--) {   // a chain's last op
                tee |= op->chain_form & CPU_CHAIN_TEE;
                while (q + 1 < p->ops[i].strip_end && p->ops[q + 1].kind == CPU_K_LD) q++;
                op = &p->ops[++q];
            }
            whole = !tee && q < p->ops[i].strip_end && op->kind == CPU_K_ALU && op->fuse_st;
        }
        p->ops[i].strip_whole = (uint8_t)whole;
    }
}

void hg_cpu_mark_strips(const hg_prog* g, cpu_plan* p, const hg_cpu_kernels* k) {
    mark_runs(g, p);
    mark_offsets(g, p, k->chain_f32 != NULL);
    mark_whole(p);
}

typedef struct saved_ptr { uint32_t slot; void* ptr; } saved_ptr;

// fn over m lanes whose result goes to dst with streaming stores: computed into `staged` in
// pieces, each streamed out right away, so the loads of the next piece overlap the stores of
// this one (16M f32 add on one thread, against the C streaming add: 0.83 with the whole
// 512-lane strip staged at once, 0.90 with 256-lane strips, 0.92 with these 128-lane pieces).
// step[i]: bytes per lane of source i (every source holds the strip's lanes contiguously from
// the pointer given: constants in all lanes).
#define STREAM_PIECE 128u
static void run_streamed(hg_cpu_kfn fn, uint8_t* dst, unsigned dlog2, const uint8_t* a,
                         const uint8_t* b, const uint8_t* c, const size_t step[3], uint32_t m,
                         uint8_t* staged) {
    for (uint32_t o = 0; o < m; o += STREAM_PIECE) {
        const uint32_t k = m - o < STREAM_PIECE ? m - o : STREAM_PIECE;
        fn(staged, a + o * step[0], b + o * step[1], c + o * step[2], k);
        hg_cpu_stream_copy(dst + ((size_t)o << dlog2), staged, (size_t)k << dlog2);
    }
}

// One strip's chain (mark_chain) from op pc + q: its steps from the operands' lane arrays at
// strip offset s (loads between its ops borrow their buffers as in the run), run by chain_f32
// into the last op's register or, with fuse_st, into the store's buffer. Returns the index of
// the last op it consumed.
static uint32_t run_chain(cpu_chunk* c, uint32_t pc, uint32_t q, uint32_t s, uint32_t m,
                          uint8_t* const* base, const uint8_t* es_log2, const uint8_t* stream,
                          uint8_t* staged) {
    const cpu_op* ops = c->L->plan->ops;
    const cpu_op* op = &ops[pc + q];
    hg_cpu_chain_step st[HG_CPU_CHAIN_MAX];
    const float* a0 = (const float*)c->ptr[op->a];
    st[0] = (hg_cpu_chain_step){HG_OP_MOV, 0, 0.0f, a0 + (op->strip_zero & 1 ? 0 : s), NULL};
    if (op->chain_form & CPU_CHAIN_A_K)
        st[0] = (hg_cpu_chain_step){HG_OP_MOV, HG_CPU_CHAIN_K, a0[0], NULL, NULL};
    unsigned ns = 1;
    for (unsigned left = op->chain;; q++) {
        op = &ops[pc + q];
        if (op->kind == CPU_K_LD) {
            c->ptr[op->d] = base[q];
            continue;
        }
        const uint8_t f = op->chain_form & 7u;
        hg_cpu_chain_step* t = &st[ns++];
        *t = (hg_cpu_chain_step){op->chain_op, f, 0.0f, NULL, NULL};
        if (op->chain_form & CPU_CHAIN_TEE) {   // read again after the chain: stored too
            uint8_t* own = cpu_own(c, op->d);
            c->ptr[op->d] = own;
            t->out = (float*)own + (op->strip_zero & 8 ? 0 : s);
        }
        // The operand beside the chain's value: b, or a when the value is the second operand.
        if (!(f & HG_CPU_CHAIN_SELF) && chain_binary(op->chain_op)) {
            const int k = f & HG_CPU_CHAIN_SWAP ? 0 : 1;
            const float* x = (const float*)c->ptr[k ? op->b : op->a];
            if (f & HG_CPU_CHAIN_K) t->k = x[0];
            else t->x = x + (op->strip_zero & (1u << k) ? 0 : s);
        }
        if (--left == 0) break;
    }
    hg_cpu_chainfn fn = c->L->k->chain_f32;
    if (op->fuse_st) {
        q++;
        float* dst = (float*)(base[q] + ((size_t)s << es_log2[q]));
        if (!stream[q]) {
            fn(dst, st, ns, m);
            return q;
        }
        // Streamed: computed in pieces into `staged`, each streamed out (run_streamed).
        hg_cpu_chain_step piece[HG_CPU_CHAIN_MAX];
        memcpy(piece, st, ns * sizeof *st);
        for (uint32_t o = 0; o < m; o += STREAM_PIECE) {
            const uint32_t k = m - o < STREAM_PIECE ? m - o : STREAM_PIECE;
            for (unsigned i = 0; i < ns; i++) {
                if (st[i].x) piece[i].x = st[i].x + o;
                if (st[i].out) piece[i].out = st[i].out + o;
            }
            fn((float*)staged, piece, ns, k);
            hg_cpu_stream_copy(dst + o, staged, (size_t)k * sizeof(float));
        }
        return q;
    }
    uint8_t* own = cpu_own(c, op->d);
    c->ptr[op->d] = own;
    fn((float*)own + (op->strip_zero & 8 ? 0 : s), st, ns, m);
    return q;
}

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
    uint8_t stream[HG_CPU_STRIP_MAX_OPS];  // st: with streaming stores (a large output)
    int streams = 0;
    const size_t stream_bytes = L->st->stream_bytes;
    for (uint32_t q = 0; q < len; q++) {
        const cpu_op* op = &ops[pc + q];
        if (op->kind == CPU_K_ALU) continue;
        if (c->ptr[op->a] != c->gid_x) return 0;
        const hg_bound_arg* a = &L->args[op->mem];
        if (first + n > a->count) return 0;
        es_log2[q] = (uint8_t)hg_cpu_storage_log2(op->type);
        base[q] = (uint8_t*)a->base + (first << es_log2[q]);
        stream[q] = op->kind == CPU_K_ST && stream_bytes && (a->count << es_log2[q]) >= stream_bytes;
        streams |= stream[q];
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

    // A fused result bound for a streaming store is computed here first (run_streamed).
    _Alignas(64) uint8_t staged[STREAM_PIECE * 8];
    const uint32_t strip = ops[pc].strip_whole ? n : STRIP;
    for (uint32_t s = 0; s < n; s += strip) {
        const uint32_t m = n - s < strip ? n - s : strip;
        for (uint32_t e = 0; e < nentry; e++) c->ptr[entry[e].slot] = entry[e].ptr;
        for (uint32_t q = 0; q < len; q++) {
            const cpu_op* op = &ops[pc + q];
            const uint8_t z = op->strip_zero;
            switch ((cpu_kind)op->kind) {
            case CPU_K_LD:
                c->ptr[op->d] = base[q];  // borrowed for the whole chunk
                break;
            case CPU_K_ST: {
                uint8_t* dst = base[q] + ((size_t)s << es_log2[q]);
                const uint8_t* src = (const uint8_t*)c->ptr[op->b] + (z & 2 ? 0 : (size_t)s << es_log2[q]);
                if (stream[q]) hg_cpu_stream_copy(dst, src, (size_t)m << es_log2[q]);
                else memcpy(dst, src, (size_t)m << es_log2[q]);
                break;
            }
            default: {
                const uint8_t* a = (const uint8_t*)c->ptr[op->a] + (z & 1 ? 0 : (size_t)s << op->slog2[0]);
                const uint8_t* b = (const uint8_t*)c->ptr[op->b] + (z & 2 ? 0 : (size_t)s << op->slog2[1]);
                if (op->chain) {
                    q = run_chain(c, pc, q, s, m, base, es_log2, stream, staged);
                    break;
                }
                if (op->pair) {  // this op and the next ALU op in one pass (see mark_pairs)
                    while (ops[pc + q + 1].kind == CPU_K_LD) {  // loads between: as below
                        q++;
                        c->ptr[ops[pc + q].d] = base[q];
                    }
                    const cpu_op* o2 = &ops[pc + ++q];
                    const uint8_t z2 = o2->strip_zero;
                    const unsigned code = op->pair - 1u;
                    const hg_cpu_kfn fn = L->k->pair_f32[code / (4 * HG_CPU_PAIR_OPS)]
                                                        [(code / 4) % HG_CPU_PAIR_OPS][code % 4];
                    const uint8_t* c2 = (const uint8_t*)c->ptr[o2->b] +
                                        (z2 & 2 ? 0 : (size_t)s << o2->slog2[1]);
                    if (o2->fuse_st) {
                        q++;
                        uint8_t* dst = base[q] + ((size_t)s << es_log2[q]);
                        const size_t step[3] = {(size_t)1 << op->slog2[0],
                                                (size_t)1 << op->slog2[1],
                                                (size_t)1 << o2->slog2[1]};
                        if (stream[q]) run_streamed(fn, dst, es_log2[q], a, b, c2, step, m, staged);
                        else fn(dst, a, b, c2, m);
                        break;
                    }
                    uint8_t* own = cpu_own(c, o2->d);
                    c->ptr[o2->d] = own;
                    fn(own + (z2 & 8 ? 0 : (size_t)s << o2->dlog2), a, b, c2, m);
                    break;
                }
                const uint8_t* cc = (const uint8_t*)c->ptr[op->c] + (z & 4 ? 0 : (size_t)s << op->slog2[2]);
                if (op->fuse_st) {  // the next op is this result's store, in this run
                    q++;
                    uint8_t* dst = base[q] + ((size_t)s << es_log2[q]);
                    const size_t step[3] = {(size_t)1 << op->slog2[0], (size_t)1 << op->slog2[1],
                                            (size_t)1 << op->slog2[2]};
                    if (stream[q]) run_streamed(op->fn, dst, es_log2[q], a, b, cc, step, m, staged);
                    else op->fn(dst, a, b, cc, m);
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
    if (streams) hg_cpu_stream_fence();   // before the pool's join publishes the chunk
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
