// softmax, log_softmax, layer_norm and rms_norm on devices for contiguous rows (see
// dev_rows_reg.h): each row is read from global memory once into registers and written once.
//   - rows up to 1024 elements: a warp per row (32 lanes, 8 rows per 256-lane block);
//   - longer rows: a block per row (256, 512 or 1024 lanes).
// Lane t of a row holds elements t, t + T, ..., t + (E-1)T (T lanes per row, E a power of two:
// coalesced loads, one kernel per bucket of E); statistics are reduced by butterfly shuffles
// (shfl.bfly) within the warp, and in block mode each warp's partial goes through a 32-entry
// shared array and one barrier per statistic. The statistics are exact two-pass ones over the
// registers: softmax's max then sum of exp(x - max); layer_norm's mean then squared deviations,
// both of x - K with K the row's first element, so that a large mean costs no accuracy (the
// error of f32 sums is relative to the spread, not to the magnitude); rms_norm's sum of squares.
//
// Precision: the compute type is f32 for f16, bf16 and f32 rows (accumulation too: the sums of
// a row's exp or deviations in f32 keep a relative error of about log2(R) f32 ulps, far below
// the parity harness's NMSE 1e-7) and f64 for f64 rows; results are rounded to x's dtype, then
// converted to out's, as the CPU kernels do.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/rows/dev_rows_reg.h"

#define RG_WARP 32u
#define RG_WARP_ROWS 8u                   // rows per block in warp mode (256 lanes)
#define RG_MAX_E 32u
#define RG_MAX_BLOCKS (UINT64_C(1) << 22) // per launch (larger M: several launches)

typedef struct rg_shape {
    uint32_t T;      // lanes per row
    uint32_t E;      // elements per lane (power of two)
    uint32_t rpb;    // rows per block
    int blk;         // block mode (a row per block, shared memory across warps)
} rg_shape;

static rg_shape pick_shape(uint64_t R) {
    rg_shape s;
    s.blk = R > 1024;
    s.T = !s.blk ? RG_WARP : R <= 2048 ? 256u : R <= 4096 ? 512u : 1024u;
    s.rpb = s.blk ? 1u : RG_WARP_ROWS;
    uint64_t per = (R + s.T - 1) / s.T;
    s.E = 1;
    while (s.E < per) s.E <<= 1;
    return s;
}

typedef struct rg_k {
    hg_kb b;
    const hg_dev_rows_job* j;
    rg_shape s;
    hg_dtype ct;
    uint32_t x, o, w, bs, sw1, sw2;                               // memory slots
    hg_operand row0, M, R, Rf, eps, xoff, ooff, woff, boff, xrs, ors;
    uint32_t tl, ln, wi, jj;                                      // u32
    uint32_t row, r64;                                            // u64
    uint32_t xb, xl, ol, wl, bl, ix, t64;                         // i64
    uint32_t ok, p;                                               // bool
    uint32_t xv, rv, ov, wv, bv;                                  // storage types
    uint32_t acc, oth, st, y, cw, cb, kk;                         // ct
    uint32_t v[RG_MAX_E], c[RG_MAX_E];
} rg_k;

static void op2(rg_k* k, hg_opcode op, hg_dtype t, uint32_t d, hg_operand a, hg_operand x) {
    hg_kb_set(&k->b, op, t, d, a, x, hg_none());
}

static hg_operand ctimm(const rg_k* k, double v) { return hg_kb_imm(k->ct, v); }

// reg := op over the row's lanes of reg (every lane gets the result). Block mode: each warp's
// result through shared array sw (lane 0 of warp w writes sw[w]), one barrier, then every warp
// reduces the partials.
static void reduce(rg_k* k, hg_opcode op, uint32_t reg, uint32_t sw) {
    hg_kb* b = &k->b;
    const double ident = op == HG_OP_MAX ? -INFINITY : 0.0;
    for (int pass = 0; pass < (k->s.blk ? 2 : 1); pass++) {
        if (pass == 1) {
            hg_kb_set_cmp(b, HG_CMP_EQ, HG_DTYPE_U32, k->p, hg_reg(k->ln), hg_imm_u64(0));
            hg_kb_if(b, k->p);
            hg_kb_st(b, HG_SPACE_SHARED, k->ct, sw, hg_reg(k->wi), hg_reg(reg));
            hg_kb_endif(b);
            hg_kb_bar(b);
            hg_kb_mov(b, k->ct, reg, ctimm(k, ident));
            hg_kb_set_cmp(b, HG_CMP_LT, HG_DTYPE_U32, k->p, hg_reg(k->ln),
                          hg_imm_u64(k->s.T / RG_WARP));
            hg_kb_if(b, k->p);
            hg_kb_ld(b, HG_SPACE_SHARED, k->ct, reg, sw, hg_reg(k->ln));
            hg_kb_endif(b);
        }
        for (uint32_t m = RG_WARP / 2; m; m >>= 1) {
            hg_kb_shfl(b, HG_SHFL_BFLY, k->ct, k->oth, hg_reg(reg), hg_imm_u64(m));
            op2(k, op, k->ct, reg, hg_reg(reg), hg_reg(k->oth));
        }
    }
}

