/*
 * stats.c — the per-node statistics registry, its wire blob and its digest.
 *
 * Storage
 * -------
 * Models keep the uint64_t * / struct cxs_hist * / struct cxs_vec * they got
 * at registration and bump through it on the hot path, so an entry must never
 * move. Entries live in chunks of CHUNK_ENTRIES that are allocated once and
 * freed only by cxs_stats_free; only the small array of chunk pointers is ever
 * realloc'd. Entry i is chunk[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES], so index
 * order is registration order, which is the order pack, digest and the HDF5
 * writer walk. A histogram (65 buckets, ~560 bytes) or a vector handle is
 * allocated on its own so that a counter, the common case, costs one
 * ~180-byte entry.
 *
 *   chunk[] ──► [e0 e1 ... e63] [e64 ... e127] ...      (never moved)
 *                    │
 *                    └─ hist ──► struct cxs_hist         (never moved)
 *                    └─ vec  ──► struct cxs_vec ──► values (grows)
 *
 * Lookup
 * ------
 * An open-addressing table (linear probing, at most half full) maps
 * "component/name" to index + 1 (0 = empty slot). It is only probed, never
 * iterated, so its hash-dependent order cannot reach any output. '/' is not a
 * name character, so the joined key is unambiguous.
 *
 * Instances and series
 * --------------------
 * Instance declarations are a short array (a few per node: one per core),
 * searched linearly. Sampling keeps, per selected counter, one array of
 * nsamples values; all of them grow together (one shared capacity, doubled),
 * so a sample is one store per selected counter. Statistics registered since
 * the last sample are matched against the patterns at the next one
 * (`examined` counts how far the registry has been matched), so a counter
 * registered late joins the series with zeros for the samples before it.
 *
 * Names and text
 * --------------
 * component and name: 1..CXS_STATS_NAME_MAX bytes of [A-Za-z0-9_.-], and not
 * "." or "..", which HDF5 would resolve as paths rather than link names; the
 * statistic names "node" and "index" and the component name "time_ps" are
 * reserved for the HDF5 layout (h5out.h). unit and desc: NULL means "", at
 * most TEXT_MAX bytes. The bound keeps every blob length field at 16 bits and
 * a description is a sentence, not a page.
 *
 * Blob (version 2, little-endian, fields unaligned, written byte by byte)
 * -----------------------------------------------------------------------
 *   offset size field
 *    0      4   magic "CXST"
 *    4      2   version = 2
 *    6      2   header_bytes = 48
 *    8      4   nstats
 *   12      4   ninstances
 *   16      4   nseries
 *   20      4   reserved = 0
 *   24      8   nsamples (0 when nseries is 0: samples of nothing)
 *   32      8   body_bytes = blob length - 48
 *   40      8   FNV-1a 64 of the body
 *   48          nstats records, each:
 *                 kind u8, component_len u8, name_len u8, reserved u8 = 0,
 *                 unit_len u16, desc_len u16, then the four strings (no NUL),
 *                 counter:   value u64
 *                 histogram: nbuckets u32, count, sum, min, max u64,
 *                            bucket[nbuckets] u64
 *                 vector:    len u64, values[len] u64
 *               ninstances records, each:
 *                 component_len u8, group_len u8, reserved u16 = 0,
 *                 index u32, then the two strings
 *               nseries records, in increasing statistic index, each:
 *                 stat u32 (index of a counter record), values[nsamples] u64
 *
 * Version 1 (32-byte header, counters and histograms only) is not read: a
 * blob never outlives the run that made it, and every rank of a run runs the
 * same binary.
 *
 * Unpack checks every field against the bytes left before reading it, so a
 * truncated blob fails on a length even if its header were forged. The body
 * checksum is there because lengths alone cannot see a flipped bit in a
 * counter value, which would pass every structural check and silently corrupt
 * the output. FNV-1a maps any change confined to one byte to a different hash
 * (each step is a bijection of the state), at the cost of one pass over a
 * blob of a few KiB.
 */
#include "cxlsim/stats.h"

#include <assert.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ENTRIES 64
#define TEXT_MAX 4095 /* bytes of unit or desc, without the NUL */
#define MIN_SLOTS 16
#define MIN_SAMPLES 64 /* first capacity of the series arrays */

#define BLOB_MAGIC 0x54535843u /* "CXST" read as little-endian */
#define BLOB_VERSION 2

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/*
 * The wire layouts. Never memcpy'd (fields are written one by one in
 * little-endian order); the structs exist so that offsetof() names each
 * field's position and the asserts pin the layout the comment above promises.
 */
struct blob_header {
	uint32_t magic;
	uint16_t version;
	uint16_t header_bytes;
	uint32_t nstats;
	uint32_t ninstances;
	uint32_t nseries;
	uint32_t reserved;
	uint64_t nsamples;
	uint64_t body_bytes;
	uint64_t body_fnv;
};
_Static_assert(sizeof(struct blob_header) == 48, "blob header is 48 bytes");
_Static_assert(offsetof(struct blob_header, nstats) == 8, "nstats at 8");
_Static_assert(offsetof(struct blob_header, nsamples) == 24, "nsamples at 24");
_Static_assert(offsetof(struct blob_header, body_bytes) == 32, "body_bytes at 32");
_Static_assert(offsetof(struct blob_header, body_fnv) == 40, "body_fnv at 40");

