// Compiled-kernel caches of the CUDA backend (see cuda_internal.h): a per-process list in memory
// and files on disk. A disk entry is a 32-byte header ("HGKC", format version, image size,
// CRC-32 of the image, the key) followed by the image; entries that do not check out are ignored
// and overwritten. Writers use a temporary name and rename, so readers never see a partial file.
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "backends/cuda/cuda_internal.h"
#include "base/config.h"
#include "base/error.h"
#include "base/checksum.h"

#define KC_MAGIC "HGKC"
#define KC_VERSION 1u
#define KC_MEMORY_MAX 512   // images kept in memory (oldest dropped first)

typedef struct kc_entry {
    char key[40];
    char ext[8];
    void* image;
    size_t len;
} kc_entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static kc_entry g_mem[KC_MEMORY_MAX];
static size_t g_nmem, g_next;

void hg_cuda_kcache_key(const char* src, size_t len, const char* options, const char* target,
                        const char* compiler_version, char key[40]) {
    uint64_t h1 = hg_fnv1a64(HG_FNV_OFFSET, src, len);
    uint64_t h2 = hg_fnv1a64(h1 ^ UINT64_C(0x9e3779b97f4a7c15), options, strlen(options));
    h2 = hg_fnv1a64(h2, target, strlen(target));
    h2 = hg_fnv1a64(h2, compiler_version, strlen(compiler_version));
    h2 = hg_fnv1a64(h2, HG_VERSION_STRING, strlen(HG_VERSION_STRING));
    h1 = hg_fnv1a64(h1, &h2, sizeof h2);
    snprintf(key, 40, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

static int mkdirs(const char* path) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char* p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

static pthread_once_t g_dir_once = PTHREAD_ONCE_INIT;
static char g_dir[1024];

static void find_dir(void) {
    const char* over = hg_config_string("HOLOGRAM_CACHE_DIR");
    const char* xdg = getenv("XDG_CACHE_HOME");
    const char* home = getenv("HOME");
    char d[1024] = "";
    if (over && over[0]) snprintf(d, sizeof d, "%.1000s", over);
    else if (xdg && xdg[0]) snprintf(d, sizeof d, "%.990s/hologram", xdg);
    else if (home && home[0]) snprintf(d, sizeof d, "%.980s/.cache/hologram", home);
    if (d[0] && mkdirs(d) == 0 && access(d, W_OK) == 0) snprintf(g_dir, sizeof g_dir, "%s", d);
}

const char* hg_cuda_cache_dir(void) {
    pthread_once(&g_dir_once, find_dir);
    return g_dir;
}

const char* hg_kernel_cache_dir(void) {
    const char* d = hg_cuda_cache_dir();
    if (d[0]) return d;
    hg_error(HG_ERR_IO, "no usable kernel cache folder (kernels are cached in memory only): "
             "set HOLOGRAM_CACHE_DIR, XDG_CACHE_HOME or HOME to a writable folder");
    return NULL;
}

static void put_le32(unsigned char* p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_le32(const unsigned char* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void hg_cuda_kcache_fork(hg_fork_phase phase) { hg_fork_mutex(&g_lock, phase); }

static void mem_put(const char* key, const char* ext, const void* image, size_t len) {
    void* copy = malloc(len ? len : 1);
    if (!copy) return;
    memcpy(copy, image, len);
    pthread_mutex_lock(&g_lock);
    kc_entry* e;
    if (g_nmem < KC_MEMORY_MAX) {
        e = &g_mem[g_nmem++];
    } else {
        e = &g_mem[g_next];
        g_next = (g_next + 1) % KC_MEMORY_MAX;
        free(e->image);
    }
    snprintf(e->key, sizeof e->key, "%s", key);
    snprintf(e->ext, sizeof e->ext, "%s", ext);
    e->image = copy;
    e->len = len;
    pthread_mutex_unlock(&g_lock);
}

int hg_cuda_kcache_get(const char* key, const char* ext, void** image, size_t* len) {
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_nmem; i++) {
        if (strcmp(g_mem[i].key, key) || strcmp(g_mem[i].ext, ext)) continue;
        void* copy = malloc(g_mem[i].len ? g_mem[i].len : 1);
        if (copy) memcpy(copy, g_mem[i].image, g_mem[i].len);
        *image = copy;
        *len = g_mem[i].len;
        pthread_mutex_unlock(&g_lock);
        return copy != NULL;
    }
    pthread_mutex_unlock(&g_lock);
    const char* dir = hg_cuda_cache_dir();
    if (!dir[0]) return 0;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.%s", dir, key, ext);
    FILE* f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char hdr[32 + 32];
    int ok = fread(hdr, 1, sizeof hdr, f) == sizeof hdr && !memcmp(hdr, KC_MAGIC, 4) &&
             get_le32(hdr + 4) == KC_VERSION && !memcmp(hdr + 16, key, 32);
    size_t n = ok ? get_le32(hdr + 8) : 0;
    unsigned char* buf = ok ? malloc(n ? n : 1) : NULL;
    ok = buf && fread(buf, 1, n, f) == n && hg_crc32(buf, n) == get_le32(hdr + 12);
    fclose(f);
    if (!ok) {
        free(buf);
        return 0;
    }
    mem_put(key, ext, buf, n);
    *image = buf;
    *len = n;
    return 1;
}

void hg_cuda_kcache_put(const char* key, const char* ext, const void* image, size_t len) {
    mem_put(key, ext, image, len);
    const char* dir = hg_cuda_cache_dir();
    if (!dir[0] || len > 0xFFFFFFFFu) return;
    char path[1200], tmp[1300];
    snprintf(path, sizeof path, "%s/%s.%s", dir, key, ext);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%p", path, (long)getpid(), (void*)&len);
    FILE* f = fopen(tmp, "wb");
    if (!f) return;
    unsigned char hdr[64];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, KC_MAGIC, 4);
    put_le32(hdr + 4, KC_VERSION);
    put_le32(hdr + 8, (uint32_t)len);
    put_le32(hdr + 12, hg_crc32(image, len));
    memcpy(hdr + 16, key, 32);
    int ok = fwrite(hdr, 1, sizeof hdr, f) == sizeof hdr && fwrite(image, 1, len, f) == len;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}
