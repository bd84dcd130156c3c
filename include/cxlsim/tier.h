/*
 * tier.h — two memory tiers on one compute node, for CAMP
 * (papers/camp-summary-ko.md; DESIGN.md "CAMP"): the CN's local DRAM and a
 * far memory device behind the CXL switch (an MN), with every page of the
 * workload placed in one of them.
 *
 *   placement = dram         every page in local DRAM
 *   placement = cxl          every page on the far device
 *   placement = interleave   dram_pct % of the pages in DRAM, the rest on the
 *                            device, spread evenly (weighted interleave,
 *                            Linux's MPOL_WEIGHTED_INTERLEAVE with weights
 *                            dram_pct : 100 - dram_pct)
 *   placement = off          the classic layout: shared data in CXL memory,
 *                            private data in local memory (no tiers)
 *
 * "Every page" means the whole footprint of the workload: its private areas
 * and its shared region, which in tier mode both live in the CN's local
 * address range [0, local_size), so that one weighted-interleave region of
 * the address map (addr_map.h) places all of it. With one CN the shared
 * region needs no CXL sharing; the far pages are still real CXL.mem lines
 * with a home on the MN (MESI with one requester: E on every read miss).
 *
 * The far device is one of four presets after the paper's platforms, or set
 * by hand (far_latency, far_channels); its idle load-to-use latency is met
 * exactly by a controller delay added to the device's DRAM (see tier.c).
 * Both tiers' latencies rise with load (DRAM banks and buses queue, dram.h).
 */
#ifndef CXLSIM_TIER_H
#define CXLSIM_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxlsim/addr_map.h"
#include "cxlsim/config.h"
#include "cxlsim/dram.h"

enum cxs_tier_placement {
	CXS_TIER_OFF = 0,
	CXS_TIER_DRAM,
	CXS_TIER_CXL,
	CXS_TIER_INTERLEAVE,
};

struct cxs_tier {
	enum cxs_tier_placement placement;
	uint32_t dram_pct;              /* DRAM share of the pages, 0..100 */
	const char *device;             /* preset name, or "custom" */
	cxs_time dram_idle_ps;          /* idle load-to-use latency of each tier */
	cxs_time far_idle_ps;
	struct cxs_dram_params local;   /* the CN's DRAM in tier mode */
	struct cxs_dram_params far;     /* the device's DRAM in tier mode */
};

extern const struct cxs_key_table cxs_tier_key_table; /* the model lists it (memsys.c) */

/*
 * Reads the [tier] section. With a placement other than off it also reads
 * the keys the latency path depends on ([system], [cache], [fabric], [mn]),
 * computes both tiers' DRAM models, and declares the whole local range of
 * *mp weighted-interleaved (mp->local_bytes and mp->cxl_bytes must be set).
 * Errors name the key and its origin.
 */
int cxs_tier_configure(const struct cxs_config *cfg, struct cxs_tier *t,
		       struct cxs_addr_map_params *mp, char *err, size_t errlen);

/* The DRAM model of a CN (cn = true) or an MN: the tier's, or `classic` when off. */
const struct cxs_dram_params *cxs_tier_dram(const struct cxs_tier *t, bool cn,
					    const struct cxs_dram_params *classic);

/*
 * Where a workload's shared region starts: CXS_CXL_BASE when off; in tier
 * mode the first page after the private areas (private_total bytes from 0).
 * -1 when that leaves no room for shared_bytes below local_bytes.
 */
int cxs_tier_shared_base(const struct cxs_tier *t, uint64_t private_total, uint64_t shared_bytes,
			 uint64_t local_bytes, uint64_t *base);

#endif /* CXLSIM_TIER_H */
