// Atlas ISA text assembler/printer, binary format and content hash: round trips of the examples,
// of programs covering every opcode/type/modifier/special register/immediate form and of random
// programs; exact immediate bits against hand-computed IEEE encodings; parser errors; binary
// layout against a hand-assembled payload, corruption and truncation; pinned hash.
#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include "base/dtype.h"
#include "hg_test.h"
#include "isa/program.h"
#include "random_program.h"

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

// Parses a copy of text in a buffer of exactly len bytes (no NUL), so reading past len is an
// AddressSanitizer error.
static hg_status parse_n(const char* text, size_t len, hg_prog** out) {
    char* copy = malloc(len ? len : 1);
    if (len) memcpy(copy, text, len);
    hg_status s = hg_prog_parse(copy, len, out);
    free(copy);
    return s;
}

static hg_prog* parse_ok(const char* text) {
    hg_prog* p = NULL;
    hg_status s = parse_n(text, strlen(text), &p);
    CHECK_MSG(s == HG_OK, "parse failed: %s\n--- text ---\n%s", hg_last_error(), text);
    return s == HG_OK ? p : NULL;
}

static char* print(const hg_prog* p) {
    char* t = NULL;
    size_t n = 0;
    CHECK_OK(hg_prog_print(p, &t, &n));
    if (t) CHECK(strlen(t) == n);
    return t;
}

// print(parse(print(p))) == print(p) byte-exact, parse(print(p)) == p, and the binary form
// round-trips with the same hash.
static int roundtrip(const hg_prog* p, const char* label) {
    int ok = 1;
    char* t1 = print(p);
    if (!t1) return 0;
    hg_prog* q = NULL;
    hg_status s = parse_n(t1, strlen(t1), &q);
    CHECK_MSG(s == HG_OK, "%s: reparse failed: %s\n%s", label, hg_last_error(), t1);
    if (s == HG_OK) {
        bool eq = hg_prog_equal(p, q);
        CHECK_MSG(eq, "%s: parse(print(p)) != p\n%s", label, t1);
        char* t2 = print(q);
        CHECK_MSG(t2 && strcmp(t1, t2) == 0, "%s: printing is not stable\n%s\n---\n%s", label, t1,
                  t2 ? t2 : "");
        ok = eq && t2 && strcmp(t1, t2) == 0;
        free(t2);
        hg_prog_free(q);
    } else {
        ok = 0;
    }
    uint8_t* bin = NULL;
    size_t blen = 0;
    CHECK_OK(hg_prog_save(p, &bin, &blen));
    hg_prog* r = NULL;
    s = hg_prog_load(bin, blen, &r);
    CHECK_MSG(s == HG_OK, "%s: load(save(p)) failed: %s", label, hg_last_error());
    if (r) {
        CHECK_MSG(hg_prog_equal(p, r), "%s: load(save(p)) != p", label);
        CHECK(hg_prog_hash(p) == hg_prog_hash(r));
        hg_prog_free(r);
    }
    free(bin);
    free(t1);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Examples
// ---------------------------------------------------------------------------------------------
static char* read_file(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char* buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static void test_examples(void) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", hg_test_source_path("examples"));
    DIR* d = opendir(dir);
    if (!d) {
        printf("note: no examples directory at %s\n", dir);
        return;
    }
    int count = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".hasm") != 0) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = 0;
        char* text = read_file(path, &len);
        CHECK_MSG(text != NULL, "cannot read %s", path);
        if (!text) continue;
        hg_prog* p = NULL;
        hg_status s = parse_n(text, len, &p);
        CHECK_MSG(s == HG_OK, "%s: %s", path, hg_last_error());
        if (p) {
            roundtrip(p, e->d_name);
            hg_prog_free(p);
        }
        free(text);
        count++;
    }
    closedir(d);
    printf("examples: %d .hasm files round-tripped\n", count);
}

// ---------------------------------------------------------------------------------------------
// Every opcode, type, modifier and special register
// ---------------------------------------------------------------------------------------------
typedef struct text {
    char* s;
    size_t len, cap;
} text;

static void add(text* t, const char* fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->cap + (size_t)n + 1) * 2;
        t->s = realloc(t->s, t->cap);
    }
    memcpy(t->s + t->len, line, (size_t)n + 1);
    t->len += (size_t)n;
}

static const char* tn(int t) { return hg_dtype_name((hg_dtype)t); }

// A literal of type t that exercises one of the immediate forms.
static const char* literal(int t, int variant) {
    static const char* ints[] = {"0", "-1", "0x7f", "+3"};
    static const char* uints[] = {"0", "1", "0xff", "200"};
    static const char* floats[] = {"1.5", "-0.0", "inf", "nan"};
    if (t == HG_DTYPE_BOOL) return variant & 1 ? "true" : "false";
    if (hg_dtype_is_signed_int(t)) return ints[variant & 3];
    if (hg_dtype_is_unsigned_int(t)) return uints[variant & 3];
    if (t == HG_DTYPE_F32 && variant == 5) return "0f7fa00001";
    if (t == HG_DTYPE_F64 && variant == 5) return "0d7ff0000000000001";
    if ((t == HG_DTYPE_F16 || t == HG_DTYPE_BF16) && variant == 5) return "0h7c01";
    return floats[variant & 3];
}

