// Internal (CPU backend): the table of lane-array kernels. Every kernel works on dense arrays of
// n lanes in the register storage layout (see cpu_storage_size): bool as uint8 0/1, integers
// natively, f16/bf16 as float values already rounded to the type, f32 float, f64 double.
// The files under simd/ are compiled twice (portable and AVX2+FMA), the kernels_*.c ones also
// for AVX-512; each fills the part of the table it owns, and cpu_kernels.c picks one set at
// startup.
#ifndef HG_BACKENDS_CPU_KERNELS_H
#define HG_BACKENDS_CPU_KERNELS_H
#include <stddef.h>
#include <stdint.h>
#include "hologram.h"

// The f32 binary ops that fuse in pairs (add sub mul min max), see pair_f32 below.
#define HG_CPU_PAIR_OPS 5
static inline int hg_cpu_pair_index(unsigned op) {
    switch (op) {
    case HG_OP_ADD: return 0;
    case HG_OP_SUB: return 1;
    case HG_OP_MUL: return 2;
    case HG_OP_MIN: return 3;
    case HG_OP_MAX: return 4;
    default: return -1;
    }
}

// The f32 ops a register chain takes (see chain_f32 below): every one whose f32 kernel the
// chain reproduces bit for bit.
static inline int hg_cpu_chain_op(unsigned op) {
    switch (op) {
    case HG_OP_ADD: case HG_OP_SUB: case HG_OP_MUL: case HG_OP_DIV: case HG_OP_NEG:
    case HG_OP_ABS: case HG_OP_EXP:
        return 1;
    default:
        return 0;
    }
}
#define HG_CPU_CHAIN_MAX 16    // steps of a chain (its first operand, then one per op)
enum {
    HG_CPU_CHAIN_K = 1,        // the step's operand is k in every lane (unary ops: unused)
    HG_CPU_CHAIN_SWAP = 2,     // the chain's value is the op's second operand: v = op(x, v)
    HG_CPU_CHAIN_SELF = 4,     // both operands are the chain's value: v = op(v, v)
};
typedef struct hg_cpu_chain_step {
    uint8_t op;                // HG_OP_*: HG_OP_MOV for the first step, v = its operand
    uint8_t form;              // HG_CPU_CHAIN_* bits
    float k;
    const float* x;            // the operand's lane array (lane 0 at x)
    float* out;                // non-NULL: the value after this step is also stored there
} hg_cpu_chain_step;
// d[i] = the chain's value at lane i after steps s[0..ns-1].
typedef void (*hg_cpu_chainfn)(float* d, const hg_cpu_chain_step* s, unsigned ns, size_t n);

// d = f(a, b, c) lane by lane. d may be the same array as a source (never a partial overlap).
typedef void (*hg_cpu_kfn)(void* d, const void* a, const void* b, const void* c, size_t n);
// Converts n elements between memory layout and register layout.
typedef void (*hg_cpu_convfn)(void* dst, const void* src, size_t n);
// d[i] = m[i] ? t[i] : d[i]
typedef void (*hg_cpu_blendfn)(void* d, const void* t, const uint8_t* m, size_t n);

typedef struct hg_cpu_kernels {
    const char* name;                                  // "avx512" / "avx2" / "generic"
    hg_cpu_kfn op[HG_OPCODE_COUNT][HG_DTYPE_COUNT];    // arithmetic, math, sel, mov
    // Variants of op for a second operand that is the same in every lane (reads b[0] only);
    // NULL where there is none.
    hg_cpu_kfn opk[HG_OPCODE_COUNT][HG_DTYPE_COUNT];
    hg_cpu_kfn cmp[HG_CMP_COUNT][HG_DTYPE_COUNT];      // d is bool
    hg_cpu_kfn cvt[HG_DTYPE_COUNT][HG_DTYPE_COUNT];    // [dst][src]
    hg_cpu_convfn load[HG_DTYPE_COUNT];                // memory elements -> register lanes
    hg_cpu_convfn store[HG_DTYPE_COUNT];               // register lanes -> memory elements
    hg_cpu_blendfn blend[4];                           // by log2 of the storage size
    // Fused pairs of f32 binary ops for strip-mined runs: d = op2(op1(a, b), c), rounded after
    // each op exactly as the two instructions. Indexed [op1][op2][variant] by
    // hg_cpu_pair_index; variant bit 0: b is the same in every lane (reads b[0]), bit 1: c is.
    hg_cpu_kfn pair_f32[HG_CPU_PAIR_OPS][HG_CPU_PAIR_OPS][4];
    // Chains of f32 ops (hg_cpu_chain_op) in vector registers, rounded after each op exactly
    // as the instructions one after the other (simd/kernels_chain.c); NULL: plans of this set
    // run such ops one by one.
    hg_cpu_chainfn chain_f32;
} hg_cpu_kernels;

// Bytes per lane of a register of the type (f16/bf16 live as float).
static inline unsigned hg_cpu_storage_size(int t) {
    switch (t) {
    case HG_DTYPE_BOOL: case HG_DTYPE_I8: case HG_DTYPE_U8: return 1;
    case HG_DTYPE_I16: case HG_DTYPE_U16: return 2;
    case HG_DTYPE_I64: case HG_DTYPE_U64: case HG_DTYPE_F64: return 8;
    default: return 4;
    }
}
static inline unsigned hg_cpu_storage_log2(int t) {
    unsigned s = hg_cpu_storage_size(t);
    return s == 1 ? 0u : s == 2 ? 1u : s == 4 ? 2u : 3u;
}

// The selected kernel set (AVX-512 when the CPU has AVX-512F/DQ/BW/VL, else AVX2+FMA when it has
// that, else portable). Thread-safe.
const hg_cpu_kernels* hg_cpu_kernels_get(void);
// A specific set by name ("generic", "avx2", "avx512"); NULL if not built or not supported by
// this CPU. Tests use it to compare the sets bit for bit.
const hg_cpu_kernels* hg_cpu_kernels_named(const char* name);

#define HG_CAT2(a, b) a##b
#define HG_CAT(a, b) HG_CAT2(a, b)
#ifdef HG_SIMD_SUFFIX
#define HG_SIMD_NAME(x) HG_CAT(x, HG_SIMD_SUFFIX)
#endif

// The build compiles simd/*.c a second time with -mavx2 -mfma -mf16c on x86-64 and then
// defines HG_HAVE_AVX2_KERNELS for the other objects.
#if defined(HG_HAVE_AVX2_KERNELS)
#define HG_CPU_HAS_AVX2_SET 1
#endif
// ... and the kernels_*.c files a third time with AVX-512F/DQ/BW/VL (HG_HAVE_AVX512_KERNELS).
#if defined(HG_HAVE_AVX512_KERNELS)
#define HG_CPU_HAS_AVX512_SET 1
#endif

// Fill functions exported by the simd/ files, one per instruction set.
#define HG_CPU_DECLARE_FILLERS(sfx)                           \
    void hg_cpu_fill_arith_##sfx(hg_cpu_kernels* k);          \
    void hg_cpu_fill_math_##sfx(hg_cpu_kernels* k);           \
    void hg_cpu_fill_cvt_##sfx(hg_cpu_kernels* k);            \
    void hg_cpu_fill_gelu_##sfx(hg_cpu_kernels* k);           \
    void hg_cpu_fill_chain_##sfx(hg_cpu_kernels* k);
HG_CPU_DECLARE_FILLERS(generic)
HG_CPU_DECLARE_FILLERS(avx2)
HG_CPU_DECLARE_FILLERS(avx512)

#endif
