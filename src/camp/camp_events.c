/*
 * camp_events.c — CAMP's Table 5: every event the model reads, its label
 * (P1..P17), and the names it goes by in `perf stat` on Skylake-SP (SKX)
 * and Sapphire / Emerald Rapids (SPR/EMR), plus the checks the model makes
 * before it uses one (camp.h).
 *
 * Names are matched case-insensitively after the reader has reduced what
 * perf printed to a bare event name (cpu/...,name=X/ -> x; a :u or :k
 * modifier dropped). Each event lists the Intel name of each platform and
 * the paper's short form (OR.DEMAND_RD, ...), so output of
 * `perf stat -e offcore_requests.demand_data_rd` and of a script that named
 * the event after the paper both work. On SPR/EMR the core events are the
 * same as on SKX, except that the L1-prefetch offcore responses (P7, P8)
 * are gone: R_Mem then comes from the CHA's LLC lookups and TOR inserts
 * (P14..P17), as the paper does; the model picks whichever set is present.
 *
 * P11m..P13m are not in Table 5: the L3_MISS_ variants of P11..P13 (Skylake-SP
 * names), which count only the demand reads that went to memory. The model
 * reads them where the calibration did (camp_model.c says why).
 */
#include "cxlsim/camp.h"
#include "camp_priv.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

struct ev_def {
	const char *label;   /* P# of Table 5, or "" */
	const char *name;    /* our short name (the model's) */
	const char *what;    /* one phrase for messages */
	const char *perf[5]; /* perf names, lower case; the first is the one to add */
};

static const struct ev_def defs[CAMP_NEV] = {
	[CAMP_CYCLES] = {"", "cycles", "core cycles",
			 {"cycles", "cpu-cycles", "cpu_clk_unhalted.thread", "cpu_clk_unhalted.thread_p", "cpu_clk_unhalted.core"}},
	[CAMP_INSTRUCTIONS] = {"", "instructions", "instructions retired",
			       {"instructions", "inst_retired.any", "inst_retired.any_p"}},
	[CAMP_STALLS_L1D] = {"P1", "stalls_l1d_miss", "stall cycles with an L1D miss pending",
			     {"cycle_activity.stalls_l1d_miss", "memory_activity.stalls_l1d_miss", "stalls_l1d_miss"}},
	[CAMP_STALLS_L2] = {"P2", "stalls_l2_miss", "stall cycles with an L2 miss pending",
			    {"cycle_activity.stalls_l2_miss", "memory_activity.stalls_l2_miss", "stalls_l2_miss"}},
	[CAMP_STALLS_L3] = {"P3", "stalls_l3_miss", "stall cycles with an L3 miss pending (s_LLC)",
			    {"cycle_activity.stalls_l3_miss", "memory_activity.stalls_l3_miss", "stalls_l3_miss"}},
	[CAMP_L1_MISS] = {"P4", "l1_miss", "loads that missed L1",
			  {"mem_load_retired.l1_miss", "l1_miss"}},
	[CAMP_LFB_HIT] = {"P5", "lfb_hit", "loads that hit a fill buffer",
			  {"mem_load_retired.fb_hit", "lfb_hit"}},
	[CAMP_BOUND_STORES] = {"P6", "bound_on_stores", "cycles bound on a full store buffer (s_SB)",
			       {"exe_activity.bound_on_stores", "bound_on_stores"}},
	[CAMP_PF_L1D_ANY] = {"P7", "pf_l1d_any", "L1 prefetch offcore responses",
			     {"offcore_response.pf_l1d_and_sw.any_response", "ocr.pf_l1d_and_sw.any_response", "pf_l1d.any_response"}},
	[CAMP_PF_L1D_L3HIT] = {"P8", "pf_l1d_l3_hit", "L1 prefetch responses from L3",
			       {"offcore_response.pf_l1d_and_sw.l3_hit.any_snoop", "ocr.pf_l1d_and_sw.l3_hit.any_snoop", "pf_l1d.l3_hit"}},
	[CAMP_PF_L2_ANY] = {"P9", "pf_l2_any", "L2 prefetch offcore responses",
			    {"offcore_response.pf_l2_data_rd.any_response", "ocr.pf_l2_data_rd.any_response", "pf_l2.any_response"}},
	[CAMP_PF_L2_L3HIT] = {"P10", "pf_l2_l3_hit", "L2 prefetch responses from L3",
			      {"offcore_response.pf_l2_data_rd.l3_hit.any_snoop", "ocr.pf_l2_data_rd.l3_hit.any_snoop", "pf_l2.l3_hit"}},
	[CAMP_ORO_DRD] = {"P11", "oro_demand_rd", "outstanding demand reads, summed over cycles",
			  {"offcore_requests_outstanding.demand_data_rd", "oro.demand_rd"}},
	[CAMP_OR_DRD] = {"P12", "or_demand_rd", "demand reads sent beyond L2",
			 {"offcore_requests.demand_data_rd", "or.demand_rd"}},
	[CAMP_ORO_CYC_DRD] = {"P13", "oro_cyc_demand_rd", "cycles with a demand read outstanding",
			      {"offcore_requests_outstanding.cycles_with_demand_data_rd", "oro.cyc_w_demand_rd"}},
	[CAMP_LLC_PF_RD] = {"P14", "llc_lookup_pf_rd", "LLC lookups by prefetch reads (uncore)",
			    {"unc_cha_llc_lookup.pf_rd", "llc_lookup.pf_rd"}},
	[CAMP_LLC_ALL] = {"P15", "llc_lookup_all", "all LLC lookups (uncore)",
			  {"unc_cha_llc_lookup.all", "llc_lookup.all"}},
	[CAMP_TOR_PREF] = {"P16", "tor_ia_pref", "TOR inserts of core prefetches (uncore)",
			   {"unc_cha_tor_inserts.ia_pref", "tor_ins.ia_pref"}},
	[CAMP_TOR_HIT_PREF] = {"P17", "tor_ia_hit_pref", "TOR inserts of core prefetches that hit (uncore)",
			       {"unc_cha_tor_inserts.ia_hit_pref", "tor_ins.ia_hit_pref"}},
	[CAMP_ORO_DRD_L3M] = {"P11m", "oro_l3_miss_demand_rd", "outstanding demand reads that missed L3, summed over cycles",
			      {"offcore_requests_outstanding.l3_miss_demand_data_rd", "oro.l3_miss_demand_rd"}},
	[CAMP_OR_DRD_L3M] = {"P12m", "or_l3_miss_demand_rd", "demand reads that missed L3",
			     {"offcore_requests.l3_miss_demand_data_rd", "or.l3_miss_demand_rd"}},
	[CAMP_ORO_CYC_DRD_L3M] = {"P13m", "oro_cyc_l3_miss_demand_rd", "cycles with a demand read that missed L3 outstanding",
				  {"offcore_requests_outstanding.cycles_with_l3_miss_demand_data_rd", "oro.cyc_w_l3_miss_demand_rd"}},
	[CAMP_TIME_NS] = {"", "time_ns", "elapsed time",
			  {"duration_time"}},
};

