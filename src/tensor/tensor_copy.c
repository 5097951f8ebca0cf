// Strided copy between tensor views (hg_tensor_copy) and hg_tensor_contiguous.
//
// On host-visible backends the copy runs here, in the style of numpy's strided loops: dims are
// first normalized (size-1 dims dropped, dst's negative strides flipped, dims sorted so dst is
// written in memory order, adjacent dims merged where both sides allow), which turns every
// contiguous-to-contiguous copy into one memcpy. The innermost dim is a memcpy when both
// strides are 1 and otherwise an element loop specialized by element size; a transpose of the
// two innermost dims is copied in square tiles so both sides stay in cache.
#include <stdlib.h>
#include <string.h>
#include "base/error.h"
#include "base/transpose.h"
#include "tensor/tensor_internal.h"

// Elements per side of a transpose tile: 8 beat 16..64 on a 4096x4096 f32 transpose (taller
// tiles with power-of-two strides collide in the same cache sets).
enum { TILE = 16 };

typedef struct copy_plan {
    int32_t n;
    int64_t shape[HG_MAX_DIMS];
    int64_t ds[HG_MAX_DIMS], ss[HG_MAX_DIMS];  // byte strides
    unsigned char* d;
    const unsigned char* s;
    size_t es;
} copy_plan;

// Normalizes the iteration space; element strides in, byte strides out.
static void plan_init(copy_plan* p, int32_t ndim, const int64_t* shape, const int64_t* dstr,
                      const int64_t* sstr) {
    int64_t es = (int64_t)p->es;
    int32_t n = 0;
    for (int32_t i = 0; i < ndim; i++) {
        if (shape[i] == 1) continue;
        int64_t dst_stride = dstr[i], src_stride = sstr[i];
        if (dst_stride < 0) {
            // Walk this dim backwards on both sides: the same element pairs, dst ascending.
            p->d += (shape[i] - 1) * dst_stride * es;
            p->s += (shape[i] - 1) * src_stride * es;
            dst_stride = -dst_stride;
            src_stride = -src_stride;
        }
        p->shape[n] = shape[i];
        p->ds[n] = dst_stride;
        p->ss[n++] = src_stride;
    }
    // Insertion sort by dst stride, largest first, so dst is written in memory order (stable:
    // equal strides, which only size-1 dims could have, keep C order).
    for (int32_t i = 1; i < n; i++) {
        for (int32_t j = i; j > 0 && p->ds[j - 1] < p->ds[j]; j--) {
            int64_t t;
            t = p->shape[j]; p->shape[j] = p->shape[j - 1]; p->shape[j - 1] = t;
            t = p->ds[j]; p->ds[j] = p->ds[j - 1]; p->ds[j - 1] = t;
            t = p->ss[j]; p->ss[j] = p->ss[j - 1]; p->ss[j - 1] = t;
        }
    }
    // Merge dim i into i+1 when stepping dim i equals running through all of dim i+1.
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        if (m > 0 && p->ds[m - 1] == p->shape[i] * p->ds[i] &&
            p->ss[m - 1] == p->shape[i] * p->ss[i]) {
            p->shape[m - 1] *= p->shape[i];
            p->ds[m - 1] = p->ds[i];
            p->ss[m - 1] = p->ss[i];
            continue;
        }
        p->shape[m] = p->shape[i];
        p->ds[m] = p->ds[i];
        p->ss[m++] = p->ss[i];
    }
    p->n = m;
    for (int32_t i = 0; i < m; i++) {
        p->ds[i] *= es;
        p->ss[i] *= es;
    }
}

// One row: n elements, byte strides ds and ss. memcpy with a constant size compiles to a move.
#define ROW_LOOP(SIZE)                                                                       \
    for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, SIZE)

#define REV_LOOP(SIZE)                                                                       \
    for (int64_t i = 0; i < n; i++) memcpy(d + i * (SIZE), s - i * (SIZE), SIZE)

static void copy_row(unsigned char* d, const unsigned char* s, int64_t n, int64_t ds, int64_t ss,
                     size_t es) {
    if (ds == (int64_t)es && ss == (int64_t)es) {
        memcpy(d, s, (size_t)n * es);
        return;
    }
    if (ds == (int64_t)es && ss == -(int64_t)es) {
        // A reversed row (x[::-1]): constant strides let the compiler vectorize with shuffles.
        switch (es) {
        case 1: REV_LOOP(1); return;
        case 2: REV_LOOP(2); return;
        case 4: REV_LOOP(4); return;
        case 8: REV_LOOP(8); return;
        default: break;
        }
    }
    switch (es) {
    case 1: ROW_LOOP(1); break;
    case 2: ROW_LOOP(2); break;
    case 4: ROW_LOOP(4); break;
    case 8: ROW_LOOP(8); break;
    default: ROW_LOOP(es); break;
    }
}

