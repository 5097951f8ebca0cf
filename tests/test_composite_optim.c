// hg_adam_step as a composite op (src/composite/optim_api.c, decomp_optim.c): its override (the
// fused host pass over C-contiguous f32/f64, ops/optim/adam.c) against its decomposition
// (HOLOGRAM_COMPOSITE=decomp through hg_cop_mode_set) bit for bit, and both against float64
// (torch's per-tensor Adam), for each option set (Adam, L2 weight decay, AdamW, amsgrad,
// maximize, beta1 below and above 1/2), every float dtype, contiguous and strided tensors, and
// sizes of 1 element to a threaded pass; the cache counters say which path ran. Runs on
// HG_TEST_BACKEND (the CUDA emulation in tests/cuda_emu.cmake: the decomposition), else on CPU
// executors. The multi-step and error cases are tests/test_optim.c's.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "composite/composite.h"
#include "hg_test.h"
#include "test_optim_ref.h"
#include "test_ops_rows_util.h"

static hg_executor g_ex;
static int g_device;
static uint64_t g_rng = 0xada33ull;

static double urand(double lo, double hi) {
    return lo + (hi - lo) * (double)(hg_test_rand(&g_rng) >> 11) * 0x1p-53;
}

// n values as stored in dt, in a tensor of n elements: C-contiguous, or every other element of
// a buffer twice as long (no override takes it).
typedef struct vec {
    hg_buffer buf;
    hg_tensor t;
} vec;

static vec vec_make(hg_dtype dt, int64_t n, int strided, const double* v) {
    vec x;
    int64_t cap = strided ? 2 * n : n, st = strided ? 2 : 1;
    double* raw = malloc((size_t)cap * sizeof *raw);
    for (int64_t i = 0; i < cap; i++) raw[i] = strided && i % 2 ? 7.0 : v[i / st];
    x.buf = rows_make_buf(g_ex, dt, cap, raw);
    CHECK_OK(hg_tensor_view(x.buf, 1, &n, &st, 0, &x.t));
    free(raw);
    return x;
}

static void vec_read(const vec* x, int64_t n, double* v) {
    size_t es = hg_dtype_size(x->t.dtype);
    int64_t st = x->t.strides[0], cap = n * st;
    unsigned char* h = malloc((size_t)cap * es);
    CHECK_OK(hg_buffer_read(x->buf, 0, h, (size_t)cap));
    for (int64_t i = 0; i < n; i++) v[i] = rows_get(h + (size_t)(i * st) * es, x->t.dtype);
    free(h);
}

// NMSE relative to the size of each result's terms (mag: a sum that cancels, as m's lerp can,
// is judged on its terms).
static double nmse(const double* got, const double* want, const double* mag, int64_t n,
                   hg_dtype dt) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double w = rows_round_to(dt, want[i]);
        num += (got[i] - w) * (got[i] - w);
        den += mag[i] * mag[i];
    }
    return den > 0 ? num / den : num;
}

// f16/bf16 round every step to the tensors' dtype (as torch's per-tensor ops do): a few
// roundings per result, not one.
static double nmse_limit(hg_dtype dt) {
    return rows_nmse_limit(dt) * (dt == HG_DTYPE_F16 || dt == HG_DTYPE_BF16 ? 10 : 1);
}

static const char* const k_name[4] = {"param", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};

