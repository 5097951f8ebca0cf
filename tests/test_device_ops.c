// Op-library paths on a device backend (HG_TEST_BACKEND, run on the CUDA backend's host
// emulation by tests/cuda_emu.cmake) that the parity harness does not reach, each compared
// with the CPU backend on the same inputs: a compiled graph (fused kernel, fused reduction,
// softmax, matmul), in-place and batched-broadcast matmul, matmul through the device BLAS for
// f32/f64/f16/bf16 in row-major, transposed and strided layouts, batched matmul through
// strided-batched library calls (against a double reference; the calls checked in a trace),
// integer and bool matmul, gemm's
// alpha/beta rules, reductions split into chunks (argmax ties and NaN across chunks), random
// numbers (uniform bit-identical), and the bad-input paths (index out of range, probabilities
// outside [0, 1], bad class indices), which must fail with the CPU's message and leave the
// output untouched. Exits 77 (skipped) when HG_TEST_BACKEND is unset, "cpu" or unavailable.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hg_test.h"

static hg_executor g_ex[2];   // CPU, device
static uint64_t g_rng = 0x5EED;

static double urand(double lo, double hi) {
    return lo + (hi - lo) * (double)(hg_test_rand(&g_rng) >> 11) * 0x1p-53;
}

// A tensor of `dt` and shape on executor e holding vals (converted; bools/ints truncated).
static hg_tensor make(int e, hg_dtype dt, int32_t nd, const int64_t* shape, const double* vals) {
    int64_t n = 1;
    for (int32_t d = 0; d < nd; d++) n *= shape[d];
    hg_buffer b;
    CHECK_OK(hg_buffer_create(g_ex[e], dt, (size_t)(n ? n : 1), &b));
    size_t es = hg_dtype_size(dt);
    unsigned char* h = calloc((size_t)(n ? n : 1), es);
    for (int64_t i = 0; i < n; i++) {
        unsigned char* p = h + (size_t)i * es;
        double v = vals[i];
        switch (dt) {
        case HG_DTYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
        case HG_DTYPE_F64: memcpy(p, &v, 8); break;
        case HG_DTYPE_F16: { uint16_t u = hg_f32_to_f16((float)v); memcpy(p, &u, 2); break; }
        case HG_DTYPE_BF16: { uint16_t u = hg_f32_to_bf16((float)v); memcpy(p, &u, 2); break; }
        case HG_DTYPE_I32: { int32_t u = (int32_t)v; memcpy(p, &u, 4); break; }
        case HG_DTYPE_I64: { int64_t u = (int64_t)v; memcpy(p, &u, 8); break; }
        case HG_DTYPE_BOOL: *p = v != 0; break;
        default: *p = (unsigned char)v; break;
        }
    }
    CHECK_OK(hg_buffer_write(b, 0, h, (size_t)(n ? n : 1)));
    free(h);
    hg_tensor t;
    CHECK_OK(hg_tensor_from_buffer(b, nd, shape, &t));
    return t;
}

static double* randvals(int64_t n, double lo, double hi) {
    double* v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = urand(lo, hi);
    return v;
}

// The bytes of t's whole buffer.
static unsigned char* bytes_of(const hg_tensor* t, size_t* nbytes) {
    size_t n = 0;
    CHECK_OK(hg_buffer_count(t->buffer, &n));
    CHECK_OK(hg_buffer_nbytes(t->buffer, nbytes));
    unsigned char* h = malloc(*nbytes + 1);
    CHECK_OK(hg_buffer_read(t->buffer, 0, h, n));
    return h;
}

// The elements of a C-contiguous tensor as doubles.
static double* values_of(const hg_tensor* t) {
    size_t nb = 0;
    unsigned char* h = bytes_of(t, &nb);
    size_t es = hg_dtype_size(t->dtype), n = nb / es;
    double* v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const unsigned char* p = h + i * es;
        switch (t->dtype) {
        case HG_DTYPE_F32: { float f; memcpy(&f, p, 4); v[i] = f; break; }
        case HG_DTYPE_F64: memcpy(&v[i], p, 8); break;
        case HG_DTYPE_F16: { uint16_t u; memcpy(&u, p, 2); v[i] = hg_f16_to_f32(u); break; }
        case HG_DTYPE_BF16: { uint16_t u; memcpy(&u, p, 2); v[i] = hg_bf16_to_f32(u); break; }
        case HG_DTYPE_I32: { int32_t u; memcpy(&u, p, 4); v[i] = u; break; }
        case HG_DTYPE_I64: { int64_t u; memcpy(&u, p, 8); v[i] = (double)u; break; }
        default: v[i] = *p; break;
        }
    }
    free(h);
    return v;
}

