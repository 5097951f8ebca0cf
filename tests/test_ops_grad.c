// The gradient ops (hg_activation_backward, hg_softmax_backward, hg_log_softmax_backward,
// hg_layer_norm_backward, hg_rms_norm_backward, hg_cross_entropy_backward) against central
// finite differences of the forward ops in f64 (an independent reference: only the forward op
// and sums), then f32/f16/bf16, strided views, threaded sizes and in-place runs against the f64
// results, and every error path (nothing written, nothing allocated).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "base/dtype.h"

static hg_executor EX;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double urand(double lo, double hi) {
    return lo + (hi - lo) * (double)(hg_test_rand(&rng) >> 11) * 0x1p-53;
}

static void put(hg_dtype dt, void* p, int64_t i, double v) {
    switch (dt) {
    case HG_DTYPE_F16: ((uint16_t*)p)[i] = hg_f32_to_f16((float)v); break;
    case HG_DTYPE_BF16: ((uint16_t*)p)[i] = hg_f32_to_bf16((float)v); break;
    case HG_DTYPE_F32: ((float*)p)[i] = (float)v; break;
    case HG_DTYPE_F64: ((double*)p)[i] = v; break;
    case HG_DTYPE_I64: ((int64_t*)p)[i] = (int64_t)v; break;
    case HG_DTYPE_I32: ((int32_t*)p)[i] = (int32_t)v; break;
    default: abort();
    }
}

static double get(hg_dtype dt, const void* p, int64_t i) {
    switch (dt) {
    case HG_DTYPE_F16: return hg_f16_to_f32(((const uint16_t*)p)[i]);
    case HG_DTYPE_BF16: return hg_bf16_to_f32(((const uint16_t*)p)[i]);
    case HG_DTYPE_F32: return ((const float*)p)[i];
    case HG_DTYPE_F64: return ((const double*)p)[i];
    default: abort();
    }
}

static int64_t numel(int nd, const int64_t* shape) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    return n;
}

// A C-contiguous tensor of dtype dt holding v (converted).
static hg_tensor mk(hg_dtype dt, int nd, const int64_t* shape, const double* v) {
    int64_t n = numel(nd, shape);
    hg_buffer b;
    CHECK_OK(hg_buffer_create(EX, dt, (size_t)(n ? n : 1), &b));
    unsigned char* h = calloc((size_t)(n ? n : 1), 8);
    for (int64_t i = 0; i < n; i++) put(dt, h, i, v[i]);
    CHECK_OK(hg_buffer_write(b, 0, h, (size_t)(n ? n : 1)));
    free(h);
    hg_tensor t;
    CHECK_OK(hg_tensor_from_buffer(b, nd, shape, &t));
    return t;
}

// The values of a C-contiguous tensor that starts its buffer, as doubles.
static void rd(const hg_tensor* t, double* v) {
    int64_t n = numel(t->ndim, t->shape);
    size_t sz = hg_dtype_size(t->dtype);
    unsigned char* h = malloc((size_t)(n ? n : 1) * sz + 8);
    if (n) CHECK_OK(hg_buffer_read(t->buffer, 0, h, (size_t)n));
    for (int64_t i = 0; i < n; i++) v[i] = get(t->dtype, h, i);
    free(h);
}

// A (rows, cols) view of C-order values v stored transposed (strides (1, rows)).
static hg_tensor mkT(hg_dtype dt, int64_t rows, int64_t cols, const double* v) {
    double* tv = malloc((size_t)(rows * cols) * sizeof *tv);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) tv[c * rows + r] = v[r * cols + c];
    const int64_t shape[2] = {cols, rows};
    hg_tensor t = mk(dt, 2, shape, tv), out;
    free(tv);
    CHECK_OK(hg_tensor_transpose(&t, 0, 1, &out));
    return out;
}

static void drop(hg_tensor* t) {
    if (t->buffer.handle) hg_buffer_destroy(t->buffer);
    t->buffer.handle = 0;
}

static double* randv(int64_t n, double lo, double hi) {
    double* v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = urand(lo, hi);
    return v;
}

// Relative-or-absolute closeness, NaN only where NaN.
static int near(double got, double want, double tol) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

static int all_near(const double* got, const double* want, int64_t n, double tol) {
    for (int64_t i = 0; i < n; i++)
        if (!near(got[i], want[i], tol)) {
            fprintf(stderr, "  element %lld: got %.17g want %.17g\n", (long long)i, got[i], want[i]);
            return 0;
        }
    return 1;
}

// ---- the forward ops as f(x) -> sum(g * op(x)), and their central differences ---------------
typedef struct fwd {
    int kind;               // 0 unary, 1 softmax, 2 log_softmax, 3 layer_norm, 4 rms_norm, 5 ce
    hg_unary_op op;
    int32_t axis, nnorm;
    const hg_tensor* weight;
    const hg_tensor* bias;
    const hg_tensor* target;
    int64_t ignore;
    hg_reduction red;
    double eps;
} fwd;

