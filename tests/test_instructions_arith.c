// Every arithmetic / bitwise / shift instruction of the Atlas ISA (docs/isa.md §5) in every type
// it accepts, on the CPU backend through the public API, against the independent reference in
// tests/common/instr_ref.c: special values (all pairs / sampled triples), random bit patterns
// and moderate magnitudes; operands as registers, immediates and scalar parameters. f16/bf16
// unary instructions run exhaustively over all 65536 bit patterns.
#include "instr_harness.h"

static const hg_dtype k_int_types[] = {HG_DTYPE_I8, HG_DTYPE_I16, HG_DTYPE_I32, HG_DTYPE_I64,
                                       HG_DTYPE_U8, HG_DTYPE_U16, HG_DTYPE_U32, HG_DTYPE_U64};
static const hg_dtype k_float_types[] = {HG_DTYPE_F16, HG_DTYPE_BF16, HG_DTYPE_F32, HG_DTYPE_F64};

static const hg_opcode k_int_ops[] = {HG_OP_MOV, HG_OP_ADD, HG_OP_SUB, HG_OP_MUL, HG_OP_DIV,
                                      HG_OP_REM, HG_OP_MIN, HG_OP_MAX, HG_OP_ABS, HG_OP_NEG,
                                      HG_OP_FMA, HG_OP_AND, HG_OP_OR,  HG_OP_XOR, HG_OP_NOT,
                                      HG_OP_SHL, HG_OP_SHR};
static const hg_opcode k_float_ops[] = {HG_OP_MOV, HG_OP_ADD, HG_OP_SUB, HG_OP_MUL,
                                        HG_OP_DIV, HG_OP_REM, HG_OP_MIN, HG_OP_MAX,
                                        HG_OP_ABS, HG_OP_NEG, HG_OP_FMA};
static const hg_opcode k_bool_ops[] = {HG_OP_MOV, HG_OP_AND, HG_OP_OR, HG_OP_XOR, HG_OP_NOT};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

// mov/abs/neg only move or flip bits: NaN payloads must survive them.
static ih_cmpmode mode_for(hg_opcode op) {
    return (op == HG_OP_MOV || op == HG_OP_ABS || op == HG_OP_NEG) ? IH_BITS : IH_VALUE;
}

static void run_one(hg_opcode op, hg_dtype t, uint64_t* rng, size_t* total) {
    ih_kspec ks = ih_spec(op, t, 0);
    ih_cases c;
    int narrow = t == HG_DTYPE_F16 || t == HG_DTYPE_BF16;
    if (ks.nsrc == 1 && narrow) {
        // Exhaustive over every binary16 / bfloat16 bit pattern.
        memset(&c, 0, sizeof c);
        for (uint64_t b = 0; b < 65536; b++) ih_push(&c.in[0], b);
        c.n = 65536;
    } else {
        size_t max_combo = ks.nsrc == 3 ? 100000 : 20000;
        size_t nrand = narrow ? 250000 : 60000;
        ih_gen_cases(&ks, max_combo, nrand, rng, &c);
    }
    ih_stat st;
    ih_stat_init(&st, ih_spec_name(&ks));
    ih_check_all_modes(&ks, &c, ih_ref_arith, ir_is_float(t) ? mode_for(op) : IH_BITS, &st, rng);
    ih_stat_print(&st);
    *total += st.cases[0] + st.cases[1] + st.cases[2];
    ih_cases_free(&c);
}

