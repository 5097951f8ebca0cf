// The row kernels of softmax_backward / log_softmax_backward (rows_bw.h), registered as the
// op's overrides in src/composite/overrides.c: contiguous f32/f64 rows along the last axis on a
// host backend, one pass per row on the executor's threads (sum, then the result); on a device,
// rows along the last axis that are contiguous at a constant row stride, the register-resident
// row kernel (dev_rows_reg_bw.c: each row of grad and y read once). Every other case runs the
// op's decomposition (src/composite/decomp_rows.c).
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/op_common.h"
#include "ops/common/op_dispatch.h"
#include "ops/rows/rows_bw.h"
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

hg_status hg_softmax_backward_dev(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* y,
                                  int32_t ax, int log, const hg_tensor* out) {
    const hg_tensor* ts[3] = {y, grad, out};
    hg_dev_rows_job j;
    memset(&j, 0, sizeof j);
    int64_t rs[3];
    if (!y->ndim || ax != y->ndim - 1 || !hg_dev_rows_layout(ts, 3, ax, &j.M, &j.R, rs))
        return hg_error(HG_ERR_INTERNAL, "%s: the row kernel got rows it does not take", c->fn);
    j.fn = c->fn;
    j.ex = c->ex;
    j.op = log ? HG_DEV_ROWS_LOG_SOFTMAX_BW : HG_DEV_ROWS_SOFTMAX_BW;
    j.xdt = j.gdt = y->dtype;
    j.odt = out->dtype;
    j.x = y->buffer, j.xoff = y->offset, j.xrs = rs[0];
    j.g = grad->buffer, j.goff = grad->offset, j.grs = rs[1];
    j.o = out->buffer, j.ooff = out->offset, j.ors = rs[2];
    return hg_dev_rows_reg(&j);
}

hg_status hg_softmax_backward_rows(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* y,
                                   int log, const hg_tensor* out) {
    hg_host_view gv, yv, ov;
    hg_status s;
    if ((s = hg_op_host_view_checked(c, grad, &gv)) ||
        (s = hg_op_host_view_checked(c, y, &yv)) ||
        (s = hg_op_host_view_checked(c, out, &ov)))
        return s;
    if (yv.numel == 0) return HG_OK;
    smb_job j = {gv.data, yv.data, ov.data, y->dtype == HG_DTYPE_F64, log, 1, 0, 1,
                 smb_rows_f32_pick()};
    if (y->ndim) j.L = y->shape[y->ndim - 1];
    j.rows = yv.numel / j.L;
    int nw = yv.numel < 32768 ? 1 : hg_op_num_threads(c);
    if (nw > j.rows) nw = (int)j.rows;
    j.nw = nw;
    return hg_op_parallel(c, nw, smb_worker, &j, &j.nw);
}
