// Data ops on devices: fill, arange, random (uniform, normal), converting copies (concat) and
// index_select / gather, each as one Atlas ISA kernel with a lane per output element. Lane i
// takes element i of out in C order, turns i into coordinates with out's sizes and adds them
// times each tensor's strides, so any view works without copies.
//
// Random numbers are the CPU's (random.c): Philox-4x32-10 on the counter offset + i under the
// seed, in 64-bit integer arithmetic, then the same f64 mapping; uniform values are therefore
// bit-identical to the CPU's, normal ones too wherever the device's f64 log, sqrt and cos
// round like the host's (the result is rounded to out's dtype afterwards).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_text.h"
#include "ops/common/dev_ops.h"

#define DD_BLOCK 256u
#define DD_LAUNCH_MAX (UINT64_C(1) << 30)

// Kernel header through the lane's offsets: params o (and x when xdt is valid), n, first, the
// offsets, the extra params, out's dims (nt tensors: o, x); then `if i < n` with oo (and xo)
// computed. The caller appends the body and closes with dd_end.
static void dd_begin(hg_sb* b, const char* name, hg_dtype odt, int has_x, hg_dtype xdt,
                     int32_t nd, const char* extra_params, const char* extra_regs) {
    hg_sb_put(b, ".kernel %s\n.param o: global %s\n", name, hg_dk_dt(odt));
    if (has_x) hg_sb_put(b, ".param x: global const %s\n", hg_dk_dt(xdt));
    hg_sb_put(b, ".param n: u64\n.param first: u64\n.param ooff: i64\n.param xoff: i64\n%s",
              extra_params);
    hg_dk_param_dims_text(b, "d", nd, has_x ? 2 : 1);
    hg_sb_put(b, ".reg u64 i, dq, dr\n.reg i64 oo, xo, dc, dt\n.reg bool in\n.reg %s ov\n%s",
              hg_dk_dt(odt), extra_regs);
    if (has_x) hg_sb_put(b, ".reg %s xv\n", hg_dk_dt(xdt));
    hg_sb_put(b, "    cvt.u64.u32 i, %%gid.x\n    add.u64 i, i, first\n    cmp.lt.u64 in, i, n\n"
                 "    if in\n    mov.i64 oo, ooff\n    mov.i64 xo, xoff\n");
    static const char* const offs[2] = {"oo", "xo"};
    hg_dk_emit_offsets_text(b, "d", nd, has_x ? 2 : 1, "i", offs);
}

static void dd_end(hg_sb* b, hg_dtype odt) {
    hg_sb_put(b, "    st.global.%s o[oo], ov\n    endif\n", hg_dk_dt(odt));
}

// out's dims (with x's strides when x is given; x has out's shape) and the launches.
typedef struct dd_call {
    hg_op_ctx* c;
    const hg_tensor* out;
    const hg_tensor* x;   // or NULL
    hg_dk_dims dims;
    uint64_t n;
} dd_call;

static void dd_setup(dd_call* k, hg_op_ctx* c, const hg_tensor* out, const hg_tensor* x, int merge) {
    memset(k, 0, sizeof *k);
    k->c = c;
    k->out = out;
    k->x = x;
    k->n = (uint64_t)hg_dk_numel(out);
    for (int32_t d = 0; d < out->ndim; d++) {
        int64_t st[2] = {out->strides[d], x ? x->strides[d] : 0};
        hg_dk_dims_push(&k->dims, x ? 2 : 1, out->shape[d], st);
    }
    // Merging keeps C order, so element i is still the i-th of out (random relies on it).
    if (merge) hg_dk_dims_merge(&k->dims, x ? 2 : 1);
}

