// Reductions (hg_reduce, hg_var, hg_std) against a long-double reference that enumerates the
// view's indices by definition: random views (0-d, empty, broadcast, sliced, negative strides,
// permuted) of every dtype, every op, random axis subsets (negative, all, none), keepdims,
// existing outs of other same_kind dtypes and strided outs, special values, and error paths.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "tensor_ref.h"
#include "ops/reduce/reduce.h"

typedef struct {
    tref_ctx t;
    hg_buffer data[HG_DTYPE_COUNT];      // TREF_IOTA_N random elements per dtype
    hg_buffer special[HG_DTYPE_COUNT];   // floats with NaN, +-inf, -0.0 mixed in
    unsigned char* host[HG_DTYPE_COUNT];
    unsigned char* shost[HG_DTYPE_COUNT];
} ctx_t;

static int is_float(hg_dtype d) {
    return d == HG_DTYPE_F16 || d == HG_DTYPE_BF16 || d == HG_DTYPE_F32 || d == HG_DTYPE_F64;
}
static int is_unsigned(hg_dtype d) { return d >= HG_DTYPE_U8 && d <= HG_DTYPE_U64; }
static double eps_of(hg_dtype d) {
    switch (d) {
    case HG_DTYPE_F16: return 9.77e-4;
    case HG_DTYPE_BF16: return 7.82e-3;
    case HG_DTYPE_F32: return 1.2e-7;
    case HG_DTYPE_F64: return 2.3e-16;
    default: return 2.3e-16;   // integers converted to f64
    }
}

// Element value as double and as (sign-extended) integer bits.
static void elem(hg_dtype dt, const unsigned char* host, int64_t e, double* d, uint64_t* u) {
    const unsigned char* p = host + e * (int64_t)hg_dtype_size(dt);
    *u = 0;
    switch (dt) {
    case HG_DTYPE_BOOL: *u = *p != 0; *d = (double)*u; break;
    case HG_DTYPE_I8: *u = (uint64_t)(int64_t)*(const int8_t*)p; *d = *(const int8_t*)p; break;
    case HG_DTYPE_I16: *u = (uint64_t)(int64_t)*(const int16_t*)p; *d = *(const int16_t*)p; break;
    case HG_DTYPE_I32: *u = (uint64_t)(int64_t)*(const int32_t*)p; *d = *(const int32_t*)p; break;
    case HG_DTYPE_I64: { int64_t v; memcpy(&v, p, 8); *u = (uint64_t)v; *d = (double)v; break; }
    case HG_DTYPE_U8: *u = *p; *d = *p; break;
    case HG_DTYPE_U16: *u = *(const uint16_t*)p; *d = *u; break;
    case HG_DTYPE_U32: *u = *(const uint32_t*)p; *d = (double)*u; break;
    case HG_DTYPE_U64: memcpy(u, p, 8); *d = (double)*u; break;
    case HG_DTYPE_F16: *d = hg_f16_to_f32(*(const uint16_t*)p); break;
    case HG_DTYPE_BF16: *d = hg_bf16_to_f32(*(const uint16_t*)p); break;
    case HG_DTYPE_F32: *d = *(const float*)p; break;
    default: memcpy(d, p, 8); break;
    }
}

// Rounds v to dtype dt (floats), as a double.
static double round_to(hg_dtype dt, double v) {
    switch (dt) {
    case HG_DTYPE_F16: return hg_f16_to_f32(hg_f32_to_f16((float)v));
    case HG_DTYPE_BF16: return hg_bf16_to_f32(hg_f32_to_bf16((float)v));
    case HG_DTYPE_F32: return (float)v;
    default: return v;
    }
}

typedef struct {
    int is_int;       // expected integer bits in u (else a double in d, tolerance tol)
    uint64_t u;
    double d, tol;
} expect_t;

static int takes(int want_min, double v, double cur) {
    if (cur != cur) return 0;
    if (v != v) return 1;
    return want_min ? v < cur : v > cur;
}

