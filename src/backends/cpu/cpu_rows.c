// Row launches (the backend's kernel_launch_rows): elementwise layouts whose rows are contiguous,
// hold one value per row (x - mean(x, keepdims), x * weight) or read an input with a stride
// (x + y.T) run the linear kernel per row, with no per-lane index arithmetic. A direct-shaped
// kernel (cpu_direct.c) runs its rows on the pool's threads, a contiguous share of rows per
// thread, each row one call of the op's kernel function. Any other kernel (a fused chain) with
// rows shorter than two threads' share of lanes runs the same split, each part its rows one
// launch after another on its own worker; longer rows, and the rows from the first one the
// direct path declines, launch one after another (each launch may use the threads itself).
// A strided input is gathered per row into a scratch row: consecutive rows read neighbouring
// elements of the same lines (a transposed operand), which stay in cache. A spread input (one
// value per sub-row of a grouped row) is filled into its scratch row by the worker that runs
// the row, right before the launch reads it (cache-hot, on every thread). A row made of
// sub-rows (a packed tile) gathers each input's sub-rows, and a scattered output is written to
// the row's scratch tile and copied to its sub-rows' places after the row, on the same worker.
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/cpu_internal.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/trace.h"

#define ROWS_MAX_ARGS 16   // arguments of a row bound on the stack (more: allocated)

typedef struct rows_job {
    const cpu_plan* plan;
    const hg_bound_arg* args;
    size_t nargs;
    uint64_t rows, per_part, lanes;
    const hg_row_args* ra;
    uint8_t** scratch;   // per part, nargs row buffers (NULL where the argument is not gathered)
    uint64_t* left;      // per part: the first row the direct path declined (else the part's end)
    const cpu_launch* serial;   // general plans: the launch each part copies and runs per row
    atomic_int failed;          // general plans: the first failing part's status and message
    hg_status err;
    char msg[sizeof(((cpu_launch*)0)->msg)];
} rows_job;

static int scattered(const hg_row_args* ra, size_t i) {
    return ra->sub_cols && ra->scatter && ra->scatter[i];
}

static void bind_row(const rows_job* j, uint8_t* const* scratch, uint64_t r, hg_bound_arg* a) {
    const hg_row_args* ra = j->ra;
    for (size_t i = 0; i < j->nargs; i++) {
        a[i] = j->args[i];
        int64_t off = hg_row_offset(ra, j->nargs, i, r);
        hg_dtype t = (hg_dtype)j->plan->prog->params[i].dtype;
        if (ra->value[i]) {
            a[i].bits = hg_dtype_load_bits(t, (const uint8_t*)ra->value[i] + off);
        } else if (a[i].base && ra->spread && ra->spread[i]) {
            hg_cpu_spread_lanes(scratch[i], (const uint8_t*)a[i].base + off, a[i].count,
                                (uint64_t)ra->spread[i], ra->lane_step[i], hg_dtype_size(t));
            a[i].base = scratch[i];
        } else if (a[i].base && ra->lane_step[i] && ra->sub_cols) {
            // a tile: each sub-row gathered (step 0: repeated); an output's is scattered after
            if (!scattered(ra, i))
                hg_cpu_gather_subrows(scratch[i], (const uint8_t*)a[i].base + off,
                                      a[i].count / ra->sub_cols, ra->sub_cols, ra->sub_step[i],
                                      ra->lane_step[i], hg_dtype_size(t));
            a[i].base = scratch[i];
        } else if (a[i].base && ra->lane_step[i]) {
            hg_cpu_gather_lanes(scratch[i], (const uint8_t*)a[i].base + off, a[i].count,
                                ra->lane_step[i], hg_dtype_size(t));
            a[i].base = scratch[i];
        } else if (a[i].base) {
            a[i].base = (uint8_t*)a[i].base + off;
        }
    }
}

// Row r's scattered outputs (bound to their tiles by bind_row) copied to their places.
static void scatter_row(const rows_job* j, uint8_t* const* scratch, uint64_t r) {
    const hg_row_args* ra = j->ra;
    for (size_t i = 0; i < j->nargs; i++)
        if (j->args[i].base && scattered(ra, i))
            hg_cpu_scatter_subrows((uint8_t*)j->args[i].base + hg_row_offset(ra, j->nargs, i, r),
                                   scratch[i], j->args[i].count / ra->sub_cols, ra->sub_cols,
                                   ra->sub_step[i], ra->lane_step[i],
                                   hg_dtype_size((hg_dtype)j->plan->prog->params[i].dtype));
}

