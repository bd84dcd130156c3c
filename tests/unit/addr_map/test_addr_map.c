/*
 * Unit tests for the address map (src/mem/addr_map.c): range boundaries,
 * line and page interleaving over 16 MNs, density of each MN's line indices,
 * the (mn, mn_line) -> address inverse, weighted DRAM:CXL page interleaving,
 * and parameter checks.
 *
 * Expected MN and line numbers are written from the definition in
 * addr_map.h (unit % nmns, dense per MN), not by calling the code again, so
 * a wrong formula in the module cannot agree with itself.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/addr_map.h"

/* Also declared in tests/unit/unit_suites.h once the runner collects it. */
Suite *addr_map_suite(void);

#define GIB (UINT64_C(1) << 30)
#define NMNS 16

static struct cxs_addr_map_params base_params(uint64_t interleave_bytes)
{
	struct cxs_addr_map_params p;

	memset(&p, 0, sizeof p);
	p.nmns = NMNS;
	p.local_bytes = 1 * GIB;
	p.cxl_bytes = 16 * GIB;
	p.interleave_bytes = interleave_bytes;
	return p;
}

static void init_map(struct cxs_addr_map *m, const struct cxs_addr_map_params *p)
{
	char err[160] = "";

	ck_assert_msg(cxs_addr_map_init(m, p, err, sizeof err) == 0, "init: %s", err);
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- ranges ----------------------------------------------------------- */

static void expect_kind(const struct cxs_addr_map *m, uint64_t addr, enum cxs_addr_kind kind)
{
	struct cxs_addr_target t = cxs_addr_map_lookup(m, addr);

	ck_assert_msg(t.kind == kind, "addr 0x%llx: kind %d, expected %d",
		      (unsigned long long)addr, (int)t.kind, (int)kind);
	ck_assert_uint_eq(t.addr, addr); /* no remapping without weights */
}

START_TEST(test_range_boundaries)
{
	struct cxs_addr_map_params p = base_params(64);
	struct cxs_addr_map m;
	struct cxs_addr_target t;
	uint64_t cxl_end = CXS_CXL_BASE + p.cxl_bytes;

	init_map(&m, &p);
	expect_kind(&m, 0, CXS_ADDR_LOCAL);
	expect_kind(&m, p.local_bytes - 1, CXS_ADDR_LOCAL);
	expect_kind(&m, p.local_bytes, CXS_ADDR_INVALID);
	expect_kind(&m, CXS_CXL_BASE - 1, CXS_ADDR_INVALID);
	expect_kind(&m, CXS_CXL_BASE, CXS_ADDR_CXL);
	expect_kind(&m, cxl_end - 1, CXS_ADDR_CXL);
	expect_kind(&m, cxl_end, CXS_ADDR_INVALID);
	expect_kind(&m, UINT64_MAX, CXS_ADDR_INVALID);

	t = cxs_addr_map_lookup(&m, CXS_CXL_BASE);
	ck_assert_uint_eq(t.mn, 0);
	ck_assert_uint_eq(t.mn_line, 0);
	/* The last line of the range: 2^28 lines, line 2^28 - 1 is on MN 15. */
	t = cxs_addr_map_lookup(&m, cxl_end - 1);
	ck_assert_uint_eq(t.mn, NMNS - 1);
	ck_assert_uint_eq(t.mn_line, p.cxl_bytes / 64 / NMNS - 1);
}
END_TEST

/* ---- interleaving ----------------------------------------------------- */

START_TEST(test_line_interleave_round_robin)
{
	struct cxs_addr_map_params p = base_params(64);
	struct cxs_addr_map m;

	init_map(&m, &p);
	for (uint64_t i = 0; i < 4096; i++) {
		for (uint64_t b = 0; b < 64; b += 7) {
			uint64_t addr = CXS_CXL_BASE + i * 64 + b;
			struct cxs_addr_target t = cxs_addr_map_lookup(&m, addr);

			ck_assert_int_eq(t.kind, CXS_ADDR_CXL);
			ck_assert_uint_eq(t.mn, i % NMNS);
			ck_assert_uint_eq(t.mn_line, i / NMNS);
		}
		/* The last byte of the line too (the stride above skips it). */
		ck_assert_uint_eq(cxs_addr_map_lookup(&m, CXS_CXL_BASE + i * 64 + 63).mn_line,
				  i / NMNS);
	}
}
END_TEST

START_TEST(test_page_interleave_round_robin)
{
	struct cxs_addr_map_params p = base_params(CXS_PAGE_BYTES);
	struct cxs_addr_map m;

	init_map(&m, &p);
	for (uint64_t pg = 0; pg < 256; pg++) {
		for (uint64_t off = 0; off < CXS_PAGE_BYTES; off += 61) {
			uint64_t addr = CXS_CXL_BASE + pg * CXS_PAGE_BYTES + off;
			struct cxs_addr_target t = cxs_addr_map_lookup(&m, addr);

			ck_assert_int_eq(t.kind, CXS_ADDR_CXL);
			ck_assert_uint_eq(t.mn, pg % NMNS);
			ck_assert_uint_eq(t.mn_line, (pg / NMNS) * 64 + off / 64);
			/* Every byte of a line agrees with the line's first byte. */
			ck_assert_uint_eq(cxs_addr_map_lookup(&m, addr & ~UINT64_C(63)).mn_line,
					  t.mn_line);
		}
	}
}
END_TEST

START_TEST(test_mn_lines_dense)
{
	const uint64_t units_per_mn = 64; /* K */
	static const uint64_t sizes[] = { 64, 256, CXS_PAGE_BYTES };

	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		struct cxs_addr_map_params p = base_params(sizes[s]);
		struct cxs_addr_map m;
		uint64_t seen[NMNS] = { 0 };
		uint64_t lines_per_unit = sizes[s] / 64;
		uint64_t nlines = NMNS * units_per_mn * lines_per_unit;

		init_map(&m, &p);
		/*
		 * Walking the range in order, each MN's next line must be exactly
		 * the count seen so far: no gap, no repeat, no reordering.
		 */
		for (uint64_t i = 0; i < nlines; i++) {
			struct cxs_addr_target t = cxs_addr_map_lookup(&m, CXS_CXL_BASE + i * 64);

			ck_assert_uint_lt(t.mn, NMNS);
			ck_assert_uint_eq(t.mn_line, seen[t.mn]);
			seen[t.mn]++;
		}
		for (int mn = 0; mn < NMNS; mn++)
			ck_assert_uint_eq(seen[mn], units_per_mn * lines_per_unit);
	}
}
END_TEST

