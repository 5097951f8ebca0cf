// hg_scaled_dot_product_attention: the fused host kernel (ops/attention) and the decomposition
// (HOLOGRAM_COMPOSITE=decomp through hg_cop_mode_set) against a float64 reference, f32 and f64:
// several query blocks and threads, causal with more and fewer queries than keys, bool and
// float masks broadcast from fewer dims (rows and whole blocks attending nothing: zeros),
// grouped-query heads, strided and transposed operands, NaN rows, an explicit scale; and the
// refusals (each leaves out untouched). Runs on HG_TEST_BACKEND (the CUDA emulation: the
// decomposition) or CPU executors of 1 and 2 threads.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "composite/composite.h"
#include "hg_test.h"

static hg_executor g_ex;
static uint64_t g_rng = 0xa77e17ull;

static double urand(double lo, double hi) {
    return lo + (hi - lo) * (double)(hg_test_rand(&g_rng) >> 11) / 9007199254740992.0;
}

// A C-contiguous tensor of dt and shape holding v (doubles; bool: v != 0).
static hg_tensor make(hg_dtype dt, int32_t nd, const int64_t* shape, const double* v) {
    int64_t n = 1;
    for (int32_t d = 0; d < nd; d++) n *= shape[d];
    size_t es = dt == HG_DTYPE_F64 ? 8 : dt == HG_DTYPE_F32 ? 4 : 1;
    unsigned char* h = malloc((size_t)(n ? n : 1) * es);
    for (int64_t i = 0; i < n; i++) {
        if (dt == HG_DTYPE_F64) ((double*)h)[i] = v[i];
        else if (dt == HG_DTYPE_F32) ((float*)h)[i] = (float)v[i];
        else h[i] = v[i] != 0;
    }
    hg_buffer b;
    CHECK_OK(hg_buffer_create_ex(g_ex, dt, (size_t)n, HG_BUFFER_UNINITIALIZED, &b));
    if (n) CHECK_OK(hg_buffer_write(b, 0, h, (size_t)n));
    free(h);
    hg_tensor t;
    CHECK_OK(hg_tensor_from_buffer(b, nd, shape, &t));
    return t;
}

static double* read_all(const hg_tensor* t, int64_t n) {
    size_t es = t->dtype == HG_DTYPE_F64 ? 8 : 4;
    unsigned char* h = malloc((size_t)(n ? n : 1) * es);
    double* v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (n) CHECK_OK(hg_buffer_read(t->buffer, 0, h, (size_t)n));
    for (int64_t i = 0; i < n; i++)
        v[i] = es == 8 ? ((double*)h)[i] : (double)((float*)h)[i];
    free(h);
    return v;
}

// One problem: B batches of H query heads (Hk key heads), L queries, S keys.
typedef struct prob {
    int64_t B, H, Hk, L, S, E, Ev;
    int causal;
    int mask_kind;      // 0 none, 1 bool (L, S), 2 float (B, 1, L, S)
    double scale;       // NaN: 1 / sqrt(E)
    int q_transposed;   // q stored (B, L, H, E), passed as a permuted view
    int nan_row;        // q[0, 0, 1, 0] = NaN
} prob;

// Query i's scaled, masked scores against the S keys kb into s; *mx their max; whether any is
// NaN.
static int score_row(const prob* p, const double* qi, const double* kb, const double* m,
                     int64_t b, int64_t i, double sc, double* s, double* mx) {
    int nan = 0;
    *mx = -INFINITY;
    for (int64_t j = 0; j < p->S; j++) {
        double d = 0;
        for (int64_t e = 0; e < p->E; e++) d += qi[e] * kb[j * p->E + e];
        d *= sc;
        if (p->mask_kind == 1 && !m[i * p->S + j]) d = -INFINITY;
        if (p->mask_kind == 2) d += m[(b * p->L + i) * p->S + j];
        if (p->causal && j > i) d = -INFINITY;
        s[j] = d;
        nan |= d != d;
        *mx = d > *mx ? d : *mx;
    }
    return nan;
}

