// hologram.h — the one public header of libhologram (C11).
//
// Quick example: c = a + b on the CPU with an Atlas ISA program written in text.
//
//     hg_executor ex;  hg_program prog;  hg_buffer a, b, c;
//     hg_executor_create(HG_BACKEND_AUTO, &ex);
//     hg_program_parse(text, strlen(text), &prog);          // see docs/isa.md
//     hg_buffer_create(ex, HG_DTYPE_F32, n, &a);  ...      // also b, c
//     hg_buffer_write(a, 0, host_a, n);  ...
//     hg_arg args[] = { hg_arg_buffer(a), hg_arg_buffer(b), hg_arg_buffer(c), hg_arg_u32(n) };
//     hg_launch_config cfg = hg_launch_1d(n, 256);
//     if (hg_launch(ex, prog, &cfg, args, 4) != HG_OK) fprintf(stderr, "%s\n", hg_last_error());
//     hg_buffer_read(c, 0, host_c, n);
//     hg_buffer_destroy(a); ...  hg_program_destroy(prog);  hg_executor_destroy(ex);
//
// Conventions
// - Every fallible call returns hg_status; results come back through out parameters, which are
//   written only on success. On failure hg_last_error() returns a thread-local message naming
//   what was wrong and what was expected; the message stays until the next failing call on the
//   same thread.
// - Handles (hg_executor, hg_buffer, hg_program, hg_kernel) are small values, not pointers. Each
//   carries a kind tag and a generation counter: a destroyed, zero, foreign or wrong-kind handle is
//   detected and gives HG_ERR_INVALID_HANDLE, never a crash.
// - Ownership: every *_create / *_parse / *_load names the *_destroy that releases it. Strings and
//   byte blocks the library returns are released with hg_free().
// - Thread safety: all functions may be called from any thread. One executor may be used from
//   several threads at once (launches on one executor are serialized internally; buffers may be
//   read and written concurrently as long as the regions written do not overlap). A program is
//   immutable once it has been launched or compiled into a kernel; building it (hg_program_add_*,
//   hg_program_emit) is not thread-safe for one program. Destroying a handle while another thread
//   is still using that same handle is a race the library does not guard against.
#ifndef HOLOGRAM_H
#define HOLOGRAM_H

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
#define HG_VERSION_MAJOR 0
#define HG_VERSION_MINOR 2
#define HG_VERSION_PATCH 0
#define HG_VERSION_STRING "0.2.0"
// Encoded as major*10000 + minor*100 + patch.
#define HG_VERSION_NUMBER (HG_VERSION_MAJOR * 10000 + HG_VERSION_MINOR * 100 + HG_VERSION_PATCH)
// Version of the backend vtable ABI (backends built against another value are refused).
#define HG_BACKEND_API_VERSION 4
// Version of the Atlas ISA binary format written by hg_program_save.
#define HG_ISA_VERSION 1

// The library's version string ("0.2.0"); static storage.
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
// Waits until all work submitted to the executor has finished.
HG_API hg_status hg_executor_synchronize(hg_executor ex);

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
// Tensor views (numpy semantics). A tensor is a plain value describing a strided view of a
// buffer: dtype, shape (up to HG_MAX_DIMS dims), strides in elements (zero and negative
// allowed) and the element offset of index (0, ..., 0). It owns nothing: copying the struct is
// free, and a tensor is invalid once its buffer is destroyed (calls then give
// HG_ERR_INVALID_HANDLE). Every call checks the tensors it is given (buffer handle, dtype, dims,
// every reachable element inside the buffer), writes *out only on success and never copies data
// unless its name says so (hg_tensor_copy, hg_tensor_contiguous). Shapes with 0 elements are
// valid everywhere. Entries of shape/strides beyond ndim are 0 in results. Thread safety: the
// view functions are pure; hg_tensor_copy writes dst's buffer under the buffer rules above.
//
//     hg_tensor t, tt, row;                          // t: a 3x4 matrix over buffer `buf`
//     hg_tensor_from_buffer(buf, 2, (int64_t[]){3, 4}, &t);
//     hg_tensor_transpose(&t, 0, 1, &tt);            // 4x3 view, strides (1, 4), no copy
//     hg_tensor_slice(&t, 1, HG_SLICE_NONE, HG_SLICE_NONE, -1, &row);   // t[:, ::-1]
// ---------------------------------------------------------------------------------------------
#define HG_MAX_DIMS 8
// Python's None as a slice start or stop: the first (stop: past the last) element in the
// direction of the step. Any other value is clamped like Python clamps it; HG_SLICE_END is a
// stop past the end for positive steps.
#define HG_SLICE_NONE INT64_MIN
#define HG_SLICE_END INT64_MAX
// hg_tensor_squeeze: remove every size-1 dim.
#define HG_ALL_DIMS INT32_MIN

typedef struct hg_tensor {
    hg_buffer buffer;
    hg_dtype dtype;                 // the buffer's dtype
    int32_t ndim;                   // 0..HG_MAX_DIMS (0 = a scalar view of one element)
    int64_t shape[HG_MAX_DIMS];
    int64_t strides[HG_MAX_DIMS];   // in elements; may be 0 (broadcast) or negative
    int64_t offset;                 // element index in the buffer of index (0, ..., 0)
} hg_tensor;

// C-contiguous view of the whole buffer at offset 0; the product of shape must equal the
// buffer's count (HG_ERR_SIZE_MISMATCH otherwise). shape may be NULL when ndim is 0.
HG_API hg_status hg_tensor_from_buffer(hg_buffer buf, int32_t ndim, const int64_t* shape,
                                       hg_tensor* out);
// A view with any strides (NULL = C-contiguous) at an element offset. Every reachable element
// must lie inside the buffer (HG_ERR_OUT_OF_RANGE naming the lowest/highest element otherwise);
// an empty view needs 0 <= offset <= count.
HG_API hg_status hg_tensor_view(hg_buffer buf, int32_t ndim, const int64_t* shape,
                                const int64_t* strides, int64_t offset, hg_tensor* out);
