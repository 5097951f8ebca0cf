// npy.c — .npy reader/writer. The header is a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }; we parse exactly that grammar
// (strings, True/False, integer tuples) rather than searching for substrings, so odd spacing or
// key order written by other tools still reads correctly.
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char* err, size_t errlen, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const struct {
    hg_dtype dtype;
    const char* descr;      // what we write
    const char* alt;        // another spelling numpy may use for the same type
} k_descrs[] = {
    {HG_DTYPE_BOOL, "|b1", "<b1"}, {HG_DTYPE_I8, "|i1", "<i1"}, {HG_DTYPE_I16, "<i2", NULL},
    {HG_DTYPE_I32, "<i4", NULL},   {HG_DTYPE_I64, "<i8", NULL}, {HG_DTYPE_U8, "|u1", "<u1"},
    {HG_DTYPE_U16, "<u2", NULL},   {HG_DTYPE_U32, "<u4", NULL}, {HG_DTYPE_U64, "<u8", NULL},
    {HG_DTYPE_F16, "<f2", NULL},   {HG_DTYPE_F32, "<f4", NULL}, {HG_DTYPE_F64, "<f8", NULL},
};

const char* npy_descr_of(hg_dtype dtype) {
    for (size_t i = 0; i < sizeof k_descrs / sizeof k_descrs[0]; i++)
        if (k_descrs[i].dtype == dtype) return k_descrs[i].descr;
    return NULL;
}

// descr -> dtype; the message explains what is wrong with an unsupported descr.
static int dtype_of_descr(const char* d, hg_dtype* out, char* err, size_t errlen) {
    for (size_t i = 0; i < sizeof k_descrs / sizeof k_descrs[0]; i++) {
        if (strcmp(d, k_descrs[i].descr) == 0 ||
            (k_descrs[i].alt && strcmp(d, k_descrs[i].alt) == 0)) {
            *out = k_descrs[i].dtype;
            return 0;
        }
    }
    // '=' is native order; this tool only runs on little-endian hosts, so it equals '<'.
    if (d[0] == '=' && d[1]) {
        char tmp[16];
        snprintf(tmp, sizeof tmp, "<%s", d + 1);
        if (strlen(d) < sizeof tmp - 1) return dtype_of_descr(tmp, out, err, errlen);
    }
    if (d[0] == '>' && d[1] && d[2] != '1')
        return fail(err, errlen, "big-endian dtype '%s' is not supported (expected little-endian, "
                    "e.g. '<%s'; in numpy: arr.astype(arr.dtype.newbyteorder('<')))", d, d + 1);
    return fail(err, errlen, "unsupported dtype '%s' (expected one of <f2 <f4 <f8 |i1 <i2 <i4 <i8 "
                "|u1 <u2 <u4 <u8 |b1)", d);
}

// --- header dict parser -------------------------------------------------------------------------
typedef struct hdr_parser {
    const char* s;
    const char* end;
} hdr_parser;

static void skip_ws(hdr_parser* p) {
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static int expect_char(hdr_parser* p, char c) {
    skip_ws(p);
    if (p->s < p->end && *p->s == c) { p->s++; return 1; }
    return 0;
}

// A quoted string into buf (no escapes: numpy never writes them in these keys).
static int parse_str(hdr_parser* p, char* buf, size_t cap) {
    skip_ws(p);
    if (p->s >= p->end || (*p->s != '\'' && *p->s != '"')) return 0;
    char q = *p->s++;
    size_t n = 0;
    while (p->s < p->end && *p->s != q) {
        if (n + 1 >= cap) return 0;
        buf[n++] = *p->s++;
    }
    if (p->s >= p->end) return 0;
    p->s++;
    buf[n] = 0;
    return 1;
}

static int parse_word(hdr_parser* p, const char* w) {
    skip_ws(p);
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) >= n && memcmp(p->s, w, n) == 0) { p->s += n; return 1; }
    return 0;
}

