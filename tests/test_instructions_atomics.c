// Atomic instructions on the CPU backend: atom add/min/max/exch in i32 u32 i64 u64 f32 f64 and
// cas in the integer types, in global and shared space, with many lanes hitting the same
// element and with lanes spread over distinct elements. Checked against a sequential reference:
//  - final values: add = initial + sum (wrapping; exact for the integer-valued floats used),
//    min/max = fold (order independent, -0 < +0), exch = one of the written values;
//  - old values form a valid serialization: per element, the multiset {initial} + {op(old, v)}
//    equals {old} + {final} (every lane's step old -> op(old, v) links into one chain);
//  - counters: atom.add of 1 returns each of 0..n-1 exactly once;
//  - cas: per-lane outcomes on distinct elements, one winner under contention, and a cas loop
//    (loop / break) that increments a counter once per lane.
#include <math.h>
#include <stdlib.h>

#include "instr_harness.h"

#define K(expr) IH_K(&k, expr)
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const hg_dtype k_types[] = {HG_DTYPE_I32, HG_DTYPE_U32, HG_DTYPE_I64,
                                   HG_DTYPE_U64, HG_DTYPE_F32, HG_DTYPE_F64};
static const char* const k_aop_names[] = {"add", "min", "max", "exch", "cas"};

