// layer_norm and rms_norm over the last nnorm dims (torch semantics), library kernels on the
// executor's threads. Per row: the statistics are accumulated in f64 and rounded to f32 (kept in
// f64 for f64 inputs); the row is then normalized in that precision.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_ops.h"
#include "ops/common/op_common.h"
#include "ops/reduce/reduce.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"

typedef struct norm_job {
    const unsigned char* x;
    unsigned char* o;
    hg_dtype xdt, odt;
    int64_t xsz, osz;
    int rms;
    double eps;
    int nrow, nin;                                  // outer (row) dims, normalized dims
    int64_t rs[HG_MAX_DIMS], rx[HG_MAX_DIMS], ro[HG_MAX_DIMS];
    int64_t is[HG_MAX_DIMS], ix[HG_MAX_DIMS], io[HG_MAX_DIMS];
    int64_t R, rows;
    int contig;                                     // rows contiguous f32 in and out
    const double* w;                                // R values or NULL (f64 inputs)
    const double* b;
    const float* wf;                                // the same as f32 (other inputs)
    const float* bf;
    int nw;
    unsigned char* scratch;
    size_t scratch_bytes;
} norm_job;

static void rows_offsets(const norm_job* j, int64_t r, int64_t* xo, int64_t* oo) {
    int64_t a = 0, b = 0;
    for (int d = j->nrow - 1; d >= 0; d--) {
        int64_t k = r % j->rs[d];
        r /= j->rs[d];
        a += k * j->rx[d];
        b += k * j->ro[d];
    }
    *xo = a;
    *oo = b;
}

// Visits the R elements of a row in C order: fn gets (i, x offset, out offset).
#define ROW_WALK(j, BODY)                                                                     \
    do {                                                                                      \
        int64_t ki_[HG_MAX_DIMS] = {0}, xo_ = 0, oo_ = 0;                                     \
        for (int64_t i = 0; i < (j)->R; i++) {                                                \
            BODY;                                                                             \
            for (int d_ = (j)->nin - 1; d_ >= 0; d_--) {                                      \
                xo_ += (j)->ix[d_]; oo_ += (j)->io[d_];                                       \
                if (++ki_[d_] < (j)->is[d_]) break;                                           \
                xo_ -= (j)->ix[d_] * (j)->is[d_]; oo_ -= (j)->io[d_] * (j)->is[d_];           \
                ki_[d_] = 0;                                                                  \
            }                                                                                 \
        }                                                                                     \
    } while (0)

static void st_val(hg_dtype rdt, hg_dtype odt, unsigned char* p, double v) {
    if (odt != rdt) {
        uint64_t tmp = 0;
        hg_op_store_f64(rdt, &tmp, v);
        v = hg_op_load_f64(rdt, &tmp);
    }
    hg_op_store_f64(odt, p, v);
}

