// hg_adam_step against an independent float64 implementation of torch.optim.Adam's per-tensor
// update (test_optim_ref.h, written out from torch's documented algorithm): several steps with
// fresh gradients, Adam with L2 weight decay, AdamW, amsgrad, maximize; f64 and f32 on the
// one-pass kernel (contiguous, threaded sizes), transposed views and f16/bf16 on the op's
// decomposition, and every error path (status, message, nothing written).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "test_optim_ref.h"
#include "base/dtype.h"

static hg_executor EX;
static uint64_t rng = 0x2545f4914f6cdd1dull;

static double urand(double lo, double hi) {
    return lo + (hi - lo) * (double)(hg_test_rand(&rng) >> 11) * 0x1p-53;
}

static double as_dt(hg_dtype dt, double v) {
    switch (dt) {
    case HG_DTYPE_F16: return hg_f16_to_f32(hg_f32_to_f16((float)v));
    case HG_DTYPE_BF16: return hg_bf16_to_f32(hg_f32_to_bf16((float)v));
    case HG_DTYPE_F32: return (float)v;
    default: return v;
    }
}

// Host values <-> a buffer of dtype dt.
static void upload(hg_buffer b, hg_dtype dt, const double* v, int64_t n) {
    size_t sz = hg_dtype_size(dt);
    unsigned char* h = malloc((size_t)(n ? n : 1) * sz);
    for (int64_t i = 0; i < n; i++) {
        if (dt == HG_DTYPE_F64) ((double*)h)[i] = v[i];
        else if (dt == HG_DTYPE_F32) ((float*)h)[i] = (float)v[i];
        else if (dt == HG_DTYPE_F16) ((uint16_t*)h)[i] = hg_f32_to_f16((float)v[i]);
        else if (dt == HG_DTYPE_BF16) ((uint16_t*)h)[i] = hg_f32_to_bf16((float)v[i]);
        else ((int32_t*)h)[i] = (int32_t)v[i];
    }
    if (n) CHECK_OK(hg_buffer_write(b, 0, h, (size_t)n));
    free(h);
}
static void download(hg_buffer b, hg_dtype dt, double* v, int64_t n) {
    size_t sz = hg_dtype_size(dt);
    unsigned char* h = malloc((size_t)(n ? n : 1) * sz);
    if (n) CHECK_OK(hg_buffer_read(b, 0, h, (size_t)n));
    for (int64_t i = 0; i < n; i++) {
        if (dt == HG_DTYPE_F64) v[i] = ((double*)h)[i];
        else if (dt == HG_DTYPE_F32) v[i] = ((float*)h)[i];
        else if (dt == HG_DTYPE_F16) v[i] = hg_f16_to_f32(((uint16_t*)h)[i]);
        else if (dt == HG_DTYPE_BF16) v[i] = hg_bf16_to_f32(((uint16_t*)h)[i]);
        else v[i] = ((int32_t*)h)[i];
    }
    free(h);
}

// A tensor over n values: (rows, cols) C-contiguous, or (with transposed) a (rows, cols) view
// of a (cols, rows) buffer; element (r, c) is v[r * cols + c] either way.
typedef struct tens {
    hg_tensor t;
    hg_dtype dt;
    int64_t rows, cols;
    int transposed;
} tens;

