// The Atlas ISA validator (docs/isa.md §8): the malformed-program corpus (tests/corpus/invalid,
// each file's first line says the expected status and message substring), the valid corpus,
// builder-level malformed programs that text cannot express, and random valid programs.
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"
#include "base/dtype.h"
#include "isa/program.h"

#if defined(__has_include)
#if __has_include("random_program.h") && !defined(HG_TEST_SKIP_RANDOM)
#include "random_program.h"
#define HAVE_RANDOM_PROGRAM 1
#endif
#endif

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

static char* read_file(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (buf && n >= 0 && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = 0;
        *len = (size_t)n;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static int cmp_str(const void* a, const void* b) {
    return strcmp(*(const char* const*)a, *(const char* const*)b);
}

// Sorted .hasm file names of a corpus folder; returns the count (names malloc'd).
static int list_corpus(const char* dir, char*** out) {
    DIR* d = opendir(dir);
    int n = 0, cap = 0;
    char** names = NULL;
    if (!d) {
        *out = NULL;
        return -1;
    }
    struct dirent* e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".hasm") != 0) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, (size_t)cap * sizeof *names);
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
    *out = names;
    return n;
}

// Parses then validates; the status of the first step that fails.
static hg_status parse_and_validate(const char* text, size_t len) {
    hg_prog* p = NULL;
    hg_status s = hg_prog_parse(text, len, &p);
    if (s == HG_OK) {
        s = hg_prog_validate(p);
        hg_prog_free(p);
    }
    return s;
}

static void test_invalid_corpus(void) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", hg_test_source_path("tests/corpus/invalid"));
    char** names;
    int n = list_corpus(dir, &names);
    CHECK_MSG(n >= 45, "expected at least 45 malformed programs in %s, found %d", dir, n);
    for (int k = 0; k < n; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        size_t len = 0;
        char* text = read_file(path, &len);
        CHECK_MSG(text != NULL, "cannot read %s", path);
        if (!text) continue;
        // First line: "// expect: HG_ERR_X: substring".
        char want_status[64] = "", want_sub[512] = "";
        const char* tag = "// expect: ";
        const char* eol = strchr(text, '\n');
        size_t line_len = eol ? (size_t)(eol - text) : len;
        if (strncmp(text, tag, strlen(tag)) == 0) {
            const char* a = text + strlen(tag);
            const char* colon = memchr(a, ':', line_len - (size_t)(a - text));
            if (colon && (size_t)(colon - a) < sizeof want_status) {
                memcpy(want_status, a, (size_t)(colon - a));
                want_status[colon - a] = 0;
                const char* sub = colon + 1;
                while (*sub == ' ') sub++;
                size_t sl = line_len - (size_t)(sub - text);
                if (sl >= sizeof want_sub) sl = sizeof want_sub - 1;
                memcpy(want_sub, sub, sl);
                want_sub[sl] = 0;
                while (sl && (want_sub[sl - 1] == '\r' || want_sub[sl - 1] == ' ')) want_sub[--sl] = 0;
            }
        }
        CHECK_MSG(want_status[0] && want_sub[0],
                  "%s: first line must be `// expect: HG_ERR_...: <substring>`", names[k]);
        hg_clear_error();
        hg_status s = parse_and_validate(text, len);
        if (getenv("HG_TEST_VERBOSE")) printf("%-36s %s\n", names[k], hg_last_error());
        CHECK_MSG(strcmp(hg_status_string(s), want_status) == 0, "%s: got %s (%s), want %s",
                  names[k], hg_status_string(s), hg_last_error(), want_status);
        CHECK_MSG(strstr(hg_last_error(), want_sub) != NULL, "%s: message \"%s\" lacks \"%s\"",
                  names[k], hg_last_error(), want_sub);
        free(text);
        free(names[k]);
    }
    free(names);
}

static void test_valid_corpus(void) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", hg_test_source_path("tests/corpus/valid"));
    char** names;
    int n = list_corpus(dir, &names);
    CHECK_MSG(n >= 10, "expected at least 10 valid programs in %s, found %d", dir, n);
    for (int k = 0; k < n; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        size_t len = 0;
        char* text = read_file(path, &len);
        CHECK_MSG(text != NULL, "cannot read %s", path);
        if (text) {
            hg_status s = parse_and_validate(text, len);
            CHECK_MSG(s == HG_OK, "%s: %s: %s", names[k], hg_status_string(s), hg_last_error());
        }
        free(text);
        free(names[k]);
    }
    free(names);
}

// ---------------------------------------------------------------------------------------------
// Builder-level programs
// ---------------------------------------------------------------------------------------------

#define ONONE ((hg_operand){HG_OPERAND_NONE, 0, 0})
#define OREG(i) ((hg_operand){HG_OPERAND_REG, (i), 0})
#define OIMM(b) ((hg_operand){HG_OPERAND_IMM, 0, (b)})
#define OSP(s) ((hg_operand){HG_OPERAND_SPECIAL, (s), 0})
#define OPAR(i) ((hg_operand){HG_OPERAND_PARAM, (i), 0})
#define ORAW(k, i, b) ((hg_operand){(k), (i), (b)})
#define INS(op, type, aux, mem, d, a, b, c) ((hg_instr){(op), (type), (aux), (mem), d, {a, b, c}})

// Registers, parameters and shared arrays of the base program (indices used below).
enum { R_I, R_X, R_Y, R_P, R_K, R_H, R_Q, R_B, R_J, R_Z, R_COUNT };  // u32 f32 f32 bool i32 f16 u64 u8 u32 bool
enum { P_A, P_C, P_N, P_IB, P_S };                                  // a: const f32, c: f32, n: u32, ib: i32, s: f32
enum { S_TILE, S_ST };                                              // tile: f32[64], st: i32[16]

#define T_BOOL HG_DTYPE_BOOL
#define T_I32 HG_DTYPE_I32
#define T_U32 HG_DTYPE_U32
#define T_F32 HG_DTYPE_F32
#define T_F16 HG_DTYPE_F16
#define T_U64 HG_DTYPE_U64
#define T_U8 HG_DTYPE_U8

