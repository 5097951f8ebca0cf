// Independent scalar reference of the Atlas ISA semantics; see instr_ref.h. Written from
// docs/isa.md only: integer ops through unsigned 64-bit arithmetic and explicit masks, float
// ops in the C types, narrow floats through our own round-to-nearest-even encoder.
#include "instr_ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int ir_size(hg_dtype t) {
    switch (t) {
    case HG_DTYPE_BOOL: case HG_DTYPE_I8: case HG_DTYPE_U8: return 1;
    case HG_DTYPE_I16: case HG_DTYPE_U16: case HG_DTYPE_F16: case HG_DTYPE_BF16: return 2;
    case HG_DTYPE_I32: case HG_DTYPE_U32: case HG_DTYPE_F32: return 4;
    case HG_DTYPE_I64: case HG_DTYPE_U64: case HG_DTYPE_F64: return 8;
    default: return 0;
    }
}
int ir_width(hg_dtype t) { return ir_size(t) * 8; }
int ir_is_float(hg_dtype t) {
    return t == HG_DTYPE_F16 || t == HG_DTYPE_BF16 || t == HG_DTYPE_F32 || t == HG_DTYPE_F64;
}
int ir_is_sint(hg_dtype t) {
    return t == HG_DTYPE_I8 || t == HG_DTYPE_I16 || t == HG_DTYPE_I32 || t == HG_DTYPE_I64;
}
int ir_is_uint(hg_dtype t) {
    return t == HG_DTYPE_U8 || t == HG_DTYPE_U16 || t == HG_DTYPE_U32 || t == HG_DTYPE_U64;
}
uint64_t ir_mask(hg_dtype t) {
    int w = ir_width(t);
    return w >= 64 ? ~0ull : ((1ull << w) - 1);
}
int64_t ir_sext(uint64_t bits, hg_dtype t) {
    int w = ir_width(t);
    bits &= ir_mask(t);
    if (ir_is_sint(t) && w < 64 && (bits >> (w - 1)) & 1) bits |= ~ir_mask(t);
    int64_t v;
    memcpy(&v, &bits, sizeof v);
    return v;
}
const char* ir_name(hg_dtype t) {
    static const char* const names[] = {"bool", "i8", "i16", "i32", "i64", "u8", "u16",
                                        "u32", "u64", "f16", "bf16", "f32", "f64"};
    return (unsigned)t < HG_DTYPE_COUNT ? names[t] : "?";
}

int ir_mant_bits(hg_dtype t) {
    switch (t) {
    case HG_DTYPE_F16: return 10;
    case HG_DTYPE_BF16: return 7;
    case HG_DTYPE_F32: return 23;
    case HG_DTYPE_F64: return 52;
    default: return 0;
    }
}
int ir_exp_bits(hg_dtype t) {
    switch (t) {
    case HG_DTYPE_F16: return 5;
    case HG_DTYPE_BF16: case HG_DTYPE_F32: return 8;
    case HG_DTYPE_F64: return 11;
    default: return 0;
    }
}
static int bias_of(hg_dtype t) { return (1 << (ir_exp_bits(t) - 1)) - 1; }
uint64_t ir_sign_bit(hg_dtype t) { return 1ull << (ir_width(t) - 1); }
static uint64_t exp_mask(hg_dtype t) {
    return ((1ull << ir_exp_bits(t)) - 1) << ir_mant_bits(t);
}
static uint64_t mant_mask(hg_dtype t) { return (1ull << ir_mant_bits(t)) - 1; }
int ir_is_nan(uint64_t b, hg_dtype t) {
    return ir_is_float(t) && (b & exp_mask(t)) == exp_mask(t) && (b & mant_mask(t)) != 0;
}
int ir_is_inf(uint64_t b, hg_dtype t) {
    return ir_is_float(t) && (b & exp_mask(t)) == exp_mask(t) && (b & mant_mask(t)) == 0;
}
int ir_is_zero(uint64_t b, hg_dtype t) { return (b & ~ir_sign_bit(t) & ir_mask(t)) == 0; }

