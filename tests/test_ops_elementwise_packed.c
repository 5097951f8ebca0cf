// Fused elementwise chains over operands of different layouts (a permuted, sliced, reversed or
// broadcast input, a strided output): on the CPU these run as packed rows (ewise_kernel.c:
// rows gathered into contiguous tiles, one launch per tile, outputs scattered back). Random
// shapes with the last dim around the tile edges, f32 / f64 / i32, 1-3 threads, against a
// float64 reference computed from the views' own strides.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/hg_test.h"
#include "hologram.h"
#include "base/handles.h"
#include "ops/elementwise/ewise_internal.h"
#include "runtime/objects.h"

static uint64_t rng = 4242;
static uint64_t rnd(uint64_t n) { return hg_test_rand(&rng) % n; }

static double ld(hg_dtype t, const unsigned char* p) {
    if (t == HG_DTYPE_F32) { float v; memcpy(&v, p, 4); return v; }
    if (t == HG_DTYPE_F64) { double v; memcpy(&v, p, 8); return v; }
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}
static void st(hg_dtype t, double x, unsigned char* p) {
    if (t == HG_DTYPE_F32) { float v = (float)x; memcpy(p, &v, 4); }
    else if (t == HG_DTYPE_F64) memcpy(p, &x, 8);
    else { int32_t v = (int32_t)x; memcpy(p, &v, 4); }
}

// A buffer of n small integers (exact in every dtype here, and so are a * b + c of them).
static hg_buffer make_buf(hg_executor ex, hg_dtype t, int64_t n, int64_t seed) {
    hg_buffer b = {0};
    if (hg_buffer_create(ex, t, (size_t)(n ? n : 1), &b)) return b;
    unsigned char* h = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t i = 0; i < n; i++) st(t, (double)((i * seed + 7) % 23 - 11), h + i * (int64_t)hg_dtype_size(t));
    if (n) hg_buffer_write(b, 0, h, (size_t)n);
    free(h);
    return b;
}

static unsigned char* read_all(hg_buffer b) {
    size_t cnt = 0;
    hg_dtype t;
    hg_buffer_count(b, &cnt);
    hg_buffer_dtype(b, &t);
    unsigned char* h = malloc(cnt * hg_dtype_size(t) + 8);
    if (cnt) hg_buffer_read(b, 0, h, cnt);
    return h;
}

// Element of view t at the C-order index li of `shape` (t broadcast to it, numpy alignment).
static double at(const hg_tensor* t, const unsigned char* host, int32_t nd, const int64_t* shape,
                 int64_t li) {
    int64_t idx = t->offset;
    for (int32_t d = nd - 1; d >= 0; d--) {
        int64_t c = li % shape[d];
        li /= shape[d];
        int32_t td = d - (nd - t->ndim);
        if (td >= 0 && t->shape[td] != 1) idx += c * t->strides[td];
    }
    return ld(t->dtype, host + idx * (int64_t)hg_dtype_size(t->dtype));
}

// The C-contiguous view of `shape` at the start of buf (a buffer holds at least one element).
static void whole(hg_buffer buf, int32_t nd, const int64_t* shape, hg_tensor* t) {
    int64_t strides[4], s = 1;
    for (int32_t d = nd - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d];
    }
    CHECK_OK(hg_tensor_view(buf, nd, shape, strides, 0, t));
}

