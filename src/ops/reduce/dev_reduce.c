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
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "ops/common/dev_ops.h"
#include "ops/common/dev_kernel.h"
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

// The kernels' parameters, shared arrays and registers (declared in this order; names as in
// docs and dumps). Both kernels declare the same registers.
typedef struct rd_k {
    hg_kb b;
    uint32_t x, pv, pi, o, cen, sv, si;                                 // memory slots
    hg_operand G, row0, M, N, C, xoff, ooff, dv;                        // scalars
    hg_dk_dim_params kp, rp;                                            // kept, reduced dims
    uint32_t row, t, tn, blk, g, j, jend, lin, lin2, sw, pos, gg, kk;   // u64
    hg_dk_scratch sc;                                                   // dq, dr, dc, dt
    uint32_t xb, ob, xo, idx, bidx;                                     // i64
    uint32_t acc, w, xv, cv, fv, rv, ov;
    uint32_t vr, last, done, tp, t1, t2, t3, nb;                        // bool
} rd_k;

static void op3(rd_k* k, hg_opcode op, hg_dtype t, uint32_t d, uint32_t a, uint32_t x) {
    hg_kb_set(&k->b, op, t, d, hg_reg(a), hg_reg(x), hg_none());
}
static void op2(rd_k* k, hg_opcode op, hg_dtype t, uint32_t d, uint32_t a) {
    hg_kb_set(&k->b, op, t, d, hg_reg(a), hg_none(), hg_none());
}
static void sel(rd_k* k, hg_dtype t, uint32_t d, uint32_t p, uint32_t a, uint32_t x) {
    hg_kb_set(&k->b, HG_OP_SEL, t, d, hg_reg(p), hg_reg(a), hg_reg(x));
}
// d := cvt.to.from a, a cvt even when the dtypes are equal (hg_kb_set_cvt would make a mov):
// any / all test a bool x with cvt.bool.bool, as the ISA text did.
static void cvt_always(hg_kb* b, hg_dtype to, hg_dtype from, uint32_t d, hg_operand a) {
    if (b->err) return;
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = HG_OP_CVT;
    in.type = (uint8_t)to;
    in.aux = (uint8_t)from;
    in.dst = hg_reg(d);
    in.src[0] = a;
    b->err = hg_prog_emit(b->p, &in);
}
// d := the lane's special register s (u32) widened to u64.
static void special(rd_k* k, uint32_t d, hg_special s) {
    hg_kb_set_cvt(&k->b, HG_DTYPE_U64, HG_DTYPE_U32, d, hg_sreg(s));
}

// The accumulator's identity, in its dtype.
static hg_operand init_value(const rd_spec* s) {
    int f = s->adt == HG_DTYPE_F64, sg = s->adt == HG_DTYPE_I64;
    switch (s->k) {
    case K_PROD: case K_ALL: return hg_kb_imm(s->adt, 1);
    case K_MIN: case K_ARGMIN:
        return f ? hg_imm_f64(INFINITY) : sg ? hg_imm_i64(INT64_MAX) : hg_imm_u64(UINT64_MAX);
    case K_MAX: case K_ARGMAX:
        return f ? hg_imm_f64(-INFINITY) : sg ? hg_imm_i64(INT64_MIN) : hg_imm_u64(0);
    default: return hg_kb_imm(s->adt, 0);
    }
}

// res := "value v takes the place of cur" (NaN first, then strict order) for min/max kinds.
static void emit_takes(rd_k* k, const rd_spec* s, uint32_t res, uint32_t v, uint32_t cur) {
    hg_kb* b = &k->b;
    const hg_dtype F = HG_DTYPE_F64, B = HG_DTYPE_BOOL;
    hg_cmp cc = s->k == K_MIN || s->k == K_ARGMIN ? HG_CMP_LT : HG_CMP_GT;
    hg_kb_set_cmp(b, cc, s->adt, res, hg_reg(v), hg_reg(cur));
    if (s->adt != HG_DTYPE_F64) return;
    hg_kb_set_cmp(b, HG_CMP_NE, F, k->nb, hg_reg(v), hg_reg(v));
    op3(k, HG_OP_OR, B, res, res, k->nb);
    hg_kb_set_cmp(b, HG_CMP_NE, F, k->nb, hg_reg(cur), hg_reg(cur));
    op2(k, HG_OP_NOT, B, k->nb, k->nb);
    op3(k, HG_OP_AND, B, res, res, k->nb);
}

