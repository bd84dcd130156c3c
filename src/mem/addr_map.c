/*
 * addr_map.c — physical address to (local | CXL home MN and line | invalid);
 * the contract is in include/cxlsim/addr_map.h.
 *
 * CXL interleaving. With I = interleave_bytes and n = nmns, the CXL range is
 * cut into units of I bytes dealt round robin:
 *
 *     offset  = addr - CXS_CXL_BASE
 *     unit    = offset / I                 (global unit number)
 *     mn      = unit % n
 *     mn_line = (unit / n) * (I / 64) + (offset % I) / 64
 *
 *     CXL offset:  | u0 | u1 | u2 | u3 | u4 | u5 | ...      (n = 4)
 *     MN 0 lines:  | u0 | u4 | u8 | ...   dense from 0, I/64 lines per unit
 *
 * so each MN sees its share as one dense array of lines from 0 (its DRAM
 * model and its contents are indexed by mn_line), and the inverse is exact:
 * unit = (mn_line / (I/64)) * n + mn. I is a power of two, so a unit never
 * splits a 64-byte line and all bytes of a line share one MN and mn_line.
 * When cxl_bytes is not a multiple of n * I, the last MNs simply own a line
 * or unit fewer; no MN has holes.
 *
 * Weighted interleave (CAMP, Linux MPOL_WEIGHTED_INTERLEAVE). Inside the
 * local region [wi_base, wi_base + wi_bytes), with the weights reduced by
 * their gcd to d (DRAM) and c (CXL), w = d + c, the pages are cut into
 * blocks of w. Each block holds exactly d local pages, spread as evenly as
 * the ratio allows (Bresenham: position r of a block is local iff
 * D(r + 1) > D(r), D(n) = ceil(n d / w)), and the pattern is rotated by a
 * per-block amount s(b) (splitmix64's finaliser of the block number):
 *
 *     b = p / w,  r = (p % w + s(b)) % w      page p local iff D(r + 1) > D(r)
 *
 * Linux gives each node `weight` consecutive pages in turn; the even spread
 * matters for scaled workloads whose arrays are a few hundred pages
 * (weights such as 37:63 would otherwise put a whole small array in one
 * tier), and the rotation for threads that run in lock step, as a
 * deterministic simulator keeps them: with a strictly periodic pattern
 * (1:1 is D C D C ...) every thread of STREAM's triad, on slices whose
 * length is a multiple of the period, is on a DRAM page at the same time
 * and on a CXL page at the same time, so the two tiers take turns instead
 * of adding their bandwidths (measured: 1:1 slower than 2:3 and 3:2 by 30 %
 * of the DRAM-only time). On real machines threads drift, and arrays start
 * at offsets unrelated to the period; the rotation gives the same
 * decorrelation while keeping the share exact in every block: any run of
 * n pages holds D(n) +- 2 local ones. CXL-placed pages are packed densely,
 * each block's c of them in turn: the CXL page of rotated position r in
 * block b is number
 *
 *     k = b c + (r - D(r))        (r - D(r): the CXL positions before r)
 *
 * at CXS_CXL_BASE + wi_cxl_offset + k * 4096, so the region needs only as
 * much CXL memory as its blocks place there (3:1 over 1000 pages: 250
 * pages). The remapped address is then looked up like any CXL address, so
 * it is interleaved over the MNs with everything else. The pattern is a
 * pure function of the page number: no state, the same at any rank count.
 * Products stay below 2^64: local addresses are below 2^40 (so p < 2^28)
 * and d, c < 2^32.
 *
 * Validation happens once, in cxs_addr_map_init, so that lookup can do no
 * checking beyond the range tests; what a user can get wrong returns one line
 * naming the parameter. The two ranges cannot overlap (local_bytes <=
 * CXS_CXL_BASE, 1 TiB) and the CXL range must end below 2^64.
 */
#include "cxlsim/addr_map.h"

#include <assert.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAP_LINE_BYTES 64

static bool wi_enabled(const struct cxs_addr_map_params *p)
{
	return p->dram_weight != 0 || p->cxl_weight != 0;
}