struct blob_record {
	uint8_t kind;
	uint8_t component_len;
	uint8_t name_len;
	uint8_t reserved;
	uint16_t unit_len;
	uint16_t desc_len;
};
_Static_assert(sizeof(struct blob_record) == 8, "record header is 8 bytes");
_Static_assert(offsetof(struct blob_record, unit_len) == 4, "unit_len at 4");

struct blob_instance {
	uint8_t component_len;
	uint8_t group_len;
	uint16_t reserved;
	uint32_t index;
};
_Static_assert(sizeof(struct blob_instance) == 8, "instance record header is 8 bytes");
_Static_assert(offsetof(struct blob_instance, index) == 4, "index at 4");

#define HIST_FIXED_BYTES (4 + 4 * 8) /* nbuckets, count, sum, min, max */

_Static_assert(CXS_STATS_NAME_MAX <= UINT8_MAX, "name lengths travel as u8");
_Static_assert(TEXT_MAX <= UINT16_MAX, "text lengths travel as u16");
_Static_assert(CXS_HIST_BUCKETS_MAX == 65, "bucket 0 plus one per bit of uint64_t");

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

/* ---- small helpers ---------------------------------------------------- */

static uint64_t fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		h = (h ^ ((v >> (8 * i)) & 0xff)) * FNV_PRIME;
	return h;
}

static bool name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

static bool valid_name(const char *s)
{
	size_t n;

	if (s == NULL)
		return false;
	n = strlen(s);
	if (n < 1 || n > CXS_STATS_NAME_MAX)
		return false;
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

/* The HDF5 layout keys rows by "node" and "index" and times by /series/time_ps. */
static bool valid_component(const char *s)
{
	return valid_name(s) && strcmp(s, "time_ps") != 0;
}

static bool valid_stat_name(const char *s)
{
	return valid_name(s) && strcmp(s, "node") != 0 && strcmp(s, "index") != 0;
}

static bool valid_text(const char *s)
{
	return s == NULL || strlen(s) <= TEXT_MAX;
}

static struct entry *entry_at(const struct cxs_stats *st, size_t i)
{
	assert(i < st->count);
	return &st->chunk[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES];
}

static uint64_t key_hash(const char *component, const char *name)
{
	uint64_t h = fnv_bytes(FNV_OFFSET, component, strlen(component));

	h = fnv_bytes(h, "/", 1);
	return fnv_bytes(h, name, strlen(name));
}

/* Index of component/name, or SIZE_MAX. */
static size_t lookup(const struct cxs_stats *st, const char *component, const char *name)
{
	if (st->nslots == 0)
		return SIZE_MAX;
	size_t mask = st->nslots - 1;
	for (size_t s = key_hash(component, name) & mask; st->slot[s] != 0; s = (s + 1) & mask) {
		const struct entry *e = entry_at(st, st->slot[s] - 1);
		if (strcmp(e->component, component) == 0 && strcmp(e->name, name) == 0)
			return st->slot[s] - 1;
	}
	return SIZE_MAX;
}

static void slot_insert(uint32_t *slot, size_t nslots, const struct entry *e, size_t index)
{
	size_t mask = nslots - 1;
	size_t s = key_hash(e->component, e->name) & mask;

	while (slot[s] != 0)
		s = (s + 1) & mask;
	slot[s] = (uint32_t)(index + 1);
}

/* Makes room for one more entry: hash table and chunk. Returns 0 or -1 (OOM). */
static int reserve_one(struct cxs_stats *st)
{
	/* Slots hold index + 1 as uint32_t; four billion statistics per node is
	 * not a registry any model will build, but say so rather than wrap. */
	if (st->count >= UINT32_MAX - 1)
		return -1;

	if ((st->count + 1) * 2 > st->nslots) {
		size_t n = st->nslots ? st->nslots * 2 : MIN_SLOTS;
		uint32_t *slot = calloc(n, sizeof(*slot));
		if (slot == NULL)
			return -1;
		for (size_t i = 0; i < st->count; i++)
			slot_insert(slot, n, entry_at(st, i), i);
		free(st->slot);
		st->slot = slot;
		st->nslots = n;
	}

	if (st->count == st->nchunks * CHUNK_ENTRIES) {
		struct entry **chunk = realloc(st->chunk, (st->nchunks + 1) * sizeof(*chunk));
		if (chunk == NULL)
			return -1;
		st->chunk = chunk;
		chunk[st->nchunks] = calloc(CHUNK_ENTRIES, sizeof(struct entry));
		if (chunk[st->nchunks] == NULL)
			return -1;
		st->nchunks++;
	}
	return 0;
}

static char *dup_text(const char *s)
{
	if (s == NULL)
		s = "";
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d != NULL)
		memcpy(d, s, n);
	return d;
}

/*
 * Appends a new entry. The caller has validated every argument and checked
 * that the name is not yet registered. Returns NULL only when out of memory,
 * leaving the registry as it was.
 */