// The float64 reference: out (B, H, L, Ev) and lse (B, H, L; NULL: not wanted).
static void reference(const prob* p, const double* q, const double* k, const double* v,
                      const double* m, double* out, double* lse) {
    double sc = isnan(p->scale) ? 1 / sqrt((double)p->E) : p->scale;
    double* s = malloc((size_t)(p->S ? p->S : 1) * sizeof *s);
    int64_t g = p->H / p->Hk;
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t h = 0; h < p->H; h++)
            for (int64_t i = 0; i < p->L; i++) {
                const double* qi = q + ((b * p->H + h) * p->L + i) * p->E;
                const double* kb = k + (b * p->Hk + h / g) * p->S * p->E;
                const double* vb = v + (b * p->Hk + h / g) * p->S * p->Ev;
                double mx, z = 0;
                int nan = score_row(p, qi, kb, m, b, i, sc, s, &mx);
                for (int64_t j = 0; j < p->S; j++) z += exp(s[j] - mx);
                if (lse)
                    lse[(b * p->H + h) * p->L + i] = nan ? NAN : mx == -INFINITY ? 0 : mx + log(z);
                double* o = out + ((b * p->H + h) * p->L + i) * p->Ev;
                for (int64_t e = 0; e < p->Ev; e++) {
                    double a = 0;
                    for (int64_t j = 0; j < p->S && mx > -INFINITY; j++)
                        a += exp(s[j] - mx) / z * vb[j * p->Ev + e];
                    o[e] = nan ? NAN : a;
                }
            }
    free(s);
}

// The float64 gradients from the definition: P = softmax of the masked scores (0 for a query
// that attends nothing; NaN rows NaN), dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)),
// dQ = dS K scale, dK = dS^T Q scale; grouped heads summed. out: the reference output.
static void reference_bw(const prob* p, const double* q, const double* k, const double* v,
                         const double* m, const double* go, const double* out, double* dq,
                         double* dk, double* dv) {
    double sc = isnan(p->scale) ? 1 / sqrt((double)p->E) : p->scale;
    double* s = malloc((size_t)(p->S ? p->S : 1) * sizeof *s);
    int64_t g = p->H / p->Hk;
    memset(dq, 0, (size_t)(p->B * p->H * p->L * p->E + 1) * sizeof *dq);
    memset(dk, 0, (size_t)(p->B * p->Hk * p->S * p->E + 1) * sizeof *dk);
    memset(dv, 0, (size_t)(p->B * p->Hk * p->S * p->Ev + 1) * sizeof *dv);
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t h = 0; h < p->H; h++)
            for (int64_t i = 0; i < p->L; i++) {
                int64_t row = (b * p->H + h) * p->L + i, kv = b * p->Hk + h / g;
                const double *qi = q + row * p->E, *gi = go + row * p->Ev, *oi = out + row * p->Ev;
                double mx, z = 0;
                int nan = score_row(p, qi, k + kv * p->S * p->E, m, b, i, sc, s, &mx);
                for (int64_t j = 0; j < p->S; j++) z += exp(s[j] - mx);
                double dd = 0;
                for (int64_t e = 0; e < p->Ev; e++) dd += gi[e] * oi[e];
                for (int64_t j = 0; j < p->S; j++) {
                    double pj = nan ? NAN : mx == -INFINITY ? 0 : exp(s[j] - mx) / z;
                    double dp = 0;
                    for (int64_t e = 0; e < p->Ev; e++) {
                        dp += gi[e] * v[(kv * p->S + j) * p->Ev + e];
                        dv[(kv * p->S + j) * p->Ev + e] += pj * gi[e];
                    }
                    double ds = pj * (dp - dd) * sc;
                    for (int64_t e = 0; e < p->E; e++) {
                        dq[row * p->E + e] += ds * k[(kv * p->S + j) * p->E + e];
                        dk[(kv * p->S + j) * p->E + e] += ds * qi[e];
                    }
                }
            }
    free(s);
}

// Elements of got (hologram) within tol of want (NaN where want is); prints the first misses.
static int count_bad(const double* got, const double* want, int64_t n, double tol,
                     const char* what, const char* name) {
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int ok = isnan(want[i]) ? isnan(got[i]) : fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i]));
        if (!ok && bad++ < 3)
            fprintf(stderr, "  %s: %s[%lld] = %.9g, want %.9g\n", what, name, (long long)i,
                    got[i], want[i]);
    }
    return bad;
}

