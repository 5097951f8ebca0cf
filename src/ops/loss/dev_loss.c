// The device kernels of the losses (mse, binary cross entropy with and without logits, cross
// entropy; the composite layer's device overrides, src/composite/loss_dev.c): a kernel with a
// lane per loss element (per sample for cross entropy) computes the loss in f64 exactly as
// loss.c / loss_ce.c do (the same f32 steps for f16/bf16/f32 inputs), then either stores it
// rounded to the result dtype (reduction NONE) or into an f64 temporary that the composite
// layer sums with the reduce family's device kernel; a one-lane kernel (hg_dev_loss_finish)
// divides (MEAN) and rounds once into out. Cross entropy with class indices over contiguous
// class rows takes the register row kernel instead (src/ops/rows/dev_rows_reg_bw.c: a warp or a
// block per sample, each row read once), whose per-sample losses go the same way.
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"
#include "ops/rows/dev_rows_reg.h"
#include "tensor/tensor_internal.h"

#define DL_BLOCK 256u
#define DL_LAUNCH_MAX (UINT64_C(1) << 30)

// The dtypes the kernels name most.
static const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64, F = HG_DTYPE_F64, F32 = HG_DTYPE_F32,
                      B = HG_DTYPE_BOOL;

// d = a op x and d = op a, over registers.
static void op2(hg_kb* b, hg_opcode op, hg_dtype t, uint32_t d, uint32_t a, uint32_t x) {
    hg_kb_set(b, op, t, d, hg_reg(a), hg_reg(x), hg_none());
}
static void op1(hg_kb* b, hg_opcode op, hg_dtype t, uint32_t d, uint32_t a) {
    hg_kb_set(b, op, t, d, hg_reg(a), hg_none(), hg_none());
}

// v (f64) rounded to rt (through rv), then converted to odt (through ov) and stored at
// slot[idx]: the result's one rounding, as on the CPU.
static void store_rounded(hg_kb* b, hg_dtype rt, hg_dtype odt, uint32_t rv, uint32_t ov,
                          uint32_t slot, hg_operand idx, uint32_t v) {
    hg_kb_set_cvt(b, rt, F, rv, hg_reg(v));
    hg_kb_set_cvt(b, odt, rt, ov, hg_reg(rv));
    hg_kb_st(b, HG_SPACE_GLOBAL, odt, slot, idx, hg_reg(ov));
}

// The lane's element i = gid.x + first (launches go in pieces of DL_LAUNCH_MAX lanes) and
// whether it is one (in = i < n).
static void lane_index(hg_kb* b, uint32_t i, hg_operand first, hg_operand n, uint32_t in) {
    hg_kb_set_cvt(b, U, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X));
    hg_kb_set(b, HG_OP_ADD, U, i, hg_reg(i), first, hg_none());
    hg_kb_set_cmp(b, HG_CMP_LT, U, in, hg_reg(i), n);
}

// The finishing kernel: v = s[0], divided (MEAN) by s[1] when counted else by nf, rounded to
// rt and stored as out's dtype at o[ooff].
static hg_status build_finish(const char* fn, int mean, int counted, hg_dtype rt, hg_dtype odt,
                              hg_prog** out) {
    hg_kb kb = hg_kb_new("hg_dev_loss_finish");
    hg_kb* b = &kb;
    uint32_t s = hg_kb_buffer(b, "s", F, 1), o = hg_kb_buffer(b, "o", odt, 0);
    hg_operand ooff = hg_kb_scalar(b, "ooff", I), nf = hg_kb_scalar(b, "nf", F);
    uint32_t v = hg_kb_reg(b, "v", F), d = hg_kb_reg(b, "d", F);
    uint32_t rv = hg_kb_reg(b, "rv", rt), ov = hg_kb_reg(b, "ov", odt);
    hg_kb_ld(b, HG_SPACE_GLOBAL, F, v, s, hg_imm_i64(0));
    if (mean && counted) {
        hg_kb_ld(b, HG_SPACE_GLOBAL, F, d, s, hg_imm_i64(1));
        op2(b, HG_OP_DIV, F, v, v, d);
    } else if (mean) {
        hg_kb_set(b, HG_OP_DIV, F, v, hg_reg(v), nf, hg_none());
    }
    store_rounded(b, rt, odt, rv, ov, o, ooff, v);
    return hg_dk_finish(b, fn, out);
}