static struct entry *add_entry(struct cxs_stats *st, enum cxs_stat_kind kind, const char *component,
			       const char *name, const char *unit, const char *desc, uint32_t nbuckets)
{
	struct entry *e = NULL;
	char *u = NULL, *d = NULL;
	struct cxs_hist *h = NULL;
	struct cxs_vec *v = NULL;

	assert(lookup(st, component, name) == SIZE_MAX);
	if (reserve_one(st) != 0)
		goto out;
	u = dup_text(unit);
	d = dup_text(desc);
	if (u == NULL || d == NULL)
		goto out;
	if (kind == CXS_STAT_HIST) {
		h = calloc(1, sizeof(*h));
		if (h == NULL)
			goto out;
		h->nbuckets = nbuckets;
	}
	if (kind == CXS_STAT_VECTOR) {
		v = calloc(1, sizeof(*v));
		if (v == NULL)
			goto out;
	}

	e = &st->chunk[st->count / CHUNK_ENTRIES][st->count % CHUNK_ENTRIES];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->nbuckets = kind == CXS_STAT_HIST ? nbuckets : 0;
	strcpy(e->component, component);
	strcpy(e->name, name);
	e->unit = u;
	e->desc = d;
	e->hist = h;
	e->vec = v;
	u = d = NULL;
	h = NULL;
	v = NULL;
	slot_insert(st->slot, st->nslots, e, st->count);
	st->count++;
out:
	free(u);
	free(d);
	free(h);
	free(v);
	return e;
}

/* ---- registry --------------------------------------------------------- */

struct cxs_stats *cxs_stats_new(void)
{
	return calloc(1, sizeof(struct cxs_stats));
}

void cxs_stats_free(struct cxs_stats *st)
{
	if (st == NULL)
		return;
	for (size_t i = 0; i < st->count; i++) {
		struct entry *e = entry_at(st, i);
		free(e->unit);
		free(e->desc);
		free(e->hist);
		if (e->vec != NULL)
			free(e->vec->values);
		free(e->vec);
	}
	for (size_t c = 0; c < st->nchunks; c++)
		free(st->chunk[c]);
	for (size_t i = 0; i < st->nser; i++)
		free(st->ser[i].values);
	free(st->ser);
	free(st->patterns);
	free(st->inst);
	free(st->chunk);
	free(st->slot);
	free(st);
}

/* Whether a registration's names and text follow the rules in the header. */
static bool check_args(const char *component, const char *name, const char *unit,
		       const char *desc)
{
	return valid_component(component) && valid_stat_name(name) && valid_text(unit) &&
	       valid_text(desc);
}

uint64_t *cxs_stats_counter(struct cxs_stats *st, const char *component, const char *name,
			    const char *unit, const char *desc)
{
	assert(st != NULL);
	if (!check_args(component, name, unit, desc))
		return NULL;

	size_t i = lookup(st, component, name);
	if (i != SIZE_MAX) {
		struct entry *e = entry_at(st, i);
		return e->kind == CXS_STAT_COUNTER ? &e->value : NULL;
	}
	struct entry *e = add_entry(st, CXS_STAT_COUNTER, component, name, unit, desc, 0);
	return e != NULL ? &e->value : NULL;
}

struct cxs_hist *cxs_stats_hist(struct cxs_stats *st, const char *component, const char *name,
				const char *unit, const char *desc, uint32_t nbuckets)
{
	assert(st != NULL);
	if (!check_args(component, name, unit, desc))
		return NULL;
	if (nbuckets < 1 || nbuckets > CXS_HIST_BUCKETS_MAX)
		return NULL;

	size_t i = lookup(st, component, name);
	if (i != SIZE_MAX) {
		struct entry *e = entry_at(st, i);
		bool same = e->kind == CXS_STAT_HIST && e->nbuckets == nbuckets;
		return same ? e->hist : NULL;
	}
	struct entry *e = add_entry(st, CXS_STAT_HIST, component, name, unit, desc, nbuckets);
	return e != NULL ? e->hist : NULL;
}

struct cxs_vec *cxs_stats_vector(struct cxs_stats *st, const char *component, const char *name,
				 const char *unit, const char *desc)
{
	assert(st != NULL);
	if (!check_args(component, name, unit, desc))
		return NULL;

	size_t i = lookup(st, component, name);
	if (i != SIZE_MAX) {
		struct entry *e = entry_at(st, i);
		return e->kind == CXS_STAT_VECTOR ? e->vec : NULL;
	}
	struct entry *e = add_entry(st, CXS_STAT_VECTOR, component, name, unit, desc, 0);
	return e != NULL ? e->vec : NULL;
}

/* Position of the highest set bit plus one: 1 -> 1, 2..3 -> 2, 2^63.. -> 64. */
static uint32_t bit_length(uint64_t v)
{
#if defined(__GNUC__)
	return v == 0 ? 0 : 64 - (uint32_t)__builtin_clzll(v);
#else
	uint32_t n = 0;
	while (v != 0) {
		v >>= 1;
		n++;
	}
	return n;
#endif
}

/*
 * Bucket 0 holds 0 and bucket i holds [2^(i-1), 2^i), i.e. bucket = bit
 * length; values past the last bucket are clamped into it. The sum saturates
 * at UINT64_MAX rather than wrap: a saturated sum is visibly wrong, a wrapped
 * one is plausibly right.
 */
void cxs_hist_add(struct cxs_hist *h, uint64_t value)
{
	assert(h != NULL && h->nbuckets >= 1 && h->nbuckets <= CXS_HIST_BUCKETS_MAX);
	uint32_t b = bit_length(value);

	if (b >= h->nbuckets)
		b = h->nbuckets - 1;
	h->bucket[b]++;
	if (h->count == 0 || value < h->min)
		h->min = value;
	if (h->count == 0 || value > h->max)
		h->max = value;
	h->count++;
	h->sum = value > UINT64_MAX - h->sum ? UINT64_MAX : h->sum + value;
}

/* ---- vectors ---------------------------------------------------------- */

