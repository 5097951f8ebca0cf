// Random elementwise graphs (random ops, dtypes, broadcasts, strided inputs) compiled with and
// without fusion: both must agree bit for bit with each other and with the eager ops evaluated
// node by node; random f64 graphs of exactly rounded ops also match C double arithmetic. Then
// fused trailing reductions (sum / mean / min / max of an elementwise chain) against double
// references, unfused plans and the strided fallback.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "runtime/objects.h"
#include "ops/common/op_common.h"
#include "graph/graph_internal.h"
#include "hg_test.h"
#include "tensor_ref.h"

static hg_executor g_ex;
static uint64_t g_rng = 4242;

static uint64_t rnd(void) { return hg_test_rand(&g_rng); }



static int64_t numel(int32_t nd, const int64_t* s) {
    int64_t n = 1;
    for (int32_t i = 0; i < nd; i++) n *= s[i];
    return n;
}

static void fill_random(hg_dtype dt, unsigned char* p, int64_t n) {
    size_t es = hg_dtype_size(dt);
    static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 1e-40, 65504, 3e38};
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        unsigned char* q = p + (size_t)i * es;
        if (dt == HG_DTYPE_BOOL) { q[0] = r & 1; continue; }
        if (dt >= HG_DTYPE_F16) {
            double v = r % 8 == 0 ? sp[(r >> 8) % 12] : ((double)((r >> 8) % 4001) - 2000.0) / 64.0;
            hg_convert_from_double(dt, v, q);
        } else {
            if (r % 3 == 0) r = (r >> 8) % 7;   // small values (shifts, divisors)
            memcpy(q, &r, es);
        }
    }
}

// ---- random graphs, recorded so the eager ops can replay them ----

typedef enum { R_INPUT, R_UNARY, R_BINARY, R_SCALAR, R_WHERE, R_FMA, R_CAST, R_EXPAND } rec_kind;
typedef struct rec {
    rec_kind kind;
    int op;
    int32_t a, b, c;   // record indices
    hg_scalar s;
    int scalar_first;
    hg_dtype dt;
    int32_t node;
} rec;

#define MAXREC 24