static hg_prog* base_program(void) {
    hg_prog* p = hg_prog_new("k");
    if (!p) return NULL;
    int bad = 0;
    bad |= hg_prog_add_param(p, "a", HG_PARAM_BUFFER, HG_DTYPE_F32, 1, NULL);
    bad |= hg_prog_add_param(p, "c", HG_PARAM_BUFFER, HG_DTYPE_F32, 0, NULL);
    bad |= hg_prog_add_param(p, "n", HG_PARAM_SCALAR, HG_DTYPE_U32, 0, NULL);
    bad |= hg_prog_add_param(p, "ib", HG_PARAM_BUFFER, HG_DTYPE_I32, 0, NULL);
    bad |= hg_prog_add_param(p, "s", HG_PARAM_SCALAR, HG_DTYPE_F32, 0, NULL);
    bad |= hg_prog_add_shared(p, "tile", HG_DTYPE_F32, 64, NULL);
    bad |= hg_prog_add_shared(p, "st", HG_DTYPE_I32, 16, NULL);
    static const struct { const char* n; hg_dtype t; } regs[R_COUNT] = {
        {"i", HG_DTYPE_U32}, {"x", HG_DTYPE_F32}, {"y", HG_DTYPE_F32}, {"p", HG_DTYPE_BOOL},
        {"k", HG_DTYPE_I32}, {"h", HG_DTYPE_F16}, {"q", HG_DTYPE_U64}, {"b", HG_DTYPE_U8},
        {"j", HG_DTYPE_U32}, {"z", HG_DTYPE_BOOL}};
    for (int r = 0; r < R_COUNT; r++) bad |= hg_prog_add_reg(p, regs[r].n, regs[r].t, NULL);
    if (bad) {
        hg_prog_free(p);
        return NULL;
    }
    return p;
}

typedef struct bcase {
    const char* name;
    int n;
    hg_instr ins[72];
    uint32_t bad;          // index of the instruction the message must name
    const char* want;      // substring of the message
} bcase;

// Emits the case's instructions into a fresh base program and validates it.
static void run_case(const bcase* c) {
    hg_prog* p = base_program();
    CHECK(p != NULL);
    if (!p) return;
    for (int k = 0; k < c->n; k++) CHECK_OK(hg_prog_emit(p, &c->ins[k]));
    hg_clear_error();
    hg_status s = hg_prog_validate(p);
    char at[64];
    snprintf(at, sizeof at, "instruction %u (`", c->bad);
    const char* msg = hg_last_error();
    if (getenv("HG_TEST_VERBOSE")) printf("%-36s %s\n", c->name, msg);
    CHECK_MSG(s == HG_ERR_INVALID_PROGRAM, "%s: got %s (%s)", c->name, hg_status_string(s), msg);
    CHECK_MSG(strstr(msg, "kernel 'k', ") == msg, "%s: message \"%s\" does not start with the kernel",
              c->name, msg);
    CHECK_MSG(strstr(msg, at) != NULL, "%s: message \"%s\" does not name %s", c->name, msg, at);
    CHECK_MSG(strstr(msg, c->want) != NULL, "%s: message \"%s\" lacks \"%s\"", c->name, msg,
              c->want);
    hg_prog_free(p);
}

// Common instructions.
#define MOV_I_GID INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_I), OSP(HG_SREG_GID_X), ONONE, ONONE)
#define MOV_I_CTA INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_I), OSP(HG_SREG_CTAID_X), ONONE, ONONE)
#define ADD_F32(d, a, b) INS(HG_OP_ADD, T_F32, 0, 0, d, a, b, ONONE)
#define CMP_LT_U32(d, a, b) INS(HG_OP_CMP, T_U32, HG_CMP_LT, 0, d, a, b, ONONE)
#define CTRL(op, a) INS(op, 0, 0, 0, ONONE, a, ONONE, ONONE)
#define BAR CTRL(HG_OP_BAR, ONONE)
#define LD(space, t, d, slot, idx) INS(HG_OP_LD, t, space, slot, d, idx, ONONE, ONONE)
#define ST(space, t, slot, idx, v) INS(HG_OP_ST, t, space, slot, ONONE, idx, v, ONONE)
#define ATOM(aop, space, t, d, slot, idx, v, v2) \
    INS(HG_OP_ATOM, t, hg_atom_aux(aop, space), slot, d, idx, v, v2)
#define G HG_SPACE_GLOBAL
#define SH HG_SPACE_SHARED

// The valid base for positive controls: the same instructions with nothing wrong.
static void test_builder_valid(void) {
    bcase ok = {"valid", 12, {
        MOV_I_GID,
        CMP_LT_U32(OREG(R_P), OREG(R_I), OPAR(P_N)),
        CTRL(HG_OP_IF, OREG(R_P)),
        LD(G, T_F32, OREG(R_X), P_A, OREG(R_I)),
        ADD_F32(OREG(R_X), OREG(R_X), OPAR(P_S)),
        ST(G, T_F32, P_C, OREG(R_I), OREG(R_X)),
        ATOM(HG_ATOMIC_ADD, G, T_F32, ONONE, P_C, OIMM(0), OREG(R_X), ONONE),
        ATOM(HG_ATOMIC_CAS, SH, T_I32, OREG(R_K), S_ST, OIMM(UINT64_MAX), OIMM(0), OIMM(0xffffffffu)),
        CTRL(HG_OP_ENDIF, ONONE),
        BAR,
        INS(HG_OP_FENCE, 0, HG_SPACE_SHARED, 0, ONONE, ONONE, ONONE, ONONE),
        INS(HG_OP_CVT, T_F16, T_F32, 0, OREG(R_H), OREG(R_X), ONONE, ONONE)},
        0, ""};
    hg_prog* p = base_program();
    CHECK(p != NULL);
    if (!p) return;
    for (int k = 0; k < ok.n; k++) CHECK_OK(hg_prog_emit(p, &ok.ins[k]));
    CHECK_OK(hg_prog_validate(p));
    hg_prog_free(p);
    // An empty kernel and one with only declarations are valid too.
    p = base_program();
    CHECK_OK(hg_prog_validate(p));
    hg_prog_free(p);
}