// Max difference of two equally long arrays relative to the largest |a| (NaN must match NaN,
// infinities exactly).
static double max_rel(const double* a, const double* b, size_t n) {
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(a[i]) && fabs(a[i]) > scale) scale = fabs(a[i]);
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            if (isnan(a[i]) != isnan(b[i])) return INFINITY;
            continue;
        }
        if (isinf(a[i]) || isinf(b[i])) {
            if (a[i] != b[i]) return INFINITY;
            continue;
        }
        double d = fabs(a[i] - b[i]) / (scale > 0 ? scale : 1.0);
        if (d > worst) worst = d;
    }
    return worst;
}

static void compare(const hg_tensor* cpu, const hg_tensor* dev, double tol, const char* what) {
    int64_t n = 1;
    for (int32_t d = 0; d < cpu->ndim; d++) n *= cpu->shape[d];
    double* a = values_of(cpu);
    double* b = values_of(dev);
    double r = max_rel(a, b, (size_t)n);
    CHECK_MSG(r <= tol, "%s: device differs from the CPU by %g (limit %g)", what, r, tol);
    free(a);
    free(b);
}

static void destroy(hg_tensor* t) {
    if (t->buffer.handle) hg_buffer_destroy(t->buffer);
    t->buffer.handle = 0;
}

// ---- graph ----
static void test_graph(void) {
    const int64_t n = 3000, rows = 37, cols = 53;
    hg_graph g;
    CHECK_OK(hg_graph_create(&g));
    int32_t a, b, c, t, y, s, xm, sm, wm, mm;
    int64_t sh1[1] = {n}, shx[2] = {rows, cols}, shw[2] = {cols, 29};
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, sh1, &a));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, sh1, &b));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, sh1, &c));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, shx, &xm));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, shw, &wm));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, a, b, &t));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_ADD, t, c, &t));
    CHECK_OK(hg_graph_unary(g, HG_UNARY_RELU, t, &y));
    CHECK_OK(hg_graph_reduce(g, HG_REDUCE_SUM, y, 0, NULL, 0, &s));
    CHECK_OK(hg_graph_softmax(g, xm, -1, 0, &sm));
    CHECK_OK(hg_graph_matmul(g, sm, wm, &mm));
    CHECK_OK(hg_graph_output(g, y));
    CHECK_OK(hg_graph_output(g, s));
    CHECK_OK(hg_graph_output(g, mm));
    double* va = randvals(n, -2, 2);
    double* vb = randvals(n, -2, 2);
    double* vc = randvals(n, -2, 2);
    double* vx = randvals(rows * cols, -4, 4);
    double* vw = randvals(cols * 29, -1, 1);
    hg_tensor outs[2][3];
    for (int e = 0; e < 2; e++) {
        hg_plan p;
        CHECK_OK(hg_graph_compile(g, g_ex[e], &p));
        hg_tensor in[5] = {make(e, HG_DTYPE_F32, 1, sh1, va), make(e, HG_DTYPE_F32, 1, sh1, vb),
                           make(e, HG_DTYPE_F32, 1, sh1, vc), make(e, HG_DTYPE_F32, 2, shx, vx),
                           make(e, HG_DTYPE_F32, 2, shw, vw)};
        double zero[4000] = {0};
        int64_t shm[2] = {rows, 29};
        outs[e][0] = make(e, HG_DTYPE_F32, 1, sh1, zero);
        outs[e][1] = make(e, HG_DTYPE_F32, 0, NULL, zero);
        outs[e][2] = make(e, HG_DTYPE_F32, 2, shm, zero);
        CHECK_OK(hg_plan_run(p, 5, in, 3, outs[e]));
        for (int k = 0; k < 5; k++) destroy(&in[k]);
        hg_plan_destroy(p);
    }
    compare(&outs[0][0], &outs[1][0], 0, "graph: fused relu(a*b+c)");
    compare(&outs[0][1], &outs[1][1], 1e-6, "graph: fused sum");
    compare(&outs[0][2], &outs[1][2], 1e-5, "graph: softmax then matmul");
    for (int e = 0; e < 2; e++)
        for (int k = 0; k < 3; k++) destroy(&outs[e][k]);
    free(va); free(vb); free(vc); free(vx); free(vw);
    hg_graph_destroy(g);
}