// rows x cols block where dst's columns are adjacent and src's rows are (a transpose): square
// tiles keep the lines of both sides in cache. Typed loops for the common sizes (a function
// call per tile row is too slow: docs/performance.md).
#define TILED_LOOP(T)                                                                          \
    for (int64_t rb = 0; rb < rows; rb += TILE) {                                              \
        int64_t re = rb + TILE < rows ? rb + TILE : rows;                                      \
        for (int64_t cb = 0; cb < cols; cb += TILE) {                                          \
            int64_t ce = cb + TILE < cols ? cb + TILE : cols;                                  \
            for (int64_t r = rb; r < re; r++) {                                                \
                T* dr_ = (T*)(void*)(d + r * dr);                                              \
                const unsigned char* sr_ = s + r * sr;                                         \
                for (int64_t c = cb; c < ce; c++) memcpy(&dr_[c], sr_ + c * sc, sizeof(T));    \
            }                                                                                  \
        }                                                                                      \
    }
static void copy_tiled(unsigned char* d, const unsigned char* s, int64_t rows, int64_t cols,
                       int64_t dr, int64_t dc, int64_t sr, int64_t sc, size_t es) {
    if (es == 4 && dc == 4 && sr == 4) {
        for (int64_t rb = 0; rb < rows; rb += TILE)
            for (int64_t cb = 0; cb < cols; cb += TILE)
                hg_transpose_32(d + rb * dr + cb * 4, dr, s + rb * 4 + cb * sc, sc,
                                (cb + TILE < cols ? cb + TILE : cols) - cb,
                                (rb + TILE < rows ? rb + TILE : rows) - rb);
        return;
    }
    if (dc == (int64_t)es) {
        switch (es) {
        case 1: TILED_LOOP(uint8_t) return;
        case 2: TILED_LOOP(uint16_t) return;
        case 4: TILED_LOOP(uint32_t) return;
        case 8: TILED_LOOP(uint64_t) return;
        default: break;
        }
    }
    for (int64_t rb = 0; rb < rows; rb += TILE) {
        int64_t re = rb + TILE < rows ? rb + TILE : rows;
        for (int64_t cb = 0; cb < cols; cb += TILE) {
            int64_t n = (cb + TILE < cols ? cb + TILE : cols) - cb;
            for (int64_t r = rb; r < re; r++)
                copy_row(d + r * dr + cb * dc, s + r * sr + cb * sc, n, dc, sc, es);
        }
    }
}
#undef TILED_LOOP

static void run_plan(const copy_plan* p) {
    int32_t n = p->n;
    if (n == 0) {  // one element
        memcpy(p->d, p->s, p->es);
        return;
    }
    int64_t es = (int64_t)p->es;
    // Tile when dst's innermost dim is dense but src moves fastest along the dim above it.
    int tiled = n >= 2 && p->ds[n - 1] == es && p->ss[n - 1] != es &&
                llabs(p->ss[n - 2]) < llabs(p->ss[n - 1]);
    int32_t outer = n - (tiled ? 2 : 1);
    int64_t idx[HG_MAX_DIMS] = {0};
    unsigned char* d = p->d;
    const unsigned char* s = p->s;
    for (;;) {
        if (tiled)
            copy_tiled(d, s, p->shape[n - 2], p->shape[n - 1], p->ds[n - 2], p->ds[n - 1],
                       p->ss[n - 2], p->ss[n - 1], p->es);
        else
            copy_row(d, s, p->shape[n - 1], p->ds[n - 1], p->ss[n - 1], p->es);
        // Odometer over the outer dims; pointers only ever point at reachable elements.
        int32_t k = outer - 1;
        for (; k >= 0; k--) {
            if (++idx[k] < p->shape[k]) {
                d += p->ds[k];
                s += p->ss[k];
                break;
            }
            idx[k] = 0;
            d -= (p->shape[k] - 1) * p->ds[k];
            s -= (p->shape[k] - 1) * p->ss[k];
        }
        if (k < 0) break;
    }
}

static void strided_copy(unsigned char* d, const unsigned char* s, size_t es, int32_t ndim,
                         const int64_t* shape, const int64_t* dstr, const int64_t* sstr) {
    copy_plan p;
    p.d = d;
    p.s = s;
    p.es = es;
    plan_init(&p, ndim, shape, dstr, sstr);
    run_plan(&p);
}

// Strides of a (shape, strides) source broadcast to dst's shape, numpy's rules; 0 if the
// shapes do not broadcast.
int hg_tensor_broadcast_strides(const hg_tensor* dst, int32_t ndim, const int64_t* shape,
                                const int64_t* strides, int64_t* out) {
    int32_t lead = dst->ndim - ndim;
    if (lead < 0) return 0;
    for (int32_t i = 0; i < dst->ndim; i++) {
        int32_t j = i - lead;
        if (j < 0 || (shape[j] == 1 && dst->shape[i] != 1)) {
            out[i] = 0;
        } else if (shape[j] == dst->shape[i]) {
            out[i] = strides[j];
        } else {
            return 0;
        }
    }
    return 1;
}

