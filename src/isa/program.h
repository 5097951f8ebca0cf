// Internal: the Atlas ISA program (IR) and the opcode metadata table. Everything that reads
// programs (parser, printer, binary format, validator, backends) works on this struct.
#ifndef HG_ISA_PROGRAM_H
#define HG_ISA_PROGRAM_H
#include <stdbool.h>
#include <stdint.h>
#include "hologram.h"

#define HG_NAME_MAX 64             // identifiers: [A-Za-z_][A-Za-z0-9_]*, at most 63 chars
#define HG_MAX_PARAMS 64
#define HG_MAX_SHARED_ARRAYS 16
#define HG_MAX_REGS 4096
#define HG_MAX_INSTRS (1u << 20)
#define HG_MAX_NESTING 64          // if/loop nesting depth
#define HG_MAX_STATIC_SHARED_BYTES (48u * 1024u)
// HG_MAX_BLOCK_LANES and HG_MAX_LAUNCH_LANES: hologram/isa.h (public).

typedef struct hg_param_decl {
    char name[HG_NAME_MAX];
    uint8_t kind;       // hg_param_kind
    uint8_t dtype;      // hg_dtype
    uint8_t is_const;   // buffers only
} hg_param_decl;

typedef struct hg_shared_decl {
    char name[HG_NAME_MAX];
    uint8_t dtype;
    uint32_t count;     // 0 = unsized (takes the launch's shared_bytes)
} hg_shared_decl;

typedef struct hg_reg_decl {
    char name[HG_NAME_MAX];
    uint8_t dtype;
} hg_reg_decl;

typedef struct hg_prog {
    char name[HG_NAME_MAX];
    hg_param_decl* params;   uint32_t nparams, cap_params;
    hg_shared_decl* shared;  uint32_t nshared, cap_shared;
    hg_reg_decl* regs;       uint32_t nregs, cap_regs;
    hg_instr* instrs;        uint32_t ninstrs, cap_instrs;
} hg_prog;

// Lifetime (internal; the public API wraps these in handles).
hg_prog* hg_prog_new(const char* name);           // NULL on bad name (error set) or OOM
void hg_prog_free(hg_prog* p);
hg_prog* hg_prog_clone(const hg_prog* p);         // deep copy; NULL on OOM (error set)
bool hg_prog_equal(const hg_prog* a, const hg_prog* b);
hg_status hg_prog_add_param(hg_prog* p, const char* name, hg_param_kind kind, hg_dtype dtype,
                            int is_const, uint32_t* out);
hg_status hg_prog_add_shared(hg_prog* p, const char* name, hg_dtype dtype, uint32_t count,
                             uint32_t* out);
hg_status hg_prog_add_reg(hg_prog* p, const char* name, hg_dtype dtype, uint32_t* out);
hg_status hg_prog_emit(hg_prog* p, const hg_instr* ins);
bool hg_name_is_identifier(const char* name);
// Resolves the program behind a public handle (sets HG_ERR_INVALID_HANDLE on failure).
hg_prog* hg_prog_from_handle(hg_program h);

// Operand roles of an opcode (what each operand slot holds).
typedef enum hg_role {
    HG_ROLE_NONE = 0,     // slot must be HG_OPERAND_NONE
    HG_ROLE_T,            // value of the instruction's type
    HG_ROLE_BOOL,         // value of type bool
    HG_ROLE_SRC_T,        // value of the cvt source type (aux)
    HG_ROLE_INDEX,        // integer value of any integer type (memory index)
    HG_ROLE_OPT_BOOL,     // optional bool (break)
    HG_ROLE_OPT_T,        // optional register of the type (atom result)
    HG_ROLE_U32,          // value of type u32 (the lane operand of shfl)
    HG_ROLE_COUNT
} hg_role;

typedef enum hg_op_class {
    HG_CLASS_ARITH = 0,   // mov, add ... fma, bitwise, shifts
    HG_CLASS_CMP,
    HG_CLASS_SEL,
    HG_CLASS_CVT,
    HG_CLASS_MATH,        // float unary functions
    HG_CLASS_MEMORY,      // ld st atom
    HG_CLASS_SYNC,        // bar fence
    HG_CLASS_CONTROL,     // if else endif loop endloop break exit
    HG_CLASS_WARP,        // shfl: lanes of a warp exchange values
    HG_CLASS_COUNT
} hg_op_class;