hg_status hg_dev_loss_finish(hg_op_ctx* c, hg_buffer sums, int mean, int counted, double n,
                             hg_dtype rt, const hg_tensor* out) {
    hg_prog* prog = NULL;
    hg_status s = build_finish(c->fn, mean, counted, rt, out->dtype, &prog);
    if (s) return s;
    hg_arg args[4] = {hg_arg_buffer(sums), hg_arg_buffer(out->buffer), hg_arg_i64(out->offset),
                      hg_arg_f64(n)};
    hg_launch_config cfg = hg_launch_1d(1, 1);
    s = hg_dk_launch(c->ex, c->fn, prog, &cfg, args, 4);
    hg_prog_free(prog);
    return s;
}

static hg_status launch_lanes(hg_op_ctx* c, const hg_prog* prog, uint64_t n, hg_arg* args,
                              size_t nargs, size_t first_slot) {
    hg_status s = HG_OK;
    for (uint64_t first = 0; first < n && !s; first += DL_LAUNCH_MAX) {
        uint64_t cnt = n - first < DL_LAUNCH_MAX ? n - first : DL_LAUNCH_MAX;
        args[first_slot] = hg_arg_u64(first);
        hg_launch_config cfg = hg_launch_1d(cnt, DL_BLOCK);
        s = hg_dk_launch(c->ex, c->fn, prog, &cfg, args, nargs);
    }
    return s;
}

// ---------------------------------------------------------------------------------------------
// Element-wise losses (hg_dev_ew_loss)
// ---------------------------------------------------------------------------------------------
// The inputs by index: x, t (target), w (weight), pw (pos_weight); w and pw may be absent.
static const char* const EL_NAME[4] = {"x", "t", "w", "pw"};

typedef struct el_spec {
    hg_dev_loss kind;
    hg_dtype idt[4];    // the present inputs' dtypes
    int has[4];
    hg_dtype rt, odt;   // odt: out's dtype (reduction NONE), else f64
    int write;          // reduction NONE: the loss is rounded to rt and stored as odt
    int32_t nd;
} el_spec;

// The kernel's slots, parameters and registers (declared in this order; names as in dumps).
typedef struct el_k {
    hg_kb b;
    uint32_t o, in[4];                      // memory slots
    hg_operand n, first, ooff, off[4];      // scalars (off: xoff, toff, woff, pwoff)
    hg_dk_dim_params dp;
    uint32_t i;                             // u64
    hg_dk_scratch sc;                       // dq, dr (u64), dc, dt (i64)
    uint32_t oo, ro[4];                     // i64 (ro: xo, to, wo, po)
    uint32_t inr, q;                        // bool
    uint32_t xd, td, wd, pd, l, lp, lq, sp, lw;   // f64
    uint32_t xf, lpf, lqf, u, lu, um, ef;   // f32
    uint32_t ud, rv, ov, iv[4];             // f64, rt, odt, the inputs' dtypes (xv, tv, ...)
} el_k;

static void el_declare(el_k* k, const el_spec* s) {
    static const char* const off_name[4] = {"xoff", "toff", "woff", "pwoff"};
    static const char* const ro_name[4] = {"xo", "to", "wo", "po"};
    static const char* const iv_name[4] = {"xv", "tv", "wv", "pwv"};
    hg_kb* b = &k->b;
    k->o = hg_kb_buffer(b, "o", s->odt, 0);
    for (int q = 0; q < 4; q++)
        if (s->has[q]) k->in[q] = hg_kb_buffer(b, EL_NAME[q], s->idt[q], 1);
    k->n = hg_kb_scalar(b, "n", U);
    k->first = hg_kb_scalar(b, "first", U);
    k->ooff = hg_kb_scalar(b, "ooff", I);
    for (int q = 0; q < 4; q++) k->off[q] = hg_kb_scalar(b, off_name[q], I);
    hg_dk_param_dims(b, "d", s->nd, 5, &k->dp);
    k->i = hg_kb_reg(b, "i", U);
    hg_dk_scratch_declare(b, &k->sc);
    k->oo = hg_kb_reg(b, "oo", I);
    for (int q = 0; q < 4; q++) k->ro[q] = hg_kb_reg(b, ro_name[q], I);
    k->inr = hg_kb_reg(b, "in", B);
    k->q = hg_kb_reg(b, "q", B);
    k->xd = hg_kb_reg(b, "xd", F);
    k->td = hg_kb_reg(b, "td", F);
    k->wd = hg_kb_reg(b, "wd", F);
    k->pd = hg_kb_reg(b, "pd", F);
    k->l = hg_kb_reg(b, "l", F);
    k->lp = hg_kb_reg(b, "lp", F);
    k->lq = hg_kb_reg(b, "lq", F);
    k->sp = hg_kb_reg(b, "sp", F);
    k->lw = hg_kb_reg(b, "lw", F);
    k->xf = hg_kb_reg(b, "xf", F32);
    k->lpf = hg_kb_reg(b, "lpf", F32);
    k->lqf = hg_kb_reg(b, "lqf", F32);
    k->u = hg_kb_reg(b, "u", F32);
    k->lu = hg_kb_reg(b, "lu", F32);
    k->um = hg_kb_reg(b, "um", F32);
    k->ef = hg_kb_reg(b, "ef", F32);
    k->ud = hg_kb_reg(b, "ud", F);
    k->rv = hg_kb_reg(b, "rv", s->rt);
    k->ov = hg_kb_reg(b, "ov", s->odt);
    for (int q = 0; q < 4; q++)
        if (s->has[q]) k->iv[q] = hg_kb_reg(b, iv_name[q], s->idt[q]);
}

