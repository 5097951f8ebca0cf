// Vector memory instructions (ldv / stv, ISA 1.3) on the CPU backend, and on the CUDA emulation
// with HG_TEST_BACKEND=cuda: every dtype at every width it allows, in global and shared space,
// bit-exact against the scalar ld / st of the same elements (register k of the run holds
// element index + k), at aligned and unaligned addresses (the CUDA code's 16-byte access and its
// element-by-element fallback), and runs that end past the bound range (out of bounds, nothing
// of the run moved).
#include <stdlib.h>
#include <string.h>

#include "instr_harness.h"

#define K(expr) IH_K(&k, expr)

// Registers r .. r+w-1 of type t named <base>0.. (declared one after another: a run).
static uint32_t reg_run(ih_kb* kb, const char* base, hg_dtype t, uint32_t w) {
    uint32_t first = 0;
    for (uint32_t q = 0; q < w; q++) {
        char name[16];
        snprintf(name, sizeof name, "%s%u", base, q);
        uint32_t r = ih_kb_reg(kb, name, t);
        if (q == 0) first = r;
    }
    return first;
}

// The elements [0, n) of t: special values first, then random bit patterns (bool: raw bytes).
static void fill_values(hg_dtype t, uint64_t* v, size_t n, uint64_t* rng) {
    ih_vec sp = {0};
    ih_specials(t, &sp);
    for (size_t q = 0; q < n; q++)
        v[q] = q < sp.n ? sp.v[q] : t == HG_DTYPE_BOOL ? hg_test_rand(rng) & 0xFF
                                                       : ih_rand_value(t, rng);
    ih_vec_free(&sp);
}

static uint64_t loaded(hg_dtype t, uint64_t bits) { return t == HG_DTYPE_BOOL ? bits != 0 : bits; }

// Lane i < nv, j = i * w + off (idx_t): ldv x, a[j]; st o1[j + k], x_k for each k; ld y_k,
// a[j + k]; stv o2[j], y. Both outputs must equal a on [off, off + nv * w) and stay zero
// elsewhere. off and the buffer ranges' first element move the addresses off alignment.
static void test_global(hg_dtype t, uint32_t w, hg_dtype idx_t, uint32_t off, uint64_t range,
                        uint64_t* rng) {
    const size_t n = 203;   // elements bound to the kernel
    const uint32_t nv = (uint32_t)((n - off) / w);
    ih_kb k;
    ih_kb_begin(&k, "vcopy");
    uint32_t a = ih_kb_buf(&k, "a", t, 1), o1 = ih_kb_buf(&k, "o1", t, 0);
    uint32_t o2 = ih_kb_buf(&k, "o2", t, 0);
    uint32_t pn = ih_kb_scalar(&k, "nv", HG_DTYPE_U32), po = ih_kb_scalar(&k, "off", HG_DTYPE_U32);
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL);
    uint32_t j = ih_kb_reg(&k, "j", idx_t), jk = ih_kb_reg(&k, "jk", idx_t);
    uint32_t x = reg_run(&k, "x", t, w), y = reg_run(&k, "y", t, w);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, p, hg_reg(i), hg_param(pn)));
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(hg_emit_binary(k.p, HG_OP_MUL, HG_DTYPE_U32, i, hg_reg(i), hg_imm_u64(w)));
    K(hg_emit_binary(k.p, HG_OP_ADD, HG_DTYPE_U32, i, hg_reg(i), hg_param(po)));
    K(hg_emit_unary(k.p, HG_OP_CVT, idx_t, j, hg_reg(i)));
    K(hg_emit_load_vector(k.p, HG_SPACE_GLOBAL, t, w, x, a, hg_reg(j)));
    for (uint32_t q = 0; q < w; q++) {
        K(hg_emit_binary(k.p, HG_OP_ADD, idx_t, jk, hg_reg(j), hg_imm_u64(q)));
        K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, o1, hg_reg(jk), hg_reg(x + q)));
        K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, y + q, a, hg_reg(jk)));
    }
    K(hg_emit_store_vector(k.p, HG_SPACE_GLOBAL, t, w, o2, hg_reg(j), y));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    size_t total = n + range;
    uint64_t* in = malloc(total * 8);
    uint64_t* out = calloc(total, 8);
    fill_values(t, in, total, rng);
    if (t == HG_DTYPE_BOOL) in[range] = 7, in[range + 1] = 0x80;   // raw bytes: load as 1
    hg_buffer ba = ih_make_buf(t, total, in), b1 = ih_make_buf(t, total, NULL),
              b2 = ih_make_buf(t, total, NULL);
    hg_arg args[] = {hg_arg_buffer_range(ba, range, n), hg_arg_buffer_range(b1, range, n),
                     hg_arg_buffer_range(b2, range, n), hg_arg_u32(nv), hg_arg_u32(off)};
    if (ih_kb_launch(&k, hg_launch_1d(nv, 64), args, 5) == HG_OK) {
        size_t bad = 0;
        for (int which = 0; which < 2; which++) {
            ih_read_buf(which ? b2 : b1, t, total, out);
            for (size_t q = 0; q < total; q++) {
                int covered = q >= range + off && q < range + off + (size_t)nv * w;
                uint64_t want = covered ? loaded(t, in[q]) : 0;
                if (out[q] != want && bad++ < 3)
                    fprintf(stderr, "MISMATCH %s.global.v%u.%s (index %s, off %u, range %llu) "
                            "[%zu]: in 0x%llx got 0x%llx want 0x%llx\n", which ? "stv" : "ldv",
                            w, ir_name(t), ir_name(idx_t), off, (unsigned long long)range, q,
                            (unsigned long long)in[q], (unsigned long long)out[q],
                            (unsigned long long)want);
            }
        }
        CHECK_MSG(bad == 0, "ldv/stv.global.v%u.%s (index %s, off %u, range %llu): %zu wrong", w,
                  ir_name(t), ir_name(idx_t), off, (unsigned long long)range, bad);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(b1);
    hg_buffer_destroy(b2);
    ih_kb_end(&k);
    free(in);
    free(out);
}

