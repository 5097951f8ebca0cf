// Reductions (hg_reduce, hg_var, hg_std and the graph compiler's reduction nodes) on devices,
// as block-cooperative Atlas ISA kernels.
//
// Layout: x's kept dims (with out's strides) and reduced dims are each merged where
// contiguous; output row m (the linear index over the kept dims) reduces elements 0..N-1 (the
// linear index over the reduced dims, C order, which argmin/argmax report). A block of T x RB
// lanes (T * RB = 256, T the power of two covering N up to 256) handles RB rows; the T lanes of
// a row stride through it (lane t reads t, t+T, ...: neighbouring lanes read neighbouring
// elements when the reduced dim is the contiguous one), then combine through a shared-memory
// tree. When there are too few rows to fill the device, each row is split into G chunks along
// grid y; the blocks store partial accumulators and a second kernel (one lane per row)
// combines the G partials in order and finishes.
//
// Accumulation is in double for float inputs and for mean/var/std/logsumexp of integers (at
// least as accurate as the CPU's f32 blocks with f64 partials), in 64-bit integers with
// wrap-around for integer sums and products, and in i64/u64 for integer min/max (exact).
// NaN rules, argmin/argmax ties (first index) and the finishing steps follow reduce_core.c;
// var/std and logsumexp take two passes (mean or max first, as the CPU does).
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "ops/common/dev_ops.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_text.h"
#include "ops/reduce/reduce.h"

#define RD_LANES 256u               // lanes per block
#define RD_TARGET_BLOCKS 512u       // split rows until about this many blocks run
#define RD_MAX_CHUNKS 1024u
#define RD_MIN_CHUNK_PER_LANE 16u   // elements per lane and chunk at least
#define RD_MAX_ROWBLOCKS (UINT64_C(1) << 22)

typedef enum rd_kop { K_SUM, K_PROD, K_MIN, K_MAX, K_ARGMIN, K_ARGMAX, K_ANY, K_ALL, K_SQDEV,
                      K_SUMEXP } rd_kop;
typedef enum rd_fin { F_PLAIN, F_MEAN, F_VAR, F_STD, F_LSE, F_ARG, F_FLAG } rd_fin;

typedef struct rd_spec {
    const char* fn;
    hg_executor_obj* ex;
    rd_kop k;
    rd_fin fin;
    hg_dtype xdt, adt, rdt, odt;   // input, accumulator (f64/i64/u64), result, output
    hg_buffer xbuf, obuf, cbuf;    // cbuf: centers (f64, one per row) or 0
    int out_linear;                // out is indexed by the row (centers) instead of its strides
    int64_t xoff, ooff;
    double dv;                     // divisor (mean: N, var/std: max(N - ddof, 0))
    hg_dk_dims kd, rd;             // kept dims (x, out strides) and reduced dims (x strides)
    uint64_t M, N;
} rd_spec;

static int is_arg(rd_kop k) { return k == K_ARGMIN || k == K_ARGMAX; }
static const char* init_value(const rd_spec* s) {
    int f = s->adt == HG_DTYPE_F64, sg = s->adt == HG_DTYPE_I64;
    switch (s->k) {
    case K_PROD: return "1";
    case K_ALL: return "1";
    case K_MIN: case K_ARGMIN: return f ? "inf" : sg ? "9223372036854775807" : "0xffffffffffffffff";
    case K_MAX: case K_ARGMAX: return f ? "-inf" : sg ? "-9223372036854775808" : "0";
    default: return "0";
    }
}

// p_take := "value v takes the place of cur" (NaN first, then strict order) for min/max kinds.
static void emit_takes(hg_sb* b, const rd_spec* s, const char* res, const char* v, const char* cur) {
    const char* a = hg_dk_dt(s->adt);
    const char* cc = s->k == K_MIN || s->k == K_ARGMIN ? "lt" : "gt";
    if (s->adt != HG_DTYPE_F64) {
        hg_sb_put(b, "    cmp.%s.%s %s, %s, %s\n", cc, a, res, v, cur);
        return;
    }
    hg_sb_put(b, "    cmp.%s.f64 %s, %s, %s\n    cmp.ne.f64 nb, %s, %s\n    or.bool %s, %s, nb\n"
                 "    cmp.ne.f64 nb, %s, %s\n    not.bool nb, nb\n    and.bool %s, %s, nb\n",
              cc, res, v, cur, v, v, res, res, cur, cur, res, res);
}

