// Matrix products on devices that sgemm does not cover (f64, f16/bf16, integers, bool, mixed
// dtypes, layouts without a unit stride, gemm's alpha/beta for non-f32): one tiled Atlas ISA
// kernel. A 16 x 16 block computes a 16 x 16 tile of O: for each 16-wide step along k the
// block stages a tile of A and of B in shared memory (zeros past the edges), then every lane
// accumulates its element from the two tiles. grid = (column tiles, row tiles, batch).
#include <string.h>
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"

#define MM_TILE 16
#define MM_MAX_GRID_YZ 65535u

// The kernel's parameters, shared tiles and registers (declared in this order; names as in
// docs and dumps) and the dtypes it is built for.
typedef struct mm_k {
    hg_kb b;
    hg_dtype adt, bdt, rt, ct, odt;        // A, B, the result, compute and output types
    uint32_t A, B, O;                      // memory slots
    hg_operand m, n, k, aoff, boff, ooff, ars, acs, brs, bcs, ors, ocs, r0, z0, alpha, beta;
    hg_dk_dim_params zp;                   // batch dims
    uint32_t sa, sb;                       // shared tiles
    uint32_t tx, ty, row, col, kt, ka, kb, z, li, ra, ix;   // u64
    hg_dk_scratch sc;                      // dq, dr (u64), dc, dt (i64)
    uint32_t ab, bb, ob, off, ri;          // i64
    uint32_t av, bv, ca, cb, acc, pr, rv, ov, f1, f2;
    uint32_t ok, ok2, done, az, bz;        // bool
} mm_k;

static void declare(mm_k* mk, int32_t nbatch) {
    hg_kb* b = &mk->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64, F = HG_DTYPE_F64, B = HG_DTYPE_BOOL;
    mk->A = hg_kb_buffer(b, "A", mk->adt, 1);
    mk->B = hg_kb_buffer(b, "B", mk->bdt, 1);
    mk->O = hg_kb_buffer(b, "O", mk->odt, 0);
    mk->m = hg_kb_scalar(b, "m", U);
    mk->n = hg_kb_scalar(b, "n", U);
    mk->k = hg_kb_scalar(b, "k", U);
    mk->aoff = hg_kb_scalar(b, "aoff", I);
    mk->boff = hg_kb_scalar(b, "boff", I);
    mk->ooff = hg_kb_scalar(b, "ooff", I);
    mk->ars = hg_kb_scalar(b, "ars", I);
    mk->acs = hg_kb_scalar(b, "acs", I);
    mk->brs = hg_kb_scalar(b, "brs", I);
    mk->bcs = hg_kb_scalar(b, "bcs", I);
    mk->ors = hg_kb_scalar(b, "ors", I);
    mk->ocs = hg_kb_scalar(b, "ocs", I);
    mk->r0 = hg_kb_scalar(b, "r0", U);
    mk->z0 = hg_kb_scalar(b, "z0", U);
    mk->alpha = hg_kb_scalar(b, "alpha", F);
    mk->beta = hg_kb_scalar(b, "beta", F);
    hg_dk_param_dims(b, "z", nbatch, 3, &mk->zp);
    mk->sa = hg_kb_shared(b, "sa", mk->ct, MM_TILE * MM_TILE);
    mk->sb = hg_kb_shared(b, "sb", mk->ct, MM_TILE * MM_TILE);
    mk->tx = hg_kb_reg(b, "tx", U);
    mk->ty = hg_kb_reg(b, "ty", U);
    mk->row = hg_kb_reg(b, "row", U);
    mk->col = hg_kb_reg(b, "col", U);
    mk->kt = hg_kb_reg(b, "kt", U);
    mk->ka = hg_kb_reg(b, "ka", U);
    mk->kb = hg_kb_reg(b, "kb", U);
    mk->z = hg_kb_reg(b, "z", U);
    hg_dk_scratch_declare(b, &mk->sc);
    mk->li = hg_kb_reg(b, "li", U);
    mk->ra = hg_kb_reg(b, "ra", U);
    mk->ix = hg_kb_reg(b, "ix", U);
    mk->ab = hg_kb_reg(b, "ab", I);
    mk->bb = hg_kb_reg(b, "bb", I);
    mk->ob = hg_kb_reg(b, "ob", I);
    mk->off = hg_kb_reg(b, "off", I);
    mk->ri = hg_kb_reg(b, "ri", I);
    mk->av = hg_kb_reg(b, "av", mk->adt);
    mk->bv = hg_kb_reg(b, "bv", mk->bdt);
    mk->ca = hg_kb_reg(b, "ca", mk->ct);
    mk->cb = hg_kb_reg(b, "cb", mk->ct);
    mk->acc = hg_kb_reg(b, "acc", mk->ct);
    mk->pr = hg_kb_reg(b, "pr", mk->ct);
    mk->rv = hg_kb_reg(b, "rv", mk->rt);
    mk->ov = hg_kb_reg(b, "ov", mk->odt);
    mk->f1 = hg_kb_reg(b, "f1", F);
    mk->f2 = hg_kb_reg(b, "f2", F);
    mk->ok = hg_kb_reg(b, "ok", B);
    mk->ok2 = hg_kb_reg(b, "ok2", B);
    mk->done = hg_kb_reg(b, "done", B);
    mk->az = hg_kb_reg(b, "az", B);
    mk->bz = hg_kb_reg(b, "bz", B);
}

