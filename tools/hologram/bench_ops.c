// bench_ops.c — the op-library cases of `hologram bench`: eager hg_binary add, hg_reduce sum
// and hg_unary exp/tanh/sigmoid/gelu on the ISA side's buffers, and the fused chain through
// the graph API (hg_graph_* + hg_graph_compile + hg_plan_run). A case whose setup call fails
// is reported as "skipped: <status message>" instead of failing the benchmark.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ctx.h"
#include "cli_common.h"

// The op library lands in libhologram separately from this tool: weak references let the
// tool build and run against a library without it (the cases are then skipped).
#pragma weak hg_tensor_from_buffer
#pragma weak hg_binary
#pragma weak hg_unary
#pragma weak hg_reduce
#pragma weak hg_graph_create
#pragma weak hg_graph_destroy
#pragma weak hg_graph_input
#pragma weak hg_graph_binary
#pragma weak hg_graph_binary_scalar
#pragma weak hg_graph_unary
#pragma weak hg_graph_output
#pragma weak hg_graph_compile
#pragma weak hg_plan_run
#pragma weak hg_plan_destroy

struct bench_ops {
    hg_tensor a, b, c, d, y, s;  // views of A B C D Y and of the 1-element sum buffer S
    hg_buffer S;
    int have_s;
    hg_graph g;
    int have_g;
    hg_plan plan;
    int have_plan;
    float sum;                   // last result of the reduction
};

static int have_library(void) {
    return hg_tensor_from_buffer && hg_binary && hg_unary && hg_reduce;
}
static int have_graphs(void) {
    return hg_graph_create && hg_graph_destroy && hg_graph_input && hg_graph_binary &&
           hg_graph_binary_scalar && hg_graph_unary && hg_graph_output && hg_graph_compile &&
           hg_plan_run && hg_plan_destroy;
}

static void skip(bench_ctx* c, int k, const char* fmt, const char* detail) {
    snprintf(c->skipped[k], sizeof c->skipped[k], fmt, detail);
}

static void skip_status(bench_ctx* c, int k, hg_status st) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", hg_status_string(st), hg_last_error());
    skip(c, k, "%s", msg);
}

// Runs case k once, for setup: a failure marks it skipped with the library's message.
static void try_case(bench_ctx* c, int k) {
    hg_status st = bench_ops_run(c, k);
    if (st != HG_OK) skip_status(c, k, st);
}

static hg_status build_graph(bench_ctx* c, bench_ops* o) {
    int64_t shape[1] = {(int64_t)c->n};
    int32_t a, b, cc, t, y;
    hg_status st = hg_graph_create(&o->g);
    if (st != HG_OK) return st;
    o->have_g = 1;
    if ((st = hg_graph_input(o->g, HG_DTYPE_F32, 1, shape, &a)) != HG_OK ||
        (st = hg_graph_input(o->g, HG_DTYPE_F32, 1, shape, &b)) != HG_OK ||
        (st = hg_graph_input(o->g, HG_DTYPE_F32, 1, shape, &cc)) != HG_OK ||
        (st = hg_graph_binary(o->g, HG_BINARY_MUL, a, b, &t)) != HG_OK ||
        (st = hg_graph_binary(o->g, HG_BINARY_ADD, t, cc, &t)) != HG_OK ||
        (st = hg_graph_unary(o->g, HG_UNARY_RELU, t, &t)) != HG_OK ||
        (st = hg_graph_binary_scalar(o->g, HG_BINARY_MUL, t, hg_scalar_f(0.5), 0, &y)) != HG_OK ||
        (st = hg_graph_output(o->g, y)) != HG_OK ||
        (st = hg_graph_compile(o->g, c->ex, &o->plan)) != HG_OK)
        return st;
    o->have_plan = 1;
    return HG_OK;
}