static double* rand_vals(int64_t n, double lo, double hi) {
    double* v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = urand(lo, hi);
    return v;
}

static void run_prob(const prob* p, hg_dtype dt, const char* what) {
    int64_t nq = p->B * p->H * p->L * p->E, nk = p->B * p->Hk * p->S * p->E;
    int64_t nv = p->B * p->Hk * p->S * p->Ev, no = p->B * p->H * p->L * p->Ev;
    double *q = rand_vals(nq, -1.5, 1.5), *k = rand_vals(nk, -1.5, 1.5);
    double* v = rand_vals(nv, -2, 2);
    if (p->nan_row && p->L > 1) q[(0 * p->L + 1) * p->E] = NAN;
    double* m = NULL;
    hg_tensor mt = {0};
    if (p->mask_kind == 1) {   // (L, S): random, query 2 attends nothing, rows >= 64 neither
        m = malloc((size_t)(p->L * p->S + 1) * sizeof *m);
        for (int64_t i = 0; i < p->L; i++)
            for (int64_t j = 0; j < p->S; j++)
                m[i * p->S + j] = i == 2 || (i >= 64 && i < 70) ? 0 : urand(0, 1) < 0.7;
        mt = make(HG_DTYPE_BOOL, 2, (int64_t[]){p->L, p->S}, m);
    } else if (p->mask_kind == 2) {   // (B, 1, L, S): additive, some -inf, row 3 all -inf
        m = malloc((size_t)(p->B * p->L * p->S + 1) * sizeof *m);
        for (int64_t i = 0; i < p->B * p->L * p->S; i++)
            m[i] = (i / p->S) % p->L == 3 || urand(0, 1) < 0.2 ? -INFINITY : urand(-1, 1);
        mt = make(dt, 4, (int64_t[]){p->B, 1, p->L, p->S}, m);
    }
    int64_t nl = p->B * p->H * p->L;
    double* want = malloc((size_t)(no ? no : 1) * sizeof *want);
    double* want_lse = malloc((size_t)(nl ? nl : 1) * sizeof *want_lse);
    reference(p, q, k, v, m, want, want_lse);
    double* go = rand_vals(no, -1, 1);
    double* want_dq = malloc((size_t)(nq + 1) * sizeof *want_dq);
    double* want_dk = malloc((size_t)(nk + 1) * sizeof *want_dk);
    double* want_dv = malloc((size_t)(nv + 1) * sizeof *want_dv);
    reference_bw(p, q, k, v, m, go, want, want_dq, want_dk, want_dv);
    hg_tensor qt, qs;
    if (p->q_transposed) {   // (B, L, H, E) memory, the (B, H, L, E) view
        double* qp = malloc((size_t)(nq ? nq : 1) * sizeof *qp);
        for (int64_t b = 0; b < p->B; b++)
            for (int64_t h = 0; h < p->H; h++)
                for (int64_t i = 0; i < p->L; i++)
                    for (int64_t e = 0; e < p->E; e++)
                        qp[((b * p->L + i) * p->H + h) * p->E + e] =
                            q[((b * p->H + h) * p->L + i) * p->E + e];
        qs = make(dt, 4, (int64_t[]){p->B, p->L, p->H, p->E}, qp);
        CHECK_OK(hg_tensor_permute(&qs, (int32_t[]){0, 2, 1, 3}, &qt));
        free(qp);
    } else {
        qs = qt = make(dt, 4, (int64_t[]){p->B, p->H, p->L, p->E}, q);
    }
    hg_tensor kt = make(dt, 4, (int64_t[]){p->B, p->Hk, p->S, p->E}, k);
    hg_tensor vt = make(dt, 4, (int64_t[]){p->B, p->Hk, p->S, p->Ev}, v);
    double tol = dt == HG_DTYPE_F64 ? 1e-12 : 2e-5;
    for (int mode = 0; mode < 2; mode++) {
        hg_cop_mode_set(mode ? HG_COP_DECOMP : HG_COP_AUTO);
        hg_tensor out = {0};
        // the logsumexp into a (B, L, H) memory viewed as (B, H, L), as ATen lays it out
        double* nanv = malloc((size_t)(nl ? nl : 1) * sizeof *nanv);
        for (int64_t i = 0; i < nl; i++) nanv[i] = NAN;
        hg_tensor ls = make(dt, 3, (int64_t[]){p->B, p->L, p->H}, nanv), lt;
        CHECK_OK(hg_tensor_permute(&ls, (int32_t[]){0, 2, 1}, &lt));
        free(nanv);
        CHECK_OK(hg_scaled_dot_product_attention(&qt, &kt, &vt, p->mask_kind ? &mt : NULL,
                                                 p->causal, p->scale, &out, &lt));
        double* gl = read_all(&ls, nl);
        int lbad = 0;
        for (int64_t b = 0; b < p->B; b++)
            for (int64_t h = 0; h < p->H; h++)
                for (int64_t i = 0; i < p->L; i++) {
                    double g = gl[(b * p->L + i) * p->H + h], w = want_lse[(b * p->H + h) * p->L + i];
                    lbad += !(isnan(w) ? isnan(g) : fabs(g - w) <= tol * (1 + fabs(w)));
                }
        CHECK_MSG(lbad == 0, "%s %s %s: %d of %lld logsumexps wrong", what, hg_dtype_name(dt),
                  mode ? "decomp" : "auto", lbad, (long long)nl);
        free(gl);
        hg_buffer_destroy(ls.buffer);
        CHECK(out.ndim == 4 && out.shape[2] == p->L && out.shape[3] == p->Ev);
        double* got = read_all(&out, no);
        int bad = 0;
        for (int64_t i = 0; i < no; i++) {
            int ok = isnan(want[i]) ? isnan(got[i])
                                    : fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i]));
            if (!ok && bad++ < 3)
                fprintf(stderr, "  %s %s %s: out[%lld] = %.9g, want %.9g\n", what,
                        hg_dtype_name(dt), mode ? "decomp" : "auto", (long long)i, got[i],
                        want[i]);
        }
        CHECK_MSG(bad == 0, "%s %s %s: %d of %lld wrong", what, hg_dtype_name(dt),
                  mode ? "decomp" : "auto", bad, (long long)no);
        free(got);
        // The backward from this forward's out and lse (lse contiguous here: the forward's
        // ATen layout is checked above).
        double* lz = malloc((size_t)(nl ? nl : 1) * sizeof *lz);
        for (int64_t i = 0; i < nl; i++) lz[i] = NAN;
        hg_tensor lcs = make(dt, 3, (int64_t[]){p->B, p->H, p->L}, lz);
        free(lz);
        hg_tensor mt2 = {0};
        CHECK_OK(hg_scaled_dot_product_attention(&qt, &kt, &vt, p->mask_kind ? &mt : NULL,
                                                 p->causal, p->scale, &mt2, &lcs));
        hg_tensor got_t = make(dt, 4, (int64_t[]){p->B, p->H, p->L, p->Ev}, go);
        hg_tensor gq = {0}, gk = {0}, gv = {0};
        CHECK_OK(hg_scaled_dot_product_attention_backward(&got_t, &qt, &kt, &vt, &mt2, &lcs,
                                                          p->mask_kind ? &mt : NULL, p->causal,
                                                          p->scale, &gq, &gk, &gv));
        char w2[96];
        snprintf(w2, sizeof w2, "%s %s %s backward", what, hg_dtype_name(dt),
                 mode ? "decomp" : "auto");
        double btol = dt == HG_DTYPE_F64 ? 1e-11 : 1e-4;
        double* g1 = read_all(&gq, nq);
        double* g2 = read_all(&gk, nk);
        double* g3 = read_all(&gv, nv);
        int b1 = count_bad(g1, want_dq, nq, btol, w2, "grad_q");
        int b2 = count_bad(g2, want_dk, nk, btol, w2, "grad_k");
        int b3 = count_bad(g3, want_dv, nv, btol, w2, "grad_v");
        CHECK_MSG(b1 + b2 + b3 == 0, "%s: %d, %d, %d wrong", w2, b1, b2, b3);
        free(g1), free(g2), free(g3);
        hg_buffer_destroy(gq.buffer);
        hg_buffer_destroy(gk.buffer);
        hg_buffer_destroy(gv.buffer);
        hg_buffer_destroy(got_t.buffer);
        hg_buffer_destroy(mt2.buffer);
        hg_buffer_destroy(lcs.buffer);
        hg_buffer_destroy(out.buffer);
    }
    hg_cop_mode_set(HG_COP_AUTO);
    hg_buffer_destroy(qs.buffer);
    hg_buffer_destroy(kt.buffer);
    hg_buffer_destroy(vt.buffer);
    if (p->mask_kind) hg_buffer_destroy(mt.buffer);
    free(q), free(k), free(v), free(m), free(want), free(want_lse);
    free(go), free(want_dq), free(want_dk), free(want_dv);
}

