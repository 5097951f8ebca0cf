// The graph builder (hg_graph_*): every call validates shapes and dtypes at once, with the
// rules (and messages) of the eager ops: elementwise dtypes come from a scratch hg_ew_expr
// built exactly as the eager op builds its one-node expression.
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "graph/graph_internal.h"
#include "ops/common/op_common.h"
#include "tensor/slice_indices.h"
#include "tensor/tensor_internal.h"
#include "ops/reduce/reduce.h"
#include "ops/linalg/matmul.h"

hg_graph_obj* hg_graph_resolve(hg_graph g, const char* fn) {
    hg_graph_obj* o = hg_handle_get(g.handle, HG_HANDLE_GRAPH);
    if (o) return o;
    if (g.handle == 0)
        hg_error(HG_ERR_INVALID_HANDLE, "%s: the graph handle is zero (never created?)", fn);
    else if ((g.handle >> 56) != HG_HANDLE_GRAPH)
        hg_error(HG_ERR_INVALID_HANDLE, "%s: handle 0x%016llx is not a graph handle", fn,
                 (unsigned long long)g.handle);
    else
        hg_error(HG_ERR_INVALID_HANDLE, "%s: graph handle 0x%016llx is not live (already "
                 "destroyed?)", fn, (unsigned long long)g.handle);
    return NULL;
}

hg_status hg_graph_create(hg_graph* out) {
    HG_CHECK_NULL(out, "out");
    hg_graph_obj* o = calloc(1, sizeof *o);
    if (!o) return hg_error(HG_ERR_OUT_OF_MEMORY, "hg_graph_create: out of memory");
    hg_gir_init(&o->ir);
    o->handle = hg_handle_insert(HG_HANDLE_GRAPH, o);
    if (!o->handle) {
        free(o);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "hg_graph_create: out of handles");
    }
    out->handle = o->handle;
    return HG_OK;
}

hg_status hg_graph_destroy(hg_graph g) {
    if (!hg_graph_resolve(g, "hg_graph_destroy")) return HG_ERR_INVALID_HANDLE;
    hg_graph_obj* o = hg_handle_remove(g.handle, HG_HANDLE_GRAPH);
    if (!o) return hg_error(HG_ERR_INVALID_HANDLE, "hg_graph_destroy: graph already destroyed");
    hg_gir_free(&o->ir);
    free(o);
    return HG_OK;
}

// Resolves the graph and checks the node ids given to fn.
static hg_graph_obj* begin(hg_graph g, const char* fn, int32_t* out_node, int n, const int32_t* ids,
                           const char* const* names) {
    hg_graph_obj* o = hg_graph_resolve(g, fn);
    if (!o) return NULL;
    if (!out_node) {
        hg_error(HG_ERR_NULL_POINTER, "%s: argument 'out_node' is NULL", fn);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= o->ir.n) {
            if (o->ir.n == 0)
                hg_error(HG_ERR_OUT_OF_RANGE, "%s: node '%s' is %d but the graph has no nodes yet",
                         fn, names[i], (int)ids[i]);
            else
                hg_error(HG_ERR_OUT_OF_RANGE, "%s: node '%s' is %d (valid node ids: 0..%d)", fn,
                         names[i], (int)ids[i], (int)o->ir.n - 1);
            return NULL;
        }
    return o;
}

// begin() failed: return the status it set (invalid handle, null pointer or bad node id).
static hg_status begin_status(void) {
    const char* m = hg_last_error();
    if (strstr(m, "is NULL")) return HG_ERR_NULL_POINTER;
    if (strstr(m, "node '")) return HG_ERR_OUT_OF_RANGE;
    return HG_ERR_INVALID_HANDLE;
}

static hg_status add(hg_graph_obj* o, const hg_gnode* n, int32_t* out_node) {
    int32_t id = hg_gir_add(&o->ir, n);
    if (id < 0) return HG_ERR_OUT_OF_MEMORY;
    *out_node = id;
    return HG_OK;
}

static hg_status check_shape(const char* fn, int32_t ndim, const int64_t* shape) {
    if (ndim < 0 || ndim > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: ndim %d is out of range (0..%d)", fn,
                        (int)ndim, HG_MAX_DIMS);
    if (ndim > 0 && !shape) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'shape' is NULL", fn);
    int64_t numel = 1;
    for (int32_t i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: shape[%d] is %lld (sizes must be >= 0)",
                            fn, (int)i, (long long)shape[i]);
        if (shape[i] && numel > INT64_MAX / shape[i])
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: the shape's element count overflows int64", fn);
        numel *= shape[i];
    }
    return HG_OK;
}