// ---- matmul ----
static void test_matmul_paths(void) {
    // In place: a = a @ b (square), f32 and f64.
    const hg_dtype dts[2] = {HG_DTYPE_F32, HG_DTYPE_F64};
    for (int k = 0; k < 2; k++) {
        int64_t sh[2] = {19, 19};
        double* va = randvals(19 * 19, -1, 1);
        double* vb = randvals(19 * 19, -1, 1);
        hg_tensor r[2];
        for (int e = 0; e < 2; e++) {
            hg_tensor a = make(e, dts[k], 2, sh, va), b = make(e, dts[k], 2, sh, vb);
            CHECK_OK(hg_matmul(&a, &b, &a));
            r[e] = a;
            destroy(&b);
        }
        compare(&r[0], &r[1], dts[k] == HG_DTYPE_F64 ? 1e-12 : 1e-5, "matmul in place");
        destroy(&r[0]);
        destroy(&r[1]);
        free(va);
        free(vb);
    }
    // Batched with broadcasting: (4, 1, 7, 5) @ (3, 5, 6); a transposed view; i32 and bool.
    int64_t sa[4] = {4, 1, 7, 5}, sb[3] = {3, 5, 6};
    double* va = randvals(4 * 7 * 5, -3, 3);
    double* vb = randvals(3 * 5 * 6, -3, 3);
    const hg_dtype idts[3] = {HG_DTYPE_F16, HG_DTYPE_I32, HG_DTYPE_BOOL};
    for (int k = 0; k < 3; k++) {
        hg_tensor r[2];
        for (int e = 0; e < 2; e++) {
            hg_tensor a = make(e, idts[k], 4, sa, va), b = make(e, idts[k], 3, sb, vb);
            memset(&r[e], 0, sizeof r[e]);
            CHECK_OK(hg_matmul(&a, &b, &r[e]));
            destroy(&a);
            destroy(&b);
        }
        compare(&r[0], &r[1], idts[k] == HG_DTYPE_F16 ? 1e-3 : 0, "batched broadcast matmul");
        destroy(&r[0]);
        destroy(&r[1]);
    }
    free(va);
    free(vb);
}

// The device's BLAS route (cuBLAS sgemm / GemmEx; the emulation's loops) for f32, f64, f16 and
// bf16 against the CPU: row-major operands, a transposed b view, a column-major (transposed)
// out view, a batched product, and a b view with no unit stride (the ISA kernel instead).
static void test_matmul_blas_layouts(void) {
    const hg_dtype dts[4] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    int64_t sa[3] = {3, 7, 5}, sbt[2] = {6, 5}, so[2] = {6, 7}, sbs[2] = {5, 12};
    double* va = randvals(3 * 7 * 5, -1, 1);
    double* vb = randvals(6 * 5, -1, 1);
    double* vz = randvals(6 * 7, 0, 0);
    double* vs = randvals(5 * 12, -1, 1);
    for (int k = 0; k < 4; k++) {
        hg_dtype dt = dts[k];
        double tol = dt == HG_DTYPE_F64 ? 1e-12 : dt == HG_DTYPE_F32 ? 1e-5
                     : dt == HG_DTYPE_F16 ? 2e-3 : 1.6e-2;
        hg_tensor r1[2], r2[2], r3[2];
        for (int e = 0; e < 2; e++) {
            hg_tensor a = make(e, dt, 3, sa, va), bt = make(e, dt, 2, sbt, vb), b, a0, ot;
            hg_tensor bs = make(e, dt, 2, sbs, vs), bsv;
            CHECK_OK(hg_tensor_transpose(&bt, 0, 1, &b));          // (5, 6), strides (1, 5)
            memset(&r1[e], 0, sizeof r1[e]);
            CHECK_OK(hg_matmul(&a, &b, &r1[e]));                    // batched (3, 7, 6)
            CHECK_OK(hg_tensor_select(&a, 0, 1, &a0));             // (7, 5)
            r2[e] = make(e, dt, 2, so, vz);
            CHECK_OK(hg_tensor_transpose(&r2[e], 0, 1, &ot));      // out (7, 6), strides (1, 7)
            CHECK_OK(hg_matmul(&a0, &b, &ot));
            CHECK_OK(hg_tensor_slice(&bs, 1, 0, 12, 2, &bsv));     // (5, 6), strides (12, 2)
            memset(&r3[e], 0, sizeof r3[e]);
            CHECK_OK(hg_matmul(&a0, &bsv, &r3[e]));
            destroy(&a); destroy(&bt); destroy(&bs);
        }
        char what[96];
        snprintf(what, sizeof what, "matmul %s: batched, transposed b", hg_dtype_name(dt));
        compare(&r1[0], &r1[1], tol, what);
        snprintf(what, sizeof what, "matmul %s: column-major out", hg_dtype_name(dt));
        compare(&r2[0], &r2[1], tol, what);
        snprintf(what, sizeof what, "matmul %s: b with no unit stride", hg_dtype_name(dt));
        compare(&r3[0], &r3[1], tol, what);
        for (int e = 0; e < 2; e++) { destroy(&r1[e]); destroy(&r2[e]); destroy(&r3[e]); }
    }
    free(va); free(vb); free(vz); free(vs);
}

// ---- batched matmul: one strided-batched library call ----
// Each case: logical shapes of a and b, which operands are stored transposed (a view swapping
// the last two dims), whether out is a transposed view, and the library calls the op layer must
// make (traced): `batched` gemm_strided_batched calls of `batch` products each, else `single`
// gemm calls. The result is checked against a double reference on the dtype-rounded inputs.
typedef struct bmm_case {
    const char* what;
    int32_t na, nb;
    int64_t sa[4], sb[4];
    int ta, tb, to;
    int batched;
    int64_t batch;
    int single;
} bmm_case;

