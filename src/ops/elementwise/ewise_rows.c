// Row launches of elementwise kernels (the backend's kernel_launch_rows, host memory): layouts
// whose innermost collapsed dim every operand steps through by 1, by 0 (one value per row) or by
// a stride (gathered), run as the linear variant of one row, rows grouped when short; a fused
// chain over short rows that do not group runs as packed rows (rows gathered into contiguous
// tiles, run_packed).
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/elementwise/ewise_kernel_internal.h"
#include "runtime/kernel.h"

// Rows: on host memory, a layout whose innermost collapsed dim every operand steps through by 1
// (an input also by 0: one value per row, e.g. x - mean(x, keepdims)) runs the linear variant
// over each row, with the row's addresses and values bound (the backend's kernel_launch_rows):
// no per-lane index arithmetic or gathers; rows of 2 to 4 are as fast or faster on the strided
// path (docs/performance.md).
#define EW_ROW_MIN 8
// Short rows whose operands are adjacent rows or one row repeated (x[N, 10] * w[10]) run
// grouped: k rows as one row of about EW_GROUP_LANES lanes, the repeated row copied k times into
// a scratch row (kept by the kernel), so the per-row cost is paid per k rows. A one-op kernel's
// row is a function call (the CPU's direct path): grouped up to EW_GROUP_COLS, beyond which the
// scratch row costs more than it saves; a fused chain's row is a launch: grouped up to a
// quarter of the group (docs/performance.md). A fused chain's input with one value per row
// (rsqrt(var + eps) of a norm, broadcast over the row) is spread too: the backend writes each
// group's values cols times into a scratch row on the thread that runs the group (hg_row_args'
// spread), where each row as a launch of its own costs ~4x the chain (RMSNorm's w * (x * r),
// (4, 64, 256) f32, docs/performance.md).
#define EW_GROUP_COLS 256
#define EW_GROUP_LANES 8192

// The one-row layout of L in R, or 0 when L does not run as rows.
static int row_layout(const ew_layout* L, int32_t nin, int32_t nops, ew_layout* R) {
    if (!L->nstrided || L->ndim < 2) return 0;
    memset(R, 0, sizeof *R);
    R->ndim = 1;
    R->numel = R->size[0] = L->size[L->ndim - 1];
    for (int32_t o = 0; o < nops; o++) {
        int64_t st = L->stride[o][L->ndim - 1];
        if (L->cls[o] == CL_SCALAR) R->cls[o] = CL_SCALAR;
        else if (st == 0 && o < nin) R->cls[o] = CL_SCALAR;
        else if (st == 1 || o < nin) R->cls[o] = CL_LINEAR;   // inputs: gathered when st != 1
        else return 0;
    }
    return 1;
}

// The expression's operations (a fused chain: more than one).
static int32_t expr_ops(const hg_ew_expr* e) {
    int32_t ops = 0;
    for (int32_t i = 0; i < e->nnodes; i++)
        ops += e->nodes[i].kind != HG_EW_INPUT && e->nodes[i].kind != HG_EW_CONST;
    return ops;
}

// Rows per group for the one-row layout R of L (1: rows run one by one). Grouping needs every
// operand's rows contiguous and adjacent (stepping by 1 in a row, by the row's length between
// rows), a value per block (0 on both inner dims), or one row repeated (an input stepping 0
// between rows), at least one of the last: otherwise the dims would have collapsed.
static int64_t group_rows(const hg_ew_expr* e, const ew_layout* L, const ew_layout* R,
                          int32_t nops) {
    int32_t rd = L->ndim - 2, nin = e->ninputs, ops = expr_ops(e);
    int64_t cols = R->numel, repeated = 0;
    if (cols > (ops > 1 ? EW_GROUP_LANES / 4 : EW_GROUP_COLS) || L->size[rd] < 2) return 1;
    for (int32_t o = 0; o < nops; o++) {
        if (L->cls[o] == CL_SCALAR) continue;
        int64_t row = L->stride[o][rd], lane = L->stride[o][rd + 1];
        if (row == 0 && lane == 0) continue;                  // one value per block
        if (lane == 0 && o < nin && ops > 1) {                // per-row values: spread
            repeated = 1;
            continue;
        }
        if (lane != 1) return 1;                              // gathered lanes
        if (row == 0 && o < nin) repeated = 1;
        else if (row != cols) return 1;
    }
    if (!repeated) return 1;
    int64_t k = EW_GROUP_LANES / cols;
    return k < L->size[rd] ? k : L->size[rd];
}

