// hg_adam_step (ops.h): one Adam / AdamW update of a parameter and its two moment tensors, in
// place, in the order and roundings of torch.optim.Adam's per-tensor update:
//   g = grad (negated with maximize); Adam's weight_decay: g = g + wd p; AdamW's: p = p (1 - lr wd)
//   m = lerp(m, g, 1 - beta1) (torch's two-sided form: m + w (g - m) for w < 1/2, else
//       g - (g - m) (1 - w))                 v = v beta2 + ((1 - beta2) g) g
//   (amsgrad: vmax = max(vmax, v), used for v below)
//   p = p + ((-lr / bc1) m) / (sqrt(v) / sqrt(bc2) + eps),   bc_k = 1 - beta_k^step
// with the scalars formed in double and rounded to the tensors' dtype, as torch does.
// Contiguous f32/f64 on a host backend: one pass (reads p, g, m, v; writes p, m, v), split
// across the executor's threads. Everything else (strided views, f16/bf16, devices) runs the
// same steps as library ops.
#include <math.h>
#include <string.h>
#include "base/cpu_targets.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "ops/common/op_common.h"
#include "ops/common/op_dispatch.h"
#include "ops/common/op_temps.h"
#include "tensor/tensor_internal.h"

// The update's scalars, double (f64 tensors) and rounded to float (f32 tensors).
typedef struct adam_coef {
    double wd, decay, omb1, b1c, b2, omb2, neg_step, bc2s, eps;
    int l2, decoupled, amsgrad, maximize, lerp_hi;
} adam_coef;

typedef struct adam_job {
    adam_coef k;
    int f64, nw;
    int64_t n;
    unsigned char *p, *m, *v, *vmax;
    const unsigned char* g;
} adam_job;

// One body for every build (ISO C: no contraction, so the builds round identically). Tiles of
// ADAM_TILE elements, each step a plain loop over the tile with the options tested once per
// tile, so every loop vectorizes (one loop with the options inside does not:
// docs/performance.md).
#define ADAM_TILE 512
#define ADAM_BODY(T, SQRT)                                                                       \
    do {                                                                                         \
        const T wd = (T)k->wd, decay = (T)k->decay, omb1 = (T)k->omb1, b1c = (T)k->b1c;        \
        const T b2 = (T)k->b2, omb2 = (T)k->omb2, ns = (T)k->neg_step, bc2s = (T)k->bc2s;      \
        const T eps = (T)k->eps;                                                                 \
        T gb[ADAM_TILE];                                                                         \
        for (int64_t t0 = i0; t0 < i1; t0 += ADAM_TILE) {                                        \
            int64_t nt = i1 - t0 < ADAM_TILE ? i1 - t0 : ADAM_TILE;                              \
            T* restrict p = p_ + t0;                                                             \
            const T* restrict g0 = g_ + t0;                                                      \
            T* restrict m = m_ + t0;                                                             \
            T* restrict v = v_ + t0;                                                             \
            T* restrict g = gb;                                                                  \
            if (k->maximize)                                                                     \
                for (int64_t i = 0; i < nt; i++) g[i] = -g0[i];                                  \
            else                                                                                 \
                for (int64_t i = 0; i < nt; i++) g[i] = g0[i];                                   \
            if (k->l2)                                                                           \
                for (int64_t i = 0; i < nt; i++) g[i] = g[i] + wd * p[i];                        \
            if (k->decoupled)                                                                    \
                for (int64_t i = 0; i < nt; i++) p[i] = p[i] * decay;                            \
            if (k->lerp_hi)                                                                      \
                for (int64_t i = 0; i < nt; i++) m[i] = g[i] - (g[i] - m[i]) * b1c;              \
            else                                                                                 \
                for (int64_t i = 0; i < nt; i++) m[i] = m[i] + omb1 * (g[i] - m[i]);             \
            for (int64_t i = 0; i < nt; i++) v[i] = v[i] * b2 + (omb2 * g[i]) * g[i];            \
            const T* restrict vv = v;                                                            \
            if (k->amsgrad) {                                                                    \
                T* restrict x = vx_ + t0;                                                        \
                for (int64_t i = 0; i < nt; i++)                                                 \
                    x[i] = x[i] > v[i] || x[i] != x[i] ? x[i] : v[i];                            \
                vv = x;                                                                          \
            }                                                                                    \
            for (int64_t i = 0; i < nt; i++)                                                     \
                p[i] = p[i] + (ns * m[i]) / (SQRT(vv[i]) / bc2s + eps);                          \
        }                                                                                        \
    } while (0)

