// softmax, log_softmax, layer_norm and rms_norm on devices. Contiguous rows at a constant row
// stride of up to HG_DEV_ROWS_REG_MAX elements take the register-resident kernels of
// dev_rows_reg.c (each row read once); the rest (strided rows, longer rows, or every row when
// HOLOGRAM_DEV_ROWS=generic, for side-by-side measurements) this file's generic kernel: one
// block-cooperative Atlas ISA kernel per call. A row (the softmax axis, or the normalized dims) is handled by T lanes (the
// power of two covering it, up to 256; T x RB = 256 lanes per block, RB rows per block): the
// lanes stride through the row accumulating in f64, a shared-memory tree combines their
// partials and every lane reads the row's statistic back; a second statistic (softmax: the sum
// of exp(x - max); layer_norm: the sum of squared deviations) takes another such pass, and a
// last pass writes the row.
//
// Precision follows the CPU kernels (softmax.c, norm.c): statistics in f64; f16, bf16 and f32
// rows are transformed in f32 (exp, the scale, the split f32 mean of layer_norm), f64 rows in
// f64; results are rounded to x's dtype, then converted to out's.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"
#include "ops/rows/dev_rows_reg.h"

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

// The kernel's registers and parameters (declared in this order; names as in docs and dumps).
typedef struct rw_k {
    hg_kb b;
    uint32_t x, o, wt, bs, sv;                              // memory slots
    hg_operand row0, M, R, Rf, eps, xoff, ooff, woff, boff;  // scalars
    hg_dk_dim_params kp, ip;
    uint32_t row, t, tn, blk, lin, lin2, base, j, sw;        // u64
    hg_dk_scratch sc;                                       // dq, dr (u64), dc, dt (i64)
    uint32_t xb, ob, xo, oo, wo, bo;                        // i64
    uint32_t xv, rv, ov, cx, cy, cm, cml, cr, fx, acc, w2, st1, st2, fv, vr, last, done, tp;
    uint32_t wv, cw, bv, cb;
} rw_k;

// The loop over the row's elements j = t, t + T, ...: offsets, the load of x into cx (the
// compute type) and fx (f64), then body (which emits into k).
static void element_loop(rw_k* k, const rw_spec* s, int outputs,
                         void (*body)(rw_k* k, const rw_spec* s)) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64;
    hg_kb_if(b, k->vr);
    hg_kb_mov(b, U, k->j, hg_reg(k->t));
    hg_kb_loop(b);
    hg_kb_set_cmp(b, HG_CMP_GE, U, k->last, hg_reg(k->j), k->R);
    hg_kb_break(b, k->last);
    hg_kb_mov(b, I, k->xo, hg_reg(k->xb));
    hg_kb_mov(b, I, k->oo, hg_reg(k->ob));
    hg_kb_mov(b, I, k->wo, k->woff);
    hg_kb_mov(b, I, k->bo, k->boff);
    const uint32_t offs[4] = {k->xo, k->oo, k->wo, k->bo};
    hg_dk_emit_offsets(b, &k->ip, s->id.nd, outputs ? 4 : 1, hg_reg(k->j), offs, &k->sc);
    hg_kb_ld(b, HG_SPACE_GLOBAL, s->xdt, k->xv, k->x, hg_reg(k->xo));
    hg_kb_set_cvt(b, s->ct, s->xdt, k->cx, hg_reg(k->xv));
    hg_kb_set_cvt(b, HG_DTYPE_F64, s->xdt, k->fx, hg_reg(k->xv));
    body(k, s);
    hg_kb_set(b, HG_OP_ADD, U, k->j, hg_reg(k->j), hg_reg(k->tn), hg_none());
    hg_kb_endloop(b);
    hg_kb_endif(b);
}