static const bmm_case k_bmm[] = {
    {"(7,3,5)@(7,5,4)", 3, 3, {7, 3, 5}, {7, 5, 4}, 0, 0, 0, 1, 7, 0},
    {"(12,4,6)@(12,6,3): chunked", 3, 3, {12, 4, 6}, {12, 6, 3}, 0, 0, 0, 1, 12, 0},
    {"(2,3,5)@(2,5,4)", 3, 3, {2, 3, 5}, {2, 5, 4}, 0, 0, 0, 1, 2, 0},
    {"(1,3,5)@(1,5,4): batch 1", 3, 3, {1, 3, 5}, {1, 5, 4}, 0, 0, 0, 0, 0, 1},
    {"(0,3,5)@(0,5,4): batch 0", 3, 3, {0, 3, 5}, {0, 5, 4}, 0, 0, 0, 0, 0, 0},
    {"(3,5)@(6,5,4): a broadcast", 2, 3, {3, 5}, {6, 5, 4}, 0, 0, 0, 1, 6, 0},
    {"(6,3,5)@(1,5,4)^T-stored a: b broadcast", 3, 3, {6, 3, 5}, {1, 5, 4}, 1, 0, 0, 1, 6, 0},
    {"(4,3,5)^T@(4,5,4)^T", 3, 3, {4, 3, 5}, {4, 5, 4}, 1, 1, 0, 1, 4, 0},
    {"(5,3,6)@(5,6,4) into a transposed out", 3, 3, {5, 3, 6}, {5, 6, 4}, 0, 0, 1, 1, 5, 0},
    {"(2,3,4,5)@(2,3,5,2): 4-D, collapses", 4, 4, {2, 3, 4, 5}, {2, 3, 5, 2}, 0, 0, 0, 1, 6, 0},
    {"(2,3,4,5)@(3,5,2): 4-D, b broadcast", 4, 3, {2, 3, 4, 5}, {3, 5, 2}, 0, 0, 0, 2, 3, 0},
    {"(2,3,4,5)@(2,1,5,2): 4-D, b broadcast inside", 4, 4, {2, 3, 4, 5}, {2, 1, 5, 2}, 1, 0, 0,
     2, 3, 0},
    {"(3,1,4,5)@(1,2,5,3): 4-D outer product of batches", 4, 4, {3, 1, 4, 5}, {1, 2, 5, 3}, 0, 0,
     0, 3, 2, 0},
};

static double round_to(hg_dtype dt, double v) {
    if (dt == HG_DTYPE_F32) return (float)v;
    if (dt == HG_DTYPE_F16) return hg_f16_to_f32(hg_f32_to_f16((float)v));
    if (dt == HG_DTYPE_BF16) return hg_bf16_to_f32(hg_f32_to_bf16((float)v));
    return v;
}

// A device tensor of logical shape sh holding v (row-major), stored transposed in its last two
// dims when `trans` (the result is then a view).
static hg_tensor make_stored(hg_dtype dt, int32_t nd, const int64_t* sh, const double* v,
                             int trans) {
    if (sh[0] == 0) {   // empty: a 0-long slice of a tensor with one batch element
        int64_t one[4];
        memcpy(one, sh, sizeof one);
        one[0] = 1;
        double* w = calloc((size_t)(one[nd - 1] * one[nd - 2]), sizeof *w);
        hg_tensor t = make_stored(dt, nd, one, w, trans), e;
        free(w);
        CHECK_OK(hg_tensor_slice(&t, 0, 0, 0, 1, &e));
        return e;
    }
    if (!trans) return make(1, dt, nd, sh, v);
    int64_t st[4], r = sh[nd - 2], q = sh[nd - 1], mats = 1;
    memcpy(st, sh, sizeof st);
    st[nd - 2] = q;
    st[nd - 1] = r;
    for (int32_t d = 0; d < nd - 2; d++) mats *= sh[d];
    double* w = malloc((size_t)(mats * r * q + 1) * sizeof *w);
    for (int64_t z = 0; z < mats; z++)
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < q; j++) w[(z * q + j) * r + i] = v[(z * r + i) * q + j];
    hg_tensor t = make(1, dt, nd, st, w), view;
    free(w);
    CHECK_OK(hg_tensor_transpose(&t, nd - 2, nd - 1, &view));
    return view;
}

// Element offset in a row-major array of shape sh (nd dims) of the out batch index z (over the
// nz leading dims of oshape), with broadcasting.
static int64_t bcast_base(int32_t nd, const int64_t* sh, int32_t nz, const int64_t* oshape,
                          int64_t z) {
    int64_t off = 0, stride = sh[nd - 1] * sh[nd - 2];
    for (int32_t d = nz - 1, e = nd - 3; d >= 0; d--, e--) {
        int64_t i = z % oshape[d];
        z /= oshape[d];
        if (e < 0) continue;
        if (sh[e] != 1) off += i * stride;
        stride *= sh[e];
    }
    return off;
}

static int count_of(const char* s, const char* sub) {
    int k = 0;
    for (const char* p = s; (p = strstr(p, sub)); p += strlen(sub)) k++;
    return k;
}

