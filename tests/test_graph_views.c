// Graph view nodes: permute, slice, concat. Random shapes, every axis (negative too), empty
// slices and parts, concat of 1 and of several, chains mixing them with elementwise ops
// (broadcasts included) and reductions, fused and unfused, against a host reference computed
// here in f64 (integer-valued data, so every result is exact); the canonical forms (permute of
// permute, identity permute, full slice, slice of a concat, adjacent slices joined); views
// staying strided reads inside one kernel (kernel counts); the printer; every refused call.
// Runs on HG_TEST_BACKEND (the CUDA emulation in tests/cuda_emu.cmake), else on CPU executors.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/handles.h"
#include "graph/graph_internal.h"
#include "hg_test.h"

static hg_executor g_ex;
static uint64_t g_rng = 7;

static int64_t rnd(int64_t n) { return n > 0 ? (int64_t)(hg_test_rand(&g_rng) % (uint64_t)n) : 0; }

// ---- host reference: C-contiguous f64 tensors ----
typedef struct ht {
    int32_t nd;
    int64_t sh[HG_MAX_DIMS];
    double* d;
} ht;

static int64_t ht_numel(const ht* t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->nd; i++) n *= t->sh[i];
    return n;
}

static ht ht_new(int32_t nd, const int64_t* sh) {
    ht t;
    memset(&t, 0, sizeof t);
    t.nd = nd;
    for (int32_t i = 0; i < nd; i++) t.sh[i] = sh[i];
    t.d = calloc((size_t)ht_numel(&t) + 1, sizeof(double));
    return t;
}

static void unravel(const ht* t, int64_t lin, int64_t* idx) {
    for (int32_t i = t->nd - 1; i >= 0; i--) {
        idx[i] = t->sh[i] ? lin % t->sh[i] : 0;
        lin = t->sh[i] ? lin / t->sh[i] : 0;
    }
}

// Element of t at idx (idx has nd entries aligned at the end; size-1 dims broadcast).
static double at(const ht* t, int32_t nd, const int64_t* idx) {
    int64_t off = 0;
    for (int32_t i = 0; i < t->nd; i++) {
        int64_t k = idx[nd - t->nd + i];
        off = off * t->sh[i] + (t->sh[i] == 1 ? 0 : k);
    }
    return t->d[off];
}

static ht ht_permute(const ht* x, const int32_t* perm) {
    int64_t sh[HG_MAX_DIMS] = {0}, idx[HG_MAX_DIMS] = {0}, src[HG_MAX_DIMS] = {0};
    for (int32_t i = 0; i < x->nd; i++) sh[i] = x->sh[perm[i]];
    ht r = ht_new(x->nd, sh);
    for (int64_t k = 0; k < ht_numel(&r); k++) {
        unravel(&r, k, idx);
        for (int32_t i = 0; i < x->nd; i++) src[perm[i]] = idx[i];
        r.d[k] = at(x, x->nd, src);
    }
    return r;
}

static ht ht_slice(const ht* x, int32_t ax, int64_t start, int64_t count, int64_t step) {
    int64_t sh[HG_MAX_DIMS] = {0}, idx[HG_MAX_DIMS] = {0};
    memcpy(sh, x->sh, sizeof sh);
    sh[ax] = count;
    ht r = ht_new(x->nd, sh);
    for (int64_t k = 0; k < ht_numel(&r); k++) {
        unravel(&r, k, idx);
        idx[ax] = start + idx[ax] * step;
        r.d[k] = at(x, x->nd, idx);
    }
    return r;
}

static ht ht_concat(const ht* a, const ht* b, int32_t ax) {
    int64_t sh[HG_MAX_DIMS] = {0}, idx[HG_MAX_DIMS] = {0};
    memcpy(sh, a->sh, sizeof sh);
    sh[ax] += b->sh[ax];
    ht r = ht_new(a->nd, sh);
    for (int64_t k = 0; k < ht_numel(&r); k++) {
        unravel(&r, k, idx);
        if (idx[ax] < a->sh[ax]) {
            r.d[k] = at(a, a->nd, idx);
        } else {
            idx[ax] -= a->sh[ax];
            r.d[k] = at(b, b->nd, idx);
        }
    }
    return r;
}

static double apply_bin(hg_binary_op op, double x, double y) {
    switch (op) {
    case HG_BINARY_ADD: return x + y;
    case HG_BINARY_SUB: return x - y;
    case HG_BINARY_MUL: return x * y;
    default: return x > y ? x : y;
    }
}

static ht ht_bin(hg_binary_op op, const ht* a, const ht* b) {
    int32_t nd = a->nd > b->nd ? a->nd : b->nd;
    int64_t sh[HG_MAX_DIMS] = {0}, idx[HG_MAX_DIMS] = {0};
    for (int32_t i = 0; i < nd; i++) {
        int64_t x = i - (nd - a->nd) >= 0 ? a->sh[i - (nd - a->nd)] : 1;
        int64_t y = i - (nd - b->nd) >= 0 ? b->sh[i - (nd - b->nd)] : 1;
        sh[i] = x == 1 ? y : x;
    }
    ht r = ht_new(nd, sh);
    for (int64_t k = 0; k < ht_numel(&r); k++) {
        unravel(&r, k, idx);
        r.d[k] = apply_bin(op, at(a, nd, idx), at(b, nd, idx));
    }
    return r;
}

static ht ht_neg(const ht* x) {
    ht r = ht_new(x->nd, x->sh);
    for (int64_t k = 0; k < ht_numel(&r); k++) r.d[k] = -x->d[k];
    return r;
}

// Sum over one axis (dropped).
static ht ht_sum(const ht* x, int32_t ax) {
    int64_t sh[HG_MAX_DIMS] = {0}, idx[HG_MAX_DIMS] = {0}, j = 0;
    ht xs = *x;
    for (int32_t i = 0; i < xs.nd && i < HG_MAX_DIMS; i++)
        if (i != ax) sh[j++] = xs.sh[i];
    ht r = ht_new(x->nd - 1, sh);
    for (int64_t k = 0; k < ht_numel(x); k++) {
        unravel(x, k, idx);
        int64_t off = 0;
        for (int32_t i = 0; i < x->nd; i++)
            if (i != ax) off = off * x->sh[i] + idx[i];
        r.d[off] += x->d[k];
    }
    return r;
}

