// The rewrite rule table and its matcher (see rules.h). The rules are data: s-expressions
// parsed once into a pool of pattern nodes.
#include "graph/rules.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/elementwise/ewise.h"

// clang-format off
const hg_rule hg_rule_table[HG_RULE_COUNT] = {
    // additive identities
    {"(add x 0)", "x", HG_WHEN_INT, "x + 0 = x for integers (not floats: -0.0 + 0 = +0.0)"},
    {"(add 0 x)", "x", HG_WHEN_INT, "0 + x = x for integers"},
    {"(add x -0.0)", "x", HG_WHEN_FLOAT, "x + (-0.0) = x for every float, zeros of both signs included"},
    {"(add -0.0 x)", "x", HG_WHEN_FLOAT, "(-0.0) + x = x for every float"},
    {"(subtract x 0)", "x", HG_WHEN_NUM, "x - 0 = x (floats too: -0.0 - 0 = -0.0)"},
    {"(subtract 0 x)", "(neg x)", HG_WHEN_INT, "0 - x = -x in wrapping integer arithmetic"},
    {"(subtract -0.0 x)", "(neg x)", HG_WHEN_FLOAT, "(-0.0) - x = -x for floats (0 - 0 would give +0.0, not -0.0); NaN sign may differ"},
    {"(subtract x x)", "0", HG_WHEN_INT, "x - x = 0 for integers (floats: inf - inf = NaN)"},
    // multiplicative identities
    {"(multiply x 1)", "x", HG_WHEN_NUM, "x * 1 = x exactly (IEEE multiplication by one is exact)"},
    {"(multiply 1 x)", "x", HG_WHEN_NUM, "1 * x = x"},
    {"(multiply x 0)", "0", HG_WHEN_INT, "x * 0 = 0 for integers (floats: inf * 0 = NaN, -1 * 0 = -0.0)"},
    {"(multiply 0 x)", "0", HG_WHEN_INT, "0 * x = 0 for integers"},
    {"(multiply x -1)", "(neg x)", HG_WHEN_NUM, "x * -1 = -x (integers wrap alike: MIN * -1 = MIN = -MIN); NaN sign may differ"},
    {"(multiply -1 x)", "(neg x)", HG_WHEN_NUM, "-1 * x = -x; NaN sign may differ"},
    {"(multiply x 2)", "(add x x)", HG_WHEN_NUM, "x * 2 = x + x: both are the exactly rounded 2x (and overflow alike)"},
    {"(divide x 1)", "x", HG_WHEN_FLOAT, "x / 1 = x exactly (integers: true division gives f64, so no match)"},
    {"(floor_divide x 1)", "x", HG_WHEN_INT, "x // 1 = x for integers"},
    {"(remainder x 1)", "0", HG_WHEN_INT, "x % 1 = 0 for integers (floats: -0.5 % 1 = 0.5)"},
    // involutions and idempotent unary ops
    {"(neg (neg x))", "x", HG_WHEN_NUM, "-(-x) = x (integers: -(-MIN) = MIN wraps back)"},
    {"(abs (abs x))", "(abs x)", HG_WHEN_NUM, "abs is idempotent (integers: abs(MIN) = MIN both times)"},
    {"(abs (neg x))", "(abs x)", HG_WHEN_SIGNED, "|-x| = |x| (signed integers: -MIN = MIN; not unsigned: -x wraps and abs keeps it)"},
    {"(relu (relu x))", "(relu x)", HG_WHEN_NUM, "relu is idempotent"},
    {"(relu (abs x))", "(abs x)", HG_WHEN_FLOAT, "|x| >= +0 for floats (not integers: abs(MIN) < 0)"},
    {"(sign (sign x))", "(sign x)", HG_WHEN_NUM, "sign is idempotent (-1, -0.0, 0, 1, NaN are fixed points)"},
    {"(floor (floor x))", "(floor x)", HG_WHEN_FLOAT, "floor is idempotent"},
    {"(ceil (ceil x))", "(ceil x)", HG_WHEN_FLOAT, "ceil is idempotent"},
    {"(round (round x))", "(round x)", HG_WHEN_FLOAT, "round is idempotent"},
    {"(trunc (trunc x))", "(trunc x)", HG_WHEN_FLOAT, "trunc is idempotent"},
    {"(floor x)", "x", HG_WHEN_INT, "floor of an integer is the integer"},
    {"(ceil x)", "x", HG_WHEN_INT, "ceil of an integer is the integer"},
    {"(round x)", "x", HG_WHEN_INT, "round of an integer is the integer"},
    {"(trunc x)", "x", HG_WHEN_INT, "trunc of an integer is the integer"},
    // min / max
    {"(maximum x x)", "x", HG_WHEN_ANY, "max(x, x) = x (NaN stays NaN, -0.0 stays -0.0)"},
    {"(minimum x x)", "x", HG_WHEN_ANY, "min(x, x) = x"},
    {"(maximum (maximum x y) y)", "(maximum x y)", HG_WHEN_ANY, "max is idempotent in its second operand (NaN propagates either way)"},
    {"(minimum (minimum x y) y)", "(minimum x y)", HG_WHEN_ANY, "min is idempotent in its second operand"},
    // bitwise / logical
    {"(bitwise_and x x)", "x", HG_WHEN_INT_BOOL, "x & x = x"},
    {"(bitwise_or x x)", "x", HG_WHEN_INT_BOOL, "x | x = x"},
    {"(bitwise_xor x x)", "0", HG_WHEN_INT_BOOL, "x ^ x = 0"},
    {"(bitwise_and x 0)", "0", HG_WHEN_INT, "x & 0 = 0"},
    {"(bitwise_or x 0)", "x", HG_WHEN_INT, "x | 0 = x"},
    {"(bitwise_xor x 0)", "x", HG_WHEN_INT, "x ^ 0 = x"},
    {"(bitwise_not (bitwise_not x))", "x", HG_WHEN_INT_BOOL, "~~x = x"},
    {"(logical_not (logical_not x))", "x", HG_WHEN_BOOL, "not not x = x for bool x"},
    {"(logical_not (equal x y))", "(not_equal x y)", HG_WHEN_ANY, "not (x == y) is x != y (also for NaN: both true)"},
    {"(logical_not (not_equal x y))", "(equal x y)", HG_WHEN_ANY, "not (x != y) is x == y"},
    {"(logical_and x x)", "(cast x)", HG_WHEN_ANY, "x and x = (x != 0) = bool(x) (NaN is nonzero both ways)"},
    {"(logical_or x x)", "(cast x)", HG_WHEN_ANY, "x or x = bool(x)"},
    // comparisons of a value with itself (integers and bool: no NaN)
    {"(equal x x)", "1", HG_WHEN_INT_BOOL, "x == x is true without NaN"},
    {"(not_equal x x)", "0", HG_WHEN_INT_BOOL, "x != x is false without NaN"},
    {"(less x x)", "0", HG_WHEN_INT_BOOL, "x < x is false"},
    {"(less_equal x x)", "1", HG_WHEN_INT_BOOL, "x <= x is true without NaN"},
    {"(greater x x)", "0", HG_WHEN_INT_BOOL, "x > x is false"},
    {"(greater_equal x x)", "1", HG_WHEN_INT_BOOL, "x >= x is true without NaN"},
    // selection and conversions
    {"(where z x x)", "x", HG_WHEN_ANY, "c ? x : x = x (broadcast back to the shape of the where)"},
    {"(cast x)", "x", HG_WHEN_ANY, "a cast to x's own dtype is x (the rewrite must keep the dtype)"},
    {"(cast (cast x))", "(cast x)", HG_WHEN_LOSSLESS, "an exact inner conversion changes no value, so converting once from x gives the same result (i32->i64->i32 = x, f16->f32->i32 = f16->i32); to an integer only when both conversions are of one kind (int->int wraps, float->int saturates) or x fits the target"},
    // powers (after the conversions so that earlier rule numbers stay)
    {"(power x 1)", "x", HG_WHEN_NUM, "x ** 1 = x: floats compute exp(1 * log|x|) in f64, within a few f64 ULPs of x, with x's sign (-0.0, inf and NaN kept), so narrower floats round back to x, and f64 takes the exact repeated-squaring path; integers multiply once"},
};
// clang-format on

