// Instruction-test harness: builds a one-instruction kernel with the public builder API
// (each lane i = %gid.x < n loads its operands from input buffers at i, runs the instruction,
// stores the result to out[i]), launches it on a CPU executor and compares every lane against
// the independent reference in instr_ref.h. Operands may also be immediates or scalar
// parameters (the same value for every lane), which the backends execute on separate paths.
#ifndef HG_INSTR_HARNESS_H
#define HG_INSTR_HARNESS_H
#include <stddef.h>
#include <stdint.h>
#include "hg_test.h"
#include "instr_ref.h"

typedef enum ih_mode { IH_REG = 0, IH_IMM = 1, IH_PARAM = 2 } ih_mode;

// One instruction under test. ih_spec fills the operand types from the opcode.
typedef struct ih_kspec {
    hg_opcode op;
    hg_dtype type;        // instruction type (cvt: destination type)
    uint8_t aux;          // cmp condition / cvt source type
    int nsrc;             // value operands used (1..3)
    hg_dtype src_t[3];
    hg_dtype dst_t;
    ih_mode mode[3];      // how each operand is supplied
    uint64_t uni[3];      // IMM: immediate bits; PARAM: scalar argument bits
    int sparse;           // 1: launch 2n lanes, odd lanes idle (every op runs under a partial
                          // lane mask, which backends execute on a separate blend path)
} ih_kspec;

ih_kspec ih_spec(hg_opcode op, hg_dtype type, uint8_t aux);
// "add.f32", "cmp.lt.i8", "cvt.f16.u64" (static buffer).
const char* ih_spec_name(const ih_kspec* ks);

// The shared CPU executor (created on first use; NULL handle if that failed, reported).
hg_executor ih_executor(void);
void ih_shutdown(void);

// Runs the instruction for n lanes (split into launches of at most IH_CHUNK lanes, block 256).
// in[k] holds n bit patterns for each IH_REG operand; out receives n bit patterns.
// Returns HG_OK or the failing status (already reported as a failed check).
#define IH_CHUNK 65536u
hg_status ih_run(const ih_kspec* ks, size_t n, const uint64_t* const in[3], uint64_t* out);

// Growable vector of bit patterns.
typedef struct ih_vec { uint64_t* v; size_t n, cap; } ih_vec;
void ih_push(ih_vec* v, uint64_t x);
void ih_push_unique(ih_vec* v, uint64_t x);
void ih_vec_free(ih_vec* v);

// Special values of a type (docs: ±0, ±inf, NaNs, subnormal and normal limits, MIN/MAX...).
void ih_specials(hg_dtype t, ih_vec* out);
// Random values: uniform bit patterns or moderate magnitudes (half each).
uint64_t ih_rand_value(hg_dtype t, uint64_t* rng);
uint64_t ih_rand_moderate(hg_dtype t, uint64_t* rng);
// Random double in [lo, hi).
double ih_rand_range(uint64_t* rng, double lo, double hi);

// Operand tuples: the cartesian product of the specials of each operand (sampled when it
// would exceed max_combo), then nrand random tuples.
typedef struct ih_cases { ih_vec in[3]; size_t n; } ih_cases;
void ih_gen_cases(const ih_kspec* ks, size_t max_combo, size_t nrand, uint64_t* rng,
                  ih_cases* out);
void ih_cases_free(ih_cases* c);

// Comparison modes.
typedef enum ih_cmpmode {
    IH_VALUE = 0,   // bit-exact, but any NaN matches a NaN reference
    IH_BITS = 1,    // bit-exact including NaN payloads
} ih_cmpmode;

typedef uint64_t (*ih_ref_fn)(const ih_kspec* ks, const uint64_t src[3]);

// Per-(op, type) tally printed by ih_stat_print.
typedef struct ih_stat {
    char label[64];
    size_t cases[3];      // by mode (reg counts dense and sparse runs)
    size_t mismatches;
    double max_ulp;       // -1 when not measured
} ih_stat;
void ih_stat_init(ih_stat* st, const char* label);
void ih_stat_print(const ih_stat* st);

// Runs the cases with every operand in the modes of ks (operands in IH_IMM / IH_PARAM mode
// take ks->uni) and compares with ref. Mismatches count as failed checks (the first few per
// stat printed with inputs, got and expected); one passed check per clean call.
void ih_check(const ih_kspec* ks, const ih_cases* c, ih_ref_fn ref, ih_cmpmode mode,
              ih_stat* st);
// Runs the register form on the cases (dense and sparse), then, for each operand position, a
// few of its special values as an immediate and as a scalar parameter against a subset of the
// cases' other operands.
void ih_check_all_modes(const ih_kspec* ks, const ih_cases* c, ih_ref_fn ref, ih_cmpmode mode,
                        ih_stat* st, uint64_t* rng);

// Reference adapters for ih_check.
uint64_t ih_ref_arith(const ih_kspec* ks, const uint64_t src[3]);
uint64_t ih_ref_cmp(const ih_kspec* ks, const uint64_t src[3]);
uint64_t ih_ref_sel(const ih_kspec* ks, const uint64_t src[3]);
uint64_t ih_ref_cvt(const ih_kspec* ks, const uint64_t src[3]);
uint64_t ih_ref_round(const ih_kspec* ks, const uint64_t src[3]);

// Packs/unpacks bit patterns to/from little-endian elements of type t.
void ih_pack(void* dst, const uint64_t* src, size_t n, hg_dtype t);
void ih_unpack(uint64_t* dst, const void* src, size_t n, hg_dtype t);

// Kernel builder with a sticky error for hand-written test kernels: the first failing call is
// reported as a failed check, later ones are skipped.
typedef struct ih_kb { hg_program p; int err; } ih_kb;
void ih_kb_do(ih_kb* kb, hg_status s, const char* what);
#define IH_K(kb, expr) ih_kb_do((kb), (kb)->err ? HG_OK : (expr), #expr)
void ih_kb_begin(ih_kb* kb, const char* name);
uint32_t ih_kb_reg(ih_kb* kb, const char* name, hg_dtype t);
uint32_t ih_kb_buf(ih_kb* kb, const char* name, hg_dtype t, int is_const);
uint32_t ih_kb_scalar(ih_kb* kb, const char* name, hg_dtype t);
uint32_t ih_kb_shared(ih_kb* kb, const char* name, hg_dtype t, uint32_t count);
// atom.SPACE.OP.T dst, slot[idx], v [, v2]  (cas: v = compare, v2 = new value)
hg_status ih_emit_atom(hg_program p, hg_atomic_op aop, hg_space sp, hg_dtype t, uint32_t slot,
                       hg_operand dst, hg_operand idx, hg_operand v, hg_operand v2);
// Launches kb's program on the shared executor (a failure is a failed check).
hg_status ih_kb_launch(ih_kb* kb, hg_launch_config cfg, const hg_arg* args, size_t nargs);
void ih_kb_end(ih_kb* kb);
// Buffers on the shared executor from / to bit patterns (bits may be NULL: zeros).
hg_buffer ih_make_buf(hg_dtype t, size_t n, const uint64_t* bits);
void ih_read_buf(hg_buffer b, hg_dtype t, size_t n, uint64_t* bits);

// Wall-clock seconds (for the timing line).
double ih_now(void);

#endif
