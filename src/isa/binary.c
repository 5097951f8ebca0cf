// The Atlas ISA binary format, version 1 (docs/isa.md §9), and the content hash.
//
//   header (16 bytes): "ATLS" | u16 version = 1 | u16 flags = 0 | u32 payload_size | u32 crc32
//   payload (little-endian, field by field, never a struct image):
//     str name
//     u32 nparams,  nparams  x { str name, u8 kind, u8 dtype, u8 is_const }
//     u32 nshared,  nshared  x { str name, u8 dtype, u32 count }
//     u32 nregs,    nregs    x { str name, u8 dtype }
//     u32 ninstrs,  ninstrs  x { u16 op, u8 type, u8 aux, u32 mem, operand dst, operand src[3] }
//   str = u8 length (1..63) + bytes; operand = u32 kind, u32 index, u64 bits.
//
// The hash is FNV-1a 64 over the same payload bytes, computed while "writing" without a buffer.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/checksum.h"
#include "isa/program.h"

#define HEADER_SIZE 16
#define INSTR_SIZE 72   // 2 + 1 + 1 + 4 + 4 * 16
#define FORMAT_VERSION 1
_Static_assert(FORMAT_VERSION == HG_ISA_VERSION, "binary format version matches the header");

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

// ---------------------------------------------------------------------------------------------
// Writing (to a buffer, or into the hash)
// ---------------------------------------------------------------------------------------------
typedef struct writer {
    uint8_t* buf;       // NULL when only hashing
    size_t len, cap;
    uint64_t hash;
    bool hashing, failed;
} writer;

static void w_bytes(writer* w, const void* data, size_t n) {
    const uint8_t* s = data;
    if (w->hashing) {
        for (size_t i = 0; i < n; i++) w->hash = (w->hash ^ s[i]) * FNV_PRIME;
        return;
    }
    if (w->failed) return;
    if (w->len + n > w->cap) {
        size_t nc = w->cap ? w->cap : 1024;
        while (nc < w->len + n) nc *= 2;
        uint8_t* q = realloc(w->buf, nc);
        if (!q) {
            w->failed = true;
            return;
        }
        w->buf = q;
        w->cap = nc;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void w_u8(writer* w, unsigned v) {
    uint8_t b = (uint8_t)v;
    w_bytes(w, &b, 1);
}

static void w_u16(writer* w, unsigned v) {
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    w_bytes(w, b, 2);
}

static void w_u32(writer* w, uint32_t v) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    w_bytes(w, b, 4);
}

static void w_u64(writer* w, uint64_t v) {
    w_u32(w, (uint32_t)v);
    w_u32(w, (uint32_t)(v >> 32));
}

static void w_str(writer* w, const char* s) {
    size_t n = strnlen(s, HG_NAME_MAX - 1);
    w_u8(w, (unsigned)n);
    w_bytes(w, s, n);
}

static void w_operand(writer* w, const hg_operand* o) {
    w_u32(w, o->kind);
    w_u32(w, o->index);
    w_u64(w, o->bits);
}

static void write_payload(writer* w, const hg_prog* p) {
    w_str(w, p->name);
    w_u32(w, p->nparams);
    for (uint32_t i = 0; i < p->nparams; i++) {
        w_str(w, p->params[i].name);
        w_u8(w, p->params[i].kind);
        w_u8(w, p->params[i].dtype);
        w_u8(w, p->params[i].is_const);
    }
    w_u32(w, p->nshared);
    for (uint32_t i = 0; i < p->nshared; i++) {
        w_str(w, p->shared[i].name);
        w_u8(w, p->shared[i].dtype);
        w_u32(w, p->shared[i].count);
    }
    w_u32(w, p->nregs);
    for (uint32_t i = 0; i < p->nregs; i++) {
        w_str(w, p->regs[i].name);
        w_u8(w, p->regs[i].dtype);
    }
    w_u32(w, p->ninstrs);
    for (uint32_t i = 0; i < p->ninstrs; i++) {
        const hg_instr* in = &p->instrs[i];
        w_u16(w, in->op);
        w_u8(w, in->type);
        w_u8(w, in->aux);
        w_u32(w, in->mem);
        w_operand(w, &in->dst);
        for (int k = 0; k < 3; k++) w_operand(w, &in->src[k]);
    }
}

static void put_le32(uint8_t* b, uint32_t v) {
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
}

hg_status hg_prog_save(const hg_prog* p, uint8_t** out, size_t* len) {
    if (!p || !out || !len) return hg_error(HG_ERR_NULL_POINTER, "hg_prog_save: NULL argument");
    writer w;
    memset(&w, 0, sizeof w);
    uint8_t header[HEADER_SIZE] = {'A', 'T', 'L', 'S', FORMAT_VERSION, 0, 0, 0};
    w_bytes(&w, header, HEADER_SIZE);  // filled in below
    write_payload(&w, p);
    if (w.failed) {
        free(w.buf);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory saving program '%.*s'",
                        HG_NAME_MAX - 1, p->name);
    }
    size_t payload = w.len - HEADER_SIZE;
    if (payload > UINT32_MAX) {
        free(w.buf);
        return hg_error(HG_ERR_INVALID_ARGUMENT, "program '%.*s' is too large to save (%zu payload "
                        "bytes, at most 4 GiB)", HG_NAME_MAX - 1, p->name, payload);
    }
    put_le32(w.buf + 8, (uint32_t)payload);
    put_le32(w.buf + 12, hg_crc32(w.buf + HEADER_SIZE, payload));
    *out = w.buf;
    *len = w.len;
    return HG_OK;
}

