/*
 * Unit tests for cxs_parse_rank_map (src/app/rank_map.c): the plain and the
 * repeat forms give the same map, separators are blanks or commas, and every
 * kind of mistake (count, rank range, syntax, overflow, zero repeat) is an
 * error whose message names engine.map and the offending entry. Every parse
 * writes into an array with a guard word behind it, so a parser that writes
 * past nnodes fails the test even without ASan.
 *
 * cxs_balanced_rank_map: 16 CNs + 16 MNs (the 16x4 run) spread evenly at 2,
 * 3 and 4 ranks with the heavy type's remainder and the light type's
 * remainders on different ranks; cxs_parse_weights: overrides, unknown
 * types and bad numbers.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "rank_map_priv.h"
#include "unit_suites.h"

#define MAXN 16
#define GUARD UINT32_C(0xdeadbeef)

struct parse {
	int rc;
	uint32_t map[MAXN + 1]; /* map[nnodes] is the guard */
	char err[256];
};

static struct parse run(const char *s, uint32_t nnodes, uint32_t nranks)
{
	struct parse r;

	ck_assert_uint_le(nnodes, MAXN);
	memset(&r, 0, sizeof(r));
	for (int i = 0; i <= MAXN; i++)
		r.map[i] = GUARD;
	r.rc = cxs_parse_rank_map(s, nnodes, nranks, r.map, r.err, sizeof(r.err));
	ck_assert_uint_eq(r.map[nnodes], GUARD);
	return r;
}

static void expect_map(const char *s, uint32_t nranks, const uint32_t *want, uint32_t n)
{
	struct parse r = run(s, n, nranks);

	ck_assert_msg(r.rc == 0, "\"%s\" rejected: %s", s, r.err);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_msg(r.map[i] == want[i], "\"%s\": node %u on rank %u, want %u", s, i,
			      r.map[i], want[i]);
}

/* Rejects s; the message must name engine.map and contain `needle`. */
static void expect_error(const char *s, uint32_t nnodes, uint32_t nranks, const char *needle)
{
	struct parse r = run(s, nnodes, nranks);

	ck_assert_msg(r.rc == -1, "\"%s\" accepted", s);
	ck_assert_msg(strncmp(r.err, "engine.map: ", 12) == 0, "\"%s\": message \"%s\"", s, r.err);
	ck_assert_msg(strstr(r.err, needle) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", s, r.err,
		      needle);
	ck_assert_ptr_null(strchr(r.err, '\n'));
}

START_TEST(test_plain_list)
{
	static const uint32_t want[] = { 0, 0, 0, 1, 1, 2 };

	expect_map("0 0 0 1 1 2", 3, want, 6);
}
END_TEST

START_TEST(test_repeat_form_equals_plain)
{
	static const uint32_t want[] = { 0, 0, 0, 1, 1, 2 };

	expect_map("0*3 1*2 2", 3, want, 6);
	expect_map("0*3 1 1 2*1", 3, want, 6);
	expect_map("0 * 3, 1 *2 ,2", 3, want, 6);
}
END_TEST

START_TEST(test_separators_and_order)
{
	static const uint32_t want[] = { 2, 0, 1, 0 };

	/* blanks, tabs and commas, leading and trailing; nodes need not go in rank order */
	expect_map("  2,0\t1 , 0,", 3, want, 4);
	expect_map("2 0 1 0", 3, want, 4);
}
END_TEST

START_TEST(test_single_rank_and_big_ranks)
{
	static const uint32_t zeros[] = { 0, 0, 0, 0, 0 };
	static const uint32_t high[] = { 4294967294u, 7 };

	expect_map("0*5", 1, zeros, 5);
	expect_map("4294967294 7", UINT32_MAX, high, 2);
}
END_TEST

START_TEST(test_wrong_count)
{
	expect_error("0 1", 3, 2, "for 2 nodes");
	expect_error("0*4", 3, 2, "for 4 nodes");
	expect_error("0 1 1 0", 3, 2, "each of the 3 nodes");
	expect_error("", 3, 2, "for 0 nodes");
	expect_error(" ,\t", 3, 2, "for 0 nodes");
	/* a huge repeat is reported, not written out node by node */
	expect_error("0*4000000000", 3, 2, "for 4000000000 nodes");
	expect_error("0*2 1*4294967295", 3, 2, "for 4294967297 nodes");
}
END_TEST

START_TEST(test_rank_out_of_range)
{
	expect_error("0 3 1", 3, 3, "rank 3");
	expect_error("0 3 1", 3, 3, "entry 2");
	expect_error("1*3", 3, 1, "rank 1");
}
END_TEST

START_TEST(test_garbage)
{
	expect_error("0 x 1", 3, 2, "entry 2");
	expect_error("0 x 1", 3, 2, "\"x\"");
	expect_error("0*", 3, 2, "rank*count");
	expect_error("*2 0", 3, 2, "entry 1");
	expect_error("-1 0 0", 3, 2, "\"-1\"");
	expect_error("0 1-2", 2, 3, "\"1-2\"");
	expect_error("0*3x", 3, 2, "\"0*3x\"");
	expect_error("0*2*1 1", 3, 2, "entry 1");
	expect_error("0;1", 2, 2, "entry 1");
	expect_error("0 1.0", 2, 2, "\"1.0\"");
	expect_error("0 abcdefghijklmnopqrstuvwxyz0123456789", 2, 2, "...\"");
}
END_TEST

