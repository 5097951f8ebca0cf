// The Atlas ISA text assembler (docs/isa.md §2): text -> hg_prog. Structure only: everything the
// IR can represent is accepted and left to the validator (type rules, control-flow balance);
// everything it cannot represent is a HG_ERR_PARSE naming the line, column, what was found and
// what was expected.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "isa/program.h"
#include "isa/text_imm.h"
#include "isa/text_lexer.h"

// ---------------------------------------------------------------------------------------------
// Name table: every declared name -> (kind, index), so operands resolve in O(1).
// ---------------------------------------------------------------------------------------------
enum { NAME_REG = 1, NAME_PARAM = 2, NAME_SHARED = 3 };

typedef struct name_slot {
    uint32_t kind;   // 0 = empty
    uint32_t index;
} name_slot;

typedef struct parser {
    hg_lexer lx;
    hg_prog* prog;
    name_slot* names;
    uint32_t cap, count;
    int phase;        // last section seen: 0 none, 1 .kernel, 2 .param, 3 .shared, 4 .reg, 5 code
} parser;

enum { PH_NONE, PH_KERNEL, PH_PARAM, PH_SHARED, PH_REG, PH_CODE };

static uint64_t hash_name(const char* s, size_t n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
    return h;
}

static const char* slot_name(const parser* ps, name_slot e) {
    switch (e.kind) {
    case NAME_REG: return ps->prog->regs[e.index].name;
    case NAME_PARAM: return ps->prog->params[e.index].name;
    default: return ps->prog->shared[e.index].name;
    }
}

static bool name_eq(const char* decl, const char* s, size_t n) {
    return strncmp(decl, s, n) == 0 && decl[n] == 0;
}

// The slot of s[0..n), or an empty slot.
static name_slot lookup(const parser* ps, const char* s, size_t n) {
    name_slot none = {0, 0};
    if (!ps->cap) return none;
    uint32_t mask = ps->cap - 1;
    for (uint32_t i = (uint32_t)hash_name(s, n) & mask;; i = (i + 1) & mask) {
        name_slot e = ps->names[i];
        if (!e.kind) return none;
        if (name_eq(slot_name(ps, e), s, n)) return e;
    }
}

