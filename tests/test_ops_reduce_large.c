// Reductions at sizes where the layout walks, the thread split and accuracy matter: 1e7-element
// f32/f64 sums against double/long double references (random and adversarial data), var/std
// with a large mean, logsumexp at magnitude 1e4, and 2-D/3-D arrays big enough for the parallel
// "runs" and "rows" paths (reductions over the first, last, middle and all axes; transposed and
// reversed views), compared with a long-double reference and across thread counts.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "tensor_ref.h"
#include "ops/reduce/reduce.h"

// Sanitizer builds run the library unoptimized: they check a subset of the big layouts.
#if defined(__SANITIZE_ADDRESS__)
#define HEAVY 0
#else
#define HEAVY 1
#endif

static uint64_t rng = 0x1a2b3c4d;
static double urand(void) { return (double)(hg_test_rand(&rng) >> 11) * 0x1.0p-53; }

static double read_scalar(const hg_tensor* t) {
    void* p = NULL;
    CHECK_OK(hg_buffer_map(t->buffer, &p));
    switch (t->dtype) {
    case HG_DTYPE_F32: return *(float*)p;
    case HG_DTYPE_F64: return *(double*)p;
    default: return (double)*(int64_t*)p;
    }
}

static double reduce_all(hg_reduce_op op, const hg_tensor* x) {
    hg_tensor out;
    memset(&out, 0, sizeof out);
    CHECK_OK(hg_reduce(op, x, 0, NULL, 0, &out));
    double r = read_scalar(&out);
    hg_buffer_destroy(out.buffer);
    return r;
}

