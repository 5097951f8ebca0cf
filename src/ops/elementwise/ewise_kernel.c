// Elementwise kernels: one Atlas ISA program per (expression, layout class), one lane per output
// element (%gid.x, bound-checked against n), compiled once through the executor's kernel cache
// (runtime/kernel.h) and launched with arguments bound here from tensors checked once per call.
//
// Layout classes, decided per run after dropping size-1 dims and merging dims that are
// contiguous for every operand:
//   linear  - the operand's element i is at index i of its bound range (C-contiguous with the
//             iteration shape): indexed by %gid.x, so the CPU backend strip-mines the body;
//   scalar  - an input with one element (0-d, size 1 or fully broadcast): a scalar parameter
//             read on the host at launch (host-visible backends);
//   strided - anything else: the index is computed from the lane's coordinates with the
//             collapsed sizes and strides as immediates (zero and negative strides allowed;
//             the buffer is bound from its lowest reachable element).
// A variant is specialized on the class of every operand (and, for strided ones, on the sizes
// and strides) and cached in the kernel. On backends with kernel_launch_rows (the CPU), a strided
// layout whose innermost dim the outputs step by 1 runs instead as rows: the linear/scalar
// variant of one row, launched per row; a fused chain over short rows that do not group runs as
// packed rows (rows gathered into contiguous tiles; both in ewise_rows.c).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/elementwise/ewise.h"
#include "base/handles.h"
#include "base/shape.h"
#include "ops/elementwise/ewise_internal.h"
#include "ops/elementwise/ewise_kernel_internal.h"
#include "ops/elementwise/ewise_vector.h"
#include "runtime/kernel.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"

// Lanes per launch (%gid.x is u32); a variable so tests can exercise split launches.
uint64_t hg_ew_launch_max = UINT64_C(1) << 31;
#define EW_LAUNCH_MAX hg_ew_launch_max


const hg_ew_expr* hg_ew_kernel_expr(const hg_ew_kernel* k) { return &k->e; }
int32_t hg_ew_kernel_instr_count(const hg_ew_kernel* k) { return k ? k->instr_count : 0; }

// ---------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------

// Strides of operand t over the iteration shape (numpy broadcast: missing or size-1 dims 0).
static void broadcast_strides(int32_t ndim, const hg_tensor* t, int64_t* st) {
    int32_t off = ndim - t->ndim;
    for (int32_t d = 0; d < ndim; d++) {
        int32_t td = d - off;
        st[d] = td >= 0 && t->shape[td] != 1 ? t->strides[td] : 0;
    }
}

// The common case without any index arithmetic: every operand is C-contiguous with the
// iteration shape or has a single element. Returns 0 when some operand needs the general path.
static int simple_layout(const hg_ew_kernel* k, const hg_ew_arg* in, const hg_ew_arg* out,
                         ew_layout* L) {
    const hg_tensor* ot = out[0].t;
    int32_t nin = k->e.ninputs, ndim = ot->ndim;
    int host = hg_op_host_memory_of(k->ex);
    // Element counts written out, not hg_shape_numel: every eager call comes here, and the
    // inlined helper compiled to more instructions in this function (docs/performance.md).
    int64_t numel = 1;
    for (int32_t d = 0; d < ndim; d++) numel *= ot->shape[d];
    for (int32_t o = 0; o < k->nops; o++) {
        const hg_tensor* t = o < nin ? in[o].t : out[o - nin].t;
        if (!t) {
            L->cls[o] = CL_SCALAR;
            continue;
        }
        int64_t n = 1;
        for (int32_t d = 0; d < t->ndim; d++) n *= t->shape[d];
        if (n == 1 && numel != 0) {
            L->cls[o] = o < nin && host ? CL_SCALAR : CL_LINEAR;
            if (L->cls[o] == CL_LINEAR && numel != 1) return 0;
            L->lo[o] = L->hi[o] = 0;
            continue;
        }
        if (t->ndim != ndim) return 0;
        int64_t expect = 1;
        for (int32_t d = ndim - 1; d >= 0; d--) {
            if (t->shape[d] != ot->shape[d]) return 0;
            if (t->shape[d] != 1 && t->strides[d] != expect) return 0;
            expect *= t->shape[d];
        }
        L->cls[o] = CL_LINEAR;
        L->lo[o] = 0;
        L->hi[o] = numel - 1;
    }
    L->numel = numel;
    L->ndim = numel == 1 ? 0 : 1;
    L->size[0] = numel;
    L->nstrided = 0;
    return 1;
}

