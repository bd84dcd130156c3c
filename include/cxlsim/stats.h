/*
 * stats.h — the statistics registry of one simulated node.
 *
 * Every node owns one registry. Components (a cache, a port, the engine's view
 * of the node) register counters and histograms once, at init, by name; the
 * model then bumps them through the pointer it got back, so the hot path is a
 * plain increment; that pointer stays valid until cxs_stats_free, however many
 * statistics are registered after it. Names are "component/counter" pairs, each
 * 1..CXS_STATS_NAME_MAX bytes of [A-Za-z0-9_.-] and neither "." nor "..", so
 * that they map one-to-one onto HDF5 group and dataset names; "node" and
 * "index" are not statistic names (they key the rows of a group in the HDF5
 * file) and "time_ps" is not a component name (it names the sample times). A
 * unit or description may be NULL (stored as "") and is at most 4095 bytes.
 *
 * Three kinds of statistic, all in one registration order:
 *   counter    a uint64_t;
 *   histogram  power-of-two buckets: bucket 0 counts the value 0, bucket i
 *              (i >= 1) counts values in [2^(i-1), 2^i). 65 buckets cover all
 *              of uint64_t, and a histogram may ask for fewer (values past the
 *              last bucket land in it). count, sum, min and max cover every
 *              value added; sum saturates at UINT64_MAX rather than wrapping.
 *              min and max are 0 while count is 0. Update only through
 *              cxs_hist_add;
 *   vector     a growable array of uint64_t (a memory image as words, the
 *              lines a node owned when another failed), usually registered
 *              lazily, when a model has something to put in it. Update only
 *              through cxs_vec_*.
 *
 * Instances. A component may declare itself instance i of a group
 * (cxs_stats_instance(st, "core3", "core", 3)): the HDF5 writer then stores
 * core0, core1, ... of every node as rows of one group "core" rather than as
 * separate groups. The declaration changes nothing else: names, registration
 * order and the digest stay as they were.
 *
 * Time series. cxs_stats_sample_select picks counters by "component/name"
 * globs; each cxs_stats_sample appends the current value of every selected
 * counter. The engine calls it at every multiple of output.sample_interval of
 * simulated time (src/engine/engine.c, handle()); the registry only stores.
 *
 * A registry serialises to a flat byte blob (cxs_stats_pack) so that a rank can
 * ship its nodes' statistics to the rank that writes the HDF5 file; the blob is
 * self-describing (names, units, definitions, instances and series travel
 * with the values) and cxs_stats_unpack rejects a truncated or corrupt blob.
 * The layout (versioned, little-endian, with a body checksum) is documented in
 * src/stats/stats.c.
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

/* values[0..len) are the vector; read freely, change only through cxs_vec_*. */
struct cxs_vec {
	uint64_t len;
	uint64_t cap;
	uint64_t *values;
};

enum cxs_stat_kind { CXS_STAT_COUNTER = 0, CXS_STAT_HIST = 1, CXS_STAT_VECTOR = 2 };

/* A read-only view of one registered statistic, for writers and tests. */
struct cxs_stat_view {
	enum cxs_stat_kind kind;
	const char *component;
	const char *name;
	const char *unit;
	const char *desc;
	uint64_t value;             /* counters; a histogram's count; a vector's length */
	const struct cxs_hist *hist; /* histograms */
	const struct cxs_vec *vec;   /* vectors */
};

struct cxs_stats *cxs_stats_new(void);
void cxs_stats_free(struct cxs_stats *st);

/*
 * Registers a counter and returns a pointer to its value (initially 0), valid
 * until cxs_stats_free. Registering the same component/name twice returns the
 * same counter (the first unit and description stand). Returns NULL for an
 * invalid name or an over-long unit/description (a programming error), for a
 * name already registered as another kind, and when out of memory.
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
 * Registers an empty vector; same rules as cxs_stats_counter. The handle stays
 * valid until cxs_stats_free (values may move as it grows). A vector is part
 * of the digest from its registration on, so a run that never registers one
 * keeps the digest it had before vectors existed.
 */
struct cxs_vec *cxs_stats_vector(struct cxs_stats *st, const char *component, const char *name,
				 const char *unit, const char *desc);

