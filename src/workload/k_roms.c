/*
 * k_roms.c — a regional ocean model's tracer step, modelled after SPEC CPU
 * 2017's 654.roms (CAMP's other bandwidth-bound interleaving example, its
 * Fig. 11 and 15): a tracer on an nx x nx x NZ grid ([k][j][i], i fastest;
 * nx = size), one step of
 *   1  horizontal advection and diffusion (centred fluxes with the face
 *      velocities u, v, a 5-point Laplacian) into tn       barrier
 *   2  vertical implicit diffusion: a tridiagonal solve down every column
 *      (the Thomas algorithm with the diffusivity akv), i innermost so that
 *      a j-row of columns advances level by level, its forward elimination
 *      through the scratch arrays cp, dp and its back substitution into t
 * Threads own bands of j. Not the original program: one tracer, no
 * momentum, periodic-free walls.
 *
 * Memory behaviour: phase 1 streams three rows of t and rows of u, v
 * (6 loads, 1 store a cell); phase 2 streams tn, akv down the levels, then
 * cp, dp back up (9 accesses a cell, 3 of them stores): every array touched
 * once or twice per step over 7 x 8 B x NZ nx^2 (3.5 MiB at nx = 64) —
 * bandwidth-bound on 8 cores.
 *
 * Shared layout: barrier line, t, tn, u, v, akv, cp, dp (doubles [NZ][nx][nx]).
 * Result: t, tn, cp, dp after the step.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	if (!ksize_ok(img, "roms", "horizontal grid side", 4, 4096, err, errlen))
		return -1;
	struct roms_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "roms: out of memory");
		return -1;
	}
	img->info = I;
	I->nx = img->size;
	uint64_t off = 0, cells = ROMS_NZ * I->nx * I->nx;
	I->bar_off = klay_take(&off, KL_LINE);
	for (int a = 0; a < ROMS_NARR; a++)
		I->arr[a] = klay_take(&off, 8 * cells);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "roms", off, err, errlen) != 0)
		return -1;
	uint64_t s = img->seed ^ UINT64_C(0x7035);
	for (uint64_t c = 0; c < cells; c++) {
		kputd(img->shared, I->arr[ROMS_T] + 8 * c, 10 + kunit(&s));
		kputd(img->shared, I->arr[ROMS_U] + 8 * c, 0.2 * (kunit(&s) - 0.5));
		kputd(img->shared, I->arr[ROMS_V] + 8 * c, 0.2 * (kunit(&s) - 0.5));
		kputd(img->shared, I->arr[ROMS_AKV] + 8 * c, 0.05 + 0.1 * kunit(&s));
	}
	return 0;
}

static uint64_t at(const struct roms_info *I, int a, uint64_t k, uint64_t j, uint64_t i)
{
	return I->arr[a] + 8 * ((k * I->nx + j) * I->nx + i);
}

/*
 * Loads run AHEAD points ahead of their use along a row (an out-of-order
 * core's window over the innermost loop); the pipeline drains at the end of
 * every row, so a point's loads never pass a store of an earlier row they
 * depend on (the vertical sweeps read the previous level's cp, dp and t).
 */
#define AHEAD 12u

/* Phase 1 on row (k, j), interior i: tn = t + advection + diffusion. */
static void horizontal(struct cxs_kt *kt, const struct roms_info *I, uint64_t k, uint64_t j)
{
	const double dt = 0.1, kappa = 0.05;
	uint64_t nx = I->nx, n = nx - 2; /* points i = 1 .. nx - 2 */
	uint32_t h[AHEAD][6];
	double tw = kldd(kt, at(I, ROMS_T, k, j, 0)), tc = kldd(kt, at(I, ROMS_T, k, j, 1));
	double uw = kldd(kt, at(I, ROMS_U, k, j, 1));
	for (uint64_t it = 0; it < n + AHEAD; it++) {
		if (it >= AHEAD) {
			uint64_t i = it - AHEAD + 1;
			uint32_t *g = h[(i - 1) % AHEAD];
			double te = cxs_kt_getd(kt, g[0]), ts = cxs_kt_getd(kt, g[1]), tnn = cxs_kt_getd(kt, g[2]);
			double ue = cxs_kt_getd(kt, g[3]), vs = cxs_kt_getd(kt, g[4]), vn = cxs_kt_getd(kt, g[5]);
			double adv = -0.5 * (ue * (te + tc) - uw * (tc + tw) + vn * (tnn + tc) - vs * (tc + ts));
			double lap = te + tw + tnn + ts - 4 * tc;
			kstd(kt, at(I, ROMS_TN, k, j, i), tc + dt * (adv + kappa * lap));
			tw = tc;
			tc = te;
			uw = ue;
			cxs_kt_compute(kt, 16);
		}
		if (it < n) {
			uint64_t i = it + 1;
			uint32_t *g = h[it % AHEAD];
			g[0] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_T, k, j, i + 1)), 8);
			g[1] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_T, k, j - 1, i)), 8);
			g[2] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_T, k, j + 1, i)), 8);
			g[3] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_U, k, j, i + 1)), 8);
			g[4] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_V, k, j, i)), 8);
			g[5] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_V, k, j + 1, i)), 8);
		}
	}
}