static void check_bmm(const bmm_case* bc, hg_dtype dt, const char* trace_path) {
    int32_t na = bc->na, nb = bc->nb, nz = (na > nb ? na : nb) - 2;
    int64_t m = bc->sa[na - 2], k = bc->sa[na - 1], n = bc->sb[nb - 1], oshape[4], nmat = 1;
    for (int32_t d = 0; d < nz; d++) {
        int32_t ea = d - (nz - (na - 2)), eb = d - (nz - (nb - 2));
        int64_t da = ea >= 0 ? bc->sa[ea] : 1, db = eb >= 0 ? bc->sb[eb] : 1;
        oshape[d] = da == 1 ? db : da;
        nmat *= oshape[d];
    }
    oshape[nz] = m;
    oshape[nz + 1] = n;
    int64_t lena = 1, lenb = 1;
    for (int32_t d = 0; d < na; d++) lena *= bc->sa[d];
    for (int32_t d = 0; d < nb; d++) lenb *= bc->sb[d];
    double* va = randvals(lena, -1, 1);
    double* vb = randvals(lenb, -1, 1);
    for (int64_t i = 0; i < lena; i++) va[i] = round_to(dt, va[i]);
    for (int64_t i = 0; i < lenb; i++) vb[i] = round_to(dt, vb[i]);
    double* ref = calloc((size_t)(nmat * m * n + 1), sizeof *ref);
    for (int64_t z = 0; z < nmat; z++) {
        int64_t ab = bcast_base(na, bc->sa, nz, oshape, z), bb = bcast_base(nb, bc->sb, nz, oshape, z);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0;
                for (int64_t p = 0; p < k; p++) acc += va[ab + i * k + p] * vb[bb + p * n + j];
                ref[(z * m + i) * n + j] = acc;
            }
    }
    hg_tensor a = make_stored(dt, na, bc->sa, va, bc->ta), b = make_stored(dt, nb, bc->sb, vb, bc->tb);
    hg_tensor out, store;
    memset(&out, 0, sizeof out);
    memset(&store, 0, sizeof store);
    if (bc->to) {   // out: a transposed view of a (..., n, m) tensor
        int64_t st[4];
        memcpy(st, oshape, sizeof st);
        st[nz] = n;
        st[nz + 1] = m;
        double* zero = calloc((size_t)(nmat * m * n + 1), sizeof *zero);
        store = make(1, dt, nz + 2, st, zero);
        free(zero);
        CHECK_OK(hg_tensor_transpose(&store, nz, nz + 1, &out));
    }
    CHECK_OK(hg_trace_start(trace_path));
    CHECK_OK(hg_matmul(&a, &b, &out));
    CHECK_OK(hg_trace_stop());
    if (!bc->to) store = out;
    for (int32_t d = 0; d < nz + 2; d++) CHECK(out.shape[d] == oshape[d]);
    double* got = nmat ? values_of(&store) : calloc(1, sizeof(double));
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < nmat * m * n; i++) scale = fmax(scale, fabs(ref[i]));
    for (int64_t z = 0; z < nmat; z++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double g = bc->to ? got[(z * n + j) * m + i] : got[(z * m + i) * n + j];
                worst = fmax(worst, fabs(g - ref[(z * m + i) * n + j]) / (scale > 0 ? scale : 1));
            }
    double tol = dt == HG_DTYPE_F64 ? 1e-12 : dt == HG_DTYPE_F32 ? 1e-5
                 : dt == HG_DTYPE_F16 ? 2e-3 : 1.6e-2;
    CHECK_MSG(worst <= tol, "batched matmul %s %s: off by %g (limit %g)", bc->what,
              hg_dtype_name(dt), worst, tol);
    char* j = hg_test_read_file(trace_path, NULL);
    CHECK(j != NULL);
    if (j) {
        char want[48];
        snprintf(want, sizeof want, "\"detail\": \"batch %lld m ", (long long)bc->batch);
        int nbat = count_of(j, "\"name\": \"gemm_strided_batched\"");
        int nsingle = count_of(j, "\"name\": \"gemm\"");
        CHECK_MSG(nbat == bc->batched && (!bc->batched || count_of(j, want) == bc->batched) &&
                      nsingle == bc->single,
                  "batched matmul %s %s: %d gemm_strided_batched calls (want %d of batch %lld), "
                  "%d gemm calls (want %d)", bc->what, hg_dtype_name(dt), nbat, bc->batched,
                  (long long)bc->batch, nsingle, bc->single);
        free(j);
    }
    destroy(&a);
    destroy(&b);
    destroy(&store);
    free(va);
    free(vb);
    free(ref);
    free(got);
}

static void test_matmul_batched(void) {
    char path[] = "/tmp/hg_test_bmm_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    const hg_dtype dts[4] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    for (size_t i = 0; i < sizeof k_bmm / sizeof k_bmm[0]; i++)
        for (int q = 0; q < 4; q++) check_bmm(&k_bmm[i], dts[q], path);
    remove(path);
}