// The reference for one output over n values (C order of the reduced dims).
static expect_t ref_one(hg_reduce_op op, hg_dtype xdt, hg_dtype rdt, hg_dtype odt,
                        const double* d, const uint64_t* u, int64_t n, double ddof) {
    expect_t e = {0, 0, 0.0, 0.0};
    int fl = is_float(xdt), uns = is_unsigned(xdt);
    double ep = eps_of(rdt) > eps_of(odt) ? eps_of(rdt) : eps_of(odt);
    long double sum = 0, sabs = 0;
    for (int64_t i = 0; i < n; i++) { sum += d[i]; sabs += fabs(d[i]); }
    double acc_eps = xdt == HG_DTYPE_F64 || !fl ? 2.3e-16 : 1.2e-7;
    int want_min = op == HG_REDUCE_MIN || op == HG_REDUCE_ARGMIN;
    switch (op) {
    case HG_REDUCE_SUM: case HG_REDUCE_PROD:
        if (!fl) {
            uint64_t a = op == HG_REDUCE_SUM ? 0 : 1;
            for (int64_t i = 0; i < n; i++) a = op == HG_REDUCE_SUM ? a + u[i] : a * u[i];
            e.is_int = 1;
            e.u = a;
            return e;
        }
        if (op == HG_REDUCE_SUM) {
            e.d = (double)sum;
            e.tol = 2 * ep * fabs(e.d) + 32 * acc_eps * (double)sabs;
        } else {
            long double p = 1;
            for (int64_t i = 0; i < n; i++) p *= d[i];
            e.d = (double)p;
            e.tol = 2 * ep * fabs(e.d);
        }
        return e;
    case HG_REDUCE_MEAN:
        e.d = (double)(sum / n);
        e.tol = 2 * ep * fabs(e.d) + 32 * acc_eps * (double)(sabs / (n ? n : 1));
        return e;
    case HG_REDUCE_MIN: case HG_REDUCE_MAX: case HG_REDUCE_ARGMIN: case HG_REDUCE_ARGMAX: {
        int64_t best = 0;
        for (int64_t i = 1; i < n; i++) {
            int t;
            if (fl) t = takes(want_min, d[i], d[best]);
            else if (uns) t = want_min ? u[i] < u[best] : u[i] > u[best];
            else t = want_min ? (int64_t)u[i] < (int64_t)u[best] : (int64_t)u[i] > (int64_t)u[best];
            if (t) best = i;
        }
        if (op == HG_REDUCE_ARGMIN || op == HG_REDUCE_ARGMAX) {
            e.is_int = 1;
            e.u = (uint64_t)best;
        } else if (!fl) {
            e.is_int = 1;
            e.u = u[best];
        } else {
            e.d = d[best];
            e.tol = ep * fabs(e.d);
        }
        return e;
    }
    case HG_REDUCE_VAR: case HG_REDUCE_STD: {
        long double m = sum / n, ss = 0;
        for (int64_t i = 0; i < n; i++) ss += (d[i] - m) * (d[i] - m);
        double div = (double)n - ddof;
        long double v = ss / (div > 0 ? div : 0.0);
        if (op == HG_REDUCE_STD) v = sqrtl(v);
        e.d = (double)v;
        double scale = n ? (double)(sabs / n) : 0.0;
        e.tol = 4 * ep * fabs(e.d) + 1e-13 * scale * (op == HG_REDUCE_VAR ? scale : 1.0);
        return e;
    }
    case HG_REDUCE_LOGSUMEXP: {
        double m = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            if (takes(0, d[i], m)) m = d[i];
        if (!isfinite(m)) {
            e.d = m;
            return e;
        }
        long double s = 0;
        for (int64_t i = 0; i < n; i++) s += expl((long double)d[i] - m);
        e.d = (double)(m + logl(s));
        e.tol = 2 * ep * fabs(e.d) + 4 * ep + 1e-12;
        return e;
    }
    default: {
        int any = 0, all = 1;
        for (int64_t i = 0; i < n; i++) {
            int nz = fl ? d[i] != 0.0 : u[i] != 0;
            any |= nz;
            all &= nz;
        }
        e.is_int = 1;
        e.u = (uint64_t)(op == HG_REDUCE_ANY ? any : all);
        return e;
    }
    }
}

// Compares one output element (raw bytes of odt) with the expectation.
static int matches(const expect_t* e, hg_dtype rdt, hg_dtype odt, const unsigned char* p,
                   char* why, size_t whylen) {
    double got;
    uint64_t gu;
    elem(odt, p, 0, &got, &gu);
    if (e->is_int) {
        if (is_float(odt)) {
            double want = round_to(odt, is_unsigned(rdt) ? (double)e->u : (double)(int64_t)e->u);
            if (got == want || fabs(got - want) <= eps_of(odt) * fabs(want)) return 1;
            snprintf(why, whylen, "got %.17g want %.17g", got, want);
            return 0;
        }
        size_t sz = hg_dtype_size(odt);
        uint64_t mask = sz == 8 ? ~0ull : ((1ull << (8 * sz)) - 1);
        if (odt == HG_DTYPE_BOOL) { if ((gu != 0) == (e->u != 0)) return 1; }
        else if ((gu & mask) == (e->u & mask)) return 1;
        snprintf(why, whylen, "got bits %llx want %llx", (unsigned long long)(gu & mask),
                 (unsigned long long)(e->u & mask));
        return 0;
    }
    double want = round_to(odt, round_to(rdt, e->d));
    if (isnan(want) || isnan(got)) {
        if (isnan(want) && isnan(got)) return 1;
    } else if (isinf(want) || isinf(got)) {
        if (got == want) return 1;
    } else if (fabs(got - want) <= e->tol + 0.5 * eps_of(odt) * fabs(want)) {
        return 1;
    }
    snprintf(why, whylen, "got %.17g want %.17g (tol %.3g)", got, want, e->tol);
    return 0;
}

// numpy's result dtype, written out independently of the library.
static hg_dtype result_dtype(hg_reduce_op op, hg_dtype dt) {
    int fl = is_float(dt), uns = is_unsigned(dt);
    switch (op) {
    case HG_REDUCE_SUM: case HG_REDUCE_PROD: return fl ? dt : uns ? HG_DTYPE_U64 : HG_DTYPE_I64;
    case HG_REDUCE_MEAN: case HG_REDUCE_VAR: case HG_REDUCE_STD: case HG_REDUCE_LOGSUMEXP:
        return fl ? dt : HG_DTYPE_F64;
    case HG_REDUCE_ARGMIN: case HG_REDUCE_ARGMAX: return HG_DTYPE_I64;
    case HG_REDUCE_ANY: case HG_REDUCE_ALL: return HG_DTYPE_BOOL;
    default: return dt;
    }
}

