// dlopen of the CUDA driver, NVRTC and cuBLAS (see cuda_driver.h). Each library is looked up
// once; the outcome (table or reason) is kept, so later calls are free.
#include "backends/cuda/cuda_driver.h"
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/error.h"

typedef struct loaded {
    pthread_once_t once;
    int ok;
    char why[1024];
} loaded;

// A library: where to find it, what to say when it is missing, and its symbols as a table of
// (name, fallback name, slot offset in the api struct, optional). One loader reads them all.
typedef struct sym_spec {
    const char* name;
    const char* alt;   // older name, tried when `name` is missing (the _v2 entry points)
    size_t offset;
    int optional;      // a missing optional symbol leaves its slot NULL
} sym_spec;

typedef struct lib_spec {
    const char* env;                // path override variable
    const char* const* names;       // file names, tried in order
    const char* missing;            // "no driver: libcuda.so.1"
    const char* advice;             // what to install / set
    const char* symlib;             // the name in "<symlib> has no symbol ..."
    const sym_spec* syms;
    size_t nsyms;
} lib_spec;

// Opens the first of names[] that loads, from the environment override, then each directory
// prefix (""= the loader's search path). Records the first dlerror for the message.
static void* open_first(const char* env, const char* const* names, char* path, size_t path_len,
                        char* err, size_t err_len) {
    err[0] = 0;
    const char* over = hg_config_string(env);
    if (over) {
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
                // The file the loader found (a bare name says nothing of where it lies).
                struct link_map* lm = NULL;
                if (path) snprintf(path, path_len, "%s", full);
                if (path && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name &&
                    lm->l_name[0])
                    snprintf(path, path_len, "%s", lm->l_name);
                return h;
            }
            if (!err[0]) snprintf(err, err_len, "%s", dlerror());
        }
    }
    return NULL;
}

