/*
 * Unit tests for the counter registry (src/stats/stats.c): registration and
 * pointer stability, name rules, histogram bucketing at the edges of uint64_t,
 * the wire blob (round trip, and rejection of every truncation and of header
 * and body corruption), and the digest.
 *
 * The blob tests that forge a valid header around a damaged body re-implement
 * the header (FNV-1a 64 at offset 24, body length at 16) on purpose: they pin
 * the documented wire layout, and they get past the checksum to reach the
 * per-field length checks, which ASan then watches for over-reads (every
 * candidate blob is copied into a buffer of exactly its length).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/stats.h"
#include "unit_suites.h"

#define HDR 32 /* bytes of blob header */

/* ---- helpers ---------------------------------------------------------- */

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrites body_bytes and the body checksum so that only structure is wrong. */
static void forge_header(unsigned char *blob, size_t len)
{
	put_le64(blob + 16, len - HDR);
	put_le64(blob + 24, fnv1a(blob + HDR, len - HDR));
}

/* Unpacks a copy of exactly len bytes, so ASan sees any over-read. */
static struct cxs_stats *unpack_exact(const unsigned char *src, size_t len)
{
	unsigned char *copy = malloc(len > 0 ? len : 1);
	struct cxs_stats *st;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, src, len);
	st = cxs_stats_unpack(copy, len);
	free(copy);
	return st;
}

/* xorshift64: deterministic corruption positions and masks. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A registry with both kinds, empty and long text, and extreme values. */
static struct cxs_stats *sample_registry(void)
{
	struct cxs_stats *st = cxs_stats_new();
	uint64_t *p;
	struct cxs_hist *h;
	char long_desc[4096];

	ck_assert_ptr_nonnull(st);
	memset(long_desc, 'd', sizeof(long_desc) - 1);
	long_desc[sizeof(long_desc) - 1] = '\0';

	p = cxs_stats_counter(st, "l1", "hits", "lines", "demand hits in L1");
	ck_assert_ptr_nonnull(p);
	*p = 12345;
	p = cxs_stats_counter(st, "l1", "misses", NULL, NULL);
	ck_assert_ptr_nonnull(p);
	*p = UINT64_MAX;
	h = cxs_stats_hist(st, "port-0", "latency_ps", "ps", "request latency", 65);
	ck_assert_ptr_nonnull(h);
	cxs_hist_add(h, 0);
	cxs_hist_add(h, 3);
	cxs_hist_add(h, UINT64_MAX);
	h = cxs_stats_hist(st, "port-0", "burst", "lines", long_desc, 4);
	ck_assert_ptr_nonnull(h);
	cxs_hist_add(h, 1000);
	p = cxs_stats_counter(st, "core.0", "cycles", "cycles", "core clock cycles");
	ck_assert_ptr_nonnull(p);
	*p = 7;
	return st;
}

static void assert_same_registry(const struct cxs_stats *a, const struct cxs_stats *b)
{
	ck_assert_uint_eq(cxs_stats_count(a), cxs_stats_count(b));
	for (size_t i = 0; i < cxs_stats_count(a); i++) {
		struct cxs_stat_view va, vb;
		ck_assert_int_eq(cxs_stats_get(a, i, &va), 0);
		ck_assert_int_eq(cxs_stats_get(b, i, &vb), 0);
		ck_assert_int_eq(va.kind, vb.kind);
		ck_assert_str_eq(va.component, vb.component);
		ck_assert_str_eq(va.name, vb.name);
		ck_assert_str_eq(va.unit, vb.unit);
		ck_assert_str_eq(va.desc, vb.desc);
		ck_assert_uint_eq(va.value, vb.value);
		if (va.kind == CXS_STAT_HIST) {
			ck_assert_uint_eq(va.hist->nbuckets, vb.hist->nbuckets);
			ck_assert_uint_eq(va.hist->count, vb.hist->count);
			ck_assert_uint_eq(va.hist->sum, vb.hist->sum);
			ck_assert_uint_eq(va.hist->min, vb.hist->min);
			ck_assert_uint_eq(va.hist->max, vb.hist->max);
			ck_assert_mem_eq(va.hist->bucket, vb.hist->bucket,
					 va.hist->nbuckets * sizeof(uint64_t));
		}
	}
	ck_assert_uint_eq(cxs_stats_digest(a), cxs_stats_digest(b));
}

/* ---- registration ----------------------------------------------------- */

