// Part of the op table of tests/test_parity.c (included by parity_ops.h): the optimizer step
// (hg_adam_step), its updated parameter against torch.optim.Adam's update in double on the
// harness's inputs. tests/test_optim.c checks the moments, amsgrad and maximize.
#ifndef HG_PARITY_OPS_OPTIM_H
#define HG_PARITY_OPS_OPTIM_H

// Inputs: param (0), grad (1), exp_avg (2), exp_avg_sq (3, >= 0). op 0: Adam with L2 weight
// decay at step 3; op 1: AdamW at step 1.
static hg_adam_options adam_case_opts(const pcase* c) {
    hg_adam_options o = {0.05, 0.9, 0.999, c->dt == HG_DTYPE_F16 ? 1e-4 : 1e-8, 0.01, 3, 0, 0, 0};
    if (c->e->op == 1) o.step = 1, o.decoupled_weight_decay = 1, o.weight_decay = 0.1;
    return o;
}
static int setup_adam(pcase* c) {
    shp s;
    if (c->ss == SS_SPECIAL || !std_shape(c, &s)) return 0;
    gen_input(c, 0, c->dt, s, -2, 2);
    gen_input(c, 1, c->dt, s, -1, 1);
    gen_input(c, 2, c->dt, s, -0.1, 0.1);
    gen_input(c, 3, c->dt, s, 0.25, 1);   // normal in f16 after the step's (1 - beta2) scaling
    return 1;
}
// The parameter is updated in place: out gets a copy of it first, and the moments are updated
// in copies (the harness's inputs stay as they were for the next run).
static hg_status run_adam(pcase* c, hg_tensor* out) {
    hg_tensor m, v;
    memset(&m, 0, sizeof m);
    memset(&v, 0, sizeof v);
    hg_adam_options o = adam_case_opts(c);
    hg_status s = hg_cast(&c->tin[0], c->dt, out);
    if (!s) s = hg_cast(&c->tin[2], c->dt, &m);
    if (!s) s = hg_cast(&c->tin[3], c->dt, &v);
    if (!s) s = hg_adam_step(&o, out, &c->tin[1], &m, &v, NULL);
    if (m.buffer.handle) hg_buffer_destroy(m.buffer);
    if (v.buffer.handle) hg_buffer_destroy(v.buffer);
    return s;
}
static void ref_adam(pcase* c) {
    c->os = c->in[0].s;
    c->odt = c->dt;
    alloc_ref(c);
    hg_adam_options o = adam_case_opts(c);
    double bc1 = 1 - pow(o.beta1, (double)o.step), bc2 = 1 - pow(o.beta2, (double)o.step);
    for (int64_t i = 0; i < numel(&c->os); i++) {
        double p = c->in[0].v[i], g = c->in[1].v[i];
        if (o.decoupled_weight_decay) p *= 1 - o.lr * o.weight_decay;
        else g += o.weight_decay * p;
        double m = o.beta1 * c->in[2].v[i] + (1 - o.beta1) * g;
        double v = o.beta2 * c->in[3].v[i] + (1 - o.beta2) * g * g;
        c->ref[i] = p - o.lr / bc1 * m / (sqrt(v) / sqrt(bc2) + o.eps);
    }
}

#endif
