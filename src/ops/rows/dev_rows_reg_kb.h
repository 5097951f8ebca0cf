// Internal (rows family): the builder pieces the register-resident row kernels share
// (dev_rows_reg.c builds the forward ops and launches every kernel; dev_rows_reg_bw.c adds the
// backward ops and cross-entropy): the kernel's shape, its registers and parameters, and the
// steps every kernel takes (the lane's row and offsets, row loads into registers, butterfly
// reductions, stores).
#ifndef HG_OPS_ROWS_DEV_ROWS_REG_KB_H
#define HG_OPS_ROWS_DEV_ROWS_REG_KB_H
#include <stdint.h>
#include "isa/builder.h"
#include "ops/rows/dev_rows_reg.h"

#define RG_WARP 32u
#define RG_MAX_E 32u
#define RG_NSW 4   // shared arrays (block mode): one per reduction a kernel makes

typedef struct rg_shape {
    uint32_t T;      // lanes per row
    uint32_t E;      // elements per lane (power of two)
    uint32_t rpb;    // rows per block
    int blk;         // block mode (a row per block, shared memory across warps)
} rg_shape;

typedef struct rg_k {
    hg_kb b;
    const hg_dev_rows_job* j;
    rg_shape s;
    hg_dtype ct;
    int nsw;                                                      // reductions made so far
    uint32_t x, o, w, bs, g, t, sc, cn, sw[RG_NSW];               // memory slots
    hg_operand row0, M, R, Rf, eps, xoff, ooff, woff, boff, xrs, ors;
    hg_operand goff, grs, toff, trs, soff, srs, cnoff, ign;       // (declared where used)
    uint32_t tl, ln, wi, jj;                                      // u32
    uint32_t row, r64;                                            // u64
    uint32_t xb, xl, ol, wl, bl, gl, ix, t64, ti;                 // i64
    uint32_t ok, p, hit;                                          // bool
    uint32_t xv, rv, ov, wv, bv, gv, tv, sv;                      // storage types
    uint32_t acc, oth, st, y, cw, cb, kk, a2, scl;                // ct
    uint32_t fl, fm, fx, one;                                     // f64 (CE)
    uint32_t v[RG_MAX_E], c[RG_MAX_E], d[RG_MAX_E];
} rg_k;

// d = a op x in type t.
void hg_rg_op2(rg_k* k, hg_opcode op, hg_dtype t, uint32_t d, hg_operand a, hg_operand x);
hg_operand hg_rg_ctimm(const rg_k* k, double v);
// reg := op (add or max) over the row's lanes of reg; every lane gets the result.
void hg_rg_reduce(rg_k* k, hg_opcode op, uint32_t reg);
// k->ix := base + e * T (i64).
void hg_rg_index_of(rg_k* k, uint32_t base, uint32_t e);
// The lane's position, its row, the validity of its elements (v[e]) and its offsets.
void hg_rg_setup(rg_k* k);
// dst[e] := the row's element e of slot (dtype dt) from lane offset base, in the compute type,
// or pad where the element does not exist (tmp: a register of dt).
void hg_rg_load(rg_k* k, uint32_t slot, hg_dtype dt, uint32_t base, uint32_t tmp,
                const uint32_t* dst, double pad);
// Stores src[e] (rounded to x's dtype first when via_x) as out's dtype where it exists.
void hg_rg_store(rg_k* k, const uint32_t* src, int via_x);
// The norms' statistics of c[] (x): layer_norm: c[e] := x - mean (0 where absent), acc := the
// sum of squared deviations; rms_norm: acc := the sum of squares; then st := rstd.
void hg_rg_norm_stats(rg_k* k, int rms);

// dev_rows_reg_bw.c: the backward ops' and cross-entropy's registers and bodies.
void hg_rg_declare_bw(rg_k* k);
void hg_rg_body_bw(rg_k* k);

#endif
