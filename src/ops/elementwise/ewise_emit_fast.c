// f32 emission of expm1, log1p, softplus and silu as short sequences of the
// ISA's f32 instructions, so they run at the speed of the vectorized exp/log (an f64 evaluation
// calls scalar libm per element). Each sequence is arranged so the error of the f32 exp/log
// (<= 2 ULP, docs/math_accuracy.md) is not amplified: no cancellation, no argument rounded
// before a function that magnifies it, no intermediate that goes subnormal where the result does
// not. Measured maxima are in docs/ops.md (tests/test_ops_unary_ulp.c).
#include <float.h>
#include <math.h>
#include "ops/elementwise/ewise_emit_fast.h"

#define F32 HG_DTYPE_F32

static hg_operand f32c(double v) { return hg_kb_imm(F32, v); }

static hg_operand op1(hg_kb* m, hg_opcode o, hg_operand a) { return hg_kb_op1(m, o, F32, a); }
static hg_operand op2(hg_kb* m, hg_opcode o, hg_operand a, hg_operand b) {
    return hg_kb_op2(m, o, F32, a, b);
}

// -inf * (a factor that tends to 0) is NaN, while the limit of silu/gelu there is -0: the final
// multiplication uses max(x, -FLT_MAX) instead (one instruction; NaN stays NaN).
static hg_operand finite_below(hg_kb* m, hg_operand x) {
    return op2(m, HG_OP_MAX, x, f32c(-FLT_MAX));
}

// expm1(x) = (u - 1) * (x / log(u)) with u = exp(x) rounded (Kahan): the error of u cancels in
// the quotient (it only moves the point at which (u - 1) / log(u) is evaluated), so the result
// carries the error of log plus three roundings. u == 1: x (keeps -0 and tiny x); u - 1 == -1
// (u below 2^-24, log may be -inf): -1; u == inf: inf.
static hg_operand expm1_f32(hg_kb* m, hg_operand x) {
    hg_operand u = op1(m, HG_OP_EXP, x);
    hg_operand um1 = op2(m, HG_OP_SUB, u, f32c(1.0));
    hg_operand q = op2(m, HG_OP_DIV, x, op1(m, HG_OP_LOG, u));
    hg_operand r = op2(m, HG_OP_MUL, um1, q);
    r = hg_kb_sel(m, F32, hg_kb_cmp(m, HG_CMP_EQ, F32, u, f32c(1.0)), x, r);
    r = hg_kb_sel(m, F32, hg_kb_cmp(m, HG_CMP_EQ, F32, um1, f32c(-1.0)), f32c(-1.0), r);
    return hg_kb_sel(m, F32, hg_kb_cmp(m, HG_CMP_EQ, F32, u, f32c(INFINITY)), u, r);
}

// log(1 + x) for 1 + x = u rounded: log(u) - c / u with c = (u - 1) - x the rounding error of u
// (exact for x in [-0.5, 1], where it matters). d = c / u is NaN only for u = 0 (x = -1) and
// x = inf: log(u) alone is then the answer. Returns d's NaN test separately so callers that
// cannot meet those inputs skip it.
static hg_operand log1p_core(hg_kb* m, hg_operand x, hg_operand* d_out, hg_operand* lu_out) {
    hg_operand u = op2(m, HG_OP_ADD, x, f32c(1.0));
    hg_operand lu = op1(m, HG_OP_LOG, u);
    hg_operand c = op2(m, HG_OP_SUB, op2(m, HG_OP_SUB, u, f32c(1.0)), x);
    hg_operand d = op2(m, HG_OP_DIV, c, u);
    *d_out = d;
    *lu_out = lu;
    return op2(m, HG_OP_SUB, lu, d);
}

static hg_operand log1p_f32(hg_kb* m, hg_operand x) {
    hg_operand d, lu;
    hg_operand r = log1p_core(m, x, &d, &lu);
    r = hg_kb_sel(m, F32, hg_kb_cmp(m, HG_CMP_NE, F32, d, d), lu, r);
    // x = -0: log(1) - 0 is +0, log1p(-0) is -0.
    return hg_kb_sel(m, F32, hg_kb_cmp(m, HG_CMP_EQ, F32, x, f32c(0.0)), x, r);
}

// max(x, 0) + log1p(e), e = exp(-|x|) in [0, 1]: never overflows; 1 + e needs none of log1p's
// special cases (e = 0 gives 0, a subnormal e gives e).
static hg_operand softplus_f32(hg_kb* m, hg_operand x) {
    hg_operand e = op1(m, HG_OP_EXP, op1(m, HG_OP_NEG, op1(m, HG_OP_ABS, x)));
    hg_operand d, lu;
    hg_operand l = log1p_core(m, e, &d, &lu);
    return op2(m, HG_OP_ADD, op2(m, HG_OP_MAX, x, f32c(0.0)), l);
}

// silu(x) = x * sigmoid(x). With h = exp(-|x| / 2) (the halving is exact) and e = h^2:
// x >= 0: x / (1 + e); x < 0: (x * (h / (1 + e))) * h. Splitting e^-|x| in two factors keeps
// every intermediate normal where the result is (down to x ~ -92, where e^x alone would be
// subnormal and lose relative accuracy), and the last multiplication rounds once.
static hg_operand silu_f32(hg_kb* m, hg_operand x) {
    hg_operand nh = op2(m, HG_OP_MUL, op1(m, HG_OP_ABS, x), f32c(-0.5));
    hg_operand h = op1(m, HG_OP_EXP, nh);
    hg_operand den = hg_kb_op3(m, HG_OP_FMA, F32, h, h, f32c(1.0));
    hg_operand pos = hg_kb_cmp(m, HG_CMP_GE, F32, x, f32c(0.0));
    hg_operand q = op2(m, HG_OP_DIV, hg_kb_sel(m, F32, pos, f32c(1.0), h), den);
    hg_operand r = op2(m, HG_OP_MUL, finite_below(m, x), q);
    return op2(m, HG_OP_MUL, r, hg_kb_sel(m, F32, pos, f32c(1.0), h));
}

int hg_ew_unary_has_f32_fast(hg_unary_op op) {
    return op == HG_UNARY_EXPM1 || op == HG_UNARY_LOG1P || op == HG_UNARY_SOFTPLUS ||
           op == HG_UNARY_SILU;
}

hg_operand hg_ew_unary_f32_fast(hg_kb* m, hg_unary_op op, hg_operand x) {
    switch (op) {
    case HG_UNARY_EXPM1: return expm1_f32(m, x);
    case HG_UNARY_LOG1P: return log1p_f32(m, x);
    case HG_UNARY_SOFTPLUS: return softplus_f32(m, x);
    default: return silu_f32(m, x);
    }
}
