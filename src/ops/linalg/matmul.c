// numpy.matmul (hg_matmul, hg_matvec and the graph compiler's hg_matmul_into): shape rule,
// batching, operand layouts and the dispatch to the per-dtype kernels (see matmul.h).
#include "ops/linalg/matmul.h"
#include "ops/common/dev_ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/backend.h"
#include "base/dtype.h"
#include "base/error.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"

hg_status hg_matmul_shape(hg_op_ctx* c, int32_t na, const int64_t* a, int32_t nb, const int64_t* b,
                          int32_t* out_ndim, int64_t* out_shape) {
    char sa[HG_DIMS_TEXT], sb[HG_DIMS_TEXT];
    if (na < 1 || nb < 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "%s: matmul needs operands of at least 1 dim, got shapes %s and %s (use "
                        "a multiplication for 0-d operands)", c->fn, hg_op_dims(sa, na, a),
                        hg_op_dims(sb, nb, b));
    int64_t ka = a[na - 1], kb = nb == 1 ? b[0] : b[nb - 2];
    if (ka != kb)
        return hg_error(HG_ERR_SIZE_MISMATCH,
                        "%s: shapes %s and %s do not align for matmul: a's last dim (%lld) must "
                        "equal b's %s dim (%lld)", c->fn, hg_op_dims(sa, na, a),
                        hg_op_dims(sb, nb, b), (long long)ka, nb == 1 ? "only" : "second-to-last",
                        (long long)kb);
    int32_t ba = na >= 2 ? na - 2 : 0, bb = nb >= 2 ? nb - 2 : 0;
    int32_t nbatch = ba > bb ? ba : bb;
    int32_t nd = 0;
    for (int32_t d = 0; d < nbatch; d++) {
        int32_t ia = d - (nbatch - ba), ib = d - (nbatch - bb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return hg_error(HG_ERR_SIZE_MISMATCH,
                            "%s: batch dims of shapes %s and %s do not broadcast (%lld against "
                            "%lld)", c->fn, hg_op_dims(sa, na, a), hg_op_dims(sb, nb, b),
                            (long long)da, (long long)db);
        out_shape[nd++] = da == 1 ? db : da;
    }
    if (na >= 2) out_shape[nd++] = a[na - 2];
    if (nb >= 2) out_shape[nd++] = b[nb - 1];
    *out_ndim = nd;
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Operand preparation and the result store
// ---------------------------------------------------------------------------------------------

// A 2-D operand slice: element (i, j) at data + (i*rs + j*cs) * element size.
typedef struct mm_mat {
    const unsigned char* data;
    hg_dtype dt;
    int64_t rows, cols, rs, cs;
} mm_mat;

static const unsigned char* elem(const mm_mat* x, int64_t i, int64_t j) {
    return x->data + (i * x->rs + j * x->cs) * (int64_t)hg_dtype_size(x->dt);
}

// Copies x into a C-contiguous rows x cols array of dtype ct (f32, f64, an integer or bool).
// Conversions are exact wherever the result dtype can hold the operand (numpy's promotion
// guarantees that except i64/u64 -> f64, which rounds as numpy does); integers wrap into ct.
static void convert_operand(const mm_mat* x, hg_dtype ct, void* dst) {
    int64_t r = x->rows, cc = x->cols;
    if (ct == HG_DTYPE_F32) {
        float* d = dst;
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < cc; j++) d[i * cc + j] = (float)hg_op_load_f64(x->dt, elem(x, i, j));
    } else if (ct == HG_DTYPE_F64) {
        double* d = dst;
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < cc; j++) d[i * cc + j] = hg_op_load_f64(x->dt, elem(x, i, j));
    } else {
        size_t es = hg_dtype_size(ct);
        unsigned char* d = dst;
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < cc; j++) {
                uint64_t v = (uint64_t)hg_op_load_i64(x->dt, elem(x, i, j));
                if (ct == HG_DTYPE_BOOL) v = v != 0;
                // Little-endian low bytes = the value wrapped into ct's width.
                memcpy(d + (i * cc + j) * (int64_t)es, &v, es);
            }
    }
}

