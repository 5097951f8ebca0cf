// softmax, log_softmax, layer_norm and rms_norm against long-double references: random views of
// every float dtype (0-d, empty, broadcast, reversed, permuted), every axis, magnitudes up to
// 1e4, -inf masks (fully masked slices give NaN), NaN, existing outs of other float dtypes,
// in-place runs, sizes that take the threaded and tiled paths, and every error path.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "base/cpu_level.h"
#include "ops/rows/softmax.h"
#include "ops/rows/softmax_f32.h"
#include "tensor_ref.h"

static const hg_dtype FLOATS[4] = {HG_DTYPE_F16, HG_DTYPE_BF16, HG_DTYPE_F32, HG_DTYPE_F64};

static double eps_of(hg_dtype d) {
    return d == HG_DTYPE_F16 ? 9.77e-4 : d == HG_DTYPE_BF16 ? 7.82e-3 : d == HG_DTYPE_F32 ? 1.2e-7 : 2.3e-16;
}

static double ld(hg_dtype dt, const unsigned char* host, int64_t e) {
    switch (dt) {
    case HG_DTYPE_F16: return hg_f16_to_f32(((const uint16_t*)host)[e]);
    case HG_DTYPE_BF16: return hg_bf16_to_f32(((const uint16_t*)host)[e]);
    case HG_DTYPE_F32: return ((const float*)host)[e];
    default: return ((const double*)host)[e];
    }
}

static void st(hg_dtype dt, unsigned char* host, int64_t e, double v) {
    switch (dt) {
    case HG_DTYPE_F16: ((uint16_t*)host)[e] = hg_f32_to_f16((float)v); break;
    case HG_DTYPE_BF16: ((uint16_t*)host)[e] = hg_f32_to_bf16((float)v); break;
    case HG_DTYPE_F32: ((float*)host)[e] = (float)v; break;
    default: ((double*)host)[e] = v; break;
    }
}

static double round_to(hg_dtype dt, double v) {
    unsigned char b[8];
    st(dt, b, 0, v);
    return ld(dt, b, 0);
}

// got vs want (want already rounded to the out dtype): NaN where NaN, infinities equal.
static int close_to(double got, double want, double tol) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return fabs(got - want) <= tol;
}

typedef struct {
    tref_ctx t;
    hg_buffer buf[4];
    unsigned char* host[4];
} ctx_t;

// Fills the 4 float buffers: values in [-4, 4] times 1 or 1e4 per region, with -inf masks and
// rare NaN; the first 64 elements of each buffer are -inf (fully masked slices).
static void fill(ctx_t* c) {
    for (int k = 0; k < 4; k++) {
        CHECK_OK(hg_buffer_create(c->t.ex, FLOATS[k], TREF_IOTA_N, &c->buf[k]));
        CHECK_OK(hg_buffer_map(c->buf[k], (void**)&c->host[k]));
        for (int64_t i = 0; i < TREF_IOTA_N; i++) {
            double scale = (i / 512) % 3 == 2 ? 1e4 : 1.0;
            double v = (double)tref_rnd(&c->t, -4000000, 4000000) / 1e6 * scale;
            int64_t r = tref_rnd(&c->t, 0, 99);
            if (r < 6) v = -INFINITY;
            else if (r == 6 && i > 2048) v = NAN;
            if (i < 64) v = -INFINITY;
            if (FLOATS[k] == HG_DTYPE_F16 && fabs(v) > 60000) v = v > 0 ? 6e4 : -6e4;
            st(FLOATS[k], c->host[k], i, v);
        }
    }
}