static void run_case(const char* label, hg_adam_options o, hg_dtype dt, int64_t n, int strided) {
    if (dt == HG_DTYPE_F16) o.eps = 1e-4;   // 1e-8 is 0 in f16 (torch's f16 users raise it)
    int nt = o.amsgrad ? 4 : 3;
    double* init[5];
    for (int k = 0; k < 5; k++) init[k] = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        init[0][i] = rows_round_to(dt, urand(-2, 2));
        init[1][i] = rows_round_to(dt, urand(-0.1, 0.1));
        init[2][i] = rows_round_to(dt, urand(0, 0.01));
        init[3][i] = rows_round_to(dt, init[2][i] + urand(0, 0.01));
        init[4][i] = rows_round_to(dt, (urand(0, 1) < 0.5 ? -1 : 1) * urand(0.3, 1));   // grad
    }
    // the float64 reference from the stored values
    double *want[4], *mag[4];
    for (int k = 0; k < 4; k++) {
        want[k] = malloc((size_t)n * sizeof(double));
        mag[k] = malloc((size_t)n * sizeof(double));
    }
    for (int64_t i = 0; i < n; i++) {
        double p = init[0][i], m = init[1][i], v = init[2][i], x = init[3][i], g = init[4][i];
        adam_ref_step(&o, &p, g, &m, &v, &x);
        want[0][i] = p, want[1][i] = m, want[2][i] = v, want[3][i] = x;
        double ge = fabs(g) + o.weight_decay * fabs(init[0][i]);
        mag[0][i] = fabs(init[0][i]) + fabs(p - init[0][i]);
        mag[1][i] = fabs(init[1][i]) + ge;
        mag[2][i] = v;
        mag[3][i] = x;
    }
    char what[160];
    snprintf(what, sizeof what, "%s %s n %lld %s", label, hg_dtype_name(dt), (long long)n,
             strided ? "strided" : "contiguous");
    // the override: a host, f32/f64, contiguous (one element always is)
    int over = !g_device && (!strided || n == 1) && (dt == HG_DTYPE_F32 || dt == HG_DTYPE_F64);
    double* got[2][4];
    for (int mode = 0; mode < 2; mode++) {
        hg_cop_mode_set(mode ? HG_COP_DECOMP : HG_COP_AUTO);
        vec t[5];   // p, m, v, vmax, grad
        for (int k = 0; k < 5; k++) t[k] = vec_make(dt, n, strided, init[k]);
        int64_t p0, h0, c0, p1, h1, c1;
        hg_cop_cache_stats(g_ex, &p0, &h0, &c0);
        hg_status s = hg_adam_step(&o, &t[0].t, &t[4].t, &t[1].t, &t[2].t,
                                   o.amsgrad ? &t[3].t : NULL);
        CHECK_MSG(s == HG_OK, "%s mode %d: %s", what, mode, hg_last_error());
        hg_cop_cache_stats(g_ex, &p1, &h1, &c1);
        int ran_decomp = h1 + c1 > h0 + c0;
        CHECK_MSG(ran_decomp == (mode == 1 || !over), "%s mode %d: the decomposition %s", what,
                  mode, ran_decomp ? "ran (the override should have)" : "did not run");
        for (int k = 0; k < 4; k++) {
            got[mode][k] = malloc((size_t)n * sizeof(double));
            vec_read(&t[k], n, got[mode][k]);
        }
        for (int k = 0; k < nt; k++) {
            double e = nmse(got[mode][k], want[k], mag[k], n, dt);
            CHECK_MSG(e <= nmse_limit(dt), "%s mode %d: %s NMSE %.3g (limit %.3g)", what, mode,
                      k_name[k], e, nmse_limit(dt));
        }
        if (strided) {   // the elements between the view's are untouched
            double* raw = malloc((size_t)(2 * n) * sizeof *raw);
            vec u = t[0];
            u.t.strides[0] = 1, u.t.shape[0] = 2 * n;
            vec_read(&u, 2 * n, raw);
            for (int64_t i = 1; i < 2 * n; i += 2)
                CHECK_MSG(raw[i] == 7.0, "%s mode %d: param's buffer[%lld] written", what, mode,
                          (long long)i);
            free(raw);
        }
        for (int k = 0; k < 5; k++) hg_buffer_destroy(t[k].buf);
    }
    hg_cop_mode_set(HG_COP_AUTO);
    for (int k = 0; k < 4; k++) {   // the override is the decomposition's steps exactly
        CHECK_MSG(memcmp(got[0][k], got[1][k], (size_t)n * sizeof(double)) == 0,
                  "%s: %s differs between the override and the decomposition", what, k_name[k]);
        free(got[0][k]);
        free(got[1][k]);
        free(want[k]);
        free(mag[k]);
    }
    for (int k = 0; k < 5; k++) free(init[k]);
}

static void run(int on_device) {
    g_device = on_device;
    static const struct { const char* label; hg_adam_options o; } opts[] = {
        {"adam", {1e-3, 0.9, 0.999, 1e-8, 0, 3, 0, 0, 0}},
        {"adam wd", {1e-2, 0.9, 0.999, 1e-8, 0.05, 2, 0, 0, 0}},
        {"adamw", {3e-2, 0.9, 0.99, 1e-8, 0.1, 1, 1, 0, 0}},
        {"adam amsgrad maximize", {1e-2, 0.9, 0.999, 1e-6, 0, 5, 0, 1, 1}},
        {"adamw amsgrad beta1 0.3", {1e-3, 0.3, 0.999, 1e-8, 0.01, 4, 1, 1, 0}},
    };
    static const hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    static const int64_t sizes[] = {1, 77, 4099, 70001};   // 70001: the threaded pass
    for (size_t q = 0; q < sizeof opts / sizeof opts[0]; q++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                for (int strided = 0; strided < 2; strided++)
                    if (!g_device || (sizes[s] == 77 && (q == 0 || q == 4)))   // slow emulation
                        run_case(opts[q].label, opts[q].o, dts[d], sizes[s], strided);
}

int main(void) { return hg_test_run_executors("test_composite_optim", &g_ex, run); }