static void op2(mm_k* mk, hg_opcode op, hg_dtype t, uint32_t dst, hg_operand a, hg_operand x) {
    hg_kb_set(&mk->b, op, t, dst, a, x, hg_none());
}

// Opens `if r < rlim && q < qlim` and sets off := r * rs + q * cs + base inside it.
static void if_in_range_offset(mm_k* mk, uint32_t r, uint32_t q, hg_operand rlim,
                               hg_operand qlim, hg_operand rs, hg_operand cs, uint32_t base) {
    hg_kb* b = &mk->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64;
    hg_kb_set_cmp(b, HG_CMP_LT, U, mk->ok, hg_reg(r), rlim);
    hg_kb_set_cmp(b, HG_CMP_LT, U, mk->ok2, hg_reg(q), qlim);
    op2(mk, HG_OP_AND, HG_DTYPE_BOOL, mk->ok, hg_reg(mk->ok), hg_reg(mk->ok2));
    hg_kb_if(b, mk->ok);
    hg_kb_set_cvt(b, I, U, mk->ri, hg_reg(r));
    op2(mk, HG_OP_MUL, I, mk->off, hg_reg(mk->ri), rs);
    hg_kb_set_cvt(b, I, U, mk->ri, hg_reg(q));
    op2(mk, HG_OP_MUL, I, mk->sc.dt, hg_reg(mk->ri), cs);
    op2(mk, HG_OP_ADD, I, mk->off, hg_reg(mk->off), hg_reg(mk->sc.dt));
    op2(mk, HG_OP_ADD, I, mk->off, hg_reg(mk->off), hg_reg(base));
}

// Loads operand X (slot, dtype xdt, through register xr) element (r, q) into the compute-type
// register dst when in range, zero otherwise.
static void tile_load(mm_k* mk, uint32_t slot, hg_dtype xdt, uint32_t r, uint32_t q,
                      hg_operand rlim, hg_operand qlim, hg_operand rs, hg_operand cs,
                      uint32_t base, uint32_t xr, uint32_t dst) {
    hg_kb* b = &mk->b;
    hg_kb_mov(b, mk->ct, dst, hg_kb_imm(mk->ct, 0));
    if_in_range_offset(mk, r, q, rlim, qlim, rs, cs, base);
    hg_kb_ld(b, HG_SPACE_GLOBAL, xdt, xr, slot, hg_reg(mk->off));
    hg_kb_set_cvt(b, mk->ct, xdt, dst, hg_reg(xr));
    hg_kb_endif(b);
}

