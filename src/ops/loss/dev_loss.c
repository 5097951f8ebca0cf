// Losses on devices (mse, binary cross entropy with and without logits, cross entropy): a
// kernel with a lane per loss element (per sample for cross entropy) computes the loss in f64
// exactly as loss.c / loss_ce.c do (the same f32 steps for f16/bf16/f32 inputs), then either
// stores it rounded to the result dtype (reduction NONE) or into an f64 temporary that the
// device reductions sum; a one-lane kernel divides (MEAN) and rounds once into out.
#include <stdio.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_text.h"
#include "ops/common/dev_ops.h"
#include "tensor/tensor_internal.h"

#define DL_BLOCK 256u
#define DL_LAUNCH_MAX (UINT64_C(1) << 30)

// A 1-D (or 0-d) f64 tensor over `count` elements of b from element `at`.
static hg_tensor f64_vec(hg_buffer b, int64_t at, int64_t count, int scalar) {
    hg_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = HG_DTYPE_F64;
    t.offset = at;
    t.ndim = scalar ? 0 : 1;
    t.shape[0] = count;
    t.strides[0] = 1;
    return t;
}

// out = (MEAN: sums[0] / divisor, where divisor is sums[1] when counted else n; SUM: sums[0])
// rounded to rt, then stored as out's dtype.
static hg_status finish(hg_op_ctx* c, hg_buffer sums, int mean, int counted, double n,
                        hg_dtype rt, const hg_tensor* out) {
    hg_sb b = {0};
    hg_sb_put(&b, ".kernel hg_dev_loss_finish\n.param s: global const f64\n.param o: global %s\n"
                  ".param ooff: i64\n.param nf: f64\n.reg f64 v, d\n.reg %s rv\n.reg %s ov\n"
                  "    ld.global.f64 v, s[0]\n",
              hg_dk_dt(out->dtype), hg_dk_dt(rt), hg_dk_dt(out->dtype));
    if (mean && counted) hg_sb_put(&b, "    ld.global.f64 d, s[1]\n    div.f64 v, v, d\n");
    else if (mean) hg_sb_put(&b, "    div.f64 v, v, nf\n");
    hg_dk_cvt(&b, "rv", rt, "v", HG_DTYPE_F64);
    hg_dk_cvt(&b, "ov", out->dtype, "rv", rt);
    hg_sb_put(&b, "    st.global.%s o[ooff], ov\n", hg_dk_dt(out->dtype));
    hg_arg args[4] = {hg_arg_buffer(sums), hg_arg_buffer(out->buffer), hg_arg_i64(out->offset),
                      hg_arg_f64(n)};
    hg_launch_config cfg = hg_launch_1d(1, 1);
    hg_status s = hg_dk_launch_text(c->ex, c->fn, &b, &cfg, args, 4);
    hg_sb_free(&b);
    return s;
}

// Sums n f64 values of `vals` (and of `cnts` when given) into sums[0] (and sums[1]), then
// finishes into out.
static hg_status reduce_finish(hg_op_ctx* c, hg_buffer vals, hg_buffer cnts, int64_t n, int mean,
                               hg_dtype rt, const hg_tensor* out) {
    hg_executor exh = {c->ex->handle};
    hg_buffer sums;
    hg_status s = hg_buffer_create(exh, HG_DTYPE_F64, 2, &sums);
    if (s) return hg_error_prefix(s, "%s (loss sums on the device)", c->fn);
    hg_tensor v = f64_vec(vals, 0, n, 0), s0 = f64_vec(sums, 0, 1, 1);
    s = hg_dev_reduce_into(c, HG_REDUCE_SUM, &v, 1u, 0.0, &s0);
    if (!s && cnts.handle) {
        hg_tensor w = f64_vec(cnts, 0, n, 0), s1 = f64_vec(sums, 1, 1, 1);
        s = hg_dev_reduce_into(c, HG_REDUCE_SUM, &w, 1u, 0.0, &s1);
    }
    if (!s) s = finish(c, sums, mean, cnts.handle != 0, (double)n, rt, out);
    hg_buffer_destroy(sums);
    return s;
}

static hg_status launch_lanes(hg_op_ctx* c, const hg_sb* text, uint64_t n, hg_arg* args,
                              size_t nargs, size_t first_slot) {
    hg_status s = HG_OK;
    for (uint64_t first = 0; first < n && !s; first += DL_LAUNCH_MAX) {
        uint64_t cnt = n - first < DL_LAUNCH_MAX ? n - first : DL_LAUNCH_MAX;
        args[first_slot] = hg_arg_u64(first);
        hg_launch_config cfg = hg_launch_1d(cnt, DL_BLOCK);
        s = hg_dk_launch_text(c->ex, c->fn, text, &cfg, args, nargs);
    }
    return s;
}

