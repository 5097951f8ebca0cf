// Every rewrite rule of the graph canonicalizer (src/graph/rules.c): each rule's pattern is
// instantiated as a graph for every dtype (and, for casts, every target dtype) the builder
// accepts, compiled with and without rewrites (and without fusion) and run on random and
// special values (NaN, ±inf, -0.0, subnormals, integer extremes); results must be identical
// bit for bit (a NaN only needs to be a NaN: rules may change its sign or payload). Each rule
// must fire (counted per rule and in hg_plan_info.rewrites) for at least one dtype.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/handles.h"
#include "runtime/objects.h"
#include "graph/graph_internal.h"
#include "hg_test.h"
#include "tensor_ref.h"

#define N 96

static hg_executor g_ex;
static uint64_t g_rng = 12345;

static double special_float(int i) {
    static const double v[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5,
                               1.5, 2.5, -2.5, 3.0, 65504.0, -65504.0, 1e-40, -1e-45, 1e-8,
                               3.4e38, -3.4e38, 1e300, 2.0, -2.0, 0.1, 100.25, -7.0, 1e5};
    return v[i % (int)(sizeof v / sizeof v[0])];
}

// Fills n elements of dtype dt: specials first, then random values.
static void fill_values(hg_dtype dt, unsigned char* out, int n, uint64_t salt) {
    size_t es = hg_dtype_size(dt);
    for (int i = 0; i < n; i++) {
        uint64_t r = hg_test_rand(&g_rng) ^ salt;
        unsigned char* p = out + (size_t)i * es;
        if (dt == HG_DTYPE_BOOL) { p[0] = (unsigned char)(r & 1); continue; }
        if (dt == HG_DTYPE_F16 || dt == HG_DTYPE_BF16 || dt == HG_DTYPE_F32 || dt == HG_DTYPE_F64) {
            double v = i < 28 ? special_float(i + (int)(salt % 5)) : ((double)(r % 20001) - 10000.0) / 64.0;
            if (i >= 28 && (r >> 40) % 4 == 0) v = (double)((int64_t)(r % 9) - 4);  // repeats
            hg_convert_from_double(dt, v, p);
            continue;
        }
        if (i < 8) {
            static const int64_t sv[] = {0, 1, -1, 2, -2, 127, -128, 7};
            hg_convert_from_double(dt, (double)sv[i], p);
            if (i == 5) memset(p, 0xFF, es), p[es - 1] = hg_dtype_size(dt) && (dt <= HG_DTYPE_I64) ? 0x7F : 0xFF;
            if (i == 6) { memset(p, 0, es); if (dt <= HG_DTYPE_I64) p[es - 1] = 0x80; }
            continue;
        }
        if ((r >> 50) % 3 == 0) r %= 5;   // small values repeat (x == y happens)
        memcpy(p, &r, es);
    }
}


// Index of the first differing element, or -1.
static int compare(hg_dtype dt, const unsigned char* a, const unsigned char* b, int64_t n) {
    size_t es = hg_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *x = a + (size_t)i * es, *y = b + (size_t)i * es;
        if (tref_is_nan(dt, x) && tref_is_nan(dt, y)) continue;
        if (memcmp(x, y, es)) return (int)i;
    }
    return -1;
}

typedef struct inst {
    hg_dtype var_dtype;
    hg_dtype cast_dtypes[4];
    int ncasts;
    int32_t vars[3];
} inst;

