// Data ops: hg_fill, hg_arange, hg_concat, hg_index_select, hg_gather (hg_index_add and
// hg_scatter_add: test_index_add) on every dtype and on
// random strided views (negative strides, permuted dims, broadcast inputs), against an
// independent reference that walks each view through the definition offset + sum(idx*stride).
// Buffers start with random bytes; after each call the whole buffer is compared with the
// expected bytes, so elements outside the output view must be untouched. Large cases run on
// executors of 1 and 2 threads. Every bad input must fail with its status and write nothing.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "tensor_ref.h"

enum { NDT = HG_DTYPE_COUNT, BUF_N = 4096 };

static uint64_t g_rng = 0x5eed1234abcdULL;
static int64_t rnd(int64_t lo, int64_t hi) {
    return lo + (int64_t)(hg_test_rand(&g_rng) % (uint64_t)(hi - lo + 1));
}
static void fill_random_bytes(void* p, size_t n) {
    unsigned char* b = p;
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)hg_test_rand(&g_rng);
}

// ---------------------------------------------------------------------------------------------
// Reference element conversion (docs/isa.md cvt), written independently of the library
// ---------------------------------------------------------------------------------------------
static int is_int(hg_dtype t) { return t >= HG_DTYPE_I8 && t <= HG_DTYPE_U64; }

static double ref_load(hg_dtype dt, const void* p) {
    switch (dt) {
    case HG_DTYPE_BOOL: return *(const uint8_t*)p != 0;
    case HG_DTYPE_I8: return *(const int8_t*)p;
    case HG_DTYPE_I16: return *(const int16_t*)p;
    case HG_DTYPE_I32: return *(const int32_t*)p;
    case HG_DTYPE_I64: return (double)*(const int64_t*)p;
    case HG_DTYPE_U8: return *(const uint8_t*)p;
    case HG_DTYPE_U16: return *(const uint16_t*)p;
    case HG_DTYPE_U32: return *(const uint32_t*)p;
    case HG_DTYPE_U64: return (double)*(const uint64_t*)p;
    case HG_DTYPE_F16: return hg_f16_to_f32(*(const uint16_t*)p);
    case HG_DTYPE_BF16: return hg_bf16_to_f32(*(const uint16_t*)p);
    case HG_DTYPE_F32: return *(const float*)p;
    default: return *(const double*)p;
    }
}

// Only used with values exactly representable in f32 when dt is f16/bf16 (one rounding).
static void ref_store(hg_dtype dt, void* p, double v) {
    if (is_int(dt)) {
        double lo, hi;
        switch (dt) {
        case HG_DTYPE_I8: lo = -128; hi = 127; break;
        case HG_DTYPE_I16: lo = -32768; hi = 32767; break;
        case HG_DTYPE_I32: lo = -2147483648.0; hi = 2147483647.0; break;
        case HG_DTYPE_I64: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
        case HG_DTYPE_U8: lo = 0; hi = 255; break;
        case HG_DTYPE_U16: lo = 0; hi = 65535; break;
        case HG_DTYPE_U32: lo = 0; hi = 4294967295.0; break;
        default: lo = 0; hi = 18446744073709551615.0; break;
        }
        double t = isnan(v) ? 0 : trunc(v);
        int top = t >= hi, bottom = t <= lo;
        switch (dt) {
        case HG_DTYPE_I8: *(int8_t*)p = top ? INT8_MAX : bottom ? INT8_MIN : (int8_t)t; break;
        case HG_DTYPE_I16: *(int16_t*)p = top ? INT16_MAX : bottom ? INT16_MIN : (int16_t)t; break;
        case HG_DTYPE_I32: *(int32_t*)p = top ? INT32_MAX : bottom ? INT32_MIN : (int32_t)t; break;
        case HG_DTYPE_I64: *(int64_t*)p = top ? INT64_MAX : bottom ? INT64_MIN : (int64_t)t; break;
        case HG_DTYPE_U8: *(uint8_t*)p = top ? UINT8_MAX : bottom ? 0 : (uint8_t)t; break;
        case HG_DTYPE_U16: *(uint16_t*)p = top ? UINT16_MAX : bottom ? 0 : (uint16_t)t; break;
        case HG_DTYPE_U32: *(uint32_t*)p = top ? UINT32_MAX : bottom ? 0 : (uint32_t)t; break;
        default: *(uint64_t*)p = top ? UINT64_MAX : bottom ? 0 : (uint64_t)t; break;
        }
        return;
    }
    switch (dt) {
    case HG_DTYPE_BOOL: *(uint8_t*)p = v != 0; break;
    case HG_DTYPE_F16: *(uint16_t*)p = hg_f32_to_f16((float)v); break;
    case HG_DTYPE_BF16: *(uint16_t*)p = hg_f32_to_bf16((float)v); break;
    case HG_DTYPE_F32: *(float*)p = (float)v; break;
    default: *(double*)p = v; break;
    }
}

// ---------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------

