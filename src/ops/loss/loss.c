// The host kernels of the elementwise losses (mse_loss, binary_cross_entropy and
// binary_cross_entropy_with_logits, as torch.nn.functional): the composite layer's host
// overrides (src/composite/loss_api.c checks the arguments; decomp_losses.c defines the ops).
// Operands are broadcast onto the loss shape and walked in C order; each element's loss is
// computed in double and rounded once to the result dtype (NONE), or summed in double in
// fixed-size chunks (MEAN/SUM: the sum does not depend on the thread count). Float dtypes only; the result dtype is the promotion of all operands.
#include <math.h>
#include <string.h>
#include "base/cpu_targets.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "base/vmath.h"
#include "ops/loss/loss_common.h"

typedef enum ew_kind { EW_MSE = 0, EW_BCE, EW_BCE_LOGITS } ew_kind;

enum { IN_X = 0, IN_T, IN_W, IN_PW, IN_COUNT };
enum { EW_BLOCK = 512 };   // elements converted to double per step (5 x 4 KiB on the stack)

typedef struct ew_loss {
    ew_kind kind;
    int32_t nd;
    int64_t shape[HG_MAX_DIMS];
    hg_loss_operand in[IN_COUNT];
    int present[IN_COUNT];
    hg_loss_operand out;
    int write;
    hg_dtype rt;
    void (*softplus_tail)(const double*, int64_t, float*);   // softplus_tail_pick()
} ew_loss;

// log1p(exp(-|x|)) of n values below f64 (x as doubles), into lp: the library's f32 exp and
// log (vmath.h), log1p(e) = log(u) e / (u - 1) with u = 1 + e keeping the tiny e of a large |x|.
// Built for AVX2 and AVX-512 too (picked by the CPU level): in the baseline build every fused
// multiply-add of vmath is a libm call. The same operations in every build, so the same results
// (glibc's log1pf(expf()) was ~7x slower: docs/performance.md).
static inline __attribute__((always_inline)) void softplus_tail_body(const double* x, int64_t n,
                                                                    float* lp) {
    for (int64_t i = 0; i < n; i++) {
        float e = hg_vm_exp_f32(-fabsf((float)x[i])), u = 1.0f + e;
        float r = hg_vm_log_f32(u) * (e / (u - 1.0f));
        lp[i] = u == 1.0f ? e : r;
    }
}
typedef void (*softplus_tail_fn)(const double*, int64_t, float*);
static void softplus_tail_base(const double* x, int64_t n, float* lp) {
    softplus_tail_body(x, n, lp);
}
#if defined(HG_HAVE_CPU_TARGETS)
HG_TARGET_AVX2 static void softplus_tail_avx2(const double* x, int64_t n, float* lp) {
    softplus_tail_body(x, n, lp);
}
HG_TARGET_AVX512
static void softplus_tail_avx512(const double* x, int64_t n, float* lp) {
    softplus_tail_body(x, n, lp);
}
#endif
static softplus_tail_fn softplus_tail_pick(void) {
    return HG_PICK_LEVEL(softplus_tail_base, softplus_tail_avx2, softplus_tail_avx512);
}

// l[i] = loss of element i of a block (operands already in double).
static void ew_block(const ew_loss* L, double* const* v, int64_t n, double* l) {
    const double *x = v[IN_X], *t = v[IN_T];
    switch (L->kind) {
    case EW_MSE:
        for (int64_t i = 0; i < n; i++) {
            double d = x[i] - t[i];
            l[i] = d * d;
        }
        break;
    case EW_BCE:
        // torch clamps each log at -100 so p = 0 or 1 gives a finite loss. Results below f64
        // take the logs in f32 (as torch does; about twice as fast as in double).
        if (L->rt != HG_DTYPE_F64) {
            for (int64_t i = 0; i < n; i++) {
                float xf = (float)x[i];
                double lp = logf(xf), lq = logf(1.0f - xf);
                if (lp < -100.0) lp = -100.0;
                if (lq < -100.0) lq = -100.0;
                l[i] = -(t[i] * lp + (1.0 - t[i]) * lq);
            }
            break;
        }
        for (int64_t i = 0; i < n; i++) {
            double lp = log(x[i]), lq = log(1.0 - x[i]);
            if (lp < -100.0) lp = -100.0;
            if (lq < -100.0) lq = -100.0;
            l[i] = -(t[i] * lp + (1.0 - t[i]) * lq);
        }
        break;
    default: {
        // log(1 + exp(-|x|)) never overflows; max(-x, 0) restores the large-|x| part; the
        // loss is (1 - t) x + lw sp with lw = 1 + (pos_weight - 1) t (torch's form), which is
        // max(x, 0) - x t + log1p(exp(-|x|)) without pos_weight.
        float lpf[EW_BLOCK];
        if (L->rt != HG_DTYPE_F64) L->softplus_tail(x, n, lpf);
        for (int64_t i = 0; i < n; i++) {
            double e = L->rt == HG_DTYPE_F64 ? log1p(exp(-fabs(x[i]))) : (double)lpf[i];
            double sp = e + (x[i] < 0 ? -x[i] : 0.0);
            double lw = L->present[IN_PW] ? (v[IN_PW][i] - 1.0) * t[i] + 1.0 : 1.0;
            l[i] = (1.0 - t[i]) * x[i] + lw * sp;
        }
        break;
    }
    }
    if (L->present[IN_W])
        for (int64_t i = 0; i < n; i++) l[i] *= v[IN_W][i];
}