// (acc, idx) := combine((acc, idx), (w, bidx)), where (w, bidx) may cover earlier indices
// (tree steps): ties go to the smaller index.
static void emit_combine(rd_k* k, const rd_spec* s) {
    hg_kb* b = &k->b;
    const hg_dtype I = HG_DTYPE_I64, B = HG_DTYPE_BOOL, a = s->adt;
    switch (s->k) {
    case K_SUM: case K_SQDEV: case K_SUMEXP: op3(k, HG_OP_ADD, a, k->acc, k->acc, k->w); return;
    case K_PROD: op3(k, HG_OP_MUL, a, k->acc, k->acc, k->w); return;
    case K_ANY: op3(k, HG_OP_OR, HG_DTYPE_U64, k->acc, k->acc, k->w); return;
    case K_ALL: op3(k, HG_OP_AND, HG_DTYPE_U64, k->acc, k->acc, k->w); return;
    case K_MIN: case K_MAX:
        emit_takes(k, s, k->t1, k->w, k->acc);
        sel(k, a, k->acc, k->t1, k->w, k->acc);
        return;
    default:   // argmin / argmax
        emit_takes(k, s, k->t1, k->w, k->acc);
        emit_takes(k, s, k->t2, k->acc, k->w);
        op2(k, HG_OP_NOT, B, k->t2, k->t2);
        hg_kb_set_cmp(b, HG_CMP_LT, I, k->t3, hg_reg(k->bidx), hg_reg(k->idx));
        op3(k, HG_OP_AND, B, k->t3, k->t3, k->t2);
        op3(k, HG_OP_OR, B, k->t1, k->t1, k->t3);
        hg_kb_set_cmp(b, HG_CMP_LT, I, k->t3, hg_reg(k->idx), hg_imm_i64(0));
        op3(k, HG_OP_OR, B, k->t1, k->t1, k->t3);
        hg_kb_set_cmp(b, HG_CMP_GE, I, k->t3, hg_reg(k->bidx), hg_imm_i64(0));
        op3(k, HG_OP_AND, B, k->t1, k->t1, k->t3);
        sel(k, a, k->acc, k->t1, k->w, k->acc);
        sel(k, I, k->idx, k->t1, k->bidx, k->idx);
        return;
    }
}

// w := element xv in the accumulator's domain (bidx := its index j).
static void emit_element(rd_k* k, const rd_spec* s) {
    hg_kb* b = &k->b;
    const hg_dtype F = HG_DTYPE_F64;
    switch (s->k) {
    case K_SQDEV: case K_SUMEXP:
        hg_kb_set_cvt(b, F, s->xdt, k->fv, hg_reg(k->xv));
        op3(k, HG_OP_SUB, F, k->fv, k->fv, k->cv);
        if (s->k == K_SQDEV) op3(k, HG_OP_MUL, F, k->w, k->fv, k->fv);
        else op2(k, HG_OP_EXP, F, k->w, k->fv);
        return;
    case K_ANY: case K_ALL:
        cvt_always(b, HG_DTYPE_BOOL, s->xdt, k->nb, hg_reg(k->xv));
        hg_kb_set_cvt(b, HG_DTYPE_U64, HG_DTYPE_BOOL, k->w, hg_reg(k->nb));
        return;
    default:
        hg_kb_set_cvt(b, s->adt, s->xdt, k->w, hg_reg(k->xv));
        if (is_arg(s->k)) hg_kb_set_cvt(b, HG_DTYPE_I64, HG_DTYPE_U64, k->bidx, hg_reg(k->j));
        return;
    }
}

