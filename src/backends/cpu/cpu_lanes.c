// The lane-level helpers under every execution file of the CPU backend (cpu_internal.h says
// the order): the launch's first error, lane coordinates and names, constant lanes, the lazy
// %gid.x, borrowed lanes given back, and the gathers of strided row arguments.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "backends/cpu/cpu_internal.h"
#include "base/error.h"
#include "base/transpose.h"

void hg_cpu_fail(cpu_launch* L, hg_status s, const char* fmt, ...) {
    // The first failing worker claims the error (others see `failed` and stop); the message
    // is read only after every worker has returned from the pool.
    int expected = 0;
    if (!atomic_compare_exchange_strong(&L->failed, &expected, 1)) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->msg, sizeof L->msg, fmt, ap);
    va_end(ap);
    L->err = s;
}

hg_cpu_lane_pos hg_cpu_lane_at(const cpu_launch* L, uint64_t lane) {
    const hg_launch_config* g = &L->cfg;
    hg_cpu_lane_pos p;
    uint64_t blk = lane / L->lanes_per_block, t = lane % L->lanes_per_block;
    p.t[0] = t % g->block.x;
    p.t[1] = (t / g->block.x) % g->block.y;
    p.t[2] = t / ((uint64_t)g->block.x * g->block.y);
    p.c[0] = blk % g->grid.x;
    p.c[1] = (blk / g->grid.x) % g->grid.y;
    p.c[2] = blk / ((uint64_t)g->grid.x * g->grid.y);
    return p;
}

void hg_cpu_lane_name(const cpu_chunk* c, uint32_t i, char* buf, size_t len) {
    hg_cpu_lane_pos p = hg_cpu_lane_at(c->L, c->first + i);
    snprintf(buf, len, "block (%llu,%llu,%llu) lane (%llu,%llu,%llu)",
             (unsigned long long)p.c[0], (unsigned long long)p.c[1], (unsigned long long)p.c[2],
             (unsigned long long)p.t[0], (unsigned long long)p.t[1], (unsigned long long)p.t[2]);
}

void hg_cpu_fill_lanes(void* dst, uint64_t bits, unsigned size, uint32_t n) {
    switch (size) {
    case 1: memset(dst, (int)(uint8_t)bits, n); break;
    case 2: { uint16_t* d = dst; for (uint32_t i = 0; i < n; i++) d[i] = (uint16_t)bits; break; }
    case 4: { uint32_t* d = dst; for (uint32_t i = 0; i < n; i++) d[i] = (uint32_t)bits; break; }
    default: { uint64_t* d = dst; for (uint32_t i = 0; i < n; i++) d[i] = bits; break; }
    }
}