static double loss_of(const fwd* f, int nd, const int64_t* shape, const double* x, const double* g) {
    hg_tensor tx = mk(HG_DTYPE_F64, nd, shape, x), y = {0};
    switch (f->kind) {
    case 0: CHECK_OK(hg_unary(f->op, &tx, &y)); break;
    case 1: CHECK_OK(hg_softmax(&tx, f->axis, &y)); break;
    case 2: CHECK_OK(hg_log_softmax(&tx, f->axis, &y)); break;
    case 3: CHECK_OK(hg_layer_norm(&tx, f->nnorm, f->weight, f->bias, f->eps, &y)); break;
    case 4: CHECK_OK(hg_rms_norm(&tx, f->nnorm, f->weight, f->eps, &y)); break;
    default: CHECK_OK(hg_cross_entropy(&tx, f->target, f->ignore, f->red, &y)); break;
    }
    int64_t n = numel(y.ndim, y.shape);
    double* yv = malloc((size_t)(n ? n : 1) * sizeof *yv);
    rd(&y, yv);
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += g[i] * yv[i];
    free(yv);
    drop(&tx);
    drop(&y);
    return s;
}

static void fd_grad(const fwd* f, int nd, const int64_t* shape, const double* x, const double* g,
                    double* out) {
    int64_t n = numel(nd, shape);
    double* xp = malloc((size_t)n * sizeof *xp);
    memcpy(xp, x, (size_t)n * sizeof *xp);
    for (int64_t i = 0; i < n; i++) {
        double h = 1e-5 * (1.0 + fabs(x[i]));
        xp[i] = x[i] + h;
        double a = loss_of(f, nd, shape, xp, g);
        xp[i] = x[i] - h;
        double b = loss_of(f, nd, shape, xp, g);
        xp[i] = x[i];
        out[i] = (a - b) / (2 * h);
    }
    free(xp);
}

// ---- activations ------------------------------------------------------------------------------
static void test_activation(void) {
    const hg_unary_op ops[] = {HG_UNARY_NEG, HG_UNARY_ABS, HG_UNARY_SQUARE, HG_UNARY_SQRT,
                               HG_UNARY_RSQRT, HG_UNARY_RECIPROCAL, HG_UNARY_EXP, HG_UNARY_EXPM1,
                               HG_UNARY_EXP2, HG_UNARY_LOG, HG_UNARY_LOG1P, HG_UNARY_LOG2,
                               HG_UNARY_SIN, HG_UNARY_COS, HG_UNARY_TANH, HG_UNARY_SIGMOID,
                               HG_UNARY_RELU, HG_UNARY_GELU, HG_UNARY_GELU_ERF, HG_UNARY_SILU,
                               HG_UNARY_SOFTPLUS, HG_UNARY_ERF, HG_UNARY_FLOOR};
    const int64_t shape[2] = {3, 7};
    const int64_t n = 21;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        hg_unary_op op = ops[k];
        int positive = op == HG_UNARY_SQRT || op == HG_UNARY_RSQRT || op == HG_UNARY_LOG ||
                       op == HG_UNARY_LOG1P ||
                       op == HG_UNARY_LOG2 || op == HG_UNARY_RECIPROCAL;
        double* x = randv(n, positive ? 0.3 : -3.0, 3.0);
        for (int64_t i = 0; i < n; i++)   // away from the kinks of relu / abs / floor
            if (fabs(x[i] - round(x[i])) < 0.05 || fabs(x[i]) < 0.05) x[i] += 0.2;
        double* g = randv(n, -2.0, 2.0);
        double want[21], got[21];
        fwd f = {.kind = 0, .op = op};
        fd_grad(&f, 2, shape, x, g, want);
        hg_tensor tx = mk(HG_DTYPE_F64, 2, shape, x), tg = mk(HG_DTYPE_F64, 2, shape, g), ty = {0};
        CHECK_OK(hg_unary(op, &tx, &ty));
        hg_tensor r = {0};
        CHECK_OK(hg_activation_backward(op, &tg, &tx, &ty, &r));
        rd(&r, got);
        CHECK_MSG(all_near(got, want, n, 1e-6), "activation_backward(%s) f64 vs differences",
                  hg_unary_op_name(op));
        // Narrower dtypes against the f64 result on the same (rounded) inputs.
        const hg_dtype dts[3] = {HG_DTYPE_F32, HG_DTYPE_F16, HG_DTYPE_BF16};
        const double tol[3] = {2e-6, 4e-3, 3e-2};
        for (int d = 0; d < 3; d++) {
            double xr[21], gr[21], yr[21], ref[21], nar[21];
            hg_tensor ax = mk(dts[d], 2, shape, x), ag = mk(dts[d], 2, shape, g), ay = {0};
            CHECK_OK(hg_unary(op, &ax, &ay));
            rd(&ax, xr);
            rd(&ag, gr);
            rd(&ay, yr);
            hg_tensor bx = mk(HG_DTYPE_F64, 2, shape, xr), bg = mk(HG_DTYPE_F64, 2, shape, gr);
            hg_tensor by = mk(HG_DTYPE_F64, 2, shape, yr), br = {0}, nr = {0};
            CHECK_OK(hg_activation_backward(op, &bg, &bx, &by, &br));
            CHECK_OK(hg_activation_backward(op, &ag, &ax, &ay, &nr));
            CHECK(nr.dtype == dts[d]);
            rd(&br, ref);
            rd(&nr, nar);
            CHECK_MSG(all_near(nar, ref, n, tol[d]), "activation_backward(%s) %s vs f64",
                      hg_unary_op_name(op), hg_dtype_name(dts[d]));
            drop(&ax); drop(&ag); drop(&ay); drop(&bx); drop(&bg); drop(&by); drop(&br);
            drop(&nr);
        }
        // Strided views (transposed storage) give the same values.
        hg_tensor sx = mkT(HG_DTYPE_F64, 3, 7, x), sg = mkT(HG_DTYPE_F64, 3, 7, g), sy = {0};
        hg_tensor sr = {0};
        CHECK_OK(hg_unary(op, &sx, &sy));
        CHECK_OK(hg_activation_backward(op, &sg, &sx, &sy, &sr));
        rd(&sr, got);
        CHECK(all_near(got, want, n, 1e-6));
        drop(&sx); drop(&sg); drop(&sy); drop(&sr);
        CHECK_OK(hg_activation_backward(op, &tg, &tx, &ty, &tg));   // in place
        rd(&tg, got);
        CHECK(all_near(got, want, n, 1e-6));
        drop(&tx); drop(&tg); drop(&ty); drop(&r);
        free(x);
        free(g);
    }
}