// Number of elements (product of shape; 1 for ndim 0).
HG_API hg_status hg_tensor_numel(const hg_tensor* t, int64_t* out);
// 1 if the elements are laid out in C order with no gaps (strides of size-1 dims are ignored;
// empty tensors are contiguous), whatever the offset; else 0.
HG_API hg_status hg_tensor_is_contiguous(const hg_tensor* t, int* out);
// Same elements in C order with a new shape; one entry may be -1 (inferred). The result is a
// view whenever numpy's reshape would make one, also for many non-contiguous tensors; otherwise
// HG_ERR_UNSUPPORTED (call hg_tensor_contiguous first, then reshape).
HG_API hg_status hg_tensor_reshape(const hg_tensor* t, int32_t ndim, const int64_t* shape,
                                   hg_tensor* out);
// Reorders the dims: out dim i is t's dim perm[i] (negative axes count from the end; perm has
// t->ndim entries and must be a permutation).
HG_API hg_status hg_tensor_permute(const hg_tensor* t, const int32_t* perm, hg_tensor* out);
// Swaps two dims (negative allowed).
HG_API hg_status hg_tensor_transpose(const hg_tensor* t, int32_t dim0, int32_t dim1,
                                     hg_tensor* out);
// t[..., start:stop:step, ...] on dim with Python's rules: negative start/stop count from the
// end, out-of-range values are clamped, HG_SLICE_NONE is None, step may be negative but not 0.
HG_API hg_status hg_tensor_slice(const hg_tensor* t, int32_t dim, int64_t start, int64_t stop,
                                 int64_t step, hg_tensor* out);
// t[..., index, ...]: removes dim (index in [-size, size)).
HG_API hg_status hg_tensor_select(const hg_tensor* t, int32_t dim, int64_t index,
                                  hg_tensor* out);
// numpy.broadcast_to: ndim >= t->ndim; t's dims align with the last ones of shape; a size-1 dim
// may become any size (stride 0); new leading dims get stride 0; -1 keeps t's size.
HG_API hg_status hg_tensor_expand(const hg_tensor* t, int32_t ndim, const int64_t* shape,
                                  hg_tensor* out);
// Removes dim (which must have size 1), or every size-1 dim with HG_ALL_DIMS.
HG_API hg_status hg_tensor_squeeze(const hg_tensor* t, int32_t dim, hg_tensor* out);
// Inserts a size-1 dim at position dim in [-(ndim+1), ndim] (negative counts from the end).
HG_API hg_status hg_tensor_unsqueeze(const hg_tensor* t, int32_t dim, hg_tensor* out);
// numpy's broadcast of two shapes (dims aligned at the end; equal, or one of them 1).
// out_shape needs room for max(na, nb) entries. HG_ERR_SIZE_MISMATCH names both shapes.
HG_API hg_status hg_broadcast_shapes(int32_t na, const int64_t* a, int32_t nb, const int64_t* b,
                                     int32_t* out_ndim, int64_t* out_shape);
// dst[...] = src[...] elementwise: same dtype, same executor, src's shape must broadcast to dst's.
// dst may not reach one element through a zero stride on a dim of size > 1. Overlapping views
// of the same memory behave as if src were read completely before dst is written. CPU
// (host-visible) backends only for now; others give HG_ERR_UNSUPPORTED.
HG_API hg_status hg_tensor_copy(const hg_tensor* dst, const hg_tensor* src);
// If t is C-contiguous: *out = *t and *out_copied = 0. Otherwise allocates a new buffer of
// numel elements on t's executor, copies t into it, *out = that C-contiguous tensor and
// *out_copied = 1: the caller then owns out->buffer and releases it with hg_buffer_destroy.
HG_API hg_status hg_tensor_contiguous(const hg_tensor* t, hg_tensor* out, int* out_copied);

// ---------------------------------------------------------------------------------------------
// Atlas ISA programs (reference: docs/isa.md)
// ---------------------------------------------------------------------------------------------
typedef struct hg_program { uint64_t handle; } hg_program;

typedef enum hg_opcode {
    HG_OP_MOV = 0,     // d = a
    HG_OP_ADD,         // d = a + b
    HG_OP_SUB,
    HG_OP_MUL,
    HG_OP_DIV,         // ints: x/0 = all ones (-1 / MAX), MIN/-1 = MIN; floats IEEE
    HG_OP_REM,         // truncated remainder (C % and fmod); ints: x%0 = x, MIN%-1 = 0
    HG_OP_MIN,         // floats: NaN if either is NaN; -0 < +0
    HG_OP_MAX,
    HG_OP_ABS,
    HG_OP_NEG,
    HG_OP_FMA,         // d = a*b + c (floats: one rounding; ints: wrapping)
    HG_OP_AND,
    HG_OP_OR,
    HG_OP_XOR,
    HG_OP_NOT,
    HG_OP_SHL,         // shift amount = b as unsigned; >= width gives 0
    HG_OP_SHR,         // arithmetic for signed types, logical for unsigned
    HG_OP_CMP,         // bool d = a <cond> b (cond in hg_instr.aux: hg_cmp)
    HG_OP_SEL,         // d = p ? a : b  (p: bool)
    HG_OP_CVT,         // d (type) = a (aux: source dtype)
    HG_OP_SQRT,
    HG_OP_RSQRT,
    HG_OP_EXP,
    HG_OP_EXP2,
    HG_OP_LOG,
    HG_OP_LOG2,
    HG_OP_SIN,
    HG_OP_COS,
    HG_OP_TANH,
    HG_OP_SIGMOID,
    HG_OP_ERF,
    HG_OP_FLOOR,
    HG_OP_CEIL,
    HG_OP_ROUND,       // to nearest, ties to even (as numpy.round)
    HG_OP_TRUNC,
    HG_OP_LD,          // d = space[mem][a]   (aux: hg_space)
    HG_OP_ST,          // space[mem][a] = b
    HG_OP_ATOM,        // d = old; space[mem][a] (op) = b   (aux: hg_atomic_op | space << 4)
    HG_OP_BAR,         // block barrier (only where control flow is block-uniform)
    HG_OP_FENCE,       // memory fence (aux: hg_space scope)
    HG_OP_IF,          // if a (bool)
    HG_OP_ELSE,
    HG_OP_ENDIF,
    HG_OP_LOOP,
    HG_OP_ENDLOOP,
    HG_OP_BREAK,       // leave the innermost loop; with a bool operand: only lanes where it is true
    HG_OP_EXIT,        // the lane stops
    HG_OP_GELU,        // x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) (tanh-form GELU; ISA 1.1)
    HG_OPCODE_COUNT
} hg_opcode;

