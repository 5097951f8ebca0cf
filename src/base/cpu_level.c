// The CPU level (see cpu_level.h), read from the CPU model libgcc fills in at load time.
#include "base/cpu_level.h"
#include "base/config.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static hg_cpu_level g_level;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

// HOLOGRAM_CPU_LEVEL=generic|avx2 caps the level: the narrower kernels of a Zen 3 (AVX2) or a
// baseline machine run, and are tested, on a wider CPU. A level the CPU lacks is never taken.
static void cap_from_env(void) {
    static const char* const names[] = {"generic", "avx2", "avx512"};
    _Static_assert(HG_CPU_GENERIC == 0 && HG_CPU_AVX2 == 1 && HG_CPU_AVX512 == 2, "cpu levels");
    hg_cpu_level cap = (hg_cpu_level)hg_config_choice("HOLOGRAM_CPU_LEVEL", names, 3,
                                                      HG_CPU_AVX512);
    if (cap < g_level) g_level = cap;
}

// F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c".
// Its VEX instructions need the OS's AVX state, which the "avx2" check below has confirmed.
int hg_cpu_has_f16c(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
#else
    return 0;
#endif
}

static void decide(void) {
    g_level = HG_CPU_GENERIC;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
        !hg_cpu_has_f16c())
        return;
    g_level = HG_CPU_AVX2;
    // __builtin_cpu_supports also checks that the OS saves the zmm/mask state (XCR0).
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        g_level = HG_CPU_AVX512;
#endif
}

static void decide_capped(void) {
    decide();
    cap_from_env();
}

hg_cpu_level hg_cpu_level_get(void) {
    pthread_once(&g_once, decide_capped);
    return g_level;
}

const char* hg_cpu_level_name(hg_cpu_level level) {
    static const char* const names[] = {"generic", "avx2", "avx512"};
    return level >= HG_CPU_GENERIC && level <= HG_CPU_AVX512 ? names[level] : "?";
}
