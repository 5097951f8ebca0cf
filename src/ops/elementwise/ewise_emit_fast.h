// Internal (ewise_emit_unary.c): f32 emission of the composite unary functions from the ISA's
// vectorized f32 math instructions.
#ifndef HG_OPS_EWISE_EMIT_FAST_H
#define HG_OPS_EWISE_EMIT_FAST_H
#include "ops/elementwise/ewise_internal.h"

// expm1, log1p, softplus or silu of the f32 value x, as an f32 value. Other ops are not
// handled here (the caller keeps gelu_erf and every f64 form in f64).
hg_operand hg_ew_unary_f32_fast(hg_kb* m, hg_unary_op op, hg_operand x);
int hg_ew_unary_has_f32_fast(hg_unary_op op);

#endif
