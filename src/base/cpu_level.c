// The CPU level (see cpu_level.h), read from the CPU model libgcc fills in at load time.
#include "base/cpu_level.h"
#include <pthread.h>

static hg_cpu_level g_level;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void decide(void) {
    g_level = HG_CPU_GENERIC;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
        !__builtin_cpu_supports("f16c"))
        return;
    g_level = HG_CPU_AVX2;
    // __builtin_cpu_supports also checks that the OS saves the zmm/mask state (XCR0).
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        g_level = HG_CPU_AVX512;
#endif
}

hg_cpu_level hg_cpu_level_get(void) {
    pthread_once(&g_once, decide);
    return g_level;
}

const char* hg_cpu_level_name(hg_cpu_level level) {
    static const char* const names[] = {"generic", "avx2", "avx512"};
    return level >= HG_CPU_GENERIC && level <= HG_CPU_AVX512 ? names[level] : "?";
}