// log1p(e) for e in [0, 1] without log1p: log(u) * e / (u - 1) with u = 1 + e (exact enough
// in every float type; e itself when u rounds to 1).
static void emit_log1p(hg_sb* b, const char* t, const char* dst, const char* e) {
    hg_sb_put(b, "    add.%s u, %s, 1\n    log.%s lu, u\n    sub.%s um, u, 1\n"
                 "    cmp.eq.%s q, um, 0\n    mul.%s lu, lu, %s\n    div.%s lu, lu, um\n"
                 "    sel.%s %s, q, %s, lu\n",
              t, e, t, t, t, t, e, t, t, dst, e);
}

hg_status hg_dev_ew_loss(hg_op_ctx* c, hg_dev_loss kind, const hg_tensor* const* in,
                         int64_t st[4][HG_MAX_DIMS], int32_t nd, const int64_t* shape,
                         hg_dtype rt, hg_reduction r, const hg_tensor* out) {
    int64_t n = 1;
    for (int32_t d = 0; d < nd; d++) n *= shape[d];
    int write = r == HG_REDUCTION_NONE;
    if (n == 0 && write) return HG_OK;
    hg_buffer tmp = {0};
    hg_executor exh = {c->ex->handle};
    hg_status s = HG_OK;
    int64_t tst[HG_MAX_DIMS];
    hg_tensor_contiguous_strides(nd, shape, tst);
    if (!write && n > 0) {
        s = hg_buffer_create_ex(exh, HG_DTYPE_F64, (size_t)n, HG_BUFFER_UNINITIALIZED, &tmp);
        if (s) return hg_error_prefix(s, "%s (per-element losses on the device)", c->fn);
    }
    hg_dk_dims dims;
    memset(&dims, 0, sizeof dims);
    for (int32_t d = 0; d < nd; d++) {
        int64_t s5[5] = {write ? out->strides[d] : tst[d], st[0][d], st[1][d],
                         in[2] ? st[2][d] : 0, in[3] ? st[3][d] : 0};
        hg_dk_dims_push(&dims, 5, shape[d], s5);
    }
    hg_dk_dims_merge(&dims, 5);
    hg_dtype odt = write ? out->dtype : HG_DTYPE_F64;
    int f64 = rt == HG_DTYPE_F64;
    hg_sb b = {0};
    hg_sb_put(&b, ".kernel hg_dev_ew_loss\n.param o: global %s\n", hg_dk_dt(odt));
    static const char* const nm[4] = {"x", "t", "w", "pw"};
    for (int q = 0; q < 4; q++)
        if (in[q]) hg_sb_put(&b, ".param %s: global const %s\n", nm[q], hg_dk_dt(in[q]->dtype));
    hg_sb_put(&b, ".param n: u64\n.param first: u64\n.param ooff: i64\n.param xoff: i64\n"
                  ".param toff: i64\n.param woff: i64\n.param pwoff: i64\n");
    hg_dk_param_dims_text(&b, "d", dims.nd, 5);
    hg_sb_put(&b, ".reg u64 i, dq, dr\n.reg i64 oo, xo, to, wo, po, dc, dt\n.reg bool in, q\n"
                  ".reg f64 xd, td, wd, pd, l, lp, lq, sp, lw\n.reg f32 xf, lpf, lqf, u, lu, um, ef\n"
                  ".reg f64 ud\n.reg %s rv\n.reg %s ov\n",
              hg_dk_dt(rt), hg_dk_dt(odt));
    for (int q = 0; q < 4; q++)
        if (in[q]) hg_sb_put(&b, ".reg %s %sv\n", hg_dk_dt(in[q]->dtype), nm[q]);
    hg_sb_put(&b, "    cvt.u64.u32 i, %%gid.x\n    add.u64 i, i, first\n    cmp.lt.u64 in, i, n\n"
                  "    if in\n    mov.i64 oo, ooff\n    mov.i64 xo, xoff\n    mov.i64 to, toff\n"
                  "    mov.i64 wo, woff\n    mov.i64 po, pwoff\n");
    static const char* const offs[5] = {"oo", "xo", "to", "wo", "po"};
    hg_dk_emit_offsets_text(&b, "d", dims.nd, 5, "i", offs);
    static const char* const ro[4] = {"xo", "to", "wo", "po"};
    static const char* const rd[4] = {"xd", "td", "wd", "pd"};
    for (int q = 0; q < 4; q++)
        if (in[q]) {
            char reg[8];
            snprintf(reg, sizeof reg, "%sv", nm[q]);
            hg_sb_put(&b, "    ld.global.%s %s, %s[%s]\n", hg_dk_dt(in[q]->dtype), reg, nm[q], ro[q]);
            hg_dk_cvt(&b, rd[q], HG_DTYPE_F64, reg, in[q]->dtype);
        }
    switch (kind) {
    case HG_DEV_MSE:
        hg_sb_put(&b, "    sub.f64 l, xd, td\n    mul.f64 l, l, l\n");
        break;
    case HG_DEV_BCE:
        // -(t lp + (1 - t) lq), each log clamped at -100 (f32 logs below f64, as torch).
        if (f64) {
            hg_sb_put(&b, "    log.f64 lp, xd\n    sub.f64 lq, 1, xd\n    log.f64 lq, lq\n");
        } else {
            hg_sb_put(&b, "    cvt.f32.f64 xf, xd\n    log.f32 lpf, xf\n    sub.f32 lqf, 1, xf\n"
                          "    log.f32 lqf, lqf\n    cvt.f64.f32 lp, lpf\n    cvt.f64.f32 lq, lqf\n");
        }
        hg_sb_put(&b, "    max.f64 lp, lp, -100\n    max.f64 lq, lq, -100\n    mul.f64 lp, td, lp\n"
                      "    sub.f64 l, 1, td\n    mul.f64 l, l, lq\n    add.f64 l, lp, l\n"
                      "    neg.f64 l, l\n");
        break;
    default:
        // (1 - t) x + lw sp, sp = log1p(exp(-|x|)) + max(-x, 0), lw = 1 + (pw - 1) t.
        if (f64) {
            hg_sb_put(&b, "    abs.f64 ud, xd\n    neg.f64 ud, ud\n    exp.f64 ud, ud\n");
            hg_sb_put(&b, "    add.f64 l, ud, 1\n    log.f64 lp, l\n    sub.f64 lq, l, 1\n"
                          "    cmp.eq.f64 q, lq, 0\n    mul.f64 lp, lp, ud\n    div.f64 lp, lp, lq\n"
                          "    sel.f64 sp, q, ud, lp\n");
        } else {
            hg_sb_put(&b, "    cvt.f32.f64 xf, xd\n    abs.f32 ef, xf\n    neg.f32 ef, ef\n"
                          "    exp.f32 ef, ef\n");
            emit_log1p(&b, "f32", "lpf", "ef");
            hg_sb_put(&b, "    cvt.f64.f32 sp, lpf\n");
        }
        hg_sb_put(&b, "    neg.f64 lq, xd\n    max.f64 lq, lq, 0\n    add.f64 sp, sp, lq\n");
        if (in[3]) hg_sb_put(&b, "    sub.f64 lw, pd, 1\n    fma.f64 lw, lw, td, 1\n");
        else hg_sb_put(&b, "    mov.f64 lw, 1\n");
        hg_sb_put(&b, "    sub.f64 l, 1, td\n    mul.f64 l, l, xd\n    mul.f64 lw, lw, sp\n"
                      "    add.f64 l, l, lw\n");
        break;
    }
    if (in[2]) hg_sb_put(&b, "    mul.f64 l, l, wd\n");
    if (write) {
        hg_dk_cvt(&b, "rv", rt, "l", HG_DTYPE_F64);
        hg_dk_cvt(&b, "ov", odt, "rv", rt);
        hg_sb_put(&b, "    st.global.%s o[oo], ov\n    endif\n", hg_dk_dt(odt));
    } else {
        hg_sb_put(&b, "    st.global.f64 o[oo], l\n    endif\n");
    }
    hg_arg args[16 + 6 * HG_MAX_DIMS];
    size_t k = 0;
    args[k++] = hg_arg_buffer(write ? out->buffer : tmp);
    for (int q = 0; q < 4; q++)
        if (in[q]) args[k++] = hg_arg_buffer(in[q]->buffer);
    args[k++] = hg_arg_u64((uint64_t)n);
    size_t first_slot = k;
    args[k++] = hg_arg_u64(0);
    args[k++] = hg_arg_i64(write ? out->offset : 0);
    for (int q = 0; q < 4; q++) args[k++] = hg_arg_i64(in[q] ? in[q]->offset : 0);
    k = hg_dk_arg_dims(args, k, &dims, 5);
    if (n > 0) s = launch_lanes(c, &b, (uint64_t)n, args, k, first_slot);
    hg_sb_free(&b);
    if (!s && !write) {
        if (n == 0) {   // an empty sum is 0, an empty mean NaN: through a zeroed buffer
            s = hg_buffer_create(exh, HG_DTYPE_F64, 1, &tmp);
            if (!s) s = reduce_finish(c, tmp, (hg_buffer){0}, 0, r == HG_REDUCTION_MEAN, rt, out);
        } else {
            s = reduce_finish(c, tmp, (hg_buffer){0}, n, r == HG_REDUCTION_MEAN, rt, out);
        }
    }
    if (tmp.handle) hg_buffer_destroy(tmp);
    return s;
}