// Runs op on view x (axes/keepdims) into out (allocated when alloc, else an existing tensor of
// dtype odt, reversed along dim 0) and checks every element against the reference.
static void check_reduce(ctx_t* c, hg_reduce_op op, const hg_tensor* x, const unsigned char* host,
                         int32_t naxes, const int32_t* axes, int keepdims, double ddof,
                         hg_dtype odt, int alloc) {
    uint32_t mask = 0;
    if (!axes) mask = x->ndim ? (1u << x->ndim) - 1 : 0;
    for (int32_t i = 0; axes && i < naxes; i++) mask |= 1u << (axes[i] < 0 ? axes[i] + x->ndim : axes[i]);
    int64_t oshape[HG_MAX_DIMS], M = 1, N = 1;
    int32_t ond = 0;
    for (int32_t d = 0; d < x->ndim; d++) {
        if (mask & (1u << d)) { N *= x->shape[d]; if (keepdims) oshape[ond++] = 1; }
        else { M *= x->shape[d]; oshape[ond++] = x->shape[d]; }
    }
    hg_dtype rdt = result_dtype(op, x->dtype);
    if (alloc) odt = rdt;
    hg_tensor out;
    memset(&out, 0, sizeof out);
    hg_buffer ob = {0};
    if (!alloc) {
        CHECK_OK(hg_buffer_create(c->t.ex, odt, (size_t)M, &ob));
        CHECK_OK(hg_tensor_from_buffer(ob, ond, oshape, &out));
        if (ond > 0 && M > 0) CHECK_OK(hg_tensor_slice(&out, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &out));
    }
    hg_status s;
    if (op == HG_REDUCE_VAR && ddof != 0.0) s = hg_var(x, naxes, axes, keepdims, ddof, &out);
    else if (op == HG_REDUCE_STD && ddof != 0.0) s = hg_std(x, naxes, axes, keepdims, ddof, &out);
    else s = hg_reduce(op, x, naxes, axes, keepdims, &out);
    int minmax = op == HG_REDUCE_MIN || op == HG_REDUCE_MAX || op == HG_REDUCE_ARGMIN ||
                 op == HG_REDUCE_ARGMAX;
    if (minmax && N == 0) {   // numpy raises even when the output is empty too
        CHECK_MSG(s == HG_ERR_INVALID_ARGUMENT, "empty %s gave %s", hg_reduce_op_name(op),
                  hg_status_string(s));
        CHECK(alloc ? out.buffer.handle == 0 : 1);
        if (ob.handle) hg_buffer_destroy(ob);
        return;
    }
    CHECK_MSG(s == HG_OK, "%s %s ndim %d: %s", hg_reduce_op_name(op), hg_dtype_name(x->dtype),
              (int)x->ndim, hg_last_error());
    if (s != HG_OK) { if (ob.handle) hg_buffer_destroy(ob); return; }
    CHECK(out.dtype == odt && out.ndim == ond);
    for (int32_t d = 0; d < ond; d++) CHECK(out.shape[d] == oshape[d]);
    unsigned char* ohost = NULL;
    CHECK_OK(hg_buffer_map(out.buffer, (void**)&ohost));
    // Group the values per output in C order.
    double* dv = malloc((size_t)(M * N + 1) * sizeof(double));
    uint64_t* uv = malloc((size_t)(M * N + 1) * sizeof(uint64_t));
    int64_t idx[HG_MAX_DIMS] = {0};
    if (M * N > 0) {
        do {
            int64_t m = 0, r = 0;
            for (int32_t d = 0; d < x->ndim; d++) {
                if (mask & (1u << d)) r = r * x->shape[d] + idx[d];
                else m = m * x->shape[d] + idx[d];
            }
            elem(x->dtype, host, tref_elem_of(x, idx), &dv[m * N + r], &uv[m * N + r]);
        } while (tref_next_index(x->ndim, x->shape, idx));
    }
    int bad = 0;
    int64_t oidx[HG_MAX_DIMS] = {0};
    for (int64_t m = 0; m < M && bad < 3; m++) {
        expect_t e = ref_one(op, x->dtype, rdt, odt, dv + m * N, uv + m * N, N, ddof);
        char why[160];
        const unsigned char* p = ohost + tref_elem_of(&out, oidx) * (int64_t)hg_dtype_size(odt);
        if (!matches(&e, rdt, odt, p, why, sizeof why)) {
            bad++;
            CHECK_MSG(0, "%s of %s (ndim %d, N %lld, out %s) output %lld: %s",
                      hg_reduce_op_name(op), hg_dtype_name(x->dtype), (int)x->ndim,
                      (long long)N, hg_dtype_name(odt), (long long)m, why);
        }
        tref_next_index(ond, oshape, oidx);
    }
    if (!bad) CHECK(1);
    free(dv);
    free(uv);
    hg_buffer_destroy(out.buffer);
}

// A dtype that rdt may be cast to by same_kind rules, other than rdt when possible.
static hg_dtype other_out(ctx_t* c, hg_dtype rdt) {
    static const hg_dtype fl[] = {HG_DTYPE_F16, HG_DTYPE_BF16, HG_DTYPE_F32, HG_DTYPE_F64};
    static const hg_dtype si[] = {HG_DTYPE_I16, HG_DTYPE_I32, HG_DTYPE_F64, HG_DTYPE_F32};
    static const hg_dtype un[] = {HG_DTYPE_U32, HG_DTYPE_I64, HG_DTYPE_F64, HG_DTYPE_U8};
    int k = (int)tref_rnd(&c->t, 0, 3);
    if (is_float(rdt)) return fl[k];
    if (rdt == HG_DTYPE_BOOL) return k == 0 ? HG_DTYPE_I8 : k == 1 ? HG_DTYPE_F32 : HG_DTYPE_BOOL;
    return is_unsigned(rdt) ? un[k] : si[k];
}