// A random layout of `shape` inside a buffer of `count` elements: dims in a random memory
// order, gaps of 1..2 on some dims, random flips (negative strides), random offset. Distinct
// indices reach distinct elements. With bcast, size-1-able dims may get stride 0 (inputs only).
static int make_view(hg_buffer b, hg_dtype dt, int64_t count, int32_t ndim, const int64_t* shape,
                     int bcast, hg_tensor* out) {
    int32_t order[HG_MAX_DIMS];
    for (int32_t i = 0; i < ndim; i++) order[i] = i;
    for (int32_t i = ndim - 1; i > 0; i--) {
        int32_t j = (int32_t)rnd(0, i), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    int64_t strides[HG_MAX_DIMS], step = 1;
    for (int32_t k = ndim - 1; k >= 0; k--) {
        int32_t d = order[k];
        int64_t gap = rnd(0, 3) == 0 ? 2 : 1;
        strides[d] = step * gap;
        step = strides[d] * (shape[d] ? shape[d] : 1);
    }
    for (int32_t d = 0; d < ndim; d++) {
        if (rnd(0, 2) == 0) strides[d] = -strides[d];
        if (bcast && rnd(0, 5) == 0) strides[d] = 0;
    }
    int64_t lo = 0, hi = 0, n = 1;
    for (int32_t d = 0; d < ndim; d++) {
        n *= shape[d];
        int64_t span = (shape[d] > 0 ? shape[d] - 1 : 0) * strides[d];
        if (span < 0) lo += span; else hi += span;
    }
    if (hi - lo >= count) return 0;
    int64_t off = n ? -lo + rnd(0, count - 1 - (hi - lo)) : rnd(0, count);
    hg_tensor t;
    if (hg_tensor_view(b, ndim, shape, strides, off, &t) != HG_OK) return 0;
    (void)dt;
    *out = t;
    return 1;
}

static int64_t elem_of(const hg_tensor* t, const int64_t* idx) {
    int64_t e = t->offset;
    for (int32_t d = 0; d < t->ndim; d++) e += idx[d] * t->strides[d];
    return e;
}

static int next_index(int32_t ndim, const int64_t* shape, int64_t* idx) {
    return tref_next_index(ndim, shape, idx);
}
static int64_t numel_of(int32_t ndim, const int64_t* shape) { return tref_numel(ndim, shape); }

// Buffers of every dtype with host mappings and a snapshot area.
typedef struct bufset {
    hg_executor ex;
    hg_buffer b[NDT];
    unsigned char* host[NDT];
    unsigned char* expect;   // BUF_N * 8 bytes
} bufset;

static int bufset_init(bufset* s, hg_executor ex) {
    memset(s, 0, sizeof *s);
    s->ex = ex;
    for (int t = 0; t < NDT; t++) {
        if (hg_buffer_create(ex, (hg_dtype)t, BUF_N, &s->b[t]) != HG_OK) return 0;
        if (hg_buffer_map(s->b[t], (void**)&s->host[t]) != HG_OK) return 0;
    }
    s->expect = malloc(BUF_N * 8);
    return s->expect != NULL;
}
static void bufset_fini(bufset* s) {
    for (int t = 0; t < NDT; t++) hg_buffer_destroy(s->b[t]);
    free(s->expect);
}

// Random bytes into buffer t and the same into expect.
static void scramble(bufset* s, int t) {
    size_t nb = BUF_N * hg_dtype_size((hg_dtype)t);
    fill_random_bytes(s->host[t], nb);
    memcpy(s->expect, s->host[t], nb);
}
static int matches_expect(bufset* s, int t) {
    return memcmp(s->expect, s->host[t], BUF_N * hg_dtype_size((hg_dtype)t)) == 0;
}

static void rand_shape(int32_t ndim, int64_t* shape, int64_t maxdim) {
    for (int32_t d = 0; d < ndim; d++) shape[d] = rnd(0, 12) == 0 ? 0 : rnd(1, maxdim);
}

// ---------------------------------------------------------------------------------------------
// hg_fill and hg_arange
// ---------------------------------------------------------------------------------------------

static void expect_scalar(hg_dtype dt, hg_scalar v, unsigned char* out) {
    if (v.kind == HG_SCALAR_FLOAT) ref_store(dt, out, v.f);
    else if (dt == HG_DTYPE_I64) *(int64_t*)(void*)out = v.i;                 // exact
    else if (dt == HG_DTYPE_U64) *(uint64_t*)(void*)out = (uint64_t)v.i;
    else ref_store(dt, out, (double)v.i);
}

static void test_fill(bufset* s) {
    for (int t = 0; t < NDT; t++) {
        hg_dtype dt = (hg_dtype)t;
        size_t es = hg_dtype_size(dt);
        for (int trial = 0; trial < 40; trial++) {
            int32_t ndim = (int32_t)rnd(0, 5);
            int64_t shape[HG_MAX_DIMS];
            rand_shape(ndim, shape, 6);
            hg_tensor o;
            if (!make_view(s->b[t], dt, BUF_N, ndim, shape, 0, &o)) continue;
            hg_scalar v;
            switch (trial % 5) {
            case 0: v = hg_scalar_f(trial % 2 ? -1.75 : 2.5); break;
            case 1: v = hg_scalar_f(trial % 3 ? NAN : 1e6); break;
            case 2: v = hg_scalar_b(1); break;
            case 3: v = hg_scalar_i(dt == HG_DTYPE_I64 ? INT64_MAX - 1 : 100); break;
            default: v = hg_scalar_i(is_int(dt) && (t >= HG_DTYPE_U8 && t <= HG_DTYPE_U64) ? 7 : -7);
            }
            if (dt == HG_DTYPE_U64 && trial % 5 == 3) v = hg_scalar_i(INT64_MAX - 1);
            if (dt == HG_DTYPE_BOOL && v.kind == HG_SCALAR_INT) v = hg_scalar_i(trial % 2);
            scramble(s, t);
            unsigned char val[8];
            expect_scalar(dt, v, val);
            int64_t idx[HG_MAX_DIMS] = {0};
            if (numel_of(ndim, shape))
                do memcpy(s->expect + elem_of(&o, idx) * (int64_t)es, val, es);
                while (next_index(ndim, shape, idx));
            CHECK_OK(hg_fill(&o, v));
            CHECK_MSG(matches_expect(s, t), "fill %s trial %d", hg_dtype_name(dt), trial);
        }
    }
    // Errors: nothing written.
    hg_tensor o;
    CHECK_OK(hg_tensor_from_buffer(s->b[HG_DTYPE_I8], 1, (int64_t[]){BUF_N}, &o));
    scramble(s, HG_DTYPE_I8);
    CHECK_STATUS(hg_fill(&o, hg_scalar_i(300)), HG_ERR_OUT_OF_RANGE);
    CHECK(strstr(hg_last_error(), "300") && strstr(hg_last_error(), "-128..127"));
    CHECK(matches_expect(s, HG_DTYPE_I8));
    CHECK_STATUS(hg_fill(&o, hg_scalar_i(-129)), HG_ERR_OUT_OF_RANGE);
    hg_scalar bad = {HG_SCALAR_KIND_COUNT, 0, 0};
    CHECK_STATUS(hg_fill(&o, bad), HG_ERR_INVALID_ARGUMENT);
    CHECK(matches_expect(s, HG_DTYPE_I8));
    hg_tensor ou;
    CHECK_OK(hg_tensor_from_buffer(s->b[HG_DTYPE_U8], 1, (int64_t[]){BUF_N}, &ou));
    scramble(s, HG_DTYPE_U8);
    CHECK_STATUS(hg_fill(&ou, hg_scalar_i(-1)), HG_ERR_OUT_OF_RANGE);
    CHECK(matches_expect(s, HG_DTYPE_U8));
    CHECK_STATUS(hg_fill(NULL, hg_scalar_i(1)), HG_ERR_NULL_POINTER);
    hg_tensor bc;   // broadcast out
    CHECK_OK(hg_tensor_view(s->b[HG_DTYPE_U8], 1, (int64_t[]){4}, (int64_t[]){0}, 0, &bc));
    CHECK_STATUS(hg_fill(&bc, hg_scalar_i(1)), HG_ERR_INVALID_ARGUMENT);
    CHECK(matches_expect(s, HG_DTYPE_U8));
    hg_tensor wrong = ou;
    wrong.dtype = HG_DTYPE_I32;
    CHECK_STATUS(hg_fill(&wrong, hg_scalar_i(1)), HG_ERR_DTYPE_MISMATCH);
    wrong = ou;
    wrong.buffer.handle = 0;
    CHECK_STATUS(hg_fill(&wrong, hg_scalar_i(1)), HG_ERR_INVALID_HANDLE);
    CHECK(matches_expect(s, HG_DTYPE_U8));
}

static const double k_arange[][2] = {{0, 1}, {-3, 0.25}, {10, -1.5}, {1000, 7}, {0.5, 0}};

static void test_arange(bufset* s) {
    for (int t = 0; t < NDT; t++) {
        hg_dtype dt = (hg_dtype)t;
        size_t es = hg_dtype_size(dt);
        for (int trial = 0; trial < 30; trial++) {
            int32_t ndim = (int32_t)rnd(0, 4);
            int64_t shape[HG_MAX_DIMS];
            rand_shape(ndim, shape, 7);
            hg_tensor o;
            if (!make_view(s->b[t], dt, BUF_N, ndim, shape, 0, &o)) continue;
            double start = k_arange[trial % 5][0], step = k_arange[trial % 5][1];
            scramble(s, t);
            int64_t idx[HG_MAX_DIMS] = {0}, i = 0;
            if (numel_of(ndim, shape))
                do ref_store(dt, s->expect + elem_of(&o, idx) * (int64_t)es, start + (double)i++ * step);
                while (next_index(ndim, shape, idx));
            CHECK_OK(hg_arange(&o, start, step));
            CHECK_MSG(matches_expect(s, t), "arange %s trial %d", hg_dtype_name(dt), trial);
        }
    }
    hg_tensor o;
    CHECK_OK(hg_tensor_from_buffer(s->b[HG_DTYPE_F32], 1, (int64_t[]){BUF_N}, &o));
    scramble(s, HG_DTYPE_F32);
    CHECK_STATUS(hg_arange(&o, NAN, 1), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_arange(&o, 0, INFINITY), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_arange(NULL, 0, 1), HG_ERR_NULL_POINTER);
    CHECK(matches_expect(s, HG_DTYPE_F32));
}

// Large outputs (threaded path) on a transposed view: same result on 1 and 2 threads.
static void test_large_fill_arange(hg_executor ex) {
    enum { R = 700, C = 1500 };
    hg_buffer b;
    float* h;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, (size_t)R * C, &b));
    CHECK_OK(hg_buffer_map(b, (void**)&h));
    hg_tensor t, tt;
    CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){R, C}, &t));
    CHECK_OK(hg_tensor_transpose(&t, 0, 1, &tt));   // (C, R), strides (1, C)
    CHECK_OK(hg_arange(&tt, -5, 0.5));
    int ok = 1;
    for (int64_t i = 0; i < C && ok; i++)
        for (int64_t j = 0; j < R && ok; j++)
            ok = h[j * C + i] == (float)(-5 + (double)(i * R + j) * 0.5);
    CHECK_MSG(ok, "large arange on a transposed view");
    CHECK_OK(hg_fill(&tt, hg_scalar_f(3.25)));
    ok = 1;
    for (int64_t i = 0; i < (int64_t)R * C && ok; i++) ok = h[i] == 3.25f;
    CHECK_MSG(ok, "large fill");
    hg_buffer_destroy(b);
}

