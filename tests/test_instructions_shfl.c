// The warp exchange `shfl.MODE.T d, a, lane` (docs/isa.md §5) on the CPU backend and (with
// HG_TEST_BACKEND=cuda) the CUDA emulation: every type and mode, lane operands from a buffer
// (per lane, bits above the low 5 ignored), an immediate and a scalar parameter, 3-D blocks,
// blocks that end in a partial warp and a 1-lane block, against a reference that picks the
// source lane by the ISA's rule; then a warp reduction by butterflies in a loop.
#include <stdlib.h>

#include "instr_harness.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define K(expr) IH_K(&k, expr)

static const char* const k_modes[HG_SHFL_COUNT] = {"bfly", "down", "up", "idx"};

// The linear lane (within the block) whose value lane tl reads, in a block of nl lanes.
static uint32_t ref_source(hg_shfl_mode mode, uint32_t tl, uint32_t nl, uint32_t lane) {
    uint32_t l = tl & 31u, w = tl - l, b = lane & 31u, j;
    switch (mode) {
    case HG_SHFL_BFLY: j = l ^ b; break;
    case HG_SHFL_DOWN: j = l + b; break;
    case HG_SHFL_UP: j = l >= b ? l - b : 32u; break;
    default: j = b; break;
    }
    return j < 32u && w + j < nl ? w + j : tl;
}

// Emits into k: i (u32) := the launch-wide linear lane id, tl := the lane id in its block.
static void emit_lane_ids(ih_kb* kb, uint32_t i, uint32_t tl, uint32_t tmp) {
    const hg_dtype U = HG_DTYPE_U32;
    IH_K(kb, hg_emit_binary(kb->p, HG_OP_MUL, U, tl, hg_sreg(HG_SREG_NTID_Y), hg_sreg(HG_SREG_TID_Z)));
    IH_K(kb, hg_emit_binary(kb->p, HG_OP_ADD, U, tl, hg_reg(tl), hg_sreg(HG_SREG_TID_Y)));
    IH_K(kb, hg_emit_binary(kb->p, HG_OP_MUL, U, tl, hg_reg(tl), hg_sreg(HG_SREG_NTID_X)));
    IH_K(kb, hg_emit_binary(kb->p, HG_OP_ADD, U, tl, hg_reg(tl), hg_sreg(HG_SREG_TID_X)));
    IH_K(kb, hg_emit_binary(kb->p, HG_OP_MUL, U, tmp, hg_sreg(HG_SREG_NTID_X), hg_sreg(HG_SREG_NTID_Y)));
    IH_K(kb, hg_emit_binary(kb->p, HG_OP_MUL, U, tmp, hg_reg(tmp), hg_sreg(HG_SREG_NTID_Z)));
    IH_K(kb, hg_emit_binary(kb->p, HG_OP_MUL, U, i, hg_reg(tmp), hg_sreg(HG_SREG_CTAID_X)));
    IH_K(kb, hg_emit_binary(kb->p, HG_OP_ADD, U, i, hg_reg(i), hg_reg(tl)));
}

// Lane operand forms.
enum { LANE_BUF, LANE_IMM, LANE_PARAM };

