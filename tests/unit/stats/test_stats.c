/*
 * Unit tests for the statistics registry (src/stats/stats.c): registration and
 * pointer stability, name rules, histogram bucketing at the edges of uint64_t,
 * vectors, instances, time series, the wire blob (round trip, and rejection of
 * every truncation and of header and body corruption), and the digest —
 * pinned to the value the registry gave before vectors, instances and series
 * existed, because run checksums must not change.
 *
 * The blob tests that forge a valid header around a damaged body re-implement
 * the header (FNV-1a 64 at offset 40, body length at 32) on purpose: they pin
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

#define HDR 48 /* bytes of blob header */

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
	put_le64(blob + 32, len - HDR);
	put_le64(blob + 40, fnv1a(blob + HDR, len - HDR));
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

/* A registry with every kind, empty and long text, extreme values, an instance and series. */
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
	struct cxs_vec *v = cxs_stats_vector(st, "home", "owned_lines", "lines", "owned lines");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(cxs_vec_push(v, 0x40), 0);
	ck_assert_int_eq(cxs_vec_push(v, UINT64_MAX), 0);
	ck_assert_ptr_nonnull(cxs_stats_vector(st, "home", "empty", "", ""));
	ck_assert_int_eq(cxs_stats_instance(st, "core3", "core", 3), 0);
	p = cxs_stats_counter(st, "core3", "cycles", "cycles", "");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(cxs_stats_sample_select(st, "core/cycles l1/hits"), 0);
	for (uint64_t k = 0; k < 3; k++) {
		*p = 100 * k;
		ck_assert_int_eq(cxs_stats_sample(st), 0);
	}
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
		if (va.kind == CXS_STAT_VECTOR) {
			ck_assert_uint_eq(va.vec->len, vb.vec->len);
			if (va.vec->len > 0)
				ck_assert_mem_eq(va.vec->values, vb.vec->values,
						 va.vec->len * sizeof(uint64_t));
		}
		const char *ga, *gb;
		uint32_t ia, ib;
		ck_assert_int_eq(cxs_stats_instance_of(a, va.component, &ga, &ia),
				 cxs_stats_instance_of(b, vb.component, &gb, &ib));
		ck_assert_str_eq(ga, gb);
		ck_assert_uint_eq(ia, ib);
	}
	/* Series: the same counters with the same samples (pack orders them by index). */
	ck_assert_uint_eq(cxs_stats_nseries(a), cxs_stats_nseries(b));
	ck_assert_uint_eq(cxs_stats_nseries(a) ? cxs_stats_nsamples(a) : 0, cxs_stats_nsamples(b));
	for (size_t i = 0; i < cxs_stats_nseries(b); i++) {
		struct cxs_series_view sb, sa = { 0 };
		ck_assert_int_eq(cxs_stats_series(b, i, &sb), 0);
		for (size_t j = 0; j < cxs_stats_nseries(a); j++) {
			ck_assert_int_eq(cxs_stats_series(a, j, &sa), 0);
			if (sa.stat == sb.stat)
				break;
		}
		ck_assert_uint_eq(sa.stat, sb.stat);
		ck_assert_mem_eq(sa.values, sb.values, cxs_stats_nsamples(b) * sizeof(uint64_t));
		if (i > 0) {
			struct cxs_series_view prev;
			cxs_stats_series(b, i - 1, &prev);
			ck_assert_uint_lt(prev.stat, sb.stat);
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
 *   48 kind, 49 component_len, 50 name_len, 51 reserved, 52 unit_len,
 *   54 desc_len, 56 "a", 57 "x", 58 unit "u", 59 value..., 67 second record.
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
		{ 48, 3, "unknown kind" },
		{ 49, 0, "empty component" },
		{ 50, 64, "name too long" },
		{ 51, 1, "reserved byte set" },
		{ 56, '/', "'/' in component" },
		{ 57, '\0', "NUL in name" },
		{ 58, '\0', "NUL in unit" },
		{ 67 + 9, 'x', "duplicate name" },
		{ 8, 1, "nstats smaller than the body" },
		{ 8, 3, "nstats larger than the body" },
		{ 12, 1, "an instance that is not there" },
		{ 16, 1, "a series that is not there" },
		{ 24, 1, "samples without series" },
		{ 20, 1, "reserved header field set" },
	};

	ck_assert_ptr_nonnull(cxs_stats_counter(st, "a", "x", "u", ""));
	ck_assert_ptr_nonnull(cxs_stats_counter(st, "a", "y", "u", ""));
	ck_assert_int_eq(cxs_stats_pack(st, (void **)&buf, &len), 0);
	ck_assert_uint_eq(len, HDR + 2 * 19);
	ck_assert_uint_eq(buf[57], 'x');
	ck_assert_uint_eq(buf[67 + 9], 'y');
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
	/* Header 48 + record header 8 + "h" + "h" = offset 58 of nbuckets. */
	const uint32_t values[] = { 0, CXS_HIST_BUCKETS_MAX + 1, 3, UINT32_MAX };

	ck_assert_ptr_nonnull(cxs_stats_hist(st, "h", "h", "", "", 2));
	ck_assert_int_eq(cxs_stats_pack(st, (void **)&buf, &len), 0);
	ck_assert_uint_eq(buf[58], 2);
	bad = malloc(len);
	ck_assert_ptr_nonnull(bad);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		memcpy(bad, buf, len);
		for (int b = 0; b < 4; b++)
			bad[58 + b] = (unsigned char)(values[i] >> (8 * b));
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

/* ---- reserved names ---------------------------------------------------- */

START_TEST(test_reserved_names)
{
	struct cxs_stats *st = cxs_stats_new();

	/* They key rows and sample times in the HDF5 file (h5out.h). */
	ck_assert_ptr_null(cxs_stats_counter(st, "port", "node", "", ""));
	ck_assert_ptr_null(cxs_stats_counter(st, "port", "index", "", ""));
	ck_assert_ptr_null(cxs_stats_hist(st, "port", "index", "", "", 4));
	ck_assert_ptr_null(cxs_stats_vector(st, "port", "node", "", ""));
	ck_assert_ptr_null(cxs_stats_counter(st, "time_ps", "x", "", ""));
	ck_assert_uint_eq(cxs_stats_count(st), 0);
	/* Only as whole names. */
	ck_assert_ptr_nonnull(cxs_stats_counter(st, "node", "nodes", "", ""));
	ck_assert_ptr_nonnull(cxs_stats_counter(st, "time_ps2", "index_x", "", ""));
	cxs_stats_free(st);
}
END_TEST

/* ---- vectors ----------------------------------------------------------- */

START_TEST(test_vector_grow)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_vec *v = cxs_stats_vector(st, "home", "image", "words", "memory image");
	const uint64_t more[3] = { 7, 8, 9 };
	struct cxs_stat_view view;

	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(v->len, 0);
	ck_assert_ptr_eq(cxs_stats_vector(st, "home", "image", "", ""), v);
	ck_assert_ptr_eq(cxs_stats_find(st, "home", "image"), &v->len);
	/* A name cannot change kind. */
	ck_assert_ptr_null(cxs_stats_counter(st, "home", "image", "", ""));
	ck_assert_ptr_null(cxs_stats_hist(st, "home", "image", "", "", 4));
	ck_assert_ptr_null(cxs_stats_vector(st, "home", "bad/name", "", ""));
	*cxs_stats_counter(st, "home", "c", "", "") = 1;
	ck_assert_ptr_null(cxs_stats_vector(st, "home", "c", "", ""));

	for (uint64_t i = 0; i < 1000; i++) /* several reallocations */
		ck_assert_int_eq(cxs_vec_push(v, i * i), 0);
	ck_assert_int_eq(cxs_vec_append(v, more, 3), 0);
	ck_assert_int_eq(cxs_vec_append(v, NULL, 0), 0);
	ck_assert_uint_eq(v->len, 1003);
	for (uint64_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(v->values[i], i * i);
	ck_assert_uint_eq(v->values[1002], 9);
	/* set past the end zero-fills the gap. */
	ck_assert_int_eq(cxs_vec_set(v, 1010, 5), 0);
	ck_assert_uint_eq(v->len, 1011);
	for (uint64_t i = 1003; i < 1010; i++)
		ck_assert_uint_eq(v->values[i], 0);
	ck_assert_uint_eq(v->values[1010], 5);
	ck_assert_int_eq(cxs_vec_set(v, 0, 42), 0);
	ck_assert_uint_eq(v->values[0], 42);
	ck_assert_uint_eq(v->len, 1011);
	ck_assert_int_eq(cxs_stats_get(st, 0, &view), 0);
	ck_assert_int_eq(view.kind, CXS_STAT_VECTOR);
	ck_assert_uint_eq(view.value, 1011);
	ck_assert_ptr_eq(view.vec, v);
	ck_assert_ptr_null(view.hist);
	cxs_vec_clear(v);
	ck_assert_uint_eq(v->len, 0);
	/* Impossible sizes fail without touching the vector. */
	ck_assert_int_eq(cxs_vec_set(v, UINT64_MAX, 1), -1);
	/* volatile: seen through LTO at -O3, the constant made GCC warn of the memcpy it never reaches. */
	volatile uint64_t huge = UINT64_MAX / 4;
	ck_assert_int_eq(cxs_vec_append(v, more, huge), -1);
	ck_assert_uint_eq(v->len, 0);
	cxs_stats_free(st);
}
END_TEST

/* A vector is in the digest from its registration on, with its length and values. */
START_TEST(test_vector_digest)
{
	struct cxs_stats *a = cxs_stats_new(), *b = cxs_stats_new();

	*cxs_stats_counter(a, "x", "c", "", "") = 3;
	*cxs_stats_counter(b, "x", "c", "", "") = 3;
	ck_assert_uint_eq(cxs_stats_digest(a), cxs_stats_digest(b));
	struct cxs_vec *v = cxs_stats_vector(a, "x", "v", "", "");
	uint64_t d0 = cxs_stats_digest(a);
	ck_assert_uint_ne(d0, cxs_stats_digest(b)); /* registered, even empty */
	ck_assert_int_eq(cxs_vec_push(v, 0), 0);
	uint64_t d1 = cxs_stats_digest(a);
	ck_assert_uint_ne(d1, d0); /* a zero value still counts */
	ck_assert_int_eq(cxs_vec_set(v, 0, 1), 0);
	ck_assert_uint_ne(cxs_stats_digest(a), d1);
	ck_assert_int_eq(cxs_vec_set(v, 0, 0), 0);
	ck_assert_uint_eq(cxs_stats_digest(a), d1);
	cxs_stats_free(a);
	cxs_stats_free(b);
}
END_TEST

/* ---- instances --------------------------------------------------------- */

START_TEST(test_instances)
{
	struct cxs_stats *st = cxs_stats_new();
	const char *g;
	uint32_t i;

	ck_assert_int_eq(cxs_stats_instance(st, "core3", "core", 3), 0);
	ck_assert_int_eq(cxs_stats_instance(st, "core3", "core", 3), 0); /* again: no-op */
	ck_assert_int_eq(cxs_stats_instance(st, "core12", "core", 12), 0);
	ck_assert_int_eq(cxs_stats_instance(st, "port0", "port", 0), 0);
	ck_assert_int_eq(cxs_stats_instance(st, "x4294967295", "x", UINT32_MAX), 0);
	ck_assert_int_eq(cxs_stats_instance_of(st, "core3", &g, &i), 1);
	ck_assert_str_eq(g, "core");
	ck_assert_uint_eq(i, 3);
	ck_assert_int_eq(cxs_stats_instance_of(st, "core12", &g, &i), 1);
	ck_assert_str_eq(g, "core");
	ck_assert_uint_eq(i, 12);
	ck_assert_int_eq(cxs_stats_instance_of(st, "l1", &g, &i), 0);
	ck_assert_str_eq(g, "l1");
	ck_assert_uint_eq(i, 0);

	/* The component must be the group followed by the index. */
	ck_assert_int_eq(cxs_stats_instance(st, "core4", "core", 5), -1);
	ck_assert_int_eq(cxs_stats_instance(st, "core05", "core", 5), -1);
	ck_assert_int_eq(cxs_stats_instance(st, "core5", "cor", 5), -1);
	ck_assert_int_eq(cxs_stats_instance(st, "core", "core", 0), -1);
	ck_assert_int_eq(cxs_stats_instance(st, "a/b1", "a/b", 1), -1);
	ck_assert_int_eq(cxs_stats_instance(st, "time_ps1", "time_ps", 1), -1);
	ck_assert_int_eq(cxs_stats_instance(st, NULL, "core", 1), -1);
	/* Declared once: "core12" is not also instance 2 of "core1". */
	ck_assert_int_eq(cxs_stats_instance(st, "core12", "core1", 2), -1);
	ck_assert_int_eq(cxs_stats_instance_of(st, "core12", &g, &i), 1);
	ck_assert_str_eq(g, "core");
	cxs_stats_free(st);
}
END_TEST

/* Declaring instances changes neither the statistics nor the digest. */
START_TEST(test_instances_keep_digest)
{
	struct cxs_stats *a = cxs_stats_new(), *b = cxs_stats_new();

	for (int k = 0; k < 2; k++) {
		struct cxs_stats *st = k ? b : a;
		if (k)
			ck_assert_int_eq(cxs_stats_instance(st, "core0", "core", 0), 0);
		*cxs_stats_counter(st, "core0", "cycles", "cycles", "") = 11;
		*cxs_stats_counter(st, "core1", "cycles", "cycles", "") = 12;
		if (k)
			ck_assert_int_eq(cxs_stats_instance(st, "core1", "core", 1), 0);
	}
	ck_assert_uint_eq(cxs_stats_count(a), cxs_stats_count(b));
	ck_assert_uint_eq(cxs_stats_digest(a), cxs_stats_digest(b));
	cxs_stats_free(a);
	cxs_stats_free(b);
}
END_TEST

/* ---- time series ------------------------------------------------------- */

START_TEST(test_patterns_check)
{
	char err[200];
	const char *good[] = { "a/b", "*/*", "core*/cycles port/tx_bytes_repl", " a/b,c/d\t",
			       "*a*b*/x*", "AZaz09_.-/n" };
	const char *bad[] = { "", "   ", "a", "a/", "/b", "a/b/c", "a b/c", "a/b c", "caf\xc3\xa9/x",
			      "a?/b" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(cxs_stats_patterns_check(good[i], err, sizeof(err)) == 0, "%s: %s",
			      good[i], err);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(cxs_stats_patterns_check(bad[i], err, sizeof(err)) == -1, "\"%s\"",
			      bad[i]);
		ck_assert_msg(err[0] != '\0', "no message for \"%s\"", bad[i]);
	}
	ck_assert_int_eq(cxs_stats_patterns_check(NULL, err, sizeof(err)), -1);
	ck_assert_int_eq(cxs_stats_patterns_check("a", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "\"a\""));
}
END_TEST

/* Which counters a pattern list selects: globs on both sides, groups of instances. */
START_TEST(test_sample_select)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_series_view s;
	struct cxs_stat_view v;
	const char *want[] = { "core0/cycles", "core1/cycles", "port/tx_bytes_repl", "l1x/hits" };
	char got[8][140];
	size_t n = 0;

	ck_assert_int_eq(cxs_stats_instance(st, "core0", "core", 0), 0);
	ck_assert_int_eq(cxs_stats_instance(st, "core1", "core", 1), 0);
	cxs_stats_counter(st, "core0", "cycles", "", "");
	cxs_stats_counter(st, "core0", "instructions", "", "");
	cxs_stats_counter(st, "core1", "cycles", "", "");
	cxs_stats_counter(st, "port", "tx_bytes_repl", "", "");
	cxs_stats_counter(st, "port", "tx_bytes_mem", "", "");
	cxs_stats_hist(st, "port", "tx_bytes_lat", "", "", 4); /* not a counter */
	cxs_stats_vector(st, "port", "tx_bytes_v", "", "");    /* not a counter */
	cxs_stats_counter(st, "l1x", "hits", "", "");
	cxs_stats_counter(st, "l2", "hits", "", "");
	cxs_stats_counter(st, "coreX", "cycles", "", ""); /* plain component: "core" does not match */

	ck_assert_int_eq(cxs_stats_sample_select(st, "not-valid"), -1);
	ck_assert_int_eq(cxs_stats_sample_select(st, "core/cycles port/tx_bytes_r* l*x/h*s"), 0);
	ck_assert_int_eq(cxs_stats_sample(st), 0);
	for (size_t i = 0; i < cxs_stats_nseries(st); i++) {
		ck_assert_int_eq(cxs_stats_series(st, i, &s), 0);
		ck_assert_int_eq(cxs_stats_get(st, s.stat, &v), 0);
		ck_assert_int_eq(v.kind, CXS_STAT_COUNTER);
		snprintf(got[n++], sizeof(got[0]), "%s/%s", v.component, v.name);
	}
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(got[i], want[i]);
	ck_assert_int_eq(cxs_stats_series(st, n, &s), -1);
	cxs_stats_free(st);
}
END_TEST

