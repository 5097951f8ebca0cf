// Float math instructions (sqrt rsqrt exp exp2 log log2 sin cos tanh sigmoid erf floor ceil
// round trunc gelu) in f16 bf16 f32 f64 on the CPU backend against long-double references.
// Exactly rounded ones (sqrt, floor, ceil, round, trunc) must match bit for bit; the others
// within the ULP bounds below, with special values (NaN, inf, ±0 inputs, and exact 0/inf
// results) matching exactly. f16/bf16 run over all 65536 bit patterns and must be within 1 ULP.
#include <math.h>

#include "instr_harness.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const hg_dtype k_types[] = {HG_DTYPE_F16, HG_DTYPE_BF16, HG_DTYPE_F32, HG_DTYPE_F64};

typedef struct math_op {
    hg_opcode op;
    double ulp;          // bound for f32/f64 (0: bit-exact)
    double lo, hi;       // interesting input range for random f32/f64 inputs
    double ulp_f64;      // f64 bound where it differs from ulp (0: the same)
} math_op;

static const math_op k_ops[] = {
    {HG_OP_SQRT, 0, 0, 1e6, 0},          {HG_OP_RSQRT, 2, 0, 1e6, 0},
    {HG_OP_EXP, 2, -110, 90, 0},         {HG_OP_EXP2, 2, -155, 130, 0},
    {HG_OP_LOG, 2, 0, 10, 0},            {HG_OP_LOG2, 2, 0, 10, 0},
    {HG_OP_SIN, 2, -1e4, 1e4, 0},        {HG_OP_COS, 2, -1e4, 1e4, 0},
    {HG_OP_TANH, 6, -10, 10, 0},         {HG_OP_SIGMOID, 6, -110, 110, 0},
    {HG_OP_ERF, 8, -6, 6, 0},            {HG_OP_FLOOR, 0, -1e3, 1e3, 0},
    {HG_OP_CEIL, 0, -1e3, 1e3, 0},       {HG_OP_ROUND, 0, -1e3, 1e3, 0},
    {HG_OP_TRUNC, 0, -1e3, 1e3, 0},
    // gelu.f64 is x * sigmoid(u) with u rounded in f64: in the negative tail the result's
    // relative error is |u| times u's (docs/ops.md: measured up to ~1,100 ULP near underflow).
    {HG_OP_GELU, 6, -14, 14, 1500},
    // gelu_erf.f64: libm erfc of -x / sqrt 2 rounded in f64: erfc's relative error is about
    // 2u^2 times the argument's (measured up to ~1,400 ULP near underflow, as the f64 gelu_erf
    // op of the library, whose bound is 2048).
    {HG_OP_GELU_ERF, 6, -15, 15, 2048},
};

static int is_exact_op(hg_opcode op) {
    return op == HG_OP_SQRT || op == HG_OP_FLOOR || op == HG_OP_CEIL || op == HG_OP_ROUND ||
           op == HG_OP_TRUNC;
}

static void gen_inputs(const math_op* mo, hg_dtype t, uint64_t* rng, ih_vec* v) {
    if (t == HG_DTYPE_F16 || t == HG_DTYPE_BF16) {
        for (uint64_t b = 0; b < 65536; b++) ih_push(v, b);
        return;
    }
    ih_specials(t, v);
    double lo = mo->lo, hi = mo->hi;
    if (t == HG_DTYPE_F64 && (mo->op == HG_OP_EXP || mo->op == HG_OP_SIGMOID)) {
        lo = -760;
        hi = 720;
    }
    if (t == HG_DTYPE_F64 && mo->op == HG_OP_EXP2) { lo = -1090; hi = 1030; }
    for (int i = 0; i < 150000; i++) ih_push(v, ih_rand_value(t, rng));
    for (int i = 0; i < 150000; i++) ih_push(v, ir_from_double(ih_rand_range(rng, lo, hi), t));
    // Small arguments (where sin, tanh, erf are close to x) and values near 1 for log.
    for (int i = 0; i < 20000; i++) {
        double x = ih_rand_range(rng, -1, 1) * ldexp(1.0, -(int)(hg_test_rand(rng) % 40));
        ih_push(v, ir_from_double(x, t));
        ih_push(v, ir_from_double(1 + ih_rand_range(rng, -1, 1) * 1e-3, t));
    }
    // Halves and quarters for the rounding functions.
    for (int i = 0; i < 2000; i++)
        ih_push(v, ir_from_double((double)((int64_t)(hg_test_rand(rng) % 4001) - 2000) / 4, t));
}

// Whether the lane's result must match exactly: special inputs, exact 0/inf/NaN results.
static int needs_exact(hg_dtype t, uint64_t a, long double exact) {
    if (ir_is_nan(a, t) || ir_is_inf(a, t) || ir_is_zero(a, t)) return 1;
    return exact == 0 || isinf(exact) || isnan(exact);
}

typedef struct tally {
    size_t cases, bad;
    double max_ulp, max_ulp_far;  // far: sin/cos with |x| > 1e4 (reported only)
} tally;

