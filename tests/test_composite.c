// The composite layer (src/composite, docs/architecture.md "Composite ops"): every override of
// the table is run against the op's decomposition (HOLOGRAM_COMPOSITE=decomp through
// hg_cop_mode_set) and both against a float64 reference, for every dtype the override takes,
// on rows the override takes and on layouts it does not (where both modes run the
// decomposition); the cache counters say which path ran (an override compiles nothing), that
// a repeated call is a cache hit, and that strided and overlapping views run as they are.
// Runs on HG_TEST_BACKEND (the CUDA emulation in tests/cuda_emu.cmake), else on CPU executors.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/shape.h"
#include "composite/composite.h"
#include "hg_test.h"
#include "test_ops_rows_util.h"

static hg_executor g_ex;
static int g_device;
static uint64_t g_rng = 0xc0de33ull;
#define EPS 1e-5

static const char* const k_lay[LAY_COUNT] = {"rows", "strided", "transposed"};

typedef rows_operand operand;

static operand make_operand(hg_dtype dt, int64_t M, int64_t R, int lay, double lo, double hi) {
    return rows_make_operand(g_ex, &g_rng, dt, M, R, lay, lo, hi);
}

static void operand_free(operand* o) { rows_operand_free(o); }

// A C-contiguous output tensor of dt and shape, NaN-filled.
static hg_tensor make_out(hg_dtype dt, int32_t nd, const int64_t* shape) {
    int64_t n = 1;
    for (int32_t d = 0; d < nd; d++) n *= shape[d];
    hg_tensor t;
    CHECK_OK(hg_tensor_from_buffer(rows_make_buf(g_ex, dt, n, NULL), nd, shape, &t));
    return t;
}

static double* read_out(const hg_tensor* t, int64_t n) {
    size_t es = hg_dtype_size(t->dtype);
    unsigned char* h = malloc((size_t)(n ? n : 1) * es);
    double* v = malloc((size_t)(n ? n : 1) * sizeof *v);
    CHECK_OK(hg_buffer_read(t->buffer, 0, h, (size_t)n));
    for (int64_t i = 0; i < n; i++) v[i] = rows_get(h + (size_t)i * es, t->dtype);
    free(h);
    return v;
}

// The float64 references on rows of R: y = softmax / log_softmax (x), the backward ops of
// grad g (y is x: the forward's output), and the norms' gradients with weight w.
static void reference(hg_cop op, const double* x, const double* g, const double* w, int64_t M,
                      int64_t R, double* out, double* gw, double* gb, double* mag) {
    for (int64_t j = 0; gw && j < R; j++) gw[j] = gb[j] = 0;
    for (int64_t r = 0; r < M; r++) {
        const double* xr = x + r * R;
        const double* gr = g ? g + r * R : NULL;
        double* o = out + r * R;
        if (op == HG_COP_SOFTMAX || op == HG_COP_LOG_SOFTMAX) {
            double m = -INFINITY, z = 0;
            for (int64_t j = 0; j < R; j++) m = xr[j] > m ? xr[j] : m;
            for (int64_t j = 0; j < R; j++) z += exp(xr[j] - m);
            for (int64_t j = 0; j < R; j++)
                o[j] = op == HG_COP_SOFTMAX ? exp(xr[j] - m) / z : (xr[j] - m) - log(z);
        } else if (op == HG_COP_SOFTMAX_BW || op == HG_COP_LOG_SOFTMAX_BW) {
            rows_ref_softmax_bw(xr, gr, R, op == HG_COP_LOG_SOFTMAX_BW, o);
        } else if (op == HG_COP_LAYER_NORM || op == HG_COP_RMS_NORM) {
            double m = 0, v = 0;
            for (int64_t j = 0; j < R && op == HG_COP_LAYER_NORM; j++) m += xr[j] / (double)R;
            for (int64_t j = 0; j < R; j++) v += (xr[j] - m) * (xr[j] - m) / (double)R;
            double rstd = 1 / sqrt(v + EPS);
            // bias: the weight reversed
            for (int64_t j = 0; j < R; j++)
                o[j] = (xr[j] - m) * rstd * w[j] + (op == HG_COP_LAYER_NORM ? w[R - 1 - j] : 0);
        } else {
            rows_ref_norm_bw(xr, gr, w, R, op == HG_COP_RMS_NORM_BW, EPS, o, mag + r * R, gw, gb);
        }
    }
}