// (acc, idx) := combine((acc, idx), (w, bidx)), where (w, bidx) may cover earlier indices
// (tree steps): ties go to the smaller index.
static void emit_combine(hg_sb* b, const rd_spec* s) {
    const char* a = hg_dk_dt(s->adt);
    switch (s->k) {
    case K_SUM: case K_SQDEV: case K_SUMEXP: hg_sb_put(b, "    add.%s acc, acc, w\n", a); return;
    case K_PROD: hg_sb_put(b, "    mul.%s acc, acc, w\n", a); return;
    case K_ANY: hg_sb_put(b, "    or.u64 acc, acc, w\n"); return;
    case K_ALL: hg_sb_put(b, "    and.u64 acc, acc, w\n"); return;
    case K_MIN: case K_MAX:
        emit_takes(b, s, "t1", "w", "acc");
        hg_sb_put(b, "    sel.%s acc, t1, w, acc\n", a);
        return;
    default:   // argmin / argmax
        emit_takes(b, s, "t1", "w", "acc");
        emit_takes(b, s, "t2", "acc", "w");
        hg_sb_put(b, "    not.bool t2, t2\n    cmp.lt.i64 t3, bidx, idx\n    and.bool t3, t3, t2\n"
                     "    or.bool t1, t1, t3\n    cmp.lt.i64 t3, idx, 0\n    or.bool t1, t1, t3\n"
                     "    cmp.ge.i64 t3, bidx, 0\n    and.bool t1, t1, t3\n"
                     "    sel.%s acc, t1, w, acc\n    sel.i64 idx, t1, bidx, idx\n", a);
        return;
    }
}

// w := element xv in the accumulator's domain (bidx := its index j).
static void emit_element(hg_sb* b, const rd_spec* s) {
    switch (s->k) {
    case K_SQDEV: case K_SUMEXP:
        hg_dk_cvt(b, "fv", HG_DTYPE_F64, "xv", s->xdt);
        hg_sb_put(b, "    sub.f64 fv, fv, cv\n");
        if (s->k == K_SQDEV) hg_sb_put(b, "    mul.f64 w, fv, fv\n");
        else hg_sb_put(b, "    exp.f64 w, fv\n");
        return;
    case K_ANY: case K_ALL:
        hg_sb_put(b, "    cvt.bool.%s nb, xv\n    cvt.u64.bool w, nb\n", hg_dk_dt(s->xdt));
        return;
    default:
        hg_dk_cvt(b, "w", s->adt, "xv", s->xdt);
        if (is_arg(s->k)) hg_sb_put(b, "    cvt.i64.u64 bidx, j\n");
        return;
    }
}

// ov := the finished result of (acc, idx) in the output dtype (the result dtype first).
static void emit_finish(hg_sb* b, const rd_spec* s) {
    switch (s->fin) {
    case F_MEAN: case F_VAR: case F_STD:
        hg_sb_put(b, "    div.f64 fv, acc, dv\n");
        if (s->fin == F_STD) hg_sb_put(b, "    sqrt.f64 fv, fv\n");
        hg_dk_cvt(b, "rv", s->rdt, "fv", HG_DTYPE_F64);
        break;
    case F_LSE:
        hg_sb_put(b, "    abs.f64 fv, cv\n    cmp.lt.f64 nb, fv, inf\n    log.f64 fv, acc\n"
                     "    add.f64 fv, fv, cv\n    sel.f64 fv, nb, fv, cv\n");
        hg_dk_cvt(b, "rv", s->rdt, "fv", HG_DTYPE_F64);
        break;
    case F_ARG: hg_dk_cvt(b, "rv", s->rdt, "idx", HG_DTYPE_I64); break;
    case F_FLAG: hg_dk_cvt(b, "rv", s->rdt, "acc", HG_DTYPE_U64); break;
    default: hg_dk_cvt(b, "rv", s->rdt, "acc", s->adt); break;
    }
    hg_dk_cvt(b, "ov", s->odt, "rv", s->rdt);
}

static void emit_regs(hg_sb* b, const rd_spec* s) {
    hg_sb_put(b, ".reg u64 row, t, tn, blk, g, j, jend, lin, lin2, sw, pos, gg, dq, dr, kk\n"
                 ".reg i64 xb, ob, xo, dc, dt, idx, bidx\n.reg %s acc, w\n.reg %s xv\n"
                 ".reg f64 cv, fv\n.reg bool vr, last, done, tp, t1, t2, t3, nb\n"
                 ".reg %s rv\n.reg %s ov\n",
              hg_dk_dt(s->adt), hg_dk_dt(s->xdt), hg_dk_dt(s->rdt), hg_dk_dt(s->odt));
}

