// Lane-array kernels for cvt (docs/isa.md §6) and for converting between memory elements and
// register lanes (ld/st). Conversions that round twice through f32 would be wrong for
// f64 -> f16/bf16 and for 32/64-bit ints -> bf16, so those go through round-to-odd f32 first
// (round-to-odd to 24 bits followed by a rounding to 8 or 11 bits equals one direct rounding).
#include "backends/cpu/simd/simd_common.h"

// double -> float rounded to odd: truncate toward zero, then set the last bit if inexact.
static inline float d_rto_f32(double d) {
    float t = (float)d;
    uint32_t u = hg_f2u(t);
    int inexact = (double)t != d && d == d;
    u -= (inexact && fabs((double)t) > fabs(d)) ? 1u : 0u;
    u |= inexact ? 1u : 0u;
    return hg_u2f(u);
}
// |integer| -> float rounded to odd (exact below 2^24).
static inline float u64_rto_f32(uint64_t m) {
    if (m < (1u << 24)) return (float)m;
    int s = (64 - __builtin_clzll(m)) - 24;
    uint64_t q = (m >> s) | ((m & ((1ull << s) - 1)) != 0 ? 1u : 0u);
    return ldexpf((float)q, s);
}
static inline float i64_rto_f32(int64_t v) {
    float m = u64_rto_f32(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
    return v < 0 ? -m : m;
}

// Saturating truncation float -> int (NaN -> 0). The value is made representable before the C
// cast so no lane hits an undefined conversion; the selects then put in MIN/MAX.
#define SAT(tag, DT, HI, LO, MAXV, MINV)                                                  \
    static inline DT sat_##tag##_f(float x) {                                             \
        DT r = (DT)((x >= (float)(HI) || x <= (float)(LO) || x != x) ? 0.0f : x);          \
        r = x >= (float)(HI) ? (DT)(MAXV) : r;                                             \
        return x <= (float)(LO) ? (DT)(MINV) : r;                                          \
    }                                                                                      \
    static inline DT sat_##tag##_d(double x) {                                            \
        DT r = (DT)((x >= (double)(HI) || x <= (double)(LO) || x != x) ? 0.0 : x);         \
        r = x >= (double)(HI) ? (DT)(MAXV) : r;                                            \
        return x <= (double)(LO) ? (DT)(MINV) : r;                                         \
    }
SAT(i8, int8_t, 128.0, -128.0, INT8_MAX, INT8_MIN)
SAT(i16, int16_t, 32768.0, -32768.0, INT16_MAX, INT16_MIN)
SAT(i32, int32_t, 2147483648.0, -2147483648.0, INT32_MAX, INT32_MIN)
SAT(i64, int64_t, 9223372036854775808.0, -9223372036854775808.0, INT64_MAX, INT64_MIN)
SAT(u8, uint8_t, 256.0, -1.0, UINT8_MAX, 0)
SAT(u16, uint16_t, 65536.0, -1.0, UINT16_MAX, 0)
SAT(u32, uint32_t, 4294967296.0, -1.0, UINT32_MAX, 0)
SAT(u64, uint64_t, 18446744073709551616.0, -1.0, UINT64_MAX, 0)

