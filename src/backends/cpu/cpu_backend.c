// The CPU backend's vtable: executors (a worker pool plus per-worker scratch), host memory
// (64-byte aligned; 2 MiB and more as anonymous mappings with transparent huge pages),
// compilation to a lane-block plan (cpu_compile.c) and launches (cpu_exec.c).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/cpu_internal.h"
#include "backends/cpu/gemm/gemm.h"
#include "base/config.h"
#include "base/dtype.h"
#include "base/error.h"

static int cpu_probe(char* reason, size_t reason_len, int* device_count) {
    if (reason_len) reason[0] = 0;
    *device_count = 1;
    return 1;
}

static hg_status cpu_device_info(int index, hg_device_info* out) {
    if (index != 0)
        return hg_error(HG_ERR_OUT_OF_RANGE, "cpu device index %d is out of range: the CPU "
                        "backend has 1 device", index);
    memset(out, 0, sizeof *out);
    out->backend = HG_BACKEND_CPU;
    out->index = 0;
    const char* arch =
#if defined(__x86_64__)
        "x86_64";
#elif defined(__aarch64__)
        "aarch64";
#else
        "cpu";
#endif
    const hg_cpu_kernels* k = hg_cpu_kernels_get();
    snprintf(out->name, sizeof out->name, "%s (%s, %s kernels; %s)", hg_cpu_model_name(), arch,
             k->name, hg_cpu_features());
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    out->memory_bytes = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
    out->compute_units = hg_config_num_threads(0);
    return HG_OK;
}

static void cpu_executor_destroy(void* state) {
    cpu_state* st = state;
    if (!st) return;
    hg_pool_destroy(st->pool);
    if (st->workers)
        for (int i = 0; i < st->nthreads; i++) {
            free(st->workers[i].arena);
            free(st->workers[i].shared);
        }
    free(st->workers);
    pthread_mutex_destroy(&st->lock);
    hg_cpu_mem_cache_release(&st->mem_cache);
    free(st);
}

static hg_status cpu_executor_create(const hg_executor_options* opts, void** out_state) {
    int n = opts && opts->num_threads > 0 ? opts->num_threads : hg_config_num_cores();
    if (n > HG_CONFIG_MAX_THREADS) n = HG_CONFIG_MAX_THREADS;
    cpu_state* st = calloc(1, sizeof *st);
    if (!st) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating a CPU executor");
    pthread_mutex_init(&st->lock, NULL);
    hg_cpu_mem_cache_init(&st->mem_cache, hg_config_cpu_memory_cache());
    st->stream_bytes = hg_config_stream_store_bytes();
    st->nthreads = n;
    st->workers = calloc((size_t)n, sizeof *st->workers);
    st->pool = st->workers ? hg_pool_create(n) : NULL;
    if (!st->pool) {
        cpu_executor_destroy(st);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "could not start %d CPU worker threads", n);
    }
    hg_fork_set(HG_FORK_GEMM, hg_cpu_gemm_fork);
    *out_state = st;
    return HG_OK;
}

static hg_status cpu_synchronize(void* state) {
    (void)state;  // launches run to completion before they return
    return HG_OK;
}

static int cpu_num_threads(void* state) { return ((cpu_state*)state)->nthreads; }

// ---- memory (allocation and its cache: cpu_memory.c) -------------------------------------
static hg_status cpu_mem_write(void* state, void* mem, size_t offset, const void* src, size_t n) {
    (void)state;
    if (n) memcpy((uint8_t*)mem + offset, src, n);
    return HG_OK;
}

static hg_status cpu_mem_read(void* state, const void* mem, size_t offset, void* dst, size_t n) {
    (void)state;
    if (n) memcpy(dst, (const uint8_t*)mem + offset, n);
    return HG_OK;
}

static hg_status cpu_mem_copy(void* state, void* dst, const void* src, size_t n) {
    (void)state;
    if (n) memmove(dst, src, n);
    return HG_OK;
}

static hg_status cpu_mem_fill(void* state, void* mem, size_t n, const void* value, size_t es) {
    (void)state;
    if (!n) return HG_OK;
    uint8_t* d = mem;
    memcpy(d, value, es);
    // Doubling copies: log2(n) memcpy calls.
    size_t done = 1;
    while (done < n) {
        size_t c = done < n - done ? done : n - done;
        memcpy(d + done * es, d, c * es);
        done += c;
    }
    return HG_OK;
}

