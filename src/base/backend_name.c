// Backend names ("auto", "cpu", "cuda", "metal") and their parsing: in base, below the runtime,
// because configuration (HOLOGRAM_BACKEND, config.c) reads them too.
#include <strings.h>
#include "base/error.h"
#include "hologram.h"

static const char* const backend_names[HG_BACKEND_KIND_COUNT] = {"auto", "cpu", "cuda", "metal"};
_Static_assert(sizeof(backend_names) / sizeof(backend_names[0]) == HG_BACKEND_KIND_COUNT,
               "one name per backend kind");

const char* hg_backend_name(hg_backend_kind kind) {
    return ((int)kind >= 0 && kind < HG_BACKEND_KIND_COUNT) ? backend_names[kind] : NULL;
}

hg_status hg_backend_from_name(const char* name, hg_backend_kind* out) {
    HG_CHECK_NULL(name, "name");
    HG_CHECK_NULL(out, "out");
    for (int k = 0; k < HG_BACKEND_KIND_COUNT; k++)
        if (!strcasecmp(name, backend_names[k])) {
            *out = (hg_backend_kind)k;
            return HG_OK;
        }
    return hg_error(HG_ERR_INVALID_ARGUMENT,
                    "unknown backend name '%s' (expected one of: auto, cpu, cuda, metal)", name);
}
