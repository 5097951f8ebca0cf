// softmax, log_softmax, layer_norm and rms_norm on devices: one block-cooperative Atlas ISA
// kernel per call. A row (the softmax axis, or the normalized dims) is handled by T lanes (the
// power of two covering it, up to 256; T x RB = 256 lanes per block, RB rows per block): the
// lanes stride through the row accumulating in f64, a shared-memory tree combines their
// partials and every lane reads the row's statistic back; a second statistic (softmax: the sum
// of exp(x - max); layer_norm: the sum of squared deviations) takes another such pass, and a
// last pass writes the row.
//
// Precision follows the CPU kernels (softmax.c, norm.c): statistics in f64; f16, bf16 and f32
// rows are transformed in f32 (exp, the scale, the split f32 mean of layer_norm), f64 rows in
// f64; results are rounded to x's dtype, then converted to out's.
#include <stdio.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"

#define RW_LANES 256u
#define RW_MAX_ROWBLOCKS (UINT64_C(1) << 22)

typedef struct rw_spec {
    const char* fn;
    hg_executor_obj* ex;
    hg_dev_row_op op;
    hg_dtype xdt, odt, wdt, bdt, ct;   // ct: compute type of the transform (f32 or f64)
    int has_w, has_b;
    hg_dk_dims od, id;                 // outer (x, out) and inner (x, out, weight, bias) dims
    uint64_t M, R;
} rw_spec;

// The loop over the row's elements j = t, t + T, ...: offsets, the load of x into cx (the
// compute type) and fx (f64), then body.
static void element_loop(hg_sb* b, const rw_spec* s, int outputs, const char* body) {
    hg_sb_put(b, "    if vr\n    mov.u64 j, t\n    loop\n    cmp.ge.u64 last, j, R\n    break last\n"
                 "    mov.i64 xo, xb\n    mov.i64 oo, ob\n    mov.i64 wo, woff\n    mov.i64 bo, boff\n");
    static const char* const offs[4] = {"xo", "oo", "wo", "bo"};
    hg_dk_emit_offsets(b, "i", s->id.nd, outputs ? 4 : 1, "j", offs);
    hg_sb_put(b, "    ld.global.%s xv, x[xo]\n", hg_dk_dt(s->xdt));
    hg_dk_cvt(b, "cx", s->ct, "xv", s->xdt);
    hg_dk_cvt(b, "fx", HG_DTYPE_F64, "xv", s->xdt);
    hg_sb_put(b, "%s    add.u64 j, j, tn\n    endloop\n    endif\n", body);
}

// The shared tree over acc (op: "add" or "max"), then every lane's `dst` := the row's result.
static void tree(hg_sb* b, const char* op, const char* dst) {
    hg_sb_put(b, "    st.shared.f64 sv[lin], acc\n    bar\n    shr.u64 sw, tn, 1\n    loop\n"
                 "    cmp.eq.u64 done, sw, 0\n    break done\n    cmp.lt.u64 tp, t, sw\n    if tp\n"
                 "    add.u64 lin2, lin, sw\n    ld.shared.f64 w2, sv[lin2]\n"
                 "    %s.f64 acc, acc, w2\n    st.shared.f64 sv[lin], acc\n    endif\n    bar\n"
                 "    shr.u64 sw, sw, 1\n    endloop\n    ld.shared.f64 %s, sv[base]\n    bar\n",
              op, dst);
}

// cy := cy (op) the parameter element at slot[off] (weight or bias) in the compute type.
static void param_term(hg_sb* b, hg_dtype ct, hg_dtype pdt, const char* slot, const char* off,
                       const char* reg, const char* creg, const char* op) {
    hg_sb_put(b, "    ld.global.%s %s, %s[%s]\n", hg_dk_dt(pdt), reg, slot, off);
    hg_dk_cvt(b, creg, ct, reg, pdt);
    hg_sb_put(b, "    %s.%s cy, cy, %s\n", op, hg_dk_dt(ct), creg);
}

