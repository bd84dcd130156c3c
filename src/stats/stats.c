/*
 * stats.c — the per-node counter registry, its wire blob and its digest.
 *
 * Storage
 * -------
 * Models keep the uint64_t * / struct cxs_hist * they got at registration and
 * bump through it on the hot path, so an entry must never move. Entries live
 * in chunks of CHUNK_ENTRIES that are allocated once and freed only by
 * cxs_stats_free; only the small array of chunk pointers is ever realloc'd.
 * Entry i is chunk[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES], so index order is
 * registration order, which is the order pack, digest and the HDF5 writer
 * walk. A histogram (65 buckets, ~560 bytes) is allocated on its own so that a
 * counter, the common case, costs one ~170-byte entry.
 *
 *   chunk[] ──► [e0 e1 ... e63] [e64 ... e127] ...      (never moved)
 *                    │
 *                    └─ hist ──► struct cxs_hist         (never moved)
 *
 * Lookup
 * ------
 * An open-addressing table (linear probing, at most half full) maps
 * "component/name" to index + 1 (0 = empty slot). It is only probed, never
 * iterated, so its hash-dependent order cannot reach any output. '/' is not a
 * name character, so the joined key is unambiguous.
 *
 * Names and text
 * --------------
 * component and name: 1..CXS_STATS_NAME_MAX bytes of [A-Za-z0-9_.-], and not
 * "." or "..", which HDF5 would resolve as paths rather than link names.
 * unit and desc: NULL means "", at most TEXT_MAX bytes. The bound keeps every
 * blob length field at 16 bits and a description is a sentence, not a page.
 *
 * Blob (version 1, little-endian, fields unaligned, written byte by byte)
 * -----------------------------------------------------------------------
 *   offset size field
 *    0      4   magic "CXST"
 *    4      2   version = 1
 *    6      2   header_bytes = 32
 *    8      4   nstats
 *   12      4   reserved = 0
 *   16      8   body_bytes = blob length - 32
 *   24      8   FNV-1a 64 of the body
 *   32          nstats records, each:
 *                 kind u8, component_len u8, name_len u8, reserved u8 = 0,
 *                 unit_len u16, desc_len u16, then the four strings (no NUL),
 *                 counter:   value u64
 *                 histogram: nbuckets u32, count, sum, min, max u64,
 *                            bucket[nbuckets] u64
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
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ENTRIES 64
#define TEXT_MAX 4095 /* bytes of unit or desc, without the NUL */
#define MIN_SLOTS 16

#define BLOB_MAGIC 0x54535843u /* "CXST" read as little-endian */
#define BLOB_VERSION 1

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
	uint32_t reserved;
	uint64_t body_bytes;
	uint64_t body_fnv;
};
_Static_assert(sizeof(struct blob_header) == 32, "blob header is 32 bytes");
_Static_assert(offsetof(struct blob_header, nstats) == 8, "nstats at 8");
_Static_assert(offsetof(struct blob_header, body_bytes) == 16, "body_bytes at 16");
_Static_assert(offsetof(struct blob_header, body_fnv) == 24, "body_fnv at 24");

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
};

struct cxs_stats {
	struct entry **chunk; /* nchunks pointers, each to CHUNK_ENTRIES entries */
	size_t nchunks;
	size_t count;
	uint32_t *slot; /* nslots (a power of two) of index + 1; 0 = empty */
	size_t nslots;
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
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
		if (!ok)
			return false;
	}
	return true;
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

	e = &st->chunk[st->count / CHUNK_ENTRIES][st->count % CHUNK_ENTRIES];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->nbuckets = kind == CXS_STAT_HIST ? nbuckets : 0;
	strcpy(e->component, component);
	strcpy(e->name, name);
	e->unit = u;
	e->desc = d;
	e->hist = h;
	u = d = NULL;
	h = NULL;
	slot_insert(st->slot, st->nslots, e, st->count);
	st->count++;
