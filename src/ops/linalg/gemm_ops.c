// hg_gemm: BLAS gemm on 2-D tensors, c = alpha * op(a) @ op(b) + beta * c (floats only).
// f32 operands and c go straight to the backend's sgemm slot (alpha and beta included, no
// copies for unit-stride layouts), and on a device with a gemm_ex slot (cuBLAS) so do f64, f16
// and bf16 ones; other cases compute op(a) @ op(b) with the matmul machinery into a temporary
// of the result dtype, then c = alpha * t + beta * c in double, rounded once into c's dtype
// (on a device: one ISA kernel for both). beta == 0 never reads c (NaN there is ignored, as
// BLAS).
#include <string.h>
#include "backends/backend.h"
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_ops.h"
#include "ops/linalg/matmul.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"

// View of t transposed (2-D).
static hg_tensor transposed(const hg_tensor* t) {
    hg_tensor r = *t;
    r.shape[0] = t->shape[1];
    r.shape[1] = t->shape[0];
    r.strides[0] = t->strides[1];
    r.strides[1] = t->strides[0];
    return r;
}

// A row-major (trans 0) or column-major (trans 1) matrix with leading dim ld, if the view is
// one; size-1 dims have no meaningful stride.
static int blas_layout(const hg_tensor* t, int* trans, int64_t* ld) {
    int64_t r = t->shape[0], cc = t->shape[1];
    int64_t rs = r <= 1 ? (cc > 1 ? cc : 1) : t->strides[0];
    int64_t cs = cc <= 1 ? 1 : t->strides[1];
    if (cs == 1 && rs >= 0) { *trans = 0; *ld = rs; return 1; }
    if (rs == 1 && cs >= 0) { *trans = 1; *ld = cs; return 1; }
    return 0;
}

// The backend's BLAS directly on the views (sgemm for f32; gemm_ex for f64/f16/bf16 on a
// device that has it) when a, b and c share the dtype and have BLAS layouts (c: unit column
// stride and non-overlapping rows, or the transposed form). Returns 1 when it ran (status in
// *st).
static int gemm_blas_direct(hg_op_ctx* c, const hg_tensor* a, const hg_tensor* b, double alpha,
                            double beta, const hg_tensor* ct, hg_status* st) {
    hg_dtype t = ct->dtype;
    const hg_backend_vtable* vt = c->ex->vt;
    if (a->dtype != t || b->dtype != t) return 0;
    int f32 = t == HG_DTYPE_F32, host = hg_op_host_memory(c);
    // Host f64 has a library route too (dgemm_strided), taken through hg_matmul_into below.
    if (hg_op_route_of(c, HG_OPF_MATMUL, t) != HG_ROUTE_LIBRARY || (!f32 && host)) return 0;
    int ta, tb;
    int64_t lda, ldb;
    if (!blas_layout(a, &ta, &lda) || !blas_layout(b, &tb, &ldb)) return 0;
    int64_t m = ct->shape[0], n = ct->shape[1], k = a->shape[1];
    int64_t crs = m <= 1 ? (n > 1 ? n : 1) : ct->strides[0], ccs = n <= 1 ? 1 : ct->strides[1];
    int64_t trs = m <= 1 ? 1 : ct->strides[0], tcs = n <= 1 ? (m > 1 ? m : 1) : ct->strides[1];
    // alpha == 0 must not read a or b (NaN there is ignored, as BLAS); the device kernel
    // guarantees it whatever the vendor library does.
    if (!host && alpha == 0.0) return 0;
    // cuBLAS wants leading dimensions of at least the rows' lengths.
    if (!host &&
        (lda < ((ta ? m : k) > 1 ? (ta ? m : k) : 1) || ldb < ((tb ? k : n) > 1 ? (tb ? k : n) : 1)))
        return 0;
    // Raw views: device addresses on a device, handed to its sgemm only.
    hg_host_view av, bv, cv;
    if ((*st = hg_op_raw_view(c, a, &av)) || (*st = hg_op_raw_view(c, b, &bv)) ||
        (*st = hg_op_raw_view(c, ct, &cv)))
        return 1;
    void* state = c->ex->state;
    if (ccs == 1 && crs >= (n > 1 ? n : 1)) {
        *st = f32 ? vt->sgemm(state, ta, tb, m, n, k, (float)alpha, (const float*)av.data, lda,
                              (const float*)bv.data, ldb, (float)beta, (float*)cv.data, crs)
                  : vt->gemm_ex(state, t, ta, tb, m, n, k, alpha, av.data, lda, bv.data, ldb,
                                beta, cv.data, crs);
        return 1;
    }
    if (trs == 1 && tcs >= (m > 1 ? m : 1)) {   // c^T = op(b)^T op(a)^T
        *st = f32 ? vt->sgemm(state, !tb, !ta, n, m, k, (float)alpha, (const float*)bv.data, ldb,
                              (const float*)av.data, lda, (float)beta, (float*)cv.data, tcs)
                  : vt->gemm_ex(state, t, !tb, !ta, n, m, k, alpha, bv.data, ldb, av.data, lda,
                                beta, cv.data, tcs);
        return 1;
    }
    return 0;
}

