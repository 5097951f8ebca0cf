// The public entry of scaled_dot_product_attention (ops.h), a composite: the checks, then
// hg_cop_dispatch (the fused host kernel of ops/attention where it applies, else the
// decomposition, decomp_attention.c).
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "composite/composite.h"
#include "composite/op_outputs.h"
#include "ops/attention/attention.h"

int hg_cop_attention_host_ok(const hg_cop_call* k) {
    return hg_attention_host_ok(k->c, k->in[0], k->in[1], k->in[2], k->out[0]);
}

hg_status hg_cop_attention_host(const hg_cop_call* k) {
    return hg_attention_host(k->c, k->in[0], k->in[1], k->in[2], k->in[3], (int)(k->flags & 1),
                             k->eps, k->out[0], k->out[1]);
}

int hg_cop_attention_bw_host_ok(const hg_cop_call* k) {
    const hg_tensor* ts[8] = {k->in[0], k->in[1], k->in[2], k->in[3], k->in[4],
                              k->out[0], k->out[1], k->out[2]};
    return hg_attention_bw_host_ok(k->c, ts, 8);
}

hg_status hg_cop_attention_bw_host(const hg_cop_call* k) {
    return hg_attention_bw_host(k->c, k->in[0], k->in[1], k->in[2], k->in[3], k->in[4], k->in[5],
                                k->in[6], (int)(k->flags & 1), k->eps, k->out[0], k->out[1],
                                k->out[2]);
}

static hg_status shape_error(hg_op_ctx* c, const char* what, const hg_tensor* a, const char* an,
                             const hg_tensor* b, const char* bn) {
    char sa[HG_DIMS_TEXT], sb[HG_DIMS_TEXT];
    return hg_error(HG_ERR_SIZE_MISMATCH, "%s: %s: %s has shape %s and %s %s", c->fn, what, an,
                    hg_op_dims(sa, a->ndim, a->shape), bn, hg_op_dims(sb, b->ndim, b->shape));
}

// q, k, v: one float dtype, one rank >= 2, E and S shared, leading dims equal but for the
// head dim, where q's count is a multiple of k's (k's and v's equal).
static hg_status check_qkv(hg_op_ctx* c, const hg_tensor* q, const hg_tensor* k,
                           const hg_tensor* v) {
    hg_status s;
    if ((s = hg_op_input(c, q, "q", NULL, NULL)) || (s = hg_op_input(c, k, "k", NULL, NULL)) ||
        (s = hg_op_input(c, v, "v", NULL, NULL)))
        return s;
    if (!hg_dtype_is_float((int)q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: q, k and v have dtypes %s, %s and %s; expected "
                        "one float dtype (f16, bf16, f32, f64) for all three", c->fn,
                        hg_dtype_name(q->dtype), hg_dtype_name(k->dtype), hg_dtype_name(v->dtype));
    int32_t nd = q->ndim;
    if (nd < 2 || k->ndim != nd || v->ndim != nd)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: q, k and v have %d, %d and %d dims; expected "
                        "one rank >= 2 ((..., L, E), (..., S, E), (..., S, Ev))", c->fn,
                        (int)q->ndim, (int)k->ndim, (int)v->ndim);
    if (k->shape[nd - 1] != q->shape[nd - 1])
        return shape_error(c, "the last dims (E) differ", q, "q", k, "k");
    if (v->shape[nd - 2] != k->shape[nd - 2])
        return shape_error(c, "the key counts (dim -2) differ", k, "k", v, "v");
    for (int32_t d = 0; d < nd - 2; d++) {
        if (k->shape[d] != v->shape[d])
            return shape_error(c, "the leading dims differ", k, "k", v, "v");
        if (d == nd - 3 && k->shape[d] > 0 && q->shape[d] % k->shape[d] == 0) continue;
        if (q->shape[d] != k->shape[d])
            return hg_error(HG_ERR_SIZE_MISMATCH, "%s: q has shape %s and k %s: the leading dims "
                            "must be equal, except the head dim (-3), where q's count must be a "
                            "multiple of k's", c->fn, hg_op_dims((char[HG_DIMS_TEXT]){0}, q->ndim,
                            q->shape), hg_op_dims((char[HG_DIMS_TEXT]){0}, k->ndim, k->shape));
    }
    if (nd >= 3 && q->shape[nd - 3] != k->shape[nd - 3] && nd >= HG_MAX_DIMS)
        return hg_error(HG_ERR_UNSUPPORTED, "%s: grouped heads (q %lld, k %lld) need fewer than %d "
                        "dims", c->fn, (long long)q->shape[nd - 3], (long long)k->shape[nd - 3],
                        HG_MAX_DIMS);
    return HG_OK;
}