/* Room for n values in total; capacity doubles so that pushes are amortised O(1). */
static int vec_reserve(struct cxs_vec *v, uint64_t n)
{
	if (n <= v->cap)
		return 0;
	uint64_t cap = v->cap ? v->cap : 16;
	while (cap < n) {
		if (cap > UINT64_MAX / 2)
			return -1;
		cap *= 2;
	}
	if (cap > SIZE_MAX / sizeof(uint64_t))
		return -1;
	uint64_t *p = realloc(v->values, (size_t)cap * sizeof(uint64_t));
	if (p == NULL)
		return -1;
	v->values = p;
	v->cap = cap;
	return 0;
}

int cxs_vec_push(struct cxs_vec *v, uint64_t value)
{
	assert(v != NULL);
	if (v->len == UINT64_MAX || vec_reserve(v, v->len + 1) != 0)
		return -1;
	v->values[v->len++] = value;
	return 0;
}

int cxs_vec_append(struct cxs_vec *v, const uint64_t *values, uint64_t n)
{
	assert(v != NULL && (values != NULL || n == 0));
	if (n == 0)
		return 0;
	if (n > UINT64_MAX - v->len || vec_reserve(v, v->len + n) != 0)
		return -1;
	memcpy(v->values + v->len, values, (size_t)n * sizeof(uint64_t));
	v->len += n;
	return 0;
}

int cxs_vec_set(struct cxs_vec *v, uint64_t i, uint64_t value)
{
	assert(v != NULL);
	if (i >= v->len) {
		if (i == UINT64_MAX || vec_reserve(v, i + 1) != 0)
			return -1;
		memset(v->values + v->len, 0, (size_t)(i + 1 - v->len) * sizeof(uint64_t));
		v->len = i + 1;
	}
	v->values[i] = value;
	return 0;
}

void cxs_vec_clear(struct cxs_vec *v)
{
	assert(v != NULL);
	v->len = 0;
}

/* ---- instances -------------------------------------------------------- */

static const struct instance *find_instance(const struct cxs_stats *st, const char *component)
{
	for (size_t i = 0; i < st->ninst; i++)
		if (strcmp(st->inst[i].component, component) == 0)
			return &st->inst[i];
	return NULL;
}

/* component == group followed by index in decimal, no leading zeros. */
static bool instance_name_ok(const char *component, const char *group, uint64_t index)
{
	char want[2 * CXS_STATS_NAME_MAX + 24];

	if (!valid_component(component) || !valid_component(group) || index > UINT32_MAX)
		return false;
	snprintf(want, sizeof(want), "%s%" PRIu64, group, index);
	return strcmp(want, component) == 0;
}

static int add_instance(struct cxs_stats *st, const char *component, const char *group,
			uint32_t index)
{
	if (st->ninst == st->capinst) {
		size_t cap = st->capinst ? st->capinst * 2 : 8;
		struct instance *p = realloc(st->inst, cap * sizeof(*p));
		if (p == NULL)
			return -1;
		st->inst = p;
		st->capinst = cap;
	}
	struct instance *in = &st->inst[st->ninst++];
	strcpy(in->component, component);
	strcpy(in->group, group);
	in->index = index;
	return 0;
}

int cxs_stats_instance(struct cxs_stats *st, const char *component, const char *group,
		       uint32_t index)
{
	assert(st != NULL);
	if (component == NULL || group == NULL || !instance_name_ok(component, group, index))
		return -1;
	const struct instance *in = find_instance(st, component);
	if (in != NULL)
		return strcmp(in->group, group) == 0 && in->index == index ? 0 : -1;
	return add_instance(st, component, group, index);
}

int cxs_stats_instance_of(const struct cxs_stats *st, const char *component, const char **group,
			  uint32_t *index)
{
	const struct instance *in = st != NULL ? find_instance(st, component) : NULL;

	*group = in != NULL ? in->group : component;
	*index = in != NULL ? in->index : 0;
	return in != NULL;
}

/* ---- inspection ------------------------------------------------------- */

size_t cxs_stats_count(const struct cxs_stats *st)
{
	return st != NULL ? st->count : 0;
}

int cxs_stats_get(const struct cxs_stats *st, size_t i, struct cxs_stat_view *out)
{
	if (st == NULL || out == NULL || i >= st->count)
		return -1;
	const struct entry *e = entry_at(st, i);
	out->kind = e->kind;
	out->component = e->component;
	out->name = e->name;
	out->unit = e->unit;
	out->desc = e->desc;
	out->value = e->kind == CXS_STAT_COUNTER ? e->value
		     : e->kind == CXS_STAT_HIST  ? e->hist->count
						 : e->vec->len;
	out->hist = e->hist;
	out->vec = e->vec;
	return 0;
}

const uint64_t *cxs_stats_find(const struct cxs_stats *st, const char *component, const char *name)
{
	if (st == NULL || component == NULL || name == NULL)
		return NULL;
	size_t i = lookup(st, component, name);
	if (i == SIZE_MAX)
		return NULL;
	const struct entry *e = entry_at(st, i);
	if (e->kind == CXS_STAT_COUNTER)
		return &e->value;
	return e->kind == CXS_STAT_HIST ? &e->hist->count : &e->vec->len;
}

/* ---- time series ------------------------------------------------------ */

static bool pattern_sep(char c)
{
	return c == ' ' || c == '\t' || c == ',' || c == '\n';
}

/*
 * '*' matches any run of characters, including none: the classic greedy
 * match with one backtrack point, O(len(p) * len(s)) at worst, on strings of
 * at most 63 bytes. p is [p, pend), not NUL-terminated.
 */
