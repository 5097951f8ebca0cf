// Graph API and plans: the fused chain relu(a*b + c) * 0.5 (one kernel, bit-exact against
// per-op f32 rounding, fused = unfused), CSE / DCE / constant folding, multi-output graphs,
// outputs that are inputs or listed twice, reshape (view and copy paths), strided and
// negative-stride tensors, buffer reuse (peak_bytes), plan reuse and two threads on one plan,
// library nodes (reduce / softmax / matmul) against the eager ops, HOLOGRAM_DUMP=passes, and
// every error path with its status and message. The norm nodes: test_graph_norm.c.
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/handles.h"
#include "graph/graph_internal.h"
#include "hg_test.h"

static hg_executor g_ex;
static uint64_t g_rng = 99;

static float frand(void) { return (float)((double)(hg_test_rand(&g_rng) % 2000001) / 1e5 - 10.0); }

static hg_tensor make_f32(int64_t n, const float* data, hg_buffer* buf) {
    hg_tensor t;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)n, buf));
    if (data) CHECK_OK(hg_buffer_write(*buf, 0, data, (size_t)n));
    CHECK_OK(hg_tensor_from_buffer(*buf, 1, (int64_t[]){n}, &t));
    return t;
}

static int msg_has(const char* s) { return strstr(hg_last_error(), s) != NULL; }

// relu(a*b + c) * 0.5 with each op rounded to f32, as the kernels do.
static float chain_ref(float a, float b, float c) {
    float t = (float)((double)a * (double)b);
    t = (float)((double)t + (double)c);
    t = t > 0.0f ? t : (t == t ? 0.0f : t);
    return (float)((double)t * 0.5);
}

static hg_graph chain_graph(int64_t n) {
    hg_graph g;
    int32_t a, b, c, t, y;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &a));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &b));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &c));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, a, b, &t));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_ADD, t, c, &t));
    CHECK_OK(hg_graph_unary(g, HG_UNARY_RELU, t, &t));
    CHECK_OK(hg_graph_binary_scalar(g, HG_BINARY_MUL, t, hg_scalar_f(0.5), 0, &y));
    CHECK_OK(hg_graph_output(g, y));
    return g;
}

