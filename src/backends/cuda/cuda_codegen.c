// Atlas ISA -> CUDA C (see cuda_codegen.h). One C statement (or block bracket) per
// instruction; structured control flow maps to if/else/for(;;)/break, so the CUDA compiler sees
// ordinary code and the hardware's own divergence handling gives the ISA's SIMT semantics.
// Registers are locals of their value type (f16/bf16 registers are floats holding values
// already rounded to the type, as on the CPU); memory holds the storage type (bool: a byte,
// f16/bf16: their 16-bit patterns). Every memory access is checked against its bound range.
#include "backends/cuda/cuda_codegen.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/error.h"
#include "base/strbuf.h"

// ---- types --------------------------------------------------------------------------------------
// Type of a register / operand value in the generated code.
static const char* vtype(unsigned t) {
    switch (t) {
    case HG_DTYPE_BOOL: return "bool";
    case HG_DTYPE_I8: return "hg_i8";
    case HG_DTYPE_I16: return "hg_i16";
    case HG_DTYPE_I32: return "hg_i32";
    case HG_DTYPE_I64: return "hg_i64";
    case HG_DTYPE_U8: return "hg_u8";
    case HG_DTYPE_U16: return "hg_u16";
    case HG_DTYPE_U32: return "hg_u32";
    case HG_DTYPE_U64: return "hg_u64";
    case HG_DTYPE_F64: return "double";
    default: return "float";   // f16, bf16, f32
    }
}

// Type of an element in memory.
static const char* mtype(unsigned t) {
    switch (t) {
    case HG_DTYPE_BOOL: return "hg_u8";
    case HG_DTYPE_F16:
    case HG_DTYPE_BF16: return "hg_u16";
    default: return vtype(t);
    }
}

static int is_float(unsigned t) {
    return t == HG_DTYPE_F16 || t == HG_DTYPE_BF16 || t == HG_DTYPE_F32 || t == HG_DTYPE_F64;
}
static int is_signed(unsigned t) {
    return t == HG_DTYPE_I8 || t == HG_DTYPE_I16 || t == HG_DTYPE_I32 || t == HG_DTYPE_I64;
}
static int bits_of(unsigned t) { return (int)hg_dtype_size((hg_dtype)t) * 8; }

// Unsigned type of the same width, and the unsigned type arithmetic is done in (no promotion
// to signed int, so overflow wraps).
static const char* utype(unsigned t) {
    switch (bits_of(t)) {
    case 8: return "hg_u8";
    case 16: return "hg_u16";
    case 32: return "hg_u32";
    default: return "hg_u64";
    }
}
static const char* wtype(unsigned t) { return bits_of(t) == 64 ? "hg_u64" : "hg_u32"; }

// The rounding applied to f32 results for the register type ("" for f32/f64).
static const char* rnd(unsigned t) {
    return t == HG_DTYPE_F16 ? "hg_rf16" : t == HG_DTYPE_BF16 ? "hg_rbf16" : "";
}

// ---- operands -----------------------------------------------------------------------------------
typedef struct gen {
    const hg_prog* p;
    hg_sb b;
    int depth;         // indentation
    uint32_t instr;    // instruction being generated
} gen;

static void indent(gen* g) { hg_sb_put(&g->b, "%*s", 4 * (g->depth + 1), ""); }

static const char* sreg_expr(unsigned s) {
    static const char* const e[HG_SREG_COUNT] = {
        "(hg_u32)threadIdx.x", "(hg_u32)threadIdx.y", "(hg_u32)threadIdx.z",
        "(hg_u32)blockDim.x", "(hg_u32)blockDim.y", "(hg_u32)blockDim.z",
        "(hg_u32)blockIdx.x", "(hg_u32)blockIdx.y", "(hg_u32)blockIdx.z",
        "(hg_u32)gridDim.x", "(hg_u32)gridDim.y", "(hg_u32)gridDim.z",
        "((hg_u32)blockIdx.x * (hg_u32)blockDim.x + (hg_u32)threadIdx.x)",
        "((hg_u32)blockIdx.y * (hg_u32)blockDim.y + (hg_u32)threadIdx.y)",
        "((hg_u32)blockIdx.z * (hg_u32)blockDim.z + (hg_u32)threadIdx.z)",
    };
    _Static_assert(HG_SREG_COUNT == 15, "one expression per special register");
    return s < HG_SREG_COUNT ? e[s] : "0u";
}

// An immediate of type t as an exact C expression (into buf).
static const char* imm_expr(unsigned t, uint64_t bits, char* buf, size_t len) {
    switch (t) {
    case HG_DTYPE_BOOL: snprintf(buf, len, "%s", bits & 1 ? "true" : "false"); break;
    case HG_DTYPE_F32: snprintf(buf, len, "hg_u2f(0x%08" PRIx32 "u)", (uint32_t)bits); break;
    case HG_DTYPE_F64: snprintf(buf, len, "hg_u2d(0x%016" PRIx64 "ull)", bits); break;
    case HG_DTYPE_F16: {
        float f = hg_f16_to_f32((uint16_t)bits);
        uint32_t u;
        memcpy(&u, &f, 4);
        snprintf(buf, len, "hg_u2f(0x%08" PRIx32 "u)", u);
        break;
    }
    case HG_DTYPE_BF16: snprintf(buf, len, "hg_u2f(0x%08" PRIx32 "u)", (uint32_t)(bits & 0xffff) << 16); break;
    default: {
        int w = bits_of(t);
        uint64_t m = w == 64 ? bits : bits & ((UINT64_C(1) << w) - 1);
        snprintf(buf, len, "((%s)0x%" PRIx64 "ull)", vtype(t), m);
        break;
    }
    }
    return buf;
}

