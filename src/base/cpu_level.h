// Internal: the one decision of which vector instruction sets this process uses. Every run-time
// choice of a code path - the CPU backend's lane-kernel sets, the GEMM micro-kernels, the op
// library's host kernels compiled for AVX2 - asks here, so all of them pick the same level.
#ifndef HG_BASE_CPU_LEVEL_H
#define HG_BASE_CPU_LEVEL_H

typedef enum hg_cpu_level {
    HG_CPU_GENERIC = 0,   // the build's baseline (SSE2 on x86-64; everything off x86-64)
    HG_CPU_AVX2 = 1,      // AVX2 + FMA + F16C
    HG_CPU_AVX512 = 2,    // the above + AVX-512 F/DQ/BW/VL (with the OS saving zmm state)
} hg_cpu_level;

// The running CPU's level (decided once; thread-safe), capped by HOLOGRAM_CPU_LEVEL=generic|avx2
// where set (never above what the CPU has).
hg_cpu_level hg_cpu_level_get(void);
// Whether the CPU has F16C (the half <-> float conversions); 0 off x86.
int hg_cpu_has_f16c(void);
// Its name: "generic", "avx2" or "avx512".
const char* hg_cpu_level_name(hg_cpu_level level);

#endif
