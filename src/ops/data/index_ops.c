// hg_index_select (numpy.take along an axis / torch.index_select) and hg_gather (torch.gather)
// on host-visible backends. Indices are read and range-checked first (so a bad index writes
// nothing), then out is written in C order, split over the executor's threads when large.
// out may overlap x (numpy's rule): the result then goes through a temporary.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "ops/data/data_common.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_ops.h"
#include "tensor/tensor_internal.h"
#include "ops/common/op_dispatch.h"

enum { INDEX_GRAIN = 1 << 14 };   // elements per worker

typedef struct index_job {
    hg_host_view out, x;
    const int64_t* idx;   // resolved indices (>= 0): by out's axis position or by flat position
    int32_t axis;
    int gather;           // 1: idx is indexed by the flat C-order position of out
} index_job;

static void index_range(void* ctx, int64_t b, int64_t e) {
    index_job* j = ctx;
    int64_t xes = (int64_t)hg_dtype_size(j->x.dtype);
    size_t oes = hg_dtype_size(j->out.dtype);
    int same = j->out.dtype == j->x.dtype;
    hg_cursor cur;
    hg_cursor_init(&cur, &j->out, b);
    int32_t nd = j->out.ndim, last = nd - 1, ax = j->axis;
    int64_t xs_last = j->x.strides[last] * xes, xs_ax = j->x.strides[ax] * xes;
    int64_t os_last = cur.bstrides[last];
    for (int64_t i = b; i < e;) {
        int64_t run = j->out.shape[last] - cur.idx[last];
        if (run > e - i) run = e - i;
        // Source of the run's first element, without the axis term.
        int64_t base = 0;
        for (int32_t d = 0; d < last; d++)
            if (d != ax) base += cur.idx[d] * j->x.strides[d] * xes;
        const unsigned char* xb = j->x.data + base;
        unsigned char* op = cur.p;
        int64_t i0 = cur.idx[last];
        if (same && ax != last && !j->gather && os_last == (int64_t)oes &&
            xs_last == (int64_t)oes) {
            // A contiguous run of one selected slice: one copy (out never overlaps x here).
            memcpy(op, xb + j->idx[cur.idx[ax]] * xs_ax + i0 * xs_last, (size_t)run * oes);
        } else {
            for (int64_t r = 0; r < run; r++) {
                int64_t pos = j->gather ? j->idx[i + r]
                                        : j->idx[ax == last ? i0 + r : cur.idx[ax]];
                const unsigned char* sp =
                    xb + pos * xs_ax + (ax == last ? 0 : (i0 + r) * xs_last);
                if (same) hg_copy_elem(op + r * os_last, sp, oes);
                else hg_convert_elem(j->out.dtype, op + r * os_last, j->x.dtype, sp);
            }
        }
        i += run;
        if (i >= e) break;
        cur.idx[last] += run - 1;
        cur.p += (run - 1) * os_last;
        hg_cursor_next(&cur);
    }
}

// 0-d out (gather of 0-d x): a single element.
static void index_scalar(index_job* j) {
    if (j->out.dtype == j->x.dtype) hg_copy_elem(j->out.data, j->x.data, hg_dtype_size(j->x.dtype));
    else hg_convert_elem(j->out.dtype, j->out.data, j->x.dtype, j->x.data);
}

// Reads every index of `index` (C order) into a new array, counting negatives from the end of
// an axis of `size`. Refuses non-integer dtypes and any index outside [-size, size).
static hg_status resolve_indices(hg_op_ctx* c, const hg_tensor* index, int32_t axis, int64_t size,
                                 int64_t** out) {
    *out = NULL;
    if (!hg_dtype_is_int((int)index->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH,
                        "%s: 'index' has dtype %s; indices must have an integer dtype", c->fn,
                        hg_dtype_name(index->dtype));
    hg_host_view v;
    hg_status s;
    void* staged = NULL;   // a device index tensor's elements, read back contiguous
    if (hg_op_route_of(c, HG_OPF_DATA, index->dtype) == HG_ROUTE_DEVICE) {
        if ((s = hg_dk_download(c, index, &v, &staged))) return s;
    } else if ((s = hg_op_host_view(c, index, &v))) {
        return s;
    }
    int64_t* r = malloc((size_t)(v.numel ? v.numel : 1) * sizeof *r);
    if (!r) {
        free(staged);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for %lld indices", c->fn,
                        (long long)v.numel);
    }
    hg_cursor cur;
    if (v.numel) hg_cursor_init(&cur, &v, 0);
    for (int64_t i = 0; i < v.numel; i++) {
        int64_t k;
        int big = index->dtype == HG_DTYPE_U64 && *(const uint64_t*)(const void*)cur.p > INT64_MAX;
        k = big ? INT64_MAX : hg_op_load_i64(index->dtype, cur.p);
        if (big || k < -size || k >= size) {
            char pos[HG_DIMS_TEXT], val[32], valid[80];
            hg_op_dims(pos, cur.ndim, cur.idx);
            if (big) snprintf(val, sizeof val, "%" PRIu64, *(const uint64_t*)(const void*)cur.p);
            else snprintf(val, sizeof val, "%" PRId64, k);
            if (size) snprintf(valid, sizeof valid, "valid: %lld..%lld", (long long)-size,
                               (long long)size - 1);
            else snprintf(valid, sizeof valid, "the axis is empty, so no index is valid");
            s = hg_error(HG_ERR_OUT_OF_RANGE,
                         "%s: index %s at position %s is out of range for axis %d of size %lld "
                         "(%s)", c->fn, val, pos, (int)axis, (long long)size, valid);
            free(r);
            free(staged);
            return s;
        }
        r[i] = k < 0 ? k + size : k;
        hg_cursor_next(&cur);
    }
    free(staged);
    *out = r;
    return HG_OK;
}

