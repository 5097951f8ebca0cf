// NVRTC compilation of generated kernels (shared by the GPU device and by the emulation's
// optional NVRTC check): source -> cubin (or PTX where NVRTC cannot emit cubin) for one
// architecture, through the kernel caches. Options: --fmad=false (the ISA rounds a*b+c twice;
// only fma fuses), -std=c++17.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cuda/cuda_internal.h"
#include "base/error.h"

hg_status hg_cuda_nvrtc_compile(const char* src, size_t len, int cc_major, int cc_minor,
                                const char* name, char key[40], void** image, size_t* image_len) {
    char why[1024];
    const hg_nvrtc_api* nv = hg_cuda_nvrtc(why, sizeof why);
    if (!nv) return hg_error(HG_ERR_BACKEND_UNAVAILABLE, "cuda: %s", why);
    int major = 0, minor = 0;
    nv->nvrtcVersion(&major, &minor);
    char ver[32], arch_opt[48];
    snprintf(ver, sizeof ver, "nvrtc %d.%d", major, minor);
    int cubin = nv->nvrtcGetCUBIN != NULL && nv->nvrtcGetCUBINSize != NULL;
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s_%d%d", cubin ? "sm" : "compute",
             cc_major, cc_minor);
    const char* opts[] = {arch_opt, "--fmad=false", "-std=c++17"};
    const char* ext = cubin ? "cubin" : "ptx";
    hg_cuda_kcache_key(src, len, "--fmad=false -std=c++17", arch_opt, ver, key);
    if (hg_cuda_kcache_get(key, ext, image, image_len)) return HG_OK;
    nvrtcProgram prog = NULL;
    if (nv->nvrtcCreateProgram(&prog, src, "hologram_kernel.cu", 0, NULL, NULL) != 0)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "nvrtcCreateProgram failed");
    int rc = nv->nvrtcCompileProgram(prog, 3, opts);
    if (rc != 0) {
        size_t ln = 0;
        nv->nvrtcGetProgramLogSize(prog, &ln);
        char* log = malloc(ln + 1);
        if (log) {
            nv->nvrtcGetProgramLog(prog, log);
            log[ln] = 0;
        }
        hg_status e = hg_error(HG_ERR_INTERNAL, "NVRTC (%s, %s) rejected the generated kernel "
                               "'%s': %s: %.1500s", ver, arch_opt, name,
                               nv->nvrtcGetErrorString(rc), log ? log : "");
        free(log);
        nv->nvrtcDestroyProgram(&prog);
        return e;
    }
    size_t n = 0;
    rc = cubin ? nv->nvrtcGetCUBINSize(prog, &n) : nv->nvrtcGetPTXSize(prog, &n);
    char* img = rc == 0 ? malloc(n ? n : 1) : NULL;
    if (img) rc = cubin ? nv->nvrtcGetCUBIN(prog, img) : nv->nvrtcGetPTX(prog, img);
    nv->nvrtcDestroyProgram(&prog);
    if (!img || rc != 0) {
        free(img);
        return hg_error(HG_ERR_INTERNAL, "NVRTC: could not read the compiled kernel");
    }
    hg_cuda_kcache_put(key, ext, img, n);
    *image = img;
    *image_len = n;
    return HG_OK;
}