// The common options (no amsgrad, no maximize, beta1 > 1/2) in one loop, weight decay
// mode (0 none, 1 L2, 2 decoupled) a constant of each copy: the same operations in the same
// order as ADAM_BODY, a third of its time (no tile passes through L1).
#define ADAM_ONE_PASS(T, SQRT, MODE)                                                             \
    do {                                                                                         \
        const T wd = (T)k->wd, decay = (T)k->decay, omb1 = (T)k->omb1, b2 = (T)k->b2;          \
        const T omb2 = (T)k->omb2, ns = (T)k->neg_step, bc2s = (T)k->bc2s, eps = (T)k->eps;    \
        T* restrict p = p_;                                                                      \
        const T* restrict g0 = g_;                                                               \
        T* restrict m = m_;                                                                      \
        T* restrict v = v_;                                                                      \
        for (int64_t i = i0; i < i1; i++) {                                                      \
            T g = g0[i], pi = p[i];                                                              \
            if (MODE == 1) g = g + wd * pi;                                                      \
            if (MODE == 2) pi = pi * decay;                                                      \
            T mi = m[i] + omb1 * (g - m[i]);                                                     \
            T vi = v[i] * b2 + (omb2 * g) * g;                                                   \
            m[i] = mi;                                                                           \
            v[i] = vi;                                                                           \
            p[i] = pi + (ns * mi) / (SQRT(vi) / bc2s + eps);                                     \
        }                                                                                        \
    } while (0)

static inline __attribute__((always_inline)) void adam_f32_body(const adam_coef* k, float* p_,
                                                                const float* g_, float* m_,
                                                                float* v_, float* vx_, int64_t i0,
                                                                int64_t i1) {
    if (!k->amsgrad && !k->maximize && !k->lerp_hi) {
        if (k->l2) ADAM_ONE_PASS(float, sqrtf, 1);
        else if (k->decoupled) ADAM_ONE_PASS(float, sqrtf, 2);
        else ADAM_ONE_PASS(float, sqrtf, 0);
        return;
    }
    ADAM_BODY(float, sqrtf);
}
typedef void (*adam_f32_fn)(const adam_coef*, float*, const float*, float*, float*, float*,
                            int64_t, int64_t);
static void adam_f32_base(const adam_coef* k, float* p, const float* g, float* m, float* v,
                          float* vx, int64_t i0, int64_t i1) {
    adam_f32_body(k, p, g, m, v, vx, i0, i1);
}
#if defined(HG_HAVE_CPU_TARGETS)
HG_TARGET_AVX2 static void adam_f32_avx2(const adam_coef* k, float* p, const float* g, float* m,
                                         float* v, float* vx, int64_t i0, int64_t i1) {
    adam_f32_body(k, p, g, m, v, vx, i0, i1);
}
HG_TARGET_AVX512
static void adam_f32_avx512(const adam_coef* k, float* p, const float* g, float* m, float* v,
                            float* vx, int64_t i0, int64_t i1) {
    adam_f32_body(k, p, g, m, v, vx, i0, i1);
}
#endif
static adam_f32_fn adam_f32_pick(void) {
    return HG_PICK_LEVEL(adam_f32_base, adam_f32_avx2, adam_f32_avx512);
}

static void adam_f64(const adam_coef* k, double* p_, const double* g_, double* m_, double* v_,
                     double* vx_, int64_t i0, int64_t i1) {
    if (!k->amsgrad && !k->maximize && !k->lerp_hi) {
        if (k->l2) ADAM_ONE_PASS(double, sqrt, 1);
        else if (k->decoupled) ADAM_ONE_PASS(double, sqrt, 2);
        else ADAM_ONE_PASS(double, sqrt, 0);
        return;
    }
    ADAM_BODY(double, sqrt);
}

static void adam_worker(void* ctx, int w) {
    const adam_job* j = ctx;
    int64_t chunk = ((j->n + j->nw - 1) / j->nw + 15) & ~(int64_t)15;   // 64-byte pieces
    int64_t i0 = (int64_t)w * chunk, i1 = i0 + chunk < j->n ? i0 + chunk : j->n;
    if (i0 >= i1) return;
    if (j->f64)
        adam_f64(&j->k, (double*)j->p, (const double*)j->g, (double*)j->m, (double*)j->v,
                 (double*)j->vmax, i0, i1);
    else
        adam_f32_pick()(&j->k, (float*)j->p, (const float*)j->g, (float*)j->m, (float*)j->v,
                        (float*)j->vmax, i0, i1);
}