typedef enum hg_cmp {
    HG_CMP_EQ = 0, HG_CMP_NE, HG_CMP_LT, HG_CMP_LE, HG_CMP_GT, HG_CMP_GE, HG_CMP_COUNT
} hg_cmp;

typedef enum hg_space { HG_SPACE_GLOBAL = 0, HG_SPACE_SHARED = 1, HG_SPACE_COUNT } hg_space;

typedef enum hg_atomic_op {
    HG_ATOMIC_ADD = 0, HG_ATOMIC_MIN, HG_ATOMIC_MAX, HG_ATOMIC_EXCH, HG_ATOMIC_CAS,
    HG_ATOMIC_COUNT
} hg_atomic_op;

typedef enum hg_special {
    HG_SREG_TID_X = 0, HG_SREG_TID_Y, HG_SREG_TID_Z,          // lane index within the block
    HG_SREG_NTID_X, HG_SREG_NTID_Y, HG_SREG_NTID_Z,           // block dimensions
    HG_SREG_CTAID_X, HG_SREG_CTAID_Y, HG_SREG_CTAID_Z,        // block index within the grid
    HG_SREG_NCTAID_X, HG_SREG_NCTAID_Y, HG_SREG_NCTAID_Z,     // grid dimensions
    HG_SREG_GID_X, HG_SREG_GID_Y, HG_SREG_GID_Z,              // ctaid * ntid + tid
    HG_SREG_COUNT
} hg_special;

typedef enum hg_operand_kind {
    HG_OPERAND_NONE = 0,
    HG_OPERAND_REG = 1,      // index: register index
    HG_OPERAND_IMM = 2,      // bits: raw bits of the value in the operand's type (little end)
    HG_OPERAND_SPECIAL = 3,  // index: hg_special (type u32)
    HG_OPERAND_PARAM = 4,    // index: scalar parameter index
    HG_OPERAND_KIND_COUNT
} hg_operand_kind;

typedef struct hg_operand {
    uint32_t kind;           // hg_operand_kind
    uint32_t index;
    uint64_t bits;
} hg_operand;

// One instruction. Operand roles by opcode (see docs/isa.md):
//   ld:   dst = value, mem = slot, src[0] = element index
//   st:   mem = slot, src[0] = element index, src[1] = value
//   atom: dst = old value (or NONE), mem = slot, src[0] = index, src[1] = value
//         (cas: src[1] = compare, src[2] = new value)
//   cmp:  dst = bool register, src[0..1]
//   sel:  dst, src[0] = bool condition, src[1] = if true, src[2] = if false
//   cvt:  type = destination dtype, aux = source dtype
//   if / break: src[0] = bool condition (break: optional)
// A memory slot is a buffer parameter index (space global) or a shared array index (shared).
typedef struct hg_instr {
    uint16_t op;             // hg_opcode
    uint8_t type;            // hg_dtype the operation works in
    uint8_t aux;             // hg_cmp / hg_space / source dtype / hg_atomic_op | (space << 4)
    uint32_t mem;            // memory slot for ld / st / atom
    hg_operand dst;
    hg_operand src[3];
} hg_instr;

// Operand constructors.
static inline hg_operand hg_reg(uint32_t index) { hg_operand o = {HG_OPERAND_REG, index, 0}; return o; }
static inline hg_operand hg_sreg(hg_special s) { hg_operand o = {HG_OPERAND_SPECIAL, (uint32_t)s, 0}; return o; }
static inline hg_operand hg_param(uint32_t index) { hg_operand o = {HG_OPERAND_PARAM, index, 0}; return o; }
static inline hg_operand hg_imm_bits(uint64_t bits) { hg_operand o = {HG_OPERAND_IMM, 0, bits}; return o; }
static inline hg_operand hg_none(void) { hg_operand o = {HG_OPERAND_NONE, 0, 0}; return o; }
HG_API hg_operand hg_imm_i64(int64_t v);          // two's complement bits; used for any int type
HG_API hg_operand hg_imm_u64(uint64_t v);
HG_API hg_operand hg_imm_f32(float v);
HG_API hg_operand hg_imm_f64(double v);
HG_API hg_operand hg_imm_f16(float v);            // rounded to binary16
HG_API hg_operand hg_imm_bf16(float v);           // rounded to bfloat16
HG_API hg_operand hg_imm_bool(int v);

// Building. A program is an empty kernel named `name` (an identifier) until parameters,
// shared arrays, registers and instructions are added. Release with hg_program_destroy.
HG_API hg_status hg_program_create(const char* name, hg_program* out);
HG_API hg_status hg_program_destroy(hg_program prog);
// Buffer parameter (space global) of element type dtype; is_const = 1 forbids st/atom on it.
HG_API hg_status hg_program_add_buffer_param(hg_program prog, const char* name, hg_dtype dtype,
                                             int is_const, uint32_t* out_index);
// Scalar parameter, usable as an operand (hg_param(index)).
HG_API hg_status hg_program_add_scalar_param(hg_program prog, const char* name, hg_dtype dtype,
                                             uint32_t* out_index);
// Shared-memory array per block; count 0 = sized at launch from hg_launch_config.shared_bytes.
HG_API hg_status hg_program_add_shared(hg_program prog, const char* name, hg_dtype dtype,
                                       uint32_t count, uint32_t* out_index);
// Typed register (one per lane).
HG_API hg_status hg_program_add_reg(hg_program prog, const char* name, hg_dtype dtype,
                                    uint32_t* out_index);
// Appends an instruction (checked fully only by hg_program_validate / at launch).
HG_API hg_status hg_program_emit(hg_program prog, const hg_instr* instr);
// Convenience emitters for the common shapes.
HG_API hg_status hg_emit_unary(hg_program prog, hg_opcode op, hg_dtype type, uint32_t dst,
                               hg_operand a);
HG_API hg_status hg_emit_binary(hg_program prog, hg_opcode op, hg_dtype type, uint32_t dst,
                                hg_operand a, hg_operand b);
