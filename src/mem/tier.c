/*
 * tier.c — the [tier] section: two memory tiers on one CN and the placement
 * of a workload's pages over them (the contract is in include/cxlsim/tier.h).
 *
 * The machine (inputs/camp.ini sets the rest): one CN with several cores and
 * few local DRAM channels, so that bandwidth-bound workloads exist, and one
 * MN behind the switch that is the far device. CAMP's platforms (the paper's
 * §3 and Table 6) give each device as an idle latency against local DRAM and
 * a bandwidth; the presets are those figures:
 *
 *   device  idle load-to-use   channels (25.6 GB/s)   after
 *   numa    140 ns             2 (= local)            the remote socket of the
 *                                                     paper's SKX: idle ratio
 *                                                     156 % of 90 ns
 *   cxl_a   214 ns             1 (half of local)      CXL-A: 214 ns vs 90 ns;
 *                                                     CXL devices give 20-50 %
 *                                                     of DRAM bandwidth
 *   cxl_b   272 ns             1                      CXL-B: 27 % more latency
 *                                                     than A (214 * 1.27)
 *   cxl_c   214 ns             2                      CXL-C: twice A's bandwidth
 *
 * and the local DRAM of every preset is 90 ns idle over tier.dram_channels
 * (default 2, 51.2 GB/s for the 8 cores of inputs/camp.ini: 6.4 GB/s a core,
 * near the paper's SKX with 6 channels for 20+ cores).
 *
 * Meeting an idle latency exactly. A demand read that misses every cache
 * costs, on an idle machine (cn_agent.c, home.c, port.c, dram.c):
 *
 *   local:  L3 lookup + DRAM(array + burst + ctrl)
 *   far:    L3 lookup + ser(GETS) + flight + directory + DRAM(array + burst
 *           + ctrl) + ser(DATA) + flight + L3 fill
 *
 * with flight = 2 x link + switch. Everything but the DRAM controller delay
 * t_ctrl is set by other keys, so t_ctrl is solved for: the controller and
 * media latency of a CXL device, or the mesh and memory controller of local
 * DRAM, is whatever remains of the measured idle latency. A target below the
 * path without t_ctrl is a configuration error that names the path. The
 * workload test (tests/mpi/camp_tiers.sh) measures a pointer chase on every
 * preset and checks both tiers' latencies against the targets.
 *
 * Placement. The weighted-interleave region of the address map covers the
 * whole local range, so the private areas and the shared region (placed right
 * after them, cxs_tier_shared_base) follow the policy page by page. CXL pages
 * are packed densely on the device; with one CN no two CNs' pages collide
 * there, which is why tier mode needs system.cns = 1.
 *
 * Keys of other sections that a preset would contradict are refused when set
 * explicitly (mn.dram_channels: the device's bandwidth is tier.device or
 * tier.far_channels), so a run never silently ignores a key.
 */
#include "cxlsim/tier.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cxlsim/engine.h"
#include "cxlsim/fabric.h"

static const struct cxs_cfg_key tier_keys[] = {
	{"tier", "placement", CXS_CFG_ENUM, "off", "Where the workload's pages live: off (shared data in CXL memory, private data local: no tiers), dram (all in the CN's DRAM), cxl (all on the far device), interleave (tier.dram_pct % in DRAM, spread evenly). Tier modes need system.cns = 1.", "off|dram|cxl|interleave", 0, 0},
	{"tier", "dram_pct", CXS_CFG_UINT, "50", "With placement = interleave: the share of pages in local DRAM, in percent (MPOL_WEIGHTED_INTERLEAVE weights dram_pct : 100 - dram_pct).", NULL, 0, 100},
	{"tier", "device", CXS_CFG_ENUM, "cxl_a", "The far tier, after CAMP's platforms: numa (remote socket, 140 ns idle, local bandwidth), cxl_a (214 ns, half the local bandwidth), cxl_b (272 ns: 27 % above A), cxl_c (214 ns, twice A's bandwidth).", "numa|cxl_a|cxl_b|cxl_c", 0, 0},
	{"tier", "dram_latency", CXS_CFG_TIME, "90ns", "Idle load-to-use latency of local DRAM in tier mode (CAMP's platforms: 90 ns).", NULL, 1, 1e9},
	{"tier", "dram_channels", CXS_CFG_UINT, "2", "Local DRAM channels in tier mode (25.6 GB/s each).", NULL, 1, 64},
	{"tier", "far_latency", CXS_CFG_TIME, "0", "Idle load-to-use latency of the far device; 0: the preset's.", NULL, 0, 1e9},
	{"tier", "far_channels", CXS_CFG_UINT, "0", "DRAM channels of the far device (25.6 GB/s each); 0: the preset's.", NULL, 0, 64},
};
const struct cxs_key_table cxs_tier_key_table = CXS_KEY_TABLE(tier_keys);

