/*
 * test_lock_order.c — the lock order of a recording (lock_order.h): what the
 * recorder collects out of order comes back turn by turn, run-length coded
 * as documented; a turn given twice, a turn nobody took and a thread the
 * recording does not have are refused; a damaged, truncated or foreign file
 * is refused with its name.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cxlsim/lock_order.h"
#include "unit_suites.h"

static char dir[] = "/tmp/cxs_lock_order_XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

static void path_of(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* Lock 0x2000: turns 0..9 by threads 1 1 1 0 0 2 2 2 2 1; lock 0x1000: one turn of thread 2. */
static const uint32_t owners_2000[10] = {1, 1, 1, 0, 0, 2, 2, 2, 2, 1};

static void write_sample(const char *path)
{
	char err[256] = "";
	struct cxs_lock_acc *a = cxs_lock_acc_new();
	uint64_t total = 0;
	ck_assert_ptr_nonnull(a);
	/* out of order, as the recorder gets them (chunks of each thread's records) */
	for (int t = 9; t >= 0; t -= 2)
		ck_assert_msg(cxs_lock_acc_add(a, 0x2000, (uint64_t)t, owners_2000[t], err,
					       sizeof err) == 0, "%s", err);
	ck_assert_msg(cxs_lock_acc_add(a, 0x1000, 0, 2, err, sizeof err) == 0, "%s", err);
	for (int t = 0; t < 10; t += 2)
		ck_assert_msg(cxs_lock_acc_add(a, 0x2000, (uint64_t)t, owners_2000[t], err,
					       sizeof err) == 0, "%s", err);
	ck_assert_msg(cxs_lock_acc_write(a, path, 3, &total, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(total, 11);
	cxs_lock_acc_free(a);
}

START_TEST(test_round_trip_turn_by_turn)
{
	char path[256], err[256] = "";
	struct cxs_lock_order o;
	path_of(path, sizeof path, "locks.order");
	write_sample(path);
	ck_assert_msg(cxs_lock_order_read(path, &o, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(o.threads, 3);
	ck_assert_uint_eq(o.n, 2);
	ck_assert_uint_eq(o.e[0].addr, 0x1000); /* sorted by address */
	const struct cxs_lock_ent *e = cxs_lock_order_find(&o, 0x2000);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->turns, 10);
	ck_assert_uint_eq(e->nruns, 4); /* 1x3, 0x2, 2x4, 1x1 */
	for (uint64_t t = 0; t < 10; t++)
		ck_assert_uint_eq(cxs_lock_order_owner(&o, e, t), owners_2000[t]);
	ck_assert_uint_eq(cxs_lock_order_owner(&o, e, 10), UINT32_MAX);
	e = cxs_lock_order_find(&o, 0x1000);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(cxs_lock_order_owner(&o, e, 0), 2);
	ck_assert_ptr_null(cxs_lock_order_find(&o, 0x1008));
	ck_assert_ptr_null(cxs_lock_order_find(&o, 0x3000));
	cxs_lock_order_free(&o);
	/* the documented layout: 32 + 2 x 24 + 5 runs x 8 + 4 bytes */
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	ck_assert_int_eq(ftell(f), 32 + 2 * 24 + 5 * 8 + 4);
	fclose(f);
}
END_TEST

/* A recording without locks (the chase, sqlite with threads off) has an empty order. */
START_TEST(test_no_locks)
{
	char path[256], err[256] = "";
	struct cxs_lock_order o;
	struct cxs_lock_acc *a = cxs_lock_acc_new();
	uint64_t total = 1;
	path_of(path, sizeof path, "none.order");
	ck_assert_msg(cxs_lock_acc_write(a, path, 1, &total, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(total, 0);
	cxs_lock_acc_free(a);
	ck_assert_msg(cxs_lock_order_read(path, &o, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(o.n, 0);
	ck_assert_ptr_null(cxs_lock_order_find(&o, 0x40));
	cxs_lock_order_free(&o);
}
END_TEST

START_TEST(test_bad_orders_refused)
{
	char path[256], err[256] = "";
	struct cxs_lock_acc *a = cxs_lock_acc_new();
	path_of(path, sizeof path, "bad.order");
	ck_assert_int_eq(cxs_lock_acc_add(a, 0x40, 0, 1, err, sizeof err), 0);
	ck_assert_int_eq(cxs_lock_acc_add(a, 0x40, 0, 2, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "turn 0 is thread 1's and thread 2's") != NULL, "%s", err);
	ck_assert_int_eq(cxs_lock_acc_add(a, 0x40, 2, 1, err, sizeof err), 0);
	ck_assert_int_eq(cxs_lock_acc_write(a, path, 3, NULL, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "lock 0x40: turn 1 of 3 is no thread's") != NULL, "%s", err);
	ck_assert_int_ne(access(path, F_OK), 0);
	cxs_lock_acc_free(a);
	a = cxs_lock_acc_new();
	ck_assert_int_eq(cxs_lock_acc_add(a, 0x40, 0, 5, err, sizeof err), 0);
	ck_assert_int_eq(cxs_lock_acc_write(a, path, 3, NULL, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "a thread the recording does not have") != NULL, "%s", err);
	cxs_lock_acc_free(a);
}
END_TEST

START_TEST(test_damage_refused_with_the_file_name)
{
	char path[256], bad[256], err[256];
	struct cxs_lock_order o;
	path_of(path, sizeof path, "locks.order");
	path_of(bad, sizeof bad, "damaged.order");
	write_sample(path);
	FILE *f = fopen(path, "rb");
	uint8_t buf[256];
	size_t len = fread(buf, 1, sizeof buf, f);
	fclose(f);
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			buf[i] ^= (uint8_t)(1u << bit);
			f = fopen(bad, "wb");
			ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
			fclose(f);
			buf[i] ^= (uint8_t)(1u << bit);
			err[0] = '\0';
			ck_assert_msg(cxs_lock_order_read(bad, &o, err, sizeof err) == -1,
				      "flip of byte %zu bit %d accepted", i, bit);
			ck_assert_msg(strncmp(err, bad, strlen(bad)) == 0, "%s", err);
		}
	}
	for (size_t cut = 0; cut < len; cut += 7) {
		f = fopen(bad, "wb");
		ck_assert_uint_eq(fwrite(buf, 1, cut, f), cut);
		fclose(f);
		ck_assert_int_eq(cxs_lock_order_read(bad, &o, err, sizeof err), -1);
	}
	f = fopen(bad, "wb");
	fwrite(buf, 1, len, f);
	fputc(0, f);
	fclose(f);
	ck_assert_int_eq(cxs_lock_order_read(bad, &o, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "unexpected data after the locks") != NULL, "%s", err);
	f = fopen(bad, "wb");
	fputs("CXSPAGES and more than thirty-two bytes of text", f);
	fclose(f);
	ck_assert_int_eq(cxs_lock_order_read(bad, &o, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "bad magic at byte 0 (not a lock order") != NULL, "%s", err);
	/* the control: the undamaged bytes are read */
	f = fopen(bad, "wb");
	fwrite(buf, 1, len, f);
	fclose(f);
	ck_assert_msg(cxs_lock_order_read(bad, &o, err, sizeof err) == 0, "%s", err);
	cxs_lock_order_free(&o);
}
END_TEST

Suite *lock_order_suite(void)
{
	Suite *s = suite_create("lock_order");
	TCase *tc = tcase_create("lock_order");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip_turn_by_turn);
	tcase_add_test(tc, test_no_locks);
	tcase_add_test(tc, test_bad_orders_refused);
	tcase_add_test(tc, test_damage_refused_with_the_file_name);
	suite_add_tcase(s, tc);
	return s;
}