// One call of op in the current mode into outs (outs[1], outs[2]: the norms' column sums).
static hg_status call_op(hg_cop op, const hg_tensor* x, const hg_tensor* g, const hg_tensor* w,
                         const hg_tensor* bias, hg_tensor* outs) {
    switch (op) {
    case HG_COP_LAYER_NORM: return hg_layer_norm(x, 1, w, bias, EPS, &outs[0]);
    case HG_COP_RMS_NORM: return hg_rms_norm(x, 1, w, EPS, &outs[0]);
    case HG_COP_SOFTMAX: return hg_softmax(x, -1, &outs[0]);
    case HG_COP_LOG_SOFTMAX: return hg_log_softmax(x, -1, &outs[0]);
    case HG_COP_SOFTMAX_BW: return hg_softmax_backward(g, x, -1, &outs[0]);
    case HG_COP_LOG_SOFTMAX_BW: return hg_log_softmax_backward(g, x, -1, &outs[0]);
    case HG_COP_LAYER_NORM_BW:
        return hg_layer_norm_backward(g, x, 1, w, EPS, &outs[0], &outs[1], &outs[2]);
    default: return hg_rms_norm_backward(g, x, 1, w, EPS, &outs[0], &outs[1]);
    }
}

// Whether the table has an override of op for x on this executor (what the rows kernels take
// today: softmax every layout; the backward ops C-contiguous f32/f64 rows on hosts, on devices
// rows of unit stride at a constant row stride; the device norm gradients also compile the
// column sums' decomposition).
static int expect_override(hg_cop op, const hg_tensor* x, int lay) {
    if (op == HG_COP_SOFTMAX || op == HG_COP_LOG_SOFTMAX || op == HG_COP_LAYER_NORM ||
        op == HG_COP_RMS_NORM)
        return 1;
    int64_t M = x->shape[0], R = x->shape[1];
    if (g_device) return lay == LAY_ROWS || R == 1 || (lay == LAY_TRANSPOSED && M == 1);
    int contig = 0;
    CHECK_OK(hg_tensor_is_contiguous(x, &contig));
    return contig && (x->dtype == HG_DTYPE_F32 || x->dtype == HG_DTYPE_F64);
}

