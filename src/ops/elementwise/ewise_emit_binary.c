// ISA emission of the binary ops and fma: numpy's floor_divide / remainder signs, integer and
// float power, logical ops on any dtype, and bool arithmetic (add = or, multiply = and).
#include <math.h>
#include "base/dtype.h"
#include "ops/elementwise/ewise_internal.h"

#define F64 HG_DTYPE_F64
#define BOOL HG_DTYPE_BOOL

static hg_operand imm(hg_dtype t, double v) { return hg_kb_imm(t, v); }

static hg_operand both(hg_kb* m, hg_operand p, hg_operand q) {
    return hg_kb_op2(m, HG_OP_AND, BOOL, p, q);
}

// (x < 0) != (y < 0) and x != 0: the truncated result must move toward -inf (numpy's rule).
static hg_operand needs_adjust(hg_kb* m, hg_dtype c, hg_operand r, hg_operand b) {
    hg_operand signs = hg_kb_op2(m, HG_OP_XOR, BOOL, hg_kb_cmp(m, HG_CMP_LT, c, r, imm(c, 0.0)),
                                 hg_kb_cmp(m, HG_CMP_LT, c, b, imm(c, 0.0)));
    return both(m, signs, hg_kb_cmp(m, HG_CMP_NE, c, r, imm(c, 0.0)));
}

// numpy's npy_floor_divide (via npy_divmod) for floats.
static hg_operand float_floor_divide(hg_kb* m, hg_dtype c, hg_operand a, hg_operand b) {
    hg_operand mod = hg_kb_op2(m, HG_OP_REM, c, a, b);
    hg_operand div = hg_kb_op2(m, HG_OP_DIV, c, hg_kb_op2(m, HG_OP_SUB, c, a, mod), b);
    div = hg_kb_sel(m, c, needs_adjust(m, c, mod, b), hg_kb_op2(m, HG_OP_SUB, c, div, imm(c, 1.0)),
                    div);
    hg_operand fl = hg_kb_op1(m, HG_OP_FLOOR, c, div);
    hg_operand up = hg_kb_cmp(m, HG_CMP_GT, c, hg_kb_op2(m, HG_OP_SUB, c, div, fl), imm(c, 0.5));
    fl = hg_kb_sel(m, c, up, hg_kb_op2(m, HG_OP_ADD, c, fl, imm(c, 1.0)), fl);
    hg_operand q = hg_kb_op2(m, HG_OP_DIV, c, a, b);
    // A zero quotient takes the sign of a / b (finite here), i.e. copysign(0, a / b).
    hg_operand signed_zero = hg_kb_op2(m, HG_OP_MUL, c, q, imm(c, 0.0));
    fl = hg_kb_sel(m, c, hg_kb_cmp(m, HG_CMP_EQ, c, div, imm(c, 0.0)), signed_zero, fl);
    return hg_kb_sel(m, c, hg_kb_cmp(m, HG_CMP_EQ, c, b, imm(c, 0.0)), q, fl);
}

// numpy's npy_remainder for floats: fmod moved to the divisor's sign; a zero takes b's sign.
static hg_operand float_remainder(hg_kb* m, hg_dtype c, hg_operand a, hg_operand b) {
    hg_operand mod = hg_kb_op2(m, HG_OP_REM, c, a, b);
    mod = hg_kb_sel(m, c, needs_adjust(m, c, mod, b), hg_kb_op2(m, HG_OP_ADD, c, mod, b), mod);
    hg_operand zero = hg_kb_sel(m, c, hg_kb_cmp(m, HG_CMP_LT, c, b, imm(c, 0.0)), imm(c, -0.0),
                                imm(c, 0.0));
    return hg_kb_sel(m, c, hg_kb_cmp(m, HG_CMP_EQ, c, mod, imm(c, 0.0)), zero, mod);
}

static hg_operand int_floor_divide(hg_kb* m, hg_dtype c, hg_operand a, hg_operand b) {
    hg_operand q = hg_kb_op2(m, HG_OP_DIV, c, a, b);   // truncates; MIN / -1 = MIN
    if (hg_dtype_is_signed_int((int)c)) {
        hg_operand r = hg_kb_op2(m, HG_OP_REM, c, a, b);
        q = hg_kb_sel(m, c, needs_adjust(m, c, r, b), hg_kb_op2(m, HG_OP_SUB, c, q, imm(c, 1.0)),
                      q);
    }
    return hg_kb_sel(m, c, hg_kb_cmp(m, HG_CMP_EQ, c, b, imm(c, 0.0)), imm(c, 0.0), q);
}