static int cmp_u64(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

// One atomic step in the reference: the new value of the element.
static uint64_t step(hg_atomic_op aop, hg_dtype t, uint64_t old, uint64_t v) {
    switch (aop) {
    case HG_ATOMIC_ADD: return ir_arith(HG_OP_ADD, t, old, v, 0);
    case HG_ATOMIC_MIN: return ir_arith(HG_OP_MIN, t, old, v, 0);
    case HG_ATOMIC_MAX: return ir_arith(HG_OP_MAX, t, old, v, 0);
    default: return v;
    }
}

static uint64_t rand_operand(hg_atomic_op aop, hg_dtype t, uint64_t* rng) {
    uint64_t r = hg_test_rand(rng);
    if (!ir_is_float(t)) return (r & 3) ? r & ir_mask(t) : ih_rand_moderate(t, rng);
    if (aop == HG_ATOMIC_ADD)  // integer-valued: every order gives the same exact sum
        return t == HG_DTYPE_F32 ? ir_bits_f32((float)((int)(r % 2001) - 1000))
                                 : ir_bits_f64((double)((int64_t)(r % 200001) - 100000));
    if ((r & 15) == 0) {  // zeros and infinities of both signs (no NaN: see test_float_nan)
        const double sp[] = {0.0, -0.0, INFINITY, -INFINITY};
        return ir_from_double(sp[(r >> 4) & 3], t);
    }
    if (aop == HG_ATOMIC_EXCH) return hg_test_rand(rng) & ir_mask(t);  // any bits move
    return ih_rand_moderate(t, rng);
}

// Lanes n, elements m per block (shared) or in all (global); element of lane i:
// global: i % m; shared: (i / block) * m + (i % block) % m.
static void test_rmw(hg_atomic_op aop, hg_dtype t, hg_space space, size_t m, uint64_t* rng) {
    const uint32_t block = 256;
    const size_t n = space == HG_SPACE_SHARED ? (size_t)block * 8 : 3001;
    const size_t nelem = space == HG_SPACE_SHARED ? (n / block) * m : m;
    ih_kb k;
    ih_kb_begin(&k, "rmw");
    uint32_t bb = ih_kb_buf(&k, "buf", t, 0), bv = ih_kb_buf(&k, "v", t, 1);
    uint32_t bo = ih_kb_buf(&k, "olds", t, 0), pn = ih_kb_scalar(&k, "n", HG_DTYPE_U32);
    uint32_t pm = ih_kb_scalar(&k, "m", HG_DTYPE_U32);
    uint32_t sh = space == HG_SPACE_SHARED ? ih_kb_shared(&k, "sh", t, (uint32_t)m) : 0;
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), tid = ih_kb_reg(&k, "tid", HG_DTYPE_U32);
    uint32_t e = ih_kb_reg(&k, "e", HG_DTYPE_U32), g = ih_kb_reg(&k, "g", HG_DTYPE_U32);
    uint32_t p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL), q = ih_kb_reg(&k, "q", HG_DTYPE_BOOL);
    uint32_t x = ih_kb_reg(&k, "x", t), old = ih_kb_reg(&k, "old", t), z = ih_kb_reg(&k, "z", t);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, tid, hg_sreg(HG_SREG_TID_X)));
    K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, p, hg_reg(i), hg_param(pn)));
    if (space == HG_SPACE_SHARED) {
        // Lanes tid < m copy the block's slice of buf into shared memory.
        K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, q, hg_reg(tid), hg_param(pm)));
        K(hg_emit_binary(k.p, HG_OP_MUL, HG_DTYPE_U32, g, hg_sreg(HG_SREG_CTAID_X), hg_param(pm)));
        K(hg_emit_binary(k.p, HG_OP_ADD, HG_DTYPE_U32, g, hg_reg(g), hg_reg(tid)));
        K(hg_emit_control(k.p, HG_OP_IF, hg_reg(q)));
        K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, z, bb, hg_reg(g)));
        K(hg_emit_store(k.p, HG_SPACE_SHARED, t, sh, hg_reg(tid), hg_reg(z)));
        K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
        K(hg_emit_control(k.p, HG_OP_BAR, hg_none()));
        K(hg_emit_binary(k.p, HG_OP_REM, HG_DTYPE_U32, e, hg_reg(tid), hg_param(pm)));
    } else {
        K(hg_emit_binary(k.p, HG_OP_REM, HG_DTYPE_U32, e, hg_reg(i), hg_param(pm)));
    }
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, x, bv, hg_reg(i)));
    K(ih_emit_atom(k.p, aop, space, t, space == HG_SPACE_SHARED ? sh : bb, hg_reg(old), hg_reg(e),
                   hg_reg(x), hg_none()));
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, bo, hg_reg(i), hg_reg(old)));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    if (space == HG_SPACE_SHARED) {
        K(hg_emit_control(k.p, HG_OP_BAR, hg_none()));
        K(hg_emit_control(k.p, HG_OP_IF, hg_reg(q)));
        K(hg_emit_load(k.p, HG_SPACE_SHARED, t, z, sh, hg_reg(tid)));
        K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, bb, hg_reg(g), hg_reg(z)));
        K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    }
    uint64_t* init = malloc(nelem * 8);
    uint64_t* fin = malloc(nelem * 8);
    uint64_t* v = malloc(n * 8);
    uint64_t* olds = malloc(n * 8);
    for (size_t j = 0; j < nelem; j++) init[j] = rand_operand(aop, t, rng);
    for (size_t j = 0; j < n; j++) v[j] = rand_operand(aop, t, rng);
    hg_buffer b_buf = ih_make_buf(t, nelem, init), b_v = ih_make_buf(t, n, v);
    hg_buffer b_o = ih_make_buf(t, n, NULL);
    hg_arg args[] = {hg_arg_buffer(b_buf), hg_arg_buffer(b_v), hg_arg_buffer(b_o),
                     hg_arg_u32((uint32_t)n), hg_arg_u32((uint32_t)m)};
    char label[64];
    snprintf(label, sizeof label, "atom.%s.%s.%s (%zu elements)", space ? "shared" : "global",
             k_aop_names[aop], ir_name(t), nelem);
    if (ih_kb_launch(&k, hg_launch_1d(n, block), args, COUNT(args)) == HG_OK) {
        ih_read_buf(b_buf, t, nelem, fin);
        ih_read_buf(b_o, t, n, olds);
        size_t bad_final = 0, bad_chain = 0;
        // Per element: reference final value and the chain multiset identity.
        uint64_t* lhs = malloc((n + 1) * 8);
        uint64_t* rhs = malloc((n + 1) * 8);
        for (size_t el = 0; el < nelem; el++) {
            uint64_t want = init[el];
            size_t cnt = 0;
            int final_is_written = aop != HG_ATOMIC_EXCH;
            lhs[cnt] = init[el];
            rhs[cnt] = fin[el];
            cnt++;
            for (size_t j = 0; j < n; j++) {
                size_t ej = space == HG_SPACE_SHARED ? (j / block) * m + (j % block) % m : j % m;
                if (ej != el) continue;
                want = step(aop, t, want, v[j]);
                if (aop == HG_ATOMIC_EXCH && v[j] == fin[el]) final_is_written = 1;
                lhs[cnt] = step(aop, t, olds[j], v[j]);
                rhs[cnt] = olds[j];
                cnt++;
            }
            if (aop != HG_ATOMIC_EXCH ? !ir_same_value(fin[el], want, t) : !final_is_written) {
                if (bad_final++ < 3) {
                    char b1[64], b2[64];
                    fprintf(stderr, "MISMATCH %s: element %zu final %s, reference %s\n", label,
                            el, ir_fmt(b1, sizeof b1, fin[el], t), ir_fmt(b2, sizeof b2, want, t));
                }
            }
            qsort(lhs, cnt, 8, cmp_u64);
            qsort(rhs, cnt, 8, cmp_u64);
            if (memcmp(lhs, rhs, cnt * 8) != 0 && bad_chain++ < 3)
                fprintf(stderr, "MISMATCH %s: element %zu: returned old values do not form one "
                        "chain of steps from the initial to the final value\n", label, el);
        }
        CHECK_MSG(bad_final == 0, "%s: %zu elements with a wrong final value", label, bad_final);
        CHECK_MSG(bad_chain == 0, "%s: %zu elements with inconsistent old values", label,
                  bad_chain);
        printf("  %-44s %5zu lanes  %s\n", label, n, bad_final || bad_chain ? "MISMATCH" : "ok");
        free(lhs);
        free(rhs);
    }
    hg_buffer_destroy(b_buf);
    hg_buffer_destroy(b_v);
    hg_buffer_destroy(b_o);
    ih_kb_end(&k);
    free(init);
    free(fin);
    free(v);
    free(olds);
}