// Puts the iteration dims in an output's memory order (largest stride first, as numpy's
// iterator does): an output written through a permuted view (K^T of attention, stored for the
// next matmul) then steps by 1 along the innermost dim and runs as rows with gathered inputs,
// instead of per-lane index arithmetic over every dim (~4 ns an element; Llama's rotary K^T
// kernel 314 -> 68 us: docs/performance.md). Of several outputs, the one whose innermost dim
// the most operands step through by 1 (a kernel writing both K^T and a contiguous result from
// contiguous inputs: the contiguous one, so one output is scattered rather than every input
// gathered; 254 -> see docs/performance.md), the first on a tie. Each output element depends
// only on the inputs' elements at its own index, so the order changes nothing but speed. An
// output with a zero stride is no candidate (none: the logical order stays); dims of equal
// stride keep their order (a stable sort).
static void order_by_output(int32_t nd, int64_t* size, int64_t (*st)[HG_MAX_DIMS],
                            int32_t nops, int32_t nin) {
    int32_t best = -1, best_score = -1;
    for (int32_t o = nin; o < nops; o++) {
        int32_t inner = -1, score = 0;
        for (int32_t d = 0; d < nd && inner != -2; d++) {
            if (st[o][d] == 0) inner = -2;
            else if (inner < 0 || llabs(st[o][d]) <= llabs(st[o][inner])) inner = d;
        }
        if (inner < 0) continue;
        for (int32_t p = 0; p < nops; p++) score += llabs(st[p][inner]) == 1;
        if (score > best_score) best = o, best_score = score;
    }
    if (best < 0) return;
    const int64_t* os = st[best];
    int sorted = 1;
    for (int32_t d = 1; d < nd; d++)
        if (llabs(os[d - 1]) < llabs(os[d])) sorted = 0;
    if (sorted) return;
    for (int32_t d = 1; d < nd; d++)   // insertion sort of the dims by |output stride|, descending
        for (int32_t j = d; j > 0 && llabs(st[best][j - 1]) < llabs(st[best][j]); j--) {
            int64_t t = size[j];
            size[j] = size[j - 1];
            size[j - 1] = t;
            for (int32_t o = 0; o < nops; o++) {
                t = st[o][j];
                st[o][j] = st[o][j - 1];
                st[o][j - 1] = t;
            }
        }
}

static void compute_layout(const hg_ew_kernel* k, const hg_ew_arg* in, const hg_ew_arg* out,
                           ew_layout* L) {
    if (simple_layout(k, in, out, L)) return;
    // The iteration shape is the first output's: a cached eager kernel serves every shape.
    const hg_tensor* ot = out[0].t;
    int32_t nin = k->e.ninputs, nops = k->nops, ndim = ot->ndim;
    const int64_t* shape = ot->shape;
    int64_t st[EW_MAX_OPERANDS][HG_MAX_DIMS];
    int64_t size[HG_MAX_DIMS];
    int32_t nd = 0;
    L->numel = hg_shape_numel(ndim, shape);
    for (int32_t o = 0; o < nops; o++) {
        const hg_ew_arg* a = o < nin ? &in[o] : &out[o - nin];
        int64_t full[HG_MAX_DIMS] = {0};
        if (a->t) broadcast_strides(ndim, a->t, full);
        int32_t j = 0;
        for (int32_t d = 0; d < ndim; d++)
            if (shape[d] != 1) st[o][j++] = full[d];
    }
    for (int32_t d = 0; d < ndim; d++)
        if (shape[d] != 1) size[nd++] = shape[d];
    order_by_output(nd, size, st, nops, nin);
    // Merge dim d into the next one when every operand steps through both as one.
    int32_t cn = 0;
    int64_t csize[HG_MAX_DIMS], cst[EW_MAX_OPERANDS][HG_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++) {
        if (cn > 0) {
            int ok = 1;
            for (int32_t o = 0; o < nops && ok; o++)
                ok = cst[o][cn - 1] == st[o][d] * size[d];
            if (ok) {
                csize[cn - 1] *= size[d];
                for (int32_t o = 0; o < nops; o++) cst[o][cn - 1] = st[o][d];
                continue;
            }
        }
        csize[cn] = size[d];
        for (int32_t o = 0; o < nops; o++) cst[o][cn] = st[o][d];
        cn++;
    }
    L->ndim = cn;
    L->nstrided = 0;
    for (int32_t d = 0; d < cn; d++) L->size[d] = csize[d];
    int host = hg_op_host_memory_of(k->ex);
    for (int32_t o = 0; o < nops; o++) {
        const hg_ew_arg* a = o < nin ? &in[o] : &out[o - nin];
        int zero = 1, linear = 1;
        int64_t expect = 1, lo = 0, hi = 0;
        for (int32_t d = cn - 1; d >= 0; d--) {
            if (cst[o][d]) zero = 0;
            if (cst[o][d] != expect) linear = 0;
            expect *= csize[d];
            int64_t span = (csize[d] - 1) * cst[o][d];
            if (span < 0) lo += span;
            else hi += span;
        }
        L->lo[o] = lo;
        L->hi[o] = hi;
        for (int32_t d = 0; d < cn; d++) L->stride[o][d] = cst[o][d];
        if (!a->t) L->cls[o] = CL_SCALAR;
        else if (o < nin && zero && host) L->cls[o] = CL_SCALAR;
        else if (linear) L->cls[o] = CL_LINEAR;
        else {
            L->cls[o] = CL_STRIDED;
            L->nstrided++;
        }
    }
}

