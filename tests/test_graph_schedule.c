// Graph scheduling decisions on the shapes of real models (RMSNorm of Llama (4, 64, 256) f32):
// a member of a much smaller shape than its kernel's root (the per-row rsqrt(mean + eps), the
// broadcast scalars of a backward) is computed once at its own shape by a kernel of its own when
// the root is large, and recomputed inside the large kernel when it is small; a cheap node read
// by two kernels is recomputed by both instead of stored; an input with one value per row is
// spread into the grouped row launches of a fused kernel; x ** 1 is x. Each
// plan is checked against a float64 reference, against the unfused plan bit for bit, and by its
// kernel count (what was scheduled).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "hologram.h"

static hg_executor g_ex;
static uint64_t g_rng = 7;

static double drand(void) { return (double)(hg_test_rand(&g_rng) % 2000001) / 1e6 - 1.0; }

static hg_tensor tensor(int32_t ndim, const int64_t* shape, const float* data, hg_buffer* buf) {
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; d++) n *= shape[d];
    hg_tensor t;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)n, buf));
    if (data) CHECK_OK(hg_buffer_write(*buf, 0, data, (size_t)n));
    CHECK_OK(hg_tensor_from_buffer(*buf, ndim, shape, &t));
    return t;
}

static int32_t bin(hg_graph g, hg_binary_op op, int32_t a, int32_t b) {
    int32_t o = -1;
    CHECK_OK(hg_graph_binary(g, op, a, b, &o));
    return o;
}

static int32_t bins(hg_graph g, hg_binary_op op, int32_t a, double s) {
    int32_t o = -1;
    CHECK_OK(hg_graph_binary_scalar(g, op, a, hg_scalar_f(s), 0, &o));
    return o;
}

// Compiles g fused and unfused, runs both on ins into an output of n floats, checks that they
// agree bit for bit and returns the fused plan's kernel count; res gets the fused result.
static int run_both(hg_graph g, int nin, const hg_tensor* ins, int32_t ndim, const int64_t* shape,
                    float* res, int64_t n, int32_t* rewrites) {
    hg_plan p[2];
    CHECK_OK(hg_graph_compile(g, g_ex, &p[0]));
    setenv("HOLOGRAM_DISABLE_FUSION", "1", 1);
    CHECK_OK(hg_graph_compile(g, g_ex, &p[1]));
    unsetenv("HOLOGRAM_DISABLE_FUSION");
    float* other = malloc((size_t)n * sizeof *other);
    hg_buffer bo;
    hg_tensor to = tensor(ndim, shape, NULL, &bo);
    CHECK_OK(hg_plan_run(p[0], nin, ins, 1, &to));
    CHECK_OK(hg_buffer_read(bo, 0, res, (size_t)n));
    CHECK_OK(hg_plan_run(p[1], nin, ins, 1, &to));
    CHECK_OK(hg_buffer_read(bo, 0, other, (size_t)n));
    CHECK_MSG(memcmp(res, other, (size_t)n * sizeof *res) == 0, "fused and unfused plans differ");
    hg_plan_info info;
    CHECK_OK(hg_plan_info_get(p[0], &info));
    if (rewrites) *rewrites = info.rewrites;
    for (int k = 0; k < 2; k++) CHECK_OK(hg_plan_destroy(p[k]));
    hg_buffer_destroy(bo);
    free(other);
    return info.kernels;
}

static int close_to(const float* got, const double* want, int64_t n, double tol) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += !(fabs((double)got[i] - want[i]) <= tol * (1.0 + fabs(want[i])));
    return bad == 0;
}

