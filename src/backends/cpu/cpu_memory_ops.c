// ld / st / atom over a chunk of lanes: bounds checks against the bound range (or the shared
// array), a contiguous fast path (index[i] == index[0] + i: one range check and one copy), a
// per-lane path for masks and scattered indices, and real atomics on global memory.
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "backends/cpu/cpu_internal.h"
#include "base/dtype.h"

typedef struct mem_view {
    uint8_t* base;
    uint64_t count;
    size_t es;              // element size in memory
    const char* what;       // "buffer" / "shared array"
    const char* name;
} mem_view;

static void view_of(const cpu_chunk* c, const cpu_op* op, mem_view* v) {
    const cpu_plan* p = c->L->plan;
    v->es = hg_dtype_size((hg_dtype)op->type);
    if (op->space == HG_SPACE_SHARED) {
        const hg_shared_decl* d = &p->prog->shared[op->mem];
        v->base = c->w->shared + p->shared_off[op->mem];
        v->count = d->count ? d->count : c->L->dyn_shared_count;
        v->what = "shared array";
        v->name = d->name;
    } else {
        v->base = c->L->args[op->mem].base;
        v->count = c->L->args[op->mem].count;
        v->what = "buffer";
        v->name = p->prog->params[op->mem].name;
    }
}

// If the index lanes are index[0] + i (without wrapping), stores index[0] in *lo and returns 1.
#define CONTIG(T, U, TMAX, SIGNED)                                                                \
    {                                                                                     \
        const U* x = idx;                                                                 \
        U x0 = x[0];                                                                      \
        U bad = 0;                                                                        \
        for (uint32_t i = 0; i < n; i++) bad |= (U)(x[i] ^ (U)(x0 + (U)i));               \
        if (bad || (SIGNED && (x0 >> (sizeof(U) * 8 - 1))) || (uint64_t)x0 > (uint64_t)(TMAX) - (n - 1)) return 0; \
        *lo = (int64_t)x0;                                                                \
        return 1;                                                                         \
    }
static int contiguous(const void* idx, uint8_t type, uint32_t n, int64_t* lo) {
    switch (type) {
    case HG_DTYPE_I32: CONTIG(int32_t, uint32_t, INT32_MAX, 1)
    case HG_DTYPE_U32: CONTIG(uint32_t, uint32_t, UINT32_MAX, 0)
    case HG_DTYPE_I64: CONTIG(int64_t, uint64_t, INT64_MAX, 1)
    case HG_DTYPE_U64: CONTIG(int64_t, uint64_t, INT64_MAX, 1)
    default: return 0;
    }
}

// Widens the index lanes to int64 (u64 values >= 2^63 become negative: out of bounds).
static void widen(int64_t* d, const void* idx, uint8_t type, uint32_t n) {
#define WIDEN(T) { const T* x = idx; for (uint32_t i = 0; i < n; i++) d[i] = (int64_t)x[i]; break; }
    switch (type) {
    case HG_DTYPE_I8: WIDEN(int8_t)
    case HG_DTYPE_I16: WIDEN(int16_t)
    case HG_DTYPE_I32: WIDEN(int32_t)
    case HG_DTYPE_I64: WIDEN(int64_t)
    case HG_DTYPE_U8: WIDEN(uint8_t)
    case HG_DTYPE_U16: WIDEN(uint16_t)
    case HG_DTYPE_U32: WIDEN(uint32_t)
    default: WIDEN(uint64_t)
    }
#undef WIDEN
}

static void index_text(uint8_t type, int64_t v, char* buf, size_t len) {
    if (type == HG_DTYPE_U64) snprintf(buf, len, "%" PRIu64, (uint64_t)v);
    else snprintf(buf, len, "%" PRId64, v);
}

