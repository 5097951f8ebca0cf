// Internal: what every op of the op library (src/ops) and the graph runtime (src/graph) share:
// checking input tensors, resolving the optional output tensor (allocate / check shape, dtype
// and aliasing), host views for library kernels, axis lists and the backends' thread pools.
//
// Typical op body:
//     HG_OP_CTX(c);  hg_op_begin(&c, "hg_softmax");
//     if ((s = hg_op_input(&c, x, "x", &xb, &n))) return s;
//     if ((s = hg_op_output(&c, out, result_dtype, ndim, shape))) return s;   // may allocate
//     if ((s = hg_op_read_first(&c, out, &x, 1))) return hg_op_finish(&c, out, s);
//     ... compute ...
//     return hg_op_finish(&c, out, s);   // releases an allocated output on failure
#ifndef HG_OPS_OP_COMMON_H
#define HG_OPS_OP_COMMON_H
#include <stdint.h>
#include "base/trace.h"
#include "runtime/objects.h"
#include "tensor/tensor_internal.h"
#include "hologram.h"

typedef struct hg_op_ctx hg_op_ctx;
typedef struct hg_op_copy hg_op_copy;
// Tracing hooks of hg_op_begin / HG_OP_CTX (op_trace.c).
void hg_op_trace_begin(hg_op_ctx* c);
// Tensor t of the call: role 0 an input (its bytes; its dtype and shape when nothing is
// recorded yet), 1 the result the op allocates, 2 the caller's result tensor (bytes, dtype and
// shape). An input checked twice (the same hg_tensor) counts once, the result once.
void hg_op_trace_tensor(hg_op_ctx* c, const hg_tensor* t, int role);
void hg_op_trace_end(hg_op_ctx* c, const char* name);

struct hg_op_ctx {
    const char* fn;            // public function name for messages
    hg_executor_obj* ex;       // executor of the first tensor seen (all must match)
    int allocated;             // 1 when hg_op_output allocated out->buffer
    hg_op_copy* copies;        // inputs copied by hg_op_read_first, released with the context
    int threads_awake;         // 1 inside a plan's run: its steps follow one another, so the
                               // pool's workers are still spinning (smaller work pays to split)
    // Tracing only (base/trace.h; trace.t0 == 0 when off): the call's span, the dtype and
    // shape of its result (or first input) and the bytes of its tensors.
    hg_trace_span trace;
    int trace_dtype;
    int32_t trace_ndim;
    int64_t trace_shape[HG_MAX_DIMS];
    int64_t trace_bytes;
    const hg_tensor* trace_seen[6];
    int trace_nseen, trace_result;
};

// Destroys the copies hg_op_read_first made for the call.
void hg_op_copies_release(hg_op_ctx* c);

static inline void hg_op_ctx_done(hg_op_ctx* c) {
    if (c->copies) hg_op_copies_release(c);
    if (c->trace.t0) hg_op_trace_end(c, c->fn);
}

// Declares an op's context; with tracing on, the call's span is recorded when the variable
// goes out of scope, whichever return the op takes. Call hg_op_begin right after.
#define HG_OP_CTX(c) hg_op_ctx c __attribute__((cleanup(hg_op_ctx_done)))

static inline void hg_op_begin(hg_op_ctx* c, const char* fn) {
    c->fn = fn;
    c->ex = NULL;
    c->allocated = 0;
    c->copies = NULL;
    c->trace.t0 = 0;
    if (hg_trace_on()) hg_op_trace_begin(c);
}

// Checks an input tensor (hg_tensor_check) and that it lives on the call's executor.
// out_buf / out_numel may be NULL.
hg_status hg_op_input(hg_op_ctx* c, const hg_tensor* t, const char* name, hg_buffer_obj** out_buf,
                      int64_t* out_numel);

// numpy "same_kind" casting: bool -> anything, ints -> wider/any float, floats -> floats
// (any width), unsigned -> wider signed; never float -> int or signed -> unsigned.
int hg_op_can_cast_same_kind(hg_dtype from, hg_dtype to);

// Resolves the optional output. out->buffer.handle == 0: allocates a C-contiguous buffer of
// `dtype` and `shape` on c->ex (needs an earlier hg_op_input; else HG_ERR_INVALID_ARGUMENT) and
// fills *out (c->allocated = 1). Otherwise checks out (live, on c->ex, shape equal, dtype equal
// to `dtype` or, when allow_cast, reachable by same_kind casting). Never writes data.
hg_status hg_op_output(hg_op_ctx* c, hg_tensor* out, hg_dtype dtype, int32_t ndim,
                       const int64_t* shape, int allow_cast);

// An output given by the caller that the op never allocates (fill, arange, gemm's c, ...).
hg_status hg_op_existing_output(hg_op_ctx* c, const hg_tensor* out, const char* name);

// numpy's overlap rule, for every op that writes out while reading inputs: the result is as if
// every input were read before anything is written. When in's memory may overlap out's
// (hg_tensor_overlap: byte ranges, so also two buffers wrapping the same memory), *in is
// replaced by a contiguous copy made now, which lives until the context ends - except when in
// is exactly out's view and same_ok (ops that read each element before writing it, as the
// elementwise ones). in (and *in) may be NULL. Out of memory for the copy is the only error.
hg_status hg_op_read_first(hg_op_ctx* c, const hg_tensor* out, const hg_tensor** in,
                           int same_ok);
