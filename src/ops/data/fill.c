// hg_fill and hg_arange: write every element of an existing strided output (host-visible
// backends), split over the executor's threads when the output is large.
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/data/data_common.h"
#include "ops/common/dev_ops.h"
#include "ops/common/op_dispatch.h"

// Elements per worker below which waking threads costs more than the work.
enum { FILL_GRAIN = 1 << 16, ARANGE_GRAIN = 1 << 14 };

// ---------------------------------------------------------------------------------------------
// hg_fill
// ---------------------------------------------------------------------------------------------

// The element bytes of value in dtype. INT values must fit an integer dtype exactly (numpy 2
// raises OverflowError for np.full(..., 300, dtype=int8)); FLOAT values follow cvt (truncate,
// saturate, NaN -> 0); to bool: nonzero.
static hg_status scalar_bytes(hg_op_ctx* c, hg_dtype dt, hg_scalar v, unsigned char* out) {
    switch (v.kind) {
    case HG_SCALAR_BOOL:
    case HG_SCALAR_INT: {
        int64_t i = v.kind == HG_SCALAR_BOOL ? (v.i != 0) : v.i;
        if (hg_dtype_is_int((int)dt)) {
            int64_t lo = 0;
            uint64_t hi = 0;
            unsigned bits = hg_dtype_bits((int)dt);
            if (hg_dtype_is_signed_int((int)dt)) {
                lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
                hi = bits == 64 ? (uint64_t)INT64_MAX : ((uint64_t)1 << (bits - 1)) - 1;
            } else {
                hi = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
            }
            if (i < lo || (i > 0 && (uint64_t)i > hi))
                return hg_error(HG_ERR_OUT_OF_RANGE,
                                "%s: value %" PRId64 " does not fit dtype %s (valid: %" PRId64
                                "..%" PRIu64 ")", c->fn, i, hg_dtype_name(dt), lo, hi);
            hg_convert_elem(dt, out, HG_DTYPE_I64, &i);
            return HG_OK;
        }
        hg_convert_elem(dt, out, HG_DTYPE_I64, &i);
        return HG_OK;
    }
    case HG_SCALAR_FLOAT:
        hg_convert_from_double(dt, v.f, out);
        return HG_OK;
    default:
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "%s: value.kind %d is not a valid hg_scalar_kind (0..%d)", c->fn,
                        (int)v.kind, HG_SCALAR_KIND_COUNT - 1);
    }
}

typedef struct fill_job {
    hg_host_view v;
    unsigned char value[8];
    size_t es;
} fill_job;

#define FILL_CONTIG(T)                                                                    \
    do {                                                                                  \
        T x;                                                                              \
        memcpy(&x, j->value, sizeof x);                                                   \
        T* p = (T*)(void*)j->v.data + b;                                                  \
        for (int64_t i = 0; i < e - b; i++) p[i] = x;                                     \
    } while (0)

static void fill_range(void* ctx, int64_t b, int64_t e) {
    fill_job* j = ctx;
    if (j->v.ndim == 1 && j->v.strides[0] == 1) {
        switch (j->es) {
        case 1: memset(j->v.data + b, j->value[0], (size_t)(e - b)); break;
        case 2: FILL_CONTIG(uint16_t); break;
        case 4: FILL_CONTIG(uint32_t); break;
        default: FILL_CONTIG(uint64_t); break;
        }
        return;
    }
    hg_cursor cur;
    hg_cursor_init(&cur, &j->v, b);
    for (int64_t i = b; i < e; i++) {
        hg_copy_elem(cur.p, j->value, j->es);
        hg_cursor_next(&cur);
    }
}

hg_status hg_fill(const hg_tensor* out, hg_scalar value) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_fill");
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "hg_fill: argument 'out' is NULL");
    hg_status s = hg_op_existing_output(&c, out, "out");
    if (s) return s;
    fill_job j;
    memset(&j, 0, sizeof j);
    if ((s = scalar_bytes(&c, out->dtype, value, j.value))) return s;
    if (hg_op_route_of(&c, HG_OPF_DATA, out->dtype) == HG_ROUTE_DEVICE) {
        uint64_t bits = 0;
        memcpy(&bits, j.value, hg_dtype_size(out->dtype));   // little-endian hosts
        return hg_dev_fill(&c, out, bits);
    }
    if ((s = hg_op_host_view(&c, out, &j.v))) return s;
    hg_view_coalesce(&j.v);
    j.es = hg_dtype_size(out->dtype);
    return hg_for_range(&c, j.v.numel, FILL_GRAIN, fill_range, &j);
}

// ---------------------------------------------------------------------------------------------
// hg_arange
// ---------------------------------------------------------------------------------------------

typedef struct arange_job {
    hg_host_view v;
    double start, step;
} arange_job;

static void arange_range(void* ctx, int64_t b, int64_t e) {
    arange_job* j = ctx;
    if (j->v.ndim == 1 && j->v.strides[0] == 1 && j->v.dtype == HG_DTYPE_F32) {
        float* p = (float*)(void*)j->v.data;   // contiguous: a loop the compiler vectorizes
        for (int64_t i = b; i < e; i++) p[i] = (float)(j->start + (double)i * j->step);
        return;
    }
    if (j->v.ndim == 1 && j->v.strides[0] == 1 && j->v.dtype == HG_DTYPE_F64) {
        double* p = (double*)(void*)j->v.data;
        for (int64_t i = b; i < e; i++) p[i] = j->start + (double)i * j->step;
        return;
    }
    hg_cursor cur;
    hg_cursor_init(&cur, &j->v, b);
    hg_dtype dt = j->v.dtype;
    for (int64_t i = b; i < e; i++) {
        double v = j->start + (double)i * j->step;
        // f32/f64 inline; the other dtypes through the cvt conversion.
        if (dt == HG_DTYPE_F32) {
            float f = (float)v;
            memcpy(cur.p, &f, 4);
        } else if (dt == HG_DTYPE_F64) {
            memcpy(cur.p, &v, 8);
        } else {
            hg_convert_from_double(dt, v, cur.p);
        }
        hg_cursor_next(&cur);
    }
}

hg_status hg_arange(const hg_tensor* out, double start, double step) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_arange");
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "hg_arange: argument 'out' is NULL");
    hg_status s = hg_op_existing_output(&c, out, "out");
    if (s) return s;
    if (!isfinite(start) || !isfinite(step))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_arange: start (%g) and step (%g) must be finite", start, step);
    if (hg_op_route_of(&c, HG_OPF_DATA, out->dtype) == HG_ROUTE_DEVICE)
        return hg_dev_arange(&c, out, start, step);
    arange_job j;
    memset(&j, 0, sizeof j);
    if ((s = hg_op_host_view(&c, out, &j.v))) return s;
    hg_view_coalesce(&j.v);
    j.start = start;
    j.step = step;
    return hg_for_range(&c, j.v.numel, ARANGE_GRAIN, arange_range, &j);
}
