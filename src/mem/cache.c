/*
 * cache.c — the storage and replacement half of a cache (contract in
 * include/cxlsim/cache.h): a set-associative array of 64-byte lines holding
 * their bytes, with exact LRU.
 *
 * Layout. One calloc of nsets * ways records, set-major, so the ways of a set
 * are contiguous and every lookup touches one run of at most 64 records:
 *
 *     lines ──► | set 0: way 0 … way W-1 | set 1: way 0 … way W-1 | … |
 *                 ^ lines + (line_addr % nsets) * W
 *
 * A way's index inside its set is its offset from that base. The index decides
 * only among invalid ways (the lowest is used first); among valid ways the
 * stamps decide.
 *
 * Geometry. nsets = size_bytes / (ways * 64) must be an exact integer >= 1 and
 * ways must be 1..64. The sets need not be a power of two (the set is
 * line_addr % nsets, one division per lookup). The CN caches of DIKTAMO,
 * Table II (Section VI), are L1 48 KiB 12-way (64 sets), L2 512 KiB 8-way
 * (1024 sets) and L3 8 MiB 16-way (8192 sets). The 64-way cap keeps the linear
 * scan of a set short (4 KiB of bytes plus 1.5 KiB of metadata at most) and
 * lets a caller keep per-set way masks in a uint64_t; nothing modelled comes
 * near it.
 *
 * Invariants, for every way l of set s:
 *   - l->valid implies cxs_cache_set(c, l->tag) == s (install asserts it);
 *   - no two valid ways of a set hold the same tag (install asserts it);
 *   - the stamps of valid ways are distinct, because every touch and install
 *     takes ++clock; so "least recently used" never ties and victims depend
 *     only on the sequence of calls, never on memory contents or addresses.
 *     The 64-bit clock does not wrap in practice: at 10^9 touches per second of
 *     host time it lasts 584 years.
 *
 * Cost. find and victim scan the set: O(ways), 8 to 16 comparisons for the
 * DIKTAMO caches, cheaper than maintaining a tag hash per set. touch,
 * install and invalidate are O(1) (install is O(ways) when asserts are on).
 * Memory is 88 bytes per line: an 8 MiB L3 takes 11 MiB of host memory, a CN
 * with four cores (L1 + L2 each, one L3) about 14 MiB.
 *
 * What only a bug can cause (a line pointer from another cache or set, a
 * duplicate install, touching an invalid line) is asserted; a geometry from
 * the configuration is checked and reported as one line.
 */
#include "cxlsim/errmsg.h"
#include "cxlsim/cache.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX_WAYS 64u

/* The memory figures in the header comment assume this record size. */
_Static_assert(sizeof(struct cxs_cache_line) == 88, "a cache line record is 88 bytes");

/* First way of the set that line_addr maps to. */
static struct cxs_cache_line *set_base(struct cxs_cache *c, uint64_t line_addr)
{
	assert(c->lines != NULL && c->nsets >= 1);
	return c->lines + cxs_cache_set(c, line_addr) * c->geom.ways;
}

#ifndef NDEBUG
/* Whether l is one of c's records (a pointer from another cache is a bug). */
static bool owns(const struct cxs_cache *c, const struct cxs_cache_line *l)
{
	return l >= c->lines && l < c->lines + c->nsets * c->geom.ways;
}
#endif

int cxs_cache_check(const struct cxs_cache_geom *g, char *err, size_t errlen)
{
	assert(g != NULL);
	if (g->ways == 0 || g->ways > CACHE_MAX_WAYS) {
		cxs_set_err(err, errlen, "cache: ways = %" PRIu32 ", expected 1 to %u", g->ways,
			CACHE_MAX_WAYS);
		return -1;
	}
	uint64_t set_bytes = (uint64_t)g->ways * CXS_LINE_BYTES;
	if (g->size_bytes == 0 || g->size_bytes % set_bytes != 0) {
		cxs_set_err(err, errlen,
			"cache: size_bytes = %" PRIu64 " is not a positive multiple of ways * %d = %" PRIu64,
			g->size_bytes, CXS_LINE_BYTES, set_bytes);
		return -1;
	}
	/* calloc checks its own product, but nlines may not even fit a size_t on 32-bit hosts. */
	if (g->size_bytes / CXS_LINE_BYTES > SIZE_MAX / sizeof(struct cxs_cache_line)) {
		cxs_set_err(err, errlen, "cache: size_bytes = %" PRIu64 " is too large for this host",
			g->size_bytes);
		return -1;
	}
	return 0;
}