hg_status hg_graph_input(hg_graph g, hg_dtype dtype, int32_t ndim, const int64_t* shape,
                         int32_t* out_node) {
    static const char fn[] = "hg_graph_input";
    hg_graph_obj* o = begin(g, fn, out_node, 0, NULL, NULL);
    if (!o) return begin_status();
    if (!hg_dtype_valid((int)dtype))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d (valid: 0..%d)", fn,
                        (int)dtype, HG_DTYPE_COUNT - 1);
    hg_status s = check_shape(fn, ndim, shape);
    if (s) return s;
    hg_gnode n = hg_gnode_make(HG_GOP_INPUT, 0, dtype, ndim, shape);
    n.aux = o->ir.ninputs;
    s = add(o, &n, out_node);
    if (!s) o->ir.ninputs++;
    return s;
}

hg_status hg_graph_constant(hg_graph g, hg_dtype dtype, hg_scalar value, int32_t* out_node) {
    static const char fn[] = "hg_graph_constant";
    hg_graph_obj* o = begin(g, fn, out_node, 0, NULL, NULL);
    if (!o) return begin_status();
    if (!hg_dtype_valid((int)dtype))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d (valid: 0..%d)", fn,
                        (int)dtype, HG_DTYPE_COUNT - 1);
    if ((unsigned)value.kind >= HG_SCALAR_KIND_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: scalar kind %d is invalid (valid: 0..%d)",
                        fn, (int)value.kind, HG_SCALAR_KIND_COUNT - 1);
    hg_status st = hg_ew_check_int_scalar(fn, value, dtype);
    if (st) return st;
    hg_gnode n = hg_gnode_make(HG_GOP_CONST, 0, dtype, 0, NULL);
    // Canonical scalar: only the field of its kind counts (equal constants hash-cons).
    if (value.kind == HG_SCALAR_FLOAT) value.i = 0;
    else value.f = 0.0;
    if (value.kind == HG_SCALAR_BOOL) value.i = value.i ? 1 : 0;
    n.value = value;
    return add(o, &n, out_node);
}

