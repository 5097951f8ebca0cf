// hg_cpu_set_threading: without an OpenMP runtime in the process OPENMP is refused and nothing
// changes; with libgomp loaded privately (dlopen RTLD_LOCAL, as torch loads it) the pool's parts
// run inside OpenMP parallel regions (omp_in_parallel() in each part), ops give bit-identical
// results on both kinds of threads and match a float64 reference, and a child forked after the
// choice runs on hologram's own threads. On one busy core (a spinning competitor) OpenMP's team
// threads join late, and regions go back to hologram's threads for a while, then return.
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backends/cpu/thread_pool.h"
#include "hg_test.h"

static int (*omp_in_parallel_fn)(void);

typedef struct parts_seen {
    int nparts;
    atomic_int ran[8];
    atomic_int in_parallel;   // parts that saw omp_in_parallel() != 0
} parts_seen;

static void record_part(void* ctx, int part) {
    parts_seen* s = ctx;
    atomic_fetch_add(&s->ran[part], 1);
    if (omp_in_parallel_fn && omp_in_parallel_fn()) atomic_fetch_add(&s->in_parallel, 1);
}

// Runs 8 parts on a 4-thread pool; every part exactly once. Returns how many were in OpenMP.
static int run_parts(hg_pool* pool) {
    parts_seen s;
    memset(&s, 0, sizeof s);
    s.nparts = 8;
    hg_pool_run(pool, 8, record_part, &s);   // min(8, size) parts: 4
    for (int i = 0; i < 4; i++) CHECK_MSG(atomic_load(&s.ran[i]) == 1, "part %d ran %d times", i,
                                          atomic_load(&s.ran[i]));
    for (int i = 4; i < 8; i++) CHECK(atomic_load(&s.ran[i]) == 0);
    return atomic_load(&s.in_parallel);
}

static void check_mode(hg_cpu_threading want);

// Parts in OpenMP regions again, once a back-off (a late team thread on a busy machine) is over;
// up to 6 s, for a machine busy with other tests.
static int wait_for_openmp(hg_pool* pool) {
    for (int i = 0; i < 100; i++) {
        if (run_parts(pool) == 4) return 1;
        usleep(60000);
    }
    return 0;
}

static atomic_int g_stop_spin;

static void* spin_main(void* arg) {
    (void)arg;
    while (!atomic_load_explicit(&g_stop_spin, memory_order_relaxed)) {
    }
    return NULL;
}

// All threads on one core with a spinning competitor: some region finds a team thread late,
// and the following runs are on hologram's threads while the choice stays OPENMP.
static void check_back_off(hg_pool* pool) {
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0) return;
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &all)) cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        printf("SKIP back-off: sched_setaffinity refused\n");
        return;
    }
    pthread_t spinner;
    atomic_store(&g_stop_spin, 0);
    CHECK(pthread_create(&spinner, NULL, spin_main, NULL) == 0);
    int own_seen = 0;
    for (int i = 0; i < 400 && !own_seen; i++) own_seen = run_parts(pool) == 0;
    CHECK_MSG(own_seen, "no region ran on hologram's threads with a busy core");
    check_mode(HG_CPU_THREADING_OPENMP);
    atomic_store(&g_stop_spin, 1);
    pthread_join(spinner, NULL);
    CHECK(sched_setaffinity(0, sizeof all, &all) == 0);
    CHECK_MSG(wait_for_openmp(pool), "regions did not return to OpenMP after the back-off");
}

static void check_mode(hg_cpu_threading want) {
    hg_cpu_threading got = (hg_cpu_threading)-1;
    CHECK_OK(hg_cpu_get_threading(&got));
    CHECK_MSG(got == want, "threading %d, expected %d", (int)got, (int)want);
}

enum { N = 96, BIG = 1 << 20 };

typedef struct results {
    float mm[N * N];
    float* ex;   // BIG
} results;

static float* g_a;
static float* g_b;
static float* g_x;

// a @ b (N x N) and exp(x) (BIG elements) on a 2-thread executor, large enough to run in parts.
static void run_ops(results* r) {
    hg_executor_options o = {HG_BACKEND_CPU, 0, 2};
    hg_executor ex;
    CHECK_OK(hg_executor_create_ex(&o, &ex));
    hg_buffer ba, bb, bo, bx, be;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N * N, &ba));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N * N, &bb));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N * N, &bo));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, BIG, &bx));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, BIG, &be));
    CHECK_OK(hg_buffer_write(ba, 0, g_a, N * N));
    CHECK_OK(hg_buffer_write(bb, 0, g_b, N * N));
    CHECK_OK(hg_buffer_write(bx, 0, g_x, BIG));
    hg_tensor ta, tb, to, tx, te;
    int64_t sq[2] = {N, N}, flat[1] = {BIG};
    CHECK_OK(hg_tensor_from_buffer(ba, 2, sq, &ta));
    CHECK_OK(hg_tensor_from_buffer(bb, 2, sq, &tb));
    CHECK_OK(hg_tensor_from_buffer(bo, 2, sq, &to));
    CHECK_OK(hg_tensor_from_buffer(bx, 1, flat, &tx));
    CHECK_OK(hg_tensor_from_buffer(be, 1, flat, &te));
    CHECK_OK(hg_matmul(&ta, &tb, &to));
    CHECK_OK(hg_unary(HG_UNARY_EXP, &tx, &te));
    CHECK_OK(hg_buffer_read(bo, 0, r->mm, N * N));
    CHECK_OK(hg_buffer_read(be, 0, r->ex, BIG));
    CHECK_OK(hg_executor_destroy(ex));
}