static void run_case(hg_cop op, hg_dtype dt, int64_t M, int64_t R, int lay) {
    int norm = op == HG_COP_LAYER_NORM_BW || op == HG_COP_RMS_NORM_BW;
    int fwd = op == HG_COP_SOFTMAX || op == HG_COP_LOG_SOFTMAX || op == HG_COP_LAYER_NORM ||
              op == HG_COP_RMS_NORM;
    int params = norm || op == HG_COP_LAYER_NORM || op == HG_COP_RMS_NORM;
    int nout = op == HG_COP_LAYER_NORM_BW ? 3 : op == HG_COP_RMS_NORM_BW ? 2 : 1;
    double lo = fwd ? -8 : op == HG_COP_SOFTMAX_BW ? 0 : op == HG_COP_LOG_SOFTMAX_BW ? -6 : -3;
    double hi = op == HG_COP_SOFTMAX_BW ? 1.0 / (double)R : op == HG_COP_LOG_SOFTMAX_BW ? 0 : 3;
    operand x = make_operand(dt, M, R, lay, lo, hi), gr = make_operand(dt, M, R, lay, -1, 1);
    operand w = make_operand(dt, 1, R, LAY_ROWS, 0.5, 1.5);
    hg_tensor wt, bt;   // the weight, and the bias: the weight reversed
    CHECK_OK(hg_tensor_reshape(&w.t, 1, &R, &wt));
    CHECK_OK(hg_tensor_slice(&wt, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &bt));
    int64_t n = M * R, shape[2] = {M, R};
    double* want = malloc((size_t)n * sizeof *want);
    double* gw = malloc((size_t)R * sizeof *gw);
    double* gb = malloc((size_t)R * sizeof *gb);
    double* mag = malloc((size_t)n * sizeof *mag);
    reference(op, x.v, gr.v, w.v, M, R, want, gw, gb, mag);
    const double* mags[3] = {norm ? mag : NULL, NULL, NULL};
    const double* wants[3] = {want, gw, gb};
    int64_t counts[3] = {n, R, R};
    double* got[2][3] = {{NULL}};
    char what[160];
    snprintf(what, sizeof what, "%s %s (%lld, %lld) %s", hg_cop_table[op].name, hg_dtype_name(dt),
             (long long)M, (long long)R, k_lay[lay]);
    for (int mode = 0; mode < 2; mode++) {
        hg_cop_mode_set(mode ? HG_COP_DECOMP : HG_COP_AUTO);
        hg_tensor outs[3];
        outs[0] = make_out(dt, 2, shape);
        for (int o = 1; o < nout; o++) outs[o] = make_out(dt, 1, &R);
        int64_t p0, h0, c0, p1, h1, c1;
        hg_cop_cache_stats(g_ex, &p0, &h0, &c0);
        hg_status s = call_op(op, &x.t, &gr.t, params ? &wt : NULL, &bt, outs);
        CHECK_MSG(s == HG_OK, "%s mode %d: %s", what, mode, hg_last_error());
        hg_cop_cache_stats(g_ex, &p1, &h1, &c1);
        int ran_decomp = h1 + c1 > h0 + c0;
        int want_decomp = mode == 1 || !expect_override(op, &x.t, lay) || (g_device && norm);
        CHECK_MSG(ran_decomp == want_decomp, "%s mode %d: the decomposition %s", what, mode,
                  ran_decomp ? "ran (an override should have)" : "did not run");
        if (ran_decomp) {   // the same call again: a cache hit, nothing compiled
            CHECK_OK(call_op(op, &x.t, &gr.t, params ? &wt : NULL, &bt, outs));
            int64_t p2, h2, c2;
            hg_cop_cache_stats(g_ex, &p2, &h2, &c2);
            CHECK_MSG(h2 > h1 && c2 == c1, "%s: the repeated call compiled again", what);
        }
        for (int o = 0; o < nout; o++) {
            got[mode][o] = read_out(&outs[o], counts[o]);
            int bad;
            double e = rows_nmse(got[mode][o], wants[o], mags[o], counts[o], dt, &bad);
            CHECK_MSG(!bad && e <= rows_nmse_limit(dt), "%s mode %d output %d: NMSE %.3g "
                      "(limit %.3g), %d special-value mismatches", what, mode, o, e,
                      rows_nmse_limit(dt), bad);
            hg_buffer_destroy(outs[o].buffer);
        }
    }
    // the override against the decomposition: apart by no more than each is from float64
    for (int o = 0; o < nout; o++) {
        int bad;
        double e = rows_nmse(got[0][o], got[1][o], mags[o], counts[o], dt, &bad);
        CHECK_MSG(!bad && e <= rows_nmse_limit(dt), "%s output %d: override vs decomposition "
                  "NMSE %.3g", what, o, e);
        free(got[0][o]);
        free(got[1][o]);
    }
    hg_cop_mode_set(HG_COP_AUTO);
    operand_free(&x);
    operand_free(&gr);
    operand_free(&w);
    free(want);
    free(mag);
    free(gw);
    free(gb);
}

// Every override of the table on this executor's route, for each dtype it takes (the
// cross-entropy gradient's in run_ce).
static void run_parity(void) {
    static const int64_t shapes[][2] = {{1, 16}, {3, 7}, {5, 64}, {2, 1}, {4, 1000}, {1, 4096}};
    static const hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    hg_op_route route = g_device ? HG_ROUTE_DEVICE : HG_ROUTE_HOST;
    int seen = 0;
    for (int i = 0; i < HG_COP_COUNT; i++) {
        const hg_cop_override* ov = &hg_cop_overrides[i][route];
        // run_ce, run_losses: targets, reductions; Adam: test_composite_optim.c
        if (!ov->run || i >= HG_COP_CE_BW) continue;
        seen++;
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            if (!(ov->dtypes >> dts[d] & 1u)) continue;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int lay = 0; lay < LAY_COUNT; lay++)
                    if (!g_device || s % 2 == 0 || lay == LAY_ROWS)   // the emulation is slow
                        run_case(ov->op, dts[d], shapes[s][0], shapes[s][1], lay);
        }
    }
    CHECK(seen > 0);
}

