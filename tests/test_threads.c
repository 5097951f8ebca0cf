// Threads: several threads launching on ONE executor at once (hg_launch through the cache and
// kernel handles), each checking its own results; buffers created and destroyed concurrently;
// the worker pool's parts each run once whoever claims them.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdatomic.h>
#include "backends/cpu/thread_pool.h"
#include "base/handles.h"
#include "hg_test.h"

// c[i] = a[i] * s + b[i] for i < n (s: f32 scalar).
static hg_program make_axpy(void) {
    hg_program p;
    uint32_t a, b, c, n, s, i, pr, x, y;
    if (hg_program_create("axpy", &p) != HG_OK) return p;
    hg_program_add_buffer_param(p, "a", HG_DTYPE_F32, 1, &a);
    hg_program_add_buffer_param(p, "b", HG_DTYPE_F32, 1, &b);
    hg_program_add_buffer_param(p, "c", HG_DTYPE_F32, 0, &c);
    hg_program_add_scalar_param(p, "n", HG_DTYPE_U32, &n);
    hg_program_add_scalar_param(p, "s", HG_DTYPE_F32, &s);
    hg_program_add_reg(p, "i", HG_DTYPE_U32, &i);
    hg_program_add_reg(p, "p", HG_DTYPE_BOOL, &pr);
    hg_program_add_reg(p, "x", HG_DTYPE_F32, &x);
    hg_program_add_reg(p, "y", HG_DTYPE_F32, &y);
    hg_emit_unary(p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X));
    hg_emit_cmp(p, HG_CMP_LT, HG_DTYPE_U32, pr, hg_reg(i), hg_param(n));
    hg_emit_control(p, HG_OP_IF, hg_reg(pr));
    hg_emit_load(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, x, a, hg_reg(i));
    hg_emit_load(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, y, b, hg_reg(i));
    hg_emit_binary(p, HG_OP_MUL, HG_DTYPE_F32, x, hg_reg(x), hg_param(s));
    hg_emit_binary(p, HG_OP_ADD, HG_DTYPE_F32, x, hg_reg(x), hg_reg(y));
    hg_emit_store(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, c, hg_reg(i), hg_reg(x));
    hg_emit_control(p, HG_OP_ENDIF, hg_none());
    return p;
}

typedef struct worker {
    hg_executor ex;
    hg_program prog;   // shared by all workers (immutable)
    hg_kernel kern;    // shared kernel handle
    int id;
    int iters;
    int failures;
    char first_error[512];
} worker;

static void fail(worker* w, const char* what) {
    if (!w->failures++)
        snprintf(w->first_error, sizeof w->first_error, "worker %d: %s: %s", w->id, what,
                 hg_last_error());
}

static void* launch_worker(void* arg) {
    worker* w = arg;
    const uint32_t n = 1000 + 137 * (uint32_t)w->id;  // a different size per thread
    float* ha = malloc(n * sizeof *ha);
    float* hb = malloc(n * sizeof *hb);
    float* hc = malloc(n * sizeof *hc);
    hg_buffer a, b, c;
    if (hg_buffer_create(w->ex, HG_DTYPE_F32, n, &a) || hg_buffer_create(w->ex, HG_DTYPE_F32, n, &b) ||
        hg_buffer_create(w->ex, HG_DTYPE_F32, n, &c)) {
        fail(w, "buffer_create");
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        ha[i] = (float)(i % 97) + (float)w->id;
        hb[i] = (float)w->id * 1000.0f + (float)(i % 13);
    }
    if (hg_buffer_write(a, 0, ha, n) || hg_buffer_write(b, 0, hb, n)) fail(w, "write");
    for (int it = 0; it < w->iters && w->failures < 5; it++) {
        float s = (float)(it % 7) - 3.0f;  // small integers: exact in f32
        hg_arg args[5] = {hg_arg_buffer(a), hg_arg_buffer(b), hg_arg_buffer(c), hg_arg_u32(n),
                          hg_arg_f32(s)};
        hg_launch_config cfg = hg_launch_1d(n, (it & 1) ? 64 : 256);
        hg_status st = (it % 3 == 0) ? hg_kernel_launch(w->kern, &cfg, args, 5)
                                     : hg_launch(w->ex, w->prog, &cfg, args, 5);
        if (st) {
            fail(w, "launch");
            continue;
        }
        if (hg_buffer_read(c, 0, hc, n)) {
            fail(w, "read");
            continue;
        }
        for (uint32_t i = 0; i < n; i++)
            if (hc[i] != ha[i] * s + hb[i]) {
                char msg[128];
                snprintf(msg, sizeof msg, "iteration %d: c[%u] = %g, want %g", it, i, hc[i],
                         ha[i] * s + hb[i]);
                hg_clear_error();
                fail(w, msg);
                break;
            }
    }
    hg_buffer_destroy(a);
    hg_buffer_destroy(b);
    hg_buffer_destroy(c);
done:
    free(ha);
    free(hb);
    free(hc);
    return NULL;
}