uint64_t ir_bits_f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
float ir_f32_of(uint64_t bits) {
    uint32_t u = (uint32_t)bits;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
uint64_t ir_bits_f64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
double ir_f64_of(uint64_t bits) { double d; memcpy(&d, &bits, 8); return d; }

double ir_max_finite(hg_dtype t) {
    int m = ir_mant_bits(t);
    return ldexp(2.0 - ldexp(1.0, -m), bias_of(t));
}
double ir_min_normal(hg_dtype t) { return ldexp(1.0, 1 - bias_of(t)); }
double ir_min_subnormal(hg_dtype t) { return ldexp(1.0, 1 - bias_of(t) - ir_mant_bits(t)); }

// Decodes by fields (not through float casts) so f16/bf16 do not depend on any converter.
double ir_to_double(uint64_t bits, hg_dtype t) {
    if (t == HG_DTYPE_F64) return ir_f64_of(bits);
    int m = ir_mant_bits(t), bias = bias_of(t);
    uint64_t e = (bits & exp_mask(t)) >> m, f = bits & mant_mask(t);
    int neg = (bits & ir_sign_bit(t)) != 0;
    double v;
    if (e == (exp_mask(t) >> m)) v = f ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)f, 1 - bias - m);
    else v = ldexp((double)(f | (1ull << m)), (int)e - bias - m);
    return neg ? -v : v;
}

uint64_t ir_from_double(double x, hg_dtype t) {
    int m = ir_mant_bits(t), bias = bias_of(t);
    int emin = 1 - bias, emax = bias;
    uint64_t sign = signbit(x) ? ir_sign_bit(t) : 0;
    if (isnan(x)) return sign | exp_mask(t) | (1ull << (m - 1));
    double ax = fabs(x);
    if (isinf(ax)) return sign | exp_mask(t);
    if (ax == 0) return sign;
    int e2;
    frexp(ax, &e2);
    int e = e2 - 1;                     // ax in [2^e, 2^(e+1))
    if (e < emin) e = emin;             // subnormal range: fixed quantum
    double s = ldexp(ax, m - e);        // exact: ax / quantum, < 2^(m+1)
    double fl = floor(s), fr = s - fl;  // both exact
    uint64_t r = (uint64_t)fl;
    if (fr > 0.5 || (fr == 0.5 && (r & 1))) r++;
    if (r == (2ull << m)) { r >>= 1; e++; }
    if (r < (1ull << m)) return sign | r;  // subnormal (or zero)
    if (e > emax) return sign | exp_mask(t);
    return sign | ((uint64_t)(e + bias) << m) | (r & mant_mask(t));
}

