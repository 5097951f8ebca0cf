// Version and build facts, and hg_free for memory the library hands out.
#include <stdlib.h>
#include "hologram.h"

#ifndef HG_BUILD_TYPE
#define HG_BUILD_TYPE "unknown"
#endif

#define HG_STR_(x) #x
#define HG_STR(x) HG_STR_(x)
#if defined(__clang__)
// (__clang_version__ ends in a space, and on some builds a vendor suffix.)
#define HG_COMPILER                                                                             \
    "clang " HG_STR(__clang_major__) "." HG_STR(__clang_minor__) "." HG_STR(__clang_patchlevel__)
#elif defined(__GNUC__)
#define HG_COMPILER "gcc " __VERSION__
#elif defined(__VERSION__)
#define HG_COMPILER __VERSION__
#else
#define HG_COMPILER "unknown"
#endif

// The CPU kernel sets built besides the portable one (hg_cpu_kernel_set says which runs).
#ifdef HG_HAVE_AVX2_KERNELS
#define HG_FEAT_AVX2 " avx2-kernels"
#else
#define HG_FEAT_AVX2 ""
#endif
#ifdef HG_HAVE_AVX512_KERNELS
#define HG_FEAT_AVX512 " avx512-kernels"
#else
#define HG_FEAT_AVX512 ""
#endif

#if defined(__SANITIZE_ADDRESS__)
#define HG_FEAT_ASAN " asan"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HG_FEAT_ASAN " asan"
#endif
#endif
#ifndef HG_FEAT_ASAN
#define HG_FEAT_ASAN ""
#endif

// Backends compiled in are listed by the registry at run time (hg_backend_query); the CPU
// backend is always built, so the feature string names it statically.
static const char features[] = "cpu" HG_FEAT_AVX2 HG_FEAT_AVX512 HG_FEAT_ASAN;

const char* hg_version(void) { return HG_VERSION_STRING; }

int hg_version_number(void) { return HG_VERSION_NUMBER; }

void hg_build_info_get(hg_build_info* out) {
    if (!out) return;
    out->version = HG_VERSION_STRING;
    out->compiler = HG_COMPILER;
    out->build_type = HG_BUILD_TYPE[0] ? HG_BUILD_TYPE : "unspecified";
    out->features = features;
}

void hg_free(void* ptr) { free(ptr); }
