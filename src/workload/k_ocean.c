/*
 * k_ocean.c — ocean_cp and ocean_ncp: red-black SOR relaxation on shared 2-D
 * grids, modelled after SPLASH-2's ocean (contiguous and non-contiguous
 * partitions). Not the original program: one elliptic solve per time step
 * (no multigrid) followed by an update of the right-hand side, which is what
 * gives ocean its streaming, write-heavy sharing pattern (the DIKTAMO paper's
 * most write-intensive workload, §VI).
 *
 * Grids. size = N, the interior points per side; each grid has (N+2) x (N+2)
 * doubles, the outer ring a fixed boundary. Two grids: psi (the unknown) and
 * rhs (the right-hand side). N = 512 gives SPLASH-2's 514 x 514 grid.
 *
 * Partitioning. The T threads form a py x px grid (py the largest divisor of
 * T not above sqrt(T)); thread t = bi * px + bj owns rows [rlo[bi], rlo[bi+1])
 * and columns [clo[bj], clo[bj+1]) of the (N+2)-point grid, rlo[b] =
 * (N+2) * b / py, clo likewise (uneven blocks differ by one row or column).
 *
 *   ocean_ncp  one row-major (N+2) x (N+2) array per grid: a thread's block
 *              is a strided sub-array (each of its rows is a separate run of
 *              memory, N+2 doubles apart).
 *   ocean_cp   "4-D arrays": each thread's block is stored contiguously
 *              (block t at blk_off[t], row-major inside the block, 64-byte
 *              aligned), so a thread's working set is one run of memory and
 *              only block edges touch neighbours' blocks.
 * Both compute the same values in the same order: only the addresses differ.
 *
 * Shared layout (64-byte lines):
 *   line 0            barrier
 *   lines 1 .. T      per-thread residual partial (a double, own line)
 *   result line       residual after each time step (thread 0 writes)
 *   psi, rhs          the grids (layout above)
 *
 * One time step:
 *   CXS_OCEAN_ITERS x { red half-sweep; barrier; black half-sweep; barrier }
 *     psi += w * ((psi_n + psi_s + psi_e + psi_w - h2 * rhs) / 4 - psi)
 *     a red point (i + j even) reads only black neighbours, so a half-sweep
 *     has no races and its result does not depend on timing;
 *   residual: each thread's sum of |update| over the last iteration goes to
 *     its slot; after the barrier every thread sums the T slots in thread
 *     order (the same double on every thread; thread 0 records it);
 *   rhs update: rhs = rhs / 2 + (laplacian of psi) / 8 + forcing; reads psi
 *     only, writes each rhs point once; barrier.
 * Loads of a batch of CXS_OCEAN_BATCH points (5 psi + 1 rhs each) are issued
 * together before any is used: the stencil's memory-level parallelism.
 * Charged compute: ~12 instructions per point update (-O3 body: 5 adds,
 * 3 multiplies, abs, compare, index arithmetic).
 *
 * Operations: ~49 memory operations per point per step (6 iterations x 7,
 * rhs update 7), 4 steps: 196 N^2 / T per thread, ~0.8 M at N = 512 and
 * T = 64. Deterministic: each thread checks its blocks of psi and rhs
 * against the reference run; thread 0 also the residuals.
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define CXS_OCEAN_STEPS 4u
#define CXS_OCEAN_ITERS 6u
#define CXS_OCEAN_BATCH 16u /* points: 96 loads in flight, below CXS_KT_MAX_INFLIGHT */
#define CXS_OCEAN_N_MAX 2046u /* two (N+2)^2 grids of doubles: 64 MiB */
#define OMEGA 1.15            /* over-relaxation factor */

struct ocean_layout {
	uint32_t n, px, py, nthreads;
	bool contiguous;
	uint64_t res_off, psi_off, rhs_off; /* shared offsets */
	uint64_t *blk_off;                  /* cp: block t's offset within a grid */
	uint32_t *rlo, *clo;                /* py + 1, px + 1 bounds */
	uint32_t *row_blk, *col_blk;        /* N + 2 entries: the block row/column */
};

static uint64_t round_line(uint64_t b)
{
	return (b + LINE - 1) / LINE * LINE;
}

