// The public elementwise ops (hg_unary, hg_binary, hg_binary_scalar, hg_where, hg_clip,
// hg_clip_scalar, hg_fma, hg_cast): argument checks, result dtype and shape, the optional
// output, and a per-executor cache of compiled one-node kernels keyed by a 64-bit summary of
// (op, dtypes, store dtype). Layout classes are specialized inside each kernel.
//
// The repeated-call path is kept short: tensors are checked with a formatting-free fast check
// (falling back to hg_op_input / hg_op_output only to report an error), the cache lookup hashes
// one integer, and the kernel is launched under ex->launch_lock without building anything.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "base/shape.h"
#include "ops/elementwise/ewise.h"
#include "ops/elementwise/ewise_grad.h"
#include "ops/elementwise/ewise_internal.h"
#include "ops/common/op_common.h"
#include "tensor/tensor_internal.h"

// ---------------------------------------------------------------------------------------------
// Per-executor cache of eager kernels: open addressing on the 64-bit key.
// ---------------------------------------------------------------------------------------------

typedef struct ew_cache {
    uint64_t* keys;            // 0 = empty (keys are never 0: bit 63 is always set)
    hg_ew_kernel** kernels;
    uint32_t cap, count;
} ew_cache;

static void* cache_create(void) { return calloc(1, sizeof(ew_cache)); }

static void cache_destroy(void* p) {
    ew_cache* c = p;
    if (!c) return;
    for (uint32_t i = 0; i < c->cap; i++)
        if (c->keys[i]) hg_ew_kernel_destroy(c->kernels[i]);
    free(c->keys);
    free(c->kernels);
    free(c);
}

static uint32_t slot_of(uint64_t key, uint32_t mask) {
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 32;
    return (uint32_t)key & mask;
}

static hg_ew_kernel* cache_find(const ew_cache* c, uint64_t key) {
    if (!c->cap) return NULL;
    uint32_t mask = c->cap - 1;
    for (uint32_t i = slot_of(key, mask);; i = (i + 1) & mask) {
        if (c->keys[i] == key) return c->kernels[i];
        if (!c->keys[i]) return NULL;
    }
}

static hg_status cache_insert(ew_cache* c, uint64_t key, hg_ew_kernel* k) {
    if (2 * (c->count + 1) > c->cap) {   // keep the load factor at most 1/2
        uint32_t ncap = c->cap ? c->cap * 2 : 64;
        uint64_t* nk = calloc(ncap, sizeof *nk);
        hg_ew_kernel** nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory growing the elementwise cache");
        }
        for (uint32_t i = 0; i < c->cap; i++) {
            if (!c->keys[i]) continue;
            uint32_t j = slot_of(c->keys[i], ncap - 1);
            while (nk[j]) j = (j + 1) & (ncap - 1);
            nk[j] = c->keys[i];
            nv[j] = c->kernels[i];
        }
        free(c->keys);
        free(c->kernels);
        c->keys = nk;
        c->kernels = nv;
        c->cap = ncap;
    }
    uint32_t j = slot_of(key, c->cap - 1);
    while (c->keys[j]) j = (j + 1) & (c->cap - 1);
    c->keys[j] = key;
    c->kernels[j] = k;
    c->count++;
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// One call
// ---------------------------------------------------------------------------------------------

enum { K_UNARY = 1, K_BINARY, K_WHERE, K_CLIP, K_FMA, K_CAST, K_ACT_GRAD };
#define NO_DTYPE 15u

typedef struct ew_call {
    hg_op_ctx c;
    int nin;
    hg_ew_arg in[3];
    const char* names[3];
    hg_dtype dt[3];
    int32_t ndim;
    int64_t shape[HG_MAX_DIMS];
    // what the expression is
    int kind;
    int32_t op;
    int flags;           // binary: 1 = the scalar is the first operand; clip: 1 lo, 2 hi
    hg_dtype result, store;
} ew_call;

// Formatting-free check of an input tensor on the repeated-call path; anything unusual goes
// through hg_op_input, which reports the exact problem.
static inline __attribute__((always_inline)) hg_status check_input(ew_call* k, int i,
                                                                  const hg_tensor* t,
                                                                  const char* name) {
    hg_buffer_obj* b = hg_ew_tensor_fast_check(t);
    int ok = b && (!k->c.ex || k->c.ex == b->ex);
    if (!ok) {
        hg_status s = hg_op_input(&k->c, t, name, &b, NULL);
        if (s) return s;
    } else if (__builtin_expect(k->c.trace.t0 != 0, 0)) {
        hg_op_trace_tensor(&k->c, t, 0);
    }
    if (!k->c.ex) k->c.ex = b->ex;
    k->in[i].t = t;
    k->names[i] = name;
    k->in[i].buf = b;
    k->in[i].bits = 0;
    k->dt[i] = t->dtype;
    return HG_OK;
}

