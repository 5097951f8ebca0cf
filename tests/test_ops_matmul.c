// hg_matmul, hg_gemm and hg_matvec against a double-precision (floats) or wrapping 64-bit
// (integers) reference computed here through the definition of a strided view: 1-D
// promotion, batch broadcasting, empty dims, transposed / strided / negative-stride / broadcast
// operands, every dtype and some mixed pairs, same_kind out dtypes, out layouts, in place;
// gemm's alpha, beta (beta = 0 over NaN), transposes; and every refused argument, each with its
// status and nothing written.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"

static hg_executor ex;
static uint64_t rng = 12345;

static double urand(void) { return (double)(hg_test_rand(&rng) >> 11) * (1.0 / 9007199254740992.0); }

static size_t esize(hg_dtype dt) {
    switch (dt) {
    case HG_DTYPE_BOOL: case HG_DTYPE_I8: case HG_DTYPE_U8: return 1;
    case HG_DTYPE_I16: case HG_DTYPE_U16: case HG_DTYPE_F16: case HG_DTYPE_BF16: return 2;
    case HG_DTYPE_I32: case HG_DTYPE_U32: case HG_DTYPE_F32: return 4;
    default: return 8;
    }
}
static int is_float(hg_dtype dt) { return dt >= HG_DTYPE_F16; }
static int is_unsigned(hg_dtype dt) { return dt >= HG_DTYPE_U8 && dt <= HG_DTYPE_U64; }

// Element idx of a host array of dtype dt, as double (floats) or as the 64-bit pattern of
// the value sign- or zero-extended (integers, bool).
static double get_d(hg_dtype dt, const void* base, int64_t idx) {
    const unsigned char* p = (const unsigned char*)base + idx * (int64_t)esize(dt);
    switch (dt) {
    case HG_DTYPE_F16: { uint16_t h; memcpy(&h, p, 2); return hg_f16_to_f32(h); }
    case HG_DTYPE_BF16: { uint16_t h; memcpy(&h, p, 2); return hg_bf16_to_f32(h); }
    case HG_DTYPE_F32: { float f; memcpy(&f, p, 4); return f; }
    case HG_DTYPE_F64: { double f; memcpy(&f, p, 8); return f; }
    case HG_DTYPE_BOOL: return *p ? 1 : 0;
    case HG_DTYPE_I8: return (int8_t)*p;
    case HG_DTYPE_U8: return *p;
    case HG_DTYPE_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case HG_DTYPE_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case HG_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case HG_DTYPE_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case HG_DTYPE_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    default: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    }
}
static uint64_t get_u(hg_dtype dt, const void* base, int64_t idx) {
    const unsigned char* p = (const unsigned char*)base + idx * (int64_t)esize(dt);
    switch (dt) {
    case HG_DTYPE_BOOL: return *p ? 1 : 0;
    case HG_DTYPE_I8: return (uint64_t)(int64_t)(int8_t)*p;
    case HG_DTYPE_U8: return *p;
    case HG_DTYPE_I16: { int16_t v; memcpy(&v, p, 2); return (uint64_t)(int64_t)v; }
    case HG_DTYPE_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case HG_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); return (uint64_t)(int64_t)v; }
    case HG_DTYPE_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void put_random(hg_dtype dt, void* base, int64_t idx) {
    unsigned char* p = (unsigned char*)base + idx * (int64_t)esize(dt);
    double v = urand() * 2.0 - 1.0;
    switch (dt) {
    case HG_DTYPE_F16: { uint16_t h = hg_f32_to_f16((float)v); memcpy(p, &h, 2); break; }
    case HG_DTYPE_BF16: { uint16_t h = hg_f32_to_bf16((float)v); memcpy(p, &h, 2); break; }
    case HG_DTYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case HG_DTYPE_F64: memcpy(p, &v, 8); break;
    case HG_DTYPE_BOOL: *p = (unsigned char)(hg_test_rand(&rng) & 1); break;
    default: {   // full-range integers: sums and products wrap
        uint64_t r = hg_test_rand(&rng);
        memcpy(p, &r, esize(dt));
    }
    }
}

// Layout of a test view: storage order (transposed last two dims), a step on each dim, and
// flipped (negative-stride) dims; `bcast` gives zero strides to the leading dims' of size > 1.
enum { L_CONTIG = 0, L_TRANS = 1, L_STEP = 2, L_FLIP = 4, L_BCAST = 8 };

typedef struct view {
    hg_buffer buf;
    hg_tensor t;
    void* host;
    int64_t count;
} view;