static void run_launchers(int nthreads, int iters) {
    hg_executor ex;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    hg_program prog = make_axpy();
    CHECK_OK(hg_program_validate(prog));
    hg_kernel k;
    CHECK_OK(hg_kernel_create(ex, prog, &k));
    worker w[8];
    pthread_t th[8];
    for (int i = 0; i < nthreads; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].ex = ex;
        w[i].prog = prog;
        w[i].kern = k;
        w[i].id = i;
        w[i].iters = iters;
        CHECK(pthread_create(&th[i], NULL, launch_worker, &w[i]) == 0);
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(w[i].failures == 0, "%d threads: %s", nthreads, w[i].first_error);
    }
    CHECK_OK(hg_kernel_destroy(k));
    CHECK_OK(hg_program_destroy(prog));
    CHECK_OK(hg_executor_destroy(ex));
}

typedef struct churn {
    hg_executor ex;
    int id;
    int failures;
} churn;

// Creates and destroys buffers (some kept alive for a while), checking contents stay private.
static void* churn_worker(void* arg) {
    churn* c = arg;
    enum { KEEP = 64 };
    hg_buffer keep[KEEP];
    int64_t tag[KEEP];
    memset(keep, 0, sizeof keep);
    for (int i = 0; i < 4000; i++) {
        int slot = i % KEEP;
        if (keep[slot].handle) {
            int64_t v[3] = {0, 0, 0};
            if (hg_buffer_read(keep[slot], 0, v, 3) || v[0] != tag[slot] || v[2] != -tag[slot])
                c->failures++;
            if (hg_buffer_destroy(keep[slot])) c->failures++;
        }
        tag[slot] = (int64_t)c->id * 1000000 + i;
        int64_t v[3] = {tag[slot], 0, -tag[slot]};
        if (hg_buffer_create(c->ex, HG_DTYPE_I64, 3, &keep[slot]) ||
            hg_buffer_write(keep[slot], 0, v, 3))
            c->failures++;
        // A short-lived one and a program too, to churn the shared handle table.
        hg_buffer t;
        if (hg_buffer_create(c->ex, HG_DTYPE_U8, (size_t)(i % 5), &t) || hg_buffer_destroy(t))
            c->failures++;
        hg_program p;
        if (hg_program_create("tmp", &p) || hg_program_destroy(p)) c->failures++;
    }
    for (int s = 0; s < KEEP; s++)
        if (keep[s].handle && hg_buffer_destroy(keep[s])) c->failures++;
    return NULL;
}

static void run_churn(int nthreads) {
    hg_executor ex;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    uint64_t base = hg_handle_live_count(HG_HANDLE_BUFFER);
    churn c[4];
    pthread_t th[4];
    for (int i = 0; i < nthreads; i++) {
        c[i].ex = ex;
        c[i].id = i;
        c[i].failures = 0;
        CHECK(pthread_create(&th[i], NULL, churn_worker, &c[i]) == 0);
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(c[i].failures == 0, "churn thread %d: %d failures (%s)", i, c[i].failures,
                  hg_last_error());
    }
    CHECK(hg_handle_live_count(HG_HANDLE_BUFFER) == base);
    CHECK_OK(hg_executor_destroy(ex));
}

