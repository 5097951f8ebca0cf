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
// Nodes
// ---------------------------------------------------------------------------------------------

typedef struct node_val {
    hg_operand store;   // the value in the node's dtype
    hg_operand wide;    // f16/bf16 nodes: the value widened to f32 (kind NONE until needed)
} node_val;

// Node j's value converted to dtype t, in hg_ew_compute_dtype(t): rounded to t first (so an
// i32 promoted to bf16 is rounded to bf16 before the f32 arithmetic).
static hg_operand value_as(hg_kb* m, const hg_ew_expr* e, node_val* v, int32_t j,
                           hg_dtype t) {
    hg_dtype nt = e->nodes[j].dtype;
    hg_dtype ct = hg_ew_compute_dtype(t);
    if (nt == t && ct == t) return v[j].store;
    if (nt == t) {   // f16/bf16 node: widen once, reuse
        if (v[j].wide.kind == HG_OPERAND_NONE) v[j].wide = hg_kb_cvt(m, ct, t, v[j].store);
        return v[j].wide;
    }
    if (ct != t) {   // to f16/bf16: round to t, then widen
        hg_operand r = hg_kb_cvt(m, t, nt, v[j].store);
        return hg_kb_cvt(m, ct, t, r);
    }
    // Widening an f16/bf16 node to f32/f64 reads the widened f32 value (exact either way).
    if (hg_ew_compute_dtype(nt) != nt && (t == HG_DTYPE_F32 || t == HG_DTYPE_F64)) {
        hg_operand w = value_as(m, e, v, j, nt);
        return hg_kb_cvt(m, t, HG_DTYPE_F32, w);
    }
    return hg_kb_cvt(m, t, nt, v[j].store);
}

// Stores a computed value (in the compute dtype of t) as node j's value.
static void set_result(hg_kb* m, node_val* v, int32_t j, hg_dtype t, hg_operand x) {
    hg_dtype ct = hg_ew_compute_dtype(t);
    if (ct == t) {
        v[j].store = x;
        v[j].wide = hg_none();
        return;
    }
    v[j].store = hg_kb_cvt(m, t, ct, x);
    v[j].wide = hg_none();
}

static void emit_node(hg_kb* m, const hg_ew_expr* e, node_val* v, int32_t j,
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
        if (pt != HG_DTYPE_BOOL) p = hg_kb_cmp(m, HG_CMP_NE, pt, p, hg_kb_imm(pt, 0));
        // Select in the result dtype's storage form: no rounding happens in a select.
        hg_operand a = value_as(m, e, v, n->in[1], n->dtype);
        hg_operand b = value_as(m, e, v, n->in[2], n->dtype);
        set_result(m, v, j, n->dtype,
                   hg_kb_sel(m, hg_ew_compute_dtype(n->dtype), p, a, b));
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
        v[j].store = hg_kb_cvt(m, n->dtype, e->nodes[n->in[0]].dtype, v[n->in[0]].store);
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
    hg_kb m = hg_kb_on(p);
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
    hg_kb m = hg_kb_on(prog);
    for (int32_t j = 0; j < e->nnodes && !m.err; j++) {
        if (nodes[j].kind == HG_OPERAND_REG) {
            node_regs[j] = nodes[j].index;
            continue;
        }
        uint32_t r = hg_kb_new_reg(&m, e->nodes[j].dtype);
        hg_kb_set(&m, HG_OP_MOV, e->nodes[j].dtype, r, nodes[j], hg_none(), hg_none());
        node_regs[j] = r;
    }
    return m.err;
}