static uint32_t gcd32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* D(n) over one block: the local positions among its first n. */
static uint64_t wi_local_before(const struct cxs_addr_map *m, uint64_t n)
{
	return (n * m->wi_d + m->wi_w - 1) / m->wi_w;
}

/* The rotation of block b, in [0, w): splitmix64's finaliser of b. */
static uint64_t wi_rotation(const struct cxs_addr_map *m, uint64_t b)
{
	uint64_t z = b + UINT64_C(0x9E3779B97F4A7C15);
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return (z ^ (z >> 31)) % m->wi_w;
}

/* CXL pages a weighted region of npages may use: c for every block it starts. */
static uint64_t wi_cxl_room(const struct cxs_addr_map *m, uint64_t npages)
{
	return (npages + m->wi_w - 1) / m->wi_w * (m->wi_w - m->wi_d);
}

static bool is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

int cxs_addr_map_init(struct cxs_addr_map *m, const struct cxs_addr_map_params *p, char *err,
		      size_t errlen)
{
	int rc = -1;

	memset(m, 0, sizeof *m);
	if (p->nmns < 1) {
		snprintf(err, errlen, "addr_map: nmns must be at least 1, got 0");
		goto out;
	}
	if (p->interleave_bytes < MAP_LINE_BYTES || !is_pow2(p->interleave_bytes)) {
		snprintf(err, errlen,
			 "addr_map: interleave_bytes must be a power of two >= 64, got %" PRIu64,
			 p->interleave_bytes);
		goto out;
	}
	if (p->local_bytes % CXS_PAGE_BYTES != 0 || p->local_bytes > CXS_CXL_BASE) {
		snprintf(err, errlen,
			 "addr_map: local_bytes must be a multiple of %d and at most %" PRIu64
			 " (the CXL base), got %" PRIu64,
			 CXS_PAGE_BYTES, CXS_CXL_BASE, p->local_bytes);
		goto out;
	}
	if (p->cxl_bytes == 0 || p->cxl_bytes % CXS_PAGE_BYTES != 0 ||
	    p->cxl_bytes > UINT64_MAX - CXS_CXL_BASE) {
		snprintf(err, errlen,
			 "addr_map: cxl_bytes must be a nonzero multiple of %d ending below 2^64, "
			 "got %" PRIu64,
			 CXS_PAGE_BYTES, p->cxl_bytes);
		goto out;
	}
	if (wi_enabled(p)) {
		uint64_t ncxl;

		/* Each weight fits in 32 bits, so their sum in 64 bits cannot wrap to 0. */
		assert((uint64_t)p->dram_weight + p->cxl_weight > 0);
		if (p->wi_bytes == 0 || p->wi_bytes % CXS_PAGE_BYTES != 0) {
			snprintf(err, errlen,
				 "addr_map: wi_bytes must be a nonzero multiple of %d when "
				 "dram_weight:cxl_weight is set, got %" PRIu64,
				 CXS_PAGE_BYTES, p->wi_bytes);
			goto out;
		}
		if (p->wi_base % CXS_PAGE_BYTES != 0) {
			snprintf(err, errlen,
				 "addr_map: wi_base must be a multiple of %d, got %" PRIu64,
				 CXS_PAGE_BYTES, p->wi_base);
			goto out;
		}
		if (p->wi_base > p->local_bytes || p->wi_bytes > p->local_bytes - p->wi_base) {
			snprintf(err, errlen,
				 "addr_map: wi_base + wi_bytes = %" PRIu64 " + %" PRIu64
				 " must lie inside local_bytes = %" PRIu64,
				 p->wi_base, p->wi_bytes, p->local_bytes);
			goto out;
		}
		if (p->wi_cxl_offset % CXS_PAGE_BYTES != 0) {
			snprintf(err, errlen,
				 "addr_map: wi_cxl_offset must be a multiple of %d, got %" PRIu64,
				 CXS_PAGE_BYTES, p->wi_cxl_offset);
			goto out;
		}
		uint32_t g = gcd32(p->dram_weight, p->cxl_weight);
		m->wi_d = p->dram_weight / g;
		m->wi_w = (uint32_t)(((uint64_t)p->dram_weight + p->cxl_weight) / g);
		ncxl = wi_cxl_room(m, p->wi_bytes / CXS_PAGE_BYTES);
		if (p->wi_cxl_offset > p->cxl_bytes ||
		    ncxl > (p->cxl_bytes - p->wi_cxl_offset) / CXS_PAGE_BYTES) {
			snprintf(err, errlen,
				 "addr_map: wi_cxl_offset = %" PRIu64 " leaves no room for the %"
				 PRIu64 " CXL pages of the weighted region in cxl_bytes = %" PRIu64,
				 p->wi_cxl_offset, ncxl, p->cxl_bytes);
			goto out;
		}
	}
	m->p = *p;
	rc = 0;
out:
	return rc;
}