// cross_entropy_backward of (M, C) logits in layout lay: class indices (some ignored, some
// counted from the end) or probabilities, each reduction, in both modes, against float64; on a
// device, class indices over contiguous rows take the register row kernel (the override).
static void run_ce_case(hg_dtype dt, int64_t M, int64_t C, int lay, int probs, hg_reduction red) {
    operand x = make_operand(dt, M, C, lay, -4, 4), tp = make_operand(dt, M, C, LAY_ROWS, 0, 1);
    operand gr = make_operand(dt, 1, M, LAY_ROWS, 0.5, 2);
    int64_t shape[2] = {M, C}, cnt = 0;
    double* tv = malloc((size_t)M * sizeof *tv);
    for (int64_t r = 0; r < M; r++) {
        tv[r] = r % 5 == 3 ? -100 : (double)((int64_t)(r * 7) % (2 * C) - C);   // in [-C, C)
        cnt += tv[r] != -100;
    }
    hg_tensor ti, g;
    CHECK_OK(hg_tensor_from_buffer(rows_make_buf(g_ex, HG_DTYPE_I64, M, tv), 1, &M, &ti));
    if (red == HG_REDUCTION_NONE) CHECK_OK(hg_tensor_reshape(&gr.t, 1, &M, &g));
    else CHECK_OK(hg_tensor_view(gr.buf, 0, NULL, NULL, 0, &g));
    double* want = malloc((size_t)(M * C) * sizeof *want);
    for (int64_t r = 0; r < M; r++) {
        const double* xr = x.v + r * C;
        double m = -INFINITY, z = 0, ts = 0;
        for (int64_t j = 0; j < C; j++) m = xr[j] > m ? xr[j] : m;
        for (int64_t j = 0; j < C; j++) z += exp(xr[j] - m), ts += tp.v[r * C + j];
        double sc = red == HG_REDUCTION_NONE ? gr.v[r] : gr.v[0];
        if (red == HG_REDUCTION_MEAN) sc /= probs ? (double)M : (double)(cnt ? cnt : 1);
        int64_t t = (int64_t)tv[r] < 0 ? (int64_t)tv[r] + C : (int64_t)tv[r];
        if (!probs && tv[r] == -100) sc = 0;
        for (int64_t j = 0; j < C; j++) {
            double p = exp(xr[j] - m) / z;
            want[r * C + j] = (probs ? p * ts - tp.v[r * C + j] : p - (j == t)) * sc;
        }
    }
    char what[160];
    snprintf(what, sizeof what, "cross_entropy_backward %s (%lld, %lld) %s %s red %d",
             hg_dtype_name(dt), (long long)M, (long long)C, k_lay[lay],
             probs ? "probabilities" : "indices", (int)red);
    // On a host, f32/f64 logits take the fused row override (any logits layout: out and the
    // probabilities are C-contiguous), which equals the decomposition bit for bit.
    int host_over = !g_device && (dt == HG_DTYPE_F32 || dt == HG_DTYPE_F64);
    int over = host_over ||
               (g_device && !probs && (lay == LAY_ROWS || (lay == LAY_TRANSPOSED && M == 1)));
    double* got[2];
    for (int mode = 0; mode < 2; mode++) {
        hg_cop_mode_set(mode ? HG_COP_DECOMP : HG_COP_AUTO);
        hg_tensor out = make_out(dt, 2, shape);
        int64_t p0, h0, c0, p1, h1, c1;
        hg_cop_cache_stats(g_ex, &p0, &h0, &c0);
        hg_status s = hg_cross_entropy_backward(&g, &x.t, probs ? &tp.t : &ti, -100, red, &out);
        CHECK_MSG(s == HG_OK, "%s mode %d: %s", what, mode, hg_last_error());
        hg_cop_cache_stats(g_ex, &p1, &h1, &c1);
        int ran_decomp = h1 + c1 > h0 + c0;
        CHECK_MSG(ran_decomp == (mode == 1 || !over), "%s mode %d: the decomposition %s", what,
                  mode, ran_decomp ? "ran (the override should have)" : "did not run");
        got[mode] = read_out(&out, M * C);
        int bad;
        double e = rows_nmse(got[mode], want, NULL, M * C, dt, &bad);
        CHECK_MSG(!bad && e <= rows_nmse_limit(dt), "%s mode %d: NMSE %.3g (limit %.3g), %d "
                  "special-value mismatches", what, mode, e, rows_nmse_limit(dt), bad);
        hg_buffer_destroy(out.buffer);
    }
    int bad;
    double e = rows_nmse(got[0], got[1], NULL, M * C, dt, &bad);
    CHECK_MSG(!bad && e <= rows_nmse_limit(dt), "%s: override vs decomposition NMSE %.3g", what, e);
    if (host_over)
        CHECK_MSG(!memcmp(got[0], got[1], (size_t)(M * C) * sizeof(double)),
                  "%s: the host override differs from the decomposition", what);
    hg_cop_mode_set(HG_COP_AUTO);
    free(got[0]);
    free(got[1]);
    free(want);
    free(tv);
    hg_buffer_destroy(ti.buffer);
    operand_free(&x);
    operand_free(&tp);
    operand_free(&gr);
}