START_TEST(test_register_counter)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_stat_view v;
	uint64_t *p;

	ck_assert_uint_eq(cxs_stats_count(st), 0);
	p = cxs_stats_counter(st, "l1", "hits", "lines", "demand hits");
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(*p, 0);
	ck_assert_uint_eq(cxs_stats_count(st), 1);
	*p += 5;

	ck_assert_int_eq(cxs_stats_get(st, 0, &v), 0);
	ck_assert_int_eq(v.kind, CXS_STAT_COUNTER);
	ck_assert_str_eq(v.component, "l1");
	ck_assert_str_eq(v.name, "hits");
	ck_assert_str_eq(v.unit, "lines");
	ck_assert_str_eq(v.desc, "demand hits");
	ck_assert_uint_eq(v.value, 5);
	ck_assert_ptr_null(v.hist);
	ck_assert_int_eq(cxs_stats_get(st, 1, &v), -1);

	ck_assert_ptr_eq(cxs_stats_find(st, "l1", "hits"), p);
	ck_assert_ptr_null(cxs_stats_find(st, "l1", "misses"));
	ck_assert_ptr_null(cxs_stats_find(st, "l2", "hits"));

	/* NULL unit and description read back as "". */
	ck_assert_ptr_nonnull(cxs_stats_counter(st, "l1", "misses", NULL, NULL));
	ck_assert_int_eq(cxs_stats_get(st, 1, &v), 0);
	ck_assert_str_eq(v.unit, "");
	ck_assert_str_eq(v.desc, "");
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_same_name_same_pointer)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_stat_view v;
	uint64_t *a = cxs_stats_counter(st, "l1", "hits", "lines", "first");
	uint64_t *b = cxs_stats_counter(st, "l1", "hits", "bytes", "second");
	uint64_t *c = cxs_stats_counter(st, "l2", "hits", "lines", "other component");
	struct cxs_hist *h1 = cxs_stats_hist(st, "l1", "lat", "ps", "", 8);
	struct cxs_hist *h2 = cxs_stats_hist(st, "l1", "lat", "ps", "", 8);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_eq(a, b);
	ck_assert_ptr_ne(a, c);
	ck_assert_ptr_nonnull(h1);
	ck_assert_ptr_eq(h1, h2);
	ck_assert_uint_eq(cxs_stats_count(st), 3);

	/* The first registration's documentation stands. */
	ck_assert_int_eq(cxs_stats_get(st, 0, &v), 0);
	ck_assert_str_eq(v.unit, "lines");
	ck_assert_str_eq(v.desc, "first");

	/* A name cannot change kind or bucket count. */
	ck_assert_ptr_null(cxs_stats_hist(st, "l1", "hits", "lines", "", 8));
	ck_assert_ptr_null(cxs_stats_counter(st, "l1", "lat", "ps", ""));
	ck_assert_ptr_null(cxs_stats_hist(st, "l1", "lat", "ps", "", 9));
	ck_assert_uint_eq(cxs_stats_count(st), 3);
	cxs_stats_free(st);
}
END_TEST

