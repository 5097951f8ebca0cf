// Reduction building blocks: the accurate sums, run loaders (strided elements of any dtype into
// a contiguous buffer of the accumulation domain) and the per-op updates over runs and rows.
#include "ops/reduce/reduce_internal.h"
#include "base/cpu_targets.h"
#include <math.h>
#include <string.h>

// A short run (or the tail of a long one) in 8 f64 chains (vector lanes).
static inline __attribute__((always_inline)) double sum_short_f32(const float* x, int64_t n) {
    double t8[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) t8[j] += (double)x[i + j];
    double t = ((t8[0] + t8[4]) + (t8[1] + t8[5])) + ((t8[2] + t8[6]) + (t8[3] + t8[7]));
    for (; i < n; i++) t += (double)x[i];
    return t;
}

// Vector types of GCC/Clang (lowered to whatever width each build has): the lanes stay in
// registers; as plain arrays GCC kept them on the stack, and the final fold of 32 doubles ran
// through store-to-load forwarding (a third of a sum along rows of 128).
typedef float hg_v16f __attribute__((vector_size(64)));
typedef double hg_v8d __attribute__((vector_size(64)));
typedef double hg_v4d __attribute__((vector_size(32)));
typedef double hg_v2d __attribute__((vector_size(16)));

// Macros, not functions: a function returning a 64-byte vector changes the ABI warning-wise in
// the baseline build (-Werror=psabi) even when always inlined.
#define LOAD16(dst, p) memcpy(&(dst), (p), sizeof(hg_v16f))
#define WIDEN_LO(v) __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7), hg_v8d)
#define WIDEN_HI(v) \
    __builtin_convertvector(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15), hg_v8d)

// wide (a constant after inlining): the lanes as 64-byte vectors, for AVX-512; else as 32-byte
// halves with the same lanes and operations (the same bits): GCC kept 64-byte vectors on the
// stack in the AVX2 build (an accumulator load and store per add).
typedef float hg_v8f __attribute__((vector_size(32)));
#define LOAD8(dst, p) memcpy(&(dst), (p), sizeof(hg_v8f))
#define WIDEN4_LO(v) __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3), hg_v4d)
#define WIDEN4_HI(v) __builtin_convertvector(__builtin_shufflevector(v, v, 4, 5, 6, 7), hg_v4d)