// The lane's element: col, row (from r0) and batch index z (from z0), and the operands' batch
// offsets ab, bb, ob.
static void lane_element(mm_k* mk, int32_t nbatch) {
    hg_kb* b = &mk->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64, U32 = HG_DTYPE_U32;
    hg_kb_set_cvt(b, U, U32, mk->tx, hg_sreg(HG_SREG_TID_X));
    hg_kb_set_cvt(b, U, U32, mk->ty, hg_sreg(HG_SREG_TID_Y));
    hg_kb_set_cvt(b, U, U32, mk->col, hg_sreg(HG_SREG_CTAID_X));
    op2(mk, HG_OP_MUL, U, mk->col, hg_reg(mk->col), hg_imm_u64(MM_TILE));
    op2(mk, HG_OP_ADD, U, mk->col, hg_reg(mk->col), hg_reg(mk->tx));
    hg_kb_set_cvt(b, U, U32, mk->row, hg_sreg(HG_SREG_CTAID_Y));
    op2(mk, HG_OP_MUL, U, mk->row, hg_reg(mk->row), hg_imm_u64(MM_TILE));
    op2(mk, HG_OP_ADD, U, mk->row, hg_reg(mk->row), hg_reg(mk->ty));
    op2(mk, HG_OP_ADD, U, mk->row, hg_reg(mk->row), mk->r0);
    hg_kb_set_cvt(b, U, U32, mk->z, hg_sreg(HG_SREG_CTAID_Z));
    op2(mk, HG_OP_ADD, U, mk->z, hg_reg(mk->z), mk->z0);
    hg_kb_mov(b, I, mk->ab, mk->aoff);
    hg_kb_mov(b, I, mk->bb, mk->boff);
    hg_kb_mov(b, I, mk->ob, mk->ooff);
    const uint32_t offs[3] = {mk->ab, mk->bb, mk->ob};
    hg_dk_emit_offsets(b, &mk->zp, nbatch, 3, hg_reg(mk->z), offs, &mk->sc);
}

// acc += the lane's row of the A tile times its column of the B tile (bool: OR of ANDs),
// unrolled over the tile.
static void tile_products(mm_k* mk) {
    hg_kb* b = &mk->b;
    const hg_dtype U = HG_DTYPE_U64, ct = mk->ct;
    for (int q = 0; q < MM_TILE; q++) {
        op2(mk, HG_OP_ADD, U, mk->ix, hg_reg(mk->ra), hg_imm_u64((uint64_t)q));
        hg_kb_ld(b, HG_SPACE_SHARED, ct, mk->ca, mk->sa, hg_reg(mk->ix));
        op2(mk, HG_OP_ADD, U, mk->ix, hg_reg(mk->tx), hg_imm_u64((uint64_t)q * MM_TILE));
        hg_kb_ld(b, HG_SPACE_SHARED, ct, mk->cb, mk->sb, hg_reg(mk->ix));
        if (ct == HG_DTYPE_BOOL) {
            op2(mk, HG_OP_AND, HG_DTYPE_BOOL, mk->pr, hg_reg(mk->ca), hg_reg(mk->cb));
            op2(mk, HG_OP_OR, HG_DTYPE_BOOL, mk->acc, hg_reg(mk->acc), hg_reg(mk->pr));
        } else {
            hg_kb_set(b, HG_OP_FMA, ct, mk->acc, hg_reg(mk->ca), hg_reg(mk->cb), hg_reg(mk->acc));
        }
    }
}

