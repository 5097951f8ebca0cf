// Shared argument handling of the op library (see op_common.h).
#include "ops/common/op_common.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "base/shape.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"


const char* hg_op_dims(char* buf, int32_t ndim, const int64_t* shape) {
    return hg_tensor_format_dims(buf, ndim, shape);
}

hg_status hg_op_input(hg_op_ctx* c, const hg_tensor* t, const char* name, hg_buffer_obj** out_buf,
                      int64_t* out_numel) {
    hg_buffer_obj* b = NULL;
    int64_t n = 0;
    hg_status s = hg_tensor_check(t, c->fn, name, &b, &n);
    if (s) return s;
    if (!c->ex) c->ex = b->ex;
    else if (b->ex != c->ex)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "%s: '%s' lives on another executor than the earlier arguments (all "
                        "tensors of one call must share an executor)", c->fn, name);
    if (out_buf) *out_buf = b;
    if (out_numel) *out_numel = n;
    if (c->trace.t0) hg_op_trace_tensor(c, t, 0);
    return HG_OK;
}

static int kind_rank(hg_dtype t) {  // bool < unsigned/signed ints < floats
    if (t == HG_DTYPE_BOOL) return 0;
    if (hg_dtype_is_int((int)t)) return 1;
    return 2;
}

int hg_op_can_cast_same_kind(hg_dtype from, hg_dtype to) {
    if (from == to) return 1;
    int kf = kind_rank(from), kt = kind_rank(to);
    if (kf == 0) return 1;
    if (kf == 2) return kt == 2;
    if (kt == 2) return 1;
    if (kt == 0) return 0;
    // int -> int: signed -> unsigned never; unsigned -> unsigned/signed any width counts as
    // same kind in numpy (u32 -> i16 is "same_kind"); signed -> signed any width.
    if (hg_dtype_is_signed_int((int)from) && hg_dtype_is_unsigned_int((int)to)) return 0;
    return 1;
}

hg_status hg_op_output(hg_op_ctx* c, hg_tensor* out, hg_dtype dtype, int32_t ndim,
                       const int64_t* shape, int allow_cast) {
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'out' is NULL", c->fn);
    char sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT];
    if (out->buffer.handle == 0) {
        if (!c->ex)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "%s: 'out' has no buffer and there is no input tensor to take an "
                            "executor from (pass an existing output tensor)", c->fn);
        int64_t numel = hg_shape_numel(ndim, shape);
        hg_executor exh = {c->ex->handle};
        hg_buffer buf;
        hg_status s = hg_buffer_create_ex(exh, dtype, (size_t)numel, HG_BUFFER_UNINITIALIZED, &buf);
        if (s) return hg_error_prefix(s, "%s: allocating the output", c->fn);
        hg_tensor r;
        memset(&r, 0, sizeof r);
        r.buffer = buf;
        r.dtype = dtype;
        r.ndim = ndim;
        for (int32_t i = 0; i < ndim; i++) r.shape[i] = shape[i];
        hg_tensor_contiguous_strides(ndim, r.shape, r.strides);
        *out = r;
        c->allocated = 1;
        if (c->trace.t0) hg_op_trace_tensor(c, out, 1);
        return HG_OK;
    }
    if (c->trace.t0) hg_op_trace_tensor(c, out, 2);   // before the check counts it as an input
    hg_status s = hg_op_input(c, out, "out", NULL, NULL);
    if (s) return s;
    int same = out->ndim == ndim;
    for (int32_t i = 0; same && i < ndim; i++) same = out->shape[i] == shape[i];
    if (!same)
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: 'out' has shape %s, the result has shape %s",
                        c->fn, hg_op_dims(sb, out->ndim, out->shape), hg_op_dims(tb, ndim, shape));
    if (out->dtype != dtype && !(allow_cast && hg_op_can_cast_same_kind(dtype, out->dtype)))
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: 'out' has dtype %s, the result is %s%s", c->fn,
                        hg_dtype_name(out->dtype), hg_dtype_name(dtype),
                        allow_cast ? " (the result may only be cast to an out dtype of the same "
                                     "kind, numpy's same_kind rule)"
                                   : " (they must be equal)");
    // A zero stride on a dim of size > 1 would write one element several times.
    for (int32_t i = 0; i < ndim; i++)
        if (out->strides[i] == 0 && out->shape[i] > 1)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "%s: 'out' has stride 0 on dim %d of size %lld (a broadcast view "
                            "cannot be written)", c->fn, (int)i, (long long)out->shape[i]);
    return HG_OK;
}

