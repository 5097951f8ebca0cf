// Internal (CUDA backend): Atlas ISA -> CUDA C. The generated source is one translation unit:
// the runtime preamble (cuda_preamble.c) and one kernel
//
//     extern "C" __global__ void hg_kernel(const hg_kargs a)
//
// whose argument block holds, per program parameter, {base, count, bits}: the device address of
// a buffer's first visible element and its element count (every access is checked against it),
// or a scalar's raw bits. `a.err` points at an hg_kerr record in device memory where the first
// out-of-bounds access is reported with `a.seq` and `a.tag` (which launch); `a.dyn_count` is
// the element count of the unsized shared array. The layout of hg_kargs is fixed here (the
// launcher fills it).
#ifndef HG_BACKENDS_CUDA_CODEGEN_H
#define HG_BACKENDS_CUDA_CODEGEN_H
#include <stddef.h>
#include <stdint.h>
#include "hologram.h"
#include "isa/program.h"

extern const char hg_cuda_preamble[];

// One parameter slot of the argument block (24 bytes, as struct hg_karg in the preamble).
typedef struct hg_cuda_karg {
    uint64_t base;     // device pointer (buffers)
    uint64_t count;    // elements visible (buffers)
    uint64_t bits;     // raw value bits (scalars)
} hg_cuda_karg;

// The first out-of-bounds access (struct hg_kerr in the preamble).
typedef struct hg_cuda_kerr {
    uint32_t flag, instr, param, pad;
    uint32_t lane[3], block[3];
    uint64_t index, count;
    uint64_t seq, tag;   // the launch that made it: its sequence number and the host's kernel
} hg_cuda_kerr;

// Bytes of the argument block of a program with nparams parameters: the slots, then the error
// record pointer, then the unsized shared array's element count, then the launch's sequence
// number and tag (copied into the error record by an out-of-bounds access, so that a report
// read after later launches still names the launch that made it).
size_t hg_cuda_kargs_size(uint32_t nparams);
size_t hg_cuda_kargs_err_offset(uint32_t nparams);
size_t hg_cuda_kargs_dyn_offset(uint32_t nparams);
size_t hg_cuda_kargs_launch_offset(uint32_t nparams);   // seq (8 bytes), then tag (8 bytes)

// Generates the CUDA C source of a validated program. *out is malloc'd, NUL-terminated
// (*out_len excludes the NUL); the caller frees it. The kernel is named "hg_kernel".
hg_status hg_cuda_codegen(const hg_prog* p, char** out, size_t* out_len);

#endif