// Runs the job into out, or through a C-contiguous temporary when out is x itself.
static hg_status run_index(hg_op_ctx* c, index_job* j, const hg_tensor* out, int via_temp) {
    if (j->out.numel == 0) return HG_OK;
    if (j->out.ndim == 0) {
        index_scalar(j);
        return HG_OK;
    }
    if (!via_temp) return hg_for_range(c, j->out.numel, INDEX_GRAIN, index_range, j);
    hg_host_view final = j->out;
    size_t es = hg_dtype_size(out->dtype);
    unsigned char* tmp = malloc((size_t)j->out.numel * es);
    if (!tmp)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for a %lld-element temporary",
                        c->fn, (long long)j->out.numel);
    j->out.data = tmp;
    hg_tensor_contiguous_strides(j->out.ndim, j->out.shape, j->out.strides);
    hg_status s = hg_for_range(c, j->out.numel, INDEX_GRAIN, index_range, j);
    if (!s) hg_copy_range(&final, &j->out, 0, final.numel);
    free(tmp);
    return s;
}

// Checks x and out shared by both ops; fills the job's views. *via_temp: out overlaps x.
static hg_status finish_setup(hg_op_ctx* c, const hg_tensor* x, hg_tensor* out, index_job* j,
                              int* via_temp) {
    hg_status s;
    // numpy's overlap rule: the indices are already read (resolve_indices); out overlapping x
    // is computed into a temporary and then copied.
    *via_temp = hg_op_overlaps(out, x);
    if (hg_op_route_of(c, HG_OPF_DATA, x->dtype) == HG_ROUTE_DEVICE)
        return HG_OK;   // the device kernel takes the tensors
    if ((s = hg_op_host_view(c, x, &j->x))) return s;
    return hg_op_host_view(c, out, &j->out);
}