// The loop over k in tile steps: stage the A and B tiles in shared memory, accumulate.
static void k_loop(mm_k* mk) {
    hg_kb* b = &mk->b;
    const hg_dtype U = HG_DTYPE_U64, ct = mk->ct;
    hg_kb_mov(b, ct, mk->acc, hg_kb_imm(ct, 0));
    op2(mk, HG_OP_MUL, U, mk->ra, hg_reg(mk->ty), hg_imm_u64(MM_TILE));
    op2(mk, HG_OP_ADD, U, mk->li, hg_reg(mk->ra), hg_reg(mk->tx));
    hg_kb_mov(b, U, mk->kt, hg_imm_u64(0));
    hg_kb_loop(b);
    hg_kb_set_cmp(b, HG_CMP_GE, U, mk->done, hg_reg(mk->kt), mk->k);
    hg_kb_break(b, mk->done);
    op2(mk, HG_OP_ADD, U, mk->ka, hg_reg(mk->kt), hg_reg(mk->tx));
    tile_load(mk, mk->A, mk->adt, mk->row, mk->ka, mk->m, mk->k, mk->ars, mk->acs, mk->ab,
              mk->av, mk->ca);
    hg_kb_st(b, HG_SPACE_SHARED, ct, mk->sa, hg_reg(mk->li), hg_reg(mk->ca));
    op2(mk, HG_OP_ADD, U, mk->kb, hg_reg(mk->kt), hg_reg(mk->ty));
    tile_load(mk, mk->B, mk->bdt, mk->kb, mk->col, mk->k, mk->n, mk->brs, mk->bcs, mk->bb,
              mk->bv, mk->cb);
    hg_kb_st(b, HG_SPACE_SHARED, ct, mk->sb, hg_reg(mk->li), hg_reg(mk->cb));
    hg_kb_bar(b);
    tile_products(mk);
    hg_kb_bar(b);
    op2(mk, HG_OP_ADD, U, mk->kt, hg_reg(mk->kt), hg_imm_u64(MM_TILE));
    hg_kb_endloop(b);
}

// ov := alpha * rv + beta * O[off] in f64 (alpha == 0 drops the product, beta == 0 never
// reads O).
static void gemm_result(mm_k* mk) {
    hg_kb* b = &mk->b;
    const hg_dtype F = HG_DTYPE_F64;
    hg_kb_set_cvt(b, F, mk->rt, mk->f1, hg_reg(mk->rv));
    op2(mk, HG_OP_MUL, F, mk->f1, hg_reg(mk->f1), mk->alpha);
    hg_kb_set_cmp(b, HG_CMP_EQ, F, mk->az, mk->alpha, hg_imm_f64(0.0));
    hg_kb_set(b, HG_OP_SEL, F, mk->f1, hg_reg(mk->az), hg_imm_f64(0.0), hg_reg(mk->f1));
    hg_kb_set_cmp(b, HG_CMP_NE, F, mk->bz, mk->beta, hg_imm_f64(0.0));
    hg_kb_if(b, mk->bz);
    hg_kb_ld(b, HG_SPACE_GLOBAL, mk->odt, mk->ov, mk->O, hg_reg(mk->off));
    hg_kb_set_cvt(b, F, mk->odt, mk->f2, hg_reg(mk->ov));
    hg_kb_set(b, HG_OP_FMA, F, mk->f1, mk->beta, hg_reg(mk->f2), hg_reg(mk->f1));
    hg_kb_endif(b);
    hg_kb_set_cvt(b, mk->odt, F, mk->ov, hg_reg(mk->f1));
}

// The lane's element of O, when in range: acc rounded to rt, then (gemm) scaled, stored as
// O's dtype.
static void store_result(mm_k* mk, int gemm) {
    hg_kb* b = &mk->b;
    if_in_range_offset(mk, mk->row, mk->col, mk->m, mk->n, mk->ors, mk->ocs, mk->ob);
    hg_kb_set_cvt(b, mk->rt, mk->ct, mk->rv, hg_reg(mk->acc));
    if (gemm) gemm_result(mk);
    else hg_kb_set_cvt(b, mk->odt, mk->rt, mk->ov, hg_reg(mk->rv));
    hg_kb_st(b, HG_SPACE_GLOBAL, mk->odt, mk->O, hg_reg(mk->off), hg_reg(mk->ov));
    hg_kb_endif(b);
}

static hg_status build(const char* fn, const hg_dev_mm* p, hg_dtype adt, hg_dtype bdt,
                       hg_dtype rt, hg_dtype ct, hg_dtype odt, int gemm, hg_prog** out) {
    mm_k mk;
    memset(&mk, 0, sizeof mk);
    mk.b = hg_kb_new("hg_dev_matmul");
    mk.adt = adt;
    mk.bdt = bdt;
    mk.rt = rt;
    mk.ct = ct;
    mk.odt = odt;
    declare(&mk, p->nbatch);
    lane_element(&mk, p->nbatch);
    k_loop(&mk);
    store_result(&mk, gemm);
    return hg_dk_finish(&mk.b, fn, out);
}

