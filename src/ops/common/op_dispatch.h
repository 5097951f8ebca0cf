// Internal: the op layer's one dispatch. Every op family asks here how it runs on the call's
// executor - host kernels on host views, generated ISA kernels launched on the device, or the
// backend's library call - instead of testing backend properties itself. The answer comes from
// one table (op_dispatch.c): the route of each family by memory model, and the library slots
// each backend has per dtype.
#ifndef HG_OPS_COMMON_OP_DISPATCH_H
#define HG_OPS_COMMON_OP_DISPATCH_H
#include "ops/common/op_common.h"

typedef enum hg_op_family {
    HG_OPF_REDUCE = 0,
    HG_OPF_ROWS,        // softmax, log_softmax, layer_norm, rms_norm
    HG_OPF_MATMUL,      // matmul, gemm
    HG_OPF_LOSS,
    HG_OPF_DATA,        // fill, arange, concat, index_select, gather
    HG_OPF_RANDOM,
    HG_OPF_OPTIM,       // adam_step
    HG_OPF_COUNT
} hg_op_family;

typedef enum hg_op_route {
    HG_ROUTE_HOST = 0,  // host kernels on host views of the tensors
    HG_ROUTE_DEVICE,    // the family's generated ISA kernels (dev_*.c) on the executor
    HG_ROUTE_LIBRARY,   // the backend's library call (sgemm, dgemm_strided, gemm_ex)
} hg_op_route;

// How family f runs for operands of dtype t on executor ex (NULL: the host).
hg_op_route hg_op_route_on(const hg_executor_obj* ex, hg_op_family f, hg_dtype t);
// The same for the call's executor (c->ex: the first checked tensor's).
static inline hg_op_route hg_op_route_of(const hg_op_ctx* c, hg_op_family f, hg_dtype t) {
    return hg_op_route_on(c->ex, f, t);
}
// 1 when ex's memory is memory the host reads (host views), 0 on a device; NULL: the host.
static inline int hg_op_host_memory_of(const hg_executor_obj* ex) {
    return !ex || ex->vt->host_visible;
}
// The same for the call's executor.
static inline int hg_op_host_memory(const hg_op_ctx* c) { return hg_op_host_memory_of(c->ex); }

#endif
