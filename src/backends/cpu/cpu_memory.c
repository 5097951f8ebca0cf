// Host memory of the CPU backend: 64-byte aligned heap blocks for small buffers; 2 MiB and
// more as anonymous mappings placed on 2 MiB boundaries (transparent huge pages), which the
// executor keeps in a cache when they are freed. A fresh mapping costs a page fault per 4 KiB
// on first touch (a 64 MiB result: ~16K faults, several milliseconds, more than the op that
// fills it), so eager ops and plans that allocate results of the same sizes again reuse
// resident memory instead. Cached bytes are bounded (HOLOGRAM_CPU_MEMORY_CACHE, default 1 GiB;
// 0 disables) and released when the executor is destroyed. Heap blocks of 512 B..64 KiB are
// kept too, a few per size class (small_take / small_put).
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "backends/cpu/cpu_internal.h"
#include "base/error.h"

#define HEAP_MAGIC 0x48474d454d484541ull   // heap block
#define MAP_MAGIC 0x48474d454d4d4150ull    // mapping
#define HUGE_SIZE ((size_t)2 << 20)
#define PAGE 4096u

// 64 bytes in front of every block record how to release it.
typedef struct mem_header {
    uint64_t magic;
    void* map_start;
    size_t map_len;
    size_t capacity;   // usable bytes from the data pointer on
} mem_header;
_Static_assert(sizeof(mem_header) <= 64, "the block header must fit in front of the data");

static mem_header header_of(void* mem) {
    mem_header h;
    memcpy(&h, (uint8_t*)mem - 64, sizeof h);
    return h;
}

// Bytes of fresh memory are zero; others are filled as asked. Sanitizer builds fill memory
// that the caller does not need zeroed with 0xFF bytes (NaN for floats), so a use that relies
// on zeros it did not ask for shows in the tests.
static void prepare(void* data, size_t nbytes, int zero, int fresh) {
    if (zero && !fresh) memset(data, 0, nbytes);
#ifdef HG_POISON_UNINIT
    if (!zero) memset(data, 0xFF, nbytes);
#else
    (void)nbytes;
#endif
}

static hg_status map_block(size_t nbytes, void** out) {
    // Map enough to place the data on a 2 MiB boundary (so the kernel can back it with huge
    // pages) with one small page in front for the header; unmap the slack on both sides.
    size_t data = (nbytes + PAGE - 1) & ~(size_t)(PAGE - 1);
    size_t len = data + HUGE_SIZE + PAGE;
    uint8_t* raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of host memory mapping %zu bytes", nbytes);
    uintptr_t p = ((uintptr_t)raw + PAGE + HUGE_SIZE - 1) & ~(uintptr_t)(HUGE_SIZE - 1);
    uint8_t* data_start = (uint8_t*)p;
    uint8_t* map_start = data_start - PAGE;
    if (map_start > raw) munmap(raw, (size_t)(map_start - raw));
    uint8_t* end = data_start + data;
    if (end < raw + len) munmap(end, (size_t)(raw + len - end));
#ifdef MADV_HUGEPAGE
    madvise(data_start, data, MADV_HUGEPAGE);
#endif
    mem_header h = {MAP_MAGIC, map_start, PAGE + data, data};
    memcpy(data_start - 64, &h, sizeof h);
    *out = data_start;
    return HG_OK;
}

static void unmap_block(void* mem) {
    mem_header h = header_of(mem);
    munmap(h.map_start, h.map_len);
}

// A cached mapping of at least nbytes and at most twice that (plus one huge page), the
// smallest such; removed from the cache. NULL if none.
static void* cache_take(cpu_mem_cache* c, size_t nbytes) {
    pthread_mutex_lock(&c->lock);
    int best = -1;
    for (int i = 0; i < c->n; i++) {
        size_t cap = c->blocks[i].capacity;
        if (cap >= nbytes && cap <= 2 * nbytes + HUGE_SIZE &&
            (best < 0 || cap < c->blocks[best].capacity))
            best = i;
    }
    void* mem = NULL;
    if (best >= 0) {
        mem = c->blocks[best].mem;
        c->bytes -= c->blocks[best].capacity;
        c->blocks[best] = c->blocks[--c->n];
    }
    pthread_mutex_unlock(&c->lock);
    return mem;
}

// Keeps a freed mapping for reuse; evicts the largest cached ones to stay within the budget.
// Returns 0 when the mapping was not kept (the caller unmaps it).
static int cache_put(cpu_mem_cache* c, void* mem, size_t capacity) {
    if (capacity > c->budget) return 0;
    void* evict[HG_CPU_MEM_CACHE_SLOTS];
    int nevict = 0;
    pthread_mutex_lock(&c->lock);
    while (c->n > 0 && (c->bytes + capacity > c->budget || c->n == HG_CPU_MEM_CACHE_SLOTS)) {
        int big = 0;
        for (int i = 1; i < c->n; i++)
            if (c->blocks[i].capacity > c->blocks[big].capacity) big = i;
        evict[nevict++] = c->blocks[big].mem;
        c->bytes -= c->blocks[big].capacity;
        c->blocks[big] = c->blocks[--c->n];
    }
    c->blocks[c->n].mem = mem;
    c->blocks[c->n].capacity = capacity;
    c->n++;
    c->bytes += capacity;
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < nevict; i++) unmap_block(evict[i]);
    return 1;
}