hg_status hg_dev_matmul(hg_op_ctx* c, const hg_dev_mm* p, const hg_tensor* a, const hg_tensor* b,
                        hg_dtype rt, const hg_tensor* out, int gemm, double alpha, double beta) {
    if (p->m == 0 || p->n == 0) return HG_OK;
    hg_dtype ct = rt == HG_DTYPE_F16 || rt == HG_DTYPE_BF16 ? HG_DTYPE_F32 : rt;
    hg_prog* prog = NULL;
    hg_status st = build(c->fn, p, a->dtype, b->dtype, rt, ct, out->dtype, gemm, &prog);
    if (st) return st;
    uint64_t nz = 1;
    for (int32_t d = 0; d < p->nbatch; d++) nz *= (uint64_t)p->bshape[d];
    uint64_t row_tiles = ((uint64_t)p->m + MM_TILE - 1) / MM_TILE;
    uint64_t col_tiles = ((uint64_t)p->n + MM_TILE - 1) / MM_TILE;
    hg_arg args[24 + 4 * HG_MAX_DIMS];
    if (col_tiles > UINT32_MAX / MM_TILE)
        st = hg_error(HG_ERR_UNSUPPORTED, "%s: %lld columns exceed the device kernel's grid",
                      c->fn, (long long)p->n);
    for (uint64_t z0 = 0; z0 < nz && !st; z0 += MM_MAX_GRID_YZ)
        for (uint64_t t0 = 0; t0 < row_tiles && !st; t0 += MM_MAX_GRID_YZ) {
            uint64_t zc = nz - z0 < MM_MAX_GRID_YZ ? nz - z0 : MM_MAX_GRID_YZ;
            uint64_t tc = row_tiles - t0 < MM_MAX_GRID_YZ ? row_tiles - t0 : MM_MAX_GRID_YZ;
            size_t k = 0;
            args[k++] = hg_arg_buffer(a->buffer);
            args[k++] = hg_arg_buffer(b->buffer);
            args[k++] = hg_arg_buffer(out->buffer);
            args[k++] = hg_arg_u64((uint64_t)p->m);
            args[k++] = hg_arg_u64((uint64_t)p->n);
            args[k++] = hg_arg_u64((uint64_t)p->k);
            args[k++] = hg_arg_i64(a->offset);
            args[k++] = hg_arg_i64(b->offset);
            args[k++] = hg_arg_i64(out->offset);
            args[k++] = hg_arg_i64(p->a_rs);
            args[k++] = hg_arg_i64(p->a_cs);
            args[k++] = hg_arg_i64(p->b_rs);
            args[k++] = hg_arg_i64(p->b_cs);
            args[k++] = hg_arg_i64(p->o_rs);
            args[k++] = hg_arg_i64(p->o_cs);
            args[k++] = hg_arg_u64(t0 * MM_TILE);
            args[k++] = hg_arg_u64(z0);
            args[k++] = hg_arg_f64(alpha);
            args[k++] = hg_arg_f64(beta);
            for (int32_t d = 0; d < p->nbatch; d++) {
                args[k++] = hg_arg_u64((uint64_t)p->bshape[d]);
                args[k++] = hg_arg_i64(p->a_bs[d]);
                args[k++] = hg_arg_i64(p->b_bs[d]);
                args[k++] = hg_arg_i64(p->o_bs[d]);
            }
            hg_launch_config cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.grid.x = (uint32_t)col_tiles;
            cfg.grid.y = (uint32_t)tc;
            cfg.grid.z = (uint32_t)zc;
            cfg.block.x = cfg.block.y = MM_TILE;
            cfg.block.z = 1;
            st = hg_dk_launch(c->ex, c->fn, prog, &cfg, args, k);
        }
    hg_prog_free(prog);
    return st;
}
