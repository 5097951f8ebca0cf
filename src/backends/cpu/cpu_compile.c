// Compiles a validated program into the CPU execution plan: operand slots (registers,
// constant registers for immediates and scalar parameters, special registers), one kernel
// pointer per instruction, matched control flow, the registers that need zeroing, and the
// chunking mode.
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/cpu_internal.h"
#include "base/dtype.h"
#include "base/error.h"

typedef struct builder {
    const hg_prog* prog;
    cpu_plan* plan;
    uint32_t cap_consts;
    uint32_t* hash;           // open addressing over consts (index + 1; 0 = empty)
    uint32_t hash_mask;
    uint32_t param_const[HG_MAX_PARAMS];  // const index + 1 per scalar parameter
} builder;

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static hg_status add_const(builder* b, uint8_t type, int is_param, uint32_t param, uint64_t bits,
                           uint32_t* slot) {
    cpu_plan* p = b->plan;
    if (is_param && b->param_const[param]) {
        *slot = p->consts[b->param_const[param] - 1].slot;
        return HG_OK;
    }
    uint32_t h = 0;
    if (!is_param) {
        h = (uint32_t)mix(bits * 31 + type) & b->hash_mask;
        for (;;) {
            uint32_t e = b->hash[h];
            if (!e) break;
            const cpu_const* c = &p->consts[e - 1];
            if (!c->is_param && c->type == type && c->bits == bits) {
                *slot = c->slot;
                return HG_OK;
            }
            h = (h + 1) & b->hash_mask;
        }
    }
    if (p->nconsts == b->cap_consts) {
        uint32_t nc = b->cap_consts ? b->cap_consts * 2 : 16;
        cpu_const* q = realloc(p->consts, nc * sizeof *q);
        if (!q) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory compiling kernel '%s'",
                                b->prog->name);
        p->consts = q;
        b->cap_consts = nc;
    }
    cpu_const* c = &p->consts[p->nconsts++];
    c->slot = p->nslots++;
    c->type = type;
    c->is_param = (uint8_t)is_param;
    c->param = param;
    c->bits = bits;
    if (is_param) b->param_const[param] = p->nconsts;
    else b->hash[h] = p->nconsts;
    *slot = c->slot;
    return HG_OK;
}

// Type of a value operand in a role, and its slot.
static hg_status operand_slot(builder* b, const hg_instr* in, unsigned role, const hg_operand* o,
                              uint32_t* slot, uint8_t* type) {
    const hg_prog* g = b->prog;
    uint8_t t;
    switch (role) {
    case HG_ROLE_T: case HG_ROLE_OPT_T: t = in->type; break;
    case HG_ROLE_BOOL: case HG_ROLE_OPT_BOOL: t = HG_DTYPE_BOOL; break;
    case HG_ROLE_SRC_T: t = in->aux; break;
    case HG_ROLE_U32: t = HG_DTYPE_U32; break;
    default: t = HG_DTYPE_I64; break;  // index: immediates are i64, others their own type
    }
    switch (o->kind) {
    case HG_OPERAND_NONE: *slot = CPU_NO_SLOT; break;
    case HG_OPERAND_REG:
        *slot = o->index;
        t = g->regs[o->index].dtype;
        break;
    case HG_OPERAND_SPECIAL:
        if (b->plan->special_slot[o->index] == CPU_NO_SLOT)
            b->plan->special_slot[o->index] = b->plan->nslots++;
        *slot = b->plan->special_slot[o->index];
        t = HG_DTYPE_U32;
        break;
    case HG_OPERAND_PARAM:
        t = g->params[o->index].dtype;
        if (add_const(b, t, 1, o->index, 0, slot)) return HG_ERR_OUT_OF_MEMORY;
        break;
    case HG_OPERAND_IMM:
        if (add_const(b, t, 0, 0, o->bits, slot)) return HG_ERR_OUT_OF_MEMORY;
        break;
    default:
        return hg_error(HG_ERR_INTERNAL, "cpu: operand kind %u reached the compiler", o->kind);
    }
    *type = t;
    return HG_OK;
}