// e = exp(-|a|) in t.
static void exp_neg_abs(hg_kb* b, hg_dtype t, uint32_t e, uint32_t a) {
    op1(b, HG_OP_ABS, t, e, a);
    op1(b, HG_OP_NEG, t, e, e);
    op1(b, HG_OP_EXP, t, e, e);
}

// dst = log1p(e) for e in [0, 1] without log1p, in t: log(u) * e / (u - 1) with u = 1 + e
// (exact enough in every float type; e itself when u rounds to 1). u, lu, um: scratch.
static void log1p_small(el_k* k, hg_dtype t, uint32_t dst, uint32_t e, uint32_t u, uint32_t lu,
                        uint32_t um) {
    hg_kb* b = &k->b;
    hg_kb_set(b, HG_OP_ADD, t, u, hg_reg(e), hg_kb_imm(t, 1), hg_none());
    op1(b, HG_OP_LOG, t, lu, u);
    hg_kb_set(b, HG_OP_SUB, t, um, hg_reg(u), hg_kb_imm(t, 1), hg_none());
    hg_kb_set_cmp(b, HG_CMP_EQ, t, k->q, hg_reg(um), hg_kb_imm(t, 0));
    op2(b, HG_OP_MUL, t, lu, lu, e);
    op2(b, HG_OP_DIV, t, lu, lu, um);
    hg_kb_set(b, HG_OP_SEL, t, dst, hg_reg(k->q), hg_reg(e), hg_reg(lu));
}

static void mse(el_k* k) {
    op2(&k->b, HG_OP_SUB, F, k->l, k->xd, k->td);
    op2(&k->b, HG_OP_MUL, F, k->l, k->l, k->l);
}

// -(t lp + (1 - t) lq), each log clamped at -100 (f32 logs below f64, as torch).
static void bce(el_k* k, int f64) {
    hg_kb* b = &k->b;
    if (f64) {
        op1(b, HG_OP_LOG, F, k->lp, k->xd);
        hg_kb_set(b, HG_OP_SUB, F, k->lq, hg_imm_f64(1), hg_reg(k->xd), hg_none());
        op1(b, HG_OP_LOG, F, k->lq, k->lq);
    } else {
        hg_kb_set_cvt(b, F32, F, k->xf, hg_reg(k->xd));
        op1(b, HG_OP_LOG, F32, k->lpf, k->xf);
        hg_kb_set(b, HG_OP_SUB, F32, k->lqf, hg_imm_f32(1), hg_reg(k->xf), hg_none());
        op1(b, HG_OP_LOG, F32, k->lqf, k->lqf);
        hg_kb_set_cvt(b, F, F32, k->lp, hg_reg(k->lpf));
        hg_kb_set_cvt(b, F, F32, k->lq, hg_reg(k->lqf));
    }
    hg_kb_set(b, HG_OP_MAX, F, k->lp, hg_reg(k->lp), hg_imm_f64(-100), hg_none());
    hg_kb_set(b, HG_OP_MAX, F, k->lq, hg_reg(k->lq), hg_imm_f64(-100), hg_none());
    op2(b, HG_OP_MUL, F, k->lp, k->td, k->lp);
    hg_kb_set(b, HG_OP_SUB, F, k->l, hg_imm_f64(1), hg_reg(k->td), hg_none());
    op2(b, HG_OP_MUL, F, k->l, k->l, k->lq);
    op2(b, HG_OP_ADD, F, k->l, k->lp, k->l);
    op1(b, HG_OP_NEG, F, k->l, k->l);
}