HG_API hg_status hg_gemm(int trans_a, int trans_b, double alpha, const hg_tensor* a,
                         const hg_tensor* b, double beta, const hg_tensor* ct) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_gemm");
    hg_status s;
    if ((s = hg_op_input(&c, a, "a", NULL, NULL)) || (s = hg_op_input(&c, b, "b", NULL, NULL)))
        return s;
    if (!ct) return hg_error(HG_ERR_NULL_POINTER, "hg_gemm: argument 'c' is NULL");
    if ((s = hg_op_existing_output(&c, ct, "c"))) return s;
    if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_gemm: trans_a and trans_b must be 0 or 1, got %d and %d", trans_a,
                        trans_b);
    char sa[HG_DIMS_TEXT], sb[HG_DIMS_TEXT], sc[HG_DIMS_TEXT];
    if (a->ndim != 2 || b->ndim != 2 || ct->ndim != 2)
        return hg_error(HG_ERR_SIZE_MISMATCH,
                        "hg_gemm: a, b and c must be 2-D, got shapes %s, %s and %s",
                        hg_op_dims(sa, a->ndim, a->shape), hg_op_dims(sb, b->ndim, b->shape),
                        hg_op_dims(sc, ct->ndim, ct->shape));
    hg_tensor oa = trans_a ? transposed(a) : *a, ob = trans_b ? transposed(b) : *b;
    if (oa.shape[1] != ob.shape[0] || ct->shape[0] != oa.shape[0] || ct->shape[1] != ob.shape[1])
        return hg_error(HG_ERR_SIZE_MISMATCH,
                        "hg_gemm: op(a) %s times op(b) %s does not fit c %s (need op(a) (m, k), "
                        "op(b) (k, n), c (m, n); trans_a %d, trans_b %d)",
                        hg_op_dims(sa, 2, oa.shape), hg_op_dims(sb, 2, ob.shape),
                        hg_op_dims(sc, 2, ct->shape), trans_a, trans_b);
    hg_dtype rt;
    if ((s = hg_result_type(a->dtype, b->dtype, &rt))) return hg_error_prefix(s, "hg_gemm");
    if (!hg_dtype_is_float((int)rt) || !hg_dtype_is_float((int)ct->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "hg_gemm: floats only (a %s, b %s, c %s); use hg_matmul for integers",
                        hg_dtype_name(a->dtype), hg_dtype_name(b->dtype), hg_dtype_name(ct->dtype));
    if (hg_op_route_of(&c, HG_OPF_MATMUL, HG_DTYPE_F32) != HG_ROUTE_LIBRARY)
        return hg_error(HG_ERR_UNSUPPORTED, "hg_gemm: the %s backend has no sgemm", c.ex->vt->name);
    int64_t m = ct->shape[0], n = ct->shape[1];
    if (m == 0 || n == 0) return HG_OK;
    // numpy's overlap rule: a or b overlapping c (which is written while they are read) is
    // read first, into a copy.
    const hg_tensor *ra = a, *rb = b;
    if ((s = hg_op_read_first(&c, ct, &ra, 0)) || (s = hg_op_read_first(&c, ct, &rb, 0))) return s;
    if (ra != a) oa = trans_a ? transposed(ra) : *ra;
    if (rb != b) ob = trans_b ? transposed(rb) : *rb;
    if (gemm_blas_direct(&c, &oa, &ob, alpha, beta, ct, &s)) return s;
    if (!hg_op_host_memory(&c)) {   // one device kernel: the product and the update
        hg_dev_mm d;
        memset(&d, 0, sizeof d);
        d.m = m; d.n = n; d.k = oa.shape[1];
        d.a_rs = oa.strides[0]; d.a_cs = oa.strides[1];
        d.b_rs = ob.strides[0]; d.b_cs = ob.strides[1];
        d.o_rs = ct->strides[0]; d.o_cs = ct->strides[1];
        return hg_dev_matmul(&c, &d, &oa, &ob, rt, ct, 1, alpha, beta);
    }
    hg_host_view cv;
    if ((s = hg_op_host_view(&c, ct, &cv))) return s;
    // t = op(a) @ op(b) in the result dtype, then c = alpha * t + beta * c.
    hg_tensor t;
    memset(&t, 0, sizeof t);
    int64_t shape[2] = {m, n};
    if ((s = hg_op_output(&c, &t, rt, 2, shape, 0))) return s;
    s = hg_matmul_into(&c, &oa, &ob, &t);
    if (!s) {
        hg_host_view tv;
        s = hg_op_host_view(&c, &t, &tv);
        size_t tes = hg_dtype_size(rt), ces = hg_dtype_size(ct->dtype);
        for (int64_t i = 0; !s && i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                unsigned char* cp = cv.data + (i * cv.strides[0] + j * cv.strides[1]) * (int64_t)ces;
                // alpha == 0 ignores the product (as BLAS, which then reads neither a nor b).
                double v = alpha == 0.0 ? 0.0 : alpha * hg_op_load_f64(rt, tv.data + (i * n + j) * (int64_t)tes);
                if (beta != 0.0) v += beta * hg_op_load_f64(ct->dtype, cp);
                hg_op_store_f64(ct->dtype, cp, v);
            }
    }
    hg_buffer_destroy(t.buffer);
    return s;
}
