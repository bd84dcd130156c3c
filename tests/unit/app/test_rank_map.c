/*
 * Unit tests for cxs_parse_rank_map (src/app/rank_map.c): the plain and the
 * repeat forms give the same map, separators are blanks or commas, and every
 * kind of mistake (count, rank range, syntax, overflow, zero repeat) is an
 * error whose message names engine.map and the offending entry. Every parse
 * writes into an array with a guard word behind it, so a parser that writes
 * past nnodes fails the test even without ASan.
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
	suite_add_tcase(s, tc);
	return s;
}