/* Many registrations (several chunks, several hash resizes) move nothing. */
START_TEST(test_pointers_stable)
{
	enum { N = 1000 };
	struct cxs_stats *st = cxs_stats_new();
	uint64_t *p[N];
	struct cxs_hist *h[N / 100];
	char name[32];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		p[i] = cxs_stats_counter(st, "comp", name, "", "");
		ck_assert_ptr_nonnull(p[i]);
		*p[i] = (uint64_t)i * 3 + 1;
		if (i % 100 == 0) {
			snprintf(name, sizeof(name), "h%d", i);
			h[i / 100] = cxs_stats_hist(st, "comp", name, "", "", 65);
			ck_assert_ptr_nonnull(h[i / 100]);
			cxs_hist_add(h[i / 100], (uint64_t)i);
		}
	}
	ck_assert_uint_eq(cxs_stats_count(st), N + N / 100);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		ck_assert_ptr_eq(cxs_stats_find(st, "comp", name), p[i]);
		ck_assert_ptr_eq(cxs_stats_counter(st, "comp", name, "", ""), p[i]);
		ck_assert_uint_eq(*p[i], (uint64_t)i * 3 + 1);
	}
	for (int i = 0; i < N / 100; i++) {
		snprintf(name, sizeof(name), "h%d", i * 100);
		ck_assert_ptr_eq(cxs_stats_hist(st, "comp", name, "", "", 65), h[i]);
		ck_assert_ptr_eq(cxs_stats_find(st, "comp", name), &h[i]->count);
		ck_assert_uint_eq(h[i]->count, 1);
	}
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_invalid_names)
{
	struct cxs_stats *st = cxs_stats_new();
	char n63[64], n64[65], text[4097];
	const char *bad[] = { "", "a/b", "a b", "tab\t", "caf\xc3\xa9", ".", "..", "x:y", "a*" };

	memset(n63, 'x', 63);
	n63[63] = '\0';
	memset(n64, 'x', 64);
	n64[64] = '\0';

	ck_assert_ptr_null(cxs_stats_counter(st, NULL, "hits", "", ""));
	ck_assert_ptr_null(cxs_stats_counter(st, "l1", NULL, "", ""));
	ck_assert_ptr_null(cxs_stats_counter(st, n64, "hits", "", ""));
	ck_assert_ptr_null(cxs_stats_counter(st, "l1", n64, "", ""));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(cxs_stats_counter(st, bad[i], "ok", "", "") == NULL, "component \"%s\"",
			      bad[i]);
		ck_assert_msg(cxs_stats_counter(st, "ok", bad[i], "", "") == NULL, "name \"%s\"",
			      bad[i]);
		ck_assert_msg(cxs_stats_hist(st, "ok", bad[i], "", "", 4) == NULL, "hist \"%s\"",
			      bad[i]);
	}
	ck_assert_ptr_null(cxs_stats_hist(st, "h", "zero", "", "", 0));
	ck_assert_ptr_null(cxs_stats_hist(st, "h", "many", "", "", CXS_HIST_BUCKETS_MAX + 1));

	memset(text, 'u', 4096);
	text[4096] = '\0';
	ck_assert_ptr_null(cxs_stats_counter(st, "l1", "long_unit", text, ""));
	ck_assert_ptr_null(cxs_stats_counter(st, "l1", "long_desc", "", text));
	ck_assert_uint_eq(cxs_stats_count(st), 0);

	/* The boundaries themselves are fine. */
	text[4095] = '\0';
	ck_assert_ptr_nonnull(cxs_stats_counter(st, n63, n63, text, text));
	ck_assert_ptr_nonnull(cxs_stats_counter(st, "a", "b", "", ""));
	ck_assert_ptr_nonnull(cxs_stats_counter(st, "AZaz09_.-", "...", "", ""));
	ck_assert_ptr_nonnull(cxs_stats_hist(st, "h", "one", "", "", 1));
	ck_assert_ptr_nonnull(cxs_stats_hist(st, "h", "all", "", "", CXS_HIST_BUCKETS_MAX));
	ck_assert_uint_eq(cxs_stats_count(st), 5);
	cxs_stats_free(st);
}
END_TEST

/* ---- histograms ------------------------------------------------------- */

START_TEST(test_hist_buckets_full)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_hist *h = cxs_stats_hist(st, "c", "h", "", "", 65);
	const struct {
		uint64_t value;
		uint32_t bucket;
	} c[] = {
		{ 0, 0 },
		{ 1, 1 },
		{ 2, 2 },
		{ 3, 2 },
		{ 4, 3 },
		{ 7, 3 },
		{ 8, 4 },
		{ (1ull << 62) - 1, 62 },
		{ 1ull << 62, 63 },
		{ (1ull << 63) - 1, 63 },
		{ 1ull << 63, 64 },
		{ UINT64_MAX, 64 },
	};

	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(h->nbuckets, 65);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t before[CXS_HIST_BUCKETS_MAX];
		memcpy(before, h->bucket, sizeof(before));
		cxs_hist_add(h, c[i].value);
		for (uint32_t b = 0; b < 65; b++)
			ck_assert_msg(h->bucket[b] == before[b] + (b == c[i].bucket),
				      "value %llu: bucket %u", (unsigned long long)c[i].value, b);
	}
	ck_assert_uint_eq(h->count, sizeof(c) / sizeof(c[0]));
	ck_assert_uint_eq(h->min, 0);
	ck_assert_uint_eq(h->max, UINT64_MAX);
	ck_assert_uint_eq(h->sum, UINT64_MAX); /* saturated, not wrapped */
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_hist_fewer_buckets)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_hist *h3 = cxs_stats_hist(st, "c", "three", "", "", 3);
	struct cxs_hist *h1 = cxs_stats_hist(st, "c", "one", "", "", 1);
	const uint64_t values[] = { 0, 1, 2, 3, 4, 1ull << 63, UINT64_MAX };

	ck_assert_ptr_nonnull(h3);
	ck_assert_ptr_nonnull(h1);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		cxs_hist_add(h3, values[i]);
		cxs_hist_add(h1, values[i]);
	}
	/* 3 buckets: {0}, {1}, and [2, inf) clamped into the last. */
	ck_assert_uint_eq(h3->bucket[0], 1);
	ck_assert_uint_eq(h3->bucket[1], 1);
	ck_assert_uint_eq(h3->bucket[2], 5);
	for (int b = 3; b < CXS_HIST_BUCKETS_MAX; b++)
		ck_assert_uint_eq(h3->bucket[b], 0);
	/* 1 bucket: everything. */
	ck_assert_uint_eq(h1->bucket[0], 7);
	ck_assert_uint_eq(h1->bucket[1], 0);
	ck_assert_uint_eq(h1->count, 7);
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_hist_min_max_sum)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_hist *h = cxs_stats_hist(st, "c", "h", "", "", 10);

	cxs_hist_add(h, 5);
	ck_assert_uint_eq(h->min, 5); /* the first value sets both bounds */
	ck_assert_uint_eq(h->max, 5);
	cxs_hist_add(h, 9);
	cxs_hist_add(h, 2);
	ck_assert_uint_eq(h->min, 2);
	ck_assert_uint_eq(h->max, 9);
	ck_assert_uint_eq(h->sum, 16);
	ck_assert_uint_eq(h->count, 3);
	ck_assert_ptr_eq(cxs_stats_find(st, "c", "h"), &h->count);
	cxs_stats_free(st);
}
END_TEST

