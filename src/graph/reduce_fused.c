// A fusion group with its trailing full reduction (sum / mean / min / max) as one ISA kernel.
//
// Each lane reduces U elements: step k (k < U, unrolled) reads element k*T + gid (T lanes in
// all) through a buffer parameter bound at offset k*T, so every load is indexed by %gid.x;
// evaluates the elementwise expression there and combines it into the lane's accumulator — f64
// for float sums and means, the result dtype for integer sums (wrapping, as numpy), the compute
// dtype for min/max (NaN propagates) — and stores the lane's partial. Whole blocks of
// U * FR_BLOCK elements go through a variant without any branch (straight-line code, which the
// CPU executor strip-mines); the remainder through a variant that guards each step with
// gid < count_k. The same scheme over the partials (FR_PARTIALS_U per lane) repeats until one
// value is left, and a one-lane kernel finishes the mean and converts once to the result
// dtype. The U-ary tree is fixed by the element count, so results do not depend on threads and
// are identical run to run; f64 accumulation keeps float sums far more accurate than pairwise
// f32 summation. The intermediate elementwise result is never stored.
//
// Why this shape: a per-lane loop with register-indexed loads, or a per-block shared-memory
// tree (every level a masked pass over the block), are several times slower, and the chain
// kernel plus a library reduction writes and re-reads the intermediate (docs/performance.md).
//
// Reads inputs directly, so it runs when every input is C-contiguous with the iteration's
// element count or holds a single element; otherwise hg_fused_reduce_run says
// HG_ERR_UNSUPPORTED and the caller computes the group and the reduction separately.
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "graph/graph_internal.h"
#include "isa/program.h"

#define FR_BLOCK 1024u
#define FR_MAX_PARAMS 64
#define FR_MAX_U 16
#define FR_PARTIALS_U 16

struct hg_fused_reduce {
    hg_executor_obj* ex;
    hg_kernel k1[2], kp[2], kf;           // expression, partials ([0] full blocks, [1] guarded
                                          // tail), finish
    int32_t ninputs;
    int64_t in_numel[HG_EW_MAX_INPUTS];   // n (read per step) or 1 (read once at 0)
    hg_dtype acc, rdt;
    int64_t n;
    uint32_t u1;                          // elements per lane in the first kernel
    int32_t instrs;
    pthread_mutex_t lock;                 // guards partials (one run at a time)
    hg_buffer partials[2];
};

static hg_operand ident(hg_reduce_op op, hg_dtype acc) {
    if (op == HG_REDUCE_SUM || op == HG_REDUCE_MEAN)
        return acc == HG_DTYPE_F64 ? hg_imm_f64(0.0) : acc == HG_DTYPE_F32 ? hg_imm_f32(0.0f) : hg_imm_i64(0);
    int mn = op == HG_REDUCE_MIN;
    switch (acc) {
    case HG_DTYPE_F64: return hg_imm_f64(mn ? INFINITY : -INFINITY);
    case HG_DTYPE_F32: return hg_imm_f32(mn ? INFINITY : -INFINITY);
    case HG_DTYPE_I8: return hg_imm_i64(mn ? INT8_MAX : INT8_MIN);
    case HG_DTYPE_I16: return hg_imm_i64(mn ? INT16_MAX : INT16_MIN);
    case HG_DTYPE_I32: return hg_imm_i64(mn ? INT32_MAX : INT32_MIN);
    case HG_DTYPE_I64: return hg_imm_i64(mn ? INT64_MAX : INT64_MIN);
    case HG_DTYPE_U8: return hg_imm_u64(mn ? UINT8_MAX : 0);
    case HG_DTYPE_U16: return hg_imm_u64(mn ? UINT16_MAX : 0);
    case HG_DTYPE_U32: return hg_imm_u64(mn ? UINT32_MAX : 0);
    default: return hg_imm_u64(mn ? UINT64_MAX : 0);
    }
}

static hg_opcode combine_op(hg_reduce_op op) {
    return op == HG_REDUCE_MIN ? HG_OP_MIN : op == HG_REDUCE_MAX ? HG_OP_MAX : HG_OP_ADD;
}