static char* all_ops_text(void) {
    text t = {0};
    add(&t, ".kernel all_ops  // every instruction form\n");
    for (int d = 0; d < HG_DTYPE_COUNT; d++) {
        add(&t, ".param g_%s: global %s\n", tn(d), tn(d));
        add(&t, ".param c_%s: global const %s\n", tn(d), tn(d));
        add(&t, ".param s_%s: %s\n", tn(d), tn(d));
    }
    for (int d = 0; d < 14 && d < HG_DTYPE_COUNT; d++) add(&t, ".shared sh_%s: %s[16]\n", tn(d), tn(d));
    add(&t, ".shared dyn: f32[]\n");
    for (int d = 0; d < HG_DTYPE_COUNT; d++) add(&t, ".reg %s a_%s, b_%s,z_%s\n", tn(d), tn(d), tn(d), tn(d));
    for (int d = 0; d < HG_DTYPE_COUNT; d++)   // register runs of ldv / stv
        for (int r = 0; r < 16; r++) add(&t, ".reg %s v%d_%s\n", tn(d), r, tn(d));
    add(&t, "\n");
    int v = 0;
    for (unsigned op = 0; op < HG_OPCODE_COUNT; op++) {
        const hg_opinfo* info = hg_opinfo_of(op);
        if (info->op_class == HG_CLASS_CONTROL || info->op_class == HG_CLASS_SYNC ||
            info->op_class == HG_CLASS_MEMORY || info->op_class == HG_CLASS_WARP ||
            op == HG_OP_CVT || op == HG_OP_CMP)
            continue;
        for (int d = 0; d < HG_DTYPE_COUNT; d++) {
            if (!(info->types & HG_TS(d))) continue;
            const char* T = tn(d);
            v++;
            // Operands by role: dst register, sources alternate register / scalar / immediate.
            add(&t, "    %s.%s a_%s", info->name, T, T);
            for (int k = 0; k < 3; k++) {
                if (info->src[k] == HG_ROLE_NONE) continue;
                if (info->src[k] == HG_ROLE_BOOL) add(&t, ", %s", v % 2 ? "a_bool" : "true");
                else if ((v + k) % 3 == 0) add(&t, ", s_%s", T);
                else if ((v + k) % 3 == 1) add(&t, ", b_%s", T);
                else add(&t, ", %s", literal(d, v + k));
            }
            add(&t, "\n");
        }
    }
    static const char* ccs[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    for (int cc = 0; cc < 6; cc++)
        for (int d = 0; d < HG_DTYPE_COUNT; d++)
            add(&t, "cmp.%s.%s a_bool, a_%s, %s\n", ccs[cc], tn(d), tn(d), literal(d, cc));
    for (int dd = 0; dd < HG_DTYPE_COUNT; dd++)
        for (int sd = 0; sd < HG_DTYPE_COUNT; sd++)
            add(&t, "cvt.%s.%s a_%s, %s\n", tn(dd), tn(sd), tn(dd), (dd + sd) % 2 ? literal(sd, dd) : "b_u32");
    for (int d = 0; d < HG_DTYPE_COUNT; d++) {
        add(&t, "ld.global.%s a_%s, c_%s[a_i32]\n", tn(d), tn(d), tn(d));
        add(&t, "ld.shared.%s a_%s, sh_%s[%%tid.x]\n", tn(d), tn(d), tn(d));
        add(&t, "st.global.%s g_%s[5], b_%s\n", tn(d), tn(d), tn(d));
        add(&t, "st.shared.%s sh_%s[-1], %s\n", tn(d), tn(d), literal(d, d));
    }
    for (int d = 0; d < HG_DTYPE_COUNT; d++)
        for (unsigned w = 2; w * hg_dtype_size((hg_dtype)d) <= 16; w *= 2) {
            const char* sp = (d + w) % 2 ? "shared" : "global";
            const char* sl = (d + w) % 2 ? "sh" : "g";
            add(&t, "ldv.%s.v%u.%s v0_%s, %s_%s[%s]\n", sp, w, tn(d), tn(d), sl, tn(d),
                w == 4 ? "a_i64" : "7");
            add(&t, "stv.%s.v%u.%s %s_%s[a_u16], v%u_%s\n", sp, w, tn(d), sl, tn(d), 16 - w,
                tn(d));
        }
    static const char* aops[] = {"add", "min", "max", "exch", "cas"};
    for (int sp = 0; sp < 2; sp++)
        for (int a = 0; a < 5; a++)
            for (int d = 0; d < HG_DTYPE_COUNT; d++) {
                if (!(hg_atomic_types((unsigned)a) & HG_TS(d))) continue;
                char slot[32];
                snprintf(slot, sizeof slot, sp ? "sh_%s" : "g_%s", tn(d));
                add(&t, "atom.%s.%s.%s %s%s, %s[a_u64], b_%s%s%s\n", sp ? "shared" : "global",
                    aops[a], tn(d), d % 2 ? "_" : "a_", d % 2 ? "" : tn(d), slot, tn(d),
                    a == 4 ? ", " : "", a == 4 ? literal(d, 1) : "");
            }
    add(&t, "atom.shared.add.f32 _, dyn[0x10], 1e-3\n");
    for (int s = 0; s < HG_SREG_COUNT; s++) add(&t, "mov.u32 a_u32, %s\n", hg_special_name((unsigned)s));
    static const char* modes[] = {"bfly", "down", "up", "idx"};
    for (int m = 0; m < 4; m++)
        for (int d = 0; d < HG_DTYPE_COUNT; d++)
            add(&t, "shfl.%s.%s a_%s, b_%s, %s\n", modes[m], tn(d), tn(d), tn(d),
                d % 3 == 0 ? "a_u32" : d % 3 == 1 ? "s_u32" : "17");
    add(&t, "bar\nfence.global\nfence.shared\n");
    add(&t, "if a_bool\n  loop\n    break a_bool ; conditional\n    if true\n      break\n    else\n"
            "      exit   # all the comment forms\n    endif\n  endloop\nelse\n  bar\nendif\n"
            "if s_bool\nendif\nloop\nbreak false\nendloop\n");
    add(&t, "mov.f16 a_f16, 0h3c00\nmov.bf16 a_bf16, 0h3f80\nmov.f64 a_f64, 0d3ff0000000000000\n");
    return t.s;
}

static void test_all_ops(void) {
    char* src = all_ops_text();
    hg_prog* p = parse_ok(src);
    if (p) {
        int seen[HG_OPCODE_COUNT] = {0};
        unsigned types_seen[HG_OPCODE_COUNT] = {0};
        int sregs = 0;
        for (uint32_t i = 0; i < p->ninstrs; i++) {
            seen[p->instrs[i].op] = 1;
            types_seen[p->instrs[i].op] |= 1u << p->instrs[i].type;
            if (p->instrs[i].src[0].kind == HG_OPERAND_SPECIAL) sregs |= 1 << p->instrs[i].src[0].index;
        }
        for (unsigned op = 0; op < HG_OPCODE_COUNT; op++) {
            CHECK_MSG(seen[op], "opcode %s not covered", hg_opinfo_of(op)->name);
            const hg_opinfo* info = hg_opinfo_of(op);
            if (info->typed && op != HG_OP_ATOM)
                CHECK_MSG((types_seen[op] & info->types) == info->types, "%s: not all types", info->name);
        }
        CHECK(sregs == (1 << HG_SREG_COUNT) - 1);
        roundtrip(p, "all_ops");
        // Spot checks of the decoded fields.
        const hg_instr* last = &p->instrs[p->ninstrs - 1];
        CHECK(last->op == HG_OP_MOV && last->type == HG_DTYPE_F64 &&
              last->src[0].bits == UINT64_C(0x3ff0000000000000));
        char* t = print(p);
        CHECK(t && strstr(t, "\n        loop\n            break a_bool\n") != NULL);
        CHECK(t && strstr(t, "    atom.shared.add.f32 _, dyn[16], 0.001\n") != NULL);
        CHECK(t && strstr(t, "    cvt.f16.u32 a_f16, b_u32\n") != NULL);
        CHECK(t && strstr(t, ".param c_f32: global const f32\n.param s_f32: f32\n") != NULL);
        CHECK(t && strstr(t, ".shared dyn: f32[]\n.reg bool a_bool\n.reg bool b_bool\n") != NULL);
        CHECK(t && strncmp(t, ".kernel all_ops\n.param g_bool: global bool\n", 43) == 0);
        free(t);
        // Every instruction's one-line text is the printed line without indentation.
        char buf[256];
        CHECK(strcmp(hg_instr_text(p, p->ninstrs - 1, buf, sizeof buf), "mov.f64 a_f64, 1") == 0);
        hg_prog_free(p);
    }
    free(src);
}

// ---------------------------------------------------------------------------------------------
// Immediates: exact bits (hand-computed IEEE encodings) and canonical text
// ---------------------------------------------------------------------------------------------
typedef struct imm_case {
    int type;
    const char* lit;
    uint64_t bits;
    const char* printed;   // NULL: only check that it round-trips
} imm_case;

static const imm_case imm_cases[] = {
    {HG_DTYPE_BOOL, "true", 1, "true"}, {HG_DTYPE_BOOL, "false", 0, "false"},
    {HG_DTYPE_I8, "-128", 0x80, "-128"}, {HG_DTYPE_I8, "127", 0x7f, "127"},
    {HG_DTYPE_I8, "0xff", 0xff, "-1"}, {HG_DTYPE_I8, "-0x80", 0x80, "-128"},
    {HG_DTYPE_U8, "255", 0xff, "255"}, {HG_DTYPE_U8, "-0", 0, "0"},
    {HG_DTYPE_I16, "-32768", 0x8000, "-32768"}, {HG_DTYPE_I16, "32767", 0x7fff, "32767"},
    {HG_DTYPE_U16, "65535", 0xffff, "65535"},
    {HG_DTYPE_I32, "-2147483648", 0x80000000u, "-2147483648"},
    {HG_DTYPE_I32, "2147483647", 0x7fffffff, "2147483647"}, {HG_DTYPE_I32, "+7", 7, "7"},
    {HG_DTYPE_U32, "4294967295", 0xffffffffu, "4294967295"},
    {HG_DTYPE_U32, "0xFFFFFFFF", 0xffffffffu, "4294967295"},
    {HG_DTYPE_I64, "-9223372036854775808", UINT64_C(0x8000000000000000), "-9223372036854775808"},
    {HG_DTYPE_I64, "9223372036854775807", UINT64_C(0x7fffffffffffffff), "9223372036854775807"},
    {HG_DTYPE_U64, "18446744073709551615", UINT64_MAX, "18446744073709551615"},
    {HG_DTYPE_U64, "0xffffffffffffffff", UINT64_MAX, "18446744073709551615"},
    {HG_DTYPE_F32, "1.5", 0x3fc00000u, "1.5"}, {HG_DTYPE_F32, "-0.0", 0x80000000u, "-0"},
    {HG_DTYPE_F32, "0", 0, "0"}, {HG_DTYPE_F32, "1", 0x3f800000u, "1"},
    {HG_DTYPE_F32, "0.1", 0x3dcccccdu, "0.1"}, {HG_DTYPE_F32, "inf", 0x7f800000u, "inf"},
    {HG_DTYPE_F32, "-inf", 0xff800000u, "-inf"}, {HG_DTYPE_F32, "nan", 0x7fc00000u, "0f7fc00000"},
    {HG_DTYPE_F32, "-nan", 0xffc00000u, "0fffc00000"},
    {HG_DTYPE_F32, "0f7fa00001", 0x7fa00001u, "0f7fa00001"},  // signalling NaN payload kept
    {HG_DTYPE_F32, "1e-45", 0x00000001u, "1e-45"},               // smallest subnormal
    {HG_DTYPE_F32, "1.17549435e-38", 0x00800000u, "1.1754944e-38"},
    {HG_DTYPE_F32, "3.40282347e+38", 0x7f7fffffu, "3.4028235e+38"},
    {HG_DTYPE_F32, "16777217", 0x4b800000u, "16777216"},        // ties to even
    {HG_DTYPE_F32, "1e10", 0x501502f9u, "1e+10"},
    {HG_DTYPE_F32, "0.333333343", 0x3eaaaaabu, "0.33333334"},
    {HG_DTYPE_F32, ".5", 0x3f000000u, "0.5"}, {HG_DTYPE_F32, "2.", 0x40000000u, "2"},
    {HG_DTYPE_F64, "0.1", UINT64_C(0x3fb999999999999a), "0.1"},
    {HG_DTYPE_F64, "-0.0", UINT64_C(0x8000000000000000), "-0"},
    {HG_DTYPE_F64, "5e-324", 1, "5e-324"},
    {HG_DTYPE_F64, "1.7976931348623157e308", UINT64_C(0x7fefffffffffffff), "1.7976931348623157e+308"},
    {HG_DTYPE_F64, "nan", UINT64_C(0x7ff8000000000000), "0d7ff8000000000000"},
    {HG_DTYPE_F64, "0d7ff0000000000001", UINT64_C(0x7ff0000000000001), "0d7ff0000000000001"},
    {HG_DTYPE_F64, "-inf", UINT64_C(0xfff0000000000000), "-inf"},
    {HG_DTYPE_F64, "0.30000000000000004", UINT64_C(0x3fd3333333333334), "0.30000000000000004"},
    {HG_DTYPE_F16, "1", 0x3c00, "1"}, {HG_DTYPE_F16, "65504", 0x7bff, "65504"},
    {HG_DTYPE_F16, "-0.0", 0x8000, "-0"}, {HG_DTYPE_F16, "5.9604645e-08", 0x0001, "6e-08"},
    {HG_DTYPE_F16, "0.1", 0x2e66, "0.1"}, {HG_DTYPE_F16, "nan", 0x7e00, "0h7e00"},
    {HG_DTYPE_F16, "-inf", 0xfc00, "-inf"}, {HG_DTYPE_F16, "0h3c00", 0x3c00, "1"},
    {HG_DTYPE_F16, "0h7c01", 0x7c01, "0h7c01"}, {HG_DTYPE_F16, "0.333", 0x3554, NULL},
    {HG_DTYPE_BF16, "1", 0x3f80, "1"}, {HG_DTYPE_BF16, "0.1", 0x3dcd, "0.1"},
    {HG_DTYPE_BF16, "nan", 0x7fc0, "0h7fc0"}, {HG_DTYPE_BF16, "-0.0", 0x8000, "-0"},
    {HG_DTYPE_BF16, "0h7f7f", 0x7f7f, NULL}, {HG_DTYPE_BF16, "0h0001", 0x0001, NULL},
};

static void test_immediates(void) {
    for (size_t i = 0; i < sizeof imm_cases / sizeof imm_cases[0]; i++) {
        const imm_case* c = &imm_cases[i];
        char src[256];
        snprintf(src, sizeof src, ".kernel k\n.reg %s x\nmov.%s x, %s\n", tn(c->type), tn(c->type), c->lit);
        hg_prog* p = parse_ok(src);
        if (!p) continue;
        CHECK_MSG(p->instrs[0].src[0].kind == HG_OPERAND_IMM && p->instrs[0].src[0].bits == c->bits,
                  "%s %s: bits 0x%llx, want 0x%llx", tn(c->type), c->lit,
                  (unsigned long long)p->instrs[0].src[0].bits, (unsigned long long)c->bits);
        char buf[128], want[128];
        hg_instr_text(p, 0, buf, sizeof buf);
        if (c->printed) {
            snprintf(want, sizeof want, "mov.%s x, %s", tn(c->type), c->printed);
            CHECK_MSG(strcmp(buf, want) == 0, "printed '%s', want '%s'", buf, want);
        }
        roundtrip(p, c->lit);
        hg_prog_free(p);
    }
    // Shortest round trip: for random f32/f64/f16/bf16 bits the printed literal parses back to
    // the same bits, and one digit less would not.
    uint64_t rng = 42;
    static const int ftypes[] = {HG_DTYPE_F16, HG_DTYPE_BF16, HG_DTYPE_F32, HG_DTYPE_F64};
    int bad = 0;
    for (int i = 0; i < 4000; i++) {
        int t = ftypes[i % 4];
        uint64_t bits = hg_test_random_imm(&rng, t);
        hg_prog* p = hg_prog_new("k");
        hg_prog_add_reg(p, "x", (hg_dtype)t, NULL);
        hg_instr in;
        memset(&in, 0, sizeof in);
        in.op = HG_OP_MOV;
        in.type = (uint8_t)t;
        in.dst = hg_reg(0);
        in.src[0] = hg_imm_bits(bits);
        hg_prog_emit(p, &in);
        if (!roundtrip(p, "random float")) bad++;
        hg_prog_free(p);
    }
    CHECK_MSG(bad == 0, "%d random float immediates did not round-trip", bad);
}

// ---------------------------------------------------------------------------------------------
// Parser errors
// ---------------------------------------------------------------------------------------------
typedef struct err_case {
    const char* text;
    int line;
} err_case;

#define K ".kernel k\n"
#define KR ".kernel k\n.param a: global u32\n.param n: u32\n.shared t: u32[4]\n.reg u32 x\n.reg u8 b\n"
static const err_case err_cases[] = {
    {"", 1},
    {"// only a comment\n\n", 2},
    {"mov.u32 x, 1\n", 1},
    {".reg u32 x\n", 1},
    {K ".reg u32 x\nmov.u32 x, y\n", 3},
    {K ".reg u32 x\nfoo.u32 x, 1\n", 3},
    {KR "mov.u8 b, 300\n", 7},
    {KR "mov.u8 b, -1\n", 7},
    {KR "mov.u8 b, 0x100\n", 7},
    {KR "add.u32 x, x\n", 7},
    {KR "add.u32 x, x, x, x\n", 7},
    {K ".reg u32 x\n.reg u32 x\n", 3},
    {K ".reg u32 x\nmov.u32 x, 1\n.reg u32 y\n", 4},
    {K ".reg f33 x\n", 2},
    {KR "mov.q32 x, 1\n", 7},
    {KR "cmp.xx.u32 b, x, x\n", 7},
    {KR "ld.global.u32 x, n[0]\n", 7},
    {KR "ld.global.u32 x, t[0]\n", 7},
    {KR "ld.shared.u32 x, a[0]\n", 7},
    {KR "ld.global.u32 x, a[0\n", 7},
    {KR "ld.global.u32 x, a\n", 7},
    {K ".kernel j\n", 2},
    {".kernel 9k\n", 1},
    {K ".reg u32 inf\n", 2},
    {K ".reg u32 f32\n", 2},
    {K ".reg u32 a123456789012345678901234567890123456789012345678901234567890123\n", 2},
    {K ".shared t: u32[0]\n", 2},
    {K ".shared t: u32[4\n", 2},
    {K ".shared t: u32[4294967296]\n", 2},
    {K ".param a global u32\n", 2},
    {K ".reg u32 x\n.param a: u32\n", 3},
    {K ".shared t: u32[4]\n.param a: u32\n", 3},
    {KR "mov.u32 x, %foo.x\n", 7},
    {KR "mov.u32 x, 1 junk\n", 7},
    {K ".reg f32 x\nmov.f32 x, 1.5.5\n", 3},
    {K ".reg f32 x\nmov.f32 x, 1e39\n", 3},
    {K ".reg f32 x\nmov.f32 x, 0d3ff0000000000000\n", 3},
    {K ".reg f32 x\nmov.f32 x, 0f3f80000\n", 3},
    {K ".reg f32 x\nmov.f32 x, 0x10\n", 3},
    {K ".reg f32 x\nmov.f32 x, infinity\n", 3},
    {K ".reg f32 x\nmov.f32 x, 1e\n", 3},
    {K ".reg f16 x\nmov.f16 x, 65520\n", 3},
    {K ".reg bool x\nmov.bool x, 1\n", 3},
    {K ".reg i32 x\nmov.i32 x, 1.5\n", 3},
    {K ".reg i8 x\nmov.i8 x, 128\n", 3},
    {K ".reg i8 x\nmov.i8 x, -129\n", 3},
    {K ".reg u64 x\nmov.u64 x, 18446744073709551616\n", 3},
    {K ".reg i32 x\nmov.i32 x, --1\n", 3},
    {"\x01", 1},
    {K "\x80\n", 2},
    {K ".reg u32 x\nmov.u32 x, 1\x7f\n", 3},
    {KR "atom.global.add.u32 x, a[0], 1, 2\n", 7},
    {KR "atom.global.cas.u32 x, a[0], 1\n", 7},
    {KR "atom.local.add.u32 x, a[0], 1\n", 7},
    {KR "atom.global.sub.u32 x, a[0], 1\n", 7},
    {KR "mov.u32 _, 1\n", 7},
    {KR "mov.u32 x, a\n", 7},
    {KR "mov.u32 x, t\n", 7},
    {KR "mov.u32.u32 x, 1\n", 7},
    {KR "mov x, 1\n", 7},
    {KR "fence\n", 7},
    {KR "fence.local\n", 7},
    {KR "bar.sync\n", 7},
    {K ".bogus\n", 2},
    {K "if\n", 2},
    {KR "mov.u32 x,, 1\n", 7},
    {KR "mov..u32 x, 1\n", 7},
    {".kernel k extra\n", 1},
    {KR "st.global.u32 a[0]\n", 7},
    {KR "ld.global.u32 x, a[1.5]\n", 7},
    {KR "break x x\n", 7},
    {K ":\n", 2},
    {K ".reg u32 x y\n", 2},
    {K ".param a: global const\n", 2},
};

static void test_errors(void) {
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
        const err_case* c = &err_cases[i];
        hg_prog* p = NULL;
        size_t len = strlen(c->text);
        hg_status s = parse_n(c->text, len, &p);
        CHECK_MSG(s == HG_ERR_PARSE, "case %zu: got %s for\n%s", i, hg_status_string(s), c->text);
        if (s == HG_OK) hg_prog_free(p);
        char want[32];
        snprintf(want, sizeof want, "line %d, column ", c->line);
        const char* msg = hg_last_error();
        CHECK_MSG(strncmp(msg, want, strlen(want)) == 0 && strstr(msg, "expected") != NULL,
                  "case %zu: message '%s' does not start with '%s' or lacks 'expected'", i, msg, want);
    }
    // A specific message, with the column of the offending token.
    hg_prog* p = NULL;
    CHECK_STATUS(parse_n(KR "mov.u8 b, 300\n", strlen(KR "mov.u8 b, 300\n"), &p), HG_ERR_PARSE);
    CHECK_MSG(strstr(hg_last_error(), "line 7, column 11: immediate '300' is out of range for u8, "
                     "expected 0..255") != NULL, "%s", hg_last_error());
    CHECK_STATUS(hg_prog_parse(NULL, 0, &p), HG_ERR_PARSE);  // empty text: no kernel
}

