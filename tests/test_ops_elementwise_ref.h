// Shared by the elementwise op tests: element access, an independent rounding to every float
// format, numpy's promotion table typed out, and the double / long double reference of every
// unary and binary op. Header-only (static functions) so each test stays one executable.
#ifndef TEST_OPS_ELEMENTWISE_REF_H
#define TEST_OPS_ELEMENTWISE_REF_H
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/hg_test.h"
#include "hologram.h"

#define D_BOOL HG_DTYPE_BOOL
#define D_I8 HG_DTYPE_I8
#define D_I16 HG_DTYPE_I16
#define D_I32 HG_DTYPE_I32
#define D_I64 HG_DTYPE_I64
#define D_U8 HG_DTYPE_U8
#define D_U16 HG_DTYPE_U16
#define D_U32 HG_DTYPE_U32
#define D_U64 HG_DTYPE_U64
#define D_F16 HG_DTYPE_F16
#define D_BF16 HG_DTYPE_BF16
#define D_F32 HG_DTYPE_F32
#define D_F64 HG_DTYPE_F64
#define NDT HG_DTYPE_COUNT

// numpy 2 result_type (bf16 rows: torch's rule), generated with numpy/torch and typed in here.
static const hg_dtype promo[NDT][NDT] = {
/*bool*/ {D_BOOL, D_I8, D_I16, D_I32, D_I64, D_U8, D_U16, D_U32, D_U64, D_F16, D_BF16, D_F32, D_F64},
/*  i8*/ {D_I8, D_I8, D_I16, D_I32, D_I64, D_I16, D_I32, D_I64, D_F64, D_F16, D_BF16, D_F32, D_F64},
/* i16*/ {D_I16, D_I16, D_I16, D_I32, D_I64, D_I16, D_I32, D_I64, D_F64, D_F32, D_BF16, D_F32, D_F64},
/* i32*/ {D_I32, D_I32, D_I32, D_I32, D_I64, D_I32, D_I32, D_I64, D_F64, D_F64, D_BF16, D_F64, D_F64},
/* i64*/ {D_I64, D_I64, D_I64, D_I64, D_I64, D_I64, D_I64, D_I64, D_F64, D_F64, D_BF16, D_F64, D_F64},
/*  u8*/ {D_U8, D_I16, D_I16, D_I32, D_I64, D_U8, D_U16, D_U32, D_U64, D_F16, D_BF16, D_F32, D_F64},
/* u16*/ {D_U16, D_I32, D_I32, D_I32, D_I64, D_U16, D_U16, D_U32, D_U64, D_F32, D_BF16, D_F32, D_F64},
/* u32*/ {D_U32, D_I64, D_I64, D_I64, D_I64, D_U32, D_U32, D_U32, D_U64, D_F64, D_BF16, D_F64, D_F64},
/* u64*/ {D_U64, D_F64, D_F64, D_F64, D_F64, D_U64, D_U64, D_U64, D_U64, D_F64, D_BF16, D_F64, D_F64},
/* f16*/ {D_F16, D_F16, D_F32, D_F64, D_F64, D_F16, D_F32, D_F64, D_F64, D_F16, D_F32, D_F32, D_F64},
/*bf16*/ {D_BF16, D_BF16, D_BF16, D_BF16, D_BF16, D_BF16, D_BF16, D_BF16, D_BF16, D_F32, D_BF16, D_F32, D_F64},
/* f32*/ {D_F32, D_F32, D_F32, D_F64, D_F64, D_F32, D_F32, D_F64, D_F64, D_F32, D_F32, D_F32, D_F64},
/* f64*/ {D_F64, D_F64, D_F64, D_F64, D_F64, D_F64, D_F64, D_F64, D_F64, D_F64, D_F64, D_F64, D_F64},
};

