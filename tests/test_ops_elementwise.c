// Every unary and binary elementwise op on every dtype against a double / long double
// reference, on special values (NaN, +-inf, -0.0, integer MIN/MAX, zero divisors) and random
// values; numpy's promotion table (hg_result_type) and mixed-dtype binary ops.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/hg_test.h"
#include "hologram.h"
#include "test_ops_elementwise_ref.h"

static hg_executor ex;
static uint64_t rng = 12345;

static double urand(void) { return (double)(hg_test_rand(&rng) >> 11) * 0x1p-53; }

// ---------------------------------------------------------------------------------------------
// Test values
// ---------------------------------------------------------------------------------------------

static const double float_specials[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0, 3.0, -3.0, INFINITY, -INFINITY, NAN,
    0.1, -7.0, 100.0, 1e-5, -1e-3, 30.0, -30.0, 7.5, 1e30, -1e30, 1e-40, 3e-8,
};
static const int64_t int_specials[] = {0, 1, -1, 2, -2, 3, 7, -7, 100, 63, 64, 8, -128, 127};

// n values of dtype t into buf: the specials first, then random ones.
static void gen_values(hg_dtype t, int n, unsigned char* buf) {
    size_t es = hg_dtype_size(t);
    int ns = is_float_dt(t) ? (int)(sizeof float_specials / sizeof *float_specials)
                            : (int)(sizeof int_specials / sizeof *int_specials) + 4;
    for (int i = 0; i < n; i++) {
        unsigned char* p = buf + (size_t)i * es;
        if (t == D_BOOL) { *p = (uint8_t)(i < 2 ? (uint64_t)i : hg_test_rand(&rng) & 1); continue; }
        if (is_float_dt(t)) {
            double v;
            if (i < ns) v = float_specials[i];
            else if (i % 3 == 0) v = (urand() * 20 - 10);
            else if (i % 3 == 1) v = (urand() * 4 - 2);
            else v = (urand() < 0.5 ? -1 : 1) * exp2(urand() * 60 - 30);
            cvt_from_double(t, v, p);   // rounds (and overflows) to t
            continue;
        }
        uint64_t u;
        unsigned w = width_of(t);
        uint64_t top = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
        int nsi = (int)(sizeof int_specials / sizeof *int_specials);
        if (i < nsi) u = (uint64_t)int_specials[i];
        else if (i == nsi) u = is_signed_dt(t) ? top >> 1 : top;                   // MAX
        else if (i == nsi + 1) u = is_signed_dt(t) ? (top >> 1) + 1 : 0;           // MIN
        else if (i == nsi + 2) u = is_signed_dt(t) ? (top >> 1) - 1 : top - 1;
        else if (i == nsi + 3) u = is_signed_dt(t) ? (top >> 1) + 2 : 5;
        else if (i % 2) u = hg_test_rand(&rng);
        else u = (uint64_t)((int64_t)(hg_test_rand(&rng) % 41) - 20);
        st_i(t, p, u);
    }
}

static hg_tensor make_tensor(hg_dtype t, int32_t ndim, const int64_t* shape, const void* data) {
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; i++) n *= shape[i];
    hg_buffer b;
    hg_tensor r;
    memset(&r, 0, sizeof r);
    if (hg_buffer_create(ex, t, (size_t)n, &b)) return r;
    if (n) hg_buffer_write(b, 0, data, (size_t)n);
    hg_tensor_from_buffer(b, ndim, shape, &r);
    return r;
}

// ---------------------------------------------------------------------------------------------
// Result dtype rules (independent of the library's)
// ---------------------------------------------------------------------------------------------

static int float_fn(hg_unary_op op) {
    return (op >= HG_UNARY_SQRT && op <= HG_UNARY_RSQRT) ||
           (op >= HG_UNARY_EXP && op <= HG_UNARY_SIGMOID) ||
           (op >= HG_UNARY_GELU && op <= HG_UNARY_ERF);
}
static hg_dtype float_of(hg_dtype t) {
    return t == D_BOOL || hg_dtype_size(t) == 1 ? D_F16 : hg_dtype_size(t) == 2 ? D_F32 : D_F64;
}

// 0 when the op refuses the dtype.
static int unary_rule(hg_unary_op op, hg_dtype t, hg_dtype* r) {
    if (float_fn(op)) { *r = is_float_dt(t) ? t : float_of(t); return 1; }
    switch (op) {
    case HG_UNARY_NEG: *r = t; return t != D_BOOL;
    case HG_UNARY_SIGN: *r = t; return t != D_BOOL;
    case HG_UNARY_RECIPROCAL: case HG_UNARY_SQUARE:
        *r = t == D_BOOL ? D_I8 : t; return 1;
    case HG_UNARY_BITWISE_NOT: *r = t; return !is_float_dt(t);
    case HG_UNARY_LOGICAL_NOT: case HG_UNARY_ISNAN: case HG_UNARY_ISINF: case HG_UNARY_ISFINITE:
        *r = D_BOOL; return 1;
    default: *r = t; return 1;
    }
}