static void kernel_text(hg_sb* b, const rw_spec* s) {
    const char* c = hg_dk_dt(s->ct);
    hg_sb_put(b, ".kernel hg_dev_rows\n.param x: global const %s\n.param o: global %s\n",
              hg_dk_dt(s->xdt), hg_dk_dt(s->odt));
    if (s->has_w) hg_sb_put(b, ".param wt: global const %s\n", hg_dk_dt(s->wdt));
    if (s->has_b) hg_sb_put(b, ".param bs: global const %s\n", hg_dk_dt(s->bdt));
    hg_sb_put(b, ".param row0: u64\n.param M: u64\n.param R: u64\n.param Rf: f64\n"
                 ".param eps: f64\n.param xoff: i64\n.param ooff: i64\n.param woff: i64\n"
                 ".param boff: i64\n");
    hg_dk_param_dims(b, "k", s->od.nd, 2);
    hg_dk_param_dims(b, "i", s->id.nd, 4);
    hg_sb_put(b, ".shared sv: f64[%u]\n", RW_LANES);
    hg_sb_put(b, ".reg u64 row, t, tn, blk, lin, lin2, base, j, sw, dq, dr\n"
                 ".reg i64 xb, ob, xo, oo, wo, bo, dc, dt\n.reg %s xv\n.reg %s rv\n.reg %s ov\n"
                 ".reg %s cx, cy, cm, cml, cr\n.reg f64 fx, acc, w2, st1, st2, fv\n"
                 ".reg bool vr, last, done, tp\n",
              hg_dk_dt(s->xdt), hg_dk_dt(s->xdt), hg_dk_dt(s->odt), c);
    if (s->has_w) hg_sb_put(b, ".reg %s wv\n.reg %s cw\n", hg_dk_dt(s->wdt), c);
    if (s->has_b) hg_sb_put(b, ".reg %s bv\n.reg %s cb\n", hg_dk_dt(s->bdt), c);
    hg_sb_put(b, "    cvt.u64.u32 t, %%tid.x\n    cvt.u64.u32 tn, %%ntid.x\n"
                 "    cvt.u64.u32 blk, %%ctaid.x\n    cvt.u64.u32 row, %%ntid.y\n"
                 "    mul.u64 blk, blk, row\n    cvt.u64.u32 row, %%tid.y\n"
                 "    mul.u64 base, row, tn\n    add.u64 lin, base, t\n"
                 "    add.u64 row, row, blk\n    add.u64 row, row, row0\n"
                 "    cmp.lt.u64 vr, row, M\n    mov.i64 xb, xoff\n    mov.i64 ob, ooff\n"
                 "    if vr\n");
    static const char* const offs[2] = {"xb", "ob"};
    hg_dk_emit_offsets(b, "k", s->od.nd, 2, "row", offs);
    hg_sb_put(b, "    endif\n");
    int sm = s->op == HG_DEV_SOFTMAX || s->op == HG_DEV_LOG_SOFTMAX;
    char body[1024];
    // Statistic 1: the row max (softmax), sum (layer_norm) or sum of squares (rms_norm).
    hg_sb_put(b, "    mov.f64 acc, %s\n", sm ? "-inf" : "0");
    element_loop(b, s, 0, sm ? "    max.f64 acc, acc, fx\n"
                          : s->op == HG_DEV_LAYER_NORM ? "    add.f64 acc, acc, fx\n"
                                                       : "    fma.f64 acc, fx, fx, acc\n");
    tree(b, sm ? "max" : "add", "st1");
    if (sm) {   // statistic 2: the sum of exp(x - max), exp in the compute type
        hg_dk_cvt(b, "cm", s->ct, "st1", HG_DTYPE_F64);
        snprintf(body, sizeof body, "    sub.%s cy, cx, cm\n    exp.%s cy, cy\n"
                                    "    cvt.f64.%s fv, cy\n    add.f64 acc, acc, fv\n", c, c, c);
        if (s->ct == HG_DTYPE_F64)
            snprintf(body, sizeof body, "    sub.f64 cy, cx, cm\n    exp.f64 cy, cy\n"
                                        "    add.f64 acc, acc, cy\n");
        hg_sb_put(b, "    mov.f64 acc, 0\n");
        element_loop(b, s, 0, body);
        tree(b, "add", "st2");
    } else if (s->op == HG_DEV_LAYER_NORM) {   // statistic 2: squared deviations from the mean
        hg_sb_put(b, "    div.f64 st1, st1, Rf\n    mov.f64 acc, 0\n");
        element_loop(b, s, 0, "    sub.f64 fv, fx, st1\n    fma.f64 acc, fv, fv, acc\n");
        tree(b, "add", "st2");
    } else {
        hg_sb_put(b, "    mov.f64 st2, st1\n    mov.f64 st1, 0\n");
    }
    // The transform's constants, then the output pass.
    if (sm) {
        if (s->op == HG_DEV_SOFTMAX) {
            hg_sb_put(b, "    div.f64 fv, 1, st2\n");
            hg_dk_cvt(b, "cr", s->ct, "fv", HG_DTYPE_F64);
            snprintf(body, sizeof body, "    sub.%s cy, cx, cm\n    exp.%s cy, cy\n"
                                        "    mul.%s cy, cy, cr\n", c, c, c);
        } else {
            hg_sb_put(b, "    log.f64 fv, st2\n");
            hg_dk_cvt(b, "cr", s->ct, "fv", HG_DTYPE_F64);
            snprintf(body, sizeof body, "    sub.%s cy, cx, cm\n    sub.%s cy, cy, cr\n", c, c);
        }
    } else {
        // mean (0 for rms) split into cm + cml in the compute type, rstd = 1/sqrt(ss/R + eps).
        hg_dk_cvt(b, "cm", s->ct, "st1", HG_DTYPE_F64);
        if (s->ct == HG_DTYPE_F64) {
            hg_sb_put(b, "    mov.f64 cml, 0\n");
        } else {
            hg_sb_put(b, "    cvt.f64.f32 fv, cm\n    sub.f64 fv, st1, fv\n");
            hg_dk_cvt(b, "cml", s->ct, "fv", HG_DTYPE_F64);
        }
        hg_sb_put(b, "    div.f64 fv, st2, Rf\n    add.f64 fv, fv, eps\n    sqrt.f64 fv, fv\n"
                     "    div.f64 fv, 1, fv\n");
        hg_dk_cvt(b, "cr", s->ct, "fv", HG_DTYPE_F64);
        hg_sb nb = {0};
        hg_sb_put(&nb, "    sub.%s cy, cx, cm\n    sub.%s cy, cy, cml\n    mul.%s cy, cy, cr\n", c, c,
                  c);
        if (s->has_w) param_term(&nb, s->ct, s->wdt, "wt", "wo", "wv", "cw", "mul");
        if (s->has_b) param_term(&nb, s->ct, s->bdt, "bs", "bo", "bv", "cb", "add");
        snprintf(body, sizeof body, "%s", nb.p ? nb.p : "");
        hg_sb_free(&nb);
    }
    hg_sb tail = {0};
    hg_dk_cvt(&tail, "rv", s->xdt, "cy", s->ct);
    hg_dk_cvt(&tail, "ov", s->odt, "rv", s->xdt);
    hg_sb_put(&tail, "    st.global.%s o[oo], ov\n", hg_dk_dt(s->odt));
    size_t used = strlen(body);
    snprintf(body + used, sizeof body - used, "%s", tail.p ? tail.p : "");
    hg_sb_free(&tail);
    element_loop(b, s, 1, body);
}

