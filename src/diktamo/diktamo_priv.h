/*
 * diktamo_priv.h — what the DIKTAMO data structures share: the 64-bit mixer
 * behind replica selection and every table keyed by a word address.
 *
 * The mixer is the finaliser of splitmix64 (Steele, Lea and Flood, "Fast
 * splittable pseudorandom number generators", OOPSLA 2014; the constants are
 * Stafford's "Mix13"): a bijection of uint64_t in which every input bit
 * flips each output bit with probability close to 1/2, so consecutive line
 * addresses and power-of-two strides spread as evenly as random keys. It is
 * a pure function of its input, so every rank computes the same groups,
 * savers and table positions (determinism: nothing depends on pointers or
 * arrival order). It maps 0 to 0, so callers add a distinct odd constant per
 * use first (dk_mix64(x + seed)), which also makes two uses of one key
 * independent of each other.
 */
#ifndef CXLSIM_DIKTAMO_PRIV_H
#define CXLSIM_DIKTAMO_PRIV_H

#include <stdint.h>

static inline uint64_t dk_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The golden-ratio increment of splitmix64: seed k of a key is x + k * DK_GOLDEN. */
#define DK_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* Table position of a word address (8-byte aligned: the low 3 bits carry nothing). */
static inline uint64_t dk_word_hash(uint64_t addr)
{
	return dk_mix64((addr >> 3) + 3 * DK_GOLDEN);
}

#endif /* CXLSIM_DIKTAMO_PRIV_H */