static void test_values(void) {
    static const hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64};
    const prob ps[] = {
        {2, 3, 3, 70, 50, 16, 8, 0, 0, NAN, 0, 0},       // two query blocks
        {2, 3, 3, 70, 50, 16, 8, 1, 0, NAN, 0, 0},       // causal, L > S
        {1, 2, 2, 30, 90, 8, 8, 1, 0, NAN, 0, 0},        // causal, L < S
        {2, 2, 2, 72, 40, 16, 16, 0, 1, NAN, 0, 0},      // bool mask, dead row and block rows
        {2, 2, 2, 20, 33, 8, 4, 0, 2, NAN, 0, 0},        // float mask with -inf
        {1, 4, 2, 66, 31, 8, 8, 1, 0, NAN, 0, 0},        // grouped heads, causal
        {2, 4, 1, 9, 12, 4, 6, 0, 1, 0.5, 1, 0},         // transposed q, grouped, scale 0.5
        {1, 2, 2, 5, 7, 3, 2, 0, 0, NAN, 0, 1},          // a NaN query row
        {1, 1, 1, 4, 0, 3, 2, 0, 0, NAN, 0, 0},          // no keys: zeros
        {1, 1, 1, 3, 5, 0, 2, 0, 0, 1.0, 0, 0},          // E = 0: the mean of v
        {3, 8, 8, 128, 128, 64, 64, 1, 0, NAN, 0, 0},    // BERT / Llama-like, causal
    };
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
            char what[32];
            snprintf(what, sizeof what, "case %zu", i);
            run_prob(&ps[i], dts[d], what);
        }
}

