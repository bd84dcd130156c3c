/*
 * Thread programs on the native backend (kthread.h): the reference runs that
 * the simulated machine's results are compared with must themselves be right.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/kthread.h"
#include "unit_suites.h"

static int run_native(const char *name, uint64_t size, uint32_t threads, uint8_t **out,
		      struct cxs_kimage *img, char *err)
{
	const struct cxs_kernel *k = cxs_kernel_find(name);
	ck_assert_ptr_nonnull(k);
	*img = (struct cxs_kimage){.size = size, .seed = 7, .nthreads = threads};
	ck_assert_int_eq(k->build(img, err, 256), 0);
	return cxs_kt_run_native(k, img, out, err, 256);
}

START_TEST(test_micro_native)
{
	static const char *const names[] = {"ptrchase", "stream", "strided", "memset"};
	for (size_t i = 0; i < 4; i++) {
		struct cxs_kimage img;
		uint8_t *fin = NULL;
		char err[256] = "";
		ck_assert_msg(run_native(names[i], 16, 3, &fin, &img, err) == 0, "%s: %s",
			      names[i], err);
		if (strcmp(names[i], "memset") == 0) {
			/* thread t's slice holds (t+1) in every byte */
			for (uint32_t t = 0; t < 3; t++)
				ck_assert_int_eq(fin[t * 16 * 1024 + 100], t + 1);
		} else {
			ck_assert_mem_eq(fin, img.shared, img.shared_bytes); /* read only */
		}
		free(fin);
		cxs_kimage_free(&img);
	}
}
END_TEST

START_TEST(test_litmus_native_builds_and_runs)
{
	struct cxs_kimage img;
	uint8_t *fin = NULL;
	char err[256] = "";
	ck_assert_msg(run_native("litmus_iriw", 50, 4, &fin, &img, err) == 0, "%s", err);
	free(fin);
	cxs_kimage_free(&img);
	img = (struct cxs_kimage){.size = 50, .seed = 7, .nthreads = 3}; /* IRIW needs 4 */
	ck_assert_int_eq(cxs_kernel_find("litmus_iriw")->build(&img, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "needs 4 threads"));
}
END_TEST

/* A program that never releases its lock: the native run must report it, not hang. */
static void hold_forever(struct cxs_kt *kt)
{
	cxs_kt_lock(kt, cxs_kt_shared(kt));
	if (cxs_kt_id(kt) == 0)
		return; /* thread 0 keeps the lock; thread 1 spins for ever */
}

static int build_one_line(struct cxs_kimage *img, char *err, size_t errlen)
{
	img->shared_bytes = 64;
	img->shared = calloc(1, 64);
	return img->shared ? 0 : -1;
}

START_TEST(test_native_reports_a_stuck_lock)
{
	const struct cxs_kernel k = {.name = "stuck", .build = build_one_line, .run = hold_forever};
	struct cxs_kimage img = {.size = 1, .seed = 1, .nthreads = 2};
	char err[256] = "";
	uint8_t *fin = NULL;
	ck_assert_int_eq(k.build(&img, err, sizeof err), 0);
	ck_assert_int_eq(cxs_kt_run_native(&k, &img, &fin, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "none progresses"));
	cxs_kimage_free(&img);
}
END_TEST

/* A program that fails: the message comes back. */
static void fails(struct cxs_kt *kt)
{
	if (cxs_kt_id(kt) == 1)
		cxs_kt_fail(kt, "thread %u says no", cxs_kt_id(kt));
}

START_TEST(test_native_failure_message)
{
	const struct cxs_kernel k = {.name = "fails", .build = build_one_line, .run = fails};
	struct cxs_kimage img = {.size = 1, .seed = 1, .nthreads = 3};
	char err[256] = "";
	uint8_t *fin = NULL;
	ck_assert_int_eq(k.build(&img, err, sizeof err), 0);
	ck_assert_int_eq(cxs_kt_run_native(&k, &img, &fin, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "thread 1 says no"));
	cxs_kimage_free(&img);
}
END_TEST

Suite *kthread_suite(void)
{
	Suite *s = suite_create("kthread");
	TCase *tc = tcase_create("native");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_micro_native);
	tcase_add_test(tc, test_litmus_native_builds_and_runs);
	tcase_add_test(tc, test_native_reports_a_stuck_lock);
	tcase_add_test(tc, test_native_failure_message);
	suite_add_tcase(s, tc);
	return s;
}
