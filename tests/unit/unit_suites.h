#ifndef CXLSIM_TESTS_UNIT_SUITES_H
#define CXLSIM_TESTS_UNIT_SUITES_H

#include <check.h>

/*
 * A passing Check assertion is not free: Check 0.15's ck_assert_msg records a
 * mark point on success, one write(2) down the pipe to the runner (about
 * 7 us). The suites that compare whole memories and traces word by word make
 * millions of them: camp_kernels 3.3 M, kernels 2.1 M, addr_map 0.3 M, most
 * of the unit tests' time in CI. Here a passing assertion only evaluates its
 * expression, and a failing one reports exactly as Check's does. Every
 * ck_assert_* comparison macro expands to ck_assert_msg where it is used, so
 * this covers them all. What is lost is the "(after this point)" location
 * when a test dies of a signal: the sanitizer build prints the stack instead,
 * and mark_point() still marks where it is written.
 */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                                      \
	((expr) ? (void)0                                                             \
		: _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", \
				    ##__VA_ARGS__))

Suite *event_queue_suite(void);
Suite *config_suite(void);
Suite *stats_suite(void);
Suite *h5out_suite(void);
Suite *reduce_suite(void);
Suite *rank_map_suite(void);
Suite *dram_suite(void);
Suite *addr_map_suite(void);
Suite *fabric_suite(void);
Suite *cache_suite(void);
Suite *kthread_suite(void);
Suite *core_suite(void);
Suite *kernels_suite(void);
Suite *coherence_suite(void);
Suite *trace_suite(void);
Suite *lock_order_suite(void);
Suite *axle_suite(void);
Suite *payload_suite(void);
Suite *diktamo_suite(void);
Suite *camp_kernels_suite(void);
Suite *camp_suite(void);
Suite *tier_suite(void);

#endif
