// Instruction-test harness: kernel building, launching and comparison; see instr_harness.h.
#include "instr_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static hg_executor g_ex;
static int g_ex_state;  // 0 untried, 1 ok, -1 failed

// HG_TEST_BACKEND (default cpu) runs the instruction tests on another backend: with
// HOLOGRAM_CUDA_EMULATE=1 and HG_TEST_BACKEND=cuda they check the CUDA code generator against
// the same references (tests/CMakeLists.txt registers those runs).
hg_executor ih_executor(void) {
    if (g_ex_state == 0) {
        const char* name = getenv("HG_TEST_BACKEND");
        if (!name || !name[0]) name = "cpu";
        hg_status s = hg_executor_create_by_name(name, &g_ex);
        g_ex_state = s == HG_OK ? 1 : -1;
        CHECK_MSG(s == HG_OK, "hg_executor_create(%s): %s: %s", name, hg_status_string(s),
                  hg_last_error());
    }
    if (g_ex_state < 0) { hg_executor none = {0}; return none; }
    return g_ex;
}

// ---- one-entry program cache ---------------------------------------------------------------
static ih_kspec g_cached;
static hg_program g_prog;
static int g_have_prog;

static int same_kernel(const ih_kspec* a, const ih_kspec* b) {
    if (a->op != b->op || a->type != b->type || a->aux != b->aux || a->nsrc != b->nsrc ||
        a->dst_t != b->dst_t || a->sparse != b->sparse)
        return 0;
    for (int k = 0; k < a->nsrc; k++) {
        if (a->src_t[k] != b->src_t[k] || a->mode[k] != b->mode[k]) return 0;
        if (a->mode[k] == IH_IMM && a->uni[k] != b->uni[k]) return 0;
    }
    return 1;
}

void ih_shutdown(void) {
    if (g_have_prog) hg_program_destroy(g_prog);
    g_have_prog = 0;
    if (g_ex_state == 1) CHECK_OK(hg_executor_destroy(g_ex));
    g_ex_state = 0;
}

ih_kspec ih_spec(hg_opcode op, hg_dtype type, uint8_t aux) {
    ih_kspec ks;
    memset(&ks, 0, sizeof ks);
    ks.op = op;
    ks.type = type;
    ks.aux = aux;
    ks.dst_t = type;
    ks.nsrc = 1;
    for (int k = 0; k < 3; k++) ks.src_t[k] = type;
    switch (op) {
    case HG_OP_ADD: case HG_OP_SUB: case HG_OP_MUL: case HG_OP_DIV: case HG_OP_REM:
    case HG_OP_MIN: case HG_OP_MAX: case HG_OP_AND: case HG_OP_OR: case HG_OP_XOR:
    case HG_OP_SHL: case HG_OP_SHR:
        ks.nsrc = 2;
        break;
    case HG_OP_FMA: ks.nsrc = 3; break;
    case HG_OP_CMP: ks.nsrc = 2; ks.dst_t = HG_DTYPE_BOOL; break;
    case HG_OP_SEL: ks.nsrc = 3; ks.src_t[0] = HG_DTYPE_BOOL; break;
    case HG_OP_CVT: ks.src_t[0] = (hg_dtype)aux; break;
    default: break;
    }
    return ks;
}

const char* ih_spec_name(const ih_kspec* ks) {
    static char buf[64];
    if (ks->op == HG_OP_CMP)
        snprintf(buf, sizeof buf, "cmp.%s.%s", ir_cmp_name((hg_cmp)ks->aux), ir_name(ks->type));
    else if (ks->op == HG_OP_CVT)
        snprintf(buf, sizeof buf, "cvt.%s.%s", ir_name(ks->type), ir_name((hg_dtype)ks->aux));
    else
        snprintf(buf, sizeof buf, "%s.%s", ir_op_name(ks->op), ir_name(ks->type));
    return buf;
}

#define TRY(expr)                                                                        \
    do {                                                                                 \
        hg_status s_ = (expr);                                                           \
        if (s_ != HG_OK) {                                                               \
            CHECK_MSG(0, "%s: %s failed: %s: %s", ih_spec_name(ks), #expr,               \
                      hg_status_string(s_), hg_last_error());                            \
            hg_program_destroy(p);                                                       \
            return s_;                                                                   \
        }                                                                                \
    } while (0)