static void fill_buffers(ctx_t* c) {
    for (int dt = 0; dt < HG_DTYPE_COUNT; dt++) {
        CHECK_OK(hg_buffer_create(c->t.ex, (hg_dtype)dt, TREF_IOTA_N, &c->data[dt]));
        CHECK_OK(hg_buffer_create(c->t.ex, (hg_dtype)dt, TREF_IOTA_N, &c->special[dt]));
        CHECK_OK(hg_buffer_map(c->data[dt], (void**)&c->host[dt]));
        CHECK_OK(hg_buffer_map(c->special[dt], (void**)&c->shost[dt]));
        size_t sz = hg_dtype_size((hg_dtype)dt);
        for (int i = 0; i < TREF_IOTA_N; i++) {
            unsigned char* p = c->host[dt] + (size_t)i * sz;
            unsigned char* q = c->shost[dt] + (size_t)i * sz;
            if (dt == HG_DTYPE_BOOL) {
                *p = (unsigned char)tref_rnd(&c->t, 0, 1);
                *q = (unsigned char)(tref_rnd(&c->t, 0, 9) != 0);
            } else if (!is_float((hg_dtype)dt)) {
                tref_fill_random(&c->t, p, sz);
                // Small values and zeros too (any/all, prod without immediate wrap to 0).
                if (tref_rnd(&c->t, 0, 1)) memset(p + 1, 0, sz - 1);
                memcpy(q, p, sz);
                if (tref_rnd(&c->t, 0, 9) == 0) memset(q, 0, sz);
            } else {
                double v = (double)tref_rnd(&c->t, -2000000, 2000000) / 1000000.0;
                int64_t k = tref_rnd(&c->t, 0, 39);
                double w = k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -INFINITY
                         : k == 3 ? -0.0 : k == 4 ? 0.0 : v;
                if (tref_rnd(&c->t, 0, 19) == 0) v = 0.0;
                switch (dt) {
                case HG_DTYPE_F16:
                    *(uint16_t*)p = hg_f32_to_f16((float)v);
                    *(uint16_t*)q = hg_f32_to_f16((float)w);
                    break;
                case HG_DTYPE_BF16:
                    *(uint16_t*)p = hg_f32_to_bf16((float)v);
                    *(uint16_t*)q = hg_f32_to_bf16((float)w);
                    break;
                case HG_DTYPE_F32: *(float*)p = (float)v; *(float*)q = (float)w; break;
                default: memcpy(p, &v, 8); memcpy(q, &w, 8); break;
                }
            }
        }
    }
}

static void random_trials(ctx_t* c, int ntrials) {
    for (int trial = 0; trial < ntrials; trial++) {
        hg_tensor v;
        if (!tref_rand_view(&c->t, &v)) continue;
        hg_dtype dt = (hg_dtype)tref_rnd(&c->t, 0, HG_DTYPE_COUNT - 1);
        int spec = is_float(dt) && tref_rnd(&c->t, 0, 2) == 0;
        v.buffer = spec ? c->special[dt] : c->data[dt];
        v.dtype = dt;
        const unsigned char* host = spec ? c->shost[dt] : c->host[dt];
        hg_reduce_op op = (hg_reduce_op)tref_rnd(&c->t, 0, HG_REDUCE_COUNT - 1);
        int32_t axes[HG_MAX_DIMS], naxes = 0;
        int mode = (int)tref_rnd(&c->t, 0, 4);
        if (mode > 0) {   // random subset in random order, each as positive or negative
            int32_t perm[HG_MAX_DIMS];
            for (int32_t i = 0; i < v.ndim; i++) perm[i] = i;
            for (int32_t i = v.ndim - 1; i > 0; i--) {
                int32_t j = (int32_t)tref_rnd(&c->t, 0, i), t = perm[i];
                perm[i] = perm[j]; perm[j] = t;
            }
            naxes = (int32_t)tref_rnd(&c->t, 0, v.ndim);
            for (int32_t i = 0; i < naxes; i++)
                axes[i] = tref_rnd(&c->t, 0, 1) ? perm[i] : perm[i] - v.ndim;
        }
        int keep = (int)tref_rnd(&c->t, 0, 1);
        double ddof = (op == HG_REDUCE_VAR || op == HG_REDUCE_STD) ? (double)tref_rnd(&c->t, 0, 2) : 0.0;
        int alloc = tref_rnd(&c->t, 0, 2) != 0;
        hg_dtype rdt = result_dtype(op, dt);
        check_reduce(c, op, &v, host, naxes, mode ? axes : NULL, keep, ddof,
                     other_out(c, rdt), alloc);
    }
}

// Every op on every dtype over fixed layouts: 0-d, 1-element, odd and prime lengths, a reversed
// and a transposed matrix, with every kind of axis list.
static void sweep(ctx_t* c) {
    for (int dt = 0; dt < HG_DTYPE_COUNT; dt++)
        for (int op = 0; op < HG_REDUCE_COUNT; op++) {
            hg_tensor v[7];
            hg_buffer b = c->data[dt];
            CHECK_OK(hg_tensor_view(b, 0, NULL, NULL, 5, &v[0]));
            CHECK_OK(hg_tensor_view(b, 1, (int64_t[]){1}, NULL, 9, &v[1]));
            CHECK_OK(hg_tensor_view(b, 1, (int64_t[]){13}, NULL, 100, &v[2]));
            CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){7, 31}, NULL, 200, &v[3]));
            CHECK_OK(hg_tensor_slice(&v[3], 1, HG_SLICE_NONE, HG_SLICE_NONE, -1, &v[3]));
            CHECK_OK(hg_tensor_view(b, 3, (int64_t[]){5, 3, 11}, NULL, 500, &v[4]));
            CHECK_OK(hg_tensor_transpose(&v[4], 0, 2, &v[4]));
            CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){4, 6}, (int64_t[]){0, -2}, 900, &v[5]));
            // A middle dim of 2 over rows of 40 (GQA's repeat_kv gradient: the "rows" walk
            // with a few rows per column band), its kept dims permuted.
            CHECK_OK(hg_tensor_view(b, 5, (int64_t[]){3, 2, 2, 4, 40},
                                    (int64_t[]){640, 160, 80, 320, 1}, 1000, &v[6]));
            for (int k = 0; k < 7; k++) {
                const unsigned char* h = c->host[dt];
                hg_reduce_op o = (hg_reduce_op)op;
                hg_dtype rdt = result_dtype(o, (hg_dtype)dt);
                check_reduce(c, o, &v[k], h, 0, NULL, 0, 0.0, rdt, 1);          // all axes
                check_reduce(c, o, &v[k], h, 0, NULL, 1, 0.0, rdt, 1);          // keepdims
                check_reduce(c, o, &v[k], h, 0, (int32_t[]){0}, 0, 0.0, rdt, 1);  // none
                if (v[k].ndim > 0) {
                    check_reduce(c, o, &v[k], h, 1, (int32_t[]){-1}, 0, 0.0, rdt, 1);
                    check_reduce(c, o, &v[k], h, 1, (int32_t[]){0}, 1, 0.0, other_out(c, rdt), 0);
                }
                if (v[k].ndim > 2)
                    check_reduce(c, o, &v[k], h, 2, (int32_t[]){2, 0}, 0, 1.0, rdt, 1);
                if (v[k].ndim > 3) {   // a middle dim, out allocated or given (reversed)
                    check_reduce(c, o, &v[k], h, 1, (int32_t[]){2}, 1, 0.0, rdt, 1);
                    check_reduce(c, o, &v[k], h, 1, (int32_t[]){1}, 0, 0.0, rdt, 0);
                }
            }
        }
}