uint64_t hg_prog_hash(const hg_prog* p) {
    writer w;
    memset(&w, 0, sizeof w);
    w.hashing = true;
    w.hash = FNV_OFFSET;
    if (p) write_payload(&w, p);
    return w.hash;
}

// ---------------------------------------------------------------------------------------------
// Loading: every count is checked against the bytes that remain before anything is allocated.
// ---------------------------------------------------------------------------------------------
typedef struct reader {
    const uint8_t* p;
    size_t len, pos;
} reader;

static hg_status bad(const reader* r, const char* fmt, ...) HG_PRINTF(2, 3);
static hg_status bad(const reader* r, const char* fmt, ...) {
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hg_error(HG_ERR_BAD_FORMAT, "program binary, payload offset %zu: %s", r->pos, msg);
}

static bool need(const reader* r, size_t n) { return r->len - r->pos >= n; }

static uint32_t r_le(reader* r, int bytes) {
    uint32_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint32_t)r->p[r->pos + (size_t)i] << (8 * i);
    r->pos += (size_t)bytes;
    return v;
}

static uint64_t r_u64(reader* r) {
    uint64_t lo = r_le(r, 4);
    return lo | (uint64_t)r_le(r, 4) << 32;
}

static hg_status r_count(reader* r, const char* what, uint32_t max, size_t min_each, uint32_t* out) {
    if (!need(r, 4)) return bad(r, "truncated before the %s count, expected 4 more bytes", what);
    uint32_t n = r_le(r, 4);
    if (n > max) return bad(r, "%u %s, expected at most %u", n, what, max);
    if ((uint64_t)n * min_each > r->len - r->pos)
        return bad(r, "%u %s need at least %llu bytes but only %zu remain, expected a consistent "
                   "count", n, what, (unsigned long long)n * min_each, r->len - r->pos);
    *out = n;
    return HG_OK;
}