// Steps operands [o0, o1)'s pointers (and the coordinates of dims top..0) to the next
// coordinate of those dims in C order (an odometer; dims below top stay put).
static void next_row(const ew_layout* L, int32_t top, int64_t* coord, unsigned char** rowp,
                     const size_t* es, int32_t o0, int32_t o1) {
    for (int32_t d = top; d >= 0; d--) {
        int wrap = ++coord[d] == L->size[d];
        int64_t by = wrap ? -(L->size[d] - 1) : 1;
        for (int32_t o = o0; o < o1; o++)
            if (rowp[o]) rowp[o] += (ptrdiff_t)(by * L->stride[o][d]) * (ptrdiff_t)es[o];
        if (!wrap) return;
        coord[d] = 0;
    }
}

// Ungrouped rows of several blocks (the dims outside the rows' dim: a permuted operand's
// (batch, heads)) as one kernel_launch_rows call: a launch per block ran each block's rows on
// one thread (Llama's rotary: 16 launches of 64 rows of 32, docs/performance.md).
static hg_status run_blocks(hg_ew_kernel* k, const ew_variant* v, const ew_layout* L,
                            const ew_layout* R, hg_bound_arg* bound, unsigned char* const* first,
                            const void** value, hg_row_args* ra, const size_t* es) {
    int32_t nops = k->nops, nd = L->ndim - 2;   // block dims: those outside the rows' dim
    int64_t cols = R->numel, block_step[(HG_MAX_DIMS - 2) * (EW_MAX_OPERANDS + 1)];
    memset(block_step, 0, sizeof block_step);
    for (int32_t o = 0; o < nops; o++) {
        if (L->cls[o] == CL_SCALAR) continue;
        for (int32_t d = 0; d < nd; d++)
            block_step[d * (nops + 1) + o] = L->stride[o][d] * (int64_t)es[o];
        if (R->cls[o] == CL_LINEAR) bound[o].base = first[o];
        else value[o] = first[o];   // one value per row
        bound[o].count = (uint64_t)cols;
    }
    bound[nops].bits = (uint64_t)cols;
    ra->nblock_dims = nd;
    ra->block_rows = (uint64_t)L->size[nd];
    ra->block_size = L->size;
    ra->block_step = block_step;
    hg_launch_config cfg =
        hg_launch_1d((uint64_t)cols, cols <= HG_MAX_BLOCK_LANES ? (uint32_t)cols : EW_BLOCK);
    return hg_kernel_run_rows(k->ex, v->kernel, &cfg, bound, (size_t)nops + 1,
                              (uint64_t)(L->numel / cols), ra);
}