static void test_builder_instructions(void) {
    static bcase cases[120];
    int n = 0;
#define CASE(name_, bad_, want_, ...)                                                      \
    do {                                                                                   \
        hg_instr tmp_[] = {__VA_ARGS__};                                                   \
        if (n == (int)(sizeof cases / sizeof cases[0])) break;                             \
        bcase* c_ = &cases[n++];                                                           \
        memset(c_, 0, sizeof *c_);                                                         \
        c_->name = name_;                                                                  \
        c_->n = (int)(sizeof tmp_ / sizeof tmp_[0]);                                       \
        memcpy(c_->ins, tmp_, sizeof tmp_);                                                \
        c_->bad = bad_;                                                                    \
        c_->want = want_;                                                                  \
    } while (0)

    // Opcode, type, aux.
    CASE("opcode out of range", 1, "opcode 200 is unknown", MOV_I_GID,
         INS(200, T_F32, 0, 0, OREG(R_X), OREG(R_X), ONONE, ONONE));
    CASE("type out of range", 1, "(99) is not allowed for `add`", MOV_I_GID,
         INS(HG_OP_ADD, 99, 0, 0, OREG(R_X), OREG(R_X), OREG(R_X), ONONE));
    CASE("and on f32", 1, "type f32 (11) is not allowed for `and`", MOV_I_GID,
         INS(HG_OP_AND, T_F32, 0, 0, OREG(R_X), OREG(R_X), OREG(R_X), ONONE));
    CASE("sqrt on i32", 0, "not allowed for `sqrt`",
         INS(HG_OP_SQRT, T_I32, 0, 0, OREG(R_K), OREG(R_K), ONONE, ONONE));
    CASE("add on bool", 0, "not allowed for `add`",
         INS(HG_OP_ADD, T_BOOL, 0, 0, OREG(R_P), OREG(R_P), OREG(R_P), ONONE));
    CASE("typed bar", 0, "`bar` takes no type but has type 3",
         INS(HG_OP_BAR, T_I32, 0, 0, ONONE, ONONE, ONONE, ONONE));
    CASE("bar with aux", 0, "`bar` has aux 1, expected 0",
         INS(HG_OP_BAR, 0, 1, 0, ONONE, ONONE, ONONE, ONONE));
    CASE("endif with aux", 3, "`endif` has aux 7", MOV_I_GID,
         CMP_LT_U32(OREG(R_P), OREG(R_I), OPAR(P_N)), CTRL(HG_OP_IF, OREG(R_P)),
         INS(HG_OP_ENDIF, 0, 7, 0, ONONE, ONONE, ONONE, ONONE));
    CASE("add with aux", 0, "`add` has aux 2",
         INS(HG_OP_ADD, T_F32, 2, 0, OREG(R_X), OREG(R_X), OREG(R_X), ONONE));
    CASE("fence bad space", 0, "memory space 2 is unknown",
         INS(HG_OP_FENCE, 0, 2, 0, ONONE, ONONE, ONONE, ONONE));
    CASE("cmp bad condition", 0, "comparison 6 is unknown",
         INS(HG_OP_CMP, T_F32, 6, 0, OREG(R_P), OREG(R_X), OREG(R_Y), ONONE));
    CASE("cvt bad source", 0, "cvt source type 13 is not a valid type",
         INS(HG_OP_CVT, T_F32, 13, 0, OREG(R_X), OREG(R_K), ONONE, ONONE));
    CASE("ld bad space", 0, "memory space 2 is unknown", LD(2, T_F32, OREG(R_X), P_A, OIMM(0)));
    CASE("atom bad op", 0, "atomic operation 5 is unknown",
         INS(HG_OP_ATOM, T_F32, 5, P_C, ONONE, OIMM(0), OREG(R_X), ONONE));
    CASE("atom bad space", 0, "atomic memory space 2 is unknown",
         INS(HG_OP_ATOM, T_F32, 0x20, P_C, ONONE, OIMM(0), OREG(R_X), ONONE));
    CASE("atom on f16", 0, "type f16 (9) is not allowed for `atom`",
         ATOM(HG_ATOMIC_ADD, SH, T_F16, ONONE, S_TILE, OIMM(0), OREG(R_H), ONONE));
    CASE("cas on f32", 0, "atom.cas does not support type f32",
         ATOM(HG_ATOMIC_CAS, G, T_F32, OREG(R_X), P_C, OIMM(0), OREG(R_X), OREG(R_Y)));

    // Operand kinds and indices.
    CASE("src reg out of range", 1, "src[0]: register index 99 is out of range", MOV_I_GID,
         ADD_F32(OREG(R_X), OREG(99), OREG(R_X)));
    CASE("dst reg out of range", 0, "dst: register index 50 is out of range",
         ADD_F32(OREG(50), OREG(R_X), OREG(R_X)));
    CASE("src type mismatch", 0, "src[1]: register 'k' has type i32, expected an f32 value",
         ADD_F32(OREG(R_X), OREG(R_X), OREG(R_K)));
    CASE("dst type mismatch", 0, "dst: register 'k' has type i32, expected an f32 register",
         ADD_F32(OREG(R_K), OREG(R_X), OREG(R_X)));
    CASE("dst immediate", 0, "dst is an immediate, expected an f32 register",
         ADD_F32(OIMM(0), OREG(R_X), OREG(R_X)));
    CASE("dst special", 0, "dst is a special register",
         INS(HG_OP_MOV, T_U32, 0, 0, OSP(HG_SREG_TID_X), OIMM(1), ONONE, ONONE));
    CASE("dst param", 0, "dst is a parameter", INS(HG_OP_MOV, T_U32, 0, 0, OPAR(P_N), OIMM(1), ONONE, ONONE));
    CASE("dst missing", 0, "dst is empty (NONE), expected an f32 register",
         ADD_F32(ONONE, OREG(R_X), OREG(R_X)));
    CASE("src missing", 0, "src[1] is missing, expected an f32 value",
         ADD_F32(OREG(R_X), OREG(R_X), ONONE));
    CASE("extra src", 0, "src[2] is a register", INS(HG_OP_ADD, T_F32, 0, 0, OREG(R_X), OREG(R_X), OREG(R_X), OREG(R_X)));
    CASE("NONE slot with index", 0, "src[2] is empty (NONE) (kind 0, index 3",
         INS(HG_OP_ADD, T_F32, 0, 0, OREG(R_X), OREG(R_X), OREG(R_X), ORAW(0, 3, 0)));
    CASE("NONE slot with bits", 0, "bits 0x5), expected it empty",
         INS(HG_OP_MOV, T_F32, 0, 0, OREG(R_X), OREG(R_X), ORAW(0, 0, 5), ONONE));
    CASE("bar with operand", 0, "src[0] is a register", CTRL(HG_OP_BAR, OREG(R_P)));
    CASE("bar with dst", 0, "dst is a register", INS(HG_OP_BAR, 0, 0, 0, OREG(R_P), ONONE, ONONE, ONONE));
    CASE("unknown operand kind", 0, "src[0]: operand kind 9 is unknown",
         ADD_F32(OREG(R_X), ORAW(9, 0, 0), OREG(R_X)));
    CASE("imm high bits i32", 0, "immediate bits 0x100000000 do not fit type i32",
         INS(HG_OP_ADD, T_I32, 0, 0, OREG(R_K), OREG(R_K), OIMM(0x100000000ull), ONONE));
    CASE("imm sign-extended i32", 0, "do not fit type i32",
         INS(HG_OP_ADD, T_I32, 0, 0, OREG(R_K), OREG(R_K), OIMM(UINT64_MAX), ONONE));
    CASE("imm high bits u8", 0, "do not fit type u8",
         INS(HG_OP_MOV, T_U8, 0, 0, OREG(R_B), OIMM(0x100), ONONE, ONONE));
    CASE("imm high bits f16", 0, "do not fit type f16",
         INS(HG_OP_MOV, T_F16, 0, 0, OREG(R_H), OIMM(0x13c00), ONONE, ONONE));
    CASE("imm high bits f32", 0, "do not fit type f32",
         INS(HG_OP_MOV, T_F32, 0, 0, OREG(R_X), OIMM(0x13f800000ull), ONONE, ONONE));
    CASE("bool imm 2", 0, "immediate bits 0x2 do not fit type bool", CTRL(HG_OP_IF, OIMM(2)),
         CTRL(HG_OP_ENDIF, ONONE));
    CASE("imm with index", 0, "immediate has index 5",
         ADD_F32(OREG(R_X), OREG(R_X), ORAW(HG_OPERAND_IMM, 5, 0)));
    CASE("reg with bits", 0, "a register operand has bits 0x1",
         ADD_F32(OREG(R_X), ORAW(HG_OPERAND_REG, R_X, 1), OREG(R_X)));
    CASE("dst reg with bits", 0, "dst: register operand has bits 0x8",
         ADD_F32(ORAW(HG_OPERAND_REG, R_X, 8), OREG(R_X), OREG(R_X)));
    CASE("param out of range", 0, "src[1]: parameter index 40 is out of range",
         ADD_F32(OREG(R_X), OREG(R_X), OPAR(40)));
    CASE("buffer param as value", 0, "src[1]: parameter 'a' is a buffer",
         ADD_F32(OREG(R_X), OREG(R_X), OPAR(P_A)));
    CASE("scalar param type", 0, "src[1]: parameter 'n' has type u32, expected an f32 value",
         ADD_F32(OREG(R_X), OREG(R_X), OPAR(P_N)));
    CASE("special out of range", 0, "special register 15 is unknown",
         INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_I), OSP(15), ONONE, ONONE));
    CASE("special as f32", 0, "%tid.x has type u32, expected an f32 value",
         ADD_F32(OREG(R_X), OSP(HG_SREG_TID_X), OREG(R_X)));
    CASE("special with bits", 0, "a special register operand has bits",
         INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_I), ORAW(HG_OPERAND_SPECIAL, 0, 4), ONONE, ONONE));
    CASE("mem on arith", 0, "`add` has memory slot 3, expected 0",
         INS(HG_OP_ADD, T_F32, 0, 3, OREG(R_X), OREG(R_X), OREG(R_X), ONONE));
    CASE("mem on bar", 0, "`bar` has memory slot 1", INS(HG_OP_BAR, 0, 0, 1, ONONE, ONONE, ONONE, ONONE));

    // Memory slots.
    CASE("ld global slot out of range", 0, "memory slot 99 is out of range, expected a buffer",
         LD(G, T_F32, OREG(R_X), 99, OIMM(0)));
    CASE("ld from scalar param", 0, "parameter 'n' is a scalar, expected a buffer",
         LD(G, T_U32, OREG(R_I), P_N, OIMM(0)));
    CASE("ld type != buffer dtype", 0, "buffer 'a' holds f32, expected i32",
         LD(G, T_I32, OREG(R_K), P_A, OIMM(0)));
    CASE("st into const", 1, "store into const buffer 'a'", MOV_I_GID,
         ST(G, T_F32, P_A, OREG(R_I), OREG(R_X)));
    CASE("atom into const", 0, "atomic into const buffer 'a'",
         ATOM(HG_ATOMIC_ADD, G, T_F32, ONONE, P_A, OIMM(0), OREG(R_X), ONONE));
    CASE("ld shared slot out of range", 0, "memory slot 5 is out of range, expected a shared array index below 2",
         LD(SH, T_F32, OREG(R_X), 5, OIMM(0)));
    CASE("ld shared type", 0, "shared array 'st' holds i32, expected f32",
         LD(SH, T_F32, OREG(R_X), S_ST, OIMM(0)));
    CASE("float index", 0, "src[0]: register 'x' has type f32, expected an integer-typed value",
         LD(G, T_F32, OREG(R_Y), P_A, OREG(R_X)));
    CASE("bool index", 0, "register 'p' has type bool, expected an integer-typed value",
         ST(SH, T_F32, S_TILE, OREG(R_P), OREG(R_X)));
    CASE("float param index", 0, "parameter 's' has type f32, expected an integer-typed value",
         LD(G, T_F32, OREG(R_Y), P_A, OPAR(P_S)));
    CASE("st value type", 0, "src[1]: register 'k' has type i32, expected an f32 value",
         ST(G, T_F32, P_C, OIMM(0), OREG(R_K)));
    CASE("atom add with third operand", 0, "(only atom.cas takes a third operand)",
         ATOM(HG_ATOMIC_ADD, G, T_F32, ONONE, P_C, OIMM(0), OREG(R_X), OREG(R_Y)));
    CASE("cas missing new value", 0, "src[2] is missing, expected the new i32 value",
         ATOM(HG_ATOMIC_CAS, G, T_I32, OREG(R_K), P_IB, OIMM(0), OREG(R_K), ONONE));
    CASE("atom dst immediate", 0, "dst is an immediate, expected an f32 register or `_`",
         ATOM(HG_ATOMIC_ADD, G, T_F32, OIMM(0), P_C, OIMM(0), OREG(R_X), ONONE));
    CASE("atom dst type", 0, "dst: register 'k' has type i32, expected an f32 register",
         ATOM(HG_ATOMIC_EXCH, G, T_F32, OREG(R_K), P_C, OIMM(0), OREG(R_X), ONONE));

    // Role-specific types.
    CASE("cmp into non-bool", 0, "dst: register 'x' has type f32, expected a bool register",
         INS(HG_OP_CMP, T_F32, HG_CMP_LT, 0, OREG(R_X), OREG(R_X), OREG(R_Y), ONONE));
    CASE("sel non-bool condition", 0, "src[0]: register 'x' has type f32, expected a bool value",
         INS(HG_OP_SEL, T_F32, 0, 0, OREG(R_Y), OREG(R_X), OREG(R_X), OREG(R_Y)));
    CASE("cvt source mismatch", 0, "src[0]: register 'x' has type f32, expected an i32 value",
         INS(HG_OP_CVT, T_F32, T_I32, 0, OREG(R_X), OREG(R_X), ONONE, ONONE));
    CASE("if without condition", 0, "src[0] is missing, expected a bool value",
         CTRL(HG_OP_IF, ONONE), CTRL(HG_OP_ENDIF, ONONE));
    CASE("break non-bool", 1, "src[0]: register 'i' has type u32, expected a bool value",
         CTRL(HG_OP_LOOP, ONONE), CTRL(HG_OP_BREAK, OREG(R_I)), CTRL(HG_OP_ENDLOOP, ONONE));
    CASE("if on special", 0, "%tid.x has type u32, expected a bool value",
         CTRL(HG_OP_IF, OSP(HG_SREG_TID_X)), CTRL(HG_OP_ENDIF, ONONE));

    // Structure.
    CASE("else without if", 0, "`else` without an open `if`", CTRL(HG_OP_ELSE, ONONE));
    CASE("endif without if", 0, "`endif` without an open `if`", CTRL(HG_OP_ENDIF, ONONE));
    CASE("endloop without loop", 0, "`endloop` without an open `loop`", CTRL(HG_OP_ENDLOOP, ONONE));
    CASE("loop closed by endif", 1, "`endif` closes `loop` (instruction 0), expected `endloop`",
         CTRL(HG_OP_LOOP, ONONE), CTRL(HG_OP_ENDIF, ONONE));
    CASE("if closed by endloop", 1, "`endloop` closes `if p` (instruction 0), expected `endif`",
         CTRL(HG_OP_IF, OREG(R_P)), CTRL(HG_OP_ENDLOOP, ONONE));
    CASE("else in loop", 2, "`else` inside `loop` (instruction 1)", CTRL(HG_OP_IF, OREG(R_P)),
         CTRL(HG_OP_LOOP, ONONE), CTRL(HG_OP_ELSE, ONONE), CTRL(HG_OP_ENDLOOP, ONONE),
         CTRL(HG_OP_ENDIF, ONONE));
    CASE("second else", 2, "second `else` for `if p` (instruction 0", CTRL(HG_OP_IF, OREG(R_P)),
         CTRL(HG_OP_ELSE, ONONE), CTRL(HG_OP_ELSE, ONONE), CTRL(HG_OP_ENDIF, ONONE));
    CASE("break outside loop", 1, "`break` outside any loop", CTRL(HG_OP_IF, OREG(R_P)),
         CTRL(HG_OP_BREAK, ONONE), CTRL(HG_OP_ENDIF, ONONE));
    CASE("unclosed if", 3, "`if` is never closed, expected `endif`", CTRL(HG_OP_LOOP, ONONE),
         CTRL(HG_OP_BREAK, ONONE), CTRL(HG_OP_ENDLOOP, ONONE), CTRL(HG_OP_IF, OREG(R_P)));
    CASE("unclosed loop", 0, "`loop` is never closed, expected `endloop`", CTRL(HG_OP_LOOP, ONONE),
         CTRL(HG_OP_BREAK, ONONE));

    // Barrier uniformity.
    CASE("bar under tid if", 3, "bar inside `if p` (instruction 2) whose condition depends on %tid.x",
         INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_I), OSP(HG_SREG_TID_X), ONONE, ONONE),
         CMP_LT_U32(OREG(R_P), OREG(R_I), OIMM(16)), CTRL(HG_OP_IF, OREG(R_P)), BAR,
         CTRL(HG_OP_ENDIF, ONONE));
    CASE("bar under loaded condition", 4, "depends on a load (instruction 0",
         LD(G, T_F32, OREG(R_X), P_A, OIMM(0)),
         INS(HG_OP_CMP, T_F32, HG_CMP_GT, 0, OREG(R_P), OREG(R_X), OIMM(0), ONONE),
         CTRL(HG_OP_IF, OREG(R_P)), CTRL(HG_OP_ELSE, ONONE), BAR, CTRL(HG_OP_ENDIF, ONONE));
    CASE("bar in loop with divergent break", 1, "which lanes may leave at different iterations",
         CTRL(HG_OP_LOOP, ONONE), BAR,
         CMP_LT_U32(OREG(R_P), OSP(HG_SREG_GID_X), OIMM(3)), CTRL(HG_OP_BREAK, OREG(R_P)),
         CTRL(HG_OP_ENDLOOP, ONONE));
    CASE("bar after divergent exit", 4, "after `exit` (instruction 2)",
         CMP_LT_U32(OREG(R_P), OSP(HG_SREG_TID_Y), OIMM(3)), CTRL(HG_OP_IF, OREG(R_P)),
         CTRL(HG_OP_EXIT, ONONE), CTRL(HG_OP_ENDIF, ONONE), BAR);
    // The condition is computed after the bar in the loop body, from a register that only the
    // next iteration sees: needs the fixed point over loop-carried values.
    CASE("loop-carried divergence", 3, "whose condition depends on %tid.x", CTRL(HG_OP_LOOP, ONONE),
         CMP_LT_U32(OREG(R_P), OREG(R_J), OPAR(P_N)), CTRL(HG_OP_IF, OREG(R_P)), BAR,
         CTRL(HG_OP_ENDIF, ONONE), INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_J), OREG(R_I), ONONE, ONONE),
         INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_I), OSP(HG_SREG_TID_X), ONONE, ONONE),
         CTRL(HG_OP_BREAK, OIMM(1)), CTRL(HG_OP_ENDLOOP, ONONE));
    CASE("bar after divergent exit in loop", 1, "inside `loop` (instruction 0)", CTRL(HG_OP_LOOP, ONONE),
         BAR, CTRL(HG_OP_IF, OREG(R_P)), CTRL(HG_OP_EXIT, ONONE), CTRL(HG_OP_ENDIF, ONONE),
         LD(SH, T_I32, OREG(R_K), S_ST, OIMM(0)), INS(HG_OP_CVT, T_BOOL, T_I32, 0, OREG(R_P), OREG(R_K), ONONE, ONONE),
         CTRL(HG_OP_ENDLOOP, ONONE));
    CASE("value written under divergent control", 6, "written under non-uniform control flow",
         INS(HG_OP_CMP, T_U32, HG_CMP_EQ, 0, OREG(R_P), OSP(HG_SREG_TID_X), OIMM(0), ONONE),
         CTRL(HG_OP_IF, OREG(R_P)), INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_J), OIMM(1), ONONE, ONONE),
         CTRL(HG_OP_ENDIF, ONONE), CMP_LT_U32(OREG(R_Z), OREG(R_J), OIMM(1)),
         CTRL(HG_OP_IF, OREG(R_Z)), BAR, CTRL(HG_OP_ENDIF, ONONE));
    CASE("atomic result condition", 3, "depends on an atomic (instruction 0",
         ATOM(HG_ATOMIC_ADD, SH, T_I32, OREG(R_K), S_ST, OIMM(0), OIMM(1), ONONE),
         INS(HG_OP_CMP, T_I32, HG_CMP_EQ, 0, OREG(R_P), OREG(R_K), OIMM(0), ONONE),
         CTRL(HG_OP_IF, OREG(R_P)), BAR, CTRL(HG_OP_ENDIF, ONONE));

    for (int k = 0; k < n; k++) run_case(&cases[k]);
    CHECK_MSG(n >= 40, "only %d builder cases", n);
    printf("builder instruction cases: %d\n", n);
}