static void run_ce(void) {
    // (40, 1000): over 32K elements, the host override splits its rows over the threads
    static const int64_t shapes[][2] = {{1, 16}, {7, 5}, {12, 1000}, {40, 1000}};
    static const hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int lay = 0; lay < LAY_COUNT; lay++)
                for (int probs = 0; probs < 2; probs++)
                    for (int red = 0; red < 3; red++)
                        if (!g_device || (lay == LAY_ROWS && d < 2) || (red == 2 && s == 1))
                            run_ce_case(dts[d], shapes[s][0], shapes[s][1], lay, probs,
                                        (hg_reduction)red);
    // A class index out of [-C, C): refused before anything is allocated.
    int64_t M = 2, C = 3;
    operand x = make_operand(HG_DTYPE_F32, M, C, LAY_ROWS, -1, 1);
    double tv[2] = {1, 3}, one = 1;
    hg_tensor ti, g, out = {0};
    CHECK_OK(hg_tensor_from_buffer(rows_make_buf(g_ex, HG_DTYPE_I64, M, tv), 1, &M, &ti));
    CHECK_OK(hg_tensor_from_buffer(rows_make_buf(g_ex, HG_DTYPE_F32, 1, &one), 0, NULL, &g));
    CHECK_STATUS(hg_cross_entropy_backward(&g, &x.t, &ti, -100, HG_REDUCTION_MEAN, &out),
                 HG_ERR_OUT_OF_RANGE);
    CHECK(strstr(hg_last_error(), "target class index 3 (sample 1") != NULL);
    CHECK(out.buffer.handle == 0);
    hg_buffer_destroy(ti.buffer);
    hg_buffer_destroy(g.buffer);
    operand_free(&x);
}

// One loss call (op on x, t, w, pw, or cross_entropy on x and target t) in both modes, each
// against want (n values, float64) and against each other; an override runs unless forced.
static void loss_modes(hg_cop op, const char* what, hg_dtype dt, const hg_tensor* const* in,
                       hg_reduction red, int32_t nd, const int64_t* shape, const double* want) {
    int64_t n = red == HG_REDUCTION_NONE ? hg_shape_numel(nd, shape) : 1;
    double* got[2];
    for (int mode = 0; mode < 2; mode++) {
        hg_cop_mode_set(mode ? HG_COP_DECOMP : HG_COP_AUTO);
        hg_tensor out = red == HG_REDUCTION_NONE ? make_out(dt, nd, shape) : make_out(dt, 0, NULL);
        int64_t p0, h0, c0, p1, h1, c1;
        hg_cop_cache_stats(g_ex, &p0, &h0, &c0);
        hg_status s = op == HG_COP_MSE ? hg_mse_loss(in[0], in[1], red, &out)
                      : op == HG_COP_BCE ? hg_binary_cross_entropy(in[0], in[1], in[2], red, &out)
                      : op == HG_COP_BCE_LOGITS
                          ? hg_binary_cross_entropy_with_logits(in[0], in[1], in[2], in[3], red,
                                                                &out)
                          : hg_cross_entropy(in[0], in[1], -100, red, &out);
        CHECK_MSG(s == HG_OK, "%s mode %d: %s", what, mode, hg_last_error());
        hg_cop_cache_stats(g_ex, &p1, &h1, &c1);
        CHECK_MSG((h1 + c1 > h0 + c0) == mode, "%s mode %d: the %s ran", what, mode,
                  mode ? "override" : "decomposition");
        got[mode] = read_out(&out, n);
        int bad;
        double e = rows_nmse(got[mode], want, NULL, n, dt, &bad);
        CHECK_MSG(!bad && e <= rows_nmse_limit(dt), "%s mode %d: NMSE %.3g (limit %.3g), %d "
                  "special-value mismatches", what, mode, e, rows_nmse_limit(dt), bad);
        hg_buffer_destroy(out.buffer);
    }
    int bad;
    double e = rows_nmse(got[0], got[1], NULL, n, dt, &bad);
    CHECK_MSG(!bad && e <= rows_nmse_limit(dt), "%s: override vs decomposition NMSE %.3g", what, e);
    hg_cop_mode_set(HG_COP_AUTO);
    free(got[0]);
    free(got[1]);
}