// ---- a graph node with its host value ----
typedef struct dn {
    int32_t id;
    ht h;
} dn;

typedef struct dgraph {
    hg_graph g;
    ht inputs[16];
    int32_t ninputs;
    dn outs[8];
    int32_t nouts;
} dgraph;

static dn d_input(dgraph* d, int32_t nd, const int64_t* sh) {
    dn r;
    CHECK_OK(hg_graph_input(d->g, HG_DTYPE_F32, nd, sh, &r.id));
    r.h = ht_new(nd, sh);
    for (int64_t k = 0; k < ht_numel(&r.h); k++) r.h.d[k] = (double)(rnd(17) - 8);
    d->inputs[d->ninputs++] = r.h;
    return r;
}

static dn d_permute(dgraph* d, dn x, const int32_t* perm, const int32_t* given) {
    dn r;
    CHECK_OK(hg_graph_permute(d->g, x.id, x.h.nd, given, &r.id));
    r.h = ht_permute(&x.h, perm);
    return r;
}

static dn d_slice(dgraph* d, dn x, int32_t ax, int64_t start, int64_t stop, int64_t step) {
    dn r;
    int32_t given = rnd(2) ? ax - x.h.nd : ax;   // negative axes too
    CHECK_OK(hg_graph_slice(d->g, x.id, given, start, stop, step, &r.id));
    // Python's slice rules as hg_tensor_slice applies them (test_tensor_views checks those):
    // the view's offset is the first index, its length the count.
    hg_buffer buf;
    hg_tensor t, v;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)x.h.sh[ax] + 1, &buf));
    CHECK_OK(hg_tensor_view(buf, 1, &x.h.sh[ax], NULL, 0, &t));
    CHECK_OK(hg_tensor_slice(&t, 0, start, stop, step, &v));
    CHECK_OK(hg_buffer_destroy(buf));
    r.h = ht_slice(&x.h, ax, v.offset, v.shape[0], step);
    return r;
}

static dn d_concat(dgraph* d, int32_t n, const dn* parts, int32_t ax) {
    dn r;
    int32_t ids[8];
    for (int32_t i = 0; i < n; i++) ids[i] = parts[i].id;
    CHECK_OK(hg_graph_concat(d->g, n, ids, rnd(2) ? ax - parts[0].h.nd : ax, &r.id));
    r.h = ht_new(parts[0].h.nd, parts[0].h.sh);
    memcpy(r.h.d, parts[0].h.d, (size_t)ht_numel(&r.h) * sizeof(double));
    for (int32_t i = 1; i < n; i++) {
        ht t = ht_concat(&r.h, &parts[i].h, ax);
        free(r.h.d);
        r.h = t;
    }
    return r;
}

static dn d_bin(dgraph* d, hg_binary_op op, dn a, dn b) {
    dn r;
    CHECK_OK(hg_graph_binary(d->g, op, a.id, b.id, &r.id));
    r.h = ht_bin(op, &a.h, &b.h);
    return r;
}

static dn d_neg(dgraph* d, dn x) {
    dn r;
    CHECK_OK(hg_graph_unary(d->g, HG_UNARY_NEG, x.id, &r.id));
    r.h = ht_neg(&x.h);
    return r;
}

static dn d_sum(dgraph* d, dn x, int32_t ax) {
    dn r;
    CHECK_OK(hg_graph_reduce(d->g, HG_REDUCE_SUM, x.id, 1, &ax, 0, &r.id));
    r.h = ht_sum(&x.h, ax);
    return r;
}

static void d_output(dgraph* d, dn x) {
    CHECK_OK(hg_graph_output(d->g, x.id));
    d->outs[d->nouts++] = x;
}

static hg_tensor dev_tensor(const ht* h, int fill) {
    hg_tensor t;
    hg_buffer b;
    int64_t n = ht_numel(h);
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)(n ? n : 1), &b));
    if (fill && n) {
        float* f = malloc((size_t)n * sizeof *f);
        for (int64_t k = 0; k < n; k++) f[k] = (float)h->d[k];
        CHECK_OK(hg_buffer_write(b, 0, f, (size_t)n));
        free(f);
    }
    CHECK_OK(hg_tensor_view(b, h->nd, h->sh, NULL, 0, &t));
    return t;
}

// Compiles d with and without fusion, runs both, compares every output with the host values.
// Returns the fused plan's kernel count.
static int32_t d_check(dgraph* d, const char* what) {
    int32_t kernels = -1;
    for (int fusion = 1; fusion >= 0; fusion--) {
        hg_compile_opts o = {1, 1, fusion, 0};
        hg_plan plan;
        hg_status s = hg_graph_compile_opts(d->g, g_ex, &o, &plan);
        CHECK_MSG(s == HG_OK, "%s: compile: %s", what, hg_last_error());
        if (s) return -1;
        hg_plan_info info;
        CHECK_OK(hg_plan_info_get(plan, &info));
        if (fusion) kernels = info.kernels;
        hg_tensor ins[16], outs[8];
        for (int32_t i = 0; i < d->ninputs; i++) ins[i] = dev_tensor(&d->inputs[i], 1);
        for (int32_t i = 0; i < d->nouts; i++) outs[i] = dev_tensor(&d->outs[i].h, 0);
        s = hg_plan_run(plan, d->ninputs, ins, d->nouts, outs);
        CHECK_MSG(s == HG_OK, "%s: run: %s", what, hg_last_error());
        for (int32_t i = 0; i < d->nouts && !s; i++) {
            int64_t n = ht_numel(&d->outs[i].h);
            float* f = malloc((size_t)(n ? n : 1) * sizeof *f);
            if (n) CHECK_OK(hg_buffer_read(outs[i].buffer, 0, f, (size_t)n));
            int64_t bad = -1;
            for (int64_t k = 0; k < n && bad < 0; k++)
                if ((double)f[k] != d->outs[i].h.d[k]) bad = k;
            CHECK_MSG(bad < 0, "%s (fusion %d): output %d element %lld is %g, want %g", what,
                      fusion, (int)i, (long long)bad, bad >= 0 ? (double)f[bad] : 0.0,
                      bad >= 0 ? d->outs[i].h.d[bad] : 0.0);
            free(f);
        }
        for (int32_t i = 0; i < d->ninputs; i++) hg_buffer_destroy(ins[i].buffer);
        for (int32_t i = 0; i < d->nouts; i++) hg_buffer_destroy(outs[i].buffer);
        CHECK_OK(hg_plan_destroy(plan));
    }
    return kernels;
}

