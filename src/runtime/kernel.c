// Kernels: validation and compilation of programs for an executor, the per-executor cache of
// hg_launch, and every launch check (config, shared memory, argument binding) done before the
// backend runs anything.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "runtime/kernel.h"
#include "runtime/objects.h"

// More distinct programs than this in one executor's hg_launch cache and the cache starts
// over, so programs generated on the fly cannot grow it without bound.
#define HG_KERNEL_CACHE_MAX 1024u

// ---------------------------------------------------------------------------------------------
// Argument constructors
// ---------------------------------------------------------------------------------------------
hg_arg hg_arg_scalar(hg_dtype dtype, uint64_t bits) {
    hg_arg a;
    memset(&a, 0, sizeof a);
    a.kind = HG_PARAM_SCALAR;
    a.dtype = dtype;
    a.bits = bits;
    return a;
}
hg_arg hg_arg_i32(int32_t v) { return hg_arg_scalar(HG_DTYPE_I32, (uint32_t)v); }
hg_arg hg_arg_u32(uint32_t v) { return hg_arg_scalar(HG_DTYPE_U32, v); }
hg_arg hg_arg_i64(int64_t v) { return hg_arg_scalar(HG_DTYPE_I64, (uint64_t)v); }
hg_arg hg_arg_u64(uint64_t v) { return hg_arg_scalar(HG_DTYPE_U64, v); }
hg_arg hg_arg_f32(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return hg_arg_scalar(HG_DTYPE_F32, u);
}
hg_arg hg_arg_f64(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return hg_arg_scalar(HG_DTYPE_F64, u);
}

// ---------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------

// Validates p, checks the backend runs every instruction, and compiles a private copy.
static hg_status compile(hg_executor_obj* ex, const hg_prog* p, uint64_t hash, hg_kernel_obj** out) {
    hg_status s = hg_prog_validate(p);
    if (s) return s;
    for (uint32_t i = 0; i < p->ninstrs; i++) {
        const hg_instr* in = &p->instrs[i];
        if (!ex->vt->supports_op((hg_opcode)in->op, (hg_dtype)in->type)) {
            char text[256];
            return hg_error(HG_ERR_UNSUPPORTED,
                            "kernel '%s': instruction %u (%s) is not supported by the '%s' backend",
                            p->name, i, hg_instr_text(p, i, text, sizeof text),
                            hg_backend_name(ex->kind));
        }
    }
    hg_kernel_obj* k = calloc(1, sizeof *k);
    if (!k) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating kernel '%s'", p->name);
    k->ex = ex;
    k->hash = hash;
    k->prog = hg_prog_clone(p);
    if (!k->prog) {
        free(k);
        return HG_ERR_OUT_OF_MEMORY;
    }
    if ((s = ex->vt->kernel_compile(ex->state, k->prog, &k->compiled))) {
        hg_prog_free(k->prog);
        free(k);
        return hg_error_prefix(s, "compiling kernel '%s' for the '%s' backend", p->name,
                               hg_backend_name(ex->kind));
    }
    *out = k;
    return HG_OK;
}

void hg_kernel_release(hg_kernel_obj* k) {
    if (k->compiled) k->ex->vt->kernel_destroy(k->ex->state, k->compiled);
    hg_prog_free(k->prog);
    free(k);
}

hg_status hg_kernel_create(hg_executor exh, hg_program prog, hg_kernel* out) {
    hg_executor_obj* ex = hg_executor_resolve(exh, "hg_kernel_create");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    hg_prog* p = hg_prog_from_handle(prog);
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    hg_kernel_obj* k = NULL;
    hg_status s = compile(ex, p, hg_prog_hash(p), &k);
    if (s) return s;
    k->handle = hg_handle_insert(HG_HANDLE_KERNEL, k);
    if (!k->handle) {
        hg_kernel_release(k);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory registering a kernel handle");
    }
    hg_executor_link_kernel(ex, k);
    out->handle = k->handle;
    return HG_OK;
}

