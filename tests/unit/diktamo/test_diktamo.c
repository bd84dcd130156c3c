/*
 * Unit tests for DIKTAMO's data structures (src/diktamo): replica groups and
 * savers (distinct members, balance, dead CNs), the SRAM Log Buffer
 * (allocation, VAL, back-pressure and resumption, drain order, non-VALed
 * entries never reaching the DRAM log, a full DRAM log), 7-bit timestamps
 * (wraparound, reordered VALs of one word, a CN's TS/stamp disagreement, two
 * CNs' VALs overtaking each other), the log format and its compression
 * (round trips, every truncation and corruption refused), dumps (split by
 * destination and keep()), and recovery's latest-version search in a
 * Logging Unit and in an MN's store against a brute-force reference, also
 * after a failed writer's REPLs were forgotten.
 *
 * Expected orders and values are written out by hand where a scenario is
 * small; the randomised scenarios use a fixed xorshift seed and compare with
 * a reference computed directly from what the unit holds. Truncated and
 * corrupt inputs are copied into buffers of exactly their length, so ASan
 * sees any over-read.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cxlsim/diktamo.h"
#include "cxlsim/stats.h"
#include "unit_suites.h"

#define CYCLE 2000 /* ps, the default unit clock */
#define SRAM 4000  /* ps, the default SRAM access */
#define LINE(a) ((a) >> 6)

static char err[512];

static uint64_t rng_state;
static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

static uint64_t stamp(uint32_t epoch, uint32_t count)
{
	return ((uint64_t)epoch << 32) | count;
}

/* What cxs_lu_foreach shows, in its order. */
struct seen {
	struct cxs_dk_entry *e;
	int *where;
	size_t n, cap;
};

static void seen_fn(void *ctx, const struct cxs_dk_entry *e, int where)
{
	struct seen *s = ctx;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->e = realloc(s->e, s->cap * sizeof *s->e);
		s->where = realloc(s->where, s->cap * sizeof *s->where);
		ck_assert(s->e != NULL && s->where != NULL);
	}
	s->e[s->n] = *e;
	s->where[s->n++] = where;
}

static struct seen snapshot(const struct cxs_lu *lu)
{
	struct seen s = {0};
	cxs_lu_foreach(lu, seen_fn, &s);
	return s;
}

static void seen_free(struct seen *s)
{
	free(s->e);
	free(s->where);
}

static size_t count_where(const struct seen *s, int where)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		k += s->where[i] == where;
	return k;
}

/* Runs of consecutive DRAM log entries (where == 1) of one line: a dump asks keep once a run. */
static size_t line_runs(const struct seen *s)
{
	size_t runs = 0;
	uint64_t last = UINT64_MAX;
	for (size_t i = 0; i < s->n; i++)
		if (s->where[i] == 1 && s->e[i].addr >> CXS_LINE_SHIFT != last) {
			last = s->e[i].addr >> CXS_LINE_SHIFT;
			runs++;
		}
	return runs;
}

/* The i-th DRAM log entry (where == 1) of a snapshot. */
static const struct cxs_dk_entry *dram_at(const struct seen *s, size_t i)
{
	for (size_t k = 0; k < s->n; k++)
		if (s->where[k] == 1 && i-- == 0)
			return &s->e[k];
	ck_abort_msg("DRAM log has no entry %zu", i);
	return NULL;
}

static struct cxs_lu *lu_with(uint32_t sram_entries, uint32_t dram_entries, double wm,
			      struct cxs_stats *st)
{
	struct cxs_lu_params p;
	cxs_lu_default_params(&p);
	if (sram_entries)
		p.sram_bytes = sram_entries * CXS_DK_ENTRY_BYTES;
	if (dram_entries)
		p.dram_bytes = (uint64_t)dram_entries * CXS_DK_ENTRY_BYTES;
	if (wm > 0)
		p.watermark = wm;
	struct cxs_lu *lu = cxs_lu_new(&p, 9, st);
	ck_assert_ptr_nonnull(lu);
	return lu;
}

/* A REPL of one word. */
static cxs_time repl1(struct cxs_lu *lu, cxs_time now, uint32_t req, uint32_t repl, uint64_t addr,
		      uint64_t value)
{
	return cxs_lu_repl(lu, now, req, repl, &addr, &value, 1, false);
}

static void val_ok(struct cxs_lu *lu, uint32_t req, uint32_t repl, uint8_t ts, uint64_t s0)
{
	int rc = cxs_lu_val(lu, 0, req, repl, ts, s0, NULL, NULL, err, sizeof err);
	ck_assert_msg(rc == 0, "VAL refused: %s", err);
}

static uint64_t counter(const struct cxs_stats *st, const char *name)
{
	const uint64_t *v = cxs_stats_find(st, "lu", name);
	ck_assert_msg(v != NULL, "no counter lu/%s", name);
	return *v;
}

/* ---- replica groups ----------------------------------------------------------- */

/*
 * Checks every line's group and returns per-CN loads in load[]. (Hot loops
 * test with if and fail with ck_abort_msg: every passing ck_assert writes to
 * Check's pipe, which over millions of checks takes seconds.)
 */
static void check_groups(uint64_t first, uint64_t stride, uint32_t nlines, const uint32_t *live,
			 uint32_t nlive, uint32_t n_r, uint64_t *load, uint32_t max_node)
{
	memset(load, 0, max_node * sizeof *load);
	for (uint32_t i = 0; i < nlines; i++) {
		uint32_t g[CXS_DK_MAX_REPLICAS];
		uint64_t line = first + i * stride;
		uint32_t want = n_r < nlive ? n_r : nlive;
		if (cxs_dk_replicas(line, live, nlive, n_r, g) != want)
			ck_abort_msg("line %#lx: group size is not %u", (unsigned long)line, want);
		/* Members: live, distinct, consecutive positions of live[] (mod nlive). */
		uint32_t pos0 = nlive;
		for (uint32_t j = 0; j < nlive; j++)
			if (live[j] == g[0])
				pos0 = j;
		if (pos0 == nlive)
			ck_abort_msg("line %#lx: member %u is not live", (unsigned long)line, g[0]);
		for (uint32_t k = 0; k < want; k++) {
			if (g[k] != live[(pos0 + k) % nlive])
				ck_abort_msg("line %#lx: member %u is %u, not the next live CN",
					     (unsigned long)line, k, g[k]);
			for (uint32_t j = 0; j < k; j++)
				if (g[j] == g[k])
					ck_abort_msg("line %#lx: CN %u twice", (unsigned long)line, g[k]);
			load[g[k]]++;
		}
	}
}

static void check_balance(const uint64_t *load, const uint32_t *live, uint32_t nlive,
			  double mean, double tol)
{
	for (uint32_t j = 0; j < nlive; j++) {
		double d = (double)load[live[j]] - mean;
		ck_assert_msg(d < tol * mean && -d < tol * mean, "CN %u keeps %lu lines, mean %.0f",
			      live[j], (unsigned long)load[live[j]], mean);
	}
}

START_TEST(groups_are_distinct_and_balanced)
{
	uint32_t live[16];
	for (uint32_t i = 0; i < 16; i++)
		live[i] = i;
	uint64_t load[16];
	for (uint32_t n_r = 1; n_r <= 4; n_r++) {
		/* Consecutive lines, and lines 4 KiB apart (one per page: a weak hash's worst). */
		check_groups(0, 1, 100000, live, 16, n_r, load, 16);
		check_balance(load, live, 16, 100000.0 * n_r / 16, 0.05);
		check_groups(UINT64_C(1) << 30, 64, 100000, live, 16, n_r, load, 16);
		check_balance(load, live, 16, 100000.0 * n_r / 16, 0.05);
		/* The nlive possible groups (one per start): every CN is in exactly n_r. */
		uint32_t in[16] = {0};
		for (uint32_t s = 0; s < 16; s++) {
			uint8_t seen_start = 0;
			for (uint64_t line = 0; line < 1000 && !seen_start; line++) {
				uint32_t g[CXS_DK_MAX_REPLICAS];
				cxs_dk_replicas(line, live, 16, n_r, g);
				if (g[0] != s)
					continue;
				seen_start = 1;
				for (uint32_t k = 0; k < n_r; k++)
					in[g[k]]++;
			}
			ck_assert_msg(seen_start, "no line of 1000 starts its group at CN %u", s);
		}
		for (uint32_t c = 0; c < 16; c++)
			ck_assert_uint_eq(in[c], n_r);
	}
	/* Pinned: splitmix64's first output for seed 0 is 0xe220a8397b1dcdaf, 15 mod 16. */
	uint32_t g[CXS_DK_MAX_REPLICAS];
	ck_assert_uint_eq(cxs_dk_replicas(0, live, 16, 3, g), 3);
	ck_assert_uint_eq(g[0], 15);
	ck_assert_uint_eq(g[1], 0);
	ck_assert_uint_eq(g[2], 1);
}
END_TEST

START_TEST(groups_with_dead_cns)
{
	/* CNs 3, 7 and 12 have failed. */
	const uint32_t live[13] = {0, 1, 2, 4, 5, 6, 8, 9, 10, 11, 13, 14, 15};
	uint64_t load[16];
	for (uint32_t n_r = 1; n_r <= 4; n_r++) {
		check_groups(0, 1, 100000, live, 13, n_r, load, 16);
		ck_assert_uint_eq(load[3] + load[7] + load[12], 0);
		check_balance(load, live, 13, 100000.0 * n_r / 13, 0.05);
	}
	/* Fewer live CNs than replicas: all of them, once each. */
	const uint32_t two[2] = {4, 9};
	check_groups(0, 1, 1000, two, 2, 3, load, 16);
	ck_assert_uint_eq(load[4], 1000);
	ck_assert_uint_eq(load[9], 1000);
	uint32_t g[CXS_DK_MAX_REPLICAS];
	ck_assert_uint_eq(cxs_dk_replicas(5, two, 0, 3, g), 0);
}
END_TEST

START_TEST(savers_are_even_and_independent_of_the_group)
{
	uint32_t live[16];
	for (uint32_t i = 0; i < 16; i++)
		live[i] = i;
	for (uint32_t gs = 1; gs <= 4; gs++) {
		uint64_t cnt[4] = {0};
		for (uint64_t line = 0; line < 100000; line++) {
			uint32_t s = cxs_dk_saver(line, gs);
			if (s >= gs)
				ck_abort_msg("saver %u of a group of %u", s, gs);
			cnt[s]++;
		}
		for (uint32_t s = 0; s < gs; s++) {
			double d = (double)cnt[s] - 100000.0 / gs;
			ck_assert_msg(d < 0.05 * 100000 / gs && -d < 0.05 * 100000 / gs,
				      "member %u of %u saves %lu", s, gs, (unsigned long)cnt[s]);
		}
	}
	/* Per group start, the three members save about a third each: 6250 lines per start. */
	uint64_t per[16][3] = {{0}};
	for (uint64_t line = 0; line < 100000; line++) {
		uint32_t g[CXS_DK_MAX_REPLICAS];
		cxs_dk_replicas(line, live, 16, 3, g);
		per[g[0]][cxs_dk_saver(line, 3)]++;
	}
	for (uint32_t s = 0; s < 16; s++) {
		uint64_t tot = per[s][0] + per[s][1] + per[s][2];
		for (uint32_t m = 0; m < 3; m++) {
			double d = (double)per[s][m] - tot / 3.0;
			ck_assert_msg(d < 0.1 * tot / 3 && -d < 0.1 * tot / 3,
				      "start %u member %u saves %lu of %lu", s, m,
				      (unsigned long)per[s][m], (unsigned long)tot);
		}
	}
	/* Pinned: splitmix64's second output for seed 0 is 0x6e789e6aa1b965f4, 0 mod 3. */
	ck_assert_uint_eq(cxs_dk_saver(0, 3), 0);
}
END_TEST

/* ---- timestamps ----------------------------------------------------------------- */

