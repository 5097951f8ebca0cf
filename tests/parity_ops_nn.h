// Part of the op table of tests/test_parity.c (included by parity_ops.h): softmax and
// normalization, matrix products, losses and the data ops.
#ifndef HG_PARITY_OPS_NN_H
#define HG_PARITY_OPS_NN_H

// ---------------------------------------------------------------------------------------------
// softmax, log_softmax, layer_norm, rms_norm (along / over the last dim)
// ---------------------------------------------------------------------------------------------
static int setup_lastdim(pcase* c) {
    shp s;
    switch (c->ss) {
    case SS_EMPTY: s = mkshape(2, 0, 5, 0); break;
    case SS_SCALAR: return 0;
    case SS_ODD: s = mkshape(2, 7, 13, 0); break;
    case SS_PRIME: s = mkshape(1, 97, 0, 0); break;
    case SS_LARGE: s = mkshape(2, 128, 1031, 0); break;
    case SS_BROADCAST: return 0;
    case SS_STRIDED: s = mkshape(3, 5, 4, 9); break;
    default: s = mkshape(2, 5, 10, 0);
    }
    c->ss = c->ss == SS_SPECIAL ? SS_ODD : c->ss;   // no NaN/inf in the generic generator
    gen_input(c, 0, c->dt, s, -8, 8);
    return 1;
}
static int setup_softmax(pcase* c) {
    shape_set ss = c->ss;
    if (!setup_lastdim(c)) return 0;
    if (ss == SS_SPECIAL) {   // row 0 all -inf (NaN out), some -inf elsewhere, huge values
        pin* p = &c->in[0];
        for (int64_t j = 0; j < p->s.d[1]; j++) p->v[j] = -INFINITY;
        for (int64_t i = p->s.d[1]; i < numel(&p->s); i += 3) p->v[i] = -INFINITY;
        p->v[p->s.d[1] + 1] = is_float_dt(c->dt) && c->dt >= HG_DTYPE_F32 ? 1e30 : 6e4;
        if (c->dt == HG_DTYPE_F16) p->v[p->s.d[1] + 1] = 6e4;
        c->ss = SS_SPECIAL;
    }
    return 1;
}
static hg_status run_softmax(pcase* c, hg_tensor* out) { return hg_softmax(&c->tin[0], -1, out); }
static hg_status run_log_softmax(pcase* c, hg_tensor* out) {
    return hg_log_softmax(&c->tin[0], -1, out);
}
static void ref_softmax_any(pcase* c, int log_form) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    int64_t n = c->os.ndim ? c->os.d[c->os.ndim - 1] : 1, rows = n ? numel(&c->os) / n : 0;
    for (int64_t r = 0; r < rows; r++) {
        const double* x = c->in[0].v + r * n;
        double m = -INFINITY, z = 0;
        for (int64_t j = 0; j < n; j++) m = x[j] > m ? x[j] : m;
        for (int64_t j = 0; j < n; j++) z += isinf(m) ? NAN : exp(x[j] - m);
        for (int64_t j = 0; j < n; j++)
            c->ref[r * n + j] = log_form ? x[j] - m - log(z) : exp(x[j] - m) / z;
    }
}
static void ref_softmax(pcase* c) { ref_softmax_any(c, 0); }
static void ref_log_softmax(pcase* c) { ref_softmax_any(c, 1); }