/* Byte offset of grid point (i, j) within a grid. */
static uint64_t point_off(const struct ocean_layout *L, uint32_t i, uint32_t j)
{
	if (!L->contiguous)
		return ((uint64_t)i * (L->n + 2) + j) * 8;
	uint32_t bi = L->row_blk[i], bj = L->col_blk[j];
	uint32_t w = L->clo[bj + 1] - L->clo[bj];
	return L->blk_off[bi * L->px + bj] +
	       ((uint64_t)(i - L->rlo[bi]) * w + (j - L->clo[bj])) * 8;
}

/* Initial values: a smooth field plus seeded noise, boundary included. */
static double init_psi(uint64_t *s, uint32_t i, uint32_t j, uint32_t n)
{
	*s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	double noise = (double)(*s >> 11) / 9007199254740992.0 - 0.5;
	double x = (double)i / (n + 1), y = (double)j / (n + 1);
	return x * (1.0 - y) + 0.1 * noise;
}

static int build(struct cxs_kimage *img, bool contiguous, char *err, size_t errlen)
{
	uint32_t T = img->nthreads;
	if (img->size < 4 || img->size > CXS_OCEAN_N_MAX) {
		snprintf(err, errlen, "ocean: size (interior points per side) must be 4..%u (got %" PRIu64 ")",
			 CXS_OCEAN_N_MAX, img->size);
		return -1;
	}
	uint32_t n = (uint32_t)img->size, py = 1;
	for (uint32_t d = 1; (uint64_t)d * d <= T; d++)
		if (T % d == 0)
			py = d;
	uint32_t px = T / py;
	if (px > n + 2 || py > n + 2) {
		snprintf(err, errlen, "ocean: %u threads need a grid of at least %u points per side "
			 "(size %u is too small)", T, px - 2, n);
		return -1;
	}
	uint32_t g = n + 2;
	size_t extra = T * sizeof(uint64_t) + (py + 1 + px + 1 + 2 * (size_t)g) * sizeof(uint32_t);
	struct ocean_layout *L = calloc(1, sizeof *L + extra);
	if (!L) {
		snprintf(err, errlen, "ocean: out of memory");
		return -1;
	}
	L->blk_off = (uint64_t *)(L + 1);
	L->rlo = (uint32_t *)(L->blk_off + T);
	L->clo = L->rlo + py + 1;
	L->row_blk = L->clo + px + 1;
	L->col_blk = L->row_blk + g;
	L->n = n, L->px = px, L->py = py, L->nthreads = T, L->contiguous = contiguous;
	for (uint32_t b = 0; b <= py; b++)
		L->rlo[b] = (uint32_t)((uint64_t)g * b / py);
	for (uint32_t b = 0; b <= px; b++)
		L->clo[b] = (uint32_t)((uint64_t)g * b / px);
	for (uint32_t b = 0; b < py; b++)
		for (uint32_t i = L->rlo[b]; i < L->rlo[b + 1]; i++)
			L->row_blk[i] = b;
	for (uint32_t b = 0; b < px; b++)
		for (uint32_t j = L->clo[b]; j < L->clo[b + 1]; j++)
			L->col_blk[j] = b;
	uint64_t grid_bytes;
	if (contiguous) {
		uint64_t off = 0;
		for (uint32_t t = 0; t < T; t++) {
			uint32_t bi = t / px, bj = t % px;
			L->blk_off[t] = off;
			off += round_line((uint64_t)(L->rlo[bi + 1] - L->rlo[bi]) *
					  (L->clo[bj + 1] - L->clo[bj]) * 8);
		}
		grid_bytes = off;
	} else {
		grid_bytes = round_line((uint64_t)g * g * 8);
	}
	L->res_off = (1 + (uint64_t)T) * LINE;
	L->psi_off = L->res_off + round_line(CXS_OCEAN_STEPS * 8);
	L->rhs_off = L->psi_off + grid_bytes;
	img->shared_bytes = L->rhs_off + grid_bytes;
	img->private_bytes = LINE;
	img->info = L;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "ocean: out of memory for %" PRIu64 " bytes", img->shared_bytes);
		return -1;
	}
	uint64_t s = img->seed ^ UINT64_C(0x0cea0cea0cea);
	for (uint32_t i = 0; i < g; i++)
		for (uint32_t j = 0; j < g; j++) {
			double p = init_psi(&s, i, j, n);
			double r = 0.01 * (double)((i * 7 + j * 13) % 17) - 0.08;
			memcpy(img->shared + L->psi_off + point_off(L, i, j), &p, 8);
			memcpy(img->shared + L->rhs_off + point_off(L, i, j), &r, 8);
		}
	return 0;
}

