// The op table of tests/test_parity.c: for each entry, how to make inputs per shape set, how to
// call the op, and the double-precision reference. Included once, by test_parity.c only.
#ifndef HG_PARITY_OPS_H
#define HG_PARITY_OPS_H

// ---------------------------------------------------------------------------------------------
// Reference scalar functions (numpy semantics, limits at +-inf)
// ---------------------------------------------------------------------------------------------
static double r_sign(double x) { return isnan(x) ? x : x > 0 ? 1 : x < 0 ? -1 : x; }
static double r_relu(double x) { return isnan(x) ? x : x > 0 ? x : 0; }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_gelu(double x) {
    if (isinf(x)) return x > 0 ? x : 0;
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
static double r_gelu_erf(double x) {
    if (isinf(x)) return x > 0 ? x : 0;
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}
static double r_silu(double x) {
    if (isinf(x)) return x > 0 ? x : 0;
    return x * r_sigmoid(x);
}
static double r_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_recip(double x) { return 1 / x; }
static double r_square(double x) { return x * x; }
static double r_neg(double x) { return -x; }
static double r_lnot(double x) { return x == 0; }
static double r_isnan(double x) { return isnan(x) != 0; }
static double r_isinf(double x) { return isinf(x) != 0; }
static double r_isfinite(double x) { return isfinite(x) != 0; }
static double r_bitnot(double x) { return -x - 1; }   // ~x in two's complement

typedef struct unary_info {
    hg_unary_op op;
    double (*f)(double);
    double lo, hi;
    uint32_t dtypes;
    int bool_out;
} unary_info;

static const unary_info k_unary[] = {
    {HG_UNARY_NEG, r_neg, -100, 100, FLOATS | SINTS, 0},
    {HG_UNARY_ABS, fabs, -100, 100, FLOATS | SINTS, 0},
    {HG_UNARY_SIGN, r_sign, -5, 5, FLOATS | SINTS, 0},
    {HG_UNARY_SQRT, sqrt, 0, 100, FLOATS, 0},
    {HG_UNARY_RSQRT, r_rsqrt, 0.01, 100, FLOATS, 0},
    {HG_UNARY_RECIPROCAL, r_recip, 0.1, 10, FLOATS, 0},
    {HG_UNARY_SQUARE, r_square, -10, 10, FLOATS | SINTS, 0},
    {HG_UNARY_EXP, exp, -10, 10, FLOATS, 0},
    {HG_UNARY_EXPM1, expm1, -5, 5, FLOATS, 0},
    {HG_UNARY_EXP2, exp2, -10, 10, FLOATS, 0},
    {HG_UNARY_LOG, log, 0.01, 100, FLOATS, 0},
    {HG_UNARY_LOG1P, log1p, -0.9, 100, FLOATS, 0},
    {HG_UNARY_LOG2, log2, 0.01, 100, FLOATS, 0},
    {HG_UNARY_SIN, sin, -10, 10, FLOATS, 0},
    {HG_UNARY_COS, cos, -10, 10, FLOATS, 0},
    {HG_UNARY_TANH, tanh, -5, 5, FLOATS, 0},
    {HG_UNARY_SIGMOID, r_sigmoid, -10, 10, FLOATS, 0},
    {HG_UNARY_RELU, r_relu, -5, 5, FLOATS | SINTS, 0},
    {HG_UNARY_GELU, r_gelu, -5, 5, FLOATS, 0},
    {HG_UNARY_GELU_ERF, r_gelu_erf, -5, 5, FLOATS, 0},
    {HG_UNARY_SILU, r_silu, -8, 8, FLOATS, 0},
    {HG_UNARY_SOFTPLUS, r_softplus, -20, 20, FLOATS, 0},
    {HG_UNARY_ERF, erf, -3, 3, FLOATS, 0},
    {HG_UNARY_FLOOR, floor, -10, 10, FLOATS, 0},
    {HG_UNARY_CEIL, ceil, -10, 10, FLOATS, 0},
    {HG_UNARY_ROUND, rint, -10, 10, FLOATS, 0},
    {HG_UNARY_TRUNC, trunc, -10, 10, FLOATS, 0},
    {HG_UNARY_LOGICAL_NOT, r_lnot, -2, 3, FLOATS | SINTS, 1},
    {HG_UNARY_ISNAN, r_isnan, -5, 5, FLOATS, 1},
    {HG_UNARY_ISINF, r_isinf, -5, 5, FLOATS, 1},
    {HG_UNARY_ISFINITE, r_isfinite, -5, 5, FLOATS, 1},
    {HG_UNARY_BITWISE_NOT, r_bitnot, -100, 100, SINTS, 0},
};

// ---------------------------------------------------------------------------------------------
// Elementwise: unary
// ---------------------------------------------------------------------------------------------
static const unary_info* unary_of(const pcase* c) {
    for (size_t i = 0; i < sizeof k_unary / sizeof k_unary[0]; i++)
        if ((int)k_unary[i].op == c->e->op) return &k_unary[i];
    return NULL;
}
static int setup_unary(pcase* c) {
    const unary_info* u = unary_of(c);
    shp s;
    if (!std_shape(c, &s)) return 0;
    if (c->ss == SS_SPECIAL && !is_float_dt(c->dt)) return 0;
    gen_input(c, 0, c->dt, s, u->lo, u->hi);
    if (c->ss == SS_BROADCAST) {   // rows repeat: a stride-0 view of one row
        c->in[0].bcast_from = 1;
        for (int64_t r = 1; r < s.d[0]; r++)
            memcpy(c->in[0].v + r * s.d[1], c->in[0].v, (size_t)s.d[1] * sizeof(double));
    }
    return 1;
}
static hg_status run_unary(pcase* c, hg_tensor* out) {
    return hg_unary((hg_unary_op)c->e->op, &c->tin[0], out);
}
static void ref_unary(pcase* c) {
    const unary_info* u = unary_of(c);
    c->os = c->in[0].s;
    c->odt = u->bool_out ? HG_DTYPE_BOOL : c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) c->ref[i] = u->f(c->in[0].v[i]);
}

