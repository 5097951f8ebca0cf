// hologram/core.h — part of libhologram's public header: the base of the API: version, status
// codes and errors, logging, dtypes, backends and executors, buffers, build facts.
// Include <hologram.h>, which includes every part; the conventions at its top (errors,
// handles, ownership, thread safety) apply here.
#ifndef HOLOGRAM_CORE_H
#define HOLOGRAM_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define HG_API __declspec(dllimport)
#elif defined(HG_BUILDING_LIBRARY)
#  define HG_API __attribute__((visibility("default")))
#else
#  define HG_API
#endif

// ---------------------------------------------------------------------------------------------
// Version
// ---------------------------------------------------------------------------------------------
// The one place the version is written: CMake (project version, hologram.pc, the CMake package)
// and the Python package (pyproject.toml) read these three lines.
#define HG_VERSION_MAJOR 0
#define HG_VERSION_MINOR 2
#define HG_VERSION_PATCH 0
#define HG_VERSION_TEXT_(x) #x
#define HG_VERSION_TEXT(x) HG_VERSION_TEXT_(x)
#define HG_VERSION_STRING                                                                     \
    HG_VERSION_TEXT(HG_VERSION_MAJOR) "." HG_VERSION_TEXT(HG_VERSION_MINOR) "."               \
        HG_VERSION_TEXT(HG_VERSION_PATCH)
// Encoded as major*10000 + minor*100 + patch.
#define HG_VERSION_NUMBER (HG_VERSION_MAJOR * 10000 + HG_VERSION_MINOR * 100 + HG_VERSION_PATCH)
// Version of the backend vtable ABI (backends built against another value are refused).
#define HG_BACKEND_API_VERSION 6
// Version of the Atlas ISA binary format written by hg_program_save.
#define HG_ISA_VERSION 1

// The library's version string (HG_VERSION_STRING, "major.minor.patch"); static storage.
HG_API const char* hg_version(void);
// The library's HG_VERSION_NUMBER (to compare the header with the loaded library).
HG_API int hg_version_number(void);

// ---------------------------------------------------------------------------------------------
// Status codes. Stable values, grouped by kind; new codes are only added at the end of a group.
// ---------------------------------------------------------------------------------------------
typedef enum hg_status {
    HG_OK = 0,
    // 1xx: the caller passed something wrong
    HG_ERR_INVALID_ARGUMENT = 100,   // a value out of its documented range
    HG_ERR_NULL_POINTER = 101,       // a required pointer was NULL
    HG_ERR_INVALID_HANDLE = 102,     // zero, destroyed, foreign or wrong-kind handle
    HG_ERR_DTYPE_MISMATCH = 103,     // dtype of a buffer/argument differs from what is expected
    HG_ERR_SIZE_MISMATCH = 104,      // sizes/counts/offsets do not fit
    HG_ERR_OUT_OF_RANGE = 105,       // an index outside a valid range
    HG_ERR_UNSUPPORTED = 106,        // valid request the backend/dtype does not support
    // 2xx: programs (Atlas ISA)
    HG_ERR_PARSE = 200,              // text assembly could not be parsed
    HG_ERR_INVALID_PROGRAM = 201,    // the validator rejected the program
    HG_ERR_BAD_FORMAT = 202,         // binary program: bad magic, version, size or checksum
    HG_ERR_LAUNCH_CONFIG = 203,      // grid/block/shared memory out of limits
    HG_ERR_ARGUMENT_BINDING = 204,   // launch arguments do not match the parameters
    // 3xx: execution
    HG_ERR_OUT_OF_BOUNDS = 300,      // a lane accessed memory outside a buffer (nothing written)
    HG_ERR_EXECUTION = 301,          // other failure while a kernel ran
    HG_ERR_EXECUTOR_DEAD = 302,      // an earlier unrecoverable error disabled the executor
    // 4xx: resources and environment
    HG_ERR_OUT_OF_MEMORY = 400,
    HG_ERR_BACKEND_UNAVAILABLE = 401,// not built in / no driver / no device / not this platform
    HG_ERR_IO = 402,                 // file could not be read or written
    HG_ERR_INTERNAL = 499,           // a bug in the library: please report it
} hg_status;