static uint64_t mix64(uint64_t x) {
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    return x;
}

static uint64_t layout_sig(const ew_layout* L, int32_t nops) {
    // Without strided operands the program does not depend on the (collapsed) shape.
    uint64_t h = L->nstrided ? (uint64_t)L->ndim * 0x100000001b3ull : 0x51ed27u + L->vec;
    for (int32_t o = 0; o < nops; o++) h = mix64(h ^ ((uint64_t)L->cls[o] << (2 * (o % 32))));
    if (L->nstrided) {
        for (int32_t d = 0; d < L->ndim; d++) h = mix64(h ^ (uint64_t)L->size[d]);
        for (int32_t o = 0; o < nops; o++)
            if (L->cls[o] == CL_STRIDED)
                for (int32_t d = 0; d < L->ndim; d++) h = mix64(h ^ (uint64_t)L->stride[o][d]);
    }
    return h;
}

// Strided lanes beyond one launch read their linear offset from a start parameter.
static int needs_start(const ew_layout* L) {
    return L->nstrided && (uint64_t)L->numel > EW_LAUNCH_MAX;
}

static int variant_matches(const ew_variant* v, const ew_layout* L, int32_t nops, uint64_t sig) {
    if (v->sig != sig || v->nstrided != L->nstrided || v->has_start != needs_start(L) ||
        v->vec != L->vec)
        return 0;
    for (int32_t o = 0; o < nops; o++)   // a few bytes: a loop beats a memcmp call here
        if (v->cls[o] != L->cls[o]) return 0;
    if (!L->nstrided) return 1;   // linear and scalar operands do not depend on the shape
    if (v->ndim != L->ndim) return 0;
    for (int32_t d = 0; d < L->ndim; d++)
        if (v->size[d] != L->size[d]) return 0;
    for (int32_t o = 0; o < nops; o++)
        if (L->cls[o] == CL_STRIDED &&
            memcmp(v->stride[o], L->stride[o], sizeof(int64_t) * (size_t)L->ndim))
            return 0;
    return 1;
}

// ---------------------------------------------------------------------------------------------
// Program generation
// ---------------------------------------------------------------------------------------------

static hg_status add_param(hg_prog* p, const char* prefix, int32_t i, hg_param_kind kind,
                           hg_dtype t, int is_const) {
    char name[HG_NAME_MAX];
    snprintf(name, sizeof name, "%s%d", prefix, (int)i);
    uint32_t idx;
    return hg_prog_add_param(p, name, kind, t, is_const, &idx);
}

// The lane's coordinates need a 64-bit linear index (and a start parameter) only for more lanes
// than one launch takes; below that, index arithmetic is u32 when every strided operand's
// reachable range and every collapsed size fits (wrapping u32 sums of negative strides still
// end at the right non-negative index).
static hg_dtype index_type(const ew_layout* L, int32_t nops) {
    if (needs_start(L)) return HG_DTYPE_I64;
    for (int32_t d = 0; d < L->ndim; d++)
        if (L->size[d] > (INT64_C(1) << 30)) return HG_DTYPE_I64;
    for (int32_t o = 0; o < nops; o++)
        if (L->cls[o] == CL_STRIDED && L->hi[o] - L->lo[o] > (int64_t)UINT32_MAX)
            return HG_DTYPE_I64;
    return HG_DTYPE_U32;
}