static void test_random_graphs(int iters) {
    static const int64_t shapes[][4] = {{0}, {7}, {3, 5}, {2, 3, 4}, {0, 4}, {1}, {64}, {4, 33}};
    static const int32_t ndims[] = {0, 1, 2, 3, 2, 1, 1, 2};
    int compared = 0, fused_fewer = 0;
    for (int it = 0; it < iters; it++) {
        int si = (int)(rnd() % 8);
        int32_t nd = ndims[si];
        const int64_t* shape = shapes[si];
        int f64_only = it % 4 == 0;   // exactly rounded f64 ops: also checked against C doubles
        hg_graph g;
        CHECK_OK(hg_graph_create(&g));
        rec r[MAXREC];
        int nr = 0, ninputs = 2 + (int)(rnd() % 3);
        for (int i = 0; i < ninputs; i++) {
            int64_t sh[4];
            int32_t ind = nd - (int32_t)(rnd() % (nd + 1));
            for (int32_t d = 0; d < ind; d++) sh[d] = rnd() % 3 == 0 ? 1 : shape[nd - ind + d];
            if (i == 0) { ind = nd; memcpy(sh, shape, sizeof sh); }
            hg_dtype dt = f64_only ? HG_DTYPE_F64 : (hg_dtype)(rnd() % HG_DTYPE_COUNT);
            r[nr] = (rec){R_INPUT, 0, -1, -1, -1, {0, 0, 0}, 0, dt, -1};
            CHECK_OK(hg_graph_input(g, dt, ind, sh, &r[nr].node));
            nr++;
        }
        for (int tries = 0; nr < MAXREC - 2 && tries < 40; tries++) {
            rec x = {(rec_kind)(1 + rnd() % 7), 0, (int32_t)(rnd() % nr), (int32_t)(rnd() % nr),
                     (int32_t)(rnd() % nr), {0, 0, 0}, (int)(rnd() % 2), HG_DTYPE_F32, -1};
            hg_status s = HG_ERR_INTERNAL;
            if (f64_only) {
                static const int bops[] = {HG_BINARY_ADD, HG_BINARY_SUB, HG_BINARY_MUL, HG_BINARY_DIV,
                                           HG_BINARY_MAXIMUM, HG_BINARY_MINIMUM};
                static const int uops[] = {HG_UNARY_NEG, HG_UNARY_ABS, HG_UNARY_RELU, HG_UNARY_SQRT};
                x.kind = rnd() % 3 ? R_BINARY : R_UNARY;
                if (x.kind == R_BINARY) x.op = bops[rnd() % 6];
                else x.op = uops[rnd() % 4];
                if (rnd() % 4 == 0) x.kind = R_FMA;
            } else {
                x.op = x.kind == R_UNARY ? (int)(rnd() % HG_UNARY_COUNT) : (int)(rnd() % HG_BINARY_COUNT);
            }
            x.s = rnd() % 2 ? hg_scalar_f(((double)(rnd() % 17) - 8) / 4) : hg_scalar_i((int64_t)(rnd() % 9) - 2);
            x.dt = (hg_dtype)(rnd() % HG_DTYPE_COUNT);
            int32_t out = -1;
            switch (x.kind) {
            case R_UNARY: s = hg_graph_unary(g, (hg_unary_op)x.op, r[x.a].node, &out); break;
            case R_BINARY: s = hg_graph_binary(g, (hg_binary_op)x.op, r[x.a].node, r[x.b].node, &out); break;
            case R_SCALAR: s = hg_graph_binary_scalar(g, (hg_binary_op)x.op, r[x.a].node, x.s, x.scalar_first, &out); break;
            case R_WHERE: s = hg_graph_where(g, r[x.a].node, r[x.b].node, r[x.c].node, &out); break;
            case R_FMA: s = hg_graph_fma(g, r[x.a].node, r[x.b].node, r[x.c].node, &out); break;
            case R_CAST: s = hg_graph_cast(g, r[x.a].node, x.dt, &out); break;
            case R_EXPAND: s = hg_graph_expand(g, r[x.a].node, nd, shape, &out); break;
            default: break;
            }
            if (s) { hg_clear_error(); continue; }
            x.node = out;
            r[nr++] = x;
        }
        int32_t outs[3];
        int nout = 1 + (int)(rnd() % 3);
        outs[0] = nr - 1;
        for (int k = 1; k < nout; k++) outs[k] = ninputs + (int32_t)(rnd() % (nr - ninputs));
        if (nr == ninputs) { CHECK_OK(hg_graph_destroy(g)); continue; }
        for (int k = 0; k < nout; k++) CHECK_OK(hg_graph_output(g, r[outs[k]].node));
        hg_compile_opts fon = {1, 1, 1, 0}, foff = {1, 1, 0, 0};
        hg_plan pf, pu;
        hg_status cs = hg_graph_compile_opts(g, g_ex, &fon, &pf);
        CHECK_MSG(cs == HG_OK, "iteration %d: %s", it, hg_last_error());
        if (cs) { hg_graph_destroy(g); continue; }
        CHECK_OK(hg_graph_compile_opts(g, g_ex, &foff, &pu));
        hg_plan_info fi, ui;
        hg_plan_info_get(pf, &fi);
        hg_plan_info_get(pu, &ui);
        CHECK(fi.kernels <= ui.kernels);
        fused_fewer += fi.kernels < ui.kernels;
        // Inputs: random data; every other input as a reversed view of a padded buffer.
        hg_tensor tin[4];
        hg_buffer bin[4];
        for (int i = 0; i < ninputs; i++) {
            hg_dtype dt;
            int32_t ind;
            int64_t sh[HG_MAX_DIMS];
            CHECK_OK(hg_graph_node_info(g, r[i].node, &dt, &ind, sh));
            int64_t n = numel(ind, sh);
            unsigned char* host = malloc((size_t)(n + 3) * 8);
            fill_random(dt, host, n + 3);
            CHECK_OK(hg_buffer_create(g_ex, dt, (size_t)n + 3, &bin[i]));
            CHECK_OK(hg_buffer_write(bin[i], 0, host, (size_t)n + 3));
            if (i % 2 && ind >= 1 && n > 0) {
                int64_t st[HG_MAX_DIMS];
                st[ind - 1] = -1;
                for (int32_t d = ind - 2; d >= 0; d--) st[d] = st[d + 1] * sh[d + 1];
                CHECK_OK(hg_tensor_view(bin[i], ind, sh, st, n + 1, &tin[i]));   // C order reversed
            } else {
                CHECK_OK(hg_tensor_view(bin[i], ind, sh, NULL, 2, &tin[i]));
            }
            free(host);
        }
        hg_tensor tf[3], tu[3];
        hg_buffer bf[3], bu[3];
        for (int k = 0; k < nout; k++) {
            hg_dtype dt;
            int32_t ond;
            int64_t sh[HG_MAX_DIMS];
            CHECK_OK(hg_graph_node_info(g, r[outs[k]].node, &dt, &ond, sh));
            size_t n = (size_t)numel(ond, sh);
            CHECK_OK(hg_buffer_create(g_ex, dt, n, &bf[k]));
            CHECK_OK(hg_buffer_create(g_ex, dt, n, &bu[k]));
            CHECK_OK(hg_tensor_from_buffer(bf[k], ond, sh, &tf[k]));
            CHECK_OK(hg_tensor_from_buffer(bu[k], ond, sh, &tu[k]));
        }
        hg_status rs = hg_plan_run(pf, ninputs, tin, nout, tf);
        CHECK_MSG(rs == HG_OK, "iteration %d fused run: %s", it, hg_last_error());
        CHECK_OK(hg_plan_run(pu, ninputs, tin, nout, tu));
        // Eager replay.
        hg_tensor ev[MAXREC];
        int eager_ok = 1, pow_refused = 0;
        for (int i = 0; i < nr; i++) {
            memset(&ev[i], 0, sizeof ev[i]);
            hg_status s = HG_OK;
            switch (r[i].kind) {
            case R_INPUT: ev[i] = tin[i]; break;
            case R_UNARY: s = hg_unary((hg_unary_op)r[i].op, &ev[r[i].a], &ev[i]); break;
            case R_BINARY: s = hg_binary((hg_binary_op)r[i].op, &ev[r[i].a], &ev[r[i].b], &ev[i]); break;
            case R_SCALAR: s = hg_binary_scalar((hg_binary_op)r[i].op, &ev[r[i].a], r[i].s, r[i].scalar_first, &ev[i]); break;
            case R_WHERE: s = hg_where(&ev[r[i].a], &ev[r[i].b], &ev[r[i].c], &ev[i]); break;
            case R_FMA: s = hg_fma(&ev[r[i].a], &ev[r[i].b], &ev[r[i].c], &ev[i]); break;
            case R_CAST: s = hg_cast(&ev[r[i].a], r[i].dt, &ev[i]); break;
            case R_EXPAND: s = hg_tensor_expand(&ev[r[i].a], nd, shape, &ev[i]); break;
            }
            // An integer power with a negative exponent: the eager op refuses it (numpy's
            // ValueError) while plans do not check values; fused and unfused still compare.
            if (s == HG_ERR_INVALID_ARGUMENT && r[i].op == HG_BINARY_POW &&
                (r[i].kind == R_BINARY || r[i].kind == R_SCALAR) &&
                strstr(hg_last_error(), "negative integer powers")) {
                pow_refused = 1;
                break;
            }
            if (s) { eager_ok = 0; CHECK_MSG(0, "eager replay failed at %d: %s", i, hg_last_error()); break; }
        }
        for (int k = 0; k < nout && (eager_ok || pow_refused); k++) {
            hg_dtype dt = tf[k].dtype;
            int64_t n = numel(tf[k].ndim, tf[k].shape);
            size_t es = hg_dtype_size(dt);
            unsigned char *a = tref_read_view(&tf[k]), *b = tref_read_view(&tu[k]), *c = NULL;
            CHECK(a && b);
            if (!a || !b) { free(a); free(b); continue; }
            int same = !pow_refused && ev[outs[k]].dtype == dt && ev[outs[k]].ndim == tf[k].ndim &&
                       numel(ev[outs[k]].ndim, ev[outs[k]].shape) == n;
            CHECK_MSG(same || pow_refused, "iteration %d output %d: eager gives %s, the graph %s",
                      it, k, hg_dtype_name(ev[outs[k]].dtype), hg_dtype_name(dt));
            if (same) c = tref_read_view(&ev[outs[k]]);
            if (!c && (c = malloc((size_t)n * es + 1))) memcpy(c, a, (size_t)n * es);
            int bad = -1;
            for (int64_t e = 0; e < n && bad < 0; e++) {
                const unsigned char *x = a + e * es, *y = b + e * es, *z = c + e * es;
                int nan = tref_is_nan(dt, x) && tref_is_nan(dt, y) && tref_is_nan(dt, z);
                if (!nan && (memcmp(x, y, es) || memcmp(x, z, es))) bad = (int)e;
            }
            CHECK_MSG(bad < 0, "iteration %d output %d (%s): fused/unfused/eager differ at %d", it,
                      k, hg_dtype_name(dt), bad);
            if (f64_only && n > 0 && n == numel(nd, shape)) {   // outputs of the full shape
                // C doubles: the same exactly rounded ops (fma via fma()).
                double* ref = calloc((size_t)nr * (size_t)n, sizeof(double));
                double* inh[4];
                for (int i = 0; i < ninputs; i++) {
                    hg_tensor bt;
                    CHECK_OK(hg_tensor_expand(&tin[i], nd, shape, &bt));
                    inh[i] = (double*)tref_read_view(&bt);
                }
                for (int i = 0; i < nr; i++) {
                    double* o = ref + (size_t)i * n;
                    for (int64_t e = 0; e < n; e++) {
                        double x = i >= ninputs ? ref[(size_t)r[i].a * n + e] : inh[i][e];
                        double y = i >= ninputs ? ref[(size_t)r[i].b * n + e] : 0;
                        double z = i >= ninputs ? ref[(size_t)r[i].c * n + e] : 0;
                        if (r[i].kind == R_INPUT) o[e] = x;
                        else if (r[i].kind == R_FMA) o[e] = fma(x, y, z);
                        else if (r[i].kind == R_UNARY)
                            o[e] = r[i].op == HG_UNARY_NEG ? -x : r[i].op == HG_UNARY_ABS ? fabs(x)
                                 : r[i].op == HG_UNARY_SQRT ? sqrt(x) : (isnan(x) ? x : x > 0 ? x : 0.0 * (x == x));
                        else
                            switch (r[i].op) {
                            case HG_BINARY_ADD: o[e] = x + y; break;
                            case HG_BINARY_SUB: o[e] = x - y; break;
                            case HG_BINARY_MUL: o[e] = x * y; break;
                            case HG_BINARY_DIV: o[e] = x / y; break;
                            case HG_BINARY_MAXIMUM: o[e] = isnan(x) || isnan(y) ? NAN : (x > y || (x == y && !signbit(x))) ? x : y; break;
                            default: o[e] = isnan(x) || isnan(y) ? NAN : (x < y || (x == y && signbit(x))) ? x : y; break;
                            }
                    }
                }
                const double* want = ref + (size_t)outs[k] * n;
                int dbad = 0;
                for (int64_t e = 0; e < n; e++) {
                    double got;
                    memcpy(&got, a + e * 8, 8);
                    dbad += !(got == want[e] && signbit(got) == signbit(want[e])) && !(isnan(got) && isnan(want[e]));
                }
                CHECK_MSG(dbad == 0, "iteration %d: %d elements differ from C doubles", it, dbad);
                for (int i = 0; i < ninputs; i++) free(inh[i]);
                free(ref);
            }
            compared++;
            free(a); free(b); free(c);
        }
        for (int i = ninputs; i < nr; i++)
            if (r[i].kind != R_EXPAND && ev[i].buffer.handle && eager_ok) hg_buffer_destroy(ev[i].buffer);
        if (!eager_ok)
            for (int i = ninputs; i < nr; i++)
                if (r[i].kind != R_EXPAND && ev[i].buffer.handle) hg_buffer_destroy(ev[i].buffer);
        for (int i = 0; i < ninputs; i++) hg_buffer_destroy(bin[i]);
        for (int k = 0; k < nout; k++) { hg_buffer_destroy(bf[k]); hg_buffer_destroy(bu[k]); }
        CHECK_OK(hg_plan_destroy(pf));
        CHECK_OK(hg_plan_destroy(pu));
        CHECK_OK(hg_graph_destroy(g));
    }
    printf("random graphs: %d outputs compared, %d plans with fewer kernels fused\n", compared, fused_fewer);
    CHECK(compared > iters / 2);
    CHECK(fused_fewer > iters / 4);
}