START_TEST(ts_before_wraps_at_128)
{
	ck_assert(cxs_dk_ts_before(0, 1));
	ck_assert(!cxs_dk_ts_before(1, 0));
	ck_assert(cxs_dk_ts_before(127, 0));
	ck_assert(!cxs_dk_ts_before(0, 127));
	ck_assert(cxs_dk_ts_before(120, 5));
	ck_assert(cxs_dk_ts_before(100, 35));  /* 63 steps */
	ck_assert(!cxs_dk_ts_before(100, 36)); /* 64 steps: ambiguous, not before */
	ck_assert(!cxs_dk_ts_before(36, 100));
	ck_assert(!cxs_dk_ts_before(5, 5));
}
END_TEST

START_TEST(reordered_vals_of_one_word_land_in_stamp_order)
{
	struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
	const uint64_t w = 0x10040;
	/* One CN (1, core 2) stores w twice; its VALs have TS 127 and, wrapped, 0. */
	ck_assert_uint_eq(repl1(lu, 1000, 0x102, 1, w, 111), 1000 + SRAM);
	ck_assert_uint_eq(repl1(lu, 1000, 0x102, 2, w, 222), 1000 + SRAM);
	uint32_t moved = 99;
	/* The second VAL overtakes the first: nothing of w may move yet. */
	val_ok(lu, 0x102, 2, 0, stamp(5, 2));
	ck_assert_uint_eq(cxs_lu_drain(lu, 2000, &moved), 2000);
	ck_assert_uint_eq(moved, 0);
	val_ok(lu, 0x102, 1, 127, stamp(5, 1));
	ck_assert_uint_eq(cxs_lu_drain(lu, 3000, &moved), 3000 + 2 * CYCLE);
	ck_assert_uint_eq(moved, 2);
	struct seen s = snapshot(lu);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(count_where(&s, 1), 2);
	ck_assert_uint_eq(dram_at(&s, 0)->value, 111);
	ck_assert_uint_eq(dram_at(&s, 0)->stamp, stamp(5, 1));
	ck_assert_uint_eq(dram_at(&s, 0)->ts, 127);
	ck_assert_uint_eq(dram_at(&s, 1)->value, 222);
	ck_assert_uint_eq(dram_at(&s, 1)->ts, 0);
	ck_assert_uint_eq(cxs_lu_dram_bytes(lu), 2 * CXS_DK_ENTRY_BYTES);
	seen_free(&s);
	cxs_lu_free(lu);
}
END_TEST

START_TEST(ts_stamp_disagreement_is_refused)
{
	struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
	const uint64_t w = 0x2000;
	repl1(lu, 0, 0x300, 1, w, 1);
	repl1(lu, 0, 0x301, 2, w, 2); /* another core of CN 3: same TS counter */
	val_ok(lu, 0x300, 1, 5, 10);
	/* Later stamp, earlier TS: refused, and the entry stays un-VALed. */
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x301, 2, 4, 11, NULL, NULL, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "disagree"));
	/* Across the wrap: TS 0 is before TS 127 only if 127 came first. */
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x301, 2, 5 + 64, 11, NULL, NULL, err, sizeof err), -1);
	struct seen s = snapshot(lu);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.e[1].valid, 0);
	ck_assert_uint_eq(s.e[1].stamp, 0);
	seen_free(&s);
	uint32_t moved;
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 0);
	val_ok(lu, 0x301, 2, 6, 11);
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 2);

	/* The wrap itself: TS 127 then 0 agrees with stamps 20 < 21; 0 then 127 does not. */
	repl1(lu, 0, 0x300, 3, w, 3);
	repl1(lu, 0, 0x300, 4, w, 4);
	val_ok(lu, 0x300, 4, 0, 21);
	val_ok(lu, 0x300, 3, 127, 20);
	repl1(lu, 0, 0x300, 5, w + 8, 5);
	repl1(lu, 0, 0x300, 6, w + 8, 6);
	val_ok(lu, 0x300, 5, 0, 30);
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x300, 6, 127, 31, NULL, NULL, err, sizeof err), -1);
	cxs_lu_free(lu);
}
END_TEST

START_TEST(two_cns_second_val_overtakes_the_first)
{
	for (int order = 0; order < 2; order++) {
		struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
		const uint64_t w = 0x7fc0;
		/* CN 1 writes w under grant 3, then CN 2 under grant 4; both REPL number 7. */
		if (order == 0) {
			repl1(lu, 0, 0x100, 7, w, 0xa);
			repl1(lu, 0, 0x203, 7, w, 0xb);
		} else {
			repl1(lu, 0, 0x203, 7, w, 0xb);
			repl1(lu, 0, 0x100, 7, w, 0xa);
		}
		uint32_t moved;
		val_ok(lu, 0x203, 7, 40, stamp(4, 1)); /* CN 2's VAL first */
		cxs_lu_drain(lu, 0, &moved);
		ck_assert_uint_eq(moved, 0);
		val_ok(lu, 0x100, 7, 90, stamp(3, 1)); /* TSs of different CNs are not compared */
		cxs_lu_drain(lu, 0, &moved);
		ck_assert_uint_eq(moved, 2);
		struct seen s = snapshot(lu);
		ck_assert_uint_eq(dram_at(&s, 0)->value, 0xa);
		ck_assert_uint_eq(dram_at(&s, 0)->requester, 0x100);
		ck_assert_uint_eq(dram_at(&s, 1)->value, 0xb);
		ck_assert_uint_eq(dram_at(&s, 1)->stamp, stamp(4, 1));
		seen_free(&s);
		cxs_lu_free(lu);
	}
}
END_TEST

START_TEST(val_protocol_errors)
{
	struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x100, 1, 0, 1, NULL, NULL, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "not in the SRAM"));
	repl1(lu, 0, 0x100, 1, 0x40, 1);
	/* The VAL names the requester's CN: CN 2 has no REPL 1. */
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x200, 1, 0, 1, NULL, NULL, err, sizeof err), -1);
	val_ok(lu, 0x101, 1, 0, 10); /* another core of CN 1 may send it */
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x100, 1, 1, 10, NULL, NULL, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "second VAL"));
	/* One word, one stamp twice (two CNs). */
	repl1(lu, 0, 0x200, 1, 0x40, 2);
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x200, 1, 0, 10, NULL, NULL, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "twice"));
	val_ok(lu, 0x200, 1, 0, 12);
	uint32_t moved;
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 2);
	/* A stamp below the word's latest in the DRAM log would break its order. */
	repl1(lu, 0, 0x300, 1, 0x40, 3);
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x300, 1, 0, 11, NULL, NULL, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "DRAM log"));
	val_ok(lu, 0x300, 1, 0, 13);
	cxs_lu_free(lu);
}
END_TEST

/* Dumps by line: keep lines with line % 3 != 0; destination line % 4 of 5 MNs (MN 4 gets none). */
static bool keep_fn(void *ctx, uint64_t line)
{
	(*(uint32_t *)ctx)++;
	return line % 3 != 0;
}

static uint32_t dest_fn(void *ctx, uint64_t line)
{
	return (uint32_t)(line % 4);
}

static bool keep_all(void *ctx, uint64_t line)
{
	return true;
}

static uint32_t dest_zero(void *ctx, uint64_t line)
{
	return 0;
}

/* ---- SRAM Log Buffer ------------------------------------------------------------------ */

START_TEST(buffer_backpressure_and_resumption)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_lu *lu = lu_with(10, 0, 0, st);
	uint64_t a[4] = {0x1000, 0x1008, 0x1010, 0x1018}, v[4] = {1, 2, 3, 4};
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 10);
	ck_assert_uint_eq(cxs_lu_repl(lu, 100, 0x100, 1, a, v, 4, false), 100 + SRAM);
	for (int i = 0; i < 4; i++)
		a[i] += 64;
	ck_assert_uint_eq(cxs_lu_repl(lu, 200, 0x200, 1, a, v, 4, false), 200 + SRAM);
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 2);
	/* Four more do not fit: refused whole, nothing allocated. */
	for (int i = 0; i < 4; i++)
		a[i] += 64;
	ck_assert_uint_eq(cxs_lu_repl(lu, 300, 0x300, 1, a, v, 4, false), CXS_TIME_INF);
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 2);
	struct seen s = snapshot(lu);
	ck_assert_uint_eq(s.n, 8);
	seen_free(&s);
	/* Two do. */
	uint64_t b[2] = {0x9000, 0x9008};
	ck_assert_uint_eq(cxs_lu_repl(lu, 300, 0x400, 1, b, v, 2, false), 300 + SRAM);
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 0);
	ck_assert_uint_eq(repl1(lu, 300, 0x500, 1, 0xa000, 9), CXS_TIME_INF);
	/* A drain with nothing VALed frees nothing. */
	uint32_t moved;
	ck_assert_uint_eq(cxs_lu_drain(lu, 400, &moved), 400);
	ck_assert_uint_eq(moved, 0);
	val_ok(lu, 0x100, 1, 0, 50);
	ck_assert_uint_eq(cxs_lu_drain(lu, 500, &moved), 500 + 4 * CYCLE);
	ck_assert_uint_eq(moved, 4);
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 4);
	/* The held REPL goes in now. */
	ck_assert_uint_eq(cxs_lu_repl(lu, 600, 0x300, 1, a, v, 4, false), 600 + SRAM);
	cxs_lu_backpressure(lu, 300, 600);
	ck_assert_uint_eq(counter(st, "repls"), 4);
	ck_assert_uint_eq(counter(st, "repls_refused"), 2);
	ck_assert_uint_eq(counter(st, "entries_logged"), 14);
	ck_assert_uint_eq(counter(st, "vals"), 1);
	ck_assert_uint_eq(counter(st, "backpressure_ps"), 300);
	ck_assert_uint_eq(counter(st, "sram_peak_entries"), 10);
	ck_assert_uint_eq(counter(st, "drained_entries"), 4);
	ck_assert_uint_eq(counter(st, "drain_busy_ps"), 4 * CYCLE);
	ck_assert_uint_eq(counter(st, "dram_peak_bytes"), 4 * CXS_DK_ENTRY_BYTES);
	cxs_lu_free(lu);
	cxs_stats_free(st);
}
END_TEST

/* A spill takes a REPL that lacks room past the buffer; VALs and drains treat it alike. */
START_TEST(spill_takes_a_repl_past_a_full_buffer)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_lu *lu = lu_with(4, 0, 0, st);
	uint64_t a[4] = {0x1000, 0x1008, 0x1010, 0x1018}, v[4] = {1, 2, 3, 4};
	ck_assert_uint_eq(cxs_lu_repl(lu, 0, 0x100, 1, a, v, 4, false), SRAM);
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 0);
	/* 40 REPLs of one word each, every one past the buffer: the arrays grow. */
	for (uint32_t i = 0; i < 40; i++) {
		ck_assert_uint_eq(repl1(lu, 10, 0x200, 1 + i, 0x8000 + 64 * i, 100 + i), CXS_TIME_INF);
		uint64_t w = 0x8000 + 64 * i, x = 100 + i;
		ck_assert_uint_eq(cxs_lu_repl(lu, 10, 0x200, 1 + i, &w, &x, 1, true), 10 + SRAM);
	}
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 0);
	ck_assert_uint_eq(counter(st, "spilled_entries"), 40);
	ck_assert_uint_eq(counter(st, "repls_refused"), 40);
	/* VALed in reverse order, they drain in arrival order, as buffer entries do. */
	for (uint32_t i = 40; i-- > 0;)
		val_ok(lu, 0x200, 1 + i, (uint8_t)i, 1000 + i);
	uint32_t moved;
	cxs_lu_drain(lu, 20, &moved);
	ck_assert_uint_eq(moved, 40);
	struct seen s = snapshot(lu);
	ck_assert_uint_eq(count_where(&s, 1), 40);
	for (uint32_t i = 0; i < 40; i++) {
		ck_assert_uint_eq(dram_at(&s, i)->addr, 0x8000 + 64 * i);
		ck_assert_uint_eq(dram_at(&s, i)->value, 100 + i);
	}
	seen_free(&s);
	/* The first REPL still holds the buffer; once VALed and drained it is free again. */
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 0);
	val_ok(lu, 0x100, 1, 40, 5000);
	cxs_lu_drain(lu, 30, &moved);
	ck_assert_uint_eq(moved, 4);
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 4);
	cxs_lu_free(lu);
	cxs_stats_free(st);
}
END_TEST