// A few hand-written cases straight from the ISA text, so the reference itself is pinned.
static void check_reference_anchors(void) {
    CHECK(ir_arith(HG_OP_DIV, HG_DTYPE_I32, 7, 0, 0) == 0xFFFFFFFFu);          // x/0 = -1
    CHECK(ir_arith(HG_OP_DIV, HG_DTYPE_U16, 7, 0, 0) == 0xFFFFu);              // x/0 = MAX
    CHECK(ir_arith(HG_OP_DIV, HG_DTYPE_I8, 0x80, 0xFF, 0) == 0x80);            // MIN/-1 = MIN
    CHECK(ir_arith(HG_OP_REM, HG_DTYPE_I8, 0x80, 0xFF, 0) == 0);               // MIN%-1 = 0
    CHECK(ir_arith(HG_OP_REM, HG_DTYPE_I32, 0xFFFFFFF9u, 2, 0) == 0xFFFFFFFFu); // -7%2 = -1
    CHECK(ir_arith(HG_OP_REM, HG_DTYPE_U8, 9, 0, 0) == 9);                     // x%0 = x
    CHECK(ir_arith(HG_OP_SHR, HG_DTYPE_I16, 0x8000, 16, 0) == 0xFFFF);         // shr >= w, neg
    CHECK(ir_arith(HG_OP_SHR, HG_DTYPE_I16, 0x8000, 15, 0) == 0xFFFF);
    CHECK(ir_arith(HG_OP_SHR, HG_DTYPE_I8, 0x90, 0xFF, 0) == 0xFF);            // b = 255 unsigned
    CHECK(ir_arith(HG_OP_SHL, HG_DTYPE_U32, 1, 32, 0) == 0);
    CHECK(ir_arith(HG_OP_ABS, HG_DTYPE_I64, 1ull << 63, 0, 0) == 1ull << 63);  // abs(MIN) = MIN
    CHECK(ir_arith(HG_OP_NEG, HG_DTYPE_U8, 1, 0, 0) == 255);
    CHECK(ir_arith(HG_OP_MIN, HG_DTYPE_F32, 0x80000000u, 0, 0) == 0x80000000u);  // -0 < +0
    CHECK(ir_arith(HG_OP_MAX, HG_DTYPE_F32, 0x80000000u, 0, 0) == 0);
    CHECK(ir_is_nan(ir_arith(HG_OP_MIN, HG_DTYPE_F32, 0x7fc00000u, 0x3f800000u, 0), HG_DTYPE_F32));
    CHECK(ir_arith(HG_OP_NEG, HG_DTYPE_F16, 0x7e01, 0, 0) == 0xfe01);         // NaN sign flip
    CHECK(ir_arith(HG_OP_ADD, HG_DTYPE_F16, 0x3c00, 0x3c00, 0) == 0x4000);     // 1 + 1 = 2
    CHECK(ir_arith(HG_OP_ADD, HG_DTYPE_F16, 0x7bff, 0x5000, 0) == 0x7c00);     // overflow: inf
    CHECK(ir_arith(HG_OP_ADD, HG_DTYPE_BF16, 0x3f80, 0x3b80, 0) == 0x3f80);    // 1 + 2^-8: tie
    CHECK(ir_arith(HG_OP_ADD, HG_DTYPE_BF16, 0x3f81, 0x3b80, 0) == 0x3f82);    // tie: up, even
    CHECK(ir_arith(HG_OP_MUL, HG_DTYPE_F16, 0x0001, 0x3800, 0) == 0x0000);     // tie: to 0
    CHECK(ir_arith(HG_OP_MUL, HG_DTYPE_F16, 0x0003, 0x3800, 0) == 0x0002);     // tie: even 2
    CHECK(ir_arith(HG_OP_FMA, HG_DTYPE_I8, 16, 16, 1) == 1);                   // 257 wraps
    CHECK(ir_arith(HG_OP_NOT, HG_DTYPE_BOOL, 1, 0, 0) == 0);
}

int main(void) {
    double t0 = ih_now();
    uint64_t rng = 0xA7145EED0001ull;
    size_t total = 0;
    check_reference_anchors();
    printf("integer instructions:\n");
    for (size_t ti = 0; ti < COUNT(k_int_types); ti++)
        for (size_t oi = 0; oi < COUNT(k_int_ops); oi++)
            run_one(k_int_ops[oi], k_int_types[ti], &rng, &total);
    printf("bool instructions:\n");
    for (size_t oi = 0; oi < COUNT(k_bool_ops); oi++)
        run_one(k_bool_ops[oi], HG_DTYPE_BOOL, &rng, &total);
    printf("float instructions:\n");
    for (size_t ti = 0; ti < COUNT(k_float_types); ti++)
        for (size_t oi = 0; oi < COUNT(k_float_ops); oi++)
            run_one(k_float_ops[oi], k_float_types[ti], &rng, &total);
    printf("test_instructions_arith: %zu lane cases in %.1f s\n", total, ih_now() - t0);
    ih_shutdown();
    return hg_test_finish("test_instructions_arith");
}
