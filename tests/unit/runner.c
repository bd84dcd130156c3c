/*
 * One Check runner for every unit suite (lwIP's test/unit layout). Each module's
 * tests live in tests/unit/<module>/test_<module>.c and export <module>_suite().
 * ctest runs the runner once per suite with CK_RUN_SUITE set, so a failure names
 * its module; run it bare to run them all. Unit tests never use MPI.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "unit_suites.h"

int main(void)
{
	SRunner *sr = srunner_create(event_queue_suite());
	srunner_add_suite(sr, config_suite());
	srunner_add_suite(sr, stats_suite());
	srunner_add_suite(sr, h5out_suite());
	srunner_add_suite(sr, reduce_suite());
	srunner_add_suite(sr, rank_map_suite());
	srunner_add_suite(sr, dram_suite());
	srunner_add_suite(sr, addr_map_suite());
	srunner_add_suite(sr, fabric_suite());
	srunner_add_suite(sr, cache_suite());
	srunner_add_suite(sr, coherence_suite());
	srunner_add_suite(sr, trace_suite());
	srunner_add_suite(sr, lock_order_suite());
	srunner_add_suite(sr, kthread_suite());
	srunner_add_suite(sr, kernels_suite());
	srunner_add_suite(sr, core_suite());
	srunner_add_suite(sr, axle_suite());
	srunner_add_suite(sr, payload_suite());
	srunner_add_suite(sr, diktamo_suite());
	srunner_add_suite(sr, camp_kernels_suite());
	srunner_add_suite(sr, camp_suite());
	srunner_add_suite(sr, tier_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	/* A misspelt CK_RUN_SUITE runs nothing and would pass: that is a failure. */
	if (srunner_ntests_run(sr) == 0) {
		const char *want = getenv("CK_RUN_SUITE");
		fprintf(stderr, "no test ran (CK_RUN_SUITE=%s)\n", want ? want : "");
		failed = 1;
	}
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