static hg_operand int_remainder(hg_kb* m, hg_dtype c, hg_operand a, hg_operand b) {
    hg_operand r = hg_kb_op2(m, HG_OP_REM, c, a, b);   // MIN % -1 = 0
    if (hg_dtype_is_signed_int((int)c))
        r = hg_kb_sel(m, c, needs_adjust(m, c, r, b), hg_kb_op2(m, HG_OP_ADD, c, r, b), r);
    return hg_kb_sel(m, c, hg_kb_cmp(m, HG_CMP_EQ, c, b, imm(c, 0.0)), imm(c, 0.0), r);
}

// Integer power by squaring (wrapping like repeated multiplication); a negative exponent gives 0.
static hg_operand int_pow(hg_kb* m, hg_dtype c, hg_operand a, hg_operand b) {
    int is_signed = hg_dtype_is_signed_int((int)c);
    hg_operand neg = hg_imm_bool(0);
    uint32_t r = hg_kb_new_reg(m, c), base = hg_kb_new_reg(m, c), e = hg_kb_new_reg(m, c);
    hg_kb_set(m, HG_OP_MOV, c, r, imm(c, 1.0), hg_none(), hg_none());
    hg_kb_set(m, HG_OP_MOV, c, base, a, hg_none(), hg_none());
    if (is_signed) {
        neg = hg_kb_cmp(m, HG_CMP_LT, c, b, imm(c, 0.0));
        hg_kb_set(m, HG_OP_SEL, c, e, neg, imm(c, 0.0), b);
    } else {
        hg_kb_set(m, HG_OP_MOV, c, e, b, hg_none(), hg_none());
    }
    hg_kb_ctl(m, HG_OP_LOOP, hg_none());
    hg_operand odd = hg_kb_cmp(m, HG_CMP_NE, c, hg_kb_op2(m, HG_OP_AND, c, hg_reg(e), imm(c, 1.0)),
                               imm(c, 0.0));
    hg_operand prod = hg_kb_op2(m, HG_OP_MUL, c, hg_reg(r), hg_reg(base));
    hg_kb_set(m, HG_OP_SEL, c, r, odd, prod, hg_reg(r));
    hg_kb_set(m, HG_OP_SHR, c, e, hg_reg(e), imm(c, 1.0), hg_none());
    hg_kb_ctl(m, HG_OP_BREAK, hg_kb_cmp(m, HG_CMP_EQ, c, hg_reg(e), imm(c, 0.0)));
    hg_kb_set(m, HG_OP_MUL, c, base, hg_reg(base), hg_reg(base), hg_none());
    hg_kb_ctl(m, HG_OP_ENDLOOP, hg_none());
    if (!is_signed) return hg_reg(r);
    return hg_kb_sel(m, c, neg, imm(c, 0.0), hg_reg(r));
}

// pow(a, b) = exp(b log|a|) in f64 with C99's special cases (F.9.4.4) applied by selects.
static hg_operand pow_f64(hg_kb* m, hg_operand a, hg_operand b) {
    hg_operand ax = hg_kb_op1(m, HG_OP_ABS, F64, a);
    hg_operand r = hg_kb_op1(m, HG_OP_EXP, F64,
                             hg_kb_op2(m, HG_OP_MUL, F64, b, hg_kb_op1(m, HG_OP_LOG, F64, ax)));
    hg_operand is_int = hg_kb_cmp(m, HG_CMP_EQ, F64, hg_kb_op1(m, HG_OP_FLOOR, F64, b), b);
    hg_operand half = hg_kb_op2(m, HG_OP_MUL, F64, b, imm(F64, 0.5));
    hg_operand odd = both(m, is_int, hg_kb_cmp(m, HG_CMP_NE, F64,
                                               hg_kb_op1(m, HG_OP_TRUNC, F64, half), half));
    // The sign bit of a (-0 included): a < 0 or 1 / a < 0.
    hg_operand sgn = hg_kb_op2(m, HG_OP_OR, BOOL, hg_kb_cmp(m, HG_CMP_LT, F64, a, imm(F64, 0.0)),
                               hg_kb_cmp(m, HG_CMP_LT, F64,
                                         hg_kb_op2(m, HG_OP_DIV, F64, imm(F64, 1.0), a),
                                         imm(F64, 0.0)));
    r = hg_kb_sel(m, F64, both(m, sgn, odd), hg_kb_op1(m, HG_OP_NEG, F64, r), r);
    // A finite negative base with a non-integer exponent: NaN.
    hg_operand neg_finite = both(m, hg_kb_cmp(m, HG_CMP_LT, F64, a, imm(F64, 0.0)),
                                 hg_kb_cmp(m, HG_CMP_GT, F64, a, imm(F64, -INFINITY)));
    hg_operand not_int = hg_kb_op1(m, HG_OP_NOT, BOOL, is_int);
    r = hg_kb_sel(m, F64, both(m, neg_finite, not_int), imm(F64, NAN), r);
    // pow(+-1, +-inf) = 1, pow(1, y) = 1, pow(x, +-0) = 1 (NaN included).
    hg_operand one_inf = both(m, hg_kb_cmp(m, HG_CMP_EQ, F64, ax, imm(F64, 1.0)),
                              hg_kb_cmp(m, HG_CMP_EQ, F64, hg_kb_op1(m, HG_OP_ABS, F64, b),
                                        imm(F64, INFINITY)));
    hg_operand one = hg_kb_op2(m, HG_OP_OR, BOOL, one_inf,
                               hg_kb_op2(m, HG_OP_OR, BOOL,
                                         hg_kb_cmp(m, HG_CMP_EQ, F64, a, imm(F64, 1.0)),
                                         hg_kb_cmp(m, HG_CMP_EQ, F64, b, imm(F64, 0.0))));
    return hg_kb_sel(m, F64, one, imm(F64, 1.0), r);
}

