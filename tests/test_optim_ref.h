// The float64 reference of hg_adam_step (tests/test_optim.c, test_composite_optim.c):
// torch.optim.Adam's per-tensor update of one element, written out from torch's documented
// algorithm.
#ifndef HG_TEST_OPTIM_REF_H
#define HG_TEST_OPTIM_REF_H
#include <math.h>
#include "hologram.h"

static inline void adam_ref_step(const hg_adam_options* o, double* p, double g, double* m,
                                 double* v, double* vmax) {
    if (o->maximize) g = -g;
    if (o->weight_decay != 0 && !o->decoupled_weight_decay) g += o->weight_decay * *p;
    if (o->weight_decay != 0 && o->decoupled_weight_decay) *p *= 1 - o->lr * o->weight_decay;
    *m = o->beta1 * *m + (1 - o->beta1) * g;
    *v = o->beta2 * *v + (1 - o->beta2) * g * g;
    double bc1 = 1 - pow(o->beta1, (double)o->step), bc2 = 1 - pow(o->beta2, (double)o->step);
    double vv = *v;
    if (o->amsgrad) vv = *vmax = fmax(*vmax, *v);
    *p -= o->lr / bc1 * *m / (sqrt(vv) / sqrt(bc2) + o->eps);
}

#endif
