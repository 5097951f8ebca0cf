// Non-temporal copies (see cpu_internal.h): the store side of streaming kernels whose output is
// larger than the cache. A streaming store writes a whole line without reading it first, so a
// kernel moves its output's bytes once instead of twice.
#include <string.h>
#include "backends/cpu/cpu_internal.h"

#if defined(__x86_64__)
#include <emmintrin.h>

void hg_cpu_stream_copy(void* dst, const void* src, size_t bytes) {
    unsigned char* d = dst;
    const unsigned char* s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > bytes) head = bytes;
    memcpy(d, s, head);
    size_t i = head;
    for (; i + 64 <= bytes; i += 64) {   // a line per step: four 16-byte streams
        __m128i a = _mm_loadu_si128((const __m128i*)(const void*)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i*)(const void*)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i*)(const void*)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i*)(const void*)(s + i + 48));
        _mm_stream_si128((__m128i*)(void*)(d + i), a);
        _mm_stream_si128((__m128i*)(void*)(d + i + 16), b);
        _mm_stream_si128((__m128i*)(void*)(d + i + 32), c);
        _mm_stream_si128((__m128i*)(void*)(d + i + 48), e);
    }
    for (; i + 16 <= bytes; i += 16)
        _mm_stream_si128((__m128i*)(void*)(d + i), _mm_loadu_si128((const __m128i*)(const void*)(s + i)));
    memcpy(d + i, s + i, bytes - i);
}

void hg_cpu_stream_fence(void) { _mm_sfence(); }

#else

void hg_cpu_stream_copy(void* dst, const void* src, size_t bytes) { memcpy(dst, src, bytes); }
void hg_cpu_stream_fence(void) {}

#endif
