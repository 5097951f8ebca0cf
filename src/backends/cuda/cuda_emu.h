// Internal (CUDA backend, emulation): the host C++ text wrapped around generated kernels when
// HOLOGRAM_CUDA_EMULATE=1 (cuda_emu_header.c). The source compiled is prologue + the generated
// CUDA C + epilogue; the epilogue exports
//   extern "C" int hg_emu_launch(const unsigned grid[3], const unsigned block[3],
//                                const void* kargs, unsigned long long kargs_size,
//                                unsigned long long dyn_shared_bytes, int threaded);
#ifndef HG_BACKENDS_CUDA_EMU_H
#define HG_BACKENDS_CUDA_EMU_H

extern const char hg_cuda_emu_prologue[];
extern const char hg_cuda_emu_epilogue[];

typedef int (*hg_cuda_emu_launch_fn)(const unsigned* grid, const unsigned* block, const void* args,
                                     unsigned long long args_size, unsigned long long dyn_bytes,
                                     int threaded);

#endif