static inline int is_float_dt(hg_dtype t) { return t >= D_F16; }
static inline int is_signed_dt(hg_dtype t) { return t >= D_I8 && t <= D_I64; }
static inline int is_unsigned_dt(hg_dtype t) { return t >= D_U8 && t <= D_U64; }
static inline int is_int_dt(hg_dtype t) { return is_signed_dt(t) || is_unsigned_dt(t); }
static inline unsigned width_of(hg_dtype t) { return (unsigned)hg_dtype_size(t) * 8u; }

// ---- rounding a double to a float format (round to nearest even), independent of the library
static inline double round_fmt(double x, int mant, int emin, double maxv) {
    if (!isfinite(x) || x == 0) return x;
    int e;
    frexp(x, &e);
    int lead = e - 1 < emin ? emin : e - 1;
    double q = ldexp(1.0, lead - (mant - 1));
    double r = nearbyint(x / q) * q;
    if (fabs(r) > maxv) return copysign(INFINITY, x);
    if (r == 0) return copysign(0.0, x);
    return r;
}
static inline double round_to(hg_dtype t, double x) {
    switch (t) {
    case D_F16: return round_fmt(x, 11, -14, 65504.0);
    case D_BF16: return round_fmt(x, 8, -126, 0x1.fep127);
    case D_F32: return (double)(float)x;
    default: return x;
    }
}

// ---- elements as bytes
static inline double ld_f(hg_dtype t, const void* p) {
    switch (t) {
    case D_F16: { uint16_t h; memcpy(&h, p, 2); return hg_f16_to_f32(h); }
    case D_BF16: { uint16_t h; memcpy(&h, p, 2); uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
    case D_F32: { float f; memcpy(&f, p, 4); return f; }
    case D_F64: { double d; memcpy(&d, p, 8); return d; }
    default: return 0;
    }
}
static inline int64_t ld_i(hg_dtype t, const void* p) {
    switch (t) {
    case D_BOOL: return *(const uint8_t*)p != 0;
    case D_I8: return *(const int8_t*)p;
    case D_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case D_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case D_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    case D_U8: return *(const uint8_t*)p;
    case D_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case D_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case D_U64: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
    default: return 0;
    }
}
// Value of an element as a double (u64 above 2^63 read unsigned).
static inline double ld_any(hg_dtype t, const void* p) {
    if (is_float_dt(t)) return ld_f(t, p);
    if (t == D_U64) return (double)(uint64_t)ld_i(t, p);
    return (double)ld_i(t, p);
}
// f16/bf16/f32/f64 bits of an (already rounded) double.
static inline void st_f(hg_dtype t, void* p, double v) {
    switch (t) {
    case D_F16: { uint16_t h = hg_f32_to_f16((float)v); memcpy(p, &h, 2); break; }
    case D_BF16: { float f = (float)v; uint32_t u; memcpy(&u, &f, 4);
                   uint16_t h = (uint16_t)(u >> 16);
                   if (isnan(v)) h = 0x7fc0;
                   memcpy(p, &h, 2); break; }
    case D_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}
// Integer bits truncated to the width (two's complement).
static inline void st_i(hg_dtype t, void* p, uint64_t v) {
    if (t == D_BOOL) { *(uint8_t*)p = v != 0; return; }
    memcpy(p, &v, hg_dtype_size(t));   // little endian
}
static inline int64_t wrap_s(hg_dtype t, uint64_t v) {   // sign-extend the low width bits
    unsigned w = width_of(t);
    if (w == 64) return (int64_t)v;
    uint64_t m = (UINT64_C(1) << w) - 1;
    v &= m;
    if (is_signed_dt(t) && (v >> (w - 1))) v |= ~m;
    return (int64_t)v;
}

// ---- cvt semantics (docs/isa.md §6) into dtype t from a double value (float sources)
static inline void cvt_from_double(hg_dtype t, double v, void* p) {
    if (is_float_dt(t)) { st_f(t, p, round_to(t, v)); return; }
    if (t == D_BOOL) { *(uint8_t*)p = v != 0; return; }
    if (isnan(v)) { st_i(t, p, 0); return; }
    double tv = trunc(v);
    unsigned w = width_of(t);
    if (is_signed_dt(t)) {
        double lo = -ldexp(1.0, (int)w - 1), hi = ldexp(1.0, (int)w - 1);
        int64_t r = tv <= lo ? (int64_t)lo : tv >= hi ? (int64_t)(hi - 1 > 9.2e18 ? INT64_MAX : (int64_t)hi - 1) : (int64_t)tv;
        if (w == 64 && tv >= hi) r = INT64_MAX;
        st_i(t, p, (uint64_t)r);
    } else {
        double hi = ldexp(1.0, (int)w);
        uint64_t r = tv <= 0 ? 0 : tv >= hi ? (w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1) : (uint64_t)tv;
        st_i(t, p, r);
    }
}
// Element of dtype `from` at p converted to dtype `to` (cvt semantics) into q.
static inline void cvt_elem(hg_dtype to, hg_dtype from, const void* p, void* q) {
    if (is_float_dt(from)) { cvt_from_double(to, ld_f(from, p), q); return; }
    int64_t i = ld_i(from, p);
    if (is_float_dt(to)) {
        // The exact integer rounded once (long double holds every 64-bit integer).
        long double x = from == D_U64 ? (long double)(uint64_t)i : (long double)i;
        if (to == D_F32) st_f(to, q, (double)(float)x);
        else st_f(to, q, round_to(to, (double)x));   // f16/bf16: |x| < 2^53 in the tests
        return;
    }
    st_i(to, q, (uint64_t)i);
}

// ---- ULP distance between two values of a float dtype (NaN equal NaN; below the smallest
// normal, distances are measured in the subnormal spacing).
static inline double ulp_of(hg_dtype t, double x) {
    int mant = t == D_F16 ? 11 : t == D_BF16 ? 8 : t == D_F32 ? 24 : 53;
    int emin = t == D_F16 ? -14 : t == D_BF16 || t == D_F32 ? -126 : -1022;
    if (!isfinite(x)) return INFINITY;
    int e;
    frexp(x, &e);
    int lead = x == 0 || e - 1 < emin ? emin : e - 1;
    return ldexp(1.0, lead - (mant - 1));
}
static inline double ulp_diff(hg_dtype t, double got, double want) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got) ? 0 : INFINITY;
    if (isinf(want) || isinf(got)) return got == want ? 0 : INFINITY;
    if (got == want) return 0;
    return fabs(got - want) / ulp_of(t, want);
}

