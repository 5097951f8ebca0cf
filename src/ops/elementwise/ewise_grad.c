// Activation gradients as elementwise expressions (hg_activation_backward): dL/dx of
// y = op(x) from g = dL/dy, built from the same nodes as the forward ops, so the whole formula
// compiles to one fused kernel on every backend. Values are in the compute dtype (f32 for
// f16/bf16/f32, f64 for f64); the caller casts the inputs to it and the result back.
#include "ops/elementwise/ewise_grad.h"
#include <math.h>

int hg_ew_act_grad_needs(hg_unary_op op) {
    switch (op) {
    case HG_UNARY_NEG: case HG_UNARY_SIGN: case HG_UNARY_FLOOR: case HG_UNARY_CEIL:
    case HG_UNARY_ROUND: case HG_UNARY_TRUNC:
        return 0;
    case HG_UNARY_ABS: case HG_UNARY_SQUARE: case HG_UNARY_LOG: case HG_UNARY_LOG1P:
    case HG_UNARY_LOG2: case HG_UNARY_SIN: case HG_UNARY_COS: case HG_UNARY_RELU:
    case HG_UNARY_GELU: case HG_UNARY_SILU: case HG_UNARY_SOFTPLUS: case HG_UNARY_ERF:
        return HG_EW_GRAD_X;
    case HG_UNARY_SQRT: case HG_UNARY_RSQRT: case HG_UNARY_RECIPROCAL: case HG_UNARY_EXP:
    case HG_UNARY_EXPM1: case HG_UNARY_EXP2: case HG_UNARY_TANH: case HG_UNARY_SIGMOID:
        return HG_EW_GRAD_Y;
    case HG_UNARY_GELU_ERF:
        return HG_EW_GRAD_X | HG_EW_GRAD_Y;
    default:
        return -1;
    }
}

// Shorthands: every node below is in dtype t (the builder's errors propagate as -1).
typedef struct gb {
    hg_ew_expr* e;
    hg_dtype t;
} gb;
static int32_t k_(gb* b, double v) { return hg_ew_const(b->e, b->t, hg_scalar_f(v)); }
static int32_t u_(gb* b, hg_unary_op op, int32_t x) { return x < 0 ? -1 : hg_ew_unary(b->e, op, x); }
static int32_t bin(gb* b, hg_binary_op op, int32_t x, int32_t y) {
    return x < 0 || y < 0 ? -1 : hg_ew_binary(b->e, op, x, y);
}
static int32_t mul(gb* b, int32_t x, int32_t y) { return bin(b, HG_BINARY_MUL, x, y); }
static int32_t add(gb* b, int32_t x, int32_t y) { return bin(b, HG_BINARY_ADD, x, y); }
static int32_t sub(gb* b, int32_t x, int32_t y) { return bin(b, HG_BINARY_SUB, x, y); }
static int32_t dv(gb* b, int32_t x, int32_t y) { return bin(b, HG_BINARY_DIV, x, y); }