// Common operand dtype and result dtype; 0 when refused.
static int binary_rule(hg_binary_op op, hg_dtype a, hg_dtype b, hg_dtype* ct, hg_dtype* rt) {
    hg_dtype c = promo[a][b];
    *ct = *rt = c;
    switch (op) {
    case HG_BINARY_SUB: return c != D_BOOL;
    case HG_BINARY_DIV: if (!is_float_dt(c)) *ct = *rt = D_F64; return 1;
    case HG_BINARY_FLOOR_DIVIDE: case HG_BINARY_REMAINDER: case HG_BINARY_POW:
        if (c == D_BOOL) *ct = *rt = D_I8;
        return 1;
    case HG_BINARY_EQ: case HG_BINARY_NE: case HG_BINARY_LT: case HG_BINARY_LE:
    case HG_BINARY_GT: case HG_BINARY_GE: case HG_BINARY_LOGICAL_AND: case HG_BINARY_LOGICAL_OR:
    case HG_BINARY_LOGICAL_XOR:
        *rt = D_BOOL; return 1;
    case HG_BINARY_BITWISE_AND: case HG_BINARY_BITWISE_OR: case HG_BINARY_BITWISE_XOR:
        return !is_float_dt(c);
    case HG_BINARY_LEFT_SHIFT: case HG_BINARY_RIGHT_SHIFT:
        if (c == D_BOOL) *ct = *rt = D_I8;
        return !is_float_dt(c);
    default: return 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Reference: unary
// ---------------------------------------------------------------------------------------------

static long double sigmoid_l(long double x) { return 1.0L / (1.0L + expl(-x)); }

// Allowed error in ULPs of the result dtype for float results.
static double unary_tol(hg_unary_op op, hg_dtype r) {
    if (r == D_F16 || r == D_BF16) return 1;
    int f64 = r == D_F64;
    switch (op) {
    case HG_UNARY_RSQRT: return 1;
    case HG_UNARY_EXP: case HG_UNARY_EXP2: case HG_UNARY_LOG: case HG_UNARY_LOG2: return 2;
    case HG_UNARY_SIN: case HG_UNARY_COS: return 2;
    case HG_UNARY_TANH: case HG_UNARY_SIGMOID: return 6;
    case HG_UNARY_ERF: return 8;
    case HG_UNARY_EXPM1: case HG_UNARY_LOG1P: case HG_UNARY_SOFTPLUS: return f64 ? 8 : 4;
    case HG_UNARY_GELU: case HG_UNARY_SILU: case HG_UNARY_GELU_ERF: return f64 ? 2048 : 6;
    default: return 0;
    }
}

static long double float_unary(hg_unary_op op, long double x) {
    switch (op) {
    case HG_UNARY_NEG: return -x;
    case HG_UNARY_ABS: return fabsl(x);
    case HG_UNARY_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
    case HG_UNARY_SQRT: return sqrtl(x);
    case HG_UNARY_RSQRT: return 1.0L / sqrtl(x);
    case HG_UNARY_RECIPROCAL: return 1.0L / x;
    case HG_UNARY_SQUARE: return x * x;
    case HG_UNARY_EXP: return expl(x);
    case HG_UNARY_EXPM1: return expm1l(x);
    case HG_UNARY_EXP2: return exp2l(x);
    case HG_UNARY_LOG: return logl(x);
    case HG_UNARY_LOG1P: return log1pl(x);
    case HG_UNARY_LOG2: return log2l(x);
    case HG_UNARY_SIN: return sinl(x);
    case HG_UNARY_COS: return cosl(x);
    case HG_UNARY_TANH: return tanhl(x);
    case HG_UNARY_SIGMOID: return sigmoid_l(x);
    case HG_UNARY_RELU: return isnan(x) ? x : x > 0 ? x : 0.0L;
    case HG_UNARY_GELU: {
        if (x == -INFINITY) return -0.0L;
        long double z = 0.7978845608028654L * (x + 0.044715L * x * x * x);
        return x * sigmoid_l(2 * z);
    }
    case HG_UNARY_GELU_ERF:
        if (x == -INFINITY) return -0.0L;
        return 0.5L * x * erfcl(-x / sqrtl(2.0L));
    case HG_UNARY_SILU: return x == -INFINITY ? -0.0L : x * sigmoid_l(x);
    case HG_UNARY_SOFTPLUS: return x > 0 ? x + log1pl(expl(-x)) : log1pl(expl(x));
    case HG_UNARY_ERF: return erfl(x);
    case HG_UNARY_FLOOR: return floorl(x);
    case HG_UNARY_CEIL: return ceill(x);
    case HG_UNARY_ROUND: return nearbyintl(x);
    case HG_UNARY_TRUNC: return truncl(x);
    default: return NAN;
    }
}

static uint64_t int_unary(hg_unary_op op, hg_dtype t, int64_t x) {
    uint64_t u = (uint64_t)x;
    int s = is_signed_dt(t);
    switch (op) {
    case HG_UNARY_NEG: return 0 - u;
    case HG_UNARY_ABS: return s && x < 0 ? 0 - u : u;
    case HG_UNARY_SIGN: return s ? (uint64_t)((x > 0) - (x < 0)) : (uint64_t)(x != 0);
    case HG_UNARY_RECIPROCAL: return x == 1 ? 1 : s && x == -1 ? (uint64_t)-1 : 0;
    case HG_UNARY_SQUARE: return u * u;
    case HG_UNARY_RELU: return s && x < 0 ? 0 : u;
    case HG_UNARY_BITWISE_NOT: return t == D_BOOL ? !x : ~u;
    default: return u;   // floor ceil round trunc abs(bool)
    }
}

static int check_unary(hg_unary_op op, hg_dtype t, int n) {
    hg_dtype r;
    int supported = unary_rule(op, t, &r);
    unsigned char* x = malloc((size_t)n * 8 + 8);
    gen_values(t, n, x);
    hg_tensor tx = make_tensor(t, 1, (int64_t[]){n}, x), out;
    memset(&out, 0, sizeof out);
    hg_status s = hg_unary(op, &tx, &out);
    int bad = 0;
    if (!supported) {
        CHECK_MSG(s == HG_ERR_DTYPE_MISMATCH, "%s on %s: got %s", hg_unary_op_name(op),
                  hg_dtype_name(t), hg_status_string(s));
        CHECK(out.buffer.handle == 0);
    } else if (s) {
        CHECK_MSG(0, "%s on %s failed: %s", hg_unary_op_name(op), hg_dtype_name(t),
                  hg_last_error());
    } else {
        CHECK_MSG(out.dtype == r, "%s on %s: result %s, want %s", hg_unary_op_name(op),
                  hg_dtype_name(t), hg_dtype_name(out.dtype), hg_dtype_name(r));
        unsigned char* got = malloc((size_t)n * 8 + 8);
        hg_buffer_read(out.buffer, 0, got, (size_t)n);
        double tol = unary_tol(op, r), worst = 0;
        for (int i = 0; i < n && bad < 5; i++) {
            const unsigned char* xp = x + (size_t)i * hg_dtype_size(t);
            const unsigned char* gp = got + (size_t)i * hg_dtype_size(r);
            unsigned char want[8] = {0};
            if (op == HG_UNARY_ISNAN || op == HG_UNARY_ISINF || op == HG_UNARY_ISFINITE) {
                double v = is_float_dt(t) ? ld_f(t, xp) : 0;
                want[0] = op == HG_UNARY_ISNAN ? isnan(v) != 0
                          : op == HG_UNARY_ISINF ? isinf(v) != 0 : isfinite(v) != 0;
            } else if (op == HG_UNARY_LOGICAL_NOT) {
                want[0] = ld_any(t, xp) == 0;
            } else if (is_float_dt(r)) {
                unsigned char xc[8];
                cvt_elem(r, t, xp, xc);   // float functions of integers: convert first
                double xv = ld_f(r, xc);
                double w = round_to(r, (double)float_unary(op, xv));
                double g = ld_f(r, gp);
                double d = ulp_diff(r, g, w);
                if (op == HG_UNARY_SIGN || op == HG_UNARY_NEG || op == HG_UNARY_ABS ||
                    op == HG_UNARY_RELU || tol == 0) {
                    // exact ops: also the sign of zero
                    if (!(isnan(w) && isnan(g)) && (g != w || signbit(g) != signbit(w))) d = INFINITY;
                }
                if (d > worst) worst = d;
                if (d > tol) {
                    bad++;
                    CHECK_MSG(0, "%s(%s %.17g) = %.17g, want %.17g (%.1f ulp > %.0f)",
                              hg_unary_op_name(op), hg_dtype_name(t), xv, g, w, d, tol);
                }
                continue;
            } else {
                unsigned char xc[8];
                cvt_elem(r, t, xp, xc);
                st_i(r, want, int_unary(op, r, ld_i(r, xc)));
            }
            if (memcmp(want, gp, hg_dtype_size(r))) {
                bad++;
                CHECK_MSG(0, "%s(%s element %d = %lld): got %lld want %lld", hg_unary_op_name(op),
                          hg_dtype_name(t), i, (long long)ld_i(t, xp), (long long)ld_i(r, gp),
                          (long long)ld_i(r, want));
            }
        }
        if (!bad) hg_test_passed++;
        if (getenv("HG_TEST_VERBOSE") && is_float_dt(r))
            printf("%-12s %-5s worst %.2f ulp\n", hg_unary_op_name(op), hg_dtype_name(t), worst);
        free(got);
        hg_buffer_destroy(out.buffer);
    }
    hg_buffer_destroy(tx.buffer);
    free(x);
    return bad;
}

// ---------------------------------------------------------------------------------------------
// Reference: binary
// ---------------------------------------------------------------------------------------------

// numpy's npy_divmod in float and double.
#define DIVMOD(NAME, T, FMOD, FLOOR)                                                          \
    static T NAME(T a, T b, T* modulus) {                                                    \
        T mod = FMOD(a, b);                                                                  \
        if (!b) { *modulus = mod; return a / b; }                                            \
        T div = (a - mod) / b;                                                               \
        if (mod) {                                                                           \
            if ((b < 0) != (mod < 0)) { mod += b; div -= 1; }                                \
        } else {                                                                             \
            mod = copysign((T)0, b);                                                         \
        }                                                                                    \
        T fl;                                                                                \
        if (div) { fl = FLOOR(div); if (div - fl > (T)0.5) fl += 1; }                        \
        else fl = copysign((T)0, a / b);                                                     \
        *modulus = mod;                                                                      \
        return fl;                                                                           \
    }
DIVMOD(divmod_f, float, fmodf, floorf)
DIVMOD(divmod_d, double, fmod, floor)

static double float_binary(hg_binary_op op, hg_dtype ct, double a, double b, int* is_bool) {
    *is_bool = 0;
    int f64 = ct == D_F64;
    switch (op) {
    case HG_BINARY_ADD: return a + b;
    case HG_BINARY_SUB: return a - b;
    case HG_BINARY_MUL: return a * b;
    case HG_BINARY_DIV: return a / b;
    case HG_BINARY_FLOOR_DIVIDE: case HG_BINARY_REMAINDER: {
        if (f64) {
            double m, q = divmod_d(a, b, &m);
            if (!b) m = fmod(a, b);
            return op == HG_BINARY_FLOOR_DIVIDE ? q : m;
        }
        float m, q = divmod_f((float)a, (float)b, &m);
        if (!b) m = fmodf((float)a, (float)b);
        return op == HG_BINARY_FLOOR_DIVIDE ? q : m;
    }
    case HG_BINARY_POW: return (double)powl(a, b);
    case HG_BINARY_MINIMUM:
        if (isnan(a) || isnan(b)) return NAN;
        if (a == b) return signbit(a) ? a : b;
        return a < b ? a : b;
    case HG_BINARY_MAXIMUM:
        if (isnan(a) || isnan(b)) return NAN;
        if (a == b) return signbit(a) ? b : a;
        return a > b ? a : b;
    default: break;
    }
    *is_bool = 1;
    switch (op) {
    case HG_BINARY_EQ: return a == b;
    case HG_BINARY_NE: return a != b;
    case HG_BINARY_LT: return a < b;
    case HG_BINARY_LE: return a <= b;
    case HG_BINARY_GT: return a > b;
    case HG_BINARY_GE: return a >= b;
    case HG_BINARY_LOGICAL_AND: return (a != 0) && (b != 0);
    case HG_BINARY_LOGICAL_OR: return (a != 0) || (b != 0);
    case HG_BINARY_LOGICAL_XOR: return (a != 0) != (b != 0);
    default: return NAN;
    }
}

// Integer ops on values already of dtype t (sign-extended / zero-extended into 64 bits).
static uint64_t int_binary(hg_binary_op op, hg_dtype t, int64_t a, int64_t b, int* is_bool) {
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    int s = is_signed_dt(t);
    unsigned w = t == D_BOOL ? 8 : width_of(t);
    *is_bool = 0;
    int lt = s ? a < b : ua < ub;
    switch (op) {
    case HG_BINARY_ADD: return t == D_BOOL ? (ua | ub) : ua + ub;
    case HG_BINARY_SUB: return ua - ub;
    case HG_BINARY_MUL: return t == D_BOOL ? (ua & ub) : ua * ub;
    case HG_BINARY_FLOOR_DIVIDE: {
        if (!b) return 0;
        if (!s) return ua / ub;
        if (b == -1) return 0 - ua;   // MIN // -1 wraps to MIN
        int64_t q = a / b, r = a % b;
        if (r && ((r < 0) != (b < 0))) q--;
        return (uint64_t)q;
    }
    case HG_BINARY_REMAINDER: {
        if (!b) return 0;
        if (!s) return ua % ub;
        if (b == -1) return 0;
        int64_t r = a % b;
        if (r && ((r < 0) != (b < 0))) r += b;
        return (uint64_t)r;
    }
    case HG_BINARY_POW: {
        if (s && b < 0) return 0;
        uint64_t r = 1, base = ua, e = ub;
        while (e) { if (e & 1) r *= base; base *= base; e >>= 1; }
        return r;
    }
    case HG_BINARY_MINIMUM: return t == D_BOOL ? (ua & ub) : lt ? ua : ub;
    case HG_BINARY_MAXIMUM: return t == D_BOOL ? (ua | ub) : lt ? ub : ua;
    case HG_BINARY_BITWISE_AND: return ua & ub;
    case HG_BINARY_BITWISE_OR: return ua | ub;
    case HG_BINARY_BITWISE_XOR: return ua ^ ub;
    case HG_BINARY_LEFT_SHIFT: {
        uint64_t sh = w == 64 ? ub : ub & ((UINT64_C(1) << w) - 1);
        return sh >= w ? 0 : ua << sh;
    }
    case HG_BINARY_RIGHT_SHIFT: {
        uint64_t sh = w == 64 ? ub : ub & ((UINT64_C(1) << w) - 1);
        if (sh >= w) return s && a < 0 ? (uint64_t)-1 : 0;
        return s ? (uint64_t)(a >> sh) : ua >> sh;
    }
    default: break;
    }
    *is_bool = 1;
    switch (op) {
    case HG_BINARY_EQ: return a == b;
    case HG_BINARY_NE: return a != b;
    case HG_BINARY_LT: return lt;
    case HG_BINARY_LE: return !(s ? b < a : ub < ua);
    case HG_BINARY_GT: return s ? b < a : ub < ua;
    case HG_BINARY_GE: return !lt;
    case HG_BINARY_LOGICAL_AND: return a && b;
    case HG_BINARY_LOGICAL_OR: return a || b;
    case HG_BINARY_LOGICAL_XOR: return !a != !b;
    default: return 0;
    }
}

static double binary_tol(hg_binary_op op, hg_dtype rt) {
    if (op != HG_BINARY_POW) return 0;
    return rt == D_F64 ? 4096 : 1;
}

// Expected element for a (dtype at) op b (dtype bt): bytes of the result dtype; returns the
// float value for float results.
static int expect_binary(hg_binary_op op, hg_dtype at, hg_dtype bt, const void* ap,
                         const void* bp, hg_dtype ct, hg_dtype rt, unsigned char* want,
                         double* wantf) {
    unsigned char ac[8], bc[8];
    cvt_elem(ct, at, ap, ac);
    cvt_elem(ct, bt, bp, bc);
    int is_bool;
    memset(want, 0, 8);
    if (is_float_dt(ct)) {
        double a = ld_f(ct, ac), b = ld_f(ct, bc);
        double r = float_binary(op, ct, a, b, &is_bool);
        if (is_bool) { want[0] = (unsigned char)(r != 0); return 0; }
        *wantf = round_to(rt, r);
        st_f(rt, want, *wantf);
        return 1;
    }
    int64_t a = ld_i(ct, ac), b = ld_i(ct, bc);
    if (ct == D_U64) { a = (int64_t)(uint64_t)ld_i(ct, ac); b = (int64_t)(uint64_t)ld_i(ct, bc); }
    uint64_t r = int_binary(op, ct, a, b, &is_bool);
    if (is_bool) { want[0] = (unsigned char)(r != 0); return 0; }
    if (ct != D_BOOL) r = (uint64_t)wrap_s(ct, r);
    st_i(rt, want, r);
    return 0;
}

// a: values of at (na), b: values of bt (nb); tests every pair (outer product via broadcast).
static int check_binary(hg_binary_op op, hg_dtype at, hg_dtype bt, int na, int nb) {
    hg_dtype ct, rt;
    int supported = binary_rule(op, at, bt, &ct, &rt);
    unsigned char* a = malloc((size_t)na * 8 + 8);
    unsigned char* b = malloc((size_t)nb * 8 + 8);
    gen_values(at, na, a);
    gen_values(bt, nb, b);
    // Exponents of float pow: keep |b log a| moderate (f64 pow's error grows with it).
    if (op == HG_BINARY_POW && is_float_dt(bt))
        for (int i = 26; i < nb; i++) cvt_from_double(bt, (urand() * 16 - 8), b + (size_t)i * hg_dtype_size(bt));
    // Integers to negative integer powers are refused (numpy's ValueError), nothing created;
    // then the exponents' magnitudes (MIN as MAX) are checked.
    if (supported && op == HG_BINARY_POW && is_int_dt(rt) && is_signed_dt(bt)) {
        hg_tensor ta0 = make_tensor(at, 2, (int64_t[]){na, 1}, a);
        hg_tensor tb0 = make_tensor(bt, 1, (int64_t[]){nb}, b), out0;
        memset(&out0, 0, sizeof out0);
        CHECK_STATUS(hg_binary(op, &ta0, &tb0, &out0), HG_ERR_INVALID_ARGUMENT);
        CHECK(out0.buffer.handle == 0 && strstr(hg_last_error(), "negative integer powers"));
        hg_buffer_destroy(ta0.buffer);
        hg_buffer_destroy(tb0.buffer);
        for (int i = 0; i < nb; i++) {
            unsigned char* p = b + (size_t)i * hg_dtype_size(bt);
            int64_t v = ld_i(bt, p);
            if (v < 0) st_i(bt, p, (uint64_t)(-(v + 1)));
        }
    }
    hg_tensor ta = make_tensor(at, 2, (int64_t[]){na, 1}, a);
    hg_tensor tb = make_tensor(bt, 1, (int64_t[]){nb}, b), out;
    memset(&out, 0, sizeof out);
    hg_status s = hg_binary(op, &ta, &tb, &out);
    int bad = 0;
    if (!supported) {
        CHECK_MSG(s == HG_ERR_DTYPE_MISMATCH, "%s on %s, %s: got %s", hg_binary_op_name(op),
                  hg_dtype_name(at), hg_dtype_name(bt), hg_status_string(s));
        CHECK(out.buffer.handle == 0);
    } else if (s) {
        CHECK_MSG(0, "%s on %s, %s failed: %s", hg_binary_op_name(op), hg_dtype_name(at),
                  hg_dtype_name(bt), hg_last_error());
    } else {
        CHECK_MSG(out.dtype == rt && out.ndim == 2 && out.shape[0] == na && out.shape[1] == nb,
                  "%s on %s, %s: result %s", hg_binary_op_name(op), hg_dtype_name(at),
                  hg_dtype_name(bt), hg_dtype_name(out.dtype));
        size_t rs = hg_dtype_size(rt), n = (size_t)na * (size_t)nb;
        unsigned char* got = malloc(n * rs);
        hg_buffer_read(out.buffer, 0, got, n);
        double tol = binary_tol(op, rt);
        for (int i = 0; i < na && bad < 5; i++)
            for (int j = 0; j < nb && bad < 5; j++) {
                const unsigned char* ap = a + (size_t)i * hg_dtype_size(at);
                const unsigned char* bp = b + (size_t)j * hg_dtype_size(bt);
                const unsigned char* gp = got + ((size_t)i * (size_t)nb + (size_t)j) * rs;
                unsigned char want[8];
                double wf = 0;
                int isf = expect_binary(op, at, bt, ap, bp, ct, rt, want, &wf);
                int ok;
                if (isf) {
                    double g = ld_f(rt, gp);
                    ok = tol ? ulp_diff(rt, g, wf) <= tol
                             : (isnan(g) && isnan(wf)) || (g == wf && signbit(g) == signbit(wf));
                } else {
                    ok = !memcmp(want, gp, rs);
                }
                if (!ok) {
                    bad++;
                    CHECK_MSG(0, "%s(%s %.17g, %s %.17g): got %.17g want %.17g",
                              hg_binary_op_name(op), hg_dtype_name(at), ld_any(at, ap),
                              hg_dtype_name(bt), ld_any(bt, bp), ld_any(rt, gp),
                              isf ? wf : ld_any(rt, want));
                }
            }
        if (!bad) hg_test_passed++;
        free(got);
        hg_buffer_destroy(out.buffer);
    }
    hg_buffer_destroy(ta.buffer);
    hg_buffer_destroy(tb.buffer);
    free(a);
    free(b);
    return bad;
}

static void test_result_type(void) {
    for (int a = 0; a < NDT; a++)
        for (int b = 0; b < NDT; b++) {
            hg_dtype r = HG_DTYPE_COUNT;
            CHECK_OK(hg_result_type((hg_dtype)a, (hg_dtype)b, &r));
            CHECK_MSG(r == promo[a][b], "result_type(%s, %s) = %s, want %s",
                      hg_dtype_name((hg_dtype)a), hg_dtype_name((hg_dtype)b), hg_dtype_name(r),
                      hg_dtype_name(promo[a][b]));
        }
    hg_dtype r;
    CHECK_STATUS(hg_result_type((hg_dtype)99, D_F32, &r), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_result_type(D_F32, D_F32, NULL), HG_ERR_NULL_POINTER);
}

static void test_names(void) {
    CHECK(!strcmp(hg_unary_op_name(HG_UNARY_EXP), "exp"));
    CHECK(!strcmp(hg_unary_op_name(HG_UNARY_GELU_ERF), "gelu_erf"));
    CHECK(!strcmp(hg_binary_op_name(HG_BINARY_FLOOR_DIVIDE), "floor_divide"));
    CHECK(!strcmp(hg_binary_op_name(HG_BINARY_RIGHT_SHIFT), "right_shift"));
    CHECK(hg_unary_op_name(HG_UNARY_COUNT) == NULL);
    CHECK(hg_binary_op_name((hg_binary_op)-1) == NULL);
    for (int op = 0; op < HG_UNARY_COUNT; op++) CHECK(hg_unary_op_name((hg_unary_op)op) != NULL);
    for (int op = 0; op < HG_BINARY_COUNT; op++) CHECK(hg_binary_op_name((hg_binary_op)op) != NULL);
}

// fma and where on every dtype: a (n,1), b (n,) broadcast, c / cond of another layout.
static void check_fma_where(hg_dtype t) {
    const int n = 24;
    size_t es = hg_dtype_size(t);
    unsigned char *a = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *c = malloc(8);
    gen_values(t, n, a);
    gen_values(t, n, b);
    // the product of the first values is exact in f16/bf16 via f64; c is a mid-size value
    cvt_from_double(t, 3.0, c);
    if (t == D_BOOL) c[0] = 0;
    hg_tensor ta = make_tensor(t, 2, (int64_t[]){n, 1}, a), tb = make_tensor(t, 1, (int64_t[]){n}, b);
    hg_tensor tc = make_tensor(t, 0, NULL, c), out = {0}, w = {0};
    CHECK_OK(hg_fma(&ta, &tb, &tc, &out));
    CHECK(out.dtype == t && out.ndim == 2);
    CHECK_OK(hg_where(&tb, &ta, &tc, &w));   // cond: b != 0 (broadcast over rows)
    unsigned char* got = malloc((size_t)n * n * es);
    unsigned char* gw = malloc((size_t)n * n * es);
    hg_buffer_read(out.buffer, 0, got, (size_t)n * n);
    hg_buffer_read(w.buffer, 0, gw, (size_t)n * n);
    int bad = 0;
    for (int i = 0; i < n && bad < 3; i++)
        for (int j = 0; j < n && bad < 3; j++) {
            const unsigned char *ap = a + i * es, *bp = b + j * es;
            const unsigned char* gp = got + ((size_t)i * n + j) * es;
            unsigned char want[8] = {0};
            if (t == D_BOOL) {
                want[0] = (unsigned char)((ap[0] && bp[0]) || c[0]);
            } else if (is_float_dt(t)) {
                double r = t == D_F32 ? (double)fmaf((float)ld_f(t, ap), (float)ld_f(t, bp), (float)ld_f(t, c))
                                      : fma(ld_f(t, ap), ld_f(t, bp), ld_f(t, c));
                st_f(t, want, round_to(t, r));
            } else {
                uint64_t r = (uint64_t)ld_i(t, ap) * (uint64_t)ld_i(t, bp) + (uint64_t)ld_i(t, c);
                st_i(t, want, r);
            }
            int same = !memcmp(want, gp, es) ||
                       (is_float_dt(t) && isnan(ld_f(t, want)) && isnan(ld_f(t, gp)));
            if (!same) {
                bad++;
                CHECK_MSG(0, "fma(%s %.17g, %.17g, %.17g) = %.17g, want %.17g", hg_dtype_name(t),
                          ld_any(t, ap), ld_any(t, bp), ld_any(t, c), ld_any(t, gp), ld_any(t, want));
            }
            const unsigned char* wp = ld_any(t, bp) != 0 || (is_float_dt(t) && isnan(ld_f(t, bp))) ? ap : c;
            if (memcmp(wp, gw + ((size_t)i * n + j) * es, es)) {
                bad++;
                CHECK_MSG(0, "where(%s): element (%d, %d) differs", hg_dtype_name(t), i, j);
            }
        }
    if (!bad) hg_test_passed++;
    hg_buffer_destroy(out.buffer);
    hg_buffer_destroy(w.buffer);
    hg_buffer_destroy(ta.buffer);
    hg_buffer_destroy(tb.buffer);
    hg_buffer_destroy(tc.buffer);
    free(a);
    free(b);
    free(c);
    free(got);
    free(gw);
}

// f64 pow with small integer exponents is exact when the result is representable.
static void check_pow_exact(void) {
    double a[6] = {2, 10, 3, -2, 7, 0.5}, b[6] = {3, 5, 13, 5, -2, -4};
    hg_tensor ta = make_tensor(D_F64, 1, (int64_t[]){6}, a), tb = make_tensor(D_F64, 1, (int64_t[]){6}, b);
    hg_tensor o = {0};
    CHECK_OK(hg_binary(HG_BINARY_POW, &ta, &tb, &o));
    double r[6];
    hg_buffer_read(o.buffer, 0, r, 6);
    for (int i = 0; i < 6; i++)
        CHECK_MSG(r[i] == pow(a[i], b[i]), "pow(%g, %g) = %.17g, want %.17g", a[i], b[i], r[i],
                  pow(a[i], b[i]));
    hg_buffer_destroy(o.buffer);
    hg_buffer_destroy(ta.buffer);
    hg_buffer_destroy(tb.buffer);
}

// numpy: an int that does not fit the tensor's dtype is taken in f64 by true division and
// by its truth by the logical ops (no error there); an empty integer power refuses nothing.
static void check_scalar_edges(void) {
    uint8_t a[2] = {3, 0};
    hg_tensor ta = make_tensor(D_U8, 1, (int64_t[]){2}, a), o = {0};
    CHECK_OK(hg_binary_scalar(HG_BINARY_DIV, &ta, hg_scalar_i(-300), 0, &o));
    double q[2];
    CHECK(o.dtype == D_F64 && hg_buffer_read(o.buffer, 0, q, 2) == HG_OK);
    CHECK(q[0] == 3.0 / -300.0 && q[1] == 0.0);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    CHECK_OK(hg_binary_scalar(HG_BINARY_LOGICAL_AND, &ta, hg_scalar_i(-1), 1, &o));
    unsigned char l[2];
    CHECK(o.dtype == D_BOOL && hg_buffer_read(o.buffer, 0, l, 2) == HG_OK);
    CHECK(l[0] == 1 && l[1] == 0);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    CHECK_STATUS(hg_binary_scalar(HG_BINARY_ADD, &ta, hg_scalar_i(-1), 0, &o),
                 HG_ERR_OUT_OF_RANGE);   // an add takes it in u8: NEP 50 refuses
    int64_t e = -1;
    hg_tensor te = make_tensor(D_I64, 0, NULL, &e), empty = ta;
    empty.shape[0] = 0;
    memset(&o, 0, sizeof o);
    CHECK_OK(hg_binary(HG_BINARY_POW, &empty, &te, &o));
    CHECK(o.ndim == 1 && o.shape[0] == 0);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    hg_tensor empty_i64 = te;   // (a u8 would refuse the -1 itself)
    empty_i64.ndim = 1;
    empty_i64.shape[0] = 0;
    empty_i64.strides[0] = 1;
    CHECK_OK(hg_binary_scalar(HG_BINARY_POW, &empty_i64, hg_scalar_i(-1), 0, &o));
    hg_buffer_destroy(o.buffer);
    hg_buffer_destroy(te.buffer);
    hg_buffer_destroy(ta.buffer);
}

int main(void) {
    if (hg_executor_create(HG_BACKEND_CPU, &ex)) {
        fprintf(stderr, "no CPU executor: %s\n", hg_last_error());
        return 1;
    }
    test_result_type();
    test_names();
    for (int op = 0; op < HG_UNARY_COUNT; op++)
        for (int t = 0; t < NDT; t++) check_unary((hg_unary_op)op, (hg_dtype)t, 600);
    // Same-dtype pairs: specials x (specials + random).
    for (int op = 0; op < HG_BINARY_COUNT; op++)
        for (int t = 0; t < NDT; t++) check_binary((hg_binary_op)op, (hg_dtype)t, (hg_dtype)t, 40, 60);
    // Every dtype pair, for ops covering each promotion path.
    static const hg_binary_op mixed[] = {HG_BINARY_ADD, HG_BINARY_DIV, HG_BINARY_LT,
                                         HG_BINARY_MAXIMUM, HG_BINARY_FLOOR_DIVIDE,
                                         HG_BINARY_BITWISE_OR};
    for (size_t k = 0; k < sizeof mixed / sizeof *mixed; k++)
        for (int a = 0; a < NDT; a++)
            for (int b = 0; b < NDT; b++)
                if (a != b) check_binary(mixed[k], (hg_dtype)a, (hg_dtype)b, 20, 24);
    for (int t = 0; t < NDT; t++) check_fma_where((hg_dtype)t);
    check_pow_exact();
    check_scalar_edges();
    hg_executor_destroy(ex);
    return hg_test_finish("ops_elementwise");
}