// Reduces a 1-D f64 (or f32) array of values with op over everything; returns the result as a
// double read back from the result dtype.
static double reduce_values(ctx_t* c, hg_reduce_op op, hg_dtype dt, const double* vals,
                            int64_t n, double ddof, hg_status* st) {
    hg_buffer b;
    CHECK_OK(hg_buffer_create(c->t.ex, dt, (size_t)n, &b));
    for (int64_t i = 0; i < n; i++) {
        double v = vals[i];
        if (dt == HG_DTYPE_F32) { float f = (float)v; CHECK_OK(hg_buffer_write(b, (size_t)i, &f, 1)); }
        else CHECK_OK(hg_buffer_write(b, (size_t)i, &v, 1));
    }
    hg_tensor x, out;
    memset(&out, 0, sizeof out);
    CHECK_OK(hg_tensor_from_buffer(b, 1, (int64_t[]){n}, &x));
    *st = op == HG_REDUCE_VAR ? hg_var(&x, 0, NULL, 0, ddof, &out) : hg_reduce(op, &x, 0, NULL, 0, &out);
    double r = NAN;
    if (*st == HG_OK) {
        void* p;
        CHECK_OK(hg_buffer_map(out.buffer, &p));
        r = out.dtype == HG_DTYPE_F32 ? *(float*)p : out.dtype == HG_DTYPE_F64 ? *(double*)p
          : out.dtype == HG_DTYPE_BOOL ? *(uint8_t*)p : (double)*(int64_t*)p;
        hg_buffer_destroy(out.buffer);
    }
    hg_buffer_destroy(b);
    return r;
}

