/*
 * Unit tests for the DRAM timing model (src/mem/dram.c): the calibration of
 * the defaults (45 ns idle row miss, 25.6 GB/s per channel), the row-buffer
 * and bank timing in exact picoseconds, the rise of latency with load,
 * statistics, determinism and parameter checks.
 *
 * Load points are per channel. The load test addresses a single channel
 * (line addresses that are multiples of nchannels) with random banks and
 * rows, so an arrival every 100 ns is ~2.5 % of that channel's 25.6 GB/s, one
 * every 5 ns is 50 %, and one every 1 ns (64 GB/s) is 2.5 times what the
 * channel can move: latency grows without bound there. Spreading the same
 * arrivals over all four channels would make "5 ns" only 12.5 % of the peak,
 * where a correct model barely queues.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cxlsim/dram.h"

/* Also declared in tests/unit/unit_suites.h once the runner collects it. */
Suite *dram_suite(void);

#define PS_NS CXS_PS_PER_NS

/* A DRAM with the default parameters; fails the test if init does. */
static void init_default(struct cxs_dram *d)
{
	struct cxs_dram_params p;
	char err[128] = "";

	cxs_dram_default(&p);
	ck_assert_msg(cxs_dram_init(d, &p, err, sizeof err) == 0, "init: %s", err);
}

/* xorshift64: a fixed stream so that every run sees the same addresses. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Mean latency in ps of n reads to random banks and rows of channel 0,
 * arriving every gap_ps.
 */
static double mean_latency_one_channel(cxs_time gap_ps, int n)
{
	struct cxs_dram d;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	double mean;

	init_default(&d);
	for (int i = 0; i < n; i++) {
		uint64_t line = (next_rand(&seed) % (UINT64_C(1) << 24)) * d.p.nchannels;
		cxs_dram_access(&d, (cxs_time)i * gap_ps, line, 0);
	}
	ck_assert_uint_eq(d.reads, (uint64_t)n);
	mean = (double)d.total_latency_ps / n;
	cxs_dram_destroy(&d);
	return mean;
}

/* ---- calibration ------------------------------------------------------ */

START_TEST(test_defaults_are_ddr4_3200)
{
	struct cxs_dram_params p;

	cxs_dram_default(&p);
	ck_assert_uint_eq(p.nchannels, 4);
	ck_assert_uint_eq(p.nbanks, 16);
	ck_assert_uint_eq(p.lines_per_row * 64, 8192);
	ck_assert_uint_eq(p.t_cas, 13750);
	ck_assert_uint_eq(p.t_rcd, 13750);
	ck_assert_uint_eq(p.t_rp, 13750);
	ck_assert_uint_eq(p.t_burst, 2500);
	/* 64 B per t_burst is 25.6 GB/s: 64e12 / 2500 ps = 25.6e9 B/s. */
	ck_assert_uint_eq(64 * CXS_PS_PER_S / p.t_burst, UINT64_C(25600000000));
}
END_TEST

START_TEST(test_idle_row_miss_is_45ns)
{
	struct cxs_dram d;
	cxs_time now = 1000 * PS_NS;

	init_default(&d);
	ck_assert_uint_eq(cxs_dram_idle_latency(&d.p), 45 * PS_NS);
	ck_assert_uint_eq(cxs_dram_access(&d, now, 12345, 0) - now, 45 * PS_NS);
	ck_assert_uint_eq(d.row_misses, 1);
	ck_assert_uint_eq(d.row_hits, 0);
	cxs_dram_destroy(&d);
}
END_TEST