static void big_sums(hg_executor ex) {
    const int64_t n = 10000000;
    hg_buffer b, d;
    float* f;
    double* g;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, (size_t)n, &b));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F64, (size_t)n, &d));
    CHECK_OK(hg_buffer_map(b, (void**)&f));
    CHECK_OK(hg_buffer_map(d, (void**)&g));
    hg_tensor x, y;
    CHECK_OK(hg_tensor_from_buffer(b, 1, (int64_t[]){n}, &x));
    CHECK_OK(hg_tensor_from_buffer(d, 1, (int64_t[]){n}, &y));
    // Random values in [0, 1): relative error against the double sum of the same floats.
    long double ref = 0;
    for (int64_t i = 0; i < n; i++) { f[i] = (float)urand(); ref += f[i]; }
    double got = reduce_all(HG_REDUCE_SUM, &x);
    double rel = fabs(got - (double)ref) / (double)ref;
    CHECK_MSG(rel <= 1e-5, "f32 sum of 1e7 random: rel err %.3g", rel);
    fprintf(stderr, "f32 sum of 1e7 uniform [0,1): rel err %.3g\n", rel);
    double mean = reduce_all(HG_REDUCE_MEAN, &x);
    CHECK_MSG(fabs(mean - (double)(ref / n)) <= 1e-5 * (double)(ref / n), "mean %.9g", mean);
    // 1e7 copies of 0.1f: naive f32 summation drifts by percent; the exact sum is 1e7 * 0.1f.
    for (int64_t i = 0; i < n; i++) f[i] = 0.1f;
    double exact = 1e7 * (double)0.1f;
    got = reduce_all(HG_REDUCE_SUM, &x);
    rel = fabs(got - exact) / exact;
    CHECK_MSG(rel <= 1e-5, "f32 sum of 1e7 x 0.1: got %.9g want %.9g rel %.3g", got, exact, rel);
    fprintf(stderr, "f32 sum of 1e7 x 0.1f: rel err %.3g\n", rel);
    // The same through a reversed view (negative stride) and as a 2-D array over each axis.
    hg_tensor xr;
    CHECK_OK(hg_tensor_slice(&x, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &xr));
    got = reduce_all(HG_REDUCE_SUM, &xr);
    CHECK_MSG(fabs(got - exact) <= 1e-5 * exact, "reversed: %.9g", got);
    // f64: 1e7 copies of 0.1 (pairwise: error far below 1e-13) and random values.
    for (int64_t i = 0; i < n; i++) g[i] = 0.1;
    got = reduce_all(HG_REDUCE_SUM, &y);
    rel = fabs(got - (double)(1e7L * 0.1L)) / 1e6;
    CHECK_MSG(rel <= 1e-13, "f64 sum of 1e7 x 0.1: %.17g rel %.3g", got, rel);
    fprintf(stderr, "f64 sum of 1e7 x 0.1: rel err %.3g\n", rel);
    ref = 0;
    for (int64_t i = 0; i < n; i++) { g[i] = urand() * 2 - 0.9; ref += g[i]; }
    got = reduce_all(HG_REDUCE_SUM, &y);
    CHECK_MSG(fabs(got - (double)ref) <= 1e-12 * fabs((double)ref) + 1e-9, "f64 random %.17g vs %.17g",
              got, (double)ref);
    // var/std with a large mean: 1e6 + noise of std ~0.29 (uniform): two-pass stays exact.
    long double m = 0, ss = 0;
    int64_t nv = 1000000;
    for (int64_t i = 0; i < nv; i++) { g[i] = 1e6 + urand(); m += g[i]; }
    m /= nv;
    for (int64_t i = 0; i < nv; i++) ss += (g[i] - m) * (g[i] - m);
    hg_tensor yv;
    CHECK_OK(hg_tensor_view(d, 1, (int64_t[]){nv}, NULL, 0, &yv));
    double var = reduce_all(HG_REDUCE_VAR, &yv), want = (double)(ss / nv);
    CHECK_MSG(fabs(var - want) <= 1e-9 * want, "f64 var large mean: %.17g vs %.17g", var, want);
    double sd = reduce_all(HG_REDUCE_STD, &yv);
    CHECK_MSG(fabs(sd - sqrt(want)) <= 1e-9 * sqrt(want), "std %.17g", sd);
    // f32: data 1e4 + noise (exactly representable in f32 steps of 2^-10).
    m = 0; ss = 0;
    for (int64_t i = 0; i < nv; i++) { f[i] = (float)(1e4 + urand()); m += f[i]; }
    m /= nv;
    for (int64_t i = 0; i < nv; i++) ss += (f[i] - m) * (f[i] - m);
    hg_tensor xv;
    CHECK_OK(hg_tensor_view(b, 1, (int64_t[]){nv}, NULL, 0, &xv));
    var = reduce_all(HG_REDUCE_VAR, &xv);
    want = (double)(ss / nv);
    CHECK_MSG(fabs(var - want) <= 1e-6 * want, "f32 var large mean: %.9g vs %.9g", var, want);
    // logsumexp of 1e6 values around 1e4 in f32.
    for (int64_t i = 0; i < nv; i++) f[i] = (float)(1e4 + 10 * urand());
    long double mx = -INFINITY, s = 0;
    for (int64_t i = 0; i < nv; i++) if (f[i] > mx) mx = f[i];
    for (int64_t i = 0; i < nv; i++) s += expl(f[i] - mx);
    double lse = reduce_all(HG_REDUCE_LOGSUMEXP, &xv), lwant = (double)(mx + logl(s));
    CHECK_MSG(fabs(lse - lwant) <= 2e-7 * lwant, "lse %.9g vs %.9g", lse, lwant);
    hg_buffer_destroy(b);
    hg_buffer_destroy(d);
}

