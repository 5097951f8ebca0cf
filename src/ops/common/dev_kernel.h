// Internal: the op library on backends whose memory is not host-visible (CUDA). Ops there run
// as Atlas ISA kernels built with the kernel builder (isa/builder.h) in the families' dev_*.c
// and launched through the executor's one kernel cache (runtime/kernel.h), which compiles each
// distinct program once.
//
// Index helpers emit code that turns a linear index into an element offset over up to
// HG_MAX_DIMS dims whose sizes and strides are scalar parameters named PREFIX_s<d> /
// PREFIX_<t><d> (so one program serves every shape of that rank).
#ifndef HG_OPS_DEVICE_DEV_KERNEL_H
#define HG_OPS_DEVICE_DEV_KERNEL_H
#include <stdint.h>
#include "runtime/objects.h"
#include "base/shape.h"
#include "isa/builder.h"
#include "ops/common/op_common.h"
#include "hologram.h"

// The finished program of b (the caller frees it); fn names the op for messages.
hg_status hg_dk_finish(hg_kb* b, const char* fn, hg_prog** out);
// Launches prog on ex through the executor's kernel cache. fn names the op for messages.
hg_status hg_dk_launch(hg_executor_obj* ex, const char* fn, const hg_prog* prog,
                       const hg_launch_config* cfg, const hg_arg* args, size_t nargs);

// A view's dims after dropping size-1 dims and merging neighbours that are contiguous in
// every one of its `nt` tensors (C order is kept, so a flat index still walks C order).
typedef struct hg_dk_dims {
    int32_t nd;
    int64_t size[HG_MAX_DIMS];
    int64_t stride[5][HG_MAX_DIMS];   // per tensor (up to 5)
} hg_dk_dims;
// Appends a dim (skipped when size is 1) with the strides of nt tensors.
void hg_dk_dims_push(hg_dk_dims* d, int nt, int64_t size, const int64_t* strides);
void hg_dk_dims_merge(hg_dk_dims* d, int nt);

// The scalar parameters of a view's dims: PREFIX_s<d> (u64) and, for each of the nt tensors,
// PREFIX_<t><d> (i64; t = 'a', 'b', ...), declared dim by dim.
typedef struct hg_dk_dim_params {
    hg_operand size[HG_MAX_DIMS];
    hg_operand stride[5][HG_MAX_DIMS];
} hg_dk_dim_params;
void hg_dk_param_dims(hg_kb* b, const char* prefix, int32_t nd, int nt, hg_dk_dim_params* out);
// Appends the matching arguments (sizes, then strides per tensor, dim by dim).
size_t hg_dk_arg_dims(hg_arg* args, size_t k, const hg_dk_dims* d, int nt);
// The registers hg_dk_emit_offsets works in: u64 dq, dr and i64 dc, dt.
typedef struct hg_dk_scratch { uint32_t dq, dr, dc, dt; } hg_dk_scratch;
// Declares them (named so in kernel dumps) in a generator being built.
void hg_dk_scratch_declare(hg_kb* b, hg_dk_scratch* out);
// Code: for each tensor t < nt, offs[t] (i64 registers) += coordinate * stride over the dims,
// for the linear index idx (u64).
void hg_dk_emit_offsets(hg_kb* b, const hg_dk_dim_params* P, int32_t nd, int nt, hg_operand idx,
                        const uint32_t* offs, const hg_dk_scratch* r);

// A device tensor read back into new host memory (*staged, C-contiguous; free it) with a host
// view of it: for checks that must report the first bad element exactly as the CPU does.
hg_status hg_dk_download(hg_op_ctx* c, const hg_tensor* t, hg_host_view* v, void** staged);

#endif
