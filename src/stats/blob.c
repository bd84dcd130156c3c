/*
 * blob.c — a registry as a flat byte blob, so that a rank can ship its nodes'
 * statistics to the rank that writes the HDF5 file (src/engine/output.c).
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
#include "stats_priv.h"

#include <stdlib.h>
#include <string.h>

#define BLOB_MAGIC 0x54535843u /* "CXST" read as little-endian */
#define BLOB_VERSION 2

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
	if (n > r->left / 8 || stats_vec_reserve(v, n) != 0)
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
	if (!stats_valid_component(component) || !stats_valid_stat_name(name) ||
	    stats_lookup(st, component, name) != SIZE_MAX)
		return -1;

	if (kind == CXS_STAT_COUNTER) {
		if (get_le(r, 8, &v))
			return -1;
		e = stats_add_entry(st, CXS_STAT_COUNTER, component, name, unit, desc, 0);
		if (e == NULL)
			return -1;
		e->value = v;
		return 0;
	}
	if (kind == CXS_STAT_VECTOR) {
		if (get_le(r, 8, &v))
			return -1;
		e = stats_add_entry(st, CXS_STAT_VECTOR, component, name, unit, desc, 0);
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
	e = stats_add_entry(st, CXS_STAT_HIST, component, name, unit, desc, h.nbuckets);
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
	if (!stats_instance_name_ok(component, group, index) || stats_find_instance(st, component) != NULL)
		return -1;
	return stats_add_instance(st, component, group, (uint32_t)index);
}

/* Series records: increasing counter indices, nsamples values each. */
static int unpack_series(struct cxs_stats *st, struct reader *r, uint64_t nseries,
			 uint64_t nsamples)
{
	uint64_t stat, prev = 0;

	if (nseries == 0)
		return nsamples == 0 ? 0 : -1;
	if (nsamples > r->left / 8 || stats_samples_reserve(st, nsamples) != 0)
		return -1;
	for (uint64_t i = 0; i < nseries; i++) {
		if (get_le(r, 4, &stat) || stat >= st->count || (i > 0 && stat <= prev) ||
		    entry_at(st, stat)->kind != CXS_STAT_COUNTER || nsamples > r->left / 8)
			return -1;
		prev = stat;
		if (st->capsamples == 0)
			st->capsamples = 1; /* add_series allocates at least one value */
		if (stats_add_series(st, (uint32_t)stat) != 0)
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