HG_API hg_status hg_emit_cmp(hg_program prog, hg_cmp cond, hg_dtype type, uint32_t dst,
                             hg_operand a, hg_operand b);
HG_API hg_status hg_emit_load(hg_program prog, hg_space space, hg_dtype type, uint32_t dst,
                              uint32_t slot, hg_operand index);
HG_API hg_status hg_emit_store(hg_program prog, hg_space space, hg_dtype type, uint32_t slot,
                               hg_operand index, hg_operand value);
HG_API hg_status hg_emit_control(hg_program prog, hg_opcode op, hg_operand cond);

// Introspection.
HG_API hg_status hg_program_name(hg_program prog, const char** out);  // valid while prog lives
HG_API hg_status hg_program_instr_count(hg_program prog, uint32_t* out);
HG_API hg_status hg_program_param_count(hg_program prog, uint32_t* out);

typedef enum hg_param_kind { HG_PARAM_BUFFER = 0, HG_PARAM_SCALAR = 1, HG_PARAM_KIND_COUNT } hg_param_kind;
typedef struct hg_param_info {
    const char* name;        // valid while the program lives
    hg_param_kind kind;
    hg_dtype dtype;
    int is_const;
} hg_param_info;
HG_API hg_status hg_program_param(hg_program prog, uint32_t index, hg_param_info* out);

// Runs the validator. HG_ERR_INVALID_PROGRAM with a message naming the instruction (index and
// text) and the problem.
HG_API hg_status hg_program_validate(hg_program prog);

// Text assembly: parse (the result is validated) and print the canonical text. print(parse(t))
// is the canonical form of t; parse(print(p)) equals p. The text from print is released with
// hg_free; *out_len excludes the terminating NUL.
HG_API hg_status hg_program_parse(const char* text, size_t len, hg_program* out);
HG_API hg_status hg_program_print(hg_program prog, char** out_text, size_t* out_len);

// Versioned binary format (magic "ATLS", version, payload size, CRC-32). The bytes are released
// with hg_free. Loading checks the header and checksum, then validates the program.
HG_API hg_status hg_program_save(hg_program prog, void** out_bytes, size_t* out_len);
HG_API hg_status hg_program_load(const void* bytes, size_t len, hg_program* out);

// 64-bit content hash of the program (of its binary payload): equal programs hash equally on
// every platform and in every version of the format 1.
HG_API hg_status hg_program_hash(hg_program prog, uint64_t* out);
// 1 if both programs have the same content.
HG_API hg_status hg_program_equal(hg_program a, hg_program b, int* out);

// ---------------------------------------------------------------------------------------------
// Launching
// ---------------------------------------------------------------------------------------------
typedef struct hg_dim3 { uint32_t x, y, z; } hg_dim3;

typedef struct hg_launch_config {
    hg_dim3 grid;            // blocks per dimension (each >= 1)
    hg_dim3 block;           // lanes per block (each >= 1; x*y*z <= 1024)
    uint32_t shared_bytes;   // bytes for the program's unsized shared array (0 if none)
} hg_launch_config;

// ceil(n / block) blocks of `block` lanes in x (n = 0 gives a 1-block grid... with no lanes
// doing work only if the program checks its bound; callers usually skip empty launches).
static inline hg_launch_config hg_launch_1d(uint64_t n, uint32_t block) {
    hg_launch_config c;
    uint64_t g = block ? (n + block - 1) / block : 1;
    c.grid.x = (uint32_t)(g ? g : 1); c.grid.y = 1; c.grid.z = 1;
    c.block.x = block ? block : 1; c.block.y = 1; c.block.z = 1;
    c.shared_bytes = 0;
    return c;
}

typedef struct hg_arg {
    uint32_t kind;           // hg_param_kind
    uint32_t reserved;
    hg_buffer buffer;        // BUFFER: the buffer
    uint64_t offset;         // BUFFER: first element visible to the kernel as index 0
    uint64_t count;          // BUFFER: elements visible (UINT64_MAX = to the end)
    hg_dtype dtype;          // SCALAR: type of bits (must equal the parameter's dtype)
    uint64_t bits;           // SCALAR: raw value bits
} hg_arg;

static inline hg_arg hg_arg_buffer(hg_buffer b) {
    hg_arg a = {HG_PARAM_BUFFER, 0, b, 0, UINT64_MAX, HG_DTYPE_BOOL, 0};
    return a;
}
static inline hg_arg hg_arg_buffer_range(hg_buffer b, uint64_t offset, uint64_t count) {
    hg_arg a = {HG_PARAM_BUFFER, 0, b, offset, count, HG_DTYPE_BOOL, 0};
    return a;
}
HG_API hg_arg hg_arg_scalar(hg_dtype dtype, uint64_t bits);
HG_API hg_arg hg_arg_i32(int32_t v);
HG_API hg_arg hg_arg_u32(uint32_t v);
HG_API hg_arg hg_arg_i64(int64_t v);
HG_API hg_arg hg_arg_u64(uint64_t v);
HG_API hg_arg hg_arg_f32(float v);
HG_API hg_arg hg_arg_f64(double v);

// A program compiled for one executor. Release with hg_kernel_destroy (or with the executor).
typedef struct hg_kernel { uint64_t handle; } hg_kernel;

// Validates and compiles prog for ex. The kernel keeps its own copy: prog may be destroyed.
HG_API hg_status hg_kernel_create(hg_executor ex, hg_program prog, hg_kernel* out);
HG_API hg_status hg_kernel_destroy(hg_kernel k);
// Runs the kernel to completion. Arguments are checked against the parameters (count, kind,
// dtype); every memory access is checked against the bound range: an out-of-bounds access
// stops the launch with HG_ERR_OUT_OF_BOUNDS naming the lane and the instruction, and nothing is
// written out of bounds (in-bounds stores of other lanes may have happened).
HG_API hg_status hg_kernel_launch(hg_kernel k, const hg_launch_config* cfg, const hg_arg* args,
                                  size_t nargs);
// Compiles (cached per executor by content hash) and launches in one call.
HG_API hg_status hg_launch(hg_executor ex, hg_program prog, const hg_launch_config* cfg,
                           const hg_arg* args, size_t nargs);

