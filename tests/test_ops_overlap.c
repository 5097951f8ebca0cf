// numpy's overlap rule through the C API: every op with an output computes as if its inputs were
// read before anything is written, when out and inputs are views of one memory - through one
// buffer or through two handles wrapping the same memory (hg_buffer_wrap_device of one address,
// as two numpy arrays over one allocation). Random layouts (transposed, reversed, strided,
// shifted, the exact same view) over a small memory; the reference runs the same op on
// separate copies of the inputs (and of out's old values, for the ops that read out) and the
// expected memory is the old memory with out's elements replaced. Also a compiled graph plan
// (hg_plan_run). On CPU executors and on HG_TEST_BACKEND (the CUDA emulation in ctest's
// *_cuda_emu).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"

enum { N = 6, MEM = 3 * N * N + 4 };

static hg_executor g_ex;
static hg_buffer g_mem, g_alias;   // one memory, two handles
static hg_plan g_plan;             // a compiled graph: (x * y) - x, fused
static uint64_t g_rng = 0x51AB1E5ull;

static int64_t rnd(int64_t n) { return (int64_t)(hg_test_rand(&g_rng) % (uint64_t)n); }

// A view over the memory; 'alias' picks the second handle.
typedef struct view {
    int32_t ndim;
    int64_t shape[2], strides[2], offset;
    int alias;
} view;

// A random (rows, cols) layout inside MEM elements: C order, transposed, rows or columns
// reversed, every other row, at a random offset.
static view rand_view(int64_t rows, int64_t cols) {
    view v = {2, {rows, cols}, {cols, 1}, 0, (int)rnd(2)};
    int64_t span = rows * cols;
    switch (rnd(5)) {
    case 1: v.strides[0] = 1; v.strides[1] = rows; break;
    case 2: v.strides[0] = -cols; v.offset = (rows - 1) * cols; break;
    case 3: v.strides[1] = -1; v.offset = cols - 1; break;
    case 4:   // every other row, where that fits
        if (2 * span <= MEM) {
            v.strides[0] = 2 * cols;
            span *= 2;
        }
        break;
    default: break;
    }
    v.offset += rnd(MEM - span + 1);
    return v;
}

// A 1-D layout of n elements: stride +-1, a column, or a diagonal-like step.
static view rand_view1(int64_t n) {
    static const int64_t steps[] = {1, -1, N, N + 1, 2};
    view v = {1, {n, 1}, {steps[rnd(5)], 1}, 0, (int)rnd(2)};
    int64_t reach = (n - 1) * llabs(v.strides[0]) + 1;
    v.offset = rnd(MEM - reach + 1) + (v.strides[0] < 0 ? reach - 1 : 0);
    return v;
}

static hg_tensor tensor_of(const view* v) {
    hg_tensor t;
    CHECK_OK(hg_tensor_view(v->alias ? g_alias : g_mem, v->ndim, v->shape, v->strides, v->offset,
                            &t));
    return t;
}

static int64_t numel(const view* v) {
    int64_t n = 1;
    for (int32_t d = 0; d < v->ndim; d++) n *= v->shape[d];
    return n;
}

// Element i (C order) of v's elements in mem.
static int64_t index_of(const view* v, int64_t i) {
    int64_t off = v->offset;
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
        off += (i % v->shape[d]) * v->strides[d];
        i /= v->shape[d];
    }
    return off;
}

// A separate C-contiguous tensor holding v's elements of mem (the reference's inputs).
static hg_tensor copy_of(const view* v, const float* mem) {
    int64_t n = numel(v);
    float* h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++) h[i] = mem[index_of(v, i)];
    hg_buffer b;
    hg_tensor t;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)n, &b));
    CHECK_OK(hg_buffer_write(b, 0, h, (size_t)n));
    CHECK_OK(hg_tensor_from_buffer(b, v->ndim, v->shape, &t));
    free(h);
    return t;
}

enum {
    OP_NEG, OP_ADD, OP_WHERE, OP_CLIP, OP_SUM, OP_SOFTMAX, OP_LAYER_NORM, OP_MATMUL, OP_GEMM,
    OP_INDEX_SELECT, OP_INDEX_ADD, OP_CONCAT, OP_MSE, OP_COPY, OP_PLAN, OP_COUNT
};
static const char* const op_names[OP_COUNT] = {
    "neg", "add", "where", "clip", "sum", "softmax", "layer_norm", "matmul", "gemm",
    "index_select", "index_add", "concat", "mse_loss", "tensor_copy", "plan_run"};