static inline __attribute__((always_inline)) double sum_f32_body(const float* x, int64_t n,
                                                                 int wide) {
    // 32 independent f32 lanes each add up to 16 terms per block; block partials go into f64
    // lanes, so the error does not grow with n. Short runs (a row of 256) take one shorter
    // block: a serial f64 loop over them was latency-bound (4 cycles per element, 0.3 of numpy
    // for sums along rows of 256).
    if (n < 128) return sum_short_f32(x, n);   // no lanes to clear and fold
    int64_t i = 0;
    hg_v2d d;
    if (wide) {
        hg_v8d l0 = {0}, l1 = {0}, l2 = {0}, l3 = {0};   // f64 lanes 0-7, 8-15, 16-23, 24-31
        while (n - i >= 32) {
            int64_t terms = (n - i) / 32 < 16 ? (n - i) / 32 : 16;
            hg_v16f f0, f1, g0, g1;
            LOAD16(f0, x + i);
            LOAD16(f1, x + i + 16);
            for (int64_t k = 32; k < terms * 32; k += 32) {
                LOAD16(g0, x + i + k);
                LOAD16(g1, x + i + k + 16);
                f0 += g0;
                f1 += g1;
            }
            l0 += WIDEN_LO(f0);
            l1 += WIDEN_HI(f0);
            l2 += WIDEN_LO(f1);
            l3 += WIDEN_HI(f1);
            i += terms * 32;
        }
        // The fold: lane j += lane j + w for w = 16, 8, 4, 2, 1.
        l0 += l2;
        l1 += l3;
        l0 += l1;
        hg_v4d q = __builtin_shufflevector(l0, l0, 0, 1, 2, 3) +
                   __builtin_shufflevector(l0, l0, 4, 5, 6, 7);
        d = __builtin_shufflevector(q, q, 0, 1) + __builtin_shufflevector(q, q, 2, 3);
    } else {
        // f32 lanes 0-7 .. 24-31 in f0..f3; f64 lanes 4k..4k+3 in lk.
        hg_v4d l0 = {0}, l1 = {0}, l2 = {0}, l3 = {0}, l4 = {0}, l5 = {0}, l6 = {0}, l7 = {0};
        while (n - i >= 32) {
            int64_t terms = (n - i) / 32 < 16 ? (n - i) / 32 : 16;
            hg_v8f f0, f1, f2, f3, g0, g1, g2, g3;
            LOAD8(f0, x + i);
            LOAD8(f1, x + i + 8);
            LOAD8(f2, x + i + 16);
            LOAD8(f3, x + i + 24);
            for (int64_t k = 32; k < terms * 32; k += 32) {
                LOAD8(g0, x + i + k);
                LOAD8(g1, x + i + k + 8);
                LOAD8(g2, x + i + k + 16);
                LOAD8(g3, x + i + k + 24);
                f0 += g0;
                f1 += g1;
                f2 += g2;
                f3 += g3;
            }
            l0 += WIDEN4_LO(f0);
            l1 += WIDEN4_HI(f0);
            l2 += WIDEN4_LO(f1);
            l3 += WIDEN4_HI(f1);
            l4 += WIDEN4_LO(f2);
            l5 += WIDEN4_HI(f2);
            l6 += WIDEN4_LO(f3);
            l7 += WIDEN4_HI(f3);
            i += terms * 32;
        }
        l0 += l4;   // the same fold
        l1 += l5;
        l2 += l6;
        l3 += l7;
        l0 += l2;
        l1 += l3;
        hg_v4d q = l0 + l1;
        d = __builtin_shufflevector(q, q, 0, 1) + __builtin_shufflevector(q, q, 2, 3);
    }
    double tail = sum_short_f32(x + i, n - i);
    return (d[0] + d[1]) + tail;
}

static inline __attribute__((always_inline)) void colsum_body(const float* const* rp, int nrows,
                                                             int64_t kc, float* tmp, double* f) {
    int g = 0;
    for (; g + 4 <= nrows; g += 4) {
        const float *x0 = rp[g], *x1 = rp[g + 1], *x2 = rp[g + 2], *x3 = rp[g + 3];
        if (g == 0)
            for (int64_t c = 0; c < kc; c++) tmp[c] = (x0[c] + x1[c]) + (x2[c] + x3[c]);
        else
            for (int64_t c = 0; c < kc; c++) tmp[c] += (x0[c] + x1[c]) + (x2[c] + x3[c]);
    }
    if (g == 0) memset(tmp, 0, (size_t)kc * sizeof(float));
    for (; g < nrows; g++)
        for (int64_t c = 0; c < kc; c++) tmp[c] += rp[g][c];
    for (int64_t c = 0; c < kc; c++) f[c] += (double)tmp[c];
}