// out[i] = shfl(in[i], lane) over several block shapes; lane from lanes[i], an immediate or
// a scalar parameter (uni).
static void test_exchange(hg_dtype t, hg_shfl_mode mode, int form, uint32_t uni, uint64_t* rng) {
    static const hg_dim3 shapes[] = {{8, 4, 2}, {50, 1, 1}, {7, 5, 3}, {1, 1, 1}, {96, 1, 1}};
    ih_kb k;
    ih_kb_begin(&k, "shfl_test");
    uint32_t a = ih_kb_buf(&k, "a", t, 1), o = ih_kb_buf(&k, "o", t, 0);
    uint32_t lb = ih_kb_buf(&k, "lanes", HG_DTYPE_U32, 1);
    uint32_t ps = ih_kb_scalar(&k, "ps", HG_DTYPE_U32);
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), tl = ih_kb_reg(&k, "tl", HG_DTYPE_U32);
    uint32_t tmp = ih_kb_reg(&k, "tmp", HG_DTYPE_U32), b = ih_kb_reg(&k, "b", HG_DTYPE_U32);
    uint32_t x = ih_kb_reg(&k, "x", t);
    emit_lane_ids(&k, i, tl, tmp);
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, x, a, hg_reg(i)));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, HG_DTYPE_U32, b, lb, hg_reg(i)));
    hg_operand lane = form == LANE_BUF ? hg_reg(b) : form == LANE_IMM ? hg_imm_u64(uni)
                                                                       : hg_param(ps);
    K(hg_emit_shfl(k.p, mode, t, x, hg_reg(x), lane));   // d = a: the exchange reads first
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, o, hg_reg(i), hg_reg(x)));
    ih_vec sp = {0};
    ih_specials(t, &sp);
    for (size_t s = 0; s < COUNT(shapes) && !k.err; s++) {
        const hg_dim3 bl = shapes[s];
        const uint32_t nl = bl.x * bl.y * bl.z, grid = 3;
        const size_t n = (size_t)nl * grid;
        uint64_t* in = malloc(n * 8);
        uint64_t* lanes = malloc(n * 8);
        uint64_t* out = calloc(n, 8);
        for (size_t q = 0; q < n; q++) {
            in[q] = q < sp.n ? sp.v[(q * 7) % sp.n] : ih_rand_value(t, rng);
            if (t == HG_DTYPE_BOOL) in[q] &= 1;
            // Mostly in-range lane numbers, some with high bits set (only the low 5 count).
            uint64_t r = hg_test_rand(rng);
            lanes[q] = r % 4 == 0 ? (uint32_t)(r >> 8) : (uint32_t)((r >> 8) % 32);
        }
        hg_buffer ba = ih_make_buf(t, n, in), bo = ih_make_buf(t, n, NULL);
        hg_buffer bl_ = ih_make_buf(HG_DTYPE_U32, n, lanes);
        hg_arg args[] = {hg_arg_buffer(ba), hg_arg_buffer(bo), hg_arg_buffer(bl_),
                         hg_arg_u32(uni)};
        hg_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.grid = (hg_dim3){grid, 1, 1};
        cfg.block = bl;
        if (ih_kb_launch(&k, cfg, args, COUNT(args)) == HG_OK) {
            ih_read_buf(bo, t, n, out);
            size_t bad = 0;
            for (size_t q = 0; q < n; q++) {
                uint32_t tl_ = (uint32_t)(q % nl), base = (uint32_t)(q - tl_);
                uint32_t ln = form == LANE_BUF ? (uint32_t)lanes[q] : uni;
                uint64_t want = in[base + ref_source(mode, tl_, nl, ln)];
                if (out[q] != want && bad++ < 3)
                    fprintf(stderr, "MISMATCH shfl.%s.%s (block %ux%ux%u, lane form %d) lane %zu "
                            "(lane operand %u): got 0x%llx want 0x%llx\n", k_modes[mode],
                            ir_name(t), bl.x, bl.y, bl.z, form, q, ln,
                            (unsigned long long)out[q], (unsigned long long)want);
            }
            CHECK_MSG(bad == 0, "shfl.%s.%s block %ux%ux%u form %d: %zu of %zu differ",
                      k_modes[mode], ir_name(t), bl.x, bl.y, bl.z, form, bad, n);
        }
        hg_buffer_destroy(ba);
        hg_buffer_destroy(bo);
        hg_buffer_destroy(bl_);
        free(in);
        free(lanes);
        free(out);
    }
    ih_vec_free(&sp);
    ih_kb_end(&k);
}