// Builds:  mov.u32 i, %gid.x; cmp.lt.u32 p, i, n; if p; ld operands; OP; st out[i]; endif
// (sparse: i = %gid.x >> 1 and p also requires %gid.x even).
// Parameters: a<k> (REG operands), out, n, s<k> (PARAM operands), in that order.
static hg_status build(const ih_kspec* ks, hg_program* out) {
    hg_program p = {0};
    hg_status s0 = hg_program_create("instr_test", &p);
    if (s0 != HG_OK) {
        CHECK_MSG(0, "hg_program_create: %s", hg_last_error());
        return s0;
    }
    uint32_t slot_a[3] = {0}, slot_out, par_n, par_s[3] = {0}, r_i, r_p, r_x[3] = {0}, r_y;
    char name[16];
    for (int k = 0; k < ks->nsrc; k++) {
        if (ks->mode[k] != IH_REG) continue;
        snprintf(name, sizeof name, "a%d", k);
        TRY(hg_program_add_buffer_param(p, name, ks->src_t[k], 1, &slot_a[k]));
    }
    TRY(hg_program_add_buffer_param(p, "out", ks->dst_t, 0, &slot_out));
    TRY(hg_program_add_scalar_param(p, "n", HG_DTYPE_U32, &par_n));
    for (int k = 0; k < ks->nsrc; k++) {
        if (ks->mode[k] != IH_PARAM) continue;
        snprintf(name, sizeof name, "s%d", k);
        TRY(hg_program_add_scalar_param(p, name, ks->src_t[k], &par_s[k]));
    }
    TRY(hg_program_add_reg(p, "i", HG_DTYPE_U32, &r_i));
    TRY(hg_program_add_reg(p, "p", HG_DTYPE_BOOL, &r_p));
    for (int k = 0; k < ks->nsrc; k++) {
        if (ks->mode[k] != IH_REG) continue;
        snprintf(name, sizeof name, "x%d", k);
        TRY(hg_program_add_reg(p, name, ks->src_t[k], &r_x[k]));
    }
    TRY(hg_program_add_reg(p, "y", ks->dst_t, &r_y));

    TRY(hg_emit_unary(p, HG_OP_MOV, HG_DTYPE_U32, r_i, hg_sreg(HG_SREG_GID_X)));
    if (ks->sparse) {
        uint32_t r_odd, r_q;
        TRY(hg_program_add_reg(p, "odd", HG_DTYPE_U32, &r_odd));
        TRY(hg_program_add_reg(p, "q", HG_DTYPE_BOOL, &r_q));
        TRY(hg_emit_binary(p, HG_OP_AND, HG_DTYPE_U32, r_odd, hg_reg(r_i), hg_imm_u64(1)));
        TRY(hg_emit_cmp(p, HG_CMP_EQ, HG_DTYPE_U32, r_q, hg_reg(r_odd), hg_imm_u64(0)));
        TRY(hg_emit_binary(p, HG_OP_SHR, HG_DTYPE_U32, r_i, hg_reg(r_i), hg_imm_u64(1)));
        TRY(hg_emit_cmp(p, HG_CMP_LT, HG_DTYPE_U32, r_p, hg_reg(r_i), hg_param(par_n)));
        TRY(hg_emit_binary(p, HG_OP_AND, HG_DTYPE_BOOL, r_p, hg_reg(r_p), hg_reg(r_q)));
    } else {
        TRY(hg_emit_cmp(p, HG_CMP_LT, HG_DTYPE_U32, r_p, hg_reg(r_i), hg_param(par_n)));
    }
    TRY(hg_emit_control(p, HG_OP_IF, hg_reg(r_p)));
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = (uint16_t)ks->op;
    in.type = (uint8_t)ks->type;
    in.aux = ks->aux;
    in.dst = hg_reg(r_y);
    for (int k = 0; k < ks->nsrc; k++) {
        switch (ks->mode[k]) {
        case IH_REG:
            TRY(hg_emit_load(p, HG_SPACE_GLOBAL, ks->src_t[k], r_x[k], slot_a[k], hg_reg(r_i)));
            in.src[k] = hg_reg(r_x[k]);
            break;
        case IH_IMM: in.src[k] = hg_imm_bits(ks->uni[k]); break;
        case IH_PARAM: in.src[k] = hg_param(par_s[k]); break;
        }
    }
    TRY(hg_program_emit(p, &in));
    TRY(hg_emit_store(p, HG_SPACE_GLOBAL, ks->dst_t, slot_out, hg_reg(r_i), hg_reg(r_y)));
    TRY(hg_emit_control(p, HG_OP_ENDIF, hg_none()));
    TRY(hg_program_validate(p));
    *out = p;
    return HG_OK;
}

