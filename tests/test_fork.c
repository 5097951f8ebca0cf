// fork() while other threads run ops on the same executor: the child gets a working library
// (locks made anew, the thread pool restarted) and checks its results against a reference; the
// parent goes on unaffected. A hang in the child or in fork() itself fails (alarm), never
// blocks. A CUDA executor (the host emulation) made before the fork refuses every call in the
// child with a clear error, and one made in the child works.
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "base/error.h"
#include "hg_test.h"

// ThreadSanitizer cannot follow threads started in a child of a multi-threaded fork ("dup
// thread with used id"): under it the child skips what starts pool threads, and TSan checks the
// parent's side (the fork handlers racing with the busy threads).
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

// AddressSanitizer's allocator (gcc 12's libsanitizer) takes no lock around fork(): a child
// forked while another thread is inside malloc can wait forever on the allocator's mutex (seen:
// FutexWait in SizeClassAllocator64::GetFromAllocator from the child's first malloc, ~5% of
// runs). Under it the busy threads are parked between rounds when the parent forks; the
// release build forks them mid-op.
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define N 100000    // several parts on the pool
#define M 48        // matmul size (the GEMM packing cache and pool)
#define FORKS 12

static hg_executor g_ex;
static atomic_int g_stop;
static atomic_long g_rounds;
static atomic_int g_hold;     // UNDER_ASAN: busy threads park between rounds while set
static atomic_int g_parked;   // how many are parked
static atomic_int g_exited;   // busy threads that left their loop (a wrong result)

typedef struct vecs {
    hg_buffer a, b, c, ma, mb, mc;
    hg_tensor ta, tb, tc, tma, tmb, tmc;
    float* ha;
    float* hb;
    float* hm;
} vecs;

static int vecs_make(hg_executor ex, vecs* v, float seed) {
    memset(v, 0, sizeof *v);
    int64_t n = N, mm[2] = {M, M};
    v->ha = malloc(N * sizeof(float));
    v->hb = malloc(N * sizeof(float));
    v->hm = malloc(M * M * sizeof(float));
    if (!v->ha || !v->hb || !v->hm) return 0;
    for (int i = 0; i < N; i++) {
        v->ha[i] = seed + (float)(i % 97);
        v->hb[i] = (float)(i % 13) * 0.5f;
    }
    for (int i = 0; i < M * M; i++) v->hm[i] = (float)((i * 7 + (int)seed) % 11) - 5.0f;
    if (hg_buffer_create(ex, HG_DTYPE_F32, N, &v->a) || hg_buffer_create(ex, HG_DTYPE_F32, N, &v->b) ||
        hg_buffer_create(ex, HG_DTYPE_F32, N, &v->c) ||
        hg_buffer_create(ex, HG_DTYPE_F32, M * M, &v->ma) ||
        hg_buffer_create(ex, HG_DTYPE_F32, M * M, &v->mb) ||
        hg_buffer_create(ex, HG_DTYPE_F32, M * M, &v->mc))
        return 0;
    if (hg_buffer_write(v->a, 0, v->ha, N) || hg_buffer_write(v->b, 0, v->hb, N) ||
        hg_buffer_write(v->ma, 0, v->hm, M * M) || hg_buffer_write(v->mb, 0, v->hm, M * M))
        return 0;
    return !hg_tensor_from_buffer(v->a, 1, &n, &v->ta) && !hg_tensor_from_buffer(v->b, 1, &n, &v->tb) &&
           !hg_tensor_from_buffer(v->c, 1, &n, &v->tc) &&
           !hg_tensor_from_buffer(v->ma, 2, mm, &v->tma) &&
           !hg_tensor_from_buffer(v->mb, 2, mm, &v->tmb) &&
           !hg_tensor_from_buffer(v->mc, 2, mm, &v->tmc);
}

static void vecs_free(vecs* v) {
    hg_buffer bs[6] = {v->a, v->b, v->c, v->ma, v->mb, v->mc};
    for (int i = 0; i < 6; i++)
        if (bs[i].handle) hg_buffer_destroy(bs[i]);
    free(v->ha);
    free(v->hb);
    free(v->hm);
}

// One round of ops (add, a chain through the plan cache, matmul), checked exactly: every value
// is a small integer or half-integer, so f32 holds each result exactly. Returns 1 when right.
static int round_ok(vecs* v, float* out) {
    if (hg_binary(HG_BINARY_ADD, &v->ta, &v->tb, &v->tc)) return 0;
    if (hg_buffer_read(v->c, 0, out, N)) return 0;
    for (int i = 0; i < N; i++)
        if (out[i] != v->ha[i] + v->hb[i]) return 0;
    if (hg_binary(HG_BINARY_MUL, &v->tc, &v->tb, &v->tc)) return 0;
    if (hg_buffer_read(v->c, 0, out, N)) return 0;
    for (int i = 0; i < N; i++)
        if (out[i] != (v->ha[i] + v->hb[i]) * v->hb[i]) return 0;
    if (hg_matmul(&v->tma, &v->tmb, &v->tmc)) return 0;
    if (hg_buffer_read(v->mc, 0, out, M * M)) return 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int k = 0; k < M; k++) s += (double)v->hm[i * M + k] * v->hm[k * M + j];
            if (out[i * M + j] != (float)s) return 0;
        }
    return 1;
}

