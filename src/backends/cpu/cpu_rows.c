// Row launches (the backend's kernel_launch_rows): elementwise layouts whose rows are contiguous
// or hold one value per row (x - mean(x, keepdims), x * weight) run the linear kernel per row,
// with no per-lane index arithmetic or gathers. A direct-shaped kernel (cpu_direct.c) runs its
// rows on the pool's threads, a contiguous share of rows per thread, each row one call of the
// op's kernel function; any other kernel, and the rows from the first one the direct path
// declines, launch one after another (each launch may use the threads itself).
#include <stddef.h>
#include <stdlib.h>
#include "backends/cpu/cpu_internal.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/trace.h"

#define ROWS_MAX_ARGS 16   // arguments of a row bound on the stack (more: allocated)

typedef struct rows_job {
    cpu_state* st;
    const cpu_plan* plan;
    const hg_launch_config* cfg;
    const hg_bound_arg* args;
    size_t nargs;
    uint64_t rows, per_part, lanes;
    const int64_t* step;
    const void* const* value;
    uint64_t* left;    // per part: the first row the direct path declined (else the part's end)
} rows_job;

static void bind_row(const rows_job* j, uint64_t r, hg_bound_arg* a) {
    for (size_t i = 0; i < j->nargs; i++) {
        a[i] = j->args[i];
        int64_t off = (int64_t)r * j->step[i];
        if (j->value[i]) {
            a[i].bits = hg_dtype_load_bits(j->plan->prog->params[i].dtype,
                                           (const uint8_t*)j->value[i] + off);
        } else if (a[i].base) {
            a[i].base = (uint8_t*)a[i].base + off;
        }
    }
}

static void rows_part(void* ctx, int part) {
    rows_job* j = ctx;
    uint64_t r0 = (uint64_t)part * j->per_part;
    uint64_t r1 = r0 + j->per_part < j->rows ? r0 + j->per_part : j->rows;
    j->left[part] = hg_cpu_run_direct_rows(j->plan, j->args, j->lanes, r0, r1, j->step, j->value);
}

hg_status hg_cpu_launch_rows(cpu_state* st, const cpu_plan* plan, const hg_launch_config* cfg,
                             const hg_bound_arg* args, size_t nargs, uint64_t rows,
                             const int64_t* row_step, const void* const* row_value) {
    uint64_t lanes = (uint64_t)cfg->grid.x * cfg->block.x;
    rows_job j = {st, plan, cfg, args, nargs, rows, rows, lanes, row_step, row_value, NULL};
    uint64_t left_one = 0;
    uint64_t* left = &left_one;
    int parts = 1;
    int direct = plan->direct.ok && lanes <= HG_CPU_DIRECT_MAX_LANES &&
                 cfg->grid.y == 1 && cfg->grid.z == 1 && cfg->block.y == 1 && cfg->block.z == 1;
    if (direct) {
        // Threads as for one launch of all the lanes (cpu_exec.c): one per HG_CPU_PARALLEL_LANES.
        uint64_t units = rows * lanes / HG_CPU_PARALLEL_LANES;
        parts = st->nthreads;
        if ((uint64_t)parts > units) parts = units > 1 ? (int)units : 1;
        if ((uint64_t)parts > rows) parts = (int)rows;
        if (parts > 1 && !(left = malloc(sizeof *left * (size_t)parts)))
            return hg_error(HG_ERR_OUT_OF_MEMORY, "cpu: out of memory for a row launch");
        j.per_part = (rows + (uint64_t)parts - 1) / (uint64_t)parts;
        j.left = left;
        if (parts > 1) hg_pool_run(st->pool, parts, rows_part, &j);
        else rows_part(&j, 0);
        if (hg_trace_on()) hg_trace_note_threads(parts);
    }
    // What the direct path left (all of it for other kernels), row after row.
    hg_status s = HG_OK;
    hg_bound_arg a[ROWS_MAX_ARGS];
    hg_bound_arg* ra = nargs <= ROWS_MAX_ARGS ? a : malloc(sizeof *ra * nargs);
    if (!ra) s = hg_error(HG_ERR_OUT_OF_MEMORY, "cpu: out of memory for a row launch");
    for (int p = 0; p < parts && !s; p++) {
        uint64_t r = direct ? left[p] : 0;
        uint64_t end = direct ? (uint64_t)(p + 1) * j.per_part : rows;
        if (end > rows) end = rows;
        for (; r < end && !s; r++) {
            bind_row(&j, r, ra);
            s = hg_cpu_launch(st, plan, cfg, ra, nargs);
        }
    }
    if (ra != a) free(ra);
    if (left != &left_one) free(left);
    return s;
}