// want reduced as the loss: the sum, or the mean over count.
static void reduce_want(double* want, int64_t n, hg_reduction red, double count) {
    if (red == HG_REDUCTION_NONE) return;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += want[i];
    want[0] = red == HG_REDUCTION_MEAN ? s / count : s;
}

// The elementwise losses on (M, R) x in layout lay: target (M, R), weight and pos_weight (R)
// broadcast over the rows; probabilities with exact 0 and 1 (the -100 clamp), logits to +-40.
static void run_ew_loss_case(hg_cop op, hg_dtype dt, int64_t M, int64_t R, int lay,
                             hg_reduction red) {
    double lo = op == HG_COP_MSE ? -3 : op == HG_COP_BCE ? 0 : -40;
    double hi = op == HG_COP_MSE ? 3 : op == HG_COP_BCE ? 1 : 40;
    operand x = make_operand(dt, M, R, lay, lo, hi), t = make_operand(dt, M, R, LAY_ROWS, 0, 1);
    operand w = make_operand(dt, 1, R, LAY_ROWS, 0.5, 2);
    operand pw = make_operand(dt, 1, R, LAY_ROWS, 0.5, 3);
    if (op == HG_COP_BCE && M * R > 2) {   // log 0: clamped at -100
        double v[2] = {0, 1};
        for (int k = 0; k < 2; k++) {
            unsigned char h[8];
            rows_put(h, dt, v[k]);
            CHECK_OK(hg_buffer_write(x.buf, (size_t)(k * x.t.strides[1]), h, 1));
            x.v[k] = v[k];
        }
    }
    hg_tensor wv, pwv;
    CHECK_OK(hg_tensor_reshape(&w.t, 1, &R, &wv));
    CHECK_OK(hg_tensor_reshape(&pw.t, 1, &R, &pwv));
    const hg_tensor* in[4] = {&x.t, &t.t, op == HG_COP_MSE ? NULL : &wv,
                              op == HG_COP_BCE_LOGITS ? &pwv : NULL};
    int64_t n = M * R, shape[2] = {M, R};
    double* want = malloc((size_t)n * sizeof *want);
    for (int64_t i = 0; i < n; i++) {
        double xi = x.v[i], ti = t.v[i], wi = w.v[i % R], l;
        if (op == HG_COP_MSE) {
            l = (xi - ti) * (xi - ti);
        } else if (op == HG_COP_BCE) {
            l = -(ti * fmax(log(xi), -100) + (1 - ti) * fmax(log(1 - xi), -100)) * wi;
        } else {
            double sp = log1p(exp(-fabs(xi))) + fmax(-xi, 0);
            l = ((1 - ti) * xi + (1 + (pw.v[i % R] - 1) * ti) * sp) * wi;
        }
        want[i] = l;
    }
    reduce_want(want, n, red, (double)n);
    char what[160];
    snprintf(what, sizeof what, "%s %s (%lld, %lld) %s red %d", hg_cop_table[op].name,
             hg_dtype_name(dt), (long long)M, (long long)R, k_lay[lay], (int)red);
    loss_modes(op, what, dt, in, red, 2, shape, want);
    free(want);
    operand_free(&x);
    operand_free(&t);
    operand_free(&w);
    operand_free(&pw);
}

