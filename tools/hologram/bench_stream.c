// bench_stream.c — pthread parallel-for and STREAM-like C kernels for `hologram bench`.
#include "bench_stream.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <math.h>

struct bench_pool {
    int nthreads;
    pthread_t* threads;
    pthread_mutex_t mu;
    pthread_cond_t start_cv;
    pthread_cond_t done_cv;
    uint64_t generation;     // bumped for each job; workers run when it changes
    int pending;             // workers still running the current job
    int quit;
    bench_range_fn fn;
    void* ctx;
    size_t n;
};

typedef struct worker_arg {
    bench_pool* pool;
    int index;
} worker_arg;

// Chunk t of [0, n): equal parts rounded up to 16 elements (a 64-byte line of floats), so that
// no two threads write the same cache line.
static void chunk_of(size_t n, int nthreads, int t, size_t* begin, size_t* end) {
    size_t per = (n + (size_t)nthreads - 1) / (size_t)nthreads;
    per = (per + 15) & ~(size_t)15;
    size_t b = per * (size_t)t, e = b + per;
    if (b > n) b = n;
    if (e > n) e = n;
    *begin = b;
    *end = e;
}

static void* worker_main(void* p_) {
    worker_arg* wa = p_;
    bench_pool* p = wa->pool;
    int index = wa->index;
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->generation == seen && !p->quit) pthread_cond_wait(&p->start_cv, &p->mu);
        if (p->quit) { pthread_mutex_unlock(&p->mu); return NULL; }
        seen = p->generation;
        bench_range_fn fn = p->fn;
        void* ctx = p->ctx;
        size_t n = p->n;
        pthread_mutex_unlock(&p->mu);

        size_t b, e;
        chunk_of(n, p->nthreads, index, &b, &e);
        if (b < e) fn(ctx, b, e);

        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done_cv);
        pthread_mutex_unlock(&p->mu);
    }
}

bench_pool* bench_pool_create(int nthreads) {
    if (nthreads < 1) nthreads = 1;
    bench_pool* p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nthreads = nthreads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    p->threads = calloc((size_t)nthreads, sizeof *p->threads);
    if (!p->threads) { free(p); return NULL; }
    for (int t = 1; t < nthreads; t++) {
        worker_arg* wa = malloc(sizeof *wa);
        if (!wa || pthread_create(&p->threads[t], NULL, worker_main, (wa->pool = p, wa->index = t, wa)) != 0) {
            free(wa);
            p->nthreads = t;   // only the started workers are joined
            bench_pool_destroy(p);
            return NULL;
        }
    }
    return p;
}

void bench_pool_destroy(bench_pool* p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->start_cv);
    pthread_mutex_unlock(&p->mu);
    for (int t = 1; t < p->nthreads; t++) pthread_join(p->threads[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->start_cv);
    pthread_cond_destroy(&p->done_cv);
    free(p->threads);
    free(p);
}

void bench_pool_run(bench_pool* p, size_t n, bench_range_fn fn, void* ctx) {
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->pending = p->nthreads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->start_cv);
    pthread_mutex_unlock(&p->mu);

    size_t b, e;
    chunk_of(n, p->nthreads, 0, &b, &e);
    if (b < e) fn(ctx, b, e);

    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

