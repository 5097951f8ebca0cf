// Internal: the library's one set of branch-free f32 exp exp2 log log2 tanh sigmoid erf (and
// the f64 exp cores) that the compiler vectorizes (libm calls do not): the CPU backend's math
// kernels (backends/cpu/simd) and the op library's host kernels (softmax) both use them, so it
// lives in the lowest layer. Every function is straight-line code with selects,
// no float->int conversions (the integer parts come from bit patterns). The project compiles in
// ISO C mode (-ffp-contract=off), so the compiler never fuses a*b+c on its own; the polynomials
// and reductions call fmaf/fma explicitly instead. A fused multiply-add is exactly rounded on
// every target (the FMA builds compile it to vfmadd, the portable build calls libm's fmaf,
// slower but only used on CPUs without FMA), so all kernel sets stay bit-identical.
//
// Accuracy against the exact function (tests/test_math_ulp.c sweeps f32 bit patterns):
// exp exp2 log log2 <= 2 ULP, tanh sigmoid <= 6 ULP, erf <= 8 ULP (measured maxima are lower;
// see docs/math_accuracy.md). Special values follow C99 Annex F: NaN -> NaN, exp(-inf) = +0,
// exp(+inf) = +inf, overflow -> +inf, underflow -> subnormal/+0, log(+-0) = -inf,
// log(x < 0) = NaN, log(+inf) = +inf, tanh(+-0) = +-0, tanh(+-inf) = +-1, erf(+-0) = +-0.
#ifndef HG_BASE_VMATH_H
#define HG_BASE_VMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t hg_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float hg_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t hg_d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static inline double hg_u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

// 1.5 * 2^23: adding it to |v| < 2^22 rounds v to an integer held in the low mantissa bits.
#define HG_VM_ROUND_MAGIC_F 12582912.0f
// 1.5 * 2^52, the same for double.
#define HG_VM_ROUND_MAGIC_D 6755399441055744.0

// 2^(j/16) rounded to f32 (at most 0.45 ULP off): the table of the gelu kernel's exponential.
static const float hg_vm_exp2_16th[16] = {
    1.0f,       1.0442737f, 1.0905077f, 1.1387886f, 1.1892071f, 1.2418578f,
    1.2968396f, 1.3542556f, 1.4142135f, 1.4768262f, 1.5422108f, 1.6104903f,
    1.6817929f, 1.7562522f, 1.8340081f, 1.9152066f,
};
// 2^n for an integer n in [-160, 160], applied to y as two multiplications by normal powers
// of two: the first is exact, so a result in the subnormal range is rounded only once.
static inline float hg_vm_scale_f32(float y, uint32_t n_plus_magic) {
    int32_t n = (int32_t)(n_plus_magic - 0x4b400000u);
    int32_t n1 = n >> 1, n2 = n - n1;  // arithmetic shift (GCC): n1 = floor(n / 2)
    float s1 = hg_u2f((uint32_t)(n1 + 127) << 23);
    float s2 = hg_u2f((uint32_t)(n2 + 127) << 23);
    return y * s1 * s2;
}

// copysign(min(|x|, lim), x) for lim > 0 on the bit patterns (|x| orders like its bits as an
// unsigned integer): an and, an integer min and an or. NaN becomes +-lim. GCC compiles a pair
// of float clamps on one value into four compares and two blends, and a single clamp whose
// result feeds arithmetic into per-branch constants and blends; the integer min is one
// instruction.
static inline float hg_vm_clamp_abs_f32(float x, float lim) {
    uint32_t u = hg_f2u(x);
    uint32_t a = u & 0x7fffffffu, l = hg_f2u(lim);
    a = a < l ? a : l;
    return hg_u2f(a | (u & 0x80000000u));
}

// min(|x|, lim) for lim > 0 on the bit patterns: an and and an integer min (NaN becomes lim).
static inline float hg_vm_min_abs_f32(float x, float lim) {
    uint32_t a = hg_f2u(x) & 0x7fffffffu, l = hg_f2u(lim);
    return hg_u2f(a < l ? a : l);
}

