// Version and build facts, and hg_free for memory the library hands out.
#include <stdlib.h>
#include "hologram.h"

#ifndef HG_BUILD_TYPE
#define HG_BUILD_TYPE "unknown"
#endif

#if defined(__clang__)
#define HG_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define HG_COMPILER "gcc " __VERSION__
#elif defined(__VERSION__)
#define HG_COMPILER __VERSION__
#else
#define HG_COMPILER "unknown"
#endif

#ifdef HG_HAVE_AVX2_KERNELS
#define HG_FEAT_AVX2 " avx2-kernels"
#else
#define HG_FEAT_AVX2 ""
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
static const char features[] = "cpu" HG_FEAT_AVX2 HG_FEAT_ASAN;

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