// ---------------------------------------------------------------------------------------------
// Elementwise: binary
// ---------------------------------------------------------------------------------------------
static double r_floor_divide(double a, double b) { return floor(a / b); }
static double r_remainder(double a, double b) {
    double m = fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
}
static double r_minimum(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static double r_maximum(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

static double binary_ref(hg_binary_op op, double a, double b) {
    switch (op) {
    case HG_BINARY_ADD: return a + b;
    case HG_BINARY_SUB: return a - b;
    case HG_BINARY_MUL: return a * b;
    case HG_BINARY_DIV: return a / b;
    case HG_BINARY_FLOOR_DIVIDE: return r_floor_divide(a, b);
    case HG_BINARY_REMAINDER: return r_remainder(a, b);
    case HG_BINARY_POW: return pow(a, b);
    case HG_BINARY_MINIMUM: return r_minimum(a, b);
    case HG_BINARY_MAXIMUM: return r_maximum(a, b);
    case HG_BINARY_EQ: return a == b;
    case HG_BINARY_NE: return a != b;
    case HG_BINARY_LT: return a < b;
    case HG_BINARY_LE: return a <= b;
    case HG_BINARY_GT: return a > b;
    case HG_BINARY_GE: return a >= b;
    case HG_BINARY_LOGICAL_AND: return (a != 0) && (b != 0);
    case HG_BINARY_LOGICAL_OR: return (a != 0) || (b != 0);
    case HG_BINARY_LOGICAL_XOR: return (a != 0) != (b != 0);
    case HG_BINARY_BITWISE_AND: return (double)((int64_t)a & (int64_t)b);
    case HG_BINARY_BITWISE_OR: return (double)((int64_t)a | (int64_t)b);
    case HG_BINARY_BITWISE_XOR: return (double)((int64_t)a ^ (int64_t)b);
    case HG_BINARY_LEFT_SHIFT: return (double)((int64_t)a * ((int64_t)1 << (int64_t)b));
    case HG_BINARY_RIGHT_SHIFT: return floor(a / (double)((int64_t)1 << (int64_t)b));
    default: return NAN;
    }
}
static int binary_bool_out(hg_binary_op op) {
    return op >= HG_BINARY_EQ && op <= HG_BINARY_LOGICAL_XOR;
}
static uint32_t binary_dtypes(hg_binary_op op) {
    switch (op) {
    case HG_BINARY_ADD: case HG_BINARY_SUB: case HG_BINARY_MUL: case HG_BINARY_MINIMUM:
    case HG_BINARY_MAXIMUM: return FLOATS | SINTS;
    case HG_BINARY_DIV: case HG_BINARY_POW: return FLOATS;
    case HG_BINARY_FLOOR_DIVIDE: case HG_BINARY_REMAINDER: return F32F64;
    case HG_BINARY_BITWISE_AND: case HG_BINARY_BITWISE_OR: case HG_BINARY_BITWISE_XOR:
        return SINTS | UINTS;
    case HG_BINARY_LEFT_SHIFT: case HG_BINARY_RIGHT_SHIFT: return SINTS | UINTS;
    default: return FLOATS | SINTS;   // comparisons and logical ops
    }
}
static int setup_binary(pcase* c) {
    hg_binary_op op = (hg_binary_op)c->e->op;
    shp a, b;
    if (!std_shape(c, &a)) return 0;
    b = a;
    if (c->ss == SS_SPECIAL && (!is_float_dt(c->dt) || op == HG_BINARY_FLOOR_DIVIDE ||
                                op == HG_BINARY_REMAINDER))
        return 0;
    if (c->ss == SS_BROADCAST) {
        a = mkshape(3, 5, 1, 7);
        b = mkshape(2, 3, 7, 0);
    }
    double alo = -10, ahi = 10, blo = -10, bhi = 10;
    int unsig = c->dt >= HG_DTYPE_U8 && c->dt <= HG_DTYPE_U64;
    if (unsig) alo = blo = 0;
    if (op == HG_BINARY_DIV || op == HG_BINARY_FLOOR_DIVIDE || op == HG_BINARY_REMAINDER)
        blo = 0.5, bhi = 5;
    if (op == HG_BINARY_POW) alo = 0.1, ahi = 5, blo = -3, bhi = 3;
    if (op == HG_BINARY_LEFT_SHIFT || op == HG_BINARY_RIGHT_SHIFT) alo = 0, ahi = 60, blo = 0, bhi = 2;
    if (op >= HG_BINARY_EQ && op <= HG_BINARY_GE) alo = blo = -3, ahi = bhi = 3;   // some ties
    gen_input(c, 0, c->dt, a, alo, ahi);
    gen_input(c, 1, c->dt, b, blo, bhi);
    if (op == HG_BINARY_DIV || op == HG_BINARY_FLOOR_DIVIDE || op == HG_BINARY_REMAINDER)
        for (int64_t i = 0; i < numel(&b); i++)   // both signs, away from 0
            if ((i & 1) && !isnan(c->in[1].v[i])) c->in[1].v[i] = -c->in[1].v[i];
    return 1;
}
static hg_status run_binary(pcase* c, hg_tensor* out) {
    return hg_binary((hg_binary_op)c->e->op, &c->tin[0], &c->tin[1], out);
}
static void ref_binary(pcase* c) {
    hg_binary_op op = (hg_binary_op)c->e->op;
    c->os = bcast_shape(&c->in[0].s, &c->in[1].s);
    c->odt = binary_bool_out(op) ? HG_DTYPE_BOOL : c->dt;
    alloc_ref(c);
    int64_t idx[HG_MAX_DIMS] = {0};
    for (int64_t i = 0; i < numel(&c->os); i++) {
        double a = c->in[0].v[bcast_flat(&c->in[0].s, &c->os, idx)];
        double b = c->in[1].v[bcast_flat(&c->in[1].s, &c->os, idx)];
        c->ref[i] = binary_ref(op, a, b);
        next_idx(&c->os, idx);
    }
}

// binary_scalar (a op 2.5 / 2.5 op a), where, clip_scalar, clip, fma, cast
static int setup_one(pcase* c) {
    shp s;
    if (!std_shape(c, &s)) return 0;
    if (c->ss == SS_SPECIAL && !is_float_dt(c->dt)) return 0;
    gen_input(c, 0, c->dt, s, -4, 4);
    return 1;
}
static hg_status run_scalar_sub_rev(pcase* c, hg_tensor* out) {
    return hg_binary_scalar(HG_BINARY_SUB, &c->tin[0], hg_scalar_f(2.5), 1, out);
}
static void ref_scalar_sub_rev(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) c->ref[i] = 2.5 - c->in[0].v[i];
}
static hg_status run_scalar_mul(pcase* c, hg_tensor* out) {
    return hg_binary_scalar(HG_BINARY_MUL, &c->tin[0], hg_scalar_i(3), 0, out);
}
static void ref_scalar_mul(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) c->ref[i] = c->in[0].v[i] * 3;
}
static hg_status run_clip_scalar(pcase* c, hg_tensor* out) {
    return hg_clip_scalar(&c->tin[0], hg_scalar_i(-1), hg_scalar_i(2), out);
}
static void ref_clip_scalar(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) {
        double x = c->in[0].v[i];
        c->ref[i] = isnan(x) ? x : x < -1 ? -1 : x > 2 ? 2 : x;
    }
}
static int setup_three(pcase* c) {
    shp s;
    if (!std_shape(c, &s)) return 0;
    if (c->ss == SS_SPECIAL || c->ss == SS_BROADCAST) return 0;
    gen_input(c, 0, c->dt, s, -4, 4);
    gen_input(c, 1, c->dt, s, -4, 4);
    gen_input(c, 2, c->dt, s, -4, 4);
    return 1;
}
static hg_status run_where(pcase* c, hg_tensor* out) {
    return hg_where(&c->tin[0], &c->tin[1], &c->tin[2], out);
}
static void ref_where(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++)
        c->ref[i] = c->in[0].v[i] != 0 ? c->in[1].v[i] : c->in[2].v[i];
}
static hg_status run_clip(pcase* c, hg_tensor* out) {
    return hg_clip(&c->tin[0], &c->tin[1], &c->tin[2], out);
}
static void ref_clip(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) {
        double x = c->in[0].v[i], lo = c->in[1].v[i], hi = c->in[2].v[i];
        double m = r_maximum(x, lo);
        c->ref[i] = r_minimum(m, hi);
    }
}
static hg_status run_fma(pcase* c, hg_tensor* out) {
    return hg_fma(&c->tin[0], &c->tin[1], &c->tin[2], out);
}
static void ref_fma(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++)
        c->ref[i] = fma(c->in[0].v[i], c->in[1].v[i], c->in[2].v[i]);
}
static hg_status run_cast_f32(pcase* c, hg_tensor* out) {
    return hg_cast(&c->tin[0], HG_DTYPE_F32, out);
}
static void ref_cast_f32(pcase* c) {
    c->os = c->in[0].s;
    c->odt = HG_DTYPE_F32;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) c->ref[i] = c->in[0].v[i];
}
static hg_status run_cast_i32(pcase* c, hg_tensor* out) {
    return hg_cast(&c->tin[0], HG_DTYPE_I32, out);
}
static void ref_cast_i32(pcase* c) {
    c->os = c->in[0].s;
    c->odt = HG_DTYPE_I32;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) {
        double x = c->in[0].v[i];
        c->ref[i] = isnan(x) ? 0 : x >= 2147483647.0 ? 2147483647.0 : x <= -2147483648.0 ? -2147483648.0 : trunc(x);
    }
}