static void put_all(tens* x, const double* v) {
    int64_t n = x->rows * x->cols;
    double* b = malloc((size_t)(n ? n : 1) * sizeof *b);
    for (int64_t r = 0; r < x->rows; r++)
        for (int64_t c = 0; c < x->cols; c++)
            b[x->transposed ? c * x->rows + r : r * x->cols + c] = v[r * x->cols + c];
    upload(x->t.buffer, x->dt, b, n);
    free(b);
}
static void get_all(const tens* x, double* v) {
    int64_t n = x->rows * x->cols;
    double* b = malloc((size_t)(n ? n : 1) * sizeof *b);
    download(x->t.buffer, x->dt, b, n);
    for (int64_t r = 0; r < x->rows; r++)
        for (int64_t c = 0; c < x->cols; c++)
            v[r * x->cols + c] = b[x->transposed ? c * x->rows + r : r * x->cols + c];
    free(b);
}
static tens mk(hg_dtype dt, int64_t rows, int64_t cols, int transposed, const double* v) {
    tens x = {.dt = dt, .rows = rows, .cols = cols, .transposed = transposed};
    hg_buffer b;
    int64_t n = rows * cols;
    CHECK_OK(hg_buffer_create(EX, dt, (size_t)(n ? n : 1), &b));
    int64_t shape[2] = {transposed ? cols : rows, transposed ? rows : cols};
    int64_t strides[2] = {shape[1], 1};
    hg_tensor t;
    CHECK_OK(hg_tensor_view(b, 2, shape, strides, 0, &t));
    if (transposed) CHECK_OK(hg_tensor_transpose(&t, 0, 1, &x.t));
    else x.t = t;
    put_all(&x, v);
    return x;
}
static void drop(tens* x) { hg_buffer_destroy(x->t.buffer); }

static int close_to(double got, double want, double scale, double tol) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    return fabs(got - want) <= tol * (fabs(want) + scale) + 1e-300;
}

// Runs `steps` updates of a (rows, cols) parameter of dtype dt and checks p, m, v (and vmax)
// after each against the reference step taken from the stored state before it. Each value is
// judged on its own scale plus, for p, the size of the update.
static void run_case(const char* label, hg_dtype dt, int64_t rows, int64_t cols, int transposed,
                     hg_adam_options o, int steps) {
    int64_t n = rows * cols;
    double tol = dt == HG_DTYPE_F64 ? 1e-13 : dt == HG_DTYPE_F32 ? 1e-6
                 : dt == HG_DTYPE_BF16 ? 1.6e-2 : 2e-3;
    size_t bytes = (size_t)(n ? n : 1) * sizeof(double);
    double* st[4];    // stored p, m, v, vmax before the step
    double* now[4];   // after it
    for (int k = 0; k < 4; k++) st[k] = calloc(1, bytes), now[k] = calloc(1, bytes);
    double* g = malloc(bytes);
    int half = dt == HG_DTYPE_F16 || dt == HG_DTYPE_BF16;
    // f16 rounds eps = 1e-8 to 0 (1 / 0 as in torch with f16 parameters): an f16 user's eps
    if (dt == HG_DTYPE_F16 && o.eps < 1e-4) o.eps = 1e-4;
    // The smallest gradients. f16's (1 - beta2) g^2 underflows below |g| ~ 0.25 (to 0 or a few
    // subnormal steps, as in torch with f16 parameters): f16 runs |g| in [0.3, 1).
    double tiny = dt == HG_DTYPE_F16 ? 0.3 : half ? 0.05 : 1e-6, mid = dt == HG_DTYPE_F16 ? 0.5
                                                                     : 1e-2;
    double floor = dt == HG_DTYPE_F16 ? 1e-4 : 0;   // f16 subnormal moments: absolute steps
    for (int64_t i = 0; i < n; i++) st[0][i] = as_dt(dt, urand(-2, 2));
    tens t[4];
    for (int k = 0; k < 4; k++) t[k] = mk(dt, rows, cols, transposed, st[k]);
    int bad = 0;
    for (int s = 1; s <= steps && !bad; s++) {
        // gradients of mixed scales (tiny ones make sqrt(v) comparable to eps)
        for (int64_t i = 0; i < n; i++)
            g[i] = as_dt(dt, (urand(0, 1) < 0.5 ? -1 : 1) * urand(dt == HG_DTYPE_F16 ? 0.6 : 0, 1) *
                                 (i % 7 == 0 ? tiny : i % 5 == 0 ? mid : 1));
        tens tg = mk(dt, rows, cols, transposed, g);
        o.step = s;
        CHECK_OK(hg_adam_step(&o, &t[0].t, &tg.t, &t[1].t, &t[2].t, o.amsgrad ? &t[3].t : NULL));
        drop(&tg);
        for (int k = 0; k < 4; k++) get_all(&t[k], now[k]);
        for (int64_t i = 0; i < n && !bad; i++) {
            double p = st[0][i], m = st[1][i], v = st[2][i], x = st[3][i];
            adam_ref_step(&o, &p, g[i], &m, &v, &x);
            // p from the moments as stored (checked just below): their rounding, which sums
            // that cancel can make large, is not counted against the parameter's update
            double pd = st[0][i];
            if (o.weight_decay != 0 && o.decoupled_weight_decay) pd *= 1 - o.lr * o.weight_decay;
            double bc1 = 1 - pow(o.beta1, (double)s), bc2 = 1 - pow(o.beta2, (double)s);
            p = pd - o.lr / bc1 * now[1][i] /
                         (sqrt(now[o.amsgrad ? 3 : 2][i]) / sqrt(bc2) + o.eps);
            double upd = fabs(p - st[0][i]);
            double want[4] = {p, m, v, x};
            // each result's error bound scales with its terms' sizes (sums cancel)
            double ge = fabs(g[i]) + o.weight_decay * fabs(st[0][i]);
            double scale[4] = {fabs(st[0][i]) + upd + floor, fabs(st[1][i]) + ge + floor,
                               st[2][i] + ge * ge + floor, st[3][i] + ge * ge + floor};
            for (int k = 0; k < (o.amsgrad ? 4 : 3) && !bad; k++)
                if (!close_to(now[k][i], want[k], scale[k], tol)) {
                    fprintf(stderr, "  before: p %.9g m %.9g v %.9g vmax %.9g, g %.9g\n",
                            st[0][i], st[1][i], st[2][i], st[3][i], g[i]);
                    CHECK_MSG(0, "%s %s %lldx%lld%s step %d: %s[%lld] = %.17g, want %.17g", label,
                              hg_dtype_name(dt), (long long)rows, (long long)cols,
                              transposed ? " (transposed)" : "", s,
                              (const char* [4]){"param", "exp_avg", "exp_avg_sq",
                                                "max_exp_avg_sq"}[k],
                              (long long)i, now[k][i], want[k]);
                    bad = 1;
                }
        }
        for (int k = 0; k < 4; k++) memcpy(st[k], now[k], bytes);
    }
    for (int k = 0; k < 4; k++) free(st[k]), free(now[k]), drop(&t[k]);
    free(g);
}