const char* hg_rule_when_name(hg_rule_when w) {
    static const char* const names[HG_WHEN_COUNT] = {"any", "int+float", "int", "float", "bool",
                                                     "int+bool", "lossless inner cast", "signed int+float"};
    return (unsigned)w < HG_WHEN_COUNT ? names[w] : "?";
}

// ---- parsing (once) ----

#define POOL_MAX 1024
static hg_pat g_pool[POOL_MAX];
static int32_t g_npool;
static int32_t g_roots[HG_RULE_COUNT][2];
static int g_parse_ok;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int32_t parse(const char** sp) {
    const char* s = *sp;
    while (*s == ' ') s++;
    if (g_npool >= POOL_MAX) return -1;
    int32_t id = g_npool++;
    hg_pat* p = &g_pool[id];
    memset(p, 0, sizeof *p);
    p->kid[0] = p->kid[1] = p->kid[2] = -1;
    if (*s == '(') {
        s++;
        char name[32];
        size_t k = 0;
        while (*s && *s != ' ' && *s != ')' && k + 1 < sizeof name) name[k++] = *s++;
        name[k] = 0;
        p->kind = HG_PAT_KIND_COUNT;
        if (!strcmp(name, "where")) p->kind = HG_PAT_WHERE;
        else if (!strcmp(name, "cast")) p->kind = HG_PAT_CAST;
        for (int op = 0; op < HG_UNARY_COUNT && p->kind == HG_PAT_KIND_COUNT; op++)
            if (!strcmp(name, hg_unary_op_name((hg_unary_op)op))) { p->kind = HG_PAT_UNARY; p->op = op; }
        for (int op = 0; op < HG_BINARY_COUNT && p->kind == HG_PAT_KIND_COUNT; op++)
            if (!strcmp(name, hg_binary_op_name((hg_binary_op)op))) { p->kind = HG_PAT_BINARY; p->op = op; }
        if (p->kind == HG_PAT_KIND_COUNT) return -1;
        int want = p->kind == HG_PAT_UNARY || p->kind == HG_PAT_CAST ? 1 : p->kind == HG_PAT_BINARY ? 2 : 3;
        for (int i = 0; i < want; i++) {
            int32_t kid = parse(&s);
            if (kid < 0) return -1;
            g_pool[id].kid[i] = kid;
        }
        g_pool[id].nkids = want;
        while (*s == ' ') s++;
        if (*s != ')') return -1;
        s++;
    } else if (*s == 'x' || *s == 'y' || *s == 'z') {
        p->kind = HG_PAT_VAR;
        p->op = *s == 'x' ? 0 : *s == 'y' ? 1 : 2;
        s++;
    } else {
        char* end;
        p->kind = HG_PAT_CONST;
        p->value = strtod(s, &end);
        if (end == s) return -1;
        s = end;
    }
    *sp = s;
    return id;
}

