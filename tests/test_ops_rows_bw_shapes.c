// The row gradients and cross-entropy over the row lengths where the device row kernels change
// shape (src/ops/rows/dev_rows_reg_bw.c: a warp per row up to 512 or 1024 elements, a block of
// 64 to 1024 lanes above, the composed or generic forms beyond 32768):
// softmax_backward, log_softmax_backward, layer_norm_backward (grad_x; grad_weight and
// grad_bias with grad_x written over grad), rms_norm_backward, cross_entropy (class indices,
// some ignored; reductions none, sum and mean) and cross_entropy_backward, at odd row counts,
// rows at a stride, every float dtype, special logits, against a double-precision reference:
// NMSE per dtype, NaN exactly where the reference has one, infinities of the same sign. Runs on
// HG_TEST_BACKEND (the CUDA emulation in tests/cuda_emu.cmake), else on CPU executors.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "test_ops_rows_util.h"

static hg_executor g_ex;
static uint64_t g_rng = 0x5eed31ull;

enum { OP_SMB, OP_LSMB, OP_LNB, OP_RMSB, OP_CE, OP_CEB, OP_COUNT };
static const char* const k_op_names[OP_COUNT] = {
    "softmax_backward", "log_softmax_backward", "layer_norm_backward", "rms_norm_backward",
    "cross_entropy", "cross_entropy_backward"};
#define EPS 1e-5
#define IGN (-100)

static double urand(double lo, double hi) {
    return lo + (hi - lo) * (double)(hg_test_rand(&g_rng) >> 11) * 0x1p-53;
}

typedef struct bw_case {
    int op;
    hg_dtype dt;
    int64_t M, R, rs;   // rows, row length, row stride of the inputs
    hg_reduction red;   // cross-entropy
    int specials;       // NaN / +-inf logits (cross-entropy)
    double shift;       // added to x (the norms)
    int inplace;        // layer_norm_backward: grad_x over grad, with grad_weight and grad_bias
} bw_case;

// The reference: out (M x R, or the loss: M values or 1) and, for inplace, gw and gb (R each).
// The norms also give mag: the size of grad_x's terms (rstd g w), the error's scale where they
// cancel (rows of 1 or 2 elements, where grad_x is ~0 by construction).
static void reference(const bw_case* k, const double* x, const double* g, const double* w,
                      const int64_t* t, const double* gs, double* out, double* gw, double* gb,
                      double* mag) {
    int64_t M = k->M, R = k->R, cnt = 0;
    double total = 0;
    for (int64_t r = 0; r < M; r++) cnt += t && t[r] != IGN;
    for (int64_t j = 0; gw && j < R; j++) gw[j] = gb[j] = 0;
    for (int64_t r = 0; r < M; r++) {
        const double* xr = x + r * k->rs;
        const double* gr = g ? g + r * k->rs : NULL;
        double* o = out + r * R;
        if (k->op == OP_SMB || k->op == OP_LSMB) {
            rows_ref_softmax_bw(xr, gr, R, k->op == OP_LSMB, o);
        } else if (k->op == OP_LNB || k->op == OP_RMSB) {
            rows_ref_norm_bw(xr, gr, w, R, k->op == OP_RMSB, EPS, o, mag + r * R, gw, gb);
        } else {
            double m = -INFINITY, z = 0;
            for (int64_t j = 0; j < R; j++) m = xr[j] > m || isnan(xr[j]) ? xr[j] : m;
            for (int64_t j = 0; j < R; j++) z += exp(xr[j] - m);
            if (k->op == OP_CE) {
                double l = t[r] == IGN ? 0 : (m - xr[t[r]]) + log(z);
                if (k->red == HG_REDUCTION_NONE) out[r] = l;
                total += l;
            } else {
                double sc = k->red == HG_REDUCTION_NONE ? gs[r]
                            : k->red == HG_REDUCTION_SUM ? gs[0] : gs[0] / (double)cnt;
                if (t[r] == IGN) sc = 0;
                for (int64_t j = 0; j < R; j++) o[j] = (exp(xr[j] - m) / z - (j == t[r])) * sc;
            }
        }
    }
    if (k->op == OP_CE && k->red != HG_REDUCTION_NONE)
        out[0] = k->red == HG_REDUCTION_SUM ? total : total / (double)cnt;
}