static int setup_norm(pcase* c) {
    if (c->ss == SS_SPECIAL || !setup_lastdim(c)) return 0;
    shp w = mkshape(1, c->in[0].s.d[c->in[0].s.ndim - 1], 0, 0);
    gen_input(c, 1, c->dt, w, 0.5, 2);
    gen_input(c, 2, c->dt, w, -1, 1);
    return 1;
}
static hg_status run_layer_norm(pcase* c, hg_tensor* out) {
    return hg_layer_norm(&c->tin[0], 1, &c->tin[1], &c->tin[2], 1e-5, out);
}
static hg_status run_rms_norm(pcase* c, hg_tensor* out) {
    return hg_rms_norm(&c->tin[0], 1, &c->tin[1], 1e-5, out);
}
static void ref_norm_any(pcase* c, int rms) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    int64_t n = c->os.d[c->os.ndim - 1], rows = n ? numel(&c->os) / n : 0;
    for (int64_t r = 0; r < rows; r++) {
        const double* x = c->in[0].v + r * n;
        double m = 0, v = 0;
        for (int64_t j = 0; j < n; j++) m += x[j];
        m /= (double)n;
        for (int64_t j = 0; j < n; j++) v += rms ? x[j] * x[j] : (x[j] - m) * (x[j] - m);
        v /= (double)n;
        for (int64_t j = 0; j < n; j++)
            c->ref[r * n + j] = rms ? x[j] / sqrt(v + 1e-5) * c->in[1].v[j]
                                    : (x[j] - m) / sqrt(v + 1e-5) * c->in[1].v[j] + c->in[2].v[j];
    }
}
static void ref_layer_norm(pcase* c) { ref_norm_any(c, 0); }
// hg_layer_norm_stats' mean (op 0) or rstd (op 1): x's shape with the last dim 1.
static hg_status run_layer_norm_stats(pcase* c, hg_tensor* out) {
    hg_tensor y = {0};
    hg_status s = hg_layer_norm_stats(&c->tin[0], 1, &c->tin[1], &c->tin[2], 1e-5, &y,
                                      c->e->op ? NULL : out, c->e->op ? out : NULL);
    if (y.buffer.handle) hg_buffer_destroy(y.buffer);
    return s;
}
static void ref_layer_norm_stats(pcase* c) {
    c->os = c->in[0].s;
    c->os.d[c->os.ndim - 1] = 1;
    c->odt = c->dt;
    alloc_ref(c);
    int64_t n = c->in[0].s.d[c->in[0].s.ndim - 1], rows = numel(&c->os);
    for (int64_t r = 0; r < rows; r++) {
        const double* x = c->in[0].v + r * n;
        double m = 0, v = 0;
        for (int64_t j = 0; j < n; j++) m += x[j];
        m /= (double)n;
        for (int64_t j = 0; j < n; j++) v += (x[j] - m) * (x[j] - m);
        c->ref[r] = c->e->op ? 1 / sqrt(v / (double)n + 1e-5) : m;
    }
}
static void ref_rms_norm(pcase* c) { ref_norm_any(c, 1); }

// scaled_dot_product_attention: q (H, L, E), k (Hk, S, E), v (Hk, S, Ev); op 0 unmasked, 1
// causal. SS_BROADCAST: grouped heads (4 q heads over 2 k/v heads).
// ---------------------------------------------------------------------------------------------
static int setup_attention(pcase* c) {
    int64_t h = 2, hk = 2, L = 5, S = 9, E = 6, Ev = 4;
    switch (c->ss) {
    case SS_EMPTY: L = 0; break;
    case SS_SCALAR: case SS_SPECIAL: return 0;
    case SS_ODD: L = 7, S = 13, E = 5, Ev = 3; break;
    case SS_PRIME: h = hk = 1, L = 97, S = 3, E = 2, Ev = 1; break;
    case SS_LARGE: L = 130, S = 70, E = 64, Ev = 32; break;
    case SS_BROADCAST: h = 4; break;
    default: break;
    }
    gen_input(c, 0, c->dt, mkshape(3, h, L, E), -1, 1);
    gen_input(c, 1, c->dt, mkshape(3, hk, S, E), -1, 1);
    gen_input(c, 2, c->dt, mkshape(3, hk, S, Ev), -2, 2);
    return 1;
}
static hg_status run_attention(pcase* c, hg_tensor* out) {
    return hg_scaled_dot_product_attention(&c->tin[0], &c->tin[1], &c->tin[2], NULL, c->e->op,
                                           NAN, out, NULL);
}
static void ref_attention(pcase* c) {
    const shp *qs = &c->in[0].s, *ks = &c->in[1].s, *vs = &c->in[2].s;
    int64_t h = qs->d[0], L = qs->d[1], E = qs->d[2], S = ks->d[1], Ev = vs->d[2];
    int64_t group = h / ks->d[0];
    c->os = mkshape(3, h, L, Ev);
    c->odt = c->dt;
    alloc_ref(c);
    double* p = malloc((size_t)(S ? S : 1) * sizeof *p);
    for (int64_t hh = 0; hh < h; hh++)
        for (int64_t i = 0; i < L; i++) {
            const double* q = c->in[0].v + (hh * L + i) * E;
            const double* k = c->in[1].v + hh / group * S * E;
            const double* v = c->in[2].v + hh / group * S * Ev;
            double m = -INFINITY, z = 0;
            for (int64_t j = 0; j < S; j++) {
                double d = 0;
                for (int64_t e = 0; e < E; e++) d += q[e] * k[j * E + e];
                p[j] = c->e->op && j > i ? -INFINITY : d / sqrt((double)E);
                m = p[j] > m ? p[j] : m;
            }
            for (int64_t j = 0; j < S; j++) z += exp(p[j] - m);
            for (int64_t e = 0; e < Ev; e++) {
                double o = 0;
                for (int64_t j = 0; j < S && m > -INFINITY; j++) o += exp(p[j] - m) / z * v[j * Ev + e];
                c->ref[(hh * L + i) * Ev + e] = o;
            }
        }
    free(p);
}

