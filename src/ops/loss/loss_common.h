// Internal: what the loss functions (loss.c, loss_ce.c) share: reduction argument and output
// handling, broadcasting operands onto the loss shape, walking several strided operands in C
// order, and a chunked parallel sum whose result does not depend on the thread count (chunks
// of a fixed size are summed in double, then the partial sums in chunk order).
#ifndef HG_OPS_LOSS_COMMON_H
#define HG_OPS_LOSS_COMMON_H
#include <stdint.h>
#include "ops/common/dev_ops.h"
#include "ops/common/op_common.h"

#define HG_LOSS_MAX_OPS 5

// Checks reduction (HG_ERR_INVALID_ARGUMENT naming it when out of range).
hg_status hg_loss_reduction(hg_op_ctx* c, hg_reduction r);

// Resolves out: shape (nd, shape) for NONE, 0-d for MEAN/SUM; dtype rt or a same_kind target.
hg_status hg_loss_output(hg_op_ctx* c, hg_tensor* out, hg_reduction r, hg_dtype rt, int32_t nd,
                         const int64_t* shape);

// Float dtype check for loss operands (HG_ERR_DTYPE_MISMATCH naming the argument).
hg_status hg_loss_float(hg_op_ctx* c, const hg_tensor* t, const char* name);

// Element strides of t broadcast (numpy rules) onto (nd, shape): 0 on broadcast dims.
// HG_ERR_SIZE_MISMATCH naming both shapes when t does not broadcast.
hg_status hg_loss_broadcast(hg_op_ctx* c, const hg_tensor* t, const char* name, int32_t nd,
                            const int64_t* shape, int64_t* strides);

// Walks up to HG_LOSS_MAX_OPS operands over one shape in C order.
typedef struct hg_loss_walk {
    int32_t ndim;
    int32_t nops;
    int64_t shape[HG_MAX_DIMS];
    int64_t bstrides[HG_LOSS_MAX_OPS][HG_MAX_DIMS];   // bytes
    unsigned char* base[HG_LOSS_MAX_OPS];
    int64_t idx[HG_MAX_DIMS];
    unsigned char* p[HG_LOSS_MAX_OPS];                // current element of each operand
} hg_loss_walk;

// Starts every operand at C-order element `start` (bstrides and base filled by the caller).
void hg_loss_walk_start(hg_loss_walk* w, int64_t start);
static inline void hg_loss_walk_next(hg_loss_walk* w) {
    for (int32_t d = w->ndim - 1; d >= 0; d--) {
        for (int32_t q = 0; q < w->nops; q++) w->p[q] += w->bstrides[q][d];
        if (++w->idx[d] < w->shape[d]) return;
        for (int32_t q = 0; q < w->nops; q++) w->p[q] -= w->bstrides[q][d] * w->shape[d];
        w->idx[d] = 0;
    }
}

// One operand of an elementwise loss: dtype, element (0, ..., 0) and byte strides over the
// loss shape (0 on broadcast dims).
typedef struct hg_loss_operand {
    hg_dtype dt;
    unsigned char* base;
    int64_t bstrides[HG_MAX_DIMS];
} hg_loss_operand;

// dst[i] = element (start + i) in C order over (nd, shape) of op, as double, for i < n. Runs
// along the last dim use typed loops (f32 and f64 vectorize).
void hg_loss_gather(int32_t nd, const int64_t* shape, const hg_loss_operand* op, int64_t start,
                    int64_t n, double* dst);
// The reverse for an output of dtype op->dt: src[i] rounded once to rt, then stored.
void hg_loss_scatter(int32_t nd, const int64_t* shape, const hg_loss_operand* op, hg_dtype rt,
                     int64_t start, int64_t n, const double* src);

// Runs chunk(ctx, e0, e1, &sum, &count) over [0, n) in chunks of HG_LOSS_CHUNK items, on the
// executor's threads when the work (n * cost_per_item, ~ns) is large; *sum and *count get the
// totals (partial sums added in chunk order).
#define HG_LOSS_CHUNK 4096
hg_status hg_loss_run(hg_op_ctx* c, int64_t n, double cost_per_item,
                      void (*chunk)(void* ctx, int64_t e0, int64_t e1, double* sum, double* count),
                      void* ctx, double* sum, double* count);

// cross_entropy's shapes: *cdim = logits' class dim (1, or 0 for 1-D logits), the sample shape
// (*ns dims into sshape: logits' shape without the class dim), and target's shape checked
// against it (class indices: the sample shape; probabilities, probs = 1: logits' shape).
// HG_ERR_SIZE_MISMATCH naming both shapes. logits has >= 1 dim (checked by the caller).
hg_status hg_ce_shapes(hg_op_ctx* c, const hg_tensor* logits, const hg_tensor* target, int probs,
                       int32_t* cdim, int32_t* ns, int64_t* sshape);

// The loss shape of x and t: their broadcast (numpy rules; binary_cross_entropy's entries have
// checked that they are equal). HG_ERR_SIZE_MISMATCH naming both shapes.
hg_status hg_loss_shape(hg_op_ctx* c, const hg_tensor* x, const char* xname, const hg_tensor* t,
                        int32_t* nd, int64_t* shape);

// The host kernels (the composite layer's host overrides), after the entries' checks, with out
// resolved and the inputs not overlapping it. Elementwise (loss.c): in = {x, t, w, pw} (w, pw
// NULL where absent) broadcast onto the loss shape; rt: the result dtype each loss is rounded
// to once.
hg_status hg_loss_ew_host(hg_op_ctx* c, hg_dev_loss kind, const hg_tensor* const* in,
                          hg_dtype rt, hg_reduction r, const hg_tensor* out);
// The first element of the host view outside [0, 1] (NaN included), in C order; -1 if none.
int64_t hg_loss_first_bad_prob(const hg_host_view* v, double* bad);
// Cross entropy (loss_ce.c) over the class dim cdim, class indices (checked already: each in
// [0, C) or ignore_index) or probabilities (probs); the result dtype rt is the logits'.
hg_status hg_loss_ce_host(hg_op_ctx* c, const hg_tensor* logits, const hg_tensor* target,
                          int32_t cdim, int probs, int64_t ignore_index, hg_dtype rt,
                          hg_reduction r, const hg_tensor* out);

// Stores v into dst of dtype od after rounding it once to the result dtype rt.
void hg_loss_store(hg_dtype rt, hg_dtype od, void* dst, double v);

#endif