// The store of ov for row `row` (offset ob, or the row itself for centers).
static void emit_store(hg_sb* b, const rd_spec* s) {
    if (s->out_linear) hg_sb_put(b, "    st.global.%s o[row], ov\n", hg_dk_dt(s->odt));
    else hg_sb_put(b, "    st.global.%s o[ob], ov\n", hg_dk_dt(s->odt));
}

static void common_params(hg_sb* b, const rd_spec* s) {
    if (s->cbuf.handle) hg_sb_put(b, ".param cen: global const f64\n");
    hg_sb_put(b, ".param row0: u64\n.param M: u64\n.param N: u64\n.param C: u64\n"
                 ".param xoff: i64\n.param ooff: i64\n.param dv: f64\n");
    hg_dk_param_dims_text(b, "k", s->kd.nd, 2);
}

static const char* const k_offs[2] = {"xb", "ob"};

// The block kernel: final (partial == 0) stores results, otherwise partial accumulators.
static void block_kernel(hg_sb* b, const rd_spec* s, int partial) {
    const char* a = hg_dk_dt(s->adt);
    hg_sb_put(b, ".kernel hg_dev_reduce\n.param x: global const %s\n", hg_dk_dt(s->xdt));
    if (partial) {
        hg_sb_put(b, ".param pv: global %s\n", a);
        if (is_arg(s->k)) hg_sb_put(b, ".param pi: global i64\n");
    } else {
        hg_sb_put(b, ".param o: global %s\n", hg_dk_dt(s->odt));
    }
    common_params(b, s);
    hg_dk_param_dims_text(b, "r", s->rd.nd, 1);
    hg_sb_put(b, ".shared sv: %s[%u]\n", a, RD_LANES);
    if (is_arg(s->k)) hg_sb_put(b, ".shared si: i64[%u]\n", RD_LANES);
    emit_regs(b, s);
    hg_sb_put(b, "    cvt.u64.u32 t, %%tid.x\n    cvt.u64.u32 tn, %%ntid.x\n"
                 "    cvt.u64.u32 blk, %%ctaid.x\n    cvt.u64.u32 row, %%ntid.y\n"
                 "    mul.u64 blk, blk, row\n    cvt.u64.u32 row, %%tid.y\n"
                 "    add.u64 row, row, blk\n    add.u64 row, row, row0\n"
                 "    cvt.u64.u32 g, %%ctaid.y\n    mov.%s acc, %s\n    mov.i64 idx, -1\n"
                 "    cmp.lt.u64 vr, row, M\n    if vr\n    mov.i64 xb, xoff\n    mov.i64 ob, ooff\n",
              a, init_value(s));
    hg_dk_emit_offsets_text(b, "k", s->kd.nd, 2, "row", k_offs);
    if (s->cbuf.handle) hg_sb_put(b, "    ld.global.f64 cv, cen[row]\n");
    hg_sb_put(b, "    mul.u64 j, g, C\n    add.u64 jend, j, C\n    min.u64 jend, jend, N\n"
                 "    add.u64 j, j, t\n    loop\n    cmp.ge.u64 last, j, jend\n    break last\n"
                 "    mov.i64 xo, xb\n");
    const char* xo = "xo";
    hg_dk_emit_offsets_text(b, "r", s->rd.nd, 1, "j", &xo);
    hg_sb_put(b, "    ld.global.%s xv, x[xo]\n", hg_dk_dt(s->xdt));
    emit_element(b, s);
    emit_combine(b, s);
    hg_sb_put(b, "    add.u64 j, j, tn\n    endloop\n    endif\n"
                 "    cvt.u64.u32 lin, %%tid.y\n    mul.u64 lin, lin, tn\n    add.u64 lin, lin, t\n"
                 "    st.shared.%s sv[lin], acc\n", a);
    if (is_arg(s->k)) hg_sb_put(b, "    st.shared.i64 si[lin], idx\n");
    hg_sb_put(b, "    bar\n    shr.u64 sw, tn, 1\n    loop\n    cmp.eq.u64 done, sw, 0\n    break done\n"
                 "    cmp.lt.u64 tp, t, sw\n    if tp\n    add.u64 lin2, lin, sw\n"
                 "    ld.shared.%s w, sv[lin2]\n", a);
    if (is_arg(s->k)) hg_sb_put(b, "    ld.shared.i64 bidx, si[lin2]\n");
    emit_combine(b, s);
    hg_sb_put(b, "    st.shared.%s sv[lin], acc\n", a);
    if (is_arg(s->k)) hg_sb_put(b, "    st.shared.i64 si[lin], idx\n");
    hg_sb_put(b, "    endif\n    bar\n    shr.u64 sw, sw, 1\n    endloop\n"
                 "    cmp.eq.u64 tp, t, 0\n    and.bool tp, tp, vr\n    if tp\n");
    if (partial) {
        hg_sb_put(b, "    cvt.u64.u32 gg, %%nctaid.y\n    sub.u64 pos, row, row0\n"
                     "    mul.u64 pos, pos, gg\n    add.u64 pos, pos, g\n"
                     "    st.global.%s pv[pos], acc\n", a);
        if (is_arg(s->k)) hg_sb_put(b, "    st.global.i64 pi[pos], idx\n");
    } else {
        emit_finish(b, s);
        emit_store(b, s);
    }
    hg_sb_put(b, "    endif\n");
}