// Launches text over out's elements: buffers o (and x), then n, first, offsets, the extra
// args, then the dims.
static hg_status dd_launch(const dd_call* k, const hg_sb* text, const hg_arg* extra,
                           size_t nextra) {
    hg_arg args[16 + 3 * HG_MAX_DIMS];
    hg_status s = HG_OK;
    for (uint64_t first = 0; first < k->n && !s; first += DD_LAUNCH_MAX) {
        uint64_t cnt = k->n - first < DD_LAUNCH_MAX ? k->n - first : DD_LAUNCH_MAX;
        size_t a = 0;
        args[a++] = hg_arg_buffer(k->out->buffer);
        if (k->x) args[a++] = hg_arg_buffer(k->x->buffer);
        args[a++] = hg_arg_u64(k->n);
        args[a++] = hg_arg_u64(first);
        args[a++] = hg_arg_i64(k->out->offset);
        args[a++] = hg_arg_i64(k->x ? k->x->offset : 0);
        for (size_t e = 0; e < nextra; e++) args[a++] = extra[e];
        a = hg_dk_arg_dims(args, a, &k->dims, k->x ? 2 : 1);
        hg_launch_config cfg = hg_launch_1d(cnt, DD_BLOCK);
        s = hg_dk_launch_text(k->c->ex, k->c->fn, text, &cfg, args, a);
    }
    return s;
}

hg_status hg_dev_fill(hg_op_ctx* c, const hg_tensor* out, uint64_t value_bits) {
    dd_call k;
    dd_setup(&k, c, out, NULL, 1);
    if (k.n == 0) return HG_OK;
    hg_sb b = {0};
    char params[64];
    snprintf(params, sizeof params, ".param val: %s\n", hg_dk_dt(out->dtype));
    dd_begin(&b, "hg_dev_fill", out->dtype, 0, out->dtype, k.dims.nd, params, "");
    hg_sb_put(&b, "    mov.%s ov, val\n", hg_dk_dt(out->dtype));
    dd_end(&b, out->dtype);
    hg_arg extra = hg_arg_scalar(out->dtype, value_bits);
    hg_status s = dd_launch(&k, &b, &extra, 1);
    hg_sb_free(&b);
    return s;
}

hg_status hg_dev_arange(hg_op_ctx* c, const hg_tensor* out, double start, double step) {
    dd_call k;
    dd_setup(&k, c, out, NULL, 1);
    if (k.n == 0) return HG_OK;
    hg_sb b = {0};
    dd_begin(&b, "hg_dev_arange", out->dtype, 0, out->dtype, k.dims.nd,
             ".param start: f64\n.param step: f64\n", ".reg f64 v\n");
    // start + i * step with one rounding each, as the CPU's C expression.
    hg_sb_put(&b, "    cvt.f64.u64 v, i\n    mul.f64 v, v, step\n    add.f64 v, start, v\n");
    hg_dk_cvt(&b, "ov", out->dtype, "v", HG_DTYPE_F64);
    dd_end(&b, out->dtype);
    hg_arg extra[2] = {hg_arg_f64(start), hg_arg_f64(step)};
    hg_status s = dd_launch(&k, &b, extra, 2);
    hg_sb_free(&b);
    return s;
}

// Philox-4x32-10 of the counter offset + i under (k0, k1): words c0..c3.
static void emit_philox(hg_sb* b) {
    hg_sb_put(b, "    add.u64 lo, off, i\n    cmp.lt.u64 cy, lo, off\n    cvt.u32.u64 c0, lo\n"
                 "    shr.u64 p0, lo, 32\n    cvt.u32.u64 c1, p0\n    cvt.u32.bool c2, cy\n"
                 "    mov.u32 c3, 0\n    mov.u32 k0, key0\n    mov.u32 k1, key1\n");
    for (int r = 0; r < 10; r++) {
        if (r) hg_sb_put(b, "    add.u32 k0, k0, 0x9E3779B9\n    add.u32 k1, k1, 0xBB67AE85\n");
        hg_sb_put(b, "    cvt.u64.u32 p0, c0\n    mul.u64 p0, p0, 0xD2511F53\n"
                     "    cvt.u64.u32 p1, c2\n    mul.u64 p1, p1, 0xCD9E8D57\n"
                     "    shr.u64 t64, p1, 32\n    cvt.u32.u64 n0, t64\n    xor.u32 n0, n0, c1\n"
                     "    xor.u32 n0, n0, k0\n    shr.u64 t64, p0, 32\n    cvt.u32.u64 n2, t64\n"
                     "    xor.u32 n2, n2, c3\n    xor.u32 n2, n2, k1\n    mov.u32 c0, n0\n"
                     "    cvt.u32.u64 c1, p1\n    mov.u32 c2, n2\n    cvt.u32.u64 c3, p0\n");
    }
}

