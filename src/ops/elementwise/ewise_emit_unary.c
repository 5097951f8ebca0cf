// ISA emission of the unary ops. gelu (tanh form) is the ISA's gelu instruction for every float
// dtype. The composite functions expm1, log1p, softplus and silu are emitted for f32 (and
// f16/bf16, computed in f32) as f32 instruction sequences built on the vectorized f32 exp/log
// (ewise_emit_fast.c). gelu_erf of f32/f16/bf16 is the ISA's gelu_erf instruction (erfc-based:
// 1 + erf(x) in f32 cancels in the negative tail); the f64 forms here are
// evaluated in f64 and rounded once.
#include <math.h>
#include "base/dtype.h"
#include "ops/elementwise/ewise_emit_fast.h"
#include "ops/elementwise/ewise_internal.h"

#define F64 HG_DTYPE_F64

static hg_operand imm(hg_dtype t, double v) { return hg_kb_imm(t, v); }

hg_operand hg_ew_narrow_f64(hg_kb* m, hg_dtype rt, hg_operand r) {
    hg_dtype c = hg_ew_compute_dtype(rt);
    if (c == rt) return hg_kb_cvt(m, rt, F64, r);
    // f16/bf16: round from f64 once; widening back to f32 is exact.
    return hg_kb_cvt(m, c, rt, hg_kb_cvt(m, rt, F64, r));
}

// log1p(x) = log(u) * x / (u - 1) with u = 1 + x rounded (the rounding error of u cancels in
// the quotient; Goldberg, "What every computer scientist should know...", Thm 4).
static hg_operand log1p_f64(hg_kb* m, hg_operand x) {
    hg_operand u = hg_kb_op2(m, HG_OP_ADD, F64, x, imm(F64, 1.0));
    hg_operand um1 = hg_kb_op2(m, HG_OP_SUB, F64, u, imm(F64, 1.0));
    hg_operand q = hg_kb_op2(m, HG_OP_DIV, F64, x, um1);
    hg_operand r = hg_kb_op2(m, HG_OP_MUL, F64, hg_kb_op1(m, HG_OP_LOG, F64, u), q);
    r = hg_kb_sel(m, F64, hg_kb_cmp(m, HG_CMP_EQ, F64, u, imm(F64, 1.0)), x, r);
    return hg_kb_sel(m, F64, hg_kb_cmp(m, HG_CMP_EQ, F64, x, imm(F64, INFINITY)), x, r);
}

// expm1(x) = (u - 1) * x / log(u) with u = exp(x) rounded (Kahan's trick).
static hg_operand expm1_f64(hg_kb* m, hg_operand x) {
    hg_operand u = hg_kb_op1(m, HG_OP_EXP, F64, x);
    hg_operand um1 = hg_kb_op2(m, HG_OP_SUB, F64, u, imm(F64, 1.0));
    hg_operand q = hg_kb_op2(m, HG_OP_DIV, F64, x, hg_kb_op1(m, HG_OP_LOG, F64, u));
    hg_operand r = hg_kb_op2(m, HG_OP_MUL, F64, um1, q);
    r = hg_kb_sel(m, F64, hg_kb_cmp(m, HG_CMP_EQ, F64, u, imm(F64, 1.0)), x, r);
    r = hg_kb_sel(m, F64, hg_kb_cmp(m, HG_CMP_EQ, F64, um1, imm(F64, -1.0)), imm(F64, -1.0), r);
    return hg_kb_sel(m, F64, hg_kb_cmp(m, HG_CMP_EQ, F64, u, imm(F64, INFINITY)), u, r);
}

// -inf * (a factor that tends to 0) is NaN; the limit of these functions there is -0.
static hg_operand fix_neg_inf(hg_kb* m, hg_operand x, hg_operand r) {
    hg_operand p = hg_kb_cmp(m, HG_CMP_EQ, F64, x, imm(F64, -INFINITY));
    return hg_kb_sel(m, F64, p, imm(F64, -0.0), r);
}

static hg_operand softplus_f64(hg_kb* m, hg_operand x) {
    hg_operand na = hg_kb_op1(m, HG_OP_NEG, F64, hg_kb_op1(m, HG_OP_ABS, F64, x));
    hg_operand l = log1p_f64(m, hg_kb_op1(m, HG_OP_EXP, F64, na));
    return hg_kb_op2(m, HG_OP_ADD, F64, hg_kb_op2(m, HG_OP_MAX, F64, x, imm(F64, 0.0)), l);
}

static hg_operand silu_f64(hg_kb* m, hg_operand x) {
    hg_operand r = hg_kb_op2(m, HG_OP_MUL, F64, x, hg_kb_op1(m, HG_OP_SIGMOID, F64, x));
    return fix_neg_inf(m, x, r);
}