// A value operand read as type t (the validator checked the operand's type). buf holds at
// least 96 bytes.
static const char* opnd(const gen* g, const hg_operand* o, unsigned t, char* buf, size_t len) {
    (void)g;
    switch (o->kind) {
    case HG_OPERAND_REG: snprintf(buf, len, "r%" PRIu32, o->index); return buf;
    case HG_OPERAND_PARAM: snprintf(buf, len, "s%" PRIu32, o->index); return buf;
    case HG_OPERAND_SPECIAL: return sreg_expr(o->index);
    case HG_OPERAND_IMM: return imm_expr(t, o->bits, buf, len);
    default: return "0";
    }
}

// The type an index operand has (immediates are i64, as on the CPU).
static unsigned index_type(const gen* g, const hg_operand* o) {
    switch (o->kind) {
    case HG_OPERAND_REG: return g->p->regs[o->index].dtype;
    case HG_OPERAND_PARAM: return g->p->params[o->index].dtype;
    case HG_OPERAND_SPECIAL: return HG_DTYPE_U32;
    default: return HG_DTYPE_I64;
    }
}

// ---- instructions -------------------------------------------------------------------------------
#define OPND(k, t) opnd(g, &in->src[k], (t), ob[k], sizeof ob[k])

static void emit_arith(gen* g, const hg_instr* in) {
    unsigned t = in->type;
    char ob[3][96];
    uint32_t d = in->dst.index;
    const char *a = OPND(0, t), *b = in->src[1].kind ? OPND(1, t) : "",
               *c = in->src[2].kind ? OPND(2, t) : "";
    const char* vt = vtype(t);
    const char* w = wtype(t);
    const char* r = rnd(t);
    int fl = is_float(t), f64 = t == HG_DTYPE_F64;
    indent(g);
    switch (in->op) {
    case HG_OP_MOV: hg_sb_put(&g->b, "r%u = %s;\n", d, a); return;
    case HG_OP_ADD:
    case HG_OP_SUB:
    case HG_OP_MUL: {
        char o = in->op == HG_OP_ADD ? '+' : in->op == HG_OP_SUB ? '-' : '*';
        if (fl) hg_sb_put(&g->b, "r%u = %s(%s %c %s);\n", d, r, a, o, b);
        else hg_sb_put(&g->b, "r%u = (%s)((%s)%s %c (%s)%s);\n", d, vt, w, a, o, w, b);
        return;
    }
    case HG_OP_DIV:
        if (fl) hg_sb_put(&g->b, "r%u = %s(%s / %s);\n", d, r, a, b);
        else if (is_signed(t)) hg_sb_put(&g->b, "r%u = hg_sdiv<%s, %s>(%s, %s);\n", d, vt, w, a, b);
        else hg_sb_put(&g->b, "r%u = hg_udiv<%s>(%s, %s);\n", d, vt, a, b);
        return;
    case HG_OP_REM:
        if (fl) hg_sb_put(&g->b, "r%u = %s(%s(%s, %s));\n", d, r, f64 ? "fmod" : "fmodf", a, b);
        else if (is_signed(t)) hg_sb_put(&g->b, "r%u = hg_srem<%s>(%s, %s);\n", d, vt, a, b);
        else hg_sb_put(&g->b, "r%u = hg_urem<%s>(%s, %s);\n", d, vt, a, b);
        return;
    case HG_OP_MIN:
    case HG_OP_MAX: {
        int mx = in->op == HG_OP_MAX;
        if (fl) hg_sb_put(&g->b, "r%u = hg_f%s%c(%s, %s);\n", d, mx ? "max" : "min", f64 ? 'd' : 'f', a, b);
        else hg_sb_put(&g->b, "r%u = %s %c %s ? %s : %s;\n", d, a, mx ? '>' : '<', b, a, b);
        return;
    }
    case HG_OP_ABS:
        if (fl) hg_sb_put(&g->b, "r%u = hg_fabs%c_bits(%s);\n", d, f64 ? 'd' : 'f', a);
        else if (is_signed(t)) hg_sb_put(&g->b, "r%u = %s < 0 ? (%s)((%s)0 - (%s)%s) : %s;\n", d, a, vt, w, w, a, a);
        else hg_sb_put(&g->b, "r%u = %s;\n", d, a);
        return;
    case HG_OP_NEG:
        if (fl) hg_sb_put(&g->b, "r%u = hg_fneg%c_bits(%s);\n", d, f64 ? 'd' : 'f', a);
        else hg_sb_put(&g->b, "r%u = (%s)((%s)0 - (%s)%s);\n", d, vt, w, w, a);
        return;
    case HG_OP_FMA:
        if (fl) hg_sb_put(&g->b, "r%u = %s(%s(%s, %s, %s));\n", d, r, f64 ? "fma" : "fmaf", a, b, c);
        else hg_sb_put(&g->b, "r%u = (%s)((%s)%s * (%s)%s + (%s)%s);\n", d, vt, w, a, w, b, w, c);
        return;
    case HG_OP_AND:
    case HG_OP_OR:
    case HG_OP_XOR: {
        char o = in->op == HG_OP_AND ? '&' : in->op == HG_OP_OR ? '|' : '^';
        if (t == HG_DTYPE_BOOL) hg_sb_put(&g->b, "r%u = (bool)((int)%s %c (int)%s);\n", d, a, o, b);
        else hg_sb_put(&g->b, "r%u = (%s)(%s %c %s);\n", d, vt, a, o, b);
        return;
    }
    case HG_OP_NOT:
        if (t == HG_DTYPE_BOOL) hg_sb_put(&g->b, "r%u = !%s;\n", d, a);
        else hg_sb_put(&g->b, "r%u = (%s)~%s;\n", d, vt, a);
        return;
    case HG_OP_SHL:
        hg_sb_put(&g->b, "r%u = hg_shl<%s, %s, %s, %d>(%s, %s);\n", d, vt, utype(t), w, bits_of(t), a, b);
        return;
    case HG_OP_SHR:
        if (is_signed(t))
            hg_sb_put(&g->b, "r%u = hg_sshr<%s, %s, %d>(%s, %s);\n", d, vt, utype(t), bits_of(t), a, b);
        else hg_sb_put(&g->b, "r%u = hg_ushr<%s, %d>(%s, %s);\n", d, vt, bits_of(t), a, b);
        return;
    default: hg_sb_put(&g->b, "/* unhandled arithmetic op %u */\n", (unsigned)in->op); return;
    }
}

