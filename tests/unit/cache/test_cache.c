/*
 * Unit tests for the cache array (src/mem/cache.c): geometry validation, the
 * 64 bytes of a line surviving install and find, exact LRU checked against an
 * independent reference model, the pinned and invalid-way parts of the victim
 * rule, independence of sets, and determinism.
 *
 * The reference model is deliberately a different formulation from the code
 * under test: a recency list (move to back on use, evict the front) instead of
 * per-way stamps. The two agree on every hit, miss and evicted line address
 * only if the stamps implement exact LRU. Accesses follow what a protocol
 * does: find; on a hit touch; on a miss take the victim and install over it.
 *
 * Way indices are read from pointer offsets into c->lines, which the header
 * documents as nsets * ways records, set-major.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cxlsim/cache.h"

/* Also in tests/unit/unit_suites.h; repeated so the file builds without tests/unit on the path. */
Suite *cache_suite(void);

/*
 * Check records a mark point on every passing ck_assert (a message to the
 * parent process), which turns the loops of 10^5 accesses below into seconds
 * under ASan; hot loops test with a plain if and fail through ck_abort_msg,
 * which still reports the caller's file and line.
 */
#define REQUIRE(expr, ...)                      \
	do {                                    \
		if (!(expr))                    \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

#define KIB 1024ull
#define MIB (1024ull * 1024ull)

/* ---- helpers ------------------------------------------------------------ */

static void init_ok(struct cxs_cache *c, uint64_t size_bytes, uint32_t ways)
{
	struct cxs_cache_geom g = { .size_bytes = size_bytes, .ways = ways, .latency_cycles = 5 };
	char err[256] = "";

	ck_assert_msg(cxs_cache_init(c, &g, err, sizeof err) == 0, "%llu B, %u ways rejected: %s",
		      (unsigned long long)size_bytes, ways, err);
}

static uint64_t index_of(const struct cxs_cache *c, const struct cxs_cache_line *l)
{
	REQUIRE(l != NULL && l >= c->lines && l < c->lines + c->nsets * c->geom.ways,
		"line pointer %p outside the cache", (const void *)l);
	return (uint64_t)(l - c->lines);
}

static uint32_t way_of(const struct cxs_cache *c, const struct cxs_cache_line *l)
{
	return (uint32_t)(index_of(c, l) % c->geom.ways);
}

static uint64_t set_of(const struct cxs_cache *c, const struct cxs_cache_line *l)
{
	return index_of(c, l) / c->geom.ways;
}

/* The k-th line address that maps to `set`. */
static uint64_t addr_in_set(const struct cxs_cache *c, uint64_t set, uint64_t k)
{
	return set + k * c->nsets;
}

/* Bytes that depend on the line address, so a line holding another's data shows. */
static void pattern(uint8_t *buf, uint64_t addr)
{
	for (int i = 0; i < CXS_LINE_BYTES; i++)
		buf[i] = (uint8_t)(addr * 131u + (uint64_t)i * 7u + 1u);
}

static void expect_pattern(const struct cxs_cache_line *l, uint64_t addr)
{
	uint8_t want[CXS_LINE_BYTES];

	pattern(want, addr);
	REQUIRE(memcmp(l->data, want, CXS_LINE_BYTES) == 0, "line %llu holds wrong bytes",
		(unsigned long long)addr);
}

/* splitmix64: a fixed, seedable stream so that every run sees the same sequences. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct outcome {
	bool hit;
	bool evicted;      /* a valid line was replaced */
	uint64_t victim;   /* its line address, if evicted */
	struct cxs_cache_line *line;
};

/* One access as a protocol performs it; installs the address's pattern on a miss. */
static struct outcome cache_access(struct cxs_cache *c, uint64_t addr)
{
	struct outcome o = { 0 };
	uint8_t buf[CXS_LINE_BYTES];