hg_status hg_index_select(const hg_tensor* x, int32_t axis, const hg_tensor* index,
                          hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_index_select");
    if (!x || !index || !out)
        return hg_error(HG_ERR_NULL_POINTER, "hg_index_select: argument '%s' is NULL",
                        !x ? "x" : !index ? "index" : "out");
    hg_status s;
    if ((s = hg_op_input(&c, x, "x", NULL, NULL))) return s;
    if ((s = hg_op_input(&c, index, "index", NULL, NULL))) return s;
    int32_t ax = 0;
    if ((s = hg_op_axis(&c, x->ndim, axis, &ax))) return s;
    if (index->ndim != 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_index_select: 'index' has %d dims; it must be 1-D", (int)index->ndim);
    int64_t shape[HG_MAX_DIMS];
    for (int32_t d = 0; d < x->ndim; d++) shape[d] = x->shape[d];
    shape[ax] = index->shape[0];
    int64_t* idx = NULL;
    if ((s = resolve_indices(&c, index, ax, x->shape[ax], &idx))) return s;
    index_job j;
    memset(&j, 0, sizeof j);
    int via_temp = 0;
    if (!(s = hg_op_output(&c, out, x->dtype, x->ndim, shape, 1)) &&
        !(s = finish_setup(&c, x, out, &j, &via_temp))) {
        j.idx = idx;
        j.axis = ax;
        s = hg_op_route_of(&c, HG_OPF_DATA, x->dtype) == HG_ROUTE_DEVICE
                ? hg_dev_index(&c, x, ax, idx, index->shape[0], 0, out, via_temp)
                                : run_index(&c, &j, out, via_temp);
    }
    free(idx);
    return hg_op_finish(&c, out, s);
}

hg_status hg_gather(const hg_tensor* x, int32_t axis, const hg_tensor* index, hg_tensor* out) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_gather");
    if (!x || !index || !out)
        return hg_error(HG_ERR_NULL_POINTER, "hg_gather: argument '%s' is NULL",
                        !x ? "x" : !index ? "index" : "out");
    hg_status s;
    if ((s = hg_op_input(&c, x, "x", NULL, NULL))) return s;
    if ((s = hg_op_input(&c, index, "index", NULL, NULL))) return s;
    // torch.gather accepts a 0-d x (axis 0 or -1) with a 0-d index.
    int32_t ax = 0;
    if (x->ndim > 0 && (s = hg_op_axis(&c, x->ndim, axis, &ax))) return s;
    if (x->ndim == 0 && axis != 0 && axis != -1)
        return hg_error(HG_ERR_OUT_OF_RANGE,
                        "hg_gather: axis %d is out of range for a 0-d tensor (valid: -1..0)",
                        (int)axis);
    char sb[HG_DIMS_TEXT], tb[HG_DIMS_TEXT];
    if (index->ndim != x->ndim)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_gather: 'index' has %d dims, 'x' has %d (they must be equal)",
                        (int)index->ndim, (int)x->ndim);
    for (int32_t d = 0; d < x->ndim; d++)
        if (d != ax && index->shape[d] > x->shape[d])
            return hg_error(HG_ERR_SIZE_MISMATCH,
                            "hg_gather: 'index' has shape %s, 'x' has %s: index's size on dim %d "
                            "exceeds x's (every dim but axis %d must be <= x's)",
                            hg_op_dims(sb, index->ndim, index->shape),
                            hg_op_dims(tb, x->ndim, x->shape), (int)d, (int)ax);
    // A 0-d x has one element along its (virtual) axis.
    int64_t size = x->ndim ? x->shape[ax] : 1;
    int64_t* idx = NULL;
    if ((s = resolve_indices(&c, index, ax, size, &idx))) return s;
    index_job j;
    memset(&j, 0, sizeof j);
    int via_temp = 0;
    if (!(s = hg_op_output(&c, out, x->dtype, index->ndim, index->shape, 1)) &&
        !(s = finish_setup(&c, x, out, &j, &via_temp))) {
        j.idx = idx;
        j.axis = ax;
        j.gather = 1;
        s = hg_op_route_of(&c, HG_OPF_DATA, x->dtype) == HG_ROUTE_DEVICE
                ? hg_dev_index(&c, x, ax, idx, hg_view_numel(index), 1, out, via_temp)
                : run_index(&c, &j, out, via_temp);
    }
    free(idx);
    return hg_op_finish(&c, out, s);
}

// ---- index_add / scatter_add ------------------------------------------------------------------
// acc[..., idx, ...] += src[...] along axis, element after element in src's C order (so each
// sum is rounded as torch's CPU loop rounds it: f16 and bf16 through f32, one rounding per add;
// integers wrap). The adds into one element are not independent, so the host loop is serial.
#define ADD_AS(T)                                                                     \
    {                                                                                 \
        T a, b;                                                                       \
        memcpy(&a, o, sizeof a);                                                      \
        memcpy(&b, s, sizeof b);                                                      \
        a = (T)(a + b);                                                               \
        memcpy(o, &a, sizeof a);                                                      \
        return;                                                                       \
    }
#define ADD_WRAP(T, U)   /* T: the storage, U: unsigned arithmetic (wraps, no promotion) */ \
    {                                                                                 \
        T a, b;                                                                       \
        memcpy(&a, o, sizeof a);                                                      \
        memcpy(&b, s, sizeof b);                                                      \
        a = (T)((U)a + (U)b);                                                         \
        memcpy(o, &a, sizeof a);                                                      \
        return;                                                                       \
    }
static void add_elem(hg_dtype t, unsigned char* o, const unsigned char* s) {
    switch (t) {
    case HG_DTYPE_F32: ADD_AS(float)
    case HG_DTYPE_F64: ADD_AS(double)
    case HG_DTYPE_I8: case HG_DTYPE_U8: ADD_WRAP(uint8_t, uint8_t)
    case HG_DTYPE_I16: case HG_DTYPE_U16: ADD_WRAP(uint16_t, unsigned)
    case HG_DTYPE_I32: case HG_DTYPE_U32: ADD_WRAP(uint32_t, uint32_t)
    case HG_DTYPE_I64: case HG_DTYPE_U64: ADD_WRAP(uint64_t, uint64_t)
    default: {   // f16, bf16: in f32, rounded back once
        float a, b;
        hg_convert_elem(HG_DTYPE_F32, &a, t, o);
        hg_convert_elem(HG_DTYPE_F32, &b, t, s);
        a += b;
        hg_convert_elem(t, o, HG_DTYPE_F32, &a);
    }
    }
}
#undef ADD_AS
#undef ADD_WRAP