// Rows [r0, r1) of a direct plan's row launch: block by block (the direct path steps its rows
// by row_step), each block's arguments and per-row values moved to it. Returns the first row
// the direct path declined (r1: none).
static uint64_t direct_rows(const rows_job* j, uint64_t r0, uint64_t r1, uint8_t* const* scratch) {
    const hg_row_args* ra = j->ra;
    if (ra->nblock_dims <= 0)
        return hg_cpu_run_direct_rows(j->plan, j->args, j->lanes, r0, r1, ra, scratch);
    hg_bound_arg a[6];   // direct plans: up to 3 inputs, the output, n (hg_cpu_run_direct_rows)
    const void* value[6];
    if (j->nargs > sizeof a / sizeof *a) return r0;
    hg_row_args rb = *ra;
    rb.nblock_dims = 0;
    rb.value = value;
    for (uint64_t r = r0; r < r1;) {
        uint64_t first = r - r % ra->block_rows;   // the block's row 0
        uint64_t end = first + ra->block_rows < r1 ? first + ra->block_rows : r1;
        for (size_t i = 0; i < j->nargs; i++) {
            int64_t off = hg_row_offset(ra, j->nargs, i, first);
            a[i] = j->args[i];
            if (a[i].base && !ra->value[i]) a[i].base = (uint8_t*)a[i].base + off;
            value[i] = ra->value[i] ? (const uint8_t*)ra->value[i] + off : NULL;
        }
        uint64_t done = hg_cpu_run_direct_rows(j->plan, a, j->lanes, r - first, end - first, &rb,
                                               scratch);
        if (done < end - first) return first + done;
        r = end;
    }
    return r1;
}

static void rows_part(void* ctx, int part) {
    rows_job* j = ctx;
    uint64_t r0 = (uint64_t)part * j->per_part;
    uint64_t r1 = r0 + j->per_part < j->rows ? r0 + j->per_part : j->rows;
    j->left[part] = direct_rows(j, r0, r1, j->scratch + (size_t)part * j->nargs);
}

// Rows of a part of a general plan's row launch, one serial launch each on the part's worker.
static void rows_part_general(void* ctx, int part) {
    rows_job* j = ctx;
    uint64_t r0 = (uint64_t)part * j->per_part;
    uint64_t r1 = r0 + j->per_part < j->rows ? r0 + j->per_part : j->rows;
    cpu_launch L = *j->serial;
    hg_bound_arg local[ROWS_MAX_ARGS];
    hg_bound_arg* a = j->nargs <= ROWS_MAX_ARGS ? local : malloc(sizeof *a * j->nargs);
    hg_status s = a ? HG_OK : HG_ERR_OUT_OF_MEMORY;
    if (!a) snprintf(L.msg, sizeof L.msg, "cpu: out of memory for a row launch");
    for (uint64_t r = r0; r < r1 && !s && !atomic_load_explicit(&j->failed, memory_order_relaxed);
         r++) {
        bind_row(j, j->scratch + (size_t)part * j->nargs, r, a);
        s = hg_cpu_launch_serial_run(&L, a, part);
        if (!s) scatter_row(j, j->scratch + (size_t)part * j->nargs, r);
    }
    if (s && !atomic_exchange(&j->failed, 1)) {
        j->err = s;
        memcpy(j->msg, L.msg, sizeof j->msg);
    }
    if (a != local) free(a);
}

// Whether argument i is copied into a scratch row (gathered or spread).
static int copied(const hg_bound_arg* args, const hg_row_args* ra, size_t i) {
    return args[i].base && !ra->value[i] && (ra->lane_step[i] || (ra->spread && ra->spread[i]));
}

// Scratch of gathered input i: one row, or a tile of rows (64-byte multiples).
static size_t scratch_bytes(const cpu_plan* plan, const hg_bound_arg* args, const hg_row_args* ra,
                            size_t i) {
    size_t es = hg_dtype_size((hg_dtype)plan->prog->params[i].dtype);
    size_t rows = hg_cpu_rows_tiled(ra, (uint32_t)i, es) ? HG_CPU_ROW_TILE : 1;
    return ((size_t)args[i].count * es * rows + 63) & ~(size_t)63;
}

