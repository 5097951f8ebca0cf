// hg_layer_norm_backward / hg_rms_norm_backward and hg_layer_norm_backward_stats (ops.h). Per
// row of the normalized dims, with xhat = (x - mean) rstd (rms: x rstd; the mean and rstd
// recomputed from x and eps, or given: the _stats form) and gxh = grad * weight:
//   grad_x = rstd (gxh - mean(gxh) - xhat mean(gxh xhat))      (rms: no mean(gxh) term)
//   grad_weight = sum over rows of grad xhat, grad_bias = sum over rows of grad.
// The kernels here are the op's overrides (rows_bw.h, registered in src/composite/overrides.c).
// Contiguous f32/f64 on a host backend: one kernel, rows split across the executor's threads,
// each worker summing its rows' grad_weight / grad_bias terms in f64 (the workers' sums added in
// order afterwards). On a device, grad_x of rows that are contiguous at a constant row stride
// comes from the register-resident row kernel (dev_rows_reg_bw.c: each row of grad and x read
// once). Everything else (the column sums on devices, strided views, f16/bf16 on hosts) runs the
// op's decomposition (src/composite/decomp_rows.c).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "ops/common/op_common.h"
#include "ops/common/op_dispatch.h"
#include "ops/rows/rows_bw.h"
#include "tensor/tensor_internal.h"
#include "base/cpu_targets.h"
#include "ops/rows/dev_rows_reg.h"
#include "ops/rows/rows_grad.h"

typedef struct nb_job {
    const unsigned char *g, *x, *w;
    const unsigned char *sm, *sr;   // the given mean and rstd (one per row), or NULL
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
        // as the forward's mean (split in two: x - mean is exact near the mean); given: as it is
        double mean = j->sm ? (double)((const float*)j->sm)[r]
                      : j->rms ? 0.0 : hg_rg_dot_f32(x, NULL, R) / (double)R;
        float mf = (float)mean, ml = (float)(mean - (double)mf);
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
        float rstd = j->sr ? ((const float*)j->sr)[r]
                           : (float)(1.0 / sqrt(ss / (double)R + j->eps));
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
        double mean = j->sm ? ((const double*)j->sm)[r]
                      : j->rms ? 0.0 : hg_rg_dot_f64(x, NULL, R) / (double)R;
        for (int64_t i = 0; i < R; i++) xh[i] = x[i] - mean;
        double rstd = j->sr ? ((const double*)j->sr)[r]
                            : 1.0 / sqrt(hg_rg_dot_f64(xh, xh, R) / (double)R + j->eps);
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

// Whether grad_x can come from the device row kernel (1, *j filled for hg_dev_rows_reg).
static int dev_grad_x_job(hg_op_ctx* c, int rms, const hg_tensor* grad, const hg_tensor* x,
                          int32_t nnorm, const hg_tensor* weight, double eps, const hg_tensor* gx,
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

int hg_norm_backward_dev_ok(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* x,
                            int32_t nnorm, const hg_tensor* weight, const hg_tensor* gx) {
    hg_dev_rows_job j;
    return dev_grad_x_job(c, 0, grad, x, nnorm, weight, 0.0, gx, &j);
}

hg_status hg_norm_backward_dev_gx(hg_op_ctx* c, int rms, const hg_tensor* grad,
                                  const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                                  double eps, const hg_tensor* gx) {
    hg_dev_rows_job j;
    if (!dev_grad_x_job(c, rms, grad, x, nnorm, weight, eps, gx, &j))
        return hg_error(HG_ERR_INTERNAL, "%s: the row kernel got rows it does not take", c->fn);
    return hg_dev_rows_reg(&j);
}

hg_status hg_norm_backward_rows(hg_op_ctx* c, int rms, const hg_tensor* grad,
                                const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                                const hg_tensor* mean, const hg_tensor* rstd, double eps,
                                const hg_tensor* gx, const hg_tensor* gw, const hg_tensor* gb) {
    const char* fn = c->fn;
    const hg_tensor* outs[3] = {gx, gw, gb};
    int f64 = x->dtype == HG_DTYPE_F64;
    hg_status s;
    hg_host_view gv, xv, wv, ov, mv, rv;
    nb_job j;
    memset(&j, 0, sizeof j);
    if ((s = hg_op_host_view_checked(c, grad, &gv)) ||
        (s = hg_op_host_view_checked(c, x, &xv)) ||
        (weight && (s = hg_op_host_view_checked(c, weight, &wv))) ||
        (mean && (s = hg_op_host_view_checked(c, mean, &mv))) ||
        (rstd && (s = hg_op_host_view_checked(c, rstd, &rv))))
        return s;
    j.sm = mean ? mv.data : NULL;
    j.sr = rstd ? rv.data : NULL;
    j.g = gv.data;
    j.x = xv.data;
    j.w = weight ? wv.data : NULL;
    j.f64 = f64;
    j.rms = rms;
    j.eps = eps;
    j.rows_f32 = nb_rows_f32_pick();
    j.R = hg_shape_numel(nnorm, x->shape + x->ndim - nnorm);
    j.rows = j.R ? xv.numel / j.R : 0;
    if (gx) {
        if ((s = hg_op_host_view_checked(c, gx, &ov))) return s;
        j.gx = ov.data;
    }
    int nw = xv.numel < 32768 ? 1 : hg_op_num_threads(c);
    if (nw > j.rows) nw = (int)(j.rows ? j.rows : 1);
    j.nw = nw;
    size_t rr = (size_t)(j.R ? j.R : 1);
    j.scratch = malloc((size_t)nw * 3 * rr * (f64 ? 8 : 4));
    j.acc = (gw || gb) ? calloc((size_t)nw * 2 * rr, sizeof(double)) : NULL;
    if (!j.scratch || ((gw || gb) && !j.acc)) {
        s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for rows of %lld elements", fn,
                     (long long)j.R);
    } else {
        if (j.rows) s = hg_op_parallel(c, nw, nb_worker, &j, &j.nw);
        for (int o = 1; o < 3 && !s; o++) {   // the workers' sums, in worker order
            if (!outs[o]) continue;
            hg_host_view v;
            if ((s = hg_op_host_view_checked(c, outs[o], &v))) break;
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
    return s;
}