static view make_view(hg_dtype dt, int32_t nd, const int64_t* shape, int layout) {
    view v;
    memset(&v, 0, sizeof v);
    int64_t sshape[HG_MAX_DIMS], step[HG_MAX_DIMS];
    int32_t perm[HG_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++) {
        perm[d] = d;
        step[d] = (layout & L_STEP) ? 2 : 1;
        sshape[d] = shape[d] * step[d];
        if ((layout & L_BCAST) && d < nd - 2) sshape[d] = 1;
    }
    if ((layout & L_TRANS) && nd >= 2) { perm[nd - 1] = nd - 2; perm[nd - 2] = nd - 1; }
    // Storage strides: C order over perm.
    int64_t sstr[HG_MAX_DIMS], acc = 1;
    for (int32_t i = nd - 1; i >= 0; i--) {
        sstr[perm[i]] = acc;
        acc *= sshape[perm[i]] > 0 ? sshape[perm[i]] : 1;
    }
    v.count = acc + 3;   // a little slack after the view
    CHECK_OK(hg_buffer_create(ex, dt, (size_t)v.count, &v.buf));
    CHECK_OK(hg_buffer_map(v.buf, &v.host));
    for (int64_t i = 0; i < v.count; i++) put_random(dt, v.host, i);
    v.t.buffer = v.buf;
    v.t.dtype = dt;
    v.t.ndim = nd;
    v.t.offset = 1;
    v.count = acc + 3;
    for (int32_t d = 0; d < nd; d++) {
        v.t.shape[d] = shape[d];
        v.t.strides[d] = sshape[d] == 1 && shape[d] > 1 ? 0 : sstr[d] * step[d];
        if ((layout & L_FLIP) && shape[d] > 1 && v.t.strides[d] != 0) {
            v.t.offset += (shape[d] - 1) * v.t.strides[d];
            v.t.strides[d] = -v.t.strides[d];
        }
    }
    return v;
}

static int64_t elem_index(const hg_tensor* t, const int64_t* idx) {
    int64_t e = t->offset;
    for (int32_t d = 0; d < t->ndim; d++) e += idx[d] * t->strides[d];
    return e;
}

static int next_index(int32_t nd, const int64_t* shape, int64_t* idx) {
    for (int32_t d = nd - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) return 1;
        idx[d] = 0;
    }
    return 0;
}

static int64_t numel(int32_t nd, const int64_t* shape) {
    int64_t n = 1;
    for (int32_t d = 0; d < nd; d++) n *= shape[d];
    return n;
}

static hg_dtype result_type(hg_dtype a, hg_dtype b) {
    hg_dtype r = HG_DTYPE_F64;
    CHECK_OK(hg_result_type(a, b, &r));
    return r;
}

static uint64_t wrap_to(hg_dtype dt, uint64_t v) {
    if (dt == HG_DTYPE_BOOL) return v != 0;
    size_t es = esize(dt);
    if (es == 8) return v;
    uint64_t mask = (1ull << (es * 8)) - 1;
    v &= mask;
    if (!is_unsigned(dt) && (v >> (es * 8 - 1))) v |= ~mask;   // sign-extend
    return v;
}

// Checks out (a written result of a @ b) element by element against the reference.
static int check_matmul(const hg_tensor* a, const void* ah, const hg_tensor* b, const void* bh,
                        const hg_tensor* out, const void* oh, const char* what) {
    int32_t na = a->ndim, nb = b->ndim, on = out->ndim;
    hg_dtype rt = result_type(a->dtype, b->dtype);
    int64_t K = a->shape[na - 1];
    int tail = (na >= 2) + (nb >= 2), nbd = on - tail;
    int64_t idx[HG_MAX_DIMS] = {0};
    int bad = 0;
    if (numel(on, out->shape) == 0) return 1;
    do {
        int64_t ai[HG_MAX_DIMS] = {0}, bi[HG_MAX_DIMS] = {0};
        for (int32_t d = 0; d < na - 2; d++) {
            int64_t od = idx[d + nbd - (na - 2)];
            ai[d] = a->shape[d] == 1 ? 0 : od;
        }
        for (int32_t d = 0; d < nb - 2; d++) {
            int64_t od = idx[d + nbd - (nb - 2)];
            bi[d] = b->shape[d] == 1 ? 0 : od;
        }
        int64_t i = na >= 2 ? idx[nbd] : 0, j = nb >= 2 ? idx[on - 1] : 0;
        double ref = 0, mag = 0;
        uint64_t iref = 0;
        for (int64_t k = 0; k < K; k++) {
            if (na >= 2) { ai[na - 2] = i; ai[na - 1] = k; } else ai[0] = k;
            if (nb >= 2) { bi[nb - 2] = k; bi[nb - 1] = j; } else bi[0] = k;
            int64_t ea = elem_index(a, ai), eb = elem_index(b, bi);
            if (is_float(rt)) {
                double x = get_d(a->dtype, ah, ea), y = get_d(b->dtype, bh, eb);
                ref += x * y;
                mag += fabs(x * y);
            } else if (rt == HG_DTYPE_BOOL) {
                iref |= get_u(a->dtype, ah, ea) & get_u(b->dtype, bh, eb);
            } else {
                iref += get_u(a->dtype, ah, ea) * get_u(b->dtype, bh, eb);
            }
        }
        int64_t eo = elem_index(out, idx);
        int ok;
        if (is_float(rt) || is_float(out->dtype)) {
            if (!is_float(rt)) {
                uint64_t w = wrap_to(rt, iref);
                ref = is_unsigned(rt) ? (double)w : (double)(int64_t)w;
                mag = fabs(ref);
            }
            double got = get_d(out->dtype, oh, eo);
            double tol = 1e-12 * mag + 1e-300;
            hg_dtype prec = out->dtype < rt || !is_float(rt) ? out->dtype : rt;
            if (rt == HG_DTYPE_F32 || rt == HG_DTYPE_F16 || rt == HG_DTYPE_BF16) tol = 2e-6 * mag + 1e-30;
            if (prec == HG_DTYPE_F32) tol += fabs(ref) * 1.2e-7;
            if (prec == HG_DTYPE_F16) tol += fabs(ref) * 9.8e-4 + 6e-8;
            if (prec == HG_DTYPE_BF16) tol += fabs(ref) * 7.9e-3 + 1e-38;
            if (isnan(ref)) ok = isnan(got);
            else if (isinf(ref)) ok = got == ref;
            else ok = fabs(got - ref) <= tol;
            if (!ok && bad < 3)
                fprintf(stderr, "  %s: element %lld: got %.17g want %.17g (tol %g)\n", what,
                        (long long)eo, got, ref, tol);
        } else {
            uint64_t got = get_u(out->dtype, oh, eo), want = wrap_to(out->dtype, wrap_to(rt, iref));
            ok = got == want;
            if (!ok && bad < 3)
                fprintf(stderr, "  %s: element %lld: got %llu want %llu\n", what, (long long)eo,
                        (unsigned long long)got, (unsigned long long)want);
        }
        bad += !ok;
    } while (next_index(on, out->shape, idx));
    return bad == 0;
}