static void set_scalar(ew_call* k, int i, hg_dtype dt, hg_scalar s) {
    k->in[i].t = NULL;
    k->in[i].buf = NULL;
    k->in[i].bits = hg_ew_scalar_bits(dt, s);
    k->dt[i] = dt;
}

// Broadcasts the shapes of the tensor inputs into k->ndim / k->shape.
static hg_status broadcast_all(ew_call* k) {
    k->ndim = 0;
    // The common case first: every input is a tensor of one same shape.
    const hg_tensor* t0 = k->in[0].t;
    int same = t0 != NULL;
    for (int i = 1; same && i < k->nin; i++) {
        const hg_tensor* t = k->in[i].t;
        same = t && t->ndim == t0->ndim;
        for (int32_t d = 0; same && d < t0->ndim; d++) same = t->shape[d] == t0->shape[d];
    }
    if (same) {
        k->ndim = t0->ndim;
        for (int32_t d = 0; d < t0->ndim; d++) k->shape[d] = t0->shape[d];
        return HG_OK;
    }
    for (int i = 0; i < k->nin; i++) {
        const hg_tensor* t = k->in[i].t;
        if (!t) continue;
        int32_t nd = t->ndim > k->ndim ? t->ndim : k->ndim;
        int64_t r[HG_MAX_DIMS];
        for (int32_t d = 0; d < nd; d++) {
            int32_t da = d - (nd - k->ndim), db = d - (nd - t->ndim);
            int64_t sa = da >= 0 ? k->shape[da] : 1, sb = db >= 0 ? t->shape[db] : 1;
            if (sa != sb && sa != 1 && sb != 1) {
                int32_t on;
                int64_t os[HG_MAX_DIMS];
                hg_status s = hg_broadcast_shapes(k->ndim, k->shape, t->ndim, t->shape, &on, os);
                return hg_error_prefix(s ? s : HG_ERR_SIZE_MISMATCH, "%s", k->c.fn);
            }
            r[d] = sa == 1 ? sb : sa;
        }
        k->ndim = nd;
        memcpy(k->shape, r, sizeof(int64_t) * (size_t)nd);
    }
    return HG_OK;
}

static uint64_t call_key(const ew_call* k) {
    uint64_t key = (uint64_t)1 << 63;
    key |= (uint64_t)k->kind | ((uint64_t)(uint32_t)k->op << 4) | ((uint64_t)k->flags << 12);
    for (int i = 0; i < 3; i++)
        key |= (uint64_t)(i < k->nin ? (unsigned)k->dt[i] : NO_DTYPE) << (16 + 4 * i);
    key |= (uint64_t)k->store << 28;
    for (int i = 0; i < k->nin; i++)   // scalar inputs are 0-d in the expression
        if (!k->in[i].t) key |= (uint64_t)1 << (32 + i);
    return key;
}