hg_status hg_cpu_launch_rows(cpu_state* st, const cpu_plan* plan, const hg_launch_config* cfg,
                             const hg_bound_arg* args, size_t nargs, uint64_t rows,
                             const hg_row_args* ra) {
    uint64_t lanes = (uint64_t)cfg->grid.x * cfg->block.x;
    int one_d = cfg->grid.y == 1 && cfg->grid.z == 1 && cfg->block.y == 1 && cfg->block.z == 1;
    int spread = 0;   // the direct path binds no spread rows
    for (size_t i = 0; i < nargs && ra->spread; i++) spread |= ra->spread[i] != 0;
    int direct = plan->direct.ok && lanes <= HG_CPU_DIRECT_MAX_LANES && one_d && !spread &&
                 !ra->sub_cols;
    int general = !direct && one_d && lanes < 2 * (uint64_t)HG_CPU_PARALLEL_LANES;
    int parts = 1;
    if (direct || general) {
        // Threads as for one launch of all the lanes (cpu_exec.c): one per
        // HG_CPU_PARALLEL_LANES lanes.
        uint64_t units = rows * lanes / HG_CPU_PARALLEL_LANES;
        parts = st->nthreads;
        if ((uint64_t)parts > units) parts = units > 1 ? (int)units : 1;
        if ((uint64_t)parts > rows) parts = (int)rows;
    }
    // One part: the rows one serial launch after another on the caller (rows of under two
    // grains of lanes, which a plain launch would run on one worker too): set up once, where a
    // plain launch per row repeats the launch setup and the pool's hand-off.
    cpu_launch serial;
    if (general) {
        hg_status s = hg_cpu_launch_serial_setup(st, plan, cfg, parts, &serial);
        if (s) return s;
    }
    // One allocation: per part the left row, the scratch row pointers and the rows themselves.
    size_t row_bytes = 0;
    for (size_t i = 0; i < nargs; i++)
        if (copied(args, ra, i)) row_bytes += scratch_bytes(plan, args, ra, i);
    size_t head = ((sizeof(uint64_t) + nargs * sizeof(uint8_t*)) * (size_t)parts + 63) & ~(size_t)63;
    _Alignas(64) uint8_t local[4096];   // what most launches need: no allocation
    size_t need = head + row_bytes * (size_t)parts;
    uint8_t* mem = need <= sizeof local ? local : aligned_alloc(64, need + 64);
    if (!mem) return hg_error(HG_ERR_OUT_OF_MEMORY, "cpu: out of memory for a row launch");
    rows_job j = {plan, args, nargs, rows, (rows + (uint64_t)parts - 1) / (uint64_t)parts, lanes,
                  ra, (uint8_t**)(void*)(mem + sizeof(uint64_t) * (size_t)parts),
                  (uint64_t*)(void*)mem, general ? &serial : NULL, 0, HG_OK, {0}};
    uint8_t* row = mem + head;
    for (int p = 0; p < parts; p++)
        for (size_t i = 0; i < nargs; i++) {
            uint8_t** sp = &j.scratch[(size_t)p * nargs + i];
            *sp = NULL;
            if (copied(args, ra, i)) {
                *sp = row;
                row += scratch_bytes(plan, args, ra, i);
            }
        }
    if (direct) {
        if (parts > 1) hg_pool_run(st->pool, parts, rows_part, &j);
        else rows_part(&j, 0);
        if (hg_trace_on()) hg_trace_note_threads(parts);
    }
    if (general) {
        if (parts > 1) hg_pool_run(st->pool, parts, rows_part_general, &j);
        else rows_part_general(&j, 0);
        if (hg_trace_on()) hg_trace_note_threads(parts);
        if (mem != local) free(mem);
        return atomic_load(&j.failed) ? hg_error(j.err, "%s", j.msg) : HG_OK;
    }
    // What the direct path left (all of it for other kernels), row after row.
    hg_status s = HG_OK;
    hg_bound_arg a[ROWS_MAX_ARGS];
    hg_bound_arg* ba = nargs <= ROWS_MAX_ARGS ? a : malloc(sizeof *ba * nargs);
    if (!ba) s = hg_error(HG_ERR_OUT_OF_MEMORY, "cpu: out of memory for a row launch");
    for (int p = 0; p < parts && !s; p++) {
        uint64_t r = direct ? j.left[p] : 0;
        uint64_t end = direct ? (uint64_t)(p + 1) * j.per_part : rows;
        if (end > rows) end = rows;
        for (; r < end && !s; r++) {
            bind_row(&j, j.scratch, r, ba);
            s = hg_cpu_launch(st, plan, cfg, ba, nargs);
            if (!s) scatter_row(&j, j.scratch, r);
        }
    }
    if (ba != a) free(ba);
    if (mem != local) free(mem);
    return s;
}