void ih_pack(void* dst, const uint64_t* src, size_t n, hg_dtype t) {
    int sz = ir_size(t);
    unsigned char* d = dst;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < sz; b++) d[i * sz + b] = (unsigned char)(src[i] >> (8 * b));
}

void ih_unpack(uint64_t* dst, const void* src, size_t n, hg_dtype t) {
    int sz = ir_size(t);
    const unsigned char* s = src;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        for (int b = 0; b < sz; b++) v |= (uint64_t)s[i * sz + b] << (8 * b);
        dst[i] = v;
    }
}

static hg_status run_chunk(const ih_kspec* ks, size_t n, const uint64_t* const in[3],
                           uint64_t* out) {
    hg_executor ex = ih_executor();
    if (!ex.handle) return HG_ERR_BACKEND_UNAVAILABLE;
    hg_buffer bufs[4] = {{0}};
    hg_arg args[8];
    size_t nargs = 0;
    hg_status s = HG_OK;
    void* host = malloc(n * 8 + 8);
    if (!host) return HG_ERR_OUT_OF_MEMORY;
    for (int k = 0; k < ks->nsrc && s == HG_OK; k++) {
        if (ks->mode[k] != IH_REG) continue;
        s = hg_buffer_create(ex, ks->src_t[k], n, &bufs[k]);
        if (s == HG_OK) {
            ih_pack(host, in[k], n, ks->src_t[k]);
            s = hg_buffer_write(bufs[k], 0, host, n);
        }
        args[nargs++] = hg_arg_buffer(bufs[k]);
    }
    if (s == HG_OK) s = hg_buffer_create(ex, ks->dst_t, n, &bufs[3]);
    args[nargs++] = hg_arg_buffer(bufs[3]);
    args[nargs++] = hg_arg_u32((uint32_t)n);
    for (int k = 0; k < ks->nsrc; k++)
        if (ks->mode[k] == IH_PARAM) args[nargs++] = hg_arg_scalar(ks->src_t[k], ks->uni[k]);
    if (s == HG_OK) {
        hg_launch_config cfg = hg_launch_1d(ks->sparse ? 2 * n : n, 256);
        s = hg_launch(ex, g_prog, &cfg, args, nargs);
    }
    if (s == HG_OK) s = hg_buffer_read(bufs[3], 0, host, n);
    if (s == HG_OK) ih_unpack(out, host, n, ks->dst_t);
    else
        CHECK_MSG(0, "%s: launch of %zu lanes failed: %s: %s", ih_spec_name(ks), n,
                  hg_status_string(s), hg_last_error());
    for (int k = 0; k < 4; k++)
        if (bufs[k].handle) hg_buffer_destroy(bufs[k]);
    free(host);
    return s;
}

hg_status ih_run(const ih_kspec* ks, size_t n, const uint64_t* const in[3], uint64_t* out) {
    if (!g_have_prog || !same_kernel(ks, &g_cached)) {
        if (g_have_prog) hg_program_destroy(g_prog);
        g_have_prog = 0;
        hg_status s = build(ks, &g_prog);
        if (s != HG_OK) return s;
        g_have_prog = 1;
        g_cached = *ks;
    }
    for (size_t off = 0; off < n; off += IH_CHUNK) {
        size_t m = n - off < IH_CHUNK ? n - off : IH_CHUNK;
        const uint64_t* sub[3];
        for (int k = 0; k < 3; k++) sub[k] = in[k] ? in[k] + off : NULL;
        hg_status s = run_chunk(ks, m, sub, out + off);
        if (s != HG_OK) return s;
    }
    return HG_OK;
}