static hg_status build(hg_graph g, const hg_pat* pool, int32_t p, inst* in, int* cast_i, int32_t* out) {
    const hg_pat* pt = &pool[p];
    int32_t kids[3];
    hg_status s;
    for (int i = 0; i < pt->nkids; i++)
        if ((s = build(g, pool, pt->kid[i], in, cast_i, &kids[i]))) return s;
    hg_dtype d = in->var_dtype;
    switch (pt->kind) {
    case HG_PAT_VAR:
        if (in->vars[pt->op] < 0) {
            int64_t shape[1] = {N};
            if ((s = hg_graph_input(g, d, 1, shape, &in->vars[pt->op]))) return s;
        }
        *out = in->vars[pt->op];
        return HG_OK;
    case HG_PAT_CONST: {
        hg_scalar v = hg_dtype_size(d) && (d == HG_DTYPE_F16 || d == HG_DTYPE_BF16 || d == HG_DTYPE_F32 || d == HG_DTYPE_F64)
                          ? hg_scalar_f(pt->value)
                          : d == HG_DTYPE_BOOL ? hg_scalar_b(pt->value != 0) : hg_scalar_i((int64_t)pt->value);
        return hg_graph_constant(g, d, v, out);
    }
    case HG_PAT_UNARY: return hg_graph_unary(g, (hg_unary_op)pt->op, kids[0], out);
    case HG_PAT_BINARY: return hg_graph_binary(g, (hg_binary_op)pt->op, kids[0], kids[1], out);
    case HG_PAT_WHERE: return hg_graph_where(g, kids[0], kids[1], kids[2], out);
    case HG_PAT_CAST: return hg_graph_cast(g, kids[0], in->cast_dtypes[(*cast_i)++], out);
    default: return HG_ERR_INTERNAL;
    }
}

static int count_casts(const hg_pat* pool, int32_t p) {
    int k = pool[p].kind == HG_PAT_CAST;
    for (int i = 0; i < pool[p].nkids; i++) k += count_casts(pool, pool[p].kid[i]);
    return k;
}

static hg_plan_obj* plan_obj(hg_plan p) { return hg_handle_get(p.handle, HG_HANDLE_PLAN); }

// Compiles g three ways and compares. Returns how often the rule fired in the rewritten plan.
static int run_case(int rule, hg_graph g, const inst* in, int32_t root) {
    hg_compile_opts on = {1, 1, 1, 0}, off = {0, 0, 1, 0}, nofuse = {1, 1, 0, 0};
    hg_plan pa, pb, pc;
    CHECK_OK(hg_graph_compile_opts(g, g_ex, &on, &pa));
    CHECK_OK(hg_graph_compile_opts(g, g_ex, &off, &pb));
    CHECK_OK(hg_graph_compile_opts(g, g_ex, &nofuse, &pc));
    hg_plan_info ia, ib;
    CHECK_OK(hg_plan_info_get(pa, &ia));
    CHECK_OK(hg_plan_info_get(pb, &ib));
    CHECK(ib.rewrites == 0);
    int hits = plan_obj(pa)->rule_hits[rule];
    CHECK(ia.rewrites >= hits);
    hg_tensor ins[3];
    hg_buffer bufs[3] = {{0}, {0}, {0}};
    int nin = 0;
    unsigned char host[N * 8];
    for (int v = 0; v < 3; v++) {
        if (in->vars[v] < 0) continue;
        CHECK_OK(hg_buffer_create(g_ex, in->var_dtype, N, &bufs[nin]));
        fill_values(in->var_dtype, host, N, (uint64_t)v * 7919u);
        CHECK_OK(hg_buffer_write(bufs[nin], 0, host, N));
        CHECK_OK(hg_tensor_from_buffer(bufs[nin], 1, (int64_t[]){N}, &ins[nin]));
        nin++;
    }
    hg_dtype odt;
    int32_t ond;
    int64_t osh[HG_MAX_DIMS];
    CHECK_OK(hg_graph_node_info(g, root, &odt, &ond, osh));
    hg_buffer ob[3];
    hg_tensor ot[3];
    unsigned char res[3][N * 8];
    hg_plan plans[3] = {pa, pb, pc};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(hg_buffer_create(g_ex, odt, N, &ob[k]));
        CHECK_OK(hg_tensor_from_buffer(ob[k], ond, osh, &ot[k]));
        hg_status s = hg_plan_run(plans[k], nin, ins, 1, &ot[k]);
        CHECK_MSG(s == HG_OK, "rule %d run %d: %s", rule, k, hg_last_error());
        CHECK_OK(hg_buffer_read(ob[k], 0, res[k], N));
    }
    int d1 = compare(odt, res[0], res[1], N), d2 = compare(odt, res[2], res[1], N);
    CHECK_MSG(d1 < 0 && d2 < 0, "rule %d (%s -> %s), x dtype %s: rewritten and unrewritten "
              "results differ at element %d (casts %s %s)", rule, hg_rule_table[rule].pattern,
              hg_rule_table[rule].rewrite, hg_dtype_name(in->var_dtype), d1 >= 0 ? d1 : d2, hg_dtype_name(in->cast_dtypes[0]), hg_dtype_name(in->cast_dtypes[1]));
    for (int k = 0; k < 3; k++) {
        hg_buffer_destroy(ob[k]);
        hg_plan_destroy(plans[k]);
    }
    for (int k = 0; k < nin; k++) hg_buffer_destroy(bufs[k]);
    return hits;
}

