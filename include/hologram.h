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
#define HG_BACKEND_API_VERSION 1
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
// Wraps caller memory without copying (CPU executors only; ptr must be aligned to the element
// size and stay valid until hg_buffer_destroy). The library never frees it.
HG_API hg_status hg_buffer_wrap(hg_executor ex, hg_dtype dtype, void* ptr, size_t count,
                                hg_buffer* out);
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