// (1 - t) x + lw sp, sp = log1p(exp(-|x|)) + max(-x, 0), lw = 1 + (pw - 1) t.
static void bce_logits(el_k* k, int f64, int has_pw) {
    hg_kb* b = &k->b;
    if (f64) {
        exp_neg_abs(b, F, k->ud, k->xd);
        log1p_small(k, F, k->sp, k->ud, k->l, k->lp, k->lq);
    } else {
        hg_kb_set_cvt(b, F32, F, k->xf, hg_reg(k->xd));
        exp_neg_abs(b, F32, k->ef, k->xf);
        log1p_small(k, F32, k->lpf, k->ef, k->u, k->lu, k->um);
        hg_kb_set_cvt(b, F, F32, k->sp, hg_reg(k->lpf));
    }
    op1(b, HG_OP_NEG, F, k->lq, k->xd);
    hg_kb_set(b, HG_OP_MAX, F, k->lq, hg_reg(k->lq), hg_imm_f64(0), hg_none());
    op2(b, HG_OP_ADD, F, k->sp, k->sp, k->lq);
    if (has_pw) {
        hg_kb_set(b, HG_OP_SUB, F, k->lw, hg_reg(k->pd), hg_imm_f64(1), hg_none());
        hg_kb_set(b, HG_OP_FMA, F, k->lw, hg_reg(k->lw), hg_reg(k->td), hg_imm_f64(1));
    } else {
        hg_kb_mov(b, F, k->lw, hg_imm_f64(1));
    }
    hg_kb_set(b, HG_OP_SUB, F, k->l, hg_imm_f64(1), hg_reg(k->td), hg_none());
    op2(b, HG_OP_MUL, F, k->l, k->l, k->xd);
    op2(b, HG_OP_MUL, F, k->lw, k->lw, k->sp);
    op2(b, HG_OP_ADD, F, k->l, k->l, k->lw);
}

// The kernel: lane i computes the loss of element i into l (times w when given) and stores it.
static hg_status el_build(const char* fn, const el_spec* s, hg_prog** out) {
    el_k kk;
    memset(&kk, 0, sizeof kk);
    el_k* k = &kk;
    k->b = hg_kb_new("hg_dev_ew_loss");
    hg_kb* b = &k->b;
    el_declare(k, s);
    lane_index(b, k->i, k->first, k->n, k->inr);
    hg_kb_if(b, k->inr);
    hg_kb_mov(b, I, k->oo, k->ooff);
    for (int q = 0; q < 4; q++) hg_kb_mov(b, I, k->ro[q], k->off[q]);
    const uint32_t offs[5] = {k->oo, k->ro[0], k->ro[1], k->ro[2], k->ro[3]};
    hg_dk_emit_offsets(b, &k->dp, s->nd, 5, hg_reg(k->i), offs, &k->sc);
    const uint32_t fd[4] = {k->xd, k->td, k->wd, k->pd};
    for (int q = 0; q < 4; q++)
        if (s->has[q]) {
            hg_kb_ld(b, HG_SPACE_GLOBAL, s->idt[q], k->iv[q], k->in[q], hg_reg(k->ro[q]));
            hg_kb_set_cvt(b, F, s->idt[q], fd[q], hg_reg(k->iv[q]));
        }
    int f64 = s->rt == HG_DTYPE_F64;
    switch (s->kind) {
    case HG_DEV_MSE: mse(k); break;
    case HG_DEV_BCE: bce(k, f64); break;
    default: bce_logits(k, f64, s->has[3]); break;
    }
    if (s->has[2]) op2(b, HG_OP_MUL, F, k->l, k->l, k->wd);
    if (s->write) store_rounded(b, s->rt, s->odt, k->rv, k->ov, k->o, hg_reg(k->oo), k->l);
    else hg_kb_st(b, HG_SPACE_GLOBAL, F, k->o, hg_reg(k->oo), hg_reg(k->l));
    hg_kb_endif(b);
    return hg_dk_finish(b, fn, out);
}