// A view of `shape` into a bigger buffer: dims permuted, each stepped by +-1 or +-2.
static hg_tensor strided_view(hg_executor ex, hg_dtype t, int32_t nd, const int64_t* shape,
                              int64_t seed, hg_buffer* buf) {
    int32_t perm[4] = {0, 1, 2, 3}, inv[4];
    for (int32_t d = nd - 1; d > 0; d--) {
        int32_t j = (int32_t)rnd((uint64_t)d + 1), tmp = perm[d];
        perm[d] = perm[j];
        perm[j] = tmp;
    }
    int64_t big[4], steps[4], total = 1;
    for (int32_t d = 0; d < nd; d++) {
        steps[d] = (int64_t)(rnd(3) ? 1 : 2) * (rnd(4) ? 1 : -1);
        big[d] = shape[perm[d]] * (steps[d] < 0 ? -steps[d] : steps[d]);
        total *= big[d];
    }
    *buf = make_buf(ex, t, total, seed);
    hg_tensor v, p;
    whole(*buf, nd, big, &v);
    for (int32_t d = 0; d < nd; d++)
        CHECK_OK(hg_tensor_slice(&v, d, HG_SLICE_NONE, HG_SLICE_NONE, steps[d], &v));
    for (int32_t d = 0; d < nd; d++) inv[perm[d]] = d;
    CHECK_OK(hg_tensor_permute(&v, inv, &p));
    return p;
}

static const int64_t COLS[] = {8, 9, 15, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1025};

// Runs o = a * b + c (t[0..3]: a, b, c, o; buf: their buffers) as one fused kernel and checks
// every element against a float64 reference from the views' own strides (what names the case).
// *before / *after: host copies of the output's buffer around the run, for the caller's checks
// outside the view (the caller frees them). Returns 0 on a mismatch.
static int run_fma(hg_executor ex, hg_dtype dt, int32_t nd, const int64_t* shape,
                   const hg_tensor* t, const hg_buffer* buf, const char* what,
                   unsigned char** before, unsigned char** after) {
    int64_t numel = 1;
    for (int32_t d = 0; d < nd; d++) numel *= shape[d];
    hg_executor_obj* exo = hg_handle_get(ex.handle, HG_HANDLE_EXECUTOR);
    hg_ew_expr* e = malloc(sizeof *e);
    hg_ew_expr_init(e, nd, shape);
    int32_t ia = hg_ew_input(e, dt, nd, shape), ib = hg_ew_input(e, dt, t[1].ndim, t[1].shape),
            ic = hg_ew_input(e, dt, nd, shape);
    int32_t y = hg_ew_binary(e, HG_BINARY_ADD, hg_ew_binary(e, HG_BINARY_MUL, ia, ib), ic);
    CHECK_OK(hg_ew_output(e, y, dt));
    hg_ew_kernel* k = NULL;
    CHECK_OK(hg_ew_kernel_create(exo, e, &k));
    *before = read_all(buf[3]);
    hg_tensor o = t[3];
    CHECK_OK(hg_ew_kernel_run(k, t, &o));
    unsigned char *ha = read_all(buf[0]), *hb = read_all(buf[1]), *hc = read_all(buf[2]);
    *after = read_all(buf[3]);
    int ok = 1;
    for (int64_t i = 0; i < numel && ok; i++) {
        double want = at(&t[0], ha, nd, shape, i) * at(&t[1], hb, nd, shape, i) +
                      at(&t[2], hc, nd, shape, i);
        double got = at(&t[3], *after, nd, shape, i);
        if (got != want) {
            ok = 0;
            CHECK_MSG(0, "%s: element %lld = %g, want %g", what, (long long)i, got, want);
        }
    }
    hg_ew_kernel_destroy(k);
    free(e);
    free(ha);
    free(hb);
    free(hc);
    return ok;
}

static void destroy_all(const hg_buffer* buf, int n) {
    for (int i = 0; i < n; i++) hg_buffer_destroy(buf[i]);
}