static hg_status emit_cvt(hg_program p, hg_dtype to, hg_dtype from, uint32_t dst, uint32_t src) {
    if (to == from) return hg_emit_unary(p, HG_OP_MOV, to, dst, hg_reg(src));
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = HG_OP_CVT;
    in.type = (uint8_t)to;
    in.aux = (uint8_t)from;
    in.dst = hg_reg(dst);
    in.src[0] = hg_reg(src);
    return hg_program_emit(p, &in);
}

#define TRY(x) do { if ((s = (x))) goto done; } while (0)

// Parameters: for each step k, one buffer per full input (expression kernel) or the partials
// (partials kernel, e == NULL); the scalar inputs once; the output partials; count_k per step;
// lanes (the lanes that store a partial).
static hg_status build_kernel(hg_fused_reduce* f, const hg_ew_expr* e, hg_reduce_op op, uint32_t U,
                              int guarded, hg_program* out) {
    hg_program p = {0};
    hg_status s;
    int32_t nin = e ? e->ninputs : 1;
    uint32_t prm[FR_MAX_U * HG_EW_MAX_INPUTS + FR_PARTIALS_U], cnt[FR_PARTIALS_U], pout, lanes;
    uint32_t inr[HG_EW_MAX_INPUTS], pr, acc, el;
    uint32_t* node_regs = malloc(HG_EW_MAX_NODES * sizeof *node_regs);
    char name[24];
    if (!node_regs) return hg_error(HG_ERR_OUT_OF_MEMORY, "fused reduction: out of memory");
    TRY(hg_program_create(e ? "fused_reduce" : "reduce_partials", &p));
    for (uint32_t k = 0; k < U; k++)
        for (int32_t j = 0; j < nin; j++) {
            if (e && f->in_numel[j] == 1 && k > 0) continue;   // scalars: one parameter
            snprintf(name, sizeof name, "in%d_%u", (int)j, k);
            TRY(hg_program_add_buffer_param(p, name, e ? e->inputs[j].dtype : f->acc, 1,
                                            &prm[k * (uint32_t)nin + (uint32_t)j]));
        }
    TRY(hg_program_add_buffer_param(p, "partials", f->acc, 0, &pout));
    for (uint32_t k = 0; k < U; k++) {
        snprintf(name, sizeof name, "count%u", k);
        TRY(hg_program_add_scalar_param(p, name, HG_DTYPE_U32, &cnt[k]));
    }
    TRY(hg_program_add_scalar_param(p, "lanes", HG_DTYPE_U32, &lanes));
    for (int32_t j = 0; j < nin; j++) {
        snprintf(name, sizeof name, "x%d", (int)j);
        TRY(hg_program_add_reg(p, name, e ? e->inputs[j].dtype : f->acc, &inr[j]));
    }
    TRY(hg_program_add_reg(p, "active", HG_DTYPE_BOOL, &pr));
    TRY(hg_program_add_reg(p, "acc", f->acc, &acc));
    TRY(hg_program_add_reg(p, "el", f->acc, &el));
    hg_operand gid = hg_sreg(HG_SREG_GID_X);
    TRY(hg_emit_unary(p, HG_OP_MOV, f->acc, acc, ident(op, f->acc)));
    for (int32_t j = 0; e && j < nin; j++)
        if (f->in_numel[j] == 1)
            TRY(hg_emit_load(p, HG_SPACE_GLOBAL, e->inputs[j].dtype, inr[j], prm[j], hg_imm_u64(0)));
    hg_prog* ip = hg_prog_from_handle(p);
    if (!ip) { s = HG_ERR_INTERNAL; goto done; }
    for (uint32_t k = 0; k < U; k++) {
        if (guarded) {
            TRY(hg_emit_cmp(p, HG_CMP_LT, HG_DTYPE_U32, pr, gid, hg_param(cnt[k])));
            TRY(hg_emit_control(p, HG_OP_IF, hg_reg(pr)));
        }
        for (int32_t j = 0; j < nin; j++)
            if (!e || f->in_numel[j] != 1)
                TRY(hg_emit_load(p, HG_SPACE_GLOBAL, e ? e->inputs[j].dtype : f->acc, inr[j],
                                 prm[k * (uint32_t)nin + (uint32_t)j], gid));
        uint32_t v = inr[0];
        if (e) {
            int32_t y = e->outputs[0].node;
            TRY(hg_ew_emit(ip, e, inr, node_regs));
            TRY(emit_cvt(p, f->acc, e->nodes[y].dtype, el, node_regs[y]));
            v = el;
        }
        TRY(hg_emit_binary(p, combine_op(op), f->acc, acc, hg_reg(acc), hg_reg(v)));
        if (guarded) TRY(hg_emit_control(p, HG_OP_ENDIF, hg_none()));
    }
    if (guarded) {
        TRY(hg_emit_cmp(p, HG_CMP_LT, HG_DTYPE_U32, pr, gid, hg_param(lanes)));
        TRY(hg_emit_control(p, HG_OP_IF, hg_reg(pr)));
    }
    TRY(hg_emit_store(p, HG_SPACE_GLOBAL, f->acc, pout, gid, hg_reg(acc)));
    if (guarded) TRY(hg_emit_control(p, HG_OP_ENDIF, hg_none()));
    if (e && !guarded) TRY(hg_program_instr_count(p, (uint32_t*)&f->instrs));
    *out = p;
    p.handle = 0;
done:
    if (p.handle) hg_program_destroy(p);
    free(node_regs);
    return s;
}

