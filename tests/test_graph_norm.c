// Graph norm nodes: hg_graph_norm (layer / rms norm as one library step of the plan) and
// hg_graph_norm_stat (the mean and rstd that step writes from the same pass), against float64
// math on random rows and rows of one value, +-1e30 and -0; strided and empty outputs; every
// refused argument with its status and message.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/handles.h"
#include "hg_test.h"

static hg_executor g_ex;
static uint64_t g_rng = 99;

static float frand(void) { return (float)((double)(hg_test_rand(&g_rng) % 2000001) / 1e5 - 10.0); }

static int msg_has(const char* s) { return strstr(hg_last_error(), s) != NULL; }

// An f32 tensor of shape (ndim, shape) on a new buffer, holding data (NULL: uninitialized).
static hg_tensor f32_tensor(int32_t ndim, const int64_t* shape, const float* data,
                            hg_buffer* buf) {
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; d++) n *= shape[d];
    hg_tensor t;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)n, buf));
    if (data) CHECK_OK(hg_buffer_write(*buf, 0, data, (size_t)n));
    CHECK_OK(hg_tensor_from_buffer(*buf, ndim, shape, &t));
    return t;
}

// The norm node: layer norm / rms norm of (x + 1) over the last 1 or 2 dims of a (3, 4, 6)
// input, with weight and bias or without, times 2: kernel, library norm step, kernel; against
// float64 math on random values and on rows of one repeated value (variance 0), 1e30 (the
// squared deviations overflow f32) and -0.
static void test_norm_node(void) {
    const int64_t sh[3] = {3, 4, 6};
    for (int variant = 0; variant < 8; variant++) {
        int rms = variant & 1, affine = (variant >> 1) & 1, nnorm = 1 + ((variant >> 2) & 1);
        int64_t R = nnorm == 1 ? 6 : 24, rows = 72 / R;
        hg_graph g;
        int32_t x, w = -1, b = -1, one, x1, y, two, out;
        CHECK_OK(hg_graph_create(&g));
        CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, sh, &x));
        if (affine) CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, nnorm, sh + 3 - nnorm, &w));
        if (affine && !rms) CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, nnorm, sh + 3 - nnorm, &b));
        CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(1.0), &one));
        CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(2.0), &two));
        CHECK_OK(hg_graph_binary(g, HG_BINARY_ADD, x, one, &x1));
        CHECK_OK(hg_graph_norm(g, x1, nnorm, w, b, 1e-5, rms, &y));
        CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, y, two, &out));
        CHECK_OK(hg_graph_output(g, out));
        hg_plan p;
        CHECK_OK(hg_graph_compile(g, g_ex, &p));
        hg_plan_info info;
        CHECK_OK(hg_plan_info_get(p, &info));
        CHECK_MSG(info.library_calls == 1 && info.kernels == 2, "variant %d: %d calls, %d kernels",
                  variant, (int)info.library_calls, (int)info.kernels);
        float xv[72], wv[24], bv[24], got[72];
        for (int i = 0; i < 72; i++) xv[i] = frand();
        for (int i = 0; i < 24; i++) wv[i] = frand() / 4, bv[i] = frand();
        for (int i = 0; i < R; i++) xv[i] = 2.5f;                    // row 0: variance 0
        if (rows > 2) for (int i = 0; i < R; i++) xv[R + i] = i % 2 ? 1e30f : -1e30f;
        xv[2 * R] = -0.0f;
        hg_buffer bx, bw, bb, bo;
        hg_tensor tx, tw, tb, to, ins[3];
        tx = f32_tensor(3, sh, xv, &bx);
        to = f32_tensor(3, sh, NULL, &bo);
        tw = f32_tensor(nnorm, sh + 3 - nnorm, wv, &bw);
        tb = f32_tensor(nnorm, sh + 3 - nnorm, bv, &bb);
        int nin = 0;
        ins[nin++] = tx;
        if (affine) ins[nin++] = tw;
        if (affine && !rms) ins[nin++] = tb;
        CHECK_OK(hg_plan_run(p, nin, ins, 1, &to));
        CHECK_OK(hg_buffer_read(bo, 0, got, 72));
        int bad = 0;
        for (int64_t r = 0; r < rows; r++) {
            double mean = 0, var = 0;
            const float* xr = xv + r * R;
            for (int64_t i = 0; i < R; i++) mean += (double)(xr[i] + 1.0f);
            mean = rms ? 0.0 : mean / (double)R;
            for (int64_t i = 0; i < R; i++) {
                double d = (double)(xr[i] + 1.0f) - mean;
                var += d * d;
            }
            double rstd = 1.0 / sqrt(var / (double)R + 1e-5);
            for (int64_t i = 0; i < R; i++) {
                double want = ((double)(xr[i] + 1.0f) - mean) * rstd;
                if (affine) want = want * wv[i] + (rms ? 0.0 : bv[i]);
                want *= 2.0;
                double tol = 1e-5 * (1.0 + fabs(want)) + (affine ? 1e-5 * fabs(wv[i]) * 8 : 0.0);
                if (!(fabs((double)got[r * R + i] - want) <= tol)) {
                    if (bad++ < 3)
                        fprintf(stderr, "norm variant %d row %lld [%lld]: %g, want %g\n", variant,
                                (long long)r, (long long)i, (double)got[r * R + i], want);
                }
            }
        }
        CHECK_MSG(bad == 0, "norm variant %d: %d wrong values", variant, bad);
        hg_buffer_destroy(bx); hg_buffer_destroy(bw); hg_buffer_destroy(bb); hg_buffer_destroy(bo);
        CHECK_OK(hg_plan_destroy(p));
        CHECK_OK(hg_graph_destroy(g));
    }
    // Bad arguments: each refused with its status, the graph unchanged.
    hg_graph g;
    int32_t x, xi, w, wb, t;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, sh, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_I32, 3, sh, &xi));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, sh + 2, &w));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, sh + 1, &wb));
    CHECK_STATUS(hg_graph_norm(g, xi, 1, -1, -1, 1e-5, 0, &t), HG_ERR_DTYPE_MISMATCH);
    CHECK(msg_has("expected a float dtype"));
    CHECK_STATUS(hg_graph_norm(g, x, 0, -1, -1, 1e-5, 0, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_norm(g, x, 4, -1, -1, 1e-5, 0, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK(msg_has("nnorm 4 is out of range"));
    CHECK_STATUS(hg_graph_norm(g, x, 1, -1, -1, -1.0, 0, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_norm(g, x, 1, -1, -1, NAN, 0, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_norm(g, x, 1, w, w, 1e-5, 1, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK(msg_has("rms_norm takes no bias"));
    CHECK_STATUS(hg_graph_norm(g, x, 1, wb, -1, 1e-5, 0, &t), HG_ERR_SIZE_MISMATCH);
    CHECK_MSG(msg_has("'weight' is f32(4,); expected f32(6,)"), "%s", hg_last_error());
    CHECK_STATUS(hg_graph_norm(g, x, 1, w, 99, 1e-5, 0, &t), HG_ERR_OUT_OF_RANGE);
    CHECK_OK(hg_graph_norm(g, x, 1, w, w, 1e-5, 0, &t));
    char* text = NULL;
    CHECK_OK(hg_graph_print(g, &text));
    CHECK(text && strstr(text, "layer_norm %0, %2, %2 dims=1 eps=1e-05 weight bias : f32(3, 4, 6)"));
    free(text);
    CHECK_OK(hg_graph_destroy(g));
}

// The norm's statistics (hg_graph_norm_stat): layer norm of (x + 1) over the last 1 or 2 dims of
// a (3, 4, 6) input, its output times 2, its mean (into a strided output: every other element)
// and rstd * 3 (a kernel reading the statistic) as outputs; one norm step writes all three.
// Against float64 math on random rows, a row of one value (variance 0) and one of +-1e30.
static void test_norm_stat_node(void) {
    const int64_t sh[3] = {3, 4, 6};
    for (int nnorm = 1; nnorm <= 2; nnorm++) {
        int64_t R = nnorm == 1 ? 6 : 24, rows = 72 / R;
        int64_t ssh[3] = {3, nnorm == 1 ? 4 : 1, 1};
        hg_graph g;
        int32_t x, w, b, one, two, three, x1, y, mean, rstd, mean2, y2, r3, t;
        CHECK_OK(hg_graph_create(&g));
        CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, sh, &x));
        CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, nnorm, sh + 3 - nnorm, &w));
        CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, nnorm, sh + 3 - nnorm, &b));
        CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(1.0), &one));
        CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(2.0), &two));
        CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(3.0), &three));
        CHECK_OK(hg_graph_binary(g, HG_BINARY_ADD, x, one, &x1));
        CHECK_OK(hg_graph_norm(g, x1, nnorm, w, b, 1e-5, 0, &y));
        CHECK_OK(hg_graph_norm_stat(g, y, 0, &mean));
        CHECK_OK(hg_graph_norm_stat(g, y, 1, &rstd));
        CHECK_OK(hg_graph_norm_stat(g, y, 0, &mean2));   // hash-consed: the same node
        CHECK(mean2 == mean);
        hg_dtype dt;
        int32_t nd;
        int64_t got_shape[HG_MAX_DIMS];
        CHECK_OK(hg_graph_node_info(g, rstd, &dt, &nd, got_shape));
        CHECK(dt == HG_DTYPE_F32 && nd == 3 && got_shape[0] == 3 && got_shape[1] == ssh[1] &&
              got_shape[2] == 1);
        CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, y, two, &y2));
        CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, rstd, three, &r3));
        CHECK_OK(hg_graph_output(g, y2));
        CHECK_OK(hg_graph_output(g, mean));
        CHECK_OK(hg_graph_output(g, r3));
        hg_plan p;
        CHECK_OK(hg_graph_compile(g, g_ex, &p));
        hg_plan_info info;
        CHECK_OK(hg_plan_info_get(p, &info));
        CHECK_MSG(info.library_calls == 1, "nnorm %d: %d library calls", nnorm,
                  (int)info.library_calls);
        float xv[72], wv[24], bv[24], got[72], gm[24], gr[12];
        for (int i = 0; i < 72; i++) xv[i] = frand();
        for (int i = 0; i < 24; i++) wv[i] = frand() / 4, bv[i] = frand();
        for (int i = 0; i < R; i++) xv[i] = 2.5f;                             // variance 0
        for (int i = 0; i < R; i++) xv[R + i] = i % 2 ? 1e30f : -1e30f;       // overflows f32
        int64_t nstat = rows;
        hg_buffer bx, bw, bb, bo, bm, br;
        hg_tensor tx, tw, tb, to, tm, tr;
        tx = f32_tensor(3, sh, xv, &bx);
        tw = f32_tensor(nnorm, sh + 3 - nnorm, wv, &bw);
        tb = f32_tensor(nnorm, sh + 3 - nnorm, bv, &bb);
        to = f32_tensor(3, sh, NULL, &bo);
        tm = f32_tensor(1, (int64_t[1]){2 * nstat}, (float[24]){0}, &bm);
        tm.ndim = 3;   // every other element: a strided output
        memcpy(tm.shape, ssh, sizeof ssh);
        tm.strides[0] = 2 * ssh[1], tm.strides[1] = 2, tm.strides[2] = 1;
        tr = f32_tensor(3, ssh, NULL, &br);
        hg_tensor ins[3] = {tx, tw, tb}, outs[3] = {to, tm, tr};
        CHECK_OK(hg_plan_run(p, 3, ins, 3, outs));
        CHECK_OK(hg_buffer_read(bo, 0, got, 72));
        CHECK_OK(hg_buffer_read(bm, 0, gm, (size_t)(2 * nstat)));
        CHECK_OK(hg_buffer_read(br, 0, gr, (size_t)nstat));
        int bad = 0;
        for (int64_t r = 0; r < rows; r++) {
            double m = 0, var = 0;
            const float* xr = xv + r * R;
            for (int64_t i = 0; i < R; i++) m += (double)(xr[i] + 1.0f);
            m /= (double)R;
            for (int64_t i = 0; i < R; i++) var += ((double)(xr[i] + 1.0f) - m) * ((double)(xr[i] + 1.0f) - m);
            double rs = 1.0 / sqrt(var / (double)R + 1e-5);
            if (!(fabs(gm[2 * r] - m) <= 1e-6 * (1.0 + fabs(m))) || gm[2 * r + 1] != 0.0f) bad++;
            if (!(fabs(gr[r] - 3.0 * rs) <= 1e-5 * 3.0 * rs)) bad++;
            for (int64_t i = 0; i < R; i++) {
                double want = 2.0 * (((double)(xr[i] + 1.0f) - m) * rs * wv[i] + bv[i]);
                if (!(fabs((double)got[r * R + i] - want) <= 1e-5 * (1.0 + fabs(want)))) bad++;
            }
            if (bad) fprintf(stderr, "norm_stat nnorm %d row %lld: mean %g want %g, rstd*3 %g "
                             "want %g\n", nnorm, (long long)r, (double)gm[2 * r], m,
                             (double)gr[r], 3.0 * rs);
        }
        CHECK_MSG(bad == 0, "norm_stat nnorm %d: %d wrong values", nnorm, bad);
        hg_buffer_destroy(bx); hg_buffer_destroy(bw); hg_buffer_destroy(bb);
        hg_buffer_destroy(bo); hg_buffer_destroy(bm); hg_buffer_destroy(br);
        // Bad arguments: refused with their status.
        int32_t r1;
        CHECK_OK(hg_graph_norm(g, x1, nnorm, w, -1, 1e-5, 1, &r1));
        CHECK_STATUS(hg_graph_norm_stat(g, r1, 1, &t), HG_ERR_INVALID_ARGUMENT);
        CHECK_MSG(msg_has("is rms_norm; expected a layer norm node"), "%s", hg_last_error());
        CHECK_STATUS(hg_graph_norm_stat(g, x1, 0, &t), HG_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(hg_graph_norm_stat(g, y, 2, &t), HG_ERR_INVALID_ARGUMENT);
        CHECK(msg_has("expected 0 (mean) or 1 (rstd)"));
        CHECK_STATUS(hg_graph_norm_stat(g, 999, 0, &t), HG_ERR_OUT_OF_RANGE);
        char* text = NULL;
        CHECK_OK(hg_graph_print(g, &text));
        CHECK_MSG(text && strstr(text, "norm_rstd %"), "%s", text ? text : "");
        free(text);
        CHECK_OK(hg_plan_destroy(p));
        CHECK_OK(hg_graph_destroy(g));
    }
    // Rows of no element: torch's statistics, mean 0 and rstd NaN.
    hg_graph g;
    int32_t x, y, m, r;
    const int64_t esh[2] = {2, 0}, ssh[2] = {2, 1};
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, esh, &x));
    CHECK_OK(hg_graph_norm(g, x, 1, -1, -1, 1e-5, 0, &y));
    CHECK_OK(hg_graph_norm_stat(g, y, 0, &m));
    CHECK_OK(hg_graph_norm_stat(g, y, 1, &r));
    CHECK_OK(hg_graph_output(g, m));
    CHECK_OK(hg_graph_output(g, r));
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    hg_buffer bx, bm, br;
    hg_tensor ins[1], outs[2];
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 1, &bx));
    CHECK_OK(hg_tensor_view(bx, 2, esh, NULL, 0, &ins[0]));
    outs[0] = f32_tensor(2, ssh, NULL, &bm);
    outs[1] = f32_tensor(2, ssh, NULL, &br);
    CHECK_OK(hg_plan_run(p, 1, ins, 2, outs));
    float gm[2] = {1, 1}, gr[2] = {0, 0};
    CHECK_OK(hg_buffer_read(bm, 0, gm, 2));
    CHECK_OK(hg_buffer_read(br, 0, gr, 2));
    CHECK(gm[0] == 0.0f && gm[1] == 0.0f && isnan(gr[0]) && isnan(gr[1]));
    hg_buffer_destroy(bx); hg_buffer_destroy(bm); hg_buffer_destroy(br);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
}

int main(void) {
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_ex));
    test_norm_node();
    test_norm_stat_node();
    CHECK(hg_handle_live_count(HG_HANDLE_PLAN) == 0);
    CHECK(hg_handle_live_count(HG_HANDLE_GRAPH) == 0);
    CHECK_OK(hg_executor_destroy(g_ex));
    return hg_test_finish("test_graph_norm");
}
