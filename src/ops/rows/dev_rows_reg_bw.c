// The register-resident row kernels of the backward ops and cross-entropy (built on
// dev_rows_reg.c's pieces and launched by hg_dev_rows_reg): each input row read from global
// memory once into registers, a warp or a block per row as the forward kernels, the row sums by
// butterfly shuffles.
//   softmax_backward:      out = y (g - sum(g y))           (x holds y)
//   log_softmax_backward:  out = g - exp(y) sum(g)
//   layer_norm_backward:   out = rstd (q - mean(q) - xhat mean(q xhat)), q = g w, xhat as the
//                          forward's (the mean and deviations of x - K, two exact passes)
//   rms_norm_backward:     the same without the mean(q) term, xhat = x rstd
//   cross_entropy:         loss = (m - x_t) + log(sum exp(x - m)) per row (0, not counted,
//                          where t == ignore_index), the per-row terms in f64
//   cross_entropy_backward: out = softmax(x) s - s [c == t] (t < 0 wraps, as the composed
//                          form's scatter_add; ignored rows have s = 0)
// Precision: the compute type is f32 for f16, bf16 and f32 rows (the row sums accumulate in
// f32: a relative error of about log2(R) f32 ulps of the sum of magnitudes, as the CPU kernels'
// f32 lanes) and f64 for f64; the backward ops round once from it into out's dtype, as their
// composed forms do.
#include <math.h>
#include "base/dtype.h"
#include "ops/rows/dev_rows_reg_kb.h"

#define op2 hg_rg_op2
#define ctimm hg_rg_ctimm

void hg_rg_declare_bw(rg_k* k) {
    hg_kb* b = &k->b;
    const hg_dev_rows_job* j = k->j;
    const hg_dtype F = HG_DTYPE_F64;
    k->a2 = hg_kb_reg(b, "a2", k->ct);
    if (j->op != HG_DEV_ROWS_CE && j->op != HG_DEV_ROWS_CE_BW) return;
    k->tv = hg_kb_reg(b, "tv", j->tdt);
    k->ti = hg_kb_reg(b, "ti", HG_DTYPE_I64);
    k->hit = hg_kb_reg(b, "hit", HG_DTYPE_BOOL);
    if (j->op == HG_DEV_ROWS_CE_BW) {
        k->sv = hg_kb_reg(b, "sv", j->sdt);
        k->scl = hg_kb_reg(b, "scl", k->ct);
    } else {
        k->fl = hg_kb_reg(b, "fl", F);
        k->fm = hg_kb_reg(b, "fm", F);
        k->fx = hg_kb_reg(b, "fx", F);
        k->one = hg_kb_reg(b, "one", F);
    }
}

static void softmax_bw(rg_k* k, int log_form) {
    hg_kb* b = &k->b;
    const hg_dtype C = k->ct;
    hg_rg_setup(k);
    hg_rg_load(k, k->x, k->j->xdt, k->xl, k->xv, k->c, 0.0);
    hg_rg_load(k, k->g, k->j->gdt, k->gl, k->gv, k->d, 0.0);
    hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
    for (uint32_t e = 0; e < k->s.E; e++) {
        if (log_form)
            op2(k, HG_OP_ADD, C, k->acc, hg_reg(k->acc), hg_reg(k->d[e]));
        else
            hg_kb_set(b, HG_OP_FMA, C, k->acc, hg_reg(k->d[e]), hg_reg(k->c[e]), hg_reg(k->acc));
    }
    hg_rg_reduce(k, HG_OP_ADD, k->acc);
    for (uint32_t e = 0; e < k->s.E; e++) {
        if (log_form) {
            hg_kb_set(b, HG_OP_EXP, C, k->y, hg_reg(k->c[e]), hg_none(), hg_none());
            op2(k, HG_OP_MUL, C, k->y, hg_reg(k->y), hg_reg(k->acc));
            op2(k, HG_OP_SUB, C, k->c[e], hg_reg(k->d[e]), hg_reg(k->y));
        } else {
            op2(k, HG_OP_SUB, C, k->y, hg_reg(k->d[e]), hg_reg(k->acc));
            op2(k, HG_OP_MUL, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->y));
        }
    }
    hg_rg_store(k, k->c, 0);
}