static int build_cp(struct cxs_kimage *img, char *err, size_t errlen)
{
	return build(img, true, err, errlen);
}

static int build_ncp(struct cxs_kimage *img, char *err, size_t errlen)
{
	return build(img, false, err, errlen);
}

/* The thread's interior points: rows [*i0, *i1), columns [*j0, *j1). */
static void my_block(const struct ocean_layout *L, uint32_t t, uint32_t *i0, uint32_t *i1,
		     uint32_t *j0, uint32_t *j1)
{
	uint32_t bi = t / L->px, bj = t % L->px;
	*i0 = L->rlo[bi] < 1 ? 1 : L->rlo[bi];
	*i1 = L->rlo[bi + 1] > L->n + 1 ? L->n + 1 : L->rlo[bi + 1];
	*j0 = L->clo[bj] < 1 ? 1 : L->clo[bj];
	*j1 = L->clo[bj + 1] > L->n + 1 ? L->n + 1 : L->clo[bj + 1];
}

/* Issues the six independent loads of a point's stencil: centre, four neighbours, rhs. */
static void issue_stencil(struct cxs_kt *kt, const struct ocean_layout *L, uint64_t psi,
			  uint64_t rhs, uint32_t i, uint32_t j, uint32_t h[6])
{
	h[0] = cxs_kt_ld(kt, psi + point_off(L, i, j), 8);
	h[1] = cxs_kt_ld(kt, psi + point_off(L, i - 1, j), 8);
	h[2] = cxs_kt_ld(kt, psi + point_off(L, i + 1, j), 8);
	h[3] = cxs_kt_ld(kt, psi + point_off(L, i, j - 1), 8);
	h[4] = cxs_kt_ld(kt, psi + point_off(L, i, j + 1), 8);
	h[5] = cxs_kt_ld(kt, rhs + point_off(L, i, j), 8);
}

/* One half-sweep over the thread's points of one colour; returns sum |update|. */
static double half_sweep(struct cxs_kt *kt, const struct ocean_layout *L, uint32_t colour)
{
	uint64_t psi = cxs_kt_shared(kt) + L->psi_off, rhs = cxs_kt_shared(kt) + L->rhs_off;
	double step_len = 1.0 / (L->n + 1), h2 = step_len * step_len, res = 0.0;
	uint32_t i0, i1, j0, j1;
	my_block(L, cxs_kt_id(kt), &i0, &i1, &j0, &j1);
	for (uint32_t i = i0; i < i1; i++) {
		uint32_t jf = j0 + ((i + j0 + colour) & 1); /* first point of the colour */
		for (uint32_t j = jf; j < j1;) {
			uint32_t h[CXS_OCEAN_BATCH][6], js[CXS_OCEAN_BATCH], k = 0;
			for (; k < CXS_OCEAN_BATCH && j < j1; k++, j += 2) {
				js[k] = j;
				issue_stencil(kt, L, psi, rhs, i, j, h[k]);
			}
			for (uint32_t b = 0; b < k; b++) {
				double c = cxs_kt_getd(kt, h[b][0]);
				double sum = cxs_kt_getd(kt, h[b][1]) + cxs_kt_getd(kt, h[b][2]) +
					     cxs_kt_getd(kt, h[b][3]) + cxs_kt_getd(kt, h[b][4]);
				double r = cxs_kt_getd(kt, h[b][5]);
				double d = OMEGA * ((sum - h2 * r) * 0.25 - c);
				cxs_kt_compute(kt, 12);
				cxs_kt_stored(kt, psi + point_off(L, i, js[b]), c + d);
				res += d < 0 ? -d : d;
			}
		}
	}
	return res;
}

/* rhs = rhs / 2 + laplacian(psi) / 8 + forcing, over the thread's points. */
static void update_rhs(struct cxs_kt *kt, const struct ocean_layout *L, uint32_t step)
{
	uint64_t psi = cxs_kt_shared(kt) + L->psi_off, rhs = cxs_kt_shared(kt) + L->rhs_off;
	double forcing = 0.001 * (step + 1);
	uint32_t i0, i1, j0, j1;
	my_block(L, cxs_kt_id(kt), &i0, &i1, &j0, &j1);
	for (uint32_t i = i0; i < i1; i++)
		for (uint32_t j = j0; j < j1;) {
			uint32_t h[CXS_OCEAN_BATCH][6], k = 0, jb = j;
			for (; k < CXS_OCEAN_BATCH && j < j1; k++, j++) {
				issue_stencil(kt, L, psi, rhs, i, j, h[k]);
			}
			for (uint32_t b = 0; b < k; b++) {
				double c = cxs_kt_getd(kt, h[b][0]);
				double lap = cxs_kt_getd(kt, h[b][1]) + cxs_kt_getd(kt, h[b][2]) +
					     cxs_kt_getd(kt, h[b][3]) + cxs_kt_getd(kt, h[b][4]) -
					     4.0 * c;
				double r = cxs_kt_getd(kt, h[b][5]);
				cxs_kt_compute(kt, 10);
				cxs_kt_stored(kt, rhs + point_off(L, i, jb + b),
					      r * 0.5 + lap * 0.125 + forcing);
			}
		}
}

