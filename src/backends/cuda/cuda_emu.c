// The CUDA backend's emulation device (HOLOGRAM_CUDA_EMULATE=1; see cuda_internal.h): device
// memory is host memory, kernels are the generated CUDA C compiled as a host shared object by
// the C++ compiler (HOLOGRAM_CUDA_EMULATE_CXX, else $CXX, else c++), cached like cubins, and run
// by the launcher in the emulation epilogue. Meant for tests on machines without a GPU.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "backends/cuda/cuda_emu.h"
#include "base/checksum.h"
#include "backends/cuda/cuda_internal.h"
#include "base/config.h"
#include "base/error.h"

extern char** environ;

int hg_cuda_emulating(void) {
    return hg_config_bool("HOLOGRAM_CUDA_EMULATE", 0);
}

static const char* cxx(void) {
    const char* c = hg_config_string("HOLOGRAM_CUDA_EMULATE_CXX");
    if (!c) c = getenv("CXX");
    return c && c[0] ? c : "c++";
}

static hg_status emu_open(cuda_dev* d, int device) {
    if (device != 0)
        return hg_error(HG_ERR_OUT_OF_RANGE, "CUDA emulation has 1 device, device %d requested",
                        device);
    snprintf(d->name, sizeof d->name, "CUDA emulation on the host (HOLOGRAM_CUDA_EMULATE; "
             "kernels built by %s)", cxx());
    d->total_bytes = 1ull << 34;
    d->sm_count = 1;
    return HG_OK;
}

static void emu_close(cuda_dev* d) { (void)d; }

static hg_status emu_alloc(cuda_dev* d, size_t nbytes, void** out) {
    (void)d;
    void* p = aligned_alloc(256, (nbytes + 255) & ~(size_t)255);
    if (!p) return hg_error(HG_ERR_OUT_OF_MEMORY, "emulated device: out of host memory");
    *out = p;
    return HG_OK;
}

static void emu_release(cuda_dev* d, void* p) {
    (void)d;
    free(p);
}

static hg_status emu_mem_info(cuda_dev* d, size_t* free_b, size_t* total_b) {
    *total_b = (size_t)d->total_bytes;
    *free_b = (size_t)d->total_bytes - d->alloc.live_bytes;
    return HG_OK;
}

static hg_status emu_copy(cuda_dev* d, void* dst, const void* src, size_t n) {
    (void)d;
    if (n) memmove(dst, src, n);
    return HG_OK;
}

static hg_status emu_zero(cuda_dev* d, void* p, size_t n) {
    (void)d;
    if (n) memset(p, 0, n);
    return HG_OK;
}

static hg_status read_file(const char* path, void** out, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return HG_ERR_IO;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void* buf = n > 0 ? malloc((size_t)n) : NULL;
    int ok = buf && fread(buf, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) {
        free(buf);
        return HG_ERR_IO;
    }
    *out = buf;
    *len = (size_t)n;
    return HG_OK;
}

