/*
 * k_lbm.c — a lattice-Boltzmann fluid, modelled after SPEC CPU 2017's
 * 619.lbm (and 519.lbm): D2Q9 on a periodic size x size lattice, cells as
 * arrays of 9 doubles (SPEC's layout: each cell's distributions together),
 * STEPS steps of pull streaming and BGK collision from one lattice into the
 * other. Threads own bands of rows; a barrier a step. Not the original
 * program: two dimensions (SPEC: D3Q19), no obstacles.
 *
 * Memory behaviour: per cell 9 loads from the 9 neighbouring cells (three
 * rows of the source lattice, in sequence) and 9 stores of one 72-byte cell
 * of the other: half the accesses stores, two streams, bandwidth-bound and
 * bound on stores with 8 cores (CAMP's store-bound case).
 *
 * Shared layout: barrier line, lattices A and B (size^2 x 9 doubles).
 * Result: both lattices after the steps.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

#define AHEAD 8u /* cells in flight: 72 loads of the 128 a thread may have */

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "lbm", "lattice side", 4, 4096, err, errlen))
		return -1;
	struct lbm_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "lbm: out of memory");
		return -1;
	}
	img->info = I;
	I->n = img->size;
	uint64_t off = 0, bytes = 8 * LBM_Q * I->n * I->n;
	I->bar_off = klay_take(&off, KL_LINE);
	I->lat[0] = klay_take(&off, bytes);
	I->lat[1] = klay_take(&off, bytes);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "lbm", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0x1b);
	for (uint64_t c = 0; c < I->n * I->n; c++) {
		double rho = 1 + 0.05 * (kunit(&s) - 0.5);
		for (uint32_t q = 0; q < LBM_Q; q++)
			kputd(img->shared, I->lat[0] + 8 * (c * LBM_Q + q), lbm_w[q] * rho);
	}
	return 0;
}

static void run(struct cxs_kt *kt)
{
	const struct lbm_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt);
	uint64_t n = I->n, lo, hi;
	const double omega = 1.7;
	kshare(n, cxs_kt_id(kt), T, &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (uint32_t step = 0; step < LBM_STEPS; step++) {
		uint64_t src = I->lat[step % 2], dst = I->lat[1 - step % 2];
		/* Cells run AHEAD ahead of their use (the window over the loop); src and dst
		 * are different lattices, so no load passes a store it depends on. */
		uint64_t ncell = (hi - lo) * n;
		uint32_t h[AHEAD][LBM_Q];
		for (uint64_t it = 0; it < ncell + AHEAD; it++) {
			if (it >= AHEAD) {
				uint64_t c = it - AHEAD, y = lo + c / n, x = c % n;
				double f[LBM_Q], rho = 0, ux = 0, uy = 0;
				for (uint32_t q = 0; q < LBM_Q; q++) {
					f[q] = cxs_kt_getd(kt, h[c % AHEAD][q]);
					rho += f[q];
					ux += f[q] * lbm_cx[q];
					uy += f[q] * lbm_cy[q];
				}
				ux /= rho;
				uy /= rho;
				double uu = ux * ux + uy * uy;
				for (uint32_t q = 0; q < LBM_Q; q++) {
					double cu = lbm_cx[q] * ux + lbm_cy[q] * uy;
					double feq = lbm_w[q] * rho * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * uu);
					kstd(kt, dst + 8 * ((y * n + x) * LBM_Q + q), f[q] - omega * (f[q] - feq));
				}
				cxs_kt_compute(kt, 90);
			}
			if (it < ncell) {
				uint64_t y = lo + it / n, x = it % n;
				for (uint32_t q = 0; q < LBM_Q; q++) {
					uint64_t sx = (x + n - (uint64_t)(int64_t)lbm_cx[q]) % n;
					uint64_t sy = (y + n - (uint64_t)(int64_t)lbm_cy[q]) % n;
					h[it % AHEAD][q] = cxs_kt_ld(kt, ksh(kt, src + 8 * ((sy * n + sx) * LBM_Q + q)), 8);
				}
			}
		}
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	}
	cxs_kt_roi_end(kt);
	kcheck_share(kt, I->lat[0], 8 * LBM_Q * n * n);
	kcheck_share(kt, I->lat[1], 8 * LBM_Q * n * n);
}

const struct cxs_kernel cxs_kernel_lbm = {
	.name = "lbm",
	.doc = "modelled after SPEC CPU 2017's 619.lbm: 2 steps of D2Q9 lattice Boltzmann (pull streaming, BGK collision) on a periodic size x size lattice of 9-double cells",
	.default_size = 128,
	.deterministic = true,
	.build = build,
	.run = run,
};
