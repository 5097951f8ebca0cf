// Internal to the elementwise files (ewise_*.c, elementwise_api.c): dtype helpers, the emission
// of expressions (written with the kernel builder, isa/builder.h), and the kernel entry point
// the eager ops use (tensors already checked, scalars passed by value).
#ifndef HG_OPS_EWISE_INTERNAL_H
#define HG_OPS_EWISE_INTERNAL_H
#include <stdint.h>
#include "runtime/objects.h"
#include "hologram.h"
#include "isa/builder.h"
#include "isa/program.h"
#include "ops/elementwise/ewise.h"

// ---- dtype helpers (ewise_dtype.c) ----
int hg_ew_unary_is_float_fn(hg_unary_op op);               // sqrt, exp, gelu, ...
// The dtype values of t are computed in: f32 for f16/bf16, else t.
static inline hg_dtype hg_ew_compute_dtype(hg_dtype t) {
    return t == HG_DTYPE_F16 || t == HG_DTYPE_BF16 ? HG_DTYPE_F32 : t;
}
// Raw bits of scalar s as an element of dtype t (cvt semantics for floats to integers).
uint64_t hg_ew_scalar_bits(hg_dtype t, hg_scalar s);

// ---- emission (ewise_emit*.c), written with the kernel builder (isa/builder.h) ----
// Emits every node of e; input_ops[i] holds input i's element (in its dtype; registers,
// scalar parameters or immediates). node_ops[i] receives node i's value in its dtype.
hg_status hg_ew_emit_ops(hg_prog* p, const hg_ew_expr* e, const hg_operand* input_ops,
                         hg_operand* node_ops);

// Per-op emission on values in compute dtypes (ewise_emit_unary.c, ewise_emit_binary.c).
// x is in hg_ew_compute_dtype(xt); the result is in hg_ew_compute_dtype(result dtype).
hg_operand hg_ew_emit_unary(hg_kb* m, hg_unary_op op, hg_dtype xt, hg_dtype rt, hg_operand x);
// a and b are in hg_ew_compute_dtype(ct), ct the operands' common dtype.
hg_operand hg_ew_emit_binary(hg_kb* m, hg_binary_op op, hg_dtype ct, hg_dtype rt,
                             hg_operand a, hg_operand b);
// An f64 value as a value of float dtype rt in its compute dtype, rounded once to rt.
hg_operand hg_ew_narrow_f64(hg_kb* m, hg_dtype rt, hg_operand r);
hg_operand hg_ew_emit_fma(hg_kb* m, hg_dtype t, hg_operand a, hg_operand b, hg_operand c);

// ---- kernels (ewise_kernel.c) ----
// One input of a run: a tensor whose buffer object was resolved by the caller, or a 0-d value.
typedef struct hg_ew_arg {
    const hg_tensor* t;        // NULL: scalar
    hg_buffer_obj* buf;        // t's buffer (checked)
    uint64_t bits;             // scalar: raw bits in the input's dtype
} hg_ew_arg;
// Runs k; outputs are checked tensors with resolved buffers. Takes ex->launch_lock.
hg_status hg_ew_kernel_run_args(hg_ew_kernel* k, const hg_ew_arg* inputs,
                                const hg_ew_arg* outputs);
// The same with ex->launch_lock already held by the caller.
hg_status hg_ew_kernel_run_locked(hg_ew_kernel* k, const hg_ew_arg* inputs,
                                  const hg_ew_arg* outputs);
// The buffer of a valid tensor (live handle, dtype, dims, every reachable element inside), or
// NULL without setting an error: the caller then runs the full check for the message.
hg_buffer_obj* hg_ew_tensor_fast_check(const hg_tensor* t);
// Most lanes one launch runs (2^31; larger runs are split). Tests lower it.
extern uint64_t hg_ew_launch_max;
const hg_ew_expr* hg_ew_kernel_expr(const hg_ew_kernel* k);

#endif
