// hg_layer_norm_stats and hg_layer_norm_backward_stats (the layer_norm composite with the
// statistics torch's native_layer_norm saves): against float64 references, in both composite
// modes (the row kernels, HOLOGRAM_COMPOSITE=decomp), for every float dtype, C-contiguous,
// strided and transposed rows, weight / bias absent, rows of one element and batches of short
// rows, rows far from 0, zero rows, two normalized dims, given statistics of any value, every
// combination of outputs, and the argument checks (a failing call leaves its outputs as they
// were). out of hg_layer_norm_stats is hg_layer_norm's, bit for bit.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "composite/composite.h"
#include "hg_test.h"
#include "test_ops_rows_util.h"

static hg_executor g_ex;
static int g_device;
static uint64_t g_rng = 0x5eed5ull;
#define EPS 1e-5

typedef rows_operand operand;

// An (M, R) operand in layout lay (test_ops_rows_util.h), uniform in [c + lo, c + hi).
static operand make_operand(hg_dtype dt, int64_t M, int64_t R, int lay, double c, double lo,
                            double hi) {
    return rows_make_operand(g_ex, &g_rng, dt, M, R, lay, c + lo, c + hi);
}

static void operand_free(operand* o) { rows_operand_free(o); }

// t's values in C order (an empty output may have no buffer).
static double* read_all(const hg_tensor* t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; d++) n *= t->shape[d];
    if (!n) return calloc(1, sizeof(double));
    hg_tensor c;
    int copied = 0;
    CHECK_OK(hg_tensor_contiguous(t, &c, &copied));
    size_t es = hg_dtype_size(t->dtype);
    unsigned char* h = malloc((size_t)(n + 1) * es);
    double* v = malloc((size_t)(n + 1) * sizeof *v);
    if (n) CHECK_OK(hg_buffer_read(c.buffer, c.offset, h, (size_t)n));
    for (int64_t i = 0; i < n; i++) v[i] = rows_get(h + (size_t)i * es, t->dtype);
    if (copied) hg_buffer_destroy(c.buffer);
    free(h);
    return v;
}

// Whether a decomposition ran since the counters c0 (hits + compiles) were read; updates c0.
static int decomp_ran(int64_t* c0) {
    int64_t p, h, c;
    hg_cop_cache_stats(g_ex, &p, &h, &c);
    int ran = h + c > *c0;
    *c0 = h + c;
    return ran;
}

static void expect_close(const char* what, const hg_tensor* t, const double* want,
                         const double* mag, int64_t n, hg_dtype dt) {
    double* got = read_all(t);
    int bad;
    double e = rows_nmse(got, want, mag, n, dt, &bad);
    CHECK_MSG(!bad && e <= rows_nmse_limit(dt), "%s: NMSE %.3g (limit %.3g), %d special-value "
              "mismatches", what, e, rows_nmse_limit(dt), bad);
    free(got);
}

// Row statistics of x (M, R) in float64.
static void ref_stats(const double* x, int64_t M, int64_t R, double* mean, double* rstd) {
    for (int64_t r = 0; r < M; r++) {
        double m = 0, v = 0;
        for (int64_t j = 0; j < R; j++) m += x[r * R + j];
        m /= (double)R;
        for (int64_t j = 0; j < R; j++) v += (x[r * R + j] - m) * (x[r * R + j] - m);
        mean[r] = m;
        rstd[r] = 1 / sqrt(v / (double)R + EPS);
    }
}