START_TEST(test_row_hit_after_miss_is_faster)
{
	struct cxs_dram d;
	uint64_t same_row;

	init_default(&d);
	/* Same channel, bank and row as line 0: one full sweep of the banks later. */
	same_row = (uint64_t)d.p.nchannels * d.p.nbanks;
	ck_assert_uint_eq(cxs_dram_access(&d, 0, 0, 0), 45 * PS_NS);
	ck_assert_uint_eq(cxs_dram_access(&d, 100 * PS_NS, same_row, 0) - 100 * PS_NS,
			  d.p.t_ctrl + d.p.t_cas + d.p.t_burst);
	ck_assert_uint_lt(d.p.t_ctrl + d.p.t_cas + d.p.t_burst, 45 * PS_NS);
	ck_assert_uint_eq(d.row_hits, 1);
	ck_assert_uint_eq(d.row_misses, 1);
	cxs_dram_destroy(&d);
}
END_TEST

START_TEST(test_peak_bandwidth_stream)
{
	const uint64_t n = 100000;
	struct cxs_dram d;
	cxs_time last = 0;
	double ideal_ps, err;

	init_default(&d);
	for (uint64_t i = 0; i < n; i++) {
		cxs_time t = cxs_dram_access(&d, 0, i, 0);
		if (t > last)
			last = t;
	}
	/* N * 64 B at nchannels * 25.6 GB/s, in ps. */
	ideal_ps = (double)n * 64.0 / (d.p.nchannels * 25.6e9) * 1e12;
	err = ((double)last - ideal_ps) / ideal_ps;
	ck_assert_msg(err > -0.02 && err < 0.02, "stream of %llu lines took %.0f ps, ideal %.0f",
		      (unsigned long long)n, (double)last, ideal_ps);
	/* Every bus was busy for its share of the stream. */
	ck_assert_uint_eq(d.busy_bus_ps, n * d.p.t_burst);
	ck_assert_uint_eq(d.bytes, n * 64);
	cxs_dram_destroy(&d);
}
END_TEST

/* ---- load and conflicts ----------------------------------------------- */

START_TEST(test_latency_rises_with_load)
{
	const int n = 20000;
	double light = mean_latency_one_channel(100 * PS_NS, n);
	double heavy = mean_latency_one_channel(5 * PS_NS, n);
	double saturated = mean_latency_one_channel(1 * PS_NS, n);

	ck_assert_msg(light < heavy && heavy < saturated,
		      "mean latency (ns): light %.1f heavy %.1f saturated %.1f", light / 1e3,
		      heavy / 1e3, saturated / 1e3);
	ck_assert_msg(heavy / light > 1.5, "heavy/light = %.2f", heavy / light);
	/* Light load is nearly idle: random rows miss, so about 45 ns. */
	ck_assert_msg(light < 1.05 * 45 * PS_NS, "light %.1f ns", light / 1e3);
}
END_TEST

START_TEST(test_same_bank_different_rows_serialize)
{
	struct cxs_dram d;
	uint64_t other_row;
	cxs_time miss;

	init_default(&d);
	other_row = (uint64_t)d.p.nchannels * d.p.nbanks * d.p.lines_per_row;
	miss = d.p.t_rp + d.p.t_rcd + d.p.t_cas;
	ck_assert_uint_eq(cxs_dram_access(&d, 0, 0, 0), 45 * PS_NS);
	/* Bank 0 of channel 0 again, row 1: waits for the first array access. */
	ck_assert_uint_eq(cxs_dram_access(&d, 0, other_row, 0), 45 * PS_NS + miss);
	ck_assert_uint_eq(d.row_misses, 2);
	cxs_dram_destroy(&d);
}
END_TEST

START_TEST(test_different_banks_overlap)
{
	struct cxs_dram d;
	uint64_t next_bank;

	init_default(&d);
	next_bank = d.p.nchannels; /* channel 0, bank 1 */
	ck_assert_uint_eq(cxs_dram_access(&d, 0, 0, 0), 45 * PS_NS);
	/* Only the shared bus separates them: one burst later, not one miss later. */
	ck_assert_uint_eq(cxs_dram_access(&d, 0, next_bank, 0), 45 * PS_NS + d.p.t_burst);
	/* Another channel does not even share the bus. */
	ck_assert_uint_eq(cxs_dram_access(&d, 0, 1, 0), 45 * PS_NS);
	cxs_dram_destroy(&d);
}
END_TEST