// k->ix := base + e * T (i64).
static void index_of(rg_k* k, uint32_t base, uint32_t e) {
    hg_kb_set(&k->b, HG_OP_ADD, HG_DTYPE_I64, k->ix, hg_reg(base),
              hg_imm_i64((int64_t)e * k->s.T), hg_none());
}

static void declare(rg_k* k) {
    hg_kb* b = &k->b;
    const hg_dev_rows_job* j = k->j;
    const hg_dtype U = HG_DTYPE_U32, U64 = HG_DTYPE_U64, I = HG_DTYPE_I64, B = HG_DTYPE_BOOL;
    const hg_dtype C = k->ct;
    k->x = hg_kb_buffer(b, "x", j->xdt, 1);
    k->o = hg_kb_buffer(b, "o", j->odt, 0);
    if (j->has_w) k->w = hg_kb_buffer(b, "wt", j->wdt, 1);
    if (j->has_b) k->bs = hg_kb_buffer(b, "bs", j->bdt, 1);
    k->row0 = hg_kb_scalar(b, "row0", U64);
    k->M = hg_kb_scalar(b, "M", U64);
    k->R = hg_kb_scalar(b, "R", U);
    k->Rf = hg_kb_scalar(b, "Rf", C);
    k->eps = hg_kb_scalar(b, "eps", C);
    k->xoff = hg_kb_scalar(b, "xoff", I);
    k->ooff = hg_kb_scalar(b, "ooff", I);
    k->woff = hg_kb_scalar(b, "woff", I);
    k->boff = hg_kb_scalar(b, "boff", I);
    k->xrs = hg_kb_scalar(b, "xrs", I);
    k->ors = hg_kb_scalar(b, "ors", I);
    if (k->s.blk) {
        k->sw1 = hg_kb_shared(b, "sw1", C, RG_WARP);
        k->sw2 = hg_kb_shared(b, "sw2", C, RG_WARP);
    }
    k->tl = hg_kb_reg(b, "tl", U);
    k->ln = hg_kb_reg(b, "ln", U);
    k->wi = hg_kb_reg(b, "wi", U);
    k->jj = hg_kb_reg(b, "jj", U);
    k->row = hg_kb_reg(b, "row", U64);
    k->r64 = hg_kb_reg(b, "r64", U64);
    k->xb = hg_kb_reg(b, "xb", I);
    k->xl = hg_kb_reg(b, "xl", I);
    k->ol = hg_kb_reg(b, "ol", I);
    k->wl = hg_kb_reg(b, "wl", I);
    k->bl = hg_kb_reg(b, "bl", I);
    k->ix = hg_kb_reg(b, "ix", I);
    k->t64 = hg_kb_reg(b, "t64", I);
    k->ok = hg_kb_reg(b, "ok", B);
    k->p = hg_kb_reg(b, "p", B);
    k->xv = hg_kb_reg(b, "xv", j->xdt);
    k->rv = hg_kb_reg(b, "rv", j->xdt);
    k->ov = hg_kb_reg(b, "ov", j->odt);
    if (j->has_w) {
        k->wv = hg_kb_reg(b, "wv", j->wdt);
        k->cw = hg_kb_reg(b, "cw", C);
    }
    if (j->has_b) {
        k->bv = hg_kb_reg(b, "bv", j->bdt);
        k->cb = hg_kb_reg(b, "cb", C);
    }
    k->acc = hg_kb_reg(b, "acc", C);
    k->oth = hg_kb_reg(b, "oth", C);
    k->st = hg_kb_reg(b, "st", C);
    k->y = hg_kb_reg(b, "y", C);
    k->kk = hg_kb_reg(b, "kk", C);
    char name[16];
    for (uint32_t e = 0; e < k->s.E; e++) {
        snprintf(name, sizeof name, "v%u", e);
        k->v[e] = hg_kb_reg(b, name, B);
        snprintf(name, sizeof name, "c%u", e);
        k->c[e] = hg_kb_reg(b, name, C);
    }
}

