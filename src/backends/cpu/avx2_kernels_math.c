// The AVX2+FMA+F16C build of simd/kernels_math.c for builds whose CMake did not compile simd/*.c
// a second time with -mavx2 (HG_HAVE_AVX2_KERNELS undefined): the same source, compiled here
// with a target pragma instead of command-line flags. Empty where the build provides the set.
#if defined(__x86_64__) && !defined(HG_HAVE_AVX2_KERNELS)
#pragma GCC target("avx2,fma,f16c")
#define HG_SIMD_SUFFIX avx2
#define HG_SIMD_AVX2 1
#include "backends/cpu/simd/kernels_math.c"
#else
typedef int hg_cpu_avx2_math_provided_by_the_build;
#endif