// Rows of the innermost outer dim in kernel_launch_rows calls (grouped as above: one call for
// the whole groups, one for the rows left); the dims outside it (rare after collapsing) one
// round per coordinate, or all in one call when the rows are not grouped (run_blocks).
static hg_status run_rows(hg_ew_kernel* k, const hg_ew_arg* in, const hg_ew_arg* out,
                          const ew_layout* L, const ew_layout* R0, int64_t group) {
    const hg_ew_expr* e = &k->e;
    int32_t nin = e->ninputs, nops = k->nops, rd = L->ndim - 2;   // rd: the rows' dim
    int64_t spread[EW_MAX_OPERANDS + 1] = {0};   // one value per row: spread (grouped runs)
    int nspread = 0;
    ew_layout Rs;
    const ew_layout* R = R0;
    for (int32_t o = 0; o < nin && group > 1; o++)
        if (L->cls[o] != CL_SCALAR && R0->cls[o] == CL_SCALAR) spread[o] = R0->numel, nspread++;
    if (nspread) {   // the spread operands are rows of the grouped launch
        Rs = *R0;
        for (int32_t o = 0; o < nin; o++)
            if (spread[o]) Rs.cls[o] = CL_LINEAR;
        R = &Rs;
    }
    ew_variant* v = NULL;
    hg_status s = hg_ew_variant_for(k, R, &v);
    if (s) return s;
    int64_t cols = R->numel, nrows = L->size[rd];
    hg_bound_arg bound[EW_MAX_OPERANDS + 1];
    memset(bound, 0, sizeof(hg_bound_arg) * (size_t)(nops + 1));
    unsigned char* first[EW_MAX_OPERANDS] = {0};   // operand's element at the block's first row
    const void* value[EW_MAX_OPERANDS + 1] = {0};
    int64_t step[EW_MAX_OPERANDS + 1] = {0}, lane[EW_MAX_OPERANDS + 1] = {0};
    hg_row_args ra = {step, lane, value, nspread ? spread : NULL, 0, 0, NULL, NULL, 0, NULL, NULL};
    size_t es[EW_MAX_OPERANDS] = {0}, rep_off[EW_MAX_OPERANDS] = {0}, rep_bytes = 0;
    int rep[EW_MAX_OPERANDS] = {0};   // repeated into the scratch row (grouped runs)
    for (int32_t o = 0; o < nops; o++) {
        const hg_ew_arg* a = o < nin ? &in[o] : &out[o - nin];
        if (L->cls[o] == CL_SCALAR) {
            bound[o].bits = hg_ew_scalar_bits_of(a, e->inputs[o].dtype);
            continue;
        }
        es[o] = hg_dtype_size(a->t->dtype);
        first[o] = (unsigned char*)a->buf->mem + (size_t)a->t->offset * es[o];
        step[o] = L->stride[o][rd] * (int64_t)es[o] * group;
        if (spread[o])   // the group's values, one row apart
            lane[o] = L->stride[o][rd] * (int64_t)es[o];
        else if (R->cls[o] == CL_LINEAR && L->stride[o][rd + 1] != 1)
            lane[o] = L->stride[o][rd + 1] * (int64_t)es[o];
        if (group > 1 && !spread[o] && R->cls[o] == CL_LINEAR && L->stride[o][rd] == 0) {
            rep[o] = 1;
            rep_off[o] = rep_bytes;
            rep_bytes += ((size_t)(group * cols) * es[o] + 63) & ~(size_t)63;
        }
    }
    if (rep_bytes > k->scratch_bytes) {
        void* mem = aligned_alloc(64, rep_bytes);
        if (!mem) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory for an elementwise run");
        free(k->scratch);
        k->scratch = mem;
        k->scratch_bytes = rep_bytes;
    }
    unsigned char* scratch = k->scratch;
    int64_t whole = nrows / group, left = nrows % group;
    int64_t coord[HG_MAX_DIMS] = {0};
    int64_t blocks = L->numel / (cols * nrows);
    if (group == 1 && blocks > 1)   // every block's rows in one launch (the backend's threads)
        return run_blocks(k, v, L, R, bound, first, value, &ra, es);
    for (int64_t b = 0; b < blocks && !s; b++) {
        for (int32_t o = 0; o < nops; o++) {
            if (rep[o]) {   // the block's row, group times
                for (int64_t r = 0; r < group; r++)
                    memcpy(scratch + rep_off[o] + (size_t)(r * cols) * es[o], first[o],
                           (size_t)cols * es[o]);
                bound[o].base = scratch + rep_off[o];
            } else if (R->cls[o] == CL_LINEAR) {
                bound[o].base = first[o];
            } else if (L->cls[o] != CL_SCALAR) {
                value[o] = first[o];
            }
        }
        // The whole groups, then the rows left as one shorter row.
        for (int part = 0; part < 2 && !s; part++) {
            int64_t rows = part ? (left ? 1 : 0) : whole;
            uint64_t lanes = (uint64_t)(cols * (part ? left : group));
            if (!rows) continue;
            for (int32_t o = 0; o < nops; o++) {
                if (L->cls[o] == CL_SCALAR) continue;
                bound[o].count = lanes;
                if (part && !rep[o] && R->cls[o] == CL_LINEAR)
                    bound[o].base = first[o] + whole * step[o];
                if (part && value[o]) value[o] = first[o] + whole * step[o];
            }
            bound[nops].bits = lanes;
            hg_launch_config cfg =
                hg_launch_1d(lanes, lanes <= HG_MAX_BLOCK_LANES ? (uint32_t)lanes : EW_BLOCK);
            s = hg_kernel_run_rows(k->ex, v->kernel, &cfg, bound, (size_t)nops + 1,
                                   (uint64_t)rows, &ra);
        }
        next_row(L, rd - 1, coord, first, es, 0, nops);   // the next block's addresses
    }
    return s;
}