// Value bits of a constant in register storage (f16/bf16 widened to float, bool 0/1).
uint64_t hg_cpu_storage_bits(uint8_t type, uint64_t bits) {
    switch (type) {
    case HG_DTYPE_BOOL: return bits != 0;
    case HG_DTYPE_F16: {
        float f = hg_f16_to_f32((uint16_t)bits);
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    case HG_DTYPE_BF16: return (uint64_t)((uint32_t)(uint16_t)bits << 16);
    default: return bits;
    }
}

void hg_cpu_fill_lazy(cpu_chunk* c) {
    hg_cpu_fill_iota(c->lazy, (uint32_t)c->first, c->n);
    c->lazy = NULL;
}

void hg_cpu_unborrow(cpu_chunk* c, const uint8_t* lo, const uint8_t* hi) {
    uint32_t keep = 0;
    for (uint32_t j = 0; j < c->nborrowed; j++) {
        uint32_t r = c->borrowed[j];
        const uint8_t* q = c->ptr[r];
        if (q >= c->base && q < c->arena_end) continue;  // took its storage back already
        size_t len = (size_t)c->n * c->L->plan->reg_size[r];
        if (lo == NULL || (q < hi && q + len > lo)) {
            memcpy(cpu_own(c, r), q, len);
            c->ptr[r] = cpu_own(c, r);
        } else {
            c->borrowed[keep++] = r;
        }
    }
    c->nborrowed = keep;
}

#define GATHER(T)                                                                  \
    {                                                                              \
        T* o = (T*)(void*)d;                                                       \
        for (uint64_t i = 0; i < n; i++) memcpy(&o[i], s + (int64_t)i * step, sizeof(T)); \
        return;                                                                    \
    }
void hg_cpu_gather_lanes(uint8_t* d, const uint8_t* s, uint64_t n, int64_t step, size_t es) {
    switch (es) {   // constant element sizes: plain loads and stores
    case 1: GATHER(uint8_t)
    case 2: GATHER(uint16_t)
    case 4: GATHER(uint32_t)
    case 8: GATHER(uint64_t)
    default:
        for (uint64_t i = 0; i < n; i++) memcpy(d + i * es, s + (int64_t)i * step, es);
    }
}
#undef GATHER

void hg_cpu_gather_subrows(uint8_t* d, const uint8_t* s, uint64_t nsub, uint64_t cols,
                           int64_t sub_step, int64_t lane, size_t es) {
    if (es == 4 && sub_step == 4) {
        hg_transpose_32(d, (int64_t)cols * 4, s, lane, (int64_t)cols, (int64_t)nsub);
        return;
    }
    for (uint64_t t = 0; t < nsub; t++) {
        if (lane == (int64_t)es) memcpy(d + t * cols * es, s + (int64_t)t * sub_step, cols * es);
        else hg_cpu_gather_lanes(d + t * cols * es, s + (int64_t)t * sub_step, cols, lane, es);
    }
}

#define SCATTER(T)                                                                        \
    {                                                                                     \
        const T* c = (const T*)(const void*)s;                                            \
        for (uint64_t t = 0; t < nsub; t++)                                               \
            for (uint64_t i = 0; i < cols; i++)                                           \
                memcpy(d + (int64_t)t * sub_step + (int64_t)i * lane, &c[t * cols + i], sizeof(T)); \
        return;                                                                           \
    }
void hg_cpu_scatter_subrows(uint8_t* d, const uint8_t* s, uint64_t nsub, uint64_t cols,
                            int64_t sub_step, int64_t lane, size_t es) {
    if (lane == (int64_t)es) {   // contiguous sub-rows (a slice's rows): one copy each
        for (uint64_t t = 0; t < nsub; t++)
            memcpy(d + (int64_t)t * sub_step, s + t * cols * es, cols * es);
        return;
    }
    switch (es) {
    case 1: SCATTER(uint8_t)
    case 2: SCATTER(uint16_t)
    case 4:
        if (sub_step == 4) {
            hg_transpose_32(d, lane, s, (int64_t)cols * 4, (int64_t)nsub, (int64_t)cols);
            return;
        }
        SCATTER(uint32_t)
    case 8: SCATTER(uint64_t)
    default:
        for (uint64_t t = 0; t < nsub; t++)
            for (uint64_t i = 0; i < cols; i++)
                memcpy(d + (int64_t)t * sub_step + (int64_t)i * lane, s + (t * cols + i) * es, es);
    }
}
#undef SCATTER

// Typed loops: the compiler vectorizes the fills.
#define SPREAD(T)                                                                         \
    {                                                                                     \
        T* o = (T*)(void*)d;                                                              \
        for (uint64_t g = 0; g < n / cols; g++, o += cols) {                              \
            T v;                                                                          \
            memcpy(&v, s + (int64_t)g * step, sizeof v);                                  \
            for (uint64_t c = 0; c < cols; c++) o[c] = v;                                 \
        }                                                                                 \
        return;                                                                           \
    }
void hg_cpu_spread_lanes(uint8_t* d, const uint8_t* s, uint64_t n, uint64_t cols, int64_t step,
                         size_t es) {
    switch (es) {
    case 1: SPREAD(uint8_t)
    case 2: SPREAD(uint16_t)
    case 4: SPREAD(uint32_t)
    case 8: SPREAD(uint64_t)
    default:
        for (uint64_t i = 0; i < n; i++) memcpy(d + i * es, s + (int64_t)(i / cols) * step, es);
    }
}
#undef SPREAD

#define GATHER_TILE(T)                                                                    \
    {                                                                                     \
        T* o = (T*)(void*)d;                                                              \
        for (uint64_t i = 0; i < n; i++) {                                                \
            const uint8_t* src = s + (int64_t)i * step;                                   \
            for (uint64_t t = 0; t < nr; t++) memcpy(&o[t * n + i], src + t * sizeof(T), sizeof(T)); \
        }                                                                                 \
        return;                                                                           \
    }
void hg_cpu_gather_tile(uint8_t* d, const uint8_t* s, uint64_t n, uint64_t nr, int64_t step,
                        size_t es) {
    switch (es) {
    case 1: GATHER_TILE(uint8_t)
    case 2: GATHER_TILE(uint16_t)
    case 4: hg_transpose_32(d, (int64_t)(n * 4), s, step, (int64_t)n, (int64_t)nr); return;
    case 8: GATHER_TILE(uint64_t)
    default:
        for (uint64_t t = 0; t < nr; t++) hg_cpu_gather_lanes(d + t * n * es, s + t * es, n, step, es);
    }
}
#undef GATHER_TILE