static hg_status r_str(reader* r, const char* what, char out[HG_NAME_MAX]) {
    if (!need(r, 1)) return bad(r, "truncated before the %s, expected a length byte", what);
    size_t n = r_le(r, 1);
    if (n == 0 || n >= HG_NAME_MAX)
        return bad(r, "%s has length %zu, expected 1..%d", what, n, HG_NAME_MAX - 1);
    if (!need(r, n)) return bad(r, "%s is truncated, expected %zu bytes", what, n);
    memcpy(out, r->p + r->pos, n);
    out[n] = 0;
    r->pos += n;
    // strlen-based checks would accept "ab\0c" as "ab": check every byte.
    if (memchr(out, 0, n) || !hg_name_is_identifier(out))
        return bad(r, "%s is not an identifier, expected [A-Za-z_][A-Za-z0-9_]*", what);
    return HG_OK;
}

static hg_status r_dtype(reader* r, const char* what, uint8_t* out) {
    if (!need(r, 1)) return bad(r, "truncated before the %s dtype", what);
    unsigned d = r_le(r, 1);
    if (!hg_dtype_valid((int)d)) return bad(r, "%s has dtype %u, expected 0..%d", what, d, HG_DTYPE_COUNT - 1);
    *out = (uint8_t)d;
    return HG_OK;
}

// A builder refusal (duplicate name, limit) is a format error of the binary.
static hg_status refused(const reader* r, hg_status s) {
    if (s == HG_ERR_OUT_OF_MEMORY) return s;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", hg_last_error());
    return bad(r, "%s", msg);
}

static hg_status r_operand(reader* r, uint32_t i, const char* slot, hg_operand* o) {
    o->kind = r_le(r, 4);
    o->index = r_le(r, 4);
    o->bits = r_u64(r);
    if (o->kind >= HG_OPERAND_KIND_COUNT)
        return bad(r, "instruction %u operand %s has kind %u, expected 0..%d", i, slot, o->kind,
                   HG_OPERAND_KIND_COUNT - 1);
    return HG_OK;
}

static hg_status read_payload(reader* r, hg_prog** out) {
    char name[HG_NAME_MAX];
    hg_status s = r_str(r, "kernel name", name);
    if (s) return s;
    hg_prog* p = hg_prog_new(name);
    if (!p) return HG_ERR_OUT_OF_MEMORY;
    uint32_t n = 0;
    if ((s = r_count(r, "parameters", HG_MAX_PARAMS, 5, &n))) goto fail;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t dtype = 0;
        if ((s = r_str(r, "parameter name", name))) goto fail;
        if (!need(r, 1)) { s = bad(r, "truncated parameter '%s'", name); goto fail; }
        unsigned kind = r_le(r, 1);
        if ((s = r_dtype(r, "parameter", &dtype))) goto fail;
        if (!need(r, 1)) { s = bad(r, "truncated parameter '%s'", name); goto fail; }
        unsigned is_const = r_le(r, 1);
        if (kind >= HG_PARAM_KIND_COUNT) {
            s = bad(r, "parameter '%s' has kind %u, expected 0 (buffer) or 1 (scalar)", name, kind);
            goto fail;
        }
        if (is_const > (kind == HG_PARAM_BUFFER ? 1u : 0u)) {
            s = bad(r, "parameter '%s' has is_const %u, expected 0%s", name, is_const,
                    kind == HG_PARAM_BUFFER ? " or 1" : " for a scalar");
            goto fail;
        }
        if ((s = hg_prog_add_param(p, name, (hg_param_kind)kind, (hg_dtype)dtype, (int)is_const, NULL)))
            { s = refused(r, s); goto fail; }
    }
    if ((s = r_count(r, "shared arrays", HG_MAX_SHARED_ARRAYS, 6, &n))) goto fail;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t dtype = 0;
        if ((s = r_str(r, "shared array name", name)) || (s = r_dtype(r, "shared array", &dtype)))
            goto fail;
        if (!need(r, 4)) { s = bad(r, "truncated shared array '%s'", name); goto fail; }
        uint32_t count = r_le(r, 4);
        if ((s = hg_prog_add_shared(p, name, (hg_dtype)dtype, count, NULL))) { s = refused(r, s); goto fail; }
    }
    if ((s = r_count(r, "registers", HG_MAX_REGS, 3, &n))) goto fail;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t dtype = 0;
        if ((s = r_str(r, "register name", name)) || (s = r_dtype(r, "register", &dtype))) goto fail;
        if ((s = hg_prog_add_reg(p, name, (hg_dtype)dtype, NULL))) { s = refused(r, s); goto fail; }
    }
    if ((s = r_count(r, "instructions", HG_MAX_INSTRS, INSTR_SIZE, &n))) goto fail;
    if (n) {
        p->instrs = malloc((size_t)n * sizeof *p->instrs);
        if (!p->instrs) {
            s = hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory loading %u instructions", n);
            goto fail;
        }
        p->cap_instrs = n;
    }
    for (uint32_t i = 0; i < n; i++) {
        hg_instr* in = &p->instrs[i];
        memset(in, 0, sizeof *in);
        in->op = (uint16_t)r_le(r, 2);
        in->type = (uint8_t)r_le(r, 1);
        in->aux = (uint8_t)r_le(r, 1);
        in->mem = r_le(r, 4);
        if (in->op >= HG_OPCODE_COUNT) {
            s = bad(r, "instruction %u has opcode %u, expected 0..%d", i, in->op, HG_OPCODE_COUNT - 1);
            goto fail;
        }
        if (!hg_dtype_valid(in->type)) {
            s = bad(r, "instruction %u has type %u, expected 0..%d", i, in->type, HG_DTYPE_COUNT - 1);
            goto fail;
        }
        if ((s = r_operand(r, i, "dst", &in->dst)) || (s = r_operand(r, i, "src[0]", &in->src[0])) ||
            (s = r_operand(r, i, "src[1]", &in->src[1])) || (s = r_operand(r, i, "src[2]", &in->src[2])))
            goto fail;
        p->ninstrs = i + 1;
    }
    if (r->pos != r->len) {
        s = bad(r, "%zu bytes after the last instruction, expected the payload to end there",
                r->len - r->pos);
        goto fail;
    }
    *out = p;
    return HG_OK;