// dst := the top 53 bits of (hi << 32 | lo) as f64 (plus `add` before scaling) times 2^-53.
static void emit_top53(hg_sb* b, const char* dst, const char* lo, const char* hi, int add) {
    hg_sb_put(b, "    cvt.u64.u32 t64, %s\n    shl.u64 t64, t64, 32\n    cvt.u64.u32 p0, %s\n"
                 "    or.u64 t64, t64, p0\n    shr.u64 t64, t64, 11\n",
              hi, lo);
    if (add) hg_sb_put(b, "    add.u64 t64, t64, 1\n");
    hg_sb_put(b, "    cvt.f64.u64 %s, t64\n    mul.f64 %s, %s, 0d3ca0000000000000\n", dst, dst, dst);
}

hg_status hg_dev_random(hg_op_ctx* c, const hg_tensor* out, uint64_t seed, uint64_t offset,
                        int normal, double a, double scale, double lo_q, double hi_q) {
    dd_call k;
    dd_setup(&k, c, out, NULL, 1);
    if (k.n == 0) return HG_OK;
    hg_dtype dt = out->dtype;
    hg_sb b = {0};
    dd_begin(&b, normal ? "hg_dev_random_normal" : "hg_dev_random_uniform", dt, 0, dt, k.dims.nd,
             ".param off: u64\n.param key0: u32\n.param key1: u32\n.param a: f64\n"
             ".param sc: f64\n.param loq: f64\n.param hiq: f64\n",
             ".reg u64 lo, p0, p1, t64\n.reg u32 c0, c1, c2, c3, k0, k1, n0, n2\n"
             ".reg f64 u1, u2, y\n.reg bool cy\n");
    emit_philox(&b);
    if (normal) {
        // z = sqrt(-2 log u1) cos(2 pi u2), u1 in (0, 1].
        emit_top53(&b, "u1", "c0", "c1", 1);
        emit_top53(&b, "u2", "c2", "c3", 0);
        hg_sb_put(&b, "    log.f64 u1, u1\n    mul.f64 u1, u1, -2\n    sqrt.f64 u1, u1\n"
                      "    mul.f64 u2, u2, 6.283185307179586\n    cos.f64 u2, u2\n"
                      "    mul.f64 y, u1, u2\n    mul.f64 y, sc, y\n    add.f64 y, a, y\n");
        hg_dk_cvt(&b, "ov", dt, "y", HG_DTYPE_F64);
    } else {
        // low + (high - low) * u rounded to the dtype, then kept within [lo_q, hi_q].
        emit_top53(&b, "u1", "c0", "c1", 0);
        hg_sb_put(&b, "    mul.f64 y, sc, u1\n    add.f64 y, a, y\n");
        hg_dk_cvt(&b, "ov", dt, "y", HG_DTYPE_F64);
        hg_dk_cvt(&b, "y", HG_DTYPE_F64, "ov", dt);
        hg_sb_put(&b, "    cmp.gt.f64 cy, y, hiq\n    sel.f64 y, cy, hiq, y\n"
                      "    cmp.lt.f64 cy, y, loq\n    sel.f64 y, cy, loq, y\n");
        hg_dk_cvt(&b, "ov", dt, "y", HG_DTYPE_F64);
    }
    dd_end(&b, dt);
    hg_arg extra[7] = {hg_arg_u64(offset), hg_arg_u32((uint32_t)seed),
                       hg_arg_u32((uint32_t)(seed >> 32)), hg_arg_f64(a), hg_arg_f64(scale),
                       hg_arg_f64(lo_q), hg_arg_f64(hi_q)};
    hg_status s = dd_launch(&k, &b, extra, 7);
    hg_sb_free(&b);
    return s;
}