hg_status hg_kernel_destroy(hg_kernel h) {
    if (!hg_handle_resolve(h.handle, HG_HANDLE_KERNEL, "hg_kernel_destroy"))
        return HG_ERR_INVALID_HANDLE;
    hg_kernel_obj* k = hg_handle_remove(h.handle, HG_HANDLE_KERNEL);
    if (!k)
        return hg_error(HG_ERR_INVALID_HANDLE,
                        "hg_kernel_destroy: kernel handle 0x%016llx was destroyed concurrently",
                        (unsigned long long)h.handle);
    hg_executor_unlink_kernel(k->ex, k);
    hg_kernel_release(k);
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Launch checks
// ---------------------------------------------------------------------------------------------

static hg_status check_config(const hg_executor_obj* ex, const hg_prog* p,
                              const hg_launch_config* cfg) {
    const uint32_t g[3] = {cfg->grid.x, cfg->grid.y, cfg->grid.z};
    const uint32_t b[3] = {cfg->block.x, cfg->block.y, cfg->block.z};
    static const char axis[3] = {'x', 'y', 'z'};
    for (int d = 0; d < 3; d++) {
        if (g[d] == 0 || b[d] == 0)
            return hg_error(HG_ERR_LAUNCH_CONFIG,
                            "kernel '%s': grid (%u, %u, %u) and block (%u, %u, %u) must be >= 1 in "
                            "every dimension (%s.%c is 0)",
                            p->name, g[0], g[1], g[2], b[0], b[1], b[2], g[d] == 0 ? "grid" : "block",
                            axis[d]);
        if ((uint64_t)g[d] * b[d] > UINT32_MAX)
            return hg_error(HG_ERR_LAUNCH_CONFIG,
                            "kernel '%s': grid.%c * block.%c = %u * %u = %llu lanes, more than "
                            "%%gid.%c (u32) can index (at most %u)",
                            p->name, axis[d], axis[d], g[d], b[d],
                            (unsigned long long)g[d] * b[d], axis[d], UINT32_MAX);
    }
    uint64_t lanes = (uint64_t)b[0] * b[1] * b[2];  // each < 2^32 but the product may not be
    if (b[0] > HG_MAX_BLOCK_LANES || b[1] > HG_MAX_BLOCK_LANES || b[2] > HG_MAX_BLOCK_LANES ||
        lanes > HG_MAX_BLOCK_LANES)
        return hg_error(HG_ERR_LAUNCH_CONFIG,
                        "kernel '%s': block (%u, %u, %u) has more than %u lanes (x*y*z must be <= %u)",
                        p->name, b[0], b[1], b[2], HG_MAX_BLOCK_LANES, HG_MAX_BLOCK_LANES);
    // Each factor < 2^32 and the block's product <= 2^10: no overflow up to the last factor,
    // which is checked by division.
    uint64_t blocks = (uint64_t)g[0] * g[1];
    if (blocks > HG_MAX_LAUNCH_LANES || g[2] > HG_MAX_LAUNCH_LANES / blocks ||
        blocks * g[2] > HG_MAX_LAUNCH_LANES / lanes)
        return hg_error(HG_ERR_LAUNCH_CONFIG,
                        "kernel '%s': grid (%u, %u, %u) of blocks (%u, %u, %u) is %.4g lanes, more "
                        "than one launch may have (at most 2^40 = %llu, HG_MAX_LAUNCH_LANES); "
                        "split the work into several launches",
                        p->name, g[0], g[1], g[2], b[0], b[1], b[2],
                        (double)g[0] * g[1] * g[2] * (double)lanes,
                        (unsigned long long)HG_MAX_LAUNCH_LANES);

    uint64_t static_bytes = 0;
    int unsized = -1;
    for (uint32_t i = 0; i < p->nshared; i++) {
        if (p->shared[i].count == 0) unsized = (int)i;
        else static_bytes += (uint64_t)p->shared[i].count * hg_dtype_size(p->shared[i].dtype);
    }
    if (unsized < 0 && cfg->shared_bytes)
        return hg_error(HG_ERR_LAUNCH_CONFIG,
                        "kernel '%s': shared_bytes is %u but the program has no unsized shared "
                        "array (expected 0)",
                        p->name, cfg->shared_bytes);
    if (unsized >= 0) {
        const hg_shared_decl* sd = &p->shared[unsized];
        size_t es = hg_dtype_size(sd->dtype);
        if (cfg->shared_bytes % es)
            return hg_error(HG_ERR_LAUNCH_CONFIG,
                            "kernel '%s': shared_bytes %u is not a multiple of %zu, the element "
                            "size of unsized shared array '%s' (%s)",
                            p->name, cfg->shared_bytes, es, sd->name, hg_dtype_name(sd->dtype));
    }
    if (static_bytes + cfg->shared_bytes > ex->vt->max_shared_bytes)
        return hg_error(HG_ERR_LAUNCH_CONFIG,
                        "kernel '%s': %llu bytes of static shared memory + %u bytes of dynamic "
                        "shared memory exceed the '%s' backend's %u bytes per block",
                        p->name, (unsigned long long)static_bytes, cfg->shared_bytes,
                        hg_backend_name(ex->kind), ex->vt->max_shared_bytes);
    return HG_OK;
}

static uint64_t mask_bits(hg_dtype t, uint64_t bits) {
    if (t == HG_DTYPE_BOOL) return (bits & 0xFFu) != 0;
    unsigned w = hg_dtype_bits(t);
    return w >= 64 ? bits : bits & ((UINT64_C(1) << w) - 1);
}

static hg_status bind_args(const hg_executor_obj* ex, const hg_prog* p, const hg_arg* args,
                           size_t nargs, hg_bound_arg* bound) {
    if (nargs != p->nparams)
        return hg_error(HG_ERR_ARGUMENT_BINDING, "kernel '%s' takes %u argument%s, got %zu",
                        p->name, p->nparams, p->nparams == 1 ? "" : "s", nargs);
    if (nargs && !args)
        return hg_error(HG_ERR_NULL_POINTER, "kernel '%s': args is NULL but nargs is %zu", p->name,
                        nargs);
    for (uint32_t i = 0; i < p->nparams; i++) {
        const hg_param_decl* pd = &p->params[i];
        const hg_arg* a = &args[i];
        const char* pdt = hg_dtype_name(pd->dtype);
        memset(&bound[i], 0, sizeof bound[i]);
        if (a->kind != pd->kind)
            return hg_error(HG_ERR_ARGUMENT_BINDING,
                            "kernel '%s': argument %u (parameter '%s') must be a %s argument of %s, "
                            "got a %s argument",
                            p->name, i, pd->name, pd->kind == HG_PARAM_BUFFER ? "buffer" : "scalar",
                            pdt, a->kind == HG_PARAM_BUFFER ? "buffer" : a->kind == HG_PARAM_SCALAR
                                     ? "scalar" : "invalid-kind");
        if (pd->kind == HG_PARAM_SCALAR) {
            if (a->dtype != pd->dtype)
                return hg_error(HG_ERR_DTYPE_MISMATCH,
                                "kernel '%s': argument %u (parameter '%s') must be a %s scalar, "
                                "got %s",
                                p->name, i, pd->name, pdt,
                                hg_dtype_name(a->dtype) ? hg_dtype_name(a->dtype) : "an invalid dtype");
            bound[i].bits = mask_bits(pd->dtype, a->bits);
            continue;
        }
        hg_buffer_obj* b = hg_handle_get(a->buffer.handle, HG_HANDLE_BUFFER);
        if (!b) {
            hg_handle_resolve(a->buffer.handle, HG_HANDLE_BUFFER, "buffer argument");
            return hg_error_prefix(HG_ERR_INVALID_HANDLE, "kernel '%s': argument %u (parameter '%s')",
                                   p->name, i, pd->name);
        }
        if (b->ex != ex)
            return hg_error(HG_ERR_ARGUMENT_BINDING,
                            "kernel '%s': argument %u (parameter '%s') is a buffer of another "
                            "executor (buffers must belong to the executor that launches)",
                            p->name, i, pd->name);
        if (b->dtype != pd->dtype)
            return hg_error(HG_ERR_DTYPE_MISMATCH,
                            "kernel '%s': argument %u (parameter '%s') must be a %s buffer, got a "
                            "%s buffer",
                            p->name, i, pd->name, pdt, hg_dtype_name(b->dtype));
        uint64_t n = b->count;
        if (a->offset > n)
            return hg_error(HG_ERR_ARGUMENT_BINDING,
                            "kernel '%s': argument %u (parameter '%s'): offset %llu is past the end "
                            "of the buffer of %llu elements",
                            p->name, i, pd->name, (unsigned long long)a->offset,
                            (unsigned long long)n);
        uint64_t count = a->count == UINT64_MAX ? n - a->offset : a->count;
        if (count > n - a->offset)
            return hg_error(HG_ERR_ARGUMENT_BINDING,
                            "kernel '%s': argument %u (parameter '%s'): range offset %llu + count "
                            "%llu exceeds the buffer of %llu elements",
                            p->name, i, pd->name, (unsigned long long)a->offset,
                            (unsigned long long)count, (unsigned long long)n);
        bound[i].base = b->mem ? (unsigned char*)b->mem + a->offset * hg_dtype_size(b->dtype) : NULL;
        bound[i].count = count;
    }
    return HG_OK;
}

// Checks cfg and args against kernel k's program and runs it. Caller holds ex->launch_lock.
static hg_status launch_locked(hg_executor_obj* ex, hg_kernel_obj* k, const hg_launch_config* cfg,
                               const hg_arg* args, size_t nargs) {
    hg_status s = check_config(ex, k->prog, cfg);
    if (s) return s;
    hg_bound_arg bound[HG_MAX_PARAMS];
    if ((s = bind_args(ex, k->prog, args, nargs, bound))) return s;
    return hg_kernel_run_bound(ex, k, cfg, bound, nargs);
}

hg_status hg_kernel_dispatch_traced(hg_executor_obj* ex, const hg_kernel_obj* k,
                                    const hg_launch_config* cfg, const hg_bound_arg* bound,
                                    size_t nargs) {
    hg_trace_span sp;
    hg_trace_span_begin(&sp);
    hg_status s = ex->vt->kernel_launch(ex->state, k->compiled, cfg, bound, nargs);
    hg_trace_event e;
    hg_trace_event_init(&e, "launch", k->prog->name);
    e.executor = hg_backend_name(ex->kind);
    e.executor_id = ex->handle;
    uint64_t lanes = (uint64_t)cfg->grid.x * cfg->grid.y * cfg->grid.z * cfg->block.x *
                     cfg->block.y * cfg->block.z;
    snprintf(e.detail, sizeof e.detail, "grid %ux%ux%u block %ux%ux%u (%llu lanes)%s",
             cfg->grid.x, cfg->grid.y, cfg->grid.z, cfg->block.x, cfg->block.y, cfg->block.z,
             (unsigned long long)lanes, s ? " failed" : "");
    hg_trace_span_end(&sp, &e);
    return s;
}

hg_status hg_kernel_run_rows(hg_executor_obj* ex, const hg_kernel_obj* k,
                             const hg_launch_config* cfg, const hg_bound_arg* bound, size_t nargs,
                             uint64_t rows, const hg_row_args* ra) {
    if (!hg_trace_on())
        return ex->vt->kernel_launch_rows(ex->state, k->compiled, cfg, bound, nargs, rows, ra);
    hg_trace_span sp;
    hg_trace_span_begin(&sp);
    hg_status s = ex->vt->kernel_launch_rows(ex->state, k->compiled, cfg, bound, nargs, rows, ra);
    hg_trace_event e;
    hg_trace_event_init(&e, "launch", k->prog->name);
    e.executor = hg_backend_name(ex->kind);
    e.executor_id = ex->handle;
    snprintf(e.detail, sizeof e.detail, "%llu rows of grid %u block %u (%llu lanes)%s",
             (unsigned long long)rows, cfg->grid.x, cfg->block.x,
             (unsigned long long)(rows * cfg->grid.x * cfg->block.x), s ? " failed" : "");
    hg_trace_span_end(&sp, &e);
    return s;
}

hg_status hg_kernel_launch(hg_kernel h, const hg_launch_config* cfg, const hg_arg* args,
                           size_t nargs) {
    hg_kernel_obj* k = hg_handle_resolve(h.handle, HG_HANDLE_KERNEL, "hg_kernel_launch");
    if (!k) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(cfg, "cfg");
    hg_executor_obj* ex = k->ex;
    pthread_mutex_lock(&ex->launch_lock);
    hg_status s = launch_locked(ex, k, cfg, args, nargs);
    pthread_mutex_unlock(&ex->launch_lock);
    return s;
}

// ---------------------------------------------------------------------------------------------
// hg_launch and its cache (keyed by content hash, confirmed with hg_prog_equal)
// ---------------------------------------------------------------------------------------------

void hg_kernel_ref(hg_kernel_obj* k) { atomic_fetch_add(&k->refs, 1); }

void hg_kernel_unref(hg_kernel_obj* k) {
    if (atomic_fetch_sub(&k->refs, 1) == 1) hg_kernel_release(k);
}

void hg_kernel_cache_clear(hg_executor_obj* ex) {
    for (uint32_t i = 0; i < ex->cache_buckets; i++) {
        hg_kernel_obj* k = ex->cache[i];
        while (k) {
            hg_kernel_obj* next = k->cache_next;
            k->cache_next = NULL;
            hg_kernel_unref(k);
            k = next;
        }
        ex->cache[i] = NULL;
    }
    ex->cache_count = 0;
}

static hg_status cache_insert(hg_executor_obj* ex, hg_kernel_obj* k) {
    if (ex->cache_count >= HG_KERNEL_CACHE_MAX) {
        hg_log(HG_LOG_DEBUG, "kernel cache of executor 0x%016llx is full (%u programs); clearing",
               (unsigned long long)ex->handle, ex->cache_count);
        hg_kernel_cache_clear(ex);
    }
    if (ex->cache_count >= ex->cache_buckets) {  // keep chains short: grow at load factor 1
        uint32_t nb = ex->cache_buckets ? ex->cache_buckets * 2 : 64;
        hg_kernel_obj** nt = calloc(nb, sizeof *nt);
        if (!nt) return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory growing the kernel cache");
        for (uint32_t i = 0; i < ex->cache_buckets; i++)
            for (hg_kernel_obj *c = ex->cache[i], *next; c; c = next) {
                next = c->cache_next;
                c->cache_next = nt[c->hash & (nb - 1)];
                nt[c->hash & (nb - 1)] = c;
            }
        free(ex->cache);
        ex->cache = nt;
        ex->cache_buckets = nb;
    }
    hg_kernel_obj** head = &ex->cache[k->hash & (ex->cache_buckets - 1)];
    k->cache_next = *head;
    *head = k;
    ex->cache_count++;
    return HG_OK;
}

hg_status hg_kernel_get(hg_executor_obj* ex, const hg_prog* p, hg_kernel_obj** out) {
    uint64_t hash = hg_prog_hash(p);
    hg_kernel_obj* k = NULL;
    if (ex->cache_buckets)
        for (k = ex->cache[hash & (ex->cache_buckets - 1)]; k; k = k->cache_next)
            if (k->hash == hash && hg_prog_equal(k->prog, p)) break;
    if (!k) {
        // A cached kernel is an equal program that passed the validator, so only misses
        // validate and compile.
        hg_status s = compile(ex, p, hash, &k);
        if (s) return s;
        atomic_store(&k->refs, 1);
        if ((s = cache_insert(ex, k))) {
            hg_kernel_release(k);
            return s;
        }
    }
    *out = k;
    return HG_OK;
}

hg_status hg_launch_prog(hg_executor_obj* ex, const hg_prog* p, const hg_launch_config* cfg,
                         const hg_arg* args, size_t nargs) {
    pthread_mutex_lock(&ex->launch_lock);
    hg_kernel_obj* k = NULL;
    hg_status s = hg_kernel_get(ex, p, &k);
    if (!s) s = launch_locked(ex, k, cfg, args, nargs);
    pthread_mutex_unlock(&ex->launch_lock);
    return s;
}

hg_status hg_launch(hg_executor exh, hg_program prog, const hg_launch_config* cfg,
                    const hg_arg* args, size_t nargs) {
    hg_executor_obj* ex = hg_executor_resolve(exh, "hg_launch");
    if (!ex) return HG_ERR_INVALID_HANDLE;
    hg_prog* p = hg_prog_from_handle(prog);
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(cfg, "cfg");
    return hg_launch_prog(ex, p, cfg, args, nargs);
}