// y = w * (x * rsqrt(mean(x * x, axis 2) + 1e-6)): LlamaRMSNorm's forward.
static void test_rms_forward(int64_t B, int64_t T, int64_t H, int want_kernels) {
    int64_t n = B * T * H, shape[3] = {B, T, H};
    float* xv = malloc((size_t)n * 4);
    float* wv = malloc((size_t)H * 4);
    float* y = malloc((size_t)n * 4);
    double* ref = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) xv[i] = (float)(3.0 * drand());
    for (int64_t i = 0; i < H; i++) wv[i] = (float)(1.0 + 0.1 * drand());
    xv[1] = -0.0f;
    for (int64_t r = 0; r < B * T; r++) {
        double ss = 0;
        for (int64_t j = 0; j < H; j++) ss += (double)xv[r * H + j] * xv[r * H + j];
        double rs = 1.0 / sqrt(ss / (double)H + 1e-6);
        for (int64_t j = 0; j < H; j++) ref[r * H + j] = wv[j] * (xv[r * H + j] * rs);
    }
    hg_graph g;
    int32_t x, w, sq, mean, r, y_;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, shape, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, &H, &w));
    sq = bin(g, HG_BINARY_MUL, x, x);
    CHECK_OK(hg_graph_reduce(g, HG_REDUCE_MEAN, sq, 1, (int32_t[]){2}, 1, &mean));
    CHECK_OK(hg_graph_unary(g, HG_UNARY_RSQRT, bins(g, HG_BINARY_ADD, mean, 1e-6), &r));
    y_ = bin(g, HG_BINARY_MUL, w, bin(g, HG_BINARY_MUL, x, r));
    CHECK_OK(hg_graph_output(g, y_));
    hg_buffer bx, bw;
    hg_tensor ins[2] = {tensor(3, shape, xv, &bx), tensor(1, &H, wv, &bw)};
    int k = run_both(g, 2, ins, 3, shape, y, n, NULL);
    CHECK_MSG(k == want_kernels, "rms forward (%lld, %lld, %lld): %d kernels, want %d",
              (long long)B, (long long)T, (long long)H, k, want_kernels);
    CHECK_MSG(close_to(y, ref, n, 2e-6), "rms forward (%lld, %lld, %lld) differs from float64",
              (long long)B, (long long)T, (long long)H);
    CHECK(y[1] == 0.0f && signbit(y[1]));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(bx);
    hg_buffer_destroy(bw);
    free(xv); free(wv); free(y); free(ref);
}

// The input gradient of RMSNorm as AOTAutograd's ATen graph gives it (pow_backward's
// 2 * x.pow(1) included): dx = dy*w*r + (sum(dy*w*x, 2) * -0.5 * r^3 / H) * 2 * x ** 1.
static void test_rms_backward(int64_t B, int64_t T, int64_t H, int want_kernels) {
    int64_t n = B * T * H, rows = B * T, shape[3] = {B, T, H}, rshape[3] = {B, T, 1};
    float *dyv = malloc((size_t)n * 4), *xv = malloc((size_t)n * 4), *wv = malloc((size_t)H * 4);
    float *rv = malloc((size_t)rows * 4), *dx = malloc((size_t)n * 4);
    double* ref = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) { dyv[i] = (float)drand(); xv[i] = (float)(2.0 * drand()); }
    for (int64_t i = 0; i < H; i++) wv[i] = (float)(1.0 + 0.1 * drand());
    for (int64_t i = 0; i < rows; i++) rv[i] = (float)(1.0 + 0.5 * drand());
    for (int64_t r = 0; r < rows; r++) {
        double s = 0, rr = rv[r];
        for (int64_t j = 0; j < H; j++) s += (double)dyv[r * H + j] * wv[j] * xv[r * H + j];
        double c = s * -0.5 * rr * rr * rr / (double)H;
        for (int64_t j = 0; j < H; j++)
            ref[r * H + j] = (double)dyv[r * H + j] * wv[j] * rr + c * 2.0 * xv[r * H + j];
    }
    hg_graph g;
    int32_t dy, w, x, r, gw, s, r3, c, e, p, dxn;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, shape, &dy));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, &H, &w));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, shape, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, rshape, &r));
    gw = bin(g, HG_BINARY_MUL, dy, w);
    CHECK_OK(hg_graph_reduce(g, HG_REDUCE_SUM, bin(g, HG_BINARY_MUL, gw, x), 1, (int32_t[]){2}, 1, &s));
    r3 = bin(g, HG_BINARY_MUL, bin(g, HG_BINARY_MUL, r, r), r);
    c = bin(g, HG_BINARY_MUL, bins(g, HG_BINARY_MUL, s, -0.5), r3);
    CHECK_OK(hg_graph_expand(g, c, 3, shape, &e));
    p = bins(g, HG_BINARY_MUL, bins(g, HG_BINARY_POW, x, 1.0), 2.0);
    dxn = bin(g, HG_BINARY_ADD, bin(g, HG_BINARY_MUL, gw, r),
              bin(g, HG_BINARY_MUL, bins(g, HG_BINARY_DIV, e, (double)H), p));
    CHECK_OK(hg_graph_output(g, dxn));
    hg_buffer b[4];
    hg_tensor ins[4] = {tensor(3, shape, dyv, &b[0]), tensor(1, &H, wv, &b[1]),
                        tensor(3, shape, xv, &b[2]), tensor(3, rshape, rv, &b[3])};
    int32_t rewrites = 0;
    int k = run_both(g, 4, ins, 3, shape, dx, n, &rewrites);
    CHECK_MSG(rewrites >= 1, "x ** 1 was not rewritten (%d rewrites)", (int)rewrites);
    CHECK_MSG(k == want_kernels, "rms backward (%lld, %lld, %lld): %d kernels, want %d",
              (long long)B, (long long)T, (long long)H, k, want_kernels);
    CHECK_MSG(close_to(dx, ref, n, 1e-5), "rms backward (%lld, %lld, %lld) differs from float64",
              (long long)B, (long long)T, (long long)H);
    CHECK_OK(hg_graph_destroy(g));
    for (int i = 0; i < 4; i++) hg_buffer_destroy(b[i]);
    free(dyv); free(xv); free(wv); free(rv); free(dx); free(ref);
}