// Nesting over the limit: 65 loops.
static void test_nesting(void) {
    hg_prog* p = base_program();
    hg_instr loop = CTRL(HG_OP_LOOP, ONONE), end = CTRL(HG_OP_ENDLOOP, ONONE);
    for (int k = 0; k < HG_MAX_NESTING; k++) hg_prog_emit(p, &loop);
    for (int k = 0; k < HG_MAX_NESTING; k++) hg_prog_emit(p, &end);
    CHECK_OK(hg_prog_validate(p));   // exactly the limit is fine
    hg_prog_free(p);
    p = base_program();
    for (int k = 0; k <= HG_MAX_NESTING; k++) hg_prog_emit(p, &loop);
    for (int k = 0; k <= HG_MAX_NESTING; k++) hg_prog_emit(p, &end);
    CHECK_STATUS(hg_prog_validate(p), HG_ERR_INVALID_PROGRAM);
    CHECK(strstr(hg_last_error(), "instruction 64 (`loop`): nesting depth 65") != NULL);
    hg_prog_free(p);
}

// Uniformity the analysis must accept (bar where every lane provably arrives).
static void test_uniform_accepts(void) {
    bcase ok[] = {
        {"uniform if on ctaid", 5, {MOV_I_CTA, CMP_LT_U32(OREG(R_P), OREG(R_I), OPAR(P_N)),
                                    CTRL(HG_OP_IF, OREG(R_P)), BAR, CTRL(HG_OP_ENDIF, ONONE)}, 0, ""},
        {"uniform loop with uniform break", 7,
         {CTRL(HG_OP_LOOP, ONONE), BAR, INS(HG_OP_ADD, T_U32, 0, 0, OREG(R_J), OREG(R_J), OIMM(1), ONONE),
          CMP_LT_U32(OREG(R_P), OPAR(P_N), OREG(R_J)), CTRL(HG_OP_BREAK, OREG(R_P)),
          CTRL(HG_OP_ENDLOOP, ONONE), BAR}, 0, ""},
        // A divergent if whose body ends before the bar: lanes re-converge at endif.
        {"bar after divergent if", 5, {CMP_LT_U32(OREG(R_P), OSP(HG_SREG_TID_X), OIMM(4)),
                                       CTRL(HG_OP_IF, OREG(R_P)), ST(SH, T_F32, S_TILE, OIMM(0), OIMM(0)),
                                       CTRL(HG_OP_ENDIF, ONONE), BAR}, 0, ""},
        // After a loop with divergent breaks lanes re-converge at endloop.
        {"bar after divergent loop", 5, {CTRL(HG_OP_LOOP, ONONE),
                                         CMP_LT_U32(OREG(R_P), OSP(HG_SREG_TID_X), OIMM(4)),
                                         CTRL(HG_OP_BREAK, OREG(R_P)), CTRL(HG_OP_ENDLOOP, ONONE), BAR}, 0, ""},
        {"uniform exit then bar", 5, {CMP_LT_U32(OREG(R_P), OSP(HG_SREG_NCTAID_X), OIMM(2)),
                                      CTRL(HG_OP_IF, OREG(R_P)), CTRL(HG_OP_EXIT, ONONE),
                                      CTRL(HG_OP_ENDIF, ONONE), BAR}, 0, ""},
        // An inner loop's divergent break does not make the outer loop divergent.
        {"nested loops", 8, {CTRL(HG_OP_LOOP, ONONE), CTRL(HG_OP_LOOP, ONONE),
                             CMP_LT_U32(OREG(R_P), OSP(HG_SREG_TID_X), OIMM(4)),
                             CTRL(HG_OP_BREAK, OREG(R_P)), CTRL(HG_OP_ENDLOOP, ONONE), BAR,
                             CTRL(HG_OP_BREAK, OIMM(1)), CTRL(HG_OP_ENDLOOP, ONONE)}, 0, ""},
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        hg_prog* p = base_program();
        for (int m = 0; m < ok[k].n; m++) hg_prog_emit(p, &ok[k].ins[m]);
        hg_status s = hg_prog_validate(p);
        CHECK_MSG(s == HG_OK, "%s: %s", ok[k].name, hg_last_error());
        hg_prog_free(p);
    }
}

