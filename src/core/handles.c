// The global handle table: pages of slots that never move, a free list for reuse, and a
// generation per slot so stale handles are detected after their slot is reused.
#include "core/handles.h"
#include <pthread.h>
#include <stdlib.h>
#include "core/error.h"

#define PAGE_BITS 10
#define PAGE_SLOTS (1u << PAGE_BITS)
#define MAX_PAGES (1u << 22)   // 2^32 slots in all: index is 32 bits

typedef struct slot {
    void* obj;
    uint32_t generation;  // 24 bits used
    uint8_t kind;         // 0 = free
    uint32_t next_free;
} slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot** g_pages = NULL;
static uint32_t g_npages = 0, g_cap_pages = 0;
static uint32_t g_next_index = 1;     // index 0 is never handed out
static uint32_t g_free_head = 0;      // 0 = empty free list
static uint64_t g_live[HG_HANDLE_KIND_COUNT];

static slot* slot_at(uint32_t index) {
    uint32_t page = index >> PAGE_BITS;
    if (page >= g_npages) return NULL;
    return &g_pages[page][index & (PAGE_SLOTS - 1)];
}

static uint64_t make_handle(hg_handle_kind kind, uint32_t gen, uint32_t index) {
    return ((uint64_t)kind << 56) | ((uint64_t)(gen & 0xFFFFFFu) << 32) | index;
}

uint64_t hg_handle_insert(hg_handle_kind kind, void* obj) {
    pthread_mutex_lock(&g_lock);
    uint32_t index;
    slot* s;
    if (g_free_head) {
        index = g_free_head;
        s = slot_at(index);
        g_free_head = s->next_free;
    } else {
        index = g_next_index;
        uint32_t page = index >> PAGE_BITS;
        if (page >= MAX_PAGES) { pthread_mutex_unlock(&g_lock); return 0; }
        if (page >= g_npages) {
            if (g_npages == g_cap_pages) {
                uint32_t nc = g_cap_pages ? g_cap_pages * 2 : 16;
                slot** np = realloc(g_pages, nc * sizeof *np);
                if (!np) { pthread_mutex_unlock(&g_lock); return 0; }
                g_pages = np;
                g_cap_pages = nc;
            }
            slot* pg = calloc(PAGE_SLOTS, sizeof *pg);
            if (!pg) { pthread_mutex_unlock(&g_lock); return 0; }
            g_pages[g_npages++] = pg;
        }
        g_next_index++;
        s = slot_at(index);
    }
    s->obj = obj;
    s->kind = (uint8_t)kind;
    s->generation = (s->generation + 1) & 0xFFFFFFu;
    if (s->generation == 0) s->generation = 1;
    g_live[kind]++;
    uint64_t h = make_handle(kind, s->generation, index);
    pthread_mutex_unlock(&g_lock);
    return h;
}

// Caller holds g_lock.
static slot* find(uint64_t handle, hg_handle_kind kind) {
    uint32_t index = (uint32_t)handle;
    uint32_t gen = (uint32_t)(handle >> 32) & 0xFFFFFFu;
    unsigned hkind = (unsigned)(handle >> 56);
    if (!index || hkind != (unsigned)kind) return NULL;
    slot* s = slot_at(index);
    if (!s || s->kind != kind || s->generation != gen) return NULL;
    return s;
}

void* hg_handle_get(uint64_t handle, hg_handle_kind kind) {
    pthread_mutex_lock(&g_lock);
    slot* s = find(handle, kind);
    void* obj = s ? s->obj : NULL;
    pthread_mutex_unlock(&g_lock);
    return obj;
}

static const char* kind_name(unsigned k) {
    switch (k) {
    case HG_HANDLE_EXECUTOR: return "executor";
    case HG_HANDLE_BUFFER: return "buffer";
    case HG_HANDLE_PROGRAM: return "program";
    case HG_HANDLE_KERNEL: return "kernel";
    case HG_HANDLE_GRAPH: return "graph";
    case HG_HANDLE_PLAN: return "plan";
    default: return "unknown";
    }
}

void* hg_handle_resolve(uint64_t handle, hg_handle_kind kind, const char* what) {
    void* obj = hg_handle_get(handle, kind);
    if (obj) return obj;
    unsigned hkind = (unsigned)(handle >> 56);
    if (handle == 0)
        hg_error(HG_ERR_INVALID_HANDLE, "%s: the %s handle is zero (never created?)", what,
                 kind_name(kind));
    else if (hkind != (unsigned)kind)
        hg_error(HG_ERR_INVALID_HANDLE, "%s: handle 0x%016llx is a %s handle, expected a %s handle",
                 what, (unsigned long long)handle, kind_name(hkind), kind_name(kind));
    else
        hg_error(HG_ERR_INVALID_HANDLE,
                 "%s: %s handle 0x%016llx is not live (already destroyed, or not from this library)",
                 what, kind_name(kind), (unsigned long long)handle);
    return NULL;
}

void* hg_handle_remove(uint64_t handle, hg_handle_kind kind) {
    pthread_mutex_lock(&g_lock);
    slot* s = find(handle, kind);
    void* obj = NULL;
    if (s) {
        obj = s->obj;
        s->obj = NULL;
        s->kind = 0;
        s->generation = (s->generation + 1) & 0xFFFFFFu;  // stale handles never match again
        s->next_free = g_free_head;
        g_free_head = (uint32_t)handle;
        g_live[kind]--;
    }
    pthread_mutex_unlock(&g_lock);
    return obj;
}

uint64_t hg_handle_live_count(hg_handle_kind kind) {
    if ((unsigned)kind >= HG_HANDLE_KIND_COUNT) return 0;
    pthread_mutex_lock(&g_lock);
    uint64_t n = g_live[kind];
    pthread_mutex_unlock(&g_lock);
    return n;
}