// The same loops built for AVX2 and AVX-512 (the file's baseline build adds 4 floats per
// instruction: docs/performance.md), picked at run time; the same
// additions in the same order, so every build gives the same bits.
#if defined(HG_HAVE_CPU_TARGETS)
HG_TARGET_AVX2 static double sum_f32_avx2(const float* x, int64_t n) {
    return sum_f32_body(x, n, 0);
}
HG_TARGET_AVX512_WIDE
static double sum_f32_avx512(const float* x, int64_t n) {
    return sum_f32_body(x, n, 1);
}
double hg_reduce_sum_f32(const float* x, int64_t n) {
    hg_cpu_level lv = hg_cpu_level_get();
    if (lv >= HG_CPU_AVX512) return sum_f32_avx512(x, n);
    if (lv >= HG_CPU_AVX2) return sum_f32_avx2(x, n);
    return sum_f32_body(x, n, 0);
}
HG_TARGET_AVX2 static void sum_rows_f32_avx2(const float* x, int64_t ld, int64_t rows, int64_t n,
                                             double* out) {
    for (int64_t r = 0; r < rows; r++) out[r] = sum_f32_body(x + r * ld, n, 0);
}
HG_TARGET_AVX512_WIDE
static void sum_rows_f32_avx512(const float* x, int64_t ld, int64_t rows, int64_t n, double* out) {
    for (int64_t r = 0; r < rows; r++) out[r] = sum_f32_body(x + r * ld, n, 1);
}
void hg_reduce_sum_rows_f32(const float* x, int64_t ld, int64_t rows, int64_t n, double* out) {
    hg_cpu_level lv = hg_cpu_level_get();
    if (lv >= HG_CPU_AVX512) sum_rows_f32_avx512(x, ld, rows, n, out);
    else if (lv >= HG_CPU_AVX2) sum_rows_f32_avx2(x, ld, rows, n, out);
    else for (int64_t r = 0; r < rows; r++) out[r] = sum_f32_body(x + r * ld, n, 0);
}
HG_TARGET_AVX2 static void colsum_avx2(const float* const* rp, int nrows, int64_t kc, float* tmp,
                                       double* f) {
    colsum_body(rp, nrows, kc, tmp, f);
}
HG_TARGET_AVX512_WIDE
static void colsum_avx512(const float* const* rp, int nrows, int64_t kc, float* tmp, double* f) {
    colsum_body(rp, nrows, kc, tmp, f);
}
void hg_reduce_colsum_block_f32(const float* const* rp, int nrows, int64_t kc, float* tmp,
                                double* f) {
    hg_cpu_level lv = hg_cpu_level_get();
    if (lv >= HG_CPU_AVX512) colsum_avx512(rp, nrows, kc, tmp, f);
    else if (lv >= HG_CPU_AVX2) colsum_avx2(rp, nrows, kc, tmp, f);
    else colsum_body(rp, nrows, kc, tmp, f);
}
#else
void hg_reduce_colsum_block_f32(const float* const* rp, int nrows, int64_t kc, float* tmp,
                                double* f) {
    colsum_body(rp, nrows, kc, tmp, f);
}
double hg_reduce_sum_f32(const float* x, int64_t n) { return sum_f32_body(x, n, 0); }
void hg_reduce_sum_rows_f32(const float* x, int64_t ld, int64_t rows, int64_t n, double* out) {
    for (int64_t r = 0; r < rows; r++) out[r] = sum_f32_body(x + r * ld, n, 0);
}
#endif

double hg_reduce_sum_f64(const double* x, int64_t n) {
    // Blocks of 128 (16 lanes x 8 terms) merged by a binary counter: block partials are added
    // pairwise, error O(log2(n/128)) ulps as numpy's pairwise sum.
    double lvl[64][16];
    uint64_t count = 0;
    int64_t i = 0;
    for (; i + 128 <= n; i += 128) {
        double v[16];
        for (int j = 0; j < 16; j++) v[j] = x[i + j];
        for (int k = 16; k < 128; k += 16)
            for (int j = 0; j < 16; j++) v[j] += x[i + k + j];
        int l = 0;
        for (uint64_t cnt = count; cnt & 1; cnt >>= 1, l++)
            for (int j = 0; j < 16; j++) v[j] += lvl[l][j];
        memcpy(lvl[l], v, sizeof v);
        count++;
    }
    double tot[16] = {0};
    for (int l = 0; l < 64; l++)
        if ((count >> l) & 1)
            for (int j = 0; j < 16; j++) tot[j] += lvl[l][j];
    for (int w = 8; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) tot[j] += tot[j + w];
    double tail = 0.0;
    for (; i < n; i++) tail += x[i];
    return tot[0] + tail;
}

// ---- loaders ----
#define LOAD(T, EXPR)                                                                         \
    do {                                                                                      \
        const T* s_ = (const T*)p;                                                            \
        for (int64_t i = 0; i < n; i++) { T v = s_[i * st]; o[i] = (EXPR); }                  \
    } while (0)

