// The opcode metadata table: one row per hg_opcode, shared by the parser, printer, validator
// and every backend, so adding an instruction is one row here plus its semantics.
#include "isa/program.h"
#include "base/dtype.h"

#define R_ HG_ROLE_NONE
#define RT HG_ROLE_T
#define RB HG_ROLE_BOOL
#define RS HG_ROLE_SRC_T
#define RI HG_ROLE_INDEX
#define ROB HG_ROLE_OPT_BOOL
#define ROT HG_ROLE_OPT_T

#define ARITH(n, types) {n, HG_CLASS_ARITH, 1, RT, {RT, RT, R_}, types}
#define UNARY(n, cls, types) {n, cls, 1, RT, {RT, R_, R_}, types}
#define CTRL(n, s0) {n, HG_CLASS_CONTROL, 0, R_, {s0, R_, R_}, 0}

const hg_opinfo hg_opinfo_table[HG_OPCODE_COUNT] = {
    [HG_OP_MOV] = UNARY("mov", HG_CLASS_ARITH, HG_TS_ALL),
    [HG_OP_ADD] = ARITH("add", HG_TS_NUM),
    [HG_OP_SUB] = ARITH("sub", HG_TS_NUM),
    [HG_OP_MUL] = ARITH("mul", HG_TS_NUM),
    [HG_OP_DIV] = ARITH("div", HG_TS_NUM),
    [HG_OP_REM] = ARITH("rem", HG_TS_NUM),
    [HG_OP_MIN] = ARITH("min", HG_TS_NUM),
    [HG_OP_MAX] = ARITH("max", HG_TS_NUM),
    [HG_OP_ABS] = UNARY("abs", HG_CLASS_ARITH, HG_TS_NUM),
    [HG_OP_NEG] = UNARY("neg", HG_CLASS_ARITH, HG_TS_NUM),
    [HG_OP_FMA] = {"fma", HG_CLASS_ARITH, 1, RT, {RT, RT, RT}, HG_TS_NUM},
    [HG_OP_AND] = ARITH("and", HG_TS_INT | HG_TS_BOOL),
    [HG_OP_OR] = ARITH("or", HG_TS_INT | HG_TS_BOOL),
    [HG_OP_XOR] = ARITH("xor", HG_TS_INT | HG_TS_BOOL),
    [HG_OP_NOT] = UNARY("not", HG_CLASS_ARITH, HG_TS_INT | HG_TS_BOOL),
    [HG_OP_SHL] = ARITH("shl", HG_TS_INT),
    [HG_OP_SHR] = ARITH("shr", HG_TS_INT),
    [HG_OP_CMP] = {"cmp", HG_CLASS_CMP, 1, RB, {RT, RT, R_}, HG_TS_ALL},
    [HG_OP_SEL] = {"sel", HG_CLASS_SEL, 1, RT, {RB, RT, RT}, HG_TS_ALL},
    [HG_OP_CVT] = {"cvt", HG_CLASS_CVT, 1, RT, {RS, R_, R_}, HG_TS_ALL},
    [HG_OP_SQRT] = UNARY("sqrt", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_RSQRT] = UNARY("rsqrt", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_EXP] = UNARY("exp", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_EXP2] = UNARY("exp2", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_LOG] = UNARY("log", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_LOG2] = UNARY("log2", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_SIN] = UNARY("sin", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_COS] = UNARY("cos", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_TANH] = UNARY("tanh", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_SIGMOID] = UNARY("sigmoid", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_ERF] = UNARY("erf", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_FLOOR] = UNARY("floor", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_CEIL] = UNARY("ceil", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_ROUND] = UNARY("round", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_TRUNC] = UNARY("trunc", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_LD] = {"ld", HG_CLASS_MEMORY, 1, RT, {RI, R_, R_}, HG_TS_ALL},
    [HG_OP_ST] = {"st", HG_CLASS_MEMORY, 1, R_, {RI, RT, R_}, HG_TS_ALL},
    // src[2] is used only by cas (compare in src[1], new value in src[2]); the validator
    // checks that case specially.
    [HG_OP_ATOM] = {"atom", HG_CLASS_MEMORY, 1, ROT, {RI, RT, ROT}, HG_TS_ATOMIC},
    [HG_OP_BAR] = {"bar", HG_CLASS_SYNC, 0, R_, {R_, R_, R_}, 0},
    [HG_OP_FENCE] = {"fence", HG_CLASS_SYNC, 0, R_, {R_, R_, R_}, 0},
    [HG_OP_IF] = CTRL("if", RB),
    [HG_OP_ELSE] = CTRL("else", R_),
    [HG_OP_ENDIF] = CTRL("endif", R_),
    [HG_OP_LOOP] = CTRL("loop", R_),
    [HG_OP_ENDLOOP] = CTRL("endloop", R_),
    [HG_OP_BREAK] = CTRL("break", ROB),
    [HG_OP_EXIT] = CTRL("exit", R_),
    [HG_OP_GELU] = UNARY("gelu", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_GELU_ERF] = UNARY("gelu_erf", HG_CLASS_MATH, HG_TS_FLOAT),
    [HG_OP_SHFL] = {"shfl", HG_CLASS_WARP, 1, RT, {RT, HG_ROLE_U32, R_}, HG_TS_ALL},
    // dst (ldv) / src[1] (stv) is the first register of a run of width registers.
    [HG_OP_LDV] = {"ldv", HG_CLASS_MEMORY, 1, RT, {RI, R_, R_}, HG_TS_ALL},
    [HG_OP_STV] = {"stv", HG_CLASS_MEMORY, 1, R_, {RI, RT, R_}, HG_TS_ALL},
};
_Static_assert(sizeof(hg_opinfo_table) / sizeof(hg_opinfo_table[0]) == HG_OPCODE_COUNT,
               "opcode table must have one row per opcode");

