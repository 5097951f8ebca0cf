// hg_softmax_backward / hg_log_softmax_backward (ops.h). Contiguous f32/f64 rows along the
// last axis on a host backend: one pass per row on the executor's threads (sum, then the
// result). On a device, rows along the last axis that are contiguous at a constant row stride
// take the register-resident row kernel (dev_rows_reg_bw.c: each row of grad and y read once).
// Everything else (other axes, strided views, f16/bf16 on hosts) is composed of library ops: a
// product, a sum with keepdims, a difference and a product, in f32 (f64 for f64).
#include <math.h>
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
#include "ops/rows/softmax_f32.h"

typedef struct smb_job {
    const unsigned char *g, *y;
    unsigned char* o;
    int f64, log;
    int64_t L, rows;
    int nw;
    void (*rows_f32)(const struct smb_job* j, int64_t r0, int64_t r1);
} smb_job;

static inline __attribute__((always_inline)) void smb_rows_f32_body(const smb_job* j, int64_t r0,
                                                                    int64_t r1) {
    int64_t L = j->L;
    for (int64_t r = r0; r < r1; r++) {
        const float* g = (const float*)j->g + r * L;
        const float* y = (const float*)j->y + r * L;
        float* o = (float*)j->o + r * L;
        if (j->log) {   // g - exp(y) sum(g)
            float s = (float)hg_rg_dot_f32(g, NULL, L);
            for (int64_t i = 0; i < L; i++) o[i] = g[i] - hg_sm_expf(y[i]) * s;
        } else {        // y (g - sum(g y))
            float s = (float)hg_rg_dot_f32(g, y, L);
            for (int64_t i = 0; i < L; i++) o[i] = y[i] * (g[i] - s);
        }
    }
}

// The row kernel built for the baseline, AVX2 and AVX-512, picked once per call (as the norm
// gradient's: the baseline build splits the 8-lane sums into SSE halves).
typedef void (*smb_rows_fn)(const smb_job* j, int64_t r0, int64_t r1);
static void smb_rows_f32_base(const smb_job* j, int64_t r0, int64_t r1) {
    smb_rows_f32_body(j, r0, r1);
}
#if defined(HG_HAVE_CPU_TARGETS)
HG_TARGET_AVX2 static void smb_rows_f32_avx2(const smb_job* j, int64_t r0, int64_t r1) {
    smb_rows_f32_body(j, r0, r1);
}
HG_TARGET_AVX512
static void smb_rows_f32_avx512(const smb_job* j, int64_t r0, int64_t r1) {
    smb_rows_f32_body(j, r0, r1);
}
#endif
static smb_rows_fn smb_rows_f32_pick(void) {
    return HG_PICK_LEVEL(smb_rows_f32_base, smb_rows_f32_avx2, smb_rows_f32_avx512);
}

static void smb_rows_f64(const smb_job* j, int64_t r0, int64_t r1) {
    int64_t L = j->L;
    for (int64_t r = r0; r < r1; r++) {
        const double* g = (const double*)j->g + r * L;
        const double* y = (const double*)j->y + r * L;
        double* o = (double*)j->o + r * L;
        double s = hg_rg_dot_f64(g, j->log ? NULL : y, L);
        if (j->log)
            for (int64_t i = 0; i < L; i++) o[i] = g[i] - exp(y[i]) * s;
        else
            for (int64_t i = 0; i < L; i++) o[i] = y[i] * (g[i] - s);
    }
}

static void smb_worker(void* ctx, int w) {
    smb_job* j = ctx;
    int64_t r0 = j->rows * w / j->nw, r1 = j->rows * (w + 1) / j->nw;
    if (j->f64) smb_rows_f64(j, r0, r1);
    else j->rows_f32(j, r0, r1);
}

// The composed form, on any backend and layout.
static hg_status smb_composed(const hg_tensor* g, const hg_tensor* y, int32_t ax, int log,
                              hg_tensor* out) {
    hg_op_temps p = {.n = 0};
    hg_dtype cdt = y->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    const hg_tensor *gc, *yc;
    hg_status s = hg_op_temp_cast(&p, g, cdt, &gc);
    if (!s) s = hg_op_temp_cast(&p, y, cdt, &yc);
    int32_t naxes = y->ndim ? 1 : 0;   // a 0-d tensor: the sum over no axis
    hg_tensor *sum = hg_op_temp(&p), *t = hg_op_temp(&p);
    if (log) {
        if (!s) s = hg_reduce(HG_REDUCE_SUM, gc, naxes, &ax, 1, sum);
        if (!s) s = hg_unary(HG_UNARY_EXP, yc, t);
        if (!s) s = hg_binary(HG_BINARY_MUL, t, sum, t);
        if (!s) s = hg_binary(HG_BINARY_SUB, gc, t, out);
    } else {
        if (!s) s = hg_binary(HG_BINARY_MUL, gc, yc, t);
        if (!s) s = hg_reduce(HG_REDUCE_SUM, t, naxes, &ax, 1, sum);
        if (!s) s = hg_binary(HG_BINARY_SUB, gc, sum, t);
        if (!s) s = hg_binary(HG_BINARY_MUL, yc, t, out);
    }
    hg_op_temps_release(&p);
    return s;
}