// The same steps as library ops (torch's per-tensor sequence; in-place where torch is).
static hg_status adam_composed(const adam_coef* k, const hg_tensor* p, const hg_tensor* g,
                               const hg_tensor* m, const hg_tensor* v, const hg_tensor* vmax) {
    hg_op_temps tp = {0};
    hg_status s = HG_OK;
    hg_tensor *gn = hg_op_temp(&tp), *t = hg_op_temp(&tp), *d = hg_op_temp(&tp);
    hg_tensor *den = hg_op_temp(&tp), *u = hg_op_temp(&tp);
    hg_tensor pc = *p, mc = *m, vc = *v;   // writable handles of the caller's views
    const hg_tensor* gg = g;
    if (k->maximize) {
        s = hg_unary(HG_UNARY_NEG, g, gn);
        gg = gn;
    }
    if (k->l2) {
        hg_tensor* wp = hg_op_temp(&tp);
        hg_tensor* g2 = hg_op_temp(&tp);
        if (!s) s = hg_binary_scalar(HG_BINARY_MUL, p, hg_scalar_f(k->wd), 0, wp);
        if (!s) s = hg_binary(HG_BINARY_ADD, gg, wp, g2);
        gg = g2;
    }
    if (k->decoupled && !s) s = hg_binary_scalar(HG_BINARY_MUL, p, hg_scalar_f(k->decay), 0, &pc);
    if (!s) s = hg_binary(HG_BINARY_SUB, gg, m, d);
    if (!s) s = hg_binary_scalar(HG_BINARY_MUL, d, hg_scalar_f(k->lerp_hi ? k->b1c : k->omb1), 0, d);
    if (!s) s = k->lerp_hi ? hg_binary(HG_BINARY_SUB, gg, d, &mc) : hg_binary(HG_BINARY_ADD, m, d, &mc);
    if (!s) s = hg_binary_scalar(HG_BINARY_MUL, v, hg_scalar_f(k->b2), 0, &vc);
    if (!s) s = hg_binary_scalar(HG_BINARY_MUL, gg, hg_scalar_f(k->omb2), 0, t);
    if (!s) s = hg_binary(HG_BINARY_MUL, t, gg, t);
    if (!s) s = hg_binary(HG_BINARY_ADD, v, t, &vc);
    const hg_tensor* vv = v;
    if (k->amsgrad) {
        hg_tensor xc = *vmax;
        if (!s) s = hg_binary(HG_BINARY_MAXIMUM, vmax, v, &xc);
        vv = vmax;
    }
    if (!s) s = hg_unary(HG_UNARY_SQRT, vv, den);
    if (!s) s = hg_binary_scalar(HG_BINARY_DIV, den, hg_scalar_f(k->bc2s), 0, den);
    if (!s) s = hg_binary_scalar(HG_BINARY_ADD, den, hg_scalar_f(k->eps), 0, den);
    if (!s) s = hg_binary_scalar(HG_BINARY_MUL, m, hg_scalar_f(k->neg_step), 0, u);
    if (!s) s = hg_binary(HG_BINARY_DIV, u, den, u);
    if (!s) s = hg_binary(HG_BINARY_ADD, p, u, &pc);
    hg_op_temps_release(&tp);
    return s;
}

static int adam_bad(double x, double lo, int lo_open, double hi) {
    return !(lo_open ? x > lo : x >= lo) || !(x < hi) || isnan(x);
}