// ---------------------------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------------------------
static int reduce_refuses_empty(hg_reduce_op op) {
    return op == HG_REDUCE_MIN || op == HG_REDUCE_MAX || op == HG_REDUCE_ARGMIN ||
           op == HG_REDUCE_ARGMAX;
}
static int setup_reduce(pcase* c) {
    hg_reduce_op op = (hg_reduce_op)c->e->op;
    shp s;
    c->naxes = -1;   // all
    switch (c->ss) {
    case SS_EMPTY:
        if (reduce_refuses_empty(op)) return 0;
        s = mkshape(2, 3, 0, 0), c->naxes = 1, c->axes[0] = 1;
        break;
    case SS_SCALAR: s = mkshape(0, 0, 0, 0); break;
    case SS_ODD: s = mkshape(2, 7, 13, 0), c->naxes = 1, c->axes[0] = -1; break;
    case SS_PRIME: s = mkshape(1, 97, 0, 0); break;
    case SS_LARGE: s = mkshape(2, 256, 515, 0), c->naxes = 1, c->axes[0] = 0; break;
    case SS_BROADCAST: s = mkshape(2, 6, 9, 0), c->naxes = 1, c->axes[0] = 0; break;
    case SS_STRIDED:
        s = mkshape(3, 5, 4, 9), c->naxes = 2, c->axes[0] = 0, c->axes[1] = 2, c->keepdims = 1;
        break;
    default:
        if (!is_float_dt(c->dt)) return 0;
        s = mkshape(2, 10, 5, 0), c->naxes = 1, c->axes[0] = 1;
    }
    double lo = op == HG_REDUCE_PROD ? 0.5 : -3, hi = op == HG_REDUCE_PROD ? 1.5 : 3;
    if (op == HG_REDUCE_ANY || op == HG_REDUCE_ALL) lo = 0, hi = 1.3;   // ~1/4 zeros
    gen_input(c, 0, c->dt, s, lo, hi);
    if (op == HG_REDUCE_ANY || op == HG_REDUCE_ALL)
        for (int64_t i = 0; i < numel(&s); i++)
            if (!isnan(c->in[0].v[i])) c->in[0].v[i] = c->in[0].v[i] >= 1 ? 0 : c->in[0].v[i];
    if (c->ss == SS_BROADCAST) {
        c->in[0].bcast_from = 1;
        for (int64_t r = 1; r < s.d[0]; r++)
            memcpy(c->in[0].v + r * s.d[1], c->in[0].v, (size_t)s.d[1] * sizeof(double));
    }
    return 1;
}
static hg_status run_reduce(pcase* c, hg_tensor* out) {
    return hg_reduce((hg_reduce_op)c->e->op, &c->tin[0], c->naxes < 0 ? 0 : c->naxes,
                     c->naxes < 0 ? NULL : c->axes, c->keepdims, out);
}
static hg_status run_var1(pcase* c, hg_tensor* out) {
    return hg_var(&c->tin[0], c->naxes < 0 ? 0 : c->naxes, c->naxes < 0 ? NULL : c->axes,
                  c->keepdims, 1.0, out);
}
static hg_status run_std1(pcase* c, hg_tensor* out) {
    return hg_std(&c->tin[0], c->naxes < 0 ? 0 : c->naxes, c->naxes < 0 ? NULL : c->axes,
                  c->keepdims, 1.0, out);
}
// Reduces one slice (values v[0..n)) in double.
static double reduce_slice(int op, const double* v, int64_t n, double ddof) {
    double s = 0, m, best;
    int64_t bi = 0;
    switch (op) {
    case HG_REDUCE_SUM: for (int64_t i = 0; i < n; i++) s += v[i]; return s;
    case HG_REDUCE_MEAN: for (int64_t i = 0; i < n; i++) s += v[i]; return s / (double)n;
    case HG_REDUCE_PROD: s = 1; for (int64_t i = 0; i < n; i++) s *= v[i]; return s;
    case HG_REDUCE_MIN: case HG_REDUCE_MAX:
        best = v[0];
        for (int64_t i = 0; i < n; i++) {
            if (isnan(v[i])) return v[i];
            if (op == HG_REDUCE_MIN ? v[i] < best : v[i] > best) best = v[i];
        }
        return best;
    case HG_REDUCE_ARGMIN: case HG_REDUCE_ARGMAX:
        for (int64_t i = 0; i < n; i++) {
            if (isnan(v[i])) return (double)i;
            if (op == HG_REDUCE_ARGMIN ? v[i] < v[bi] : v[i] > v[bi]) bi = i;
        }
        return (double)bi;
    case HG_REDUCE_VAR: case HG_REDUCE_STD: {
        // The mean in long double, then rounded: equal values have exactly their value as
        // mean (a double sum / n can miss it by an ulp, which a constant row turns into a
        // "variance" of pure rounding noise).
        long double ls = 0;
        for (int64_t i = 0; i < n; i++) ls += v[i];
        m = (double)(ls / (long double)n);
        s = 0;
        for (int64_t i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
        s /= fmax((double)n - ddof, 0.0);   // numpy: n - ddof <= 0 gives NaN or inf
        return op == HG_REDUCE_STD ? sqrt(s) : s;
    }
    case HG_REDUCE_LOGSUMEXP:
        best = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            if (isnan(v[i])) return v[i];
            if (v[i] > best) best = v[i];
        }
        if (isinf(best)) return best;
        for (int64_t i = 0; i < n; i++) s += exp(v[i] - best);
        return best + log(s);
    case HG_REDUCE_ANY: for (int64_t i = 0; i < n; i++) if (v[i] != 0) return 1; return 0;
    default: for (int64_t i = 0; i < n; i++) if (v[i] == 0) return 0; return 1;   // ALL
    }
}
static hg_dtype reduce_dtype(int op, hg_dtype dt) {
    int sint = dt >= HG_DTYPE_I8 && dt <= HG_DTYPE_I64, uint = dt >= HG_DTYPE_U8 && dt <= HG_DTYPE_U64;
    switch (op) {
    case HG_REDUCE_SUM: case HG_REDUCE_PROD:
        return sint || dt == HG_DTYPE_BOOL ? HG_DTYPE_I64 : uint ? HG_DTYPE_U64 : dt;
    case HG_REDUCE_MEAN: case HG_REDUCE_VAR: case HG_REDUCE_STD: case HG_REDUCE_LOGSUMEXP:
        return is_float_dt(dt) ? dt : HG_DTYPE_F64;
    case HG_REDUCE_ARGMIN: case HG_REDUCE_ARGMAX: return HG_DTYPE_I64;
    case HG_REDUCE_ANY: case HG_REDUCE_ALL: return HG_DTYPE_BOOL;
    default: return dt;
    }
}
static void ref_reduce_ddof(pcase* c, int op, double ddof) {
    const pin* x = &c->in[0];
    uint32_t mask = 0;
    if (c->naxes < 0) mask = (1u << x->s.ndim) - 1;
    for (int k = 0; k < c->naxes; k++)
        mask |= 1u << (c->axes[k] < 0 ? c->axes[k] + x->s.ndim : c->axes[k]);
    c->os.ndim = 0;
    shp kept = {0, {0}}, red = {0, {0}};
    for (int32_t d = 0; d < x->s.ndim; d++) {
        if (mask & (1u << d)) {
            red.d[red.ndim++] = x->s.d[d];
            if (c->keepdims) c->os.d[c->os.ndim++] = 1;
        } else {
            kept.d[kept.ndim++] = x->s.d[d];
            c->os.d[c->os.ndim++] = x->s.d[d];
        }
    }
    c->odt = reduce_dtype(op, c->dt);
    alloc_ref(c);
    int64_t nk = numel(&kept), nr = numel(&red);
    double* slice = malloc((size_t)(nr ? nr : 1) * sizeof(double));
    int64_t ki[HG_MAX_DIMS] = {0};
    for (int64_t o = 0; o < nk; o++) {
        int64_t ri[HG_MAX_DIMS] = {0};
        for (int64_t r = 0; r < nr; r++) {
            int64_t f = 0;
            int32_t a = 0, b = 0;
            for (int32_t d = 0; d < x->s.ndim; d++)
                f = f * x->s.d[d] + ((mask & (1u << d)) ? ri[a++] : ki[b++]);
            slice[r] = x->v[f];
            next_idx(&red, ri);
        }
        c->ref[o] = reduce_slice(op, slice, nr, ddof);
        if ((op == HG_REDUCE_VAR || op == HG_REDUCE_STD) && nr > 0) {
            double m = reduce_slice(HG_REDUCE_MEAN, slice, nr, 0), sc = 1e-9 * fabs(m);
            if (isfinite(m)) c->floor2 += op == HG_REDUCE_VAR ? sc * fabs(m) * sc * fabs(m) : sc * sc;
        }
        next_idx(&kept, ki);
    }
    free(slice);
}
static void ref_reduce(pcase* c) { ref_reduce_ddof(c, c->e->op, 0); }
static void ref_var1(pcase* c) { ref_reduce_ddof(c, HG_REDUCE_VAR, 1); }
static void ref_std1(pcase* c) { ref_reduce_ddof(c, HG_REDUCE_STD, 1); }