// ---------------------------------------------------------------------------------------------
// Declarations (edited in place: the add_* functions refuse most of these)
// ---------------------------------------------------------------------------------------------

static void expect_decl(hg_prog* p, const char* name, const char* want) {
    hg_clear_error();
    hg_status s = hg_prog_validate(p);
    CHECK_MSG(s == HG_ERR_INVALID_PROGRAM, "%s: got %s (%s)", name, hg_status_string(s),
              hg_last_error());
    CHECK_MSG(strstr(hg_last_error(), want) != NULL, "%s: message \"%s\" lacks \"%s\"", name,
              hg_last_error(), want);
    hg_prog_free(p);
}

static void test_declarations(void) {
    hg_prog* p;
    p = base_program(); p->regs[R_X].dtype = 99;
    expect_decl(p, "reg dtype", "register 'x': dtype 99 is not a valid type");
    p = base_program(); p->params[P_N].dtype = 13;
    expect_decl(p, "param dtype", "parameter 'n': dtype 13 is not a valid type");
    p = base_program(); p->shared[S_TILE].dtype = 200;
    expect_decl(p, "shared dtype", "shared array 'tile': dtype 200");
    p = base_program(); strcpy(p->regs[R_Y].name, "x");
    expect_decl(p, "duplicate reg", "name 'x' is declared twice");
    p = base_program(); strcpy(p->shared[S_ST].name, "n");
    expect_decl(p, "param/shared clash", "name 'n' is declared twice (as parameter and as shared array)");
    p = base_program(); strcpy(p->regs[R_I].name, "9i");
    expect_decl(p, "bad identifier", "register name '9i' is not an identifier");
    p = base_program(); strcpy(p->regs[R_I].name, "f32");
    expect_decl(p, "type name", "register name 'f32' is a reserved word");
    p = base_program(); strcpy(p->params[P_A].name, "_");
    expect_decl(p, "underscore", "parameter name '_' is a reserved word");
    p = base_program(); strcpy(p->regs[R_I].name, "");
    expect_decl(p, "empty name", "register name '' is not an identifier");
    p = base_program(); memset(p->regs[R_I].name, 'a', HG_NAME_MAX);
    expect_decl(p, "unterminated name", "is not terminated");
    p = base_program(); strcpy(p->name, "1k");
    expect_decl(p, "kernel name", "kernel name is not a valid identifier");
    p = base_program(); p->params[P_A].kind = 5;
    expect_decl(p, "param kind", "parameter 'a': kind 5 is unknown");
    p = base_program(); p->params[P_N].is_const = 1;
    expect_decl(p, "const scalar", "parameter 'n': is_const = 1, expected 0, or 1 on a buffer");
    p = base_program(); p->params[P_C].is_const = 2;
    expect_decl(p, "is_const 2", "parameter 'c': is_const = 2");

    p = base_program();
    hg_prog_add_shared(p, "d1", HG_DTYPE_F32, 0, NULL);
    hg_prog_add_shared(p, "d2", HG_DTYPE_I32, 0, NULL);
    expect_decl(p, "two unsized", "shared arrays 'd1' and 'd2' are both unsized");
    p = base_program();   // 64*4 + 16*4 already used
    hg_prog_add_shared(p, "big", HG_DTYPE_F64, (48 * 1024 - 320) / 8 + 1, NULL);
    expect_decl(p, "too much shared", "brings static shared memory to 49160 bytes, expected at most 49152");
    p = base_program();
    hg_prog_add_shared(p, "huge", HG_DTYPE_F64, UINT32_MAX, NULL);
    expect_decl(p, "count*size overflow", "shared array 'huge' brings static shared memory to 34359738680");
    p = base_program();   // exactly 48 KiB is allowed
    hg_prog_add_shared(p, "fits", HG_DTYPE_F64, (48 * 1024 - 320) / 8, NULL);
    CHECK_OK(hg_prog_validate(p));
    hg_prog_free(p);

    // Limits, beyond what hg_prog_add_* lets through.
    p = base_program();
    p->regs = realloc(p->regs, (HG_MAX_REGS + 1) * sizeof *p->regs);
    for (uint32_t r = p->nregs; r <= HG_MAX_REGS; r++) {
        memset(&p->regs[r], 0, sizeof p->regs[r]);
        snprintf(p->regs[r].name, HG_NAME_MAX, "r%u", r);
        p->regs[r].dtype = HG_DTYPE_F32;
    }
    p->nregs = p->cap_regs = HG_MAX_REGS + 1;
    expect_decl(p, "too many registers", "4097 registers, expected at most 4096");
    p = base_program();
    p->params = realloc(p->params, (HG_MAX_PARAMS + 1) * sizeof *p->params);
    for (uint32_t r = p->nparams; r <= HG_MAX_PARAMS; r++) {
        memset(&p->params[r], 0, sizeof p->params[r]);
        snprintf(p->params[r].name, HG_NAME_MAX, "q%u", r);
        p->params[r].kind = HG_PARAM_SCALAR;
    }
    p->nparams = p->cap_params = HG_MAX_PARAMS + 1;
    expect_decl(p, "too many params", "65 parameters, expected at most 64");
    p = base_program();
    p->shared = realloc(p->shared, (HG_MAX_SHARED_ARRAYS + 1) * sizeof *p->shared);
    for (uint32_t r = p->nshared; r <= HG_MAX_SHARED_ARRAYS; r++) {
        memset(&p->shared[r], 0, sizeof p->shared[r]);
        snprintf(p->shared[r].name, HG_NAME_MAX, "s%u", r);
        p->shared[r].count = 1;
    }
    p->nshared = p->cap_shared = HG_MAX_SHARED_ARRAYS + 1;
    expect_decl(p, "too many shared arrays", "17 shared arrays, expected at most 16");

    // 4096 registers with distinct names are fine (and the duplicate check stays fast).
    p = base_program();
    for (uint32_t r = p->nregs; r < HG_MAX_REGS; r++) {
        char nm[16];
        snprintf(nm, sizeof nm, "v%u", r);
        hg_prog_add_reg(p, nm, HG_DTYPE_I64, NULL);
    }
    CHECK(p->nregs == HG_MAX_REGS);
    CHECK_OK(hg_prog_validate(p));
    hg_prog_free(p);
    CHECK_STATUS(hg_prog_validate(NULL), HG_ERR_NULL_POINTER);
}