// Long-double reference over a view of host doubles (the values of x's buffer).
static void ref_reduce(hg_reduce_op op, const hg_tensor* x, const double* vals, uint32_t mask,
                       double* out, int64_t M) {
    int64_t N = 1;
    for (int32_t dd = 0; dd < x->ndim; dd++) if (mask & (1u << dd)) N *= x->shape[dd];
    long double* acc = calloc((size_t)M, sizeof(long double));
    long double* acc2 = calloc((size_t)M, sizeof(long double));
    int64_t* cnt = calloc((size_t)M, sizeof(int64_t));
    for (int pass = 0; pass < 2; pass++) {
        int64_t idx[HG_MAX_DIMS] = {0};
        do {
            int64_t m = 0, r = 0;
            for (int32_t dd = 0; dd < x->ndim; dd++) {
                if (mask & (1u << dd)) r = r * x->shape[dd] + idx[dd];
                else m = m * x->shape[dd] + idx[dd];
            }
            double v = vals[tref_elem_of(x, idx)];
            if (pass == 0) {
                if (op == HG_REDUCE_MAX || op == HG_REDUCE_ARGMAX || op == HG_REDUCE_LOGSUMEXP) {
                    if (cnt[m] == 0 || v > acc[m]) { acc[m] = v; acc2[m] = (long double)r; }
                    cnt[m]++;
                } else {
                    acc[m] += v;
                }
            } else if (op == HG_REDUCE_VAR) {
                long double mu = acc[m] / N;
                acc2[m] += (v - mu) * (v - mu);
            } else if (op == HG_REDUCE_LOGSUMEXP) {
                cnt[m] = 0;
                out[m] += (double)expl(v - acc[m]);
            }
        } while (tref_next_index(x->ndim, x->shape, idx));
        if (pass == 0 && op == HG_REDUCE_LOGSUMEXP) memset(out, 0, (size_t)M * sizeof(double));
    }
    for (int64_t m = 0; m < M; m++) {
        switch (op) {
        case HG_REDUCE_SUM: out[m] = (double)acc[m]; break;
        case HG_REDUCE_MEAN: out[m] = (double)(acc[m] / N); break;
        case HG_REDUCE_MAX: out[m] = (double)acc[m]; break;
        case HG_REDUCE_ARGMAX: out[m] = (double)acc2[m]; break;
        case HG_REDUCE_VAR: out[m] = (double)(acc2[m] / N); break;
        default: out[m] = (double)(acc[m] + logl(out[m])); break;
        }
    }
    free(acc);
    free(acc2);
    free(cnt);
}

static double get_elem(hg_dtype dt, const void* p, int64_t i) {
    switch (dt) {
    case HG_DTYPE_F32: return ((const float*)p)[i];
    case HG_DTYPE_F64: return ((const double*)p)[i];
    case HG_DTYPE_F16: return hg_f16_to_f32(((const uint16_t*)p)[i]);
    case HG_DTYPE_I32: return ((const int32_t*)p)[i];
    default: return (double)((const int64_t*)p)[i];
    }
}