static void row_f32(const norm_job* j, const float* t, float* y) {
    int64_t R = j->R;
    // The f32 mean is split in two (mean + mean_lo == the f64 mean to 2^-48 relative): x - mean
    // is exact for x near the mean, so inputs with a large mean keep full f32 accuracy.
    float mean = 0.0f, mean_lo = 0.0f;
    double ss = 0.0;
    if (j->rms) {
        double acc[4] = {0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 4 <= R; i += 4)
            for (int k = 0; k < 4; k++) acc[k] += (double)t[i + k] * t[i + k];
        for (; i < R; i++) acc[0] += (double)t[i] * t[i];
        ss = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    } else {
        double m = hg_reduce_sum_f32(t, R) / (double)R;
        mean = (float)m;
        mean_lo = (float)(m - (double)mean);
        double acc[4] = {0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 4 <= R; i += 4)
            for (int k = 0; k < 4; k++) { double d = t[i + k] - m; acc[k] += d * d; }
        for (; i < R; i++) { double d = t[i] - m; acc[0] += d * d; }
        ss = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
    float rstd = (float)(1.0 / sqrt(ss / (double)R + j->eps));
    const float* w = j->wf;
    const float* b = j->bf;
    if (w && b)
        for (int64_t i = 0; i < R; i++) y[i] = ((t[i] - mean) - mean_lo) * rstd * w[i] + b[i];
    else if (w) for (int64_t i = 0; i < R; i++) y[i] = ((t[i] - mean) - mean_lo) * rstd * w[i];
    else if (b) for (int64_t i = 0; i < R; i++) y[i] = ((t[i] - mean) - mean_lo) * rstd + b[i];
    else for (int64_t i = 0; i < R; i++) y[i] = ((t[i] - mean) - mean_lo) * rstd;
}

static void row_f64(const norm_job* j, double* t) {
    int64_t R = j->R;
    double mean = 0.0, ss = 0.0;
    if (!j->rms) mean = hg_reduce_sum_f64(t, R) / (double)R;
    for (int64_t i = 0; i < R; i++) { double d = t[i] - mean; ss += d * d; }
    double rstd = 1.0 / sqrt(ss / (double)R + j->eps);
    for (int64_t i = 0; i < R; i++) {
        double v = (t[i] - mean) * rstd;
        if (j->w) v *= j->w[i];
        if (j->b) v += j->b[i];
        t[i] = v;
    }
}

static void norm_worker(void* ctx, int w) {
    norm_job* j = ctx;
    int64_t r0 = j->rows * w / j->nw, r1 = j->rows * (w + 1) / j->nw;
    unsigned char* buf = j->scratch + (size_t)w * j->scratch_bytes;
    for (int64_t r = r0; r < r1; r++) {
        int64_t xo, oo;
        rows_offsets(j, r, &xo, &oo);
        const unsigned char* xp = j->x + xo * j->xsz;
        unsigned char* op = j->o + oo * j->osz;
        if (j->contig) {
            row_f32(j, (const float*)xp, (float*)op);
            continue;
        }
        if (j->xdt == HG_DTYPE_F64) {
            double* t = (double*)buf;
            ROW_WALK(j, t[i] = *(const double*)(xp + xo_ * 8));
            row_f64(j, t);
            ROW_WALK(j, st_val(j->xdt, j->odt, op + oo_ * j->osz, t[i]));
        } else {
            float* t = (float*)buf;
            ROW_WALK(j, t[i] = (float)hg_op_load_f64(j->xdt, xp + xo_ * j->xsz));
            row_f32(j, t, t);
            ROW_WALK(j, st_val(j->xdt, j->odt, op + oo_ * j->osz, t[i]));
        }
    }
}

// weight / bias: checked, shape = the normalized dims, any float dtype.
static hg_status check_param(hg_op_ctx* c, const hg_tensor* t, const char* name,
                             const hg_tensor* x, int32_t nnorm) {
    hg_status s = hg_op_input(c, t, name, NULL, NULL);
    if (s) return s;
    if (!hg_dtype_is_float((int)t->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: '%s' has dtype %s; expected a float dtype",
                        c->fn, name, hg_dtype_name(t->dtype));
    int same = t->ndim == nnorm;
    for (int32_t d = 0; same && d < nnorm; d++)
        same = t->shape[d] == x->shape[x->ndim - nnorm + d];
    if (!same) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: '%s' has shape %s; expected the last %d dims "
                        "of x, %s", c->fn, name, hg_op_dims(a, t->ndim, t->shape), (int)nnorm,
                        hg_op_dims(b, nnorm, x->shape + (x->ndim - nnorm)));
    }
    return HG_OK;
}

// A checked parameter gathered into f64 (host-visible backends).
static hg_status load_param(hg_op_ctx* c, const hg_tensor* t, const char* name, double** dst) {
    hg_status s;
    hg_host_view v;
    if ((s = hg_op_host_view(c, t, &v))) return s;
    double* d = malloc((size_t)(v.numel ? v.numel : 1) * sizeof(double));
    if (!d) return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for '%s'", c->fn, name);
    int64_t k[HG_MAX_DIMS] = {0};
    size_t sz = hg_dtype_size(v.dtype);
    for (int64_t i = 0; i < v.numel; i++) {
        int64_t off = 0;
        for (int32_t a = 0; a < v.ndim; a++) off += k[a] * v.strides[a];
        d[i] = hg_op_load_f64(v.dtype, v.data + off * (int64_t)sz);
        for (int32_t a = v.ndim - 1; a >= 0; a--) {
            if (++k[a] < v.shape[a]) break;
            k[a] = 0;
        }
    }
    *dst = d;
    return HG_OK;
}