// A warp sum by butterflies (lane masks 16, 8, 4, 2, 1 in a loop with a uniform break), then
// every lane stores it: i64 wraps, so the sum is exact in any order.
static void test_warp_sum(uint64_t* rng) {
    const uint32_t nl = 160, grid = 2;   // 5 full warps per block
    const size_t n = (size_t)nl * grid;
    ih_kb k;
    ih_kb_begin(&k, "warp_sum");
    const hg_dtype T = HG_DTYPE_I64, U = HG_DTYPE_U32;
    uint32_t a = ih_kb_buf(&k, "a", T, 1), o = ih_kb_buf(&k, "o", T, 0);
    uint32_t i = ih_kb_reg(&k, "i", U), tl = ih_kb_reg(&k, "tl", U), tmp = ih_kb_reg(&k, "tmp", U);
    uint32_t m = ih_kb_reg(&k, "m", U), done = ih_kb_reg(&k, "done", HG_DTYPE_BOOL);
    uint32_t x = ih_kb_reg(&k, "x", T), y = ih_kb_reg(&k, "y", T);
    emit_lane_ids(&k, i, tl, tmp);
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, T, x, a, hg_reg(i)));
    K(hg_emit_unary(k.p, HG_OP_MOV, U, m, hg_imm_u64(16)));
    K(hg_emit_control(k.p, HG_OP_LOOP, hg_none()));
    K(hg_emit_cmp(k.p, HG_CMP_EQ, U, done, hg_reg(m), hg_imm_u64(0)));
    K(hg_emit_control(k.p, HG_OP_BREAK, hg_reg(done)));
    K(hg_emit_shfl(k.p, HG_SHFL_BFLY, T, y, hg_reg(x), hg_reg(m)));
    K(hg_emit_binary(k.p, HG_OP_ADD, T, x, hg_reg(x), hg_reg(y)));
    K(hg_emit_binary(k.p, HG_OP_SHR, U, m, hg_reg(m), hg_imm_u64(1)));
    K(hg_emit_control(k.p, HG_OP_ENDLOOP, hg_none()));
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, T, o, hg_reg(i), hg_reg(x)));
    uint64_t* in = malloc(n * 8);
    uint64_t* out = calloc(n, 8);
    for (size_t q = 0; q < n; q++) in[q] = hg_test_rand(rng);
    hg_buffer ba = ih_make_buf(T, n, in), bo = ih_make_buf(T, n, NULL);
    hg_arg args[] = {hg_arg_buffer(ba), hg_arg_buffer(bo)};
    hg_launch_config cfg = hg_launch_1d(n, nl);
    if (ih_kb_launch(&k, cfg, args, 2) == HG_OK) {
        ih_read_buf(bo, T, n, out);
        size_t bad = 0;
        for (size_t q = 0; q < n; q++) {
            uint64_t want = 0;
            for (size_t r = q & ~(size_t)31; r < (q & ~(size_t)31) + 32; r++) want += in[r];
            bad += out[q] != want;
        }
        CHECK_MSG(bad == 0, "warp sum by shfl.bfly.i64: %zu of %zu lanes differ", bad, n);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bo);
    ih_kb_end(&k);
    free(in);
    free(out);
}

int main(void) {
    double t0 = ih_now();
    uint64_t rng = 0x5AF1ull;
    for (int t = 0; t < HG_DTYPE_COUNT; t++)
        for (int m = 0; m < HG_SHFL_COUNT; m++)
            test_exchange((hg_dtype)t, (hg_shfl_mode)m, LANE_BUF, 0, &rng);
    // Uniform lane operands: an immediate (high bits set: 37 = lane 5) and a scalar parameter.
    for (int m = 0; m < HG_SHFL_COUNT; m++) {
        test_exchange(HG_DTYPE_F32, (hg_shfl_mode)m, LANE_IMM, 37, &rng);
        test_exchange(HG_DTYPE_F16, (hg_shfl_mode)m, LANE_PARAM, 3, &rng);
    }
    test_warp_sum(&rng);
    printf("test_instructions_shfl: %.1f s\n", ih_now() - t0);
    ih_shutdown();
    return hg_test_finish("test_instructions_shfl");
}
