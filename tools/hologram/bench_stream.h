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

// The reference kernels: each traffic pattern written plainly in C, in three builds, run in
// parallel over the pool. The limit of a measured case is the best of them, so it is what the
// machine does, not what one way of compiling a loop does:
//   plain   - the loop compiled with the CLI's flags (the build's baseline ISA);
//   vector  - the same loop compiled for this machine (GCC target clones: AVX2, AVX-512);
//   nt      - explicit vector loads and non-temporal (streaming) stores, which skip reading
//             each destination line before writing it (x86-64 only; not for the read-only sum).
typedef enum stream_kernel {
    STREAM_COPY,    // d = a                   8 B/elem
    STREAM_ADD,     // d = a + b              12 B/elem
    STREAM_TRIAD,   // d = a + 3*b            12 B/elem
    STREAM_FUSED,   // y = relu(a*b+c)*0.5    16 B/elem
    STREAM_SUM,     // sum = sum(a) (read only) 4 B/elem
    STREAM_KERNEL_COUNT
} stream_kernel;
typedef enum stream_variant { STREAM_PLAIN, STREAM_VECTOR, STREAM_NT, STREAM_VARIANT_COUNT } stream_variant;

extern const char* const k_stream_variant_names[STREAM_VARIANT_COUNT];   // "plain", "vector", "nt"

// 1 when variant v of kernel k exists on this machine and build; else 0 with *why set.
int stream_available(stream_kernel k, stream_variant v, const char** why);
void stream_run(bench_pool* p, bench_arrays* arr, stream_kernel k, stream_variant v);
// Elements of k's output (every 7th checked; sum: the total) that differ from the C formula
// evaluated here, after stream_run.
size_t stream_check(const bench_arrays* arr, stream_kernel k);

// bench_stream_nt.c: the non-temporal builds, as range functions for bench_pool_run (x86-64).
void stream_copy_nt(void* arr, size_t begin, size_t end);
void stream_add_nt(void* arr, size_t begin, size_t end);
void stream_triad_nt(void* arr, size_t begin, size_t end);
void stream_fused_nt(void* arr, size_t begin, size_t end);

#endif
