// Micro-benchmark of the CPU backend's lane-block engine against STREAM-like C loops with the
// same memory traffic: c = a + b and y = relu(a*b + c) * 0.5 on 16M f32 (2 threads by default).
// Build: cc -O3 -I include -I src bench/cpu_engine_bench.c <build>/libhologram.a -lpthread -lm
// Run:   cpu_engine_bench [threads] [n]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backends/backend.h"
#include "isa/program.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct job { float *a, *b, *c, *y; size_t lo, hi; int kind; } job;
static void* stream_fn(void* p) {
    job* j = p;
    if (j->kind == 0)
        for (size_t i = j->lo; i < j->hi; i++) j->c[i] = j->a[i] + j->b[i];
    else
        for (size_t i = j->lo; i < j->hi; i++) {
            float t = j->a[i] * j->b[i] + j->c[i];
            j->y[i] = (t > 0.0f ? t : 0.0f) * 0.5f;
        }
    return NULL;
}
static double stream(int kind, int nt, float* a, float* b, float* c, float* y, size_t n) {
    pthread_t th[64];
    job js[64];
    double t0 = now();
    for (int i = 0; i < nt; i++) {
        js[i] = (job){a, b, c, y, n * i / nt, n * (i + 1) / nt, kind};
        pthread_create(&th[i], NULL, stream_fn, &js[i]);
    }
    for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
    return now() - t0;
}

static hg_prog* prog_add(void) {
    hg_prog* p = hg_prog_new("vadd");
    hg_prog_add_param(p, "a", HG_PARAM_BUFFER, HG_DTYPE_F32, 1, NULL);
    hg_prog_add_param(p, "b", HG_PARAM_BUFFER, HG_DTYPE_F32, 1, NULL);
    hg_prog_add_param(p, "c", HG_PARAM_BUFFER, HG_DTYPE_F32, 0, NULL);
    hg_prog_add_param(p, "n", HG_PARAM_SCALAR, HG_DTYPE_U32, 0, NULL);
    hg_prog_add_reg(p, "i", HG_DTYPE_U32, NULL);
    hg_prog_add_reg(p, "p", HG_DTYPE_BOOL, NULL);
    hg_prog_add_reg(p, "x", HG_DTYPE_F32, NULL);
    hg_prog_add_reg(p, "y", HG_DTYPE_F32, NULL);
    hg_instr in[] = {
        {HG_OP_MOV, HG_DTYPE_U32, 0, 0, hg_reg(0), {hg_sreg(HG_SREG_GID_X)}},
        {HG_OP_CMP, HG_DTYPE_U32, HG_CMP_LT, 0, hg_reg(1), {hg_reg(0), hg_param(3)}},
        {HG_OP_IF, 0, 0, 0, hg_none(), {hg_reg(1)}},
        {HG_OP_LD, HG_DTYPE_F32, HG_SPACE_GLOBAL, 0, hg_reg(2), {hg_reg(0)}},
        {HG_OP_LD, HG_DTYPE_F32, HG_SPACE_GLOBAL, 1, hg_reg(3), {hg_reg(0)}},
        {HG_OP_ADD, HG_DTYPE_F32, 0, 0, hg_reg(2), {hg_reg(2), hg_reg(3)}},
        {HG_OP_ST, HG_DTYPE_F32, HG_SPACE_GLOBAL, 2, hg_none(), {hg_reg(0), hg_reg(2)}},
        {HG_OP_ENDIF, 0, 0, 0, hg_none(), {hg_none()}},
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) hg_prog_emit(p, &in[i]);
    return p;
}