hg_status hg_dev_first_bad_prob(hg_op_ctx* c, const hg_tensor* prob, int64_t* at, double* bad) {
    *at = -1;
    int64_t n = hg_dk_numel(prob);
    if (n == 0) return HG_OK;
    hg_executor exh = {c->ex->handle};
    hg_buffer flags, pos;
    hg_status s = hg_buffer_create_ex(exh, HG_DTYPE_BOOL, (size_t)n, HG_BUFFER_UNINITIALIZED, &flags);
    if (s) return hg_error_prefix(s, "%s (probability check on the device)", c->fn);
    if ((s = hg_buffer_create(exh, HG_DTYPE_I64, 1, &pos))) {
        hg_buffer_destroy(flags);
        return hg_error_prefix(s, "%s (probability check on the device)", c->fn);
    }
    // flags[i] = !(0 <= p <= 1) (NaN included), in C order; the first one is argmax(flags).
    hg_tensor ft;
    memset(&ft, 0, sizeof ft);
    ft.buffer = flags;
    ft.dtype = HG_DTYPE_BOOL;
    ft.ndim = prob->ndim;
    memcpy(ft.shape, prob->shape, sizeof ft.shape);
    hg_tensor_contiguous_strides(prob->ndim, prob->shape, ft.strides);
    s = hg_dev_flag_not_unit(c, &ft, prob);
    hg_tensor fl = ft, pt;
    fl.ndim = 1;
    fl.shape[0] = n;
    fl.strides[0] = 1;
    memset(&pt, 0, sizeof pt);
    pt.buffer = pos;
    pt.dtype = HG_DTYPE_I64;
    if (!s) s = hg_dev_reduce_into(c, HG_REDUCE_ARGMAX, &fl, 1u, 0.0, &pt);
    int64_t i = 0;
    unsigned char f = 0;
    if (!s) s = hg_buffer_read(pos, 0, &i, 1);
    if (!s) s = hg_buffer_read(flags, (size_t)i, &f, 1);
    if (!s && f) {   // element i in C order: its offset in prob's buffer
        int64_t off = prob->offset, q = i;
        for (int32_t d = prob->ndim - 1; d >= 0; d--) {
            off += (q % prob->shape[d]) * prob->strides[d];
            q /= prob->shape[d];
        }
        unsigned char v[8] = {0};
        s = hg_buffer_read(prob->buffer, (size_t)off, v, 1);
        if (!s) {
            *bad = hg_op_load_f64(prob->dtype, v);
            *at = i;
        }
    }
    hg_buffer_destroy(pos);
    hg_buffer_destroy(flags);
    return s;
}