// ---------------------------------------------------------------------------------------------
// hg_concat
// ---------------------------------------------------------------------------------------------

static const hg_dtype k_cast_pairs[][2] = {
    {HG_DTYPE_I16, HG_DTYPE_F64}, {HG_DTYPE_U8, HG_DTYPE_I32}, {HG_DTYPE_F32, HG_DTYPE_F64},
    {HG_DTYPE_I32, HG_DTYPE_I8},  {HG_DTYPE_BOOL, HG_DTYPE_F16}, {HG_DTYPE_U16, HG_DTYPE_BF16}};

// Small integers (exact everywhere) into a whole buffer of dt.
static void small_values(bufset* s, hg_dtype dt) {
    for (int64_t i = 0; i < BUF_N; i++)
        ref_store(dt, s->host[dt] + i * (int64_t)hg_dtype_size(dt),
                  dt == HG_DTYPE_BOOL ? (double)rnd(0, 1) : (double)rnd(0, 120));
}

static void test_concat(bufset* s) {
    for (int trial = 0; trial < 300; trial++) {
        int cast = trial % 4 == 3;
        hg_dtype in_dt = cast ? k_cast_pairs[trial % 6][0] : (hg_dtype)(trial % NDT);
        hg_dtype out_dt = cast ? k_cast_pairs[trial % 6][1] : in_dt;
        if (in_dt == out_dt && cast) continue;
        int32_t ndim = (int32_t)rnd(1, 4), n = (int32_t)rnd(1, 4);
        int32_t axis = (int32_t)rnd(-ndim, ndim - 1), ax = axis < 0 ? axis + ndim : axis;
        int64_t base[HG_MAX_DIMS];
        rand_shape(ndim, base, 4);
        // Inputs live in the lower half of in_dt's buffer, in disjoint eighths; a same-dtype
        // out lives in the upper half.
        if (cast) small_values(s, in_dt);
        else fill_random_bytes(s->host[in_dt], BUF_N * hg_dtype_size(in_dt));
        hg_tensor in[4];
        int64_t shape[HG_MAX_DIMS];
        memcpy(shape, base, sizeof shape);
        shape[ax] = 0;
        int ok = 1;
        for (int32_t k = 0; k < n && ok; k++) {
            int64_t sh[HG_MAX_DIMS];
            memcpy(sh, base, sizeof sh);
            sh[ax] = rnd(0, 3);
            shape[ax] += sh[ax];
            ok = make_view(s->b[in_dt], in_dt, BUF_N / 8, ndim, sh, 1, &in[k]);
            in[k].offset += k * (BUF_N / 8);
        }
        if (!ok) continue;
        hg_tensor out;
        int alloc = rnd(0, 2) == 0;
        if (alloc) out_dt = in_dt, cast = 0;   // an allocated out has the inputs' dtype
        size_t oes = hg_dtype_size(out_dt);
        if (alloc) memset(&out, 0, sizeof out);
        else if (!make_view(s->b[out_dt], out_dt, BUF_N / 2, ndim, shape, 0, &out)) continue;
        if (!alloc) {
            if (!cast) out.offset += BUF_N / 2;
            scramble(s, out_dt);
        }
        CHECK_OK(hg_concat(n, in, axis, &out));
        const unsigned char* oh = NULL;
        if (alloc) CHECK_OK(hg_buffer_map(out.buffer, (void**)&oh));
        else oh = s->host[out_dt];
        // Reference: out index -> (input k, index with the axis entry shifted).
        int64_t idx[HG_MAX_DIMS] = {0};
        size_t ies = hg_dtype_size(in_dt);
        unsigned char* want = s->expect;
        int good = out.dtype == out_dt && out.ndim == ndim;
        for (int32_t d = 0; good && d < ndim; d++) good = out.shape[d] == shape[d];
        if (good && numel_of(ndim, shape))
            do {
                int64_t a = idx[ax], k = 0;
                while (a >= in[k].shape[ax]) a -= in[k++].shape[ax];
                int64_t si[HG_MAX_DIMS];
                memcpy(si, idx, sizeof si);
                si[ax] = a;
                const unsigned char* src = s->host[in_dt] + elem_of(&in[k], si) * (int64_t)ies;
                int64_t oe = elem_of(&out, idx) * (int64_t)oes;
                if (cast) ref_store(out_dt, want + oe, ref_load(in_dt, src));
                else memcpy(want + oe, src, oes);
                good = memcmp(want + oe, oh + oe, oes) == 0;
            } while (good && next_index(ndim, shape, idx));
        CHECK_MSG(good, "concat trial %d %s->%s", trial, hg_dtype_name(in_dt),
                  hg_dtype_name(out_dt));
        if (!alloc && good)
            CHECK_MSG(matches_expect(s, out_dt), "concat wrote outside out (trial %d)", trial);
        if (alloc) hg_buffer_destroy(out.buffer);
    }
}