static hg_operand imm_of(hg_dtype t, int64_t v) {
    return t == HG_DTYPE_U32 ? hg_imm_bits((uint32_t)v) : hg_imm_i64(v);
}

// q = x / size and r = x % size (each only if asked) for 0 <= x < numel and a constant
// size >= 2, without integer division where possible (vector units have none): shifts for powers
// of two, else an f64 reciprocal estimate (off by at most one) corrected by compares.
static void divmod_const(hg_kb* m, hg_dtype t, hg_operand x, int64_t size, hg_operand* q,
                         hg_operand* r) {
    const hg_dtype F64 = HG_DTYPE_F64;
    if ((size & (size - 1)) == 0) {
        int k = 0;
        while ((INT64_C(1) << k) < size) k++;
        if (r) *r = hg_kb_op2(m, HG_OP_AND, t, x, imm_of(t, size - 1));
        if (q) *q = hg_kb_op2(m, HG_OP_SHR, t, x, imm_of(t, k));
        return;
    }
    if (t == HG_DTYPE_I64) {   // up to 2^63 lanes: the f64 estimate may be off by more
        if (r) *r = hg_kb_op2(m, HG_OP_REM, t, x, imm_of(t, size));
        if (q) *q = hg_kb_op2(m, HG_OP_DIV, t, x, imm_of(t, size));
        return;
    }
    // u32: x < 2^31 and size <= 2^30, so q0 = trunc(x * (1/size)) is q - 1, q or q + 1 and
    // r0 = x - q0 * size (wrapping) is r + size, r, or r - size wrapped to >= 2^31.
    hg_operand xf = hg_kb_cvt(m, F64, t, x);
    hg_operand qf = hg_kb_op1(m, HG_OP_TRUNC, F64,
                              hg_kb_op2(m, HG_OP_MUL, F64, xf, hg_imm_f64(1.0 / (double)size)));
    hg_operand q0 = hg_kb_cvt(m, t, F64, qf);
    hg_operand r0 = hg_kb_op3(m, HG_OP_FMA, t, q0, imm_of(t, -size), x);
    hg_operand over = hg_kb_cmp(m, HG_CMP_GE, t, r0, imm_of(t, INT64_C(1) << 31));   // q0 = q + 1
    hg_operand under = hg_kb_op2(m, HG_OP_AND, HG_DTYPE_BOOL,
                                 hg_kb_cmp(m, HG_CMP_GE, t, r0, imm_of(t, size)),
                                 hg_kb_op1(m, HG_OP_NOT, HG_DTYPE_BOOL, over));   // q0 = q - 1
    if (q) {
        hg_operand q1 = hg_kb_sel(m, t, over, hg_kb_op2(m, HG_OP_SUB, t, q0, imm_of(t, 1)), q0);
        *q = hg_kb_sel(m, t, under, hg_kb_op2(m, HG_OP_ADD, t, q0, imm_of(t, 1)), q1);
    }
    if (r) {
        hg_operand r1 = hg_kb_sel(m, t, over, hg_kb_op2(m, HG_OP_ADD, t, r0, imm_of(t, size)), r0);
        *r = hg_kb_sel(m, t, under, hg_kb_op2(m, HG_OP_SUB, t, r0, imm_of(t, size)), r1);
    }
}