// ov := the finished result of (acc, idx) in the output dtype (the result dtype first).
static void emit_finish(rd_k* k, const rd_spec* s) {
    hg_kb* b = &k->b;
    const hg_dtype F = HG_DTYPE_F64;
    switch (s->fin) {
    case F_MEAN: case F_VAR: case F_STD:
        hg_kb_set(b, HG_OP_DIV, F, k->fv, hg_reg(k->acc), k->dv, hg_none());
        if (s->fin == F_STD) op2(k, HG_OP_SQRT, F, k->fv, k->fv);
        hg_kb_set_cvt(b, s->rdt, F, k->rv, hg_reg(k->fv));
        break;
    case F_LSE:   // log(acc) + max, or the max itself when it is not finite
        op2(k, HG_OP_ABS, F, k->fv, k->cv);
        hg_kb_set_cmp(b, HG_CMP_LT, F, k->nb, hg_reg(k->fv), hg_imm_f64(INFINITY));
        op2(k, HG_OP_LOG, F, k->fv, k->acc);
        op3(k, HG_OP_ADD, F, k->fv, k->fv, k->cv);
        sel(k, F, k->fv, k->nb, k->fv, k->cv);
        hg_kb_set_cvt(b, s->rdt, F, k->rv, hg_reg(k->fv));
        break;
    case F_ARG: hg_kb_set_cvt(b, s->rdt, HG_DTYPE_I64, k->rv, hg_reg(k->idx)); break;
    case F_FLAG: hg_kb_set_cvt(b, s->rdt, HG_DTYPE_U64, k->rv, hg_reg(k->acc)); break;
    default: hg_kb_set_cvt(b, s->rdt, s->adt, k->rv, hg_reg(k->acc)); break;
    }
    hg_kb_set_cvt(b, s->odt, s->rdt, k->ov, hg_reg(k->rv));
}

// The store of ov for row `row` (offset ob, or the row itself for centers).
static void emit_store(rd_k* k, const rd_spec* s) {
    hg_operand at = hg_reg(s->out_linear ? k->row : k->ob);
    hg_kb_st(&k->b, HG_SPACE_GLOBAL, s->odt, k->o, at, hg_reg(k->ov));
}

// slot[at] := acc (and islot[at] := idx for argmin / argmax).
static void store_acc(rd_k* k, const rd_spec* s, hg_space sp, uint32_t slot, uint32_t islot,
                      uint32_t at) {
    hg_kb_st(&k->b, sp, s->adt, slot, hg_reg(at), hg_reg(k->acc));
    if (is_arg(s->k)) hg_kb_st(&k->b, sp, HG_DTYPE_I64, islot, hg_reg(at), hg_reg(k->idx));
}

// w := slot[at] (and bidx := islot[at] for argmin / argmax).
static void load_other(rd_k* k, const rd_spec* s, hg_space sp, uint32_t slot, uint32_t islot,
                       uint32_t at) {
    hg_kb_ld(&k->b, sp, s->adt, k->w, slot, hg_reg(at));
    if (is_arg(s->k)) hg_kb_ld(&k->b, sp, HG_DTYPE_I64, k->bidx, islot, hg_reg(at));
}

// acc, idx := the identity, no index.
static void init_acc(rd_k* k, const rd_spec* s) {
    hg_kb_mov(&k->b, s->adt, k->acc, init_value(s));
    hg_kb_mov(&k->b, HG_DTYPE_I64, k->idx, hg_imm_i64(-1));
}

// xb, ob := the row's offsets in x and out; cv := its center (when there are centers).
static void row_offsets(rd_k* k, const rd_spec* s) {
    hg_kb* b = &k->b;
    hg_kb_mov(b, HG_DTYPE_I64, k->xb, k->xoff);
    hg_kb_mov(b, HG_DTYPE_I64, k->ob, k->ooff);
    const uint32_t offs[2] = {k->xb, k->ob};
    hg_dk_emit_offsets(b, &k->kp, s->kd.nd, 2, hg_reg(k->row), offs, &k->sc);
    if (s->cbuf.handle) hg_kb_ld(b, HG_SPACE_GLOBAL, HG_DTYPE_F64, k->cv, k->cen, hg_reg(k->row));
}

// The parameters after each kernel's own buffers.
static void common_params(rd_k* k, const rd_spec* s) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64;
    if (s->cbuf.handle) k->cen = hg_kb_buffer(b, "cen", HG_DTYPE_F64, 1);
    k->row0 = hg_kb_scalar(b, "row0", U);
    k->M = hg_kb_scalar(b, "M", U);
    k->N = hg_kb_scalar(b, "N", U);
    k->C = hg_kb_scalar(b, "C", U);
    k->xoff = hg_kb_scalar(b, "xoff", I);
    k->ooff = hg_kb_scalar(b, "ooff", I);
    k->dv = hg_kb_scalar(b, "dv", HG_DTYPE_F64);
    hg_dk_param_dims(b, "k", s->kd.nd, 2, &k->kp);
}