static void norm_bw(rg_k* k, int rms) {
    hg_kb* b = &k->b;
    const hg_dtype C = k->ct;
    const hg_dev_rows_job* j = k->j;
    hg_rg_setup(k);
    hg_rg_load(k, k->x, j->xdt, k->xl, k->xv, k->c, 0.0);
    hg_rg_load(k, k->g, j->gdt, k->gl, k->gv, k->d, 0.0);
    hg_rg_norm_stats(k, rms);   // c[e] = x - mean (rms: x), 0 where absent; st = rstd
    // xhat in c[e], q = g w in d[e] (0 where absent: g is padded with 0, w not read)
    for (uint32_t e = 0; e < k->s.E; e++) {
        op2(k, HG_OP_MUL, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->st));
        if (!j->has_w) continue;
        hg_kb_if(b, k->v[e]);
        hg_rg_index_of(k, k->wl, e);
        hg_kb_ld(b, HG_SPACE_GLOBAL, j->wdt, k->wv, k->w, hg_reg(k->ix));
        hg_kb_set_cvt(b, C, j->wdt, k->cw, hg_reg(k->wv));
        op2(k, HG_OP_MUL, C, k->d[e], hg_reg(k->d[e]), hg_reg(k->cw));
        hg_kb_endif(b);
    }
    // acc = mean(q), a2 = mean(q xhat)
    hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
    hg_kb_mov(b, C, k->a2, ctimm(k, 0.0));
    for (uint32_t e = 0; e < k->s.E; e++) {
        if (!rms) op2(k, HG_OP_ADD, C, k->acc, hg_reg(k->acc), hg_reg(k->d[e]));
        hg_kb_set(b, HG_OP_FMA, C, k->a2, hg_reg(k->d[e]), hg_reg(k->c[e]), hg_reg(k->a2));
    }
    if (!rms) {
        hg_rg_reduce(k, HG_OP_ADD, k->acc);
        op2(k, HG_OP_DIV, C, k->acc, hg_reg(k->acc), k->Rf);
    }
    hg_rg_reduce(k, HG_OP_ADD, k->a2);
    op2(k, HG_OP_DIV, C, k->a2, hg_reg(k->a2), k->Rf);
    for (uint32_t e = 0; e < k->s.E; e++) {
        uint32_t q = k->d[e];
        if (!rms) {
            op2(k, HG_OP_SUB, C, k->y, hg_reg(k->d[e]), hg_reg(k->acc));
            q = k->y;
        }
        op2(k, HG_OP_MUL, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->a2));
        op2(k, HG_OP_SUB, C, k->c[e], hg_reg(q), hg_reg(k->c[e]));
        op2(k, HG_OP_MUL, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->st));
    }
    hg_rg_store(k, k->c, 0);
}

// st := the row max of c[], acc := sum of exp(c - max), c[e] := exp(c - max) when keep.
static void max_sum_exp(rg_k* k, int keep) {
    hg_kb* b = &k->b;
    const hg_dtype C = k->ct;
    hg_kb_mov(b, C, k->acc, hg_reg(k->c[0]));
    for (uint32_t e = 1; e < k->s.E; e++)
        op2(k, HG_OP_MAX, C, k->acc, hg_reg(k->acc), hg_reg(k->c[e]));
    hg_rg_reduce(k, HG_OP_MAX, k->acc);
    hg_kb_mov(b, C, k->st, hg_reg(k->acc));
    hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
    for (uint32_t e = 0; e < k->s.E; e++) {
        uint32_t d = keep ? k->c[e] : k->y;
        op2(k, HG_OP_SUB, C, d, hg_reg(k->c[e]), hg_reg(k->st));
        hg_kb_set(b, HG_OP_EXP, C, d, hg_reg(d), hg_none(), hg_none());
        op2(k, HG_OP_ADD, C, k->acc, hg_reg(k->acc), hg_reg(d));
    }
    hg_rg_reduce(k, HG_OP_ADD, k->acc);
}

