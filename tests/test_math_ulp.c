// Accuracy of the vectorized float math kernels (exp exp2 log log2 tanh sigmoid erf gelu) of every
// CPU kernel set, against double-precision libm references:
// - f32: a sweep over every STRIDE-th of the 2^32 bit patterns (97 in Release; the env var
//   HG_MATH_ULP_STRIDE overrides it, sanitizer builds use a sparser sweep) plus special values;
//   bounds: exp exp2 log log2 <= 2 ULP, tanh sigmoid gelu <= 6 ULP, erf <= 8 ULP. The first set
//   is checked on every swept input, the others for bit identity on a quarter of them.
// - f16 and bf16: all 65536 inputs, within 1 ULP of the correctly rounded value.
// - Special values exactly (C99 Annex F): NaN, +-inf, +-0, overflow to inf, underflow to 0,
//   log of a negative number = NaN, log(+-0) = -inf, plus exact cases (exp2 of an integer,
//   log2 of a power of two, log(1) = +0, exp(0) = 1).
// - f64 sigmoid (the one vectorized f64 function) within 2 ULP of a long double reference.
// - The GELU forms' tails (7 <= |x| <= 16: subnormal results and intermediates) densely.
// - The portable, AVX2 and AVX-512 sets give bit-identical results, and so do the 8-lane exp and
//   log of base/vmath_ymm.h (the softmax short-row kernels') against base/vmath.h's.
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "backends/cpu/cpu_kernels.h"
#include "base/vmath.h"
#include "hg_test.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct func {
    hg_opcode op;
    const char* name;
    double bound;  // f32 bound in ULP
} func;

static const func k_funcs[] = {
    {HG_OP_EXP, "exp", 2},   {HG_OP_EXP2, "exp2", 2},       {HG_OP_LOG, "log", 2},
    {HG_OP_LOG2, "log2", 2}, {HG_OP_TANH, "tanh", 6},       {HG_OP_SIGMOID, "sigmoid", 6},
    {HG_OP_ERF, "erf", 8},   {HG_OP_GELU, "gelu", 6},      {HG_OP_GELU_ERF, "gelu_erf", 6},
};