static bool table_put(parser* ps, name_slot e) {
    if ((ps->count + 1) * 2 > ps->cap) {
        uint32_t nc = ps->cap ? ps->cap * 2 : 64;
        name_slot* t = calloc(nc, sizeof *t);
        if (!t) return false;
        name_slot* old = ps->names;
        uint32_t oc = ps->cap;
        ps->names = t;
        ps->cap = nc;
        ps->count = 0;
        for (uint32_t i = 0; i < oc; i++)
            if (old[i].kind) table_put(ps, old[i]);
        free(old);
    }
    const char* nm = slot_name(ps, e);
    uint32_t mask = ps->cap - 1;
    uint32_t i = (uint32_t)hash_name(nm, strlen(nm)) & mask;
    while (ps->names[i].kind) i = (i + 1) & mask;
    ps->names[i] = e;
    ps->count++;
    return true;
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------
static hg_status perr_at(const parser* ps, uint32_t col, const char* fmt, ...) HG_PRINTF(3, 4);
static hg_status perr_at(const parser* ps, uint32_t col, const char* fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hg_error(HG_ERR_PARSE, "line %u, column %u: %s", ps->lx.line, col, msg);
}

// Describes a token for a message: 'text' (at most 40 bytes), "end of line" or the bad byte.
static const char* describe(const hg_tok* t, char* buf, size_t len) {
    if (t->kind == HG_TOK_END) snprintf(buf, len, "end of line");
    else if (t->kind == HG_TOK_BAD) snprintf(buf, len, "byte 0x%02x", (unsigned char)t->s[0]);
    else snprintf(buf, len, "'%.*s'%s", (int)(t->n > 40 ? 40 : t->n), t->s, t->n > 40 ? "..." : "");
    return buf;
}

static hg_status unexpected(const parser* ps, const hg_tok* t, const char* expected) {
    char d[64];
    return perr_at(ps, t->col, "unexpected %s, expected %s", describe(t, d, sizeof d), expected);
}

static hg_status expect_punct(parser* ps, char c, const char* expected) {
    hg_tok t = hg_lexer_next(&ps->lx);
    if (t.kind != HG_TOK_PUNCT || t.s[0] != c) return unexpected(ps, &t, expected);
    return HG_OK;
}

static hg_status expect_end(parser* ps) {
    hg_tok t = hg_lexer_next(&ps->lx);
    if (t.kind != HG_TOK_END) return unexpected(ps, &t, "end of line");
    return HG_OK;
}

// Turns a builder error (limits, out of memory) into a parse error at this line.
static hg_status builder_error(const parser* ps, hg_status s, uint32_t col) {
    if (s == HG_ERR_OUT_OF_MEMORY) return s;
    char msg[400];
    snprintf(msg, sizeof msg, "%s", hg_last_error());
    return perr_at(ps, col, "%s", msg);
}

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------
static int dtype_of(const hg_tok* t) {
    if (t->kind != HG_TOK_WORD) return -1;
    for (int d = 0; d < HG_DTYPE_COUNT; d++)
        if (hg_tok_is(t, hg_dtype_name((hg_dtype)d))) return d;
    return -1;
}

static hg_status expect_type(parser* ps, int* out) {
    hg_tok t = hg_lexer_next(&ps->lx);
    *out = dtype_of(&t);
    if (*out < 0)
        return unexpected(ps, &t, "a type (bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64)");
    return HG_OK;
}

// Reads a new name to declare into out (NUL-terminated).
static hg_status expect_new_name(parser* ps, const char* what, char out[HG_NAME_MAX], uint32_t* col) {
    hg_tok t = hg_lexer_next(&ps->lx);
    *col = t.col;
    char d[64];
    if (t.kind != HG_TOK_WORD) return unexpected(ps, &t, what);
    bool ident = t.n < HG_NAME_MAX;
    for (size_t i = 0; ident && i < t.n; i++) {
        char c = t.s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        ident = alpha || (i > 0 && c >= '0' && c <= '9');
    }
    if (!ident)
        return perr_at(ps, t.col, "%s is not a valid name, expected %s: an identifier "
                       "[A-Za-z_][A-Za-z0-9_]* of at most %d characters",
                       describe(&t, d, sizeof d), what, HG_NAME_MAX - 1);
    if (hg_text_is_keyword(t.s, t.n))
        return perr_at(ps, t.col, "%s is a reserved word, expected %s that is not a type name or "
                       "one of global shared const true false inf nan _",
                       describe(&t, d, sizeof d), what);
    if (ps->prog && lookup(ps, t.s, t.n).kind)
        return perr_at(ps, t.col, "%s is already declared, expected a new name for %s",
                       describe(&t, d, sizeof d), what);
    memcpy(out, t.s, t.n);
    out[t.n] = 0;
    return HG_OK;
}

static hg_status declare(parser* ps, uint32_t kind, uint32_t index) {
    name_slot e = {kind, index};
    if (!table_put(ps, e)) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory parsing a program");
    return HG_OK;
}

static hg_status parse_kernel(parser* ps) {
    char name[HG_NAME_MAX];
    uint32_t col;
    hg_status s = expect_new_name(ps, "the kernel name", name, &col);
    if (s) return s;
    if ((s = expect_end(ps))) return s;
    ps->prog = hg_prog_new(name);
    return ps->prog ? HG_OK : builder_error(ps, HG_ERR_OUT_OF_MEMORY, col);
}

// .param NAME: global [const] TYPE   |   .param NAME: TYPE
static hg_status parse_param(parser* ps) {
    char name[HG_NAME_MAX];
    uint32_t col;
    hg_status s = expect_new_name(ps, "a parameter name", name, &col);
    if (s || (s = expect_punct(ps, ':', "':' after the parameter name"))) return s;
    hg_tok t = hg_lexer_peek(&ps->lx);
    hg_param_kind kind = HG_PARAM_SCALAR;
    int is_const = 0, dtype;
    if (hg_tok_is(&t, "global")) {
        hg_lexer_next(&ps->lx);
        kind = HG_PARAM_BUFFER;
        t = hg_lexer_peek(&ps->lx);
        if (hg_tok_is(&t, "const")) {
            hg_lexer_next(&ps->lx);
            is_const = 1;
        }
    }
    if ((s = expect_type(ps, &dtype)) || (s = expect_end(ps))) return s;
    uint32_t index;
    s = hg_prog_add_param(ps->prog, name, kind, (hg_dtype)dtype, is_const, &index);
    if (s) return builder_error(ps, s, col);
    return declare(ps, NAME_PARAM, index);
}

// .shared NAME: TYPE[COUNT]   |   .shared NAME: TYPE[]
static hg_status parse_shared(parser* ps) {
    char name[HG_NAME_MAX];
    uint32_t col;
    int dtype;
    hg_status s = expect_new_name(ps, "a shared array name", name, &col);
    if (s || (s = expect_punct(ps, ':', "':' after the shared array name")) ||
        (s = expect_type(ps, &dtype)) || (s = expect_punct(ps, '[', "'[' after the element type")))
        return s;
    uint32_t count = 0;
    hg_tok t = hg_lexer_next(&ps->lx);
    if (t.kind == HG_TOK_WORD) {
        uint64_t v = 0;
        char why[256];
        if (!hg_text_parse_imm(t.s, t.n, HG_DTYPE_U32, &v, why, sizeof why))
            return perr_at(ps, t.col, "shared array size: %s", why);
        if (v == 0)
            return perr_at(ps, t.col, "shared array size 0, expected a positive element count or "
                           "[] for the unsized array");
        count = (uint32_t)v;
        t = hg_lexer_next(&ps->lx);
    }
    if (t.kind != HG_TOK_PUNCT || t.s[0] != ']')
        return unexpected(ps, &t, "']' (or an element count)");
    if ((s = expect_end(ps))) return s;
    uint32_t index;
    s = hg_prog_add_shared(ps->prog, name, (hg_dtype)dtype, count, &index);
    if (s) return builder_error(ps, s, col);
    return declare(ps, NAME_SHARED, index);
}

// .reg TYPE NAME[, NAME...]
static hg_status parse_reg(parser* ps) {
    int dtype;
    hg_status s = expect_type(ps, &dtype);
    if (s) return s;
    for (;;) {
        char name[HG_NAME_MAX];
        uint32_t col, index;
        if ((s = expect_new_name(ps, "a register name", name, &col))) return s;
        s = hg_prog_add_reg(ps->prog, name, (hg_dtype)dtype, &index);
        if (s) return builder_error(ps, s, col);
        if ((s = declare(ps, NAME_REG, index))) return s;
        hg_tok t = hg_lexer_next(&ps->lx);
        if (t.kind == HG_TOK_END) return HG_OK;
        if (t.kind != HG_TOK_PUNCT || t.s[0] != ',')
            return unexpected(ps, &t, "',' or the end of the line");
    }
}

static hg_status parse_directive(parser* ps, const hg_tok* t) {
    static const char* const names[] = {"", ".kernel", ".param", ".shared", ".reg"};
    int ph = hg_tok_is(t, ".kernel") ? PH_KERNEL : hg_tok_is(t, ".param") ? PH_PARAM
           : hg_tok_is(t, ".shared") ? PH_SHARED : hg_tok_is(t, ".reg") ? PH_REG : PH_NONE;
    char d[64];
    if (ph == PH_NONE)
        return perr_at(ps, t->col, "unknown directive %s, expected .kernel, .param, .shared or .reg",
                       describe(t, d, sizeof d));
    if (ps->phase == PH_CODE)
        return perr_at(ps, t->col, "declaration %s after instructions, expected all declarations "
                       "before the first instruction", describe(t, d, sizeof d));
    if (ph == PH_KERNEL && ps->phase != PH_NONE)
        return perr_at(ps, t->col, "second .kernel, expected one kernel per text");
    if (ph != PH_KERNEL && ps->phase == PH_NONE)
        return perr_at(ps, t->col, "%s before .kernel, expected '.kernel NAME' first",
                       describe(t, d, sizeof d));
    if (ph < ps->phase)
        return perr_at(ps, t->col, "%s after %s, expected declarations in the order .kernel, "
                       ".param, .shared, .reg", names[ph], names[ps->phase]);
    ps->phase = ph;
    switch (ph) {
    case PH_KERNEL: return parse_kernel(ps);
    case PH_PARAM: return parse_param(ps);
    case PH_SHARED: return parse_shared(ps);
    default: return parse_reg(ps);
    }
}

// ---------------------------------------------------------------------------------------------
// Instructions
// ---------------------------------------------------------------------------------------------
#define TYPE_INDEX (-2)   // an index operand: immediates are i64

// Parses one value operand whose immediates have type `dtype` (or TYPE_INDEX).
static hg_status parse_operand(parser* ps, int dtype, bool allow_none, hg_operand* out) {
    hg_tok t = hg_lexer_next(&ps->lx);
    char d[64];
    memset(out, 0, sizeof *out);
    if (t.kind != HG_TOK_WORD)
        return unexpected(ps, &t, "an operand (register, scalar parameter, %special or immediate)");
    char c = t.s[0];
    if (c == '%') {
        for (unsigned k = 0; k < HG_SREG_COUNT; k++)
            if (hg_tok_is(&t, hg_special_name(k))) {
                *out = hg_sreg((hg_special)k);
                return HG_OK;
            }
        return perr_at(ps, t.col, "unknown special register %s, expected %%tid, %%ntid, %%ctaid, "
                       "%%nctaid or %%gid with .x, .y or .z", describe(&t, d, sizeof d));
    }
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (alpha && hg_tok_is(&t, "_")) {
        if (allow_none) {
            *out = hg_none();
            return HG_OK;
        }
        return perr_at(ps, t.col, "'_' here, expected an operand ('_' only discards an atom result)");
    }
    bool literal_word = hg_tok_is(&t, "true") || hg_tok_is(&t, "false") || hg_tok_is(&t, "inf") ||
                        hg_tok_is(&t, "nan");
    if (alpha && !literal_word) {
        name_slot e = lookup(ps, t.s, t.n);
        if (e.kind == NAME_REG) {
            *out = hg_reg(e.index);
            return HG_OK;
        }
        if (e.kind == NAME_PARAM && ps->prog->params[e.index].kind == HG_PARAM_SCALAR) {
            *out = hg_param(e.index);
            return HG_OK;
        }
        if (e.kind == NAME_PARAM)
            return perr_at(ps, t.col, "%s is a buffer parameter, expected a register, scalar "
                           "parameter or immediate (buffers are read with ld: %.*s[i])",
                           describe(&t, d, sizeof d), (int)(t.n > 40 ? 40 : t.n), t.s);
        if (e.kind == NAME_SHARED)
            return perr_at(ps, t.col, "%s is a shared array, expected a register, scalar parameter "
                           "or immediate (arrays are read with ld.shared)", describe(&t, d, sizeof d));
        return perr_at(ps, t.col, "unknown name %s, expected a declared register or scalar parameter",
                       describe(&t, d, sizeof d));
    }
    char why[320];
    uint64_t bits;
    int type = dtype == TYPE_INDEX ? HG_DTYPE_I64 : dtype;
    if (!hg_text_parse_imm(t.s, t.n, type, &bits, why, sizeof why))
        return perr_at(ps, t.col, "%s", why);
    *out = hg_imm_bits(bits);
    return HG_OK;
}

// slot[index]: the slot names a buffer parameter (global) or a shared array (shared).
static hg_status parse_mem(parser* ps, unsigned space, hg_instr* in) {
    hg_tok t = hg_lexer_next(&ps->lx);
    char d[64];
    if (t.kind != HG_TOK_WORD) return unexpected(ps, &t, "a memory operand slot[index]");
    name_slot e = lookup(ps, t.s, t.n);
    if (space == HG_SPACE_GLOBAL) {
        if (e.kind != NAME_PARAM || ps->prog->params[e.index].kind != HG_PARAM_BUFFER)
            return perr_at(ps, t.col, "%s is %s, expected a buffer parameter for a global access",
                           describe(&t, d, sizeof d),
                           e.kind == NAME_PARAM ? "a scalar parameter" : e.kind == NAME_REG
                           ? "a register" : e.kind == NAME_SHARED ? "a shared array" : "not declared");
    } else if (e.kind != NAME_SHARED) {
        return perr_at(ps, t.col, "%s is %s, expected a shared array for a shared access",
                       describe(&t, d, sizeof d),
                       e.kind == NAME_PARAM ? "a parameter" : e.kind == NAME_REG ? "a register"
                       : "not declared");
    }
    in->mem = e.index;
    hg_status s = expect_punct(ps, '[', "'[' after the memory slot");
    if (s || (s = parse_operand(ps, TYPE_INDEX, false, &in->src[0]))) return s;
    return expect_punct(ps, ']', "']' after the index");
}

static hg_status expect_comma(parser* ps) {
    return expect_punct(ps, ',', "',' and another operand");
}

// Modifier words of a mnemonic (op.a.b.c), each with its column.
typedef struct mnemonic {
    hg_tok part[5];
    int n;
} mnemonic;

static hg_status split_mnemonic(parser* ps, const hg_tok* t, mnemonic* m) {
    m->n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= t->n; i++) {
        if (i < t->n && t->s[i] != '.') continue;
        if (m->n == 5 || i == start)
            return perr_at(ps, t->col, "malformed mnemonic '%.*s', expected op[.modifier...].type",
                           (int)(t->n > 40 ? 40 : t->n), t->s);
        hg_tok* p = &m->part[m->n++];
        p->kind = HG_TOK_WORD;
        p->s = t->s + start;
        p->n = i - start;
        p->col = t->col + (uint32_t)start;
        start = i + 1;
    }
    return HG_OK;
}

