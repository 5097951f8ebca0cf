// softmax, log_softmax, layer_norm and rms_norm over the row lengths where the device kernels
// change shape (src/ops/rows/dev_rows_reg.c: a warp per row holding 1..32 elements per lane up
// to 1024, a block of 256/512/1024 lanes above, the generic kernel beyond 32768), odd row
// counts, rows at a stride (a slice of wider rows), every float dtype, out in another dtype,
// and rows with NaN, +-inf and -0, against a double-precision reference: NMSE per dtype, NaN
// exactly where the reference has one, infinities of the same sign. Runs on HG_TEST_BACKEND
// (the CUDA emulation in tests/cuda_emu.cmake), else on CPU executors.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "test_ops_rows_util.h"

static hg_executor g_ex;
static int g_on_device;
static uint64_t g_rng = 0x12035ull;

enum { OP_SOFTMAX, OP_LOG_SOFTMAX, OP_LAYER_NORM, OP_RMS_NORM, OP_COUNT };
static const char* const k_op_names[OP_COUNT] = {"softmax", "log_softmax", "layer_norm",
                                                 "rms_norm"};
#define EPS 1e-5

static double urand(double lo, double hi) {
    return lo + (hi - lo) * (double)(hg_test_rand(&g_rng) >> 11) * 0x1p-53;
}

// The reference row (x: R values) into y.
static void ref_row(int op, const double* x, int64_t R, const double* w, const double* bias,
                    double* y) {
    if (op == OP_SOFTMAX || op == OP_LOG_SOFTMAX) {
        double m = -INFINITY, z = 0;
        for (int64_t j = 0; j < R; j++) m = x[j] > m || isnan(x[j]) ? x[j] : m;
        for (int64_t j = 0; j < R; j++) z += isinf(m) ? NAN : exp(x[j] - m);
        for (int64_t j = 0; j < R; j++)
            y[j] = op == OP_LOG_SOFTMAX ? x[j] - m - log(z) : exp(x[j] - m) / z;
        return;
    }
    double mean = 0, v = 0;
    if (op == OP_LAYER_NORM) {
        for (int64_t j = 0; j < R; j++) mean += x[j];
        mean /= (double)R;
    }
    for (int64_t j = 0; j < R; j++) v += (x[j] - mean) * (x[j] - mean);
    double rstd = 1.0 / sqrt(v / (double)R + EPS);
    for (int64_t j = 0; j < R; j++) y[j] = (x[j] - mean) * rstd * w[j] + (bias ? bias[j] : 0.0);
}

// One case: M rows of R elements (row stride rs >= R), xdt in, odt out; specials: put NaN,
// +-inf and -0 into some rows.
static void run_case(int op, hg_dtype xdt, hg_dtype odt, int64_t M, int64_t R, int64_t rs,
                     int specials, double shift) {
    int64_t nx = M * rs;
    double* xv = malloc((size_t)(nx ? nx : 1) * sizeof *xv);
    for (int64_t i = 0; i < nx; i++) xv[i] = rows_round_to(xdt, shift + urand(-4, 4));
    if (specials) {
        static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0};
        for (int64_t r = 0; r < M; r++) {
            int kind = (int)(r % 6);   // rows 4, 5: no specials
            if (kind < 4) xv[r * rs + (r * 7) % R] = sp[kind];
            if (kind == 2 && R > 1) xv[r * rs + (r * 7 + 1) % R] = -INFINITY;
        }
    }
    double* wv = malloc((size_t)R * sizeof *wv);
    double* bv = malloc((size_t)R * sizeof *bv);
    for (int64_t j = 0; j < R; j++) {
        wv[j] = rows_round_to(xdt, urand(0.5, 2));
        bv[j] = rows_round_to(xdt, urand(-1, 1));
    }
    hg_buffer bx = rows_make_buf(g_ex, xdt, nx ? nx : 1, xv);
    hg_buffer bo = rows_make_buf(g_ex, odt, M * R > 0 ? M * R : 1, NULL);
    hg_buffer bw = rows_make_buf(g_ex, xdt, R, wv), bb = rows_make_buf(g_ex, xdt, R, bv);
    hg_tensor x, o, w, b;
    int64_t shape[2] = {M, R}, strides[2] = {rs, 1};
    CHECK_OK(hg_tensor_view(bx, 2, shape, strides, 0, &x));
    CHECK_OK(hg_tensor_view(bo, 2, shape, NULL, 0, &o));
    CHECK_OK(hg_tensor_from_buffer(bw, 1, &R, &w));
    CHECK_OK(hg_tensor_from_buffer(bb, 1, &R, &b));
    hg_status s;
    switch (op) {
    case OP_SOFTMAX: s = hg_softmax(&x, -1, &o); break;
    case OP_LOG_SOFTMAX: s = hg_log_softmax(&x, -1, &o); break;
    case OP_LAYER_NORM: s = hg_layer_norm(&x, 1, &w, &b, EPS, &o); break;
    default: s = hg_rms_norm(&x, 1, &w, EPS, &o); break;
    }
    char what[160];
    snprintf(what, sizeof what, "%s %s->%s %lldx%lld (row stride %lld%s, shift %g)",
             k_op_names[op], hg_dtype_name(xdt), hg_dtype_name(odt), (long long)M, (long long)R,
             (long long)rs, specials ? ", specials" : "", shift);
    CHECK_MSG(s == HG_OK, "%s: %s", what, hg_last_error());
    if (s == HG_OK) {
        size_t es = hg_dtype_size(odt), n = (size_t)(M * R);
        unsigned char* h = malloc(n * es + 1);
        CHECK_OK(hg_buffer_read(bo, 0, h, n));
        double* y = malloc((size_t)R * sizeof *y);
        double num = 0, den = 0;
        int64_t bad = 0;
        for (int64_t r = 0; r < M; r++) {
            ref_row(op, xv + r * rs, R, wv, op == OP_LAYER_NORM ? bv : NULL, y);
            for (int64_t j = 0; j < R; j++) {
                double want = rows_round_to(xdt, y[j]);
                double got = rows_get(h + (size_t)(r * R + j) * es, odt);
                if (isnan(want) || isinf(want) || isnan(got) || isinf(got)) {
                    int ok = isnan(want) ? isnan(got) : got == want;
                    if (!ok && bad++ < 3)
                        fprintf(stderr, "  %s: [%lld, %lld] got %g want %g\n", what, (long long)r,
                                (long long)j, got, want);
                    continue;
                }
                num += (got - want) * (got - want);
                den += want * want;
            }
        }
        double nmse = den > 0 ? num / den : num;
        CHECK_MSG(bad == 0 && nmse <= rows_nmse_limit(odt == HG_DTYPE_F64 ? xdt : odt),
                  "%s: %lld special-value mismatches, NMSE %.3g (limit %.3g)", what,
                  (long long)bad, nmse, rows_nmse_limit(odt == HG_DTYPE_F64 ? xdt : odt));
        free(y);
        free(h);
    }
    hg_buffer_destroy(bx);
    hg_buffer_destroy(bo);
    hg_buffer_destroy(bw);
    hg_buffer_destroy(bb);
    free(xv);
    free(wv);
    free(bv);
}

