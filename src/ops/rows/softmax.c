// softmax / log_softmax along one axis (see softmax.h). Slices whose axis is the innermost dim
// are processed one at a time (contiguous f32 in and out directly, with no copy; contiguous f32
// rows laid end to end all at once); otherwise tiles of up to 16 neighbouring slices are
// gathered so that every cache line read is used. The f32 kernels: softmax_f32.h.
#include "ops/rows/softmax.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_ops.h"
#include "ops/reduce/reduce.h"
#include "ops/common/op_dispatch.h"
#include "ops/rows/softmax_f32.h"

#define SM_TILE 16

static void slice_f64(double* t, int64_t n, int take_log) {
    double m = -INFINITY;
    int nan = 0;
    for (int64_t i = 0; i < n; i++) { m = t[i] > m ? t[i] : m; nan |= t[i] != t[i]; }
    if (nan) m = NAN;
    if (take_log) {
        double s = 0.0;
        for (int64_t i = 0; i < n; i++) s += exp(t[i] - m);
        double ls = log(s);
        for (int64_t i = 0; i < n; i++) t[i] = (t[i] - m) - ls;
        return;
    }
    for (int64_t i = 0; i < n; i++) t[i] = exp(t[i] - m);
    double inv = 1.0 / hg_reduce_sum_f64(t, n);
    for (int64_t i = 0; i < n; i++) t[i] *= inv;
}

typedef struct sm_job {
    const unsigned char* x;
    unsigned char* o;
    hg_dtype xdt, odt;
    int64_t xsz, osz;
    int log;
    int64_t L, sx, so;                    // axis: length, x stride, out stride
    int64_t C, cx, co;                    // tile dim (0 size when none)
    int nouter;                           // other dims: sizes and strides
    int64_t os[HG_MAX_DIMS], ox[HG_MAX_DIMS], oo[HG_MAX_DIMS];
    int64_t B, tiles, items;
    int nw;
    unsigned char* scratch;
    size_t scratch_bytes;
} sm_job;

// Element i of (p, stride) in f32 / f64.
static float ld_f32(hg_dtype dt, const unsigned char* p) {
    switch (dt) {
    case HG_DTYPE_F16: return hg_f16_to_f32(*(const uint16_t*)p);
    case HG_DTYPE_BF16: return hg_bf16_to_f32(*(const uint16_t*)p);
    default: return *(const float*)p;
    }
}

// Rounds to the result dtype rdt (x's), then stores as odt.
static void st_val(hg_dtype rdt, hg_dtype odt, unsigned char* p, double v) {
    if (odt == HG_DTYPE_F32 && rdt == HG_DTYPE_F32) { *(float*)p = (float)v; return; }
    if (odt != rdt) {
        uint64_t tmp = 0;
        hg_op_store_f64(rdt, &tmp, v);
        v = hg_op_load_f64(rdt, &tmp);
    }
    hg_op_store_f64(odt, p, v);
}

static void sm_worker(void* ctx, int w) {
    sm_job* j = ctx;
    int64_t i0 = j->items * w / j->nw, i1 = j->items * (w + 1) / j->nw;
    unsigned char* buf = j->scratch + (size_t)w * j->scratch_bytes;
    int f64 = j->xdt == HG_DTYPE_F64;
    // Contiguous f32 rows laid end to end: the whole range in one call.
    if (j->xdt == HG_DTYPE_F32 && j->odt == HG_DTYPE_F32 && j->sx == 1 && j->so == 1 &&
        j->tiles == 1 && j->nouter == 1 && j->ox[0] == j->L && j->oo[0] == j->L) {
        hg_sm_rows_f32((const float*)j->x + i0 * j->L, (float*)j->o + i0 * j->L, i1 - i0, j->L,
                       j->log);
        return;
    }
    for (int64_t it = i0; it < i1; it++) {
        // No divisions where there is one tile per slice or one outer dim (short rows: two
        // 64-bit divisions per row cost as much as the row's softmax).
        int64_t outer = j->tiles == 1 ? it : it / j->tiles;
        int64_t c0 = j->tiles == 1 ? 0 : it % j->tiles * j->B;
        int64_t bx = 0, bo = 0, t = outer;
        for (int d = j->nouter - 1; d >= 1; d--) {
            int64_t k = t % j->os[d];
            t /= j->os[d];
            bx += k * j->ox[d];
            bo += k * j->oo[d];
        }
        if (j->nouter > 0) {   // the outermost dim takes what is left
            bx += t * j->ox[0];
            bo += t * j->oo[0];
        }
        int64_t nb = j->C - c0 < j->B ? j->C - c0 : j->B;
        if (j->C == 0) nb = 1;
        bx += c0 * j->cx;
        bo += c0 * j->co;
        const unsigned char* xp = j->x + bx * j->xsz;
        unsigned char* op = j->o + bo * j->osz;
        if (!f64 && nb == 1 && j->xdt == HG_DTYPE_F32 && j->odt == HG_DTYPE_F32 && j->sx == 1 &&
            j->so == 1) {
            hg_sm_slice_f32((const float*)xp, (float*)op, j->L, j->log);
            continue;
        }
        for (int64_t b = 0; b < nb; b++) {   // gather the tile: slice b at buf[b * L]
            const unsigned char* sp = xp + b * j->cx * j->xsz;
            if (f64) {
                double* d = (double*)buf + b * j->L;
                for (int64_t l = 0; l < j->L; l++) d[l] = *(const double*)(sp + l * j->sx * 8);
            } else {
                float* d = (float*)buf + b * j->L;
                for (int64_t l = 0; l < j->L; l++) d[l] = ld_f32(j->xdt, sp + l * j->sx * j->xsz);
            }
        }
        for (int64_t b = 0; b < nb; b++) {
            unsigned char* dp = op + b * j->co * j->osz;
            if (f64) {
                double* d = (double*)buf + b * j->L;
                slice_f64(d, j->L, j->log);
                for (int64_t l = 0; l < j->L; l++)
                    st_val(j->xdt, j->odt, dp + l * j->so * j->osz, d[l]);
            } else {
                float* d = (float*)buf + b * j->L;
                hg_sm_slice_f32(d, d, j->L, j->log);
                for (int64_t l = 0; l < j->L; l++)
                    st_val(j->xdt, j->odt, dp + l * j->so * j->osz, d[l]);
            }
        }
    }
}