// sum(go * attention(q, k, v)) through hologram's own forward (f64).
static double fd_loss(const prob* p, const double* q, const double* k, const double* v,
                      const hg_tensor* mask, const double* go) {
    hg_tensor qt = make(HG_DTYPE_F64, 4, (int64_t[]){p->B, p->H, p->L, p->E}, q);
    hg_tensor kt = make(HG_DTYPE_F64, 4, (int64_t[]){p->B, p->Hk, p->S, p->E}, k);
    hg_tensor vt = make(HG_DTYPE_F64, 4, (int64_t[]){p->B, p->Hk, p->S, p->Ev}, v);
    hg_tensor out = {0};
    CHECK_OK(hg_scaled_dot_product_attention(&qt, &kt, &vt, mask, p->causal, p->scale, &out,
                                             NULL));
    int64_t no = p->B * p->H * p->L * p->Ev;
    double* o = read_all(&out, no);
    double sum = 0;
    for (int64_t i = 0; i < no; i++) sum += go[i] * o[i];
    free(o);
    hg_buffer_destroy(qt.buffer), hg_buffer_destroy(kt.buffer), hg_buffer_destroy(vt.buffer);
    hg_buffer_destroy(out.buffer);
    return sum;
}

// The backward against central differences of the forward (f64, fused kernel and
// decomposition): grouped heads, a bool mask with a query attending nothing, causal; checks
// the gradient formula itself, not only its implementations against one reference.
static void test_finite_differences(void) {
    for (int variant = 0; variant < 2; variant++)
        for (int mode = 0; mode < 2; mode++) {
            prob p = {1, 2, 1, 5, 6, 3, 2, variant, variant ? 0 : 1, NAN, 0, 0};
            hg_cop_mode_set(mode ? HG_COP_DECOMP : HG_COP_AUTO);
            int64_t nq = p.H * p.L * p.E, nk = p.S * p.E, nv = p.S * p.Ev, no = p.H * p.L * p.Ev;
            double *q = rand_vals(nq, -1, 1), *k = rand_vals(nk, -1, 1), *v = rand_vals(nv, -1, 1);
            double* go = rand_vals(no, -1, 1);
            double m[30];
            for (int i = 0; i < 30; i++) m[i] = i / 6 == 2 ? 0 : urand(0, 1) < 0.6;
            hg_tensor mt = make(HG_DTYPE_BOOL, 2, (int64_t[]){p.L, p.S}, m);
            const hg_tensor* mp = p.mask_kind ? &mt : NULL;
            hg_tensor qt = make(HG_DTYPE_F64, 4, (int64_t[]){1, p.H, p.L, p.E}, q);
            hg_tensor kt = make(HG_DTYPE_F64, 4, (int64_t[]){1, p.Hk, p.S, p.E}, k);
            hg_tensor vt = make(HG_DTYPE_F64, 4, (int64_t[]){1, p.Hk, p.S, p.Ev}, v);
            hg_tensor gt = make(HG_DTYPE_F64, 4, (int64_t[]){1, p.H, p.L, p.Ev}, go);
            double zl[10] = {0};
            hg_tensor lse = make(HG_DTYPE_F64, 3, (int64_t[]){1, p.H, p.L}, zl), out = {0};
            CHECK_OK(hg_scaled_dot_product_attention(&qt, &kt, &vt, mp, p.causal, p.scale, &out,
                                                     &lse));
            hg_tensor gq = {0}, gk = {0}, gv = {0};
            CHECK_OK(hg_scaled_dot_product_attention_backward(&gt, &qt, &kt, &vt, &out, &lse, mp,
                                                              p.causal, p.scale, &gq, &gk, &gv));
            double* an[3] = {read_all(&gq, nq), read_all(&gk, nk), read_all(&gv, nv)};
            double* xs[3] = {q, k, v};
            int64_t ns[3] = {nq, nk, nv};
            int bad = 0;
            for (int w = 0; w < 3; w++)
                for (int64_t i = 0; i < ns[w]; i++) {
                    double x0 = xs[w][i], h = 1e-5;
                    xs[w][i] = x0 + h;
                    double up = fd_loss(&p, q, k, v, mp, go);
                    xs[w][i] = x0 - h;
                    double dn = fd_loss(&p, q, k, v, mp, go);
                    xs[w][i] = x0;
                    double num = (up - dn) / (2 * h);
                    if (fabs(num - an[w][i]) > 1e-7 * (1 + fabs(num)) && bad++ < 3)
                        fprintf(stderr, "  finite differences (%s, %s): input %d[%lld]: %.10g, "
                                "numerical %.10g\n", variant ? "causal" : "mask",
                                mode ? "decomp" : "auto", w, (long long)i, an[w][i], num);
                }
            CHECK_MSG(bad == 0, "finite differences (%s, %s): %d gradients off",
                      variant ? "causal" : "mask", mode ? "decomp" : "auto", bad);
            for (int w = 0; w < 3; w++) free(an[w]);
            hg_tensor ts[9] = {mt, qt, kt, vt, gt, lse, out, gq, gk};
            for (int i = 0; i < 9; i++) hg_buffer_destroy(ts[i].buffer);
            hg_buffer_destroy(gv.buffer);
            free(q), free(k), free(v), free(go);
        }
    hg_cop_mode_set(HG_COP_AUTO);
}

