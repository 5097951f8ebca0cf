// Internal: the global handle table. A handle is [kind:8][generation:24][index:32]; index 0 is
// never used, so the zero handle is always invalid. Slots live in pages that never move, so the
// table grows without a cap and lookups are cheap (lock-free: see handles.c).
#ifndef HG_CORE_HANDLES_H
#define HG_CORE_HANDLES_H
#include <stdint.h>
#include "hologram.h"

typedef enum hg_handle_kind {
    HG_HANDLE_NONE = 0,
    HG_HANDLE_EXECUTOR = 1,
    HG_HANDLE_BUFFER = 2,
    HG_HANDLE_PROGRAM = 3,
    HG_HANDLE_KERNEL = 4,
    HG_HANDLE_GRAPH = 5,     // src/graph: hg_graph
    HG_HANDLE_PLAN = 6,      // src/graph: hg_plan
    HG_HANDLE_EVENT = 7,     // src/runtime/stream.c: hg_event
    HG_HANDLE_KIND_COUNT
} hg_handle_kind;

// Stores obj and returns its new handle (0 when out of memory).
uint64_t hg_handle_insert(hg_handle_kind kind, void* obj);
// The object of a live handle of that kind, or NULL (no error set).
void* hg_handle_get(uint64_t handle, hg_handle_kind kind);
// Like hg_handle_get but sets HG_ERR_INVALID_HANDLE with a message naming `what` on failure.
void* hg_handle_resolve(uint64_t handle, hg_handle_kind kind, const char* what);
// Invalidates the handle and returns its object (NULL if it was not live).
void* hg_handle_remove(uint64_t handle, hg_handle_kind kind);
// Number of live handles of a kind (for leak checks in tests).
uint64_t hg_handle_live_count(hg_handle_kind kind);

#endif