hg_status hg_dev_cross_entropy(hg_op_ctx* c, const hg_tensor* x, const hg_tensor* t, int32_t cdim,
                               int probs, int64_t ignore_index, hg_dtype rt, hg_reduction r,
                               const hg_tensor* out) {
    // Sample dims: x's without the class dim; t's likewise for probabilities.
    int32_t ns = 0;
    int64_t sshape[HG_MAX_DIMS] = {0}, xs[HG_MAX_DIMS] = {0}, ts[HG_MAX_DIMS] = {0};
    for (int32_t d = 0, q = 0; d < x->ndim; d++)
        if (d != cdim) {
            sshape[ns] = x->shape[d];
            xs[ns] = x->strides[d];
            ts[ns] = probs ? t->strides[d] : t->strides[q];
            ns++;
            q++;
        }
    int64_t n = 1;
    for (int32_t d = 0; d < ns; d++) n *= sshape[d];
    int write = r == HG_REDUCTION_NONE, counted = !probs && r == HG_REDUCTION_MEAN;
    if (n == 0 && write) return HG_OK;
    hg_executor exh = {c->ex->handle};
    hg_buffer tmp = {0}, cnt = {0};
    hg_status s = HG_OK;
    int64_t tst[HG_MAX_DIMS];
    hg_tensor_contiguous_strides(ns, sshape, tst);
    size_t ntmp = (size_t)(n ? n : 1);
    if (!write) {
        s = hg_buffer_create(exh, HG_DTYPE_F64, ntmp, &tmp);
        if (!s && counted) s = hg_buffer_create(exh, HG_DTYPE_F64, ntmp, &cnt);
        if (s) {
            if (tmp.handle) hg_buffer_destroy(tmp);
            return hg_error_prefix(s, "%s (per-sample losses on the device)", c->fn);
        }
    }
    hg_dk_dims dims;
    memset(&dims, 0, sizeof dims);
    for (int32_t d = 0; d < ns; d++) {
        int64_t s3[3] = {write ? out->strides[d] : tst[d], xs[d], ts[d]};
        hg_dk_dims_push(&dims, 3, sshape[d], s3);
    }
    hg_dk_dims_merge(&dims, 3);
    hg_dtype odt = write ? out->dtype : HG_DTYPE_F64;
    hg_dtype ct = x->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    const char* cn = hg_dk_dt(ct);
    hg_sb b = {0};
    hg_sb_put(&b, ".kernel hg_dev_cross_entropy\n.param o: global %s\n.param x: global const %s\n"
                  ".param t: global const %s\n",
              hg_dk_dt(odt), hg_dk_dt(x->dtype), hg_dk_dt(t->dtype));
    if (counted) hg_sb_put(&b, ".param cn: global f64\n");
    hg_sb_put(&b, ".param n: u64\n.param first: u64\n.param ooff: i64\n.param xoff: i64\n"
                  ".param toff: i64\n.param C: u64\n.param xcs: i64\n.param tcs: i64\n"
                  ".param ign: i64\n");
    hg_dk_param_dims_text(&b, "d", dims.nd, 3);
    hg_sb_put(&b, ".reg u64 i, dq, dr, k\n.reg i64 oo, xo, to, dc, dt, xk, tk, ti\n"
                  ".reg bool in, q, nn, last\n.reg %s xv\n.reg %s tv\n.reg %s v, m, e\n"
                  ".reg f64 se, lse, md, l, fv, tf, one\n.reg %s rv\n.reg %s ov\n",
              hg_dk_dt(x->dtype), hg_dk_dt(t->dtype), cn, hg_dk_dt(rt), hg_dk_dt(odt));
    hg_sb_put(&b, "    cvt.u64.u32 i, %%gid.x\n    add.u64 i, i, first\n    cmp.lt.u64 in, i, n\n"
                  "    if in\n    mov.i64 oo, ooff\n    mov.i64 xo, xoff\n    mov.i64 to, toff\n");
    static const char* const offs[3] = {"oo", "xo", "to"};
    hg_dk_emit_offsets_text(&b, "d", dims.nd, 3, "i", offs);
    // m = max over classes, NaN sticking; se = sum of exp(x - m) in f64.
    hg_sb_put(&b, "    mov.%s m, -inf\n    mov.u64 k, 0\n    mov.i64 xk, xo\n    loop\n"
                  "    cmp.ge.u64 last, k, C\n    break last\n    ld.global.%s xv, x[xk]\n",
              cn, hg_dk_dt(x->dtype));
    hg_dk_cvt(&b, "v", ct, "xv", x->dtype);
    hg_sb_put(&b, "    cmp.gt.%s q, v, m\n    cmp.ne.%s nn, v, v\n    or.bool q, q, nn\n"
                  "    sel.%s m, q, v, m\n    add.i64 xk, xk, xcs\n    add.u64 k, k, 1\n    endloop\n"
                  "    mov.f64 se, 0\n    mov.u64 k, 0\n    mov.i64 xk, xo\n    loop\n"
                  "    cmp.ge.u64 last, k, C\n    break last\n    ld.global.%s xv, x[xk]\n",
              cn, cn, cn, hg_dk_dt(x->dtype));
    hg_dk_cvt(&b, "v", ct, "xv", x->dtype);
    hg_sb_put(&b, "    sub.%s e, v, m\n    exp.%s e, e\n", cn, cn);
    hg_dk_cvt(&b, "fv", HG_DTYPE_F64, "e", ct);
    hg_sb_put(&b, "    add.f64 se, se, fv\n    add.i64 xk, xk, xcs\n    add.u64 k, k, 1\n    endloop\n"
                  "    log.f64 lse, se\n");
    hg_dk_cvt(&b, "md", HG_DTYPE_F64, "m", ct);
    hg_sb_put(&b, "    mov.f64 one, 1\n");
    if (!probs) {
        // lse - x_target as (m - x_t) + log(se); an ignored sample has loss 0, not counted.
        hg_sb_put(&b, "    ld.global.%s tv, t[to]\n", hg_dk_dt(t->dtype));
        hg_dk_cvt(&b, "ti", HG_DTYPE_I64, "tv", t->dtype);
        hg_sb_put(&b, "    mov.f64 l, 0\n    cmp.eq.i64 q, ti, ign\n    sel.f64 one, q, 0, one\n"
                      "    not.bool q, q\n    if q\n    mul.i64 xk, ti, xcs\n    add.i64 xk, xk, xo\n"
                      "    ld.global.%s xv, x[xk]\n",
                  hg_dk_dt(x->dtype));
        hg_dk_cvt(&b, "v", ct, "xv", x->dtype);
        hg_dk_cvt(&b, "fv", HG_DTYPE_F64, "v", ct);
        hg_sb_put(&b, "    sub.f64 l, md, fv\n    add.f64 l, l, lse\n    endif\n");
    } else {
        // sum_c t_c ((m - x_c) + log(se)).
        hg_sb_put(&b, "    mov.f64 l, 0\n    mov.u64 k, 0\n    mov.i64 xk, xo\n    mov.i64 tk, to\n"
                      "    loop\n    cmp.ge.u64 last, k, C\n    break last\n"
                      "    ld.global.%s xv, x[xk]\n    ld.global.%s tv, t[tk]\n",
                  hg_dk_dt(x->dtype), hg_dk_dt(t->dtype));
        hg_dk_cvt(&b, "v", ct, "xv", x->dtype);
        hg_dk_cvt(&b, "fv", HG_DTYPE_F64, "v", ct);
        hg_dk_cvt(&b, "tf", HG_DTYPE_F64, "tv", t->dtype);
        hg_sb_put(&b, "    sub.f64 fv, md, fv\n    add.f64 fv, fv, lse\n    fma.f64 l, tf, fv, l\n"
                      "    add.i64 xk, xk, xcs\n    add.i64 tk, tk, tcs\n    add.u64 k, k, 1\n"
                      "    endloop\n");
    }
    if (write) {
        hg_dk_cvt(&b, "rv", rt, "l", HG_DTYPE_F64);
        hg_dk_cvt(&b, "ov", odt, "rv", rt);
        hg_sb_put(&b, "    st.global.%s o[oo], ov\n", hg_dk_dt(odt));
    } else {
        hg_sb_put(&b, "    st.global.f64 o[oo], l\n");
        if (counted) hg_sb_put(&b, "    st.global.f64 cn[oo], one\n");
    }
    hg_sb_put(&b, "    endif\n");
    hg_arg args[20 + 4 * HG_MAX_DIMS];
    size_t k = 0;
    args[k++] = hg_arg_buffer(write ? out->buffer : tmp);
    args[k++] = hg_arg_buffer(x->buffer);
    args[k++] = hg_arg_buffer(t->buffer);
    if (counted) args[k++] = hg_arg_buffer(cnt);
    args[k++] = hg_arg_u64((uint64_t)n);
    size_t first_slot = k;
    args[k++] = hg_arg_u64(0);
    args[k++] = hg_arg_i64(write ? out->offset : 0);
    args[k++] = hg_arg_i64(x->offset);
    args[k++] = hg_arg_i64(t->offset);
    args[k++] = hg_arg_u64((uint64_t)x->shape[cdim]);
    args[k++] = hg_arg_i64(x->strides[cdim]);
    args[k++] = hg_arg_i64(probs ? t->strides[cdim] : 0);
    args[k++] = hg_arg_i64(ignore_index);
    k = hg_dk_arg_dims(args, k, &dims, 3);
    if (n > 0) s = launch_lanes(c, &b, (uint64_t)n, args, k, first_slot);
    hg_sb_free(&b);
    if (!s && !write) s = reduce_finish(c, tmp, cnt, n, r == HG_REDUCTION_MEAN, rt, out);
    if (tmp.handle) hg_buffer_destroy(tmp);
    if (cnt.handle) hg_buffer_destroy(cnt);
    return s;
}
