// Buffers: typed arrays on an executor's device. Every range is checked here (overflow-safe)
// before the backend sees a byte offset.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "runtime/objects.h"

static hg_buffer_obj* resolve(hg_buffer b, const char* what) {
    return hg_handle_resolve(b.handle, HG_HANDLE_BUFFER, what);
}

// ---------------------------------------------------------------------------------------------
// double -> element conversion (cvt semantics, docs/isa.md §6)
// ---------------------------------------------------------------------------------------------

// Saturating truncation toward zero into [lo, hi] (given as exact doubles: powers of two).
static int64_t sat_signed(double v, unsigned bits) {
    if (isnan(v)) return 0;
    double lim = ldexp(1.0, (int)bits - 1);  // 2^(bits-1): the first value out of range
    if (v >= lim) return (int64_t)(UINT64_MAX >> (65 - bits));
    if (v <= -lim) return -(int64_t)(UINT64_MAX >> (65 - bits)) - 1;
    return (int64_t)v;  // C truncates toward zero; in range here
}

static uint64_t sat_unsigned(double v, unsigned bits) {
    if (isnan(v) || v <= 0) return 0;
    double lim = ldexp(1.0, (int)bits);
    if (v >= lim) return UINT64_MAX >> (64 - bits);
    return (uint64_t)v;
}

// double -> float with round-to-odd, so a second rounding to f16/bf16 (far fewer bits) gives
// the correctly rounded result instead of a double-rounding error.
static float to_float_round_odd(double v) {
    float f = (float)v;
    if ((double)f == v || isnan(v)) return f;
    if (fabs((double)f) > fabs(v)) f = nextafterf(f, 0.0f);  // truncate toward zero
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u |= 1u;  // the odd neighbour: t itself if odd, else the next one away from zero
    memcpy(&f, &u, sizeof f);
    return f;
}

void hg_convert_from_double(hg_dtype dtype, double v, void* out) {
    switch (dtype) {
    case HG_DTYPE_BOOL: { uint8_t x = v != 0; memcpy(out, &x, 1); break; }
    case HG_DTYPE_I8: { int8_t x = (int8_t)sat_signed(v, 8); memcpy(out, &x, 1); break; }
    case HG_DTYPE_I16: { int16_t x = (int16_t)sat_signed(v, 16); memcpy(out, &x, 2); break; }
    case HG_DTYPE_I32: { int32_t x = (int32_t)sat_signed(v, 32); memcpy(out, &x, 4); break; }
    case HG_DTYPE_I64: { int64_t x = sat_signed(v, 64); memcpy(out, &x, 8); break; }
    case HG_DTYPE_U8: { uint8_t x = (uint8_t)sat_unsigned(v, 8); memcpy(out, &x, 1); break; }
    case HG_DTYPE_U16: { uint16_t x = (uint16_t)sat_unsigned(v, 16); memcpy(out, &x, 2); break; }
    case HG_DTYPE_U32: { uint32_t x = (uint32_t)sat_unsigned(v, 32); memcpy(out, &x, 4); break; }
    case HG_DTYPE_U64: { uint64_t x = sat_unsigned(v, 64); memcpy(out, &x, 8); break; }
    case HG_DTYPE_F16: { uint16_t x = hg_f32_to_f16(to_float_round_odd(v)); memcpy(out, &x, 2); break; }
    case HG_DTYPE_BF16: { uint16_t x = hg_f32_to_bf16(to_float_round_odd(v)); memcpy(out, &x, 2); break; }
    case HG_DTYPE_F32: { float x = (float)v; memcpy(out, &x, 4); break; }
    case HG_DTYPE_F64: memcpy(out, &v, 8); break;
    default: break;
    }
}

// ---------------------------------------------------------------------------------------------
// Creation and destruction
// ---------------------------------------------------------------------------------------------