// ---- fused trailing reductions ----

static void test_fused_reduce(hg_reduce_op op, hg_dtype dt, int32_t nd, const int64_t* shape,
                              int strided) {
    hg_graph g;
    int32_t a, b, t, y;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, dt, nd, shape, &a));
    CHECK_OK(hg_graph_input(g, dt, 0, NULL, &b));   // a 0-d input (read at index 0)
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, a, b, &t));
    CHECK_OK(hg_graph_binary_scalar(g, HG_BINARY_ADD, t, hg_scalar_i(1), 0, &t));
    CHECK_OK(hg_graph_unary(g, HG_UNARY_ABS, t, &t));
    CHECK_OK(hg_graph_reduce(g, op, t, 0, NULL, 0, &y));
    CHECK_OK(hg_graph_output(g, y));
    hg_plan pf, pu;
    hg_compile_opts on = {1, 1, 1, 0}, off = {1, 1, 0, 0};
    CHECK_OK(hg_graph_compile_opts(g, g_ex, &on, &pf));
    CHECK_OK(hg_graph_compile_opts(g, g_ex, &off, &pu));
    hg_plan_info info;
    CHECK_OK(hg_plan_info_get(pf, &info));
    int64_t n = numel(nd, shape);
    int fusable = dt != HG_DTYPE_BOOL;
    CHECK_MSG(!fusable || (info.kernels == 1 && info.library_calls == 0 && info.peak_bytes == 0),
              "%s %s: %d kernels %d calls", hg_reduce_op_name(op), hg_dtype_name(dt), (int)info.kernels,
              (int)info.library_calls);
    char* text;
    CHECK_OK(hg_plan_print(pf, &text));
    CHECK(!fusable || strstr(text, "kernel+reduce") != NULL);
    hg_free(text);
    size_t es = hg_dtype_size(dt);
    unsigned char* host = malloc((size_t)(2 * n + 1) * es);
    fill_random(dt, host, 2 * n + 1);
    // Mostly finite values: turn NaN/inf into small numbers except in the NaN case below.
    for (int64_t i = 0; i < 2 * n + 1 && dt >= HG_DTYPE_F16; i++) {
        double v = hg_op_load_f64(dt, host + i * es);
        if (!isfinite(v) || fabs(v) > 1e4) hg_convert_from_double(dt, (double)(i % 13) - 6, host + i * es);
    }
    hg_buffer ba, bb;
    CHECK_OK(hg_buffer_create(g_ex, dt, (size_t)(2 * n + 1), &ba));
    CHECK_OK(hg_buffer_write(ba, 0, host, (size_t)(2 * n + 1)));
    CHECK_OK(hg_buffer_create(g_ex, dt, 1, &bb));
    unsigned char bval[8];
    hg_convert_from_double(dt, dt == HG_DTYPE_BOOL ? 1.0 : -1.5, bval);
    CHECK_OK(hg_buffer_write(bb, 0, bval, 1));
    hg_tensor ta, tb;
    int64_t st[HG_MAX_DIMS];
    for (int32_t d = nd - 1, m = strided ? 2 : 1; d >= 0; d--) { st[d] = m; m *= (int)shape[d]; }
    CHECK_OK(hg_tensor_view(ba, nd, shape, st, 0, &ta));
    CHECK_OK(hg_tensor_view(bb, 0, NULL, NULL, 0, &tb));
    hg_dtype rt;
    int32_t rnd_;
    int64_t rsh[HG_MAX_DIMS];
    CHECK_OK(hg_graph_node_info(g, y, &rt, &rnd_, rsh));
    hg_buffer bf, bu;
    hg_tensor tf, tu;
    CHECK_OK(hg_buffer_create(g_ex, rt, 1, &bf));
    CHECK_OK(hg_buffer_create(g_ex, rt, 1, &bu));
    CHECK_OK(hg_tensor_from_buffer(bf, 0, NULL, &tf));
    CHECK_OK(hg_tensor_from_buffer(bu, 0, NULL, &tu));
    int64_t fallbacks = hg_graph_reduce_fallbacks;
    hg_status s = hg_plan_run(pf, 2, (hg_tensor[]){ta, tb}, 1, &tf);
    CHECK_MSG(s == HG_OK, "%s", hg_last_error());
    // Contiguous inputs run the fused kernel; strided ones the fallback.
    CHECK(!fusable || hg_graph_reduce_fallbacks - fallbacks == (strided && n > 1 ? 1 : 0));
    CHECK_OK(hg_plan_run(pu, 2, (hg_tensor[]){ta, tb}, 1, &tu));
    unsigned char fv[8], uv[8];
    CHECK_OK(hg_buffer_read(bf, 0, fv, 1));
    CHECK_OK(hg_buffer_read(bu, 0, uv, 1));
    double got = hg_op_load_f64(rt, fv), unf = hg_op_load_f64(rt, uv);
    // Reference: the elementwise chain in the unfused plan's exact values, reduced in double.
    hg_graph g2;
    int32_t a2, b2, t2;
    CHECK_OK(hg_graph_create(&g2));
    CHECK_OK(hg_graph_input(g2, dt, nd, shape, &a2));
    CHECK_OK(hg_graph_input(g2, dt, 0, NULL, &b2));
    CHECK_OK(hg_graph_binary(g2, HG_BINARY_MUL, a2, b2, &t2));
    CHECK_OK(hg_graph_binary_scalar(g2, HG_BINARY_ADD, t2, hg_scalar_i(1), 0, &t2));
    CHECK_OK(hg_graph_unary(g2, HG_UNARY_ABS, t2, &t2));
    CHECK_OK(hg_graph_output(g2, t2));
    hg_plan pe;
    CHECK_OK(hg_graph_compile(g2, g_ex, &pe));
    hg_dtype edt;
    int32_t end;
    int64_t esh[HG_MAX_DIMS];
    CHECK_OK(hg_graph_node_info(g2, t2, &edt, &end, esh));
    hg_buffer be;
    hg_tensor te;
    CHECK_OK(hg_buffer_create(g_ex, edt, (size_t)n, &be));
    CHECK_OK(hg_tensor_from_buffer(be, nd, shape, &te));
    CHECK_OK(hg_plan_run(pe, 2, (hg_tensor[]){ta, tb}, 1, &te));
    unsigned char* ev = malloc((size_t)n * hg_dtype_size(edt) + 1);
    CHECK_OK(hg_buffer_read(be, 0, ev, (size_t)n));
    double acc = op == HG_REDUCE_MIN ? INFINITY : op == HG_REDUCE_MAX ? -INFINITY : 0, mag = 0;
    uint64_t iacc = 0;   // wraps like the result dtype
    for (int64_t i = 0; i < n; i++) {
        double v = hg_op_load_f64(edt, ev + i * hg_dtype_size(edt));
        mag += fabs(v);
        if (op == HG_REDUCE_SUM || op == HG_REDUCE_MEAN) { acc += v; if (edt < HG_DTYPE_F16) iacc += (uint64_t)hg_op_load_i64(edt, ev + i * hg_dtype_size(edt)); }
        else if (isnan(v) || isnan(acc)) acc = NAN;
        else acc = op == HG_REDUCE_MIN ? fmin(acc, v) : fmax(acc, v);
    }
    if (op == HG_REDUCE_MEAN) acc = n ? acc / (double)n : NAN;
    double tol = (op == HG_REDUCE_SUM || op == HG_REDUCE_MEAN) && hg_dtype_is_float ((int)rt)
                     ? (rt == HG_DTYPE_F16 ? 1e-3 : rt == HG_DTYPE_BF16 ? 8e-3 : rt == HG_DTYPE_F32 ? 2e-7 : 1e-15) * (fabs(acc) + mag / (n ? (double)n : 1.0))
                     : 0;
    if (op == HG_REDUCE_SUM && !hg_dtype_is_float((int)rt)) acc = rt == HG_DTYPE_U64 ? (double)iacc : (double)(int64_t)iacc;
    int ok = isnan(acc) ? isnan(got) : fabs(got - acc) <= tol;
    CHECK_MSG(ok, "fused %s of %s (n=%lld%s): got %.17g want %.17g", hg_reduce_op_name(op),
              hg_dtype_name(dt), (long long)n, strided ? ", strided" : "", got, acc);
    int uok = isnan(acc) ? isnan(unf) : fabs(unf - acc) <= (tol ? 4 * tol : 0);
    CHECK_MSG(uok, "unfused %s of %s: got %.17g want %.17g", hg_reduce_op_name(op), hg_dtype_name(dt), unf, acc);
    // Deterministic: the same bits again.
    unsigned char fv2[8];
    CHECK_OK(hg_plan_run(pf, 2, (hg_tensor[]){ta, tb}, 1, &tf));
    CHECK_OK(hg_buffer_read(bf, 0, fv2, 1));
    CHECK(memcmp(fv, fv2, hg_dtype_size(rt)) == 0);
    free(ev);
    free(host);
    hg_buffer_destroy(ba); hg_buffer_destroy(bb); hg_buffer_destroy(bf); hg_buffer_destroy(bu);
    hg_buffer_destroy(be);
    CHECK_OK(hg_plan_destroy(pe));
    CHECK_OK(hg_graph_destroy(g2));
    CHECK_OK(hg_plan_destroy(pf));
    CHECK_OK(hg_plan_destroy(pu));
    CHECK_OK(hg_graph_destroy(g));
}