// atom.add of 1 (immediate) on one counter: the olds are exactly 0..n-1, the final value n.
// Shared: one counter per block, lane 0 writes it out after a barrier.
static void test_counter(hg_dtype t, hg_space space) {
    const uint32_t block = 256;
    const size_t n = space == HG_SPACE_SHARED ? (size_t)block * 6 : 5000;
    const size_t ncnt = space == HG_SPACE_SHARED ? n / block : 1;
    uint64_t one = ir_is_float(t) ? ir_from_double(1.0, t) : 1;
    ih_kb k;
    ih_kb_begin(&k, "counter");
    uint32_t bc = ih_kb_buf(&k, "c", t, 0), bo = ih_kb_buf(&k, "olds", t, 0);
    uint32_t pn = ih_kb_scalar(&k, "n", HG_DTYPE_U32);
    uint32_t sh = space == HG_SPACE_SHARED ? ih_kb_shared(&k, "sh", t, 1) : 0;
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL);
    uint32_t tid = ih_kb_reg(&k, "tid", HG_DTYPE_U32), old = ih_kb_reg(&k, "old", t);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, p, hg_reg(i), hg_param(pn)));
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(ih_emit_atom(k.p, HG_ATOMIC_ADD, space, t, space == HG_SPACE_SHARED ? sh : bc, hg_reg(old),
                   hg_imm_u64(0), hg_imm_bits(one), hg_none()));
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, bo, hg_reg(i), hg_reg(old)));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    if (space == HG_SPACE_SHARED) {
        K(hg_emit_control(k.p, HG_OP_BAR, hg_none()));
        K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, tid, hg_sreg(HG_SREG_TID_X)));
        K(hg_emit_cmp(k.p, HG_CMP_EQ, HG_DTYPE_U32, p, hg_reg(tid), hg_imm_u64(0)));
        K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
        K(hg_emit_load(k.p, HG_SPACE_SHARED, t, old, sh, hg_imm_u64(0)));
        K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, bc, hg_sreg(HG_SREG_CTAID_X), hg_reg(old)));
        K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    }
    hg_buffer b_c = ih_make_buf(t, ncnt, NULL), b_o = ih_make_buf(t, n, NULL);
    hg_arg args[] = {hg_arg_buffer(b_c), hg_arg_buffer(b_o), hg_arg_u32((uint32_t)n)};
    if (ih_kb_launch(&k, hg_launch_1d(n, block), args, COUNT(args)) == HG_OK) {
        uint64_t* olds = malloc(n * 8);
        uint64_t* cnt = malloc(ncnt * 8);
        ih_read_buf(b_o, t, n, olds);
        ih_read_buf(b_c, t, ncnt, cnt);
        size_t per = n / ncnt, bad = 0;
        for (size_t c = 0; c < ncnt; c++) {
            // Olds of this counter's lanes, converted to integers, sorted: must be 0..per-1.
            uint64_t* vals = malloc(per * 8);
            for (size_t j = 0; j < per; j++) {
                uint64_t b = olds[c * per + j];
                vals[j] = ir_is_float(t) ? (uint64_t)ir_to_double(b, t) : b;
            }
            qsort(vals, per, 8, cmp_u64);
            for (size_t j = 0; j < per; j++) bad += vals[j] != j;
            uint64_t fin = ir_is_float(t) ? (uint64_t)ir_to_double(cnt[c], t) : cnt[c];
            bad += fin != per;
            free(vals);
        }
        CHECK_MSG(bad == 0, "atom.%s.add.%s counter: %zu wrong olds/finals",
                  space ? "shared" : "global", ir_name(t), bad);
        printf("  atom.%s.add.%s counter of %zu lanes: olds are 0..%zu  %s\n",
               space ? "shared" : "global", ir_name(t), per, per - 1, bad ? "MISMATCH" : "ok");
        free(olds);
        free(cnt);
    }
    hg_buffer_destroy(b_c);
    hg_buffer_destroy(b_o);
    ih_kb_end(&k);
}