static int parse_shape(hdr_parser* p, npy_array* a, char* err, size_t errlen) {
    if (!expect_char(p, '(')) return fail(err, errlen, "bad .npy header: 'shape' is not a tuple");
    a->ndim = 0;
    for (;;) {
        if (expect_char(p, ')')) return 0;
        skip_ws(p);
        if (p->s >= p->end || *p->s < '0' || *p->s > '9')
            return fail(err, errlen, "bad .npy header: 'shape' holds a non-integer");
        uint64_t v = 0;
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
            if (v > (UINT64_MAX - 9) / 10) return fail(err, errlen, "bad .npy header: dimension too large");
            v = v * 10 + (uint64_t)(*p->s++ - '0');
        }
        // Python 2 era files may write "3L".
        if (p->s < p->end && *p->s == 'L') p->s++;
        if (a->ndim >= NPY_MAX_DIMS)
            return fail(err, errlen, "bad .npy header: more than %d dimensions", NPY_MAX_DIMS);
        a->shape[a->ndim++] = v;
        if (!expect_char(p, ',')) {
            if (expect_char(p, ')')) return 0;
            return fail(err, errlen, "bad .npy header: malformed 'shape' tuple");
        }
    }
}

static int parse_header(const char* text, size_t len, npy_array* a, char* err, size_t errlen) {
    hdr_parser p = {text, text + len};
    int have_descr = 0, have_order = 0, have_shape = 0;
    char descr[64];
    if (!expect_char(&p, '{')) return fail(err, errlen, "bad .npy header: not a dict");
    for (;;) {
        if (expect_char(&p, '}')) break;
        char key[32];
        if (!parse_str(&p, key, sizeof key) || !expect_char(&p, ':'))
            return fail(err, errlen, "bad .npy header: expected 'key': value");
        if (strcmp(key, "descr") == 0) {
            skip_ws(&p);
            if (p.s < p.end && *p.s == '[')
                return fail(err, errlen, "structured .npy dtypes are not supported (expected a plain "
                            "numeric array)");
            if (!parse_str(&p, descr, sizeof descr))
                return fail(err, errlen, "bad .npy header: 'descr' is not a string");
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (parse_word(&p, "True"))
                return fail(err, errlen, "Fortran-order .npy arrays are not supported (expected C "
                            "order; in numpy: np.save(path, np.ascontiguousarray(arr)))");
            if (!parse_word(&p, "False"))
                return fail(err, errlen, "bad .npy header: 'fortran_order' is not True/False");
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (parse_shape(&p, a, err, errlen) != 0) return -1;
            have_shape = 1;
        } else {
            return fail(err, errlen, "bad .npy header: unknown key '%s'", key);
        }
        if (!expect_char(&p, ',')) {
            if (expect_char(&p, '}')) break;
            return fail(err, errlen, "bad .npy header: expected ',' or '}'");
        }
    }
    if (!have_descr || !have_order || !have_shape)
        return fail(err, errlen, "bad .npy header: missing '%s'",
                    !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    if (dtype_of_descr(descr, &a->dtype, err, errlen) != 0) return -1;
    return 0;
}

int npy_parse(const unsigned char* b, size_t len, npy_array* out, char* err, size_t errlen) {
    npy_array a;
    memset(&a, 0, sizeof a);
    if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return fail(err, errlen, "not a .npy file (missing the \\x93NUMPY magic)");
    unsigned major = b[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)b[8] | ((size_t)b[9] << 8);
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) return fail(err, errlen, "truncated .npy header");
        hlen = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) | ((size_t)b[11] << 24);
        hstart = 12;
    } else {
        return fail(err, errlen, "unsupported .npy format version %u.%u (expected 1.0, 2.0 or 3.0)",
                    major, (unsigned)b[7]);
    }
    if (hlen > len - hstart) return fail(err, errlen, "truncated .npy header");
    if (parse_header((const char*)b + hstart, hlen, &a, err, errlen) != 0) return -1;
    uint64_t count = 1;
    for (int i = 0; i < a.ndim; i++) {
        if (a.shape[i] && count > UINT64_MAX / a.shape[i])
            return fail(err, errlen, ".npy shape overflows");
        count *= a.shape[i];
    }
    a.count = count;
    size_t es = hg_dtype_size(a.dtype);
    size_t avail = len - hstart - hlen;
    if (count > avail / es)
        return fail(err, errlen, ".npy data is truncated: the header says %llu elements (%llu bytes) "
                    "but the file holds %zu bytes of data", (unsigned long long)count,
                    (unsigned long long)(count * es), avail);
    size_t nbytes = (size_t)count * es;
    a.data = malloc(nbytes ? nbytes : 1);
    if (!a.data) return fail(err, errlen, "out of memory reading %zu bytes of .npy data", nbytes);
    memcpy(a.data, b + hstart + hlen, nbytes);
    *out = a;
    return 0;
}

