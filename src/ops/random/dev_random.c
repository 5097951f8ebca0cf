// random uniform and normal on devices: one Atlas ISA kernel with a lane per output element
// (the data ops' lane-per-element frame, data/dev_lane.h), built with the kernel builder.
//
// Random numbers are the CPU's (random.c): Philox-4x32-10 on the counter offset + i under the
// seed, in 64-bit integer arithmetic, then the same f64 mapping; uniform values are therefore
// bit-identical to the CPU's, normal ones too wherever the device's f64 log, sqrt and cos
// round like the host's (the result is rounded to out's dtype afterwards).
#include <string.h>
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"
#include "ops/data/dev_lane.h"

// The kernel's own params and registers (declared after the frame's, in this order).
typedef struct rn_k {
    hg_dd_kernel f;
    hg_operand off, key0, key1, a, sc, loq, hiq;    // scalars
    uint32_t lo, p0, p1, t64;                       // u64
    uint32_t c0, c1, c2, c3, k0, k1, n0, n2;        // u32: counter, key, round outputs
    uint32_t u1, u2, y;                             // f64
    uint32_t cy;                                    // bool
    hg_operand thr;                                 // dropout: the keep threshold (u64)
    uint32_t idx, wj, w, keep, sf, xf;              // dropout: u64, u64, u32, bool, f32, f32
} rn_k;

// The Philox part: params off, key0, key1 and the registers of the counter and the rounds.
static void declare_philox(rn_k* k) {
    hg_kb* b = &k->f.b;
    const hg_dtype U = HG_DTYPE_U64, U32 = HG_DTYPE_U32;
    k->off = hg_kb_scalar(b, "off", U);
    k->key0 = hg_kb_scalar(b, "key0", U32);
    k->key1 = hg_kb_scalar(b, "key1", U32);
    k->lo = hg_kb_reg(b, "lo", U);
    k->p0 = hg_kb_reg(b, "p0", U);
    k->p1 = hg_kb_reg(b, "p1", U);
    k->t64 = hg_kb_reg(b, "t64", U);
    k->c0 = hg_kb_reg(b, "c0", U32);
    k->c1 = hg_kb_reg(b, "c1", U32);
    k->c2 = hg_kb_reg(b, "c2", U32);
    k->c3 = hg_kb_reg(b, "c3", U32);
    k->k0 = hg_kb_reg(b, "k0", U32);
    k->k1 = hg_kb_reg(b, "k1", U32);
    k->n0 = hg_kb_reg(b, "n0", U32);
    k->n2 = hg_kb_reg(b, "n2", U32);
    k->cy = hg_kb_reg(b, "cy", HG_DTYPE_BOOL);
}

static void declare(rn_k* k) {
    hg_kb* b = &k->f.b;
    const hg_dtype F = HG_DTYPE_F64;
    declare_philox(k);
    k->a = hg_kb_scalar(b, "a", F);
    k->sc = hg_kb_scalar(b, "sc", F);
    k->loq = hg_kb_scalar(b, "loq", F);
    k->hiq = hg_kb_scalar(b, "hiq", F);
    k->u1 = hg_kb_reg(b, "u1", F);
    k->u2 = hg_kb_reg(b, "u2", F);
    k->y = hg_kb_reg(b, "y", F);
}

// d := a (op) x.
static void op2(rn_k* k, hg_opcode op, hg_dtype t, uint32_t d, hg_operand a, hg_operand x) {
    hg_kb_set(&k->f.b, op, t, d, a, x, hg_none());
}

static void cvt(rn_k* k, hg_dtype to, hg_dtype from, uint32_t d, uint32_t a) {
    hg_kb_set_cvt(&k->f.b, to, from, d, hg_reg(a));
}

// The counter offset + idx as words c0..c3 (c2: the carry), the key from the seed.
static void philox_start(rn_k* k, hg_operand idx) {
    const hg_dtype U = HG_DTYPE_U64, U32 = HG_DTYPE_U32;
    hg_kb* b = &k->f.b;
    op2(k, HG_OP_ADD, U, k->lo, k->off, idx);
    hg_kb_set_cmp(b, HG_CMP_LT, U, k->cy, hg_reg(k->lo), k->off);
    cvt(k, U32, U, k->c0, k->lo);
    op2(k, HG_OP_SHR, U, k->p0, hg_reg(k->lo), hg_imm_u64(32));
    cvt(k, U32, U, k->c1, k->p0);
    cvt(k, U32, HG_DTYPE_BOOL, k->c2, k->cy);
    hg_kb_mov(b, U32, k->c3, hg_imm_u64(0));
    hg_kb_mov(b, U32, k->k0, k->key0);
    hg_kb_mov(b, U32, k->k1, k->key1);
}

