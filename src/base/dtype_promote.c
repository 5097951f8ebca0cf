// numpy's result_type of two dtypes (with torch's rule for bfloat16): the one promotion every op
// family and the graph compiler use, in base below them all.
#include <stddef.h>
#include "base/dtype.h"
#include "base/error.h"

// Signed integer dtype of a width in bytes (1, 2, 4, 8).
static hg_dtype signed_of_size(size_t bytes) {
    switch (bytes) {
    case 1: return HG_DTYPE_I8;
    case 2: return HG_DTYPE_I16;
    case 4: return HG_DTYPE_I32;
    default: return HG_DTYPE_I64;
    }
}

// The float numpy pairs with an integer next to f16 (and uses for float functions of
// integers): 8-bit and bool -> f16, 16-bit -> f32, wider -> f64.
hg_dtype hg_dtype_float_of_int(hg_dtype t) {
    size_t w = t == HG_DTYPE_BOOL ? 1 : hg_dtype_size(t);
    return w == 1 ? HG_DTYPE_F16 : w == 2 ? HG_DTYPE_F32 : HG_DTYPE_F64;
}

static hg_dtype promote_int_float(hg_dtype i, hg_dtype f) {
    size_t w = hg_dtype_size(i);
    switch (f) {
    case HG_DTYPE_BF16: return HG_DTYPE_BF16;   // torch: bf16 with any integer stays bf16
    case HG_DTYPE_F16: return hg_dtype_float_of_int(i);
    case HG_DTYPE_F32: return w <= 2 ? HG_DTYPE_F32 : HG_DTYPE_F64;
    default: return HG_DTYPE_F64;
    }
}

static hg_dtype promote_floats(hg_dtype a, hg_dtype b) {
    if (a == b) return a;
    if (a == HG_DTYPE_F64 || b == HG_DTYPE_F64) return HG_DTYPE_F64;
    return HG_DTYPE_F32;   // f16/bf16 with f32, and f16 with bf16 (as torch)
}

hg_dtype hg_dtype_promote(hg_dtype a, hg_dtype b) {
    if (a == b) return a;
    if (a == HG_DTYPE_BOOL) return b;
    if (b == HG_DTYPE_BOOL) return a;
    int fa = hg_dtype_is_float((int)a), fb = hg_dtype_is_float((int)b);
    if (fa && fb) return promote_floats(a, b);
    if (fa) return promote_int_float(b, a);
    if (fb) return promote_int_float(a, b);
    size_t wa = hg_dtype_size(a), wb = hg_dtype_size(b);
    int sa = hg_dtype_is_signed_int((int)a), sb = hg_dtype_is_signed_int((int)b);
    if (sa == sb) return wa >= wb ? a : b;
    hg_dtype s = sa ? a : b;
    size_t ws = sa ? wa : wb, wu = sa ? wb : wa;
    if (ws > wu) return s;
    if (wu == 8) return HG_DTYPE_F64;   // u64 with any signed integer
    return signed_of_size(wu * 2);
}

hg_status hg_result_type(hg_dtype a, hg_dtype b, hg_dtype* out) {
    if (!hg_dtype_valid((int)a) || !hg_dtype_valid((int)b))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_result_type: invalid dtype %d (valid: 0..%d)",
                        !hg_dtype_valid((int)a) ? (int)a : (int)b, HG_DTYPE_COUNT - 1);
    HG_CHECK_NULL(out, "out");
    *out = hg_dtype_promote(a, b);
    return HG_OK;
}
