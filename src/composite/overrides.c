// The override table: the tuned kernels of the op families registered per (op, route), each
// with the dtypes and the layout predicate it takes. hg_cop_dispatch runs the call's entry when
// they hold; any other call runs the op's decomposition. Every entry is checked against the
// decomposition (and both against float64) by tests/test_composite.c.
//
// softmax / log_softmax: the row kernels take every layout and float dtype, on hosts
// (softmax.c: f32 rows through softmax_f32*.c, other axes in gathered tiles, f16/bf16 in f32,
// f64 in f64) and on devices (dev_rows.c: the register kernels, else the strided one), so the
// decomposition only runs when forced (HOLOGRAM_COMPOSITE=decomp) or on a backend with neither
// route; the same for layer_norm / rms_norm (norm.c, dev_rows.c). The backward ops' kernels
// take contiguous rows along the last axis only; cross_entropy_backward's, a last class dim
// (loss_host.c on hosts: class indices or contiguous probability rows; loss_api.c on devices:
// class indices). scaled_dot_product_attention: the fused host kernel over f32/f64 rows of
// unit stride (attention.c); on devices its decomposition. adam_step: the fused host pass
// over C-contiguous f32/f64 tensors (optim_api.c); on devices and for other dtypes and layouts
// its decomposition.
#include "base/dtype.h"
#include "composite/composite.h"
#include "ops/loss/loss_common.h"
#include "ops/common/dev_ops.h"
#include "ops/rows/dev_rows_reg.h"
#include "ops/rows/norm.h"
#include "ops/rows/rows_bw.h"
#include "ops/rows/rows_grad.h"
#include "ops/rows/softmax.h"

#define FLOATS ((1u << HG_DTYPE_F16) | (1u << HG_DTYPE_BF16) | (1u << HG_DTYPE_F32) | \
                (1u << HG_DTYPE_F64))
#define F32_F64 ((1u << HG_DTYPE_F32) | (1u << HG_DTYPE_F64))

// layer_norm's statistics (out[1], out[2]) from the decomposition, before out (which may be x
// itself) is written: where the row kernel cannot write them (devices; host statistics that
// are not C-contiguous of x's dtype). out is the row kernel's either way (hg_layer_norm's bits).
static hg_status norm_stats_decomp(const hg_cop_call* k) {
    hg_cop_call st = *k;
    st.out[0] = NULL;
    return hg_cop_run_decomp(&st);
}

static int stats_direct(const hg_cop_call* k, const hg_tensor* t) {
    return !t || (t->dtype == k->in[0]->dtype && hg_rg_c_contig(t));
}

static hg_status norm_host(const hg_cop_call* k) {
    const hg_tensor *m = k->out[1], *r = k->out[2];
    if ((m || r) && !(stats_direct(k, m) && stats_direct(k, r))) {
        hg_status s = norm_stats_decomp(k);
        if (s) return s;
        m = r = NULL;
    }
    return hg_norm_rows(k->c, k->op == HG_COP_RMS_NORM, k->in[0], k->axis, k->in[1], k->in[2],
                        k->eps, k->out[0], m, r);
}

static hg_status norm_dev(const hg_cop_call* k) {
    int rms = k->op == HG_COP_RMS_NORM;
    hg_status s = k->out[1] || k->out[2] ? norm_stats_decomp(k) : HG_OK;
    if (s) return s;
    return hg_dev_rows(k->c, rms ? HG_DEV_RMS_NORM : HG_DEV_LAYER_NORM, k->in[0],
                       k->in[0]->ndim - k->axis, k->in[1], rms ? NULL : k->in[2], k->eps,
                       k->out[0]);
}

static hg_status softmax_host(const hg_cop_call* k) {
    return hg_softmax_host(k->c, k->in[0], k->axis, k->op == HG_COP_LOG_SOFTMAX, k->out[0]);
}

static hg_status softmax_dev(const hg_cop_call* k) {
    return hg_dev_rows(k->c, k->op == HG_COP_LOG_SOFTMAX ? HG_DEV_LOG_SOFTMAX : HG_DEV_SOFTMAX,
                       k->in[0], k->axis, NULL, NULL, 0.0, k->out[0]);
}

// Host softmax gradient: C-contiguous rows along the last axis, out of y's dtype.
static int smb_host_ok(const hg_cop_call* k) {
    const hg_tensor *g = k->in[0], *y = k->in[1], *o = k->out[0];
    return o->dtype == y->dtype && (y->ndim == 0 || k->axis == y->ndim - 1) &&
           hg_rg_c_contig(g) && hg_rg_c_contig(y) && hg_rg_c_contig(o);
}

