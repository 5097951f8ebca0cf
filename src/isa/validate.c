// The Atlas ISA validator (docs/isa.md §8): every program is checked here before anything runs
// it, so backends may trust types, indices and structure. Declarations first, then each
// instruction against its row of the opcode table, then if/else/loop nesting, then the
// barrier-uniformity analysis (validate_uniform.c).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "isa/text_imm.h"
#include "isa/validate_internal.h"

// Name of a dtype value for messages, also for invalid values.
static const char* tname(unsigned t) {
    const char* n = hg_dtype_valid((int)t) ? hg_dtype_name((hg_dtype)t) : NULL;
    return n ? n : "(invalid type)";
}

// The article before a type name in messages ("an i32", "a u8", "an f32").
static const char* art(unsigned t) {
    const char* n = tname(t);
    return n[0] == 'i' || n[0] == 'f' ? "an" : "a";
}

// "i8 i16 ..." for a set of dtypes (HG_TS_*), written into buf.
static const char* type_set(uint32_t set, char* buf, size_t len) {
    size_t n = 0;
    buf[0] = 0;
    for (int t = 0; t < HG_DTYPE_COUNT; t++) {
        if (!(set & HG_TS(t))) continue;
        int w = snprintf(buf + n, len - n, "%s%s", n ? " " : "", tname((unsigned)t));
        if (w < 0 || (size_t)w >= len - n) break;
        n += (size_t)w;
    }
    return buf;
}

// Kernel name for messages: the name field may be unterminated in a corrupt program.
static int kname_len(const hg_prog* p) {
    const char* z = memchr(p->name, 0, sizeof p->name);
    return z ? (int)(z - p->name) : (int)sizeof p->name;
}

hg_status hg_validate_fail(const hg_prog* p, uint32_t i, const char* fmt, ...) {
    char problem[1400], text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    return hg_error(HG_ERR_INVALID_PROGRAM, "kernel '%.*s', instruction %u (`%s`): %s",
                    kname_len(p), p->name, i, hg_instr_text(p, i, text, sizeof text), problem);
}

