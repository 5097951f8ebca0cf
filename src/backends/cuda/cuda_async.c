// The CUDA backend's asynchronous side: errors found after the call that caused them returned
// (out-of-bounds records written by queued launches), the executor's stream (set_stream) and
// events. Launches, copies and library calls are queued on the executor's current stream and
// return before the device ran them; what waits (a host read, hg_executor_synchronize, an event
// synchronize) takes the out-of-bounds record of the launches it waited for and reports it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cuda/cuda_internal.h"
#include "base/error.h"

// The message of an out-of-bounds record of kernel k (the same text as the CPU's report).
static void oob_text(const cuda_kernel* k, hg_cuda_kerr e, char* out, size_t len) {
    const hg_prog* p = k->prog;
    char text[256];
    unsigned shared = e.param & 0x80000000u, slot = e.param & 0x7fffffffu;
    const char* name = shared ? (slot < p->nshared ? p->shared[slot].name : "?")
                              : (slot < p->nparams ? p->params[slot].name : "?");
    snprintf(out, len,
             "kernel '%s': lane (%u, %u, %u) of block (%u, %u, %u), instruction %u (%s): "
             "index %llu is out of bounds for %s '%s' of %llu elements; the lane stopped "
             "there (other lanes may have run)",
             p->name, e.lane[0], e.lane[1], e.lane[2], e.block[0], e.block[1], e.block[2],
             e.instr, e.instr < p->ninstrs ? hg_instr_text(p, e.instr, text, sizeof text) : "?",
             (unsigned long long)e.index, shared ? "shared array" : "buffer", name,
             (unsigned long long)e.count);
}

void hg_cuda_take_record(cuda_dev* d, uint64_t upto) {
    hg_cuda_kerr e;
    if (!d->err_host || !__atomic_load_n(&d->err_host->flag, __ATOMIC_ACQUIRE)) return;
    memcpy(&e, d->err_host, sizeof e);
    if (e.seq > upto) return;   // made by a launch that may still run: not yet
    if (!d->deferred) {
        // The record's tag is the kernel of the launch: alive, because a kernel is destroyed
        // only after its launches finished and their record was taken (hg_cuda_kernel_retire).
        const cuda_kernel* k = (const cuda_kernel*)(uintptr_t)e.tag;
        oob_text(k, e, d->deferred_msg, sizeof d->deferred_msg);
        d->deferred = HG_ERR_OUT_OF_BOUNDS;
        d->deferred_seq = e.seq;
    }
    // The flag last: a later launch may record its own access as soon as it reads 0.
    memset((char*)d->err_host + sizeof e.flag, 0, sizeof e - sizeof e.flag);
    __atomic_store_n(&d->err_host->flag, 0u, __ATOMIC_RELEASE);
}

hg_status hg_cuda_report(cuda_dev* d, uint64_t upto, const char* what) {
    if (upto > d->synced_seq) d->synced_seq = upto;
    hg_cuda_take_record(d, upto);
    if (!d->deferred || d->deferred_seq > upto) return HG_OK;
    hg_status s = d->deferred;
    d->deferred = HG_OK;
    return hg_error(s, "%s [found by %s: launch %llu of this executor, which returned before "
                    "the device ran it]", d->deferred_msg, what,
                    (unsigned long long)d->deferred_seq);
}

hg_status hg_cuda_wait_all(cuda_dev* d, const char* what) {
    hg_status s = d->impl->sync(d);
    return s ? s : hg_cuda_report(d, d->launch_seq, what);
}

void hg_cuda_kernel_retire(cuda_dev* d, cuda_kernel* k) {
    if (k->last_seq <= d->synced_seq || d->dead) return;
    // Its code must stay loaded while a launch of it is queued, and an out-of-bounds record
    // naming it must be turned into text while it exists.
    if (d->impl->sync(d) == HG_OK) {
        d->synced_seq = d->launch_seq;
        hg_cuda_take_record(d, d->launch_seq);
        return;
    }
    hg_clear_error();   // a sticky device error: the next call reports it
    if (d->err_host && d->err_host->tag == (uint64_t)(uintptr_t)k)
        memset(d->err_host, 0, sizeof *d->err_host);
}