// The forward on (M, R) (viewed as (M / 2, 2, R / 2) with two normalized dims when twod):
// out against float64 and bit for bit against hg_layer_norm, the statistics against float64.
static void run_forward(hg_dtype dt, int64_t M, int64_t R, int lay, int params, double c) {
    operand x = make_operand(dt, M, R, lay, c, -3, 3), w = make_operand(dt, 1, R, LAY_ROWS, 0, .5,
                                                                         1.5);
    operand b = make_operand(dt, 1, R, LAY_ROWS, 0, -1, 1);
    hg_tensor wt, bt;
    CHECK_OK(hg_tensor_reshape(&w.t, 1, &R, &wt));
    CHECK_OK(hg_tensor_reshape(&b.t, 1, &R, &bt));
    int64_t n = M * R;
    double* want = malloc((size_t)(n + 1) * sizeof *want);
    double* mean = malloc((size_t)(M + 1) * sizeof *mean);
    double* rstd = malloc((size_t)(M + 1) * sizeof *rstd);
    ref_stats(x.v, M, R, mean, rstd);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i % R;
        want[i] = (x.v[i] - mean[i / R]) * rstd[i / R] * (params ? w.v[j] : 1) +
                  (params ? b.v[j] : 0);
    }
    char what[160];
    for (int mode = 0; mode < 2; mode++) {
        hg_cop_mode_set(mode ? HG_COP_DECOMP : HG_COP_AUTO);
        snprintf(what, sizeof what, "layer_norm_stats %s (%lld, %lld) lay %d params %d c %g "
                 "mode %d", hg_dtype_name(dt), (long long)M, (long long)R, lay, params, c, mode);
        hg_tensor out = {0}, m = {0}, r = {0}, ref = {0};
        int64_t c0 = 0;
        decomp_ran(&c0);
        hg_status s = hg_layer_norm_stats(&x.t, 1, params ? &wt : NULL, params ? &bt : NULL, EPS,
                                          &out, &m, &r);
        CHECK_MSG(s == HG_OK, "%s: %s", what, hg_last_error());
        // the host row kernel writes the statistics (devices: their decomposition)
        if (M && !mode) CHECK_MSG(decomp_ran(&c0) == g_device, "%s: the decomposition %s", what,
                                  g_device ? "did not run" : "ran");
        CHECK(m.dtype == dt && m.ndim == 2 && m.shape[0] == M && m.shape[1] == 1);
        CHECK(r.dtype == dt && r.ndim == 2 && r.shape[0] == M && r.shape[1] == 1);
        expect_close(what, &out, want, NULL, n, dt);
        expect_close(what, &m, mean, NULL, M, dt);
        expect_close(what, &r, rstd, NULL, M, dt);
        CHECK_OK(hg_layer_norm(&x.t, 1, params ? &wt : NULL, params ? &bt : NULL, EPS, &ref));
        if (mode == 0) {   // the row kernel's out, the same bits with or without the statistics
            double *a = read_all(&out), *e = read_all(&ref);
            CHECK_MSG(!memcmp(a, e, (size_t)n * sizeof *a), "%s: out differs from "
                      "hg_layer_norm's", what);
            free(a);
            free(e);
        }
        // one statistic asked for, into an existing view of stride 2 (the kernel cannot write
        // it in place: the decomposition computes it; out is still the kernel's)
        hg_buffer sb = rows_make_buf(g_ex, dt, 2 * M + 1, NULL);
        hg_tensor sv, out2 = {0};
        int64_t sshape[2] = {M, 1}, sst[2] = {2, 1};
        CHECK_OK(hg_tensor_view(sb, 2, sshape, sst, 0, &sv));
        CHECK_OK(hg_layer_norm_stats(&x.t, 1, params ? &wt : NULL, params ? &bt : NULL, EPS,
                                     &out2, NULL, &sv));
        expect_close(what, &sv, rstd, NULL, M, dt);
        double *a = read_all(&out2), *e = read_all(&ref);
        CHECK_MSG(mode || !memcmp(a, e, (size_t)n * sizeof *a), "%s: out (one strided "
                  "statistic) differs from hg_layer_norm's", what);
        free(a);
        free(e);
        hg_buffer_destroy(sb);
        hg_buffer_destroy(out.buffer);
        hg_buffer_destroy(out2.buffer);
        hg_buffer_destroy(m.buffer);
        hg_buffer_destroy(r.buffer);
        hg_buffer_destroy(ref.buffer);
    }
    hg_cop_mode_set(HG_COP_AUTO);
    operand_free(&x);
    operand_free(&w);
    operand_free(&b);
    free(want);
    free(mean);
    free(rstd);
}