// A q whose last dim is strided (not the fused kernel's layout) and a k read through a slice:
// the decomposition in both modes, same values.
static void test_strided_last_dim(void) {
    prob p = {1, 2, 2, 6, 5, 4, 3, 0, 0, NAN, 0, 0};
    int64_t nq = 2 * 6 * 4;
    double* q = rand_vals(nq, -1, 1);
    hg_tensor qs = make(HG_DTYPE_F32, 4, (int64_t[]){1, 2, 4, 6}, q);   // (B, H, E, L) memory
    hg_tensor qt;
    CHECK_OK(hg_tensor_permute(&qs, (int32_t[]){0, 1, 3, 2}, &qt));
    double* qc = malloc((size_t)nq * sizeof *qc);   // the same values, C order (B, H, L, E)
    for (int64_t h = 0; h < 2; h++)
        for (int64_t i = 0; i < 6; i++)
            for (int64_t e = 0; e < 4; e++) qc[(h * 6 + i) * 4 + e] = q[(h * 4 + e) * 6 + i];
    double *k = rand_vals(2 * 5 * 4, -1, 1), *v = rand_vals(2 * 5 * 3, -1, 1);
    double want[2 * 6 * 3];
    reference(&p, qc, k, v, NULL, want, NULL);
    hg_tensor kt = make(HG_DTYPE_F32, 4, (int64_t[]){1, 2, 5, 4}, k);
    hg_tensor vt = make(HG_DTYPE_F32, 4, (int64_t[]){1, 2, 5, 3}, v);
    hg_tensor out = {0};
    CHECK_OK(hg_scaled_dot_product_attention(&qt, &kt, &vt, NULL, 0, NAN, &out, NULL));
    double* got = read_all(&out, 36);
    for (int i = 0; i < 36; i++) CHECK(fabs(got[i] - want[i]) <= 2e-5 * (1 + fabs(want[i])));
    free(got), free(q), free(qc), free(k), free(v);
    hg_buffer_destroy(out.buffer);
    hg_buffer_destroy(qs.buffer);
    hg_buffer_destroy(kt.buffer);
    hg_buffer_destroy(vt.buffer);
}