// x * exp(s) for a 0-d input s: exp once in a one-element kernel for a large x, inline for a
// small one.
static void test_scalar_member(int64_t n, int want_kernels) {
    float* xv = malloc((size_t)n * 4);
    float* y = malloc((size_t)n * 4);
    double* ref = malloc((size_t)n * 8);
    float sv = 0.75f;
    for (int64_t i = 0; i < n; i++) {
        xv[i] = (float)drand();
        ref[i] = xv[i] * exp((double)sv);
    }
    hg_graph g;
    int32_t x, s, e;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, &n, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 0, NULL, &s));
    CHECK_OK(hg_graph_unary(g, HG_UNARY_EXP, s, &e));
    CHECK_OK(hg_graph_output(g, bin(g, HG_BINARY_MUL, x, e)));
    hg_buffer bx, bs;
    hg_tensor ins[2] = {tensor(1, &n, xv, &bx), tensor(0, NULL, &sv, &bs)};
    int k = run_both(g, 2, ins, 1, &n, y, n, NULL);
    CHECK_MSG(k == want_kernels, "x * exp(s), %lld elements: %d kernels, want %d", (long long)n, k,
              want_kernels);
    CHECK(close_to(y, ref, n, 2e-7));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(bx);
    hg_buffer_destroy(bs);
    free(xv); free(y); free(ref);
}

// p[0] the fused plan of g (its info in *info), p[1] the unfused one.
static void compile_both(hg_graph g, hg_plan* p, hg_plan_info* info) {
    CHECK_OK(hg_graph_compile(g, g_ex, &p[0]));
    setenv("HOLOGRAM_DISABLE_FUSION", "1", 1);
    CHECK_OK(hg_graph_compile(g, g_ex, &p[1]));
    unsetenv("HOLOGRAM_DISABLE_FUSION");
    CHECK_OK(hg_plan_info_get(p[0], info));
}