// ---- softmax -------------------------------------------------------------------------------
static void check_softmax(ctx_t* c, const hg_tensor* x, const unsigned char* host, int32_t axis,
                          int logm, hg_dtype odt, int mode) {
    // mode 0: allocate, 1: existing out of odt, 2: in place (x must have distinct elements).
    int32_t ax = x->ndim ? (axis < 0 ? axis + x->ndim : axis) : 0;
    int64_t n = tref_numel(x->ndim, x->shape);
    hg_tensor out;
    memset(&out, 0, sizeof out);
    hg_buffer ob = {0};
    unsigned char* before = NULL;
    if (mode == 1) {
        CHECK_OK(hg_buffer_create(c->t.ex, odt, (size_t)n, &ob));
        CHECK_OK(hg_tensor_from_buffer(ob, x->ndim, x->shape, &out));
    } else if (mode == 2) {
        out = *x;
        odt = x->dtype;
        before = malloc(TREF_IOTA_N * 8);
        memcpy(before, host, TREF_IOTA_N * hg_dtype_size(x->dtype));
        host = before;
    } else {
        odt = x->dtype;
    }
    hg_status s = logm ? hg_log_softmax(x, axis, &out) : hg_softmax(x, axis, &out);
    CHECK_MSG(s == HG_OK, "softmax %s ndim %d axis %d: %s", hg_dtype_name(x->dtype), (int)x->ndim,
              (int)axis, hg_last_error());
    if (s != HG_OK) { free(before); if (ob.handle) hg_buffer_destroy(ob); return; }
    unsigned char* oh;
    CHECK_OK(hg_buffer_map(out.buffer, (void**)&oh));
    int64_t L = x->ndim ? x->shape[ax] : 1;
    int bad = 0;
    int64_t idx[HG_MAX_DIMS] = {0};
    double e = eps_of(x->dtype) > eps_of(odt) ? eps_of(x->dtype) : eps_of(odt);
    if (n > 0) do {
        if (x->ndim && idx[ax] != 0) continue;   // one visit per slice
        long double m = -INFINITY, s2 = 0;
        int nan = 0;
        int64_t j[HG_MAX_DIMS];
        memcpy(j, idx, sizeof j);
        for (int64_t l = 0; l < L; l++) {
            if (x->ndim) j[ax] = l;
            double v = ld(x->dtype, host, tref_elem_of(x, j));
            if (v != v) nan = 1;
            else if (v > m) m = v;
        }
        if (nan) m = NAN;
        for (int64_t l = 0; l < L; l++) {
            if (x->ndim) j[ax] = l;
            s2 += expl(ld(x->dtype, host, tref_elem_of(x, j)) - m);
        }
        for (int64_t l = 0; l < L && bad < 3; l++) {
            if (x->ndim) j[ax] = l;
            long double v = ld(x->dtype, host, tref_elem_of(x, j));
            long double r = logm ? (v - m) - logl(s2) : expl(v - m) / s2;
            double want = round_to(odt, round_to(x->dtype, (double)r));
            double got = ld(odt, oh, tref_elem_of(&out, j));
            // x - max is rounded (in f64 for f64, else in f32): exp magnifies its error.
            double dm = isfinite((double)(v - m)) ? fabs((double)(v - m)) : 0.0;
            double tol = logm ? 8 * e * (fabs(want) + fabs((double)logl(s2)) + 1)
                              : 8 * e * fabs(want) * (1 + dm) + 1e-37;
            if (!close_to(got, want, tol)) {
                bad++;
                CHECK_MSG(0, "%s %s ndim %d axis %d L %lld out %s: got %.10g want %.10g",
                          logm ? "log_softmax" : "softmax", hg_dtype_name(x->dtype), (int)x->ndim,
                          (int)axis, (long long)L, hg_dtype_name(odt), got, want);
            }
        }
    } while (tref_next_index(x->ndim, x->shape, idx));
    if (!bad) CHECK(1);
    if (mode == 2) {   // restore the shared data for later trials
        unsigned char* live;
        CHECK_OK(hg_buffer_map(x->buffer, (void**)&live));
        memcpy(live, before, TREF_IOTA_N * hg_dtype_size(x->dtype));
    } else {
        hg_buffer_destroy(out.buffer);
    }
    free(before);
}

static int distinct(const hg_tensor* t) {
    int64_t n = tref_numel(t->ndim, t->shape);
    if (n == 0) return 0;   // an empty view may still have zero strides (not writable)
    if (n == 1) return 1;
    int64_t* e = tref_elems_of(t);
    char* seen = calloc(TREF_IOTA_N, 1);
    int ok = 1;
    for (int64_t k = 0; k < n && ok; k++) ok = !seen[e[k]]++;
    free(seen);
    free(e);
    return ok;
}

static void softmax_random(ctx_t* c, int trials) {
    for (int t = 0; t < trials; t++) {
        hg_tensor v;
        if (!tref_rand_view(&c->t, &v)) continue;
        int k = (int)tref_rnd(&c->t, 0, 3);
        v.buffer = c->buf[k];
        v.dtype = FLOATS[k];
        int32_t axis = v.ndim ? (int32_t)tref_rnd(&c->t, -v.ndim, v.ndim - 1) : (int32_t)tref_rnd(&c->t, -1, 0);
        int mode = (int)tref_rnd(&c->t, 0, 2);
        if (mode == 2 && !distinct(&v)) mode = 0;
        check_softmax(c, &v, c->host[k], axis, (int)tref_rnd(&c->t, 0, 1),
                      FLOATS[tref_rnd(&c->t, 0, 3)], mode);
    }
}