// a @ b into a freshly allocated out, checked; layouts la, lb.
static void run_case(hg_dtype da, int32_t na, const int64_t* sa, int la, hg_dtype db, int32_t nb,
                     const int64_t* sb, int lb, const char* what) {
    view a = make_view(da, na, sa, la), b = make_view(db, nb, sb, lb);
    hg_tensor out;
    memset(&out, 0, sizeof out);
    hg_status s = hg_matmul(&a.t, &b.t, &out);
    CHECK_MSG(s == HG_OK, "%s: %s (%s)", what, hg_status_string(s), hg_last_error());
    if (s == HG_OK) {
        CHECK(out.dtype == result_type(da, db));
        void* oh = NULL;
        CHECK_OK(hg_buffer_map(out.buffer, &oh));
        CHECK_MSG(check_matmul(&a.t, a.host, &b.t, b.host, &out, oh, what), "%s (dtypes %d, %d, "
                  "layouts %d, %d)", what, (int)da, (int)db, la, lb);
        hg_buffer_destroy(out.buffer);
    }
    hg_buffer_destroy(a.buf);
    hg_buffer_destroy(b.buf);
}

static void test_shapes(void) {
    struct { int32_t na; int64_t a[4]; int32_t nb; int64_t b[4]; int32_t nd; int64_t o[4]; } cases[] = {
        {1, {7}, 1, {7}, 0, {0}},
        {1, {5}, 2, {5, 3}, 1, {3}},
        {2, {4, 6}, 1, {6}, 1, {4}},
        {2, {3, 5}, 2, {5, 4}, 2, {3, 4}},
        {4, {2, 1, 3, 4}, 3, {5, 4, 2}, 4, {2, 5, 3, 2}},
        {3, {2, 3, 4}, 1, {4}, 2, {2, 3}},
        {1, {4}, 3, {2, 4, 3}, 2, {2, 3}},
        {3, {3, 2, 0}, 2, {0, 5}, 3, {3, 2, 5}},   // k = 0: zeros
        {2, {0, 3}, 2, {3, 4}, 2, {0, 4}},
        {3, {0, 2, 3}, 2, {3, 4}, 3, {0, 2, 4}},
        {3, {4, 1, 6}, 3, {1, 6, 5}, 3, {4, 1, 5}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        view a = make_view(HG_DTYPE_F32, cases[i].na, cases[i].a, 0);
        view b = make_view(HG_DTYPE_F32, cases[i].nb, cases[i].b, 0);
        hg_tensor out;
        memset(&out, 0, sizeof out);
        CHECK_OK(hg_matmul(&a.t, &b.t, &out));
        CHECK(out.ndim == cases[i].nd);
        for (int32_t d = 0; d < out.ndim && d < cases[i].nd; d++) CHECK(out.shape[d] == cases[i].o[d]);
        void* oh = NULL;
        if (out.buffer.handle) {
            CHECK_OK(hg_buffer_map(out.buffer, &oh));
            CHECK_MSG(check_matmul(&a.t, a.host, &b.t, b.host, &out, oh, "shapes"), "case %zu", i);
            hg_buffer_destroy(out.buffer);
        }
        hg_buffer_destroy(a.buf);
        hg_buffer_destroy(b.buf);
    }
}

static void test_layouts(void) {
    // f32 maps each layout onto sgemm (unit stride) or a copy; f64 packs any strides; i32
    // converts. Sizes cross the sgemm threading threshold and the kernels' tile edges.
    hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_I32, HG_DTYPE_F16};
    int layouts[] = {L_CONTIG, L_TRANS, L_STEP, L_FLIP, L_TRANS | L_FLIP, L_STEP | L_TRANS};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
        for (size_t i = 0; i < 6; i++)
            for (size_t j = 0; j < 6; j++) {
                int64_t sa[2] = {13, 9}, sb[2] = {9, 21};
                run_case(dts[di], 2, sa, layouts[i], dts[di], 2, sb, layouts[j], "layouts 2-D");
            }
    int64_t big_a[2] = {131, 257}, big_b[2] = {257, 75};
    for (int la = 0; la < 2; la++)
        for (int lb = 0; lb < 2; lb++) {
            run_case(HG_DTYPE_F32, 2, big_a, la, HG_DTYPE_F32, 2, big_b, lb, "big f32");
            run_case(HG_DTYPE_F64, 2, big_a, la * L_FLIP, HG_DTYPE_F64, 2, big_b, lb, "big f64");
        }
    // Batched with broadcast operands (zero batch strides), transposed and flipped.
    int64_t ba[4] = {2, 1, 3, 4}, bb[3] = {5, 4, 2};
    int lays[] = {L_CONTIG, L_TRANS, L_FLIP, L_BCAST, L_STEP | L_FLIP};
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 5; j++) {
            run_case(HG_DTYPE_F32, 4, ba, lays[i], HG_DTYPE_F32, 3, bb, lays[j], "batched f32");
            run_case(HG_DTYPE_F64, 4, ba, lays[i], HG_DTYPE_F64, 3, bb, lays[j], "batched f64");
        }
    // Batch folding: (B, M, K) @ (K, N) as one product, and a 1-D b.
    int64_t fa[3] = {6, 7, 16}, fb[2] = {16, 33}, fv[1] = {16};
    run_case(HG_DTYPE_F32, 3, fa, 0, HG_DTYPE_F32, 2, fb, 0, "folded batches");
    run_case(HG_DTYPE_F32, 3, fa, L_STEP, HG_DTYPE_F32, 2, fb, L_TRANS, "folded, strided");
    run_case(HG_DTYPE_F32, 3, fa, 0, HG_DTYPE_F32, 1, fv, L_FLIP, "batched matvec");
    run_case(HG_DTYPE_F64, 3, fa, 0, HG_DTYPE_F64, 1, fv, L_STEP, "batched matvec f64");
}

