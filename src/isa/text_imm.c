// Immediate literals of the Atlas ISA text: parsing by the operand slot's type and the
// canonical (shortest round-trip) printing. Kept in one file so the two stay inverse.
#include "isa/text_imm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "hologram.h"

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool token_is(const char* tok, size_t n, const char* word) {
    size_t m = strlen(word);
    return n == m && memcmp(tok, word, n) == 0;
}

static const char* type_name(int dtype) {
    const char* s = hg_dtype_valid(dtype) ? hg_dtype_name((hg_dtype)dtype) : NULL;
    return s ? s : "?";
}

// Reads digits in base 10 or 16 into a u64; false on overflow or a non-digit.
static bool read_u64(const char* s, size_t n, int base, uint64_t* out) {
    uint64_t v = 0;
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        int d = base == 16 ? hex_value(s[i]) : (is_digit(s[i]) ? s[i] - '0' : -1);
        if (d < 0) return false;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return true;
}

static uint64_t width_mask(unsigned width) {
    return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

static bool parse_int(const char* tok, size_t n, int dtype, uint64_t* bits, char* why,
                      size_t why_len) {
    unsigned width = hg_dtype_bits(dtype);
    const char* s = tok;
    size_t m = n;
    bool neg = false, has_sign = false;
    if (m > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        has_sign = true;
        s++;
        m--;
    }
    bool hex = m > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    uint64_t mag = 0;
    if (!read_u64(hex ? s + 2 : s, hex ? m - 2 : m, hex ? 16 : 10, &mag)) {
        // Tell a too-large number apart from something that is not a number at all.
        bool digits = m > 0;
        for (size_t i = hex ? 2 : 0; i < m; i++)
            if (!(hex ? hex_value(s[i]) >= 0 : is_digit(s[i]))) digits = false;
        if (digits)
            snprintf(why, why_len, "integer immediate '%.*s' does not fit in 64 bits, expected a "
                     "value in the range of %s", (int)n, tok, type_name(dtype));
        else
            snprintf(why, why_len, "'%.*s' is not an integer immediate, expected a decimal or "
                     "0x-hex integer for %s", (int)n, tok, type_name(dtype));
        return false;
    }
    uint64_t mask = width_mask(width);
    bool is_signed = hg_dtype_is_signed_int(dtype);
    if (hex && !has_sign) {
        // Unsigned hex is the bit pattern of the type: 0xff is -1 as i8.
        if (mag > mask) {
            snprintf(why, why_len, "hex immediate '%.*s' has more than %u bits, expected at most "
                     "%u hex digits of value for %s", (int)n, tok, width, width / 4,
                     type_name(dtype));
            return false;
        }
        *bits = mag;
        return true;
    }
    if (is_signed) {
        uint64_t max_pos = mask >> 1;  // 2^(w-1) - 1
        if ((!neg && mag > max_pos) || (neg && mag > max_pos + 1)) {
            snprintf(why, why_len, "immediate '%.*s' is out of range for %s, expected %lld..%llu",
                     (int)n, tok, type_name(dtype), -(long long)(max_pos) - 1,
                     (unsigned long long)max_pos);
            return false;
        }
        *bits = (neg ? (uint64_t)0 - mag : mag) & mask;
        return true;
    }
    if ((neg && mag != 0) || mag > mask) {
        snprintf(why, why_len, "immediate '%.*s' is out of range for %s, expected 0..%llu",
                 (int)n, tok, type_name(dtype), (unsigned long long)mask);
        return false;
    }
    *bits = mag;
    return true;
}

// [+-]? (digits [. digits*] | . digits) ([eE] [+-]? digits)?  — no hex floats, no "infinity".
static bool is_decimal_float(const char* s, size_t n) {
    size_t i = 0, mant = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && is_digit(s[i])) i++, mant++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) i++, mant++;
    }
    if (mant == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t e = 0;
        while (i < n && is_digit(s[i])) i++, e++;
        if (e == 0) return false;
    }
    return i == n;
}

static uint64_t nan_bits(int dtype, bool neg) {
    switch (dtype) {
    case HG_DTYPE_F16: return neg ? 0xFE00u : 0x7E00u;
    case HG_DTYPE_BF16: return neg ? 0xFFC0u : 0x7FC0u;
    case HG_DTYPE_F32: return neg ? 0xFFC00000u : 0x7FC00000u;
    default: return neg ? UINT64_C(0xFFF8000000000000) : UINT64_C(0x7FF8000000000000);
    }
}