// One lane per row: combines the G partials of the row in order, finishes and stores.
static void finish_kernel(hg_sb* b, const rd_spec* s) {
    const char* a = hg_dk_dt(s->adt);
    hg_sb_put(b, ".kernel hg_dev_reduce_finish\n.param pv: global const %s\n", a);
    if (is_arg(s->k)) hg_sb_put(b, ".param pi: global const i64\n");
    hg_sb_put(b, ".param o: global %s\n.param G: u64\n", hg_dk_dt(s->odt));
    common_params(b, s);
    emit_regs(b, s);
    hg_sb_put(b, "    cvt.u64.u32 lin, %%gid.x\n    add.u64 row, lin, row0\n"
                 "    cmp.lt.u64 vr, row, M\n    if vr\n    mov.%s acc, %s\n    mov.i64 idx, -1\n"
                 "    mul.u64 pos, lin, G\n    mov.u64 kk, 0\n    loop\n"
                 "    cmp.ge.u64 last, kk, G\n    break last\n    ld.global.%s w, pv[pos]\n",
              a, init_value(s), a);
    if (is_arg(s->k)) hg_sb_put(b, "    ld.global.i64 bidx, pi[pos]\n");
    emit_combine(b, s);
    hg_sb_put(b, "    add.u64 pos, pos, 1\n    add.u64 kk, kk, 1\n    endloop\n"
                 "    mov.i64 xb, xoff\n    mov.i64 ob, ooff\n");
    hg_dk_emit_offsets_text(b, "k", s->kd.nd, 2, "row", k_offs);
    if (s->cbuf.handle) hg_sb_put(b, "    ld.global.f64 cv, cen[row]\n");
    emit_finish(b, s);
    emit_store(b, s);
    hg_sb_put(b, "    endif\n");
}

// mlim: the end of this launch's rows.
static size_t common_args(hg_arg* args, size_t k, const rd_spec* s, uint64_t row0, uint64_t mlim,
                          uint64_t C) {
    if (s->cbuf.handle) args[k++] = hg_arg_buffer(s->cbuf);
    args[k++] = hg_arg_u64(row0);
    args[k++] = hg_arg_u64(mlim);
    args[k++] = hg_arg_u64(s->N);
    args[k++] = hg_arg_u64(C);
    args[k++] = hg_arg_i64(s->xoff);
    args[k++] = hg_arg_i64(s->ooff);
    args[k++] = hg_arg_f64(s->dv);
    return hg_dk_arg_dims(args, k, &s->kd, 2);
}

