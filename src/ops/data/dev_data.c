// Data ops on devices: fill, arange, converting copies (concat) and index_select / gather,
// each as one Atlas ISA kernel with a lane per output element, built with the kernel builder.
// fill, arange and the copies use the lane-per-element frame (dev_lane.h); index_select and
// gather have a frame of their own (the coordinate along the axis is needed by itself).
#include <stdio.h>
#include <string.h>
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"
#include "ops/data/dev_lane.h"

hg_status hg_dev_fill(hg_op_ctx* c, const hg_tensor* out, uint64_t value_bits) {
    hg_dd_call call;
    hg_dd_setup(&call, c, out, NULL, 1);
    if (call.n == 0) return HG_OK;
    hg_dd_kernel k;
    hg_dd_declare(&k, "hg_dev_fill", out->dtype, 0, out->dtype);
    hg_operand val = hg_kb_scalar(&k.b, "val", out->dtype);
    hg_dd_begin(&k, call.dims.nd);
    hg_kb_mov(&k.b, out->dtype, k.ov, val);
    hg_arg extra = hg_arg_scalar(out->dtype, value_bits);
    return hg_dd_run(&call, &k, &extra, 1);
}

hg_status hg_dev_arange(hg_op_ctx* c, const hg_tensor* out, double start, double step) {
    hg_dd_call call;
    hg_dd_setup(&call, c, out, NULL, 1);
    if (call.n == 0) return HG_OK;
    const hg_dtype F = HG_DTYPE_F64;
    hg_dd_kernel k;
    hg_dd_declare(&k, "hg_dev_arange", out->dtype, 0, out->dtype);
    hg_kb* b = &k.b;
    hg_operand p_start = hg_kb_scalar(b, "start", F);
    hg_operand p_step = hg_kb_scalar(b, "step", F);
    uint32_t v = hg_kb_reg(b, "v", F);
    hg_dd_begin(&k, call.dims.nd);
    // start + i * step with one rounding each, as the CPU's C expression.
    hg_kb_set_cvt(b, F, HG_DTYPE_U64, v, hg_reg(k.i));
    hg_kb_set(b, HG_OP_MUL, F, v, hg_reg(v), p_step, hg_none());
    hg_kb_set(b, HG_OP_ADD, F, v, p_start, hg_reg(v), hg_none());
    hg_kb_set_cvt(b, out->dtype, F, k.ov, hg_reg(v));
    hg_arg extra[2] = {hg_arg_f64(start), hg_arg_f64(step)};
    return hg_dd_run(&call, &k, extra, 2);
}

// A map kernel's frame and the registers of its own (flag_not_unit's v and a).
typedef struct map_k {
    hg_dd_kernel f;
    uint32_t v, a;
} map_k;

// dst[i] = f(src[i]) over equal shapes: regs (or NULL) declares the kernel's own registers,
// body turns xv (src's dtype) into ov (dst's).
static hg_status map_kernel(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* src,
                            const char* name, void (*regs)(map_k* k), void (*body)(map_k* k)) {
    hg_dd_call call;
    hg_dd_setup(&call, c, dst, src, 1);
    if (call.n == 0) return HG_OK;
    map_k k;
    memset(&k, 0, sizeof k);
    hg_dd_declare(&k.f, name, dst->dtype, 1, src->dtype);
    if (regs) regs(&k);
    hg_dd_begin(&k.f, call.dims.nd);
    hg_kb_ld(&k.f.b, HG_SPACE_GLOBAL, src->dtype, k.f.xv, k.f.x, hg_reg(k.f.xo));
    body(&k);
    return hg_dd_run(&call, &k.f, NULL, 0);
}

static void cast_body(map_k* k) {
    hg_kb_set_cvt(&k->f.b, k->f.odt, k->f.xdt, k->f.ov, hg_reg(k->f.xv));
}

hg_status hg_dev_copy_cast(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* src) {
    return map_kernel(c, dst, src, "hg_dev_copy_cast", NULL, cast_body);
}