// t = a + b (or exp(a) + b: costly) read by two kernels, y1 = sum(t * c, axis 1) and y2 = t * d;
// t is also an output when t_out. chain: u = t * c in place of t, and y2 = u * d + t (t is read
// by u's group, itself recomputed, and by y2's).
static void test_shared(int costly, int t_out, int chain, int want_kernels) {
    const int64_t R = 128, H = 256, n = R * H, shape[2] = {R, H}, rshape[2] = {R, 1};
    float* v[4];
    for (int k = 0; k < 4; k++) {
        v[k] = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) v[k][i] = (float)drand();
    }
    float *y1 = malloc((size_t)R * 4), *y2 = malloc((size_t)n * 4);
    double *r1 = malloc((size_t)R * 8), *r2 = malloc((size_t)n * 8);
    for (int64_t r = 0; r < R; r++) {
        r1[r] = 0;
        for (int64_t j = 0; j < H; j++) {
            int64_t i = r * H + j;
            double t = (double)(float)((costly ? (double)expf(v[0][i]) : (double)v[0][i]) + v[1][i]);
            double u = chain ? (double)(float)(t * v[2][i]) : t;
            r1[r] += u * v[2][i];
            r2[i] = u * v[3][i] + (chain ? t : 0.0);
        }
    }
    hg_graph g;
    int32_t in[4], t, y1n, y2n;
    CHECK_OK(hg_graph_create(&g));
    for (int k = 0; k < 4; k++) CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, shape, &in[k]));
    int32_t a = in[0];
    if (costly) CHECK_OK(hg_graph_unary(g, HG_UNARY_EXP, in[0], &a));
    t = bin(g, HG_BINARY_ADD, a, in[1]);
    int32_t u = chain ? bin(g, HG_BINARY_MUL, t, in[2]) : t;
    CHECK_OK(hg_graph_reduce(g, HG_REDUCE_SUM, bin(g, HG_BINARY_MUL, u, in[2]), 1, (int32_t[]){1}, 1, &y1n));
    y2n = bin(g, HG_BINARY_MUL, u, in[3]);
    if (chain) y2n = bin(g, HG_BINARY_ADD, y2n, t);
    CHECK_OK(hg_graph_output(g, y1n));
    CHECK_OK(hg_graph_output(g, y2n));
    if (t_out) CHECK_OK(hg_graph_output(g, t));
    hg_plan p[2];
    hg_plan_info info;
    compile_both(g, p, &info);
    CHECK_MSG(info.kernels == want_kernels, "shared t (costly %d, output %d, chain %d): %d "
              "kernels, want %d", costly, t_out, chain, (int)info.kernels, want_kernels);
    hg_buffer b[4], bo[3];
    hg_tensor ins[4], outs[3];
    for (int k = 0; k < 4; k++) ins[k] = tensor(2, shape, v[k], &b[k]);
    outs[0] = tensor(2, rshape, NULL, &bo[0]);
    outs[1] = tensor(2, shape, NULL, &bo[1]);
    outs[2] = tensor(2, shape, NULL, &bo[2]);
    float *u1 = malloc((size_t)R * 4), *u2 = malloc((size_t)n * 4);
    for (int k = 0; k < 2; k++) {
        CHECK_OK(hg_plan_run(p[k], 4, ins, t_out ? 3 : 2, outs));
        CHECK_OK(hg_buffer_read(bo[0], 0, k ? u1 : y1, (size_t)R));
        CHECK_OK(hg_buffer_read(bo[1], 0, k ? u2 : y2, (size_t)n));
    }
    CHECK(memcmp(y1, u1, (size_t)R * 4) == 0 && memcmp(y2, u2, (size_t)n * 4) == 0);
    CHECK_MSG(close_to(y1, r1, R, 1e-5) && close_to(y2, r2, n, 1e-6),
              "shared t (costly %d, output %d) differs from float64", costly, t_out);
    for (int k = 0; k < 2; k++) CHECK_OK(hg_plan_destroy(p[k]));
    CHECK_OK(hg_graph_destroy(g));
    for (int k = 0; k < 4; k++) { hg_buffer_destroy(b[k]); free(v[k]); }
    for (int k = 0; k < 3; k++) hg_buffer_destroy(bo[k]);
    free(y1); free(y2); free(u1); free(u2); free(r1); free(r2);
}