static hg_adam_options opts(double lr, double wd, int decoupled, int amsgrad, int maximize) {
    hg_adam_options o = {lr, 0.9, 0.999, 1e-8, wd, 1, decoupled, amsgrad, maximize};
    return o;
}

static void test_updates(int emulated) {
    const hg_dtype fl[4] = {HG_DTYPE_F64, HG_DTYPE_F32, HG_DTYPE_F16, HG_DTYPE_BF16};
    for (int d = 0; d < 4; d++) {
        hg_dtype dt = fl[d];
        for (int tr = 0; tr < 2; tr++) {
            run_case("adam", dt, 13, 37, tr, opts(1e-2, 0, 0, 0, 0), 4);
            run_case("adam wd", dt, 13, 37, tr, opts(1e-2, 0.05, 0, 0, 0), 3);
            run_case("adamw", dt, 13, 37, tr, opts(3e-2, 0.1, 1, 0, 0), 3);
            run_case("adam amsgrad maximize", dt, 13, 37, tr, opts(1e-2, 0, 0, 1, 1), 4);
            run_case("adamw amsgrad", dt, 5, 9, tr, opts(1e-3, 0.01, 1, 1, 0), 3);
        }
        run_case("adam 1 element", dt, 1, 1, 0, opts(1e-1, 0, 0, 0, 0), 3);
        run_case("adam empty", dt, 0, 7, 0, opts(1e-1, 0, 0, 0, 0), 2);
    }
    if (emulated) return;
    // Threaded sizes (the one-pass kernel splits at 64K elements): 300 x 1001, odd tail.
    run_case("adam threaded", HG_DTYPE_F32, 300, 1001, 0, opts(1e-3, 0.01, 0, 1, 0), 3);
    run_case("adamw threaded", HG_DTYPE_F64, 257, 513, 0, opts(1e-3, 0.01, 1, 0, 0), 2);
    // betas of 0 (no momentum) and lr 0 (only the moments move)
    hg_adam_options o = opts(0, 0, 0, 0, 0);
    run_case("adam lr 0", HG_DTYPE_F32, 4, 33, 0, o, 2);
    o = opts(1e-2, 0, 0, 0, 0);
    o.beta1 = 0, o.beta2 = 0;
    run_case("adam betas 0", HG_DTYPE_F32, 4, 33, 0, o, 2);
}