	o.line = cxs_cache_find(c, addr);
	if (o.line != NULL) {
		o.hit = true;
		cxs_cache_touch(c, o.line);
		return o;
	}
	o.line = cxs_cache_victim(c, addr);
	REQUIRE(o.line != NULL, "no victim for line %llu", (unsigned long long)addr);
	REQUIRE(set_of(c, o.line) == cxs_cache_set(c, addr), "victim for line %llu in set %llu",
		(unsigned long long)addr, (unsigned long long)set_of(c, o.line));
	if (o.line->valid) {
		o.evicted = true;
		o.victim = o.line->tag;
	}
	pattern(buf, addr);
	REQUIRE(cxs_cache_install(c, o.line, addr, buf) == o.line, "install returned another way");
	return o;
}

/* Reference LRU of one set: tags[0] least, tags[n-1] most recently used. */
struct ref_lru {
	uint64_t tags[64];
	uint32_t n, ways;
};

static struct outcome ref_access(struct ref_lru *r, uint64_t addr)
{
	struct outcome o = { 0 };

	for (uint32_t i = 0; i < r->n; i++) {
		if (r->tags[i] == addr) {
			memmove(&r->tags[i], &r->tags[i + 1], (r->n - i - 1) * sizeof r->tags[0]);
			r->tags[r->n - 1] = addr;
			o.hit = true;
			return o;
		}
	}
	if (r->n == r->ways) {
		o.evicted = true;
		o.victim = r->tags[0];
		memmove(&r->tags[0], &r->tags[1], (r->n - 1) * sizeof r->tags[0]);
		r->n--;
	}
	r->tags[r->n++] = addr;
	return o;
}

/* ---- geometry ----------------------------------------------------------- */

