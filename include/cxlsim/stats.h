/*
 * stats.h — the counter registry of one simulated node.
 *
 * Every node owns one registry. Components (a cache, a port, the engine's view
 * of the node) register counters and histograms once, at init, by name; the
 * model then bumps them through the pointer it got back, so the hot path is a
 * plain increment; that pointer stays valid until cxs_stats_free, however many
 * statistics are registered after it. Names are "component/counter" pairs, each
 * 1..CXS_STATS_NAME_MAX bytes of [A-Za-z0-9_.-] and neither "." nor "..", so
 * that they map one-to-one onto HDF5 group and dataset names. A unit or
 * description may be NULL (stored as "") and is at most 4095 bytes.
 *
 * A registry serialises to a flat byte blob (cxs_stats_pack) so that a rank can
 * ship its nodes' counters to the rank that writes the HDF5 file; the blob is
 * self-describing (names, units, definitions travel with the values) and
 * cxs_stats_unpack rejects a truncated or corrupt blob. The layout (versioned,
 * little-endian, with a body checksum) is documented in src/stats/stats.c.
 *
 * Histograms use power-of-two buckets: bucket 0 counts the value 0, bucket i
 * (i >= 1) counts values in [2^(i-1), 2^i). 65 buckets cover all of uint64_t,
 * and a histogram may ask for fewer (values past the last bucket land in it).
 * count, sum, min and max cover every value added; sum saturates at
 * UINT64_MAX rather than wrapping. min and max are 0 while count is 0.
 * Update a histogram only through cxs_hist_add.
 */
#ifndef CXLSIM_STATS_H
#define CXLSIM_STATS_H

#include <stddef.h>
#include <stdint.h>

#define CXS_STATS_NAME_MAX 63 /* bytes, without the terminating NUL */
#define CXS_HIST_BUCKETS_MAX 65

struct cxs_stats;

struct cxs_hist {
	uint32_t nbuckets;
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t bucket[CXS_HIST_BUCKETS_MAX];
};

enum cxs_stat_kind { CXS_STAT_COUNTER = 0, CXS_STAT_HIST = 1 };

/* A read-only view of one registered statistic, for writers and tests. */
struct cxs_stat_view {
	enum cxs_stat_kind kind;
	const char *component;
	const char *name;
	const char *unit;
	const char *desc;
	uint64_t value;             /* counters; a histogram's count */
	const struct cxs_hist *hist; /* histograms */
};

struct cxs_stats *cxs_stats_new(void);
void cxs_stats_free(struct cxs_stats *st);

/*
 * Registers a counter and returns a pointer to its value (initially 0), valid
 * until cxs_stats_free. Registering the same component/name twice returns the
 * same counter (the first unit and description stand). Returns NULL for an
 * invalid name or an over-long unit/description (a programming error), for a
 * name already registered as a histogram, and when out of memory.
 */
uint64_t *cxs_stats_counter(struct cxs_stats *st, const char *component, const char *name,
			    const char *unit, const char *desc);

/*
 * Registers a log2 histogram with nbuckets (1..CXS_HIST_BUCKETS_MAX), zeroed.
 * Same rules as cxs_stats_counter; registering the same name again returns the
 * same histogram only with the same nbuckets, NULL otherwise.
 */
struct cxs_hist *cxs_stats_hist(struct cxs_stats *st, const char *component, const char *name,
				const char *unit, const char *desc, uint32_t nbuckets);

void cxs_hist_add(struct cxs_hist *h, uint64_t value);

/*
 * Number of registered statistics, and the i-th in registration order:
 * cxs_stats_get returns 0, or -1 when i is out of range. The view's strings
 * and hist pointer live as long as the registry.
 */
size_t cxs_stats_count(const struct cxs_stats *st);
int cxs_stats_get(const struct cxs_stats *st, size_t i, struct cxs_stat_view *out);

/*
 * Looks a statistic up by name; NULL if absent. For a histogram the pointer
 * is to its count.
 */
const uint64_t *cxs_stats_find(const struct cxs_stats *st, const char *component, const char *name);

/*
 * Serialises the registry into a malloc'd blob (*buf, *len). Returns 0, or -1
 * when out of memory. cxs_stats_unpack builds a new registry from a blob and
 * returns NULL when the blob is truncated or malformed.
 */
int cxs_stats_pack(const struct cxs_stats *st, void **buf, size_t *len);
struct cxs_stats *cxs_stats_unpack(const void *buf, size_t len);

/*
 * 64-bit digest (FNV-1a) of every statistic's kind, name and value(s), in
 * registration order; units and descriptions are not part of it. Two runs with
 * the same configuration must give the same digest per node.
 */
uint64_t cxs_stats_digest(const struct cxs_stats *st);

#endif /* CXLSIM_STATS_H */
