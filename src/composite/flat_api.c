// The flat forms of the product documents (hg_vector_add ... hg_matvec_flat): each checks its
// buffers (live, same dtype, at least the elements it reads or writes), views them as 1-D
// tensors of n elements from element 0 (2-D for gemm/matvec) and calls the tensor op, so the
// numerics, dtype rules, threading and backends are exactly those of the tensor ops.
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "hologram.h"

// Checks a buffer argument of fn: a live handle, dtype equal to *dtype (set by the first buffer
// when *dtype < 0), at least `need` elements.
static hg_status check_buf(const char* fn, const char* name, hg_buffer b, size_t need,
                           int* dtype, const char* first) {
    hg_dtype dt;
    size_t count = 0;
    if (hg_buffer_dtype(b, &dt) != HG_OK || hg_buffer_count(b, &count) != HG_OK)
        return hg_error_prefix(HG_ERR_INVALID_HANDLE, "%s: buffer '%s'", fn, name);
    if (*dtype < 0) *dtype = (int)dt;
    else if ((int)dt != *dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: buffer '%s' has dtype %s, buffer '%s' has %s (all buffers must have "
                        "one dtype)", fn, name, hg_dtype_name(dt), first,
                        hg_dtype_name((hg_dtype)*dtype));
    if (count < need)
        return hg_error(HG_ERR_SIZE_MISMATCH,
                        "%s: buffer '%s' holds %zu elements, the call needs %zu", fn, name, count,
                        need);
    return HG_OK;
}

static hg_status check_n(const char* fn, const char* what, size_t n) {
    if (n > (size_t)INT64_MAX)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: %s = %zu is too large (at most %lld)", fn,
                        what, n, (long long)INT64_MAX);
    return HG_OK;
}

// A 1-D (ndim 1) or 2-D C-contiguous view of b from element 0.
static hg_tensor view_of(hg_buffer b, int32_t ndim, size_t d0, size_t d1) {
    hg_tensor t;
    int64_t shape[2] = {(int64_t)d0, (int64_t)d1};
    if (hg_tensor_view(b, ndim, shape, NULL, 0, &t) != HG_OK) memset(&t, 0, sizeof t);
    return t;
}

// Prefixes the tensor op's message with the flat function's name.
static hg_status wrap(const char* fn, hg_status s) {
    return s ? hg_error_prefix(s, "%s", fn) : HG_OK;
}

