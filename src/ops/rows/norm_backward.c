// hg_layer_norm_backward / hg_rms_norm_backward (ops.h). Per row of the normalized dims, with
// xhat = (x - mean) rstd (rms: x rstd) and gxh = grad * weight:
//   grad_x = rstd (gxh - mean(gxh) - xhat mean(gxh xhat))      (rms: no mean(gxh) term)
//   grad_weight = sum over rows of grad xhat, grad_bias = sum over rows of grad.
// Contiguous f32/f64 on a host backend: one kernel, rows split across the executor's threads,
// each worker summing its rows' grad_weight / grad_bias terms in f64 (the workers' sums added in
// order afterwards). On a device, grad_x of rows that are contiguous at a constant row stride
// comes from the register-resident row kernel (dev_rows_reg_bw.c: each row of grad and x read
// once), grad_weight / grad_bias (column sums over the rows) from the composed form. Everything
// else (strided views, f16/bf16 on hosts) is composed of library ops in f32 (f64 for f64).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/op_common.h"
#include "ops/common/op_dispatch.h"
#include "ops/common/op_temps.h"
#include "tensor/tensor_internal.h"
#include "base/cpu_targets.h"
#include "ops/rows/dev_rows_reg.h"
#include "ops/rows/rows_grad.h"

typedef struct nb_job {
    const unsigned char *g, *x, *w;
    unsigned char* gx;
    int f64, rms;
    double eps;
    int64_t R, rows;
    int nw;
    double* acc;          // per worker: R sums of grad xhat, then R sums of grad
    void (*rows_f32)(const struct nb_job* j, int w, int64_t r0, int64_t r1);
    void* scratch;        // per worker: 3 R elements (xhat; f32: the block sums; f64: q)
} nb_job;

