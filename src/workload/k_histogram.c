/*
 * k_histogram.c — histogram, modelled after PBBS's histogram: counts of size
 * 32-bit keys over B buckets (workload.variant: B, 0 = 65536; keys drawn
 * with a power-law skew over the buckets, as PBBS's exponential
 * distribution). Each thread
 *   1  counts its share of the keys into a private table of B counters
 *      (a random read-modify-write per key in local memory)
 *   2  publishes the table as its row of the shared T x B table  barrier
 *   3  sums its share of the buckets over the T rows into the result
 * Not the original program: PBBS picks between a sort and atomic counts;
 * this is its private-histogram path.
 *
 * Memory behaviour: a sequential stream of keys, random private RMWs (a
 * 256 KiB table per thread at B = 65536: L2 and L3 misses), a streaming
 * copy, then a strided gather over the rows.
 *
 * Shared layout: barrier line, result u32[B], table u32[T][B], keys
 * u32[size]. Private: the thread's counters. Result: the counts.
 */
#include "cxlsim/kthread.h"

#include <math.h>

#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "histogram", "keys", img->nthreads, UINT64_C(1) << 26, err, errlen))
		return -1;
	uint64_t b = img->variant ? img->variant : 65536;
	if (b < 16 || b > (UINT64_C(1) << 22) || b % 16) {
		snprintf(err, errlen,
			 "histogram: workload.variant (buckets) must be a multiple of 16, 16..4194304 (got %" PRIu64 ")",
			 b);
		return -1;
	}
	struct hist_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "histogram: out of memory");
		return -1;
	}
	img->info = I;
	I->n = img->size;
	I->b = b;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->res_off = klay_take(&off, 4 * b);
	I->table_off = klay_take(&off, 4 * b * img->nthreads);
	I->key_off = klay_take(&off, 4 * I->n);
	img->private_bytes = 4 * b;
	if (klay_alloc(img, "histogram", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0x4157);
	for (uint64_t i = 0; i < I->n; i++) {
		/* bucket = b^u - 1 for uniform u: a power-law skew towards small buckets */
		double u = kunit(&s);
		uint64_t k = (uint64_t)(pow((double)b, u)) - 1;
		if (k >= b)
			k = b - 1;
		kput32(img->shared, I->key_off + 4 * i, (uint32_t)k);
	}
	return 0;
}

static void run(struct cxs_kt *kt)
{
	const struct hist_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt), t = cxs_kt_id(kt);
	uint64_t lo, hi;
	kshare(I->n, t, T, &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (uint64_t b = 0; b < I->b; b += 2)
		cxs_kt_store(kt, kpv(kt, 4 * b), 8, 0);
	for (uint64_t i = lo; i < hi; i += 16) {
		uint32_t n = hi - i < 16 ? (uint32_t)(hi - i) : 16, h[16];
		for (uint32_t k = 0; k < n; k++)
			h[k] = cxs_kt_ld(kt, ksh(kt, I->key_off + 4 * (i + k)), 4);
		for (uint32_t k = 0; k < n; k++) {
			uint64_t a = kpv(kt, 4 * cxs_kt_get(kt, h[k]));
			cxs_kt_store(kt, a, 4, cxs_kt_load(kt, a, 4) + 1);
			cxs_kt_compute(kt, 3);
		}
	}
	for (uint64_t b = 0; b < I->b; b += 16) {
		uint32_t h[8];
		for (uint32_t k = 0; k < 8; k++)
			h[k] = cxs_kt_ld(kt, kpv(kt, 4 * (b + 2 * k)), 8);
		for (uint32_t k = 0; k < 8; k++)
			cxs_kt_store(kt, ksh(kt, I->table_off + 4 * ((uint64_t)t * I->b + b + 2 * k)), 8,
				     cxs_kt_get(kt, h[k]));
	}
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	uint64_t blo, bhi;
	kshare(I->b / 2, t, T, &blo, &bhi); /* pairs of buckets: 8-byte words */
	for (uint64_t w = blo; w < bhi; w++) {
		uint64_t s0 = 0, s1 = 0;
		for (uint32_t r0 = 0; r0 < T; r0 += 32) {
			uint32_t m = T - r0 < 32 ? T - r0 : 32, h[32];
			for (uint32_t r = 0; r < m; r++)
				h[r] = cxs_kt_ld(kt, ksh(kt, I->table_off + 4 * ((r0 + r) * I->b + 2 * w)), 8);
			for (uint32_t r = 0; r < m; r++) {
				uint64_t v = cxs_kt_get(kt, h[r]);
				s0 += (uint32_t)v;
				s1 += v >> 32;
			}
		}
		kst64(kt, I->res_off + 8 * w, (uint32_t)s0 | (uint64_t)(uint32_t)s1 << 32);
		cxs_kt_compute(kt, 2 * T);
	}
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	kcheck_share(kt, I->res_off, 4 * I->b);
	kcheck_share(kt, I->table_off, 4 * I->b * T);
}

const struct cxs_kernel cxs_kernel_histogram = {
	.name = "histogram",
	.doc = "modelled after PBBS's histogram: private per-thread counts of size skewed keys over variant buckets (0: 65536), then a parallel reduction",
	.default_size = 524288,
	.deterministic = true,
	.build = build,
	.run = run,
};