static uint64_t inf_bits(int dtype, bool neg) {
    switch (dtype) {
    case HG_DTYPE_F16: return neg ? 0xFC00u : 0x7C00u;
    case HG_DTYPE_BF16: return neg ? 0xFF80u : 0x7F80u;
    case HG_DTYPE_F32: return neg ? 0xFF800000u : 0x7F800000u;
    default: return neg ? UINT64_C(0xFFF0000000000000) : UINT64_C(0x7FF0000000000000);
    }
}

static uint32_t f32_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t f64_to_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

// Rounds a decimal (already in f32) to the 16-bit formats; 16-bit immediates go through f32
// exactly like hg_imm_f16 / hg_imm_bf16 do.
static uint16_t narrow16(float f, int dtype) {
    return dtype == HG_DTYPE_F16 ? hg_f32_to_f16(f) : hg_f32_to_bf16(f);
}

static bool parse_float(const char* tok, size_t n, int dtype, uint64_t* bits, char* why,
                        size_t why_len) {
    const char* tn = type_name(dtype);
    // Exact bits: 0f + 8 hex (f32), 0d + 16 hex (f64), 0h + 4 hex (f16, bf16).
    if (n >= 2 && tok[0] == '0' && (tok[1] == 'f' || tok[1] == 'd' || tok[1] == 'h')) {
        char want = dtype == HG_DTYPE_F32 ? 'f' : dtype == HG_DTYPE_F64 ? 'd' : 'h';
        size_t digits = want == 'f' ? 8 : want == 'd' ? 16 : 4;
        uint64_t v = 0;
        if (tok[1] != want || n != 2 + digits || !read_u64(tok + 2, n - 2, 16, &v)) {
            snprintf(why, why_len, "'%.*s' is not an exact-bits literal for %s, expected 0%c "
                     "followed by exactly %zu hex digits", (int)n, tok, tn, want, digits);
            return false;
        }
        *bits = v;
        return true;
    }
    const char* s = tok;
    size_t m = n;
    bool neg = false;
    if (m > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s++;
        m--;
    }
    if (token_is(s, m, "inf")) {
        *bits = inf_bits(dtype, neg);
        return true;
    }
    if (token_is(s, m, "nan")) {
        *bits = nan_bits(dtype, neg);
        return true;
    }
    if (!is_decimal_float(tok, n) || n > HG_TEXT_IMM_MAX) {
        snprintf(why, why_len, "'%.*s' is not a float immediate, expected a decimal number "
                 "(1.5, -0.0, 1e-3), inf, -inf, nan or exact bits for %s", (int)(n > 64 ? 64 : n),
                 tok, tn);
        return false;
    }
    char buf[HG_TEXT_IMM_MAX + 1];
    memcpy(buf, tok, n);
    buf[n] = 0;
    bool overflow;
    if (dtype == HG_DTYPE_F64) {
        double d = strtod(buf, NULL);  // correctly rounded (glibc)
        overflow = isinf(d);
        *bits = f64_to_bits(d);
    } else {
        float f = strtof(buf, NULL);  // directly to f32: no double rounding through f64
        if (dtype == HG_DTYPE_F32) {
            overflow = isinf(f);
            *bits = f32_to_bits(f);
        } else {
            uint16_t h = narrow16(f, dtype);
            overflow = isinf(f) || (h & 0x7FFFu) == (inf_bits(dtype, false) & 0x7FFFu);
            *bits = h;
        }
    }
    if (overflow) {
        snprintf(why, why_len, "float immediate '%.*s' overflows %s, expected a finite value in "
                 "range (or inf)", (int)(n > 64 ? 64 : n), tok, tn);
        return false;
    }
    return true;
}

bool hg_text_parse_imm(const char* tok, size_t n, int dtype, uint64_t* bits, char* why,
                       size_t why_len) {
    if (!hg_dtype_valid(dtype)) {
        snprintf(why, why_len, "immediate '%.*s' for an operand of invalid type %d, expected a "
                 "valid instruction type", (int)(n > 64 ? 64 : n), tok, dtype);
        return false;
    }
    if (dtype == HG_DTYPE_BOOL) {
        if (token_is(tok, n, "true")) { *bits = 1; return true; }
        if (token_is(tok, n, "false")) { *bits = 0; return true; }
        snprintf(why, why_len, "'%.*s' is not a bool immediate, expected true or false",
                 (int)(n > 64 ? 64 : n), tok);
        return false;
    }
    if (hg_dtype_is_int(dtype)) return parse_int(tok, n, dtype, bits, why, why_len);
    return parse_float(tok, n, dtype, bits, why, why_len);
}