// The lane's position, its row and offsets, then the row's elements into c[e] (pad where the
// element does not exist: v[e] false).
static void load_row(rg_k* k, double pad) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U32, U64 = HG_DTYPE_U64, I = HG_DTYPE_I64;
    hg_kb_mov(b, U, k->tl, hg_sreg(HG_SREG_TID_X));
    op2(k, HG_OP_AND, U, k->ln, hg_reg(k->tl), hg_imm_u64(RG_WARP - 1));
    op2(k, HG_OP_SHR, U, k->wi, hg_reg(k->tl), hg_imm_u64(5));
    // row = ctaid.x * ntid.y + tid.y + row0
    hg_kb_set_cvt(b, U64, U, k->row, hg_sreg(HG_SREG_CTAID_X));
    hg_kb_set_cvt(b, U64, U, k->r64, hg_sreg(HG_SREG_NTID_Y));
    op2(k, HG_OP_MUL, U64, k->row, hg_reg(k->row), hg_reg(k->r64));
    hg_kb_set_cvt(b, U64, U, k->r64, hg_sreg(HG_SREG_TID_Y));
    op2(k, HG_OP_ADD, U64, k->row, hg_reg(k->row), hg_reg(k->r64));
    op2(k, HG_OP_ADD, U64, k->row, hg_reg(k->row), k->row0);
    hg_kb_set_cmp(b, HG_CMP_LT, U64, k->ok, hg_reg(k->row), k->M);
    // xb = xoff + row * xrs; xl = xb + tl; ol = ooff + row * ors + tl; wl, bl = off + tl
    hg_kb_set_cvt(b, I, U64, k->t64, hg_reg(k->row));
    op2(k, HG_OP_MUL, I, k->xb, hg_reg(k->t64), k->xrs);
    op2(k, HG_OP_ADD, I, k->xb, hg_reg(k->xb), k->xoff);
    op2(k, HG_OP_MUL, I, k->ol, hg_reg(k->t64), k->ors);
    op2(k, HG_OP_ADD, I, k->ol, hg_reg(k->ol), k->ooff);
    hg_kb_set_cvt(b, I, U, k->t64, hg_reg(k->tl));
    op2(k, HG_OP_ADD, I, k->xl, hg_reg(k->xb), hg_reg(k->t64));
    op2(k, HG_OP_ADD, I, k->ol, hg_reg(k->ol), hg_reg(k->t64));
    if (k->j->has_w) op2(k, HG_OP_ADD, I, k->wl, k->woff, hg_reg(k->t64));
    if (k->j->has_b) op2(k, HG_OP_ADD, I, k->bl, k->boff, hg_reg(k->t64));
    for (uint32_t e = 0; e < k->s.E; e++) {
        op2(k, HG_OP_ADD, U, k->jj, hg_reg(k->tl), hg_imm_u64((uint64_t)e * k->s.T));
        hg_kb_set_cmp(b, HG_CMP_LT, U, k->v[e], hg_reg(k->jj), k->R);
        op2(k, HG_OP_AND, HG_DTYPE_BOOL, k->v[e], hg_reg(k->v[e]), hg_reg(k->ok));
        hg_kb_mov(b, k->ct, k->c[e], ctimm(k, pad));
        hg_kb_if(b, k->v[e]);
        index_of(k, k->xl, e);
        hg_kb_ld(b, HG_SPACE_GLOBAL, k->j->xdt, k->xv, k->x, hg_reg(k->ix));
        hg_kb_set_cvt(b, k->ct, k->j->xdt, k->c[e], hg_reg(k->xv));
        hg_kb_endif(b);
    }
}

// c[e] := c[e] (op) the parameter element (weight or bias) in the compute type.
static void param_term(rg_k* k, uint32_t e, hg_dtype pdt, uint32_t slot, uint32_t base,
                       uint32_t reg, uint32_t creg, hg_opcode op) {
    index_of(k, base, e);
    hg_kb_ld(&k->b, HG_SPACE_GLOBAL, pdt, reg, slot, hg_reg(k->ix));
    hg_kb_set_cvt(&k->b, k->ct, pdt, creg, hg_reg(reg));
    op2(k, op, k->ct, k->c[e], hg_reg(k->c[e]), hg_reg(creg));
}

