// Lane-array kernels for mov, sel, integer/float arithmetic, bitwise ops, shifts and cmp, with
// the exact semantics of docs/isa.md §5 (wrapping ints, defined division by zero and MIN/-1,
// shifts >= width, NaN-propagating min/max with -0 < +0). One tight loop per (op, type); the
// build compiles this file once portable and once with AVX2+FMA.
#include "backends/cpu/simd/simd_common.h"

// These loops do one operation per element and, in elementwise kernels, stream from and to
// DRAM: on Zen 4 a stream of 512-bit loads and stores moves data ~15% slower than 256-bit ones
// (docs/performance.md), while 512-bit vectors buy nothing
// for one operation. So the AVX-512 build of this file keeps 256-bit vectors (AVX-512VL still
// gives it masked tails and the extra registers); the math kernels stay 512-bit. CMakeLists.txt
// compiles this file with -mprefer-vector-width=256 (a flag gcc and clang both know).

#define KSIG(name) static void name(void* dv, const void* av, const void* bv, const void* cv, size_t n)

// ---- mov / sel by storage size ------------------------------------------------------------
#define MOVSEL(bits)                                                           \
    KSIG(mov_##bits) {                                                         \
        (void)bv; (void)cv;                                                    \
        if (dv != av) memcpy(dv, av, n * (bits / 8));                          \
    }                                                                          \
    KSIG(sel_##bits) {                                                         \
        uint##bits##_t* d = dv;                                                \
        const uint8_t* p = av;                                                 \
        const uint##bits##_t* a = bv;                                          \
        const uint##bits##_t* b = cv;                                          \
        HG_IVDEP for (size_t i = 0; i < n; i++) d[i] = p[i] ? a[i] : b[i];     \
    }
MOVSEL(8)
MOVSEL(16)
MOVSEL(32)
MOVSEL(64)

// ---- generic elementwise loop shapes --------------------------------------------------------
#define K1(name, T, expr)                                                      \
    KSIG(name) {                                                               \
        T* d = dv;                                                             \
        const T* a = av;                                                       \
        (void)bv; (void)cv;                                                    \
        HG_IVDEP for (size_t i = 0; i < n; i++) { T x = a[i]; d[i] = (expr); } \
    }
#define K2(name, T, expr)                                                      \
    KSIG(name) {                                                               \
        T* d = dv;                                                             \
        const T* a = av;                                                       \
        const T* b = bv;                                                       \
        (void)cv;                                                              \
        HG_IVDEP for (size_t i = 0; i < n; i++) {                              \
            T x = a[i], y = b[i];                                              \
            d[i] = (expr);                                                     \
        }                                                                      \
    }
// K2 plus a variant for a constant second operand (an immediate or scalar parameter, equal in
// every lane): y is read once, so the loop streams one array fewer.
#define K2K(name, T, expr)                                                     \
    K2(name, T, expr)                                                          \
    KSIG(name##_kb) {                                                          \
        T* d = dv;                                                             \
        const T* a = av;                                                       \
        const T y = *(const T*)bv;                                             \
        (void)cv;                                                              \
        HG_IVDEP for (size_t i = 0; i < n; i++) {                              \
            T x = a[i];                                                        \
            d[i] = (expr);                                                     \
        }                                                                      \
    }
#define K3(name, T, expr)                                                      \
    KSIG(name) {                                                               \
        T* d = dv;                                                             \
        const T* a = av;                                                       \
        const T* b = bv;                                                       \
        const T* c = cv;                                                       \
        HG_IVDEP for (size_t i = 0; i < n; i++) {                              \
            T x = a[i], y = b[i], z = c[i];                                    \
            d[i] = (expr);                                                     \
        }                                                                      \
    }
#define KCMP(name, T, OPR)                                                     \
    KSIG(name) {                                                               \
        uint8_t* d = dv;                                                       \
        const T* a = av;                                                       \
        const T* b = bv;                                                       \
        (void)cv;                                                              \
        HG_IVDEP for (size_t i = 0; i < n; i++) d[i] = (uint8_t)(a[i] OPR b[i]); \
    }