static void load_f32(hg_dtype dt, const void* p, int64_t st, int64_t n, float* o) {
    switch (dt) {
    case HG_DTYPE_F16: LOAD(uint16_t, hg_f16_to_f32(v)); break;
    case HG_DTYPE_BF16: LOAD(uint16_t, hg_bf16_to_f32(v)); break;
    default: LOAD(float, v); break;
    }
}

static void load_f64(hg_dtype dt, const void* p, int64_t st, int64_t n, double* o) {
    switch (dt) {
    case HG_DTYPE_BOOL: LOAD(uint8_t, v ? 1.0 : 0.0); break;
    case HG_DTYPE_I8: LOAD(int8_t, (double)v); break;
    case HG_DTYPE_I16: LOAD(int16_t, (double)v); break;
    case HG_DTYPE_I32: LOAD(int32_t, (double)v); break;
    case HG_DTYPE_I64: LOAD(int64_t, (double)v); break;
    case HG_DTYPE_U8: LOAD(uint8_t, (double)v); break;
    case HG_DTYPE_U16: LOAD(uint16_t, (double)v); break;
    case HG_DTYPE_U32: LOAD(uint32_t, (double)v); break;
    case HG_DTYPE_U64: LOAD(uint64_t, (double)v); break;
    case HG_DTYPE_F16: LOAD(uint16_t, (double)hg_f16_to_f32(v)); break;
    case HG_DTYPE_BF16: LOAD(uint16_t, (double)hg_bf16_to_f32(v)); break;
    case HG_DTYPE_F32: LOAD(float, (double)v); break;
    default: LOAD(double, v); break;
    }
}

// Integers as order-preserving int64 keys (u64 with its top bit flipped) or as wrapping u64.
static void load_int(hg_dtype dt, const void* p, int64_t st, int64_t n, uint64_t* o, int key) {
    switch (dt) {
    case HG_DTYPE_BOOL: LOAD(uint8_t, v ? 1u : 0u); break;
    case HG_DTYPE_I8: LOAD(int8_t, (uint64_t)(int64_t)v); break;
    case HG_DTYPE_I16: LOAD(int16_t, (uint64_t)(int64_t)v); break;
    case HG_DTYPE_I32: LOAD(int32_t, (uint64_t)(int64_t)v); break;
    case HG_DTYPE_U8: LOAD(uint8_t, (uint64_t)v); break;
    case HG_DTYPE_U16: LOAD(uint16_t, (uint64_t)v); break;
    case HG_DTYPE_U32: LOAD(uint32_t, (uint64_t)v); break;
    case HG_DTYPE_U64:
        if (key) LOAD(uint64_t, v ^ 0x8000000000000000ull);
        else LOAD(uint64_t, v);
        break;
    default: LOAD(uint64_t, v); break;   // i64
    }
}

const void* hg_red_load(hg_red_dom dom, hg_dtype dt, const void* p, int64_t st, int64_t n,
                        void* buf) {
    switch (dom) {
    case HG_RED_F32:
        if (dt == HG_DTYPE_F32 && st == 1) return p;
        load_f32(dt, p, st, n, buf);
        return buf;
    case HG_RED_F64:
        if (dt == HG_DTYPE_F64 && st == 1) return p;
        load_f64(dt, p, st, n, buf);
        return buf;
    case HG_RED_KEY:
        if (dt == HG_DTYPE_I64 && st == 1) return p;
        load_int(dt, p, st, n, buf, 1);
        return buf;
    default:
        if ((dt == HG_DTYPE_I64 || dt == HG_DTYPE_U64) && st == 1) return p;
        load_int(dt, p, st, n, buf, 0);
        return buf;
    }
}

// ---- accumulators ----
void hg_red_init(hg_red_kop k, hg_red_acc* a) {
    a->f = 0.0;
    a->u = 0;
    a->idx = -1;
    switch (k) {
    case HG_RK_PROD: a->f = 1.0; a->u = 1; break;
    case HG_RK_MIN: a->f = INFINITY; a->u = (uint64_t)INT64_MAX; break;
    case HG_RK_MAX: a->f = -INFINITY; a->u = (uint64_t)INT64_MIN; break;
    case HG_RK_ALL: a->u = 1; break;
    default: break;
    }
}

