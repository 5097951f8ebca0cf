// dlopen of the CUDA driver, NVRTC and cuBLAS (see cuda_driver.h). Each library is looked up
// once; the outcome (table or reason) is kept, so later calls are free.
#include "backends/cuda/cuda_driver.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loaded {
    pthread_once_t once;
    int ok;
    char why[1024];
} loaded;

// Resolves `name` (or, when it is missing, `alt`) into *slot. Returns 0 and fills why on failure.
static int sym(void* lib, const char* name, const char* alt, void** slot, const char* libname,
               char* why, size_t why_len) {
    void* f = dlsym(lib, name);
    if (!f && alt) f = dlsym(lib, alt);
    if (!f) {
        snprintf(why, why_len, "%s has no symbol %s: the library is too old or not the real %s",
                 libname, name, libname);
        return 0;
    }
    *slot = f;
    return 1;
}
#define SYM(api, field, name, alt, libname)                                                 \
    sym((api)->lib, name, alt, (void**)&(api)->field, libname, l->why, sizeof l->why)

// Opens the first of names[] that loads, from the environment override, then each directory
// prefix (""= the loader's search path). Records the first dlerror for the message.
static void* open_first(const char* env, const char* const* names, char* path, size_t path_len,
                        char* err, size_t err_len) {
    err[0] = 0;
    const char* over = getenv(env);
    if (over && over[0]) {
        void* h = dlopen(over, RTLD_NOW | RTLD_LOCAL);
        if (!h) snprintf(err, err_len, "%s='%.150s' could not be loaded: %.200s", env, over, dlerror());
        else if (path) snprintf(path, path_len, "%s", over);
        return h;
    }
    const char* home = getenv("CUDA_HOME");
    char dirs[3][256] = {"", "", "/usr/local/cuda/lib64/"};
    if (home && home[0]) snprintf(dirs[1], sizeof dirs[1], "%s/lib64/", home);
    for (int d = 0; d < 3; d++) {
        if (d > 0 && !dirs[d][0]) continue;
        for (int i = 0; names[i]; i++) {
            char full[512];
            snprintf(full, sizeof full, "%.255s%.200s", dirs[d], names[i]);
            void* h = dlopen(full, RTLD_NOW | RTLD_LOCAL);
            if (h) {
                if (path) snprintf(path, path_len, "%s", full);
                return h;
            }
            if (!err[0]) snprintf(err, err_len, "%s", dlerror());
        }
    }
    return NULL;
}

// ---- driver -----------------------------------------------------------------------------------
static hg_cuda_api g_cuda;
static loaded g_cuda_state = {PTHREAD_ONCE_INIT, 0, ""};