static void test_concat_errors(bufset* s) {
    hg_tensor a, b, o, bad[2];
    hg_buffer f = s->b[HG_DTYPE_F32];
    CHECK_OK(hg_tensor_view(f, 2, (int64_t[]){2, 3}, NULL, 0, &a));
    CHECK_OK(hg_tensor_view(f, 2, (int64_t[]){2, 4}, NULL, 100, &b));
    CHECK_OK(hg_tensor_view(f, 2, (int64_t[]){2, 7}, NULL, 200, &o));
    scramble(s, HG_DTYPE_F32);
    hg_tensor in[2] = {a, b};
    CHECK_STATUS(hg_concat(2, in, 0, &o), HG_ERR_SIZE_MISMATCH);          // 3 != 4 on dim 1
    CHECK(strstr(hg_last_error(), "inputs[1]") != NULL);
    CHECK_STATUS(hg_concat(2, in, 2, &o), HG_ERR_OUT_OF_RANGE);            // bad axis
    CHECK_STATUS(hg_concat(2, in, -3, &o), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_concat(0, in, 0, &o), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_concat(2, NULL, 0, &o), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_concat(2, in, 1, NULL), HG_ERR_NULL_POINTER);
    hg_tensor wrong;                                                        // out shape
    CHECK_OK(hg_tensor_view(f, 2, (int64_t[]){2, 6}, NULL, 200, &wrong));
    CHECK_STATUS(hg_concat(2, in, 1, &wrong), HG_ERR_SIZE_MISMATCH);
    CHECK(matches_expect(s, HG_DTYPE_F32));
    bad[0] = a;                                                             // dtype mismatch
    CHECK_OK(hg_tensor_view(s->b[HG_DTYPE_F64], 2, (int64_t[]){2, 4}, NULL, 0, &bad[1]));
    CHECK_STATUS(hg_concat(2, bad, 1, &o), HG_ERR_DTYPE_MISMATCH);
    CHECK(strstr(hg_last_error(), "f64") || strstr(hg_last_error(), "F64"));
    hg_tensor oi;                                                           // f32 -> i32 out
    CHECK_OK(hg_tensor_view(s->b[HG_DTYPE_I32], 2, (int64_t[]){2, 7}, NULL, 0, &oi));
    scramble(s, HG_DTYPE_I32);
    CHECK_STATUS(hg_concat(2, in, 1, &oi), HG_ERR_DTYPE_MISMATCH);
    CHECK(matches_expect(s, HG_DTYPE_I32));
    // (An out overlapping an input is computed as numpy does: test_ops_overlap.c.)
    scramble(s, HG_DTYPE_F32);
    hg_tensor z0[1];                                                        // 0-d inputs
    CHECK_OK(hg_tensor_view(f, 0, NULL, NULL, 3, &z0[0]));
    hg_tensor zo = {0};
    CHECK_STATUS(hg_concat(1, z0, 0, &zo), HG_ERR_INVALID_ARGUMENT);
    CHECK(zo.buffer.handle == 0);
    hg_tensor dead = a;
    CHECK_OK(hg_buffer_create(s->ex, HG_DTYPE_F32, 64, &dead.buffer));
    hg_buffer_destroy(dead.buffer);
    hg_tensor in2[2] = {a, dead};
    memset(&zo, 0, sizeof zo);
    CHECK_STATUS(hg_concat(2, in2, 0, &zo), HG_ERR_INVALID_HANDLE);
    CHECK(zo.buffer.handle == 0);
    CHECK(matches_expect(s, HG_DTYPE_F32));
}