START_TEST(test_geometry_diktamo)
{
	/* DIKTAMO Table II: L1, L2, L3 of a CN. */
	static const struct {
		uint64_t size;
		uint32_t ways;
		uint64_t nsets;
	} cases[] = {
		{ 48 * KIB, 12, 64 },
		{ 512 * KIB, 8, 1024 },
		{ 8 * MIB, 16, 8192 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cxs_cache c;
		uint64_t nlines;

		init_ok(&c, cases[i].size, cases[i].ways);
		ck_assert_uint_eq(c.nsets, cases[i].nsets);
		ck_assert_uint_eq(c.geom.size_bytes, cases[i].size);
		ck_assert_uint_eq(c.geom.ways, cases[i].ways);
		ck_assert_uint_eq(c.geom.latency_cycles, 5);
		ck_assert_uint_eq(c.clock, 0);
		ck_assert_uint_eq(c.hits + c.misses + c.evictions + c.writebacks, 0);
		nlines = c.nsets * c.geom.ways;
		for (uint64_t l = 0; l < nlines; l++)
			REQUIRE(!c.lines[l].valid, "line record %llu valid after init",
				(unsigned long long)l);
		/* Fill the last set, so that ASan sees a short allocation. */
		for (uint32_t k = 0; k < c.geom.ways; k++)
			cache_access(&c, addr_in_set(&c, c.nsets - 1, k));
		ck_assert(c.lines[nlines - 1].valid);
		ck_assert_uint_eq(c.lines[nlines - 1].tag, addr_in_set(&c, c.nsets - 1, c.geom.ways - 1));
		cxs_cache_destroy(&c);
		ck_assert_ptr_null(c.lines);
	}
}
END_TEST

START_TEST(test_geometry_edges_accepted)
{
	struct cxs_cache c;

	static const struct cxs_cache_geom ok[] = {{64, 1, 1}, {64 * 64, 64, 1}, {3 * 12 * 64, 12, 1}};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		ck_assert_int_eq(cxs_cache_check(&ok[i], NULL, 0), 0);
	init_ok(&c, 64, 1); /* one line */
	ck_assert_uint_eq(c.nsets, 1);
	cxs_cache_destroy(&c);
	init_ok(&c, 64 * 64, 64); /* fully associative at the way limit */
	ck_assert_uint_eq(c.nsets, 1);
	cxs_cache_destroy(&c);
	init_ok(&c, 3 * 12 * 64, 12); /* sets need not be a power of two */
	ck_assert_uint_eq(c.nsets, 3);
	ck_assert_uint_eq(cxs_cache_set(&c, 0), 0);
	ck_assert_uint_eq(cxs_cache_set(&c, 5), 2);
	ck_assert_uint_eq(cxs_cache_set(&c, 3000000001ull), 3000000001ull % 3);
	cxs_cache_destroy(&c);
}
END_TEST

START_TEST(test_geometry_rejected)
{
	static const struct {
		uint64_t size;
		uint32_t ways;
		const char *needle; /* the bad value must appear in the message */
	} cases[] = {
		{ 48 * KIB, 0, "ways = 0" },
		{ 48 * KIB, 65, "ways = 65" },
		{ 48 * KIB, UINT32_MAX, "ways = 4294967295" },
		{ 48 * KIB, 7, "size_bytes = 49152" },      /* 109.7 sets */
		{ 48 * KIB + 64, 12, "size_bytes = 49216" }, /* 64 sets and one line */
		{ 1000, 1, "size_bytes = 1000" },            /* not whole lines */
		{ 384, 12, "size_bytes = 384" },             /* half of one set */
		{ 0, 8, "size_bytes = 0" },                  /* zero sets */
		{ UINT64_MAX - 63, 1, "size_bytes = 18446744073709551552" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cxs_cache_geom g = { .size_bytes = cases[i].size, .ways = cases[i].ways };
		struct cxs_cache c;
		char err[256] = "";

		/* The check alone (for a configuration) rejects it with the same line. */
		char cerr[256] = "";
		ck_assert_msg(cxs_cache_check(&g, cerr, sizeof cerr) == -1, "case %zu passed the check", i);

		memset(&c, 0xa5, sizeof c);
		ck_assert_msg(cxs_cache_init(&c, &g, err, sizeof err) == -1, "case %zu accepted", i);
		ck_assert_str_eq(cerr, err);
		ck_assert_msg(strstr(err, cases[i].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", i,
			      err, cases[i].needle);
		ck_assert_ptr_null(strchr(err, '\n'));
		ck_assert_ptr_null(c.lines);
		ck_assert_uint_eq(c.nsets, 0);
		cxs_cache_destroy(&c); /* harmless after a failure */

		/* No message buffer, or a tiny one, is no excuse to crash or overrun. */
		ck_assert_int_eq(cxs_cache_init(&c, &g, NULL, 0), -1);
		char small[8];
		memset(small, 'x', sizeof small);
		ck_assert_int_eq(cxs_cache_init(&c, &g, small, sizeof small), -1);
		ck_assert_uint_eq(strlen(small), sizeof small - 1);
	}
}
END_TEST

/* ---- contents ----------------------------------------------------------- */

START_TEST(test_install_find_round_trip)
{
	struct cxs_cache c;
	uint8_t buf[CXS_LINE_BYTES];
	struct cxs_cache_line *l[3];

	init_ok(&c, 48 * KIB, 12);
	/* Three neighbours in one set: a write past 64 bytes would corrupt the next record. */
	for (int k = 0; k < 3; k++) {
		uint64_t a = addr_in_set(&c, 17, (uint64_t)k);

		ck_assert_ptr_null(cxs_cache_find(&c, a));
		pattern(buf, a);
		l[k] = cxs_cache_victim(&c, a);
		ck_assert_uint_eq(way_of(&c, l[k]), (uint32_t)k);
		ck_assert_ptr_eq(cxs_cache_install(&c, l[k], a, buf), l[k]);
		memset(buf, 0, sizeof buf); /* the line must hold a copy, not the caller's buffer */
	}
	for (int k = 0; k < 3; k++) {
		uint64_t a = addr_in_set(&c, 17, (uint64_t)k);

		ck_assert_ptr_eq(cxs_cache_find(&c, a), l[k]);
		ck_assert_uint_eq(l[k]->tag, a);
		ck_assert(l[k]->valid);
		ck_assert(!l[k]->dirty && !l[k]->state && !l[k]->pinned && !l[k]->aux);
		expect_pattern(l[k], a);
	}
	/* Same set, another address: not found. */
	ck_assert_ptr_null(cxs_cache_find(&c, addr_in_set(&c, 17, 3)));

	/* Reusing a valid way with NULL data: zero bytes, protocol fields cleared, old tag gone. */
	uint64_t old = l[1]->tag, repl = addr_in_set(&c, 17, 40);
	l[1]->dirty = 1;
	l[1]->state = 3;
	l[1]->pinned = 1;
	l[1]->aux = 0xffffffffu;
	ck_assert_ptr_eq(cxs_cache_install(&c, l[1], repl, NULL), l[1]);
	ck_assert_ptr_null(cxs_cache_find(&c, old));
	ck_assert_ptr_eq(cxs_cache_find(&c, repl), l[1]);
	ck_assert(!l[1]->dirty && !l[1]->state && !l[1]->pinned && !l[1]->aux);
	for (int i = 0; i < CXS_LINE_BYTES; i++)
		ck_assert_uint_eq(l[1]->data[i], 0);
	expect_pattern(l[0], addr_in_set(&c, 17, 0));
	expect_pattern(l[2], addr_in_set(&c, 17, 2));

	/* Re-installing a line from its own bytes keeps them. */
	uint64_t a0 = addr_in_set(&c, 17, 0);
	cxs_cache_install(&c, l[0], a0, l[0]->data);
	expect_pattern(l[0], a0);
	cxs_cache_destroy(&c);
}
END_TEST

/* ---- replacement -------------------------------------------------------- */

START_TEST(test_lru_small_by_hand)
{
	struct cxs_cache c;
	struct outcome o;

	init_ok(&c, 4 * 64, 4); /* one set of four ways; line addresses 10.. */
	for (uint64_t a = 10; a <= 13; a++)
		ck_assert_uint_eq(way_of(&c, cache_access(&c, a).line), a - 10);
	ck_assert(cache_access(&c, 10).hit); /* recency, oldest first: 11 12 13 10 */
	ck_assert_uint_eq(way_of(&c, cxs_cache_victim(&c, 14)), 1);
	o = cache_access(&c, 14);            /* 12 13 10 14 */
	ck_assert(o.evicted && o.victim == 11);
	ck_assert(cache_access(&c, 12).hit); /* 13 10 14 12 */
	o = cache_access(&c, 15);            /* 10 14 12 15 */
	ck_assert(o.evicted && o.victim == 13);
	ck_assert_uint_eq(way_of(&c, o.line), 3);
	ck_assert_uint_eq(way_of(&c, cxs_cache_victim(&c, 16)), 0);

	/* find is not a use: looking at the LRU line does not save it. */
	uint64_t clock = c.clock;
	for (int i = 0; i < 100; i++)
		ck_assert_ptr_nonnull(cxs_cache_find(&c, 10));
	ck_assert_uint_eq(c.clock, clock);
	ck_assert_uint_eq(way_of(&c, cxs_cache_victim(&c, 16)), 0);
	/* touch is: now 14 (way 1) is the LRU line. */
	cxs_cache_touch(&c, cxs_cache_find(&c, 10));
	ck_assert_uint_eq(way_of(&c, cxs_cache_victim(&c, 16)), 1);
	cxs_cache_destroy(&c);
}
END_TEST

/*
 * 10,000 accesses over 3 x ways lines of one set, half of them to a hot subset
 * of ways/2 lines so that hits and misses both occur often; every outcome must
 * match the reference, including which line each miss evicts.
 */
static void lru_against_reference(uint64_t size, uint32_t ways, uint64_t seed)
{
	struct cxs_cache c;
	struct ref_lru r = { .ways = ways };
	uint64_t rng = seed, set, nlines = 3ull * ways, hot = ways / 2 ? ways / 2 : 1;
	uint64_t hits = 0, evictions = 0;

	init_ok(&c, size, ways);
	set = next_rand(&rng) % c.nsets;
	for (int i = 0; i < 10000; i++) {
		uint64_t k = (next_rand(&rng) & 1) ? next_rand(&rng) % hot : next_rand(&rng) % nlines;
		uint64_t a = addr_in_set(&c, set, k);
		struct outcome got = cache_access(&c, a), want = ref_access(&r, a);

		REQUIRE(got.hit == want.hit, "%u ways, seed %llu, access %d (line %llu): %s, want %s",
			ways, (unsigned long long)seed, i, (unsigned long long)a,
			got.hit ? "hit" : "miss", want.hit ? "hit" : "miss");
		REQUIRE(got.evicted == want.evicted && (!want.evicted || got.victim == want.victim),
			"%u ways, seed %llu, access %d: evicted %llu, want %llu", ways,
			(unsigned long long)seed, i, got.evicted ? (unsigned long long)got.victim : ~0ull,
			want.evicted ? (unsigned long long)want.victim : ~0ull);
		REQUIRE(got.line->tag == a, "access %d: line holds %llu", i,
			(unsigned long long)got.line->tag);
		expect_pattern(got.line, a);
		hits += got.hit;
		evictions += got.evicted;
	}
	/* The pattern must exercise both paths, or agreement proves little. */
	ck_assert_uint_gt(hits, 1000);
	ck_assert_uint_gt(evictions, 1000);
	cxs_cache_destroy(&c);
}

START_TEST(test_lru_matches_reference)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		lru_against_reference(48 * KIB, 12, seed);
		lru_against_reference(512 * KIB, 8, seed);
		lru_against_reference(8 * MIB, 16, seed);
		lru_against_reference(64 * 64, 64, seed);
		lru_against_reference(5 * 3 * 64, 3, seed); /* odd ways, odd sets */
		lru_against_reference(4 * 64, 1, seed);     /* direct mapped */
	}
}
END_TEST

START_TEST(test_pinned_never_chosen)
{
	struct cxs_cache c;
	struct ref_lru r = { .ways = 5 }; /* the 8 - 3 unpinned ways */
	struct cxs_cache_line *pinned[3];
	const uint32_t pin_k[3] = { 0, 3, 6 }; /* 0 is the LRU line when pinned */
	uint64_t rng = 42, set = 9;

	init_ok(&c, 512 * KIB, 8);
	for (uint32_t k = 0; k < 8; k++)
		cache_access(&c, addr_in_set(&c, set, k));
	for (int i = 0; i < 3; i++) {
		pinned[i] = cxs_cache_find(&c, addr_in_set(&c, set, pin_k[i]));
		pinned[i]->pinned = 1;
		pinned[i]->state = 7; /* a transient protocol state */
	}
	for (uint32_t k = 0; k < 8; k++)
		if (k != 0 && k != 3 && k != 6)
			ref_access(&r, addr_in_set(&c, set, k));

	/* Pinned lines still get hits (touches); the rest behave as a 5-way LRU. */
	for (int i = 0; i < 5000; i++) {
		uint64_t k = 100 + next_rand(&rng) % 16;
		if (next_rand(&rng) % 4 == 0)
			k = pin_k[next_rand(&rng) % 3];
		uint64_t a = addr_in_set(&c, set, k);
		struct outcome got = cache_access(&c, a);

		if (k < 100) {
			REQUIRE(got.hit, "access %d: pinned line %llu missed", i, (unsigned long long)k);
			continue;
		}
		struct outcome want = ref_access(&r, a);
		REQUIRE(got.hit == want.hit && got.evicted == want.evicted &&
				(!want.evicted || got.victim == want.victim),
			"access %d: pinned lines changed the LRU order of the others", i);
		for (int p = 0; p < 3; p++) {
			REQUIRE(got.line != pinned[p], "access %d evicted a pinned line", i);
			REQUIRE(pinned[p]->valid && pinned[p]->pinned && pinned[p]->state == 7,
				"access %d changed pinned line %d", i, p);
			REQUIRE(cxs_cache_find(&c, addr_in_set(&c, set, pin_k[p])) == pinned[p],
				"access %d: pinned line %d not found", i, p);
			expect_pattern(pinned[p], addr_in_set(&c, set, pin_k[p]));
		}
	}
	cxs_cache_destroy(&c);
}
END_TEST

START_TEST(test_all_pinned_no_victim)
{
	struct cxs_cache c;
	struct cxs_cache_line *l[4];

	init_ok(&c, 2 * 4 * 64, 4); /* two sets of four ways */
	for (uint32_t k = 0; k < 4; k++) {
		l[k] = cache_access(&c, addr_in_set(&c, 0, k)).line;
		l[k]->pinned = 1;
	}
	for (uint32_t k = 4; k < 20; k++)
		ck_assert_ptr_null(cxs_cache_victim(&c, addr_in_set(&c, 0, k)));
	/* The other set is unaffected. */
	ck_assert_uint_eq(set_of(&c, cxs_cache_victim(&c, addr_in_set(&c, 1, 0))), 1);

	/* One way unpinned, the most recently used one: it is the only candidate. */
	l[3]->pinned = 0;
	ck_assert_ptr_eq(cxs_cache_victim(&c, addr_in_set(&c, 0, 9)), l[3]);
	l[3]->pinned = 1;
	ck_assert_ptr_null(cxs_cache_victim(&c, addr_in_set(&c, 0, 9)));

	/* Invalidating a pinned way frees it. */
	cxs_cache_invalidate(&c, l[2]);
	ck_assert(!l[2]->pinned);
	ck_assert_ptr_eq(cxs_cache_victim(&c, addr_in_set(&c, 0, 9)), l[2]);
	cxs_cache_destroy(&c);
}
END_TEST

START_TEST(test_invalidate_frees_way)
{
	struct cxs_cache c;
	struct cxs_cache_line *l[8];
	uint64_t set = 5;

	init_ok(&c, 512 * KIB, 8);
	/* While the set fills, the lowest invalid way is used. */
	for (uint32_t k = 0; k < 8; k++) {
		l[k] = cache_access(&c, addr_in_set(&c, set, k)).line;
		ck_assert_uint_eq(way_of(&c, l[k]), k);
	}
	/* Make way 5 the LRU line. */
	for (uint32_t k = 0; k < 8; k++)
		if (k != 5)
			cxs_cache_touch(&c, l[k]);
	ck_assert_ptr_eq(cxs_cache_victim(&c, addr_in_set(&c, set, 50)), l[5]);

	/* An invalid way beats the LRU way, and invalidation clears the protocol fields. */
	l[6]->dirty = 1;
	l[6]->state = 2;
	l[6]->aux = 0x5;
	cxs_cache_invalidate(&c, l[6]);
	ck_assert(!l[6]->valid && !l[6]->dirty && !l[6]->state && !l[6]->aux && !l[6]->pinned);
	ck_assert_ptr_null(cxs_cache_find(&c, addr_in_set(&c, set, 6)));
	ck_assert_ptr_eq(cxs_cache_victim(&c, addr_in_set(&c, set, 50)), l[6]);

	/* Of two invalid ways, the lower index first, then the other, then LRU again. */
	cxs_cache_invalidate(&c, l[2]);
	struct outcome o = cache_access(&c, addr_in_set(&c, set, 50));
	ck_assert(!o.hit && !o.evicted);
	ck_assert_ptr_eq(o.line, l[2]);
	o = cache_access(&c, addr_in_set(&c, set, 51));
	ck_assert(!o.hit && !o.evicted);
	ck_assert_ptr_eq(o.line, l[6]);
	o = cache_access(&c, addr_in_set(&c, set, 52));
	ck_assert(o.evicted);
	ck_assert_ptr_eq(o.line, l[5]);
	ck_assert_uint_eq(o.victim, addr_in_set(&c, set, 5));
	cxs_cache_destroy(&c);
}
END_TEST

START_TEST(test_sets_independent)
{
	struct cxs_cache c;
	uint64_t rng = 7;

	init_ok(&c, 3 * 4 * 64, 4); /* three sets of four ways */
	/* Sets 1 and 2 filled first: their stamps are older than anything set 0 will see. */
	for (uint64_t s = 1; s <= 2; s++)
		for (uint64_t k = 0; k < 4; k++)
			cache_access(&c, addr_in_set(&c, s, k));
	for (int i = 0; i < 2000; i++) {
		uint64_t a = addr_in_set(&c, 0, next_rand(&rng) % 12);
		struct outcome o = cache_access(&c, a);

		REQUIRE(set_of(&c, o.line) == 0, "access %d used set %llu", i,
			(unsigned long long)set_of(&c, o.line));
		REQUIRE(!o.evicted || cxs_cache_set(&c, o.victim) == 0, "access %d evicted line %llu", i,
			(unsigned long long)o.victim);
	}
	for (uint64_t s = 1; s <= 2; s++) {
		for (uint64_t k = 0; k < 4; k++) {
			uint64_t a = addr_in_set(&c, s, k);
			struct cxs_cache_line *l = cxs_cache_find(&c, a);

			ck_assert_msg(l != NULL, "line %llu of set %llu lost", (unsigned long long)a,
				      (unsigned long long)s);
			ck_assert_uint_eq(set_of(&c, l), s);
			expect_pattern(l, a);
		}
	}
	/* An invalid way in set 1 is no victim for set 0. */
	cxs_cache_invalidate(&c, cxs_cache_find(&c, addr_in_set(&c, 1, 2)));
	ck_assert_uint_eq(set_of(&c, cxs_cache_victim(&c, addr_in_set(&c, 0, 99))), 0);
	ck_assert(cxs_cache_victim(&c, addr_in_set(&c, 0, 99))->valid);
	cxs_cache_destroy(&c);
}
END_TEST

/* ---- determinism -------------------------------------------------------- */

#define DET_OPS 20000

/*
 * A mixed workload over a few sets of an L1: accesses, invalidations, pins and
 * unpins. Records, per operation, the record index used (or -1), so that two
 * runs can be compared line for line.
 */
static void det_run(int64_t *trace, uint64_t seed)
{
	struct cxs_cache c;
	uint64_t rng = seed;

	init_ok(&c, 48 * KIB, 12);
	for (int i = 0; i < DET_OPS; i++) {
		uint64_t a = addr_in_set(&c, next_rand(&rng) % 4, next_rand(&rng) % 30);
		uint64_t op = next_rand(&rng) % 16;
		struct cxs_cache_line *l = cxs_cache_find(&c, a);

		trace[i] = -1;
		if (op == 0 && l != NULL) {
			cxs_cache_invalidate(&c, l);
		} else if (op == 1 && l != NULL) {
			l->pinned = !l->pinned;
		} else if (l != NULL) {
			cxs_cache_touch(&c, l);
		} else if ((l = cxs_cache_victim(&c, a)) != NULL) {
			trace[i] = (int64_t)index_of(&c, l);
			cxs_cache_install(&c, l, a, NULL);
		}
	}
	cxs_cache_destroy(&c);
}

START_TEST(test_determinism)
{
	static int64_t t1[DET_OPS], t2[DET_OPS], other[DET_OPS];
	int installs = 0;

	det_run(t1, 99);
	det_run(other, 100); /* a different history in between must not matter */
	det_run(t2, 99);
	for (int i = 0; i < DET_OPS; i++) {
		REQUIRE(t1[i] == t2[i], "operation %d: record %lld, then %lld", i, (long long)t1[i],
			(long long)t2[i]);
		installs += t1[i] >= 0;
	}
	/* The workload must actually choose victims, in more than one way of more than one set. */
	ck_assert_int_gt(installs, 1000);
	ck_assert(memcmp(t1, other, sizeof t1) != 0);
}
END_TEST

Suite *cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *geom = tcase_create("geometry");
	TCase *data = tcase_create("contents");
	TCase *repl = tcase_create("replacement");

	tcase_add_test(geom, test_geometry_diktamo);
	tcase_add_test(geom, test_geometry_edges_accepted);
	tcase_add_test(geom, test_geometry_rejected);
	tcase_add_test(data, test_install_find_round_trip);
	tcase_add_test(repl, test_lru_small_by_hand);
	tcase_add_test(repl, test_lru_matches_reference);
	tcase_add_test(repl, test_pinned_never_chosen);
	tcase_add_test(repl, test_all_pinned_no_victim);
	tcase_add_test(repl, test_invalidate_frees_way);
	tcase_add_test(repl, test_sets_independent);
	tcase_add_test(repl, test_determinism);
	suite_add_tcase(s, geom);
	suite_add_tcase(s, data);
	suite_add_tcase(s, repl);
	return s;
}