static hg_status check_size(hg_dtype dtype, size_t count, size_t* nbytes) {
    if (!hg_dtype_valid((int)dtype))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "dtype %d is not a valid hg_dtype (0..%d)",
                        (int)dtype, HG_DTYPE_COUNT - 1);
    size_t es = hg_dtype_size(dtype);
    // Byte sizes must also fit in ptrdiff_t so pointer arithmetic on them is defined.
    if (count > (size_t)PTRDIFF_MAX / es)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "buffer of %zu %s elements (%zu bytes each) is too large: the byte size "
                        "overflows (at most %zu elements)",
                        count, hg_dtype_name(dtype), es, (size_t)PTRDIFF_MAX / es);
    *nbytes = count * es;
    return HG_OK;
}

static hg_status finish_create(hg_executor_obj* ex, hg_buffer_obj* b, hg_buffer* out) {
    b->handle = hg_handle_insert(HG_HANDLE_BUFFER, b);
    if (!b->handle) {
        hg_buffer_release(b);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory registering a buffer handle");
    }
    hg_executor_link_buffer(ex, b);
    out->handle = b->handle;
    return HG_OK;
}

hg_status hg_buffer_create(hg_executor exh, hg_dtype dtype, size_t count, hg_buffer* out) {
    return hg_buffer_create_ex(exh, dtype, count, HG_BUFFER_DEFAULT, out);
}

// A new buffer object without memory yet (NULL when out of memory).
static hg_buffer_obj* new_obj(hg_executor_obj* ex, hg_dtype dtype, size_t count, size_t nbytes) {
    hg_buffer_obj* b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->ex = ex;
    b->dtype = dtype;
    b->count = count;
    b->nbytes = nbytes;
    return b;
}

hg_status hg_buffer_create_ex(hg_executor exh, hg_dtype dtype, size_t count, uint32_t flags,
                              hg_buffer* out) {
    hg_executor_obj* ex = hg_executor_resolve(exh, "hg_buffer_create");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    if (flags & ~(uint32_t)HG_BUFFER_UNINITIALIZED)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_buffer_create_ex: unknown flags 0x%x "
                        "(expected HG_BUFFER_DEFAULT or HG_BUFFER_UNINITIALIZED)",
                        (unsigned)(flags & ~(uint32_t)HG_BUFFER_UNINITIALIZED));
    size_t nbytes = 0;
    hg_status s = check_size(dtype, count, &nbytes);
    if (s) return s;
    hg_buffer_obj* b = new_obj(ex, dtype, count, nbytes);
    if (!b) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating a buffer object");
    if (nbytes) {  // zero-size buffers own no memory
        if ((s = ex->vt->mem_alloc(ex->state, nbytes, !(flags & HG_BUFFER_UNINITIALIZED),
                                   &b->mem))) {
            free(b);
            return hg_error_prefix(s, "allocating a buffer of %zu %s elements (%zu bytes)", count,
                                   hg_dtype_name(dtype), nbytes);
        }
    }
    return finish_create(ex, b, out);
}

// A buffer object over caller memory (never freed by the library).
static hg_status new_wrapped(hg_executor_obj* ex, hg_dtype dtype, size_t count, size_t nbytes,
                             void* mem, hg_buffer* out) {
    hg_buffer_obj* b = new_obj(ex, dtype, count, nbytes);
    if (!b) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating a buffer object");
    b->mem = mem;
    b->wrapped = 1;
    return finish_create(ex, b, out);
}

hg_status hg_buffer_wrap(hg_executor exh, hg_dtype dtype, void* ptr, size_t count,
                         hg_buffer* out) {
    hg_executor_obj* ex = hg_executor_resolve(exh, "hg_buffer_wrap");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(ptr, "ptr");
    HG_CHECK_NULL(out, "out");
    size_t nbytes = 0;
    hg_status s = check_size(dtype, count, &nbytes);
    if (s) return s;
    if (!ex->vt->host_visible)
        return hg_error(HG_ERR_UNSUPPORTED,
                        "hg_buffer_wrap: the '%s' backend's memory is not host memory; wrapping "
                        "caller memory needs a CPU executor",
                        hg_backend_name(ex->kind));
    size_t es = hg_dtype_size(dtype);
    if ((uintptr_t)ptr % es)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_buffer_wrap: pointer %p is not aligned to the %zu-byte size of %s",
                        ptr, es, hg_dtype_name(dtype));
    return new_wrapped(ex, dtype, count, nbytes, ptr, out);
}