// Prefixes and byte mutations of a valid text: either a program or a parse error, never a crash
// (ASan/UBSan builds turn any overrun into a failure).
static void test_mutations(void) {
    char* src = all_ops_text();
    size_t len = strlen(src);
    int ok = 0, err = 0;
    for (size_t n = 0; n <= len; n += (n < 2000 ? 1 : 37)) {
        hg_prog* p = NULL;
        hg_status s = parse_n(src, n, &p);
        if (s == HG_OK) ok++, hg_prog_free(p);
        else if (s == HG_ERR_PARSE) err++;
        else CHECK_MSG(0, "prefix %zu: unexpected status %s", n, hg_status_string(s));
    }
    uint64_t rng = 7;
    static const char bytes[] = " ,:[]%.-+0x9_\n\t;#/\x00\xff\x80" "fnh";
    char* m = malloc(len);
    for (int i = 0; i < 3000; i++) {
        memcpy(m, src, len);
        for (int k = 0; k < 3; k++) m[hg_test_rand(&rng) % len] = bytes[hg_test_rand(&rng) % (sizeof bytes - 1)];
        hg_prog* p = NULL;
        hg_status s = parse_n(m, len, &p);
        if (s == HG_OK) {
            ok++;
            char* t = print(p);  // whatever parsed must print and reparse to the same program
            hg_prog* q = NULL;
            if (t) CHECK_MSG(parse_n(t, strlen(t), &q) == HG_OK && hg_prog_equal(p, q), "%s", hg_last_error());
            hg_prog_free(q);
            free(t);
            hg_prog_free(p);
        } else {
            CHECK(s == HG_ERR_PARSE);
            err++;
        }
    }
    free(m);
    CHECK(ok > 0 && err > 0);
    free(src);
}