// The backward from given statistics: the forward's (the float64 ones rounded to dt) or any
// values; each combination of outputs.
static void run_backward(hg_dtype dt, int64_t M, int64_t R, int lay, int params, int any) {
    operand x = make_operand(dt, M, R, lay, 0, -3, 3), g = make_operand(dt, M, R, lay, 0, -1, 1);
    operand w = make_operand(dt, 1, R, LAY_ROWS, 0, .5, 1.5);
    operand sm = make_operand(dt, M, 1, LAY_ROWS, 0, -1, 1);
    operand sr = make_operand(dt, M, 1, LAY_ROWS, 0, .5, 2);
    hg_tensor wt;
    CHECK_OK(hg_tensor_reshape(&w.t, 1, &R, &wt));
    int64_t n = M * R;
    if (!any) {   // the forward's statistics, as stored in dt
        double* mean = malloc((size_t)(M + 1) * sizeof *mean);
        double* rstd = malloc((size_t)(M + 1) * sizeof *rstd);
        ref_stats(x.v, M, R, mean, rstd);
        operand_free(&sm);
        operand_free(&sr);
        sm.v = mean, sr.v = rstd;
        for (int64_t r = 0; r < M; r++) mean[r] = rows_round_to(dt, mean[r]);
        for (int64_t r = 0; r < M; r++) rstd[r] = rows_round_to(dt, rstd[r]);
        int64_t shape[2] = {M, 1};
        sm.buf = rows_make_buf(g_ex, dt, M + 1, mean);
        sr.buf = rows_make_buf(g_ex, dt, M + 1, rstd);
        CHECK_OK(hg_tensor_view(sm.buf, 2, shape, NULL, 0, &sm.t));
        CHECK_OK(hg_tensor_view(sr.buf, 2, shape, NULL, 0, &sr.t));
    }
    double* gx = malloc((size_t)(n + 1) * sizeof *gx);
    double* mag = malloc((size_t)(n + 1) * sizeof *mag);
    double* gw = calloc((size_t)R, sizeof *gw);
    double* gb = calloc((size_t)R, sizeof *gb);
    for (int64_t r = 0; r < M; r++) {
        double a = 0, bb = 0, m = sm.v[r], rs = sr.v[r];
        for (int64_t j = 0; j < R; j++) {
            double q = g.v[r * R + j] * (params ? w.v[j] : 1), xh = (x.v[r * R + j] - m) * rs;
            a += q / (double)R;
            bb += q * xh / (double)R;
            gw[j] += g.v[r * R + j] * xh;
            gb[j] += g.v[r * R + j];
        }
        for (int64_t j = 0; j < R; j++) {
            double q = g.v[r * R + j] * (params ? w.v[j] : 1), xh = (x.v[r * R + j] - m) * rs;
            gx[r * R + j] = rs * (q - a - xh * bb);
            mag[r * R + j] = rs * (fabs(q) + fabs(a) + fabs(xh * bb));
        }
    }
    char what[160];
    for (int mode = 0; mode < 2; mode++)
        for (int mask = 1; mask < 8; mask += 3) {   // grad_x; grad_weight, grad_bias; all
            hg_cop_mode_set(mode ? HG_COP_DECOMP : HG_COP_AUTO);
            snprintf(what, sizeof what, "layer_norm_backward_stats %s (%lld, %lld) lay %d "
                     "params %d any %d mode %d mask %d", hg_dtype_name(dt), (long long)M,
                     (long long)R, lay, params, any, mode, mask);
            hg_tensor o[3];
            memset(o, 0, sizeof o);
            int64_t c0 = 0;
            decomp_ran(&c0);
            hg_status s = hg_layer_norm_backward_stats(
                &g.t, &x.t, 1, &sm.t, &sr.t, params ? &wt : NULL, mask & 1 ? &o[0] : NULL,
                mask & 2 ? &o[1] : NULL, mask & 4 ? &o[2] : NULL);
            CHECK_MSG(s == HG_OK, "%s: %s", what, hg_last_error());
            // the host row kernel: C-contiguous f32 / f64 (devices: the decomposition)
            int cx = 0, cg = 0;
            CHECK_OK(hg_tensor_is_contiguous(&x.t, &cx));
            CHECK_OK(hg_tensor_is_contiguous(&g.t, &cg));
            int kernel = !g_device && !mode && cx && cg &&
                         (dt == HG_DTYPE_F32 || dt == HG_DTYPE_F64);
            if (M) CHECK_MSG(decomp_ran(&c0) == !kernel, "%s: the decomposition %s", what,
                             kernel ? "ran" : "did not run");
            if (mask & 1) expect_close(what, &o[0], gx, mag, n, dt);
            if (mask & 2) expect_close(what, &o[1], gw, NULL, R, dt);
            if (mask & 4) expect_close(what, &o[2], gb, NULL, R, dt);
            for (int k = 0; k < 3; k++)
                if (mask >> k & 1) hg_buffer_destroy(o[k].buffer);
        }
    hg_cop_mode_set(HG_COP_AUTO);
    operand_free(&x);
    operand_free(&g);
    operand_free(&w);
    operand_free(&sm);
    operand_free(&sr);
    free(gx);
    free(mag);
    free(gw);
    free(gb);
}