// y = x * r + x with r [blocks, rows, 1]: a fused kernel whose input holds one value per row
// (spread into the grouped rows of the row launch), rows and columns around a group's size, 1
// and 3 blocks, f32 / f64 / i32, exact small integers against a float64 reference.
static void test_row_values(hg_dtype t, int64_t blocks, int64_t rows, int64_t cols) {
    int64_t n = blocks * rows * cols, shape[3] = {blocks, rows, cols}, rshape[3] = {blocks, rows, 1};
    int64_t nr = blocks * rows;
    size_t es = t == HG_DTYPE_F64 ? 8 : 4;
    unsigned char *xv = malloc((size_t)n * es), *rv = malloc((size_t)nr * es), *yv = malloc((size_t)n * es);
    double *hx = malloc((size_t)n * 8), *hr = malloc((size_t)nr * 8);
    for (int64_t i = 0; i < n + nr; i++) {
        double v = (double)((int64_t)(hg_test_rand(&g_rng) % 41) - 20);
        unsigned char* dst = i < n ? xv + (size_t)i * es : rv + (size_t)(i - n) * es;
        if (i < n) hx[i] = v; else hr[i - n] = v;
        if (t == HG_DTYPE_F32) { float f = (float)v; memcpy(dst, &f, 4); }
        else if (t == HG_DTYPE_F64) memcpy(dst, &v, 8);
        else { int32_t k = (int32_t)v; memcpy(dst, &k, 4); }
    }
    hg_graph g;
    int32_t x, r, y;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, t, 3, shape, &x));
    CHECK_OK(hg_graph_input(g, t, 3, rshape, &r));
    y = bin(g, HG_BINARY_ADD, bin(g, HG_BINARY_MUL, x, r), x);
    CHECK_OK(hg_graph_output(g, y));
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    hg_buffer bx, br, by;
    hg_tensor tx, tr, ty;
    CHECK_OK(hg_buffer_create(g_ex, t, (size_t)n, &bx));
    CHECK_OK(hg_buffer_create(g_ex, t, (size_t)nr, &br));
    CHECK_OK(hg_buffer_create(g_ex, t, (size_t)n, &by));
    CHECK_OK(hg_buffer_write(bx, 0, xv, (size_t)n));
    CHECK_OK(hg_buffer_write(br, 0, rv, (size_t)nr));
    CHECK_OK(hg_tensor_from_buffer(bx, 3, shape, &tx));
    CHECK_OK(hg_tensor_from_buffer(br, 3, rshape, &tr));
    CHECK_OK(hg_tensor_from_buffer(by, 3, shape, &ty));
    CHECK_OK(hg_plan_run(p, 2, (hg_tensor[]){tx, tr}, 1, &ty));
    CHECK_OK(hg_buffer_read(by, 0, yv, (size_t)n));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double want = hx[i] * hr[i / cols] + hx[i], got;
        if (t == HG_DTYPE_F32) { float f; memcpy(&f, yv + (size_t)i * 4, 4); got = f; }
        else if (t == HG_DTYPE_F64) memcpy(&got, yv + (size_t)i * 8, 8);
        else { int32_t k; memcpy(&k, yv + (size_t)i * 4, 4); got = k; }
        bad += got != want;
    }
    CHECK_MSG(bad == 0, "x * r + x, %s (%lld, %lld, %lld): %lld elements wrong", hg_dtype_name(t),
              (long long)blocks, (long long)rows, (long long)cols, (long long)bad);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(bx); hg_buffer_destroy(br); hg_buffer_destroy(by);
    free(xv); free(rv); free(yv); free(hx); free(hr);
}

