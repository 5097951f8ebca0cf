// The losses' device overrides (the overrides table, overrides.c): the device kernels of
// ops/loss/dev_loss.c write each loss (rounded, reduction NONE) or each raw f64 loss into a
// temporary that the reduce family's device kernel sums here; dev_loss.c's one-lane kernel then
// divides (MEAN) and rounds once into out. Also binary_cross_entropy's [0, 1] check on a
// device (data's flag kernel and reduce's argmax), for the entry (loss_api.c). The composite
// layer sits above both families, so these uses cross no layer.
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "composite/composite.h"
#include "ops/common/dev_ops.h"
#include "ops/loss/loss_common.h"
#include "tensor/tensor_internal.h"

// A 1-D (or 0-d) f64 tensor over `count` elements of b from element `at`.
static hg_tensor f64_vec(hg_buffer b, int64_t at, int64_t count, int scalar) {
    hg_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = HG_DTYPE_F64;
    t.offset = at;
    t.ndim = scalar ? 0 : 1;
    t.shape[0] = count;
    t.strides[0] = 1;
    return t;
}
// Sums n f64 values of `vals` (and of `cnts` when given) into sums[0] (and sums[1]), then
// finishes into out.
static hg_status reduce_finish(hg_op_ctx* c, hg_buffer vals, hg_buffer cnts, int64_t n, int mean,
                               hg_dtype rt, const hg_tensor* out) {
    hg_executor exh = {c->ex->handle};
    hg_buffer sums;
    hg_status s = hg_buffer_create(exh, HG_DTYPE_F64, 2, &sums);
    if (s) return hg_error_prefix(s, "%s (loss sums on the device)", c->fn);
    hg_tensor v = f64_vec(vals, 0, n, 0), s0 = f64_vec(sums, 0, 1, 1);
    s = hg_dev_reduce_into(c, HG_REDUCE_SUM, &v, 1u, 0.0, &s0);
    if (!s && cnts.handle) {
        hg_tensor w = f64_vec(cnts, 0, n, 0), s1 = f64_vec(sums, 1, 1, 1);
        s = hg_dev_reduce_into(c, HG_REDUCE_SUM, &w, 1u, 0.0, &s1);
    }
    if (!s) s = hg_dev_loss_finish(c, sums, mean, cnts.handle != 0, (double)n, rt, out);
    hg_buffer_destroy(sums);
    return s;
}

// The loss per element (NONE: into out), else raw f64 losses (and counts) summed and finished.
// A reduced empty loss sums a zeroed 1-element temporary: 0, or NaN for MEAN (0 / 0).
static hg_status run_reduced(const hg_cop_call* k, int64_t n, int counted,
                             hg_status (*kernel)(const hg_cop_call* k, hg_buffer raw,
                                                 hg_buffer cnt)) {
    hg_op_ctx* c = k->c;
    if (k->reduction == HG_REDUCTION_NONE) return kernel(k, (hg_buffer){0}, (hg_buffer){0});
    hg_executor exh = {c->ex->handle};
    hg_buffer raw = {0}, cnt = {0};
    size_t nt = (size_t)(n ? n : 1);
    hg_status s = hg_buffer_create(exh, HG_DTYPE_F64, nt, &raw);
    if (!s && counted) s = hg_buffer_create(exh, HG_DTYPE_F64, nt, &cnt);
    if (s) s = hg_error_prefix(s, "%s (per-element losses on the device)", c->fn);
    if (!s) s = kernel(k, raw, cnt);
    if (!s)
        s = reduce_finish(c, raw, cnt, n, k->reduction == HG_REDUCTION_MEAN,
                          (hg_dtype)k->rdtype, k->out[0]);
    if (raw.handle) hg_buffer_destroy(raw);
    if (cnt.handle) hg_buffer_destroy(cnt);
    return s;
}

// The elementwise losses' inputs broadcast onto the loss shape (checked by the entry).
typedef struct ew_geom {
    int32_t nd;
    int64_t shape[HG_MAX_DIMS];
    int64_t st[4][HG_MAX_DIMS];
} ew_geom;

static hg_status ew_geom_of(const hg_cop_call* k, ew_geom* g) {
    memset(g, 0, sizeof *g);
    hg_status s = hg_loss_shape(k->c, k->in[0], "x", k->in[1], &g->nd, g->shape);
    for (int q = 0; q < 4 && !s; q++)
        if (k->in[q]) s = hg_loss_broadcast(k->c, k->in[q], "x", g->nd, g->shape, g->st[q]);
    return s;
}