// ---------------------------------------------------------------------------------------------
// hg_index_select and hg_gather
// ---------------------------------------------------------------------------------------------

static const hg_dtype k_index_dtypes[] = {HG_DTYPE_I8,  HG_DTYPE_I16, HG_DTYPE_I32, HG_DTYPE_I64,
                                          HG_DTYPE_U8,  HG_DTYPE_U16, HG_DTYPE_U32, HG_DTYPE_U64};

// Writes index values into a fresh buffer of dtype it with a strided 1-D or n-D view.
// Values are drawn from [-size, size) (unsigned: [0, size)).
static hg_buffer make_index(hg_executor ex, hg_dtype it, int32_t ndim, const int64_t* shape,
                            int64_t size, hg_tensor* out, int64_t* resolved) {
    hg_buffer b;
    hg_buffer_create(ex, it, 512, &b);
    unsigned char* h;
    hg_buffer_map(b, (void**)&h);
    fill_random_bytes(h, 512 * hg_dtype_size(it));
    if (!make_view(b, it, 512, ndim, shape, 0, out)) {
        hg_buffer_destroy(b);
        return (hg_buffer){0};
    }
    int64_t idx[HG_MAX_DIMS] = {0}, i = 0;
    int sgn = it <= HG_DTYPE_I64;
    if (numel_of(ndim, shape))
        do {
            int64_t v = size ? rnd(sgn ? -size : 0, size - 1) : 0;
            ref_store(it, h + elem_of(out, idx) * (int64_t)hg_dtype_size(it), (double)v);
            resolved[i++] = v < 0 ? v + size : v;
        } while (next_index(ndim, shape, idx));
    return b;
}

static void test_index_ops(bufset* s, int gather) {
    int64_t resolved[512];
    for (int trial = 0; trial < 300; trial++) {
        int cast = trial % 5 == 4;
        hg_dtype dt = cast ? k_cast_pairs[trial % 6][0] : (hg_dtype)(trial % NDT);
        hg_dtype odt = cast ? k_cast_pairs[trial % 6][1] : dt;
        int32_t ndim = (int32_t)rnd(gather ? 0 : 1, 4);
        int64_t xs[HG_MAX_DIMS];
        rand_shape(ndim, xs, 5);
        int32_t axis = ndim ? (int32_t)rnd(-ndim, ndim - 1) : 0;
        int32_t ax = axis < 0 ? axis + ndim : axis;
        if (cast) small_values(s, dt);
        else fill_random_bytes(s->host[dt], BUF_N * hg_dtype_size(dt));
        hg_tensor x;
        if (!make_view(s->b[dt], dt, BUF_N / 2, ndim, xs, 1, &x)) continue;
        int64_t size = ndim ? xs[ax] : 1;
        int32_t indim = gather ? ndim : 1;
        int64_t ish[HG_MAX_DIMS], osh[HG_MAX_DIMS];
        if (gather) {
            for (int32_t d = 0; d < ndim; d++) ish[d] = d == ax ? rnd(0, 5) : rnd(0, xs[d]);
            memcpy(osh, ish, sizeof osh);
        } else {
            ish[0] = rnd(0, 6);
            memcpy(osh, xs, sizeof osh);
            osh[ax] = ish[0];
        }
        if (size == 0)   // only an empty index is valid on an empty axis
            ish[gather ? ax : 0] = 0, osh[ax] = 0;
        if (numel_of(indim, ish) > 512) continue;
        hg_dtype it = k_index_dtypes[trial % 8];
        hg_tensor index;
        hg_buffer ib = make_index(s->ex, it, indim, ish, size, &index, resolved);
        if (!ib.handle) continue;
        int32_t ond = gather ? indim : ndim;
        hg_tensor out;
        int alloc = rnd(0, 2) == 0;
        if (alloc) odt = dt, cast = 0;   // an allocated out has x's dtype
        if (alloc) memset(&out, 0, sizeof out);
        else if (!make_view(s->b[odt], odt, cast ? BUF_N : BUF_N / 2, ond, osh, 0, &out)) {
            hg_buffer_destroy(ib);
            continue;
        }
        if (!alloc && !cast) out.offset += BUF_N / 2;   // the upper half: disjoint from x
        if (!alloc) scramble(s, odt);
        hg_status st = gather ? hg_gather(&x, axis, &index, &out)
                              : hg_index_select(&x, axis, &index, &out);
        CHECK_MSG(st == HG_OK, "%s trial %d: %s", gather ? "gather" : "index_select", trial,
                  hg_last_error());
        if (st) {
            hg_buffer_destroy(ib);
            continue;
        }
        const unsigned char* oh = NULL;
        if (alloc) CHECK_OK(hg_buffer_map(out.buffer, (void**)&oh));
        else oh = s->host[odt];
        size_t es = hg_dtype_size(dt), oes = hg_dtype_size(odt);
        int64_t idx[HG_MAX_DIMS] = {0}, flat = 0;
        int good = out.ndim == ond && out.dtype == odt;
        if (good && numel_of(ond, osh))
            do {
                int64_t si[HG_MAX_DIMS];
                memcpy(si, idx, sizeof si);
                if (ndim) si[ax] = gather ? resolved[flat] : resolved[idx[ax]];
                flat++;
                const unsigned char* src = s->host[dt] + elem_of(&x, si) * (int64_t)es;
                int64_t oe = elem_of(&out, idx) * (int64_t)oes;
                if (cast) ref_store(odt, s->expect + oe, ref_load(dt, src));
                else memcpy(s->expect + oe, src, oes);
                good = memcmp(s->expect + oe, oh + oe, oes) == 0;
            } while (good && next_index(ond, osh, idx));
        CHECK_MSG(good, "%s trial %d (%s -> %s, index %s, axis %d)",
                  gather ? "gather" : "index_select", trial, hg_dtype_name(dt),
                  hg_dtype_name(odt), hg_dtype_name(it), (int)axis);
        if (good && !alloc)
            CHECK_MSG(matches_expect(s, odt), "wrote outside out (trial %d)", trial);
        if (alloc) hg_buffer_destroy(out.buffer);
        hg_buffer_destroy(ib);
    }
}