// Big views through every path: the same kind of data as f32, f64, i32 (small ints, many ties
// for argmax) and f16, on a 3-thread executor and (wrapping the same memory) a 1-thread one.
static void big_layouts(hg_executor ex1, hg_executor ex3) {
    const int64_t n = 3 * 100003 + 64;
    hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_I32, HG_DTYPE_F16};
    double* vals = malloc((size_t)n * sizeof(double));
    for (int k = 0; k < 4; k++) {
        hg_dtype dt = dts[k];
        hg_buffer b, b1;
        void* host;
        CHECK_OK(hg_buffer_create(ex3, dt, (size_t)n, &b));
        CHECK_OK(hg_buffer_map(b, &host));
        CHECK_OK(hg_buffer_wrap(ex1, dt, host, (size_t)n, &b1));
        for (int64_t i = 0; i < n; i++) {
            double v = dt == HG_DTYPE_I32 ? floor(urand() * 200 - 100) : urand() * 4 - 1;
            switch (dt) {
            case HG_DTYPE_F32: ((float*)host)[i] = (float)v; v = (float)v; break;
            case HG_DTYPE_F64: ((double*)host)[i] = v; break;
            case HG_DTYPE_I32: ((int32_t*)host)[i] = (int32_t)v; break;
            default:
                ((uint16_t*)host)[i] = hg_f32_to_f16((float)v);
                v = hg_f16_to_f32(hg_f32_to_f16((float)v));
                break;
            }
            vals[i] = v;
        }
        hg_tensor views[6];
        CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){3, 100003}, NULL, 0, &views[0]));
        CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){100003, 3}, NULL, 0, &views[1]));
        CHECK_OK(hg_tensor_view(b, 2, (int64_t[]){509, 587}, NULL, 7, &views[2]));
        CHECK_OK(hg_tensor_transpose(&views[2], 0, 1, &views[3]));
        CHECK_OK(hg_tensor_slice(&views[2], 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &views[4]));
        CHECK_OK(hg_tensor_view(b, 3, (int64_t[]){61, 73, 67}, NULL, 3, &views[5]));
        hg_reduce_op ops[] = {HG_REDUCE_SUM, HG_REDUCE_MEAN, HG_REDUCE_MAX, HG_REDUCE_ARGMAX,
                              HG_REDUCE_VAR, HG_REDUCE_LOGSUMEXP};
        double eps = dt == HG_DTYPE_F16 ? 9.8e-4 : dt == HG_DTYPE_F32 ? 1.2e-7 : 2.3e-16;
        for (int vi = 0; vi < 6; vi++)
            for (int oi = 0; oi < 6; oi++)
                for (uint32_t mask = 1; mask < (1u << views[vi].ndim); mask++) {
                    const hg_tensor* x = &views[vi];
                    hg_reduce_op op = ops[oi];
                    // Integers and f16: the paths that differ per dtype (loaders, keys).
                    if ((dt == HG_DTYPE_I32 || dt == HG_DTYPE_F16) && (vi == 4 || oi == 1 || oi == 5)) continue;
                    if (!HEAVY && (dt == HG_DTYPE_F64 || (oi != 0 && oi != 3) || vi == 5)) continue;
                    int32_t axes[3], na = 0;
                    int64_t M = 1, N = 1;
                    for (int32_t dd = 0; dd < x->ndim; dd++) {
                        if (mask & (1u << dd)) { axes[na++] = dd - (vi & 1) * x->ndim; N *= x->shape[dd]; }
                        else M *= x->shape[dd];
                    }
                    double* want = calloc((size_t)M, sizeof(double));
                    ref_reduce(op, x, vals, mask, want, M);
                    for (int t = 0; t < (HEAVY || oi == 3 ? 2 : 1); t++) {
                        hg_tensor xt = *x, out;
                        if (t) xt.buffer = b1;
                        memset(&out, 0, sizeof out);
                        CHECK_OK(hg_reduce(op, &xt, na, axes, 0, &out));
                        void* op_host;
                        CHECK_OK(hg_buffer_map(out.buffer, &op_host));
                        int bad = 0;
                        for (int64_t m = 0; m < M && bad < 3; m++) {
                            double g = get_elem(out.dtype, op_host, m), w = want[m], tol;
                            if (out.dtype == HG_DTYPE_F16) w = hg_f16_to_f32(hg_f32_to_f16((float)w));
                            double e = out.dtype == HG_DTYPE_F16 ? 9.8e-4 : out.dtype == HG_DTYPE_F32 ? 1.2e-7 : 2.3e-16;
                            switch (op) {
                            case HG_REDUCE_SUM: tol = 2 * e * fabs(w) + 3.0 * (double)N * (eps > 1e-7 ? 2e-6 : 1e-13); break;
                            case HG_REDUCE_MEAN: tol = 2 * e * fabs(w) + 3.0 * (eps > 1e-7 ? 2e-6 : 1e-13); break;
                            // The squared deviations add up in 4 f64 chains: the rounding of N/4
                            // additions (a fixed 1e-13 failed at 1.08e-13 on some random data).
                            case HG_REDUCE_VAR: tol = 4 * e * fabs(w) + (double)N / 4 * 2.3e-16 * fabs(w); break;
                            case HG_REDUCE_LOGSUMEXP: tol = 2 * e * fabs(w) + 1e-9; break;
                            default: tol = 0.0; break;
                            }
                            if (!(fabs(g - w) <= tol) && !(isinf(w) && g == w)) {
                                bad++;
                                CHECK_MSG(0, "%s %s view %d mask %u threads %d out %lld: got %.17g want %.17g",
                                          hg_reduce_op_name(op), hg_dtype_name(dt), vi, mask,
                                          t ? 1 : 3, (long long)m, g, w);
                            }
                        }
                        if (!bad) CHECK(1);
                        hg_buffer_destroy(out.buffer);
                    }
                    free(want);
                }
        hg_buffer_destroy(b1);
        hg_buffer_destroy(b);
    }
    free(vals);
}