hg_status hg_dev_ew_loss(hg_op_ctx* c, hg_dev_loss kind, const hg_tensor* const* in,
                         int64_t st[4][HG_MAX_DIMS], int32_t nd, const int64_t* shape,
                         hg_dtype rt, hg_buffer raw, const hg_tensor* out) {
    int64_t n = hg_shape_numel(nd, shape);
    int write = !raw.handle;
    if (n == 0) return HG_OK;
    int64_t tst[HG_MAX_DIMS];
    hg_tensor_contiguous_strides(nd, shape, tst);
    hg_dk_dims dims;
    memset(&dims, 0, sizeof dims);
    for (int32_t d = 0; d < nd; d++) {
        int64_t s5[5] = {write ? out->strides[d] : tst[d], st[0][d], st[1][d],
                         in[2] ? st[2][d] : 0, in[3] ? st[3][d] : 0};
        hg_dk_dims_push(&dims, 5, shape[d], s5);
    }
    hg_dk_dims_merge(&dims, 5);
    el_spec es;
    memset(&es, 0, sizeof es);
    es.kind = kind;
    for (int q = 0; q < 4; q++)
        if (in[q]) {
            es.has[q] = 1;
            es.idt[q] = in[q]->dtype;
        }
    es.rt = rt;
    es.odt = write ? out->dtype : HG_DTYPE_F64;
    es.write = write;
    es.nd = dims.nd;
    hg_arg args[16 + 6 * HG_MAX_DIMS];
    size_t k = 0;
    args[k++] = hg_arg_buffer(write ? out->buffer : raw);
    for (int q = 0; q < 4; q++)
        if (in[q]) args[k++] = hg_arg_buffer(in[q]->buffer);
    args[k++] = hg_arg_u64((uint64_t)n);
    size_t first_slot = k;
    args[k++] = hg_arg_u64(0);
    args[k++] = hg_arg_i64(write ? out->offset : 0);
    for (int q = 0; q < 4; q++) args[k++] = hg_arg_i64(in[q] ? in[q]->offset : 0);
    k = hg_dk_arg_dims(args, k, &dims, 5);
    hg_prog* prog = NULL;
    hg_status s = el_build(c->fn, &es, &prog);
    if (!s) s = launch_lanes(c, prog, (uint64_t)n, args, k, first_slot);
    hg_prog_free(prog);
    return s;
}

// ---------------------------------------------------------------------------------------------
// Cross entropy (hg_dev_cross_entropy)
// ---------------------------------------------------------------------------------------------
typedef struct ce_spec {
    hg_dtype xdt, tdt, ct, rt, odt;   // ct: x's compute type (f32, or f64 for f64 x)
    int probs;                        // t holds class probabilities (else class indices)
    int counted;                      // cn[] gets 1 per sample not ignored (MEAN of indices)
    int write;                        // reduction NONE: rounded to rt, stored as odt
    int32_t nd;
} ce_spec;

// The kernel's slots, parameters and registers (declared in this order; names as in dumps).
typedef struct ce_k {
    hg_kb b;
    uint32_t o, x, t, cn;                                           // memory slots
    hg_operand n, first, ooff, xoff, toff, C, xcs, tcs, ign;        // scalars
    hg_dk_dim_params dp;
    uint32_t i;                                                     // u64
    hg_dk_scratch sc;                                               // dq, dr (u64), dc, dt (i64)
    uint32_t cls;                                                   // u64 "k": the class
    uint32_t oo, xo, to, xk, tk, ti;                                // i64
    uint32_t inr, q, nn, last;                                      // bool
    uint32_t xv, tv, v, m, e;                                       // x's, t's, ct
    uint32_t se, lse, md, l, fv, tf, one, rv, ov;                   // f64, rt, odt
} ce_k;

