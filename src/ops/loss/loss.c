// Elementwise losses as torch.nn.functional: mse_loss, binary_cross_entropy and
// binary_cross_entropy_with_logits. Operands are broadcast onto the loss shape and walked in C
// order; each element's loss is computed in double and rounded once to the result dtype
// (NONE), or summed in double in fixed-size chunks (MEAN/SUM: the sum does not depend on the
// thread count). Float dtypes only; the result dtype is the promotion of all operands.
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "base/cpu_targets.h"
#include "base/error.h"
#include "base/vmath.h"
#include "ops/common/dev_ops.h"
#include "ops/loss/loss_common.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"

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
    int64_t est[IN_COUNT][HG_MAX_DIMS];   // element strides on the loss shape (device path)
    void (*softplus_tail)(const double*, int64_t, float*);   // softplus_tail_pick()
} ew_loss;

// log1p(exp(-|x|)) of n values below f64 (x as doubles), into lp: the library's f32 exp and
// log (vmath.h), log1p(e) = log(u) e / (u - 1) with u = 1 + e keeping the tiny e of a large |x|.
// Built for AVX2 and AVX-512 too (picked by the CPU level): in the baseline build every fused
// multiply-add of vmath is a libm call. The same operations in every build, so the same results.
// 256 x 1024 f32 with pos_weight, 2 threads, Zen 4: glibc's log1pf(expf()) 2.7 ms -> ~0.4 ms.
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
static hg_status add_operand(hg_op_ctx* c, ew_loss* L, int q, const hg_tensor* t, const char* name) {
    int64_t st[HG_MAX_DIMS];
    hg_status s = hg_loss_broadcast(c, t, name, L->nd, L->shape, st);
    if (s) return s;
    L->present[q] = 1;
    memcpy(L->est[q], st, sizeof st);
    if (hg_op_route_of(c, HG_OPF_LOSS, t->dtype) == HG_ROUTE_DEVICE)
        return HG_OK;   // the device kernel reads the tensor itself
    hg_host_view v;
    if ((s = hg_op_host_view(c, t, &v))) return s;
    size_t es = hg_dtype_size(t->dtype);
    for (int32_t d = 0; d < L->nd; d++) L->in[q].bstrides[d] = st[d] * (int64_t)es;
    L->in[q].base = v.data;
    L->in[q].dt = t->dtype;
    L->present[q] = 1;
    return HG_OK;
}

// Inputs x, t (required), w, pw (optional); the loss shape is (nd, shape).
static hg_status ew_run(hg_op_ctx* c, ew_loss* L, const hg_tensor* const* in, const char* const* names,
                        int32_t nd, const int64_t* shape, hg_reduction r, hg_tensor* out) {
    hg_status s;
    hg_dtype rt = in[0]->dtype;
    for (int q = 1; q < IN_COUNT; q++)
        if (in[q] && (s = hg_result_type(rt, in[q]->dtype, &rt))) return hg_error_prefix(s, "%s", c->fn);
    L->nd = nd;
    for (int32_t d = 0; d < nd; d++) L->shape[d] = shape[d];
    for (int q = 0; q < IN_COUNT; q++)
        if (in[q] && (s = add_operand(c, L, q, in[q], names[q]))) return s;
    if ((s = hg_loss_output(c, out, r, rt, nd, shape))) return s;
    const hg_tensor* rin[IN_COUNT];   // the inputs, or copies of those that overlap out
    for (int q = 0; q < IN_COUNT; q++) {
        rin[q] = in[q];
        if ((s = hg_op_read_first(c, out, &rin[q], 1)) ||
            (rin[q] != in[q] && (s = add_operand(c, L, q, rin[q], names[q]))))
            return hg_op_finish(c, out, s);
    }
    if (hg_op_route_of(c, HG_OPF_LOSS, in[0]->dtype) == HG_ROUTE_DEVICE) {
        static const hg_dev_loss kinds[] = {HG_DEV_MSE, HG_DEV_BCE, HG_DEV_BCE_LOGITS};
        s = hg_dev_ew_loss(c, kinds[L->kind], rin, L->est, nd, shape, rt, r, out);
        return hg_op_finish(c, out, s);
    }
    hg_host_view ov;
    if ((s = hg_op_host_view(c, out, &ov))) return hg_op_finish(c, out, s);
    L->rt = rt;
    L->write = r == HG_REDUCTION_NONE;
    L->softplus_tail = softplus_tail_pick();
    if (L->write) {
        size_t es = hg_dtype_size(out->dtype);
        L->out.dt = out->dtype;
        L->out.base = ov.data;
        for (int32_t d = 0; d < nd; d++) L->out.bstrides[d] = ov.strides[d] * (int64_t)es;
    }
    int64_t n = 1;
    for (int32_t d = 0; d < nd; d++) n *= shape[d];
    double cost = L->kind == EW_MSE ? 1.0 : 15.0;   // ~ns per element
    double sum, cnt;
    s = hg_loss_run(c, n, cost, ew_chunk, L, &sum, &cnt);
    if (!s && !L->write)
        hg_loss_store(rt, out->dtype, ov.data, r == HG_REDUCTION_MEAN ? sum / (double)n : sum);
    return hg_op_finish(c, out, s);
}

