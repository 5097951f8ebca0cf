// Internal (CUDA backend): the CUDA driver API, NVRTC and cuBLAS, loaded with dlopen on first use
// (no CUDA header or library is needed to build hologram). The types and constants below are the
// documented ABI of those libraries, written out here; the function tables hold the symbols we
// use. Paths: HOLOGRAM_CUDA_DRIVER (else libcuda.so.1), HOLOGRAM_NVRTC (else libnvrtc.so and its
// versioned names, also under $CUDA_HOME/lib64 and /usr/local/cuda/lib64), HOLOGRAM_CUBLAS (else
// libcublas.so and its versioned names, same places).
#ifndef HG_BACKENDS_CUDA_DRIVER_H
#define HG_BACKENDS_CUDA_DRIVER_H
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
#define HG_CUDA_SUCCESS 0
#define HG_CUDA_ERROR_OUT_OF_MEMORY 2
#define HG_CU_ATTR_MAX_SHARED_PER_BLOCK 8
#define HG_CU_ATTR_MULTIPROCESSOR_COUNT 16
#define HG_CU_ATTR_CC_MAJOR 75
#define HG_CU_ATTR_CC_MINOR 76
#define HG_CU_ATTR_MAX_SHARED_PER_BLOCK_OPTIN 97
#define HG_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED 8
#define HG_CU_STREAM_NON_BLOCKING 1
#define HG_CU_EVENT_DEFAULT 0
#define HG_CU_EVENT_DISABLE_TIMING 2
#define HG_CU_MEMHOSTALLOC_PORTABLE 1
#define HG_CU_MEMHOSTALLOC_DEVICEMAP 2
#define HG_CUDA_ERROR_ILLEGAL_ADDRESS 700
#define HG_CUDA_ERROR_LAUNCH_FAILED 719
#define HG_CUDA_ERROR_NOT_READY 600

typedef struct hg_cuda_api {
    void* lib;
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int*);
    CUresult (*cuDeviceGetCount)(int*);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDeviceGetName)(char*, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
    CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuStreamCreate)(CUstream*, unsigned);
    CUresult (*cuStreamDestroy)(CUstream);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*cuEventCreate)(CUevent*, unsigned);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventQuery)(CUevent);
    CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
    CUresult (*cuEventDestroy)(CUevent);
    CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemGetInfo)(size_t*, size_t*);
    CUresult (*cuMemHostAlloc)(void**, size_t, unsigned);
    CUresult (*cuMemFreeHost)(void*);
    CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr*, void*, unsigned);
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
    CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
    CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*cuModuleLoadData)(CUmodule*, const void*);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void**, void**);
    CUresult (*cuGetErrorName)(CUresult, const char**);
    CUresult (*cuGetErrorString)(CUresult, const char**);
} hg_cuda_api;

typedef struct _nvrtcProgram* nvrtcProgram;
typedef int nvrtcResult;
typedef struct hg_nvrtc_api {
    void* lib;
    char path[512];
    nvrtcResult (*nvrtcVersion)(int*, int*);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                      const char* const*);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
    nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);   // optional (NVRTC >= 11.1)
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
    nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
    nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
    nvrtcResult (*nvrtcGetNumSupportedArchs)(int*);           // optional
    nvrtcResult (*nvrtcGetSupportedArchs)(int*);
    const char* (*nvrtcGetErrorString)(nvrtcResult);
} hg_nvrtc_api;

typedef struct cublasContext* cublasHandle_t;
typedef int cublasStatus_t;
#define HG_CUBLAS_OP_N 0
#define HG_CUBLAS_OP_T 1
#define HG_CUBLAS_DEFAULT_MATH 0
#define HG_CUBLAS_PEDANTIC_MATH 2
#define HG_CUBLAS_TF32_TENSOR_OP_MATH 3
// cudaDataType_t, cublasComputeType_t and cublasGemmAlgo_t values used with cublasGemmEx.
#define HG_CUDA_R_64F 1
#define HG_CUDA_R_16F 2
#define HG_CUDA_R_16BF 14
#define HG_CUBLAS_COMPUTE_32F 68
#define HG_CUBLAS_COMPUTE_64F 70
#define HG_CUBLAS_GEMM_DEFAULT (-1)
typedef struct hg_cublas_api {
    void* lib;
    cublasStatus_t (*cublasCreate)(cublasHandle_t*);
    cublasStatus_t (*cublasDestroy)(cublasHandle_t);
    cublasStatus_t (*cublasSetStream)(cublasHandle_t, CUstream);
    cublasStatus_t (*cublasSetMathMode)(cublasHandle_t, int);
    cublasStatus_t (*cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float*,
                                  const float*, int, const float*, int, const float*, float*, int);
    cublasStatus_t (*cublasGetVersion)(cublasHandle_t, int*);
    // cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
    //              C, Ctype, ldc, computeType, algo)
    cublasStatus_t (*cublasGemmEx)(cublasHandle_t, int, int, int, int, int, const void*,
                                   const void*, int, int, const void*, int, int, const void*,
                                   void*, int, int, int, int);
    // cublasSgemmStridedBatched(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
    //                           strideB, beta, C, ldc, strideC, batchCount)
    cublasStatus_t (*cublasSgemmStridedBatched)(cublasHandle_t, int, int, int, int, int,
                                                const float*, const float*, int, long long,
                                                const float*, int, long long, const float*,
                                                float*, int, long long, int);
    // cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA,
    //     B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo)
    cublasStatus_t (*cublasGemmStridedBatchedEx)(cublasHandle_t, int, int, int, int, int,
                                                 const void*, const void*, int, int, long long,
                                                 const void*, int, int, long long, const void*,
                                                 void*, int, int, long long, int, int, int);
} hg_cublas_api;

// Each loader tries once (thread-safe) and returns the table, or NULL with the reason in why
// ("libcuda.so.1 could not be loaded: <dlerror>; install the NVIDIA driver or set ...").
const hg_cuda_api* hg_cuda_driver(char* why, size_t why_len);
const hg_nvrtc_api* hg_cuda_nvrtc(char* why, size_t why_len);
const hg_cublas_api* hg_cuda_cublas(char* why, size_t why_len);

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for a driver result (static or thread-local text).
const char* hg_cuda_result_text(const hg_cuda_api* api, CUresult r);

#endif