// Packed rows: a fused chain (launches cost ~0.15 us each) over rows that neither group nor are
// long (a permuted operand: rows of D = 64 with the heads between them, Llama's rotary) would
// launch once per row. Instead up to EW_GROUP_LANES lanes of whole rows, in the output's order,
// are packed: each operand that is not linear over the rows is gathered row by row (any lane
// stride: 0, negative, gathered) into a contiguous scratch tile, the linear variant runs once
// over the tile (the backend's threads split its lanes), and an output not linear is scattered
// back. A row is a cache line or more of each operand, so the copies run at memory speed.
#define EW_PACK_COLS 128   // longer rows: the row launches split across threads win
#define EW_PACK_LANES 8192   // 32768 and 65536 (two threads' launch) measured slower
#define EW_PACK_MIN_TILE 1024   // tiles of one run: not shorter (a launch each)

static int pack_rows(const hg_ew_expr* e, const ew_layout* L) {
    if (!L->nstrided || L->ndim < 2) return 0;   // first: the contiguous path pays only this
    int64_t cols = L->size[L->ndim - 1];
    return expr_ops(e) > 1 && cols >= EW_ROW_MIN && cols <= EW_PACK_COLS;
}

// n elements between a contiguous row and one stepping `lane` elements (to_tile: gather).
#define PACK_COPY(T)                                                                           \
    {                                                                                          \
        T* c = (T*)(void*)tile;                                                                \
        T* s = (T*)(void*)row;                                                                 \
        if (to_tile)                                                                           \
            for (int64_t i = 0; i < n; i++) c[i] = s[i * lane];                                \
        else                                                                                   \
            for (int64_t i = 0; i < n; i++) s[i * lane] = c[i];                                \
    }
