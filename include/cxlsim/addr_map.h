/*
 * addr_map.h — where a physical address lives.
 *
 *   [0, local_bytes)                   private memory of the issuing CN
 *                                      (every CN has its own; never shared)
 *   [CXS_CXL_BASE, +cxl_bytes)         shared CXL memory, interleaved over the
 *                                      MNs in units of interleave_bytes (64 =
 *                                      line interleaving, 4096 = page)
 *   anything else                      invalid (a bug in the workload)
 *
 * The home MN of a CXL address is (offset / interleave_bytes) % nmns, and its
 * line index inside that MN is compacted so that each MN's lines are dense
 * from 0 (for its DRAM model and contents).
 *
 * Per-page placement (CAMP's DRAM:CXL interleaving, tier.h): a region
 * [wi_base, wi_base + wi_bytes) of the *local* range can be declared
 * weighted-interleaved; its 4 KiB pages go to local DRAM or to CXL memory
 * with ratio dram_weight : cxl_weight: exactly d of every block of w pages
 * (the weights reduced by their gcd, w = d + c) are local, spread evenly
 * inside the block and rotated from block to block (addr_map.c), and
 * CXL-placed pages are packed densely into CXL memory, block after block,
 * from CXS_CXL_BASE + wi_cxl_offset, so the region uses only as many CXL
 * pages as it places there. Off by default (weights 0); while off, the wi_*
 * fields are ignored.
 */
#ifndef CXLSIM_ADDR_MAP_H
#define CXLSIM_ADDR_MAP_H

#include <stddef.h>
#include <stdint.h>

#define CXS_CXL_BASE (UINT64_C(1) << 40)
#define CXS_PAGE_BYTES 4096

enum cxs_addr_kind { CXS_ADDR_LOCAL = 0, CXS_ADDR_CXL = 1, CXS_ADDR_INVALID = 2 };

struct cxs_addr_map_params {
	uint32_t nmns;
	uint64_t local_bytes;
	uint64_t cxl_bytes;
	uint64_t interleave_bytes;  /* multiple of 64, power of two */
	uint64_t wi_base, wi_bytes; /* weighted-interleave region (local range) */
	uint64_t wi_cxl_offset;     /* where its CXL pages go, offset in CXL range */
	uint32_t dram_weight, cxl_weight;
};

/* mn and mn_line are 0 unless kind is CXS_ADDR_CXL. */
struct cxs_addr_target {
	enum cxs_addr_kind kind;
	uint32_t mn;           /* CXL: home MN index */
	uint64_t addr;         /* the address after weighted-interleave remapping */
	uint64_t mn_line;      /* CXL: dense line index within the home MN */
};

struct cxs_addr_map {
	struct cxs_addr_map_params p;
	uint32_t wi_d, wi_w; /* the weights reduced by their gcd: d local of every w pages */
};

/* Checks the parameters; -1 with a message naming the bad one. */
int cxs_addr_map_init(struct cxs_addr_map *m, const struct cxs_addr_map_params *p, char *err,
		      size_t errlen);
struct cxs_addr_target cxs_addr_map_lookup(const struct cxs_addr_map *m, uint64_t addr);
/*
 * Inverse for CXL: the address of line `mn_line` of MN `mn`. Precondition
 * (asserted): that MN owns that line, i.e. the address is in the CXL range.
 */
uint64_t cxs_addr_map_cxl_addr(const struct cxs_addr_map *m, uint32_t mn, uint64_t mn_line);

#endif /* CXLSIM_ADDR_MAP_H */