// out = a * b + c (two ops: a fused chain) over random views; returns 0 on a mismatch.
static int one_case(hg_executor ex, int iter) {
    hg_dtype dts[3] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_I32};
    hg_dtype dt = dts[rnd(3)];
    int32_t nd = 2 + (int32_t)rnd(3);
    int64_t shape[4], numel = 1;
    shape[nd - 1] = COLS[rnd(sizeof COLS / sizeof *COLS)];
    for (int32_t d = 0; d < nd - 1; d++) shape[d] = 1 + (int64_t)rnd(shape[nd - 1] > 100 ? 5 : 13);
    if (rnd(25) == 0) shape[rnd((uint64_t)nd)] = 0;   // zero-size: nothing to do, no error
    for (int32_t d = 0; d < nd; d++) numel *= shape[d];
    hg_buffer ba, bb, bc, bo;
    hg_tensor a = strided_view(ex, dt, nd, shape, 37, &ba);
    // b: broadcast (some dims 1, maybe fewer dims), maybe reversed in its last dim.
    int32_t bnd = nd - (int32_t)rnd((uint64_t)nd);
    int64_t bshape[4], bn = 1;
    for (int32_t d = 0; d < bnd; d++) {
        bshape[d] = rnd(3) == 0 ? 1 : shape[nd - bnd + d];
        bn *= bshape[d];
    }
    bb = make_buf(ex, dt, bn, 53);
    hg_tensor b;
    whole(bb, bnd, bshape, &b);
    if (rnd(2)) hg_tensor_slice(&b, bnd - 1, HG_SLICE_NONE, HG_SLICE_NONE, -1, &b);
    hg_tensor c, o;
    if (rnd(2)) {
        bc = make_buf(ex, dt, numel, 11);
        whole(bc, nd, shape, &c);
    } else {
        c = strided_view(ex, dt, nd, shape, 11, &bc);
    }
    if (rnd(2)) {   // the output contiguous, or strided (scattered back)
        hg_buffer_create(ex, dt, (size_t)(numel ? numel : 1), &bo);
        whole(bo, nd, shape, &o);
    } else {
        o = strided_view(ex, dt, nd, shape, 3, &bo);
    }
    hg_tensor t[4] = {a, b, c, o};
    hg_buffer buf[4] = {ba, bb, bc, bo};
    char what[96];
    snprintf(what, sizeof what, "case %d (%s, rank %d, last dim %lld)", iter, hg_dtype_name(dt),
             (int)nd, (long long)shape[nd - 1]);
    unsigned char *before, *ho;
    int ok = run_fma(ex, dt, nd, shape, t, buf, what, &before, &ho);
    // Elements of the output's buffer outside the view are untouched.
    size_t ocnt = 0;
    hg_buffer_count(bo, &ocnt);
    if (!numel) ok = ok && !memcmp(before, ho, ocnt * hg_dtype_size(dt));
    if (ok) hg_test_passed++;
    free(before);
    free(ho);
    destroy_all(buf, 4);
    return ok;
}