/* Phase 2 on the columns of row j: (1 + 2a) x_k - a x_{k-1} - a x_{k+1} = tn_k. */
static void vertical(struct cxs_kt *kt, const struct roms_info *I, uint64_t j)
{
	uint64_t nx = I->nx;
	uint32_t h[AHEAD][4];
	for (uint64_t k = 0; k < ROMS_NZ; k++)
		for (uint64_t it = 0; it < nx + AHEAD; it++) {
			if (it >= AHEAD) {
				uint64_t i = it - AHEAD;
				uint32_t *g = h[i % AHEAD];
				double a = cxs_kt_getd(kt, g[0]), d = cxs_kt_getd(kt, g[1]);
				double cp0 = k > 0 ? cxs_kt_getd(kt, g[2]) : 0, dp0 = k > 0 ? cxs_kt_getd(kt, g[3]) : 0;
				double b = 1 + 2 * a + (k > 0 ? a * cp0 : 0); /* b_k - a_k c'_{k-1}, a_k = -a */
				double cpk = (k + 1 < ROMS_NZ ? -a : 0) / b, dpk = (d + a * dp0) / b;
				kstd(kt, at(I, ROMS_CP, k, j, i), cpk);
				kstd(kt, at(I, ROMS_DP, k, j, i), dpk);
				cxs_kt_compute(kt, 12);
			}
			if (it < nx) {
				uint32_t *g = h[it % AHEAD];
				g[0] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_AKV, k, j, it)), 8);
				g[1] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_TN, k, j, it)), 8);
				if (k > 0) {
					g[2] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_CP, k - 1, j, it)), 8);
					g[3] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_DP, k - 1, j, it)), 8);
				}
			}
		}
	for (uint64_t k = ROMS_NZ; k-- > 0;)
		for (uint64_t it = 0; it < nx + AHEAD; it++) {
			if (it >= AHEAD) {
				uint64_t i = it - AHEAD;
				uint32_t *g = h[i % AHEAD];
				double cpk = cxs_kt_getd(kt, g[0]), dpk = cxs_kt_getd(kt, g[1]);
				double below = k + 1 < ROMS_NZ ? cxs_kt_getd(kt, g[2]) : 0;
				kstd(kt, at(I, ROMS_T, k, j, i), dpk - cpk * below);
				cxs_kt_compute(kt, 4);
			}
			if (it < nx) {
				uint32_t *g = h[it % AHEAD];
				g[0] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_CP, k, j, it)), 8);
				g[1] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_DP, k, j, it)), 8);
				if (k + 1 < ROMS_NZ)
					g[2] = cxs_kt_ld(kt, ksh(kt, at(I, ROMS_T, k + 1, j, it)), 8);
			}
		}
}

static void run(struct cxs_kt *kt)
{
	const struct roms_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt);
	uint64_t lo, hi;
	kshare(I->nx, cxs_kt_id(kt), T, &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (uint64_t k = 0; k < ROMS_NZ; k++)
		for (uint64_t j = lo > 0 ? lo : 1; j < hi && j + 1 < I->nx; j++)
			horizontal(kt, I, k, j);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	for (uint64_t j = lo > 0 ? lo : 1; j < hi && j + 1 < I->nx; j++)
		vertical(kt, I, j);
	cxs_kt_roi_end(kt);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), cxs_kt_count(kt)); /* all results written */
	uint64_t cells = ROMS_NZ * I->nx * I->nx;
	kcheck_share(kt, I->arr[ROMS_T], 8 * cells);
	kcheck_share(kt, I->arr[ROMS_TN], 8 * cells);
	kcheck_share(kt, I->arr[ROMS_CP], 8 * cells);
	kcheck_share(kt, I->arr[ROMS_DP], 8 * cells);
}

const struct cxs_kernel cxs_kernel_roms = {
	.name = "roms",
	.doc = "modelled after SPEC CPU 2017's 654.roms: a tracer step (horizontal advection-diffusion, then vertical implicit diffusion by column) on a size x size x 16 grid",
	.default_size = 64,
	.deterministic = true,
	.build = build,
	.run = run,
};
