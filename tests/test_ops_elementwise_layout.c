// Elementwise ops beyond the per-dtype tables: shapes (empty, 0-d, odd, prime, large,
// broadcast), strided and negative-stride views, random views and outputs, several outputs,
// launches split by size, calls from several threads, out with another dtype, in place,
// where / clip / fma / cast / scalars. Error paths, the expression interface and the
// composite functions' accuracy: test_ops_elementwise_api.c.
#include <math.h>
#include <pthread.h>
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

// make_buf: ew_make_buf on this file's executor.
static hg_buffer make_buf(hg_dtype t, int64_t n, double (*v)(int64_t)) {
    return ew_make_buf(ex, t, n, v);
}

// Element of view t (host copy of its buffer) at the C-order linear index li of shape `shape`
// broadcast to t (numpy alignment).
static double view_at(const hg_tensor* t, const unsigned char* host, int32_t ndim,
                      const int64_t* shape, int64_t li) {
    int64_t idx = t->offset;
    for (int32_t d = ndim - 1; d >= 0; d--) {
        int64_t c = li % shape[d];
        li /= shape[d];
        int32_t td = d - (ndim - t->ndim);
        if (td >= 0 && t->shape[td] != 1) idx += c * t->strides[td];
    }
    return ld_any(t->dtype, host + (size_t)idx * hg_dtype_size(t->dtype));
}

// Checks out == a (op) b elementwise for add/mul/sub on exactly representable values.
static void check_add(const char* what, const hg_tensor* a, const hg_tensor* b,
                      const hg_tensor* out, const unsigned char* ha, const unsigned char* hb,
                      double scale_b) {
    unsigned char* ho = read_all(out->buffer, NULL);
    int64_t n = 1;
    for (int32_t d = 0; d < out->ndim; d++) n *= out->shape[d];
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; i++) {
        double want = view_at(a, ha, out->ndim, out->shape, i) +
                      scale_b * view_at(b, hb, out->ndim, out->shape, i);
        double got = view_at(out, ho, out->ndim, out->shape, i);
        if (got != want) {
            bad++;
            CHECK_MSG(0, "%s: element %lld = %g, want %g", what, (long long)i, got, want);
        }
    }
    if (!bad) hg_test_passed++;
    free(ho);
}

static void test_shapes(void) {
    static const int64_t sizes[] = {0, 1, 7, 1009, 100003};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int64_t n = sizes[k];
        hg_buffer ba = make_buf(D_F32, n, val_a), bb = make_buf(D_F32, n, val_b);
        hg_tensor a, b, c = {0};
        hg_tensor_from_buffer(ba, 1, &n, &a);
        hg_tensor_from_buffer(bb, 1, &n, &b);
        CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &b, &c));
        CHECK(c.ndim == 1 && c.shape[0] == n && c.dtype == D_F32);
        unsigned char *ha = read_all(ba, NULL), *hb = read_all(bb, NULL);
        char what[64];
        snprintf(what, sizeof what, "add (%lld,)", (long long)n);
        check_add(what, &a, &b, &c, ha, hb, 1.0);
        // Repeated call into the existing out (cached kernel) gives the same.
        CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &b, &c));
        check_add(what, &a, &b, &c, ha, hb, 1.0);
        free(ha);
        free(hb);
        hg_buffer_destroy(c.buffer);
        hg_buffer_destroy(ba);
        hg_buffer_destroy(bb);
    }
    // Empty with more dims, and 0-d.
    {
        hg_buffer b0 = make_buf(D_F32, 0, val_a);
        hg_tensor e, r = {0};
        CHECK_OK(hg_tensor_view(b0, 3, (int64_t[]){2, 0, 3}, NULL, 0, &e));
        CHECK_OK(hg_unary(HG_UNARY_EXP, &e, &r));
        CHECK(r.ndim == 3 && r.shape[1] == 0 && r.shape[2] == 3);
        hg_buffer_destroy(r.buffer);
        hg_buffer_destroy(b0);
        hg_buffer bs = make_buf(D_F64, 1, val_a), bt = make_buf(D_F64, 1, val_b);
        hg_tensor s, t, o = {0};
        hg_tensor_from_buffer(bs, 0, NULL, &s);
        hg_tensor_from_buffer(bt, 0, NULL, &t);
        CHECK_OK(hg_binary(HG_BINARY_MUL, &s, &t, &o));
        double got = 0;
        hg_buffer_read(o.buffer, 0, &got, 1);
        CHECK(o.ndim == 0 && got == val_a(0) * val_b(0));
        hg_buffer_destroy(o.buffer);
        hg_buffer_destroy(bs);
        hg_buffer_destroy(bt);
    }
    // Broadcast (3,1,5) with (4,1) -> (3,4,5), in i32.
    {
        hg_buffer ba = make_buf(D_I32, 15, val_small), bb = make_buf(D_I32, 4, val_small);
        hg_tensor a, b, c = {0};
        hg_tensor_from_buffer(ba, 3, (int64_t[]){3, 1, 5}, &a);
        hg_tensor_from_buffer(bb, 2, (int64_t[]){4, 1}, &b);
        CHECK_OK(hg_binary(HG_BINARY_SUB, &a, &b, &c));
        CHECK(c.ndim == 3 && c.shape[0] == 3 && c.shape[1] == 4 && c.shape[2] == 5);
        unsigned char *ha = read_all(ba, NULL), *hb = read_all(bb, NULL);
        check_add("sub broadcast (3,1,5) (4,1)", &a, &b, &c, ha, hb, -1.0);
        free(ha);
        free(hb);
        hg_buffer_destroy(c.buffer);
        hg_buffer_destroy(ba);
        hg_buffer_destroy(bb);
    }
}

