// Picks the lane-array kernel set once, at the process's CPU level (base/cpu_level.h): AVX-512
// when the CPU has AVX-512F/DQ/BW/VL (and the build compiled it), else AVX2+FMA+F16C, else the
// portable set. All sets give bit-identical
// results (tested).
#include "backends/cpu/cpu_kernels.h"
#include <pthread.h>
#include <string.h>
#include "base/cpu_level.h"

static hg_cpu_kernels generic_set;
#ifdef HG_CPU_HAS_AVX2_SET
static hg_cpu_kernels avx2_set;
static int avx2_ok;
#endif
#ifdef HG_CPU_HAS_AVX512_SET
static hg_cpu_kernels avx512_set;
static int avx512_ok;
#endif
static const hg_cpu_kernels* chosen;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_sets(void) {
    generic_set.name = "generic";
    hg_cpu_fill_arith_generic(&generic_set);
    hg_cpu_fill_math_generic(&generic_set);
    hg_cpu_fill_cvt_generic(&generic_set);
    hg_cpu_fill_gelu_generic(&generic_set);
    hg_cpu_fill_chain_generic(&generic_set);
    chosen = &generic_set;
#ifdef HG_CPU_HAS_AVX2_SET
    avx2_ok = hg_cpu_level_get() >= HG_CPU_AVX2;
    if (avx2_ok) {
        avx2_set.name = "avx2";
        hg_cpu_fill_arith_avx2(&avx2_set);
        hg_cpu_fill_math_avx2(&avx2_set);
        hg_cpu_fill_cvt_avx2(&avx2_set);
        hg_cpu_fill_gelu_avx2(&avx2_set);
        hg_cpu_fill_chain_avx2(&avx2_set);
        chosen = &avx2_set;
    }
#ifdef HG_CPU_HAS_AVX512_SET
    avx512_ok = hg_cpu_level_get() >= HG_CPU_AVX512;
    if (avx512_ok) {
        avx512_set.name = "avx512";
        hg_cpu_fill_arith_avx512(&avx512_set);
        hg_cpu_fill_math_avx512(&avx512_set);
        hg_cpu_fill_cvt_avx512(&avx512_set);
        hg_cpu_fill_gelu_avx512(&avx512_set);
        hg_cpu_fill_chain_avx512(&avx512_set);
        chosen = &avx512_set;
    }
#endif
#endif
}

const hg_cpu_kernels* hg_cpu_kernels_get(void) {
    pthread_once(&once, init_sets);
    return chosen;
}

const hg_cpu_kernels* hg_cpu_kernels_named(const char* name) {
    pthread_once(&once, init_sets);
    if (!strcmp(name, "generic")) return &generic_set;
#ifdef HG_CPU_HAS_AVX2_SET
    if (!strcmp(name, "avx2") && avx2_ok) return &avx2_set;
#endif
#ifdef HG_CPU_HAS_AVX512_SET
    if (!strcmp(name, "avx512") && avx512_ok) return &avx512_set;
#endif
    return NULL;
}

const char* hg_cpu_kernel_set(void) { return hg_cpu_kernels_get()->name; }