static void ew_chunk(void* ctx, int64_t e0, int64_t e1, double* sum, double* count) {
    const ew_loss* L = ctx;
    double buf[IN_COUNT + 1][EW_BLOCK];
    double* v[IN_COUNT];
    for (int q = 0; q < IN_COUNT; q++) v[q] = buf[q];
    double* l = buf[IN_COUNT];
    double s = 0;
    for (int64_t b = e0; b < e1; b += EW_BLOCK) {
        int64_t n = e1 - b < EW_BLOCK ? e1 - b : EW_BLOCK;
        for (int q = 0; q < IN_COUNT; q++)
            if (L->present[q]) hg_loss_gather(L->nd, L->shape, &L->in[q], b, n, v[q]);
        ew_block(L, v, n, l);
        if (L->write) hg_loss_scatter(L->nd, L->shape, &L->out, L->rt, b, n, l);
        else {
            // Four partial sums: the adds pipeline instead of waiting on one another.
            double p[4] = {0, 0, 0, 0};
            int64_t i = 0;
            for (; i + 4 <= n; i += 4)
                for (int k = 0; k < 4; k++) p[k] += l[i + k];
            for (; i < n; i++) p[0] += l[i];
            s += (p[0] + p[1]) + (p[2] + p[3]);
        }
    }
    *sum = s;
    *count = (double)(e1 - e0);
}

// Adds input t (broadcast onto the loss shape) as operand q.
static hg_status add_operand(hg_op_ctx* c, ew_loss* L, int q, const hg_tensor* t,
                             const char* name) {
    int64_t st[HG_MAX_DIMS];
    hg_host_view v;
    hg_status s = hg_loss_broadcast(c, t, name, L->nd, L->shape, st);
    if (s || (s = hg_op_host_view(c, t, &v))) return s;
    size_t es = hg_dtype_size(t->dtype);
    for (int32_t d = 0; d < L->nd; d++) L->in[q].bstrides[d] = st[d] * (int64_t)es;
    L->in[q].base = v.data;
    L->in[q].dt = t->dtype;
    L->present[q] = 1;
    return HG_OK;
}

hg_status hg_loss_ew_host(hg_op_ctx* c, hg_dev_loss kind, const hg_tensor* const* in,
                          hg_dtype rt, hg_reduction r, const hg_tensor* out) {
    static const char* const names[IN_COUNT] = {"x", "target", "weight", "pos_weight"};
    static const ew_kind kinds[] = {EW_MSE, EW_BCE, EW_BCE_LOGITS};
    ew_loss L;
    memset(&L, 0, sizeof L);
    L.kind = kinds[kind];
    hg_status s = hg_loss_shape(c, in[0], names[0], in[1], &L.nd, L.shape);
    for (int q = 0; q < IN_COUNT && !s; q++)
        if (in[q]) s = add_operand(c, &L, q, in[q], names[q]);
    hg_host_view ov;
    if (s || (s = hg_op_host_view(c, out, &ov))) return s;
    L.rt = rt;
    L.write = r == HG_REDUCTION_NONE;
    L.softplus_tail = softplus_tail_pick();
    if (L.write) {
        size_t es = hg_dtype_size(out->dtype);
        L.out.dt = out->dtype;
        L.out.base = ov.data;
        for (int32_t d = 0; d < L.nd; d++) L.out.bstrides[d] = ov.strides[d] * (int64_t)es;
    }
    int64_t n = hg_shape_numel(L.nd, L.shape);
    double cost = L.kind == EW_MSE ? 1.0 : 15.0;   // ~ns per element
    double sum, cnt;
    s = hg_loss_run(c, n, cost, ew_chunk, &L, &sum, &cnt);
    if (!s && !L.write)
        hg_loss_store(rt, out->dtype, ov.data, r == HG_REDUCTION_MEAN ? sum / (double)n : sum);
    return s;
}

int64_t hg_loss_first_bad_prob(const hg_host_view* v, double* bad) {
    hg_loss_walk w;
    memset(&w, 0, sizeof w);
    w.ndim = v->ndim;
    w.nops = 1;
    size_t es = hg_dtype_size(v->dtype);
    for (int32_t d = 0; d < v->ndim; d++) {
        w.shape[d] = v->shape[d];
        w.bstrides[0][d] = v->strides[d] * (int64_t)es;
    }
    w.base[0] = v->data;
    hg_loss_walk_start(&w, 0);
    for (int64_t e = 0; e < v->numel; e++) {
        double x = hg_op_load_f64(v->dtype, w.p[0]);
        if (!(x >= 0.0 && x <= 1.0)) {
            *bad = x;
            return e;
        }
        hg_loss_walk_next(&w);
    }
    return -1;
}
