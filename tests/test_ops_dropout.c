// hg_dropout / hg_dropout_backward: every element and mask entry against a reference written
// here from the documented stream (word (i % 64) / 16 of counter offset + 16 (i / 64) + i % 16,
// from the scalar hg_random_words that test_ops_random checks against Philox's known answers;
// kept iff word >= ceil(p 2^32)), on every float dtype, sizes around the 64-element block,
// offsets carrying past 2^64; the same bytes on 1 and 2 threads and (HG_TEST_BACKEND set) on
// the device; strided views; p = 0 and p = 1; the kept fraction overall, per position of the
// block and for neighbours; ATen's values where dropped (x * 0: -0, NaN from inf); the error
// paths (nothing written).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "ops/random/random.h"

static const hg_dtype k_float[4] = {HG_DTYPE_F16, HG_DTYPE_BF16, HG_DTYPE_F32, HG_DTYPE_F64};
static uint64_t g_rng = 0x5EED;

static int ref_keep(uint64_t seed, uint64_t offset, double p, uint64_t i) {
    uint32_t w[4];
    hg_random_words(seed, offset, 16 * (i / 64) + i % 16, w);
    double t = ceil(p * 4294967296.0);
    return (double)w[(i % 64) / 16] >= t;
}

static double load(hg_dtype dt, const unsigned char* p) {
    uint16_t h;
    float f;
    double d;
    switch (dt) {
    case HG_DTYPE_F16: memcpy(&h, p, 2); return hg_f16_to_f32(h);
    case HG_DTYPE_BF16: memcpy(&h, p, 2); return hg_bf16_to_f32(h);
    case HG_DTYPE_F32: memcpy(&f, p, 4); return f;
    default: memcpy(&d, p, 8); return d;
    }
}

// A value of dt near v (f16/bf16/f32: v rounded toward zero by truncating bits).
static void store(hg_dtype dt, unsigned char* p, double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t h;
    switch (dt) {
    case HG_DTYPE_F16: h = hg_f32_to_f16(f); memcpy(p, &h, 2); break;
    case HG_DTYPE_BF16: h = (uint16_t)(u >> 16); memcpy(p, &h, 2); break;
    case HG_DTYPE_F32: memcpy(p, &f, 4); break;
    default: memcpy(p, &v, 8);
    }
}

// x * (keep ? scale : 0) as the op promises: f64 exact, else the f32 product, which f16/bf16
// round once (checked within half an ulp of the dtype, both sides of 0 kept).
static int value_ok(hg_dtype dt, double x, double scale, int keep, double got) {
    if (!keep) {
        double want = x * 0.0;
        if (isnan(want)) return isnan(got);
        return got == 0 && signbit(got) == signbit(want);
    }
    if (dt == HG_DTYPE_F64) return got == x * scale || (isnan(x) && isnan(got));
    float want = (float)x * (float)scale;
    if (dt == HG_DTYPE_F32) return got == (double)want || (isnan(want) && isnan(got));
    if (isinf(want) || isnan(want)) return isinf(got) || isnan(got) || fabs(got) > 6e4;
    double rel = dt == HG_DTYPE_F16 ? 0x1p-11 : 0x1p-8;
    return fabs(got - want) <= fabs(want) * rel + (dt == HG_DTYPE_F16 ? 0x1p-25 : 0);
}

static double rnd(void) { return (double)(hg_test_rand(&g_rng) >> 11) * 0x1p-53 * 8 - 4; }

// A 1-D tensor of dt with n values in (-4, 4), specials in the first four.
static hg_buffer make_x(hg_executor ex, hg_dtype dt, int64_t n, hg_tensor* t) {
    hg_buffer b;
    size_t es = hg_dtype_size(dt);
    CHECK_OK(hg_buffer_create(ex, dt, (size_t)(n ? n : 1), &b));
    unsigned char* h = calloc((size_t)(n ? n : 1), es);
    const double sp[4] = {INFINITY, -INFINITY, NAN, -2.0};
    for (int64_t i = 0; i < n; i++) store(dt, h + i * (int64_t)es, i < 4 ? sp[i] : rnd());
    CHECK_OK(hg_buffer_write(b, 0, h, (size_t)(n ? n : 1)));
    free(h);
    CHECK_OK(hg_tensor_view(b, 1, (int64_t[]){n}, NULL, 0, t));
    return b;
}