START_TEST(drain_keeps_arrival_order_and_stamp_order_per_word)
{
	struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
	const uint64_t w1 = 0x100, w2 = 0x200, w3 = 0x300;
	repl1(lu, 0, 0x100, 1, w1, 20);
	repl1(lu, 0, 0x200, 1, w2, 5);
	repl1(lu, 0, 0x300, 1, w1, 10);
	repl1(lu, 0, 0x400, 1, w3, 1);
	val_ok(lu, 0x100, 1, 0, 20);
	val_ok(lu, 0x200, 1, 0, 5);
	val_ok(lu, 0x300, 1, 0, 10);
	val_ok(lu, 0x400, 1, 0, 1);
	uint32_t moved;
	ck_assert_uint_eq(cxs_lu_drain(lu, 0, &moved), 4 * CYCLE);
	ck_assert_uint_eq(moved, 4);
	struct seen s = snapshot(lu);
	const uint64_t want_addr[4] = {w1, w2, w1, w3}, want_stamp[4] = {10, 5, 20, 1};
	for (size_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(dram_at(&s, i)->addr, want_addr[i]);
		ck_assert_uint_eq(dram_at(&s, i)->stamp, want_stamp[i]);
		ck_assert_uint_eq(dram_at(&s, i)->value, want_stamp[i]);
	}
	seen_free(&s);
	/* A REPL of several words: entry i gets stamp0 + i; an atomic's values come with its VAL. */
	uint64_t a[3] = {0x1000, 0x1008, 0x1038}, v[3] = {0, 0, 0}, got[3] = {7, 8, 9};
	cxs_lu_repl(lu, 0, 0x500, 1, a, v, 3, false);
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x500, 1, 0, 100, NULL, got, err, sizeof err), 0);
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 3);
	s = snapshot(lu);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(dram_at(&s, 4 + i)->addr, a[i]);
		ck_assert_uint_eq(dram_at(&s, 4 + i)->stamp, 100 + i);
		ck_assert_uint_eq(dram_at(&s, 4 + i)->value, got[i]);
		ck_assert_uint_eq(dram_at(&s, 4 + i)->repl, 1);
	}
	seen_free(&s);
	cxs_lu_free(lu);
}
END_TEST

START_TEST(non_valed_entries_never_reach_the_dram_log)
{
	struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
	/* w0: VALed then an un-VALed later store: both wait. w1: VALed alone: moves. */
	repl1(lu, 0, 0x100, 1, 0x0, 1);
	repl1(lu, 0, 0x100, 2, 0x8, 2);
	repl1(lu, 0, 0x200, 1, 0x0, 3);
	val_ok(lu, 0x100, 1, 0, 10);
	val_ok(lu, 0x100, 2, 1, 11);
	uint32_t moved;
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 1);
	struct seen s = snapshot(lu);
	ck_assert_uint_eq(count_where(&s, 1), 1);
	ck_assert_uint_eq(dram_at(&s, 0)->addr, 0x8);
	ck_assert_uint_eq(count_where(&s, 0), 2);
	seen_free(&s);
	/* Randomly: 150 single-word REPLs over 16 words, a third never VALed, drains between. */
	rng_state = 0x1234567;
	uint32_t tsn[4] = {2, 0, 0, 0}; /* TS counters of CNs 1..3 (index = CN) */
	uint64_t st = 100;
	uint32_t never = 0;
	for (uint32_t r = 0; r < 150; r++) {
		if (cxs_lu_sram_free(lu) == 0)
			cxs_lu_drain(lu, 0, &moved);
		if (cxs_lu_sram_free(lu) == 0)
			break; /* full of words blocked by un-VALed entries */
		uint32_t cn = 1 + (uint32_t)(rnd() % 3);
		uint64_t w = (rnd() % 16) * 8 + 0x4000;
		ck_assert_uint_ne(repl1(lu, 0, cn << 8, 100 + r, w, r), CXS_TIME_INF);
		if (rnd() % 3 == 0) {
			never++;
			continue;
		}
		val_ok(lu, cn << 8, 100 + r, (uint8_t)(tsn[cn]++ & 0x7f), st++);
		if (rnd() % 4 == 0)
			cxs_lu_drain(lu, 0, &moved);
		s = snapshot(lu);
		for (size_t i = 0; i < s.n; i++)
			if (s.where[i] == 1)
				ck_assert_uint_eq(s.e[i].valid, 1);
		seen_free(&s);
	}
	cxs_lu_drain(lu, 0, &moved);
	s = snapshot(lu);
	size_t unvaled = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (s.where[i] == 1)
			ck_assert_uint_eq(s.e[i].valid, 1);
		else
			unvaled += !s.e[i].valid;
	}
	ck_assert_uint_eq(unvaled, never + 1); /* the first part's un-VALed REPL of w0 */
	ck_assert_uint_gt(never, 10);
	seen_free(&s);
	cxs_lu_free(lu);
}
END_TEST

START_TEST(full_dram_log_moves_a_prefix_and_asks_for_a_flush)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_lu *lu = lu_with(0, 2, 0.5, st);
	const uint64_t w = 0x40, x = 0x80;
	/* Arrivals [w s3, x s1, w s2]: the places are [w s2, x s1, w s3]; two fit. */
	repl1(lu, 0, 0x100, 1, w, 3);
	repl1(lu, 0, 0x200, 1, x, 1);
	repl1(lu, 0, 0x300, 1, w, 2);
	val_ok(lu, 0x100, 1, 0, 3);
	val_ok(lu, 0x200, 1, 0, 1);
	val_ok(lu, 0x300, 1, 0, 2);
	ck_assert(!cxs_lu_needs_flush(lu));
	uint32_t moved;
	ck_assert_uint_eq(cxs_lu_drain(lu, 0, &moved), 2 * CYCLE);
	ck_assert_uint_eq(moved, 2);
	ck_assert(cxs_lu_needs_flush(lu));
	ck_assert_uint_eq(cxs_lu_dram_bytes(lu), 2 * CXS_DK_ENTRY_BYTES);
	struct seen s = snapshot(lu);
	ck_assert_uint_eq(dram_at(&s, 0)->stamp, 2);
	ck_assert_uint_eq(dram_at(&s, 1)->stamp, 1);
	ck_assert_uint_eq(count_where(&s, 0), 1);
	ck_assert_uint_eq(s.e[0].stamp, 3);
	seen_free(&s);
	ck_assert_uint_eq(counter(st, "dram_full_drains"), 1);
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 0);
	/* A dump empties it; the rest moves. */
	struct cxs_dk_chunk *ch;
	size_t nch;
	cxs_time done;
	ck_assert_int_eq(cxs_lu_dump(lu, 1000, keep_all, dest_zero, NULL, 1, &ch, &nch, &done), 0);
	ck_assert_uint_eq(nch, 1);
	ck_assert_uint_eq(ch[0].nentries, 2);
	ck_assert_uint_eq(done, 1000 + 2 * CYCLE);
	cxs_dk_chunks_free(ch, nch);
	ck_assert(!cxs_lu_needs_flush(lu));
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 1);
	ck_assert_uint_eq(counter(st, "dram_peak_bytes"), 2 * CXS_DK_ENTRY_BYTES);
	cxs_lu_free(lu);
	cxs_stats_free(st);
}
END_TEST

START_TEST(watermark)
{
	struct cxs_lu *lu = lu_with(0, 10, 0.45, NULL); /* ceil(4.5) = 5 entries */
	uint32_t moved;
	for (uint32_t i = 0; i < 5; i++) {
		ck_assert(!cxs_lu_needs_flush(lu));
		repl1(lu, 0, 0x100, i, 8 * i, i);
		val_ok(lu, 0x100, i, (uint8_t)i, i + 1);
		cxs_lu_drain(lu, 0, &moved);
		ck_assert_uint_eq(moved, 1);
	}
	ck_assert(cxs_lu_needs_flush(lu));
	cxs_lu_free(lu);
}
END_TEST

/* ---- log format and compression ----------------------------------------------------------- */

static void random_entries(struct cxs_dk_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		e[i] = (struct cxs_dk_entry){.addr = rnd() & ~UINT64_C(7),
					     .value = rnd(),
					     .stamp = rnd(),
					     .requester = (uint32_t)rnd(),
					     .repl = 0,
					     .ts = (uint8_t)(rnd() & 0x7f),
					     .valid = 1};
	}
}

/* A stencil sweep as a Logging Unit logs it: consecutive words, slowly varying values. */
static void stencil_entries(struct cxs_dk_entry *e, size_t n)
{
	uint64_t base = UINT64_C(0x40000000);
	uint32_t ts = 0;
	for (size_t i = 0; i < n; i++) {
		size_t word = i % 4096, sweep = i / 4096;
		double v = 300.0 + 0.01 * (double)word + 0.5 * (double)sweep;
		uint64_t bits;
		memcpy(&bits, &v, sizeof bits);
		e[i] = (struct cxs_dk_entry){.addr = base + 8 * word,
					     .value = bits,
					     .stamp = stamp((uint32_t)(sweep + 1), (uint32_t)(word % 8 + 1)),
					     .requester = (uint32_t)(((word / 1024) << 8) | (word / 256 % 4)),
					     .ts = (uint8_t)(ts++ & 0x7f),
					     .valid = 1};
	}
}

static void check_same(const struct cxs_dk_entry *a, const struct cxs_dk_entry *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].addr != b[i].addr || a[i].value != b[i].value || a[i].stamp != b[i].stamp ||
		    a[i].requester != b[i].requester || a[i].ts != b[i].ts || b[i].valid != 1 ||
		    b[i].repl != 0)
			ck_abort_msg("entry %zu differs after the round trip", i);
}

/* encode -> compress(9) -> inflate -> decode; returns the compressed size. */
static size_t round_trip(const struct cxs_dk_entry *e, size_t n)
{
	unsigned char *raw, *z, *back;
	size_t len, zlen, nd;
	struct cxs_dk_entry *d;
	ck_assert_int_eq(cxs_dk_log_encode(e, n, &raw, &len), 0);
	ck_assert_uint_eq(len, 32 * n + 32);
	ck_assert_int_eq(cxs_dk_compress(raw, len, 9, &z, &zlen), 0);
	ck_assert_int_eq(cxs_dk_inflate(z, zlen, len, &back, err, sizeof err), 0);
	ck_assert_int_eq(memcmp(raw, back, len), 0);
	/* A writer fed segment by segment makes a stream that inflates to the same bytes. */
	struct cxs_dk_writer *w = cxs_dk_writer_new(9);
	ck_assert_ptr_nonnull(w);
	for (size_t at = 0; at < n; at += CXS_DK_LOG_SEGMENT)
		ck_assert_int_eq(cxs_dk_writer_add(w, e + at,
						   n - at < CXS_DK_LOG_SEGMENT ? n - at
									       : CXS_DK_LOG_SEGMENT),
				 0);
	ck_assert_uint_eq(cxs_dk_writer_count(w), n);
	unsigned char *wz, *wback;
	size_t wzlen, wraw;
	ck_assert_int_eq(cxs_dk_writer_finish(w, &wz, &wzlen, &wraw), 0);
	ck_assert_uint_eq(wraw, len);
	ck_assert_int_eq(cxs_dk_inflate(wz, wzlen, len, &wback, err, sizeof err), 0);
	ck_assert_int_eq(memcmp(raw, wback, len), 0);
	cxs_dk_writer_free(w);
	free(wz);
	free(wback);
	ck_assert_int_eq(cxs_dk_log_decode(back, len, &d, &nd, err, sizeof err), 0);
	ck_assert_uint_eq(nd, n);
	check_same(e, d, n);
	free(raw);
	free(z);
	free(back);
	free(d);
	return zlen;
}

START_TEST(compression_round_trips)
{
	rng_state = 99;
	enum { N = 20000 };
	struct cxs_dk_entry *e = malloc(N * sizeof *e);
	random_entries(e, N);
	size_t zr = round_trip(e, N);
	/* Random fields do not compress: above 26 of the 32 bytes a record takes. */
	ck_assert_uint_gt(zr, (size_t)N * 26);
	stencil_entries(e, N);
	size_t zs = round_trip(e, N);
	/* The stencil stream does: below a third of the 24 bytes an entry takes in SRAM. */
	ck_assert_uint_lt(zs, (size_t)N * CXS_DK_ENTRY_BYTES / 3);
	round_trip(e, 0);
	round_trip(e, 1);
	free(e);
}
END_TEST

