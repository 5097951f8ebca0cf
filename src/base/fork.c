// The library's pthread_atfork handlers (fork.h): one registration, slots called in order.
#include "base/fork.h"
#include <pthread.h>
#include <stdatomic.h>

static _Atomic(hg_fork_fn) g_slots[HG_FORK_SLOT_COUNT];
static atomic_ulong g_generation;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void run(hg_fork_phase phase) {
    if (phase == HG_FORK_PREPARE) {
        for (int i = 0; i < HG_FORK_SLOT_COUNT; i++) {
            hg_fork_fn fn = atomic_load(&g_slots[i]);
            if (fn) fn(phase);
        }
        return;
    }
    for (int i = HG_FORK_SLOT_COUNT - 1; i >= 0; i--) {
        hg_fork_fn fn = atomic_load(&g_slots[i]);
        if (fn) fn(phase);
    }
}

static void on_prepare(void) { run(HG_FORK_PREPARE); }
static void on_parent(void) { run(HG_FORK_PARENT); }
static void on_child(void) {
    atomic_fetch_add(&g_generation, 1);
    run(HG_FORK_CHILD);
}

static void init(void) {
    atomic_store(&g_slots[HG_FORK_TRACE], hg_trace_fork);
    atomic_store(&g_slots[HG_FORK_HANDLES], hg_handles_fork);
    atomic_store(&g_slots[HG_FORK_LOG], hg_log_fork);
    // Fails only for want of memory; the library then works as before, without fork safety.
    (void)pthread_atfork(on_prepare, on_parent, on_child);
}

void hg_fork_set(hg_fork_slot slot, hg_fork_fn fn) {
    pthread_once(&g_once, init);
    if ((unsigned)slot < HG_FORK_SLOT_COUNT) atomic_store(&g_slots[slot], fn);
}

unsigned long hg_fork_generation(void) {
    return atomic_load_explicit(&g_generation, memory_order_relaxed);
}
