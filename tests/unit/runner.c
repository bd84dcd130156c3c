/*
 * One Check runner for every unit suite (lwIP's test/unit layout). Each module's
 * tests live in tests/unit/<module>/test_<module>.c and export <module>_suite().
 * ctest runs the runner once per suite with CK_RUN_SUITE set, so a failure names
 * its module; run it bare to run them all. Unit tests never use MPI.
 */
#include <check.h>
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
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