static bool glob_match(const char *p, const char *pend, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s != '\0') {
		if (p < pend && *p == '*') {
			star = p++;
			resume = s;
		} else if (p < pend && *p == *s) {
			p++;
			s++;
		} else if (star != NULL) {
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (p < pend && *p == '*')
		p++;
	return p == pend;
}

/* One pattern's sides: [c, cend) / [n, nend). */
struct pattern {
	const char *c, *cend, *n, *nend;
};

/* Splits the pattern starting at *pos; false at the end of the list. */
static bool next_pattern(const char **pos, struct pattern *pt)
{
	const char *p = *pos;

	while (*p != '\0' && pattern_sep(*p))
		p++;
	if (*p == '\0')
		return false;
	const char *start = p;
	while (*p != '\0' && !pattern_sep(*p))
		p++;
	*pos = p;
	const char *slash = memchr(start, '/', (size_t)(p - start));
	pt->c = start;
	pt->cend = slash != NULL ? slash : p;
	pt->n = slash != NULL ? slash + 1 : p;
	pt->nend = p;
	return true;
}

static bool pattern_side_ok(const char *s, const char *end)
{
	if (end - s < 1 || end - s > CXS_STATS_NAME_MAX)
		return false;
	for (; s < end; s++)
		if (!name_char(*s) && *s != '*')
			return false;
	return true;
}

int cxs_stats_patterns_check(const char *patterns, char *err, size_t errlen)
{
	const char *pos = patterns != NULL ? patterns : "";
	struct pattern pt;
	size_t n = 0;

	while (next_pattern(&pos, &pt)) {
		n++;
		int len = (int)(pt.nend - pt.c);
		if (pt.cend == pt.nend) {
			snprintf(err, errlen, "pattern \"%.*s\" has no '/': write component/name, "
				 "e.g. port/tx_bytes_* or */* for every counter", len, pt.c);
			return -1;
		}
		if (memchr(pt.n, '/', (size_t)(pt.nend - pt.n)) != NULL ||
		    !pattern_side_ok(pt.c, pt.cend) || !pattern_side_ok(pt.n, pt.nend)) {
			snprintf(err, errlen, "pattern \"%.*s\": expected component/name, each 1..%d "
				 "of A-Z a-z 0-9 _ . - or *", len, pt.c, CXS_STATS_NAME_MAX);
			return -1;
		}
	}
	if (n == 0) {
		snprintf(err, errlen, "no pattern: list component/name globs such as "
			 "\"port/tx_bytes_repl engine/events\"");
		return -1;
	}
	return 0;
}

static bool selected(const struct cxs_stats *st, const struct entry *e)
{
	const char *pos = st->patterns, *group;
	struct pattern pt;
	uint32_t index;
	bool inst = cxs_stats_instance_of(st, e->component, &group, &index);

	while (next_pattern(&pos, &pt)) {
		if (!glob_match(pt.n, pt.nend, e->name))
			continue;
		if (glob_match(pt.c, pt.cend, e->component) ||
		    (inst && glob_match(pt.c, pt.cend, group)))
			return true;
	}
	return false;
}

int cxs_stats_sample_select(struct cxs_stats *st, const char *patterns)
{
	char err[160];

	assert(st != NULL);
	if (cxs_stats_patterns_check(patterns, err, sizeof(err)) != 0)
		return -1;
	char *copy = dup_text(patterns);
	if (copy == NULL)
		return -1;
	free(st->patterns);
	st->patterns = copy;
	st->examined = 0; /* new patterns: match everything again */
	return 0;
}

/* Grows every series to hold n samples. */
static int samples_reserve(struct cxs_stats *st, uint64_t n)
{
	if (n <= st->capsamples)
		return 0;
	uint64_t cap = st->capsamples ? st->capsamples : MIN_SAMPLES;
	while (cap < n) {
		if (cap > UINT64_MAX / 2)
			return -1;
		cap *= 2;
	}
	if (cap > SIZE_MAX / sizeof(uint64_t))
		return -1;
	for (size_t i = 0; i < st->nser; i++) {
		uint64_t *p = realloc(st->ser[i].values, (size_t)cap * sizeof(uint64_t));
		if (p == NULL)
			return -1; /* the arrays grown so far keep their data */
		st->ser[i].values = p;
	}
	st->capsamples = cap;
	return 0;
}

/* Adds counter `stat` to the series, its first nsamples values zero. */
static int add_series(struct cxs_stats *st, uint32_t stat)
{
	if (st->nser == st->capser) {
		size_t cap = st->capser ? st->capser * 2 : 16;
		struct series *p = realloc(st->ser, cap * sizeof(*p));
		if (p == NULL)
			return -1;
		st->ser = p;
		st->capser = cap;
	}
	uint64_t cap = st->capsamples ? st->capsamples : 1;
	uint64_t *v = calloc((size_t)cap, sizeof(uint64_t));
	if (v == NULL)
		return -1;
	st->ser[st->nser++] = (struct series){ .stat = stat, .values = v };
	return 0;
}

int cxs_stats_sample(struct cxs_stats *st)
{
	assert(st != NULL);
	if (st->patterns != NULL) {
		for (; st->examined < st->count; st->examined++) {
			struct entry *e = entry_at(st, st->examined);
			if (e->kind != CXS_STAT_COUNTER || e->sampled || !selected(st, e))
				continue;
			if (add_series(st, (uint32_t)st->examined) != 0)
				return -1;
			e->sampled = true;
		}
	}
	if (samples_reserve(st, st->nsamples + 1) != 0)
		return -1;
	for (size_t i = 0; i < st->nser; i++)
		st->ser[i].values[st->nsamples] = entry_at(st, st->ser[i].stat)->value;
	st->nsamples++;
	return 0;
}

uint64_t cxs_stats_nsamples(const struct cxs_stats *st)
{
	return st != NULL ? st->nsamples : 0;
}

size_t cxs_stats_nseries(const struct cxs_stats *st)
{
	return st != NULL ? st->nser : 0;
}

int cxs_stats_series(const struct cxs_stats *st, size_t i, struct cxs_series_view *out)
{
	if (st == NULL || out == NULL || i >= st->nser)
		return -1;
	out->stat = st->ser[i].stat;
	out->values = st->ser[i].values;
	return 0;
}

/* ---- digest ----------------------------------------------------------- */

/*
 * FNV-1a over, per statistic in registration order: kind, component, NUL,
 * name, NUL, then the value (counter), nbuckets, count, sum, min, max and the
 * buckets (histogram), or the length and the values (vector), integers as
 * little-endian bytes so that the digest does not depend on the host. Units
 * and descriptions are documentation, not results, and are left out, as are
 * instances (a storage choice) and series (which must not change a run's
 * checksum).
 */
uint64_t cxs_stats_digest(const struct cxs_stats *st)
{
	uint64_t h = FNV_OFFSET;

	for (size_t i = 0; i < cxs_stats_count(st); i++) {
		const struct entry *e = entry_at(st, i);
		unsigned char kind = (unsigned char)e->kind;
		h = fnv_bytes(h, &kind, 1);
		h = fnv_bytes(h, e->component, strlen(e->component) + 1);
		h = fnv_bytes(h, e->name, strlen(e->name) + 1);
		if (e->kind == CXS_STAT_COUNTER) {
			h = fnv_u64(h, e->value);
			continue;
		}
		if (e->kind == CXS_STAT_VECTOR) {
			h = fnv_u64(h, e->vec->len);
			for (uint64_t k = 0; k < e->vec->len; k++)
				h = fnv_u64(h, e->vec->values[k]);
			continue;
		}
		h = fnv_u64(h, e->nbuckets);
		h = fnv_u64(h, e->hist->count);
		h = fnv_u64(h, e->hist->sum);
		h = fnv_u64(h, e->hist->min);
		h = fnv_u64(h, e->hist->max);
		for (uint32_t b = 0; b < e->nbuckets; b++)
			h = fnv_u64(h, e->hist->bucket[b]);
	}
	return h;
}

/* ---- pack ------------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static unsigned char *put_bytes(unsigned char *p, const void *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static unsigned char *put_u64(unsigned char *p, uint64_t v)
{
	put_le(p, v, 8);
	return p + 8;
}

static size_t record_bytes(const struct entry *e)
{
	size_t n = sizeof(struct blob_record) + strlen(e->component) + strlen(e->name) +
		   strlen(e->unit) + strlen(e->desc);

	if (e->kind == CXS_STAT_COUNTER)
		return n + 8;
	if (e->kind == CXS_STAT_VECTOR)
		return n + 8 + 8 * (size_t)e->vec->len;
	return n + HIST_FIXED_BYTES + 8 * (size_t)e->nbuckets;
}

static unsigned char *pack_record(unsigned char *p, const struct entry *e)
{
	size_t cl = strlen(e->component), nl = strlen(e->name);
	size_t ul = strlen(e->unit), dl = strlen(e->desc);

	put_le(p + offsetof(struct blob_record, kind), (uint64_t)e->kind, 1);
	put_le(p + offsetof(struct blob_record, component_len), cl, 1);
	put_le(p + offsetof(struct blob_record, name_len), nl, 1);
	put_le(p + offsetof(struct blob_record, reserved), 0, 1);
	put_le(p + offsetof(struct blob_record, unit_len), ul, 2);
	put_le(p + offsetof(struct blob_record, desc_len), dl, 2);
	p += sizeof(struct blob_record);
	p = put_bytes(p, e->component, cl);
	p = put_bytes(p, e->name, nl);
	p = put_bytes(p, e->unit, ul);
	p = put_bytes(p, e->desc, dl);
	if (e->kind == CXS_STAT_COUNTER)
		return put_u64(p, e->value);
	if (e->kind == CXS_STAT_VECTOR) {
		p = put_u64(p, e->vec->len);
		for (uint64_t k = 0; k < e->vec->len; k++)
			p = put_u64(p, e->vec->values[k]);
		return p;
	}
	put_le(p, e->nbuckets, 4);
	p += 4;
	p = put_u64(p, e->hist->count);
	p = put_u64(p, e->hist->sum);
	p = put_u64(p, e->hist->min);
	p = put_u64(p, e->hist->max);
	for (uint32_t b = 0; b < e->nbuckets; b++)
		p = put_u64(p, e->hist->bucket[b]);
	return p;
}

static unsigned char *pack_instance(unsigned char *p, const struct instance *in)
{
	size_t cl = strlen(in->component), gl = strlen(in->group);

	put_le(p + offsetof(struct blob_instance, component_len), cl, 1);
	put_le(p + offsetof(struct blob_instance, group_len), gl, 1);
	put_le(p + offsetof(struct blob_instance, reserved), 0, 2);
	put_le(p + offsetof(struct blob_instance, index), in->index, 4);
	p += sizeof(struct blob_instance);
	p = put_bytes(p, in->component, cl);
	return put_bytes(p, in->group, gl);
}

static int cmp_series(const void *a, const void *b)
{
	const struct series *x = *(const struct series *const *)a;
	const struct series *y = *(const struct series *const *)b;

	return x->stat < y->stat ? -1 : x->stat > y->stat;
}

int cxs_stats_pack(const struct cxs_stats *st, void **buf, size_t *len)
{
	size_t hdr = sizeof(struct blob_header);
	size_t total = hdr;
	unsigned char *blob = NULL, *p;
	const struct series **order = NULL;

	assert(st != NULL && buf != NULL && len != NULL);
	if (st->count > UINT32_MAX || st->ninst > UINT32_MAX || st->nser > UINT32_MAX)
		return -1;
	for (size_t i = 0; i < st->count; i++)
		total += record_bytes(entry_at(st, i));
	for (size_t i = 0; i < st->ninst; i++)
		total += sizeof(struct blob_instance) + strlen(st->inst[i].component) +
			 strlen(st->inst[i].group);
	total += st->nser * (4 + 8 * (size_t)st->nsamples); /* nothing when nser is 0 */
	/* Series travel in statistic order, which unpack checks. */
	order = malloc((st->nser + 1) * sizeof(*order));
	blob = malloc(total);
	if (blob == NULL || order == NULL) {
		free(order);
		free(blob);
		return -1;
	}
	for (size_t i = 0; i < st->nser; i++)
		order[i] = &st->ser[i];
	qsort(order, st->nser, sizeof(*order), cmp_series);

	p = blob + hdr;
	for (size_t i = 0; i < st->count; i++)
		p = pack_record(p, entry_at(st, i));
	for (size_t i = 0; i < st->ninst; i++)
		p = pack_instance(p, &st->inst[i]);
	for (size_t i = 0; i < st->nser; i++) {
		put_le(p, order[i]->stat, 4);
		p += 4;
		for (uint64_t k = 0; k < st->nsamples; k++)
			p = put_u64(p, order[i]->values[k]);
	}
	assert(p == blob + total);
	free(order);

	put_le(blob + offsetof(struct blob_header, magic), BLOB_MAGIC, 4);
	put_le(blob + offsetof(struct blob_header, version), BLOB_VERSION, 2);
	put_le(blob + offsetof(struct blob_header, header_bytes), hdr, 2);
	put_le(blob + offsetof(struct blob_header, nstats), st->count, 4);
	put_le(blob + offsetof(struct blob_header, ninstances), st->ninst, 4);
	put_le(blob + offsetof(struct blob_header, nseries), st->nser, 4);
	put_le(blob + offsetof(struct blob_header, reserved), 0, 4);
	put_le(blob + offsetof(struct blob_header, nsamples), st->nser ? st->nsamples : 0, 8);
	put_le(blob + offsetof(struct blob_header, body_bytes), total - hdr, 8);
	put_le(blob + offsetof(struct blob_header, body_fnv),
	       fnv_bytes(FNV_OFFSET, blob + hdr, total - hdr), 8);

	*buf = blob;
	*len = total;
	return 0;
}