// ---- softmax / log_softmax -------------------------------------------------------------------
static void test_softmax(void) {
    const int64_t shape[2] = {4, 6};
    const int64_t n = 24;
    for (int lg = 0; lg < 2; lg++)
        for (int32_t axis = -1; axis <= 1; axis++) {
            double* x = randv(n, -3.0, 3.0);
            double* g = randv(n, -1.0, 1.0);
            double want[24], got[24];
            fwd f = {.kind = lg ? 2 : 1, .axis = axis};
            fd_grad(&f, 2, shape, x, g, want);
            hg_tensor tx = mk(HG_DTYPE_F64, 2, shape, x), tg = mk(HG_DTYPE_F64, 2, shape, g);
            hg_tensor ty = {0}, r = {0};
            CHECK_OK(lg ? hg_log_softmax(&tx, axis, &ty) : hg_softmax(&tx, axis, &ty));
            CHECK_OK(lg ? hg_log_softmax_backward(&tg, &ty, axis, &r)
                        : hg_softmax_backward(&tg, &ty, axis, &r));
            rd(&r, got);
            CHECK_MSG(all_near(got, want, n, 1e-7), "%ssoftmax_backward axis %d f64",
                      lg ? "log_" : "", (int)axis);
            // f32 (the row kernel along the last axis, the composed form along axis 0) and
            // a transposed view, against the f64 formula on the rounded inputs.
            double yv[24], gr[24], yr[24], ref[24];
            rd(&ty, yv);
            hg_tensor fg = mk(HG_DTYPE_F32, 2, shape, g), fy = mk(HG_DTYPE_F32, 2, shape, yv);
            hg_tensor fr = {0};
            CHECK_OK(lg ? hg_log_softmax_backward(&fg, &fy, axis, &fr)
                        : hg_softmax_backward(&fg, &fy, axis, &fr));
            rd(&fg, gr);
            rd(&fy, yr);
            hg_tensor bg = mk(HG_DTYPE_F64, 2, shape, gr), by = mk(HG_DTYPE_F64, 2, shape, yr);
            hg_tensor br = {0};
            CHECK_OK(lg ? hg_log_softmax_backward(&bg, &by, axis, &br)
                        : hg_softmax_backward(&bg, &by, axis, &br));
            rd(&br, ref);
            rd(&fr, got);
            CHECK_MSG(all_near(got, ref, n, 3e-6), "%ssoftmax_backward axis %d f32",
                      lg ? "log_" : "", (int)axis);
            hg_tensor sg = mkT(HG_DTYPE_F32, 4, 6, gr), sy = mkT(HG_DTYPE_F32, 4, 6, yr);
            hg_tensor sr = {0};
            CHECK_OK(lg ? hg_log_softmax_backward(&sg, &sy, axis, &sr)
                        : hg_softmax_backward(&sg, &sy, axis, &sr));
            rd(&sr, got);
            CHECK(all_near(got, ref, n, 3e-6));
            hg_tensor hgg = mk(HG_DTYPE_BF16, 2, shape, g), hy = mk(HG_DTYPE_BF16, 2, shape, yv);
            hg_tensor hr = {0};
            CHECK_OK(lg ? hg_log_softmax_backward(&hgg, &hy, axis, &hr)
                        : hg_softmax_backward(&hgg, &hy, axis, &hr));
            CHECK(hr.dtype == HG_DTYPE_BF16);
            rd(&hr, got);
            CHECK(all_near(got, want, n, 0.06));
            drop(&tx); drop(&tg); drop(&ty); drop(&r); drop(&fg); drop(&fy); drop(&fr);
            drop(&bg); drop(&by); drop(&br); drop(&sg); drop(&sy); drop(&sr); drop(&hgg);
            drop(&hy); drop(&hr);
            free(x);
            free(g);
        }
    // Rows long and many enough for the threaded kernel: f32 against f64, in place.
    const int64_t big[2] = {300, 257};
    int64_t nb = 300 * 257;
    double* x = randv(nb, -4.0, 4.0);
    double* g = randv(nb, -1.0, 1.0);
    double* a = malloc((size_t)nb * sizeof *a);
    double* b = malloc((size_t)nb * sizeof *b);
    for (int lg = 0; lg < 2; lg++) {
        hg_tensor dx = mk(HG_DTYPE_F64, 2, big, x), dy = {0};
        CHECK_OK(lg ? hg_log_softmax(&dx, 1, &dy) : hg_softmax(&dx, 1, &dy));
        rd(&dy, a);
        for (int64_t i = 0; i < nb; i++) a[i] = (double)(float)a[i];
        hg_tensor fy = mk(HG_DTYPE_F32, 2, big, a), fg = mk(HG_DTYPE_F32, 2, big, g);
        hg_tensor by = mk(HG_DTYPE_F64, 2, big, a), bg = mk(HG_DTYPE_F64, 2, big, g), br = {0};
        for (int64_t i = 0; i < nb; i++) b[i] = (double)(float)g[i];
        drop(&bg);
        bg = mk(HG_DTYPE_F64, 2, big, b);
        CHECK_OK(lg ? hg_log_softmax_backward(&bg, &by, 1, &br)
                    : hg_softmax_backward(&bg, &by, 1, &br));
        CHECK_OK(lg ? hg_log_softmax_backward(&fg, &fy, 1, &fg)
                    : hg_softmax_backward(&fg, &fy, 1, &fg));   // in place into grad
        rd(&br, a);
        rd(&fg, b);
        CHECK_MSG(all_near(b, a, nb, 2e-5), "%ssoftmax_backward 300 x 257 f32 in place",
                  lg ? "log_" : "");
        drop(&dx); drop(&dy); drop(&fy); drop(&fg); drop(&by); drop(&bg); drop(&br);
    }
    free(x); free(g); free(a); free(b);
}

