// The flat forms of the product documents (hg_vector_add ... hg_matvec_flat) against double
// precision references: several dtypes, n smaller than the buffers (elements past n must stay
// untouched), outputs aliasing inputs, gemm/matvec with m != n != k (the documented argument
// order), and the error paths (short buffer, dtype mismatch, dead handle, float-only ops on
// integers), each of which must write nothing.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"

enum { CAP = 1200, SENT = 0x5A };

static uint64_t g_rng = 0xf1a7;
static double urand(double lo, double hi) {
    return lo + (hi - lo) * (double)(hg_test_rand(&g_rng) >> 11) * 0x1p-53;
}

static hg_executor g_ex;

typedef struct fbuf {
    hg_buffer b;
    hg_dtype dt;
    unsigned char* h;
} fbuf;

static fbuf mk(hg_dtype dt, size_t count) {
    fbuf f = {{0}, dt, NULL};
    CHECK_OK(hg_buffer_create(g_ex, dt, count, &f.b));
    CHECK_OK(hg_buffer_map(f.b, (void**)&f.h));
    memset(f.h, SENT, count * hg_dtype_size(dt));
    return f;
}
static double get(const fbuf* f, size_t i) {
    const unsigned char* p = f->h + i * hg_dtype_size(f->dt);
    switch (f->dt) {
    case HG_DTYPE_I32: return *(const int32_t*)(const void*)p;
    case HG_DTYPE_I64: return (double)*(const int64_t*)(const void*)p;
    case HG_DTYPE_U8: return *p;
    case HG_DTYPE_F16: return hg_f16_to_f32(*(const uint16_t*)(const void*)p);
    case HG_DTYPE_F32: return *(const float*)(const void*)p;
    default: return *(const double*)(const void*)p;
    }
}
// Stores v (exactly representable values only for f16 and integers).
static void set(fbuf* f, size_t i, double v) {
    unsigned char* p = f->h + i * hg_dtype_size(f->dt);
    switch (f->dt) {
    case HG_DTYPE_I32: *(int32_t*)(void*)p = (int32_t)v; break;
    case HG_DTYPE_I64: *(int64_t*)(void*)p = (int64_t)v; break;
    case HG_DTYPE_U8: *p = (uint8_t)v; break;
    case HG_DTYPE_F16: *(uint16_t*)(void*)p = hg_f32_to_f16((float)v); break;
    case HG_DTYPE_F32: *(float*)(void*)p = (float)v; break;
    default: *(double*)(void*)p = v; break;
    }
}
// The value v as stored in dt.
static double as_dt(hg_dtype dt, double v) {
    switch (dt) {
    case HG_DTYPE_F16: return hg_f16_to_f32(hg_f32_to_f16((float)v));
    case HG_DTYPE_F32: return (float)v;
    default: return v;
    }
}
static void fill_rand(fbuf* f, size_t n, double lo, double hi) {
    int integer = f->dt == HG_DTYPE_I32 || f->dt == HG_DTYPE_I64 || f->dt == HG_DTYPE_U8;
    for (size_t i = 0; i < n; i++) {
        double v = urand(lo, hi);
        set(f, i, integer ? floor(v) : v);
    }
}
static int tail_untouched(const fbuf* f, size_t from, size_t count) {
    size_t es = hg_dtype_size(f->dt);
    for (size_t i = from * es; i < count * es; i++)
        if (f->h[i] != SENT) return 0;
    return 1;
}
static double tol_of(hg_dtype dt, double rel) {
    return dt == HG_DTYPE_F16 ? 2e-3 : dt == HG_DTYPE_F32 ? rel : rel * 1e-8;
}
static int close_to(double got, double want, double tol) {
    if (isnan(want)) return isnan(got);
    return fabs(got - want) <= tol * (1 + fabs(want));
}

// ---------------------------------------------------------------------------------------------

typedef hg_status (*bin_fn)(hg_buffer, hg_buffer, hg_buffer, size_t);
static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_min(double a, double b) { return a < b ? a : b; }
static double r_max(double a, double b) { return a > b ? a : b; }
static const struct { const char* name; bin_fn fn; double (*ref)(double, double); int floats_only; } k_bin[] = {
    {"add", hg_vector_add, r_add, 0}, {"sub", hg_vector_sub, r_sub, 0},
    {"mul", hg_vector_mul, r_mul, 0}, {"div", hg_vector_div, r_div, 1},
    {"min", hg_vector_min, r_min, 0}, {"max", hg_vector_max, r_max, 0}};

static const hg_dtype k_dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_I32};