/* Samples record the values at each call; a counter registered late reads 0 before. */
START_TEST(test_sample_values)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_series_view s;
	uint64_t *a = cxs_stats_counter(st, "x", "a", "", "");
	uint64_t *b;

	ck_assert_uint_eq(cxs_stats_nsamples(st), 0);
	ck_assert_int_eq(cxs_stats_sample_select(st, "x/*"), 0);
	for (uint64_t k = 0; k < 200; k++) { /* past the first capacities */
		*a = k * 10;
		if (k == 150) {
			b = cxs_stats_counter(st, "x", "b", "", "");
			*b = 7;
		}
		ck_assert_int_eq(cxs_stats_sample(st), 0);
	}
	ck_assert_uint_eq(cxs_stats_nsamples(st), 200);
	ck_assert_uint_eq(cxs_stats_nseries(st), 2);
	ck_assert_int_eq(cxs_stats_series(st, 0, &s), 0);
	ck_assert_uint_eq(s.stat, 0);
	for (uint64_t k = 0; k < 200; k++)
		ck_assert_uint_eq(s.values[k], k * 10);
	ck_assert_int_eq(cxs_stats_series(st, 1, &s), 0);
	ck_assert_uint_eq(s.stat, 1);
	for (uint64_t k = 0; k < 200; k++)
		ck_assert_uint_eq(s.values[k], k < 150 ? 0 : 7);
	/* Sampling is not part of the digest. */
	struct cxs_stats *plain = cxs_stats_new();
	*cxs_stats_counter(plain, "x", "a", "", "") = *a;
	*cxs_stats_counter(plain, "x", "b", "", "") = 7;
	ck_assert_uint_eq(cxs_stats_digest(st), cxs_stats_digest(plain));
	/* Without a selection a sample records nothing but the count. */
	ck_assert_int_eq(cxs_stats_sample(plain), 0);
	ck_assert_uint_eq(cxs_stats_nseries(plain), 0);
	cxs_stats_free(plain);
	cxs_stats_free(st);
}
END_TEST