// scaled_dot_product_attention_backward: the inputs of setup_attention and grad_out (in[3]);
// op 0, 1, 2: grad_q, grad_k, grad_v, from the op's own forward's out and lse.
static int setup_attention_bw(pcase* c) {
    if (!setup_attention(c)) return 0;
    const shp *qs = &c->in[0].s, *vs = &c->in[2].s;
    gen_input(c, 3, c->dt, mkshape(3, qs->d[0], qs->d[1], vs->d[2]), -1, 1);
    return 1;
}
static hg_status run_attention_bw(pcase* c, hg_tensor* out) {
    hg_executor ex;
    hg_status s = hg_buffer_executor(c->tin[0].buffer, &ex);
    hg_tensor o = {0}, lse = {0}, g[3];
    memset(g, 0, sizeof g);
    hg_buffer lb = {0};
    hg_dtype ldt = c->dt == HG_DTYPE_F64 ? HG_DTYPE_F64 : HG_DTYPE_F32;
    int64_t h = c->tin[0].shape[0], L = c->tin[0].shape[1];
    int64_t nl = h * L;
    if (!s) s = hg_buffer_create(ex, ldt, (size_t)(nl > 0 ? nl : 1), &lb);
    if (!s) s = hg_tensor_view(lb, 2, (int64_t[]){h, L}, NULL, 0, &lse);
    if (!s) s = hg_scaled_dot_product_attention(&c->tin[0], &c->tin[1], &c->tin[2], NULL, 0, NAN,
                                                &o, &lse);
    if (!s) {
        g[c->e->op] = *out;
        s = hg_scaled_dot_product_attention_backward(&c->tin[3], &c->tin[0], &c->tin[1],
                                                     &c->tin[2], &o, &lse, NULL, 0, NAN, &g[0],
                                                     &g[1], &g[2]);
        if (!s) *out = g[c->e->op];
    }
    for (int i = 0; i < 3; i++)
        if (i != c->e->op && g[i].buffer.handle) hg_buffer_destroy(g[i].buffer);
    if (o.buffer.handle) hg_buffer_destroy(o.buffer);
    if (lb.handle) hg_buffer_destroy(lb);
    return s;
}
static void ref_attention_bw(pcase* c) {
    const shp *qs = &c->in[0].s, *ks = &c->in[1].s, *vs = &c->in[2].s;
    int64_t h = qs->d[0], L = qs->d[1], E = qs->d[2], hk = ks->d[0], S = ks->d[1], Ev = vs->d[2];
    int64_t group = h / hk, which = c->e->op;
    c->os = which == 0 ? *qs : which == 1 ? *ks : *vs;
    c->odt = c->dt;
    alloc_ref(c);
    memset(c->ref, 0, (size_t)(numel(&c->os) ? numel(&c->os) : 1) * sizeof *c->ref);
    double* p = malloc((size_t)(S ? S : 1) * sizeof *p);
    double sc = 1 / sqrt((double)E);
    for (int64_t hh = 0; hh < h; hh++)
        for (int64_t i = 0; i < L; i++) {
            const double* q = c->in[0].v + (hh * L + i) * E;
            const double* k = c->in[1].v + hh / group * S * E;
            const double* v = c->in[2].v + hh / group * S * Ev;
            const double* go = c->in[3].v + (hh * L + i) * Ev;
            double m = -INFINITY, z = 0, dd = 0;
            for (int64_t j = 0; j < S; j++) {
                double d = 0;
                for (int64_t e = 0; e < E; e++) d += q[e] * k[j * E + e];
                p[j] = d * sc;
                m = p[j] > m ? p[j] : m;
            }
            for (int64_t j = 0; j < S; j++) z += exp(p[j] - m);
            for (int64_t j = 0; j < S; j++) p[j] = exp(p[j] - m) / z;
            for (int64_t e = 0; e < Ev; e++) {   // rowsum(grad_out * out), out as the forward
                double o = 0;                      // returns it: in the input dtype
                for (int64_t j = 0; j < S; j++) o += p[j] * v[j * Ev + e];
                unsigned char ob[8];
                store_dt(c->dt, ob, o);
                dd += go[e] * load_dt(c->dt, ob);
            }
            for (int64_t j = 0; j < S; j++) {
                double dp = 0;
                for (int64_t e = 0; e < Ev; e++) dp += go[e] * v[j * Ev + e];
                double ds = p[j] * (dp - dd) * sc;
                if (which == 2)
                    for (int64_t e = 0; e < Ev; e++)
                        c->ref[(hh / group * S + j) * Ev + e] += p[j] * go[e];
                for (int64_t e = 0; e < E && which == 0; e++)
                    c->ref[(hh * L + i) * E + e] += ds * k[j * E + e];
                for (int64_t e = 0; e < E && which == 1; e++)
                    c->ref[(hh / group * S + j) * E + e] += ds * q[e];
            }
        }
    free(p);
}