static double sigmoid_ref(double x) {
    double e = exp(-fabs(x));
    return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

// gelu (tanh form) as x * sigmoid(u): u in double is accurate to ~2^-50 absolute, far below an
// f32 ULP of the result; -inf -> -0 (the limit).
static double gelu_ref(double x) {
    if (x == -INFINITY) return -0.0;
    double u = 2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return x * sigmoid_ref(u);
}

static double reference(hg_opcode op, double x) {
    switch (op) {
    case HG_OP_EXP: return exp(x);
    case HG_OP_EXP2: return exp2(x);
    case HG_OP_LOG: return log(x);
    case HG_OP_LOG2: return log2(x);
    case HG_OP_TANH: return tanh(x);
    case HG_OP_SIGMOID: return sigmoid_ref(x);
    case HG_OP_GELU: return gelu_ref(x);
    case HG_OP_GELU_ERF: return x == -INFINITY ? -0.0 : 0.5 * x * erfc(-x / sqrt(2.0));
    default: return erf(x);
    }
}

// A binary float format: mantissa bits, smallest normal exponent, largest finite value.
typedef struct fmt {
    const char* name;
    int mant;
    int emin;
    double max;
} fmt;
static const fmt k_f32 = {"f32", 23, -126, FLT_MAX};
static const fmt k_f16 = {"f16", 10, -14, 65504.0};
static const fmt k_bf16 = {"bf16", 7, -126, 0x1.fep127};

// Rounds v to the format (nearest, ties to even), with overflow to inf: the correctly rounded
// result the kernels are compared with.
static double round_to(const fmt* f, double v) {
    if (isnan(v) || isinf(v) || v == 0) return v;
    int e;
    frexp(v, &e);  // |v| in [2^(e-1), 2^e)
    int q = e - 1 < f->emin ? f->emin : e - 1;  // exponent of the ULP scale
    double scaled = ldexp(v, f->mant - q);
    double r = ldexp(nearbyint(scaled), q - f->mant);
    if (fabs(r) > f->max) return copysign(INFINITY, v);
    return r;
}

// Error of got against exact in ULPs of the format at the exact value (the ULP of the
// subnormal range below the smallest normal).
static double ulp_error(const fmt* f, float got, double exact) {
    double a = fabs(exact);
    int e;
    frexp(a, &e);
    int q = e - 1 < f->emin ? f->emin : e - 1;
    if (a > f->max) q = (int)floor(log2(f->max));
    return fabs((double)got - exact) / ldexp(1.0, q - f->mant);
}

typedef struct tally {
    size_t cases, bad;
    double max_ulp;
} tally;

static int same_value(float got, double want) {
    if (isnan(want)) return isnan(got);
    return (double)got == want && !signbit(got) == !signbit(want);
}

// Checks one result: exact where the input is special or the rounded result is 0/inf/NaN,
// else within the bound.
static void check_one(const fmt* f, const func* fn, float x, float got, double bound, tally* ty,
                      const char* set) {
    double exact = reference(fn->op, (double)x);
    double want = round_to(f, exact);
    int special = isnan(x) || isinf(x) || x == 0 || isnan(want) || isinf(want) || want == 0;
    double err = 0;
    int ok;
    if (special) {
        ok = same_value(got, want);
    } else {
        err = ulp_error(f, got, exact);
        ok = !isnan(got) && !isinf(got) && err <= bound;
        if (err > ty->max_ulp) ty->max_ulp = err;
    }
    ty->cases++;
    if (!ok && ++ty->bad <= 5)
        fprintf(stderr, "MISMATCH %s.%s [%s]: x=%a (%.9g) got=%a want=%a (%.3g ulp, bound %g)\n",
                fn->name, f->name, set, (double)x, (double)x, (double)got, want, err, bound);
}

static uint64_t sweep_stride(void) {
    const char* env = getenv("HG_MATH_ULP_STRIDE");
    if (env && atoll(env) > 0) return (uint64_t)atoll(env);
#if defined(__SANITIZE_ADDRESS__)
    return 20011;  // ASan+UBSan runs ~10x slower: a sparser sweep keeps the test short
#else
    return 97;
#endif
}

enum { CHUNK = 4096 };

// Runs fn over xs with every set; checks the first against the reference and the others for
// bit identity with it.
static void run_chunk(const hg_cpu_kernels* const* sets, size_t nsets, const fmt* f,
                      const func* fn, hg_dtype t, const float* xs, size_t n, double bound,
                      tally* ty) {
    static float out[4][CHUNK];
    for (size_t s = 0; s < nsets; s++) sets[s]->op[fn->op][t](out[s], xs, NULL, NULL, n);
    for (size_t i = 0; i < n; i++) {
        check_one(f, fn, xs[i], out[0][i], bound, ty, sets[0]->name);
        for (size_t s = 1; s < nsets; s++) {
            uint32_t u0, u1;
            memcpy(&u0, &out[0][i], 4);
            memcpy(&u1, &out[s][i], 4);
            if (u0 != u1 && ++ty->bad <= 5)
                fprintf(stderr, "%s.%s: sets %s and %s differ at x=%a: %a vs %a\n", fn->name,
                        f->name, sets[0]->name, sets[s]->name, (double)xs[i],
                        (double)out[0][i], (double)out[s][i]);
        }
    }
}

static const float k_specials[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, 0.5f,
    0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1p-126f, 0x1.fffffcp-127f, FLT_MAX, -FLT_MAX,
    88.72283f, 88.722839f, 88.7229f, 89.0f, -87.33654f, -87.5f, -103.2789f, -103.9720f,
    -104.0f, -110.0f, -1000.0f, 1000.0f, 127.0f, 127.99999f, 128.0f, -126.0f, -149.0f,
    -149.5f, -150.0f, -151.0f, 0.625f, -0.625f, 0.62499994f, 9.0f, 9.1f, -9.1f, 20.0f, 3.92f,
    -3.92f, 4.0f, -4.0f, 0.99999994f, 1.0000001f, 0x1p-30f, -0x1p-30f, 1e-20f, -1e-20f,
    -11.4f, -11.399999f, -11.400001f, 11.4f, -10.5f, -10.0f, -16.0f, 16.0f, -4.73f, 4.73f,
};

static void test_f32(const hg_cpu_kernels* const* sets, size_t nsets) {
    uint64_t stride = sweep_stride();
    static float xs[CHUNK];
    for (size_t fi = 0; fi < COUNT(k_funcs); fi++) {
        const func* fn = &k_funcs[fi];
        tally ty = {0, 0, 0};
        run_chunk(sets, nsets, &k_f32, fn, HG_DTYPE_F32, k_specials, COUNT(k_specials),
                  fn->bound, &ty);
        size_t n = 0, chunks = 0;
        for (uint64_t b = 0; b < (1ull << 32); b += stride) {
            uint32_t u = (uint32_t)b;
            memcpy(&xs[n], &u, 4);
            if (++n == CHUNK) {
                // The other sets on every 4th chunk (still ~11M inputs per function in
                // Release): the portable set calls libm's fmaf per operation, ~10x slower.
                size_t here = chunks++ % 4 == 0 ? nsets : 1;
                run_chunk(sets, here, &k_f32, fn, HG_DTYPE_F32, xs, n, fn->bound, &ty);
                n = 0;
            }
        }
        run_chunk(sets, nsets, &k_f32, fn, HG_DTYPE_F32, xs, n, fn->bound, &ty);
        CHECK_MSG(ty.bad == 0, "%s.f32: %zu of %zu inputs wrong", fn->name, ty.bad, ty.cases);
        printf("  %-8s f32  %9zu inputs (every %llu-th pattern + specials)  max %.3f ulp "
               "(bound %g)\n", fn->name, ty.cases, (unsigned long long)stride, ty.max_ulp,
               fn->bound);
    }
}

// The GELU forms' tails, 7 <= |x| <= 16, where their results or intermediates would be
// subnormal and the vector kernels take integer paths (kernels_gelu.c): densely, every set,
// each chunk mixing tail inputs with every third lane from the special values (both paths of a
// vector choice in one vector).
static void test_gelu_tails(const hg_cpu_kernels* const* sets, size_t nsets) {
    static const func fns[] = {{HG_OP_GELU, "gelu", 6}, {HG_OP_GELU_ERF, "gelu_erf", 6}};
    uint64_t stride = sweep_stride() / 19 + 1;   // 6 in Release: ~1.6M inputs per function
    uint32_t lo = hg_f2u(7.0f), hi = hg_f2u(16.0f);
    static float xs[CHUNK];
    for (size_t fi = 0; fi < COUNT(fns); fi++) {
        tally ty = {0, 0, 0};
        size_t n = 0, sp = 0;
        for (uint32_t sign = 0; sign < 2; sign++)
            for (uint64_t b = lo; b <= hi; b += stride) {
                xs[n] = hg_u2f((uint32_t)b | sign << 31);
                if (n % 3 == 2) xs[n] = k_specials[sp++ % COUNT(k_specials)];
                if (++n == CHUNK) {
                    run_chunk(sets, nsets, &k_f32, &fns[fi], HG_DTYPE_F32, xs, n, fns[fi].bound,
                              &ty);
                    n = 0;
                }
            }
        run_chunk(sets, nsets, &k_f32, &fns[fi], HG_DTYPE_F32, xs, n, fns[fi].bound, &ty);
        CHECK_MSG(ty.bad == 0, "%s tails: %zu of %zu inputs wrong", fns[fi].name, ty.bad,
                  ty.cases);
        printf("  %-8s f32  %9zu inputs, 7 <= |x| <= 16 (every %llu-th), all sets  max %.3f ulp\n",
               fns[fi].name, ty.cases, (unsigned long long)stride, ty.max_ulp);
    }
}

static void test_narrow(const hg_cpu_kernels* const* sets, size_t nsets, const fmt* f,
                        hg_dtype t) {
    static float xs[65536];
    for (uint32_t b = 0; b < 65536; b++)
        xs[b] = t == HG_DTYPE_F16 ? hg_f16_to_f32((uint16_t)b) : hg_bf16_to_f32((uint16_t)b);
    for (size_t fi = 0; fi < COUNT(k_funcs); fi++) {
        const func* fn = &k_funcs[fi];
        tally ty = {0, 0, 0};
        for (size_t i = 0; i < 65536; i += CHUNK)
            run_chunk(sets, nsets, f, fn, t, xs + i, CHUNK, 1.0, &ty);
        CHECK_MSG(ty.bad == 0, "%s.%s: %zu of %zu inputs wrong", fn->name, f->name, ty.bad,
                  ty.cases);
        printf("  %-8s %-4s %9zu inputs (all)  max %.3f ulp (bound 1)\n", fn->name, f->name,
               ty.cases, ty.max_ulp);
    }
}

// f64 sigmoid (vectorized in vmath.h, the others call libm): within 2 ULP of a long double
// reference on random values over [-800, 800] and random bit patterns, exact on special values
// (NaN, +-inf -> 1 / +0, +-0 -> 0.5, deep tail -> +0 or subnormal), bit-identical across sets.
static void test_sigmoid_f64(const hg_cpu_kernels* const* sets, size_t nsets) {
    enum { N = 200000, NS = 14 };
    static double xs[N], out[3][N];
    const double specials[NS] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 760.0, -760.0,
                                 -745.2, -744.0, -708.5, -1000.0, 40.0, 1e-300};
    uint64_t seed = 12345;
    for (int i = 0; i < N; i++) {
        if (i < NS) {
            xs[i] = specials[i];
        } else if (i % 2) {
            xs[i] = (double)(hg_test_rand(&seed) >> 11) * 0x1p-53 * 1600.0 - 800.0;
        } else {
            uint64_t u = hg_test_rand(&seed);
            memcpy(&xs[i], &u, 8);
        }
    }
    for (size_t s = 0; s < nsets; s++) sets[s]->op[HG_OP_SIGMOID][HG_DTYPE_F64](out[s], xs, NULL, NULL, N);
    size_t bad = 0;
    double max_ulp = 0;
    for (int i = 0; i < N; i++) {
        long double x = xs[i], e = expl(-fabsl(x));
        long double exact = x >= 0 ? 1.0L / (1.0L + e) : e / (1.0L + e);
        double want = (double)exact, got = out[0][i];
        int ok;
        if (isnan(xs[i]) || isinf(xs[i]) || want == 0 || want == 1.0) {
            // NaN -> NaN; +-inf -> 1 / +0; results that round to 0 or 1 within one ULP of it
            ok = isnan(xs[i]) ? isnan(got)
                              : fabs(got - want) <= 0x1p-1074 + 0x1p-53 * want && !signbit(got);
        } else {
            int ex;
            frexp(want, &ex);
            double ulp = ldexp(1.0, (ex - 1 < -1022 ? -1022 : ex - 1) - 52);
            double err = (double)(fabsl((long double)got - exact) / ulp);
            if (err > max_ulp) max_ulp = err;
            ok = err <= 2.0;
        }
        for (size_t s = 1; s < nsets; s++) ok = ok && !memcmp(&out[0][i], &out[s][i], 8);
        if (!ok && ++bad <= 5)
            fprintf(stderr, "MISMATCH sigmoid.f64: x=%a got=%a want=%a\n", xs[i], got, want);
    }
    CHECK_MSG(bad == 0, "sigmoid.f64: %zu of %d inputs wrong", bad, (int)N);
    printf("  sigmoid  f64  %9d inputs (random + specials)  max %.3f ulp (bound 2)\n", (int)N,
           max_ulp);
    // exact special values
    CHECK(out[0][2] == 1.0 && out[0][3] == 0.0 && out[0][4] == 0.5 && out[0][5] == 0.5);
    CHECK(out[0][11] == 0.0 && !signbit(out[0][11]) && out[0][9] > 0 && out[0][9] < 0x1p-1022);
}