int32_t hg_ew_act_grad(hg_ew_expr* e, hg_unary_op op, hg_dtype t, int32_t g, int32_t x,
                       int32_t y) {
    gb b = {e, t};
    const double sqrt_2_pi = 0.79788456080286535588, inv_sqrt_2pi = 0.39894228040143267794;
    switch (op) {
    case HG_UNARY_NEG: return u_(&b, HG_UNARY_NEG, g);
    case HG_UNARY_SIGN: case HG_UNARY_FLOOR: case HG_UNARY_CEIL: case HG_UNARY_ROUND:
    case HG_UNARY_TRUNC:
        return mul(&b, g, k_(&b, 0.0));                 // zero (NaN where g is NaN, as torch)
    case HG_UNARY_ABS: return mul(&b, g, u_(&b, HG_UNARY_SIGN, x));
    case HG_UNARY_SQUARE: return mul(&b, g, mul(&b, x, k_(&b, 2.0)));
    case HG_UNARY_LOG: return dv(&b, g, x);
    case HG_UNARY_LOG1P: return dv(&b, g, add(&b, x, k_(&b, 1.0)));
    case HG_UNARY_LOG2: return dv(&b, g, mul(&b, x, k_(&b, M_LN2)));
    case HG_UNARY_SIN: return mul(&b, g, u_(&b, HG_UNARY_COS, x));
    case HG_UNARY_COS: return u_(&b, HG_UNARY_NEG, mul(&b, g, u_(&b, HG_UNARY_SIN, x)));
    case HG_UNARY_RELU:   // 0 at x = 0, as torch's threshold_backward
        return hg_ew_where(e, bin(&b, HG_BINARY_GT, x, k_(&b, 0.0)), g, k_(&b, 0.0));
    case HG_UNARY_ERF:    // 2 / sqrt(pi) exp(-x^2)
        return mul(&b, g, mul(&b, u_(&b, HG_UNARY_EXP, u_(&b, HG_UNARY_NEG, mul(&b, x, x))),
                              k_(&b, 2.0 * inv_sqrt_2pi * M_SQRT2)));
    case HG_UNARY_SOFTPLUS: return mul(&b, g, u_(&b, HG_UNARY_SIGMOID, x));
    case HG_UNARY_SILU: {  // s (1 + x (1 - s)), s = sigmoid(x)
        int32_t s = u_(&b, HG_UNARY_SIGMOID, x);
        return mul(&b, g, mul(&b, s, add(&b, k_(&b, 1.0), mul(&b, x, sub(&b, k_(&b, 1.0), s)))));
    }
    case HG_UNARY_GELU: {  // 0.5 (1 + t) + 0.5 x (1 - t^2) u', u = c (x + 0.044715 x^3)
        int32_t x2 = mul(&b, x, x);
        int32_t th = u_(&b, HG_UNARY_TANH,
                        mul(&b, mul(&b, x, add(&b, k_(&b, 1.0), mul(&b, x2, k_(&b, 0.044715)))),
                            k_(&b, sqrt_2_pi)));
        int32_t du = mul(&b, add(&b, k_(&b, 1.0), mul(&b, x2, k_(&b, 3 * 0.044715))),
                         k_(&b, sqrt_2_pi));
        int32_t a = mul(&b, add(&b, k_(&b, 1.0), th), k_(&b, 0.5));
        int32_t c = mul(&b, mul(&b, mul(&b, x, k_(&b, 0.5)), sub(&b, k_(&b, 1.0), mul(&b, th, th))),
                        du);
        return mul(&b, g, add(&b, a, c));
    }
    case HG_UNARY_GELU_ERF: {  // Phi(x) + x phi(x); Phi(x) = y / x from the forward (no erf)
        int32_t zero = bin(&b, HG_BINARY_EQ, x, k_(&b, 0.0));
        int32_t cdf = zero < 0 ? -1 : hg_ew_where(e, zero, k_(&b, 0.5), dv(&b, y, x));
        int32_t pdf = mul(&b, u_(&b, HG_UNARY_EXP, mul(&b, mul(&b, x, x), k_(&b, -0.5))),
                          k_(&b, inv_sqrt_2pi));
        return mul(&b, g, add(&b, cdf, mul(&b, x, pdf)));
    }
    case HG_UNARY_SQRT: return dv(&b, g, mul(&b, y, k_(&b, 2.0)));
    case HG_UNARY_RSQRT:      // -y^3 / 2
        return mul(&b, g, mul(&b, mul(&b, y, mul(&b, y, y)), k_(&b, -0.5)));
    case HG_UNARY_RECIPROCAL: return u_(&b, HG_UNARY_NEG, mul(&b, g, mul(&b, y, y)));
    case HG_UNARY_EXP: return mul(&b, g, y);
    case HG_UNARY_EXPM1: return mul(&b, g, add(&b, y, k_(&b, 1.0)));
    case HG_UNARY_EXP2: return mul(&b, g, mul(&b, y, k_(&b, M_LN2)));
    case HG_UNARY_TANH: return mul(&b, g, sub(&b, k_(&b, 1.0), mul(&b, y, y)));
    case HG_UNARY_SIGMOID: return mul(&b, g, mul(&b, y, sub(&b, k_(&b, 1.0), y)));
    default: return -1;
    }
}