// Sizes above the threading threshold, axis innermost and not (tiled), and each dtype.
static void softmax_big(ctx_t* c) {
    hg_executor ex = c->t.ex;
    for (int k = 0; k < 4; k++) {
        hg_buffer b;
        int64_t n = 7 * 301 * 23;
        CHECK_OK(hg_buffer_create(ex, FLOATS[k], (size_t)n, &b));
        unsigned char* h;
        CHECK_OK(hg_buffer_map(b, (void**)&h));
        for (int64_t i = 0; i < n; i++)
            st(FLOATS[k], h, i, i % 97 == 0 ? -INFINITY : (double)tref_rnd(&c->t, -8000, 8000) / 100.0);
        hg_tensor x;
        CHECK_OK(hg_tensor_from_buffer(b, 3, (int64_t[]){7, 301, 23}, &x));
        for (int32_t axis = -3; axis < 3; axis++)
            check_softmax(c, &x, h, axis, axis & 1, FLOATS[k], axis < 0 ? 0 : 1);
        hg_tensor xt;
        CHECK_OK(hg_tensor_transpose(&x, 0, 2, &xt));
        CHECK_OK(hg_tensor_slice(&xt, 1, HG_SLICE_NONE, HG_SLICE_NONE, -1, &xt));
        check_softmax(c, &xt, h, 1, 0, FLOATS[k], 0);
        check_softmax(c, &xt, h, 2, 1, FLOATS[k], 0);
        hg_buffer_destroy(b);
    }
    // f32 rows of 4096 at magnitude 1e4 (the contiguous fast path), in place.
    hg_buffer b;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 16 * 4096, &b));
    float* h;
    CHECK_OK(hg_buffer_map(b, (void**)&h));
    for (int64_t i = 0; i < 16 * 4096; i++) h[i] = (float)tref_rnd(&c->t, -10000, 10000);
    for (int64_t i = 0; i < 4096; i++) h[4096 + i] = -INFINITY;   // row 1 fully masked
    hg_tensor x;
    CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){16, 4096}, &x));
    check_softmax(c, &x, (unsigned char*)h, -1, 0, HG_DTYPE_F32, 0);
    check_softmax(c, &x, (unsigned char*)h, 1, 1, HG_DTYPE_F32, 0);
    hg_tensor out;
    memset(&out, 0, sizeof out);
    CHECK_OK(hg_softmax(&x, 1, &out));
    float* o;
    CHECK_OK(hg_buffer_map(out.buffer, (void**)&o));
    int nan_row = 1;
    for (int i = 0; i < 4096; i++) nan_row &= isnan(o[4096 + i]);
    CHECK(nan_row);
    double sum = 0;
    for (int i = 0; i < 4096; i++) sum += o[i];
    CHECK_MSG(fabs(sum - 1.0) < 1e-5, "row sum %.9g", sum);
    hg_buffer_destroy(out.buffer);
    hg_buffer_destroy(b);
}

// Random rows with special values (NaN, +inf, all -inf, one -inf, magnitude 1e4).
static double softmax_row_value(ctx_t* c, int64_t r, int64_t l, int64_t L) {
    double v = (double)tref_rnd(&c->t, -4000000, 4000000) / 1e6;
    if (r == 1 && l == L / 2) v = NAN;
    if (r == 2 && l == L - 1) v = INFINITY;
    if (r == 3) v = -INFINITY;
    if (r == 4 && l == 0) v = -INFINITY;
    if (r == 5) v *= 1e4;
    return v;
}

// The same R rows of L f32 values twice: x contiguous (data h, buffer b) and xs a strided view
// of their transpose (buffer bt), so an op's contiguous path can be checked against its
// general one.
static void rows_twice(ctx_t* c, int64_t R, int64_t L,
                       double (*value)(ctx_t*, int64_t r, int64_t l, int64_t L), hg_buffer* b,
                       hg_buffer* bt, float** h, hg_tensor* x, hg_tensor* xs) {
    float* ht;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, (size_t)(R * L), b));
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, (size_t)(R * L), bt));
    CHECK_OK(hg_buffer_map(*b, (void**)h));
    CHECK_OK(hg_buffer_map(*bt, (void**)&ht));
    for (int64_t r = 0; r < R; r++)
        for (int64_t l = 0; l < L; l++) {
            float v = (float)value(c, r, l, L);
            (*h)[r * L + l] = v;
            ht[l * R + r] = v;   // the same rows as columns
        }
    hg_tensor xt;
    CHECK_OK(hg_tensor_from_buffer(*b, 2, (int64_t[]){R, L}, x));
    CHECK_OK(hg_tensor_from_buffer(*bt, 2, (int64_t[]){L, R}, &xt));
    CHECK_OK(hg_tensor_transpose(&xt, 0, 1, xs));   // (R, L), strided rows
}

// softmax and log_softmax of x against the reference, and their results from x (from element
// skip on) bit for bit equal to those from y over n elements (NaN matches NaN).
static void softmax_same_bits(ctx_t* c, const hg_tensor* x, const float* h, const hg_tensor* y,
                              int64_t skip, int64_t n, int64_t L, const char* what) {
    for (int logm = 0; logm < 2; logm++) {
        check_softmax(c, x, (const unsigned char*)h, 1, logm, HG_DTYPE_F32, 0);
        hg_tensor o1, o2;
        memset(&o1, 0, sizeof o1);
        memset(&o2, 0, sizeof o2);
        CHECK_OK(logm ? hg_log_softmax(x, 1, &o1) : hg_softmax(x, 1, &o1));
        CHECK_OK(logm ? hg_log_softmax(y, 1, &o2) : hg_softmax(y, 1, &o2));
        float *p1, *p2;
        CHECK_OK(hg_buffer_map(o1.buffer, (void**)&p1));
        CHECK_OK(hg_buffer_map(o2.buffer, (void**)&p2));
        int same = 1;
        for (int64_t i = 0; i < n && same; i++)
            same = !memcmp(&p1[skip + i], &p2[i], 4) || (isnan(p1[skip + i]) && isnan(p2[i]));
        CHECK_MSG(same, "%s rows of %lld: %s", logm ? "log_softmax" : "softmax", (long long)L,
                  what);
        hg_buffer_destroy(o1.buffer);
        hg_buffer_destroy(o2.buffer);
    }
}

