// Streams and events of an executor: hg_executor_set_stream / hg_executor_stream and the
// hg_event handles. Backends with streams (CUDA) implement them through the optional vtable
// slots; on backends without (the CPU, whose calls complete before they return) the stream is
// NULL and an event is a host timestamp taken at record, which measures what the same
// interval of calls took there.
#include <time.h>
#include <stdlib.h>
#include "base/error.h"
#include "base/handles.h"
#include "runtime/objects.h"

static double host_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int has_events(const hg_executor_obj* ex) { return ex->vt->event_create != NULL; }

hg_status hg_executor_set_stream(hg_executor h, void* stream) {
    hg_executor_obj* ex = hg_executor_resolve(h, "hg_executor_set_stream");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    if (ex->vt->set_stream) return ex->vt->set_stream(ex->state, stream);
    if (stream)
        return hg_error(HG_ERR_UNSUPPORTED, "hg_executor_set_stream: the %s backend has no "
                        "streams (its calls complete before they return): only NULL is accepted, "
                        "got %p", hg_backend_name(ex->kind), stream);
    return HG_OK;
}

hg_status hg_executor_stream(hg_executor h, void** stream) {
    hg_executor_obj* ex = hg_executor_resolve(h, "hg_executor_stream");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(stream, "stream");
    *stream = ex->vt->get_stream ? ex->vt->get_stream(ex->state) : NULL;
    return HG_OK;
}

static void link_event(hg_executor_obj* ex, hg_event_obj* e) {
    pthread_mutex_lock(&ex->lock);
    e->prev = NULL;
    e->next = ex->events;
    if (ex->events) ex->events->prev = e;
    ex->events = e;
    pthread_mutex_unlock(&ex->lock);
}

static void unlink_event(hg_executor_obj* ex, hg_event_obj* e) {
    pthread_mutex_lock(&ex->lock);
    if (e->prev) e->prev->next = e->next;
    else ex->events = e->next;
    if (e->next) e->next->prev = e->prev;
    e->prev = e->next = NULL;
    pthread_mutex_unlock(&ex->lock);
}

static void release_event(hg_event_obj* e) {
    if (e->backend_event) e->ex->vt->event_destroy(e->ex->state, e->backend_event);
    free(e);
}

hg_status hg_event_create(hg_executor h, hg_event* out) {
    hg_executor_obj* ex = hg_executor_resolve(h, "hg_event_create");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    hg_event_obj* e = calloc(1, sizeof *e);
    if (!e) return hg_error(HG_ERR_OUT_OF_MEMORY, "hg_event_create: out of memory");
    e->ex = ex;
    hg_status s;
    if (has_events(ex) && (s = ex->vt->event_create(ex->state, &e->backend_event))) {
        free(e);
        return hg_error_prefix(s, "hg_event_create");
    }
    e->handle = hg_handle_insert(HG_HANDLE_EVENT, e);
    if (!e->handle) {
        release_event(e);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "hg_event_create: out of memory registering the "
                        "handle");
    }
    link_event(ex, e);
    out->handle = e->handle;
    return HG_OK;
}

hg_status hg_event_destroy(hg_event h) {
    if (!hg_handle_resolve(h.handle, HG_HANDLE_EVENT, "hg_event_destroy"))
        return HG_ERR_INVALID_HANDLE;
    hg_event_obj* e = hg_handle_remove(h.handle, HG_HANDLE_EVENT);
    if (!e)
        return hg_error(HG_ERR_INVALID_HANDLE, "hg_event_destroy: event handle 0x%016llx was "
                        "destroyed concurrently", (unsigned long long)h.handle);
    unlink_event(e->ex, e);
    release_event(e);
    return HG_OK;
}

void hg_executor_destroy_events(hg_executor_obj* ex) {
    pthread_mutex_lock(&ex->lock);
    hg_event_obj* e = ex->events;
    ex->events = NULL;
    pthread_mutex_unlock(&ex->lock);
    while (e) {
        hg_event_obj* next = e->next;
        hg_handle_remove(e->handle, HG_HANDLE_EVENT);
        release_event(e);
        e = next;
    }
}

static hg_event_obj* resolve(hg_event h, const char* what) {
    return hg_handle_resolve(h.handle, HG_HANDLE_EVENT, what);
}

hg_status hg_event_record(hg_event h) {
    hg_event_obj* e = resolve(h, "hg_event_record");
    if (!e) return HG_ERR_INVALID_HANDLE;
    hg_executor_obj* ex = e->ex;
    hg_status s = HG_OK;
    pthread_mutex_lock(&ex->lock);
    if (e->backend_event) s = ex->vt->event_record(ex->state, e->backend_event);
    else e->t_ms = host_ms();
    if (!s) e->recorded = 1;
    pthread_mutex_unlock(&ex->lock);
    return s;
}

// 1 when the event was recorded (read under the executor's lock).
static int recorded(hg_event_obj* e) {
    pthread_mutex_lock(&e->ex->lock);
    int r = e->recorded;
    pthread_mutex_unlock(&e->ex->lock);
    return r;
}

hg_status hg_event_synchronize(hg_event h) {
    hg_event_obj* e = resolve(h, "hg_event_synchronize");
    if (!e) return HG_ERR_INVALID_HANDLE;
    // Waiting is done outside the executor's lock: other threads keep queueing meanwhile.
    if (!e->backend_event || !recorded(e)) return HG_OK;
    return e->ex->vt->event_synchronize(e->ex->state, e->backend_event);
}

hg_status hg_event_query(hg_event h, int* done) {
    hg_event_obj* e = resolve(h, "hg_event_query");
    if (!e) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(done, "done");
    *done = 1;
    if (!e->backend_event || !recorded(e)) return HG_OK;
    return e->ex->vt->event_query(e->ex->state, e->backend_event, done);
}

hg_status hg_event_elapsed_ms(hg_event start, hg_event end, double* ms) {
    hg_event_obj* a = resolve(start, "hg_event_elapsed_ms (start)");
    if (!a) return HG_ERR_INVALID_HANDLE;
    hg_event_obj* b = resolve(end, "hg_event_elapsed_ms (end)");
    if (!b) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(ms, "ms");
    if (a->ex != b->ex)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_event_elapsed_ms: the events belong to "
                        "different executors (0x%016llx and 0x%016llx)",
                        (unsigned long long)a->ex->handle, (unsigned long long)b->ex->handle);
    if (!recorded(a) || !recorded(b))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_event_elapsed_ms: the %s event was never "
                        "recorded (hg_event_record it first)", recorded(a) ? "end" : "start");
    hg_executor_obj* ex = a->ex;
    if (a->backend_event) return ex->vt->event_elapsed_ms(ex->state, a->backend_event,
                                                          b->backend_event, ms);
    pthread_mutex_lock(&ex->lock);
    *ms = b->t_ms - a->t_ms;
    pthread_mutex_unlock(&ex->lock);
    return HG_OK;
}

hg_status hg_event_wait(hg_event h, void* stream) {
    hg_event_obj* e = resolve(h, "hg_event_wait");
    if (!e) return HG_ERR_INVALID_HANDLE;
    hg_executor_obj* ex = e->ex;
    if (!e->backend_event) {
        if (stream)
            return hg_error(HG_ERR_UNSUPPORTED, "hg_event_wait: the %s backend has no streams: "
                            "only NULL is accepted, got %p", hg_backend_name(ex->kind), stream);
        return HG_OK;
    }
    if (!recorded(e)) return HG_OK;   // as cudaStreamWaitEvent: nothing to wait for
    return ex->vt->event_wait(ex->state, e->backend_event, stream);
}