// Batches of products too small to split run whole on the executor's threads, several at once
// (hg_cpu_sgemm_batched): batch counts below, at and above the thread count, uneven shares,
// a broadcast operand and transposed ones, on 1, 3 and 4 threads.
static void test_batched_threads(void) {
    hg_executor saved = ex;
    int threads[] = {1, 3, 4};
    for (size_t t = 0; t < 3; t++) {
        hg_executor_options o = {HG_BACKEND_CPU, 0, threads[t]};
        CHECK_OK(hg_executor_create_ex(&o, &ex));
        int64_t batches[] = {2, 3, 7, 16};
        for (size_t i = 0; i < 4; i++) {
            int64_t sa[3] = {batches[i], 8, 12}, sb[3] = {batches[i], 12, 5}, sb2[2] = {12, 5};
            run_case(HG_DTYPE_F32, 3, sa, L_CONTIG, HG_DTYPE_F32, 3, sb, L_CONTIG, "bmm threads");
            run_case(HG_DTYPE_F32, 3, sa, L_TRANS, HG_DTYPE_F32, 3, sb, L_TRANS, "bmm threads T");
            run_case(HG_DTYPE_F32, 3, sa, L_BCAST, HG_DTYPE_F32, 3, sb, 0, "bmm threads bcast");
            run_case(HG_DTYPE_F32, 3, sa, L_TRANS, HG_DTYPE_F32, 2, sb2, 0, "bmm threads 2-D b");
        }
        hg_executor_destroy(ex);
    }
    ex = saved;
}