static hg_status build_expr(const ew_call* k, hg_ew_expr* e) {
    hg_ew_expr_init(e, k->ndim, k->shape);
    int32_t in[3];
    for (int i = 0; i < k->nin; i++) {
        const hg_tensor* t = k->in[i].t;
        in[i] = t ? hg_ew_input(e, k->dt[i], t->ndim, t->shape) : hg_ew_input(e, k->dt[i], 0, NULL);
        if (in[i] < 0) return HG_ERR_INVALID_ARGUMENT;
    }
    int32_t y = -1;
    switch (k->kind) {
    case K_UNARY: y = hg_ew_unary(e, (hg_unary_op)k->op, in[0]); break;
    case K_BINARY: y = hg_ew_binary(e, (hg_binary_op)k->op, in[0], in[1]); break;
    case K_WHERE: y = hg_ew_where(e, in[0], in[1], in[2]); break;
    case K_FMA: y = hg_ew_fma(e, in[0], in[1], in[2]); break;
    case K_CAST: y = hg_ew_cast(e, in[0], k->result); break;
    case K_ACT_GRAD: {   // inputs g, then x and y where flags has HG_EW_GRAD_X / _Y
        hg_dtype t = hg_ew_compute_dtype(k->result);
        int32_t v[3] = {-1, -1, -1};
        for (int i = 0; i < k->nin; i++)
            v[i] = k->dt[i] == t ? in[i] : hg_ew_cast(e, in[i], t);
        int32_t x = (k->flags & HG_EW_GRAD_X) ? v[1] : -1;
        int32_t yv = (k->flags & HG_EW_GRAD_Y) ? v[(k->flags & HG_EW_GRAD_X) ? 2 : 1] : -1;
        y = hg_ew_act_grad(e, (hg_unary_op)k->op, t, v[0], x, yv);
        if (y >= 0 && t != k->result) y = hg_ew_cast(e, y, k->result);
        break;
    }
    case K_CLIP: {
        int i = 1;
        y = in[0];
        if (y >= 0 && (k->flags & 1)) y = hg_ew_binary(e, HG_BINARY_MAXIMUM, y, in[i++]);
        if (y >= 0 && (k->flags & 2)) y = hg_ew_binary(e, HG_BINARY_MINIMUM, y, in[i]);
        if (y >= 0 && k->flags == 0) y = hg_ew_cast(e, y, k->result);   // a copy
        break;
    }
    default: break;
    }
    if (y < 0) return HG_ERR_INVALID_ARGUMENT;
    return hg_ew_output(e, y, k->store);
}

// Resolves out (allocating if asked), checks overlaps, runs the cached kernel.
static hg_status run_call(ew_call* k, hg_tensor* out, int allow_cast) {
    hg_op_ctx* c = &k->c;
    hg_status s;
    hg_buffer_obj* ob = NULL;
    if (!out) return hg_error(HG_ERR_NULL_POINTER, "%s: argument 'out' is NULL", c->fn);
    if (out->buffer.handle != 0) {
        // The input check (live buffer, reachable elements, executor) plus shape and dtype.
        ew_call probe;
        // Only what check_input reads (the context is large with its tracing fields).
        probe.c.fn = c->fn;
        probe.c.ex = c->ex;
        probe.c.trace.t0 = 0;
        int ok = !check_input(&probe, 0, out, "out") && out->ndim == k->ndim &&
                 (out->dtype == k->result ||
                  (allow_cast && hg_op_can_cast_same_kind(k->result, out->dtype)));
        for (int32_t d = 0; ok && d < k->ndim; d++)
            ok = out->shape[d] == k->shape[d] && (out->strides[d] != 0 || out->shape[d] <= 1);
        ob = ok ? probe.in[0].buf : NULL;
        if (!ok) {
            if ((s = hg_op_output(c, out, k->result, k->ndim, k->shape, allow_cast))) return s;
            ob = hg_handle_get(out->buffer.handle, HG_HANDLE_BUFFER);
        } else if (c->trace.t0) {
            hg_op_trace_tensor(c, out, 1);
        }
        // numpy's rule: an input overlapping out other than as out's exact view is read first.
        for (int i = 0; i < k->nin; i++)
            if ((s = hg_op_read_first_buf(c, out, ob, &k->in[i].t, &k->in[i].buf, 1))) return s;
    } else {
        if ((s = hg_op_output(c, out, k->result, k->ndim, k->shape, allow_cast))) return s;
        ob = hg_handle_get(out->buffer.handle, HG_HANDLE_BUFFER);
    }
    k->store = out->dtype;
    hg_ew_arg oa = {out, ob, 0};
    hg_executor_obj* ex = c->ex;
    ew_cache* cache = hg_executor_ext(ex, HG_EXT_EWISE, cache_create, cache_destroy);
    if (!cache)
        return hg_op_finish(c, out, hg_error(HG_ERR_OUT_OF_MEMORY,
                                             "%s: out of memory creating the kernel cache", c->fn));
    uint64_t key = call_key(k);
    pthread_mutex_lock(&ex->launch_lock);
    hg_ew_kernel* kern = cache_find(cache, key);
    s = HG_OK;
    if (!kern) {
        hg_ew_expr* e = malloc(sizeof *e);
        if (!e) s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: out of memory", c->fn);
        if (!s) s = build_expr(k, e);
        if (!s) s = hg_ew_kernel_create_locked(ex, e, &kern);
        free(e);
        if (!s && (s = cache_insert(cache, key, kern))) hg_ew_kernel_destroy(kern);
        if (s) s = hg_error_prefix(s, "%s", c->fn);
    }
    if (!s) s = hg_ew_kernel_run_locked(kern, k->in, &oa);
    pthread_mutex_unlock(&ex->launch_lock);
    return hg_op_finish(c, out, s);
}