hg_status hg_buffer_wrap_device(hg_executor exh, hg_dtype dtype, uint64_t address, size_t count,
                                hg_buffer* out) {
    hg_executor_obj* ex = hg_executor_resolve(exh, "hg_buffer_wrap_device");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    if (address == 0)
        return hg_error(HG_ERR_NULL_POINTER, "hg_buffer_wrap_device: address is 0");
    if (ex->vt->host_visible) return hg_buffer_wrap(exh, dtype, (void*)(uintptr_t)address, count, out);
    size_t nbytes = 0;
    hg_status s = check_size(dtype, count, &nbytes);
    if (s) return s;
    size_t es = hg_dtype_size(dtype);
    if (address % es)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_buffer_wrap_device: address 0x%llx is not aligned to the %zu-byte size "
                        "of %s", (unsigned long long)address, es, hg_dtype_name(dtype));
    return new_wrapped(ex, dtype, count, nbytes, (void*)(uintptr_t)address, out);
}

hg_status hg_buffer_device_address(hg_buffer h, uint64_t* out) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_device_address");
    if (!b) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = (uint64_t)(uintptr_t)b->mem;
    return HG_OK;
}

void hg_buffer_release(hg_buffer_obj* b) {
    if (b->mem && !b->wrapped) b->ex->vt->mem_free(b->ex->state, b->mem);
    free(b);
}

hg_status hg_buffer_destroy(hg_buffer h) {
    if (!resolve(h, "hg_buffer_destroy")) return HG_ERR_INVALID_HANDLE;
    hg_buffer_obj* b = hg_handle_remove(h.handle, HG_HANDLE_BUFFER);
    if (!b)
        return hg_error(HG_ERR_INVALID_HANDLE,
                        "hg_buffer_destroy: buffer handle 0x%016llx was destroyed concurrently",
                        (unsigned long long)h.handle);
    hg_executor_unlink_buffer(b->ex, b);
    hg_buffer_release(b);
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Data movement
// ---------------------------------------------------------------------------------------------

// offset + count <= b->count without overflow.
static hg_status check_range(const hg_buffer_obj* b, const char* what, size_t offset,
                             size_t count) {
    if (offset > b->count || count > b->count - offset)
        return hg_error(HG_ERR_OUT_OF_RANGE,
                        "%s: elements [%zu, %zu + %zu) are outside the buffer of %zu %s elements "
                        "(need offset + count <= %zu)",
                        what, offset, offset, count, b->count, hg_dtype_name(b->dtype), b->count);
    return HG_OK;
}

hg_status hg_buffer_write(hg_buffer h, size_t offset, const void* src, size_t count) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_write");
    if (!b) return HG_ERR_INVALID_HANDLE;
    if (count) HG_CHECK_NULL(src, "src");  // an empty write may come with no pointer at all
    hg_status s = check_range(b, "hg_buffer_write", offset, count);
    if (s || !count) return s;
    size_t es = hg_dtype_size(b->dtype);
    return b->ex->vt->mem_write(b->ex->state, b->mem, offset * es, src, count * es);
}

hg_status hg_buffer_read(hg_buffer h, size_t offset, void* dst, size_t count) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_read");
    if (!b) return HG_ERR_INVALID_HANDLE;
    if (count) HG_CHECK_NULL(dst, "dst");
    hg_status s = check_range(b, "hg_buffer_read", offset, count);
    if (s || !count) return s;
    size_t es = hg_dtype_size(b->dtype);
    return b->ex->vt->mem_read(b->ex->state, b->mem, offset * es, dst, count * es);
}

