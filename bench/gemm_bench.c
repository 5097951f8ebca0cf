// SGEMM benchmark: GFLOP/s of hg_cpu_sgemm (C = A * B, row-major, no transposes) on square and
// skinny shapes, 1 and 2 threads, best and median of several runs; also an FMA peak probe on the
// same threads in the same run (the limit, design notes §6). bench/gemm_peers.py runs it beside
// numpy/OpenBLAS.
//
//   hg_gemm_bench [--threads 1,2] [--reps N] [--shapes 256,512,...,64x4096x4096] [--kernel NAME]
//                 [--json FILE]
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backends/cpu/gemm/gemm.h"
#include "backends/cpu/thread_pool.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* x, const void* y) {
    double a = *(const double*)x, b = *(const double*)y;
    return (a > b) - (a < b);
}

// ---- FMA peak probe: 12 independent FMA chains per thread (more than latency x pipes). -------
#if defined(__x86_64__)
#include <immintrin.h>
// One probe per vector width (P: the intrinsics prefix, W: floats per register); zmm matters on
// cores with two 512-bit FMA pipes, which double the ymm rate.
#define FMA_PROBE(NAME, TARGET, V, P, W)                                                      \
    __attribute__((target(TARGET))) static float NAME(int64_t iters) {                         \
        V x = P##_set1_ps(0.999999f), y = P##_set1_ps(1e-7f), a[12];                           \
        /* Distinct starting values, or the compiler folds the identical chains into one. */   \
        _Pragma("GCC unroll 12") for (int k = 0; k < 12; k++)                                  \
            a[k] = P##_set1_ps(0.10f + 0.01f * (float)k);                                      \
        for (int64_t t = 0; t < iters; t++) {                                                  \
            _Pragma("GCC unroll 12") for (int k = 0; k < 12; k++) a[k] = P##_fmadd_ps(a[k], x, y); \
        }                                                                                      \
        V s = a[0];                                                                            \
        _Pragma("GCC unroll 12") for (int k = 1; k < 12; k++) s = P##_add_ps(s, a[k]);        \
        float out[W];                                                                          \
        P##_storeu_ps(out, s);                                                                 \
        return out[0];                                                                         \
    }
FMA_PROBE(fma_probe_avx2, "avx2,fma", __m256, _mm256, 8)
FMA_PROBE(fma_probe_avx512, "avx512f", __m512, _mm512, 16)
#endif

typedef struct probe_ctx { int64_t iters; int zmm; volatile float sink[8]; } probe_ctx;
static void probe_worker(void* ctx, int w) {
    probe_ctx* p = ctx;
#if defined(__x86_64__)
    p->sink[w & 7] = p->zmm ? fma_probe_avx512(p->iters) : fma_probe_avx2(p->iters);
#else
    (void)p; (void)w;
#endif
}

// Peak GFLOP/s on `threads` threads (0 if unknown on this CPU).
static double fma_peak(hg_pool* pool, int threads) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0.0;
    // The best of the ymm and (where there is AVX-512F) zmm probes: the machine's FMA limit, not
    // that of one instruction width.
    probe_ctx ctx = {.iters = 20000000};
    double best = 0.0;
    int widths = __builtin_cpu_supports("avx512f") ? 2 : 1;
    for (int r = 0; r < 3 * widths; r++) {
        ctx.zmm = r >= 3;
        double t0 = now_s();
        if (pool) hg_pool_run(pool, threads, probe_worker, &ctx);
        else probe_worker(&ctx, 0);
        double t = now_s() - t0;
        double g = (double)threads * (double)ctx.iters * 12 * (ctx.zmm ? 16 : 8) * 2 / t * 1e-9;
        if (g > best) best = g;
    }
    return best;
#else
    (void)pool; (void)threads;
    return 0.0;
#endif
}

typedef struct shape { int64_t m, n, k; } shape;

// kern NULL: hg_cpu_sgemm as the library calls it (skinny and narrow shapes take their own
// kernels); else the packed path with that micro-kernel.
static void run_sgemm(const hg_sgemm_kernel* kern, shape sh, const float* a, const float* b,
                      float* c, hg_pool* pool) {
    if (kern) hg_cpu_sgemm_with(kern, 0, 0, sh.m, sh.n, sh.k, 1.0f, a, sh.k, b, sh.n, 0.0f, c, sh.n, pool);
    else hg_cpu_sgemm(0, 0, sh.m, sh.n, sh.k, 1.0f, a, sh.k, b, sh.n, 0.0f, c, sh.n, pool);
}

static int parse_shapes(const char* s, shape* out, int max) {
    int cnt = 0;
    while (*s && cnt < max) {
        char* end;
        long long m = strtoll(s, &end, 10), n = m, k = m;
        if (*end == 'x') {
            n = strtoll(end + 1, &end, 10);
            if (*end != 'x') return -1;
            k = strtoll(end + 1, &end, 10);
        }
        if (m <= 0 || n <= 0 || k <= 0) return -1;
        out[cnt++] = (shape){m, n, k};
        if (*end == ',') end++;
        else if (*end) return -1;
        s = end;
    }
    return cnt;
}