// NaN and infinities propagate as in the double reference (inf * 0 = NaN, inf - inf = NaN).
static void test_special(void) {
    hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    int64_t sa[2] = {13, 9}, sb[2] = {9, 21};
    for (int i = 0; i < 4; i++)
        for (int lay = 0; lay < 2; lay++) {
            view a = make_view(dts[i], 2, sa, lay ? L_TRANS : 0), b = make_view(dts[i], 2, sb, lay ? L_FLIP : 0);
            int64_t i1[2] = {2, 3}, i2[2] = {5, 1}, i3[2] = {4, 7}, i4[2] = {6, 7};
            double vals[4] = {NAN, INFINITY, -INFINITY, INFINITY};
            view* where[4] = {&a, &a, &b, &b};
            int64_t* at[4] = {i1, i2, i3, i4};
            for (int q = 0; q < 4; q++) {
                unsigned char* p = (unsigned char*)where[q]->host +
                                   elem_index(&where[q]->t, at[q]) * (int64_t)esize(dts[i]);
                if (dts[i] == HG_DTYPE_F32) { float f = (float)vals[q]; memcpy(p, &f, 4); }
                else if (dts[i] == HG_DTYPE_F64) memcpy(p, &vals[q], 8);
                else {
                    uint16_t h = dts[i] == HG_DTYPE_F16 ? hg_f32_to_f16((float)vals[q])
                                                       : hg_f32_to_bf16((float)vals[q]);
                    memcpy(p, &h, 2);
                }
            }
            hg_tensor out;
            memset(&out, 0, sizeof out);
            CHECK_OK(hg_matmul(&a.t, &b.t, &out));
            void* oh = NULL;
            CHECK_OK(hg_buffer_map(out.buffer, &oh));
            CHECK_MSG(check_matmul(&a.t, a.host, &b.t, b.host, &out, oh, "special"), "dtype %d",
                      (int)dts[i]);
            hg_buffer_destroy(out.buffer);
            hg_buffer_destroy(a.buf);
            hg_buffer_destroy(b.buf);
        }
}