hg_status hg_buffer_fill(hg_buffer h, double value) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_fill");
    if (!b) return HG_ERR_INVALID_HANDLE;
    if (!b->count) return HG_OK;
    size_t es = hg_dtype_size(b->dtype);
    unsigned char elem[8];
    hg_convert_from_double(b->dtype, value, elem);
    const hg_backend_vtable* vt = b->ex->vt;
    if (vt->mem_fill) return vt->mem_fill(b->ex->state, b->mem, b->count, elem, es);
    // No fill primitive: write a repeated pattern in chunks.
    unsigned char chunk[4096];
    size_t per = sizeof chunk / es;
    for (size_t i = 0; i < per; i++) memcpy(chunk + i * es, elem, es);
    for (size_t done = 0; done < b->count;) {
        size_t n = b->count - done < per ? b->count - done : per;
        hg_status s = vt->mem_write(b->ex->state, b->mem, done * es, chunk, n * es);
        if (s) return s;
        done += n;
    }
    return HG_OK;
}

hg_status hg_buffer_copy(hg_buffer dsth, size_t dst_offset, hg_buffer srch, size_t src_offset,
                         size_t count) {
    hg_buffer_obj* d = resolve(dsth, "hg_buffer_copy (dst)");
    if (!d) return HG_ERR_INVALID_HANDLE;
    hg_buffer_obj* s = resolve(srch, "hg_buffer_copy (src)");
    if (!s) return HG_ERR_INVALID_HANDLE;
    if (d->ex != s->ex)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_buffer_copy: dst and src belong to different executors (copy through "
                        "host memory with hg_buffer_read + hg_buffer_write)");
    if (d->dtype != s->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "hg_buffer_copy: dst is %s but src is %s",
                        hg_dtype_name(d->dtype), hg_dtype_name(s->dtype));
    hg_status st = check_range(d, "hg_buffer_copy (dst)", dst_offset, count);
    if (st) return st;
    if ((st = check_range(s, "hg_buffer_copy (src)", src_offset, count))) return st;
    if (!count) return HG_OK;
    size_t es = hg_dtype_size(d->dtype);
    unsigned char* dp = (unsigned char*)d->mem + dst_offset * es;
    const unsigned char* sp = (const unsigned char*)s->mem + src_offset * es;
    size_t n = count * es;
    if (dp == sp) return HG_OK;
    int overlap = d->mem == s->mem && (dp < sp ? sp - dp : dp - sp) < (ptrdiff_t)n;
    if (overlap) {
        // Backends copy like memcpy; overlapping ranges of one buffer need memmove.
        if (!d->ex->vt->host_visible)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "hg_buffer_copy: the source and destination ranges overlap within one "
                            "buffer, which the '%s' backend cannot copy",
                            hg_backend_name(d->ex->kind));
        memmove(dp, sp, n);
        return HG_OK;
    }
    return d->ex->vt->mem_copy(d->ex->state, dp, sp, n);
}

hg_status hg_buffer_map(hg_buffer h, void** out) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_map");
    if (!b) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    if (!b->ex->vt->host_visible)
        return hg_error(HG_ERR_UNSUPPORTED,
                        "hg_buffer_map: memory of the '%s' backend is not host-visible; use "
                        "hg_buffer_read / hg_buffer_write",
                        hg_backend_name(b->ex->kind));
    *out = b->mem;  // NULL for a zero-size buffer: there is nothing to point at
    return HG_OK;
}

hg_status hg_buffer_count(hg_buffer h, size_t* out) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_count");
    if (!b) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = b->count;
    return HG_OK;
}

hg_status hg_buffer_dtype(hg_buffer h, hg_dtype* out) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_dtype");
    if (!b) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = b->dtype;
    return HG_OK;
}

hg_status hg_buffer_nbytes(hg_buffer h, size_t* out) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_nbytes");
    if (!b) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = b->nbytes;
    return HG_OK;
}

hg_status hg_buffer_executor(hg_buffer h, hg_executor* out) {
    hg_buffer_obj* b = resolve(h, "hg_buffer_executor");
    if (!b) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    out->handle = b->ex->handle;
    return HG_OK;
}