static void test_gemm_rules(void) {
    int64_t sh[2] = {9, 11}, shb[2] = {11, 8}, shc[2] = {9, 8};
    double* va = randvals(99, -1, 1);
    double* vb = randvals(88, -1, 1);
    double* vc = randvals(72, -1, 1);
    va[5] = NAN;    // alpha == 0 ignores the product, NaN included
    vc[3] = NAN;    // beta == 0 never reads c
    const hg_dtype dts[4] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    const double ab[3][2] = {{0.0, 0.5}, {1.5, 0.0}, {-2.0, 3.0}};
    for (int k = 0; k < 4; k++)
        for (int q = 0; q < 3; q++) {
            hg_tensor r[2];
            for (int e = 0; e < 2; e++) {
                hg_tensor a = make(e, dts[k], 2, sh, va), b = make(e, dts[k], 2, shb, vb);
                r[e] = make(e, dts[k], 2, shc, vc);
                CHECK_OK(hg_gemm(0, 0, ab[q][0], &a, &b, ab[q][1], &r[e]));
                destroy(&a);
                destroy(&b);
            }
            char what[96];
            snprintf(what, sizeof what, "gemm %s alpha %g beta %g", hg_dtype_name(dts[k]),
                     ab[q][0], ab[q][1]);
            compare(&r[0], &r[1], dts[k] == HG_DTYPE_BF16 ? 1.6e-2 : dts[k] == HG_DTYPE_F16 ? 2e-3
                                  : dts[k] == HG_DTYPE_F32 ? 1e-5 : 1e-12,
                    what);
            destroy(&r[0]);
            destroy(&r[1]);
        }
    free(va); free(vb); free(vc);
}

// ---- reductions split into chunks ----
static void test_chunked_reductions(void) {
    const int64_t n = 300000;
    int64_t sh[1] = {n};
    double* v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = 1.0;   // all equal: argmax must be 0
    const hg_reduce_op ops[4] = {HG_REDUCE_ARGMAX, HG_REDUCE_ARGMIN, HG_REDUCE_MAX, HG_REDUCE_SUM};
    for (int round = 0; round < 2; round++) {
        if (round == 1) v[n - 5] = NAN, v[200001] = NAN;   // the first NaN wins
        for (int k = 0; k < 4; k++) {
            hg_tensor r[2];
            for (int e = 0; e < 2; e++) {
                hg_tensor x = make(e, HG_DTYPE_F32, 1, sh, v);
                memset(&r[e], 0, sizeof r[e]);
                CHECK_OK(hg_reduce(ops[k], &x, 0, NULL, 0, &r[e]));
                destroy(&x);
            }
            compare(&r[0], &r[1], 1e-7, hg_reduce_op_name(ops[k]));
            destroy(&r[0]);
            destroy(&r[1]);
        }
    }
    free(v);
}

// ---- random ----
static void test_random(void) {
    int64_t sh[2] = {33, 77};
    double zero[33 * 77] = {0};
    for (int normal = 0; normal < 2; normal++) {
        const hg_dtype dts[3] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16};
        for (int k = 0; k < 3; k++) {
            hg_tensor r[2];
            for (int e = 0; e < 2; e++) {
                r[e] = make(e, dts[k], 2, sh, zero);
                hg_tensor tv;
                CHECK_OK(hg_tensor_transpose(&r[e], 0, 1, &tv));   // any strides, C order of tv
                if (normal) CHECK_OK(hg_random_normal(&tv, 42, 1000, 0.5, 2.0));
                else CHECK_OK(hg_random_uniform(&tv, 42, (uint64_t)-50, -1.0, 3.0));
            }
            // Uniform: bit-identical. Normal: the device's f64 log/cos may differ in the last
            // bits before the rounding to the dtype.
            compare(&r[0], &r[1], normal ? 1e-14 : 0, normal ? "random normal" : "random uniform");
            destroy(&r[0]);
            destroy(&r[1]);
        }
    }
}