// ---- programs -------------------------------------------------------------------------------
static int cpu_supports_op(hg_opcode op, hg_dtype type) {
    const hg_opinfo* info = hg_opinfo_of((unsigned)op);
    if (!info) return 0;
    if (!info->typed) return type == 0;
    if (!hg_dtype_valid((int)type)) return 0;
    return (info->types >> type) & 1u;
}

static hg_status cpu_kernel_compile(void* state, const hg_prog* prog, void** out_kernel) {
    (void)state;
    cpu_plan* p;
    hg_status s = hg_cpu_plan_build(prog, hg_cpu_kernels_get(), &p);
    if (s) return s;
    *out_kernel = p;
    return HG_OK;
}

static void cpu_kernel_destroy(void* state, void* kernel) {
    (void)state;
    hg_cpu_plan_free(kernel);
}

static hg_status check_config(const cpu_plan* p, const hg_launch_config* cfg) {
    if ((uint64_t)cfg->block.x * cfg->block.y * cfg->block.z > HG_MAX_BLOCK_LANES)
        return hg_error(HG_ERR_LAUNCH_CONFIG, "block (%u,%u,%u) has more than %u lanes",
                        cfg->block.x, cfg->block.y, cfg->block.z, HG_MAX_BLOCK_LANES);
    if (p->block_mode && (uint64_t)p->shared_static_bytes + cfg->shared_bytes > HG_CPU_MAX_SHARED_BYTES)
        return hg_error(HG_ERR_LAUNCH_CONFIG, "kernel '%s' needs %u bytes of static plus %u bytes "
                        "of dynamic shared memory, the CPU backend allows %u per block",
                        p->prog->name, p->shared_static_bytes, cfg->shared_bytes,
                        HG_CPU_MAX_SHARED_BYTES);
    return HG_OK;
}

static hg_status cpu_kernel_launch(void* state, void* kernel, const hg_launch_config* cfg,
                                   const hg_bound_arg* args, size_t nargs) {
    cpu_state* st = state;
    const cpu_plan* p = kernel;
    hg_status c = check_config(p, cfg);
    if (c) return c;
    pthread_mutex_lock(&st->lock);
    hg_status s = hg_cpu_launch(st, p, cfg, args, nargs);
    pthread_mutex_unlock(&st->lock);
    return s;
}

static hg_status cpu_kernel_launch_rows(void* state, void* kernel, const hg_launch_config* cfg,
                                        const hg_bound_arg* args, size_t nargs, uint64_t rows,
                                        const hg_row_args* ra) {
    cpu_state* st = state;
    hg_status c = check_config(kernel, cfg);
    if (c) return c;
    pthread_mutex_lock(&st->lock);
    hg_status s = hg_cpu_launch_rows(st, kernel, cfg, args, nargs, rows, ra);
    pthread_mutex_unlock(&st->lock);
    return s;
}

typedef struct host_job {
    void (*fn)(void*, int);
    void* ctx;
} host_job;

static void host_job_run(void* ctx, int worker) {
    host_job* j = ctx;
    j->fn(j->ctx, worker);
}

static hg_status cpu_host_parallel(void* state, int nworkers, void (*fn)(void*, int), void* ctx,
                                   int* out_nworkers) {
    cpu_state* st = state;
    int n = nworkers < 1 ? 1 : nworkers > st->nthreads ? st->nthreads : nworkers;
    if (out_nworkers) *out_nworkers = n;
    host_job job = {fn, ctx};
    pthread_mutex_lock(&st->lock);
    if (n == 1) fn(ctx, 0);  // no wake-up cost for small work
    else hg_pool_run(st->pool, n, host_job_run, &job);
    pthread_mutex_unlock(&st->lock);
    return HG_OK;
}

static hg_status cpu_sgemm(void* state, int trans_a, int trans_b, int64_t m, int64_t n,
                           int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                           int64_t ldb, float beta, float* c, int64_t ldc) {
    cpu_state* st = state;
    pthread_mutex_lock(&st->lock);
    hg_cpu_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, st->pool);
    pthread_mutex_unlock(&st->lock);
    return HG_OK;
}