// Two normalized dims and the agreement of the two new ops with the ones that recompute the
// statistics (hg_layer_norm_backward from eps), on rows large enough for several threads.
static void run_consistency(hg_dtype dt, int64_t A, int64_t B, int64_t C) {
    int64_t n = A * B * C, shape[3] = {A, B, C}, pshape[2] = {B, C};
    operand x = make_operand(dt, 1, n, LAY_ROWS, 2, -3, 3), g = make_operand(dt, 1, n, LAY_ROWS,
                                                                             0, -1, 1);
    operand w = make_operand(dt, 1, B * C, LAY_ROWS, 0, .5, 1.5);
    hg_tensor xt, gt, wt, out = {0}, m = {0}, r = {0}, e[3], f[3];
    memset(e, 0, sizeof e);
    memset(f, 0, sizeof f);
    CHECK_OK(hg_tensor_reshape(&x.t, 3, shape, &xt));
    CHECK_OK(hg_tensor_reshape(&g.t, 3, shape, &gt));
    CHECK_OK(hg_tensor_reshape(&w.t, 2, pshape, &wt));
    CHECK_OK(hg_layer_norm_stats(&xt, 2, &wt, NULL, EPS, &out, &m, &r));
    CHECK(m.ndim == 3 && m.shape[0] == A && m.shape[1] == 1 && m.shape[2] == 1);
    CHECK_OK(hg_layer_norm_backward_stats(&gt, &xt, 2, &m, &r, &wt, &e[0], &e[1], &e[2]));
    CHECK_OK(hg_layer_norm_backward(&gt, &xt, 2, &wt, EPS, &f[0], &f[1], &f[2]));
    int64_t cnt[3] = {n, B * C, B * C};
    for (int k = 0; k < 3; k++) {
        double *a = read_all(&e[k]), *b = read_all(&f[k]);
        int bad;
        double err = rows_nmse(a, b, NULL, cnt[k], dt, &bad);
        CHECK_MSG(!bad && err <= rows_nmse_limit(dt), "%s (%lld, %lld, %lld) output %d: from "
                  "the saved statistics vs recomputed NMSE %.3g", hg_dtype_name(dt),
                  (long long)A, (long long)B, (long long)C, k, err);
        free(a);
        free(b);
        hg_buffer_destroy(e[k].buffer);
        hg_buffer_destroy(f[k].buffer);
    }
    hg_buffer_destroy(out.buffer);
    hg_buffer_destroy(m.buffer);
    hg_buffer_destroy(r.buffer);
    operand_free(&x);
    operand_free(&g);
    operand_free(&w);
}

// Bad arguments: the error named, the caller's outputs untouched (no buffer allocated).
static void run_errors(void) {
    operand x = make_operand(HG_DTYPE_F32, 3, 4, LAY_ROWS, 0, -1, 1);
    operand g = make_operand(HG_DTYPE_F32, 3, 4, LAY_ROWS, 0, -1, 1);
    operand s3 = make_operand(HG_DTYPE_F32, 3, 1, LAY_ROWS, 0, .5, 1);
    operand s4 = make_operand(HG_DTYPE_F32, 4, 1, LAY_ROWS, 0, .5, 1);
    hg_buffer ib;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_I32, 3, &ib));
    hg_tensor it, flat;
    int64_t sh[2] = {3, 1}, three = 3;
    CHECK_OK(hg_tensor_from_buffer(ib, 2, sh, &it));
    CHECK_OK(hg_tensor_view(s3.buf, 1, &three, NULL, 0, &flat));
    hg_tensor o = {0}, m = {0}, r = {0};
    CHECK(hg_layer_norm_stats(&x.t, 1, NULL, NULL, -1.0, &o, &m, &r) == HG_ERR_INVALID_ARGUMENT);
    CHECK(hg_layer_norm_stats(&x.t, 3, NULL, NULL, EPS, &o, &m, &r) == HG_ERR_INVALID_ARGUMENT);
    CHECK(hg_layer_norm_stats(&x.t, 1, NULL, NULL, EPS, NULL, &m, &r) == HG_ERR_NULL_POINTER);
    CHECK(o.buffer.handle == 0 && m.buffer.handle == 0 && r.buffer.handle == 0);
    // a given statistic of the wrong shape: refused, nothing allocated
    hg_tensor bad_m;
    CHECK_OK(hg_tensor_view(s3.buf, 2, (int64_t[2]){1, 3}, NULL, 0, &bad_m));
    CHECK(hg_layer_norm_stats(&x.t, 1, NULL, NULL, EPS, &o, &bad_m, &r) == HG_ERR_SIZE_MISMATCH);
    CHECK(o.buffer.handle == 0 && r.buffer.handle == 0);
    CHECK(hg_layer_norm_backward_stats(&g.t, &x.t, 1, NULL, &s3.t, NULL, &o, NULL, NULL) ==
          HG_ERR_NULL_POINTER);
    CHECK(strstr(hg_last_error(), "'mean'"));
    CHECK(hg_layer_norm_backward_stats(&g.t, &x.t, 1, &s4.t, &s3.t, NULL, &o, NULL, NULL) ==
          HG_ERR_SIZE_MISMATCH);
    CHECK(strstr(hg_last_error(), "mean"));
    CHECK(hg_layer_norm_backward_stats(&g.t, &x.t, 1, &s3.t, &flat, NULL, &o, NULL, NULL) ==
          HG_ERR_SIZE_MISMATCH);
    CHECK(hg_layer_norm_backward_stats(&g.t, &x.t, 1, &s3.t, &it, NULL, &o, NULL, NULL) ==
          HG_ERR_DTYPE_MISMATCH);
    CHECK(hg_layer_norm_backward_stats(&g.t, &x.t, 1, &s3.t, &s3.t, NULL, NULL, NULL, NULL) ==
          HG_ERR_NULL_POINTER);
    CHECK(hg_layer_norm_backward_stats(&g.t, &x.t, 0, &s3.t, &s3.t, NULL, &o, NULL, NULL) ==
          HG_ERR_INVALID_ARGUMENT);
    CHECK(o.buffer.handle == 0);
    // outputs that overlap each other: refused
    CHECK(hg_layer_norm_stats(&x.t, 1, NULL, NULL, EPS, &o, &s3.t, &s3.t) ==
          HG_ERR_INVALID_ARGUMENT);
    CHECK(o.buffer.handle == 0);
    hg_buffer_destroy(ib);
    operand_free(&x);
    operand_free(&g);
    operand_free(&s3);
    operand_free(&s4);
}