// ---- values --------------------------------------------------------------------------------
void ih_push(ih_vec* v, uint64_t x) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        uint64_t* nv = realloc(v->v, cap * sizeof *nv);
        if (!nv) { fprintf(stderr, "instr_harness: out of memory\n"); exit(2); }
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
}
void ih_push_unique(ih_vec* v, uint64_t x) {
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i] == x) return;
    ih_push(v, x);
}
void ih_vec_free(ih_vec* v) { free(v->v); v->v = NULL; v->n = v->cap = 0; }

void ih_specials(hg_dtype t, ih_vec* out) {
    uint64_t m = ir_mask(t);
    if (t == HG_DTYPE_BOOL) { ih_push(out, 0); ih_push(out, 1); return; }
    if (ir_is_int(t)) {
        int w = ir_width(t);
        uint64_t minv = ir_is_sint(t) ? 1ull << (w - 1) : 0, maxv = ir_is_sint(t) ? m >> 1 : m;
        const uint64_t base[] = {0, 1, 2, 3, 5, 7, 9, (uint64_t)w - 1, (uint64_t)w,
                                 (uint64_t)w + 1, 2 * (uint64_t)w, 100, 0x55,
                                 0xAAAAAAAAAAAAAAAAull};
        for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) ih_push_unique(out, base[i] & m);
        const uint64_t lim[] = {m, m - 1, m - 2, minv, minv + 1, maxv, maxv - 1, (0ull - 7) & m};
        for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) ih_push_unique(out, lim[i] & m);
        for (int k = 0; k < w; k++) {
            ih_push_unique(out, (1ull << k) & m);
            if (k % 3 == 0) ih_push_unique(out, (0 - (1ull << k)) & m);
        }
        return;
    }
    int mb = ir_mant_bits(t);
    uint64_t sign = ir_sign_bit(t), expm = ((1ull << ir_exp_bits(t)) - 1) << mb;
    uint64_t raw[] = {
        0, sign,                                  // ±0
        expm, expm | sign,                        // ±inf
        expm | (1ull << (mb - 1)),                // quiet NaN
        expm | (1ull << (mb - 1)) | sign,         // negative quiet NaN
        expm | (1ull << (mb - 1)) | 1,            // quiet NaN with a payload
        expm | 1,                                 // signalling NaN with a payload
        expm | ((1ull << mb) - 1) | sign,         // negative NaN, all payload bits
        1, 1 | sign,                              // ± min subnormal
        (1ull << mb) - 1, ((1ull << mb) - 1) | sign,  // ± max subnormal
        1ull << mb, (1ull << mb) | sign,          // ± min normal
        expm - 1, (expm - 1) | sign,              // ± max finite
    };
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) ih_push_unique(out, raw[i] & m);
    double p = ldexp(1.0, mb + 1);  // 2^24 for f32: integers stop being exact above it
    const double vals[] = {1, -1, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3, 0.25, 0.75, 2, -2,
                           p - 1, p, p + 2, -(p - 1), p / 2 + 0.5, 1.0 / 3, 3.14159265358979,
                           -2.718281828459045, 100, -1000, 1e-3, 65504, 1e10, -1e-10};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        ih_push_unique(out, ir_from_double(vals[i], t));
    // The values just below 0.5 and 1.5 (round-half cases), and just above 1.
    ih_push_unique(out, ir_from_double(0.5, t) - 1);
    ih_push_unique(out, ir_from_double(1.5, t) - 1);
    ih_push_unique(out, ir_from_double(1.0, t) + 1);
}

double ih_rand_range(uint64_t* rng, double lo, double hi) {
    double u = (double)(hg_test_rand(rng) >> 11) * 0x1p-53;
    return lo + (hi - lo) * u;
}

uint64_t ih_rand_moderate(hg_dtype t, uint64_t* rng) {
    uint64_t r = hg_test_rand(rng);
    if (t == HG_DTYPE_BOOL) return r & 1;
    if (ir_is_int(t)) {
        // Small magnitudes exercise carries and signs more than uniform bits do.
        int64_t v = (int64_t)(r % 2001) - 1000;
        return (uint64_t)v & ir_mask(t);
    }
    int mb = ir_mant_bits(t);
    int lo = t == HG_DTYPE_F16 ? -14 : -20, hi = t == HG_DTYPE_F16 ? 15 : 20;
    int e = lo + (int)((r >> 8) % (uint64_t)(hi - lo + 1));
    double frac = 1.0 + (double)(hg_test_rand(rng) >> (64 - mb)) * ldexp(1.0, -mb);
    double v = ldexp(frac, e) * ((r & 1) ? -1 : 1);
    return ir_from_double(v, t);
}

