/*
 * disk_priv.h — what the workload module's small side files (the page map
 * of a recording, page_map.c, and its lock order, lock_order.c) share:
 * little-endian fields of n bytes, whatever the host's byte order, and the
 * mixing hash of their in-memory indexes (open addressing by a 64-bit key:
 * a page number or a lock address).
 */
#ifndef CXLSIM_WORKLOAD_DISK_PRIV_H
#define CXLSIM_WORKLOAD_DISK_PRIV_H

#include <stdint.h>

static inline void disk_put(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t disk_get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The finaliser of MurmurHash3's 64-bit mix, enough to spread keys over a power-of-two table. */
static inline uint64_t disk_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	return k ^ (k >> 29);
}

#endif /* CXLSIM_WORKLOAD_DISK_PRIV_H */