hg_status hg_graph_arange(hg_graph g, hg_dtype dtype, int64_t n, int32_t* out_node) {
    static const char fn[] = "hg_graph_arange";
    hg_graph_obj* o = begin(g, fn, out_node, 0, NULL, NULL);
    if (!o) return begin_status();
    if (!hg_dtype_valid((int)dtype) || dtype == HG_DTYPE_BOOL || n < 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: dtype %d, n %lld (expected a numeric dtype "
                        "and n >= 0)", fn, (int)dtype, (long long)n);
    hg_gnode node = hg_gnode_make(HG_GOP_ARANGE, 0, dtype, 1, &n);
    return add(o, &node, out_node);
}

// Broadcast shape of n operands (numpy), with the message of hg_broadcast_shapes.
static hg_status broadcast(const char* fn, const hg_gir* ir, int n, const int32_t* ids,
                           int32_t* ndim, int64_t* shape) {
    *ndim = 0;
    for (int i = 0; i < n; i++) {
        const hg_gnode* x = &ir->nodes[ids[i]];
        int32_t nd;
        int64_t sh[HG_MAX_DIMS];
        hg_status s = hg_broadcast_shapes(*ndim, shape, x->ndim, x->shape, &nd, sh);
        if (s) return hg_error_prefix(s, "%s", fn);
        *ndim = nd;
        memcpy(shape, sh, sizeof sh);
    }
    return HG_OK;
}

// Builds the one-node elementwise expression the eager op would build; returns the result
// dtype (the expression builder sets the eager op's message on failure).
static hg_status ew_dtype(const char* fn, const hg_gir* ir, hg_gop kind, int32_t op, int n,
                          const int32_t* ids, int32_t ndim, const int64_t* shape, hg_dtype cast_to,
                          hg_dtype* out) {
    hg_ew_expr* e = malloc(sizeof *e);
    if (!e) return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    hg_ew_expr_init(e, ndim, shape);
    int32_t in[3] = {-1, -1, -1};
    for (int i = 0; i < n; i++) {
        const hg_gnode* x = &ir->nodes[ids[i]];
        in[i] = hg_ew_input(e, x->dtype, x->ndim, x->shape);
        if (in[i] < 0) { free(e); return hg_error_prefix(HG_ERR_SIZE_MISMATCH, "%s", fn); }
    }
    int32_t r = -1;
    switch (kind) {
    case HG_GOP_UNARY: r = hg_ew_unary(e, (hg_unary_op)op, in[0]); break;
    case HG_GOP_BINARY: r = hg_ew_binary(e, (hg_binary_op)op, in[0], in[1]); break;
    case HG_GOP_WHERE: r = hg_ew_where(e, in[0], in[1], in[2]); break;
    case HG_GOP_FMA: r = hg_ew_fma(e, in[0], in[1], in[2]); break;
    case HG_GOP_CAST: r = hg_ew_cast(e, in[0], cast_to); break;
    default: break;
    }
    if (r < 0) {
        free(e);
        const char* m = hg_last_error();
        hg_status s = strstr(m, "out of range") || strstr(m, "invalid") ? HG_ERR_INVALID_ARGUMENT
                                                                         : HG_ERR_DTYPE_MISMATCH;
        return hg_error_prefix(s, "%s", fn);
    }
    *out = e->nodes[r].dtype;
    free(e);
    return HG_OK;
}

static hg_status ew_node(hg_graph g, const char* fn, hg_gop kind, int32_t op, int n,
                         const int32_t* ids, const char* const* names, hg_dtype cast_to,
                         int32_t* out_node) {
    hg_graph_obj* o = begin(g, fn, out_node, n, ids, names);
    if (!o) return begin_status();
    int32_t ndim;
    int64_t shape[HG_MAX_DIMS] = {0};
    hg_status s = broadcast(fn, &o->ir, n, ids, &ndim, shape);
    if (s) return s;
    hg_dtype dt = HG_DTYPE_BOOL;
    if ((s = ew_dtype(fn, &o->ir, kind, op, n, ids, ndim, shape, cast_to, &dt))) return s;
    hg_gnode nd = hg_gnode_make(kind, op, dt, ndim, shape);
    for (int i = 0; i < n; i++) nd.in[i] = ids[i];
    return add(o, &nd, out_node);
}

hg_status hg_graph_unary(hg_graph g, hg_unary_op op, int32_t x, int32_t* out_node) {
    static const char* const names[] = {"x"};
    if ((unsigned)op >= HG_UNARY_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_graph_unary: unary op %d is out of range "
                        "(valid: 0..%d)", (int)op, HG_UNARY_COUNT - 1);
    return ew_node(g, "hg_graph_unary", HG_GOP_UNARY, op, 1, &x, names, HG_DTYPE_BOOL, out_node);
}

hg_status hg_graph_binary(hg_graph g, hg_binary_op op, int32_t a, int32_t b, int32_t* out_node) {
    static const char* const names[] = {"a", "b"};
    if ((unsigned)op >= HG_BINARY_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_graph_binary: binary op %d is out of range "
                        "(valid: 0..%d)", (int)op, HG_BINARY_COUNT - 1);
    int32_t ids[2] = {a, b};
    return ew_node(g, "hg_graph_binary", HG_GOP_BINARY, op, 2, ids, names, HG_DTYPE_BOOL,
                   out_node);
}

hg_status hg_graph_binary_scalar(hg_graph g, hg_binary_op op, int32_t a, hg_scalar s,
                                 int scalar_first, int32_t* out_node) {
    static const char fn[] = "hg_graph_binary_scalar";
    static const char* const names[] = {"a"};
    hg_graph_obj* o = begin(g, fn, out_node, 1, &a, names);
    if (!o) return begin_status();
    if ((unsigned)op >= HG_BINARY_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: binary op %d is out of range (valid: 0..%d)",
                        fn, (int)op, HG_BINARY_COUNT - 1);
    if ((unsigned)s.kind >= HG_SCALAR_KIND_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: scalar kind %d is invalid (valid: 0..%d)",
                        fn, (int)s.kind, HG_SCALAR_KIND_COUNT - 1);
    // Check the operation before adding the constant, so a refused call adds no node.
    hg_dtype da = o->ir.nodes[a].dtype, rt, ct;
    // A scalar out of its dtype's range: numpy's answer as the eager op gives it.
    hg_status st = hg_ew_scalar_operand(fn, &op, &s, da, &scalar_first);
    if (st) return st;
    hg_dtype sdt = hg_ew_scalar_dtype(s, da);
    st = hg_ew_binary_dtype(op, scalar_first ? sdt : da, scalar_first ? da : sdt, &rt, &ct);
    if (st) return hg_error_prefix(st, "%s", fn);
    int32_t c;
    if ((st = hg_graph_constant(g, sdt, s, &c))) return st;
    return scalar_first ? hg_graph_binary(g, op, c, a, out_node) : hg_graph_binary(g, op, a, c, out_node);
}

hg_status hg_graph_where(hg_graph g, int32_t cond, int32_t a, int32_t b, int32_t* out_node) {
    static const char* const names[] = {"cond", "a", "b"};
    int32_t ids[3] = {cond, a, b};
    return ew_node(g, "hg_graph_where", HG_GOP_WHERE, 0, 3, ids, names, HG_DTYPE_BOOL, out_node);
}

hg_status hg_graph_fma(hg_graph g, int32_t a, int32_t b, int32_t c, int32_t* out_node) {
    static const char* const names[] = {"a", "b", "c"};
    int32_t ids[3] = {a, b, c};
    return ew_node(g, "hg_graph_fma", HG_GOP_FMA, 0, 3, ids, names, HG_DTYPE_BOOL, out_node);
}

hg_status hg_graph_cast(hg_graph g, int32_t x, hg_dtype dtype, int32_t* out_node) {
    static const char* const names[] = {"x"};
    if (!hg_dtype_valid((int)dtype))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_graph_cast: invalid dtype %d (valid: 0..%d)",
                        (int)dtype, HG_DTYPE_COUNT - 1);
    return ew_node(g, "hg_graph_cast", HG_GOP_CAST, 0, 1, &x, names, dtype, out_node);
}