// ti := the row's class index (i64), ix := its offset; only where the row exists.
static void load_target(rg_k* k) {
    hg_kb* b = &k->b;
    const hg_dtype I = HG_DTYPE_I64;
    hg_kb_mov(b, I, k->ti, hg_imm_i64(0));
    hg_kb_if(b, k->ok);
    hg_kb_set_cvt(b, I, HG_DTYPE_U64, k->ix, hg_reg(k->row));
    op2(k, HG_OP_MUL, I, k->ix, hg_reg(k->ix), k->trs);
    op2(k, HG_OP_ADD, I, k->ix, hg_reg(k->ix), k->toff);
    hg_kb_ld(b, HG_SPACE_GLOBAL, k->j->tdt, k->tv, k->t, hg_reg(k->ix));
    hg_kb_set_cvt(b, I, k->j->tdt, k->ti, hg_reg(k->tv));
    hg_kb_endif(b);
}

static void ce_fwd(rg_k* k) {
    hg_kb* b = &k->b;
    const hg_dev_rows_job* j = k->j;
    const hg_dtype F = HG_DTYPE_F64, I = HG_DTYPE_I64;
    hg_rg_setup(k);
    hg_rg_load(k, k->x, j->xdt, k->xl, k->xv, k->c, -INFINITY);
    load_target(k);
    max_sum_exp(k, 0);
    // hit: a counted row (exists, not ignored); fl = (m - x_t) + log(se) in f64
    hg_kb_set_cmp(b, HG_CMP_NE, I, k->hit, hg_reg(k->ti), k->ign);
    op2(k, HG_OP_AND, HG_DTYPE_BOOL, k->hit, hg_reg(k->hit), hg_reg(k->ok));
    hg_kb_mov(b, F, k->fl, hg_imm_f64(0.0));
    hg_kb_set(b, HG_OP_SEL, F, k->one, hg_reg(k->hit), hg_imm_f64(1.0), hg_imm_f64(0.0));
    hg_kb_if(b, k->hit);
    op2(k, HG_OP_ADD, I, k->ix, hg_reg(k->xb), hg_reg(k->ti));
    hg_kb_ld(b, HG_SPACE_GLOBAL, j->xdt, k->xv, k->x, hg_reg(k->ix));
    hg_kb_set_cvt(b, F, j->xdt, k->fx, hg_reg(k->xv));
    hg_kb_set_cvt(b, F, k->ct, k->fm, hg_reg(k->st));
    hg_kb_set_cvt(b, F, k->ct, k->fl, hg_reg(k->acc));
    hg_kb_set(b, HG_OP_LOG, F, k->fl, hg_reg(k->fl), hg_none(), hg_none());
    op2(k, HG_OP_SUB, F, k->fm, hg_reg(k->fm), hg_reg(k->fx));
    op2(k, HG_OP_ADD, F, k->fl, hg_reg(k->fm), hg_reg(k->fl));
    hg_kb_endif(b);
    // lane 0 of the row stores: the loss rounded once to x's dtype (kept f64 for the device
    // sum), and its count
    hg_kb_set_cmp(b, HG_CMP_EQ, HG_DTYPE_U32, k->p, hg_reg(k->tl), hg_imm_u64(0));
    op2(k, HG_OP_AND, HG_DTYPE_BOOL, k->p, hg_reg(k->p), hg_reg(k->ok));
    hg_kb_if(b, k->p);
    if (j->raw) {
        hg_kb_st(b, HG_SPACE_GLOBAL, F, k->o, hg_reg(k->ol), hg_reg(k->fl));
    } else {
        hg_kb_set_cvt(b, j->xdt, F, k->rv, hg_reg(k->fl));
        hg_kb_set_cvt(b, j->odt, j->xdt, k->ov, hg_reg(k->rv));
        hg_kb_st(b, HG_SPACE_GLOBAL, j->odt, k->o, hg_reg(k->ol), hg_reg(k->ov));
    }
    if (j->cn.handle) {
        hg_kb_set_cvt(b, I, HG_DTYPE_U64, k->ix, hg_reg(k->row));
        op2(k, HG_OP_ADD, I, k->ix, hg_reg(k->ix), k->cnoff);
        hg_kb_st(b, HG_SPACE_GLOBAL, F, k->cn, hg_reg(k->ix), hg_reg(k->one));
    }
    hg_kb_endif(b);
}

