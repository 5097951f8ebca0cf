// hg_random_uniform / hg_random_normal: Philox-4x32-10 against the published known-answer
// vectors (Random123 kat_vectors), every element against a reference generator written here
// (its own Philox, counter = offset + i with carry, its own rounding to f16/bf16), the counter
// property (offsets, slices, strided outs give the numbers of their C-order positions), equal
// results on 1 and 2 threads, statistics (mean, variance, chi-square and Kolmogorov-Smirnov
// over buckets), bounds after rounding (never high), and the error paths (nothing written).
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "ops/random/random.h"

// ---------------------------------------------------------------------------------------------
// Reference generator
// ---------------------------------------------------------------------------------------------
static void ref_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t a = (uint64_t)0xD2511F53u * c0, b = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(b >> 32) ^ c1 ^ k0, n1 = (uint32_t)b;
        uint32_t n2 = (uint32_t)(a >> 32) ^ c3 ^ k1, n3 = (uint32_t)a;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

static void ref_words(uint64_t seed, uint64_t offset, uint64_t i, uint32_t w[4]) {
    uint64_t lo = offset + i;
    uint32_t ctr[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), lo < offset, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    ref_philox(ctr, key, w);
}

static double ref_unit(const uint32_t w[4]) {
    uint64_t v = ((uint64_t)w[1] << 32 | w[0]) >> 11;
    return ldexp((double)v, -53);
}
static double ref_normal(const uint32_t w[4]) {
    uint64_t a = ((uint64_t)w[1] << 32 | w[0]) >> 11, b = ((uint64_t)w[3] << 32 | w[2]) >> 11;
    double u1 = ldexp((double)(a + 1), -53), u2 = ldexp((double)b, -53);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

// x rounded once to nearest-even with `mant` fraction bits, minimum normal exponent emin and
// largest finite value maxv (beyond: +-inf).
static double ref_round(double x, int mant, int emin, double maxv) {
    if (x == 0 || isnan(x) || isinf(x)) return x;
    int e;
    frexp(x, &e);   // |x| in [2^(e-1), 2^e)
    int ex = e - 1 < emin ? emin : e - 1;
    double ulp = ldexp(1.0, ex - mant);
    double r = rint(x / ulp) * ulp;
    if (fabs(r) > maxv) return r > 0 ? INFINITY : -INFINITY;
    return r;
}
static double ref_to_dtype(hg_dtype dt, double x) {
    switch (dt) {
    case HG_DTYPE_F16: return ref_round(x, 10, -14, 65504.0);
    case HG_DTYPE_BF16: return ref_round(x, 7, -126, 3.38953138925153547590e38);
    case HG_DTYPE_F32: return (float)x;
    default: return x;
    }
}
static double load(hg_dtype dt, const void* p) {
    switch (dt) {
    case HG_DTYPE_F16: return hg_f16_to_f32(*(const uint16_t*)p);
    case HG_DTYPE_BF16: return hg_bf16_to_f32(*(const uint16_t*)p);
    case HG_DTYPE_F32: return *(const float*)p;
    default: return *(const double*)p;
    }
}
// Largest dtype value below v (v a positive or negative dtype value, not the smallest).
static double ref_below(hg_dtype dt, double v) {
    if (dt == HG_DTYPE_F64) return nextafter(v, -INFINITY);
    if (dt == HG_DTYPE_F32) return nextafterf((float)v, -INFINITY);
    int mant = dt == HG_DTYPE_F16 ? 10 : 7, emin = dt == HG_DTYPE_F16 ? -14 : -126;
    int e;
    frexp(fabs(v), &e);
    int ex = e - 1 < emin ? emin : e - 1;
    // Going down from a positive power of two crosses into the binade below.
    if (v > 0 && fabs(v) == ldexp(1.0, ex) && ex > emin) ex--;
    return v - ldexp(1.0, ex - mant);
}

static const hg_dtype k_float[4] = {HG_DTYPE_F16, HG_DTYPE_BF16, HG_DTYPE_F32, HG_DTYPE_F64};

static double ref_uniform_value(hg_dtype dt, uint64_t seed, uint64_t off, uint64_t i, double lo,
                                double hi) {
    uint32_t w[4];
    ref_words(seed, off, i, w);
    double y = ref_to_dtype(dt, lo + (hi - lo) * ref_unit(w));
    if (y >= hi) y = ref_below(dt, hi);
    return y;
}
static double ulp_of(hg_dtype dt, double v) {
    int mant = dt == HG_DTYPE_F16 ? 10 : dt == HG_DTYPE_BF16 ? 7 : dt == HG_DTYPE_F32 ? 23 : 52;
    int emin = dt == HG_DTYPE_F16 ? -14 : dt == HG_DTYPE_BF16 || dt == HG_DTYPE_F32 ? -126 : -1022;
    int e;
    frexp(v, &e);
    return ldexp(1.0, (e - 1 < emin ? emin : e - 1) - mant);
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

static void test_kat(void) {
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
        {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
         0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
        {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u,
         0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
    for (int k = 0; k < 3; k++) {
        uint32_t out[4], ref[4];
        hg_philox4x32_10(kat[k], kat[k] + 4, out);
        ref_philox(kat[k], kat[k] + 4, ref);
        CHECK_MSG(memcmp(out, kat[k] + 6, 16) == 0, "Philox KAT %d: %08x %08x %08x %08x", k,
                  out[0], out[1], out[2], out[3]);
        CHECK(memcmp(ref, kat[k] + 6, 16) == 0);   // the test's own reference, too
    }
    // log(0) never happens: the smallest u1 is 2^-53, the largest 1.
    uint32_t zero[4] = {0, 0, 0, 0}, ones[4] = {~0u, ~0u, 0, 0};
    double zmax = hg_random_std_normal(zero), zone = hg_random_std_normal(ones);
    CHECK_MSG(isfinite(zmax) && fabs(zmax - sqrt(106.0 * log(2.0))) < 1e-12, "%.17g", zmax);
    CHECK_MSG(zone == 0.0, "%.17g", zone);
    CHECK(hg_random_unit(ones) == 1.0 - 0x1p-53);
    CHECK(hg_random_unit(zero) == 0.0);
}

// Every element of random strided views of each float dtype against the reference.
static void test_reference(hg_executor ex) {
    hg_buffer b[4];
    unsigned char* h[4];
    enum { N = 3000 };
    for (int t = 0; t < 4; t++) {
        CHECK_OK(hg_buffer_create(ex, k_float[t], N, &b[t]));
        CHECK_OK(hg_buffer_map(b[t], (void**)&h[t]));
    }
    static const double ranges[][2] = {{0, 1}, {-2, 3}, {10, 10.5}, {-1e-3, 1e-3}, {1, 2}};
    uint64_t rng = 7;
    for (int trial = 0; trial < 80; trial++) {
        int t = trial % 4;
        hg_dtype dt = k_float[t];
        size_t es = hg_dtype_size(dt);
        // An (a, bb, c) view with strides (-1, 2ac, a): permuted, flipped and with gaps.
        int64_t a = 1 + (int64_t)(hg_test_rand(&rng) % 9), bb = 1 + (int64_t)(hg_test_rand(&rng) % 7),
                c = 1 + (int64_t)(hg_test_rand(&rng) % 11);
        int64_t shape[3] = {a, bb, c}, strides[3] = {-1, a * c * 2, a};   // gaps on dim 1
        int64_t off = a - 1;
        if (off + (bb - 1) * strides[1] + (c - 1) * strides[2] >= N) continue;
        hg_tensor o;
        CHECK_OK(hg_tensor_view(b[t], 3, shape, strides, off, &o));
        uint64_t seed = hg_test_rand(&rng), offset = hg_test_rand(&rng) >> (trial % 3 ? 40 : 0);
        for (size_t i = 0; i < N * es; i++) h[t][i] = (unsigned char)(i * 31 + 7);
        int normal = trial % 8 >= 4;
        double lo = ranges[trial % 5][0], hi = ranges[trial % 5][1];
        if (normal) CHECK_OK(hg_random_normal(&o, seed, offset, lo, hi - lo));
        else CHECK_OK(hg_random_uniform(&o, seed, offset, lo, hi));
        int ok = 1;
        int64_t i = 0;
        for (int64_t x = 0; x < a && ok; x++)
            for (int64_t y = 0; y < bb && ok; y++)
                for (int64_t z = 0; z < c && ok; z++, i++) {
                    int64_t e = off + x * strides[0] + y * strides[1] + z * strides[2];
                    double got = load(dt, h[t] + e * (int64_t)es);
                    double want;
                    if (normal) {
                        uint32_t w[4];
                        ref_words(seed, offset, (uint64_t)i, w);
                        double exact = lo + (hi - lo) * ref_normal(w);
                        want = ref_to_dtype(dt, exact);
                        // libm may differ in the last bit: allow one unit of the dtype.
                        ok = fabs(got - want) <= ulp_of(dt, want);
                    } else {
                        want = ref_uniform_value(dt, seed, offset, (uint64_t)i, lo, hi);
                        ok = got == want && got >= lo && got < hi;
                    }
                    if (!ok)
                        fprintf(stderr, "%s %s trial %d element %lld: got %.17g want %.17g\n",
                                hg_dtype_name(dt), normal ? "normal" : "uniform", trial,
                                (long long)i, got, want);
                }
        CHECK_MSG(ok, "reference trial %d", trial);
        // Elements outside the view keep their pattern.
        int64_t outside = 0;
        for (int64_t e = 0; e < N; e++) {
            int in_view = 0;
            int64_t r = e - off;
            // Decompose: e = off - x + y*2ac + z*a with 0 <= x < a, ...
            for (int64_t y = 0; y < bb && !in_view; y++)
                for (int64_t z = 0; z < c && !in_view; z++) {
                    int64_t base = y * strides[1] + z * strides[2];
                    int64_t x = base - r;
                    in_view = x >= 0 && x < a;
                }
            if (in_view) continue;
            for (size_t k = 0; k < es; k++)
                outside += h[t][e * (int64_t)es + (int64_t)k] != (unsigned char)((e * (int64_t)es + (int64_t)k) * 31 + 7);
        }
        CHECK_MSG(outside == 0, "trial %d: %lld bytes outside the view changed", trial,
                  (long long)outside);
    }
    for (int t = 0; t < 4; t++) hg_buffer_destroy(b[t]);
}

// Counter property: element i of a call with offset k equals element k + i of offset 0, also
// through slices and a transposed out; the 128-bit counter carries past 2^64.
static void test_counter(hg_executor ex) {
    enum { N = 1000 };
    for (int t = 0; t < 4; t++) {
        hg_dtype dt = k_float[t];
        size_t es = hg_dtype_size(dt);
        hg_buffer full, part;
        CHECK_OK(hg_buffer_create(ex, dt, N, &full));
        CHECK_OK(hg_buffer_create(ex, dt, N, &part));
        unsigned char *fh, *ph;
        CHECK_OK(hg_buffer_map(full, (void**)&fh));
        CHECK_OK(hg_buffer_map(part, (void**)&ph));
        hg_tensor tf, tp;
        CHECK_OK(hg_tensor_from_buffer(full, 1, (int64_t[]){N}, &tf));
        for (int normal = 0; normal < 2; normal++) {
            if (normal) CHECK_OK(hg_random_normal(&tf, 42, 0, 0, 1));
            else CHECK_OK(hg_random_uniform(&tf, 42, 0, -1, 1));
            CHECK_OK(hg_tensor_view(part, 1, (int64_t[]){N - 300}, NULL, 0, &tp));
            if (normal) CHECK_OK(hg_random_normal(&tp, 42, 300, 0, 1));
            else CHECK_OK(hg_random_uniform(&tp, 42, 300, -1, 1));
            CHECK_MSG(memcmp(ph, fh + 300 * es, (N - 300) * es) == 0, "offset 300, %s",
                      hg_dtype_name(dt));
            // A (10, 70) out viewed transposed: C-order element (i, j) of the (70, 10) view is
            // counter i*10 + j, stored at j*70 + i.
            hg_tensor m, mt;
            CHECK_OK(hg_tensor_view(part, 2, (int64_t[]){10, 70}, NULL, 0, &m));
            CHECK_OK(hg_tensor_transpose(&m, 0, 1, &mt));
            if (normal) CHECK_OK(hg_random_normal(&mt, 42, 0, 0, 1));
            else CHECK_OK(hg_random_uniform(&mt, 42, 0, -1, 1));
            int ok = 1;
            for (int64_t i = 0; i < 70; i++)
                for (int64_t j = 0; j < 10; j++)
                    ok &= memcmp(ph + (j * 70 + i) * (int64_t)es, fh + (i * 10 + j) * (int64_t)es,
                                 es) == 0;
            CHECK_MSG(ok, "transposed out, %s", hg_dtype_name(dt));
            // A different seed gives different numbers.
            CHECK_OK(hg_tensor_view(part, 1, (int64_t[]){N}, NULL, 0, &tp));
            if (normal) CHECK_OK(hg_random_normal(&tp, 43, 0, 0, 1));
            else CHECK_OK(hg_random_uniform(&tp, 43, 0, -1, 1));
            int same = 0;
            for (int64_t i = 0; i < N; i++) same += memcmp(ph + i * (int64_t)es, fh + i * (int64_t)es, es) == 0;
            CHECK_MSG(same < N / 20, "seeds 42 and 43 agree on %d of %d (%s)", same, N,
                      hg_dtype_name(dt));
        }
        // Carry: offsets near 2^64 against the reference.
        hg_tensor small;
        CHECK_OK(hg_tensor_view(part, 1, (int64_t[]){12}, NULL, 0, &small));
        CHECK_OK(hg_random_uniform(&small, 5, UINT64_MAX - 5, 0, 1));
        int ok = 1;
        for (uint64_t i = 0; i < 12; i++)
            ok &= load(dt, ph + i * es) == ref_uniform_value(dt, 5, UINT64_MAX - 5, i, 0, 1);
        CHECK_MSG(ok, "counter carry past 2^64 (%s)", hg_dtype_name(dt));
        hg_buffer_destroy(full);
        hg_buffer_destroy(part);
    }
}

// The same bytes on 1 and 2 threads, for sizes that use the pool.
static void test_threads(hg_executor e1, hg_executor e2) {
    enum { N = (1 << 20) + 17 };
    for (int t = 0; t < 4; t++) {
        hg_dtype dt = k_float[t];
        size_t es = hg_dtype_size(dt);
        hg_buffer b1, b2;
        unsigned char *h1, *h2;
        CHECK_OK(hg_buffer_create(e1, dt, N, &b1));
        CHECK_OK(hg_buffer_create(e2, dt, N, &b2));
        CHECK_OK(hg_buffer_map(b1, (void**)&h1));
        CHECK_OK(hg_buffer_map(b2, (void**)&h2));
        hg_tensor t1, t2;
        CHECK_OK(hg_tensor_from_buffer(b1, 1, (int64_t[]){N}, &t1));
        CHECK_OK(hg_tensor_from_buffer(b2, 1, (int64_t[]){N}, &t2));
        CHECK_OK(hg_random_uniform(&t1, 1234, 99, -3, 5));
        CHECK_OK(hg_random_uniform(&t2, 1234, 99, -3, 5));
        CHECK_MSG(memcmp(h1, h2, N * es) == 0, "uniform 1 vs 2 threads (%s)", hg_dtype_name(dt));
        CHECK_OK(hg_random_normal(&t1, 1234, 99, 1, 2));
        CHECK_OK(hg_random_normal(&t2, 1234, 99, 1, 2));
        CHECK_MSG(memcmp(h1, h2, N * es) == 0, "normal 1 vs 2 threads (%s)", hg_dtype_name(dt));
        hg_buffer_destroy(b1);
        hg_buffer_destroy(b2);
    }
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

// Mean, variance, chi-square over equiprobable buckets and the KS distance of n samples with
// CDF cdf; 5-sigma-style bounds (the seeds are fixed, so the test is deterministic).
static void check_stats(const char* what, double* v, int64_t n, double mean, double var,
                        double (*cdf)(double)) {
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    double m = s / (double)n;
    for (int64_t i = 0; i < n; i++) s2 += (v[i] - m) * (v[i] - m);
    double vv = s2 / (double)n;
    double sd = sqrt(var);
    CHECK_MSG(fabs(m - mean) < 5 * sd / sqrt((double)n), "%s: mean %.6g, want %.6g", what, m, mean);
    CHECK_MSG(fabs(vv - var) < 0.01 * var, "%s: variance %.6g, want %.6g", what, vv, var);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double d = 0;
    for (int64_t i = 0; i < n; i++) {
        double f = cdf(v[i]);
        double lo = f - (double)i / (double)n, hi = (double)(i + 1) / (double)n - f;
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    // KS: P(D > 1.95 / sqrt(n)) ~ 0.001.
    CHECK_MSG(d < 1.95 / sqrt((double)n), "%s: KS distance %.5g (limit %.5g)", what, d,
              1.95 / sqrt((double)n));
    enum { K = 64 };
    int64_t cnt[K] = {0};
    for (int64_t i = 0; i < n; i++) {
        int k = (int)(cdf(v[i]) * K);
        cnt[k < 0 ? 0 : k >= K ? K - 1 : k]++;
    }
    double chi = 0, e = (double)n / K;
    for (int k = 0; k < K; k++) chi += (cnt[k] - e) * (cnt[k] - e) / e;
    // df = 63: mean 63, sd ~11.2; 63 + 4.5 sd.
    CHECK_MSG(chi < 113, "%s: chi-square %.1f over %d buckets", what, chi, K);
}

static double cdf_unit(double x) { return x; }
static double cdf_std_normal(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }
static double cdf_normal_3_2(double x) { return cdf_std_normal((x - 3) / 2); }

static void test_statistics(hg_executor ex) {
    enum { N = 1 << 19 };
    double* v = malloc(N * sizeof *v);
    for (int t = 0; t < 4; t++) {
        hg_dtype dt = k_float[t];
        size_t es = hg_dtype_size(dt);
        hg_buffer b;
        unsigned char* h;
        CHECK_OK(hg_buffer_create(ex, dt, N, &b));
        CHECK_OK(hg_buffer_map(b, (void**)&h));
        hg_tensor o;
        CHECK_OK(hg_tensor_from_buffer(b, 1, (int64_t[]){N}, &o));
        char what[64];
        // Uniform [0, 1): f16/bf16 are coarse (bf16: 2^-8 steps near 1), so the CDF checks use
        // the exact rounded distribution only for f32/f64; the mean and range hold for all.
        CHECK_OK(hg_random_uniform(&o, 2024 + (uint64_t)t, 0, 0, 1));
        double mn = 1, mx = 0;
        for (int64_t i = 0; i < N; i++) {
            v[i] = load(dt, h + i * (int64_t)es);
            if (v[i] < mn) mn = v[i];
            if (v[i] > mx) mx = v[i];
        }
        CHECK_MSG(mn >= 0 && mx < 1, "uniform %s range [%g, %g]", hg_dtype_name(dt), mn, mx);
        snprintf(what, sizeof what, "uniform %s", hg_dtype_name(dt));
        if (dt == HG_DTYPE_F32 || dt == HG_DTYPE_F64) check_stats(what, v, N, 0.5, 1.0 / 12, cdf_unit);
        else {
            double s = 0;
            for (int64_t i = 0; i < N; i++) s += v[i];
            CHECK_MSG(fabs(s / N - 0.5) < 0.005, "%s mean %g", what, s / N);
            // Rounding to nearest reaches 1.0 for u >= 1 - half a step; those become the
            // largest value below 1, which must occur.
            CHECK_MSG(mx == ref_below(dt, 1.0), "%s max %.10g", what, mx);
        }
        CHECK_OK(hg_random_normal(&o, 77 + (uint64_t)t, 1000, 3, 2));
        for (int64_t i = 0; i < N; i++) v[i] = load(dt, h + i * (int64_t)es);
        snprintf(what, sizeof what, "normal %s", hg_dtype_name(dt));
        if (dt == HG_DTYPE_F32 || dt == HG_DTYPE_F64) check_stats(what, v, N, 3, 4, cdf_normal_3_2);
        else {
            double s = 0, s2 = 0;
            for (int64_t i = 0; i < N; i++) s += v[i];
            for (int64_t i = 0; i < N; i++) s2 += (v[i] - s / N) * (v[i] - s / N);
            CHECK_MSG(fabs(s / N - 3) < 0.02 && fabs(s2 / N - 4) < 0.1, "%s mean %g var %g",
                      what, s / N, s2 / N);
        }
        hg_buffer_destroy(b);
    }
    // Standard normal tails: P(|z| > 3) = 0.0027.
    hg_buffer b;
    double* h;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F64, N, &b));
    CHECK_OK(hg_buffer_map(b, (void**)&h));
    hg_tensor o;
    CHECK_OK(hg_tensor_from_buffer(b, 1, (int64_t[]){N}, &o));
    CHECK_OK(hg_random_normal(&o, 5, 0, 0, 1));
    int64_t tail = 0;
    for (int64_t i = 0; i < N; i++) tail += fabs(h[i]) > 3;
    double p = (double)tail / N, want = 2 * cdf_std_normal(-3);
    CHECK_MSG(fabs(p - want) < 5 * sqrt(want / N), "tail fraction %g, want %g", p, want);
    // std 0 gives the mean exactly.
    CHECK_OK(hg_random_normal(&o, 5, 0, -2.5, 0));
    int ok = 1;
    for (int64_t i = 0; i < N && ok; i++) ok = h[i] == -2.5;
    CHECK(ok);
    hg_buffer_destroy(b);
    free(v);
}

static void test_errors(hg_executor ex) {
    hg_buffer b;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F16, 16, &b));
    uint16_t* h;
    CHECK_OK(hg_buffer_map(b, (void**)&h));
    for (int i = 0; i < 16; i++) h[i] = 0x1234;
    hg_tensor o;
    CHECK_OK(hg_tensor_from_buffer(b, 1, (int64_t[]){16}, &o));
    CHECK_STATUS(hg_random_uniform(&o, 1, 0, 1, 1), HG_ERR_INVALID_ARGUMENT);      // empty
    CHECK_STATUS(hg_random_uniform(&o, 1, 0, 2, 1), HG_ERR_INVALID_ARGUMENT);      // reversed
    CHECK_STATUS(hg_random_uniform(&o, 1, 0, NAN, 1), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_random_uniform(&o, 1, 0, 0, INFINITY), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_random_uniform(&o, 1, 0, -DBL_MAX, DBL_MAX), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_random_uniform(&o, 1, 0, 0.1, 0.10001), HG_ERR_INVALID_ARGUMENT);  // no f16
    CHECK(strstr(hg_last_error(), "f16") != NULL);
    CHECK_STATUS(hg_random_uniform(&o, 1, 0, 1e6, 2e6), HG_ERR_INVALID_ARGUMENT);  // > f16 max
    CHECK_STATUS(hg_random_normal(&o, 1, 0, 0, -1), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_random_normal(&o, 1, 0, NAN, 1), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_random_normal(&o, 1, 0, 0, INFINITY), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_random_normal(NULL, 1, 0, 0, 1), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_random_uniform(NULL, 1, 0, 0, 1), HG_ERR_NULL_POINTER);
    hg_tensor bc;
    CHECK_OK(hg_tensor_view(b, 1, (int64_t[]){4}, (int64_t[]){0}, 0, &bc));
    CHECK_STATUS(hg_random_uniform(&bc, 1, 0, 0, 1), HG_ERR_INVALID_ARGUMENT);     // broadcast
    int ok = 1;
    for (int i = 0; i < 16; i++) ok &= h[i] == 0x1234;
    CHECK_MSG(ok, "a failing call wrote into out");
    for (int t = 0; t < HG_DTYPE_COUNT; t++) {
        hg_dtype dt = (hg_dtype)t;
        if (dt >= HG_DTYPE_F16) continue;
        hg_buffer ib;
        CHECK_OK(hg_buffer_create(ex, dt, 8, &ib));
        hg_tensor it;
        CHECK_OK(hg_tensor_from_buffer(ib, 1, (int64_t[]){8}, &it));
        CHECK_STATUS(hg_random_uniform(&it, 1, 0, 0, 1), HG_ERR_DTYPE_MISMATCH);
        CHECK(strstr(hg_last_error(), hg_dtype_name(dt)) != NULL);
        CHECK_STATUS(hg_random_normal(&it, 1, 0, 0, 1), HG_ERR_DTYPE_MISMATCH);
        unsigned char* ih;
        CHECK_OK(hg_buffer_map(ib, (void**)&ih));
        int zero = 1;
        for (size_t i = 0; i < 8 * hg_dtype_size(dt); i++) zero &= ih[i] == 0;
        CHECK(zero);
        hg_buffer_destroy(ib);
    }
    hg_buffer_destroy(b);
    CHECK_STATUS(hg_random_uniform(&o, 1, 0, 0, 1), HG_ERR_INVALID_HANDLE);       // dead
    // Empty and 0-d outs.
    hg_buffer d;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F64, 1, &d));
    hg_tensor z, e;
    CHECK_OK(hg_tensor_view(d, 0, NULL, NULL, 0, &z));
    CHECK_OK(hg_tensor_view(d, 2, (int64_t[]){0, 3}, NULL, 0, &e));
    CHECK_OK(hg_random_uniform(&e, 1, 0, 0, 1));
    CHECK_OK(hg_random_uniform(&z, 9, 3, -1, 1));
    double got;
    CHECK_OK(hg_buffer_read(d, 0, &got, 1));
    CHECK(got == ref_uniform_value(HG_DTYPE_F64, 9, 3, 0, -1, 1));
    hg_buffer_destroy(d);
}

int main(void) {
    hg_executor e1, e2;
    hg_executor_options o1 = {HG_BACKEND_CPU, 0, 1}, o2 = {HG_BACKEND_CPU, 0, 2};
    CHECK_OK(hg_executor_create_ex(&o1, &e1));
    CHECK_OK(hg_executor_create_ex(&o2, &e2));
    test_kat();
    test_reference(e2);
    test_counter(e1);
    test_counter(e2);
    test_threads(e1, e2);
    test_statistics(e2);
    test_errors(e1);
    hg_executor_destroy(e1);
    hg_executor_destroy(e2);
    return hg_test_finish("test_ops_random");
}