// Runs op on inputs in[] into out (all tensors of the call); cond and idx are separate.
static hg_status run_op(int op, const hg_tensor* in, hg_tensor* out, const hg_tensor* cond,
                        const hg_tensor* idx) {
    switch (op) {
    case OP_NEG: return hg_unary(HG_UNARY_NEG, &in[0], out);
    case OP_ADD: return hg_binary(HG_BINARY_ADD, &in[0], &in[1], out);
    case OP_WHERE: return hg_where(cond, &in[0], &in[1], out);
    case OP_CLIP: return hg_clip(&in[0], &in[1], NULL, out);
    case OP_SUM: return hg_reduce(HG_REDUCE_SUM, &in[0], 1, (int32_t[]){1}, 0, out);
    case OP_SOFTMAX: return hg_softmax(&in[0], 1, out);
    case OP_LAYER_NORM: return hg_layer_norm(&in[0], 1, &in[1], NULL, 1e-5, out);
    case OP_MATMUL: return hg_matmul(&in[0], &in[1], out);
    case OP_GEMM: return hg_gemm(0, 1, 1.0, &in[0], &in[1], 0.5, out);
    case OP_INDEX_SELECT: return hg_index_select(&in[0], 0, idx, out);
    case OP_INDEX_ADD: return hg_index_add(out, 0, idx, &in[0]);
    case OP_CONCAT: return hg_concat(2, in, 0, out);
    case OP_MSE: return hg_mse_loss(&in[0], &in[1], HG_REDUCTION_NONE, out);
    case OP_PLAN: return hg_plan_run(g_plan, 2, in, 1, out);
    default: return hg_tensor_copy(out, &in[0]);
    }
}

static void one_trial(int op, int trial) {
    // Inputs: (N, N) views, layer_norm's weight and clip's bound 1-D; out by the op's shape.
    view in[2], out;
    int nin = op == OP_NEG || op == OP_SUM || op == OP_SOFTMAX || op == OP_INDEX_SELECT ||
                      op == OP_INDEX_ADD || op == OP_COPY ? 1 : 2;
    in[0] = rand_view(N, N);
    in[1] = op == OP_LAYER_NORM ? rand_view1(N) : rand_view(N, N);
    if (op == OP_SUM) out = rand_view1(N);
    else if (op == OP_CONCAT) out = rand_view(2 * N, N);
    else out = rand_view(N, N);
    // Now and then out is exactly an input's view (in place) or all share one handle.
    if (rnd(4) == 0 && op != OP_SUM && op != OP_CONCAT) out = in[rnd(nin)];
    if (op == OP_LAYER_NORM && out.ndim != 2) out = rand_view(N, N);
    if (rnd(3) == 0) in[0].alias = in[1].alias = out.alias = 0;

    float* mem = malloc(MEM * sizeof *mem);
    for (int i = 0; i < MEM; i++) mem[i] = (float)(rnd(9) - 4);   // small ints: exact sums
    CHECK_OK(hg_buffer_write(g_mem, 0, mem, MEM));
    uint8_t cv[N * N];
    for (int i = 0; i < N * N; i++) cv[i] = (uint8_t)rnd(2);
    int64_t iv[N];
    for (int i = 0; i < N; i++) iv[i] = rnd(N);
    hg_buffer cb, ib;
    hg_tensor cond, idx;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_BOOL, N * N, &cb));
    CHECK_OK(hg_buffer_write(cb, 0, cv, N * N));
    CHECK_OK(hg_tensor_from_buffer(cb, 2, (int64_t[]){N, N}, &cond));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_I64, N, &ib));
    CHECK_OK(hg_buffer_write(ib, 0, iv, N));
    CHECK_OK(hg_tensor_from_buffer(ib, 1, (int64_t[]){N}, &idx));

    // The reference: the op on separate copies (out starts with its old values).
    hg_tensor rin[2] = {copy_of(&in[0], mem), copy_of(&in[1], mem)};
    hg_tensor rout = copy_of(&out, mem);
    hg_status rs = run_op(op, rin, &rout, &cond, &idx);
    // gemm is a library call: a backend without one refuses it whatever the layout.
    int skip = rs == HG_ERR_UNSUPPORTED && op == OP_GEMM;
    CHECK_MSG(rs == HG_OK || skip, "%s reference: %s", op_names[op], hg_last_error());
    int64_t on = numel(&out);
    float* ref = malloc((size_t)on * sizeof *ref);
    CHECK_OK(hg_buffer_read(rout.buffer, 0, ref, (size_t)on));
    float* want = malloc(MEM * sizeof *want);
    memcpy(want, mem, MEM * sizeof *want);
    for (int64_t i = 0; i < on; i++) want[index_of(&out, i)] = ref[i];

    hg_tensor tin[2] = {tensor_of(&in[0]), tensor_of(&in[1])};
    hg_tensor tout = tensor_of(&out);
    if (skip) memcpy(want, mem, MEM * sizeof *want);
    hg_status s = run_op(op, tin, &tout, &cond, &idx);
    CHECK_MSG(s == (skip ? HG_ERR_UNSUPPORTED : HG_OK), "%s trial %d: %s", op_names[op], trial,
              hg_last_error());
    float* got = malloc(MEM * sizeof *got);
    CHECK_OK(hg_buffer_read(g_mem, 0, got, MEM));
    int bad = -1;
    for (int i = 0; i < MEM && bad < 0; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i]))) &&
            !(isnan(got[i]) && isnan(want[i])))
            bad = i;
    CHECK_MSG(bad < 0, "%s trial %d: element %d is %g, want %g (in0 off %lld str %lld,%lld; "
              "out off %lld str %lld,%lld; aliases %d %d %d)", op_names[op], trial, bad,
              bad >= 0 ? (double)got[bad] : 0.0, bad >= 0 ? (double)want[bad] : 0.0,
              (long long)in[0].offset, (long long)in[0].strides[0], (long long)in[0].strides[1],
              (long long)out.offset, (long long)out.strides[0], (long long)out.strides[1],
              in[0].alias, in[1].alias, out.alias);
    hg_buffer_destroy(rin[0].buffer);
    hg_buffer_destroy(rin[1].buffer);
    hg_buffer_destroy(rout.buffer);
    hg_buffer_destroy(cb);
    hg_buffer_destroy(ib);
    free(mem);
    free(ref);
    free(want);
    free(got);
}

