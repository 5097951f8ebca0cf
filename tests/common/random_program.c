// Random structurally valid Atlas ISA programs (see random_program.h for the guarantees).
#include "random_program.h"
#include <stdio.h>
#include <string.h>
#include "base/dtype.h"
#include "hg_test.h"

typedef struct gen {
    uint64_t rng;
    hg_prog* p;
    int depth, loops;
    int exited;        // an exit was emitted: no bar after it
    int budget;        // instructions left to emit
    int failed;
    uint32_t names;    // counter that keeps generated names unique
} gen;

static uint32_t rnd(gen* g, uint32_t n) { return n ? (uint32_t)(hg_test_rand(&g->rng) % n) : 0; }
static int chance(gen* g, int percent) { return (int)rnd(g, 100) < percent; }

// A random dtype from a HG_TS_* set.
static int pick_type(gen* g, uint32_t set) {
    int opts[HG_DTYPE_COUNT], n = 0;
    for (int t = 0; t < HG_DTYPE_COUNT; t++)
        if (set & HG_TS(t)) opts[n++] = t;
    return n ? opts[rnd(g, (uint32_t)n)] : HG_DTYPE_I32;
}

// Unique identifiers, sometimes long (up to 63 chars) to exercise the name limits.
static void make_name(gen* g, const char* prefix, char out[HG_NAME_MAX]) {
    static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    int n = snprintf(out, HG_NAME_MAX, "%s%u", prefix, g->names++);
    if (chance(g, 15)) {
        int extra = (int)rnd(g, (uint32_t)(HG_NAME_MAX - 1 - n)) + 1;
        out[n++] = '_';
        for (int i = 1; i < extra && n < HG_NAME_MAX - 1; i++)
            out[n++] = alnum[rnd(g, sizeof alnum - 1)];
        out[n] = 0;
    }
}

uint64_t hg_test_random_imm(uint64_t* rng, int dtype) {
    uint64_t r = hg_test_rand(rng);
    unsigned pick = (unsigned)(hg_test_rand(rng) % 10);
    unsigned bits = hg_dtype_bits(dtype);
    uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    if (dtype == HG_DTYPE_BOOL) return r & 1;
    if (hg_dtype_is_int(dtype)) {
        uint64_t sign = UINT64_C(1) << (bits - 1);
        switch (pick) {
        case 0: return 0;
        case 1: return mask;                  // -1 / max unsigned
        case 2: return sign;                  // signed min
        case 3: return sign - 1;              // signed max
        case 4: return r % 10;
        default: return r & mask;
        }
    }
    // Floats: sign | exponent all ones / zero | payloads, else random bits.
    uint64_t s = UINT64_C(1) << (bits - 1);
    unsigned mbits = dtype == HG_DTYPE_F16 ? 10 : dtype == HG_DTYPE_BF16 ? 7
                   : dtype == HG_DTYPE_F32 ? 23 : 52;
    uint64_t man = (UINT64_C(1) << mbits) - 1;
    uint64_t expo = mask & ~s & ~man;
    uint64_t sgn = (r >> 63) ? s : 0;
    switch (pick) {
    case 0: return sgn;                                    // +-0
    case 1: return sgn | expo;                             // +-inf
    case 2: return sgn | expo | ((r >> 3) & man) | 1;      // NaN with a payload (maybe signalling)
    case 3: return sgn | (((r >> 5) & man) | 1);           // subnormal
    case 4: return sgn | (expo - (UINT64_C(1) << mbits)) | man;  // largest finite
    default: return r & mask;
    }
}

// A register of type t (declared on demand: the IR keeps declarations apart from code).
static uint32_t reg_of(gen* g, int t) {
    uint32_t cand[64], n = 0;
    for (uint32_t i = 0; i < g->p->nregs && n < 64; i++)
        if (g->p->regs[i].dtype == t) cand[n++] = i;
    if (n && (chance(g, 85) || g->p->nregs >= HG_MAX_REGS - 1)) return cand[rnd(g, n)];
    char name[HG_NAME_MAX];
    make_name(g, "r", name);
    uint32_t idx = 0;
    if (hg_prog_add_reg(g->p, name, (hg_dtype)t, &idx)) g->failed = 1;
    return idx;
}