static void emit_cmp(gen* g, const hg_instr* in) {
    static const char* const ops[HG_CMP_COUNT] = {"==", "!=", "<", "<=", ">", ">="};
    char ob[3][96];
    indent(g);
    hg_sb_put(&g->b, "r%u = (%s %s %s);\n", in->dst.index, OPND(0, in->type),
           in->aux < HG_CMP_COUNT ? ops[in->aux] : "==", OPND(1, in->type));
}

static void emit_sel(gen* g, const hg_instr* in) {
    char ob[3][96];
    indent(g);
    hg_sb_put(&g->b, "r%u = %s ? %s : %s;\n", in->dst.index, OPND(0, HG_DTYPE_BOOL),
           OPND(1, in->type), OPND(2, in->type));
}

// Source kinds of conversions, as the CPU's kernels_cvt.c: B bool, SI 8/16-bit int, BI 32/64-bit
// signed, BU 32/64-bit unsigned, H f16, BH bf16, F f32, D f64.
enum { SK_B, SK_SI, SK_BI, SK_BU, SK_H, SK_BH, SK_F, SK_D };
static int src_kind(unsigned s) {
    switch (s) {
    case HG_DTYPE_BOOL: return SK_B;
    case HG_DTYPE_I8: case HG_DTYPE_I16: case HG_DTYPE_U8: case HG_DTYPE_U16: return SK_SI;
    case HG_DTYPE_I32: case HG_DTYPE_I64: return SK_BI;
    case HG_DTYPE_U32: case HG_DTYPE_U64: return SK_BU;
    case HG_DTYPE_F16: return SK_H;
    case HG_DTYPE_BF16: return SK_BH;
    case HG_DTYPE_F32: return SK_F;
    default: return SK_D;
    }
}

static void emit_cvt(gen* g, const hg_instr* in) {
    unsigned dt = in->type, st = in->aux;
    char ob[3][96];
    const char* x = OPND(0, st);
    int sk = src_kind(st);
    uint32_t d = in->dst.index;
    indent(g);
    if (dt == HG_DTYPE_BOOL) {
        hg_sb_put(&g->b, "r%u = (%s != 0);\n", d, x);
        return;
    }
    if (!is_float(dt)) {   // integers
        if (sk == SK_H || sk == SK_BH || sk == SK_F || sk == SK_D) {
            char sfx = sk == SK_D ? 'd' : 'f';
            static const char* const names[] = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"};
            int k = dt == HG_DTYPE_I8 ? 0 : dt == HG_DTYPE_I16 ? 1 : dt == HG_DTYPE_I32 ? 2
                  : dt == HG_DTYPE_I64 ? 3 : dt == HG_DTYPE_U8 ? 4 : dt == HG_DTYPE_U16 ? 5
                  : dt == HG_DTYPE_U32 ? 6 : 7;
            hg_sb_put(&g->b, "r%u = hg_sat_%s_%c(%s);\n", d, names[k], sfx, x);
        } else {
            hg_sb_put(&g->b, "r%u = (%s)%s;\n", d, vtype(dt), x);
        }
        return;
    }
    if (dt == HG_DTYPE_F32) {
        hg_sb_put(&g->b, "r%u = (float)%s;\n", d, x);
        return;
    }
    if (dt == HG_DTYPE_F64) {
        hg_sb_put(&g->b, "r%u = (double)%s;\n", d, x);
        return;
    }
    if (dt == HG_DTYPE_F16) {
        switch (sk) {
        case SK_B: hg_sb_put(&g->b, "r%u = (float)%s;\n", d, x); return;
        case SK_H: hg_sb_put(&g->b, "r%u = %s;\n", d, x); return;
        case SK_D: hg_sb_put(&g->b, "r%u = hg_rf16(hg_d_rto_f32(%s));\n", d, x); return;
        case SK_BH: case SK_F: hg_sb_put(&g->b, "r%u = hg_rf16(%s);\n", d, x); return;
        default: hg_sb_put(&g->b, "r%u = hg_rf16((float)%s);\n", d, x); return;
        }
    }
    switch (sk) {   // bf16
    case SK_B: hg_sb_put(&g->b, "r%u = (float)%s;\n", d, x); return;
    case SK_BH: hg_sb_put(&g->b, "r%u = %s;\n", d, x); return;
    case SK_SI: hg_sb_put(&g->b, "r%u = hg_rbf16((float)%s);\n", d, x); return;
    case SK_BI: hg_sb_put(&g->b, "r%u = hg_rbf16(hg_i64_rto_f32((hg_i64)%s));\n", d, x); return;
    case SK_BU: hg_sb_put(&g->b, "r%u = hg_rbf16(hg_u64_rto_f32((hg_u64)%s));\n", d, x); return;
    case SK_D: hg_sb_put(&g->b, "r%u = hg_rbf16(hg_d_rto_f32(%s));\n", d, x); return;
    default: hg_sb_put(&g->b, "r%u = hg_rbf16(%s);\n", d, x); return;
    }
}

