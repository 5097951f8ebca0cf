// Elementwise ops through their API edges: every error path (status, message, nothing
// written), the expression interface (a fused kernel) against node-by-node eager results, and
// dense accuracy sweeps of the composite functions on f32 against long double references.
// Shapes, views and layouts: test_ops_elementwise_layout.c.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/hg_test.h"
#include "hologram.h"
#include "ops/elementwise/ewise.h"
#include "ops/elementwise/ewise_internal.h"
#include "base/handles.h"
#include "runtime/objects.h"
#include "test_ops_elementwise_ref.h"

static hg_executor ex;
static uint64_t rng = 777;
static double urand(void) { return (double)(hg_test_rand(&rng) >> 11) * 0x1p-53; }
// make_buf: ew_make_buf on this file's executor.
static hg_buffer make_buf(hg_dtype t, int64_t n, double (*v)(int64_t)) {
    return ew_make_buf(ex, t, n, v);
}

// Every error: status, message, and the guard values of out unchanged.
static void test_errors(void) {
    hg_buffer ba = make_buf(D_F32, 12, val_a), bo = make_buf(D_F32, 12, val_b);
    hg_tensor a, b, o, bad;
    hg_tensor_from_buffer(ba, 2, (int64_t[]){3, 4}, &a);
    hg_tensor_from_buffer(ba, 2, (int64_t[]){4, 3}, &b);
    hg_tensor_from_buffer(bo, 2, (int64_t[]){3, 4}, &o);
    unsigned char* before = read_all(bo, NULL);
#define NOTHING_WRITTEN()                                                            \
    do {                                                                             \
        unsigned char* now_ = read_all(bo, NULL);                                    \
        CHECK(!memcmp(now_, before, 48));                                            \
        free(now_);                                                                  \
    } while (0)
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &a, &b, &o), HG_ERR_SIZE_MISMATCH);
    CHECK(strstr(hg_last_error(), "(3, 4)") && strstr(hg_last_error(), "(4, 3)"));
    NOTHING_WRITTEN();
    CHECK_STATUS(hg_binary(HG_BINARY_BITWISE_AND, &a, &a, &o), HG_ERR_DTYPE_MISMATCH);
    CHECK(strstr(hg_last_error(), "bitwise_and") && strstr(hg_last_error(), "f32"));
    NOTHING_WRITTEN();
    hg_buffer bb = make_buf(D_BOOL, 12, val_small), bi = make_buf(D_I32, 12, val_small);
    hg_tensor tb, ti;
    hg_tensor_from_buffer(bb, 2, (int64_t[]){3, 4}, &tb);
    hg_tensor_from_buffer(bi, 2, (int64_t[]){3, 4}, &ti);
    hg_tensor newo = {0};
    CHECK_STATUS(hg_unary(HG_UNARY_NEG, &tb, &newo), HG_ERR_DTYPE_MISMATCH);
    CHECK(newo.buffer.handle == 0);
    CHECK_STATUS(hg_binary(HG_BINARY_SUB, &tb, &tb, &newo), HG_ERR_DTYPE_MISMATCH);
    // Cross-kind out: an f32 result into an i32 out.
    unsigned char* ib = read_all(bi, NULL);
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &a, &a, &ti), HG_ERR_DTYPE_MISMATCH);
    CHECK(strstr(hg_last_error(), "same_kind"));
    unsigned char* ia = read_all(bi, NULL);
    CHECK(!memcmp(ib, ia, 48));
    free(ib);
    free(ia);
    // Signed result into an unsigned out is not same_kind either.
    hg_buffer bu = make_buf(D_U32, 12, val_a);
    hg_tensor tu;
    hg_tensor_from_buffer(bu, 2, (int64_t[]){3, 4}, &tu);
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &ti, &ti, &tu), HG_ERR_DTYPE_MISMATCH);
    // Overlap: out is a shifted view of the input's buffer. numpy's rule: as if the input were
    // read before anything is written (test_ops_overlap.c covers every op family).
    hg_tensor shifted, in6, out6;
    hg_tensor_view(ba, 1, (int64_t[]){6}, NULL, 0, &in6);
    hg_tensor_view(ba, 1, (int64_t[]){6}, NULL, 1, &shifted);
    float a0[12], a1[12];
    CHECK_OK(hg_buffer_read(ba, 0, a0, 12));
    CHECK_OK(hg_unary(HG_UNARY_NEG, &in6, &shifted));
    CHECK_OK(hg_buffer_read(ba, 0, a1, 12));
    for (int i = 0; i < 6; i++) CHECK(a1[i + 1] == -a0[i]);
    CHECK(a1[0] == a0[0] && !memcmp(a1 + 7, a0 + 7, 5 * sizeof(float)));
    CHECK_OK(hg_buffer_write(ba, 0, a0, 12));
    // A reversed view of the same elements is not the same view: read first too.
    hg_tensor_slice(&in6, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &out6);
    CHECK_OK(hg_unary(HG_UNARY_NEG, &in6, &out6));
    CHECK_OK(hg_buffer_read(ba, 0, a1, 12));
    for (int i = 0; i < 6; i++) CHECK(a1[5 - i] == -a0[i]);
    CHECK_OK(hg_buffer_write(ba, 0, a0, 12));
    // A broadcast (stride 0) out cannot be written.
    hg_tensor bcast;
    hg_tensor_view(bo, 2, (int64_t[]){3, 4}, (int64_t[]){0, 1}, 0, &bcast);
    CHECK_STATUS(hg_unary(HG_UNARY_EXP, &a, &bcast), HG_ERR_INVALID_ARGUMENT);
    NOTHING_WRITTEN();
    // Out of the wrong shape.
    hg_tensor o6;
    hg_tensor_view(bo, 1, (int64_t[]){6}, NULL, 0, &o6);
    CHECK_STATUS(hg_unary(HG_UNARY_EXP, &a, &o6), HG_ERR_SIZE_MISMATCH);
    NOTHING_WRITTEN();
    // Bad handles and NULL pointers.
    bad = a;
    bad.buffer.handle = 0x0200000100000999ull;
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &bad, &a, &o), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &a, &a, &bad), HG_ERR_INVALID_HANDLE);
    NOTHING_WRITTEN();
    hg_buffer gone = make_buf(D_F32, 12, val_a);
    hg_tensor tg;
    hg_tensor_from_buffer(gone, 2, (int64_t[]){3, 4}, &tg);
    hg_buffer_destroy(gone);
    CHECK_STATUS(hg_unary(HG_UNARY_ABS, &tg, &o), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_unary(HG_UNARY_ABS, NULL, &o), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_unary(HG_UNARY_ABS, &a, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &a, NULL, &o), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_where(NULL, &a, &a, &o), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_fma(&a, &a, NULL, &o), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_cast(NULL, D_F32, &o), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_clip(&a, NULL, NULL, NULL), HG_ERR_NULL_POINTER);
    NOTHING_WRITTEN();
    // Invalid op, dtype and scalar kind.
    CHECK_STATUS(hg_unary((hg_unary_op)99, &a, &o), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_binary((hg_binary_op)-3, &a, &a, &o), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_cast(&a, (hg_dtype)77, &o), HG_ERR_INVALID_ARGUMENT);
    hg_scalar weird = {(hg_scalar_kind)9, 0, 0};
    CHECK_STATUS(hg_binary_scalar(HG_BINARY_ADD, &a, weird, 0, &o), HG_ERR_INVALID_ARGUMENT);
    // A tensor whose dtype disagrees with its buffer.
    bad = a;
    bad.dtype = D_I32;
    CHECK_STATUS(hg_unary(HG_UNARY_ABS, &bad, &o), HG_ERR_DTYPE_MISMATCH);
    NOTHING_WRITTEN();
    // Tensors of two executors.
    hg_executor ex2;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex2));
    hg_buffer b2;
    hg_buffer_create(ex2, D_F32, 12, &b2);
    hg_tensor t2;
    hg_tensor_from_buffer(b2, 2, (int64_t[]){3, 4}, &t2);
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &a, &t2, &o), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &a, &a, &t2), HG_ERR_INVALID_ARGUMENT);
    NOTHING_WRITTEN();
    hg_executor_destroy(ex2);
    free(before);
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bo);
    hg_buffer_destroy(bb);
    hg_buffer_destroy(bi);
    hg_buffer_destroy(bu);
