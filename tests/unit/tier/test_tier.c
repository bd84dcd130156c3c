/*
 * The [tier] section (src/mem/tier.c) without a run: which pages the
 * placement sends where (the address map's weighted region), that each
 * tier's DRAM model meets its preset's idle latency exactly once the path to
 * it is added (the pointer-chase measurement is tests/mpi/camp_tiers.sh),
 * the shared region's place in local memory, and the configuration mistakes
 * it refuses, each naming its key.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cxlsim/config.h"
#include "cxlsim/engine.h"
#include "cxlsim/fabric.h"
#include "cxlsim/memsys.h"
#include "cxlsim/model.h"
#include "cxlsim/tier.h"
#include "unit_suites.h"

static struct cxs_config *cfg_with(const char *const *sets)
{
	struct cxs_config *c = cxs_config_new();
	char err[512];
	for (const struct cxs_key_table *const *t = cxs_memsys_model.keys; *t; t++)
		ck_assert(cxs_config_register(c, (*t)->keys, (*t)->n, err, sizeof err) == 0);
	static const char *const machine[] = {"system.cns=1", "fabric.link_latency=5ns",
					      "fabric.switch_latency=5ns", "fabric.link_gbps=64", NULL};
	for (int i = 0; machine[i]; i++)
		ck_assert(cxs_config_set(c, machine[i], err, sizeof err) == 0);
	for (int i = 0; sets && sets[i]; i++)
		ck_assert_msg(cxs_config_set(c, sets[i], err, sizeof err) == 0, "%s", err);
	return c;
}

static int configure(const char *const *sets, struct cxs_tier *t, struct cxs_addr_map_params *mp,
		     char *err, size_t len)
{
	struct cxs_config *c = cfg_with(sets);
	*mp = (struct cxs_addr_map_params){.nmns = 1, .local_bytes = 1 << 30, .cxl_bytes = 1 << 30,
					   .interleave_bytes = 64};
	int rc = cxs_tier_configure(c, t, mp, err, len);
	cxs_config_free(c);
	return rc;
}

START_TEST(test_placement_sets_the_weighted_region)
{
	struct cxs_tier t;
	struct cxs_addr_map_params mp;
	char err[512];
	const char *off[] = {NULL};
	ck_assert(configure(off, &t, &mp, err, sizeof err) == 0);
	ck_assert_int_eq(t.placement, CXS_TIER_OFF);
	ck_assert_uint_eq(mp.dram_weight + mp.cxl_weight, 0);
	uint64_t base;
	ck_assert(cxs_tier_shared_base(&t, 4096, 1 << 20, 1 << 30, &base) == 0);
	ck_assert_uint_eq(base, CXS_CXL_BASE); /* classic layout */
	const char *dram[] = {"tier.placement=dram", NULL};
	ck_assert(configure(dram, &t, &mp, err, sizeof err) == 0);
	ck_assert_uint_eq(t.dram_pct, 100);
	ck_assert_uint_eq(mp.dram_weight + mp.cxl_weight, 0); /* no region: all local */
	const char *cxl[] = {"tier.placement=cxl", NULL};
	ck_assert(configure(cxl, &t, &mp, err, sizeof err) == 0);
	ck_assert(mp.dram_weight == 0 && mp.cxl_weight == 100 && mp.wi_base == 0 &&
		  mp.wi_bytes == mp.local_bytes);
	const char *il[] = {"tier.placement=interleave", "tier.dram_pct=37", NULL};
	ck_assert(configure(il, &t, &mp, err, sizeof err) == 0);
	ck_assert(mp.dram_weight == 37 && mp.cxl_weight == 63);
	/* the shared region right after the private areas, page-aligned, or refused */
	ck_assert(cxs_tier_shared_base(&t, 5000, 1 << 20, 1 << 30, &base) == 0);
	ck_assert_uint_eq(base, 8192);
	ck_assert(cxs_tier_shared_base(&t, 5000, 1 << 30, 1 << 30, &base) == -1);
}
END_TEST