static void emit_math(gen* g, const hg_instr* in) {
    unsigned t = in->type;
    char ob[3][96];
    const char* a = OPND(0, t);
    int f64 = t == HG_DTYPE_F64;
    const char* fn;
    switch (in->op) {
    case HG_OP_SQRT: fn = f64 ? "sqrt" : "sqrtf"; break;
    case HG_OP_RSQRT: fn = f64 ? "hg_rsqrtd" : "hg_rsqrtf"; break;
    case HG_OP_EXP: fn = f64 ? "exp" : "expf"; break;
    case HG_OP_EXP2: fn = f64 ? "exp2" : "hg_exp2f"; break;
    case HG_OP_LOG: fn = f64 ? "log" : "logf"; break;
    case HG_OP_LOG2: fn = f64 ? "log2" : "log2f"; break;
    case HG_OP_SIN: fn = f64 ? "sin" : "sinf"; break;
    case HG_OP_COS: fn = f64 ? "cos" : "cosf"; break;
    case HG_OP_TANH: fn = f64 ? "tanh" : "tanhf"; break;
    case HG_OP_SIGMOID: fn = f64 ? "hg_sigmoidd" : "hg_sigmoidf"; break;
    case HG_OP_ERF: fn = f64 ? "erf" : "erff"; break;
    case HG_OP_FLOOR: fn = f64 ? "floor" : "floorf"; break;
    case HG_OP_CEIL: fn = f64 ? "ceil" : "ceilf"; break;
    case HG_OP_ROUND: fn = f64 ? "rint" : "rintf"; break;
    case HG_OP_GELU: fn = f64 ? "hg_gelud" : "hg_geluf"; break;
    case HG_OP_GELU_ERF: fn = f64 ? "hg_gelu_erfd" : "hg_gelu_erff"; break;
    default: fn = f64 ? "trunc" : "truncf"; break;
    }
    indent(g);
    hg_sb_put(&g->b, "r%u = %s(%s(%s));\n", in->dst.index, rnd(t), fn, a);
}

// The expression of memory slot `mem` in space `space` and its element count.
static void slot_names(const gen* g, unsigned space, uint32_t mem, char* base, size_t blen,
                       char* count, size_t clen) {
    if (space == HG_SPACE_GLOBAL) {
        snprintf(base, blen, "b%u", mem);
        snprintf(count, clen, "a.p[%u].count", mem);
    } else {
        snprintf(base, blen, "sh%u", mem);
        if (g->p->shared[mem].count) snprintf(count, clen, "%uull", g->p->shared[mem].count);
        else snprintf(count, clen, "a.dyn_count");
    }
}

// if (index out of range) { report; stop the lane }
static void emit_bounds(gen* g, const hg_instr* in, const char* idx, const char* count,
                        unsigned space) {
    indent(g);
    hg_sb_put(&g->b, "if ((hg_u64)(%s) >= (hg_u64)(%s)) { hg_oob(a.err, a.seq, a.tag, %uu, %uu, (hg_u64)(%s), "
           "(hg_u64)(%s)); return; }\n", idx, count, g->instr,
           (space == HG_SPACE_SHARED ? 0x80000000u : 0u) | in->mem, idx, count);
}

// The index as a 64-bit value: signed indices are sign-extended, so negative ones are huge.
static const char* index_expr(gen* g, const hg_instr* in, char* buf, size_t len) {
    unsigned it = index_type(g, &in->src[0]);
    char ob[96];
    const char* v = opnd(g, &in->src[0], it, ob, sizeof ob);
    snprintf(buf, len, "%s", v);
    return buf;
}

// The CUDA vector type one ldv / stv access of w elements of type t moves (vec_typed: its
// components are the elements; otherwise 32-bit words, or one 16-bit word for 2 bytes, that
// hold the small elements, the first in the low bits).
static const char* vec_type(unsigned t, unsigned w, int* vec_typed) {
    *vec_typed = 1;
    switch (t) {
    case HG_DTYPE_F32: return w == 4 ? "float4" : "float2";
    case HG_DTYPE_F64: return "double2";
    case HG_DTYPE_I32: return w == 4 ? "int4" : "int2";
    case HG_DTYPE_U32: return w == 4 ? "uint4" : "uint2";
    case HG_DTYPE_I64: return "longlong2";
    case HG_DTYPE_U64: return "ulonglong2";
    default: break;
    }
    *vec_typed = 0;
    switch (w * hg_dtype_size((hg_dtype)t)) {
    case 16: return "uint4";
    case 8: return "uint2";
    case 4: return "hg_u32";
    default: return "hg_u16";
    }
}

