// Internal: the one idiom the library builds generated kernels with (the elementwise
// emitter, the op families' device kernels). A thin layer over hg_prog: the first failure is
// kept in err and every later call is a no-op returning a dummy value, so generator code reads
// straight through and checks once at the end (hg_kb_finish).
#ifndef HG_ISA_BUILDER_H
#define HG_ISA_BUILDER_H
#include <stdint.h>
#include "hologram.h"
#include "isa/program.h"

typedef struct hg_kb {
    hg_prog* p;
    hg_status err;
} hg_kb;

// A builder on a new program named name (check err), or on a caller's program.
hg_kb hg_kb_new(const char* name);
static inline hg_kb hg_kb_on(hg_prog* p) { hg_kb b = {p, HG_OK}; return b; }
// The program (the caller frees it), or the first error (the program is then freed).
hg_status hg_kb_finish(hg_kb* b, hg_prog** out);

// Declarations. Names are identifiers, unique per kind in the program.
uint32_t hg_kb_buffer(hg_kb* b, const char* name, hg_dtype t, int is_const);  // memory slot
hg_operand hg_kb_scalar(hg_kb* b, const char* name, hg_dtype t);             // hg_param(i)
uint32_t hg_kb_shared(hg_kb* b, const char* name, hg_dtype t, uint32_t count);
uint32_t hg_kb_reg(hg_kb* b, const char* name, hg_dtype t);
// A register named ew_t<n> (n = the register count), for values without a name of their own.
uint32_t hg_kb_new_reg(hg_kb* b, hg_dtype t);

// An immediate of dtype t with value v (v exactly representable in t; integers truncated to
// t's width).
hg_operand hg_kb_imm(hg_dtype t, double v);

// Instructions into register dst.
void hg_kb_set(hg_kb* b, hg_opcode op, hg_dtype t, uint32_t dst, hg_operand a, hg_operand x,
               hg_operand c);
void hg_kb_mov(hg_kb* b, hg_dtype t, uint32_t dst, hg_operand a);
void hg_kb_set_cmp(hg_kb* b, hg_cmp cc, hg_dtype t, uint32_t dst, hg_operand a, hg_operand x);
// cvt.to.from, or a mov when the dtypes are equal.
void hg_kb_set_cvt(hg_kb* b, hg_dtype to, hg_dtype from, uint32_t dst, hg_operand a);
void hg_kb_ld(hg_kb* b, hg_space sp, hg_dtype t, uint32_t dst, uint32_t slot, hg_operand idx);
void hg_kb_st(hg_kb* b, hg_space sp, hg_dtype t, uint32_t slot, hg_operand idx, hg_operand v);
// shfl.mode.t dst, a, lane (docs/isa.md: block-uniform control flow only).
void hg_kb_shfl(hg_kb* b, hg_shfl_mode mode, hg_dtype t, uint32_t dst, hg_operand a,
                hg_operand lane);
// ldv / stv of width elements into / from the registers first .. first+width-1.
void hg_kb_ldv(hg_kb* b, hg_space sp, hg_dtype t, uint32_t width, uint32_t first, uint32_t slot,
               hg_operand idx);
void hg_kb_stv(hg_kb* b, hg_space sp, hg_dtype t, uint32_t width, uint32_t slot, hg_operand idx,
               uint32_t first);
// atom.sp.op.t _, slot[idx], v (the old value discarded; not cas).
void hg_kb_atom(hg_kb* b, hg_space sp, hg_atomic_op op, hg_dtype t, uint32_t slot, hg_operand idx,
                hg_operand v);

// Instructions into a new register (hg_kb_new_reg), returned as an operand.
hg_operand hg_kb_op1(hg_kb* b, hg_opcode op, hg_dtype t, hg_operand a);
hg_operand hg_kb_op2(hg_kb* b, hg_opcode op, hg_dtype t, hg_operand a, hg_operand x);
hg_operand hg_kb_op3(hg_kb* b, hg_opcode op, hg_dtype t, hg_operand a, hg_operand x,
                     hg_operand c);
hg_operand hg_kb_cmp(hg_kb* b, hg_cmp cc, hg_dtype t, hg_operand a, hg_operand x);
hg_operand hg_kb_sel(hg_kb* b, hg_dtype t, hg_operand p, hg_operand a, hg_operand x);
hg_operand hg_kb_cvt(hg_kb* b, hg_dtype to, hg_dtype from, hg_operand a);  // a when equal

// Control flow and barriers (cond: a bool operand, or hg_none() where the op takes none).
void hg_kb_ctl(hg_kb* b, hg_opcode op, hg_operand cond);
static inline void hg_kb_if(hg_kb* b, uint32_t cond) { hg_kb_ctl(b, HG_OP_IF, hg_reg(cond)); }
static inline void hg_kb_else(hg_kb* b) { hg_kb_ctl(b, HG_OP_ELSE, hg_none()); }
static inline void hg_kb_endif(hg_kb* b) { hg_kb_ctl(b, HG_OP_ENDIF, hg_none()); }
static inline void hg_kb_loop(hg_kb* b) { hg_kb_ctl(b, HG_OP_LOOP, hg_none()); }
static inline void hg_kb_endloop(hg_kb* b) { hg_kb_ctl(b, HG_OP_ENDLOOP, hg_none()); }
static inline void hg_kb_break(hg_kb* b, uint32_t cond) { hg_kb_ctl(b, HG_OP_BREAK, hg_reg(cond)); }
static inline void hg_kb_bar(hg_kb* b) { hg_kb_ctl(b, HG_OP_BAR, hg_none()); }

#endif
