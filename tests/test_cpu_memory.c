// The CPU backend's reuse of freed heap blocks of 512 B..64 KiB (cpu_memory.c): a block comes
// back zeroed when the buffer asks for zeros, holds every element of any size of its class,
// is never handed to two buffers at once (threads making, filling, checking and freeing
// buffers of the same sizes), and none of it is kept with HOLOGRAM_CPU_MEMORY_CACHE=0.
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"

// f32 counts below, at and above the cached range and the edges of its classes.
static const size_t COUNTS[] = {100, 128, 129, 200, 256, 257, 300, 320, 321, 1000, 1024, 1025,
                                4095, 4096, 12288, 12289, 16383, 16384, 16385, 40000};

static void reuse_is_clean(hg_executor ex) {
    for (size_t a = 0; a < sizeof COUNTS / sizeof COUNTS[0]; a++)
        for (size_t b = 0; b < sizeof COUNTS / sizeof COUNTS[0]; b++) {
            size_t na = COUNTS[a], nb = COUNTS[b];
            hg_buffer x, y;
            CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, na, &x));
            float* p;
            CHECK_OK(hg_buffer_map(x, (void**)&p));
            for (size_t i = 0; i < na; i++) p[i] = (float)i + 0.5f;   // dirty it
            CHECK_OK(hg_buffer_destroy(x));
            CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, nb, &y));   // may take x's block
            CHECK_OK(hg_buffer_map(y, (void**)&p));
            int zero = 1;
            for (size_t i = 0; i < nb; i++) zero &= p[i] == 0.0f;
            CHECK_MSG(zero, "a buffer of %zu after one of %zu is not zero", nb, na);
            for (size_t i = 0; i < nb; i++) p[i] = (float)(nb - i);  // every element writable
            float last;
            CHECK_OK(hg_buffer_read(y, nb - 1, &last, 1));
            CHECK(last == 1.0f);
            CHECK_OK(hg_buffer_destroy(y));
        }
}

typedef struct {
    hg_executor ex;
    int id;
    int bad;
} worker_arg;

static void* churn(void* p) {
    worker_arg* w = p;
    for (int it = 0; it < 1500; it++) {
        size_t n = COUNTS[(size_t)(it + w->id) % (sizeof COUNTS / sizeof COUNTS[0])];
        hg_buffer b[3];
        for (int k = 0; k < 3; k++) {
            if (hg_buffer_create_ex(w->ex, HG_DTYPE_U32, n, HG_BUFFER_UNINITIALIZED, &b[k])) {
                w->bad++;
                return NULL;
            }
            uint32_t* q;
            hg_buffer_map(b[k], (void**)&q);
            for (size_t i = 0; i < n; i++) q[i] = (uint32_t)(w->id * 1000003 + k * 7919 + it);
        }
        for (int k = 0; k < 3; k++) {
            uint32_t* q;
            hg_buffer_map(b[k], (void**)&q);
            uint32_t want = (uint32_t)(w->id * 1000003 + k * 7919 + it);
            for (size_t i = 0; i < n; i++)
                if (q[i] != want) {
                    w->bad++;
                    break;
                }
            hg_buffer_destroy(b[k]);
        }
    }
    return NULL;
}

static void threads_never_share(hg_executor ex) {
    pthread_t t[3];
    worker_arg a[3];
    for (int i = 0; i < 3; i++) {
        a[i] = (worker_arg){ex, i + 1, 0};
        pthread_create(&t[i], NULL, churn, &a[i]);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        CHECK_MSG(a[i].bad == 0, "thread %d saw another thread's data (%d times)", i, a[i].bad);
    }
}

int main(void) {
    hg_executor ex;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    reuse_is_clean(ex);
    threads_never_share(ex);
    CHECK_OK(hg_executor_destroy(ex));
    setenv("HOLOGRAM_CPU_MEMORY_CACHE", "0", 1);   // read per executor: caching off
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    reuse_is_clean(ex);
    threads_never_share(ex);
    CHECK_OK(hg_executor_destroy(ex));
    return hg_test_finish("test_cpu_memory");
}