// The worker pool hands out a job's parts to whoever claims them first: the caller takes the
// parts of threads still asleep (after idle gaps, or with more threads than cores). Every part
// must run exactly once: a static split (matmul slabs) with a part lost or run twice, or an add
// whose chunks are shared by the parts, shows it against C.
static void run_pool_parts(void) {
    hg_executor_options o = {HG_BACKEND_CPU, 0, 4};
    hg_executor ex;
    CHECK_OK(hg_executor_create_ex(&o, &ex));
    enum { M = 70, K = 90, N = 200, E = 100003 };   // 2*M*K*N > the parallel threshold
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    float *c = malloc(sizeof(float) * M * N), *x = malloc(sizeof(float) * E);
    float *y = malloc(sizeof(float) * E);
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7) % 13) - 6.0f;
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 5) % 11) - 5.0f;
    for (int i = 0; i < E; i++) x[i] = (float)(i % 101);
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, se[1] = {E};
    hg_tensor ta, tb, tx;
    hg_buffer ba, bb, bx;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, M * K, &ba));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, K * N, &bb));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, E, &bx));
    CHECK_OK(hg_tensor_from_buffer(ba, 2, sa, &ta));
    CHECK_OK(hg_tensor_from_buffer(bb, 2, sb, &tb));
    CHECK_OK(hg_tensor_from_buffer(bx, 1, se, &tx));
    CHECK_OK(hg_buffer_write(ta.buffer, 0, a, M * K));
    CHECK_OK(hg_buffer_write(tb.buffer, 0, b, K * N));
    CHECK_OK(hg_buffer_write(tx.buffer, 0, x, E));
    for (int round = 0; round < 24; round++) {
        if (round % 3 == 0) {   // let the pool threads fall asleep
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
        hg_tensor tc = {0}, ty = {0};
        CHECK_OK(hg_matmul(&ta, &tb, &tc));
        CHECK_OK(hg_binary(HG_BINARY_ADD, &tx, &tx, &ty));
        CHECK_OK(hg_buffer_read(tc.buffer, 0, c, M * N));
        CHECK_OK(hg_buffer_read(ty.buffer, 0, y, E));
        int bi = -1, bj = -1;
        double bw = 0;
        for (int i = 0; i < M && bi < 0; i++)
            for (int j = 0; j < N && bi < 0; j++) {
                double want = 0;   // small integers: exact in f32 whatever the order
                for (int q = 0; q < K; q++) want += (double)a[i * K + q] * b[q * N + j];
                if (c[i * N + j] != (float)want) bi = i, bj = j, bw = want;
            }
        CHECK_MSG(bi < 0, "round %d: c[%d][%d] = %g, want %g", round, bi, bj,
                  bi < 0 ? 0.0 : c[bi * N + bj], bw);
        int be = -1;
        for (int i = 0; i < E && be < 0; i++)
            if (y[i] != 2.0f * x[i]) be = i;
        CHECK_MSG(be < 0, "round %d: y[%d] = %g, want %g", round, be, be < 0 ? 0.0 : y[be],
                  be < 0 ? 0.0 : 2.0 * x[be]);
        hg_buffer_destroy(tc.buffer);
        hg_buffer_destroy(ty.buffer);
    }
    hg_buffer_destroy(ta.buffer);
    hg_buffer_destroy(tb.buffer);
    hg_buffer_destroy(tx.buffer);
    free(a); free(b); free(c); free(x); free(y);
    CHECK_OK(hg_executor_destroy(ex));
}

// The pool itself: every part of every job runs exactly once and has finished when
// hg_pool_run returns, whether pool threads are asleep (after an idle gap: the caller then
// takes their parts), spinning (back-to-back jobs) or more than the cores.
typedef struct part_log {
    atomic_int runs[8];
    int sleep_us;
} part_log;

static void log_part(void* ctx, int part) {
    part_log* l = ctx;
    if (l->sleep_us) {
        struct timespec ts = {0, (long)l->sleep_us * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&l->runs[part], 1);
}

static void run_pool_direct(void) {
    hg_pool* p = hg_pool_create(4);
    CHECK(p != NULL);
    if (!p) return;
    for (int job = 0; job < 60; job++) {
        if (job % 4 == 0) {
            struct timespec ts = {0, 1000000};   // the pool threads go to sleep
            nanosleep(&ts, NULL);
        }
        part_log l;
        for (int i = 0; i < 8; i++) atomic_init(&l.runs[i], 0);
        l.sleep_us = job % 3 == 0 ? 200 : 0;
        int parts = 1 + job % 6;   // up to more parts than threads: capped at 4
        hg_pool_run(p, parts, log_part, &l);
        int want_parts = parts < 4 ? parts : 4, wrong = 0;
        for (int i = 0; i < 8; i++)
            wrong |= atomic_load(&l.runs[i]) != (i < want_parts);
        CHECK_MSG(!wrong, "job %d (%d parts): runs %d %d %d %d %d", job, parts,
                  atomic_load(&l.runs[0]), atomic_load(&l.runs[1]), atomic_load(&l.runs[2]),
                  atomic_load(&l.runs[3]), atomic_load(&l.runs[4]));
    }
    hg_pool_destroy(p);
}

int main(void) {
    run_pool_direct();
    run_pool_parts();
    run_launchers(2, 300);
    run_launchers(4, 150);
    run_churn(4);
    return hg_test_finish("test_threads");
}