// f64 pow with a small integer exponent (|b| <= 16) by squaring: exact whenever the result is
// representable (2^3 = 8, 10^5 = 100000, where exp(b log a) is off by an ULP or more) and within
// a few ULPs otherwise. Other exponents, and x^-n when x^n overflows, take pow_f64's result.
static hg_operand pow_f64_small_int(hg_kb* m, hg_operand a, hg_operand b, hg_operand general) {
    hg_operand ab = hg_kb_op1(m, HG_OP_ABS, F64, b);
    hg_operand use = both(m, hg_kb_cmp(m, HG_CMP_EQ, F64, hg_kb_op1(m, HG_OP_FLOOR, F64, b), b),
                          hg_kb_cmp(m, HG_CMP_LE, F64, ab, imm(F64, 16.0)));
    uint32_t r = hg_kb_new_reg(m, F64), base = hg_kb_new_reg(m, F64);
    uint32_t e = hg_kb_new_reg(m, HG_DTYPE_I32);
    hg_kb_set(m, HG_OP_MOV, F64, r, imm(F64, 1.0), hg_none(), hg_none());
    hg_kb_set(m, HG_OP_MOV, F64, base, a, hg_none(), hg_none());
    hg_operand e0 = hg_kb_cvt(m, HG_DTYPE_I32, F64, hg_kb_sel(m, F64, use, ab, imm(F64, 0.0)));
    hg_kb_set(m, HG_OP_MOV, HG_DTYPE_I32, e, e0, hg_none(), hg_none());
    hg_kb_ctl(m, HG_OP_LOOP, hg_none());
    hg_operand odd = hg_kb_cmp(m, HG_CMP_NE, HG_DTYPE_I32,
                               hg_kb_op2(m, HG_OP_AND, HG_DTYPE_I32, hg_reg(e),
                                         imm(HG_DTYPE_I32, 1.0)),
                               imm(HG_DTYPE_I32, 0.0));
    hg_kb_set(m, HG_OP_SEL, F64, r, odd, hg_kb_op2(m, HG_OP_MUL, F64, hg_reg(r), hg_reg(base)),
              hg_reg(r));
    hg_kb_set(m, HG_OP_SHR, HG_DTYPE_I32, e, hg_reg(e), imm(HG_DTYPE_I32, 1.0), hg_none());
    hg_kb_ctl(m, HG_OP_BREAK, hg_kb_cmp(m, HG_CMP_EQ, HG_DTYPE_I32, hg_reg(e),
                                        imm(HG_DTYPE_I32, 0.0)));
    hg_kb_set(m, HG_OP_MUL, F64, base, hg_reg(base), hg_reg(base), hg_none());
    hg_kb_ctl(m, HG_OP_ENDLOOP, hg_none());
    hg_operand inv = hg_kb_op2(m, HG_OP_DIV, F64, imm(F64, 1.0), hg_reg(r));
    hg_operand r_inf = hg_kb_cmp(m, HG_CMP_EQ, F64, hg_kb_op1(m, HG_OP_ABS, F64, hg_reg(r)),
                                 imm(F64, INFINITY));
    hg_operand neg = hg_kb_sel(m, F64, r_inf, general, inv);
    hg_operand v = hg_kb_sel(m, F64, hg_kb_cmp(m, HG_CMP_LT, F64, b, imm(F64, 0.0)), neg,
                             hg_reg(r));
    return hg_kb_sel(m, F64, use, v, general);
}

static hg_operand logical(hg_kb* m, hg_opcode op, hg_dtype c, hg_operand a, hg_operand b) {
    if (c != BOOL) {
        a = hg_kb_cmp(m, HG_CMP_NE, c, a, imm(c, 0.0));
        b = hg_kb_cmp(m, HG_CMP_NE, c, b, imm(c, 0.0));
    }
    return hg_kb_op2(m, op, BOOL, a, b);
}

