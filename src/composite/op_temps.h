// Internal: temporaries for ops composed of other ops (the gradients' general path, which runs
// on every backend because each step is an op of the library).
//
//     hg_op_temps p = {0};
//     hg_tensor* t = hg_op_temp(&p);                  // allocated by the op that fills it
//     if (!s) s = hg_binary(HG_BINARY_MUL, a, b, t);
//     ...
//     hg_op_temps_release(&p);                       // destroys every buffer allocated
#ifndef HG_COMPOSITE_OP_TEMPS_H
#define HG_COMPOSITE_OP_TEMPS_H
#include "hologram.h"

#define HG_OP_TEMPS_MAX 24

typedef struct hg_op_temps {
    hg_tensor t[HG_OP_TEMPS_MAX];
    int n;
} hg_op_temps;

// A cleared tensor (buffer handle 0: "allocate for me"); never NULL (the pool is sized for the
// longest composition; overflowing it is a bug, caught by an assert-like abort).
hg_tensor* hg_op_temp(hg_op_temps* p);
void hg_op_temps_release(hg_op_temps* p);

// x in dtype dt: x itself when it has that dtype, else a converted temporary.
hg_status hg_op_temp_cast(hg_op_temps* p, const hg_tensor* x, hg_dtype dt, const hg_tensor** out);

// A view of t with a dim of size 1 inserted before dim `at` (numpy.expand_dims).
hg_tensor hg_op_expand_dim(const hg_tensor* t, int32_t at);

#endif
