// Internal to the validator (validate.c, validate_uniform.c): the structure facts the first pass
// computes and the block-uniformity analysis (docs/isa.md §7) that uses them.
#ifndef HG_ISA_VALIDATE_INTERNAL_H
#define HG_ISA_VALIDATE_INTERNAL_H
#include "base/error.h"
#include "isa/program.h"

#define HG_VNONE UINT32_MAX

// Control-flow structure of a program that passed the per-instruction and nesting checks.
typedef struct hg_vstruct {
    uint32_t* link;      // if -> its endif, loop -> its endloop, else -> its if; else HG_VNONE
    uint32_t* loop_of;   // innermost loop enclosing instruction i (for a loop: the outer one)
} hg_vstruct;

// Rejects a `bar` that is not provably in block-uniform control flow (HG_ERR_INVALID_PROGRAM),
// or returns HG_OK. Needs a program that passed every other check.
hg_status hg_validate_uniformity(const hg_prog* p, const hg_vstruct* s);

// Sets HG_ERR_INVALID_PROGRAM with "kernel 'K', instruction N (`text`): <problem>".
hg_status hg_validate_fail(const hg_prog* p, uint32_t i, const char* fmt, ...) HG_PRINTF(3, 4);

#endif
