// TEMPORARY (issue 13): see dev_text.h.
#include "ops/common/dev_text.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "base/checksum.h"
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

hg_status hg_dk_launch_text(hg_executor_obj* ex, const char* fn, const hg_sb* text,
                       const hg_launch_config* cfg, const hg_arg* args, size_t nargs) {
    if (text->oom || !text->p)
        return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for the device kernel's text", fn);
    hg_program prog;
    int cached = 0;
    hg_status s = program_for(text, &prog, &cached);
    if (s) return hg_error_prefix(s, "%s (device kernel, internal)", fn);
    s = hg_dk_launch(ex, fn, hg_prog_from_handle(prog), cfg, args, nargs);
    if (!cached) hg_program_destroy(prog);
    return s;
}

void hg_dk_param_dims_text(hg_sb* b, const char* prefix, int32_t nd, int nt) {
    for (int32_t i = 0; i < nd; i++) {
        hg_sb_put(b, ".param %s_s%d: u64\n", prefix, (int)i);
        for (int t = 0; t < nt; t++) hg_sb_put(b, ".param %s_%c%d: i64\n", prefix, 'a' + t, (int)i);
    }
}

void hg_dk_emit_offsets_text(hg_sb* b, const char* prefix, int32_t nd, int nt, const char* idx,
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