/* ---- unpack ----------------------------------------------------------- */

/* A bounds-checked reader: every get fails, rather than reads, past the end. */
struct reader {
	const unsigned char *p;
	size_t left;
};

static int get_le(struct reader *r, size_t n, uint64_t *v)
{
	if (r->left < n)
		return -1;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	r->left -= n;
	return 0;
}

/* Copies n bytes into dst and NUL-terminates; fails on an embedded NUL. */
static int get_string(struct reader *r, size_t n, char *dst)
{
	if (r->left < n || memchr(r->p, '\0', n) != NULL)
		return -1;
	memcpy(dst, r->p, n);
	dst[n] = '\0';
	r->p += n;
	r->left -= n;
	return 0;
}

static uint64_t peek_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Reads n u64 values into a new vector's storage. */
static int get_vector(struct reader *r, struct cxs_vec *v, uint64_t n)
{
	if (n > r->left / 8 || vec_reserve(v, n) != 0)
		return -1;
	for (uint64_t k = 0; k < n; k++)
		get_le(r, 8, &v->values[k]); /* cannot fail: checked above */
	v->len = n;
	return 0;
}

/* Reads one record and registers it. Returns 0, or -1 on any malformation. */
static int unpack_record(struct cxs_stats *st, struct reader *r)
{
	/* Strings go through stack buffers: at most 2 * 64 + 2 * 4096 bytes. */
	char component[CXS_STATS_NAME_MAX + 1], name[CXS_STATS_NAME_MAX + 1];
	char unit[TEXT_MAX + 1], desc[TEXT_MAX + 1];
	uint64_t kind, cl, nl, reserved, ul, dl, v, nb;
	struct entry *e;

	if (get_le(r, 1, &kind) || get_le(r, 1, &cl) || get_le(r, 1, &nl) ||
	    get_le(r, 1, &reserved) || get_le(r, 2, &ul) || get_le(r, 2, &dl))
		return -1;
	if ((kind != CXS_STAT_COUNTER && kind != CXS_STAT_HIST && kind != CXS_STAT_VECTOR) ||
	    reserved != 0 || cl > CXS_STATS_NAME_MAX || nl > CXS_STATS_NAME_MAX || ul > TEXT_MAX ||
	    dl > TEXT_MAX)
		return -1;
	if (get_string(r, cl, component) || get_string(r, nl, name) || get_string(r, ul, unit) ||
	    get_string(r, dl, desc))
		return -1;
	if (!valid_component(component) || !valid_stat_name(name) ||
	    lookup(st, component, name) != SIZE_MAX)
		return -1;

	if (kind == CXS_STAT_COUNTER) {
		if (get_le(r, 8, &v))
			return -1;
		e = add_entry(st, CXS_STAT_COUNTER, component, name, unit, desc, 0);
		if (e == NULL)
			return -1;
		e->value = v;
		return 0;
	}
	if (kind == CXS_STAT_VECTOR) {
		if (get_le(r, 8, &v))
			return -1;
		e = add_entry(st, CXS_STAT_VECTOR, component, name, unit, desc, 0);
		return e != NULL ? get_vector(r, e->vec, v) : -1;
	}

	struct cxs_hist h = { 0 };
	if (get_le(r, 4, &nb) || nb < 1 || nb > CXS_HIST_BUCKETS_MAX)
		return -1;
	h.nbuckets = (uint32_t)nb;
	if (get_le(r, 8, &h.count) || get_le(r, 8, &h.sum) || get_le(r, 8, &h.min) ||
	    get_le(r, 8, &h.max))
		return -1;
	for (uint32_t b = 0; b < h.nbuckets; b++)
		if (get_le(r, 8, &h.bucket[b]))
			return -1;
	e = add_entry(st, CXS_STAT_HIST, component, name, unit, desc, h.nbuckets);
	if (e == NULL)
		return -1;
	*e->hist = h;
	return 0;
}