START_TEST(test_inverse_round_trip)
{
	static const uint64_t sizes[] = { 64, 128, CXS_PAGE_BYTES };
	static const uint32_t mns[] = { 1, 3, NMNS };

	for (size_t s = 0; s < 3; s++) {
		for (size_t k = 0; k < 3; k++) {
			struct cxs_addr_map_params p = base_params(sizes[s]);
			struct cxs_addr_map m;
			uint64_t seed = 0x243f6a8885a308d3ull + s * 3 + k;

			p.nmns = mns[k];
			/* Not a multiple of nmns units: the last unit of MNs differs. */
			p.cxl_bytes = 3 * GIB + 5 * CXS_PAGE_BYTES;
			init_map(&m, &p);
			for (int i = 0; i < 20000; i++) {
				/* Include the two ends, where an off-by-one would show. */
				uint64_t off = i == 0 ? 0 :
					       i == 1 ? p.cxl_bytes - 1 :
							next_rand(&seed) % p.cxl_bytes;
				uint64_t addr = CXS_CXL_BASE + off;
				struct cxs_addr_target t = cxs_addr_map_lookup(&m, addr);

				ck_assert_int_eq(t.kind, CXS_ADDR_CXL);
				ck_assert_uint_eq(cxs_addr_map_cxl_addr(&m, t.mn, t.mn_line),
						  addr & ~UINT64_C(63));
			}
		}
	}
}
END_TEST

/* ---- weighted interleave ---------------------------------------------- */

static uint32_t gcd_u32(uint32_t a, uint32_t b)
{
	return b ? gcd_u32(b, a % b) : a;
}

/*
 * Looks up the first byte (and a byte inside) of each of npages pages of the
 * weighted region; checks the placement against the definition in
 * addr_map.h (with the weights reduced by their gcd to d:c, exactly d of
 * every whole block of d + c pages are local) and that CXL pages are
 * distinct, in range, and dense from wi_cxl_offset: block b's c pages are
 * numbers b c .. b c + c - 1. Returns how many pages went to CXL.
 */