static void flag_regs(map_k* k) {
    k->v = hg_kb_reg(&k->f.b, "v", HG_DTYPE_F64);
    k->a = hg_kb_reg(&k->f.b, "a", HG_DTYPE_BOOL);
}

// ov = !(0 <= v && v <= 1): a NaN fails both comparisons and is flagged.
static void flag_body(map_k* k) {
    hg_kb* b = &k->f.b;
    const hg_dtype F = HG_DTYPE_F64, B = HG_DTYPE_BOOL;
    uint32_t ov = k->f.ov;
    hg_kb_set_cvt(b, F, k->f.xdt, k->v, hg_reg(k->f.xv));
    hg_kb_set_cmp(b, HG_CMP_GE, F, ov, hg_reg(k->v), hg_imm_f64(0.0));
    hg_kb_set_cmp(b, HG_CMP_LE, F, k->a, hg_reg(k->v), hg_imm_f64(1.0));
    hg_kb_set(b, HG_OP_AND, B, ov, hg_reg(ov), hg_reg(k->a), hg_none());
    hg_kb_set(b, HG_OP_NOT, B, ov, hg_reg(ov), hg_none(), hg_none());
}

hg_status hg_dev_flag_not_unit(hg_op_ctx* c, const hg_tensor* dst, const hg_tensor* src) {
    return map_kernel(c, dst, src, "hg_dev_flag_not_unit", flag_regs, flag_body);
}

// The index kernel's params and registers (declared in this order). Dims are per out's dim,
// unmerged: s<d> (out's size), os<d> and xs<d> (out's and x's strides).
typedef struct ix_k {
    hg_kb b;
    uint32_t o, x, ix;                              // memory slots
    hg_operand n, first, ooff, xoff, xsax;          // scalars
    hg_operand s[HG_MAX_DIMS], os[HG_MAX_DIMS], xs[HG_MAX_DIMS];
    uint32_t i, q, r, cax;                          // u64
    uint32_t oo, xo, cc, t, pos;                    // i64
    uint32_t in, ov, xv;
} ix_k;

static void ix_declare(ix_k* k, hg_dtype odt, hg_dtype xdt, int32_t nd, int add) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64;
    k->o = hg_kb_buffer(b, "o", odt, add);
    k->x = hg_kb_buffer(b, "x", xdt, !add);
    k->ix = hg_kb_buffer(b, "ix", I, 1);
    k->n = hg_kb_scalar(b, "n", U);
    k->first = hg_kb_scalar(b, "first", U);
    k->ooff = hg_kb_scalar(b, "ooff", I);
    k->xoff = hg_kb_scalar(b, "xoff", I);
    k->xsax = hg_kb_scalar(b, "xsax", I);
    char name[HG_NAME_MAX];
    for (int32_t d = 0; d < nd; d++) {
        snprintf(name, sizeof name, "s%d", (int)d);
        k->s[d] = hg_kb_scalar(b, name, U);
        snprintf(name, sizeof name, "os%d", (int)d);
        k->os[d] = hg_kb_scalar(b, name, I);
        snprintf(name, sizeof name, "xs%d", (int)d);
        k->xs[d] = hg_kb_scalar(b, name, I);
    }
    k->i = hg_kb_reg(b, "i", U);
    k->q = hg_kb_reg(b, "q", U);
    k->r = hg_kb_reg(b, "r", U);
    k->cax = hg_kb_reg(b, "cax", U);
    k->oo = hg_kb_reg(b, "oo", I);
    k->xo = hg_kb_reg(b, "xo", I);
    k->cc = hg_kb_reg(b, "cc", I);
    k->t = hg_kb_reg(b, "t", I);
    k->pos = hg_kb_reg(b, "pos", I);
    k->in = hg_kb_reg(b, "in", HG_DTYPE_BOOL);
    k->ov = hg_kb_reg(b, "ov", odt);
    k->xv = hg_kb_reg(b, "xv", xdt);
}