// Shared space: lane t stores its run of a into sh[t * w] with stv; after bar it reads the next
// lane's run with ldv and stores it to o[t * w] with stv.
static void test_shared(hg_dtype t, uint32_t w, int unsized, uint64_t* rng) {
    const uint32_t block = 64, grid = 3;
    const size_t n = (size_t)block * grid * w;
    ih_kb k;
    ih_kb_begin(&k, "vrot");
    uint32_t a = ih_kb_buf(&k, "a", t, 1), o = ih_kb_buf(&k, "o", t, 0);
    uint32_t sh = ih_kb_shared(&k, "sh", t, unsized ? 0 : block * w);
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), tid = ih_kb_reg(&k, "t", HG_DTYPE_U32);
    uint32_t j = ih_kb_reg(&k, "j", HG_DTYPE_U32);
    uint32_t x = reg_run(&k, "x", t, w);
    K(hg_emit_binary(k.p, HG_OP_MUL, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X), hg_imm_u64(w)));
    K(hg_emit_binary(k.p, HG_OP_MUL, HG_DTYPE_U32, tid, hg_sreg(HG_SREG_TID_X), hg_imm_u64(w)));
    K(hg_emit_load_vector(k.p, HG_SPACE_GLOBAL, t, w, x, a, hg_reg(i)));
    K(hg_emit_store_vector(k.p, HG_SPACE_SHARED, t, w, sh, hg_reg(tid), x));
    K(hg_emit_control(k.p, HG_OP_BAR, hg_none()));
    K(hg_emit_binary(k.p, HG_OP_ADD, HG_DTYPE_U32, j, hg_reg(tid), hg_imm_u64(w)));
    K(hg_emit_binary(k.p, HG_OP_REM, HG_DTYPE_U32, j, hg_reg(j), hg_imm_u64(block * w)));
    K(hg_emit_load_vector(k.p, HG_SPACE_SHARED, t, w, x, sh, hg_reg(j)));
    K(hg_emit_store_vector(k.p, HG_SPACE_GLOBAL, t, w, o, hg_reg(i), x));
    uint64_t* in = malloc(n * 8);
    uint64_t* out = calloc(n, 8);
    fill_values(t, in, n, rng);
    hg_buffer ba = ih_make_buf(t, n, in), bo = ih_make_buf(t, n, NULL);
    hg_arg args[] = {hg_arg_buffer(ba), hg_arg_buffer(bo)};
    hg_launch_config cfg = hg_launch_1d((uint64_t)block * grid, block);
    cfg.shared_bytes = unsized ? block * w * (uint32_t)ir_size(t) : 0;
    if (ih_kb_launch(&k, cfg, args, 2) == HG_OK) {
        ih_read_buf(bo, t, n, out);
        size_t bad = 0, span = (size_t)block * w;
        for (size_t q = 0; q < n; q++) {
            size_t base = q / span * span, src = base + (q - base + w) % span;
            if (out[q] != loaded(t, in[src]) && bad++ < 3)
                fprintf(stderr, "MISMATCH ldv/stv.shared.v%u.%s [%zu]: got 0x%llx want 0x%llx\n",
                        w, ir_name(t), q, (unsigned long long)out[q],
                        (unsigned long long)loaded(t, in[src]));
        }
        CHECK_MSG(bad == 0, "ldv/stv.shared.v%u.%s%s: %zu of %zu differ", w, ir_name(t),
                  unsized ? " (unsized)" : "", bad, n);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bo);
    ih_kb_end(&k);
    free(in);
    free(out);
}