// One row in four passes over R (ten separate loops took 2.7x torch's time on 256 x 1024):
// the mean; xhat unscaled with its sum of squares; xhat scaled, with the row's two sums of q =
// grad * weight and the grad_weight / grad_bias terms; grad_x. The row sums run in 16 f32 lanes
// (two 8-lane vectors) folded in f64.
#define NB_BLOCK 16
static inline __attribute__((always_inline)) void nb_rows_f32_body(const nb_job* j, int w,
                                                                   int64_t r0, int64_t r1) {
    int64_t R = j->R, R16 = R & ~(int64_t)15;
    const float* wt = (const float*)j->w;
    float* xh = (float*)j->scratch + (size_t)w * 3 * (size_t)R;
    // grad_weight / grad_bias terms of up to NB_BLOCK rows in f32, then added to the worker's
    // f64 sums (a read-modify-write of two f64 rows per row was a third of the time)
    float* awf = xh + R;
    float* abf = awf + R;
    double* aw = j->acc ? j->acc + (size_t)w * 2 * (size_t)R : NULL;
    double* ab = aw ? aw + R : NULL;
    if (aw) memset(awf, 0, (size_t)R * 2 * sizeof(float));
    int pending = 0;
    for (int64_t r = r0; r < r1; r++) {
        const float* x = (const float*)j->x + r * R;
        const float* g = (const float*)j->g + r * R;
        float* o = j->gx ? (float*)j->gx + r * R : NULL;
        double mean = j->rms ? 0.0 : hg_rg_dot_f32(x, NULL, R) / (double)R;
        float mf = (float)mean, ml = (float)(mean - (double)mf);   // as the forward's mean
        hg_rg_v8f s0 = {0}, s1 = {0};
        int64_t i = 0;
        for (; i < R16; i += 16) {
            hg_rg_v8f a0, a1;
            memcpy(&a0, x + i, 32);
            memcpy(&a1, x + i + 8, 32);
            a0 = (a0 - mf) - ml;
            a1 = (a1 - mf) - ml;
            memcpy(xh + i, &a0, 32);
            memcpy(xh + i + 8, &a1, 32);
            s0 += a0 * a0;
            s1 += a1 * a1;
        }
        s0 += s1;
        double ss = 0.0;
        for (int k = 0; k < 8; k++) ss += (double)s0[k];
        for (; i < R; i++) {
            xh[i] = (x[i] - mf) - ml;
            ss += (double)xh[i] * (double)xh[i];
        }
        float rstd = (float)(1.0 / sqrt(ss / (double)R + j->eps));
        // xhat, the sums of q and q xhat, and the grad_weight / grad_bias terms (before grad_x
        // is written: it may be grad itself)
        hg_rg_v8f qa0 = {0}, qa1 = {0}, qb0 = {0}, qb1 = {0};
        for (i = 0; i < R16; i += 16) {
            hg_rg_v8f h0, h1, g0, g1, q0, q1;
            memcpy(&h0, xh + i, 32);
            memcpy(&h1, xh + i + 8, 32);
            memcpy(&g0, g + i, 32);
            memcpy(&g1, g + i + 8, 32);
            h0 *= rstd;
            h1 *= rstd;
            memcpy(xh + i, &h0, 32);
            memcpy(xh + i + 8, &h1, 32);
            q0 = g0;
            q1 = g1;
            if (wt) {
                hg_rg_v8f w0, w1;
                memcpy(&w0, wt + i, 32);
                memcpy(&w1, wt + i + 8, 32);
                q0 *= w0;
                q1 *= w1;
            }
            qa0 += q0;
            qa1 += q1;
            qb0 += q0 * h0;
            qb1 += q1 * h1;
        }
        qa0 += qa1;
        qb0 += qb1;
        double sa = 0.0, sb = 0.0;
        for (int k = 0; k < 8; k++) {
            sa += (double)qa0[k];
            sb += (double)qb0[k];
        }
        for (; i < R; i++) {
            xh[i] *= rstd;
            float q = wt ? g[i] * wt[i] : g[i];
            sa += (double)q;
            sb += (double)(q * xh[i]);
        }
        if (aw) {
            for (int64_t k = 0; k < R; k++) {
                awf[k] += g[k] * xh[k];
                abf[k] += g[k];
            }
            if (++pending == NB_BLOCK || r + 1 == r1) {
                for (int64_t k = 0; k < R; k++) {
                    aw[k] += (double)awf[k];
                    ab[k] += (double)abf[k];
                }
                memset(awf, 0, (size_t)R * 2 * sizeof(float));
                pending = 0;
            }
        }
        if (!o) continue;
        float fa = j->rms ? 0.0f : (float)(sa / (double)R), fb = (float)(sb / (double)R);
        if (wt)
            for (int64_t k = 0; k < R; k++) o[k] = rstd * ((g[k] * wt[k] - fa) - xh[k] * fb);
        else
            for (int64_t k = 0; k < R; k++) o[k] = rstd * ((g[k] - fa) - xh[k] * fb);
    }
}

// The row kernel built for the baseline, AVX2 and AVX-512 (picked once per call: the
// baseline build split the 8-lane sums into SSE halves and spilled them, 2x torch's time).
typedef void (*nb_rows_fn)(const nb_job* j, int w, int64_t r0, int64_t r1);
static void nb_rows_f32_base(const nb_job* j, int w, int64_t r0, int64_t r1) {
    nb_rows_f32_body(j, w, r0, r1);
}
#if defined(HG_HAVE_CPU_TARGETS)
HG_TARGET_AVX2 static void nb_rows_f32_avx2(const nb_job* j, int w, int64_t r0, int64_t r1) {
    nb_rows_f32_body(j, w, r0, r1);
}
HG_TARGET_AVX512
static void nb_rows_f32_avx512(const nb_job* j, int w, int64_t r0, int64_t r1) {
    nb_rows_f32_body(j, w, r0, r1);
}
#endif
static nb_rows_fn nb_rows_f32_pick(void) {
    return HG_PICK_LEVEL(nb_rows_f32_base, nb_rows_f32_avx2, nb_rows_f32_avx512);
}