static void d_free(dgraph* d, dn* extra, int32_t nextra) {
    CHECK_OK(hg_graph_destroy(d->g));
    for (int32_t i = 0; i < d->ninputs; i++) free(d->inputs[i].d);
    (void)extra;
    (void)nextra;
}

static void random_shape(int32_t nd, int64_t* sh, int64_t maxdim) {
    for (int32_t i = 0; i < nd; i++) sh[i] = 1 + rnd(maxdim);
}

static void random_perm(int32_t nd, int32_t* perm, int32_t* given) {
    for (int32_t i = 0; i < nd; i++) perm[i] = i;
    for (int32_t i = nd - 1; i > 0; i--) {
        int32_t j = (int32_t)rnd(i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int32_t i = 0; i < nd; i++) given[i] = rnd(2) ? perm[i] - nd : perm[i];
}

// Host values of intermediate nodes are leaked on purpose into this pool and freed per graph.
#define POOL 512
static double* g_pool[POOL];
static int g_npool;
static dn keep(dn x) {
    if (g_npool < POOL) g_pool[g_npool++] = x.h.d;
    return x;
}
static void pool_free(void) {
    for (int i = 0; i < g_npool; i++) free(g_pool[i]);
    g_npool = 0;
}

// permute(relu-free chain) + w, with the chain's operands broadcast: one kernel.
static void test_permute_random(void) {
    for (int iter = 0; iter < 40; iter++) {
        dgraph d = {0};
        CHECK_OK(hg_graph_create(&d.g));
        int32_t nd = 1 + (int32_t)rnd(4), perm[HG_MAX_DIMS], given[HG_MAX_DIMS];
        int64_t sh[HG_MAX_DIMS], bsh[HG_MAX_DIMS];
        random_shape(nd, sh, 4);
        if (iter % 10 == 9) sh[rnd(nd)] = 0;   // empty tensors
        // b broadcasts: a trailing part of x's shape with some dims 1.
        int32_t bnd = (int32_t)rnd(nd + 1);
        for (int32_t i = 0; i < bnd; i++) bsh[i] = rnd(2) ? sh[nd - bnd + i] : 1;
        dn x = d_input(&d, nd, sh), b = d_input(&d, bnd, bsh);
        random_perm(nd, perm, given);
        dn t = keep(d_bin(&d, HG_BINARY_MUL, x, b));
        t = keep(d_neg(&d, t));
        dn y = keep(d_permute(&d, t, perm, given));
        dn w = d_input(&d, nd, y.h.sh);
        dn z = keep(d_bin(&d, HG_BINARY_ADD, y, w));
        d_output(&d, z);
        int32_t k = d_check(&d, "permute chain");
        // The permute moves to x and b (strided reads): one kernel, also where it moves a
        // broadcast leading dim of b between b's own dims (b is then viewed with 1s there).
        if (ht_numel(&z.h) > 0) CHECK_MSG(k == 1, "permute chain: %d kernels", (int)k);
        d_free(&d, NULL, 0);
        pool_free();
    }
}

static void test_slice_random(void) {
    for (int iter = 0; iter < 60; iter++) {
        dgraph d = {0};
        CHECK_OK(hg_graph_create(&d.g));
        int32_t nd = 1 + (int32_t)rnd(4);
        int64_t sh[HG_MAX_DIMS], bsh[HG_MAX_DIMS];
        random_shape(nd, sh, 6);
        for (int32_t i = 0; i < nd; i++) bsh[i] = rnd(2) ? sh[i] : 1;
        dn x = d_input(&d, nd, sh), b = d_input(&d, nd, bsh);
        int32_t ax = (int32_t)rnd(nd);
        int64_t n = sh[ax];
        int64_t start = rnd(4) == 0 ? HG_SLICE_NONE : rnd(2 * n + 3) - n - 1;
        int64_t stop = rnd(4) == 0 ? HG_SLICE_NONE : rnd(2 * n + 3) - n - 1;
        int64_t step = 1 + rnd(3);
        dn t = keep(d_bin(&d, HG_BINARY_SUB, x, b));
        dn y = keep(d_slice(&d, t, ax, start, stop, step));
        dn w = d_input(&d, nd, y.h.sh);
        dn z = keep(d_bin(&d, HG_BINARY_MUL, y, w));
        d_output(&d, z);
        // A slice of a slice on the same axis is one slice; a second output reads the first.
        dn y2 = keep(d_slice(&d, y, ax, 1, HG_SLICE_NONE, 2));
        d_output(&d, keep(d_neg(&d, y2)));
        d_check(&d, "slice chain");
        d_free(&d, NULL, 0);
        pool_free();
    }
}

static void test_concat_random(void) {
    for (int iter = 0; iter < 40; iter++) {
        dgraph d = {0};
        CHECK_OK(hg_graph_create(&d.g));
        int32_t nd = 1 + (int32_t)rnd(3), np = 1 + (int32_t)rnd(4);
        int64_t sh[HG_MAX_DIMS];
        random_shape(nd, sh, 4);
        int32_t ax = (int32_t)rnd(nd);
        dn parts[8];
        for (int32_t i = 0; i < np; i++) {
            sh[ax] = rnd(4);   // empty parts too
            dn a = d_input(&d, nd, sh);
            parts[i] = rnd(2) ? keep(d_neg(&d, a)) : a;
        }
        dn c = keep(d_concat(&d, np, parts, ax));
        if (np == 1) CHECK(c.id == parts[0].id);
        dn w = d_input(&d, nd, c.h.sh);
        d_output(&d, keep(d_bin(&d, HG_BINARY_MAXIMUM, c, w)));
        if (iter % 3 == 0) d_output(&d, c);
        // A slice inside one part reads that part; a slice across parts reads the concat.
        if (c.h.sh[ax] > 1) d_output(&d, keep(d_slice(&d, c, ax, 1, HG_SLICE_NONE, 1)));
        d_check(&d, "concat");
        d_free(&d, NULL, 0);
        pool_free();
    }
}

// Concat parts copied by the concat step (views of inputs: no kernel writes them in place) of
// 32768 elements and more, which plan_run.c copy_part splits over the executor's threads along
// the longest dim other than the axis: the rotary's halves of a head-permuted q swapped (rows
// of 32 floats), and permuted halves joined along the heads.
static void test_concat_large_parts(void) {
    dgraph d = {0};
    CHECK_OK(hg_graph_create(&d.g));
    int64_t B = 4, S = 64, H = 4, D = 64;
    dn q = d_input(&d, 4, (int64_t[]){B, S, H, D});
    int32_t perm[4] = {0, 2, 1, 3};
    dn qt = keep(d_permute(&d, q, perm, perm));
    dn x1 = keep(d_slice(&d, qt, 3, 0, D / 2, 1));
    dn x2 = keep(d_slice(&d, qt, 3, D / 2, HG_SLICE_NONE, 1));
    d_output(&d, keep(d_concat(&d, 2, (dn[]){x2, x1}, 3)));
    dn h1 = keep(d_slice(&d, qt, 1, 2, HG_SLICE_NONE, 1));
    dn h0 = keep(d_slice(&d, qt, 1, 0, 2, 1));
    d_output(&d, keep(d_concat(&d, 3, (dn[]){h1, h0, h1}, 1)));
    d_check(&d, "concat of large copied parts");
    d_free(&d, NULL, 0);
    pool_free();
}

// Rotary embedding as Llama's graph has it: x * cos + cat(-x[..., h:], x[..., :h]) * sin, on a
// head-permuted x; plus a reduction over an axis of a permuted product.
static void test_rotary_and_reductions(void) {
    for (int iter = 0; iter < 6; iter++) {
        dgraph d = {0};
        CHECK_OK(hg_graph_create(&d.g));
        int64_t B = 1 + rnd(2), S = 1 + rnd(5), H = 1 + rnd(3), D = 2 * (1 + rnd(4));
        dn q = d_input(&d, 4, (int64_t[]){B, S, H, D});
        dn cs = d_input(&d, 2, (int64_t[]){S, D}), sn = d_input(&d, 2, (int64_t[]){S, D});
        int32_t perm[4] = {0, 2, 1, 3};
        dn qt = keep(d_permute(&d, q, perm, perm));
        dn x1 = keep(d_slice(&d, qt, 3, 0, D / 2, 1));
        dn x2 = keep(d_slice(&d, qt, 3, D / 2, HG_SLICE_NONE, 1));
        dn rot = keep(d_concat(&d, 2, (dn[]){keep(d_neg(&d, x2)), x1}, 3));
        dn a = keep(d_bin(&d, HG_BINARY_MUL, qt, cs));
        dn r = keep(d_bin(&d, HG_BINARY_ADD, a, keep(d_bin(&d, HG_BINARY_MUL, rot, sn))));
        d_output(&d, r);
        int32_t ax = (int32_t)rnd(4);
        dn p = keep(d_permute(&d, keep(d_bin(&d, HG_BINARY_MUL, qt, qt)), (int32_t[]){3, 1, 0, 2},
                              (int32_t[]){-1, 1, 0, 2}));
        d_output(&d, keep(d_sum(&d, p, ax)));
        d_check(&d, "rotary");
        d_free(&d, NULL, 0);
        pool_free();
    }
}

static int32_t node_count(hg_graph g, int32_t out) {
    CHECK_OK(hg_graph_output(g, out));
    hg_compile_opts o = {1, 1, 1, 0};
    hg_plan plan;
    hg_plan_info info = {0};
    CHECK_OK(hg_graph_compile_opts(g, g_ex, &o, &plan));
    CHECK_OK(hg_plan_info_get(plan, &info));
    CHECK_OK(hg_plan_destroy(plan));
    return info.nodes;
}

static void test_canonical(void) {
    hg_graph g;
    int32_t x, y, a, b, c;
    // permute of permute is one permute; its inverse is x itself.
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 3, (int64_t[]){2, 3, 4}, &x));
    CHECK_OK(hg_graph_permute(g, x, 3, (int32_t[]){2, 0, 1}, &a));
    CHECK_OK(hg_graph_permute(g, a, 3, (int32_t[]){1, 2, 0}, &b));
    CHECK(node_count(g, b) == 1);   // x alone: the output is a copy of the input
    CHECK_OK(hg_graph_permute(g, a, 3, (int32_t[]){0, 2, 1}, &c));
    CHECK(node_count(g, c) == 2);   // x, one permute of x (the first is dead)
    CHECK_OK(hg_graph_permute(g, x, 3, (int32_t[]){0, 1, 2}, &y));
    CHECK(y != x);                  // built as a node; canonicalized away
    CHECK_OK(hg_graph_destroy(g));
    // Full slice = x; slice of slice = one slice; a slice inside a concat's part reads the part;
    // adjacent slices joined back are one slice.
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){4, 10}, &x));
    CHECK_OK(hg_graph_slice(g, x, 1, HG_SLICE_NONE, HG_SLICE_NONE, 1, &a));
    CHECK(node_count(g, a) == 1);
    CHECK_OK(hg_graph_destroy(g));
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){4, 10}, &x));
    CHECK_OK(hg_graph_slice(g, x, -1, 2, 9, 2, &a));        // 2, 4, 6, 8
    CHECK_OK(hg_graph_slice(g, a, 1, 1, HG_SLICE_NONE, 2, &b));   // 4, 8
    CHECK(node_count(g, b) == 2);
    CHECK_OK(hg_graph_destroy(g));
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){4, 10}, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){4, 6}, &y));
    CHECK_OK(hg_graph_concat(g, 2, (int32_t[]){x, y}, 1, &c));
    CHECK_OK(hg_graph_slice(g, c, 1, 11, 15, 1, &a));   // y[:, 1:5]
    CHECK(node_count(g, a) == 3);                        // x, y, slice of y
    CHECK_OK(hg_graph_destroy(g));
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){4, 10}, &x));
    CHECK_OK(hg_graph_slice(g, x, 1, 1, 4, 1, &a));
    CHECK_OK(hg_graph_slice(g, x, 1, 4, 8, 1, &b));
    CHECK_OK(hg_graph_concat(g, 2, (int32_t[]){a, b}, 1, &c));
    CHECK(node_count(g, c) == 2);                        // x, x[:, 1:8]
    // Printer.
    char* text = NULL;
    CHECK_OK(hg_graph_print(g, &text));
    CHECK(text && strstr(text, "slice %0 axis=1 start=1 step=1 : f32(4, 3)"));
    CHECK(text && strstr(text, "concat %1, %2 axis=1 : f32(4, 7)"));
    free(text);
    CHECK_OK(hg_graph_permute(g, x, 2, (int32_t[]){-1, 0}, &a));
    CHECK_OK(hg_graph_print(g, &text));
    CHECK(text && strstr(text, "permute %0 perm=[1,0] : f32(10, 4)"));
    free(text);
    CHECK_OK(hg_graph_destroy(g));
}