// ldv / stv: one bounds check for the run, then one access of the vector type where the
// address is aligned to its size (always, for the elementwise kernels' vector variant), else
// element by element.
static void emit_vector(gen* g, const hg_instr* in, const char* base, const char* count,
                        const char* sidx, unsigned space) {
    static const char comp[4] = {'x', 'y', 'z', 'w'};
    unsigned t = in->type, w = hg_vec_width(in->aux);
    unsigned es = (unsigned)hg_dtype_size((hg_dtype)t), bytes = w * es;
    int typed;
    const char* vt = vec_type(t, w, &typed);
    const char* wt = bytes == 2 ? "hg_u16" : "hg_u32";   // a word of the small types
    int ld = in->op == HG_OP_LDV;
    uint32_t r0 = ld ? in->dst.index : in->src[1].index;
    indent(g);
    hg_sb_put(&g->b, "if ((hg_u64)(%s) < %uull || %s > (hg_u64)(%s) - %uull) { "
              "hg_oob(a.err, a.seq, a.tag, %uu, %uu, %s, (hg_u64)(%s)); return; }\n", count, w, sidx, count, w, g->instr,
              (space == HG_SPACE_SHARED ? 0x80000000u : 0u) | in->mem, sidx, count);
    indent(g);
    hg_sb_put(&g->b, "{\n");
    g->depth++;
    indent(g);
    hg_sb_put(&g->b, "%s%s* const hg_p = %s + %s;\n", ld ? "const " : "", mtype(t), base, sidx);
    indent(g);
    hg_sb_put(&g->b, "if (((hg_u64)(size_t)hg_p & %uull) == 0) {\n", bytes - 1);
    g->depth++;
    indent(g);
    if (ld) hg_sb_put(&g->b, "const %s hg_v = hg_vld<%s>(hg_p);\n", vt, vt);
    else hg_sb_put(&g->b, "%s hg_v;\n", vt);
    for (unsigned k = 0; k < w; k++) {
        char elem[96];   // element k of the vector, or the expression stored as it
        char word[16] = "hg_v";   // the component holding element k, at bit `bit`
        unsigned bit = (k * es % 4) * 8;
        if (typed) snprintf(word, sizeof word, "hg_v.%c", comp[k]);
        else if (bytes > 4) snprintf(word, sizeof word, "hg_v.%c", comp[k * es / 4]);
        if (ld) {
            if (typed) snprintf(elem, sizeof elem, "%s", word);
            else snprintf(elem, sizeof elem, "(%s)(%s >> %u)", mtype(t), word, bit);
            indent(g);
            if (t == HG_DTYPE_BOOL) hg_sb_put(&g->b, "r%u = %s != 0;\n", r0 + k, elem);
            else if (t == HG_DTYPE_F16) hg_sb_put(&g->b, "r%u = hg_f16_to_f32(%s);\n", r0 + k, elem);
            else if (t == HG_DTYPE_BF16) hg_sb_put(&g->b, "r%u = hg_bf16_to_f32(%s);\n", r0 + k, elem);
            else hg_sb_put(&g->b, "r%u = (%s)%s;\n", r0 + k, vtype(t), elem);
            continue;
        }
        if (t == HG_DTYPE_BOOL) snprintf(elem, sizeof elem, "(hg_u8)(r%u ? 1 : 0)", r0 + k);
        else if (t == HG_DTYPE_F16) snprintf(elem, sizeof elem, "(hg_u16)hg_f32_to_f16(r%u)", r0 + k);
        else if (t == HG_DTYPE_BF16) snprintf(elem, sizeof elem, "(hg_u16)(hg_f2u(r%u) >> 16)", r0 + k);
        else snprintf(elem, sizeof elem, "r%u", r0 + k);
        indent(g);
        if (typed) hg_sb_put(&g->b, "%s = %s;\n", word, elem);
        else if (bit == 0) hg_sb_put(&g->b, "%s = (%s)(%s)%s;\n", word, wt, utype(t), elem);
        else hg_sb_put(&g->b, "%s |= (%s)((hg_u32)(%s)%s << %u);\n", word, wt, utype(t), elem, bit);
    }
    if (!ld) {
        indent(g);
        hg_sb_put(&g->b, "hg_vst<%s>(hg_p, hg_v);\n", vt);
    }
    g->depth--;
    indent(g);
    // Element by element through a volatile pointer: otherwise the compiler merges these
    // accesses with the vector path's (same values, same addresses) and splits its 16-byte
    // access into pieces that fit both.
    hg_sb_put(&g->b, "} else {\n");
    g->depth++;
    indent(g);
    hg_sb_put(&g->b, "%svolatile %s* const hg_q = hg_p;\n", ld ? "const " : "", mtype(t));
    for (unsigned k = 0; k < w; k++) {
        indent(g);
        if (ld) {
            if (t == HG_DTYPE_BOOL) hg_sb_put(&g->b, "r%u = hg_q[%u] != 0;\n", r0 + k, k);
            else if (t == HG_DTYPE_F16) hg_sb_put(&g->b, "r%u = hg_f16_to_f32(hg_q[%u]);\n", r0 + k, k);
            else if (t == HG_DTYPE_BF16) hg_sb_put(&g->b, "r%u = hg_bf16_to_f32(hg_q[%u]);\n", r0 + k, k);
            else hg_sb_put(&g->b, "r%u = hg_q[%u];\n", r0 + k, k);
        } else {
            if (t == HG_DTYPE_BOOL) hg_sb_put(&g->b, "hg_q[%u] = (hg_u8)(r%u ? 1 : 0);\n", k, r0 + k);
            else if (t == HG_DTYPE_F16) hg_sb_put(&g->b, "hg_q[%u] = (hg_u16)hg_f32_to_f16(r%u);\n", k, r0 + k);
            else if (t == HG_DTYPE_BF16) hg_sb_put(&g->b, "hg_q[%u] = (hg_u16)(hg_f2u(r%u) >> 16);\n", k, r0 + k);
            else hg_sb_put(&g->b, "hg_q[%u] = r%u;\n", k, r0 + k);
        }
    }
    g->depth--;
    indent(g);
    hg_sb_put(&g->b, "}\n");
    g->depth--;
    indent(g);
    hg_sb_put(&g->b, "}\n");
}