static void ce_declare(ce_k* k, const ce_spec* s) {
    hg_kb* b = &k->b;
    k->o = hg_kb_buffer(b, "o", s->odt, 0);
    k->x = hg_kb_buffer(b, "x", s->xdt, 1);
    k->t = hg_kb_buffer(b, "t", s->tdt, 1);
    if (s->counted) k->cn = hg_kb_buffer(b, "cn", F, 0);
    k->n = hg_kb_scalar(b, "n", U);
    k->first = hg_kb_scalar(b, "first", U);
    k->ooff = hg_kb_scalar(b, "ooff", I);
    k->xoff = hg_kb_scalar(b, "xoff", I);
    k->toff = hg_kb_scalar(b, "toff", I);
    k->C = hg_kb_scalar(b, "C", U);
    k->xcs = hg_kb_scalar(b, "xcs", I);
    k->tcs = hg_kb_scalar(b, "tcs", I);
    k->ign = hg_kb_scalar(b, "ign", I);
    hg_dk_param_dims(b, "d", s->nd, 3, &k->dp);
    k->i = hg_kb_reg(b, "i", U);
    hg_dk_scratch_declare(b, &k->sc);
    k->cls = hg_kb_reg(b, "k", U);
    k->oo = hg_kb_reg(b, "oo", I);
    k->xo = hg_kb_reg(b, "xo", I);
    k->to = hg_kb_reg(b, "to", I);
    k->xk = hg_kb_reg(b, "xk", I);
    k->tk = hg_kb_reg(b, "tk", I);
    k->ti = hg_kb_reg(b, "ti", I);
    k->inr = hg_kb_reg(b, "in", B);
    k->q = hg_kb_reg(b, "q", B);
    k->nn = hg_kb_reg(b, "nn", B);
    k->last = hg_kb_reg(b, "last", B);
    k->xv = hg_kb_reg(b, "xv", s->xdt);
    k->tv = hg_kb_reg(b, "tv", s->tdt);
    k->v = hg_kb_reg(b, "v", s->ct);
    k->m = hg_kb_reg(b, "m", s->ct);
    k->e = hg_kb_reg(b, "e", s->ct);
    k->se = hg_kb_reg(b, "se", F);
    k->lse = hg_kb_reg(b, "lse", F);
    k->md = hg_kb_reg(b, "md", F);
    k->l = hg_kb_reg(b, "l", F);
    k->fv = hg_kb_reg(b, "fv", F);
    k->tf = hg_kb_reg(b, "tf", F);
    k->one = hg_kb_reg(b, "one", F);
    k->rv = hg_kb_reg(b, "rv", s->rt);
    k->ov = hg_kb_reg(b, "ov", s->odt);
}

// The loop over the sample's classes k = 0 .. C-1: x_k loaded into v (the compute type) and,
// with_t, t_k into tv; class_loop_end closes it.
static void class_loop_begin(ce_k* k, const ce_spec* s, int with_t) {
    hg_kb* b = &k->b;
    hg_kb_mov(b, U, k->cls, hg_imm_u64(0));
    hg_kb_mov(b, I, k->xk, hg_reg(k->xo));
    if (with_t) hg_kb_mov(b, I, k->tk, hg_reg(k->to));
    hg_kb_loop(b);
    hg_kb_set_cmp(b, HG_CMP_GE, U, k->last, hg_reg(k->cls), k->C);
    hg_kb_break(b, k->last);
    hg_kb_ld(b, HG_SPACE_GLOBAL, s->xdt, k->xv, k->x, hg_reg(k->xk));
    if (with_t) hg_kb_ld(b, HG_SPACE_GLOBAL, s->tdt, k->tv, k->t, hg_reg(k->tk));
    hg_kb_set_cvt(b, s->ct, s->xdt, k->v, hg_reg(k->xv));
}

static void class_loop_end(ce_k* k, int with_t) {
    hg_kb* b = &k->b;
    hg_kb_set(b, HG_OP_ADD, I, k->xk, hg_reg(k->xk), k->xcs, hg_none());
    if (with_t) hg_kb_set(b, HG_OP_ADD, I, k->tk, hg_reg(k->tk), k->tcs, hg_none());
    hg_kb_set(b, HG_OP_ADD, U, k->cls, hg_reg(k->cls), hg_imm_u64(1), hg_none());
    hg_kb_endloop(b);
}

// md = m = the max over classes (NaN sticking), lse = log(sum of exp(x - m)), the sum in f64.
static void max_and_log_sum_exp(ce_k* k, const ce_spec* s) {
    hg_kb* b = &k->b;
    hg_kb_mov(b, s->ct, k->m, hg_kb_imm(s->ct, -INFINITY));
    class_loop_begin(k, s, 0);
    hg_kb_set_cmp(b, HG_CMP_GT, s->ct, k->q, hg_reg(k->v), hg_reg(k->m));
    hg_kb_set_cmp(b, HG_CMP_NE, s->ct, k->nn, hg_reg(k->v), hg_reg(k->v));
    op2(b, HG_OP_OR, B, k->q, k->q, k->nn);
    hg_kb_set(b, HG_OP_SEL, s->ct, k->m, hg_reg(k->q), hg_reg(k->v), hg_reg(k->m));
    class_loop_end(k, 0);
    hg_kb_mov(b, F, k->se, hg_imm_f64(0));
    class_loop_begin(k, s, 0);
    op2(b, HG_OP_SUB, s->ct, k->e, k->v, k->m);
    op1(b, HG_OP_EXP, s->ct, k->e, k->e);
    hg_kb_set_cvt(b, F, s->ct, k->fv, hg_reg(k->e));
    op2(b, HG_OP_ADD, F, k->se, k->se, k->fv);
    class_loop_end(k, 0);
    op1(b, HG_OP_LOG, F, k->lse, k->se);
    hg_kb_set_cvt(b, F, s->ct, k->md, hg_reg(k->m));
}