// ---- layer_norm / rms_norm ---------------------------------------------------------------------
// Gradients of sum(g * norm(x; w, b)) wrt w (and b) by differences in w (b).
static void fd_params(int rms, int nd, const int64_t* shape, int32_t nnorm, const double* x,
                      double* w, double* bias, const double* g, double* gw, double* gb) {
    int64_t R = numel(nnorm, shape + (nd - nnorm));
    hg_tensor tx = mk(HG_DTYPE_F64, nd, shape, x);
    for (int which = 0; which < (rms ? 1 : 2); which++) {
        double* p = which ? bias : w;
        double* out = which ? gb : gw;
        for (int64_t i = 0; i < R; i++) {
            double keep = p[i], h = 1e-5 * (1.0 + fabs(keep)), s[2];
            for (int k = 0; k < 2; k++) {
                p[i] = keep + (k ? -h : h);
                hg_tensor tw = mk(HG_DTYPE_F64, nnorm, shape + (nd - nnorm), w);
                hg_tensor tb = mk(HG_DTYPE_F64, nnorm, shape + (nd - nnorm), bias);
                fwd f = {.kind = rms ? 4 : 3, .nnorm = nnorm, .weight = &tw,
                         .bias = rms ? NULL : &tb, .eps = 1e-5};
                s[k] = loss_of(&f, nd, shape, x, g);
                drop(&tw);
                drop(&tb);
            }
            p[i] = keep;
            out[i] = (s[0] - s[1]) / (2 * h);
        }
    }
    drop(&tx);
}