static void emit_memory(gen* g, const hg_instr* in) {
    unsigned t = in->type;
    char base[32], count[64], idx[128], ob[3][96];
    unsigned space = hg_mem_space(in);
    slot_names(g, space, in->mem, base, sizeof base, count, sizeof count);
    index_expr(g, in, idx, sizeof idx);
    // Signed indices: reinterpret as i64 first so that -1 becomes 2^64 - 1, not 2^32 - 1.
    char sidx[160];
    unsigned it = index_type(g, &in->src[0]);
    if (is_signed(it)) snprintf(sidx, sizeof sidx, "(hg_u64)(hg_i64)(%s)", idx);
    else snprintf(sidx, sizeof sidx, "(hg_u64)(%s)", idx);
    if (hg_op_is_vec(in->op)) {
        emit_vector(g, in, base, count, sidx, space);
        return;
    }
    emit_bounds(g, in, sidx, count, space);
    indent(g);
    if (in->op == HG_OP_LD) {
        uint32_t d = in->dst.index;
        if (t == HG_DTYPE_BOOL) hg_sb_put(&g->b, "r%u = %s[%s] != 0;\n", d, base, sidx);
        else if (t == HG_DTYPE_F16) hg_sb_put(&g->b, "r%u = hg_f16_to_f32(%s[%s]);\n", d, base, sidx);
        else if (t == HG_DTYPE_BF16) hg_sb_put(&g->b, "r%u = hg_bf16_to_f32(%s[%s]);\n", d, base, sidx);
        else hg_sb_put(&g->b, "r%u = %s[%s];\n", d, base, sidx);
        return;
    }
    if (in->op == HG_OP_ST) {
        const char* v = OPND(1, t);
        if (t == HG_DTYPE_BOOL) hg_sb_put(&g->b, "%s[%s] = (hg_u8)(%s ? 1 : 0);\n", base, sidx, v);
        else if (t == HG_DTYPE_F16) hg_sb_put(&g->b, "%s[%s] = (hg_u16)hg_f32_to_f16(%s);\n", base, sidx, v);
        else if (t == HG_DTYPE_BF16) hg_sb_put(&g->b, "%s[%s] = (hg_u16)(hg_f2u(%s) >> 16);\n", base, sidx, v);
        else hg_sb_put(&g->b, "%s[%s] = %s;\n", base, sidx, v);
        return;
    }
    // atom
    unsigned aop = hg_atom_op(in->aux);
    const char* v = OPND(1, t);
    char dst[32];
    if (in->dst.kind == HG_OPERAND_REG) snprintf(dst, sizeof dst, "r%u = ", in->dst.index);
    else dst[0] = 0;
    char ptr[200];
    snprintf(ptr, sizeof ptr, "&%s[%s]", base, sidx);
    const char* vt = vtype(t);
    switch (aop) {
    case HG_ATOMIC_ADD:
        if (t == HG_DTYPE_I64) hg_sb_put(&g->b, "%shg_atom_add_i64(%s, %s);\n", dst, ptr, v);
        else if (t == HG_DTYPE_F64) hg_sb_put(&g->b, "%shg_atom_add_f64(%s, %s);\n", dst, ptr, v);
        else if (t == HG_DTYPE_U64) hg_sb_put(&g->b, "%satomicAdd((hg_u64*)%s, (hg_u64)%s);\n", dst, ptr, v);
        else hg_sb_put(&g->b, "%satomicAdd(%s, %s);\n", dst, ptr, v);
        return;
    case HG_ATOMIC_MIN:
    case HG_ATOMIC_MAX: {
        int mx = aop == HG_ATOMIC_MAX;
        if (t == HG_DTYPE_F32) hg_sb_put(&g->b, "%shg_atom_minmax_f32(%s, %s, %d);\n", dst, ptr, v, mx);
        else if (t == HG_DTYPE_F64) hg_sb_put(&g->b, "%shg_atom_minmax_f64(%s, %s, %d);\n", dst, ptr, v, mx);
        else if (t == HG_DTYPE_I64) hg_sb_put(&g->b, "%shg_atom_%s_i64(%s, %s);\n", dst, mx ? "max" : "min", ptr, v);
        else if (t == HG_DTYPE_U64) hg_sb_put(&g->b, "%satomic%s((hg_u64*)%s, (hg_u64)%s);\n", dst, mx ? "Max" : "Min", ptr, v);
        else hg_sb_put(&g->b, "%satomic%s(%s, %s);\n", dst, mx ? "Max" : "Min", ptr, v);
        return;
    }
    case HG_ATOMIC_EXCH:
        if (t == HG_DTYPE_I64) hg_sb_put(&g->b, "%shg_atom_exch_i64(%s, %s);\n", dst, ptr, v);
        else if (t == HG_DTYPE_F64) hg_sb_put(&g->b, "%shg_atom_exch_f64(%s, %s);\n", dst, ptr, v);
        else if (t == HG_DTYPE_U64) hg_sb_put(&g->b, "%satomicExch((hg_u64*)%s, (hg_u64)%s);\n", dst, ptr, v);
        else hg_sb_put(&g->b, "%satomicExch(%s, %s);\n", dst, ptr, v);
        return;
    default: {   // cas
        const char* nv = OPND(2, t);
        if (t == HG_DTYPE_I64) hg_sb_put(&g->b, "%shg_atom_cas_i64(%s, %s, %s);\n", dst, ptr, v, nv);
        else if (t == HG_DTYPE_U64)
            hg_sb_put(&g->b, "%satomicCAS((hg_u64*)%s, (hg_u64)%s, (hg_u64)%s);\n", dst, ptr, v, nv);
        else hg_sb_put(&g->b, "%s(%s)atomicCAS(%s, %s, %s);\n", dst, vt, ptr, v, nv);
        return;
    }
    }
}