uint64_t ih_rand_value(hg_dtype t, uint64_t* rng) {
    uint64_t r = hg_test_rand(rng);
    if (t == HG_DTYPE_BOOL) return r & 1;
    if (r & 0x100) return ih_rand_moderate(t, rng);
    return hg_test_rand(rng) & ir_mask(t);
}

void ih_gen_cases(const ih_kspec* ks, size_t max_combo, size_t nrand, uint64_t* rng,
                  ih_cases* out) {
    memset(out, 0, sizeof *out);
    ih_vec sp[3];
    memset(sp, 0, sizeof sp);
    size_t combo = 1;
    for (int k = 0; k < ks->nsrc; k++) {
        ih_specials(ks->src_t[k], &sp[k]);
        combo *= sp[k].n;
    }
    if (combo <= max_combo) {
        for (size_t idx = 0; idx < combo; idx++) {
            size_t r = idx;
            for (int k = 0; k < ks->nsrc; k++) {
                ih_push(&out->in[k], sp[k].v[r % sp[k].n]);
                r /= sp[k].n;
            }
        }
    } else {
        for (size_t idx = 0; idx < max_combo; idx++)
            for (int k = 0; k < ks->nsrc; k++)
                ih_push(&out->in[k], sp[k].v[hg_test_rand(rng) % sp[k].n]);
    }
    for (size_t i = 0; i < nrand; i++)
        for (int k = 0; k < ks->nsrc; k++) {
            // Mix random values with specials so rare pairings (x with MIN, inf...) occur too.
            uint64_t r = hg_test_rand(rng);
            uint64_t v = (r & 7) == 0 ? sp[k].v[(r >> 8) % sp[k].n]
                                      : ih_rand_value(ks->src_t[k], rng);
            ih_push(&out->in[k], v);
        }
    out->n = out->in[0].n;
    for (int k = 0; k < 3; k++) ih_vec_free(&sp[k]);
}

void ih_cases_free(ih_cases* c) {
    for (int k = 0; k < 3; k++) ih_vec_free(&c->in[k]);
    c->n = 0;
}

// ---- checking --------------------------------------------------------------------------------
void ih_stat_init(ih_stat* st, const char* label) {
    memset(st, 0, sizeof *st);
    snprintf(st->label, sizeof st->label, "%s", label);
    st->max_ulp = -1;
}

void ih_stat_print(const ih_stat* st) {
    printf("  %-18s reg %6zu  imm %5zu  param %5zu cases", st->label, st->cases[IH_REG],
           st->cases[IH_IMM], st->cases[IH_PARAM]);
    if (st->max_ulp >= 0) printf("  max ulp %.3g", st->max_ulp);
    printf("  %s\n", st->mismatches ? "MISMATCH" : "ok");
}

static const char* mode_name(ih_mode m) {
    return m == IH_REG ? "reg" : m == IH_IMM ? "imm" : "param";
}

