// numpy's type rules for the elementwise ops: the dtype each unary and binary op produces (from
// result_type, base/dtype_promote.c), NEP 50 weak scalars, and op names.
#include <stddef.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/elementwise/ewise.h"
#include "ops/elementwise/ewise_internal.h"

// ---------------------------------------------------------------------------------------------
// Op names
// ---------------------------------------------------------------------------------------------
static const char* const unary_names[] = {
    "neg", "abs", "sign", "sqrt", "rsqrt", "reciprocal", "square", "exp", "expm1", "exp2", "log",
    "log1p", "log2", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "gelu_erf", "silu",
    "softplus", "erf", "floor", "ceil", "round", "trunc", "logical_not", "bitwise_not", "isnan",
    "isinf", "isfinite",
};
static const char* const binary_names[] = {
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "minimum",
    "maximum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "right_shift",
};
_Static_assert(sizeof unary_names / sizeof unary_names[0] == HG_UNARY_COUNT,
               "one name per hg_unary_op");
_Static_assert(sizeof binary_names / sizeof binary_names[0] == HG_BINARY_COUNT,
               "one name per hg_binary_op");

const char* hg_unary_op_name(hg_unary_op op) {
    return (unsigned)op < HG_UNARY_COUNT ? unary_names[op] : NULL;
}
const char* hg_binary_op_name(hg_binary_op op) {
    return (unsigned)op < HG_BINARY_COUNT ? binary_names[op] : NULL;
}

// ---------------------------------------------------------------------------------------------
// Result dtypes per op
// ---------------------------------------------------------------------------------------------
int hg_ew_unary_is_float_fn(hg_unary_op op) {
    switch (op) {
    case HG_UNARY_SQRT: case HG_UNARY_RSQRT: case HG_UNARY_EXP: case HG_UNARY_EXPM1:
    case HG_UNARY_EXP2: case HG_UNARY_LOG: case HG_UNARY_LOG1P: case HG_UNARY_LOG2:
    case HG_UNARY_SIN: case HG_UNARY_COS: case HG_UNARY_TANH: case HG_UNARY_SIGMOID:
    case HG_UNARY_GELU: case HG_UNARY_GELU_ERF: case HG_UNARY_SILU: case HG_UNARY_SOFTPLUS:
    case HG_UNARY_ERF:
        return 1;
    default:
        return 0;
    }
}

static hg_status refuse_unary(hg_unary_op op, hg_dtype x, const char* want) {
    return hg_error(HG_ERR_DTYPE_MISMATCH, "%s is not defined for %s (supported: %s)",
                    hg_unary_op_name(op), hg_dtype_name(x), want);
}

hg_status hg_ew_unary_dtype(hg_unary_op op, hg_dtype x, hg_dtype* out) {
    if ((unsigned)op >= HG_UNARY_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "unary op %d is out of range (valid: 0..%d)",
                        (int)op, HG_UNARY_COUNT - 1);
    if (!hg_dtype_valid((int)x))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "invalid dtype %d for %s", (int)x,
                        hg_unary_op_name(op));
    int is_bool = x == HG_DTYPE_BOOL, is_float = hg_dtype_is_float((int)x);
    if (hg_ew_unary_is_float_fn(op)) {
        *out = is_float ? x : hg_dtype_float_of_int(x);
        return HG_OK;
    }
    switch (op) {
    case HG_UNARY_NEG:
        if (is_bool) return refuse_unary(op, x, "integers and floats; use logical_not for bool");
        *out = x;
        return HG_OK;
    case HG_UNARY_SIGN:
        if (is_bool) return refuse_unary(op, x, "integers and floats");
        *out = x;
        return HG_OK;
    case HG_UNARY_RECIPROCAL: case HG_UNARY_SQUARE:
        // numpy has no bool loop: bool is cast safely to the int8 loop.
        *out = is_bool ? HG_DTYPE_I8 : x;
        return HG_OK;
    case HG_UNARY_BITWISE_NOT:
        if (is_float) return refuse_unary(op, x, "integers and bool");
        *out = x;
        return HG_OK;
    case HG_UNARY_LOGICAL_NOT: case HG_UNARY_ISNAN: case HG_UNARY_ISINF: case HG_UNARY_ISFINITE:
        *out = HG_DTYPE_BOOL;
        return HG_OK;
    default:   // abs, relu, floor, ceil, round, trunc: every dtype, same dtype
        *out = x;
        return HG_OK;
    }
}