static void check_reference(const results* r) {
    int bad = 0;
    for (int i = 0; i < N && bad < 5; i++)
        for (int j = 0; j < N; j++) {
            double want = 0, mag = 0;
            for (int k = 0; k < N; k++) {
                want += (double)g_a[i * N + k] * g_b[k * N + j];
                mag += fabs((double)g_a[i * N + k] * g_b[k * N + j]);
            }
            if (fabs(r->mm[i * N + j] - want) > 1e-5 * mag + 1e-6) bad++;
        }
    for (int i = 0; i < BIG && bad < 5; i++) {
        double want = exp((double)g_x[i]);
        if (fabs(r->ex[i] - want) > 4e-7 * want) bad++;
    }
    CHECK_MSG(bad == 0, "%d results differ from the float64 reference", bad);
}

int main(void) {
    hg_pool* pool = hg_pool_create(4);
    CHECK(pool != NULL);
    if (!pool) return hg_test_finish("test_cpu_threading");
    g_a = malloc(sizeof(float) * N * N);
    g_b = malloc(sizeof(float) * N * N);
    g_x = malloc(sizeof(float) * BIG);
    results own = {.ex = malloc(sizeof(float) * BIG)}, omp = {.ex = malloc(sizeof(float) * BIG)};
    srand(7);
    for (int i = 0; i < N * N; i++) {
        g_a[i] = (float)((double)rand() / RAND_MAX) * 2 - 1;
        g_b[i] = (float)((double)rand() / RAND_MAX) * 2 - 1;
    }
    for (int i = 0; i < BIG; i++) g_x[i] = (float)((double)rand() / RAND_MAX) * 20 - 10;

    // Bad arguments; no OpenMP runtime yet: refused, the choice unchanged.
    check_mode(HG_CPU_THREADING_OWN);
    CHECK_STATUS(hg_cpu_get_threading(NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_cpu_set_threading((hg_cpu_threading)7), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "mode 7") != NULL);
    void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    CHECK_MSG(gomp == NULL, "libgomp is loaded before the test loads it");
    CHECK_STATUS(hg_cpu_set_threading(HG_CPU_THREADING_OPENMP), HG_ERR_UNSUPPORTED);
    CHECK(strstr(hg_last_error(), "no OpenMP runtime") != NULL);
    check_mode(HG_CPU_THREADING_OWN);
    CHECK(run_parts(pool) == 0);
    run_ops(&own);
    check_reference(&own);

    gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!gomp) {
        printf("SKIP the OpenMP half: libgomp.so.1 does not load (%s)\n", dlerror());
    } else {
        void* f = dlsym(gomp, "omp_in_parallel");
        memcpy(&omp_in_parallel_fn, &f, sizeof f);
        CHECK(omp_in_parallel_fn != NULL);
        CHECK_OK(hg_cpu_set_threading(HG_CPU_THREADING_OPENMP));
        check_mode(HG_CPU_THREADING_OPENMP);
        CHECK_MSG(wait_for_openmp(pool), "parts outside an OpenMP region");
        run_ops(&omp);
        CHECK(memcmp(own.mm, omp.mm, sizeof own.mm) == 0);
        CHECK(memcmp(own.ex, omp.ex, sizeof(float) * BIG) == 0);

        // A child forked now: hologram's own threads (libgomp's are gone there).
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            hg_cpu_threading m = HG_CPU_THREADING_OPENMP;
            int ok = hg_cpu_get_threading(&m) == HG_OK && m == HG_CPU_THREADING_OWN;
            parts_seen s;
            memset(&s, 0, sizeof s);
            hg_pool_run(pool, 4, record_part, &s);
            for (int i = 0; i < 4; i++) ok = ok && atomic_load(&s.ran[i]) == 1;
            ok = ok && atomic_load(&s.in_parallel) == 0;
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child: status %d",
                  status);
        check_mode(HG_CPU_THREADING_OPENMP);   // the parent keeps its choice

        check_back_off(pool);
        CHECK_OK(hg_cpu_set_threading(HG_CPU_THREADING_OWN));
        check_mode(HG_CPU_THREADING_OWN);
        CHECK(run_parts(pool) == 0);
    }
    hg_pool_destroy(pool);
    free(own.ex);
    free(omp.ex);
    free(g_a);
    free(g_b);
    free(g_x);
    return hg_test_finish("test_cpu_threading");
}
