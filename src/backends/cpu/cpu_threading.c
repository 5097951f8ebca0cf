// Which threads run the parallel parts of CPU work: hologram's pool, or the OpenMP runtime
// already in the process. Sharing OpenMP's team matters where hologram's kernels alternate with
// an OpenMP library's (PyTorch): after each parallel region libgomp's workers spin for
// milliseconds, and on the cores hologram's own workers need they halved the speed of the next
// hologram kernels (docs/performance.md "One set of threads with torch").
#include "backends/cpu/cpu_threading.h"
#include "base/config.h"
#include "base/error.h"
#include "base/fork.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#if defined(__linux__) || defined(__FreeBSD__)
#include <link.h>
#define HG_HAVE_PHDR 1
#endif

// GOMP_parallel(fn, data, num_threads, flags): the entry compiled `#pragma omp parallel` calls
// (GCC >= 4.9); LLVM's and Intel's runtimes export it for GCC-built code.
typedef void (*gomp_parallel_fn)(void (*)(void*), void*, unsigned, unsigned);

static _Atomic(gomp_parallel_fn) g_parallel;   // NULL: hologram's own threads
static atomic_ulong g_generation;               // hg_fork_generation() when OPENMP was chosen
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static atomic_long g_own_until;                 // CLOCK_MONOTONIC ns: hologram's threads till then

// A team thread that joins its region this late was not running (the cores are busy with other
// processes). OpenMP's end-of-region barrier waits for every team thread, so on oversubscribed
// cores each region costs a scheduler time slice: a Llama forward took a median 300 ms on
// hologram+OpenMP vs 15-20 ms on hologram's own threads, whose caller runs the parts a late
// thread has not claimed. After a late arrival, regions run on hologram's threads for a while.
#define LATE_ARRIVAL_NS 200000L
#define OWN_AFTER_LATE_NS 100000000L

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

#ifdef HG_HAVE_PHDR
static const char* const RUNTIMES[] = {"libgomp", "libomp", "libiomp5"};

static int find_loaded(struct dl_phdr_info* info, size_t size, void* data) {
    (void)size;
    const char* name = info->dlpi_name;
    const char* base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || !*base) return 0;
    for (size_t i = 0; i < sizeof RUNTIMES / sizeof *RUNTIMES; i++) {
        if (strncmp(base, RUNTIMES[i], strlen(RUNTIMES[i])) != 0) continue;
        // RTLD_NOLOAD: a reference to the copy already mapped (it stays loaded from now on);
        // never a second runtime.
        void* h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
        void* f = h ? dlsym(h, "GOMP_parallel") : NULL;
        if (f) {
            *(void**)data = f;
            return 1;
        }
    }
    return 0;
}
#endif

// The loaded runtime's GOMP_parallel, or NULL. A runtime linked into the program is found by
// name; one loaded privately by a library (torch's RTLD_LOCAL libgomp) by its file name.
static gomp_parallel_fn find_runtime(void) {
    void* f = dlsym(RTLD_DEFAULT, "GOMP_parallel");
#ifdef HG_HAVE_PHDR
    if (!f) dl_iterate_phdr(find_loaded, &f);
#endif
    gomp_parallel_fn fn;
    memcpy(&fn, &f, sizeof fn);   // object to function pointer, as dlsym's users must
    return fn;
}

static hg_status set_mode(hg_cpu_threading mode) {
    if (mode == HG_CPU_THREADING_OWN) {
        atomic_store(&g_parallel, NULL);
        return HG_OK;
    }
    if (mode != HG_CPU_THREADING_OPENMP)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_cpu_set_threading: mode %d is not HG_CPU_THREADING_OWN (0) or "
                        "HG_CPU_THREADING_OPENMP (1)", (int)mode);
    gomp_parallel_fn fn = find_runtime();
    if (!fn)
        return hg_error(HG_ERR_UNSUPPORTED,
                        "hg_cpu_set_threading: no OpenMP runtime (libgomp, libomp or libiomp5 "
                        "with GOMP_parallel) is loaded in this process; load the program or "
                        "library that uses OpenMP first, or keep HG_CPU_THREADING_OWN");
    atomic_store(&g_generation, hg_fork_generation());
    atomic_store(&g_parallel, fn);
    return HG_OK;
}

static void read_env(void) {
    static const char* const modes[] = {"own", "openmp"};
    int m = hg_config_choice("HOLOGRAM_CPU_THREADING", modes, 2, 0);
    if (m == 1 && set_mode(HG_CPU_THREADING_OPENMP) != HG_OK)
        hg_log(HG_LOG_WARN, "HOLOGRAM_CPU_THREADING=openmp: %s; using hologram's own threads",
               hg_last_error());
}

static gomp_parallel_fn current(void) {
    pthread_once(&g_env_once, read_env);
    gomp_parallel_fn fn = atomic_load_explicit(&g_parallel, memory_order_acquire);
    // a forked child: the runtime's threads are gone and its pool state is the parent's
    if (fn && atomic_load_explicit(&g_generation, memory_order_relaxed) != hg_fork_generation())
        return NULL;
    return fn;
}

int hg_cpu_openmp_backing_off(void) {
    long until = atomic_load_explicit(&g_own_until, memory_order_relaxed);
    return until != 0 && now_ns() < until;
}

hg_status hg_cpu_set_threading(hg_cpu_threading mode) {
    pthread_once(&g_env_once, read_env);
    return set_mode(mode);
}

hg_status hg_cpu_get_threading(hg_cpu_threading* out) {
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "hg_cpu_get_threading: out is NULL");
    *out = current() ? HG_CPU_THREADING_OPENMP : HG_CPU_THREADING_OWN;
    return HG_OK;
}

typedef struct omp_job {
    hg_pool_fn fn;
    void* ctx;
    int nparts;
    atomic_int next;
    long start_ns;
    atomic_long latest_ns;   // the last team thread's arrival, after start_ns
} omp_job;

// Every thread of the team claims parts until none is left: a team smaller than asked for (a
// nested region, a thread limit) still runs them all, as the pool's caller does.
static void omp_body(void* data) {
    omp_job* j = data;
    long late = now_ns() - j->start_ns;
    for (long seen = atomic_load(&j->latest_ns);
         late > seen && !atomic_compare_exchange_weak(&j->latest_ns, &seen, late);)
        ;
    for (int part; (part = atomic_fetch_add(&j->next, 1)) < j->nparts;) j->fn(j->ctx, part);
}

int hg_cpu_openmp_run(int nparts, hg_pool_fn fn, void* ctx) {
    gomp_parallel_fn run = current();
    if (!run || hg_cpu_openmp_backing_off()) return 0;
    omp_job j = {fn, ctx, nparts, 0, now_ns(), 0};
    run(omp_body, &j, (unsigned)nparts, 0);
    if (atomic_load(&j.latest_ns) > LATE_ARRIVAL_NS)
        atomic_store_explicit(&g_own_until, now_ns() + OWN_AFTER_LATE_NS, memory_order_relaxed);
    return 1;
}