// The serial products for kernels inside host_parallel (no lock, no pool: the caller's
// thread is one of the pool's workers).
static hg_status cpu_sgemm_serial(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                  float alpha, const float* a, int64_t lda, const float* b,
                                  int64_t ldb, float beta, float* c, int64_t ldc) {
    hg_cpu_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL);
    return HG_OK;
}

static hg_status cpu_dgemm_serial(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs,
                                  int64_t a_cs, const double* b, int64_t b_rs, int64_t b_cs,
                                  double* c, int64_t c_rs, int64_t c_cs) {
    return hg_cpu_dgemm(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, c_rs, c_cs, NULL);
}

// f32 only (the op layer sends other dtypes through its per-element path).
static hg_status cpu_gemm_strided_batched(void* state, hg_dtype t, int ta, int tb, int64_t m,
                                          int64_t n, int64_t k, double alpha, const void* a,
                                          int64_t lda, int64_t sa, const void* b, int64_t ldb,
                                          int64_t sb, double beta, void* c, int64_t ldc,
                                          int64_t sc, int64_t batch) {
    if (t != HG_DTYPE_F32)
        return hg_error(HG_ERR_UNSUPPORTED, "cpu gemm_strided_batched: dtype %s (f32 only)",
                        hg_dtype_name(t));
    cpu_state* st = state;
    pthread_mutex_lock(&st->lock);
    hg_cpu_sgemm_batched(ta, tb, m, n, k, (float)alpha, a, lda, sa, b, ldb, sb, (float)beta, c,
                         ldc, sc, batch, st->pool);
    pthread_mutex_unlock(&st->lock);
    return HG_OK;
}

static hg_status cpu_dgemm_strided(void* state, int64_t m, int64_t n, int64_t k, const double* a,
                                   int64_t a_rs, int64_t a_cs, const double* b, int64_t b_rs,
                                   int64_t b_cs, double* c, int64_t c_rs, int64_t c_cs) {
    cpu_state* st = state;
    pthread_mutex_lock(&st->lock);
    hg_status s = hg_cpu_dgemm(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, c_rs, c_cs, st->pool);
    pthread_mutex_unlock(&st->lock);
    return s;
}

// fork(): st->lock waits for the launch or library call in flight; the memory cache and the
// pool are used under it (the cache also by frees from any thread: a leaf lock).
static void cpu_fork(void* state, hg_fork_phase phase) {
    cpu_state* st = state;
    if (phase == HG_FORK_PREPARE) {
        pthread_mutex_lock(&st->lock);
        pthread_mutex_lock(&st->mem_cache.lock);
        hg_pool_fork(st->pool, phase);
        return;
    }
    hg_pool_fork(st->pool, phase);
    hg_fork_mutex(&st->mem_cache.lock, phase);
    hg_fork_mutex(&st->lock, phase);
}

const hg_backend_vtable hg_cpu_backend = {
    .api_version = HG_BACKEND_API_VERSION,
    .kind = HG_BACKEND_CPU,
    .name = "cpu",
    .probe = cpu_probe,
    .device_info = cpu_device_info,
    .executor_create = cpu_executor_create,
    .executor_destroy = cpu_executor_destroy,
    .synchronize = cpu_synchronize,
    .num_threads = cpu_num_threads,
    .host_visible = 1,
    .mem_alloc = hg_cpu_mem_alloc,
    .mem_free = hg_cpu_mem_free,
    .mem_write = cpu_mem_write,
    .mem_read = cpu_mem_read,
    .mem_copy = cpu_mem_copy,
    .mem_fill = cpu_mem_fill,
    .supports_op = cpu_supports_op,
    .max_shared_bytes = HG_CPU_MAX_SHARED_BYTES,
    .kernel_compile = cpu_kernel_compile,
    .kernel_destroy = cpu_kernel_destroy,
    .kernel_launch = cpu_kernel_launch,
    .kernel_launch_rows = cpu_kernel_launch_rows,
    .host_parallel = cpu_host_parallel,
    .sgemm = cpu_sgemm,
    .host_sgemm_serial = cpu_sgemm_serial,
    .host_dgemm_serial = cpu_dgemm_serial,
    .dgemm_strided = cpu_dgemm_strided,
    .gemm_strided_batched = cpu_gemm_strided_batched,
    .fork = cpu_fork,
};