static void test_dtypes(void) {
    int64_t sa[3] = {2, 5, 11}, sb[2] = {11, 6};
    for (int dt = 0; dt < HG_DTYPE_COUNT; dt++) {
        run_case((hg_dtype)dt, 3, sa, 0, (hg_dtype)dt, 2, sb, L_TRANS, "every dtype");
        run_case((hg_dtype)dt, 3, sa, L_FLIP, (hg_dtype)dt, 2, sb, L_STEP, "every dtype strided");
    }
    hg_dtype pairs[][2] = {
        {HG_DTYPE_F32, HG_DTYPE_F16}, {HG_DTYPE_I8, HG_DTYPE_U8}, {HG_DTYPE_I32, HG_DTYPE_F32},
        {HG_DTYPE_BF16, HG_DTYPE_F16}, {HG_DTYPE_U64, HG_DTYPE_I64}, {HG_DTYPE_BOOL, HG_DTYPE_I16},
        {HG_DTYPE_U8, HG_DTYPE_BF16}, {HG_DTYPE_F64, HG_DTYPE_F32}, {HG_DTYPE_U16, HG_DTYPE_I8},
        {HG_DTYPE_F16, HG_DTYPE_I16},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        run_case(pairs[i][0], 3, sa, 0, pairs[i][1], 2, sb, L_FLIP, "mixed dtypes");
}

// Existing outs: same_kind casts, transposed and negative-stride layouts, in place.
static void test_out(void) {
    int64_t sa[2] = {9, 7}, sb[2] = {7, 9}, so[2] = {9, 9};
    struct { hg_dtype da, db, dout; int lout; } cases[] = {
        {HG_DTYPE_F32, HG_DTYPE_F32, HG_DTYPE_F32, L_TRANS},
        {HG_DTYPE_F32, HG_DTYPE_F32, HG_DTYPE_F32, L_FLIP},
        {HG_DTYPE_F32, HG_DTYPE_F32, HG_DTYPE_F32, L_STEP},
        {HG_DTYPE_F32, HG_DTYPE_F32, HG_DTYPE_F64, 0},
        {HG_DTYPE_F32, HG_DTYPE_F32, HG_DTYPE_F16, 0},
        {HG_DTYPE_F16, HG_DTYPE_F16, HG_DTYPE_F32, L_TRANS},
        {HG_DTYPE_F64, HG_DTYPE_F64, HG_DTYPE_F64, L_TRANS | L_FLIP},
        {HG_DTYPE_I16, HG_DTYPE_I16, HG_DTYPE_I64, L_STEP},
        {HG_DTYPE_I32, HG_DTYPE_I32, HG_DTYPE_I8, 0},
        {HG_DTYPE_U8, HG_DTYPE_U8, HG_DTYPE_F32, L_FLIP},
        {HG_DTYPE_BOOL, HG_DTYPE_BOOL, HG_DTYPE_I32, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        view a = make_view(cases[i].da, 2, sa, 0), b = make_view(cases[i].db, 2, sb, L_TRANS);
        view o = make_view(cases[i].dout, 2, so, cases[i].lout);
        hg_status s = hg_matmul(&a.t, &b.t, &o.t);
        CHECK_MSG(s == HG_OK, "out case %zu: %s", i, hg_last_error());
        CHECK_MSG(check_matmul(&a.t, a.host, &b.t, b.host, &o.t, o.host, "out"), "out case %zu", i);
        hg_buffer_destroy(a.buf);
        hg_buffer_destroy(b.buf);
        hg_buffer_destroy(o.buf);
    }
    // k = 0 into existing outs holding random values: every element becomes 0.
    hg_dtype kz[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_I32, HG_DTYPE_F16, HG_DTYPE_BOOL};
    for (int i = 0; i < 5; i++) {
        int64_t sa0[3] = {2, 3, 0}, sb0[2] = {0, 4}, so0[3] = {2, 3, 4};
        view a = make_view(kz[i], 3, sa0, 0), b = make_view(kz[i], 2, sb0, 0);
        view o = make_view(kz[i], 3, so0, i % 2 ? L_FLIP : L_TRANS);
        CHECK_OK(hg_matmul(&a.t, &b.t, &o.t));
        int64_t idx[3] = {0, 0, 0};
        int nonzero = 0;
        do nonzero += get_u(kz[i] == HG_DTYPE_F32 ? HG_DTYPE_U32 : kz[i] == HG_DTYPE_F64 ? HG_DTYPE_U64
                            : kz[i] == HG_DTYPE_F16 ? HG_DTYPE_U16 : kz[i], o.host,
                            elem_index(&o.t, idx)) != 0;
        while (next_index(3, so0, idx));
        CHECK_MSG(nonzero == 0, "k = 0, dtype %d: %d nonzero elements", (int)kz[i], nonzero);
        hg_buffer_destroy(a.buf);
        hg_buffer_destroy(b.buf);
        hg_buffer_destroy(o.buf);
    }
    // In place: out is exactly a (square), f32, f64 and i32.
    hg_dtype ip[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_I32};
    for (int i = 0; i < 3; i++) {
        int64_t s8[3] = {3, 8, 8};
        view a = make_view(ip[i], 3, s8, 0), b = make_view(ip[i], 3, s8, L_TRANS);
        size_t nbytes = (size_t)a.count * esize(ip[i]);
        void* snap = malloc(nbytes);
        memcpy(snap, a.host, nbytes);
        CHECK_OK(hg_matmul(&a.t, &b.t, &a.t));
        CHECK_MSG(check_matmul(&a.t, snap, &b.t, b.host, &a.t, a.host, "in place"), "in place %d", i);
        free(snap);
        hg_buffer_destroy(a.buf);
        hg_buffer_destroy(b.buf);
    }
}

static double gemm_ref(const view* a, const view* b, int ta, int tb, int64_t i, int64_t j,
                       int64_t k, double* mag) {
    double r = 0;
    *mag = 0;
    for (int64_t p = 0; p < k; p++) {
        int64_t ia[2] = {ta ? p : i, ta ? i : p}, ib[2] = {tb ? j : p, tb ? p : j};
        double x = get_d(a->t.dtype, a->host, elem_index(&a->t, ia));
        double y = get_d(b->t.dtype, b->host, elem_index(&b->t, ib));
        r += x * y;
        *mag += fabs(x * y);
    }
    return r;
}

static void test_gemm(void) {
    int64_t m = 17, n = 23, k = 29;
    double ab[][2] = {{1, 0}, {2.5, 0}, {1, 1}, {-0.5, 2}, {0, 3}, {1.5, -1}};
    hg_dtype dts[][2] = {{HG_DTYPE_F32, HG_DTYPE_F32}, {HG_DTYPE_F64, HG_DTYPE_F64},
                         {HG_DTYPE_F16, HG_DTYPE_F16}, {HG_DTYPE_F32, HG_DTYPE_F64},
                         {HG_DTYPE_BF16, HG_DTYPE_F32}};
    int clay[] = {0, L_TRANS, L_FLIP};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (size_t q = 0; q < sizeof ab / sizeof ab[0]; q++)
                    for (int cl = 0; cl < 3; cl++) {
                        hg_dtype dt = dts[di][0], dc = dts[di][1];
                        int64_t sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n};
                        int64_t sc[2] = {m, n};
                        view a = make_view(dt, 2, sa, (int)(q % 2) * L_STEP);
                        view b = make_view(dt, 2, sb, cl == 2 ? L_FLIP : 0);
                        view c = make_view(dc, 2, sc, clay[cl]);
                        double alpha = ab[q][0], beta = ab[q][1];
                        // beta = 0: C's old contents (NaN here) must be ignored.
                        int64_t idx[2] = {0, 0};
                        if (beta == 0) do {
                                int64_t e = elem_index(&c.t, idx);
                                if (dc == HG_DTYPE_F32) ((float*)c.host)[e] = NAN;
                                else if (dc == HG_DTYPE_F64) ((double*)c.host)[e] = NAN;
                                else ((uint16_t*)c.host)[e] = 0x7e00;   // f16 / bf16 NaN
                            } while (next_index(2, sc, idx));
                        size_t cbytes = (size_t)c.count * esize(dc);
                        unsigned char* old = malloc(cbytes);
                        memcpy(old, c.host, cbytes);
                        hg_status s = hg_gemm(ta, tb, alpha, &a.t, &b.t, beta, &c.t);
                        CHECK_MSG(s == HG_OK, "gemm: %s", hg_last_error());
                        int bad = 0;
                        memset(idx, 0, sizeof idx);
                        do {
                            double mag, r = gemm_ref(&a, &b, ta, tb, idx[0], idx[1], k, &mag);
                            int64_t e = elem_index(&c.t, idx);
                            double cold = get_d(dc, old, e);
                            double want = alpha * r + (beta != 0 ? beta * cold : 0.0);
                            double got = get_d(dc, c.host, e);
                            double tol = (dt == HG_DTYPE_F64 ? 1e-13 : 3e-6) *
                                             (fabs(alpha) * mag + (beta != 0 ? fabs(beta * cold) : 0.0)) + 1e-30;
                            if (dt == HG_DTYPE_F16) tol += 9.8e-4 * fabs(alpha * r);
                            if (dt == HG_DTYPE_BF16) tol += 7.9e-3 * fabs(alpha * r);
                            if (dc == HG_DTYPE_F16) tol += 9.8e-4 * fabs(want) + 6e-8;
                            if (dc == HG_DTYPE_F32) tol += 1.2e-7 * fabs(want);
                            if (!(fabs(got - want) <= tol)) {
                                if (bad < 2)
                                    fprintf(stderr, "  gemm dt %d ta %d tb %d a %g b %g cl %d: "
                                            "(%lld, %lld) got %.10g want %.10g\n", (int)dt, ta, tb,
                                            alpha, beta, cl, (long long)idx[0], (long long)idx[1],
                                            got, want);
                                bad++;
                            }
                        } while (next_index(2, sc, idx));
                        CHECK(bad == 0);
                        free(old);
                        hg_buffer_destroy(a.buf);
                        hg_buffer_destroy(b.buf);
                        hg_buffer_destroy(c.buf);
                    }
}

static void test_matvec(void) {
    hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_I64, HG_DTYPE_BF16};
    for (int i = 0; i < 4; i++) {
        int64_t sa[2] = {37, 19}, sx[1] = {19};
        view a = make_view(dts[i], 2, sa, i % 2 ? L_TRANS : L_STEP);
        view x = make_view(dts[i], 1, sx, L_FLIP);
        hg_tensor out;
        memset(&out, 0, sizeof out);
        CHECK_OK(hg_matvec(&a.t, &x.t, &out));
        CHECK(out.ndim == 1 && out.shape[0] == 37);
        void* oh = NULL;
        CHECK_OK(hg_buffer_map(out.buffer, &oh));
        CHECK(check_matmul(&a.t, a.host, &x.t, x.host, &out, oh, "matvec"));
        hg_buffer_destroy(out.buffer);
        // Refused: a 1-D, x 2-D.
        memset(&out, 0, sizeof out);
        CHECK_STATUS(hg_matvec(&x.t, &a.t, &out), HG_ERR_SIZE_MISMATCH);
        CHECK(out.buffer.handle == 0);
        hg_buffer_destroy(a.buf);
        hg_buffer_destroy(x.buf);
    }
}