static void declare_regs(rd_k* k, const rd_spec* s) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64, I = HG_DTYPE_I64, F = HG_DTYPE_F64, B = HG_DTYPE_BOOL;
    k->row = hg_kb_reg(b, "row", U);
    k->t = hg_kb_reg(b, "t", U);
    k->tn = hg_kb_reg(b, "tn", U);
    k->blk = hg_kb_reg(b, "blk", U);
    k->g = hg_kb_reg(b, "g", U);
    k->j = hg_kb_reg(b, "j", U);
    k->jend = hg_kb_reg(b, "jend", U);
    k->lin = hg_kb_reg(b, "lin", U);
    k->lin2 = hg_kb_reg(b, "lin2", U);
    k->sw = hg_kb_reg(b, "sw", U);
    k->pos = hg_kb_reg(b, "pos", U);
    k->gg = hg_kb_reg(b, "gg", U);
    hg_dk_scratch_declare(b, &k->sc);
    k->kk = hg_kb_reg(b, "kk", U);
    k->xb = hg_kb_reg(b, "xb", I);
    k->ob = hg_kb_reg(b, "ob", I);
    k->xo = hg_kb_reg(b, "xo", I);
    k->idx = hg_kb_reg(b, "idx", I);
    k->bidx = hg_kb_reg(b, "bidx", I);
    k->acc = hg_kb_reg(b, "acc", s->adt);
    k->w = hg_kb_reg(b, "w", s->adt);
    k->xv = hg_kb_reg(b, "xv", s->xdt);
    k->cv = hg_kb_reg(b, "cv", F);
    k->fv = hg_kb_reg(b, "fv", F);
    k->vr = hg_kb_reg(b, "vr", B);
    k->last = hg_kb_reg(b, "last", B);
    k->done = hg_kb_reg(b, "done", B);
    k->tp = hg_kb_reg(b, "tp", B);
    k->t1 = hg_kb_reg(b, "t1", B);
    k->t2 = hg_kb_reg(b, "t2", B);
    k->t3 = hg_kb_reg(b, "t3", B);
    k->nb = hg_kb_reg(b, "nb", B);
    k->rv = hg_kb_reg(b, "rv", s->rdt);
    k->ov = hg_kb_reg(b, "ov", s->odt);
}

static void declare_block(rd_k* k, const rd_spec* s, int partial) {
    hg_kb* b = &k->b;
    k->x = hg_kb_buffer(b, "x", s->xdt, 1);
    if (partial) {
        k->pv = hg_kb_buffer(b, "pv", s->adt, 0);
        if (is_arg(s->k)) k->pi = hg_kb_buffer(b, "pi", HG_DTYPE_I64, 0);
    } else {
        k->o = hg_kb_buffer(b, "o", s->odt, 0);
    }
    common_params(k, s);
    hg_dk_param_dims(b, "r", s->rd.nd, 1, &k->rp);
    k->sv = hg_kb_shared(b, "sv", s->adt, RD_LANES);
    if (is_arg(s->k)) k->si = hg_kb_shared(b, "si", HG_DTYPE_I64, RD_LANES);
    declare_regs(k, s);
}

// The lanes' loop over their elements j = g * C + t, + T, ... of the row's chunk.
static void element_loop(rd_k* k, const rd_spec* s) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64;
    hg_kb_set(b, HG_OP_MUL, U, k->j, hg_reg(k->g), k->C, hg_none());
    hg_kb_set(b, HG_OP_ADD, U, k->jend, hg_reg(k->j), k->C, hg_none());
    hg_kb_set(b, HG_OP_MIN, U, k->jend, hg_reg(k->jend), k->N, hg_none());
    op3(k, HG_OP_ADD, U, k->j, k->j, k->t);
    hg_kb_loop(b);
    hg_kb_set_cmp(b, HG_CMP_GE, U, k->last, hg_reg(k->j), hg_reg(k->jend));
    hg_kb_break(b, k->last);
    hg_kb_mov(b, HG_DTYPE_I64, k->xo, hg_reg(k->xb));
    hg_dk_emit_offsets(b, &k->rp, s->rd.nd, 1, hg_reg(k->j), &k->xo, &k->sc);
    hg_kb_ld(b, HG_SPACE_GLOBAL, s->xdt, k->xv, k->x, hg_reg(k->xo));
    emit_element(k, s);
    emit_combine(k, s);
    op3(k, HG_OP_ADD, U, k->j, k->j, k->tn);
    hg_kb_endloop(b);
}