static void test_reduce_nan_and_empty(void) {
    // max of a chain with a NaN: NaN; sum and mean of an empty chain: 0 and NaN.
    for (int c = 0; c < 3; c++) {
        int64_t n = c == 0 ? 1000 : 0;
        hg_reduce_op op = c == 0 ? HG_REDUCE_MAX : c == 1 ? HG_REDUCE_SUM : HG_REDUCE_MEAN;
        hg_graph g;
        int32_t a, t, y;
        CHECK_OK(hg_graph_create(&g));
        CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &a));
        CHECK_OK(hg_graph_unary(g, HG_UNARY_EXP, a, &t));
        CHECK_OK(hg_graph_reduce(g, op, t, 1, (int32_t[]){0}, 1, &y));   // keepdims: (1,)
        CHECK_OK(hg_graph_output(g, y));
        hg_plan p;
        CHECK_OK(hg_graph_compile(g, g_ex, &p));
        hg_plan_info info;
        CHECK_OK(hg_plan_info_get(p, &info));
        CHECK(info.kernels == 1 && info.library_calls == 0);
        float* av = calloc((size_t)n + 1, 4);
        if (n) av[517] = NAN;
        hg_buffer ba, by;
        hg_tensor ta, ty;
        CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)n, &ba));
        CHECK_OK(hg_buffer_write(ba, 0, av, (size_t)n));
        CHECK_OK(hg_tensor_from_buffer(ba, 1, (int64_t[]){n}, &ta));
        CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 1, &by));
        CHECK_OK(hg_tensor_from_buffer(by, 1, (int64_t[]){1}, &ty));
        CHECK_OK(hg_plan_run(p, 1, &ta, 1, &ty));
        float v = 7;
        CHECK_OK(hg_buffer_read(by, 0, &v, 1));
        CHECK_MSG(c == 1 ? v == 0.0f : isnan(v), "case %d: %g", c, v);
        free(av);
        hg_buffer_destroy(ba); hg_buffer_destroy(by);
        CHECK_OK(hg_plan_destroy(p));
        CHECK_OK(hg_graph_destroy(g));
    }
}

int main(void) {
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_ex));
    test_random_graphs(400);
    static const int64_t s1[] = {1000}, s2[] = {37, 53}, s3[] = {1}, s4[] = {300001};
    static const hg_reduce_op ops[] = {HG_REDUCE_SUM, HG_REDUCE_MEAN, HG_REDUCE_MIN, HG_REDUCE_MAX};
    static const hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16,
                                   HG_DTYPE_I32, HG_DTYPE_U8, HG_DTYPE_I64, HG_DTYPE_BOOL};
    for (int o = 0; o < 4; o++)
        for (int d = 0; d < 8; d++) {
            test_fused_reduce(ops[o], dts[d], 1, s1, 0);
            test_fused_reduce(ops[o], dts[d], 2, s2, d % 2);
            test_fused_reduce(ops[o], dts[d], 1, s3, 0);
        }
    test_fused_reduce(HG_REDUCE_SUM, HG_DTYPE_F32, 1, s4, 0);
    test_fused_reduce(HG_REDUCE_MEAN, HG_DTYPE_F32, 1, s4, 1);
    test_reduce_nan_and_empty();
    CHECK_OK(hg_executor_destroy(g_ex));
    return hg_test_finish("test_graph_random");
}