static void test_chain(void) {
    const int64_t n = 1000;
    float a[1000], b[1000], c[1000], y[1000], y2[1000];
    for (int i = 0; i < n; i++) { a[i] = frand(); b[i] = frand(); c[i] = frand(); }
    a[0] = NAN; b[1] = INFINITY; c[2] = -0.0f; a[3] = -0.0f; b[3] = 1.0f; c[3] = -0.0f;
    hg_buffer ba, bb, bc, by;
    hg_tensor ta = make_f32(n, a, &ba), tb = make_f32(n, b, &bb), tc = make_f32(n, c, &bc);
    hg_tensor ty = make_f32(n, NULL, &by);
    hg_graph g = chain_graph(n);
    hg_plan plan, unfused;
    CHECK_OK(hg_graph_compile(g, g_ex, &plan));
    hg_plan_info info;
    CHECK_OK(hg_plan_info_get(plan, &info));
    CHECK(info.kernels == 1 && info.library_calls == 0);
    CHECK(info.nodes == 8);   // 3 inputs, const, mul, add, relu, mul
    CHECK(info.peak_bytes == 0);
    CHECK_OK(hg_plan_run(plan, 3, (hg_tensor[]){ta, tb, tc}, 1, &ty));
    CHECK_OK(hg_buffer_read(by, 0, y, (size_t)n));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float r = chain_ref(a[i], b[i], c[i]);
        if (memcmp(&r, &y[i], 4) && !(isnan(r) && isnan(y[i]))) bad++;
    }
    CHECK_MSG(bad == 0, "%d elements differ from the per-op f32 reference", bad);
    CHECK(isnan(y[0]) && y[3] == 0.0f && !signbit(y[3]));
    // HOLOGRAM_DISABLE_FUSION=1: one kernel per op, same bits.
    setenv("HOLOGRAM_DISABLE_FUSION", "1", 1);
    CHECK_OK(hg_graph_compile(g, g_ex, &unfused));
    unsetenv("HOLOGRAM_DISABLE_FUSION");
    CHECK_OK(hg_plan_info_get(unfused, &info));
    CHECK(info.kernels == 4);
    // Three intermediates, at most two alive at once (mul's result dies after add).
    CHECK_MSG(info.peak_bytes == 2 * (uint64_t)n * 4, "peak %llu", (unsigned long long)info.peak_bytes);
    CHECK_OK(hg_plan_run(unfused, 3, (hg_tensor[]){ta, tb, tc}, 1, &ty));
    CHECK_OK(hg_buffer_read(by, 0, y2, (size_t)n));
    CHECK(memcmp(y, y2, sizeof y) == 0);
    // Negative strides and an offset: a reversed view of a.
    hg_tensor ra;
    CHECK_OK(hg_tensor_slice(&ta, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &ra));
    CHECK_OK(hg_plan_run(plan, 3, (hg_tensor[]){ra, tb, tc}, 1, &ty));
    CHECK_OK(hg_buffer_read(by, 0, y, (size_t)n));
    bad = 0;
    for (int i = 0; i < n; i++) {
        float r = chain_ref(a[n - 1 - i], b[i], c[i]);
        if (memcmp(&r, &y[i], 4) && !(isnan(r) && isnan(y[i]))) bad++;
    }
    CHECK(bad == 0);
    // A strided output (every other element of a 2n buffer).
    hg_buffer b2;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 2 * (size_t)n, &b2));
    hg_tensor t2;
    CHECK_OK(hg_tensor_view(b2, 1, (int64_t[]){n}, (int64_t[]){2}, 1, &t2));
    CHECK_OK(hg_plan_run(plan, 3, (hg_tensor[]){ta, tb, tc}, 1, &t2));
    float* big = malloc(2 * (size_t)n * 4);
    CHECK_OK(hg_buffer_read(b2, 0, big, 2 * (size_t)n));
    bad = 0;
    for (int i = 0; i < n; i++) {
        float r = chain_ref(a[i], b[i], c[i]);
        if (big[2 * i] != 0.0f || (memcmp(&r, &big[2 * i + 1], 4) && !(isnan(r) && isnan(big[2 * i + 1])))) bad++;
    }
    CHECK(bad == 0);
    free(big);
    // In place: the output is exactly input a (computed into temporary memory, then copied).
    CHECK_OK(hg_plan_run(plan, 3, (hg_tensor[]){ta, tb, tc}, 1, &ta));
    float* inpl = malloc((size_t)n * 4);
    CHECK_OK(hg_buffer_read(ba, 0, inpl, (size_t)n));
    bad = 0;
    for (int i = 0; i < n; i++) {
        float r = chain_ref(a[i], b[i], c[i]);
        if (memcmp(&r, &inpl[i], 4) && !(isnan(r) && isnan(inpl[i]))) bad++;
    }
    CHECK(bad == 0);
    free(inpl);
    CHECK_OK(hg_buffer_write(ba, 0, a, (size_t)n));
    // A partial overlap with an input: numpy's rule, as if the input were read first.
    hg_tensor shifted;
    CHECK_OK(hg_tensor_view(bb, 1, (int64_t[]){n - 1}, NULL, 1, &shifted));
    hg_graph gs;
    int32_t si, so;
    CHECK_OK(hg_graph_create(&gs));
    CHECK_OK(hg_graph_input(gs, HG_DTYPE_F32, 1, (int64_t[]){n - 1}, &si));
    CHECK_OK(hg_graph_unary(gs, HG_UNARY_NEG, si, &so));
    CHECK_OK(hg_graph_output(gs, so));
    hg_plan ps;
    CHECK_OK(hg_graph_compile(gs, g_ex, &ps));
    hg_tensor head;
    CHECK_OK(hg_tensor_view(bb, 1, (int64_t[]){n - 1}, NULL, 0, &head));
    CHECK_OK(hg_plan_run(ps, 1, &shifted, 1, &head));
    float bcheck[1000];
    CHECK_OK(hg_buffer_read(bb, 0, bcheck, (size_t)n));
    bad = 0;
    for (int i = 0; i < n - 1; i++) bad += bcheck[i] != -b[i + 1];
    CHECK(bad == 0 && bcheck[n - 1] == b[n - 1]);
    CHECK_OK(hg_buffer_write(bb, 0, b, (size_t)n));
    CHECK_OK(hg_plan_destroy(ps));
    CHECK_OK(hg_graph_destroy(gs));
    // The plan print names the kernel.
    char* text = NULL;
    CHECK_OK(hg_plan_print(plan, &text));
    CHECK(text && strstr(text, "step 0: kernel (4 nodes") != NULL);
    hg_free(text);
    CHECK_OK(hg_graph_print(g, &text));
    CHECK(text && strstr(text, "relu") && strstr(text, "outputs: %7"));
    hg_free(text);
    CHECK_OK(hg_plan_destroy(plan));
    CHECK_OK(hg_plan_destroy(unfused));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(ba); hg_buffer_destroy(bb); hg_buffer_destroy(bc); hg_buffer_destroy(by);
    hg_buffer_destroy(b2);
}