hg_status hg_graph_expand(hg_graph g, int32_t x, int32_t ndim, const int64_t* shape,
                          int32_t* out_node) {
    static const char fn[] = "hg_graph_expand";
    static const char* const names[] = {"x"};
    hg_graph_obj* o = begin(g, fn, out_node, 1, &x, names);
    if (!o) return begin_status();
    const hg_gnode* xn = &o->ir.nodes[x];
    if (ndim < 0 || ndim > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: ndim %d is out of range (0..%d)", fn,
                        (int)ndim, HG_MAX_DIMS);
    if (ndim > 0 && !shape) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'shape' is NULL", fn);
    char sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT];
    if (ndim < xn->ndim)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: cannot broadcast shape %s to %d dims", fn,
                        hg_op_dims(sb, xn->ndim, xn->shape), (int)ndim);
    int64_t full[HG_MAX_DIMS] = {0};
    for (int32_t i = 0; i < ndim; i++) {
        int32_t xi = i - (ndim - xn->ndim);
        int64_t want = shape[i];
        if (want == -1) {
            if (xi < 0)
                return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: -1 in new leading dim %d (only "
                                "dims that exist in x may keep their size)", fn, (int)i);
            want = xn->shape[xi];
        }
        if (want < 0)
            return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: shape[%d] is %lld (sizes must be >= 0)",
                            fn, (int)i, (long long)want);
        if (xi >= 0 && xn->shape[xi] != want && xn->shape[xi] != 1)
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: cannot broadcast shape %s to %s (dim %d: "
                            "%lld is neither 1 nor %lld)", fn, hg_op_dims(sb, xn->ndim, xn->shape),
                            hg_op_dims(tb, ndim, shape), (int)i, (long long)xn->shape[xi],
                            (long long)want);
        full[i] = want;
    }
    hg_status s = check_shape(fn, ndim, full);
    if (s) return s;
    hg_gnode n = hg_gnode_make(HG_GOP_EXPAND, 0, xn->dtype, ndim, full);
    n.in[0] = x;
    return add(o, &n, out_node);
}