// ---------------------------------------------------------------------------------------------
// matmul, gemm, matvec
// ---------------------------------------------------------------------------------------------
static int setup_matmul(pcase* c) {
    shp a, b;
    double lo = is_float_dt(c->dt) ? -1 : -3, hi = is_float_dt(c->dt) ? 1 : 4;
    switch (c->ss) {
    case SS_EMPTY: a = mkshape(2, 3, 0, 0), b = mkshape(2, 0, 4, 0); break;
    case SS_ODD: a = mkshape(2, 7, 13, 0), b = mkshape(2, 13, 5, 0); break;
    case SS_PRIME: a = mkshape(1, 97, 0, 0), b = mkshape(2, 97, 3, 0); break;
    case SS_LARGE: a = mkshape(2, 64, 300, 0), b = mkshape(2, 300, 65, 0); break;
    case SS_BROADCAST:
        a = (shp){4, {2, 1, 6, 5}};
        b = mkshape(3, 3, 5, 4);
        break;
    case SS_STRIDED: a = mkshape(2, 6, 5, 0), b = mkshape(2, 5, 7, 0); break;
    default: return 0;
    }
    gen_input(c, 0, c->dt, a, lo, hi);
    gen_input(c, 1, c->dt, b, lo, hi);
    return 1;
}
static hg_status run_matmul(pcase* c, hg_tensor* out) {
    return hg_matmul(&c->tin[0], &c->tin[1], out);
}
static void ref_matmul(pcase* c) {
    shp a = c->in[0].s, b = c->in[1].s;
    int a1 = a.ndim == 1, b1 = b.ndim == 1;
    if (a1) a = mkshape(2, 1, a.d[0], 0);
    if (b1) b = mkshape(2, b.d[0], 1, 0);
    int64_t m = a.d[a.ndim - 2], k = a.d[a.ndim - 1], n = b.d[b.ndim - 1];
    shp ba = {a.ndim - 2, {0}}, bb = {b.ndim - 2, {0}};
    for (int32_t d = 0; d < ba.ndim; d++) ba.d[d] = a.d[d];
    for (int32_t d = 0; d < bb.ndim; d++) bb.d[d] = b.d[d];
    shp batch = bcast_shape(&ba, &bb);
    c->os = batch;
    if (!a1) c->os.d[c->os.ndim++] = m;
    if (!b1) c->os.d[c->os.ndim++] = n;
    c->odt = c->dt;
    alloc_ref(c);
    int64_t nb = numel(&batch), bi[HG_MAX_DIMS] = {0};
    for (int64_t q = 0; q < nb; q++) {
        int64_t fa = bcast_flat(&ba, &batch, bi), fb = bcast_flat(&bb, &batch, bi);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += c->in[0].v[fa * m * k + i * k + p] * c->in[1].v[fb * k * n + p * n + j];
                c->ref[(q * m + i) * n + j] = s;
            }
        next_idx(&batch, bi);
    }
}
// gemm: c = 1.5 * a @ b^T (b given as (n, k), trans_b = 1), beta 0 over the sentinel contents.
static int setup_gemm(pcase* c) {
    int64_t m, n, k;
    switch (c->ss) {
    case SS_EMPTY: m = 0, n = 4, k = 3; break;
    case SS_ODD: m = 7, n = 5, k = 13; break;
    case SS_PRIME: m = 1, n = 97, k = 3; break;
    case SS_LARGE: m = 96, n = 80, k = 257; break;
    case SS_STRIDED: m = 6, n = 7, k = 5; break;
    default: return 0;
    }
    gen_input(c, 0, c->dt, mkshape(2, m, k, 0), -1, 1);
    gen_input(c, 1, c->dt, mkshape(2, n, k, 0), -1, 1);
    return 1;
}
static hg_status run_gemm(pcase* c, hg_tensor* out) {
    if (!out->buffer.handle) return HG_OK;   // c must exist: no allocated form
    return hg_gemm(0, 1, 1.5, &c->tin[0], &c->tin[1], 0.0, out);
}
static void ref_gemm(pcase* c) {
    int64_t m = c->in[0].s.d[0], k = c->in[0].s.d[1], n = c->in[1].s.d[0];
    c->os = mkshape(2, m, n, 0);
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) s += c->in[0].v[i * k + p] * c->in[1].v[j * k + p];
            c->ref[i * n + j] = 1.5 * s;
        }
}
static int setup_matvec(pcase* c) {
    int64_t m, n;
    switch (c->ss) {
    case SS_EMPTY: m = 3, n = 0; break;
    case SS_ODD: m = 7, n = 13; break;
    case SS_PRIME: m = 97, n = 1; break;
    case SS_LARGE: m = 300, n = 513; break;
    case SS_STRIDED: m = 6, n = 5; break;
    default: return 0;
    }
    gen_input(c, 0, c->dt, mkshape(2, m, n, 0), -1, 1);
    gen_input(c, 1, c->dt, mkshape(1, n, 0, 0), -1, 1);
    return 1;
}
static hg_status run_matvec(pcase* c, hg_tensor* out) {
    return hg_matvec(&c->tin[0], &c->tin[1], out);
}
static void ref_matvec(pcase* c) {
    int64_t m = c->in[0].s.d[0], n = c->in[0].s.d[1];
    c->os = mkshape(1, m, 0, 0);
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < m; i++) {
        double s = 0;
        for (int64_t p = 0; p < n; p++) s += c->in[0].v[i * n + p] * c->in[1].v[p];
        c->ref[i] = s;
    }
}