// The one-pass kernel and the decomposition run the same IEEE operations: f32 and f64 results
// agree bit for bit between a contiguous tensor and a transposed one.
static void test_paths_agree(void) {
    const hg_dtype fl[2] = {HG_DTYPE_F64, HG_DTYPE_F32};
    for (int d = 0; d < 2; d++) {
        int64_t rows = 17, cols = 29, n = rows * cols;
        double *p = malloc((size_t)n * 8), *g = malloc((size_t)n * 8), *z = calloc((size_t)n, 8);
        double *a = malloc((size_t)n * 8), *b = malloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++) p[i] = urand(-1, 1), g[i] = urand(-1, 1);
        tens c[4], t[4];
        const double* init[4] = {p, z, z, z};
        for (int k = 0; k < 4; k++) c[k] = mk(fl[d], rows, cols, 0, init[k]);
        for (int k = 0; k < 4; k++) t[k] = mk(fl[d], rows, cols, 1, init[k]);
        tens gc = mk(fl[d], rows, cols, 0, g), gt = mk(fl[d], rows, cols, 1, g);
        hg_adam_options o = opts(1e-2, 0.01, 0, 1, 0);
        for (int s = 1; s <= 3; s++) {
            o.step = s;
            CHECK_OK(hg_adam_step(&o, &c[0].t, &gc.t, &c[1].t, &c[2].t, &c[3].t));
            CHECK_OK(hg_adam_step(&o, &t[0].t, &gt.t, &t[1].t, &t[2].t, &t[3].t));
        }
        for (int k = 0; k < 4; k++) {
            get_all(&c[k], a);
            get_all(&t[k], b);
            CHECK_MSG(memcmp(a, b, (size_t)n * 8) == 0, "%s: tensor %d differs between the "
                      "contiguous and the transposed path", hg_dtype_name(fl[d]), k);
            drop(&c[k]), drop(&t[k]);
        }
        drop(&gc), drop(&gt);
        free(p), free(g), free(z), free(a), free(b);
    }
}