// Refusals name what was wrong and leave a given out untouched.
static void test_errors(void) {
    double z[64] = {0};
    hg_tensor q = make(HG_DTYPE_F32, 3, (int64_t[]){2, 4, 3}, z);
    hg_tensor k = make(HG_DTYPE_F32, 3, (int64_t[]){2, 5, 3}, z);
    hg_tensor v = make(HG_DTYPE_F32, 3, (int64_t[]){2, 5, 2}, z);
    hg_tensor k3 = make(HG_DTYPE_F32, 3, (int64_t[]){3, 5, 3}, z);
    hg_tensor kE = make(HG_DTYPE_F32, 3, (int64_t[]){2, 5, 4}, z);
    hg_tensor vS = make(HG_DTYPE_F32, 3, (int64_t[]){2, 6, 2}, z);
    hg_tensor kd = make(HG_DTYPE_F64, 3, (int64_t[]){2, 5, 3}, z);
    hg_tensor mb = make(HG_DTYPE_BOOL, 2, (int64_t[]){4, 5}, z);
    hg_tensor mbad = make(HG_DTYPE_BOOL, 2, (int64_t[]){4, 6}, z);
    hg_tensor mi;
    {
        hg_buffer b;
        CHECK_OK(hg_buffer_create_ex(g_ex, HG_DTYPE_I32, 20, 0, &b));
        CHECK_OK(hg_tensor_from_buffer(b, 2, (int64_t[]){4, 5}, &mi));
    }
    double ones[32];
    for (int i = 0; i < 32; i++) ones[i] = 7;
    hg_tensor out = make(HG_DTYPE_F32, 3, (int64_t[]){2, 4, 2}, ones);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k, &v, &mb, 1, NAN, &out, NULL),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k, &v, &mi, 0, NAN, &out, NULL),
                 HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k, &v, &mbad, 0, NAN, &out, NULL),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k3, &v, NULL, 0, NAN, &out, NULL),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &kE, &v, NULL, 0, NAN, &out, NULL),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k, &vS, NULL, 0, NAN, &out, NULL),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &kd, &v, NULL, 0, NAN, &out, NULL),
                 HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k, &v, NULL, 0, INFINITY, &out, NULL),
                 HG_ERR_INVALID_ARGUMENT);
    hg_tensor lbad = make(HG_DTYPE_F64, 2, (int64_t[]){2, 4}, z);   // f64 for f32 q
    hg_tensor lshape = make(HG_DTYPE_F32, 2, (int64_t[]){2, 5}, z);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k, &v, NULL, 0, NAN, &out, &lbad),
                 HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k, &v, NULL, 0, NAN, &out, &lshape),
                 HG_ERR_SIZE_MISMATCH);
    hg_tensor lover;   // the logsumexp over out's memory
    CHECK_OK(hg_tensor_view(out.buffer, 2, (int64_t[]){2, 4}, NULL, 0, &lover));
    CHECK_STATUS(hg_scaled_dot_product_attention(&q, &k, &v, NULL, 0, NAN, &out, &lover),
                 HG_ERR_INVALID_ARGUMENT);
    hg_buffer_destroy(lbad.buffer);
    hg_buffer_destroy(lshape.buffer);
    CHECK_STATUS(hg_scaled_dot_product_attention(NULL, &k, &v, NULL, 0, NAN, &out, NULL),
                 HG_ERR_NULL_POINTER);
    const char* msg = hg_last_error();
    CHECK(msg && strstr(msg, "'q'"));
    double* o = read_all(&out, 16);
    for (int i = 0; i < 16; i++) CHECK(o[i] == 7);
    free(o);
    // The backward's refusals leave existing gradients untouched and allocate nothing.
    hg_tensor go = make(HG_DTYPE_F32, 3, (int64_t[]){2, 4, 2}, z);
    hg_tensor gobad = make(HG_DTYPE_F32, 3, (int64_t[]){2, 4, 3}, z);
    hg_tensor lse = make(HG_DTYPE_F32, 2, (int64_t[]){2, 4}, z);
    hg_tensor lse64 = make(HG_DTYPE_F64, 2, (int64_t[]){2, 4}, z);
    hg_tensor gq = make(HG_DTYPE_F32, 3, (int64_t[]){2, 4, 3}, ones);
    hg_tensor gk = {0}, gv = {0};
    CHECK_STATUS(hg_scaled_dot_product_attention_backward(&gobad, &q, &k, &v, &out, &lse, NULL, 0,
                                                          NAN, &gq, &gk, &gv),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention_backward(&go, &q, &k, &v, &out, &lse64, NULL, 0,
                                                          NAN, &gq, &gk, &gv),
                 HG_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention_backward(&go, &q, &k, &v, &out, &lse, &mb, 1,
                                                          NAN, &gq, &gk, &gv),
                 HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_scaled_dot_product_attention_backward(&go, &q, &k3, &v, &out, &lse, NULL, 0,
                                                          NAN, &gq, &gk, &gv),
                 HG_ERR_SIZE_MISMATCH);
    CHECK_STATUS(hg_scaled_dot_product_attention_backward(&go, &q, &k, &v, &out, &lse, NULL, 0,
                                                          NAN, &gq, &gk, NULL),
                 HG_ERR_NULL_POINTER);
    msg = hg_last_error();
    CHECK(msg && strstr(msg, "'grad_v'"));
    hg_tensor gqbad = make(HG_DTYPE_F32, 3, (int64_t[]){2, 4, 2}, ones);   // v's last dim
    CHECK_STATUS(hg_scaled_dot_product_attention_backward(&go, &q, &k, &v, &out, &lse, NULL, 0,
                                                          NAN, &gqbad, &gk, &gv),
                 HG_ERR_SIZE_MISMATCH);
    CHECK(gk.buffer.handle == 0 && gv.buffer.handle == 0);
    o = read_all(&gq, 24);
    for (int i = 0; i < 24; i++) CHECK(o[i] == 7);
    free(o);
    hg_tensor bts[] = {go, gobad, lse, lse64, gq, gqbad};
    for (size_t i = 0; i < sizeof bts / sizeof bts[0]; i++) hg_buffer_destroy(bts[i].buffer);
    hg_tensor ts[] = {q, k, v, k3, kE, vS, kd, mb, mbad, mi, out};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) hg_buffer_destroy(ts[i].buffer);
}

static void run(int on_device) {
    test_finite_differences();
    (void)on_device;
    test_values();
    test_strided_last_dim();
    test_errors();
}

int main(void) { return hg_test_run_executors("test_attention", &g_ex, run); }
