/*
 * k_fotonik.c — a 3-D finite-difference time-domain (Yee) solver, modelled
 * after SPEC CPU 2017's 649.fotonik3d (CAMP's bandwidth-bound interleaving
 * example): six field arrays Ex, Ey, Ez, Hx, Hy, Hz and a per-cell material
 * coefficient on an n^3 grid (n = size), one time step: the H update (curl
 * of E, forward differences), a barrier, the E update (curl of H, backward
 * differences, scaled by the cell's coefficient). Threads own slabs of i.
 * Not the original program: a plain Yee cube with fixed boundaries, no
 * PML, no sources; k-neighbour values are carried in registers along the
 * innermost loop as a compiler would.
 *
 * Memory behaviour: per cell and update 7 loads from 3 to 4 arrays (rows of
 * the neighbouring j and i planes) and 3 stores: seven streams at once,
 * store-heavy, bandwidth-bound on 8 cores (7 x 8 B x n^3 = 3.5 MiB at n = 40).
 *
 * Shared layout: barrier line, seven arrays of n^3 doubles. Result: the six
 * fields after the step.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "fotonik", "grid side", 4, 512, err, errlen))
		return -1;
	struct fdtd_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "fotonik: out of memory");
		return -1;
	}
	img->info = I;
	I->n = img->size;
	uint64_t off = 0, cells = I->n * I->n * I->n;
	I->bar_off = klay_take(&off, KL_LINE);
	for (int a = 0; a < FD_NARR; a++)
		I->arr[a] = klay_take(&off, 8 * cells);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "fotonik", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0xf07);
	for (int a = 0; a < FD_NARR; a++)
		for (uint64_t c = 0; c < cells; c++)
			kputd(img->shared, I->arr[a] + 8 * c,
			      a == FD_EPS ? 0.3 + 0.2 * kunit(&s) : kunit(&s) - 0.5);
	return 0;
}

static uint64_t at(const struct fdtd_info *I, int a, uint64_t i, uint64_t j, uint64_t k)
{
	return I->arr[a] + 8 * ((i * I->n + j) * I->n + k);
}

/*
 * Loads run AHEAD cells ahead of their use along the row, as an out-of-order
 * core's window overlaps the innermost loop's iterations (~30 instructions a
 * cell: about 8 cells in a 224-entry window). A cell's loads never alias an
 * earlier cell's stores (each update writes only its own cell of arrays it
 * reads only there), so issuing them early changes no value.
 */
#define AHEAD 8u

static void h_issue(struct cxs_kt *kt, const struct fdtd_info *I, uint64_t i, uint64_t j,
		    uint64_t k, uint32_t *h)
{
	h[0] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EX, i, j, k + 1)), 8);
	h[1] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EY, i, j, k + 1)), 8);
	h[2] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EZ, i, j, k)), 8);
	h[3] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EZ, i, j + 1, k)), 8);
	h[4] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EZ, i + 1, j, k)), 8);
	h[5] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EX, i, j + 1, k)), 8);
	h[6] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EY, i + 1, j, k)), 8);
	h[7] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HX, i, j, k)), 8);
	h[8] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HY, i, j, k)), 8);
	h[9] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HZ, i, j, k)), 8);
}

/* H update of row (i, j): cells k < n - 1 (i, j < n - 1). */
static void h_row(struct cxs_kt *kt, const struct fdtd_info *I, uint64_t i, uint64_t j)
{
	const double c = 0.5;
	uint64_t n = I->n - 1;
	uint32_t h[AHEAD][10];
	double ex = kldd(kt, at(I, FD_EX, i, j, 0)), ey = kldd(kt, at(I, FD_EY, i, j, 0));
	for (uint64_t it = 0; it < n + AHEAD; it++) {
		if (it >= AHEAD) {
			uint64_t k = it - AHEAD;
			double v[10];
			for (int x = 0; x < 10; x++)
				v[x] = cxs_kt_getd(kt, h[k % AHEAD][x]);
			double ex1 = v[0], ey1 = v[1], ez = v[2];
			kstd(kt, at(I, FD_HX, i, j, k), v[7] + c * ((ey1 - ey) - (v[3] - ez)));
			kstd(kt, at(I, FD_HY, i, j, k), v[8] + c * ((v[4] - ez) - (ex1 - ex)));
			kstd(kt, at(I, FD_HZ, i, j, k), v[9] + c * ((v[5] - ex) - (v[6] - ey)));
			ex = ex1;
			ey = ey1;
			cxs_kt_compute(kt, 18);
		}
		if (it < n)
			h_issue(kt, I, i, j, it, h[it % AHEAD]);
	}
}