static int find_in(const hg_tok* t, const char* (*name_of)(unsigned), unsigned count) {
    for (unsigned k = 0; k < count; k++)
        if (hg_tok_is(t, name_of(k))) return (int)k;
    return -1;
}

// Decodes the mnemonic's modifiers into op/type/aux, checking their number and spelling.
static hg_status decode_mnemonic(parser* ps, const mnemonic* m, hg_instr* in) {
    const hg_opinfo* info = hg_opinfo_of(in->op);
    const char* form;
    int want;
    switch (in->op) {
    case HG_OP_CMP: form = "cmp.CC.TYPE (CC: eq ne lt le gt ge)"; want = 3; break;
    case HG_OP_CVT: form = "cvt.DEST_TYPE.SOURCE_TYPE"; want = 3; break;
    case HG_OP_LD: form = "ld.SPACE.TYPE (SPACE: global or shared)"; want = 3; break;
    case HG_OP_ST: form = "st.SPACE.TYPE (SPACE: global or shared)"; want = 3; break;
    case HG_OP_ATOM: form = "atom.SPACE.OP.TYPE (OP: add min max exch cas)"; want = 4; break;
    case HG_OP_LDV: form = "ldv.SPACE.vWIDTH.TYPE (WIDTH: 2, 4, 8 or 16)"; want = 4; break;
    case HG_OP_STV: form = "stv.SPACE.vWIDTH.TYPE (WIDTH: 2, 4, 8 or 16)"; want = 4; break;
    case HG_OP_FENCE: form = "fence.global or fence.shared"; want = 2; break;
    case HG_OP_SHFL: form = "shfl.MODE.TYPE (MODE: bfly down up idx)"; want = 3; break;
    default: form = info->typed ? "OP.TYPE" : "the bare mnemonic"; want = info->typed ? 2 : 1;
    }
    if (m->n != want) {
        const hg_tok* at = m->n > want ? &m->part[want] : &m->part[m->n - 1];
        return perr_at(ps, at->col, "'%s' with %d modifier%s, expected %s", info->name, m->n - 1,
                       m->n == 2 ? "" : "s", form);
    }
    char d[64];
    int next = 1;
    if (in->op == HG_OP_LD || in->op == HG_OP_ST || in->op == HG_OP_ATOM || in->op == HG_OP_FENCE ||
        hg_op_is_vec(in->op)) {
        int sp = find_in(&m->part[next], hg_space_name, HG_SPACE_COUNT);
        if (sp < 0)
            return perr_at(ps, m->part[next].col, "unknown memory space %s, expected global or shared",
                           describe(&m->part[next], d, sizeof d));
        in->aux = (uint8_t)sp;
        next++;
    }
    if (in->op == HG_OP_ATOM) {
        int aop = find_in(&m->part[next], hg_atomic_name, HG_ATOMIC_COUNT);
        if (aop < 0)
            return perr_at(ps, m->part[next].col, "unknown atomic operation %s, expected add, min, "
                           "max, exch or cas", describe(&m->part[next], d, sizeof d));
        in->aux = hg_atom_aux((unsigned)aop, in->aux);
        next++;
    }
    if (in->op == HG_OP_SHFL) {
        int md = find_in(&m->part[next], hg_shfl_name, HG_SHFL_COUNT);
        if (md < 0)
            return perr_at(ps, m->part[next].col, "unknown shfl mode %s, expected bfly, down, up "
                           "or idx", describe(&m->part[next], d, sizeof d));
        in->aux = (uint8_t)md;
        next++;
    }
    if (hg_op_is_vec(in->op)) {
        static const char* const widths[] = {"v2", "v4", "v8", "v16"};
        int lg = 0;
        for (int k = 0; k < 4 && !lg; k++)
            if (hg_tok_is(&m->part[next], widths[k])) lg = k + 1;
        if (!lg)
            return perr_at(ps, m->part[next].col, "unknown vector width %s, expected v2, v4, v8 "
                           "or v16", describe(&m->part[next], d, sizeof d));
        in->aux = (uint8_t)(in->aux | lg << 4);
        next++;
    }
    if (in->op == HG_OP_CMP) {
        int cc = find_in(&m->part[next], hg_cmp_name, HG_CMP_COUNT);
        if (cc < 0)
            return perr_at(ps, m->part[next].col, "unknown comparison %s, expected eq, ne, lt, le, "
                           "gt or ge", describe(&m->part[next], d, sizeof d));
        in->aux = (uint8_t)cc;
        next++;
    }
    if (info->typed) {
        int ty = dtype_of(&m->part[next]);
        if (ty < 0)
            return perr_at(ps, m->part[next].col, "unknown type %s, expected bool i8 i16 i32 i64 u8 "
                           "u16 u32 u64 f16 bf16 f32 f64", describe(&m->part[next], d, sizeof d));
        in->type = (uint8_t)ty;
        next++;
    }
    if (in->op == HG_OP_CVT) {
        int st = dtype_of(&m->part[next]);
        if (st < 0)
            return perr_at(ps, m->part[next].col, "unknown source type %s, expected bool i8 i16 i32 "
                           "i64 u8 u16 u32 u64 f16 bf16 f32 f64", describe(&m->part[next], d, sizeof d));
        in->aux = (uint8_t)st;
    }
    return HG_OK;
}