int npy_read(const char* path, npy_array* out, char* err, size_t errlen) {
    FILE* f = fopen(path, "rb");
    if (!f) return fail(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    unsigned char* buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 1 << 16;
            unsigned char* nb = realloc(buf, ncap);
            if (!nb) { free(buf); fclose(f); return fail(err, errlen, "out of memory reading '%s'", path); }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(buf); return fail(err, errlen, "cannot read '%s'", path); }
    char inner[400];
    int rc = npy_parse(buf, len, out, inner, sizeof inner);
    free(buf);
    if (rc != 0) return fail(err, errlen, "%s: %s", path, inner);
    return 0;
}

void npy_array_free(npy_array* a) {
    if (!a) return;
    free(a->data);
    a->data = NULL;
}

int npy_write(const char* path, hg_dtype dtype, const uint64_t* shape, int ndim, const void* data,
              int bf16_as_u16, char* err, size_t errlen) {
    const char* descr = npy_descr_of(dtype);
    if (dtype == HG_DTYPE_BF16 && bf16_as_u16) descr = "<u2";
    if (!descr)
        return fail(err, errlen, "cannot write %s data to '%s': .npy has no %s dtype (use "
                    "--bf16-as-u16 to write the raw bits as '<u2')",
                    hg_dtype_name(dtype) ? hg_dtype_name(dtype) : "?", path,
                    hg_dtype_name(dtype) ? hg_dtype_name(dtype) : "?");
    if (ndim < 0 || ndim > NPY_MAX_DIMS) return fail(err, errlen, "bad ndim %d", ndim);
    char shape_txt[NPY_MAX_DIMS * 24 + 8];
    size_t n = 0;
    uint64_t count = 1;
    shape_txt[n++] = '(';
    for (int i = 0; i < ndim; i++) {
        n += (size_t)snprintf(shape_txt + n, sizeof shape_txt - n, "%llu,%s",
                              (unsigned long long)shape[i], (i + 1 < ndim) ? " " : "");
        count *= shape[i];
    }
    // A 1-tuple needs its trailing comma, longer tuples are written without one, as numpy does.
    if (ndim > 1) n--;
    shape_txt[n++] = ')';
    shape_txt[n] = 0;
    char dict[sizeof shape_txt + 128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                      descr, shape_txt);
    // Total header (magic + version + length + dict + padding + '\n') is a multiple of 64.
    size_t pre = 10;
    size_t total = pre + (size_t)dl + 1;
    int major = 1;
    if (((total + 63) & ~(size_t)63) - pre > 65535) { major = 2; pre = 12; total = pre + (size_t)dl + 1; }
    size_t padded = (total + 63) & ~(size_t)63;
    size_t hlen = padded - pre;
    unsigned char head[sizeof dict + 128];
    memcpy(head, "\x93NUMPY", 6);
    head[6] = (unsigned char)major;
    head[7] = 0;
    if (major == 1) { head[8] = (unsigned char)(hlen & 0xff); head[9] = (unsigned char)(hlen >> 8); }
    else for (int i = 0; i < 4; i++) head[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(head + pre, dict, (size_t)dl);
    memset(head + pre + dl, ' ', padded - pre - (size_t)dl - 1);
    head[padded - 1] = '\n';

    FILE* f = fopen(path, "wb");
    if (!f) return fail(err, errlen, "cannot create '%s': %s", path, strerror(errno));
    size_t nbytes = (size_t)count * hg_dtype_size(dtype);
    int ok = fwrite(head, 1, padded, f) == padded && (nbytes == 0 || fwrite(data, 1, nbytes, f) == nbytes);
    if (fclose(f) != 0) ok = 0;
    if (!ok) return fail(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}