// The rotary embedding's layout: a = q viewed (B, S, H, D) and permuted to (B, H, S, D) (rows of
// D with the heads between them: gathered), b a (1, 1, S, D) table (rows adjacent within each
// run of S: read in place by tiles of one run), c contiguous; the output contiguous, or a slice
// of a taller buffer (rows adjacent within a run, runs apart: written in place). out = a * b + c
// against a float64 reference; each run of S * D lanes between 1024 and 8192 (one tile).
static int rotary_case(hg_executor ex, int64_t B, int64_t H, int64_t S, int64_t D, int sliced_out) {
    hg_dtype dt = HG_DTYPE_F32;
    int64_t shape[4] = {B, H, S, D}, qshape[4] = {B, S, H, D}, tshape[2] = {S, D};
    int64_t numel = B * H * S * D, oshape[4] = {B, H, S + 3, D};
    hg_buffer ba, bb, bc, bo;
    ba = make_buf(ex, dt, numel, 37);
    bb = make_buf(ex, dt, S * D, 53);
    bc = make_buf(ex, dt, numel, 11);
    hg_tensor q, a, b, c, o;
    whole(ba, 4, qshape, &q);
    CHECK_OK(hg_tensor_permute(&q, (const int32_t[]){0, 2, 1, 3}, &a));
    whole(bb, 2, tshape, &b);
    whole(bc, 4, shape, &c);
    if (sliced_out) {
        hg_tensor t;
        bo = make_buf(ex, dt, B * H * (S + 3) * D, 5);
        whole(bo, 4, oshape, &t);
        CHECK_OK(hg_tensor_slice(&t, 2, 1, S + 1, 1, &o));
    } else {
        hg_buffer_create(ex, dt, (size_t)numel, &bo);
        whole(bo, 4, shape, &o);
    }
    hg_tensor t[4] = {a, b, c, o};
    hg_buffer buf[4] = {ba, bb, bc, bo};
    char what[96];
    snprintf(what, sizeof what, "rotary layout (%lld, %lld, %lld, %lld)%s", (long long)B,
             (long long)H, (long long)S, (long long)D, sliced_out ? ", sliced out" : "");
    unsigned char *before, *ho;
    int ok = run_fma(ex, dt, 4, shape, t, buf, what, &before, &ho);
    if (sliced_out) {   // the rows outside the slice are untouched
        for (int64_t r = 0; r < B * H && ok; r++)
            for (int64_t s2 = 0; s2 < S + 3; s2 += (s2 == 0 ? S + 1 : 1))
                ok = ok && !memcmp(before + ((r * (S + 3) + s2) * D) * 4,
                                   ho + ((r * (S + 3) + s2) * D) * 4, (size_t)D * 4);
        CHECK_MSG(ok, "%s: rows outside the slice written", what);
    }
    if (ok) hg_test_passed++;
    free(before);
    free(ho);
    destroy_all(buf, 4);
    return ok;
}

// A rank-4 f32 case of run_fma with nothing to check outside the output's view: counted when
// right, its buffers destroyed.
static int f32_case(hg_executor ex, const int64_t* shape, const hg_tensor* t,
                    const hg_buffer* buf, const char* what) {
    unsigned char *before, *ho;
    int ok = run_fma(ex, HG_DTYPE_F32, 4, shape, t, buf, what, &before, &ho);
    if (ok) hg_test_passed++;
    free(before);
    free(ho);
    destroy_all(buf, 4);
    return ok;
}

// The rotary in its output's layout (torch keeps q's (B, S, H, D) memory for q * cos + ...):
// out and a are (B, S, H, D) memory viewed as (B, H, S, D), b an (S, D) table broadcast, c
// contiguous (B, H, S, D). The lanes run in the output's order, where the run next to the rows
// is H rows; when that is short and S rows of D make a tile, S moves next to the rows
// (ewise_rows.c move_to_rows: a and the output then gathered and scattered per tile, b and c
// read in place). out = a * b + c against a float64 reference.
static int output_order_case(hg_executor ex, int64_t B, int64_t H, int64_t S, int64_t D) {
    hg_dtype dt = HG_DTYPE_F32;
    int64_t shape[4] = {B, H, S, D}, qshape[4] = {B, S, H, D}, tshape[2] = {S, D};
    int64_t numel = B * H * S * D;
    hg_buffer ba = make_buf(ex, dt, numel, 37), bb = make_buf(ex, dt, S * D, 53);
    hg_buffer bc = make_buf(ex, dt, numel, 11), bo = make_buf(ex, dt, numel, 5);
    hg_tensor q, a, b, c, oq, o;
    whole(ba, 4, qshape, &q);
    CHECK_OK(hg_tensor_permute(&q, (const int32_t[]){0, 2, 1, 3}, &a));
    whole(bb, 2, tshape, &b);
    whole(bc, 4, shape, &c);
    whole(bo, 4, qshape, &oq);
    CHECK_OK(hg_tensor_permute(&oq, (const int32_t[]){0, 2, 1, 3}, &o));
    hg_tensor t[4] = {a, b, c, o};
    hg_buffer buf[4] = {ba, bb, bc, bo};
    char what[96];
    snprintf(what, sizeof what, "rotary in the output's layout (%lld, %lld, %lld, %lld)",
             (long long)B, (long long)H, (long long)S, (long long)D);
    return f32_case(ex, shape, t, buf, what);
}