out:
	free(u);
	free(d);
	free(h);
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
	}
	for (size_t c = 0; c < st->nchunks; c++)
		free(st->chunk[c]);
	free(st->chunk);
	free(st->slot);
	free(st);
}

uint64_t *cxs_stats_counter(struct cxs_stats *st, const char *component, const char *name,
			    const char *unit, const char *desc)
{
	assert(st != NULL);
	if (!valid_name(component) || !valid_name(name) || !valid_text(unit) || !valid_text(desc))
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
	if (!valid_name(component) || !valid_name(name) || !valid_text(unit) || !valid_text(desc))
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
	out->value = e->kind == CXS_STAT_COUNTER ? e->value : e->hist->count;
	out->hist = e->hist;
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
	return e->kind == CXS_STAT_COUNTER ? &e->value : &e->hist->count;
}

/*
 * FNV-1a over, per statistic in registration order: kind, component, NUL,
 * name, NUL, then the value (counter) or nbuckets, count, sum, min, max and
 * the buckets (histogram), integers as little-endian bytes so that the digest
 * does not depend on the host. Units and descriptions are documentation, not
 * results, and are left out.
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
	return n + HIST_FIXED_BYTES + 8 * (size_t)e->nbuckets;
}

int cxs_stats_pack(const struct cxs_stats *st, void **buf, size_t *len)
{
	size_t hdr = sizeof(struct blob_header);
	size_t total = hdr;
	unsigned char *blob, *p;

	assert(st != NULL && buf != NULL && len != NULL);
	for (size_t i = 0; i < st->count; i++)
		total += record_bytes(entry_at(st, i));
	blob = malloc(total);
	if (blob == NULL)
		return -1;

	p = blob + hdr;
	for (size_t i = 0; i < st->count; i++) {
		const struct entry *e = entry_at(st, i);
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
		if (e->kind == CXS_STAT_COUNTER) {
			p = put_u64(p, e->value);
			continue;
		}
		put_le(p, e->nbuckets, 4);
		p += 4;
		p = put_u64(p, e->hist->count);
		p = put_u64(p, e->hist->sum);
		p = put_u64(p, e->hist->min);
		p = put_u64(p, e->hist->max);
		for (uint32_t b = 0; b < e->nbuckets; b++)
			p = put_u64(p, e->hist->bucket[b]);
	}
	assert(p == blob + total);

	put_le(blob + offsetof(struct blob_header, magic), BLOB_MAGIC, 4);
	put_le(blob + offsetof(struct blob_header, version), BLOB_VERSION, 2);
	put_le(blob + offsetof(struct blob_header, header_bytes), hdr, 2);
	put_le(blob + offsetof(struct blob_header, nstats), st->count, 4);
	put_le(blob + offsetof(struct blob_header, reserved), 0, 4);
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
	if ((kind != CXS_STAT_COUNTER && kind != CXS_STAT_HIST) || reserved != 0 ||
	    cl > CXS_STATS_NAME_MAX || nl > CXS_STATS_NAME_MAX || ul > TEXT_MAX || dl > TEXT_MAX)
		return -1;
	if (get_string(r, cl, component) || get_string(r, nl, name) || get_string(r, ul, unit) ||
	    get_string(r, dl, desc))
		return -1;
	if (!valid_name(component) || !valid_name(name) || lookup(st, component, name) != SIZE_MAX)
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

struct cxs_stats *cxs_stats_unpack(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t hdr = sizeof(struct blob_header);
	struct cxs_stats *st = NULL;
	struct reader r;
	uint64_t nstats;
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

	st = cxs_stats_new();
	if (st == NULL)
		goto out;
	r.p = b + hdr;
	r.left = len - hdr;
	for (uint64_t i = 0; i < nstats; i++)
		if (unpack_record(st, &r) != 0)
			goto out;
	ok = r.left == 0; /* trailing bytes mean nstats is wrong */
out:
	if (!ok) {
		cxs_stats_free(st);
		st = NULL;
	}
	return st;
}
