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
} rn_k;

static void declare(rn_k* k) {
    hg_kb* b = &k->f.b;
    const hg_dtype U = HG_DTYPE_U64, U32 = HG_DTYPE_U32, F = HG_DTYPE_F64;
    k->off = hg_kb_scalar(b, "off", U);
    k->key0 = hg_kb_scalar(b, "key0", U32);
    k->key1 = hg_kb_scalar(b, "key1", U32);
    k->a = hg_kb_scalar(b, "a", F);
    k->sc = hg_kb_scalar(b, "sc", F);
    k->loq = hg_kb_scalar(b, "loq", F);
    k->hiq = hg_kb_scalar(b, "hiq", F);
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
    k->u1 = hg_kb_reg(b, "u1", F);
    k->u2 = hg_kb_reg(b, "u2", F);
    k->y = hg_kb_reg(b, "y", F);
    k->cy = hg_kb_reg(b, "cy", HG_DTYPE_BOOL);
}

// d := a (op) x.
static void op2(rn_k* k, hg_opcode op, hg_dtype t, uint32_t d, hg_operand a, hg_operand x) {
    hg_kb_set(&k->f.b, op, t, d, a, x, hg_none());
}

static void cvt(rn_k* k, hg_dtype to, hg_dtype from, uint32_t d, uint32_t a) {
    hg_kb_set_cvt(&k->f.b, to, from, d, hg_reg(a));
}

// The counter offset + i as words c0..c3 (c2: the carry), the key from the seed.
static void philox_start(rn_k* k) {
    const hg_dtype U = HG_DTYPE_U64, U32 = HG_DTYPE_U32;
    hg_kb* b = &k->f.b;
    op2(k, HG_OP_ADD, U, k->lo, k->off, hg_reg(k->f.i));
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

// Philox-4x32-10 of the counter offset + i under (key0, key1): words c0..c3.
static void emit_philox(rn_k* k) {
    const hg_dtype U32 = HG_DTYPE_U32;
    philox_start(k);
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
    emit_philox(&k);
    if (normal) emit_normal(&k);
    else emit_uniform(&k);
    hg_arg extra[7] = {hg_arg_u64(offset), hg_arg_u32((uint32_t)seed),
                       hg_arg_u32((uint32_t)(seed >> 32)), hg_arg_f64(a), hg_arg_f64(scale),
                       hg_arg_f64(lo_q), hg_arg_f64(hi_q)};
    return hg_dd_run(&call, &k.f, extra, 7);
}