// Contiguous f32 rows of 17..64 (the AVX-512 short-row kernel where the CPU has it): against
// the long-double reference, and bit for bit against the same rows read through a strided
// view (the general path); rows with NaN, +inf, all -inf, one -inf, magnitude 1e4.
static void short_rows(ctx_t* c) {
    const int64_t lens[] = {17, 23, 31, 32, 33, 48, 63, 64, 100, 300};
    const int64_t R = 37;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t L = lens[li];
        hg_buffer b, bt;
        float* h;
        hg_tensor x, xs;
        rows_twice(c, R, L, softmax_row_value, &b, &bt, &h, &x, &xs);
        softmax_same_bits(c, &x, h, &xs, 0, R * L, L, "contiguous and strided results differ");
        hg_buffer_destroy(b);
        hg_buffer_destroy(bt);
    }
}

// Contiguous f32 rows of 1..16 (on AVX-512: 16 rows at a time across the rows, the last
// rows % 16 one vector per row): against the reference, and rows 1..36 of 37 bit for bit
// against the same rows computed from the view starting at row 1 (other rows fall in the
// blocks and in the remainder then).
static void tiny_rows(ctx_t* c) {
    const int64_t lens[] = {1, 2, 3, 5, 8, 16};
    const int64_t R = 37;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t L = lens[li];
        hg_buffer b, bt;
        float* h;
        hg_tensor x, xs, x1;
        rows_twice(c, R, L, softmax_row_value, &b, &bt, &h, &x, &xs);
        CHECK_OK(hg_tensor_slice(&x, 0, 1, R, 1, &x1));
        softmax_same_bits(c, &x, h, &x1, L, (R - 1) * L, L,
                          "rows differ between the blocks and the remainder");
        hg_buffer_destroy(b);
        hg_buffer_destroy(bt);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
// Bits of two f32 arrays equal (NaN matches NaN).
static int same_f32(const float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], 4) && !(isnan(a[i]) && isnan(b[i]))) return 0;
    return 1;
}
#endif

// The f32 kernels of each CPU level this CPU runs, called directly (softmax_f32.h): rows of at
// most 16 give the same bits on every level; rows of 17..64 the same as the level's slice
// kernel; longer rows from the AVX2 slice kernel as this run's level's where that is below AVX-512
// (both 8 lanes; cpu_levels.cmake runs this test capped at avx2 and generic). Rows with NaN,
// inf, all -inf and 1e4 magnitudes (softmax_row_value), in place too.
static void level_kernels(ctx_t* c) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    if (!avx2) return;
    const int64_t lens[] = {1, 2, 3, 5, 7, 8, 9, 12, 15, 16, 17, 23, 31, 32, 33, 48, 63, 64,
                            65, 100, 255, 256, 257, 300, 1000};
    const int64_t R = 37;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t L = lens[li], n = R * L;
        float* x = malloc((size_t)n * 4);
        float *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4), *w = malloc((size_t)n * 4);
        for (int64_t r = 0; r < R; r++)
            for (int64_t l = 0; l < L; l++) x[r * L + l] = (float)softmax_row_value(c, r, l, L);
        // exp(x - c) (the attention backward's probabilities): every level hg_sm_expf's bits
        for (int64_t i = 0; i < n; i++) a[i] = hg_sm_expf(x[i] - 0.75f);
        memcpy(b, x, (size_t)n * 4);
        hg_sm_exp_shift_f32(b, n, 0.75f);
        CHECK_MSG(same_f32(a, b, n), "exp_shift of %lld: %s differs from hg_sm_expf",
                  (long long)n, hg_cpu_level_name(hg_cpu_level_get()));
        memcpy(b, x, (size_t)L * 4);
        hg_sm_exp_shift_f32_avx2(b, L, 0.75f);
        CHECK_MSG(same_f32(a, b, L), "exp_shift of %lld: avx2 differs", (long long)L);
        if (avx512) {
            memcpy(b, x, (size_t)L * 4);
            hg_sm_exp_shift_f32_avx512(b, L, 0.75f);
            CHECK_MSG(same_f32(a, b, L), "exp_shift of %lld: avx512 differs", (long long)L);
        }
        for (int lg = 0; lg < 2; lg++) {
            hg_sm_rows_f32(x, a, R, L, lg);   // this run's level
            if (L <= 64) {
                hg_sm_rows_f32_avx2(x, b, R, L, lg);
                if (L <= 16)
                    CHECK_MSG(same_f32(a, b, n), "rows of %lld, log %d: avx2 and %s differ",
                              (long long)L, lg, hg_cpu_level_name(hg_cpu_level_get()));
                for (int64_t r = 0; r < R; r++) hg_sm_slice_f32_avx2(x + r * L, w + r * L, L, lg);
                if (L > 16)
                    CHECK_MSG(same_f32(b, w, n), "rows of %lld, log %d: avx2 rows and slices "
                              "differ", (long long)L, lg);
                memcpy(w, x, (size_t)n * 4);   // in place
                hg_sm_rows_f32_avx2(w, w, R, L, lg);
                CHECK_MSG(same_f32(b, w, n), "rows of %lld, log %d: avx2 in place differs",
                          (long long)L, lg);
            }
            if (hg_cpu_level_get() < HG_CPU_AVX512 && L > 16) {
                for (int64_t r = 0; r < R; r++) hg_sm_slice_f32_avx2(x + r * L, w + r * L, L, lg);
                CHECK_MSG(same_f32(a, w, n), "rows of %lld, log %d: avx2 slices and %s differ",
                          (long long)L, lg, hg_cpu_level_name(hg_cpu_level_get()));
            }
            if (avx512 && L <= 64) {
                hg_sm_rows_f32_avx512(x, b, R, L, lg);
                if (L <= 16)
                    CHECK_MSG(same_f32(a, b, n), "rows of %lld, log %d: avx512 and %s differ",
                              (long long)L, lg, hg_cpu_level_name(hg_cpu_level_get()));
                for (int64_t r = 0; r < R; r++)
                    hg_sm_slice_f32_avx512(x + r * L, w + r * L, L, lg);
                if (L > 16)
                    CHECK_MSG(same_f32(b, w, n), "rows of %lld, log %d: avx512 rows and slices "
                              "differ", (long long)L, lg);
                memcpy(w, x, (size_t)n * 4);
                hg_sm_rows_f32_avx512(w, w, R, L, lg);
                CHECK_MSG(same_f32(b, w, n), "rows of %lld, log %d: avx512 in place differs",
                          (long long)L, lg);
            }
        }
        free(x);
        free(a);
        free(b);
        free(w);
    }