static cpu_kind kind_of(unsigned op) {
    switch (op) {
    case HG_OP_LD: return CPU_K_LD;
    case HG_OP_ST: return CPU_K_ST;
    case HG_OP_ATOM: return CPU_K_ATOM;
    case HG_OP_LDV: return CPU_K_LDV;
    case HG_OP_STV: return CPU_K_STV;
    case HG_OP_IF: return CPU_K_IF;
    case HG_OP_ELSE: return CPU_K_ELSE;
    case HG_OP_ENDIF: return CPU_K_ENDIF;
    case HG_OP_LOOP: return CPU_K_LOOP;
    case HG_OP_ENDLOOP: return CPU_K_ENDLOOP;
    case HG_OP_BREAK: return CPU_K_BREAK;
    case HG_OP_EXIT: return CPU_K_EXIT;
    case HG_OP_BAR: return CPU_K_BAR;
    case HG_OP_FENCE: return CPU_K_FENCE;
    case HG_OP_SHFL: return CPU_K_SHFL;
    default: return CPU_K_ALU;
    }
}

static hg_cpu_kfn alu_kernel(const hg_cpu_kernels* k, const hg_instr* in) {
    switch (in->op) {
    case HG_OP_CMP: return in->aux < HG_CMP_COUNT ? k->cmp[in->aux][in->type] : NULL;
    case HG_OP_CVT: return in->aux < HG_DTYPE_COUNT ? k->cvt[in->type][in->aux] : NULL;
    default: {
        // Immediates and scalar parameters are equal in every lane: read once (see K2K).
        int kb = in->src[1].kind == HG_OPERAND_IMM || in->src[1].kind == HG_OPERAND_PARAM;
        if (kb && k->opk[in->op][in->type]) return k->opk[in->op][in->type];
        return k->op[in->op][in->type];
    }
    }
}

// Registers that some lane may read before any write: a write defines a register for the rest
// of the region it is in (the lanes active later in a region are a subset of those active at
// the write); leaving the region (else, endif, endloop) forgets the definitions made inside.
typedef struct zframe {
    uint32_t* regs;
    uint32_t n, cap;
} zframe;

static hg_status find_zero_regs(builder* b) {
    const hg_prog* g = b->prog;
    cpu_plan* p = b->plan;
    uint32_t nr = g->nregs;
    if (!nr) return HG_OK;
    int32_t* def = malloc(nr * sizeof *def);       // frame depth that defined it, or -1
    uint8_t* need = calloc(nr, 1);
    zframe* fr = calloc(p->max_depth + 2, sizeof *fr);
    hg_status s = HG_OK;
    if (!def || !need || !fr) { s = HG_ERR_OUT_OF_MEMORY; goto done; }
    for (uint32_t r = 0; r < nr; r++) def[r] = -1;
    int depth = 0;
    for (uint32_t i = 0; i < g->ninstrs; i++) {
        const hg_instr* in = &g->instrs[i];
        for (int k = 0; k < 3; k++)
            for (uint32_t q = 0; in->src[k].kind == HG_OPERAND_REG && q < hg_src_run(in, k); q++)
                if (def[in->src[k].index + q] < 0) need[in->src[k].index + q] = 1;
        unsigned op = in->op;
        if (op == HG_OP_ELSE || op == HG_OP_ENDIF || op == HG_OP_ENDLOOP) {
            zframe* f = &fr[depth];
            for (uint32_t j = 0; j < f->n; j++) def[f->regs[j]] = -1;
            f->n = 0;
            if (op != HG_OP_ELSE) depth--;
        } else if (op == HG_OP_IF || op == HG_OP_LOOP) {
            depth++;
        }
        for (uint32_t q = 0; in->dst.kind == HG_OPERAND_REG && q < hg_instr_run(in); q++) {
            uint32_t r = in->dst.index + q;   // ldv defines a run
            if (def[r] >= 0) continue;
            zframe* f = &fr[depth];
            if (f->n == f->cap) {
                uint32_t nc = f->cap ? f->cap * 2 : 16;
                uint32_t* nr2 = realloc(f->regs, nc * sizeof *nr2);
                if (!nr2) { s = HG_ERR_OUT_OF_MEMORY; goto done; }
                f->regs = nr2;
                f->cap = nc;
            }
            f->regs[f->n++] = r;
            def[r] = depth;
        }
    }
    p->zero_regs = malloc(nr * sizeof *p->zero_regs);
    if (!p->zero_regs) { s = HG_ERR_OUT_OF_MEMORY; goto done; }
    for (uint32_t r = 0; r < nr; r++)
        if (need[r]) p->zero_regs[p->nzero++] = r;
done:
    if (fr)
        for (uint32_t d = 0; d < p->max_depth + 2; d++) free(fr[d].regs);
    free(fr);
    free(need);
    free(def);
    if (s) return hg_error(s, "out of memory compiling kernel '%s'", g->name);
    return HG_OK;
}

