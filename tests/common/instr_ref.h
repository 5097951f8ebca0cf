// Independent scalar reference of the Atlas ISA semantics (docs/isa.md §1, §5, §6) for the
// instruction tests. Values travel as raw bit patterns in a uint64_t (zero-extended); nothing
// here calls the library, so a bug in the library's converters or backends cannot hide in the
// reference. f16/bf16/f32 rounding is done by our own round-to-nearest-even encoder.
#ifndef HG_INSTR_REF_H
#define HG_INSTR_REF_H
#include <stdint.h>
#include "hologram.h"

// ---- dtype facts -------------------------------------------------------------------------
int ir_size(hg_dtype t);                 // bytes
int ir_width(hg_dtype t);                // bits (bool: 8)
int ir_is_float(hg_dtype t);
int ir_is_sint(hg_dtype t);
int ir_is_uint(hg_dtype t);
static inline int ir_is_int(hg_dtype t) { return ir_is_sint(t) || ir_is_uint(t); }
uint64_t ir_mask(hg_dtype t);            // all ones of the type's width
int64_t ir_sext(uint64_t bits, hg_dtype t);  // signed value (sign-extended; unsigned: as is)
const char* ir_name(hg_dtype t);         // our own names, not the library's

// ---- float formats -------------------------------------------------------------------------
int ir_mant_bits(hg_dtype t);            // stored mantissa bits: 10 7 23 52
int ir_exp_bits(hg_dtype t);             // 5 8 8 11
int ir_is_nan(uint64_t bits, hg_dtype t);
int ir_is_inf(uint64_t bits, hg_dtype t);
int ir_is_zero(uint64_t bits, hg_dtype t);
uint64_t ir_sign_bit(hg_dtype t);
// Exact value of a float bit pattern (NaN gives a NaN of the same sign).
double ir_to_double(uint64_t bits, hg_dtype t);
// Round-to-nearest-even encoding of x in a float type; overflow gives inf, NaN a quiet NaN.
uint64_t ir_from_double(double x, hg_dtype t);
// Exact round-to-nearest-even of the integer (neg ? -mag : mag) to a float type.
uint64_t ir_int_to_float(uint64_t mag, int neg, hg_dtype t);
// Largest finite value, smallest normal, smallest subnormal (as doubles).
double ir_max_finite(hg_dtype t);
double ir_min_normal(hg_dtype t);
double ir_min_subnormal(hg_dtype t);
uint64_t ir_bits_f32(float f);
float ir_f32_of(uint64_t bits);
uint64_t ir_bits_f64(double d);
double ir_f64_of(uint64_t bits);

// ---- instruction semantics ---------------------------------------------------------------
// d = op(a, b, c) for mov add sub mul div rem min max abs neg fma and or xor not shl shr,
// in type t (ints and bool: wrap / logical; floats: IEEE, f16/bf16 computed in f32).
uint64_t ir_arith(hg_opcode op, hg_dtype t, uint64_t a, uint64_t b, uint64_t c);
// bool result of cmp.cond.t
uint64_t ir_cmp(hg_cmp cond, hg_dtype t, uint64_t a, uint64_t b);
// cvt.dst.src
uint64_t ir_cvt(hg_dtype dst, hg_dtype src, uint64_t a);
// floor ceil round trunc sqrt (exactly rounded) on float type t.
uint64_t ir_round_op(hg_opcode op, hg_dtype t, uint64_t a);
// Exact (long double) value of a transcendental op (also rsqrt) at the exactly widened input.
long double ir_math_exact(hg_opcode op, long double x);
// Error of `got` against the exact value in ULPs of type t (ULP of the binade of `exact`,
// at least the smallest subnormal's); an inf `got` against a finite exact counts as the
// value 2^(emax+1). Returns 0 when both are the same inf; 1e30 for a NaN/inf mismatch.
double ir_ulp_error(uint64_t got, long double exact, hg_dtype t);

// Bit-exact comparison where any NaN matches any NaN (payloads may differ).
int ir_same_value(uint64_t got, uint64_t want, hg_dtype t);

const char* ir_op_name(hg_opcode op);
const char* ir_cmp_name(hg_cmp c);
// Prints a value of type t into buf (bits and decimal) for failure messages.
const char* ir_fmt(char* buf, size_t len, uint64_t bits, hg_dtype t);

#endif