// Exact results the implementations guarantee beyond the ULP bounds.
static void test_exact_cases(const hg_cpu_kernels* k) {
    enum { N = 277 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i - 149);  // -149 .. 127
    k->op[HG_OP_EXP2][HG_DTYPE_F32](y, x, NULL, NULL, N);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != ldexpf(1.0f, i - 149);
    CHECK_MSG(bad == 0, "%s: exp2 of %d integers not exactly 2^n", k->name, bad);
    for (int i = 0; i < N; i++) x[i] = ldexpf(1.0f, i - 149);
    k->op[HG_OP_LOG2][HG_DTYPE_F32](y, x, NULL, NULL, N);
    bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != (float)(i - 149);
    CHECK_MSG(bad == 0, "%s: log2 of %d powers of two not exact", k->name, bad);
    float one = 1.0f, zero = 0.0f, r;
    k->op[HG_OP_LOG][HG_DTYPE_F32](&r, &one, NULL, NULL, 1);
    CHECK(r == 0.0f && !signbit(r));
    k->op[HG_OP_EXP][HG_DTYPE_F32](&r, &zero, NULL, NULL, 1);
    CHECK(r == 1.0f);
    float neg[4] = {-1.0f, -FLT_MIN, -0x1p-149f, -INFINITY}, out[4];
    k->op[HG_OP_LOG][HG_DTYPE_F32](out, neg, NULL, NULL, 4);
    CHECK(isnan(out[0]) && isnan(out[1]) && isnan(out[2]) && isnan(out[3]));
    k->op[HG_OP_LOG2][HG_DTYPE_F32](out, neg, NULL, NULL, 4);
    CHECK(isnan(out[0]) && isnan(out[1]) && isnan(out[2]) && isnan(out[3]));
    float zs[2] = {0.0f, -0.0f};
    k->op[HG_OP_LOG][HG_DTYPE_F32](out, zs, NULL, NULL, 2);
    CHECK(out[0] == -INFINITY && out[1] == -INFINITY);
    // Overflow to +inf, underflow to +0, and a subnormal result.
    float big[3] = {89.0f, -200.0f, -100.0f};
    k->op[HG_OP_EXP][HG_DTYPE_F32](out, big, NULL, NULL, 3);
    CHECK(out[0] == INFINITY && out[1] == 0.0f && !signbit(out[1]));
    CHECK(out[2] > 0 && out[2] < FLT_MIN);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include "base/vmath_ymm.h"
// Inputs of xs (n a multiple of 8) where vmath_ymm.h's exp (lg 0) or log (lg 1) differs in
// any bit from vmath.h's scalar function (compiled here for the same target, so fmaf is one
// instruction).
__attribute__((target("avx2,fma"))) static size_t ymm_mismatches(const float* xs, size_t n,
                                                                 int lg) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i += 8) {
        float got[8];
        __m256 v = _mm256_loadu_ps(xs + i);
        _mm256_storeu_ps(got, lg ? hg_vm_log_ymm(v) : hg_vm_exp_ymm(v));
        for (int j = 0; j < 8; j++) {
            float want = lg ? hg_vm_log_f32(xs[i + j]) : hg_vm_exp_f32(xs[i + j]);
            if (memcmp(&got[j], &want, 4) && ++bad <= 5)
                fprintf(stderr, "vmath_ymm %s differs at x=%a: %a vs %a\n", lg ? "log" : "exp",
                        (double)xs[i + j], (double)got[j], (double)want);
        }
    }
    return bad;
}

