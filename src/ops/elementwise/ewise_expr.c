// Building elementwise expressions: every node gets the dtype the eager op would give it, so a
// builder error is the eager op's error.
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/elementwise/ewise.h"
#include "ops/elementwise/ewise_internal.h"
#include "tensor/tensor_internal.h"

void hg_ew_expr_init(hg_ew_expr* e, int32_t ndim, const int64_t* shape) {
    e->ndim = ndim < 0 ? 0 : ndim > HG_MAX_DIMS ? HG_MAX_DIMS : ndim;
    memset(e->shape, 0, sizeof e->shape);
    for (int32_t i = 0; i < e->ndim; i++) e->shape[i] = shape[i];
    e->nnodes = 0;
    e->ninputs = 0;
    e->noutputs = 0;
}

static int32_t add_node(hg_ew_expr* e, hg_ew_kind kind, int32_t op, hg_dtype dtype, int32_t a,
                        int32_t b, int32_t c) {
    if (e->nnodes >= HG_EW_MAX_NODES) {
        hg_error(HG_ERR_UNSUPPORTED, "elementwise expression: more than %d nodes",
                 HG_EW_MAX_NODES);
        return -1;
    }
    hg_ew_node* n = &e->nodes[e->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->op = op;
    n->dtype = dtype;
    n->in[0] = a;
    n->in[1] = b;
    n->in[2] = c;
    n->input = -1;
    return e->nnodes++;
}

static int check_node(const hg_ew_expr* e, int32_t i, const char* what) {
    if (i < 0 || i >= e->nnodes) {
        hg_error(HG_ERR_INVALID_ARGUMENT,
                 "elementwise expression: %s refers to node %d (valid: 0..%d)", what, (int)i,
                 (int)e->nnodes - 1);
        return 0;
    }
    return 1;
}

int32_t hg_ew_input(hg_ew_expr* e, hg_dtype dtype, int32_t ndim, const int64_t* shape) {
    char sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT];
    if (!hg_dtype_valid((int)dtype)) {
        hg_error(HG_ERR_INVALID_ARGUMENT, "elementwise expression: input dtype %d is invalid",
                 (int)dtype);
        return -1;
    }
    if (e->ninputs >= HG_EW_MAX_INPUTS) {
        hg_error(HG_ERR_UNSUPPORTED, "elementwise expression: more than %d inputs",
                 HG_EW_MAX_INPUTS);
        return -1;
    }
    if (ndim < 0 || ndim > e->ndim) {
        hg_error(HG_ERR_SIZE_MISMATCH,
                 "elementwise expression: input of %d dims cannot broadcast to the iteration "
                 "shape %s", (int)ndim, hg_tensor_format_dims(tb, e->ndim, e->shape));
        return -1;
    }
    for (int32_t i = 0; i < ndim; i++) {
        int64_t s = shape[i], t = e->shape[e->ndim - ndim + i];
        if (s != t && s != 1) {
            hg_error(HG_ERR_SIZE_MISMATCH,
                     "elementwise expression: input shape %s does not broadcast to the "
                     "iteration shape %s", hg_tensor_format_dims(sb, ndim, shape),
                     hg_tensor_format_dims(tb, e->ndim, e->shape));
            return -1;
        }
    }
    int32_t id = add_node(e, HG_EW_INPUT, 0, dtype, -1, -1, -1);
    if (id < 0) return -1;
    hg_ew_operand* in = &e->inputs[e->ninputs];
    memset(in, 0, sizeof *in);
    in->dtype = dtype;
    in->ndim = ndim;
    for (int32_t i = 0; i < ndim; i++) in->shape[i] = shape[i];
    e->nodes[id].input = e->ninputs++;
    return id;
}

int32_t hg_ew_const(hg_ew_expr* e, hg_dtype dtype, hg_scalar value) {
    if (!hg_dtype_valid((int)dtype) || (unsigned)value.kind >= HG_SCALAR_KIND_COUNT) {
        hg_error(HG_ERR_INVALID_ARGUMENT, "elementwise expression: constant of invalid %s %d",
                 hg_dtype_valid((int)dtype) ? "scalar kind" : "dtype",
                 hg_dtype_valid((int)dtype) ? (int)value.kind : (int)dtype);
        return -1;
    }
    int32_t id = add_node(e, HG_EW_CONST, 0, dtype, -1, -1, -1);
    if (id >= 0) e->nodes[id].value = value;
    return id;
}

int32_t hg_ew_unary(hg_ew_expr* e, hg_unary_op op, int32_t x) {
    if (!check_node(e, x, "unary operand")) return -1;
    hg_dtype r;
    if (hg_ew_unary_dtype(op, e->nodes[x].dtype, &r)) return -1;
    return add_node(e, HG_EW_UNARY, (int32_t)op, r, x, -1, -1);
}

int32_t hg_ew_binary(hg_ew_expr* e, hg_binary_op op, int32_t a, int32_t b) {
    if (!check_node(e, a, "binary operand a") || !check_node(e, b, "binary operand b")) return -1;
    hg_dtype r, c;
    if (hg_ew_binary_dtype(op, e->nodes[a].dtype, e->nodes[b].dtype, &r, &c)) return -1;
    return add_node(e, HG_EW_BINARY, (int32_t)op, r, a, b, -1);
}

int32_t hg_ew_where(hg_ew_expr* e, int32_t cond, int32_t a, int32_t b) {
    if (!check_node(e, cond, "where condition") || !check_node(e, a, "where operand a") ||
        !check_node(e, b, "where operand b"))
        return -1;
    hg_dtype r = hg_dtype_promote(e->nodes[a].dtype, e->nodes[b].dtype);
    return add_node(e, HG_EW_WHERE, 0, r, cond, a, b);
}

int32_t hg_ew_fma(hg_ew_expr* e, int32_t a, int32_t b, int32_t c) {
    if (!check_node(e, a, "fma operand a") || !check_node(e, b, "fma operand b") ||
        !check_node(e, c, "fma operand c"))
        return -1;
    hg_dtype r = hg_dtype_promote(hg_dtype_promote(e->nodes[a].dtype, e->nodes[b].dtype),
                               e->nodes[c].dtype);
    return add_node(e, HG_EW_FMA, 0, r, a, b, c);
}

int32_t hg_ew_cast(hg_ew_expr* e, int32_t x, hg_dtype dtype) {
    if (!check_node(e, x, "cast operand")) return -1;
    if (!hg_dtype_valid((int)dtype)) {
        hg_error(HG_ERR_INVALID_ARGUMENT, "elementwise expression: cast to invalid dtype %d",
                 (int)dtype);
        return -1;
    }
    return add_node(e, HG_EW_CAST, 0, dtype, x, -1, -1);
}

hg_status hg_ew_output(hg_ew_expr* e, int32_t node, hg_dtype store_dtype) {
    if (!check_node(e, node, "output")) return HG_ERR_INVALID_ARGUMENT;
    if (!hg_dtype_valid((int)store_dtype))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "elementwise expression: output dtype %d is invalid", (int)store_dtype);
    if (e->noutputs >= HG_EW_MAX_OUTPUTS)
        return hg_error(HG_ERR_UNSUPPORTED, "elementwise expression: more than %d outputs",
                        HG_EW_MAX_OUTPUTS);
    e->outputs[e->noutputs].node = node;
    e->outputs[e->noutputs].dtype = store_dtype;
    e->noutputs++;
    return HG_OK;
}