// The shared tree over acc (op: add or max), then every lane's dst := the row's result.
static void tree(rw_k* k, hg_opcode op, uint32_t dst) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, F = HG_DTYPE_F64;
    hg_kb_st(b, HG_SPACE_SHARED, F, k->sv, hg_reg(k->lin), hg_reg(k->acc));
    hg_kb_bar(b);
    hg_kb_set(b, HG_OP_SHR, U, k->sw, hg_reg(k->tn), hg_imm_u64(1), hg_none());
    hg_kb_loop(b);
    hg_kb_set_cmp(b, HG_CMP_EQ, U, k->done, hg_reg(k->sw), hg_imm_u64(0));
    hg_kb_break(b, k->done);
    hg_kb_set_cmp(b, HG_CMP_LT, U, k->tp, hg_reg(k->t), hg_reg(k->sw));
    hg_kb_if(b, k->tp);
    hg_kb_set(b, HG_OP_ADD, U, k->lin2, hg_reg(k->lin), hg_reg(k->sw), hg_none());
    hg_kb_ld(b, HG_SPACE_SHARED, F, k->w2, k->sv, hg_reg(k->lin2));
    hg_kb_set(b, op, F, k->acc, hg_reg(k->acc), hg_reg(k->w2), hg_none());
    hg_kb_st(b, HG_SPACE_SHARED, F, k->sv, hg_reg(k->lin), hg_reg(k->acc));
    hg_kb_endif(b);
    hg_kb_bar(b);
    hg_kb_set(b, HG_OP_SHR, U, k->sw, hg_reg(k->sw), hg_imm_u64(1), hg_none());
    hg_kb_endloop(b);
    hg_kb_ld(b, HG_SPACE_SHARED, F, dst, k->sv, hg_reg(k->base));
    hg_kb_bar(b);
}

static void op3(rw_k* k, hg_opcode op, hg_dtype t, uint32_t d, uint32_t a, uint32_t x) {
    hg_kb_set(&k->b, op, t, d, hg_reg(a), hg_reg(x), hg_none());
}

// Loop bodies.
static void body_max(rw_k* k, const rw_spec* s) {
    (void)s;
    op3(k, HG_OP_MAX, HG_DTYPE_F64, k->acc, k->acc, k->fx);
}
static void body_sum(rw_k* k, const rw_spec* s) {
    (void)s;
    op3(k, HG_OP_ADD, HG_DTYPE_F64, k->acc, k->acc, k->fx);
}
static void body_sumsq(rw_k* k, const rw_spec* s) {
    (void)s;
    hg_kb_set(&k->b, HG_OP_FMA, HG_DTYPE_F64, k->acc, hg_reg(k->fx), hg_reg(k->fx), hg_reg(k->acc));
}
static void body_sumexp(rw_k* k, const rw_spec* s) {   // acc += exp(cx - cm), exp in ct
    op3(k, HG_OP_SUB, s->ct, k->cy, k->cx, k->cm);
    hg_kb_set(&k->b, HG_OP_EXP, s->ct, k->cy, hg_reg(k->cy), hg_none(), hg_none());
    if (s->ct == HG_DTYPE_F64) {
        op3(k, HG_OP_ADD, HG_DTYPE_F64, k->acc, k->acc, k->cy);
    } else {
        hg_kb_set_cvt(&k->b, HG_DTYPE_F64, s->ct, k->fv, hg_reg(k->cy));
        op3(k, HG_OP_ADD, HG_DTYPE_F64, k->acc, k->acc, k->fv);
    }
}
static void body_sqdev(rw_k* k, const rw_spec* s) {   // acc += (fx - mean)^2
    (void)s;
    op3(k, HG_OP_SUB, HG_DTYPE_F64, k->fv, k->fx, k->st1);
    hg_kb_set(&k->b, HG_OP_FMA, HG_DTYPE_F64, k->acc, hg_reg(k->fv), hg_reg(k->fv), hg_reg(k->acc));
}

// cy := cy (op) the parameter element at slot[off] (weight or bias) in the compute type.
static void param_term(rw_k* k, const rw_spec* s, hg_dtype pdt, uint32_t slot, uint32_t off,
                       uint32_t reg, uint32_t creg, hg_opcode op) {
    hg_kb_ld(&k->b, HG_SPACE_GLOBAL, pdt, reg, slot, hg_reg(off));
    hg_kb_set_cvt(&k->b, s->ct, pdt, creg, hg_reg(reg));
    op3(k, op, s->ct, k->cy, k->cy, creg);
}