// ---------------------------------------------------------------------------------------------
// Ops (numpy semantics) on tensor views. Reference: docs/ops.md.
//
//     hg_tensor a, b, c = {0};                       // c.buffer.handle == 0: "allocate for me"
//     hg_tensor_from_buffer(buf_a, 2, (int64_t[]){64, 128}, &a);
//     hg_tensor_from_buffer(buf_b, 1, (int64_t[]){128}, &b);
//     hg_binary(HG_BINARY_ADD, &a, &b, &c);          // broadcast (64,128) + (128,) -> (64,128)
//     ...  hg_buffer_destroy(c.buffer);
//
// Conventions shared by every op below:
// - Inputs are any strided views (zero and negative strides too); they are only read.
// - `out` is in/out. If out->buffer.handle == 0 the op allocates a C-contiguous buffer of the
//   result dtype and shape on the inputs' executor and stores the tensor in *out (the caller
//   then owns out->buffer and releases it with hg_buffer_destroy). Otherwise *out names an
//   existing tensor the result is written into: its shape must equal the result shape; its dtype
//   may differ from the result dtype when numpy's "same_kind" casting allows it (the result is
//   computed in the result dtype and converted once on store).
// - Out may be one of the inputs exactly (same buffer, offset, shape and strides: in place);
//   any other overlap between out and an input is refused with HG_ERR_INVALID_ARGUMENT.
//   A failing op writes nothing.
// - All tensors of one call must live on one executor (HG_ERR_INVALID_ARGUMENT otherwise).
// - dtypes: every numeric dtype where numpy defines the op; f16 and bf16 are computed in f32
//   and rounded once. Type promotion follows numpy (hg_result_type; bf16 with f16 gives f32,
//   bf16 with an integer gives bf16). Unsupported dtype for an op: HG_ERR_DTYPE_MISMATCH.
// - Each call is compiled once per (op, dtypes, shapes, layout class, backend) and the plan is
//   cached on the executor, so repeated calls cost little more than the work.
// ---------------------------------------------------------------------------------------------

// numpy's result_type of two dtypes (bool < ints < floats; u64 with a signed int gives f64).
HG_API hg_status hg_result_type(hg_dtype a, hg_dtype b, hg_dtype* out);

typedef enum hg_unary_op {
    HG_UNARY_NEG = 0,      // -x (bool: refused)
    HG_UNARY_ABS,
    HG_UNARY_SIGN,         // -1, 0, +1 (NaN stays NaN; -0.0 gives -0.0, where numpy 2 gives +0.0)
    HG_UNARY_SQRT,         // float functions: integer and bool inputs give a float result
    HG_UNARY_RSQRT,        //   (numpy's rule: 8-bit and bool -> f16, 16-bit -> f32, else f64)
    HG_UNARY_RECIPROCAL,   // 1/x (integers: computed as numpy's integer reciprocal)
    HG_UNARY_SQUARE,
    HG_UNARY_EXP,
    HG_UNARY_EXPM1,
    HG_UNARY_EXP2,
    HG_UNARY_LOG,
    HG_UNARY_LOG1P,
    HG_UNARY_LOG2,
    HG_UNARY_SIN,
    HG_UNARY_COS,
    HG_UNARY_TANH,
    HG_UNARY_SIGMOID,      // 1 / (1 + exp(-x))
    HG_UNARY_RELU,         // max(x, 0); NaN stays NaN
    HG_UNARY_GELU,         // tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    HG_UNARY_GELU_ERF,     // erf form: 0.5 x (1 + erf(x / sqrt(2)))
    HG_UNARY_SILU,         // x * sigmoid(x)
    HG_UNARY_SOFTPLUS,     // log(1 + exp(x)), computed without overflow
    HG_UNARY_ERF,
    HG_UNARY_FLOOR,        // floor/ceil/round/trunc of integers: the integer itself
    HG_UNARY_CEIL,
    HG_UNARY_ROUND,        // half to even (numpy.round)
    HG_UNARY_TRUNC,
    HG_UNARY_LOGICAL_NOT,  // -> bool
    HG_UNARY_BITWISE_NOT,  // integers and bool
    HG_UNARY_ISNAN,        // -> bool
    HG_UNARY_ISINF,        // -> bool
    HG_UNARY_ISFINITE,     // -> bool
    HG_UNARY_COUNT
} hg_unary_op;

typedef enum hg_binary_op {
    HG_BINARY_ADD = 0,
    HG_BINARY_SUB,
    HG_BINARY_MUL,
    HG_BINARY_DIV,          // true division: integer inputs give f64 (numpy)
    HG_BINARY_FLOOR_DIVIDE, // numpy //: floor of the quotient (integers: x // 0 = 0)
    HG_BINARY_REMAINDER,    // numpy %: sign of the divisor (integers: x % 0 = 0)
    HG_BINARY_POW,          // integers: a negative exponent gives 0 (numpy raises); floats: C pow
    HG_BINARY_MINIMUM,      // NaN-propagating (numpy.minimum); -0.0 < +0.0 (IEEE 754-2019)
    HG_BINARY_MAXIMUM,
    HG_BINARY_EQ,           // comparisons -> bool
    HG_BINARY_NE,
    HG_BINARY_LT,
    HG_BINARY_LE,
    HG_BINARY_GT,
    HG_BINARY_GE,
    HG_BINARY_LOGICAL_AND,  // -> bool (nonzero = true)
    HG_BINARY_LOGICAL_OR,
    HG_BINARY_LOGICAL_XOR,
    HG_BINARY_BITWISE_AND,  // integers and bool
    HG_BINARY_BITWISE_OR,
    HG_BINARY_BITWISE_XOR,
    HG_BINARY_LEFT_SHIFT,   // integers; shift >= width gives 0 (numpy)
    HG_BINARY_RIGHT_SHIFT,  // arithmetic for signed
    HG_BINARY_COUNT
} hg_binary_op;

// Names ("exp", "floor_divide") and lookup by name.
HG_API const char* hg_unary_op_name(hg_unary_op op);
HG_API const char* hg_binary_op_name(hg_binary_op op);

