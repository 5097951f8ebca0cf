// bench_latency.c — per-call latency cases of `hologram bench`: hg_kernel_launch of the compiled
// vector_add program over 1 lane, and an eager 1-element hg_binary add (bench_ops.c). Each is
// timed in batches of calls; best and median ns per call over the batches are reported.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_ctx.h"

enum { BATCHES = 100, PER_BATCH = 1000 };

double bench_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

void bench_best_median(double* t, int n, double* best, double* median) {
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *best = t[0];
    *median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void fail(bench_latency* out, hg_status st) {
    snprintf(out->skipped, sizeof out->skipped, "%s: %s", hg_status_string(st), hg_last_error());
}

// c[0] = a[0] + b[0] through a kernel handle: argument binding, the launch lock and the CPU
// backend's small-launch path, no compile or cache lookup.
static void launch_latency(bench_ctx* c, bench_latency* out) {
    hg_kernel k;
    hg_status st = hg_kernel_create(c->ex, c->prog[B_ISA_ADD], &k);
    if (st != HG_OK) {
        fail(out, st);
        return;
    }
    hg_launch_config cfg = hg_launch_1d(1, 1);
    hg_arg args[4] = {hg_arg_buffer(c->A), hg_arg_buffer(c->B), hg_arg_buffer(c->D),
                      hg_arg_u32(1)};
    double times[BATCHES];
    for (int r = 0; r < BATCHES && st == HG_OK; r++) {
        double t0 = bench_now_s();
        for (int i = 0; i < PER_BATCH && st == HG_OK; i++) st = hg_kernel_launch(k, &cfg, args, 4);
        times[r] = (bench_now_s() - t0) * 1e9 / PER_BATCH;
    }
    if (st != HG_OK) {
        fail(out, st);
    } else {
        memcpy(out->times_ns, times, sizeof times);
        out->ntimes = BATCHES;
        bench_best_median(times, BATCHES, &out->best_ns, &out->median_ns);
    }
    hg_kernel_destroy(k);
}

void bench_latency_run(bench_ctx* c) {
    bench_latency* l = &c->lat[B_LAT_LAUNCH];
    l->name = "launch_1lane_latency";
    l->what = "hg_kernel_launch, compiled c = a + b, 1 lane";
    l->target_ns = 0;
    launch_latency(c, l);
    l = &c->lat[B_LAT_OP_ADD];
    l->name = "op_add_1elem_latency";
    l->what = "eager hg_binary add of 1-element tensors";
    l->target_ns = 200;
    bench_ops_latency(c, l);
}