static unsigned char* read_all(hg_buffer b, size_t count, size_t es) {
    unsigned char* h = malloc(count * es + 1);
    CHECK_OK(hg_buffer_read(b, 0, h, count));
    return h;
}

// Every element and mask entry of hg_dropout against the reference.
static void test_reference(hg_executor ex) {
    const int64_t sizes[] = {0, 1, 5, 63, 64, 65, 1000, 3 * 16384 + 17};
    const double ps[] = {0.1, 0.5, 0.3, 0.9};
    const uint64_t offs[] = {0, 7, UINT64_MAX - 40};
    for (int t = 0; t < 4; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            hg_dtype dt = k_float[t];
            int64_t n = sizes[s];
            double p = ps[(t + s) % 4];
            uint64_t off = offs[s % 3], seed = 0x123456789ABCull + s;
            hg_tensor x, out, mask;
            hg_buffer bx = make_x(ex, dt, n, &x), bo, bm;
            CHECK_OK(hg_buffer_create(ex, dt, (size_t)(n ? n : 1), &bo));
            CHECK_OK(hg_buffer_create(ex, HG_DTYPE_BOOL, (size_t)(n ? n : 1), &bm));
            CHECK_OK(hg_tensor_view(bo, 1, (int64_t[]){n}, NULL, 0, &out));
            CHECK_OK(hg_tensor_view(bm, 1, (int64_t[]){n}, NULL, 0, &mask));
            CHECK_OK(hg_dropout(&x, p, seed, off, &out, &mask));
            size_t es = hg_dtype_size(dt);
            unsigned char *hx = read_all(bx, (size_t)(n ? n : 1), es);
            unsigned char *ho = read_all(bo, (size_t)(n ? n : 1), es);
            unsigned char *hm = read_all(bm, (size_t)(n ? n : 1), 1);
            int64_t bad_m = 0, bad_v = 0;
            double scale = 1.0 / (1.0 - p);
            for (int64_t i = 0; i < n; i++) {
                int keep = ref_keep(seed, off, p, (uint64_t)i);
                bad_m += hm[i] != keep;
                bad_v += !value_ok(dt, load(dt, hx + i * (int64_t)es), scale, keep,
                                   load(dt, ho + i * (int64_t)es));
            }
            CHECK_MSG(!bad_m && !bad_v, "%s n=%lld p=%g offset=%llu: %lld mask, %lld values off",
                      hg_dtype_name(dt), (long long)n, p, (unsigned long long)off,
                      (long long)bad_m, (long long)bad_v);
            // The same mask again without one; in place (out = x) gives out's values.
            hg_tensor o2;
            memset(&o2, 0, sizeof o2);
            CHECK_OK(hg_dropout(&x, p, seed, off, &o2, NULL));
            if (n) {
                unsigned char* h2 = malloc((size_t)n * es);
                CHECK_OK(hg_buffer_read(o2.buffer, 0, h2, (size_t)n));
                CHECK_MSG(memcmp(h2, ho, (size_t)n * es) == 0, "no mask, %s", hg_dtype_name(dt));
                free(h2);
                CHECK_OK(hg_dropout(&x, p, seed, off, &x, NULL));
                unsigned char* h3 = read_all(bx, (size_t)n, es);
                CHECK_MSG(memcmp(h3, ho, (size_t)n * es) == 0, "in place, %s", hg_dtype_name(dt));
                free(h3);
            }
            if (o2.buffer.handle) hg_buffer_destroy(o2.buffer);
            free(hx), free(ho), free(hm);
            hg_buffer_destroy(bx), hg_buffer_destroy(bo), hg_buffer_destroy(bm);
        }
}

