// hg_random_uniform and hg_random_normal: counter-based (Philox-4x32-10), so element i of out
// (C order) depends only on (seed, offset + i): the same numbers for any thread count, any
// split of the work and any strides of out. Values are computed in f64 and rounded once to out's
// dtype (see random.h for the exact mapping and docs/ops_data.md for the guarantees).
#include "ops/random/random.h"
#include <float.h>
#include <math.h>
#include <string.h>
#include "base/cpu_level.h"
#include "base/cpu_targets.h"
#include "base/dtype.h"
#include "base/error.h"
#include "runtime/objects.h"
#include "ops/data/data_common.h"
#include "ops/common/dev_ops.h"
#include "ops/common/op_dispatch.h"

enum { RANDOM_GRAIN = 4096 };   // elements per worker (docs/performance.md)

// ---------------------------------------------------------------------------------------------
// Philox-4x32-10
// ---------------------------------------------------------------------------------------------

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u   // golden ratio
#define PHILOX_W1 0xBB67AE85u   // sqrt(3) - 1

static inline void philox_round(uint32_t c[4], const uint32_t k[2]) {
    uint64_t p0 = (uint64_t)PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c[1] ^ k[0], n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

void hg_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        if (r) {
            k[0] += PHILOX_W0;
            k[1] += PHILOX_W1;
        }
        philox_round(c, k);
    }
    memcpy(out, c, sizeof c);
}

void hg_random_words(uint64_t seed, uint64_t offset, uint64_t i, uint32_t out[4]) {
    uint64_t lo = offset + i;
    uint32_t ctr[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), lo < offset ? 1u : 0u, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    hg_philox4x32_10(ctr, key, out);
}

// Eight consecutive counters at once with AVX2 (the 32x32->64 multiplies of four lanes per
// _mm256_mul_epu32, even and odd lanes separately): the same words as hg_random_words.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HG_RANDOM_AVX2 1
// Words 0..2 of the n counters offset + i0 + l (word 2: the carry out of 64 bits).
static inline void counter_words(uint64_t offset, uint64_t i0, int n, uint32_t* c0s,
                                 uint32_t* c1s, uint32_t* c2s) {
    for (int l = 0; l < n; l++) {
        uint64_t lo = offset + i0 + (uint64_t)l;
        c0s[l] = (uint32_t)lo;
        c1s[l] = (uint32_t)(lo >> 32);
        c2s[l] = lo < offset ? 1u : 0u;
    }
}
__attribute__((target("avx2"))) static void philox8_avx2(uint64_t seed, uint64_t offset,
                                                         uint64_t i0, uint32_t* w, size_t ld) {
    uint32_t c0s[8], c1s[8], c2s[8];
    counter_words(offset, i0, 8, c0s, c1s, c2s);
    __m256i c0 = _mm256_loadu_si256((const __m256i*)(const void*)c0s);
    __m256i c1 = _mm256_loadu_si256((const __m256i*)(const void*)c1s);
    __m256i c2 = _mm256_loadu_si256((const __m256i*)(const void*)c2s);
    __m256i c3 = _mm256_setzero_si256();
    const __m256i m0 = _mm256_set1_epi32((int)PHILOX_M0), m1 = _mm256_set1_epi32((int)PHILOX_M1);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        if (r) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        __m256i pe0 = _mm256_mul_epu32(c0, m0), po0 = _mm256_mul_epu32(_mm256_srli_epi64(c0, 32), m0);
        __m256i pe1 = _mm256_mul_epu32(c2, m1), po1 = _mm256_mul_epu32(_mm256_srli_epi64(c2, 32), m1);
        __m256i lo0 = _mm256_blend_epi32(pe0, _mm256_slli_epi64(po0, 32), 0xAA);
        __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(pe0, 32), po0, 0xAA);
        __m256i lo1 = _mm256_blend_epi32(pe1, _mm256_slli_epi64(po1, 32), 0xAA);
        __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(pe1, 32), po1, 0xAA);
        __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
        __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
    }
    _mm256_storeu_si256((__m256i*)(void*)w, c0);
    _mm256_storeu_si256((__m256i*)(void*)(w + ld), c1);
    _mm256_storeu_si256((__m256i*)(void*)(w + 2 * ld), c2);
    _mm256_storeu_si256((__m256i*)(void*)(w + 3 * ld), c3);
}
static int have_avx2(void) { return hg_cpu_level_get() >= HG_CPU_AVX2; }