// A guard of kind 2 at nesting depth 0 whose `if` has no else and whose endif is followed by
// nothing but exit: once a lane fails it, that lane has nothing left to do. In a 1-D launch
// the lanes failing `%gid.x < bound` are then the chunk's tail, which run_chunk simply cuts
// off instead of running the rest of the chunk under a partial mask.
static void mark_tail_guards(cpu_plan* p) {
    uint32_t depth = 0;
    for (uint32_t i = 0; i + 1 < p->nops; i++) {
        const cpu_op* op = &p->ops[i];
        if (op->kind == CPU_K_IF || op->kind == CPU_K_LOOP) depth++;
        if ((op->kind == CPU_K_ENDIF || op->kind == CPU_K_ENDLOOP) && depth) depth--;
        if (op->guard != 2 || depth || p->ops[i + 1].kind != CPU_K_IF) continue;
        uint32_t end = p->ops[i + 1].target;
        int tail = end < p->nops && p->ops[end].kind == CPU_K_ENDIF;
        for (uint32_t q = end + 1; tail && q < p->nops; q++) tail = p->ops[q].kind == CPU_K_EXIT;
        p->ops[i].tail_guard = (uint8_t)tail;
    }
}

static hg_status match_control(builder* b) {
    const hg_prog* g = b->prog;
    cpu_plan* p = b->plan;
    uint32_t* stack = malloc((HG_MAX_NESTING + 2) * sizeof *stack);
    if (!stack) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory compiling kernel '%s'", g->name);
    uint32_t depth = 0;
    hg_status s = HG_OK;
    for (uint32_t i = 0; i < g->ninstrs && !s; i++) {
        cpu_op* op = &p->ops[i];
        switch (op->kind) {
        case CPU_K_IF:
        case CPU_K_LOOP:
            if (depth > HG_MAX_NESTING) { s = HG_ERR_INTERNAL; break; }
            stack[depth++] = i;
            if (depth > p->max_depth) p->max_depth = depth;
            break;
        case CPU_K_ELSE:
            if (!depth || p->ops[stack[depth - 1]].kind != CPU_K_IF) { s = HG_ERR_INTERNAL; break; }
            p->ops[stack[depth - 1]].target = i;
            stack[depth - 1] = i;
            break;
        case CPU_K_ENDIF: {
            if (!depth) { s = HG_ERR_INTERNAL; break; }
            cpu_op* open = &p->ops[stack[--depth]];
            if (open->kind != CPU_K_IF && open->kind != CPU_K_ELSE) { s = HG_ERR_INTERNAL; break; }
            open->target = i;
            break;
        }
        case CPU_K_ENDLOOP: {
            if (!depth || p->ops[stack[depth - 1]].kind != CPU_K_LOOP) { s = HG_ERR_INTERNAL; break; }
            uint32_t lp = stack[--depth];
            p->ops[lp].target = i;
            op->target = lp;
            break;
        }
        default: break;
        }
    }
    if (!s && depth) s = HG_ERR_INTERNAL;
    free(stack);
    if (s) return hg_error(s, "cpu: unbalanced control flow in kernel '%s' reached the compiler "
                           "(the validator should have rejected it)", g->name);
    return HG_OK;
}

