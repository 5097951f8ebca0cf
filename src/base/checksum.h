// Internal: checksums and hashes shared by the binary program format and the kernel caches.
#ifndef HG_CORE_CHECKSUM_H
#define HG_CORE_CHECKSUM_H
#include <stddef.h>
#include <stdint.h>

// IEEE CRC-32 (reflected polynomial 0xEDB88320) of n bytes.
uint32_t hg_crc32(const void* p, size_t n);

// FNV-1a 64 of n bytes, continuing from h (start with HG_FNV_OFFSET).
#define HG_FNV_OFFSET UINT64_C(0xcbf29ce484222325)
uint64_t hg_fnv1a64(uint64_t h, const void* p, size_t n);

#endif