// out and mask of one call (f32 / dt, n elements) as host bytes.
static void run_fwd(hg_executor ex, hg_dtype dt, int64_t n, double p, uint64_t seed,
                    uint64_t off, unsigned char** ho, unsigned char** hm) {
    g_rng = 0xABCDEF;
    hg_tensor x, out, mask;
    hg_buffer bx = make_x(ex, dt, n, &x), bo, bm;
    CHECK_OK(hg_buffer_create(ex, dt, (size_t)n, &bo));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_BOOL, (size_t)n, &bm));
    CHECK_OK(hg_tensor_from_buffer(bo, 1, (int64_t[]){n}, &out));
    CHECK_OK(hg_tensor_from_buffer(bm, 1, (int64_t[]){n}, &mask));
    CHECK_OK(hg_dropout(&x, p, seed, off, &out, &mask));
    *ho = read_all(bo, (size_t)n, hg_dtype_size(dt));
    *hm = read_all(bm, (size_t)n, 1);
    hg_buffer_destroy(bx), hg_buffer_destroy(bo), hg_buffer_destroy(bm);
}

// The same bytes on two executors (1 and 2 threads; or the CPU and a device).
static void test_same(hg_executor e1, hg_executor e2, int64_t n, const char* what) {
    for (int t = 0; t < 4; t++) {
        hg_dtype dt = k_float[t];
        unsigned char *o1, *m1, *o2, *m2;
        run_fwd(e1, dt, n, 0.37, 99, 12345, &o1, &m1);
        run_fwd(e2, dt, n, 0.37, 99, 12345, &o2, &m2);
        CHECK_MSG(memcmp(m1, m2, (size_t)n) == 0, "mask, %s, %s", what, hg_dtype_name(dt));
        CHECK_MSG(memcmp(o1, o2, (size_t)n * hg_dtype_size(dt)) == 0, "out, %s, %s", what,
                  hg_dtype_name(dt));
        free(o1), free(m1), free(o2), free(m2);
    }
}

// Strided x, out and mask: element i of the C order of the views gets contiguous element i.
static void test_strided(hg_executor ex) {
    enum { R = 37, C = 70, N = R * C };
    for (int t = 0; t < 4; t++) {
        hg_dtype dt = k_float[t];
        size_t es = hg_dtype_size(dt);
        unsigned char *oc, *mc;
        run_fwd(ex, dt, N, 0.25, 5, 3, &oc, &mc);   // x: the same values, contiguous
        g_rng = 0xABCDEF;
        hg_tensor x, xt, out, ot, mask;
        hg_buffer bx = make_x(ex, dt, N, &x), bo, bm;
        // x's values in C order of a (C, R) transposed view of an (R, C) buffer.
        unsigned char* hx = read_all(bx, N, es);
        unsigned char* tr = malloc((size_t)N * es);
        for (int64_t i = 0; i < C; i++)
            for (int64_t j = 0; j < R; j++)
                memcpy(tr + (j * C + i) * (int64_t)es, hx + (i * R + j) * (int64_t)es, es);
        CHECK_OK(hg_buffer_write(bx, 0, tr, N));
        CHECK_OK(hg_tensor_view(bx, 2, (int64_t[]){R, C}, NULL, 0, &x));
        CHECK_OK(hg_tensor_transpose(&x, 0, 1, &xt));
        CHECK_OK(hg_buffer_create(ex, dt, N, &bo));
        CHECK_OK(hg_buffer_create(ex, HG_DTYPE_BOOL, 2 * N, &bm));
        CHECK_OK(hg_tensor_view(bo, 2, (int64_t[]){R, C}, NULL, 0, &out));
        CHECK_OK(hg_tensor_transpose(&out, 0, 1, &ot));
        CHECK_OK(hg_tensor_view(bm, 2, (int64_t[]){C, R}, (int64_t[]){2 * R, 2}, 1, &mask));
        CHECK_OK(hg_dropout(&xt, 0.25, 5, 3, &ot, &mask));
        unsigned char* ho = read_all(bo, N, es);
        unsigned char* hm = read_all(bm, 2 * N, 1);
        int ok = 1;
        for (int64_t i = 0; i < C; i++)
            for (int64_t j = 0; j < R; j++) {
                int64_t k = i * R + j;   // C-order index in the (C, R) views
                ok &= memcmp(ho + (j * C + i) * (int64_t)es, oc + k * (int64_t)es, es) == 0;
                ok &= hm[1 + k * 2] == mc[k] && hm[k * 2] == 0;
            }
        CHECK_MSG(ok, "strided views, %s", hg_dtype_name(dt));
        free(oc), free(mc), free(hx), free(tr), free(ho), free(hm);
        hg_buffer_destroy(bx), hg_buffer_destroy(bo), hg_buffer_destroy(bm);
    }
}

