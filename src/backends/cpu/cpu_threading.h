// Internal (CPU backend): the OpenMP side of hg_cpu_set_threading. hg_pool_run hands a job here
// first.
#ifndef HG_BACKENDS_CPU_THREADING_H
#define HG_BACKENDS_CPU_THREADING_H
#include "backends/cpu/thread_pool.h"
#include "hologram.h"

// Runs fn(ctx, part) for part = 0 .. nparts-1 as one parallel region of the process's OpenMP
// runtime and returns 1, or returns 0 (nothing run) when hologram's own threads are chosen.
int hg_cpu_openmp_run(int nparts, hg_pool_fn fn, void* ctx);

// 1 while regions run on hologram's threads after an OpenMP team thread arrived late (busy
// cores; cpu_threading.c).
int hg_cpu_openmp_backing_off(void);

#endif