// Marks ALU ops whose result goes straight to a store: `op r, ...; st.global buf[i], r` with a
// plain (copyable) type, outside loops, and r read by nothing after the store. Such an op may
// compute directly into the buffer (docs: the store's checks happen first).
static void find_store_fusion(builder* b) {
    const hg_prog* g = b->prog;
    cpu_plan* p = b->plan;
    if (!g->nregs || g->ninstrs < 2) return;
    // last_read[r]: index of the last instruction reading r (or 0 with has_read 0)
    uint32_t* last_read = calloc(g->nregs, sizeof *last_read);
    if (!last_read) return;  // an optimization only
    for (uint32_t i = 0; i < g->ninstrs; i++)
        for (int k = 0; k < 3; k++)
            for (uint32_t q = 0; g->instrs[i].src[k].kind == HG_OPERAND_REG &&
                                 q < hg_src_run(&g->instrs[i], k); q++)
                last_read[g->instrs[i].src[k].index + q] = i + 1;
    uint32_t loop_depth = 0;
    for (uint32_t i = 0; i + 1 < g->ninstrs; i++) {
        const hg_instr* in = &g->instrs[i];
        if (in->op == HG_OP_LOOP) loop_depth++;
        if (in->op == HG_OP_ENDLOOP) loop_depth--;
        const hg_instr* st = &g->instrs[i + 1];
        int t = in->type;
        if (p->ops[i].kind != CPU_K_ALU || in->op == HG_OP_CMP || loop_depth ||
            in->dst.kind != HG_OPERAND_REG || st->op != HG_OP_ST || st->aux != HG_SPACE_GLOBAL ||
            st->src[1].kind != HG_OPERAND_REG || st->src[1].index != in->dst.index ||
            st->type != t || t == HG_DTYPE_BOOL || t == HG_DTYPE_F16 || t == HG_DTYPE_BF16)
            continue;
        // the store's index must not be the register being written
        if (st->src[0].kind == HG_OPERAND_REG && st->src[0].index == in->dst.index) continue;
        if (last_read[in->dst.index] == i + 2) p->ops[i].fuse_st = 1;
    }
    free(last_read);
}

static hg_status build_shared(builder* b) {
    const hg_prog* g = b->prog;
    cpu_plan* p = b->plan;
    if (!g->nshared) return HG_OK;
    p->shared_off = calloc(g->nshared, sizeof *p->shared_off);
    if (!p->shared_off) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory compiling '%s'", g->name);
    uint64_t off = 0;
    for (uint32_t i = 0; i < g->nshared; i++) {
        if (g->shared[i].count == 0) {
            p->has_dynamic_shared = 1;
            p->dynamic_shared_index = i;
            continue;
        }
        p->shared_off[i] = (uint32_t)off;
        off += ((uint64_t)g->shared[i].count * hg_dtype_size((hg_dtype)g->shared[i].dtype) + 63) & ~63ull;
    }
    if (off > HG_CPU_MAX_SHARED_BYTES)
        return hg_error(HG_ERR_UNSUPPORTED, "kernel '%s' declares %llu bytes of static shared "
                        "memory, the CPU backend allows %u", g->name, (unsigned long long)off,
                        HG_CPU_MAX_SHARED_BYTES);
    p->shared_static_bytes = (uint32_t)off;
    if (p->has_dynamic_shared) p->shared_off[p->dynamic_shared_index] = (uint32_t)off;
    return HG_OK;
}

