// Part of the op table of tests/test_parity.c (included by parity_ops.h): the gradient ops
// (hg_*_backward), each against its formula in double on the harness's inputs.
#ifndef HG_PARITY_OPS_GRAD_H
#define HG_PARITY_OPS_GRAD_H

// ---- activation gradients: g (input 0), x (input 1), y = op(x) computed in the reference ----
static const hg_unary_op k_act_ops[] = {HG_UNARY_RELU, HG_UNARY_TANH, HG_UNARY_SIGMOID,
                                        HG_UNARY_SILU, HG_UNARY_GELU, HG_UNARY_GELU_ERF,
                                        HG_UNARY_SOFTPLUS, HG_UNARY_EXP};
static double act_fwd(hg_unary_op op, double x) {
    switch (op) {
    case HG_UNARY_RELU: return x > 0 ? x : 0;
    case HG_UNARY_TANH: return tanh(x);
    case HG_UNARY_SIGMOID: return 1 / (1 + exp(-x));
    case HG_UNARY_SILU: return x / (1 + exp(-x));
    case HG_UNARY_GELU:
        return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case HG_UNARY_GELU_ERF: return 0.5 * x * erfc(-x / sqrt(2.0));
    case HG_UNARY_SOFTPLUS: return log1p(exp(x));
    default: return exp(x);
    }
}
static double act_grad(hg_unary_op op, double x) {
    double s = 1 / (1 + exp(-x));
    switch (op) {
    case HG_UNARY_RELU: return x > 0 ? 1 : 0;
    case HG_UNARY_TANH: return 1 - tanh(x) * tanh(x);
    case HG_UNARY_SIGMOID: return s * (1 - s);
    case HG_UNARY_SILU: return s * (1 + x * (1 - s));
    case HG_UNARY_GELU: {
        double u = 0.7978845608028654 * (x + 0.044715 * x * x * x), t = tanh(u);
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 *
                                   (1 + 3 * 0.044715 * x * x);
    }
    case HG_UNARY_GELU_ERF:
        return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
    case HG_UNARY_SOFTPLUS: return s;
    default: return exp(x);
    }
}
static int setup_act_grad(pcase* c) {
    shp s;
    if (c->ss == SS_SPECIAL || !std_shape(c, &s)) return 0;
    gen_input(c, 0, c->dt, s, -2, 2);
    gen_input(c, 1, c->dt, s, -4, 4);
    // y = op(x) as the library computes it (in the input dtype), input 2
    gen_input(c, 2, c->dt, s, 0, 1);
    hg_unary_op op = k_act_ops[c->e->op];
    for (int64_t i = 0; i < numel(&s); i++) {
        double x = c->in[1].v[i];
        if (op == HG_UNARY_RELU && fabs(x) < 1e-3) x = c->in[1].v[i] = 0.5;   // not at the kink
        c->in[2].v[i] = as_dt(c->dt, act_fwd(op, x));
    }
    return 1;
}
static hg_status run_act_grad(pcase* c, hg_tensor* out) {
    return hg_activation_backward(k_act_ops[c->e->op], &c->tin[0], &c->tin[1], &c->tin[2], out);
}
static void ref_act_grad(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    hg_unary_op op = k_act_ops[c->e->op];
    // The formulas read the forward's result y as stored (rounded to the dtype), as torch's
    // tanh/sigmoid backward do: the reference takes the same y.
    for (int64_t i = 0; i < numel(&c->os); i++) {
        double x = c->in[1].v[i], y = c->in[2].v[i], d = act_grad(op, x);
        if (op == HG_UNARY_TANH) d = 1 - y * y;
        if (op == HG_UNARY_SIGMOID) d = y * (1 - y);
        if (op == HG_UNARY_EXP) d = y;
        if (op == HG_UNARY_GELU_ERF && x != 0) d = y / x + x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
        c->ref[i] = c->in[0].v[i] * d;
    }
}

// ---- softmax / log_softmax gradients along the last dim: g (input 0), y (input 1) -----------
static int setup_softmax_grad(pcase* c) {
    if (c->ss == SS_SPECIAL || !setup_lastdim(c)) return 0;
    gen_input(c, 1, c->dt, c->in[0].s, c->e->op ? -6 : 0, c->e->op ? 0 : 1);
    return 1;
}
static hg_status run_softmax_grad(pcase* c, hg_tensor* out) {
    return c->e->op ? hg_log_softmax_backward(&c->tin[0], &c->tin[1], -1, out)
                    : hg_softmax_backward(&c->tin[0], &c->tin[1], -1, out);
}
static void ref_softmax_grad(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    int64_t n = c->os.ndim ? c->os.d[c->os.ndim - 1] : 1, rows = n ? numel(&c->os) / n : 0;
    for (int64_t r = 0; r < rows; r++) {
        const double* g = c->in[0].v + r * n;
        const double* y = c->in[1].v + r * n;
        double s = 0;
        for (int64_t j = 0; j < n; j++) s += c->e->op ? g[j] : g[j] * y[j];
        for (int64_t j = 0; j < n; j++)
            c->ref[r * n + j] = c->e->op ? g[j] - exp(y[j]) * s : y[j] * (g[j] - s);
    }
}