// y = x * s * v with x a slice [blocks, rows, cols] of [blocks, rows + 3, cols] (its blocks do
// not collapse with its rows), s [blocks, 1, 1] (one value per block: no stride between a
// block's rows) and v [cols] (a repeated row): grouped rows with s spread from a stride of 0.
static void test_block_values(int64_t blocks, int64_t rows, int64_t cols) {
    int64_t full[3] = {blocks, rows + 3, cols}, shape[3] = {blocks, rows, cols};
    int64_t sshape[3] = {blocks, 1, 1}, vshape[1] = {cols};
    int64_t nf = blocks * (rows + 3) * cols, n = blocks * rows * cols;
    float *xv = malloc((size_t)nf * 4), *sv = malloc((size_t)blocks * 4), *vv = malloc((size_t)cols * 4);
    float* yv = malloc((size_t)n * 4);
    for (int64_t i = 0; i < nf; i++) xv[i] = (float)((int64_t)(hg_test_rand(&g_rng) % 41) - 20);
    for (int64_t i = 0; i < blocks; i++) sv[i] = (float)((int64_t)(hg_test_rand(&g_rng) % 9) - 4);
    for (int64_t i = 0; i < cols; i++) vv[i] = (float)((int64_t)(hg_test_rand(&g_rng) % 9) - 4);
    hg_graph g;
    int32_t x, sc, v;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, shape, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, sshape, &sc));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, vshape, &v));
    CHECK_OK(hg_graph_output(g, bin(g, HG_BINARY_MUL, bin(g, HG_BINARY_MUL, x, sc), v)));
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    hg_buffer bx, bs, bv, by;
    hg_tensor tf, tx, ts, tv, ty;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)nf, &bx));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)blocks, &bs));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)cols, &bv));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)n, &by));
    CHECK_OK(hg_buffer_write(bx, 0, xv, (size_t)nf));
    CHECK_OK(hg_buffer_write(bs, 0, sv, (size_t)blocks));
    CHECK_OK(hg_buffer_write(bv, 0, vv, (size_t)cols));
    CHECK_OK(hg_tensor_from_buffer(bx, 3, full, &tf));
    CHECK_OK(hg_tensor_slice(&tf, 1, 0, rows, 1, &tx));
    CHECK_OK(hg_tensor_from_buffer(bs, 3, sshape, &ts));
    CHECK_OK(hg_tensor_from_buffer(bv, 1, vshape, &tv));
    CHECK_OK(hg_tensor_from_buffer(by, 3, shape, &ty));
    CHECK_OK(hg_plan_run(p, 3, (hg_tensor[]){tx, ts, tv}, 1, &ty));
    CHECK_OK(hg_buffer_read(by, 0, yv, (size_t)n));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = i % cols, r = i / cols % rows, b = i / (rows * cols);
        double want = (double)xv[(b * (rows + 3) + r) * cols + c] * sv[b] * vv[c];
        bad += (double)yv[i] != want;
    }
    CHECK_MSG(bad == 0, "x * s * v, (%lld, %lld, %lld) with s per block: %lld elements wrong",
              (long long)blocks, (long long)rows, (long long)cols, (long long)bad);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(bx); hg_buffer_destroy(bs); hg_buffer_destroy(bv); hg_buffer_destroy(by);
    free(xv); free(sv); free(vv); free(yv);
}

// Llama's SiLU backward with the matmul between its two gradients: s = sigmoid(x) (costly),
// du = g * (x * s) read by a matmul m = du @ w, dx = g * u * s * (1 + x * (1 - s)). du's and
// dx's kernels are siblings (one shape, both read g, x and s): one kernel at du's place
// computes s, du and dx (s no longer stored). With late, dx also adds m, which the matmul
// makes after du's place: dx stays apart, s and du are one kernel (s stored for dx's). Values
// bit for bit those of the unfused plan and within 1e-5 of a double reference.
static void test_siblings(int late) {
    const int64_t R = 64, H = 96, n = R * H, shape[2] = {R, H}, wshape[2] = {H, H};
    float *v[4], *y[2][2];
    for (int k = 0; k < 4; k++) {
        v[k] = malloc((size_t)(k == 3 ? H * H : n) * 4);
        for (int64_t i = 0; i < (k == 3 ? H * H : n); i++) v[k][i] = (float)drand();
    }
    hg_graph g;
    int32_t in[4], s, du, m, dx;
    CHECK_OK(hg_graph_create(&g));
    for (int k = 0; k < 4; k++) CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, k == 3 ? wshape : shape, &in[k]));
    int32_t x = in[0], gr = in[1], up = in[2], w = in[3], one;
    CHECK_OK(hg_graph_unary(g, HG_UNARY_SIGMOID, x, &s));
    du = bin(g, HG_BINARY_MUL, gr, bin(g, HG_BINARY_MUL, x, s));
    CHECK_OK(hg_graph_matmul(g, du, w, &m));
    CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(1.0), &one));
    int32_t inner = bin(g, HG_BINARY_ADD, one, bin(g, HG_BINARY_MUL, x, bin(g, HG_BINARY_SUB, one, s)));
    dx = bin(g, HG_BINARY_MUL, bin(g, HG_BINARY_MUL, bin(g, HG_BINARY_MUL, gr, up), s), inner);
    if (late) dx = bin(g, HG_BINARY_ADD, dx, m);
    CHECK_OK(hg_graph_output(g, m));
    CHECK_OK(hg_graph_output(g, dx));
    hg_plan p[2];
    hg_plan_info info;
    compile_both(g, p, &info);
    CHECK_MSG(info.kernels == (late ? 2 : 1), "siblings (late %d): %d kernels, want %d", late,
              (int)info.kernels, late ? 2 : 1);
    hg_buffer b[4], bo[2];
    hg_tensor ins[4], outs[2];
    for (int k = 0; k < 4; k++) ins[k] = tensor(2, k == 3 ? wshape : shape, v[k], &b[k]);
    outs[0] = tensor(2, shape, NULL, &bo[0]);
    outs[1] = tensor(2, shape, NULL, &bo[1]);
    for (int k = 0; k < 2; k++) {
        CHECK_OK(hg_plan_run(p[k], 4, ins, 2, outs));
        for (int o = 0; o < 2; o++) {
            y[k][o] = malloc((size_t)n * 4);
            CHECK_OK(hg_buffer_read(bo[o], 0, y[k][o], (size_t)n));
        }
    }
    double* ref = malloc((size_t)n * 8);
    double* mref = malloc((size_t)n * 8);
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < H; c++) {
            double acc = 0;
            for (int64_t k = 0; k < H; k++) {
                double xv = v[0][r * H + k], sv = 1.0 / (1.0 + exp(-xv));
                acc += v[1][r * H + k] * xv * sv * v[3][k * H + c];
            }
            mref[r * H + c] = acc;
            int64_t i = r * H + c;
            double xv = v[0][i], sv = 1.0 / (1.0 + exp(-xv));
            ref[i] = v[1][i] * v[2][i] * sv * (1.0 + xv * (1.0 - sv)) + (late ? acc : 0.0);
        }
    CHECK(memcmp(y[0][0], y[1][0], (size_t)n * 4) == 0 && memcmp(y[0][1], y[1][1], (size_t)n * 4) == 0);
    CHECK_MSG(close_to(y[0][0], mref, n, 1e-5) && close_to(y[0][1], ref, n, 1e-5),
              "siblings (late %d): values off the double reference", late);
    for (int k = 0; k < 2; k++) {
        CHECK_OK(hg_plan_destroy(p[k]));
        free(y[k][0]);
        free(y[k][1]);
    }
    for (int k = 0; k < 4; k++) { hg_buffer_destroy(b[k]); free(v[k]); }
    hg_buffer_destroy(bo[0]);
    hg_buffer_destroy(bo[1]);
    CHECK_OK(hg_graph_destroy(g));
    free(ref);
    free(mref);
}