#else
    (void)c;
#endif
}

// expf of the kernels against libm over a sweep (<= 2 ulp in the normal range).
static void exp_accuracy(void) {
    double worst = 0;
    for (float x = -87.0f; x <= 0.0f; x += 0.00137f) {
        float got = hg_softmax_expf(x);
        double want = exp((double)x);
        double ulp = fabs(got - want) / (nextafterf((float)want, INFINITY) - (float)want);
        if (ulp > worst) worst = ulp;
    }
    CHECK_MSG(worst <= 2.0, "expf worst %.3f ulp", worst);
    CHECK(hg_softmax_expf(-INFINITY) == 0.0f);
    CHECK(isnan(hg_softmax_expf(NAN)));
    CHECK(hg_softmax_expf(0.0f) == 1.0f);
    CHECK(hg_softmax_expf(-95.0f) == 0.0f);   // below 2^-126: flushed (documented)
    CHECK(hg_softmax_expf(-87.0f) > 1e-38f);
    CHECK(fabsf(hg_softmax_expf(88.0f) - 1.6516363e38f) <= 2e31f);
}

// ---- layer_norm / rms_norm ------------------------------------------------------------------
// A contiguous parameter tensor of dtype dt and the given shape with values around 1 (weight) or
// 0 (bias), half the time reversed along its first dim to make it strided (a contiguous f32 one
// is used in place, others are gathered).
static hg_tensor make_param(ctx_t* c, hg_dtype dt, int32_t nd, const int64_t* shape, double center,
                            hg_buffer* b, double* vals) {
    int64_t n = tref_numel(nd, shape);
    CHECK_OK(hg_buffer_create(c->t.ex, dt, (size_t)n, b));
    unsigned char* h;
    CHECK_OK(hg_buffer_map(*b, (void**)&h));
    for (int64_t i = 0; i < n; i++) st(dt, h, i, center + (double)tref_rnd(&c->t, -1000, 1000) / 1000.0);
    hg_tensor t;
    CHECK_OK(hg_tensor_from_buffer(*b, nd, shape, &t));
    if (nd > 0 && n > 0 && tref_rnd(&c->t, 0, 1))
        CHECK_OK(hg_tensor_slice(&t, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &t));
    int64_t idx[HG_MAX_DIMS] = {0};
    int64_t k = 0;
    if (n > 0) do vals[k++] = ld(dt, h, tref_elem_of(&t, idx));
    while (tref_next_index(nd, shape, idx));
    return t;
}