/* ---- blob ------------------------------------------------------------- */

START_TEST(test_pack_round_trip)
{
	struct cxs_stats *st = sample_registry();
	struct cxs_stats *back;
	void *buf, *buf2;
	size_t len, len2;

	ck_assert_int_eq(cxs_stats_pack(st, &buf, &len), 0);
	ck_assert_uint_gt(len, HDR);
	ck_assert_mem_eq(buf, "CXST", 4);
	back = unpack_exact(buf, len);
	ck_assert_ptr_nonnull(back);
	assert_same_registry(st, back);

	/* Stable: the copy packs to the same bytes. */
	ck_assert_int_eq(cxs_stats_pack(back, &buf2, &len2), 0);
	ck_assert_uint_eq(len, len2);
	ck_assert_mem_eq(buf, buf2, len);

	/* The copy is a live registry: same names resolve, new ones register. */
	ck_assert_uint_eq(*cxs_stats_find(back, "l1", "hits"), 12345);
	ck_assert_ptr_eq(cxs_stats_counter(back, "l1", "hits", "", ""),
			 cxs_stats_find(back, "l1", "hits"));
	ck_assert_ptr_nonnull(cxs_stats_counter(back, "l1", "new", "", ""));
	ck_assert_uint_eq(cxs_stats_count(back), cxs_stats_count(st) + 1);

	free(buf);
	free(buf2);
	cxs_stats_free(back);
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_pack_empty)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_stats *back;
	void *buf;
	size_t len;

	ck_assert_int_eq(cxs_stats_pack(st, &buf, &len), 0);
	ck_assert_uint_eq(len, HDR);
	back = unpack_exact(buf, len);
	ck_assert_ptr_nonnull(back);
	ck_assert_uint_eq(cxs_stats_count(back), 0);
	ck_assert_uint_eq(cxs_stats_digest(back), cxs_stats_digest(st));
	free(buf);
	cxs_stats_free(back);
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_unpack_rejects_every_truncation)
{
	struct cxs_stats *st = sample_registry();
	void *buf;
	size_t len;

	ck_assert_int_eq(cxs_stats_pack(st, &buf, &len), 0);
	ck_assert_ptr_null(cxs_stats_unpack(NULL, len));
	for (size_t n = 0; n < len; n++)
		ck_assert_msg(unpack_exact(buf, n) == NULL, "truncated to %zu of %zu accepted", n,
			      len);
	free(buf);
	cxs_stats_free(st);
}
END_TEST