// f32 sums and means along contiguous rows (the batched row-sum path): every output equals the
// single-row sum hg_reduce_sum_f32 gives, bit for bit, and the float64 sum within the bound of
// reduce.h; row lengths around the 128-element and 32-lane block edges, row counts past one
// batch of 1024 rows, 1 and 3 threads.
static void row_sums(hg_executor ex1, hg_executor ex3) {
    const int64_t lens[] = {1, 7, 31, 127, 128, 129, 256, 1000, 4099};
    const int64_t counts[] = {1, 3, 1031};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            int64_t L = lens[li], R = counts[ci];
            if (L * R > 2000000) continue;
            hg_buffer b;
            float* x;
            CHECK_OK(hg_buffer_create(ex3, HG_DTYPE_F32, (size_t)(L * R), &b));
            CHECK_OK(hg_buffer_map(b, (void**)&x));
            for (int64_t i = 0; i < L * R; i++) x[i] = (float)(urand() * 4 - 1);
            hg_tensor t;
            CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){R, L}, &t));
            for (int e = 0; e < 2; e++) {
                hg_buffer bx = b;
                if (e == 1) CHECK_OK(hg_buffer_wrap(ex1, HG_DTYPE_F32, x, (size_t)(L * R), &bx));
                hg_tensor tx = t;
                tx.buffer = bx;
                for (int mean = 0; mean < 2; mean++) {
                    hg_tensor out;
                    memset(&out, 0, sizeof out);
                    CHECK_OK(hg_reduce(mean ? HG_REDUCE_MEAN : HG_REDUCE_SUM, &tx, 1, (int32_t[]){1},
                                       0, &out));
                    float* o;
                    CHECK_OK(hg_buffer_map(out.buffer, (void**)&o));
                    int bad = 0;
                    for (int64_t r = 0; r < R && !bad; r++) {
                        double one = hg_reduce_sum_f32(x + r * L, L), ref = 0.0, mag = 0.0;
                        for (int64_t i = 0; i < L; i++) {
                            ref += x[r * L + i];
                            mag += fabs(x[r * L + i]);
                        }
                        float want = mean ? (float)(one / (double)L) : (float)one;
                        double tol = (mean ? 1.0 / (double)L : 1.0) * (16 * 0x1p-24 * mag) +
                                     fabs(ref) * 0x1p-23 / (mean ? (double)L : 1.0);
                        double refm = mean ? ref / (double)L : ref;
                        if (memcmp(&o[r], &want, sizeof want) != 0 || !(fabs(o[r] - refm) <= tol)) {
                            bad = 1;
                            CHECK_MSG(0, "%s of %lld rows of %lld (%d threads): row %lld = %.9g, "
                                      "one-row sum %.9g, float64 %.9g", mean ? "mean" : "sum",
                                      (long long)R, (long long)L, e ? 1 : 3, (long long)r, o[r],
                                      want, refm);
                        }
                    }
                    if (!bad) CHECK(1);
                    hg_buffer_destroy(out.buffer);
                }
                if (e == 1) hg_buffer_destroy(bx);
            }
            hg_buffer_destroy(b);
        }
}

