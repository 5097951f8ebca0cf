// A persistent worker pool: threads sleep on a condition variable between jobs, so an idle
// executor costs nothing; a job wakes them with a generation counter.
#include "backends/cpu/thread_pool.h"
#include "base/trace.h"
#include <pthread.h>
#include <stdlib.h>

struct hg_pool {
    int size;                 // workers including the caller
    pthread_t* threads;       // size - 1
    int started;              // threads actually created
    pthread_mutex_t m;
    pthread_cond_t wake;      // a new job or stop
    pthread_cond_t done_cv;   // the last worker finished
    unsigned long gen;        // job generation
    int stop;
    hg_pool_fn fn;
    void* ctx;
    int nworkers;             // workers that run fn in this job
    int pending;              // threads that have not finished the current job
};

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
        while (p->gen == seen && !p->stop) pthread_cond_wait(&p->wake, &p->m);
        if (p->stop) break;
        seen = p->gen;
        hg_pool_fn fn = p->fn;
        void* ctx = p->ctx;
        int run = wa.index < p->nworkers;
        pthread_mutex_unlock(&p->m);
        if (run) fn(ctx, wa.index);
        pthread_mutex_lock(&p->m);
        if (--p->pending == 0) pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->m);
    return NULL;
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
    for (int i = 1; i < nthreads; i++) {
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
    if (p->started != nthreads - 1) {
        hg_pool_destroy(p);
        return NULL;
    }
    return p;
}

void hg_pool_destroy(hg_pool* p) {
    if (!p) return;
    pthread_mutex_lock(&p->m);
    p->stop = 1;
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

void hg_pool_run(hg_pool* p, int nworkers, hg_pool_fn fn, void* ctx) {
    if (nworkers > p->size) nworkers = p->size;
    if (hg_trace_on()) hg_trace_note_threads(p->started == 0 || nworkers < 1 ? 1 : nworkers);
    if (nworkers <= 1 || p->started == 0) {
        fn(ctx, 0);
        return;
    }
    pthread_mutex_lock(&p->m);
    p->fn = fn;
    p->ctx = ctx;
    p->nworkers = nworkers;
    p->pending = p->started;
    p->gen++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->m);
    fn(ctx, 0);
    pthread_mutex_lock(&p->m);
    while (p->pending > 0) pthread_cond_wait(&p->done_cv, &p->m);
    pthread_mutex_unlock(&p->m);
}
