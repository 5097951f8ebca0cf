// bench_stream.h — the reference side of `hologram bench`: a small pthread parallel-for and
// STREAM-like kernels written plainly in C. They give the memory-bandwidth limit of a given
// traffic pattern on the same number of threads as the kernels being measured.
#ifndef HG_CLI_BENCH_STREAM_H
#define HG_CLI_BENCH_STREAM_H
#include <pthread.h>
#include <stddef.h>

typedef struct bench_pool bench_pool;

// Runs fn(ctx, begin, end) over [0, n) split into nthreads contiguous chunks (chunk boundaries on
// 64-byte lines for 4-byte elements). The calling thread takes the first chunk.
typedef void (*bench_range_fn)(void* ctx, size_t begin, size_t end);

bench_pool* bench_pool_create(int nthreads);   // NULL on failure
void bench_pool_destroy(bench_pool* p);
void bench_pool_run(bench_pool* p, size_t n, bench_range_fn fn, void* ctx);

typedef struct bench_arrays {
    float* a;
    float* b;
    float* c;
    float* d;   // output of copy/add/triad (so c stays an input of the fused kernel)
    float* y;   // output of the fused kernel
    size_t n;
    double sum;                // result of stream_sum
    pthread_mutex_t sum_lock;
} bench_arrays;

// Allocates five arrays of n floats (huge-page aligned and advised) and initialises them in
// parallel on the pool so the pages are faulted in by the threads that use them.
int bench_arrays_alloc(bench_pool* p, size_t n, bench_arrays* out);
void bench_arrays_free(bench_arrays* arr);

// The reference kernels (parallel over the pool).
void stream_copy(bench_pool* p, bench_arrays* arr);    // d = a            8 B/elem
void stream_add(bench_pool* p, bench_arrays* arr);     // d = a + b       12 B/elem
void stream_triad(bench_pool* p, bench_arrays* arr);   // d = a + 3*b     12 B/elem
void stream_fused(bench_pool* p, bench_arrays* arr);   // y = relu(a*b+c)*0.5   16 B/elem
void stream_sum(bench_pool* p, bench_arrays* arr);     // sum = sum(a) (read only) 4 B/elem

#endif