// The plan's text for d's graph (fusion on), for checks on where values live.
static char* d_plan_text(dgraph* d) {
    hg_compile_opts o = {1, 1, 1, 0};
    hg_plan plan;
    char* text = NULL;
    CHECK_OK(hg_graph_compile_opts(d->g, g_ex, &o, &plan));
    CHECK_OK(hg_plan_print(plan, &text));
    CHECK_OK(hg_plan_destroy(plan));
    return text;
}

// Concat parts that kernels compute for the concat alone are written in place into its output
// (pass_lower.c place_concat_parts), which then lives from the first such write: here a
// reduction's result is made between the two part kernels, and would take the concat's memory
// if that lived from the concat step only (a = -x is written first, then s = sum(y, 0), then
// b = z + s, then the concat). A part read elsewhere too, or an input, is copied.
static void test_concat_parts_in_place(void) {
    for (int variant = 0; variant < 4; variant++) {
        dgraph d = {0};
        CHECK_OK(hg_graph_create(&d.g));
        dn x = d_input(&d, 2, (int64_t[]){4, 6}), y = d_input(&d, 2, (int64_t[]){3, 6});
        dn z = d_input(&d, 2, (int64_t[]){2, 6});
        dn a = keep(d_neg(&d, x));
        dn s = keep(d_sum(&d, y, 0));
        dn b = keep(d_bin(&d, HG_BINARY_ADD, z, s));
        dn c = keep(d_concat(&d, variant == 3 ? 3 : 2, (dn[]){a, b, z}, 0));
        if (variant == 0) d_output(&d, keep(d_bin(&d, HG_BINARY_MUL, c, c)));
        if (variant == 1) d_output(&d, c);   // the concat's output is the caller's tensor
        if (variant == 2) {                  // a is also read by another kernel: copied
            d_output(&d, c);
            d_output(&d, keep(d_bin(&d, HG_BINARY_ADD, a, a)));
        }
        if (variant == 3) d_output(&d, c);   // an input as the third part: copied
        char* text = d_plan_text(&d);
        int parts = 0;
        for (const char* t = text; t && (t = strstr(t, "concat")); t++) {
            const char* eol = strchr(t, '\n');
            for (const char* q = t; q && (q = strstr(q, ":part(")) && (!eol || q < eol); q++) parts++;
        }
        CHECK_MSG(parts == (variant == 2 ? 1 : 2), "variant %d: %d parts in place\n%s", variant,
                  parts, text ? text : "");
        free(text);
        d_check(&d, "concat parts in place");
        d_free(&d, NULL, 0);
        pool_free();
    }
}