// ---------------------------------------------------------------------------------------------
// Random programs
// ---------------------------------------------------------------------------------------------
static void test_random(void) {
    int bad = 0, n = 0;
    for (uint64_t seed = 1; seed <= 600; seed++) {
        hg_prog* p = hg_test_random_program(seed);
        CHECK(p != NULL);
        if (!p) continue;
        char label[32];
        snprintf(label, sizeof label, "random seed %llu", (unsigned long long)seed);
        if (!roundtrip(p, label)) bad++;
        // Deterministic: the same seed gives the same program.
        hg_prog* again = hg_test_random_program(seed);
        CHECK(again && hg_prog_equal(p, again));
        hg_prog_free(again);
        hg_prog_free(p);
        n++;
    }
    CHECK_MSG(bad == 0, "%d of %d random programs failed to round-trip", bad, n);
}

// Invalid programs (as the validator will see them) still print without crashing.
static void test_print_invalid(void) {
    hg_prog* p = hg_prog_new("bad");
    hg_prog_add_reg(p, "x", HG_DTYPE_U32, NULL);
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = HG_OP_ENDIF;
    hg_prog_emit(p, &in);          // unbalanced: depth clamps at 0
    in.op = 999;
    hg_prog_emit(p, &in);
    in.op = HG_OP_ADD;
    in.type = 77;
    in.dst = hg_reg(5);
    in.src[0].kind = 9;
    in.src[1] = hg_param(3);
    hg_prog_emit(p, &in);
    memset(&in, 0, sizeof in);
    in.op = HG_OP_LD;
    in.aux = 7;
    in.type = HG_DTYPE_U32;
    in.mem = 4;
    in.src[0] = hg_sreg((hg_special)40);
    hg_prog_emit(p, &in);
    in.op = HG_OP_CMP;
    in.aux = 9;
    hg_prog_emit(p, &in);
    in.op = HG_OP_ATOM;
    in.aux = 0x39;
    hg_prog_emit(p, &in);
    in.op = HG_OP_MOV;
    in.type = HG_DTYPE_BOOL;
    in.src[0] = hg_imm_bits(2);
    hg_prog_emit(p, &in);
    char* t = print(p);
    CHECK(t && strstr(t, "\n    endif\n    <bad opcode 999>\n") != NULL);
    CHECK(t && strstr(t, "add.<bad type 77> <bad register 5>, <bad operand kind 9>, <bad parameter 3>") != NULL);
    CHECK(t && strstr(t, "ld.<bad space 7>.u32 _, <bad slot 4>[<bad special 40>]") != NULL);
    CHECK(t && strstr(t, "cmp.<bad cmp 9>.u32") != NULL);
    CHECK(t && strstr(t, "atom.<bad space 3>.<bad atomic op 9>.u32") != NULL);
    CHECK(t && strstr(t, "mov.bool _, <bad bool 0x2>") != NULL);
    free(t);
    char small[8];
    CHECK(strlen(hg_instr_text(p, 2, small, sizeof small)) == 7);
    char buf[64];
    CHECK(strcmp(hg_instr_text(p, 100, buf, sizeof buf), "<no instruction 100>") == 0);
    hg_prog_free(p);
}

