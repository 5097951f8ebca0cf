// Internal: the backend interface. A backend is a `static const hg_backend_vtable` with
// designated initializers, registered in backends/registry.c. The core validates every request
// (handles, dtypes, ranges, launch config, argument binding) before it reaches a backend, so
// backends only execute. Slots marked optional may be NULL.
#ifndef HG_BACKENDS_BACKEND_H
#define HG_BACKENDS_BACKEND_H
#include <stddef.h>
#include <stdint.h>
#include "hologram.h"
#include "base/fork.h"
#include "isa/program.h"

// A launch argument after the core checked it against the parameter.
typedef struct hg_bound_arg {
    void* base;          // BUFFER: device address of the first visible element
    uint64_t count;      // BUFFER: number of visible elements
    uint64_t bits;       // SCALAR: raw value bits
} hg_bound_arg;

// How the arguments of a row launch (kernel_launch_rows) change from row to row, one entry per
// argument. In row r, buffer argument a is args[a] with its base r * row_step[a] bytes further
// and, when lane_step[a] != 0, its element i (< args[a].count) lane_step[a] * i bytes from that
// base (an input read with a stride: the backend gathers it); scalar argument a with value[a] != NULL takes
// the element (of the parameter's dtype) at value[a] + r * row_step[a] bytes. A buffer argument
// with spread != NULL and spread[a] > 0 is a row of args[a].count / spread[a] values, each
// repeated spread[a] times (one value per sub-row of a grouped row: rsqrt(var + eps) of a norm),
// value j at base + r * row_step[a] + j * lane_step[a] bytes (the backend fills the row).
// Rows may come in blocks over more dims (nblock_dims > 0; a permuted operand whose outer dims
// do not collapse: Llama's rotary over (batch, heads)): row r is then row r % block_rows of
// block r / block_rows, the blocks in C order over block_size[0 .. nblock_dims), and every
// address above moves by block_step[d * nargs + a] bytes per step along block dim d (r in the
// formulas above stands for r % block_rows). With sub_cols > 0, every gathered argument a
// (lane_step[a] != 0) reads its row as sub-rows of sub_cols lanes (a packed tile of rows):
// sub-row t at base + t * sub_step[a] bytes (0: one row repeated), its lane i lane_step[a] * i
// bytes further; an argument with scatter != NULL and scatter[a] set is an output that each
// row writes in full and does not read (sub_step[a] != 0): the backend runs the row into a
// tile of its own and copies the tile's sub-rows to those places after it.
typedef struct hg_row_args {
    const int64_t* row_step;
    const int64_t* lane_step;
    const void* const* value;
    const int64_t* spread;   // NULL: no argument is spread
    int32_t nblock_dims;     // 0: one block of all the rows
    uint64_t block_rows;
    const int64_t* block_size;
    const int64_t* block_step;
    uint64_t sub_cols;         // 0: rows are not made of sub-rows
    const int64_t* sub_step;
    const uint8_t* scatter;    // NULL: no argument is scattered
} hg_row_args;

// Bytes by which argument a's addresses of row r move from row 0's (the formulas above).
static inline int64_t hg_row_offset(const hg_row_args* ra, size_t nargs, size_t a, uint64_t r) {
    if (ra->nblock_dims <= 0) return (int64_t)r * ra->row_step[a];
    uint64_t b = r / ra->block_rows;
    int64_t off = (int64_t)(r % ra->block_rows) * ra->row_step[a];
    for (int32_t d = ra->nblock_dims - 1; d >= 0 && b; d--) {
        uint64_t size = (uint64_t)ra->block_size[d];
        off += (int64_t)(b % size) * ra->block_step[(size_t)d * nargs + a];
        b /= size;
    }
    return off;
}