static dn d_reshape(dgraph* d, dn x, int32_t nd, const int64_t* sh) {
    dn r;
    CHECK_OK(hg_graph_reshape(d->g, x.id, nd, sh, &r.id));
    r.h = ht_new(nd, sh);
    memcpy(r.h.d, x.h.d, (size_t)ht_numel(&r.h) * sizeof(double));
    return r;
}

// A reshape between elementwise chains moves to the values in memory when every operand stays
// a view (a bias over the dims the reshape keeps at the end; operands with all the elements):
// the chains become one kernel. A broadcast along a merged dim, or a strided view under it
// (the reshape would copy), keeps it where it is. Reshapes of reshapes are one.
static void test_reshape_moves(void) {
    const int64_t rows[2] = {6, 8}, split[3] = {2, 3, 8};
    for (int variant = 0; variant < 5; variant++) {
        dgraph d = {0};
        CHECK_OK(hg_graph_create(&d.g));
        dn x = d_input(&d, 2, rows), z = d_input(&d, 3, split), p;
        if (variant == 0) p = d_input(&d, 1, (int64_t[]){8});              // bias: moves
        if (variant == 1) p = d_input(&d, 2, (int64_t[]){1, 8});           // leading 1: moves
        if (variant == 2) p = d_input(&d, 2, (int64_t[]){6, 1});           // per row: stays
        if (variant == 3) p = d_input(&d, 2, rows);                       // full: moves
        if (variant == 4) {                                               // transposed: stays
            dn t = d_input(&d, 2, (int64_t[]){8, 6});
            p = keep(d_permute(&d, t, (int32_t[]){1, 0}, (int32_t[]){1, 0}));
        }
        dn y = keep(d_bin(&d, HG_BINARY_ADD, keep(d_neg(&d, x)), p));
        dn r = keep(d_reshape(&d, y, 3, split));
        d_output(&d, keep(d_bin(&d, HG_BINARY_MUL, r, z)));
        int32_t kernels = d_check(&d, "reshape moves");
        int want = variant == 2 || variant == 4 ? 2 : 1;
        CHECK_MSG(kernels == want, "variant %d: %d kernels, want %d", variant, kernels, want);
        d_free(&d, NULL, 0);
        pool_free();
    }
    // The rotary table case: (x * c).transpose(1, 2) with x (B, H, T, D) and c (T, D): c is
    // viewed as (1, T, 1, D), a reshape (only size-1 dims move), and the chain is one kernel.
    {
        dgraph d = {0};
        CHECK_OK(hg_graph_create(&d.g));
        dn x4 = d_input(&d, 4, (int64_t[]){2, 3, 4, 5}), c2 = d_input(&d, 2, (int64_t[]){4, 5});
        dn m = keep(d_bin(&d, HG_BINARY_MUL, x4, c2));
        d_output(&d, keep(d_permute(&d, m, (int32_t[]){0, 2, 1, 3}, (int32_t[]){0, 2, 1, 3})));
        char* text = d_plan_text(&d);
        CHECK_MSG(text && strstr(text, "view reshape") && d_check(&d, "rotary table") == 1,
                  "%s", text ? text : "");
        free(text);
        d_free(&d, NULL, 0);
        pool_free();
    }
    hg_graph g;
    int32_t x, a, b;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, rows, &x));
    CHECK_OK(hg_graph_reshape(g, x, 3, split, &a));
    CHECK_OK(hg_graph_reshape(g, a, 2, (int64_t[]){3, 16}, &b));
    CHECK(node_count(g, b) == 2);   // x, one reshape of x
    CHECK_OK(hg_graph_destroy(g));
}