hg_status hg_op_existing_output(hg_op_ctx* c, const hg_tensor* out, const char* name) {
    hg_status s = hg_op_input(c, out, name, NULL, NULL);
    if (s) return s;
    for (int32_t i = 0; i < out->ndim; i++)
        if (out->strides[i] == 0 && out->shape[i] > 1)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "%s: '%s' has stride 0 on dim %d of size %lld (a broadcast view "
                            "cannot be written)", c->fn, name, (int)i, (long long)out->shape[i]);
    return HG_OK;
}

static hg_buffer_obj* buffer_of(const hg_tensor* t) {
    return hg_handle_get(t->buffer.handle, HG_HANDLE_BUFFER);
}

int hg_op_overlaps(const hg_tensor* a, const hg_tensor* b) {
    hg_buffer_obj* ab = buffer_of(a);
    hg_buffer_obj* bb = b->buffer.handle == a->buffer.handle ? ab : buffer_of(b);
    return ab && bb && hg_tensor_overlap(a, ab, b, bb);
}

struct hg_op_copy {
    hg_tensor t;
    hg_op_copy* next;
};

void hg_op_copies_release(hg_op_ctx* c) {
    while (c->copies) {
        hg_op_copy* k = c->copies;
        c->copies = k->next;
        hg_buffer_destroy(k->t.buffer);   // cannot fail for a buffer made here
        free(k);
    }
}

hg_status hg_op_read_first_slow(hg_op_ctx* c, const hg_tensor* out, hg_buffer_obj* out_buf,
                                const hg_tensor** in, hg_buffer_obj** in_buf, int same_ok) {
    const hg_tensor* x = *in;
    if (!x || !out || out->ndim < 0 || out->ndim > HG_MAX_DIMS) return HG_OK;   // unchecked out
    hg_buffer_obj* ob = out_buf ? out_buf : buffer_of(out);
    hg_buffer_obj* xb = in_buf && *in_buf ? *in_buf : buffer_of(x);
    if (!ob || !xb || !hg_tensor_overlap(out, ob, x, xb)) return HG_OK;
    if (same_ok && hg_tensor_same_view(out, ob, x, xb)) return HG_OK;
    hg_op_copy* k = malloc(sizeof *k);
    if (!k)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of memory copying an input that overlaps "
                        "'out'", c->fn);
    int64_t n = hg_view_numel(x);
    hg_executor exh = {xb->ex->handle};
    hg_buffer nb;
    hg_status s = hg_buffer_create_ex(exh, x->dtype, (size_t)n, HG_BUFFER_UNINITIALIZED, &nb);
    if (s) {
        free(k);
        return hg_error_prefix(s, "%s: copying an input that overlaps 'out'", c->fn);
    }
    memset(&k->t, 0, sizeof k->t);
    k->t.buffer = nb;
    k->t.dtype = x->dtype;
    k->t.ndim = x->ndim;
    memcpy(k->t.shape, x->shape, sizeof k->t.shape);
    hg_tensor_contiguous_strides(x->ndim, x->shape, k->t.strides);
    k->next = c->copies;
    c->copies = k;
    if ((s = hg_tensor_copy(&k->t, x))) return hg_error_prefix(s, "%s", c->fn);
    *in = &k->t;
    if (in_buf) *in_buf = buffer_of(&k->t);
    return HG_OK;
}

hg_status hg_op_read_first(hg_op_ctx* c, const hg_tensor* out, const hg_tensor** in,
                           int same_ok) {
    return hg_op_read_first_slow(c, out, NULL, in, NULL, same_ok);
}

hg_status hg_op_finish(hg_op_ctx* c, hg_tensor* out, hg_status s) {
    if (s && c->allocated && out && out->buffer.handle) {
        // Keep the caller's error message: destroying cannot fail for a buffer we just made.
        hg_buffer_destroy(out->buffer);
        memset(out, 0, sizeof *out);
        c->allocated = 0;
    }
    return s;
}

