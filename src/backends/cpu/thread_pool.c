// A persistent worker pool: threads sleep on a condition variable between jobs, so an idle
// executor costs nothing; a job wakes them with a generation counter. The parts of a job are
// claimed under the mutex by whoever comes first, the caller included: waking a sleeping
// thread takes tens of microseconds on a VM, and a caller that has finished its part takes the
// next unclaimed one instead of waiting for that wake-up (docs/performance.md).
#include "backends/cpu/thread_pool.h"
#include "backends/cpu/cpu_threading.h"
#include "base/trace.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct hg_pool {
    int size;                 // workers including the caller
    pthread_t* threads;       // size - 1
    int started;              // threads actually created
    int respawn;              // a forked child: start the threads at the next run
    pthread_mutex_t m;
    pthread_cond_t wake;      // a new job or stop
    pthread_cond_t done_cv;   // the last running part finished
    atomic_ulong gen;         // job generation (changed under m)
    atomic_int stop;
    hg_pool_fn fn;
    void* ctx;
    int nparts;               // parts of the current job
    int next_part;            // first part nobody has claimed
    atomic_int active;        // parts being run by pool threads (changed under m)
};

// How long the caller spins for parts still running on pool threads before it sleeps: such a
// part is already under way, and being woken from a condition variable costs as much as
// waking a worker.
#define SPIN_WAIT_ROUNDS 20000

// How long a pool thread stays awake after a job, watching for the next one, before it sleeps:
// back-to-back calls (a loop of ops) then find it running, instead of paying the wake-up
// each time; an executor left idle costs this much CPU once, then nothing.
#define IDLE_SPIN_NS 100000L

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Spins (without the mutex) until the generation moves past seen, a stop, or the time is up.
static void spin_for_job(hg_pool* p, unsigned long seen) {
    long until = now_ns() + IDLE_SPIN_NS;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (atomic_load_explicit(&p->gen, memory_order_relaxed) != seen ||
                atomic_load_explicit(&p->stop, memory_order_relaxed))
                return;
            cpu_relax();
        }
        if (now_ns() > until) return;
    }
}

typedef struct worker_arg {
    hg_pool* p;
    int index;                // 1 .. size-1
} worker_arg;

static void* worker_main(void* arg) {
    worker_arg wa = *(worker_arg*)arg;
    free(arg);
    hg_pool* p = wa.p;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->m);
    for (;;) {
        if (atomic_load(&p->gen) == seen && !atomic_load(&p->stop)) {
            pthread_mutex_unlock(&p->m);
            spin_for_job(p, seen);
            pthread_mutex_lock(&p->m);
        }
        while (atomic_load(&p->gen) == seen && !atomic_load(&p->stop))
            pthread_cond_wait(&p->wake, &p->m);
        if (atomic_load(&p->stop)) break;
        seen = atomic_load(&p->gen);
        while (p->next_part < p->nparts) {
            int part = p->next_part++;
            hg_pool_fn fn = p->fn;
            void* ctx = p->ctx;
            atomic_fetch_add(&p->active, 1);
            pthread_mutex_unlock(&p->m);
            fn(ctx, part);
            pthread_mutex_lock(&p->m);
            if (atomic_fetch_sub(&p->active, 1) == 1) pthread_cond_signal(&p->done_cv);
        }
    }
    pthread_mutex_unlock(&p->m);
    return NULL;
}

// Starts the missing threads; returns how many run.
static int spawn(hg_pool* p) {
    for (int i = p->started + 1; i < p->size; i++) {
        worker_arg* wa = malloc(sizeof *wa);
        if (!wa) break;
        wa->p = p;
        wa->index = i;
        if (pthread_create(&p->threads[i - 1], NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        p->started++;
    }
    return p->started;
}

hg_pool* hg_pool_create(int nthreads) {
    if (nthreads < 1) nthreads = 1;
    hg_pool* p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->size = nthreads;
    pthread_mutex_init(&p->m, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (nthreads > 1) {
        p->threads = calloc((size_t)nthreads - 1, sizeof *p->threads);
        if (!p->threads) {
            hg_pool_destroy(p);
            return NULL;
        }
    }
    if (spawn(p) != nthreads - 1) {
        hg_pool_destroy(p);
        return NULL;
    }
    return p;
}

void hg_pool_destroy(hg_pool* p) {
    if (!p) return;
    pthread_mutex_lock(&p->m);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->m);
    for (int i = 0; i < p->started; i++) pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->m);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done_cv);
    free(p);
}

int hg_pool_size(const hg_pool* p) { return p->size; }

void hg_pool_fork(hg_pool* p, hg_fork_phase phase) {
    if (phase == HG_FORK_PREPARE) {
        pthread_mutex_lock(&p->m);
    } else if (phase == HG_FORK_PARENT) {
        pthread_mutex_unlock(&p->m);
    } else {
        pthread_mutex_init(&p->m, NULL);
        pthread_cond_init(&p->wake, NULL);
        pthread_cond_init(&p->done_cv, NULL);
        atomic_store(&p->gen, 0);
        atomic_store(&p->stop, 0);
        atomic_store(&p->active, 0);
        p->nparts = p->next_part = 0;
        p->respawn = p->started > 0;
        p->started = 0;
    }
}

void hg_pool_run(hg_pool* p, int nworkers, hg_pool_fn fn, void* ctx) {
    if (p->respawn) {
        p->respawn = 0;
        spawn(p);   // a child of fork(): fewer threads (or none) if the system refuses some
    }
    if (nworkers > p->size) nworkers = p->size;
    if (hg_trace_on()) hg_trace_note_threads(p->started == 0 || nworkers < 1 ? 1 : nworkers);
    if (nworkers <= 1 || p->started == 0) {
        fn(ctx, 0);
        return;
    }
    if (hg_cpu_openmp_run(nworkers, fn, ctx)) return;   // hg_cpu_set_threading(OPENMP)
    pthread_mutex_lock(&p->m);
    p->fn = fn;
    p->ctx = ctx;
    p->nparts = nworkers;
    p->next_part = 1;          // part 0 is the caller's
    atomic_fetch_add(&p->gen, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->m);
    fn(ctx, 0);
    pthread_mutex_lock(&p->m);
    while (p->next_part < p->nparts) {   // parts no pool thread has woken up for yet
        int part = p->next_part++;
        pthread_mutex_unlock(&p->m);
        fn(ctx, part);
        pthread_mutex_lock(&p->m);
    }
    if (atomic_load(&p->active) > 0) {
        pthread_mutex_unlock(&p->m);
        for (int i = 0; i < SPIN_WAIT_ROUNDS && atomic_load(&p->active) > 0; i++) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        pthread_mutex_lock(&p->m);
        while (atomic_load(&p->active) > 0) pthread_cond_wait(&p->done_cv, &p->m);
    }
    pthread_mutex_unlock(&p->m);
}