/*
 * Chains (zpool.c): JOBS writers, each fed its entries a segment at a time
 * and finished, over three rounds (a writer is reused after its finish, the
 * workers sleep between rounds), give at 2 and 9 threads the bytes they give
 * at 1 (every segment deflated in the caller); the streams inflate to
 * cxs_dk_log_encode's bytes. A level zlib does not have makes no writer.
 */
static void run_chains(struct cxs_dk_zchain *c, const struct cxs_dk_entry *const *e,
		       const size_t *n, int jobs, unsigned threads)
{
	struct cxs_dk_zchain *all[16];
	for (int j = 0; j < jobs; j++) {
		size_t at = 0;
		for (bool last = false; !last;) {
			struct cxs_dk_zseg *sg = cxs_dk_zseg_new();
			ck_assert_ptr_nonnull(sg);
			sg->n = (uint32_t)(n[j] - at < CXS_DK_LOG_SEGMENT ? n[j] - at
									  : CXS_DK_LOG_SEGMENT);
			memcpy(sg->e, e[j] + at, sg->n * sizeof *sg->e);
			at += sg->n;
			sg->finish = last = at == n[j];
			cxs_dk_zchain_push(&c[j], sg, threads);
		}
		all[j] = &c[j];
	}
	cxs_dk_zchain_wait(all, (size_t)jobs);
}

START_TEST(chains_same_bytes_at_any_thread_count)
{
	enum { JOBS = 7, N = 3000 };
	struct cxs_dk_entry *e[JOBS];
	size_t n[JOBS];
	rng_state = 7;
	for (int j = 0; j < JOBS; j++) {
		n[j] = j == 3 ? 2 * CXS_DK_LOG_SEGMENT : N - 100 * (size_t)j; /* one ends on a segment */
		e[j] = malloc(n[j] * sizeof *e[j]);
		if (j % 2)
			random_entries(e[j], n[j]);
		else
			stencil_entries(e[j], n[j]);
	}
	struct cxs_dk_zchain one[JOBS] = {0};
	for (int j = 0; j < JOBS; j++)
		one[j].w = cxs_dk_writer_new(9);
	run_chains(one, (const struct cxs_dk_entry *const *)e, n, JOBS, 1);
	for (int j = 0; j < JOBS; j++) {
		ck_assert_int_eq(one[j].rc, 0);
		ck_assert(one[j].finished);
		unsigned char *raw, *back;
		size_t len;
		ck_assert_int_eq(cxs_dk_log_encode(e[j], n[j], &raw, &len), 0);
		ck_assert_uint_eq(one[j].raw_len, len);
		ck_assert_int_eq(cxs_dk_inflate(one[j].out, one[j].out_len, len, &back, err, sizeof err),
				 0);
		ck_assert_int_eq(memcmp(raw, back, len), 0);
		free(raw);
		free(back);
	}
	for (unsigned threads = 2; threads <= 9; threads += 7) {
		struct cxs_dk_zchain many[JOBS] = {0};
		for (int j = 0; j < JOBS; j++)
			many[j].w = cxs_dk_writer_new(9);
		for (int round = 0; round < 3; round++) {
			run_chains(many, (const struct cxs_dk_entry *const *)e, n, JOBS, threads);
			for (int j = 0; j < JOBS; j++) {
				ck_assert_int_eq(many[j].rc, 0);
				ck_assert(many[j].finished);
				ck_assert_uint_eq(many[j].out_len, one[j].out_len);
				ck_assert_int_eq(memcmp(many[j].out, one[j].out, one[j].out_len), 0);
				cxs_dk_zchain_drop(&many[j]);
			}
		}
		for (int j = 0; j < JOBS; j++)
			cxs_dk_writer_free(many[j].w);
	}
	for (int j = 0; j < JOBS; j++) {
		cxs_dk_zchain_drop(&one[j]);
		cxs_dk_writer_free(one[j].w);
		free(e[j]);
	}
	ck_assert_ptr_null(cxs_dk_writer_new(10));
	ck_assert_uint_eq(cxs_dk_compress_threads(3), 3);
	ck_assert_uint_ge(cxs_dk_compress_threads(0), 1);
}
END_TEST

START_TEST(encode_keeps_valid_entries_only)
{
	struct cxs_dk_entry e[3] = {
		{.addr = 8, .value = 1, .stamp = 1, .valid = 1},
		{.addr = 16, .value = 2, .stamp = 2, .valid = 0},
		{.addr = 24, .value = 3, .stamp = 3, .ts = 0x85, .valid = 1},
	};
	unsigned char *raw;
	size_t len, n;
	struct cxs_dk_entry *d;
	ck_assert_int_eq(cxs_dk_log_encode(e, 3, &raw, &len), 0);
	ck_assert_uint_eq(len, 2 * 32 + 32);
	const unsigned char *t = raw + 2 * 32; /* the trailer */
	ck_assert_int_eq(memcmp(t, "DKLG", 4), 0);
	ck_assert_uint_eq(t[4], 3);  /* version */
	ck_assert_uint_eq(t[6], 32); /* record bytes */
	ck_assert_uint_eq(t[8], 2);  /* count */
	ck_assert_uint_eq(t[20] | t[21] << 8, CXS_DK_LOG_SEGMENT); /* records per segment */
	/* Byte planes (one segment of 2): byte j of record i at j * 2 + i. */
	ck_assert_uint_eq(raw[0 * 2 + 1], 24);  /* second record's address, little-endian */
	ck_assert_uint_eq(raw[1 * 2 + 1], 0);   /* ... its next byte */
	ck_assert_uint_eq(raw[12 * 2 + 1], 5);  /* its TS, 7 bits */
	ck_assert_uint_eq(raw[16 * 2 + 1], 3);  /* its value */
	ck_assert_uint_eq(raw[24 * 2 + 1], 3);  /* its stamp */
	ck_assert_uint_eq(raw[0 * 2 + 0], 8);   /* first record's address */
	ck_assert_int_eq(cxs_dk_log_decode(raw, len, &d, &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(d[1].addr, 24);
	ck_assert_uint_eq(d[1].ts, 5); /* 7 bits */
	free(raw);
	free(d);
}
END_TEST

/* Decodes a copy of exactly len bytes; returns the status. */
static int decode_copy(const unsigned char *b, size_t len)
{
	unsigned char *c = malloc(len ? len : 1);
	memcpy(c, b, len);
	struct cxs_dk_entry *d = (struct cxs_dk_entry *)1;
	size_t n = 7;
	int rc = cxs_dk_log_decode(c, len, &d, &n, err, sizeof err);
	if (rc == 0)
		free(d);
	else
		ck_assert(d == NULL && n == 0);
	free(c);
	return rc;
}

static void fix_crc(unsigned char *b, size_t len)
{
	uLong crc = crc32(crc32(0L, Z_NULL, 0), b, (uInt)(len - 32));
	for (int i = 0; i < 4; i++)
		b[len - 32 + 16 + i] = (unsigned char)(crc >> (8 * i));
}

START_TEST(decode_refuses_truncated_and_corrupt_logs)
{
	rng_state = 7;
	struct cxs_dk_entry e[5];
	random_entries(e, 5);
	unsigned char *raw;
	size_t len;
	ck_assert_int_eq(cxs_dk_log_encode(e, 5, &raw, &len), 0);
	ck_assert_int_eq(decode_copy(raw, len), 0);
	for (size_t l = 0; l < len; l++)
		ck_assert_msg(decode_copy(raw, l) == -1, "%zu of %zu bytes accepted", l, len);
	unsigned char *b = malloc(len + 32);
	memcpy(b, raw, len - 32);
	memset(b + len - 32, 0, 32);
	memcpy(b + len, raw + len - 32, 32);
	ck_assert_int_eq(decode_copy(b, len + 32), -1); /* a record more than counted */
	ck_assert_ptr_nonnull(strstr(err, "truncated or corrupt"));
	/* Every single-bit flip anywhere is refused (trailer fields or the checksum). */
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(b, raw, len);
			b[i] ^= (unsigned char)(1u << bit);
			ck_assert_msg(decode_copy(b, len) == -1, "flip of byte %zu bit %d accepted", i,
				      bit);
		}
	/* With the checksum made to match, the field checks still refuse. */
	memcpy(b, raw, len);
	b[13 * 5 + 0] = 1; /* reserved byte 13 of record 0 (byte planes of 5 records) */
	fix_crc(b, len);
	ck_assert_int_eq(decode_copy(b, len), -1);
	ck_assert_ptr_nonnull(strstr(err, "reserved"));
	memcpy(b, raw, len);
	b[12 * 5 + 1] |= 0x80; /* TS bit 7 of record 1 */
	fix_crc(b, len);
	ck_assert_int_eq(decode_copy(b, len), -1);
	memcpy(b, raw, len);
	b[len - 32 + 4] = 1;
	ck_assert_int_eq(decode_copy(b, len), -1);
	ck_assert_ptr_nonnull(strstr(err, "version 1"));
	memcpy(b, raw, len);
	b[len - 32 + 20] = 7; /* segments of 7 records */
	ck_assert_int_eq(decode_copy(b, len), -1);
	ck_assert_ptr_nonnull(strstr(err, "segments"));
	free(b);
	free(raw);
}
END_TEST

/*
 * Inflates a copy of exactly zlen bytes; returns the status. Accepted input
 * must inflate to `expect` (when given) byte for byte.
 */
static int inflate_copy(const unsigned char *z, size_t zlen, size_t raw_len,
			const unsigned char *expect)
{
	unsigned char *c = malloc(zlen ? zlen : 1), *out = (unsigned char *)1;
	memcpy(c, z, zlen);
	int rc = cxs_dk_inflate(c, zlen, raw_len, &out, err, sizeof err);
	if (rc == 0) {
		if (expect != NULL)
			ck_assert_msg(memcmp(out, expect, raw_len) == 0, "damaged input accepted");
		free(out);
	} else {
		ck_assert(out == NULL);
	}
	free(c);
	return rc;
}

START_TEST(inflate_refuses_truncated_and_corrupt_input)
{
	enum { N = 150 };
	struct cxs_dk_entry e[N];
	stencil_entries(e, N);
	unsigned char *raw, *z;
	size_t len, zlen;
	ck_assert_int_eq(cxs_dk_log_encode(e, N, &raw, &len), 0);
	ck_assert_int_eq(cxs_dk_compress(raw, len, 9, &z, &zlen), 0);
	ck_assert_int_eq(inflate_copy(z, zlen, len, raw), 0);
	for (size_t l = 0; l < zlen; l++)
		ck_assert_msg(inflate_copy(z, l, len, NULL) == -1, "%zu of %zu bytes accepted", l, zlen);
	ck_assert_int_eq(inflate_copy(z, zlen, len - 1, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "more bytes"));
	ck_assert_int_eq(inflate_copy(z, zlen, len + 1, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "fewer bytes"));
	unsigned char *b = malloc(zlen + 1);
	memcpy(b, z, zlen);
	b[zlen] = 0;
	ck_assert_int_eq(inflate_copy(b, zlen + 1, len, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "trailing"));
	/*
	 * Every single-bit flip: zlib's structure or its adler32 refuses it, except
	 * bits the decoder never acts on (the padding after the last block, a
	 * dynamic block's code lengths for symbols no code uses); those must then
	 * inflate to the very same log (inflate_copy checks), and they are few.
	 */
	size_t refused = 0;
	for (size_t i = 0; i < zlen; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(b, z, zlen);
			b[i] ^= (unsigned char)(1u << bit);
			refused += inflate_copy(b, zlen, len, raw) == -1;
		}
	ck_assert_uint_ge(refused, 8 * zlen - 8 * zlen / 100 - 7);
	ck_assert_int_eq(cxs_dk_compress(raw, len, 10, &b, &zlen), -1);
	free(b);
	free(z);
	free(raw);
}
END_TEST

/* ---- dumps and the latest-version searches --------------------------------------------------- */

/*
 * A protocol-shaped random load: rounds of REPLs of 1..4 words of a line,
 * from CNs 1..4, with stamps growing in coherence order; each round's VALs
 * arrive shuffled, drains happen at random between them. With leave, the
 * last round leaves half of its REPLs un-VALed. A REPL that finds no room
 * even after a drain (the DRAM log full) is not sent.
 */
struct load {
	uint64_t next_stamp;
	uint32_t tsn[8]; /* per CN: its VAL TS counter */
	uint32_t repl;
};

static void random_load(struct cxs_lu *lu, struct load *L, uint32_t rounds, uint32_t nlines,
			uint32_t per_round, bool leave)
{
	uint32_t moved;
	for (uint32_t r = 0; r < rounds; r++) {
		uint32_t req[64], id[64];
		uint64_t s0[64];
		uint32_t nr = 0;
		for (uint32_t k = 0; k < per_round && nr < 64; k++) {
			uint32_t cn = 1 + (uint32_t)(rnd() % 4);
			uint64_t line = 0x1000 + rnd() % nlines;
			uint32_t n = 1 + (uint32_t)(rnd() % 4), first = (uint32_t)(rnd() % 5);
			uint64_t a[4], v[4];
			for (uint32_t i = 0; i < n; i++) {
				a[i] = (line << 6) + 8 * (first + i);
				v[i] = rnd();
			}
			uint32_t requester = cn << 8 | (uint32_t)(rnd() % 4);
			if (cxs_lu_repl(lu, 0, requester, L->repl, a, v, n, false) == CXS_TIME_INF) {
				cxs_lu_drain(lu, 0, &moved);
				if (cxs_lu_repl(lu, 0, requester, L->repl, a, v, n, false) == CXS_TIME_INF)
					continue;
			}
			req[nr] = requester;
			id[nr] = L->repl++;
			s0[nr] = L->next_stamp;
			L->next_stamp += 8;
			nr++;
		}
		/* TS follows each CN's send order = stamp order; arrival is shuffled. */
		uint8_t ts[64];
		for (uint32_t k = 0; k < nr; k++)
			ts[k] = (uint8_t)(L->tsn[req[k] >> 8]++ & 0x7f);
		uint32_t perm[64];
		for (uint32_t k = 0; k < nr; k++)
			perm[k] = k;
		for (uint32_t k = nr; k > 1; k--) {
			uint32_t j = (uint32_t)(rnd() % k), t = perm[k - 1];
			perm[k - 1] = perm[j];
			perm[j] = t;
		}
		uint32_t nval = leave && r + 1 == rounds ? nr / 2 : nr;
		for (uint32_t k = 0; k < nval; k++) {
			uint32_t q = perm[k];
			int rc = cxs_lu_val(lu, 0, req[q], id[q], ts[q], s0[q], NULL, NULL, err, sizeof err);
			ck_assert_msg(rc == 0, "%s", err);
			if (rnd() % 3 == 0)
				cxs_lu_drain(lu, 0, &moved);
		}
		cxs_lu_drain(lu, 0, &moved);
	}
}

/* The reference: the VALed entry with the largest stamp among e[0..n). */
static const struct cxs_dk_entry *brute_latest(const struct cxs_dk_entry *e, size_t n,
					       uint64_t word)
{
	const struct cxs_dk_entry *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (e[i].valid && e[i].addr == word && (best == NULL || e[i].stamp > best->stamp))
			best = &e[i];
	return best;
}

static void check_found(const struct cxs_dk_entry *want, uint8_t found,
			const struct cxs_dk_entry *got, uint64_t word)
{
	ck_assert_msg(found == (want != NULL), "word %#lx: found %u", (unsigned long)word, found);
	if (want == NULL)
		return;
	ck_assert_uint_eq(got->addr, word);
	ck_assert_uint_eq(got->stamp, want->stamp);
	ck_assert_uint_eq(got->value, want->value);
	ck_assert_uint_eq(got->requester, want->requester);
}

/* Query: every word of lines 0x1000 .. 0x1000 + nlines + 2 (some never written). */
static uint64_t *query_words(uint32_t nlines, size_t *n)
{
	*n = (size_t)(nlines + 2) * 8 + 1;
	uint64_t *w = malloc(*n * sizeof *w);
	for (size_t i = 0; i + 1 < *n; i++)
		w[i] = (UINT64_C(0x1000) << 6) + 8 * i;
	w[*n - 1] = w[3]; /* asked twice */
	return w;
}

START_TEST(lu_latest_matches_brute_force)
{
	rng_state = 2024;
	struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
	struct load L = {.next_stamp = 1000};
	random_load(lu, &L, 12, 24, 40, true);
	struct seen s = snapshot(lu);
	ck_assert_uint_gt(count_where(&s, 1), 100);
	size_t unvaled = 0;
	for (size_t i = 0; i < s.n; i++)
		unvaled += !s.e[i].valid;
	ck_assert_uint_gt(unvaled, 0);
	/* The DRAM log holds every word's entries in stamp order. */
	for (size_t i = 0; i < s.n; i++)
		for (size_t j = i + 1; j < s.n; j++)
			if (s.where[i] == 1 && s.where[j] == 1 && s.e[i].addr == s.e[j].addr)
				ck_assert_uint_lt(s.e[i].stamp, s.e[j].stamp);
	size_t n;
	uint64_t *w = query_words(24, &n);
	struct cxs_dk_entry *out = calloc(n, sizeof *out);
	uint8_t *found = calloc(n, 1);
	ck_assert_uint_eq(cxs_lu_latest(lu, w, n, out, found), s.n);
	size_t nf = 0, in_buffer = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cxs_dk_entry *want = brute_latest(s.e, s.n, w[i]);
		check_found(want, found[i], &out[i], w[i]);
		nf += found[i];
		/* Words blocked by an un-VALed store: the latest is in the buffer, older ones in DRAM. */
		in_buffer += want != NULL && s.where[want - s.e] == 0;
	}
	ck_assert_uint_gt(nf, 50);
	ck_assert_uint_gt(in_buffer, 0);
	ck_assert_uint_lt(nf, n);
	ck_assert_uint_eq(cxs_lu_latest(lu, w, 0, out, found), 0);
	free(w);
	free(out);
	free(found);
	seen_free(&s);
	cxs_lu_free(lu);
}
END_TEST