int main(void) {
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_ex));
    static const hg_dtype cast_small[] = {HG_DTYPE_BOOL, HG_DTYPE_I8, HG_DTYPE_I32, HG_DTYPE_U16,
                                          HG_DTYPE_U64, HG_DTYPE_F16, HG_DTYPE_BF16, HG_DTYPE_F32,
                                          HG_DTYPE_F64};
    const int nsmall = (int)(sizeof cast_small / sizeof cast_small[0]);
    int total_cases = 0;
    for (int r = 0; r < HG_RULE_COUNT; r++) {
        const hg_pat* pool;
        int32_t root, rroot;
        CHECK_OK(hg_rule_parsed(r, 0, &pool, &root));
        CHECK_OK(hg_rule_parsed(r, 1, &pool, &rroot));
        int ncasts = count_casts(pool, root);
        int fired = 0, cases = 0;
        for (int d = 0; d < HG_DTYPE_COUNT; d++) {
            int combos = ncasts == 0 ? 1 : ncasts == 1 ? HG_DTYPE_COUNT : nsmall * nsmall;
            for (int c = 0; c < combos; c++) {
                if (ncasts == 2 && d != HG_DTYPE_BOOL && (d % 2) && c % 3) continue;  // thin out
                inst in;
                memset(&in, 0, sizeof in);
                in.var_dtype = (hg_dtype)d;
                in.vars[0] = in.vars[1] = in.vars[2] = -1;
                if (ncasts == 1) in.cast_dtypes[0] = (hg_dtype)c;
                if (ncasts == 2) { in.cast_dtypes[0] = cast_small[c / nsmall]; in.cast_dtypes[1] = cast_small[c % nsmall]; }
                hg_graph g;
                CHECK_OK(hg_graph_create(&g));
                int ci = 0;
                int32_t out;
                // Casts are built inner first: the pattern's outer cast takes the second dtype.
                if (build(g, pool, root, &in, &ci, &out) == HG_OK) {
                    CHECK_OK(hg_graph_output(g, out));
                    fired += run_case(r, g, &in, out) > 0;
                    cases++;
                }
                CHECK_OK(hg_graph_destroy(g));
            }
        }
        total_cases += cases;
        CHECK_MSG(fired > 0, "rule %d (%s -> %s) never fired (%d graphs built)", r,
                  hg_rule_table[r].pattern, hg_rule_table[r].rewrite, cases);
    }
    printf("rule cases: %d\n", total_cases);
    CHECK(HG_RULE_COUNT >= 30);
    // The condition names used by docs/graph.md.
    for (int w = 0; w < HG_WHEN_COUNT; w++) CHECK(strcmp(hg_rule_when_name((hg_rule_when)w), "?") != 0);
    // Lossless conversions used by the cast-chain rule.
    CHECK(hg_dtype_lossless(HG_DTYPE_I32, HG_DTYPE_I64) && !hg_dtype_lossless(HG_DTYPE_I64, HG_DTYPE_I32));
    CHECK(hg_dtype_lossless(HG_DTYPE_U8, HG_DTYPE_I16) && !hg_dtype_lossless(HG_DTYPE_I8, HG_DTYPE_U16));
    CHECK(hg_dtype_lossless(HG_DTYPE_I16, HG_DTYPE_F32) && !hg_dtype_lossless(HG_DTYPE_I32, HG_DTYPE_F32));
    CHECK(hg_dtype_lossless(HG_DTYPE_F16, HG_DTYPE_F32) && !hg_dtype_lossless(HG_DTYPE_F16, HG_DTYPE_BF16));
    CHECK(!hg_dtype_lossless(HG_DTYPE_F32, HG_DTYPE_I64) && hg_dtype_lossless(HG_DTYPE_BOOL, HG_DTYPE_U8));
    CHECK_OK(hg_executor_destroy(g_ex));
    return hg_test_finish("test_graph_rules");
}