// Short constant name of a status ("HG_ERR_PARSE"); "HG_UNKNOWN_STATUS" for unknown values.
HG_API const char* hg_status_string(hg_status status);
// Thread-local message of the last failing call on this thread ("" if none). Valid until the
// next library call on this thread.
HG_API const char* hg_last_error(void);
// Clears this thread's last error message.
HG_API void hg_clear_error(void);

// Tracing (docs/trace.md): while on, every op call, graph plan step and kernel launch of the
// process is recorded (name, executor, dtype, shape, bytes, threads, time); hg_trace_stop
// writes them to `path` as a Chrome / Perfetto trace (JSON). HOLOGRAM_TRACE=path in the
// environment traces from the first executor to the end of the process. Off, it costs a load
// and a branch per call. Starting twice gives HG_ERR_INVALID_ARGUMENT, an unwritable path
// HG_ERR_IO (checked at start).
HG_API hg_status hg_trace_start(const char* path);
HG_API hg_status hg_trace_stop(void);
// 1 while a trace is running.
HG_API int hg_trace_enabled(void);

// Releases a string or byte block returned by the library (NULL is ignored).
HG_API void hg_free(void* ptr);

// ---------------------------------------------------------------------------------------------
// Logging. Default: messages at or above the level go to stderr. HOLOGRAM_LOG_LEVEL
// (error|warn|info|debug|trace|off) sets the initial level; hg_log_set_level overrides it.
// ---------------------------------------------------------------------------------------------
typedef enum hg_log_level {
    HG_LOG_TRACE = 0,
    HG_LOG_DEBUG = 1,
    HG_LOG_INFO = 2,
    HG_LOG_WARN = 3,
    HG_LOG_ERROR = 4,
    HG_LOG_OFF = 5,
    HG_LOG_LEVEL_COUNT
} hg_log_level;

// Called with each message at or above the level; may be called from any thread (also from
// worker threads), so it must be thread-safe. NULL restores the stderr default.
typedef void (*hg_log_fn)(hg_log_level level, const char* message, void* user);
HG_API void hg_log_set_callback(hg_log_fn fn, void* user);
HG_API void hg_log_set_level(hg_log_level level);
HG_API hg_log_level hg_log_get_level(void);

// ---------------------------------------------------------------------------------------------
// Data types
// ---------------------------------------------------------------------------------------------
typedef enum hg_dtype {
    HG_DTYPE_BOOL = 0,  // 1 byte, 0 or 1
    HG_DTYPE_I8 = 1,
    HG_DTYPE_I16 = 2,
    HG_DTYPE_I32 = 3,
    HG_DTYPE_I64 = 4,
    HG_DTYPE_U8 = 5,
    HG_DTYPE_U16 = 6,
    HG_DTYPE_U32 = 7,
    HG_DTYPE_U64 = 8,
    HG_DTYPE_F16 = 9,   // IEEE binary16
    HG_DTYPE_BF16 = 10, // bfloat16
    HG_DTYPE_F32 = 11,
    HG_DTYPE_F64 = 12,
    HG_DTYPE_COUNT
} hg_dtype;

// Lower-case name ("f32", "bool"); NULL for an invalid value.
HG_API const char* hg_dtype_name(hg_dtype dtype);
// Size of one element in bytes; 0 for an invalid value.
HG_API size_t hg_dtype_size(hg_dtype dtype);
// Parses a dtype name ("f32", also numpy spellings "float32", "int64", "bool_"...).
HG_API hg_status hg_dtype_from_name(const char* name, hg_dtype* out);

// Conversions between IEEE binary16 / bfloat16 bit patterns and float (round to nearest even).
HG_API float hg_f16_to_f32(uint16_t bits);
HG_API uint16_t hg_f32_to_f16(float value);
HG_API float hg_bf16_to_f32(uint16_t bits);
HG_API uint16_t hg_f32_to_bf16(float value);

