// Internal: the objects behind executor, buffer and kernel handles.
//
// Locking: ex->lock guards the executor's lists of buffers and kernels; ex->launch_lock
// serializes launches on the executor (backends run one launch at a time) and guards the
// compiled-kernel cache of hg_launch, whose entries are only used while it is held.
#ifndef HG_CORE_OBJECTS_H
#define HG_CORE_OBJECTS_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "backends/backend.h"
#include "hologram.h"

typedef struct hg_buffer_obj hg_buffer_obj;
typedef struct hg_kernel_obj hg_kernel_obj;
typedef struct hg_event_obj hg_event_obj;

// Slots for per-executor state of the layers above the core (op kernel cache, graph plans).
typedef enum hg_executor_ext_slot {
    HG_EXT_EWISE = 0,     // src/ops: cached elementwise kernels
    HG_EXT_GRAPH,         // src/graph: live plans
    HG_EXT_OPS,           // src/ops: other op caches
    HG_EXT_COMPOSITE,     // src/composite: compiled decompositions (after GRAPH: freed after the plans)
    HG_EXT_SLOT_COUNT
} hg_executor_ext_slot;

typedef struct hg_executor_obj {
    uint64_t handle;
    const hg_backend_vtable* vt;
    void* state;                  // the backend's executor state
    hg_backend_kind kind;         // concrete (never AUTO)
    int device;
    pthread_mutex_t lock;         // buffers, kernels
    pthread_mutex_t launch_lock;  // launches, cache
    hg_buffer_obj* buffers;       // live buffers (doubly linked)
    hg_kernel_obj* kernels;       // live kernel handles (doubly linked)
    hg_event_obj* events;         // live events (doubly linked)
    // hg_launch cache: buckets of kernels (not handles) chained through cache_next.
    hg_kernel_obj** cache;
    uint32_t cache_buckets, cache_count;
    // Layer state (see hg_executor_ext); freed first by hg_executor_destroy, while buffers
    // and kernels still exist. Guarded by lock for creation only.
    void* ext[HG_EXT_SLOT_COUNT];
    void (*ext_free[HG_EXT_SLOT_COUNT])(void* ext);
    struct hg_executor_obj *all_prev, *all_next;   // every live executor (for fork)
} hg_executor_obj;

struct hg_buffer_obj {
    uint64_t handle;
    hg_executor_obj* ex;
    hg_dtype dtype;
    size_t count;
    size_t nbytes;
    void* mem;       // backend memory (NULL when nbytes == 0)
    int wrapped;     // caller memory: never freed by the library
    hg_buffer_obj *prev, *next;
};

struct hg_kernel_obj {
    uint64_t handle;           // 0 for kernels owned by the launch cache
    hg_executor_obj* ex;
    hg_prog* prog;             // owned copy, immutable
    void* compiled;            // the backend's kernel
    uint64_t hash;             // hg_prog_hash(prog)
    _Atomic uint32_t refs;     // cache kernels: the cache's and each holder's (kernel.h)
    hg_kernel_obj *prev, *next;  // executor's list (handles)
    hg_kernel_obj* cache_next;   // cache chain
};

// An event (stream.c). Fields other than the links are guarded by ex->lock.
struct hg_event_obj {
    uint64_t handle;
    hg_executor_obj* ex;
    void* backend_event;       // NULL when the backend has no event slots (host timestamps)
    int recorded;
    double t_ms;               // host timestamp of the last record (no backend events)
    hg_event_obj *prev, *next; // executor's list
};

// Destroys every event of ex (executor destroy; the handles are removed here).
void hg_executor_destroy_events(hg_executor_obj* ex);

// Executor internals used by buffer.c and kernel.c.
hg_executor_obj* hg_executor_resolve(hg_executor ex, const char* what);
void hg_executor_link_buffer(hg_executor_obj* ex, hg_buffer_obj* b);
void hg_executor_unlink_buffer(hg_executor_obj* ex, hg_buffer_obj* b);
void hg_executor_link_kernel(hg_executor_obj* ex, hg_kernel_obj* k);
void hg_executor_unlink_kernel(hg_executor_obj* ex, hg_kernel_obj* k);

// The layer state in slot of ex, created by create() on first use (thread-safe); destroy is
// called once when the executor is destroyed. NULL if create returned NULL.
void* hg_executor_ext(hg_executor_obj* ex, hg_executor_ext_slot slot, void* (*create)(void),
                      void (*destroy)(void* ext));

// The part of a layer's state in fork() (base/fork.h), for every executor's ext in slot: PREPARE
// runs under the executor's locks (take only locks whose holders wait for no executor lock),
// PARENT and CHILD after. Set once, by the layer, when it creates its first ext.
void hg_executor_ext_fork(hg_executor_ext_slot slot, void (*fn)(void* ext, hg_fork_phase phase));

// Releases a buffer's memory and object (the handle must already be removed).
void hg_buffer_release(hg_buffer_obj* b);
// Releases a kernel's compiled code, program and object (the handle must already be removed).
void hg_kernel_release(hg_kernel_obj* k);
// Drops the cache's reference to every cached kernel of the executor (caller holds
// ex->launch_lock or is the last user).
void hg_kernel_cache_clear(hg_executor_obj* ex);

// Converts a double to one element of dtype (cvt semantics: float->int truncates and
// saturates, NaN -> 0; bool = nonzero), written to out (hg_dtype_size bytes).
void hg_convert_from_double(hg_dtype dtype, double v, void* out);

#endif