static void test_views(void) {
    hg_buffer ba = make_buf(D_F32, 35, val_a), bb = make_buf(D_F32, 35, val_b);
    unsigned char *ha = read_all(ba, NULL), *hb = read_all(bb, NULL);
    hg_tensor a, b, at, c = {0}, rev, step, c2 = {0};
    hg_tensor_from_buffer(ba, 2, (int64_t[]){5, 7}, &a);
    hg_tensor_from_buffer(bb, 2, (int64_t[]){7, 5}, &b);
    hg_tensor_transpose(&b, 0, 1, &at);                    // (5,7) strides (1,5)
    CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &at, &c));
    check_add("add with transposed", &a, &at, &c, ha, hb, 1.0);
    // Negative strides: a[::-1, ::-2] + at[:, ::-2] into a strided out (c[::-1, ::2]).
    hg_tensor_slice(&a, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &rev);
    hg_tensor_slice(&rev, 1, HG_SLICE_NONE, HG_SLICE_NONE, -2, &rev);
    hg_tensor_slice(&at, 1, HG_SLICE_NONE, HG_SLICE_NONE, -2, &step);
    hg_buffer bo = make_buf(D_F64, 35, val_small);
    hg_tensor o, ov;
    hg_tensor_from_buffer(bo, 2, (int64_t[]){5, 7}, &o);
    hg_tensor_slice(&o, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &ov);
    hg_tensor_slice(&ov, 1, HG_SLICE_NONE, HG_SLICE_NONE, 2, &ov);   // (5,4), f64: same_kind cast
    CHECK_OK(hg_binary(HG_BINARY_ADD, &rev, &step, &ov));
    check_add("negative strides into strided f64 out", &rev, &step, &ov, ha, hb, 1.0);
    // Untouched elements of o (odd columns) keep their value.
    unsigned char* ho = read_all(bo, NULL);
    int kept = 1;
    for (int i = 0; i < 5; i++)
        for (int j = 1; j < 7; j += 2) kept &= ld_f(D_F64, ho + 8 * (size_t)(i * 7 + j)) == val_small(i * 7 + j);
    CHECK(kept);
    free(ho);
    // In place: a = a * 2 (out is exactly a), via a scalar.
    CHECK_OK(hg_binary_scalar(HG_BINARY_MUL, &a, hg_scalar_i(2), 0, &a));
    unsigned char* h2 = read_all(ba, NULL);
    int ok = 1;
    for (int i = 0; i < 35; i++) ok &= ld_f(D_F32, h2 + 4 * i) == 2 * ld_f(D_F32, ha + 4 * i);
    CHECK(ok);
    free(h2);
    // Broadcast row (7,) over (5,7) with a strided out of dtype f64.
    hg_tensor row;
    hg_tensor_select(&at, 0, 2, &row);   // (7,) stride 5
    CHECK_OK(hg_binary(HG_BINARY_ADD, &at, &row, &c2));
    check_add("broadcast strided row", &at, &row, &c2, hb, hb, 1.0);
    hg_buffer_destroy(c.buffer);
    hg_buffer_destroy(c2.buffer);
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bb);
    hg_buffer_destroy(bo);
    free(ha);
    free(hb);
}

