// A growable string (see strbuf.h).
#include "base/strbuf.h"
#include <stdio.h>
#include <stdlib.h>

void hg_sb_vput(hg_sb* b, const char* fmt, va_list ap) {
    if (b->oom) return;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (!b->p || b->len + (size_t)n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->len + (size_t)n + 1) nc *= 2;
        char* np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    }
    b->len += (size_t)n;
}

void hg_sb_put(hg_sb* b, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hg_sb_vput(b, fmt, ap);
    va_end(ap);
}

void hg_sb_free(hg_sb* b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
