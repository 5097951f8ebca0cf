// Internal: the gradients of the unary ops as elementwise expressions (ewise_grad.c), for
// hg_activation_backward (elementwise_api.c).
//
//     int need = hg_ew_act_grad_needs(HG_UNARY_TANH);          // HG_EW_GRAD_Y
//     int32_t r = hg_ew_act_grad(&e, HG_UNARY_TANH, HG_DTYPE_F32, g, -1, y);
#ifndef HG_OPS_EWISE_GRAD_H
#define HG_OPS_EWISE_GRAD_H
#include <stdint.h>
#include "hologram.h"
#include "ops/elementwise/ewise.h"

enum { HG_EW_GRAD_X = 1, HG_EW_GRAD_Y = 2 };

// Which of x (the forward's input) and y (its result) op's gradient reads: a mask of
// HG_EW_GRAD_X / HG_EW_GRAD_Y, or -1 when op has no gradient here (logical, bitwise, is*).
int hg_ew_act_grad_needs(hg_unary_op op);

// g * dop/dx as nodes of e, every node in float dtype t (g, x, y: nodes of dtype t; x or y -1
// when op does not need it). Returns the result node, or -1 with the error set.
int32_t hg_ew_act_grad(hg_ew_expr* e, hg_unary_op op, hg_dtype t, int32_t g, int32_t x,
                       int32_t y);

#endif