static void test_out_dtypes(void) {
    // i8 + i8 -> i8 values computed in i8 (wrapping), stored into i64 and f32 outs.
    hg_buffer ba = make_buf(D_I8, 4, NULL), bo = {0};
    int8_t av[4] = {100, -100, 127, -128};
    hg_buffer_write(ba, 0, av, 4);
    hg_tensor a, o;
    hg_tensor_from_buffer(ba, 1, (int64_t[]){4}, &a);
    hg_buffer_create(ex, D_I64, 4, &bo);
    hg_tensor_from_buffer(bo, 1, (int64_t[]){4}, &o);
    CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &a, &o));
    int64_t got[4];
    hg_buffer_read(bo, 0, got, 4);
    CHECK(got[0] == -56 && got[1] == 56 && got[2] == -2 && got[3] == 0);
    hg_buffer_destroy(bo);
    hg_buffer_create(ex, D_F32, 4, &bo);
    hg_tensor_from_buffer(bo, 1, (int64_t[]){4}, &o);
    CHECK_OK(hg_unary(HG_UNARY_NEG, &a, &o));
    float gf[4];
    hg_buffer_read(bo, 0, gf, 4);
    CHECK(gf[0] == -100 && gf[1] == 100 && gf[2] == -127 && gf[3] == -128);   // neg(-128) wraps
    // f64 result (i8 / i8) stored into f16.
    hg_buffer b16;
    hg_buffer_create(ex, D_F16, 4, &b16);
    hg_tensor o16;
    hg_tensor_from_buffer(b16, 1, (int64_t[]){4}, &o16);
    CHECK_OK(hg_binary(HG_BINARY_DIV, &a, &a, &o16));
    uint16_t h[4];
    hg_buffer_read(b16, 0, h, 4);
    CHECK(hg_f16_to_f32(h[0]) == 1.0f && hg_f16_to_f32(h[3]) == 1.0f);
    hg_buffer_destroy(b16);
    hg_buffer_destroy(bo);
    hg_buffer_destroy(ba);
}

