// Dense accuracy sweep of the float unary ops through hg_unary:
// - f32: every STEP-th bit pattern of the 2^32 (plus special values) for the composite functions
//   emitted as f32 instruction sequences (expm1 log1p softplus silu gelu) and the ISA functions
//   they are built on, against a long double reference; prints the maximum ULP error per op.
// - f16 and bf16: all 65,536 inputs of every float unary op, within 1 ULP of the correctly
//   rounded result.
// ULPs are those of the result format, with the subnormal spacing used below the smallest normal
// (so a result that underflows is compared with an absolute error in subnormal steps).
// HG_ULP_STEP overrides the f32 stride (default 509; 8x that under sanitizers).
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/hg_test.h"
#include "hologram.h"
#include "test_ops_elementwise_ref.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static hg_executor ex;

static long double sigmoid_l(long double x) {
    // e^-|x| form: no inf/inf for large negative x.
    long double e = expl(-fabsl(x));
    return x >= 0 ? 1.0L / (1.0L + e) : e / (1.0L + e);
}

static long double ref(hg_unary_op op, long double x) {
    const long double k = 0.797884560802865355879892119868763737L;   // sqrt(2 / pi)
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
    case HG_UNARY_GELU:
        if (x == -INFINITY) return -0.0L;
        return x * sigmoid_l(2 * k * (x + 0.044715L * x * x * x));
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

// Runs op on n values of dtype t (raw bytes in) and writes the results (same dtype) to out.
static int run(hg_unary_op op, hg_dtype t, const void* in, size_t n, void* out) {
    hg_buffer b;
    hg_tensor tx, to;
    memset(&to, 0, sizeof to);
    if (hg_buffer_create(ex, t, n, &b)) return -1;
    hg_buffer_write(b, 0, in, n);
    hg_tensor_from_buffer(b, 1, (int64_t[]){(int64_t)n}, &tx);
    hg_status s = hg_unary(op, &tx, &to);
    int ok = s == HG_OK && to.dtype == t;
    if (ok) hg_buffer_read(to.buffer, 0, out, n);
    else fprintf(stderr, "%s on %s: %s\n", hg_unary_op_name(op), hg_dtype_name(t),
                 hg_last_error());
    if (to.buffer.handle) hg_buffer_destroy(to.buffer);
    hg_buffer_destroy(b);
    return ok ? 0 : -1;
}

// Error of got against the exact value, in ULPs of the correctly rounded result; a zero result
// must also have the exact value's sign.
static double err_ulp(hg_dtype t, double got, long double exact) {
    double want = round_to(t, (double)exact);
    if (want == 0 && got == 0) return signbit(want) == signbit(got) ? 0 : INFINITY;
    if (isnan(want) || isnan(got) || isinf(want) || isinf(got)) return ulp_diff(t, got, want);
    return (double)(fabsl((long double)got - exact) / ulp_of(t, want));
}

// ---- f32 sweep

typedef struct { hg_unary_op op; double bound; } f32_case;

static void sweep_f32(const f32_case* c, uint32_t step) {
    enum { CHUNK = 1 << 20 };
    float* in = malloc(CHUNK * sizeof(float));
    float* out = malloc(CHUNK * sizeof(float));
    double worst = 0;
    float worst_x = 0, worst_got = 0;
    uint64_t count = 0;
    static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, 1.0f,
                                     FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f, FLT_MAX, -FLT_MAX,
                                     88.72f, 88.73f, -87.3f, -103.9f, -10.5f, -92.0f, 1e-8f,
                                     -1e-8f, 0.5f, -0.5f, 0.999999f, -0.999999f, 20.0f, -20.0f};
    uint64_t next = 0;
    size_t ns = sizeof specials / sizeof *specials;
    int first = 1;
    while (next < (UINT64_C(1) << 32) || first) {
        size_t n = 0;
        if (first) {
            for (; n < ns; n++) in[n] = specials[n];
            first = 0;
        }
        for (; n < CHUNK && next < (UINT64_C(1) << 32); n++, next += step) {
            uint32_t u = (uint32_t)next;
            memcpy(&in[n], &u, 4);
        }
        if (run(c->op, D_F32, in, n, out)) { CHECK(0); break; }
        for (size_t i = 0; i < n; i++) {
            double e = err_ulp(D_F32, out[i], ref(c->op, in[i]));
            if (e > worst) { worst = e; worst_x = in[i]; worst_got = out[i]; }
        }
        count += n;
    }
    printf("f32 %-9s max %.3f ULP (x = %.9g: got %.9g, exact %.12Lg) over %llu inputs; "
           "bound %g\n", hg_unary_op_name(c->op), worst, worst_x, worst_got,
           ref(c->op, worst_x), (unsigned long long)count, c->bound);
    CHECK_MSG(worst <= c->bound, "f32 %s: %.3f ULP at x = %.9g (bound %g)",
              hg_unary_op_name(c->op), worst, worst_x, c->bound);
    free(in);
    free(out);
}