static void test_cse_dce_fold(void) {
    hg_graph g;
    int32_t x, t1, t2, dead, c2, c3, c5, y, s;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){16}, &x));
    // Hash-consing: the same expression twice is one node.
    CHECK_OK(hg_graph_unary(g, HG_UNARY_EXP, x, &t1));
    CHECK_OK(hg_graph_unary(g, HG_UNARY_EXP, x, &t2));
    CHECK(t1 == t2);
    CHECK_OK(hg_graph_unary(g, HG_UNARY_SIN, x, &dead));   // never used: DCE
    CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(2.0), &c2));
    CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(3.0), &c3));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_ADD, c2, c3, &c5));   // folds to 5
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, t1, c5, &y));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, y, c5, &s));     // y*5 again below: CSE
    int32_t s2;
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, y, c5, &s2));
    CHECK(s == s2);
    CHECK_OK(hg_graph_output(g, s));
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    hg_plan_info info;
    CHECK_OK(hg_plan_info_get(p, &info));
    CHECK(info.rewrites == 1);          // one fold
    CHECK(info.nodes == 5);             // x, exp, 5, mul, mul (sin and 2, 3 gone)
    CHECK(info.kernels == 1);
    float xs[16], out[16];
    for (int i = 0; i < 16; i++) xs[i] = frand() / 4;
    hg_buffer bx, bo;
    hg_tensor tx = make_f32(16, xs, &bx), to = make_f32(16, NULL, &bo);
    CHECK_OK(hg_plan_run(p, 1, &tx, 1, &to));
    CHECK_OK(hg_buffer_read(bo, 0, out, 16));
    // Against the eager ops (same kernels, so bit-exact).
    hg_tensor e1 = {0}, e2 = {0}, e3 = {0};
    CHECK_OK(hg_unary(HG_UNARY_EXP, &tx, &e1));
    CHECK_OK(hg_binary_scalar(HG_BINARY_MUL, &e1, hg_scalar_f(5.0), 0, &e2));
    CHECK_OK(hg_binary_scalar(HG_BINARY_MUL, &e2, hg_scalar_f(5.0), 0, &e3));
    float ref[16];
    CHECK_OK(hg_buffer_read(e3.buffer, 0, ref, 16));
    CHECK(memcmp(ref, out, sizeof ref) == 0);
    hg_buffer_destroy(e1.buffer); hg_buffer_destroy(e2.buffer); hg_buffer_destroy(e3.buffer);
    // A graph of constants only folds to one constant node.
    hg_graph g2;
    int32_t k1, k2, k3;
    CHECK_OK(hg_graph_create(&g2));
    CHECK_OK(hg_graph_constant(g2, HG_DTYPE_I32, hg_scalar_i(7), &k1));
    CHECK_OK(hg_graph_unary(g2, HG_UNARY_NEG, k1, &k2));
    CHECK_OK(hg_graph_binary_scalar(g2, HG_BINARY_FLOOR_DIVIDE, k2, hg_scalar_i(2), 0, &k3));
    CHECK_OK(hg_graph_output(g2, k3));
    hg_plan p2;
    CHECK_OK(hg_graph_compile(g2, g_ex, &p2));
    CHECK_OK(hg_plan_info_get(p2, &info));
    CHECK(info.nodes == 1 && info.rewrites == 2 && info.kernels == 1);
    hg_buffer bi;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_I32, 1, &bi));
    hg_tensor ti;
    CHECK_OK(hg_tensor_from_buffer(bi, 0, NULL, &ti));
    CHECK_OK(hg_plan_run(p2, 0, NULL, 1, &ti));
    int32_t v = 0;
    CHECK_OK(hg_buffer_read(bi, 0, &v, 1));
    CHECK(v == -4);   // numpy: -7 // 2 = -4
    hg_buffer_destroy(bi);
    CHECK_OK(hg_plan_destroy(p2));
    CHECK_OK(hg_graph_destroy(g2));
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(bx); hg_buffer_destroy(bo);
}

static void test_multi_output_and_copies(void) {
    const int64_t n = 64;
    hg_graph g;
    int32_t a, b, s, r, y;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &a));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &b));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_ADD, a, b, &s));
    CHECK_OK(hg_graph_unary(g, HG_UNARY_RELU, s, &r));
    CHECK_OK(hg_graph_binary_scalar(g, HG_BINARY_MUL, r, hg_scalar_f(2.0), 0, &y));
    CHECK_OK(hg_graph_output(g, y));
    CHECK_OK(hg_graph_output(g, s));   // an intermediate of the fused kernel
    CHECK_OK(hg_graph_output(g, a));   // an input
    CHECK_OK(hg_graph_output(g, y));   // the same node twice
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    hg_plan_info info;
    CHECK_OK(hg_plan_info_get(p, &info));
    CHECK(info.kernels == 1);
    float av[64], bv[64], o[4][64];
    for (int i = 0; i < n; i++) { av[i] = frand(); bv[i] = frand(); }
    hg_buffer ba, bb, bo[4];
    hg_tensor ta = make_f32(n, av, &ba), tb = make_f32(n, bv, &bb), to[4];
    for (int k = 0; k < 4; k++) to[k] = make_f32(n, NULL, &bo[k]);
    CHECK_OK(hg_plan_run(p, 2, (hg_tensor[]){ta, tb}, 4, to));
    for (int k = 0; k < 4; k++) CHECK_OK(hg_buffer_read(bo[k], 0, o[k], (size_t)n));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float sv = (float)((double)av[i] + bv[i]);
        float yv = (float)((double)(sv > 0 ? sv : 0.0f) * 2.0);
        bad += o[0][i] != yv || o[1][i] != sv || o[2][i] != av[i] || o[3][i] != yv;
    }
    CHECK(bad == 0);
    // Plan reuse with new data.
    for (int i = 0; i < n; i++) av[i] = -av[i];
    CHECK_OK(hg_buffer_write(ba, 0, av, (size_t)n));
    CHECK_OK(hg_plan_run(p, 2, (hg_tensor[]){ta, tb}, 4, to));
    CHECK_OK(hg_buffer_read(bo[2], 0, o[2], (size_t)n));
    CHECK(memcmp(o[2], av, sizeof av) == 0);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(ba); hg_buffer_destroy(bb);
    for (int k = 0; k < 4; k++) hg_buffer_destroy(bo[k]);
}

