// CPU facts for `hologram info` and the device info: instruction-set features of the running
// machine and its model name.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "hologram.h"
#include "backends/cpu/cpu_features.h"
#include "base/cpu_level.h"

static char features[128];
static char model[192];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void append(char* buf, size_t len, const char* word) {
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, "%s%s", n ? " " : "", word);
}

static void detect(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    static const char* const names[] = {"sse2", "sse4.1", "sse4.2", "avx", "avx2", "fma", "f16c",
                                        "avx512f"};
    int have[8] = {
        __builtin_cpu_supports("sse2"), __builtin_cpu_supports("sse4.1"),
        __builtin_cpu_supports("sse4.2"), __builtin_cpu_supports("avx"),
        __builtin_cpu_supports("avx2"), __builtin_cpu_supports("fma"),
        hg_cpu_has_f16c(), __builtin_cpu_supports("avx512f")};
    for (int i = 0; i < 8; i++)
        if (have[i]) append(features, sizeof features, names[i]);
#elif defined(__aarch64__)
    append(features, sizeof features, "neon");
#endif
    FILE* f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) != 0) continue;
            const char* v = strchr(line, ':');
            if (!v) continue;
            v++;
            while (*v == ' ' || *v == '\t') v++;
            snprintf(model, sizeof model, "%s", v);
            model[strcspn(model, "\n")] = 0;
            break;
        }
        fclose(f);
    }
    if (!model[0]) snprintf(model, sizeof model, "%s", "unknown CPU");
}

const char* hg_cpu_features(void) {
    pthread_once(&once, detect);
    return features;
}

const char* hg_cpu_model_name(void) {
    pthread_once(&once, detect);
    return model;
}
