// Internal: configuration from the environment. Precedence everywhere: an explicit argument,
// else the environment variable, else the default.
//
// Every HOLOGRAM_* variable is read through the functions below, the one parser: unset or empty
// means the default; a value outside the accepted ones is logged once (per variable and value)
// as a warning that names the variable, the value and what is accepted, and the default is
// used. HOLOGRAM_BACKEND is the one variable whose bad value is an error instead (running on
// another backend than the one asked for would mislead). docs/architecture.md "Configuration"
// lists every variable.
#ifndef HG_CORE_CONFIG_H
#define HG_CORE_CONFIG_H
#include <stddef.h>
#include "hologram.h"

// A boolean: 1/0, true/false, yes/no, on/off (any case, surrounding blanks ignored).
int hg_config_bool(const char* name, int dflt);

// The index of the value among choices[0..n) (any case), else dflt.
int hg_config_choice(const char* name, const char* const* choices, int n, int dflt);

// An integer in [lo, hi] (a value outside it is a warning too), else dflt.
long long hg_config_int(const char* name, long long lo, long long hi, long long dflt);

// A byte count (a non-negative integer), else dflt.
size_t hg_config_bytes(const char* name, size_t dflt);

// A free-form value (a path): NULL when unset or empty.
const char* hg_config_string(const char* name);

// The backend HOLOGRAM_BACKEND names, for resolving AUTO. *out is AUTO when the variable is
// unset, empty or "auto". A name that is not a backend gives HG_ERR_INVALID_ARGUMENT naming the
// variable and the valid names.
hg_status hg_config_backend(hg_backend_kind* out);

// Number of CPU worker threads: `requested` if > 0, else HOLOGRAM_NUM_THREADS, else
// OMP_NUM_THREADS (its first entry), else the number of online cores. Always in
// [1, HG_CONFIG_MAX_THREADS]; malformed variables are ignored with a warning.
#define HG_CONFIG_MAX_THREADS 1024
int hg_config_num_threads(int requested);

// Number of online CPU cores (at least 1).
int hg_config_num_cores(void);

// Bytes of freed large host allocations a CPU executor keeps for reuse:
// HOLOGRAM_CPU_MEMORY_CACHE (a byte count; 0 disables), else 1 GiB.
size_t hg_config_cpu_memory_cache(void);

// Output size in bytes from which the CPU backend's streaming kernels write with non-temporal
// stores (an output that large leaves the cache before anyone reads it, and plain stores would
// read every destination line first): HOLOGRAM_STREAM_STORES (a byte count; 0 = never), else
// the last-level cache's size, at most 32 MiB (VMs report the host's cache: 480 MiB on the
// Intel dev VM, where streaming stores win from about 24 MiB of output; docs/performance.md).
size_t hg_config_stream_store_bytes(void);

#endif