/* keep as keep_fn, or its complement on the lines it skipped when *ctx says so. */
static bool keep_flip(void *ctx, uint64_t line)
{
	return *(bool *)ctx ? line % 3 != 1 : line % 3 != 0;
}

/* Chunks of one dump of lu; freed by the caller. */
static struct cxs_dk_chunk *dump_of(struct cxs_lu *lu, bool (*keep)(void *, uint64_t), void *ctx,
				    size_t *nch)
{
	struct cxs_dk_chunk *ch;
	cxs_time done;
	ck_assert_int_eq(cxs_lu_dump(lu, 5000, keep, dest_fn, ctx, 5, &ch, nch, &done), 0);
	return ch;
}

static void same_chunks(const struct cxs_dk_chunk *a, size_t na, const struct cxs_dk_chunk *b,
			size_t nb)
{
	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++) {
		ck_assert_uint_eq(a[i].dest, b[i].dest);
		ck_assert_uint_eq(a[i].nentries, b[i].nentries);
		ck_assert_uint_eq(a[i].raw_len, b[i].raw_len);
		ck_assert_uint_eq(a[i].len, b[i].len);
		ck_assert_int_eq(memcmp(a[i].bytes, b[i].bytes, a[i].len), 0);
	}
}

/*
 * Compressed as the drain deposits (cxs_lu_stream) or all at the dump: the
 * same chunks, byte for byte, over several dump rounds, at 1 and 3 threads;
 * and when keep's answers change between the drain and the dump (a member
 * died), the dump streams the round again and still gives the chunks of a
 * unit that never streamed.
 */
START_TEST(streamed_dumps_are_the_dumps)
{
	for (unsigned threads = 1; threads <= 3; threads += 2) {
		struct cxs_lu_params p;
		cxs_lu_default_params(&p);
		p.compress_threads = threads;
		struct cxs_lu *plain = cxs_lu_new(&p, 9, NULL), *streamed = cxs_lu_new(&p, 9, NULL);
		bool flip = false;
		ck_assert_int_eq(cxs_lu_stream(streamed, keep_flip, dest_fn, &flip, 5), 0);
		struct load La = {.next_stamp = 1000}, Lb = La;
		for (int round = 0; round < 4; round++) {
			rng_state = 40 + (uint64_t)round;
			random_load(plain, &La, 40, 3000, 60, false);
			rng_state = 40 + (uint64_t)round;
			random_load(streamed, &Lb, 40, 3000, 60, false);
			flip = round == 2; /* the drains saw the old answers */
			size_t na, nb;
			struct cxs_dk_chunk *a = dump_of(plain, keep_flip, &flip, &na);
			struct cxs_dk_chunk *b = dump_of(streamed, keep_flip, &flip, &nb);
			ck_assert_uint_eq(na, 4);
			for (size_t i = 0; i < na; i++)
				ck_assert_uint_gt(a[i].nentries, CXS_DK_LOG_SEGMENT); /* several segments */
			same_chunks(a, na, b, nb);
			cxs_dk_chunks_free(a, na);
			cxs_dk_chunks_free(b, nb);
			flip = false;
		}
		cxs_lu_free(plain);
		cxs_lu_free(streamed);
	}
}
END_TEST

START_TEST(dump_splits_by_destination_and_keep)
{
	rng_state = 31;
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_lu *lu = lu_with(0, 0, 0, st);
	struct load L = {.next_stamp = 1000};
	random_load(lu, &L, 6, 30, 40, true);
	uint32_t moved;
	struct seen s = snapshot(lu);
	size_t nlog = count_where(&s, 1);
	ck_assert_uint_gt(nlog, 100);
	uint32_t calls = 0;
	struct cxs_dk_chunk *ch;
	size_t nch;
	cxs_time done;
	ck_assert_int_eq(cxs_lu_dump(lu, 5000, keep_fn, dest_fn, &calls, 5, &ch, &nch, &done), 0);
	ck_assert_uint_eq(calls, line_runs(&s));
	ck_assert_uint_eq(done, 5000 + nlog * CYCLE);
	ck_assert_uint_eq(nch, 4);
	size_t kept = 0, raw = 0, packed = 0;
	for (size_t c = 0; c < nch; c++) {
		ck_assert_uint_eq(ch[c].dest, c);
		unsigned char *b;
		struct cxs_dk_entry *d;
		size_t nd;
		ck_assert_int_eq(cxs_dk_inflate(ch[c].bytes, ch[c].len, ch[c].raw_len, &b, err,
						sizeof err),
				 0);
		ck_assert_int_eq(cxs_dk_log_decode(b, ch[c].raw_len, &d, &nd, err, sizeof err), 0);
		ck_assert_uint_eq(nd, ch[c].nentries);
		ck_assert_uint_eq(ch[c].raw_len, 32 * nd + 32);
		/* Exactly the log's entries with this destination, in log order. */
		size_t k = 0;
		for (size_t i = 0; i < nlog; i++) {
			const struct cxs_dk_entry *e = dram_at(&s, i);
			if (LINE(e->addr) % 3 == 0 || LINE(e->addr) % 4 != c)
				continue;
			ck_assert_uint_lt(k, nd);
			ck_assert_uint_eq(d[k].addr, e->addr);
			ck_assert_uint_eq(d[k].stamp, e->stamp);
			ck_assert_uint_eq(d[k].value, e->value);
			k++;
		}
		ck_assert_uint_eq(k, nd);
		kept += nd;
		raw += ch[c].raw_len;
		packed += ch[c].len;
		free(b);
		free(d);
	}
	ck_assert_uint_gt(kept, 0);
	ck_assert_uint_lt(kept, nlog);
	cxs_dk_chunks_free(ch, nch);
	/* What it saved is gone; the other members' entries stay one dump more,
	 * in log order; the buffer is untouched. */
	size_t others = nlog - kept;
	ck_assert_uint_eq(cxs_lu_dram_bytes(lu), others * CXS_DK_ENTRY_BYTES);
	struct seen after = snapshot(lu);
	ck_assert_uint_eq(count_where(&after, 1), others);
	ck_assert_uint_eq(after.n, s.n - kept);
	for (size_t i = 0, k = 0; i < nlog; i++) {
		const struct cxs_dk_entry *e = dram_at(&s, i);
		if (LINE(e->addr) % 3 != 0)
			continue;
		const struct cxs_dk_entry *r = dram_at(&after, k++);
		ck_assert_uint_eq(r->addr, e->addr);
		ck_assert_uint_eq(r->stamp, e->stamp);
	}
	ck_assert_uint_eq(counter(st, "dumps"), 1);
	ck_assert_uint_eq(counter(st, "dump_entries"), kept);
	ck_assert_uint_eq(counter(st, "dump_others_entries"), 0);
	ck_assert_uint_eq(counter(st, "dump_raw_bytes"), raw);
	ck_assert_uint_eq(counter(st, "dump_compressed_bytes"), packed);
	ck_assert_uint_eq(counter(st, "dump_busy_ps"), nlog * CYCLE);
	/* The next dump reads them, saves none (not its share) and clears them. */
	calls = 0;
	ck_assert_int_eq(cxs_lu_dump(lu, 7000, keep_fn, dest_fn, &calls, 5, &ch, &nch, &done), 0);
	ck_assert_uint_eq(calls, line_runs(&after));
	seen_free(&after);
	ck_assert_uint_eq(nch, 0);
	ck_assert_ptr_null(ch);
	ck_assert_uint_eq(done, 7000 + others * CYCLE);
	ck_assert_uint_eq(cxs_lu_dram_bytes(lu), 0);
	ck_assert_uint_eq(counter(st, "dump_others_entries"), others);
	/* An empty log: no chunk, no time. */
	ck_assert_int_eq(cxs_lu_dump(lu, 8000, keep_fn, dest_fn, &calls, 5, &ch, &nch, &done), 0);
	ck_assert_uint_eq(nch, 0);
	ck_assert_uint_eq(done, 8000);
	/* After the dump the log starts afresh: a word's old stamps are no constraint. */
	repl1(lu, 0, 0x700, 1, 0x12340, 1);
	val_ok(lu, 0x700, 1, 0, 1);
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 1);
	seen_free(&s);
	cxs_lu_free(lu);
	cxs_stats_free(st);
}
END_TEST