void ih_check(const ih_kspec* ks, const ih_cases* c, ih_ref_fn ref, ih_cmpmode mode,
              ih_stat* st) {
    size_t n = c->n;
    if (!n) return;
    uint64_t* out = calloc(n, sizeof *out);
    if (!out) { fprintf(stderr, "instr_harness: out of memory\n"); exit(2); }
    const uint64_t* in[3] = {c->in[0].v, c->in[1].v, c->in[2].v};
    const char* how = ks->sparse ? "reg, sparse lanes" : NULL;
    ih_mode top = IH_REG;
    for (int k = 0; k < ks->nsrc; k++)
        if (ks->mode[k] > top) top = ks->mode[k];
    if (ih_run(ks, n, in, out) != HG_OK) {
        st->mismatches++;
        free(out);
        return;
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t src[3] = {0, 0, 0};
        for (int k = 0; k < ks->nsrc; k++) src[k] = ks->mode[k] == IH_REG ? in[k][i] : ks->uni[k];
        uint64_t want = ref(ks, src) & ir_mask(ks->dst_t);
        uint64_t got = out[i];
        int ok = mode == IH_BITS ? got == want : ir_same_value(got, want, ks->dst_t);
        if (ok) continue;
        bad++;
        if (st->mismatches + bad <= 4) {
            char b0[64], b1[64], b2[64], bg[64], bw[64];
            fprintf(stderr, "MISMATCH %s [%s] case %zu: a=%s", ih_spec_name(ks),
                    how ? how : mode_name(top), i, ir_fmt(b0, sizeof b0, src[0], ks->src_t[0]));
            if (ks->nsrc > 1) fprintf(stderr, " b=%s", ir_fmt(b1, sizeof b1, src[1], ks->src_t[1]));
            if (ks->nsrc > 2) fprintf(stderr, " c=%s", ir_fmt(b2, sizeof b2, src[2], ks->src_t[2]));
            fprintf(stderr, " got=%s want=%s\n", ir_fmt(bg, sizeof bg, got, ks->dst_t),
                    ir_fmt(bw, sizeof bw, want, ks->dst_t));
        }
    }
    st->cases[top] += n;
    st->mismatches += bad;
    CHECK_MSG(bad == 0, "%s [%s]: %zu of %zu lanes differ from the reference", ih_spec_name(ks),
              how ? how : mode_name(top), bad, n);
    free(out);
}

void ih_check_all_modes(const ih_kspec* ks0, const ih_cases* c, ih_ref_fn ref, ih_cmpmode mode,
                        ih_stat* st, uint64_t* rng) {
    ih_kspec ks = *ks0;
    for (int k = 0; k < 3; k++) ks.mode[k] = IH_REG;
    ks.sparse = 0;
    ih_check(&ks, c, ref, mode, st);
    ks.sparse = 1;
    ih_check(&ks, c, ref, mode, st);
    ks.sparse = 0;
    // Uniform operands: a few specials of operand k, other operands from a subset of cases.
    ih_cases sub;
    memset(&sub, 0, sizeof sub);
    size_t nsub = c->n < 600 ? c->n : 600;
    for (size_t i = 0; i < nsub; i++) {
        size_t j = c->n <= 600 ? i : (size_t)(hg_test_rand(rng) % c->n);
        for (int k = 0; k < ks.nsrc; k++) ih_push(&sub.in[k], c->in[k].v[j]);
    }
    sub.n = nsub;
    for (int k = 0; k < ks.nsrc; k++) {
        ih_vec sp = {0};
        ih_specials(ks.src_t[k], &sp);
        uint64_t picks[5];
        int np = 0;
        picks[np++] = sp.v[0];
        picks[np++] = sp.v[1 % sp.n];
        picks[np++] = sp.v[(sp.n / 2) % sp.n];
        if (ks.src_t[k] != HG_DTYPE_BOOL) {
            picks[np++] = sp.v[hg_test_rand(rng) % sp.n];
            picks[np++] = ih_rand_value(ks.src_t[k], rng);
        }
        // HG_TEST_IMM_PICKS=N keeps N of them: every immediate is a new program, which costs a
        // compile on backends that compile slowly (the CUDA emulation).
        const char* lim = getenv("HG_TEST_IMM_PICKS");
        if (lim && lim[0] && atoi(lim) >= 0 && atoi(lim) < np) np = atoi(lim);
        for (int m = IH_IMM; m <= IH_PARAM; m++) {
            for (int j = 0; j < (m == IH_PARAM && np == 0 ? 1 : np); j++) {
                ih_kspec u = ks;
                u.mode[k] = (ih_mode)m;
                u.uni[k] = picks[j];
                ih_check(&u, &sub, ref, mode, st);
            }
        }
        ih_vec_free(&sp);
    }
    ih_cases_free(&sub);
}