static void test_binary(void) {
    for (size_t o = 0; o < sizeof k_bin / sizeof k_bin[0]; o++)
        for (int d = 0; d < 4; d++) {
            hg_dtype dt = k_dts[d];
            if (k_bin[o].floats_only && dt == HG_DTYPE_I32) continue;
            size_t n = 1000;
            fbuf a = mk(dt, CAP), b = mk(dt, CAP), c = mk(dt, CAP);
            fill_rand(&a, n, -50, 50);
            fill_rand(&b, n, 1, 40);
            hg_status s = k_bin[o].fn(a.b, b.b, c.b, n);
            CHECK_MSG(s == HG_OK, "vector_%s %s: %s", k_bin[o].name, hg_dtype_name(dt),
                      hg_last_error());
            int ok = 1;
            for (size_t i = 0; i < n && ok; i++)
                ok = get(&c, i) == as_dt(dt, k_bin[o].ref(get(&a, i), get(&b, i)));
            CHECK_MSG(ok, "vector_%s %s values", k_bin[o].name, hg_dtype_name(dt));
            CHECK(tail_untouched(&c, n, CAP));
            // c aliasing a exactly.
            double a0 = get(&a, 7), b0 = get(&b, 7);
            CHECK_OK(k_bin[o].fn(a.b, b.b, a.b, n));
            CHECK(get(&a, 7) == as_dt(dt, k_bin[o].ref(a0, b0)));
            hg_buffer_destroy(a.b);
            hg_buffer_destroy(b.b);
            hg_buffer_destroy(c.b);
        }
}

