// bench_stream_nt.c — the non-temporal reference kernels of `hologram bench`: SSE loads and
// streaming stores (every x86-64 has them), which write whole lines to memory without reading
// them first - 8 B/elem of traffic for a copy instead of 12. The destination is aligned to 16
// bytes first; a fence at the end makes the stores visible before the pool's join.
#include "bench_stream.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#include <stdint.h>

// Elements before d + i is 16-byte aligned (at most 3, fewer than e - b).
static size_t head(const float* d, size_t b, size_t e) {
    size_t h = ((16 - ((uintptr_t)(d + b) & 15)) & 15) / sizeof(float);
    return h < e - b ? h : e - b;
}

void stream_copy_nt(void* ctx, size_t b, size_t e) {
    bench_arrays* arr = ctx;
    const float* a = arr->a;
    float* d = arr->d;
    size_t i = b, h = b + head(d, b, e);
    for (; i < h; i++) d[i] = a[i];
    for (; i + 4 <= e; i += 4) _mm_stream_ps(d + i, _mm_loadu_ps(a + i));
    for (; i < e; i++) d[i] = a[i];
    _mm_sfence();
}

void stream_add_nt(void* ctx, size_t b, size_t e) {
    bench_arrays* arr = ctx;
    const float *a = arr->a, *bb = arr->b;
    float* d = arr->d;
    size_t i = b, h = b + head(d, b, e);
    for (; i < h; i++) d[i] = a[i] + bb[i];
    for (; i + 4 <= e; i += 4)
        _mm_stream_ps(d + i, _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(bb + i)));
    for (; i < e; i++) d[i] = a[i] + bb[i];
    _mm_sfence();
}

void stream_triad_nt(void* ctx, size_t b, size_t e) {
    bench_arrays* arr = ctx;
    const float *a = arr->a, *bb = arr->b;
    float* d = arr->d;
    const __m128 three = _mm_set1_ps(3.0f);
    size_t i = b, h = b + head(d, b, e);
    for (; i < h; i++) d[i] = a[i] + 3.0f * bb[i];
    for (; i + 4 <= e; i += 4)
        _mm_stream_ps(d + i, _mm_add_ps(_mm_loadu_ps(a + i), _mm_mul_ps(three, _mm_loadu_ps(bb + i))));
    for (; i < e; i++) d[i] = a[i] + 3.0f * bb[i];
    _mm_sfence();
}

static float fused_one(float a, float b, float c) {
    float t = a * b;
    t = t + c;
    return (t > 0.0f ? t : 0.0f) * 0.5f;
}

void stream_fused_nt(void* ctx, size_t b, size_t e) {
    bench_arrays* arr = ctx;
    const float *a = arr->a, *bb = arr->b, *c = arr->c;
    float* y = arr->y;
    const __m128 zero = _mm_setzero_ps(), half = _mm_set1_ps(0.5f);
    size_t i = b, h = b + head(y, b, e);
    for (; i < h; i++) y[i] = fused_one(a[i], bb[i], c[i]);
    for (; i + 4 <= e; i += 4) {
        __m128 t = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(bb + i)),
                              _mm_loadu_ps(c + i));
        // max(t, 0) returns 0 for NaN t, as the C select does.
        _mm_stream_ps(y + i, _mm_mul_ps(_mm_max_ps(t, zero), half));
    }
    for (; i < e; i++) y[i] = fused_one(a[i], bb[i], c[i]);
    _mm_sfence();
}

#else
typedef int stream_nt_unused;   // ISO C wants a declaration in every translation unit
#endif