static void nb_rows_f64(const nb_job* j, int w, int64_t r0, int64_t r1) {
    int64_t R = j->R;
    const double* wt = (const double*)j->w;
    double* xh = (double*)j->scratch + (size_t)w * 3 * (size_t)R;
    double* q = xh + R;
    double* aw = j->acc ? j->acc + (size_t)w * 2 * (size_t)R : NULL;
    double* ab = aw ? aw + R : NULL;
    for (int64_t r = r0; r < r1; r++) {
        const double* x = (const double*)j->x + r * R;
        const double* g = (const double*)j->g + r * R;
        double* o = j->gx ? (double*)j->gx + r * R : NULL;
        double mean = j->rms ? 0.0 : hg_rg_dot_f64(x, NULL, R) / (double)R;
        for (int64_t i = 0; i < R; i++) xh[i] = x[i] - mean;
        double rstd = 1.0 / sqrt(hg_rg_dot_f64(xh, xh, R) / (double)R + j->eps);
        for (int64_t i = 0; i < R; i++) xh[i] *= rstd;
        if (aw)
            for (int64_t i = 0; i < R; i++) {
                aw[i] += g[i] * xh[i];
                ab[i] += g[i];
            }
        if (!o) continue;
        const double* gq = g;
        if (wt) {
            for (int64_t i = 0; i < R; i++) q[i] = g[i] * wt[i];
            gq = q;
        }
        double a = j->rms ? 0.0 : hg_rg_dot_f64(gq, NULL, R) / (double)R;
        double b = hg_rg_dot_f64(gq, xh, R) / (double)R;
        for (int64_t i = 0; i < R; i++) o[i] = rstd * ((gq[i] - a) - xh[i] * b);
    }
}

static void nb_worker(void* ctx, int w) {
    nb_job* j = ctx;
    int64_t r0 = j->rows * w / j->nw, r1 = j->rows * (w + 1) / j->nw;
    if (j->f64) nb_rows_f64(j, w, r0, r1);
    else j->rows_f32(j, w, r0, r1);
}

// The composed form, on any backend and layout.
static hg_status nb_composed(const hg_tensor* g, const hg_tensor* x, int32_t nnorm,
                             const hg_tensor* weight, double eps, int rms, hg_tensor* gx,
                             hg_tensor* gw, hg_tensor* gb) {
    hg_op_temps p = {.n = 0};
    hg_dtype cdt = x->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    int32_t axes[HG_MAX_DIMS], lead[HG_MAX_DIMS], nlead = x->ndim - nnorm;
    for (int32_t d = 0; d < nnorm; d++) axes[d] = nlead + d;
    for (int32_t d = 0; d < nlead; d++) lead[d] = d;
    const hg_tensor *xf, *gf, *wf = NULL;
    hg_status s = hg_op_temp_cast(&p, x, cdt, &xf);
    if (!s) s = hg_op_temp_cast(&p, g, cdt, &gf);
    if (!s && weight) s = hg_op_temp_cast(&p, weight, cdt, &wf);
    hg_tensor *xc = hg_op_temp(&p), *var = hg_op_temp(&p), *rstd = hg_op_temp(&p);
    hg_tensor *xhat = hg_op_temp(&p), *gxh = hg_op_temp(&p), *t = hg_op_temp(&p);
    hg_tensor *mb = hg_op_temp(&p), *inner = hg_op_temp(&p);
    const hg_tensor* cen = xf;
    if (!rms) {
        hg_tensor* mu = hg_op_temp(&p);
        if (!s) s = hg_reduce(HG_REDUCE_MEAN, xf, nnorm, axes, 1, mu);
        if (!s) s = hg_binary(HG_BINARY_SUB, xf, mu, xc);
        cen = xc;
    }
    if (!s) s = hg_binary(HG_BINARY_MUL, cen, cen, t);
    if (!s) s = hg_reduce(HG_REDUCE_MEAN, t, nnorm, axes, 1, var);
    if (!s) s = hg_binary_scalar(HG_BINARY_ADD, var, hg_scalar_f(eps), 0, var);
    if (!s) s = hg_unary(HG_UNARY_RSQRT, var, rstd);
    if (!s) s = hg_binary(HG_BINARY_MUL, cen, rstd, xhat);
    // grad_weight and grad_bias first: grad_x may be grad itself.
    if (gw) {
        hg_tensor* gxhat = hg_op_temp(&p);
        if (!s) s = hg_binary(HG_BINARY_MUL, gf, xhat, gxhat);
        if (!s) s = hg_reduce(HG_REDUCE_SUM, gxhat, nlead, lead, 0, gw);
    }
    if (gb && !s) s = hg_reduce(HG_REDUCE_SUM, gf, nlead, lead, 0, gb);
    if (gx) {
        const hg_tensor* q = gf;
        if (wf) {
            if (!s) s = hg_binary(HG_BINARY_MUL, gf, wf, gxh);
            q = gxh;
        }
        hg_tensor* prod = hg_op_temp(&p);
        if (!s) s = hg_binary(HG_BINARY_MUL, q, xhat, prod);
        if (!s) s = hg_reduce(HG_REDUCE_MEAN, prod, nnorm, axes, 1, mb);
        if (!s) s = hg_binary(HG_BINARY_MUL, xhat, mb, t);
        const hg_tensor* base = q;
        if (!rms) {
            hg_tensor *ma = hg_op_temp(&p), *qc = hg_op_temp(&p);
            if (!s) s = hg_reduce(HG_REDUCE_MEAN, q, nnorm, axes, 1, ma);
            if (!s) s = hg_binary(HG_BINARY_SUB, q, ma, qc);
            base = qc;
        }
        if (!s) s = hg_binary(HG_BINARY_SUB, base, t, inner);
        if (!s) s = hg_binary(HG_BINARY_MUL, inner, rstd, gx);
    }
    hg_op_temps_release(&p);
    return s;
}

