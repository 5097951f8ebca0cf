// hg_matmul (f32, f64) against the backend's sgemm slot called directly on the same buffers:
// the op layer should add no copies for contiguous or transposed operands. Prints GFLOP/s,
// best and median of the repeats, interleaving the two so machine noise hits both alike.
//
//   gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc bench/ops_matmul_bench.c \
//       build/<dir>/libhologram.a -lpthread -lm -o /tmp/ops_matmul_bench
//   /tmp/ops_matmul_bench [repeats]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backends/backend.h"
#include "runtime/objects.h"
#include "hologram.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static hg_tensor tensor2(hg_buffer b, hg_dtype dt, int64_t r, int64_t c, int trans) {
    hg_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = dt;
    t.ndim = 2;
    t.shape[0] = r;
    t.shape[1] = c;
    // trans: the storage is (c, r) row-major and the view its transpose.
    t.strides[0] = trans ? 1 : c;
    t.strides[1] = trans ? r : 1;
    return t;
}

static void bench(hg_executor ex, hg_dtype dt, int64_t m, int64_t n, int64_t k, int trans_b,
                  int reps) {
    hg_buffer ba, bb, bc;
    hg_buffer_create(ex, dt, (size_t)(m * k), &ba);
    hg_buffer_create(ex, dt, (size_t)(k * n), &bb);
    hg_buffer_create(ex, dt, (size_t)(m * n), &bc);
    hg_buffer_fill(ba, 0.5);
    hg_buffer_fill(bb, 0.25);
    hg_tensor a = tensor2(ba, dt, m, k, 0), b = tensor2(bb, dt, k, n, trans_b);
    hg_tensor c = tensor2(bc, dt, m, n, 0);
    hg_executor_obj* exo = hg_executor_resolve(ex, "bench");
    void *pa, *pb, *pc;
    hg_buffer_map(ba, &pa);
    hg_buffer_map(bb, &pb);
    hg_buffer_map(bc, &pc);
    double* t_op = malloc(sizeof(double) * (size_t)reps);
    double* t_sl = malloc(sizeof(double) * (size_t)reps);
    double flops = 2.0 * (double)m * (double)n * (double)k;
    for (int r = -1; r < reps; r++) {   // r = -1 warms up
        double t0 = now();
        hg_status s = hg_matmul(&a, &b, &c);
        double t1 = now();
        if (s) { fprintf(stderr, "hg_matmul: %s\n", hg_last_error()); exit(1); }
        if (dt == HG_DTYPE_F32)
            exo->vt->sgemm(exo->state, 0, trans_b, m, n, k, 1.0f, pa, k, pb, trans_b ? k : n, 0.0f,
                           pc, n);
        double t2 = now();
        if (r >= 0) { t_op[r] = t1 - t0; t_sl[r] = t2 - t1; }
    }
    qsort(t_op, (size_t)reps, sizeof(double), cmp_d);
    qsort(t_sl, (size_t)reps, sizeof(double), cmp_d);
    printf("%-4s %5lld x %5lld x %5lld %s  hg_matmul best %7.1f median %7.1f GFLOP/s", 
           dt == HG_DTYPE_F32 ? "f32" : "f64", (long long)m, (long long)k, (long long)n,
           trans_b ? "b^T" : "b  ", flops / t_op[0] * 1e-9, flops / t_op[reps / 2] * 1e-9);
    if (dt == HG_DTYPE_F32)
        printf(" | sgemm slot best %7.1f median %7.1f | ratio best %.3f median %.3f",
               flops / t_sl[0] * 1e-9, flops / t_sl[reps / 2] * 1e-9, t_sl[0] / t_op[0],
               t_sl[reps / 2] / t_op[reps / 2]);
    printf("\n");
    fflush(stdout);
    free(t_op);
    free(t_sl);
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bb);
    hg_buffer_destroy(bc);
}

int main(int argc, char** argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    hg_executor ex;
    if (hg_executor_create(HG_BACKEND_CPU, &ex)) { fprintf(stderr, "%s\n", hg_last_error()); return 1; }
    int threads = 0;
    hg_executor_num_threads(ex, &threads);
    printf("threads %d\n", threads);
    int64_t sizes[] = {256, 1024, 2048};
    for (int i = 0; i < 3; i++) {
        int r = sizes[i] >= 2048 ? (reps + 3) / 4 : reps;
        bench(ex, HG_DTYPE_F32, sizes[i], sizes[i], sizes[i], 0, r);
        bench(ex, HG_DTYPE_F32, sizes[i], sizes[i], sizes[i], 1, r);
    }
    bench(ex, HG_DTYPE_F32, 64, 4096, 4096, 0, reps);
    bench(ex, HG_DTYPE_F32, 64, 4096, 4096, 1, reps);
    bench(ex, HG_DTYPE_F64, 256, 256, 256, 0, reps);
    bench(ex, HG_DTYPE_F64, 1024, 1024, 1024, 0, (reps + 1) / 2);
    bench(ex, HG_DTYPE_F64, 1024, 1024, 1024, 1, (reps + 1) / 2);
    hg_executor_destroy(ex);
    return 0;
}