// Float comparisons with numpy's NaN rules: a NaN wins min/max and argmin/argmax (first one).
static inline int f_takes(hg_red_kop k, double v, double cur) {
    if (cur != cur) return 0;
    if (v != v) return 1;
    return k == HG_RK_MIN || k == HG_RK_ARGMIN ? v < cur : v > cur;
}
static inline int i_takes(hg_red_kop k, int64_t v, int64_t cur) {
    return k == HG_RK_MIN || k == HG_RK_ARGMIN ? v < cur : v > cur;
}

void hg_red_combine(hg_red_kop k, hg_red_dom dom, hg_red_acc* a, const hg_red_acc* b) {
    int fl = dom == HG_RED_F32 || dom == HG_RED_F64;
    switch (k) {
    case HG_RK_SUM: case HG_RK_SQDEV: case HG_RK_SUMEXP:
        a->f += b->f; a->u += b->u; break;
    case HG_RK_PROD: a->f *= b->f; a->u *= b->u; break;
    case HG_RK_MIN: case HG_RK_MAX:
        if (fl ? f_takes(k, b->f, a->f) : i_takes(k, (int64_t)b->u, (int64_t)a->u)) *a = *b;
        break;
    case HG_RK_ARGMIN: case HG_RK_ARGMAX:
        // b covers later indices: it wins only strictly (or with the first NaN).
        if (b->idx < 0) break;
        if (a->idx < 0 || (fl ? f_takes(k, b->f, a->f) : i_takes(k, (int64_t)b->u, (int64_t)a->u)))
            *a = *b;
        break;
    case HG_RK_ANY: a->u |= b->u; break;
    case HG_RK_ALL: a->u &= b->u; break;
    default: break;
    }
}

// Update over a contiguous run of the domain (idx0: flat reduced index of d[0]).
void hg_red_run(hg_red_kop k, hg_red_dom dom, hg_red_acc* a, const void* d, int64_t n,
                int64_t idx0, double center) {
    if (n <= 0) return;
    if (dom == HG_RED_F32) {   // SUM only (sum and mean of f32, f16, bf16)
        a->f += hg_reduce_sum_f32(d, n);
        return;
    }
    if (dom == HG_RED_F64) {
        const double* x = d;
        switch (k) {
        case HG_RK_SUM: a->f += hg_reduce_sum_f64(x, n); return;
        case HG_RK_PROD: {
            double p = a->f;
            for (int64_t i = 0; i < n; i++) p *= x[i];
            a->f = p;
            return;
        }
        case HG_RK_MIN: case HG_RK_MAX: {
            double m = a->f;
            for (int64_t i = 0; i < n; i++)
                if (f_takes(k, x[i], m)) m = x[i];
            a->f = m;
            return;
        }
        case HG_RK_ARGMIN: case HG_RK_ARGMAX: {
            int64_t i = 0;
            if (a->idx < 0) { a->f = x[0]; a->idx = idx0; i = 1; }
            double m = a->f;
            int64_t mi = a->idx;
            for (; i < n; i++)
                if (f_takes(k, x[i], m)) { m = x[i]; mi = idx0 + i; }
            a->f = m;
            a->idx = mi;
            return;
        }
        case HG_RK_ANY: case HG_RK_ALL: {
            uint64_t r = a->u;
            if (k == HG_RK_ANY) for (int64_t i = 0; i < n; i++) r |= x[i] != 0.0;
            else for (int64_t i = 0; i < n; i++) r &= x[i] != 0.0;
            a->u = r;
            return;
        }
        case HG_RK_SQDEV: {
            double s[4] = {0, 0, 0, 0};
            int64_t i = 0;
            for (; i + 4 <= n; i += 4)
                for (int j = 0; j < 4; j++) { double t = x[i + j] - center; s[j] += t * t; }
            for (; i < n; i++) { double t = x[i] - center; s[0] += t * t; }
            a->f += (s[0] + s[1]) + (s[2] + s[3]);
            return;
        }
        case HG_RK_SUMEXP: {
            if (!isfinite(center)) return;   // finalize decides from the max alone
            double s = 0.0;
            for (int64_t i = 0; i < n; i++) s += exp(x[i] - center);
            a->f += s;
            return;
        }
        default: return;
        }
    }
    const uint64_t* x = d;
    switch (k) {
    case HG_RK_SUM: case HG_RK_PROD: {   // wrap-around in uint64 (two's complement for signed)
        uint64_t v = a->u;
        if (k == HG_RK_SUM) for (int64_t i = 0; i < n; i++) v += x[i];
        else for (int64_t i = 0; i < n; i++) v *= x[i];
        a->u = v;
        return;
    }
    case HG_RK_MIN: case HG_RK_MAX: {
        int64_t m = (int64_t)a->u;
        for (int64_t i = 0; i < n; i++)
            if (i_takes(k, (int64_t)x[i], m)) m = (int64_t)x[i];
        a->u = (uint64_t)m;
        return;
    }
    case HG_RK_ARGMIN: case HG_RK_ARGMAX: {
        int64_t i = 0;
        if (a->idx < 0) { a->u = x[0]; a->idx = idx0; i = 1; }
        int64_t m = (int64_t)a->u, mi = a->idx;
        for (; i < n; i++)
            if (i_takes(k, (int64_t)x[i], m)) { m = (int64_t)x[i]; mi = idx0 + i; }
        a->u = (uint64_t)m;
        a->idx = mi;
        return;
    }
    default: return;
    }
}

