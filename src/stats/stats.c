/*
 * stats.c — the per-node statistics registry and its digest (time series in
 * series.c, the wire blob in blob.c, shared state in stats_priv.h).
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
 * Instances
 * ---------
 * Instance declarations are a short array (a few per node: one per core),
 * searched linearly; they only tell the HDF5 writer where a component's row
 * goes, so neither the entries nor the digest see them.
 *
 * Names and text
 * --------------
 * component and name: 1..CXS_STATS_NAME_MAX bytes of [A-Za-z0-9_.-], and not
 * "." or "..", which HDF5 would resolve as paths rather than link names; the
 * statistic names "node" and "index" and the component name "time_ps" are
 * reserved for the HDF5 layout (h5out.h). unit and desc: NULL means "", at
 * most TEXT_MAX bytes. The bound keeps every blob length field at 16 bits and
 * a description is a sentence, not a page.
 */
#include "stats_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 16

/* ---- small helpers ---------------------------------------------------- */

bool stats_name_char(char c)
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
		if (!stats_name_char(s[i]))
			return false;
	return true;
}

/* The HDF5 layout keys rows by "node" and "index" and times by /series/time_ps. */
bool stats_valid_component(const char *s)
{
	return valid_name(s) && strcmp(s, "time_ps") != 0;
}

bool stats_valid_stat_name(const char *s)
{
	return valid_name(s) && strcmp(s, "node") != 0 && strcmp(s, "index") != 0;
}

static bool valid_text(const char *s)
{
	return s == NULL || strlen(s) <= TEXT_MAX;
}

static uint64_t key_hash(const char *component, const char *name)
{
	uint64_t h = fnv_bytes(FNV_OFFSET, component, strlen(component));

	h = fnv_bytes(h, "/", 1);
	return fnv_bytes(h, name, strlen(name));
}

/* Index of component/name, or SIZE_MAX. */
size_t stats_lookup(const struct cxs_stats *st, const char *component, const char *name)
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

char *stats_dup_text(const char *s)
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
struct entry *stats_add_entry(struct cxs_stats *st, enum cxs_stat_kind kind, const char *component,
			       const char *name, const char *unit, const char *desc, uint32_t nbuckets)
{
	struct entry *e = NULL;
	char *u = NULL, *d = NULL;
	struct cxs_hist *h = NULL;
	struct cxs_vec *v = NULL;

	assert(stats_lookup(st, component, name) == SIZE_MAX);
	if (reserve_one(st) != 0)
		goto out;
	u = stats_dup_text(unit);
	d = stats_dup_text(desc);
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
	return stats_valid_component(component) && stats_valid_stat_name(name) && valid_text(unit) &&
	       valid_text(desc);
}

uint64_t *cxs_stats_counter(struct cxs_stats *st, const char *component, const char *name,
			    const char *unit, const char *desc)
{
	assert(st != NULL);
	if (!check_args(component, name, unit, desc))
		return NULL;

	size_t i = stats_lookup(st, component, name);
	if (i != SIZE_MAX) {
		struct entry *e = entry_at(st, i);
		return e->kind == CXS_STAT_COUNTER ? &e->value : NULL;
	}
	struct entry *e = stats_add_entry(st, CXS_STAT_COUNTER, component, name, unit, desc, 0);
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

	size_t i = stats_lookup(st, component, name);
	if (i != SIZE_MAX) {
		struct entry *e = entry_at(st, i);
		bool same = e->kind == CXS_STAT_HIST && e->nbuckets == nbuckets;
		return same ? e->hist : NULL;
	}
	struct entry *e = stats_add_entry(st, CXS_STAT_HIST, component, name, unit, desc, nbuckets);
	return e != NULL ? e->hist : NULL;
}

struct cxs_vec *cxs_stats_vector(struct cxs_stats *st, const char *component, const char *name,
				 const char *unit, const char *desc)
{
	assert(st != NULL);
	if (!check_args(component, name, unit, desc))
		return NULL;

	size_t i = stats_lookup(st, component, name);
	if (i != SIZE_MAX) {
		struct entry *e = entry_at(st, i);
		return e->kind == CXS_STAT_VECTOR ? e->vec : NULL;
	}
	struct entry *e = stats_add_entry(st, CXS_STAT_VECTOR, component, name, unit, desc, 0);
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
int stats_vec_reserve(struct cxs_vec *v, uint64_t n)
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
	if (v->len == UINT64_MAX || stats_vec_reserve(v, v->len + 1) != 0)
		return -1;
	v->values[v->len++] = value;
	return 0;
}

int cxs_vec_append(struct cxs_vec *v, const uint64_t *values, uint64_t n)
{
	assert(v != NULL && (values != NULL || n == 0));
	if (n == 0)
		return 0;
	if (n > UINT64_MAX - v->len || stats_vec_reserve(v, v->len + n) != 0)
		return -1;
	memcpy(v->values + v->len, values, (size_t)n * sizeof(uint64_t));
	v->len += n;
	return 0;
}

int cxs_vec_set(struct cxs_vec *v, uint64_t i, uint64_t value)
{
	assert(v != NULL);
	if (i >= v->len) {
		if (i == UINT64_MAX || stats_vec_reserve(v, i + 1) != 0)
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

const struct instance *stats_find_instance(const struct cxs_stats *st, const char *component)
{
	for (size_t i = 0; i < st->ninst; i++)
		if (strcmp(st->inst[i].component, component) == 0)
			return &st->inst[i];
	return NULL;
}

/* component == group followed by index in decimal, no leading zeros. */
bool stats_instance_name_ok(const char *component, const char *group, uint64_t index)
{
	char want[2 * CXS_STATS_NAME_MAX + 24];

	if (!stats_valid_component(component) || !stats_valid_component(group) || index > UINT32_MAX)
		return false;
	snprintf(want, sizeof(want), "%s%" PRIu64, group, index);
	return strcmp(want, component) == 0;
}

int stats_add_instance(struct cxs_stats *st, const char *component, const char *group,
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
	if (component == NULL || group == NULL || !stats_instance_name_ok(component, group, index))
		return -1;
	const struct instance *in = stats_find_instance(st, component);
	if (in != NULL)
		return strcmp(in->group, group) == 0 && in->index == index ? 0 : -1;
	return stats_add_instance(st, component, group, index);
}

int cxs_stats_instance_of(const struct cxs_stats *st, const char *component, const char **group,
			  uint32_t *index)
{
	const struct instance *in = st != NULL ? stats_find_instance(st, component) : NULL;

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
	size_t i = stats_lookup(st, component, name);
	if (i == SIZE_MAX)
		return NULL;
	const struct entry *e = entry_at(st, i);
	if (e->kind == CXS_STAT_COUNTER)
		return &e->value;
	return e->kind == CXS_STAT_HIST ? &e->hist->count : &e->vec->len;
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