// Packed tiles run as the rows of one launch (ewise_rows.c run_tiles_as_rows) with a gathered
// operand broadcast in any pattern — (B, H, 1, D) repeats one row over each run (its sub-rows
// 0 apart), (B, H, S, 1) has lanes 0 apart (the loop's path) —: a = q permuted as in
// rotary_case, c a (S, D) table broadcast over (B, H) (read in place by tiles of one run), the
// output contiguous. out = a * b + c against a float64
// reference.
// keep: which of b's dims are not broadcast (bit d: dim d); 0b1011 is (B, H, 1, D).
static int repeated_row_case(hg_executor ex, int64_t B, int64_t H, int64_t S, int64_t D,
                             unsigned keep) {
    hg_dtype dt = HG_DTYPE_F32;
    int64_t shape[4] = {B, H, S, D}, qshape[4] = {B, S, H, D}, bshape[4], bn = 1;
    for (int d = 0; d < 4; d++) bn *= bshape[d] = keep >> d & 1 ? shape[d] : 1;
    int64_t tshape[2] = {S, D};
    hg_buffer ba = make_buf(ex, dt, B * H * S * D, 37), bb = make_buf(ex, dt, bn, 53);
    hg_buffer bc = make_buf(ex, dt, S * D, 11), bo;
    hg_buffer_create(ex, dt, (size_t)(B * H * S * D), &bo);
    hg_tensor q, a, b1, b, c1, c, o;
    whole(ba, 4, qshape, &q);
    CHECK_OK(hg_tensor_permute(&q, (const int32_t[]){0, 2, 1, 3}, &a));
    whole(bb, 4, bshape, &b1);
    CHECK_OK(hg_tensor_expand(&b1, 4, shape, &b));
    whole(bc, 2, tshape, &c1);
    CHECK_OK(hg_tensor_expand(&c1, 4, shape, &c));
    whole(bo, 4, shape, &o);
    hg_tensor t[4] = {a, b, c, o};
    hg_buffer buf[4] = {ba, bb, bc, bo};
    char what[96];
    snprintf(what, sizeof what, "repeated row (%lld, %lld, %lld, %lld), b dims kept %#x",
             (long long)B, (long long)H, (long long)S, (long long)D, keep);
    return f32_case(ex, shape, t, buf, what);
}

// Rows over blocks: a (B, S, H, D) input permuted to (B, H, S, D) with rows longer than packed
// tiles take (D > 128: row launches), b one value per row ((B, H, S, 1)), so the dims outside the
// rows do not collapse and every block's rows run in one launch (ewise_rows.c run_blocks; the
// row addresses per block: hg_row_offset). out = a * b + c against a float64 reference.
static int block_rows_case(hg_executor ex, int64_t B, int64_t H, int64_t S, int64_t D) {
    hg_dtype dt = HG_DTYPE_F32;
    int64_t shape[4] = {B, H, S, D}, qshape[4] = {B, S, H, D}, bshape[4] = {B, H, S, 1};
    hg_buffer ba = make_buf(ex, dt, B * H * S * D, 37), bb = make_buf(ex, dt, B * H * S, 53);
    hg_buffer bc = make_buf(ex, dt, B * H * S * D, 11), bo;
    hg_buffer_create(ex, dt, (size_t)(B * H * S * D), &bo);
    hg_tensor q, a, b, c, o;
    whole(ba, 4, qshape, &q);
    CHECK_OK(hg_tensor_permute(&q, (const int32_t[]){0, 2, 1, 3}, &a));
    whole(bb, 4, bshape, &b);
    whole(bc, 4, shape, &c);
    whole(bo, 4, shape, &o);
    hg_tensor t[4] = {a, b, c, o};
    hg_buffer buf[4] = {ba, bb, bc, bo};
    char what[96];
    snprintf(what, sizeof what, "block rows (%lld, %lld, %lld, %lld)", (long long)B, (long long)H,
             (long long)S, (long long)D);
    return f32_case(ex, shape, t, buf, what);
}