static int unpack_instance(struct cxs_stats *st, struct reader *r)
{
	char component[CXS_STATS_NAME_MAX + 1], group[CXS_STATS_NAME_MAX + 1];
	uint64_t cl, gl, reserved, index;

	if (get_le(r, 1, &cl) || get_le(r, 1, &gl) || get_le(r, 2, &reserved) ||
	    get_le(r, 4, &index) || reserved != 0 || cl > CXS_STATS_NAME_MAX ||
	    gl > CXS_STATS_NAME_MAX || get_string(r, cl, component) || get_string(r, gl, group))
		return -1;
	if (!instance_name_ok(component, group, index) || find_instance(st, component) != NULL)
		return -1;
	return add_instance(st, component, group, (uint32_t)index);
}

/* Series records: increasing counter indices, nsamples values each. */
static int unpack_series(struct cxs_stats *st, struct reader *r, uint64_t nseries,
			 uint64_t nsamples)
{
	uint64_t stat, prev = 0;

	if (nseries == 0)
		return nsamples == 0 ? 0 : -1;
	if (nsamples > r->left / 8 || samples_reserve(st, nsamples) != 0)
		return -1;
	for (uint64_t i = 0; i < nseries; i++) {
		if (get_le(r, 4, &stat) || stat >= st->count || (i > 0 && stat <= prev) ||
		    entry_at(st, stat)->kind != CXS_STAT_COUNTER || nsamples > r->left / 8)
			return -1;
		prev = stat;
		if (st->capsamples == 0)
			st->capsamples = 1; /* add_series allocates at least one value */
		if (add_series(st, (uint32_t)stat) != 0)
			return -1;
		entry_at(st, stat)->sampled = true;
		for (uint64_t k = 0; k < nsamples; k++)
			get_le(r, 8, &st->ser[st->nser - 1].values[k]); /* checked above */
	}
	return 0;
}

