/*
 * k_dlrm.c — embedding bag lookups, modelled after DLRM's sparse-length sum
 * (SLS, the embedding stage of Facebook's recommendation model; CAMP runs
 * DLRM inference): a table of size rows of DIM floats; each bag sums POOL
 * rows picked by its index list (power-law row popularity, as real
 * embedding traces), 32 bags a thread, and stores the pooled vector.
 *
 * Memory behaviour: the index lists are sequential; every row is DIM x 4 =
 * 256 B (four lines) at a random place of a size x 256 B table (8 MiB at
 * 32768 rows): independent gathers of short sequential runs, rows of a bag
 * in flight together (an SLS loop vectorises and unrolls over rows), so
 * MLP-rich and bandwidth-hungry with many threads; hot rows stay cached.
 *
 * Shared layout: barrier line, table (size x DIM floats), indices (u32[bags][POOL]),
 * output (bags x DIM floats). Result: the pooled vectors.
 */
#include "cxlsim/kthread.h"

#include <math.h>

#include "kinfo_priv.h"
#include "klayout_priv.h"

#define ROWS_IN_FLIGHT 3u /* rows whose loads are in flight: 3 x 32 of a thread's 128 */

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "dlrm", "table rows", 16, UINT64_C(1) << 22, err, errlen))
		return -1;
	struct dlrm_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "dlrm: out of memory");
		return -1;
	}
	img->info = I;
	I->rows = img->size;
	I->bags = (uint64_t)DLRM_BAGS_PER_THREAD * img->nthreads;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->table_off = klay_take(&off, 4 * DLRM_DIM * I->rows);
	I->idx_off = klay_take(&off, 4 * DLRM_POOL * I->bags);
	I->out_off = klay_take(&off, 4 * DLRM_DIM * I->bags);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "dlrm", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0xd1);
	for (uint64_t i = 0; i < DLRM_DIM * I->rows; i++)
		kputf(img->shared, I->table_off + 4 * i, (float)(kunit(&s) - 0.5));
	for (uint64_t i = 0; i < DLRM_POOL * I->bags; i++) {
		/* rows^u - 1 for uniform u, then scattered: a power law over random rows */
		uint64_t r = (uint64_t)pow((double)I->rows, kunit(&s)) - 1;
		r = (r * UINT64_C(0x9e3779b1) + 7) % I->rows;
		kput32(img->shared, I->idx_off + 4 * i, (uint32_t)r);
	}
	return 0;
}

static void run(struct cxs_kt *kt)
{
	const struct dlrm_info *I = cxs_kt_image(kt)->info;
	uint64_t lo, hi;
	kshare(I->bags, cxs_kt_id(kt), cxs_kt_count(kt), &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (uint64_t b = lo; b < hi; b++) {
		uint32_t hidx[DLRM_POOL], row[DLRM_POOL];
		float acc[DLRM_DIM] = {0};
		for (uint32_t p = 0; p < DLRM_POOL; p++)
			hidx[p] = cxs_kt_ld(kt, ksh(kt, I->idx_off + 4 * (b * DLRM_POOL + p)), 4);
		for (uint32_t p = 0; p < DLRM_POOL; p++)
			row[p] = (uint32_t)cxs_kt_get(kt, hidx[p]);
		uint32_t h[ROWS_IN_FLIGHT][DLRM_DIM / 2];
		for (uint32_t it = 0; it < DLRM_POOL + ROWS_IN_FLIGHT; it++) {
			if (it >= ROWS_IN_FLIGHT) { /* row p's slot is free again once it is summed */
				uint32_t p = it - ROWS_IN_FLIGHT;
				for (uint32_t d = 0; d < DLRM_DIM / 2; d++) {
					uint64_t w = cxs_kt_get(kt, h[p % ROWS_IN_FLIGHT][d]);
					acc[2 * d] += kbits_f(w);
					acc[2 * d + 1] += kbits_f(w >> 32);
				}
				cxs_kt_compute(kt, DLRM_DIM / 8); /* 8-wide vector adds */
			}
			if (it < DLRM_POOL)
				for (uint32_t d = 0; d < DLRM_DIM / 2; d++)
					h[it % ROWS_IN_FLIGHT][d] = cxs_kt_ld(
						kt, ksh(kt, I->table_off + 4 * ((uint64_t)row[it] * DLRM_DIM + 2 * d)), 8);
		}
		for (uint32_t d = 0; d < DLRM_DIM / 2; d++)
			kst64(kt, I->out_off + 4 * (b * DLRM_DIM + 2 * d),
			      kf_bits(acc[2 * d]) | (uint64_t)kf_bits(acc[2 * d + 1]) << 32);
	}
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	kcheck_share(kt, I->out_off, 4 * DLRM_DIM * I->bags);
}

const struct cxs_kernel cxs_kernel_dlrm = {
	.name = "dlrm",
	.doc = "modelled after DLRM's sparse-length sum: 32 bags a thread, each pooling 32 power-law rows of a size x 64-float embedding table",
	.default_size = 32768,
	.deterministic = true,
	.build = build,
	.run = run,
};