START_TEST(store_latest_matches_brute_force)
{
	rng_state = 77;
	struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
	struct cxs_dk_store *mn[4];
	for (int m = 0; m < 4; m++)
		mn[m] = cxs_dk_store_new();
	/* What each MN was sent, decoded by the reference from the DRAM log before the dump. */
	struct cxs_dk_entry *sent[4] = {0};
	size_t nsent[4] = {0}, bytes[4] = {0}, rawb[4] = {0};
	uint32_t calls = 0;
	struct load L = {.next_stamp = 1000};
	for (int d = 0; d < 3; d++) {
		random_load(lu, &L, 4, 20, 30, false);
		struct seen s = snapshot(lu);
		for (size_t i = 0; i < s.n; i++) {
			if (s.where[i] != 1 || LINE(s.e[i].addr) % 3 == 0)
				continue;
			uint32_t m = (uint32_t)(LINE(s.e[i].addr) % 4);
			sent[m] = realloc(sent[m], (nsent[m] + 1) * sizeof *sent[m]);
			sent[m][nsent[m]++] = s.e[i];
		}
		seen_free(&s);
		struct cxs_dk_chunk *ch;
		size_t nch;
		cxs_time done;
		ck_assert_int_eq(cxs_lu_dump(lu, 0, keep_fn, dest_fn, &calls, 4, &ch, &nch, &done), 0);
		for (size_t c = 0; c < nch; c++) {
			ck_assert_int_eq(cxs_dk_store_add(mn[ch[c].dest], 9, ch[c].bytes, ch[c].len,
							  ch[c].raw_len),
					 0);
			bytes[ch[c].dest] += ch[c].len;
			rawb[ch[c].dest] += ch[c].raw_len;
		}
		cxs_dk_chunks_free(ch, nch);
	}
	size_t n;
	uint64_t *w = query_words(20, &n);
	struct cxs_dk_entry *out = calloc(n, sizeof *out);
	uint8_t *found = calloc(n, 1);
	for (int m = 0; m < 4; m++) {
		ck_assert_uint_gt(nsent[m], 0);
		ck_assert_uint_eq(cxs_dk_store_bytes(mn[m]), bytes[m]);
		size_t inflated = 0;
		size_t scanned =
			cxs_dk_store_latest(mn[m], w, n, out, found, &inflated, err, sizeof err);
		ck_assert_uint_eq(scanned, nsent[m]);
		ck_assert_uint_eq(inflated, rawb[m]);
		for (size_t i = 0; i < n; i++)
			check_found(brute_latest(sent[m], nsent[m], w[i]), found[i], &out[i], w[i]);
	}
	free(w);
	free(out);
	free(found);
	for (int m = 0; m < 4; m++) {
		free(sent[m]);
		cxs_dk_store_free(mn[m]);
	}
	cxs_lu_free(lu);
}
END_TEST

START_TEST(store_refuses_a_corrupt_chunk)
{
	struct cxs_lu *lu = lu_with(0, 0, 0, NULL);
	repl1(lu, 0, 0x100, 1, 0x40, 5);
	val_ok(lu, 0x100, 1, 0, 1);
	uint32_t moved;
	cxs_lu_drain(lu, 0, &moved);
	struct cxs_dk_chunk *ch;
	size_t nch;
	cxs_time done;
	ck_assert_int_eq(cxs_lu_dump(lu, 0, keep_all, dest_zero, NULL, 1, &ch, &nch, &done), 0);
	ck_assert_uint_eq(nch, 1);
	struct cxs_dk_store *s = cxs_dk_store_new();
	ck_assert_int_eq(cxs_dk_store_add(s, 3, ch[0].bytes, ch[0].len, ch[0].raw_len), 0);
	uint64_t w = 0x40;
	struct cxs_dk_entry out;
	uint8_t found = 0;
	size_t inflated;
	ck_assert_uint_eq(cxs_dk_store_latest(s, &w, 1, &out, &found, &inflated, err, sizeof err), 1);
	ck_assert_uint_eq(found, 1);
	ck_assert_uint_eq(out.value, 5);
	/* The same bytes claimed to inflate to one byte less, then damaged bytes. */
	ck_assert_int_eq(cxs_dk_store_add(s, 7, ch[0].bytes, ch[0].len, ch[0].raw_len - 1), 0);
	found = 9;
	ck_assert_uint_eq(cxs_dk_store_latest(s, &w, 1, &out, &found, &inflated, err, sizeof err),
			  (size_t)-1);
	ck_assert_ptr_nonnull(strstr(err, "chunk 1 (from node 7)"));
	ck_assert_uint_eq(found, 9);
	struct cxs_dk_store *s2 = cxs_dk_store_new();
	ch[0].bytes[ch[0].len / 2] ^= 0x10;
	ck_assert_int_eq(cxs_dk_store_add(s2, 4, ch[0].bytes, ch[0].len, ch[0].raw_len), 0);
	ck_assert_uint_eq(cxs_dk_store_latest(s2, &w, 1, &out, &found, &inflated, err, sizeof err),
			  (size_t)-1);
	ck_assert_ptr_nonnull(strstr(err, "from node 4"));
	cxs_dk_store_free(s2);
	cxs_dk_store_free(s);
	cxs_dk_chunks_free(ch, nch);
	cxs_lu_free(lu);
}
END_TEST

/*
 * cxs_lu_forget after CN 2 fails (log_unit.c, diktamo.h): its REPLs never
 * VALed (r2, two words of A) are dropped — they would hold word A's later
 * entry (CN 3's, VALed) out of the DRAM log for ever — and can no longer be
 * VALed; its VALed entry (B, committed: recovery needs it) stays, and so do
 * the un-VALed entries of other CNs: CN 1's core 2 (requester 0x102, whose
 * low byte is 2: a forget matching the core byte would drop it) and CN 3's.
 * The latest-version search that FETCH_LATEST runs (cxs_lu_latest) then
 * gives CN 3's value for A, first from the buffer, after a drain from the
 * DRAM log; nothing for A + 8 (only the dropped REPL wrote it); CN 2's value
 * for B; and its scan count shrinks by the dropped entries.
 */
START_TEST(forget_drops_a_dead_writers_unvaled_repls_only)
{
	struct cxs_stats *st = cxs_stats_new();
	struct cxs_lu *lu = lu_with(16, 0, 0, st);
	const uint64_t A = UINT64_C(0x1000) << 6, B = UINT64_C(0x2000) << 6;
	const uint64_t vA1 = 0xa1, vA3 = 0xa3, vB = 0xb2, vB1 = 0xb1;
	const uint64_t words[3] = {A, A + 8, B};
	struct cxs_dk_entry out[3];
	uint8_t found[3];
	uint32_t moved = 0;

	repl1(lu, 0, 0x201, 1, A, vA1);
	val_ok(lu, 0x201, 1, 0, stamp(1, 1));
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 1);
	const uint64_t a2[2] = {A, A + 8}, v2[2] = {0xdead, 0xbeef};
	ck_assert_uint_ne(cxs_lu_repl(lu, 0, 0x201, 2, a2, v2, 2, false), CXS_TIME_INF);
	repl1(lu, 0, 0x300, 1, A, vA3);
	val_ok(lu, 0x300, 1, 0, stamp(2, 1));
	repl1(lu, 0, 0x201, 3, B, vB);
	val_ok(lu, 0x201, 3, 1, stamp(5, 1));
	repl1(lu, 0, 0x102, 1, B, vB1); /* not VALed yet */
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 0); /* A and B are both blocked */
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 16 - 5);
	ck_assert_uint_eq(cxs_lu_latest(lu, words, 3, out, found), 5 + 1);
	ck_assert(found[0] && !found[1] && found[2]);
	ck_assert_uint_eq(out[0].value, vA3);

	ck_assert_uint_eq(cxs_lu_forget(lu, 2), 2);
	ck_assert_uint_eq(counter(st, "forgotten_entries"), 2);
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 16 - 3);
	struct seen s = snapshot(lu);
	ck_assert_uint_eq(count_where(&s, 0), 3);
	ck_assert_uint_eq(s.e[0].requester, 0x300);
	ck_assert_uint_eq(s.e[1].requester, 0x201);
	ck_assert_uint_eq(s.e[1].value, vB);
	ck_assert(s.e[1].valid);
	ck_assert_uint_eq(s.e[2].requester, 0x102);
	ck_assert(!s.e[2].valid);
	seen_free(&s);
	ck_assert_int_eq(cxs_lu_val(lu, 0, 0x201, 2, 1, stamp(3, 1), NULL, NULL, err, sizeof err),
			 -1);

	/* The search right after the forget: from the buffer. */
	memset(out, 0, sizeof out);
	ck_assert_uint_eq(cxs_lu_latest(lu, words, 3, out, found), 3 + 1);
	ck_assert(found[0] && !found[1] && found[2]);
	ck_assert_uint_eq(out[0].value, vA3);
	ck_assert_uint_eq(out[0].stamp, stamp(2, 1));
	ck_assert_uint_eq(out[0].requester, 0x300);
	ck_assert_uint_eq(out[2].value, vB);
	ck_assert_uint_eq(out[2].stamp, stamp(5, 1));

	/* A moves (CN 3's entry after CN 2's); B still waits for CN 1's VAL. */
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 1);
	s = snapshot(lu);
	ck_assert_uint_eq(count_where(&s, 1), 2);
	ck_assert_uint_eq(dram_at(&s, 0)->value, vA1);
	ck_assert_uint_eq(dram_at(&s, 1)->value, vA3);
	seen_free(&s);
	memset(out, 0, sizeof out);
	ck_assert_uint_eq(cxs_lu_latest(lu, words, 3, out, found), 2 + 2);
	ck_assert(found[0] && !found[1] && found[2]);
	ck_assert_uint_eq(out[0].value, vA3);
	ck_assert_uint_eq(out[0].stamp, stamp(2, 1));
	ck_assert_uint_eq(out[2].value, vB);

	/* Nothing more of CN 2 to forget; CN 1 (failing too) had one. */
	ck_assert_uint_eq(cxs_lu_forget(lu, 2), 0);
	ck_assert_uint_eq(cxs_lu_forget(lu, 7), 0);
	ck_assert_uint_eq(cxs_lu_forget(lu, 1), 1);
	ck_assert_uint_eq(counter(st, "forgotten_entries"), 3);
	cxs_lu_drain(lu, 0, &moved);
	ck_assert_uint_eq(moved, 1);
	ck_assert_uint_eq(cxs_lu_sram_free(lu), 16);
	memset(out, 0, sizeof out);
	ck_assert_uint_eq(cxs_lu_latest(lu, words, 3, out, found), 3);
	ck_assert(found[0] && !found[1] && found[2]);
	ck_assert_uint_eq(out[2].value, vB);
	ck_assert_uint_eq(out[2].requester, 0x201);
	cxs_lu_free(lu);
	cxs_stats_free(st);
}
END_TEST