// lse - x_target as (m - x_t) + log(se); an ignored sample has loss 0, not counted (one = 0).
static void class_index_loss(ce_k* k, const ce_spec* s) {
    hg_kb* b = &k->b;
    hg_kb_ld(b, HG_SPACE_GLOBAL, s->tdt, k->tv, k->t, hg_reg(k->to));
    hg_kb_set_cvt(b, I, s->tdt, k->ti, hg_reg(k->tv));
    hg_kb_mov(b, F, k->l, hg_imm_f64(0));
    hg_kb_set_cmp(b, HG_CMP_EQ, I, k->q, hg_reg(k->ti), k->ign);
    hg_kb_set(b, HG_OP_SEL, F, k->one, hg_reg(k->q), hg_imm_f64(0), hg_reg(k->one));
    op1(b, HG_OP_NOT, B, k->q, k->q);
    hg_kb_if(b, k->q);
    hg_kb_set(b, HG_OP_MUL, I, k->xk, hg_reg(k->ti), k->xcs, hg_none());
    op2(b, HG_OP_ADD, I, k->xk, k->xk, k->xo);
    hg_kb_ld(b, HG_SPACE_GLOBAL, s->xdt, k->xv, k->x, hg_reg(k->xk));
    hg_kb_set_cvt(b, s->ct, s->xdt, k->v, hg_reg(k->xv));
    hg_kb_set_cvt(b, F, s->ct, k->fv, hg_reg(k->v));
    op2(b, HG_OP_SUB, F, k->l, k->md, k->fv);
    op2(b, HG_OP_ADD, F, k->l, k->l, k->lse);
    hg_kb_endif(b);
}

// sum_c t_c ((m - x_c) + log(se)).
static void class_prob_loss(ce_k* k, const ce_spec* s) {
    hg_kb* b = &k->b;
    hg_kb_mov(b, F, k->l, hg_imm_f64(0));
    class_loop_begin(k, s, 1);
    hg_kb_set_cvt(b, F, s->ct, k->fv, hg_reg(k->v));
    hg_kb_set_cvt(b, F, s->tdt, k->tf, hg_reg(k->tv));
    op2(b, HG_OP_SUB, F, k->fv, k->md, k->fv);
    op2(b, HG_OP_ADD, F, k->fv, k->fv, k->lse);
    hg_kb_set(b, HG_OP_FMA, F, k->l, hg_reg(k->tf), hg_reg(k->fv), hg_reg(k->l));
    class_loop_end(k, 1);
}

// The kernel: lane i computes sample i's loss into l and stores it (and its count).
static hg_status ce_build(const char* fn, const ce_spec* s, hg_prog** out) {
    ce_k kk;
    memset(&kk, 0, sizeof kk);
    ce_k* k = &kk;
    k->b = hg_kb_new("hg_dev_cross_entropy");
    hg_kb* b = &k->b;
    ce_declare(k, s);
    lane_index(b, k->i, k->first, k->n, k->inr);
    hg_kb_if(b, k->inr);
    hg_kb_mov(b, I, k->oo, k->ooff);
    hg_kb_mov(b, I, k->xo, k->xoff);
    hg_kb_mov(b, I, k->to, k->toff);
    const uint32_t offs[3] = {k->oo, k->xo, k->to};
    hg_dk_emit_offsets(b, &k->dp, s->nd, 3, hg_reg(k->i), offs, &k->sc);
    max_and_log_sum_exp(k, s);
    hg_kb_mov(b, F, k->one, hg_imm_f64(1));
    if (s->probs) class_prob_loss(k, s);
    else class_index_loss(k, s);
    if (s->write) {
        store_rounded(b, s->rt, s->odt, k->rv, k->ov, k->o, hg_reg(k->oo), k->l);
    } else {
        hg_kb_st(b, HG_SPACE_GLOBAL, F, k->o, hg_reg(k->oo), hg_reg(k->l));
        if (s->counted) hg_kb_st(b, HG_SPACE_GLOBAL, F, k->cn, hg_reg(k->oo), hg_reg(k->one));
    }
    hg_kb_endif(b);
    return hg_dk_finish(b, fn, out);
}

// Whether the register row kernel serves this cross-entropy: class indices, the class dim
// contiguous, the samples (dims, merged over out, x and t) at one stride.
static int ce_rows(const hg_tensor* x, int32_t cdim, int probs, const hg_dk_dims* dims) {
    int64_t C = x->shape[cdim];
    return !probs && dims->nd <= 1 && C >= 1 && (x->strides[cdim] == 1 || C == 1) &&
           hg_dev_rows_reg_ok((uint64_t)C);
}