static void pack_copy(unsigned char* tile, unsigned char* row, int64_t n, int64_t lane,
                      size_t es, int to_tile) {
    if (lane == 1) {
        if (to_tile) memcpy(tile, row, (size_t)n * es);
        else memcpy(row, tile, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1: PACK_COPY(uint8_t) break;
    case 2: PACK_COPY(uint16_t) break;
    case 4: PACK_COPY(uint32_t) break;
    default: PACK_COPY(uint64_t) break;
    }
}
#undef PACK_COPY

// Tiles of one run each with no gathered input with a lane step of 0 (its rows may repeat:
// sub-rows 0 apart): the tiles as the rows of one row launch, each tile's gathered inputs and
// scattered outputs copied by the backend on the thread that runs it (hg_row_args' sub-rows;
// a transposed one through hg_transpose_32), where run_packed's loop copies on the caller and
// launches tile after tile on one thread (Llama's rotary Q: 16 tiles of 4096 lanes; its K^T
// output, docs/performance.md). 0: not this layout.
static int run_tiles_as_rows(hg_ew_kernel* k, const ew_variant* v, const ew_layout* L,
                             const int* in_place, hg_bound_arg* bound, unsigned char* const* base,
                             const size_t* es, int64_t runs, hg_status* s) {
    int32_t nin = k->e.ninputs, nops = k->nops, od = L->ndim - 1, nd = od - 1;   // tile dims
    int64_t cols = L->size[od], lanes = runs * cols;
    int64_t step[EW_MAX_OPERANDS + 1] = {0}, lane[EW_MAX_OPERANDS + 1] = {0};
    int64_t sub[EW_MAX_OPERANDS + 1] = {0};
    int64_t block_step[(HG_MAX_DIMS - 2) * (EW_MAX_OPERANDS + 1)] = {0};
    const void* value[EW_MAX_OPERANDS + 1] = {0};
    uint8_t scatter[EW_MAX_OPERANDS + 1] = {0};
    for (int32_t o = 0; o < nops; o++) {
        if (L->cls[o] != CL_STRIDED || in_place[o]) continue;
        if (o < nin && L->stride[o][od] == 0) return 0;   // a lane step of 0
        scatter[o] = o >= nin;
    }
    for (int32_t o = 0; o < nops; o++) {
        if (L->cls[o] == CL_SCALAR) continue;
        bound[o].base = base[o];
        bound[o].count = (uint64_t)lanes;
        if (nd >= 1) step[o] = L->stride[o][nd - 1] * (int64_t)es[o];
        for (int32_t d = 0; d + 1 < nd; d++)
            block_step[d * (nops + 1) + o] = L->stride[o][d] * (int64_t)es[o];
        if (L->cls[o] == CL_STRIDED && !in_place[o]) {
            lane[o] = L->stride[o][od] * (int64_t)es[o];
            sub[o] = L->stride[o][od - 1] * (int64_t)es[o];
        }
    }
    bound[nops].bits = (uint64_t)lanes;
    hg_row_args ra = {step, lane, value, NULL, nd >= 2 ? nd - 1 : 0,
                      nd >= 1 ? (uint64_t)L->size[nd - 1] : 1, L->size, block_step,
                      (uint64_t)cols, sub, scatter};
    hg_launch_config cfg =
        hg_launch_1d((uint64_t)lanes, lanes <= HG_MAX_BLOCK_LANES ? (uint32_t)lanes : EW_BLOCK);
    *s = hg_kernel_run_rows(k->ex, v->kernel, &cfg, bound, (size_t)nops + 1,
                            (uint64_t)(L->numel / lanes), &ra);
    return 1;
}

// Whether a tile of one run of dim d (d's rows of cols lanes) has a size run_tiles_as_rows
// takes and leaves some operand in place (its rows adjacent along d).
static int run_fits(const ew_layout* L, int32_t nops, int32_t d) {
    int32_t od = L->ndim - 1;
    int64_t cols = L->size[od], lanes = L->size[d] * cols;
    if (lanes > EW_PACK_LANES || lanes < EW_PACK_MIN_TILE) return 0;
    for (int32_t o = 0; o < nops; o++)
        if (L->cls[o] == CL_STRIDED && L->stride[o][od] == 1 && L->stride[o][d] == cols) return 1;
    return 0;
}

// L with outer dim d moved next to the rows' dim (the others keep their order), the operands
// classed again: elementwise results do not depend on the order the lanes run in. Where the
// run next to the rows is short (a (B, T, H, D) output over a (B, H, T, D) operand: runs of
// H = 4 rows) and another dim's is a tile (T = 64 rows of D), its tiles run as rows on the
// backend's threads, where packing gathered 8192 lanes at a time on the caller (Llama's rotary
// under its output's layout, docs/performance.md).
static void move_to_rows(const ew_layout* L, int32_t nops, int32_t d, ew_layout* M) {
    int32_t od = L->ndim - 1, at = 0, order[HG_MAX_DIMS];
    for (int32_t i = 0; i < od; i++)
        if (i != d) order[at++] = i;
    order[at++] = d;
    order[at] = od;
    *M = *L;
    M->nstrided = 0;
    for (int32_t i = 0; i <= od; i++) M->size[i] = L->size[order[i]];
    for (int32_t o = 0; o < nops; o++) {
        if (L->cls[o] == CL_SCALAR) continue;
        int64_t expect = 1;
        int linear = 1;
        for (int32_t i = od; i >= 0; i--) {
            M->stride[o][i] = L->stride[o][order[i]];
            linear &= M->stride[o][i] == expect;
            expect *= M->size[i];
        }
        M->cls[o] = linear ? CL_LINEAR : CL_STRIDED;
        M->nstrided += !linear;
    }
}

static hg_status run_packed(hg_ew_kernel* k, const hg_ew_arg* in, const hg_ew_arg* out,
                            const ew_layout* L) {
    ew_layout M;
    if (L->ndim > 2 && !run_fits(L, k->nops, L->ndim - 2))
        for (int32_t d = L->ndim - 3; d >= 0; d--)
            if (run_fits(L, k->nops, d)) {
                move_to_rows(L, k->nops, d, &M);
                L = &M;
                break;
            }
    const hg_ew_expr* e = &k->e;
    int32_t nin = e->ninputs, nops = k->nops, od = L->ndim - 1;   // od: the outer dims
    int64_t cols = L->size[od], nrows = L->numel / cols, runs = L->size[od - 1];
    // Tiles of exactly one run of the innermost outer dim, when one fits: an operand whose rows
    // are adjacent within a run (the rotary's broadcast cos / sin table, rows of D = 64) is then
    // linear over every tile and read or written in place, not copied.
    int in_place[EW_MAX_OPERANDS] = {0}, any_in_place = 0;
    int one_run = runs * cols <= EW_PACK_LANES && runs * cols >= EW_PACK_MIN_TILE;
    if (one_run)
        for (int32_t o = 0; o < nops; o++)
            if (L->cls[o] == CL_STRIDED && L->stride[o][od] == 1 && L->stride[o][od - 1] == cols)
                in_place[o] = any_in_place = 1;
    int64_t group = any_in_place ? runs
                                 : EW_PACK_LANES / cols < nrows ? EW_PACK_LANES / cols : nrows;
    ew_layout R;
    memset(&R, 0, sizeof R);
    R.ndim = 1;
    R.numel = R.size[0] = group * cols;
    hg_bound_arg bound[EW_MAX_OPERANDS + 1];
    memset(bound, 0, sizeof(hg_bound_arg) * (size_t)(nops + 1));
    unsigned char* rowp[EW_MAX_OPERANDS] = {0};   // operand's element at the next row to pack
    size_t es[EW_MAX_OPERANDS] = {0}, off[EW_MAX_OPERANDS] = {0}, bytes = 0;
    int32_t nscatter = 0;
    for (int32_t o = 0; o < nops; o++) {
        const hg_ew_arg* a = o < nin ? &in[o] : &out[o - nin];
        R.cls[o] = L->cls[o] == CL_SCALAR ? CL_SCALAR : CL_LINEAR;
        if (L->cls[o] == CL_SCALAR) {
            bound[o].bits = hg_ew_scalar_bits_of(a, e->inputs[o].dtype);
            continue;
        }
        es[o] = hg_dtype_size(a->t->dtype);
        rowp[o] = (unsigned char*)a->buf->mem + (size_t)a->t->offset * es[o];
        if (L->cls[o] == CL_STRIDED && !in_place[o]) {
            off[o] = bytes;
            bytes += ((size_t)(group * cols) * es[o] + 63) & ~(size_t)63;
            nscatter += o >= nin;
        }
    }
    ew_variant* v = NULL;
    hg_status s = hg_ew_variant_for(k, &R, &v);
    if (s) return s;
    // (before the tile scratch: the backend gathers those tiles into its own)
    if (one_run && run_tiles_as_rows(k, v, L, in_place, bound, rowp, es, runs, &s)) return s;
    if (bytes > k->scratch_bytes) {
        void* mem = aligned_alloc(64, bytes);
        if (!mem) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory for an elementwise run");
        free(k->scratch);
        k->scratch = mem;
        k->scratch_bytes = bytes;
    }
    unsigned char* scratch = k->scratch;
    int64_t coord[HG_MAX_DIMS] = {0};
    for (int64_t r0 = 0; r0 < nrows && !s; r0 += group) {
        int64_t n = nrows - r0 < group ? nrows - r0 : group;
        unsigned char* first[EW_MAX_OPERANDS];
        int64_t at[HG_MAX_DIMS];   // the chunk's first row's coordinates (for the scatter)
        memcpy(first, rowp, sizeof first);
        memcpy(at, coord, sizeof at);
        for (int64_t r = 0; r < n; r++) {   // gather the inputs' rows
            for (int32_t o = 0; o < nin; o++)
                if (L->cls[o] == CL_STRIDED && !in_place[o])
                    pack_copy(scratch + off[o] + (size_t)(r * cols) * es[o], rowp[o], cols,
                              L->stride[o][od], es[o], 1);
            next_row(L, od - 1, coord, rowp, es, 0, nops);
        }
        uint64_t lanes = (uint64_t)(n * cols);
        for (int32_t o = 0; o < nops; o++) {
            if (L->cls[o] == CL_SCALAR) continue;
            bound[o].base = L->cls[o] == CL_STRIDED && !in_place[o] ? scratch + off[o] : first[o];
            bound[o].count = lanes;
        }
        bound[nops].bits = lanes;
        hg_launch_config cfg =
            hg_launch_1d(lanes, lanes <= HG_MAX_BLOCK_LANES ? (uint32_t)lanes : EW_BLOCK);
        s = hg_kernel_run_bound(k->ex, v->kernel, &cfg, bound, (size_t)nops + 1);
        for (int64_t r = 0; r < n && !s && nscatter; r++) {   // scatter the outputs' rows
            for (int32_t o = nin; o < nops; o++)
                if (L->cls[o] == CL_STRIDED && !in_place[o])
                    pack_copy(scratch + off[o] + (size_t)(r * cols) * es[o], first[o], cols,
                              L->stride[o][od], es[o], 0);
            next_row(L, od - 1, at, first, es, nin, nops);
        }
    }
    return s;
}

int hg_ew_run_rows(hg_ew_kernel* k, const hg_ew_arg* in, const hg_ew_arg* out,
                   const ew_layout* L, hg_status* s) {
    ew_layout R;
    if (!k->ex->vt->kernel_launch_rows) return 0;
    if (row_layout(L, k->e.ninputs, k->nops, &R)) {
        int64_t group = group_rows(&k->e, L, &R, k->nops);
        if (group > 1 || (R.numel >= EW_ROW_MIN && !pack_rows(&k->e, L))) {
            *s = run_rows(k, in, out, L, &R, group);
            return 1;
        }
    }
    if (!pack_rows(&k->e, L)) return 0;
    *s = run_packed(k, in, out, L);
    return 1;
}
