// Internal: the op library on backends whose memory is not host-visible (CUDA). Ops there run
// as Atlas ISA kernels generated as text (dev_*.c) and launched with hg_launch, whose
// per-executor cache compiles each distinct program once. Parsed programs are cached here by
// text, so a repeated op call costs a hash and a lookup, not a parse.
//
// Index helpers emit code that turns a linear index into an element offset over up to
// HG_MAX_DIMS dims whose sizes and strides are scalar parameters named PREFIX_s<d> /
// PREFIX_x<d> (so one program serves every shape of that rank).
#ifndef HG_OPS_DEVICE_DEV_KERNEL_H
#define HG_OPS_DEVICE_DEV_KERNEL_H
#include <stdint.h>
#include "runtime/objects.h"
#include "base/strbuf.h"
#include "ops/common/op_common.h"
#include "hologram.h"

// The ISA name of a dtype, and `cvt.D.S d, s` (a mov when the dtypes are equal).
const char* hg_dk_dt(hg_dtype t);
void hg_dk_cvt(hg_sb* b, const char* d, hg_dtype dt, const char* s, hg_dtype st);

// Launches the kernel in `text` (cached parse) on ex. fn names the op for messages.
hg_status hg_dk_launch(hg_executor_obj* ex, const char* fn, const hg_sb* text,
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

// Declares .param lines PREFIX_s<d>: u64 and, for each of the nt tensors, PREFIX_<t><d>: i64
// (t = 'a', 'b', ...).
void hg_dk_param_dims(hg_sb* b, const char* prefix, int32_t nd, int nt);
// Appends the matching arguments (sizes, then strides per tensor, dim by dim).
size_t hg_dk_arg_dims(hg_arg* args, size_t k, const hg_dk_dims* d, int nt);
// Code: for each tensor t < nt, off<t> += coordinate * stride over the dims, for the linear
// index in register idx (u64). Uses the u64 registers dq, dr and the i64 registers dc, dt
// (declare them). off names: offs[t].
void hg_dk_emit_offsets(hg_sb* b, const char* prefix, int32_t nd, int nt, const char* idx,
                        const char* const* offs);

// A device tensor read back into new host memory (*staged, C-contiguous; free it) with a host
// view of it: for checks that must report the first bad element exactly as the CPU does.
hg_status hg_dk_download(hg_op_ctx* c, const hg_tensor* t, hg_host_view* v, void** staged);

// Element count of a view's shape.
int64_t hg_dk_numel(const hg_tensor* t);

#endif