static void emit_control(gen* g, const hg_instr* in) {
    char ob[3][96];
    switch (in->op) {
    case HG_OP_IF:
        indent(g);
        hg_sb_put(&g->b, "if (%s) {\n", OPND(0, HG_DTYPE_BOOL));
        g->depth++;
        return;
    case HG_OP_ELSE:
        g->depth--;
        indent(g);
        hg_sb_put(&g->b, "} else {\n");
        g->depth++;
        return;
    case HG_OP_ENDIF:
    case HG_OP_ENDLOOP:
        g->depth--;
        indent(g);
        hg_sb_put(&g->b, "}\n");
        return;
    case HG_OP_LOOP:
        indent(g);
        hg_sb_put(&g->b, "for (;;) {\n");
        g->depth++;
        return;
    case HG_OP_BREAK:
        indent(g);
        if (in->src[0].kind == HG_OPERAND_NONE) hg_sb_put(&g->b, "break;\n");
        else hg_sb_put(&g->b, "if (%s) break;\n", OPND(0, HG_DTYPE_BOOL));
        return;
    case HG_OP_EXIT:
        indent(g);
        hg_sb_put(&g->b, "return;\n");
        return;
    case HG_OP_BAR:
        indent(g);
        hg_sb_put(&g->b, "__syncthreads();\n");
        return;
    default:   // fence
        indent(g);
        hg_sb_put(&g->b, "%s;\n", in->aux == HG_SPACE_SHARED ? "__threadfence_block()" : "__threadfence()");
        return;
    }
}

// shfl through the preamble's hg_shfl on a type __shfl_*_sync takes (hg_ln, hg_wn, hg_wm: the
// lane's index in its warp, the warp's lanes in the block and their mask, set at the top).
static void emit_shfl(gen* g, const hg_instr* in) {
    unsigned t = in->type;
    char ob[3][96];
    const char* wire = t == HG_DTYPE_F64 ? "double" : is_float(t) ? "float"
                       : bits_of(t) == 64 ? "hg_u64" : "hg_u32";
    indent(g);
    hg_sb_put(&g->b, "r%u = (%s)hg_shfl<%u, %s>((%s)%s, %s, hg_ln, hg_wn, hg_wm);\n",
              in->dst.index, vtype(t), (unsigned)in->aux, wire, wire, OPND(0, t),
              OPND(1, HG_DTYPE_U32));
}

// ---- the kernel ---------------------------------------------------------------------------------
size_t hg_cuda_kargs_size(uint32_t nparams) {
    return hg_cuda_kargs_launch_offset(nparams) + 16;
}
size_t hg_cuda_kargs_err_offset(uint32_t nparams) {
    return (nparams ? nparams : 1) * sizeof(hg_cuda_karg);
}
size_t hg_cuda_kargs_dyn_offset(uint32_t nparams) { return hg_cuda_kargs_err_offset(nparams) + 8; }
size_t hg_cuda_kargs_launch_offset(uint32_t nparams) { return hg_cuda_kargs_dyn_offset(nparams) + 8; }

// Scalar parameter i read from its raw bits as its value type.
static void emit_scalar(gen* g, uint32_t i, unsigned t) {
    const char* vt = vtype(t);
    switch (t) {
    case HG_DTYPE_BOOL: hg_sb_put(&g->b, "    const bool s%u = (a.p[%u].bits & 0xff) != 0;\n", i, i); break;
    case HG_DTYPE_F32: hg_sb_put(&g->b, "    const float s%u = hg_u2f((hg_u32)a.p[%u].bits);\n", i, i); break;
    case HG_DTYPE_F64: hg_sb_put(&g->b, "    const double s%u = hg_u2d(a.p[%u].bits);\n", i, i); break;
    case HG_DTYPE_F16: hg_sb_put(&g->b, "    const float s%u = hg_f16_to_f32((hg_u32)(a.p[%u].bits & 0xffff));\n", i, i); break;
    case HG_DTYPE_BF16: hg_sb_put(&g->b, "    const float s%u = hg_bf16_to_f32((hg_u32)(a.p[%u].bits & 0xffff));\n", i, i); break;
    default: hg_sb_put(&g->b, "    const %s s%u = (%s)a.p[%u].bits;\n", vt, i, vt, i); break;
    }
}

