// Emission of an elementwise expression into ISA instructions: the emitter helpers and the walk
// over the nodes. Each node's value is kept in its own dtype (so it is rounded exactly as the
// eager op's result); f16/bf16 values are widened to f32 for the next node's arithmetic.
#include <stdio.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/elementwise/ewise.h"
#include "ops/elementwise/ewise_internal.h"

// ---------------------------------------------------------------------------------------------
// Emitter helpers
// ---------------------------------------------------------------------------------------------

hg_operand hg_ew_imm(hg_dtype t, double v) {
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

uint32_t hg_ew_new_reg(hg_ew_em* m, hg_dtype t) {
    if (m->err) return 0;
    char name[HG_NAME_MAX];
    // Unique in the program, and unlikely to meet a caller's own names (hg_ew_emit).
    snprintf(name, sizeof name, "ew_t%u", m->p->nregs);
    uint32_t r = 0;
    if (m->p->nregs >= HG_MAX_REGS)
        m->err = hg_error(HG_ERR_UNSUPPORTED,
                          "elementwise kernel: the expression needs more than %d registers",
                          HG_MAX_REGS);
    else
        m->err = hg_prog_add_reg(m->p, name, t, &r);
    return r;
}

static void emit(hg_ew_em* m, const hg_instr* in) {
    if (!m->err) m->err = hg_prog_emit(m->p, in);
}

static hg_instr instr(hg_opcode op, hg_dtype t) {
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = (uint16_t)op;
    in.type = (uint8_t)t;
    return in;
}

void hg_ew_set(hg_ew_em* m, hg_opcode op, hg_dtype t, uint32_t dst, hg_operand a, hg_operand b,
               hg_operand c) {
    hg_instr in = instr(op, t);
    in.dst = hg_reg(dst);
    in.src[0] = a;
    in.src[1] = b;
    in.src[2] = c;
    emit(m, &in);
}

static hg_operand emit_new(hg_ew_em* m, hg_opcode op, hg_dtype t, hg_dtype dt, uint8_t aux,
                           hg_operand a, hg_operand b, hg_operand c) {
    uint32_t d = hg_ew_new_reg(m, dt);
    hg_instr in = instr(op, t);
    in.aux = aux;
    in.dst = hg_reg(d);
    in.src[0] = a;
    in.src[1] = b;
    in.src[2] = c;
    emit(m, &in);
    return hg_reg(d);
}

hg_operand hg_ew_op1(hg_ew_em* m, hg_opcode op, hg_dtype t, hg_operand a) {
    return emit_new(m, op, t, t, 0, a, hg_none(), hg_none());
}
hg_operand hg_ew_op2(hg_ew_em* m, hg_opcode op, hg_dtype t, hg_operand a, hg_operand b) {
    return emit_new(m, op, t, t, 0, a, b, hg_none());
}
hg_operand hg_ew_op3(hg_ew_em* m, hg_opcode op, hg_dtype t, hg_operand a, hg_operand b,
                     hg_operand c) {
    return emit_new(m, op, t, t, 0, a, b, c);
}
hg_operand hg_ew_cmp(hg_ew_em* m, hg_cmp cc, hg_dtype t, hg_operand a, hg_operand b) {
    return emit_new(m, HG_OP_CMP, t, HG_DTYPE_BOOL, (uint8_t)cc, a, b, hg_none());
}
hg_operand hg_ew_sel(hg_ew_em* m, hg_dtype t, hg_operand p, hg_operand a, hg_operand b) {
    return emit_new(m, HG_OP_SEL, t, t, 0, p, a, b);
}
hg_operand hg_ew_cvt(hg_ew_em* m, hg_dtype to, hg_dtype from, hg_operand a) {
    if (to == from) return a;
    return emit_new(m, HG_OP_CVT, to, to, (uint8_t)from, a, hg_none(), hg_none());
}
void hg_ew_ctl(hg_ew_em* m, hg_opcode op, hg_operand cond) {
    hg_instr in = instr(op, 0);
    in.src[0] = cond;
    emit(m, &in);
}

// ---------------------------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------------------------

typedef struct node_val {
    hg_operand store;   // the value in the node's dtype
    hg_operand wide;    // f16/bf16 nodes: the value widened to f32 (kind NONE until needed)
} node_val;

// Node j's value converted to dtype t, in hg_ew_compute_dtype(t): rounded to t first (so an
// i32 promoted to bf16 is rounded to bf16 before the f32 arithmetic).
static hg_operand value_as(hg_ew_em* m, const hg_ew_expr* e, node_val* v, int32_t j,
                           hg_dtype t) {
    hg_dtype nt = e->nodes[j].dtype;
    hg_dtype ct = hg_ew_compute_dtype(t);
    if (nt == t && ct == t) return v[j].store;
    if (nt == t) {   // f16/bf16 node: widen once, reuse
        if (v[j].wide.kind == HG_OPERAND_NONE) v[j].wide = hg_ew_cvt(m, ct, t, v[j].store);
        return v[j].wide;
    }
    if (ct != t) {   // to f16/bf16: round to t, then widen
        hg_operand r = hg_ew_cvt(m, t, nt, v[j].store);
        return hg_ew_cvt(m, ct, t, r);
    }
    // Widening an f16/bf16 node to f32/f64 reads the widened f32 value (exact either way).
    if (hg_ew_compute_dtype(nt) != nt && (t == HG_DTYPE_F32 || t == HG_DTYPE_F64)) {
        hg_operand w = value_as(m, e, v, j, nt);
        return hg_ew_cvt(m, t, HG_DTYPE_F32, w);
    }
    return hg_ew_cvt(m, t, nt, v[j].store);
}

// Stores a computed value (in the compute dtype of t) as node j's value.
static void set_result(hg_ew_em* m, node_val* v, int32_t j, hg_dtype t, hg_operand x) {
    hg_dtype ct = hg_ew_compute_dtype(t);
    if (ct == t) {
        v[j].store = x;
        v[j].wide = hg_none();
        return;
    }
    v[j].store = hg_ew_cvt(m, t, ct, x);
    v[j].wide = hg_none();
}

static void emit_node(hg_ew_em* m, const hg_ew_expr* e, node_val* v, int32_t j,
                      const hg_operand* input_ops) {
    const hg_ew_node* n = &e->nodes[j];
    switch (n->kind) {
    case HG_EW_INPUT:
        v[j].store = input_ops[n->input];
        v[j].wide = hg_none();
        return;
    case HG_EW_CONST:
        v[j].store = hg_imm_bits(hg_ew_scalar_bits(n->dtype, n->value));
        v[j].wide = hg_none();
        if (hg_ew_compute_dtype(n->dtype) != n->dtype) {
            // The widened constant is exact: emit it as an f32 immediate, no instruction.
            uint16_t h = (uint16_t)v[j].store.bits;
            float f = n->dtype == HG_DTYPE_F16 ? hg_f16_to_f32(h) : hg_bf16_to_f32(h);
            v[j].wide = hg_imm_f32(f);
        }
        return;
    case HG_EW_UNARY: {
        hg_unary_op op = (hg_unary_op)n->op;
        hg_dtype xt = e->nodes[n->in[0]].dtype;
        // Float functions of integers compute in the result's float dtype; reciprocal and
        // square of bool in int8; the others in the input's dtype.
        hg_dtype at = (hg_ew_unary_is_float_fn(op) || op == HG_UNARY_RECIPROCAL ||
                       op == HG_UNARY_SQUARE)
                          ? n->dtype : xt;
        hg_operand x = value_as(m, e, v, n->in[0], at);
        set_result(m, v, j, n->dtype, hg_ew_emit_unary(m, op, at, n->dtype, x));
        return;
    }
    case HG_EW_BINARY: {
        hg_dtype rt, ct;
        hg_ew_binary_dtype((hg_binary_op)n->op, e->nodes[n->in[0]].dtype,
                           e->nodes[n->in[1]].dtype, &rt, &ct);
        hg_operand a = value_as(m, e, v, n->in[0], ct);
        hg_operand b = value_as(m, e, v, n->in[1], ct);
        set_result(m, v, j, n->dtype, hg_ew_emit_binary(m, (hg_binary_op)n->op, ct, rt, a, b));
        return;
    }
    case HG_EW_WHERE: {
        hg_dtype pt = e->nodes[n->in[0]].dtype;
        hg_operand p = v[n->in[0]].store;
        if (pt != HG_DTYPE_BOOL) p = hg_ew_cmp(m, HG_CMP_NE, pt, p, hg_ew_imm(pt, 0));
        // Select in the result dtype's storage form: no rounding happens in a select.
        hg_operand a = value_as(m, e, v, n->in[1], n->dtype);
        hg_operand b = value_as(m, e, v, n->in[2], n->dtype);
        set_result(m, v, j, n->dtype,
                   hg_ew_sel(m, hg_ew_compute_dtype(n->dtype), p, a, b));
        return;
    }
    case HG_EW_FMA: {
        hg_operand a = value_as(m, e, v, n->in[0], n->dtype);
        hg_operand b = value_as(m, e, v, n->in[1], n->dtype);
        hg_operand c = value_as(m, e, v, n->in[2], n->dtype);
        set_result(m, v, j, n->dtype, hg_ew_emit_fma(m, n->dtype, a, b, c));
        return;
    }
    case HG_EW_CAST:
        v[j].store = hg_ew_cvt(m, n->dtype, e->nodes[n->in[0]].dtype, v[n->in[0]].store);
        v[j].wide = hg_none();
        return;
    default:
        if (!m->err)
            m->err = hg_error(HG_ERR_INTERNAL, "elementwise expression: node %d has kind %d",
                              (int)j, (int)n->kind);
        return;
    }
}

static int operand_count(hg_ew_kind k) {
    switch (k) {
    case HG_EW_UNARY: case HG_EW_CAST: return 1;
    case HG_EW_BINARY: return 2;
    case HG_EW_WHERE: case HG_EW_FMA: return 3;
    default: return 0;
    }
}

hg_status hg_ew_emit_ops(hg_prog* p, const hg_ew_expr* e, const hg_operand* input_ops,
                         hg_operand* node_ops) {
    hg_ew_em m = {p, HG_OK};
    node_val v[HG_EW_MAX_NODES];
    for (int32_t j = 0; j < e->nnodes && !m.err; j++) {
        const hg_ew_node* n = &e->nodes[j];
        for (int k = 0; k < operand_count(n->kind); k++)
            if (n->in[k] < 0 || n->in[k] >= j)
                return hg_error(HG_ERR_INVALID_ARGUMENT,
                                "elementwise expression: node %d has an invalid operand %d "
                                "(operands must be earlier nodes)", (int)j, (int)n->in[k]);
        if (n->kind == HG_EW_INPUT && (n->input < 0 || n->input >= e->ninputs))
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "elementwise expression: node %d reads input %d of %d", (int)j,
                            (int)n->input, (int)e->ninputs);
        emit_node(&m, e, v, j, input_ops);
        node_ops[j] = v[j].store;
    }
    return m.err;
}

hg_status hg_ew_emit(hg_prog* prog, const hg_ew_expr* e, const uint32_t* input_regs,
                     uint32_t* node_regs) {
    hg_operand in[HG_EW_MAX_INPUTS];
    hg_operand nodes[HG_EW_MAX_NODES];
    for (int32_t i = 0; i < e->ninputs; i++) in[i] = hg_reg(input_regs[i]);
    hg_status s = hg_ew_emit_ops(prog, e, in, nodes);
    if (s) return s;
    // Constants are immediates: give each node that is not a register one.
    hg_ew_em m = {prog, HG_OK};
    for (int32_t j = 0; j < e->nnodes && !m.err; j++) {
        if (nodes[j].kind == HG_OPERAND_REG) {
            node_regs[j] = nodes[j].index;
            continue;
        }
        uint32_t r = hg_ew_new_reg(&m, e->nodes[j].dtype);
        hg_ew_set(&m, HG_OP_MOV, e->nodes[j].dtype, r, nodes[j], hg_none(), hg_none());
        node_regs[j] = r;
    }
    return m.err;
}