// Stores c[e] (after weight and bias for the norms) where the element exists.
static void store_row(rg_k* k) {
    hg_kb* b = &k->b;
    const hg_dev_rows_job* j = k->j;
    for (uint32_t e = 0; e < k->s.E; e++) {
        hg_kb_if(b, k->v[e]);
        if (j->has_w) param_term(k, e, j->wdt, k->w, k->wl, k->wv, k->cw, HG_OP_MUL);
        if (j->has_b) param_term(k, e, j->bdt, k->bs, k->bl, k->bv, k->cb, HG_OP_ADD);
        hg_kb_set_cvt(b, j->xdt, k->ct, k->rv, hg_reg(k->c[e]));
        hg_kb_set_cvt(b, j->odt, j->xdt, k->ov, hg_reg(k->rv));
        index_of(k, k->ol, e);
        hg_kb_st(b, HG_SPACE_GLOBAL, j->odt, k->o, hg_reg(k->ix), hg_reg(k->ov));
        hg_kb_endif(b);
    }
}

static void body_softmax(rg_k* k, int log_form) {
    hg_kb* b = &k->b;
    const hg_dtype C = k->ct;
    load_row(k, -INFINITY);
    hg_kb_mov(b, C, k->acc, hg_reg(k->c[0]));
    for (uint32_t e = 1; e < k->s.E; e++)
        op2(k, HG_OP_MAX, C, k->acc, hg_reg(k->acc), hg_reg(k->c[e]));
    reduce(k, HG_OP_MAX, k->acc, k->sw1);
    hg_kb_mov(b, C, k->st, hg_reg(k->acc));   // the row max
    // exp(x - max) (padded elements: exp(-inf) = 0), kept in c[e] for softmax.
    hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
    for (uint32_t e = 0; e < k->s.E; e++) {
        uint32_t d = log_form ? k->y : k->c[e];
        op2(k, HG_OP_SUB, C, d, hg_reg(k->c[e]), hg_reg(k->st));
        hg_kb_set(b, HG_OP_EXP, C, d, hg_reg(d), hg_none(), hg_none());
        op2(k, HG_OP_ADD, C, k->acc, hg_reg(k->acc), hg_reg(d));
    }
    reduce(k, HG_OP_ADD, k->acc, k->sw2);
    if (log_form) {
        hg_kb_set(b, HG_OP_LOG, C, k->acc, hg_reg(k->acc), hg_none(), hg_none());
        for (uint32_t e = 0; e < k->s.E; e++) {
            op2(k, HG_OP_SUB, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->st));
            op2(k, HG_OP_SUB, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->acc));
        }
    } else {
        op2(k, HG_OP_DIV, C, k->acc, ctimm(k, 1.0), hg_reg(k->acc));
        for (uint32_t e = 0; e < k->s.E; e++)
            op2(k, HG_OP_MUL, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->acc));
    }
    store_row(k);
}

// st := 1 / sqrt(acc / R + eps).
static void emit_rstd(rg_k* k) {
    const hg_dtype C = k->ct;
    op2(k, HG_OP_DIV, C, k->st, hg_reg(k->acc), k->Rf);
    op2(k, HG_OP_ADD, C, k->st, hg_reg(k->st), k->eps);
    hg_kb_set(&k->b, HG_OP_SQRT, C, k->st, hg_reg(k->st), hg_none(), hg_none());
    op2(k, HG_OP_DIV, C, k->st, ctimm(k, 1.0), hg_reg(k->st));
}

static void body_norm(rg_k* k, int rms) {
    hg_kb* b = &k->b;
    const hg_dtype C = k->ct;
    load_row(k, 0.0);
    hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
    if (rms) {
        for (uint32_t e = 0; e < k->s.E; e++)
            hg_kb_set(b, HG_OP_FMA, C, k->acc, hg_reg(k->c[e]), hg_reg(k->c[e]), hg_reg(k->acc));
        reduce(k, HG_OP_ADD, k->acc, k->sw1);
    } else {
        // K: the row's first element (warp mode: lane 0's c[0]; block mode: loaded by every
        // lane, one cached broadcast read).
        if (!k->s.blk) {
            hg_kb_shfl(b, HG_SHFL_IDX, C, k->kk, hg_reg(k->c[0]), hg_imm_u64(0));
        } else {
            hg_kb_mov(b, C, k->kk, ctimm(k, 0.0));
            hg_kb_if(b, k->ok);
            hg_kb_ld(b, HG_SPACE_GLOBAL, k->j->xdt, k->xv, k->x, hg_reg(k->xb));
            hg_kb_set_cvt(b, C, k->j->xdt, k->kk, hg_reg(k->xv));
            hg_kb_endif(b);
        }
        for (uint32_t e = 0; e < k->s.E; e++) {
            op2(k, HG_OP_SUB, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->kk));
            hg_kb_set(b, HG_OP_SEL, C, k->c[e], hg_reg(k->v[e]), hg_reg(k->c[e]), ctimm(k, 0.0));
            op2(k, HG_OP_ADD, C, k->acc, hg_reg(k->acc), hg_reg(k->c[e]));
        }
        reduce(k, HG_OP_ADD, k->acc, k->sw1);
        op2(k, HG_OP_DIV, C, k->st, hg_reg(k->acc), k->Rf);   // mean of x - K
        hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
        for (uint32_t e = 0; e < k->s.E; e++) {
            op2(k, HG_OP_SUB, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->st));
            hg_kb_set(b, HG_OP_SEL, C, k->y, hg_reg(k->v[e]), hg_reg(k->c[e]), ctimm(k, 0.0));
            hg_kb_set(b, HG_OP_FMA, C, k->acc, hg_reg(k->y), hg_reg(k->y), hg_reg(k->acc));
        }
        reduce(k, HG_OP_ADD, k->acc, k->sw2);
    }
    emit_rstd(k);
    for (uint32_t e = 0; e < k->s.E; e++)
        op2(k, HG_OP_MUL, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->st));
    store_row(k);
}