// n := hi32(p) ^ c ^ key.
static void philox_mix(rn_k* k, uint32_t n, uint32_t p, uint32_t c, uint32_t key) {
    const hg_dtype U32 = HG_DTYPE_U32;
    op2(k, HG_OP_SHR, HG_DTYPE_U64, k->t64, hg_reg(p), hg_imm_u64(32));
    cvt(k, U32, HG_DTYPE_U64, n, k->t64);
    op2(k, HG_OP_XOR, U32, n, hg_reg(n), hg_reg(c));
    op2(k, HG_OP_XOR, U32, n, hg_reg(n), hg_reg(key));
}

// One Philox round: the two 32x32->64 products, then the words permuted and mixed.
static void philox_round(rn_k* k) {
    const hg_dtype U = HG_DTYPE_U64, U32 = HG_DTYPE_U32;
    cvt(k, U, U32, k->p0, k->c0);
    op2(k, HG_OP_MUL, U, k->p0, hg_reg(k->p0), hg_imm_u64(0xD2511F53));
    cvt(k, U, U32, k->p1, k->c2);
    op2(k, HG_OP_MUL, U, k->p1, hg_reg(k->p1), hg_imm_u64(0xCD9E8D57));
    philox_mix(k, k->n0, k->p1, k->c1, k->k0);
    philox_mix(k, k->n2, k->p0, k->c3, k->k1);
    hg_kb_mov(&k->f.b, U32, k->c0, hg_reg(k->n0));
    cvt(k, U32, U, k->c1, k->p1);
    hg_kb_mov(&k->f.b, U32, k->c2, hg_reg(k->n2));
    cvt(k, U32, U, k->c3, k->p0);
}

// Philox-4x32-10 of the counter offset + idx under (key0, key1): words c0..c3.
static void emit_philox(rn_k* k, hg_operand idx) {
    const hg_dtype U32 = HG_DTYPE_U32;
    philox_start(k, idx);
    for (int r = 0; r < 10; r++) {
        if (r) {   // the key schedule (Weyl sequence)
            op2(k, HG_OP_ADD, U32, k->k0, hg_reg(k->k0), hg_imm_u64(0x9E3779B9));
            op2(k, HG_OP_ADD, U32, k->k1, hg_reg(k->k1), hg_imm_u64(0xBB67AE85));
        }
        philox_round(k);
    }
}

// dst := the top 53 bits of (hi << 32 | lo) as f64 (plus `add` before scaling) times 2^-53.
static void emit_top53(rn_k* k, uint32_t dst, uint32_t lo, uint32_t hi, int add) {
    const hg_dtype U = HG_DTYPE_U64, U32 = HG_DTYPE_U32, F = HG_DTYPE_F64;
    cvt(k, U, U32, k->t64, hi);
    op2(k, HG_OP_SHL, U, k->t64, hg_reg(k->t64), hg_imm_u64(32));
    cvt(k, U, U32, k->p0, lo);
    op2(k, HG_OP_OR, U, k->t64, hg_reg(k->t64), hg_reg(k->p0));
    op2(k, HG_OP_SHR, U, k->t64, hg_reg(k->t64), hg_imm_u64(11));
    if (add) op2(k, HG_OP_ADD, U, k->t64, hg_reg(k->t64), hg_imm_u64(1));
    cvt(k, F, U, dst, k->t64);
    op2(k, HG_OP_MUL, F, dst, hg_reg(dst), hg_imm_f64(0x1p-53));
}

// z = sqrt(-2 log u1) cos(2 pi u2), u1 in (0, 1]; ov := a + sc * z.
static void emit_normal(rn_k* k) {
    const hg_dtype F = HG_DTYPE_F64;
    hg_kb* b = &k->f.b;
    emit_top53(k, k->u1, k->c0, k->c1, 1);
    emit_top53(k, k->u2, k->c2, k->c3, 0);
    hg_kb_set(b, HG_OP_LOG, F, k->u1, hg_reg(k->u1), hg_none(), hg_none());
    op2(k, HG_OP_MUL, F, k->u1, hg_reg(k->u1), hg_imm_f64(-2.0));
    hg_kb_set(b, HG_OP_SQRT, F, k->u1, hg_reg(k->u1), hg_none(), hg_none());
    op2(k, HG_OP_MUL, F, k->u2, hg_reg(k->u2), hg_imm_f64(6.283185307179586));
    hg_kb_set(b, HG_OP_COS, F, k->u2, hg_reg(k->u2), hg_none(), hg_none());
    op2(k, HG_OP_MUL, F, k->y, hg_reg(k->u1), hg_reg(k->u2));
    op2(k, HG_OP_MUL, F, k->y, k->sc, hg_reg(k->y));
    op2(k, HG_OP_ADD, F, k->y, k->a, hg_reg(k->y));
    cvt(k, k->f.odt, F, k->f.ov, k->y);
}