// The cleanup of every ew_call (EW_CALL): with tracing on, the call's span, named by its op
// ("add", "exp") rather than the C function.
static void ew_call_done(ew_call* k) {
    if (k->c.copies) hg_op_copies_release(&k->c);
    if (!k->c.trace.t0) return;
    const char* name = k->kind == K_UNARY    ? hg_unary_op_name((hg_unary_op)k->op)
                       : k->kind == K_BINARY ? hg_binary_op_name((hg_binary_op)k->op)
                                             : k->c.fn;
    hg_op_trace_end(&k->c, name);
}
#define EW_CALL(k) ew_call k __attribute__((cleanup(ew_call_done)))

static void call_begin(ew_call* k, const char* fn, int kind, int32_t op, int nin) {
    hg_op_begin(&k->c, fn);
    k->nin = nin;
    k->kind = kind;
    k->op = op;
    k->flags = 0;
}

// ---------------------------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------------------------

hg_status hg_unary(hg_unary_op op, const hg_tensor* x, hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_unary", K_UNARY, (int32_t)op, 1);
    hg_status s;
    if ((s = check_input(&k, 0, x, "x"))) return s;
    if ((s = hg_ew_unary_dtype(op, x->dtype, &k.result))) return hg_error_prefix(s, "hg_unary");
    k.ndim = x->ndim;
    memcpy(k.shape, x->shape, sizeof k.shape);
    return run_call(&k, out, 1);
}

static hg_status negative_power(const char* fn, long long e) {
    return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: integers to negative integer powers are not "
                    "allowed (exponent %lld; numpy raises too): use a float base or exponent",
                    fn, e);
}

// numpy refuses integers to negative integer powers: an integer power whose exponent tensor is
// of a signed dtype is refused, before anything is written, when its minimum (a reduction,
// read back) is negative.
static hg_status check_int_power(const char* fn, hg_dtype result, const hg_tensor* e) {
    if (!hg_dtype_is_int((int)result) || !hg_dtype_is_signed_int((int)e->dtype)) return HG_OK;
    if (hg_view_numel(e) == 0) return HG_OK;
    hg_tensor m;
    memset(&m, 0, sizeof m);
    hg_status s = hg_reduce(HG_REDUCE_MIN, e, 0, NULL, 0, &m);
    if (s) return hg_error_prefix(s, "%s", fn);
    union { int8_t i8; int16_t i16; int32_t i32; int64_t i64; } v = {0};
    s = hg_buffer_read(m.buffer, 0, &v, 1);
    hg_buffer_destroy(m.buffer);
    if (s) return hg_error_prefix(s, "%s", fn);
    unsigned w = hg_dtype_bits((int)e->dtype);
    long long low = w == 8 ? v.i8 : w == 16 ? v.i16 : w == 32 ? v.i32 : v.i64;
    return low < 0 ? negative_power(fn, low) : HG_OK;
}

hg_status hg_binary(hg_binary_op op, const hg_tensor* a, const hg_tensor* b, hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_binary", K_BINARY, (int32_t)op, 2);
    hg_status s;
    if ((s = check_input(&k, 0, a, "a")) || (s = check_input(&k, 1, b, "b"))) return s;
    if ((s = hg_ew_binary_dtype(op, a->dtype, b->dtype, &k.result, NULL)))
        return hg_error_prefix(s, "hg_binary");
    if ((s = broadcast_all(&k))) return s;
    // numpy computes nothing for an empty result, so it refuses nothing there either.
    if (op == HG_BINARY_POW && hg_shape_numel(k.ndim, k.shape) &&
        (s = check_int_power(k.c.fn, k.result, b)))
        return s;
    return run_call(&k, out, 1);
}

// The range of integer dtype t.
static hg_status check_scalar_kind(const char* fn, hg_scalar s, const char* name) {
    if ((unsigned)s.kind >= HG_SCALAR_KIND_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: scalar '%s' has invalid kind %d", fn, name,
                        (int)s.kind);
    return HG_OK;
}