struct cxs_stats *cxs_stats_unpack(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t hdr = sizeof(struct blob_header);
	struct cxs_stats *st = NULL;
	struct reader r;
	uint64_t nstats, ninst, nseries, nsamples;
	int ok = 0;

	if (b == NULL || len < hdr)
		goto out;
	if (peek_le(b + offsetof(struct blob_header, magic), 4) != BLOB_MAGIC ||
	    peek_le(b + offsetof(struct blob_header, version), 2) != BLOB_VERSION ||
	    peek_le(b + offsetof(struct blob_header, header_bytes), 2) != hdr ||
	    peek_le(b + offsetof(struct blob_header, reserved), 4) != 0 ||
	    peek_le(b + offsetof(struct blob_header, body_bytes), 8) != len - hdr ||
	    peek_le(b + offsetof(struct blob_header, body_fnv), 8) !=
		    fnv_bytes(FNV_OFFSET, b + hdr, len - hdr))
		goto out;
	nstats = peek_le(b + offsetof(struct blob_header, nstats), 4);
	ninst = peek_le(b + offsetof(struct blob_header, ninstances), 4);
	nseries = peek_le(b + offsetof(struct blob_header, nseries), 4);
	nsamples = peek_le(b + offsetof(struct blob_header, nsamples), 8);

	st = cxs_stats_new();
	if (st == NULL)
		goto out;
	r.p = b + hdr;
	r.left = len - hdr;
	for (uint64_t i = 0; i < nstats; i++)
		if (unpack_record(st, &r) != 0)
			goto out;
	for (uint64_t i = 0; i < ninst; i++)
		if (unpack_instance(st, &r) != 0)
			goto out;
	if (unpack_series(st, &r, nseries, nsamples) != 0)
		goto out;
	st->nsamples = nsamples;
	ok = r.left == 0; /* trailing bytes mean a count is wrong */
out:
	if (!ok) {
		cxs_stats_free(st);
		st = NULL;
	}
	return st;
}