// The immediate type of an operand slot with this role.
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

static hg_status parse_operands(parser* ps, hg_instr* in) {
    const hg_opinfo* info = hg_opinfo_of(in->op);
    hg_status s = HG_OK;
    switch (in->op) {
    case HG_OP_LD:
    case HG_OP_LDV:
        if ((s = parse_operand(ps, in->type, false, &in->dst)) || (s = expect_comma(ps)))
            return s;
        return parse_mem(ps, hg_mem_space(in), in);
    case HG_OP_ST:
    case HG_OP_STV:
        if ((s = parse_mem(ps, hg_mem_space(in), in)) || (s = expect_comma(ps))) return s;
        return parse_operand(ps, in->type, false, &in->src[1]);
    case HG_OP_ATOM:
        if ((s = parse_operand(ps, in->type, true, &in->dst)) || (s = expect_comma(ps)) ||
            (s = parse_mem(ps, hg_atom_space(in->aux), in)) || (s = expect_comma(ps)) ||
            (s = parse_operand(ps, in->type, false, &in->src[1])))
            return s;
        if (hg_atom_op(in->aux) == HG_ATOMIC_CAS &&
            ((s = expect_comma(ps)) || (s = parse_operand(ps, in->type, false, &in->src[2]))))
            return s;
        return HG_OK;
    default: break;
    }
    bool first = true;
    if (info->dst != HG_ROLE_NONE) {
        if ((s = parse_operand(ps, role_type(in, info->dst), false, &in->dst))) return s;
        first = false;
    }
    for (int k = 0; k < 3; k++) {
        unsigned role = info->src[k];
        if (role == HG_ROLE_NONE) continue;
        if (role == HG_ROLE_OPT_BOOL && hg_lexer_peek(&ps->lx).kind == HG_TOK_END) break;
        if (!first && (s = expect_comma(ps))) return s;
        first = false;
        if ((s = parse_operand(ps, role_type(in, role), false, &in->src[k]))) return s;
    }
    return HG_OK;
}

