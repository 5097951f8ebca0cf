// Chains of f32 ops run in vector registers (strip-mined runs, cpu_strip.c mark_chain): one
// pass over the lanes that applies every op of the chain to a block of lanes held in registers,
// where op-by-op kernels make one pass per op through a strip array (a store and a load per
// op and lane: the limit of a chain of cheap ops in L1). Each op rounds to f32 exactly as its
// own kernel (kernels_arith.c, kernels_math.c) does, so results are bit for bit those of the
// ops run one after the other (NaN payloads aside: which NaN operand propagates may differ).
#include "backends/cpu/simd/simd_common.h"
// Only the AVX-512 set runs chains: a build of this code for AVX2 (8-lane vectors, exp lane
// by lane) measured 2.2x slower than the op-by-op kernels on the silu chain
// (docs/performance.md), so the other sets leave chain_f32 NULL and run such ops one by one.
#if defined(HG_SIMD_AVX512)
#include "base/vmath_zmm.h"

// Lanes per block: each op is dispatched once per block of NV zmm vectors, as many as stay in
// registers beside exp's temporaries (16 spill and run 3x slower, 2 are bound by the dispatch).
#define CW 16u
#define NV 8u
#define CB (NV * CW)
typedef float cv __attribute__((vector_size(CW * 4)));
typedef uint32_t cu __attribute__((vector_size(CW * 4)));

static inline cv vload(const float* p) {
    cv v;
    memcpy(&v, p, sizeof v);
    return v;
}

#define EACH(stmt) do { for (unsigned u = 0; u < NV; u++) { stmt; } } while (0)

// exp as kernels_math.c's exp kernel (exp_f32_zmm) computes it.
static inline void vexp(cv* v) { EACH(v[u] = (cv)hg_vm_exp_zmm((__m512)v[u])); }

// v = op(v, operand) on every vector of a block; the operand: s->k in every lane, or the lane
// arrays from x.
static inline __attribute__((always_inline)) void apply(const hg_cpu_chain_step* s, cv* v,
                                                        const float* x) {
    cv y[NV];
    if (s->form & HG_CPU_CHAIN_K) EACH(y[u] = (cv){0} + s->k);
    else EACH(y[u] = vload(x + u * CW));
    const uint8_t f = s->form & (HG_CPU_CHAIN_SWAP | HG_CPU_CHAIN_SELF);
    cv a[NV], b[NV];
    if (f == HG_CPU_CHAIN_SWAP) EACH((a[u] = y[u], b[u] = v[u]));
    else if (f) EACH((a[u] = v[u], b[u] = v[u]));
    else EACH((a[u] = v[u], b[u] = y[u]));
    switch (s->op) {
    case HG_OP_MOV: EACH(v[u] = y[u]); return;
    case HG_OP_ADD: EACH(v[u] = a[u] + b[u]); return;
    case HG_OP_SUB: EACH(v[u] = a[u] - b[u]); return;
    case HG_OP_MUL: EACH(v[u] = a[u] * b[u]); return;
    case HG_OP_DIV: EACH(v[u] = a[u] / b[u]); return;
    case HG_OP_NEG: EACH(v[u] = (cv)((cu)v[u] ^ 0x80000000u)); return;
    case HG_OP_ABS: EACH(v[u] = (cv)((cu)v[u] & 0x7fffffffu)); return;
    case HG_OP_EXP: vexp(v); return;
    default: return;   // never marked (hg_cpu_chain_op)
    }
}

// One block of CB lanes from lane i of every operand array.
static inline __attribute__((always_inline)) void block(float* d, const hg_cpu_chain_step* s,
                                                        unsigned ns, size_t i) {
    cv v[NV];
    EACH(v[u] = (cv){0});
    for (unsigned q = 0; q < ns; q++) {
        apply(&s[q], v, s[q].x + i);
        if (s[q].out) EACH(memcpy(s[q].out + i + u * CW, &v[u], sizeof v[u]));
    }
    EACH(memcpy(d + i + u * CW, &v[u], sizeof v[u]));
}

static void chain_f32(float* d, const hg_cpu_chain_step* s, unsigned ns, size_t n) {
    size_t i = 0;
    for (; i + CB <= n; i += CB) block(d, s, ns, i);
    if (i == n) return;
    // The tail: its lanes copied into a zero-padded block (the extra lanes' results unused);
    // values stored on the way (out) go to a block of their own first, which a later step
    // reading them (x == that out) then reads too.
    _Alignas(64) float buf[HG_CPU_CHAIN_MAX][CB], outs[HG_CPU_CHAIN_MAX][CB], last[CB];
    hg_cpu_chain_step t[HG_CPU_CHAIN_MAX];
    const size_t m = n - i;
    for (unsigned q = 0; q < ns; q++) {
        t[q] = s[q];
        if (s[q].out) t[q].out = outs[q];
        if (s[q].form & HG_CPU_CHAIN_K) continue;
        unsigned w = 0;
        while (w < q && s[w].out != s[q].x) w++;
        if (w < q) {
            t[q].x = outs[w];
            continue;
        }
        memset(buf[q], 0, sizeof buf[q]);
        memcpy(buf[q], s[q].x + i, m * sizeof(float));
        t[q].x = buf[q];
    }
    block(last, t, ns, 0);
    for (unsigned q = 0; q < ns; q++)
        if (s[q].out) memcpy(s[q].out + i, outs[q], m * sizeof(float));
    memcpy(d + i, last, m * sizeof(float));
}

#endif

void HG_SIMD_NAME(hg_cpu_fill_chain_)(hg_cpu_kernels* k) {
#if defined(HG_SIMD_AVX512)
    k->chain_f32 = chain_f32;
#else
    k->chain_f32 = NULL;
#endif
}