static void parse_all(void) {
    g_parse_ok = 1;
    for (int r = 0; r < HG_RULE_COUNT; r++)
        for (int w = 0; w < 2; w++) {
            const char* s = w ? hg_rule_table[r].rewrite : hg_rule_table[r].pattern;
            int32_t root = parse(&s);
            while (root >= 0 && *s == ' ') s++;
            if (root < 0 || *s) { g_parse_ok = 0; root = -1; }
            g_roots[r][w] = root;
        }
}

hg_status hg_rule_parsed(int rule, int which, const hg_pat** pool, int32_t* root) {
    pthread_once(&g_once, parse_all);
    if (rule < 0 || rule >= HG_RULE_COUNT || which < 0 || which > 1 || g_roots[rule][which] < 0)
        return hg_error(HG_ERR_INTERNAL, "graph rules: rule %d's %s does not parse", rule,
                        which ? "rewrite" : "pattern");
    *pool = g_pool;
    *root = g_roots[rule][which];
    return HG_OK;
}

// ---- matching ----

static int mantissa_bits(hg_dtype t) {
    switch (t) {
    case HG_DTYPE_F16: return 11;
    case HG_DTYPE_BF16: return 8;
    case HG_DTYPE_F32: return 24;
    case HG_DTYPE_F64: return 53;
    default: return 0;
    }
}

int hg_dtype_lossless(hg_dtype from, hg_dtype to) {
    if (from == to || from == HG_DTYPE_BOOL) return 1;
    if (to == HG_DTYPE_BOOL) return 0;
    int fi = hg_dtype_is_int((int)from), ti = hg_dtype_is_int((int)to);
    unsigned fb = hg_dtype_bits((int)from), tb = hg_dtype_bits((int)to);
    int fs = hg_dtype_is_signed_int((int)from), ts = hg_dtype_is_signed_int((int)to);
    if (fi && ti) {
        if (fs == ts) return tb >= fb;
        return !fs && ts && tb > fb;   // unsigned -> wider signed
    }
    if (fi) return (int)(fs ? fb - 1 : fb) <= mantissa_bits(to);
    if (ti) return 0;
    // float -> float: f16 and bf16 widen to f32/f64, f32 to f64.
    if (to == HG_DTYPE_F64) return 1;
    if (to == HG_DTYPE_F32) return from == HG_DTYPE_F16 || from == HG_DTYPE_BF16;
    return 0;
}