hg_operand hg_ew_emit_binary(hg_kb* m, hg_binary_op op, hg_dtype ct, hg_dtype rt,
                             hg_operand a, hg_operand b) {
    hg_dtype c = hg_ew_compute_dtype(ct);
    int is_bool = ct == BOOL, is_float = hg_dtype_is_float((int)ct);
    switch (op) {
    case HG_BINARY_ADD: return hg_kb_op2(m, is_bool ? HG_OP_OR : HG_OP_ADD, c, a, b);
    case HG_BINARY_SUB: return hg_kb_op2(m, HG_OP_SUB, c, a, b);
    case HG_BINARY_MUL: return hg_kb_op2(m, is_bool ? HG_OP_AND : HG_OP_MUL, c, a, b);
    case HG_BINARY_DIV: return hg_kb_op2(m, HG_OP_DIV, c, a, b);
    case HG_BINARY_FLOOR_DIVIDE:
        return is_float ? float_floor_divide(m, c, a, b) : int_floor_divide(m, c, a, b);
    case HG_BINARY_REMAINDER:
        return is_float ? float_remainder(m, c, a, b) : int_remainder(m, c, a, b);
    case HG_BINARY_POW: {
        if (!is_float) return int_pow(m, c, a, b);
        hg_operand a64 = hg_kb_cvt(m, F64, c, a), b64 = hg_kb_cvt(m, F64, c, b);
        hg_operand r = pow_f64(m, a64, b64);
        // f32 and narrower: exp(b log a) in f64 already rounds to the exact f32 result.
        if (ct == F64) r = pow_f64_small_int(m, a64, b64, r);
        return hg_ew_narrow_f64(m, rt, r);
    }
    case HG_BINARY_MINIMUM: return hg_kb_op2(m, is_bool ? HG_OP_AND : HG_OP_MIN, c, a, b);
    case HG_BINARY_MAXIMUM: return hg_kb_op2(m, is_bool ? HG_OP_OR : HG_OP_MAX, c, a, b);
    case HG_BINARY_EQ: return hg_kb_cmp(m, HG_CMP_EQ, c, a, b);
    case HG_BINARY_NE: return hg_kb_cmp(m, HG_CMP_NE, c, a, b);
    case HG_BINARY_LT: return hg_kb_cmp(m, HG_CMP_LT, c, a, b);
    case HG_BINARY_LE: return hg_kb_cmp(m, HG_CMP_LE, c, a, b);
    case HG_BINARY_GT: return hg_kb_cmp(m, HG_CMP_GT, c, a, b);
    case HG_BINARY_GE: return hg_kb_cmp(m, HG_CMP_GE, c, a, b);
    case HG_BINARY_LOGICAL_AND: return logical(m, HG_OP_AND, c, a, b);
    case HG_BINARY_LOGICAL_OR: return logical(m, HG_OP_OR, c, a, b);
    case HG_BINARY_LOGICAL_XOR: return logical(m, HG_OP_XOR, c, a, b);
    case HG_BINARY_BITWISE_AND: return hg_kb_op2(m, HG_OP_AND, c, a, b);
    case HG_BINARY_BITWISE_OR: return hg_kb_op2(m, HG_OP_OR, c, a, b);
    case HG_BINARY_BITWISE_XOR: return hg_kb_op2(m, HG_OP_XOR, c, a, b);
    case HG_BINARY_LEFT_SHIFT: return hg_kb_op2(m, HG_OP_SHL, c, a, b);
    case HG_BINARY_RIGHT_SHIFT: return hg_kb_op2(m, HG_OP_SHR, c, a, b);
    default: return a;
    }
}

hg_operand hg_ew_emit_fma(hg_kb* m, hg_dtype t, hg_operand a, hg_operand b, hg_operand c) {
    if (t == BOOL) return hg_kb_op2(m, HG_OP_OR, BOOL, hg_kb_op2(m, HG_OP_AND, BOOL, a, b), c);
    if (hg_ew_compute_dtype(t) == t) return hg_kb_op3(m, HG_OP_FMA, t, a, b, c);
    // f16/bf16: the product is exact in f64 and the sum is rounded once to f64, then once to t.
    hg_operand r = hg_kb_op3(m, HG_OP_FMA, F64, hg_kb_cvt(m, F64, HG_DTYPE_F32, a),
                             hg_kb_cvt(m, F64, HG_DTYPE_F32, b), hg_kb_cvt(m, F64, HG_DTYPE_F32, c));
    return hg_ew_narrow_f64(m, t, r);
}