// Sixteen counters with AVX-512 (the same steps, mask blends for the odd lanes).
HG_TARGET_AVX512 static void philox16_avx512(uint64_t seed, uint64_t offset, uint64_t i0,
                                             uint32_t w[4][16]) {
    uint32_t c0s[16], c1s[16], c2s[16];
    counter_words(offset, i0, 16, c0s, c1s, c2s);
    __m512i c0 = _mm512_loadu_si512(c0s), c1 = _mm512_loadu_si512(c1s);
    __m512i c2 = _mm512_loadu_si512(c2s), c3 = _mm512_setzero_si512();
    const __m512i m0 = _mm512_set1_epi32((int)PHILOX_M0), m1 = _mm512_set1_epi32((int)PHILOX_M1);
    const __mmask16 odd = 0xAAAA;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        if (r) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        __m512i pe0 = _mm512_mul_epu32(c0, m0);
        __m512i po0 = _mm512_mul_epu32(_mm512_srli_epi64(c0, 32), m0);
        __m512i pe1 = _mm512_mul_epu32(c2, m1);
        __m512i po1 = _mm512_mul_epu32(_mm512_srli_epi64(c2, 32), m1);
        __m512i lo0 = _mm512_mask_blend_epi32(odd, pe0, _mm512_slli_epi64(po0, 32));
        __m512i hi0 = _mm512_mask_blend_epi32(odd, _mm512_srli_epi64(pe0, 32), po0);
        __m512i lo1 = _mm512_mask_blend_epi32(odd, pe1, _mm512_slli_epi64(po1, 32));
        __m512i hi1 = _mm512_mask_blend_epi32(odd, _mm512_srli_epi64(pe1, 32), po1);
        // 0x96: a ^ b ^ c
        __m512i n0 = _mm512_ternarylogic_epi32(hi1, c1, _mm512_set1_epi32((int)k0), 0x96);
        __m512i n2 = _mm512_ternarylogic_epi32(hi0, c3, _mm512_set1_epi32((int)k1), 0x96);
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
    }
    _mm512_storeu_si512(w[0], c0);
    _mm512_storeu_si512(w[1], c1);
    _mm512_storeu_si512(w[2], c2);
    _mm512_storeu_si512(w[3], c3);
}
#endif

void hg_random_words16(uint64_t seed, uint64_t offset, uint64_t first, uint32_t w[4][16]) {
#ifdef HG_RANDOM_AVX2
    if (hg_cpu_level_get() >= HG_CPU_AVX512) {
        philox16_avx512(seed, offset, first, w);
        return;
    }
    if (have_avx2()) {
        philox8_avx2(seed, offset, first, &w[0][0], 16);
        philox8_avx2(seed, offset, first + 8, &w[0][8], 16);
        return;
    }
#endif
    for (int l = 0; l < 16; l++) {
        uint32_t o[4];
        hg_random_words(seed, offset, first + (uint64_t)l, o);
        for (int j = 0; j < 4; j++) w[j][l] = o[j];
    }
}

static inline uint64_t top53(uint32_t lo, uint32_t hi) {
    return (((uint64_t)hi << 32) | lo) >> 11;
}

double hg_random_unit(const uint32_t w[4]) {
    return (double)top53(w[0], w[1]) * 0x1p-53;
}