static hg_status need_float(const char* fn, int dtype) {
    if (!hg_dtype_is_float(dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: the buffers have dtype %s; this op needs a float dtype (f16, bf16, "
                        "f32 or f64)", fn, hg_dtype_name((hg_dtype)dtype));
    return HG_OK;
}

// A double argument as a scalar of the buffers' kind: float dtypes take it as a float; integer
// and bool dtypes need an integral value (a float scalar would promote the result to f64).
static hg_status scalar_for(const char* fn, const char* name, int dtype, double v,
                            hg_scalar* out) {
    if (hg_dtype_is_float(dtype)) {
        *out = hg_scalar_f(v);
        return HG_OK;
    }
    if (!(v == trunc(v)) || !(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "%s: %s = %g is not an integer in int64 range, which an %s buffer needs",
                        fn, name, v, hg_dtype_name((hg_dtype)dtype));
    *out = hg_scalar_i((int64_t)v);
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Elementwise
// ---------------------------------------------------------------------------------------------

static hg_status flat_binary(const char* fn, hg_binary_op op, hg_buffer a, hg_buffer b,
                             hg_buffer c, size_t n) {
    int dt = -1;
    hg_status s;
    if ((s = check_n(fn, "n", n)) || (s = check_buf(fn, "a", a, n, &dt, "a")) ||
        (s = check_buf(fn, "b", b, n, &dt, "a")) || (s = check_buf(fn, "c", c, n, &dt, "a")))
        return s;
    hg_tensor ta = view_of(a, 1, n, 0), tb = view_of(b, 1, n, 0), tc = view_of(c, 1, n, 0);
    return wrap(fn, hg_binary(op, &ta, &tb, &tc));
}

hg_status hg_vector_add(hg_buffer a, hg_buffer b, hg_buffer c, size_t n) {
    return flat_binary("hg_vector_add", HG_BINARY_ADD, a, b, c, n);
}
hg_status hg_vector_sub(hg_buffer a, hg_buffer b, hg_buffer c, size_t n) {
    return flat_binary("hg_vector_sub", HG_BINARY_SUB, a, b, c, n);
}
hg_status hg_vector_mul(hg_buffer a, hg_buffer b, hg_buffer c, size_t n) {
    return flat_binary("hg_vector_mul", HG_BINARY_MUL, a, b, c, n);
}
hg_status hg_vector_div(hg_buffer a, hg_buffer b, hg_buffer c, size_t n) {
    return flat_binary("hg_vector_div", HG_BINARY_DIV, a, b, c, n);
}
hg_status hg_vector_min(hg_buffer a, hg_buffer b, hg_buffer c, size_t n) {
    return flat_binary("hg_vector_min", HG_BINARY_MINIMUM, a, b, c, n);
}
hg_status hg_vector_max(hg_buffer a, hg_buffer b, hg_buffer c, size_t n) {
    return flat_binary("hg_vector_max", HG_BINARY_MAXIMUM, a, b, c, n);
}

static hg_status flat_unary(const char* fn, hg_unary_op op, int float_only, hg_buffer a,
                            hg_buffer c, size_t n) {
    int dt = -1;
    hg_status s;
    if ((s = check_n(fn, "n", n)) || (s = check_buf(fn, "in", a, n, &dt, "in")) ||
        (s = check_buf(fn, "out", c, n, &dt, "in")))
        return s;
    if (float_only && (s = need_float(fn, dt))) return s;
    hg_tensor ta = view_of(a, 1, n, 0), tc = view_of(c, 1, n, 0);
    return wrap(fn, hg_unary(op, &ta, &tc));
}

hg_status hg_vector_abs(hg_buffer a, hg_buffer c, size_t n) {
    return flat_unary("hg_vector_abs", HG_UNARY_ABS, 0, a, c, n);
}
hg_status hg_vector_neg(hg_buffer a, hg_buffer c, size_t n) {
    return flat_unary("hg_vector_neg", HG_UNARY_NEG, 0, a, c, n);
}
hg_status hg_vector_relu(hg_buffer a, hg_buffer c, size_t n) {
    return flat_unary("hg_vector_relu", HG_UNARY_RELU, 0, a, c, n);
}
hg_status hg_vector_sigmoid(hg_buffer in, hg_buffer out, size_t n) {
    return flat_unary("hg_vector_sigmoid", HG_UNARY_SIGMOID, 1, in, out, n);
}
hg_status hg_vector_tanh(hg_buffer in, hg_buffer out, size_t n) {
    return flat_unary("hg_vector_tanh", HG_UNARY_TANH, 1, in, out, n);
}
hg_status hg_vector_gelu(hg_buffer in, hg_buffer out, size_t n) {
    return flat_unary("hg_vector_gelu", HG_UNARY_GELU, 1, in, out, n);
}

hg_status hg_vector_clip(hg_buffer a, hg_buffer c, double lo, double hi, size_t n) {
    const char* fn = "hg_vector_clip";
    int dt = -1;
    hg_status s;
    hg_scalar slo, shi;
    if ((s = check_n(fn, "n", n)) || (s = check_buf(fn, "a", a, n, &dt, "a")) ||
        (s = check_buf(fn, "c", c, n, &dt, "a")) || (s = scalar_for(fn, "lo", dt, lo, &slo)) ||
        (s = scalar_for(fn, "hi", dt, hi, &shi)))
        return s;
    hg_tensor ta = view_of(a, 1, n, 0), tc = view_of(c, 1, n, 0);
    return wrap(fn, hg_clip_scalar(&ta, slo, shi, &tc));
}

static hg_status flat_scalar(const char* fn, hg_binary_op op, hg_buffer a, hg_buffer c,
                             double v, size_t n) {
    int dt = -1;
    hg_status s;
    hg_scalar sv;
    if ((s = check_n(fn, "n", n)) || (s = check_buf(fn, "a", a, n, &dt, "a")) ||
        (s = check_buf(fn, "c", c, n, &dt, "a")) || (s = scalar_for(fn, "s", dt, v, &sv)))
        return s;
    hg_tensor ta = view_of(a, 1, n, 0), tc = view_of(c, 1, n, 0);
    return wrap(fn, hg_binary_scalar(op, &ta, sv, 0, &tc));
}

hg_status hg_scalar_add(hg_buffer a, hg_buffer c, double s, size_t n) {
    return flat_scalar("hg_scalar_add", HG_BINARY_ADD, a, c, s, n);
}
hg_status hg_scalar_mul(hg_buffer a, hg_buffer c, double s, size_t n) {
    return flat_scalar("hg_scalar_mul", HG_BINARY_MUL, a, c, s, n);
}

hg_status hg_vector_softmax(hg_buffer in, hg_buffer out, size_t n) {
    const char* fn = "hg_vector_softmax";
    int dt = -1;
    hg_status s;
    if ((s = check_n(fn, "n", n)) || (s = check_buf(fn, "in", in, n, &dt, "in")) ||
        (s = check_buf(fn, "out", out, n, &dt, "in")) || (s = need_float(fn, dt)))
        return s;
    hg_tensor ti = view_of(in, 1, n, 0), to = view_of(out, 1, n, 0);
    return wrap(fn, hg_softmax(&ti, 0, &to));
}

// ---------------------------------------------------------------------------------------------
// Reductions and losses: out[0] and *result
// ---------------------------------------------------------------------------------------------

// *result = out[0] converted to double (when result != NULL).
static hg_status read_result(const char* fn, hg_buffer out, int dtype, double* result) {
    if (!result) return HG_OK;
    unsigned char e[8];
    hg_status s = hg_buffer_read(out, 0, e, 1);
    if (s) return wrap(fn, s);
    switch ((hg_dtype)dtype) {
    case HG_DTYPE_BOOL: *result = e[0] != 0; break;
    case HG_DTYPE_I8: { int8_t v; memcpy(&v, e, 1); *result = v; break; }
    case HG_DTYPE_I16: { int16_t v; memcpy(&v, e, 2); *result = v; break; }
    case HG_DTYPE_I32: { int32_t v; memcpy(&v, e, 4); *result = v; break; }
    case HG_DTYPE_I64: { int64_t v; memcpy(&v, e, 8); *result = (double)v; break; }
    case HG_DTYPE_U8: *result = e[0]; break;
    case HG_DTYPE_U16: { uint16_t v; memcpy(&v, e, 2); *result = v; break; }
    case HG_DTYPE_U32: { uint32_t v; memcpy(&v, e, 4); *result = v; break; }
    case HG_DTYPE_U64: { uint64_t v; memcpy(&v, e, 8); *result = (double)v; break; }
    case HG_DTYPE_F16: { uint16_t v; memcpy(&v, e, 2); *result = hg_f16_to_f32(v); break; }
    case HG_DTYPE_BF16: { uint16_t v; memcpy(&v, e, 2); *result = hg_bf16_to_f32(v); break; }
    case HG_DTYPE_F32: { float v; memcpy(&v, e, 4); *result = v; break; }
    default: { double v; memcpy(&v, e, 8); *result = v; break; }
    }
    return HG_OK;
}

static hg_status flat_reduce(const char* fn, hg_reduce_op op, hg_buffer in, hg_buffer out,
                             size_t n, double* result) {
    int dt = -1;
    hg_status s;
    if ((s = check_n(fn, "n", n)) || (s = check_buf(fn, "in", in, n, &dt, "in")) ||
        (s = check_buf(fn, "out", out, 1, &dt, "in")))
        return s;
    hg_tensor ti = view_of(in, 1, n, 0), to = view_of(out, 0, 0, 0);
    if ((s = wrap(fn, hg_reduce(op, &ti, 0, NULL, 0, &to)))) return s;
    return read_result(fn, out, dt, result);
}

hg_status hg_reduce_sum(hg_buffer in, hg_buffer out, size_t n, double* result) {
    return flat_reduce("hg_reduce_sum", HG_REDUCE_SUM, in, out, n, result);
}
hg_status hg_reduce_min(hg_buffer in, hg_buffer out, size_t n, double* result) {
    return flat_reduce("hg_reduce_min", HG_REDUCE_MIN, in, out, n, result);
}
hg_status hg_reduce_max(hg_buffer in, hg_buffer out, size_t n, double* result) {
    return flat_reduce("hg_reduce_max", HG_REDUCE_MAX, in, out, n, result);
}

static hg_status loss_args(const char* fn, hg_buffer pred, hg_buffer target, hg_buffer out,
                           size_t n, int* dt) {
    hg_status s;
    *dt = -1;
    if ((s = check_n(fn, "n", n)) || (s = check_buf(fn, "pred", pred, n, dt, "pred")) ||
        (s = check_buf(fn, "target", target, n, dt, "pred")) ||
        (s = check_buf(fn, "out", out, 1, dt, "pred")) || (s = need_float(fn, *dt)))
        return s;
    return HG_OK;
}

hg_status hg_mse_loss_flat(hg_buffer pred, hg_buffer target, hg_buffer out, size_t n,
                           double* result) {
    const char* fn = "hg_mse_loss_flat";
    int dt;
    hg_status s = loss_args(fn, pred, target, out, n, &dt);
    if (s) return s;
    hg_tensor tp = view_of(pred, 1, n, 0), tt = view_of(target, 1, n, 0), to = view_of(out, 0, 0, 0);
    if ((s = wrap(fn, hg_mse_loss(&tp, &tt, HG_REDUCTION_MEAN, &to)))) return s;
    return read_result(fn, out, dt, result);
}

hg_status hg_binary_cross_entropy_loss_flat(hg_buffer pred, hg_buffer target, hg_buffer out,
                                            size_t n, double* result) {
    const char* fn = "hg_binary_cross_entropy_loss_flat";
    int dt;
    hg_status s = loss_args(fn, pred, target, out, n, &dt);
    if (s) return s;
    hg_tensor tp = view_of(pred, 1, n, 0), tt = view_of(target, 1, n, 0), to = view_of(out, 0, 0, 0);
    if ((s = wrap(fn, hg_binary_cross_entropy(&tp, &tt, NULL, HG_REDUCTION_MEAN, &to)))) return s;
    return read_result(fn, out, dt, result);
}

// -(1/n) sum t * max(log p, -100): log p into a temporary, clamped, times t, mean, negated.
hg_status hg_cross_entropy_loss_flat(hg_buffer pred, hg_buffer target, hg_buffer out, size_t n,
                                     double* result) {
    const char* fn = "hg_cross_entropy_loss_flat";
    int dt;
    hg_status s = loss_args(fn, pred, target, out, n, &dt);
    if (s) return s;
    hg_tensor tp = view_of(pred, 1, n, 0), tt = view_of(target, 1, n, 0), to = view_of(out, 0, 0, 0);
    hg_tensor tmp;
    memset(&tmp, 0, sizeof tmp);   // allocated by hg_unary
    if ((s = hg_unary(HG_UNARY_LOG, &tp, &tmp))) return wrap(fn, s);
    if (!(s = hg_binary_scalar(HG_BINARY_MAXIMUM, &tmp, hg_scalar_f(-100.0), 0, &tmp)) &&
        !(s = hg_binary(HG_BINARY_MUL, &tmp, &tt, &tmp)) &&
        !(s = hg_reduce(HG_REDUCE_MEAN, &tmp, 0, NULL, 0, &to)))
        s = hg_unary(HG_UNARY_NEG, &to, &to);
    hg_buffer_destroy(tmp.buffer);
    if (s) return wrap(fn, s);
    return read_result(fn, out, dt, result);
}

// ---------------------------------------------------------------------------------------------
// Matrix products
// ---------------------------------------------------------------------------------------------

// a * b elements, refusing overflow of int64.
static hg_status product(const char* fn, const char* what, size_t a, size_t b, size_t* out) {
    if (a && b > (size_t)INT64_MAX / a)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: %s = %zu x %zu elements overflows int64",
                        fn, what, a, b);
    *out = a * b;
    return HG_OK;
}

hg_status hg_gemm_flat(hg_buffer a, hg_buffer b, hg_buffer c, size_t m, size_t n, size_t k) {
    const char* fn = "hg_gemm_flat";
    int dt = -1;
    size_t na = 0, nb = 0, nc = 0;
    hg_status s;
    if ((s = check_n(fn, "m", m)) || (s = check_n(fn, "n", n)) || (s = check_n(fn, "k", k)) ||
        (s = product(fn, "A", m, k, &na)) || (s = product(fn, "B", k, n, &nb)) ||
        (s = product(fn, "C", m, n, &nc)) || (s = check_buf(fn, "a", a, na, &dt, "a")) ||
        (s = check_buf(fn, "b", b, nb, &dt, "a")) || (s = check_buf(fn, "c", c, nc, &dt, "a")))
        return s;
    hg_tensor ta = view_of(a, 2, m, k), tb = view_of(b, 2, k, n), tc = view_of(c, 2, m, n);
    return wrap(fn, hg_gemm(0, 0, 1.0, &ta, &tb, 0.0, &tc));
}

hg_status hg_matvec_flat(hg_buffer a, hg_buffer x, hg_buffer y, size_t m, size_t n) {
    const char* fn = "hg_matvec_flat";
    int dt = -1;
    size_t na = 0;
    hg_status s;
    if ((s = product(fn, "A", m, n, &na)) || (s = check_n(fn, "n", n)) ||
        (s = check_n(fn, "m", m)) || (s = check_buf(fn, "a", a, na, &dt, "a")) ||
        (s = check_buf(fn, "x", x, n, &dt, "a")) || (s = check_buf(fn, "y", y, m, &dt, "a")))
        return s;
    hg_tensor ta = view_of(a, 2, m, n), tx = view_of(x, 1, n, 0), ty = view_of(y, 1, m, 0);
    return wrap(fn, hg_matvec(&ta, &tx, &ty));
}