static int int_in_range(hg_dtype t, int64_t v) {
    switch (t) {
    case HG_DTYPE_BOOL: return v == 0 || v == 1;
    case HG_DTYPE_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case HG_DTYPE_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case HG_DTYPE_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case HG_DTYPE_U8: return v >= 0 && v <= UINT8_MAX;
    case HG_DTYPE_U16: return v >= 0 && v <= UINT16_MAX;
    case HG_DTYPE_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    case HG_DTYPE_U64: return v >= 0;
    default: return 1;
    }
}

// 1 if constant node n's value in its dtype is exactly c (conservative: 0 when unsure).
static int const_is(const hg_gnode* n, double c) {
    hg_scalar v = n->value;
    int fl = hg_dtype_is_float((int)n->dtype);
    if (fl) {
        double x = v.kind == HG_SCALAR_FLOAT ? v.f : (double)v.i;
        return x == c && signbit(x) == signbit(c);
    }
    if (signbit(c) || c != floor(c)) return 0;
    int64_t want = (int64_t)c;
    if (v.kind == HG_SCALAR_FLOAT) {
        if (v.f != c) return 0;
    } else if (v.i != want) {
        return 0;
    }
    return int_in_range(n->dtype, want);
}

// Strips broadcasts of a constant: the 0-d constant node, or NULL.
static const hg_gnode* const_of(const hg_gir* g, int32_t id) {
    while (g->nodes[id].kind == HG_GOP_EXPAND) id = g->nodes[id].in[0];
    return g->nodes[id].kind == HG_GOP_CONST ? &g->nodes[id] : NULL;
}

static int match(const hg_gir* g, int32_t p, int32_t id, int32_t* caps) {
    const hg_pat* pt = &g_pool[p];
    const hg_gnode* n = &g->nodes[id];
    switch (pt->kind) {
    case HG_PAT_VAR:
        if (caps[pt->op] < 0) caps[pt->op] = id;
        return caps[pt->op] == id;
    case HG_PAT_CONST: {
        const hg_gnode* c = const_of(g, id);
        return c && const_is(c, pt->value);
    }
    case HG_PAT_UNARY:
        if (n->kind != HG_GOP_UNARY || n->op != pt->op) return 0;
        break;
    case HG_PAT_BINARY:
        if (n->kind != HG_GOP_BINARY || n->op != pt->op) return 0;
        break;
    case HG_PAT_WHERE:
        if (n->kind != HG_GOP_WHERE) return 0;
        break;
    case HG_PAT_CAST:
        if (n->kind != HG_GOP_CAST) return 0;
        break;
    default:
        return 0;
    }
    for (int i = 0; i < pt->nkids; i++)
        if (!match(g, pt->kid[i], n->in[i], caps)) return 0;
    return 1;
}

// The conditions that depend on one dtype only (not HG_WHEN_LOSSLESS).
static int when_dtype(hg_rule_when w, int t) {
    switch (w) {
    case HG_WHEN_ANY: return 1;
    case HG_WHEN_NUM: return t != HG_DTYPE_BOOL;
    case HG_WHEN_INT: return hg_dtype_is_int(t);
    case HG_WHEN_FLOAT: return hg_dtype_is_float(t);
    case HG_WHEN_BOOL: return t == HG_DTYPE_BOOL;
    case HG_WHEN_INT_BOOL: return t == HG_DTYPE_BOOL || hg_dtype_is_int(t);
    case HG_WHEN_SIGNED: return hg_dtype_is_signed_int(t) || hg_dtype_is_float(t);
    default: return 0;
    }
}

static int when_holds(const hg_gir* g, hg_rule_when w, int32_t root, const int32_t* caps) {
    if (caps[0] < 0) return 0;
    int t = g->nodes[caps[0]].dtype;
    switch (w) {
    case HG_WHEN_LOSSLESS: {
        int32_t inner = g->nodes[root].in[0];
        hg_dtype mid = g->nodes[inner].dtype, to = g->nodes[root].dtype;
        if (g->nodes[inner].kind != HG_GOP_CAST || !hg_dtype_lossless((hg_dtype)t, mid)) return 0;
        // Integer targets: int -> int wraps but float -> int saturates, so the two paths
        // agree only when both conversions are of one kind, or x's values all fit the target.
        if (!hg_dtype_is_int((int)to)) return 1;
        return hg_dtype_is_float(t) == hg_dtype_is_float((int)mid) || hg_dtype_lossless((hg_dtype)t, to);
    }
    default: break;
    }
    return when_dtype(w, t);
}

typedef struct build_ctx {
    hg_gir* g;
    hg_rule_mk mk;
    void* ctx;
    hg_dtype root_dtype;
    const int32_t* caps;
} build_ctx;