// The out-of-line part of hg_op_read_first_buf (out_buf, in_buf may be NULL: looked up).
hg_status hg_op_read_first_slow(hg_op_ctx* c, const hg_tensor* out, hg_buffer_obj* out_buf,
                                const hg_tensor** in, hg_buffer_obj** in_buf, int same_ok);
// hg_op_read_first with the buffers of out and *in known; *in_buf follows *in. Inline for the
// repeated-call path: buffers whose memory is apart (the usual case) cost two compares.
static inline hg_status hg_op_read_first_buf(hg_op_ctx* c, const hg_tensor* out,
                                             hg_buffer_obj* out_buf, const hg_tensor** in,
                                             hg_buffer_obj** in_buf, int same_ok) {
    if (!*in || (out_buf && in_buf && *in_buf && hg_tensor_mem_apart(out_buf, *in_buf)))
        return HG_OK;
    return hg_op_read_first_slow(c, out, out_buf, in, in_buf, same_ok);
}
// 1 if two live tensors' memory may overlap (hg_tensor_overlap; 0 for empty tensors).
int hg_op_overlaps(const hg_tensor* a, const hg_tensor* b);

// On failure after hg_op_output allocated: destroys the buffer and clears out->buffer, so the
// caller's tensor is unchanged. Returns s.
hg_status hg_op_finish(hg_op_ctx* c, hg_tensor* out, hg_status s);

// A host view: data points at element (0, ..., 0). Only for host-visible backends
// (HG_ERR_UNSUPPORTED naming c->fn and the backend otherwise).
typedef struct hg_host_view {
    unsigned char* data;
    hg_dtype dtype;
    int32_t ndim;
    int64_t numel;
    int64_t shape[HG_MAX_DIMS];
    int64_t strides[HG_MAX_DIMS];   // elements
} hg_host_view;
hg_status hg_op_host_view(hg_op_ctx* c, const hg_tensor* t, hg_host_view* out);
// The same for a tensor this op has checked already (hg_op_input / hg_op_output, or a copy
// hg_op_read_first made): the buffer is looked up by its handle and the metadata checks are
// not repeated (they were three quarters of a view's cost: a layer_norm of 4 x 16 took four).
hg_status hg_op_host_view_checked(hg_op_ctx* c, const hg_tensor* t, hg_host_view* out);
// The same on any backend: on one whose memory is not host-visible, data is a device address
// (for the backend's own calls, such as sgemm); never dereference it there.
hg_status hg_op_raw_view(hg_op_ctx* c, const hg_tensor* t, hg_host_view* out);

// Normalizes an axis list (NULL = all axes) into a bit mask over ndim dims; negative axes
// count from the end; out of range or repeated axes give HG_ERR_OUT_OF_RANGE /
// HG_ERR_INVALID_ARGUMENT naming the axis.
hg_status hg_op_axes_mask(hg_op_ctx* c, int32_t ndim, int32_t naxes, const int32_t* axes,
                          uint32_t* out_mask);
// hg_op_axes_mask for reductions: with allow_0d, a 0-d tensor also takes axis 0 or -1, which
// marks no dim (numpy's ufunc reductions, sum/prod/min/max/argmin/argmax/any/all, reduce a 0-d
// array along it; its mean/var/std do not).
hg_status hg_op_reduce_axes_mask(hg_op_ctx* c, int32_t ndim, int32_t naxes, const int32_t* axes,
                                 int allow_0d, uint32_t* out_mask);
// One axis in [-ndim, ndim) -> [0, ndim).
hg_status hg_op_axis(hg_op_ctx* c, int32_t ndim, int32_t axis, int32_t* out);

// Runs fn(ctx, w) for w = 0 .. n-1 on the executor's threads (host-visible backends; n =
// min(nworkers, threads), 1 runs inline with no wake-up). *out_n (may be NULL) gets n first.
hg_status hg_op_parallel(hg_op_ctx* c, int nworkers, void (*fn)(void* ctx, int worker), void* ctx,
                         int* out_n);
// Worker threads of the executor.
int hg_op_num_threads(hg_op_ctx* c);
// Products on host memory on the calling thread, for kernels inside hg_op_parallel's fn:
// hg_op_host_sgemm is the backend's sgemm (row-major, C = alpha op(A) op(B) + beta C) and
// hg_op_host_dgemm its f64 product with any element strides (C written, never read; k >= 1).
// HG_ERR_UNSUPPORTED (nothing computed) where the backend has none; callers check
// hg_op_host_gemm_ok before starting workers.
int hg_op_host_gemm_ok(const hg_op_ctx* c);
hg_status hg_op_host_sgemm(const hg_op_ctx* c, int trans_a, int trans_b, int64_t m, int64_t n,
                           int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                           int64_t ldb, float beta, float* cm, int64_t ldc);
hg_status hg_op_host_dgemm(const hg_op_ctx* c, int64_t m, int64_t n, int64_t k, const double* a,
                           int64_t a_rs, int64_t a_cs, const double* b, int64_t b_rs,
                           int64_t b_cs, double* cm, int64_t c_rs, int64_t c_cs);

// Element access for library kernels working in double (all 13 dtypes; bool reads 0/1).
double hg_op_load_f64(hg_dtype dt, const void* p);
void hg_op_store_f64(hg_dtype dt, void* p, double v);   // cvt semantics (saturating)
int64_t hg_op_load_i64(hg_dtype dt, const void* p);     // integer dtypes and bool

// Shape text like "(2, 3)" into a buffer of HG_DIMS_TEXT (tensor_internal.h) bytes.
const char* hg_op_dims(char* buf, int32_t ndim, const int64_t* shape);

#endif