// y := bound when y (cc) bound.
static void clamp_to(rn_k* k, hg_cmp cc, hg_operand bound) {
    const hg_dtype F = HG_DTYPE_F64;
    hg_kb_set_cmp(&k->f.b, cc, F, k->cy, hg_reg(k->y), bound);
    hg_kb_set(&k->f.b, HG_OP_SEL, F, k->y, hg_reg(k->cy), bound, hg_reg(k->y));
}

// low + (high - low) * u rounded to the dtype, then kept within [lo_q, hi_q].
static void emit_uniform(rn_k* k) {
    const hg_dtype F = HG_DTYPE_F64, dt = k->f.odt;
    emit_top53(k, k->u1, k->c0, k->c1, 0);
    op2(k, HG_OP_MUL, F, k->y, k->sc, hg_reg(k->u1));
    op2(k, HG_OP_ADD, F, k->y, k->a, hg_reg(k->y));
    cvt(k, dt, F, k->f.ov, k->y);
    cvt(k, F, dt, k->y, k->f.ov);
    clamp_to(k, HG_CMP_GT, k->hiq);
    clamp_to(k, HG_CMP_LT, k->loq);
    cvt(k, dt, F, k->f.ov, k->y);
}

hg_status hg_dev_random(hg_op_ctx* c, const hg_tensor* out, uint64_t seed, uint64_t offset,
                        int normal, double a, double scale, double lo_q, double hi_q) {
    hg_dd_call call;
    hg_dd_setup(&call, c, out, NULL, 1);
    if (call.n == 0) return HG_OK;
    rn_k k;
    memset(&k, 0, sizeof k);
    hg_dd_declare(&k.f, normal ? "hg_dev_random_normal" : "hg_dev_random_uniform", out->dtype,
                  0, out->dtype);
    declare(&k);
    hg_dd_begin(&k.f, call.dims.nd);
    emit_philox(&k, hg_reg(k.f.i));
    if (normal) emit_normal(&k);
    else emit_uniform(&k);
    hg_arg extra[7] = {hg_arg_u64(offset), hg_arg_u32((uint32_t)seed),
                       hg_arg_u32((uint32_t)(seed >> 32)), hg_arg_f64(a), hg_arg_f64(scale),
                       hg_arg_f64(lo_q), hg_arg_f64(hi_q)};
    return hg_dd_run(&call, &k.f, extra, 7);
}

// ---------------------------------------------------------------------------------------------
// Dropout (dropout.c): element i takes word (i / 16) % 4 of counter 16 * (i / 64) + i % 16.
// ---------------------------------------------------------------------------------------------

// The params off, key0, key1, thr, sc and the registers of the dropout kernels.
static void declare_dropout(rn_k* k) {
    hg_kb* b = &k->f.b;
    const hg_dtype U = HG_DTYPE_U64, F32 = HG_DTYPE_F32;
    declare_philox(k);
    k->thr = hg_kb_scalar(b, "thr", U);
    k->sc = hg_kb_scalar(b, "sc", HG_DTYPE_F64);
    k->idx = hg_kb_reg(b, "idx", U);
    k->wj = hg_kb_reg(b, "wj", U);
    k->w = hg_kb_reg(b, "w", HG_DTYPE_U32);
    k->keep = hg_kb_reg(b, "keep", HG_DTYPE_BOOL);
    k->sf = hg_kb_reg(b, "sf", F32);
    k->xf = hg_kb_reg(b, "xf", F32);
    k->y = hg_kb_reg(b, "y", HG_DTYPE_F64);
}

// keep := element i's word >= thr.
static void emit_keep(rn_k* k) {
    const hg_dtype U = HG_DTYPE_U64, U32 = HG_DTYPE_U32;
    hg_kb* b = &k->f.b;
    hg_operand i = hg_reg(k->f.i);
    op2(k, HG_OP_SHR, U, k->idx, i, hg_imm_u64(6));
    op2(k, HG_OP_SHL, U, k->idx, hg_reg(k->idx), hg_imm_u64(4));
    op2(k, HG_OP_AND, U, k->wj, i, hg_imm_u64(15));
    op2(k, HG_OP_OR, U, k->idx, hg_reg(k->idx), hg_reg(k->wj));
    emit_philox(k, hg_reg(k->idx));
    op2(k, HG_OP_SHR, U, k->wj, i, hg_imm_u64(4));
    op2(k, HG_OP_AND, U, k->wj, hg_reg(k->wj), hg_imm_u64(3));
    hg_kb_mov(b, U32, k->w, hg_reg(k->c0));
    const uint32_t words[3] = {k->c1, k->c2, k->c3};
    for (int j = 0; j < 3; j++) {
        hg_kb_set_cmp(b, HG_CMP_EQ, U, k->cy, hg_reg(k->wj), hg_imm_u64((uint64_t)j + 1));
        hg_kb_set(b, HG_OP_SEL, U32, k->w, hg_reg(k->cy), hg_reg(words[j]), hg_reg(k->w));
    }
    cvt(k, U, U32, k->t64, k->w);
    hg_kb_set_cmp(b, HG_CMP_GE, U, k->keep, hg_reg(k->t64), k->thr);
}

