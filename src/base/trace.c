// The tracer (see trace.h): events in one growing array under a mutex (tracing is for looking,
// not for speed), written as Chrome trace JSON ("X" complete events, microseconds) by
// hg_trace_stop or, for HOLOGRAM_TRACE, at exit.
#include "base/trace.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/dtype.h"
#include "base/config.h"
#include "base/error.h"
#include "base/fork.h"

#define MAX_EVENTS (1u << 20)   // ~200 MiB at most; later events are counted, not kept

atomic_int hg_trace_flag = 0;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char path[4096];
    uint64_t t_start;
    hg_trace_event* ev;
    uint64_t* ts;               // start and duration (ns) of each event, two per event
    uint32_t* tid;
    size_t n, cap;
    uint64_t dropped;
} tr;
static atomic_uint next_tid = 1;
static _Thread_local uint32_t my_tid;
static _Thread_local int cur_threads;   // most threads used inside the innermost open span

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void hg_trace_event_init(hg_trace_event* e, const char* cat, const char* name) {
    memset(e, 0, sizeof *e);
    e->cat = cat;
    snprintf(e->name, sizeof e->name, "%s", name ? name : "?");
    e->dtype = -1;
    e->ndim = -1;
    e->bytes = -1;
}

void hg_trace_span_begin(hg_trace_span* sp) {
    sp->saved_threads = cur_threads;
    cur_threads = 0;
    sp->t0 = now_ns();
}

void hg_trace_note_threads(int n) {
    if (n > cur_threads) cur_threads = n;
}

void hg_trace_span_end(hg_trace_span* sp, hg_trace_event* e) {
    uint64_t t1 = now_ns();
    int used = cur_threads > 0 ? cur_threads : 1;
    cur_threads = used > sp->saved_threads ? used : sp->saved_threads;
    e->threads = used;
    if (!my_tid) my_tid = atomic_fetch_add(&next_tid, 1);
    pthread_mutex_lock(&lock);
    if (hg_trace_on() && sp->t0 >= tr.t_start) {
        if (tr.n == tr.cap && tr.cap < MAX_EVENTS) {
            size_t cap = tr.cap ? tr.cap * 2 : 4096;
            hg_trace_event* ev = realloc(tr.ev, cap * sizeof *ev);
            if (ev) tr.ev = ev;
            uint64_t* ts = realloc(tr.ts, cap * 2 * sizeof *ts);
            if (ts) tr.ts = ts;
            uint32_t* tid = realloc(tr.tid, cap * sizeof *tid);
            if (tid) tr.tid = tid;
            if (ev && ts && tid) tr.cap = cap;
        }
        if (tr.n < tr.cap) {
            tr.ev[tr.n] = *e;
            tr.ts[2 * tr.n] = sp->t0 - tr.t_start;
            tr.ts[2 * tr.n + 1] = t1 - sp->t0;
            tr.tid[tr.n] = my_tid;
            tr.n++;
        } else {
            tr.dropped++;
        }
    }
    pthread_mutex_unlock(&lock);
}

// ---- output -----------------------------------------------------------------------------------
static void put_str(FILE* f, const char* s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static int write_json(const char* path) {
    FILE* f = fopen(path, "w");
    if (!f) return 0;
    int pid = (int)getpid();
    fprintf(f, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"library\": \"hologram %s\", "
               "\"dropped_events\": %llu},\n\"traceEvents\": [",
            hg_version(), (unsigned long long)tr.dropped);
    for (size_t i = 0; i < tr.n; i++) {
        const hg_trace_event* e = &tr.ev[i];
        fprintf(f, "%s\n{\"name\": ", i ? "," : "");
        put_str(f, e->name);
        fprintf(f, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, "
                   "\"tid\": %u, \"args\": {\"threads\": %d",
                e->cat, (double)tr.ts[2 * i] / 1000.0, (double)tr.ts[2 * i + 1] / 1000.0, pid,
                tr.tid[i], e->threads);
        if (e->executor)
            fprintf(f, ", \"executor\": \"%s\", \"executor_id\": %llu", e->executor,
                    (unsigned long long)e->executor_id);
        if (e->dtype >= 0) fprintf(f, ", \"dtype\": \"%s\"", hg_dtype_name((hg_dtype)e->dtype));
        if (e->ndim >= 0) {
            fprintf(f, ", \"shape\": [");
            for (int32_t d = 0; d < e->ndim; d++)
                fprintf(f, "%s%lld", d ? ", " : "", (long long)e->shape[d]);
            fprintf(f, "]");
        }
        if (e->bytes >= 0) fprintf(f, ", \"bytes\": %lld", (long long)e->bytes);
        if (e->detail[0]) {
            fprintf(f, ", \"detail\": ");
            put_str(f, e->detail);
        }
        fprintf(f, "}}");
    }
    fprintf(f, "\n]}\n");
    return fclose(f) == 0;
}

static void reset_locked(void) {
    free(tr.ev);
    free(tr.ts);
    free(tr.tid);
    tr.ev = NULL;
    tr.ts = NULL;
    tr.tid = NULL;
    tr.n = tr.cap = 0;
    tr.dropped = 0;
}

hg_status hg_trace_start(const char* path) {
    HG_CHECK_NULL(path, "path");
    if (!path[0] || strlen(path) >= sizeof tr.path)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_trace_start: path must be a file name of "
                        "1..%zu characters", sizeof tr.path - 1);
    pthread_mutex_lock(&lock);
    if (hg_trace_on()) {
        pthread_mutex_unlock(&lock);
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_trace_start: a trace is already running "
                        "(into %s); call hg_trace_stop first", tr.path);
    }
    // Fail now, not at the end, when the file cannot be written.
    FILE* f = fopen(path, "w");
    if (!f) {
        pthread_mutex_unlock(&lock);
        return hg_error(HG_ERR_IO, "hg_trace_start: cannot write %s", path);
    }
    fclose(f);
    reset_locked();
    snprintf(tr.path, sizeof tr.path, "%s", path);
    tr.t_start = now_ns();
    atomic_store(&hg_trace_flag, 1);
    pthread_mutex_unlock(&lock);
    return HG_OK;
}

hg_status hg_trace_stop(void) {
    pthread_mutex_lock(&lock);
    if (!hg_trace_on()) {
        pthread_mutex_unlock(&lock);
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_trace_stop: no trace is running");
    }
    atomic_store(&hg_trace_flag, 0);
    int ok = write_json(tr.path);
    reset_locked();
    pthread_mutex_unlock(&lock);
    return ok ? HG_OK : hg_error(HG_ERR_IO, "hg_trace_stop: cannot write %s", tr.path);
}

int hg_trace_enabled(void) { return hg_trace_on(); }

static void stop_at_exit(void) {
    if (hg_trace_on()) (void)hg_trace_stop();
}

static void env_init_once(void) {
    const char* p = hg_config_string("HOLOGRAM_TRACE");
    if (!p) return;
    if (hg_trace_start(p) != HG_OK) {
        fprintf(stderr, "hologram: HOLOGRAM_TRACE=%s: %s (tracing is off)\n", p, hg_last_error());
        hg_clear_error();
        return;
    }
    atexit(stop_at_exit);
}

void hg_trace_env_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, env_init_once);
}

// A child stops the trace it inherited, unwritten: the parent writes that file.
void hg_trace_fork(hg_fork_phase phase) {
    hg_fork_mutex(&lock, phase);
    if (phase == HG_FORK_CHILD && hg_trace_on()) {
        atomic_store(&hg_trace_flag, 0);
        reset_locked();
    }
}
