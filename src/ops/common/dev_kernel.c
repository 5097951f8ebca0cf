// Device kernels of the op library: the launch through the kernel cache and index code (see
// dev_kernel.h).
#include "ops/common/dev_kernel.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "backends/backend.h"
#include "runtime/kernel.h"
#include "base/checksum.h"
#include "base/handles.h"
#include "ops/common/dev_ops.h"
#include "tensor/tensor_internal.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"

hg_status hg_dk_finish(hg_kb* b, const char* fn, hg_prog** out) {
    hg_status s = hg_kb_finish(b, out);
    return s ? hg_error_prefix(s, "%s (building the device kernel, internal)", fn) : HG_OK;
}

hg_status hg_dk_launch(hg_executor_obj* ex, const char* fn, const hg_prog* prog,
                       const hg_launch_config* cfg, const hg_arg* args, size_t nargs) {
    hg_status s = hg_launch_prog(ex, prog, cfg, args, nargs);
    return s ? hg_error_prefix(s, "%s (device kernel)", fn) : HG_OK;
}

void hg_dk_dims_push(hg_dk_dims* d, int nt, int64_t size, const int64_t* strides) {
    if (size == 1) return;
    d->size[d->nd] = size;
    for (int t = 0; t < nt; t++) d->stride[t][d->nd] = strides[t];
    d->nd++;
}

void hg_dk_dims_merge(hg_dk_dims* d, int nt) {
    if (d->nd == 0) return;
    int32_t w = 0;
    for (int32_t i = 1; i < d->nd; i++) {
        int ok = 1;
        for (int t = 0; t < nt; t++) ok &= d->stride[t][w] == d->stride[t][i] * d->size[i];
        if (ok) {
            d->size[w] *= d->size[i];
            for (int t = 0; t < nt; t++) d->stride[t][w] = d->stride[t][i];
        } else {
            w++;
            d->size[w] = d->size[i];
            for (int t = 0; t < nt; t++) d->stride[t][w] = d->stride[t][i];
        }
    }
    d->nd = w + 1;
}

void hg_dk_param_dims(hg_kb* b, const char* prefix, int32_t nd, int nt, hg_dk_dim_params* out) {
    char name[HG_NAME_MAX];
    for (int32_t i = 0; i < nd; i++) {
        snprintf(name, sizeof name, "%s_s%d", prefix, (int)i);
        out->size[i] = hg_kb_scalar(b, name, HG_DTYPE_U64);
        for (int t = 0; t < nt; t++) {
            snprintf(name, sizeof name, "%s_%c%d", prefix, 'a' + t, (int)i);
            out->stride[t][i] = hg_kb_scalar(b, name, HG_DTYPE_I64);
        }
    }
}

void hg_dk_scratch_declare(hg_kb* b, hg_dk_scratch* out) {
    out->dq = hg_kb_reg(b, "dq", HG_DTYPE_U64);
    out->dr = hg_kb_reg(b, "dr", HG_DTYPE_U64);
    out->dc = hg_kb_reg(b, "dc", HG_DTYPE_I64);
    out->dt = hg_kb_reg(b, "dt", HG_DTYPE_I64);
}

size_t hg_dk_arg_dims(hg_arg* args, size_t k, const hg_dk_dims* d, int nt) {
    for (int32_t i = 0; i < d->nd; i++) {
        args[k++] = hg_arg_u64((uint64_t)d->size[i]);
        for (int t = 0; t < nt; t++) args[k++] = hg_arg_i64(d->stride[t][i]);
    }
    return k;
}

void hg_dk_emit_offsets(hg_kb* b, const hg_dk_dim_params* P, int32_t nd, int nt, hg_operand idx,
                        const uint32_t* offs, const hg_dk_scratch* r) {
    if (nd == 0) return;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64;
    hg_kb_mov(b, U, r->dq, idx);
    for (int32_t i = nd - 1; i >= 0; i--) {
        if (i > 0) {
            hg_kb_set(b, HG_OP_REM, U, r->dr, hg_reg(r->dq), P->size[i], hg_none());
            hg_kb_set(b, HG_OP_DIV, U, r->dq, hg_reg(r->dq), P->size[i], hg_none());
            hg_kb_set_cvt(b, I, U, r->dc, hg_reg(r->dr));
        } else {
            hg_kb_set_cvt(b, I, U, r->dc, hg_reg(r->dq));
        }
        for (int t = 0; t < nt; t++) {
            hg_kb_set(b, HG_OP_MUL, I, r->dt, hg_reg(r->dc), P->stride[t][i], hg_none());
            hg_kb_set(b, HG_OP_ADD, I, offs[t], hg_reg(offs[t]), hg_reg(r->dt), hg_none());
        }
    }
}

hg_status hg_dk_download(hg_op_ctx* c, const hg_tensor* index, hg_host_view* v, void** staged) {
    hg_tensor t;
    int copied = 0;
    hg_status s = hg_tensor_contiguous(index, &t, &copied);
    if (s) return hg_error_prefix(s, "%s (reading a tensor back)", c->fn);
    int64_t n = hg_view_numel(&t);
    size_t es = hg_dtype_size(t.dtype);
    void* h = malloc((size_t)(n ? n : 1) * es);
    if (!h) s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for %lld indices", c->fn, (long long)n);
    if (!s && n) s = hg_buffer_read(t.buffer, (size_t)t.offset, h, (size_t)n);
    if (copied) hg_buffer_destroy(t.buffer);
    if (s) {
        free(h);
        return hg_error_prefix(s, "%s (reading a tensor back)", c->fn);
    }
    memset(v, 0, sizeof *v);
    v->data = h;
    v->dtype = t.dtype;
    v->ndim = t.ndim;
    v->numel = n;
    for (int32_t d = 0; d < t.ndim; d++) v->shape[d] = t.shape[d];
    hg_tensor_contiguous_strides(t.ndim, t.shape, v->strides);
    *staged = h;
    return HG_OK;
}