// A long program with many bars and a divergent region: the analysis stays linear-ish.
static void test_large(void) {
    hg_prog* p = base_program();
    hg_instr body[] = {
        CTRL(HG_OP_LOOP, ONONE),
        INS(HG_OP_ADD, T_U32, 0, 0, OREG(R_J), OREG(R_J), OIMM(1), ONONE),
        CMP_LT_U32(OREG(R_P), OPAR(P_N), OREG(R_J)),
        CTRL(HG_OP_BREAK, OREG(R_P)), BAR, CTRL(HG_OP_ENDLOOP, ONONE)};
    for (int k = 0; k < 20000; k++)
        for (size_t m = 0; m < sizeof body / sizeof body[0]; m++) hg_prog_emit(p, &body[m]);
    CHECK_OK(hg_prog_validate(p));
    // Making the counter divergent at the very end taints every loop.
    hg_instr last = INS(HG_OP_MOV, T_U32, 0, 0, OREG(R_J), OSP(HG_SREG_TID_X), ONONE, ONONE);
    hg_prog_emit(p, &last);
    CHECK_STATUS(hg_prog_validate(p), HG_ERR_INVALID_PROGRAM);
    CHECK(strstr(hg_last_error(), "instruction 4 (`bar`)") != NULL);
    hg_prog_free(p);
}