static hg_status run_spec(const rd_spec* s) {
    if (s->M == 0) return HG_OK;
    uint32_t T = 1;
    while ((uint64_t)T < s->N && T < RD_LANES) T <<= 1;
    uint32_t RB = RD_LANES / T;
    uint64_t rowblocks = (s->M + RB - 1) / RB, G = 1;
    if (rowblocks < RD_TARGET_BLOCKS && s->N > (uint64_t)RD_MIN_CHUNK_PER_LANE * T) {
        G = (RD_TARGET_BLOCKS + rowblocks - 1) / rowblocks;
        uint64_t most = s->N / ((uint64_t)RD_MIN_CHUNK_PER_LANE * T);
        if (G > most) G = most;
        if (G > RD_MAX_CHUNKS) G = RD_MAX_CHUNKS;
    }
    uint64_t C = G > 1 ? (s->N + G - 1) / G : s->N;
    if (G > 1) G = (s->N + C - 1) / C;
    hg_sb kb = {0}, fb = {0};
    block_kernel(&kb, s, G > 1);
    if (G > 1) finish_kernel(&fb, s);
    hg_status st = HG_OK;
    hg_buffer pv = {0}, pi = {0};
    hg_executor exh = {s->ex->handle};
    uint64_t rows_per = RD_MAX_ROWBLOCKS * RB;
    if (G > 1) {
        uint64_t np = (s->M < rows_per ? s->M : rows_per) * G;
        st = hg_buffer_create_ex(exh, s->adt, (size_t)np, HG_BUFFER_UNINITIALIZED, &pv);
        if (!st && is_arg(s->k))
            st = hg_buffer_create_ex(exh, HG_DTYPE_I64, (size_t)np, HG_BUFFER_UNINITIALIZED, &pi);
        if (st) st = hg_error_prefix(st, "%s (partial results on the device)", s->fn);
    }
    hg_arg args[32 + 3 * 2 * HG_MAX_DIMS];
    for (uint64_t row0 = 0; row0 < s->M && !st; row0 += rows_per) {
        uint64_t rows = s->M - row0 < rows_per ? s->M - row0 : rows_per;
        size_t k = 0;
        args[k++] = hg_arg_buffer(s->xbuf);
        if (G > 1) {
            args[k++] = hg_arg_buffer(pv);
            if (is_arg(s->k)) args[k++] = hg_arg_buffer(pi);
        } else {
            args[k++] = hg_arg_buffer(s->obuf);
        }
        k = common_args(args, k, s, row0, row0 + rows, C);
        k = hg_dk_arg_dims(args, k, &s->rd, 1);
        hg_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.grid.x = (uint32_t)((rows + RB - 1) / RB);
        cfg.grid.y = (uint32_t)G;
        cfg.grid.z = 1;
        cfg.block.x = T;
        cfg.block.y = RB;
        cfg.block.z = 1;
        st = hg_dk_launch_text(s->ex, s->fn, &kb, &cfg, args, k);
        if (st || G == 1) continue;
        k = 0;
        args[k++] = hg_arg_buffer(pv);
        if (is_arg(s->k)) args[k++] = hg_arg_buffer(pi);
        args[k++] = hg_arg_buffer(s->obuf);
        args[k++] = hg_arg_u64(G);
        k = common_args(args, k, s, row0, row0 + rows, C);
        hg_launch_config cf = hg_launch_1d(rows, 128);
        st = hg_dk_launch_text(s->ex, s->fn, &fb, &cf, args, k);
    }
    if (pv.handle) hg_buffer_destroy(pv);
    if (pi.handle) hg_buffer_destroy(pi);
    hg_sb_free(&kb);
    hg_sb_free(&fb);
    return st;
}

static hg_dtype acc_dtype(rd_kop k, hg_dtype x) {
    if (k == K_ANY || k == K_ALL) return HG_DTYPE_U64;
    if (hg_dtype_is_float((int)x) || k == K_SQDEV || k == K_SUMEXP) return HG_DTYPE_F64;
    if (k == K_SUM || k == K_PROD) return HG_DTYPE_U64;
    return hg_dtype_is_unsigned_int((int)x) || x == HG_DTYPE_BOOL ? HG_DTYPE_U64 : HG_DTYPE_I64;
}