/* ---- statistics and determinism --------------------------------------- */

START_TEST(test_statistics)
{
	struct cxs_dram d;
	cxs_time sum = 0;

	init_default(&d);
	for (uint64_t i = 0; i < 10; i++) {
		cxs_time now = i * 3 * PS_NS;
		sum += cxs_dram_access(&d, now, i * 7, (int)(i % 3 == 0)) - now;
	}
	ck_assert_uint_eq(d.writes, 4);
	ck_assert_uint_eq(d.reads, 6);
	ck_assert_uint_eq(d.row_hits + d.row_misses, 10);
	ck_assert_uint_eq(d.bytes, 640);
	ck_assert_uint_eq(d.busy_bus_ps, 10 * d.p.t_burst);
	ck_assert_uint_eq(d.total_latency_ps, sum);
	cxs_dram_destroy(&d);
}
END_TEST

/* Digest of the completion times of a random mixed workload. */
static uint64_t run_digest(struct cxs_dram *d)
{
	uint64_t seed = 42, h = 0xcbf29ce484222325ull;

	init_default(d);
	for (int i = 0; i < 5000; i++) {
		uint64_t r = next_rand(&seed);
		cxs_time t = cxs_dram_access(d, (cxs_time)i * 700, r % 100000, (int)(r >> 63));
		h = (h ^ t) * 0x100000001b3ull;
	}
	return h;
}

START_TEST(test_deterministic)
{
	struct cxs_dram a, b;
	uint64_t ha = run_digest(&a), hb = run_digest(&b);

	ck_assert_uint_eq(ha, hb);
	ck_assert_uint_eq(a.total_latency_ps, b.total_latency_ps);
	ck_assert_uint_eq(a.row_hits, b.row_hits);
	ck_assert_uint_eq(a.writes, b.writes);
	ck_assert_uint_gt(a.row_hits, 0);
	ck_assert_uint_gt(a.writes, 0);
	cxs_dram_destroy(&a);
	cxs_dram_destroy(&b);
}
END_TEST

/* ---- parameters ------------------------------------------------------- */

static void expect_rejected(const struct cxs_dram_params *p, const char *name)
{
	struct cxs_dram d;
	char err[128] = "";

	ck_assert_int_eq(cxs_dram_init(&d, p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, name) != NULL, "message \"%s\" does not name %s", err, name);
	ck_assert_ptr_null(strchr(err, '\n'));
	ck_assert_ptr_null(d.banks);
	cxs_dram_destroy(&d); /* safe after a failed init */
}

START_TEST(test_bad_params_rejected)
{
	struct cxs_dram_params def, p;

	cxs_dram_default(&def);
	p = def;
	p.nchannels = 0;
	expect_rejected(&p, "nchannels");
	p = def;
	p.nbanks = 0;
	expect_rejected(&p, "nbanks");
	p = def;
	p.lines_per_row = 0;
	expect_rejected(&p, "lines_per_row");
	p = def;
	p.t_burst = 0;
	expect_rejected(&p, "t_burst");
}
END_TEST

Suite *dram_suite(void)
{
	Suite *s = suite_create("dram");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults_are_ddr4_3200);
	tcase_add_test(tc, test_idle_row_miss_is_45ns);
	tcase_add_test(tc, test_row_hit_after_miss_is_faster);
	tcase_add_test(tc, test_peak_bandwidth_stream);
	tcase_add_test(tc, test_latency_rises_with_load);
	tcase_add_test(tc, test_same_bank_different_rows_serialize);
	tcase_add_test(tc, test_different_banks_overlap);
	tcase_add_test(tc, test_statistics);
	tcase_add_test(tc, test_deterministic);
	tcase_add_test(tc, test_bad_params_rejected);
	suite_add_tcase(s, tc);
	return s;
}
