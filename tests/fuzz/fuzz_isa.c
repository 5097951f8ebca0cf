// libFuzzer target for the Atlas ISA text parser, printer, binary loader and validator.
//
// The input is tried both as text and as a binary program. Properties checked (any violation
// aborts, which the fuzzer reports with the input):
//   text:   parse ok -> validate does not crash; print -> parse gives an equal program whose
//           print is byte-identical; save -> load gives an equal program with the same hash.
//   binary: load ok -> validate does not crash; save gives back exactly the input bytes;
//           a valid program also survives print -> parse.
// Build: CC=clang cmake -DHG_FUZZ=ON -DHG_SANITIZE=ON ...; the replay test (replay_main.c) runs
// the same function over tests/fuzz/corpus in every build.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/program.h"
#include "isa/text_imm.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void fail(const char* what, const hg_prog* p) {
    fprintf(stderr, "fuzz_isa: property violated: %s (program '%s'; last error: %s)\n", what,
            p ? p->name : "?", hg_last_error());
    abort();
}

// print -> parse -> equal -> print again, byte-identical.
static void text_roundtrip(const hg_prog* p) {
    char* t1 = NULL;
    size_t n1 = 0;
    if (hg_prog_print(p, &t1, &n1) != HG_OK) fail("print failed", p);
    if (strlen(t1) != n1) fail("print length", p);
    hg_prog* q = NULL;
    if (hg_prog_parse(t1, n1, &q) != HG_OK) {
        fprintf(stderr, "%s\n", t1);
        fail("parse(print(p)) failed", p);
    }
    if (!hg_prog_equal(p, q)) fail("parse(print(p)) != p", p);
    char* t2 = NULL;
    size_t n2 = 0;
    if (hg_prog_print(q, &t2, &n2) != HG_OK || n1 != n2 || memcmp(t1, t2, n1) != 0)
        fail("print(parse(print(p))) != print(p)", p);
    free(t1);
    free(t2);
    hg_prog_free(q);
}

// save -> load -> equal, same hash; returns the saved bytes.
static uint8_t* binary_roundtrip(const hg_prog* p, size_t* len) {
    uint8_t* bin = NULL;
    if (hg_prog_save(p, &bin, len) != HG_OK) fail("save failed", p);
    hg_prog* q = NULL;
    if (hg_prog_load(bin, *len, &q) != HG_OK) fail("load(save(p)) failed", p);
    if (!hg_prog_equal(p, q) || hg_prog_hash(p) != hg_prog_hash(q)) fail("load(save(p)) != p", p);
    hg_prog_free(q);
    return bin;
}

// Names the text cannot express (reserved words) are legal in the IR; skip text checks then.
static int names_printable(const hg_prog* p) {
    if (hg_text_is_keyword(p->name, strlen(p->name))) return 0;
    for (uint32_t i = 0; i < p->nparams; i++)
        if (hg_text_is_keyword(p->params[i].name, strlen(p->params[i].name))) return 0;
    for (uint32_t i = 0; i < p->nshared; i++)
        if (hg_text_is_keyword(p->shared[i].name, strlen(p->shared[i].name))) return 0;
    for (uint32_t i = 0; i < p->nregs; i++)
        if (hg_text_is_keyword(p->regs[i].name, strlen(p->regs[i].name))) return 0;
    return 1;
}

// IEEE CRC-32, bitwise (independent of the library's table).
static uint32_t crc32_ref(const uint8_t* d, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= d[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

// Binary input: load -> validate -> save gives the same bytes -> (valid) text round trip.
static void binary_input(const uint8_t* data, size_t size) {
    hg_prog* p = NULL;
    if (hg_prog_load(data, size, &p) != HG_OK) return;
    int valid = hg_prog_validate(p) == HG_OK;
    char buf[256];
    for (uint32_t i = 0; i < p->ninstrs && i < 64; i++) hg_instr_text(p, i, buf, sizeof buf);
    size_t len = 0;
    uint8_t* bin = binary_roundtrip(p, &len);
    if (len != size || memcmp(bin, data, size) != 0) fail("save(load(bytes)) != bytes", p);
    free(bin);
    char* t = NULL;
    size_t n = 0;
    if (hg_prog_print(p, &t, &n) != HG_OK) fail("print of a loaded program failed", p);
    free(t);
    if (valid && names_printable(p)) text_roundtrip(p);
    hg_prog_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    hg_prog* p = NULL;
    if (hg_prog_parse((const char*)data, size, &p) == HG_OK) {
        (void)hg_prog_validate(p);
        char buf[256];
        for (uint32_t i = 0; i < p->ninstrs && i < 64; i++) hg_instr_text(p, i, buf, sizeof buf);
        text_roundtrip(p);  // everything the parser accepts prints and reparses
        size_t len = 0;
        free(binary_roundtrip(p, &len));
        hg_prog_free(p);
    }
    binary_input(data, size);
    // The same bytes as a payload behind a correct header, so the fuzzer reaches the payload
    // decoder instead of stopping at the checksum.
    if (size < (1u << 24)) {
        uint8_t* framed = malloc(size + 16);
        if (!framed) return 0;
        memcpy(framed, "ATLS\x01\x00\x00\x00", 8);
        uint32_t crc = crc32_ref(data, size);
        for (int i = 0; i < 4; i++) {
            framed[8 + i] = (uint8_t)(size >> (8 * i));
            framed[12 + i] = (uint8_t)(crc >> (8 * i));
        }
        if (size) memcpy(framed + 16, data, size);
        binary_input(framed, size + 16);
        free(framed);
    }
    return 0;
}
