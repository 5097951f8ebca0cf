// Lane-array kernels for the float functions of docs/isa.md §5: sqrt rsqrt exp exp2 log log2 sin
// cos tanh sigmoid erf floor ceil round trunc. f16/bf16 compute in f32 and round once to the
// register type. f32 (and so f16/bf16) exp exp2 log log2 tanh sigmoid erf and f64 sigmoid use
// the vectorizable implementations of vmath.h; sin and cos, and the other f64 transcendentals,
// call libm. sqrt and the roundings vectorize.
#include "backends/cpu/simd/simd_common.h"
#include "base/vmath.h"

#define KSIG(name) static void name(void* dv, const void* av, const void* bv, const void* cv, size_t n)
#define K1(name, T, expr)                                                      \
    KSIG(name) {                                                               \
        T* d = dv;                                                             \
        const T* a = av;                                                       \
        (void)bv; (void)cv;                                                    \
        HG_IVDEP for (size_t i = 0; i < n; i++) { T x = a[i]; d[i] = (expr); } \
    }

// 1/sqrt(x) for f32 is computed in double so the only error is the final rounding (and
// rsqrt(+-0) = +-inf, rsqrt(x<0) = NaN, rsqrt(inf) = 0 as 1/sqrt gives).
static inline float rsqrtf_(float x) { return (float)(1.0 / sqrt((double)x)); }
static inline double rsqrt_(double x) { return 1.0 / sqrt(x); }

// F the storage type, R the rounding to the register type, S the libm suffix (f for float).
#define MATHS(tag, F, R, SQRT, RSQRT, EXP, EXP2, LOG, LOG2, SIN, COS, TANH, SIGM, ERF,    \
              FLOOR, CEIL, RINT, TRUNC)                                                \
    K1(sqrt_##tag, F, R(SQRT(x)))                                                      \
    K1(rsqrt_##tag, F, R(RSQRT(x)))                                                    \
    K1(exp_##tag, F, R(EXP(x)))                                                        \
    K1(exp2_##tag, F, R(EXP2(x)))                                                      \
    K1(log_##tag, F, R(LOG(x)))                                                        \
    K1(log2_##tag, F, R(LOG2(x)))                                                      \
    K1(sin_##tag, F, R(SIN(x)))                                                        \
    K1(cos_##tag, F, R(COS(x)))                                                        \
    K1(tanh_##tag, F, R(TANH(x)))                                                      \
    K1(sigmoid_##tag, F, R(SIGM(x)))                                                   \
    K1(erf_##tag, F, R(ERF(x)))                                                        \
    K1(floor_##tag, F, FLOOR(x))                                                       \
    K1(ceil_##tag, F, CEIL(x))                                                         \
    K1(round_##tag, F, RINT(x))                                                        \
    K1(trunc_##tag, F, TRUNC(x))

#define R_ID(v) (v)
// round = to nearest, ties to even: rint in the default rounding mode (the library never
// changes it), which vectorizes as roundps where floor/ceil/trunc do.
#define F32_FUNCS sqrtf, rsqrtf_, hg_vm_exp_f32, hg_vm_exp2_f32, hg_vm_log_f32, hg_vm_log2_f32, \
                  sinf, cosf, hg_vm_tanh_f32, hg_vm_sigmoid_f32, hg_vm_erf_f32, \
                  floorf, ceilf, rintf, truncf
#define F64_FUNCS sqrt, rsqrt_, exp, exp2, log, log2, sin, cos, tanh, hg_vm_sigmoid_f64, erf, \
                  floor, ceil, rint, trunc
// One level of indirection so the function lists expand into separate arguments.
#define MATHS_(...) MATHS(__VA_ARGS__)
MATHS_(f32, float, R_ID, F32_FUNCS)
MATHS_(f64, double, R_ID, F64_FUNCS)
// Rounding an f16/bf16 value to an integral value gives an f16/bf16 value: no extra rounding.
MATHS_(f16, float, hg_v_round_f16, F32_FUNCS)
MATHS_(bf16, float, hg_v_round_bf16, F32_FUNCS)

#define SET_MATH(tag, dt)                                                                  \
    k->op[HG_OP_SQRT][dt] = sqrt_##tag; k->op[HG_OP_RSQRT][dt] = rsqrt_##tag;              \
    k->op[HG_OP_EXP][dt] = exp_##tag; k->op[HG_OP_EXP2][dt] = exp2_##tag;                  \
    k->op[HG_OP_LOG][dt] = log_##tag; k->op[HG_OP_LOG2][dt] = log2_##tag;                  \
    k->op[HG_OP_SIN][dt] = sin_##tag; k->op[HG_OP_COS][dt] = cos_##tag;                    \
    k->op[HG_OP_TANH][dt] = tanh_##tag; k->op[HG_OP_SIGMOID][dt] = sigmoid_##tag;          \
    k->op[HG_OP_ERF][dt] = erf_##tag; k->op[HG_OP_FLOOR][dt] = floor_##tag;                \
    k->op[HG_OP_CEIL][dt] = ceil_##tag; k->op[HG_OP_ROUND][dt] = round_##tag;              \
    k->op[HG_OP_TRUNC][dt] = trunc_##tag;

#if defined(HG_SIMD_AVX512)
#include "base/vmath_zmm.h"
// f32 exp and sigmoid on 16 lanes with base/vmath_zmm.h's exp, bit for bit the vmath.h
// functions (test_math_ulp compares them with the portable set), in fewer instructions than
// the portable form (docs/performance.md). tanh's 2^n is already two integer instructions.
static void exp_f32_zmm(void* dv, const void* av, const void* bv, const void* cv, size_t n) {
    float* d = dv;
    const float* a = av;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, hg_vm_exp_zmm(_mm512_loadu_ps(a + i)));
    if (i < n) exp_f32(d + i, a + i, bv, cv, n - i);
}

// As hg_vm_sigmoid_f32: e = e^-min(|x|, 110), then 1/(1+e) or e/(1+e); NaN gives x + x.
static void sigmoid_f32_zmm(void* dv, const void* av, const void* bv, const void* cv,
                            size_t n) {
    float* d = dv;
    const float* a = av;
    const __m512i absm = _mm512_set1_epi32(0x7fffffff), lim = _mm512_set1_epi32(0x42dc0000);
    const __m512 one = _mm512_set1_ps(1.0f);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(a + i);
        __m512 xa = _mm512_castsi512_ps(
            _mm512_min_epu32(_mm512_and_si512(_mm512_castps_si512(x), absm), lim));
        __m512 e = hg_vm_exp_core_zmm(_mm512_sub_ps(_mm512_setzero_ps(), xa));
        __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
        __m512 q = _mm512_div_ps(_mm512_mask_mov_ps(e, pos, one), _mm512_add_ps(one, e));
        __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
        _mm512_storeu_ps(d + i, _mm512_mask_add_ps(q, nan, x, x));
    }
    if (i < n) sigmoid_f32(d + i, a + i, bv, cv, n - i);
}

#endif

void HG_SIMD_NAME(hg_cpu_fill_math_)(hg_cpu_kernels* k) {
    SET_MATH(f32, HG_DTYPE_F32)
#if defined(HG_SIMD_AVX512)
    k->op[HG_OP_EXP][HG_DTYPE_F32] = exp_f32_zmm;
    k->op[HG_OP_SIGMOID][HG_DTYPE_F32] = sigmoid_f32_zmm;
#endif
    SET_MATH(f64, HG_DTYPE_F64)
    SET_MATH(f16, HG_DTYPE_F16)
    SET_MATH(bf16, HG_DTYPE_BF16)
}