typedef hg_status (*un_fn)(hg_buffer, hg_buffer, size_t);
static double r_abs(double x) { return fabs(x); }
static double r_neg(double x) { return -x; }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_gelu(double x) {
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
static const struct { const char* name; un_fn fn; double (*ref)(double); int exact; } k_un[] = {
    {"abs", hg_vector_abs, r_abs, 1},       {"neg", hg_vector_neg, r_neg, 1},
    {"relu", hg_vector_relu, r_relu, 1},    {"sigmoid", hg_vector_sigmoid, r_sigmoid, 0},
    {"tanh", hg_vector_tanh, tanh, 0},      {"gelu", hg_vector_gelu, r_gelu, 0}};

static void test_unary(void) {
    for (size_t o = 0; o < sizeof k_un / sizeof k_un[0]; o++)
        for (int d = 0; d < 4; d++) {
            hg_dtype dt = k_dts[d];
            size_t n = 777;
            fbuf a = mk(dt, CAP), c = mk(dt, CAP);
            fill_rand(&a, n, -6, 6);
            hg_status s = k_un[o].fn(a.b, c.b, n);
            if (!k_un[o].exact && dt == HG_DTYPE_I32) {   // float functions refuse integers
                CHECK_STATUS(s, HG_ERR_DTYPE_MISMATCH);
                CHECK(tail_untouched(&c, 0, CAP));
            } else {
                CHECK_MSG(s == HG_OK, "vector_%s %s: %s", k_un[o].name, hg_dtype_name(dt),
                          hg_last_error());
                int ok = 1;
                for (size_t i = 0; i < n && ok; i++) {
                    double want = k_un[o].ref(get(&a, i)), got = get(&c, i);
                    ok = k_un[o].exact ? got == as_dt(dt, want) : close_to(got, want, tol_of(dt, 1e-6));
                    if (!ok) fprintf(stderr, "  %s(%g) = %.9g, want %.9g\n", k_un[o].name, get(&a, i), got, want);
                }
                CHECK_MSG(ok, "vector_%s %s values", k_un[o].name, hg_dtype_name(dt));
                CHECK(tail_untouched(&c, n, CAP));
            }
            hg_buffer_destroy(a.b);
            hg_buffer_destroy(c.b);
        }
}

static void test_scalar_clip_softmax(void) {
    for (int d = 0; d < 4; d++) {
        hg_dtype dt = k_dts[d];
        size_t n = 501;
        fbuf a = mk(dt, CAP), c = mk(dt, CAP);
        fill_rand(&a, n, -20, 20);
        CHECK_OK(hg_scalar_add(a.b, c.b, 3, n));
        int ok = 1;
        for (size_t i = 0; i < n; i++) ok &= get(&c, i) == as_dt(dt, get(&a, i) + 3);
        CHECK_MSG(ok, "scalar_add %s", hg_dtype_name(dt));
        CHECK_OK(hg_scalar_mul(a.b, c.b, -2, n));
        ok = 1;
        for (size_t i = 0; i < n; i++) ok &= get(&c, i) == as_dt(dt, get(&a, i) * -2);
        CHECK_MSG(ok, "scalar_mul %s", hg_dtype_name(dt));
        CHECK_OK(hg_vector_clip(a.b, c.b, -5, 7, n));
        ok = 1;
        for (size_t i = 0; i < n; i++) {
            double x = get(&a, i);
            ok &= get(&c, i) == (x < -5 ? -5 : x > 7 ? 7 : x);
        }
        CHECK_MSG(ok, "vector_clip %s", hg_dtype_name(dt));
        CHECK(tail_untouched(&c, n, CAP));
        if (dt == HG_DTYPE_I32) {
            memset(c.h, SENT, CAP * 4);
            CHECK_STATUS(hg_scalar_add(a.b, c.b, 0.5, n), HG_ERR_INVALID_ARGUMENT);
            CHECK_STATUS(hg_vector_clip(a.b, c.b, -1.5, 2, n), HG_ERR_INVALID_ARGUMENT);
            CHECK_STATUS(hg_vector_softmax(a.b, c.b, n), HG_ERR_DTYPE_MISMATCH);
            CHECK(tail_untouched(&c, 0, CAP));
        } else {
            fill_rand(&a, n, -30, 30);
            CHECK_OK(hg_vector_softmax(a.b, c.b, n));
            double mx = -INFINITY, z = 0;
            for (size_t i = 0; i < n; i++) mx = fmax(mx, get(&a, i));
            for (size_t i = 0; i < n; i++) z += exp(get(&a, i) - mx);
            ok = 1;
            for (size_t i = 0; i < n; i++)
                ok &= fabs(get(&c, i) - exp(get(&a, i) - mx) / z) <= tol_of(dt, 1e-6) * 0.01 + tol_of(dt, 1e-6) * exp(get(&a, i) - mx) / z;
            CHECK_MSG(ok, "vector_softmax %s", hg_dtype_name(dt));
            CHECK(tail_untouched(&c, n, CAP));
        }
        hg_buffer_destroy(a.b);
        hg_buffer_destroy(c.b);
    }
}

static void test_reduce_losses(void) {
    for (int d = 0; d < 4; d++) {
        hg_dtype dt = k_dts[d];
        size_t n = dt == HG_DTYPE_F16 ? 100 : 1000;
        fbuf a = mk(dt, CAP), o = mk(dt, 4);
        fill_rand(&a, n, -10, 10);
        double sum = 0, mn = INFINITY, mx = -INFINITY, r = NAN;
        for (size_t i = 0; i < n; i++) {
            sum += get(&a, i);
            mn = fmin(mn, get(&a, i));
            mx = fmax(mx, get(&a, i));
        }
        CHECK_OK(hg_reduce_sum(a.b, o.b, n, &r));
        CHECK_MSG(close_to(r, sum, tol_of(dt, 1e-5)) && r == get(&o, 0), "reduce_sum %s: %g vs %g",
                  hg_dtype_name(dt), r, sum);
        CHECK_OK(hg_reduce_min(a.b, o.b, n, &r));
        CHECK(r == mn && get(&o, 0) == mn);
        CHECK_OK(hg_reduce_max(a.b, o.b, n, NULL));
        CHECK(get(&o, 0) == mx);
        CHECK(tail_untouched(&o, 1, 4));
        hg_buffer_destroy(a.b);
        hg_buffer_destroy(o.b);
        if (dt == HG_DTYPE_I32) continue;
        // Losses: pred probabilities in (0, 1), targets in [0, 1].
        fbuf p = mk(dt, CAP), t = mk(dt, CAP), out = mk(dt, 1);
        fill_rand(&p, n, 0.01, 0.99);
        fill_rand(&t, n, 0, 1);
        double mse = 0, ce = 0, bce = 0;
        for (size_t i = 0; i < n; i++) {
            double x = get(&p, i), y = get(&t, i);
            mse += (x - y) * (x - y);
            ce -= y * log(x);
            bce -= y * log(x) + (1 - y) * log(1 - x);
        }
        CHECK_OK(hg_mse_loss_flat(p.b, t.b, out.b, n, &r));
        CHECK_MSG(close_to(r, mse / n, tol_of(dt, 1e-5)), "mse %s: %g vs %g", hg_dtype_name(dt), r, mse / n);
        CHECK_OK(hg_cross_entropy_loss_flat(p.b, t.b, out.b, n, &r));
        CHECK_MSG(close_to(r, ce / n, tol_of(dt, 1e-5)), "ce %s: %g vs %g", hg_dtype_name(dt), r, ce / n);
        CHECK_OK(hg_binary_cross_entropy_loss_flat(p.b, t.b, out.b, n, &r));
        CHECK_MSG(close_to(r, bce / n, tol_of(dt, 1e-5)), "bce %s: %g vs %g", hg_dtype_name(dt), r, bce / n);
        // log(0) is clamped at -100: p = 0 with t = 1 gives 100 / n per element.
        set(&p, 0, 0.0);
        set(&t, 0, 1.0);
        CHECK_OK(hg_cross_entropy_loss_flat(p.b, t.b, out.b, 1, &r));
        CHECK_MSG(r == 100, "ce clamp: %g", r);
        hg_buffer_destroy(p.b);
        hg_buffer_destroy(t.b);
        hg_buffer_destroy(out.b);
    }
}

static void test_gemm_matvec(void) {
    const hg_dtype dts[2] = {HG_DTYPE_F32, HG_DTYPE_F64};
    for (int d = 0; d < 2; d++) {
        hg_dtype dt = dts[d];
        size_t m = 13, n = 29, k = 7;
        fbuf a = mk(dt, m * k), b = mk(dt, k * n), c = mk(dt, m * n + 5);
        fill_rand(&a, m * k, -1, 1);
        fill_rand(&b, k * n, -1, 1);
        CHECK_OK(hg_gemm_flat(a.b, b.b, c.b, m, n, k));
        int ok = 1;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                double s = 0;
                for (size_t q = 0; q < k; q++) s += get(&a, i * k + q) * get(&b, q * n + j);
                ok &= close_to(get(&c, i * n + j), s, tol_of(dt, 1e-5));
            }
        CHECK_MSG(ok, "gemm_flat %s", hg_dtype_name(dt));
        CHECK(tail_untouched(&c, m * n, m * n + 5));
        // Short C (m*n - 1 elements): refused, nothing written.
        fbuf cs = mk(dt, m * n - 1);
        CHECK_STATUS(hg_gemm_flat(a.b, b.b, cs.b, m, n, k), HG_ERR_SIZE_MISMATCH);
        CHECK(strstr(hg_last_error(), "'c'") != NULL);
        CHECK(tail_untouched(&cs, 0, m * n - 1));
        // matvec: y[m] = A[m x n] x[n] with A = the (13 x 7) a.
        fbuf x = mk(dt, k), y = mk(dt, m + 3);
        fill_rand(&x, k, -2, 2);
        CHECK_OK(hg_matvec_flat(a.b, x.b, y.b, m, k));
        ok = 1;
        for (size_t i = 0; i < m; i++) {
            double s = 0;
            for (size_t q = 0; q < k; q++) s += get(&a, i * k + q) * get(&x, q);
            ok &= close_to(get(&y, i), s, tol_of(dt, 1e-5));
        }
        CHECK_MSG(ok, "matvec_flat %s", hg_dtype_name(dt));
        CHECK(tail_untouched(&y, m, m + 3));
        CHECK_STATUS(hg_matvec_flat(a.b, x.b, y.b, m, k + 1), HG_ERR_SIZE_MISMATCH);
        hg_buffer_destroy(a.b);
        hg_buffer_destroy(b.b);
        hg_buffer_destroy(c.b);
        hg_buffer_destroy(cs.b);
        hg_buffer_destroy(x.b);
        hg_buffer_destroy(y.b);
    }
}