// dst[i] = f(src[i]) over equal shapes: the body turns xv (src's dtype) into ov (dst's).
static hg_status map_kernel(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* src,
                            const char* name, const char* regs, const hg_sb* body) {
    dd_call k;
    dd_setup(&k, c, dst, src, 1);
    if (k.n == 0) return HG_OK;
    hg_sb b = {0};
    dd_begin(&b, name, dst->dtype, 1, src->dtype, k.dims.nd, "", regs);
    hg_sb_put(&b, "    ld.global.%s xv, x[xo]\n%s", hg_dk_dt(src->dtype), body->p ? body->p : "");
    dd_end(&b, dst->dtype);
    hg_status s = body->oom ? hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory", c->fn)
                            : dd_launch(&k, &b, NULL, 0);
    hg_sb_free(&b);
    return s;
}

hg_status hg_dev_copy_cast(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* src) {
    hg_sb body = {0};
    hg_dk_cvt(&body, "ov", dst->dtype, "xv", src->dtype);
    hg_status s = map_kernel(c, dst, src, "hg_dev_copy_cast", "", &body);
    hg_sb_free(&body);
    return s;
}

hg_status hg_dev_flag_not_unit(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* src) {
    hg_sb body = {0};
    hg_dk_cvt(&body, "v", HG_DTYPE_F64, "xv", src->dtype);
    hg_sb_put(&body, "    cmp.ge.f64 ov, v, 0\n    cmp.le.f64 a, v, 1\n    and.bool ov, ov, a\n"
                     "    not.bool ov, ov\n");
    hg_status s = map_kernel(c, dst, src, "hg_dev_flag_not_unit", ".reg f64 v\n.reg bool a\n", &body);
    hg_sb_free(&body);
    return s;
}