static int scalar_of(gen* g, int t, uint32_t* out) {
    uint32_t cand[HG_MAX_PARAMS], n = 0;
    for (uint32_t i = 0; i < g->p->nparams; i++)
        if (g->p->params[i].kind == HG_PARAM_SCALAR && g->p->params[i].dtype == t) cand[n++] = i;
    if (!n) return 0;
    *out = cand[rnd(g, n)];
    return 1;
}

// A value operand of type t: register, scalar parameter, special register (u32) or immediate.
static hg_operand value(gen* g, int t) {
    uint32_t idx;
    switch (rnd(g, 6)) {
    case 0:
        if (scalar_of(g, t, &idx)) return hg_param(idx);
        break;
    case 1:
        if (t == HG_DTYPE_U32) return hg_sreg((hg_special)rnd(g, HG_SREG_COUNT));
        break;
    case 2:
    case 3: return hg_imm_bits(hg_test_random_imm(&g->rng, t));
    default: break;
    }
    return hg_reg(reg_of(g, t));
}

static hg_operand index_operand(gen* g) {
    if (chance(g, 30)) return hg_imm_bits(hg_test_rand(&g->rng) % 64);
    if (chance(g, 20)) return hg_imm_bits(hg_test_random_imm(&g->rng, HG_DTYPE_I64));
    return value(g, pick_type(g, HG_TS_INT));
}

static void emit(gen* g, const hg_instr* in) {
    if (hg_prog_emit(g->p, in)) g->failed = 1;
    g->budget--;
}

static hg_instr make(int op, int type) {
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = (uint16_t)op;
    in.type = (uint8_t)type;
    return in;
}

// Picks a memory slot usable by op (written slots must not be const); false if none fits.
static int pick_slot(gen* g, int op, unsigned aop, unsigned* space, uint32_t* slot, int* type) {
    uint32_t types = op == HG_OP_ATOM ? hg_atomic_types(aop) : HG_TS_ALL;
    uint32_t cand_sp[HG_MAX_PARAMS + HG_MAX_SHARED_ARRAYS], cand[HG_MAX_PARAMS + HG_MAX_SHARED_ARRAYS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->p->nparams; i++) {
        const hg_param_decl* d = &g->p->params[i];
        if (d->kind != HG_PARAM_BUFFER || !(types & HG_TS(d->dtype))) continue;
        if (op != HG_OP_LD && d->is_const) continue;
        cand_sp[n] = HG_SPACE_GLOBAL;
        cand[n++] = i;
    }
    for (uint32_t i = 0; i < g->p->nshared; i++) {
        if (!(types & HG_TS(g->p->shared[i].dtype))) continue;
        cand_sp[n] = HG_SPACE_SHARED;
        cand[n++] = i;
    }
    if (!n) return 0;
    uint32_t k = rnd(g, n);
    *space = cand_sp[k];
    *slot = cand[k];
    *type = *space == HG_SPACE_GLOBAL ? g->p->params[*slot].dtype : g->p->shared[*slot].dtype;
    return 1;
}

// The first of w consecutive registers of type t: an existing run, or w new registers.
static uint32_t run_of(gen* g, int t, uint32_t w) {
    for (uint32_t i = 0; i + w <= g->p->nregs && chance(g, 50); i++) {
        uint32_t k = 0;
        while (k < w && g->p->regs[i + k].dtype == t) k++;
        if (k == w) return i;
    }
    uint32_t first = g->p->nregs;
    for (uint32_t k = 0; k < w; k++) {
        char name[HG_NAME_MAX];
        make_name(g, "v", name);
        uint32_t idx = 0;
        if (hg_prog_add_reg(g->p, name, (hg_dtype)t, &idx)) g->failed = 1;
    }
    return first;
}

