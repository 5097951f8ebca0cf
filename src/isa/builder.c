// The kernel builder (see builder.h): declarations, instructions and control flow on hg_prog,
// with the first error kept.
#include "isa/builder.h"
#include <stdio.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"

hg_kb hg_kb_new(const char* name) {
    hg_kb b = {hg_prog_new(name), HG_OK};
    if (!b.p) b.err = hg_name_is_identifier(name) ? HG_ERR_OUT_OF_MEMORY : HG_ERR_INVALID_ARGUMENT;
    return b;
}

hg_status hg_kb_finish(hg_kb* b, hg_prog** out) {
    *out = NULL;
    if (b->err) {
        hg_prog_free(b->p);
        b->p = NULL;
        return b->err;
    }
    *out = b->p;
    b->p = NULL;
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------
uint32_t hg_kb_buffer(hg_kb* b, const char* name, hg_dtype t, int is_const) {
    uint32_t i = 0;
    if (!b->err) b->err = hg_prog_add_param(b->p, name, HG_PARAM_BUFFER, t, is_const, &i);
    return i;
}

hg_operand hg_kb_scalar(hg_kb* b, const char* name, hg_dtype t) {
    uint32_t i = 0;
    if (!b->err) b->err = hg_prog_add_param(b->p, name, HG_PARAM_SCALAR, t, 0, &i);
    return hg_param(i);
}

uint32_t hg_kb_shared(hg_kb* b, const char* name, hg_dtype t, uint32_t count) {
    uint32_t i = 0;
    if (!b->err) b->err = hg_prog_add_shared(b->p, name, t, count, &i);
    return i;
}

uint32_t hg_kb_reg(hg_kb* b, const char* name, hg_dtype t) {
    uint32_t r = 0;
    if (b->err) return 0;
    if (b->p->nregs >= HG_MAX_REGS)
        b->err = hg_error(HG_ERR_UNSUPPORTED, "kernel '%s': needs more than %d registers",
                          b->p->name, HG_MAX_REGS);
    else
        b->err = hg_prog_add_reg(b->p, name, t, &r);
    return r;
}

uint32_t hg_kb_new_reg(hg_kb* b, hg_dtype t) {
    if (b->err) return 0;
    char name[HG_NAME_MAX];
    // Unique in the program, and unlikely to meet a caller's own names.
    snprintf(name, sizeof name, "ew_t%u", b->p->nregs);
    return hg_kb_reg(b, name, t);
}

hg_operand hg_kb_imm(hg_dtype t, double v) {
    switch (t) {
    case HG_DTYPE_F32: return hg_imm_f32((float)v);
    case HG_DTYPE_F64: return hg_imm_f64(v);
    case HG_DTYPE_F16: return hg_imm_f16((float)v);
    case HG_DTYPE_BF16: return hg_imm_bf16((float)v);
    case HG_DTYPE_BOOL: return hg_imm_bool(v != 0);
    case HG_DTYPE_U64: return hg_imm_u64((uint64_t)v);
    default: {
        // Truncate to the type's width, as hg_program_emit does for builder immediates.
        uint64_t bits = (uint64_t)(int64_t)v;
        unsigned w = hg_dtype_bits((int)t);
        if (w < 64) bits &= (UINT64_C(1) << w) - 1;
        return hg_imm_bits(bits);
    }
    }
}

// ---------------------------------------------------------------------------------------------
// Instructions
// ---------------------------------------------------------------------------------------------
static hg_instr instr(hg_opcode op, hg_dtype t, uint8_t aux) {
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = (uint16_t)op;
    in.type = (uint8_t)t;
    in.aux = aux;
    return in;
}

static void emit(hg_kb* b, const hg_instr* in) {
    if (!b->err) b->err = hg_prog_emit(b->p, in);
}

static void emit3(hg_kb* b, hg_opcode op, hg_dtype t, uint8_t aux, uint32_t dst, hg_operand a,
                  hg_operand x, hg_operand c) {
    hg_instr in = instr(op, t, aux);
    in.dst = hg_reg(dst);
    in.src[0] = a;
    in.src[1] = x;
    in.src[2] = c;
    emit(b, &in);
}

void hg_kb_set(hg_kb* b, hg_opcode op, hg_dtype t, uint32_t dst, hg_operand a, hg_operand x,
               hg_operand c) {
    emit3(b, op, t, 0, dst, a, x, c);
}

void hg_kb_mov(hg_kb* b, hg_dtype t, uint32_t dst, hg_operand a) {
    emit3(b, HG_OP_MOV, t, 0, dst, a, hg_none(), hg_none());
}

void hg_kb_set_cmp(hg_kb* b, hg_cmp cc, hg_dtype t, uint32_t dst, hg_operand a, hg_operand x) {
    emit3(b, HG_OP_CMP, t, (uint8_t)cc, dst, a, x, hg_none());
}

void hg_kb_set_cvt(hg_kb* b, hg_dtype to, hg_dtype from, uint32_t dst, hg_operand a) {
    if (to == from) hg_kb_mov(b, to, dst, a);
    else emit3(b, HG_OP_CVT, to, (uint8_t)from, dst, a, hg_none(), hg_none());
}

void hg_kb_ld(hg_kb* b, hg_space sp, hg_dtype t, uint32_t dst, uint32_t slot, hg_operand idx) {
    hg_instr in = instr(HG_OP_LD, t, (uint8_t)sp);
    in.mem = slot;
    in.dst = hg_reg(dst);
    in.src[0] = idx;
    emit(b, &in);
}

void hg_kb_st(hg_kb* b, hg_space sp, hg_dtype t, uint32_t slot, hg_operand idx, hg_operand v) {
    hg_instr in = instr(HG_OP_ST, t, (uint8_t)sp);
    in.mem = slot;
    in.src[0] = idx;
    in.src[1] = v;
    emit(b, &in);
}

static void vec(hg_kb* b, hg_opcode op, hg_space sp, hg_dtype t, uint32_t width, uint32_t slot,
                hg_operand idx, uint32_t first) {
    hg_instr in = instr(op, t, hg_vec_aux(sp, width));
    in.mem = slot;
    in.src[0] = idx;
    if (op == HG_OP_LDV) in.dst = hg_reg(first);
    else in.src[1] = hg_reg(first);
    emit(b, &in);
}

void hg_kb_ldv(hg_kb* b, hg_space sp, hg_dtype t, uint32_t width, uint32_t first, uint32_t slot,
               hg_operand idx) {
    vec(b, HG_OP_LDV, sp, t, width, slot, idx, first);
}

void hg_kb_stv(hg_kb* b, hg_space sp, hg_dtype t, uint32_t width, uint32_t slot, hg_operand idx,
               uint32_t first) {
    vec(b, HG_OP_STV, sp, t, width, slot, idx, first);
}

void hg_kb_atom(hg_kb* b, hg_space sp, hg_atomic_op op, hg_dtype t, uint32_t slot, hg_operand idx,
                hg_operand v) {
    hg_instr in = instr(HG_OP_ATOM, t, hg_atom_aux((unsigned)op, (unsigned)sp));
    in.mem = slot;
    in.dst = hg_none();
    in.src[0] = idx;
    in.src[1] = v;
    emit(b, &in);
}

void hg_kb_shfl(hg_kb* b, hg_shfl_mode mode, hg_dtype t, uint32_t dst, hg_operand a,
                hg_operand lane) {
    hg_instr in = instr(HG_OP_SHFL, t, (uint8_t)mode);
    in.dst = hg_reg(dst);
    in.src[0] = a;
    in.src[1] = lane;
    emit(b, &in);
}

static hg_operand emit_new(hg_kb* b, hg_opcode op, hg_dtype t, hg_dtype dt, uint8_t aux,
                           hg_operand a, hg_operand x, hg_operand c) {
    uint32_t d = hg_kb_new_reg(b, dt);
    emit3(b, op, t, aux, d, a, x, c);
    return hg_reg(d);
}

hg_operand hg_kb_op1(hg_kb* b, hg_opcode op, hg_dtype t, hg_operand a) {
    return emit_new(b, op, t, t, 0, a, hg_none(), hg_none());
}
hg_operand hg_kb_op2(hg_kb* b, hg_opcode op, hg_dtype t, hg_operand a, hg_operand x) {
    return emit_new(b, op, t, t, 0, a, x, hg_none());
}
hg_operand hg_kb_op3(hg_kb* b, hg_opcode op, hg_dtype t, hg_operand a, hg_operand x,
                     hg_operand c) {
    return emit_new(b, op, t, t, 0, a, x, c);
}
hg_operand hg_kb_cmp(hg_kb* b, hg_cmp cc, hg_dtype t, hg_operand a, hg_operand x) {
    return emit_new(b, HG_OP_CMP, t, HG_DTYPE_BOOL, (uint8_t)cc, a, x, hg_none());
}
hg_operand hg_kb_sel(hg_kb* b, hg_dtype t, hg_operand p, hg_operand a, hg_operand x) {
    return emit_new(b, HG_OP_SEL, t, t, 0, p, a, x);
}
hg_operand hg_kb_cvt(hg_kb* b, hg_dtype to, hg_dtype from, hg_operand a) {
    if (to == from) return a;
    return emit_new(b, HG_OP_CVT, to, to, (uint8_t)from, a, hg_none(), hg_none());
}

void hg_kb_ctl(hg_kb* b, hg_opcode op, hg_operand cond) {
    hg_instr in = instr(op, HG_DTYPE_BOOL, 0);  // untyped instructions carry type 0
    in.src[0] = cond;
    emit(b, &in);
}