START_TEST(test_pack_series_values)
{
	struct cxs_stats *st = sample_registry();
	struct cxs_stats *back;
	struct cxs_series_view s;
	struct cxs_stat_view v;
	void *buf;
	size_t len;

	ck_assert_int_eq(cxs_stats_pack(st, &buf, &len), 0);
	back = unpack_exact(buf, len);
	ck_assert_ptr_nonnull(back);
	ck_assert_uint_eq(cxs_stats_nsamples(back), 3);
	ck_assert_uint_eq(cxs_stats_nseries(back), 2); /* l1/hits, then core3/cycles */
	ck_assert_int_eq(cxs_stats_series(back, 1, &s), 0);
	ck_assert_int_eq(cxs_stats_get(back, s.stat, &v), 0);
	ck_assert_str_eq(v.component, "core3");
	ck_assert_uint_eq(s.values[0], 0);
	ck_assert_uint_eq(s.values[1], 100);
	ck_assert_uint_eq(s.values[2], 200);
	ck_assert_int_eq(cxs_stats_series(back, 0, &s), 0);
	ck_assert_uint_eq(s.values[2], 12345);
	free(buf);
	cxs_stats_free(back);
	cxs_stats_free(st);
}
END_TEST

/* Damage in the instance and series sections behind a valid checksum. */
START_TEST(test_unpack_rejects_forged_sections)
{
	struct cxs_stats *st = cxs_stats_new();
	unsigned char *buf, *bad;
	size_t len;

	/*
	 * Records: a/x counter (8 + 2 + 8 = 18 bytes at 48), a/h histogram with 1
	 * bucket (8 + 2 + 36 + 8 = 54 at 66), b0/y counter (8 + 3 + 8 = 19 at
	 * 120); instance b0 = b, 0 (8 + 3 = 11 at 139); series of stat 0 and
	 * stat 2 with 1 sample (12 each at 150).
	 */
	cxs_stats_counter(st, "a", "x", "", "");
	cxs_stats_hist(st, "a", "h", "", "", 1);
	cxs_stats_counter(st, "b0", "y", "", "");
	ck_assert_int_eq(cxs_stats_instance(st, "b0", "b", 0), 0);
	ck_assert_int_eq(cxs_stats_sample_select(st, "*/x b/y"), 0);
	ck_assert_int_eq(cxs_stats_sample(st), 0);
	ck_assert_int_eq(cxs_stats_pack(st, (void **)&buf, &len), 0);
	ck_assert_uint_eq(len, 174);
	ck_assert_uint_eq(buf[139 + 8], 'b');
	ck_assert_uint_eq(buf[150], 0);
	ck_assert_uint_eq(buf[162], 2);
	const struct {
		size_t pos;
		unsigned char val;
		const char *what;
	} c[] = {
		{ 139 + 4, 1, "instance index not the component's suffix" },
		{ 139 + 10, 'c', "instance group not the component's prefix" },
		{ 139 + 2, 1, "instance reserved field set" },
		{ 150, 1, "series of a histogram" },
		{ 150, 3, "series of a statistic that does not exist" },
		{ 162, 0, "series out of order (twice the same)" },
		{ 24, 2, "more samples than the body holds" },
	};
	bad = malloc(len);
	ck_assert_ptr_nonnull(bad);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memcpy(bad, buf, len);
		bad[c[i].pos] = c[i].val;
		forge_header(bad, len);
		ck_assert_msg(unpack_exact(bad, len) == NULL, "%s accepted", c[i].what);
	}
	memcpy(bad, buf, len);
	forge_header(bad, len);
	struct cxs_stats *ok = unpack_exact(bad, len);
	ck_assert_ptr_nonnull(ok);
	cxs_stats_free(ok);
	free(bad);
	free(buf);
	cxs_stats_free(st);
}
END_TEST