typedef struct hg_opinfo {
    const char* name;     // text mnemonic ("add")
    uint8_t op_class;     // hg_op_class
    uint8_t typed;        // 1: the mnemonic carries .type; 0: type must be 0
    uint8_t dst;          // role of dst (NONE, T, BOOL, OPT_T)
    uint8_t src[3];       // roles of src[0..2]
    uint32_t types;       // allowed instruction types (HG_TS_* set); 0 for untyped
} hg_opinfo;

extern const hg_opinfo hg_opinfo_table[HG_OPCODE_COUNT];
static inline const hg_opinfo* hg_opinfo_of(unsigned op) {
    return op < HG_OPCODE_COUNT ? &hg_opinfo_table[op] : 0;
}
const char* hg_cmp_name(unsigned cmp);          // "eq" ...; NULL if invalid
const char* hg_space_name(unsigned space);      // "global" / "shared"
const char* hg_atomic_name(unsigned aop);       // "add" "min" "max" "exch" "cas"
const char* hg_special_name(unsigned sreg);     // "%tid.x" ...
const char* hg_shfl_name(unsigned mode);        // "bfly" "down" "up" "idx"; NULL if invalid
uint32_t hg_atomic_types(unsigned aop);         // allowed types for an atomic op
// Atom aux packing.
static inline unsigned hg_atom_op(uint8_t aux) { return aux & 0xFu; }
static inline unsigned hg_atom_space(uint8_t aux) { return aux >> 4; }
static inline uint8_t hg_atom_aux(unsigned aop, unsigned space) { return (uint8_t)(aop | (space << 4)); }
// ldv / stv aux packing (hg_vec_aux in the public header builds it): space, log2 of the width.
#define HG_VEC_MAX_BYTES 16u
static inline unsigned hg_vec_space(uint8_t aux) { return aux & 0xFu; }
static inline unsigned hg_vec_log2(uint8_t aux) { return aux >> 4; }
static inline unsigned hg_vec_width(uint8_t aux) { return 1u << (aux >> 4); }
static inline bool hg_op_is_vec(unsigned op) { return op == HG_OP_LDV || op == HG_OP_STV; }
// The memory space of a memory instruction (ld st ldv stv atom).
static inline unsigned hg_mem_space(const hg_instr* in) {
    return in->op == HG_OP_ATOM ? hg_atom_space(in->aux)
           : hg_op_is_vec(in->op) ? hg_vec_space(in->aux) : in->aux;
}
// Registers an instruction's register operand stands for: the run of ldv's dst and stv's
// src[1] (validated programs only), 1 otherwise. Analyses of register use go through this.
static inline uint32_t hg_instr_run(const hg_instr* in) {
    return hg_op_is_vec(in->op) ? hg_vec_width(in->aux) : 1u;
}
// The registers source operand k reads: src[1] of stv a run, any other one register.
static inline uint32_t hg_src_run(const hg_instr* in, int k) {
    return in->op == HG_OP_STV && k == 1 ? hg_vec_width(in->aux) : 1u;
}

// Formats instruction i in canonical text into buf (for error messages); returns buf.
const char* hg_instr_text(const hg_prog* p, uint32_t i, char* buf, size_t len);

// Internal validation (sets the error message; HG_ERR_INVALID_PROGRAM on failure).
hg_status hg_prog_validate(const hg_prog* p);

// Serialization (src/isa/binary.c): canonical little-endian payload used by save and hash.
hg_status hg_prog_save(const hg_prog* p, uint8_t** out, size_t* len);
hg_status hg_prog_load(const uint8_t* bytes, size_t len, hg_prog** out);   // structure only
uint64_t hg_prog_hash(const hg_prog* p);

// Text (src/isa/text_parse.c, text_print.c).
hg_status hg_prog_parse(const char* text, size_t len, hg_prog** out);     // structure only
hg_status hg_prog_print(const hg_prog* p, char** out, size_t* len);       // malloc'd text

#endif