// ---- streams ----------------------------------------------------------------------------------
static hg_status alive(cuda_dev* d) {
    return d->dead ? hg_cuda_mark_dead(d, d->dead_msg) : HG_OK;
}

// The executor's work stays in one order across streams: a switch makes the new stream wait for
// everything queued on the old one, so work queued after the switch runs after all work queued
// before it. The caching allocator relies on this (cuda_alloc.c).
hg_status hg_cuda_set_stream(void* state, void* stream) {
    cuda_dev* d = state;
    hg_status s = alive(d);
    if (s) return s;
    pthread_mutex_lock(&d->lock);
    if (stream != d->stream) s = d->impl->switch_stream(d, d->stream, stream);
    if (!s) d->stream = stream;
    pthread_mutex_unlock(&d->lock);
    return s;
}

void* hg_cuda_get_stream(void* state) {
    cuda_dev* d = state;
    pthread_mutex_lock(&d->lock);
    void* st = d->stream ? d->stream : d->impl->own_stream(d);
    pthread_mutex_unlock(&d->lock);
    return st;
}

// ---- events -----------------------------------------------------------------------------------
typedef struct cuda_event {
    void* ev;          // the implementation's event
    uint64_t seq;      // launches queued when it was last recorded
} cuda_event;

hg_status hg_cuda_event_create(void* state, void** out) {
    cuda_dev* d = state;
    hg_status s = alive(d);
    if (s) return s;
    cuda_event* e = calloc(1, sizeof *e);
    if (!e) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA event");
    pthread_mutex_lock(&d->lock);
    s = d->impl->event_create(d, &e->ev);
    pthread_mutex_unlock(&d->lock);
    if (s) {
        free(e);
        return s;
    }
    *out = e;
    return HG_OK;
}

void hg_cuda_event_destroy(void* state, void* event) {
    cuda_dev* d = state;
    cuda_event* e = event;
    pthread_mutex_lock(&d->lock);
    d->impl->event_destroy(d, e->ev);   // released by the driver once it completed
    pthread_mutex_unlock(&d->lock);
    free(e);
}

hg_status hg_cuda_event_record(void* state, void* event) {
    cuda_dev* d = state;
    cuda_event* e = event;
    hg_status s = alive(d);
    if (s) return s;
    pthread_mutex_lock(&d->lock);
    s = d->impl->event_record(d, e->ev);
    if (!s) e->seq = d->launch_seq;
    pthread_mutex_unlock(&d->lock);
    return s;
}

hg_status hg_cuda_event_synchronize(void* state, void* event) {
    cuda_dev* d = state;
    cuda_event* e = event;
    hg_status s = alive(d);
    if (s) return s;
    // Waiting without the lock: other threads may queue work meanwhile.
    if ((s = d->impl->event_sync(d, e->ev))) return s;
    pthread_mutex_lock(&d->lock);
    s = hg_cuda_report(d, e->seq, "hg_event_synchronize");
    pthread_mutex_unlock(&d->lock);
    return s;
}

hg_status hg_cuda_event_query(void* state, void* event, int* done) {
    cuda_dev* d = state;
    hg_status s = alive(d);
    return s ? s : d->impl->event_query(d, ((cuda_event*)event)->ev, done);
}

hg_status hg_cuda_event_elapsed_ms(void* state, void* start, void* end, double* ms) {
    cuda_dev* d = state;
    hg_status s = alive(d);
    if (s) return s;
    cuda_event *a = start, *b = end;
    if ((s = d->impl->event_sync(d, a->ev)) || (s = d->impl->event_sync(d, b->ev))) return s;
    return d->impl->event_elapsed(d, a->ev, b->ev, ms);
}

hg_status hg_cuda_event_wait(void* state, void* event, void* stream) {
    cuda_dev* d = state;
    hg_status s = alive(d);
    if (s) return s;
    pthread_mutex_lock(&d->lock);
    void* st = stream ? stream : d->stream ? d->stream : d->impl->own_stream(d);
    s = d->impl->event_wait(d, ((cuda_event*)event)->ev, st);
    pthread_mutex_unlock(&d->lock);
    return s;
}