uint64_t ir_int_to_float(uint64_t mag, int neg, hg_dtype t) {
    int m = ir_mant_bits(t), bias = bias_of(t);
    if (mag == 0) return 0;
    uint64_t sign = neg ? ir_sign_bit(t) : 0;
    int lead = 63;
    while (!((mag >> lead) & 1)) lead--;
    uint64_t r;
    int e = lead;
    if (lead > m) {
        int sh = lead - m;
        r = mag >> sh;
        uint64_t rem = mag & ((1ull << sh) - 1), half = 1ull << (sh - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        if (r == (2ull << m)) { r >>= 1; e++; }
    } else {
        r = mag << (m - lead);
    }
    if (e > bias) return sign | exp_mask(t);
    return sign | ((uint64_t)(e + bias) << m) | (r & mant_mask(t));
}

// Float arithmetic in the working precision: f64 in double, everything else in float (f16
// and bf16 values are exact in float), then rounded once to t by our encoder.
static uint64_t fwork(hg_opcode op, hg_dtype t, uint64_t a, uint64_t b, uint64_t c) {
    if (t == HG_DTYPE_F64) {
        double x = ir_f64_of(a), y = ir_f64_of(b), z = ir_f64_of(c), r = 0;
        switch (op) {
        case HG_OP_ADD: r = x + y; break;
        case HG_OP_SUB: r = x - y; break;
        case HG_OP_MUL: r = x * y; break;
        case HG_OP_DIV: r = x / y; break;
        case HG_OP_REM: r = fmod(x, y); break;
        case HG_OP_FMA: r = fma(x, y, z); break;
        case HG_OP_SQRT: r = sqrt(x); break;
        default: break;
        }
        return ir_bits_f64(r);
    }
    float x = (float)ir_to_double(a, t), y = (float)ir_to_double(b, t);
    float z = (float)ir_to_double(c, t), r = 0;
    switch (op) {
    case HG_OP_ADD: r = x + y; break;
    case HG_OP_SUB: r = x - y; break;
    case HG_OP_MUL: r = x * y; break;
    case HG_OP_DIV: r = x / y; break;
    case HG_OP_REM: r = fmodf(x, y); break;
    case HG_OP_FMA: r = fmaf(x, y, z); break;
    case HG_OP_SQRT: r = sqrtf(x); break;
    default: break;
    }
    return ir_from_double((double)r, t);
}

// min/max with NaN propagation and -0 < +0: a total order on non-NaN values.
static int flt_less(uint64_t a, uint64_t b, hg_dtype t) {
    double x = ir_to_double(a, t), y = ir_to_double(b, t);
    if (x == 0 && y == 0) return signbit(x) && !signbit(y);
    return x < y;
}

static uint64_t float_arith(hg_opcode op, hg_dtype t, uint64_t a, uint64_t b, uint64_t c) {
    uint64_t qnan = exp_mask(t) | (1ull << (ir_mant_bits(t) - 1));
    switch (op) {
    case HG_OP_MOV: return a;
    case HG_OP_ABS: return a & ~ir_sign_bit(t);
    case HG_OP_NEG: return (a ^ ir_sign_bit(t)) & ir_mask(t);
    case HG_OP_MIN:
        if (ir_is_nan(a, t) || ir_is_nan(b, t)) return qnan;
        return flt_less(b, a, t) ? b : a;
    case HG_OP_MAX:
        if (ir_is_nan(a, t) || ir_is_nan(b, t)) return qnan;
        return flt_less(a, b, t) ? b : a;
    default: return fwork(op, t, a, b, c);
    }
}

static uint64_t int_arith(hg_opcode op, hg_dtype t, uint64_t a, uint64_t b, uint64_t c) {
    uint64_t m = ir_mask(t);
    int w = ir_width(t), sgn = ir_is_sint(t);
    a &= m; b &= m; c &= m;
    int64_t sa = ir_sext(a, t), sb = ir_sext(b, t);
    uint64_t minbits = sgn ? (1ull << (w - 1)) : 0;
    switch (op) {
    case HG_OP_MOV: return a;
    case HG_OP_ADD: return (a + b) & m;
    case HG_OP_SUB: return (a - b) & m;
    case HG_OP_MUL: return (a * b) & m;
    case HG_OP_FMA: return (a * b + c) & m;
    case HG_OP_DIV:
        if (b == 0) return m;
        if (!sgn) return a / b;
        if (a == minbits && sb == -1) return a;
        return (uint64_t)(sa / sb) & m;
    case HG_OP_REM:
        if (b == 0) return a;
        if (!sgn) return a % b;
        if (a == minbits && sb == -1) return 0;
        return (uint64_t)(sa % sb) & m;
    case HG_OP_MIN: return sgn ? (sa < sb ? a : b) : (a < b ? a : b);
    case HG_OP_MAX: return sgn ? (sa > sb ? a : b) : (a > b ? a : b);
    case HG_OP_ABS: return (sgn && sa < 0) ? (0 - a) & m : a;
    case HG_OP_NEG: return (0 - a) & m;
    case HG_OP_AND: return a & b;
    case HG_OP_OR: return a | b;
    case HG_OP_XOR: return a ^ b;
    case HG_OP_NOT: return ~a & m;
    case HG_OP_SHL: return b >= (uint64_t)w ? 0 : (a << b) & m;
    case HG_OP_SHR:
        if (!sgn) return b >= (uint64_t)w ? 0 : a >> b;
        if (b >= (uint64_t)w) return sa < 0 ? m : 0;
        // Arithmetic shift spelled out on unsigned values (no implementation-defined >>).
        return (sa < 0 ? ~((~(uint64_t)sa) >> b) : (uint64_t)sa >> b) & m;
    default: return 0;
    }
}

static uint64_t bool_arith(hg_opcode op, uint64_t a, uint64_t b) {
    a = a != 0; b = b != 0;
    switch (op) {
    case HG_OP_MOV: return a;
    case HG_OP_AND: return a & b;
    case HG_OP_OR: return a | b;
    case HG_OP_XOR: return a ^ b;
    case HG_OP_NOT: return !a;
    default: return 0;
    }
}

uint64_t ir_arith(hg_opcode op, hg_dtype t, uint64_t a, uint64_t b, uint64_t c) {
    if (t == HG_DTYPE_BOOL) return bool_arith(op, a, b);
    if (ir_is_float(t)) return float_arith(op, t, a, b, c);
    return int_arith(op, t, a, b, c);
}

uint64_t ir_cmp(hg_cmp cond, hg_dtype t, uint64_t a, uint64_t b) {
    int lt, eq;
    if (ir_is_float(t)) {
        if (ir_is_nan(a, t) || ir_is_nan(b, t)) return cond == HG_CMP_NE;
        double x = ir_to_double(a, t), y = ir_to_double(b, t);
        lt = x < y; eq = x == y;
    } else if (ir_is_sint(t)) {
        int64_t x = ir_sext(a, t), y = ir_sext(b, t);
        lt = x < y; eq = x == y;
    } else {
        lt = (a & ir_mask(t)) < (b & ir_mask(t));
        eq = (a & ir_mask(t)) == (b & ir_mask(t));
    }
    switch (cond) {
    case HG_CMP_EQ: return eq;
    case HG_CMP_NE: return !eq;
    case HG_CMP_LT: return lt;
    case HG_CMP_LE: return lt || eq;
    case HG_CMP_GT: return !lt && !eq;
    case HG_CMP_GE: return !lt;
    default: return 0;
    }
}

static uint64_t float_to_int(double d, hg_dtype dst) {
    if (isnan(d)) return 0;
    double tr = trunc(d);
    int w = ir_width(dst);
    if (ir_is_uint(dst)) {
        if (tr <= 0) return 0;
        if (tr >= ldexp(1.0, w)) return ir_mask(dst);
        return (uint64_t)tr;
    }
    double hi = ldexp(1.0, w - 1);  // exclusive upper bound, exact
    if (tr >= hi) return ir_mask(dst) >> 1;
    if (tr < -hi) return (1ull << (w - 1));
    return (uint64_t)(int64_t)tr & ir_mask(dst);
}

uint64_t ir_cvt(hg_dtype dst, hg_dtype src, uint64_t a) {
    a &= ir_mask(src);
    if (src == HG_DTYPE_BOOL) a = a != 0;
    if (dst == HG_DTYPE_BOOL) {
        if (ir_is_float(src)) return !ir_is_zero(a, src);  // NaN: true, -0: false
        return a != 0;
    }
    if (src == HG_DTYPE_BOOL || ir_is_int(src)) {
        int64_t s = src == HG_DTYPE_BOOL ? (int64_t)a : ir_sext(a, src);
        if (ir_is_int(dst)) return (uint64_t)s & ir_mask(dst);
        if (ir_is_sint(src) && s < 0) return ir_int_to_float(0 - (uint64_t)s, 1, dst);
        return ir_int_to_float(a, 0, dst);
    }
    double d = ir_to_double(a, src);  // exact widening
    if (ir_is_float(dst)) return ir_from_double(d, dst);
    return float_to_int(d, dst);
}

uint64_t ir_round_op(hg_opcode op, hg_dtype t, uint64_t a) {
    if (op == HG_OP_SQRT) return fwork(op, t, a, 0, 0);
    double x = ir_to_double(a, t), r = x;
    switch (op) {
    case HG_OP_FLOOR: r = floor(x); break;
    case HG_OP_CEIL: r = ceil(x); break;
    case HG_OP_TRUNC: r = trunc(x); break;
    case HG_OP_ROUND: {
        // Ties to even, spelled out; the sign of a zero result is the sign of x.
        if (isnan(x) || isinf(x)) break;
        double f = floor(x), diff = x - f;
        r = f;
        if (diff > 0.5 || (diff == 0.5 && fmod(f, 2.0) != 0)) r = f + 1;
        if (r == 0) r = copysign(0.0, x);
        break;
    }
    default: break;
    }
    if (isnan(r)) return a | (1ull << (ir_mant_bits(t) - 1));
    return ir_from_double(r, t);
}

long double ir_math_exact(hg_opcode op, long double x) {
    switch (op) {
    case HG_OP_SQRT: return sqrtl(x);
    case HG_OP_RSQRT: return x == 0 ? copysignl(INFINITY, x) : 1.0L / sqrtl(x);
    case HG_OP_EXP: return expl(x);
    case HG_OP_EXP2: return exp2l(x);
    case HG_OP_LOG: return logl(x);
    case HG_OP_LOG2: return log2l(x);
    case HG_OP_SIN: return sinl(x);
    case HG_OP_COS: return cosl(x);
    case HG_OP_TANH: return tanhl(x);
    case HG_OP_SIGMOID: return 1.0L / (1.0L + expl(-x));
    case HG_OP_ERF: return erfl(x);
    case HG_OP_GELU: {
        // x * sigmoid(u) with e = e^-|u|, so the negative tail does not cancel; -inf -> -0.
        if (isinf(x)) return x > 0 ? x : -0.0L;
        long double u = 2.0L * sqrtl(2.0L / 3.14159265358979323846264338327950288L) *
                        (x + 0.044715L * x * x * x);
        long double e = expl(-fabsl(u));
        return (x >= 0 ? x : x * e) / (1.0L + e);
    }
    case HG_OP_GELU_ERF:   // x erfc(-x / sqrt 2) / 2; -inf -> -0
        if (isinf(x)) return x > 0 ? x : -0.0L;
        return 0.5L * x * erfcl(-x / sqrtl(2.0L));
    default: return NAN;
    }
}

double ir_ulp_error(uint64_t got, long double exact, hg_dtype t) {
    int m = ir_mant_bits(t), bias = bias_of(t);
    if (isnan(exact)) return ir_is_nan(got, t) ? 0 : 1e30;
    if (ir_is_nan(got, t)) return 1e30;
    // The exactly rounded result decides whether an inf is expected.
    uint64_t want = ir_from_double((double)exact, t);
    if (ir_is_inf(want, t) && ir_is_inf(got, t)) return (want == got) ? 0 : 1e30;
    long double g = ir_to_double(got, t);
    if (ir_is_inf(got, t)) g = copysignl(ldexpl(1.0L, bias + 1), g);
    long double ax = fabsl(exact);
    if (ax > (long double)ir_max_finite(t)) ax = (long double)ir_max_finite(t);
    long double ulp;
    if (ax < (long double)ir_min_normal(t)) {
        ulp = ir_min_subnormal(t);
    } else {
        int e;
        frexpl(ax, &e);
        ulp = ldexpl(1.0L, e - 1 - m);
    }
    return (double)(fabsl(g - exact) / ulp);
}

int ir_same_value(uint64_t got, uint64_t want, hg_dtype t) {
    if (ir_is_float(t) && ir_is_nan(got, t) && ir_is_nan(want, t)) return 1;
    return (got & ir_mask(t)) == (want & ir_mask(t));
}

const char* ir_op_name(hg_opcode op) {
    static const char* const names[HG_OPCODE_COUNT] = {
        "mov", "add", "sub", "mul", "div", "rem", "min", "max", "abs", "neg", "fma", "and",
        "or", "xor", "not", "shl", "shr", "cmp", "sel", "cvt", "sqrt", "rsqrt", "exp", "exp2",
        "log", "log2", "sin", "cos", "tanh", "sigmoid", "erf", "floor", "ceil", "round",
        "trunc", "ld", "st", "atom", "bar", "fence", "if", "else", "endif", "loop", "endloop",
        "break", "exit", "gelu", "gelu_erf", "shfl", "ldv", "stv"};
    _Static_assert(sizeof names / sizeof names[0] == HG_OPCODE_COUNT, "an opcode without a name");
    return (unsigned)op < HG_OPCODE_COUNT ? names[op] : "?";
}
const char* ir_cmp_name(hg_cmp c) {
    static const char* const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    return (unsigned)c < HG_CMP_COUNT ? names[c] : "?";
}

const char* ir_fmt(char* buf, size_t len, uint64_t bits, hg_dtype t) {
    bits &= ir_mask(t);
    if (ir_is_float(t))
        snprintf(buf, len, "0x%0*llx (%.17g)", ir_size(t) * 2, (unsigned long long)bits,
                 ir_to_double(bits, t));
    else if (ir_is_sint(t))
        snprintf(buf, len, "0x%0*llx (%lld)", ir_size(t) * 2, (unsigned long long)bits,
                 (long long)ir_sext(bits, t));
    else
        snprintf(buf, len, "0x%0*llx (%llu)", ir_size(t) * 2, (unsigned long long)bits,
                 (unsigned long long)bits);
    return buf;
}