void bench_ops_setup(bench_ctx* c) {
    bench_ops* o = calloc(1, sizeof *o);
    c->ops = o;
    if (!o || !have_library()) {
        for (int k = B_FIRST_OP; k < B_CASE_COUNT; k++)
            skip(c, k, "%s", o ? "the op library (hg_binary, hg_unary, hg_reduce, tensor views) "
                                 "is not in this build of libhologram"
                               : "out of memory");
        return;
    }
    int64_t shape[1] = {(int64_t)c->n};
    hg_status st;
    if ((st = hg_buffer_create(c->ex, HG_DTYPE_F32, 1, &o->S)) == HG_OK) o->have_s = 1;
    if (st == HG_OK) st = hg_tensor_from_buffer(c->A, 1, shape, &o->a);
    if (st == HG_OK) st = hg_tensor_from_buffer(c->B, 1, shape, &o->b);
    if (st == HG_OK) st = hg_tensor_from_buffer(c->C, 1, shape, &o->c);
    if (st == HG_OK) st = hg_tensor_from_buffer(c->D, 1, shape, &o->d);
    if (st == HG_OK) st = hg_tensor_from_buffer(c->Y, 1, shape, &o->y);
    if (st == HG_OK) st = hg_tensor_from_buffer(o->S, 0, NULL, &o->s);
    if (st != HG_OK) {
        for (int k = B_FIRST_OP; k < B_CASE_COUNT; k++) skip_status(c, k, st);
        return;
    }
    if (!have_graphs())
        skip(c, B_GRAPH_FUSED, "%s", "the graph API is not in this build of libhologram");
    else if ((st = build_graph(c, o)) != HG_OK)
        skip_status(c, B_GRAPH_FUSED, st);
    // One call each now: compiles and caches the plans, and finds the cases that cannot run.
    for (int k = B_FIRST_OP; k < B_CASE_COUNT; k++)
        if (!c->skipped[k][0]) try_case(c, k);
}

void bench_ops_teardown(bench_ctx* c) {
    bench_ops* o = c->ops;
    if (!o) return;
    if (o->have_plan) hg_plan_destroy(o->plan);
    if (o->have_g) hg_graph_destroy(o->g);
    if (o->have_s) hg_buffer_destroy(o->S);
    free(o);
    c->ops = NULL;
}

static hg_unary_op unary_of(int k) {
    switch (k) {
    case B_OP_EXP: return HG_UNARY_EXP;
    case B_OP_TANH: return HG_UNARY_TANH;
    case B_OP_SIGMOID: return HG_UNARY_SIGMOID;
    default: return HG_UNARY_GELU;
    }
}

hg_status bench_ops_run(bench_ctx* c, int k) {
    bench_ops* o = c->ops;
    switch (k) {
    case B_OP_ADD: return hg_binary(HG_BINARY_ADD, &o->a, &o->b, &o->d);
    case B_OP_SUM: return hg_reduce(HG_REDUCE_SUM, &o->a, 0, NULL, 0, &o->s);
    case B_GRAPH_FUSED: {
        hg_tensor in[3] = {o->a, o->b, o->c};
        return hg_plan_run(o->plan, 3, in, 1, &o->y);
    }
    default: return hg_unary(unary_of(k), &o->a, &o->d);
    }
}