// out == x exactly: x[perm] along an axis, and gather with index shaped like x.
static void test_index_in_place(bufset* s) {
    hg_executor ex = s->ex;
    hg_buffer xb, ib;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_I32, 60, &xb));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_I64, 60, &ib));
    int32_t* xh;
    int64_t* ih;
    CHECK_OK(hg_buffer_map(xb, (void**)&xh));
    CHECK_OK(hg_buffer_map(ib, (void**)&ih));
    for (int32_t i = 0; i < 60; i++) xh[i] = i * 10;
    hg_tensor x, idx1;
    CHECK_OK(hg_tensor_view(xb, 2, (int64_t[]){6, 10}, NULL, 0, &x));
    int64_t perm[6] = {5, -6, 3, 2, -1, 4};   // rows 5 0 3 2 5 4
    memcpy(ih, perm, sizeof perm);
    CHECK_OK(hg_tensor_view(ib, 1, (int64_t[]){6}, NULL, 0, &idx1));
    hg_tensor o = x;
    CHECK_OK(hg_index_select(&x, 0, &idx1, &o));
    static const int rows[6] = {5, 0, 3, 2, 5, 4};
    int ok = 1;
    for (int r = 0; r < 6; r++)
        for (int cc = 0; cc < 10; cc++) ok &= xh[r * 10 + cc] == (rows[r] * 10 + cc) * 10;
    CHECK_MSG(ok, "index_select in place");
    for (int32_t i = 0; i < 60; i++) xh[i] = i;
    hg_tensor idx2;
    CHECK_OK(hg_tensor_view(ib, 2, (int64_t[]){6, 10}, NULL, 0, &idx2));
    for (int32_t i = 0; i < 60; i++) ih[i] = (i * 7) % 10 - (i % 2 ? 10 : 0);
    o = x;
    CHECK_OK(hg_gather(&x, 1, &idx2, &o));
    ok = 1;
    for (int32_t i = 0; i < 60; i++) {
        int64_t k = ih[i] < 0 ? ih[i] + 10 : ih[i];
        ok &= xh[i] == (i / 10) * 10 + k;
    }
    CHECK_MSG(ok, "gather in place");
    hg_buffer_destroy(xb);
    hg_buffer_destroy(ib);
}

static void test_index_errors(bufset* s) {
    hg_executor ex = s->ex;
    hg_buffer ib, fb;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_I32, 8, &ib));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 8, &fb));
    int32_t vals[8] = {0, 1, 7, -2, 4, 3, 2, 1};
    CHECK_OK(hg_buffer_write(ib, 0, vals, 8));
    hg_tensor x, index, fi, out;
    CHECK_OK(hg_tensor_view(s->b[HG_DTYPE_F32], 2, (int64_t[]){4, 5}, NULL, 0, &x));
    CHECK_OK(hg_tensor_view(ib, 1, (int64_t[]){4}, NULL, 0, &index));
    CHECK_OK(hg_tensor_from_buffer(fb, 1, (int64_t[]){8}, &fi));
    CHECK_OK(hg_tensor_view(s->b[HG_DTYPE_F32], 2, (int64_t[]){4, 4}, NULL, 100, &out));
    scramble(s, HG_DTYPE_F32);
    CHECK_STATUS(hg_index_select(&x, 1, &index, &out), HG_ERR_OUT_OF_RANGE);   // 7 on size 5
    CHECK_MSG(strstr(hg_last_error(), "7") && strstr(hg_last_error(), "valid: -5..4"), "%s",
              hg_last_error());
    CHECK(matches_expect(s, HG_DTYPE_F32));
    hg_tensor none = {0};
    CHECK_STATUS(hg_index_select(&x, 1, &index, &none), HG_ERR_OUT_OF_RANGE);
    CHECK(none.buffer.handle == 0);
    CHECK_STATUS(hg_index_select(&x, 1, &fi, &out), HG_ERR_DTYPE_MISMATCH);     // float index
    CHECK_STATUS(hg_index_select(&x, 2, &index, &out), HG_ERR_OUT_OF_RANGE);    // bad axis
    hg_tensor i2;
    CHECK_OK(hg_tensor_view(ib, 2, (int64_t[]){2, 2}, NULL, 0, &i2));
    CHECK_STATUS(hg_index_select(&x, 0, &i2, &out), HG_ERR_INVALID_ARGUMENT);  // 2-D index
    hg_tensor ok_index, ov;
    CHECK_OK(hg_tensor_view(ib, 1, (int64_t[]){2}, NULL, 0, &ok_index));      // {0, 1}
    CHECK_OK(hg_tensor_view(s->b[HG_DTYPE_F32], 2, (int64_t[]){2, 5}, NULL, 3, &ov));
    CHECK_STATUS(hg_index_select(NULL, 0, &ok_index, &ov), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_index_select(&x, 0, NULL, &ov), HG_ERR_NULL_POINTER);
    CHECK(matches_expect(s, HG_DTYPE_F32));
    // gather
    hg_tensor gi;
    CHECK_OK(hg_tensor_view(ib, 2, (int64_t[]){2, 3}, NULL, 0, &gi));   // has 7 at (0, 2)
    CHECK_OK(hg_tensor_view(s->b[HG_DTYPE_F32], 2, (int64_t[]){2, 3}, NULL, 100, &out));
    CHECK_STATUS(hg_gather(&x, 0, &gi, &out), HG_ERR_OUT_OF_RANGE);
    CHECK_MSG(strstr(hg_last_error(), "(0, 2)") && strstr(hg_last_error(), "valid: -4..3"), "%s",
              hg_last_error());
    CHECK_STATUS(hg_gather(&x, 0, &index, &out), HG_ERR_INVALID_ARGUMENT);   // 1-D vs 2-D
    hg_tensor gbig;
    CHECK_OK(hg_tensor_view(ib, 2, (int64_t[]){1, 6}, NULL, 0, &gbig));    // 6 > 5 on dim 1
    CHECK_STATUS(hg_gather(&x, 0, &gbig, &out), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_gather(&x, -3, &gi, &out), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_gather(NULL, 0, &gi, &out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_gather(&x, 0, &gi, NULL), HG_ERR_NULL_POINTER);
    hg_tensor gf, gov;
    CHECK_OK(hg_tensor_view(fb, 2, (int64_t[]){2, 3}, NULL, 0, &gf));
    CHECK_STATUS(hg_gather(&x, 0, &gf, &out), HG_ERR_DTYPE_MISMATCH);          // float index
    CHECK_OK(hg_tensor_view(ib, 2, (int64_t[]){2, 2}, NULL, 0, &gi));          // {0, 1, 7, -2}
    CHECK_OK(hg_tensor_view(s->b[HG_DTYPE_F32], 2, (int64_t[]){2, 2}, NULL, 1, &gov));
    CHECK_STATUS(hg_gather(&x, 1, &gi, &gov), HG_ERR_OUT_OF_RANGE);           // 7 on size 5
    CHECK_OK(hg_tensor_view(ib, 2, (int64_t[]){1, 2}, NULL, 0, &gi));          // {0, 1}
    hg_tensor dead = x;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 20, &dead.buffer));
    CHECK_OK(hg_buffer_destroy(dead.buffer));
    CHECK_STATUS(hg_gather(&dead, 1, &gi, &out), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_index_select(&dead, 1, &ok_index, &out), HG_ERR_INVALID_HANDLE);
    CHECK(matches_expect(s, HG_DTYPE_F32));
    hg_buffer_destroy(ib);
    hg_buffer_destroy(fb);
}