static void test_scalars_and_misc(void) {
    hg_buffer bx = make_buf(D_U8, 4, NULL);
    uint8_t xv[4] = {0, 1, 200, 255};
    hg_buffer_write(bx, 0, xv, 4);
    hg_tensor x, o = {0};
    hg_tensor_from_buffer(bx, 1, (int64_t[]){4}, &x);
    // NEP 50: u8 + 1 stays u8 (wraps), u8 + 1.5 is f64, 300 does not fit u8.
    CHECK_OK(hg_binary_scalar(HG_BINARY_ADD, &x, hg_scalar_i(1), 0, &o));
    uint8_t r8[4];
    hg_buffer_read(o.buffer, 0, r8, 4);
    CHECK(o.dtype == D_U8 && r8[0] == 1 && r8[2] == 201 && r8[3] == 0);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    CHECK_OK(hg_binary_scalar(HG_BINARY_SUB, &x, hg_scalar_f(1.5), 1, &o));   // 1.5 - x
    double r64[4];
    hg_buffer_read(o.buffer, 0, r64, 4);
    CHECK(o.dtype == D_F64 && r64[0] == 1.5 && r64[3] == -253.5);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    CHECK_STATUS(hg_binary_scalar(HG_BINARY_ADD, &x, hg_scalar_i(300), 0, &o), HG_ERR_OUT_OF_RANGE);
    CHECK(o.buffer.handle == 0);
    CHECK(strstr(hg_last_error(), "300") && strstr(hg_last_error(), "u8"));
    // Comparisons with an out-of-range int compare by value (numpy 2): u8 < 300 all true,
    // -1 < u8 all true, u8 == -1 all false.
    static const struct { hg_binary_op op; int64_t v; int first; uint8_t want; } cmp[] = {
        {HG_BINARY_LT, 300, 0, 1}, {HG_BINARY_GE, 300, 0, 0}, {HG_BINARY_LT, -1, 1, 1},
        {HG_BINARY_EQ, -1, 0, 0}, {HG_BINARY_NE, 256, 1, 1}, {HG_BINARY_GT, -5, 0, 1}};
    for (size_t i = 0; i < sizeof cmp / sizeof *cmp; i++) {
        CHECK_OK(hg_binary_scalar(cmp[i].op, &x, hg_scalar_i(cmp[i].v), cmp[i].first, &o));
        uint8_t rb[4];
        hg_buffer_read(o.buffer, 0, rb, 4);
        CHECK_MSG(o.dtype == D_BOOL && rb[0] == cmp[i].want && rb[3] == cmp[i].want,
                  "%s with %lld: got %d", hg_binary_op_name(cmp[i].op), (long long)cmp[i].v, rb[0]);
        hg_buffer_destroy(o.buffer);
        memset(&o, 0, sizeof o);
    }
    // floor_divide by a scalar first: 7 // x (x = 0 gives 0).
    CHECK_OK(hg_binary_scalar(HG_BINARY_FLOOR_DIVIDE, &x, hg_scalar_i(7), 1, &o));
    hg_buffer_read(o.buffer, 0, r8, 4);
    CHECK(r8[0] == 0 && r8[1] == 7 && r8[2] == 0);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    // clip_scalar with out-of-range bounds clamps them: clip(u8, -5, 300) is the identity.
    CHECK_OK(hg_clip_scalar(&x, hg_scalar_i(-5), hg_scalar_i(300), &o));
    hg_buffer_read(o.buffer, 0, r8, 4);
    CHECK(o.dtype == D_U8 && !memcmp(r8, xv, 4));
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    CHECK_OK(hg_clip_scalar(&x, hg_scalar_i(2), hg_scalar_i(100), &o));
    hg_buffer_read(o.buffer, 0, r8, 4);
    CHECK(r8[0] == 2 && r8[1] == 2 && r8[2] == 100 && r8[3] == 100);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    hg_buffer_destroy(bx);

    // where / clip / fma / cast on f32 with broadcasting and NaN.
    float fv[6] = {-2.0f, -0.5f, 0.0f, 0.5f, NAN, 3.0f};
    hg_buffer bf = make_buf(D_F32, 6, NULL);
    hg_buffer_write(bf, 0, fv, 6);
    hg_tensor f, lo, hi, cond;
    hg_tensor_from_buffer(bf, 1, (int64_t[]){6}, &f);
    hg_buffer blo = make_buf(D_F32, 1, NULL), bhi = make_buf(D_F64, 1, NULL);
    float lov = -1.0f;
    double hiv = 1.0;
    hg_buffer_write(blo, 0, &lov, 1);
    hg_buffer_write(bhi, 0, &hiv, 1);
    hg_tensor_from_buffer(blo, 0, NULL, &lo);
    hg_tensor_from_buffer(bhi, 1, (int64_t[]){1}, &hi);
    CHECK_OK(hg_clip(&f, &lo, &hi, &o));   // f32 with f64 -> f64
    double cr[6];
    hg_buffer_read(o.buffer, 0, cr, 6);
    CHECK(o.dtype == D_F64 && cr[0] == -1 && cr[1] == -0.5 && cr[3] == 0.5 && isnan(cr[4]) &&
          cr[5] == 1);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    CHECK_OK(hg_clip(&f, NULL, &lo, &o));   // only an upper bound
    float fr[6];
    hg_buffer_read(o.buffer, 0, fr, 6);
    CHECK(fr[0] == -2 && fr[1] == -1 && fr[5] == -1 && isnan(fr[4]));
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    hg_buffer bc = make_buf(D_I32, 6, val_small);   // nonzero except where val_small is 0
    hg_tensor_from_buffer(bc, 1, (int64_t[]){6}, &cond);
    CHECK_OK(hg_where(&cond, &f, &lo, &o));
    hg_buffer_read(o.buffer, 0, fr, 6);
    int okw = 1;
    for (int i = 0; i < 6; i++) {
        float want = val_small(i) != 0 ? fv[i] : -1.0f;
        okw &= (isnan(want) && isnan(fr[i])) || fr[i] == want;
    }
    CHECK(okw);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    // fma rounds once: (1 + 2^-12)^2 - 1 - 2^-11 = 2^-24 exactly in f32.
    float fa = 1.0f + 0x1p-12f, fc = -(1.0f + 0x1p-11f);
    hg_buffer b1 = make_buf(D_F32, 1, NULL), b2 = make_buf(D_F32, 1, NULL);
    hg_buffer_write(b1, 0, &fa, 1);
    hg_buffer_write(b2, 0, &fc, 1);
    hg_tensor t1, t2;
    hg_tensor_from_buffer(b1, 0, NULL, &t1);
    hg_tensor_from_buffer(b2, 0, NULL, &t2);
    CHECK_OK(hg_fma(&t1, &t1, &t2, &o));
    float fm;
    hg_buffer_read(o.buffer, 0, &fm, 1);
    CHECK(fm == 0x1p-24f);
    hg_buffer_destroy(o.buffer);
    memset(&o, 0, sizeof o);
    // cast f32 -> i8 saturates, NaN -> 0; with an existing out the dtype must equal.
    CHECK_OK(hg_cast(&f, D_I8, &o));
    int8_t ir[6];
    hg_buffer_read(o.buffer, 0, ir, 6);
    CHECK(o.dtype == D_I8 && ir[0] == -2 && ir[1] == 0 && ir[4] == 0 && ir[5] == 3);
    hg_tensor keep = o;
    hg_buffer b16;
    hg_buffer_create(ex, D_I16, 6, &b16);
    hg_tensor o16;
    hg_tensor_from_buffer(b16, 1, (int64_t[]){6}, &o16);
    CHECK_STATUS(hg_cast(&f, D_I8, &o16), HG_ERR_DTYPE_MISMATCH);
    hg_buffer_destroy(b16);
    hg_buffer_destroy(keep.buffer);
    hg_buffer_destroy(b1);
    hg_buffer_destroy(b2);
    hg_buffer_destroy(bc);
    hg_buffer_destroy(bf);
    hg_buffer_destroy(blo);
    hg_buffer_destroy(bhi);
}