// One lane accesses a run at index `at` (i64 parameter) of a 10-element range: runs that end
// past the range, or start before it, stop the launch with HG_ERR_OUT_OF_BOUNDS naming the
// instruction, and a store moves none of the run's elements.
static void test_bounds(int store, int64_t at, int in_bounds) {
    const hg_dtype t = HG_DTYPE_F32;
    const uint32_t w = 4;
    ih_kb k;
    ih_kb_begin(&k, store ? "vst_oob" : "vld_oob");
    uint32_t a = ih_kb_buf(&k, "a", t, 0), o = ih_kb_buf(&k, "o", t, 0);
    uint32_t pat = ih_kb_scalar(&k, "at", HG_DTYPE_I64);
    uint32_t x = reg_run(&k, "x", t, w);
    if (store) {
        for (uint32_t q = 0; q < w; q++)
            K(hg_emit_unary(k.p, HG_OP_MOV, t, x + q, hg_imm_f32(100.0f + (float)q)));
        K(hg_emit_store_vector(k.p, HG_SPACE_GLOBAL, t, w, a, hg_param(pat), x));
    } else {
        K(hg_emit_load_vector(k.p, HG_SPACE_GLOBAL, t, w, x, a, hg_param(pat)));
        K(hg_emit_store_vector(k.p, HG_SPACE_GLOBAL, t, w, o, hg_imm_i64(0), x));
    }
    uint64_t init[12];
    for (int q = 0; q < 12; q++) init[q] = 0x3f800000u + (uint64_t)q;   // 1.0 + q ulp
    hg_buffer ba = ih_make_buf(t, 12, init), bo = ih_make_buf(t, 4, NULL);
    hg_arg args[] = {hg_arg_buffer_range(ba, 1, 10), hg_arg_buffer(bo), hg_arg_i64(at)};
    hg_executor ex = ih_executor();
    hg_launch_config cfg = hg_launch_1d(1, 1);
    hg_status s = k.err ? HG_ERR_INVALID_PROGRAM : hg_launch(ex, k.p, &cfg, args, 3);
    // A device launch returns before it runs: its out-of-bounds report comes at the next
    // synchronizing call (docs/cuda.md "Asynchronous execution").
    if (s == HG_OK) s = hg_executor_synchronize(ex);
    uint64_t got[12], out[4];
    ih_read_buf(ba, t, 12, got);
    ih_read_buf(bo, t, 4, out);
    if (in_bounds) {
        CHECK_MSG(s == HG_OK, "%s at %lld of 10: %s", store ? "stv" : "ldv", (long long)at,
                  hg_last_error());
        for (uint32_t q = 0; q < w && s == HG_OK; q++) {
            float f = 100.0f + (float)q;
            uint32_t u;
            memcpy(&u, &f, 4);
            uint64_t want = store ? u : init[1 + at + q];
            uint64_t have = store ? got[1 + at + q] : out[q];
            CHECK_MSG(have == want, "%s at %lld element %u: 0x%llx, expected 0x%llx",
                      store ? "stv" : "ldv", (long long)at, q, (unsigned long long)have,
                      (unsigned long long)want);
        }
    } else {
        CHECK_MSG(s == HG_ERR_OUT_OF_BOUNDS, "%s at %lld of 10: status %s, expected "
                  "HG_ERR_OUT_OF_BOUNDS", store ? "stv" : "ldv", (long long)at,
                  hg_status_string(s));
        const char* msg = hg_last_error();
        CHECK_MSG(strstr(msg, store ? "stv.global.v4.f32" : "ldv.global.v4.f32") != NULL,
                  "the message names the instruction: %s", msg);
        int same = 1;
        for (int q = 0; q < 12; q++) same &= got[q] == init[q];
        CHECK_MSG(same, "%s at %lld: the buffer changed after an out-of-bounds run",
                  store ? "stv" : "ldv", (long long)at);
        for (int q = 0; q < 4 && !store; q++)
            CHECK_MSG(out[q] == 0, "ldv at %lld: the store after it ran", (long long)at);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bo);
    ih_kb_end(&k);
}