// The mask: bool or q's dtype, broadcastable to the scores' shape (..., Hq, L, S).
static hg_status check_mask(hg_op_ctx* c, const hg_tensor* m, const hg_tensor* q,
                            const int64_t* sshape) {
    hg_status s = hg_op_input(c, m, "mask", NULL, NULL);
    if (s) return s;
    if (m->dtype != HG_DTYPE_BOOL && m->dtype != q->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: mask has dtype %s; expected bool (true: "
                        "attend) or q's dtype %s (added to the scores)", c->fn,
                        hg_dtype_name(m->dtype), hg_dtype_name(q->dtype));
    int ok = m->ndim <= q->ndim;
    for (int32_t d = 0; ok && d < m->ndim; d++) {
        int64_t want = sshape[q->ndim - m->ndim + d];
        ok = m->shape[d] == 1 || m->shape[d] == want;
    }
    if (!ok) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: mask has shape %s, not broadcastable to the "
                        "scores' shape %s", c->fn, hg_op_dims(a, m->ndim, m->shape),
                        hg_op_dims(b, q->ndim, sshape));
    }
    return HG_OK;
}

// lse: an existing tensor of q's leading dims and L, f32 (f64 for f64 q), apart from every
// other tensor of the call.
static hg_status check_lse(hg_op_ctx* c, const hg_tensor* lse, const hg_tensor* q,
                           const hg_tensor* const* others, int nothers) {
    hg_status s = hg_op_existing_output(c, lse, "lse");
    if (s) return s;
    hg_dtype want = q->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    if (lse->dtype != want)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: lse has dtype %s; expected %s for q of %s",
                        c->fn, hg_dtype_name(lse->dtype), hg_dtype_name(want),
                        hg_dtype_name(q->dtype));
    int same = lse->ndim == q->ndim - 1;
    for (int32_t d = 0; same && d < lse->ndim; d++) same = lse->shape[d] == q->shape[d];
    if (!same) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: lse has shape %s; expected q's without its "
                        "last dim, %s", c->fn, hg_op_dims(a, lse->ndim, lse->shape),
                        hg_op_dims(b, q->ndim - 1, q->shape));
    }
    for (int i = 0; i < nothers; i++)
        if (others[i] && hg_op_overlaps(lse, others[i]))
            return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: lse overlaps another argument", c->fn);
    return HG_OK;
}

// scale NaN: 1 / sqrt(E); an infinite one is refused.
static hg_status resolve_scale(hg_op_ctx* c, const hg_tensor* q, double* scale) {
    if (isnan(*scale)) *scale = 1.0 / sqrt((double)q->shape[q->ndim - 1]);
    else if (isinf(*scale))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: scale %g must be finite (NaN: 1 / sqrt(E))",
                        c->fn, *scale);
    return HG_OK;
}

// The scores' shape (..., Hq, L, S) and the output's (..., Hq, L, Ev).
static void attention_shapes(const hg_tensor* q, const hg_tensor* k, const hg_tensor* v,
                             int64_t* sshape, int64_t* oshape) {
    int32_t nd = q->ndim;
    memcpy(sshape, q->shape, sizeof(int64_t) * (size_t)nd);
    memcpy(oshape, q->shape, sizeof(int64_t) * (size_t)nd);
    sshape[nd - 1] = k->shape[nd - 2];
    oshape[nd - 1] = v->shape[nd - 1];
}

hg_status hg_scaled_dot_product_attention(const hg_tensor* q, const hg_tensor* k,
                                          const hg_tensor* v, const hg_tensor* mask,
                                          int is_causal, double scale, hg_tensor* out,
                                          hg_tensor* lse) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_scaled_dot_product_attention");
    static const char* const names[4] = {"q", "k", "v", "out"};
    const void* ptrs[4] = {q, k, v, out};
    for (int i = 0; i < 4; i++)
        if (!ptrs[i]) return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", c.fn,
                                      names[i]);
    hg_status s = check_qkv(&c, q, k, v);
    if (s) return s;
    int32_t nd = q->ndim;
    int64_t sshape[HG_MAX_DIMS], oshape[HG_MAX_DIMS];
    attention_shapes(q, k, v, sshape, oshape);
    if (mask && (s = check_mask(&c, mask, q, sshape))) return s;
    if (mask && is_causal)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: is_causal with a mask; give one of them "
                        "(torch refuses both)", c.fn);
    if ((s = resolve_scale(&c, q, &scale))) return s;
    if ((s = hg_op_output(&c, out, q->dtype, nd, oshape, 0))) return s;
    const hg_tensor* others[5] = {q, k, v, mask, out};
    if (lse && (s = check_lse(&c, lse, q, others, 5))) return hg_op_finish(&c, out, s);
    // numpy's overlap rule: inputs the output overlaps are read from copies.
    if ((s = hg_op_read_first(&c, out, &q, 0)) || (s = hg_op_read_first(&c, out, &k, 0)) ||
        (s = hg_op_read_first(&c, out, &v, 0)) ||
        (mask && (s = hg_op_read_first(&c, out, &mask, 0))))
        return hg_op_finish(&c, out, s);
    if (k->shape[nd - 2] == 0) {   // no keys: every query attends nothing (zeros, as torch)
        s = hg_fill(out, hg_scalar_f(0.0));
        if (!s && lse) s = hg_fill(lse, hg_scalar_f(0.0));
        return hg_op_finish(&c, out, s);
    }
    hg_cop_call call = {.op = HG_COP_ATTENTION, .c = &c, .in = {q, k, v, mask},
                        .out = {out, lse}, .eps = scale, .flags = is_causal ? 1u : 0u};
    return hg_op_finish(&c, out, hg_cop_dispatch(&call));
}

