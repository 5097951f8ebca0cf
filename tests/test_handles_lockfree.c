// The handle table's lock-free lookup (src/base/handles.c): while other threads insert, remove
// and reuse slots and grow the page table, a lookup returns either NULL or exactly the object
// its handle was issued for, never the object of a later handle in the same slot. Also the
// single-threaded rules: zero, wrong-kind, forged and stale handles resolve to nothing.
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "base/handles.h"
#include "hg_test.h"

enum { NOBJ = 256, WRITERS = 2, READERS = 2, ROUNDS = 20000, GROWTH = 40000 };

typedef struct obj { int id; } obj;

static obj g_objs[NOBJ];
static _Atomic uint64_t g_handle_of[NOBJ];   // the last handle issued for g_objs[k] (or 0)
static atomic_int g_stop;

typedef struct reader_state {
    uint64_t seed;
    long hits, misses, wrong;
} reader_state;

static uint64_t next_rand(uint64_t* s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

// Each writer owns the objects k with k % WRITERS == its id: remove, then insert again, so the
// freed slots are reused by other objects' handles all the time.
static void* writer_main(void* arg) {
    int id = (int)(intptr_t)arg;
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1);
    for (int r = 0; r < ROUNDS; r++) {
        int k = (int)(next_rand(&seed) % (NOBJ / WRITERS)) * WRITERS + id;
        uint64_t h = atomic_load(&g_handle_of[k]);
        if (h) hg_handle_remove(h, HG_HANDLE_BUFFER);
        atomic_store(&g_handle_of[k], hg_handle_insert(HG_HANDLE_BUFFER, &g_objs[k]));
    }
    return NULL;
}

static void* reader_main(void* arg) {
    reader_state* st = arg;
    while (!atomic_load(&g_stop)) {
        int k = (int)(next_rand(&st->seed) % NOBJ);
        uint64_t h = atomic_load(&g_handle_of[k]);
        if (!h) continue;
        void* p = hg_handle_get(h, HG_HANDLE_BUFFER);
        if (p == NULL) st->misses++;
        else if (p == &g_objs[k]) st->hits++;
        else st->wrong++;
        // The same handle as another kind never resolves.
        if (hg_handle_get(h, HG_HANDLE_PROGRAM)) st->wrong++;
    }
    return NULL;
}

// Grows the table (several page-table doublings) while readers look up live handles.
static void* grower_main(void* arg) {
    uint64_t* hs = arg;
    for (int i = 0; i < GROWTH; i++) hs[i] = hg_handle_insert(HG_HANDLE_KERNEL, &g_objs[i % NOBJ]);
    return NULL;
}

static void test_concurrent(void) {
    uint64_t base = hg_handle_live_count(HG_HANDLE_BUFFER);
    uint64_t base_k = hg_handle_live_count(HG_HANDLE_KERNEL);
    for (int k = 0; k < NOBJ; k++) {
        g_objs[k].id = k;
        atomic_store(&g_handle_of[k], hg_handle_insert(HG_HANDLE_BUFFER, &g_objs[k]));
        CHECK(atomic_load(&g_handle_of[k]) != 0);
    }
    atomic_store(&g_stop, 0);
    uint64_t* grown = calloc(GROWTH, sizeof *grown);
    CHECK(grown != NULL);
    if (!grown) return;
    pthread_t w[WRITERS], r[READERS], g;
    reader_state rs[READERS];
    for (int i = 0; i < READERS; i++) {
        memset(&rs[i], 0, sizeof rs[i]);
        rs[i].seed = 0x1234567ull + (uint64_t)i * 7919;
        CHECK(pthread_create(&r[i], NULL, reader_main, &rs[i]) == 0);
    }
    for (int i = 0; i < WRITERS; i++)
        CHECK(pthread_create(&w[i], NULL, writer_main, (void*)(intptr_t)i) == 0);
    CHECK(pthread_create(&g, NULL, grower_main, grown) == 0);
    for (int i = 0; i < WRITERS; i++) pthread_join(w[i], NULL);
    pthread_join(g, NULL);
    atomic_store(&g_stop, 1);
    long hits = 0, wrong = 0;
    for (int i = 0; i < READERS; i++) {
        pthread_join(r[i], NULL);
        hits += rs[i].hits;
        wrong += rs[i].wrong;
    }
    CHECK_MSG(wrong == 0, "%ld lookups returned another handle's object", wrong);
    CHECK_MSG(hits > 0, "readers never found a live handle");
    // Every grown handle is live and resolves to its object, then is removed exactly once.
    for (int i = 0; i < GROWTH; i++) {
        CHECK(grown[i] != 0);
        CHECK(hg_handle_get(grown[i], HG_HANDLE_KERNEL) == &g_objs[i % NOBJ]);
        CHECK(hg_handle_remove(grown[i], HG_HANDLE_KERNEL) == &g_objs[i % NOBJ]);
        CHECK(hg_handle_get(grown[i], HG_HANDLE_KERNEL) == NULL);
        CHECK(hg_handle_remove(grown[i], HG_HANDLE_KERNEL) == NULL);
    }
    free(grown);
    for (int k = 0; k < NOBJ; k++) {
        uint64_t h = atomic_load(&g_handle_of[k]);
        CHECK(hg_handle_get(h, HG_HANDLE_BUFFER) == &g_objs[k]);
        CHECK(hg_handle_remove(h, HG_HANDLE_BUFFER) == &g_objs[k]);
    }
    CHECK(hg_handle_live_count(HG_HANDLE_BUFFER) == base);
    CHECK(hg_handle_live_count(HG_HANDLE_KERNEL) == base_k);
}

static void test_bad_handles(void) {
    int x = 7;
    uint64_t h = hg_handle_insert(HG_HANDLE_PLAN, &x);
    CHECK(h != 0);
    CHECK(hg_handle_get(h, HG_HANDLE_PLAN) == &x);
    CHECK(hg_handle_get(0, HG_HANDLE_PLAN) == NULL);
    CHECK(hg_handle_get(h, HG_HANDLE_GRAPH) == NULL);                   // wrong kind
    CHECK(hg_handle_get(h, HG_HANDLE_NONE) == NULL);
    CHECK(hg_handle_get(h ^ (1ull << 32), HG_HANDLE_PLAN) == NULL);     // wrong generation
    CHECK(hg_handle_get((h & ~0xFFFFFFFFull) | 0xFFFFFFF0u, HG_HANDLE_PLAN) == NULL);  // no page
    uint64_t kindless = h & ((1ull << 56) - 1);
    CHECK(hg_handle_get(kindless, HG_HANDLE_NONE) == NULL);             // kind 0 is "free"
    CHECK(hg_handle_remove(h, HG_HANDLE_GRAPH) == NULL);
    CHECK(hg_handle_remove(h, HG_HANDLE_PLAN) == &x);
    CHECK(hg_handle_get(h, HG_HANDLE_PLAN) == NULL);                    // stale
    uint64_t h2 = hg_handle_insert(HG_HANDLE_PLAN, &x);                  // reuses the slot
    CHECK((uint32_t)h2 == (uint32_t)h && h2 != h);
    CHECK(hg_handle_get(h, HG_HANDLE_PLAN) == NULL);
    CHECK(hg_handle_get(h2, HG_HANDLE_PLAN) == &x);
    CHECK(hg_handle_remove(h2, HG_HANDLE_PLAN) == &x);
}

int main(void) {
    test_bad_handles();
    test_concurrent();
    return hg_test_finish("test_handles_lockfree");
}