// out[...] = x[..., idx[...], ...]: the index of lane i's element is idx[i] (gather) or
// idx[its coordinate along axis] (index_select). Dims are not merged: the axis coordinate is
// needed on its own.
static hg_status index_kernel(hg_op_ctx* c, const hg_tensor* x, int32_t axis, hg_buffer idx,
                              int gather, const hg_tensor* out) {
    dd_call k;
    memset(&k, 0, sizeof k);
    k.c = c;
    k.out = out;
    k.x = x;
    k.n = (uint64_t)hg_dk_numel(out);
    if (k.n == 0) return HG_OK;
    int32_t nd = out->ndim;
    hg_sb b = {0};
    hg_sb_put(&b, ".kernel hg_dev_index\n.param o: global %s\n.param x: global const %s\n"
                  ".param ix: global const i64\n.param n: u64\n.param first: u64\n"
                  ".param ooff: i64\n.param xoff: i64\n.param xsax: i64\n",
              hg_dk_dt(out->dtype), hg_dk_dt(x->dtype));
    for (int32_t d = 0; d < nd; d++)
        hg_sb_put(&b, ".param s%d: u64\n.param os%d: i64\n.param xs%d: i64\n", (int)d, (int)d,
                  (int)d);
    hg_sb_put(&b, ".reg u64 i, q, r, cax\n.reg i64 oo, xo, cc, t, pos\n.reg bool in\n"
                  ".reg %s ov\n.reg %s xv\n",
              hg_dk_dt(out->dtype), hg_dk_dt(x->dtype));
    hg_sb_put(&b, "    cvt.u64.u32 i, %%gid.x\n    add.u64 i, i, first\n    cmp.lt.u64 in, i, n\n"
                  "    if in\n    mov.i64 oo, ooff\n    mov.i64 xo, xoff\n    mov.u64 q, i\n"
                  "    mov.u64 cax, 0\n");
    for (int32_t d = nd - 1; d >= 0; d--) {
        hg_sb_put(&b, "    rem.u64 r, q, s%d\n    div.u64 q, q, s%d\n    cvt.i64.u64 cc, r\n"
                      "    mul.i64 t, cc, os%d\n    add.i64 oo, oo, t\n",
                  (int)d, (int)d, (int)d);
        if (d == axis) hg_sb_put(&b, "    mov.u64 cax, r\n");
        else hg_sb_put(&b, "    mul.i64 t, cc, xs%d\n    add.i64 xo, xo, t\n", (int)d);
    }
    hg_sb_put(&b, "    ld.global.i64 pos, ix[%s]\n    mul.i64 t, pos, xsax\n    add.i64 xo, xo, t\n"
                  "    ld.global.%s xv, x[xo]\n",
              gather ? "i" : "cax", hg_dk_dt(x->dtype));
    hg_dk_cvt(&b, "ov", out->dtype, "xv", x->dtype);
    dd_end(&b, out->dtype);
    hg_arg args[16 + 3 * HG_MAX_DIMS];
    hg_status s = HG_OK;
    for (uint64_t first = 0; first < k.n && !s; first += DD_LAUNCH_MAX) {
        uint64_t cnt = k.n - first < DD_LAUNCH_MAX ? k.n - first : DD_LAUNCH_MAX;
        size_t a = 0;
        args[a++] = hg_arg_buffer(out->buffer);
        args[a++] = hg_arg_buffer(x->buffer);
        args[a++] = hg_arg_buffer(idx);
        args[a++] = hg_arg_u64(k.n);
        args[a++] = hg_arg_u64(first);
        args[a++] = hg_arg_i64(out->offset);
        args[a++] = hg_arg_i64(x->offset);
        args[a++] = hg_arg_i64(x->ndim ? x->strides[axis] : 0);
        for (int32_t d = 0; d < nd; d++) {
            args[a++] = hg_arg_u64((uint64_t)out->shape[d]);
            args[a++] = hg_arg_i64(out->strides[d]);
            args[a++] = hg_arg_i64(x->ndim ? x->strides[d] : 0);
        }
        hg_launch_config cfg = hg_launch_1d(cnt, DD_BLOCK);
        s = hg_dk_launch_text(c->ex, c->fn, &b, &cfg, args, a);
    }
    hg_sb_free(&b);
    return s;
}

hg_status hg_dev_index(hg_op_ctx* c, const hg_tensor* x, int32_t axis, const int64_t* idx,
                       int64_t nidx, int gather, const hg_tensor* out, int via_temp) {
    if (hg_dk_numel(out) == 0) return HG_OK;
    hg_executor exh = {c->ex->handle};
    hg_buffer ib;
    hg_status s = hg_buffer_create_ex(exh, HG_DTYPE_I64, (size_t)(nidx ? nidx : 1),
                                      HG_BUFFER_UNINITIALIZED, &ib);
    if (s) return hg_error_prefix(s, "%s (indices on the device)", c->fn);
    if (nidx) s = hg_buffer_write(ib, 0, idx, (size_t)nidx);
    if (!s && !via_temp) s = index_kernel(c, x, axis, ib, gather, out);
    if (!s && via_temp) {   // out is x: compute into a temporary, then copy
        hg_tensor t;
        memset(&t, 0, sizeof t);
        if (!(s = hg_op_output(c, &t, out->dtype, out->ndim, out->shape, 0))) {
            s = index_kernel(c, x, axis, ib, gather, &t);
            if (!s) s = hg_tensor_copy(out, &t);
            hg_buffer_destroy(t.buffer);
        }
    }
    hg_buffer_destroy(ib);
    return s;
}