// Runs the C++ compiler with args (NULL-terminated, after the compiler name); its output goes
// to logp. Returns 0 on success, else -1 and *spawn_err (0 when it ran and failed).
static int run_compiler(char* const* args, const char* logp, int* spawn_err) {
    const char* compiler = cxx();
    char* argv[24];
    int n = 0;
    argv[n++] = (char*)compiler;
    for (int i = 0; args[i] && n < 23; i++) argv[n++] = args[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, compiler, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    *spawn_err = rc;
    if (rc != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

// The prologue and the runtime preamble as one precompiled header in the cache directory
// (compiled once per compiler; halves the compile time of every kernel). Returns the header's
// path, or "" when it could not be made (kernels then include the full text).
static pthread_once_t g_pch_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_launch_lock = PTHREAD_MUTEX_INITIALIZER;

void hg_cuda_emu_fork(hg_fork_phase phase) { hg_fork_mutex(&g_launch_lock, phase); }
static char g_pch[1200];

// Kernels include the header by its absolute path: a quoted relative path would be looked up
// from the kernel source's own folder, and HOLOGRAM_CACHE_DIR may be relative.
static void pch_path(const char* h) {
    char abs[PATH_MAX];
    if (realpath(h, abs) && strlen(abs) < sizeof g_pch) snprintf(g_pch, sizeof g_pch, "%s", abs);
}

static void make_pch(void) {
    const char* dir = hg_cuda_cache_dir();
    if (!dir[0]) return;
    char key[40], h[1000], tmp_h[1200], gch[1100], tmp_gch[1200], logp[1200];
    hg_cuda_kcache_key(hg_cuda_preamble, strlen(hg_cuda_preamble), hg_cuda_emu_prologue, "pch",
                       cxx(), key);
    snprintf(h, sizeof h, "%.900s/hgemu-pre-%s.h", dir, key);
    snprintf(gch, sizeof gch, "%.1000s.gch", h);
    if (access(gch, R_OK) == 0 && access(h, R_OK) == 0) {
        pch_path(h);
        return;
    }
    snprintf(tmp_h, sizeof tmp_h, "%.1000s.tmp%ld", h, (long)getpid());
    snprintf(tmp_gch, sizeof tmp_gch, "%.1100s.tmp%ld", gch, (long)getpid());
    snprintf(logp, sizeof logp, "%.1000s.log%ld", h, (long)getpid());
    FILE* f = fopen(tmp_h, "wb");
    if (!f) return;
    int ok = fputs(hg_cuda_emu_prologue, f) >= 0 && fputs(hg_cuda_preamble, f) >= 0;
    ok = fclose(f) == 0 && ok;
    int err = 0;
    char* args[] = {"-std=c++17", "-O1", "-w", "-fPIC", "-x", "c++-header", tmp_h, "-o", tmp_gch,
                    NULL};
    ok = ok && run_compiler(args, logp, &err) == 0;
    // The header first, then its .gch: a reader that sees the .gch also finds the header.
    ok = ok && rename(tmp_h, h) == 0 && rename(tmp_gch, gch) == 0;
    unlink(tmp_h);
    unlink(tmp_gch);
    unlink(logp);
    if (ok) pch_path(h);
}

// Compiles prologue + src + epilogue into a shared object; returns its bytes.
static hg_status build(const char* dir, const char* src, size_t len, const char* key,
                       void** image, size_t* image_len) {
    char cpp[1200], so[1200], logp[1200];
    snprintf(cpp, sizeof cpp, "%s/hgemu-%s-%ld.cpp", dir, key, (long)getpid());
    snprintf(so, sizeof so, "%s/hgemu-%s-%ld.so", dir, key, (long)getpid());
    snprintf(logp, sizeof logp, "%s/hgemu-%s-%ld.log", dir, key, (long)getpid());
    pthread_once(&g_pch_once, make_pch);
    // With the precompiled header, the kernel text after the preamble is all that is compiled.
    const char* body = g_pch[0] ? strstr(src, hg_cuda_preamble) : NULL;
    if (body) body += strlen(hg_cuda_preamble);
    FILE* f = fopen(cpp, "wb");
    if (!f) return hg_error(HG_ERR_IO, "CUDA emulation: cannot write %s: %s", cpp, strerror(errno));
    int ok;
    if (body)
        ok = fprintf(f, "#include \"%s\"\n", g_pch) > 0 &&
             fwrite(body, 1, len - (size_t)(body - src), f) == len - (size_t)(body - src);
    else
        ok = fputs(hg_cuda_emu_prologue, f) >= 0 && fwrite(src, 1, len, f) == len;
    ok = ok && fputs(hg_cuda_emu_epilogue, f) >= 0;
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        unlink(cpp);
        return hg_error(HG_ERR_IO, "CUDA emulation: cannot write %s", cpp);
    }
    int err = 0;
    char* args[] = {"-std=c++17", "-O1", "-w", "-fPIC", "-shared", "-x", "c++", cpp, "-o", so,
                    "-lpthread", NULL};
    int rc = run_compiler(args, logp, &err);
    hg_status s = HG_OK;
    if (rc != 0 && err != 0) {
        s = hg_error(HG_ERR_BACKEND_UNAVAILABLE, "CUDA emulation: cannot run the C++ compiler "
                     "'%s' (%s); set HOLOGRAM_CUDA_EMULATE_CXX", cxx(), strerror(err));
    } else if (rc != 0) {
        void* log = NULL;
        size_t loglen = 0;
        read_file(logp, &log, &loglen);
        s = hg_error(HG_ERR_INTERNAL, "CUDA emulation: the generated kernel did not compile "
                     "(%s, source kept in %s): %.*s", cxx(), cpp,
                     (int)(loglen > 1500 ? 1500 : loglen), log ? (char*)log : "");
        free(log);
        unlink(logp);
        return s;   // keep the source for inspection
    } else if (read_file(so, image, image_len) != HG_OK) {
        s = hg_error(HG_ERR_IO, "CUDA emulation: cannot read %s", so);
    }
    unlink(cpp);
    unlink(so);
    unlink(logp);
    return s;
}

static hg_status emu_load(cuda_dev* d, const char* src, size_t len, cuda_kernel* k) {
    (void)d;
    // HOLOGRAM_CUDA_EMULATE_NVRTC=90 (a compute capability): also compile every kernel with
    // NVRTC for that architecture, so emulated runs check that the GPU compiler takes them too.
    int cc = (int)hg_config_int("HOLOGRAM_CUDA_EMULATE_NVRTC", 0, 1000, 0);
    if (cc) {
        void* img = NULL;
        size_t n = 0;
        char key[40];
        hg_status s = hg_cuda_nvrtc_compile(src, len, cc / 10, cc % 10, k->prog->name, key, &img,
                                            &n);
        if (s) return s;
        free(img);
    }
    const char* dir = hg_cuda_cache_dir();
    if (!dir[0]) dir = "/tmp";
    // The key covers the emulation prologue and epilogue (the launcher) besides the source.
    uint64_t hh = hg_fnv1a64(UINT64_C(0xcbf29ce484222325), hg_cuda_emu_prologue,
                             strlen(hg_cuda_emu_prologue));
    hh = hg_fnv1a64(hh, hg_cuda_emu_epilogue, strlen(hg_cuda_emu_epilogue));
    char opts[96];
    snprintf(opts, sizeof opts, "emu -std=c++17 -O1 launcher %016llx", (unsigned long long)hh);
    hg_cuda_kcache_key(src, len, opts, "host", cxx(), k->key);
    void* image = NULL;
    size_t n = 0;
    if (!hg_cuda_kcache_get(k->key, "emuso", &image, &n)) {
        hg_status s = build(dir, src, len, k->key, &image, &n);
        if (s) return s;
        hg_cuda_kcache_put(k->key, "emuso", image, n);
    }
    // dlopen needs a file: write the image to a private temporary name, load, unlink.
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s/hgemu-load-%s-%ld-%p.so", dir, k->key, (long)getpid(), (void*)k);
    FILE* f = fopen(tmp, "wb");
    int ok = f && fwrite(image, 1, n, f) == n;
    if (f) ok = fclose(f) == 0 && ok;
    free(image);
    if (!ok) {
        unlink(tmp);
        return hg_error(HG_ERR_IO, "CUDA emulation: cannot write %s", tmp);
    }
    void* h = dlopen(tmp, RTLD_NOW | RTLD_LOCAL);
    unlink(tmp);
    if (!h) return hg_error(HG_ERR_INTERNAL, "CUDA emulation: dlopen of the kernel failed: %s",
                            dlerror());
    void* fn = dlsym(h, "hg_emu_launch");
    if (!fn) {
        dlclose(h);
        return hg_error(HG_ERR_INTERNAL, "CUDA emulation: the kernel library has no hg_emu_launch");
    }
    k->module = h;
    k->fn = fn;
    return HG_OK;
}

static void emu_unload(cuda_dev* d, cuda_kernel* k) {
    (void)d;
    if (k->module) dlclose(k->module);
    k->module = k->fn = NULL;
}

static hg_status emu_launch(cuda_dev* d, cuda_kernel* k, const hg_launch_config* cfg, void* kargs,
                            size_t kargs_size) {
    (void)d;
    hg_cuda_emu_launch_fn fn;
    memcpy(&fn, &k->fn, sizeof fn);   // object pointer -> function pointer without a cast warning
    unsigned grid[3] = {cfg->grid.x, cfg->grid.y, cfg->grid.z};
    unsigned block[3] = {cfg->block.x, cfg->block.y, cfg->block.z};
    // The emulated kernel's CUDA names (threadIdx, blockIdx, the fiber scheduler) are globals of
    // its module: one emulated launch runs at a time in the process.
    pthread_mutex_lock(&g_launch_lock);
    int rc = fn(grid, block, kargs, kargs_size, cfg->shared_bytes, k->threaded);
    pthread_mutex_unlock(&g_launch_lock);
    if (rc)
        return hg_error(HG_ERR_EXECUTION, "CUDA emulation: the launcher failed (%d: %s)", rc,
                        rc == -1 ? "argument block size mismatch" : "out of host resources");
    return HG_OK;
}

// Emulated work runs before each call returns: there is nothing to wait for, the streams are
// only names (cuda_dev.stream keeps the bookkeeping), and an event is the host time of its
// record.
static hg_status emu_sync(cuda_dev* d) {
    (void)d;
    return HG_OK;
}

static hg_status emu_switch_stream(cuda_dev* d, void* from, void* to) {
    (void)d, (void)from, (void)to;
    return HG_OK;
}

static void* emu_own_stream(cuda_dev* d) {
    (void)d;
    return NULL;
}

static hg_status emu_event_create(cuda_dev* d, void** out) {
    (void)d;
    double* t = calloc(1, sizeof *t);
    if (!t) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating an emulated event");
    *out = t;
    return HG_OK;
}

static void emu_event_destroy(cuda_dev* d, void* ev) {
    (void)d;
    free(ev);
}

static hg_status emu_event_record(cuda_dev* d, void* ev) {
    (void)d;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    *(double*)ev = (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
    return HG_OK;
}

static hg_status emu_event_sync(cuda_dev* d, void* ev) {
    (void)d, (void)ev;
    return HG_OK;
}

static hg_status emu_event_query(cuda_dev* d, void* ev, int* done) {
    (void)d, (void)ev;
    *done = 1;
    return HG_OK;
}

static hg_status emu_event_elapsed(cuda_dev* d, void* a, void* b, double* ms) {
    (void)d;
    *ms = *(const double*)b - *(const double*)a;
    return HG_OK;
}

static hg_status emu_event_wait(cuda_dev* d, void* ev, void* stream) {
    (void)d, (void)ev, (void)stream;
    return HG_OK;
}

// Plain row-major loops: the emulation checks results, not speed.
static hg_status emu_sgemm(cuda_dev* d, int ta, int tb, int64_t m, int64_t n, int64_t k,
                           float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                           float beta, float* c, int64_t ldc) {
    (void)d;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++)
                s += (double)(ta ? a[p * lda + i] : a[i * lda + p]) *
                     (double)(tb ? b[j * ldb + p] : b[p * ldb + j]);
            if (alpha == 0.0f) s = 0;   // BLAS: alpha == 0 reads neither A nor B
            float* cij = &c[i * ldc + j];
            *cij = beta == 0.0f ? alpha * (float)s : alpha * (float)s + beta * *cij;
        }
    return HG_OK;
}

// f64 in double; f16/bf16 (16-bit patterns in memory) accumulated in f32 as cuBLAS's
// CUBLAS_COMPUTE_32F, C rounded once to the dtype.
static double emu_ld(hg_dtype t, const void* p, int64_t i) {
    if (t == HG_DTYPE_F64) return ((const double*)p)[i];
    uint16_t h = ((const uint16_t*)p)[i];
    return t == HG_DTYPE_F16 ? (double)hg_f16_to_f32(h) : (double)hg_bf16_to_f32(h);
}

static hg_status emu_gemm_ex(cuda_dev* d, hg_dtype t, int ta, int tb, int64_t m, int64_t n,
                             int64_t k, double alpha, const void* a, int64_t lda, const void* b,
                             int64_t ldb, double beta, void* c, int64_t ldc) {
    (void)d;
    int f64 = t == HG_DTYPE_F64;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            float sf = 0;
            for (int64_t p = 0; !(alpha == 0.0) && p < k; p++) {   // alpha 0 reads neither
                double x = emu_ld(t, a, ta ? p * lda + i : i * lda + p);
                double y = emu_ld(t, b, tb ? j * ldb + p : p * ldb + j);
                if (f64) s = fma(x, y, s);
                else sf = fmaf((float)x, (float)y, sf);
            }
            int64_t o = i * ldc + j;
            if (f64) {
                double* cij = (double*)c + o;
                *cij = beta == 0.0 ? alpha * s : alpha * s + beta * *cij;
            } else {
                float v = (float)alpha * sf;
                if (beta != 0.0) v = fmaf((float)beta, (float)emu_ld(t, c, o), v);
                ((uint16_t*)c)[o] = t == HG_DTYPE_F16 ? hg_f32_to_f16(v) : hg_f32_to_bf16(v);
            }
        }
    return HG_OK;
}

