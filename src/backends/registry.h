// Internal: the backend registry (backends/registry.c), the one place that knows which
// backends exist. hg_backend_get (declared in backend.h) gives the vtable of a built-in,
// ABI-compatible backend.
#ifndef HG_BACKENDS_REGISTRY_H
#define HG_BACKENDS_REGISTRY_H
#include <stddef.h>
#include "backends/backend.h"

// Whether an executor can be created on a concrete backend kind now. Fills reason ("" when
// available) and *device_count (0 when unavailable). Returns 1 if available.
int hg_backend_probe(hg_backend_kind kind, char* reason, size_t reason_len, int* device_count);

// The order AUTO tries concrete backends in (fastest first; the CPU, always built, last).
const hg_backend_kind* hg_backend_auto_order(size_t* count);

#endif