// Conversion expressions by (destination kind, source kind). Source kinds: B bool, SI 8/16-bit
// int, BI 32/64-bit signed int, BU 32/64-bit unsigned int, H f16, BH bf16, F f32, D f64
// (H, BH and F are floats in registers).
#define CV_BOOL(x, dtag, DT, SK) ((uint8_t)((x) != 0))
#define CV_INT_B(x, dtag, DT) ((DT)(x))
#define CV_INT_SI(x, dtag, DT) ((DT)(x))
#define CV_INT_BI(x, dtag, DT) ((DT)(x))
#define CV_INT_BU(x, dtag, DT) ((DT)(x))
#define CV_INT_H(x, dtag, DT) sat_##dtag##_f(x)
#define CV_INT_BH(x, dtag, DT) sat_##dtag##_f(x)
#define CV_INT_F(x, dtag, DT) sat_##dtag##_f(x)
#define CV_INT_D(x, dtag, DT) sat_##dtag##_d(x)
#define CV_F32_(x) ((float)(x))
#define CV_F64_(x) ((double)(x))
// Integers -> f16: every int that f32 rounds is >= 2^24, far above the f16 range, so going
// through f32 rounds once where it matters.
#define CV_F16_B(x) ((float)(x))
#define CV_F16_SI(x) hg_v_round_f16((float)(x))
#define CV_F16_BI(x) hg_v_round_f16((float)(x))
#define CV_F16_BU(x) hg_v_round_f16((float)(x))
#define CV_F16_H(x) (x)
#define CV_F16_BH(x) hg_v_round_f16(x)
#define CV_F16_F(x) hg_v_round_f16(x)
#define CV_F16_D(x) hg_v_round_f16(d_rto_f32(x))
#define CV_BF16_B(x) ((float)(x))
#define CV_BF16_SI(x) hg_v_round_bf16((float)(x))
#define CV_BF16_BI(x) hg_v_round_bf16(i64_rto_f32((int64_t)(x)))
#define CV_BF16_BU(x) hg_v_round_bf16(u64_rto_f32((uint64_t)(x)))
#define CV_BF16_H(x) hg_v_round_bf16(x)
#define CV_BF16_BH(x) (x)
#define CV_BF16_F(x) hg_v_round_bf16(x)
#define CV_BF16_D(x) hg_v_round_bf16(d_rto_f32(x))

#define CVT_FN(dtag, DT, DK, stag, ST, SK)                                                 \
    static void cvt_##dtag##_##stag(void* dv, const void* av, const void* bv, const void* cv, \
                                    size_t n) {                                            \
        DT* d = dv;                                                                        \
        const ST* a = av;                                                                  \
        (void)bv; (void)cv;                                                                \
        HG_IVDEP for (size_t i = 0; i < n; i++) { ST x = a[i]; d[i] = DK(x, dtag, DT, SK); } \
    }
// Destination kinds as macros taking (x, dtag, DT, SK).
#define DK_BOOL(x, dtag, DT, SK) CV_BOOL(x, dtag, DT, SK)
#define DK_INT(x, dtag, DT, SK) HG_CAT(CV_INT_, SK)(x, dtag, DT)
#define DK_F32(x, dtag, DT, SK) CV_F32_(x)
#define DK_F64(x, dtag, DT, SK) CV_F64_(x)
#define DK_F16(x, dtag, DT, SK) HG_CAT(CV_F16_, SK)(x)
#define DK_BF16(x, dtag, DT, SK) HG_CAT(CV_BF16_, SK)(x)

#define FOR_SRC(M, dtag, DT, DK)                                                           \
    M(dtag, DT, DK, b, uint8_t, B) M(dtag, DT, DK, i8, int8_t, SI)                         \
    M(dtag, DT, DK, i16, int16_t, SI) M(dtag, DT, DK, i32, int32_t, BI)                    \
    M(dtag, DT, DK, i64, int64_t, BI) M(dtag, DT, DK, u8, uint8_t, SI)                     \
    M(dtag, DT, DK, u16, uint16_t, SI) M(dtag, DT, DK, u32, uint32_t, BU)                  \
    M(dtag, DT, DK, u64, uint64_t, BU) M(dtag, DT, DK, f16, float, H)                      \
    M(dtag, DT, DK, bf16, float, BH) M(dtag, DT, DK, f32, float, F)                        \
    M(dtag, DT, DK, f64, double, D)
