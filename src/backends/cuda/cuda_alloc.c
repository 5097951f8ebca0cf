// The CUDA executor's caching allocator. cuMemAlloc/cuMemFree synchronize the device and cost
// tens of microseconds, so freed blocks are kept and reused: sizes are rounded to 512-byte steps
// below 1 MiB and to 2 MiB steps above, and a request takes the smallest cached block that fits
// and is at most twice its size. When the device is out of memory the cache is released and the
// allocation retried once; if that fails too the error states requested, free and total bytes,
// and nothing is left allocated, so the next allocation that fits succeeds.
//
// Stream order. Work is queued and runs after the call returns, so a block may be freed while
// queued work still uses it. It is still reusable at once: all of an executor's work is one
// queue in call order - on one stream, and across a switch of stream (hg_executor_set_stream)
// the new stream first waits for everything queued on the old one (cuda_async.c) - so work
// that gets the block later runs after the work that used it. No stream is recorded per block
// for that reason. Handing blocks back to the driver (cuMemFree) is another matter: the memory
// may then go to anyone, so that waits for the queued work first (release_all).
#include <stdlib.h>
#include <string.h>
#include "backends/cuda/cuda_internal.h"
#include "base/error.h"

static size_t round_size(size_t n) {
    if (n == 0) n = 1;
    if (n < ((size_t)1 << 20)) return (n + 511) & ~(size_t)511;
    return (n + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
}

static void* take_cached(cuda_alloc* a, size_t size) {
    size_t best = (size_t)-1;
    for (size_t i = 0; i < a->nfree; i++) {
        size_t s = a->free_blocks[i].size;
        if (s >= size && s <= 2 * size && (best == (size_t)-1 || s < a->free_blocks[best].size))
            best = i;
    }
    if (best == (size_t)-1) return NULL;
    void* p = a->free_blocks[best].p;
    a->cached_bytes -= a->free_blocks[best].size;
    a->free_blocks[best] = a->free_blocks[--a->nfree];
    return p;
}

// The live map: pointer -> rounded size (frees name only the pointer). Linear probing with
// tombstones ({p = NULL, size = 1}); grown at half load.
static size_t slot_of(const void* p, size_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)p * UINT64_C(0x9e3779b97f4a7c15);
    return (size_t)(h >> 20) & (cap - 1);
}

static int live_insert(cuda_alloc* a, void* p, size_t size) {
    if ((a->nlive + 1) * 2 > a->live_cap) {
        size_t nc = a->live_cap ? a->live_cap * 2 : 256;
        cuda_block* nt = calloc(nc, sizeof *nt);
        if (!nt) return 0;
        for (size_t i = 0; i < a->live_cap; i++) {
            if (!a->live[i].p) continue;
            size_t j = slot_of(a->live[i].p, nc);
            while (nt[j].p) j = (j + 1) & (nc - 1);
            nt[j] = a->live[i];
        }
        free(a->live);
        a->live = nt;
        a->live_cap = nc;
    }
    size_t j = slot_of(p, a->live_cap);
    while (a->live[j].p) j = (j + 1) & (a->live_cap - 1);
    a->live[j].p = p;
    a->live[j].size = size;
    a->nlive++;
    return 1;
}

// Removes p; returns its size (0 if it is not a live block of this executor).
static size_t live_remove(cuda_alloc* a, void* p) {
    if (!a->live_cap) return 0;
    size_t j = slot_of(p, a->live_cap);
    for (size_t n = 0; n < a->live_cap; n++, j = (j + 1) & (a->live_cap - 1)) {
        if (a->live[j].p == p) {
            size_t size = a->live[j].size;
            // Backward-shift deletion keeps probe chains intact without tombstones.
            size_t hole = j;
            for (size_t k = (j + 1) & (a->live_cap - 1); a->live[k].p; k = (k + 1) & (a->live_cap - 1)) {
                size_t home = slot_of(a->live[k].p, a->live_cap);
                int between = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
                if (!between) {
                    a->live[hole] = a->live[k];
                    hole = k;
                }
            }
            a->live[hole].p = NULL;
            a->live[hole].size = 0;
            a->nlive--;
            return size;
        }
        if (!a->live[j].p) return 0;
    }
    return 0;
}