static void test_norm(void) {
    const int64_t shape[3] = {2, 3, 4};
    const int64_t n = 24;
    for (int rms = 0; rms < 2; rms++)
        for (int32_t nnorm = 1; nnorm <= 2; nnorm++)
            for (int withw = 0; withw < 2; withw++) {
                int64_t R = nnorm == 1 ? 4 : 12;
                double* x = randv(n, -2.0, 3.0);
                double* g = randv(n, -1.0, 1.0);
                double* w = randv(R, 0.5, 1.5);
                double* bias = randv(R, -0.5, 0.5);
                double want[24], got[24], gw[12], gb[12], fw[12], fb[12];
                hg_tensor tw = mk(HG_DTYPE_F64, nnorm, shape + 3 - nnorm, w);
                hg_tensor tb = mk(HG_DTYPE_F64, nnorm, shape + 3 - nnorm, bias);
                fwd f = {.kind = rms ? 4 : 3, .nnorm = nnorm, .weight = withw ? &tw : NULL,
                         .bias = rms ? NULL : &tb, .eps = 1e-5};
                fd_grad(&f, 3, shape, x, g, want);
                hg_tensor tx = mk(HG_DTYPE_F64, 3, shape, x), tg = mk(HG_DTYPE_F64, 3, shape, g);
                hg_tensor rx = {0}, rw = {0}, rb = {0};
                if (rms)
                    CHECK_OK(hg_rms_norm_backward(&tg, &tx, nnorm, withw ? &tw : NULL, 1e-5, &rx,
                                                  &rw));
                else
                    CHECK_OK(hg_layer_norm_backward(&tg, &tx, nnorm, withw ? &tw : NULL, 1e-5,
                                                    &rx, &rw, &rb));
                rd(&rx, got);
                CHECK_MSG(all_near(got, want, n, 1e-6), "%s_norm_backward grad_x nnorm %d w %d",
                          rms ? "rms" : "layer", (int)nnorm, withw);
                if (withw) {
                    fd_params(rms, 3, shape, nnorm, x, w, bias, g, fw, fb);
                    rd(&rw, gw);
                    CHECK_MSG(all_near(gw, fw, R, 1e-6), "%s_norm_backward grad_weight",
                              rms ? "rms" : "layer");
                    if (!rms) {
                        rd(&rb, gb);
                        CHECK_MSG(all_near(gb, fb, R, 1e-6), "layer_norm_backward grad_bias");
                    }
                }
                // f32 (the row kernel) and f16 (composed) against f64 on the rounded inputs;
                // only grad_weight asked for, and grad_x in place into grad.
                double xr[24], gr[24], wr[12], ref[24], refw[12];
                hg_tensor fx = mk(HG_DTYPE_F32, 3, shape, x), fg = mk(HG_DTYPE_F32, 3, shape, g);
                hg_tensor fw32 = mk(HG_DTYPE_F32, nnorm, shape + 3 - nnorm, w);
                rd(&fx, xr); rd(&fg, gr); rd(&fw32, wr);
                hg_tensor bx = mk(HG_DTYPE_F64, 3, shape, xr), bg = mk(HG_DTYPE_F64, 3, shape, gr);
                hg_tensor bw = mk(HG_DTYPE_F64, nnorm, shape + 3 - nnorm, wr);
                hg_tensor brx = {0}, brw = {0}, frw = {0};
                CHECK_OK(hg_layer_norm_backward(&bg, &bx, nnorm, withw ? &bw : NULL, 1e-5, &brx,
                                                &brw, NULL));
                if (rms) {
                    drop(&brx); drop(&brw);
                    CHECK_OK(hg_rms_norm_backward(&bg, &bx, nnorm, withw ? &bw : NULL, 1e-5,
                                                  &brx, &brw));
                }
                rd(&brx, ref);
                rd(&brw, refw);
                hg_tensor only_w = {0};
                if (rms)
                    CHECK_OK(hg_rms_norm_backward(&fg, &fx, nnorm, withw ? &fw32 : NULL, 1e-5,
                                                  NULL, &only_w));
                else
                    CHECK_OK(hg_layer_norm_backward(&fg, &fx, nnorm, withw ? &fw32 : NULL, 1e-5,
                                                    NULL, &only_w, NULL));
                rd(&only_w, gw);
                CHECK(all_near(gw, refw, R, 1e-5));
                if (rms)
                    CHECK_OK(hg_rms_norm_backward(&fg, &fx, nnorm, withw ? &fw32 : NULL, 1e-5,
                                                  &fg, &frw));
                else
                    CHECK_OK(hg_layer_norm_backward(&fg, &fx, nnorm, withw ? &fw32 : NULL, 1e-5,
                                                    &fg, &frw, NULL));
                rd(&fg, got);
                CHECK_MSG(all_near(got, ref, n, 2e-5), "%s_norm_backward f32 in place",
                          rms ? "rms" : "layer");
                rd(&frw, gw);
                CHECK(all_near(gw, refw, R, 1e-5));
                hg_tensor hx = mk(HG_DTYPE_F16, 3, shape, xr), hgg = mk(HG_DTYPE_F16, 3, shape, gr);
                hg_tensor hr = {0};
                if (rms) CHECK_OK(hg_rms_norm_backward(&hgg, &hx, nnorm, NULL, 1e-5, &hr, NULL));
                else CHECK_OK(hg_layer_norm_backward(&hgg, &hx, nnorm, NULL, 1e-5, &hr, NULL, NULL));
                CHECK(hr.dtype == HG_DTYPE_F16);
                if (!withw) {
                    rd(&hr, got);
                    CHECK_MSG(all_near(got, ref, n, 2e-2), "%s_norm_backward f16",
                              rms ? "rms" : "layer");
                }
                drop(&tw); drop(&tb); drop(&tx); drop(&tg); drop(&rx); drop(&rw); drop(&rb);
                drop(&fx); drop(&fg); drop(&fw32); drop(&bx); drop(&bg); drop(&bw); drop(&brx);
                drop(&brw); drop(&frw); drop(&only_w); drop(&hx); drop(&hgg); drop(&hr);
                free(x); free(g); free(w); free(bias);
            }
}