// The issue's cases: t += t.T at 17 x 17 through two handles, floor of the reversed rows into
// the memory at 8 x 8, and take of 9 elements into a shifted view.
static void issue_cases(void) {
    hg_buffer a, b;
    uint64_t addr;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 17 * 17, &a));
    CHECK_OK(hg_buffer_device_address(a, &addr));
    CHECK_OK(hg_buffer_wrap_device(g_ex, HG_DTYPE_F32, addr, 17 * 17, &b));
    float m[17 * 17], got[17 * 17];
    for (int i = 0; i < 17 * 17; i++) m[i] = (float)(i % 23) + 0.5f;
    CHECK_OK(hg_buffer_write(a, 0, m, 17 * 17));
    hg_tensor t, tt;
    CHECK_OK(hg_tensor_from_buffer(a, 2, (int64_t[]){17, 17}, &t));
    CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){17, 17}, (int64_t[]){1, 17}, 0, &tt));
    CHECK_OK(hg_binary(HG_BINARY_ADD, &t, &tt, &t));
    CHECK_OK(hg_buffer_read(a, 0, got, 17 * 17));
    int bad = 0;
    for (int i = 0; i < 17; i++)
        for (int j = 0; j < 17; j++) bad += got[i * 17 + j] != m[i * 17 + j] + m[j * 17 + i];
    CHECK_MSG(bad == 0, "t += t.T at 17x17: %d wrong", bad);
    // floor(M[::-1]) into M, 8 x 8.
    CHECK_OK(hg_buffer_write(a, 0, m, 64));
    hg_tensor rev, dst;
    CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){8, 8}, (int64_t[]){-8, 1}, 56, &rev));
    CHECK_OK(hg_tensor_view(a, 2, (int64_t[]){8, 8}, NULL, 0, &dst));
    CHECK_OK(hg_unary(HG_UNARY_FLOOR, &rev, &dst));
    CHECK_OK(hg_buffer_read(a, 0, got, 64));
    bad = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) bad += got[i * 8 + j] != floorf(m[(7 - i) * 8 + j]);
    CHECK_MSG(bad == 0, "floor(M[::-1]) into M at 8x8: %d wrong", bad);
    // take(a[:9], reversed indices) into a[1:10].
    CHECK_OK(hg_buffer_write(a, 0, m, 10));
    hg_buffer ib;
    int64_t iv[9];
    for (int i = 0; i < 9; i++) iv[i] = 8 - i;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_I64, 9, &ib));
    CHECK_OK(hg_buffer_write(ib, 0, iv, 9));
    hg_tensor x9, o9, i9;
    CHECK_OK(hg_tensor_view(a, 1, (int64_t[]){9}, NULL, 0, &x9));
    CHECK_OK(hg_tensor_view(b, 1, (int64_t[]){9}, NULL, 1, &o9));
    CHECK_OK(hg_tensor_from_buffer(ib, 1, (int64_t[]){9}, &i9));
    CHECK_OK(hg_index_select(&x9, 0, &i9, &o9));
    CHECK_OK(hg_buffer_read(a, 0, got, 10));
    bad = got[0] != m[0];
    for (int i = 0; i < 9; i++) bad += got[1 + i] != m[8 - i];
    CHECK_MSG(bad == 0, "take of 9 into a shifted view: %d wrong", bad);
    hg_buffer_destroy(ib);
    hg_buffer_destroy(b);
    hg_buffer_destroy(a);
}

static void run(int on_device) {
    (void)on_device;
    uint64_t addr;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, MEM, &g_mem));
    CHECK_OK(hg_buffer_device_address(g_mem, &addr));
    CHECK_OK(hg_buffer_wrap_device(g_ex, HG_DTYPE_F32, addr, MEM, &g_alias));
    hg_graph g;
    int32_t x, y, t;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){N, N}, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){N, N}, &y));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, x, y, &t));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_SUB, t, x, &t));
    CHECK_OK(hg_graph_output(g, t));
    CHECK_OK(hg_graph_compile(g, g_ex, &g_plan));
    CHECK_OK(hg_graph_destroy(g));
    issue_cases();
    for (int op = 0; op < OP_COUNT; op++)
        for (int trial = 0; trial < 40; trial++) one_trial(op, trial);
    CHECK_OK(hg_plan_destroy(g_plan));
    hg_buffer_destroy(g_alias);
    hg_buffer_destroy(g_mem);
}

int main(void) { return hg_test_run_executors("test_ops_overlap", &g_ex, run); }