// index_add of f32 / f64 rows (the last dim not the axis, unit strides on both sides: an
// embedding's gradient): the same adds in the same order as run_add's, a row at a time (a
// vectorized loop instead of ~2 ns of offsets and dtype switch per element).
#define ROW_ADD(T)                                                                          \
    for (int64_t r = 0; r < rows; r++) {                                                      \
        int64_t so = 0, ao = 0;                                                               \
        for (int32_t d = 0; d < nd - 1; d++) {                                                \
            so += co[d] * src->strides[d];                                                    \
            ao += (d == ax ? idx[co[ax]] : co[d]) * acc->strides[d];                          \
        }                                                                                     \
        T* o = (T*)(void*)acc->data + ao;                                                     \
        const T* x = (const T*)(const void*)src->data + so;                                   \
        for (int64_t k = 0; k < len; k++) o[k] += x[k];                                       \
        for (int32_t d = nd - 2; d >= 0; d--) {                                               \
            if (++co[d] < shape[d]) break;                                                    \
            co[d] = 0;                                                                        \
        }                                                                                     \
    }
static int add_rows(const hg_host_view* acc, const hg_host_view* src, const int64_t* shape,
                    int32_t nd, int32_t ax, const int64_t* idx) {
    if (nd < 2 || ax == nd - 1 || acc->strides[nd - 1] != 1 || src->strides[nd - 1] != 1 ||
        (acc->dtype != HG_DTYPE_F32 && acc->dtype != HG_DTYPE_F64))
        return 0;
    int64_t len = shape[nd - 1], rows = hg_shape_numel(nd - 1, shape), co[HG_MAX_DIMS] = {0};
    if (len == 0 || rows == 0) return 1;
    if (acc->dtype == HG_DTYPE_F32) ROW_ADD(float)
    else ROW_ADD(double)
    return 1;
}
#undef ROW_ADD

static void run_add(const hg_host_view* acc, const hg_host_view* src, const int64_t* shape,
                    int32_t nd, int32_t ax, const int64_t* idx, int scatter) {
    if (!scatter && add_rows(acc, src, shape, nd, ax, idx)) return;
    int64_t n = hg_shape_numel(nd, shape), co[HG_MAX_DIMS] = {0};
    size_t es = hg_dtype_size(acc->dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = scatter ? idx[i] : idx[co[ax]], so = 0, ao = 0;
        for (int32_t d = 0; d < nd; d++) {
            so += co[d] * src->strides[d];
            ao += (d == ax ? pos : co[d]) * acc->strides[d];
        }
        add_elem(acc->dtype, acc->data + ao * (int64_t)es, src->data + so * (int64_t)es);
        for (int32_t d = nd - 1; d >= 0; d--) {
            if (++co[d] < shape[d]) break;
            co[d] = 0;
        }
    }
}

// The checks both share: acc, index and src valid, equal dtypes (bool refused), axis in range;
// *ax the resolved axis.
static hg_status add_setup(hg_op_ctx* c, const hg_tensor* acc, int32_t axis,
                           const hg_tensor* index, const hg_tensor* src, int32_t* ax) {
    hg_status s;
    if ((s = hg_op_input(c, acc, "out", NULL, NULL))) return s;
    if ((s = hg_op_input(c, index, "index", NULL, NULL))) return s;
    if ((s = hg_op_input(c, src, "src", NULL, NULL))) return s;
    if (src->dtype != acc->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: 'src' has dtype %s, 'out' has %s (they must "
                        "be equal)", c->fn, hg_dtype_name(src->dtype), hg_dtype_name(acc->dtype));
    if (acc->dtype == HG_DTYPE_BOOL)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "%s: bool tensors cannot be added into", c->fn);
    if (acc->ndim == 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: 'out' is 0-d; it needs an axis to index",
                        c->fn);
    return hg_op_axis(c, acc->ndim, axis, ax);
}