// ---------------------------------------------------------------------------------------------
// Losses (reduction by shape set: NONE for odd/large, MEAN for prime/0-d/empty, SUM strided)
// ---------------------------------------------------------------------------------------------
static hg_reduction loss_reduction(const pcase* c) {
    return c->ss == SS_ODD || c->ss == SS_LARGE ? HG_REDUCTION_NONE
           : c->ss == SS_STRIDED                ? HG_REDUCTION_SUM
                                                : HG_REDUCTION_MEAN;
}
static int setup_pair(pcase* c, double plo, double phi, double tlo, double thi) {
    shp s;
    if (c->ss == SS_SPECIAL || c->ss == SS_BROADCAST || !std_shape(c, &s)) return 0;
    gen_input(c, 0, c->dt, s, plo, phi);
    gen_input(c, 1, c->dt, s, tlo, thi);
    return 1;
}
static int setup_mse(pcase* c) { return setup_pair(c, -3, 3, -3, 3); }
static int setup_bce(pcase* c) { return setup_pair(c, 0.01, 0.99, 0, 1); }
static int setup_bcel(pcase* c) { return setup_pair(c, -10, 10, 0, 1); }
static hg_status run_mse(pcase* c, hg_tensor* out) {
    return hg_mse_loss(&c->tin[0], &c->tin[1], loss_reduction(c), out);
}
static hg_status run_bce(pcase* c, hg_tensor* out) {
    return hg_binary_cross_entropy(&c->tin[0], &c->tin[1], NULL, loss_reduction(c), out);
}
static hg_status run_bcel(pcase* c, hg_tensor* out) {
    return hg_binary_cross_entropy_with_logits(&c->tin[0], &c->tin[1], NULL, NULL,
                                               loss_reduction(c), out);
}
static double l_mse(double p, double t) { return (p - t) * (p - t); }
static double l_bce(double p, double t) {
    double lp = log(p) < -100 ? -100 : log(p), lq = log(1 - p) < -100 ? -100 : log(1 - p);
    return -(t * lp + (1 - t) * lq);
}
static double l_bcel(double x, double t) {
    return (x > 0 ? x : 0) - x * t + log1p(exp(-fabs(x)));
}
static void ref_pair_loss(pcase* c, double (*f)(double, double)) {
    hg_reduction r = loss_reduction(c);
    int64_t n = numel(&c->in[0].s);
    c->os = r == HG_REDUCTION_NONE ? c->in[0].s : mkshape(0, 0, 0, 0);
    c->odt = c->dt;
    alloc_ref(c);
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        double l = f(c->in[0].v[i], c->in[1].v[i]);
        if (r == HG_REDUCTION_NONE) c->ref[i] = l;
        s += l;
    }
    if (r == HG_REDUCTION_SUM) c->ref[0] = s;
    if (r == HG_REDUCTION_MEAN) c->ref[0] = s / (double)n;
}
static void ref_mse(pcase* c) { ref_pair_loss(c, l_mse); }
static void ref_bce(pcase* c) { ref_pair_loss(c, l_bce); }
static void ref_bcel(pcase* c) { ref_pair_loss(c, l_bcel); }