// p = 0 keeps everything (x * 1); p = 1 drops everything (x * 0) with no draws.
static void test_p_ends(hg_executor ex) {
    for (int t = 0; t < 4; t++)
        for (int k = 0; k < 2; k++) {
            hg_dtype dt = k_float[t];
            unsigned char *o, *m;
            run_fwd(ex, dt, 300, (double)k, 1, 0, &o, &m);
            g_rng = 0xABCDEF;
            hg_tensor x;
            hg_buffer bx = make_x(ex, dt, 300, &x);
            unsigned char* hx = read_all(bx, 300, hg_dtype_size(dt));
            int ok = 1;
            for (int64_t i = 0; i < 300; i++) {
                double xv = load(dt, hx + i * (int64_t)hg_dtype_size(dt));
                double got = load(dt, o + i * (int64_t)hg_dtype_size(dt));
                ok &= m[i] == !k && value_ok(dt, xv, 1.0, !k, got);
            }
            CHECK_MSG(ok, "p = %d, %s", k, hg_dtype_name(dt));
            free(o), free(m), free(hx);
            hg_buffer_destroy(bx);
        }
}

// The kept fraction: overall, at each of the 64 positions of a block, and for pairs of
// neighbours (independence), within 5 standard deviations.
static void test_statistics(hg_executor ex) {
    enum { N = 1 << 20 };
    const double ps[3] = {0.1, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        double p = ps[k], q = 1 - p;
        unsigned char *o, *m;
        run_fwd(ex, HG_DTYPE_F32, N, p, 1000 + (uint64_t)k, 0, &o, &m);
        int64_t kept = 0, pos[64] = {0}, pairs = 0;
        for (int64_t i = 0; i < N; i++) {
            kept += m[i];
            pos[i % 64] += m[i];
            if (i + 1 < N) pairs += m[i] & m[i + 1];
        }
        double sd = sqrt(p * q / N);
        CHECK_MSG(fabs((double)kept / N - q) < 5 * sd, "p %g: kept %g", p, (double)kept / N);
        double sdp = sqrt(p * q / (N / 64));
        for (int j = 0; j < 64; j++)
            CHECK_MSG(fabs((double)pos[j] / (N / 64) - q) < 5 * sdp, "p %g: position %d kept %g",
                      p, j, (double)pos[j] / (N / 64));
        double sd2 = sqrt(q * q * (1 - q * q) / N);
        CHECK_MSG(fabs((double)pairs / (N - 1) - q * q) < 6 * sd2, "p %g: pairs %g", p,
                  (double)pairs / (N - 1));
        free(o), free(m);
    }
}