static uint64_t check_weighted(uint32_t d0, uint32_t c0, uint64_t npages)
{
	struct cxs_addr_map_params p = base_params(64);
	struct cxs_addr_map m;
	uint64_t ncxl = 0, nlocal_block = 0;
	uint32_t g = gcd_u32(d0, c0), d = d0 / g, c = c0 / g, w = d + c;
	char *used;

	p.wi_base = 64 * CXS_PAGE_BYTES;
	p.wi_bytes = npages * CXS_PAGE_BYTES;
	p.wi_cxl_offset = 1 * GIB;
	p.dram_weight = d0;
	p.cxl_weight = c0;
	init_map(&m, &p);
	used = calloc(npages + w, 1);
	ck_assert_ptr_nonnull(used);

	for (uint64_t pg = 0; pg < npages; pg++) {
		uint64_t addr = p.wi_base + pg * CXS_PAGE_BYTES;
		struct cxs_addr_target t = cxs_addr_map_lookup(&m, addr);
		struct cxs_addr_target inner = cxs_addr_map_lookup(&m, addr + 1000);

		if (pg % w == 0)
			nlocal_block = 0;
		if (t.kind == CXS_ADDR_LOCAL) {
			ck_assert_uint_eq(t.addr, addr);
			ck_assert_int_eq(inner.kind, CXS_ADDR_LOCAL);
			nlocal_block++;
		} else {
			ck_assert_int_eq(t.kind, CXS_ADDR_CXL);
			ck_assert_uint_ge(t.addr, CXS_CXL_BASE + p.wi_cxl_offset);
			ck_assert_uint_lt(t.addr, CXS_CXL_BASE + p.cxl_bytes);
			ck_assert_uint_eq(t.addr % CXS_PAGE_BYTES, 0);
			/* Offsets inside the page carry over. */
			ck_assert_int_eq(inner.kind, CXS_ADDR_CXL);
			ck_assert_uint_eq(inner.addr, t.addr + 1000);
			/* Home and line are those of the remapped address. */
			ck_assert_uint_eq(cxs_addr_map_lookup(&m, t.addr).mn, t.mn);
			ck_assert_uint_eq(cxs_addr_map_lookup(&m, t.addr).mn_line, t.mn_line);
			/* Distinct, and inside its block's share of CXL pages. */
			uint64_t k = (t.addr - CXS_CXL_BASE - p.wi_cxl_offset) / CXS_PAGE_BYTES;
			ck_assert_uint_ge(k, pg / w * c);
			ck_assert_uint_lt(k, pg / w * c + c);
			ck_assert_int_eq(used[k], 0);
			used[k] = 1;
			ncxl++;
		}
		if (pg % w == w - 1)
			ck_assert_uint_eq(nlocal_block, d); /* a whole block: exactly d local */
	}
	/* Whole blocks use their CXL pages without holes. */
	for (uint64_t k = 0; k < npages / w * c; k++)
		ck_assert_int_eq(used[k], 1);
	free(used);

	/* Outside the region the local range is untouched. */
	expect_kind(&m, p.wi_base - 1, CXS_ADDR_LOCAL);
	expect_kind(&m, p.wi_base + p.wi_bytes, CXS_ADDR_LOCAL);
	return ncxl;
}

START_TEST(test_weighted_3_to_1)
{
	ck_assert_uint_eq(check_weighted(3, 1, 1000), 250);
}
END_TEST

START_TEST(test_weighted_1_to_1)
{
	ck_assert_uint_eq(check_weighted(1, 1, 1000), 500);
}
END_TEST

START_TEST(test_weighted_one_side_only)
{
	ck_assert_uint_eq(check_weighted(1, 0, 1000), 0);
	ck_assert_uint_eq(check_weighted(0, 1, 1000), 1000);
	/* 10 pages at 3:2 (two whole blocks of 5), 4 in CXL; 60:40 is the same ratio. */
	ck_assert_uint_eq(check_weighted(3, 2, 10), 4);
	ck_assert_uint_eq(check_weighted(60, 40, 10), 4);
}
END_TEST