// off += cc * stride (i64).
static void ix_add_term(ix_k* k, uint32_t off, hg_operand stride) {
    hg_kb_set(&k->b, HG_OP_MUL, HG_DTYPE_I64, k->t, hg_reg(k->cc), stride, hg_none());
    hg_kb_set(&k->b, HG_OP_ADD, HG_DTYPE_I64, off, hg_reg(off), hg_reg(k->t), hg_none());
}

// The lane's element of out (offset oo), its coordinate along axis (cax), and x's offset xo
// of every other coordinate plus idx[i] (gather) or idx[cax] (index_select) along axis.
// add: the accumulating form (index_add / scatter_add): the lane's element of o is read and
// added atomically to x's indexed element (o: the source, x: the accumulator; equal dtypes).
static hg_status ix_build(hg_dtype odt, hg_dtype xdt, int32_t nd, int32_t axis, int gather,
                          int add, const char* fn, hg_prog** out) {
    ix_k k;
    memset(&k, 0, sizeof k);
    k.b = hg_kb_new(add ? "hg_dev_index_add" : "hg_dev_index");
    hg_kb* b = &k.b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64;
    ix_declare(&k, odt, xdt, nd, add);
    hg_kb_set_cvt(b, U, HG_DTYPE_U32, k.i, hg_sreg(HG_SREG_GID_X));
    hg_kb_set(b, HG_OP_ADD, U, k.i, hg_reg(k.i), k.first, hg_none());
    hg_kb_set_cmp(b, HG_CMP_LT, U, k.in, hg_reg(k.i), k.n);
    hg_kb_if(b, k.in);
    hg_kb_mov(b, I, k.oo, k.ooff);
    hg_kb_mov(b, I, k.xo, k.xoff);
    hg_kb_mov(b, U, k.q, hg_reg(k.i));
    hg_kb_mov(b, U, k.cax, hg_imm_u64(0));
    for (int32_t d = nd - 1; d >= 0; d--) {
        hg_kb_set(b, HG_OP_REM, U, k.r, hg_reg(k.q), k.s[d], hg_none());
        hg_kb_set(b, HG_OP_DIV, U, k.q, hg_reg(k.q), k.s[d], hg_none());
        hg_kb_set_cvt(b, I, U, k.cc, hg_reg(k.r));
        ix_add_term(&k, k.oo, k.os[d]);
        if (d == axis) hg_kb_mov(b, U, k.cax, hg_reg(k.r));
        else ix_add_term(&k, k.xo, k.xs[d]);
    }
    hg_kb_ld(b, HG_SPACE_GLOBAL, I, k.pos, k.ix, hg_reg(gather ? k.i : k.cax));
    hg_kb_set(b, HG_OP_MUL, I, k.t, hg_reg(k.pos), k.xsax, hg_none());
    hg_kb_set(b, HG_OP_ADD, I, k.xo, hg_reg(k.xo), hg_reg(k.t), hg_none());
    if (add) {
        hg_kb_ld(b, HG_SPACE_GLOBAL, odt, k.ov, k.o, hg_reg(k.oo));
        hg_kb_atom(b, HG_SPACE_GLOBAL, HG_ATOMIC_ADD, xdt, k.x, hg_reg(k.xo), hg_reg(k.ov));
    } else {
        hg_kb_ld(b, HG_SPACE_GLOBAL, xdt, k.xv, k.x, hg_reg(k.xo));
        hg_kb_set_cvt(b, odt, xdt, k.ov, hg_reg(k.xv));
        hg_kb_st(b, HG_SPACE_GLOBAL, odt, k.o, hg_reg(k.oo), hg_reg(k.ov));
    }
    hg_kb_endif(b);
    return hg_dk_finish(b, fn, out);
}