struct device {
	const char *name;
	cxs_time idle_ps;
	uint32_t channels;
};

/* In the order of tier.placement's choices. */
static const char *const placement_name[] = {"off", "dram", "cxl", "interleave"};

/* In the order of tier.device's choices. */
static const struct device devices[] = {
	{"numa", 140000, 2},
	{"cxl_a", 214000, 1},
	{"cxl_b", 272000, 1},
	{"cxl_c", 214000, 2},
};

static bool set_explicitly(const struct cxs_config *cfg, const char *section, const char *key)
{
	return strcmp(cxs_config_origin(cfg, section, key), "default") != 0;
}

/* DRAM array + burst of a row miss: the part of the idle latency that is not t_ctrl. */
static cxs_time array_ps(const struct cxs_dram_params *p)
{
	return cxs_dram_idle_latency(p) - p->t_ctrl;
}

/* Sets p->t_ctrl so that path + idle DRAM = target; -1 if the path alone exceeds it. */
static int solve_ctrl(struct cxs_dram_params *p, cxs_time path, cxs_time target)
{
	cxs_time fixed = path + array_ps(p);
	if (target < fixed)
		return -1;
	p->t_ctrl = target - fixed;
	return 0;
}

int cxs_tier_configure(const struct cxs_config *cfg, struct cxs_tier *t,
		       struct cxs_addr_map_params *mp, char *err, size_t errlen)
{
	int rc = -1;
	memset(t, 0, sizeof *t);
	t->placement = (enum cxs_tier_placement)cxs_config_enum(cfg, "tier", "placement");
	if (t->placement == CXS_TIER_OFF)
		return 0;

	const struct device *dev = &devices[cxs_config_enum(cfg, "tier", "device")];
	t->dram_pct = t->placement == CXS_TIER_DRAM ? 100
		      : t->placement == CXS_TIER_CXL ? 0
						      : (uint32_t)cxs_config_uint(cfg, "tier", "dram_pct");
	t->device = dev->name;
	t->dram_idle_ps = cxs_config_time_ps(cfg, "tier", "dram_latency");
	t->far_idle_ps = cxs_config_time_ps(cfg, "tier", "far_latency");
	uint32_t far_channels = (uint32_t)cxs_config_uint(cfg, "tier", "far_channels");
	if (t->far_idle_ps == 0)
		t->far_idle_ps = dev->idle_ps;
	else
		t->device = "custom";
	if (far_channels == 0)
		far_channels = dev->channels;
	else
		t->device = "custom";

	if (cxs_config_uint(cfg, "system", "cns") != 1) {
		snprintf(err, errlen,
			 "%s: system.cns: tier.placement = %s needs exactly one CN (its pages are "
			 "packed on the device), got %" PRIu64,
			 cxs_config_origin(cfg, "system", "cns"), placement_name[t->placement],
			 cxs_config_uint(cfg, "system", "cns"));
		goto out;
	}
	if (set_explicitly(cfg, "mn", "dram_channels")) {
		snprintf(err, errlen,
			 "%s: mn.dram_channels: not used in tier mode; the device's bandwidth is "
			 "tier.device or tier.far_channels",
			 cxs_config_origin(cfg, "mn", "dram_channels"));
		goto out;
	}