static void load_cuda(void) {
    loaded* l = &g_cuda_state;
    hg_cuda_api* a = &g_cuda;
    static const char* const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    char err[400];
    a->lib = open_first("HOLOGRAM_CUDA_DRIVER", names, NULL, 0, err, sizeof err);
    if (!a->lib) {
        snprintf(l->why, sizeof l->why, "no driver: libcuda.so.1 could not be loaded (%.300s); install "
                 "the NVIDIA driver or set HOLOGRAM_CUDA_DRIVER to its path", err);
        return;
    }
    const char* lib = "libcuda.so.1";
    int ok = SYM(a, cuInit, "cuInit", NULL, lib) &&
             SYM(a, cuDriverGetVersion, "cuDriverGetVersion", NULL, lib) &&
             SYM(a, cuDeviceGetCount, "cuDeviceGetCount", NULL, lib) &&
             SYM(a, cuDeviceGet, "cuDeviceGet", NULL, lib) &&
             SYM(a, cuDeviceGetName, "cuDeviceGetName", NULL, lib) &&
             SYM(a, cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL, lib) &&
             SYM(a, cuDeviceTotalMem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem", lib) &&
             SYM(a, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL, lib) &&
             SYM(a, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
                 "cuDevicePrimaryCtxRelease", lib) &&
             SYM(a, cuCtxSetCurrent, "cuCtxSetCurrent", NULL, lib) &&
             SYM(a, cuCtxSynchronize, "cuCtxSynchronize", NULL, lib) &&
             SYM(a, cuStreamCreate, "cuStreamCreate", NULL, lib) &&
             SYM(a, cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy", lib) &&
             SYM(a, cuStreamSynchronize, "cuStreamSynchronize", NULL, lib) &&
             SYM(a, cuEventCreate, "cuEventCreate", NULL, lib) &&
             SYM(a, cuEventRecord, "cuEventRecord", NULL, lib) &&
             SYM(a, cuEventSynchronize, "cuEventSynchronize", NULL, lib) &&
             SYM(a, cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", lib) &&
             SYM(a, cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy", lib) &&
             SYM(a, cuMemAlloc, "cuMemAlloc_v2", "cuMemAlloc", lib) &&
             SYM(a, cuMemFree, "cuMemFree_v2", "cuMemFree", lib) &&
             SYM(a, cuMemGetInfo, "cuMemGetInfo_v2", "cuMemGetInfo", lib) &&
             SYM(a, cuMemHostAlloc, "cuMemHostAlloc", NULL, lib) &&
             SYM(a, cuMemFreeHost, "cuMemFreeHost", NULL, lib) &&
             SYM(a, cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2",
                 "cuMemHostGetDevicePointer", lib) &&
             SYM(a, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync", lib) &&
             SYM(a, cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync", lib) &&
             SYM(a, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync", lib) &&
             SYM(a, cuMemsetD8Async, "cuMemsetD8Async", NULL, lib) &&
             SYM(a, cuModuleLoadData, "cuModuleLoadData", NULL, lib) &&
             SYM(a, cuModuleUnload, "cuModuleUnload", NULL, lib) &&
             SYM(a, cuModuleGetFunction, "cuModuleGetFunction", NULL, lib) &&
             SYM(a, cuFuncSetAttribute, "cuFuncSetAttribute", NULL, lib) &&
             SYM(a, cuLaunchKernel, "cuLaunchKernel", NULL, lib) &&
             SYM(a, cuGetErrorName, "cuGetErrorName", NULL, lib) &&
             SYM(a, cuGetErrorString, "cuGetErrorString", NULL, lib);
    if (!ok) return;
    CUresult r = a->cuInit(0);
    if (r != HG_CUDA_SUCCESS) {
        snprintf(l->why, sizeof l->why, "no device: cuInit failed: %s (the driver found no "
                 "usable GPU)", hg_cuda_result_text(a, r));
        return;
    }
    l->ok = 1;
}

const hg_cuda_api* hg_cuda_driver(char* why, size_t why_len) {
    pthread_once(&g_cuda_state.once, load_cuda);
    if (!g_cuda_state.ok) {
        if (why_len) snprintf(why, why_len, "%s", g_cuda_state.why);
        return NULL;
    }
    return &g_cuda;
}

const char* hg_cuda_result_text(const hg_cuda_api* api, CUresult r) {
    static _Thread_local char buf[256];
    const char *name = NULL, *text = NULL;
    if (api && api->cuGetErrorName) api->cuGetErrorName(r, &name);
    if (api && api->cuGetErrorString) api->cuGetErrorString(r, &text);
    snprintf(buf, sizeof buf, "%s (%d): %s", name ? name : "CUDA error", r,
             text ? text : "no description");
    return buf;
}

// ---- NVRTC ------------------------------------------------------------------------------------
static hg_nvrtc_api g_nvrtc;
static loaded g_nvrtc_state = {PTHREAD_ONCE_INIT, 0, ""};

static void load_nvrtc(void) {
    loaded* l = &g_nvrtc_state;
    hg_nvrtc_api* a = &g_nvrtc;
    static const char* const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                        "libnvrtc.so.11.2", NULL};
    char err[400];
    a->lib = open_first("HOLOGRAM_NVRTC", names, a->path, sizeof a->path, err, sizeof err);
    if (!a->lib) {
        snprintf(l->why, sizeof l->why, "no NVRTC: libnvrtc.so could not be loaded (%.300s); install "
                 "the CUDA toolkit's NVRTC (or `pip install nvidia-cuda-nvrtc-cu12`) and set "
                 "HOLOGRAM_NVRTC to libnvrtc.so", err);
        return;
    }
    const char* lib = "libnvrtc";
    int ok = SYM(a, nvrtcVersion, "nvrtcVersion", NULL, lib) &&
             SYM(a, nvrtcCreateProgram, "nvrtcCreateProgram", NULL, lib) &&
             SYM(a, nvrtcDestroyProgram, "nvrtcDestroyProgram", NULL, lib) &&
             SYM(a, nvrtcCompileProgram, "nvrtcCompileProgram", NULL, lib) &&
             SYM(a, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", NULL, lib) &&
             SYM(a, nvrtcGetProgramLog, "nvrtcGetProgramLog", NULL, lib) &&
             SYM(a, nvrtcGetPTXSize, "nvrtcGetPTXSize", NULL, lib) &&
             SYM(a, nvrtcGetPTX, "nvrtcGetPTX", NULL, lib) &&
             SYM(a, nvrtcGetErrorString, "nvrtcGetErrorString", NULL, lib);
    if (!ok) return;
    // Optional: cubin output (NVRTC >= 11.1) and the list of architectures.
    a->nvrtcGetCUBINSize = (nvrtcResult(*)(nvrtcProgram, size_t*))dlsym(a->lib, "nvrtcGetCUBINSize");
    a->nvrtcGetCUBIN = (nvrtcResult(*)(nvrtcProgram, char*))dlsym(a->lib, "nvrtcGetCUBIN");
    a->nvrtcGetNumSupportedArchs = (nvrtcResult(*)(int*))dlsym(a->lib, "nvrtcGetNumSupportedArchs");
    a->nvrtcGetSupportedArchs = (nvrtcResult(*)(int*))dlsym(a->lib, "nvrtcGetSupportedArchs");
    l->ok = 1;
}

const hg_nvrtc_api* hg_cuda_nvrtc(char* why, size_t why_len) {
    pthread_once(&g_nvrtc_state.once, load_nvrtc);
    if (!g_nvrtc_state.ok) {
        if (why_len) snprintf(why, why_len, "%s", g_nvrtc_state.why);
        return NULL;
    }
    return &g_nvrtc;
}

// ---- cuBLAS -----------------------------------------------------------------------------------
static hg_cublas_api g_cublas;
static loaded g_cublas_state = {PTHREAD_ONCE_INIT, 0, ""};

static void load_cublas(void) {
    loaded* l = &g_cublas_state;
    hg_cublas_api* a = &g_cublas;
    static const char* const names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12",
                                        "libcublas.so.11", NULL};
    char err[400];
    a->lib = open_first("HOLOGRAM_CUBLAS", names, NULL, 0, err, sizeof err);
    if (!a->lib) {
        snprintf(l->why, sizeof l->why, "no cuBLAS: libcublas.so could not be loaded (%.300s); "
                 "install the CUDA toolkit's cuBLAS (or `pip install nvidia-cublas-cu12`) and "
                 "set HOLOGRAM_CUBLAS to libcublas.so", err);
        return;
    }
    const char* lib = "libcublas";
    int ok = SYM(a, cublasCreate, "cublasCreate_v2", NULL, lib) &&
             SYM(a, cublasDestroy, "cublasDestroy_v2", NULL, lib) &&
             SYM(a, cublasSetStream, "cublasSetStream_v2", NULL, lib) &&
             SYM(a, cublasSetMathMode, "cublasSetMathMode", NULL, lib) &&
             SYM(a, cublasSgemm, "cublasSgemm_v2", NULL, lib) &&
             SYM(a, cublasGetVersion, "cublasGetVersion_v2", NULL, lib) &&
             SYM(a, cublasGemmEx, "cublasGemmEx", NULL, lib);
    if (!ok) return;
    l->ok = 1;
}

const hg_cublas_api* hg_cuda_cublas(char* why, size_t why_len) {
    pthread_once(&g_cublas_state.once, load_cublas);
    if (!g_cublas_state.ok) {
        if (why_len) snprintf(why, why_len, "%s", g_cublas_state.why);
        return NULL;
    }
    return &g_cublas;
}