hg_status hg_adam_step(const hg_adam_options* o, const hg_tensor* param, const hg_tensor* grad,
                       const hg_tensor* exp_avg, const hg_tensor* exp_avg_sq,
                       const hg_tensor* max_exp_avg_sq) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_adam_step");
    const char* fn = c.fn;
    if (!o || !param || !grad || !exp_avg || !exp_avg_sq)
        return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", fn,
                        !o ? "options" : !param ? "param" : !grad ? "grad" : !exp_avg ?
                        "exp_avg" : "exp_avg_sq");
    if (o->amsgrad && !max_exp_avg_sq)
        return hg_error(HG_ERR_NULL_POINTER, "%s: amsgrad needs max_exp_avg_sq (it is NULL)", fn);
    if (adam_bad(o->lr, 0.0, 0, INFINITY))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: lr %g must be finite and >= 0", fn, o->lr);
    if (adam_bad(o->eps, 0.0, 0, INFINITY))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: eps %g must be finite and >= 0", fn, o->eps);
    if (adam_bad(o->beta1, 0.0, 0, 1.0) || adam_bad(o->beta2, 0.0, 0, 1.0))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: betas (%g, %g) must each be in [0, 1)", fn,
                        o->beta1, o->beta2);
    if (adam_bad(o->weight_decay, 0.0, 0, INFINITY))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: weight_decay %g must be finite and >= 0",
                        fn, o->weight_decay);
    if (o->step < 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: step %lld must be >= 1 (the step being "
                        "taken, counted from 1)", fn, (long long)o->step);
    const hg_tensor* ts[5] = {param, grad, exp_avg, exp_avg_sq, o->amsgrad ? max_exp_avg_sq : NULL};
    static const char* const names[5] = {"param", "grad", "exp_avg", "exp_avg_sq",
                                         "max_exp_avg_sq"};
    hg_status s;
    for (int i = 0; i < 5; i++) {
        if (!ts[i]) continue;
        s = i == 1 ? hg_op_input(&c, ts[i], names[i], NULL, NULL)
                   : hg_op_existing_output(&c, ts[i], names[i]);
        if (s) return s;
    }
    if (!hg_dtype_is_float((int)param->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: param is %s; expected a float dtype (f16, "
                        "bf16, f32, f64)", fn, hg_dtype_name(param->dtype));
    for (int i = 1; i < 5; i++) {
        if (!ts[i]) continue;
        if (ts[i]->dtype != param->dtype)
            return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: %s is %s and param %s; expected the "
                            "param's dtype", fn, names[i], hg_dtype_name(ts[i]->dtype),
                            hg_dtype_name(param->dtype));
        int same = ts[i]->ndim == param->ndim;
        for (int32_t d = 0; same && d < param->ndim; d++)
            same = ts[i]->shape[d] == param->shape[d];
        if (!same) {
            char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: %s has shape %s and param %s; expected "
                            "the param's shape", fn, names[i],
                            hg_op_dims(a, ts[i]->ndim, ts[i]->shape),
                            hg_op_dims(b, param->ndim, param->shape));
        }
    }
    for (int i = 0; i < 5; i++)   // grad is read while the others are written: all apart
        for (int q = i + 1; q < 5; q++)
            if (ts[i] && ts[q] && hg_op_overlaps(ts[i], ts[q]))
                return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: %s and %s share memory; expected "
                                "separate tensors", fn, names[i], names[q]);
    adam_coef k;
    double bc1 = 1.0 - pow(o->beta1, (double)o->step), bc2 = 1.0 - pow(o->beta2, (double)o->step);
    k.wd = o->weight_decay;
    k.decay = 1.0 - o->lr * o->weight_decay;
    k.omb1 = 1.0 - o->beta1;
    k.lerp_hi = !(k.omb1 < 0.5);
    k.b1c = 1.0 - k.omb1;   // torch's 1 - weight
    k.b2 = o->beta2;
    k.omb2 = 1.0 - o->beta2;
    k.neg_step = -(o->lr / bc1);
    k.bc2s = sqrt(bc2);
    k.eps = o->eps;
    k.decoupled = o->decoupled_weight_decay && o->weight_decay != 0.0;
    k.l2 = !o->decoupled_weight_decay && o->weight_decay != 0.0;
    k.amsgrad = o->amsgrad != 0;
    k.maximize = o->maximize != 0;
    int fast = (param->dtype == HG_DTYPE_F32 || param->dtype == HG_DTYPE_F64) &&
               hg_op_route_of(&c, HG_OPF_OPTIM, param->dtype) == HG_ROUTE_HOST;
    int64_t n = hg_view_numel(param);
    for (int i = 0; i < 5 && fast; i++)
        fast = !ts[i] || hg_tensor_is_c_contiguous(ts[i], n);
    if (n == 0) return HG_OK;
    if (!fast) return adam_composed(&k, param, grad, exp_avg, exp_avg_sq, ts[4]);
    hg_host_view hv[5];
    for (int i = 0; i < 5; i++)
        if (ts[i] && (s = hg_op_host_view(&c, ts[i], &hv[i]))) return s;
    adam_job j;
    memset(&j, 0, sizeof j);
    j.k = k;
    j.f64 = param->dtype == HG_DTYPE_F64;
    j.n = n;
    j.p = hv[0].data;
    j.g = hv[1].data;
    j.m = hv[2].data;
    j.v = hv[3].data;
    j.vmax = ts[4] ? hv[4].data : NULL;
    // Below 64K elements one thread: the wake-up costs more than the pass.
    int nw = n < 65536 ? 1 : hg_op_num_threads(&c);
    return hg_op_parallel(&c, nw, adam_worker, &j, &j.nw);   // j.nw: the workers that run
}
