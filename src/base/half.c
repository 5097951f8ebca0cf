// IEEE binary16 and bfloat16 <-> binary32 conversions on bit patterns, round to nearest even.
// Written with integer operations only, so the result does not depend on the FPU rounding mode
// or on F16C being present.
#include <string.h>
#include "hologram.h"

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float hg_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1F)  // inf / NaN: keep the payload (a quiet NaN stays quiet)
        return bits_f32(sign | 0x7F800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return bits_f32(sign);
        // Subnormal: normalize. value = man * 2^-24.
        int e = -14;
        while (!(man & 0x400u)) {
            man <<= 1;
            e--;
        }
        man &= 0x3FFu;
        return bits_f32(sign | ((uint32_t)(e + 127) << 23) | (man << 13));
    }
    return bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

// Shifts m right by s bits, rounding to nearest even (s may exceed 31).
static uint32_t shift_rne(uint32_t m, unsigned s) {
    if (s == 0) return m;
    if (s > 31) return 0;  // m < 2^24 here, so even the half-way point is below 2^(s-1)
    uint32_t q = m >> s;
    uint32_t rem = m & ((1u << s) - 1);
    uint32_t half = 1u << (s - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return q;
}

uint16_t hg_f32_to_f16(float value) {
    uint32_t u = f32_bits(value);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t exp = (u >> 23) & 0xFFu;
    uint32_t man = u & 0x7FFFFFu;
    if (exp == 0xFF) {
        if (man == 0) return (uint16_t)(sign | 0x7C00u);
        // NaN: keep the top payload bits (f16 -> f32 -> f16 is bit-exact); set the quiet bit
        // only when those bits are zero, so a NaN never becomes inf.
        uint32_t pay = man >> 13;
        return (uint16_t)(sign | 0x7C00u | pay | (pay ? 0u : 0x200u));
    }
    int e = (int)exp - 127;  // unbiased exponent (f32 subnormals are far below f16 range)
    if (exp == 0) return sign;  // |x| < 2^-126: rounds to zero in f16
    uint32_t m = man | 0x800000u;  // 24-bit significand, value = m * 2^(e-23)
    if (e >= -14) {
        // Normal range of f16: keep 11 bits. Rounding may carry into the exponent (and to inf),
        // which the plain addition of the encoded fields handles.
        uint32_t r = shift_rne(m, 13);                       // 11 or 12 bits
        uint32_t enc = ((uint32_t)(e + 15) << 10) + (r - 0x400u);
        if (enc >= 0x7C00u) return (uint16_t)(sign | 0x7C00u);
        return (uint16_t)(sign | enc);
    }
    // Subnormal f16: value = q * 2^-24 with q = m * 2^(e-23+24) = m >> (-e-1), a shift >= 14.
    unsigned s = (unsigned)(-e - 1);
    uint32_t q = shift_rne(m, s);           // may round up to 0x400, the smallest normal: still right
    return (uint16_t)(sign | q);
}

float hg_bf16_to_f32(uint16_t bits) { return bits_f32((uint32_t)bits << 16); }

uint16_t hg_f32_to_bf16(float value) {
    uint32_t u = f32_bits(value);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu))
        // NaN: keep the top payload bits, quiet only when they are zero (never inf)
        return (uint16_t)((u >> 16) | (((u >> 16) & 0x7Fu) ? 0u : 0x40u));
    // Round to nearest even on the low 16 bits; a carry moves into the exponent (up to inf).
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