// Checks the common arguments: inputs live and float, reduction valid.
static hg_status ew_inputs(hg_op_ctx* c, const hg_tensor* const* in, const char* const* names,
                           hg_reduction r) {
    hg_status s;
    for (int q = 0; q < 4; q++) {
        if (q < 2 && !in[q])
            return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", c->fn, names[q]);
        if (in[q] && ((s = hg_op_input(c, in[q], names[q], NULL, NULL)) ||
                      (s = hg_loss_float(c, in[q], names[q]))))
            return s;
    }
    return hg_loss_reduction(c, r);
}

static hg_status same_shape(hg_op_ctx* c, const hg_tensor* x, const char* xn, const hg_tensor* t,
                            const char* tn) {
    int same = x->ndim == t->ndim;
    for (int32_t d = 0; same && d < x->ndim; d++) same = x->shape[d] == t->shape[d];
    if (same) return HG_OK;
    char sx[HG_DIMS_TEXT], st[HG_DIMS_TEXT];
    return hg_error(HG_ERR_SIZE_MISMATCH, "%s: '%s' has shape %s but '%s' has shape %s (they must "
                    "be equal)", c->fn, tn, hg_op_dims(st, t->ndim, t->shape), xn,
                    hg_op_dims(sx, x->ndim, x->shape));
}

HG_API hg_status hg_mse_loss(const hg_tensor* pred, const hg_tensor* target,
                             hg_reduction reduction, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_mse_loss");
    const hg_tensor* in[4] = {pred, target, NULL, NULL};
    const char* names[4] = {"pred", "target", "", ""};
    hg_status s = ew_inputs(&c, in, names, reduction);
    if (s) return s;
    // torch broadcasts pred against target: the loss shape is the broadcast shape.
    int32_t nd = pred->ndim > target->ndim ? pred->ndim : target->ndim;
    int64_t shape[HG_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++) {
        int32_t ip = d - (nd - pred->ndim), it = d - (nd - target->ndim);
        int64_t a = ip >= 0 ? pred->shape[ip] : 1, b = it >= 0 ? target->shape[it] : 1;
        if (a != b && a != 1 && b != 1) {
            char sp[HG_DIMS_TEXT], st[HG_DIMS_TEXT];
            return hg_error(HG_ERR_SIZE_MISMATCH, "hg_mse_loss: pred %s and target %s do not "
                            "broadcast", hg_op_dims(sp, pred->ndim, pred->shape),
                            hg_op_dims(st, target->ndim, target->shape));
        }
        shape[d] = a == 1 ? b : a;
    }
    ew_loss L;
    memset(&L, 0, sizeof L);
    L.kind = EW_MSE;
    return ew_run(&c, &L, in, names, nd, shape, reduction, out);
}

// The first element of prob outside [0, 1] (NaN included), in C order; -1 if none.
static int64_t first_bad_prob(const hg_host_view* v, double* bad) {
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

HG_API hg_status hg_binary_cross_entropy(const hg_tensor* prob, const hg_tensor* target,
                                         const hg_tensor* weight, hg_reduction reduction,
                                         hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_binary_cross_entropy");
    const hg_tensor* in[4] = {prob, target, weight, NULL};
    const char* names[4] = {"prob", "target", "weight", ""};
    hg_status s = ew_inputs(&c, in, names, reduction);
    if (s) return s;
    if ((s = same_shape(&c, prob, "prob", target, "target"))) return s;
    double bad = 0;
    int64_t at = -1;
    if (hg_op_route_of(&c, HG_OPF_LOSS, prob->dtype) == HG_ROUTE_DEVICE) {
        if ((s = hg_dev_first_bad_prob(&c, prob, &at, &bad))) return s;
    } else {
        hg_host_view pv;
        if ((s = hg_op_host_view(&c, prob, &pv))) return s;
        at = first_bad_prob(&pv, &bad);
    }
    if (at >= 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_binary_cross_entropy: 'prob' element %lld (C "
                        "order) is %g; probabilities must be in [0, 1]", (long long)at, bad);
    ew_loss L;
    memset(&L, 0, sizeof L);
    L.kind = EW_BCE;
    return ew_run(&c, &L, in, names, prob->ndim, prob->shape, reduction, out);
}

HG_API hg_status hg_binary_cross_entropy_with_logits(const hg_tensor* logits,
                                                     const hg_tensor* target,
                                                     const hg_tensor* weight,
                                                     const hg_tensor* pos_weight,
                                                     hg_reduction reduction, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_binary_cross_entropy_with_logits");
    const hg_tensor* in[4] = {logits, target, weight, pos_weight};
    const char* names[4] = {"logits", "target", "weight", "pos_weight"};
    hg_status s = ew_inputs(&c, in, names, reduction);
    if (s) return s;
    if ((s = same_shape(&c, logits, "logits", target, "target"))) return s;
    ew_loss L;
    memset(&L, 0, sizeof L);
    L.kind = EW_BCE_LOGITS;
    return ew_run(&c, &L, in, names, logits->ndim, logits->shape, reduction, out);
}