int bench_ops_verify(bench_ctx* c, int k) {
    bench_ops* o = c->ops;
    const char* name = k_bench_cases[k].name;
    if (k == B_OP_SUM) {
        float got = 0;
        hg_status st = hg_buffer_read(o->S, 0, &got, 1);
        if (st != HG_OK) return -1;
        // Pairwise f32 summation: error well below 1e-6 of the sum of magnitudes.
        double exact = 0, mag = 0;
        for (size_t i = 0; i < c->n; i++) {
            exact += c->arr.a[i];
            mag += fabs(c->arr.a[i]);
        }
        int ok = fabs((double)got - exact) <= 1e-6 * mag + 1e-6;
        if (!ok) fprintf(stderr, "bench: %s: got %.9g, want %.9g\n", name, (double)got, exact);
        return ok;
    }
    float* host = c->host;
    hg_status st = hg_buffer_read(k == B_GRAPH_FUSED ? c->Y : c->D, 0, host, c->n);
    if (st != HG_OK) return -1;
    size_t bad = 0, first = 0;
    switch (k) {
    case B_OP_ADD:
        for (size_t i = 0; i < c->n; i++)
            if (host[i] != c->arr.a[i] + c->arr.b[i] && !bad++) first = i;
        break;
    case B_GRAPH_FUSED:
        // A graph may contract a*b+c into one rounding: within 1e-6 of the C result.
        for (size_t i = 0; i < c->n; i++)
            if (fabsf(host[i] - c->arr.y[i]) > 1e-6f * fabsf(c->arr.y[i]) + 1e-7f && !bad++) first = i;
        break;
    case B_OP_EXP: bad = bench_check_unary(name, c->arr.a, host, c->n, bench_ref_exp, 4e-7, 0); break;
    case B_OP_TANH: bad = bench_check_unary(name, c->arr.a, host, c->n, bench_ref_tanh, 1e-6, 1e-37); break;
    case B_OP_SIGMOID: bad = bench_check_unary(name, c->arr.a, host, c->n, bench_ref_sigmoid, 1e-6, 0); break;
    default: bad = bench_check_unary(name, c->arr.a, host, c->n, bench_ref_gelu, 1e-6, 1e-43); break;
    }
    if (bad && (k == B_OP_ADD || k == B_GRAPH_FUSED))
        fprintf(stderr, "bench: %s: %zu wrong elements, first at %zu\n", name, bad, first);
    return bad == 0;
}

enum { LAT_BATCHES = 100, LAT_PER_BATCH = 1000 };

void bench_ops_latency(bench_ctx* c, bench_latency* out) {
    if (!have_library()) {
        snprintf(out->skipped, sizeof out->skipped,
                 "the op library is not in this build of libhologram");
        return;
    }
    hg_buffer bufs[3];
    hg_tensor t[3];
    int nb = 0;
    hg_status st = HG_OK;
    int64_t one = 1;
    float init[2] = {1.5f, 2.25f};
    for (; nb < 3 && st == HG_OK; nb++) {
        st = hg_buffer_create(c->ex, HG_DTYPE_F32, 1, &bufs[nb]);
        if (st != HG_OK) break;
        if (nb < 2) st = hg_buffer_write(bufs[nb], 0, &init[nb], 1);
        if (st == HG_OK) st = hg_tensor_from_buffer(bufs[nb], 1, &one, &t[nb]);
    }
    if (st == HG_OK) st = hg_binary(HG_BINARY_ADD, &t[0], &t[1], &t[2]);  // compiles, caches
    float got = 0;
    if (st == HG_OK) st = hg_buffer_read(bufs[2], 0, &got, 1);
    if (st == HG_OK && got != 3.75f) {
        snprintf(out->skipped, sizeof out->skipped, "wrong result %g (want 3.75)", (double)got);
    } else if (st != HG_OK) {
        snprintf(out->skipped, sizeof out->skipped, "%s: %s", hg_status_string(st), hg_last_error());
    } else {
        double times[LAT_BATCHES];
        for (int r = 0; r < LAT_BATCHES && st == HG_OK; r++) {
            double t0 = bench_now_s();
            for (int i = 0; i < LAT_PER_BATCH && st == HG_OK; i++)
                st = hg_binary(HG_BINARY_ADD, &t[0], &t[1], &t[2]);
            times[r] = (bench_now_s() - t0) * 1e9 / LAT_PER_BATCH;
        }
        if (st != HG_OK)
            snprintf(out->skipped, sizeof out->skipped, "%s: %s", hg_status_string(st),
                     hg_last_error());
        else {
            memcpy(out->times_ns, times, sizeof times);
            out->ntimes = LAT_BATCHES;
            bench_best_median(times, LAT_BATCHES, &out->best_ns, &out->median_ns);
        }
    }
    for (int i = 0; i < nb && i < 3; i++) hg_buffer_destroy(bufs[i]);
}