static void check_norm(ctx_t* c, const hg_tensor* x, const unsigned char* host, int rms,
                       int32_t nnorm, int use_w, int use_b, double eps, hg_dtype odt, int alloc) {
    int64_t R = 1, n = tref_numel(x->ndim, x->shape);
    for (int32_t d = x->ndim - nnorm; d < x->ndim; d++) R *= x->shape[d];
    double* wv = malloc((size_t)(R + 1) * sizeof(double));
    double* bv = malloc((size_t)(R + 1) * sizeof(double));
    hg_buffer wb = {0}, bb = {0};
    hg_tensor w, b;
    if (use_w) w = make_param(c, FLOATS[tref_rnd(&c->t, 0, 3)], nnorm, x->shape + x->ndim - nnorm, 1.0, &wb, wv);
    if (use_b) b = make_param(c, FLOATS[tref_rnd(&c->t, 0, 3)], nnorm, x->shape + x->ndim - nnorm, 0.0, &bb, bv);
    hg_tensor out;
    memset(&out, 0, sizeof out);
    hg_buffer ob = {0};
    if (alloc) odt = x->dtype;
    else {
        CHECK_OK(hg_buffer_create(c->t.ex, odt, (size_t)n, &ob));
        CHECK_OK(hg_tensor_from_buffer(ob, x->ndim, x->shape, &out));
    }
    hg_status s = rms ? hg_rms_norm(x, nnorm, use_w ? &w : NULL, eps, &out)
                      : hg_layer_norm(x, nnorm, use_w ? &w : NULL, use_b ? &b : NULL, eps, &out);
    CHECK_MSG(s == HG_OK, "%s: %s", rms ? "rms_norm" : "layer_norm", hg_last_error());
    if (s == HG_OK && n > 0) {
        unsigned char* oh;
        CHECK_OK(hg_buffer_map(out.buffer, (void**)&oh));
        double e = eps_of(x->dtype) > eps_of(odt) ? eps_of(x->dtype) : eps_of(odt);
        int bad = 0;
        int64_t idx[HG_MAX_DIMS] = {0}, k = 0;
        long double mean = 0, var = 0;
        double* row = malloc((size_t)R * sizeof(double));
        do {
            int64_t j = k % R;
            if (j == 0) {   // statistics of the row starting here
                int64_t ri[HG_MAX_DIMS];
                memcpy(ri, idx, sizeof ri);
                for (int64_t q = 0; q < R; q++) {
                    row[q] = ld(x->dtype, host, tref_elem_of(x, ri));
                    tref_next_index(x->ndim, x->shape, ri);
                }
                mean = 0;
                for (int64_t q = 0; q < R; q++) mean += row[q];
                mean = rms ? 0 : mean / R;
                var = 0;
                for (int64_t q = 0; q < R; q++) var += (row[q] - mean) * (row[q] - mean);
                var /= R;
            }
            long double r = (row[j] - mean) / sqrtl(var + eps);
            double nr = fabs((double)r);
            if (use_w) r *= wv[j];
            if (use_b && !rms) r += bv[j];
            double want = round_to(odt, round_to(x->dtype, (double)r));
            double got = ld(odt, oh, tref_elem_of(&out, idx));
            // The rounding of x itself relative to the spread of the row is inherent.
            double rel = fabs(row[j]) / sqrt((double)var + eps);
            double tol = 16 * e * (fabs(want) + (nr + rel) * (use_w ? fabs(wv[j]) : 1.0) + 1e-3);
            if (!close_to(got, want, tol) && bad++ < 3)
                CHECK_MSG(0, "%s %s ndim %d nnorm %d out %s elem %lld: got %.10g want %.10g",
                          rms ? "rms_norm" : "layer_norm", hg_dtype_name(x->dtype), (int)x->ndim,
                          (int)nnorm, hg_dtype_name(odt), (long long)k, got, want);
            k++;
        } while (tref_next_index(x->ndim, x->shape, idx));
        if (!bad) CHECK(1);
        free(row);
    }
    if (s == HG_OK) hg_buffer_destroy(out.buffer);
    if (wb.handle) hg_buffer_destroy(wb);
    if (bb.handle) hg_buffer_destroy(bb);
    free(wv);
    free(bv);
}

static void norm_random(ctx_t* c, int trials) {
    // Finite data only (a region of each buffer without -inf or NaN: rewrite it).
    hg_buffer nb[4];
    unsigned char* nh[4];
    for (int k = 0; k < 4; k++) {
        CHECK_OK(hg_buffer_create(c->t.ex, FLOATS[k], TREF_IOTA_N, &nb[k]));
        CHECK_OK(hg_buffer_map(nb[k], (void**)&nh[k]));
        for (int64_t i = 0; i < TREF_IOTA_N; i++)
            st(FLOATS[k], nh[k], i, (double)tref_rnd(&c->t, -3000, 3000) / 1000.0 + (i % 7 == 0 ? 50 : 0));
    }
    for (int t = 0; t < trials; t++) {
        hg_tensor v;
        if (!tref_rand_view(&c->t, &v) || v.ndim == 0) continue;
        int k = (int)tref_rnd(&c->t, 0, 3);
        v.buffer = nb[k];
        v.dtype = FLOATS[k];
        int32_t nnorm = (int32_t)tref_rnd(&c->t, 1, v.ndim);
        double eps = tref_rnd(&c->t, 0, 1) ? 1e-5 : 0.5;
        check_norm(c, &v, nh[k], (int)tref_rnd(&c->t, 0, 1), nnorm, (int)tref_rnd(&c->t, 0, 1),
                   (int)tref_rnd(&c->t, 0, 1), eps, FLOATS[tref_rnd(&c->t, 0, 3)],
                   (int)tref_rnd(&c->t, 0, 1));
    }
    // Threaded sizes: (64, 1024) rows, f32 contiguous fast path and f64, in place too.
    for (int k = 2; k < 4; k++) {
        hg_buffer b;
        CHECK_OK(hg_buffer_create(c->t.ex, FLOATS[k], 64 * 1024, &b));
        unsigned char* h;
        CHECK_OK(hg_buffer_map(b, (void**)&h));
        for (int64_t i = 0; i < 64 * 1024; i++)
            st(FLOATS[k], h, i, 1e4 + (double)tref_rnd(&c->t, -1000, 1000) / 1000.0);
        hg_tensor x;
        CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){64, 1024}, &x));
        check_norm(c, &x, h, 0, 1, 1, 1, 1e-5, FLOATS[k], 1);
        check_norm(c, &x, h, 1, 2, 1, 0, 1e-6, FLOATS[k], 1);
        hg_tensor xt;
        CHECK_OK(hg_tensor_transpose(&x, 0, 1, &xt));
        check_norm(c, &xt, h, 0, 1, 0, 1, 1e-5, HG_DTYPE_F64, 0);
        hg_buffer_destroy(b);
    }
    for (int k = 0; k < 4; k++) hg_buffer_destroy(nb[k]);
}