// Tiles of one run with no operand read in place, as Llama's rotary halves have them once the
// concat is sunk (docs/graph.md): out[..., h:] = a[..., :h] * b[:, :h] + c with a = q permuted,
// b an (S, 2h) table's first half broadcast, c contiguous, every row of 32 lanes strided
// (rows 2h apart): the tiles still run as the rows of one launch (each gathered and scattered
// on its worker). f32 against a float64 reference; the other half of out untouched.
static int half_rows_case(hg_executor ex, int64_t B, int64_t H, int64_t S, int64_t h) {
    hg_dtype dt = HG_DTYPE_F32;
    int64_t D = 2 * h, shape[4] = {B, H, S, h}, qshape[4] = {B, S, H, D}, tshape[2] = {S, D};
    int64_t fshape[4] = {B, H, S, D};
    hg_buffer ba = make_buf(ex, dt, B * H * S * D, 37), bb = make_buf(ex, dt, S * D, 53);
    hg_buffer bc = make_buf(ex, dt, B * H * S * h, 11), bo = make_buf(ex, dt, B * H * S * D, 5);
    hg_tensor q, qp, a, b1, b2, b, c, full, o;
    whole(ba, 4, qshape, &q);
    CHECK_OK(hg_tensor_permute(&q, (const int32_t[]){0, 2, 1, 3}, &qp));
    CHECK_OK(hg_tensor_slice(&qp, 3, 0, h, 1, &a));
    whole(bb, 2, tshape, &b1);
    CHECK_OK(hg_tensor_slice(&b1, 1, 0, h, 1, &b2));
    CHECK_OK(hg_tensor_expand(&b2, 4, shape, &b));
    whole(bc, 4, shape, &c);
    whole(bo, 4, fshape, &full);
    CHECK_OK(hg_tensor_slice(&full, 3, h, D, 1, &o));
    hg_tensor t[4] = {a, b, c, o};
    hg_buffer buf[4] = {ba, bb, bc, bo};
    char what[96];
    snprintf(what, sizeof what, "half rows (%lld, %lld, %lld, %lld of %lld)", (long long)B,
             (long long)H, (long long)S, (long long)h, (long long)D);
    unsigned char *before, *ho;
    int ok = run_fma(ex, dt, 4, shape, t, buf, what, &before, &ho);
    int64_t outside = 0;
    for (int64_t r = 0; r < B * H * S; r++)
        outside += memcmp(before + r * D * 4, ho + r * D * 4, (size_t)h * 4) != 0;
    CHECK_MSG(outside == 0, "%s: %lld rows' first halves written", what, (long long)outside);
    if (ok && outside == 0) hg_test_passed++;
    free(before);
    free(ho);
    destroy_all(buf, 4);
    return ok && outside == 0;
}