// got (n values of dt in h) against want: NaN where want has one, equal infinities, NMSE
// (relative to mag where it is larger, when given).
static void compare(const char* what, const unsigned char* h, hg_dtype dt, const double* want,
                    const double* mag, int64_t n) {
    size_t es = hg_dtype_size(dt);
    double num = 0, den = 0;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double wv = rows_round_to(dt, want[i]), got = rows_get(h + (size_t)i * es, dt);
        if (isnan(wv) || isinf(wv) || isnan(got) || isinf(got)) {
            int ok = isnan(wv) ? isnan(got) : got == wv;
            if (!ok && bad++ < 3)
                fprintf(stderr, "  %s: [%lld] got %g want %g\n", what, (long long)i, got, wv);
            continue;
        }
        num += (got - wv) * (got - wv);
        den += mag && mag[i] > fabs(wv) ? mag[i] * mag[i] : wv * wv;
    }
    double nmse = den > 0 ? num / den : num;
    CHECK_MSG(bad == 0 && nmse <= rows_nmse_limit(dt),
              "%s: %lld special-value mismatches, NMSE %.3g (limit %.3g)", what, (long long)bad,
              nmse, rows_nmse_limit(dt));
}

static void run_case(const bw_case* k) {
    const hg_dtype dt = k->dt;
    int64_t M = k->M, R = k->R, nx = M * k->rs, nx1 = nx ? nx : 1;
    int ce = k->op >= OP_CE;
    double* xv = malloc((size_t)nx1 * sizeof *xv);
    double* gv = malloc((size_t)nx1 * sizeof *gv);
    double* wv = malloc((size_t)R * sizeof *wv);
    int64_t* tv = malloc((size_t)(M ? M : 1) * sizeof *tv);
    double* tdv = malloc((size_t)(M ? M : 1) * sizeof *tdv);
    double* gs = malloc((size_t)(M ? M : 1) * sizeof *gs);
    for (int64_t i = 0; i < nx; i++) {
        double lo = k->op == OP_SMB ? 0 : k->op == OP_LSMB ? -6 : ce ? -5 : -3;
        double hi = k->op == OP_SMB ? 1 : k->op == OP_LSMB ? 0 : 5;
        xv[i] = rows_round_to(dt, k->shift + urand(lo, hi));
        gv[i] = rows_round_to(dt, urand(-1, 1));
    }
    for (int64_t j = 0; j < R; j++) wv[j] = rows_round_to(dt, urand(0.5, 2));
    for (int64_t r = 0; r < M; r++) {
        tv[r] = r % 4 == 2 ? IGN : (int64_t)((uint64_t)hg_test_rand(&g_rng) % (uint64_t)R);
        if (r == 1) tv[r] = R - 1;
        // cross_entropy_backward also takes -C..-1 (the class t + C), as its composed form
        int neg = k->op == OP_CEB && r % 8 == 5 && tv[r] != IGN;
        tdv[r] = (double)(neg ? tv[r] - R : tv[r]);
        gs[r] = rows_round_to(dt, urand(0.5, 2));
        if (k->specials && tv[r] != IGN) {   // rows 0, 3: NaN; 4: +inf; 5: -inf off target
            int64_t off = (tv[r] + 1) % R;
            if (r % 6 == 0 || r % 6 == 3) xv[r * k->rs + off] = NAN;
            if (r % 6 == 4) xv[r * k->rs + off] = INFINITY;
            if (r % 6 == 5 && off != tv[r]) xv[r * k->rs + off] = -INFINITY;
        }
    }
    int64_t nout = k->op == OP_CE ? (k->red == HG_REDUCTION_NONE ? M : 1) : M * R;
    double* want = malloc((size_t)(nout ? nout : 1) * sizeof *want);
    double* gw = k->inplace ? malloc((size_t)R * sizeof *gw) : NULL;
    double* gb = k->inplace ? malloc((size_t)R * sizeof *gb) : NULL;
    int norm = k->op == OP_LNB || k->op == OP_RMSB;
    double* mag = norm ? malloc((size_t)(nout ? nout : 1) * sizeof *mag) : NULL;
    reference(k, xv, ce ? NULL : gv, wv, ce ? tv : NULL, gs, want, gw, gb, mag);

    hg_buffer bx = rows_make_buf(g_ex, dt, nx1, xv), bg = rows_make_buf(g_ex, dt, nx1, gv);
    hg_buffer bw = rows_make_buf(g_ex, dt, R, wv);
    hg_buffer bt = rows_make_buf(g_ex, HG_DTYPE_I64, M ? M : 1, tdv);
    hg_buffer bs = rows_make_buf(g_ex, dt, M ? M : 1, gs);
    hg_buffer bo = rows_make_buf(g_ex, dt, nout ? nout : 1, NULL);
    hg_tensor x, g, w, t, gsc, o, tgw = {0}, tgb = {0};
    int64_t shape[2] = {M, R}, strides[2] = {k->rs, 1};
    CHECK_OK(hg_tensor_view(bx, 2, shape, strides, 0, &x));
    CHECK_OK(hg_tensor_view(bg, 2, shape, strides, 0, &g));
    CHECK_OK(hg_tensor_from_buffer(bw, 1, &R, &w));
    CHECK_OK(hg_tensor_from_buffer(bt, 1, &M, &t));
    int per_sample = k->red == HG_REDUCTION_NONE;
    CHECK_OK(hg_tensor_view(bs, per_sample ? 1 : 0, &M, NULL, 0, &gsc));
    if (k->op == OP_CE) CHECK_OK(hg_tensor_view(bo, per_sample ? 1 : 0, &M, NULL, 0, &o));
    else CHECK_OK(hg_tensor_view(bo, 2, shape, NULL, 0, &o));
    hg_status s;
    switch (k->op) {
    case OP_SMB: s = hg_softmax_backward(&g, &x, -1, &o); break;
    case OP_LSMB: s = hg_log_softmax_backward(&g, &x, -1, &o); break;
    case OP_LNB:
        if (k->inplace) s = hg_layer_norm_backward(&g, &x, 1, &w, EPS, &g, &tgw, &tgb);
        else s = hg_layer_norm_backward(&g, &x, 1, &w, EPS, &o, NULL, NULL);
        break;
    case OP_RMSB: s = hg_rms_norm_backward(&g, &x, 1, &w, EPS, &o, NULL); break;
    case OP_CE: s = hg_cross_entropy(&x, &t, IGN, k->red, &o); break;
    default: s = hg_cross_entropy_backward(&gsc, &x, &t, IGN, k->red, &o); break;
    }
    char what[200];
    snprintf(what, sizeof what, "%s %s %lldx%lld (row stride %lld%s%s, reduction %d, shift %g)",
             k_op_names[k->op], hg_dtype_name(dt), (long long)M, (long long)R, (long long)k->rs,
             k->specials ? ", specials" : "", k->inplace ? ", grad_x over grad" : "",
             (int)k->red, k->shift);
    CHECK_MSG(s == HG_OK, "%s: %s", what, hg_last_error());
    if (s == HG_OK) {
        size_t es = hg_dtype_size(dt);
        unsigned char* h = malloc((size_t)(nx1 > nout ? nx1 : nout) * es + 1);
        if (k->inplace) {   // grad_x in g's buffer (contiguous rows: rs == R)
            CHECK_OK(hg_buffer_read(bg, 0, h, (size_t)(M * R)));
            compare(what, h, dt, want, mag, M * R);
            char w2[240];
            snprintf(w2, sizeof w2, "%s grad_weight", what);
            CHECK_OK(hg_buffer_read(tgw.buffer, 0, h, (size_t)R));
            compare(w2, h, dt, gw, NULL, R);
            snprintf(w2, sizeof w2, "%s grad_bias", what);
            CHECK_OK(hg_buffer_read(tgb.buffer, 0, h, (size_t)R));
            compare(w2, h, dt, gb, NULL, R);
            hg_buffer_destroy(tgw.buffer);
            hg_buffer_destroy(tgb.buffer);
        } else {
            CHECK_OK(hg_buffer_read(bo, 0, h, (size_t)nout));
            compare(what, h, dt, want, mag, nout);
        }
        free(h);
    }
    hg_buffer bufs[6] = {bx, bg, bw, bt, bs, bo};
    for (int i = 0; i < 6; i++) hg_buffer_destroy(bufs[i]);
    free(xv), free(gv), free(wv), free(tv), free(tdv), free(gs), free(want), free(gw), free(gb);
    free(mag);
}