// The backward: grad * scale where mask, grad * 0 elsewhere; strided, in place, every dtype.
static void test_backward(hg_executor ex) {
    enum { N = 5000 };
    for (int t = 0; t < 4; t++) {
        hg_dtype dt = k_float[t];
        size_t es = hg_dtype_size(dt);
        hg_tensor g, mask, out;
        hg_buffer bg = make_x(ex, dt, N, &g), bm;
        unsigned char* hm = malloc(N);
        for (int i = 0; i < N; i++) hm[i] = (hg_test_rand(&g_rng) >> 60) > 4;
        hm[0] = hm[1] = hm[2] = hm[3] = 0;   // -0, NaN from the specials
        CHECK_OK(hg_buffer_create(ex, HG_DTYPE_BOOL, N, &bm));
        CHECK_OK(hg_buffer_write(bm, 0, hm, N));
        CHECK_OK(hg_tensor_from_buffer(bm, 1, (int64_t[]){N}, &mask));
        memset(&out, 0, sizeof out);
        double scale = 1 / 0.7;
        CHECK_OK(hg_dropout_backward(&g, &mask, scale, &out));
        unsigned char* hg_ = read_all(bg, N, es);
        unsigned char* ho = malloc(N * es);
        CHECK_OK(hg_buffer_read(out.buffer, 0, ho, N));
        int ok = 1;
        for (int64_t i = 0; i < N; i++)
            ok &= value_ok(dt, load(dt, hg_ + i * (int64_t)es), scale, hm[i],
                           load(dt, ho + i * (int64_t)es));
        CHECK_MSG(ok, "backward, %s", hg_dtype_name(dt));
        // Every other element (strided grad, mask, out) and in place.
        hg_tensor gs, ms, os;
        CHECK_OK(hg_tensor_slice(&g, 0, 0, N, 2, &gs));
        CHECK_OK(hg_tensor_slice(&mask, 0, 0, N, 2, &ms));
        CHECK_OK(hg_tensor_slice(&out, 0, 1, N, 2, &os));
        CHECK_OK(hg_dropout_backward(&gs, &ms, scale, &os));
        CHECK_OK(hg_dropout_backward(&gs, &ms, scale, &gs));
        unsigned char* h2 = read_all(bg, N, es);
        unsigned char* h3 = malloc(N * es);
        CHECK_OK(hg_buffer_read(out.buffer, 0, h3, N));
        for (int64_t i = 0; i < N; i += 2) {
            ok &= memcmp(h2 + i * (int64_t)es, ho + i * (int64_t)es, es) == 0;
            ok &= i + 1 >= N || memcmp(h3 + (i + 1) * (int64_t)es, ho + i * (int64_t)es, es) == 0;
            ok &= i + 1 >= N || memcmp(h2 + (i + 1) * (int64_t)es, hg_ + (i + 1) * (int64_t)es,
                                       es) == 0;
        }
        CHECK_MSG(ok, "backward strided / in place, %s", hg_dtype_name(dt));
        free(hm), free(hg_), free(ho), free(h2), free(h3);
        hg_buffer_destroy(out.buffer);
        hg_buffer_destroy(bg), hg_buffer_destroy(bm);
    }
}

// The backward on a device against the CPU (the forward's are in test_same).
static void test_backward_same(hg_executor e1, hg_executor e2) {
    enum { N = 777 };
    for (int t = 0; t < 4; t++) {
        hg_dtype dt = k_float[t];
        unsigned char* res[2];
        unsigned char hm[N];
        for (int i = 0; i < N; i++) hm[i] = (unsigned char)(i % 3 != 0);
        for (int e = 0; e < 2; e++) {
            g_rng = 77;
            hg_tensor g, mask, out;
            hg_buffer bg = make_x(e ? e2 : e1, dt, N, &g), bm;
            CHECK_OK(hg_buffer_create(e ? e2 : e1, HG_DTYPE_BOOL, N, &bm));
            CHECK_OK(hg_buffer_write(bm, 0, hm, N));
            CHECK_OK(hg_tensor_from_buffer(bm, 1, (int64_t[]){N}, &mask));
            memset(&out, 0, sizeof out);
            CHECK_OK(hg_dropout_backward(&g, &mask, 1 / 0.3, &out));
            res[e] = malloc(N * hg_dtype_size(dt));
            CHECK_OK(hg_buffer_read(out.buffer, 0, res[e], N));
            hg_buffer_destroy(out.buffer), hg_buffer_destroy(bg), hg_buffer_destroy(bm);
        }
        CHECK_MSG(memcmp(res[0], res[1], N * hg_dtype_size(dt)) == 0, "backward on the device, "
                  "%s", hg_dtype_name(dt));
        free(res[0]), free(res[1]);
    }
}

