// cvt.D.S for all 13 x 13 type pairs (docs/isa.md §6) on the CPU backend against the
// independent reference: int<->int wrapping, int->float and float narrowing round to nearest
// even with overflow to inf, float->int truncation with saturation and NaN -> 0, bool rules.
// Sources of at most 16 bits run exhaustively; wider ones on specials, rounding ties,
// saturation boundaries and random values. Also as immediate and scalar-parameter operands.
#include <math.h>

#include "instr_harness.h"

// Integers whose conversion to each float type is a rounding tie (or just off one), so that
// round-to-nearest-even is exercised and not only truncation.
static void push_int_ties(hg_dtype src, ih_vec* v) {
    const int mant[] = {10, 7, 23, 52};
    int w = ir_width(src);
    for (int k = 4; k < w; k++)
        for (int f = 0; f < 4; f++) {
            int sh = k - mant[f] - 1;  // half an ulp at 2^k is 2^(k - mant - 1)
            if (sh < 0) continue;
            uint64_t base = 1ull << k, tie = 1ull << sh;
            const uint64_t c[] = {base + tie, base + 3 * tie, base + tie - 1, base + tie + 1,
                                  base + (tie << 1) + tie, (base << 1) - tie};
            for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
                ih_push(v, c[i] & ir_mask(src));
                if (ir_is_sint(src)) ih_push(v, (0 - c[i]) & ir_mask(src));
            }
        }
}

// Float values around every integer type's limits, and fractions near zero.
static void push_float_bounds(hg_dtype src, ih_vec* v) {
    const int ks[] = {7, 8, 15, 16, 31, 32, 53, 63, 64};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        double p = ldexp(1.0, ks[i]);
        const double c[] = {p, p - 1, p + 1, p - 0.5, p + 0.5, p - 0.25};
        for (size_t j = 0; j < sizeof c / sizeof c[0]; j++)
            for (int s = 0; s < 2; s++) {
                uint64_t b = ir_from_double(s ? -c[j] : c[j], src);
                ih_push(v, b);
                if (!ir_is_inf(b, src)) ih_push(v, (b + 1) & ir_mask(src));
                if (!ir_is_zero(b, src)) ih_push(v, (b - 1) & ir_mask(src));
            }
    }
    const double small[] = {0.5, -0.5, 0.999999, -0.999999, -1, -1.5, 1e-30, -1e-30, 1e30, -1e30,
                            255.5, 256, -128.5, -129, 65535.9, -32768.7};
    for (size_t j = 0; j < sizeof small / sizeof small[0]; j++)
        ih_push(v, ir_from_double(small[j], src));
}

static void gen_inputs(hg_dtype src, uint64_t* rng, ih_cases* c) {
    memset(c, 0, sizeof *c);
    ih_vec* v = &c->in[0];
    if (src == HG_DTYPE_BOOL) {
        ih_push(v, 0);
        ih_push(v, 1);
    } else if (ir_width(src) <= 16) {
        for (uint64_t b = 0; b <= ir_mask(src); b++) ih_push(v, b);
    } else {
        ih_specials(src, v);
        if (ir_is_int(src)) push_int_ties(src, v);
        else push_float_bounds(src, v);
        for (int i = 0; i < 100000; i++) ih_push(v, ih_rand_value(src, rng));
    }
    c->n = v->n;
}