/* ---- the SRAM Log Buffer against a reference model ---------------------------------- */

/*
 * The reference: the buffer as an array in arrival order and every rule of
 * log_unit.c's header stated directly, with no candidate list, no word
 * table and no chains — a drain looks at every word, a VAL at every entry.
 * It keeps the counters the unit keeps; the DRAM log is the unit's own
 * (dumps are kept whole: keep_all), so an entry appended in another order,
 * a word moved too early or too late, a VAL accepted or refused otherwise,
 * or a counter off by one shows at the step that caused it.
 */
#define REF_MAX 4096
struct ref_entry {
	struct cxs_dk_entry e;
	uint32_t idx;
	uint64_t seq;
};

struct ref_lu {
	uint32_t cap, max_log, wm;
	bool check_dram;
	struct ref_entry buf[REF_MAX];
	uint32_t nbuf;
	struct cxs_dk_entry log[REF_MAX];
	uint32_t nlog;
	uint64_t seq_last[256];
	uint64_t round_moved;
	uint64_t repls, refused, logged, vals, reordered, behind, spilled, forgotten, drained,
		drain_busy, dram_full, sram_peak, dram_peak, round_peak, dumps, dump_entries;
};

static const char *const ref_counters[] = {
	"repls",	   "repls_refused",    "entries_logged",   "vals",
	"vals_reordered",  "vals_behind",      "spilled_entries",  "forgotten_entries",
	"drained_entries", "drain_busy_ps",    "dram_full_drains", "sram_peak_entries",
	"dram_peak_bytes", "round_peak_bytes", "dumps",		   "dump_entries",
};

static void ref_counter_values(const struct ref_lu *r, uint64_t *v)
{
	const uint64_t x[] = {r->repls,	      r->refused,    r->logged,	    r->vals,
			      r->reordered,   r->behind,     r->spilled,    r->forgotten,
			      r->drained,     r->drain_busy, r->dram_full,  r->sram_peak,
			      r->dram_peak,   r->round_peak, r->dumps,	    r->dump_entries};
	_Static_assert(sizeof x / sizeof x[0] == sizeof ref_counters / sizeof ref_counters[0],
		       "one value per counter");
	memcpy(v, x, sizeof x);
}

static void ref_max(uint64_t *c, uint64_t v)
{
	if (v > *c)
		*c = v;
}

static uint64_t ref_unwrap(const struct ref_lu *r, uint32_t cn, uint8_t ts)
{
	uint64_t last = r->seq_last[cn & 0xff];
	if (last == 0)
		return (UINT64_C(1) << 32) + ts;
	uint32_t d = (uint32_t)(ts - (last & 0x7f)) & 0x7f;
	return d <= 63 ? last + d : last - (128 - d);
}

static cxs_time ref_repl(struct ref_lu *r, cxs_time now, uint32_t req, uint32_t repl,
			 const uint64_t *a, const uint64_t *v, uint32_t n, bool spill)
{
	if (r->nbuf + n > r->cap) {
		if (!spill) {
			r->refused++;
			return CXS_TIME_INF;
		}
		r->spilled += n;
	}
	ck_assert_uint_le(r->nbuf + n, REF_MAX);
	for (uint32_t i = 0; i < n; i++)
		r->buf[r->nbuf++] = (struct ref_entry){
			.e = {.addr = a[i], .value = v[i], .requester = req, .repl = repl}, .idx = i};
	r->repls++;
	r->logged += n;
	ref_max(&r->sram_peak, r->nbuf);
	return now + SRAM;
}

/* The word's latest in the DRAM log as the index keeps it: largest stamp, the later of equals. */
static const struct cxs_dk_entry *ref_dram_latest(const struct ref_lu *r, uint64_t addr)
{
	const struct cxs_dk_entry *best = NULL;
	for (uint32_t p = 0; p < r->nlog; p++)
		if (r->log[p].addr == addr && (best == NULL || r->log[p].stamp >= best->stamp))
			best = &r->log[p];
	return best;
}

static int ref_val(struct ref_lu *r, uint32_t req, uint32_t repl, uint8_t ts, uint64_t s0,
		   const uint64_t *stamps, const uint64_t *values)
{
	uint32_t cn = req >> 8, mine[64], m = 0;
	ts &= 0x7f;
	uint64_t seq = ref_unwrap(r, cn, ts);
	for (uint32_t k = 0; k < r->nbuf; k++)
		if (r->buf[k].e.requester >> 8 == cn && r->buf[k].e.repl == repl) {
			if (r->buf[k].e.valid)
				return -1; /* a second VAL */
			mine[m++] = k;
		}
	if (m == 0)
		return -1; /* not in the buffer */
	bool behind = false;
	for (uint32_t j = 0; j < m; j++) {
		const struct ref_entry *b = &r->buf[mine[j]];
		uint64_t st = stamps ? stamps[b->idx] : s0 + b->idx;
		for (uint32_t k = 0; k < r->nbuf; k++) {
			const struct ref_entry *o = &r->buf[k];
			if (!o->e.valid || o->e.addr != b->e.addr)
				continue;
			behind |= o->e.stamp > st;
			if (o->e.stamp == st)
				return -1;
			if (o->e.requester >> 8 == cn && (o->seq < seq) != (o->e.stamp < st))
				return -1;
		}
		const struct cxs_dk_entry *d = ref_dram_latest(r, b->e.addr);
		if (r->check_dram && d != NULL && d->stamp >= st)
			return -1;
	}
	for (uint32_t j = 0; j < m; j++) {
		struct ref_entry *b = &r->buf[mine[j]];
		b->e.stamp = stamps ? stamps[b->idx] : s0 + b->idx;
		b->e.ts = ts;
		b->e.valid = 1;
		b->seq = seq;
		if (values)
			b->e.value = values[b->idx];
	}
	if (seq > r->seq_last[cn & 0xff])
		r->seq_last[cn & 0xff] = seq;
	else if (r->seq_last[cn & 0xff] != 0)
		r->reordered++;
	r->behind += behind;
	r->vals++;
	return 0;
}

/*
 * A word moves when all its buffer entries are VALed, all of them; the moved
 * entries keep their arrival positions across words, and each word's
 * positions take its entries in stamp order; a full DRAM log cuts that
 * sequence to a prefix.
 */
static cxs_time ref_drain(struct ref_lu *r, cxs_time now, uint32_t *moved)
{
	static uint32_t out[REF_MAX], below[REF_MAX];
	static uint8_t gone[REF_MAX], blocked[REF_MAX];
	for (uint32_t q = 0; q < r->nbuf; q++) {
		below[q] = 0;
		blocked[q] = 0;
		for (uint32_t t = 0; t < r->nbuf; t++) {
			if (r->buf[t].e.addr != r->buf[q].e.addr)
				continue;
			below[q] += r->buf[t].e.stamp < r->buf[q].e.stamp;
			blocked[q] |= !r->buf[t].e.valid;
		}
	}
	uint32_t npos = 0;
	for (uint32_t k = 0; k < r->nbuf; k++) {
		if (blocked[k])
			continue;
		uint32_t rank = 0; /* the word's entries before k */
		for (uint32_t q = 0; q < k; q++)
			rank += r->buf[q].e.addr == r->buf[k].e.addr;
		for (uint32_t q = 0; q < r->nbuf; q++)
			if (r->buf[q].e.addr == r->buf[k].e.addr && below[q] == rank)
				out[npos] = q;
		npos++;
	}
	uint32_t m = 0;
	memset(gone, 0, r->nbuf);
	for (uint32_t i = 0; i < npos; i++) {
		if (r->nlog == r->max_log) {
			r->dram_full++;
			break;
		}
		r->log[r->nlog++] = r->buf[out[i]].e;
		gone[out[i]] = 1;
		m++;
	}
	*moved = m;
	if (m == 0)
		return now;
	uint32_t w = 0;
	for (uint32_t k = 0; k < r->nbuf; k++)
		if (!gone[k])
			r->buf[w++] = r->buf[k];
	r->nbuf = w;
	r->drained += m;
	r->drain_busy += (uint64_t)m * CYCLE;
	ref_max(&r->dram_peak, (uint64_t)r->nlog * CXS_DK_ENTRY_BYTES);
	r->round_moved += m;
	ref_max(&r->round_peak, r->round_moved * CXS_DK_ENTRY_BYTES);
	return now + (cxs_time)m * CYCLE;
}

static size_t ref_forget(struct ref_lu *r, uint32_t cn)
{
	uint32_t w = 0;
	size_t gone = 0;
	for (uint32_t k = 0; k < r->nbuf; k++) {
		if (!r->buf[k].e.valid && r->buf[k].e.requester >> 8 == cn)
			gone++;
		else
			r->buf[w++] = r->buf[k];
	}
	r->nbuf = w;
	r->forgotten += gone;
	return gone;
}

static bool same_entry(const struct cxs_dk_entry *a, const struct cxs_dk_entry *b)
{
	return a->addr == b->addr && a->value == b->value && a->stamp == b->stamp &&
	       a->requester == b->requester && a->repl == b->repl && a->ts == b->ts &&
	       a->valid == b->valid;
}

/* The unit's buffer, DRAM log, counters and free room against the reference's. */
static void ref_compare(const struct ref_lu *r, struct cxs_lu *lu, const struct cxs_stats *st,
			uint32_t step)
{
	struct seen s = snapshot(lu);
	if (s.n != (size_t)r->nbuf + r->nlog)
		ck_abort_msg("step %u: %zu entries, reference %u + %u", step, s.n, r->nbuf, r->nlog);
	for (size_t i = 0; i < s.n; i++) {
		int where = i >= r->nbuf;
		const struct cxs_dk_entry *want = where ? &r->log[i - r->nbuf] : &r->buf[i].e;
		if (s.where[i] != where || !same_entry(&s.e[i], want))
			ck_abort_msg("step %u: %s entry %zu is word %#lx stamp %#lx (CN %u REPL %u), "
				     "reference word %#lx stamp %#lx (CN %u REPL %u)",
				     step, where ? "DRAM log" : "buffer", where ? i - r->nbuf : i,
				     (unsigned long)s.e[i].addr, (unsigned long)s.e[i].stamp,
				     s.e[i].requester >> 8, s.e[i].repl, (unsigned long)want->addr,
				     (unsigned long)want->stamp, want->requester >> 8, want->repl);
	}
	seen_free(&s);
	uint64_t v[sizeof ref_counters / sizeof ref_counters[0]];
	ref_counter_values(r, v);
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		if (counter(st, ref_counters[i]) != v[i])
			ck_abort_msg("step %u: lu/%s is %lu, reference %lu", step, ref_counters[i],
				     (unsigned long)counter(st, ref_counters[i]), (unsigned long)v[i]);
	uint32_t free_want = r->nbuf < r->cap ? r->cap - r->nbuf : 0;
	if (cxs_lu_sram_free(lu) != free_want || cxs_lu_needs_flush(lu) != (r->nlog >= r->wm))
		ck_abort_msg("step %u: free %u (reference %u), needs_flush %d", step,
			     cxs_lu_sram_free(lu), free_want, cxs_lu_needs_flush(lu));
}

/* A REPL accepted and not VALed yet, with the TS and stamps its CN gave it. */
struct ref_pending {
	uint32_t req, repl, n;
	uint8_t ts;
	uint64_t s0;
};