	/* The idle path of a demand read (module header). */
	double ghz = cxs_config_double(cfg, "system", "core_ghz");
	cxs_time cycle = cxs_period_ps((uint64_t)llround(ghz * 1e9));
	cxs_time l3 = cycle * cxs_config_uint(cfg, "cache", "l3_latency");
	struct cxs_fabric_params fab = {
		.link_latency = cxs_config_time_ps(cfg, "fabric", "link_latency"),
		.switch_latency = cxs_config_time_ps(cfg, "fabric", "switch_latency"),
		.link_bytes_per_s = (uint64_t)llround(cxs_config_double(cfg, "fabric", "link_gbps") * 1e9),
	};
	cxs_time far_path = l3 + cxs_fabric_ser(&fab, cxs_msg_info(CXS_MSG_GETS)->wire_bytes) +
			    cxs_fabric_min_latency(&fab) + cxs_config_time_ps(cfg, "mn", "dir_latency") +
			    cxs_fabric_ser(&fab, cxs_msg_info(CXS_MSG_DATA_E)->wire_bytes) +
			    cxs_fabric_min_latency(&fab) + l3;

	cxs_dram_default(&t->local);
	t->local.nchannels = (uint32_t)cxs_config_uint(cfg, "tier", "dram_channels");
	t->local.nbanks = (uint32_t)cxs_config_uint(cfg, "mn", "dram_banks");
	t->local.rotate_banks = true; /* a controller's bank hashing (dram.h) */
	t->far = t->local;
	t->far.nchannels = far_channels;
	if (solve_ctrl(&t->local, l3, t->dram_idle_ps) != 0) {
		snprintf(err, errlen,
			 "%s: tier.dram_latency: %.1f ns is below the path without a memory controller "
			 "(L3 lookup + DRAM array = %.1f ns)",
			 cxs_config_origin(cfg, "tier", "dram_latency"), t->dram_idle_ps / 1e3,
			 (l3 + array_ps(&t->local)) / 1e3);
		goto out;
	}
	if (solve_ctrl(&t->far, far_path, t->far_idle_ps) != 0) {
		const char *key = t->far_idle_ps == dev->idle_ps ? "device" : "far_latency";
		snprintf(err, errlen,
			 "%s: tier.%s: the far device's %.1f ns idle latency is below the path to it "
			 "(L3, fabric round trip, directory, DRAM array = %.1f ns): lower "
			 "fabric.link_latency, fabric.switch_latency or mn.dir_latency (inputs/camp.ini)",
			 cxs_config_origin(cfg, "tier", key), key, t->far_idle_ps / 1e3,
			 (far_path + array_ps(&t->far)) / 1e3);
		goto out;
	}

	/* The whole local range is placed by the policy; its CXL pages from offset 0. */
	mp->wi_base = 0;
	mp->wi_bytes = mp->local_bytes;
	mp->wi_cxl_offset = 0;
	mp->dram_weight = t->dram_pct;
	mp->cxl_weight = 100 - t->dram_pct;
	if (t->dram_pct == 100) {
		mp->dram_weight = 0; /* all local: no weighted region at all */
		mp->cxl_weight = 0;
	}
	rc = 0;
out:
	return rc;
}

const struct cxs_dram_params *cxs_tier_dram(const struct cxs_tier *t, bool cn,
					    const struct cxs_dram_params *classic)
{
	if (t->placement == CXS_TIER_OFF)
		return classic;
	return cn ? &t->local : &t->far;
}

int cxs_tier_shared_base(const struct cxs_tier *t, uint64_t private_total, uint64_t shared_bytes,
			 uint64_t local_bytes, uint64_t *base)
{
	if (t->placement == CXS_TIER_OFF) {
		*base = CXS_CXL_BASE;
		return 0;
	}
	uint64_t b = (private_total + CXS_PAGE_BYTES - 1) / CXS_PAGE_BYTES * CXS_PAGE_BYTES;
	if (b > local_bytes || shared_bytes > local_bytes - b)
		return -1;
	*base = b;
	return 0;
}