static hg_status smb_host(const hg_cop_call* k) {
    return hg_softmax_backward_rows(k->c, k->in[0], k->in[1], k->op == HG_COP_LOG_SOFTMAX_BW,
                                    k->out[0]);
}

// Device softmax gradient: rows along the last axis at a constant row stride.
static int smb_dev_ok(const hg_cop_call* k) {
    const hg_tensor* y = k->in[1];
    if (!y->ndim || k->axis != y->ndim - 1) return 0;
    const hg_tensor* ts[3] = {y, k->in[0], k->out[0]};
    uint64_t m, r;
    int64_t rs[3];
    return hg_dev_rows_layout(ts, 3, k->axis, &m, &r, rs);
}

static hg_status smb_dev(const hg_cop_call* k) {
    return hg_softmax_backward_dev(k->c, k->in[0], k->in[1], k->axis,
                                   k->op == HG_COP_LOG_SOFTMAX_BW, k->out[0]);
}

// Host norm gradients: C-contiguous f32/f64 everywhere, every tensor of x's dtype (the given
// statistics too).
static int nb_host_ok(const hg_cop_call* k) {
    const hg_tensor* x = k->in[1];
    for (int i = 0, n = k->in[3] ? 5 : 3; i < n; i++)
        if (k->in[i] && (k->in[i]->dtype != x->dtype || !hg_rg_c_contig(k->in[i]))) return 0;
    for (int o = 0; o < 3; o++)
        if (k->out[o] && (k->out[o]->dtype != x->dtype || !hg_rg_c_contig(k->out[o]))) return 0;
    return 1;
}

static hg_status nb_host(const hg_cop_call* k) {
    return hg_norm_backward_rows(k->c, k->op == HG_COP_RMS_NORM_BW, k->in[0], k->in[1], k->axis,
                                 k->in[2], k->in[3], k->in[4], k->eps, k->out[0], k->out[1],
                                 k->out[2]);
}

// Device norm gradients: grad_x from the row kernel where its rows fit; grad_weight and
// grad_bias (column sums over the rows) from the decomposition, first (grad_x may be grad).
// Given statistics: the decomposition (the register kernel recomputes them from x).
static int nb_dev_ok(const hg_cop_call* k) {
    return k->out[0] && !k->in[3] &&
           hg_norm_backward_dev_ok(k->c, k->in[0], k->in[1], k->axis, k->in[2], k->out[0]);
}

static hg_status nb_dev(const hg_cop_call* k) {
    hg_status s = HG_OK;
    if (k->out[1] || k->out[2]) {
        hg_cop_call sums = *k;
        sums.out[0] = NULL;
        s = hg_cop_run_decomp(&sums);
    }
    if (!s)
        s = hg_norm_backward_dev_gx(k->c, k->op == HG_COP_RMS_NORM_BW, k->in[0], k->in[1],
                                    k->axis, k->in[2], k->eps, k->out[0]);
    return s;
}

// The losses' host kernels (ops/loss: every layout and float dtype; the device ones: loss_dev.c).
static hg_status loss_ew_host(const hg_cop_call* k) {
    return hg_loss_ew_host(k->c, hg_cop_loss_kind(k->op), k->in, (hg_dtype)k->rdtype,
                           (hg_reduction)k->reduction, k->out[0]);
}

static hg_status ce_host(const hg_cop_call* k) {
    const hg_tensor* t = k->in[1];
    return hg_loss_ce_host(k->c, k->in[0], t, k->axis, hg_dtype_is_float((int)t->dtype),
                           k->ignore_index, (hg_dtype)k->rdtype, (hg_reduction)k->reduction,
                           k->out[0]);
}