// cross_entropy with class indices (i64, some = ignore_index -100), logits (N, C).
static int setup_ce(pcase* c) {
    int64_t n, k;
    switch (c->ss) {
    case SS_EMPTY: n = 0, k = 5; break;
    case SS_ODD: n = 7, k = 13; break;
    case SS_PRIME: n = 3, k = 97; break;
    case SS_LARGE: n = 512, k = 100; break;
    case SS_STRIDED: n = 6, k = 9; break;
    default: return 0;
    }
    gen_input(c, 0, c->dt, mkshape(2, n, k, 0), -5, 5);
    gen_input(c, 1, HG_DTYPE_I64, mkshape(1, n, 0, 0), 0, (double)k);
    for (int64_t i = 0; i < n; i += 4) c->in[1].v[i] = -100;
    if (n > 1) c->in[1].v[1] = (double)(k - 1);
    return 1;
}
static hg_status run_ce(pcase* c, hg_tensor* out) {
    return hg_cross_entropy(&c->tin[0], &c->tin[1], -100, loss_reduction(c), out);
}
static void ref_ce(pcase* c) {
    hg_reduction r = loss_reduction(c);
    int64_t n = c->in[0].s.d[0], k = c->in[0].s.d[1], cnt = 0;
    c->os = r == HG_REDUCTION_NONE ? mkshape(1, n, 0, 0) : mkshape(0, 0, 0, 0);
    c->odt = c->dt;
    alloc_ref(c);
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = (int64_t)c->in[1].v[i];
        double l = 0;
        if (t != -100) {
            const double* x = c->in[0].v + i * k;
            double m = -INFINITY, z = 0;
            for (int64_t j = 0; j < k; j++) m = x[j] > m ? x[j] : m;
            for (int64_t j = 0; j < k; j++) z += exp(x[j] - m);
            l = -(x[t] - m - log(z));
            cnt++;
        }
        if (r == HG_REDUCTION_NONE) c->ref[i] = l;
        s += l;
    }
    if (r == HG_REDUCTION_SUM) c->ref[0] = s;
    if (r == HG_REDUCTION_MEAN) c->ref[0] = s / (double)cnt;
}