hg_status hg_binary_scalar(hg_binary_op op, const hg_tensor* a, hg_scalar sc, int scalar_first,
                           hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_binary_scalar", K_BINARY, (int32_t)op, 2);
    hg_status s;
    int ti = scalar_first ? 1 : 0, si = 1 - ti;
    if ((s = check_input(&k, ti, a, "a"))) return s;
    if ((s = check_scalar_kind(k.c.fn, sc, "s"))) return s;
    hg_binary_op op0 = op;
    if ((s = hg_ew_scalar_operand(k.c.fn, &op, &sc, a->dtype, &scalar_first))) return s;
    if (op != op0 && op0 >= HG_BINARY_EQ && op0 <= HG_BINARY_GE)
        return hg_binary_scalar(op, a, sc, scalar_first, out);   // the by-value answer
    hg_dtype sd = hg_ew_scalar_dtype(sc, a->dtype);
    set_scalar(&k, si, sd, sc);
    k.flags = scalar_first ? 1 : 0;
    if ((s = hg_ew_binary_dtype(op, k.dt[0], k.dt[1], &k.result, NULL)))
        return hg_error_prefix(s, "hg_binary_scalar");
    if (op == HG_BINARY_POW && hg_dtype_is_int((int)k.result) && hg_shape_numel(a->ndim, a->shape)) {
        if (scalar_first) s = check_int_power(k.c.fn, k.result, a);
        else if (sc.kind == HG_SCALAR_INT && sc.i < 0) s = negative_power(k.c.fn, (long long)sc.i);
        if (s) return s;
    }
    k.ndim = a->ndim;
    memcpy(k.shape, a->shape, sizeof k.shape);
    return run_call(&k, out, 1);
}

hg_status hg_where(const hg_tensor* cond, const hg_tensor* a, const hg_tensor* b, hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_where", K_WHERE, 0, 3);
    hg_status s;
    if ((s = check_input(&k, 0, cond, "cond")) || (s = check_input(&k, 1, a, "a")) ||
        (s = check_input(&k, 2, b, "b")))
        return s;
    k.result = hg_dtype_promote(a->dtype, b->dtype);
    if ((s = broadcast_all(&k))) return s;
    return run_call(&k, out, 1);
}

hg_status hg_activation_backward(hg_unary_op op, const hg_tensor* grad, const hg_tensor* x,
                                 const hg_tensor* y, hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_activation_backward", K_ACT_GRAD, (int32_t)op, 1);
    hg_status s;
    int need = (unsigned)op < HG_UNARY_COUNT ? hg_ew_act_grad_needs(op) : -1;
    if (need < 0)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_activation_backward: op %d (%s) has no "
                        "gradient here (valid: the float functions, relu, abs, neg and the "
                        "rounding ops)", (int)op,
                        (unsigned)op < HG_UNARY_COUNT ? hg_unary_op_name(op) : "unknown");
    if ((s = check_input(&k, 0, grad, "grad"))) return s;
    if (!hg_dtype_is_float((int)grad->dtype))
        return hg_error(HG_ERR_DTYPE_MISMATCH, "hg_activation_backward: grad has dtype %s; "
                        "expected a float dtype (f16, bf16, f32, f64)", hg_dtype_name(grad->dtype));
    const hg_tensor* more[2] = {x, y};
    const char* names[2] = {"x", "y"};
    for (int i = 0; i < 2; i++) {
        if (!(need & (1 << i))) continue;
        const hg_tensor* t = more[i];
        if (!t)
            return hg_error(HG_ERR_NULL_POINTER, "hg_activation_backward: the gradient of %s "
                            "needs '%s' (the forward's %s), got NULL", hg_unary_op_name(op),
                            names[i], i ? "result" : "input");
        if ((s = check_input(&k, k.nin, t, names[i]))) return s;
        k.nin++;
        k.flags |= 1 << i;
        int same = t->dtype == grad->dtype && t->ndim == grad->ndim;
        for (int32_t d = 0; same && d < t->ndim; d++) same = t->shape[d] == grad->shape[d];
        if (!same) {
            char a[HG_DIMS_TEXT], b[HG_DIMS_TEXT];
            return hg_error(t->dtype != grad->dtype ? HG_ERR_DTYPE_MISMATCH : HG_ERR_SIZE_MISMATCH,
                            "hg_activation_backward: '%s' is %s %s; expected grad's dtype and "
                            "shape, %s %s", names[i], hg_dtype_name(t->dtype),
                            hg_op_dims(a, t->ndim, t->shape), hg_dtype_name(grad->dtype),
                            hg_op_dims(b, grad->ndim, grad->shape));
        }
    }
    k.result = grad->dtype;
    k.ndim = grad->ndim;
    memcpy(k.shape, grad->shape, sizeof k.shape);
    return run_call(&k, out, 1);
}