static int fail_oob(cpu_chunk* c, const cpu_op* op, uint32_t pc, uint32_t lane, int64_t index,
                    const mem_view* v) {
    const hg_prog* g = c->L->plan->prog;
    char lanes[160], text[256], ix[48], valid[64];
    hg_cpu_lane_name(c, lane, lanes, sizeof lanes);
    hg_instr_text(g, pc, text, sizeof text);
    index_text(op->idx_type, index, ix, sizeof ix);
    if (op->kind == CPU_K_LDV || op->kind == CPU_K_STV) {   // the run's first index
        size_t l = strlen(ix);
        snprintf(ix + l, sizeof ix - l, " (+%u)", (unsigned)op->aop - 1);
    }
    if (v->count)
        snprintf(valid, sizeof valid, "valid indices 0..%" PRIu64, v->count - 1);
    else
        snprintf(valid, sizeof valid, "it is empty: no index is valid");
    hg_cpu_fail(c->L, HG_ERR_OUT_OF_BOUNDS,
                "kernel '%s': %s: instruction %u `%s`: index %s is out of bounds for %s '%s' "
                "of %" PRIu64 " elements (%s); the access was not made",
                g->name, lanes, pc, text, ix, v->what, v->name, v->count, valid);
    return -1;
}

// Widens the indices and checks every active lane; 0 when all are in bounds.
static int check_lanes(cpu_chunk* c, const cpu_op* op, uint32_t pc, const mem_view* v,
                       int64_t** out) {
    const cpu_plan* p = c->L->plan;
    int64_t* ix = cpu_slot(c, p->idx_slot);
    widen(ix, cpu_slot(c, op->a), op->idx_type, c->n);
    const uint8_t* m = c->cur;
    uint64_t bad = 0;
    for (uint32_t i = 0; i < c->n; i++)
        bad |= (uint64_t)(m[i] && (uint64_t)ix[i] >= v->count);   // negative -> huge
    if (bad)
        for (uint32_t i = 0; i < c->n; i++)
            if (m[i] && (uint64_t)ix[i] >= v->count) return fail_oob(c, op, pc, i, ix[i], v);
    *out = ix;
    return 0;
}

// ldv / stv, lane by lane: every active lane's run index .. index+w-1 is checked before any
// is accessed (nothing moves on an out-of-bounds run); register k of the run holds element
// index + k.
int hg_cpu_exec_vec(cpu_chunk* c, const cpu_op* op, uint32_t pc) {
    mem_view v;
    view_of(c, op, &v);
    const hg_cpu_kernels* k = c->L->k;
    uint32_t w = op->aop;
    int store = op->kind == CPU_K_STV;
    if (store && op->space == HG_SPACE_GLOBAL)
        hg_cpu_unborrow(c, v.base, v.base + v.count * v.es);
    const cpu_plan* p = c->L->plan;
    int64_t* ix = cpu_slot(c, p->idx_slot);
    widen(ix, cpu_slot(c, op->a), op->idx_type, c->n);
    const uint8_t* m = c->cur;
    for (uint32_t i = 0; i < c->n; i++)   // negative -> huge
        if (m[i] && ((uint64_t)ix[i] >= v.count || v.count - (uint64_t)ix[i] < w))
            return fail_oob(c, op, pc, i, ix[i], &v);
    unsigned ss = hg_cpu_storage_size(op->type);
    int full = c->cnt == c->n;
    uint32_t reg = store ? op->b : op->d;
    for (uint32_t q = 0; q < w; q++) {
        uint8_t* r = store ? cpu_slot(c, reg + q) : cpu_wslot(c, reg + q, full);
        for (uint32_t i = 0; i < c->n; i++) {
            if (!m[i]) continue;
            uint8_t* mem = v.base + (size_t)(ix[i] + q) * v.es;
            if (store) k->store[op->type](mem, r + (size_t)i * ss, 1);
            else k->load[op->type](r + (size_t)i * ss, mem, 1);
        }
    }
    return 0;
}

// Whether every lane is active and the indices are first..first+n-1 in bounds; *lo = first.
static int full_range(const cpu_chunk* c, const cpu_op* op, const mem_view* v, int64_t* lo) {
    if (c->cnt != c->n) return 0;
    if (c->ptr[op->a] == c->gid_x && c->L->x_linear) *lo = (int64_t)c->first;  // %gid.x, 1-D
    else if (!contiguous(cpu_slot(c, op->a), op->idx_type, c->n, lo)) return 0;
    return (uint64_t)*lo + c->n <= v->count;
}

