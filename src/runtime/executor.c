// Executors: backend selection (explicit > HOLOGRAM_BACKEND > cuda, metal, cpu), lifetime of
// the backend state, and the lists of buffers and kernels an executor owns.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/registry.h"
#include "base/config.h"
#include "base/error.h"
#include "base/trace.h"
#include "base/handles.h"
#include "runtime/objects.h"

static hg_status check_kind(hg_backend_kind kind, int allow_auto) {
    if ((int)kind < (allow_auto ? 0 : 1) || kind >= HG_BACKEND_KIND_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "backend kind %d is not %s (HG_BACKEND_%sCPU=1, CUDA=2, METAL=3)",
                        (int)kind, allow_auto ? "a backend" : "a concrete backend",
                        allow_auto ? "AUTO=0, " : "");
    return HG_OK;
}

hg_status hg_backend_query(hg_backend_kind kind, hg_backend_info* out) {
    HG_CHECK_NULL(out, "out");
    hg_status s = check_kind(kind, 0);
    if (s) return s;
    hg_backend_info info;
    memset(&info, 0, sizeof info);
    info.kind = kind;
    info.name = hg_backend_name(kind);
    info.available = hg_backend_probe(kind, info.reason, sizeof info.reason, &info.device_count);
    *out = info;
    return HG_OK;
}

// Resolves AUTO to a concrete backend: HOLOGRAM_BACKEND if set, else the first available in
// the registry's AUTO order. Concrete kinds are returned as they are (the caller checks that
// they are available and reports the reason when not).
static hg_status resolve_kind(hg_backend_kind kind, hg_backend_kind* out, int* from_env) {
    *from_env = 0;
    if (kind != HG_BACKEND_AUTO) {
        *out = kind;
        return HG_OK;
    }
    hg_backend_kind env = HG_BACKEND_AUTO;
    hg_status s = hg_config_backend(&env);
    if (s) return s;
    if (env != HG_BACKEND_AUTO) {
        *out = env;
        *from_env = 1;
        return HG_OK;
    }
    char reasons[1024] = "";
    size_t used = 0, norder = 0;
    const hg_backend_kind* auto_order = hg_backend_auto_order(&norder);
    for (size_t i = 0; i < norder; i++) {
        char why[256];
        int count;
        if (hg_backend_probe(auto_order[i], why, sizeof why, &count)) {
            *out = auto_order[i];
            return HG_OK;
        }
        if (used < sizeof reasons)
            used += (size_t)snprintf(reasons + used, sizeof reasons - used, "%s%s: %s",
                                     i ? "; " : "", hg_backend_name(auto_order[i]), why);
    }
    return hg_error(HG_ERR_BACKEND_UNAVAILABLE, "no backend is available (%s)", reasons);
}

// Checks that a concrete backend can run and has the device; fills *vt.
static hg_status require_backend(hg_backend_kind kind, int from_env, int device,
                                 const hg_backend_vtable** vt) {
    char why[256];
    int count;
    if (!hg_backend_probe(kind, why, sizeof why, &count))
        return hg_error(HG_ERR_BACKEND_UNAVAILABLE, "backend '%s'%s is unavailable: %s",
                        hg_backend_name(kind), from_env ? " (from HOLOGRAM_BACKEND)" : "", why);
    if (device < 0 || device >= count)
        return hg_error(HG_ERR_OUT_OF_RANGE, "device index %d is out of range: backend '%s' has %d device%s",
                        device, hg_backend_name(kind), count, count == 1 ? "" : "s");
    *vt = hg_backend_get(kind);
    if (!*vt)
        return hg_error(HG_ERR_INTERNAL, "backend '%s' probed available but has no vtable",
                        hg_backend_name(kind));
    return HG_OK;
}