static hg_status run(const rw_spec* s, hg_buffer xb, int64_t xoff, hg_buffer obuf, int64_t ooff,
                     const hg_tensor* w, const hg_tensor* bias, double eps) {
    if (s->M == 0 || s->R == 0) return HG_OK;
    uint32_t T = 1;
    while ((uint64_t)T < s->R && T < RW_LANES) T <<= 1;
    uint32_t RB = RW_LANES / T;
    hg_sb kb = {0};
    kernel_text(&kb, s);
    hg_arg args[16 + 5 * 2 * HG_MAX_DIMS];
    uint64_t rows_per = RW_MAX_ROWBLOCKS * RB;
    hg_status st = HG_OK;
    for (uint64_t row0 = 0; row0 < s->M && !st; row0 += rows_per) {
        uint64_t rows = s->M - row0 < rows_per ? s->M - row0 : rows_per;
        size_t k = 0;
        args[k++] = hg_arg_buffer(xb);
        args[k++] = hg_arg_buffer(obuf);
        if (s->has_w) args[k++] = hg_arg_buffer(w->buffer);
        if (s->has_b) args[k++] = hg_arg_buffer(bias->buffer);
        args[k++] = hg_arg_u64(row0);
        args[k++] = hg_arg_u64(row0 + rows);
        args[k++] = hg_arg_u64(s->R);
        args[k++] = hg_arg_f64((double)s->R);
        args[k++] = hg_arg_f64(eps);
        args[k++] = hg_arg_i64(xoff);
        args[k++] = hg_arg_i64(ooff);
        args[k++] = hg_arg_i64(w ? w->offset : 0);
        args[k++] = hg_arg_i64(bias ? bias->offset : 0);
        k = hg_dk_arg_dims(args, k, &s->od, 2);
        k = hg_dk_arg_dims(args, k, &s->id, 4);
        hg_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.grid.x = (uint32_t)((rows + RB - 1) / RB);
        cfg.grid.y = cfg.grid.z = 1;
        cfg.block.x = T;
        cfg.block.y = RB;
        cfg.block.z = 1;
        st = hg_dk_launch(s->ex, s->fn, &kb, &cfg, args, k);
    }
    hg_sb_free(&kb);
    return st;
}