int main(void) {
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_ex));
    // x*x; rsqrt(mean + eps) at (4, 64, 1); w * (x * r)
    test_rms_forward(4, 64, 256, 3);
    test_rms_forward(2, 4, 16, 2);      // 128 elements: rsqrt recomputed inline
    test_rms_forward(3, 5, 1000, 3);    // rows not a multiple of any block
    // (dy*w)*x (the sum's operand); the (4, 64, 1) scalars; dx (dy*w recomputed in both)
    test_rms_backward(4, 64, 256, 3);
    test_rms_backward(2, 4, 16, 2);
    // t = a + b read by two kernels: recomputed by both unless costly; an output t is stored by the
    // kernel of its first reader
    test_shared(0, 0, 0, 2);
    // costly or an output, t is computed once: the two readers are sibling kernels (one shape,
    // t read by both) run as one kernel at the first's place, t joining them (pass_fuse.c
    // merge_siblings; an output t is one of its stored values)
    test_shared(1, 0, 0, 1);
    test_shared(0, 1, 0, 1);
    test_shared(0, 0, 1, 2);   // t and u both recomputed by the two kernels
    test_siblings(0);
    test_siblings(1);
    static const int64_t cols_list[] = {8, 31, 256, 1000, 2048, 2049};
    static const hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_I32};
    for (int ci = 0; ci < 6; ci++) {
        int64_t cols = cols_list[ci], k = 8192 / cols > 1 ? 8192 / cols : 1;   // rows per group
        const int64_t rows_list[] = {1, 9, k - 1, k, k + 1, 2 * k + 3};
        for (int ri = 0; ri < 6; ri++)
            if (rows_list[ri] >= 1 && rows_list[ri] * cols <= 70000)
                test_row_values(dts[(ci + ri) % 3], 1 + 2 * (ri % 2), rows_list[ri], cols);
    }
    test_block_values(3, 100, 64);
    test_block_values(2, 1000, 31);
    test_block_values(4, 33, 256);
    test_scalar_member(1 << 16, 2);
    test_scalar_member(1000, 1);
    CHECK_OK(hg_executor_destroy(g_ex));
    return hg_test_finish("test_graph_schedule");
}