static hg_status view_of(hg_op_ctx* c, const hg_tensor* t, hg_host_view* v, int host_only) {
    hg_buffer_obj* b = NULL;
    int64_t n = 0;
    hg_status s = hg_tensor_check(t, c->fn, "tensor", &b, &n);
    if (s) return s;
    if (host_only && !hg_op_host_memory_of(b->ex))
        return hg_error(HG_ERR_UNSUPPORTED, "%s: not supported on the %s backend yet", c->fn,
                        b->ex->vt->name);
    memset(v, 0, sizeof *v);
    v->data = b->mem ? (unsigned char*)b->mem + t->offset * (int64_t)hg_dtype_size(t->dtype)
                     : NULL;
    v->dtype = t->dtype;
    v->ndim = t->ndim;
    v->numel = n;
    for (int32_t i = 0; i < t->ndim; i++) {
        v->shape[i] = t->shape[i];
        v->strides[i] = t->strides[i];
    }
    return HG_OK;
}

hg_status hg_op_host_view(hg_op_ctx* c, const hg_tensor* t, hg_host_view* v) {
    return view_of(c, t, v, 1);
}

hg_status hg_op_host_view_checked(hg_op_ctx* c, const hg_tensor* t, hg_host_view* v) {
    hg_buffer_obj* b = hg_handle_get(t->buffer.handle, HG_HANDLE_BUFFER);
    // A handle gone since the check (another thread destroyed it): the full check says so.
    if (!b || !hg_op_host_memory_of(b->ex)) return view_of(c, t, v, 1);
    v->data = b->mem ? (unsigned char*)b->mem + t->offset * (int64_t)hg_dtype_size(t->dtype)
                     : NULL;
    v->dtype = t->dtype;
    v->ndim = t->ndim;
    v->numel = hg_view_numel(t);
    memcpy(v->shape, t->shape, sizeof v->shape);
    memcpy(v->strides, t->strides, sizeof v->strides);
    return HG_OK;
}

hg_status hg_op_raw_view(hg_op_ctx* c, const hg_tensor* t, hg_host_view* v) {
    return view_of(c, t, v, 0);
}

hg_status hg_op_axis(hg_op_ctx* c, int32_t ndim, int32_t axis, int32_t* out) {
    if (axis < -ndim || axis >= ndim || ndim == 0)
        return hg_error(HG_ERR_OUT_OF_RANGE,
                        "%s: axis %d is out of range for a tensor of %d dims (valid: %d..%d)",
                        c->fn, (int)axis, (int)ndim, (int)-ndim, (int)ndim - 1);
    *out = axis < 0 ? axis + ndim : axis;
    return HG_OK;
}

hg_status hg_op_reduce_axes_mask(hg_op_ctx* c, int32_t ndim, int32_t naxes, const int32_t* axes,
                                 int allow_0d, uint32_t* out_mask) {
    int zero_d = allow_0d && ndim == 0 && axes && naxes > 0 && naxes <= HG_MAX_DIMS;
    for (int32_t i = 0; zero_d && i < naxes; i++) zero_d = axes[i] == 0 || axes[i] == -1;
    if (zero_d && naxes > 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: axis %d is repeated in the axis list (a 0-d "
                        "tensor has one axis to reduce, 0 or -1)", c->fn, (int)axes[1]);
    if (zero_d) {
        *out_mask = 0;
        return HG_OK;
    }
    return hg_op_axes_mask(c, ndim, naxes, axes, out_mask);
}

hg_status hg_op_axes_mask(hg_op_ctx* c, int32_t ndim, int32_t naxes, const int32_t* axes,
                          uint32_t* out_mask) {
    if (!axes) {
        *out_mask = ndim ? (uint32_t)((1u << ndim) - 1) : 0;
        return HG_OK;
    }
    if (naxes < 0 || naxes > HG_MAX_DIMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: naxes %d is out of range (valid: 0..%d)",
                        c->fn, (int)naxes, HG_MAX_DIMS);
    uint32_t m = 0;
    for (int32_t i = 0; i < naxes; i++) {
        int32_t a = 0;
        hg_status s = hg_op_axis(c, ndim, axes[i], &a);
        if (s) return s;
        if (m & (1u << a))
            return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: axis %d is repeated in the axis list",
                            c->fn, (int)axes[i]);
        m |= 1u << a;
    }
    *out_mask = m;
    return HG_OK;
}