// A kernel with two outputs, y0 = a + b and y1 = a - b, each into a contiguous or a permuted
// (transposed) view, a contiguous or permuted: the iteration follows the output whose innermost
// dim most operands step through by 1, whichever output that is; every element checked.
static void test_two_outputs(void) {
    hg_executor_obj* exo = hg_handle_get(ex.handle, HG_HANDLE_EXECUTOR);
    const int64_t shapes[][4] = {{4, 4, 64, 64}, {3, 5, 16, 9}, {2, 3, 130, 7}};
    for (int si = 0; si < 3; si++) {
        const int64_t* shape = shapes[si];
        int64_t n = shape[0] * shape[1] * shape[2] * shape[3];
        int64_t tshape[4] = {shape[0], shape[1], shape[3], shape[2]};   // swapped last dims
        hg_ew_expr* e = malloc(sizeof *e);
        hg_ew_expr_init(e, 4, shape);
        int32_t ia = hg_ew_input(e, D_F32, 4, shape), ib = hg_ew_input(e, D_F32, 4, shape);
        CHECK_OK(hg_ew_output(e, hg_ew_binary(e, HG_BINARY_ADD, ia, ib), D_F32));
        CHECK_OK(hg_ew_output(e, hg_ew_binary(e, HG_BINARY_SUB, ia, ib), D_F32));
        hg_ew_kernel* k = NULL;
        CHECK_OK(hg_ew_kernel_create(exo, e, &k));
        for (int mode = 0; mode < 8; mode++) {
            // bit 0: y0 transposed, bit 1: y1 transposed, bit 2: a read through a transpose
            hg_buffer ba = make_buf(D_F32, n, val_a), bb = make_buf(D_F32, n, val_b), bo[2];
            hg_tensor a, b, outs[2];
            if (mode & 4) {
                hg_tensor t;
                hg_tensor_from_buffer(ba, 4, tshape, &t);
                CHECK_OK(hg_tensor_transpose(&t, 2, 3, &a));
            } else {
                hg_tensor_from_buffer(ba, 4, shape, &a);
            }
            hg_tensor_from_buffer(bb, 4, shape, &b);
            for (int o = 0; o < 2; o++) {
                hg_buffer_create(ex, D_F32, (size_t)n, &bo[o]);
                if (mode >> o & 1) {
                    hg_tensor t;
                    hg_tensor_from_buffer(bo[o], 4, tshape, &t);
                    CHECK_OK(hg_tensor_transpose(&t, 2, 3, &outs[o]));
                } else {
                    hg_tensor_from_buffer(bo[o], 4, shape, &outs[o]);
                }
            }
            hg_tensor ins[2] = {a, b};
            CHECK_OK(hg_ew_kernel_run(k, ins, outs));
            unsigned char *ha = read_all(ba, NULL), *hb = read_all(bb, NULL);
            char what[80];
            snprintf(what, sizeof what, "two outputs %lldx%lldx%lldx%lld mode %d y0",
                     (long long)shape[0], (long long)shape[1], (long long)shape[2],
                     (long long)shape[3], mode);
            check_add(what, &a, &b, &outs[0], ha, hb, 1.0);
            what[strlen(what) - 1] = '1';
            check_add(what, &a, &b, &outs[1], ha, hb, -1.0);
            free(ha);
            free(hb);
            hg_buffer_destroy(ba);
            hg_buffer_destroy(bb);
            hg_buffer_destroy(bo[0]);
            hg_buffer_destroy(bo[1]);
        }
        hg_ew_kernel_destroy(k);
        free(e);
    }
}