hg_status hg_graph_reshape(hg_graph g, int32_t x, int32_t ndim, const int64_t* shape,
                           int32_t* out_node) {
    static const char fn[] = "hg_graph_reshape";
    static const char* const names[] = {"x"};
    hg_graph_obj* o = begin(g, fn, out_node, 1, &x, names);
    if (!o) return begin_status();
    const hg_gnode* xn = &o->ir.nodes[x];
    if (ndim < 0 || ndim > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: ndim %d is out of range (0..%d)", fn,
                        (int)ndim, HG_MAX_DIMS);
    if (ndim > 0 && !shape) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'shape' is NULL", fn);
    int64_t full[HG_MAX_DIMS] = {0}, known = 1, numel = hg_gir_numel(xn);
    int32_t infer = -1;
    for (int32_t i = 0; i < ndim; i++) {
        if (shape[i] == -1) {
            if (infer >= 0)
                return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: more than one -1 in the shape "
                                "(dims %d and %d)", fn, (int)infer, (int)i);
            infer = i;
            continue;
        }
        if (shape[i] < 0)
            return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: shape[%d] is %lld (sizes must be >= 0 "
                            "or -1)", fn, (int)i, (long long)shape[i]);
        full[i] = shape[i];
        if (shape[i] && known > INT64_MAX / shape[i])
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: the shape's element count overflows", fn);
        known *= shape[i];
    }
    char sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT];
    if (infer >= 0) {
        if (known == 0 || numel % known)
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: cannot reshape %s (%lld elements) into %s",
                            fn, hg_op_dims(sb, xn->ndim, xn->shape), (long long)numel,
                            hg_op_dims(tb, ndim, shape));
        full[infer] = numel / known;
        known = numel;
    }
    if (known != numel)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: cannot reshape %s (%lld elements) into %s "
                        "(%lld elements)", fn, hg_op_dims(sb, xn->ndim, xn->shape),
                        (long long)numel, hg_op_dims(tb, ndim, full), (long long)known);
    int same = xn->ndim == ndim;
    for (int32_t i = 0; same && i < ndim; i++) same = xn->shape[i] == full[i];
    if (same) {
        *out_node = x;   // a reshape to the same shape is the node itself
        return HG_OK;
    }
    hg_gnode n = hg_gnode_make(HG_GOP_RESHAPE, 0, xn->dtype, ndim, full);
    n.in[0] = x;
    return add(o, &n, out_node);
}

hg_status hg_graph_reduce(hg_graph g, hg_reduce_op op, int32_t x, int32_t naxes,
                          const int32_t* axes, int keepdims, int32_t* out_node) {
    static const char fn[] = "hg_graph_reduce";
    static const char* const names[] = {"x"};
    hg_graph_obj* o = begin(g, fn, out_node, 1, &x, names);
    if (!o) return begin_status();
    const hg_gnode* xn = &o->ir.nodes[x];
    if ((unsigned)op >= HG_REDUCE_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: reduce op %d is out of range (valid: 0..%d)",
                        fn, (int)op, HG_REDUCE_COUNT - 1);
    if (naxes < 0) return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: naxes is %d (must be >= 0)", fn, (int)naxes);
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    uint32_t mask;
    int ufunc = op != HG_REDUCE_MEAN && op != HG_REDUCE_VAR && op != HG_REDUCE_STD;
    hg_status s = hg_op_reduce_axes_mask(&c, xn->ndim, naxes, axes, ufunc, &mask);
    if (s) return s;
    hg_dtype rt;
    if ((s = hg_reduce_dtype(op, xn->dtype, &rt))) return hg_error_prefix(s, "%s", fn);
    int32_t nd = 0;
    int64_t shape[HG_MAX_DIMS] = {0}, reduced = 1;
    for (int32_t i = 0; i < xn->ndim; i++) {
        if (mask & (1u << i)) {
            reduced *= xn->shape[i];
            if (keepdims) shape[nd++] = 1;
        } else {
            shape[nd++] = xn->shape[i];
        }
    }
    // As hg_reduce: refused also when the result is empty (numpy raises on any empty reduction).
    if (reduced == 0 &&
        (op == HG_REDUCE_MIN || op == HG_REDUCE_MAX || op == HG_REDUCE_ARGMIN || op == HG_REDUCE_ARGMAX))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: %s of an empty selection has no identity "
                        "(numpy raises)", fn, hg_reduce_op_name(op));
    hg_gnode n = hg_gnode_make(HG_GOP_REDUCE, op, rt, nd, shape);
    n.in[0] = x;
    n.aux = (int64_t)mask | ((int64_t)(keepdims ? 1 : 0) << 32);
    return add(o, &n, out_node);
}