// ---- test buffers (the layout and API tests of the elementwise ops) ----
// A buffer of n elements of dtype t on ex filled with v(i) (as doubles, cvt semantics).
static inline hg_buffer ew_make_buf(hg_executor ex, hg_dtype t, int64_t n, double (*v)(int64_t)) {
    hg_buffer b = {0};
    if (hg_buffer_create(ex, t, (size_t)n, &b) || !v) return b;
    size_t es = hg_dtype_size(t);
    unsigned char* host = malloc((size_t)n * es + 8);
    for (int64_t i = 0; i < n; i++) cvt_from_double(t, v(i), host + (size_t)i * es);
    if (n) hg_buffer_write(b, 0, host, (size_t)n);
    free(host);
    return b;
}
// Exactly representable values in every float dtype.
static inline double val_a(int64_t i) { return (double)((i * 37) % 101) * 0.25 - 12.0; }
static inline double val_b(int64_t i) { return (double)((i * 53) % 97) * 0.5 - 20.0; }
static inline double val_small(int64_t i) { return (double)((i * 7) % 19) - 9.0; }

// A host copy of b's elements (the caller frees it); *n (may be NULL) receives their count.
static inline unsigned char* read_all(hg_buffer b, size_t* n) {
    size_t cnt = 0;
    hg_buffer_count(b, &cnt);
    hg_dtype t;
    hg_buffer_dtype(b, &t);
    unsigned char* h = malloc(cnt * hg_dtype_size(t) + 8);
    if (cnt) hg_buffer_read(b, 0, h, cnt);
    if (n) *n = cnt;
    return h;
}

#endif