// grad_out and out: q's dtype and the output's shape (..., Hq, L, Ev).
static hg_status check_like_out(hg_op_ctx* c, const hg_tensor* t, const char* name,
                                const hg_tensor* q, const int64_t* oshape) {
    hg_status s = hg_op_input(c, t, name, NULL, NULL);
    if (s) return s;
    if (t->dtype != q->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: %s has dtype %s; expected q's, %s", c->fn,
                        name, hg_dtype_name(t->dtype), hg_dtype_name(q->dtype));
    int same = t->ndim == q->ndim;
    for (int32_t d = 0; same && d < t->ndim; d++) same = t->shape[d] == oshape[d];
    if (!same) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "%s: %s has shape %s; expected the attention's "
                        "output shape %s", c->fn, name, hg_op_dims(a, t->ndim, t->shape),
                        hg_op_dims(b, q->ndim, oshape));
    }
    return HG_OK;
}

// lse as an input: f32 (f64 for f64 q), q's shape without its last dim.
static hg_status check_lse_in(hg_op_ctx* c, const hg_tensor* lse, const hg_tensor* q) {
    hg_status s = hg_op_input(c, lse, "lse", NULL, NULL);
    if (s) return s;
    hg_dtype want = q->dtype == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    int same = lse->dtype == want && lse->ndim == q->ndim - 1;
    for (int32_t d = 0; same && d < lse->ndim; d++) same = lse->shape[d] == q->shape[d];
    if (!same) {
        char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
        return hg_error(lse->dtype != want ? HG_ERR_DTYPE_MISMATCH : HG_ERR_SIZE_MISMATCH,
                        "%s: lse is %s %s; expected %s %s (q's shape without its last dim)",
                        c->fn, hg_dtype_name(lse->dtype), hg_op_dims(a, lse->ndim, lse->shape),
                        hg_dtype_name(want), hg_op_dims(b, q->ndim - 1, q->shape));
    }
    return HG_OK;
}

hg_status hg_scaled_dot_product_attention_backward(
    const hg_tensor* grad_out, const hg_tensor* q, const hg_tensor* k, const hg_tensor* v,
    const hg_tensor* out, const hg_tensor* lse, const hg_tensor* mask, int is_causal,
    double scale, hg_tensor* grad_q, hg_tensor* grad_k, hg_tensor* grad_v) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_scaled_dot_product_attention_backward");
    static const char* const names[9] = {"grad_out", "q", "k", "v", "out", "lse",
                                         "grad_q", "grad_k", "grad_v"};
    const void* ptrs[9] = {grad_out, q, k, v, out, lse, grad_q, grad_k, grad_v};
    for (int i = 0; i < 9; i++)
        if (!ptrs[i]) return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", c.fn,
                                      names[i]);
    hg_status s = check_qkv(&c, q, k, v);
    if (s) return s;
    int64_t sshape[HG_MAX_DIMS], oshape[HG_MAX_DIMS];
    attention_shapes(q, k, v, sshape, oshape);
    if ((s = check_like_out(&c, grad_out, "grad_out", q, oshape)) ||
        (s = check_like_out(&c, out, "out", q, oshape)) || (s = check_lse_in(&c, lse, q)))
        return s;
    if (mask && (s = check_mask(&c, mask, q, sshape))) return s;
    if (mask && is_causal)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: is_causal with a mask; give one of them "
                        "(torch refuses both)", c.fn);
    if ((s = resolve_scale(&c, q, &scale))) return s;
    hg_tensor* outs[3] = {grad_q, grad_k, grad_v};
    int32_t nds[3] = {q->ndim, k->ndim, v->ndim};
    const int64_t* shapes[3] = {q->shape, k->shape, v->shape};
    hg_dtype dts[3] = {q->dtype, q->dtype, q->dtype};
    const hg_tensor* ins[7] = {q, k, v, grad_out, out, lse, mask};
    int alloc[3];
    if ((s = hg_cop_outputs_resolve(&c, outs, nds, shapes, dts, 3, ins, 7, 0, alloc))) return s;
    int32_t nd = q->ndim;
    if (k->shape[nd - 2] == 0 || q->shape[nd - 2] == 0) {   // no key or no query: zeros
        for (int o = 0; o < 3 && !s; o++) s = hg_fill(outs[o], hg_scalar_f(0.0));
        if (s) hg_cop_outputs_release(outs, alloc, 3);
        return s;
    }
    hg_cop_call call = {.op = HG_COP_ATTENTION_BW, .c = &c,
                        .in = {ins[0], ins[1], ins[2], ins[3], ins[4], ins[5], ins[6]},
                        .out = {grad_q, grad_k, grad_v}, .eps = scale,
                        .flags = is_causal ? 1u : 0u};
    if ((s = hg_cop_dispatch(&call))) hg_cop_outputs_release(outs, alloc, 3);
    return s;
}