/* Each thread checks its block of one grid against the reference. */
static void check_grid(struct cxs_kt *kt, const struct ocean_layout *L, uint64_t grid_off)
{
	uint32_t t = cxs_kt_id(kt), bi = t / L->px, bj = t % L->px;
	uint32_t r0 = L->rlo[bi], r1 = L->rlo[bi + 1], c0 = L->clo[bj], c1 = L->clo[bj + 1];
	if (L->contiguous) {
		cxs_kt_check_words(kt, grid_off + L->blk_off[t], (uint64_t)(r1 - r0) * (c1 - c0) * 8);
		return;
	}
	for (uint32_t i = r0; i < r1; i++)
		cxs_kt_check_words(kt, grid_off + point_off(L, i, c0), (uint64_t)(c1 - c0) * 8);
}

static void run(struct cxs_kt *kt)
{
	const struct ocean_layout *L = cxs_kt_image(kt)->info;
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t s = cxs_kt_shared(kt), bar = s;
	uint32_t i0, i1, j0, j1;
	my_block(L, t, &i0, &i1, &j0, &j1);
	uint64_t points = (uint64_t)(i1 > i0 ? i1 - i0 : 0) * (j1 > j0 ? j1 - j0 : 0);
	cxs_kt_roi_begin(kt);
	for (uint32_t step = 0; step < CXS_OCEAN_STEPS; step++) {
		double res = 0.0;
		for (uint32_t it = 0; it < CXS_OCEAN_ITERS; it++) {
			res = half_sweep(kt, L, 0);
			cxs_kt_barrier(kt, bar, T);
			res += half_sweep(kt, L, 1);
			if (it + 1 == CXS_OCEAN_ITERS)
				cxs_kt_stored(kt, s + (1 + (uint64_t)t) * LINE, res);
			cxs_kt_barrier(kt, bar, T);
		}
		uint32_t h[64];
		double total = 0.0;
		for (uint32_t u0 = 0; u0 < T; u0 += 64) {
			uint32_t k = 0;
			for (uint32_t u = u0; u < T && k < 64; u++)
				h[k++] = cxs_kt_ld(kt, s + (1 + (uint64_t)u) * LINE, 8);
			for (uint32_t b = 0; b < k; b++)
				total += cxs_kt_getd(kt, h[b]);
		}
		if (t == 0)
			cxs_kt_stored(kt, s + L->res_off + step * 8, total);
		update_rhs(kt, L, step);
		cxs_kt_barrier(kt, bar, T);
	}
	cxs_kt_roi_end(kt);
	check_grid(kt, L, L->psi_off);
	check_grid(kt, L, L->rhs_off);
	if (t == 0)
		cxs_kt_check_words(kt, L->res_off, CXS_OCEAN_STEPS * 8);
	cxs_kt_result(kt, "points_relaxed", points * CXS_OCEAN_STEPS * CXS_OCEAN_ITERS);
	cxs_kt_result(kt, "points_updated", points * CXS_OCEAN_STEPS);
}

const struct cxs_kernel cxs_kernel_ocean_cp = {
	.name = "ocean_cp",
	.doc = "modelled after SPLASH-2's ocean (contiguous partitions): red-black SOR on "
	       "(size+2)^2 grids, each thread's block contiguous in CXL memory",
	.default_size = 512,
	.deterministic = true,
	.build = build_cp,
	.run = run,
};

const struct cxs_kernel cxs_kernel_ocean_ncp = {
	.name = "ocean_ncp",
	.doc = "modelled after SPLASH-2's ocean (non-contiguous partitions): red-black SOR on "
	       "row-major (size+2)^2 grids, each thread's block strided",
	.default_size = 512,
	.deterministic = true,
	.build = build_ncp,
	.run = run,
};