// Whether grad_x can come from the device row kernel (1, *j filled for hg_dev_rows_reg).
static int dev_grad_x_job(hg_op_ctx* c, int rms, const hg_tensor* grad, const hg_tensor* x,
                          int32_t nnorm, const hg_tensor* weight, double eps, hg_tensor* gx,
                          hg_dev_rows_job* out) {
    hg_dev_rows_job* j = out;
    memset(j, 0, sizeof *j);
    if (!gx || hg_op_route_of(c, HG_OPF_ROWS, x->dtype) != HG_ROUTE_DEVICE) return 0;
    const hg_tensor* ts[3] = {x, grad, gx};
    int64_t rs[3], wrs;
    uint64_t one, wr;
    if (!hg_dev_rows_layout(ts, 3, x->ndim - nnorm, &j->M, &j->R, rs) ||
        (weight && !hg_dev_rows_layout(&weight, 1, 0, &one, &wr, &wrs)))
        return 0;
    j->fn = c->fn;
    j->ex = c->ex;
    j->op = rms ? HG_DEV_ROWS_RMS_NORM_BW : HG_DEV_ROWS_LAYER_NORM_BW;
    j->xdt = j->gdt = x->dtype;
    j->odt = gx->dtype;
    j->x = x->buffer, j->xoff = x->offset, j->xrs = rs[0];
    j->g = grad->buffer, j->goff = grad->offset, j->grs = rs[1];
    j->o = gx->buffer, j->ooff = gx->offset, j->ors = rs[2];
    if (weight) {
        j->has_w = 1;
        j->w = weight->buffer, j->woff = weight->offset, j->wdt = weight->dtype;
    }
    j->eps = eps;
    return 1;
}

// Resolves one optional output of the normalized dims' shape.
static hg_status nb_output(hg_op_ctx* c, hg_tensor* o, hg_dtype dt, const hg_tensor* x,
                           int32_t nnorm, int* allocated) {
    *allocated = 0;
    if (!o) return HG_OK;
    int alloc = o->buffer.handle == 0;
    c->allocated = 0;
    hg_status s = hg_op_output(c, o, dt, nnorm, x->shape + (x->ndim - nnorm), 1);
    *allocated = alloc && !s;
    return s;
}