// The output pass: cy := the transform of cx, rounded to x's dtype, converted to out's, stored.
static void body_out(rw_k* k, const rw_spec* s) {
    if (s->op == HG_DEV_SOFTMAX) {
        op3(k, HG_OP_SUB, s->ct, k->cy, k->cx, k->cm);
        hg_kb_set(&k->b, HG_OP_EXP, s->ct, k->cy, hg_reg(k->cy), hg_none(), hg_none());
        op3(k, HG_OP_MUL, s->ct, k->cy, k->cy, k->cr);
    } else if (s->op == HG_DEV_LOG_SOFTMAX) {
        op3(k, HG_OP_SUB, s->ct, k->cy, k->cx, k->cm);
        op3(k, HG_OP_SUB, s->ct, k->cy, k->cy, k->cr);
    } else {
        op3(k, HG_OP_SUB, s->ct, k->cy, k->cx, k->cm);
        op3(k, HG_OP_SUB, s->ct, k->cy, k->cy, k->cml);
        op3(k, HG_OP_MUL, s->ct, k->cy, k->cy, k->cr);
        if (s->has_w) param_term(k, s, s->wdt, k->wt, k->wo, k->wv, k->cw, HG_OP_MUL);
        if (s->has_b) param_term(k, s, s->bdt, k->bs, k->bo, k->bv, k->cb, HG_OP_ADD);
    }
    hg_kb_set_cvt(&k->b, s->xdt, s->ct, k->rv, hg_reg(k->cy));
    hg_kb_set_cvt(&k->b, s->odt, s->xdt, k->ov, hg_reg(k->rv));
    hg_kb_st(&k->b, HG_SPACE_GLOBAL, s->odt, k->o, hg_reg(k->oo), hg_reg(k->ov));
}

static void declare(rw_k* k, const rw_spec* s) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64, F = HG_DTYPE_F64, B = HG_DTYPE_BOOL;
    k->x = hg_kb_buffer(b, "x", s->xdt, 1);
    k->o = hg_kb_buffer(b, "o", s->odt, 0);
    if (s->has_w) k->wt = hg_kb_buffer(b, "wt", s->wdt, 1);
    if (s->has_b) k->bs = hg_kb_buffer(b, "bs", s->bdt, 1);
    k->row0 = hg_kb_scalar(b, "row0", U);
    k->M = hg_kb_scalar(b, "M", U);
    k->R = hg_kb_scalar(b, "R", U);
    k->Rf = hg_kb_scalar(b, "Rf", F);
    k->eps = hg_kb_scalar(b, "eps", F);
    k->xoff = hg_kb_scalar(b, "xoff", I);
    k->ooff = hg_kb_scalar(b, "ooff", I);
    k->woff = hg_kb_scalar(b, "woff", I);
    k->boff = hg_kb_scalar(b, "boff", I);
    hg_dk_param_dims(b, "k", s->od.nd, 2, &k->kp);
    hg_dk_param_dims(b, "i", s->id.nd, 4, &k->ip);
    k->sv = hg_kb_shared(b, "sv", F, RW_LANES);
    k->row = hg_kb_reg(b, "row", U);
    k->t = hg_kb_reg(b, "t", U);
    k->tn = hg_kb_reg(b, "tn", U);
    k->blk = hg_kb_reg(b, "blk", U);
    k->lin = hg_kb_reg(b, "lin", U);
    k->lin2 = hg_kb_reg(b, "lin2", U);
    k->base = hg_kb_reg(b, "base", U);
    k->j = hg_kb_reg(b, "j", U);
    k->sw = hg_kb_reg(b, "sw", U);
    hg_dk_scratch_declare(b, &k->sc);
    k->xb = hg_kb_reg(b, "xb", I);
    k->ob = hg_kb_reg(b, "ob", I);
    k->xo = hg_kb_reg(b, "xo", I);
    k->oo = hg_kb_reg(b, "oo", I);
    k->wo = hg_kb_reg(b, "wo", I);
    k->bo = hg_kb_reg(b, "bo", I);
    k->xv = hg_kb_reg(b, "xv", s->xdt);
    k->rv = hg_kb_reg(b, "rv", s->xdt);
    k->ov = hg_kb_reg(b, "ov", s->odt);
    k->cx = hg_kb_reg(b, "cx", s->ct);
    k->cy = hg_kb_reg(b, "cy", s->ct);
    k->cm = hg_kb_reg(b, "cm", s->ct);
    k->cml = hg_kb_reg(b, "cml", s->ct);
    k->cr = hg_kb_reg(b, "cr", s->ct);
    k->fx = hg_kb_reg(b, "fx", F);
    k->acc = hg_kb_reg(b, "acc", F);
    k->w2 = hg_kb_reg(b, "w2", F);
    k->st1 = hg_kb_reg(b, "st1", F);
    k->st2 = hg_kb_reg(b, "st2", F);
    k->fv = hg_kb_reg(b, "fv", F);
    k->vr = hg_kb_reg(b, "vr", B);
    k->last = hg_kb_reg(b, "last", B);
    k->done = hg_kb_reg(b, "done", B);
    k->tp = hg_kb_reg(b, "tp", B);
    if (s->has_w) {
        k->wv = hg_kb_reg(b, "wv", s->wdt);
        k->cw = hg_kb_reg(b, "cw", s->ct);
    }
    if (s->has_b) {
        k->bv = hg_kb_reg(b, "bv", s->bdt);
        k->cb = hg_kb_reg(b, "cb", s->ct);
    }
}