int cxs_cache_init(struct cxs_cache *c, const struct cxs_cache_geom *g, char *err, size_t errlen)
{
	assert(c != NULL && g != NULL);
	/* Zeroed first, so that destroy is safe after a failed init. */
	memset(c, 0, sizeof *c);
	if (cxs_cache_check(g, err, errlen) != 0)
		return -1;
	uint64_t nlines = g->size_bytes / CXS_LINE_BYTES;
	c->lines = calloc((size_t)nlines, sizeof(struct cxs_cache_line));
	if (c->lines == NULL) {
		cxs_set_err(err, errlen, "cache: size_bytes = %" PRIu64 ": out of memory for %" PRIu64 " lines",
			g->size_bytes, nlines);
		return -1;
	}
	c->geom = *g;
	c->nsets = g->size_bytes / ((uint64_t)g->ways * CXS_LINE_BYTES);
	return 0;
}

void cxs_cache_destroy(struct cxs_cache *c)
{
	free(c->lines);
	memset(c, 0, sizeof *c);
}

struct cxs_cache_line *cxs_cache_find(struct cxs_cache *c, uint64_t line_addr)
{
	struct cxs_cache_line *set = set_base(c, line_addr);

	for (uint32_t w = 0; w < c->geom.ways; w++)
		if (set[w].valid && set[w].tag == line_addr)
			return &set[w];
	return NULL;
}

void cxs_cache_touch(struct cxs_cache *c, struct cxs_cache_line *l)
{
	/* Stamping an invalid way would make a later install's stamp look older than it is. */
	assert(owns(c, l) && l->valid);
	l->lru = ++c->clock;
}

struct cxs_cache_line *cxs_cache_victim(struct cxs_cache *c, uint64_t line_addr)
{
	struct cxs_cache_line *set = set_base(c, line_addr);
	struct cxs_cache_line *lru = NULL;

	for (uint32_t w = 0; w < c->geom.ways; w++) {
		struct cxs_cache_line *l = &set[w];

		/* The first invalid way wins outright: a fill never evicts while room is left. */
		if (!l->valid)
			return l;
		/* Stamps of valid ways are distinct, so strict < needs no tie-break. */
		if (!l->pinned && (lru == NULL || l->lru < lru->lru))
			lru = l;
	}
	return lru;
}

struct cxs_cache_line *cxs_cache_install(struct cxs_cache *c, struct cxs_cache_line *l,
					 uint64_t line_addr, const uint8_t *data)
{
	/* Preconditions: l is a way of line_addr's set, and no other way already holds line_addr. */
	assert(owns(c, l));
	assert(l >= set_base(c, line_addr) && l < set_base(c, line_addr) + c->geom.ways);
#ifndef NDEBUG
	for (const struct cxs_cache_line *o = set_base(c, line_addr);
	     o < set_base(c, line_addr) + c->geom.ways; o++)
		assert(o == l || !o->valid || o->tag != line_addr);
#endif
	l->tag = line_addr;
	l->valid = 1;
	l->dirty = 0;
	l->state = 0;
	l->pinned = 0;
	l->aux = 0;
	/* memmove: a caller re-installing a line may pass its own l->data. */
	if (data != NULL)
		memmove(l->data, data, CXS_LINE_BYTES);
	else
		memset(l->data, 0, CXS_LINE_BYTES);
	l->lru = ++c->clock;
	return l;
}

void cxs_cache_invalidate(struct cxs_cache *c, struct cxs_cache_line *l)
{
	(void)c; /* only the assert reads it */
	assert(owns(c, l));
	/* tag, stamp and bytes are left stale: nothing reads them until install rewrites them. */
	l->valid = 0;
	l->dirty = 0;
	l->state = 0;
	l->pinned = 0;
	l->aux = 0;
}
