// Chains of f32 ops run in vector registers inside strip-mined runs (cpu_strip.c mark_chain,
// simd/kernels_chain.c). Random chains of add sub mul div neg abs exp, each op reading the
// previous result as its first, second or both operands beside a lane array, an immediate, a
// scalar parameter, a value loaded between the ops or an earlier result of the chain (which
// the chain then also stores); chains longer than the step limit; sizes
// with whole strips and partial blocks at the end. Each program runs twice: as written (chained)
// and with every intermediate also stored (a store between the ops breaks the chain, so the ops
// run one by one): the two must agree bit for bit (any NaN for NaN), and both must match a
// float64 evaluation of the same ops rounded to f32 after each op.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "hg_test.h"

enum { NOPS = 7, MAXLEN = 20 };
static const char* const k_ops[NOPS] = {"add", "sub", "mul", "div", "neg", "abs", "exp"};
enum { F_ARR, F_SWAP, F_IMM, F_IMM_SWAP, F_PARAM, F_SELF, F_LOADED, F_EARLIER, NFORMS };

typedef struct step { int op, form; } step;

// Step k reads r[k] (the chain's value) and writes r[k + 1]; F_EARLIER reads r[k / 2] beside.
static int earlier(int k) { return k / 2; }

static float ref_step(const step* s, float t, float x, float u, float e, float imm, float param) {
    double v = t, y = x;
    switch (s->form) {
    case F_EARLIER: y = e; break;
    case F_IMM: case F_IMM_SWAP: y = imm; break;
    case F_PARAM: y = param; break;
    case F_SELF: y = t; break;
    case F_LOADED: y = u; break;
    default: break;
    }
    double a = v, b = y;
    if (s->form == F_SWAP || s->form == F_IMM_SWAP) { a = y; b = v; }
    switch (s->op) {
    case 0: return (float)(a + b);
    case 1: return (float)(a - b);
    case 2: return (float)(a * b);
    case 3: return (float)(a / b);
    case 4: return -t;
    case 5: return fabsf(t);
    default: return (float)exp(v);
    }
}

// The kernel text of a chain: r0 = x + 0.5, then r[k + 1] = op(r[k], ...); with `spill`,
// every result is also stored to z (a store between the ops breaks the chain).
static void kernel_text(char* out, size_t cap, const step* s, int len, int spill) {
    int w = snprintf(out, cap,
                     ".kernel chain\n.param a: global const f32\n.param c: global const f32\n"
                     ".param y: global f32\n.param z: global f32\n.param n: u32\n.param s: f32\n"
                     ".reg u32 i\n.reg f32 x, u\n.reg bool p\n.reg f32 r0");
    for (int k = 1; k <= len; k++) w += snprintf(out + w, cap - (size_t)w, ", r%d", k);
    w += snprintf(out + w, cap - (size_t)w,
                  "\n    mov.u32 i, %%gid.x\n    cmp.lt.u32 p, i, n\n    if p\n"
                  "        ld.global.f32 x, a[i]\n        add.f32 r0, x, 0.5\n");
    for (int k = 0; k < len; k++) {
        const char* op = k_ops[s[k].op];
        char t[16], e[16];
        snprintf(t, sizeof t, "r%d", k);
        snprintf(e, sizeof e, "r%d", earlier(k));
        if (s[k].op >= 4) {
            w += snprintf(out + w, cap - (size_t)w, "        %s.f32 r%d, %s\n", op, k + 1, t);
        } else {
            const char* a = t;
            const char* b = "x";
            switch (s[k].form) {
            case F_SWAP: a = "x"; b = t; break;
            case F_IMM: b = "-0.75"; break;
            case F_IMM_SWAP: a = "-0.75"; b = t; break;
            case F_PARAM: b = "s"; break;
            case F_SELF: b = t; break;
            case F_EARLIER: b = e; break;
            case F_LOADED:
                w += snprintf(out + w, cap - (size_t)w, "        ld.global.f32 u, c[i]\n");
                b = "u";
                break;
            default: break;
            }
            w += snprintf(out + w, cap - (size_t)w, "        %s.f32 r%d, %s, %s\n", op, k + 1, a, b);
        }
        if (spill) w += snprintf(out + w, cap - (size_t)w, "        st.global.f32 z[i], r%d\n", k + 1);
    }
    snprintf(out + w, cap - (size_t)w, "        st.global.f32 y[i], r%d\n    endif\n", len);
}