hg_status hg_device_query(hg_backend_kind kind, int index, hg_device_info* out) {
    HG_CHECK_NULL(out, "out");
    hg_status s = check_kind(kind, 1);
    if (s) return s;
    int from_env;
    if ((s = resolve_kind(kind, &kind, &from_env))) return s;
    const hg_backend_vtable* vt = NULL;
    if ((s = require_backend(kind, from_env, index, &vt))) return s;
    hg_device_info info;
    memset(&info, 0, sizeof info);
    if ((s = vt->device_info(index, &info))) return s;
    info.backend = kind;
    info.index = index;
    *out = info;
    return HG_OK;
}

// ---- fork (base/fork.h) ----
// Every live executor, so that fork() can take their locks: launch_lock (waits for the launch
// in flight), the backend's, then lock, then the layers'.
static pthread_mutex_t g_all_lock = PTHREAD_MUTEX_INITIALIZER;
static hg_executor_obj* g_all;
static void (*_Atomic g_ext_fork[HG_EXT_SLOT_COUNT])(void* ext, hg_fork_phase phase);

void hg_executor_ext_fork(hg_executor_ext_slot slot, void (*fn)(void* ext, hg_fork_phase phase)) {
    if ((unsigned)slot < HG_EXT_SLOT_COUNT) atomic_store(&g_ext_fork[slot], fn);
}

static void executor_fork(hg_executor_obj* ex, hg_fork_phase phase) {
    if (phase == HG_FORK_PREPARE) {
        pthread_mutex_lock(&ex->launch_lock);
        if (ex->vt->fork) ex->vt->fork(ex->state, phase);
        pthread_mutex_lock(&ex->lock);
    }
    for (int i = 0; i < HG_EXT_SLOT_COUNT; i++) {
        void (*fn)(void*, hg_fork_phase) = atomic_load(&g_ext_fork[i]);
        if (fn && ex->ext[i]) fn(ex->ext[i], phase);
    }
    if (phase != HG_FORK_PREPARE) {
        hg_fork_mutex(&ex->lock, phase);
        if (ex->vt->fork) ex->vt->fork(ex->state, phase);
        hg_fork_mutex(&ex->launch_lock, phase);
    }
}

static void executors_fork(hg_fork_phase phase) {
    if (phase == HG_FORK_PREPARE) pthread_mutex_lock(&g_all_lock);
    for (hg_executor_obj* ex = g_all; ex; ex = ex->all_next) executor_fork(ex, phase);
    if (phase != HG_FORK_PREPARE) hg_fork_mutex(&g_all_lock, phase);
}

static void all_link(hg_executor_obj* ex) {
    hg_fork_set(HG_FORK_EXECUTORS, executors_fork);
    pthread_mutex_lock(&g_all_lock);
    ex->all_prev = NULL;
    ex->all_next = g_all;
    if (g_all) g_all->all_prev = ex;
    g_all = ex;
    pthread_mutex_unlock(&g_all_lock);
}

static void all_unlink(hg_executor_obj* ex) {
    pthread_mutex_lock(&g_all_lock);
    if (ex->all_prev) ex->all_prev->all_next = ex->all_next;
    else g_all = ex->all_next;
    if (ex->all_next) ex->all_next->all_prev = ex->all_prev;
    pthread_mutex_unlock(&g_all_lock);
}

