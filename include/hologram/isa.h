// hologram/isa.h — part of libhologram's public header: Atlas ISA programs (builder, text,
// binary), compiled kernels and launches.
// Include <hologram.h>, which includes every part; the conventions at its top (errors,
// handles, ownership, thread safety) apply here.
#ifndef HOLOGRAM_ISA_H
#define HOLOGRAM_ISA_H

#include "hologram/core.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    HG_OP_GELU_ERF,    // x * Phi(x) = x erfc(-x / sqrt 2) / 2 (erf-form GELU; ISA 1.2)
    HG_OP_SHFL,        // d = a of another lane of the warp (aux: hg_shfl_mode, src[1]: u32 lane
                       // operand); block-uniform control flow only, as bar (ISA 1.3)
    HG_OP_LDV,         // d..d+w-1 = space[mem][a .. a+w-1] (aux: hg_space | log2(w) << 4; ISA 1.3)
    HG_OP_STV,         // space[mem][a .. a+w-1] = b..b+w-1 (b: a register; same aux; ISA 1.3)
    HG_OPCODE_COUNT
} hg_opcode;

typedef enum hg_cmp {
    HG_CMP_EQ = 0, HG_CMP_NE, HG_CMP_LT, HG_CMP_LE, HG_CMP_GT, HG_CMP_GE, HG_CMP_COUNT
} hg_cmp;

typedef enum hg_space { HG_SPACE_GLOBAL = 0, HG_SPACE_SHARED = 1, HG_SPACE_COUNT } hg_space;

// shfl modes: the lane whose value lane l of a warp reads, with b = src[1] & 31 (docs/isa.md).
typedef enum hg_shfl_mode {
    HG_SHFL_BFLY = 0,  // l ^ b
    HG_SHFL_DOWN,      // l + b
    HG_SHFL_UP,        // l - b
    HG_SHFL_IDX,       // b
    HG_SHFL_COUNT
} hg_shfl_mode;

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
//   ldv / stv: as ld / st for w = 2, 4, 8 or 16 consecutive elements (w * element size <= 16
//         bytes) held in the w consecutive registers from dst (ldv) / src[1] (stv), all of the
//         instruction's type; aux = space | log2(w) << 4 (hg_vec_aux)
//   atom: dst = old value (or NONE), mem = slot, src[0] = index, src[1] = value
//         (cas: src[1] = compare, src[2] = new value)
//   cmp:  dst = bool register, src[0..1]
//   sel:  dst, src[0] = bool condition, src[1] = if true, src[2] = if false
//   cvt:  type = destination dtype, aux = source dtype
//   shfl: dst, src[0] = value, src[1] = lane operand (u32), aux = hg_shfl_mode
//   if / break: src[0] = bool condition (break: optional)
// A memory slot is a buffer parameter index (space global) or a shared array index (shared).
typedef struct hg_instr {
    uint16_t op;             // hg_opcode
    uint8_t type;            // hg_dtype the operation works in
    uint8_t aux;             // hg_cmp / hg_space / source dtype / hg_atomic_op | (space << 4) /
                             // hg_shfl_mode for shfl; space | (log2(width) << 4) for ldv and stv
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
// shfl.MODE.type dst, a, lane: dst = a of the lane of the warp that mode and lane (u32) name.
HG_API hg_status hg_emit_shfl(hg_program prog, hg_shfl_mode mode, hg_dtype type, uint32_t dst,
                              hg_operand a, hg_operand lane);
// Vector load / store (ISA 1.3): `width` (2, 4, 8 or 16; width * element size <= 16 bytes)
// consecutive elements from `index` into registers dst .. dst+width-1 / from registers
// src .. src+width-1, which must be declared consecutively with the type.
HG_API hg_status hg_emit_load_vector(hg_program prog, hg_space space, hg_dtype type,
                                     uint32_t width, uint32_t dst, uint32_t slot,
                                     hg_operand index);
HG_API hg_status hg_emit_store_vector(hg_program prog, hg_space space, hg_dtype type,
                                      uint32_t width, uint32_t slot, hg_operand index,
                                      uint32_t src);
// aux of ldv / stv for a space and a width (a power of two).
static inline uint8_t hg_vec_aux(hg_space space, uint32_t width) {
    uint8_t lg = 0;
    while (lg < 7 && (1u << lg) < width) lg++;
    return (uint8_t)((unsigned)space | (unsigned)lg << 4);
}

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

// Launch bounds (HG_ERR_LAUNCH_CONFIG beyond them): lanes per block (x*y*z), and lanes per
// launch in all (grid x*y*z times block x*y*z, 2^40: about 10^12, minutes of work on a GPU and
// hours on a CPU; a larger job is split into several launches). Besides, grid.d * block.d must
// fit %gid.d (u32) in each dimension d.
#define HG_MAX_BLOCK_LANES 1024u
#define HG_MAX_LAUNCH_LANES (UINT64_C(1) << 40)

typedef struct hg_launch_config {
    hg_dim3 grid;            // blocks per dimension (each >= 1)
    hg_dim3 block;           // lanes per block (each >= 1; x*y*z <= HG_MAX_BLOCK_LANES)
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
// Waits for launches of the kernel still queued (CUDA) before it releases the code.
HG_API hg_status hg_kernel_destroy(hg_kernel k);
// Runs the kernel (CPU: to completion; CUDA: queued on the executor's stream, see
// hg_executor_set_stream). Arguments are checked against the parameters (count, kind, dtype)
// before it returns; every memory access is checked against the bound range: an out-of-bounds
// access stops the lane with HG_ERR_OUT_OF_BOUNDS naming the lane and the instruction, and
// nothing is written out of bounds (in-bounds stores of other lanes may have happened). The CPU
// returns that error from the launch; CUDA from the next synchronizing call (a host read,
// hg_executor_synchronize, hg_event_synchronize), naming the launch (docs/cuda.md).
HG_API hg_status hg_kernel_launch(hg_kernel k, const hg_launch_config* cfg, const hg_arg* args,
                                  size_t nargs);
// Compiles (cached per executor by content hash) and launches in one call.
HG_API hg_status hg_launch(hg_executor ex, hg_program prog, const hg_launch_config* cfg,
                           const hg_arg* args, size_t nargs);

#ifdef __cplusplus
}
#endif
#endif  // HOLOGRAM_ISA_H
