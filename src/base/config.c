// Environment configuration (HOLOGRAM_BACKEND, HOLOGRAM_NUM_THREADS, OMP_NUM_THREADS,
// HOLOGRAM_CPU_MEMORY_CACHE).
#include "base/config.h"
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "base/error.h"

hg_status hg_config_backend(hg_backend_kind* out) {
    const char* v = getenv("HOLOGRAM_BACKEND");
    if (!v || !v[0]) {
        *out = HG_BACKEND_AUTO;
        return HG_OK;
    }
    hg_backend_kind k = HG_BACKEND_AUTO;
    if (hg_backend_from_name(v, &k) != HG_OK)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "environment variable HOLOGRAM_BACKEND='%s' is not a backend name "
                        "(expected one of: auto, cpu, cuda, metal)",
                        v);
    *out = k;
    return HG_OK;
}

int hg_config_num_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > HG_CONFIG_MAX_THREADS ? HG_CONFIG_MAX_THREADS : (int)n;
}

// Parses a positive thread count from the start of v (OMP_NUM_THREADS may be a list "4,2":
// its first entry is the outer level). Returns 0 when it is not one.
static int parse_threads(const char* name, const char* v, int allow_list) {
    if (!v || !v[0]) return 0;
    char* end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    int ok = end != v && errno == 0 && n >= 1 && (*end == 0 || (allow_list && *end == ','));
    if (!ok) {
        hg_log(HG_LOG_WARN, "ignoring %s='%s': expected a positive integer", name, v);
        return 0;
    }
    if (n > HG_CONFIG_MAX_THREADS) {
        hg_log(HG_LOG_WARN, "%s=%ld is more than %d; using %d", name, n, HG_CONFIG_MAX_THREADS,
               HG_CONFIG_MAX_THREADS);
        n = HG_CONFIG_MAX_THREADS;
    }
    return (int)n;
}

int hg_config_num_threads(int requested) {
    if (requested > 0) return requested > HG_CONFIG_MAX_THREADS ? HG_CONFIG_MAX_THREADS : requested;
    int n = parse_threads("HOLOGRAM_NUM_THREADS", getenv("HOLOGRAM_NUM_THREADS"), 0);
    if (n > 0) return n;
    n = parse_threads("OMP_NUM_THREADS", getenv("OMP_NUM_THREADS"), 1);
    if (n > 0) return n;
    return hg_config_num_cores();
}

// A byte count from environment variable `name`, else dflt (malformed: a warning, then dflt).
static size_t env_bytes(const char* name, size_t dflt) {
    const char* v = getenv(name);
    if (!v || !v[0]) return dflt;
    char* end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (end == v || errno || *end || v[0] == '-') {
        hg_log(HG_LOG_WARN, "ignoring %s='%s': expected a byte count", name, v);
        return dflt;
    }
    return (size_t)n;
}

size_t hg_config_cpu_memory_cache(void) {
    return env_bytes("HOLOGRAM_CPU_MEMORY_CACHE", (size_t)1 << 30);
}

size_t hg_config_stream_store_bytes(void) {
    const size_t cap = (size_t)32 << 20;
    size_t llc = cap;
#ifdef _SC_LEVEL3_CACHE_SIZE
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0 && (size_t)l3 < cap) llc = (size_t)l3;
#endif
    return env_bytes("HOLOGRAM_STREAM_STORES", llc);
}