// Builds the rewrite template p; -1 on failure, -3 when the template does not type-check for
// these operands (the rule then does not apply).
static int32_t build(build_ctx* b, int32_t p) {
    const hg_pat* pt = &g_pool[p];
    int32_t kids[3] = {-1, -1, -1};
    for (int i = 0; i < pt->nkids; i++)
        if ((kids[i] = build(b, pt->kid[i])) < 0) return kids[i];
    hg_gir* g = b->g;
    hg_gnode n;
    switch (pt->kind) {
    case HG_PAT_VAR:
        return b->caps[pt->op];
    case HG_PAT_CONST:
        n = hg_gnode_make(HG_GOP_CONST, 0, b->root_dtype, 0, NULL);
        if (hg_dtype_is_float((int)b->root_dtype)) n.value = hg_scalar_f(pt->value);
        else if (b->root_dtype == HG_DTYPE_BOOL) n.value = hg_scalar_b(pt->value != 0);
        else n.value = hg_scalar_i((int64_t)pt->value);
        n.value.kind == HG_SCALAR_FLOAT ? (void)(n.value.i = 0) : (void)(n.value.f = 0);
        break;
    case HG_PAT_UNARY: {
        const hg_gnode* x = &g->nodes[kids[0]];
        hg_dtype rt;
        if (hg_ew_unary_dtype((hg_unary_op)pt->op, x->dtype, &rt)) return -3;
        n = hg_gnode_make(HG_GOP_UNARY, pt->op, rt, x->ndim, x->shape);
        break;
    }
    case HG_PAT_CAST: {
        const hg_gnode* x = &g->nodes[kids[0]];
        n = hg_gnode_make(HG_GOP_CAST, 0, b->root_dtype, x->ndim, x->shape);
        break;
    }
    case HG_PAT_BINARY: {
        const hg_gnode *x = &g->nodes[kids[0]], *y = &g->nodes[kids[1]];
        hg_dtype rt, ct;
        int32_t nd;
        int64_t sh[HG_MAX_DIMS];
        if (hg_ew_binary_dtype((hg_binary_op)pt->op, x->dtype, y->dtype, &rt, &ct) ||
            hg_broadcast_shapes(x->ndim, x->shape, y->ndim, y->shape, &nd, sh))
            return -3;
        n = hg_gnode_make(HG_GOP_BINARY, pt->op, rt, nd, sh);
        break;
    }
    default:
        return -3;   // no rule rewrites into a where
    }
    for (int i = 0; i < pt->nkids; i++) n.in[i] = kids[i];
    return b->mk(b->ctx, &n);
}

int32_t hg_rules_apply(hg_gir* g, int32_t id, hg_rule_mk mk, void* ctx, int* rule) {
    pthread_once(&g_once, parse_all);
    if (!g_parse_ok) {
        hg_error(HG_ERR_INTERNAL, "graph rules: the rule table does not parse");
        return -2;
    }
    int kind = g->nodes[id].kind;
    if (kind != HG_GOP_UNARY && kind != HG_GOP_BINARY && kind != HG_GOP_WHERE && kind != HG_GOP_CAST)
        return -1;
    for (int r = 0; r < HG_RULE_COUNT; r++) {
        int32_t caps[3] = {-1, -1, -1};
        if (!match(g, g_roots[r][0], id, caps) || !when_holds(g, hg_rule_table[r].when, id, caps))
            continue;
        // A constant rewrite is made in the matched node's dtype, which a mixed-dtype operation
        // may have promoted away from x's (i8 x times the weak scalar 0.0 is f64, and -0.0 for
        // x < 0, not 0): the condition must hold for that dtype too.
        if (g_pool[g_roots[r][1]].kind == HG_PAT_CONST &&
            !when_dtype(hg_rule_table[r].when, g->nodes[id].dtype))
            continue;
        // Work on a copy: mk may grow (move) the node array.
        hg_gnode root = g->nodes[id];
        build_ctx b = {g, mk, ctx, root.dtype, caps};
        int32_t res = build(&b, g_roots[r][1]);
        if (res == -3) continue;
        if (res < 0) return -2;
        hg_gnode rn = g->nodes[res];
        if (rn.dtype != root.dtype) continue;
        if (!hg_gir_same_shape(&rn, &root)) {
            if (!hg_shape_broadcasts_to(rn.ndim, rn.shape, root.ndim, root.shape)) continue;
            hg_gnode e = hg_gnode_make(HG_GOP_EXPAND, 0, root.dtype, root.ndim, root.shape);
            e.in[0] = res;
            if ((res = mk(ctx, &e)) < 0) return -2;
        }
        if (res == id) continue;
        *rule = r;
        return res;
    }
    return -1;
}