// Reductions over the first axis of tall arrays, where a 3-thread executor splits each column
// band's reduced range into pieces (at least RED_MIN_PARALLEL elements each) and combines
// them: sum, max and argmax against float64 and exact references, 1 and 3 threads.
static void column_splits(hg_executor ex1, hg_executor ex3) {
    const int64_t shapes[][2] = {{2048, 300}, {131072, 7}, {700, 1000}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int64_t R = shapes[si][0], C = shapes[si][1];
        hg_buffer b;
        float* x;
        CHECK_OK(hg_buffer_create(ex3, HG_DTYPE_F32, (size_t)(R * C), &b));
        CHECK_OK(hg_buffer_map(b, (void**)&x));
        for (int64_t i = 0; i < R * C; i++) x[i] = (float)(urand() * 4 - 1);
        x[(R / 2) * C + C / 2] = 9.0f;   // a unique maximum in a middle piece
        for (int e = 0; e < 2; e++) {
            hg_buffer bx = b;
            if (e == 1) CHECK_OK(hg_buffer_wrap(ex1, HG_DTYPE_F32, x, (size_t)(R * C), &bx));
            hg_tensor t;
            CHECK_OK(hg_tensor_from_buffer(bx, 2, (int64_t[]){R, C}, &t));
            hg_reduce_op ops[] = {HG_REDUCE_SUM, HG_REDUCE_MAX, HG_REDUCE_ARGMAX};
            for (int oi = 0; oi < 3; oi++) {
                hg_tensor out;
                memset(&out, 0, sizeof out);
                CHECK_OK(hg_reduce(ops[oi], &t, 1, (int32_t[]){0}, 0, &out));
                void* o;
                CHECK_OK(hg_buffer_map(out.buffer, &o));
                int bad = 0;
                for (int64_t c = 0; c < C && !bad; c++) {
                    double sum = 0.0, mag = 0.0;
                    float mx = x[c];
                    int64_t arg = 0;
                    for (int64_t r = 0; r < R; r++) {
                        float v = x[r * C + c];
                        sum += v;
                        mag += fabs(v);
                        if (v > mx) { mx = v; arg = r; }
                    }
                    double got = oi == 2 ? (double)((int64_t*)o)[c] : (double)((float*)o)[c];
                    double want = oi == 0 ? sum : oi == 1 ? (double)mx : (double)arg;
                    double tol = oi == 0 ? 16 * 0x1p-24 * mag + fabs(sum) * 0x1p-23 : 0.0;
                    if (!(fabs(got - want) <= tol)) {
                        bad = 1;
                        CHECK_MSG(0, "op %d over axis 0 of %lldx%lld (%d threads): column %lld = "
                                  "%.9g, want %.9g", oi, (long long)R, (long long)C, e ? 1 : 3,
                                  (long long)c, got, want);
                    }
                }
                if (!bad) CHECK(1);
                hg_buffer_destroy(out.buffer);
            }
            if (e == 1) hg_buffer_destroy(bx);
        }
        hg_buffer_destroy(b);
    }
}

int main(void) {
    hg_executor ex1, ex3;
    hg_executor_options o1 = {HG_BACKEND_CPU, 0, 1}, o3 = {HG_BACKEND_CPU, 0, 3};
    CHECK_OK(hg_executor_create_ex(&o1, &ex1));
    CHECK_OK(hg_executor_create_ex(&o3, &ex3));
    big_sums(ex3);
    row_sums(ex1, ex3);
    column_splits(ex1, ex3);
    big_layouts(ex1, ex3);
    hg_executor_destroy(ex1);
    hg_executor_destroy(ex3);
    return hg_test_finish("test_ops_reduce_large");
}
