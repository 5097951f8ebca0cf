// Internal (CUDA backend): one executor's device state and the two device implementations the
// backend runs on:
//   - "driver": a real GPU through the CUDA driver API, kernels compiled by NVRTC (cuda_real.c);
//   - "emulation": HOLOGRAM_CUDA_EMULATE=1, the generated CUDA C compiled as host C++ and run on
//     the CPU one thread per lane (cuda_emu.c). It exists to test the code generator, the argument
//     packing and the backend's bookkeeping on machines without a GPU; it is slow.
// Everything above the implementation (codegen, argument blocks, the caching allocator, kernel
// caches, error reporting) is shared, so the emulation exercises the same code as a GPU run.
#ifndef HG_BACKENDS_CUDA_INTERNAL_H
#define HG_BACKENDS_CUDA_INTERNAL_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "backends/backend.h"
#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/cuda_driver.h"

typedef struct cuda_dev cuda_dev;

// A loaded kernel.
typedef struct cuda_kernel {
    const hg_prog* prog;       // outlives the kernel (backend contract)
    void* module;              // CUmodule / dlopen handle
    void* fn;                  // CUfunction / emulated launcher
    uint32_t nparams;
    int threaded;              // emulation: one host thread per lane (bar / shared memory)
    uint64_t last_seq;         // the sequence number of its last launch (0: never launched)
    char key[40];              // kernel cache key (hex)
} cuda_kernel;

// The device operations. Pointers are device addresses (in the emulation: host addresses).
typedef struct cuda_impl {
    const char* name;
    hg_status (*open)(cuda_dev* d, int device);
    void (*close)(cuda_dev* d);
    hg_status (*alloc)(cuda_dev* d, size_t nbytes, void** out);   // raw, uncached
    void (*release)(cuda_dev* d, void* p);
    hg_status (*mem_info)(cuda_dev* d, size_t* free_bytes, size_t* total_bytes);
    // Copies and memsets are queued on the current stream (cuda_dev.stream); h2d returns once
    // src may be reused, d2h once dst holds the data (it waits for the stream).
    hg_status (*h2d)(cuda_dev* d, void* dst, const void* src, size_t n);
    hg_status (*d2h)(cuda_dev* d, void* dst, const void* src, size_t n);
    hg_status (*d2d)(cuda_dev* d, void* dst, const void* src, size_t n);
    hg_status (*zero)(cuda_dev* d, void* p, size_t n);
    // Compiles (through the kernel caches) and loads the CUDA C source of k->prog.
    hg_status (*load)(cuda_dev* d, const char* src, size_t len, cuda_kernel* k);
    void (*unload)(cuda_dev* d, cuda_kernel* k);
    // Queues a launch on the current stream. kargs holds hg_cuda_kargs_size(k->nparams) bytes.
    hg_status (*launch)(cuda_dev* d, cuda_kernel* k, const hg_launch_config* cfg, void* kargs,
                        size_t kargs_size);
    // Waits for everything queued on the current stream (which covers the executor's earlier
    // streams: see set_stream).
    hg_status (*sync)(cuda_dev* d);
    // Makes stream `to` wait for the work queued on `from` (NULL: the executor's own stream);
    // the caller then sets cuda_dev.stream = to.
    hg_status (*switch_stream)(cuda_dev* d, void* from, void* to);
    void* (*own_stream)(cuda_dev* d);
    // Events (the emulation's are host timestamps: its work completes before each call returns).
    hg_status (*event_create)(cuda_dev* d, void** out);
    void (*event_destroy)(cuda_dev* d, void* ev);
    hg_status (*event_record)(cuda_dev* d, void* ev);   // on the current stream
    hg_status (*event_sync)(cuda_dev* d, void* ev);
    hg_status (*event_query)(cuda_dev* d, void* ev, int* done);
    hg_status (*event_elapsed)(cuda_dev* d, void* start, void* end, double* ms);
    hg_status (*event_wait)(cuda_dev* d, void* ev, void* stream);   // stream != NULL
    // C = alpha op(A) op(B) + beta C, row-major (device pointers).
    hg_status (*sgemm)(cuda_dev* d, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                       float* c, int64_t ldc);
    // The same for f64, f16 and bf16 (f32 accumulation for the 16-bit types).
    hg_status (*gemm_ex)(cuda_dev* d, hg_dtype t, int ta, int tb, int64_t m, int64_t n,
                         int64_t k, double alpha, const void* a, int64_t lda, const void* b,
                         int64_t ldb, double beta, void* c, int64_t ldc);
    // `batch` (<= max_batch) products of one dtype (f32 as sgemm, others as gemm_ex) whose
    // operands X_i lie stride_x elements apart (0: one operand for all).
    hg_status (*gemm_batched)(cuda_dev* d, hg_dtype t, int ta, int tb, int64_t m, int64_t n,
                              int64_t k, double alpha, const void* a, int64_t lda,
                              int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                              double beta, void* c, int64_t ldc, int64_t stride_c, int64_t batch);
    // The most products one gemm_batched call takes; the backend splits larger batches.
    int64_t max_batch;
} cuda_impl;

extern const cuda_impl hg_cuda_real_impl;
extern const cuda_impl hg_cuda_emu_impl;

