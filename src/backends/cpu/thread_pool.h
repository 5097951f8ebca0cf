// Internal (CPU backend): a persistent pool of worker threads. hg_pool_run runs fn(ctx, w)
// once for every part w = 0 .. nworkers-1, w = 0 on the calling thread, and returns when all
// are done. Parts are claimed by whichever thread asks first: a pool thread that wakes late
// finds its part taken by the caller, so a small job never waits for a sleeping thread. The
// part index is not a thread id (it picks per-part scratch and the share of static splits).
// Calls must not overlap on one pool: the owner serializes them (the CPU executor holds its
// launch lock).
#ifndef HG_BACKENDS_CPU_THREAD_POOL_H
#define HG_BACKENDS_CPU_THREAD_POOL_H

typedef struct hg_pool hg_pool;
typedef void (*hg_pool_fn)(void* ctx, int worker);

// A pool of nthreads workers in all (nthreads - 1 threads plus the caller); NULL on failure.
hg_pool* hg_pool_create(int nthreads);
void hg_pool_destroy(hg_pool* p);
int hg_pool_size(const hg_pool* p);
// Runs fn for min(nworkers, size) parts.
void hg_pool_run(hg_pool* p, int nworkers, hg_pool_fn fn, void* ctx);
// The pool's part in fork() (base/fork.h; the owner holds its launch lock): in the child the
// pool's threads are gone, and the next hg_pool_run starts new ones.
#include "base/fork.h"
void hg_pool_fork(hg_pool* p, hg_fork_phase phase);

#endif
