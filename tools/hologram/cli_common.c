// cli_common.c — error printing, option parsing and file reading shared by the subcommands.
#include "cli_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vreport(const char* cmd, const char* fmt, va_list ap) {
    fprintf(stderr, "hologram%s%s: error: ", cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_usage(const char* cmd, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'hologram %s%s--help' for usage.\n", cmd ? cmd : "", cmd ? " " : "");
    return CLI_USAGE;
}

int cli_fail(const char* cmd, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

int cli_hg_fail(const char* cmd, hg_status st, const char* what) {
    const char* msg = hg_last_error();
    return cli_fail(cmd, "%s: %s%s%s", what, hg_status_string(st), (msg && *msg) ? ": " : "",
                    msg ? msg : "");
}

int cli_is_help(const char* arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_opt(int argc, char** argv, int* i, const char* name, const char** value) {
    const char* arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    if (arg[n] == '=') { *value = arg + n + 1; return 1; }
    if (arg[n] != 0) return 0;
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}

int cli_parse_u64(const char* s, uint64_t max, uint64_t* out) {
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return 0;
    char* end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || !end || *end || v > max) return 0;
    *out = v;
    return 1;
}

int cli_parse_dim3(const char* s, hg_dim3* out) {
    uint32_t d[3] = {1, 1, 1};
    char buf[96];
    if (strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    int k = 0;
    char* save = NULL;
    for (char* tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (k >= 3 || !cli_parse_u64(tok, UINT32_MAX, &v) || v == 0) return 0;
        d[k++] = (uint32_t)v;
    }
    // Reject empty pieces ("4,,2"), which strtok would silently skip.
    int commas = 0;
    for (const char* c = s; *c; c++) commas += *c == ',';
    if (k == 0 || commas != k - 1) return 0;
    out->x = d[0];
    out->y = d[1];
    out->z = d[2];
    return 1;
}

char* cli_read_file(const char* path, size_t* out_len, char* err, size_t errlen) {
    FILE* f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    char* buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            char* nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                if (f != stdin) fclose(f);
                snprintf(err, errlen, "out of memory reading '%s'", path);
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, errlen, "cannot read '%s'", path);
        return NULL;
    }
    buf[len] = 0;
    *out_len = len;
    return buf;
}

void cli_json_string(FILE* f, const char* s) {
    fputc('"', f);
    for (const unsigned char* p = (const unsigned char*)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}