static void test_reshape_expand(void) {
    // x (4, 6) -> transpose view (6, 4) given at run time -> reshape (24) needs a copy; + expand
    hg_graph g;
    int32_t x, r, c, e, y;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F64, 2, (int64_t[]){6, 4}, &x));
    CHECK_OK(hg_graph_reshape(g, x, 2, (int64_t[]){-1, 8}, &r));      // (3, 8)
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F64, 1, (int64_t[]){8}, &c));
    CHECK_OK(hg_graph_expand(g, c, 2, (int64_t[]){3, -1}, &e));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_SUB, r, e, &y));
    CHECK_OK(hg_graph_output(g, y));
    CHECK_OK(hg_graph_output(g, r));   // a reshape view as an output: copied
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    double xv[24], cv[8], yv[24], rv[24];
    for (int i = 0; i < 24; i++) xv[i] = i * 1.5;
    for (int i = 0; i < 8; i++) cv[i] = i;
    hg_buffer bx, bc, by, br;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F64, 24, &bx));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F64, 8, &bc));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F64, 24, &by));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F64, 24, &br));
    CHECK_OK(hg_buffer_write(bx, 0, xv, 24));
    CHECK_OK(hg_buffer_write(bc, 0, cv, 8));
    hg_tensor tx, tt, tc, ty, tr;
    CHECK_OK(hg_tensor_from_buffer(bx, 2, (int64_t[]){4, 6}, &tx));
    CHECK_OK(hg_tensor_transpose(&tx, 0, 1, &tt));   // (6, 4), not contiguous
    CHECK_OK(hg_tensor_from_buffer(bc, 1, (int64_t[]){8}, &tc));
    CHECK_OK(hg_tensor_from_buffer(by, 2, (int64_t[]){3, 8}, &ty));
    CHECK_OK(hg_tensor_from_buffer(br, 2, (int64_t[]){3, 8}, &tr));
    for (int pass = 0; pass < 2; pass++) {   // transposed (copy path), then contiguous (view)
        hg_tensor in = pass == 0 ? tt : tx;
        if (pass == 1) CHECK_OK(hg_tensor_from_buffer(bx, 2, (int64_t[]){6, 4}, &in));
        CHECK_OK(hg_plan_run(p, 2, (hg_tensor[]){in, tc}, 2, (hg_tensor[]){ty, tr}));
        CHECK_OK(hg_buffer_read(by, 0, yv, 24));
        CHECK_OK(hg_buffer_read(br, 0, rv, 24));
        int bad = 0;
        for (int i = 0; i < 24; i++) {
            // C-order element i of the (6, 4) input: row i / 4, col i % 4.
            double xe = pass == 0 ? xv[(i % 4) * 6 + i / 4] : xv[i];
            bad += rv[i] != xe || yv[i] != xe - cv[i % 8];
        }
        CHECK_MSG(bad == 0, "reshape pass %d: %d wrong", pass, bad);
    }
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(bx); hg_buffer_destroy(bc); hg_buffer_destroy(by); hg_buffer_destroy(br);
}

static void test_buffer_reuse(void) {
    // A chain of 20 unfused ops: 19 intermediates of n floats, but only two live at once.
    const int64_t n = 1000;
    hg_graph g;
    int32_t x, t;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &x));
    t = x;
    for (int i = 0; i < 20; i++)
        CHECK_OK(hg_graph_binary_scalar(g, i % 2 ? HG_BINARY_ADD : HG_BINARY_MUL, t,
                                        hg_scalar_f(1.5 + i * 0.125), 0, &t));
    CHECK_OK(hg_graph_output(g, t));
    hg_compile_opts o = {1, 1, 0, 0};
    hg_plan p, pf;
    CHECK_OK(hg_graph_compile_opts(g, g_ex, &o, &p));
    CHECK_OK(hg_graph_compile(g, g_ex, &pf));
    hg_plan_info info, finfo;
    CHECK_OK(hg_plan_info_get(p, &info));
    CHECK_OK(hg_plan_info_get(pf, &finfo));
    CHECK(info.kernels == 20 && finfo.kernels == 1);
    CHECK_MSG(info.peak_bytes == 2 * (uint64_t)n * 4, "peak %llu", (unsigned long long)info.peak_bytes);
    CHECK(info.peak_bytes < 19 * (uint64_t)n * 4);
    float xv[1000], y1[1000], y2[1000];
    for (int i = 0; i < n; i++) xv[i] = frand();
    hg_buffer bx, by;
    hg_tensor tx = make_f32(n, xv, &bx), ty = make_f32(n, NULL, &by);
    CHECK_OK(hg_plan_run(p, 1, &tx, 1, &ty));
    CHECK_OK(hg_buffer_read(by, 0, y1, (size_t)n));
    CHECK_OK(hg_plan_run(p, 1, &tx, 1, &ty));
    // Sequential runs reuse one arena of intermediate memory.
    hg_plan_obj* po = hg_handle_get(p.handle, HG_HANDLE_PLAN);
    CHECK(po && po->pool && !po->pool->next && po->nslots == 2);
    CHECK_OK(hg_plan_run(pf, 1, &tx, 1, &ty));
    CHECK_OK(hg_buffer_read(by, 0, y2, (size_t)n));
    CHECK(memcmp(y1, y2, sizeof y1) == 0);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float v = xv[i];
        for (int k = 0; k < 20; k++)
            v = k % 2 ? (float)((double)v + (1.5 + k * 0.125)) : (float)((double)v * (1.5 + k * 0.125));
        bad += memcmp(&v, &y1[i], 4) != 0;
    }
    CHECK(bad == 0);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_plan_destroy(pf));
    CHECK_OK(hg_graph_destroy(g));
    hg_buffer_destroy(bx); hg_buffer_destroy(by);
}