hg_status hg_executor_create_ex(const hg_executor_options* options, hg_executor* out) {
    hg_trace_env_init();   // HOLOGRAM_TRACE: every op needs an executor, so tracing starts first
    HG_CHECK_NULL(options, "options");
    HG_CHECK_NULL(out, "out");
    hg_status s = check_kind(options->backend, 1);
    if (s) return s;
    if (options->device < 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "device index %d is negative (expected >= 0)",
                        options->device);
    if (options->num_threads < 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "num_threads %d is negative (expected 0 for the default, or >= 1)",
                        options->num_threads);
    hg_backend_kind kind = HG_BACKEND_AUTO;
    int from_env;
    if ((s = resolve_kind(options->backend, &kind, &from_env))) return s;
    const hg_backend_vtable* vt = NULL;
    if ((s = require_backend(kind, from_env, options->device, &vt))) return s;

    hg_executor_options o = *options;
    o.backend = kind;
    o.num_threads = hg_config_num_threads(options->num_threads);

    hg_executor_obj* ex = calloc(1, sizeof *ex);
    if (!ex) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating an executor");
    ex->vt = vt;
    ex->kind = kind;
    ex->device = options->device;
    if ((s = vt->executor_create(&o, &ex->state))) {
        free(ex);
        return hg_error_prefix(s, "creating a '%s' executor", hg_backend_name(kind));
    }
    pthread_mutex_init(&ex->lock, NULL);
    pthread_mutex_init(&ex->launch_lock, NULL);
    ex->handle = hg_handle_insert(HG_HANDLE_EXECUTOR, ex);
    if (!ex->handle) {
        vt->executor_destroy(ex->state);
        pthread_mutex_destroy(&ex->lock);
        pthread_mutex_destroy(&ex->launch_lock);
        free(ex);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory registering an executor handle");
    }
    all_link(ex);
    hg_log(HG_LOG_DEBUG, "executor 0x%016llx created on backend %s, device %d, %d thread(s)",
           (unsigned long long)ex->handle, hg_backend_name(kind), ex->device, o.num_threads);
    out->handle = ex->handle;
    return HG_OK;
}

hg_status hg_executor_create(hg_backend_kind kind, hg_executor* out) {
    hg_executor_options o = {kind, 0, 0};
    return hg_executor_create_ex(&o, out);
}

hg_status hg_executor_create_by_name(const char* name, hg_executor* out) {
    HG_CHECK_NULL(name, "name");
    HG_CHECK_NULL(out, "out");
    hg_backend_kind kind = HG_BACKEND_AUTO;
    hg_status s = hg_backend_from_name(name, &kind);
    if (s) return s;
    return hg_executor_create(kind, out);
}

void* hg_executor_ext(hg_executor_obj* ex, hg_executor_ext_slot slot, void* (*create)(void),
                      void (*destroy)(void* ext)) {
    // Lock-free once created (every eager op asks): the slot is written once, under the lock,
    // with release order, so a reader that sees the pointer sees the initialized object.
    void* e = __atomic_load_n(&ex->ext[slot], __ATOMIC_ACQUIRE);
    if (e) return e;
    pthread_mutex_lock(&ex->lock);
    if (!ex->ext[slot]) {
        ex->ext_free[slot] = destroy;
        __atomic_store_n(&ex->ext[slot], create(), __ATOMIC_RELEASE);
    }
    e = ex->ext[slot];
    pthread_mutex_unlock(&ex->lock);
    return e;
}

hg_executor_obj* hg_executor_resolve(hg_executor ex, const char* what) {
    return hg_handle_resolve(ex.handle, HG_HANDLE_EXECUTOR, what);
}

