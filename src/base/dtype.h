// Internal: dtype facts.
#ifndef HG_CORE_DTYPE_H
#define HG_CORE_DTYPE_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "hologram.h"

static inline bool hg_dtype_valid(int t) { return t >= 0 && t < HG_DTYPE_COUNT; }
static inline bool hg_dtype_is_float(int t) {
    return t == HG_DTYPE_F16 || t == HG_DTYPE_BF16 || t == HG_DTYPE_F32 || t == HG_DTYPE_F64;
}
static inline bool hg_dtype_is_signed_int(int t) {
    return t == HG_DTYPE_I8 || t == HG_DTYPE_I16 || t == HG_DTYPE_I32 || t == HG_DTYPE_I64;
}
static inline bool hg_dtype_is_unsigned_int(int t) {
    return t == HG_DTYPE_U8 || t == HG_DTYPE_U16 || t == HG_DTYPE_U32 || t == HG_DTYPE_U64;
}
static inline bool hg_dtype_is_int(int t) { return hg_dtype_is_signed_int(t) || hg_dtype_is_unsigned_int(t); }
static inline unsigned hg_dtype_bits(int t) { return (unsigned)hg_dtype_size((hg_dtype)t) * 8u; }
// The raw bits of the element of dtype t at p, zero-extended (a bool reads as 0 or 1). Loads of
// the element's own width: a memcpy into a wider variable stalls store forwarding.
static inline uint64_t hg_dtype_load_bits(int t, const void* p) {
    switch (t) {
    case HG_DTYPE_BOOL: return *(const uint8_t*)p != 0;
    case HG_DTYPE_I8: case HG_DTYPE_U8: return *(const uint8_t*)p;
    case HG_DTYPE_I16: case HG_DTYPE_U16: case HG_DTYPE_F16: case HG_DTYPE_BF16: {
        uint16_t v; memcpy(&v, p, 2); return v;
    }
    case HG_DTYPE_I32: case HG_DTYPE_U32: case HG_DTYPE_F32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}
// numpy result_type (+ torch's bf16 rule), dtype_promote.c; hg_result_type checks and calls it.
hg_dtype hg_dtype_promote(hg_dtype a, hg_dtype b);
// The float numpy pairs with an integer: bool/8-bit -> f16, 16-bit -> f32, wider -> f64.
hg_dtype hg_dtype_float_of_int(hg_dtype t);
// Bit set of dtypes (1u << dtype) used by the opcode table.
#define HG_TS(t) (1u << (t))
#define HG_TS_BOOL HG_TS(HG_DTYPE_BOOL)
#define HG_TS_SINT (HG_TS(HG_DTYPE_I8) | HG_TS(HG_DTYPE_I16) | HG_TS(HG_DTYPE_I32) | HG_TS(HG_DTYPE_I64))
#define HG_TS_UINT (HG_TS(HG_DTYPE_U8) | HG_TS(HG_DTYPE_U16) | HG_TS(HG_DTYPE_U32) | HG_TS(HG_DTYPE_U64))
#define HG_TS_INT (HG_TS_SINT | HG_TS_UINT)
#define HG_TS_FLOAT (HG_TS(HG_DTYPE_F16) | HG_TS(HG_DTYPE_BF16) | HG_TS(HG_DTYPE_F32) | HG_TS(HG_DTYPE_F64))
#define HG_TS_NUM (HG_TS_INT | HG_TS_FLOAT)
#define HG_TS_ALL (HG_TS_NUM | HG_TS_BOOL)
#define HG_TS_ATOMIC (HG_TS(HG_DTYPE_I32) | HG_TS(HG_DTYPE_U32) | HG_TS(HG_DTYPE_I64) | HG_TS(HG_DTYPE_U64) | HG_TS(HG_DTYPE_F32) | HG_TS(HG_DTYPE_F64))

#endif
