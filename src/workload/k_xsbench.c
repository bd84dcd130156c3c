/*
 * k_xsbench.c — macroscopic cross-section lookups, modelled after XSBench
 * (the unionized-grid event-based kernel; CAMP uses it as a latency-bound
 * co-runner): NUCS nuclides with size energy grid points each (energy and
 * five cross sections, 48 B a point), the unionized energy grid (every
 * point's energy, sorted) with its index grid (for each union energy, the
 * point of each nuclide at or below it), and twelve materials of 4..34
 * nuclides with concentrations. A lookup draws an energy and a material
 * (XSBench's material distribution), binary-searches the union grid (~16
 * dependent loads), then for each nuclide of the material loads its index
 * and its two bracketing grid points, interpolates the five cross sections
 * and accumulates them weighted by concentration. Lookups are 256 a thread,
 * drawn from the lookup number (not the thread), so results do not depend
 * on the split.
 *
 * Not the original program: NUCS = 34 nuclides (XSBench small: 68), the
 * verification hash per lookup only (the index of the largest cross section
 * and the five sums' bit patterns mixed).
 *
 * Memory behaviour: the search is a pointer-chase-like chain over a 272 KiB
 * array (at size 1000), then per nuclide an index gather and two 48-byte
 * gathers at random places of a 1.6 MiB grid, independent across nuclides
 * (batches of 8); an index grid of 4.6 MiB.
 *
 * Shared layout: barrier line, union energies (double), index grid (u32 [union][NUCS]),
 * nuclide grids ([NUCS][size] x 6 doubles), materials (count, nuclide ids,
 * concentrations), results u64[lookups].
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "xsbench", "grid points per nuclide", 8, 100000, err, errlen))
		return -1;
	struct xs_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "xsbench: out of memory");
		return -1;
	}
	img->info = I;
	I->ngp = img->size;
	I->nunion = XS_NUCS * I->ngp;
	I->nlook = (uint64_t)XS_LOOKUPS_PER_THREAD * img->nthreads;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->union_off = klay_take(&off, 8 * I->nunion);
	I->index_off = klay_take(&off, 4 * I->nunion * XS_NUCS);
	I->grid_off = klay_take(&off, (uint64_t)XS_PT_BYTES * XS_NUCS * I->ngp);
	I->mat_off = klay_take(&off, (uint64_t)XS_MAT_BYTES * XS_MATS);
	I->res_off = klay_take(&off, 8 * I->nlook);
	img->private_bytes = KL_LINE;
	double *e = malloc(8 * I->nunion);
	if (!e || klay_alloc(img, "xsbench", off, err, errlen) != 0) {
		free(e);
		if (!e)
			snprintf(err, errlen, "xsbench: out of memory");
		return -1;
	}
	uint8_t *sh = img->shared;
	uint64_t s = img->seed ^ UINT64_C(0x5b);
	for (uint32_t n = 0; n < XS_NUCS; n++) {
		double *ge = e + (uint64_t)n * I->ngp;
		for (uint64_t p = 0; p < I->ngp; p++)
			ge[p] = kunit(&s);
		qsort(ge, I->ngp, 8, cmp_d);
		for (uint64_t p = 0; p < I->ngp; p++) {
			uint64_t o = I->grid_off + ((uint64_t)n * I->ngp + p) * XS_PT_BYTES;
			kputd(sh, o, ge[p]);
			for (uint32_t x = 1; x < 6; x++)
				kputd(sh, o + 8 * x, kunit(&s));
		}
	}
	double *u = malloc(8 * I->nunion);
	if (!u) {
		free(e);
		snprintf(err, errlen, "xsbench: out of memory");
		return -1;
	}
	memcpy(u, e, 8 * I->nunion);
	qsort(u, I->nunion, 8, cmp_d);
	uint64_t cursor[XS_NUCS] = {0};
	for (uint64_t i = 0; i < I->nunion; i++) {
		kputd(sh, I->union_off + 8 * i, u[i]);
		for (uint32_t n = 0; n < XS_NUCS; n++) {
			const double *ge = e + (uint64_t)n * I->ngp;
			while (cursor[n] + 1 < I->ngp && ge[cursor[n] + 1] <= u[i])
				cursor[n]++;
			uint64_t at = cursor[n] + 1 < I->ngp ? cursor[n] : I->ngp - 2;
			kput32(sh, I->index_off + 4 * (i * XS_NUCS + n), (uint32_t)at);
		}
	}
	free(u);
	free(e);
	for (uint32_t m = 0; m < XS_MATS; m++) {
		uint64_t o = I->mat_off + (uint64_t)m * XS_MAT_BYTES;
		kput32(sh, o, xs_mat_nucs[m]);
		for (uint32_t k = 0; k < xs_mat_nucs[m]; k++) {
			kput32(sh, o + 4 + 4 * k, m == 0 ? k : (uint32_t)(krand(&s) % XS_NUCS));
			kputd(sh, o + 256 + 8 * k, kunit(&s));
		}
	}
	return 0;
}

static uint64_t lookup(struct cxs_kt *kt, const struct xs_info *I, double energy, uint32_t mat)
{
	/* Binary search of the union grid: the last energy <= the lookup's. */
	uint64_t lo = 0, hi = I->nunion - 1;
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		cxs_kt_compute(kt, 4);
		if (kldd(kt, I->union_off + 8 * mid) > energy)
			hi = mid;
		else
			lo = mid;
	}
	uint64_t mo = I->mat_off + (uint64_t)mat * XS_MAT_BYTES;
	uint32_t nn = kld32(kt, mo);
	double macro[5] = {0};
	for (uint32_t k0 = 0; k0 < nn; k0 += 8) {
		uint32_t n = nn - k0 < 8 ? nn - k0 : 8, hn[8], hc[8], hi2[8], nuc[8], hp[8][12];
		for (uint32_t k = 0; k < n; k++) {
			hn[k] = cxs_kt_ld(kt, ksh(kt, mo + 4 + 4 * (uint64_t)(k0 + k)), 4);
			hc[k] = cxs_kt_ld(kt, ksh(kt, mo + 256 + 8 * (uint64_t)(k0 + k)), 8);
		}
		for (uint32_t k = 0; k < n; k++) {
			nuc[k] = (uint32_t)cxs_kt_get(kt, hn[k]);
			hi2[k] = cxs_kt_ld(kt, ksh(kt, I->index_off + 4 * (lo * XS_NUCS + nuc[k])), 4);
		}
		for (uint32_t k = 0; k < n; k++) {
			uint64_t p = cxs_kt_get(kt, hi2[k]);
			uint64_t o = I->grid_off + ((uint64_t)nuc[k] * I->ngp + p) * XS_PT_BYTES;
			for (uint32_t f = 0; f < 12; f++)
				hp[k][f] = cxs_kt_ld(kt, ksh(kt, o + 8 * f), 8);
		}
		for (uint32_t k = 0; k < n; k++) {
			double conc = cxs_kt_getd(kt, hc[k]), lo_pt[6], hi_pt[6];
			for (uint32_t f = 0; f < 6; f++) {
				lo_pt[f] = cxs_kt_getd(kt, hp[k][f]);
				hi_pt[f] = cxs_kt_getd(kt, hp[k][6 + f]);
			}
			double fr = (hi_pt[0] - energy) / (hi_pt[0] - lo_pt[0]);
			for (uint32_t x = 0; x < 5; x++)
				macro[x] += conc * (hi_pt[1 + x] - fr * (hi_pt[1 + x] - lo_pt[1 + x]));
			cxs_kt_compute(kt, 30);
		}
	}
	uint32_t best = 0;
	for (uint32_t x = 1; x < 5; x++)
		if (macro[x] > macro[best])
			best = x;
	uint64_t hsh = best + 1;
	for (uint32_t x = 0; x < 5; x++)
		hsh = (hsh ^ cxs_kt_ldd_bits(macro[x])) * UINT64_C(0x100000001b3);
	return hsh;
}

static void run(struct cxs_kt *kt)
{
	const struct xs_info *I = cxs_kt_image(kt)->info;
	uint64_t lo, hi;
	kshare(I->nlook, cxs_kt_id(kt), cxs_kt_count(kt), &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (uint64_t i = lo; i < hi; i++) {
		double energy;
		uint32_t mat;
		xs_draw(cxs_kt_image(kt)->seed, i, &energy, &mat);
		kst64(kt, I->res_off + 8 * i, lookup(kt, I, energy, mat));
	}
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	kcheck_share(kt, I->res_off, 8 * I->nlook);
}

const struct cxs_kernel cxs_kernel_xsbench = {
	.name = "xsbench",
	.doc = "modelled after XSBench: unionized-grid macroscopic cross-section lookups (binary search, then per-nuclide gathers), 34 nuclides of size grid points",
	.default_size = 1000,
	.deterministic = true,
	.build = build,
	.run = run,
};