// The shortest %.Pg text (P = 1..max, ties to the lower P) that reads back to the same bits;
// P = 9 (f32) and 17 (f64) always do. Comparing lengths across all P prefers "65504" over the
// "6.55e+04" that a smaller P gives.
static void shortest_float(double v, int dtype, char* buf, size_t len) {
    char cand[64];
    size_t best = SIZE_MAX;
    int max = dtype == HG_DTYPE_F64 ? 17 : 9;
    uint64_t want = dtype == HG_DTYPE_F64 ? f64_to_bits(v) : f32_to_bits((float)v);
    uint16_t want16 = (dtype == HG_DTYPE_F16 || dtype == HG_DTYPE_BF16) ? narrow16((float)v, dtype) : 0;
    for (int prec = 1; prec <= max; prec++) {
        int n = snprintf(cand, sizeof cand, "%.*g", prec, v);
        if (n <= 0 || (size_t)n >= best) continue;
        bool ok;
        if (dtype == HG_DTYPE_F64) ok = f64_to_bits(strtod(cand, NULL)) == want;
        else if (dtype == HG_DTYPE_F32) ok = f32_to_bits(strtof(cand, NULL)) == want;
        else ok = narrow16(strtof(cand, NULL), dtype) == want16;
        if (ok) {
            best = (size_t)n;
            snprintf(buf, len, "%s", cand);
        }
    }
}

char* hg_text_format_imm(uint64_t bits, int dtype, char* buf, size_t len) {
    if (!buf || len == 0) return buf;
    if (!hg_dtype_valid(dtype)) {
        snprintf(buf, len, "<imm 0x%llx>", (unsigned long long)bits);
        return buf;
    }
    unsigned width = hg_dtype_bits(dtype);
    uint64_t v = bits & width_mask(width);
    if (dtype == HG_DTYPE_BOOL) {
        if (v <= 1) snprintf(buf, len, "%s", v ? "true" : "false");
        else snprintf(buf, len, "<bad bool 0x%llx>", (unsigned long long)v);
        return buf;
    }
    if (hg_dtype_is_unsigned_int(dtype)) {
        snprintf(buf, len, "%llu", (unsigned long long)v);
        return buf;
    }
    if (hg_dtype_is_signed_int(dtype)) {
        // Sign-extend from the type's width.
        uint64_t sign = UINT64_C(1) << (width - 1);
        int64_t sv = (v & sign) ? (int64_t)(v | ~width_mask(width)) : (int64_t)v;
        snprintf(buf, len, "%lld", (long long)sv);
        return buf;
    }
    if (dtype == HG_DTYPE_F64) {
        double d;
        memcpy(&d, &v, sizeof d);
        if (isnan(d)) snprintf(buf, len, "0d%016llx", (unsigned long long)v);
        else if (isinf(d)) snprintf(buf, len, "%s", d < 0 ? "-inf" : "inf");
        else shortest_float(d, dtype, buf, len);
        return buf;
    }
    float f;
    if (dtype == HG_DTYPE_F32) {
        uint32_t u = (uint32_t)v;
        memcpy(&f, &u, sizeof f);
    } else {
        f = dtype == HG_DTYPE_F16 ? hg_f16_to_f32((uint16_t)v) : hg_bf16_to_f32((uint16_t)v);
    }
    if (isnan(f)) {
        if (dtype == HG_DTYPE_F32) snprintf(buf, len, "0f%08llx", (unsigned long long)v);
        else snprintf(buf, len, "0h%04llx", (unsigned long long)v);
    } else if (isinf(f)) {
        snprintf(buf, len, "%s", f < 0 ? "-inf" : "inf");
    } else {
        shortest_float((double)f, dtype, buf, len);
    }
    return buf;
}

bool hg_text_is_keyword(const char* name, size_t n) {
    static const char* const words[] = {"global", "shared", "const", "true", "false",
                                        "inf", "nan", "_"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (token_is(name, n, words[i])) return true;
    for (int t = 0; t < HG_DTYPE_COUNT; t++)
        if (token_is(name, n, hg_dtype_name((hg_dtype)t))) return true;
    return false;
}
