// The composite ops' plan cache (src/composite/composite_run.c): at most HG_COP_CACHE_MAX
// compiled decompositions per executor, the least recently used one evicted for a new one, and
// never a plan another thread is running. Softmax rows of distinct lengths are distinct keys;
// every result is compared with float64.
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "composite/composite.h"
#include "hg_test.h"

#define NMAX (HG_COP_CACHE_MAX + 48)   // the longest row

static hg_executor g_ex;
static hg_buffer g_x;
static double g_xv[NMAX];

// softmax of the first n values as a (1, n) row into its own output; 1 when it matches float64.
static int softmax_row_ok(int64_t n) {
    int64_t shape[2] = {1, n};
    hg_tensor x, out = {0};
    if (hg_tensor_view(g_x, 2, shape, NULL, 0, &x) != HG_OK) return 0;
    if (hg_softmax(&x, -1, &out) != HG_OK) {
        fprintf(stderr, "softmax of %lld: %s\n", (long long)n, hg_last_error());
        return 0;
    }
    float got[NMAX];
    int ok = hg_buffer_read(out.buffer, 0, got, (size_t)n) == HG_OK;
    double m = -INFINITY, z = 0;
    for (int64_t i = 0; i < n; i++) m = g_xv[i] > m ? g_xv[i] : m;
    for (int64_t i = 0; i < n; i++) z += exp(g_xv[i] - m);
    for (int64_t i = 0; ok && i < n; i++) ok = fabs(got[i] - exp(g_xv[i] - m) / z) <= 1e-6;
    hg_buffer_destroy(out.buffer);
    return ok;
}

static void stats(int64_t* plans, int64_t* hits, int64_t* compiles) {
    hg_cop_cache_stats(g_ex, plans, hits, compiles);
}

// Fills the cache, then checks which call hits and which compiles again.
static void run_lru(void) {
    const int64_t N = HG_COP_CACHE_MAX;
    int64_t p, h, c;
    for (int64_t n = 1; n <= N; n++) CHECK(softmax_row_ok(n));
    stats(&p, &h, &c);
    CHECK(p == N && h == 0 && c == N);
    CHECK(softmax_row_ok(1));              // a hit: row 1 is now the most recently used
    stats(&p, &h, &c);
    CHECK(p == N && h == 1 && c == N);
    CHECK(softmax_row_ok(N + 1));          // a compile that evicts row 2, the least recent
    stats(&p, &h, &c);
    CHECK(p == N && h == 1 && c == N + 1);
    CHECK(softmax_row_ok(1));              // still held
    stats(&p, &h, &c);
    CHECK(h == 2 && c == N + 1);
    CHECK(softmax_row_ok(2));              // evicted: compiled again (evicting row 3)
    stats(&p, &h, &c);
    CHECK(p == N && h == 2 && c == N + 2);
    CHECK(softmax_row_ok(N + 1) && softmax_row_ok(2) && softmax_row_ok(4));   // all held
    stats(&p, &h, &c);
    CHECK(p == N && h == 5 && c == N + 2);
    CHECK(softmax_row_ok(3));
    stats(&p, &h, &c);
    CHECK(p == N && c == N + 3);
}

// Threads cycling over more keys than the cache holds, in different orders: each evicts plans
// the others may be about to run (ASan and the float64 check see a plan destroyed under a run).
typedef struct worker {
    int id, bad;
} worker;

static void* worker_run(void* arg) {
    worker* w = arg;
    for (int i = 0; i < 3 * NMAX; i++) {
        int64_t n = 1 + (w->id ? (int64_t)i * 37 % NMAX : NMAX - 1 - i % NMAX);
        if (!softmax_row_ok(n)) w->bad++;
    }
    return NULL;
}

static void run_threads(void) {
    enum { NT = 3 };
    pthread_t t[NT];
    worker w[NT];
    for (int i = 0; i < NT; i++) {
        w[i] = (worker){i, 0};
        CHECK(pthread_create(&t[i], NULL, worker_run, &w[i]) == 0);
    }
    for (int i = 0; i < NT; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        CHECK_MSG(w[i].bad == 0, "thread %d: %d wrong or failed results", i, w[i].bad);
    }
    int64_t p, h, c;
    stats(&p, &h, &c);
    CHECK(p == HG_COP_CACHE_MAX);
}

int main(void) {
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_ex));
    float xf[NMAX];
    for (int i = 0; i < NMAX; i++) {
        xf[i] = (float)sin(0.37 * i) * 3.0f;
        g_xv[i] = xf[i];
    }
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, NMAX, &g_x));
    CHECK_OK(hg_buffer_write(g_x, 0, xf, NMAX));
    hg_cop_mode_set(HG_COP_DECOMP);   // every softmax runs its cached decomposition
    run_lru();
    run_threads();
    hg_cop_mode_set(HG_COP_AUTO);
    CHECK_OK(hg_buffer_destroy(g_x));
    CHECK_OK(hg_executor_destroy(g_ex));
    return hg_test_finish("test_composite_cache");
}
