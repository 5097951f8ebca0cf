// softmax, log_softmax, layer_norm and rms_norm on devices for contiguous rows (see
// dev_rows_reg.h), and the launch of every register-resident row kernel (the backward ops and
// cross-entropy are built in dev_rows_reg_bw.c): each row is read from global memory once into
// registers and written once.
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
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/rows/dev_rows_reg_kb.h"

#define RG_WARP_ROWS 8u                   // rows per block in warp mode (256 lanes)
#define RG_MAX_BLOCKS (UINT64_C(1) << 22) // per launch (larger M: several launches)

_Static_assert((int)HG_DEV_ROWS_SOFTMAX == (int)HG_DEV_SOFTMAX &&
               (int)HG_DEV_ROWS_LOG_SOFTMAX == (int)HG_DEV_LOG_SOFTMAX &&
               (int)HG_DEV_ROWS_LAYER_NORM == (int)HG_DEV_LAYER_NORM &&
               (int)HG_DEV_ROWS_RMS_NORM == (int)HG_DEV_RMS_NORM,
               "hg_dev_rows_kind starts with hg_dev_row_op's values");

int hg_dev_rows_reg_ok(uint64_t R) {
    static const char* const kinds[] = {"auto", "generic"};
    return R <= HG_DEV_ROWS_REG_MAX && hg_config_choice("HOLOGRAM_DEV_ROWS", kinds, 2, 0) == 0;
}

int hg_dev_rows_layout(const hg_tensor* const* ts, int nt, int32_t first_inner, uint64_t* M,
                       uint64_t* R, int64_t* rs) {
    hg_dk_dims od, id;
    memset(&od, 0, sizeof od);
    memset(&id, 0, sizeof id);
    *M = *R = 1;
    for (int32_t d = 0; d < ts[0]->ndim; d++) {
        int64_t st[5], n = ts[0]->shape[d];
        for (int q = 0; q < nt; q++) st[q] = ts[q]->strides[d];
        hg_dk_dims_push(d < first_inner ? &od : &id, nt, n, st);
        if (d < first_inner) *M *= (uint64_t)n;
        else *R *= (uint64_t)n;
    }
    hg_dk_dims_merge(&od, nt);
    hg_dk_dims_merge(&id, nt);
    if (od.nd > 1 || id.nd > 1 || *R == 0 || !hg_dev_rows_reg_ok(*R)) return 0;
    for (int q = 0; q < nt; q++) {
        if (id.nd == 1 && id.stride[q][0] != 1) return 0;
        rs[q] = od.nd ? od.stride[q][0] : 0;
    }
    return 1;
}

// max_e: the elements per lane a kernel may hold (16 for the kernels that hold two rows, g and
// x: at 32 they spilled under the 64 registers of __launch_bounds__(1024)); rows beyond 1024
// lanes of them take 32.
static rg_shape pick_shape(uint64_t R, uint32_t max_e) {
    rg_shape s;
    s.blk = R > (uint64_t)RG_WARP * max_e;
    if (!s.blk) {
        s.T = RG_WARP;
    } else if (max_e == RG_MAX_E) {
        s.T = R <= 2048 ? 256u : R <= 4096 ? 512u : 1024u;
    } else {
        s.T = 64;
        while (s.T < 1024 && (uint64_t)s.T * max_e < R) s.T <<= 1;
    }
    s.rpb = s.blk ? 1u : RG_WARP_ROWS;
    uint64_t per = (R + s.T - 1) / s.T;
    s.E = 1;
    while (s.E < per) s.E <<= 1;
    return s;
}

void hg_rg_op2(rg_k* k, hg_opcode op, hg_dtype t, uint32_t d, hg_operand a, hg_operand x) {
    hg_kb_set(&k->b, op, t, d, a, x, hg_none());
}
#define op2 hg_rg_op2

hg_operand hg_rg_ctimm(const rg_k* k, double v) { return hg_kb_imm(k->ct, v); }
#define ctimm hg_rg_ctimm