// e^xc for |xc| <= 110 (not NaN). Cody-Waite reduction xc = n ln2 + r with |r| <= ln2/2 (the
// high part of ln2 has few bits, so n * ln2_hi is exact), then a degree-7 polynomial for e^r
// in Horner form, one fused multiply-add per coefficient; n is in [-159, 159].
static inline float hg_vm_exp_core_f32(float xc) {
    float t = fmaf(xc, 1.44269504088896341f, HG_VM_ROUND_MAGIC_F);
    float n = t - HG_VM_ROUND_MAGIC_F;
    float r = fmaf(n, -0.693145751953125f, xc);
    r = fmaf(n, -1.428606765330187045e-06f, r);
    float p = 0.000198527617612853646278381f;
    p = fmaf(p, r, 0.00139304355252534151077271f);
    p = fmaf(p, r, 0.00833336077630519866943359f);
    p = fmaf(p, r, 0.0416664853692054748535156f);
    p = fmaf(p, r, 0.166666671633720397949219f);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    float y = fmaf(p, r, 1.0f);
    return hg_vm_scale_f32(y, hg_f2u(t));
}

static inline float hg_vm_exp_f32(float x) {
    // Beyond +-110 the result is +0 or inf anyway; clamping keeps n in the scale's range. NaN
    // becomes +-110 there and is put back last.
    float y = hg_vm_exp_core_f32(hg_vm_clamp_abs_f32(x, 110.0f));
    return x != x ? x + x : y;
}

// 2^x: x = n + r exactly with |r| <= 1/2, then a degree-6 polynomial for 2^r.
static inline float hg_vm_exp2_f32(float x) {
    float xc = hg_vm_clamp_abs_f32(x, 160.0f);  // as in hg_vm_exp_f32
    float t = xc + HG_VM_ROUND_MAGIC_F;
    float r = xc - (t - HG_VM_ROUND_MAGIC_F);
    float p = 0.1535920892e-3f;
    p = fmaf(p, r, 0.1339262701e-2f);
    p = fmaf(p, r, 0.9618384764e-2f);
    p = fmaf(p, r, 0.5550347269e-1f);
    p = fmaf(p, r, 0.2402264476e+0f);
    p = fmaf(p, r, 0.6931471825e+0f);
    float y = fmaf(p, r, 1.0f);
    // n in [-160, 160]: split in two powers of two as in hg_vm_scale_f32.
    y = hg_vm_scale_f32(y, hg_f2u(t));
    return x != x ? x + x : y;
}

// Splits a positive finite x into 2^k * m with m in [sqrt(1/2), sqrt(2)); returns f = m - 1
// (exact) and k as a float. Subnormal x is scaled by 2^23 first.
static inline float hg_vm_log_split(float x, float* k_out) {
    int sub = x < 1.17549435e-38f;
    float xs = sub ? x * 8388608.0f : x;
    uint32_t u = hg_f2u(xs);
    uint32_t t = u - 0x3f3504f3u;  // bits of sqrt(1/2)
    // The exponent field of t is k (two's complement); GCC shifts signed values arithmetically.
    int32_t k = (int32_t)t >> 23;
    float m = hg_u2f(u - (t & 0xff800000u));
    *k_out = (float)k - (sub ? 23.0f : 0.0f);
    return m - 1.0f;
}

// The polynomial part of log(1+f) - f + f^2/2 for |f| <= 0.415 (Cephes logf).
static inline float hg_vm_log_poly(float f, float z) {
    float y = 7.0376836292E-2f;
    y = fmaf(y, f, -1.1514610310E-1f);
    y = fmaf(y, f, 1.1676998740E-1f);
    y = fmaf(y, f, -1.2420140846E-1f);
    y = fmaf(y, f, 1.4249322787E-1f);
    y = fmaf(y, f, -1.6668057665E-1f);
    y = fmaf(y, f, 2.0000714765E-1f);
    y = fmaf(y, f, -2.4999993993E-1f);
    y = fmaf(y, f, 3.3333331174E-1f);
    return y * f * z;
}

// The result for the inputs outside (0, inf): log(+-0) = -inf, log(+inf) = +inf, log(x < 0)
// and log(NaN) = NaN.
static inline float hg_vm_log_special(float x) {
    float s = x + x;  // +inf stays, NaN stays NaN
    s = x < 0.0f ? NAN : s;
    return x == 0.0f ? -INFINITY : s;
}

static inline float hg_vm_log_f32(float x) {
    float k;
    float f = hg_vm_log_split(x, &k);
    float z = f * f;
    float y = hg_vm_log_poly(f, z);
    y = fmaf(k, -2.12194440e-4f, y);  // low part of ln2
    y = fmaf(-0.5f, z, y);
    float r = f + y;
    r = fmaf(k, 0.693359375f, r);     // high part of ln2: k * it is exact
    return x > 0.0f && x < INFINITY ? r : hg_vm_log_special(x);
}

