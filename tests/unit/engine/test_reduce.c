/*
 * The window reduction without MPI: the recursive-doubling schedule is checked
 * by simulating every member's steps on local buffers, for every group size
 * up to 70; the combine operators section by section.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"
#include "unit_suites.h"

START_TEST(test_combine_sections)
{
	struct red_layout l;
	red_layout_init(&l, 3);
	ck_assert_uint_eq(l.bitmap_words, 1);
	uint64_t *a = calloc(l.total, 8), *b = calloc(l.total, 8);
	red_identity(&l, a);
	red_identity(&l, b);
	red_heapmin(&l, a)[0] = 10;
	red_heapmin(&l, b)[0] = 7;
	red_sentmin(&l, b)[2] = 99;
	red_bitmap_row(&l, a, 1)[0] = 1;
	red_bitmap_row(&l, b, 1)[0] = 4;
	red_max(&l, a)[RED_MAX_ABORT] = 5;
	red_max(&l, b)[RED_MAX_ABORT] = 3;
	red_sum(&l, a)[RED_SUM_COMMITTED] = 11;
	red_sum(&l, b)[RED_SUM_COMMITTED] = 31;
	red_combine(&l, a, b);
	ck_assert_uint_eq(red_heapmin(&l, a)[0], 7);
	ck_assert_uint_eq(red_heapmin(&l, a)[1], UINT64_MAX);
	ck_assert_uint_eq(red_sentmin(&l, a)[2], 99);
	ck_assert_uint_eq(red_bitmap_row(&l, a, 1)[0], 5);
	ck_assert_uint_eq(red_max(&l, a)[RED_MAX_ABORT], 5);
	ck_assert_uint_eq(red_sum(&l, a)[RED_SUM_COMMITTED], 42);
	free(a);
	free(b);
}
END_TEST

/* Runs the schedule of all n members in lock-step rounds over shared mailboxes. */
static void simulate(uint32_t n)
{
	struct red_layout l;
	red_layout_init(&l, n);
	uint64_t **v = calloc(n, sizeof *v);
	struct red_step (*steps)[RED_MAX_STEPS] = calloc(n, sizeof *steps);
	int *nsteps = calloc(n, sizeof *nsteps), *pc = calloc(n, sizeof *pc);
	bool *sent = calloc(n, sizeof *sent); /* this step's send is posted */
	/* mailbox[from * n + to]: one pending message at most, by construction. */
	uint64_t **box = calloc((size_t)n * n, sizeof *box);
	for (uint32_t i = 0; i < n; i++) {
		v[i] = calloc(l.total, 8);
		red_identity(&l, v[i]);
		red_heapmin(&l, v[i])[i] = 1000 + i;
		red_sum(&l, v[i])[RED_SUM_COMMITTED] = i + 1;
		nsteps[i] = red_schedule(n, i, steps[i]);
		ck_assert_int_le(nsteps[i], RED_MAX_STEPS);
	}
	bool progress = true;
	while (progress) {
		progress = false;
		for (uint32_t i = 0; i < n; i++) {
			if (pc[i] == nsteps[i])
				continue;
			struct red_step st = steps[i][pc[i]];
			uint32_t p = st.peer;
			ck_assert_uint_lt(p, n);
			ck_assert_uint_ne(p, i);
			uint64_t **out = &box[(size_t)i * n + p], **in = &box[(size_t)p * n + i];
			bool sends = st.kind == RED_SEND_ONLY || st.kind == RED_SEND_RESULT ||
				     st.kind == RED_EXCHANGE;
			bool recvs = st.kind == RED_RECV_COMBINE || st.kind == RED_RECV_RESULT ||
				     st.kind == RED_EXCHANGE;
			if (sends && !sent[i] && !*out) {
				*out = malloc(l.total * 8);
				memcpy(*out, v[i], l.total * 8);
				sent[i] = true;
				progress = true;
				if (!recvs) {
					pc[i]++;
					sent[i] = false;
					continue;
				}
			}
			if (recvs && *in) {
				if (st.kind == RED_RECV_RESULT)
					memcpy(v[i], *in, l.total * 8);
				else
					red_combine(&l, v[i], *in);
				free(*in);
				*in = NULL;
				pc[i]++;
				sent[i] = false;
				progress = true;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_int_eq(pc[i], nsteps[i]);
		for (uint32_t j = 0; j < n; j++)
			ck_assert_uint_eq(red_heapmin(&l, v[i])[j], 1000 + j);
		ck_assert_uint_eq(red_sum(&l, v[i])[RED_SUM_COMMITTED], (uint64_t)n * (n + 1) / 2);
		ck_assert_int_eq(memcmp(v[i], v[0], l.total * 8), 0);
	}
	for (size_t k = 0; k < (size_t)n * n; k++)
		ck_assert_ptr_null(box[k]);
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	free(steps);
	free(nsteps);
	free(pc);
	free(sent);
	free(box);
}

START_TEST(test_schedule_all_sizes)
{
	for (uint32_t n = 1; n <= 70; n++)
		simulate(n);
}
END_TEST

Suite *reduce_suite(void)
{
	Suite *s = suite_create("reduce");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_combine_sections);
	tcase_add_test(tc, test_schedule_all_sizes);
	suite_add_tcase(s, tc);
	return s;
}