#define CMPS(tag, T)                                                           \
    KCMP(cmp_eq_##tag, T, ==) KCMP(cmp_ne_##tag, T, !=) KCMP(cmp_lt_##tag, T, <) \
    KCMP(cmp_le_##tag, T, <=) KCMP(cmp_gt_##tag, T, >) KCMP(cmp_ge_##tag, T, >=)

// ---- integers -------------------------------------------------------------------------------
// T the storage type, U the unsigned type of the same width, W the unsigned type arithmetic is
// done in (no promotion to signed int, so overflow wraps instead of being undefined), B the width.
#define INT_COMMON(tag, T, U, W, B)                                                      \
    K2(add_##tag, T, (T)((W)x + (W)y))                                                   \
    K2(sub_##tag, T, (T)((W)x - (W)y))                                                   \
    K2(mul_##tag, T, (T)((W)x * (W)y))                                                   \
    K2(min_##tag, T, x < y ? x : y)                                                      \
    K2(max_##tag, T, x > y ? x : y)                                                      \
    K1(neg_##tag, T, (T)((W)0 - (W)x))                                                   \
    K3(fma_##tag, T, (T)((W)x * (W)y + (W)z))                                            \
    K2(and_##tag, T, (T)(x & y))                                                         \
    K2(or_##tag, T, (T)(x | y))                                                          \
    K2(xor_##tag, T, (T)(x ^ y))                                                         \
    K1(not_##tag, T, (T)~x)                                                              \
    K2(shl_##tag, T, (U)y >= B ? (T)0 : (T)((W)x << ((U)y & (B - 1))))                   \
    CMPS(tag, T)

#define SINT(tag, T, U, W, B, MINV)                                                      \
    INT_COMMON(tag, T, U, W, B)                                                          \
    /* x/0 = -1; MIN/-1 = MIN (= -MIN wrapped). The divisor is made safe first so no */  \
    /* lane ever traps, active or not. */                                                \
    K2(div_##tag, T, y == 0 ? (T)-1 : y == -1 ? (T)((W)0 - (W)x)                         \
                                    : (T)(x / ((y == 0 || y == -1) ? (T)1 : y)))         \
    K2(rem_##tag, T, y == 0 ? x : (T)(x % ((y == 0 || y == -1) ? (T)1 : y)))             \
    K1(abs_##tag, T, x < 0 ? (T)((W)0 - (W)x) : x)                                       \
    /* arithmetic shift; amounts >= width act like width-1 (0 or -1) */                  \
    K2(shr_##tag, T, (T)(x >> ((U)y >= B ? B - 1 : (U)y)))

#define UINT(tag, T, W, B)                                                               \
    INT_COMMON(tag, T, T, W, B)                                                          \
    K2(div_##tag, T, y == 0 ? (T)~(T)0 : (T)(x / (y == 0 ? (T)1 : y)))                   \
    K2(rem_##tag, T, y == 0 ? x : (T)(x % (y == 0 ? (T)1 : y)))                          \
    K1(abs_##tag, T, x)                                                                  \
    K2(shr_##tag, T, y >= B ? (T)0 : (T)(x >> (y & (B - 1))))

SINT(i8, int8_t, uint8_t, uint32_t, 8, INT8_MIN)
SINT(i16, int16_t, uint16_t, uint32_t, 16, INT16_MIN)
SINT(i32, int32_t, uint32_t, uint32_t, 32, INT32_MIN)
SINT(i64, int64_t, uint64_t, uint64_t, 64, INT64_MIN)
UINT(u8, uint8_t, uint32_t, 8)
UINT(u16, uint16_t, uint32_t, 16)
UINT(u32, uint32_t, uint32_t, 32)
UINT(u64, uint64_t, uint64_t, 64)

// bool: 0/1 bytes.
K2(and_b, uint8_t, (uint8_t)(x & y))
K2(or_b, uint8_t, (uint8_t)(x | y))
K2(xor_b, uint8_t, (uint8_t)(x ^ y))
K1(not_b, uint8_t, (uint8_t)(x ^ 1u))
CMPS(b, uint8_t)

// ---- floats ---------------------------------------------------------------------------------
// R rounds an f32 result to the register type (identity for f32/f64). min/max: NaN if either is
// NaN (the first NaN operand is returned), and on equal values the sign bits decide, so
// min(-0, +0) = -0 and max(-0, +0) = +0.
#define R_ID(v) (v)
#define FLOATS(tag, F, UI, TOU, FROMU, R, FMA, FMOD, SIGN)                                  \
    K2K(add_##tag, F, R(x + y))                                                           \
    K2K(sub_##tag, F, R(x - y))                                                           \
    K2K(mul_##tag, F, R(x * y))                                                           \
    K2K(div_##tag, F, R(x / y))                                                           \
    K2(rem_##tag, F, R(FMOD(x, y)))                                                       \
    K3(fma_##tag, F, R(FMA(x, y, z)))                                                     \
    K2K(min_##tag, F, fmin_##tag(x, y))                                                   \
    K2K(max_##tag, F, fmax_##tag(x, y))                                                   \
    K1(abs_##tag, F, FROMU(TOU(x) & ~SIGN))                                               \
    K1(neg_##tag, F, FROMU(TOU(x) ^ SIGN))                                                \
    CMPS(tag, F)

// Written as a chain of selects over the bit patterns so the loops vectorize.
#define MINMAX(tag, F, UI, TOU, FROMU)                                                    \
    static inline F fmin_##tag(F x, F y) {                                                \
        UI a = TOU(x), b = TOU(y);                                                        \
        UI r = x < y ? a : b;                                                             \
        r = x == y ? (a | b) : r;                                                         \
        r = y != y ? b : r;                                                               \
        return FROMU(x != x ? a : r);                                                     \
    }                                                                                     \
    static inline F fmax_##tag(F x, F y) {                                                \
        UI a = TOU(x), b = TOU(y);                                                        \
        UI r = x > y ? a : b;                                                             \
        r = x == y ? (a & b) : r;                                                         \
        r = y != y ? b : r;                                                               \
        return FROMU(x != x ? a : r);                                                     \
    }
MINMAX(f32, float, uint32_t, hg_f2u, hg_u2f)
MINMAX(f64, double, uint64_t, hg_d2u, hg_u2d)
MINMAX(f16, float, uint32_t, hg_f2u, hg_u2f)
MINMAX(bf16, float, uint32_t, hg_f2u, hg_u2f)
#define SIGN32 0x80000000u
#define SIGN64 0x8000000000000000ull
FLOATS(f32, float, uint32_t, hg_f2u, hg_u2f, R_ID, fmaf, fmodf, SIGN32)
FLOATS(f64, double, uint64_t, hg_d2u, hg_u2d, R_ID, fma, fmod, SIGN64)
FLOATS(f16, float, uint32_t, hg_f2u, hg_u2f, hg_v_round_f16, fmaf, fmodf, SIGN32)
FLOATS(bf16, float, uint32_t, hg_f2u, hg_u2f, hg_v_round_bf16, fmaf, fmodf, SIGN32)

// ---- fused f32 pairs (strip-mined runs): d = O2(O1(a, b), c) ---------------------------------
// The intermediate is rounded to f32 like the register it replaces, so results equal the two
// instructions run one after the other; K/V: operand the same in every lane / a lane array.
#define P_ADD(x, y) ((x) + (y))
#define P_SUB(x, y) ((x) - (y))
#define P_MUL(x, y) ((x) * (y))
#define P_MIN(x, y) fmin_f32(x, y)
#define P_MAX(x, y) fmax_f32(x, y)
#define PAIR1(name, O1, O2, BV, CV)                                                       \
    KSIG(name) {                                                                          \
        float* d = dv;                                                                    \
        const float* a = av;                                                              \
        const float* b = bv;                                                              \
        const float* c = cv;                                                              \
        const float b0 = b[0], c0 = c[0];                                                 \
        (void)b0; (void)c0;                                                               \
        HG_IVDEP for (size_t i = 0; i < n; i++) {                                         \
            float t = O1(a[i], BV);                                                       \
            d[i] = O2(t, CV);                                                             \
        }                                                                                 \
    }
#define PAIR(o1, O1, o2, O2)                                                              \
    PAIR1(pair_##o1##_##o2##_vv, O1, O2, b[i], c[i])                                      \
    PAIR1(pair_##o1##_##o2##_kv, O1, O2, b0, c[i])                                        \
    PAIR1(pair_##o1##_##o2##_vk, O1, O2, b[i], c0)                                        \
    PAIR1(pair_##o1##_##o2##_kk, O1, O2, b0, c0)
#define PAIRS_AFTER(o1, O1)                                                               \
    PAIR(o1, O1, add, P_ADD) PAIR(o1, O1, sub, P_SUB) PAIR(o1, O1, mul, P_MUL)             \
    PAIR(o1, O1, min, P_MIN) PAIR(o1, O1, max, P_MAX)
PAIRS_AFTER(add, P_ADD)
PAIRS_AFTER(sub, P_SUB)
PAIRS_AFTER(mul, P_MUL)
PAIRS_AFTER(min, P_MIN)
PAIRS_AFTER(max, P_MAX)

#define SET_PAIR(i1, o1, i2, o2)                                                          \
    k->pair_f32[i1][i2][0] = pair_##o1##_##o2##_vv;                                       \
    k->pair_f32[i1][i2][1] = pair_##o1##_##o2##_kv;                                       \
    k->pair_f32[i1][i2][2] = pair_##o1##_##o2##_vk;                                       \
    k->pair_f32[i1][i2][3] = pair_##o1##_##o2##_kk;
#define SET_PAIRS_AFTER(i1, o1)                                                           \
    SET_PAIR(i1, o1, 0, add) SET_PAIR(i1, o1, 1, sub) SET_PAIR(i1, o1, 2, mul)             \
    SET_PAIR(i1, o1, 3, min) SET_PAIR(i1, o1, 4, max)

// ---- blend ------------------------------------------------------------------------------------
#define BLEND(bits)                                                                       \
    static void blend_##bits(void* dv, const void* tv, const uint8_t* m, size_t n) {      \
        uint##bits##_t* d = dv;                                                           \
        const uint##bits##_t* t = tv;                                                     \
        for (size_t i = 0; i < n; i++) d[i] = m[i] ? t[i] : d[i];                         \
    }
BLEND(8)
BLEND(16)
BLEND(32)
BLEND(64)

#define SET_INT(tag, dt)                                                                  \
    k->op[HG_OP_ADD][dt] = add_##tag; k->op[HG_OP_SUB][dt] = sub_##tag;                   \
    k->op[HG_OP_MUL][dt] = mul_##tag; k->op[HG_OP_DIV][dt] = div_##tag;                   \
    k->op[HG_OP_REM][dt] = rem_##tag; k->op[HG_OP_MIN][dt] = min_##tag;                   \
    k->op[HG_OP_MAX][dt] = max_##tag; k->op[HG_OP_ABS][dt] = abs_##tag;                   \
    k->op[HG_OP_NEG][dt] = neg_##tag; k->op[HG_OP_FMA][dt] = fma_##tag;                   \
    k->op[HG_OP_AND][dt] = and_##tag; k->op[HG_OP_OR][dt] = or_##tag;                     \
    k->op[HG_OP_XOR][dt] = xor_##tag; k->op[HG_OP_NOT][dt] = not_##tag;                   \
    k->op[HG_OP_SHL][dt] = shl_##tag; k->op[HG_OP_SHR][dt] = shr_##tag;                   \
    SET_CMP(tag, dt)
#define SET_CMP(tag, dt)                                                                  \
    k->cmp[HG_CMP_EQ][dt] = cmp_eq_##tag; k->cmp[HG_CMP_NE][dt] = cmp_ne_##tag;           \
    k->cmp[HG_CMP_LT][dt] = cmp_lt_##tag; k->cmp[HG_CMP_LE][dt] = cmp_le_##tag;           \
    k->cmp[HG_CMP_GT][dt] = cmp_gt_##tag; k->cmp[HG_CMP_GE][dt] = cmp_ge_##tag;
#define SET_FLOAT(tag, dt)                                                                \
    k->op[HG_OP_ADD][dt] = add_##tag; k->op[HG_OP_SUB][dt] = sub_##tag;                   \
    k->op[HG_OP_MUL][dt] = mul_##tag; k->op[HG_OP_DIV][dt] = div_##tag;                   \
    k->op[HG_OP_REM][dt] = rem_##tag; k->op[HG_OP_MIN][dt] = min_##tag;                   \
    k->op[HG_OP_MAX][dt] = max_##tag; k->op[HG_OP_ABS][dt] = abs_##tag;                   \
    k->op[HG_OP_NEG][dt] = neg_##tag; k->op[HG_OP_FMA][dt] = fma_##tag;                   \
    k->opk[HG_OP_ADD][dt] = add_##tag##_kb; k->opk[HG_OP_SUB][dt] = sub_##tag##_kb;       \
    k->opk[HG_OP_MUL][dt] = mul_##tag##_kb; k->opk[HG_OP_DIV][dt] = div_##tag##_kb;       \
    k->opk[HG_OP_MIN][dt] = min_##tag##_kb; k->opk[HG_OP_MAX][dt] = max_##tag##_kb;       \
    SET_CMP(tag, dt)

void HG_SIMD_NAME(hg_cpu_fill_arith_)(hg_cpu_kernels* k) {
    static const hg_cpu_kfn movs[4] = {mov_8, mov_16, mov_32, mov_64};
    static const hg_cpu_kfn sels[4] = {sel_8, sel_16, sel_32, sel_64};
    for (int t = 0; t < HG_DTYPE_COUNT; t++) {
        k->op[HG_OP_MOV][t] = movs[hg_cpu_storage_log2(t)];
        k->op[HG_OP_SEL][t] = sels[hg_cpu_storage_log2(t)];
    }
    SET_INT(i8, HG_DTYPE_I8) SET_INT(i16, HG_DTYPE_I16) SET_INT(i32, HG_DTYPE_I32)
    SET_INT(i64, HG_DTYPE_I64) SET_INT(u8, HG_DTYPE_U8) SET_INT(u16, HG_DTYPE_U16)
    SET_INT(u32, HG_DTYPE_U32) SET_INT(u64, HG_DTYPE_U64)
    SET_FLOAT(f32, HG_DTYPE_F32) SET_FLOAT(f64, HG_DTYPE_F64)
    SET_FLOAT(f16, HG_DTYPE_F16) SET_FLOAT(bf16, HG_DTYPE_BF16)
    k->op[HG_OP_AND][HG_DTYPE_BOOL] = and_b;
    k->op[HG_OP_OR][HG_DTYPE_BOOL] = or_b;
    k->op[HG_OP_XOR][HG_DTYPE_BOOL] = xor_b;
    k->op[HG_OP_NOT][HG_DTYPE_BOOL] = not_b;
    SET_CMP(b, HG_DTYPE_BOOL)
    k->blend[0] = blend_8;
    k->blend[1] = blend_16;
    k->blend[2] = blend_32;
    k->blend[3] = blend_64;
    SET_PAIRS_AFTER(0, add) SET_PAIRS_AFTER(1, sub) SET_PAIRS_AFTER(2, mul)
    SET_PAIRS_AFTER(3, min) SET_PAIRS_AFTER(4, max)
}
