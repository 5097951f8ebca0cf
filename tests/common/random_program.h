// Random Atlas ISA programs for round-trip and fuzz-style tests.
//
// hg_test_random_program(seed) builds (deterministically from seed) a program that follows the
// validator's rules as docs/isa.md §5/§7/§8 state them: operand types match the opcode table's
// roles, destinations are registers, memory slots have the instruction's type and are not const
// where written, control flow is balanced (if/else/endif, loop/endloop, break only in loops,
// nesting <= 4), bar and shfl only at the top level before any exit, unique non-reserved names, at
// most one unsized shared array. Every loop ends with an unconditional break, so programs
// terminate, but memory indices are random: the programs are meant for the text/binary/validator
// paths, not for running with meaningful results.
#ifndef HG_TEST_RANDOM_PROGRAM_H
#define HG_TEST_RANDOM_PROGRAM_H
#include <stdint.h>
#include "isa/program.h"

// A new program (release with hg_prog_free); NULL only when out of memory.
hg_prog* hg_test_random_program(uint64_t seed);

// Random canonical immediate bits of a dtype, biased towards edge values (0, -0.0, inf, NaN
// payloads, subnormals, integer min/max).
uint64_t hg_test_random_imm(uint64_t* rng, int dtype);

#endif
