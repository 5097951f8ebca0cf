// CRC-32 and FNV-1a (see checksum.h).
#include "base/checksum.h"

// Four bits at a time: a 16-entry table small enough to write out, so there is no lazily built
// (racy) table.
static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
    0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};

uint32_t hg_crc32(const void* data, size_t n) {
    const uint8_t* p = data;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        c = crc_nibble[c & 0xFu] ^ (c >> 4);
        c = crc_nibble[c & 0xFu] ^ (c >> 4);
    }
    return c ^ 0xFFFFFFFFu;
}

uint64_t hg_fnv1a64(uint64_t h, const void* data, size_t n) {
    const uint8_t* p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}
