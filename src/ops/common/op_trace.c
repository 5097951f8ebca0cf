// Tracing of op calls (see op_common.h, base/trace.h): one "op" span per call, with the
// executor, the result's dtype and shape (or the first input's) and the bytes of its tensors.
#include "ops/common/op_common.h"
#include <string.h>
#include "base/dtype.h"
#include "base/shape.h"

void hg_op_trace_begin(hg_op_ctx* c) {
    hg_trace_span_begin(&c->trace);
    c->trace_dtype = -1;
    c->trace_ndim = -1;
    c->trace_bytes = 0;
    c->trace_nseen = 0;
    c->trace_result = 0;
}

void hg_op_trace_tensor(hg_op_ctx* c, const hg_tensor* t, int role) {
    if (t->ndim < 0 || t->ndim > HG_MAX_DIMS) return;   // the caller's check reports it
    int seen = 0;
    for (int i = 0; i < c->trace_nseen && !seen; i++) seen = c->trace_seen[i] == t;
    if (!seen && c->trace_nseen < (int)(sizeof c->trace_seen / sizeof c->trace_seen[0]))
        c->trace_seen[c->trace_nseen++] = t;
    // Inputs count once however often they are checked; the result once, also when it is an
    // input too (in place: read and written).
    int counts = role == 0 ? !seen : !c->trace_result;
    if (role != 0) c->trace_result = 1;
    if (counts) {
        c->trace_bytes += hg_view_numel(t) * (int64_t)hg_dtype_size(t->dtype);
    }
    if (role == 0 && c->trace_ndim >= 0) return;
    c->trace_dtype = (int)t->dtype;
    c->trace_ndim = t->ndim;
    memcpy(c->trace_shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
}

void hg_op_trace_end(hg_op_ctx* c, const char* name) {
    hg_trace_event e;
    // Named as the C API without its prefix ("matmul", "softmax"); elementwise calls by op.
    hg_trace_event_init(&e, "op", strncmp(name, "hg_", 3) == 0 ? name + 3 : name);
    if (c->ex) {
        e.executor = hg_backend_name(c->ex->kind);
        e.executor_id = c->ex->handle;
    }
    e.dtype = c->trace_dtype;
    e.ndim = c->trace_ndim;
    if (e.ndim > 0) memcpy(e.shape, c->trace_shape, sizeof(int64_t) * (size_t)e.ndim);
    e.bytes = c->trace_bytes || c->trace_ndim >= 0 ? c->trace_bytes : -1;
    hg_trace_span_end(&c->trace, &e);
    c->trace.t0 = 0;
}
