// Device kernels of the op library: cached parses, launches and index code (see dev_kernel.h).
#include "ops/common/dev_kernel.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backends/backend.h"
#include "base/checksum.h"
#include "base/handles.h"
#include "ops/common/dev_ops.h"
#include "tensor/tensor_internal.h"
#include "base/dtype.h"
#include "base/error.h"

// Parsed programs by text. Entries live until the process ends (a few hundred distinct
// kernels at most: one per op, dtype pair and rank); when the table is full a program is
// parsed for the one launch and destroyed.
#define DK_CACHE 1024
typedef struct dk_entry {
    uint64_t hash;
    char* text;
    hg_program prog;
} dk_entry;
static dk_entry g_cache[DK_CACHE];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static hg_status program_for(const hg_sb* text, hg_program* out, int* cached) {
    uint64_t h = hg_fnv1a64(UINT64_C(0xcbf29ce484222325), text->p, text->len);
    size_t i = (size_t)(h % DK_CACHE), n = 0;
    pthread_mutex_lock(&g_lock);
    for (; n < DK_CACHE && g_cache[i].text; n++, i = (i + 1) % DK_CACHE)
        if (g_cache[i].hash == h && !strcmp(g_cache[i].text, text->p)) {
            *out = g_cache[i].prog;
            *cached = 1;
            pthread_mutex_unlock(&g_lock);
            return HG_OK;
        }
    hg_status s = hg_program_parse(text->p, text->len, out);
    *cached = 0;
    if (!s && n < DK_CACHE) {
        char* copy = malloc(text->len + 1);
        if (copy) {
            memcpy(copy, text->p, text->len + 1);
            g_cache[i].hash = h;
            g_cache[i].text = copy;
            g_cache[i].prog = *out;
            *cached = 1;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return s;
}

const char* hg_dk_dt(hg_dtype t) { return hg_dtype_name(t); }

void hg_dk_cvt(hg_sb* b, const char* d, hg_dtype dt, const char* s, hg_dtype st) {
    if (dt == st) hg_sb_put(b, "    mov.%s %s, %s\n", hg_dtype_name(dt), d, s);
    else hg_sb_put(b, "    cvt.%s.%s %s, %s\n", hg_dtype_name(dt), hg_dtype_name(st), d, s);
}

hg_status hg_dk_launch(hg_executor_obj* ex, const char* fn, const hg_sb* text,
                       const hg_launch_config* cfg, const hg_arg* args, size_t nargs) {
    if (text->oom || !text->p)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for the device kernel's text", fn);
    hg_program prog;
    int cached = 0;
    hg_status s = program_for(text, &prog, &cached);
    if (s) return hg_error_prefix(s, "%s (device kernel, internal)", fn);
    hg_executor exh = {ex->handle};
    s = hg_launch(exh, prog, cfg, args, nargs);
    if (!cached) hg_program_destroy(prog);
    return s ? hg_error_prefix(s, "%s (device kernel)", fn) : HG_OK;
}

void hg_dk_dims_push(hg_dk_dims* d, int nt, int64_t size, const int64_t* strides) {
    if (size == 1) return;
    d->size[d->nd] = size;
    for (int t = 0; t < nt; t++) d->stride[t][d->nd] = strides[t];
    d->nd++;
}

void hg_dk_dims_merge(hg_dk_dims* d, int nt) {
    if (d->nd == 0) return;
    int32_t w = 0;
    for (int32_t i = 1; i < d->nd; i++) {
        int ok = 1;
        for (int t = 0; t < nt; t++) ok &= d->stride[t][w] == d->stride[t][i] * d->size[i];
        if (ok) {
            d->size[w] *= d->size[i];
            for (int t = 0; t < nt; t++) d->stride[t][w] = d->stride[t][i];
        } else {
            w++;
            d->size[w] = d->size[i];
            for (int t = 0; t < nt; t++) d->stride[t][w] = d->stride[t][i];
        }
    }
    d->nd = w + 1;
}

void hg_dk_param_dims(hg_sb* b, const char* prefix, int32_t nd, int nt) {
    for (int32_t i = 0; i < nd; i++) {
        hg_sb_put(b, ".param %s_s%d: u64\n", prefix, (int)i);
        for (int t = 0; t < nt; t++) hg_sb_put(b, ".param %s_%c%d: i64\n", prefix, 'a' + t, (int)i);
    }
}

size_t hg_dk_arg_dims(hg_arg* args, size_t k, const hg_dk_dims* d, int nt) {
    for (int32_t i = 0; i < d->nd; i++) {
        args[k++] = hg_arg_u64((uint64_t)d->size[i]);
        for (int t = 0; t < nt; t++) args[k++] = hg_arg_i64(d->stride[t][i]);
    }
    return k;
}

void hg_dk_emit_offsets(hg_sb* b, const char* prefix, int32_t nd, int nt, const char* idx,
                        const char* const* offs) {
    if (nd == 0) return;
    hg_sb_put(b, "    mov.u64 dq, %s\n", idx);
    for (int32_t i = nd - 1; i >= 0; i--) {
        if (i > 0) {
            hg_sb_put(b, "    rem.u64 dr, dq, %s_s%d\n    div.u64 dq, dq, %s_s%d\n"
                         "    cvt.i64.u64 dc, dr\n", prefix, (int)i, prefix, (int)i);
        } else {
            hg_sb_put(b, "    cvt.i64.u64 dc, dq\n");
        }
        for (int t = 0; t < nt; t++)
            hg_sb_put(b, "    mul.i64 dt, dc, %s_%c%d\n    add.i64 %s, %s, dt\n", prefix, 'a' + t,
                      (int)i, offs[t], offs[t]);
    }
}

int64_t hg_dk_numel(const hg_tensor* t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

int hg_dev_on_device(const hg_tensor* t) {
    hg_buffer_obj* b = hg_handle_get(t->buffer.handle, HG_HANDLE_BUFFER);
    return b && !b->ex->vt->host_visible;
}

hg_status hg_dk_download(hg_op_ctx* c, const hg_tensor* index, hg_host_view* v, void** staged) {
    hg_tensor t;
    int copied = 0;
    hg_status s = hg_tensor_contiguous(index, &t, &copied);
    if (s) return hg_error_prefix(s, "%s (reading a tensor back)", c->fn);
    int64_t n = 1;
    for (int32_t d = 0; d < t.ndim; d++) n *= t.shape[d];
    size_t es = hg_dtype_size(t.dtype);
    void* h = malloc((size_t)(n ? n : 1) * es);
    if (!h) s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for %lld indices", c->fn, (long long)n);
    if (!s && n) s = hg_buffer_read(t.buffer, (size_t)t.offset, h, (size_t)n);
    if (copied) hg_buffer_destroy(t.buffer);
    if (s) {
        free(h);
        return hg_error_prefix(s, "%s (reading a tensor back)", c->fn);
    }
    memset(v, 0, sizeof *v);
    v->data = h;
    v->dtype = t.dtype;
    v->ndim = t.ndim;
    v->numel = n;
    for (int32_t d = 0; d < t.ndim; d++) v->shape[d] = t.shape[d];
    hg_tensor_contiguous_strides(t.ndim, t.shape, v->strides);
    *staged = h;
    return HG_OK;
}