typedef struct thread_arg {
    hg_plan plan;
    int seed;
    int bad;
} thread_arg;

static void* run_thread(void* vp) {
    thread_arg* ta = vp;
    const int64_t n = 4096;
    float* a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4), *y = malloc(n * 4);
    uint64_t rng = (uint64_t)ta->seed;
    hg_buffer ba, bb, bc, by;
    hg_buffer_create(g_ex, HG_DTYPE_F32, n, &ba);
    hg_buffer_create(g_ex, HG_DTYPE_F32, n, &bb);
    hg_buffer_create(g_ex, HG_DTYPE_F32, n, &bc);
    hg_buffer_create(g_ex, HG_DTYPE_F32, n, &by);
    hg_tensor t[4];
    hg_tensor_from_buffer(ba, 1, (int64_t[]){n}, &t[0]);
    hg_tensor_from_buffer(bb, 1, (int64_t[]){n}, &t[1]);
    hg_tensor_from_buffer(bc, 1, (int64_t[]){n}, &t[2]);
    hg_tensor_from_buffer(by, 1, (int64_t[]){n}, &t[3]);
    for (int it = 0; it < 50; it++) {
        for (int i = 0; i < n; i++) {
            a[i] = (float)(hg_test_rand(&rng) % 1000) / 10.0f - 50.0f;
            b[i] = (float)(hg_test_rand(&rng) % 1000) / 10.0f - 50.0f;
            c[i] = (float)(hg_test_rand(&rng) % 1000) / 10.0f - 50.0f;
        }
        hg_buffer_write(ba, 0, a, n);
        hg_buffer_write(bb, 0, b, n);
        hg_buffer_write(bc, 0, c, n);
        if (hg_plan_run(ta->plan, 3, t, 1, &t[3])) { ta->bad++; continue; }
        hg_buffer_read(by, 0, y, n);
        for (int i = 0; i < n; i++) {
            float r = chain_ref(a[i], b[i], c[i]);
            ta->bad += memcmp(&r, &y[i], 4) != 0;
        }
    }
    hg_buffer_destroy(ba); hg_buffer_destroy(bb); hg_buffer_destroy(bc); hg_buffer_destroy(by);
    free(a); free(b); free(c); free(y);
    return NULL;
}

static void test_threads(void) {
    // Unfused, so runs need intermediate memory: each concurrent run takes its own arena.
    hg_graph g = chain_graph(4096);
    hg_compile_opts o = {1, 1, 0, 0};
    hg_plan p;
    CHECK_OK(hg_graph_compile_opts(g, g_ex, &o, &p));
    thread_arg args[2] = {{p, 1, 0}, {p, 2, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, run_thread, &args[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(args[0].bad == 0 && args[1].bad == 0);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
}

static void test_library_nodes(void) {
    // sum over axis 1 of exp(x), softmax over the last axis, matmul: against the eager ops.
    hg_graph g;
    int32_t x, w, e, s, sm, mm;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){5, 7}, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){7, 3}, &w));
    CHECK_OK(hg_graph_unary(g, HG_UNARY_EXP, x, &e));
    CHECK_OK(hg_graph_reduce(g, HG_REDUCE_SUM, e, 1, (int32_t[]){1}, 1, &s));   // (5, 1)
    CHECK_OK(hg_graph_softmax(g, x, -1, 0, &sm));
    CHECK_OK(hg_graph_matmul(g, sm, w, &mm));   // (5, 3)
    CHECK_OK(hg_graph_output(g, s));
    CHECK_OK(hg_graph_output(g, mm));
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    hg_plan_info info;
    CHECK_OK(hg_plan_info_get(p, &info));
    CHECK(info.library_calls == 3 && info.kernels == 1);
    float xv[35], wv[21], sv[5], mv[15];
    for (int i = 0; i < 35; i++) xv[i] = frand() / 5;
    for (int i = 0; i < 21; i++) wv[i] = frand();
    hg_buffer bx, bw, bs, bm;
    hg_tensor tx, tw, ts, tm;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 35, &bx));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 21, &bw));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 5, &bs));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 15, &bm));
    CHECK_OK(hg_buffer_write(bx, 0, xv, 35));
    CHECK_OK(hg_buffer_write(bw, 0, wv, 21));
    CHECK_OK(hg_tensor_from_buffer(bx, 2, (int64_t[]){5, 7}, &tx));
    CHECK_OK(hg_tensor_from_buffer(bw, 2, (int64_t[]){7, 3}, &tw));
    CHECK_OK(hg_tensor_from_buffer(bs, 2, (int64_t[]){5, 1}, &ts));
    CHECK_OK(hg_tensor_from_buffer(bm, 2, (int64_t[]){5, 3}, &tm));
    CHECK_OK(hg_plan_run(p, 2, (hg_tensor[]){tx, tw}, 2, (hg_tensor[]){ts, tm}));
    CHECK_OK(hg_buffer_read(bs, 0, sv, 5));
    CHECK_OK(hg_buffer_read(bm, 0, mv, 15));
    hg_tensor e1 = {0}, e2 = {0}, e3 = {0}, e4 = {0};
    CHECK_OK(hg_unary(HG_UNARY_EXP, &tx, &e1));
    CHECK_OK(hg_reduce(HG_REDUCE_SUM, &e1, 1, (int32_t[]){1}, 1, &e2));
    CHECK_OK(hg_softmax(&tx, -1, &e3));
    CHECK_OK(hg_matmul(&e3, &tw, &e4));
    float rs[5], rm[15];
    CHECK_OK(hg_buffer_read(e2.buffer, 0, rs, 5));
    CHECK_OK(hg_buffer_read(e4.buffer, 0, rm, 15));
    CHECK(memcmp(rs, sv, sizeof rs) == 0);
    CHECK(memcmp(rm, mv, sizeof rm) == 0);
    // And against double math.
    int bad = 0;
    for (int i = 0; i < 5; i++) {
        double acc = 0, mx = -INFINITY, z = 0;
        for (int j = 0; j < 7; j++) acc += exp((double)xv[i * 7 + j]);
        bad += fabs(acc - sv[i]) > 1e-5 * acc;
        for (int j = 0; j < 7; j++) mx = fmax(mx, xv[i * 7 + j]);
        for (int j = 0; j < 7; j++) z += exp(xv[i * 7 + j] - mx);
        for (int k = 0; k < 3; k++) {
            double m = 0;
            for (int j = 0; j < 7; j++) m += exp(xv[i * 7 + j] - mx) / z * wv[j * 3 + k];
            bad += fabs(m - mv[i * 3 + k]) > 1e-4 * (1 + fabs(m));
        }
    }
    CHECK(bad == 0);
    hg_buffer_destroy(e1.buffer); hg_buffer_destroy(e2.buffer);
    hg_buffer_destroy(e3.buffer); hg_buffer_destroy(e4.buffer);
    hg_buffer_destroy(bx); hg_buffer_destroy(bw); hg_buffer_destroy(bs); hg_buffer_destroy(bm);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
}