// x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2. Below x = -3 that sum cancels, so Phi is
// erfc(t) / 2 with t = -x / sqrt 2 from erfc's continued fraction
// erfc(t) = exp(-t^2) / sqrt(pi) / (t + (1/2) / (t + 1 / (t + (3/2) / (t + ...)))),
// 40 terms: relative error < 1e-14 for t >= 2.1 (x <= -3).
static hg_operand gelu_erf_f64(hg_kb* m, hg_operand x) {
    hg_operand t = hg_kb_op2(m, HG_OP_MUL, F64, x, imm(F64, -0.7071067811865476));
    hg_operand erf = hg_kb_op1(m, HG_OP_ERF, F64, hg_kb_op1(m, HG_OP_NEG, F64, t));
    uint32_t phi = hg_kb_new_reg(m, F64);
    hg_kb_set(m, HG_OP_MUL, F64, phi, hg_kb_op2(m, HG_OP_ADD, F64, erf, imm(F64, 1.0)),
              imm(F64, 0.5), hg_none());
    // The tail in a branch: chunks of lanes that all stay above -3 skip its 40 divisions.
    hg_kb_ctl(m, HG_OP_IF, hg_kb_cmp(m, HG_CMP_LT, F64, x, imm(F64, -3.0)));
    hg_operand f = t;
    for (int k = 40; k >= 1; k--)
        f = hg_kb_op2(m, HG_OP_ADD, F64, t, hg_kb_op2(m, HG_OP_DIV, F64, imm(F64, 0.5 * k), f));
    // exp(-t^2) with t^2 = x^2 / 2: x^2 is exact for inputs of f32 precision.
    hg_operand e = hg_kb_op1(m, HG_OP_EXP, F64,
                             hg_kb_op2(m, HG_OP_MUL, F64, hg_kb_op2(m, HG_OP_MUL, F64, x, x),
                                       imm(F64, -0.5)));
    hg_kb_set(m, HG_OP_DIV, F64, phi,
              hg_kb_op2(m, HG_OP_MUL, F64, e, imm(F64, 0.28209479177387814)),   // 1/(2 sqrt(pi))
              f, hg_none());
    hg_kb_ctl(m, HG_OP_ENDIF, hg_none());
    return fix_neg_inf(m, x, hg_kb_op2(m, HG_OP_MUL, F64, x, hg_reg(phi)));
}

static hg_operand composite(hg_kb* m, hg_unary_op op, hg_dtype c, hg_dtype rt,
                            hg_operand x) {
    // The f32 result of an f16/bf16 op is rounded once more by the caller (set_result); with
    // the f32 error a few f32 ULP, that stays within 1 ULP of the correctly rounded f16/bf16.
    if (c == HG_DTYPE_F32 && hg_ew_unary_has_f32_fast(op)) return hg_ew_unary_f32_fast(m, op, x);
    hg_operand w = hg_kb_cvt(m, F64, c, x), r;
    switch (op) {
    case HG_UNARY_EXPM1: r = expm1_f64(m, w); break;
    case HG_UNARY_LOG1P: r = log1p_f64(m, w); break;
    case HG_UNARY_SOFTPLUS: r = softplus_f64(m, w); break;
    case HG_UNARY_SILU: r = silu_f64(m, w); break;
    default: r = gelu_erf_f64(m, w); break;
    }
    return hg_ew_narrow_f64(m, rt, r);
}

static hg_operand sign_of(hg_kb* m, hg_dtype c, hg_operand x) {
    hg_operand zero = imm(c, 0.0);
    hg_operand gt = hg_kb_cmp(m, HG_CMP_GT, c, x, zero);
    if (hg_dtype_is_unsigned_int((int)c)) return hg_kb_sel(m, c, gt, imm(c, 1.0), zero);
    hg_operand lt = hg_kb_cmp(m, HG_CMP_LT, c, x, zero);
    // Floats: +-0 and NaN are returned as they are (sign(-0.0) = -0.0).
    hg_operand rest = hg_dtype_is_float((int)c) ? x : zero;
    return hg_kb_sel(m, c, gt, imm(c, 1.0), hg_kb_sel(m, c, lt, imm(c, -1.0), rest));
}

// Integer reciprocal: 1 / x truncated: 1 for 1, -1 for -1, 0 otherwise (0 for x = 0 too, as
// floor_divide's x // 0 = 0).
static hg_operand int_reciprocal(hg_kb* m, hg_dtype c, hg_operand x) {
    hg_operand r = hg_kb_sel(m, c, hg_kb_cmp(m, HG_CMP_EQ, c, x, imm(c, 1.0)), imm(c, 1.0),
                             imm(c, 0.0));
    if (hg_dtype_is_unsigned_int((int)c)) return r;
    return hg_kb_sel(m, c, hg_kb_cmp(m, HG_CMP_EQ, c, x, imm(c, -1.0)), imm(c, -1.0), r);
}

