// Transposed copies of 4-byte elements: d[b * drow + a] = s[a * srow + b] for a < m, b < k,
// row steps in bytes (s holds m rows of k adjacent elements, d k rows of m). 4 x 4 blocks go
// through SSE registers (4 loads, the shuffles of a 4 x 4 transpose, 4 stores; every x86-64
// CPU has SSE2), the edges element by element. Used by the transposed tensor copy
// (tensor_copy.c) and the row launches' transposed inputs (cpu_lanes.c): element by element
// the tiles ran at a third of numpy's transpose copy (docs/performance.md).
#ifndef HG_BASE_TRANSPOSE_H
#define HG_BASE_TRANSPOSE_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline void hg_transpose_32(uint8_t* d, int64_t drow, const uint8_t* s, int64_t srow,
                                   int64_t m, int64_t k) {
    int64_t a = 0;
#if defined(__SSE2__)
    for (; a + 4 <= m; a += 4) {
        const uint8_t* s0 = s + a * srow;
        int64_t b = 0;
        for (; b + 4 <= k; b += 4) {
            __m128 r0 = _mm_loadu_ps((const float*)(const void*)(s0 + b * 4));
            __m128 r1 = _mm_loadu_ps((const float*)(const void*)(s0 + srow + b * 4));
            __m128 r2 = _mm_loadu_ps((const float*)(const void*)(s0 + 2 * srow + b * 4));
            __m128 r3 = _mm_loadu_ps((const float*)(const void*)(s0 + 3 * srow + b * 4));
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);   // moves bits only: NaN payloads stay
            uint8_t* d0 = d + b * drow + a * 4;
            _mm_storeu_ps((float*)(void*)d0, r0);
            _mm_storeu_ps((float*)(void*)(d0 + drow), r1);
            _mm_storeu_ps((float*)(void*)(d0 + 2 * drow), r2);
            _mm_storeu_ps((float*)(void*)(d0 + 3 * drow), r3);
        }
        for (; b < k; b++)
            for (int64_t i = a; i < a + 4; i++) memcpy(d + b * drow + i * 4, s + i * srow + b * 4, 4);
    }
#endif
    for (; a < m; a++)
        for (int64_t b = 0; b < k; b++) memcpy(d + b * drow + a * 4, s + a * srow + b * 4, 4);
}

#endif