int main(void) {
    double t0 = ih_now();
    uint64_t rng = 0x5EC70A11D0001ull;
    int kernels = 0;
    for (int t = 0; t < HG_DTYPE_COUNT; t++)
        for (uint32_t w = 2; w * ir_size((hg_dtype)t) <= 16; w *= 2) {
            // One kernel per (type, width, index type): the offsets are parameters.
            test_global((hg_dtype)t, w, HG_DTYPE_U32, 0, 0, &rng);
            test_global((hg_dtype)t, w, HG_DTYPE_U32, 1, 0, &rng);   // unaligned addresses
            test_global((hg_dtype)t, w, HG_DTYPE_U32, 0, 3, &rng);   // an unaligned range
            test_global((hg_dtype)t, w, HG_DTYPE_U32, w, 16, &rng);  // aligned again
            kernels++;
        }
    test_global(HG_DTYPE_F32, 4, HG_DTYPE_I64, 0, 0, &rng);
    test_global(HG_DTYPE_U8, 16, HG_DTYPE_I32, 2, 1, &rng);
    test_global(HG_DTYPE_F16, 8, HG_DTYPE_U64, 8, 0, &rng);
    printf("  ldv/stv global: %d (type, width) kernels, aligned and unaligned\n", kernels);
    test_shared(HG_DTYPE_F32, 4, 0, &rng);
    test_shared(HG_DTYPE_F16, 8, 1, &rng);
    test_shared(HG_DTYPE_BOOL, 16, 0, &rng);
    test_shared(HG_DTYPE_F64, 2, 1, &rng);
    printf("  ldv/stv shared: static and unsized\n");
    for (int store = 0; store < 2; store++) {
        test_bounds(store, 6, 1);    // elements 6..9 of 10: the last run in bounds
        test_bounds(store, 0, 1);
        test_bounds(store, 7, 0);    // 7..10: one element past the end
        test_bounds(store, 9, 0);
        test_bounds(store, 10, 0);
        test_bounds(store, -1, 0);   // before the range (a huge index)
        test_bounds(store, INT64_MAX, 0);
    }
    printf("test_instructions_vector: %.1f s\n", ih_now() - t0);
    ih_shutdown();
    return hg_test_finish("test_instructions_vector");
}