static void special_values(ctx_t* c) {
    hg_status st;
    const double nan = NAN, inf = INFINITY;
    for (int k = 0; k < 2; k++) {
        hg_dtype dt = k ? HG_DTYPE_F32 : HG_DTYPE_F64;
        double a[] = {1.0, nan, -5.0, nan, 7.0};
        CHECK(isnan(reduce_values(c, HG_REDUCE_MIN, dt, a, 5, 0, &st)) && st == HG_OK);
        CHECK(isnan(reduce_values(c, HG_REDUCE_MAX, dt, a, 5, 0, &st)));
        CHECK(reduce_values(c, HG_REDUCE_ARGMAX, dt, a, 5, 0, &st) == 1.0);
        CHECK(reduce_values(c, HG_REDUCE_ARGMIN, dt, a, 5, 0, &st) == 1.0);
        CHECK(reduce_values(c, HG_REDUCE_ANY, dt, (double[]){0.0, -0.0, nan}, 3, 0, &st) == 1.0);
        CHECK(reduce_values(c, HG_REDUCE_ANY, dt, (double[]){0.0, -0.0}, 2, 0, &st) == 0.0);
        CHECK(reduce_values(c, HG_REDUCE_ALL, dt, (double[]){1.0, -0.0}, 2, 0, &st) == 0.0);
        double m[] = {-inf, -inf, -inf};
        CHECK(reduce_values(c, HG_REDUCE_LOGSUMEXP, dt, m, 3, 0, &st) == -inf);
        CHECK(reduce_values(c, HG_REDUCE_LOGSUMEXP, dt, (double[]){-inf, 2.0, inf}, 3, 0, &st) == inf);
        CHECK(isnan(reduce_values(c, HG_REDUCE_LOGSUMEXP, dt, (double[]){1.0, nan}, 2, 0, &st)));
        // Magnitude 1e4: naive exp overflows; max-shifted gives 1e4 + log(1 + e^-1).
        double big = reduce_values(c, HG_REDUCE_LOGSUMEXP, dt, (double[]){1e4, 9999.0, -inf}, 3, 0, &st);
        CHECK_MSG(fabs(big - (1e4 + log1p(exp(-1.0)))) <= 1e4 * (k ? 2e-7 : 1e-15), "%.17g", big);
        double small = reduce_values(c, HG_REDUCE_LOGSUMEXP, dt, (double[]){-1e4, -1e4}, 2, 0, &st);
        CHECK_MSG(fabs(small - (-1e4 + log(2.0))) <= 1e4 * (k ? 2e-7 : 1e-15), "%.17g", small);
        CHECK(isnan(reduce_values(c, HG_REDUCE_SUM, dt, (double[]){inf, -inf}, 2, 0, &st)));
        CHECK(reduce_values(c, HG_REDUCE_SUM, dt, (double[]){inf, 1.0}, 2, 0, &st) == inf);
        CHECK(isnan(reduce_values(c, HG_REDUCE_VAR, dt, (double[]){inf, 1.0}, 2, 0, &st)));
        // ddof: divisor n - ddof; n - ddof <= 0 gives inf (or NaN for a zero numerator).
        CHECK(reduce_values(c, HG_REDUCE_VAR, dt, (double[]){1.0, 3.0}, 2, 1.0, &st) == 2.0);
        CHECK(reduce_values(c, HG_REDUCE_VAR, dt, (double[]){1.0, 3.0}, 2, 2.0, &st) == inf);
        CHECK(isnan(reduce_values(c, HG_REDUCE_VAR, dt, (double[]){3.0}, 1, 1.0, &st)));
        // Empty: sum 0, prod 1, mean/var NaN, logsumexp -inf, any false, all true, min refused.
        CHECK(reduce_values(c, HG_REDUCE_SUM, dt, a, 0, 0, &st) == 0.0);
        CHECK(reduce_values(c, HG_REDUCE_PROD, dt, a, 0, 0, &st) == 1.0);
        CHECK(isnan(reduce_values(c, HG_REDUCE_MEAN, dt, a, 0, 0, &st)));
        CHECK(isnan(reduce_values(c, HG_REDUCE_VAR, dt, a, 0, 0, &st)));
        CHECK(isnan(reduce_values(c, HG_REDUCE_STD, dt, a, 0, 0, &st)));
        CHECK(reduce_values(c, HG_REDUCE_LOGSUMEXP, dt, a, 0, 0, &st) == -inf);
        CHECK(reduce_values(c, HG_REDUCE_ANY, dt, a, 0, 0, &st) == 0.0);
        CHECK(reduce_values(c, HG_REDUCE_ALL, dt, a, 0, 0, &st) == 1.0);
        for (int op = HG_REDUCE_MIN; op <= HG_REDUCE_ARGMAX; op++) {
            reduce_values(c, (hg_reduce_op)op, dt, a, 0, 0, &st);
            CHECK_MSG(st == HG_ERR_INVALID_ARGUMENT, "empty %s: %s", hg_reduce_op_name((hg_reduce_op)op),
                      hg_status_string(st));
            CHECK(strstr(hg_last_error(), "empty") != NULL);
        }
    }
    // An empty output over non-empty reduced dims is fine even for max (numpy: shape (0,)).
    hg_buffer b;
    hg_tensor x, out;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, 0, &b));
    CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){0, 3}, &x));
    memset(&out, 0, sizeof out);
    CHECK_OK(hg_reduce(HG_REDUCE_MAX, &x, 1, (int32_t[]){1}, 0, &out));
    CHECK(out.ndim == 1 && out.shape[0] == 0);
    hg_buffer_destroy(out.buffer);
    memset(&out, 0, sizeof out);
    CHECK_STATUS(hg_reduce(HG_REDUCE_MAX, &x, 1, (int32_t[]){0}, 0, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK(out.buffer.handle == 0);
    // A reduced dim of 0 raises also when the output is empty (numpy: max of (0, 0) on axis 0).
    hg_tensor x00;
    CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){0, 0}, &x00));
    for (int op = HG_REDUCE_MIN; op <= HG_REDUCE_ARGMAX; op++)
        CHECK_STATUS(hg_reduce((hg_reduce_op)op, &x00, 1, (int32_t[]){0}, 0, &out),
                     HG_ERR_INVALID_ARGUMENT);
    CHECK(out.buffer.handle == 0);
    hg_buffer_destroy(b);
    // Integer extremes: min/max of u64 and i64 (order of keys), sums wrap.
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_U64, 3, &b));
    uint64_t u[3] = {UINT64_MAX, 1, 0x8000000000000000ull};
    CHECK_OK(hg_buffer_write(b, 0, u, 3));
    CHECK_OK(hg_tensor_from_buffer(b, 1, (int64_t[]){3}, &x));
    uint64_t r = 0;
    memset(&out, 0, sizeof out);
    CHECK_OK(hg_reduce(HG_REDUCE_MAX, &x, 0, NULL, 0, &out));
    CHECK_OK(hg_buffer_read(out.buffer, 0, &r, 1));
    CHECK(r == UINT64_MAX && out.dtype == HG_DTYPE_U64);
    hg_buffer_destroy(out.buffer);
    memset(&out, 0, sizeof out);
    CHECK_OK(hg_reduce(HG_REDUCE_SUM, &x, 0, NULL, 0, &out));
    CHECK_OK(hg_buffer_read(out.buffer, 0, &r, 1));
    CHECK(r == 0x8000000000000000ull);   // wraps modulo 2^64
    hg_buffer_destroy(out.buffer);
    hg_buffer_destroy(b);
}