// ---------------------------------------------------------------------------------------------
// Backends, devices, executors
// ---------------------------------------------------------------------------------------------
typedef enum hg_backend_kind {
    HG_BACKEND_AUTO = 0,  // best available: cuda, then metal, then cpu
    HG_BACKEND_CPU = 1,
    HG_BACKEND_CUDA = 2,
    HG_BACKEND_METAL = 3,
    HG_BACKEND_KIND_COUNT
} hg_backend_kind;

// "auto", "cpu", "cuda", "metal"; NULL for invalid values.
HG_API const char* hg_backend_name(hg_backend_kind kind);
// Parses a backend name (case-insensitive). Unknown names give HG_ERR_INVALID_ARGUMENT with the
// list of valid names in the message.
HG_API hg_status hg_backend_from_name(const char* name, hg_backend_kind* out);

typedef struct hg_backend_info {
    hg_backend_kind kind;
    const char* name;         // static storage
    int available;            // 1 if an executor can be created on it now
    int device_count;         // 0 when unavailable
    char reason[256];         // why it is unavailable ("" when available)
} hg_backend_info;

// Fills *out for one concrete backend (not AUTO).
HG_API hg_status hg_backend_query(hg_backend_kind kind, hg_backend_info* out);

typedef struct hg_device_info {
    hg_backend_kind backend;
    int index;
    char name[256];           // e.g. "AMD EPYC (x86_64, AVX2 FMA)"
    uint64_t memory_bytes;    // total memory visible to the device
    int compute_units;        // CPU: worker threads; GPU: multiprocessors
    int capability_major;     // GPU compute capability; 0 on CPU
    int capability_minor;
} hg_device_info;

HG_API hg_status hg_device_query(hg_backend_kind kind, int index, hg_device_info* out);

typedef struct hg_executor { uint64_t handle; } hg_executor;

typedef struct hg_executor_options {
    hg_backend_kind backend;  // AUTO picks the best available (HOLOGRAM_BACKEND overrides AUTO)
    int device;               // device index on that backend (0 = first)
    int num_threads;          // CPU worker threads; 0 = HOLOGRAM_NUM_THREADS, else
                              // OMP_NUM_THREADS, else the number of cores
} hg_executor_options;

// Creates an executor on a backend. Unavailable backends give HG_ERR_BACKEND_UNAVAILABLE with
// the reason (not built in, no driver, no device, not this platform).
// Release with hg_executor_destroy, which also destroys the buffers and kernels created on it.
HG_API hg_status hg_executor_create(hg_backend_kind kind, hg_executor* out);
HG_API hg_status hg_executor_create_by_name(const char* name, hg_executor* out);
HG_API hg_status hg_executor_create_ex(const hg_executor_options* options, hg_executor* out);
HG_API hg_status hg_executor_destroy(hg_executor ex);
// The concrete backend the executor runs on (never AUTO).
HG_API hg_status hg_executor_backend(hg_executor ex, hg_backend_kind* out);
HG_API hg_status hg_executor_device(hg_executor ex, hg_device_info* out);
// Number of worker threads (CPU) or 1.
HG_API hg_status hg_executor_num_threads(hg_executor ex, int* out);
// How CPU executors run the parallel parts of their work; process-wide, for every CPU executor.
// OWN: hologram's worker threads (the default). OPENMP: the OpenMP runtime already loaded in the
// process (libgomp, LLVM's libomp or Intel's libiomp5, through the GOMP_parallel entry all three
// export), so hologram shares one set of threads with an OpenMP application or library such as
// PyTorch's CPU build: two pools on the same cores each spin after their parallel regions and
// slow the other down (docs/architecture.md "Threads"). The thread count stays the executor's.
// A process forked after the choice runs on hologram's threads in the child (OpenMP runtimes
// are not fork-safe). HOLOGRAM_CPU_THREADING (own | openmp) sets it before the first call.
typedef enum hg_cpu_threading {
    HG_CPU_THREADING_OWN = 0,
    HG_CPU_THREADING_OPENMP = 1
} hg_cpu_threading;
// OPENMP with no OpenMP runtime loaded gives HG_ERR_UNSUPPORTED and leaves the choice as it was.
HG_API hg_status hg_cpu_set_threading(hg_cpu_threading mode);
// The choice in effect for work launched now (OWN in a child forked after OPENMP was chosen).
HG_API hg_status hg_cpu_get_threading(hg_cpu_threading* out);
// Waits until all work submitted to the executor has finished, and reports an error raised by
// asynchronous work since the last synchronizing call (CUDA: an out-of-bounds access of a
// launch that returned HG_OK, with the kernel and the launch named; docs/cuda.md).
HG_API hg_status hg_executor_synchronize(hg_executor ex);