static hg_prog* prog_relu(void) {
    hg_prog* p = hg_prog_new("fused");
    hg_prog_add_param(p, "a", HG_PARAM_BUFFER, HG_DTYPE_F32, 1, NULL);
    hg_prog_add_param(p, "b", HG_PARAM_BUFFER, HG_DTYPE_F32, 1, NULL);
    hg_prog_add_param(p, "c", HG_PARAM_BUFFER, HG_DTYPE_F32, 1, NULL);
    hg_prog_add_param(p, "y", HG_PARAM_BUFFER, HG_DTYPE_F32, 0, NULL);
    hg_prog_add_param(p, "n", HG_PARAM_SCALAR, HG_DTYPE_U32, 0, NULL);
    hg_prog_add_reg(p, "i", HG_DTYPE_U32, NULL);
    hg_prog_add_reg(p, "p", HG_DTYPE_BOOL, NULL);
    hg_prog_add_reg(p, "x", HG_DTYPE_F32, NULL);
    hg_prog_add_reg(p, "w", HG_DTYPE_F32, NULL);
    hg_prog_add_reg(p, "z", HG_DTYPE_F32, NULL);
    hg_instr in[] = {
        {HG_OP_MOV, HG_DTYPE_U32, 0, 0, hg_reg(0), {hg_sreg(HG_SREG_GID_X)}},
        {HG_OP_CMP, HG_DTYPE_U32, HG_CMP_LT, 0, hg_reg(1), {hg_reg(0), hg_param(4)}},
        {HG_OP_IF, 0, 0, 0, hg_none(), {hg_reg(1)}},
        {HG_OP_LD, HG_DTYPE_F32, HG_SPACE_GLOBAL, 0, hg_reg(2), {hg_reg(0)}},
        {HG_OP_LD, HG_DTYPE_F32, HG_SPACE_GLOBAL, 1, hg_reg(3), {hg_reg(0)}},
        {HG_OP_LD, HG_DTYPE_F32, HG_SPACE_GLOBAL, 2, hg_reg(4), {hg_reg(0)}},
        {HG_OP_MUL, HG_DTYPE_F32, 0, 0, hg_reg(2), {hg_reg(2), hg_reg(3)}},
        {HG_OP_ADD, HG_DTYPE_F32, 0, 0, hg_reg(2), {hg_reg(2), hg_reg(4)}},
        {HG_OP_MAX, HG_DTYPE_F32, 0, 0, hg_reg(2), {hg_reg(2), hg_imm_f32(0.0f)}},
        {HG_OP_MUL, HG_DTYPE_F32, 0, 0, hg_reg(2), {hg_reg(2), hg_imm_f32(0.5f)}},
        {HG_OP_ST, HG_DTYPE_F32, HG_SPACE_GLOBAL, 3, hg_none(), {hg_reg(0), hg_reg(2)}},
        {HG_OP_ENDIF, 0, 0, 0, hg_none(), {hg_none()}},
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) hg_prog_emit(p, &in[i]);
    return p;
}

int main(int argc, char** argv) {
    int nt = argc > 1 ? atoi(argv[1]) : 2;
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : (16u << 20);
    const hg_backend_vtable* vt = &hg_cpu_backend;
    hg_executor_options o = {HG_BACKEND_CPU, 0, nt};
    void* st;
    if (vt->executor_create(&o, &st)) { fprintf(stderr, "%s\n", hg_last_error()); return 1; }
    void *a, *b, *c, *y;
    vt->mem_alloc(st, n * 4, &a); vt->mem_alloc(st, n * 4, &b);
    vt->mem_alloc(st, n * 4, &c); vt->mem_alloc(st, n * 4, &y);
    for (size_t i = 0; i < n; i++) { ((float*)a)[i] = (float)(i % 97) - 40; ((float*)b)[i] = 0.5f; ((float*)c)[i] = 1; }
    hg_prog* pa = prog_add();
    hg_prog* pr = prog_relu();
    if (hg_prog_validate(pa) || hg_prog_validate(pr)) { fprintf(stderr, "%s\n", hg_last_error()); return 1; }
    void *ka, *kr;
    vt->kernel_compile(st, pa, &ka);
    vt->kernel_compile(st, pr, &kr);
    hg_launch_config cfg = hg_launch_1d(n, 256);
    hg_bound_arg args_a[4] = {{a, n, 0}, {b, n, 0}, {c, n, 0}, {NULL, 0, (uint32_t)n}};
    hg_bound_arg args_r[5] = {{a, n, 0}, {b, n, 0}, {c, n, 0}, {y, n, 0}, {NULL, 0, (uint32_t)n}};
    for (int kind = 0; kind < 2; kind++) {
        double best_s = 1e9, best_k = 1e9;
        int reps = getenv("REPS") ? atoi(getenv("REPS")) : 15;
        for (int rep = 0; rep < reps; rep++) {
            double t = stream(kind, nt, a, b, c, y, n);
            if (t < best_s) best_s = t;
            double t0 = now();
            hg_status s = kind == 0 ? vt->kernel_launch(st, ka, &cfg, args_a, 4)
                                    : vt->kernel_launch(st, kr, &cfg, args_r, 5);
            t = now() - t0;
            if (s) { fprintf(stderr, "launch: %s\n", hg_last_error()); return 1; }
            if (t < best_k) best_k = t;
        }
        double bytes = (kind == 0 ? 12.0 : 16.0) * n;
        printf("%-6s stream %.2f ms (%.1f GB/s)  isa %.2f ms (%.1f GB/s)  ratio %.1f%%\n",
               kind == 0 ? "add" : "fused", best_s * 1e3, bytes / best_s / 1e9, best_k * 1e3,
               bytes / best_k / 1e9, 100.0 * best_s / best_k);
    }
    // correctness spot check
    for (size_t i = 0; i < n; i += 4099) {
        float t = ((float*)a)[i] * ((float*)b)[i] + ((float*)c)[i];
        float want = (t > 0 ? t : 0) * 0.5f;
        if (((float*)y)[i] != want) { printf("MISMATCH at %zu\n", i); return 1; }
    }
    return 0;
}