static void errors(ctx_t* c) {
    hg_tensor x, out, good;
    hg_buffer b, ob;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, 24, &b));
    CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){4, 6}, &x));
    // Bad axis: out of range names the axis and the dims; repeated axis.
    TREF_CHECK_ERR(&out, hg_reduce(HG_REDUCE_SUM, &x, 1, (int32_t[]){2}, 0, &out), HG_ERR_OUT_OF_RANGE);
    CHECK(strstr(hg_last_error(), "axis 2") && strstr(hg_last_error(), "2 dims"));
    TREF_CHECK_ERR(&out, hg_reduce(HG_REDUCE_SUM, &x, 1, (int32_t[]){-3}, 0, &out), HG_ERR_OUT_OF_RANGE);
    TREF_CHECK_ERR(&out, hg_reduce(HG_REDUCE_SUM, &x, 2, (int32_t[]){1, -1}, 0, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "repeated") != NULL);
    TREF_CHECK_ERR(&out, hg_reduce(HG_REDUCE_SUM, &x, -1, (int32_t[]){0}, 0, &out), HG_ERR_INVALID_ARGUMENT);
    TREF_CHECK_ERR(&out, hg_reduce(HG_REDUCE_COUNT, &x, 0, NULL, 0, &out), HG_ERR_INVALID_ARGUMENT);
    TREF_CHECK_ERR(&out, hg_reduce((hg_reduce_op)-1, &x, 0, NULL, 0, &out), HG_ERR_INVALID_ARGUMENT);
    TREF_CHECK_ERR(&out, hg_reduce(HG_REDUCE_SUM, NULL, 0, NULL, 0, &out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_reduce(HG_REDUCE_SUM, &x, 0, NULL, 0, NULL), HG_ERR_NULL_POINTER);
    TREF_CHECK_ERR(&out, hg_var(&x, 0, NULL, 0, NAN, &out), HG_ERR_INVALID_ARGUMENT);
    // Bad handles: the malformed tensors of tensor_ref.
    hg_buffer dead;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, 24, &dead));
    CHECK_OK(hg_buffer_destroy(dead));
    hg_tensor bad[TREF_N_BAD];
    hg_status want[TREF_N_BAD];
    tref_bad_tensors(&x, dead, bad, want);
    for (int i = 0; i < TREF_N_BAD; i++)
        TREF_CHECK_ERR(&out, hg_reduce(HG_REDUCE_MAX, &bad[i], 0, NULL, 0, &out), want[i]);
    // Existing outs: wrong shape, wrong dtype (float -> int is not same_kind), overlap, dead.
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_F32, 6, &ob));
    CHECK_OK(hg_tensor_from_buffer(ob, 1, (int64_t[]){6}, &good));
    CHECK_OK(hg_buffer_fill(ob, 5.0));
    unsigned char before[24];
    CHECK_OK(hg_buffer_read(ob, 0, before, 6));
    out = good;
    CHECK_STATUS(hg_reduce(HG_REDUCE_SUM, &x, 1, (int32_t[]){1}, 0, &out), HG_ERR_SIZE_MISMATCH);
    CHECK_MSG(strstr(hg_last_error(), "(6") && strstr(hg_last_error(), "(4"), "%s", hg_last_error());
    CHECK_STATUS(hg_reduce(HG_REDUCE_SUM, &x, 1, (int32_t[]){0}, 1, &out), HG_ERR_SIZE_MISMATCH);
    hg_buffer ib;
    hg_tensor iout;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_I32, 6, &ib));
    CHECK_OK(hg_tensor_from_buffer(ib, 1, (int64_t[]){6}, &iout));
    CHECK_STATUS(hg_reduce(HG_REDUCE_SUM, &x, 1, (int32_t[]){0}, 0, &iout), HG_ERR_DTYPE_MISMATCH);
    CHECK(strstr(hg_last_error(), "same_kind") != NULL);
    // argmax gives i64: an f32 out is allowed (same_kind int -> float), a u8 out is not.
    // None of the failing calls above wrote into the existing out.
    unsigned char now_[24];
    CHECK_OK(hg_buffer_read(ob, 0, now_, 6));
    CHECK(memcmp(before, now_, 6 * sizeof(float)) == 0);
    CHECK_OK(hg_reduce(HG_REDUCE_ARGMAX, &x, 1, (int32_t[]){0}, 0, &out));
    hg_buffer u8b;
    hg_tensor u8o;
    CHECK_OK(hg_buffer_create(c->t.ex, HG_DTYPE_U8, 6, &u8b));
    CHECK_OK(hg_tensor_from_buffer(u8b, 1, (int64_t[]){6}, &u8o));
    CHECK_STATUS(hg_reduce(HG_REDUCE_ARGMAX, &x, 1, (int32_t[]){0}, 0, &u8o), HG_ERR_DTYPE_MISMATCH);
    hg_buffer_destroy(u8b);
    float am[6];
    CHECK_OK(hg_buffer_read(ob, 0, am, 6));
    CHECK(am[0] == 0.0f && am[5] == 0.0f);   // all-zero x: the first index
    hg_tensor ovl;
    CHECK_OK(hg_tensor_view(b, 1, (int64_t[]){6}, NULL, 3, &ovl));
    float xb[24];
    for (int i = 0; i < 24; i++) xb[i] = (float)i;
    CHECK_OK(hg_buffer_write(b, 0, xb, 24));
    // An out overlapping x: numpy's rule, as if x were read before anything is written.
    CHECK_OK(hg_reduce(HG_REDUCE_SUM, &x, 1, (int32_t[]){0}, 0, &ovl));
    float after[24];
    CHECK_OK(hg_buffer_read(b, 0, after, 24));
    for (int i = 0; i < 24; i++)
        CHECK(after[i] == (i >= 3 && i < 9 ? (float)(4 * (i - 3) + 36) : xb[i]));
    CHECK_OK(hg_buffer_write(b, 0, xb, 24));
    // Same view in place is allowed (no axes: elementwise identity of sum).
    CHECK_OK(hg_reduce(HG_REDUCE_SUM, &x, 0, (int32_t[]){0}, 0, &x));
    CHECK_OK(hg_buffer_read(b, 0, after, 24));
    CHECK(memcmp(xb, after, sizeof xb) == 0);
    hg_tensor deadout = good;
    deadout.buffer = dead;
    CHECK_STATUS(hg_reduce(HG_REDUCE_SUM, &x, 1, (int32_t[]){0}, 0, &deadout), HG_ERR_INVALID_HANDLE);
    // A broadcast (stride 0) out cannot be written.
    hg_tensor bout;
    CHECK_OK(hg_tensor_view(ob, 1, (int64_t[]){6}, (int64_t[]){0}, 0, &bout));
    CHECK_STATUS(hg_reduce(HG_REDUCE_SUM, &x, 1, (int32_t[]){0}, 0, &bout), HG_ERR_INVALID_ARGUMENT);
    // Another executor.
    hg_executor ex2;
    hg_buffer b2;
    hg_tensor x2;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex2));
    CHECK_OK(hg_buffer_create(ex2, HG_DTYPE_F32, 4, &b2));
    CHECK_OK(hg_tensor_from_buffer(b2, 2, (int64_t[]){4, 1}, &x2));
    hg_tensor o4;
    CHECK_OK(hg_tensor_view(ob, 1, (int64_t[]){4}, NULL, 0, &o4));
    CHECK_STATUS(hg_reduce(HG_REDUCE_SUM, &x2, 1, (int32_t[]){1}, 0, &o4), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "executor") != NULL);
    hg_executor_destroy(ex2);
    CHECK(strcmp(hg_reduce_op_name(HG_REDUCE_LOGSUMEXP), "logsumexp") == 0);
    CHECK(hg_reduce_op_name(HG_REDUCE_COUNT) == NULL);
    hg_buffer_destroy(ib);
    hg_buffer_destroy(ob);
    hg_buffer_destroy(b);
}

