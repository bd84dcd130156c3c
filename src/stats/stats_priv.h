/*
 * stats_priv.h — what the statistics registry's files share:
 *
 *   stats.c    the registry: entries, lookup, counters, histograms, vectors,
 *              instances, inspection, the digest
 *   series.c   sampling patterns and time series
 *   blob.c     the wire blob (pack / unpack)
 *
 * The layout of struct cxs_stats and the invariants of its parts are
 * described in stats.c; the blob's layout in blob.c.
 */
#ifndef CXLSIM_STATS_PRIV_H
#define CXLSIM_STATS_PRIV_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxlsim/stats.h"

#define CHUNK_ENTRIES 64
#define TEXT_MAX 4095 /* bytes of unit or desc, without the NUL */

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

struct entry {
	enum cxs_stat_kind kind;
	uint32_t nbuckets; /* histograms: the registered count, authoritative */
	char component[CXS_STATS_NAME_MAX + 1];
	char name[CXS_STATS_NAME_MAX + 1];
	char *unit;
	char *desc;
	uint64_t value;        /* counters */
	struct cxs_hist *hist; /* histograms */
	struct cxs_vec *vec;   /* vectors */
	bool sampled;          /* counters: has a series */
};

struct instance {
	char component[CXS_STATS_NAME_MAX + 1];
	char group[CXS_STATS_NAME_MAX + 1];
	uint32_t index;
};

struct series {
	uint32_t stat;    /* entry index of a counter */
	uint64_t *values; /* capsamples of them, nsamples used */
};

struct cxs_stats {
	struct entry **chunk; /* nchunks pointers, each to CHUNK_ENTRIES entries */
	size_t nchunks;
	size_t count;
	uint32_t *slot; /* nslots (a power of two) of index + 1; 0 = empty */
	size_t nslots;

	struct instance *inst;
	size_t ninst, capinst;

	char *patterns; /* NULL: nothing is matched against new statistics */
	size_t examined; /* entries [0, examined) have been matched */
	struct series *ser;
	size_t nser, capser;
	uint64_t nsamples, capsamples;
};

static inline uint64_t fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

static inline uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		h = (h ^ ((v >> (8 * i)) & 0xff)) * FNV_PRIME;
	return h;
}

static inline struct entry *entry_at(const struct cxs_stats *st, size_t i)
{
	assert(i < st->count);
	return &st->chunk[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES];
}

/* Name rules (stats.c, "Names and text"). */
bool stats_name_char(char c);
bool stats_valid_component(const char *s);
bool stats_valid_stat_name(const char *s);
char *stats_dup_text(const char *s); /* NULL as ""; NULL when out of memory */

/* Index of component/name, or SIZE_MAX. */
size_t stats_lookup(const struct cxs_stats *st, const char *component, const char *name);
/*
 * Appends a new entry; the caller has validated every argument and checked
 * that the name is not yet registered. NULL only when out of memory, leaving
 * the registry as it was.
 */
struct entry *stats_add_entry(struct cxs_stats *st, enum cxs_stat_kind kind, const char *component,
			      const char *name, const char *unit, const char *desc,
			      uint32_t nbuckets);
int stats_vec_reserve(struct cxs_vec *v, uint64_t n); /* room for n values; 0 or -1 */

const struct instance *stats_find_instance(const struct cxs_stats *st, const char *component);
bool stats_instance_name_ok(const char *component, const char *group, uint64_t index);
int stats_add_instance(struct cxs_stats *st, const char *component, const char *group,
		       uint32_t index);

/* Every series room for n samples; a new series of counter `stat` (series.c). */
int stats_samples_reserve(struct cxs_stats *st, uint64_t n);
int stats_add_series(struct cxs_stats *st, uint32_t stat);

#endif /* CXLSIM_STATS_PRIV_H */