// Rows of no element (x of (3, 0)): torch's statistics, mean 0 and rstd NaN.
static void run_empty_rows(hg_dtype dt) {
    hg_buffer xb = rows_make_buf(g_ex, dt, 1, NULL);
    hg_tensor x, out = {0}, m = {0}, r = {0};
    CHECK_OK(hg_tensor_view(xb, 2, (int64_t[2]){3, 0}, NULL, 0, &x));
    CHECK_OK(hg_layer_norm_stats(&x, 1, NULL, NULL, EPS, &out, &m, &r));
    CHECK(m.shape[0] == 3 && m.shape[1] == 1 && r.shape[0] == 3 && r.shape[1] == 1);
    double *mv = read_all(&m), *rv = read_all(&r);
    for (int i = 0; i < 3; i++) CHECK_MSG(mv[i] == 0 && isnan(rv[i]), "%s row %d: mean %g rstd "
                                          "%g", hg_dtype_name(dt), i, mv[i], rv[i]);
    free(mv);
    free(rv);
    hg_buffer_destroy(m.buffer);
    hg_buffer_destroy(r.buffer);
    if (out.buffer.handle) hg_buffer_destroy(out.buffer);
    hg_buffer_destroy(xb);
}

static void run(int on_device) {
    g_device = on_device;
    static const int64_t shapes[][2] = {{1, 16}, {3, 7}, {17, 1}, {2, 1}, {19, 24}, {4, 1000},
                                        {0, 8}};
    static const hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int lay = 0; lay < LAY_COUNT; lay++) {
                if (on_device && lay != LAY_ROWS && s % 2) continue;   // the emulation is slow
                int params = (int)(s + (size_t)lay) % 2;
                run_forward(dts[d], shapes[s][0], shapes[s][1], lay, params, 0);
                run_backward(dts[d], shapes[s][0], shapes[s][1], lay, !params, (int)s % 2);
            }
    // rows far from 0 (the mean keeps x - mean exact to f32), statistics of any value
    run_forward(HG_DTYPE_F32, 9, 64, LAY_ROWS, 1, 1e4);
    run_forward(HG_DTYPE_F64, 5, 33, LAY_ROWS, 1, -1e3);
    run_backward(HG_DTYPE_F32, 9, 64, LAY_ROWS, 1, 1);
    run_consistency(HG_DTYPE_F32, 16, 4, 256);    // 16 rows of 1024: several workers
    run_consistency(HG_DTYPE_F64, 3, 2, 5);
    if (!on_device) run_consistency(HG_DTYPE_F32, 64, 8, 128);
    run_empty_rows(HG_DTYPE_F32);
    run_empty_rows(HG_DTYPE_BF16);
    run_errors();
}

int main(void) { return hg_test_run_executors("test_composite_norm_stats", &g_ex, run); }