// One entry per (op, route) at most, indexed directly: the lookup is a load and two tests (a
// 1-row softmax of 16 elements costs ~2,100 instructions; a scan of the table cost ~100 more).
#define OV(o, r, dt, when, run, name) [o][r] = {o, r, dt, when, run, name}
const hg_cop_override hg_cop_overrides[HG_COP_COUNT][HG_COP_ROUTES] = {
    OV(HG_COP_SOFTMAX, HG_ROUTE_HOST, FLOATS, NULL, softmax_host, "host rows (softmax.c)"),
    OV(HG_COP_SOFTMAX, HG_ROUTE_DEVICE, FLOATS, NULL, softmax_dev, "device rows (dev_rows.c)"),
    OV(HG_COP_LOG_SOFTMAX, HG_ROUTE_HOST, FLOATS, NULL, softmax_host, "host rows (softmax.c)"),
    OV(HG_COP_LOG_SOFTMAX, HG_ROUTE_DEVICE, FLOATS, NULL, softmax_dev,
       "device rows (dev_rows.c)"),
    OV(HG_COP_LAYER_NORM, HG_ROUTE_HOST, FLOATS, NULL, norm_host, "host rows (norm.c)"),
    OV(HG_COP_LAYER_NORM, HG_ROUTE_DEVICE, FLOATS, NULL, norm_dev, "device rows (dev_rows.c)"),
    OV(HG_COP_RMS_NORM, HG_ROUTE_HOST, FLOATS, NULL, norm_host, "host rows (norm.c)"),
    OV(HG_COP_RMS_NORM, HG_ROUTE_DEVICE, FLOATS, NULL, norm_dev, "device rows (dev_rows.c)"),
    OV(HG_COP_SOFTMAX_BW, HG_ROUTE_HOST, F32_F64, smb_host_ok, smb_host, "host contiguous rows"),
    OV(HG_COP_SOFTMAX_BW, HG_ROUTE_DEVICE, FLOATS, smb_dev_ok, smb_dev, "device register rows"),
    OV(HG_COP_LOG_SOFTMAX_BW, HG_ROUTE_HOST, F32_F64, smb_host_ok, smb_host,
       "host contiguous rows"),
    OV(HG_COP_LOG_SOFTMAX_BW, HG_ROUTE_DEVICE, FLOATS, smb_dev_ok, smb_dev,
       "device register rows"),
    OV(HG_COP_LAYER_NORM_BW, HG_ROUTE_HOST, F32_F64, nb_host_ok, nb_host, "host contiguous rows"),
    OV(HG_COP_LAYER_NORM_BW, HG_ROUTE_DEVICE, FLOATS, nb_dev_ok, nb_dev, "device register rows"),
    OV(HG_COP_RMS_NORM_BW, HG_ROUTE_HOST, F32_F64, nb_host_ok, nb_host, "host contiguous rows"),
    OV(HG_COP_RMS_NORM_BW, HG_ROUTE_DEVICE, FLOATS, nb_dev_ok, nb_dev, "device register rows"),
    OV(HG_COP_CE_BW, HG_ROUTE_HOST, F32_F64, hg_cop_ce_bw_host_ok, hg_cop_ce_bw_host,
       "host fused rows (class indices, probabilities)"),
    OV(HG_COP_CE_BW, HG_ROUTE_DEVICE, FLOATS, hg_cop_ce_bw_dev_ok, hg_cop_ce_bw_dev,
       "device register rows (class indices)"),
    OV(HG_COP_ATTENTION, HG_ROUTE_HOST, F32_F64, hg_cop_attention_host_ok,
       hg_cop_attention_host, "host fused query blocks (attention.c)"),
    OV(HG_COP_ATTENTION_BW, HG_ROUTE_HOST, F32_F64, hg_cop_attention_bw_host_ok,
       hg_cop_attention_bw_host, "host fused key/value heads (attention_bw.c)"),
    OV(HG_COP_ADAM, HG_ROUTE_HOST, F32_F64, hg_cop_adam_host_ok, hg_cop_adam_host,
       "host fused pass (adam.c)"),
    OV(HG_COP_MSE, HG_ROUTE_HOST, FLOATS, NULL, loss_ew_host, "host elementwise (loss.c)"),
    OV(HG_COP_MSE, HG_ROUTE_DEVICE, FLOATS, NULL, hg_cop_loss_ew_dev, "device lanes (dev_loss.c)"),
    OV(HG_COP_BCE, HG_ROUTE_HOST, FLOATS, NULL, loss_ew_host, "host elementwise (loss.c)"),
    OV(HG_COP_BCE, HG_ROUTE_DEVICE, FLOATS, NULL, hg_cop_loss_ew_dev, "device lanes (dev_loss.c)"),
    OV(HG_COP_BCE_LOGITS, HG_ROUTE_HOST, FLOATS, NULL, loss_ew_host, "host elementwise (loss.c)"),
    OV(HG_COP_BCE_LOGITS, HG_ROUTE_DEVICE, FLOATS, NULL, hg_cop_loss_ew_dev,
       "device lanes (dev_loss.c)"),
    OV(HG_COP_CE, HG_ROUTE_HOST, FLOATS, NULL, ce_host, "host samples (loss_ce.c)"),
    OV(HG_COP_CE, HG_ROUTE_DEVICE, FLOATS, NULL, hg_cop_ce_dev,
       "device lanes, class-index rows in registers (dev_loss.c)"),
};
_Static_assert(sizeof hg_cop_overrides / sizeof hg_cop_overrides[0] == HG_COP_COUNT,
               "a row of overrides per composite op");