// A scattered output of packed tiles run as rows (hg_row_args' scatter), as in Llama's rotary
// kernel: y0 = a * b + c contiguous and y1 = a * b - c written through a view, with a = q
// permuted as in rotary_case, b an (S, D) table broadcast (read in place: tiles of one run), c
// contiguous. y1 is (B, H, D, S) memory as (B, H, S, D) (K^T: sub-rows one element apart,
// hg_transpose_32), with padding rows between the (b, h) blocks (pad > 0), or every second
// element of (B, H, S, 2D) (step 2: the element loop); a_transposed: a is (B, H, D, S) memory
// too (its tiles gathered through hg_transpose_32). (One output would set the iteration
// order itself: the second, contiguous one keeps D innermost.) f32 and f64; every element of
// both against a float64 reference, and y1's padding untouched.
static int scattered_out_case(hg_executor ex, hg_dtype dt, int64_t B, int64_t H, int64_t S,
                              int64_t D, int pad, int step2, int a_transposed) {
    int64_t shape[4] = {B, H, S, D}, qshape[4] = {B, S, H, D}, tshape[2] = {S, D};
    int64_t kshape[4] = {B, H, D, S};
    int64_t numel = B * H * S * D, onum;
    hg_buffer ba = make_buf(ex, dt, numel, 37), bb = make_buf(ex, dt, S * D, 53);
    hg_buffer bc = make_buf(ex, dt, numel, 11), bo0, bo1;
    hg_tensor q, a, b1, b, c, y0, full, y1;
    whole(ba, 4, a_transposed ? kshape : qshape, &q);
    CHECK_OK(hg_tensor_permute(&q, a_transposed ? (const int32_t[]){0, 1, 3, 2}
                                                : (const int32_t[]){0, 2, 1, 3}, &a));
    whole(bb, 2, tshape, &b1);
    CHECK_OK(hg_tensor_expand(&b1, 4, shape, &b));
    whole(bc, 4, shape, &c);
    hg_buffer_create(ex, dt, (size_t)numel, &bo0);
    whole(bo0, 4, shape, &y0);
    if (step2) {
        int64_t fshape[4] = {B, H, S, 2 * D};
        onum = numel * 2;
        bo1 = make_buf(ex, dt, onum, 5);
        whole(bo1, 4, fshape, &full);
        CHECK_OK(hg_tensor_slice(&full, 3, 0, 2 * D, 2, &y1));
    } else {
        int64_t fshape[4] = {B, H, D + pad, S};
        hg_tensor t1;
        onum = B * H * (D + pad) * S;
        bo1 = make_buf(ex, dt, onum, 5);
        whole(bo1, 4, fshape, &full);
        CHECK_OK(hg_tensor_slice(&full, 2, 0, D, 1, &t1));
        CHECK_OK(hg_tensor_permute(&t1, (const int32_t[]){0, 1, 3, 2}, &y1));
    }
    hg_executor_obj* exo = hg_handle_get(ex.handle, HG_HANDLE_EXECUTOR);
    hg_ew_expr* e = malloc(sizeof *e);
    hg_ew_expr_init(e, 4, shape);
    int32_t ia = hg_ew_input(e, dt, 4, shape), ib = hg_ew_input(e, dt, 4, shape),
            ic = hg_ew_input(e, dt, 4, shape);
    int32_t ab = hg_ew_binary(e, HG_BINARY_MUL, ia, ib);
    CHECK_OK(hg_ew_output(e, hg_ew_binary(e, HG_BINARY_ADD, ab, ic), dt));
    CHECK_OK(hg_ew_output(e, hg_ew_binary(e, HG_BINARY_SUB, ab, ic), dt));
    hg_ew_kernel* k = NULL;
    CHECK_OK(hg_ew_kernel_create(exo, e, &k));
    unsigned char* before = read_all(bo1);
    hg_tensor ins[3] = {a, b, c}, outs[2] = {y0, y1};
    CHECK_OK(hg_ew_kernel_run(k, ins, outs));
    unsigned char *ha = read_all(ba), *hb = read_all(bb), *hc = read_all(bc);
    unsigned char *h0 = read_all(bo0), *h1 = read_all(bo1);
    char what[112];
    snprintf(what, sizeof what, "scattered out (%lld, %lld, %lld, %lld) %s, %s%s", (long long)B,
             (long long)H, (long long)S, (long long)D, dt == HG_DTYPE_F64 ? "f64" : "f32",
             step2 ? "step 2" : pad ? "transposed, padded" : "transposed",
             a_transposed ? ", a transposed" : "");
    int64_t bad = 0, outside = 0;
    for (int64_t i = 0; i < numel; i++) {
        double m = at(&a, ha, 4, shape, i) * at(&b, hb, 4, shape, i), cv = at(&c, hc, 4, shape, i);
        if (at(&y0, h0, 4, shape, i) != m + cv || at(&y1, h1, 4, shape, i) != m - cv) bad++;
    }
    size_t es = hg_dtype_size(dt);
    for (int64_t i = 0; i < onum; i++) {
        int in_view = step2 ? i % 2 == 0 : (i / S) % (D + pad) < D;
        if (!in_view && memcmp(before + i * (int64_t)es, h1 + i * (int64_t)es, es)) outside++;
    }
    CHECK_MSG(bad == 0, "%s: %lld elements wrong", what, (long long)bad);
    CHECK_MSG(outside == 0, "%s: %lld elements outside the view written", what,
              (long long)outside);
    hg_ew_kernel_destroy(k);
    free(e);
    free(before);
    free(ha);
    free(hb);
    free(hc);
    free(h0);
    free(h1);
    hg_buffer bufs[5] = {ba, bb, bc, bo0, bo1};
    destroy_all(bufs, 5);
    return bad == 0 && outside == 0;
}