// The shared tree: lane t of each row combines slot lin + sw into lin, sw = T/2, T/4, ...
static void tree(rd_k* k, const rd_spec* s) {
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64;
    store_acc(k, s, HG_SPACE_SHARED, k->sv, k->si, k->lin);
    hg_kb_bar(b);
    hg_kb_set(b, HG_OP_SHR, U, k->sw, hg_reg(k->tn), hg_imm_u64(1), hg_none());
    hg_kb_loop(b);
    hg_kb_set_cmp(b, HG_CMP_EQ, U, k->done, hg_reg(k->sw), hg_imm_u64(0));
    hg_kb_break(b, k->done);
    hg_kb_set_cmp(b, HG_CMP_LT, U, k->tp, hg_reg(k->t), hg_reg(k->sw));
    hg_kb_if(b, k->tp);
    op3(k, HG_OP_ADD, U, k->lin2, k->lin, k->sw);
    load_other(k, s, HG_SPACE_SHARED, k->sv, k->si, k->lin2);
    emit_combine(k, s);
    store_acc(k, s, HG_SPACE_SHARED, k->sv, k->si, k->lin);
    hg_kb_endif(b);
    hg_kb_bar(b);
    hg_kb_set(b, HG_OP_SHR, U, k->sw, hg_reg(k->sw), hg_imm_u64(1), hg_none());
    hg_kb_endloop(b);
}

// The block kernel: final (partial == 0) stores results, otherwise partial accumulators.
static hg_status block_kernel(const rd_spec* s, int partial, hg_prog** out) {
    rd_k kk;
    memset(&kk, 0, sizeof kk);
    rd_k* k = &kk;
    k->b = hg_kb_new("hg_dev_reduce");
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64;
    declare_block(k, s, partial);
    // row = ctaid.x * ntid.y + tid.y + row0; g = the chunk.
    special(k, k->t, HG_SREG_TID_X);
    special(k, k->tn, HG_SREG_NTID_X);
    special(k, k->blk, HG_SREG_CTAID_X);
    special(k, k->row, HG_SREG_NTID_Y);
    op3(k, HG_OP_MUL, U, k->blk, k->blk, k->row);
    special(k, k->row, HG_SREG_TID_Y);
    op3(k, HG_OP_ADD, U, k->row, k->row, k->blk);
    hg_kb_set(b, HG_OP_ADD, U, k->row, hg_reg(k->row), k->row0, hg_none());
    special(k, k->g, HG_SREG_CTAID_Y);
    init_acc(k, s);
    hg_kb_set_cmp(b, HG_CMP_LT, U, k->vr, hg_reg(k->row), k->M);
    hg_kb_if(b, k->vr);
    row_offsets(k, s);
    element_loop(k, s);
    hg_kb_endif(b);
    // lin = tid.y * ntid.x + tid.x (the lane's slot).
    special(k, k->lin, HG_SREG_TID_Y);
    op3(k, HG_OP_MUL, U, k->lin, k->lin, k->tn);
    op3(k, HG_OP_ADD, U, k->lin, k->lin, k->t);
    tree(k, s);
    hg_kb_set_cmp(b, HG_CMP_EQ, U, k->tp, hg_reg(k->t), hg_imm_u64(0));
    op3(k, HG_OP_AND, HG_DTYPE_BOOL, k->tp, k->tp, k->vr);
    hg_kb_if(b, k->tp);
    if (partial) {   // pos = (row - row0) * G + g
        special(k, k->gg, HG_SREG_NCTAID_Y);
        hg_kb_set(b, HG_OP_SUB, U, k->pos, hg_reg(k->row), k->row0, hg_none());
        op3(k, HG_OP_MUL, U, k->pos, k->pos, k->gg);
        op3(k, HG_OP_ADD, U, k->pos, k->pos, k->g);
        store_acc(k, s, HG_SPACE_GLOBAL, k->pv, k->pi, k->pos);
    } else {
        emit_finish(k, s);
        emit_store(k, s);
    }
    hg_kb_endif(b);
    return hg_dk_finish(b, s->fn, out);
}