#include "parity_ops_nn.h"
#include "parity_ops_grad.h"
#include "parity_ops_optim.h"

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------
static pentry k_entries[128];
static size_t k_nentries;
static char k_names[128][48];

static void add(const char* name, const char* fn, uint32_t dtypes, int op, double tol,
                const char* reason, int (*setup)(pcase*), hg_status (*run)(pcase*, hg_tensor*),
                void (*ref)(pcase*)) {
    pentry e = {name, fn, dtypes, op, tol, reason, setup, run, ref};
    k_entries[k_nentries++] = e;
}

static void build_entries(void) {
    for (size_t i = 0; i < sizeof k_unary / sizeof k_unary[0]; i++) {
        snprintf(k_names[k_nentries], sizeof k_names[0], "unary.%s", hg_unary_op_name(k_unary[i].op));
        add(k_names[k_nentries], "hg_unary", k_unary[i].dtypes, (int)k_unary[i].op, 0, NULL,
            setup_unary, run_unary, ref_unary);
    }
    for (int op = 0; op < HG_BINARY_COUNT; op++) {
        snprintf(k_names[k_nentries], sizeof k_names[0], "binary.%s", hg_binary_op_name((hg_binary_op)op));
        add(k_names[k_nentries], "hg_binary", binary_dtypes((hg_binary_op)op), op, 0, NULL,
            setup_binary, run_binary, ref_binary);
    }
    add("binary_scalar.rsub", "hg_binary_scalar", FLOATS, 0, 0, NULL, setup_one,
        run_scalar_sub_rev, ref_scalar_sub_rev);
    add("binary_scalar.mul_int", "hg_binary_scalar", FLOATS | SINTS, 0, 0, NULL, setup_one,
        run_scalar_mul, ref_scalar_mul);
    add("clip_scalar", "hg_clip_scalar", FLOATS | SINTS, 0, 0, NULL, setup_one, run_clip_scalar,
        ref_clip_scalar);
    add("clip", "hg_clip", FLOATS, 0, 0, NULL, setup_three, run_clip, ref_clip);
    add("where", "hg_where", FLOATS | SINTS, 0, 0, NULL, setup_three, run_where, ref_where);
    add("fma", "hg_fma", FLOATS, 0, 0, NULL, setup_three, run_fma, ref_fma);
    add("cast.to_f32", "hg_cast", FLOATS | SINTS | UINTS, 0, 0, NULL, setup_one, run_cast_f32,
        ref_cast_f32);
    add("cast.to_i32", "hg_cast", FLOATS, 0, 0, NULL, setup_one, run_cast_i32, ref_cast_i32);
    for (int op = 0; op < HG_REDUCE_COUNT; op++) {
        snprintf(k_names[k_nentries], sizeof k_names[0], "reduce.%s", hg_reduce_op_name((hg_reduce_op)op));
        uint32_t dts = FLOATS;
        if (op == HG_REDUCE_SUM || op == HG_REDUCE_MIN || op == HG_REDUCE_MAX ||
            op == HG_REDUCE_ARGMAX || op == HG_REDUCE_MEAN || op == HG_REDUCE_ANY)
            dts |= SINTS;
        add(k_names[k_nentries], "hg_reduce", dts, op, 0, NULL, setup_reduce, run_reduce,
            ref_reduce);
    }
    add("var.ddof1", "hg_var", FLOATS, HG_REDUCE_VAR, 0, NULL, setup_reduce, run_var1, ref_var1);
    add("std.ddof1", "hg_std", FLOATS, HG_REDUCE_STD, 0, NULL, setup_reduce, run_std1, ref_std1);
    add("softmax", "hg_softmax", FLOATS, 0, 0, NULL, setup_softmax, run_softmax, ref_softmax);
    add("log_softmax", "hg_log_softmax", FLOATS, 0, 0, NULL, setup_softmax, run_log_softmax,
        ref_log_softmax);
    add("layer_norm", "hg_layer_norm", FLOATS, 0, 0, NULL, setup_norm, run_layer_norm,
        ref_layer_norm);
    add("rms_norm", "hg_rms_norm", FLOATS, 0, 0, NULL, setup_norm, run_rms_norm, ref_rms_norm);
    add("layer_norm_stats.mean", "hg_layer_norm_stats", FLOATS, 0, 0, NULL, setup_norm,
        run_layer_norm_stats, ref_layer_norm_stats);
    add("layer_norm_stats.rstd", "hg_layer_norm_stats", FLOATS, 1, 0, NULL, setup_norm,
        run_layer_norm_stats, ref_layer_norm_stats);
    add("scaled_dot_product_attention", "hg_scaled_dot_product_attention", FLOATS, 0, 0, NULL,
        setup_attention, run_attention, ref_attention);
    add("scaled_dot_product_attention.causal", "hg_scaled_dot_product_attention", FLOATS, 1, 0,
        NULL, setup_attention, run_attention, ref_attention);
    add("scaled_dot_product_attention_backward.grad_q",
        "hg_scaled_dot_product_attention_backward", FLOATS, 0, 0, NULL, setup_attention_bw,
        run_attention_bw, ref_attention_bw);
    add("scaled_dot_product_attention_backward.grad_k",
        "hg_scaled_dot_product_attention_backward", FLOATS, 1, 0, NULL, setup_attention_bw,
        run_attention_bw, ref_attention_bw);
    add("scaled_dot_product_attention_backward.grad_v",
        "hg_scaled_dot_product_attention_backward", FLOATS, 2, 0, NULL, setup_attention_bw,
        run_attention_bw, ref_attention_bw);
    add("matmul", "hg_matmul", FLOATS | DT(HG_DTYPE_I32) | DT(HG_DTYPE_I64), 0, 0, NULL,
        setup_matmul, run_matmul, ref_matmul);
    add("gemm", "hg_gemm", FLOATS, 0, 0, NULL, setup_gemm, run_gemm, ref_gemm);
    add("matvec", "hg_matvec", FLOATS, 0, 0, NULL, setup_matvec, run_matvec, ref_matvec);
    add("mse_loss", "hg_mse_loss", FLOATS, 0, 0, NULL, setup_mse, run_mse, ref_mse);
    add("binary_cross_entropy", "hg_binary_cross_entropy", FLOATS, 0, 0, NULL, setup_bce,
        run_bce, ref_bce);
    add("binary_cross_entropy_with_logits", "hg_binary_cross_entropy_with_logits", FLOATS, 0, 0,
        NULL, setup_bcel, run_bcel, ref_bcel);
    add("cross_entropy", "hg_cross_entropy", FLOATS, 0, 0, NULL, setup_ce, run_ce, ref_ce);
    add("fill", "hg_fill", ALLDT, 0, 0, NULL, setup_out_only, run_fill, ref_fill);
    add("arange", "hg_arange", ALLDT, 0, 0, NULL, setup_out_only, run_arange, ref_arange);
    add("concat", "hg_concat", ALLDT, 0, 0, NULL, setup_concat, run_concat, ref_concat);
    add("index_select", "hg_index_select", ALLDT, 0, 0, NULL, setup_index, run_index_select,
        ref_index_select);
    add("gather", "hg_gather", ALLDT, 0, 0, NULL, setup_gather, run_gather, ref_gather);
    add("index_add", "hg_index_add", ATOMIC_DT, 0, 0, NULL, setup_index_add, run_index_add,
        ref_index_add);
    add("scatter_add", "hg_scatter_add", ATOMIC_DT, 0, 0, NULL, setup_scatter_add,
        run_scatter_add, ref_scatter_add);
    for (int k = 0; k < (int)(sizeof k_act_ops / sizeof k_act_ops[0]); k++) {
        snprintf(k_names[k_nentries], sizeof k_names[0], "activation_backward.%s",
                 hg_unary_op_name(k_act_ops[k]));
        add(k_names[k_nentries], "hg_activation_backward", FLOATS, k, 0, NULL, setup_act_grad,
            run_act_grad, ref_act_grad);
    }
    add("softmax_backward", "hg_softmax_backward", FLOATS, 0, 0, NULL, setup_softmax_grad,
        run_softmax_grad, ref_softmax_grad);
    add("log_softmax_backward", "hg_log_softmax_backward", FLOATS, 1, 0, NULL,
        setup_softmax_grad, run_softmax_grad, ref_softmax_grad);
    add("layer_norm_backward", "hg_layer_norm_backward", FLOATS, 0, 0, NULL, setup_norm_grad,
        run_norm_grad, ref_norm_grad);
    add("rms_norm_backward", "hg_rms_norm_backward", FLOATS, 1, 0, NULL, setup_norm_grad,
        run_norm_grad, ref_norm_grad);
    add("layer_norm_backward.weight", "hg_layer_norm_backward", FLOATS, 2, 0, NULL,
        setup_norm_grad, run_norm_grad, ref_norm_grad);
    add("layer_norm_backward_stats", "hg_layer_norm_backward_stats", FLOATS, 3, 0, NULL,
        setup_norm_grad, run_norm_grad, ref_norm_grad);
    add("layer_norm_backward_stats.weight", "hg_layer_norm_backward_stats", FLOATS, 4, 0, NULL,
        setup_norm_grad, run_norm_grad, ref_norm_grad);
    add("cross_entropy_backward", "hg_cross_entropy_backward", FLOATS, 0, 0, NULL, setup_ce_grad,
        run_ce_grad, ref_ce_grad);
    add("adam_step", "hg_adam_step", FLOATS, 0, 0, NULL, setup_adam, run_adam, ref_adam);
    add("adam_step.adamw", "hg_adam_step", FLOATS, 1, 0, NULL, setup_adam, run_adam, ref_adam);
}

// Public functions of the Ops section that are deliberately not parity entries.
static const struct { const char* fn; const char* reason; } k_excluded[] = {
    {"hg_result_type", "dtype rule, no data: tests/test_ops_elementwise.c"},
    {"hg_unary_op_name", "names only"},
    {"hg_binary_op_name", "names only"},
    {"hg_reduce_op_name", "names only"},
    {"hg_random_uniform", "statistical, no reference values: tests/test_ops_random.c"},
    {"hg_random_normal", "statistical, no reference values: tests/test_ops_random.c"},
    {"hg_dropout", "random mask: every element against its stream in tests/test_ops_dropout.c"},
    {"hg_dropout_backward", "with hg_dropout: tests/test_ops_dropout.c"},
};

#endif