// Rows over several threads: the f32 kernel's grad_weight / grad_bias sums against f64.
static void test_norm_threads(void) {
    const int64_t shape[2] = {513, 96};
    int64_t n = 513 * 96;
    double* x = randv(n, -2.0, 2.0);
    double* g = randv(n, -1.0, 1.0);
    double* w = randv(96, 0.5, 1.5);
    for (int64_t i = 0; i < n; i++) { x[i] = (float)x[i]; g[i] = (float)g[i]; }
    for (int i = 0; i < 96; i++) w[i] = (float)w[i];
    hg_tensor fx = mk(HG_DTYPE_F32, 2, shape, x), fg = mk(HG_DTYPE_F32, 2, shape, g);
    hg_tensor fw = mk(HG_DTYPE_F32, 1, shape + 1, w);
    hg_tensor dx = mk(HG_DTYPE_F64, 2, shape, x), dg = mk(HG_DTYPE_F64, 2, shape, g);
    hg_tensor dw = mk(HG_DTYPE_F64, 1, shape + 1, w);
    hg_tensor a[3], b[3];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    CHECK_OK(hg_layer_norm_backward(&fg, &fx, 1, &fw, 1e-5, &a[0], &a[1], &a[2]));
    CHECK_OK(hg_layer_norm_backward(&dg, &dx, 1, &dw, 1e-5, &b[0], &b[1], &b[2]));
    double* u = malloc((size_t)n * sizeof *u);
    double* v = malloc((size_t)n * sizeof *v);
    for (int k = 0; k < 3; k++) {
        int64_t m = k ? 96 : n;
        rd(&a[k], u);
        rd(&b[k], v);
        CHECK_MSG(all_near(u, v, m, 2e-5), "layer_norm_backward 513 x 96 output %d", k);
        drop(&a[k]);
        drop(&b[k]);
    }
    drop(&fx); drop(&fg); drop(&fw); drop(&dx); drop(&dg); drop(&dw);
    free(u); free(v); free(x); free(g); free(w);
}