int main(int argc, char** argv) {
    const char* shapes_arg = "256,512,1024,2048,4096,64x4096x4096";
    const char* threads_arg = "1,2";
    const char* json_path = NULL;
    const char* kname = NULL;
    int reps = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shapes") && i + 1 < argc) shapes_arg = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads_arg = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json_path = argv[++i];
        else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) kname = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--threads 1,2] [--reps N] [--shapes 256,512,MxNxK,...] [--kernel generic|avx2|avx512] [--json FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    shape shapes[32];
    int nshapes = parse_shapes(shapes_arg, shapes, 32);
    if (nshapes <= 0) {
        fprintf(stderr, "--shapes: expected a comma list of N or MxNxK with positive sizes\n");
        return 2;
    }
    int threads[8], nthreads = 0;
    for (const char* s = threads_arg; *s && nthreads < 8;) {
        char* end;
        long t = strtol(s, &end, 10);
        if (t < 1 || t > 256 || (*end && *end != ',')) {
            fprintf(stderr, "--threads: expected a comma list of counts >= 1\n");
            return 2;
        }
        threads[nthreads++] = (int)t;
        s = *end ? end + 1 : end;
    }
    const hg_sgemm_kernel* kern = hg_cpu_sgemm_kernel_named(kname);
    if (!kern) {
        fprintf(stderr, "--kernel %s: not built or not supported by this CPU\n", kname);
        return 2;
    }
    FILE* js = NULL;
    if (json_path) {
        js = fopen(json_path, "w");
        if (!js) {
            fprintf(stderr, "cannot write %s\n", json_path);
            return 1;
        }
        fprintf(js, "{\"kernel\": \"%s\", \"results\": [\n", kern->name);
    }
    printf("kernel %s (%d x %d tiles)\n\n", kern->name, kern->mr, kern->nr);
    printf("| threads | m x n x k | GFLOP/s best | median | FMA peak | best/peak |\n|---|---|---|---|---|---|\n");
    int first = 1;
    for (int ti = 0; ti < nthreads; ti++) {
        int t = threads[ti];
        hg_pool* pool = t > 1 ? hg_pool_create(t) : NULL;
        if (t > 1 && !pool) {
            fprintf(stderr, "cannot create a pool of %d threads\n", t);
            return 1;
        }
        double peak = fma_peak(pool, t);
        for (int si = 0; si < nshapes; si++) {
            shape sh = shapes[si];
            size_t na = (size_t)(sh.m * sh.k), nb = (size_t)(sh.k * sh.n), nc = (size_t)(sh.m * sh.n);
            float* a = aligned_alloc(64, (na * 4 + 63) & ~(size_t)63);
            float* b = aligned_alloc(64, (nb * 4 + 63) & ~(size_t)63);
            float* c = aligned_alloc(64, (nc * 4 + 63) & ~(size_t)63);
            if (!a || !b || !c) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
            uint64_t st = 12345;
            for (size_t i = 0; i < na; i++) a[i] = (float)((st = st * 6364136223846793005ull + 1) >> 40) * 0x1p-24f - 0.5f;
            for (size_t i = 0; i < nb; i++) b[i] = (float)((st = st * 6364136223846793005ull + 1) >> 40) * 0x1p-24f - 0.5f;
            memset(c, 0, nc * 4);
            double flops = 2.0 * (double)sh.m * (double)sh.n * (double)sh.k;
            // About 0.5 s of work per point unless --reps says otherwise, 3..50 runs.
            int r = reps > 0 ? reps : (int)fmin(50.0, fmax(3.0, 0.5 / (flops / (peak > 0 ? peak * 0.8e9 : 20e9))));
            run_sgemm(kname ? kern : NULL, sh, a, b, c, pool);  // warm up
            double times[64];
            for (int i = 0; i < r && i < 64; i++) {
                double t0 = now_s();
                run_sgemm(kname ? kern : NULL, sh, a, b, c, pool);
                times[i] = now_s() - t0;
            }
            int cnt = r < 64 ? r : 64;
            qsort(times, (size_t)cnt, sizeof(double), cmp_double);
            double best = flops / times[0] * 1e-9, med = flops / times[cnt / 2] * 1e-9;
            printf("| %d | %lldx%lldx%lld | %.1f | %.1f | %.1f | %.2f |\n", t, (long long)sh.m,
                   (long long)sh.n, (long long)sh.k, best, med, peak, peak > 0 ? best / peak : 0.0);
            fflush(stdout);
            if (js) {
                fprintf(js, "%s  {\"threads\": %d, \"m\": %lld, \"n\": %lld, \"k\": %lld, \"gflops_best\": %.3f, "
                        "\"gflops_median\": %.3f, \"fma_peak_gflops\": %.3f, \"runs\": %d}",
                        first ? "" : ",\n", t, (long long)sh.m, (long long)sh.n, (long long)sh.k, best, med,
                        peak, cnt);
                first = 0;
            }
            free(a);
            free(b);
            free(c);
        }
        hg_pool_destroy(pool);
    }
    if (js) {
        fprintf(js, "\n]}\n");
        fclose(js);
    }
    return 0;
}
