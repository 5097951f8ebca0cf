// The CUDA backend's GPU device (see cuda_internal.h): the driver API on the device's primary
// context with one non-blocking stream per executor, kernels compiled by NVRTC for the device's
// architecture (cubin when NVRTC can emit it, else PTX for the driver's JIT) through the kernel
// caches, host<->device copies through two pinned staging buffers so that copying into pinned
// memory overlaps the DMA of the previous chunk, and cuBLAS for gemm. Launches, copies, memsets
// and cuBLAS calls are queued on the current stream (the executor's own, or the one given to
// hg_executor_set_stream) and return at once; device->host copies wait for the stream (the host
// reads the data), and so does sync.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cuda/cuda_internal.h"
#include "base/config.h"
#include "base/error.h"

#define STAGE_BYTES ((size_t)4 << 20)   // per staging buffer
#define DIRECT_BYTES ((size_t)64 << 10) // smaller copies go straight from pageable memory

typedef struct real_state {
    const hg_cuda_api* api;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;          // the executor's own stream
    CUevent switched;         // recorded on the old stream at a switch, waited for by the new
    void* stage[2];           // pinned staging buffers
    CUevent stage_done[2];    // the DMA that last used each buffer
    cublasHandle_t blas;      // created on first sgemm
    char arch[16];            // "sm_90"
} real_state;

static real_state* st_of(cuda_dev* d) { return d->impl_state; }

// The stream work is queued on now.
static CUstream cur(cuda_dev* d) { return d->stream ? (CUstream)d->stream : st_of(d)->stream; }

// Driver call with a message; sticky errors kill the executor.
static hg_status check(cuda_dev* d, CUresult r, const char* what) {
    if (r == HG_CUDA_SUCCESS) return HG_OK;
    real_state* s = st_of(d);
    const char* text = hg_cuda_result_text(s ? s->api : NULL, r);
    if (r == HG_CUDA_ERROR_OUT_OF_MEMORY)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: %s", what, text);
    if (r == HG_CUDA_ERROR_ILLEGAL_ADDRESS || r == HG_CUDA_ERROR_LAUNCH_FAILED || r == 999 ||
        r == 214 /* ECC uncorrectable */ || r == 710 /* assert */ || r == 702 /* timeout */) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s: %s", what, text);
        return hg_cuda_mark_dead(d, msg);
    }
    return hg_error(HG_ERR_EXECUTION, "%s: %s", what, text);
}

static hg_status bind(cuda_dev* d) {
    real_state* s = st_of(d);
    return check(d, s->api->cuCtxSetCurrent(s->ctx), "cuCtxSetCurrent");
}

static void real_close(cuda_dev* d) {
    real_state* s = st_of(d);
    if (!s) return;
    const hg_cuda_api* a = s->api;
    if (s->ctx) a->cuCtxSetCurrent(s->ctx);
    if (s->blas) {
        const hg_cublas_api* b = hg_cuda_cublas(NULL, 0);
        if (b) b->cublasDestroy(s->blas);
    }
    for (int i = 0; i < 2; i++) {
        if (s->stage_done[i]) a->cuEventDestroy(s->stage_done[i]);
        if (s->stage[i]) a->cuMemFreeHost(s->stage[i]);
    }
    if (d->err_host) a->cuMemFreeHost(d->err_host);
    d->err_host = NULL;
    if (s->switched) a->cuEventDestroy(s->switched);
    if (s->stream) a->cuStreamDestroy(s->stream);
    if (s->ctx) a->cuDevicePrimaryCtxRelease(s->dev);
    free(s);
    d->impl_state = NULL;
}

