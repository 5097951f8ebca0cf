// Strided copies on backends whose memory is not host-visible (CUDA): one Atlas ISA kernel per
// (dtype, number of dims). Loads and stores of a register of the element's own dtype keep its
// bits (f16/bf16 go through f32 exactly, NaN payloads included; bools are 0/1 already). Lane i of the launch decomposes its linear index
// into coordinates with the sizes and adds coordinate * stride for both views; sizes, strides
// and offsets are scalar parameters, so one compiled kernel serves every shape of that rank.
#include <stdio.h>
#include <string.h>
#include "base/error.h"
#include "base/handles.h"
#include "tensor/tensor_internal.h"

#define LAUNCH_MAX (UINT64_C(1) << 30)   // lanes per launch (gid stays in u32)

// The kernel text for dtype dt and nd dims (nd >= 1).
static int kernel_text(char* buf, size_t len, hg_dtype dt, int32_t nd) {
    const char* u = hg_dtype_name(dt);
    int n = snprintf(buf, len,
                     ".kernel hg_strided_copy_%s_%d\n"
                     ".param dst: global %s\n.param src: global const %s\n"
                     ".param first: u64\n.param n: u64\n.param soff: i64\n.param doff: i64\n",
                     u, (int)nd, u, u);
    for (int32_t d = 0; d < nd; d++)
        n += snprintf(buf + n, len - (size_t)n, ".param z%d: u64\n.param ss%d: i64\n.param ds%d: i64\n",
                      (int)d, (int)d, (int)d);
    n += snprintf(buf + n, len - (size_t)n,
                  ".reg u64 i, q, r\n.reg i64 so, dof, c, t\n.reg %s v\n.reg bool p\n"
                  "    cvt.u64.u32 i, %%gid.x\n    add.u64 i, i, first\n"
                  "    cmp.lt.u64 p, i, n\n    if p\n"
                  "        mov.u64 q, i\n        mov.i64 so, soff\n        mov.i64 dof, doff\n",
                  u);
    for (int32_t d = nd - 1; d >= 0; d--)
        n += snprintf(buf + n, len - (size_t)n,
                      "        rem.u64 r, q, z%d\n        div.u64 q, q, z%d\n"
                      "        cvt.i64.u64 c, r\n"
                      "        mul.i64 t, c, ss%d\n        add.i64 so, so, t\n"
                      "        mul.i64 t, c, ds%d\n        add.i64 dof, dof, t\n",
                      (int)d, (int)d, (int)d, (int)d);
    n += snprintf(buf + n, len - (size_t)n,
                  "        ld.global.%s v, src[so]\n        st.global.%s dst[dof], v\n    endif\n",
                  u, u);
    return n > 0 && (size_t)n < len;
}

// dst[...] = src[...] for views of one dtype on one non-host-visible executor, src's strides
// already broadcast to dst's shape (sstr). The views must not overlap.
static hg_status copy_views(const hg_tensor* dst, const hg_tensor* src, const int64_t* sstr,
                            int64_t n) {
    hg_buffer_obj* db = hg_handle_get(dst->buffer.handle, HG_HANDLE_BUFFER);
    if (!db) return hg_error(HG_ERR_INVALID_HANDLE, "hg_tensor_copy: dst buffer vanished");
    int32_t nd = dst->ndim ? dst->ndim : 1;
    int64_t one = 1, zero = 0;
    const int64_t* shape = dst->ndim ? dst->shape : &one;
    const int64_t* ds = dst->ndim ? dst->strides : &zero;
    const int64_t* ss = dst->ndim ? sstr : &zero;
    char text[6144];
    if (!kernel_text(text, sizeof text, dst->dtype, nd))
        return hg_error(HG_ERR_INTERNAL, "hg_tensor_copy: kernel text too long");
    hg_program prog;
    hg_status s = hg_program_parse(text, strlen(text), &prog);
    if (s) return hg_error_prefix(s, "hg_tensor_copy (device kernel)");
    hg_executor ex = {db->ex->handle};
    hg_arg args[6 + 3 * HG_MAX_DIMS];
    for (uint64_t first = 0; first < (uint64_t)n && !s; first += LAUNCH_MAX) {
        uint64_t count = (uint64_t)n - first < LAUNCH_MAX ? (uint64_t)n - first : LAUNCH_MAX;
        size_t k = 0;
        args[k++] = hg_arg_buffer(dst->buffer);
        args[k++] = hg_arg_buffer(src->buffer);
        args[k++] = hg_arg_u64(first);
        args[k++] = hg_arg_u64((uint64_t)n);
        args[k++] = hg_arg_i64(src->offset);
        args[k++] = hg_arg_i64(dst->offset);
        for (int32_t d = 0; d < nd; d++) {
            args[k++] = hg_arg_u64((uint64_t)shape[d]);
            args[k++] = hg_arg_i64(ss[d]);
            args[k++] = hg_arg_i64(ds[d]);
        }
        hg_launch_config cfg = hg_launch_1d(count, 256);
        s = hg_launch(ex, prog, &cfg, args, k);
    }
    hg_program_destroy(prog);
    return s ? hg_error_prefix(s, "hg_tensor_copy (device kernel)") : HG_OK;
}

hg_status hg_tensor_copy_device(const hg_tensor* dst, const hg_tensor* src, const int64_t* sstr,
                                int64_t src_numel, int overlap) {
    int64_t n = 1;
    for (int32_t d = 0; d < dst->ndim; d++) n *= dst->shape[d];
    if (!overlap) return copy_views(dst, src, sstr, n);
    // Overlapping views go through a contiguous temporary holding src's elements.
    hg_buffer_obj* sb = hg_handle_get(src->buffer.handle, HG_HANDLE_BUFFER);
    if (!sb) return hg_error(HG_ERR_INVALID_HANDLE, "hg_tensor_copy: src buffer vanished");
    hg_executor ex = {sb->ex->handle};
    hg_buffer tb;
    hg_status s = hg_buffer_create_ex(ex, src->dtype, (size_t)src_numel, HG_BUFFER_UNINITIALIZED, &tb);
    if (s) return hg_error_prefix(s, "hg_tensor_copy (temporary for overlapping views)");
    hg_tensor tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.buffer = tb;
    tmp.dtype = src->dtype;
    tmp.ndim = src->ndim;
    memcpy(tmp.shape, src->shape, sizeof tmp.shape);
    hg_tensor_contiguous_strides(src->ndim, src->shape, tmp.strides);
    s = copy_views(&tmp, src, src->strides, src_numel);
    if (!s) {
        int64_t tstr[HG_MAX_DIMS];
        hg_tensor_broadcast_strides(dst, tmp.ndim, tmp.shape, tmp.strides, tstr);
        s = copy_views(dst, &tmp, tstr, n);
    }
    hg_buffer_destroy(tb);
    return s;
}