// Float min/max with a NaN operand: the element ends NaN whatever the order.
static void test_float_nan(hg_dtype t, hg_atomic_op aop) {
    const size_t n = 700;
    ih_kb k;
    ih_kb_begin(&k, "fnan");
    uint32_t bb = ih_kb_buf(&k, "buf", t, 0), bv = ih_kb_buf(&k, "v", t, 1);
    uint32_t pn = ih_kb_scalar(&k, "n", HG_DTYPE_U32);
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL);
    uint32_t x = ih_kb_reg(&k, "x", t);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, p, hg_reg(i), hg_param(pn)));
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, x, bv, hg_reg(i)));
    K(ih_emit_atom(k.p, aop, HG_SPACE_GLOBAL, t, bb, hg_none(), hg_imm_u64(0), hg_reg(x),
                   hg_none()));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    uint64_t* v = malloc(n * 8);
    for (size_t j = 0; j < n; j++) v[j] = ir_from_double((double)j - 300, t);
    v[n / 3] = ir_from_double(NAN, t);
    uint64_t init = ir_from_double(1.0, t), fin = 0;
    hg_buffer b_b = ih_make_buf(t, 1, &init), b_v = ih_make_buf(t, n, v);
    hg_arg args[] = {hg_arg_buffer(b_b), hg_arg_buffer(b_v), hg_arg_u32((uint32_t)n)};
    if (ih_kb_launch(&k, hg_launch_1d(n, 128), args, COUNT(args)) == HG_OK) {
        ih_read_buf(b_b, t, 1, &fin);
        CHECK_MSG(ir_is_nan(fin, t), "atom.global.%s.%s with one NaN operand (result discarded): "
                  "final 0x%llx, want NaN", k_aop_names[aop], ir_name(t), (unsigned long long)fin);
    }
    hg_buffer_destroy(b_b);
    hg_buffer_destroy(b_v);
    ih_kb_end(&k);
    free(v);
}