#undef NOTHING_WRITTEN
}

// relu(a*b + c) * 0.5 in f16 with broadcasting: one fused expression kernel equals the eager
// chain node by node, bit for bit; also a strided run of the same kernel and two outputs.
static void test_expr_chain(void) {
    hg_buffer ba = make_buf(D_F16, 24, val_a), bb = make_buf(D_F16, 4, val_b),
              bc = make_buf(D_F32, 6, val_small);
    hg_tensor a, b, c;
    hg_tensor_from_buffer(ba, 3, (int64_t[]){2, 3, 4}, &a);
    hg_tensor_from_buffer(bb, 1, (int64_t[]){4}, &b);
    hg_tensor_from_buffer(bc, 3, (int64_t[]){2, 3, 1}, &c);
    // Eager, node by node.
    hg_tensor m = {0}, s = {0}, r = {0}, y = {0};
    CHECK_OK(hg_binary(HG_BINARY_MUL, &a, &b, &m));            // f16
    CHECK_OK(hg_binary(HG_BINARY_ADD, &m, &c, &s));            // f32
    CHECK_OK(hg_unary(HG_UNARY_RELU, &s, &r));
    CHECK_OK(hg_binary_scalar(HG_BINARY_MUL, &r, hg_scalar_f(0.5), 0, &y));
    // Fused.
    hg_executor_obj* exo = hg_handle_get(ex.handle, HG_HANDLE_EXECUTOR);
    hg_ew_expr* e = malloc(sizeof *e);
    int64_t shape[3] = {2, 3, 4};
    hg_ew_expr_init(e, 3, shape);
    int32_t ia = hg_ew_input(e, D_F16, 3, a.shape), ib = hg_ew_input(e, D_F16, 1, b.shape),
            ic = hg_ew_input(e, D_F32, 3, c.shape);
    int32_t nm = hg_ew_binary(e, HG_BINARY_MUL, ia, ib);
    int32_t ns = hg_ew_binary(e, HG_BINARY_ADD, nm, ic);
    int32_t nr = hg_ew_unary(e, HG_UNARY_RELU, ns);
    int32_t nh = hg_ew_const(e, hg_ew_scalar_dtype(hg_scalar_f(0.5), D_F32), hg_scalar_f(0.5));
    int32_t ny = hg_ew_binary(e, HG_BINARY_MUL, nr, nh);
    CHECK(ny >= 0 && e->nodes[nm].dtype == D_F16 && e->nodes[ny].dtype == D_F32);
    CHECK_OK(hg_ew_output(e, ny, D_F32));
    CHECK_OK(hg_ew_output(e, nm, D_F16));   // a second output: the f16 product
    hg_ew_kernel* k = NULL;
    CHECK_OK(hg_ew_kernel_create(exo, e, &k));
    CHECK(hg_ew_kernel_instr_count(k) > 5);
    hg_buffer by, bm;
    hg_buffer_create(ex, D_F32, 24, &by);
    hg_buffer_create(ex, D_F16, 24, &bm);
    hg_tensor outs[2];
    hg_tensor_from_buffer(by, 3, shape, &outs[0]);
    hg_tensor_from_buffer(bm, 3, shape, &outs[1]);
    hg_tensor ins[3] = {a, b, c};
    CHECK_OK(hg_ew_kernel_run(k, ins, outs));
    unsigned char *g1 = read_all(by, NULL), *w1 = read_all(y.buffer, NULL);
    unsigned char *g2 = read_all(bm, NULL), *w2 = read_all(m.buffer, NULL);
    CHECK(!memcmp(g1, w1, 24 * 4));
    CHECK(!memcmp(g2, w2, 24 * 2));
    free(g1);
    free(g2);
    // Run again with a permuted (strided) view of a: compare with eager on the same view.
    hg_tensor ap;
    hg_buffer ba2 = make_buf(D_F16, 24, val_b);
    hg_tensor a2;
    hg_tensor_from_buffer(ba2, 3, (int64_t[]){4, 3, 2}, &a2);
    hg_tensor_permute(&a2, (int32_t[]){2, 1, 0}, &ap);   // (2,3,4), not contiguous
    ins[0] = ap;
    CHECK_OK(hg_ew_kernel_run(k, ins, outs));
    hg_tensor m2 = {0}, s2 = {0}, r2 = {0}, y2 = {0};
    CHECK_OK(hg_binary(HG_BINARY_MUL, &ap, &b, &m2));
    CHECK_OK(hg_binary(HG_BINARY_ADD, &m2, &c, &s2));
    CHECK_OK(hg_unary(HG_UNARY_RELU, &s2, &r2));
    CHECK_OK(hg_binary_scalar(HG_BINARY_MUL, &r2, hg_scalar_f(0.5), 0, &y2));
    g1 = read_all(by, NULL);
    free(w1);
    w1 = read_all(y2.buffer, NULL);
    CHECK(!memcmp(g1, w1, 24 * 4));
    // Wrong dtype / shape of a run's tensor.
    ins[0] = c;
    CHECK_STATUS(hg_ew_kernel_run(k, ins, outs), HG_ERR_DTYPE_MISMATCH);
    // Builder errors are the eager errors.
    CHECK(hg_ew_unary(e, HG_UNARY_BITWISE_NOT, ny) < 0);
    CHECK(hg_ew_binary(e, HG_BINARY_ADD, ny, 999) < 0);
    CHECK(hg_ew_input(e, D_F32, 2, (int64_t[]){5, 4}) < 0);
    // hg_ew_emit into a caller's program: every node gets a register of its dtype.
    hg_prog* p = hg_prog_new("emit_test");
    uint32_t regs[3], nodes[HG_EW_MAX_NODES];
    hg_prog_add_reg(p, "xa", D_F16, &regs[0]);
    hg_prog_add_reg(p, "xb", D_F16, &regs[1]);
    hg_prog_add_reg(p, "xc", D_F32, &regs[2]);
    CHECK_OK(hg_ew_emit(p, e, regs, nodes));
    CHECK(p->regs[nodes[ny]].dtype == D_F32 && p->regs[nodes[nm]].dtype == D_F16 &&
          p->regs[nodes[nh]].dtype == D_F32);
    CHECK_OK(hg_prog_validate(p));
    hg_prog_free(p);
    hg_ew_kernel_destroy(k);
    free(e);
    free(g1);
    free(w1);
    free(w2);
    hg_tensor* made[] = {&m, &s, &r, &y, &m2, &s2, &r2, &y2};
    for (size_t i = 0; i < sizeof made / sizeof *made; i++) hg_buffer_destroy(made[i]->buffer);
    hg_buffer_destroy(ba);
    hg_buffer_destroy(ba2);
    hg_buffer_destroy(bb);
    hg_buffer_destroy(bc);
    hg_buffer_destroy(by);
    hg_buffer_destroy(bm);
}

