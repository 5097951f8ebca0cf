// Environment configuration: the one parser of every HOLOGRAM_* variable (config.h).
#include "base/config.h"
#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "base/checksum.h"
#include "base/error.h"

// Warnings are given once per (variable, value): the functions run on every executor creation
// or probe. Lock-free (a slot array of hashes), so no lock needs re-making after fork.
#define WARNED_SLOTS 64
static _Atomic uint64_t g_warned[WARNED_SLOTS];

static int first_warning(const char* name, const char* value) {
    uint64_t h = hg_fnv1a64(UINT64_C(0xcbf29ce484222325), name, strlen(name));
    h = hg_fnv1a64(h, "=", 1);
    h = hg_fnv1a64(h, value, strlen(value));
    if (!h) h = 1;
    for (int i = 0; i < WARNED_SLOTS; i++) {
        uint64_t cur = atomic_load(&g_warned[i]);
        if (cur == h) return 0;
        if (cur == 0) {
            uint64_t zero = 0;
            if (atomic_compare_exchange_strong(&g_warned[i], &zero, h)) return 1;
            if (zero == h) return 0;
        }
    }
    return 1;  // table full: warn again rather than stay silent
}

static void warn_value(const char* name, const char* value, const char* accepted,
                       const char* used) {
    if (first_warning(name, value))
        hg_log(HG_LOG_WARN, "ignoring %s='%s': expected %s; using %s", name, value, accepted,
               used);
}

const char* hg_config_string(const char* name) {
    const char* v = getenv(name);
    return v && v[0] ? v : NULL;
}

// The value without surrounding blanks, in buf (NULL when unset, empty or too long to be valid).
static const char* trimmed(const char* name, char* buf, size_t len) {
    const char* v = hg_config_string(name);
    if (!v) return NULL;
    while (isspace((unsigned char)*v)) v++;
    size_t n = strlen(v);
    while (n && isspace((unsigned char)v[n - 1])) n--;
    if (n >= len) n = len - 1;
    memcpy(buf, v, n);
    buf[n] = 0;
    return buf;
}

int hg_config_bool(const char* name, int dflt) {
    static const char* const yes[] = {"1", "true", "yes", "on"};
    static const char* const no[] = {"0", "false", "no", "off"};
    char buf[64];
    const char* v = trimmed(name, buf, sizeof buf);
    if (!v) return dflt;
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i])) return 1;
        if (!strcasecmp(v, no[i])) return 0;
    }
    warn_value(name, hg_config_string(name), "a boolean (1/0, true/false, yes/no, on/off)",
               dflt ? "true" : "false");
    return dflt;
}

int hg_config_choice(const char* name, const char* const* choices, int n, int dflt) {
    char buf[64];
    const char* v = trimmed(name, buf, sizeof buf);
    if (!v) return dflt;
    for (int i = 0; i < n; i++)
        if (!strcasecmp(v, choices[i])) return i;
    char accepted[256] = "one of:";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(accepted);
        snprintf(accepted + used, sizeof accepted - used, "%s %s", i ? "," : "", choices[i]);
    }
    warn_value(name, hg_config_string(name), accepted,
               dflt >= 0 && dflt < n ? choices[dflt] : "the default");
    return dflt;
}

long long hg_config_int(const char* name, long long lo, long long hi, long long dflt) {
    char buf[64];
    const char* v = trimmed(name, buf, sizeof buf);
    if (!v) return dflt;
    char* end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (end != v && !*end && !errno && n >= lo && n <= hi) return n;
    char accepted[96], used[32];
    snprintf(accepted, sizeof accepted, "an integer in [%lld, %lld]", lo, hi);
    snprintf(used, sizeof used, "%lld", dflt);
    warn_value(name, hg_config_string(name), accepted, used);
    return dflt;
}

size_t hg_config_bytes(const char* name, size_t dflt) {
    char buf[64];
    const char* v = trimmed(name, buf, sizeof buf);
    if (!v) return dflt;
    char* end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (end != v && !*end && !errno && v[0] != '-' && n <= SIZE_MAX) return (size_t)n;
    char used[32];
    snprintf(used, sizeof used, "%zu", dflt);
    warn_value(name, hg_config_string(name), "a byte count (a non-negative integer)", used);
    return dflt;
}

hg_status hg_config_backend(hg_backend_kind* out) {
    char buf[64];
    const char* v = trimmed("HOLOGRAM_BACKEND", buf, sizeof buf);
    if (!v) {
        *out = HG_BACKEND_AUTO;
        return HG_OK;
    }
    hg_backend_kind k = HG_BACKEND_AUTO;
    if (hg_backend_from_name(v, &k) != HG_OK)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "environment variable HOLOGRAM_BACKEND='%s' is not a backend name "
                        "(expected one of: auto, cpu, cuda, metal)",
                        hg_config_string("HOLOGRAM_BACKEND"));
    *out = k;
    return HG_OK;
}

int hg_config_num_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > HG_CONFIG_MAX_THREADS ? HG_CONFIG_MAX_THREADS : (int)n;
}

// A positive thread count (OMP_NUM_THREADS may be a list "4,2": its first entry is the outer
// level); above HG_CONFIG_MAX_THREADS it is capped with a warning. 0 when unset or malformed.
static int parse_threads(const char* name, int allow_list) {
    char buf[64];
    const char* v = trimmed(name, buf, sizeof buf);
    if (!v) return 0;
    char* end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    int ok = end != v && errno == 0 && n >= 1 && (*end == 0 || (allow_list && *end == ','));
    if (!ok) {
        warn_value(name, hg_config_string(name), "a positive integer", "the number of cores");
        return 0;
    }
    if (n > HG_CONFIG_MAX_THREADS) {
        if (first_warning(name, v))
            hg_log(HG_LOG_WARN, "%s=%ld is more than %d; using %d", name, n,
                   HG_CONFIG_MAX_THREADS, HG_CONFIG_MAX_THREADS);
        n = HG_CONFIG_MAX_THREADS;
    }
    return (int)n;
}

int hg_config_num_threads(int requested) {
    if (requested > 0) return requested > HG_CONFIG_MAX_THREADS ? HG_CONFIG_MAX_THREADS : requested;
    int n = parse_threads("HOLOGRAM_NUM_THREADS", 0);
    if (n > 0) return n;
    n = parse_threads("OMP_NUM_THREADS", 1);
    if (n > 0) return n;
    return hg_config_num_cores();
}

size_t hg_config_cpu_memory_cache(void) {
    return hg_config_bytes("HOLOGRAM_CPU_MEMORY_CACHE", (size_t)1 << 30);
}

size_t hg_config_stream_store_bytes(void) {
    const size_t cap = (size_t)32 << 20;
    size_t llc = cap;
#ifdef _SC_LEVEL3_CACHE_SIZE
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0 && (size_t)l3 < cap) llc = (size_t)l3;
#endif
    return hg_config_bytes("HOLOGRAM_STREAM_STORES", llc);
}