/*
 * Random REPL / VAL / drain / forget / spill / dump / search sequences on
 * a few words (so that words have several entries, from several CNs), with
 * VALs delivered out of order within a window and a share of them wrong
 * (second VALs, unknown REPLs, stamps taken twice, TSs that disagree with
 * the stamps, stamps below the DRAM log's): every step compared with the
 * reference. Buffers of 6 to 40 entries against DRAM logs of 9 to 600, with
 * and without the VAL's DRAM check.
 */
/* Hot loops test with if and fail with ck_abort_msg (see check_groups). */
#define REF_EQ(got, want, what)                                                              \
	do {                                                                                 \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                        \
		if (g_ != w_)                                                                \
			ck_abort_msg("step %u: %s is %lu, reference %lu", step, what,         \
				     (unsigned long)g_, (unsigned long)w_);                   \
	} while (0)

START_TEST(buffer_matches_a_reference_model)
{
	static const struct {
		uint32_t cap, dram, words, steps, dump_pct;
		bool check_dram;
	} cfg[] = {
		{6, 9, 6, 6000, 1, true},      {12, 40, 10, 8000, 1, true},
		{40, 600, 24, 8000, 0, true},  {10, 30, 8, 6000, 1, false},
		{16, 600, 5, 6000, 0, true},
	};
	static struct ref_lu r;
	for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		rng_state = 0x9e3779b97f4a7c15u ^ (c + 1) * 0x51ed27u;
		struct cxs_stats *st = cxs_stats_new();
		struct cxs_lu_params p;
		cxs_lu_default_params(&p);
		p.sram_bytes = cfg[c].cap * CXS_DK_ENTRY_BYTES;
		p.dram_bytes = (uint64_t)cfg[c].dram * CXS_DK_ENTRY_BYTES;
		p.check_dram = cfg[c].check_dram;
		p.zlib_level = 1;
		struct cxs_lu *lu = cxs_lu_new(&p, 3, st);
		ck_assert_ptr_nonnull(lu);
		memset(&r, 0, sizeof r);
		r.cap = cfg[c].cap;
		r.max_log = cfg[c].dram;
		r.check_dram = cfg[c].check_dram;
		double wm = p.watermark * r.max_log;
		r.wm = (uint32_t)wm + ((double)(uint32_t)wm < wm);
		struct ref_pending pend[256];
		uint32_t npend = 0, repl_next[5] = {0}, tsn[5] = {0};
		uint64_t next_stamp = 8;
		uint32_t refused_vals = 0, accepted_vals = 0, second_vals = 0;
		for (uint32_t step = 0; step < cfg[c].steps; step++) {
			uint32_t op = (uint32_t)(rnd() % 100), moved, rmoved;
			if (op < 34 && npend < 256) {
				uint32_t cn = (uint32_t)(rnd() % 4), n = 1 + (uint32_t)(rnd() % 4);
				uint32_t req = cn << 8 | (uint32_t)(rnd() % 3);
				uint64_t a[4], v[4];
				for (uint32_t i = 0; i < n; i++) {
					bool again;
					do {
						a[i] = 0x40000 + 8 * (rnd() % cfg[c].words);
						again = false;
						for (uint32_t j = 0; j < i; j++)
							again |= a[j] == a[i];
					} while (again);
					v[i] = rnd();
				}
				bool spill = rnd() % 4 == 0 && r.nbuf < REF_MAX - 64;
				cxs_time t = cxs_lu_repl(lu, 100, req, repl_next[cn], a, v, n, spill);
				REF_EQ(t, ref_repl(&r, 100, req, repl_next[cn], a, v, n, spill), "REPL time");
				if (t != CXS_TIME_INF) {
					pend[npend++] = (struct ref_pending){req, repl_next[cn], n,
									     (uint8_t)(tsn[cn]++ & 0x7f),
									     next_stamp};
					next_stamp += 8;
				}
				repl_next[cn]++;
			} else if (op < 74 && npend > 0) {
				/* A VAL, mostly of the first few pending; some of them wrong. */
				uint32_t q = (uint32_t)(rnd() % 4 == 0 ? rnd() % npend
								       : rnd() % (npend < 6 ? npend : 6));
				struct ref_pending x = pend[q];
				uint32_t bad = (uint32_t)(rnd() % 32);
				uint64_t stamps[4], values[4], *sp = NULL, *vp = NULL;
				if (bad == 0)
					x.ts = (uint8_t)rnd(); /* a TS that may disagree */
				else if (bad == 1 && r.nbuf > 0)
					x.s0 = r.buf[rnd() % r.nbuf].e.stamp; /* maybe a stamp taken */
				else if (bad == 2 && r.nlog > 0)
					x.s0 = r.log[rnd() % r.nlog].stamp; /* maybe not above the log */
				else if (bad == 3)
					x.repl += 1000000; /* no such REPL */
				if (rnd() % 3 == 0) {
					for (uint32_t i = 0; i < x.n; i++)
						stamps[i] = x.s0 + (x.n - 1 - i); /* the words in reverse */
					sp = stamps;
				}
				if (rnd() % 4 == 0) {
					for (uint32_t i = 0; i < x.n; i++)
						values[i] = rnd();
					vp = values;
				}
				int rc = cxs_lu_val(lu, 0, x.req, x.repl, x.ts, x.s0, sp, vp, err, sizeof err);
				REF_EQ(rc, ref_val(&r, x.req, x.repl, x.ts, x.s0, sp, vp), "VAL's rc");
				/*
				 * Done, or refused for good (a wrong VAL accepted before
				 * may have taken its stamp): its CN gives up on it, and a
				 * forget drops its entries.
				 */
				if (rc == 0 || (bad > 3 && rnd() % 2 == 0)) {
					memmove(&pend[q], &pend[q + 1], (npend - q - 1) * sizeof *pend);
					npend--;
				}
				accepted_vals += rc == 0;
				refused_vals += rc != 0;
			} else if (op < 78 && r.nbuf > 0) {
				/* A second VAL of a VALed entry's REPL. */
				const struct cxs_dk_entry *e = &r.buf[rnd() % r.nbuf].e;
				if (e->valid) {
					uint32_t req = e->requester, repl = e->repl;
					REF_EQ(cxs_lu_val(lu, 0, req, repl, e->ts, next_stamp, NULL, NULL, err,
							  sizeof err),
					       -1, "second VAL's rc");
					REF_EQ(ref_val(&r, req, repl, 0, next_stamp, NULL, NULL), -1,
					       "reference's second VAL");
					second_vals++;
				}
			} else if (op < 94) {
				cxs_time t = cxs_lu_drain(lu, 500, &moved);
				REF_EQ(t, ref_drain(&r, 500, &rmoved), "drain's time");
				REF_EQ(moved, rmoved, "moved");
			} else if (op < 95) {
				uint32_t cn = (uint32_t)(rnd() % 5);
				REF_EQ(cxs_lu_forget(lu, cn), ref_forget(&r, cn), "forgotten");
				uint32_t w = 0;
				for (uint32_t k = 0; k < npend; k++)
					if (pend[k].req >> 8 != cn)
						pend[w++] = pend[k];
				npend = w;
			} else if (op < 95 + cfg[c].dump_pct || r.nlog == r.max_log) {
				struct cxs_dk_chunk *ch;
				size_t nch;
				cxs_time done;
				REF_EQ(cxs_lu_dump(lu, 0, keep_all, dest_zero, NULL, 1, &ch, &nch, &done), 0,
				       "dump's rc");
				cxs_dk_chunks_free(ch, nch);
				r.dumps++;
				r.dump_entries += r.nlog;
				r.nlog = 0;
				r.round_moved = 0;
			} else {
				uint64_t w[41];
				struct cxs_dk_entry out[41];
				uint8_t found[41];
				for (uint32_t i = 0; i <= cfg[c].words; i++)
					w[i] = 0x40000 + 8 * i; /* the last one never written */
				REF_EQ(cxs_lu_latest(lu, w, cfg[c].words + 1, out, found), r.nbuf + r.nlog,
				       "entries scanned");
				for (uint32_t i = 0; i <= cfg[c].words; i++) {
					const struct cxs_dk_entry *best = ref_dram_latest(&r, w[i]);
					for (uint32_t k = 0; k < r.nbuf; k++)
						if (r.buf[k].e.valid && r.buf[k].e.addr == w[i] &&
						    (best == NULL || r.buf[k].e.stamp > best->stamp))
							best = &r.buf[k].e;
					REF_EQ(found[i], best != NULL, "found");
					if (best != NULL && !same_entry(&out[i], best))
						ck_abort_msg("step %u: latest of word %#lx differs", step,
							     (unsigned long)w[i]);
				}
			}
			ref_compare(&r, lu, st, step);
		}
		fprintf(stderr, "reference model %zu: %lu drained, %lu spilled, %lu refused REPLs, %u/%u VALs "
		       "refused, %lu behind, %lu reordered, %lu full drains, %lu forgotten, peak %lu\n",
		       c, (unsigned long)r.drained, (unsigned long)r.spilled, (unsigned long)r.refused,
		       refused_vals, refused_vals + accepted_vals, (unsigned long)r.behind,
		       (unsigned long)r.reordered, (unsigned long)r.dram_full,
		       (unsigned long)r.forgotten, (unsigned long)r.sram_peak);
		/* The scenarios reached what they are for. */
		ck_assert_uint_gt(r.spilled, 0);
		ck_assert_uint_gt(r.refused, 0);
		ck_assert_uint_gt(r.forgotten, 0);
		ck_assert_uint_gt(r.behind, 0);
		ck_assert_uint_gt(r.reordered, 0);
		ck_assert_uint_gt(r.dram_full, 0);
		ck_assert_uint_gt(refused_vals, 0);
		ck_assert_uint_gt(second_vals, 0);
		ck_assert_uint_gt(accepted_vals, cfg[c].steps / 12);
		ck_assert_uint_gt(r.drained, cfg[c].steps / 12);
		cxs_lu_free(lu);
		cxs_stats_free(st);
	}
}
END_TEST

Suite *diktamo_suite(void)
{
	Suite *s = suite_create("diktamo");
	TCase *tc = tcase_create("replicas");
	tcase_add_test(tc, groups_are_distinct_and_balanced);
	tcase_add_test(tc, groups_with_dead_cns);
	tcase_add_test(tc, savers_are_even_and_independent_of_the_group);
	suite_add_tcase(s, tc);
	tc = tcase_create("timestamps");
	tcase_add_test(tc, ts_before_wraps_at_128);
	tcase_add_test(tc, reordered_vals_of_one_word_land_in_stamp_order);
	tcase_add_test(tc, ts_stamp_disagreement_is_refused);
	tcase_add_test(tc, two_cns_second_val_overtakes_the_first);
	tcase_add_test(tc, val_protocol_errors);
	tcase_add_test(tc, spill_takes_a_repl_past_a_full_buffer);
	suite_add_tcase(s, tc);
	tc = tcase_create("buffer");
	tcase_add_test(tc, buffer_backpressure_and_resumption);
	tcase_add_test(tc, drain_keeps_arrival_order_and_stamp_order_per_word);
	tcase_add_test(tc, non_valed_entries_never_reach_the_dram_log);
	tcase_add_test(tc, full_dram_log_moves_a_prefix_and_asks_for_a_flush);
	tcase_add_test(tc, watermark);
	tcase_add_test(tc, buffer_matches_a_reference_model);
	suite_add_tcase(s, tc);
	tc = tcase_create("format");
	tcase_add_test(tc, compression_round_trips);
	tcase_add_test(tc, chains_same_bytes_at_any_thread_count);
	tcase_add_test(tc, encode_keeps_valid_entries_only);
	tcase_add_test(tc, decode_refuses_truncated_and_corrupt_logs);
	tcase_add_test(tc, inflate_refuses_truncated_and_corrupt_input);
	suite_add_tcase(s, tc);
	tc = tcase_create("search");
	tcase_add_test(tc, lu_latest_matches_brute_force);
	tcase_add_test(tc, forget_drops_a_dead_writers_unvaled_repls_only);
	tcase_add_test(tc, streamed_dumps_are_the_dumps);
	tcase_add_test(tc, dump_splits_by_destination_and_keep);
	tcase_add_test(tc, store_latest_matches_brute_force);
	tcase_add_test(tc, store_refuses_a_corrupt_chunk);
	suite_add_tcase(s, tc);
	return s;
}