// A scalar operand with numpy's "weak" promotion (NEP 50, like a Python number): it takes the
// tensor's dtype, except that a float scalar with an integer/bool tensor gives f64 and an
// integer scalar with a bool tensor gives i64.
typedef enum hg_scalar_kind { HG_SCALAR_BOOL = 0, HG_SCALAR_INT, HG_SCALAR_FLOAT, HG_SCALAR_KIND_COUNT } hg_scalar_kind;
typedef struct hg_scalar {
    hg_scalar_kind kind;
    int64_t i;               // BOOL (0/1) and INT
    double f;                // FLOAT
} hg_scalar;
static inline hg_scalar hg_scalar_f(double v) { hg_scalar s = {HG_SCALAR_FLOAT, 0, v}; return s; }
static inline hg_scalar hg_scalar_i(int64_t v) { hg_scalar s = {HG_SCALAR_INT, v, 0.0}; return s; }
static inline hg_scalar hg_scalar_b(int v) { hg_scalar s = {HG_SCALAR_BOOL, v ? 1 : 0, 0.0}; return s; }

HG_API hg_status hg_unary(hg_unary_op op, const hg_tensor* x, hg_tensor* out);
HG_API hg_status hg_binary(hg_binary_op op, const hg_tensor* a, const hg_tensor* b,
                           hg_tensor* out);
// a (op) s, or s (op) a when scalar_first is 1.
HG_API hg_status hg_binary_scalar(hg_binary_op op, const hg_tensor* a, hg_scalar s,
                                  int scalar_first, hg_tensor* out);
// cond ? a : b with broadcasting of all three (cond: any dtype, nonzero = true).
HG_API hg_status hg_where(const hg_tensor* cond, const hg_tensor* a, const hg_tensor* b,
                          hg_tensor* out);
// minimum(maximum(x, lo), hi) as numpy.clip; lo or hi may be NULL (no bound).
HG_API hg_status hg_clip(const hg_tensor* x, const hg_tensor* lo, const hg_tensor* hi,
                         hg_tensor* out);
HG_API hg_status hg_clip_scalar(const hg_tensor* x, hg_scalar lo, hg_scalar hi, hg_tensor* out);
// a*b + c; floats are rounded once (a fused multiply-add), integers wrap.
HG_API hg_status hg_fma(const hg_tensor* a, const hg_tensor* b, const hg_tensor* c,
                        hg_tensor* out);
// Conversion to dtype (cvt semantics, docs/isa.md: float->int truncates and saturates, NaN->0).
// With an existing out, out's dtype must equal dtype.
HG_API hg_status hg_cast(const hg_tensor* x, hg_dtype dtype, hg_tensor* out);

// Reductions over a set of axes. axes == NULL reduces over all axes (numpy axis=None); naxes
// = 0 with axes != NULL reduces over none. Negative axes count from the end; repeats refused.
// keepdims keeps reduced dims as size 1. Result dtypes as numpy: sum/prod of bool and signed
// ints -> i64, unsigned -> u64; mean/var/std of integers -> f64; f16/bf16 accumulate in f32.
// f32 sums accumulate in SIMD partial sums combined in f64 (relative error ~1e-7, not growing
// with n); f64 sums pairwise; var/std in two f64 passes. Empty reductions: sum 0,
// prod 1, mean/var/std NaN, logsumexp -inf; min/max/argmin/argmax of empty refused
// (HG_ERR_INVALID_ARGUMENT, as numpy raises). NaN propagates through min/max; argmin/argmax
// return the first NaN's index like numpy.
typedef enum hg_reduce_op {
    HG_REDUCE_SUM = 0,
    HG_REDUCE_MEAN,
    HG_REDUCE_PROD,
    HG_REDUCE_MIN,
    HG_REDUCE_MAX,
    HG_REDUCE_ARGMIN,      // -> i64; index into the flattened reduced axes (C order)
    HG_REDUCE_ARGMAX,
    HG_REDUCE_VAR,         // ddof 0 (hg_var for others)
    HG_REDUCE_STD,
    HG_REDUCE_LOGSUMEXP,   // stable (max-shifted)
    HG_REDUCE_ANY,         // -> bool
    HG_REDUCE_ALL,         // -> bool
    HG_REDUCE_COUNT
} hg_reduce_op;
HG_API const char* hg_reduce_op_name(hg_reduce_op op);
HG_API hg_status hg_reduce(hg_reduce_op op, const hg_tensor* x, int32_t naxes,
                           const int32_t* axes, int keepdims, hg_tensor* out);
// var/std with numpy's ddof (divisor n - ddof; n - ddof <= 0 gives NaN/inf as numpy).
HG_API hg_status hg_var(const hg_tensor* x, int32_t naxes, const int32_t* axes, int keepdims,
                        double ddof, hg_tensor* out);
HG_API hg_status hg_std(const hg_tensor* x, int32_t naxes, const int32_t* axes, int keepdims,
                        double ddof, hg_tensor* out);

// softmax / log_softmax along axis (floats only; stable for large magnitudes and -inf entries;
// a slice that is all -inf gives NaN, as torch; f32 softmax results below 2^-126 are 0).
HG_API hg_status hg_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out);
HG_API hg_status hg_log_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out);
// Normalization over the last `nnorm` dims (torch's normalized_shape = x's last nnorm sizes).
// weight/bias (shape = those dims) may be NULL. Statistics in f32 (f64 for f64 inputs).
HG_API hg_status hg_layer_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                               const hg_tensor* bias, double eps, hg_tensor* out);
HG_API hg_status hg_rms_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight,
                             double eps, hg_tensor* out);

// numpy.matmul: 1-D operands are promoted (and the added dim removed), leading dims broadcast.
// Floats and integers (integers accumulate in their own type, wrapping, as numpy).
HG_API hg_status hg_matmul(const hg_tensor* a, const hg_tensor* b, hg_tensor* out);
// BLAS gemm on 2-D tensors: c = alpha * op(a) @ op(b) + beta * c, op = transpose when trans_*
// is 1. c must exist (it is read when beta != 0; beta == 0 ignores its contents, NaN included)
// and must not overlap a or b. Float dtypes only (integers: use hg_matmul).
HG_API hg_status hg_gemm(int trans_a, int trans_b, double alpha, const hg_tensor* a,
                         const hg_tensor* b, double beta, const hg_tensor* c);
