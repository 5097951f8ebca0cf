// Losses (hg_mse_loss, hg_cross_entropy, hg_binary_cross_entropy,
// hg_binary_cross_entropy_with_logits) against double-precision references written here from
// torch's definitions: random data of every float dtype, strided / negative-stride / broadcast
// views, extreme logits (+-1e4, -inf masked entries), ignore_index, probability targets, every
// reduction, big inputs that run on several threads; and every refused argument with its
// status and nothing written.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"

static hg_executor ex;
static uint64_t rng = 777;

static double urand(void) { return (double)(hg_test_rand(&rng) >> 11) * (1.0 / 9007199254740992.0); }

static size_t esize(hg_dtype dt) {
    switch (dt) {
    case HG_DTYPE_BOOL: case HG_DTYPE_I8: case HG_DTYPE_U8: return 1;
    case HG_DTYPE_I16: case HG_DTYPE_U16: case HG_DTYPE_F16: case HG_DTYPE_BF16: return 2;
    case HG_DTYPE_I32: case HG_DTYPE_U32: case HG_DTYPE_F32: return 4;
    default: return 8;
    }
}

static double get_d(hg_dtype dt, const void* base, int64_t idx) {
    const unsigned char* p = (const unsigned char*)base + idx * (int64_t)esize(dt);
    switch (dt) {
    case HG_DTYPE_F16: { uint16_t h; memcpy(&h, p, 2); return hg_f16_to_f32(h); }
    case HG_DTYPE_BF16: { uint16_t h; memcpy(&h, p, 2); return hg_bf16_to_f32(h); }
    case HG_DTYPE_F32: { float f; memcpy(&f, p, 4); return f; }
    case HG_DTYPE_F64: { double f; memcpy(&f, p, 8); return f; }
    case HG_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case HG_DTYPE_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case HG_DTYPE_U8: return *p;
    case HG_DTYPE_I8: return (int8_t)*p;
    case HG_DTYPE_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    default: return NAN;
    }
}

static void put_d(hg_dtype dt, void* base, int64_t idx, double v) {
    unsigned char* p = (unsigned char*)base + idx * (int64_t)esize(dt);
    switch (dt) {
    case HG_DTYPE_F16: { uint16_t h = hg_f32_to_f16((float)v); memcpy(p, &h, 2); break; }
    case HG_DTYPE_BF16: { uint16_t h = hg_f32_to_bf16((float)v); memcpy(p, &h, 2); break; }
    case HG_DTYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case HG_DTYPE_F64: memcpy(p, &v, 8); break;
    case HG_DTYPE_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case HG_DTYPE_I64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
    case HG_DTYPE_U8: *p = (uint8_t)v; break;
    case HG_DTYPE_I8: *p = (uint8_t)(int8_t)v; break;
    case HG_DTYPE_I16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    default: break;
    }
}

enum { L_CONTIG = 0, L_FLIP = 1, L_STEP = 2, L_TRANS = 4 };

typedef struct view {
    hg_buffer buf;
    hg_tensor t;
    void* host;
    int64_t count;
} view;

