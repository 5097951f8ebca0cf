// The op layer's dispatch table (see op_dispatch.h).
#include "ops/common/op_dispatch.h"
#include "backends/backend.h"

enum { MEM_HOST = 0, MEM_DEVICE = 1 };

// Each family's route by memory model, before library calls (matmul's products take the
// backend's BLAS where it has one for the dtype: library_has below).
static const hg_op_route g_routes[2][HG_OPF_COUNT] = {
    [MEM_HOST] = {HG_ROUTE_HOST, HG_ROUTE_HOST, HG_ROUTE_HOST, HG_ROUTE_HOST, HG_ROUTE_HOST,
                  HG_ROUTE_HOST, HG_ROUTE_HOST},
    [MEM_DEVICE] = {HG_ROUTE_DEVICE, HG_ROUTE_DEVICE, HG_ROUTE_DEVICE, HG_ROUTE_DEVICE,
                    HG_ROUTE_DEVICE, HG_ROUTE_DEVICE, HG_ROUTE_DEVICE},
};

// The library slots of a backend, by dtype: sgemm (f32, host or device), dgemm_strided (f64 on
// host memory), gemm_ex (f64, f16, bf16 on a device: cuBLAS).
static int library_has(const hg_backend_vtable* vt, hg_dtype t) {
    switch (t) {
    case HG_DTYPE_F32: return vt->sgemm != NULL;
    case HG_DTYPE_F64: return vt->host_visible ? vt->dgemm_strided != NULL : vt->gemm_ex != NULL;
    case HG_DTYPE_F16:
    case HG_DTYPE_BF16: return !vt->host_visible && vt->gemm_ex != NULL;
    default: return 0;
    }
}

hg_op_route hg_op_route_on(const hg_executor_obj* ex, hg_op_family f, hg_dtype t) {
    int mem = hg_op_host_memory_of(ex) ? MEM_HOST : MEM_DEVICE;
    if (f == HG_OPF_MATMUL && ex && library_has(ex->vt, t)) return HG_ROUTE_LIBRARY;
    return g_routes[mem][f];
}