// y = a @ x with a 2-D (m, n) and x 1-D (n): out 1-D (m).
HG_API hg_status hg_matvec(const hg_tensor* a, const hg_tensor* x, hg_tensor* out);

// Losses (floats). reduction: NONE keeps the per-element (per-sample) loss.
typedef enum hg_reduction {
    HG_REDUCTION_NONE = 0, HG_REDUCTION_MEAN, HG_REDUCTION_SUM, HG_REDUCTION_COUNT
} hg_reduction;
HG_API hg_status hg_mse_loss(const hg_tensor* pred, const hg_tensor* target,
                             hg_reduction reduction, hg_tensor* out);
// logits (N, C) or (N, C, d1, ...) or (C); target either class indices (integer dtype, shape
// without the C dim; entries equal to ignore_index are skipped and not counted by MEAN) or class
// probabilities (same shape as logits, float). As torch.nn.functional.cross_entropy.
HG_API hg_status hg_cross_entropy(const hg_tensor* logits, const hg_tensor* target,
                                  int64_t ignore_index, hg_reduction reduction, hg_tensor* out);
// Probabilities in [0, 1] (outside: HG_ERR_INVALID_ARGUMENT naming the first bad value); the
// logs are clamped at -100 as torch does. weight (broadcast to the input) may be NULL.
HG_API hg_status hg_binary_cross_entropy(const hg_tensor* prob, const hg_tensor* target,
                                         const hg_tensor* weight, hg_reduction reduction,
                                         hg_tensor* out);
// Stable form max(x,0) - x*t + log1p(exp(-|x|)) (torch's pos_weight form); weight and
// pos_weight (each broadcast to the input) may be NULL.
HG_API hg_status hg_binary_cross_entropy_with_logits(const hg_tensor* logits,
                                                     const hg_tensor* target,
                                                     const hg_tensor* weight,
                                                     const hg_tensor* pos_weight,
                                                     hg_reduction reduction, hg_tensor* out);

// Data. These write into an existing out (no allocation: they have no input to take an
// executor from).
// An integer value must fit an integer dtype exactly (HG_ERR_OUT_OF_RANGE); a float value into
// an integer dtype converts with cvt rules.
HG_API hg_status hg_fill(const hg_tensor* out, hg_scalar value);
// out[i] = start + i * step over the elements in C order (computed in f64, then converted).
HG_API hg_status hg_arange(const hg_tensor* out, double start, double step);
// Counter-based random numbers (Philox-4x32-10): element i (C order of out) gets the numbers of
// counter (offset + i) under key seed, so results do not depend on threads or backend.
// uniform: [low, high); normal: Box-Muller, mean + std * N(0, 1). Float dtypes only.
HG_API hg_status hg_random_uniform(const hg_tensor* out, uint64_t seed, uint64_t offset,
                                   double low, double high);
HG_API hg_status hg_random_normal(const hg_tensor* out, uint64_t seed, uint64_t offset,
                                  double mean, double std);
// numpy.concatenate along axis (same dtype, equal other dims; n >= 1).
HG_API hg_status hg_concat(int32_t n, const hg_tensor* inputs, int32_t axis, hg_tensor* out);
// numpy.take along one axis / torch.index_select (index: integer 1-D; negative indices count
// from the end; out of range: HG_ERR_OUT_OF_RANGE naming it). Embedding lookup = axis 0.
HG_API hg_status hg_index_select(const hg_tensor* x, int32_t axis, const hg_tensor* index,
                                 hg_tensor* out);
// torch.gather: out[i][j][k] = x[index[i][j][k]][j][k] for axis 0 (index has x's ndim; out
// has index's shape; negative indices count from the end, as numpy.take_along_axis).
HG_API hg_status hg_gather(const hg_tensor* x, int32_t axis, const hg_tensor* index,
                           hg_tensor* out);