static void test_vmath_ymm(void) {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("  vmath_ymm: no AVX2+FMA here, not checked\n");
        return;
    }
    static float xs[CHUNK];
    uint64_t stride = sweep_stride();
    for (int lg = 0; lg < 2; lg++) {
        size_t bad = 0, cases = 0, n = 0;
        memset(xs, 0, sizeof xs);
        memcpy(xs, k_specials, sizeof k_specials);
        bad += ymm_mismatches(xs, (COUNT(k_specials) + 7) / 8 * 8, lg);
        cases += COUNT(k_specials);
        for (uint64_t b = 0; b < (1ull << 32); b += stride) {
            uint32_t u = (uint32_t)b;
            memcpy(&xs[n], &u, 4);
            if (++n == CHUNK) { bad += ymm_mismatches(xs, n, lg); cases += n; n = 0; }
        }
        n = n / 8 * 8;
        bad += ymm_mismatches(xs, n, lg);
        cases += n;
        CHECK_MSG(bad == 0, "vmath_ymm %s: %zu of %zu inputs differ", lg ? "log" : "exp", bad,
                  cases);
        printf("  vmath_ymm %s: %zu inputs bit for bit vmath.h's\n", lg ? "log" : "exp", cases);
    }
}
#else
static void test_vmath_ymm(void) {}
#endif

int main(void) {
    const hg_cpu_kernels* sets[3];
    size_t nsets = 0;
    const char* names[] = {"avx512", "avx2", "generic"};
    for (size_t i = 0; i < COUNT(names); i++) {
        const hg_cpu_kernels* k = hg_cpu_kernels_named(names[i]);
        if (k) sets[nsets++] = k;
    }
    CHECK(nsets >= 1);
    printf("kernel sets:");
    for (size_t i = 0; i < nsets; i++) printf(" %s", sets[i]->name);
    printf(" (first checked against the reference, others for bit identity)\n");
    for (size_t i = 0; i < nsets; i++) test_exact_cases(sets[i]);
    test_narrow(sets, nsets, &k_f16, HG_DTYPE_F16);
    test_narrow(sets, nsets, &k_bf16, HG_DTYPE_BF16);
    test_f32(sets, nsets);
    test_gelu_tails(sets, nsets);
    test_sigmoid_f64(sets, nsets);
    test_vmath_ymm();
    return hg_test_finish("test_math_ulp");
}