// A refused call: status, message fragments, and nothing written to o (or nothing allocated).
static void expect_refused(hg_status got, hg_status want, const char* frag1, const char* frag2,
                           const view* o, const void* snapshot, const char* what) {
    CHECK_MSG(got == want, "%s: got %s want %s (%s)", what, hg_status_string(got),
              hg_status_string(want), hg_last_error());
    if (frag1) CHECK_MSG(strstr(hg_last_error(), frag1), "%s: message '%s' lacks '%s'", what,
                         hg_last_error(), frag1);
    if (frag2) CHECK_MSG(strstr(hg_last_error(), frag2), "%s: message '%s' lacks '%s'", what,
                         hg_last_error(), frag2);
    if (o) CHECK_MSG(memcmp(o->host, snapshot, (size_t)o->count * esize(o->t.dtype)) == 0,
                     "%s: out was written", what);
}

static void test_errors(void) {
    int64_t s23[2] = {2, 3}, s43[2] = {4, 3}, s34[2] = {3, 4}, s24[2] = {2, 4};
    view a = make_view(HG_DTYPE_F32, 2, s23, 0), b = make_view(HG_DTYPE_F32, 2, s43, 0);
    view b2 = make_view(HG_DTYPE_F32, 2, s34, 0), o = make_view(HG_DTYPE_F32, 2, s24, 0);
    size_t ob = (size_t)o.count * 4;
    void* snap = malloc(ob);
    memcpy(snap, o.host, ob);
    hg_tensor fresh;
    memset(&fresh, 0, sizeof fresh);
    // Inner dims differ: both shapes named.
    expect_refused(hg_matmul(&a.t, &b.t, &o.t), HG_ERR_SIZE_MISMATCH, "(2, 3)", "(4, 3)", &o, snap,
                   "inner mismatch");
    expect_refused(hg_matmul(&a.t, &b.t, &fresh), HG_ERR_SIZE_MISMATCH, "(2, 3)", "(4, 3)", NULL,
                   NULL, "inner mismatch, fresh");
    CHECK(fresh.buffer.handle == 0);
    // Batch dims that do not broadcast.
    int64_t s233[3] = {2, 2, 3}, s334[3] = {3, 3, 4};
    view ba = make_view(HG_DTYPE_F32, 3, s233, 0), bb = make_view(HG_DTYPE_F32, 3, s334, 0);
    expect_refused(hg_matmul(&ba.t, &bb.t, &fresh), HG_ERR_SIZE_MISMATCH, "(2, 2, 3)",
                   "(3, 3, 4)", NULL, NULL, "batch mismatch");
    // 0-d operand.
    hg_tensor z = a.t;
    z.ndim = 0;
    expect_refused(hg_matmul(&z, &b2.t, &o.t), HG_ERR_INVALID_ARGUMENT, "()", NULL, &o, snap, "0-d");
    // Wrong out shape, out dtype not reachable by same_kind (f32 -> i32).
    view o_bad = make_view(HG_DTYPE_F32, 2, s23, 0);
    expect_refused(hg_matmul(&a.t, &b2.t, &o_bad.t), HG_ERR_SIZE_MISMATCH, "(2, 4)", NULL, NULL,
                   NULL, "out shape");
    view oi = make_view(HG_DTYPE_I32, 2, s24, 0);
    void* snapi = malloc((size_t)oi.count * 4);
    memcpy(snapi, oi.host, (size_t)oi.count * 4);
    expect_refused(hg_matmul(&a.t, &b2.t, &oi.t), HG_ERR_DTYPE_MISMATCH, "i32", NULL, &oi, snapi,
                   "out dtype");
    // (An out overlapping an input is computed as numpy does: test_ops_overlap.c.)
    // NULLs, destroyed handles, executor-less out.
    expect_refused(hg_matmul(NULL, &b2.t, &o.t), HG_ERR_NULL_POINTER, NULL, NULL, &o, snap, "NULL a");
    expect_refused(hg_matmul(&a.t, &b2.t, NULL), HG_ERR_NULL_POINTER, NULL, NULL, NULL, NULL, "NULL out");
    view dead = make_view(HG_DTYPE_F32, 2, s34, 0);
    hg_tensor dt = dead.t;
    hg_buffer_destroy(dead.buf);
    expect_refused(hg_matmul(&a.t, &dt, &o.t), HG_ERR_INVALID_HANDLE, NULL, NULL, &o, snap, "dead b");
    // gemm: integers refused, bad trans flag, shapes, NULL c.
    view ia = make_view(HG_DTYPE_I32, 2, s23, 0), ib = make_view(HG_DTYPE_I32, 2, s34, 0);
    expect_refused(hg_gemm(0, 0, 1, &ia.t, &ib.t, 0, &o.t), HG_ERR_DTYPE_MISMATCH, "i32", NULL, &o,
                   snap, "gemm ints");
    expect_refused(hg_gemm(2, 0, 1, &a.t, &b2.t, 0, &o.t), HG_ERR_INVALID_ARGUMENT, NULL, NULL, &o,
                   snap, "gemm trans 2");
    expect_refused(hg_gemm(1, 0, 1, &a.t, &b2.t, 0, &o.t), HG_ERR_SIZE_MISMATCH, "(3, 2)", "(3, 4)",
                   &o, snap, "gemm shapes");
    expect_refused(hg_gemm(0, 0, 1, &a.t, &b2.t, 0, NULL), HG_ERR_NULL_POINTER, NULL, NULL, &o,
                   snap, "gemm NULL c");
    // Tensors on two executors.
    hg_executor ex2;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex2));
    hg_buffer other;
    CHECK_OK(hg_buffer_create(ex2, HG_DTYPE_F32, 12, &other));
    hg_tensor ot;
    CHECK_OK(hg_tensor_from_buffer(other, 2, s34, &ot));
    expect_refused(hg_matmul(&a.t, &ot, &o.t), HG_ERR_INVALID_ARGUMENT, "executor", NULL, &o, snap,
                   "two executors");
    hg_executor_destroy(ex2);
    free(snap); free(snapi);
    view* all[] = {&a, &b, &b2, &o, &ba, &bb, &o_bad, &oi, &ia, &ib};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) hg_buffer_destroy(all[i]->buf);
}

int main(void) {
    if (hg_executor_create(HG_BACKEND_CPU, &ex) != HG_OK) {
        fprintf(stderr, "no CPU executor: %s\n", hg_last_error());
        return 1;
    }
    test_shapes();
    test_layouts();
    test_batched_threads();
    test_dtypes();
    test_special();
    test_out();
    test_gemm();
    test_matvec();
    test_errors();
    hg_executor_destroy(ex);
    return hg_test_finish("test_ops_matmul");
}