// ---- cross-entropy -----------------------------------------------------------------------------
static void test_cross_entropy(void) {
    const int64_t shape[3] = {5, 4, 2};   // (N, C, d1)
    const int64_t n = 40, ns = 10;
    const int64_t sshape[2] = {5, 2};
    for (int probs = 0; probs < 2; probs++)
        for (int red = 0; red < 3; red++) {
            double* x = randv(n, -3.0, 3.0);
            double tv[40];
            if (probs) {
                for (int64_t i = 0; i < n; i++) tv[i] = urand(0.0, 1.0);
            } else {
                for (int64_t i = 0; i < ns; i++) tv[i] = (double)(int64_t)urand(0.0, 4.0);
                tv[3] = -100.0;   // ignored
            }
            hg_tensor tt = probs ? mk(HG_DTYPE_F64, 3, shape, tv) : mk(HG_DTYPE_I64, 2, sshape, tv);
            int gn = red == HG_REDUCTION_NONE ? (int)ns : 1;
            double* g = randv(gn, 0.5, 2.0);
            double want[40], got[40];
            fwd f = {.kind = 5, .target = &tt, .ignore = -100, .red = (hg_reduction)red};
            fd_grad(&f, 3, shape, x, g, want);
            hg_tensor tx = mk(HG_DTYPE_F64, 3, shape, x);
            hg_tensor tg = red == HG_REDUCTION_NONE ? mk(HG_DTYPE_F64, 2, sshape, g)
                                                    : mk(HG_DTYPE_F64, 0, NULL, g);
            hg_tensor r = {0};
            CHECK_OK(hg_cross_entropy_backward(&tg, &tx, &tt, -100, (hg_reduction)red, &r));
            rd(&r, got);
            CHECK_MSG(all_near(got, want, n, 1e-6), "cross_entropy_backward probs %d red %d",
                      probs, red);
            // f32 logits and grad: against the f64 gradient (the same rounded values up to f32).
            hg_tensor fx = mk(HG_DTYPE_F32, 3, shape, x), fr = {0};
            hg_tensor fg = red == HG_REDUCTION_NONE ? mk(HG_DTYPE_F32, 2, sshape, g)
                                                    : mk(HG_DTYPE_F32, 0, NULL, g);
            CHECK_OK(hg_cross_entropy_backward(&fg, &fx, &tt, -100, (hg_reduction)red, &fr));
            CHECK(fr.dtype == HG_DTYPE_F32);
            rd(&fr, got);
            CHECK(all_near(got, want, n, 1e-5));
            drop(&tt); drop(&tx); drop(&tg); drop(&r); drop(&fx); drop(&fr); drop(&fg);
            free(x); free(g);
        }
    // Every target ignored with MEAN: a zero gradient, as torch's (the loss is 0 / 0 = NaN;
    // no row takes the scale g / 0).
    const int64_t s2[2] = {2, 3}, s1[1] = {2};
    double xv[6] = {1, 2, 3, 4, 5, 6}, tv[2] = {-100, -100}, one = 1.0, got[6];
    hg_tensor tx = mk(HG_DTYPE_F32, 2, s2, xv), tt = mk(HG_DTYPE_I64, 1, s1, tv);
    hg_tensor tg = mk(HG_DTYPE_F32, 0, NULL, &one), r = {0};
    CHECK_OK(hg_cross_entropy_backward(&tg, &tx, &tt, -100, HG_REDUCTION_MEAN, &r));
    rd(&r, got);
    for (int i = 0; i < 6; i++) CHECK_MSG(got[i] == 0.0, "element %d: %g, want 0", i, got[i]);
    drop(&r);
    // A target out of range: refused, out not allocated.
    tv[0] = 3;
    drop(&tt);
    tt = mk(HG_DTYPE_I64, 1, s1, tv);
    CHECK_STATUS(hg_cross_entropy_backward(&tg, &tx, &tt, -100, HG_REDUCTION_MEAN, &r),
                 HG_ERR_OUT_OF_RANGE);
    CHECK(r.buffer.handle == 0);
    drop(&tx); drop(&tt); drop(&tg);
}