// The flat forms of the product documents: contiguous buffers, n elements from the start
// (buffers must hold at least n; outputs may alias inputs exactly). Same dtype for all buffers.
HG_API hg_status hg_vector_add(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_sub(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_mul(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_div(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_min(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_max(hg_buffer a, hg_buffer b, hg_buffer c, size_t n);
HG_API hg_status hg_vector_abs(hg_buffer a, hg_buffer c, size_t n);
HG_API hg_status hg_vector_neg(hg_buffer a, hg_buffer c, size_t n);
HG_API hg_status hg_vector_relu(hg_buffer a, hg_buffer c, size_t n);
HG_API hg_status hg_vector_clip(hg_buffer a, hg_buffer c, double lo, double hi, size_t n);
HG_API hg_status hg_scalar_add(hg_buffer a, hg_buffer c, double s, size_t n);
HG_API hg_status hg_scalar_mul(hg_buffer a, hg_buffer c, double s, size_t n);
HG_API hg_status hg_vector_sigmoid(hg_buffer in, hg_buffer out, size_t n);
HG_API hg_status hg_vector_tanh(hg_buffer in, hg_buffer out, size_t n);
HG_API hg_status hg_vector_gelu(hg_buffer in, hg_buffer out, size_t n);
HG_API hg_status hg_vector_softmax(hg_buffer in, hg_buffer out, size_t n);
// out[0] = reduction of in[0..n) (out holds >= 1 element of in's dtype; value also in *result
// when result != NULL, converted to double).
HG_API hg_status hg_reduce_sum(hg_buffer in, hg_buffer out, size_t n, double* result);
HG_API hg_status hg_reduce_min(hg_buffer in, hg_buffer out, size_t n, double* result);
HG_API hg_status hg_reduce_max(hg_buffer in, hg_buffer out, size_t n, double* result);
// Mean losses over n elements into out[0] (and *result).
HG_API hg_status hg_mse_loss_flat(hg_buffer pred, hg_buffer target, hg_buffer out, size_t n,
                                  double* result);
// pred: probabilities; -(1/n) sum t*log(p) (log clamped at -100).
HG_API hg_status hg_cross_entropy_loss_flat(hg_buffer pred, hg_buffer target, hg_buffer out,
                                            size_t n, double* result);
HG_API hg_status hg_binary_cross_entropy_loss_flat(hg_buffer pred, hg_buffer target,
                                                   hg_buffer out, size_t n, double* result);
// Row-major C[m x n] = A[m x k] . B[k x n] (argument order of the product documents).
HG_API hg_status hg_gemm_flat(hg_buffer a, hg_buffer b, hg_buffer c, size_t m, size_t n,
                              size_t k);
// y[m] = A[m x n] . x[n]
HG_API hg_status hg_matvec_flat(hg_buffer a, hg_buffer x, hg_buffer y, size_t m, size_t n);

// ---------------------------------------------------------------------------------------------
// Graphs and plans ("canonical form compilation"; docs/graph.md).
//
//     hg_graph g;  int32_t a, b, c, t, y;  hg_plan plan;
//     hg_graph_create(&g);
//     hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){n}, &a);   ... b, c
//     hg_graph_binary(g, HG_BINARY_MUL, a, b, &t);
//     hg_graph_binary(g, HG_BINARY_ADD, t, c, &t);
//     hg_graph_unary(g, HG_UNARY_RELU, t, &t);
//     hg_graph_binary_scalar(g, HG_BINARY_MUL, t, hg_scalar_f(0.5), 0, &y);
//     hg_graph_output(g, y);
//     hg_graph_compile(g, ex, &plan);                 // one fused ISA kernel
//     hg_plan_run(plan, 3, (hg_tensor[]){ta, tb, tc}, 1, (hg_tensor[]){ty});
//
// Nodes are int32 ids local to the graph. Building validates shapes and dtypes at once (same
// rules and messages as the eager ops). Passes, in order: canonicalize (rewrite rules, constant
// folding, CSE by hash-consing, DCE) -> fuse -> lower -> plan. HOLOGRAM_DUMP=passes prints the
// graph after each pass to stderr; HOLOGRAM_DISABLE_FUSION=1 turns fusion off.
// Thread safety: building one graph is not thread-safe; a compiled plan is immutable and may be
// run from several threads at once (each run uses its own intermediate memory).
// ---------------------------------------------------------------------------------------------
typedef struct hg_graph { uint64_t handle; } hg_graph;
typedef struct hg_plan { uint64_t handle; } hg_plan;

// Release with hg_graph_destroy.
HG_API hg_status hg_graph_create(hg_graph* out);
HG_API hg_status hg_graph_destroy(hg_graph g);
// An input bound at run time (in the order of creation).
HG_API hg_status hg_graph_input(hg_graph g, hg_dtype dtype, int32_t ndim, const int64_t* shape,
                                int32_t* out_node);
// A 0-d constant of dtype.
HG_API hg_status hg_graph_constant(hg_graph g, hg_dtype dtype, hg_scalar value,
                                   int32_t* out_node);
HG_API hg_status hg_graph_unary(hg_graph g, hg_unary_op op, int32_t x, int32_t* out_node);
HG_API hg_status hg_graph_binary(hg_graph g, hg_binary_op op, int32_t a, int32_t b,
                                 int32_t* out_node);
HG_API hg_status hg_graph_binary_scalar(hg_graph g, hg_binary_op op, int32_t a, hg_scalar s,
                                        int scalar_first, int32_t* out_node);
HG_API hg_status hg_graph_where(hg_graph g, int32_t cond, int32_t a, int32_t b,
                                int32_t* out_node);
HG_API hg_status hg_graph_fma(hg_graph g, int32_t a, int32_t b, int32_t c, int32_t* out_node);
HG_API hg_status hg_graph_cast(hg_graph g, int32_t x, hg_dtype dtype, int32_t* out_node);
HG_API hg_status hg_graph_expand(hg_graph g, int32_t x, int32_t ndim, const int64_t* shape,
                                 int32_t* out_node);
HG_API hg_status hg_graph_reshape(hg_graph g, int32_t x, int32_t ndim, const int64_t* shape,
                                  int32_t* out_node);
HG_API hg_status hg_graph_reduce(hg_graph g, hg_reduce_op op, int32_t x, int32_t naxes,
                                 const int32_t* axes, int keepdims, int32_t* out_node);
HG_API hg_status hg_graph_softmax(hg_graph g, int32_t x, int32_t axis, int log, int32_t* out_node);
HG_API hg_status hg_graph_matmul(hg_graph g, int32_t a, int32_t b, int32_t* out_node);
// Marks a node as an output (in the order of the calls).
HG_API hg_status hg_graph_output(hg_graph g, int32_t node);
// Node facts (for tracers): dtype, ndim and shape (shape needs HG_MAX_DIMS entries).
HG_API hg_status hg_graph_node_info(hg_graph g, int32_t node, hg_dtype* dtype, int32_t* ndim,
                                    int64_t* shape);
// Text of the graph (one node per line); release with hg_free.
HG_API hg_status hg_graph_print(hg_graph g, char** out_text);

// Runs the passes and compiles the kernels for ex. The plan does not refer to g afterwards.
// Release with hg_plan_destroy (or with the executor).
HG_API hg_status hg_graph_compile(hg_graph g, hg_executor ex, hg_plan* out);
HG_API hg_status hg_plan_destroy(hg_plan plan);
// Runs the plan: inputs in creation order, outputs in hg_graph_output order; shapes and dtypes
// must match the graph's exactly (any strides). Outputs follow the ops' out rules, except that
// they must exist (no allocation).
HG_API hg_status hg_plan_run(hg_plan plan, int32_t ninputs, const hg_tensor* inputs,
                             int32_t noutputs, const hg_tensor* outputs);
typedef struct hg_plan_info {
    int32_t kernels;          // ISA kernels launched per run
    int32_t library_calls;    // library calls (GEMM, reductions, ...) per run
    int32_t nodes;            // nodes after canonicalization
    int32_t rewrites;         // rewrite rules applied
    uint64_t peak_bytes;      // peak intermediate memory of one run
} hg_plan_info;
HG_API hg_status hg_plan_info_get(hg_plan plan, hg_plan_info* out);
// Text of the plan (kernels and calls; for HOLOGRAM_DUMP and debugging); release with hg_free.
HG_API hg_status hg_plan_print(hg_plan plan, char** out_text);

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

#ifdef __cplusplus
}
#endif
#endif  // HOLOGRAM_H
