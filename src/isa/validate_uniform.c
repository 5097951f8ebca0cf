// Barrier uniformity (docs/isa.md §7): `bar` and `shfl` are allowed only where every lane of a
// block is known to arrive together (so every backend may implement shfl with the block's
// barrier, and CUDA's full-warp __shfl_*_sync sees every lane of the warp). A taint analysis finds what may differ between the lanes of a block:
//   - a register is non-uniform if any write to it reads %tid.*/%gid.*, is a load or an atomic,
//     reads a non-uniform register, or happens under non-uniform control flow (flow-insensitive:
//     one fact per register for the whole kernel, which is conservative and needs no iteration
//     order);
//   - control is non-uniform inside an `if` on a non-uniform condition, in the whole body of a
//     loop that lanes may leave at different iterations (a `break` on a non-uniform condition or
//     under non-uniform control, or an `exit` under non-uniform control anywhere inside it), and
//     everywhere after an `exit` under non-uniform control.
// Both facts only ever go from uniform to non-uniform, so a worklist reaches the fixed point in
// time linear in the program (times the nesting depth for re-visited regions).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "isa/validate_internal.h"

// Why a register is non-uniform (the root cause, copied along data flow).
enum { CAUSE_NONE = 0, CAUSE_SREG, CAUSE_LOAD, CAUSE_ATOM, CAUSE_CTRL };
typedef struct cause {
    uint8_t kind;
    uint8_t sreg;
    uint32_t at;      // instruction of the load / atomic / write under non-uniform control
} cause;

// Why control at an instruction is non-uniform.
enum { WHY_NONE = 0, WHY_IF, WHY_LOOP, WHY_EXIT };
typedef struct why {
    uint8_t kind;
    uint32_t at;      // the if / loop / exit responsible
} why;

typedef struct region {
    uint32_t begin, end;   // [begin, end)
    why reason;
} region;

typedef struct uctx {
    const hg_prog* p;
    const hg_vstruct* st;
    cause* reg;            // per register
    why* ctrl;             // per instruction
    uint32_t* loop_div;    // per instruction (loops): the break/exit that made it divergent
    uint32_t* reg_stack;   // registers newly tainted, to propagate
    uint32_t nreg_stack;
    region* regions;       // regions to mark non-uniform
    uint32_t nregions;
    uint32_t exit_from;    // everything from here on is after a divergent exit
    uint32_t* readers;     // CSR: instructions reading each register
    uint32_t* reader_start;
} uctx;

static bool divergent_sreg(uint32_t s) {
    return s == HG_SREG_TID_X || s == HG_SREG_TID_Y || s == HG_SREG_TID_Z ||
           s == HG_SREG_GID_X || s == HG_SREG_GID_Y || s == HG_SREG_GID_Z;
}

// Whether instruction i writes a register through dst.
static bool writes_reg(const hg_instr* in) {
    return hg_opinfo_of(in->op)->dst != HG_ROLE_NONE && in->dst.kind == HG_OPERAND_REG;
}

static void taint(uctx* c, uint32_t r, cause why_) {
    if (c->reg[r].kind != CAUSE_NONE) return;
    c->reg[r] = why_;
    c->reg_stack[c->nreg_stack++] = r;
}

static void push_region(uctx* c, uint32_t begin, uint32_t end, uint8_t kind, uint32_t at) {
    if (begin >= end) return;
    c->regions[c->nregions++] = (region){begin, end, {kind, at}};
}

static void loop_divergent(uctx* c, uint32_t loop, uint32_t by) {
    if (c->loop_div[loop] != HG_VNONE) return;
    c->loop_div[loop] = by;
    push_region(c, loop + 1, c->st->link[loop], WHY_LOOP, loop);
}

// Control at instruction i has become non-uniform.
static void mark(uctx* c, uint32_t i, why reason) {
    if (c->ctrl[i].kind != WHY_NONE) return;
    c->ctrl[i] = reason;
    const hg_instr* in = &c->p->instrs[i];
    if (writes_reg(in))
        for (uint32_t k = 0; k < hg_instr_run(in); k++)   // ldv writes a run
            taint(c, in->dst.index + k, (cause){CAUSE_CTRL, 0, i});
    if (in->op == HG_OP_BREAK) loop_divergent(c, c->st->loop_of[i], i);
    if (in->op == HG_OP_EXIT) {
        // Lanes that did not exit run the rest of the kernel (and the next iterations of every
        // enclosing loop) without the others.
        if (i + 1 < c->exit_from) {
            push_region(c, i + 1, c->exit_from, WHY_EXIT, i);
            c->exit_from = i + 1;
        }
        for (uint32_t l = c->st->loop_of[i]; l != HG_VNONE; l = c->st->loop_of[l])
            loop_divergent(c, l, i);
    }
}