// Random views: permuted, sliced with random (negative) steps, broadcast, into strided outs.
// Random views of random shapes added into random outs. rows: the last dim 8..95 long, the
// layouts that run as one launch per row on host memory: rows contiguous (odometer over up to 3
// outer dims, negative and permuted outer strides), a column broadcast as one value per row,
// and inputs read across rows (permuted or stepped last dims: gathered per row).
static void random_views(int iters, int rows) {
    for (int iter = 0; iter < iters; iter++) {
        int32_t nd = (rows ? 2 : 1) + (int32_t)(hg_test_rand(&rng) % (rows ? 3 : 4));
        int64_t shape[4];
        for (int32_t d = 0; d < nd; d++) shape[d] = 1 + (int64_t)(hg_test_rand(&rng) % 6);
        if (rows) shape[nd - 1] = 8 + (int64_t)(hg_test_rand(&rng) % 88);
        // a: a view with the result shape taken from a bigger buffer (step +-1 or +-2, permuted)
        int64_t big[4], steps[4];
        int32_t perm[4] = {0, 1, 2, 3};
        for (int32_t d = nd - 1; d > 0; d--) {
            int32_t j = (int32_t)(hg_test_rand(&rng) % (uint64_t)(d + 1)), tmp = perm[d];
            perm[d] = perm[j];
            perm[j] = tmp;
        }
        int64_t total = 1;
        for (int32_t d = 0; d < nd; d++) {
            steps[d] = (int64_t)(hg_test_rand(&rng) % 2 + 1) * (hg_test_rand(&rng) % 2 ? -1 : 1);
            if (rows && perm[d] == nd - 1 && hg_test_rand(&rng) % 2) steps[d] = 1;   // a's last dim
            big[d] = shape[perm[d]] * (steps[d] < 0 ? -steps[d] : steps[d]);
            total *= big[d];
        }
        hg_buffer ba = make_buf(D_F32, total, val_a);
        hg_tensor a, t;
        hg_tensor_from_buffer(ba, nd, big, &t);
        for (int32_t d = 0; d < nd; d++)
            hg_tensor_slice(&t, d, HG_SLICE_NONE, HG_SLICE_NONE, steps[d], &t);
        int32_t inv[4];
        for (int32_t d = 0; d < nd; d++) inv[perm[d]] = d;
        CHECK_OK(hg_tensor_permute(&t, inv, &a));
        // b: some dims set to 1 (broadcast), maybe fewer dims, maybe reversed
        int32_t bnd = nd - (int32_t)(hg_test_rand(&rng) % (uint64_t)nd);
        int64_t bshape[4];
        int64_t bn = 1;
        for (int32_t d = 0; d < bnd; d++) {
            bshape[d] = hg_test_rand(&rng) % 3 == 0 ? 1 : shape[nd - bnd + d];
            bn *= bshape[d];
        }
        hg_buffer bb = make_buf(D_F32, bn, val_b);
        hg_tensor b;
        hg_tensor_from_buffer(bb, bnd, bshape, &b);
        if (hg_test_rand(&rng) % 2) hg_tensor_slice(&b, bnd - 1, HG_SLICE_NONE, HG_SLICE_NONE, -1, &b);
        if (rows && bnd > 1 && hg_test_rand(&rng) % 2)   // outer dim of b reversed
            hg_tensor_slice(&b, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &b);
        // out: f32 or f64, contiguous or reversed in its first dim
        hg_dtype odt = hg_test_rand(&rng) % 2 ? D_F32 : D_F64;
        int64_t on = 1;
        for (int32_t d = 0; d < nd; d++) on *= shape[d];
        hg_buffer bo;
        hg_buffer_create(ex, odt, (size_t)on, &bo);
        hg_tensor o;
        if (hg_test_rand(&rng) % 3 == 0) {
            // A permuted out (a transposed result, K^T): the iteration follows its memory order
            int32_t op[4] = {0, 1, 2, 3}, oinv[4];
            for (int32_t d = nd - 1; d > 0; d--) {
                int32_t j = (int32_t)(hg_test_rand(&rng) % (uint64_t)(d + 1)), tmp = op[d];
                op[d] = op[j];
                op[j] = tmp;
            }
            int64_t pshape[4];
            for (int32_t d = 0; d < nd; d++) pshape[d] = shape[op[d]];
            for (int32_t d = 0; d < nd; d++) oinv[op[d]] = d;
            hg_tensor po;
            hg_tensor_from_buffer(bo, nd, pshape, &po);
            CHECK_OK(hg_tensor_permute(&po, oinv, &o));
        } else {
            hg_tensor_from_buffer(bo, nd, shape, &o);
        }
        if (hg_test_rand(&rng) % 2) hg_tensor_slice(&o, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &o);
        // b first half the time: a per-row value as the first operand fills whole lane arrays
        // (as the second, the kernel reads one lane).
        if (hg_test_rand(&rng) % 2) CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &b, &o));
        else CHECK_OK(hg_binary(HG_BINARY_ADD, &b, &a, &o));
        unsigned char *ha = read_all(ba, NULL), *hb = read_all(bb, NULL);
        char what[64];
        snprintf(what, sizeof what, "random %sviews #%d", rows ? "row " : "", iter);
        check_add(what, &a, &b, &o, ha, hb, 1.0);
        free(ha);
        free(hb);
        hg_buffer_destroy(ba);
        hg_buffer_destroy(bb);
        hg_buffer_destroy(bo);
    }
}

