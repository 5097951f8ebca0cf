// Internal: the elementwise kernels' vector variant for device backends (ewise_vector.c),
// chosen per run by ewise_kernel.c.
#ifndef HG_OPS_EWISE_VECTOR_H
#define HG_OPS_EWISE_VECTOR_H
#include <stddef.h>
#include <stdint.h>
#include "hologram.h"
#include "isa/program.h"
#include "ops/elementwise/ewise.h"

// 0 when HOLOGRAM_EW_VECTOR=0 (the scalar kernels everywhere: for side-by-side measurements).
int hg_ew_vector_enabled(void);
// The vector width W for a run of numel elements whose operand o is at address base[o] with
// elements of es[o] bytes (base NULL: a scalar parameter), the scalar kernel having instr_count
// instructions; 0 when the vector variant does not apply (an unaligned base, too few elements,
// a kernel too long to copy W times).
uint32_t hg_ew_vector_width(int32_t nops, const void* const* base, const size_t* es,
                            int64_t numel, int32_t instr_count);
// The launch of the vector variant over n elements: a grid-stride loop, so at most a few
// blocks per SM (num_sm: the backend's num_threads).
hg_launch_config hg_ew_vector_launch(int num_sm, uint64_t n, uint32_t w);
// The vector variant's program: the parameters of the linear variant (input i a buffer, or a
// scalar parameter where scalar[i]; the outputs; n), W elements per lane and loop trip.
hg_status hg_ew_build_vector(const hg_ew_expr* e, const uint8_t* scalar, uint32_t w,
                             hg_prog** out);

#endif