// cas: (1) lane i on element i: old = init[i]; stored new[i] iff init[i] == cmp[i].
//      (2) all lanes cas(e[0], 0, i + 1): one winner gets 0, the others see the winner's value.
//      (3) cas loop: loop { ld old; new = old + 1; got = cas(c[0], old, new); break got == old }.
static void test_cas(hg_dtype t, hg_space space, uint64_t* rng) {
    const size_t n = 2048;  // multiple of the block: shared variants have no idle lanes
    const uint32_t block = 256;
    ih_kb k;
    // (1) + (2) in one kernel: element i of buf (distinct) and element 0 of one (contended).
    ih_kb_begin(&k, "cas");
    uint32_t bb = ih_kb_buf(&k, "buf", t, 0), bcmp = ih_kb_buf(&k, "cmpv", t, 1);
    uint32_t bnew = ih_kb_buf(&k, "newv", t, 1), bo = ih_kb_buf(&k, "olds", t, 0);
    uint32_t bone = ih_kb_buf(&k, "one", t, 0), bo2 = ih_kb_buf(&k, "olds2", t, 0);
    uint32_t sh = space == HG_SPACE_SHARED ? ih_kb_shared(&k, "sh", t, block) : 0;
    uint32_t sh1 = space == HG_SPACE_SHARED ? ih_kb_shared(&k, "sh1", t, 1) : 0;
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), tid = ih_kb_reg(&k, "tid", HG_DTYPE_U32);
    uint32_t p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL);
    uint32_t x = ih_kb_reg(&k, "x", t), y = ih_kb_reg(&k, "y", t), old = ih_kb_reg(&k, "old", t);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, tid, hg_sreg(HG_SREG_TID_X)));
    uint32_t slot = bb, slot1 = bone;
    hg_operand idx = hg_reg(i);
    if (space == HG_SPACE_SHARED) {
        K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, x, bb, hg_reg(i)));
        K(hg_emit_store(k.p, HG_SPACE_SHARED, t, sh, hg_reg(tid), hg_reg(x)));
        K(hg_emit_control(k.p, HG_OP_BAR, hg_none()));
        slot = sh;
        slot1 = sh1;
        idx = hg_reg(tid);
    }
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, x, bcmp, hg_reg(i)));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, y, bnew, hg_reg(i)));
    K(ih_emit_atom(k.p, HG_ATOMIC_CAS, space, t, slot, hg_reg(old), idx, hg_reg(x), hg_reg(y)));
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, bo, hg_reg(i), hg_reg(old)));
    K(hg_emit_unary(k.p, HG_OP_CVT, t, y, hg_reg(i)));
    K(hg_emit_binary(k.p, HG_OP_ADD, t, y, hg_reg(y), hg_imm_u64(1)));
    K(ih_emit_atom(k.p, HG_ATOMIC_CAS, space, t, slot1, hg_reg(old), hg_imm_u64(0), hg_imm_u64(0),
                   hg_reg(y)));
    K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, bo2, hg_reg(i), hg_reg(old)));
    if (space == HG_SPACE_SHARED) {
        K(hg_emit_control(k.p, HG_OP_BAR, hg_none()));
        K(hg_emit_load(k.p, HG_SPACE_SHARED, t, x, sh, hg_reg(tid)));
        K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, bb, hg_reg(i), hg_reg(x)));
        K(hg_emit_cmp(k.p, HG_CMP_EQ, HG_DTYPE_U32, p, hg_reg(tid), hg_imm_u64(0)));
        K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
        K(hg_emit_load(k.p, HG_SPACE_SHARED, t, x, sh1, hg_imm_u64(0)));
        K(hg_emit_store(k.p, HG_SPACE_GLOBAL, t, bone, hg_sreg(HG_SREG_CTAID_X), hg_reg(x)));
        K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    }
    size_t nb = n / block, ngroups = space == HG_SPACE_SHARED ? nb : 1, per = n / ngroups;
    uint64_t *init = malloc(n * 8), *cmpv = malloc(n * 8), *newv = malloc(n * 8);
    uint64_t *olds = malloc(n * 8), *olds2 = malloc(n * 8), *fin = malloc(n * 8);
    uint64_t ones[16] = {0};
    for (size_t j = 0; j < n; j++) {
        init[j] = hg_test_rand(rng) & ir_mask(t);
        cmpv[j] = (j & 1) ? init[j] : (init[j] ^ (1ull << (j % ir_width(t))));
        newv[j] = hg_test_rand(rng) & ir_mask(t);
    }
    hg_buffer b1 = ih_make_buf(t, n, init), b2 = ih_make_buf(t, n, cmpv);
    hg_buffer b3 = ih_make_buf(t, n, newv), b4 = ih_make_buf(t, n, NULL);
    hg_buffer b5 = ih_make_buf(t, ngroups, NULL), b6 = ih_make_buf(t, n, NULL);
    hg_arg args[] = {hg_arg_buffer(b1), hg_arg_buffer(b2), hg_arg_buffer(b3),
                     hg_arg_buffer(b4), hg_arg_buffer(b5), hg_arg_buffer(b6)};
    const char* sp = space ? "shared" : "global";
    if (ih_kb_launch(&k, hg_launch_1d(n, block), args, COUNT(args)) == HG_OK) {
        ih_read_buf(b1, t, n, fin);
        ih_read_buf(b4, t, n, olds);
        ih_read_buf(b6, t, n, olds2);
        ih_read_buf(b5, t, ngroups, ones);
        size_t bad = 0;
        for (size_t j = 0; j < n; j++) {
            uint64_t want = init[j] == cmpv[j] ? newv[j] : init[j];
            if ((olds[j] != init[j] || fin[j] != want) && bad++ < 3)
                fprintf(stderr, "MISMATCH atom.%s.cas.%s lane %zu: old 0x%llx final 0x%llx, want "
                        "0x%llx 0x%llx\n", sp, ir_name(t), j, (unsigned long long)olds[j],
                        (unsigned long long)fin[j], (unsigned long long)init[j],
                        (unsigned long long)want);
        }
        CHECK_MSG(bad == 0, "atom.%s.cas.%s on distinct elements: %zu wrong", sp, ir_name(t), bad);
        size_t bad2 = 0;
        for (size_t gi = 0; gi < ngroups; gi++) {
            size_t winners = 0;
            for (size_t j = gi * per; j < (gi + 1) * per; j++) {
                if (olds2[j] == 0) winners++;
                else bad2 += olds2[j] != ones[gi];
            }
            uint64_t w = ones[gi] - 1;  // winner lane id
            bad2 += winners != 1 || w < gi * per || w >= (gi + 1) * per || olds2[w] != 0;
        }
        CHECK_MSG(bad2 == 0, "atom.%s.cas.%s contended: %zu inconsistencies (want exactly one "
                  "winner per element and every other lane seeing its value)", sp, ir_name(t),
                  bad2);
        printf("  atom.%s.cas.%s: %zu distinct + %zu contended lanes  %s\n", sp, ir_name(t), n, n,
               bad || bad2 ? "MISMATCH" : "ok");
    }
    hg_buffer_destroy(b1); hg_buffer_destroy(b2); hg_buffer_destroy(b3);
    hg_buffer_destroy(b4); hg_buffer_destroy(b5); hg_buffer_destroy(b6);
    ih_kb_end(&k);
    free(init); free(cmpv); free(newv); free(olds); free(olds2); free(fin);
}