static void test_random_views(void) {
    random_views(300, 0);
    random_views(400, 1);
    // Non-power-of-two sizes with millions of lanes (the reciprocal estimate of the index math).
    int64_t rows = 2999, cols = 1003;
    hg_buffer ba = make_buf(D_F32, rows * cols, val_a), bb = make_buf(D_F32, cols, val_b);
    hg_tensor a, b, c = {0}, at, ct = {0};
    hg_tensor_from_buffer(ba, 2, (int64_t[]){rows, cols}, &a);
    hg_tensor_from_buffer(bb, 1, &cols, &b);
    CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &b, &c));
    unsigned char *ha = read_all(ba, NULL), *hb = read_all(bb, NULL);
    check_add("(2999,1003) + (1003,)", &a, &b, &c, ha, hb, 1.0);
    hg_tensor_transpose(&a, 0, 1, &at);   // (1003, 2999) strided, b broadcast as a column
    hg_tensor bcol;
    hg_tensor_unsqueeze(&b, 1, &bcol);
    CHECK_OK(hg_binary(HG_BINARY_ADD, &at, &bcol, &ct));
    check_add("(1003,2999)^T + (1003,1)", &at, &bcol, &ct, ha, hb, 1.0);
    // A column of one value per row over many rows: the row launches split across threads.
    hg_tensor col, cc = {0};
    CHECK_OK(hg_tensor_view(ba, 2, (int64_t[]){rows, 1}, (int64_t[]){cols, 1}, 5, &col));
    CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &col, &cc));
    check_add("(2999,1003) + (2999,1) column of a", &a, &col, &cc, ha, ha, 1.0);
    hg_buffer_destroy(cc.buffer);
    free(ha);
    free(hb);
    hg_buffer_destroy(c.buffer);
    hg_buffer_destroy(ct.buffer);
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bb);
}