// ---- layer_norm / rms_norm gradients over the last dim: g (0), x (1), weight (2) ------------
// op 0: layer_norm grad_x, 1: rms_norm grad_x, 2: layer_norm grad_weight; from given statistics
// (hg_layer_norm_backward_stats: g (0), x (1), mean (2), rstd (3), no weight) 3: grad_x,
// 4: grad_weight.
static int setup_norm_grad(pcase* c) {
    if (c->ss == SS_SPECIAL || !setup_lastdim(c)) return 0;
    shp s = c->in[0].s, st = s;
    gen_input(c, 1, c->dt, s, -3, 5);
    if (c->e->op < 3) {
        gen_input(c, 2, c->dt, mkshape(1, s.d[s.ndim - 1], 0, 0), 0.5, 2);
        return 1;
    }
    st.d[st.ndim - 1] = 1;   // the statistics' shape; any values
    gen_input(c, 2, c->dt, st, -1, 1);
    gen_input(c, 3, c->dt, st, 0.25, 2);
    return 1;
}
static hg_status run_norm_grad(pcase* c, hg_tensor* out) {
    if (c->e->op >= 3)
        return hg_layer_norm_backward_stats(&c->tin[0], &c->tin[1], 1, &c->tin[2], &c->tin[3],
                                            NULL, c->e->op == 3 ? out : NULL,
                                            c->e->op == 4 ? out : NULL, NULL);
    if (c->e->op == 1)
        return hg_rms_norm_backward(&c->tin[0], &c->tin[1], 1, &c->tin[2], 1e-5, out, NULL);
    if (c->e->op == 2)
        return hg_layer_norm_backward(&c->tin[0], &c->tin[1], 1, &c->tin[2], 1e-5, NULL, out,
                                      NULL);
    return hg_layer_norm_backward(&c->tin[0], &c->tin[1], 1, &c->tin[2], 1e-5, out, NULL, NULL);
}
static void ref_norm_grad(pcase* c) {
    int stats = c->e->op >= 3, rms = c->e->op == 1, wgrad = c->e->op == 2 || c->e->op == 4;
    int64_t n = c->in[1].s.d[c->in[1].s.ndim - 1], rows = n ? numel(&c->in[1].s) / n : 0;
    c->os = wgrad ? mkshape(1, n, 0, 0) : c->in[1].s;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t j = 0; wgrad && j < n; j++) c->ref[j] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const double* g = c->in[0].v + r * n;
        const double* x = c->in[1].v + r * n;
        const double* w = stats ? NULL : c->in[2].v;
        double m = 0, v = 0, a = 0, b = 0, rstd;
        if (stats) {
            m = c->in[2].v[r];
            rstd = c->in[3].v[r];
        } else {
            for (int64_t j = 0; j < n && !rms; j++) m += x[j] / (double)n;
            for (int64_t j = 0; j < n; j++) v += (x[j] - m) * (x[j] - m) / (double)n;
            rstd = 1 / sqrt(v + 1e-5);
        }
        for (int64_t j = 0; j < n; j++) {
            a += g[j] * (w ? w[j] : 1) / (double)n;
            b += g[j] * (w ? w[j] : 1) * (x[j] - m) * rstd / (double)n;
        }
        for (int64_t j = 0; j < n; j++) {
            double xh = (x[j] - m) * rstd;
            if (wgrad) c->ref[j] += g[j] * xh;
            else c->ref[r * n + j] = rstd * (g[j] * (w ? w[j] : 1) - (rms ? 0 : a) - xh * b);
        }
    }
}

// ---- cross-entropy gradient: logits (0), class indices (1), g (2, 0-d or per sample) --------
static int setup_ce_grad(pcase* c) {
    if (!setup_ce(c)) return 0;
    hg_reduction r = loss_reduction(c);
    shp gs = r == HG_REDUCTION_NONE ? mkshape(1, c->in[0].s.d[0], 0, 0) : mkshape(0, 0, 0, 0);
    gen_input(c, 2, c->dt, gs, 0.5, 2);
    return 1;
}
static hg_status run_ce_grad(pcase* c, hg_tensor* out) {
    return hg_cross_entropy_backward(&c->tin[2], &c->tin[0], &c->tin[1], -100, loss_reduction(c),
                                     out);
}
static void ref_ce_grad(pcase* c) {
    hg_reduction r = loss_reduction(c);
    int64_t n = c->in[0].s.d[0], k = c->in[0].s.d[1], cnt = 0;
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    for (int64_t i = 0; i < n; i++) cnt += (int64_t)c->in[1].v[i] != -100;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = (int64_t)c->in[1].v[i];
        double sc = r == HG_REDUCTION_NONE ? c->in[2].v[i]
                    : r == HG_REDUCTION_SUM ? c->in[2].v[0] : c->in[2].v[0] / (double)cnt;
        const double* x = c->in[0].v + i * k;
        double m = -INFINITY, z = 0;
        for (int64_t j = 0; j < k; j++) m = x[j] > m ? x[j] : m;
        for (int64_t j = 0; j < k; j++) z += exp(x[j] - m);
        for (int64_t j = 0; j < k; j++)
            c->ref[i * k + j] = t == -100 ? 0 : (exp(x[j] - m) / z - (j == t)) * sc;
    }
}

#endif