static void test_errors(void) {
    fbuf a = mk(HG_DTYPE_F32, 10), b = mk(HG_DTYPE_F32, 8), c = mk(HG_DTYPE_F32, 10),
         d = mk(HG_DTYPE_F64, 10);
    CHECK_STATUS(hg_vector_add(a.b, b.b, c.b, 10), HG_ERR_SIZE_MISMATCH);
    CHECK_MSG(strstr(hg_last_error(), "'b'") && strstr(hg_last_error(), "8") &&
              strstr(hg_last_error(), "10"), "%s", hg_last_error());
    CHECK_STATUS(hg_vector_add(a.b, d.b, c.b, 4), HG_ERR_DTYPE_MISMATCH);
    CHECK_MSG(strstr(hg_last_error(), "f64") || strstr(hg_last_error(), "F64"), "%s",
              hg_last_error());
    CHECK_STATUS(hg_vector_relu(a.b, d.b, 4), HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_reduce_sum(a.b, c.b, 11, NULL), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_mse_loss_flat(a.b, b.b, c.b, 9, NULL), HG_ERR_SIZE_MISMATCH);
    hg_buffer dead;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 10, &dead));
    CHECK_OK(hg_buffer_destroy(dead));
    CHECK_STATUS(hg_vector_sub(a.b, dead, c.b, 4), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_scalar_mul(dead, c.b, 2, 4), HG_ERR_INVALID_HANDLE);
    CHECK(tail_untouched(&c, 0, 10));
    CHECK(tail_untouched(&d, 0, 10));
    // n = 0 is valid and writes nothing.
    CHECK_OK(hg_vector_mul(a.b, b.b, c.b, 0));
    CHECK(tail_untouched(&c, 0, 10));
    hg_buffer_destroy(a.b);
    hg_buffer_destroy(b.b);
    hg_buffer_destroy(c.b);
    hg_buffer_destroy(d.b);
}

int main(void) {
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_ex));
    test_binary();
    test_unary();
    test_scalar_clip_softmax();
    test_reduce_losses();
    test_gemm_matvec();
    test_errors();
    hg_executor_destroy(g_ex);
    return hg_test_finish("test_ops_flat");
}