// cross_entropy of (M, C) logits in layout lay, viewed as (M, C), as (C) (M = 1) or as
// (M / 2, C, 2) (the class dim in the middle): class indices (some ignored) or probabilities.
static void run_ce_fw_case(hg_dtype dt, int64_t M, int64_t C, int lay, int probs, int view,
                           hg_reduction red) {
    operand x = make_operand(dt, M, C, lay, -6, 6), tp = make_operand(dt, M, C, LAY_ROWS, 0, 1);
    double* tv = malloc((size_t)M * sizeof *tv);
    int64_t cnt = 0;
    for (int64_t r = 0; r < M; r++) {
        tv[r] = r % 5 == 3 ? -100 : (double)((r * 7) % C);
        cnt += tv[r] != -100;
    }
    hg_tensor ti;
    CHECK_OK(hg_tensor_from_buffer(rows_make_buf(g_ex, HG_DTYPE_I64, M, tv), 1, &M, &ti));
    // the views: (M, C) as it is; (C); (M/2, C, 2) over sample r = 2 a + b at [a, :, b]
    hg_tensor xv = x.t, tpv = tp.t, tiv = ti;
    int32_t nd = 1;
    int64_t sshape[2] = {M, 1};
    if (view == 1) {
        CHECK_OK(hg_tensor_view(x.buf, 1, &C, &x.t.strides[1], x.t.offset, &xv));
        CHECK_OK(hg_tensor_view(tp.buf, 1, &C, &tp.t.strides[1], 0, &tpv));
        CHECK_OK(hg_tensor_view(ti.buffer, 0, NULL, NULL, 0, &tiv));
        nd = 0;
    } else if (view == 2) {
        int64_t s3[3] = {M / 2, C, 2}, xs[3] = {2 * x.t.strides[0], x.t.strides[1],
                                                 x.t.strides[0]};
        int64_t ts[3] = {2 * C, 1, C}, is[2] = {2, 1};
        sshape[0] = M / 2, sshape[1] = 2, nd = 2;
        CHECK_OK(hg_tensor_view(x.buf, 3, s3, xs, 0, &xv));
        CHECK_OK(hg_tensor_view(tp.buf, 3, s3, ts, 0, &tpv));
        CHECK_OK(hg_tensor_view(ti.buffer, 2, sshape, is, 0, &tiv));
    }
    int64_t ns = view == 1 ? 1 : M;
    double* want = malloc((size_t)ns * sizeof *want);
    for (int64_t r = 0; r < ns; r++) {
        const double* xr = x.v + r * C;
        double m = -INFINITY, z = 0, l = 0;
        for (int64_t j = 0; j < C; j++) m = xr[j] > m ? xr[j] : m;
        for (int64_t j = 0; j < C; j++) z += exp(xr[j] - m);
        for (int64_t j = 0; probs && j < C; j++) l += tp.v[r * C + j] * (m + log(z) - xr[j]);
        if (!probs) l = tv[r] == -100 ? 0 : m + log(z) - xr[(int64_t)tv[r]];
        want[r] = l;
    }
    int64_t cn = view == 1 ? (tv[0] != -100) : cnt;
    reduce_want(want, ns, red, probs ? (double)ns : (double)cn);
    char what[160];
    snprintf(what, sizeof what, "cross_entropy %s (%lld, %lld) %s view %d %s red %d",
             hg_dtype_name(dt), (long long)M, (long long)C, k_lay[lay], view,
             probs ? "probabilities" : "indices", (int)red);
    const hg_tensor* in[4] = {&xv, probs ? &tpv : &tiv, NULL, NULL};
    loss_modes(HG_COP_CE, what, dt, in, red, nd, sshape, want);
    free(want);
    free(tv);
    hg_buffer_destroy(ti.buffer);
    operand_free(&x);
    operand_free(&tp);
}

// Every loss override on this executor's route against its decomposition and float64.
static void run_losses(void) {
    static const int64_t shapes[][2] = {{1, 16}, {6, 7}, {4, 1000}};
    static const hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    static const hg_cop ops[] = {HG_COP_MSE, HG_COP_BCE, HG_COP_BCE_LOGITS};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int lay = 0; lay < LAY_COUNT; lay++)
                for (int red = 0; red < 3; red++) {
                    // the emulation is slow: every dtype on one shape, the rest on f32/f64
                    // rows and one reduction of the other layouts
                    if (g_device && (s != 1 || lay != LAY_ROWS) &&
                        (d > 1 || (lay == LAY_ROWS ? red == 0 : red != 2 || s != 1)))
                        continue;
                    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
                        run_ew_loss_case(ops[o], dts[d], shapes[s][0], shapes[s][1], lay,
                                         (hg_reduction)red);
                    for (int probs = 0; probs < 2; probs++)
                        for (int view = 0; view < 3; view++)
                            if ((view != 1 || shapes[s][0] == 1) &&
                                (view != 2 || shapes[s][0] % 2 == 0))
                                run_ce_fw_case(dts[d], shapes[s][0], shapes[s][1], lay, probs,
                                               view, (hg_reduction)red);
                }
}

