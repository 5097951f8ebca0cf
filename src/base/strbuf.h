// Internal: a growable NUL-terminated string built with printf-style appends (code generators:
// ISA -> CUDA C, the op library's device kernels). On allocation failure `oom` is set and later
// appends are dropped, so callers check once at the end.
#ifndef HG_CORE_STRBUF_H
#define HG_CORE_STRBUF_H
#include <stdarg.h>
#include <stddef.h>
#include "base/error.h"

typedef struct hg_sb {
    char* p;        // NULL until the first append
    size_t len, cap;
    int oom;
} hg_sb;

void hg_sb_vput(hg_sb* b, const char* fmt, va_list ap);
void hg_sb_put(hg_sb* b, const char* fmt, ...) HG_PRINTF(2, 3);
void hg_sb_free(hg_sb* b);

#endif