static void run(int on_device) {
    // Row lengths at every kernel shape's edges: a warp per row with 1..32 elements per lane
    // (up to 512 for the kernels holding two rows, grad and x/y: 16 per lane), blocks of 64 to
    // 1024 lanes above, the composed or generic forms beyond 32768.
    static const int64_t rows[][2] = {
        {3, 1}, {5, 2}, {7, 3}, {33, 31}, {9, 32}, {9, 33}, {17, 64}, {5, 100}, {3, 255},
        {3, 512}, {3, 513}, {3, 1023}, {3, 1024}, {3, 1025}, {2, 2048}, {3, 4096}, {2, 4097},
        {1, 16384}, {1, 16385}, {1, 32768}, {1, 32769}};
    const size_t nr = sizeof rows / sizeof rows[0];
    static const hg_dtype dts[] = {HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    for (int op = 0; op < OP_COUNT; op++) {
        bw_case k = {op, HG_DTYPE_F32, 0, 0, 0, HG_REDUCTION_NONE, 0, 0.0, 0};
        for (size_t i = 0; i < nr; i++) {
            k.M = rows[i][0], k.R = rows[i][1], k.rs = k.R;
            run_case(&k);
        }
        // rows at a stride (125 blocks of 8 rows); a large common offset for the norms
        k.M = 1000, k.R = 20, k.rs = 27;
        run_case(&k);
        k.M = 5, k.R = 1500, k.rs = 1501;
        run_case(&k);
        k.M = 11, k.R = 300, k.rs = 300, k.shift = op == OP_LNB ? 1e4 : 0;
        run_case(&k);
        k.M = 11, k.R = 2000, k.rs = 2000;
        run_case(&k);
        k.shift = 0;
        for (size_t d = 0; d < 3; d++) {
            k.dt = dts[d];
            k.M = 7, k.R = 33, k.rs = 33;
            run_case(&k);
            k.M = 3, k.R = 1025, k.rs = 1025;
            run_case(&k);
        }
        k.dt = HG_DTYPE_F32;
        if (op >= OP_CE) {   // the reductions, and special logits
            for (int red = HG_REDUCTION_MEAN; red <= HG_REDUCTION_SUM; red++) {
                k.red = (hg_reduction)red;
                k.M = 33, k.R = 31, k.rs = 31;
                run_case(&k);
                k.M = 3, k.R = 1030, k.rs = 1030;
                run_case(&k);
            }
            k.red = HG_REDUCTION_NONE, k.specials = 1;
            k.M = 12, k.R = 33, k.rs = 33;
            run_case(&k);
            k.M = 6, k.R = 1030, k.rs = 1030;
            run_case(&k);
            k.specials = 0;
        }
        if (op == OP_LNB) {
            k.inplace = 1;
            k.M = 9, k.R = 33, k.rs = 33;
            run_case(&k);
            k.M = 3, k.R = 1025, k.rs = 1025;
            run_case(&k);
        }
    }
    printf("  row gradients: %s done\n", on_device ? "device" : "cpu");
}

int main(void) { return hg_test_run_executors("test_ops_rows_bw_shapes", &g_ex, run); }