// Large index_select / concat / gather on a 1- and a 2-thread executor give the same bytes,
// and the bytes of the definition.
static void test_threads_equal(hg_executor e1, hg_executor e2) {
    enum { R = 2000, C = 97 };
    hg_executor exs[2] = {e1, e2};
    float* res[2][3];
    hg_buffer keep[2][3];
    for (int k = 0; k < 2; k++) {
        hg_buffer xb, ib1, ib2;
        CHECK_OK(hg_buffer_create(exs[k], HG_DTYPE_F32, (size_t)R * C, &xb));
        CHECK_OK(hg_buffer_create(exs[k], HG_DTYPE_I64, (size_t)3 * R, &ib1));
        CHECK_OK(hg_buffer_create(exs[k], HG_DTYPE_I64, (size_t)R * C, &ib2));
        hg_tensor x, xt, idx, gidx;
        CHECK_OK(hg_tensor_from_buffer(xb, 2, (int64_t[]){R, C}, &x));
        CHECK_OK(hg_tensor_transpose(&x, 0, 1, &xt));   // (C, R): x[r][c] = r*C + c
        CHECK_OK(hg_arange(&x, 0, 1));
        int64_t *i1, *i2;
        CHECK_OK(hg_buffer_map(ib1, (void**)&i1));
        CHECK_OK(hg_buffer_map(ib2, (void**)&i2));
        uint64_t st = 99;
        for (int64_t i = 0; i < 3 * R; i++) i1[i] = (int64_t)(hg_test_rand(&st) % R);
        for (int64_t i = 0; i < (int64_t)R * C; i++) i2[i] = (int64_t)(hg_test_rand(&st) % C);
        CHECK_OK(hg_tensor_from_buffer(ib1, 1, (int64_t[]){3 * R}, &idx));
        CHECK_OK(hg_tensor_from_buffer(ib2, 2, (int64_t[]){R, C}, &gidx));
        hg_tensor o[3];
        memset(o, 0, sizeof o);
        CHECK_OK(hg_index_select(&xt, 1, &idx, &o[0]));   // (C, 3R)
        hg_tensor cin[3] = {xt, xt, xt};
        CHECK_OK(hg_concat(3, cin, 1, &o[1]));            // (C, 3R)
        CHECK_OK(hg_gather(&x, 1, &gidx, &o[2]));         // (R, C)
        for (int m = 0; m < 3; m++) {
            keep[k][m] = o[m].buffer;
            CHECK_OK(hg_buffer_map(o[m].buffer, (void**)&res[k][m]));
        }
        int ok0 = 1, ok1 = 1, ok2 = 1;
        for (int64_t c = 0; c < C; c++)
            for (int64_t j = 0; j < 3 * R; j++) {
                ok0 &= res[k][0][c * 3 * R + j] == (float)(i1[j] * C + c);
                ok1 &= res[k][1][c * 3 * R + j] == (float)((j % R) * C + c);
            }
        for (int64_t i = 0; i < (int64_t)R * C; i++)
            ok2 &= res[k][2][i] == (float)((i / C) * C + i2[i]);
        CHECK_MSG(ok0, "large index_select (threads %d)", k + 1);
        CHECK_MSG(ok1, "large concat (threads %d)", k + 1);
        CHECK_MSG(ok2, "large gather (threads %d)", k + 1);
        hg_buffer_destroy(xb);
        hg_buffer_destroy(ib1);
        hg_buffer_destroy(ib2);
    }
    for (int m = 0; m < 3; m++) {
        size_t n = m == 2 ? (size_t)R * C : (size_t)C * 3 * R;
        CHECK_MSG(memcmp(res[0][m], res[1][m], n * sizeof(float)) == 0,
                  "1 and 2 threads differ (result %d)", m);
        hg_buffer_destroy(keep[0][m]);
        hg_buffer_destroy(keep[1][m]);
    }
}