// The caching allocator (cuda_alloc.c): freed blocks are kept per rounded size and reused; on
// out-of-memory the cache is released and the allocation retried once.
typedef struct cuda_block { void* p; size_t size; } cuda_block;
typedef struct cuda_alloc {
    pthread_mutex_t lock;
    cuda_block* free_blocks;   // cached blocks
    size_t nfree, cap;
    size_t cached_bytes, live_bytes;
    cuda_block* live;          // open-addressing map: live block -> its rounded size
    size_t live_cap, nlive;
} cuda_alloc;

struct cuda_dev {
    const cuda_impl* impl;
    int device;
    char name[256];
    int cc_major, cc_minor;    // compute capability (emulation: 0.0)
    int sm_count;
    uint64_t total_bytes;
    pthread_mutex_t lock;      // launches, copies, the fields below: serialized per executor
    void* stream;              // the stream work is queued on (set_stream); NULL = the own one
    cuda_alloc alloc;
    hg_cuda_kerr* err_host;    // the out-of-bounds record, as the host sees it
    void* err_dev;             // ... and as kernels see it
    // Asynchronous errors. Every launch gets the next sequence number; every launch up to
    // synced_seq is known to have finished. An out-of-bounds record (which names its launch) is
    // taken into `deferred` once its launch finished, and reported by the next synchronizing
    // call (hg_executor_synchronize, a host read, an event synchronize that covers it).
    uint64_t launch_seq, synced_seq;
    hg_status deferred;
    uint64_t deferred_seq;
    char deferred_msg[1024];
    int dead;                  // a sticky device error happened: every call fails fast
    char dead_msg[512];
    void* impl_state;          // the implementation's own (context, stream, cuBLAS handle ...)
};

hg_status hg_cuda_alloc_get(cuda_dev* d, size_t nbytes, void** out);
void hg_cuda_alloc_put(cuda_dev* d, void* p);
void hg_cuda_alloc_release_all(cuda_dev* d);   // gives every cached block back
void hg_cuda_alloc_destroy(cuda_dev* d);       // the cache and the live map (executor end)

// Kernel caches (cuda_kcache.c): compiled images in memory (per process) and on disk
// (HOLOGRAM_CACHE_DIR, else $XDG_CACHE_HOME/hologram, else ~/.cache/hologram; files written to a
// temporary name, checksummed, then renamed). key: 32 hex digits from the source, the options,
// the target and the compiler and library versions.
void hg_cuda_kcache_key(const char* src, size_t len, const char* options, const char* target,
                        const char* compiler_version, char key[40]);
// 1 and a malloc'd image on a hit (memory first, then disk, then adopted into memory); 0 on a
// miss.
int hg_cuda_kcache_get(const char* key, const char* ext, void** image, size_t* len);
void hg_cuda_kcache_put(const char* key, const char* ext, const void* image, size_t len);
// The cache directory (created if missing); "" when none is usable.
const char* hg_cuda_cache_dir(void);

// Compiles generated CUDA C with NVRTC for compute capability cc_major.cc_minor (cuda_nvrtc.c):
// a malloc'd cubin (or PTX) image, key = its kernel-cache key. name: for messages.
hg_status hg_cuda_nvrtc_compile(const char* src, size_t len, int cc_major, int cc_minor,
                                const char* name, char key[40], void** image, size_t* image_len);

// Asynchronous errors (cuda_async.c); the caller holds d->lock.
// Takes the out-of-bounds record into d->deferred when the launch that made it is <= upto
// (finished).
void hg_cuda_take_record(cuda_dev* d, uint64_t upto);
// After a wait that covered every launch up to `upto`: notes it, and returns (once) the
// deferred error of such a launch, naming `what` found it; else HG_OK.
hg_status hg_cuda_report(cuda_dev* d, uint64_t upto, const char* what);
// Waits for all queued work, then hg_cuda_report for every launch.
hg_status hg_cuda_wait_all(cuda_dev* d, const char* what);
// Before kernel k is unloaded: waits when a launch of it may still be queued.
void hg_cuda_kernel_retire(cuda_dev* d, cuda_kernel* k);
// The stream and event slots of the vtable.
hg_status hg_cuda_set_stream(void* state, void* stream);
void* hg_cuda_get_stream(void* state);
hg_status hg_cuda_event_create(void* state, void** out);
void hg_cuda_event_destroy(void* state, void* event);
hg_status hg_cuda_event_record(void* state, void* event);
hg_status hg_cuda_event_synchronize(void* state, void* event);
hg_status hg_cuda_event_query(void* state, void* event, int* done);
hg_status hg_cuda_event_elapsed_ms(void* state, void* start, void* end, double* ms);
hg_status hg_cuda_event_wait(void* state, void* event, void* stream);

// Marks the executor dead after a sticky device error and returns HG_ERR_EXECUTOR_DEAD.
hg_status hg_cuda_mark_dead(cuda_dev* d, const char* what);

// 1 when HOLOGRAM_CUDA_EMULATE is set to a non-zero value.
int hg_cuda_emulating(void);
// The process-wide locks' part in fork() (base/fork.h): kernel cache, emulated launches.
void hg_cuda_kcache_fork(hg_fork_phase phase);
void hg_cuda_emu_fork(hg_fork_phase phase);

#endif
