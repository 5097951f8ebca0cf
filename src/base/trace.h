// Internal: the library's tracer (docs/trace.md). While it is on, op calls, graph plan steps
// and kernel launches record one span each (name, category, start, duration, thread, and what
// is known of executor, dtype, shape, bytes and threads); hg_trace_stop writes them as a
// Chrome / Perfetto trace. Off (the default), each hook costs one relaxed load and a branch.
//
//   hg_trace_span sp;
//   if (hg_trace_on()) hg_trace_span_begin(&sp);     // saves the thread's thread count
//   ... work ...
//   if (sp.t0) { hg_trace_event e = {...}; hg_trace_span_end(&sp, &e); }
#ifndef HG_BASE_TRACE_H
#define HG_BASE_TRACE_H
#include <stdatomic.h>
#include <stdint.h>
#include "hologram.h"

extern atomic_int hg_trace_flag;

static inline int hg_trace_on(void) {
    return atomic_load_explicit(&hg_trace_flag, memory_order_relaxed);
}

// Reads HOLOGRAM_TRACE once per process (called when an executor is created): a file name
// starts tracing, written at exit.
void hg_trace_env_init(void);

typedef struct hg_trace_event {
    char name[48];
    const char* cat;          // "op", "launch", "step"
    const char* executor;     // backend name, or NULL
    uint64_t executor_id;
    int dtype;                // -1: none
    int32_t ndim;             // -1: no shape
    int64_t shape[HG_MAX_DIMS];
    int64_t bytes;            // -1: unknown
    int threads;              // filled by hg_trace_span_end
    char detail[64];          // free text ("grid 4x1x1 block 256", "fused elementwise", ...)
} hg_trace_event;

// An open span: its start (0 when tracing was off at its begin) and the thread count noted
// by enclosing spans so far.
typedef struct hg_trace_span {
    uint64_t t0;
    int saved_threads;
} hg_trace_span;

void hg_trace_span_begin(hg_trace_span* sp);
// Records e with the span's start and duration and the most threads any work inside it used
// (at least 1); e->name etc. are the caller's.
void hg_trace_span_end(hg_trace_span* sp, hg_trace_event* e);
// Called by the CPU thread pool: this many threads ran the current work.
void hg_trace_note_threads(int n);
// An empty event (no dtype, shape, bytes, executor).
void hg_trace_event_init(hg_trace_event* e, const char* cat, const char* name);

#endif