static void test_dump(void) {
    char path[] = "/tmp/hg_graph_dumpXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    setenv("HOLOGRAM_DUMP", "passes", 1);
    hg_graph g = chain_graph(8);
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    unsetenv("HOLOGRAM_DUMP");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[8192] = {0};
    lseek(fd, 0, SEEK_SET);
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    unlink(path);
    CHECK(k > 0);
    CHECK(strstr(buf, "=== hologram graph after build ===") != NULL);
    CHECK(strstr(buf, "=== hologram graph after canonicalize ===") != NULL);
    CHECK(strstr(buf, "=== hologram graph after fuse ===") != NULL);
    CHECK(strstr(buf, "[k0]") != NULL);
    CHECK(strstr(buf, "=== hologram graph after lower+plan ===") != NULL);
    CHECK(strstr(buf, "plan: 1 kernels") != NULL);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
}

static void test_errors(void) {
    hg_graph g, none = {0};
    int32_t a, b, c, t;
    CHECK_OK(hg_graph_create(&g));
    CHECK_STATUS(hg_graph_input(none, HG_DTYPE_F32, 0, NULL, &a), HG_ERR_INVALID_HANDLE);
    CHECK(msg_has("graph handle is zero"));
    CHECK_STATUS(hg_graph_input(g, HG_DTYPE_COUNT, 0, NULL, &a), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_input(g, HG_DTYPE_F32, 9, (int64_t[9]){0}, &a), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){-2}, &a), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){3}, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_graph_unary(g, HG_UNARY_EXP, 0, &t), HG_ERR_OUT_OF_RANGE);
    CHECK(msg_has("no nodes yet"));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){3}, &a));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){4}, &b));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_BOOL, 1, (int64_t[]){3}, &c));
    CHECK_STATUS(hg_graph_unary(g, HG_UNARY_EXP, 7, &t), HG_ERR_OUT_OF_RANGE);
    CHECK(msg_has("node 'x' is 7 (valid node ids: 0..2)"));
    CHECK_STATUS(hg_graph_binary(g, HG_BINARY_ADD, a, -1, &t), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_graph_binary(g, HG_BINARY_ADD, a, b, &t), HG_ERR_SIZE_MISMATCH);
    CHECK_MSG(msg_has("hg_graph_binary") && msg_has("(3,)") && msg_has("(4,)"), "%s", hg_last_error());
    CHECK_STATUS(hg_graph_unary(g, HG_UNARY_NEG, c, &t), HG_ERR_DTYPE_MISMATCH);
    CHECK(msg_has("neg") && msg_has("bool"));
    CHECK_STATUS(hg_graph_unary(g, HG_UNARY_COUNT, a, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_binary(g, HG_BINARY_BITWISE_AND, a, a, &t), HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_graph_where(g, c, a, b, &t), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_graph_cast(g, a, (hg_dtype)77, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_expand(g, b, 2, (int64_t[]){2, 5}, &t), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_graph_reshape(g, b, 2, (int64_t[]){3, -1}, &t), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_graph_reshape(g, b, 2, (int64_t[]){-1, -1}, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_reduce(g, HG_REDUCE_SUM, a, 1, (int32_t[]){3}, 0, &t), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_graph_softmax(g, c, 0, 0, &t), HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_graph_matmul(g, a, b, &t), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_graph_binary_scalar(g, HG_BINARY_ADD, a, (hg_scalar){(hg_scalar_kind)9, 0, 0}, 0, &t), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_output(g, 99), HG_ERR_OUT_OF_RANGE);
    hg_dtype dt;
    int32_t nd;
    int64_t sh[HG_MAX_DIMS];
    CHECK_OK(hg_graph_node_info(g, b, &dt, &nd, sh));
    CHECK(dt == HG_DTYPE_F32 && nd == 1 && sh[0] == 4 && sh[1] == 0);
    CHECK_STATUS(hg_graph_node_info(g, 5, &dt, &nd, sh), HG_ERR_OUT_OF_RANGE);
    // Refused calls added no nodes.
    CHECK(((hg_graph_obj*)hg_handle_get(g.handle, HG_HANDLE_GRAPH))->ir.n == 3);
    hg_plan p;
    CHECK_STATUS(hg_graph_compile(g, g_ex, &p), HG_ERR_INVALID_ARGUMENT);   // no outputs
    CHECK(msg_has("no outputs"));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, a, a, &t));
    CHECK_OK(hg_graph_output(g, t));
    CHECK_STATUS(hg_graph_compile(g, (hg_executor){0}, &p), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_graph_compile(g, g_ex, NULL), HG_ERR_NULL_POINTER);
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    // The plan does not need the graph.
    CHECK_OK(hg_graph_destroy(g));
    CHECK_STATUS(hg_graph_destroy(g), HG_ERR_INVALID_HANDLE);
    CHECK(msg_has("not live"));
    CHECK_STATUS(hg_graph_output(g, 0), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_graph_compile(g, g_ex, &p), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_graph_print((hg_graph){p.handle}, NULL), HG_ERR_INVALID_HANDLE);
    CHECK(msg_has("not a graph handle"));
    // Run-time checks.
    hg_buffer b3, b4, bi, b6;
    hg_tensor t3, t4, ti, t3b, t6;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 3, &b3));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 4, &b4));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_I32, 3, &bi));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 6, &b6));
    CHECK_OK(hg_tensor_from_buffer(b3, 1, (int64_t[]){3}, &t3));
    CHECK_OK(hg_tensor_from_buffer(b4, 1, (int64_t[]){4}, &t4));
    CHECK_OK(hg_tensor_from_buffer(bi, 1, (int64_t[]){3}, &ti));
    CHECK_OK(hg_tensor_from_buffer(b6, 1, (int64_t[]){6}, &t6));
    CHECK_OK(hg_tensor_view(b6, 1, (int64_t[]){3}, NULL, 3, &t3b));
    hg_tensor ins3[3] = {t3, t4, ti};
    float ones[6] = {1, 2, 3, 4, 5, 6};
    CHECK_OK(hg_buffer_write(b6, 0, ones, 6));
    CHECK_STATUS(hg_plan_run(p, 2, ins3, 1, &t3b), HG_ERR_INVALID_ARGUMENT);
    CHECK(msg_has("2 inputs given, the graph has 3"));
    CHECK_STATUS(hg_plan_run(p, 3, ins3, 2, (hg_tensor[]){t3b, t3b}), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_plan_run(p, 3, (hg_tensor[]){t4, t4, ti}, 1, &t3b), HG_ERR_SIZE_MISMATCH);
    CHECK_MSG(msg_has("inputs[0] has shape (4,)") && msg_has("shape (3,)"), "%s", hg_last_error());
    CHECK_STATUS(hg_plan_run(p, 3, (hg_tensor[]){t3, t4, t3}, 1, &t3b), HG_ERR_DTYPE_MISMATCH);
    CHECK(msg_has("inputs[2] has dtype f32") && msg_has("bool"));
    CHECK_STATUS(hg_plan_run(p, 3, (hg_tensor[]){t3, t4, ti}, 1, &ti), HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_plan_run(p, 3, NULL, 1, &t3b), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_plan_run(p, 3, ins3, 1, NULL), HG_ERR_NULL_POINTER);
    // An input of bool dtype is needed for c: make one.
    hg_buffer bb;
    hg_tensor tbool;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_BOOL, 3, &bb));
    CHECK_OK(hg_tensor_from_buffer(bb, 1, (int64_t[]){3}, &tbool));
    hg_tensor good[3] = {t3, t4, tbool};
    hg_tensor lo;
    CHECK_OK(hg_tensor_view(b6, 1, (int64_t[]){3}, NULL, 0, &lo));
    CHECK_STATUS(hg_plan_run(p, 3, (hg_tensor[]){lo, t4, tbool}, 1, &(hg_tensor){0}), HG_ERR_INVALID_HANDLE);
    hg_tensor bcast;
    CHECK_OK(hg_tensor_view(b6, 1, (int64_t[]){3}, (int64_t[]){0}, 3, &bcast));
    CHECK_STATUS(hg_plan_run(p, 3, good, 1, &bcast), HG_ERR_INVALID_ARGUMENT);   // stride 0 out
    float out[6];
    CHECK_OK(hg_plan_run(p, 3, good, 1, &t3b));
    CHECK_OK(hg_buffer_read(b6, 0, out, 6));
    CHECK(out[0] == 1 && out[3] == 0 && out[4] == 0 && out[5] == 0);   // b3 is zeros: 0*0
    hg_plan_info info;
    CHECK_STATUS(hg_plan_info_get((hg_plan){0}, &info), HG_ERR_INVALID_HANDLE);
    CHECK(msg_has("plan handle is zero"));
    CHECK_STATUS(hg_plan_info_get(p, NULL), HG_ERR_NULL_POINTER);
    // Plans die with their executor.
    hg_executor ex2;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex2));
    hg_graph g2 = chain_graph(3);
    hg_plan p2, p3;
    CHECK_OK(hg_graph_compile(g2, ex2, &p2));
    CHECK_OK(hg_graph_compile(g2, ex2, &p3));
    CHECK_OK(hg_plan_destroy(p3));
    CHECK_STATUS(hg_plan_run(p, 3, (hg_tensor[]){t3, t4, tbool}, 1, &t3b), HG_OK);
    // Tensors of another executor.
    CHECK_STATUS(hg_plan_run(p2, 3, (hg_tensor[]){t3, t3, t3}, 1, &t3b), HG_ERR_INVALID_ARGUMENT);
    CHECK(msg_has("another executor"));
    CHECK_OK(hg_executor_destroy(ex2));
    CHECK_STATUS(hg_plan_run(p2, 0, NULL, 1, &t3b), HG_ERR_INVALID_HANDLE);
    CHECK(msg_has("executor was destroyed"));
    CHECK_STATUS(hg_plan_destroy(p2), HG_ERR_INVALID_HANDLE);
    CHECK_OK(hg_graph_destroy(g2));
    CHECK_OK(hg_plan_destroy(p));
    CHECK_STATUS(hg_plan_destroy(p), HG_ERR_INVALID_HANDLE);
    hg_buffer_destroy(b3); hg_buffer_destroy(b4); hg_buffer_destroy(bi); hg_buffer_destroy(b6);
    hg_buffer_destroy(bb);
}