#define FOR_DST(M)                                                                         \
    FOR_SRC(M, b, uint8_t, DK_BOOL) FOR_SRC(M, i8, int8_t, DK_INT)                         \
    FOR_SRC(M, i16, int16_t, DK_INT) FOR_SRC(M, i32, int32_t, DK_INT)                      \
    FOR_SRC(M, i64, int64_t, DK_INT) FOR_SRC(M, u8, uint8_t, DK_INT)                       \
    FOR_SRC(M, u16, uint16_t, DK_INT) FOR_SRC(M, u32, uint32_t, DK_INT)                    \
    FOR_SRC(M, u64, uint64_t, DK_INT) FOR_SRC(M, f16, float, DK_F16)                       \
    FOR_SRC(M, bf16, float, DK_BF16) FOR_SRC(M, f32, float, DK_F32)                        \
    FOR_SRC(M, f64, double, DK_F64)
FOR_DST(CVT_FN)

// ---- memory <-> registers -----------------------------------------------------------------
static void ld_copy1(void* d, const void* s, size_t n) { memcpy(d, s, n); }
static void ld_copy2(void* d, const void* s, size_t n) { memcpy(d, s, 2 * n); }
static void ld_copy4(void* d, const void* s, size_t n) { memcpy(d, s, 4 * n); }
static void ld_copy8(void* d, const void* s, size_t n) { memcpy(d, s, 8 * n); }
// Any non-zero byte loads as true.
static void ld_bool(void* dv, const void* sv, size_t n) {
    uint8_t* d = dv;
    const uint8_t* s = sv;
    for (size_t i = 0; i < n; i++) d[i] = s[i] != 0;
}
static void ld_f16(void* dv, const void* sv, size_t n) {
    float* d = dv;
    const uint16_t* s = sv;
    for (size_t i = 0; i < n; i++) d[i] = hg_v_f16_to_f32(s[i]);
}
static void ld_bf16(void* dv, const void* sv, size_t n) {
    float* d = dv;
    const uint16_t* s = sv;
    for (size_t i = 0; i < n; i++) d[i] = hg_u2f((uint32_t)s[i] << 16);
}
// Registers hold values already rounded to f16/bf16, so narrowing them is exact.
static void st_f16(void* dv, const void* sv, size_t n) {
    uint16_t* d = dv;
    const float* s = sv;
    for (size_t i = 0; i < n; i++) d[i] = (uint16_t)hg_v_f32_to_f16(s[i]);
}
static void st_bf16(void* dv, const void* sv, size_t n) {
    uint16_t* d = dv;
    const float* s = sv;
    for (size_t i = 0; i < n; i++) d[i] = (uint16_t)(hg_f2u(s[i]) >> 16);
}

#define SET_CVT(dtag, DT, DK, stag, ST, SK) k->cvt[dt_##dtag][dt_##stag] = cvt_##dtag##_##stag;
enum {
    dt_b = HG_DTYPE_BOOL, dt_i8 = HG_DTYPE_I8, dt_i16 = HG_DTYPE_I16, dt_i32 = HG_DTYPE_I32,
    dt_i64 = HG_DTYPE_I64, dt_u8 = HG_DTYPE_U8, dt_u16 = HG_DTYPE_U16, dt_u32 = HG_DTYPE_U32,
    dt_u64 = HG_DTYPE_U64, dt_f16 = HG_DTYPE_F16, dt_bf16 = HG_DTYPE_BF16, dt_f32 = HG_DTYPE_F32,
    dt_f64 = HG_DTYPE_F64
};

void HG_SIMD_NAME(hg_cpu_fill_cvt_)(hg_cpu_kernels* k) {
    FOR_DST(SET_CVT)
    static const hg_cpu_convfn copies[4] = {ld_copy1, ld_copy2, ld_copy4, ld_copy8};
    for (int t = 0; t < HG_DTYPE_COUNT; t++) {
        k->load[t] = copies[hg_cpu_storage_log2(t)];
        k->store[t] = copies[hg_cpu_storage_log2(t)];
    }
    // bool registers hold 0/1, so a store is a plain byte copy.
    k->load[HG_DTYPE_BOOL] = ld_bool;
    k->load[HG_DTYPE_F16] = ld_f16;
    k->load[HG_DTYPE_BF16] = ld_bf16;
    k->store[HG_DTYPE_F16] = st_f16;
    k->store[HG_DTYPE_BF16] = st_bf16;
}