static hg_status build(const hg_dev_rows_job* j, rg_shape s, hg_prog** out) {
    rg_k kk;
    memset(&kk, 0, sizeof kk);
    rg_k* k = &kk;
    k->j = j;
    k->s = s;
    k->ct = j->xdt == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    k->b = hg_kb_new("hg_dev_rows_reg");
    declare(k);
    switch (j->op) {
    case HG_DEV_SOFTMAX: body_softmax(k, 0); break;
    case HG_DEV_LOG_SOFTMAX: body_softmax(k, 1); break;
    case HG_DEV_LAYER_NORM: body_norm(k, 0); break;
    default: body_norm(k, 1); break;
    }
    return hg_dk_finish(&k->b, j->fn, out);
}

// A scalar argument of the compute type.
static hg_arg ct_arg(hg_dtype ct, double v) {
    return ct == HG_DTYPE_F64 ? hg_arg_f64(v) : hg_arg_f32((float)v);
}

hg_status hg_dev_rows_reg(const hg_dev_rows_job* j) {
    if (j->M == 0 || j->R == 0) return HG_OK;
    if (j->R > HG_DEV_ROWS_REG_MAX)   // the caller's choice; c[] and v[] hold 32 per lane
        return hg_error(HG_ERR_INTERNAL, "%s: rows of %llu elements reached the register "
                        "kernels (at most %u)", j->fn, (unsigned long long)j->R,
                        HG_DEV_ROWS_REG_MAX);
    rg_shape s = pick_shape(j->R);
    hg_prog* prog = NULL;
    hg_status st = build(j, s, &prog);
    if (st) return st;
    const hg_dtype ct = j->xdt == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    const uint64_t rows_per = RG_MAX_BLOCKS * s.rpb;
    for (uint64_t row0 = 0; row0 < j->M && !st; row0 += rows_per) {
        uint64_t rows = j->M - row0 < rows_per ? j->M - row0 : rows_per;
        hg_arg args[16];
        size_t n = 0;
        args[n++] = hg_arg_buffer(j->x);
        args[n++] = hg_arg_buffer(j->o);
        if (j->has_w) args[n++] = hg_arg_buffer(j->w);
        if (j->has_b) args[n++] = hg_arg_buffer(j->b);
        args[n++] = hg_arg_u64(row0);
        args[n++] = hg_arg_u64(row0 + rows);
        args[n++] = hg_arg_u32((uint32_t)j->R);
        args[n++] = ct_arg(ct, (double)j->R);
        args[n++] = ct_arg(ct, j->eps);
        args[n++] = hg_arg_i64(j->xoff);
        args[n++] = hg_arg_i64(j->ooff);
        args[n++] = hg_arg_i64(j->woff);
        args[n++] = hg_arg_i64(j->boff);
        args[n++] = hg_arg_i64(j->xrs);
        args[n++] = hg_arg_i64(j->ors);
        hg_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.grid.x = (uint32_t)((rows + s.rpb - 1) / s.rpb);
        cfg.grid.y = cfg.grid.z = 1;
        cfg.block.x = s.T;
        cfg.block.y = s.rpb;
        cfg.block.z = 1;
        st = hg_dk_launch(j->ex, j->fn, prog, &cfg, args, n);
    }
    hg_prog_free(prog);
    return st;
}