// Kernels have limits (16 inputs, 64 fused nodes): bigger groups are split, results unchanged.
static void test_limits(void) {
    const int64_t n = 50;
    hg_graph g;
    int32_t in[20], t;
    CHECK_OK(hg_graph_create(&g));
    for (int i = 0; i < 20; i++) CHECK_OK(hg_graph_input(g, HG_DTYPE_F64, 1, (int64_t[]){n}, &in[i]));
    t = in[0];
    for (int i = 1; i < 20; i++) CHECK_OK(hg_graph_binary(g, HG_BINARY_ADD, t, in[i], &t));
    for (int i = 0; i < 150; i++)
        CHECK_OK(hg_graph_binary_scalar(g, i % 3 ? HG_BINARY_MUL : HG_BINARY_SUB, t,
                                        hg_scalar_f(i % 3 ? 1.25 : 0.5), 0, &t));
    CHECK_OK(hg_graph_output(g, t));
    hg_plan p;
    CHECK_OK(hg_graph_compile(g, g_ex, &p));
    hg_plan_info info;
    CHECK_OK(hg_plan_info_get(p, &info));
    CHECK_MSG(info.kernels >= 3 && info.kernels <= 6, "%d kernels", (int)info.kernels);
    hg_buffer b[21];
    hg_tensor tt[21];
    double v[20][50], out[50];
    for (int i = 0; i < 21; i++) {
        CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F64, n, &b[i]));
        CHECK_OK(hg_tensor_from_buffer(b[i], 1, (int64_t[]){n}, &tt[i]));
        if (i < 20) {
            for (int k = 0; k < n; k++) v[i][k] = (double)((i * 7 + k) % 11) - 5;
            CHECK_OK(hg_buffer_write(b[i], 0, v[i], n));
        }
    }
    CHECK_OK(hg_plan_run(p, 20, tt, 1, &tt[20]));
    CHECK_OK(hg_buffer_read(b[20], 0, out, n));
    int bad = 0;
    for (int k = 0; k < n; k++) {
        double x = v[0][k];
        for (int i = 1; i < 20; i++) x += v[i][k];
        for (int i = 0; i < 150; i++) x = i % 3 ? x * 1.25 : x - 0.5;
        bad += memcmp(&x, &out[k], 8) != 0;
    }
    CHECK(bad == 0);
    for (int i = 0; i < 21; i++) hg_buffer_destroy(b[i]);
    CHECK_OK(hg_plan_destroy(p));
    CHECK_OK(hg_graph_destroy(g));
}

int main(void) {
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_ex));
    test_chain();
    test_cse_dce_fold();
    test_multi_output_and_copies();
    test_reshape_expand();
    test_buffer_reuse();
    test_threads();
    test_library_nodes();
    test_dump();
    test_limits();
    test_errors();
    CHECK(hg_handle_live_count(HG_HANDLE_PLAN) == 0);
    CHECK(hg_handle_live_count(HG_HANDLE_GRAPH) == 0);
    CHECK_OK(hg_executor_destroy(g_ex));
    return hg_test_finish("test_graph");
}
