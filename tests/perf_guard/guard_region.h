// A measured region of the instruction-count guard, shared by the C driver (perf_guard.c) and
// the Python case's shim (callgrind_shim.c). Under `valgrind --tool=callgrind
// --instr-atstart=no`, instrumentation is on only between begin and end, and end writes one
// dump named by the case holding exactly the instructions run in between; outside valgrind
// both do nothing.
#ifndef HG_PERF_GUARD_REGION_H
#define HG_PERF_GUARD_REGION_H
#include <valgrind/callgrind.h>

static inline void guard_region_begin(void) {
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
}

static inline void guard_region_end(const char* name) {
    CALLGRIND_DUMP_STATS_AT(name);
    CALLGRIND_STOP_INSTRUMENTATION;
}
#endif