// One product after another, each as emu_sgemm / emu_gemm_ex does it.
static hg_status emu_gemm_batched(cuda_dev* d, hg_dtype t, int ta, int tb, int64_t m, int64_t n,
                                  int64_t k, double alpha, const void* a, int64_t lda,
                                  int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                                  double beta, void* c, int64_t ldc, int64_t stride_c,
                                  int64_t batch) {
    const int64_t es = (int64_t)hg_dtype_size(t);
    hg_status s = HG_OK;
    for (int64_t i = 0; i < batch && !s; i++) {
        const char* ai = (const char*)a + i * stride_a * es;
        const char* bi = (const char*)b + i * stride_b * es;
        char* ci = (char*)c + i * stride_c * es;
        s = t == HG_DTYPE_F32
                ? emu_sgemm(d, ta, tb, m, n, k, (float)alpha, (const float*)ai, lda,
                            (const float*)bi, ldb, (float)beta, (float*)ci, ldc)
                : emu_gemm_ex(d, t, ta, tb, m, n, k, alpha, ai, lda, bi, ldb, beta, ci, ldc);
    }
    return s;
}

const cuda_impl hg_cuda_emu_impl = {
    .name = "emulation",
    .open = emu_open,
    .close = emu_close,
    .alloc = emu_alloc,
    .release = emu_release,
    .mem_info = emu_mem_info,
    .h2d = emu_copy,
    .d2h = emu_copy,
    .d2d = emu_copy,
    .zero = emu_zero,
    .load = emu_load,
    .unload = emu_unload,
    .launch = emu_launch,
    .sync = emu_sync,
    .switch_stream = emu_switch_stream,
    .own_stream = emu_own_stream,
    .event_create = emu_event_create,
    .event_destroy = emu_event_destroy,
    .event_record = emu_event_record,
    .event_sync = emu_event_sync,
    .event_query = emu_event_query,
    .event_elapsed = emu_event_elapsed,
    .event_wait = emu_event_wait,
    .sgemm = emu_sgemm,
    .gemm_ex = emu_gemm_ex,
    .gemm_batched = emu_gemm_batched,
    // Small, so that the tests' batches are split as a GPU splits batches beyond cuBLAS's int.
    .max_batch = 5,
};