// ---- f16 / bf16: every input

static double half_value(hg_dtype t, uint16_t h) { return ld_f(t, &h); }

static void sweep_half(hg_unary_op op, hg_dtype t) {
    uint16_t in[65536], out[65536];
    for (uint32_t i = 0; i < 65536; i++) in[i] = (uint16_t)i;
    if (run(op, t, in, 65536, out)) { CHECK(0); return; }
    double worst = 0;
    uint16_t worst_x = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        double got = half_value(t, out[i]);
        double want = round_to(t, (double)ref(op, half_value(t, in[i])));
        double d = ulp_diff(t, got, want);
        if (want == 0 && got == 0 && signbit(want) != signbit(got)) d = INFINITY;
        if (d > worst) { worst = d; worst_x = in[i]; }
    }
    printf("%-4s %-11s max %.0f ULP from the correctly rounded result%s\n", hg_dtype_name(t),
           hg_unary_op_name(op), worst, worst > 0 ? "" : " (all correctly rounded)");
    CHECK_MSG(worst <= 1, "%s %s: %.0f ULP at input bits 0x%04x", hg_dtype_name(t),
              hg_unary_op_name(op), worst, worst_x);
}

int main(void) {
    if (hg_executor_create(HG_BACKEND_CPU, &ex)) {
        fprintf(stderr, "no CPU executor: %s\n", hg_last_error());
        return 1;
    }
    uint32_t step = SANITIZED ? 509u * 8u : 509u;
    const char* env = getenv("HG_ULP_STEP");
    if (env && atol(env) > 0) step = (uint32_t)atol(env);
    static const f32_case f32_cases[] = {
        {HG_UNARY_EXPM1, 4}, {HG_UNARY_LOG1P, 4}, {HG_UNARY_SOFTPLUS, 4}, {HG_UNARY_SILU, 6},
        {HG_UNARY_GELU, 6},  {HG_UNARY_GELU_ERF, 6}, {HG_UNARY_EXP, 2}, {HG_UNARY_TANH, 6},
        {HG_UNARY_SIGMOID, 6},
    };
    for (size_t i = 0; i < sizeof f32_cases / sizeof *f32_cases; i++) sweep_f32(&f32_cases[i], step);
    static const hg_unary_op half_ops[] = {
        HG_UNARY_SQRT, HG_UNARY_RSQRT, HG_UNARY_EXP, HG_UNARY_EXPM1, HG_UNARY_EXP2, HG_UNARY_LOG,
        HG_UNARY_LOG1P, HG_UNARY_LOG2, HG_UNARY_SIN, HG_UNARY_COS, HG_UNARY_TANH,
        HG_UNARY_SIGMOID, HG_UNARY_GELU, HG_UNARY_GELU_ERF, HG_UNARY_SILU, HG_UNARY_SOFTPLUS,
        HG_UNARY_ERF, HG_UNARY_RECIPROCAL, HG_UNARY_SQUARE, HG_UNARY_FLOOR, HG_UNARY_CEIL,
        HG_UNARY_ROUND, HG_UNARY_TRUNC, HG_UNARY_RELU, HG_UNARY_ABS, HG_UNARY_NEG, HG_UNARY_SIGN,
    };
    for (size_t i = 0; i < sizeof half_ops / sizeof *half_ops; i++) {
        sweep_half(half_ops[i], D_F16);
        sweep_half(half_ops[i], D_BF16);
    }
    hg_executor_destroy(ex);
    return hg_test_finish("ops_unary_ulp");
}