// The finishing kernel (one lane): the mean's division and the one conversion to the result.
static hg_status build_finish(hg_fused_reduce* f, hg_reduce_op op, hg_program* out) {
    hg_program p = {0};
    hg_status s;
    uint32_t part, o, acc, res;
    TRY(hg_program_create("fused_reduce_finish", &p));
    TRY(hg_program_add_buffer_param(p, "partials", f->acc, 1, &part));
    TRY(hg_program_add_buffer_param(p, "out", f->rdt, 0, &o));
    TRY(hg_program_add_reg(p, "acc", f->acc, &acc));
    TRY(hg_program_add_reg(p, "res", f->rdt, &res));
    TRY(hg_emit_load(p, HG_SPACE_GLOBAL, f->acc, acc, part, hg_imm_u64(0)));
    if (op == HG_REDUCE_MEAN)
        TRY(hg_emit_binary(p, HG_OP_DIV, HG_DTYPE_F64, acc, hg_reg(acc), hg_imm_f64((double)f->n)));
    TRY(emit_cvt(p, f->rdt, f->acc, res, acc));
    TRY(hg_emit_store(p, HG_SPACE_GLOBAL, f->rdt, o, hg_imm_u64(0), hg_reg(res)));
    *out = p;
    p.handle = 0;
done:
    if (p.handle) hg_program_destroy(p);
    return s;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

hg_status hg_fused_reduce_create(hg_executor_obj* ex, const hg_ew_expr* e, hg_reduce_op op,
                                 hg_dtype rdt, hg_fused_reduce** out) {
    if (e->noutputs != 1 || (op != HG_REDUCE_SUM && op != HG_REDUCE_MEAN && op != HG_REDUCE_MIN &&
                             op != HG_REDUCE_MAX))
        return hg_error(HG_ERR_UNSUPPORTED, "fused reduction: one output and sum/mean/min/max only");
    int64_t n = hg_shape_numel(e->ndim, e->shape);
    hg_dtype ydt = e->nodes[e->outputs[0].node].dtype;
    if (n >= (int64_t)UINT32_MAX || ydt == HG_DTYPE_BOOL)
        return hg_error(HG_ERR_UNSUPPORTED, "fused reduction: 2^32 elements or more, or bool");
    hg_fused_reduce* f = calloc(1, sizeof *f);
    if (!f) return hg_error(HG_ERR_OUT_OF_MEMORY, "fused reduction: out of memory");
    f->ex = ex;
    f->n = n;
    f->rdt = rdt;
    f->ninputs = e->ninputs;
    pthread_mutex_init(&f->lock, NULL);
    int32_t nfull = 0, nscalar = 0;
    for (int32_t k = 0; k < e->ninputs; k++) {
        int64_t m = 1;
        for (int32_t d = 0; d < e->inputs[k].ndim; d++) m *= e->inputs[k].shape[d];
        f->in_numel[k] = m == 1 ? 1 : m;
        if (m != 1 && m != n) {
            hg_fused_reduce_destroy(f);
            return hg_error(HG_ERR_UNSUPPORTED, "fused reduction: a broadcast input");
        }
        if (m == 1) nscalar++;
        else nfull++;
    }
    // Parameters: nfull * U + nscalar + 1 + U + 1 <= 64.
    int32_t u = (FR_MAX_PARAMS - 2 - nscalar) / (nfull + 1);
    f->u1 = (uint32_t)(u > FR_MAX_U ? FR_MAX_U : u < 1 ? 1 : u);
    if (op == HG_REDUCE_MIN || op == HG_REDUCE_MAX)
        f->acc = ydt == HG_DTYPE_F16 || ydt == HG_DTYPE_BF16 ? HG_DTYPE_F32 : ydt;
    else if (hg_dtype_is_float((int)ydt) || op == HG_REDUCE_MEAN)
        f->acc = HG_DTYPE_F64;
    else
        f->acc = rdt;
    uint64_t t1 = ceil_div((uint64_t)(n ? n : 1), f->u1) + FR_BLOCK;   // full blocks + tail
    hg_executor exh = {ex->handle};
    hg_program p1[2] = {{0}, {0}}, p2[2] = {{0}, {0}}, p3 = {0};
    hg_status s = HG_OK;
    for (int gd = 0; gd < 2 && !s; gd++) {
        s = build_kernel(f, e, op, f->u1, gd, &p1[gd]);
        if (!s) s = build_kernel(f, NULL, op, FR_PARTIALS_U, gd, &p2[gd]);
        if (!s) s = hg_kernel_create(exh, p1[gd], &f->k1[gd]);
        if (!s) s = hg_kernel_create(exh, p2[gd], &f->kp[gd]);
    }
    if (!s) s = build_finish(f, op, &p3);
    if (!s) s = hg_kernel_create(exh, p3, &f->kf);
    if (!s) s = hg_buffer_create(exh, f->acc, (size_t)t1, &f->partials[0]);
    if (!s) s = hg_buffer_create(exh, f->acc, (size_t)ceil_div(t1, FR_PARTIALS_U) + FR_BLOCK, &f->partials[1]);
    for (int gd = 0; gd < 2; gd++) {
        if (p1[gd].handle) hg_program_destroy(p1[gd]);
        if (p2[gd].handle) hg_program_destroy(p2[gd]);
    }
    if (p3.handle) hg_program_destroy(p3);
    if (s) {
        hg_fused_reduce_destroy(f);
        return hg_error_prefix(s, "fused reduction kernel");
    }
    *out = f;
    return HG_OK;
}

void hg_fused_reduce_fork_child(hg_fused_reduce* f) { pthread_mutex_init(&f->lock, NULL); }

void hg_fused_reduce_destroy(hg_fused_reduce* f) {
    if (!f) return;
    for (int gd = 0; gd < 2; gd++) {
        if (f->k1[gd].handle) hg_kernel_destroy(f->k1[gd]);
        if (f->kp[gd].handle) hg_kernel_destroy(f->kp[gd]);
    }
    if (f->kf.handle) hg_kernel_destroy(f->kf);
    for (int i = 0; i < 2; i++)
        if (f->partials[i].handle) hg_buffer_destroy(f->partials[i]);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

int32_t hg_fused_reduce_instr_count(const hg_fused_reduce* f) { return f->instrs; }

// One launch: m values starting at element `base` of each full input, U per lane, T lanes;
// partials go to dst at dst_off. Step k reads elements base + k*T + gid.
static hg_status launch_part(hg_kernel kern, uint32_t U, uint64_t base, uint64_t m, uint64_t t,
                             int32_t nin, const hg_buffer* bufs, const uint64_t* offs,
                             const int64_t* numel, hg_buffer dst, uint64_t dst_off) {
    hg_arg args[FR_MAX_PARAMS];
    size_t na = 0;
    for (uint32_t k = 0; k < U; k++)
        for (int32_t j = 0; j < nin; j++) {
            if (numel && numel[j] == 1) {
                if (k == 0) args[na++] = hg_arg_buffer_range(bufs[j], offs[j], 1);
                continue;
            }
            uint64_t lo = (uint64_t)k * t, cnt = lo < m ? (m - lo < t ? m - lo : t) : 0;
            args[na++] = hg_arg_buffer_range(bufs[j], offs[j] + base + (cnt ? lo : 0), cnt);
        }
    args[na++] = hg_arg_buffer_range(dst, dst_off, t);
    for (uint32_t k = 0; k < U; k++) {
        uint64_t lo = (uint64_t)k * t, cnt = lo < m ? (m - lo < t ? m - lo : t) : 0;
        args[na++] = hg_arg_u32((uint32_t)cnt);
    }
    args[na++] = hg_arg_u32((uint32_t)t);
    hg_launch_config c = hg_launch_1d(t, FR_BLOCK);
    return hg_kernel_launch(kern, &c, args, na);
}

// One pass over m values: whole blocks of U * FR_BLOCK values through the unguarded kernel
// (straight-line code: the CPU executor strip-mines it), the rest through the guarded one.
// *out_count gets the number of partials written.
static hg_status launch_pass(const hg_kernel* kern, uint32_t U, uint64_t m, int32_t nin,
                             const hg_buffer* bufs, const uint64_t* offs, const int64_t* numel,
                             hg_buffer dst, uint64_t* out_count) {
    uint64_t tfull = m / ((uint64_t)U * FR_BLOCK) * FR_BLOCK, done_n = tfull * U;
    hg_status s = HG_OK;
    if (tfull) s = launch_part(kern[0], U, 0, done_n, tfull, nin, bufs, offs, numel, dst, 0);
    uint64_t rest = m - done_n, trest = 0;
    if (!s && (rest || !tfull)) {
        trest = ceil_div(rest ? rest : 1, U);
        s = launch_part(kern[1], U, done_n, rest, trest, nin, bufs, offs, numel, dst, tfull);
    }
    *out_count = tfull + trest;
    return s;
}

hg_status hg_fused_reduce_run(hg_fused_reduce* f, const hg_tensor* inputs, const hg_tensor* out) {
    hg_buffer bufs[HG_EW_MAX_INPUTS];
    uint64_t offs[HG_EW_MAX_INPUTS];
    for (int32_t k = 0; k < f->ninputs; k++) {
        const hg_tensor* t = &inputs[k];
        int contig = 1;
        if (f->in_numel[k] != 1 && hg_tensor_is_contiguous(t, &contig)) return HG_ERR_INVALID_ARGUMENT;
        if (!contig)
            return hg_error(HG_ERR_UNSUPPORTED, "fused reduction: input %d is not contiguous", (int)k);
        bufs[k] = t->buffer;
        offs[k] = (uint64_t)t->offset;
    }
    pthread_mutex_lock(&f->lock);
    uint64_t m;
    hg_status s = launch_pass(f->k1, f->u1, (uint64_t)f->n, f->ninputs, bufs, offs, f->in_numel,
                              f->partials[0], &m);
    int cur = 0;
    while (!s && m > 1) {   // U-ary passes over the partials until one value is left
        uint64_t zero = 0;
        s = launch_pass(f->kp, FR_PARTIALS_U, m, 1, &f->partials[cur], &zero, NULL,
                        f->partials[1 - cur], &m);
        cur = 1 - cur;
    }
    hg_arg fa[2] = {hg_arg_buffer_range(f->partials[cur], 0, 1),
                    hg_arg_buffer_range(out->buffer, (uint64_t)out->offset, 1)};
    hg_launch_config cf = hg_launch_1d(1, 1);
    if (!s) s = hg_kernel_launch(f->kf, &cf, fa, 2);
    pthread_mutex_unlock(&f->lock);
    return s;
}
