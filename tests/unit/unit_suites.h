#ifndef CXLSIM_TESTS_UNIT_SUITES_H
#define CXLSIM_TESTS_UNIT_SUITES_H

#include <check.h>

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
