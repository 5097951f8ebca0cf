// The lane-per-element device kernel frame (see dev_lane.h): its declarations, the code up to
// the lane's offsets, the store, and the launches over out's elements.
#include "ops/data/dev_lane.h"
#include <string.h>

void hg_dd_declare(hg_dd_kernel* k, const char* name, hg_dtype odt, int has_x, hg_dtype xdt) {
    memset(k, 0, sizeof *k);
    k->b = hg_kb_new(name);
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64;
    k->odt = odt;
    k->xdt = xdt;
    k->has_x = has_x;
    k->o = hg_kb_buffer(b, "o", odt, 0);
    if (has_x) k->x = hg_kb_buffer(b, "x", xdt, 1);
    k->n = hg_kb_scalar(b, "n", U);
    k->first = hg_kb_scalar(b, "first", U);
    k->ooff = hg_kb_scalar(b, "ooff", I);
    k->xoff = hg_kb_scalar(b, "xoff", I);
    k->i = hg_kb_reg(b, "i", U);
    hg_dk_scratch_declare(b, &k->sc);
    k->oo = hg_kb_reg(b, "oo", I);
    k->xo = hg_kb_reg(b, "xo", I);
    k->in = hg_kb_reg(b, "in", HG_DTYPE_BOOL);
    k->ov = hg_kb_reg(b, "ov", odt);
}

void hg_dd_begin(hg_dd_kernel* k, int32_t nd) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64;
    int nt = k->has_x ? 2 : 1;
    hg_dk_param_dims(b, "d", nd, nt, &k->dims);
    if (k->has_x) k->xv = hg_kb_reg(b, "xv", k->xdt);
    // i = gid.x + first; lanes past n do nothing.
    hg_kb_set_cvt(b, U, HG_DTYPE_U32, k->i, hg_sreg(HG_SREG_GID_X));
    hg_kb_set(b, HG_OP_ADD, U, k->i, hg_reg(k->i), k->first, hg_none());
    hg_kb_set_cmp(b, HG_CMP_LT, U, k->in, hg_reg(k->i), k->n);
    hg_kb_if(b, k->in);
    hg_kb_mov(b, I, k->oo, k->ooff);
    hg_kb_mov(b, I, k->xo, k->xoff);
    const uint32_t offs[2] = {k->oo, k->xo};
    hg_dk_emit_offsets(b, &k->dims, nd, nt, hg_reg(k->i), offs, &k->sc);
}

void hg_dd_setup(hg_dd_call* k, hg_op_ctx* c, const hg_tensor* out, const hg_tensor* x,
                 int merge) {
    memset(k, 0, sizeof *k);
    k->c = c;
    k->out = out;
    k->x = x;
    k->n = (uint64_t)hg_view_numel(out);
    for (int32_t d = 0; d < out->ndim; d++) {
        int64_t st[2] = {out->strides[d], x ? x->strides[d] : 0};
        hg_dk_dims_push(&k->dims, x ? 2 : 1, out->shape[d], st);
    }
    // Merging keeps C order, so element i is still the i-th of out (random relies on it).
    if (merge) hg_dk_dims_merge(&k->dims, x ? 2 : 1);
}

// Launches prog over out's elements, at most HG_DD_LAUNCH_MAX lanes at a time.
static hg_status launch(const hg_dd_call* k, const hg_prog* prog, const hg_arg* extra,
                        size_t nextra) {
    hg_arg args[16 + 3 * HG_MAX_DIMS];
    hg_status s = HG_OK;
    for (uint64_t first = 0; first < k->n && !s; first += HG_DD_LAUNCH_MAX) {
        uint64_t cnt = k->n - first < HG_DD_LAUNCH_MAX ? k->n - first : HG_DD_LAUNCH_MAX;
        size_t a = 0;
        args[a++] = hg_arg_buffer(k->out->buffer);
        if (k->x) args[a++] = hg_arg_buffer(k->x->buffer);
        args[a++] = hg_arg_u64(k->n);
        args[a++] = hg_arg_u64(first);
        args[a++] = hg_arg_i64(k->out->offset);
        args[a++] = hg_arg_i64(k->x ? k->x->offset : 0);
        for (size_t e = 0; e < nextra; e++) args[a++] = extra[e];
        a = hg_dk_arg_dims(args, a, &k->dims, k->x ? 2 : 1);
        hg_launch_config cfg = hg_launch_1d(cnt, HG_DD_BLOCK);
        s = hg_dk_launch(k->c->ex, k->c->fn, prog, &cfg, args, a);
    }
    return s;
}

hg_status hg_dd_run(const hg_dd_call* call, hg_dd_kernel* k, const hg_arg* extra,
                    size_t nextra) {
    hg_kb_st(&k->b, HG_SPACE_GLOBAL, k->odt, k->o, hg_reg(k->oo), hg_reg(k->ov));
    hg_kb_endif(&k->b);
    hg_prog* prog = NULL;
    hg_status s = hg_dk_finish(&k->b, call->c->fn, &prog);
    if (s) return s;
    s = launch(call, prog, extra, nextra);
    hg_prog_free(prog);
    return s;
}