// hg_index_add / hg_scatter_add: accumulation with repeated and negative indices against a
// plain loop (f32: each add rounded in f32; i32 wraps), along both axes; bad input leaves out
// untouched.
static void test_index_add(hg_executor ex) {
    enum { R = 5, C = 4, N = 7 };
    float out[R * C], src[N * C], want[R * C], got[R * C];
    int64_t idx[N];
    for (int i = 0; i < R * C; i++) out[i] = (float)rnd(-50, 50) / 8.0f;
    for (int i = 0; i < N * C; i++) src[i] = (float)rnd(-50, 50) / 3.0f;
    for (int i = 0; i < N; i++) idx[i] = rnd(-R, R - 1);
    idx[1] = idx[4] = 2;   // repeats
    hg_buffer bo, bs, bi;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, R * C, &bo));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N * C, &bs));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_I64, N, &bi));
    CHECK_OK(hg_buffer_write(bo, 0, out, R * C));
    CHECK_OK(hg_buffer_write(bs, 0, src, N * C));
    CHECK_OK(hg_buffer_write(bi, 0, idx, N));
    hg_tensor to, ts, ti;
    const int64_t so[2] = {R, C}, ss[2] = {N, C}, si[1] = {N};
    CHECK_OK(hg_tensor_from_buffer(bo, 2, so, &to));
    CHECK_OK(hg_tensor_from_buffer(bs, 2, ss, &ts));
    CHECK_OK(hg_tensor_from_buffer(bi, 1, si, &ti));
    CHECK_OK(hg_index_add(&to, 0, &ti, &ts));
    memcpy(want, out, sizeof want);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < C; j++) {
            int64_t r = idx[i] < 0 ? idx[i] + R : idx[i];
            want[r * C + j] = want[r * C + j] + src[i * C + j];
        }
    CHECK_OK(hg_buffer_read(bo, 0, got, R * C));
    CHECK(memcmp(got, want, sizeof got) == 0);
    // scatter_add along axis 1: index (N, C) of columns, src (N, C) into a (N, C) out.
    float acc[N * C], want2[N * C], got2[N * C];
    int64_t cols[N * C];
    for (int i = 0; i < N * C; i++) { acc[i] = (float)i; cols[i] = rnd(0, C - 1); }
    hg_buffer ba, bc;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N * C, &ba));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_I64, N * C, &bc));
    CHECK_OK(hg_buffer_write(ba, 0, acc, N * C));
    CHECK_OK(hg_buffer_write(bc, 0, cols, N * C));
    hg_tensor ta, tc;
    CHECK_OK(hg_tensor_from_buffer(ba, 2, ss, &ta));
    CHECK_OK(hg_tensor_from_buffer(bc, 2, ss, &tc));
    CHECK_OK(hg_scatter_add(&ta, 1, &tc, &ts));
    memcpy(want2, acc, sizeof want2);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < C; j++) want2[i * C + cols[i * C + j]] += src[i * C + j];
    CHECK_OK(hg_buffer_read(ba, 0, got2, N * C));
    CHECK(memcmp(got2, want2, sizeof got2) == 0);
    // f64 rows along the middle axis of 3-D tensors (the row loop), src's outer dim strided.
    double out3[2 * R * C], src3[2 * 2 * N * C], want3[2 * R * C], got3[2 * R * C];
    for (int i = 0; i < 2 * R * C; i++) out3[i] = (double)rnd(-50, 50) / 7.0;
    for (int i = 0; i < 4 * N * C; i++) src3[i] = (double)rnd(-50, 50) / 9.0;
    hg_buffer bo3, bs3;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F64, 2 * R * C, &bo3));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F64, 4 * N * C, &bs3));
    CHECK_OK(hg_buffer_write(bo3, 0, out3, 2 * R * C));
    CHECK_OK(hg_buffer_write(bs3, 0, src3, 4 * N * C));
    hg_tensor to3, ts3;
    CHECK_OK(hg_tensor_from_buffer(bo3, 3, (int64_t[]){2, R, C}, &to3));
    CHECK_OK(hg_tensor_view(bs3, 3, (int64_t[]){2, N, C}, (int64_t[]){2 * N * C, C, 1}, 0,
                            &ts3));
    CHECK_OK(hg_index_add(&to3, 1, &ti, &ts3));
    memcpy(want3, out3, sizeof want3);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < C; j++) {
                int64_t r = idx[i] < 0 ? idx[i] + R : idx[i];
                want3[(b * R + r) * C + j] += src3[b * 2 * N * C + i * C + j];
            }
    CHECK_OK(hg_buffer_read(bo3, 0, got3, 2 * R * C));
    CHECK(memcmp(got3, want3, sizeof got3) == 0);
    hg_buffer_destroy(bo3);
    hg_buffer_destroy(bs3);
    // Errors: nothing added.
    idx[N - 1] = R;
    CHECK_OK(hg_buffer_write(bi, 0, idx, N));
    CHECK_STATUS(hg_index_add(&to, 0, &ti, &ts), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_index_add(&to, 1, &ti, &ts), HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_index_add(&to, 0, &ti, &tc), HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_index_add(&to, 0, NULL, &ts), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_scatter_add(&to, 0, &ti, &ts), HG_ERR_SIZE_MISMATCH);
    CHECK_OK(hg_buffer_read(bo, 0, got, R * C));
    CHECK(memcmp(got, want, sizeof got) == 0);
    hg_buffer_destroy(bo);
    hg_buffer_destroy(bs);
    hg_buffer_destroy(bi);
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bc);
}

int main(void) {
    hg_executor e1, e2;
    hg_executor_options o1 = {HG_BACKEND_CPU, 0, 1}, o2 = {HG_BACKEND_CPU, 0, 2};
    CHECK_OK(hg_executor_create_ex(&o1, &e1));
    CHECK_OK(hg_executor_create_ex(&o2, &e2));
    hg_executor exs[2] = {e1, e2};
    for (int k = 0; k < 2; k++) {
        bufset s;
        CHECK(bufset_init(&s, exs[k]));
        test_fill(&s);
        test_arange(&s);
        test_concat(&s);
        test_concat_errors(&s);
        test_index_ops(&s, 0);
        test_index_ops(&s, 1);
        test_index_in_place(&s);
        test_index_errors(&s);
        test_large_fill_arange(exs[k]);
        test_index_add(exs[k]);
        bufset_fini(&s);
    }
    test_threads_equal(e1, e2);
    hg_executor_destroy(e1);
    hg_executor_destroy(e2);
    return hg_test_finish("test_ops_data");
}