int hg_cpu_exec_ld(cpu_chunk* c, const cpu_op* op, uint32_t pc) {
    mem_view v;
    view_of(c, op, &v);
    const hg_cpu_kernels* k = c->L->k;
    int64_t lo;
    if (full_range(c, op, &v, &lo)) {
        uint8_t* src = v.base + (size_t)lo * v.es;
        int plain = op->type != HG_DTYPE_BOOL && op->type != HG_DTYPE_F16 && op->type != HG_DTYPE_BF16;
        if (plain && op->space == HG_SPACE_GLOBAL) {
            // Borrow the buffer's elements instead of copying them (given back before any
            // write to that memory; see hg_cpu_unborrow).
            c->ptr[op->d] = src;
            uint32_t j = 0;
            while (j < c->nborrowed && c->borrowed[j] != op->d) j++;
            if (j == c->nborrowed) c->borrowed[c->nborrowed++] = op->d;
            return 0;
        }
        k->load[op->type](cpu_wslot(c, op->d, 1), src, c->n);
        return 0;
    }
    int64_t* ix;
    if (check_lanes(c, op, pc, &v, &ix)) return -1;
    const uint8_t* m = c->cur;
    unsigned ss = hg_cpu_storage_size(op->type);
    uint8_t* d = cpu_wslot(c, op->d, c->cnt == c->n);
    switch (op->type) {
    case HG_DTYPE_BOOL: case HG_DTYPE_F16: case HG_DTYPE_BF16:
        for (uint32_t i = 0; i < c->n; i++)
            if (m[i]) k->load[op->type](d + (size_t)i * ss, v.base + (size_t)ix[i] * v.es, 1);
        break;
    default:
        for (uint32_t i = 0; i < c->n; i++)
            if (m[i]) memcpy(d + (size_t)i * ss, v.base + (size_t)ix[i] * v.es, ss);
        break;
    }
    return 0;
}

void* hg_cpu_store_target(cpu_chunk* c, const cpu_op* st) {
    mem_view v;
    view_of(c, st, &v);
    int64_t lo;
    if (!full_range(c, st, &v, &lo)) return NULL;
    hg_cpu_unborrow(c, v.base, v.base + v.count * v.es);
    return v.base + (size_t)lo * v.es;
}

int hg_cpu_exec_st(cpu_chunk* c, const cpu_op* op, uint32_t pc) {
    mem_view v;
    view_of(c, op, &v);
    const hg_cpu_kernels* k = c->L->k;
    if (op->space == HG_SPACE_GLOBAL)
        hg_cpu_unborrow(c, v.base, v.base + v.count * v.es);
    const uint8_t* src = cpu_slot(c, op->b);
    int64_t lo;
    if (full_range(c, op, &v, &lo)) {
        k->store[op->type](v.base + (size_t)lo * v.es, src, c->n);
        return 0;
    }
    // Every active lane is checked before any is written, so nothing lands out of bounds.
    int64_t* ix;
    if (check_lanes(c, op, pc, &v, &ix)) return -1;
    const uint8_t* m = c->cur;
    unsigned ss = hg_cpu_storage_size(op->type);
    for (uint32_t i = 0; i < c->n; i++)
        if (m[i]) k->store[op->type](v.base + (size_t)ix[i] * v.es, src + (size_t)i * ss, 1);
    return 0;
}

// ---- atomics --------------------------------------------------------------------------------
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static double u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
static uint64_t d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }

// min/max with the ISA's float semantics (NaN wins, -0 < +0), on bit patterns.
static uint64_t fminmax_bits(uint64_t a, uint64_t b, int is64, int want_max) {
    double x = is64 ? u2d(a) : (double)u2f((uint32_t)a);
    double y = is64 ? u2d(b) : (double)u2f((uint32_t)b);
    if (x != x) return a;
    if (y != y) return b;
    if (x == y) return want_max ? (a & b) : (a | b);
    return (want_max ? x > y : x < y) ? a : b;
}

// new value of old OP v for one element type (bits in the low bytes).
static uint64_t combine(uint8_t type, unsigned aop, uint64_t old, uint64_t v) {
    switch (aop) {
    case HG_ATOMIC_ADD:
        switch (type) {
        case HG_DTYPE_F32: return f2u(u2f((uint32_t)old) + u2f((uint32_t)v));
        case HG_DTYPE_F64: return d2u(u2d(old) + u2d(v));
        case HG_DTYPE_I32: case HG_DTYPE_U32: return (uint32_t)(old + v);
        default: return old + v;
        }
    case HG_ATOMIC_MIN:
    case HG_ATOMIC_MAX: {
        int mx = aop == HG_ATOMIC_MAX;
        switch (type) {
        case HG_DTYPE_F32: return fminmax_bits(old, v, 0, mx);
        case HG_DTYPE_F64: return fminmax_bits(old, v, 1, mx);
        case HG_DTYPE_I32: {
            int32_t a = (int32_t)(uint32_t)old, b = (int32_t)(uint32_t)v;
            return (mx ? a > b : a < b) ? old : v;
        }
        case HG_DTYPE_I64: {
            int64_t a = (int64_t)old, b = (int64_t)v;
            return (mx ? a > b : a < b) ? old : v;
        }
        default: return (mx ? old > v : old < v) ? old : v;
        }
    }
    default: return v;  // exch
    }
}