hg_status hg_fma(const hg_tensor* a, const hg_tensor* b, const hg_tensor* c, hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_fma", K_FMA, 0, 3);
    hg_status s;
    if ((s = check_input(&k, 0, a, "a")) || (s = check_input(&k, 1, b, "b")) ||
        (s = check_input(&k, 2, c, "c")))
        return s;
    k.result = hg_dtype_promote(hg_dtype_promote(a->dtype, b->dtype), c->dtype);
    if ((s = broadcast_all(&k))) return s;
    return run_call(&k, out, 1);
}

hg_status hg_clip(const hg_tensor* x, const hg_tensor* lo, const hg_tensor* hi, hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_clip", K_CLIP, 0, 1);
    hg_status s;
    if ((s = check_input(&k, 0, x, "x"))) return s;
    k.result = x->dtype;
    if (lo) {
        if ((s = check_input(&k, k.nin, lo, "lo"))) return s;
        k.result = hg_dtype_promote(k.result, lo->dtype);
        k.flags |= 1;
        k.nin++;
    }
    if (hi) {
        if ((s = check_input(&k, k.nin, hi, "hi"))) return s;
        k.result = hg_dtype_promote(k.result, hi->dtype);
        k.flags |= 2;
        k.nin++;
    }
    if ((s = broadcast_all(&k))) return s;
    return run_call(&k, out, 1);
}

// A bound outside an integer dtype's range clips nothing beyond that range: clamp it.
static hg_scalar clamp_bound(hg_scalar s, hg_dtype t) {
    if (s.kind != HG_SCALAR_INT || !hg_dtype_is_int((int)t)) return s;
    unsigned w = hg_dtype_bits((int)t);
    if (hg_dtype_is_signed_int((int)t)) {
        int64_t hi = (int64_t)((UINT64_C(1) << (w - 1)) - 1), lo = -hi - 1;
        s.i = s.i < lo ? lo : s.i > hi ? hi : s.i;
    } else {
        if (s.i < 0) s.i = 0;
        if (w < 64 && (uint64_t)s.i > (UINT64_C(1) << w) - 1) s.i = (int64_t)((UINT64_C(1) << w) - 1);
    }
    return s;
}

hg_status hg_clip_scalar(const hg_tensor* x, hg_scalar lo, hg_scalar hi, hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_clip_scalar", K_CLIP, 0, 3);
    hg_status s;
    if ((s = check_input(&k, 0, x, "x"))) return s;
    if ((s = check_scalar_kind(k.c.fn, lo, "lo")) || (s = check_scalar_kind(k.c.fn, hi, "hi")))
        return s;
    hg_dtype ld = hg_ew_scalar_dtype(lo, x->dtype), hd = hg_ew_scalar_dtype(hi, x->dtype);
    set_scalar(&k, 1, ld, clamp_bound(lo, ld));
    set_scalar(&k, 2, hd, clamp_bound(hi, hd));
    k.flags = 3;
    k.result = hg_dtype_promote(hg_dtype_promote(x->dtype, ld), hd);
    k.ndim = x->ndim;
    memcpy(k.shape, x->shape, sizeof k.shape);
    return run_call(&k, out, 1);
}

hg_status hg_cast(const hg_tensor* x, hg_dtype dtype, hg_tensor* out) {
    EW_CALL(k);
    call_begin(&k, "hg_cast", K_CAST, (int32_t)dtype, 1);
    hg_status s;
    if ((s = check_input(&k, 0, x, "x"))) return s;
    if (!hg_dtype_valid((int)dtype))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_cast: dtype %d is invalid (valid: 0..%d)",
                        (int)dtype, HG_DTYPE_COUNT - 1);
    k.result = dtype;
    k.ndim = x->ndim;
    memcpy(k.shape, x->shape, sizeof k.shape);
    if (dtype == x->dtype && out && out->buffer.handle == 0) {
        // A new copy: the tensor copy's tiled transposes and dense memcpy (device: the driver's
        // copy) beat a load/store kernel per row (docs/performance.md).
        if ((s = hg_op_output(&k.c, out, dtype, k.ndim, k.shape, 0))) return s;
        return hg_op_finish(&k.c, out, hg_tensor_copy(out, x));
    }
    return run_call(&k, out, 0);
}