static void ce_bw(rg_k* k) {
    hg_kb* b = &k->b;
    const hg_dev_rows_job* j = k->j;
    const hg_dtype C = k->ct, I = HG_DTYPE_I64;
    hg_rg_setup(k);
    hg_rg_load(k, k->x, j->xdt, k->xl, k->xv, k->c, -INFINITY);
    load_target(k);
    // the row's scale; ti := -1 for an ignored row, else wrapped into [0, C) when negative
    hg_kb_mov(b, C, k->scl, ctimm(k, 0.0));
    hg_kb_if(b, k->ok);
    hg_kb_set_cvt(b, I, HG_DTYPE_U64, k->ix, hg_reg(k->row));
    op2(k, HG_OP_MUL, I, k->ix, hg_reg(k->ix), k->srs);
    op2(k, HG_OP_ADD, I, k->ix, hg_reg(k->ix), k->soff);
    hg_kb_ld(b, HG_SPACE_GLOBAL, j->sdt, k->sv, k->sc, hg_reg(k->ix));
    hg_kb_set_cvt(b, C, j->sdt, k->scl, hg_reg(k->sv));
    hg_kb_endif(b);
    hg_kb_set_cmp(b, HG_CMP_LT, I, k->hit, hg_reg(k->ti), hg_imm_i64(0));
    hg_kb_set_cvt(b, I, HG_DTYPE_U32, k->t64, k->R);
    op2(k, HG_OP_ADD, I, k->t64, hg_reg(k->t64), hg_reg(k->ti));
    hg_kb_set(b, HG_OP_SEL, I, k->t64, hg_reg(k->hit), hg_reg(k->t64), hg_reg(k->ti));
    hg_kb_set_cmp(b, HG_CMP_EQ, I, k->hit, hg_reg(k->ti), k->ign);
    hg_kb_set(b, HG_OP_SEL, I, k->ti, hg_reg(k->hit), hg_imm_i64(-1), hg_reg(k->t64));
    max_sum_exp(k, 1);
    op2(k, HG_OP_DIV, C, k->acc, ctimm(k, 1.0), hg_reg(k->acc));
    for (uint32_t e = 0; e < k->s.E; e++) {
        op2(k, HG_OP_MUL, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->acc));   // softmax
        op2(k, HG_OP_MUL, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->scl));
        op2(k, HG_OP_ADD, HG_DTYPE_U32, k->jj, hg_reg(k->tl), hg_imm_u64((uint64_t)e * k->s.T));
        hg_kb_set_cvt(b, I, HG_DTYPE_U32, k->t64, hg_reg(k->jj));
        hg_kb_set_cmp(b, HG_CMP_EQ, I, k->hit, hg_reg(k->t64), hg_reg(k->ti));
        op2(k, HG_OP_SUB, C, k->y, hg_reg(k->c[e]), hg_reg(k->scl));
        hg_kb_set(b, HG_OP_SEL, C, k->c[e], hg_reg(k->hit), hg_reg(k->y), hg_reg(k->c[e]));
    }
    hg_rg_store(k, k->c, 0);
}

void hg_rg_body_bw(rg_k* k) {
    switch (k->j->op) {
    case HG_DEV_ROWS_SOFTMAX_BW: softmax_bw(k, 0); break;
    case HG_DEV_ROWS_LOG_SOFTMAX_BW: softmax_bw(k, 1); break;
    case HG_DEV_ROWS_LAYER_NORM_BW: norm_bw(k, 0); break;
    case HG_DEV_ROWS_RMS_NORM_BW: norm_bw(k, 1); break;
    case HG_DEV_ROWS_CE: ce_fwd(k); break;
    default: ce_bw(k); break;
    }
}
