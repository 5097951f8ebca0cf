// The fused host kernel of hg_adam_step (adam.h): the override of the composite op for
// C-contiguous f32/f64 tensors on a host backend, the same steps in the same order and roundings
// as its decomposition (src/composite/decomp_optim.c; tests/test_composite_optim.c checks
// them against each other bit for bit), in one pass (reads p, g, m, v; writes p, m, v) split
// across the executor's threads:
//   g = grad (negated with maximize); Adam's weight_decay: g = g + wd p; AdamW's: p = p decay
//   m = lerp(m, g, 1 - beta1) (torch's two-sided form: m + w (g - m) for w < 1/2, else
//       g - (g - m) (1 - w))                 v = v beta2 + ((1 - beta2) g) g
//   (amsgrad: vmax = max(vmax, v), used for v below)
//   p = p + (neg_step m) / (sqrt(v) / bc2s + eps)
// with the scalars (formed in double by the entry) rounded to the tensors' dtype.
#include <math.h>
#include "base/cpu_targets.h"
#include "base/shape.h"
#include "ops/optim/adam.h"

// The scalars (hg_adam_scalar) and options (HG_ADAM_*) of one call.
typedef struct adam_coef {
    const double* s;
    uint32_t f;
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
// The scalars, rounded to T once per call.
#define ADAM_SCALARS(T)                                                                          \
    const double* s_ = k->s;                                                                     \
    const T wd = (T)s_[HG_ADAM_WD], decay = (T)s_[HG_ADAM_DECAY], b1w = (T)s_[HG_ADAM_B1W];      \
    const T b2 = (T)s_[HG_ADAM_B2], omb2 = (T)s_[HG_ADAM_OMB2], ns = (T)s_[HG_ADAM_NEG_STEP];    \
    const T bc2s = (T)s_[HG_ADAM_BC2S], eps = (T)s_[HG_ADAM_EPS]
#define ADAM_BODY(T, SQRT)                                                                       \
    do {                                                                                         \
        ADAM_SCALARS(T);                                                                         \
        T gb[ADAM_TILE];                                                                         \
        for (int64_t t0 = i0; t0 < i1; t0 += ADAM_TILE) {                                        \
            int64_t nt = i1 - t0 < ADAM_TILE ? i1 - t0 : ADAM_TILE;                              \
            T* restrict p = p_ + t0;                                                             \
            const T* restrict g0 = g_ + t0;                                                      \
            T* restrict m = m_ + t0;                                                             \
            T* restrict v = v_ + t0;                                                             \
            T* restrict g = gb;                                                                  \
            if (k->f & HG_ADAM_MAXIMIZE)                                                         \
                for (int64_t i = 0; i < nt; i++) g[i] = -g0[i];                                  \
            else                                                                                 \
                for (int64_t i = 0; i < nt; i++) g[i] = g0[i];                                   \
            if (k->f & HG_ADAM_L2)                                                               \
                for (int64_t i = 0; i < nt; i++) g[i] = g[i] + wd * p[i];                        \
            if (k->f & HG_ADAM_DECOUPLED)                                                        \
                for (int64_t i = 0; i < nt; i++) p[i] = p[i] * decay;                            \
            if (k->f & HG_ADAM_LERP_HI)                                                          \
                for (int64_t i = 0; i < nt; i++) m[i] = g[i] - (g[i] - m[i]) * b1w;              \
            else                                                                                 \
                for (int64_t i = 0; i < nt; i++) m[i] = m[i] + b1w * (g[i] - m[i]);              \
            for (int64_t i = 0; i < nt; i++) v[i] = v[i] * b2 + (omb2 * g[i]) * g[i];            \
            const T* restrict vv = v;                                                            \
            if (k->f & HG_ADAM_AMSGRAD) {                                                        \
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
        ADAM_SCALARS(T);                                                                         \
        T* restrict p = p_;                                                                      \
        const T* restrict g0 = g_;                                                               \
        T* restrict m = m_;                                                                      \
        T* restrict v = v_;                                                                      \
        for (int64_t i = i0; i < i1; i++) {                                                      \
            T g = g0[i], pi = p[i];                                                              \
            if (MODE == 1) g = g + wd * pi;                                                      \
            if (MODE == 2) pi = pi * decay;                                                      \
            T mi = m[i] + b1w * (g - m[i]);                                                      \
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
    if (!(k->f & (HG_ADAM_AMSGRAD | HG_ADAM_MAXIMIZE | HG_ADAM_LERP_HI))) {
        if (k->f & HG_ADAM_L2) ADAM_ONE_PASS(float, sqrtf, 1);
        else if (k->f & HG_ADAM_DECOUPLED) ADAM_ONE_PASS(float, sqrtf, 2);
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
    if (!(k->f & (HG_ADAM_AMSGRAD | HG_ADAM_MAXIMIZE | HG_ADAM_LERP_HI))) {
        if (k->f & HG_ADAM_L2) ADAM_ONE_PASS(double, sqrt, 1);
        else if (k->f & HG_ADAM_DECOUPLED) ADAM_ONE_PASS(double, sqrt, 2);
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

hg_status hg_adam_host(hg_op_ctx* c, const double* scalars, uint32_t flags,
                       const hg_tensor* const* ts) {
    hg_host_view hv[5];
    hg_status s;
    for (int i = 0; i < 5; i++)
        if (ts[i] && (s = hg_op_host_view(c, ts[i], &hv[i]))) return s;
    adam_job j = {.k = {scalars, flags}, .f64 = ts[0]->dtype == HG_DTYPE_F64,
                  .n = hg_view_numel(ts[0]), .p = hv[0].data, .g = hv[1].data, .m = hv[2].data,
                  .v = hv[3].data, .vmax = ts[4] ? hv[4].data : NULL};
    // Below 64K elements one thread: the wake-up costs more than the pass.
    int nw = j.n < 65536 ? 1 : hg_op_num_threads(c);
    return hg_op_parallel(c, nw, adam_worker, &j, &j.nw);   // j.nw: the workers that run
}
