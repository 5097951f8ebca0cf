// Internal: fork safety. The library's pthread_atfork handlers are registered once, here; each
// part that owns locks or threads fills a slot with one function called in each phase:
//   PREPARE (in the thread calling fork(); slots in order, outermost locks first): take every
//           lock, so the process is copied at a point where no structure is half-changed;
//   PARENT  (slots in reverse order): release them;
//   CHILD   (slots in reverse order; the child has only the forking thread): make the locks
//           anew (unlocked) and forget threads that do not exist in the child (thread pools
//           start new ones on their next use).
// A slot's function takes its locks in the same order as the code that uses them, so prepare
// waits for operations in flight (a launch finishes first) and never deadlocks with them.
#ifndef HG_CORE_FORK_H
#define HG_CORE_FORK_H

typedef enum hg_fork_phase {
    HG_FORK_PREPARE = 0,
    HG_FORK_PARENT,
    HG_FORK_CHILD,
    HG_FORK_PHASE_COUNT
} hg_fork_phase;

// The slots in the order PREPARE runs them (a lock of a later slot may be taken while one of an
// earlier slot is held, never the other way round).
typedef enum hg_fork_slot {
    HG_FORK_EXECUTORS = 0,  // src/runtime: each executor's locks, its layers' and its backend's
    HG_FORK_CUDA,           // src/backends/cuda: the kernel cache and emulation locks
    HG_FORK_GEMM,           // src/backends/cpu/gemm: the packing cache
    HG_FORK_TRACE,          // src/base/trace.c
    HG_FORK_HANDLES,        // src/base/handles.c
    HG_FORK_LOG,            // src/base/log.c
    HG_FORK_SLOT_COUNT
} hg_fork_slot;

typedef void (*hg_fork_fn)(hg_fork_phase phase);

// Registers the atfork handlers (once) and sets the slot's function (idempotent).
void hg_fork_set(hg_fork_slot slot, hg_fork_fn fn);

// How many times this process's ancestry forked since the library was loaded: changes in every
// child, so an object can tell that it was made before the fork it now lives after.
unsigned long hg_fork_generation(void);

// Base parts (fork.c sets their slots itself).
void hg_handles_fork(hg_fork_phase phase);
void hg_log_fork(hg_fork_phase phase);
void hg_trace_fork(hg_fork_phase phase);

// The mutex made anew in a child (the thread that held it is gone).
#include <pthread.h>
static inline void hg_fork_mutex(pthread_mutex_t* m, hg_fork_phase phase) {
    if (phase == HG_FORK_PREPARE) pthread_mutex_lock(m);
    else if (phase == HG_FORK_PARENT) pthread_mutex_unlock(m);
    else pthread_mutex_init(m, NULL);
}

#endif