// A view of the given shape and layout whose elements are filled by gen(i) in C order.
static view make_view(hg_dtype dt, int32_t nd, const int64_t* shape, int layout,
                      double (*gen)(int64_t i, void* arg), void* arg) {
    view v;
    memset(&v, 0, sizeof v);
    int64_t sshape[HG_MAX_DIMS], sstr[HG_MAX_DIMS], step = (layout & L_STEP) ? 2 : 1, acc = 1;
    int32_t perm[HG_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++) { perm[d] = d; sshape[d] = shape[d] * step; }
    if ((layout & L_TRANS) && nd >= 2) { perm[0] = nd - 1; perm[nd - 1] = 0; }
    for (int32_t i = nd - 1; i >= 0; i--) {
        sstr[perm[i]] = acc;
        acc *= sshape[perm[i]] > 0 ? sshape[perm[i]] : 1;
    }
    v.count = acc + 2;
    CHECK_OK(hg_buffer_create(ex, dt, (size_t)v.count, &v.buf));
    CHECK_OK(hg_buffer_map(v.buf, &v.host));
    memset(v.host, 0x5a, (size_t)v.count * esize(dt));
    v.t.buffer = v.buf;
    v.t.dtype = dt;
    v.t.ndim = nd;
    v.t.offset = 1;
    for (int32_t d = 0; d < nd; d++) {
        v.t.shape[d] = shape[d];
        v.t.strides[d] = sstr[d] * step;
        if ((layout & L_FLIP) && shape[d] > 1) {
            v.t.offset += (shape[d] - 1) * v.t.strides[d];
            v.t.strides[d] = -v.t.strides[d];
        }
    }
    int64_t idx[HG_MAX_DIMS] = {0}, n = 1;
    for (int32_t d = 0; d < nd; d++) n *= shape[d];
    for (int64_t i = 0; i < n; i++) {
        int64_t e = v.t.offset;
        for (int32_t d = 0; d < nd; d++) e += idx[d] * v.t.strides[d];
        put_d(dt, v.host, e, gen(i, arg));
        for (int32_t d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    return v;
}

// Element at C-order position i of a view.
static double at(const view* v, int64_t i) {
    int64_t e = v->t.offset;
    for (int32_t d = v->t.ndim - 1; d >= 0; d--) {
        int64_t n = v->t.shape[d];
        e += (i % n) * v->t.strides[d];
        i /= n;
    }
    return get_d(v->t.dtype, v->host, e);
}
// Element of a view at a multi-index with numpy broadcasting from the right.
static double at_bcast(const view* v, int32_t nd, const int64_t* idx) {
    int64_t e = v->t.offset;
    int32_t lead = nd - v->t.ndim;
    for (int32_t d = 0; d < v->t.ndim; d++)
        if (v->t.shape[d] != 1) e += idx[d + lead] * v->t.strides[d];
    return get_d(v->t.dtype, v->host, e);
}

static double gen_normal(int64_t i, void* arg) {
    (void)i;
    double scale = arg ? *(double*)arg : 1.0;
    return scale * (urand() * 2 - 1);
}
static double gen_prob(int64_t i, void* arg) {
    (void)i; (void)arg;
    double u = urand();
    return u < 0.05 ? 0.0 : u > 0.95 ? 1.0 : urand();   // exact 0 and 1 hit the -100 clamp
}
static double gen_unit(int64_t i, void* arg) { (void)i; (void)arg; return urand(); }

static double rel_eps(hg_dtype dt) {
    switch (dt) {
    case HG_DTYPE_F16: return 1e-3;
    case HG_DTYPE_BF16: return 8e-3;
    case HG_DTYPE_F32: return 2e-6;
    default: return 1e-12;
    }
}

static int close_to(double got, double want, double tol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol;
}

// Checks out (reduction r over per-element references ref[n], mean divisor `count`).
static void check_out(const hg_tensor* out, const double* ref, const double* mag, int64_t n,
                      double count, hg_reduction r, hg_dtype rt, const char* what) {
    void* oh = NULL;
    CHECK_OK(hg_buffer_map(out->buffer, &oh));
    double eps = rel_eps(rt), teps = rel_eps(out->dtype);
    if (teps > eps) eps = teps;
    if (r == HG_REDUCTION_NONE) {
        int bad = 0;
        view ov = {out->buffer, *out, oh, 0};
        for (int64_t i = 0; i < n; i++) {
            double got = at(&ov, i);
            if (!close_to(got, ref[i], eps * (mag[i] + 1e-30) + 1e-300)) {
                if (bad++ < 3) fprintf(stderr, "  %s: element %lld: got %.12g want %.12g\n", what,
                                       (long long)i, got, ref[i]);
            }
        }
        CHECK_MSG(bad == 0, "%s: %d bad elements", what, bad);
        return;
    }
    CHECK(out->ndim == 0);
    double s = 0, m = 0;
    for (int64_t i = 0; i < n; i++) { s += ref[i]; m += mag[i]; }
    if (r == HG_REDUCTION_MEAN) { s /= count; m /= count; }
    double got = get_d(out->dtype, oh, out->offset);
    CHECK_MSG(close_to(got, s, eps * (m + 1e-30) + 1e-300), "%s: got %.12g want %.12g", what, got, s);
}

static hg_tensor fresh(void) {
    hg_tensor t;
    memset(&t, 0, sizeof t);
    return t;
}

// ---- mse ----------------------------------------------------------------------------------

static void test_mse(void) {
    hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    int64_t sp[3] = {4, 5, 6}, st[2] = {5, 6}, big[1] = {300000};
    for (int di = 0; di < 4; di++)
        for (int r = 0; r < HG_REDUCTION_COUNT; r++)
            for (int lay = 0; lay < 3; lay++) {
                view p = make_view(dts[di], 3, sp, lay == 1 ? L_FLIP : lay == 2 ? L_TRANS : 0,
                                   gen_normal, NULL);
                view t = make_view(dts[di], 2, st, lay == 2 ? L_STEP : 0, gen_normal, NULL);
                hg_tensor out = fresh();
                CHECK_OK(hg_mse_loss(&p.t, &t.t, (hg_reduction)r, &out));
                int64_t n = 120, idx[3] = {0};
                double ref[120], mag[120];
                for (int64_t i = 0; i < n; i++) {
                    idx[0] = i / 30; idx[1] = (i / 6) % 5; idx[2] = i % 6;
                    double d = at(&p, i) - at_bcast(&t, 3, idx);
                    ref[i] = d * d;
                    mag[i] = fabs(ref[i]) * 2;
                }
                if (out.buffer.handle)
                    check_out(&out, ref, mag, n, (double)n, (hg_reduction)r, dts[di], "mse");
                hg_buffer_destroy(out.buffer);
                hg_buffer_destroy(p.buf);
                hg_buffer_destroy(t.buf);
            }
    // Large (threads), NaN and inf propagate, empty mean is NaN.
    view p = make_view(HG_DTYPE_F32, 1, big, 0, gen_normal, NULL);
    view t = make_view(HG_DTYPE_F32, 1, big, L_FLIP, gen_normal, NULL);
    ((float*)p.host)[1 + 7] = NAN;
    double* ref = malloc(sizeof(double) * 300000);
    double* mag = malloc(sizeof(double) * 300000);
    for (int64_t i = 0; i < 300000; i++) {
        double d = at(&p, i) - at(&t, i);
        ref[i] = d * d;
        mag[i] = 2 * ref[i];
    }
    for (int r = 0; r < 3; r++) {
        hg_tensor out = fresh();
        CHECK_OK(hg_mse_loss(&p.t, &t.t, (hg_reduction)r, &out));
        check_out(&out, ref, mag, 300000, 300000, (hg_reduction)r, HG_DTYPE_F32, "mse big");
        hg_buffer_destroy(out.buffer);
    }
    ((float*)p.host)[1 + 7] = 1.0f;
    hg_tensor e0 = p.t, e1 = t.t, out = fresh();
    e0.shape[0] = 0;
    e1.shape[0] = 0;
    CHECK_OK(hg_mse_loss(&e0, &e1, HG_REDUCTION_MEAN, &out));
    void* oh = NULL;
    CHECK_OK(hg_buffer_map(out.buffer, &oh));
    CHECK(isnan(*(float*)oh));
    hg_buffer_destroy(out.buffer);
    out = fresh();
    CHECK_OK(hg_mse_loss(&e0, &e1, HG_REDUCTION_SUM, &out));
    CHECK_OK(hg_buffer_map(out.buffer, &oh));
    CHECK(*(float*)oh == 0.0f);
    hg_buffer_destroy(out.buffer);
    // In place: out is pred.
    int64_t s7[1] = {7};
    view a = make_view(HG_DTYPE_F64, 1, s7, L_FLIP, gen_normal, NULL);
    view b = make_view(HG_DTYPE_F64, 1, s7, 0, gen_normal, NULL);
    double want[7], wm[7];
    for (int i = 0; i < 7; i++) { double d = at(&a, i) - at(&b, i); want[i] = d * d; wm[i] = 2 * want[i]; }
    CHECK_OK(hg_mse_loss(&a.t, &b.t, HG_REDUCTION_NONE, &a.t));
    check_out(&a.t, want, wm, 7, 7, HG_REDUCTION_NONE, HG_DTYPE_F64, "mse in place");
    free(ref);
    free(mag);
    hg_buffer_destroy(p.buf); hg_buffer_destroy(t.buf);
    hg_buffer_destroy(a.buf); hg_buffer_destroy(b.buf);
}

// ---- cross entropy -------------------------------------------------------------------------

typedef struct ce_gen { double scale; double mask_frac; } ce_gen;
static double gen_logit(int64_t i, void* arg) {
    (void)i;
    ce_gen* g = arg;
    if (urand() < g->mask_frac) return -INFINITY;
    return g->scale * (urand() * 2 - 1);
}

// Reference per sample. logits x (class dim cdim), sample s in C order over the non-class dims.
static void ce_ref(const view* x, const view* t, int probs, int64_t ignore, double* ref,
                   double* mag, double* count) {
    int32_t nd = x->t.ndim, cdim = nd == 1 ? 0 : 1;
    int64_t C = x->t.shape[cdim], ns = 1;
    for (int32_t d = 0; d < nd; d++) if (d != cdim) ns *= x->t.shape[d];
    *count = 0;
    for (int64_t s = 0; s < ns; s++) {
        // Multi-index of sample s: (n, d1, ...) -> logits index with class k at cdim.
        int64_t sidx[HG_MAX_DIMS], rem = s;
        for (int32_t d = nd - 1; d >= 0; d--) {
            if (d == cdim) continue;
            sidx[d] = rem % x->t.shape[d];
            rem /= x->t.shape[d];
        }
        double xs[64], m = -INFINITY;
        for (int64_t k = 0; k < C; k++) {
            sidx[cdim] = k;
            int64_t e = x->t.offset;
            for (int32_t d = 0; d < nd; d++) e += sidx[d] * x->t.strides[d];
            xs[k] = get_d(x->t.dtype, x->host, e);
            if (xs[k] > m) m = xs[k];
        }
        double se = 0;
        for (int64_t k = 0; k < C; k++) se += exp(xs[k] - m);
        double lse = m + log(se);
        if (!probs) {
            double tv = at(t, s);
            if ((int64_t)tv == ignore) { ref[s] = 0; mag[s] = 0; continue; }
            ref[s] = lse - xs[(int64_t)tv];
            mag[s] = fabs(ref[s]) + 1.0;
            *count += 1;
        } else {
            double l = 0, mg = 0;
            for (int64_t k = 0; k < C; k++) {
                sidx[cdim] = k;
                int64_t e = t->t.offset;
                for (int32_t d = 0; d < nd; d++) e += sidx[d] * t->t.strides[d];
                double tk = get_d(t->t.dtype, t->host, e);
                l += tk * (lse - xs[k]);
                mg += fabs(tk * (lse - xs[k]));
            }
            ref[s] = l;
            mag[s] = mg + 1.0;
            *count += 1;
        }
    }
}

typedef struct idx_gen { int64_t C; int64_t ignore; double ignore_frac; } idx_gen;
static double gen_index(int64_t i, void* arg) {
    (void)i;
    idx_gen* g = arg;
    if (urand() < g->ignore_frac) return (double)g->ignore;
    return (double)(hg_test_rand(&rng) % (uint64_t)g->C);
}

static void test_cross_entropy(void) {
    struct { int32_t nd; int64_t shape[4]; } shapes[] = {
        {2, {9, 7}}, {1, {11}}, {3, {3, 5, 4}}, {4, {2, 6, 3, 2}}, {2, {0, 5}},
    };
    hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    hg_dtype tdts[] = {HG_DTYPE_I64, HG_DTYPE_I32, HG_DTYPE_I8, HG_DTYPE_I16};
    ce_gen gens[] = {{3.0, 0.0}, {1e4, 0.0}, {5.0, 0.3}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int di = 0; di < 4; di++)
            for (int gi = 0; gi < 3; gi++)
                for (int probs = 0; probs < 2; probs++)
                    for (int r = 0; r < HG_REDUCTION_COUNT; r++) {
                        int32_t nd = shapes[si].nd;
                        const int64_t* sh = shapes[si].shape;
                        // Losses ~1e4 summed over samples overflow an f16 result.
                        if (dts[di] == HG_DTYPE_F16 && gi == 1) continue;
                        view x = make_view(dts[di], nd, sh, (int)(si + gi) % 2 ? L_FLIP : L_TRANS,
                                           gen_logit, &gens[gi]);
                        int32_t cdim = nd == 1 ? 0 : 1;
                        int64_t C = sh[cdim];
                        view t;
                        if (probs) {
                            // Probabilities in [0, 1] of another float dtype (torch does not
                            // require rows to sum to 1). A masked logit with t > 0 gives inf.
                            t = make_view(dts[(di + 1) % 4], nd, sh, L_STEP, gen_unit, NULL);
                        } else {
                            int64_t tsh[4];
                            int32_t tn = 0;
                            for (int32_t d = 0; d < nd; d++) if (d != cdim) tsh[tn++] = sh[d];
                            idx_gen g = {C, -100, 0.2};
                            t = make_view(tdts[di], tn, tsh, L_FLIP, gen_index, &g);
                        }
                        double ref[64], mag[64], count;
                        // Masked logits at the target class give inf (a sure miss), as torch.
                        ce_ref(&x, &t, probs, -100, ref, mag, &count);
                        hg_tensor out = fresh();
                        hg_status s = hg_cross_entropy(&x.t, &t.t, -100, (hg_reduction)r, &out);
                        CHECK_MSG(s == HG_OK, "ce: %s", hg_last_error());
                        int64_t ns = 1;
                        for (int32_t d = 0; d < nd; d++) if (d != cdim) ns *= sh[d];
                        if (!s) {
                            CHECK(out.dtype == dts[di]);
                            char what[96];
                            snprintf(what, sizeof what, "ce shape %zu dt %d gen %d probs %d r %d",
                                     si, (int)dts[di], gi, probs, r);
                            check_out(&out, ref, mag, ns, probs ? (double)ns : count,
                                      (hg_reduction)r, dts[di], what);
                        }
                        hg_buffer_destroy(out.buffer);
                        hg_buffer_destroy(x.buf);
                        hg_buffer_destroy(t.buf);
                    }
    // Many samples (threads) with an existing f64 out for an f32 result (same_kind).
    int64_t sh[2] = {20000, 10}, tsh[1] = {20000};
    ce_gen g = {8.0, 0.1};
    idx_gen ig = {10, 3, 0.0};   // ignore_index 3 is a valid class: those samples are skipped
    view x = make_view(HG_DTYPE_F32, 2, sh, 0, gen_logit, &g);
    view t = make_view(HG_DTYPE_I64, 1, tsh, 0, gen_index, &ig);
    double* ref = malloc(sizeof(double) * 20000);
    double* mag = malloc(sizeof(double) * 20000);
    double count;
    // The reference's xs[] holds up to 64 classes; C = 10 here.
    ce_ref(&x, &t, 0, 3, ref, mag, &count);
    for (int r = 0; r < 3; r++) {
        view o = make_view(HG_DTYPE_F64, r == 0 ? 1 : 0, tsh, 0, gen_normal, NULL);
        CHECK_OK(hg_cross_entropy(&x.t, &t.t, 3, (hg_reduction)r, &o.t));
        check_out(&o.t, ref, mag, 20000, count, (hg_reduction)r, HG_DTYPE_F32, "ce big");
        hg_buffer_destroy(o.buf);
    }
    free(ref);
    free(mag);
    hg_buffer_destroy(x.buf);
    hg_buffer_destroy(t.buf);
}

// ---- binary cross entropy ------------------------------------------------------------------

static void test_bce(void) {
    hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    int64_t sh[2] = {6, 9}, wsh[1] = {9};
    for (int di = 0; di < 4; di++)
        for (int useW = 0; useW < 2; useW++)
            for (int r = 0; r < 3; r++) {
                view p = make_view(dts[di], 2, sh, L_FLIP, gen_prob, NULL);
                view t = make_view(dts[di], 2, sh, L_TRANS, gen_unit, NULL);
                view w = make_view(HG_DTYPE_F32, 1, wsh, L_STEP, gen_unit, NULL);
                double ref[54], mag[54];
                for (int64_t i = 0; i < 54; i++) {
                    double x = at(&p, i), y = at(&t, i);
                    double lp = fmax(log(x), -100.0), lq = fmax(log(1 - x), -100.0);
                    double l = -(y * lp + (1 - y) * lq);
                    if (useW) l *= at(&w, i % 9);
                    ref[i] = l;
                    mag[i] = fabs(y * lp) + fabs((1 - y) * lq) + 1e-3;
                }
                hg_tensor out = fresh();
                hg_status s = hg_binary_cross_entropy(&p.t, &t.t, useW ? &w.t : NULL,
                                                      (hg_reduction)r, &out);
                CHECK_MSG(s == HG_OK, "bce: %s", hg_last_error());
                hg_dtype rt = dts[di] == HG_DTYPE_F64 || !useW ? dts[di] : HG_DTYPE_F32;
                if (!s) {
                    CHECK(out.dtype == rt);
                    check_out(&out, ref, mag, 54, 54, (hg_reduction)r, rt, "bce");
                }
                hg_buffer_destroy(out.buffer);
                hg_buffer_destroy(p.buf); hg_buffer_destroy(t.buf); hg_buffer_destroy(w.buf);
            }
}

static void test_bce_logits(void) {
    hg_dtype dts[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_F16, HG_DTYPE_BF16};
    int64_t sh[3] = {3, 4, 5}, wsh[2] = {4, 1}, pwsh[1] = {5};
    double scales[] = {4.0, 200.0};
    for (int di = 0; di < 4; di++)
        for (int opt = 0; opt < 4; opt++)
            for (int sc = 0; sc < 2; sc++)
                for (int r = 0; r < 3; r++) {
                    view x = make_view(dts[di], 3, sh, sc ? L_TRANS : L_FLIP, gen_normal, &scales[sc]);
                    view t = make_view(dts[di], 3, sh, L_STEP, gen_unit, NULL);
                    view w = make_view(dts[di], 2, wsh, 0, gen_unit, NULL);
                    double three = 3.0;
                    view pw = make_view(dts[di], 1, pwsh, L_FLIP, gen_unit, &three);
                    int useW = opt & 1, usePW = opt >> 1;
                    double ref[60], mag[60];
                    for (int64_t i = 0; i < 60; i++) {
                        int64_t idx[3] = {i / 20, (i / 5) % 4, i % 5};
                        double xv = at(&x, i), y = at(&t, i);
                        // torch: (1 - t) x + lw (log(1 + exp(-x)) computed stably)
                        double sp = xv > 0 ? log1p(exp(-xv)) : -xv + log1p(exp(xv));
                        double lw = usePW ? (at_bcast(&pw, 3, idx) - 1) * y + 1 : 1;
                        double l = (1 - y) * xv + lw * sp;
                        if (useW) l *= at_bcast(&w, 3, idx);
                        ref[i] = l;
                        mag[i] = fabs((1 - y) * xv) + fabs(lw * sp) + 1e-3;
                    }
                    hg_tensor out = fresh();
                    hg_status s = hg_binary_cross_entropy_with_logits(
                        &x.t, &t.t, useW ? &w.t : NULL, usePW ? &pw.t : NULL, (hg_reduction)r, &out);
                    CHECK_MSG(s == HG_OK, "bce logits: %s", hg_last_error());
                    if (!s) check_out(&out, ref, mag, 60, 60, (hg_reduction)r, dts[di], "bce logits");
                    hg_buffer_destroy(out.buffer);
                    hg_buffer_destroy(x.buf); hg_buffer_destroy(t.buf);
                    hg_buffer_destroy(w.buf); hg_buffer_destroy(pw.buf);
                }
}

// ---- refused arguments ---------------------------------------------------------------------

static void expect_refused(hg_status got, hg_status want, const char* frag, const view* o,
                           const void* snap, const hg_tensor* fresh_out, const char* what) {
    CHECK_MSG(got == want, "%s: got %s want %s (%s)", what, hg_status_string(got),
              hg_status_string(want), hg_last_error());
    if (frag) CHECK_MSG(strstr(hg_last_error(), frag), "%s: message '%s' lacks '%s'", what,
                        hg_last_error(), frag);
    if (o) CHECK_MSG(memcmp(o->host, snap, (size_t)o->count * esize(o->t.dtype)) == 0,
                     "%s: out was written", what);
    if (fresh_out) CHECK_MSG(fresh_out->buffer.handle == 0, "%s: out was allocated", what);
}

static void test_errors(void) {
    int64_t s23[2] = {2, 3}, s2[1] = {2}, s3[1] = {3}, s32[2] = {3, 2};
    view x = make_view(HG_DTYPE_F32, 2, s23, 0, gen_normal, NULL);
    view y = make_view(HG_DTYPE_F32, 2, s32, 0, gen_normal, NULL);
    view o = make_view(HG_DTYPE_F32, 2, s23, 0, gen_normal, NULL);
    view o1 = make_view(HG_DTYPE_F32, 1, s2, 0, gen_normal, NULL);
    size_t ob = (size_t)o.count * 4, ob1 = (size_t)o1.count * 4;
    void* snap = malloc(ob);
    void* snap1 = malloc(ob1);
    memcpy(snap, o.host, ob);
    memcpy(snap1, o1.host, ob1);
    hg_tensor f = fresh();
    // mse: shapes that do not broadcast, bad reduction, int input, NULL.
    expect_refused(hg_mse_loss(&x.t, &y.t, HG_REDUCTION_NONE, &o.t), HG_ERR_SIZE_MISMATCH,
                   "(3, 2)", &o, snap, NULL, "mse shapes");
    expect_refused(hg_mse_loss(&x.t, &x.t, (hg_reduction)7, &f), HG_ERR_INVALID_ARGUMENT, "7",
                   NULL, NULL, &f, "mse reduction");
    view xi = make_view(HG_DTYPE_I32, 2, s23, 0, gen_normal, NULL);
    expect_refused(hg_mse_loss(&xi.t, &x.t, HG_REDUCTION_NONE, &o.t), HG_ERR_DTYPE_MISMATCH, "i32",
                   &o, snap, NULL, "mse int");
    expect_refused(hg_mse_loss(NULL, &x.t, HG_REDUCTION_NONE, &o.t), HG_ERR_NULL_POINTER, NULL,
                   &o, snap, NULL, "mse NULL");
    expect_refused(hg_mse_loss(&x.t, &x.t, HG_REDUCTION_NONE, NULL), HG_ERR_NULL_POINTER, NULL,
                   NULL, NULL, NULL, "mse NULL out");
    // (An out overlapping an input is computed as numpy does: test_ops_overlap.c.)
    expect_refused(hg_mse_loss(&x.t, &x.t, HG_REDUCTION_SUM, &o.t), HG_ERR_SIZE_MISMATCH, "()",
                   &o, snap, NULL, "mse sum into 2-D out");
    view dead = make_view(HG_DTYPE_F32, 2, s23, 0, gen_normal, NULL);
    hg_tensor dt = dead.t;
    hg_buffer_destroy(dead.buf);
    expect_refused(hg_mse_loss(&x.t, &dt, HG_REDUCTION_NONE, &o.t), HG_ERR_INVALID_HANDLE, NULL,
                   &o, snap, NULL, "mse dead target");
    // cross entropy: target shape, index out of range (named), bool target, int logits.
    idx_gen g = {3, -100, 0.0};
    view ti = make_view(HG_DTYPE_I64, 1, s2, 0, gen_index, &g);
    view tbad = make_view(HG_DTYPE_I64, 1, s3, 0, gen_index, &g);
    expect_refused(hg_cross_entropy(&x.t, &tbad.t, -100, HG_REDUCTION_NONE, &o1.t),
                   HG_ERR_SIZE_MISMATCH, "(3,)", &o1, snap1, NULL, "ce target shape");
    ((int64_t*)ti.host)[1 + 1] = 7;
    expect_refused(hg_cross_entropy(&x.t, &ti.t, -100, HG_REDUCTION_NONE, &o1.t),
                   HG_ERR_OUT_OF_RANGE, "7", &o1, snap1, NULL, "ce index 7");
    ((int64_t*)ti.host)[1 + 1] = -1;
    expect_refused(hg_cross_entropy(&x.t, &ti.t, -100, HG_REDUCTION_MEAN, &f),
                   HG_ERR_OUT_OF_RANGE, "-1", NULL, NULL, &f, "ce index -1");
    ((int64_t*)ti.host)[1 + 1] = -100;   // now ignored: accepted
    CHECK_OK(hg_cross_entropy(&x.t, &ti.t, -100, HG_REDUCTION_NONE, &o1.t));
    memcpy(snap1, o1.host, ob1);
    view tb = make_view(HG_DTYPE_BOOL, 1, s2, 0, gen_normal, NULL);
    expect_refused(hg_cross_entropy(&x.t, &tb.t, -100, HG_REDUCTION_NONE, &o1.t),
                   HG_ERR_DTYPE_MISMATCH, "bool", &o1, snap1, NULL, "ce bool target");
    expect_refused(hg_cross_entropy(&xi.t, &ti.t, -100, HG_REDUCTION_NONE, &o1.t),
                   HG_ERR_DTYPE_MISMATCH, "i32", &o1, snap1, NULL, "ce int logits");
    expect_refused(hg_cross_entropy(&x.t, &y.t, -100, HG_REDUCTION_NONE, &o1.t),
                   HG_ERR_SIZE_MISMATCH, "(3, 2)", &o1, snap1, NULL, "ce prob shape");
    expect_refused(hg_cross_entropy(&x.t, NULL, -100, HG_REDUCTION_NONE, &o1.t),
                   HG_ERR_NULL_POINTER, NULL, &o1, snap1, NULL, "ce NULL target");
    // 0-d logits: refused by both entries with the shapes they take
    view x0 = make_view(HG_DTYPE_F32, 0, NULL, 0, gen_normal, NULL);
    view t0 = make_view(HG_DTYPE_I64, 0, NULL, 0, gen_index, &g);
    expect_refused(hg_cross_entropy(&x0.t, &t0.t, -100, HG_REDUCTION_NONE, &o1.t),
                   HG_ERR_SIZE_MISMATCH, "(C), (N, C)", &o1, snap1, NULL, "ce 0-d logits");
    expect_refused(hg_cross_entropy_backward(&x0.t, &x0.t, &t0.t, -100, HG_REDUCTION_NONE,
                                             &o1.t),
                   HG_ERR_SIZE_MISMATCH, "(C), (N, C)", &o1, snap1, NULL, "ce bw 0-d logits");
    // bce: a probability outside [0, 1] is named; NaN too.
    view p = make_view(HG_DTYPE_F32, 2, s23, 0, gen_unit, NULL);
    ((float*)p.host)[1 + 4] = 1.5f;
    expect_refused(hg_binary_cross_entropy(&p.t, &p.t, NULL, HG_REDUCTION_NONE, &o.t),
                   HG_ERR_INVALID_ARGUMENT, "1.5", &o, snap, NULL, "bce 1.5");
    ((float*)p.host)[1 + 4] = NAN;
    expect_refused(hg_binary_cross_entropy(&p.t, &p.t, NULL, HG_REDUCTION_SUM, &f),
                   HG_ERR_INVALID_ARGUMENT, "nan", NULL, NULL, &f, "bce NaN");
    ((float*)p.host)[1 + 4] = 0.5f;
    expect_refused(hg_binary_cross_entropy(&p.t, &x.t, &y.t, HG_REDUCTION_NONE, &o.t),
                   HG_ERR_SIZE_MISMATCH, "(3, 2)", &o, snap, NULL, "bce weight shape");
    expect_refused(hg_binary_cross_entropy(&p.t, &y.t, NULL, HG_REDUCTION_NONE, &o.t),
                   HG_ERR_SIZE_MISMATCH, "(3, 2)", &o, snap, NULL, "bce target shape");
    // bce with logits: pos_weight that does not broadcast, int target.
    expect_refused(hg_binary_cross_entropy_with_logits(&x.t, &p.t, NULL, &ti.t, HG_REDUCTION_NONE,
                                                       &o.t),
                   HG_ERR_DTYPE_MISMATCH, "pos_weight", &o, snap, NULL, "bcel int pos_weight");
    view pw = make_view(HG_DTYPE_F32, 1, s2, 0, gen_unit, NULL);
    expect_refused(hg_binary_cross_entropy_with_logits(&x.t, &p.t, NULL, &pw.t, HG_REDUCTION_NONE,
                                                       &o.t),
                   HG_ERR_SIZE_MISMATCH, "(2,)", &o, snap, NULL, "bcel pos_weight shape");
    expect_refused(hg_binary_cross_entropy_with_logits(&x.t, &xi.t, NULL, NULL, HG_REDUCTION_NONE,
                                                       &o.t),
                   HG_ERR_DTYPE_MISMATCH, "target", &o, snap, NULL, "bcel int target");
    // Out dtype that the result cannot be cast to (f32 -> i32).
    view oi = make_view(HG_DTYPE_I32, 2, s23, 0, gen_normal, NULL);
    void* snapi = malloc((size_t)oi.count * 4);
    memcpy(snapi, oi.host, (size_t)oi.count * 4);
    expect_refused(hg_mse_loss(&x.t, &x.t, HG_REDUCTION_NONE, &oi.t), HG_ERR_DTYPE_MISMATCH,
                   "i32", &oi, snapi, NULL, "mse out i32");
    free(snap); free(snap1); free(snapi);
    view* all[] = {&x, &y, &o, &o1, &xi, &ti, &tbad, &tb, &p, &pw, &oi, &x0, &t0};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) hg_buffer_destroy(all[i]->buf);
}

int main(void) {
    if (hg_executor_create(HG_BACKEND_CPU, &ex) != HG_OK) {
        fprintf(stderr, "no CPU executor: %s\n", hg_last_error());
        return 1;
    }
    test_mse();
    test_cross_entropy();
    test_bce();
    test_bce_logits();
    test_errors();
    hg_executor_destroy(ex);
    return hg_test_finish("test_ops_loss");
}
