// The backend registry: the list of backends this build knows, with the reason each one that
// cannot run is missing. The core asks here and never names a concrete backend itself.
#include "backends/registry.h"
#include <stdio.h>
#include <string.h>
#include "base/error.h"

typedef struct registry_row {
    const hg_backend_vtable* vt;  // NULL when not built in
    const char* missing;          // why it is missing when vt is NULL
} registry_row;

static const registry_row rows[HG_BACKEND_KIND_COUNT] = {
    [HG_BACKEND_AUTO] = {NULL, "auto is not a concrete backend"},
    [HG_BACKEND_CPU] = {&hg_cpu_backend, NULL},
    [HG_BACKEND_CUDA] = {&hg_cuda_backend, NULL},
    // The name is reserved and the ISA's codegen keeps the seam, but no Metal backend exists.
    [HG_BACKEND_METAL] = {NULL, "not built in this version: hologram has no Metal backend yet "
                                "(use cpu or cuda)"},
};
_Static_assert(sizeof(rows) / sizeof(rows[0]) == HG_BACKEND_KIND_COUNT, "one row per backend");

static const hg_backend_kind auto_order[] = {HG_BACKEND_CUDA, HG_BACKEND_METAL, HG_BACKEND_CPU};

const hg_backend_kind* hg_backend_auto_order(size_t* count) {
    *count = sizeof auto_order / sizeof auto_order[0];
    return auto_order;
}

static int abi_ok(const hg_backend_vtable* vt) {
    return vt->api_version == HG_BACKEND_API_VERSION;
}

const hg_backend_vtable* hg_backend_get(hg_backend_kind kind) {
    if ((int)kind <= HG_BACKEND_AUTO || kind >= HG_BACKEND_KIND_COUNT) return NULL;
    const hg_backend_vtable* vt = rows[kind].vt;
    if (!vt || !abi_ok(vt)) return NULL;
    return vt;
}

int hg_backend_probe(hg_backend_kind kind, char* reason, size_t reason_len, int* device_count) {
    *device_count = 0;
    if (reason_len) reason[0] = 0;
    if ((int)kind < 0 || kind >= HG_BACKEND_KIND_COUNT) {
        snprintf(reason, reason_len, "backend kind %d does not exist", (int)kind);
        return 0;
    }
    const hg_backend_vtable* vt = rows[kind].vt;
    if (!vt) {
        snprintf(reason, reason_len, "%s", rows[kind].missing);
        return 0;
    }
    if (!abi_ok(vt)) {
        snprintf(reason, reason_len,
                 "refused: the %s backend was built for backend API version %u, this library "
                 "needs version %d",
                 vt->name ? vt->name : "?", (unsigned)vt->api_version, HG_BACKEND_API_VERSION);
        return 0;
    }
    int count = 0;
    char why[256] = "";
    int ok = vt->probe(why, sizeof why, &count);
    if (!ok) {
        snprintf(reason, reason_len, "%s", why[0] ? why : "the backend reports it cannot run here");
        return 0;
    }
    if (count < 1) {
        snprintf(reason, reason_len, "no device: the %s backend found no device", vt->name);
        return 0;
    }
    *device_count = count;
    return 1;
}