hg_status hg_cpu_plan_build(const hg_prog* g, const hg_cpu_kernels* k, cpu_plan** out) {
    static atomic_uint_fast64_t next_id = 1;
    cpu_plan* p = calloc(1, sizeof *p);
    builder b;
    memset(&b, 0, sizeof b);
    b.prog = g;
    b.plan = p;
    if (p) p->id = atomic_fetch_add(&next_id, 1);
    uint32_t hsize = 16;
    while (hsize < 4u * g->ninstrs + 16) hsize *= 2;
    b.hash = calloc(hsize, sizeof *b.hash);
    b.hash_mask = hsize - 1;
    if (!p || !b.hash || !(p->ops = calloc(g->ninstrs ? g->ninstrs : 1, sizeof *p->ops))) {
        free(b.hash);
        hg_cpu_plan_free(p);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory compiling kernel '%s'", g->name);
    }
    p->prog = g;
    p->nops = g->ninstrs;
    p->nslots = g->nregs;
    for (int s = 0; s < HG_SREG_COUNT; s++) p->special_slot[s] = CPU_NO_SLOT;
    hg_status s = HG_OK;
    int has_vec = 0;
    for (uint32_t i = 0; i < g->ninstrs && !s; i++) {
        const hg_instr* in = &g->instrs[i];
        const hg_opinfo* info = hg_opinfo_of(in->op);
        cpu_op* op = &p->ops[i];
        op->kind = (uint8_t)kind_of(in->op);
        op->type = in->type;
        op->mem = in->mem;
        op->d = in->dst.kind == HG_OPERAND_REG ? in->dst.index : CPU_NO_SLOT;
        op->dlog2 = (uint8_t)hg_cpu_storage_log2(in->op == HG_OP_CMP ? HG_DTYPE_BOOL : in->type);
        op->target = CPU_NO_SLOT;
        uint32_t* slots[3] = {&op->a, &op->b, &op->c};
        for (int j = 0; j < 3 && !s; j++) {
            uint8_t t = 0;
            s = operand_slot(&b, in, info->src[j], &in->src[j], slots[j], &t);
            if (j == 0 && info->src[0] == HG_ROLE_INDEX) op->idx_type = t;
            uint8_t st = info->src[j] == HG_ROLE_T ? in->type
                         : info->src[j] == HG_ROLE_SRC_T ? in->aux
                         : info->src[j] == HG_ROLE_U32 ? HG_DTYPE_U32 : HG_DTYPE_BOOL;
            op->slog2[j] = (uint8_t)hg_cpu_storage_log2(st);
        }
        if (s) break;
        if (op->kind == CPU_K_LD || op->kind == CPU_K_ST) op->space = in->aux;
        if (op->kind == CPU_K_LDV || op->kind == CPU_K_STV) {
            op->space = (uint8_t)hg_vec_space(in->aux);
            op->aop = (uint8_t)hg_vec_width(in->aux);
            has_vec = 1;
        }
        op->guard = in->op == HG_OP_CMP && in->aux == HG_CMP_LT && in->type == HG_DTYPE_U32 &&
                    (in->src[1].kind == HG_OPERAND_PARAM || in->src[1].kind == HG_OPERAND_IMM);
        if (op->kind == CPU_K_ATOM) {
            op->space = (uint8_t)hg_atom_space(in->aux);
            op->aop = (uint8_t)hg_atom_op(in->aux);
        }
        if ((op->kind == CPU_K_LD || op->kind == CPU_K_ST || op->kind == CPU_K_ATOM ||
             op->kind == CPU_K_LDV || op->kind == CPU_K_STV) && op->space == HG_SPACE_SHARED)
            p->block_mode = 1;
        // shfl exchanges values within warps of a block: the block's lanes run together.
        if (op->kind == CPU_K_BAR || op->kind == CPU_K_SHFL) p->block_mode = 1;
        if (op->kind == CPU_K_SHFL) op->aop = in->aux;
        if (op->kind == CPU_K_ALU) {
            op->fn = alu_kernel(k, in);
            op->b_once = op->fn && in->op != HG_OP_CMP && in->op != HG_OP_CVT &&
                         op->fn == k->opk[in->op][in->type];
            if (!op->fn)
                s = hg_error(HG_ERR_UNSUPPORTED, "cpu: no kernel for instruction %u of kernel '%s' "
                             "(%s.%s)", i, g->name, info->name, hg_dtype_name((hg_dtype)in->type));
        }
    }
    if (g->nshared) p->block_mode = 1;
    if (!s) s = match_control(&b);
    if (!s) s = find_zero_regs(&b);
    // Strips track registers one by one: programs with register runs (ldv/stv) run op by op.
    if (!s) find_store_fusion(&b);
    if (!s && !has_vec) hg_cpu_mark_strips(g, p, k);
    if (!s) s = build_shared(&b);
    free(b.hash);
    if (s) {
        hg_cpu_plan_free(p);
        return s;
    }
    p->reg_size = malloc(g->nregs ? g->nregs : 1);
    if (!p->reg_size) {
        hg_cpu_plan_free(p);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory compiling kernel '%s'", g->name);
    }
    for (uint32_t r = 0; r < g->nregs; r++) p->reg_size[r] = (uint8_t)hg_cpu_storage_size(g->regs[r].dtype);
    // A guard whose result only feeds the `if` right after it need not write its lanes when
    // the whole chunk is in bounds (the if then takes every lane without reading them).
    uint32_t* reads = g->nregs ? calloc(g->nregs, sizeof *reads) : NULL;
    if (reads) {  // an optimization only
        for (uint32_t j = 0; j < g->ninstrs; j++)
            for (int o = 0; o < 3; o++)
                for (uint32_t q = 0; g->instrs[j].src[o].kind == HG_OPERAND_REG &&
                                     q < hg_src_run(&g->instrs[j], o); q++)
                    reads[g->instrs[j].src[o].index + q]++;
        for (uint32_t i = 0; i + 1 < g->ninstrs; i++) {
            const hg_operand* cond = &g->instrs[i + 1].src[0];
            if (p->ops[i].guard && g->instrs[i + 1].op == HG_OP_IF &&
                cond->kind == HG_OPERAND_REG && cond->index == g->instrs[i].dst.index &&
                reads[cond->index] == 1)
                p->ops[i].guard = 2;
        }
        free(reads);
    }
    mark_tail_guards(p);
    p->tmp_slot = p->nslots++;
    p->idx_slot = p->nslots++;
    // Kernels always get valid pointers: absent operands point at the index scratch slot.
    for (uint32_t i = 0; i < p->nops; i++) {
        cpu_op* op = &p->ops[i];
        if (op->kind != CPU_K_ALU) continue;
        if (op->a == CPU_NO_SLOT) op->a = p->idx_slot;
        if (op->b == CPU_NO_SLOT) op->b = p->idx_slot;
        if (op->c == CPU_NO_SLOT) op->c = p->idx_slot;
        // Constant and special registers never change during a chunk, so a full mov from one
        // can borrow its lanes instead of copying them.
        const hg_instr* in = &g->instrs[i];
        op->borrow = in->op == HG_OP_MOV && (in->src[0].kind == HG_OPERAND_IMM ||
                                             in->src[0].kind == HG_OPERAND_PARAM ||
                                             in->src[0].kind == HG_OPERAND_SPECIAL);
    }
    for (int d = 0; d < 3; d++)
        p->lane_specials |= p->special_slot[HG_SREG_TID_X + d] != CPU_NO_SLOT ||
                            p->special_slot[HG_SREG_CTAID_X + d] != CPU_NO_SLOT ||
                            (d > 0 && p->special_slot[HG_SREG_GID_X + d] != CPU_NO_SLOT);
    // Chunks of 4096 lanes keep per-instruction overhead negligible; programs with very many
    // registers use fewer lanes so a worker's registers stay within a few MiB.
    // Strip-mined runs keep their registers in L1 whatever the chunk size, and the chunk-level
    // work of an elementwise kernel (guard, if) costs the same per chunk: bigger chunks then
    // measured faster (docs/performance.md).
    p->chunk = HG_CPU_CHUNK;
    for (uint32_t i = 0; i < p->nops; i++)
        if (p->ops[i].strip_end) p->chunk = HG_CPU_STRIP_CHUNK;
    while (p->chunk > 64 && (uint64_t)p->nslots * p->chunk * 8 > HG_CPU_MAX_ARENA) p->chunk /= 2;
    hg_cpu_find_direct(p);
    p->uniform = 1;
    for (uint32_t i = 0; i < p->nops; i++)
        if (p->ops[i].kind == CPU_K_LOOP) p->uniform = 0;
    *out = p;
    return HG_OK;
}

void hg_cpu_plan_free(cpu_plan* p) {
    if (!p) return;
    free(p->ops);
    free(p->consts);
    free(p->zero_regs);
    free(p->reg_size);
    free(p->shared_off);
    free(p);
}