// ---- bad input: the CPU's status and message, out untouched ----
static void test_bad_input(void) {
    int64_t sx[2] = {4, 5}, si[1] = {3}, so[2] = {4, 3};
    double vx[20], vi[3] = {1, 5, 0}, sentinel[12];
    for (int i = 0; i < 20; i++) vx[i] = i;
    for (int i = 0; i < 12; i++) sentinel[i] = -7;
    char msg[2][512];
    hg_status st[2];
    for (int e = 0; e < 2; e++) {
        hg_tensor x = make(e, HG_DTYPE_F32, 2, sx, vx), ix = make(e, HG_DTYPE_I64, 1, si, vi);
        hg_tensor o = make(e, HG_DTYPE_F32, 2, so, sentinel);
        st[e] = hg_index_select(&x, 1, &ix, &o);
        snprintf(msg[e], sizeof msg[e], "%s", hg_last_error());
        double* got = values_of(&o);
        for (int i = 0; i < 12; i++) CHECK_MSG(got[i] == -7, "index_select wrote out on failure");
        free(got);
        destroy(&x); destroy(&ix); destroy(&o);
    }
    CHECK_MSG(st[0] == HG_ERR_OUT_OF_RANGE && st[1] == st[0] && !strcmp(msg[0], msg[1]),
              "bad index: cpu %d '%s', device %d '%s'", st[0], msg[0], st[1], msg[1]);
    // Probabilities outside [0, 1]: the first bad one (C order, through a transposed view).
    int64_t sp[2] = {3, 4};
    double vp[12] = {0.1, 0.2, 0.3, 0.4, 0.5, 1.5, 0.7, 0.8, -0.25, 0.9, 0.95, 1.0};
    for (int e = 0; e < 2; e++) {
        hg_tensor p = make(e, HG_DTYPE_F32, 2, sp, vp), t = make(e, HG_DTYPE_F32, 2, sp, vp);
        hg_tensor pt, tt, o;
        CHECK_OK(hg_tensor_transpose(&p, 0, 1, &pt));
        CHECK_OK(hg_tensor_transpose(&t, 0, 1, &tt));
        memset(&o, 0, sizeof o);
        st[e] = hg_binary_cross_entropy(&pt, &tt, NULL, HG_REDUCTION_MEAN, &o);
        snprintf(msg[e], sizeof msg[e], "%s", hg_last_error());
        CHECK(o.buffer.handle == 0);
        destroy(&p); destroy(&t);
    }
    CHECK_MSG(st[0] == HG_ERR_INVALID_ARGUMENT && st[1] == st[0] && !strcmp(msg[0], msg[1]),
              "bad probability: cpu %d '%s', device %d '%s'", st[0], msg[0], st[1], msg[1]);
    // A class index out of range.
    int64_t sl[2] = {3, 4}, stg[1] = {3};
    double vl[12] = {0}, vt[3] = {1, 4, 2};
    for (int e = 0; e < 2; e++) {
        hg_tensor l = make(e, HG_DTYPE_F32, 2, sl, vl), t = make(e, HG_DTYPE_I32, 1, stg, vt), o;
        memset(&o, 0, sizeof o);
        st[e] = hg_cross_entropy(&l, &t, -100, HG_REDUCTION_MEAN, &o);
        snprintf(msg[e], sizeof msg[e], "%s", hg_last_error());
        CHECK(o.buffer.handle == 0);
        destroy(&l); destroy(&t);
    }
    CHECK_MSG(st[0] == HG_ERR_OUT_OF_RANGE && st[1] == st[0] && !strcmp(msg[0], msg[1]),
              "bad class index: cpu %d '%s', device %d '%s'", st[0], msg[0], st[1], msg[1]);
}

// hg_buffer_wrap_device over part of a device buffer: the same elements, no copy.
static void test_wrap_device(void) {
    float vals[16];
    for (int i = 0; i < 16; i++) vals[i] = (float)i * 1.5f;
    hg_buffer b, w, bad;
    uint64_t addr = 0;
    CHECK_OK(hg_buffer_create(g_ex[1], HG_DTYPE_F32, 16, &b));
    CHECK_OK(hg_buffer_write(b, 0, vals, 16));
    CHECK_OK(hg_buffer_device_address(b, &addr));
    CHECK(addr != 0);
    CHECK_OK(hg_buffer_wrap_device(g_ex[1], HG_DTYPE_F32, addr + 4 * sizeof(float), 8, &w));
    float got[8] = {0};
    CHECK_OK(hg_buffer_read(w, 0, got, 8));
    CHECK(memcmp(got, vals + 4, sizeof got) == 0);
    float one = -3.0f;
    CHECK_OK(hg_buffer_write(w, 0, &one, 1));   // visible through the original buffer
    CHECK_OK(hg_buffer_read(b, 4, got, 1));
    CHECK(got[0] == -3.0f);
    CHECK_STATUS(hg_buffer_wrap_device(g_ex[1], HG_DTYPE_F32, addr + 2, 4, &bad),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_buffer_wrap_device(g_ex[1], HG_DTYPE_F32, 0, 4, &bad), HG_ERR_NULL_POINTER);
    CHECK_OK(hg_buffer_destroy(w));
    CHECK_OK(hg_buffer_destroy(b));
}

// ---- elementwise: the vector variant and its scalar fallback ----
// Operand t of case `kind` (0 add, 1 neg, 2 cast to dt2, 3 where(cond, a, b)) on executor e: a
// view of n elements at element offset off of a buffer of off + n + 3 (the rest zero).
static hg_tensor ew_operand(int e, hg_dtype dt, int64_t n, int64_t off, const double* vals) {
    int64_t whole = off + n + 3;
    double* v = calloc((size_t)whole, sizeof *v);
    for (int64_t i = 0; vals && i < n; i++) v[off + i] = vals[i];
    hg_tensor b = make(e, dt, 1, &whole, v), t;
    CHECK_OK(hg_tensor_view(b.buffer, 1, &n, NULL, off, &t));
    free(v);
    return t;
}