static hg_status norm_call(const char* fn, int rms, const hg_tensor* x, int32_t nnorm,
                           const hg_tensor* weight, const hg_tensor* bias, double eps,
                           hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    if (!x) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'x' is NULL", fn);
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'out' is NULL", fn);
    hg_status s = hg_op_input(&c, x, "x", NULL, NULL);
    if (s) return s;
    if (!hg_dtype_is_float((int)x->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: x has dtype %s; expected a float dtype (f16, "
                        "bf16, f32, f64)", fn, hg_dtype_name(x->dtype));
    if (nnorm < 1 || nnorm > x->ndim)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: nnorm %d is out of range for x of %d dims "
                        "(valid: 1..%d)", fn, (int)nnorm, (int)x->ndim, (int)x->ndim);
    if (!(eps >= 0.0) || isinf(eps))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: eps %g must be finite and >= 0", fn, eps);
    norm_job j;
    memset(&j, 0, sizeof j);
    double *w = NULL, *b = NULL;
    float *wf = NULL, *bf = NULL;
    // Parameters are checked (and gathered) before out is resolved, so a bad parameter never
    // allocates.
    if (weight && (s = check_param(&c, weight, "weight", x, nnorm))) goto done;
    if (bias && (s = check_param(&c, bias, "bias", x, nnorm))) goto done;
    int device = hg_op_route_of(&c, HG_OPF_ROWS, x->dtype) == HG_ROUTE_DEVICE;
    if (!device && weight && (s = load_param(&c, weight, "weight", &w))) goto done;
    if (!device && bias && (s = load_param(&c, bias, "bias", &b))) goto done;
    if ((s = hg_op_output(&c, out, x->dtype, x->ndim, x->shape, 1))) goto done;
    if ((s = hg_op_no_overlap(&c, out, x, "x")) ||
        (weight && (s = hg_op_no_overlap(&c, out, weight, "weight"))) ||
        (bias && (s = hg_op_no_overlap(&c, out, bias, "bias"))))
        goto done;
    if (device) {
        s = hg_dev_rows(&c, rms ? HG_DEV_RMS_NORM : HG_DEV_LAYER_NORM, x, x->ndim - nnorm, weight,
                        rms ? NULL : bias, eps, out);
        goto done;
    }
    hg_host_view xv, ov;
    if ((s = hg_op_host_view(&c, x, &xv)) || (s = hg_op_host_view(&c, out, &ov))) goto done;
    if (xv.numel == 0) goto done;
    j.x = xv.data; j.o = ov.data;
    j.xdt = xv.dtype; j.odt = ov.dtype;
    j.xsz = (int64_t)hg_dtype_size(xv.dtype); j.osz = (int64_t)hg_dtype_size(ov.dtype);
    j.rms = rms;
    j.eps = eps;
    j.nrow = xv.ndim - nnorm;
    j.nin = nnorm;
    j.R = 1;
    j.rows = 1;
    for (int d = 0; d < j.nrow; d++) {
        j.rs[d] = xv.shape[d]; j.rx[d] = xv.strides[d]; j.ro[d] = ov.strides[d];
        j.rows *= xv.shape[d];
    }
    int contig = j.xdt == HG_DTYPE_F32 && j.odt == HG_DTYPE_F32;
    int64_t ex = 1;
    for (int d = nnorm - 1; d >= 0; d--) {
        int a = j.nrow + d;
        j.is[d] = xv.shape[a]; j.ix[d] = xv.strides[a]; j.io[d] = ov.strides[a];
        if (xv.shape[a] != 1 && (xv.strides[a] != ex || ov.strides[a] != ex)) contig = 0;
        ex *= xv.shape[a];
        j.R *= xv.shape[a];
    }
    j.contig = contig;
    if (xv.dtype != HG_DTYPE_F64) {   // parameters in the compute precision
        wf = w ? malloc((size_t)j.R * sizeof(float)) : NULL;
        bf = b ? malloc((size_t)j.R * sizeof(float)) : NULL;
        if ((w && !wf) || (b && !bf)) {
            s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for the parameters", fn);
            goto done;
        }
        for (int64_t i = 0; i < j.R; i++) {
            if (wf) wf[i] = (float)w[i];
            if (bf) bf[i] = (float)b[i];
        }
    }
    j.w = w; j.b = b; j.wf = wf; j.bf = bf;
    int nw = xv.numel < 32768 ? 1 : hg_op_num_threads(&c);
    if (nw > j.rows) nw = (int)j.rows;
    j.nw = nw;
    j.scratch_bytes = (size_t)j.R * 8 + 64;
    j.scratch = malloc(j.scratch_bytes * (size_t)nw);
    if (!j.scratch) {
        s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for rows of %lld elements", fn,
                     (long long)j.R);
        goto done;
    }
    s = hg_op_parallel(&c, nw, norm_worker, &j, &j.nw);
done:
    free(j.scratch);
    free(w); free(b); free(wf); free(bf);
    return hg_op_finish(&c, out, s);
}

hg_status hg_layer_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                        const hg_tensor* bias, double eps, hg_tensor* out) {
    return norm_call("hg_layer_norm", 0, x, nnorm, weight, bias, eps, out);
}

hg_status hg_rms_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight, double eps,
                      hg_tensor* out) {
    return norm_call("hg_rms_norm", 1, x, nnorm, weight, NULL, eps, out);
}