static hg_status build(const rw_spec* s, hg_prog** out) {
    rw_k kk;
    memset(&kk, 0, sizeof kk);
    rw_k* k = &kk;
    k->b = hg_kb_new("hg_dev_rows");
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64, F = HG_DTYPE_F64, U32 = HG_DTYPE_U32;
    declare(k, s);
    // row = ctaid.x * ntid.y + tid.y + row0; lin = tid.y * ntid.x + tid.x (the lane's slot).
    hg_kb_set_cvt(b, U, U32, k->t, hg_sreg(HG_SREG_TID_X));
    hg_kb_set_cvt(b, U, U32, k->tn, hg_sreg(HG_SREG_NTID_X));
    hg_kb_set_cvt(b, U, U32, k->blk, hg_sreg(HG_SREG_CTAID_X));
    hg_kb_set_cvt(b, U, U32, k->row, hg_sreg(HG_SREG_NTID_Y));
    op3(k, HG_OP_MUL, U, k->blk, k->blk, k->row);
    hg_kb_set_cvt(b, U, U32, k->row, hg_sreg(HG_SREG_TID_Y));
    op3(k, HG_OP_MUL, U, k->base, k->row, k->tn);
    op3(k, HG_OP_ADD, U, k->lin, k->base, k->t);
    op3(k, HG_OP_ADD, U, k->row, k->row, k->blk);
    hg_kb_set(b, HG_OP_ADD, U, k->row, hg_reg(k->row), k->row0, hg_none());
    hg_kb_set_cmp(b, HG_CMP_LT, U, k->vr, hg_reg(k->row), k->M);
    hg_kb_mov(b, I, k->xb, k->xoff);
    hg_kb_mov(b, I, k->ob, k->ooff);
    hg_kb_if(b, k->vr);
    const uint32_t offs[2] = {k->xb, k->ob};
    hg_dk_emit_offsets(b, &k->kp, s->od.nd, 2, hg_reg(k->row), offs, &k->sc);
    hg_kb_endif(b);
    int sm = s->op == HG_DEV_SOFTMAX || s->op == HG_DEV_LOG_SOFTMAX;
    // Statistic 1: the row max (softmax), sum (layer_norm) or sum of squares (rms_norm).
    hg_kb_mov(b, F, k->acc, hg_imm_f64(sm ? -INFINITY : 0.0));
    element_loop(k, s, 0, sm ? body_max : s->op == HG_DEV_LAYER_NORM ? body_sum : body_sumsq);
    tree(k, sm ? HG_OP_MAX : HG_OP_ADD, k->st1);
    if (sm) {   // statistic 2: the sum of exp(x - max), exp in the compute type
        hg_kb_set_cvt(b, s->ct, F, k->cm, hg_reg(k->st1));
        hg_kb_mov(b, F, k->acc, hg_imm_f64(0.0));
        element_loop(k, s, 0, body_sumexp);
        tree(k, HG_OP_ADD, k->st2);
    } else if (s->op == HG_DEV_LAYER_NORM) {   // statistic 2: squared deviations from the mean
        hg_kb_set(b, HG_OP_DIV, F, k->st1, hg_reg(k->st1), k->Rf, hg_none());
        hg_kb_mov(b, F, k->acc, hg_imm_f64(0.0));
        element_loop(k, s, 0, body_sqdev);
        tree(k, HG_OP_ADD, k->st2);
    } else {
        hg_kb_mov(b, F, k->st2, hg_reg(k->st1));
        hg_kb_mov(b, F, k->st1, hg_imm_f64(0.0));
    }
    // The transform's constants, then the output pass.
    if (sm) {
        if (s->op == HG_DEV_SOFTMAX)
            hg_kb_set(b, HG_OP_DIV, F, k->fv, hg_imm_f64(1.0), hg_reg(k->st2), hg_none());
        else
            hg_kb_set(b, HG_OP_LOG, F, k->fv, hg_reg(k->st2), hg_none(), hg_none());
        hg_kb_set_cvt(b, s->ct, F, k->cr, hg_reg(k->fv));
    } else {
        // mean (0 for rms) split into cm + cml in the compute type, rstd = 1/sqrt(ss/R + eps).
        hg_kb_set_cvt(b, s->ct, F, k->cm, hg_reg(k->st1));
        if (s->ct == HG_DTYPE_F64) {
            hg_kb_mov(b, F, k->cml, hg_imm_f64(0.0));
        } else {
            hg_kb_set_cvt(b, F, HG_DTYPE_F32, k->fv, hg_reg(k->cm));
            op3(k, HG_OP_SUB, F, k->fv, k->st1, k->fv);
            hg_kb_set_cvt(b, s->ct, F, k->cml, hg_reg(k->fv));
        }
        hg_kb_set(b, HG_OP_DIV, F, k->fv, hg_reg(k->st2), k->Rf, hg_none());
        hg_kb_set(b, HG_OP_ADD, F, k->fv, hg_reg(k->fv), k->eps, hg_none());
        hg_kb_set(b, HG_OP_SQRT, F, k->fv, hg_reg(k->fv), hg_none(), hg_none());
        hg_kb_set(b, HG_OP_DIV, F, k->fv, hg_imm_f64(1.0), hg_reg(k->fv), hg_none());
        hg_kb_set_cvt(b, s->ct, F, k->cr, hg_reg(k->fv));
    }
    element_loop(k, s, 1, body_out);
    return hg_dk_finish(b, s->fn, out);
}