// Update of K column accumulators (structure of arrays) with one row of the domain.
void hg_red_row(hg_red_kop k, hg_red_dom dom, double* f, uint64_t* u, int64_t* idx,
                const void* d, int64_t K, int64_t ridx, const double* centers) {
    if (dom == HG_RED_F64) {
        const double* x = d;
        switch (k) {
        case HG_RK_SUM: for (int64_t j = 0; j < K; j++) f[j] += x[j]; return;
        case HG_RK_PROD: for (int64_t j = 0; j < K; j++) f[j] *= x[j]; return;
        case HG_RK_MIN: case HG_RK_MAX:
            for (int64_t j = 0; j < K; j++)
                if (f_takes(k, x[j], f[j])) f[j] = x[j];
            return;
        case HG_RK_ARGMIN: case HG_RK_ARGMAX:
            for (int64_t j = 0; j < K; j++)
                if (idx[j] < 0 || f_takes(k, x[j], f[j])) { f[j] = x[j]; idx[j] = ridx; }
            return;
        case HG_RK_ANY: for (int64_t j = 0; j < K; j++) u[j] |= x[j] != 0.0; return;
        case HG_RK_ALL: for (int64_t j = 0; j < K; j++) u[j] &= x[j] != 0.0; return;
        case HG_RK_SQDEV:
            for (int64_t j = 0; j < K; j++) { double t = x[j] - centers[j]; f[j] += t * t; }
            return;
        case HG_RK_SUMEXP:
            for (int64_t j = 0; j < K; j++)
                if (isfinite(centers[j])) f[j] += exp(x[j] - centers[j]);
            return;
        default: return;
        }
    }
    const uint64_t* x = d;
    switch (k) {
    case HG_RK_SUM: for (int64_t j = 0; j < K; j++) u[j] += x[j]; return;
    case HG_RK_PROD: for (int64_t j = 0; j < K; j++) u[j] *= x[j]; return;
    case HG_RK_MIN: case HG_RK_MAX:
        for (int64_t j = 0; j < K; j++)
            if (i_takes(k, (int64_t)x[j], (int64_t)u[j])) u[j] = x[j];
        return;
    case HG_RK_ARGMIN: case HG_RK_ARGMAX:
        for (int64_t j = 0; j < K; j++)
            if (idx[j] < 0 || i_takes(k, (int64_t)x[j], (int64_t)u[j])) {
                u[j] = x[j];
                idx[j] = ridx;
            }
        return;
    default: return;
    }
}
