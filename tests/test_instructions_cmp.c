// cmp.CC.T for all six conditions and sel.T, in all 13 types, on the CPU backend against the
// independent reference: NaN makes only `ne` true, -0 == +0, signed vs unsigned order, bool as
// 0 < 1. sel must move values bit for bit (NaN payloads included). Register, immediate and
// scalar-parameter operands.
#include "instr_harness.h"

static void check_reference_anchors(void) {
    CHECK(ir_cmp(HG_CMP_NE, HG_DTYPE_F32, 0x7fc00000u, 0x7fc00000u) == 1);
    CHECK(ir_cmp(HG_CMP_EQ, HG_DTYPE_F32, 0x7fc00000u, 0x7fc00000u) == 0);
    CHECK(ir_cmp(HG_CMP_GE, HG_DTYPE_F64, 0x7ff8000000000000ull, 0) == 0);
    CHECK(ir_cmp(HG_CMP_EQ, HG_DTYPE_F16, 0x8000, 0x0000) == 1);  // -0 == +0
    CHECK(ir_cmp(HG_CMP_LT, HG_DTYPE_F16, 0x8000, 0x0000) == 0);
    CHECK(ir_cmp(HG_CMP_LT, HG_DTYPE_I8, 0x80, 0x7f) == 1);       // signed order
    CHECK(ir_cmp(HG_CMP_LT, HG_DTYPE_U8, 0x80, 0x7f) == 0);       // unsigned order
    CHECK(ir_cmp(HG_CMP_GT, HG_DTYPE_BOOL, 1, 0) == 1);
}

int main(void) {
    double t0 = ih_now();
    uint64_t rng = 0xA7145EED0004ull;
    size_t total = 0;
    check_reference_anchors();
    for (int t = 0; t < HG_DTYPE_COUNT; t++) {
        int narrow = t == HG_DTYPE_F16 || t == HG_DTYPE_BF16;
        for (int cc = 0; cc < HG_CMP_COUNT; cc++) {
            ih_kspec ks = ih_spec(HG_OP_CMP, (hg_dtype)t, (uint8_t)cc);
            ih_cases c;
            ih_gen_cases(&ks, 20000, t == HG_DTYPE_BOOL ? 16 : narrow ? 60000 : 20000, &rng, &c);
            // Equal operands are rare among random pairs: add some.
            for (int i = 0; i < 500 && t != HG_DTYPE_BOOL; i++) {
                uint64_t x = ih_rand_value((hg_dtype)t, &rng);
                ih_push(&c.in[0], x);
                ih_push(&c.in[1], x);
            }
            c.n = c.in[0].n;
            ih_stat st;
            ih_stat_init(&st, ih_spec_name(&ks));
            ih_check_all_modes(&ks, &c, ih_ref_cmp, IH_BITS, &st, &rng);
            ih_stat_print(&st);
            total += st.cases[0] + st.cases[1] + st.cases[2];
            ih_cases_free(&c);
        }
        ih_kspec ks = ih_spec(HG_OP_SEL, (hg_dtype)t, 0);
        ih_cases c;
        ih_gen_cases(&ks, 20000, 8000, &rng, &c);
        ih_stat st;
        ih_stat_init(&st, ih_spec_name(&ks));
        ih_check_all_modes(&ks, &c, ih_ref_sel, IH_BITS, &st, &rng);
        ih_stat_print(&st);
        total += st.cases[0] + st.cases[1] + st.cases[2];
        ih_cases_free(&c);
    }
    printf("test_instructions_cmp: %zu lane cases in %.1f s\n", total, ih_now() - t0);
    ih_shutdown();
    return hg_test_finish("test_instructions_cmp");
}