// ---------------------------------------------------------------------------------------------
// Streams and events (docs/api.md "Asynchronous execution"). CUDA executors queue launches,
// copies and library calls on a stream and return before the device ran them; host reads
// (hg_buffer_read ...), hg_executor_synchronize and hg_event_synchronize wait. CPU executors
// run every call to completion before it returns: their stream is NULL and an event is a host
// timestamp taken at hg_event_record.
// ---------------------------------------------------------------------------------------------
// CUDA: later work of the executor is queued on `stream` (a CUstream of the executor's device
// and context, e.g. torch.cuda.current_stream().cuda_stream; (void*)1 is the legacy default
// stream, (void*)2 the per-thread one); NULL = the executor's own stream. The new stream first
// waits (an event) for what was queued on the old one, so the executor's work stays in order.
// The stream must outlive its use (set another one or NULL before destroying it). CPU
// executors accept NULL only (HG_ERR_UNSUPPORTED otherwise).
HG_API hg_status hg_executor_set_stream(hg_executor ex, void* stream);
// The stream the executor queues work on now (its own unless set; NULL on CPU executors and
// on the CUDA emulation's own stream).
HG_API hg_status hg_executor_stream(hg_executor ex, void** stream);

// A marker in an executor's stream (cudaEvent_t / torch.cuda.Event). Release with
// hg_event_destroy (or with the executor). Timing is always enabled. Thread safety: as other
// handles; record, query and synchronize of one event from several threads are serialized.
typedef struct hg_event { uint64_t handle; } hg_event;
HG_API hg_status hg_event_create(hg_executor ex, hg_event* out);
// Records the event at the end of the work queued so far on the executor's current stream.
HG_API hg_status hg_event_record(hg_event ev);
// Waits until the work before the last record has finished (at once when never recorded), and
// reports an asynchronous error raised by that work, as hg_executor_synchronize does.
HG_API hg_status hg_event_synchronize(hg_event ev);
// *done = 1 when the work before the last record has finished (or it was never recorded),
// else 0. Does not wait.
HG_API hg_status hg_event_query(hg_event ev, int* done);
// Milliseconds of device time between two recorded events of one executor (waits for both).
// HG_ERR_INVALID_ARGUMENT when one was never recorded or they belong to different executors.
HG_API hg_status hg_event_elapsed_ms(hg_event start, hg_event end, double* ms);
// Makes `stream` (a CUstream as for hg_executor_set_stream; NULL = the executor's current
// stream) wait for the work before the event's last record, without blocking the host
// (cudaStreamWaitEvent). CPU executors: only NULL, and there is nothing to wait for.
HG_API hg_status hg_event_wait(hg_event ev, void* stream);
HG_API hg_status hg_event_destroy(hg_event ev);

// ---------------------------------------------------------------------------------------------
// Buffers: typed, fixed-size arrays of elements on an executor's device. No limit on their
// number (a real allocator, not a slot table). Offsets and counts are in elements.
// ---------------------------------------------------------------------------------------------
typedef struct hg_buffer { uint64_t handle; } hg_buffer;

// Allocates count elements (count may be 0). Contents are zero. Release with hg_buffer_destroy.
HG_API hg_status hg_buffer_create(hg_executor ex, hg_dtype dtype, size_t count, hg_buffer* out);
// Flags of hg_buffer_create_ex.
typedef enum hg_buffer_flags {
    HG_BUFFER_DEFAULT = 0,
    HG_BUFFER_UNINITIALIZED = 1,   // contents unspecified (no zeroing pass: for outputs that the
                                   // caller overwrites completely, like numpy.empty)
} hg_buffer_flags;
// hg_buffer_create with flags (a combination of hg_buffer_flags; unknown bits are refused).
HG_API hg_status hg_buffer_create_ex(hg_executor ex, hg_dtype dtype, size_t count,
                                     uint32_t flags, hg_buffer* out);