// The runner's own cases: an output over its input, a 0-d tensor, empty tensors, argument
// errors leaving the output as it was, and executor destroy releasing the cached plans.
static void run_runner(void) {
    hg_cop_mode_set(HG_COP_DECOMP);
    int64_t M = 3, R = 5, shape[2] = {M, R};
    operand x = make_operand(HG_DTYPE_F32, M, R, LAY_ROWS, -2, 2);
    double want[15];
    reference(HG_COP_SOFTMAX, x.v, NULL, NULL, M, R, want, NULL, NULL, NULL);
    CHECK_OK(hg_softmax(&x.t, -1, &x.t));   // in place: the plan reads before it writes
    double* got = read_out(&x.t, M * R);
    int bad;
    CHECK(rows_nmse(got, want, NULL, M * R, HG_DTYPE_F32, &bad) <= 1e-12 && !bad);
    free(got);
    hg_tensor s0, o0 = make_out(HG_DTYPE_F32, 0, NULL);
    CHECK_OK(hg_tensor_view(x.buf, 0, NULL, NULL, 2, &s0));
    CHECK_OK(hg_log_softmax(&s0, 0, &o0));   // 0-d: a row of one, log 1 = 0
    got = read_out(&o0, 1);
    CHECK(got[0] == 0.0);
    free(got);
    hg_buffer_destroy(o0.buffer);
    hg_tensor e, eo;
    int64_t eshape[2] = {0, 4};
    CHECK_OK(hg_tensor_view(x.buf, 2, eshape, NULL, 0, &e));
    eo = make_out(HG_DTYPE_F32, 2, eshape);
    CHECK_OK(hg_softmax(&e, -1, &eo));
    hg_buffer_destroy(eo.buffer);
    // errors are the entry's, before any plan: the output untouched
    hg_tensor out = make_out(HG_DTYPE_F32, 2, shape);
    CHECK_STATUS(hg_softmax(&x.t, 2, &out), HG_ERR_OUT_OF_RANGE);
    CHECK(strstr(hg_last_error(), "hg_softmax") != NULL);
    got = read_out(&out, M * R);
    CHECK(isnan(got[0]) && isnan(got[M * R - 1]));
    free(got);
    hg_tensor gi = make_out(HG_DTYPE_I32, 2, shape);
    CHECK_STATUS(hg_softmax_backward(&gi, &x.t, -1, &out), HG_ERR_DTYPE_MISMATCH);
    hg_buffer_destroy(gi.buffer);
    hg_buffer_destroy(out.buffer);
    operand_free(&x);
    hg_cop_mode_set(HG_COP_AUTO);
}

// A fresh executor: its plans live and die with it (ASan reports a leak otherwise).
static void run_lifetime(void) {
    if (g_device) return;
    hg_executor ex;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    hg_executor keep = g_ex;
    g_ex = ex;
    hg_cop_mode_set(HG_COP_DECOMP);
    operand x = make_operand(HG_DTYPE_F64, 2, 9, LAY_TRANSPOSED, -1, 1);
    int64_t shape[2] = {2, 9}, p, h, c;
    hg_tensor out = make_out(HG_DTYPE_F64, 2, shape);
    CHECK_OK(hg_softmax(&x.t, -1, &out));
    hg_cop_cache_stats(ex, &p, &h, &c);
    CHECK(p == 1 && c == 1 && h == 0);
    hg_cop_mode_set(HG_COP_AUTO);
    operand_free(&x);
    CHECK_OK(hg_executor_destroy(ex));
    g_ex = keep;
}

static void run(int on_device) {
    g_device = on_device;
    run_parity();
    run_ce();
    run_losses();
    run_runner();
    run_lifetime();
}

int main(void) { return hg_test_run_executors("test_composite", &g_ex, run); }