// Runs the add on acc's backend: atomics on devices (their dtypes), the serial loop on hosts.
static hg_status add_run(hg_op_ctx* c, const hg_tensor* acc, const hg_tensor* src,
                         const int64_t* shape, int32_t ax, const int64_t* idx, int64_t nidx,
                         int scatter) {
    // numpy's rule (numpy.add.at): src reads as before the adds, even as acc's exact view; the
    // indices are already read (idx).
    hg_status s = hg_op_read_first(c, acc, &src, 0);
    if (s) return s;
    hg_tensor it = *src;   // src over the iterated shape (scatter_add: index's)
    for (int32_t d = 0; d < src->ndim; d++) it.shape[d] = shape[d];
    if (hg_op_route_of(c, HG_OPF_DATA, acc->dtype) == HG_ROUTE_DEVICE) {
        hg_dtype t = acc->dtype;
        if (t != HG_DTYPE_F32 && t != HG_DTYPE_F64 && t != HG_DTYPE_I32 && t != HG_DTYPE_U32 &&
            t != HG_DTYPE_I64 && t != HG_DTYPE_U64)
            return hg_error(HG_ERR_UNSUPPORTED, "%s: dtype %s has no atomic add on this device "
                            "(f32, f64, i32, u32, i64 and u64 do); cast to one of them first",
                            c->fn, hg_dtype_name(t));
        return hg_dev_index_add(c, acc, ax, idx, nidx, scatter, &it);
    }
    hg_host_view a, v;
    if ((s = hg_op_host_view(c, acc, &a)) || (s = hg_op_host_view(c, &it, &v))) return s;
    run_add(&a, &v, shape, src->ndim, ax, idx, scatter);
    return HG_OK;
}

hg_status hg_index_add(const hg_tensor* out, int32_t axis, const hg_tensor* index,
                       const hg_tensor* src) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_index_add");
    if (!out || !index || !src)
        return hg_error(HG_ERR_NULL_POINTER, "hg_index_add: argument '%s' is NULL",
                        !out ? "out" : !index ? "index" : "src");
    int32_t ax = 0;
    hg_status s = add_setup(&c, out, axis, index, src, &ax);
    if (s) return s;
    char sb[HG_DIMS_TEXT], ob[HG_DIMS_TEXT];
    if (index->ndim != 1)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_index_add: 'index' has %d dims; it must be 1-D", (int)index->ndim);
    int ok = src->ndim == out->ndim && src->shape[ax] == index->shape[0];
    for (int32_t d = 0; ok && d < out->ndim; d++) ok = d == ax || src->shape[d] == out->shape[d];
    if (!ok)
        return hg_error(HG_ERR_SIZE_MISMATCH, "hg_index_add: 'src' has shape %s, 'out' %s with %lld "
                        "indices along axis %d: src must be out's shape with %lld there",
                        hg_op_dims(sb, src->ndim, src->shape), hg_op_dims(ob, out->ndim, out->shape),
                        (long long)index->shape[0], (int)ax, (long long)index->shape[0]);
    int64_t* idx = NULL;
    if ((s = resolve_indices(&c, index, ax, out->shape[ax], &idx))) return s;
    s = add_run(&c, out, src, src->shape, ax, idx, index->shape[0], 0);
    free(idx);
    return s;
}

hg_status hg_scatter_add(const hg_tensor* out, int32_t axis, const hg_tensor* index,
                         const hg_tensor* src) {
    HG_OP_CTX(c);
    hg_op_begin(&c, "hg_scatter_add");
    if (!out || !index || !src)
        return hg_error(HG_ERR_NULL_POINTER, "hg_scatter_add: argument '%s' is NULL",
                        !out ? "out" : !index ? "index" : "src");
    int32_t ax = 0;
    hg_status s = add_setup(&c, out, axis, index, src, &ax);
    if (s) return s;
    char ib[HG_DIMS_TEXT], sb[HG_DIMS_TEXT], ob[HG_DIMS_TEXT];
    int ok = index->ndim == out->ndim && src->ndim == out->ndim;
    for (int32_t d = 0; ok && d < out->ndim; d++)
        ok = index->shape[d] <= src->shape[d] && (d == ax || index->shape[d] <= out->shape[d]);
    if (!ok)
        return hg_error(HG_ERR_SIZE_MISMATCH, "hg_scatter_add: 'index' has shape %s, 'src' %s, "
                        "'out' %s: all must have the same number of dims, index no larger than "
                        "src on any dim nor than out on any but axis %d",
                        hg_op_dims(ib, index->ndim, index->shape),
                        hg_op_dims(sb, src->ndim, src->shape),
                        hg_op_dims(ob, out->ndim, out->shape), (int)ax);
    int64_t* idx = NULL;
    if ((s = resolve_indices(&c, index, ax, out->shape[ax], &idx))) return s;
    s = add_run(&c, out, src, index->shape, ax, idx, hg_view_numel(index), 1);
    free(idx);
    return s;
}