// Random finite rows, row 6 around 1e4; rows 8-13 of one element hold +-0, a subnormal, 1e30,
// -inf and NaN (rows of one run as one loop over the rows).
static double norm_row_value(ctx_t* c, int64_t r, int64_t l, int64_t L) {
    (void)l;
    static const double special[] = {0.0, -0.0, 1e-40, 1e30, -INFINITY, NAN};
    if (L == 1 && r >= 8 && r < 14) return special[r - 8];
    return (double)tref_rnd(&c->t, -3000000, 3000000) / 1e6 + (r == 6 ? 1e4 : 0);
}

// Contiguous f32 rows shorter than 64 run 8 at a time (norm.c's batch kernel): against the
// reference, and bit for bit against the same rows read through a strided view (one row at a
// time), with and without parameters; 37 rows (4 batches and 5 rows left), one row of 1e4s.
// Rows of one element (one loop over all rows) with special values too.
static void norm_short_rows(ctx_t* c) {
    const int64_t lens[] = {1, 5, 16, 17, 31, 63};
    const int64_t R = 37;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t L = lens[li];
        hg_buffer b, bt;
        float* h;
        hg_tensor x, xs;
        rows_twice(c, R, L, norm_row_value, &b, &bt, &h, &x, &xs);
        hg_buffer b2 = {0};
        if (L == 1) {
            // The transpose of a column is itself rows end to end: compare with every other
            // element of a twice as long buffer instead (the rows one at a time).
            float* h2;
            CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, (size_t)(2 * R), &b2));
            CHECK_OK(hg_buffer_map(b2, (void**)&h2));
            for (int64_t r = 0; r < R; r++) h2[2 * r] = h2[2 * r + 1] = h[r];
            hg_tensor x2;
            CHECK_OK(hg_tensor_from_buffer(b2, 2, (int64_t[]){2 * R, 1}, &x2));
            CHECK_OK(hg_tensor_slice(&x2, 0, 0, 2 * R, 2, &xs));
        }
        double* vals = malloc((size_t)L * sizeof(double));
        hg_buffer wb, bb;
        hg_tensor w = make_param(c, HG_DTYPE_F32, 1, &L, 1.0, &wb, vals);
        hg_tensor bias = make_param(c, HG_DTYPE_F32, 1, &L, 0.0, &bb, vals);
        for (int rms = 0; rms < 2; rms++)
            for (int par = 0; par < 2; par++) {
                check_norm(c, &x, (unsigned char*)h, rms, 1, par, par, 1e-5, HG_DTYPE_F32, 1);
                hg_tensor o1, o2;
                memset(&o1, 0, sizeof o1);
                memset(&o2, 0, sizeof o2);
                const hg_tensor* wp = par ? &w : NULL;
                const hg_tensor* bp = par ? &bias : NULL;
                CHECK_OK(rms ? hg_rms_norm(&x, 1, wp, 1e-5, &o1)
                             : hg_layer_norm(&x, 1, wp, bp, 1e-5, &o1));
                CHECK_OK(rms ? hg_rms_norm(&xs, 1, wp, 1e-5, &o2)
                             : hg_layer_norm(&xs, 1, wp, bp, 1e-5, &o2));
                float *p1, *p2;
                CHECK_OK(hg_buffer_map(o1.buffer, (void**)&p1));
                CHECK_OK(hg_buffer_map(o2.buffer, (void**)&p2));
                CHECK_MSG(!memcmp(p1, p2, (size_t)(R * L) * sizeof(float)),
                          "%s rows of %lld%s: contiguous and strided results differ",
                          rms ? "rms_norm" : "layer_norm", (long long)L, par ? " (params)" : "");
                hg_buffer_destroy(o1.buffer);
                hg_buffer_destroy(o2.buffer);
            }
        free(vals);
        if (b2.handle) hg_buffer_destroy(b2);
        hg_buffer_destroy(wb);
        hg_buffer_destroy(bb);
        hg_buffer_destroy(b);
        hg_buffer_destroy(bt);
    }
}