// ldv / stv (ISA 1.3) of the widest or a narrower vector the type allows.
static void gen_vector(gen* g, int op, unsigned space, uint32_t slot, int t) {
    uint32_t w = 16 / (uint32_t)hg_dtype_size((hg_dtype)t);
    while (w > 2 && chance(g, 40)) w /= 2;
    if (w < 2 || g->p->nregs + w >= HG_MAX_REGS) return;
    hg_instr in = make(op == HG_OP_LD ? HG_OP_LDV : HG_OP_STV, t);
    in.mem = slot;
    in.aux = hg_vec_aux((hg_space)space, w);
    in.src[0] = index_operand(g);
    if (op == HG_OP_LD) in.dst = hg_reg(run_of(g, t, w));
    else in.src[1] = hg_reg(run_of(g, t, w));
    emit(g, &in);
}

static void gen_memory(gen* g) {
    static const int ops[] = {HG_OP_LD, HG_OP_ST, HG_OP_ATOM};
    int op = ops[rnd(g, 3)];
    unsigned aop = rnd(g, HG_ATOMIC_COUNT), space;
    uint32_t slot;
    int t;
    if (!pick_slot(g, op, aop, &space, &slot, &t)) return;
    if (op != HG_OP_ATOM && chance(g, 25)) {
        gen_vector(g, op, space, slot, t);
        return;
    }
    hg_instr in = make(op, t);
    in.mem = slot;
    in.aux = (uint8_t)(op == HG_OP_ATOM ? hg_atom_aux(aop, space) : space);
    in.src[0] = index_operand(g);
    if (op == HG_OP_LD) in.dst = hg_reg(reg_of(g, t));
    if (op == HG_OP_ST) in.src[1] = value(g, t);
    if (op == HG_OP_ATOM) {
        in.dst = chance(g, 25) ? hg_none() : hg_reg(reg_of(g, t));
        in.src[1] = value(g, t);
        if (aop == HG_ATOMIC_CAS) in.src[2] = value(g, t);
    }
    emit(g, &in);
}

// One non-control instruction.
static void gen_simple(gen* g) {
    int op = (int)rnd(g, HG_OP_BAR + 2);  // 0..HG_OP_ATOM, bar, fence
    if (op == HG_OP_BAR + 1) op = HG_OP_FENCE;
    if (op == HG_OP_LD || op == HG_OP_ST || op == HG_OP_ATOM) {
        gen_memory(g);
        return;
    }
    if (op == HG_OP_BAR && chance(g, 50)) op = HG_OP_SHFL;   // half of bar's share
    if (op == HG_OP_BAR || op == HG_OP_SHFL) {   // block-uniform control flow only
        if (g->depth > 0 || g->exited) return;
        int t = op == HG_OP_SHFL ? pick_type(g, HG_TS_ALL) : 0;
        hg_instr in = make(op, t);
        if (op == HG_OP_SHFL) {
            in.aux = (uint8_t)rnd(g, HG_SHFL_COUNT);
            in.dst = hg_reg(reg_of(g, t));
            in.src[0] = value(g, t);
            in.src[1] = value(g, HG_DTYPE_U32);
        }
        emit(g, &in);
        return;
    }
    if (op == HG_OP_FENCE) {
        hg_instr in = make(op, 0);
        in.aux = (uint8_t)rnd(g, HG_SPACE_COUNT);
        emit(g, &in);
        return;
    }
    const hg_opinfo* info = hg_opinfo_of((unsigned)op);
    int t = pick_type(g, info->types);
    hg_instr in = make(op, t);
    if (op == HG_OP_CMP) in.aux = (uint8_t)rnd(g, HG_CMP_COUNT);
    if (op == HG_OP_CVT) in.aux = (uint8_t)pick_type(g, HG_TS_ALL);
    in.dst = hg_reg(reg_of(g, info->dst == HG_ROLE_BOOL ? HG_DTYPE_BOOL : t));
    for (int k = 0; k < 3; k++) {
        switch (info->src[k]) {
        case HG_ROLE_T: in.src[k] = value(g, t); break;
        case HG_ROLE_BOOL: in.src[k] = value(g, HG_DTYPE_BOOL); break;
        case HG_ROLE_SRC_T: in.src[k] = value(g, in.aux); break;
        default: break;
        }
    }
    emit(g, &in);
}