// Stores one element of the result held in the compute type ct (f32 for f16/bf16/f32 results)
// into dst of dtype od, rounding once to the result dtype rt first.
static void store_elem(hg_dtype rt, hg_dtype ct, const void* src, hg_dtype od, void* dst) {
    if (ct == od && rt == od) {
        memcpy(dst, src, hg_dtype_size(od));
        return;
    }
    if (hg_dtype_is_float((int)rt)) {
        double v = ct == HG_DTYPE_F32 ? (double)*(const float*)src : *(const double*)src;
        if (rt == HG_DTYPE_F16) v = hg_f16_to_f32(hg_f32_to_f16((float)v));
        else if (rt == HG_DTYPE_BF16) v = hg_bf16_to_f32(hg_f32_to_bf16((float)v));
        else if (rt == HG_DTYPE_F32) v = (float)v;
        hg_op_store_f64(od, dst, v);
        return;
    }
    // Integer or bool result; out is a same_kind target: an integer (wraps), bool or a float.
    int64_t v = hg_op_load_i64(rt, src);
    if (hg_dtype_is_float((int)od)) {
        hg_op_store_f64(od, dst, hg_dtype_is_unsigned_int((int)rt) ? (double)(uint64_t)v : (double)v);
    } else {
        uint64_t u = (uint64_t)v;
        if (od == HG_DTYPE_BOOL) u = u != 0;
        memcpy(dst, &u, hg_dtype_size(od));
    }
}

// C (m x n, C-contiguous, compute type ct) -> out slice at o with strides o_rs, o_cs.
static void store_result(hg_dtype rt, hg_dtype ct, const void* cbuf, int64_t m, int64_t n,
                         hg_dtype od, unsigned char* o, int64_t o_rs, int64_t o_cs) {
    size_t ces = hg_dtype_size(ct), oes = hg_dtype_size(od);
    const unsigned char* src = cbuf;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            store_elem(rt, ct, src + (i * n + j) * (int64_t)ces, od,
                       o + (i * o_rs + j * o_cs) * (int64_t)oes);
}