static hg_status refuse_binary(hg_binary_op op, hg_dtype a, hg_dtype b, hg_dtype common,
                               const char* want) {
    if (a == b)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s is not defined for %s (supported: %s)",
                        hg_binary_op_name(op), hg_dtype_name(a), want);
    return hg_error(HG_ERR_DTYPE_MISMATCH,
                    "%s is not defined for %s and %s (promoted to %s; supported: %s)",
                    hg_binary_op_name(op), hg_dtype_name(a), hg_dtype_name(b),
                    hg_dtype_name(common), want);
}

hg_status hg_ew_binary_dtype(hg_binary_op op, hg_dtype a, hg_dtype b, hg_dtype* out,
                             hg_dtype* operands) {
    if ((unsigned)op >= HG_BINARY_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "binary op %d is out of range (valid: 0..%d)",
                        (int)op, HG_BINARY_COUNT - 1);
    if (!hg_dtype_valid((int)a) || !hg_dtype_valid((int)b))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "invalid dtype %d for %s",
                        !hg_dtype_valid((int)a) ? (int)a : (int)b, hg_binary_op_name(op));
    hg_dtype c = hg_dtype_promote(a, b), r = c;
    int is_bool = c == HG_DTYPE_BOOL, is_float = hg_dtype_is_float((int)c);
    switch (op) {
    case HG_BINARY_ADD: case HG_BINARY_MUL: case HG_BINARY_MINIMUM: case HG_BINARY_MAXIMUM:
        break;   // bool: add = or, mul = and, minimum = and, maximum = or (numpy)
    case HG_BINARY_SUB:
        if (is_bool)
            return refuse_binary(op, a, b, c, "integers and floats; use logical_xor for bool");
        break;
    case HG_BINARY_DIV:
        if (!is_float) c = r = HG_DTYPE_F64;   // true division of integers
        break;
    case HG_BINARY_FLOOR_DIVIDE: case HG_BINARY_REMAINDER: case HG_BINARY_POW:
        if (is_bool) c = r = HG_DTYPE_I8;      // numpy's int8 loop
        break;
    case HG_BINARY_EQ: case HG_BINARY_NE: case HG_BINARY_LT: case HG_BINARY_LE:
    case HG_BINARY_GT: case HG_BINARY_GE:
    case HG_BINARY_LOGICAL_AND: case HG_BINARY_LOGICAL_OR: case HG_BINARY_LOGICAL_XOR:
        r = HG_DTYPE_BOOL;
        break;
    case HG_BINARY_BITWISE_AND: case HG_BINARY_BITWISE_OR: case HG_BINARY_BITWISE_XOR:
        if (is_float) return refuse_binary(op, a, b, c, "integers and bool");
        break;
    case HG_BINARY_LEFT_SHIFT: case HG_BINARY_RIGHT_SHIFT:
        if (is_float) return refuse_binary(op, a, b, c, "integers");
        if (is_bool) c = r = HG_DTYPE_I8;
        break;
    default:
        break;
    }
    if (out) *out = r;
    if (operands) *operands = c;
    return HG_OK;
}

hg_dtype hg_ew_scalar_dtype(hg_scalar s, hg_dtype t) {
    switch (s.kind) {
    case HG_SCALAR_INT: return t == HG_DTYPE_BOOL ? HG_DTYPE_I64 : t;
    case HG_SCALAR_FLOAT: return hg_dtype_is_float((int)t) ? t : HG_DTYPE_F64;
    default: return t;   // a Python bool takes any dtype
    }
}