/*
 * The digest of this registry as cxlsim computed it before vectors,
 * instances and series existed (commit 9855e0e): runs that use none of them
 * keep their checksums bit for bit.
 */
START_TEST(test_digest_pinned)
{
	struct cxs_stats *st = cxs_stats_new();

	ck_assert_int_eq(cxs_stats_instance(st, "core3", "core", 3), 0); /* changes nothing */
	*cxs_stats_counter(st, "engine", "events", "events", "") = 490493;
	*cxs_stats_counter(st, "core3", "cycles", "cycles", "") = 123456789;
	struct cxs_hist *h = cxs_stats_hist(st, "cn", "load_latency_ps", "ps", "", 40);
	cxs_hist_add(h, 0);
	cxs_hist_add(h, 77);
	cxs_hist_add(h, 1ull << 50);
	*cxs_stats_counter(st, "port", "tx_bytes", "bytes", "") = 0xffffffffffffull;
	ck_assert_int_eq(cxs_stats_sample_select(st, "*/*"), 0); /* neither does sampling */
	ck_assert_int_eq(cxs_stats_sample(st), 0);
	ck_assert_uint_eq(cxs_stats_digest(st), 0x35d8aec941124445ull);
	cxs_stats_free(st);
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
	tcase_add_test(reg, test_reserved_names);
	suite_add_tcase(s, reg);

	TCase *vec = tcase_create("vector");
	tcase_add_test(vec, test_vector_grow);
	tcase_add_test(vec, test_vector_digest);
	suite_add_tcase(s, vec);

	TCase *inst = tcase_create("instance");
	tcase_add_test(inst, test_instances);
	tcase_add_test(inst, test_instances_keep_digest);
	suite_add_tcase(s, inst);

	TCase *series = tcase_create("series");
	tcase_add_test(series, test_patterns_check);
	tcase_add_test(series, test_sample_select);
	tcase_add_test(series, test_sample_values);
	suite_add_tcase(s, series);

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
	tcase_add_test(blob, test_pack_series_values);
	tcase_add_test(blob, test_unpack_rejects_forged_sections);
	suite_add_tcase(s, blob);

	tcase_add_test(digest, test_digest);
	tcase_add_test(digest, test_digest_names_and_order);
	tcase_add_test(digest, test_digest_pinned);
	suite_add_tcase(s, digest);
	return s;
}