static inline float hg_vm_log2_f32(float x) {
    float k;
    float f = hg_vm_log_split(x, &k);
    float z = f * f;
    float y = fmaf(-0.5f, z, hg_vm_log_poly(f, z));
    // log2(1+f) = (f + y) * log2(e), with log2(e) - 1 split off so the large terms add last.
    const float log2e_m1 = 0.44269504088896340736f;
    float r = fmaf(f, log2e_m1, y * log2e_m1);
    r = r + y;
    r = r + f;
    r = r + k;
    return x > 0.0f && x < INFINITY ? r : hg_vm_log_special(x);
}

// e^x - 1 for x in [0, 40] (NaN propagates): the reduction of hg_vm_exp_core_f32, e^r - 1 by
// the same polynomial without its leading 1 (accurate for tiny r), then
// 2^n (e^r - 1) + (2^n - 1), where 2^n is a single normal power of two.
static inline float hg_vm_expm1_pos_f32(float x) {
    float t = fmaf(x, 1.44269504088896341f, HG_VM_ROUND_MAGIC_F);
    float n = t - HG_VM_ROUND_MAGIC_F;
    float r = fmaf(n, -0.693145751953125f, x);
    r = fmaf(n, -1.428606765330187045e-06f, r);
    float p = 0.000198527617612853646278381f;
    p = fmaf(p, r, 0.00139304355252534151077271f);
    p = fmaf(p, r, 0.00833336077630519866943359f);
    p = fmaf(p, r, 0.0416664853692054748535156f);
    p = fmaf(p, r, 0.166666671633720397949219f);
    p = fmaf(p, r, 0.5f);
    float em1_r = fmaf(r * r, p, r);
    float scale = hg_u2f((hg_f2u(t) - 0x4b400000u + 127u) << 23);  // 2^n, n in [0, 58]
    return fmaf(em1_r, scale, scale - 1.0f);
}

// tanh(|x|) = m / (m + 2) with m = e^(2|x|) - 1, which keeps full relative accuracy down to
// tiny and subnormal x (m = 2|x| there); the sign is put back last so tanh(-0) = -0.
static inline float hg_vm_tanh_f32(float x) {
    float z = fabsf(x);
    // Past 10, tanh rounds to 1; the clamp keeps 2^n normal. NaN passes and propagates.
    float zc = z > 10.0f ? 10.0f : z;
    float m = hg_vm_expm1_pos_f32(zc + zc);
    return copysignf(m / (m + 2.0f), x);
}

// sigmoid(x) = 1/(1+e^-x), evaluated with e = e^-|x| so it never forms inf/inf: 1/(1+e) for
// x >= 0 and e/(1+e) below, one division either way (the numerator is a select).
static inline float hg_vm_sigmoid_f32(float x) {
    // e^-110 is far below half the smallest subnormal; NaN becomes -110 and is put back last.
    float e = hg_vm_exp_core_f32(-hg_vm_min_abs_f32(x, 110.0f));
    float num = x >= 0.0f ? 1.0f : e;
    float q = num / (1.0f + e);
    return x != x ? x + x : q;
}

// e^q in double for q in [-700, 700] (no special values): degree-11 Taylor polynomial on
// |r| <= ln2/2, relative error < 1e-15.
static inline double hg_vm_exp_f64_core(double q) {
    double t = fma(q, 1.4426950408889634, HG_VM_ROUND_MAGIC_D);
    double n = t - HG_VM_ROUND_MAGIC_D;
    double r = fma(n, -6.93147180369123816490e-01, q);
    r = fma(n, -1.90821492927058770002e-10, r);
    double p = 1.0 / 39916800.0;
    p = fma(p, r, 1.0 / 3628800.0);
    p = fma(p, r, 1.0 / 362880.0);
    p = fma(p, r, 1.0 / 40320.0);
    p = fma(p, r, 1.0 / 5040.0);
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    // The low 12 bits of t's pattern are n (two's complement): shift n + 1023 into the exponent.
    double scale = hg_u2d((hg_d2u(t) + 1023u) << 52);
    return p * scale;
}