// Index registers of the strided operands: coordinates of the lane's linear index in the
// collapsed shape (only those some operand steps through), then base + sum coord * stride.
static void emit_strided_indices(hg_kb* m, const ew_layout* L, int32_t nops, uint32_t start,
                                 hg_operand* index) {
    hg_dtype t = index_type(L, nops);
    hg_operand gid = hg_sreg(HG_SREG_GID_X);
    hg_operand lin = gid;
    if (t == HG_DTYPE_I64) {
        lin = hg_kb_cvt(m, HG_DTYPE_I64, HG_DTYPE_U32, gid);
        if (needs_start(L)) lin = hg_kb_op2(m, HG_OP_ADD, HG_DTYPE_I64, lin, hg_param(start));
    }
    int need[HG_MAX_DIMS] = {0};
    int32_t outer = L->ndim;   // outermost dim some operand needs
    for (int32_t o = 0; o < nops; o++)
        if (L->cls[o] == CL_STRIDED)
            for (int32_t d = 0; d < L->ndim; d++)
                if (L->stride[o][d]) {
                    need[d] = 1;
                    if (d < outer) outer = d;
                }
    hg_operand coord[HG_MAX_DIMS];
    for (int32_t d = L->ndim - 1; d >= outer && d >= 1; d--)
        divmod_const(m, t, lin, L->size[d], d > outer ? &lin : NULL, need[d] ? &coord[d] : NULL);
    if (outer == 0) coord[0] = lin;
    for (int32_t o = 0; o < nops; o++) {
        if (L->cls[o] != CL_STRIDED) continue;
        int64_t base = -L->lo[o];
        hg_operand ix = imm_of(t, base);
        int first = 1;
        for (int32_t d = 0; d < L->ndim; d++) {
            int64_t st = L->stride[o][d];
            if (!st) continue;
            if (first && base == 0) ix = st == 1 ? coord[d]
                                                 : hg_kb_op2(m, HG_OP_MUL, t, coord[d], imm_of(t, st));
            else ix = hg_kb_op3(m, HG_OP_FMA, t, coord[d], imm_of(t, st), ix);
            first = 0;
        }
        index[o] = ix;
    }
}

// Parameters: one per input (buffer, or scalar for the scalar class), one buffer per output,
// then n (u32) and, with strided operands, start (i64: the first lane's linear index).
static hg_status build_program(const hg_ew_expr* e, const ew_layout* L, hg_prog** out) {
    if (L->vec) {
        uint8_t scalar[HG_EW_MAX_INPUTS];
        for (int32_t i = 0; i < e->ninputs; i++) scalar[i] = L->cls[i] == CL_SCALAR;
        return hg_ew_build_vector(e, scalar, L->vec, out);
    }
    hg_prog* p = hg_prog_new("elementwise");
    if (!p) return HG_ERR_OUT_OF_MEMORY;
    int32_t nin = e->ninputs, nops = nin + e->noutputs;
    hg_status s = HG_OK;
    for (int32_t i = 0; i < nin && !s; i++)
        s = L->cls[i] == CL_SCALAR ? add_param(p, "s", i, HG_PARAM_SCALAR, e->inputs[i].dtype, 0)
                                   : add_param(p, "in", i, HG_PARAM_BUFFER, e->inputs[i].dtype, 1);
    for (int32_t j = 0; j < e->noutputs && !s; j++)
        s = add_param(p, "out", j, HG_PARAM_BUFFER, e->outputs[j].dtype, 0);
    uint32_t n_param = (uint32_t)nops, start_param = n_param + 1, idx;
    if (!s) s = hg_prog_add_param(p, "n", HG_PARAM_SCALAR, HG_DTYPE_U32, 0, &idx);
    if (!s && needs_start(L))
        s = hg_prog_add_param(p, "start", HG_PARAM_SCALAR, HG_DTYPE_I64, 0, &idx);
    if (s) {
        hg_prog_free(p);
        return s;
    }
    hg_kb m = hg_kb_on(p);
    hg_operand gid = hg_sreg(HG_SREG_GID_X);
    hg_kb_ctl(&m, HG_OP_IF, hg_kb_cmp(&m, HG_CMP_LT, HG_DTYPE_U32, gid, hg_param(n_param)));
    hg_operand index[EW_MAX_OPERANDS];
    if (L->nstrided) emit_strided_indices(&m, L, nops, start_param, index);
    hg_operand inputs[HG_EW_MAX_INPUTS];
    for (int32_t i = 0; i < nin; i++) {
        if (L->cls[i] == CL_SCALAR) {
            inputs[i] = hg_param((uint32_t)i);
            continue;
        }
        uint32_t r = hg_kb_new_reg(&m, e->inputs[i].dtype);
        hg_kb_ld(&m, HG_SPACE_GLOBAL, e->inputs[i].dtype, r, (uint32_t)i,
                 L->cls[i] == CL_LINEAR ? gid : index[i]);
        inputs[i] = hg_reg(r);
    }
    hg_operand nodes[HG_EW_MAX_NODES];
    if (!m.err) m.err = hg_ew_emit_ops(p, e, inputs, nodes);
    for (int32_t j = 0; j < e->noutputs && !m.err; j++) {
        int32_t node = e->outputs[j].node;
        hg_dtype nt = e->nodes[node].dtype, st = e->outputs[j].dtype;
        hg_operand v = hg_kb_cvt(&m, st, nt, nodes[node]);
        hg_kb_st(&m, HG_SPACE_GLOBAL, st, (uint32_t)(nin + j),
                 L->cls[nin + j] == CL_LINEAR ? gid : index[nin + j], v);
    }
    hg_kb_ctl(&m, HG_OP_ENDIF, hg_none());
    return hg_kb_finish(&m, out);   // validated by the kernel cache on a miss
}