static int same_f32(float x, float y) { return isnan(x) ? isnan(y) : memcmp(&x, &y, 4) == 0; }

// An f32 buffer of n elements, holding data when given.
static hg_buffer f32_buffer(hg_executor ex, const float* data, size_t n) {
    hg_buffer b = {0};
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, n, &b));
    if (data) CHECK_OK(hg_buffer_write(b, 0, data, n));
    return b;
}

// n lanes: strips of 512 lanes, then a partial block at the end; trials chains.
enum { MAXN = 200000 };
static void run_chains(hg_executor ex, int N, int trials) {
    static float a[MAXN], c[MAXN], y[MAXN], y2[MAXN];
    if (N > MAXN) N = MAXN;
    const float specials[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1.0f, -1.5f, 88.5f};
    uint64_t seed = 2026;
    for (int i = 0; i < N; i++) {
        uint64_t r = hg_test_rand(&seed);
        a[i] = r % 7 == 0 ? specials[(r >> 8) % 8] : (float)((int64_t)(r >> 16) % 4001 - 2000) / 512.0f;
        r = hg_test_rand(&seed);
        c[i] = r % 9 == 0 ? specials[(r >> 8) % 8] : (float)((int64_t)(r >> 16) % 4001 - 2000) / 1024.0f;
    }
    hg_buffer ba = f32_buffer(ex, a, (size_t)N), bc = f32_buffer(ex, c, (size_t)N), by = f32_buffer(ex, NULL, (size_t)N),
              bz = f32_buffer(ex, NULL, (size_t)N);
    const float imm = -0.75f, param = 1.25f;
    int failures = 0;
    for (int trial = 0; trial < trials; trial++) {
        step s[MAXLEN];
        const int len = 1 + (int)(hg_test_rand(&seed) % (trial % 6 ? 8 : MAXLEN));
        int nexp = 0;
        for (int k = 0; k < len; k++) {
            s[k].op = (int)(hg_test_rand(&seed) % NOPS);
            if (s[k].op == 6 && nexp++) s[k].op = 2;   // one exp: values stay in range
            s[k].form = (int)(hg_test_rand(&seed) % NFORMS);
        }
        static char text[8192];
        for (int spill = 0; spill < 2; spill++) {
            kernel_text(text, sizeof text, s, len, spill);
            hg_program prog;
            CHECK_OK(hg_program_parse(text, strlen(text), &prog));
            hg_arg args[6] = {hg_arg_buffer(ba), hg_arg_buffer(bc), hg_arg_buffer(by),
                              hg_arg_buffer(bz), hg_arg_u32((uint32_t)N), hg_arg_f32(param)};
            hg_launch_config cfg = hg_launch_1d((uint32_t)N, 256);
            CHECK_OK(hg_launch(ex, prog, &cfg, args, 6));
            CHECK_OK(hg_buffer_read(by, 0, spill ? y2 : y, (size_t)N));
            hg_program_destroy(prog);
        }
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float r[MAXLEN + 1];
            r[0] = a[i] + 0.5f;
            for (int k = 0; k < len; k++)
                r[k + 1] = ref_step(&s[k], r[k], a[i], c[i], r[earlier(k)], imm, param);
            const float t = r[len];
            // exp is within 2 ULP of the true value (docs/ops.md), and the ops after it may
            // scale that: a relative bound, on results away from cancellation
            const int close = isnan(t) ? isnan(y[i])
                              : isinf(t) || fabsf(t) < 1e-3f ? 1
                              : fabsf(y[i] - t) <= 1e-4f * fabsf(t);
            if ((!same_f32(y[i], y2[i]) || !close) && !bad++ && failures++ < 5)
                fprintf(stderr, "chain trial %d (len %d): [%d] = %a, op by op %a, want %a\n",
                        trial, len, i, (double)y[i], (double)y2[i], (double)t);
        }
        CHECK(bad == 0);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bc);
    hg_buffer_destroy(by);
    hg_buffer_destroy(bz);
}

int main(void) {
    for (int threads = 1; threads <= 2; threads++) {
        hg_executor_options o = {HG_BACKEND_CPU, 0, threads};
        hg_executor ex;
        CHECK_OK(hg_executor_create_ex(&o, &ex));
        run_chains(ex, 4096 + 37, 60);
        run_chains(ex, 3 * 65536 + 4099, 12);   // several chunks, on both threads
        hg_executor_destroy(ex);
    }
    return hg_test_finish("test_cpu_chains");
}