// Runs longer than one launch are split (linear ranges re-bound, strided lanes offset by a start
// parameter): lowered limit, then linear, scalar and strided operands against the reference.
static void test_split_launches(void) {
    uint64_t saved = hg_ew_launch_max;
    hg_ew_launch_max = 1000;
    int64_t rows = 37, cols = 101;   // 3737 elements: 4 launches
    hg_buffer ba = make_buf(D_F32, rows * cols, val_a), bb = make_buf(D_F32, cols, val_b);
    hg_buffer bs = make_buf(D_F32, 1, val_b);
    hg_tensor a, b, s0, c = {0}, at, ct = {0}, cs = {0};
    hg_tensor_from_buffer(ba, 2, (int64_t[]){rows, cols}, &a);
    hg_tensor_from_buffer(bb, 1, &cols, &b);
    hg_tensor_from_buffer(bs, 0, NULL, &s0);
    unsigned char *ha = read_all(ba, NULL), *hb = read_all(bb, NULL), *hs = read_all(bs, NULL);
    CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &b, &c));           // linear + strided (broadcast)
    check_add("split: (37,101) + (101,)", &a, &b, &c, ha, hb, 1.0);
    CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &s0, &cs));         // linear + scalar
    check_add("split: (37,101) + ()", &a, &s0, &cs, ha, hs, 1.0);
    hg_tensor_transpose(&a, 0, 1, &at);
    hg_tensor_slice(&at, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &at);   // strided, negative
    hg_tensor bcol;
    hg_tensor_from_buffer(bb, 2, (int64_t[]){cols, 1}, &bcol);
    CHECK_OK(hg_binary(HG_BINARY_SUB, &at, &bcol, &ct));
    check_add("split: transposed reversed - column", &at, &bcol, &ct, ha, hb, -1.0);
    // The same into a transposed out: rows in the out's memory order, gathered inputs
    hg_buffer bt;
    hg_buffer_create(ex, D_F32, (size_t)(rows * cols), &bt);
    hg_tensor tt, ttv;
    hg_tensor_from_buffer(bt, 2, (int64_t[]){rows, cols}, &tt);
    hg_tensor_transpose(&tt, 0, 1, &ttv);
    CHECK_OK(hg_binary(HG_BINARY_SUB, &at, &bcol, &ttv));
    check_add("split: transposed reversed - column into transposed out", &at, &bcol, &ttv, ha,
              hb, -1.0);
    hg_buffer_destroy(bt);
    hg_ew_launch_max = saved;
    free(ha);
    free(hb);
    free(hs);
    hg_buffer_destroy(c.buffer);
    hg_buffer_destroy(ct.buffer);
    hg_buffer_destroy(cs.buffer);
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bb);
    hg_buffer_destroy(bs);
}

// Eager calls from several threads on one executor (shared kernel cache, new kernels compiled
// concurrently): every thread's results are right.
typedef struct thread_job { int id; int ok; } thread_job;
static void* thread_main(void* p) {
    thread_job* j = p;
    j->ok = 1;
    int64_t n = 1000 + j->id;
    hg_buffer ba = make_buf(D_F32, n, val_a);
    hg_tensor a;
    hg_tensor_from_buffer(ba, 1, &n, &a);
    for (int it = 0; it < 50 && j->ok; it++) {
        hg_tensor o = {0};
        hg_binary_op op = (it + j->id) % 2 ? HG_BINARY_ADD : HG_BINARY_MUL;
        hg_dtype dt = (hg_dtype)(HG_DTYPE_I8 + (it + j->id) % 12);   // kernels for many dtypes
        if (hg_binary_scalar(op, &a, hg_scalar_i(3), 0, &o)) { j->ok = 0; break; }
        hg_tensor c = {0};
        if (hg_cast(&o, dt, &c)) { j->ok = 0; break; }
        float* h = malloc((size_t)n * sizeof *h);
        hg_buffer_read(o.buffer, 0, h, (size_t)n);
        for (int64_t i = 0; i < n; i++)
            if (h[i] != (float)(op == HG_BINARY_ADD ? val_a(i) + 3 : val_a(i) * 3)) j->ok = 0;
        free(h);
        hg_buffer_destroy(o.buffer);
        hg_buffer_destroy(c.buffer);
    }
    hg_buffer_destroy(ba);
    return NULL;
}
static void test_threads(void) {
    pthread_t th[4];
    thread_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i].id = i;
        pthread_create(&th[i], NULL, thread_main, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(jobs[i].ok, "thread %d got a wrong result or error: %s", i, hg_last_error());
    }
}

int main(void) {
    if (hg_executor_create(HG_BACKEND_CPU, &ex)) {
        fprintf(stderr, "no CPU executor: %s\n", hg_last_error());
        return 1;
    }
    test_shapes();
    test_views();
    test_random_views();
    test_two_outputs();
    test_split_launches();
    test_threads();
    test_out_dtypes();
    test_scalars_and_misc();
    hg_executor_destroy(ex);
    return hg_test_finish("ops_elementwise_layout");
}