static struct cxs_addr_target cxl_target(const struct cxs_addr_map *m, uint64_t addr)
{
	const struct cxs_addr_map_params *p = &m->p;
	uint64_t offset = addr - CXS_CXL_BASE;
	uint64_t unit = offset / p->interleave_bytes;
	uint64_t lines_per_unit = p->interleave_bytes / MAP_LINE_BYTES;
	struct cxs_addr_target t = { .kind = CXS_ADDR_CXL, .addr = addr };

	t.mn = (uint32_t)(unit % p->nmns);
	t.mn_line = (unit / p->nmns) * lines_per_unit +
		    (offset % p->interleave_bytes) / MAP_LINE_BYTES;
	return t;
}

struct cxs_addr_target cxs_addr_map_lookup(const struct cxs_addr_map *m, uint64_t addr)
{
	const struct cxs_addr_map_params *p = &m->p;
	struct cxs_addr_target t = { .kind = CXS_ADDR_INVALID, .addr = addr };

	assert(p->nmns >= 1); /* initialised */
	if (addr < p->local_bytes) {
		if (wi_enabled(p) && addr >= p->wi_base && addr - p->wi_base < p->wi_bytes) {
			uint64_t page = (addr - p->wi_base) / CXS_PAGE_BYTES;
			uint64_t b = page / m->wi_w;
			uint64_t r = (page % m->wi_w + wi_rotation(m, b)) % m->wi_w;
			uint64_t before = wi_local_before(m, r);

			if (wi_local_before(m, r + 1) == before) {
				uint64_t k = b * (m->wi_w - m->wi_d) + (r - before);

				/* init checked that every such k fits in the CXL range. */
				return cxl_target(m, CXS_CXL_BASE + p->wi_cxl_offset +
							     k * CXS_PAGE_BYTES +
							     addr % CXS_PAGE_BYTES);
			}
		}
		t.kind = CXS_ADDR_LOCAL;
		return t;
	}
	if (addr >= CXS_CXL_BASE && addr - CXS_CXL_BASE < p->cxl_bytes)
		return cxl_target(m, addr);
	return t;
}

uint64_t cxs_addr_map_cxl_addr(const struct cxs_addr_map *m, uint32_t mn, uint64_t mn_line)
{
	const struct cxs_addr_map_params *p = &m->p;
	uint64_t lines_per_unit = p->interleave_bytes / MAP_LINE_BYTES;
	uint64_t nunits = (p->cxl_bytes + p->interleave_bytes - 1) / p->interleave_bytes;
	uint64_t unit_in_mn = mn_line / lines_per_unit;
	uint64_t offset;

	/*
	 * Asking for a line an MN does not own is a bug in the caller. The
	 * bound on unit_in_mn is written so that it cannot overflow:
	 * unit_in_mn * nmns + mn < nunits.
	 */
	assert(mn < p->nmns && mn < nunits);
	assert(unit_in_mn <= (nunits - 1 - mn) / p->nmns);
	(void)nunits; /* read only by the asserts */
	offset = (unit_in_mn * p->nmns + mn) * p->interleave_bytes +
		 (mn_line % lines_per_unit) * MAP_LINE_BYTES;
	assert(offset < p->cxl_bytes);
	return CXS_CXL_BASE + offset;
}