// One atomic read-modify-write; returns the old bits. `shared`: the block's own memory, which
// only this worker touches.
static uint64_t atom_one(void* ptr, uint8_t type, unsigned aop, uint64_t v, uint64_t nv, int shared) {
    int wide = hg_dtype_size((hg_dtype)type) == 8;
    if (shared) {
        uint64_t old;
        if (wide) memcpy(&old, ptr, 8);
        else { uint32_t o; memcpy(&o, ptr, 4); old = o; }
        uint64_t res = aop == HG_ATOMIC_CAS ? (old == v ? nv : old) : combine(type, aop, old, v);
        if (wide) memcpy(ptr, &res, 8);
        else { uint32_t r = (uint32_t)res; memcpy(ptr, &r, 4); }
        return old;
    }
    if (wide) {
        uint64_t* p = ptr;
        if (aop == HG_ATOMIC_EXCH) return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
        if (aop == HG_ATOMIC_ADD && type != HG_DTYPE_F64)
            return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
        uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
        if (aop == HG_ATOMIC_CAS) {
            old = v;
            __atomic_compare_exchange_n(p, &old, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            return old;
        }
        while (!__atomic_compare_exchange_n(p, &old, combine(type, aop, old, v), 1,
                                            __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {}
        return old;
    }
    uint32_t* p = ptr;
    uint32_t v32 = (uint32_t)v;
    if (aop == HG_ATOMIC_EXCH) return __atomic_exchange_n(p, v32, __ATOMIC_SEQ_CST);
    if (aop == HG_ATOMIC_ADD && type != HG_DTYPE_F32)
        return __atomic_fetch_add(p, v32, __ATOMIC_SEQ_CST);
    uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (aop == HG_ATOMIC_CAS) {
        old = v32;
        __atomic_compare_exchange_n(p, &old, (uint32_t)nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return old;
    }
    while (!__atomic_compare_exchange_n(p, &old, (uint32_t)combine(type, aop, old, v32), 1,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {}
    return old;
}

static uint64_t lane_bits(const uint8_t* reg, uint32_t i, int wide) {
    if (wide) { uint64_t x; memcpy(&x, reg + (size_t)i * 8, 8); return x; }
    uint32_t x;
    memcpy(&x, reg + (size_t)i * 4, 4);
    return x;
}

int hg_cpu_exec_atom(cpu_chunk* c, const cpu_op* op, uint32_t pc) {
    mem_view v;
    view_of(c, op, &v);
    int64_t* ix;
    if (check_lanes(c, op, pc, &v, &ix)) return -1;
    if (op->space == HG_SPACE_GLOBAL) hg_cpu_unborrow(c, NULL, NULL);
    int wide = v.es == 8;
    const uint8_t* val = cpu_slot(c, op->b);
    const uint8_t* nv = op->c == CPU_NO_SLOT ? NULL : cpu_slot(c, op->c);
    uint8_t* d = op->d == CPU_NO_SLOT ? NULL : cpu_wslot(c, op->d, c->cnt == c->n);
    int shared = op->space == HG_SPACE_SHARED;
    const uint8_t* m = c->cur;
    // Lanes apply in lane order.
    for (uint32_t i = 0; i < c->n; i++) {
        if (!m[i]) continue;
        uint64_t old = atom_one(v.base + (size_t)ix[i] * v.es, op->type, op->aop,
                                lane_bits(val, i, wide), nv ? lane_bits(nv, i, wide) : 0, shared);
        if (d) {
            if (wide) memcpy(d + (size_t)i * 8, &old, 8);
            else { uint32_t o = (uint32_t)old; memcpy(d + (size_t)i * 4, &o, 4); }
        }
    }
    return 0;
}