// A norm node as a plan step on this executor (the device row kernels on a device): bit for bit
// the eager hg_layer_norm / hg_rms_norm of the same values, read through a reshape of a kernel's
// output, on rows of 96 values (several per thread).
static void test_norm_step(void) {
    const int64_t sh[3] = {5, 8, 96}, flat[2] = {40, 96};
    float* xv = malloc(40 * 96 * sizeof *xv);
    float *got = malloc(40 * 96 * sizeof *got), *want = malloc(40 * 96 * sizeof *want);
    float wv[96], bv[96];
    for (int i = 0; i < 40 * 96; i++) xv[i] = (float)(rnd(2001) - 1000) / 100.0f;
    for (int i = 0; i < 96; i++) wv[i] = (float)(rnd(201) - 100) / 50.0f, bv[i] = (float)(rnd(21) - 10);
    for (int rms = 0; rms < 2 && xv && got && want; rms++) {
        hg_graph g;
        int32_t x, w, b = -1, nx, r, y;
        CHECK_OK(hg_graph_create(&g));
        CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, flat, &x));
        CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){96}, &w));
        if (!rms) CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 1, (int64_t[]){96}, &b));
        CHECK_OK(hg_graph_unary(g, HG_UNARY_NEG, x, &nx));
        CHECK_OK(hg_graph_reshape(g, nx, 3, sh, &r));
        CHECK_OK(hg_graph_norm(g, r, 1, w, b, 1e-5, rms, &y));
        CHECK_OK(hg_graph_output(g, y));
        hg_plan plan;
        CHECK_OK(hg_graph_compile(g, g_ex, &plan));
        ht hx = ht_new(2, flat), hw = ht_new(1, (int64_t[]){96}), hn = ht_new(3, sh);
        for (int i = 0; i < 40 * 96; i++) hx.d[i] = xv[i], hn.d[i] = -(double)xv[i];
        for (int i = 0; i < 96; i++) hw.d[i] = wv[i];
        hg_tensor tx = dev_tensor(&hx, 1), tw = dev_tensor(&hw, 1), tb = dev_tensor(&hw, 0);
        hg_tensor tn = dev_tensor(&hn, 1), to = dev_tensor(&hn, 0), te = dev_tensor(&hn, 0);
        CHECK_OK(hg_buffer_write(tb.buffer, 0, bv, 96));
        hg_tensor ins[3] = {tx, tw, tb};
        CHECK_OK(hg_plan_run(plan, rms ? 2 : 3, ins, 1, &to));
        CHECK_OK(rms ? hg_rms_norm(&tn, 1, &tw, 1e-5, &te) : hg_layer_norm(&tn, 1, &tw, &tb, 1e-5, &te));
        CHECK_OK(hg_buffer_read(to.buffer, 0, got, 40 * 96));
        CHECK_OK(hg_buffer_read(te.buffer, 0, want, 40 * 96));
        CHECK_MSG(memcmp(got, want, 40 * 96 * sizeof *got) == 0, "norm step (rms %d) differs "
                  "from the eager op", rms);
        int bad = 0;
        for (int r0 = 0; r0 < 40; r0++) {
            double mean = 0, var = 0;
            for (int i = 0; i < 96; i++) mean += hn.d[r0 * 96 + i];
            mean = rms ? 0.0 : mean / 96;
            for (int i = 0; i < 96; i++) var += (hn.d[r0 * 96 + i] - mean) * (hn.d[r0 * 96 + i] - mean);
            double rstd = 1.0 / sqrt(var / 96 + 1e-5);
            for (int i = 0; i < 96; i++) {
                double v = (hn.d[r0 * 96 + i] - mean) * rstd * wv[i] + (rms ? 0.0 : bv[i]);
                bad += !(fabs(got[r0 * 96 + i] - v) <= 1e-5 * (1.0 + fabs(v)));
            }
        }
        CHECK_MSG(bad == 0, "norm step (rms %d): %d values off the float64 result", rms, bad);
        hg_tensor all[6] = {tx, tw, tb, tn, to, te};
        for (int i = 0; i < 6; i++) hg_buffer_destroy(all[i].buffer);
        free(hx.d); free(hw.d); free(hn.d);
        CHECK_OK(hg_plan_destroy(plan));
        CHECK_OK(hg_graph_destroy(g));
    }
    free(xv); free(got); free(want);
}