/*
 * The even spread: every block of a 3:2 region is a rotation of D D C D C;
 * at 37:63 (a 1 % step of tier.dram_pct) every run of n pages holds
 * 0.37 n +- 2 local ones; and the rotation varies from block to block, so
 * that pages a fixed distance apart (the same element of two arrays, or of
 * two threads' slices) are not always on the same tier: at 1:1 a strictly
 * alternating pattern would put pages 2 j apart together every time.
 */
START_TEST(test_weighted_spread_evenly)
{
	struct cxs_addr_map_params p = base_params(64);
	struct cxs_addr_map m;
	static const char base[] = "DDCDC"; /* 3:2: position r local iff D(r + 1) > D(r) */

	p.wi_base = 0;
	p.wi_bytes = 1000 * CXS_PAGE_BYTES;
	p.dram_weight = 3;
	p.cxl_weight = 2;
	init_map(&m, &p);
	int rotations[5] = {0};
	for (int b = 0; b < 200; b++) {
		char got[6] = {0};
		for (int i = 0; i < 5; i++)
			got[i] = cxs_addr_map_lookup(&m, (uint64_t)(5 * b + i) * CXS_PAGE_BYTES).kind ==
						 CXS_ADDR_LOCAL
					 ? 'D'
					 : 'C';
		int rot = -1;
		for (int s = 0; s < 5 && rot < 0; s++) {
			int same = 1;
			for (int i = 0; i < 5; i++)
				same &= got[i] == base[(i + s) % 5];
			if (same)
				rot = s;
		}
		ck_assert_msg(rot >= 0, "block %d: %s is no rotation of %s", b, got, base);
		rotations[rot]++;
	}
	for (int s = 0; s < 5; s++)
		ck_assert_msg(rotations[s] >= 20, "rotation %d in %d of 200 blocks", s, rotations[s]);

	p.dram_weight = 37;
	p.cxl_weight = 63;
	init_map(&m, &p);
	int local[1001] = {0};
	for (int i = 0; i < 1000; i++)
		local[i + 1] = local[i] +
			       (cxs_addr_map_lookup(&m, (uint64_t)i * CXS_PAGE_BYTES).kind == CXS_ADDR_LOCAL);
	ck_assert_int_eq(local[1000], 370);
	for (int a = 0; a < 1000; a += 7)
		for (int n = 1; a + n <= 1000; n += 13) {
			double got = local[a + n] - local[a], ideal = 0.37 * n;
			ck_assert_msg(got >= ideal - 2 && got <= ideal + 2,
				      "pages %d..%d: %g local, ideal %g", a, a + n, got, ideal);
		}

	p.dram_weight = 1;
	p.cxl_weight = 1;
	init_map(&m, &p);
	int together = 0;
	for (int i = 0; i < 500; i++)
		together += cxs_addr_map_lookup(&m, (uint64_t)i * CXS_PAGE_BYTES).kind ==
			    cxs_addr_map_lookup(&m, (uint64_t)(i + 256) * CXS_PAGE_BYTES).kind;
	ck_assert_msg(together > 150 && together < 350, "pages 256 apart together %d of 500 times",
		      together);
}
END_TEST

START_TEST(test_weights_off_ignore_region)
{
	struct cxs_addr_map_params p = base_params(64);
	struct cxs_addr_map m;

	/* Nonsense region fields are ignored while both weights are 0. */
	p.wi_base = 123;
	p.wi_bytes = 5 * GIB;
	p.wi_cxl_offset = 7;
	init_map(&m, &p);
	for (uint64_t a = 0; a < 64 * CXS_PAGE_BYTES; a += CXS_PAGE_BYTES)
		expect_kind(&m, a, CXS_ADDR_LOCAL);
}
END_TEST

/* ---- parameters ------------------------------------------------------- */

static void expect_rejected(const struct cxs_addr_map_params *p, const char *name)
{
	struct cxs_addr_map m;
	char err[200] = "";

	ck_assert_int_eq(cxs_addr_map_init(&m, p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, name) != NULL, "message \"%s\" does not name %s", err, name);
	ck_assert_ptr_null(strchr(err, '\n'));
}

static struct cxs_addr_map_params weighted_params(void)
{
	struct cxs_addr_map_params p = base_params(CXS_PAGE_BYTES);

	p.wi_base = 0;
	p.wi_bytes = 1000 * CXS_PAGE_BYTES;
	p.wi_cxl_offset = 0;
	p.dram_weight = 3;
	p.cxl_weight = 1;
	return p;
}