// ---- errors: clear statuses, nothing allocated or written ----------------------------------------
static void test_errors(void) {
    const int64_t s2[2] = {2, 3}, s3[2] = {3, 2}, s1[1] = {3};
    double v[6] = {1, 2, 3, 4, 5, 6}, keep[6];
    hg_tensor a = mk(HG_DTYPE_F32, 2, s2, v), b = mk(HG_DTYPE_F32, 2, s2, v);
    hg_tensor c = mk(HG_DTYPE_F32, 2, s3, v), d = mk(HG_DTYPE_F64, 2, s2, v);
    hg_tensor i = mk(HG_DTYPE_I32, 2, s2, v), w = mk(HG_DTYPE_F32, 1, s1, v), out = {0};
    hg_tensor o = mk(HG_DTYPE_F32, 2, s2, v);
    CHECK_STATUS(hg_activation_backward(HG_UNARY_TANH, &a, NULL, NULL, &out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_activation_backward(HG_UNARY_ISNAN, &a, &b, &b, &out),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_activation_backward((hg_unary_op)999, &a, &b, &b, &out),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_activation_backward(HG_UNARY_TANH, &a, NULL, &c, &out), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_activation_backward(HG_UNARY_TANH, &a, NULL, &d, &out),
                 HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_activation_backward(HG_UNARY_RELU, &i, &i, NULL, &out),
                 HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_softmax_backward(&a, &c, 1, &out), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_softmax_backward(&a, &d, 1, &out), HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_softmax_backward(&a, &b, 2, &out), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_log_softmax_backward(NULL, &b, 1, &out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_softmax_backward(&a, &b, 1, &c), HG_ERR_SIZE_MISMATCH);   // out's shape
    CHECK_STATUS(hg_layer_norm_backward(&a, &b, 3, NULL, 1e-5, &out, NULL, NULL),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_layer_norm_backward(&a, &b, 1, &w, -1.0, &out, NULL, NULL),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_layer_norm_backward(&a, &b, 2, &w, 1e-5, &out, NULL, NULL),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_layer_norm_backward(&a, &c, 1, NULL, 1e-5, &out, NULL, NULL),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_rms_norm_backward(&a, &b, 1, NULL, 1e-5, NULL, NULL), HG_ERR_NULL_POINTER);
    hg_tensor gw = {0};
    // A bad grad_bias after grad_x and grad_weight were allocated: both released again.
    CHECK_STATUS(hg_layer_norm_backward(&a, &b, 1, &w, 1e-5, &out, &gw, &c),
                 HG_ERR_SIZE_MISMATCH);
    CHECK(out.buffer.handle == 0 && gw.buffer.handle == 0);
    // grad_x overlapping x (one element further along): numpy's rule, as if x were read before
    // anything is written: the same values as from a separate copy of x.
    hg_buffer big;
    double v7[7] = {1, 2, 3, 4, 5, 6, 7};
    CHECK_OK(hg_buffer_create(EX, HG_DTYPE_F32, 7, &big));
    hg_tensor x0, x1;
    CHECK_OK(hg_tensor_view(big, 2, s2, NULL, 0, &x0));
    CHECK_OK(hg_tensor_view(big, 2, s2, NULL, 1, &x1));
    hg_tensor xc = mk(HG_DTYPE_F32, 2, s2, v7);
    for (int op = 0; op < 3; op++) {
        float f7[7];
        for (int k = 0; k < 7; k++) f7[k] = (float)v7[k];
        CHECK_OK(hg_buffer_write(big, 0, f7, 7));
        hg_tensor want = {0};
        float got[6];
        double ref[6];
        if (op == 0) {
            CHECK_OK(hg_layer_norm_backward(&a, &xc, 1, NULL, 1e-5, &want, NULL, NULL));
            CHECK_OK(hg_layer_norm_backward(&a, &x0, 1, NULL, 1e-5, &x1, NULL, NULL));
        } else if (op == 1) {
            CHECK_OK(hg_softmax_backward(&a, &xc, 1, &want));
            CHECK_OK(hg_softmax_backward(&a, &x0, 1, &x1));
        } else {
            CHECK_OK(hg_activation_backward(HG_UNARY_TANH, &a, NULL, &xc, &want));
            CHECK_OK(hg_activation_backward(HG_UNARY_TANH, &a, NULL, &x0, &x1));
        }
        CHECK_OK(hg_buffer_read(big, 1, got, 6));   // x1's elements
        rd(&want, ref);
        for (int k = 0; k < 6; k++)
            CHECK_MSG(got[k] == ref[k], "op %d [%d]: %g vs %g", op, k, (double)got[k], ref[k]);
        CHECK_OK(hg_buffer_destroy(want.buffer));
    }
    CHECK_OK(hg_buffer_destroy(xc.buffer));
    hg_buffer_destroy(big);
    rd(&o, keep);
    for (int k = 0; k < 6; k++) CHECK(keep[k] == v[k]);
    const int64_t t1[1] = {2};
    hg_tensor t = mk(HG_DTYPE_I64, 1, t1, (double[]){0, 1}), g0 = mk(HG_DTYPE_F32, 0, NULL, v);
    CHECK_STATUS(hg_cross_entropy_backward(&g0, &a, &t, -100, HG_REDUCTION_NONE, &out),
                 HG_ERR_SIZE_MISMATCH);   // NONE needs a grad per sample
    CHECK_STATUS(hg_cross_entropy_backward(&g0, &a, &a, -100, HG_REDUCTION_MEAN, &out), HG_OK);
    drop(&out);
    CHECK_STATUS(hg_cross_entropy_backward(&g0, &a, &w, -100, HG_REDUCTION_MEAN, &out),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_cross_entropy_backward(&g0, &a, &t, -100, (hg_reduction)7, &out),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_cross_entropy_backward(&g0, &i, &t, -100, HG_REDUCTION_MEAN, &out),
                 HG_ERR_DTYPE_MISMATCH);
    CHECK(out.buffer.handle == 0);
    drop(&a); drop(&b); drop(&c); drop(&d); drop(&i); drop(&w); drop(&o); drop(&t); drop(&g0);
}

// Runs everything on a CPU executor of 1 and of 2 threads, or on HG_TEST_BACKEND's (the CUDA
// emulation in tests/cuda_emu.cmake: the composed paths on a device).
static void run_all(int on_device) {
    (void)on_device;   // the same checks everywhere
    test_activation();
    test_softmax();
    test_norm();
    test_norm_threads();
    test_cross_entropy();
    test_errors();
}

int main(void) { return hg_test_run_executors("test_ops_grad", &EX, run_all); }