// ---------------------------------------------------------------------------------------------
// Data ops (exact)
// ---------------------------------------------------------------------------------------------
static int setup_out_only(pcase* c) {
    shp s;
    if (c->ss == SS_SPECIAL || c->ss == SS_BROADCAST || !std_shape(c, &s)) return 0;
    c->os = s;   // kept by ref
    return 1;
}
static hg_status run_fill(pcase* c, hg_tensor* out) {
    if (!out->buffer.handle) return HG_OK;   // needs an existing out: nothing to allocate
    return hg_fill(out, hg_scalar_i(1));
}
static void ref_fill(pcase* c) {
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) c->ref[i] = 1;
}
static hg_status run_arange(pcase* c, hg_tensor* out) {
    if (!out->buffer.handle) return HG_OK;
    return hg_arange(out, -3, 0.25);
}
static void ref_arange(pcase* c) {
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < numel(&c->os); i++) {
        double v = -3 + (double)i * 0.25;
        unsigned char b[8];
        if (c->dt == HG_DTYPE_BOOL) v = v != 0;
        else if (!is_float_dt(c->dt)) {   // cvt: truncate and saturate
            static const double lo[] = {0, -128, -32768, -2147483648.0, -9.2233720368547758e18,
                                        0, 0, 0, 0};
            static const double hi[] = {1, 127, 32767, 2147483647.0, 9.2233720368547758e18,
                                        255, 65535, 4294967295.0, 1.8446744073709552e19};
            v = trunc(v);
            v = v < lo[c->dt] ? lo[c->dt] : v > hi[c->dt] ? hi[c->dt] : v;
        }
        store_dt(c->dt, b, v);
        c->ref[i] = load_dt(c->dt, b);
    }
}
static int setup_concat(pcase* c) {
    shp a;
    if (c->ss == SS_SPECIAL || c->ss == SS_BROADCAST || c->ss == SS_SCALAR || !std_shape(c, &a))
        return 0;
    shp b = a;
    b.d[0] = a.d[0] + 2;
    gen_input(c, 0, c->dt, a, -50, 50);
    gen_input(c, 1, c->dt, b, -50, 50);
    return 1;
}
static hg_status run_concat(pcase* c, hg_tensor* out) { return hg_concat(2, c->tin, 0, out); }
static void ref_concat(pcase* c) {
    c->os = c->in[0].s;
    c->os.d[0] += c->in[1].s.d[0];
    c->odt = c->dt;
    alloc_ref(c);
    int64_t na = numel(&c->in[0].s);
    memcpy(c->ref, c->in[0].v, (size_t)na * sizeof(double));
    memcpy(c->ref + na, c->in[1].v, (size_t)numel(&c->in[1].s) * sizeof(double));
}
static int setup_index(pcase* c) {
    shp x;
    if (c->ss == SS_SPECIAL || c->ss == SS_BROADCAST || c->ss == SS_SCALAR || !std_shape(c, &x))
        return 0;
    gen_input(c, 0, c->dt, x, -50, 50);
    int64_t size = x.d[0];
    gen_input(c, 1, HG_DTYPE_I64, mkshape(1, size ? 11 : 0, 0, 0), (double)-size, (double)size);
    return 1;
}
static hg_status run_index_select(pcase* c, hg_tensor* out) {
    return hg_index_select(&c->tin[0], 0, &c->tin[1], out);
}
static void ref_index_select(pcase* c) {
    shp x = c->in[0].s;
    int64_t row = x.d[0] ? numel(&x) / x.d[0] : 0, ni = c->in[1].s.d[0];
    c->os = x;
    c->os.d[0] = ni;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < ni; i++) {
        int64_t r = (int64_t)c->in[1].v[i];
        if (r < 0) r += x.d[0];
        memcpy(c->ref + i * row, c->in[0].v + r * row, (size_t)row * sizeof(double));
    }
}
static int setup_gather(pcase* c) {
    shp x;
    if (c->ss == SS_SPECIAL || c->ss == SS_BROADCAST || c->ss == SS_SCALAR || !std_shape(c, &x))
        return 0;
    gen_input(c, 0, c->dt, x, -50, 50);
    int64_t size = x.d[x.ndim - 1];
    gen_input(c, 1, HG_DTYPE_I64, x, (double)-size, (double)size);
    return 1;
}
static hg_status run_gather(pcase* c, hg_tensor* out) {
    return hg_gather(&c->tin[0], -1, &c->tin[1], out);
}
static void ref_gather(pcase* c) {
    shp x = c->in[0].s;
    int64_t n = numel(&x), last = x.d[x.ndim - 1];
    c->os = x;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = (int64_t)c->in[1].v[i];
        if (k < 0) k += last;
        c->ref[i] = c->in[0].v[i - i % last + k];
    }
}