hg_status hg_op_parallel(hg_op_ctx* c, int nworkers, void (*fn)(void* ctx, int worker), void* ctx,
                         int* out_n) {
    if (!c->ex || !c->ex->vt->host_parallel)
        return hg_error(HG_ERR_UNSUPPORTED, "%s: not supported on the %s backend yet", c->fn,
                        c->ex ? c->ex->vt->name : "(none)");
    return c->ex->vt->host_parallel(c->ex->state, nworkers, fn, ctx, out_n);
}

int hg_op_host_gemm_ok(const hg_op_ctx* c) {
    return c->ex && c->ex->vt->host_parallel && c->ex->vt->host_sgemm_serial &&
           c->ex->vt->host_dgemm_serial;
}

hg_status hg_op_host_sgemm(const hg_op_ctx* c, int trans_a, int trans_b, int64_t m, int64_t n,
                           int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                           int64_t ldb, float beta, float* cm, int64_t ldc) {
    if (!hg_op_host_gemm_ok(c)) return HG_ERR_UNSUPPORTED;
    return c->ex->vt->host_sgemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
                                        cm, ldc);
}

hg_status hg_op_host_dgemm(const hg_op_ctx* c, int64_t m, int64_t n, int64_t k, const double* a,
                           int64_t a_rs, int64_t a_cs, const double* b, int64_t b_rs,
                           int64_t b_cs, double* cm, int64_t c_rs, int64_t c_cs) {
    if (!hg_op_host_gemm_ok(c)) return HG_ERR_UNSUPPORTED;
    return c->ex->vt->host_dgemm_serial(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, cm, c_rs, c_cs);
}

int hg_op_num_threads(hg_op_ctx* c) {
    if (!c->ex || !c->ex->vt->num_threads) return 1;
    int n = c->ex->vt->num_threads(c->ex->state);
    return n < 1 ? 1 : n;
}

double hg_op_load_f64(hg_dtype dt, const void* p) {
    switch (dt) {
    case HG_DTYPE_BOOL: return *(const uint8_t*)p ? 1.0 : 0.0;
    case HG_DTYPE_I8: return *(const int8_t*)p;
    case HG_DTYPE_I16: return *(const int16_t*)p;
    case HG_DTYPE_I32: return *(const int32_t*)p;
    case HG_DTYPE_I64: return (double)*(const int64_t*)p;
    case HG_DTYPE_U8: return *(const uint8_t*)p;
    case HG_DTYPE_U16: return *(const uint16_t*)p;
    case HG_DTYPE_U32: return *(const uint32_t*)p;
    case HG_DTYPE_U64: return (double)*(const uint64_t*)p;
    case HG_DTYPE_F16: return hg_f16_to_f32(*(const uint16_t*)p);
    case HG_DTYPE_BF16: return hg_bf16_to_f32(*(const uint16_t*)p);
    case HG_DTYPE_F32: return *(const float*)p;
    case HG_DTYPE_F64: return *(const double*)p;
    default: return NAN;
    }
}

void hg_op_store_f64(hg_dtype dt, void* p, double v) { hg_convert_from_double(dt, v, p); }

int64_t hg_op_load_i64(hg_dtype dt, const void* p) {
    switch (dt) {
    case HG_DTYPE_BOOL: return *(const uint8_t*)p ? 1 : 0;
    case HG_DTYPE_I8: return *(const int8_t*)p;
    case HG_DTYPE_I16: return *(const int16_t*)p;
    case HG_DTYPE_I32: return *(const int32_t*)p;
    case HG_DTYPE_I64: return *(const int64_t*)p;
    case HG_DTYPE_U8: return *(const uint8_t*)p;
    case HG_DTYPE_U16: return *(const uint16_t*)p;
    case HG_DTYPE_U32: return *(const uint32_t*)p;
    case HG_DTYPE_U64: return (int64_t)*(const uint64_t*)p;
    default: return (int64_t)hg_op_load_f64(dt, p);
    }
}