// An f32 operand sgemm can read in place: one of its last two strides is 1 (the other is the
// leading dimension). Dims of size 1 have no meaningful stride and are normalized first.
static int sgemm_layout(const mm_mat* x, int* trans, int64_t* ld) {
    int64_t rs = x->rows <= 1 ? (x->cols > 1 ? x->cols : 1) : x->rs;
    int64_t cs = x->cols <= 1 ? 1 : x->cs;
    if (cs == 1 && rs >= 0) {
        *trans = 0;
        *ld = rs > 0 ? rs : 0;
        return 1;
    }
    if (rs == 1 && cs >= 0) {   // x^T is row-major with leading dimension cs
        *trans = 1;
        *ld = cs;
        return 1;
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The batched driver
// ---------------------------------------------------------------------------------------------

typedef struct mm_plan {
    hg_dtype rt, ct, od;          // result, compute and out dtypes
    int64_t m, n, k;
    int32_t nbatch;               // batch dims after dropping size-1 ones and folding
    int64_t bshape[HG_MAX_DIMS];
    int64_t a_bs[HG_MAX_DIMS], b_bs[HG_MAX_DIMS], o_bs[HG_MAX_DIMS];
    mm_mat a, b;                  // batch 0 slices
    unsigned char* o;             // out slice of batch 0
    int64_t o_rs, o_cs;
} mm_plan;

static void build_plan(const hg_host_view* av, const hg_host_view* bv, const hg_host_view* ov,
                       hg_dtype rt, mm_plan* p) {
    memset(p, 0, sizeof *p);
    int32_t na = av->ndim, nb = bv->ndim, on = ov->ndim;
    p->rt = rt;
    p->ct = rt == HG_DTYPE_F16 || rt == HG_DTYPE_BF16 ? HG_DTYPE_F32 : rt;
    p->od = ov->dtype;
    p->k = av->shape[na - 1];
    p->m = na >= 2 ? av->shape[na - 2] : 1;
    p->n = nb >= 2 ? bv->shape[nb - 1] : 1;
    p->a = (mm_mat){av->data, av->dtype, p->m, p->k, na >= 2 ? av->strides[na - 2] : 0,
                    av->strides[na - 1]};
    p->b = (mm_mat){bv->data, bv->dtype, p->k, p->n, nb >= 2 ? bv->strides[nb - 2] : bv->strides[0],
                    nb >= 2 ? bv->strides[nb - 1] : 0};
    p->o = ov->data;
    int32_t tail = (na >= 2) + (nb >= 2);
    p->o_rs = na >= 2 ? ov->strides[on - tail] : 0;
    p->o_cs = nb >= 2 ? ov->strides[on - 1] : 0;
    int32_t nbd = on - tail, ba = na >= 2 ? na - 2 : 0, bb = nb >= 2 ? nb - 2 : 0;
    for (int32_t d = 0; d < nbd; d++) {
        if (ov->shape[d] == 1) continue;   // size-1 batch dims: nothing to iterate
        int32_t ia = d - (nbd - ba), ib = d - (nbd - bb);
        int32_t q = p->nbatch++;
        p->bshape[q] = ov->shape[d];
        p->a_bs[q] = ia >= 0 && av->shape[ia] != 1 ? av->strides[ia] : 0;
        p->b_bs[q] = ib >= 0 && bv->shape[ib] != 1 ? bv->strides[ib] : 0;
        p->o_bs[q] = ov->strides[d];
    }
}

// Folds inner batch dims into m where b is broadcast over them and a and out continue their
// row stride across them: (B, M, K) @ (K, N) becomes one (B*M, K) @ (K, N) product.
static void fold_batches(mm_plan* p) {
    while (p->nbatch > 0) {
        int32_t d = p->nbatch - 1;
        if (p->b_bs[d] != 0) return;
        int64_t a_rs = p->m == 1 ? p->a_bs[d] : p->a.rs;
        int64_t o_rs = p->m == 1 ? p->o_bs[d] : p->o_rs;
        if (p->a_bs[d] != a_rs * p->m || p->o_bs[d] != o_rs * p->m) return;
        p->a.rs = a_rs;
        p->o_rs = o_rs;
        p->m *= p->bshape[d];
        p->a.rows = p->m;
        p->nbatch--;
    }
}

// Walks the batch elements in row-major order over bshape, with the element offsets of a, b
// and out of each.
typedef struct mm_batch {
    int64_t idx[HG_MAX_DIMS];
    int64_t left;              // batch elements still to visit, this one included
    int64_t ao, bo, oo;
} mm_batch;

static void batch_offsets(const mm_plan* p, mm_batch* it) {
    it->ao = it->bo = it->oo = 0;
    for (int32_t d = 0; d < p->nbatch; d++) {
        it->ao += it->idx[d] * p->a_bs[d];
        it->bo += it->idx[d] * p->b_bs[d];
        it->oo += it->idx[d] * p->o_bs[d];
    }
}

static void batch_start(const mm_plan* p, mm_batch* it) {
    it->left = 1;
    for (int32_t d = 0; d < p->nbatch; d++) {
        it->left *= p->bshape[d];
        it->idx[d] = 0;
    }
    batch_offsets(p, it);
}

static void batch_next(const mm_plan* p, mm_batch* it) {
    if (--it->left <= 0) return;
    for (int32_t d = p->nbatch - 1; d >= 0; d--) {
        if (++it->idx[d] < p->bshape[d]) break;
        it->idx[d] = 0;
    }
    batch_offsets(p, it);
}

typedef struct mm_scratch {
    void* a;         // operand a converted (rows*cols of ct) or NULL
    void* b;
    void* c;         // result in ct before the store
} mm_scratch;

// Needs: which operands go through a converted copy, and whether C goes through scratch.
static int needs_copy_f32(const mm_mat* x) {
    int t;
    int64_t ld;
    return x->dt != HG_DTYPE_F32 || !sgemm_layout(x, &t, &ld);
}

// Products through the backend's BLAS: one (batch 1: sgemm for f32, gemm_ex for f64/f16/bf16)
// or `batch` of them whose a, b and out slices lie sa, sb and so elements apart (the
// gemm_strided_batched slot). a and b in sgemm layouts; C = o with unit column stride
// (row-major, leading dimension o_rs) or else unit row stride (then C^T = op(B)^T op(A)^T, the
// operands and transpose flags swapped).
static hg_status blas_call(hg_op_ctx* c, hg_dtype t, int64_t m, int64_t n, int64_t k,
                           const mm_mat* a, const mm_mat* b, void* o, int64_t o_rs, int64_t o_cs,
                           int64_t sa, int64_t sb, int64_t so, int64_t batch) {
    int ta = 0, tb = 0;
    int64_t lda = 0, ldb = 0;
    sgemm_layout(a, &ta, &lda);
    sgemm_layout(b, &tb, &ldb);
    int64_t c_rs = m == 1 ? n : o_rs, c_cs = n == 1 ? 1 : o_cs;
    const hg_backend_vtable* vt = c->ex->vt;
    void* st = c->ex->state;
    if (c_cs != 1) {   // C^T = op(B)^T op(A)^T
        const mm_mat* x = a;
        a = b;
        b = x;
        int64_t y = m; m = n; n = y;
        y = lda; lda = ldb; ldb = y;
        y = sa; sa = sb; sb = y;
        int z = ta; ta = !tb; tb = !z;
        c_rs = c_cs;
    }
    if (batch != 1)
        return vt->gemm_strided_batched(st, t, ta, tb, m, n, k, 1.0, a->data, lda, sa, b->data,
                                        ldb, sb, 0.0, o, c_rs, so, batch);
    if (t == HG_DTYPE_F32)
        return vt->sgemm(st, ta, tb, m, n, k, 1.0f, (const float*)a->data, lda,
                         (const float*)b->data, ldb, 0.0f, o, c_rs);
    return vt->gemm_ex(st, t, ta, tb, m, n, k, 1.0, a->data, lda, b->data, ldb, 0.0, o, c_rs);
}

static hg_status run_one(hg_op_ctx* c, const mm_plan* p, const mm_mat* a0, const mm_mat* b0,
                         unsigned char* o, int direct_out, mm_scratch* s) {
    int64_t m = p->m, n = p->n, k = p->k;
    mm_mat a = *a0, b = *b0;
    if (p->ct == HG_DTYPE_F32) {
        if (needs_copy_f32(&a)) {
            convert_operand(&a, HG_DTYPE_F32, s->a);
            a = (mm_mat){s->a, HG_DTYPE_F32, m, k, k, 1};
        }
        if (needs_copy_f32(&b)) {
            convert_operand(&b, HG_DTYPE_F32, s->b);
            b = (mm_mat){s->b, HG_DTYPE_F32, k, n, n, 1};
        }
        hg_status st = blas_call(c, HG_DTYPE_F32, m, n, k, &a, &b, direct_out ? (void*)o : s->c,
                                 direct_out ? p->o_rs : n, direct_out ? p->o_cs : 1, 0, 0, 0, 1);
        if (st) return st;
    } else if (p->ct == HG_DTYPE_F64) {
        if (a.dt != HG_DTYPE_F64) {
            convert_operand(&a, HG_DTYPE_F64, s->a);
            a = (mm_mat){s->a, HG_DTYPE_F64, m, k, k, 1};
        }
        if (b.dt != HG_DTYPE_F64) {
            convert_operand(&b, HG_DTYPE_F64, s->b);
            b = (mm_mat){s->b, HG_DTYPE_F64, k, n, n, 1};
        }
        double* cp = direct_out ? (double*)o : s->c;
        const hg_backend_vtable* vt = c->ex->vt;
        if (hg_op_route_of(c, HG_OPF_MATMUL, HG_DTYPE_F64) != HG_ROUTE_LIBRARY)
            return hg_error(HG_ERR_UNSUPPORTED, "%s: the %s backend has no f64 GEMM", c->fn,
                            vt->name);
        hg_status st = vt->dgemm_strided(c->ex->state, m, n, k, (const double*)a.data, a.rs,
                                         a.cs, (const double*)b.data, b.rs, b.cs, cp,
                                         direct_out ? p->o_rs : n, direct_out ? p->o_cs : 1);
        if (st) return hg_error_prefix(st, "%s", c->fn);
    } else {
        convert_operand(&a, p->ct, s->a);
        convert_operand(&b, p->ct, s->b);
        hg_status st = hg_mm_int(c, p->ct, m, n, k, s->a, s->b, s->c);
        if (st) return st;
    }
    if (!direct_out) store_result(p->rt, p->ct, s->c, m, n, p->od, o, p->o_rs, p->o_cs);
    return HG_OK;
}

// Whether out (the plan's slice) has a layout BLAS writes: unit column stride with rows that do
// not overlap, or the transposed form.
static int blas_out_layout(const mm_plan* p) {
    int64_t rs = p->m <= 1 ? p->n : p->o_rs, cs = p->n <= 1 ? 1 : p->o_cs;
    if (cs == 1 && rs >= (p->n > 1 ? p->n : 1)) return 1;
    rs = p->m <= 1 ? 1 : p->o_rs;
    cs = p->n <= 1 ? p->m : p->o_cs;
    return rs == 1 && cs >= (p->m > 1 ? p->m : 1);
}

// Out can be written by the kernel directly: same dtype as computed, not overlapping an input
// (in-place goes through scratch), and a layout the kernel writes (f32: a unit stride and a
// non-overlapping leading dimension; f64: any strides).
static int out_direct(const mm_plan* p, int overlaps) {
    if (overlaps || p->od != p->rt || p->rt != p->ct) return 0;
    if (p->ct == HG_DTYPE_F64) return 1;
    return p->ct == HG_DTYPE_F32 && blas_out_layout(p);
}

// Whether the product goes to the backend's BLAS directly (cuBLAS: sgemm for f32, gemm_ex for
// f64, f16 and bf16; the CPU backend: f32): a, b and out all of the result dtype, a and b in
// layouts it reads in place with valid leading dimensions, out written in place (no overlap),
// k > 0.
static int device_blas_ok(const hg_op_ctx* c, const mm_plan* p, int overlaps) {
    hg_dtype t = p->rt;
    if (overlaps || p->k == 0 || p->od != t || p->a.dt != t || p->b.dt != t) return 0;
    if (hg_op_route_of(c, HG_OPF_MATMUL, t) != HG_ROUTE_LIBRARY || !blas_out_layout(p)) return 0;
    int ta, tb;
    int64_t lda, ldb;
    if (!sgemm_layout(&p->a, &ta, &lda) || !sgemm_layout(&p->b, &tb, &ldb)) return 0;
    int64_t need_a = ta ? p->m : p->k, need_b = tb ? p->k : p->n;
    return lda >= (need_a > 1 ? need_a : 1) && ldb >= (need_b > 1 ? need_b : 1);
}

// The innermost batch dims of p that one strided-batched call covers: the longest run of them
// over which a, b and out each advance by one stride (*sa, *sb, *so elements; a and b may stay
// put, out moves past a whole product each step so that no two products overlap), and its
// first dim (*from). Returns the run's element count, 1 when there is no such run.
static int64_t batch_run(const mm_plan* p, int32_t* from, int64_t* sa, int64_t* sb, int64_t* so) {
    int32_t d = p->nbatch - 1;
    *from = p->nbatch;
    if (d < 0) return 1;
    int64_t rs = p->m <= 1 ? 0 : p->o_rs, cs = p->n <= 1 ? 0 : p->o_cs;
    int64_t a_bs = p->a_bs[d], b_bs = p->b_bs[d], o_bs = p->o_bs[d];
    if (a_bs < 0 || b_bs < 0 || o_bs < (p->m - 1) * rs + (p->n - 1) * cs + 1) return 1;
    int64_t count = p->bshape[d];
    for (; d > 0; d--) {   // extend outwards while dim d-1 continues dim d's stride
        if (p->a_bs[d - 1] != a_bs * count || p->b_bs[d - 1] != b_bs * count ||
            p->o_bs[d - 1] != o_bs * count)
            break;
        count *= p->bshape[d - 1];
    }
    *from = d;
    *sa = a_bs;
    *sb = b_bs;
    *so = o_bs;
    return count;
}

// A "launch" span for one device library call (tracing on): gemm, or gemm_strided_batched
// with its batch count.
static void trace_blas(const hg_op_ctx* c, hg_trace_span* sp, const mm_plan* p, int64_t batch,
                       hg_status s) {
    hg_trace_event e;
    hg_trace_event_init(&e, "launch", batch == 1 ? "gemm" : "gemm_strided_batched");
    e.executor = hg_backend_name(c->ex->kind);
    e.executor_id = c->ex->handle;
    e.dtype = (int)p->rt;
    e.ndim = 3;
    e.shape[0] = batch;
    e.shape[1] = p->m;
    e.shape[2] = p->n;
    snprintf(e.detail, sizeof e.detail, "batch %lld m %lld n %lld k %lld%s", (long long)batch,
             (long long)p->m, (long long)p->n, (long long)p->k, s ? " failed" : "");
    hg_trace_span_end(sp, &e);
}

// The BLAS path (device addresses on a device, host ones for the CPU backend's f32): the
// innermost batch dims that collapse into one stride per operand go to one strided-batched call
// (where the backend has it), the dims outside them are looped over; else one library call per
// batch element. trace: device launches are traced (host library calls are not).
static hg_status blas_batched(hg_op_ctx* c, const mm_plan* p, int trace) {
    size_t es = hg_dtype_size(p->rt);
    int32_t from = p->nbatch;
    int64_t run = 1, sa = 0, sb = 0, so = 0;
    if (c->ex->vt->gemm_strided_batched) run = batch_run(p, &from, &sa, &sb, &so);
    mm_plan outer = *p;   // the batch dims before the run
    outer.nbatch = from;
    mm_batch it;
    hg_status s = HG_OK;
    for (batch_start(&outer, &it); it.left > 0 && !s; batch_next(&outer, &it)) {
        mm_mat a1 = p->a, b1 = p->b;
        a1.data += it.ao * (int64_t)es;
        b1.data += it.bo * (int64_t)es;
        hg_trace_span sp = {0, 0};
        if (trace && hg_trace_on()) hg_trace_span_begin(&sp);
        s = blas_call(c, p->rt, p->m, p->n, p->k, &a1, &b1, p->o + it.oo * (int64_t)es, p->o_rs,
                      p->o_cs, sa, sb, so, run);
        if (sp.t0) trace_blas(c, &sp, p, run, s);
    }
    return s;
}

// On a device, everything else: the ISA kernel (through a temporary when out is an input).
static hg_status device_kernel(hg_op_ctx* c, const mm_plan* p, const hg_tensor* a,
                               const hg_tensor* b, const hg_tensor* out, int overlaps) {
    hg_dev_mm d;
    memset(&d, 0, sizeof d);
    d.m = p->m; d.n = p->n; d.k = p->k;
    d.a_rs = p->a.rs; d.a_cs = p->a.cs; d.b_rs = p->b.rs; d.b_cs = p->b.cs;
    d.o_rs = p->o_rs; d.o_cs = p->o_cs;
    d.nbatch = p->nbatch;
    for (int32_t i = 0; i < p->nbatch; i++) {
        d.bshape[i] = p->bshape[i];
        d.a_bs[i] = p->a_bs[i]; d.b_bs[i] = p->b_bs[i]; d.o_bs[i] = p->o_bs[i];
    }
    if (!overlaps) return hg_dev_matmul(c, &d, a, b, p->rt, out, 0, 1.0, 0.0);
    hg_tensor t;
    memset(&t, 0, sizeof t);
    hg_status s = hg_op_output(c, &t, out->dtype, out->ndim, out->shape, 0);
    if (s) return s;
    // The temporary is C-contiguous: recompute out's strides for it.
    hg_host_view tv;
    memset(&tv, 0, sizeof tv);
    int64_t st = 1;
    for (int32_t i = out->ndim - 1; i >= 0; i--) {
        tv.strides[i] = st;
        st *= out->shape[i] > 1 ? out->shape[i] : 1;
    }
    int32_t tail = (a->ndim >= 2) + (b->ndim >= 2), on = out->ndim;
    d.o_rs = a->ndim >= 2 ? tv.strides[on - tail] : 0;
    d.o_cs = b->ndim >= 2 ? tv.strides[on - 1] : 0;
    // Batch strides: build_plan kept out's batch dims of size > 1 in order (no folding when
    // out overlaps an input); the temporary's dims of the same index replace them.
    for (int32_t i = 0, q = 0; i < on - tail && q < d.nbatch; i++)
        if (out->shape[i] != 1) d.o_bs[q++] = tv.strides[i];
    s = hg_dev_matmul(c, &d, a, b, p->rt, &t, 0, 1.0, 0.0);
    if (!s) s = hg_tensor_copy(out, &t);
    hg_buffer_destroy(t.buffer);
    return s;
}

hg_status hg_matmul_into(hg_op_ctx* c, const hg_tensor* a, const hg_tensor* b,
                         const hg_tensor* out) {
    hg_host_view av, bv, ov;
    hg_status s;
    // Cheap re-checks that also bind c->ex when the caller (the graph runtime) has not.
    if ((s = hg_op_input(c, a, "a", NULL, NULL)) || (s = hg_op_input(c, b, "b", NULL, NULL)) ||
        (s = hg_op_input(c, out, "out", NULL, NULL)))
        return s;
    // On a device the views carry device addresses, used only by sgemm calls.
    int dev = !hg_op_host_memory(c);
    hg_status (*view)(hg_op_ctx*, const hg_tensor*, hg_host_view*) =
        dev ? hg_op_raw_view : hg_op_host_view;
    if ((s = view(c, a, &av)) || (s = view(c, b, &bv)) || (s = view(c, out, &ov))) return s;
    hg_dtype rt;
    if ((s = hg_result_type(a->dtype, b->dtype, &rt))) return s;
    if (av.ndim < 1 || bv.ndim < 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: matmul operands need at least 1 dim", c->fn);
    if (hg_op_route_of(c, HG_OPF_MATMUL, HG_DTYPE_F32) != HG_ROUTE_LIBRARY)
        return hg_error(HG_ERR_UNSUPPORTED, "%s: the %s backend has no sgemm", c->fn,
                        c->ex ? c->ex->vt->name : "(none)");
    mm_plan p;
    build_plan(&av, &bv, &ov, rt, &p);
    if (p.m == 0 || p.n == 0 || ov.numel == 0) return HG_OK;
    int overlaps = hg_op_overlaps(out, a) || hg_op_overlaps(out, b);
    if (!overlaps) fold_batches(&p);
    int direct = out_direct(&p, overlaps);
    if (dev)
        return device_blas_ok(c, &p, overlaps) ? blas_batched(c, &p, 1)
                                               : device_kernel(c, &p, a, b, out, overlaps);
    // Batched f32 in BLAS layouts on the host: one strided-batched call per run of batch dims
    // (the CPU backend runs small products whole on its threads, several at once: a 16 x 64^3
    // bmm on 2 threads went from 1 thread per product to 2 products at a time).
    if (p.nbatch > 0 && p.ct == HG_DTYPE_F32 && c->ex->vt->gemm_strided_batched &&
        device_blas_ok(c, &p, overlaps))
        return blas_batched(c, &p, 0);
    int64_t m = p.m, n = p.n, k = p.k;
    if (k == 0) {   // an empty sum: zeros of the result dtype
        static const unsigned char zero[8];
        int64_t idx[HG_MAX_DIMS] = {0};
        size_t oes = hg_dtype_size(ov.dtype);
        for (int64_t e = 0; e < ov.numel; e++) {
            int64_t off = 0;
            for (int32_t d = 0; d < ov.ndim; d++) off += idx[d] * ov.strides[d];
            memcpy(ov.data + off * (int64_t)oes, zero, oes);   // 0 bits = 0 in every dtype
            for (int32_t d = ov.ndim - 1; d >= 0; d--) {
                if (++idx[d] < ov.shape[d]) break;
                idx[d] = 0;
            }
        }
        return HG_OK;
    }
    // Scratch for converted operands and a C that is not written in place.
    size_t ces = hg_dtype_size(p.ct);
    int copy_a, copy_b;
    if (p.ct == HG_DTYPE_F32) {
        copy_a = needs_copy_f32(&p.a);
        copy_b = needs_copy_f32(&p.b);
    } else if (p.ct == HG_DTYPE_F64) {
        copy_a = p.a.dt != HG_DTYPE_F64;
        copy_b = p.b.dt != HG_DTYPE_F64;
    } else {
        copy_a = copy_b = 1;
    }
    mm_scratch sc = {NULL, NULL, NULL};
    if (copy_a) sc.a = malloc((size_t)(m * k) * ces);
    if (copy_b) sc.b = malloc((size_t)(k * n) * ces);
    if (!direct) sc.c = malloc((size_t)(m * n) * ces);
    if ((copy_a && !sc.a) || (copy_b && !sc.b) || (!direct && !sc.c)) {
        free(sc.a); free(sc.b); free(sc.c);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for matmul scratch (%lld x %lld x "
                        "%lld, %s)", c->fn, (long long)m, (long long)k, (long long)n,
                        hg_dtype_name(p.ct));
    }
    size_t aes = hg_dtype_size(p.a.dt), bes = hg_dtype_size(p.b.dt), oes = hg_dtype_size(p.od);
    mm_batch it;
    for (batch_start(&p, &it); it.left > 0 && !s; batch_next(&p, &it)) {
        mm_mat a1 = p.a, b1 = p.b;
        a1.data += it.ao * (int64_t)aes;
        b1.data += it.bo * (int64_t)bes;
        s = run_one(c, &p, &a1, &b1, p.o + it.oo * (int64_t)oes, direct, &sc);
    }
    free(sc.a); free(sc.b); free(sc.c);
    return s;
}

// ---------------------------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------------------------

static hg_status matmul_dtype(hg_op_ctx* c, hg_dtype a, hg_dtype b, hg_dtype* rt) {
    hg_status s = hg_result_type(a, b, rt);
    if (s) return hg_error_prefix(s, "%s", c->fn);
    return HG_OK;
}

static hg_status matmul_checked(hg_op_ctx* c, const hg_tensor* a, const hg_tensor* b,
                                hg_tensor* out) {
    hg_status s;
    if ((s = hg_op_input(c, a, "a", NULL, NULL)) || (s = hg_op_input(c, b, "b", NULL, NULL)))
        return s;
    int32_t nd;
    int64_t shape[HG_MAX_DIMS];
    if ((s = hg_matmul_shape(c, a->ndim, a->shape, b->ndim, b->shape, &nd, shape))) return s;
    hg_dtype rt;
    if ((s = matmul_dtype(c, a->dtype, b->dtype, &rt))) return s;
    if ((s = hg_op_output(c, out, rt, nd, shape, 1))) return s;
    // numpy's overlap rule: hg_matmul_into computes an out that overlaps a or b into a
    // temporary first.
    return hg_op_finish(c, out, hg_matmul_into(c, a, b, out));
}

HG_API hg_status hg_matmul(const hg_tensor* a, const hg_tensor* b, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_matmul");
    return matmul_checked(&c, a, b, out);
}

HG_API hg_status hg_matvec(const hg_tensor* a, const hg_tensor* x, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_matvec");
    hg_status s;
    if ((s = hg_op_input(&c, a, "a", NULL, NULL)) || (s = hg_op_input(&c, x, "x", NULL, NULL)))
        return s;
    char sa[HG_DIMS_TEXT], sx[HG_DIMS_TEXT];
    if (a->ndim != 2 || x->ndim != 1)
        return hg_error(HG_ERR_SIZE_MISMATCH,
                        "hg_matvec: a must be 2-D (m, n) and x 1-D (n), got shapes %s and %s",
                        hg_op_dims(sa, a->ndim, a->shape), hg_op_dims(sx, x->ndim, x->shape));
    return matmul_checked(&c, a, x, out);
}