// index_add / scatter_add: out starts as input 0 (copied by hg_concat of one tensor, which
// allocates it), then accumulates input 2 at input 1's indices. The dtypes with an atomic add
// on devices (ATOMIC_DT), so every backend runs them.
static int setup_index_add(pcase* c) {
    shp x;
    if (c->ss == SS_SPECIAL || c->ss == SS_BROADCAST || c->ss == SS_SCALAR || !std_shape(c, &x))
        return 0;
    gen_input(c, 0, c->dt, x, -50, 50);
    int64_t size = x.d[0];
    shp src = x;
    src.d[0] = size ? 11 : 0;
    gen_input(c, 1, HG_DTYPE_I64, mkshape(1, src.d[0], 0, 0), (double)-size, (double)size);
    gen_input(c, 2, c->dt, src, -50, 50);
    return 1;
}
static hg_status run_index_add(pcase* c, hg_tensor* out) {
    hg_status s = hg_concat(1, &c->tin[0], 0, out);
    return s ? s : hg_index_add(out, 0, &c->tin[1], &c->tin[2]);
}
static void ref_index_add(pcase* c) {
    shp x = c->in[0].s;
    int64_t row = x.d[0] ? numel(&x) / x.d[0] : 0, ni = c->in[1].s.d[0];
    c->os = x;
    c->odt = c->dt;
    alloc_ref(c);
    memcpy(c->ref, c->in[0].v, (size_t)numel(&x) * sizeof(double));
    for (int64_t i = 0; i < ni; i++) {
        int64_t r = (int64_t)c->in[1].v[i];
        if (r < 0) r += x.d[0];
        for (int64_t j = 0; j < row; j++) c->ref[r * row + j] += c->in[2].v[i * row + j];
    }
}

static int setup_scatter_add(pcase* c) {
    shp x;
    if (c->ss == SS_SPECIAL || c->ss == SS_BROADCAST || c->ss == SS_SCALAR || !std_shape(c, &x))
        return 0;
    gen_input(c, 0, c->dt, x, -50, 50);
    int64_t size = x.d[x.ndim - 1];
    gen_input(c, 1, HG_DTYPE_I64, x, (double)-size, (double)size);
    gen_input(c, 2, c->dt, x, -50, 50);
    return 1;
}
static hg_status run_scatter_add(pcase* c, hg_tensor* out) {
    hg_status s = hg_concat(1, &c->tin[0], 0, out);
    return s ? s : hg_scatter_add(out, -1, &c->tin[1], &c->tin[2]);
}
static void ref_scatter_add(pcase* c) {
    shp x = c->in[0].s;
    int64_t n = numel(&x), last = x.d[x.ndim - 1];
    c->os = x;
    c->odt = c->dt;
    alloc_ref(c);
    memcpy(c->ref, c->in[0].v, (size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        int64_t k = (int64_t)c->in[1].v[i];
        if (k < 0) k += last;
        c->ref[i - i % last + k] += c->in[2].v[i];
    }
}

#endif
