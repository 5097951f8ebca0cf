// bench_isa.c — the ISA side of `hologram bench`: the embedded programs (c = a + b, the fused
// chain, and elementwise exp, tanh, sigmoid and gelu), their buffers, launches and checks.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ctx.h"
#include "cli_common.h"

// The first two programs are byte-identical to examples/vector_add.hasm and
// examples/fused_chain.hasm (tests/test_examples.c checks that via `hologram bench
// --print-program NAME`), embedded so the benchmark does not depend on where the source tree is.
static const char k_vector_add_text[] =
    "// c = a + b over n elements; lanes past the end (the last block is partial) do nothing.\n"
    "// hologram run examples/vector_add.hasm --arg a=a.npy --arg b=b.npy --arg c=zeros:N \\\n"
    "//     --arg n=N --out c=c.npy\n"
    ".kernel vector_add\n"
    ".param a: global const f32\n"
    ".param b: global const f32\n"
    ".param c: global f32\n"
    ".param n: u32\n"
    ".reg u32 i\n"
    ".reg f32 x, y\n"
    ".reg bool p\n"
    "\n"
    "    mov.u32 i, %gid.x\n"
    "    cmp.lt.u32 p, i, n\n"
    "    if p\n"
    "        ld.global.f32 x, a[i]\n"
    "        ld.global.f32 y, b[i]\n"
    "        add.f32 x, x, y\n"
    "        st.global.f32 c[i], x\n"
    "    endif\n";
static const char k_fused_chain_text[] =
    "// y = relu(a*b + c) * 0.5 over n f32 elements, fused into one pass (16 bytes of traffic per\n"
    "// element). mul and add are separate roundings, exactly as the C expression (a*b)+c.\n"
    "// hologram run examples/fused_chain.hasm --arg a=a.npy --arg b=b.npy --arg c=c.npy \\\n"
    "//     --arg y=zeros:N --arg n=N --out y=y.npy\n"
    ".kernel fused_chain\n"
    ".param a: global const f32\n"
    ".param b: global const f32\n"
    ".param c: global const f32\n"
    ".param y: global f32\n"
    ".param n: u32\n"
    ".reg u32 i\n"
    ".reg f32 x, t\n"
    ".reg bool p\n"
    "\n"
    "    mov.u32 i, %gid.x\n"
    "    cmp.lt.u32 p, i, n\n"
    "    if p\n"
    "        ld.global.f32 x, a[i]\n"
    "        ld.global.f32 t, b[i]\n"
    "        mul.f32 x, x, t\n"
    "        ld.global.f32 t, c[i]\n"
    "        add.f32 x, x, t\n"
    "        max.f32 x, x, 0.0\n"
    "        mul.f32 x, x, 0.5\n"
    "        st.global.f32 y[i], x\n"
    "    endif\n";

// y = f(a) for one float instruction f: 8 bytes of traffic per element, like a copy.
#define UNARY_PROGRAM(NAME, OP)                                                               \
    "// y = " OP "(a) over n f32 elements.\n"                                                 \
    ".kernel " NAME "\n"                                                                      \
    ".param a: global const f32\n"                                                           \
    ".param y: global f32\n"                                                                 \
    ".param n: u32\n"                                                                        \
    ".reg u32 i\n"                                                                           \
    ".reg f32 x\n"                                                                           \
    ".reg bool p\n"                                                                          \
    "\n"                                                                                     \
    "    mov.u32 i, %gid.x\n"                                                                \
    "    cmp.lt.u32 p, i, n\n"                                                               \
    "    if p\n"                                                                             \
    "        ld.global.f32 x, a[i]\n"                                                        \
    "        " OP ".f32 x, x\n"                                                              \
    "        st.global.f32 y[i], x\n"                                                        \
    "    endif\n"

static const char k_exp_text[] = UNARY_PROGRAM("exp_f32", "exp");
static const char k_tanh_text[] = UNARY_PROGRAM("tanh_f32", "tanh");
static const char k_sigmoid_text[] = UNARY_PROGRAM("sigmoid_f32", "sigmoid");
static const char k_gelu_text[] = UNARY_PROGRAM("gelu_f32", "gelu");   // tanh form

typedef struct named_program {
    const char* name;
    const char* text;
    int case_id;
} named_program;

static const named_program k_programs[] = {
    {"vector_add", k_vector_add_text, B_ISA_ADD},   {"fused_chain", k_fused_chain_text, B_ISA_FUSED},
    {"exp", k_exp_text, B_ISA_EXP},                 {"tanh", k_tanh_text, B_ISA_TANH},
    {"sigmoid", k_sigmoid_text, B_ISA_SIGMOID},     {"gelu", k_gelu_text, B_ISA_GELU},
};
#define NPROGRAMS (sizeof k_programs / sizeof k_programs[0])

const char* bench_program_text(const char* name) {
    for (size_t i = 0; i < NPROGRAMS; i++)
        if (strcmp(k_programs[i].name, name) == 0) return k_programs[i].text;
    return NULL;
}

const char* bench_program_names(void) { return "vector_add, fused_chain, exp, tanh, sigmoid, gelu"; }