static void run(int on_device) {
    g_on_device = on_device;
    // Row lengths at every kernel shape's edges: warp per row with 1, 2, 4, 8, 16, 32 elements
    // per lane, blocks of 256 (1025..2048), 512 (..4096) and 1024 lanes (..32768), then the
    // generic kernel.
    static const int64_t rows[][2] = {
        {3, 1}, {5, 2}, {7, 3}, {33, 31}, {9, 32}, {9, 33}, {17, 64}, {5, 100}, {3, 255},
        {3, 513}, {3, 1023}, {3, 1024}, {3, 1025}, {2, 2048}, {3, 4096}, {2, 4097},
        {1, 32768}, {1, 32769}};
    const size_t nr = sizeof rows / sizeof rows[0];
    for (int op = 0; op < OP_COUNT; op++) {
        for (size_t k = 0; k < nr; k++) {
            int64_t M = rows[k][0], R = rows[k][1];
            run_case(op, HG_DTYPE_F32, HG_DTYPE_F32, M, R, R, 0, 0.0);
        }
        // Rows at a stride, many rows (several launches' worth of blocks is too slow here;
        // 1000 rows span 125 blocks of 8), a large common offset for the norms.
        run_case(op, HG_DTYPE_F32, HG_DTYPE_F32, 1000, 20, 27, 0, 0.0);
        run_case(op, HG_DTYPE_F32, HG_DTYPE_F32, 5, 1500, 1501, 0, 0.0);
        run_case(op, HG_DTYPE_F32, HG_DTYPE_F32, 11, 300, 300, 0, op >= OP_LAYER_NORM ? 1e4 : 50);
        run_case(op, HG_DTYPE_F32, HG_DTYPE_F32, 11, 2000, 2000, 0, op >= OP_LAYER_NORM ? 1e4 : 50);
        // Other dtypes (f16 -> f32 out too), and special values.
        static const hg_dtype dts[] = {HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
        for (size_t d = 0; d < 3; d++) {
            run_case(op, dts[d], dts[d], 7, 33, 33, 0, 0.0);
            run_case(op, dts[d], dts[d], 3, 1025, 1025, 0, 0.0);
        }
        run_case(op, HG_DTYPE_F16, HG_DTYPE_F32, 7, 100, 100, 0, 0.0);
        run_case(op, HG_DTYPE_F32, HG_DTYPE_F32, 12, 33, 33, 1, 0.0);
        run_case(op, HG_DTYPE_F32, HG_DTYPE_F32, 6, 1030, 1030, 1, 0.0);
    }
    printf("  rows: %s done\n", on_device ? "device" : "cpu");
}

int main(void) { return hg_test_run_executors("test_ops_rows_shapes", &g_ex, run); }