static hg_status run(const rw_spec* s, hg_buffer xb, int64_t xoff, hg_buffer obuf, int64_t ooff,
                     const hg_tensor* w, const hg_tensor* bias, double eps) {
    if (s->M == 0 || s->R == 0) return HG_OK;
    uint32_t T = 1;
    while ((uint64_t)T < s->R && T < RW_LANES) T <<= 1;
    uint32_t RB = RW_LANES / T;
    hg_prog* prog = NULL;
    hg_status st = build(s, &prog);
    if (st) return st;
    hg_arg args[16 + 5 * 2 * HG_MAX_DIMS];
    uint64_t rows_per = RW_MAX_ROWBLOCKS * RB;
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
        st = hg_dk_launch(s->ex, s->fn, prog, &cfg, args, k);
    }
    hg_prog_free(prog);
    return st;
}

// Whether the merged dims allow the register-resident kernels: at most one outer dim (a
// constant row stride) and the row one dim of unit stride in x, out, weight and bias.
static int reg_rows(const rw_spec* s) {
    if (!hg_dev_rows_reg_ok(s->R) || s->od.nd > 1 || s->id.nd > 1) return 0;
    if (s->id.nd == 1)
        for (int t = 0; t < 4; t++)
            if (s->id.stride[t][0] != 1 && (t < 2 || (t == 2 ? s->has_w : s->has_b))) return 0;
    return 1;
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
    if (reg_rows(&s)) {
        hg_dev_rows_job j;
        memset(&j, 0, sizeof j);
        j.fn = s.fn;
        j.ex = s.ex;
        j.op = (hg_dev_rows_kind)op;
        j.xdt = s.xdt;
        j.odt = s.odt;
        j.wdt = s.wdt;
        j.bdt = s.bdt;
        j.M = s.M;
        j.R = s.R;
        j.x = x->buffer;
        j.o = out->buffer;
        j.has_w = s.has_w;
        j.has_b = s.has_b;
        if (weight) j.w = weight->buffer, j.woff = weight->offset;
        if (bias) j.b = bias->buffer, j.boff = bias->offset;
        j.xoff = x->offset;
        j.ooff = out->offset;
        j.xrs = s.od.nd ? s.od.stride[0][0] : 0;
        j.ors = s.od.nd ? s.od.stride[1][0] : 0;
        j.eps = eps;
        return hg_dev_rows_reg(&j);
    }
    return run(&s, x->buffer, x->offset, out->buffer, out->offset, weight, bias, eps);
}