double hg_random_std_normal(const uint32_t w[4]) {
    // u1 in (0, 1]: never 0, so the log is finite.
    double u1 = (double)(top53(w[0], w[1]) + 1) * 0x1p-53;
    double u2 = (double)top53(w[2], w[3]) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

// ---------------------------------------------------------------------------------------------
// Values of a float dtype as doubles
// ---------------------------------------------------------------------------------------------

// x rounded once to dt (nearest even; overflow to +-inf), back as a double.
static double round_to(hg_dtype dt, double x) {
    unsigned char b[8];
    hg_convert_from_double(dt, x, b);
    return hg_op_load_f64(dt, b);
}

static double max_finite(hg_dtype dt) {
    switch (dt) {
    case HG_DTYPE_F16: return 65504.0;
    case HG_DTYPE_BF16: return hg_bf16_to_f32(0x7F7F);
    case HG_DTYPE_F32: return FLT_MAX;
    default: return DBL_MAX;
    }
}

// The neighbour of the finite dt value y in direction dir (+1 up, -1 down).
static double step_value(hg_dtype dt, double y, int dir) {
    if (dt == HG_DTYPE_F64) return nextafter(y, dir > 0 ? INFINITY : -INFINITY);
    if (dt == HG_DTYPE_F32) return nextafterf((float)y, dir > 0 ? INFINITY : -INFINITY);
    unsigned char b[8];
    hg_convert_from_double(dt, y, b);
    uint16_t bits;
    memcpy(&bits, b, 2);
    if ((bits & 0x7FFF) == 0) bits = dir > 0 ? 0x0001 : 0x8001;   // +-0 -> +-smallest
    else if (((bits & 0x8000) == 0) == (dir > 0)) bits++;          // away from zero
    else bits--;                                                   // toward zero
    memcpy(b, &bits, 2);
    return hg_op_load_f64(dt, b);
}

static hg_status check_float_out(hg_op_ctx* c, const hg_tensor* out) {
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'out' is NULL", c->fn);
    hg_status s = hg_op_existing_output(c, out, "out");
    if (s) return s;
    if (!hg_dtype_is_float((int)out->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: 'out' has dtype %s; random numbers need a float dtype (f16, bf16, "
                        "f32 or f64)", c->fn, hg_dtype_name(out->dtype));
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

typedef struct random_job {
    hg_host_view v;
    uint64_t seed, offset;
    int normal;
    double a, b;          // uniform: low, high - low; normal: mean, std
    double lo_q, hi_q;    // uniform: the dtype values allowed (clamp after rounding)
} random_job;

// x rounded to dt and back (f32/f64 inline; f16/bf16 through the library's conversion).
static inline double round_fast(hg_dtype dt, double x) {
    if (dt == HG_DTYPE_F64) return x;
    if (dt == HG_DTYPE_F32) return (double)(float)x;
    return round_to(dt, x);
}
static inline void store_fast(hg_dtype dt, unsigned char* p, double y) {
    if (dt == HG_DTYPE_F64) memcpy(p, &y, 8);
    else if (dt == HG_DTYPE_F32) { float f = (float)y; memcpy(p, &f, 4); }
    else hg_convert_from_double(dt, y, p);
}

// One element from its four words.
static inline void random_elem(const random_job* j, const uint32_t w[4], unsigned char* p) {
    hg_dtype dt = j->v.dtype;
    double y;
    if (j->normal) {
        y = j->a + j->b * hg_random_std_normal(w);
    } else {
        y = round_fast(dt, j->a + j->b * hg_random_unit(w));
        // Rounding to the dtype may reach high (or go below low when low is not a dtype
        // value): such results take the nearest allowed value.
        if (y > j->hi_q) y = j->hi_q;
        if (y < j->lo_q) y = j->lo_q;
    }
    store_fast(dt, p, y);
}

static void random_range(void* ctx, int64_t b, int64_t e) {
    random_job* j = ctx;
    hg_cursor cur;
    hg_cursor_init(&cur, &j->v, b);
    int64_t i = b;
#ifdef HG_RANDOM_AVX2
    if (have_avx2()) {
        uint32_t w8[4][8];
        for (; i + 8 <= e; i += 8) {
            philox8_avx2(j->seed, j->offset, (uint64_t)i, &w8[0][0], 8);
            for (int l = 0; l < 8; l++) {
                uint32_t w[4] = {w8[0][l], w8[1][l], w8[2][l], w8[3][l]};
                random_elem(j, w, cur.p);
                hg_cursor_next(&cur);
            }
        }
    }
#endif
    for (; i < e; i++) {
        uint32_t w[4];
        hg_random_words(j->seed, j->offset, (uint64_t)i, w);
        random_elem(j, w, cur.p);
        hg_cursor_next(&cur);
    }
}

static hg_status run_random(hg_op_ctx* c, const hg_tensor* out, random_job* j) {
    if (hg_op_route_of(c, HG_OPF_RANDOM, out->dtype) == HG_ROUTE_DEVICE)
        return hg_dev_random(c, out, j->seed, j->offset, j->normal, j->a, j->b, j->lo_q, j->hi_q);
    hg_status s = hg_op_host_view(c, out, &j->v);
    if (s) return s;
    // Coalescing keeps the C-order sequence, so index i still names element i of out's shape.
    hg_view_coalesce(&j->v);
    return hg_for_range(c, j->v.numel, RANDOM_GRAIN, random_range, j);
}

hg_status hg_random_uniform(const hg_tensor* out, uint64_t seed, uint64_t offset, double low,
                            double high) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_random_uniform");
    hg_status s = check_float_out(&c, out);
    if (s) return s;
    if (!isfinite(low) || !isfinite(high) || !(low < high) || !isfinite(high - low))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_random_uniform: need finite low < high with finite high - low, got "
                        "low %g, high %g", low, high);
    hg_dtype dt = out->dtype;
    double mx = max_finite(dt);
    // Smallest dtype value >= low and largest < high.
    double lo_q = round_to(dt, low), hi_q = round_to(dt, high);
    if (lo_q < -mx) lo_q = -mx;
    if (lo_q < low) lo_q = step_value(dt, lo_q, +1);
    if (hi_q > mx) hi_q = mx;
    if (hi_q >= high && hi_q > -mx) hi_q = step_value(dt, hi_q, -1);
    if (!(lo_q <= hi_q) || !(hi_q < high) || !(lo_q >= low))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_random_uniform: no %s value lies in [low, high) = [%.17g, %.17g)",
                        hg_dtype_name(dt), low, high);
    random_job j;
    memset(&j, 0, sizeof j);
    j.seed = seed;
    j.offset = offset;
    j.a = low;
    j.b = high - low;
    j.lo_q = lo_q;
    j.hi_q = hi_q;
    return run_random(&c, out, &j);
}

hg_status hg_random_normal(const hg_tensor* out, uint64_t seed, uint64_t offset, double mean,
                           double std) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_random_normal");
    hg_status s = check_float_out(&c, out);
    if (s) return s;
    if (!isfinite(mean) || !isfinite(std) || std < 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_random_normal: need finite mean and finite std >= 0, got mean %g, "
                        "std %g", mean, std);
    random_job j;
    memset(&j, 0, sizeof j);
    j.seed = seed;
    j.offset = offset;
    j.normal = 1;
    j.a = mean;
    j.b = std;
    return run_random(&c, out, &j);
}
