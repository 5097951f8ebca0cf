// The Atlas ISA printer: hg_prog -> canonical text (docs/isa.md §2, "Canonical text"), and the
// one-instruction form used in error messages. Both must cope with invalid programs (they are
// used to describe them): anything out of range prints as <bad ...> instead of crashing.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "isa/program.h"
#include "isa/text_imm.h"

// A growable output string; on allocation failure `failed` is set and writes are dropped.
typedef struct strbuf {
    char* s;
    size_t len, cap;
    bool failed;
} strbuf;

static void sb_write(strbuf* b, const char* s, size_t n) {
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->len + n + 1) nc *= 2;
        char* q = realloc(b->s, nc);
        if (!q) {
            b->failed = true;
            return;
        }
        b->s = q;
        b->cap = nc;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

static void sb_puts(strbuf* b, const char* s) { sb_write(b, s, strlen(s)); }

static void sb_printf(strbuf* b, const char* fmt, ...) HG_PRINTF(2, 3);
static void sb_printf(strbuf* b, const char* fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sb_write(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static const char* type_str(int t, char* buf, size_t len) {
    const char* s = hg_dtype_valid(t) ? hg_dtype_name((hg_dtype)t) : NULL;
    if (s) return s;
    snprintf(buf, len, "<bad type %d>", t);
    return buf;
}

// Names are NUL-terminated within HG_NAME_MAX by every producer; %.63s guards the others.
static void put_name(strbuf* b, const char* name) { sb_printf(b, "%.*s", HG_NAME_MAX - 1, name); }

// ---------------------------------------------------------------------------------------------
// Instructions
// ---------------------------------------------------------------------------------------------
#define TYPE_INDEX (-2)

static void put_operand(strbuf* b, const hg_prog* p, const hg_operand* o, int type) {
    char buf[96];
    switch (o->kind) {
    case HG_OPERAND_NONE: sb_puts(b, "_"); return;
    case HG_OPERAND_REG:
        if (o->index < p->nregs) put_name(b, p->regs[o->index].name);
        else sb_printf(b, "<bad register %u>", o->index);
        return;
    case HG_OPERAND_PARAM:
        if (o->index < p->nparams) put_name(b, p->params[o->index].name);
        else sb_printf(b, "<bad parameter %u>", o->index);
        return;
    case HG_OPERAND_SPECIAL: {
        const char* s = hg_special_name(o->index);
        if (s) sb_puts(b, s);
        else sb_printf(b, "<bad special %u>", o->index);
        return;
    }
    case HG_OPERAND_IMM:
        sb_puts(b, hg_text_format_imm(o->bits, type == TYPE_INDEX ? HG_DTYPE_I64 : type, buf,
                                      sizeof buf));
        return;
    default: sb_printf(b, "<bad operand kind %u>", o->kind); return;
    }
}

static int role_type(const hg_instr* in, unsigned role) {
    switch (role) {
    case HG_ROLE_BOOL:
    case HG_ROLE_OPT_BOOL: return HG_DTYPE_BOOL;
    case HG_ROLE_SRC_T: return in->aux;
    case HG_ROLE_INDEX: return TYPE_INDEX;
    case HG_ROLE_U32: return HG_DTYPE_U32;
    default: return in->type;
    }
}

static void put_mem(strbuf* b, const hg_prog* p, const hg_instr* in, unsigned space) {
    if (space == HG_SPACE_GLOBAL && in->mem < p->nparams) put_name(b, p->params[in->mem].name);
    else if (space == HG_SPACE_SHARED && in->mem < p->nshared) put_name(b, p->shared[in->mem].name);
    else sb_printf(b, "<bad slot %u>", in->mem);
    sb_puts(b, "[");
    put_operand(b, p, &in->src[0], TYPE_INDEX);
    sb_puts(b, "]");
}

static void put_modifier(strbuf* b, const char* name, unsigned value, const char* what) {
    if (name) sb_printf(b, ".%s", name);
    else sb_printf(b, ".<bad %s %u>", what, value);
}

static void put_instr(strbuf* b, const hg_prog* p, const hg_instr* in) {
    const hg_opinfo* info = hg_opinfo_of(in->op);
    char tb[32];
    if (!info) {
        sb_printf(b, "<bad opcode %u>", in->op);
        return;
    }
    sb_puts(b, info->name);
    unsigned space = in->aux;
    switch (in->op) {
    case HG_OP_CMP: put_modifier(b, hg_cmp_name(in->aux), in->aux, "cmp"); break;
    case HG_OP_SHFL: put_modifier(b, hg_shfl_name(in->aux), in->aux, "shfl mode"); break;
    case HG_OP_LD:
    case HG_OP_ST:
    case HG_OP_FENCE: put_modifier(b, hg_space_name(in->aux), in->aux, "space"); break;
    case HG_OP_ATOM:
        space = hg_atom_space(in->aux);
        put_modifier(b, hg_space_name(space), space, "space");
        put_modifier(b, hg_atomic_name(hg_atom_op(in->aux)), hg_atom_op(in->aux), "atomic op");
        break;
    case HG_OP_LDV:
    case HG_OP_STV:
        space = hg_vec_space(in->aux);
        put_modifier(b, hg_space_name(space), space, "space");
        sb_printf(b, ".v%u", hg_vec_width(in->aux));
        break;
    default: break;
    }
    if (info->typed) sb_printf(b, ".%s", type_str(in->type, tb, sizeof tb));
    if (in->op == HG_OP_CVT) sb_printf(b, ".%s", type_str(in->aux, tb, sizeof tb));

    int t = in->type;
    switch (in->op) {
    case HG_OP_LD:
    case HG_OP_LDV:
        sb_puts(b, " ");
        put_operand(b, p, &in->dst, t);
        sb_puts(b, ", ");
        put_mem(b, p, in, space);
        return;
    case HG_OP_ST:
    case HG_OP_STV:
        sb_puts(b, " ");
        put_mem(b, p, in, space);
        sb_puts(b, ", ");
        put_operand(b, p, &in->src[1], t);
        return;
    case HG_OP_ATOM:
        sb_puts(b, " ");
        put_operand(b, p, &in->dst, t);
        sb_puts(b, ", ");
        put_mem(b, p, in, space);
        sb_puts(b, ", ");
        put_operand(b, p, &in->src[1], t);
        // The fourth operand belongs to cas; print it wherever it is set so invalid programs
        // show what they hold.
        if (hg_atom_op(in->aux) == HG_ATOMIC_CAS || in->src[2].kind != HG_OPERAND_NONE) {
            sb_puts(b, ", ");
            put_operand(b, p, &in->src[2], t);
        }
        return;
    default: break;
    }
    const char* sep = " ";
    if (info->dst != HG_ROLE_NONE) {
        sb_puts(b, sep);
        put_operand(b, p, &in->dst, role_type(in, info->dst));
        sep = ", ";
    }
    for (int k = 0; k < 3; k++) {
        unsigned role = info->src[k];
        if (role == HG_ROLE_NONE) continue;
        if (role == HG_ROLE_OPT_BOOL && in->src[k].kind == HG_OPERAND_NONE) continue;
        sb_puts(b, sep);
        put_operand(b, p, &in->src[k], role_type(in, role));
        sep = ", ";
    }
}

const char* hg_instr_text(const hg_prog* p, uint32_t i, char* buf, size_t len) {
    if (!buf || len == 0) return buf;
    buf[0] = 0;
    if (!p || i >= p->ninstrs) {
        snprintf(buf, len, "<no instruction %u>", i);
        return buf;
    }
    strbuf b = {0};
    put_instr(&b, p, &p->instrs[i]);
    snprintf(buf, len, "%s", b.failed || !b.s ? "<out of memory>" : b.s);
    free(b.s);
    return buf;
}

// ---------------------------------------------------------------------------------------------
// Whole program
// ---------------------------------------------------------------------------------------------
hg_status hg_prog_print(const hg_prog* p, char** out, size_t* len) {
    if (!p || !out) return hg_error(HG_ERR_NULL_POINTER, "hg_prog_print: NULL argument");
    strbuf b = {0};
    char tb[32];
    sb_puts(&b, ".kernel ");
    put_name(&b, p->name);
    sb_puts(&b, "\n");
    for (uint32_t k = 0; k < p->nparams; k++) {
        const hg_param_decl* d = &p->params[k];
        sb_puts(&b, ".param ");
        put_name(&b, d->name);
        if (d->kind == HG_PARAM_BUFFER)
            sb_printf(&b, ": global %s%s\n", d->is_const ? "const " : "",
                      type_str(d->dtype, tb, sizeof tb));
        else
            sb_printf(&b, ": %s\n", type_str(d->dtype, tb, sizeof tb));
    }
    for (uint32_t k = 0; k < p->nshared; k++) {
        const hg_shared_decl* d = &p->shared[k];
        sb_puts(&b, ".shared ");
        put_name(&b, d->name);
        if (d->count) sb_printf(&b, ": %s[%u]\n", type_str(d->dtype, tb, sizeof tb), d->count);
        else sb_printf(&b, ": %s[]\n", type_str(d->dtype, tb, sizeof tb));
    }
    for (uint32_t k = 0; k < p->nregs; k++) {
        sb_printf(&b, ".reg %s ", type_str(p->regs[k].dtype, tb, sizeof tb));
        put_name(&b, p->regs[k].name);
        sb_puts(&b, "\n");
    }
    sb_puts(&b, "\n");
    int depth = 0;
    for (uint32_t i = 0; i < p->ninstrs; i++) {
        unsigned op = p->instrs[i].op;
        // else/endif/endloop close a level; unbalanced programs clamp at column 0.
        if (op == HG_OP_ELSE || op == HG_OP_ENDIF || op == HG_OP_ENDLOOP)
            depth = depth > 0 ? depth - 1 : 0;
        // Indentation is capped at the validator's nesting limit so that a huge invalid program
        // cannot make the text grow quadratically.
        int indent = depth < HG_MAX_NESTING ? depth : HG_MAX_NESTING;
        for (int d = 0; d <= indent; d++) sb_puts(&b, "    ");
        put_instr(&b, p, &p->instrs[i]);
        sb_puts(&b, "\n");
        if (op == HG_OP_IF || op == HG_OP_ELSE || op == HG_OP_LOOP) depth++;
    }
    if (b.failed || !b.s) {
        free(b.s);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory printing program '%.*s'",
                        HG_NAME_MAX - 1, p->name);
    }
    *out = b.s;
    if (len) *len = b.len;
    return HG_OK;
}
