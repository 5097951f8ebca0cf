// Temporaries of composed ops (op_temps.h).
#include "composite/op_temps.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hg_tensor* hg_op_temp(hg_op_temps* p) {
    if (p->n >= HG_OP_TEMPS_MAX) {
        fprintf(stderr, "hologram: internal error: more than %d temporaries in one op\n",
                HG_OP_TEMPS_MAX);
        abort();
    }
    hg_tensor* t = &p->t[p->n++];
    memset(t, 0, sizeof *t);
    return t;
}

void hg_op_temps_release(hg_op_temps* p) {
    for (int i = 0; i < p->n; i++)
        if (p->t[i].buffer.handle) hg_buffer_destroy(p->t[i].buffer);
    p->n = 0;
}

hg_status hg_op_temp_cast(hg_op_temps* p, const hg_tensor* x, hg_dtype dt, const hg_tensor** out) {
    if (x->dtype == dt) {
        *out = x;
        return HG_OK;
    }
    hg_tensor* t = hg_op_temp(p);
    *out = t;
    return hg_cast(x, dt, t);
}

hg_tensor hg_op_expand_dim(const hg_tensor* t, int32_t at) {
    hg_tensor v = *t;
    for (int32_t d = t->ndim; d > at; d--) {
        v.shape[d] = t->shape[d - 1];
        v.strides[d] = t->strides[d - 1];
    }
    v.shape[at] = 1;
    v.strides[at] = 0;
    v.ndim = t->ndim + 1;
    return v;
}