hg_operand hg_ew_emit_unary(hg_kb* m, hg_unary_op op, hg_dtype xt, hg_dtype rt, hg_operand x) {
    hg_dtype c = hg_ew_compute_dtype(xt);
    int is_float = hg_dtype_is_float((int)xt), is_bool = xt == HG_DTYPE_BOOL;
    switch (op) {
    case HG_UNARY_NEG: return hg_kb_op1(m, HG_OP_NEG, c, x);
    case HG_UNARY_ABS: return is_bool ? x : hg_kb_op1(m, HG_OP_ABS, c, x);
    case HG_UNARY_SIGN: return sign_of(m, c, x);
    case HG_UNARY_SQRT: return hg_kb_op1(m, HG_OP_SQRT, c, x);
    case HG_UNARY_RSQRT: return hg_kb_op1(m, HG_OP_RSQRT, c, x);
    case HG_UNARY_RECIPROCAL:
        return is_float ? hg_kb_op2(m, HG_OP_DIV, c, imm(c, 1.0), x) : int_reciprocal(m, c, x);
    case HG_UNARY_SQUARE: return hg_kb_op2(m, HG_OP_MUL, c, x, x);
    case HG_UNARY_EXP: return hg_kb_op1(m, HG_OP_EXP, c, x);
    case HG_UNARY_EXP2: return hg_kb_op1(m, HG_OP_EXP2, c, x);
    case HG_UNARY_LOG: return hg_kb_op1(m, HG_OP_LOG, c, x);
    case HG_UNARY_LOG2: return hg_kb_op1(m, HG_OP_LOG2, c, x);
    case HG_UNARY_SIN: return hg_kb_op1(m, HG_OP_SIN, c, x);
    case HG_UNARY_COS: return hg_kb_op1(m, HG_OP_COS, c, x);
    case HG_UNARY_TANH: return hg_kb_op1(m, HG_OP_TANH, c, x);
    case HG_UNARY_SIGMOID: return hg_kb_op1(m, HG_OP_SIGMOID, c, x);
    case HG_UNARY_ERF: return hg_kb_op1(m, HG_OP_ERF, c, x);
    case HG_UNARY_GELU: return hg_kb_op1(m, HG_OP_GELU, c, x);
    case HG_UNARY_GELU_ERF:   // f32 (and f16/bf16 through it): the instruction; f64 below
        if (c != F64) return hg_kb_op1(m, HG_OP_GELU_ERF, c, x);
        return composite(m, op, c, rt, x);
    case HG_UNARY_EXPM1: case HG_UNARY_LOG1P: case HG_UNARY_SOFTPLUS: case HG_UNARY_SILU:
        return composite(m, op, c, rt, x);
    case HG_UNARY_RELU:
        if (is_bool || hg_dtype_is_unsigned_int((int)xt)) return x;
        return hg_kb_op2(m, HG_OP_MAX, c, x, imm(c, 0.0));
    case HG_UNARY_FLOOR: return is_float ? hg_kb_op1(m, HG_OP_FLOOR, c, x) : x;
    case HG_UNARY_CEIL: return is_float ? hg_kb_op1(m, HG_OP_CEIL, c, x) : x;
    case HG_UNARY_ROUND: return is_float ? hg_kb_op1(m, HG_OP_ROUND, c, x) : x;
    case HG_UNARY_TRUNC: return is_float ? hg_kb_op1(m, HG_OP_TRUNC, c, x) : x;
    case HG_UNARY_LOGICAL_NOT:
        if (is_bool) return hg_kb_op1(m, HG_OP_NOT, c, x);
        return hg_kb_cmp(m, HG_CMP_EQ, c, x, imm(c, 0.0));
    case HG_UNARY_BITWISE_NOT: return hg_kb_op1(m, HG_OP_NOT, c, x);
    case HG_UNARY_ISNAN:
        return is_float ? hg_kb_cmp(m, HG_CMP_NE, c, x, x) : hg_imm_bool(0);
    case HG_UNARY_ISINF:
        return is_float ? hg_kb_cmp(m, HG_CMP_EQ, c, hg_kb_op1(m, HG_OP_ABS, c, x),
                                    imm(c, INFINITY))
                        : hg_imm_bool(0);
    case HG_UNARY_ISFINITE:
        return is_float ? hg_kb_cmp(m, HG_CMP_LT, c, hg_kb_op1(m, HG_OP_ABS, c, x),
                                    imm(c, INFINITY))
                        : hg_imm_bool(1);
    default:
        return x;
    }
}