static hg_status ew_kernel(const hg_cop_call* k, hg_buffer raw, hg_buffer cnt) {
    (void)cnt;
    ew_geom g;
    hg_status s = ew_geom_of(k, &g);
    return s ? s : hg_dev_ew_loss(k->c, hg_cop_loss_kind(k->op), k->in, g.st, g.nd, g.shape,
                                  (hg_dtype)k->rdtype, raw, k->out[0]);
}

hg_status hg_cop_loss_ew_dev(const hg_cop_call* k) {
    ew_geom g;
    hg_status s = ew_geom_of(k, &g);
    return s ? s : run_reduced(k, hg_shape_numel(g.nd, g.shape), 0, ew_kernel);
}

static hg_status ce_kernel(const hg_cop_call* k, hg_buffer raw, hg_buffer cnt) {
    const hg_tensor* t = k->in[1];
    return hg_dev_cross_entropy(k->c, k->in[0], t, k->axis, hg_dtype_is_float((int)t->dtype),
                                k->ignore_index, (hg_dtype)k->rdtype, raw, cnt, k->out[0]);
}

hg_status hg_cop_ce_dev(const hg_cop_call* k) {
    const hg_tensor* x = k->in[0];
    int probs = hg_dtype_is_float((int)k->in[1]->dtype);
    hg_tensor samples = *x;   // the samples: x's shape with a class dim of 1
    samples.shape[k->axis] = 1;
    int64_t n = hg_view_numel(&samples);
    return run_reduced(k, n, !probs && k->reduction == HG_REDUCTION_MEAN, ce_kernel);
}

hg_status hg_cop_first_bad_prob_dev(hg_op_ctx* c, const hg_tensor* prob, int64_t* at,
                                    double* bad) {
    *at = -1;
    int64_t n = hg_view_numel(prob);
    if (n == 0) return HG_OK;
    hg_executor exh = {c->ex->handle};
    hg_buffer flags, pos;
    hg_status s =
        hg_buffer_create_ex(exh, HG_DTYPE_BOOL, (size_t)n, HG_BUFFER_UNINITIALIZED, &flags);
    if (s) return hg_error_prefix(s, "%s (probability check on the device)", c->fn);
    if ((s = hg_buffer_create(exh, HG_DTYPE_I64, 1, &pos))) {
        hg_buffer_destroy(flags);
        return hg_error_prefix(s, "%s (probability check on the device)", c->fn);
    }
    // flags[i] = !(0 <= p <= 1) (NaN included), in C order; the first one is argmax(flags).
    hg_tensor ft;
    memset(&ft, 0, sizeof ft);
    ft.buffer = flags;
    ft.dtype = HG_DTYPE_BOOL;
    ft.ndim = prob->ndim;
    memcpy(ft.shape, prob->shape, sizeof ft.shape);
    hg_tensor_contiguous_strides(prob->ndim, prob->shape, ft.strides);
    s = hg_dev_flag_not_unit(c, &ft, prob);
    hg_tensor fl = ft, pt;
    fl.ndim = 1;
    fl.shape[0] = n;
    fl.strides[0] = 1;
    memset(&pt, 0, sizeof pt);
    pt.buffer = pos;
    pt.dtype = HG_DTYPE_I64;
    if (!s) s = hg_dev_reduce_into(c, HG_REDUCE_ARGMAX, &fl, 1u, 0.0, &pt);
    int64_t i = 0;
    unsigned char f = 0;
    if (!s) s = hg_buffer_read(pos, 0, &i, 1);
    if (!s) s = hg_buffer_read(flags, (size_t)i, &f, 1);
    if (!s && f) {   // element i in C order: its offset in prob's buffer
        int64_t off = prob->offset, q = i;
        for (int32_t d = prob->ndim - 1; d >= 0; d--) {
            off += (q % prob->shape[d]) * prob->strides[d];
            q /= prob->shape[d];
        }
        unsigned char v[8] = {0};
        s = hg_buffer_read(prob->buffer, (size_t)off, v, 1);
        if (!s) {
            *bad = hg_op_load_f64(prob->dtype, v);
            *at = i;
        }
    }
    hg_buffer_destroy(pos);
    hg_buffer_destroy(flags);
    return s;
}