hg_status hg_dev_cross_entropy(hg_op_ctx* c, const hg_tensor* x, const hg_tensor* t, int32_t cdim,
                               int probs, int64_t ignore_index, hg_dtype rt, hg_buffer raw,
                               hg_buffer cnt, const hg_tensor* out) {
    // Sample dims: x's without the class dim; t's likewise for probabilities.
    int32_t ns = 0;
    int64_t sshape[HG_MAX_DIMS] = {0}, xs[HG_MAX_DIMS] = {0}, ts[HG_MAX_DIMS] = {0};
    for (int32_t d = 0, q = 0; d < x->ndim; d++)
        if (d != cdim) {
            sshape[ns] = x->shape[d];
            xs[ns] = x->strides[d];
            ts[ns] = probs ? t->strides[d] : t->strides[q];
            ns++;
            q++;
        }
    int64_t n = hg_shape_numel(ns, sshape);
    int write = !raw.handle, counted = cnt.handle != 0;
    if (n == 0) return HG_OK;
    hg_status s = HG_OK;
    int64_t tst[HG_MAX_DIMS];
    hg_tensor_contiguous_strides(ns, sshape, tst);
    hg_dk_dims dims;
    memset(&dims, 0, sizeof dims);
    for (int32_t d = 0; d < ns; d++) {
        int64_t s3[3] = {write ? out->strides[d] : tst[d], xs[d], ts[d]};
        hg_dk_dims_push(&dims, 3, sshape[d], s3);
    }
    hg_dk_dims_merge(&dims, 3);
    ce_spec cs;
    memset(&cs, 0, sizeof cs);
    cs.xdt = x->dtype;
    cs.tdt = t->dtype;
    cs.ct = x->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    cs.rt = rt;
    cs.odt = write ? out->dtype : HG_DTYPE_F64;
    cs.probs = probs;
    cs.counted = counted;
    cs.write = write;
    cs.nd = dims.nd;
    hg_arg args[20 + 4 * HG_MAX_DIMS];
    size_t k = 0;
    args[k++] = hg_arg_buffer(write ? out->buffer : raw);
    args[k++] = hg_arg_buffer(x->buffer);
    args[k++] = hg_arg_buffer(t->buffer);
    if (counted) args[k++] = hg_arg_buffer(cnt);
    args[k++] = hg_arg_u64((uint64_t)n);
    size_t first_slot = k;
    args[k++] = hg_arg_u64(0);
    args[k++] = hg_arg_i64(write ? out->offset : 0);
    args[k++] = hg_arg_i64(x->offset);
    args[k++] = hg_arg_i64(t->offset);
    args[k++] = hg_arg_u64((uint64_t)x->shape[cdim]);
    args[k++] = hg_arg_i64(x->strides[cdim]);
    args[k++] = hg_arg_i64(probs ? t->strides[cdim] : 0);
    args[k++] = hg_arg_i64(ignore_index);
    k = hg_dk_arg_dims(args, k, &dims, 3);
    if (ce_rows(x, cdim, probs, &dims)) {
        // class indices over contiguous class rows at one row stride: a warp or a block per
        // sample, each row read once (dev_rows_reg_bw.c)
        hg_dev_rows_job j;
        memset(&j, 0, sizeof j);
        j.fn = c->fn;
        j.ex = c->ex;
        j.op = HG_DEV_ROWS_CE;
        j.xdt = x->dtype, j.tdt = t->dtype, j.odt = cs.odt;
        j.M = (uint64_t)n, j.R = (uint64_t)x->shape[cdim];
        j.x = x->buffer, j.xoff = x->offset, j.xrs = dims.nd ? dims.stride[1][0] : 0;
        j.t = t->buffer, j.toff = t->offset, j.trs = dims.nd ? dims.stride[2][0] : 0;
        j.o = write ? out->buffer : raw, j.ooff = write ? out->offset : 0;
        j.ors = dims.nd ? dims.stride[0][0] : 0;
        j.cn = cnt;
        j.ign = ignore_index;
        j.raw = !write;
        s = hg_dev_rows_reg(&j);
    } else {
        hg_prog* prog = NULL;
        s = ce_build(c->fn, &cs, &prog);
        if (!s) {
            s = launch_lanes(c, prog, (uint64_t)n, args, k, first_slot);
            hg_prog_free(prog);
        }
    }
    return s;
}