static void check_lanes(const ih_kspec* ks, const math_op* mo, size_t n, const uint64_t* in,
                        uint64_t a_uniform, const uint64_t* out, tally* ty) {
    hg_dtype t = ks->type;
    int narrow = t == HG_DTYPE_F16 || t == HG_DTYPE_BF16;
    double bound = narrow ? 1.0 : t == HG_DTYPE_F64 && mo->ulp_f64 > 0 ? mo->ulp_f64 : mo->ulp;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = in ? in[i] : a_uniform, got = out[i];
        int ok;
        double err = 0;
        long double x = ir_to_double(a, t);
        long double exact = ir_math_exact(mo->op, x);
        if (is_exact_op(mo->op)) {
            ok = ir_same_value(got, ir_round_op(mo->op, t, a), t);
        } else if (needs_exact(t, a, exact)) {
            uint64_t want = ir_from_double((double)exact, t);
            ok = ir_same_value(got, want, t);
        } else {
            err = ir_ulp_error(got, exact, t);
            int far = (mo->op == HG_OP_SIN || mo->op == HG_OP_COS) && fabsl(x) > 1e4L;
            if (far) {
                // Beyond the accuracy range: only the range of sin/cos is required.
                double g = ir_to_double(got, t);
                ok = g >= -1.0 && g <= 1.0;
                if (err > ty->max_ulp_far && err < 1e29) ty->max_ulp_far = err;
            } else {
                ok = err <= bound;
                if (err > ty->max_ulp && err < 1e29) ty->max_ulp = err;
            }
        }
        ty->cases++;
        if (!ok) {
            ty->bad++;
            if (ty->bad <= 4) {
                char ba[64], bg[64], bw[64];
                fprintf(stderr, "MISMATCH %s%s: a=%s got=%s want=%s (%.3g ulp, bound %.3g)\n",
                        ih_spec_name(ks), in ? "" : " [imm/param]", ir_fmt(ba, sizeof ba, a, t),
                        ir_fmt(bg, sizeof bg, got, t),
                        ir_fmt(bw, sizeof bw, ir_from_double((double)exact, t), t), err,
                        is_exact_op(mo->op) ? 0.0 : bound);
            }
        }
    }
}

static void run_op(const math_op* mo, hg_dtype t, uint64_t* rng, size_t* total) {
    ih_kspec ks = ih_spec(mo->op, t, 0);
    ih_vec v = {0};
    gen_inputs(mo, t, rng, &v);
    uint64_t* out = calloc(v.n, sizeof *out);
    tally ty = {0, 0, 0, 0};
    const uint64_t* in[3] = {v.v, NULL, NULL};
    // Dense, then sparse (odd lanes idle: the op runs under a partial lane mask).
    for (int sparse = 0; sparse < 2; sparse++) {
        ks.sparse = sparse;
        if (ih_run(&ks, v.n, in, out) == HG_OK) check_lanes(&ks, mo, v.n, v.v, 0, out, &ty);
        else ty.bad++;
    }
    ks.sparse = 0;
    size_t reg_cases = ty.cases;
    // Uniform operand: immediate and scalar parameter, a few values each.
    ih_vec sp = {0};
    ih_specials(t, &sp);
    const size_t picks[] = {0, 1, 2, 4, 9, 17, 19, 28};
    for (int m = IH_IMM; m <= IH_PARAM; m++)
        for (size_t j = 0; j < COUNT(picks); j++) {
            ih_kspec u = ks;
            u.mode[0] = (ih_mode)m;
            u.uni[0] = sp.v[picks[j] % sp.n];
            if (ih_run(&u, 300, in, out) == HG_OK)
                check_lanes(&u, mo, 300, NULL, u.uni[0], out, &ty);
            else
                ty.bad++;
        }
    CHECK_MSG(ty.bad == 0, "%s: %zu of %zu lanes out of bounds", ih_spec_name(&ks), ty.bad,
              ty.cases);
    printf("  %-14s %7zu reg + %4zu imm/param cases  max ulp %-8.3g", ih_spec_name(&ks),
           reg_cases, ty.cases - reg_cases, ty.max_ulp);
    if (mo->op == HG_OP_SIN || mo->op == HG_OP_COS)
        printf(" (|x|>1e4: %.3g)", ty.max_ulp_far);
    printf("  %s\n", ty.bad ? "MISMATCH" : "ok");
    *total += ty.cases;
    ih_vec_free(&sp);
    ih_vec_free(&v);
    free(out);
}

int main(void) {
    double t0 = ih_now();
    uint64_t rng = 0xA7145EED0002ull;
    size_t total = 0;
    // Pin the reference on a few Annex F values.
    CHECK(ir_round_op(HG_OP_ROUND, HG_DTYPE_F32, ir_bits_f32(2.5f)) == ir_bits_f32(2.0f));
    CHECK(ir_round_op(HG_OP_ROUND, HG_DTYPE_F32, ir_bits_f32(-0.5f)) == ir_bits_f32(-0.0f));
    CHECK(ir_round_op(HG_OP_ROUND, HG_DTYPE_F64, ir_bits_f64(3.5)) == ir_bits_f64(4.0));
    CHECK(ir_round_op(HG_OP_CEIL, HG_DTYPE_F16, 0xb800) == 0x8000);  // ceil(-0.5) = -0
    CHECK(ir_from_double((double)ir_math_exact(HG_OP_RSQRT, -0.0L), HG_DTYPE_F32) == 0xff800000u);
    for (size_t ti = 0; ti < COUNT(k_types); ti++)
        for (size_t oi = 0; oi < COUNT(k_ops); oi++) run_op(&k_ops[oi], k_types[ti], &rng, &total);
    printf("test_instructions_math: %zu lane cases in %.1f s\n", total, ih_now() - t0);
    ih_shutdown();
    return hg_test_finish("test_instructions_math");
}