// ov := v * (keep ? sc : 0), v of out's dtype, in f64 for f64 and else in f32 (sc rounded).
static void emit_scale(rn_k* k, hg_operand v, uint32_t keep) {
    const hg_dtype F = HG_DTYPE_F64, F32 = HG_DTYPE_F32, dt = k->f.odt;
    hg_kb* b = &k->f.b;
    if (dt == F) {
        hg_kb_set(b, HG_OP_SEL, F, k->y, hg_reg(keep), k->sc, hg_imm_f64(0.0));
        op2(k, HG_OP_MUL, F, k->f.ov, v, hg_reg(k->y));
        return;
    }
    hg_kb_set_cvt(b, F32, F, k->sf, k->sc);
    hg_kb_set(b, HG_OP_SEL, F32, k->sf, hg_reg(keep), hg_reg(k->sf), hg_imm_f32(0.0f));
    if (dt == F32) {
        op2(k, HG_OP_MUL, F32, k->f.ov, v, hg_reg(k->sf));
        return;
    }
    hg_kb_set_cvt(b, F32, dt, k->xf, v);
    op2(k, HG_OP_MUL, F32, k->xf, hg_reg(k->xf), hg_reg(k->sf));
    cvt(k, dt, F32, k->f.ov, k->xf);
}

// One dropout kernel over dst: the mask (x NULL: ov = keep) or dst = x scaled by keep
// (backward: x is the mask, dst holds the gradient already and is scaled in place).
static hg_status dropout_kernel(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* x,
                                int backward, uint64_t seed, uint64_t offset, uint64_t thr,
                                double scale) {
    hg_dd_call call;
    hg_dd_setup(&call, c, dst, x, 1);
    if (call.n == 0) return HG_OK;
    rn_k k;
    memset(&k, 0, sizeof k);
    hg_dd_declare(&k.f, backward ? "hg_dev_dropout_backward" : x ? "hg_dev_dropout"
                                                                 : "hg_dev_dropout_mask",
                  dst->dtype, x != NULL, x ? x->dtype : dst->dtype);
    declare_dropout(&k);
    hg_dd_begin(&k.f, call.dims.nd);
    hg_kb* b = &k.f.b;
    if (x) hg_kb_ld(b, HG_SPACE_GLOBAL, x->dtype, k.f.xv, k.f.x, hg_reg(k.f.xo));
    if (backward) {
        hg_kb_set_cmp(b, HG_CMP_NE, HG_DTYPE_BOOL, k.keep, hg_reg(k.f.xv), hg_imm_bool(0));
        hg_kb_ld(b, HG_SPACE_GLOBAL, dst->dtype, k.f.ov, k.f.o, hg_reg(k.f.oo));
        emit_scale(&k, hg_reg(k.f.ov), k.keep);
    } else {
        emit_keep(&k);
        if (x) emit_scale(&k, hg_reg(k.f.xv), k.keep);
        else hg_kb_mov(b, HG_DTYPE_BOOL, k.f.ov, hg_reg(k.keep));
    }
    hg_arg extra[5] = {hg_arg_u64(offset), hg_arg_u32((uint32_t)seed),
                       hg_arg_u32((uint32_t)(seed >> 32)), hg_arg_u64(thr), hg_arg_f64(scale)};
    return hg_dd_run(&call, &k.f, extra, 5);
}

hg_status hg_dev_dropout(hg_op_ctx* c, const hg_tensor* x, const hg_tensor* out,
                         const hg_tensor* mask, uint64_t seed, uint64_t offset, uint64_t thr,
                         double scale) {
    hg_status s = mask ? dropout_kernel(c, mask, NULL, 0, seed, offset, thr, scale) : HG_OK;
    return s ? s : dropout_kernel(c, out, x, 0, seed, offset, thr, scale);
}

hg_status hg_dev_dropout_backward(hg_op_ctx* c, const hg_tensor* grad, const hg_tensor* mask,
                                  const hg_tensor* out, double scale) {
    hg_status s = hg_dev_copy_cast(c, out, grad);   // in place when out is grad
    return s ? s : dropout_kernel(c, out, mask, 1, 0, 0, 0, scale);
}