// A view of a deep DAG that reads each node twice (x[k+1] = x[k] * x[k] + 1) moves once per
// node, not once per path (2^60 here), and stays exact.
static void test_shared_dag(void) {
    dgraph d = {0};
    CHECK_OK(hg_graph_create(&d.g));
    dn x = d_input(&d, 2, (int64_t[]){3, 4}), one = d_input(&d, 0, NULL);
    for (int32_t i = 0; i < 3 * 4; i++) x.h.d[i] = (double)(i % 3) - 1.0;   // -1, 0, 1: stays small
    one.h.d[0] = 0.0;
    for (int k = 0; k < 60; k++) x = keep(d_bin(&d, HG_BINARY_ADD, keep(d_bin(&d, HG_BINARY_MUL, x, x)), one));
    dn y = keep(d_slice(&d, keep(d_permute(&d, x, (int32_t[]){1, 0}, (int32_t[]){1, 0})), 0, 1, 3, 1));
    d_output(&d, y);
    CHECK(d_check(&d, "shared DAG") >= 1);
    d_free(&d, NULL, 0);
    pool_free();
}

static int msg_has(const char* s) { return strstr(hg_last_error(), s) != NULL; }

static void test_errors(void) {
    hg_graph g;
    int32_t x, y, b, out = -5, n0;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){2, 3}, &x));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_I32, 2, (int64_t[]){2, 3}, &b));
    CHECK_OK(hg_graph_constant(g, HG_DTYPE_F32, hg_scalar_f(1.0), &n0));
    CHECK_STATUS(hg_graph_permute(g, x, 3, (int32_t[]){0, 1, 2}, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK(msg_has("hg_graph_permute: perm has 3 entries, x has 2 dims"));
    CHECK_STATUS(hg_graph_permute(g, x, 2, (int32_t[]){0, 0}, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK(msg_has("perm[1] repeats dim 0"));
    CHECK_STATUS(hg_graph_permute(g, x, 2, (int32_t[]){0, 2}, &out), HG_ERR_OUT_OF_RANGE);
    CHECK(msg_has("perm[1] is 2 (valid: -2..1)"));
    CHECK_STATUS(hg_graph_permute(g, x, 2, NULL, &out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_graph_permute(g, 9, 2, (int32_t[]){0, 1}, &out), HG_ERR_OUT_OF_RANGE);
    CHECK(msg_has("node 'x' is 9"));
    CHECK_STATUS(hg_graph_slice(g, x, 0, 0, 1, 0, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK(msg_has("hg_graph_slice: step is 0"));
    CHECK_STATUS(hg_graph_slice(g, x, 0, HG_SLICE_NONE, HG_SLICE_NONE, -1, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_slice(g, x, 2, 0, 1, 1, &out), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_graph_slice(g, x, -3, 0, 1, 1, &out), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_graph_slice(g, n0, 0, 0, 1, 1, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK(msg_has("x is 0-d"));
    CHECK_STATUS(hg_graph_concat(g, 0, (int32_t[]){x}, 0, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_graph_concat(g, 1, NULL, 0, &out), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_graph_concat(g, 2, (int32_t[]){x, b}, 0, &out), HG_ERR_DTYPE_MISMATCH);
    CHECK(msg_has("hg_graph_concat: nodes[1] is i32, nodes[0] is f32"));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){2, 4}, &y));
    CHECK_STATUS(hg_graph_concat(g, 2, (int32_t[]){x, y}, 0, &out), HG_ERR_SIZE_MISMATCH);
    CHECK(msg_has("nodes[1] has shape (2, 4), nodes[0] (2, 3)"));
    CHECK_STATUS(hg_graph_concat(g, 2, (int32_t[]){x, 42}, 0, &out), HG_ERR_OUT_OF_RANGE);
    CHECK(msg_has("node 'nodes[1]' is 42"));
    CHECK_STATUS(hg_graph_concat(g, 2, (int32_t[]){x, y}, 2, &out), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_graph_concat(g, 1, (int32_t[]){n0}, 0, &out), HG_ERR_INVALID_ARGUMENT);
    CHECK(out == -5);   // refused calls write nothing
    int32_t before = 0;
    hg_graph_obj* o = hg_graph_resolve(g, "test");
    before = o->ir.n;
    CHECK(before == 4);   // and add no node
    CHECK_OK(hg_graph_concat(g, 2, (int32_t[]){x, y}, -1, &out));
    CHECK_OK(hg_graph_destroy(g));
}

// A weight gradient's pattern: a = x * x + x, read by a matmul transposed (a^T w) and in order
// (a * 2). The transpose stays a view the matmul reads (a computed once, in order); moved into
// a's kernel it would compute a twice, once in transposed order through gathered inputs. Small integers:
// every product and sum is exact in f32.
static void test_transpose_read_by_matmul(void) {
    int64_t M = 37, K = 19, N = 11;
    float x[37 * 19], w[37 * 11], got[19 * 11], got2[37 * 19];
    for (int64_t i = 0; i < M * K; i++) x[i] = (float)(rnd(7) - 3);
    for (int64_t i = 0; i < M * N; i++) w[i] = (float)(rnd(5) - 2);
    hg_graph g;
    int32_t xi, wi, sq, a, at, mm, a2;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){M, K}, &xi));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){M, N}, &wi));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_MUL, xi, xi, &sq));
    CHECK_OK(hg_graph_binary(g, HG_BINARY_ADD, sq, xi, &a));
    CHECK_OK(hg_graph_permute(g, a, 2, (int32_t[]){1, 0}, &at));
    CHECK_OK(hg_graph_matmul(g, at, wi, &mm));
    CHECK_OK(hg_graph_binary_scalar(g, HG_BINARY_MUL, a, hg_scalar_f(2.0), 0, &a2));
    CHECK_OK(hg_graph_output(g, mm));
    CHECK_OK(hg_graph_output(g, a2));
    hg_plan plan;
    hg_plan_info info = {0};
    CHECK_OK(hg_graph_compile(g, g_ex, &plan));
    CHECK_OK(hg_plan_info_get(plan, &info));
    // x, w, x * x, a, a^T (a view of a's value), a^T w, a * 2: a once, in order
    char* text = NULL;
    CHECK_OK(hg_plan_print(plan, &text));
    CHECK_MSG(info.nodes == 7 && text && strstr(text, "view %"),
              "a^T w and 2a: %d nodes, want 7 (a computed once, its transpose a view):\n%s",
              (int)info.nodes, text ? text : "");
    hg_free(text);
    hg_tensor ins[2], outs[2];
    const float* src[2] = {x, w};
    int64_t ish[2][2] = {{M, K}, {M, N}}, osh[2][2] = {{K, N}, {M, K}};
    for (int i = 0; i < 2; i++) {
        hg_buffer b;
        CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)(ish[i][0] * ish[i][1]), &b));
        CHECK_OK(hg_buffer_write(b, 0, src[i], (size_t)(ish[i][0] * ish[i][1])));
        CHECK_OK(hg_tensor_view(b, 2, ish[i], NULL, 0, &ins[i]));
        CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)(osh[i][0] * osh[i][1]), &b));
        CHECK_OK(hg_tensor_view(b, 2, osh[i], NULL, 0, &outs[i]));
    }
    CHECK_OK(hg_plan_run(plan, 2, ins, 2, outs));
    CHECK_OK(hg_buffer_read(outs[0].buffer, 0, got, (size_t)(K * N)));
    CHECK_OK(hg_buffer_read(outs[1].buffer, 0, got2, (size_t)(M * K)));
    int bad = 0;
    for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t m = 0; m < M; m++) {
                double av = (double)x[m * K + k] * x[m * K + k] + x[m * K + k];
                s += av * w[m * N + n];
            }
            bad += (double)got[k * N + n] != s;
        }
    for (int64_t i = 0; i < M * K; i++) bad += (double)got2[i] != 2.0 * ((double)x[i] * x[i] + x[i]);
    CHECK_MSG(bad == 0, "a^T w and 2a: %d wrong values", bad);
    for (int i = 0; i < 2; i++) {
        hg_buffer_destroy(ins[i].buffer);
        hg_buffer_destroy(outs[i].buffer);
    }
    CHECK_OK(hg_plan_destroy(plan));
    CHECK_OK(hg_graph_destroy(g));
}