// Waits for the executor's queued work: blocks about to be handed back may still be in use.
// An error is left for the next synchronizing call (the record stays; the sticky ones repeat).
static void wait_queued(cuda_dev* d) {
    pthread_mutex_lock(&d->lock);
    if (!d->dead && d->impl->sync(d) != HG_OK) hg_clear_error();
    pthread_mutex_unlock(&d->lock);
}

void hg_cuda_alloc_release_all(cuda_dev* d) {
    wait_queued(d);
    cuda_alloc* a = &d->alloc;
    pthread_mutex_lock(&a->lock);
    cuda_block* blocks = a->free_blocks;
    size_t n = a->nfree;
    a->free_blocks = NULL;
    a->nfree = a->cap = 0;
    a->cached_bytes = 0;
    pthread_mutex_unlock(&a->lock);
    for (size_t i = 0; i < n; i++) d->impl->release(d, blocks[i].p);
    free(blocks);
}

hg_status hg_cuda_alloc_get(cuda_dev* d, size_t nbytes, void** out) {
    cuda_alloc* a = &d->alloc;
    size_t size = round_size(nbytes);
    pthread_mutex_lock(&a->lock);
    void* p = take_cached(a, size);
    if (p) {
        if (!live_insert(a, p, size)) {
            pthread_mutex_unlock(&a->lock);
            wait_queued(d);
            d->impl->release(d, p);
            return hg_error(HG_ERR_OUT_OF_MEMORY, "out of host memory tracking a device block");
        }
        a->live_bytes += size;
    }
    pthread_mutex_unlock(&a->lock);
    if (p) {
        *out = p;
        return HG_OK;
    }
    hg_status s = d->impl->alloc(d, size, &p);
    if (s == HG_ERR_OUT_OF_MEMORY) {
        hg_clear_error();
        hg_cuda_alloc_release_all(d);
        s = d->impl->alloc(d, size, &p);
        if (s == HG_ERR_OUT_OF_MEMORY) {
            size_t free_b = 0, total_b = 0;
            hg_clear_error();
            d->impl->mem_info(d, &free_b, &total_b);
            return hg_error(HG_ERR_OUT_OF_MEMORY,
                            "out of %s memory: requested %zu bytes (%zu rounded), %zu of %zu bytes "
                            "free, %zu held by this executor's live buffers; the cache was "
                            "released and the allocation retried",
                            d->impl == &hg_cuda_emu_impl ? "emulated device" : "device",
                            nbytes, size, free_b, total_b, a->live_bytes);
        }
    }
    if (s) return s;
    pthread_mutex_lock(&a->lock);
    int ok = live_insert(a, p, size);
    if (ok) a->live_bytes += size;
    pthread_mutex_unlock(&a->lock);
    if (!ok) {
        d->impl->release(d, p);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of host memory tracking a device block");
    }
    *out = p;
    return HG_OK;
}

void hg_cuda_alloc_put(cuda_dev* d, void* p) {
    if (!p) return;
    cuda_alloc* a = &d->alloc;
    pthread_mutex_lock(&a->lock);
    size_t size = live_remove(a, p);
    if (!size) {   // not ours (cannot happen through the core): leave it alone
        pthread_mutex_unlock(&a->lock);
        return;
    }
    a->live_bytes -= size;
    if (a->nfree == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 64;
        cuda_block* nb = realloc(a->free_blocks, nc * sizeof *nb);
        if (!nb) {   // cannot remember it: give it back
            pthread_mutex_unlock(&a->lock);
            wait_queued(d);
            d->impl->release(d, p);
            return;
        }
        a->free_blocks = nb;
        a->cap = nc;
    }
    a->free_blocks[a->nfree].p = p;
    a->free_blocks[a->nfree].size = size;
    a->nfree++;
    a->cached_bytes += size;
    pthread_mutex_unlock(&a->lock);
}

void hg_cuda_alloc_destroy(cuda_dev* d) {
    hg_cuda_alloc_release_all(d);
    cuda_alloc* a = &d->alloc;
    // Blocks still live belong to buffers the core destroys before the executor; any left over
    // are released here so nothing leaks on the device.
    for (size_t i = 0; i < a->live_cap; i++)
        if (a->live[i].p) d->impl->release(d, a->live[i].p);
    free(a->live);
    a->live = NULL;
    a->live_cap = a->nlive = 0;
    pthread_mutex_destroy(&a->lock);
}
