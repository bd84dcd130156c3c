/*
 * cache.h — a set-associative cache array with LRU replacement that holds the
 * bytes of its lines.
 *
 * This is the storage and replacement half of a cache; the coherence state
 * machine that decides what to do on a miss lives elsewhere (src/mem/cn_agent.c,
 * src/mem/home.c) and keeps its per-line protocol state in the `state` byte.
 * Lines are CXS_LINE_BYTES (64) bytes, addressed by line address
 * (byte address >> 6). Sets are chosen by line address modulo the number of
 * sets (sizes need not be powers of two, but the number of sets must be >= 1).
 *
 * LRU is exact: each way carries a 64-bit last-use stamp from a per-cache
 * counter, so ties cannot occur and the victim choice is deterministic.
 * A victim is the invalid way with the lowest index if there is one, else the
 * least recently used way whose `pinned` flag is clear (a line in a transient
 * protocol state must not be evicted); if every way is pinned, no victim.
 */
#ifndef CXLSIM_CACHE_H
#define CXLSIM_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CXS_LINE_BYTES 64
#define CXS_LINE_SHIFT 6

struct cxs_cache_line {
	uint64_t tag;       /* line address */
	uint64_t lru;       /* last-use stamp, larger = more recent */
	uint8_t valid;
	uint8_t dirty;
	uint8_t state;      /* owned by the protocol using the cache */
	uint8_t pinned;     /* not a victim candidate while set */
	uint32_t aux;       /* owned by the protocol (e.g. sharer bits of cores) */
	uint8_t data[CXS_LINE_BYTES];
};

struct cxs_cache_geom {
	uint64_t size_bytes;
	uint32_t ways;
	uint32_t latency_cycles; /* round-trip hit latency */
};

struct cxs_cache {
	struct cxs_cache_geom geom;
	uint64_t nsets;
	uint64_t clock;     /* LRU stamp source */
	struct cxs_cache_line *lines; /* nsets * ways */
	/* Zeroed by init, then counted by the caller: no function here changes them. */
	uint64_t hits, misses, evictions, writebacks;
};

/*
 * Initialises a cache with every way invalid; returns 0, or -1 with a one-line
 * message in err (if err is not NULL) naming the bad value, for a geometry that
 * cannot work: ways not in 1..64, size_bytes not a positive multiple of
 * ways * 64, or more memory than the host has. After a failure *c is zeroed,
 * so cxs_cache_destroy on it is harmless.
 */
int cxs_cache_init(struct cxs_cache *c, const struct cxs_cache_geom *g, char *err, size_t errlen);
/*
 * The same checks without allocating anything: for validating a configuration.
 * (A probe init + destroy of an 8 MiB cache would free an mmap'd block, which
 * raises glibc's mmap threshold above every cache size, so that the real
 * caches then come from the heap and calloc zeroes them page by page instead
 * of getting untouched zero pages from the kernel.)
 */
int cxs_cache_check(const struct cxs_cache_geom *g, char *err, size_t errlen);
void cxs_cache_destroy(struct cxs_cache *c);

/* The valid line with this line address, or NULL. Does not touch LRU. */
struct cxs_cache_line *cxs_cache_find(struct cxs_cache *c, uint64_t line_addr);
/* Marks a line most recently used. */
void cxs_cache_touch(struct cxs_cache *c, struct cxs_cache_line *l);

/*
 * The way that an insertion of line_addr would use: the invalid way with the
 * lowest index, else the LRU unpinned way (still valid: the caller must write
 * it back or drop it first), or NULL if every way of the set is pinned.
 * `pinned` protects valid lines only: to reserve a way for a fill in flight,
 * install the line and pin it rather than leaving the way invalid.
 * The caller has checked that line_addr is not already present (find).
 */
struct cxs_cache_line *cxs_cache_victim(struct cxs_cache *c, uint64_t line_addr);

/*
 * Installs line_addr into way `l` (from cxs_cache_victim, now invalid or
 * reused): sets tag, valid, clears dirty/state/pinned/aux, copies data (if not
 * NULL, else zeroes), marks it MRU. Returns l. `l` must be a way of
 * line_addr's set and no other way may hold line_addr (both asserted).
 */
struct cxs_cache_line *cxs_cache_install(struct cxs_cache *c, struct cxs_cache_line *l,
					 uint64_t line_addr, const uint8_t *data);

/*
 * Drops a line without writing it back (the caller does that first if dirty):
 * clears valid, dirty, state, pinned and aux, so the way is the next victim of
 * its set unless a lower-index way is also invalid.
 */
void cxs_cache_invalidate(struct cxs_cache *c, struct cxs_cache_line *l);

/* Set index of a line address. */
static inline uint64_t cxs_cache_set(const struct cxs_cache *c, uint64_t line_addr)
{
	return line_addr % c->nsets;
}

#endif /* CXLSIM_CACHE_H */