uint64_t hg_ew_scalar_bits(hg_dtype t, hg_scalar s) {
    unsigned char buf[8] = {0};
    uint64_t bits = 0;
    if (s.kind == HG_SCALAR_FLOAT) {
        hg_convert_from_double(t, s.f, buf);   // rounds once; floats to integers saturate
    } else if (t == HG_DTYPE_BOOL) {
        buf[0] = s.i != 0;
    } else if (hg_dtype_is_int((int)t)) {
        uint64_t u = (uint64_t)s.i;            // two's complement, truncated to the width
        for (size_t i = 0; i < hg_dtype_size(t); i++) buf[i] = (unsigned char)(u >> (8 * i));
    } else if (t == HG_DTYPE_F32) {
        float f = (float)s.i;                  // one rounding from the integer
        memcpy(buf, &f, sizeof f);
    } else {
        hg_convert_from_double(t, (double)s.i, buf);
    }
    memcpy(&bits, buf, sizeof bits);
    return bits;
}

static void int_range(hg_dtype t, int64_t* lo, uint64_t* hi) {
    unsigned w = hg_dtype_bits((int)t);
    *lo = 0;
    *hi = UINT64_MAX;
    if (hg_dtype_is_signed_int((int)t)) {
        *hi = (UINT64_C(1) << (w - 1)) - 1;
        *lo = -(int64_t)(*hi) - 1;
    } else if (w < 64) {
        *hi = (UINT64_C(1) << w) - 1;
    }
}

static int int_scalar_fits(hg_scalar s, hg_dtype t) {
    if (s.kind != HG_SCALAR_INT || !hg_dtype_is_int((int)t)) return 1;
    int64_t lo;
    uint64_t hi;
    int_range(t, &lo, &hi);
    return !(s.i < lo || (s.i > 0 && (uint64_t)s.i > hi));
}

hg_status hg_ew_check_int_scalar(const char* fn, hg_scalar s, hg_dtype t) {
    if (int_scalar_fits(s, t)) return HG_OK;
    int64_t lo;
    uint64_t hi;
    int_range(t, &lo, &hi);
    return hg_error(HG_ERR_OUT_OF_RANGE,
                    "%s: the integer scalar %lld does not fit %s, the dtype it takes next to the "
                    "tensor (numpy's NEP 50 rule; valid: %lld..%llu)", fn, (long long)s.i,
                    hg_dtype_name(t), (long long)lo, (unsigned long long)hi);
}


hg_status hg_ew_scalar_operand(const char* fn, hg_binary_op* op, hg_scalar* s, hg_dtype t,
                               int* scalar_first) {
    hg_dtype sd = hg_ew_scalar_dtype(*s, t);
    if (int_scalar_fits(*s, sd)) return HG_OK;
    if (*op >= HG_BINARY_EQ && *op <= HG_BINARY_GE) {
        // numpy 2 compares with an out-of-range Python int by value: the answer is the same
        // for every element (a OR true / a AND false give it as a bool tensor).
        int above = s->i > 0, lt = *scalar_first ? !above : above;   // left < right?
        int r = *op == HG_BINARY_NE || (lt && (*op == HG_BINARY_LT || *op == HG_BINARY_LE)) ||
                (!lt && (*op == HG_BINARY_GT || *op == HG_BINARY_GE));
        *op = r ? HG_BINARY_LOGICAL_OR : HG_BINARY_LOGICAL_AND;
        *s = hg_scalar_b(r);
        *scalar_first = 0;
        return HG_OK;
    }
    if (*op == HG_BINARY_DIV) {
        // numpy divides integers in f64, so the int is taken as an f64 there, not in sd.
        *s = hg_scalar_f((double)s->i);
        return HG_OK;
    }
    if (*op >= HG_BINARY_LOGICAL_AND && *op <= HG_BINARY_LOGICAL_XOR) {
        *s = hg_scalar_b(s->i != 0);   // only whether it is zero matters (numpy agrees)
        return HG_OK;
    }
    return hg_ew_check_int_scalar(fn, *s, sd);
}