// Opens spec's library into *lib and fills api's slots. Returns 1, or 0 with l->why set.
static int load_lib(const lib_spec* spec, void* api, void** lib, char* path, size_t path_len,
                    loaded* l) {
    char err[400];
    *lib = open_first(spec->env, spec->names, path, path_len, err, sizeof err);
    if (!*lib) {
        snprintf(l->why, sizeof l->why, "%s could not be loaded (%.300s); %s", spec->missing, err,
                 spec->advice);
        return 0;
    }
    for (size_t i = 0; i < spec->nsyms; i++) {
        const sym_spec* y = &spec->syms[i];
        void* f = dlsym(*lib, y->name);
        if (!f && y->alt) f = dlsym(*lib, y->alt);
        if (!f && !y->optional) {
            snprintf(l->why, sizeof l->why, "%s has no symbol %s: the library is too old or not "
                     "the real %s", spec->symlib, y->name, spec->symlib);
            return 0;
        }
        memcpy((char*)api + y->offset, &f, sizeof f);
    }
    return 1;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

// ---- driver -----------------------------------------------------------------------------------
static hg_cuda_api g_cuda;
static loaded g_cuda_state = {PTHREAD_ONCE_INIT, 0, ""};

#define DRV(field, name, alt) {name, alt, offsetof(hg_cuda_api, field), 0}
static const sym_spec k_driver_syms[] = {
    DRV(cuInit, "cuInit", NULL),
    DRV(cuDriverGetVersion, "cuDriverGetVersion", NULL),
    DRV(cuDeviceGetCount, "cuDeviceGetCount", NULL),
    DRV(cuDeviceGet, "cuDeviceGet", NULL),
    DRV(cuDeviceGetName, "cuDeviceGetName", NULL),
    DRV(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    DRV(cuDeviceTotalMem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem"),
    DRV(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    DRV(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    DRV(cuCtxSetCurrent, "cuCtxSetCurrent", NULL),
    DRV(cuCtxSynchronize, "cuCtxSynchronize", NULL),
    DRV(cuStreamCreate, "cuStreamCreate", NULL),
    DRV(cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
    DRV(cuStreamSynchronize, "cuStreamSynchronize", NULL),
    DRV(cuStreamWaitEvent, "cuStreamWaitEvent", NULL),
    DRV(cuEventCreate, "cuEventCreate", NULL),
    DRV(cuEventRecord, "cuEventRecord", NULL),
    DRV(cuEventSynchronize, "cuEventSynchronize", NULL),
    DRV(cuEventQuery, "cuEventQuery", NULL),
    DRV(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    DRV(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
    DRV(cuMemAlloc, "cuMemAlloc_v2", "cuMemAlloc"),
    DRV(cuMemFree, "cuMemFree_v2", "cuMemFree"),
    DRV(cuMemGetInfo, "cuMemGetInfo_v2", "cuMemGetInfo"),
    DRV(cuMemHostAlloc, "cuMemHostAlloc", NULL),
    DRV(cuMemFreeHost, "cuMemFreeHost", NULL),
    DRV(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer"),
    DRV(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync"),
    DRV(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync"),
    DRV(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync"),
    DRV(cuMemsetD8Async, "cuMemsetD8Async", NULL),
    DRV(cuModuleLoadData, "cuModuleLoadData", NULL),
    DRV(cuModuleUnload, "cuModuleUnload", NULL),
    DRV(cuModuleGetFunction, "cuModuleGetFunction", NULL),
    DRV(cuFuncSetAttribute, "cuFuncSetAttribute", NULL),
    DRV(cuLaunchKernel, "cuLaunchKernel", NULL),
    DRV(cuGetErrorName, "cuGetErrorName", NULL),
    DRV(cuGetErrorString, "cuGetErrorString", NULL),
};
static const char* const k_driver_names[] = {"libcuda.so.1", "libcuda.so", NULL};
static const lib_spec k_driver = {
    "HOLOGRAM_CUDA_DRIVER", k_driver_names, "no driver: libcuda.so.1",
    "install the NVIDIA driver or set HOLOGRAM_CUDA_DRIVER to its path", "libcuda.so.1",
    k_driver_syms, COUNT(k_driver_syms)};

static void load_cuda(void) {
    loaded* l = &g_cuda_state;
    hg_cuda_api* a = &g_cuda;
    if (!load_lib(&k_driver, a, &a->lib, NULL, 0, l)) return;
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

#define RTC(field, optional) {#field, NULL, offsetof(hg_nvrtc_api, field), optional}
static const sym_spec k_nvrtc_syms[] = {
    RTC(nvrtcVersion, 0), RTC(nvrtcCreateProgram, 0), RTC(nvrtcDestroyProgram, 0),
    RTC(nvrtcCompileProgram, 0), RTC(nvrtcGetProgramLogSize, 0), RTC(nvrtcGetProgramLog, 0),
    RTC(nvrtcGetPTXSize, 0), RTC(nvrtcGetPTX, 0), RTC(nvrtcGetErrorString, 0),
    // cubin output (NVRTC >= 11.1) and the list of architectures
    RTC(nvrtcGetCUBINSize, 1), RTC(nvrtcGetCUBIN, 1), RTC(nvrtcGetNumSupportedArchs, 1),
    RTC(nvrtcGetSupportedArchs, 1),
};
static const char* const k_nvrtc_names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                            "libnvrtc.so.11.2", NULL};
static const lib_spec k_nvrtc = {
    "HOLOGRAM_NVRTC", k_nvrtc_names, "no NVRTC: libnvrtc.so",
    "install the CUDA toolkit's NVRTC (or `pip install nvidia-cuda-nvrtc-cu12`) and set "
    "HOLOGRAM_NVRTC to libnvrtc.so", "libnvrtc", k_nvrtc_syms, COUNT(k_nvrtc_syms)};

static void load_nvrtc(void) {
    g_nvrtc_state.ok = load_lib(&k_nvrtc, &g_nvrtc, &g_nvrtc.lib, g_nvrtc.path,
                                sizeof g_nvrtc.path, &g_nvrtc_state);
}

const hg_nvrtc_api* hg_cuda_nvrtc(char* why, size_t why_len) {
    pthread_once(&g_nvrtc_state.once, load_nvrtc);
    if (!g_nvrtc_state.ok) {
        if (why_len) snprintf(why, why_len, "%s", g_nvrtc_state.why);
        return NULL;
    }
    return &g_nvrtc;
}

const char* hg_nvrtc_path(void) {
    char why[sizeof g_nvrtc_state.why];
    const hg_nvrtc_api* r = hg_cuda_nvrtc(why, sizeof why);
    if (!r) {
        hg_error(HG_ERR_BACKEND_UNAVAILABLE, "%s", why);
        return NULL;
    }
    return r->path;
}

// ---- cuBLAS -----------------------------------------------------------------------------------
static hg_cublas_api g_cublas;
static loaded g_cublas_state = {PTHREAD_ONCE_INIT, 0, ""};

#define BLAS(field, name) {name, NULL, offsetof(hg_cublas_api, field), 0}
static const sym_spec k_cublas_syms[] = {
    BLAS(cublasCreate, "cublasCreate_v2"),       BLAS(cublasDestroy, "cublasDestroy_v2"),
    BLAS(cublasSetStream, "cublasSetStream_v2"), BLAS(cublasSetMathMode, "cublasSetMathMode"),
    BLAS(cublasSgemm, "cublasSgemm_v2"),         BLAS(cublasGetVersion, "cublasGetVersion_v2"),
    BLAS(cublasGemmEx, "cublasGemmEx"),
    BLAS(cublasSgemmStridedBatched, "cublasSgemmStridedBatched"),
    BLAS(cublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx"),
};
static const char* const k_cublas_names[] = {"libcublas.so", "libcublas.so.13",
                                             "libcublas.so.12", "libcublas.so.11", NULL};
static const lib_spec k_cublas = {
    "HOLOGRAM_CUBLAS", k_cublas_names, "no cuBLAS: libcublas.so",
    "install the CUDA toolkit's cuBLAS (or `pip install nvidia-cublas-cu12`) and set "
    "HOLOGRAM_CUBLAS to libcublas.so", "libcublas", k_cublas_syms, COUNT(k_cublas_syms)};

static void load_cublas(void) {
    g_cublas_state.ok = load_lib(&k_cublas, &g_cublas, &g_cublas.lib, NULL, 0, &g_cublas_state);
}

const hg_cublas_api* hg_cuda_cublas(char* why, size_t why_len) {
    pthread_once(&g_cublas_state.once, load_cublas);
    if (!g_cublas_state.ok) {
        if (why_len) snprintf(why, why_len, "%s", g_cublas_state.why);
        return NULL;
    }
    return &g_cublas;
}