START_TEST(test_number_too_large)
{
	expect_error("4294967296", 1, 2, "too large");
	expect_error("0*99999999999999999999", 1, 2, "too large");
}
END_TEST

START_TEST(test_zero_repeat)
{
	expect_error("0*0 1 1", 2, 2, "repeat count 0");
}
END_TEST

/* 16 CNs of weight w then 16 MNs of weight 1, mapped over nranks ranks. */
static void map_16x4(double w, uint32_t nranks, uint32_t *out)
{
	double weight[32];
	uint32_t kind[32];

	for (int n = 0; n < 32; n++) {
		weight[n] = n < 16 ? w : 1.0;
		kind[n] = n < 16 ? 0 : 1;
	}
	ck_assert_int_eq(cxs_balanced_rank_map(weight, kind, 2, 32, nranks, out), 0);
}

START_TEST(test_balanced_spreads_each_type)
{
	for (uint32_t R = 1; R <= 5; R++) {
		uint32_t out[32], cn[8] = {0}, mn[8] = {0};
		double load[8] = {0};

		map_16x4(8.0, R, out);
		for (int n = 0; n < 32; n++) {
			ck_assert_uint_lt(out[n], R);
			(n < 16 ? cn : mn)[out[n]]++;
			load[out[n]] += n < 16 ? 8.0 : 1.0;
		}
		for (uint32_t r = 0; r < R; r++) {
			ck_assert_msg(cn[r] == 16 / R || cn[r] == 16 / R + 1, "R=%u rank %u: %u CNs", R, r, cn[r]);
			ck_assert_msg(mn[r] == 16 / R || mn[r] == 16 / R + 1, "R=%u rank %u: %u MNs", R, r, mn[r]);
			/* A rank with an extra CN gets no extra MN while another rank lacks one. */
			if (16 % R != 0 && cn[r] == 16 / R + 1)
				ck_assert_msg(mn[r] == 16 / R, "R=%u rank %u: extra CN and extra MN", R, r);
		}
	}
}
END_TEST

START_TEST(test_balanced_two_ranks_is_round_robin_per_type)
{
	uint32_t out[32];

	map_16x4(8.0, 2, out);
	for (int n = 0; n < 32; n++)
		ck_assert_uint_eq(out[n], (uint32_t)n % 2);
}
END_TEST

START_TEST(test_balanced_heaviest_type_first)
{
	/* The light type listed first: the heavy one still sets the remainders. */
	double weight[5] = {1, 1, 9, 9, 9};
	uint32_t kind[5] = {1, 1, 0, 0, 0}, out[5];

	ck_assert_int_eq(cxs_balanced_rank_map(weight, kind, 2, 5, 2, out), 0);
	/* Heavy nodes 2, 3, 4 -> ranks 0, 1, 0; then both light ones split 1 + 1. */
	ck_assert_uint_eq(out[2], 0);
	ck_assert_uint_eq(out[3], 1);
	ck_assert_uint_eq(out[4], 0);
	ck_assert_uint_ne(out[0], out[1]);
}
END_TEST

START_TEST(test_weights_parse)
{
	const char *names[] = {"cn", "mn"};
	double w[2] = {8, 1};
	char err[256];

	ck_assert_int_eq(cxs_parse_weights("", names, 2, w, err, sizeof(err)), 0);
	ck_assert(w[0] == 8 && w[1] == 1);
	ck_assert_int_eq(cxs_parse_weights(" mn=2.5, cn=14 ", names, 2, w, err, sizeof(err)), 0);
	ck_assert(w[0] == 14 && w[1] == 2.5);
	ck_assert_int_eq(cxs_parse_weights("cm=3", names, 2, w, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "engine.weights: entry 1") && strstr(err, "cn, mn"), "%s", err);
	ck_assert_int_eq(cxs_parse_weights("cn=0", names, 2, w, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "positive"), "%s", err);
	ck_assert_int_eq(cxs_parse_weights("cn=4 mn=x", names, 2, w, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "entry 2"), "%s", err);
	ck_assert_int_eq(cxs_parse_weights("cn", names, 2, w, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "TYPE=WEIGHT"), "%s", err);
	ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

Suite *rank_map_suite(void)
{
	Suite *s = suite_create("rank_map");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_plain_list);
	tcase_add_test(tc, test_repeat_form_equals_plain);
	tcase_add_test(tc, test_separators_and_order);
	tcase_add_test(tc, test_single_rank_and_big_ranks);
	tcase_add_test(tc, test_wrong_count);
	tcase_add_test(tc, test_rank_out_of_range);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_number_too_large);
	tcase_add_test(tc, test_zero_repeat);
	tcase_add_test(tc, test_balanced_spreads_each_type);
	tcase_add_test(tc, test_balanced_two_ranks_is_round_robin_per_type);
	tcase_add_test(tc, test_balanced_heaviest_type_first);
	tcase_add_test(tc, test_weights_parse);
	suite_add_tcase(s, tc);
	return s;
}