// hg_reduce_sum_f32's documented order written out lane by lane (reduce.h): runs under 128 in
// 8 f64 chains folded (0+4 + 1+5) + (2+6 + 3+7), then the rest one by one; longer runs in 32
// f32 lanes over blocks of up to 16 terms, block partials into 32 f64 lanes, the lanes folded
// j += j + w for w = 16 .. 1, plus the short-run sum of what is left. Every CPU level's kernel
// must give these bits (cpu_levels.cmake runs this test capped at avx2 and generic).
static double sum_short_ref(const float* x, int64_t n) {
    double t8[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) t8[j] += (double)x[i + j];
    double t = ((t8[0] + t8[4]) + (t8[1] + t8[5])) + ((t8[2] + t8[6]) + (t8[3] + t8[7]));
    for (; i < n; i++) t += (double)x[i];
    return t;
}

static double sum_order_ref(const float* x, int64_t n) {
    if (n < 128) return sum_short_ref(x, n);
    double l[32] = {0};
    int64_t i = 0;
    while (n - i >= 32) {
        int64_t terms = (n - i) / 32 < 16 ? (n - i) / 32 : 16;
        float f[32];
        for (int j = 0; j < 32; j++) f[j] = x[i + j];
        for (int64_t k = 1; k < terms; k++)
            for (int j = 0; j < 32; j++) f[j] += x[i + 32 * k + j];
        for (int j = 0; j < 32; j++) l[j] += (double)f[j];
        i += terms * 32;
    }
    for (int w = 16; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) l[j] += l[j + w];
    return l[0] + sum_short_ref(x + i, n - i);
}

// The f32 sum kernel at every run length around its block boundaries (32-lane blocks of up to
// 16 terms, the short-run path below 128): within 16 f32 roundings of the total magnitude of
// a long-double sum, on values of mixed sign and on all-positive ones, and bit for bit the
// documented order (sum_order_ref).
static void sum_f32_lengths(void) {
    enum { MAXN = 1300 };
    static float x[MAXN + 4000];
    uint64_t r = 0x51a7e5u;
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < MAXN + 4000; i++) {
            float v = (float)(hg_test_rand(&r) >> 40) * 0x1p-24f;
            x[i] = pass ? v * 1000.0f : v - 0.5f;
        }
        for (int64_t n = 0; n <= MAXN + 4000 && bad < 3; n += n < MAXN ? 1 : 997) {
            long double ref = 0.0L, mag = 0.0L;
            for (int64_t i = 0; i < n; i++) { ref += x[i]; mag += fabsl((long double)x[i]); }
            double got = hg_reduce_sum_f32(x, n), want = sum_order_ref(x, n);
            if (memcmp(&got, &want, sizeof got)) {
                bad++;
                CHECK_MSG(0, "hg_reduce_sum_f32 n=%lld pass %d: %a, the documented order gives %a",
                          (long long)n, pass, got, want);
            }
            if (!(fabsl((long double)got - ref) <= 16.0L * 0x1p-24L * mag)) {
                bad++;
                CHECK_MSG(0, "hg_reduce_sum_f32 n=%lld pass %d: %.17g, want %.17Lg", (long long)n,
                          pass, got, ref);
            }
        }
    }
    if (!bad) CHECK(1);
}

int main(void) {
    hg_executor ex;
    hg_executor_options o = {HG_BACKEND_CPU, 0, 3};
    CHECK_OK(hg_executor_create_ex(&o, &ex));
    ctx_t c;
    memset(&c, 0, sizeof c);
    CHECK_OK(tref_init(&c.t, ex, 0x5eed0004));
    fill_buffers(&c);
    sum_f32_lengths();
    sweep(&c);
    special_values(&c);
    random_trials(&c, 3000);
    errors(&c);
    for (int dt = 0; dt < HG_DTYPE_COUNT; dt++) {
        hg_buffer_destroy(c.data[dt]);
        hg_buffer_destroy(c.special[dt]);
    }
    tref_fini(&c.t);
    hg_executor_destroy(ex);
    return hg_test_finish("test_ops_reduce");
}