// Dense sweeps of the composite functions on f32 against long double references.
static long double sig_l(long double x) { return 1.0L / (1.0L + expl(-x)); }
static void test_composite_accuracy(void) {
    const int64_t n = 200000;
    float* x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) {
        double u = urand();
        x[i] = (float)(i % 4 == 0 ? (u * 40 - 20) : i % 4 == 1 ? (u * 2 - 1) * exp2(-urand() * 30)
                       : i % 4 == 2 ? (u * 200 - 100) : (u * 8 - 4));
    }
    hg_buffer bx;
    hg_buffer_create(ex, D_F32, (size_t)n, &bx);
    hg_buffer_write(bx, 0, x, (size_t)n);
    hg_tensor tx;
    hg_tensor_from_buffer(bx, 1, &n, &tx);
    static const hg_unary_op ops[] = {HG_UNARY_GELU, HG_UNARY_GELU_ERF, HG_UNARY_SILU,
                                      HG_UNARY_SIGMOID, HG_UNARY_TANH, HG_UNARY_EXPM1,
                                      HG_UNARY_LOG1P, HG_UNARY_SOFTPLUS};
    static const double tol[] = {6, 6, 6, 6, 6, 4, 4, 4};
    float* y = malloc((size_t)n * sizeof *y);
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        hg_tensor o = {0};
        CHECK_OK(hg_unary(ops[k], &tx, &o));
        hg_buffer_read(o.buffer, 0, y, (size_t)n);
        double worst = 0;
        int64_t wi = 0;
        for (int64_t i = 0; i < n; i++) {
            long double v = x[i], r;
            switch (ops[k]) {
            case HG_UNARY_GELU: r = v * sig_l(2 * 0.7978845608028654L * (v + 0.044715L * v * v * v)); break;
            case HG_UNARY_GELU_ERF: r = 0.5L * v * erfcl(-v / sqrtl(2.0L)); break;
            case HG_UNARY_SILU: r = v * sig_l(v); break;
            case HG_UNARY_SIGMOID: r = sig_l(v); break;
            case HG_UNARY_TANH: r = tanhl(v); break;
            case HG_UNARY_EXPM1: r = expm1l(v); break;
            case HG_UNARY_LOG1P: r = log1pl(v); break;
            default: r = v > 0 ? v + log1pl(expl(-v)) : log1pl(expl(v)); break;
            }
            double d = ulp_diff(D_F32, y[i], (double)(float)r);
            if (d > worst) { worst = d; wi = i; }
        }
        CHECK_MSG(worst <= tol[k], "%s f32: worst %.1f ulp at x = %.9g", hg_unary_op_name(ops[k]),
                  worst, (double)x[wi]);
        if (getenv("HG_TEST_VERBOSE"))
            printf("%-10s f32 dense: worst %.2f ulp (x = %.9g)\n", hg_unary_op_name(ops[k]), worst,
                   (double)x[wi]);
        hg_buffer_destroy(o.buffer);
    }
    free(x);
    free(y);
    hg_buffer_destroy(bx);
}


int main(void) {
    if (hg_executor_create(HG_BACKEND_CPU, &ex)) {
        fprintf(stderr, "no CPU executor: %s\n", hg_last_error());
        return 1;
    }
    test_errors();
    test_expr_chain();
    test_composite_accuracy();
    hg_executor_destroy(ex);
    return hg_test_finish("ops_elementwise_api");
}
