// Internal to ewise_kernel.c and ewise_rows.c: a kernel's layout classes, its cached variants
// and the row launches (ewise_rows.c) of layouts whose rows are contiguous.
#ifndef HG_OPS_EWISE_KERNEL_INTERNAL_H
#define HG_OPS_EWISE_KERNEL_INTERNAL_H
#include <stdint.h>
#include "ops/elementwise/ewise.h"
#include "ops/elementwise/ewise_internal.h"
#include "runtime/objects.h"

#define EW_MAX_OPERANDS (HG_EW_MAX_INPUTS + HG_EW_MAX_OUTPUTS)
#define EW_MAX_VARIANTS 32
#define EW_BLOCK 256u

enum { CL_LINEAR = 0, CL_SCALAR = 1, CL_STRIDED = 2 };

typedef struct ew_layout {
    int32_t ndim;                               // collapsed dims (0 for a single element)
    int32_t nstrided;
    uint32_t vec;                               // the vector variant's width (0: none)
    int64_t numel;
    int64_t size[HG_MAX_DIMS];
    uint8_t cls[EW_MAX_OPERANDS];
    int64_t stride[EW_MAX_OPERANDS][HG_MAX_DIMS];   // per collapsed dim (general layouts)
    int64_t lo[EW_MAX_OPERANDS], hi[EW_MAX_OPERANDS];   // reachable range around the offset
} ew_layout;

typedef struct ew_variant {
    uint64_t sig;
    int32_t ndim, nstrided, has_start;
    uint32_t vec;
    uint8_t cls[EW_MAX_OPERANDS];
    int64_t size[HG_MAX_DIMS];
    int64_t (*stride)[HG_MAX_DIMS];   // nops rows when nstrided (else NULL)
    hg_kernel_obj* kernel;            // a reference to the executor's cached kernel
} ew_variant;

struct hg_ew_kernel {
    hg_executor_obj* ex;
    int32_t nops;                     // inputs + outputs
    int32_t instr_count;
    int32_t last;                     // variant used by the previous run (tried first)
    uint32_t next_evict;
    int32_t nvars;
    ew_variant vars[EW_MAX_VARIANTS];
    unsigned char* scratch;           // grouped rows' repeated rows, packed rows' tiles
    size_t scratch_bytes;
    hg_ew_expr e;
};

// The cached variant for layout L (the previous run's first), compiled on a miss.
hg_status hg_ew_variant_for(hg_ew_kernel* k, const ew_layout* L, ew_variant** out);
// The raw bits of a scalar operand (host memory read at launch).
uint64_t hg_ew_scalar_bits_of(const hg_ew_arg* a, hg_dtype t);
// Runs L as rows (or packed rows) when the backend has row launches and the layout allows (1,
// *s the status); else 0 and nothing ran.
int hg_ew_run_rows(hg_ew_kernel* k, const hg_ew_arg* in, const hg_ew_arg* out,
                   const ew_layout* L, hg_status* s);

#endif
