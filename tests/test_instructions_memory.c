// Memory instructions on the CPU backend: ld/st of every dtype (bit-exact, NaN payloads kept,
// any non-zero bool byte loads as 1) in global and shared space with every integer index type,
// immediate and parameter indices and buffer ranges. Atomics are in test_instructions_atomics.c.
#include <stdlib.h>

#include "instr_harness.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define K(expr) IH_K(&k, expr)

static const hg_dtype k_int_idx[] = {HG_DTYPE_U32, HG_DTYPE_I32, HG_DTYPE_U64, HG_DTYPE_I64,
                                     HG_DTYPE_U16, HG_DTYPE_I16, HG_DTYPE_U8,  HG_DTYPE_I8};

// ---- ld/st global: out[j] = in[j] with j = i converted to an index type ------------------
static void test_copy_global(hg_dtype t, hg_dtype idx_t, uint64_t* rng) {
    size_t n = ir_width(idx_t) == 8 ? 100 : 1000;
    ih_kb k;
    ih_kb_begin(&k, "copy");
    uint32_t a = ih_kb_buf(&k, "a", t, 1), o = ih_kb_buf(&k, "o", t, 0);
    uint32_t pn = ih_kb_scalar(&k, "n", HG_DTYPE_U32);
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL);
    uint32_t j = ih_kb_reg(&k, "j", idx_t), x = ih_kb_reg(&k, "x", t);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, p, hg_reg(i), hg_param(pn)));
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(hg_emit_unary(k.p, HG_OP_CVT, idx_t, j, hg_reg(i)));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, x, a, hg_reg(j)));
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, o, hg_reg(j), hg_reg(x)));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    uint64_t* in = malloc(n * 8);
    uint64_t* out = calloc(n, 8);
    ih_vec sp = {0};
    ih_specials(t, &sp);
    for (size_t q = 0; q < n; q++)
        in[q] = q < sp.n ? sp.v[q] : (t == HG_DTYPE_BOOL ? hg_test_rand(rng) & 0xFF
                                                         : hg_test_rand(rng) & ir_mask(t));
    if (t == HG_DTYPE_BOOL) in[0] = 7, in[1] = 0, in[2] = 0x80, in[3] = 1;  // raw bytes
    hg_buffer ba = ih_make_buf(t, n, in), bo = ih_make_buf(t, n, NULL);
    hg_arg args[] = {hg_arg_buffer(ba), hg_arg_buffer(bo), hg_arg_u32((uint32_t)n)};
    if (ih_kb_launch(&k, hg_launch_1d(n, 256), args, 3) == HG_OK) {
        ih_read_buf(bo, t, n, out);
        size_t bad = 0;
        for (size_t q = 0; q < n; q++) {
            uint64_t want = t == HG_DTYPE_BOOL ? in[q] != 0 : in[q];
            if (out[q] != want && bad++ < 3)
                fprintf(stderr, "MISMATCH ld/st.global.%s (index %s) [%zu]: in 0x%llx got 0x%llx "
                        "want 0x%llx\n", ir_name(t), ir_name(idx_t), q, (unsigned long long)in[q],
                        (unsigned long long)out[q], (unsigned long long)want);
        }
        CHECK_MSG(bad == 0, "ld/st.global.%s with %s index: %zu of %zu differ", ir_name(t),
                  ir_name(idx_t), bad, n);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bo);
    ih_kb_end(&k);
    ih_vec_free(&sp);
    free(in);
    free(out);
}

// Immediate and parameter indices, and a buffer range: out[i] = in[5] + in[p] (ints).
static void test_uniform_index(void) {
    const size_t n = 300;
    ih_kb k;
    ih_kb_begin(&k, "uidx");
    uint32_t a = ih_kb_buf(&k, "a", HG_DTYPE_I64, 1), o = ih_kb_buf(&k, "o", HG_DTYPE_I64, 0);
    uint32_t pn = ih_kb_scalar(&k, "n", HG_DTYPE_U32), pj = ih_kb_scalar(&k, "j", HG_DTYPE_I64);
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL);
    uint32_t x = ih_kb_reg(&k, "x", HG_DTYPE_I64), y = ih_kb_reg(&k, "y", HG_DTYPE_I64);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, p, hg_reg(i), hg_param(pn)));
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, HG_DTYPE_I64, x, a, hg_imm_i64(5)));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, HG_DTYPE_I64, y, a, hg_param(pj)));
    K(hg_emit_binary(k.p, HG_OP_ADD, HG_DTYPE_I64, x, hg_reg(x), hg_reg(y)));
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, HG_DTYPE_I64, o, hg_reg(i), hg_reg(x)));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    uint64_t in[40], out[300];
    for (int q = 0; q < 40; q++) in[q] = (uint64_t)q * 1000003ull + (1ull << 40);
    hg_buffer ba = ih_make_buf(HG_DTYPE_I64, 40, in), bo = ih_make_buf(HG_DTYPE_I64, n + 10, NULL);
    // Range: the kernel sees a[10..39] as a[0..29] and o[10..] as o[0..].
    hg_arg args[] = {hg_arg_buffer_range(ba, 10, 30), hg_arg_buffer_range(bo, 10, n),
                     hg_arg_u32((uint32_t)n), hg_arg_i64(17)};
    if (ih_kb_launch(&k, hg_launch_1d(n, 128), args, 4) == HG_OK) {
        uint64_t all[310];
        ih_read_buf(bo, HG_DTYPE_I64, n + 10, all);
        memcpy(out, all + 10, sizeof out);
        size_t bad = 0;
        for (size_t q = 0; q < n; q++) bad += out[q] != in[15] + in[27];
        for (size_t q = 0; q < 10; q++) bad += all[q] != 0;
        CHECK_MSG(bad == 0, "ld with immediate/parameter index over a buffer range: %zu wrong",
                  bad);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bo);
    ih_kb_end(&k);
}

