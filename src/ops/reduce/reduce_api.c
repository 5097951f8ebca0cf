// Public reductions: hg_reduce, hg_var, hg_std (argument checks, then hg_reduce_into).
#include <math.h>
#include "base/error.h"
#include "ops/reduce/reduce.h"

static const char* const reduce_names[HG_REDUCE_COUNT] = {
    "sum", "mean", "prod", "min", "max", "argmin", "argmax", "var", "std", "logsumexp", "any",
    "all",
};
_Static_assert(sizeof reduce_names / sizeof reduce_names[0] == HG_REDUCE_COUNT,
               "reduce_names needs an entry per reduction op");

const char* hg_reduce_op_name(hg_reduce_op op) {
    if ((int)op < 0 || op >= HG_REDUCE_COUNT) return NULL;   // as hg_unary_op_name
    return reduce_names[op];
}

static hg_status reduce_call(const char* fn, hg_reduce_op op, const hg_tensor* x, int32_t naxes,
                             const int32_t* axes, int keepdims, double ddof, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, fn);
    if ((int)op < 0 || op >= HG_REDUCE_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: reduction op %d is out of range (valid: "
                        "0..%d)", fn, (int)op, HG_REDUCE_COUNT - 1);
    if (!x) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'x' is NULL", fn);
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'out' is NULL", fn);
    if (isnan(ddof))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: ddof is NaN (expected a number)", fn);
    hg_status s = hg_op_input(&c, x, "x", NULL, NULL);
    if (s) return s;
    uint32_t mask = 0;
    int ufunc = op != HG_REDUCE_MEAN && op != HG_REDUCE_VAR && op != HG_REDUCE_STD;
    if ((s = hg_op_reduce_axes_mask(&c, x->ndim, naxes, axes, ufunc, &mask))) return s;
    hg_dtype rdt;
    if ((s = hg_reduce_dtype(op, x->dtype, &rdt))) return hg_error_prefix(s, "%s", fn);
    int64_t shape[HG_MAX_DIMS], nred = 1;
    int32_t nd = 0;
    for (int32_t d = 0; d < x->ndim; d++) {
        if (mask & (1u << d)) {
            nred *= x->shape[d];
            if (keepdims) shape[nd++] = 1;
        } else {
            shape[nd++] = x->shape[d];
        }
    }
    // Refuse before allocating (hg_reduce_into checks again for its other callers).
    if (nred == 0 &&
        (op == HG_REDUCE_MIN || op == HG_REDUCE_MAX || op == HG_REDUCE_ARGMIN ||
         op == HG_REDUCE_ARGMAX))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "%s: %s of an empty reduction (the reduced dims have 0 elements) has no "
                        "identity; numpy raises here too", fn, hg_reduce_op_name(op));
    if ((s = hg_op_output(&c, out, rdt, nd, shape, 1))) return s;
    if ((s = hg_op_read_first(&c, out, &x, 0))) return hg_op_finish(&c, out, s);
    s = hg_reduce_into(&c, op, x, mask, ddof, out);
    return hg_op_finish(&c, out, s);
}

hg_status hg_reduce(hg_reduce_op op, const hg_tensor* x, int32_t naxes, const int32_t* axes,
                    int keepdims, hg_tensor* out) {
    return reduce_call("hg_reduce", op, x, naxes, axes, keepdims, 0.0, out);
}

hg_status hg_var(const hg_tensor* x, int32_t naxes, const int32_t* axes, int keepdims,
                 double ddof, hg_tensor* out) {
    return reduce_call("hg_var", HG_REDUCE_VAR, x, naxes, axes, keepdims, ddof, out);
}

hg_status hg_std(const hg_tensor* x, int32_t naxes, const int32_t* axes, int keepdims,
                 double ddof, hg_tensor* out) {
    return reduce_call("hg_std", HG_REDUCE_STD, x, naxes, axes, keepdims, ddof, out);
}