// Every refusal: a status, a message naming the problem, nothing written.
static void test_errors(void) {
    int64_t rows = 3, cols = 4, n = 12;
    double v0[12], v1[12], got[12];
    for (int i = 0; i < n; i++) v0[i] = urand(-1, 1), v1[i] = urand(0, 1);
    tens p = mk(HG_DTYPE_F32, rows, cols, 0, v0), g = mk(HG_DTYPE_F32, rows, cols, 0, v1);
    tens m = mk(HG_DTYPE_F32, rows, cols, 0, v1), v = mk(HG_DTYPE_F32, rows, cols, 0, v1);
    tens gi = mk(HG_DTYPE_I32, rows, cols, 0, v1), g64 = mk(HG_DTYPE_F64, rows, cols, 0, v1);
    tens pi = mk(HG_DTYPE_I32, rows, cols, 0, v1), gs = mk(HG_DTYPE_F32, cols, rows, 0, v1);
    hg_adam_options ok = opts(1e-2, 0, 0, 0, 0), o;
#define REFUSE(want, text, ...)                                                                \
    do {                                                                                       \
        CHECK_STATUS(hg_adam_step(__VA_ARGS__), want);                                         \
        CHECK_MSG(strstr(hg_last_error(), text) != NULL, "message '%s' lacks '%s'",           \
                  hg_last_error(), text);                                                      \
    } while (0)
    REFUSE(HG_ERR_NULL_POINTER, "options", NULL, &p.t, &g.t, &m.t, &v.t, NULL);
    REFUSE(HG_ERR_NULL_POINTER, "grad", &ok, &p.t, NULL, &m.t, &v.t, NULL);
    REFUSE(HG_ERR_NULL_POINTER, "exp_avg_sq", &ok, &p.t, &g.t, &m.t, NULL, NULL);
    o = ok, o.amsgrad = 1;
    REFUSE(HG_ERR_NULL_POINTER, "max_exp_avg_sq", &o, &p.t, &g.t, &m.t, &v.t, NULL);
    o = ok, o.lr = -1e-3;
    REFUSE(HG_ERR_INVALID_ARGUMENT, "lr", &o, &p.t, &g.t, &m.t, &v.t, NULL);
    o = ok, o.eps = NAN;
    REFUSE(HG_ERR_INVALID_ARGUMENT, "eps", &o, &p.t, &g.t, &m.t, &v.t, NULL);
    o = ok, o.beta2 = 1.0;
    REFUSE(HG_ERR_INVALID_ARGUMENT, "betas", &o, &p.t, &g.t, &m.t, &v.t, NULL);
    o = ok, o.beta1 = -0.1;
    REFUSE(HG_ERR_INVALID_ARGUMENT, "betas", &o, &p.t, &g.t, &m.t, &v.t, NULL);
    o = ok, o.weight_decay = INFINITY;
    REFUSE(HG_ERR_INVALID_ARGUMENT, "weight_decay", &o, &p.t, &g.t, &m.t, &v.t, NULL);
    o = ok, o.step = 0;
    REFUSE(HG_ERR_INVALID_ARGUMENT, "step", &o, &p.t, &g.t, &m.t, &v.t, NULL);
    REFUSE(HG_ERR_DTYPE_MISMATCH, "grad is i32", &ok, &p.t, &gi.t, &m.t, &v.t, NULL);
    REFUSE(HG_ERR_DTYPE_MISMATCH, "grad is f64", &ok, &p.t, &g64.t, &m.t, &v.t, NULL);
    REFUSE(HG_ERR_DTYPE_MISMATCH, "float dtype", &ok, &pi.t, &gi.t, &gi.t, &gi.t, NULL);
    REFUSE(HG_ERR_SIZE_MISMATCH, "grad has shape (4, 3)", &ok, &p.t, &gs.t, &m.t, &v.t, NULL);
    REFUSE(HG_ERR_INVALID_ARGUMENT, "share memory", &ok, &p.t, &g.t, &m.t, &m.t, NULL);
    REFUSE(HG_ERR_INVALID_ARGUMENT, "share memory", &ok, &p.t, &g.t, &p.t, &v.t, NULL);
    // grad is read while the others are written: it may not be one of them either
    REFUSE(HG_ERR_INVALID_ARGUMENT, "share memory", &ok, &p.t, &m.t, &m.t, &v.t, NULL);
    // a broadcast (stride-0) view cannot be written
    hg_tensor bc = p.t;
    bc.strides[0] = 0;
    REFUSE(HG_ERR_INVALID_ARGUMENT, "stride 0", &ok, &bc, &g.t, &m.t, &v.t, NULL);
#undef REFUSE
    get_all(&p, got);
    for (int i = 0; i < n; i++) CHECK_MSG(got[i] == (double)(float)v0[i], "param[%d] written", i);
    get_all(&m, got);
    for (int i = 0; i < n; i++) CHECK_MSG(got[i] == (double)(float)v1[i], "exp_avg[%d] written", i);
    get_all(&v, got);
    for (int i = 0; i < n; i++)
        CHECK_MSG(got[i] == (double)(float)v1[i], "exp_avg_sq[%d] written", i);
    tens all[8] = {p, g, m, v, gi, g64, pi, gs};
    for (int k = 0; k < 8; k++) drop(&all[k]);
}

static void run_all(int emulated) {
    test_updates(emulated);
    test_paths_agree();
    test_errors();
}

int main(void) { return hg_test_run_executors("test_optim", &EX, run_all); }