/* Each returns 0, or -1 when out of memory (the vector is then unchanged). */
int cxs_vec_push(struct cxs_vec *v, uint64_t value);
int cxs_vec_append(struct cxs_vec *v, const uint64_t *values, uint64_t n);
/* values[i] = value, growing the vector to i + 1 with zeros first if needed. */
int cxs_vec_set(struct cxs_vec *v, uint64_t i, uint64_t value);
void cxs_vec_clear(struct cxs_vec *v);

/*
 * Declares component as instance `index` of `group`. component must be group
 * followed by index in decimal without leading zeros ("core3" = "core", 3), so
 * that a reader rebuilds the component's name from the row; declaring it again
 * the same way is a no-op. Returns 0, or -1 for names that break that rule or
 * the name rules above, for a component already declared otherwise, and when
 * out of memory. Call it once, before or after registering the component's
 * statistics.
 */
int cxs_stats_instance(struct cxs_stats *st, const char *component, const char *group,
		       uint32_t index);

/*
 * The group and index a component is stored under: its declared instance, or
 * the component itself and 0. Returns 1 when declared, 0 otherwise. *group
 * lives as long as the registry (or as component does).
 */
int cxs_stats_instance_of(const struct cxs_stats *st, const char *component, const char **group,
			  uint32_t *index);

/*
 * Number of registered statistics, and the i-th in registration order:
 * cxs_stats_get returns 0, or -1 when i is out of range. The view's strings
 * and hist/vec pointers live as long as the registry.
 */
size_t cxs_stats_count(const struct cxs_stats *st);
int cxs_stats_get(const struct cxs_stats *st, size_t i, struct cxs_stat_view *out);

/*
 * Looks a statistic up by name; NULL if absent. For a histogram the pointer
 * is to its count, for a vector to its length.
 */
const uint64_t *cxs_stats_find(const struct cxs_stats *st, const char *component, const char *name);

/* ---- time series -------------------------------------------------------- */

/*
 * Checks a list of sampling patterns: "component/name" globs separated by
 * spaces or commas, each side 1..CXS_STATS_NAME_MAX bytes of name characters
 * or '*' (any run of name characters): "port/tx_bytes_repl" is one counter of
 * every port, and the component glob core* with the name cycles selects the
 * cycles of every core.
 * Returns 0, or -1 with what is wrong with which pattern in err.
 */
int cxs_stats_patterns_check(const char *patterns, char *err, size_t errlen);

/*
 * Selects the counters to sample: every counter, registered now or later,
 * whose component (or, for an instance, its group) and name match one of the
 * patterns. Returns 0, or -1 for an invalid list or out of memory. Selecting
 * twice replaces the patterns; counters already selected stay.
 */
int cxs_stats_sample_select(struct cxs_stats *st, const char *patterns);

/*
 * Appends one sample of every selected counter. A counter that joins the
 * selection later (registered after earlier samples) reads 0 in those
 * samples: it had not counted anything yet. Returns 0, or -1 when out of
 * memory. Cost: one store per selected counter, plus one pattern match per
 * statistic registered since the previous call.
 */
int cxs_stats_sample(struct cxs_stats *st);

/* One sampled counter: its statistic index and its nsamples values. */
struct cxs_series_view {
	size_t stat;            /* index for cxs_stats_get */
	const uint64_t *values; /* cxs_stats_nsamples(st) of them */
};

uint64_t cxs_stats_nsamples(const struct cxs_stats *st);
size_t cxs_stats_nseries(const struct cxs_stats *st);
/* The i-th series, in the order the counters joined; 0, or -1 out of range. */
int cxs_stats_series(const struct cxs_stats *st, size_t i, struct cxs_series_view *out);

/* ---- blob and digest ---------------------------------------------------- */

/*
 * Serialises the registry into a malloc'd blob (*buf, *len). Returns 0, or -1
 * when out of memory. cxs_stats_unpack builds a new registry from a blob and
 * returns NULL when the blob is truncated or malformed. The copy has the
 * statistics, instances and series, not the sampling patterns.
 */
int cxs_stats_pack(const struct cxs_stats *st, void **buf, size_t *len);
struct cxs_stats *cxs_stats_unpack(const void *buf, size_t len);

/*
 * 64-bit digest (FNV-1a) of every statistic's kind, name and value(s), in
 * registration order; units, descriptions, instances and series are not part
 * of it. Two runs with the same configuration must give the same digest per
 * node.
 */
uint64_t cxs_stats_digest(const struct cxs_stats *st);

#endif /* CXLSIM_STATS_H */
