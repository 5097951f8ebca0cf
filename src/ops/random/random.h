// Internal: the counter-based generator behind hg_random_uniform / hg_random_normal, and the
// exact mapping of one element's counter to its value, so tests can check both directly.
#ifndef HG_OPS_RANDOM_H
#define HG_OPS_RANDOM_H
#include <stdint.h>

// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011):
// out = bijection of the 128-bit counter ctr under the 64-bit key.
void hg_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

// The four words of element i of a call with `offset` under `seed`: the counter is the 128-bit
// sum offset + i (words little-endian: ctr[0] = bits 0..31, ctr[2] = the carry), key =
// {lo32(seed), hi32(seed)}.
void hg_random_words(uint64_t seed, uint64_t offset, uint64_t i, uint32_t out[4]);

// The words of 16 consecutive counters: w[j][l] = word j of element first + l (as
// hg_random_words), computed 8 or 16 at a time where the CPU has AVX2 / AVX-512.
void hg_random_words16(uint64_t seed, uint64_t offset, uint64_t first, uint32_t w[4][16]);

// Uniform double in [0, 1) from words 0 and 1: the top 53 bits of (w1 << 32 | w0) times 2^-53.
double hg_random_unit(const uint32_t w[4]);

// Standard normal from all four words (Box-Muller, cosine branch): u1 = (top 53 bits of w0,w1
// + 1) * 2^-53 lies in (0, 1], so log(u1) is finite (|z| <= sqrt(106 ln 2) ~ 8.57);
// u2 = top 53 bits of w2,w3 * 2^-53 in [0, 1); z = sqrt(-2 log u1) * cos(2 pi u2).
double hg_random_std_normal(const uint32_t w[4]);

// dropout's keep threshold: element i is kept iff its word >= ceil(p * 2^32) (dropout.c).
uint64_t hg_dropout_threshold(double p);

#endif