/* The idle path of tier.c's header, recomputed from the keys' defaults and inputs/camp.ini's fabric. */
START_TEST(test_each_preset_meets_its_idle_latency)
{
	static const struct {
		const char *dev;
		double ns;
		uint32_t ch;
	} want[] = {{"numa", 140, 2}, {"cxl_a", 214, 1}, {"cxl_b", 272, 1}, {"cxl_c", 214, 2}};
	struct cxs_fabric_params fab = {.link_latency = 5000, .switch_latency = 5000,
					.link_bytes_per_s = 64000000000ull};
	cxs_time cycle = cxs_period_ps(2400000000ull), l3 = 36 * cycle;
	cxs_time far_path = 2 * l3 + cxs_fabric_ser(&fab, cxs_msg_info(CXS_MSG_GETS)->wire_bytes) +
			    cxs_fabric_ser(&fab, cxs_msg_info(CXS_MSG_DATA_E)->wire_bytes) +
			    2 * cxs_fabric_min_latency(&fab) + 20000;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char dev[64], err[512];
		snprintf(dev, sizeof dev, "tier.device=%s", want[i].dev);
		const char *sets[] = {"tier.placement=cxl", dev, NULL};
		struct cxs_tier t;
		struct cxs_addr_map_params mp;
		ck_assert_msg(configure(sets, &t, &mp, err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(t.local.nchannels, 2);
		ck_assert_uint_eq(t.far.nchannels, want[i].ch);
		ck_assert(t.local.rotate_banks && t.far.rotate_banks);
		ck_assert_uint_eq(l3 + cxs_dram_idle_latency(&t.local), 90000);
		ck_assert_uint_eq(far_path + cxs_dram_idle_latency(&t.far), (cxs_time)llround(want[i].ns * 1000));
		ck_assert_str_eq(t.device, want[i].dev);
		ck_assert(cxs_tier_dram(&t, true, NULL) == &t.local && cxs_tier_dram(&t, false, NULL) == &t.far);
	}
	/* by hand: the device is "custom" */
	const char *sets[] = {"tier.placement=cxl", "tier.far_latency=300ns", "tier.far_channels=3", NULL};
	struct cxs_tier t;
	struct cxs_addr_map_params mp;
	char err[512];
	ck_assert(configure(sets, &t, &mp, err, sizeof err) == 0);
	ck_assert_str_eq(t.device, "custom");
	ck_assert_uint_eq(t.far.nchannels, 3);
	ck_assert_uint_eq(far_path + cxs_dram_idle_latency(&t.far), 300000);
}
END_TEST

START_TEST(test_mistakes_name_their_key)
{
	struct cxs_tier t;
	struct cxs_addr_map_params mp;
	char err[512];
	const char *two[] = {"tier.placement=cxl", "system.cns=2", NULL};
	ck_assert(configure(two, &t, &mp, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "--set: system.cns: tier.placement = cxl needs exactly one CN"), "%s", err);
	const char *ch[] = {"tier.placement=dram", "mn.dram_channels=8", NULL};
	ck_assert(configure(ch, &t, &mp, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "mn.dram_channels: not used in tier mode"), "%s", err);
	const char *fast[] = {"tier.placement=cxl", "tier.far_latency=100ns", NULL};
	ck_assert(configure(fast, &t, &mp, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "tier.far_latency") && strstr(err, "lower fabric.link_latency"), "%s", err);
	const char *slow_fabric[] = {"tier.placement=cxl", "tier.device=numa", "fabric.link_latency=40ns", NULL};
	ck_assert(configure(slow_fabric, &t, &mp, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "tier.device: the far device's 140.0 ns"), "%s", err);
	const char *dram[] = {"tier.placement=dram", "tier.dram_latency=20ns", NULL};
	ck_assert(configure(dram, &t, &mp, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "tier.dram_latency: 20.0 ns is below"), "%s", err);
}
END_TEST

Suite *tier_suite(void)
{
	Suite *s = suite_create("tier");
	TCase *tc = tcase_create("tier");
	tcase_add_test(tc, test_placement_sets_the_weighted_region);
	tcase_add_test(tc, test_each_preset_meets_its_idle_latency);
	tcase_add_test(tc, test_mistakes_name_their_key);
	suite_add_tcase(s, tc);
	return s;
}
