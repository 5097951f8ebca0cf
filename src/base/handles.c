// The global handle table: pages of slots that never move, a free list for reuse, and a
// generation per slot so stale handles are detected after their slot is reused.
#include "base/handles.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "base/error.h"
#include "base/fork.h"

#define PAGE_BITS 10
#define PAGE_SLOTS (1u << PAGE_BITS)
#define MAX_PAGES (1u << 22)   // 2^32 slots in all: index is 32 bits
#define MAX_TABLES 32          // page tables only double, from 16 up to MAX_PAGES

// Lookups take no lock (every op resolves several handles per call): a slot's kind and
// generation form one atomic tag, written under g_lock, and a reader checks the tag before and
// after reading obj, so a slot reused in between is never mistaken for the handle's object.
// Page tables that were outgrown are kept (not freed), so a reader holding an old one stays
// valid; they are at most as large as the current one in all.
typedef struct slot {
    _Atomic(void*) obj;
    _Atomic uint32_t tag;  // kind << 24 | generation (24 bits); kind 0 = free
    uint32_t generation;   // the last generation, kept across frees (under g_lock)
    uint32_t next_free;
} slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(slot**) g_pages = NULL;
static _Atomic uint32_t g_npages = 0;
static uint32_t g_cap_pages = 0;
static slot** g_old_tables[MAX_TABLES];
static uint32_t g_nold_tables = 0;
static uint32_t g_next_index = 1;     // index 0 is never handed out
static uint32_t g_free_head = 0;      // 0 = empty free list
static uint64_t g_live[HG_HANDLE_KIND_COUNT];

static uint32_t make_tag(uint32_t kind, uint32_t gen) { return kind << 24 | (gen & 0xFFFFFFu); }

// Lock-free: g_npages is published after the page (and the table holding it) is in place.
static slot* slot_at(uint32_t index) {
    uint32_t page = index >> PAGE_BITS;
    if (page >= atomic_load(&g_npages)) return NULL;
    slot** pages = atomic_load(&g_pages);
    return &pages[page][index & (PAGE_SLOTS - 1)];
}

static uint64_t make_handle(hg_handle_kind kind, uint32_t gen, uint32_t index) {
    return ((uint64_t)kind << 56) | ((uint64_t)(gen & 0xFFFFFFu) << 32) | index;
}

// Caller holds g_lock. Adds one page, growing the page table when full.
static int add_page(void) {
    uint32_t np = atomic_load(&g_npages);
    if (np == g_cap_pages) {
        if (g_nold_tables == MAX_TABLES) return 0;
        uint32_t nc = g_cap_pages ? g_cap_pages * 2 : 16;
        slot** nt = calloc(nc, sizeof *nt);
        if (!nt) return 0;
        slot** old = atomic_load(&g_pages);
        if (old) memcpy(nt, old, np * sizeof *nt);
        if (old) g_old_tables[g_nold_tables++] = old;
        atomic_store(&g_pages, nt);
        g_cap_pages = nc;
    }
    slot* pg = calloc(PAGE_SLOTS, sizeof *pg);
    if (!pg) return 0;
    atomic_load(&g_pages)[np] = pg;
    atomic_store(&g_npages, np + 1);
    return 1;
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
        if (page >= atomic_load(&g_npages) && !add_page()) {
            pthread_mutex_unlock(&g_lock);
            return 0;
        }
        g_next_index++;
        s = slot_at(index);
    }
    s->generation = (s->generation + 1) & 0xFFFFFFu;
    if (s->generation == 0) s->generation = 1;
    // obj before tag: a reader that sees the new tag sees the new object.
    atomic_store(&s->obj, obj);
    atomic_store(&s->tag, make_tag((uint32_t)kind, s->generation));
    g_live[kind]++;
    uint64_t h = make_handle(kind, s->generation, index);
    pthread_mutex_unlock(&g_lock);
    return h;
}

// The slot of a handle whose kind matches (its tag may be stale), or NULL.
static slot* find_slot(uint64_t handle, hg_handle_kind kind) {
    uint32_t index = (uint32_t)handle;
    unsigned hkind = (unsigned)(handle >> 56);
    if (!index || hkind != (unsigned)kind || !kind) return NULL;
    return slot_at(index);
}

static uint32_t handle_tag(uint64_t handle) {
    return make_tag((uint32_t)(handle >> 56), (uint32_t)(handle >> 32));
}

void* hg_handle_get(uint64_t handle, hg_handle_kind kind) {
    slot* s = find_slot(handle, kind);
    if (!s) return NULL;
    uint32_t want = handle_tag(handle);
    if (atomic_load(&s->tag) != want) return NULL;
    void* obj = atomic_load(&s->obj);
    // Re-checked: the slot may have been freed and reused while obj was read.
    if (atomic_load(&s->tag) != want) return NULL;
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
    case HG_HANDLE_EVENT: return "event";
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
    slot* s = find_slot(handle, kind);
    void* obj = NULL;
    if (s && atomic_load(&s->tag) == handle_tag(handle)) {
        obj = atomic_load(&s->obj);
        s->generation = (s->generation + 1) & 0xFFFFFFu;  // stale handles never match again
        // Tag first: a reader that still saw the old tag re-checks it after reading obj.
        atomic_store(&s->tag, make_tag(0, s->generation));
        atomic_store(&s->obj, NULL);
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

void hg_handles_fork(hg_fork_phase phase) { hg_fork_mutex(&g_lock, phase); }