// A declaration problem: "kernel 'K', <what> 'name': <problem>".
static hg_status decl_fail(const hg_prog* p, const char* fmt, ...) HG_PRINTF(2, 3);
static hg_status decl_fail(const hg_prog* p, const char* fmt, ...) {
    char problem[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    return hg_error(HG_ERR_INVALID_PROGRAM, "kernel '%.*s', %s", kname_len(p), p->name, problem);
}

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Names the text reserves (type names, keywords) could not be printed and parsed back
// (docs/isa.md §2); the list lives with the text code so the two never disagree.
static bool is_reserved(const char* name) { return hg_text_is_keyword(name, strlen(name)); }

// Checks one declared name: terminated, an identifier, not reserved.
static hg_status check_name(const hg_prog* p, const char* what, const char* name) {
    if (!memchr(name, 0, HG_NAME_MAX))
        return decl_fail(p, "%s name '%.*s...' is not terminated, expected at most %d characters",
                         what, 16, name, HG_NAME_MAX - 1);
    if (!hg_name_is_identifier(name))
        return decl_fail(p, "%s name '%s' is not an identifier, expected [A-Za-z_][A-Za-z0-9_]* "
                         "of at most %d characters", what, name, HG_NAME_MAX - 1);
    if (is_reserved(name))
        return decl_fail(p, "%s name '%s' is a reserved word, expected a name that is not a type "
                         "name or keyword", what, name);
    return HG_OK;
}

typedef struct named {
    const char* name;
    const char* what;
    uint32_t order;     // declaration order, so the message is the same on every libc
} named;

static int cmp_named(const void* a, const void* b) {
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

// One namespace for parameters, shared arrays and registers (sorted, so 4096 registers stay
// cheap). Names are known to be terminated identifiers here.
static hg_status check_unique(const hg_prog* p) {
    uint32_t n = p->nparams + p->nshared + p->nregs;
    if (n < 2) return HG_OK;
    named* all = malloc(n * sizeof *all);
    if (!all)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory validating kernel '%s'", p->name);
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->nparams; i++, k++)
        all[k] = (named){p->params[i].name, "parameter", k};
    for (uint32_t i = 0; i < p->nshared; i++, k++)
        all[k] = (named){p->shared[i].name, "shared array", k};
    for (uint32_t i = 0; i < p->nregs; i++, k++) all[k] = (named){p->regs[i].name, "register", k};
    qsort(all, n, sizeof *all, cmp_named);
    hg_status s = HG_OK;
    for (uint32_t i = 1; i < n && !s; i++)
        if (!strcmp(all[i - 1].name, all[i].name))
            s = decl_fail(p, "name '%s' is declared twice (as %s and as %s), expected unique names "
                          "across parameters, shared arrays and registers",
                          all[i].name, all[i - 1].what, all[i].what);
    free(all);
    return s;
}

static hg_status check_decls(const hg_prog* p) {
    hg_status s;
    if (!memchr(p->name, 0, sizeof p->name) || !hg_name_is_identifier(p->name) ||
        is_reserved(p->name))
        return decl_fail(p, "kernel name is not a valid identifier, expected "
                         "[A-Za-z_][A-Za-z0-9_]* of at most %d characters that is not a type "
                         "name or keyword",
                         HG_NAME_MAX - 1);
    if (p->nparams > HG_MAX_PARAMS)
        return decl_fail(p, "%u parameters, expected at most %d", p->nparams, HG_MAX_PARAMS);
    if (p->nshared > HG_MAX_SHARED_ARRAYS)
        return decl_fail(p, "%u shared arrays, expected at most %d", p->nshared,
                         HG_MAX_SHARED_ARRAYS);
    if (p->nregs > HG_MAX_REGS)
        return decl_fail(p, "%u registers, expected at most %d", p->nregs, HG_MAX_REGS);
    if (p->ninstrs > HG_MAX_INSTRS)
        return decl_fail(p, "%u instructions, expected at most %u", p->ninstrs, HG_MAX_INSTRS);
    if ((p->nparams && !p->params) || (p->nshared && !p->shared) || (p->nregs && !p->regs) ||
        (p->ninstrs && !p->instrs))
        return decl_fail(p, "declaration or instruction array is missing, expected storage for "
                         "every declared item");

    for (uint32_t i = 0; i < p->nparams; i++) {
        const hg_param_decl* d = &p->params[i];
        if ((s = check_name(p, "parameter", d->name))) return s;
        if (d->kind != HG_PARAM_BUFFER && d->kind != HG_PARAM_SCALAR)
            return decl_fail(p, "parameter '%s': kind %u is unknown, expected BUFFER (0) or "
                             "SCALAR (1)", d->name, d->kind);
        if (!hg_dtype_valid(d->dtype))
            return decl_fail(p, "parameter '%s': dtype %u is not a valid type, expected bool, an "
                             "integer or a float type", d->name, d->dtype);
        if (d->is_const > 1 || (d->is_const && d->kind != HG_PARAM_BUFFER))
            return decl_fail(p, "parameter '%s': is_const = %u, expected 0, or 1 on a buffer "
                             "parameter", d->name, d->is_const);
    }

    uint64_t static_bytes = 0;
    int unsized = -1;
    for (uint32_t i = 0; i < p->nshared; i++) {
        const hg_shared_decl* d = &p->shared[i];
        if ((s = check_name(p, "shared array", d->name))) return s;
        if (!hg_dtype_valid(d->dtype))
            return decl_fail(p, "shared array '%s': dtype %u is not a valid type, expected bool, "
                             "an integer or a float type", d->name, d->dtype);
        if (d->count == 0) {
            if (unsized >= 0)
                return decl_fail(p, "shared arrays '%s' and '%s' are both unsized, expected at "
                                 "most one unsized shared array (it takes the launch's "
                                 "shared_bytes)", p->shared[unsized].name, d->name);
            unsized = (int)i;
        }
        // 64-bit arithmetic: count (< 2^32) times size (<= 8) cannot overflow, nor can the sum
        // of 16 of them.
        static_bytes += (uint64_t)d->count * hg_dtype_size((hg_dtype)d->dtype);
        if (static_bytes > HG_MAX_STATIC_SHARED_BYTES)
            return decl_fail(p, "shared array '%s' brings static shared memory to %llu bytes, "
                             "expected at most %u bytes (48 KiB) in all", d->name,
                             (unsigned long long)static_bytes, HG_MAX_STATIC_SHARED_BYTES);
    }

    for (uint32_t i = 0; i < p->nregs; i++) {
        const hg_reg_decl* d = &p->regs[i];
        if ((s = check_name(p, "register", d->name))) return s;
        if (!hg_dtype_valid(d->dtype))
            return decl_fail(p, "register '%s': dtype %u is not a valid type, expected bool, an "
                             "integer or a float type", d->name, d->dtype);
    }
    return check_unique(p);
}

// ---------------------------------------------------------------------------------------------
// Operands
// ---------------------------------------------------------------------------------------------

static const char* slot_name(int slot) {
    static const char* const names[] = {"dst", "src[0]", "src[1]", "src[2]"};
    return names[slot + 1];
}

static const char* kind_name(uint32_t kind) {
    switch (kind) {
    case HG_OPERAND_NONE: return "empty (NONE)";
    case HG_OPERAND_REG: return "a register";
    case HG_OPERAND_IMM: return "an immediate";
    case HG_OPERAND_SPECIAL: return "a special register";
    case HG_OPERAND_PARAM: return "a parameter";
    default: return "an unknown operand kind";
    }
}

// Immediate bits must be the value in the type's width with nothing above it, so that every
// program has one representation (parse(print(p)) == p).
static bool imm_fits(uint64_t bits, unsigned type) {
    if (type == HG_DTYPE_BOOL) return bits <= 1;
    unsigned w = hg_dtype_bits((int)type);
    return w >= 64 || (bits >> w) == 0;
}

// Which value an operand slot needs: one exact type, or (want_int) any integer type.
typedef struct want {
    unsigned type;
    bool any_int;
} want;

static const char* want_text(want w, char* buf, size_t len) {
    if (w.any_int) snprintf(buf, len, "an integer-typed value (memory index)");
    else snprintf(buf, len, "%s %s value", art(w.type), tname(w.type));
    return buf;
}

static bool type_ok(want w, unsigned t) {
    return w.any_int ? hg_dtype_is_int((int)t) : t == w.type;
}

// Checks a source operand that must hold a value (register, scalar parameter, special, imm).
static hg_status check_value(const hg_prog* p, uint32_t i, int slot, const hg_operand* o, want w) {
    char wt[64];
    const char* sn = slot_name(slot);
    switch (o->kind) {
    case HG_OPERAND_NONE:
        return hg_validate_fail(p, i, "%s is missing, expected %s", sn,
                                want_text(w, wt, sizeof wt));
    case HG_OPERAND_REG: {
        if (o->index >= p->nregs)
            return hg_validate_fail(p, i, "%s: register index %u is out of range, expected an "
                                    "index below %u", sn, o->index, p->nregs);
        const hg_reg_decl* r = &p->regs[o->index];
        if (!type_ok(w, r->dtype))
            return hg_validate_fail(p, i, "%s: register '%s' has type %s, expected %s", sn, r->name,
                                    tname(r->dtype), want_text(w, wt, sizeof wt));
        break;
    }
    case HG_OPERAND_PARAM: {
        if (o->index >= p->nparams)
            return hg_validate_fail(p, i, "%s: parameter index %u is out of range, expected an "
                                    "index below %u", sn, o->index, p->nparams);
        const hg_param_decl* d = &p->params[o->index];
        if (d->kind != HG_PARAM_SCALAR)
            return hg_validate_fail(p, i, "%s: parameter '%s' is a buffer, expected %s (a scalar "
                                    "parameter; buffers are used as `%s[index]`)", sn, d->name,
                                    want_text(w, wt, sizeof wt), d->name);
        if (!type_ok(w, d->dtype))
            return hg_validate_fail(p, i, "%s: parameter '%s' has type %s, expected %s", sn,
                                    d->name, tname(d->dtype), want_text(w, wt, sizeof wt));
        break;
    }
    case HG_OPERAND_SPECIAL:
        if (o->index >= HG_SREG_COUNT)
            return hg_validate_fail(p, i, "%s: special register %u is unknown, expected an "
                                    "index below %d", sn, o->index, HG_SREG_COUNT);
        if (!type_ok(w, HG_DTYPE_U32))
            return hg_validate_fail(p, i, "%s: %s has type u32, expected %s", sn,
                                    hg_special_name(o->index), want_text(w, wt, sizeof wt));
        break;
    case HG_OPERAND_IMM:
        if (o->index != 0)
            return hg_validate_fail(p, i, "%s: immediate has index %u, expected 0", sn, o->index);
        // Memory indices are immediates of type i64: any bits are a value.
        if (!w.any_int && !imm_fits(o->bits, w.type)) {
            unsigned bits = hg_dtype_bits((int)w.type);
            if (w.type == HG_DTYPE_BOOL)
                return hg_validate_fail(p, i, "%s: immediate bits 0x%llx do not fit type bool, "
                                        "expected 0 or 1", sn, (unsigned long long)o->bits);
            return hg_validate_fail(p, i, "%s: immediate bits 0x%llx do not fit type %s, expected "
                                    "the value's bits (%s %u-bit value with the unused high bits "
                                    "zero)", sn, (unsigned long long)o->bits, tname(w.type),
                                    bits == 8 ? "an" : "a", bits);
        }
        return HG_OK;
    default:
        return hg_validate_fail(p, i, "%s: operand kind %u is unknown, expected REG, IMM, SPECIAL "
                                "or PARAM", sn, o->kind);
    }
    if (o->bits != 0)
        return hg_validate_fail(p, i, "%s: %s operand has bits 0x%llx, expected 0", sn,
                                kind_name(o->kind), (unsigned long long)o->bits);
    return HG_OK;
}

static hg_status check_none(const hg_prog* p, uint32_t i, int slot, const hg_operand* o,
                            const char* why) {
    if (o->kind != HG_OPERAND_NONE || o->index != 0 || o->bits != 0)
        return hg_validate_fail(p, i, "%s is %s (kind %u, index %u, bits 0x%llx), expected it "
                                "empty (kind NONE, index 0, bits 0) %s", slot_name(slot),
                                kind_name(o->kind), o->kind, o->index,
                                (unsigned long long)o->bits, why);
    return HG_OK;
}

// The destination: a register of the type (optional ones may be NONE).
static hg_status check_dst(const hg_prog* p, uint32_t i, const hg_operand* o, unsigned type,
                           bool optional) {
    if (optional && o->kind == HG_OPERAND_NONE) return check_none(p, i, -1, o, "or a register");
    if (o->kind != HG_OPERAND_REG)
        return hg_validate_fail(p, i, "dst is %s, expected %s %s register%s", kind_name(o->kind),
                                art(type), tname(type), optional ? " or `_`" : "");
    if (o->index >= p->nregs)
        return hg_validate_fail(p, i, "dst: register index %u is out of range, expected an index "
                                "below %u", o->index, p->nregs);
    const hg_reg_decl* r = &p->regs[o->index];
    if (r->dtype != type)
        return hg_validate_fail(p, i, "dst: register '%s' has type %s, expected %s %s register",
                                r->name, tname(r->dtype), art(type), tname(type));
    if (o->bits != 0)
        return hg_validate_fail(p, i, "dst: register operand has bits 0x%llx, expected 0",
                                (unsigned long long)o->bits);
    return HG_OK;
}

// Checks one operand slot against its role in the opcode table.
static hg_status check_role(const hg_prog* p, uint32_t i, int slot, const hg_operand* o,
                            unsigned role) {
    const hg_instr* in = &p->instrs[i];
    const char* mn = hg_opinfo_of(in->op)->name;
    char why[48];
    snprintf(why, sizeof why, "for `%s`", mn);
    if (slot < 0) {
        switch (role) {
        case HG_ROLE_NONE: return check_none(p, i, slot, o, why);
        case HG_ROLE_T: return check_dst(p, i, o, in->type, false);
        case HG_ROLE_BOOL: return check_dst(p, i, o, HG_DTYPE_BOOL, false);
        case HG_ROLE_OPT_T: return check_dst(p, i, o, in->type, true);
        default: break;
        }
    } else {
        switch (role) {
        case HG_ROLE_NONE: return check_none(p, i, slot, o, why);
        case HG_ROLE_T: return check_value(p, i, slot, o, (want){in->type, false});
        case HG_ROLE_BOOL: return check_value(p, i, slot, o, (want){HG_DTYPE_BOOL, false});
        case HG_ROLE_SRC_T: return check_value(p, i, slot, o, (want){in->aux, false});
        case HG_ROLE_INDEX: return check_value(p, i, slot, o, (want){0, true});
        case HG_ROLE_U32: return check_value(p, i, slot, o, (want){HG_DTYPE_U32, false});
        case HG_ROLE_OPT_BOOL:
            if (o->kind == HG_OPERAND_NONE) return check_none(p, i, slot, o, "or a bool value");
            return check_value(p, i, slot, o, (want){HG_DTYPE_BOOL, false});
        case HG_ROLE_OPT_T: {
            // Only atom has an optional source: the new value of cas.
            bool cas = in->op == HG_OP_ATOM && hg_atom_op(in->aux) == HG_ATOMIC_CAS;
            if (!cas) return check_none(p, i, slot, o, "(only atom.cas takes a third operand)");
            if (o->kind == HG_OPERAND_NONE)
                return hg_validate_fail(p, i, "src[2] is missing, expected the new %s value of "
                                        "atom.cas", tname(in->type));
            return check_value(p, i, slot, o, (want){in->type, false});
        }
        default: break;
        }
    }
    return hg_validate_fail(p, i, "opcode table gives %s the unknown role %u, expected a valid "
                            "hg_role", slot_name(slot), role);
}

// ---------------------------------------------------------------------------------------------
// Instructions
// ---------------------------------------------------------------------------------------------

// The memory slot of ld/st/atom: a buffer parameter (global) or shared array (shared) of the
// instruction's type; st and atom may not write a const buffer.
static hg_status check_mem(const hg_prog* p, uint32_t i, unsigned space) {
    const hg_instr* in = &p->instrs[i];
    bool writes = in->op != HG_OP_LD && in->op != HG_OP_LDV;
    if (space == HG_SPACE_GLOBAL) {
        if (in->mem >= p->nparams)
            return hg_validate_fail(p, i, "memory slot %u is out of range, expected a buffer "
                                    "parameter index below %u", in->mem, p->nparams);
        const hg_param_decl* d = &p->params[in->mem];
        if (d->kind != HG_PARAM_BUFFER)
            return hg_validate_fail(p, i, "parameter '%s' is a scalar, expected a buffer "
                                    "parameter as the memory slot", d->name);
        if (d->dtype != in->type)
            return hg_validate_fail(p, i, "buffer '%s' holds %s, expected %s to match the "
                                    "instruction type", d->name, tname(d->dtype), tname(in->type));
        if (writes && d->is_const)
            return hg_validate_fail(p, i, "%s into const buffer '%s', expected a buffer parameter "
                                    "declared without const",
                                    in->op == HG_OP_ATOM ? "atomic" : "store",
                                    d->name);
    } else {
        if (in->mem >= p->nshared)
            return hg_validate_fail(p, i, "memory slot %u is out of range, expected a shared "
                                    "array index below %u", in->mem, p->nshared);
        const hg_shared_decl* d = &p->shared[in->mem];
        if (d->dtype != in->type)
            return hg_validate_fail(p, i, "shared array '%s' holds %s, expected %s to match the "
                                    "instruction type", d->name, tname(d->dtype), tname(in->type));
    }
    return HG_OK;
}

// The register run of ldv (dst) / stv (src[1]): width registers of the instruction's type
// from the first (whose type check_role checked).
static hg_status check_run(const hg_prog* p, uint32_t i) {
    const hg_instr* in = &p->instrs[i];
    const hg_operand* o = in->op == HG_OP_LDV ? &in->dst : &in->src[1];
    const char* sn = in->op == HG_OP_LDV ? "dst" : "src[1]";
    uint32_t w = hg_vec_width(in->aux);
    if (o->kind != HG_OPERAND_REG)
        return hg_validate_fail(p, i, "%s is %s, expected the first of %u registers of type %s",
                                sn, kind_name(o->kind), w, tname(in->type));
    if ((uint64_t)o->index + w > p->nregs)
        return hg_validate_fail(p, i, "%s: the run of %u registers from '%s' (index %u) ends past "
                                "the last register (%u declared), expected %u registers of type "
                                "%s declared one after another", sn, w, p->regs[o->index].name,
                                o->index, p->nregs, w, tname(in->type));
    for (uint32_t k = 1; k < w; k++) {
        const hg_reg_decl* r = &p->regs[o->index + k];
        if (r->dtype != in->type)
            return hg_validate_fail(p, i, "%s: register '%s' (element %u of the run from '%s') "
                                    "has type %s, expected %u registers of type %s declared one "
                                    "after another", sn, r->name, k, p->regs[o->index].name,
                                    tname(r->dtype), w, tname(in->type));
    }
    return HG_OK;
}

// Type, aux and operand checks of one instruction (structure comes later).
static hg_status check_instr(const hg_prog* p, uint32_t i) {
    const hg_instr* in = &p->instrs[i];
    const hg_opinfo* info = hg_opinfo_of(in->op);
    char set[128];
    if (!info)
        return hg_validate_fail(p, i, "opcode %u is unknown, expected an hg_opcode below %d",
                                in->op, HG_OPCODE_COUNT);
    if (info->typed) {
        if (!hg_dtype_valid(in->type) || !(info->types & HG_TS(in->type)))
            return hg_validate_fail(p, i, "type %s (%u) is not allowed for `%s`, expected one of "
                                    "%s", tname(in->type), in->type, info->name,
                                    type_set(info->types, set, sizeof set));
    } else if (in->type != 0) {
        return hg_validate_fail(p, i, "`%s` takes no type but has type %u, expected 0",
                                info->name, in->type);
    }

    unsigned space = HG_SPACE_GLOBAL;
    switch (in->op) {
    case HG_OP_CMP:
        if (in->aux >= HG_CMP_COUNT)
            return hg_validate_fail(p, i, "comparison %u is unknown, expected eq ne lt le gt ge "
                                    "(0..%d)", in->aux, HG_CMP_COUNT - 1);
        break;
    case HG_OP_SHFL:
        if (in->aux >= HG_SHFL_COUNT)
            return hg_validate_fail(p, i, "shfl mode %u is unknown, expected bfly down up idx "
                                    "(0..%d)", in->aux, HG_SHFL_COUNT - 1);
        break;
    case HG_OP_CVT:
        if (!hg_dtype_valid(in->aux))
            return hg_validate_fail(p, i, "cvt source type %u is not a valid type, expected bool, "
                                    "an integer or a float type", in->aux);
        break;
    case HG_OP_LD:
    case HG_OP_ST:
    case HG_OP_FENCE:
        if (in->aux >= HG_SPACE_COUNT)
            return hg_validate_fail(p, i, "memory space %u is unknown, expected global (0) or "
                                    "shared (1)", in->aux);
        space = in->aux;
        break;
    case HG_OP_LDV:
    case HG_OP_STV: {
        unsigned w = hg_vec_width(in->aux), es = (unsigned)hg_dtype_size((hg_dtype)in->type);
        space = hg_vec_space(in->aux);
        if (space >= HG_SPACE_COUNT)
            return hg_validate_fail(p, i, "memory space %u is unknown, expected global (0) or "
                                    "shared (1)", space);
        if (hg_vec_log2(in->aux) < 1 || hg_vec_log2(in->aux) > 4 || w * es > HG_VEC_MAX_BYTES)
            return hg_validate_fail(p, i, "vector width 2^%u of %s (%u-byte elements) is not "
                                    "allowed, expected 2, 4, 8 or 16 elements of at most %u "
                                    "bytes in all", hg_vec_log2(in->aux), tname(in->type), es,
                                    HG_VEC_MAX_BYTES);
        break;
    }
    case HG_OP_ATOM: {
        unsigned aop = hg_atom_op(in->aux);
        space = hg_atom_space(in->aux);
        if (aop >= HG_ATOMIC_COUNT)
            return hg_validate_fail(p, i, "atomic operation %u is unknown, expected add min max "
                                    "exch cas (0..%d)", aop, HG_ATOMIC_COUNT - 1);
        if (space >= HG_SPACE_COUNT)
            return hg_validate_fail(p, i, "atomic memory space %u is unknown, expected global (0) "
                                    "or shared (1)", space);
        if (!(hg_atomic_types(aop) & HG_TS(in->type)))
            return hg_validate_fail(p, i, "atom.%s does not support type %s, expected one of %s",
                                    hg_atomic_name(aop), tname(in->type),
                                    type_set(hg_atomic_types(aop), set, sizeof set));
        break;
    }
    default:
        if (in->aux != 0)
            return hg_validate_fail(p, i, "`%s` has aux %u, expected 0", info->name, in->aux);
        break;
    }

    hg_status s;
    if (info->op_class == HG_CLASS_MEMORY) {
        if ((s = check_mem(p, i, space))) return s;
    } else if (in->mem != 0) {
        return hg_validate_fail(p, i, "`%s` has memory slot %u, expected 0 (only ld, st, ldv, "
                                "stv and atom address memory)", info->name, in->mem);
    }

    if ((s = check_role(p, i, -1, &in->dst, info->dst))) return s;
    for (int k = 0; k < 3; k++)
        if ((s = check_role(p, i, k, &in->src[k], info->src[k]))) return s;
    if (hg_op_is_vec(in->op)) return check_run(p, i);
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Structure: if/else/endif and loop/endloop nesting, break placement
// ---------------------------------------------------------------------------------------------

typedef struct frame {
    uint32_t at;       // the if or loop
    uint32_t else_at;  // its else (HG_VNONE if none yet)
} frame;

static hg_status check_structure(const hg_prog* p, hg_vstruct* st) {
    frame stack[HG_MAX_NESTING];
    int depth = 0;
    uint32_t loop = HG_VNONE;   // innermost open loop
    char t[256];
    for (uint32_t i = 0; i < p->ninstrs; i++) {
        const hg_instr* in = &p->instrs[i];
        st->link[i] = HG_VNONE;
        st->loop_of[i] = loop;
        frame* top = depth ? &stack[depth - 1] : NULL;
        bool top_if = top && p->instrs[top->at].op == HG_OP_IF;
        switch (in->op) {
        case HG_OP_IF:
        case HG_OP_LOOP:
            if (depth == HG_MAX_NESTING)
                return hg_validate_fail(p, i, "nesting depth %d exceeds the limit, expected at "
                                        "most %d nested if/loop blocks", depth + 1, HG_MAX_NESTING);
            stack[depth++] = (frame){i, HG_VNONE};
            if (in->op == HG_OP_LOOP) loop = i;
            break;
        case HG_OP_ELSE:
            if (!top)
                return hg_validate_fail(p, i, "`else` without an open `if`, expected `else` only "
                                        "between `if` and `endif`");
            if (!top_if)
                return hg_validate_fail(p, i, "`else` inside `loop` (instruction %u) that is "
                                        "still open, expected `endloop` first", top->at);
            if (top->else_at != HG_VNONE)
                return hg_validate_fail(p, i, "second `else` for `%s` (instruction %u; first "
                                        "`else` at instruction %u), expected at most one `else` "
                                        "per `if`", hg_instr_text(p, top->at, t, sizeof t),
                                        top->at, top->else_at);
            top->else_at = i;
            st->link[i] = top->at;
            break;
        case HG_OP_ENDIF:
            if (!top)
                return hg_validate_fail(p, i, "`endif` without an open `if`, expected `endif` only "
                                        "to close an `if`");
            if (!top_if)
                return hg_validate_fail(p, i, "`endif` closes `loop` (instruction %u), expected "
                                        "`endloop`", top->at);
            st->link[top->at] = i;
            depth--;
            break;
        case HG_OP_ENDLOOP:
            if (!top)
                return hg_validate_fail(p, i, "`endloop` without an open `loop`, expected "
                                        "`endloop` only to close a `loop`");
            if (top_if)
                return hg_validate_fail(p, i, "`endloop` closes `%s` (instruction %u), expected "
                                        "`endif`", hg_instr_text(p, top->at, t, sizeof t), top->at);
            st->link[top->at] = i;
            depth--;
            loop = st->loop_of[top->at];
            break;
        case HG_OP_BREAK:
            if (loop == HG_VNONE)
                return hg_validate_fail(p, i, "`break` outside any loop, expected `break` only "
                                        "between `loop` and `endloop`");
            break;
        default: break;
        }
    }
    if (depth) {
        const frame* f = &stack[depth - 1];
        bool is_if = p->instrs[f->at].op == HG_OP_IF;
        return hg_validate_fail(p, f->at, "`%s` is never closed, expected `%s` before the end of "
                                "the kernel", is_if ? "if" : "loop", is_if ? "endif" : "endloop");
    }
    return HG_OK;
}

hg_status hg_prog_validate(const hg_prog* p) {
    if (!p) return hg_error(HG_ERR_NULL_POINTER, "hg_prog_validate: program is NULL");
    hg_status s = check_decls(p);
    if (s) return s;
    for (uint32_t i = 0; i < p->ninstrs; i++)
        if ((s = check_instr(p, i))) return s;
    if (p->ninstrs == 0) return HG_OK;

    hg_vstruct st;
    st.link = malloc((size_t)p->ninstrs * sizeof *st.link);
    st.loop_of = malloc((size_t)p->ninstrs * sizeof *st.loop_of);
    if (!st.link || !st.loop_of) {
        s = hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory validating kernel '%s'", p->name);
    } else {
        s = check_structure(p, &st);
        if (!s) s = hg_validate_uniformity(p, &st);
    }
    free(st.link);
    free(st.loop_of);
    return s;
}