// A plan whose intermediate arena is over 32 MiB releases it after each run (docs/graph.md):
// runs after the first allocate it anew and still compute right (under ASan: no use of the
// released memory). a = x + 1 is stored for the matmul: 2304 x 4096 f32 = 36 MiB.
static void test_large_arena_released(void) {
    int64_t M = 2304, K = 4096;
    hg_graph g;
    int32_t xi, wi, a, mm;
    CHECK_OK(hg_graph_create(&g));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){M, K}, &xi));
    CHECK_OK(hg_graph_input(g, HG_DTYPE_F32, 2, (int64_t[]){K, 1}, &wi));
    CHECK_OK(hg_graph_binary_scalar(g, HG_BINARY_ADD, xi, hg_scalar_f(1.0), 0, &a));
    CHECK_OK(hg_graph_matmul(g, a, wi, &mm));
    CHECK_OK(hg_graph_output(g, mm));
    hg_plan plan;
    hg_plan_info info = {0};
    CHECK_OK(hg_graph_compile(g, g_ex, &plan));
    CHECK_OK(hg_plan_info_get(plan, &info));
    CHECK_MSG(info.peak_bytes > ((uint64_t)32 << 20), "peak %llu bytes, want over 32 MiB",
              (unsigned long long)info.peak_bytes);
    float* x = malloc((size_t)(M * K) * sizeof *x);
    float w[4096], got[2304];
    hg_buffer bx, bw, bo;
    hg_tensor tx, tw, to;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)(M * K), &bx));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)K, &bw));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, (size_t)M, &bo));
    CHECK_OK(hg_tensor_view(bx, 2, (int64_t[]){M, K}, NULL, 0, &tx));
    CHECK_OK(hg_tensor_view(bw, 2, (int64_t[]){K, 1}, NULL, 0, &tw));
    CHECK_OK(hg_tensor_view(bo, 2, (int64_t[]){M, 1}, NULL, 0, &to));
    for (int run = 0; run < 3 && x; run++) {
        for (int64_t i = 0; i < M * K; i++) x[i] = (float)(rnd(5) - 2);
        for (int64_t i = 0; i < K; i++) w[i] = (float)(rnd(3) - 1);
        CHECK_OK(hg_buffer_write(bx, 0, x, (size_t)(M * K)));
        CHECK_OK(hg_buffer_write(bw, 0, w, (size_t)K));
        CHECK_OK(hg_plan_run(plan, 2, (hg_tensor[]){tx, tw}, 1, &to));
        CHECK_OK(hg_buffer_read(bo, 0, got, (size_t)M));
        int bad = 0;
        for (int64_t m = 0; m < M; m++) {
            double sum = 0;
            for (int64_t k = 0; k < K; k++) sum += ((double)x[m * K + k] + 1.0) * w[k];
            bad += (double)got[m] != sum;
        }
        CHECK_MSG(bad == 0, "large arena, run %d: %d wrong values", run, bad);
    }
    free(x);
    hg_buffer_destroy(bx);
    hg_buffer_destroy(bw);
    hg_buffer_destroy(bo);
    CHECK_OK(hg_plan_destroy(plan));
    CHECK_OK(hg_graph_destroy(g));
}

static void run(int on_device) {
    (void)on_device;
    test_permute_random();
    test_slice_random();
    test_concat_random();
    test_concat_large_parts();
    test_rotary_and_reductions();
    test_concat_parts_in_place();
    test_canonical();
    test_transpose_read_by_matmul();
    test_large_arena_released();
    test_shared_dag();
    test_reshape_moves();
    test_norm_step();
    test_errors();
}

int main(void) {
    int rc = hg_test_run_executors("test_graph_views", &g_ex, run);
    if (hg_handle_live_count(HG_HANDLE_PLAN) != 0 || hg_handle_live_count(HG_HANDLE_GRAPH) != 0) {
        fprintf(stderr, "test_graph_views: live handles at exit\n");
        return 1;
    }
    return rc;
}