// Bad arguments: the status and message, nothing written.
static void test_errors(hg_executor ex) {
    hg_tensor x, out, mask, ix;
    hg_buffer bx = make_x(ex, HG_DTYPE_F32, 8, &x), bo, bm, bi;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 8, &bo));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 8, &bm));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_I32, 8, &bi));
    CHECK_OK(hg_tensor_from_buffer(bo, 1, (int64_t[]){8}, &out));
    CHECK_OK(hg_tensor_from_buffer(bi, 1, (int64_t[]){8}, &ix));
    const float fill[8] = {9, 9, 9, 9, 9, 9, 9, 9};
    CHECK_OK(hg_buffer_write(bo, 0, fill, 8));
    CHECK_STATUS(hg_dropout(&x, -0.1, 1, 0, &out, NULL), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "p must lie in [0, 1]") != NULL);
    CHECK_STATUS(hg_dropout(&x, 1.5, 1, 0, &out, NULL), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_dropout(&x, NAN, 1, 0, &out, NULL), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_dropout(&ix, 0.5, 1, 0, &out, NULL), HG_ERR_DTYPE_MISMATCH);
    CHECK(strstr(hg_last_error(), "'x' has dtype i32") != NULL);
    CHECK_OK(hg_tensor_from_buffer(bm, 1, (int64_t[]){8}, &mask));   // f32: not bool
    CHECK_STATUS(hg_dropout(&x, 0.5, 1, 0, &out, &mask), HG_ERR_DTYPE_MISMATCH);
    CHECK(strstr(hg_last_error(), "'mask' has dtype f32; need bool") != NULL);
    hg_buffer bb;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_BOOL, 8, &bb));
    CHECK_OK(hg_tensor_view(bb, 1, (int64_t[]){4}, NULL, 0, &mask));
    CHECK_STATUS(hg_dropout(&x, 0.5, 1, 0, &out, &mask), HG_ERR_SIZE_MISMATCH);
    CHECK(strstr(hg_last_error(), "'mask' must have the shape of 'x'") != NULL);
    CHECK_STATUS(hg_dropout(NULL, 0.5, 1, 0, &out, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_dropout_backward(&x, NULL, 2.0, &out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_dropout_backward(&ix, &mask, 2.0, &out), HG_ERR_DTYPE_MISMATCH);
    CHECK_OK(hg_tensor_from_buffer(bb, 1, (int64_t[]){8}, &mask));
    CHECK_STATUS(hg_dropout_backward(&x, &mask, INFINITY, &out), HG_ERR_INVALID_ARGUMENT);
    float got[8];
    CHECK_OK(hg_buffer_read(bo, 0, got, 8));
    CHECK_MSG(memcmp(got, fill, sizeof got) == 0, "out written by a refused call");
    hg_buffer_destroy(bx), hg_buffer_destroy(bo), hg_buffer_destroy(bm), hg_buffer_destroy(bi);
    hg_buffer_destroy(bb);
}

int main(void) {
    hg_executor e1, e2;
    hg_executor_options o1 = {HG_BACKEND_CPU, 0, 1}, o2 = {HG_BACKEND_CPU, 0, 2};
    CHECK_OK(hg_executor_create_ex(&o1, &e1));
    CHECK_OK(hg_executor_create_ex(&o2, &e2));
    test_reference(e2);
    test_reference(e1);
    test_same(e1, e2, (1 << 20) + 17, "1 vs 2 threads");
    test_strided(e2);
    test_p_ends(e2);
    test_statistics(e2);
    test_backward(e2);
    test_errors(e1);
    const char* name = getenv("HG_TEST_BACKEND");
    if (name && name[0] && strcmp(name, "cpu")) {
        hg_executor dev;
        hg_status s = hg_executor_create_by_name(name, &dev);
        if (s) {
            printf("test_ops_dropout: SKIPPED (backend '%s' unavailable: %s)\n", name,
                   hg_last_error());
            return 77;
        }
        test_same(e2, dev, 5000, "host vs device");
        test_reference(dev);
        test_strided(dev);
        test_p_ends(dev);
        test_backward(dev);
        test_backward_same(e2, dev);
        hg_executor_destroy(dev);
    }
    hg_executor_destroy(e1);
    hg_executor_destroy(e2);
    return hg_test_finish("test_ops_dropout");
}