// Random valid programs validate; the same programs with one field of one instruction made
// certainly invalid are rejected naming that instruction; arbitrary corruption never crashes.
static void test_random_programs(void) {
#ifdef HAVE_RANDOM_PROGRAM
    int bad = 0, checked = 0;
    uint64_t rng = 12345;
    for (uint64_t seed = 1; seed <= 500; seed++) {
        hg_prog* p = hg_test_random_program(seed);
        CHECK_MSG(p != NULL, "random program %" PRIu64 " not generated", seed);
        if (!p) continue;
        hg_status s = hg_prog_validate(p);
        if (s != HG_OK && bad++ < 5)
            fprintf(stderr, "random program %" PRIu64 ": %s\n", seed, hg_last_error());
        CHECK(s == HG_OK);
        checked++;
        if (p->ninstrs == 0) {
            hg_prog_free(p);
            continue;
        }
        // One certain error at a random instruction: the message must name it.
        uint32_t at = (uint32_t)(hg_test_rand(&rng) % p->ninstrs);
        hg_instr saved = p->instrs[at];
        hg_instr* in = &p->instrs[at];
        switch (hg_test_rand(&rng) % 4) {
        case 0: in->op = (uint16_t)(HG_OPCODE_COUNT + hg_test_rand(&rng) % 100); break;
        case 1: in->type = (uint8_t)(HG_DTYPE_COUNT + hg_test_rand(&rng) % 100); break;
        case 2: in->src[2] = (hg_operand){HG_OPERAND_KIND_COUNT, 0, 0}; break;
        default: in->dst = (hg_operand){HG_OPERAND_REG, p->nregs + 7, 0}; break;
        }
        // Each variant breaks instruction `at` itself whatever its opcode; the earlier ones
        // stay valid, so the message must name `at`.
        char want[64];
        snprintf(want, sizeof want, "instruction %u (`", at);
        s = hg_prog_validate(p);
        CHECK_MSG(s == HG_ERR_INVALID_PROGRAM && strstr(hg_last_error(), want),
                  "seed %" PRIu64 ": corrupting instruction %u gave %s: %s", seed, at,
                  hg_status_string(s), hg_last_error());
        p->instrs[at] = saved;
        // Arbitrary bit flips: OK or INVALID_PROGRAM, never a crash (ASan/UBSan builds).
        for (int m = 0; m < 20; m++) {
            uint32_t w = (uint32_t)(hg_test_rand(&rng) % p->ninstrs);
            hg_instr keep = p->instrs[w];
            unsigned char* bytes = (unsigned char*)&p->instrs[w];
            int flips = 1 + (int)(hg_test_rand(&rng) % 3);
            for (int f = 0; f < flips; f++) {
                size_t byte = (size_t)(hg_test_rand(&rng) % sizeof(hg_instr));
                bytes[byte] ^= (unsigned char)(1u << (hg_test_rand(&rng) % 8));
            }
            s = hg_prog_validate(p);
            CHECK_MSG(s == HG_OK || s == HG_ERR_INVALID_PROGRAM, "bit flip gave %s",
                      hg_status_string(s));
            p->instrs[w] = keep;
        }
        hg_prog_free(p);
    }
    printf("random programs validated: %d\n", checked);
#else
    printf("tests/common/random_program.h not present: random programs skipped\n");
#endif
}

int main(void) {
    test_builder_valid();
    test_builder_instructions();
    test_nesting();
    test_uniform_accepts();
    test_declarations();
    test_large();
    test_invalid_corpus();
    test_valid_corpus();
    test_random_programs();
    return hg_test_finish("test_validator");
}
