/* Event queue: total order by (time, src, seq), pool reuse, large random workloads. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "event_queue_priv.h"
#include "unit_suites.h"

static struct cxs_event mk(cxs_time t, uint32_t src, uint64_t seq)
{
	struct cxs_event ev;
	memset(&ev, 0, sizeof ev);
	ev.time = t;
	ev.src = src;
	ev.seq = seq;
	ev.size = 8;
	memcpy(ev.data, &seq, sizeof seq);
	return ev;
}

START_TEST(test_empty)
{
	struct cxs_event_queue q;
	cxs_eq_init(&q);
	uint32_t slot;
	ck_assert_uint_eq(cxs_eq_size(&q), 0);
	ck_assert_uint_eq(cxs_eq_min_time(&q), CXS_TIME_INF);
	ck_assert_ptr_null(cxs_eq_pop(&q, &slot));
	cxs_eq_destroy(&q);
}
END_TEST

START_TEST(test_tie_break_src_then_seq)
{
	struct cxs_event_queue q;
	cxs_eq_init(&q);
	/* Same time: source 3 seq 1, source 1 seq 9, source 1 seq 2, source 3 seq 0. */
	struct cxs_event in[] = {mk(100, 3, 1), mk(100, 1, 9), mk(100, 1, 2), mk(100, 3, 0),
				 mk(50, 7, 7), mk(100, CXS_SRC_ENGINE, 0)};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
		ck_assert_int_eq(cxs_eq_insert(&q, &in[i]), 0);
	struct { cxs_time t; uint32_t src; uint64_t seq; } want[] = {
		{50, 7, 7}, {100, 1, 2}, {100, 1, 9}, {100, 3, 0}, {100, 3, 1},
		{100, CXS_SRC_ENGINE, 0}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint32_t slot;
		struct cxs_event *ev = cxs_eq_pop(&q, &slot);
		ck_assert_ptr_nonnull(ev);
		ck_assert_uint_eq(ev->time, want[i].t);
		ck_assert_uint_eq(ev->src, want[i].src);
		ck_assert_uint_eq(ev->seq, want[i].seq);
		uint64_t payload;
		memcpy(&payload, ev->data, sizeof payload);
		ck_assert_uint_eq(payload, want[i].seq);
		cxs_eq_release(&q, slot);
	}
	ck_assert_uint_eq(cxs_eq_size(&q), 0);
	cxs_eq_destroy(&q);
}
END_TEST

static int cmp_key(const void *a, const void *b)
{
	const struct cxs_event *x = a, *y = b;
	return cxs_event_key_cmp(x->time, x->src, x->seq, y->time, y->src, y->seq);
}

/* Interleaved pushes and pops against a sorted reference, across pool chunks. */
START_TEST(test_random_against_sort)
{
	enum { N = 50000 };
	struct cxs_event *ref = malloc(N * sizeof *ref);
	ck_assert_ptr_nonnull(ref);
	struct cxs_event_queue q;
	cxs_eq_init(&q);
	uint64_t x = 12345;
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		ref[i] = mk((x >> 40) % 1000, (uint32_t)((x >> 20) % 16), (uint64_t)i);
		ck_assert_int_eq(cxs_eq_insert(&q, &ref[i]), 0);
	}
	qsort(ref, N, sizeof *ref, cmp_key);
	cxs_time last = 0;
	for (int i = 0; i < N; i++) {
		uint32_t slot;
		struct cxs_event *ev = cxs_eq_pop(&q, &slot);
		ck_assert_ptr_nonnull(ev);
		ck_assert_uint_ge(ev->time, last);
		last = ev->time;
		ck_assert_int_eq(cmp_key(ev, &ref[i]), 0);
		cxs_eq_release(&q, slot);
		/* Reuse released slots: records must not alias live ones. */
		if (i % 7 == 0 && i + 1 < N) {
			struct cxs_event late = mk(ref[N - 1].time + 1 + (cxs_time)i, 99, (uint64_t)i);
			ck_assert_int_eq(cxs_eq_insert(&q, &late), 0);
		}
	}
	ck_assert_uint_eq(cxs_eq_size(&q), (N - 1) / 7 + 1);
	ck_assert_uint_ge(cxs_eq_min_time(&q), ref[N - 1].time + 1);
	cxs_eq_destroy(&q);
	free(ref);
}
END_TEST

START_TEST(test_period_rounding)
{
	ck_assert_uint_eq(cxs_period_ps(UINT64_C(2400000000)), 417); /* 416.67 -> 417 */
	ck_assert_uint_eq(cxs_period_ps(UINT64_C(2000000000)), 500);
	ck_assert_uint_eq(cxs_period_ps(UINT64_C(3000000000)), 333);
	ck_assert_uint_eq(cxs_period_ps(UINT64_C(500000000)), 2000);
}
END_TEST

Suite *event_queue_suite(void)
{
	Suite *s = suite_create("event_queue");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_tie_break_src_then_seq);
	tcase_add_test(tc, test_random_against_sort);
	tcase_add_test(tc, test_period_rounding);
	suite_add_tcase(s, tc);
	return s;
}