int main(void) {
    for (int threads = 1; threads <= 3; threads++) {
        hg_executor ex;
        hg_executor_options opt = {HG_BACKEND_CPU, 0, threads};
        if (hg_executor_create_ex(&opt, &ex)) {
            fprintf(stderr, "no CPU executor: %s\n", hg_last_error());
            return 1;
        }
        for (int iter = 0; iter < 120; iter++)
            if (!one_case(ex, iter)) break;
        rotary_case(ex, 4, 4, 64, 64, 0);
        rotary_case(ex, 2, 3, 64, 64, 1);
        rotary_case(ex, 3, 2, 17, 64, 1);   // a run of 1088 lanes
        rotary_case(ex, 2, 5, 100, 81, 0);  // runs of 8100 lanes, D not a multiple of 16
        for (unsigned keep = 0; keep < 16; keep++)   // every broadcast pattern of b
            repeated_row_case(ex, keep & 1 ? 2 : 3, 4, keep & 2 ? 64 : 17, 64, keep);
        output_order_case(ex, 4, 4, 64, 64);   // S moves next to the rows: tiles of 4096
        output_order_case(ex, 2, 3, 17, 64);   // tiles of 1088 lanes
        output_order_case(ex, 2, 2, 100, 81);  // tiles of 8100 lanes, D not a multiple of 16
        output_order_case(ex, 2, 20, 64, 64);  // runs of H = 20 rows (no operand in place there)
        output_order_case(ex, 2, 3, 200, 64);  // S's tile too long: packed as before
        output_order_case(ex, 1, 2, 8, 64);    // S's tile too short: packed as before
        block_rows_case(ex, 3, 4, 5, 129);
        block_rows_case(ex, 2, 3, 64, 200);
        half_rows_case(ex, 4, 4, 64, 32);
        half_rows_case(ex, 2, 3, 40, 33);   // runs of 1320 lanes, rows not a multiple of 16
        for (int dtf = 0; dtf < 2; dtf++) {
            hg_dtype dt = dtf ? HG_DTYPE_F64 : HG_DTYPE_F32;
            scattered_out_case(ex, dt, 4, 4, 64, 64, 0, 0, 0);
            scattered_out_case(ex, dt, 2, 3, 17, 64, 3, 0, 0);    // runs of 1088 lanes
            scattered_out_case(ex, dt, 2, 2, 100, 81, 1, 0, 0);   // D not a multiple of 4
            scattered_out_case(ex, dt, 3, 2, 64, 32, 0, 1, 0);
            scattered_out_case(ex, dt, 2, 2, 64, 64, 0, 1, 1);
            scattered_out_case(ex, dt, 2, 3, 17, 66, 2, 0, 1);
        }
        hg_executor_destroy(ex);
    }
    return hg_test_finish("ops_elementwise_packed");
}