static void variant_free(ew_variant* v) {
    if (v->kernel) hg_kernel_unref(v->kernel);
    free(v->stride);
    memset(v, 0, sizeof *v);
}

static hg_status compile_variant(hg_ew_kernel* k, const ew_layout* L, uint64_t sig,
                                 ew_variant** out) {
    hg_executor_obj* ex = k->ex;
    hg_prog* p = NULL;
    hg_status s = build_program(&k->e, L, &p);
    if (s) return s;
    // The executor's one kernel cache: an equal program (another expression object, an
    // earlier variant evicted here) is compiled once.
    hg_kernel_obj* kobj = NULL;
    s = hg_kernel_get(ex, p, &kobj);
    hg_prog_free(p);
    if (s) return s;
    ew_variant nv;
    memset(&nv, 0, sizeof nv);
    nv.sig = sig;
    nv.ndim = L->ndim;
    nv.nstrided = L->nstrided;
    nv.has_start = needs_start(L);
    nv.vec = L->vec;
    memcpy(nv.cls, L->cls, sizeof nv.cls);
    memcpy(nv.size, L->size, sizeof nv.size);
    if (L->nstrided) {
        nv.stride = calloc((size_t)k->nops, sizeof *nv.stride);
        if (!nv.stride)
            return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory building an elementwise kernel");
        for (int32_t o = 0; o < k->nops; o++)
            if (L->cls[o] == CL_STRIDED) memcpy(nv.stride[o], L->stride[o], sizeof nv.stride[o]);
    }
    hg_kernel_ref(kobj);
    nv.kernel = kobj;
    int32_t slot;
    if (k->nvars < EW_MAX_VARIANTS) {
        slot = k->nvars++;
    } else {   // evict round robin, never the first (the all-linear variant of create)
        slot = 1 + (int32_t)(k->next_evict++ % (EW_MAX_VARIANTS - 1));
        variant_free(&k->vars[slot]);
    }
    k->vars[slot] = nv;
    *out = &k->vars[slot];
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Create / destroy
// ---------------------------------------------------------------------------------------------

hg_status hg_ew_kernel_create(hg_executor_obj* ex, const hg_ew_expr* e, hg_ew_kernel** out) {
    if (!ex) return hg_error(HG_ERR_NULL_POINTER, "hg_ew_kernel_create: NULL argument");
    pthread_mutex_lock(&ex->launch_lock);
    hg_status s = hg_ew_kernel_create_locked(ex, e, out);
    pthread_mutex_unlock(&ex->launch_lock);
    return s;
}

hg_status hg_ew_kernel_create_locked(hg_executor_obj* ex, const hg_ew_expr* e,
                                     hg_ew_kernel** out) {
    if (!ex || !e || !out) return hg_error(HG_ERR_NULL_POINTER, "hg_ew_kernel_create: NULL argument");
    if (e->noutputs < 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "elementwise expression has no output");
    hg_ew_kernel* k = calloc(1, sizeof *k);
    if (!k) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating an elementwise kernel");
    k->ex = ex;
    k->e = *e;
    k->nops = e->ninputs + e->noutputs;
    // The all-linear variant: checks the expression once and gives the instruction count.
    ew_layout L;
    memset(&L, 0, sizeof L);
    L.ndim = 1;
    L.size[0] = 1;
    ew_variant* v = NULL;
    hg_status s = compile_variant(k, &L, layout_sig(&L, k->nops), &v);
    if (s) {
        free(k);
        return s;
    }
    k->instr_count = (int32_t)v->kernel->prog->ninstrs;
    *out = k;
    return HG_OK;
}

void hg_ew_kernel_destroy(hg_ew_kernel* k) {
    if (!k) return;
    for (int32_t i = 0; i < k->nvars; i++) variant_free(&k->vars[i]);
    free(k->scratch);
    free(k);
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

uint64_t hg_ew_scalar_bits_of(const hg_ew_arg* a, hg_dtype t) {
    if (!a->t) return a->bits;
    return hg_dtype_load_bits(t, (const unsigned char*)a->buf->mem + a->t->offset * (int64_t)hg_dtype_size(t));
}

hg_status hg_ew_variant_for(hg_ew_kernel* k, const ew_layout* L, ew_variant** out) {
    uint64_t sig = layout_sig(L, k->nops);
    ew_variant* v = NULL;
    if (k->last < k->nvars && variant_matches(&k->vars[k->last], L, k->nops, sig))
        v = &k->vars[k->last];
    for (int32_t i = 0; !v && i < k->nvars; i++)
        if (variant_matches(&k->vars[i], L, k->nops, sig)) v = &k->vars[i];
    hg_status s;
    if (!v && (s = compile_variant(k, L, sig, &v))) return s;
    k->last = (int32_t)(v - k->vars);
    *out = v;
    return HG_OK;
}

// The vector variant's width for layout L on a device backend (0: the scalar variants).
static uint32_t vector_width(const hg_ew_kernel* k, const hg_ew_arg* in, const hg_ew_arg* out,
                             const ew_layout* L) {
    if (L->nstrided || hg_op_host_memory_of(k->ex) || !hg_ew_vector_enabled()) return 0;
    const void* base[EW_MAX_OPERANDS];
    size_t es[EW_MAX_OPERANDS];
    for (int32_t o = 0; o < k->nops; o++) {
        const hg_ew_arg* a = o < k->e.ninputs ? &in[o] : &out[o - k->e.ninputs];
        base[o] = NULL;
        es[o] = 0;
        if (L->cls[o] == CL_SCALAR) continue;
        es[o] = hg_dtype_size(a->t->dtype);
        base[o] = (const unsigned char*)a->buf->mem + (size_t)a->t->offset * es[o];
    }
    return hg_ew_vector_width(k->nops, base, es, L->numel, k->instr_count);
}

hg_status hg_ew_kernel_run_locked(hg_ew_kernel* k, const hg_ew_arg* in, const hg_ew_arg* out) {
    const hg_ew_expr* e = &k->e;
    ew_layout L;
    compute_layout(k, in, out, &L);
    if (L.numel == 0) return HG_OK;
    hg_status rs;
    if (hg_ew_run_rows(k, in, out, &L, &rs)) return rs;
    L.vec = vector_width(k, in, out, &L);
    ew_variant* v = NULL;
    hg_status s = hg_ew_variant_for(k, &L, &v);
    if (s) return s;
    hg_executor_obj* ex = k->ex;
    int32_t nin = e->ninputs, nops = k->nops;
    hg_bound_arg bound[EW_MAX_OPERANDS + 2];
    memset(bound, 0, sizeof(hg_bound_arg) * (size_t)(nops + 2));
    for (int32_t i = 0; i < nin; i++)
        if (L.cls[i] == CL_SCALAR) bound[i].bits = hg_ew_scalar_bits_of(&in[i], e->inputs[i].dtype);
    uint64_t total = (uint64_t)L.numel;
    for (uint64_t start = 0; start < total; start += EW_LAUNCH_MAX) {
        uint64_t count = total - start < EW_LAUNCH_MAX ? total - start : EW_LAUNCH_MAX;
        for (int32_t o = 0; o < nops; o++) {
            if (L.cls[o] == CL_SCALAR) continue;
            const hg_ew_arg* a = o < nin ? &in[o] : &out[o - nin];
            size_t es = hg_dtype_size(a->t->dtype);
            unsigned char* mem = a->buf->mem;
            if (L.cls[o] == CL_LINEAR) {
                bound[o].base = mem + (size_t)(a->t->offset + (int64_t)start) * es;
                bound[o].count = count;
            } else {
                bound[o].base = mem + (size_t)(a->t->offset + L.lo[o]) * es;
                bound[o].count = (uint64_t)(L.hi[o] - L.lo[o] + 1);
            }
        }
        bound[nops].bits = count;
        bound[nops + 1].bits = start;
        // Small launches use one exact block: no lane runs masked past the end.
        hg_launch_config cfg = hg_launch_1d(count, count <= HG_MAX_BLOCK_LANES ? (uint32_t)count
                                                                              : EW_BLOCK);
        if (L.vec) cfg = hg_ew_vector_launch(ex->vt->num_threads ? ex->vt->num_threads(ex->state)
                                                                 : 1, count, L.vec);
        s = hg_kernel_run_bound(ex, v->kernel, &cfg, bound, (size_t)(nops + 1 + needs_start(&L)));
        if (s) return s;
    }
    return HG_OK;
}

hg_status hg_ew_kernel_run_args(hg_ew_kernel* k, const hg_ew_arg* inputs,
                                const hg_ew_arg* outputs) {
    pthread_mutex_lock(&k->ex->launch_lock);
    hg_status s = hg_ew_kernel_run_locked(k, inputs, outputs);
    pthread_mutex_unlock(&k->ex->launch_lock);
    return s;
}

hg_buffer_obj* hg_ew_tensor_fast_check(const hg_tensor* t) {
    hg_buffer_obj* b = t ? hg_handle_get(t->buffer.handle, HG_HANDLE_BUFFER) : NULL;
    if (!b || t->dtype != b->dtype || t->ndim < 0 || t->ndim > HG_MAX_DIMS) return NULL;
    int64_t lo = t->offset, hi = t->offset, numel = 1;
    for (int32_t d = 0; d < t->ndim; d++) {
        int64_t s = t->shape[d], span;
        if (s < 0 || __builtin_mul_overflow(numel, s, &numel) ||
            __builtin_mul_overflow(s ? s - 1 : 0, t->strides[d], &span))
            return NULL;
        if (span < 0 ? __builtin_add_overflow(lo, span, &lo) : __builtin_add_overflow(hi, span, &hi))
            return NULL;
    }
    int ok = numel == 0 ? t->offset >= 0 && (uint64_t)t->offset <= b->count
                        : lo >= 0 && (uint64_t)hi < b->count;
    return ok ? b : NULL;
}

// Checks a tensor against the expression's operand (dtype, executor, broadcastable shape).
static hg_status check_operand(const hg_ew_kernel* k, const hg_tensor* t, hg_dtype dtype,
                               int32_t ndim, const int64_t* shape, const char* what, int32_t i,
                               hg_buffer_obj** out_buf) {
    if (!t) return hg_error(HG_ERR_NULL_POINTER, "hg_ew_kernel_run: %s %d is NULL", what, (int)i);
    hg_buffer_obj* b = hg_ew_tensor_fast_check(t);
    hg_status s;
    if (!b && (s = hg_tensor_check(t, "hg_ew_kernel_run", what, &b, NULL))) return s;
    if (b->ex != k->ex)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_ew_kernel_run: %s %d lives on another executor than the kernel", what,
                        (int)i);
    if (t->dtype != dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "hg_ew_kernel_run: %s %d has dtype %s, expected %s",
                        what, (int)i, hg_dtype_name(t->dtype), hg_dtype_name(dtype));
    int same = t->ndim == ndim;
    for (int32_t d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
    if (!same) {
        char a[HG_DIMS_TEXT], b2[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH, "hg_ew_kernel_run: %s %d has shape %s, expected %s",
                        what, (int)i, hg_tensor_format_dims(a, t->ndim, t->shape),
                        hg_tensor_format_dims(b2, ndim, shape));
    }
    *out_buf = b;
    return HG_OK;
}

hg_status hg_ew_kernel_run(hg_ew_kernel* k, const hg_tensor* inputs, const hg_tensor* outputs) {
    if (!k) return hg_error(HG_ERR_NULL_POINTER, "hg_ew_kernel_run: kernel is NULL");
    const hg_ew_expr* e = &k->e;
    if ((e->ninputs && !inputs) || !outputs)
        return hg_error(HG_ERR_NULL_POINTER, "hg_ew_kernel_run: inputs or outputs is NULL");
    hg_ew_arg in[HG_EW_MAX_INPUTS], out[HG_EW_MAX_OUTPUTS];
    hg_status s;
    for (int32_t i = 0; i < e->ninputs; i++) {
        in[i].t = &inputs[i];
        in[i].bits = 0;
        if ((s = check_operand(k, &inputs[i], e->inputs[i].dtype, e->inputs[i].ndim,
                               e->inputs[i].shape, "input", i, &in[i].buf)))
            return s;
    }
    for (int32_t j = 0; j < e->noutputs; j++) {
        out[j].t = &outputs[j];
        out[j].bits = 0;
        if ((s = check_operand(k, &outputs[j], e->outputs[j].dtype, e->ndim, e->shape, "output",
                               j, &out[j].buf)))
            return s;
    }
    return hg_ew_kernel_run_args(k, in, out);
}