// ---- shared: lane t stores in[i] to sh[t]; after bar, out[i] = sh[(t + 1) % ntid] ----------
static void test_shared_rotate(hg_dtype t, int unsized, uint64_t* rng) {
    const uint32_t block = 128, grid = 5;
    const size_t n = (size_t)block * grid - 37;  // the last block is partly idle
    ih_kb k;
    ih_kb_begin(&k, "rot");
    uint32_t a = ih_kb_buf(&k, "a", t, 1), o = ih_kb_buf(&k, "o", t, 0);
    uint32_t pn = ih_kb_scalar(&k, "n", HG_DTYPE_U32);
    uint32_t sh = ih_kb_shared(&k, "sh", t, unsized ? 0 : block);
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), tid = ih_kb_reg(&k, "t", HG_DTYPE_U32);
    uint32_t j = ih_kb_reg(&k, "j", HG_DTYPE_U32), p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL);
    uint32_t x = ih_kb_reg(&k, "x", t);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, tid, hg_sreg(HG_SREG_TID_X)));
    K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, p, hg_reg(i), hg_param(pn)));
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, x, a, hg_reg(i)));
    K(hg_emit_store(k.p, HG_SPACE_SHARED, t, sh, hg_reg(tid), hg_reg(x)));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    K(hg_emit_control(k.p, HG_OP_BAR, hg_none()));
    K(hg_emit_binary(k.p, HG_OP_ADD, HG_DTYPE_U32, j, hg_reg(tid), hg_imm_u64(1)));
    K(hg_emit_binary(k.p, HG_OP_REM, HG_DTYPE_U32, j, hg_reg(j), hg_sreg(HG_SREG_NTID_X)));
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(hg_emit_load(k.p, HG_SPACE_SHARED, t, x, sh, hg_reg(j)));
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, o, hg_reg(i), hg_reg(x)));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    uint64_t* in = malloc(n * 8);
    uint64_t* out = calloc(n, 8);
    ih_vec sp = {0};
    ih_specials(t, &sp);
    for (size_t q = 0; q < n; q++)
        in[q] = q < sp.n ? sp.v[q] : ih_rand_value(t, rng);
    hg_buffer ba = ih_make_buf(t, n, in), bo = ih_make_buf(t, n, NULL);
    hg_arg args[] = {hg_arg_buffer(ba), hg_arg_buffer(bo), hg_arg_u32((uint32_t)n)};
    hg_launch_config cfg = hg_launch_1d(n, block);
    cfg.shared_bytes = unsized ? block * (uint32_t)ir_size(t) : 0;
    if (ih_kb_launch(&k, cfg, args, 3) == HG_OK) {
        ih_read_buf(bo, t, n, out);
        size_t bad = 0;
        for (size_t q = 0; q < n; q++) {
            size_t base = q / block * block, src = base + (q - base + 1) % block;
            uint64_t want = src < n ? in[src] : 0;  // idle lanes leave shared memory zero
            if (out[q] != want && bad++ < 3)
                fprintf(stderr, "MISMATCH ld/st.shared.%s%s [%zu]: got 0x%llx want 0x%llx\n",
                        ir_name(t), unsized ? " (unsized)" : "", q, (unsigned long long)out[q],
                        (unsigned long long)want);
        }
        CHECK_MSG(bad == 0, "ld/st.shared.%s%s: %zu of %zu differ", ir_name(t),
                  unsized ? " unsized" : "", bad, n);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bo);
    ih_kb_end(&k);
    ih_vec_free(&sp);
    free(in);
    free(out);
}

int main(void) {
    double t0 = ih_now();
    uint64_t rng = 0xA7145EED0005ull;
    for (int t = 0; t < HG_DTYPE_COUNT; t++) {
        for (size_t q = 0; q < COUNT(k_int_idx); q++)
            test_copy_global((hg_dtype)t, k_int_idx[q], &rng);
        test_shared_rotate((hg_dtype)t, 0, &rng);
        test_shared_rotate((hg_dtype)t, 1, &rng);
    }
    printf("  ld/st global (8 index types) and shared (static, unsized): 13 types done\n");
    test_uniform_index();
    printf("test_instructions_memory: %.1f s\n", ih_now() - t0);
    ih_shutdown();
    return hg_test_finish("test_instructions_memory");
}