static void gen_block(gen* g);

static void gen_control(gen* g) {
    uint32_t k = rnd(g, 10);
    if (g->depth >= 4 || k >= 8) {
        if (g->loops && k == 8) {  // conditional or plain break inside a loop
            hg_instr in = make(HG_OP_BREAK, 0);
            if (chance(g, 70)) in.src[0] = value(g, HG_DTYPE_BOOL);
            emit(g, &in);
        } else if (k == 9 && chance(g, 30)) {
            hg_instr in = make(HG_OP_EXIT, 0);
            emit(g, &in);
            g->exited = 1;
        } else {
            gen_simple(g);
        }
        return;
    }
    g->depth++;
    if (k < 5) {
        hg_instr in = make(HG_OP_IF, 0);
        in.src[0] = value(g, HG_DTYPE_BOOL);
        emit(g, &in);
        gen_block(g);
        if (chance(g, 40)) {
            in = make(HG_OP_ELSE, 0);
            emit(g, &in);
            gen_block(g);
        }
        in = make(HG_OP_ENDIF, 0);
        emit(g, &in);
    } else {
        hg_instr in = make(HG_OP_LOOP, 0);
        emit(g, &in);
        g->loops++;
        gen_block(g);
        in = make(HG_OP_BREAK, 0);  // every loop terminates
        emit(g, &in);
        g->loops--;
        in = make(HG_OP_ENDLOOP, 0);
        emit(g, &in);
    }
    g->depth--;
}

static void gen_block(gen* g) {
    uint32_t n = rnd(g, 6);
    for (uint32_t i = 0; i < n && g->budget > 0; i++) {
        if (chance(g, 25)) gen_control(g);
        else gen_simple(g);
    }
}

hg_prog* hg_test_random_program(uint64_t seed) {
    gen g;
    memset(&g, 0, sizeof g);
    g.rng = seed * 0x9E3779B97F4A7C15ull + 1;
    char name[HG_NAME_MAX];
    make_name(&g, "kernel_", name);
    g.p = hg_prog_new(name);
    if (!g.p) return NULL;
    uint32_t np = rnd(&g, 7);
    for (uint32_t i = 0; i < np; i++) {
        make_name(&g, "p", name);
        int buffer = chance(&g, 60);
        if (hg_prog_add_param(g.p, name, buffer ? HG_PARAM_BUFFER : HG_PARAM_SCALAR,
                              (hg_dtype)pick_type(&g, HG_TS_ALL), buffer && chance(&g, 40), NULL))
            g.failed = 1;
    }
    uint32_t ns = rnd(&g, 4);
    for (uint32_t i = 0; i < ns; i++) {
        make_name(&g, "sh", name);
        // One unsized array at most (the last one, sometimes); sized ones stay far below 48 KiB.
        uint32_t count = (i == ns - 1 && chance(&g, 30)) ? 0 : 1 + rnd(&g, 256);
        if (hg_prog_add_shared(g.p, name, (hg_dtype)pick_type(&g, HG_TS_ALL), count, NULL))
            g.failed = 1;
    }
    uint32_t nr = rnd(&g, 10);
    for (uint32_t i = 0; i < nr; i++) reg_of(&g, pick_type(&g, HG_TS_ALL));
    g.budget = 4 + (int)rnd(&g, 80);
    while (g.budget > 0 && !g.failed) gen_block(&g), g.budget--;
    if (g.failed) {
        hg_prog_free(g.p);
        return NULL;
    }
    return g.p;
}