// Runs one case on the CPU and the device with the same inputs (offsets off[0..2]: a, b, out)
// and compares the whole output buffers byte for byte (the elements outside the view too).
static void ew_case(int kind, hg_dtype dt, hg_dtype dt2, int64_t n, const int64_t* off) {
    double lo = dt == HG_DTYPE_U8 ? 0 : -8, hi = dt == HG_DTYPE_U8 ? 200 : 8;
    double* va = randvals(n, lo, hi);
    double* vb = randvals(n, lo, hi);
    double* vc = randvals(n, -1, 1);
    unsigned char* got[2] = {NULL, NULL};
    size_t nb[2] = {0, 0};
    for (int e = 0; e < 2; e++) {
        hg_tensor a = ew_operand(e, dt, n, off[0], va), b = ew_operand(e, dt, n, off[1], vb);
        hg_tensor c = ew_operand(e, HG_DTYPE_BOOL, n, off[1], vc);
        hg_tensor o = ew_operand(e, kind == 2 ? dt2 : dt, n, off[2], NULL);
        if (kind == 0) CHECK_OK(hg_binary(HG_BINARY_ADD, &a, &b, &o));
        else if (kind == 1) CHECK_OK(hg_unary(HG_UNARY_NEG, &a, &o));
        else if (kind == 2) CHECK_OK(hg_cast(&a, dt2, &o));
        else CHECK_OK(hg_where(&c, &a, &b, &o));
        got[e] = bytes_of(&o, &nb[e]);
        destroy(&a);
        destroy(&b);
        destroy(&c);
        destroy(&o);
    }
    CHECK_MSG(nb[0] == nb[1] && !memcmp(got[0], got[1], nb[0]),
              "elementwise %s %s%s%s, %lld elements at offsets %lld %lld %lld: the device differs "
              "from the CPU", kind == 0 ? "add" : kind == 1 ? "neg" : kind == 2 ? "cast" : "where",
              hg_dtype_name(dt), kind == 2 ? " to " : "", kind == 2 ? hg_dtype_name(dt2) : "",
              (long long)n, (long long)off[0], (long long)off[1], (long long)off[2]);
    free(got[0]);
    free(got[1]);
    free(va);
    free(vb);
    free(vc);
}

// Sizes around the vector width and its tail, one large enough for the grid-stride loop to
// take several trips (the emulation has one SM), views whose offsets leave the vectors aligned
// (0, 16 elements) or not (1, 3: the scalar kernels), every access width (1 to 8 bytes).
static void test_vector_ewise(void) {
    static const int64_t sizes[] = {0, 1, 3, 4, 5, 17, 1023, 1027, 20003};
    static const int64_t offs[][3] = {{0, 0, 0}, {1, 1, 1}, {0, 1, 0}, {16, 16, 16}, {0, 0, 3}};
    static const hg_dtype types[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16,
                                     HG_DTYPE_I32, HG_DTYPE_I64, HG_DTYPE_U8};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t o = 0; o < sizeof offs / sizeof offs[0]; o++) {
            if (sizes[s] > 1027 && o > 1) continue;   // the large size: aligned and not
            for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
                ew_case(0, types[t], types[t], sizes[s], offs[o]);
            ew_case(1, HG_DTYPE_BF16, HG_DTYPE_BF16, sizes[s], offs[o]);
            ew_case(1, HG_DTYPE_I64, HG_DTYPE_I64, sizes[s], offs[o]);
            ew_case(2, HG_DTYPE_F16, HG_DTYPE_F32, sizes[s], offs[o]);   // 8 and 16 bytes
            ew_case(2, HG_DTYPE_F32, HG_DTYPE_F64, sizes[s], offs[o]);
            ew_case(2, HG_DTYPE_I32, HG_DTYPE_U8, sizes[s], offs[o]);
            ew_case(3, HG_DTYPE_F16, HG_DTYPE_F16, sizes[s], offs[o]);   // bool x 8 beside f16
            ew_case(3, HG_DTYPE_F64, HG_DTYPE_F64, sizes[s], offs[o]);
        }
}

int main(void) {
    const char* name = getenv("HG_TEST_BACKEND");
    if (!name || !name[0] || !strcmp(name, "cpu")) {
        printf("test_device_ops: SKIPPED (set HG_TEST_BACKEND to a non-CPU backend)\n");
        return 77;
    }
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_ex[0]));
    hg_status s = hg_executor_create_by_name(name, &g_ex[1]);
    if (s) {
        printf("test_device_ops: SKIPPED (backend '%s' unavailable: %s)\n", name, hg_last_error());
        hg_executor_destroy(g_ex[0]);
        return 77;
    }
    test_graph();
    test_vector_ewise();
    test_matmul_paths();
    test_matmul_blas_layouts();
    test_matmul_batched();
    test_gemm_rules();
    test_chunked_reductions();
    test_random();
    test_bad_input();
    test_wrap_device();
    hg_executor_destroy(g_ex[1]);
    hg_executor_destroy(g_ex[0]);
    return hg_test_finish("test_device_ops");
}