hg_status hg_graph_softmax(hg_graph g, int32_t x, int32_t axis, int log, int32_t* out_node) {
    static const char fn[] = "hg_graph_softmax";
    static const char* const names[] = {"x"};
    hg_graph_obj* o = begin(g, fn, out_node, 1, &x, names);
    if (!o) return begin_status();
    const hg_gnode* xn = &o->ir.nodes[x];
    if (!hg_dtype_is_float((int)xn->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: %s is defined for floats only, x is %s", fn,
                        log ? "log_softmax" : "softmax", hg_dtype_name(xn->dtype));
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    int32_t ax;
    hg_status s = hg_op_axis(&c, xn->ndim == 0 ? 1 : xn->ndim, axis, &ax);
    if (s) return s;
    hg_gnode n = hg_gnode_make(HG_GOP_SOFTMAX, log ? 1 : 0, xn->dtype, xn->ndim, xn->shape);
    n.in[0] = x;
    n.aux = ax;
    return add(o, &n, out_node);
}

hg_status hg_graph_norm(hg_graph g, int32_t x, int32_t nnorm, int32_t weight, int32_t bias,
                        double eps, int rms, int32_t* out_node) {
    static const char fn[] = "hg_graph_norm";
    static const char* const names[] = {"x", "weight", "bias"};
    int32_t ids[3] = {x, weight < 0 ? x : weight, bias < 0 ? x : bias};
    hg_graph_obj* o = begin(g, fn, out_node, 3, ids, names);
    if (!o) return begin_status();
    const hg_gnode* xn = &o->ir.nodes[x];
    if (!hg_dtype_is_float((int)xn->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: x is %s; expected a float dtype", fn,
                        hg_dtype_name(xn->dtype));
    if (nnorm < 1 || nnorm > xn->ndim)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: nnorm %d is out of range for x of %d dims "
                        "(valid: 1..%d)", fn, (int)nnorm, (int)xn->ndim, (int)xn->ndim);
    if (!(eps >= 0.0) || isinf(eps))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: eps %g must be finite and >= 0", fn, eps);
    if (rms && bias >= 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: rms_norm takes no bias (pass -1)", fn);
    for (int i = 1; i < 3; i++) {
        if ((i == 1 ? weight : bias) < 0) continue;
        const hg_gnode* p = &o->ir.nodes[ids[i]];
        int same = p->ndim == nnorm && p->dtype == xn->dtype;
        for (int32_t d = 0; same && d < nnorm; d++)
            same = p->shape[d] == xn->shape[xn->ndim - nnorm + d];
        if (!same) {
            char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: '%s' is %s%s; expected %s%s (x's dtype, "
                            "its last %d dims)", fn, names[i], hg_dtype_name(p->dtype),
                            hg_op_dims(a, p->ndim, p->shape), hg_dtype_name(xn->dtype),
                            hg_op_dims(b, nnorm, xn->shape + (xn->ndim - nnorm)), (int)nnorm);
        }
    }
    hg_gnode n = hg_gnode_make(HG_GOP_NORM, rms ? 1 : 0, xn->dtype, xn->ndim, xn->shape);
    memcpy(n.in, ids, sizeof ids);
    n.aux = nnorm;
    n.aux2 = (weight >= 0 ? HG_GNORM_WEIGHT : 0) | (bias >= 0 ? HG_GNORM_BIAS : 0);
    n.value = hg_scalar_f(eps);
    return add(o, &n, out_node);
}

hg_status hg_graph_norm_stat(hg_graph g, int32_t norm, int which, int32_t* out_node) {
    static const char fn[] = "hg_graph_norm_stat";
    static const char* const names[] = {"norm"};
    hg_graph_obj* o = begin(g, fn, out_node, 1, &norm, names);
    if (!o) return begin_status();
    const hg_gnode* m = &o->ir.nodes[norm];
    if (m->kind != HG_GOP_NORM || m->op != 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: node %d is %s; expected a layer norm node "
                        "(hg_graph_norm with rms 0)", fn, (int)norm, hg_gnode_op_name(m));
    if (which != 0 && which != 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: which is %d; expected 0 (mean) or 1 (rstd)",
                        fn, which);
    int64_t shape[HG_MAX_DIMS] = {0};
    for (int32_t d = 0; d < m->ndim; d++) shape[d] = d < m->ndim - m->aux ? m->shape[d] : 1;
    hg_gnode n = hg_gnode_make(HG_GOP_NORM_STAT, which, m->dtype, m->ndim, shape);
    n.in[0] = norm;
    n.aux = m->aux;
    return add(o, &n, out_node);
}

hg_status hg_graph_matmul(hg_graph g, int32_t a, int32_t b, int32_t* out_node) {
    static const char fn[] = "hg_graph_matmul";
    static const char* const names[] = {"a", "b"};
    int32_t ids[2] = {a, b};
    hg_graph_obj* o = begin(g, fn, out_node, 2, ids, names);
    if (!o) return begin_status();
    const hg_gnode *an = &o->ir.nodes[a], *bn = &o->ir.nodes[b];
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    int32_t nd;
    int64_t shape[HG_MAX_DIMS] = {0};
    hg_status s = hg_matmul_shape(&c, an->ndim, an->shape, bn->ndim, bn->shape, &nd, shape);
    if (s) return s;
    hg_dtype rt;
    if ((s = hg_result_type(an->dtype, bn->dtype, &rt))) return s;
    hg_gnode n = hg_gnode_make(HG_GOP_MATMUL, 0, rt, nd, shape);
    n.in[0] = a;
    n.in[1] = b;
    return add(o, &n, out_node);
}

hg_status hg_graph_output(hg_graph g, int32_t node) {
    static const char fn[] = "hg_graph_output";
    static const char* const names[] = {"node"};
    int32_t dummy;
    hg_graph_obj* o = begin(g, fn, &dummy, 1, &node, names);
    if (!o) return begin_status();
    return hg_gir_add_output(&o->ir, node);
}

hg_status hg_graph_node_info(hg_graph g, int32_t node, hg_dtype* dtype, int32_t* ndim,
                             int64_t* shape) {
    static const char fn[] = "hg_graph_node_info";
    static const char* const names[] = {"node"};
    int32_t dummy;
    hg_graph_obj* o = begin(g, fn, &dummy, 1, &node, names);
    if (!o) return begin_status();
    const hg_gnode* n = &o->ir.nodes[node];
    if (dtype) *dtype = n->dtype;
    if (ndim) *ndim = n->ndim;
    if (shape)
        for (int32_t i = 0; i < HG_MAX_DIMS; i++) shape[i] = i < n->ndim ? n->shape[i] : 0;
    return HG_OK;
}

hg_status hg_graph_print(hg_graph g, char** out_text) {
    hg_graph_obj* o = hg_graph_resolve(g, "hg_graph_print");
    if (!o) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out_text, "out_text");
    return hg_gir_print(&o->ir, NULL, out_text);
}

// ---- views and concatenation (strided reads inside the kernels that read them) ----

hg_status hg_graph_permute(hg_graph g, int32_t x, int32_t ndim, const int32_t* perm,
                           int32_t* out_node) {
    static const char fn[] = "hg_graph_permute";
    static const char* const names[] = {"x"};
    hg_graph_obj* o = begin(g, fn, out_node, 1, &x, names);
    if (!o) return begin_status();
    const hg_gnode* xn = &o->ir.nodes[x];
    if (ndim != xn->ndim)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: perm has %d entries, x has %d dims (one "
                        "entry per dim expected)", fn, (int)ndim, (int)xn->ndim);
    if (ndim > 0 && !perm) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'perm' is NULL", fn);
    int32_t p[HG_MAX_DIMS];
    int64_t shape[HG_MAX_DIMS] = {0};
    uint32_t seen = 0;
    for (int32_t i = 0; i < ndim; i++) {
        int32_t a = perm[i] < 0 ? perm[i] + ndim : perm[i];
        if (a < 0 || a >= ndim)
            return hg_error(HG_ERR_OUT_OF_RANGE, "%s: perm[%d] is %d (valid: %d..%d)", fn, (int)i,
                            (int)perm[i], (int)-ndim, (int)ndim - 1);
        if (seen >> a & 1u)
            return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: perm[%d] repeats dim %d (perm must be a "
                            "permutation)", fn, (int)i, (int)a);
        seen |= 1u << a;
        p[i] = a;
        shape[i] = xn->shape[a];
    }
    hg_gnode n = hg_gnode_make(HG_GOP_PERMUTE, 0, xn->dtype, ndim, shape);
    n.in[0] = x;
    n.aux = hg_gperm_pack(ndim, p);
    return add(o, &n, out_node);
}

hg_status hg_graph_slice(hg_graph g, int32_t x, int32_t axis, int64_t start, int64_t stop,
                         int64_t step, int32_t* out_node) {
    static const char fn[] = "hg_graph_slice";
    static const char* const names[] = {"x"};
    hg_graph_obj* o = begin(g, fn, out_node, 1, &x, names);
    if (!o) return begin_status();
    const hg_gnode* xn = &o->ir.nodes[x];
    if (xn->ndim == 0) return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: x is 0-d (nothing to slice)", fn);
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    int32_t ax;
    hg_status s = hg_op_axis(&c, xn->ndim, axis, &ax);
    if (s) return s;
    if (step <= 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: step is %lld (graph slices take steps >= 1, "
                        "as torch's slice; a reversed view is not a graph node)", fn, (long long)step);
    int64_t b = start, count = hg_slice_indices(xn->shape[ax], &b, stop, step);
    int64_t shape[HG_MAX_DIMS];
    memcpy(shape, xn->shape, sizeof shape);
    shape[ax] = count;
    hg_gnode n = hg_gnode_make(HG_GOP_SLICE, ax, xn->dtype, xn->ndim, shape);
    n.in[0] = x;
    n.aux = count ? b : 0;   // every empty slice of one axis is the same node
    n.aux2 = count > 1 ? step : 1;
    return add(o, &n, out_node);
}

hg_status hg_graph_concat(hg_graph g, int32_t n, const int32_t* nodes, int32_t axis,
                          int32_t* out_node) {
    static const char fn[] = "hg_graph_concat";
    hg_graph_obj* o = begin(g, fn, out_node, 0, NULL, NULL);
    if (!o) return begin_status();
    if (n < 1) return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: n is %d (at least one node expected)", fn, (int)n);
    if (!nodes) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'nodes' is NULL", fn);
    char name[32];
    for (int32_t i = 0; i < n; i++)
        if (nodes[i] < 0 || nodes[i] >= o->ir.n) {
            snprintf(name, sizeof name, "nodes[%d]", (int)i);
            const char* nm = name;
            begin(g, fn, out_node, 1, &nodes[i], &nm);
            return begin_status();
        }
    const hg_gnode* first = &o->ir.nodes[nodes[0]];
    if (first->ndim == 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: nodes[0] is 0-d (concatenation needs >= 1 dim)", fn);
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    int32_t ax;
    hg_status s = hg_op_axis(&c, first->ndim, axis, &ax);
    if (s) return s;
    char sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT];
    for (int32_t i = 1; i < n; i++) {
        const hg_gnode* k = &o->ir.nodes[nodes[i]];
        if (k->dtype != first->dtype)
            return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: nodes[%d] is %s, nodes[0] is %s (one dtype "
                            "expected: cast first)", fn, (int)i, hg_dtype_name(k->dtype),
                            hg_dtype_name(first->dtype));
        int same = k->ndim == first->ndim;
        for (int32_t d = 0; same && d < k->ndim; d++) same = d == ax || k->shape[d] == first->shape[d];
        if (!same)
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: nodes[%d] has shape %s, nodes[0] %s (equal "
                            "shapes expected except on axis %d)", fn, (int)i,
                            hg_op_dims(sb, k->ndim, k->shape), hg_op_dims(tb, first->ndim, first->shape),
                            (int)ax);
    }
    int64_t total = first->shape[ax];
    for (int32_t i = 1; i < n; i++) {
        int64_t k = o->ir.nodes[nodes[i]].shape[ax];
        if (total > INT64_MAX - k)
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: the concatenated axis overflows int64", fn);
        total += k;
    }
    int64_t shape[HG_MAX_DIMS];
    memcpy(shape, first->shape, sizeof shape);
    int64_t numel = 1;
    for (int32_t d = 0; d < first->ndim; d++) {
        int64_t v = d == ax ? total : shape[d];
        if (v && numel > INT64_MAX / v)
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: the result's element count overflows int64", fn);
        numel *= v;
    }
    // A left fold of two-operand nodes (the IR has at most three operands per node).
    int32_t acc = nodes[0];
    int64_t along = first->shape[ax];
    for (int32_t i = 1; i < n; i++) {
        along += o->ir.nodes[nodes[i]].shape[ax];
        shape[ax] = along;
        hg_gnode k = hg_gnode_make(HG_GOP_CONCAT, ax, first->dtype, first->ndim, shape);
        k.in[0] = acc;
        k.in[1] = nodes[i];
        if ((s = add(o, &k, &acc))) return s;
        first = &o->ir.nodes[nodes[0]];   // the node table may have moved
    }
    *out_node = acc;
    return HG_OK;
}