// ---- errors ---------------------------------------------------------------------------------
static void errors(ctx_t* c) {
    hg_tensor x, out, xi, good;
    hg_buffer b, bi, ob;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, 24, &b));
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_I32, 24, &bi));
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, 24, &ob));
    CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){4, 6}, &x));
    CHECK_OK(hg_tensor_from_buffer(bi, 2, (int64_t[]){4, 6}, &xi));
    CHECK_OK(hg_tensor_from_buffer(ob, 2, (int64_t[]){4, 6}, &good));
    CHECK_OK(hg_buffer_fill(ob, 7.0));
    TREF_CHECK_ERR(&out, hg_softmax(&xi, 0, &out), HG_ERR_DTYPE_MISMATCH);
    CHECK(strstr(hg_last_error(), "i32") != NULL);
    TREF_CHECK_ERR(&out, hg_log_softmax(&x, 2, &out), HG_ERR_OUT_OF_RANGE);
    CHECK(strstr(hg_last_error(), "axis 2") && strstr(hg_last_error(), "2 dims"));
    TREF_CHECK_ERR(&out, hg_softmax(&x, -3, &out), HG_ERR_OUT_OF_RANGE);
    TREF_CHECK_ERR(&out, hg_softmax(NULL, 0, &out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_softmax(&x, 0, NULL), HG_ERR_NULL_POINTER);
    hg_buffer dead;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, 24, &dead));
    CHECK_OK(hg_buffer_destroy(dead));
    hg_tensor bad[TREF_N_BAD];
    hg_status want[TREF_N_BAD];
    tref_bad_tensors(&x, dead, bad, want);
    for (int i = 0; i < TREF_N_BAD; i++) {
        TREF_CHECK_ERR(&out, hg_softmax(&bad[i], 0, &out), want[i]);
        TREF_CHECK_ERR(&out, hg_layer_norm(&bad[i], 1, NULL, NULL, 1e-5, &out), want[i]);
        TREF_CHECK_ERR(&out, hg_rms_norm(&x, 1, &bad[i], 1e-5, &out), want[i]);
    }
    // Existing outs: wrong shape, int dtype (float -> int is not same_kind): nothing is written.
    // (An out overlapping an input is computed as numpy does: test_ops_overlap.c.)
    hg_tensor wrong, iout;
    CHECK_OK(hg_tensor_view(ob, 2, (int64_t[]){6, 4}, NULL, 0, &wrong));
    CHECK_STATUS(hg_softmax(&x, 1, &wrong), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_layer_norm(&x, 1, NULL, NULL, 1e-5, &wrong), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_softmax(&x, 1, &xi), HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_rms_norm(&x, 1, NULL, 1e-5, &xi), HG_ERR_DTYPE_MISMATCH);
    iout = xi;
    (void)iout;
    float chk[24];
    CHECK_OK(hg_buffer_read(ob, 0, chk, 24));
    int untouched = 1;
    for (int i = 0; i < 24; i++) untouched &= chk[i] == 7.0f;
    CHECK(untouched);
    // Norm arguments: nnorm range, eps, weight shape and dtype.
    TREF_CHECK_ERR(&out, hg_layer_norm(&x, 0, NULL, NULL, 1e-5, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "nnorm 0") != NULL);
    TREF_CHECK_ERR(&out, hg_layer_norm(&x, 3, NULL, NULL, 1e-5, &out), HG_ERR_INVALID_ARGUMENT);
    TREF_CHECK_ERR(&out, hg_rms_norm(&x, 1, NULL, -1.0, &out), HG_ERR_INVALID_ARGUMENT);
    TREF_CHECK_ERR(&out, hg_rms_norm(&x, 1, NULL, NAN, &out), HG_ERR_INVALID_ARGUMENT);
    TREF_CHECK_ERR(&out, hg_layer_norm(&xi, 1, NULL, NULL, 1e-5, &out), HG_ERR_DTYPE_MISMATCH);
    hg_buffer wb;
    hg_tensor w5, w6, wi;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, 6, &wb));
    CHECK_OK(hg_tensor_view(wb, 1, (int64_t[]){5}, NULL, 0, &w5));
    CHECK_OK(hg_tensor_from_buffer(wb, 1, (int64_t[]){6}, &w6));
    CHECK_OK(hg_tensor_view(bi, 1, (int64_t[]){6}, NULL, 0, &wi));
    memset(&out, 0, sizeof out);
    CHECK_STATUS(hg_layer_norm(&x, 1, &w5, NULL, 1e-5, &out), HG_ERR_SIZE_MISMATCH);
    CHECK(strstr(hg_last_error(), "weight") != NULL && out.buffer.handle == 0);
    CHECK_STATUS(hg_layer_norm(&x, 1, &w6, &w5, 1e-5, &out), HG_ERR_SIZE_MISMATCH);
    CHECK(strstr(hg_last_error(), "bias") != NULL && out.buffer.handle == 0);
    CHECK_STATUS(hg_rms_norm(&x, 1, &wi, 1e-5, &out), HG_ERR_DTYPE_MISMATCH);
    CHECK(out.buffer.handle == 0);
    // 0-d softmax: axis 0 and -1 allowed, the result is 1 (log: 0).
    hg_tensor s0;
    CHECK_OK(hg_tensor_view(b, 0, NULL, NULL, 3, &s0));
    memset(&out, 0, sizeof out);
    CHECK_OK(hg_softmax(&s0, -1, &out));
    float one = 0;
    CHECK_OK(hg_buffer_read(out.buffer, 0, &one, 1));
    CHECK(one == 1.0f);
    hg_buffer_destroy(out.buffer);
    TREF_CHECK_ERR(&out, hg_softmax(&s0, 1, &out), HG_ERR_OUT_OF_RANGE);
    hg_buffer_destroy(wb);
    hg_buffer_destroy(b);
    hg_buffer_destroy(bi);
    hg_buffer_destroy(ob);
}

int main(void) {
    hg_executor ex;
    hg_executor_options o = {HG_BACKEND_CPU, 0, 3};
    CHECK_OK(hg_executor_create_ex(&o, &ex));
    ctx_t c;
    memset(&c, 0, sizeof c);
    CHECK_OK(tref_init(&c.t, ex, 0x50f7));
    fill(&c);
    exp_accuracy();
    softmax_random(&c, 1500);
    softmax_big(&c);
    short_rows(&c);
    tiny_rows(&c);
    level_kernels(&c);
    norm_random(&c, 800);
    norm_short_rows(&c);
    errors(&c);
    for (int k = 0; k < 4; k++) hg_buffer_destroy(c.buf[k]);
    tref_fini(&c.t);
    hg_executor_destroy(ex);
    return hg_test_finish("test_ops_softmax_norm");
}