static void e_issue(struct cxs_kt *kt, const struct fdtd_info *I, uint64_t i, uint64_t j,
		    uint64_t k, uint32_t *h)
{
	h[0] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HX, i, j, k)), 8);
	h[1] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HY, i, j, k)), 8);
	h[2] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HZ, i, j, k)), 8);
	h[3] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HZ, i, j - 1, k)), 8);
	h[4] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HZ, i - 1, j, k)), 8);
	h[5] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HY, i - 1, j, k)), 8);
	h[6] = cxs_kt_ld(kt, ksh(kt, at(I, FD_HX, i, j - 1, k)), 8);
	h[7] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EX, i, j, k)), 8);
	h[8] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EY, i, j, k)), 8);
	h[9] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EZ, i, j, k)), 8);
	h[10] = cxs_kt_ld(kt, ksh(kt, at(I, FD_EPS, i, j, k)), 8);
}

/* E update of row (i, j): cells k >= 1 (i, j >= 1). */
static void e_row(struct cxs_kt *kt, const struct fdtd_info *I, uint64_t i, uint64_t j)
{
	uint64_t n = I->n - 1; /* cells k = 1 .. n */
	uint32_t h[AHEAD][11];
	double hx = kldd(kt, at(I, FD_HX, i, j, 0)), hy = kldd(kt, at(I, FD_HY, i, j, 0));
	for (uint64_t it = 0; it < n + AHEAD; it++) {
		if (it >= AHEAD) {
			uint64_t k = it - AHEAD + 1;
			double v[11];
			for (int x = 0; x < 11; x++)
				v[x] = cxs_kt_getd(kt, h[(k - 1) % AHEAD][x]);
			double hx1 = v[0], hy1 = v[1], hz = v[2], c = v[10];
			kstd(kt, at(I, FD_EX, i, j, k), v[7] + c * ((hz - v[3]) - (hy1 - hy)));
			kstd(kt, at(I, FD_EY, i, j, k), v[8] + c * ((hx1 - hx) - (hz - v[4])));
			kstd(kt, at(I, FD_EZ, i, j, k), v[9] + c * ((hy1 - v[5]) - (hx1 - v[6])));
			hx = hx1;
			hy = hy1;
			cxs_kt_compute(kt, 20);
		}
		if (it < n)
			e_issue(kt, I, i, j, it + 1, h[it % AHEAD]);
	}
}

static void run(struct cxs_kt *kt)
{
	const struct fdtd_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt);
	uint64_t lo, hi;
	kshare(I->n, cxs_kt_id(kt), T, &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (uint64_t i = lo; i < hi && i + 1 < I->n; i++)
		for (uint64_t j = 0; j + 1 < I->n; j++)
			h_row(kt, I, i, j);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	for (uint64_t i = lo > 0 ? lo : 1; i < hi; i++)
		for (uint64_t j = 1; j < I->n; j++)
			e_row(kt, I, i, j);
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	uint64_t cells = I->n * I->n * I->n;
	for (int a = 0; a < FD_EPS; a++)
		kcheck_share(kt, I->arr[a], 8 * cells);
}

const struct cxs_kernel cxs_kernel_fotonik = {
	.name = "fotonik",
	.doc = "modelled after SPEC CPU 2017's 649.fotonik3d: one Yee FDTD step (H then E curls) on a size^3 grid, seven streamed arrays",
	.default_size = 40,
	.deterministic = true,
	.build = build,
	.run = run,
};