hg_status hg_dev_reduce_into(hg_op_ctx* c, hg_reduce_op op, const hg_tensor* x,
                             uint32_t axes_mask, double ddof, const hg_tensor* out) {
    rd_spec s;
    memset(&s, 0, sizeof s);
    s.fn = c->fn;
    s.ex = c->ex;
    hg_status st = hg_reduce_dtype(op, x->dtype, &s.rdt);
    if (st) return hg_error_prefix(st, "%s", c->fn);
    int keep = out->ndim == x->ndim;
    int32_t od = 0;
    s.M = s.N = 1;
    for (int32_t d = 0; d < x->ndim; d++) {
        if (axes_mask & (1u << d)) {
            hg_dk_dims_push(&s.rd, 1, x->shape[d], &x->strides[d]);
            s.N *= (uint64_t)x->shape[d];
            od += keep;
        } else {
            int64_t st2[2] = {x->strides[d], out->strides[od++]};
            hg_dk_dims_push(&s.kd, 2, x->shape[d], st2);
            s.M *= (uint64_t)x->shape[d];
        }
    }
    hg_dk_dims_merge(&s.kd, 2);
    hg_dk_dims_merge(&s.rd, 1);
    int arg = op == HG_REDUCE_ARGMIN || op == HG_REDUCE_ARGMAX;
    if (s.N == 0 && s.M > 0 && (arg || op == HG_REDUCE_MIN || op == HG_REDUCE_MAX))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "%s: %s of an empty reduction (the reduced dims have 0 elements) has no "
                        "identity; numpy raises here too", c->fn, hg_reduce_op_name(op));
    if (s.M == 0) return HG_OK;
    s.xdt = x->dtype;
    s.odt = out->dtype;
    s.xbuf = x->buffer;
    s.obuf = out->buffer;
    s.xoff = x->offset;
    s.ooff = out->offset;
    s.dv = (double)s.N;
    static const rd_kop kop_of[HG_REDUCE_COUNT] = {
        [HG_REDUCE_SUM] = K_SUM, [HG_REDUCE_MEAN] = K_SUM, [HG_REDUCE_PROD] = K_PROD,
        [HG_REDUCE_MIN] = K_MIN, [HG_REDUCE_MAX] = K_MAX, [HG_REDUCE_ARGMIN] = K_ARGMIN,
        [HG_REDUCE_ARGMAX] = K_ARGMAX, [HG_REDUCE_VAR] = K_SQDEV, [HG_REDUCE_STD] = K_SQDEV,
        [HG_REDUCE_LOGSUMEXP] = K_SUMEXP, [HG_REDUCE_ANY] = K_ANY, [HG_REDUCE_ALL] = K_ALL,
    };
    static const rd_fin fin_of[HG_REDUCE_COUNT] = {
        [HG_REDUCE_SUM] = F_PLAIN, [HG_REDUCE_MEAN] = F_MEAN, [HG_REDUCE_PROD] = F_PLAIN,
        [HG_REDUCE_MIN] = F_PLAIN, [HG_REDUCE_MAX] = F_PLAIN, [HG_REDUCE_ARGMIN] = F_ARG,
        [HG_REDUCE_ARGMAX] = F_ARG, [HG_REDUCE_VAR] = F_VAR, [HG_REDUCE_STD] = F_STD,
        [HG_REDUCE_LOGSUMEXP] = F_LSE, [HG_REDUCE_ANY] = F_FLAG, [HG_REDUCE_ALL] = F_FLAG,
    };
    s.k = kop_of[op];
    s.fin = fin_of[op];
    s.adt = acc_dtype(s.k, x->dtype);
    if (op == HG_REDUCE_MEAN) s.adt = HG_DTYPE_F64;
    if (op != HG_REDUCE_VAR && op != HG_REDUCE_STD && op != HG_REDUCE_LOGSUMEXP) return run_spec(&s);
    // Two passes: the row's mean (var, std) or max (logsumexp) in double, then the sum of
    // squared deviations or of exp(x - max) around it.
    double div = (double)s.N - ddof;   // numpy: max(N - ddof, 0)
    hg_buffer cb;
    hg_executor exh = {c->ex->handle};
    st = hg_buffer_create_ex(exh, HG_DTYPE_F64, (size_t)s.M, HG_BUFFER_UNINITIALIZED, &cb);
    if (st) return hg_error_prefix(st, "%s (row centers on the device)", c->fn);
    rd_spec p = s;
    p.k = op == HG_REDUCE_LOGSUMEXP ? K_MAX : K_SUM;
    p.fin = op == HG_REDUCE_LOGSUMEXP ? F_PLAIN : F_MEAN;
    p.adt = p.rdt = p.odt = HG_DTYPE_F64;
    p.obuf = cb;
    p.out_linear = 1;
    st = run_spec(&p);
    if (!st) {
        s.cbuf = cb;
        s.dv = op == HG_REDUCE_LOGSUMEXP ? 0.0 : div > 0 ? div : 0.0;
        st = run_spec(&s);
    }
    hg_buffer_destroy(cb);
    return st;
}