hg_status hg_dev_rows(hg_op_ctx* c, hg_dev_row_op op, const hg_tensor* x, int32_t first_inner,
                      const hg_tensor* weight, const hg_tensor* bias, double eps,
                      const hg_tensor* out) {
    rw_spec s;
    memset(&s, 0, sizeof s);
    s.fn = c->fn;
    s.ex = c->ex;
    s.op = op;
    s.xdt = x->dtype;
    s.odt = out->dtype;
    s.ct = x->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    s.has_w = weight != NULL;
    s.has_b = bias != NULL;
    if (weight) s.wdt = weight->dtype;
    if (bias) s.bdt = bias->dtype;
    s.M = s.R = 1;
    int sm = op == HG_DEV_SOFTMAX || op == HG_DEV_LOG_SOFTMAX;
    // softmax: first_inner is the axis (the only inner dim); norms: the inner dims are the
    // trailing ones from first_inner on, and weight / bias have exactly their shape.
    for (int32_t d = 0; d < x->ndim; d++) {
        int inner = sm ? d == first_inner : d >= first_inner;
        if (inner) {
            int32_t pd = d - first_inner;
            int64_t st4[4] = {x->strides[d], out->strides[d],
                              weight && !sm ? weight->strides[pd] : 0,
                              bias && !sm ? bias->strides[pd] : 0};
            hg_dk_dims_push(&s.id, 4, x->shape[d], st4);
            s.R *= (uint64_t)x->shape[d];
        } else {
            int64_t st2[2] = {x->strides[d], out->strides[d]};
            hg_dk_dims_push(&s.od, 2, x->shape[d], st2);
            s.M *= (uint64_t)x->shape[d];
        }
    }
    hg_dk_dims_merge(&s.od, 2);
    hg_dk_dims_merge(&s.id, 4);
    return run(&s, x->buffer, x->offset, out->buffer, out->offset, weight, bias, eps);
}