static hg_status parse_instr(parser* ps, const hg_tok* t) {
    mnemonic m;
    hg_status s = split_mnemonic(ps, t, &m);
    if (s) return s;
    hg_instr in;
    memset(&in, 0, sizeof in);
    int op = -1;
    for (unsigned k = 0; k < HG_OPCODE_COUNT && op < 0; k++)
        if (hg_tok_is(&m.part[0], hg_opinfo_table[k].name)) op = (int)k;
    char d[64];
    if (op < 0)
        return perr_at(ps, t->col, "unknown instruction %s, expected a mnemonic such as mov, add, "
                       "ld, st, if or loop (docs/isa.md §5)", describe(&m.part[0], d, sizeof d));
    in.op = (uint16_t)op;
    if ((s = decode_mnemonic(ps, &m, &in)) || (s = parse_operands(ps, &in))) return s;
    hg_tok end = hg_lexer_next(&ps->lx);
    if (end.kind != HG_TOK_END)
        return unexpected(ps, &end, in.op == HG_OP_ATOM && hg_atom_op(in.aux) != HG_ATOMIC_CAS
                          ? "end of line (only atom cas takes a fourth operand)"
                          : "end of line (too many operands)");
    s = hg_prog_emit(ps->prog, &in);
    return s ? builder_error(ps, s, t->col) : HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Entry point
// ---------------------------------------------------------------------------------------------
static hg_status parse_all(parser* ps) {
    while (hg_lexer_next_line(&ps->lx)) {
        hg_tok t = hg_lexer_next(&ps->lx);
        if (t.kind == HG_TOK_END) continue;
        if (t.kind != HG_TOK_WORD) {
            return unexpected(ps, &t, ps->phase == PH_NONE ? "'.kernel NAME'"
                              : "a declaration or an instruction mnemonic");
        }
        hg_status s;
        if (t.s[0] == '.') {
            s = parse_directive(ps, &t);
        } else if (ps->phase == PH_NONE) {
            char d[64];
            s = perr_at(ps, t.col, "%s before .kernel, expected '.kernel NAME' first",
                        describe(&t, d, sizeof d));
        } else {
            ps->phase = PH_CODE;
            s = parse_instr(ps, &t);
        }
        if (s) return s;
    }
    if (!ps->prog)
        return hg_error(HG_ERR_PARSE, "line %u, column 1: end of text without a kernel, expected "
                        "'.kernel NAME' as the first declaration", ps->lx.line ? ps->lx.line : 1);
    return HG_OK;
}

hg_status hg_prog_parse(const char* text, size_t len, hg_prog** out) {
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "hg_prog_parse: argument 'out' is NULL");
    if (!text && len)
        return hg_error(HG_ERR_NULL_POINTER, "hg_prog_parse: argument 'text' is NULL");
    parser ps;
    memset(&ps, 0, sizeof ps);
    hg_lexer_init(&ps.lx, text, len);
    hg_status s = parse_all(&ps);
    free(ps.names);
    if (s) {
        hg_prog_free(ps.prog);
        return s;
    }
    *out = ps.prog;
    return HG_OK;
}