static hg_status nb_call(const char* fn, int rms, const hg_tensor* grad, const hg_tensor* x,
                         int32_t nnorm, const hg_tensor* weight, double eps, hg_tensor* gx,
                         hg_tensor* gw, hg_tensor* gb) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    if (!grad || !x)
        return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", fn, !grad ? "grad" : "x");
    if (!gx && !gw && !gb)
        return hg_error(HG_ERR_NULL_POINTER, "%s: no output asked for (grad_x, grad_weight%s are "
                        "all NULL)", fn, rms ? "" : ", grad_bias");
    hg_status s;
    if ((s = hg_op_input(&c, grad, "grad", NULL, NULL)) || (s = hg_op_input(&c, x, "x", NULL, NULL)))
        return s;
    if (!hg_dtype_is_float((int)x->dtype) || grad->dtype != x->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: grad is %s and x is %s; expected one float "
                        "dtype (f16, bf16, f32, f64) for both", fn, hg_dtype_name(grad->dtype),
                        hg_dtype_name(x->dtype));
    int same = grad->ndim == x->ndim;
    for (int32_t d = 0; same && d < x->ndim; d++) same = grad->shape[d] == x->shape[d];
    if (!same) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: grad has shape %s and x %s; expected equal "
                        "shapes", fn, hg_op_dims(a, grad->ndim, grad->shape),
                        hg_op_dims(b, x->ndim, x->shape));
    }
    if (nnorm < 1 || nnorm > x->ndim)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: nnorm %d is out of range for x of %d dims "
                        "(valid: 1..%d)", fn, (int)nnorm, (int)x->ndim, (int)x->ndim);
    if (!(eps >= 0.0) || isinf(eps))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: eps %g must be finite and >= 0", fn, eps);
    if (weight) {
        if ((s = hg_op_input(&c, weight, "weight", NULL, NULL))) return s;
        int ok = hg_dtype_is_float((int)weight->dtype) && weight->ndim == nnorm;
        for (int32_t d = 0; ok && d < nnorm; d++)
            ok = weight->shape[d] == x->shape[x->ndim - nnorm + d];
        if (!ok) {
            char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
            return hg_error(hg_dtype_is_float((int)weight->dtype) ? HG_ERR_SIZE_MISMATCH
                                                                  : HG_ERR_DTYPE_MISMATCH,
                            "%s: weight is %s %s; expected a float tensor of the last %d dims of "
                            "x, %s", fn, hg_dtype_name(weight->dtype),
                            hg_op_dims(a, weight->ndim, weight->shape), (int)nnorm,
                            hg_op_dims(b, nnorm, x->shape + (x->ndim - nnorm)));
        }
    }
    hg_dtype pdt = weight ? weight->dtype : x->dtype;
    int ax = 0, aw = 0, ab = 0;
    if (gx) {
        int alloc = gx->buffer.handle == 0;
        s = hg_op_output(&c, gx, x->dtype, x->ndim, x->shape, 1);
        ax = alloc && !s;
    }
    if (!s) s = nb_output(&c, gw, pdt, x, nnorm, &aw);
    if (!s) s = nb_output(&c, gb, pdt, x, nnorm, &ab);
    c.allocated = 0;   // the outputs are released below, not by hg_op_finish
    hg_tensor* outs[3] = {gx, gw, gb};
    const hg_tensor** ins[3] = {&grad, &x, &weight};
    for (int o = 0; o < 3 && !s; o++)
        for (int i = 0; i < 3 && !s; i++)   // grad_x may be grad itself
            s = hg_op_read_first(&c, outs[o], ins[i], o == 0 && i == 0);
    for (int o = 0; o < 3 && !s; o++)
        for (int q = o + 1; q < 3 && !s; q++)
            if (outs[o] && outs[q] && hg_op_overlaps(outs[o], outs[q]))
                s = hg_error(HG_ERR_INVALID_ARGUMENT, "%s: the outputs overlap", fn);
    int f64 = x->dtype == HG_DTYPE_F64;
    int fast = !s && (f64 || x->dtype == HG_DTYPE_F32) && hg_rg_c_contig(grad) &&
               hg_rg_c_contig(x) && (!weight || (weight->dtype == x->dtype &&
                                                 hg_rg_c_contig(weight))) &&
               hg_op_route_of(&c, HG_OPF_ROWS, x->dtype) != HG_ROUTE_DEVICE;
    for (int o = 0; o < 3; o++)
        if (outs[o]) fast = fast && outs[o]->dtype == x->dtype && hg_rg_c_contig(outs[o]);
    if (!s && !fast) {
        hg_dev_rows_job dj;
        if (dev_grad_x_job(&c, rms, grad, x, nnorm, weight, eps, gx, &dj)) {
            // the column sums first: grad_x may be grad itself
            if (gw || gb) s = nb_composed(grad, x, nnorm, weight, eps, rms, NULL, gw, gb);
            if (!s) s = hg_dev_rows_reg(&dj);
        } else {
            s = nb_composed(grad, x, nnorm, weight, eps, rms, gx, gw, gb);
        }
    }
    if (!s && fast) {
        hg_host_view gv, xv, wv, ov;
        nb_job j;
        memset(&j, 0, sizeof j);
        if ((s = hg_op_host_view(&c, grad, &gv)) || (s = hg_op_host_view(&c, x, &xv)) ||
            (weight && (s = hg_op_host_view(&c, weight, &wv))))
            goto done;
        j.g = gv.data;
        j.x = xv.data;
        j.w = weight ? wv.data : NULL;
        j.f64 = f64;
        j.rms = rms;
        j.eps = eps;
        j.rows_f32 = nb_rows_f32_pick();
        j.R = 1;
        for (int32_t d = x->ndim - nnorm; d < x->ndim; d++) j.R *= x->shape[d];
        j.rows = j.R ? xv.numel / j.R : 0;
        if (gx) {
            if ((s = hg_op_host_view(&c, gx, &ov))) goto done;
            j.gx = ov.data;
        }
        int nw = xv.numel < 32768 ? 1 : hg_op_num_threads(&c);
        if (nw > j.rows) nw = (int)(j.rows ? j.rows : 1);
        j.nw = nw;
        size_t rr = (size_t)(j.R ? j.R : 1);
        j.scratch = malloc((size_t)nw * 3 * rr * (f64 ? 8 : 4));
        j.acc = (gw || gb) ? calloc((size_t)nw * 2 * rr, sizeof(double)) : NULL;
        if (!j.scratch || ((gw || gb) && !j.acc)) {
            s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for rows of %lld elements", fn,
                         (long long)j.R);
        } else {
            if (j.rows) s = hg_op_parallel(&c, nw, nb_worker, &j, &j.nw);
            for (int o = 1; o < 3 && !s; o++) {   // the workers' sums, in worker order
                if (!outs[o]) continue;
                hg_host_view v;
                if ((s = hg_op_host_view(&c, outs[o], &v))) break;
                for (int64_t i = 0; i < j.R; i++) {
                    double t = 0.0;
                    for (int w = 0; w < j.nw; w++)
                        t += j.acc[((size_t)w * 2 + (size_t)(o - 1)) * rr + (size_t)i];
                    if (f64) ((double*)v.data)[i] = t;
                    else ((float*)v.data)[i] = (float)t;
                }
            }
        }
        free(j.scratch);
        free(j.acc);
    }
done:
    if (s) {   // a failing op leaves the caller's tensors as they were
        int al[3] = {ax, aw, ab};
        for (int o = 0; o < 3; o++)
            if (al[o]) {
                hg_buffer_destroy(outs[o]->buffer);
                outs[o]->buffer.handle = 0;
            }
    }
    return s;
}

hg_status hg_layer_norm_backward(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm,
                                 const hg_tensor* weight, double eps, hg_tensor* grad_x,
                                 hg_tensor* grad_weight, hg_tensor* grad_bias) {
    return nb_call("hg_layer_norm_backward", 0, grad, x, nnorm, weight, eps, grad_x, grad_weight,
                   grad_bias);
}

hg_status hg_rms_norm_backward(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm,
                               const hg_tensor* weight, double eps, hg_tensor* grad_x,
                               hg_tensor* grad_weight) {
    return nb_call("hg_rms_norm_backward", 1, grad, x, nnorm, weight, eps, grad_x, grad_weight,
                   NULL);
}