// One lane per row: combines the G partials of the row in order, finishes and stores.
static hg_status finish_kernel(const rd_spec* s, hg_prog** out) {
    rd_k kk;
    memset(&kk, 0, sizeof kk);
    rd_k* k = &kk;
    k->b = hg_kb_new("hg_dev_reduce_finish");
    hg_kb* b = &k->b;
    const hg_dtype U = HG_DTYPE_U64;
    k->pv = hg_kb_buffer(b, "pv", s->adt, 1);
    if (is_arg(s->k)) k->pi = hg_kb_buffer(b, "pi", HG_DTYPE_I64, 1);
    k->o = hg_kb_buffer(b, "o", s->odt, 0);
    k->G = hg_kb_scalar(b, "G", U);
    common_params(k, s);
    declare_regs(k, s);
    special(k, k->lin, HG_SREG_GID_X);
    hg_kb_set(b, HG_OP_ADD, U, k->row, hg_reg(k->lin), k->row0, hg_none());
    hg_kb_set_cmp(b, HG_CMP_LT, U, k->vr, hg_reg(k->row), k->M);
    hg_kb_if(b, k->vr);
    init_acc(k, s);
    hg_kb_set(b, HG_OP_MUL, U, k->pos, hg_reg(k->lin), k->G, hg_none());
    hg_kb_mov(b, U, k->kk, hg_imm_u64(0));
    hg_kb_loop(b);
    hg_kb_set_cmp(b, HG_CMP_GE, U, k->last, hg_reg(k->kk), k->G);
    hg_kb_break(b, k->last);
    load_other(k, s, HG_SPACE_GLOBAL, k->pv, k->pi, k->pos);
    emit_combine(k, s);
    hg_kb_set(b, HG_OP_ADD, U, k->pos, hg_reg(k->pos), hg_imm_u64(1), hg_none());
    hg_kb_set(b, HG_OP_ADD, U, k->kk, hg_reg(k->kk), hg_imm_u64(1), hg_none());
    hg_kb_endloop(b);
    row_offsets(k, s);
    emit_finish(k, s);
    emit_store(k, s);
    hg_kb_endif(b);
    return hg_dk_finish(b, s->fn, out);
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
    hg_prog *kp = NULL, *fp = NULL;
    hg_status st = block_kernel(s, G > 1, &kp);
    if (!st && G > 1) st = finish_kernel(s, &fp);
    hg_buffer pv = {0}, pi = {0};
    hg_executor exh = {s->ex->handle};
    uint64_t rows_per = RD_MAX_ROWBLOCKS * RB;
    if (!st && G > 1) {
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
        st = hg_dk_launch(s->ex, s->fn, kp, &cfg, args, k);
        if (st || G == 1) continue;
        k = 0;
        args[k++] = hg_arg_buffer(pv);
        if (is_arg(s->k)) args[k++] = hg_arg_buffer(pi);
        args[k++] = hg_arg_buffer(s->obuf);
        args[k++] = hg_arg_u64(G);
        k = common_args(args, k, s, row0, row0 + rows, C);
        hg_launch_config cf = hg_launch_1d(rows, 128);
        st = hg_dk_launch(s->ex, s->fn, fp, &cf, args, k);
    }
    if (pv.handle) hg_buffer_destroy(pv);
    if (pi.handle) hg_buffer_destroy(pi);
    hg_prog_free(kp);
    hg_prog_free(fp);
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
    if (s.N == 0 && (arg || op == HG_REDUCE_MIN || op == HG_REDUCE_MAX))
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
    if (op != HG_REDUCE_VAR && op != HG_REDUCE_STD && op != HG_REDUCE_LOGSUMEXP)
        return run_spec(&s);
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