// Wraps caller memory without copying (CPU executors only; ptr must be aligned to the element
// size and stay valid until hg_buffer_destroy). The library never frees it.
HG_API hg_status hg_buffer_wrap(hg_executor ex, hg_dtype dtype, void* ptr, size_t count,
                                hg_buffer* out);
// Wraps memory of the executor's device without copying: a device address (CUDA: a
// CUdeviceptr of the executor's device and context, such as another library's allocation) or,
// on a CPU executor, a host address as hg_buffer_wrap. Aligned to the element size; it must
// stay valid until hg_buffer_destroy. The library never frees it.
HG_API hg_status hg_buffer_wrap_device(hg_executor ex, hg_dtype dtype, uint64_t address,
                                       size_t count, hg_buffer* out);
// The address of element 0 in the executor's device address space (CUDA: a CUdeviceptr; CPU:
// the host pointer), for handing the memory to other libraries (DLPack, CUDA array interface).
HG_API hg_status hg_buffer_device_address(hg_buffer buf, uint64_t* out);
HG_API hg_status hg_buffer_destroy(hg_buffer buf);
// Copies count elements from host memory into the buffer at element offset.
HG_API hg_status hg_buffer_write(hg_buffer buf, size_t offset, const void* src, size_t count);
// Copies count elements from the buffer at element offset into host memory.
HG_API hg_status hg_buffer_read(hg_buffer buf, size_t offset, void* dst, size_t count);
// Sets every element to the value given as a double (converted as by cvt; bool: nonzero = 1).
HG_API hg_status hg_buffer_fill(hg_buffer buf, double value);
// Copies count elements between buffers of the same dtype on the same executor.
HG_API hg_status hg_buffer_copy(hg_buffer dst, size_t dst_offset, hg_buffer src,
                                size_t src_offset, size_t count);
// Host pointer to the elements where the memory is host-visible (CPU); valid until destroy.
// HG_ERR_UNSUPPORTED where it is not.
HG_API hg_status hg_buffer_map(hg_buffer buf, void** out);
HG_API hg_status hg_buffer_count(hg_buffer buf, size_t* out);
HG_API hg_status hg_buffer_dtype(hg_buffer buf, hg_dtype* out);
HG_API hg_status hg_buffer_nbytes(hg_buffer buf, size_t* out);
HG_API hg_status hg_buffer_executor(hg_buffer buf, hg_executor* out);


// ---------------------------------------------------------------------------------------------
// Build and machine facts (for `hologram info`)
// ---------------------------------------------------------------------------------------------
typedef struct hg_build_info {
    const char* version;        // HG_VERSION_STRING
    const char* compiler;       // e.g. "gcc 12.2.0"
    const char* build_type;     // CMake build type
    const char* features;       // space-separated build features, e.g. "cpu avx2-kernels"
} hg_build_info;
HG_API void hg_build_info_get(hg_build_info* out);

// Space-separated CPU features the running machine has and the library uses ("sse2 avx2 fma").
HG_API const char* hg_cpu_features(void);
// The CPU kernel set this process runs: "avx512", "avx2" or "generic" - the widest of the sets
// built (hg_build_info's features name them: "avx2-kernels", "avx512-kernels") that the CPU
// has, narrowed by HOLOGRAM_CPU_LEVEL=avx2|generic where set.
HG_API const char* hg_cpu_kernel_set(void);
// The file the CUDA backend loads NVRTC from (HOLOGRAM_NVRTC, else the library search path),
// or NULL with hg_last_error() saying why none loads. Loads it on the first call.
HG_API const char* hg_nvrtc_path(void);
// The folder of the CUDA backend's compiled-kernel cache (HOLOGRAM_CACHE_DIR, else
// $XDG_CACHE_HOME/hologram, else ~/.cache/hologram; created on the first call), or NULL with
// hg_last_error() saying why none is usable (kernels are then cached in memory only).
HG_API const char* hg_kernel_cache_dir(void);

#ifdef __cplusplus
}
#endif
#endif  // HOLOGRAM_CORE_H
