// Integer and bool matmul kernel (hg_mm_int, see matmul.h). numpy accumulates integer matmul
// in the result dtype, so every product and sum wraps in that width: the kernel computes in
// the unsigned type of the same width (two's complement gives the same bits as signed wrap,
// without C's undefined signed overflow). Loop order i-k-j: the j loop is a contiguous
// multiply-add over one row of B into one row of C, which GCC vectorizes; columns are taken
// in chunks so a chunk of C's row stays in L1 while B's rows stream through.
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/linalg/matmul.h"

enum { INT_COL_CHUNK = 512 };

typedef struct int_job {
    hg_dtype dt;
    int64_t m, n, k;
    const void* a;
    const void* b;
    void* c;
    int nworkers;
} int_job;

// Rows r0..r1 of C for one unsigned type T; W is the type products are formed in (u8 and u16
// promote to int in C, whose overflow is undefined: multiply in uint32_t instead).
#define HG_MM_INT_ROWS(T, W)                                                                    \
    static void rows_##T(const int_job* j, int64_t r0, int64_t r1) {                          \
        const T* a = j->a;                                                                      \
        const T* b = j->b;                                                                      \
        T* c = j->c;                                                                            \
        int64_t n = j->n, k = j->k;                                                             \
        for (int64_t j0 = 0; j0 < n; j0 += INT_COL_CHUNK) {                                     \
            int64_t nc = n - j0 < INT_COL_CHUNK ? n - j0 : INT_COL_CHUNK;                       \
            for (int64_t i = r0; i < r1; i++) {                                                 \
                T* ci = c + i * n + j0;                                                         \
                for (int64_t q = 0; q < nc; q++) ci[q] = 0;                                     \
                for (int64_t p = 0; p < k; p++) {                                               \
                    W av = (W)a[i * k + p];                                                     \
                    const T* bp = b + p * n + j0;                                               \
                    for (int64_t q = 0; q < nc; q++) ci[q] = (T)(ci[q] + (T)(av * (W)bp[q]));   \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }
HG_MM_INT_ROWS(uint8_t, uint32_t)
HG_MM_INT_ROWS(uint16_t, uint32_t)
HG_MM_INT_ROWS(uint32_t, uint32_t)
HG_MM_INT_ROWS(uint64_t, uint64_t)

// bool: numpy gives OR over k of (a AND b). Operands hold 0/1.
static void rows_bool(const int_job* j, int64_t r0, int64_t r1) {
    const uint8_t* a = j->a;
    const uint8_t* b = j->b;
    uint8_t* c = j->c;
    int64_t n = j->n, k = j->k;
    for (int64_t i = r0; i < r1; i++) {
        uint8_t* ci = c + i * n;
        memset(ci, 0, (size_t)n);
        for (int64_t p = 0; p < k; p++) {
            if (!a[i * k + p]) continue;
            const uint8_t* bp = b + p * n;
            for (int64_t q = 0; q < n; q++) ci[q] |= bp[q];
        }
    }
}

static void int_rows(const int_job* j, int64_t r0, int64_t r1) {
    if (j->dt == HG_DTYPE_BOOL) { rows_bool(j, r0, r1); return; }
    switch (hg_dtype_size(j->dt)) {
    case 1: rows_uint8_t(j, r0, r1); break;
    case 2: rows_uint16_t(j, r0, r1); break;
    case 4: rows_uint32_t(j, r0, r1); break;
    default: rows_uint64_t(j, r0, r1); break;
    }
}

static void int_worker(void* ctx, int w) {
    const int_job* j = ctx;
    int64_t r0 = j->m * w / j->nworkers, r1 = j->m * (w + 1) / j->nworkers;
    if (r0 < r1) int_rows(j, r0, r1);
}

hg_status hg_mm_int(hg_op_ctx* c, hg_dtype dt, int64_t m, int64_t n, int64_t k, const void* a,
                    const void* b, void* out) {
    if (!(hg_dtype_is_int((int)dt) || dt == HG_DTYPE_BOOL))
        return hg_error(HG_ERR_INTERNAL, "%s: integer matmul kernel called for %s", c->fn,
                        hg_dtype_name(dt));
    int_job j = {dt, m, n, k, a, b, out, 1};
    double work = (double)m * (double)n * (double)k;
    int nw = work < 1e6 ? 1 : hg_op_num_threads(c);
    if (nw > m) nw = (int)m;
    if (nw <= 1) {
        int_rows(&j, 0, m);
        return HG_OK;
    }
    j.nworkers = nw;
    return hg_op_parallel(c, nw, int_worker, &j, &j.nworkers);
}