typedef struct hg_backend_vtable {
    uint32_t api_version;            // must be HG_BACKEND_API_VERSION
    hg_backend_kind kind;
    const char* name;
    // 1 if an executor can be created; else 0 and a reason ("not built in", "no driver: ...",
    // "no device", "not this platform"). Cheap after the first call.
    int (*probe)(char* reason, size_t reason_len, int* device_count);
    hg_status (*device_info)(int index, hg_device_info* out);

    hg_status (*executor_create)(const hg_executor_options* opts, void** out_state);
    void (*executor_destroy)(void* state);
    hg_status (*synchronize)(void* state);
    int (*num_threads)(void* state);

    // Memory. Byte offsets and sizes. `host_visible` = 1 when device memory is a host pointer
    // (map and wrap are then allowed).
    int host_visible;
    // zero: the bytes must read as 0; else their contents are unspecified.
    hg_status (*mem_alloc)(void* state, size_t nbytes, int zero, void** out);
    void (*mem_free)(void* state, void* mem);
    hg_status (*mem_write)(void* state, void* mem, size_t offset, const void* src, size_t n);
    hg_status (*mem_read)(void* state, const void* mem, size_t offset, void* dst, size_t n);
    hg_status (*mem_copy)(void* state, void* dst, const void* src, size_t n);
    // optional: fill n elements of `elem_size` bytes with the pattern at `value`
    hg_status (*mem_fill)(void* state, void* mem, size_t n, const void* value, size_t elem_size);

    // Programs. supports_op says whether an instruction (opcode, type) runs on this backend;
    // compile is called only with validated programs it supports; the compiled kernel owns
    // whatever it needs (it may keep a pointer to prog, which outlives the kernel).
    int (*supports_op)(hg_opcode op, hg_dtype type);
    uint32_t max_shared_bytes;       // static + dynamic shared memory per block
    hg_status (*kernel_compile)(void* state, const hg_prog* prog, void** out_kernel);
    void (*kernel_destroy)(void* state, void* kernel);
    hg_status (*kernel_launch)(void* state, void* kernel, const hg_launch_config* cfg,
                               const hg_bound_arg* args, size_t nargs);
    // Optional (host-visible backends; NULL elsewhere, and the op layer then does not use it):
    // `rows` launches of one 1-D config that differ only in their arguments (hg_row_args), in
    // any order and on any of the backend's threads. The caller bound every row's ranges from
    // checked tensors. Returns after all rows ran.
    hg_status (*kernel_launch_rows)(void* state, void* kernel, const hg_launch_config* cfg,
                                    const hg_bound_arg* args, size_t nargs, uint64_t rows,
                                    const hg_row_args* ra);

    // Library calls for the op layer (src/ops). Both optional (NULL: the op layer uses ISA
    // kernels or refuses with HG_ERR_UNSUPPORTED).
    // host_parallel (host-visible backends): runs fn(ctx, w) for w = 0 .. n-1 with
    // n = min(nworkers, threads) on the backend's threads (w = 0 on the caller) and returns when
    // all are done; *out_nworkers (may be NULL) receives n before the first call. Never called
    // from inside fn; serialized with launches.
    hg_status (*host_parallel)(void* state, int nworkers, void (*fn)(void* ctx, int worker),
                               void* ctx, int* out_nworkers);
    // Optional (host-visible backends with host_parallel): sgemm / the f64 product of
    // dgemm_strided on host memory, on the calling thread only and outside the backend's
    // serialization, for kernels running inside host_parallel's fn (which must not re-enter the
    // serialized slots: attention's per-block products).
    hg_status (*host_sgemm_serial)(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                   float alpha, const float* a, int64_t lda, const float* b,
                                   int64_t ldb, float beta, float* c, int64_t ldc);
    hg_status (*host_dgemm_serial)(int64_t m, int64_t n, int64_t k, const double* a,
                                   int64_t a_rs, int64_t a_cs, const double* b, int64_t b_rs,
                                   int64_t b_cs, double* c, int64_t c_rs, int64_t c_cs);
    // sgemm on device memory, row-major: C = alpha * op(A) * op(B) + beta * C (beta == 0: C is
    // not read). lda/ldb/ldc in elements.
    hg_status (*sgemm)(void* state, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                       float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float beta, float* c, int64_t ldc);
    // gemm on device memory for A, B and C of one dtype: f64 (f64 arithmetic), f16 or bf16
    // (f32 accumulation, C rounded once); otherwise as sgemm. Optional: NULL where the backend
    // has no such library call (the op layer then uses its ISA kernel); HG_ERR_UNSUPPORTED for
    // another dtype.
    hg_status (*gemm_ex)(void* state, hg_dtype dtype, int trans_a, int trans_b, int64_t m,
                         int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
                         const void* b, int64_t ldb, double beta, void* c, int64_t ldc);
    // Streams and events, all optional: NULL on backends whose calls complete before they
    // return (the CPU); the core then accepts only a NULL stream and makes an event a host
    // timestamp taken at record. `stream` is the backend's stream handle (CUstream; NULL = the
    // executor's own). The core calls the event slots only with events of this executor, and
    // event_synchronize / event_elapsed_ms / event_wait only after a record.
    hg_status (*set_stream)(void* state, void* stream);
    void* (*get_stream)(void* state);
    hg_status (*event_create)(void* state, void** out_event);
    void (*event_destroy)(void* state, void* event);
    hg_status (*event_record)(void* state, void* event);
    // Waits for the work before the last record; reports asynchronous errors of that work.
    hg_status (*event_synchronize)(void* state, void* event);
    hg_status (*event_query)(void* state, void* event, int* done);
    hg_status (*event_elapsed_ms)(void* state, void* start, void* end, double* ms);
    hg_status (*event_wait)(void* state, void* event, void* stream);

    // C = A * B in f64 on host memory with any element strides (row, column) of A (m x k),
    // B (k x n) and C (m x n, written, never read); k >= 1. Optional (host-visible backends).
    hg_status (*dgemm_strided)(void* state, int64_t m, int64_t n, int64_t k, const double* a,
                               int64_t a_rs, int64_t a_cs, const double* b, int64_t b_rs,
                               int64_t b_cs, double* c, int64_t c_rs, int64_t c_cs);
    // Optional (NULL: the op layer makes one sgemm / gemm_ex call per batch element): `batch`
    // products C_i = alpha * op(A_i) * op(B_i) + beta * C_i on device memory (host memory on
    // the CPU backend, which takes f32 only), row-major as gemm_ex, for dtype f32 (as sgemm,
    // TF32 included), f64, f16 or bf16 (as gemm_ex), where
    // X_i starts stride_x elements after X_(i-1). stride_a / stride_b may be 0 (every product
    // reads the same operand); the C_i do not overlap. batch >= 0 of any size (the backend
    // splits what its library cannot take in one call); HG_ERR_UNSUPPORTED for another dtype.
    hg_status (*gemm_strided_batched)(void* state, hg_dtype dtype, int trans_a, int trans_b,
                                      int64_t m, int64_t n, int64_t k, double alpha,
                                      const void* a, int64_t lda, int64_t stride_a,
                                      const void* b, int64_t ldb, int64_t stride_b, double beta,
                                      void* c, int64_t ldc, int64_t stride_c, int64_t batch);
    // Optional: the executor state's part in fork() (base/fork.h): PREPARE takes its locks
    // (called after the executor's launch lock, before its list lock), PARENT releases them,
    // CHILD makes them anew and forgets its threads, or marks the executor unusable where the
    // device cannot be used after fork (CUDA).
    void (*fork)(void* state, hg_fork_phase phase);
} hg_backend_vtable;

// The registry: the vtable of a concrete backend kind, or NULL when not built in.
const hg_backend_vtable* hg_backend_get(hg_backend_kind kind);

extern const hg_backend_vtable hg_cpu_backend;
extern const hg_backend_vtable hg_cuda_backend;

#endif
