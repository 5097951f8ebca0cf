// The CUDA backend's vtable: executors on a device (the GPU through the driver API, or the
// host emulation when HOLOGRAM_CUDA_EMULATE=1), device memory through the caching allocator,
// Atlas ISA programs compiled to CUDA C (cuda_codegen.c) and queued with an argument block that
// names the launch, out-of-bounds reports turned into HG_ERR_OUT_OF_BOUNDS by the next
// synchronizing call (cuda_async.c), and gemm through cuBLAS. Nothing here needs CUDA at build
// time: the libraries are loaded on first use (cuda_driver.c).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cuda/cuda_internal.h"
#include "base/dtype.h"
#include "base/error.h"

#define CUDA_MAX_SHARED (48u * 1024u)

static const cuda_impl* impl_now(void) {
    return hg_cuda_emulating() ? &hg_cuda_emu_impl : &hg_cuda_real_impl;
}

hg_status hg_cuda_mark_dead(cuda_dev* d, const char* what) {
    if (!d->dead) {
        d->dead = 1;
        snprintf(d->dead_msg, sizeof d->dead_msg, "%s", what);
    }
    return hg_error(HG_ERR_EXECUTOR_DEAD, "the CUDA executor is unusable (%s); destroy it and "
                    "create a new one", d->dead_msg);
}

static hg_status alive(cuda_dev* d) {
    return d->dead ? hg_cuda_mark_dead(d, d->dead_msg) : HG_OK;
}

// ---- devices ----------------------------------------------------------------------------------
static int cuda_probe(char* reason, size_t reason_len, int* device_count) {
    if (hg_cuda_emulating()) {
        *device_count = 1;
        return 1;
    }
    const hg_cuda_api* a = hg_cuda_driver(reason, reason_len);
    if (!a) return 0;
    int n = 0;
    CUresult r = a->cuDeviceGetCount(&n);
    if (r != HG_CUDA_SUCCESS) {
        snprintf(reason, reason_len, "no device: cuDeviceGetCount failed: %s",
                 hg_cuda_result_text(a, r));
        return 0;
    }
    *device_count = n;
    if (n < 1) snprintf(reason, reason_len, "no device: the CUDA driver found no GPU");
    return n > 0;
}

static hg_status cuda_device_info(int index, hg_device_info* out) {
    cuda_dev d;
    memset(&d, 0, sizeof d);
    d.impl = impl_now();
    hg_status s = d.impl->open(&d, index);
    if (s) return s;
    memset(out, 0, sizeof *out);
    out->backend = HG_BACKEND_CUDA;
    out->index = index;
    snprintf(out->name, sizeof out->name, "%.200s (compute capability %d.%d)", d.name, d.cc_major,
             d.cc_minor);
    out->memory_bytes = d.total_bytes;
    out->compute_units = d.sm_count;
    d.impl->close(&d);
    return HG_OK;
}

// ---- fork (base/fork.h) -----------------------------------------------------------------------
// CUDA forbids using a context after fork(): in the child every call on an executor made before
// fails fast (a new executor made in the child works where the driver allows).
static void cuda_fork(void* state, hg_fork_phase phase) {
    cuda_dev* d = state;
    if (phase == HG_FORK_PREPARE) {
        pthread_mutex_lock(&d->lock);
        pthread_mutex_lock(&d->alloc.lock);
        return;
    }
    hg_fork_mutex(&d->alloc.lock, phase);
    hg_fork_mutex(&d->lock, phase);
    if (phase == HG_FORK_CHILD && !d->dead) {
        d->dead = 1;
        snprintf(d->dead_msg, sizeof d->dead_msg, "the CUDA executor was created before fork(); "
                 "create a new one in the child");
    }
}

static void cuda_globals_fork(hg_fork_phase phase) {
    hg_cuda_kcache_fork(phase);
    hg_cuda_emu_fork(phase);
}