START_TEST(test_bad_params_rejected)
{
	struct cxs_addr_map_params p;
	struct cxs_addr_map m;
	char err[200];

	p = base_params(64);
	p.nmns = 0;
	expect_rejected(&p, "nmns");
	p = base_params(32);
	expect_rejected(&p, "interleave_bytes");
	p = base_params(96);
	expect_rejected(&p, "interleave_bytes");
	p = base_params(0);
	expect_rejected(&p, "interleave_bytes");
	p = base_params(64);
	p.local_bytes = CXS_PAGE_BYTES + 64;
	expect_rejected(&p, "local_bytes");
	p = base_params(64);
	p.local_bytes = CXS_CXL_BASE + CXS_PAGE_BYTES; /* would overlap the CXL range */
	expect_rejected(&p, "local_bytes");
	p = base_params(64);
	p.cxl_bytes = 0;
	expect_rejected(&p, "cxl_bytes");
	p = base_params(64);
	p.cxl_bytes = 100 * CXS_PAGE_BYTES + 1;
	expect_rejected(&p, "cxl_bytes");
	p = base_params(64);
	p.cxl_bytes = UINT64_MAX - CXS_PAGE_BYTES + 1; /* past 2^64 */
	expect_rejected(&p, "cxl_bytes");

	/* The weighted configuration itself is valid. */
	p = weighted_params();
	ck_assert_int_eq(cxs_addr_map_init(&m, &p, err, sizeof err), 0);

	p = weighted_params();
	p.wi_bytes = 0;
	expect_rejected(&p, "wi_bytes");
	p = weighted_params();
	p.wi_bytes = 1000 * CXS_PAGE_BYTES + 8;
	expect_rejected(&p, "wi_bytes");
	p = weighted_params();
	p.wi_base = 64;
	expect_rejected(&p, "wi_base");
	p = weighted_params();
	p.wi_base = p.local_bytes - 999 * CXS_PAGE_BYTES; /* last page past the end */
	expect_rejected(&p, "wi_base");
	p = weighted_params();
	p.wi_base = 2 * p.local_bytes;
	expect_rejected(&p, "wi_base");
	p = weighted_params();
	p.wi_cxl_offset = 4000;
	expect_rejected(&p, "wi_cxl_offset");
	/* 250 CXL pages need 250 pages of room: 249 is one short, 250 fits. */
	p = weighted_params();
	p.wi_cxl_offset = p.cxl_bytes - 249 * CXS_PAGE_BYTES;
	expect_rejected(&p, "wi_cxl_offset");
	p.wi_cxl_offset = p.cxl_bytes - 250 * CXS_PAGE_BYTES;
	ck_assert_int_eq(cxs_addr_map_init(&m, &p, err, sizeof err), 0);
	/* The region's highest CXL page is the last page of the CXL range. */
	uint64_t top = 0;
	for (uint64_t pg = 0; pg < 1000; pg++) {
		struct cxs_addr_target t = cxs_addr_map_lookup(&m, p.wi_base + pg * CXS_PAGE_BYTES);
		if (t.kind == CXS_ADDR_CXL && t.addr > top)
			top = t.addr;
	}
	ck_assert_uint_eq(top, CXS_CXL_BASE + p.cxl_bytes - CXS_PAGE_BYTES);
	p = weighted_params();
	p.wi_cxl_offset = p.cxl_bytes + CXS_PAGE_BYTES;
	expect_rejected(&p, "wi_cxl_offset");
}
END_TEST

Suite *addr_map_suite(void)
{
	Suite *s = suite_create("addr_map");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_range_boundaries);
	tcase_add_test(tc, test_line_interleave_round_robin);
	tcase_add_test(tc, test_page_interleave_round_robin);
	tcase_add_test(tc, test_mn_lines_dense);
	tcase_add_test(tc, test_inverse_round_trip);
	tcase_add_test(tc, test_weighted_3_to_1);
	tcase_add_test(tc, test_weighted_1_to_1);
	tcase_add_test(tc, test_weighted_one_side_only);
	tcase_add_test(tc, test_weighted_spread_evenly);
	tcase_add_test(tc, test_weights_off_ignore_region);
	tcase_add_test(tc, test_bad_params_rejected);
	suite_add_tcase(s, tc);
	return s;
}