/* Truncations with a forged, self-consistent header: only field checks stop them. */
START_TEST(test_unpack_rejects_forged_truncation)
{
	struct cxs_stats *st = sample_registry();
	unsigned char *buf, *cut;
	size_t len;

	ck_assert_int_eq(cxs_stats_pack(st, (void **)&buf, &len), 0);
	cut = malloc(len);
	ck_assert_ptr_nonnull(cut);
	for (size_t n = HDR; n < len; n++) {
		memcpy(cut, buf, n);
		forge_header(cut, n);
		ck_assert_msg(unpack_exact(cut, n) == NULL, "forged truncation to %zu accepted", n);
	}
	/* And the forging itself is right: the full length is accepted. */
	memcpy(cut, buf, len);
	forge_header(cut, len);
	struct cxs_stats *ok = unpack_exact(cut, len);
	ck_assert_ptr_nonnull(ok);
	cxs_stats_free(ok);
	free(cut);
	free(buf);
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_unpack_rejects_header_corruption)
{
	struct cxs_stats *st = sample_registry();
	unsigned char *buf, *bad;
	size_t len;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	ck_assert_int_eq(cxs_stats_pack(st, (void **)&buf, &len), 0);
	bad = malloc(len);
	ck_assert_ptr_nonnull(bad);
	/* Every single-bit flip in every header field. */
	for (size_t i = 0; i < HDR; i++) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(bad, buf, len);
			bad[i] ^= (unsigned char)(1u << bit);
			ck_assert_msg(unpack_exact(bad, len) == NULL, "header byte %zu bit %d", i,
				      bit);
		}
	}
	/* Random non-zero byte changes anywhere: the body checksum catches them. */
	for (int t = 0; t < 2000; t++) {
		size_t pos = next_rand(&seed) % len;
		unsigned char mask = (unsigned char)(next_rand(&seed) % 255 + 1);
		memcpy(bad, buf, len);
		bad[pos] ^= mask;
		ck_assert_msg(unpack_exact(bad, len) == NULL, "byte %zu ^ 0x%02x accepted", pos,
			      mask);
	}
	free(bad);
	free(buf);
	cxs_stats_free(st);
}
END_TEST

/*
 * Structural damage behind a valid checksum. Offsets are into the blob of a
 * registry holding counter a/x then counter a/y:
 *   32 kind, 33 component_len, 34 name_len, 35 reserved, 36 unit_len,
 *   38 desc_len, 40 "a", 41 "x", 42 unit "u", 43 value..., 51 second record.
 */
START_TEST(test_unpack_rejects_forged_structure)
{
	struct cxs_stats *st = cxs_stats_new();
	unsigned char *buf, *bad;
	size_t len;
	const struct {
		size_t pos;
		unsigned char val;
		const char *what;
	} c[] = {
		{ 32, 2, "unknown kind" },
		{ 33, 0, "empty component" },
		{ 34, 64, "name too long" },
		{ 35, 1, "reserved byte set" },
		{ 40, '/', "'/' in component" },
		{ 41, '\0', "NUL in name" },
		{ 42, '\0', "NUL in unit" },
		{ 51 + 9, 'x', "duplicate name" },
		{ 8, 1, "nstats smaller than the body" },
		{ 8, 3, "nstats larger than the body" },
	};

	ck_assert_ptr_nonnull(cxs_stats_counter(st, "a", "x", "u", ""));
	ck_assert_ptr_nonnull(cxs_stats_counter(st, "a", "y", "u", ""));
	ck_assert_int_eq(cxs_stats_pack(st, (void **)&buf, &len), 0);
	ck_assert_uint_eq(len, HDR + 2 * 19);
	ck_assert_uint_eq(buf[41], 'x');
	ck_assert_uint_eq(buf[51 + 9], 'y');
	bad = malloc(len + 1);
	ck_assert_ptr_nonnull(bad);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memcpy(bad, buf, len);
		bad[c[i].pos] = c[i].val;
		forge_header(bad, len);
		ck_assert_msg(unpack_exact(bad, len) == NULL, "%s accepted", c[i].what);
	}
	/* A trailing byte. */
	memcpy(bad, buf, len);
	bad[len] = 0;
	forge_header(bad, len + 1);
	ck_assert_ptr_null(unpack_exact(bad, len + 1));
	free(bad);
	free(buf);
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_unpack_rejects_bad_nbuckets)
{
	struct cxs_stats *st = cxs_stats_new();
	unsigned char *buf, *bad;
	size_t len;
	/* Record header 8 + "h" + "h" = offset 42 of nbuckets. */
	const uint32_t values[] = { 0, CXS_HIST_BUCKETS_MAX + 1, 3, UINT32_MAX };

	ck_assert_ptr_nonnull(cxs_stats_hist(st, "h", "h", "", "", 2));
	ck_assert_int_eq(cxs_stats_pack(st, (void **)&buf, &len), 0);
	ck_assert_uint_eq(buf[42], 2);
	bad = malloc(len);
	ck_assert_ptr_nonnull(bad);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		memcpy(bad, buf, len);
		for (int b = 0; b < 4; b++)
			bad[42 + b] = (unsigned char)(values[i] >> (8 * b));
		forge_header(bad, len);
		ck_assert_msg(unpack_exact(bad, len) == NULL, "nbuckets %u accepted", values[i]);
	}
	free(bad);
	free(buf);
	cxs_stats_free(st);
}
END_TEST