static hg_status real_open(cuda_dev* d, int device) {
    char why[1024];
    const hg_cuda_api* a = hg_cuda_driver(why, sizeof why);
    if (!a) return hg_error(HG_ERR_BACKEND_UNAVAILABLE, "cuda: %s", why);
    real_state* s = calloc(1, sizeof *s);
    if (!s) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory opening a CUDA device");
    s->api = a;
    d->impl_state = s;
    int count = 0;
    hg_status st = check(d, a->cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (!st && (device < 0 || device >= count))
        st = hg_error(HG_ERR_OUT_OF_RANGE, "cuda device %d does not exist (this machine has %d)",
                      device, count);
    if (!st) st = check(d, a->cuDeviceGet(&s->dev, device), "cuDeviceGet");
    if (!st) st = check(d, a->cuDeviceGetName(d->name, (int)sizeof d->name, s->dev), "cuDeviceGetName");
    if (!st) st = check(d, a->cuDeviceGetAttribute(&d->cc_major, HG_CU_ATTR_CC_MAJOR, s->dev), "cuDeviceGetAttribute");
    if (!st) st = check(d, a->cuDeviceGetAttribute(&d->cc_minor, HG_CU_ATTR_CC_MINOR, s->dev), "cuDeviceGetAttribute");
    if (!st) st = check(d, a->cuDeviceGetAttribute(&d->sm_count, HG_CU_ATTR_MULTIPROCESSOR_COUNT, s->dev), "cuDeviceGetAttribute");
    size_t total = 0;
    if (!st) st = check(d, a->cuDeviceTotalMem(&total, s->dev), "cuDeviceTotalMem");
    d->total_bytes = total;
    if (!st) st = check(d, a->cuDevicePrimaryCtxRetain(&s->ctx, s->dev), "cuDevicePrimaryCtxRetain");
    if (!st) st = bind(d);
    if (!st) st = check(d, a->cuStreamCreate(&s->stream, HG_CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (!st) st = check(d, a->cuEventCreate(&s->switched, HG_CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    // The out-of-bounds record lives in mapped pinned memory: kernels write it directly and the
    // host reads it after a wait for the launch that wrote it, without a copy.
    void* eh = NULL;
    if (!st) st = check(d, a->cuMemHostAlloc(&eh, sizeof(hg_cuda_kerr), HG_CU_MEMHOSTALLOC_DEVICEMAP | HG_CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
    if (!st) {
        d->err_host = eh;
        memset(eh, 0, sizeof(hg_cuda_kerr));
        CUdeviceptr ed = 0;
        st = check(d, a->cuMemHostGetDevicePointer(&ed, eh, 0), "cuMemHostGetDevicePointer");
        d->err_dev = (void*)(uintptr_t)ed;
    }
    for (int i = 0; i < 2 && !st; i++) {
        st = check(d, a->cuMemHostAlloc(&s->stage[i], STAGE_BYTES, HG_CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
        if (!st) st = check(d, a->cuEventCreate(&s->stage_done[i], HG_CU_EVENT_DEFAULT), "cuEventCreate");
    }
    snprintf(s->arch, sizeof s->arch, "sm_%d%d", d->cc_major, d->cc_minor);
    if (st) real_close(d);
    return st;
}

static hg_status real_alloc(cuda_dev* d, size_t nbytes, void** out) {
    hg_status s = bind(d);
    CUdeviceptr p = 0;
    if (!s) s = check(d, st_of(d)->api->cuMemAlloc(&p, nbytes), "cuMemAlloc");
    if (!s) *out = (void*)(uintptr_t)p;
    return s;
}

static void real_release(cuda_dev* d, void* p) {
    if (bind(d) == HG_OK) st_of(d)->api->cuMemFree((CUdeviceptr)(uintptr_t)p);
}

static hg_status real_mem_info(cuda_dev* d, size_t* free_b, size_t* total_b) {
    hg_status s = bind(d);
    return s ? s : check(d, st_of(d)->api->cuMemGetInfo(free_b, total_b), "cuMemGetInfo");
}

static hg_status sync_stream(cuda_dev* d) {
    return check(d, st_of(d)->api->cuStreamSynchronize(cur(d)), "cuStreamSynchronize");
}

static hg_status real_h2d(cuda_dev* d, void* dst, const void* src, size_t n) {
    real_state* s = st_of(d);
    const hg_cuda_api* a = s->api;
    hg_status st = bind(d);
    if (st || !n) return st;
    CUdeviceptr to = (CUdeviceptr)(uintptr_t)dst;
    // From pageable memory the driver takes the bytes before it returns (staging them or
    // copying synchronously), so src may be reused at once without a wait.
    if (n <= DIRECT_BYTES)
        return check(d, a->cuMemcpyHtoDAsync(to, src, n, cur(d)), "cuMemcpyHtoDAsync");
    // Double buffering: fill one pinned buffer while the DMA of the other runs. Each buffer is
    // refilled only after the DMA that last read it (its event), also across calls: the copy
    // returns with the last DMAs queued, and the next user of a buffer waits for them.
    for (size_t off = 0, i = 0; off < n && !st; off += STAGE_BYTES, i ^= 1) {
        size_t c = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
        st = check(d, a->cuEventSynchronize(s->stage_done[i]), "cuEventSynchronize");
        if (st) break;
        memcpy(s->stage[i], (const char*)src + off, c);
        st = check(d, a->cuMemcpyHtoDAsync(to + off, s->stage[i], c, cur(d)), "cuMemcpyHtoDAsync");
        if (!st) st = check(d, a->cuEventRecord(s->stage_done[i], cur(d)), "cuEventRecord");
    }
    return st;
}

static hg_status real_d2h(cuda_dev* d, void* dst, const void* src, size_t n) {
    real_state* s = st_of(d);
    const hg_cuda_api* a = s->api;
    hg_status st = bind(d);
    if (st || !n) return st;
    CUdeviceptr from = (CUdeviceptr)(uintptr_t)src;
    if (n <= DIRECT_BYTES) {
        st = check(d, a->cuMemcpyDtoHAsync(dst, from, n, cur(d)), "cuMemcpyDtoHAsync");
        return st ? st : sync_stream(d);
    }
    // Chunk k is copied out of pinned buffer k%2 while the DMA of chunk k+1 runs.
    size_t nchunks = (n + STAGE_BYTES - 1) / STAGE_BYTES;
    for (size_t k = 0; k <= nchunks && !st; k++) {
        if (k < nchunks) {
            size_t off = k * STAGE_BYTES, c = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
            st = check(d, a->cuMemcpyDtoHAsync(s->stage[k & 1], from + off, c, cur(d)), "cuMemcpyDtoHAsync");
            if (!st) st = check(d, a->cuEventRecord(s->stage_done[k & 1], cur(d)), "cuEventRecord");
        }
        if (k > 0 && !st) {
            size_t j = k - 1, off = j * STAGE_BYTES, c = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
            st = check(d, a->cuEventSynchronize(s->stage_done[j & 1]), "cuEventSynchronize");
            if (!st) memcpy((char*)dst + off, s->stage[j & 1], c);
        }
    }
    return st;   // the last chunk's event covered everything queued before it
}

static hg_status real_d2d(cuda_dev* d, void* dst, const void* src, size_t n) {
    real_state* s = st_of(d);
    hg_status st = bind(d);
    if (st || !n) return st;
    return check(d, s->api->cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n, cur(d)), "cuMemcpyDtoDAsync");
}

static hg_status real_zero(cuda_dev* d, void* p, size_t n) {
    real_state* s = st_of(d);
    hg_status st = bind(d);
    if (st || !n) return st;
    return check(d, s->api->cuMemsetD8Async((CUdeviceptr)(uintptr_t)p, 0, n, cur(d)), "cuMemsetD8Async");
}

static hg_status real_load(cuda_dev* d, const char* src, size_t len, cuda_kernel* k) {
    void* image = NULL;
    size_t n = 0;
    hg_status st = hg_cuda_nvrtc_compile(src, len, d->cc_major, d->cc_minor, k->prog->name,
                                         k->key, &image, &n);
    if (st) return st;
    real_state* s = st_of(d);
    st = bind(d);
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    if (!st) st = check(d, s->api->cuModuleLoadData(&mod, image), "cuModuleLoadData");
    free(image);
    if (!st) st = check(d, s->api->cuModuleGetFunction(&fn, mod, "hg_kernel"), "cuModuleGetFunction");
    if (st) {
        if (mod) s->api->cuModuleUnload(mod);
        return st;
    }
    k->module = mod;
    k->fn = fn;
    return HG_OK;
}

static void real_unload(cuda_dev* d, cuda_kernel* k) {
    if (k->module && bind(d) == HG_OK) st_of(d)->api->cuModuleUnload((CUmodule)k->module);
    k->module = k->fn = NULL;
}

static hg_status real_launch(cuda_dev* d, cuda_kernel* k, const hg_launch_config* cfg, void* kargs,
                             size_t kargs_size) {
    (void)kargs_size;
    real_state* s = st_of(d);
    hg_status st = bind(d);
    if (st) return st;
    void* params[1] = {kargs};
    return check(d, s->api->cuLaunchKernel((CUfunction)k->fn, cfg->grid.x, cfg->grid.y,
                                           cfg->grid.z, cfg->block.x, cfg->block.y, cfg->block.z,
                                           (unsigned)cfg->shared_bytes, cur(d), params, NULL),
                 "cuLaunchKernel");
}

// The current stream only: it covers the executor's work on earlier streams (switch_stream).
// Work of other libraries is ordered by streams and events (DLPack's stream argument), not by
// waiting for the whole context.
static hg_status real_sync(cuda_dev* d) {
    hg_status st = bind(d);
    return st ? st : sync_stream(d);
}

static hg_status real_switch_stream(cuda_dev* d, void* from, void* to) {
    real_state* s = st_of(d);
    const hg_cuda_api* a = s->api;
    hg_status st = bind(d);
    CUstream old = from ? (CUstream)from : s->stream, now = to ? (CUstream)to : s->stream;
    if (!st) st = check(d, a->cuEventRecord(s->switched, old), "cuEventRecord (stream switch)");
    if (!st) st = check(d, a->cuStreamWaitEvent(now, s->switched, 0), "cuStreamWaitEvent (stream switch)");
    if (!st && s->blas) {
        const hg_cublas_api* bl = hg_cuda_cublas(NULL, 0);
        if (bl && bl->cublasSetStream(s->blas, now) != 0)
            st = hg_error(HG_ERR_EXECUTION, "cublasSetStream failed on a stream switch");
    }
    return st;
}

static void* real_own_stream(cuda_dev* d) { return st_of(d)->stream; }

static hg_status real_event_create(cuda_dev* d, void** out) {
    hg_status st = bind(d);
    CUevent e = NULL;
    if (!st) st = check(d, st_of(d)->api->cuEventCreate(&e, HG_CU_EVENT_DEFAULT), "cuEventCreate");
    if (!st) *out = e;
    return st;
}

static void real_event_destroy(cuda_dev* d, void* ev) {
    if (bind(d) == HG_OK) st_of(d)->api->cuEventDestroy((CUevent)ev);
}

static hg_status real_event_record(cuda_dev* d, void* ev) {
    hg_status st = bind(d);
    return st ? st : check(d, st_of(d)->api->cuEventRecord((CUevent)ev, cur(d)), "cuEventRecord");
}

static hg_status real_event_sync(cuda_dev* d, void* ev) {
    hg_status st = bind(d);
    return st ? st : check(d, st_of(d)->api->cuEventSynchronize((CUevent)ev), "cuEventSynchronize");
}

static hg_status real_event_query(cuda_dev* d, void* ev, int* done) {
    hg_status st = bind(d);
    if (st) return st;
    CUresult r = st_of(d)->api->cuEventQuery((CUevent)ev);
    *done = r != HG_CUDA_ERROR_NOT_READY;
    return r == HG_CUDA_ERROR_NOT_READY ? HG_OK : check(d, r, "cuEventQuery");
}

static hg_status real_event_elapsed(cuda_dev* d, void* a, void* b, double* ms) {
    float f = 0;
    hg_status st = bind(d);
    if (!st) st = check(d, st_of(d)->api->cuEventElapsedTime(&f, (CUevent)a, (CUevent)b), "cuEventElapsedTime");
    if (!st) *ms = f;
    return st;
}

static hg_status real_event_wait(cuda_dev* d, void* ev, void* stream) {
    hg_status st = bind(d);
    return st ? st : check(d, st_of(d)->api->cuStreamWaitEvent((CUstream)stream, (CUevent)ev, 0), "cuStreamWaitEvent");
}

// The executor's cuBLAS handle (created on first use, on the executor's stream), bound context.
static hg_status blas_ready(cuda_dev* d, const char* fn, const hg_cublas_api** out) {
    real_state* s = st_of(d);
    char why[1024];
    const hg_cublas_api* bl = hg_cuda_cublas(why, sizeof why);
    if (!bl) return hg_error(HG_ERR_UNSUPPORTED, "%s: %s", fn, why);
    hg_status st = bind(d);
    if (st) return st;
    if (!s->blas) {
        if (bl->cublasCreate(&s->blas) != 0)
            return hg_error(HG_ERR_EXECUTION, "cublasCreate failed");
        bl->cublasSetStream(s->blas, cur(d));
        // TF32 only when asked for: results then differ from IEEE f32 in the 10th bit or so.
        int tf32 = hg_config_bool("HOLOGRAM_CUDA_TF32", 0);
        bl->cublasSetMathMode(s->blas, tf32 ? HG_CUBLAS_TF32_TENSOR_OP_MATH : HG_CUBLAS_DEFAULT_MATH);
    }
    *out = bl;
    return HG_OK;
}

static hg_status real_sgemm(cuda_dev* d, int ta, int tb, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                            float beta, float* c, int64_t ldc) {
    const hg_cublas_api* bl;
    hg_status st = blas_ready(d, "cuda sgemm", &bl);
    if (st) return st;
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return hg_error(HG_ERR_UNSUPPORTED, "cuda sgemm: dimensions beyond 2^31 - 1");
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    cublasStatus_t r = bl->cublasSgemm(st_of(d)->blas, tb ? HG_CUBLAS_OP_T : HG_CUBLAS_OP_N,
                                       ta ? HG_CUBLAS_OP_T : HG_CUBLAS_OP_N, (int)n, (int)m, (int)k,
                                       &alpha, b, (int)ldb, a, (int)lda, &beta, c, (int)ldc);
    return r ? hg_error(HG_ERR_EXECUTION, "cublasSgemm failed with status %d", r) : HG_OK;
}

// cudaDataType_t of f64, f16 and bf16.
static int ex_type(hg_dtype t) {
    return t == HG_DTYPE_F64 ? HG_CUDA_R_64F : t == HG_DTYPE_F16 ? HG_CUDA_R_16F : HG_CUDA_R_16BF;
}

// f64 in f64; f16/bf16 with f32 accumulation (tensor cores), C rounded once.
static hg_status real_gemm_ex(cuda_dev* d, hg_dtype t, int ta, int tb, int64_t m, int64_t n,
                              int64_t k, double alpha, const void* a, int64_t lda, const void* b,
                              int64_t ldb, double beta, void* c, int64_t ldc) {
    const hg_cublas_api* bl;
    hg_status st = blas_ready(d, "cuda gemm", &bl);
    if (st) return st;
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return hg_error(HG_ERR_UNSUPPORTED, "cuda gemm: dimensions beyond 2^31 - 1");
    int f64 = t == HG_DTYPE_F64, dt = ex_type(t);
    float af = (float)alpha, bf = (float)beta;   // the scalars have the compute type
    const void* ap = f64 ? (const void*)&alpha : (const void*)&af;
    const void* bp = f64 ? (const void*)&beta : (const void*)&bf;
    cublasStatus_t r = bl->cublasGemmEx(
        st_of(d)->blas, tb ? HG_CUBLAS_OP_T : HG_CUBLAS_OP_N, ta ? HG_CUBLAS_OP_T : HG_CUBLAS_OP_N,
        (int)n, (int)m, (int)k, ap, b, dt, (int)ldb, a, dt, (int)lda, bp, c, dt, (int)ldc,
        f64 ? HG_CUBLAS_COMPUTE_64F : HG_CUBLAS_COMPUTE_32F, HG_CUBLAS_GEMM_DEFAULT);
    if (r != 0)
        return hg_error(HG_ERR_EXECUTION, "cublasGemmEx (%s) failed with status %d",
                        hg_dtype_name(t), r);
    return HG_OK;
}

// One strided-batched cuBLAS call: f32 through cublasSgemmStridedBatched (the handle's math
// mode, so TF32 only under HOLOGRAM_CUDA_TF32), the others as real_gemm_ex does them.
static hg_status real_gemm_batched(cuda_dev* d, hg_dtype t, int ta, int tb, int64_t m, int64_t n,
                                   int64_t k, double alpha, const void* a, int64_t lda,
                                   int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                                   double beta, void* c, int64_t ldc, int64_t stride_c,
                                   int64_t batch) {
    const hg_cublas_api* bl;
    hg_status st = blas_ready(d, "cuda batched gemm", &bl);
    if (st) return st;
    const int64_t lim = 0x7fffffff;
    if (m > lim || n > lim || k > lim || lda > lim || ldb > lim || ldc > lim || batch > lim)
        return hg_error(HG_ERR_UNSUPPORTED, "cuda batched gemm: dimensions beyond 2^31 - 1");
    // Row-major C_i = op(A_i) op(B_i) is column-major C_i^T = op(B_i)^T op(A_i)^T.
    int opa = ta ? HG_CUBLAS_OP_T : HG_CUBLAS_OP_N, opb = tb ? HG_CUBLAS_OP_T : HG_CUBLAS_OP_N;
    float af = (float)alpha, bf = (float)beta;
    cublasStatus_t r;
    if (t == HG_DTYPE_F32) {
        r = bl->cublasSgemmStridedBatched(st_of(d)->blas, opb, opa, (int)n, (int)m, (int)k, &af,
                                          b, (int)ldb, stride_b, a, (int)lda, stride_a, &bf, c,
                                          (int)ldc, stride_c, (int)batch);
    } else {
        int f64 = t == HG_DTYPE_F64, dt = ex_type(t);
        const void* ap = f64 ? (const void*)&alpha : (const void*)&af;
        const void* bp = f64 ? (const void*)&beta : (const void*)&bf;
        r = bl->cublasGemmStridedBatchedEx(
            st_of(d)->blas, opb, opa, (int)n, (int)m, (int)k, ap, b, dt, (int)ldb, stride_b, a,
            dt, (int)lda, stride_a, bp, c, dt, (int)ldc, stride_c, (int)batch,
            f64 ? HG_CUBLAS_COMPUTE_64F : HG_CUBLAS_COMPUTE_32F, HG_CUBLAS_GEMM_DEFAULT);
    }
    if (r != 0)
        return hg_error(HG_ERR_EXECUTION, "cublas%sStridedBatched%s (%s) failed with status %d",
                        t == HG_DTYPE_F32 ? "Sgemm" : "Gemm", t == HG_DTYPE_F32 ? "" : "Ex",
                        hg_dtype_name(t), r);
    return HG_OK;
}

const cuda_impl hg_cuda_real_impl = {
    .name = "driver",
    .open = real_open,
    .close = real_close,
    .alloc = real_alloc,
    .release = real_release,
    .mem_info = real_mem_info,
    .h2d = real_h2d,
    .d2h = real_d2h,
    .d2d = real_d2d,
    .zero = real_zero,
    .load = real_load,
    .unload = real_unload,
    .launch = real_launch,
    .sync = real_sync,
    .switch_stream = real_switch_stream,
    .own_stream = real_own_stream,
    .event_create = real_event_create,
    .event_destroy = real_event_destroy,
    .event_record = real_event_record,
    .event_sync = real_event_sync,
    .event_query = real_event_query,
    .event_elapsed = real_event_elapsed,
    .event_wait = real_event_wait,
    .sgemm = real_sgemm,
    .gemm_ex = real_gemm_ex,
    .gemm_batched = real_gemm_batched,
    .max_batch = 0x7fffffff,   // cuBLAS's batchCount is an int
};