// Non-uniform condition operand of an `if` or `break` at i: its consequences.
static void divergent_condition(uctx* c, uint32_t i) {
    const hg_instr* in = &c->p->instrs[i];
    if (in->op == HG_OP_IF) push_region(c, i + 1, c->st->link[i], WHY_IF, i);
    else if (in->op == HG_OP_BREAK) loop_divergent(c, c->st->loop_of[i], i);
}

static void run(uctx* c) {
    const hg_prog* p = c->p;
    // Seeds: per-lane special registers, loads and atomics.
    for (uint32_t i = 0; i < p->ninstrs; i++) {
        const hg_instr* in = &p->instrs[i];
        bool load = in->op == HG_OP_LD || in->op == HG_OP_LDV;
        if ((load || in->op == HG_OP_ATOM) && in->dst.kind == HG_OPERAND_REG)
            for (uint32_t k = 0; k < hg_instr_run(in); k++)
                taint(c, in->dst.index + k, (cause){load ? CAUSE_LOAD : CAUSE_ATOM, 0, i});
        for (int k = 0; k < 3; k++) {
            const hg_operand* o = &in->src[k];
            if (o->kind != HG_OPERAND_SPECIAL || !divergent_sreg(o->index)) continue;
            if (writes_reg(in)) taint(c, in->dst.index, (cause){CAUSE_SREG, (uint8_t)o->index, i});
            if (k == 0) divergent_condition(c, i);
        }
    }
    while (c->nreg_stack || c->nregions) {
        if (c->nregions) {
            region g = c->regions[--c->nregions];
            for (uint32_t i = g.begin; i < g.end; i++) mark(c, i, g.reason);
            continue;
        }
        uint32_t r = c->reg_stack[--c->nreg_stack];
        for (uint32_t k = c->reader_start[r]; k < c->reader_start[r + 1]; k++) {
            uint32_t i = c->readers[k];
            const hg_instr* in = &p->instrs[i];
            if (in->op == HG_OP_IF || in->op == HG_OP_BREAK) divergent_condition(c, i);
            else if (writes_reg(in)) taint(c, in->dst.index, c->reg[r]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Explaining a rejected bar
// ---------------------------------------------------------------------------------------------

typedef struct sbuf {
    char* s;
    size_t len, cap;
} sbuf;

static void put(sbuf* b, const char* fmt, ...) HG_PRINTF(2, 3);
static void put(sbuf* b, const char* fmt, ...) {
    if (b->len + 1 >= b->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (w > 0) b->len = b->len + (size_t)w < b->cap ? b->len + (size_t)w : b->cap - 1;
}

static void put_cause(uctx* c, sbuf* b, const hg_operand* o) {
    char t[256];
    if (o->kind == HG_OPERAND_SPECIAL) {
        put(b, "%s", hg_special_name(o->index));
        return;
    }
    cause k = c->reg[o->index];
    const char* via = c->p->regs[o->index].name;
    switch (k.kind) {
    case CAUSE_SREG: put(b, "%s (through register '%s')", hg_special_name(k.sreg), via); break;
    case CAUSE_LOAD:
        put(b, "a load (instruction %u `%s`, through register '%s')", k.at,
            hg_instr_text(c->p, k.at, t, sizeof t), via);
        break;
    case CAUSE_ATOM:
        put(b, "an atomic (instruction %u `%s`, through register '%s')", k.at,
            hg_instr_text(c->p, k.at, t, sizeof t), via);
        break;
    default:
        put(b, "a register written under non-uniform control flow (instruction %u `%s`, through "
            "register '%s')", k.at, hg_instr_text(c->p, k.at, t, sizeof t), via);
        break;
    }
}

static void put_why(uctx* c, sbuf* b, why w, int depth) {
    char t[256];
    const hg_prog* p = c->p;
    if (depth > 4) {
        put(b, "...");
        return;
    }
    if (w.kind == WHY_IF) {
        put(b, "inside `%s` (instruction %u) whose condition depends on ",
            hg_instr_text(p, w.at, t, sizeof t), w.at);
        put_cause(c, b, &p->instrs[w.at].src[0]);
    } else if (w.kind == WHY_LOOP) {
        uint32_t by = c->loop_div[w.at];
        put(b, "inside `loop` (instruction %u), which lanes may leave at different iterations "
            "because of `%s` (instruction %u)", w.at, hg_instr_text(p, by, t, sizeof t), by);
        const hg_operand* cond = &p->instrs[by].src[0];
        bool cond_bad = p->instrs[by].op == HG_OP_BREAK &&
                        ((cond->kind == HG_OPERAND_SPECIAL && divergent_sreg(cond->index)) ||
                         (cond->kind == HG_OPERAND_REG && c->reg[cond->index].kind != CAUSE_NONE));
        if (cond_bad) {
            put(b, " whose condition depends on ");
            put_cause(c, b, cond);
        } else if (c->ctrl[by].kind != WHY_NONE) {
            put(b, ", which is ");
            put_why(c, b, c->ctrl[by], depth + 1);
        }
    } else if (w.kind == WHY_EXIT) {
        put(b, "after `exit` (instruction %u), which only some lanes may take since it is ", w.at);
        put_why(c, b, c->ctrl[w.at], depth + 1);
    }
}

// ---------------------------------------------------------------------------------------------

hg_status hg_validate_uniformity(const hg_prog* p, const hg_vstruct* st) {
    uint32_t n = p->ninstrs;
    bool has_bar = false;
    for (uint32_t i = 0; i < n && !has_bar; i++)
        has_bar = p->instrs[i].op == HG_OP_BAR || p->instrs[i].op == HG_OP_SHFL;
    if (!has_bar) return HG_OK;

    uctx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.st = st;
    c.exit_from = n;
    // Readers per register (CSR), counting each source register operand.
    c.reader_start = calloc((size_t)p->nregs + 1, sizeof *c.reader_start);
    size_t nreads = 0;
    if (c.reader_start) {
        for (uint32_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                if (p->instrs[i].src[k].kind == HG_OPERAND_REG) {
                    c.reader_start[p->instrs[i].src[k].index + 1]++;
                    nreads++;
                }
        for (uint32_t r = 0; r < p->nregs; r++) c.reader_start[r + 1] += c.reader_start[r];
    }
    c.readers = malloc((nreads ? nreads : 1) * sizeof *c.readers);
    c.reg = calloc((size_t)p->nregs + 1, sizeof *c.reg);
    c.reg_stack = malloc(((size_t)p->nregs + 1) * sizeof *c.reg_stack);
    c.ctrl = calloc(n, sizeof *c.ctrl);
    c.loop_div = malloc((size_t)n * sizeof *c.loop_div);
    // Each if and loop pushes its region at most once, each exit at most once.
    c.regions = malloc((size_t)n * sizeof *c.regions);
    uint32_t* fill = calloc((size_t)p->nregs + 1, sizeof *fill);
    hg_status s = HG_OK;
    if (!c.reader_start || !c.readers || !c.reg || !c.reg_stack || !c.ctrl || !c.loop_div ||
        !c.regions || !fill) {
        s = hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory validating kernel '%s'", p->name);
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        c.loop_div[i] = HG_VNONE;
        for (int k = 0; k < 3; k++) {
            const hg_operand* o = &p->instrs[i].src[k];
            if (o->kind == HG_OPERAND_REG)
                c.readers[c.reader_start[o->index] + fill[o->index]++] = i;
        }
    }
    run(&c);
    for (uint32_t i = 0; i < n; i++) {
        unsigned op = p->instrs[i].op;
        if ((op != HG_OP_BAR && op != HG_OP_SHFL) || c.ctrl[i].kind == WHY_NONE) continue;
        char msg[1200];
        sbuf b = {msg, 0, sizeof msg};
        msg[0] = 0;
        put_why(&c, &b, c.ctrl[i], 0);
        const char* mn = op == HG_OP_BAR ? "bar" : "shfl";
        s = hg_validate_fail(p, i, "%s %s, expected `%s` only where control flow is "
                             "block-uniform (docs/isa.md §7)", mn, msg, mn);
        break;
    }
done:
    free(fill);
    free(c.reader_start);
    free(c.readers);
    free(c.reg);
    free(c.reg_stack);
    free(c.ctrl);
    free(c.loop_div);
    free(c.regions);
    return s;
}