// Block mode: each warp's result through the next shared array sw (lane 0 of warp w writes
// sw[w]), one barrier, then every warp reduces the partials.
void hg_rg_reduce(rg_k* k, hg_opcode op, uint32_t reg) {
    hg_kb* b = &k->b;
    const double ident = op == HG_OP_MAX ? -INFINITY : 0.0;
    uint32_t sw = k->s.blk ? k->sw[k->nsw++] : 0;
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

void hg_rg_index_of(rg_k* k, uint32_t base, uint32_t e) {
    hg_kb_set(&k->b, HG_OP_ADD, HG_DTYPE_I64, k->ix, hg_reg(base),
              hg_imm_i64((int64_t)e * k->s.T), hg_none());
}
#define index_of hg_rg_index_of

// The reductions each kernel makes (the shared arrays of block mode).
static const int k_nsw[HG_DEV_ROWS_KIND_COUNT] = {2, 2, 2, 1, 1, 1, 4, 2, 2, 2};

// Whether the kernel reads the second row input g (the backward ops' grad).
static int has_g(hg_dev_rows_kind op) {
    return op >= HG_DEV_ROWS_SOFTMAX_BW && op <= HG_DEV_ROWS_RMS_NORM_BW;
}
static int is_ce(hg_dev_rows_kind op) {
    return op == HG_DEV_ROWS_CE || op == HG_DEV_ROWS_CE_BW;
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
    if (has_g(j->op)) k->g = hg_kb_buffer(b, "g", j->gdt, 1);
    if (is_ce(j->op)) k->t = hg_kb_buffer(b, "t", j->tdt, 1);
    if (j->op == HG_DEV_ROWS_CE_BW) k->sc = hg_kb_buffer(b, "sc", j->sdt, 1);
    if (j->op == HG_DEV_ROWS_CE && j->cn.handle) k->cn = hg_kb_buffer(b, "cn", HG_DTYPE_F64, 0);
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
    k->goff = hg_kb_scalar(b, "goff", I);
    k->grs = hg_kb_scalar(b, "grs", I);
    k->toff = hg_kb_scalar(b, "toff", I);
    k->trs = hg_kb_scalar(b, "trs", I);
    k->soff = hg_kb_scalar(b, "soff", I);
    k->srs = hg_kb_scalar(b, "srs", I);
    k->cnoff = hg_kb_scalar(b, "cnoff", I);
    k->ign = hg_kb_scalar(b, "ign", I);
    char name[16];
    for (int q = 0; k->s.blk && q < k_nsw[j->op]; q++) {
        snprintf(name, sizeof name, "sw%d", q + 1);
        k->sw[q] = hg_kb_shared(b, name, C, RG_WARP);
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
    k->gl = hg_kb_reg(b, "gl", I);
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
    if (has_g(j->op)) k->gv = hg_kb_reg(b, "gv", j->gdt);
    k->acc = hg_kb_reg(b, "acc", C);
    k->oth = hg_kb_reg(b, "oth", C);
    k->st = hg_kb_reg(b, "st", C);
    k->y = hg_kb_reg(b, "y", C);
    k->kk = hg_kb_reg(b, "kk", C);
    for (uint32_t e = 0; e < k->s.E; e++) {
        snprintf(name, sizeof name, "v%u", e);
        k->v[e] = hg_kb_reg(b, name, B);
        snprintf(name, sizeof name, "c%u", e);
        k->c[e] = hg_kb_reg(b, name, C);
        if (has_g(j->op)) {
            snprintf(name, sizeof name, "d%u", e);
            k->d[e] = hg_kb_reg(b, name, C);
        }
    }
    if (j->op >= HG_DEV_ROWS_SOFTMAX_BW) hg_rg_declare_bw(k);
}

void hg_rg_setup(rg_k* k) {
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
    // xb = xoff + row * xrs; xl = xb + tl; ol = ooff + row * ors (+ tl but for CE's per-row
    // loss); gl = goff + row * grs + tl; wl, bl = off + tl
    hg_kb_set_cvt(b, I, U64, k->t64, hg_reg(k->row));
    op2(k, HG_OP_MUL, I, k->xb, hg_reg(k->t64), k->xrs);
    op2(k, HG_OP_ADD, I, k->xb, hg_reg(k->xb), k->xoff);
    op2(k, HG_OP_MUL, I, k->ol, hg_reg(k->t64), k->ors);
    op2(k, HG_OP_ADD, I, k->ol, hg_reg(k->ol), k->ooff);
    if (has_g(k->j->op)) {
        op2(k, HG_OP_MUL, I, k->gl, hg_reg(k->t64), k->grs);
        op2(k, HG_OP_ADD, I, k->gl, hg_reg(k->gl), k->goff);
    }
    hg_kb_set_cvt(b, I, U, k->t64, hg_reg(k->tl));
    op2(k, HG_OP_ADD, I, k->xl, hg_reg(k->xb), hg_reg(k->t64));
    if (k->j->op != HG_DEV_ROWS_CE) op2(k, HG_OP_ADD, I, k->ol, hg_reg(k->ol), hg_reg(k->t64));
    if (has_g(k->j->op)) op2(k, HG_OP_ADD, I, k->gl, hg_reg(k->gl), hg_reg(k->t64));
    if (k->j->has_w) op2(k, HG_OP_ADD, I, k->wl, k->woff, hg_reg(k->t64));
    if (k->j->has_b) op2(k, HG_OP_ADD, I, k->bl, k->boff, hg_reg(k->t64));
    for (uint32_t e = 0; e < k->s.E; e++) {
        op2(k, HG_OP_ADD, U, k->jj, hg_reg(k->tl), hg_imm_u64((uint64_t)e * k->s.T));
        hg_kb_set_cmp(b, HG_CMP_LT, U, k->v[e], hg_reg(k->jj), k->R);
        op2(k, HG_OP_AND, HG_DTYPE_BOOL, k->v[e], hg_reg(k->v[e]), hg_reg(k->ok));
    }
}

void hg_rg_load(rg_k* k, uint32_t slot, hg_dtype dt, uint32_t base, uint32_t tmp,
                const uint32_t* dst, double pad) {
    hg_kb* b = &k->b;
    for (uint32_t e = 0; e < k->s.E; e++) {
        hg_kb_mov(b, k->ct, dst[e], ctimm(k, pad));
        hg_kb_if(b, k->v[e]);
        index_of(k, base, e);
        hg_kb_ld(b, HG_SPACE_GLOBAL, dt, tmp, slot, hg_reg(k->ix));
        hg_kb_set_cvt(b, k->ct, dt, dst[e], hg_reg(tmp));
        hg_kb_endif(b);
    }
}

// The lane's position and the row's x into c[e] (pad where the element does not exist).
static void load_row(rg_k* k, double pad) {
    hg_rg_setup(k);
    hg_rg_load(k, k->x, k->j->xdt, k->xl, k->xv, k->c, pad);
}

// c[e] := c[e] (op) the parameter element (weight or bias) in the compute type.
static void param_term(rg_k* k, uint32_t e, hg_dtype pdt, uint32_t slot, uint32_t base,
                       uint32_t reg, uint32_t creg, hg_opcode op) {
    index_of(k, base, e);
    hg_kb_ld(&k->b, HG_SPACE_GLOBAL, pdt, reg, slot, hg_reg(k->ix));
    hg_kb_set_cvt(&k->b, k->ct, pdt, creg, hg_reg(reg));
    op2(k, op, k->ct, k->c[e], hg_reg(k->c[e]), hg_reg(creg));
}

void hg_rg_store(rg_k* k, const uint32_t* src, int via_x) {
    hg_kb* b = &k->b;
    const hg_dev_rows_job* j = k->j;
    for (uint32_t e = 0; e < k->s.E; e++) {
        hg_kb_if(b, k->v[e]);
        if (via_x) {
            hg_kb_set_cvt(b, j->xdt, k->ct, k->rv, hg_reg(src[e]));
            hg_kb_set_cvt(b, j->odt, j->xdt, k->ov, hg_reg(k->rv));
        } else {
            hg_kb_set_cvt(b, j->odt, k->ct, k->ov, hg_reg(src[e]));
        }
        index_of(k, k->ol, e);
        hg_kb_st(b, HG_SPACE_GLOBAL, j->odt, k->o, hg_reg(k->ix), hg_reg(k->ov));
        hg_kb_endif(b);
    }
}

// The norms' weight and bias, then the store (c[e] where the element exists).
static void store_row(rg_k* k) {
    hg_kb* b = &k->b;
    const hg_dev_rows_job* j = k->j;
    for (uint32_t e = 0; e < k->s.E && (j->has_w || j->has_b); e++) {
        hg_kb_if(b, k->v[e]);
        if (j->has_w) param_term(k, e, j->wdt, k->w, k->wl, k->wv, k->cw, HG_OP_MUL);
        if (j->has_b) param_term(k, e, j->bdt, k->bs, k->bl, k->bv, k->cb, HG_OP_ADD);
        hg_kb_endif(b);
    }
    hg_rg_store(k, k->c, 1);
}

static void body_softmax(rg_k* k, int log_form) {
    hg_kb* b = &k->b;
    const hg_dtype C = k->ct;
    load_row(k, -INFINITY);
    hg_kb_mov(b, C, k->acc, hg_reg(k->c[0]));
    for (uint32_t e = 1; e < k->s.E; e++)
        op2(k, HG_OP_MAX, C, k->acc, hg_reg(k->acc), hg_reg(k->c[e]));
    hg_rg_reduce(k, HG_OP_MAX, k->acc);
    hg_kb_mov(b, C, k->st, hg_reg(k->acc));   // the row max
    // exp(x - max) (padded elements: exp(-inf) = 0), kept in c[e] for softmax.
    hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
    for (uint32_t e = 0; e < k->s.E; e++) {
        uint32_t d = log_form ? k->y : k->c[e];
        op2(k, HG_OP_SUB, C, d, hg_reg(k->c[e]), hg_reg(k->st));
        hg_kb_set(b, HG_OP_EXP, C, d, hg_reg(d), hg_none(), hg_none());
        op2(k, HG_OP_ADD, C, k->acc, hg_reg(k->acc), hg_reg(d));
    }
    hg_rg_reduce(k, HG_OP_ADD, k->acc);
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
static void rstd(rg_k* k) {
    const hg_dtype C = k->ct;
    op2(k, HG_OP_DIV, C, k->st, hg_reg(k->acc), k->Rf);
    op2(k, HG_OP_ADD, C, k->st, hg_reg(k->st), k->eps);
    hg_kb_set(&k->b, HG_OP_SQRT, C, k->st, hg_reg(k->st), hg_none(), hg_none());
    op2(k, HG_OP_DIV, C, k->st, ctimm(k, 1.0), hg_reg(k->st));
}

void hg_rg_norm_stats(rg_k* k, int rms) {
    hg_kb* b = &k->b;
    const hg_dtype C = k->ct;
    if (rms) {
        hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
        for (uint32_t e = 0; e < k->s.E; e++)
            hg_kb_set(b, HG_OP_FMA, C, k->acc, hg_reg(k->c[e]), hg_reg(k->c[e]), hg_reg(k->acc));
        hg_rg_reduce(k, HG_OP_ADD, k->acc);
        rstd(k);
        return;
    }
    // K: the row's first element (warp mode: lane 0's c[0]; block mode: loaded by every lane,
    // one cached broadcast read).
    if (!k->s.blk) {
        hg_kb_shfl(b, HG_SHFL_IDX, C, k->kk, hg_reg(k->c[0]), hg_imm_u64(0));
    } else {
        hg_kb_mov(b, C, k->kk, ctimm(k, 0.0));
        hg_kb_if(b, k->ok);
        hg_kb_ld(b, HG_SPACE_GLOBAL, k->j->xdt, k->xv, k->x, hg_reg(k->xb));
        hg_kb_set_cvt(b, C, k->j->xdt, k->kk, hg_reg(k->xv));
        hg_kb_endif(b);
    }
    hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
    for (uint32_t e = 0; e < k->s.E; e++) {
        op2(k, HG_OP_SUB, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->kk));
        hg_kb_set(b, HG_OP_SEL, C, k->c[e], hg_reg(k->v[e]), hg_reg(k->c[e]), ctimm(k, 0.0));
        op2(k, HG_OP_ADD, C, k->acc, hg_reg(k->acc), hg_reg(k->c[e]));
    }
    hg_rg_reduce(k, HG_OP_ADD, k->acc);
    op2(k, HG_OP_DIV, C, k->st, hg_reg(k->acc), k->Rf);   // mean of x - K
    hg_kb_mov(b, C, k->acc, ctimm(k, 0.0));
    for (uint32_t e = 0; e < k->s.E; e++) {
        op2(k, HG_OP_SUB, C, k->c[e], hg_reg(k->c[e]), hg_reg(k->st));
        hg_kb_set(b, HG_OP_SEL, C, k->c[e], hg_reg(k->v[e]), hg_reg(k->c[e]), ctimm(k, 0.0));
        hg_kb_set(b, HG_OP_FMA, C, k->acc, hg_reg(k->c[e]), hg_reg(k->c[e]), hg_reg(k->acc));
    }
    hg_rg_reduce(k, HG_OP_ADD, k->acc);
    rstd(k);
}

static void body_norm(rg_k* k, int rms) {
    const hg_dtype C = k->ct;
    load_row(k, 0.0);
    hg_rg_norm_stats(k, rms);
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
    case HG_DEV_ROWS_SOFTMAX: body_softmax(k, 0); break;
    case HG_DEV_ROWS_LOG_SOFTMAX: body_softmax(k, 1); break;
    case HG_DEV_ROWS_LAYER_NORM: body_norm(k, 0); break;
    case HG_DEV_ROWS_RMS_NORM: body_norm(k, 1); break;
    default: hg_rg_body_bw(k); break;
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
    rg_shape s = pick_shape(j->R, has_g(j->op) ? RG_MAX_E / 2 : RG_MAX_E);
    hg_prog* prog = NULL;
    hg_status st = build(j, s, &prog);
    if (st) return st;
    const hg_dtype ct = j->xdt == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    const uint64_t rows_per = RG_MAX_BLOCKS * s.rpb;
    for (uint64_t row0 = 0; row0 < j->M && !st; row0 += rows_per) {
        uint64_t rows = j->M - row0 < rows_per ? j->M - row0 : rows_per;
        hg_arg args[32];
        size_t n = 0;
        args[n++] = hg_arg_buffer(j->x);
        args[n++] = hg_arg_buffer(j->o);
        if (j->has_w) args[n++] = hg_arg_buffer(j->w);
        if (j->has_b) args[n++] = hg_arg_buffer(j->b);
        if (has_g(j->op)) args[n++] = hg_arg_buffer(j->g);
        if (is_ce(j->op)) args[n++] = hg_arg_buffer(j->t);
        if (j->op == HG_DEV_ROWS_CE_BW) args[n++] = hg_arg_buffer(j->s);
        if (j->op == HG_DEV_ROWS_CE && j->cn.handle) args[n++] = hg_arg_buffer(j->cn);
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
        args[n++] = hg_arg_i64(j->goff);
        args[n++] = hg_arg_i64(j->grs);
        args[n++] = hg_arg_i64(j->toff);
        args[n++] = hg_arg_i64(j->trs);
        args[n++] = hg_arg_i64(j->soff);
        args[n++] = hg_arg_i64(j->srs);
        args[n++] = hg_arg_i64(j->cnoff);
        args[n++] = hg_arg_i64(j->ign);
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