/* ---- digest ----------------------------------------------------------- */

START_TEST(test_digest)
{
	struct cxs_stats *a = sample_registry();
	struct cxs_stats *b = sample_registry();
	uint64_t *p = cxs_stats_counter(a, "l1", "hits", "", "");
	struct cxs_hist *h = cxs_stats_hist(a, "port-0", "latency_ps", "", "", 65);
	uint64_t d = cxs_stats_digest(b);

	ck_assert_uint_eq(cxs_stats_digest(a), d);
	(*p)++;
	ck_assert_uint_ne(cxs_stats_digest(a), d);
	(*p)--;
	ck_assert_uint_eq(cxs_stats_digest(a), d);
	h->bucket[5]++;
	ck_assert_uint_ne(cxs_stats_digest(a), d);
	h->bucket[5]--;
	ck_assert_uint_eq(cxs_stats_digest(a), d);

	/* A new statistic, even at zero, is part of the digest. */
	ck_assert_ptr_nonnull(cxs_stats_counter(a, "l1", "zero", "", ""));
	ck_assert_uint_ne(cxs_stats_digest(a), d);
	cxs_stats_free(a);
	cxs_stats_free(b);
}
END_TEST

START_TEST(test_digest_names_and_order)
{
	struct cxs_stats *a = cxs_stats_new(), *b = cxs_stats_new(), *c = cxs_stats_new();
	struct cxs_stats *d = cxs_stats_new(), *e = cxs_stats_new();

	*cxs_stats_counter(a, "x", "p", "", "") = 1;
	*cxs_stats_counter(a, "x", "q", "", "") = 2;
	*cxs_stats_counter(b, "x", "q", "", "") = 2; /* same stats, other order */
	*cxs_stats_counter(b, "x", "p", "", "") = 1;
	*cxs_stats_counter(c, "x", "p", "ps", "documentation only") = 1;
	*cxs_stats_counter(c, "x", "q", "lines", "") = 2;
	/* Same bytes once component and name are run together. */
	*cxs_stats_counter(d, "ab", "c", "", "") = 1;
	*cxs_stats_counter(e, "a", "bc", "", "") = 1;

	ck_assert_uint_ne(cxs_stats_digest(a), cxs_stats_digest(b));
	ck_assert_uint_eq(cxs_stats_digest(a), cxs_stats_digest(c));
	ck_assert_uint_ne(cxs_stats_digest(d), cxs_stats_digest(e));
	cxs_stats_free(a);
	cxs_stats_free(b);
	cxs_stats_free(c);
	cxs_stats_free(d);
	cxs_stats_free(e);
}
END_TEST

Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *reg = tcase_create("registry");
	TCase *hist = tcase_create("hist");
	TCase *blob = tcase_create("blob");
	TCase *digest = tcase_create("digest");

	tcase_add_test(reg, test_register_counter);
	tcase_add_test(reg, test_same_name_same_pointer);
	tcase_add_test(reg, test_pointers_stable);
	tcase_add_test(reg, test_invalid_names);
	suite_add_tcase(s, reg);

	tcase_add_test(hist, test_hist_buckets_full);
	tcase_add_test(hist, test_hist_fewer_buckets);
	tcase_add_test(hist, test_hist_min_max_sum);
	suite_add_tcase(s, hist);

	/* Sanitizer builds make the exhaustive corruption loops slow. */
	tcase_set_timeout(blob, 60);
	tcase_add_test(blob, test_pack_round_trip);
	tcase_add_test(blob, test_pack_empty);
	tcase_add_test(blob, test_unpack_rejects_every_truncation);
	tcase_add_test(blob, test_unpack_rejects_forged_truncation);
	tcase_add_test(blob, test_unpack_rejects_header_corruption);
	tcase_add_test(blob, test_unpack_rejects_forged_structure);
	tcase_add_test(blob, test_unpack_rejects_bad_nbuckets);
	suite_add_tcase(s, blob);

	tcase_add_test(digest, test_digest);
	tcase_add_test(digest, test_digest_names_and_order);
	suite_add_tcase(s, digest);
	return s;
}