// ---------------------------------------------------------------------------------------------
// Binary format and hash
// ---------------------------------------------------------------------------------------------

// Independent references: bitwise CRC-32 (IEEE) and FNV-1a 64.
static uint32_t ref_crc32(const uint8_t* p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static uint64_t ref_fnv(const uint8_t* p, size_t n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

static uint32_t le32(const uint8_t* b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

// .kernel k / .param n: u32 / .reg u32 x / mov.u32 x, n  — built with the builder.
static hg_prog* tiny_program(void) {
    hg_prog* p = hg_prog_new("k");
    hg_prog_add_param(p, "n", HG_PARAM_SCALAR, HG_DTYPE_U32, 0, NULL);
    hg_prog_add_reg(p, "x", HG_DTYPE_U32, NULL);
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = HG_OP_MOV;
    in.type = HG_DTYPE_U32;
    in.dst = hg_reg(0);
    in.src[0] = hg_param(0);
    hg_prog_emit(p, &in);
    return p;
}

static void test_binary_layout(void) {
    CHECK(ref_crc32((const uint8_t*)"123456789", 9) == 0xCBF43926u);  // the CRC-32 check value
    hg_prog* p = tiny_program();
    uint8_t want[] = {
        1, 'k',                         // name
        1, 0, 0, 0, 1, 'n', 1, 7, 0,    // 1 param: "n", scalar, u32, not const
        0, 0, 0, 0,                     // 0 shared
        1, 0, 0, 0, 1, 'x', 7,          // 1 reg: "x" u32
        1, 0, 0, 0,                     // 1 instruction
        0, 0, 7, 0, 0, 0, 0, 0,         // op mov, type u32, aux 0, mem 0
        1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   // dst: reg 0
        4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   // src0: param 0
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    };
    uint8_t* bin = NULL;
    size_t len = 0;
    CHECK_OK(hg_prog_save(p, &bin, &len));
    CHECK(len == 16 + sizeof want);
    if (bin && len == 16 + sizeof want) {
        CHECK(memcmp(bin, "ATLS", 4) == 0 && bin[4] == 1 && bin[5] == 0 && bin[6] == 0 && bin[7] == 0);
        CHECK(le32(bin + 8) == sizeof want);
        CHECK(le32(bin + 12) == ref_crc32(want, sizeof want));
        CHECK(memcmp(bin + 16, want, sizeof want) == 0);
    }
    CHECK(hg_prog_hash(p) == ref_fnv(want, sizeof want));
    // Pinned: a change of the format or of the hash shows up here (update docs/isa.md §9 too).
    CHECK_MSG(hg_prog_hash(p) == UINT64_C(0x77bab734fbd569c1), "hash is 0x%016llx",
              (unsigned long long)hg_prog_hash(p));
    free(bin);
    hg_prog_free(p);
}

static void reseal(uint8_t* b, size_t len) {
    uint32_t size = (uint32_t)(len - 16), crc = ref_crc32(b + 16, len - 16);
    for (int i = 0; i < 4; i++) b[8 + i] = (uint8_t)(size >> (8 * i)), b[12 + i] = (uint8_t)(crc >> (8 * i));
}

static void test_binary_corruption(void) {
    hg_prog* p = hg_test_random_program(12345);
    uint8_t* bin = NULL;
    size_t len = 0;
    CHECK_OK(hg_prog_save(p, &bin, &len));
    if (!bin) return;
    uint8_t* m = malloc(len);
    int loaded = 0, rejected = 0, wrong = 0;
    static const uint8_t xors[] = {0x01, 0x80, 0xff, 0x10};
    for (size_t i = 0; i < len; i++) {
        for (int x = 0; x < 4; x++) {
            // Any single-byte change is caught by the header checks or the CRC.
            memcpy(m, bin, len);
            m[i] ^= xors[x];
            hg_prog* q = NULL;
            hg_status s = hg_prog_load(m, len, &q);
            if (s != HG_ERR_BAD_FORMAT) wrong++;
            hg_prog_free(q);
            // With the checksum recomputed the payload decoder itself must cope: either a program
            // that saves back to exactly these bytes, or BAD_FORMAT.
            if (i < 16) continue;
            reseal(m, len);
            q = NULL;
            s = hg_prog_load(m, len, &q);
            if (s == HG_OK) {
                loaded++;
                uint8_t* again = NULL;
                size_t alen = 0;
                CHECK_OK(hg_prog_save(q, &again, &alen));
                CHECK_MSG(alen == len && memcmp(again, m, len) == 0, "byte %zu: resave differs", i);
                free(again);
                hg_prog_free(q);
            } else {
                CHECK_MSG(s == HG_ERR_BAD_FORMAT, "byte %zu: %s", i, hg_status_string(s));
                rejected++;
            }
        }
    }
    CHECK_MSG(wrong == 0, "%d corruptions were not reported as HG_ERR_BAD_FORMAT", wrong);
    CHECK(loaded > 0 && rejected > 0);
    // Truncation at every length, with the header as written and with it resealed.
    for (size_t n = 0; n < len; n++) {
        hg_prog* q = NULL;
        CHECK(hg_prog_load(bin, n, &q) == HG_ERR_BAD_FORMAT);
        if (n >= 16) {
            memcpy(m, bin, n);
            reseal(m, n);
            CHECK_MSG(hg_prog_load(m, n, &q) == HG_ERR_BAD_FORMAT, "resealed truncation at %zu", n);
        }
    }
    // Specific header errors.
    hg_prog* q = NULL;
    memcpy(m, bin, len);
    m[4] = 2;
    CHECK(hg_prog_load(m, len, &q) == HG_ERR_BAD_FORMAT && strstr(hg_last_error(), "version 2") != NULL);
    memcpy(m, bin, len);
    m[0] = 'X';
    CHECK(hg_prog_load(m, len, &q) == HG_ERR_BAD_FORMAT && strstr(hg_last_error(), "magic") != NULL);
    memcpy(m, bin, len);
    m[6] = 1;
    CHECK(hg_prog_load(m, len, &q) == HG_ERR_BAD_FORMAT && strstr(hg_last_error(), "flags") != NULL);
    memcpy(m, bin, len);
    m[len - 1] ^= 1;
    CHECK(hg_prog_load(m, len, &q) == HG_ERR_BAD_FORMAT && strstr(hg_last_error(), "CRC") != NULL);
    // Trailing bytes after the payload.
    uint8_t* big = malloc(len + 1);
    memcpy(big, bin, len);
    big[len] = 0;
    CHECK(hg_prog_load(big, len + 1, &q) == HG_ERR_BAD_FORMAT);
    free(big);
    free(m);
    free(bin);
    hg_prog_free(p);
}

static void test_binary_fields(void) {
    // Decoder checks on crafted payloads: bad name, bad dtype, bad opcode, huge count.
    hg_prog* p = tiny_program();
    uint8_t* bin = NULL;
    size_t len = 0;
    hg_prog_save(p, &bin, &len);
    hg_prog* q = NULL;
    struct { size_t off; uint8_t val; const char* msg; } cases[] = {
        {17, '9', "not an identifier"}, {16, 0, "length 0"}, {25, 13, "dtype 13"},
        {24, 2, "kind 2"}, {26, 1, "is_const 1"}, {27, 200, "at most 16"}, {38, 200, "remain"},
        {31, 255, "remain"}, {42, 200, "opcode 200"}, {44, 13, "type 13"}, {50, 5, "kind 5"},
    };
    uint8_t* m = malloc(len);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(m, bin, len);
        m[cases[i].off] = cases[i].val;
        reseal(m, len);
        CHECK_MSG(hg_prog_load(m, len, &q) == HG_ERR_BAD_FORMAT && strstr(hg_last_error(), cases[i].msg),
                  "case %zu: %s", i, hg_last_error());
    }
    // A NUL inside a name ("a\0") is not the name "a".
    hg_prog* z = hg_prog_new("ab");
    uint8_t* zb = NULL;
    size_t zl = 0;
    hg_prog_save(z, &zb, &zl);
    zb[18] = 0;
    reseal(zb, zl);
    CHECK(hg_prog_load(zb, zl, &q) == HG_ERR_BAD_FORMAT && strstr(hg_last_error(), "not an identifier"));
    free(zb);
    hg_prog_free(z);
    // Duplicate names are a format error (the builder refuses them).
    hg_prog* d = hg_prog_new("k");
    hg_prog_add_reg(d, "x", HG_DTYPE_U32, NULL);
    hg_prog_add_reg(d, "y", HG_DTYPE_U32, NULL);
    uint8_t* db = NULL;
    size_t dl = 0;
    hg_prog_save(d, &db, &dl);
    for (size_t i = 16; i < dl; i++) if (db[i] == 'y') db[i] = 'x';
    reseal(db, dl);
    CHECK(hg_prog_load(db, dl, &q) == HG_ERR_BAD_FORMAT && strstr(hg_last_error(), "already declared"));
    free(db);
    hg_prog_free(d);
    free(m);
    free(bin);
    hg_prog_free(p);
}

static void test_hash(void) {
    hg_prog* p = NULL;
    for (uint64_t seed = 99; !p || p->ninstrs < 5 || p->nregs == 0; seed++) {
        hg_prog_free(p);  // want a few instructions and a register to mutate
        p = hg_test_random_program(seed);
        if (!p) return;
    }
    hg_prog* c = hg_prog_clone(p);
    CHECK(hg_prog_hash(p) == hg_prog_hash(c));
    uint64_t h0 = hg_prog_hash(p);
    int same = 0;
    for (uint32_t i = 0; i < c->ninstrs; i++) {
        hg_instr save = c->instrs[i];
        for (int f = 0; f < 8; f++) {
            hg_instr* in = &c->instrs[i];
            switch (f) {
            case 0: in->op ^= 1; break;
            case 1: in->type ^= 2; break;
            case 2: in->aux ^= 0x10; break;
            case 3: in->mem += 1; break;
            case 4: in->dst.index ^= 1; break;
            case 5: in->src[0].bits ^= UINT64_C(1) << 63; break;
            case 6: in->src[1].kind ^= 1; break;
            default: in->src[2].index += 7; break;
            }
            if (hg_prog_hash(c) == h0) same++;
            c->instrs[i] = save;
        }
    }
    CHECK_MSG(same == 0, "%d instruction changes kept the hash", same);
    c->regs[0].name[0] ^= 1;
    CHECK(hg_prog_hash(c) != h0);
    hg_prog_free(c);
    hg_prog_free(p);
}

int main(void) {
    test_examples();
    test_all_ops();
    test_immediates();
    test_errors();
    test_mutations();
    test_random();
    test_print_invalid();
    test_binary_layout();
    test_binary_corruption();
    test_binary_fields();
    test_hash();
    return hg_test_finish("test_isa_text");
}