// out[...] = x[..., idx[...], ...]: the index of lane i's element is idx[i] (gather) or
// idx[its coordinate along axis] (index_select). Dims are not merged: the axis coordinate is
// needed on its own.
static hg_status index_kernel(hg_op_ctx* c, const hg_tensor* x, int32_t axis, hg_buffer idx,
                              int gather, int add, const hg_tensor* out) {
    uint64_t n = (uint64_t)hg_view_numel(out);
    if (n == 0) return HG_OK;
    int32_t nd = out->ndim;
    hg_prog* prog = NULL;
    hg_status s = ix_build(out->dtype, x->dtype, nd, axis, gather, add, c->fn, &prog);
    if (s) return s;
    hg_arg args[16 + 3 * HG_MAX_DIMS];
    for (uint64_t first = 0; first < n && !s; first += HG_DD_LAUNCH_MAX) {
        uint64_t cnt = n - first < HG_DD_LAUNCH_MAX ? n - first : HG_DD_LAUNCH_MAX;
        size_t a = 0;
        args[a++] = hg_arg_buffer(out->buffer);
        args[a++] = hg_arg_buffer(x->buffer);
        args[a++] = hg_arg_buffer(idx);
        args[a++] = hg_arg_u64(n);
        args[a++] = hg_arg_u64(first);
        args[a++] = hg_arg_i64(out->offset);
        args[a++] = hg_arg_i64(x->offset);
        args[a++] = hg_arg_i64(x->ndim ? x->strides[axis] : 0);
        for (int32_t d = 0; d < nd; d++) {
            args[a++] = hg_arg_u64((uint64_t)out->shape[d]);
            args[a++] = hg_arg_i64(out->strides[d]);
            args[a++] = hg_arg_i64(x->ndim ? x->strides[d] : 0);
        }
        hg_launch_config cfg = hg_launch_1d(cnt, HG_DD_BLOCK);
        s = hg_dk_launch(c->ex, c->fn, prog, &cfg, args, a);
    }
    hg_prog_free(prog);
    return s;
}

// The resolved indices in a new device buffer (*ib; destroyed by the caller when HG_OK).
static hg_status upload_indices(hg_op_ctx* c, const int64_t* idx, int64_t nidx, hg_buffer* ib) {
    hg_executor exh = {c->ex->handle};
    hg_status s = hg_buffer_create_ex(exh, HG_DTYPE_I64, (size_t)(nidx ? nidx : 1),
                                      HG_BUFFER_UNINITIALIZED, ib);
    if (s) return hg_error_prefix(s, "%s (indices on the device)", c->fn);
    if (nidx && (s = hg_buffer_write(*ib, 0, idx, (size_t)nidx))) {
        hg_buffer_destroy(*ib);
        return s;
    }
    return HG_OK;
}

hg_status hg_dev_index(hg_op_ctx* c, const hg_tensor* x, int32_t axis, const int64_t* idx,
                       int64_t nidx, int gather, const hg_tensor* out, int via_temp) {
    if (hg_view_numel(out) == 0) return HG_OK;
    hg_buffer ib;
    hg_status s = upload_indices(c, idx, nidx, &ib);
    if (s) return s;
    if (!via_temp) s = index_kernel(c, x, axis, ib, gather, 0, out);
    if (!s && via_temp) {   // out is x: compute into a temporary, then copy
        hg_tensor t;
        memset(&t, 0, sizeof t);
        if (!(s = hg_op_output(c, &t, out->dtype, out->ndim, out->shape, 0))) {
            s = index_kernel(c, x, axis, ib, gather, 0, &t);
            if (!s) s = hg_tensor_copy(out, &t);
            hg_buffer_destroy(t.buffer);
        }
    }
    hg_buffer_destroy(ib);
    return s;
}

hg_status hg_dev_index_add(hg_op_ctx* c, const hg_tensor* acc, int32_t axis, const int64_t* idx,
                           int64_t nidx, int scatter, const hg_tensor* src) {
    if (hg_view_numel(src) == 0) return HG_OK;
    hg_buffer ib;
    hg_status s = upload_indices(c, idx, nidx, &ib);
    if (s) return s;
    s = index_kernel(c, acc, axis, ib, scatter, 1, src);
    hg_buffer_destroy(ib);
    return s;
}