// --- arrays -----------------------------------------------------------------------------------
static float* alloc_floats(size_t n) {
    void* ptr = NULL;
    size_t bytes = n * sizeof(float);
    size_t align = (size_t)2 << 20;
    bytes = (bytes + align - 1) & ~(align - 1);
    if (bytes == 0) bytes = align;
    if (posix_memalign(&ptr, align, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    // Transparent huge pages: fewer TLB misses and page faults on these large arrays. Advice
    // only; failure (THP disabled) is harmless.
    (void)madvise(ptr, bytes, MADV_HUGEPAGE);
#endif
    return ptr;
}

// Deterministic, varied values in [-1, 1) so relu keeps about half of the elements.
static void init_range(void* ctx, size_t b, size_t e) {
    bench_arrays* arr = ctx;
    for (size_t i = b; i < e; i++) {
        uint32_t h = (uint32_t)i * 2654435761u;
        arr->a[i] = (float)(h >> 8) / 8388608.0f - 1.0f;
        arr->b[i] = (float)((h * 7u + 13u) >> 8) / 8388608.0f - 1.0f;
        arr->c[i] = (float)((h ^ 0x5bd1e995u) >> 8) / 16777216.0f - 0.5f;
        arr->d[i] = 0.0f;
        arr->y[i] = 0.0f;
    }
}

int bench_arrays_alloc(bench_pool* p, size_t n, bench_arrays* out) {
    memset(out, 0, sizeof *out);
    pthread_mutex_init(&out->sum_lock, NULL);
    out->n = n;
    out->a = alloc_floats(n);
    out->b = alloc_floats(n);
    out->c = alloc_floats(n);
    out->d = alloc_floats(n);
    out->y = alloc_floats(n);
    if (!out->a || !out->b || !out->c || !out->d || !out->y) {
        bench_arrays_free(out);
        return -1;
    }
    bench_pool_run(p, n, init_range, out);
    return 0;
}

void bench_arrays_free(bench_arrays* arr) {
    free(arr->a);
    free(arr->b);
    free(arr->c);
    free(arr->d);
    free(arr->y);
    pthread_mutex_destroy(&arr->sum_lock);
    memset(arr, 0, sizeof *arr);
}

// --- kernels ------------------------------------------------------------------------------------
// Written as a user would write them. GCC only vectorizes the select in relu when it may assume
// comparisons do not trap (the library is built with -fno-trapping-math for the same reason), so
// the reference gets that flag too: otherwise the "limit" would be a scalar loop, not memory.
#if defined(__GNUC__) && !defined(__clang__)
#define HG_VECTORIZE_SELECT __attribute__((optimize("no-trapping-math")))
#else
#define HG_VECTORIZE_SELECT
#endif
// Each body is compiled twice: into the plain range function (the build's flags) and into the
// vector one, which GCC clones for AVX2 and AVX-512 and picks between at load time.
#define BODY static inline __attribute__((always_inline))
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HAVE_VECTOR_BUILD 1
#define VECTOR_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define HAVE_VECTOR_BUILD 0
#define VECTOR_CLONES
#endif

BODY void copy_body(bench_arrays* arr, size_t b, size_t e) {
    const float* restrict a = arr->a;
    float* restrict d = arr->d;
    for (size_t i = b; i < e; i++) d[i] = a[i];
}

BODY void add_body(bench_arrays* arr, size_t b, size_t e) {
    const float* restrict a = arr->a;
    const float* restrict bb = arr->b;
    float* restrict d = arr->d;
    for (size_t i = b; i < e; i++) d[i] = a[i] + bb[i];
}

BODY void triad_body(bench_arrays* arr, size_t b, size_t e) {
    const float* restrict a = arr->a;
    const float* restrict bb = arr->b;
    float* restrict d = arr->d;
    for (size_t i = b; i < e; i++) d[i] = a[i] + 3.0f * bb[i];
}

BODY void fused_body(bench_arrays* arr, size_t b, size_t e) {
    const float* restrict a = arr->a;
    const float* restrict bb = arr->b;
    const float* restrict c = arr->c;
    float* restrict y = arr->y;
    for (size_t i = b; i < e; i++) {
        float t = a[i] * bb[i];
        t = t + c[i];
        y[i] = (t > 0.0f ? t : 0.0f) * 0.5f;
    }
}

// Read-only: each range sums into 16 float accumulators (a vectorizable pattern, as a user
// would write a fast sum) and adds its partial sum into arr->sum under the lock.
BODY void sum_body(bench_arrays* arr, size_t b, size_t e) {
    const float* restrict a = arr->a;
    float acc[16] = {0};
    size_t i = b;
    for (; i + 16 <= e; i += 16)
        for (int j = 0; j < 16; j++) acc[j] += a[i + j];
    double s = 0;
    for (; i < e; i++) s += a[i];
    for (int j = 0; j < 16; j++) s += acc[j];
    pthread_mutex_lock(&arr->sum_lock);
    arr->sum += s;
    pthread_mutex_unlock(&arr->sum_lock);
}

#define RANGES(name)                                                                        \
    HG_VECTORIZE_SELECT static void name##_plain(void* ctx, size_t b, size_t e) {           \
        name##_body(ctx, b, e);                                                             \
    }                                                                                       \
    HG_VECTORIZE_SELECT VECTOR_CLONES static void name##_vector(void* ctx, size_t b,        \
                                                                size_t e) {                 \
        name##_body(ctx, b, e);                                                             \
    }
RANGES(copy)
RANGES(add)
RANGES(triad)
RANGES(fused)
RANGES(sum)

const char* const k_stream_variant_names[STREAM_VARIANT_COUNT] = {"plain", "vector", "nt"};

#if defined(__x86_64__)
#define NT(fn) fn
#else
#define NT(fn) NULL
#endif
static const bench_range_fn k_ranges[STREAM_KERNEL_COUNT][STREAM_VARIANT_COUNT] = {
    [STREAM_COPY] = {copy_plain, copy_vector, NT(stream_copy_nt)},
    [STREAM_ADD] = {add_plain, add_vector, NT(stream_add_nt)},
    [STREAM_TRIAD] = {triad_plain, triad_vector, NT(stream_triad_nt)},
    [STREAM_FUSED] = {fused_plain, fused_vector, NT(stream_fused_nt)},
    [STREAM_SUM] = {sum_plain, sum_vector, NULL},
};

int stream_available(stream_kernel k, stream_variant v, const char** why) {
    if (v == STREAM_VECTOR && !HAVE_VECTOR_BUILD) {
        *why = "no target clones in this build (x86-64 GCC only)";
        return 0;
    }
    if (v == STREAM_NT && !k_ranges[k][v]) {
        *why = k == STREAM_SUM ? "read only: nothing to store" : "no streaming stores (x86-64 only)";
        return 0;
    }
    return 1;
}

void stream_run(bench_pool* p, bench_arrays* arr, stream_kernel k, stream_variant v) {
    if (k == STREAM_SUM) arr->sum = 0;
    bench_pool_run(p, arr->n, k_ranges[k][v], arr);
}

size_t stream_check(const bench_arrays* arr, stream_kernel k) {
    if (k == STREAM_SUM) {   // f32 lanes: within 1e-6 of the sum of magnitudes
        double s = 0, mag = 0;
        for (size_t i = 0; i < arr->n; i++) {
            s += arr->a[i];
            mag += fabs(arr->a[i]);
        }
        return fabs(arr->sum - s) <= 1e-6 * mag ? 0 : 1;
    }
    size_t bad = 0, tail = arr->n > 16 ? arr->n - 16 : 0;
    // Every 7th element, and the last 16 (the ranges' scalar tails).
    for (size_t i = 0; i < arr->n; i = i + 7 < tail ? i + 7 : (i < tail ? tail : i + 1)) {
        float a = arr->a[i], b = arr->b[i], c = arr->c[i], t = a * b;
        t = t + c;
        float want = k == STREAM_COPY    ? a
                     : k == STREAM_ADD   ? a + b
                     : k == STREAM_TRIAD ? a + 3.0f * b
                                         : (t > 0.0f ? t : 0.0f) * 0.5f;
        float got = k == STREAM_FUSED ? arr->y[i] : arr->d[i];
        bad += got != want;
    }
    return bad;
}