hg_status hg_cuda_codegen(const hg_prog* p, char** out, size_t* out_len) {
    gen g;
    memset(&g, 0, sizeof g);
    g.p = p;
    hg_sb* b = &g.b;
    hg_sb_put(b, "// Generated by hologram from Atlas ISA kernel '%s' (%u instructions).\n", p->name,
           p->ninstrs);
    hg_sb_put(b, "%s", hg_cuda_preamble);
    uint32_t np = p->nparams ? p->nparams : 1;
    hg_sb_put(b, "struct hg_kargs { hg_karg p[%u]; hg_kerr* err; hg_u64 dyn_count, seq, tag; };\n", np);
    hg_sb_put(b, "extern \"C\" __global__ void __launch_bounds__(1024) hg_kernel(const hg_kargs a) {\n");
    // Buffers and scalars.
    for (uint32_t i = 0; i < p->nparams; i++) {
        const hg_param_decl* d = &p->params[i];
        if (d->kind == HG_PARAM_BUFFER)
            hg_sb_put(b, "    %s* const b%u = (%s*)a.p[%u].base;   // %s\n", mtype(d->dtype), i,
                   mtype(d->dtype), i, d->name);
        else
            emit_scalar(&g, i, d->dtype);
    }
    // Shared arrays (zeroed at the start of every block, as the ISA specifies).
    int have_shared = p->nshared > 0;
    int have_dyn = 0;
    for (uint32_t i = 0; i < p->nshared; i++) {
        const hg_shared_decl* s = &p->shared[i];
        if (s->count) {
            hg_sb_put(b, "    __shared__ %s sh%u[%u];   // %s\n", mtype(s->dtype), i, s->count, s->name);
        } else {
            if (!have_dyn)
                hg_sb_put(b, "#ifdef HG_EMU\n    hg_u64* const hg_dyn_smem = hg_emu_dyn;\n#else\n"
                          "    extern __shared__ hg_u64 hg_dyn_smem[];\n#endif\n");
            have_dyn = 1;
            hg_sb_put(b, "    %s* const sh%u = (%s*)hg_dyn_smem;   // %s\n", mtype(s->dtype), i,
                   mtype(s->dtype), s->name);
        }
    }
    if (have_shared) {
        hg_sb_put(b, "    {\n        const hg_u32 hg_nt = blockDim.x * blockDim.y * blockDim.z;\n"
                  "        const hg_u32 hg_tl = threadIdx.x + blockDim.x * (threadIdx.y + "
                  "blockDim.y * threadIdx.z);\n");
        for (uint32_t i = 0; i < p->nshared; i++) {
            const hg_shared_decl* s = &p->shared[i];
            if (s->count)
                hg_sb_put(b, "        for (hg_u32 i = hg_tl; i < %uu; i += hg_nt) sh%u[i] = 0;\n",
                       s->count, i);
            else
                hg_sb_put(b, "        for (hg_u64 i = hg_tl; i < a.dyn_count; i += hg_nt) sh%u[i] = 0;\n", i);
        }
        hg_sb_put(b, "        __syncthreads();\n    }\n");
    }
    int have_shfl = 0;
    for (uint32_t i = 0; i < p->ninstrs; i++) have_shfl |= p->instrs[i].op == HG_OP_SHFL;
    if (have_shfl)
        hg_sb_put(b, "    const hg_u32 hg_wl = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * "
                  "threadIdx.z);\n"
                  "    const hg_u32 hg_ln = hg_wl & 31u;\n"
                  "    const hg_u32 hg_wr = blockDim.x * blockDim.y * blockDim.z - (hg_wl - hg_ln);\n"
                  "    const hg_u32 hg_wn = hg_wr < 32u ? hg_wr : 32u;\n"
                  "    const hg_u32 hg_wm = hg_wn == 32u ? 0xffffffffu : (1u << hg_wn) - 1u;\n");
    // Registers, zero at launch.
    for (uint32_t i = 0; i < p->nregs; i++)
        hg_sb_put(b, "    %s r%u = 0;   // %s\n", vtype(p->regs[i].dtype), i, p->regs[i].name);
    // Unused locals are fine: the compiler drops them (no warnings are enabled for NVRTC).
    for (uint32_t i = 0; i < p->ninstrs && !b->oom; i++) {
        const hg_instr* in = &p->instrs[i];
        g.instr = i;
        const hg_opinfo* info = hg_opinfo_of(in->op);
        switch (info ? info->op_class : HG_CLASS_COUNT) {
        case HG_CLASS_ARITH: emit_arith(&g, in); break;
        case HG_CLASS_CMP: emit_cmp(&g, in); break;
        case HG_CLASS_SEL: emit_sel(&g, in); break;
        case HG_CLASS_CVT: emit_cvt(&g, in); break;
        case HG_CLASS_MATH: emit_math(&g, in); break;
        case HG_CLASS_MEMORY: emit_memory(&g, in); break;
        case HG_CLASS_SYNC:
        case HG_CLASS_CONTROL: emit_control(&g, in); break;
        case HG_CLASS_WARP: emit_shfl(&g, in); break;
        default:
            free(b->p);
            return hg_error(HG_ERR_INTERNAL, "CUDA codegen: instruction %u has opcode %u, which "
                            "has no code generator", i, (unsigned)in->op);
        }
    }
    hg_sb_put(b, "}\n");
    if (b->oom) {
        free(b->p);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "CUDA codegen: out of memory generating '%s'",
                        p->name);
    }
    *out = b->p;
    *out_len = b->len;
    return HG_OK;
}