hg_status hg_executor_destroy(hg_executor h) {
    // Removing the handle first makes every later call with it fail cleanly, and makes a
    // concurrent second destroy of the same handle a no-op error instead of a double free.
    if (!hg_executor_resolve(h, "hg_executor_destroy")) return HG_ERR_INVALID_HANDLE;
    hg_executor_obj* ex = hg_handle_remove(h.handle, HG_HANDLE_EXECUTOR);
    if (!ex)
        return hg_error(HG_ERR_INVALID_HANDLE, "hg_executor_destroy: executor handle 0x%016llx "
                        "was destroyed concurrently", (unsigned long long)h.handle);
    all_unlink(ex);
    if (ex->vt->synchronize) ex->vt->synchronize(ex->state);
    hg_executor_destroy_events(ex);
    for (int i = 0; i < HG_EXT_SLOT_COUNT; i++)
        if (ex->ext[i] && ex->ext_free[i]) ex->ext_free[i](ex->ext[i]);

    pthread_mutex_lock(&ex->lock);
    hg_kernel_obj* k = ex->kernels;
    hg_buffer_obj* b = ex->buffers;
    ex->kernels = NULL;
    ex->buffers = NULL;
    pthread_mutex_unlock(&ex->lock);
    while (k) {
        hg_kernel_obj* next = k->next;
        hg_handle_remove(k->handle, HG_HANDLE_KERNEL);
        hg_kernel_release(k);
        k = next;
    }
    pthread_mutex_lock(&ex->launch_lock);
    hg_kernel_cache_clear(ex);
    pthread_mutex_unlock(&ex->launch_lock);
    free(ex->cache);
    while (b) {
        hg_buffer_obj* next = b->next;
        hg_handle_remove(b->handle, HG_HANDLE_BUFFER);
        hg_buffer_release(b);
        b = next;
    }
    ex->vt->executor_destroy(ex->state);
    pthread_mutex_destroy(&ex->lock);
    pthread_mutex_destroy(&ex->launch_lock);
    free(ex);
    return HG_OK;
}

hg_status hg_executor_backend(hg_executor h, hg_backend_kind* out) {
    hg_executor_obj* ex = hg_executor_resolve(h, "hg_executor_backend");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = ex->kind;
    return HG_OK;
}

hg_status hg_executor_device(hg_executor h, hg_device_info* out) {
    hg_executor_obj* ex = hg_executor_resolve(h, "hg_executor_device");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    hg_device_info info;
    memset(&info, 0, sizeof info);
    hg_status s = ex->vt->device_info(ex->device, &info);
    if (s) return s;
    info.backend = ex->kind;
    info.index = ex->device;
    if (ex->vt->num_threads && ex->kind == HG_BACKEND_CPU)
        info.compute_units = ex->vt->num_threads(ex->state);  // this executor's workers
    *out = info;
    return HG_OK;
}

hg_status hg_executor_num_threads(hg_executor h, int* out) {
    hg_executor_obj* ex = hg_executor_resolve(h, "hg_executor_num_threads");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = ex->vt->num_threads ? ex->vt->num_threads(ex->state) : 1;
    return HG_OK;
}

hg_status hg_executor_synchronize(hg_executor h) {
    hg_executor_obj* ex = hg_executor_resolve(h, "hg_executor_synchronize");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    return ex->vt->synchronize ? ex->vt->synchronize(ex->state) : HG_OK;
}

void hg_executor_link_buffer(hg_executor_obj* ex, hg_buffer_obj* b) {
    pthread_mutex_lock(&ex->lock);
    b->prev = NULL;
    b->next = ex->buffers;
    if (ex->buffers) ex->buffers->prev = b;
    ex->buffers = b;
    pthread_mutex_unlock(&ex->lock);
}

void hg_executor_unlink_buffer(hg_executor_obj* ex, hg_buffer_obj* b) {
    pthread_mutex_lock(&ex->lock);
    if (b->prev) b->prev->next = b->next;
    else ex->buffers = b->next;
    if (b->next) b->next->prev = b->prev;
    b->prev = b->next = NULL;
    pthread_mutex_unlock(&ex->lock);
}

void hg_executor_link_kernel(hg_executor_obj* ex, hg_kernel_obj* k) {
    pthread_mutex_lock(&ex->lock);
    k->prev = NULL;
    k->next = ex->kernels;
    if (ex->kernels) ex->kernels->prev = k;
    ex->kernels = k;
    pthread_mutex_unlock(&ex->lock);
}

void hg_executor_unlink_kernel(hg_executor_obj* ex, hg_kernel_obj* k) {
    pthread_mutex_lock(&ex->lock);
    if (k->prev) k->prev->next = k->next;
    else ex->kernels = k->next;
    if (k->next) k->next->prev = k->prev;
    k->prev = k->next = NULL;
    pthread_mutex_unlock(&ex->lock);
}