hg_status hg_softmax_into(hg_op_ctx* c, const hg_tensor* x, int32_t axis, int log,
                          const hg_tensor* out) {
    if (!hg_dtype_is_float((int)x->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: x has dtype %s; softmax needs a float dtype (f16, bf16, f32, f64)",
                        c->fn, hg_dtype_name(x->dtype));
    int32_t ax = 0;
    hg_status s;
    if (x->ndim == 0) {
        if (axis != 0 && axis != -1)
            return hg_error(HG_ERR_OUT_OF_RANGE, "%s: axis %d is out of range for a tensor of 0 "
                            "dims (valid: -1, 0)", c->fn, (int)axis);
    } else if ((s = hg_op_axis(c, x->ndim, axis, &ax))) {
        return s;
    }
    if (hg_op_route_of(c, HG_OPF_ROWS, x->dtype) == HG_ROUTE_DEVICE)
        return hg_dev_rows(c, log ? HG_DEV_LOG_SOFTMAX : HG_DEV_SOFTMAX, x, ax, NULL, NULL, 0.0, out);
    return hg_softmax_host(c, x, ax, log, out);
}

hg_status hg_softmax_host(hg_op_ctx* c, const hg_tensor* x, int32_t ax, int log,
                          const hg_tensor* out) {
    hg_status s;
    hg_host_view xv, ov;
    if ((s = hg_op_host_view_checked(c, x, &xv)) || (s = hg_op_host_view_checked(c, out, &ov)))
        return s;
    if (xv.numel == 0) return HG_OK;
    sm_job j;
    memset(&j, 0, sizeof j);
    j.x = xv.data; j.o = ov.data;
    j.xdt = xv.dtype; j.odt = ov.dtype;
    j.xsz = (int64_t)hg_dtype_size(xv.dtype); j.osz = (int64_t)hg_dtype_size(ov.dtype);
    j.log = log;
    j.L = 1;
    if (xv.ndim > 0) { j.L = xv.shape[ax]; j.sx = xv.strides[ax]; j.so = ov.strides[ax]; }
    // The other dim with the smallest x stride becomes the tile dim when the axis is not the
    // innermost one.
    int cdim = -1;
    for (int d = 0; d < xv.ndim; d++)
        if (d != ax && xv.shape[d] > 1 &&
            (cdim < 0 || llabs(xv.strides[d]) < llabs(xv.strides[cdim])))
            cdim = d;
    int tiled = cdim >= 0 && j.L > 1 && llabs(xv.strides[cdim]) < llabs(j.sx);
    j.B = 1;
    j.C = 0;
    if (tiled) {
        j.C = xv.shape[cdim]; j.cx = xv.strides[cdim]; j.co = ov.strides[cdim];
        j.B = SM_TILE;
    }
    for (int d = 0; d < xv.ndim; d++)
        if (d != ax && !(tiled && d == cdim)) {
            j.os[j.nouter] = xv.shape[d];
            j.ox[j.nouter] = xv.strides[d];
            j.oo[j.nouter] = ov.strides[d];
            j.nouter++;
        }
    int64_t outer = 1;
    for (int d = 0; d < j.nouter; d++) outer *= j.os[d];
    j.tiles = tiled ? (j.C + j.B - 1) / j.B : 1;
    j.items = outer * j.tiles;
    int nw = xv.numel < 32768 ? 1 : hg_op_num_threads(c);
    if (nw > j.items) nw = (int)j.items;
    j.nw = nw;
    j.scratch_bytes = (size_t)j.B * (size_t)j.L * 8 + 64;
    j.scratch = malloc(j.scratch_bytes * (size_t)nw);
    if (!j.scratch)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for %lld slices of %lld elements",
                        c->fn, (long long)nw * (long long)j.B, (long long)j.L);
    s = hg_op_parallel(c, nw, sm_worker, &j, &j.nw);
    free(j.scratch);
    return s;
}