static const char* const cmp_names[HG_CMP_COUNT] = {"eq", "ne", "lt", "le", "gt", "ge"};
_Static_assert(sizeof(cmp_names) / sizeof(cmp_names[0]) == HG_CMP_COUNT, "cmp names");
static const char* const space_names[HG_SPACE_COUNT] = {"global", "shared"};
_Static_assert(sizeof(space_names) / sizeof(space_names[0]) == HG_SPACE_COUNT, "space names");
static const char* const atomic_names[HG_ATOMIC_COUNT] = {"add", "min", "max", "exch", "cas"};
_Static_assert(sizeof(atomic_names) / sizeof(atomic_names[0]) == HG_ATOMIC_COUNT, "atomic names");
static const char* const shfl_names[HG_SHFL_COUNT] = {"bfly", "down", "up", "idx"};
_Static_assert(sizeof(shfl_names) / sizeof(shfl_names[0]) == HG_SHFL_COUNT, "shfl names");
static const char* const special_names[HG_SREG_COUNT] = {
    "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z",
    "%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z",
    "%gid.x", "%gid.y", "%gid.z"};
_Static_assert(sizeof(special_names) / sizeof(special_names[0]) == HG_SREG_COUNT, "special names");

const char* hg_cmp_name(unsigned cmp) { return cmp < HG_CMP_COUNT ? cmp_names[cmp] : 0; }
const char* hg_space_name(unsigned s) { return s < HG_SPACE_COUNT ? space_names[s] : 0; }
const char* hg_atomic_name(unsigned a) { return a < HG_ATOMIC_COUNT ? atomic_names[a] : 0; }
const char* hg_shfl_name(unsigned m) { return m < HG_SHFL_COUNT ? shfl_names[m] : 0; }
const char* hg_special_name(unsigned s) { return s < HG_SREG_COUNT ? special_names[s] : 0; }

uint32_t hg_atomic_types(unsigned aop) {
    switch (aop) {
    case HG_ATOMIC_ADD:
    case HG_ATOMIC_MIN:
    case HG_ATOMIC_MAX:
    case HG_ATOMIC_EXCH: return HG_TS_ATOMIC;
    case HG_ATOMIC_CAS: return HG_TS_ATOMIC & HG_TS_INT;
    default: return 0;
    }
}