static void test_cas_loop(hg_dtype t) {
    const size_t n = 1500;
    ih_kb k;
    ih_kb_begin(&k, "casloop");
    uint32_t bc = ih_kb_buf(&k, "c", t, 0), pn = ih_kb_scalar(&k, "n", HG_DTYPE_U32);
    uint32_t i = ih_kb_reg(&k, "i", HG_DTYPE_U32), p = ih_kb_reg(&k, "p", HG_DTYPE_BOOL);
    uint32_t old = ih_kb_reg(&k, "old", t), nv = ih_kb_reg(&k, "nv", t);
    uint32_t got = ih_kb_reg(&k, "got", t), done = ih_kb_reg(&k, "done", HG_DTYPE_BOOL);
    K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    K(hg_emit_cmp(k.p, HG_CMP_LT, HG_DTYPE_U32, p, hg_reg(i), hg_param(pn)));
    K(hg_emit_control(k.p, HG_OP_IF, hg_reg(p)));
    K(hg_emit_control(k.p, HG_OP_LOOP, hg_none()));
    K(hg_emit_load(k.p, HG_SPACE_GLOBAL, t, old, bc, hg_imm_u64(0)));
    K(hg_emit_binary(k.p, HG_OP_ADD, t, nv, hg_reg(old), hg_imm_u64(1)));
    K(ih_emit_atom(k.p, HG_ATOMIC_CAS, HG_SPACE_GLOBAL, t, bc, hg_reg(got), hg_imm_u64(0),
                   hg_reg(old), hg_reg(nv)));
    K(hg_emit_cmp(k.p, HG_CMP_EQ, t, done, hg_reg(got), hg_reg(old)));
    K(hg_emit_control(k.p, HG_OP_BREAK, hg_reg(done)));
    K(hg_emit_control(k.p, HG_OP_ENDLOOP, hg_none()));
    K(hg_emit_control(k.p, HG_OP_ENDIF, hg_none()));
    uint64_t init = 1000, fin = 0;
    hg_buffer b = ih_make_buf(t, 1, &init);
    hg_arg args[] = {hg_arg_buffer(b), hg_arg_u32((uint32_t)n)};
    if (ih_kb_launch(&k, hg_launch_1d(n, 256), args, COUNT(args)) == HG_OK) {
        ih_read_buf(b, t, 1, &fin);
        CHECK_MSG(fin == init + n, "cas loop increment %s: final %llu, want %llu", ir_name(t),
                  (unsigned long long)fin, (unsigned long long)(init + n));
        printf("  cas loop (loop/break) counter %s: %llu  %s\n", ir_name(t),
               (unsigned long long)fin, fin == init + n ? "ok" : "MISMATCH");
    }
    hg_buffer_destroy(b);
    ih_kb_end(&k);
}

int main(void) {
    double t0 = ih_now();
    uint64_t rng = 0xA7145EED0006ull;
    for (size_t ti = 0; ti < COUNT(k_types); ti++) {
        hg_dtype t = k_types[ti];
        for (int sp = 0; sp < HG_SPACE_COUNT; sp++) {
            for (int aop = HG_ATOMIC_ADD; aop <= HG_ATOMIC_EXCH; aop++) {
                test_rmw((hg_atomic_op)aop, t, (hg_space)sp, 1, &rng);    // all lanes, one element
                test_rmw((hg_atomic_op)aop, t, (hg_space)sp, 16, &rng);   // spread out
            }
            test_counter(t, (hg_space)sp);
            if (!ir_is_float(t)) test_cas(t, (hg_space)sp, &rng);
        }
        if (ir_is_float(t)) {
            test_float_nan(t, HG_ATOMIC_MIN);
            test_float_nan(t, HG_ATOMIC_MAX);
        } else {
            test_cas_loop(t);
        }
    }
    printf("test_instructions_atomics: %.1f s\n", ih_now() - t0);
    ih_shutdown();
    return hg_test_finish("test_instructions_atomics");
}