static hg_status smb_call(const char* fn, int log, const hg_tensor* grad, const hg_tensor* y,
                          int32_t axis, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    if (!grad || !y || !out)
        return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", fn,
                        !grad ? "grad" : !y ? "y" : "out");
    hg_status s;
    if ((s = hg_op_input(&c, grad, "grad", NULL, NULL)) || (s = hg_op_input(&c, y, "y", NULL, NULL)))
        return s;
    if (!hg_dtype_is_float((int)y->dtype) || grad->dtype != y->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: grad is %s and y is %s; expected one float "
                        "dtype (f16, bf16, f32, f64) for both", fn, hg_dtype_name(grad->dtype),
                        hg_dtype_name(y->dtype));
    int same = grad->ndim == y->ndim;
    for (int32_t d = 0; same && d < y->ndim; d++) same = grad->shape[d] == y->shape[d];
    if (!same) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: grad has shape %s and y %s; expected equal "
                        "shapes", fn, hg_op_dims(a, grad->ndim, grad->shape),
                        hg_op_dims(b, y->ndim, y->shape));
    }
    int32_t ax = 0;
    if (y->ndim == 0) {
        if (axis != 0 && axis != -1)
            return hg_error(HG_ERR_OUT_OF_RANGE, "%s: axis %d is out of range for a tensor of 0 "
                            "dims (valid: -1, 0)", fn, (int)axis);
    } else if ((s = hg_op_axis(&c, y->ndim, axis, &ax))) {
        return s;
    }
    if ((s = hg_op_output(&c, out, y->dtype, y->ndim, y->shape, 1))) return s;
    // out may be grad or y exactly (each element is read before it is written).
    if ((s = hg_op_read_first(&c, out, &grad, 1)) || (s = hg_op_read_first(&c, out, &y, 1)))
        return hg_op_finish(&c, out, s);
    int fast = (y->dtype == HG_DTYPE_F32 || y->dtype == HG_DTYPE_F64) &&
               out->dtype == y->dtype && (y->ndim == 0 || ax == y->ndim - 1) &&
               hg_rg_c_contig(grad) && hg_rg_c_contig(y) && hg_rg_c_contig(out) &&
               hg_op_route_of(&c, HG_OPF_ROWS, y->dtype) != HG_ROUTE_DEVICE;
    if (!fast && y->ndim && ax == y->ndim - 1 &&
        hg_op_route_of(&c, HG_OPF_ROWS, y->dtype) == HG_ROUTE_DEVICE) {
        const hg_tensor* ts[3] = {y, grad, out};
        hg_dev_rows_job j;
        memset(&j, 0, sizeof j);
        int64_t rs[3];
        if (hg_dev_rows_layout(ts, 3, ax, &j.M, &j.R, rs)) {
            j.fn = fn;
            j.ex = c.ex;
            j.op = log ? HG_DEV_ROWS_LOG_SOFTMAX_BW : HG_DEV_ROWS_SOFTMAX_BW;
            j.xdt = j.gdt = y->dtype;
            j.odt = out->dtype;
            j.x = y->buffer, j.xoff = y->offset, j.xrs = rs[0];
            j.g = grad->buffer, j.goff = grad->offset, j.grs = rs[1];
            j.o = out->buffer, j.ooff = out->offset, j.ors = rs[2];
            return hg_op_finish(&c, out, hg_dev_rows_reg(&j));
        }
    }
    if (!fast) return hg_op_finish(&c, out, smb_composed(grad, y, ax, log, out));
    hg_host_view gv, yv, ov;
    if ((s = hg_op_host_view(&c, grad, &gv)) || (s = hg_op_host_view(&c, y, &yv)) ||
        (s = hg_op_host_view(&c, out, &ov)))
        return hg_op_finish(&c, out, s);
    if (yv.numel == 0) return hg_op_finish(&c, out, HG_OK);
    smb_job j = {gv.data, yv.data, ov.data, y->dtype == HG_DTYPE_F64, log, 1, 0, 1,
                 smb_rows_f32_pick()};
    if (y->ndim) j.L = y->shape[y->ndim - 1];
    j.rows = yv.numel / j.L;
    int nw = yv.numel < 32768 ? 1 : hg_op_num_threads(&c);
    if (nw > j.rows) nw = (int)j.rows;
    j.nw = nw;
    s = hg_op_parallel(&c, nw, smb_worker, &j, &j.nw);
    return hg_op_finish(&c, out, s);
}

hg_status hg_softmax_backward(const hg_tensor* grad, const hg_tensor* y, int32_t axis,
                              hg_tensor* out) {
    return smb_call("hg_softmax_backward", 0, grad, y, axis, out);
}

hg_status hg_log_softmax_backward(const hg_tensor* grad, const hg_tensor* y, int32_t axis,
                                  hg_tensor* out) {
    return smb_call("hg_log_softmax_backward", 1, grad, y, axis, out);
}
