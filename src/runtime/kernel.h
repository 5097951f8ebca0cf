// Internal: the one launch path and the one kernel cache of every kernel the library runs.
// Each executor keeps one cache of compiled kernels keyed by program content (hg_prog_hash,
// confirmed with hg_prog_equal): user programs launched with hg_launch, the op families'
// device kernels and the elementwise kernels' layout variants all come from it, and all are
// validated and checked against the backend's instruction support the same way on a miss.
#ifndef HG_RUNTIME_KERNEL_H
#define HG_RUNTIME_KERNEL_H
#include <stddef.h>
#include "base/trace.h"
#include "isa/program.h"
#include "runtime/objects.h"

// hg_launch on an executor object and an internal program: the cache, then the launch checks
// (config, shared memory, argument binding). Takes ex->launch_lock.
hg_status hg_launch_prog(hg_executor_obj* ex, const hg_prog* p, const hg_launch_config* cfg,
                         const hg_arg* args, size_t nargs);

// The cached kernel of p (validated and compiled on a miss). Caller holds ex->launch_lock; to
// keep the kernel past it, take a reference (the cache may drop its own at any later miss).
hg_status hg_kernel_get(hg_executor_obj* ex, const hg_prog* p, hg_kernel_obj** out);
void hg_kernel_ref(hg_kernel_obj* k);
// Drops a reference; the last one releases the kernel.
void hg_kernel_unref(hg_kernel_obj* k);

// The backend launch of every kernel, with a "launch" span when tracing (base/trace.h).
hg_status hg_kernel_dispatch_traced(hg_executor_obj* ex, const hg_kernel_obj* k,
                                    const hg_launch_config* cfg, const hg_bound_arg* bound,
                                    size_t nargs);

// Runs k with arguments its caller bound from checked tensors (the elementwise kernels, whose
// operands were checked once per call; hg_launch after its checks). Caller holds
// ex->launch_lock.
static inline hg_status hg_kernel_run_bound(hg_executor_obj* ex, const hg_kernel_obj* k,
                                            const hg_launch_config* cfg,
                                            const hg_bound_arg* bound, size_t nargs) {
    if (hg_trace_on()) return hg_kernel_dispatch_traced(ex, k, cfg, bound, nargs);
    return ex->vt->kernel_launch(ex->state, k->compiled, cfg, bound, nargs);
}

// `rows` launches of k differing in their arguments (the backend's kernel_launch_rows, which
// must exist: host-visible backends), with a "launch" span when tracing. Caller holds
// ex->launch_lock.
hg_status hg_kernel_run_rows(hg_executor_obj* ex, const hg_kernel_obj* k,
                             const hg_launch_config* cfg, const hg_bound_arg* bound, size_t nargs,
                             uint64_t rows, const hg_row_args* ra);

#endif