const char *camp_ev_label(enum camp_ev e)
{
	return defs[e].label;
}

const char *camp_ev_name(enum camp_ev e)
{
	return defs[e].name;
}

const char *camp_ev_perf(enum camp_ev e)
{
	return defs[e].perf[0];
}

enum camp_ev camp_ev_lookup(const char *perf_name)
{
	for (int e = 0; e < CAMP_NEV; e++)
		for (int k = 0; k < 5 && defs[e].perf[k]; k++)
			if (strcasecmp(perf_name, defs[e].perf[k]) == 0)
				return (enum camp_ev)e;
	return CAMP_NEV;
}

int camp_need(const struct camp_counts *c, const enum camp_ev *evs, size_t n, char *err,
	      size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		enum camp_ev e = evs[i];
		const struct ev_def *d = &defs[e];
		char what[160];
		snprintf(what, sizeof what, "%s%s%s", d->label, d->label[0] ? ": " : "", d->what);
		switch (c->state[e]) {
		case CAMP_COUNTED:
			continue;
		case CAMP_NOT_COUNTED:
			snprintf(err, errlen,
				 "%s:%u: %s is <not counted> (%s): the PMU did not count it; rerun with "
				 "fewer events per group or without other PMU users",
				 c->source, c->line[e], d->perf[0], what);
			return -1;
		case CAMP_NOT_SUPPORTED:
			snprintf(err, errlen, "%s:%u: %s is <not supported> on this CPU (%s)", c->source,
				 c->line[e], d->perf[0], what);
			return -1;
		default:
			if (e == CAMP_TIME_NS)
				snprintf(err, errlen,
					 "%s: no elapsed time (a 'seconds time elapsed' line, or the "
					 "duration_time event: add -e duration_time)",
					 c->source);
			else
				snprintf(err, errlen, "%s: no count of %s (%s): add -e %s", c->source,
					 d->perf[0], what, d->perf[0]);
			return -1;
		}
	}
	return 0;
}