static void check_reference_anchors(void) {
    CHECK(ir_cvt(HG_DTYPE_I32, HG_DTYPE_F32, 0x7fc00000u) == 0);                 // NaN -> 0
    CHECK(ir_cvt(HG_DTYPE_I32, HG_DTYPE_F32, ir_bits_f32(3e9f)) == 0x7fffffffu);  // saturates
    CHECK(ir_cvt(HG_DTYPE_I8, HG_DTYPE_F32, ir_bits_f32(-200.f)) == 0x80);
    CHECK(ir_cvt(HG_DTYPE_U8, HG_DTYPE_F32, ir_bits_f32(-0.9f)) == 0);
    CHECK(ir_cvt(HG_DTYPE_U64, HG_DTYPE_F64, ir_bits_f64(1e30)) == ~0ull);
    CHECK(ir_cvt(HG_DTYPE_I64, HG_DTYPE_F32, 0xff800000u) == 1ull << 63);       // -inf -> MIN
    CHECK(ir_cvt(HG_DTYPE_I8, HG_DTYPE_I32, 0x1ff) == 0xff);                     // wraps
    CHECK(ir_cvt(HG_DTYPE_I64, HG_DTYPE_I8, 0x80) == 0xffffffffffffff80ull);     // sign-extends
    CHECK(ir_cvt(HG_DTYPE_U64, HG_DTYPE_I8, 0x80) == 0xffffffffffffff80ull);
    CHECK(ir_cvt(HG_DTYPE_I64, HG_DTYPE_U8, 0x80) == 0x80);                      // zero-extends
    CHECK(ir_cvt(HG_DTYPE_BOOL, HG_DTYPE_F32, 0x80000000u) == 0);                // -0 -> false
    CHECK(ir_cvt(HG_DTYPE_BOOL, HG_DTYPE_F16, 0x7e00) == 1);                     // NaN -> true
    CHECK(ir_cvt(HG_DTYPE_F16, HG_DTYPE_F32, ir_bits_f32(65520.f)) == 0x7c00);   // tie -> inf
    CHECK(ir_cvt(HG_DTYPE_F16, HG_DTYPE_F32, ir_bits_f32(65519.f)) == 0x7bff);
    CHECK(ir_cvt(HG_DTYPE_F16, HG_DTYPE_U32, 2049) == 0x6800);                   // tie: 2048
    CHECK(ir_cvt(HG_DTYPE_F16, HG_DTYPE_U32, 2051) == 0x6802);                   // 2052
    CHECK(ir_cvt(HG_DTYPE_BF16, HG_DTYPE_F32, 0x3f808000u) == 0x3f80);           // tie to even
    CHECK(ir_cvt(HG_DTYPE_BF16, HG_DTYPE_F32, 0x3f818000u) == 0x3f82);
    CHECK(ir_cvt(HG_DTYPE_F32, HG_DTYPE_I64, 0x7fffffffffffffffull) == 0x5f000000u);  // 2^63
    // 2^60 + 2^52 + 1 -> bf16: above the tie, so it rounds up (a double-rounding trap).
    CHECK(ir_cvt(HG_DTYPE_BF16, HG_DTYPE_U64, (1ull << 60) + (1ull << 52) + 1) == 0x5d81);
    CHECK(ir_cvt(HG_DTYPE_F32, HG_DTYPE_F16, 0x0001) == 0x33800000u);            // 2^-24 exact
    CHECK(ir_cvt(HG_DTYPE_F16, HG_DTYPE_F64, ir_bits_f64(ldexp(1.0, -25))) == 0);  // tie to 0
    CHECK(ir_cvt(HG_DTYPE_F16, HG_DTYPE_F64, ir_bits_f64(ldexp(1.0, -25) * 1.0000001)) == 1);
}

int main(void) {
    double t0 = ih_now();
    uint64_t rng = 0xA7145EED0003ull;
    size_t total = 0;
    check_reference_anchors();
    for (int src = 0; src < HG_DTYPE_COUNT; src++) {
        ih_cases c;
        gen_inputs((hg_dtype)src, &rng, &c);
        for (int dst = 0; dst < HG_DTYPE_COUNT; dst++) {
            ih_kspec ks = ih_spec(HG_OP_CVT, (hg_dtype)dst, (uint8_t)src);
            ih_stat st;
            ih_stat_init(&st, ih_spec_name(&ks));
            ih_check_all_modes(&ks, &c, ih_ref_cvt, IH_VALUE, &st, &rng);
            ih_stat_print(&st);
            total += st.cases[0] + st.cases[1] + st.cases[2];
        }
        ih_cases_free(&c);
    }
    printf("test_instructions_cvt: %zu lane cases in %.1f s\n", total, ih_now() - t0);
    ih_shutdown();
    return hg_test_finish("test_instructions_cvt");
}