hg_status hg_tensor_copy(const hg_tensor* dst, const hg_tensor* src) {
    hg_buffer_obj *db = NULL, *sb = NULL;
    int64_t dn = 0, sn = 0;
    hg_status s = hg_tensor_check(dst, "hg_tensor_copy", "dst", &db, &dn);
    if (s) return s;
    if ((s = hg_tensor_check(src, "hg_tensor_copy", "src", &sb, &sn))) return s;
    if (db->ex != sb->ex)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_tensor_copy: dst and src belong to different executors (copy through "
                        "host memory with hg_buffer_read + hg_buffer_write)");
    if (dst->dtype != src->dtype)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "hg_tensor_copy: dst is %s but src is %s",
                        hg_dtype_name(dst->dtype), hg_dtype_name(src->dtype));
    // src's strides broadcast to dst's shape (numpy.copyto).
    int64_t sstr[HG_MAX_DIMS];
    if (!hg_tensor_broadcast_strides(dst, src->ndim, src->shape, src->strides, sstr)) {
        char sd[HG_DIMS_TEXT], ssh[HG_DIMS_TEXT];
        return hg_error(HG_ERR_SIZE_MISMATCH,
                        "hg_tensor_copy: src of shape %s does not broadcast to dst's shape %s",
                        hg_tensor_format_dims(ssh, src->ndim, src->shape),
                        hg_tensor_format_dims(sd, dst->ndim, dst->shape));
    }
    for (int32_t i = 0; i < dst->ndim; i++)
        if (dst->shape[i] > 1 && dst->strides[i] == 0)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "hg_tensor_copy: dst dim %d has size %lld but stride 0 (a broadcast "
                            "view): its elements would be written more than once",
                            (int)i, (long long)dst->shape[i]);
    if (dn == 0) return HG_OK;
    size_t es = hg_dtype_size(dst->dtype);
    unsigned char* dbase = (unsigned char*)db->mem;
    const unsigned char* sbase = (const unsigned char*)sb->mem;
    unsigned char* d = dbase + (size_t)dst->offset * es;
    const unsigned char* sp = sbase + (size_t)src->offset * es;
    // Overlap also through two wraps of the same memory (hg_tensor_overlap compares addresses).
    int overlap = hg_tensor_overlap(dst, db, src, sb);
    if (!db->ex->vt->host_visible) {   // device memory: an ISA copy kernel
        if (overlap && d == sp) {
            int same = 1;
            for (int32_t i = 0; same && i < dst->ndim; i++)
                same = dst->shape[i] == 1 || dst->strides[i] == sstr[i];
            if (same) return HG_OK;
        }
        return hg_tensor_copy_device(dst, src, sstr, sn, overlap);
    }
    if (overlap) {
        // The identical view is a no-op; anything else goes through a contiguous temporary
        // holding src's elements.
        int same = d == sp;
        for (int32_t i = 0; same && i < dst->ndim; i++)
            same = dst->shape[i] == 1 || dst->strides[i] == sstr[i];
        if (same) return HG_OK;
        unsigned char* tmp = malloc((size_t)sn * es);
        if (!tmp)
            return hg_error(HG_ERR_OUT_OF_MEMORY,
                            "hg_tensor_copy: out of memory for a %lld-element temporary (src and "
                            "dst overlap)",
                            (long long)sn);
        int64_t tstr[HG_MAX_DIMS];
        hg_tensor_contiguous_strides(src->ndim, src->shape, tstr);
        strided_copy(tmp, sp, es, src->ndim, src->shape, tstr, src->strides);
        // The temporary read in dst's shape: src's contiguous strides, broadcast.
        hg_tensor_broadcast_strides(dst, src->ndim, src->shape, tstr, sstr);
        strided_copy(d, tmp, es, dst->ndim, dst->shape, dst->strides, sstr);
        free(tmp);
        return HG_OK;
    }
    strided_copy(d, sp, es, dst->ndim, dst->shape, dst->strides, sstr);
    return HG_OK;
}

hg_status hg_tensor_contiguous(const hg_tensor* t, hg_tensor* out, int* out_copied) {
    hg_buffer_obj* b = NULL;
    int64_t numel = 0;
    hg_status s = hg_tensor_check(t, "hg_tensor_contiguous", "t", &b, &numel);
    if (s) return s;
    HG_CHECK_NULL(out, "out");
    HG_CHECK_NULL(out_copied, "out_copied");
    if (hg_tensor_is_c_contiguous(t, numel)) {
        *out = *t;
        *out_copied = 0;
        return HG_OK;
    }
    hg_executor ex = {b->ex->handle};
    hg_buffer nb;
    if ((s = hg_buffer_create_ex(ex, t->dtype, (size_t)numel, HG_BUFFER_UNINITIALIZED, &nb)))
        return hg_error_prefix(s, "hg_tensor_contiguous");
    hg_tensor r;
    if ((s = hg_tensor_from_buffer(nb, t->ndim, t->shape, &r)) || (s = hg_tensor_copy(&r, t))) {
        hg_buffer_destroy(nb);
        return s;
    }
    *out = r;
    *out_copied = 1;
    return HG_OK;
}