static void* busy(void* arg) {
    float seed = (float)(intptr_t)arg;
    vecs v;
    memset(&v, 0, sizeof v);
    float* out = malloc(N * sizeof(float));
    int ok = out && vecs_make(g_ex, &v, seed);
    while (ok && !atomic_load(&g_stop)) {
        if (atomic_load(&g_hold)) {
            atomic_fetch_add(&g_parked, 1);
            while (atomic_load(&g_hold)) sched_yield();
            atomic_fetch_sub(&g_parked, 1);
        }
        ok = round_ok(&v, out);
        atomic_fetch_add(&g_rounds, 1);
    }
    atomic_fetch_add(&g_exited, 1);
    vecs_free(&v);
    free(out);
    return (void*)(intptr_t)ok;
}

// Log messages reach a callback in the child too (the log lock was made anew).
static atomic_int g_logged;
static void count_log(hg_log_level level, const char* msg, void* user) {
    (void)level, (void)msg, (void)user;
    atomic_fetch_add(&g_logged, 1);
}

// The child: ops on the executor the busy threads used, on a new one, and (when asked) the
// CUDA emulation's before-fork refusal. Exit code: 0 right, else which check failed.
static int child_main(hg_executor cuda_before) {
    alarm(30);   // a hang kills the child: the parent sees a signal
    vecs v;
    float* out = malloc(N * sizeof(float));
    if (!out || !vecs_make(g_ex, &v, 3.0f)) return 2;   // buffers: the executor's locks
    for (int r = 0; r < 3 && !UNDER_TSAN; r++)
        if (!round_ok(&v, out)) return 3;
    if (hg_buffer_read(v.a, 0, out, N) || memcmp(out, v.ha, N * sizeof(float))) return 3;
    vecs_free(&v);
    if (!UNDER_TSAN) {
        hg_executor_options o = {HG_BACKEND_CPU, 0, 2};
        hg_executor ex2;
        if (hg_executor_create_ex(&o, &ex2)) return 4;
        if (!vecs_make(ex2, &v, 5.0f) || !round_ok(&v, out)) return 5;
        vecs_free(&v);
        if (hg_executor_destroy(ex2)) return 6;
    }
    hg_log_set_callback(count_log, NULL);
    hg_log(HG_LOG_ERROR, "test_fork: a message from the child");
    hg_log_set_callback(NULL, NULL);
    if (atomic_load(&g_logged) != 1) return 7;
    if (cuda_before.handle) {
        hg_buffer b;
        hg_status s = hg_buffer_create(cuda_before, HG_DTYPE_F32, 16, &b);
        if (s != HG_ERR_EXECUTOR_DEAD || !strstr(hg_last_error(), "created before fork()") ||
            !strstr(hg_last_error(), "create a new one in the child"))
            return 8;
        if (hg_executor_synchronize(cuda_before) != HG_ERR_EXECUTOR_DEAD) return 9;
        hg_executor cuda_new;
        float in[16], back[16];
        for (int i = 0; i < 16; i++) in[i] = (float)i * 1.5f;
        if (hg_executor_create(HG_BACKEND_CUDA, &cuda_new)) return 10;
        if (hg_buffer_create(cuda_new, HG_DTYPE_F32, 16, &b) || hg_buffer_write(b, 0, in, 16) ||
            hg_buffer_read(b, 0, back, 16) || memcmp(in, back, sizeof in))
            return 11;
        hg_buffer_destroy(b);
        hg_executor_destroy(cuda_new);
    }
    free(out);
    return 0;
}

// Waits for the child at most `seconds`; kills it after. Returns its exit code, or -signal.
static int wait_child(pid_t pid, int seconds) {
    for (int i = 0; i < seconds * 100; i++) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -SIGKILL;
}

static void test_fork_while_busy(void) {
    hg_executor_options o = {HG_BACKEND_CPU, 0, 2};
    CHECK_OK(hg_executor_create_ex(&o, &g_ex));
    // The CUDA emulation needs no compiler for buffers: always testable.
    setenv("HOLOGRAM_CUDA_EMULATE", "1", 1);
    hg_executor cuda = {0};
    CHECK_OK(hg_executor_create(HG_BACKEND_CUDA, &cuda));
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&th[i], NULL, busy, (void*)(intptr_t)(i + 1)) == 0);
    for (int f = 0; f < FORKS; f++) {
        long before = atomic_load(&g_rounds);
        while (atomic_load(&g_rounds) == before) sched_yield();   // the threads are mid-op
        if (UNDER_ASAN) {   // see UNDER_ASAN: no thread of ours inside malloc at fork()
            atomic_store(&g_hold, 1);
            while (atomic_load(&g_parked) + atomic_load(&g_exited) < 3) sched_yield();
        }
        alarm(60);   // fork() itself must not hang either
        pid_t pid = fork();
        if (pid == 0) _exit(child_main(cuda));
        alarm(0);
        atomic_store(&g_hold, 0);
        CHECK(pid > 0);
        if (pid <= 0) break;
        int rc = wait_child(pid, 60);
        CHECK_MSG(rc == 0, "fork %d: the child %s %d", f, rc < 0 ? "died of signal" : "failed check",
                  rc < 0 ? -rc : rc);
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i < 3; i++) {
        void* ok = NULL;
        pthread_join(th[i], &ok);
        CHECK_MSG(ok == (void*)1, "busy thread %d computed a wrong result in the parent", i);
    }
    CHECK(atomic_load(&g_rounds) > FORKS);
    CHECK_OK(hg_executor_destroy(cuda));
    CHECK_OK(hg_executor_destroy(g_ex));
}

int main(void) {
    test_fork_while_busy();
    return hg_test_finish("test_fork");
}