int bench_isa_setup(bench_ctx* c) {
    for (size_t i = 0; i < NPROGRAMS; i++) {
        const named_program* np = &k_programs[i];
        hg_status st = hg_program_parse(np->text, strlen(np->text), &c->prog[np->case_id]);
        if (st != HG_OK) {
            char what[96];
            snprintf(what, sizeof what, "parsing the embedded %s program", np->name);
            return cli_hg_fail("bench", st, what);
        }
    }
    hg_buffer* bufs[5] = {&c->A, &c->B, &c->C, &c->D, &c->Y};
    for (int i = 0; i < 5; i++) {
        hg_status st = hg_buffer_create(c->ex, HG_DTYPE_F32, c->n, bufs[i]);
        if (st != HG_OK) return cli_hg_fail("bench", st, "allocating the ISA buffers");
        c->nbufs = i + 1;
    }
    // Same inputs as the C side; writing (and filling the outputs) faults every page in now.
    hg_status st;
    if ((st = hg_buffer_write(c->A, 0, c->arr.a, c->n)) != HG_OK ||
        (st = hg_buffer_write(c->B, 0, c->arr.b, c->n)) != HG_OK ||
        (st = hg_buffer_write(c->C, 0, c->arr.c, c->n)) != HG_OK ||
        (st = hg_buffer_fill(c->D, 0.0)) != HG_OK || (st = hg_buffer_fill(c->Y, 0.0)) != HG_OK)
        return cli_hg_fail("bench", st, "initialising the ISA buffers");
    return CLI_OK;
}

void bench_isa_teardown(bench_ctx* c) {
    hg_buffer* bufs[5] = {&c->A, &c->B, &c->C, &c->D, &c->Y};
    for (int i = 0; i < c->nbufs; i++) hg_buffer_destroy(*bufs[i]);
    for (int k = B_FIRST_ISA; k < B_FIRST_OP; k++)
        if (c->prog[k].handle) hg_program_destroy(c->prog[k]);
}

hg_status bench_isa_run(bench_ctx* c, int k) {
    hg_launch_config cfg = hg_launch_1d(c->n, c->block);
    hg_arg n = hg_arg_u32((uint32_t)c->n);
    switch (k) {
    case B_ISA_ADD: {
        hg_arg args[4] = {hg_arg_buffer(c->A), hg_arg_buffer(c->B), hg_arg_buffer(c->D), n};
        return hg_launch(c->ex, c->prog[k], &cfg, args, 4);
    }
    case B_ISA_FUSED: {
        hg_arg args[5] = {hg_arg_buffer(c->A), hg_arg_buffer(c->B), hg_arg_buffer(c->C),
                          hg_arg_buffer(c->Y), n};
        return hg_launch(c->ex, c->prog[k], &cfg, args, 5);
    }
    default: {
        hg_arg args[3] = {hg_arg_buffer(c->A), hg_arg_buffer(c->D), n};
        return hg_launch(c->ex, c->prog[k], &cfg, args, 3);
    }
    }
}

double bench_ref_exp(double x) { return exp(x); }
double bench_ref_tanh(double x) { return tanh(x); }
double bench_ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
// x * sigmoid(u): the same function as 0.5 x (1 + tanh(u / 2)) without its cancellation.
double bench_ref_gelu(double x) {
    double u = 2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x);
    double e = exp(-fabs(u));
    return (x >= 0 ? x : x * e) / (1.0 + e);
}

size_t bench_check_unary(const char* name, const float* in, const float* got, size_t n,
                         double (*f)(double), double rel, double abs_tol) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i += 7) {
        double want = f((double)in[i]);
        if (fabs((double)got[i] - want) <= rel * fabs(want) + abs_tol) continue;
        if (!bad++)
            fprintf(stderr, "bench: %s: element %zu: f(%.9g) = %.9g, want %.9g\n", name, i,
                    (double)in[i], (double)got[i], want);
    }
    return bad;
}

int bench_isa_verify(bench_ctx* c, int k) {
    float* host = c->host;
    hg_status st = hg_buffer_read(k == B_ISA_FUSED ? c->Y : c->D, 0, host, c->n);
    if (st != HG_OK) {
        cli_hg_fail("bench", st, "reading back an ISA result");
        return -1;
    }
    size_t bad = 0, first = 0;
    const char* name = k_bench_cases[k].name;
    switch (k) {
    case B_ISA_ADD:  // the same f32 operations as the C kernel: bit-exact
        for (size_t i = 0; i < c->n; i++)
            if (host[i] != c->arr.a[i] + c->arr.b[i] && !bad++) first = i;
        break;
    case B_ISA_FUSED:
        for (size_t i = 0; i < c->n; i++)
            if (host[i] != c->arr.y[i] && !bad++) first = i;
        break;
    // Math: within the documented bounds (exp 2 ULP, tanh/sigmoid/gelu 6 ULP).
    case B_ISA_EXP: bad = bench_check_unary(name, c->arr.a, host, c->n, bench_ref_exp, 4e-7, 0); break;
    case B_ISA_TANH: bad = bench_check_unary(name, c->arr.a, host, c->n, bench_ref_tanh, 1e-6, 1e-37); break;
    case B_ISA_SIGMOID: bad = bench_check_unary(name, c->arr.a, host, c->n, bench_ref_sigmoid, 1e-6, 0); break;
    default: bad = bench_check_unary(name, c->arr.a, host, c->n, bench_ref_gelu, 1e-6, 1e-43); break;
    }
    if (bad && (k == B_ISA_ADD || k == B_ISA_FUSED))
        fprintf(stderr, "bench: %s: %zu wrong elements, first at %zu\n", name, bad, first);
    return bad == 0;
}