// ---- executors --------------------------------------------------------------------------------
static void cuda_executor_destroy(void* state) {
    cuda_dev* d = state;
    if (!d) return;
    if (!d->dead) d->impl->sync(d);   // errors of queued work die with the executor
    hg_cuda_alloc_destroy(d);
    if (d->impl == &hg_cuda_emu_impl) free(d->err_host);
    d->impl->close(d);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

static hg_status cuda_executor_create(const hg_executor_options* opts, void** out_state) {
    cuda_dev* d = calloc(1, sizeof *d);
    if (!d) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA executor");
    d->impl = impl_now();
    d->device = opts ? opts->device : 0;
    pthread_mutex_init(&d->lock, NULL);
    pthread_mutex_init(&d->alloc.lock, NULL);
    hg_fork_set(HG_FORK_CUDA, cuda_globals_fork);
    hg_status s = d->impl->open(d, d->device);
    if (s) {
        pthread_mutex_destroy(&d->alloc.lock);
        pthread_mutex_destroy(&d->lock);
        free(d);
        return s;
    }
    if (d->impl == &hg_cuda_emu_impl) {
        d->err_host = calloc(1, sizeof(hg_cuda_kerr));
        d->err_dev = d->err_host;
        if (!d->err_host) {
            cuda_executor_destroy(d);
            return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA executor");
        }
    }
    *out_state = d;
    return HG_OK;
}

static hg_status cuda_synchronize(void* state) {
    cuda_dev* d = state;
    hg_status s = alive(d);
    if (s) return s;
    pthread_mutex_lock(&d->lock);
    s = hg_cuda_wait_all(d, "hg_executor_synchronize");
    pthread_mutex_unlock(&d->lock);
    return s;
}

static int cuda_num_threads(void* state) {
    cuda_dev* d = state;
    return d->sm_count > 0 ? d->sm_count : 1;
}

// ---- memory -----------------------------------------------------------------------------------
static hg_status cuda_mem_alloc(void* state, size_t nbytes, int zero, void** out) {
    cuda_dev* d = state;
    hg_status s = alive(d);
    if (s) return s;
    void* p = NULL;
    if ((s = hg_cuda_alloc_get(d, nbytes, &p))) return s;
    if (zero) {
        pthread_mutex_lock(&d->lock);
        s = d->impl->zero(d, p, nbytes);
        pthread_mutex_unlock(&d->lock);
        if (s) {
            hg_cuda_alloc_put(d, p);
            return s;
        }
    }
    *out = p;
    return HG_OK;
}

static void cuda_mem_free(void* state, void* mem) { hg_cuda_alloc_put(state, mem); }

#define LOCKED(d, expr)                          \
    do {                                         \
        hg_status s_ = alive(d);                 \
        if (s_) return s_;                       \
        pthread_mutex_lock(&(d)->lock);          \
        s_ = (expr);                             \
        pthread_mutex_unlock(&(d)->lock);        \
        return s_;                               \
    } while (0)

static hg_status cuda_mem_write(void* state, void* mem, size_t offset, const void* src, size_t n) {
    cuda_dev* d = state;
    LOCKED(d, d->impl->h2d(d, (char*)mem + offset, src, n));
}

// A host read waits for the stream, so it also reports what queued launches left.
static hg_status read_locked(cuda_dev* d, void* dst, const void* src, size_t n) {
    hg_status s = d->impl->d2h(d, dst, src, n);
    return s ? s : hg_cuda_report(d, d->launch_seq, "a host read of device memory");
}

static hg_status cuda_mem_read(void* state, const void* mem, size_t offset, void* dst, size_t n) {
    cuda_dev* d = state;
    LOCKED(d, read_locked(d, dst, (const char*)mem + offset, n));
}

static hg_status cuda_mem_copy(void* state, void* dst, const void* src, size_t n) {
    cuda_dev* d = state;
    LOCKED(d, d->impl->d2d(d, dst, src, n));
}

// A pattern fill through a host buffer of the pattern repeated (zero patterns: a memset).
static hg_status fill_locked(cuda_dev* d, void* mem, size_t n, const void* value, size_t es) {
    int allzero = 1;
    for (size_t i = 0; i < es; i++) allzero &= ((const unsigned char*)value)[i] == 0;
    if (allzero) return d->impl->zero(d, mem, n * es);
    size_t chunk_elems = ((size_t)1 << 20) / es;
    if (chunk_elems > n) chunk_elems = n;
    unsigned char* host = malloc(chunk_elems * es + 1);
    if (!host) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of host memory filling a CUDA buffer");
    for (size_t i = 0; i < chunk_elems; i++) memcpy(host + i * es, value, es);
    hg_status s = HG_OK;
    for (size_t done = 0; done < n && !s; done += chunk_elems) {
        size_t c = n - done < chunk_elems ? n - done : chunk_elems;
        s = d->impl->h2d(d, (char*)mem + done * es, host, c * es);
    }
    free(host);
    return s;
}

static hg_status cuda_mem_fill(void* state, void* mem, size_t n, const void* value, size_t es) {
    cuda_dev* d = state;
    LOCKED(d, fill_locked(d, mem, n, value, es));
}

// ---- kernels ----------------------------------------------------------------------------------
static int cuda_supports_op(hg_opcode op, hg_dtype type) {
    // The code generator covers every instruction and type the validator accepts.
    return (unsigned)op < HG_OPCODE_COUNT && (unsigned)type < HG_DTYPE_COUNT;
}

static hg_status cuda_kernel_compile(void* state, const hg_prog* prog, void** out_kernel) {
    cuda_dev* d = state;
    hg_status s = alive(d);
    if (s) return s;
    cuda_kernel* k = calloc(1, sizeof *k);
    if (!k) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory compiling a CUDA kernel");
    k->prog = prog;
    k->nparams = prog->nparams;
    k->threaded = prog->nshared > 0;
    for (uint32_t i = 0; i < prog->ninstrs && !k->threaded; i++)
        k->threaded = prog->instrs[i].op == HG_OP_BAR || prog->instrs[i].op == HG_OP_SHFL;
    char* src = NULL;
    size_t len = 0;
    if ((s = hg_cuda_codegen(prog, &src, &len))) {
        free(k);
        return s;
    }
    pthread_mutex_lock(&d->lock);
    s = d->impl->load(d, src, len, k);
    pthread_mutex_unlock(&d->lock);
    free(src);
    if (s) {
        free(k);
        return hg_error_prefix(s, "compiling kernel '%s' for CUDA", prog->name);
    }
    *out_kernel = k;
    return HG_OK;
}

static void cuda_kernel_destroy(void* state, void* kernel) {
    cuda_dev* d = state;
    cuda_kernel* k = kernel;
    if (!k) return;
    pthread_mutex_lock(&d->lock);
    hg_cuda_kernel_retire(d, k);
    d->impl->unload(d, k);
    pthread_mutex_unlock(&d->lock);
    free(k);
}

// The element size of the program's unsized shared array (0 when it has none).
static size_t dyn_elem_size(const hg_prog* p) {
    for (uint32_t i = 0; i < p->nshared; i++)
        if (!p->shared[i].count) return hg_dtype_size((hg_dtype)p->shared[i].dtype);
    return 0;
}

static hg_status cuda_kernel_launch(void* state, void* kernel, const hg_launch_config* cfg,
                                    const hg_bound_arg* args, size_t nargs) {
    cuda_dev* d = state;
    cuda_kernel* k = kernel;
    hg_status s = alive(d);
    if (s) return s;
    size_t size = hg_cuda_kargs_size(k->nparams);
    unsigned char blob[64 * sizeof(hg_cuda_karg) + 16];
    if (size > sizeof blob || nargs != k->nparams)
        return hg_error(HG_ERR_INTERNAL, "cuda launch: %zu arguments for %u parameters", nargs,
                        k->nparams);
    memset(blob, 0, size);
    for (size_t i = 0; i < nargs; i++) {
        hg_cuda_karg a = {(uint64_t)(uintptr_t)args[i].base, args[i].count, args[i].bits};
        memcpy(blob + i * sizeof a, &a, sizeof a);
    }
    uint64_t errp = (uint64_t)(uintptr_t)d->err_dev;
    memcpy(blob + hg_cuda_kargs_err_offset(k->nparams), &errp, 8);
    size_t des = dyn_elem_size(k->prog);
    uint64_t dyn = des ? cfg->shared_bytes / des : 0;
    memcpy(blob + hg_cuda_kargs_dyn_offset(k->nparams), &dyn, 8);
    // The launch's number and kernel go into the block: an out-of-bounds record names them.
    uint64_t launch[2] = {0, (uint64_t)(uintptr_t)k};
    size_t lo = hg_cuda_kargs_launch_offset(k->nparams);
    pthread_mutex_lock(&d->lock);
    launch[0] = d->launch_seq + 1;
    memcpy(blob + lo, launch, sizeof launch);
    s = d->impl->launch(d, k, cfg, blob, size);
    if (!s) k->last_seq = d->launch_seq = launch[0];
    pthread_mutex_unlock(&d->lock);
    return s;
}

static hg_status cuda_sgemm(void* state, int ta, int tb, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                            float beta, float* c, int64_t ldc) {
    cuda_dev* d = state;
    LOCKED(d, d->impl->sgemm(d, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
}

static hg_status cuda_gemm_ex(void* state, hg_dtype t, int ta, int tb, int64_t m, int64_t n,
                             int64_t k, double alpha, const void* a, int64_t lda, const void* b,
                             int64_t ldb, double beta, void* c, int64_t ldc) {
    cuda_dev* d = state;
    if (t != HG_DTYPE_F64 && t != HG_DTYPE_F16 && t != HG_DTYPE_BF16)
        return hg_error(HG_ERR_UNSUPPORTED, "cuda gemm: dtype %s (f64, f16 and bf16 only; f32 "
                        "goes to sgemm)", hg_dtype_name(t));
    LOCKED(d, d->impl->gemm_ex(d, t, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
}

static hg_status cuda_gemm_strided_batched(void* state, hg_dtype t, int ta, int tb, int64_t m,
                                           int64_t n, int64_t k, double alpha, const void* a,
                                           int64_t lda, int64_t sa, const void* b, int64_t ldb,
                                           int64_t sb, double beta, void* c, int64_t ldc,
                                           int64_t sc, int64_t batch) {
    cuda_dev* d = state;
    if (t != HG_DTYPE_F32 && t != HG_DTYPE_F64 && t != HG_DTYPE_F16 && t != HG_DTYPE_BF16)
        return hg_error(HG_ERR_UNSUPPORTED, "cuda batched gemm: dtype %s (f32, f64, f16 and bf16 "
                        "only)", hg_dtype_name(t));
    hg_status s = alive(d);
    if (s) return s;
    // Batches beyond what one library call takes go in several calls, in order.
    const int64_t es = (int64_t)hg_dtype_size(t), most = d->impl->max_batch;
    pthread_mutex_lock(&d->lock);
    for (int64_t i = 0; i < batch && !s; i += most) {
        int64_t nb = batch - i < most ? batch - i : most;
        s = d->impl->gemm_batched(d, t, ta, tb, m, n, k, alpha, (const char*)a + i * sa * es, lda,
                                  sa, (const char*)b + i * sb * es, ldb, sb, beta,
                                  (char*)c + i * sc * es, ldc, sc, nb);
    }
    pthread_mutex_unlock(&d->lock);
    return s;
}

const hg_backend_vtable hg_cuda_backend = {
    .api_version = HG_BACKEND_API_VERSION,
    .kind = HG_BACKEND_CUDA,
    .name = "cuda",
    .probe = cuda_probe,
    .device_info = cuda_device_info,
    .executor_create = cuda_executor_create,
    .executor_destroy = cuda_executor_destroy,
    .synchronize = cuda_synchronize,
    .num_threads = cuda_num_threads,
    .host_visible = 0,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .mem_write = cuda_mem_write,
    .mem_read = cuda_mem_read,
    .mem_copy = cuda_mem_copy,
    .mem_fill = cuda_mem_fill,
    .supports_op = cuda_supports_op,
    .max_shared_bytes = CUDA_MAX_SHARED,
    .kernel_compile = cuda_kernel_compile,
    .kernel_destroy = cuda_kernel_destroy,
    .kernel_launch = cuda_kernel_launch,
    .kernel_launch_rows = NULL,   // device memory: the op layer's row layouts are host paths
    .host_parallel = NULL,   // device memory: the op layer's host paths do not apply
    .sgemm = cuda_sgemm,
    .gemm_ex = cuda_gemm_ex,
    .gemm_strided_batched = cuda_gemm_strided_batched,
    .set_stream = hg_cuda_set_stream,
    .get_stream = hg_cuda_get_stream,
    .event_create = hg_cuda_event_create,
    .event_destroy = hg_cuda_event_destroy,
    .event_record = hg_cuda_event_record,
    .event_synchronize = hg_cuda_event_synchronize,
    .event_query = hg_cuda_event_query,
    .event_elapsed_ms = hg_cuda_event_elapsed_ms,
    .event_wait = hg_cuda_event_wait,
    .fork = cuda_fork,
};
