// Internal: function attributes for the copies of a loop built for each CPU level, which code
// picks at run time by hg_cpu_level_get() (base/cpu_level.h). GCC and clang both take
// target("..."); only GCC knows prefer-vector-width=512 there (its AVX-512 functions otherwise
// vectorize 256-bit), while clang's generic tuning already vectorizes an avx512f function 512-bit.
#ifndef HG_BASE_CPU_TARGETS_H
#define HG_BASE_CPU_TARGETS_H

#include "base/cpu_level.h"

#if defined(__x86_64__) && defined(__GNUC__)   // clang defines __GNUC__ too
#define HG_HAVE_CPU_TARGETS 1
#define HG_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define HG_TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))
#if defined(__clang__)
#define HG_TARGET_AVX512_WIDE HG_TARGET_AVX512
#else
#define HG_TARGET_AVX512_WIDE                                                                     \
    __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,prefer-vector-width=512")))
#endif
// The copy of a function for the running level (base, avx2, avx512 name the three copies).
#define HG_PICK_LEVEL(base, avx2, avx512)                                                         \
    (hg_cpu_level_get() >= HG_CPU_AVX512 ? (avx512)                                               \
     : hg_cpu_level_get() >= HG_CPU_AVX2 ? (avx2)                                                 \
                                         : (base))
#else
#define HG_PICK_LEVEL(base, avx2, avx512) (base)
#endif

#endif