// e^z in double for z in [-760, 0] (not NaN): the reduction and polynomial of
// hg_vm_exp_f64_core with two more Taylor terms (truncation error < 1e-17 relative), and 2^n
// (n in [-1097, 0]) applied as two multiplications by normal powers of two so a subnormal
// result is rounded once. Error about 1 ULP of f64.
static inline double hg_vm_exp_nonpos_f64(double z) {
    double t = fma(z, 1.4426950408889634, HG_VM_ROUND_MAGIC_D);
    double n = t - HG_VM_ROUND_MAGIC_D;
    double r = fma(n, -6.93147180369123816490e-01, z);   // n * ln2_hi is exact
    r = fma(n, -1.90821492927058770002e-10, r);
    double p = 1.0 / 6227020800.0;
    p = fma(p, r, 1.0 / 479001600.0);
    p = fma(p, r, 1.0 / 39916800.0);
    p = fma(p, r, 1.0 / 3628800.0);
    p = fma(p, r, 1.0 / 362880.0);
    p = fma(p, r, 1.0 / 40320.0);
    p = fma(p, r, 1.0 / 5040.0);
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    // -n from the bit patterns (unsigned arithmetic only: AVX2 has no 64-bit arithmetic shift).
    uint64_t m = hg_d2u(HG_VM_ROUND_MAGIC_D) - hg_d2u(t);
    uint64_t m1 = m >> 1, m2 = m - m1;
    double s1 = hg_u2d((1023u - m1) << 52), s2 = hg_u2d((1023u - m2) << 52);
    return p * s1 * s2;
}

// sigmoid in double, as hg_vm_sigmoid_f32: e = e^-|x|, then 1/(1+e) or e/(1+e). Within 2 ULP.
static inline double hg_vm_sigmoid_f64(double x) {
    // |x| clamped to 760 on the bit patterns (e^-760 rounds to +0); NaN is put back last.
    uint64_t a = hg_d2u(x) & 0x7fffffffffffffffull, lim = hg_d2u(760.0);
    double e = hg_vm_exp_nonpos_f64(-hg_u2d(a < lim ? a : lim));
    double num = x >= 0.0 ? 1.0 : e;
    double q = num / (1.0 + e);
    return x != x ? x + x : q;
}

// erf, evaluated in double and rounded once: |x| < 1 by its Taylor series (12 terms, error
// < 1e-10); 1 <= |x| < 4 as 1 - e^Q(|x|) with Q a degree-12 fit of log(erfc) (error < 1e-10);
// beyond 4 erf rounds to +-1 in f32.
static inline __attribute__((always_inline)) float hg_vm_erf_f32(float x) {
    double a = fabs((double)x);
    double z = a * a;
    double s = -1.2290555301717928e-09;
    s = fma(s, z, 1.4807192815879218e-08);
    s = fma(s, z, -1.6365844691234924e-07);
    s = fma(s, z, 1.6462114365889248e-06);
    s = fma(s, z, -1.492565035840625e-05);
    s = fma(s, z, 0.00012055332981789664);
    s = fma(s, z, -0.00085483270234508533);
    s = fma(s, z, 0.0052239776254421879);
    s = fma(s, z, -0.026866170645131252);
    s = fma(s, z, 0.11283791670955126);
    s = fma(s, z, -0.37612638903183754);
    s = fma(s, z, 1.1283791670955126);
    double small = a * s;
    double ac = a > 4.0 ? 4.0 : a;   // keeps Q in its fitted range (NaN passes, dropped below)
    double t = ac * (2.0 / 3.0) - 5.0 / 3.0;
    double q = -6.231068265719554e-07;
    q = fma(q, t, 1.5374647137844104e-06);
    q = fma(q, t, -4.9774598570727618e-07);
    q = fma(q, t, -6.7586994448558356e-06);
    q = fma(q, t, 4.518131414478744e-05);
    q = fma(q, t, -0.00021748137353529972);
    q = fma(q, t, 0.0008774833576886378);
    q = fma(q, t, -0.0031965930799807566);
    q = fma(q, t, 0.010962717767370485);
    q = fma(q, t, -0.03664597835078328);
    q = fma(q, t, -2.1237608998658692);
    q = fma(q, t, -8.0290211270939196);
    q = fma(q, t, -7.806815272733008);
    double big = 1.0 - hg_vm_exp_f64_core(q);
    double r = a < 1.0 ? small : (a < 4.0 ? big : 1.0);
    float rf = copysignf((float)r, x);
    return x != x ? x + x : rf;
}

#endif