void hg_cpu_mem_cache_init(cpu_mem_cache* c, size_t budget) {
    memset(c, 0, sizeof *c);
    for (int k = 0; k < HG_CPU_SMALL_CLASSES; k++)
        for (int i = 0; i < HG_CPU_SMALL_SLOTS; i++) atomic_init(&c->small[k][i], NULL);
    pthread_mutex_init(&c->lock, NULL);
    c->budget = budget;
}

void hg_cpu_mem_cache_release(cpu_mem_cache* c) {
    for (int k = 0; k < HG_CPU_SMALL_CLASSES; k++)
        for (int i = 0; i < HG_CPU_SMALL_SLOTS; i++) {
            void* mem = atomic_exchange(&c->small[k][i], NULL);
            if (mem) free(header_of(mem).map_start);
        }
    for (int i = 0; i < c->n; i++) unmap_block(c->blocks[i].mem);
    c->n = 0;
    c->bytes = 0;
    pthread_mutex_destroy(&c->lock);
}

// Heap blocks of SMALL_MIN < n <= SMALL_MAX bytes (512 B .. 64 KiB) get a capacity rounded up to a quarter
// octave (at most 25% more) and, when freed, wait in the executor's slots for the next block of
// their class: glibc's per-thread cache (as fast as anything here) stops at 1,032 bytes with
// our header, and beyond it an eager op's result cost much more (docs/performance.md).
#define SMALL_MIN ((size_t)512)
#define SMALL_MAX ((size_t)64 << 10)

// The class of n (SMALL_MIN < n <= SMALL_MAX) and its capacity.
static int small_class(size_t n, size_t* cap) {
    int p = 63 - __builtin_clzll((unsigned long long)(n - 1));   // 2^p < n <= 2^(p+1), p >= 9
    size_t step = (size_t)1 << (p - 2);
    *cap = (n + step - 1) / step * step;
    return (p - 9) * 4 + (int)(*cap / step) - 5;
}

static void* small_take(cpu_mem_cache* c, int cls) {
    for (int i = 0; i < HG_CPU_SMALL_SLOTS; i++) {
        if (!atomic_load_explicit(&c->small[cls][i], memory_order_relaxed)) continue;
        void* p = atomic_exchange_explicit(&c->small[cls][i], NULL, memory_order_acquire);
        if (p) return p;
    }
    return NULL;
}

static int small_put(cpu_mem_cache* c, int cls, void* mem) {
    for (int i = 0; i < HG_CPU_SMALL_SLOTS; i++) {
        void* empty = NULL;
        if (atomic_compare_exchange_strong_explicit(&c->small[cls][i], &empty, mem,
                                                    memory_order_release, memory_order_relaxed))
            return 1;
    }
    return 0;
}

hg_status hg_cpu_mem_alloc(void* state, size_t nbytes, int zero, void** out) {
    cpu_state* st = state;
    if (nbytes < HUGE_SIZE) {
        // malloc and align by hand: glibc's aligned_alloc takes a slower path than malloc, and
        // small blocks are made and freed at the rate of eager ops.
        size_t cap = (nbytes + 63) & ~(size_t)63;
        if (nbytes > SMALL_MIN && nbytes <= SMALL_MAX && st->mem_cache.budget) {
            void* mem = small_take(&st->mem_cache, small_class(nbytes, &cap));
            if (mem) {
                prepare(mem, nbytes, zero, 0);
                *out = mem;
                return HG_OK;
            }
        }
        uint8_t* raw = malloc(cap + 128);
        if (!raw) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of host memory allocating %zu bytes",
                                  nbytes);
        uint8_t* data = (uint8_t*)(((uintptr_t)raw + 64 + 63) & ~(uintptr_t)63);
        mem_header h = {HEAP_MAGIC, raw, cap + 128, cap};
        memcpy(data - 64, &h, sizeof h);
        *out = data;
        prepare(data, nbytes, zero, 0);
        return HG_OK;
    }
    void* mem = cache_take(&st->mem_cache, nbytes);
    if (mem) {
        prepare(mem, nbytes, zero, 0);
        *out = mem;
        return HG_OK;
    }
    hg_status s = map_block(nbytes, &mem);
    if (s == HG_ERR_OUT_OF_MEMORY && st->mem_cache.n) {
        // Give the cached mappings back to the system and try once more.
        hg_clear_error();
        pthread_mutex_lock(&st->mem_cache.lock);
        int n = st->mem_cache.n;
        void* blocks[HG_CPU_MEM_CACHE_SLOTS];
        for (int i = 0; i < n; i++) blocks[i] = st->mem_cache.blocks[i].mem;
        st->mem_cache.n = 0;
        st->mem_cache.bytes = 0;
        pthread_mutex_unlock(&st->mem_cache.lock);
        for (int i = 0; i < n; i++) unmap_block(blocks[i]);
        s = map_block(nbytes, &mem);
    }
    if (s) return s;
    prepare(mem, nbytes, zero, 1);
    *out = mem;
    return HG_OK;
}

void hg_cpu_mem_free(void* state, void* mem) {
    cpu_state* st = state;
    if (!mem) return;
    mem_header h = header_of(mem);
    if (h.magic == HEAP_MAGIC) {
        size_t cap = 0;
        if (h.capacity > SMALL_MIN && h.capacity <= SMALL_MAX && st->mem_cache.budget) {
            int cls = small_class(h.capacity, &cap);
            if (cap == h.capacity && small_put(&st->mem_cache, cls, mem)) return;
        }
        free(h.map_start);
    } else if (h.magic == MAP_MAGIC) {
        if (!cache_put(&st->mem_cache, mem, h.capacity)) munmap(h.map_start, h.map_len);
    }
}