uint64_t ih_ref_arith(const ih_kspec* ks, const uint64_t src[3]) {
    return ir_arith(ks->op, ks->type, src[0], src[1], src[2]);
}
uint64_t ih_ref_cmp(const ih_kspec* ks, const uint64_t src[3]) {
    return ir_cmp((hg_cmp)ks->aux, ks->type, src[0], src[1]);
}
uint64_t ih_ref_sel(const ih_kspec* ks, const uint64_t src[3]) {
    return (src[0] & 0xFF) ? src[1] : src[2];
}
uint64_t ih_ref_cvt(const ih_kspec* ks, const uint64_t src[3]) {
    return ir_cvt(ks->type, (hg_dtype)ks->aux, src[0]);
}
uint64_t ih_ref_round(const ih_kspec* ks, const uint64_t src[3]) {
    return ir_round_op(ks->op, ks->type, src[0]);
}

double ih_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// ---- hand-written kernels ------------------------------------------------------------------
void ih_kb_do(ih_kb* kb, hg_status s, const char* what) {
    if (s != HG_OK && !kb->err) {
        kb->err = 1;
        CHECK_MSG(0, "%s: %s: %s", what, hg_status_string(s), hg_last_error());
    }
}
void ih_kb_begin(ih_kb* kb, const char* name) {
    kb->err = 0;
    kb->p.handle = 0;
    ih_kb_do(kb, hg_program_create(name, &kb->p), "hg_program_create");
}
uint32_t ih_kb_reg(ih_kb* kb, const char* name, hg_dtype t) {
    uint32_t r = 0;
    IH_K(kb, hg_program_add_reg(kb->p, name, t, &r));
    return r;
}
uint32_t ih_kb_buf(ih_kb* kb, const char* name, hg_dtype t, int is_const) {
    uint32_t r = 0;
    IH_K(kb, hg_program_add_buffer_param(kb->p, name, t, is_const, &r));
    return r;
}
uint32_t ih_kb_scalar(ih_kb* kb, const char* name, hg_dtype t) {
    uint32_t r = 0;
    IH_K(kb, hg_program_add_scalar_param(kb->p, name, t, &r));
    return r;
}
uint32_t ih_kb_shared(ih_kb* kb, const char* name, hg_dtype t, uint32_t count) {
    uint32_t r = 0;
    IH_K(kb, hg_program_add_shared(kb->p, name, t, count, &r));
    return r;
}
hg_status ih_emit_atom(hg_program p, hg_atomic_op aop, hg_space sp, hg_dtype t, uint32_t slot,
                       hg_operand dst, hg_operand idx, hg_operand v, hg_operand v2) {
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = HG_OP_ATOM;
    in.type = (uint8_t)t;
    in.aux = (uint8_t)((unsigned)aop | ((unsigned)sp << 4));
    in.mem = slot;
    in.dst = dst;
    in.src[0] = idx;
    in.src[1] = v;
    in.src[2] = v2;
    return hg_program_emit(p, &in);
}
hg_status ih_kb_launch(ih_kb* kb, hg_launch_config cfg, const hg_arg* args, size_t nargs) {
    if (kb->err) return HG_ERR_INVALID_PROGRAM;
    hg_executor ex = ih_executor();
    if (!ex.handle) return HG_ERR_BACKEND_UNAVAILABLE;
    hg_status s = hg_launch(ex, kb->p, &cfg, args, nargs);
    CHECK_MSG(s == HG_OK, "launch: %s: %s", hg_status_string(s), hg_last_error());
    return s;
}
void ih_kb_end(ih_kb* kb) {
    if (kb->p.handle) hg_program_destroy(kb->p);
    kb->p.handle = 0;
}
hg_buffer ih_make_buf(hg_dtype t, size_t n, const uint64_t* bits) {
    hg_buffer b = {0};
    hg_executor ex = ih_executor();
    if (!ex.handle) return b;
    CHECK_OK(hg_buffer_create(ex, t, n, &b));
    if (bits && b.handle) {
        void* host = malloc(n * 8 + 8);
        if (!host) { fprintf(stderr, "instr_harness: out of memory\n"); exit(2); }
        ih_pack(host, bits, n, t);
        CHECK_OK(hg_buffer_write(b, 0, host, n));
        free(host);
    }
    return b;
}
void ih_read_buf(hg_buffer b, hg_dtype t, size_t n, uint64_t* bits) {
    void* host = calloc(n + 1, 8);
    if (!host) { fprintf(stderr, "instr_harness: out of memory\n"); exit(2); }
    CHECK_OK(hg_buffer_read(b, 0, host, n));
    ih_unpack(bits, host, n, t);
    free(host);
}