fail:
    hg_prog_free(p);
    return s;
}

hg_status hg_prog_load(const uint8_t* bytes, size_t len, hg_prog** out) {
    if (!out || (!bytes && len))
        return hg_error(HG_ERR_NULL_POINTER, "hg_prog_load: NULL argument");
    if (len < HEADER_SIZE)
        return hg_error(HG_ERR_BAD_FORMAT, "program binary is %zu bytes, expected at least the "
                        "%d-byte header", len, HEADER_SIZE);
    if (memcmp(bytes, "ATLS", 4) != 0)
        return hg_error(HG_ERR_BAD_FORMAT, "program binary has magic %02x %02x %02x %02x, expected "
                        "\"ATLS\"", bytes[0], bytes[1], bytes[2], bytes[3]);
    reader h = {bytes, len, 4};
    unsigned version = r_le(&h, 2), flags = r_le(&h, 2);
    uint32_t size = r_le(&h, 4), crc = r_le(&h, 4);
    if (version != FORMAT_VERSION)
        return hg_error(HG_ERR_BAD_FORMAT, "program binary has format version %u, expected %d",
                        version, FORMAT_VERSION);
    if (flags != 0)
        return hg_error(HG_ERR_BAD_FORMAT, "program binary has flags 0x%04x, expected 0", flags);
    if ((uint64_t)size != (uint64_t)(len - HEADER_SIZE))
        return hg_error(HG_ERR_BAD_FORMAT, "program binary header says %u payload bytes but %zu "
                        "follow, expected them to match (truncated or padded file?)", size,
                        len - HEADER_SIZE);
    uint32_t actual = hg_crc32(bytes + HEADER_SIZE, size);
    if (actual != crc)
        return hg_error(HG_ERR_BAD_FORMAT, "program binary checksum is 0x%08x but the payload's "
                        "CRC-32 is 0x%08x, expected equal (corrupted data)", crc, actual);
    reader r = {bytes + HEADER_SIZE, size, 0};
    return read_payload(&r, out);
}
