/*
 * k_streamcluster.c — k-median clustering by local search (the "pgain" step
 * of online facility location), modelled after PARSEC's streamcluster: points
 * in shared memory streamed by every thread each step, per-thread partial
 * gains in a shared work array, barriers between the phases. Not the original
 * program: one chunk of points, a fixed sequence of candidate centres, no
 * speedy initialisation (all points start assigned to point 0).
 *
 * Data. size = N points of CXS_SC_DIM doubles, drawn at build time around
 * CXS_SC_CLUSTERS seeded cluster centres. Facility cost z = (initial total
 * cost) / 64, so a few dozen centres pay for themselves. At most CXS_SC_KMAX
 * centres; a centre is a slot in a table (point index, or free).
 *
 * Shared layout (64-byte lines):
 *   line 0     header: N, dim, kmax, offsets, z (double)
 *   line 1     barrier
 *   line 2     final: total cost (double), centres open, candidates opened
 *   partials   per thread one line: switch gain, closing gain, points' cost
 *   lower      per thread CXS_SC_KMAX doubles (streamcluster's work_mem)
 *   gl_lower   CXS_SC_KMAX doubles (reduced)
 *   table      CXS_SC_KMAX words: the centre's point index, ~0 if free
 *   meta       per point 16 bytes: centre slot, cost (double)
 *   coords     N x CXS_SC_DIM doubles (read-only)
 * Thread t owns points [N t / T, N (t+1) / T) and centre slots
 * [KMAX t / T, KMAX (t+1) / T); a point's x_cost and switch flag for the
 * current candidate live in the owner's private memory.
 *
 * One candidate x (a hash of the iteration number; skipped if x is a centre):
 *   P1 own points: x_cost = |p - x|^2; if x_cost < cost the point would
 *      switch (gain += x_cost - cost), else lower[slot(p)] += cost - x_cost;
 *      the thread's lower[] and switch gain to its lines.        barrier
 *   P2 own slots: gl_lower = z + sum over threads of lower (thread order);
 *      closing gain += gl_lower where positive.                   barrier
 *   P3 every thread: total = z + sum of switch gains - sum of closing gains
 *      (thread order: the same double everywhere); open x if total < 0 and a
 *      slot is free or closing (the lowest such slot).
 *   P4 if open, own points: switch to x if the flag is set or their centre
 *      closes.                                                    barrier
 *   P5 thread 0: updates the table (no one reads it until after P1's barrier).
 * Loads of a point's coordinates, slot and cost are issued together; the
 * candidate's coordinates once per step. Charged compute: 3 instructions a
 * dimension, ~12 per point.
 *
 * Deterministic (every double is summed in a fixed order): each thread checks
 * its points' meta, thread 0 the table and the final line. Memory operations
 * per step ~ (N/T)(dim + 5) + 2 KMAX + 2T; CXS_SC_ITERS = 128 steps: ~0.7 M a
 * thread at N = 8192 and T = 64.
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define CXS_SC_DIM 32u
#define CXS_SC_KMAX 64u
#define CXS_SC_CLUSTERS 24u
#define CXS_SC_ITERS 128u
#define CXS_SC_N_MAX (1u << 20)
#define FREE_SLOT UINT64_MAX
#define OFF_HDR 0
#define OFF_BAR LINE
#define OFF_FINAL (2 * LINE)

struct sc_layout {
	uint64_t n, part_off, lower_off, gl_off, table_off, meta_off, coords_off;
	double z;
};

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double unit(uint64_t *s)
{
	*s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (double)(*s >> 11) / 9007199254740992.0;
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	uint32_t T = img->nthreads;
	if (img->size < 2 || img->size > CXS_SC_N_MAX) {
		snprintf(err, errlen, "streamcluster: size (points) must be 2..%u (got %" PRIu64 ")",
			 CXS_SC_N_MAX, img->size);
		return -1;
	}
	struct sc_layout *L = calloc(1, sizeof *L);
	if (!L) {
		snprintf(err, errlen, "streamcluster: out of memory");
		return -1;
	}
	L->n = img->size;
	L->part_off = 3 * LINE;
	L->lower_off = L->part_off + (uint64_t)T * LINE;
	L->gl_off = L->lower_off + (uint64_t)T * CXS_SC_KMAX * 8;
	L->table_off = L->gl_off + CXS_SC_KMAX * 8;
	L->meta_off = L->table_off + CXS_SC_KMAX * 8;
	L->coords_off = L->meta_off + (L->n * 16 + LINE - 1) / LINE * LINE;
	img->shared_bytes = L->coords_off + L->n * CXS_SC_DIM * 8;
	img->private_bytes = ((L->n + T - 1) / T) * 16 + LINE;
	img->info = L;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		snprintf(err, errlen, "streamcluster: out of memory for %" PRIu64 " bytes",
			 img->shared_bytes);
		return -1;
	}
	uint8_t *sh = img->shared;
	uint64_t s = img->seed ^ UINT64_C(0x57c1);
	double cent[CXS_SC_CLUSTERS][CXS_SC_DIM];
	for (uint32_t c = 0; c < CXS_SC_CLUSTERS; c++)
		for (uint32_t d = 0; d < CXS_SC_DIM; d++)
			cent[c][d] = unit(&s);
	double *co = (double *)(sh + L->coords_off);
	for (uint64_t p = 0; p < L->n; p++) {
		uint32_t c = (uint32_t)(unit(&s) * CXS_SC_CLUSTERS);
		for (uint32_t d = 0; d < CXS_SC_DIM; d++)
			co[p * CXS_SC_DIM + d] = cent[c][d] + 0.15 * (unit(&s) - 0.5);
	}
	double total = 0;
	for (uint64_t p = 0; p < L->n; p++) {
		double dist = 0;
		for (uint32_t d = 0; d < CXS_SC_DIM; d++) {
			double x = co[p * CXS_SC_DIM + d] - co[d];
			dist += x * x;
		}
		uint64_t slot = 0;
		memcpy(sh + L->meta_off + p * 16, &slot, 8);
		memcpy(sh + L->meta_off + p * 16 + 8, &dist, 8);
		total += dist;
	}
	for (uint32_t k = 0; k < CXS_SC_KMAX; k++) {
		uint64_t v = k == 0 ? 0 : FREE_SLOT;
		memcpy(sh + L->table_off + 8 * k, &v, 8);
	}
	L->z = total / 64;
	uint64_t hdr[7] = {L->n, CXS_SC_DIM, CXS_SC_KMAX, L->meta_off, L->coords_off, L->table_off, 0};
	memcpy(hdr + 6, &L->z, 8);
	memcpy(sh + OFF_HDR, hdr, sizeof hdr);
	return 0;
}

/* The candidate of step `it`. */
static uint64_t candidate(const struct sc_layout *L, uint32_t it)
{
	return mix(UINT64_C(0xca4d) + it) % L->n;
}

static void run(struct cxs_kt *kt)
{
	const struct sc_layout *L = cxs_kt_image(kt)->info;
	uint64_t s = cxs_kt_shared(kt), bar = s + OFF_BAR, priv = cxs_kt_private(kt);
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t lo = L->n * t / T, hi = L->n * (t + 1) / T;
	uint32_t slo = CXS_SC_KMAX * t / T, shi = CXS_SC_KMAX * (t + 1) / T;
	uint64_t meta = s + L->meta_off, coords = s + L->coords_off, table = s + L->table_off;
	uint64_t gl = s + L->gl_off, part = s + L->part_off;
	uint64_t opened = 0, switched = 0;
	cxs_kt_roi_begin(kt);
	for (uint32_t it = 0; it < CXS_SC_ITERS; it++) {
		uint64_t x = candidate(L, it);
		/* P1 */
		double xc[CXS_SC_DIM], lower[CXS_SC_KMAX] = {0}, gain = 0;
		uint32_t h[CXS_SC_DIM + 2];
		for (uint32_t d = 0; d < CXS_SC_DIM; d++)
			h[d] = cxs_kt_ld(kt, coords + (x * CXS_SC_DIM + d) * 8, 8);
		/* x's slot: read here, where nobody writes meta (P4 of the last step
		 * is behind a barrier) */
		uint64_t xs = cxs_kt_load(kt, meta + x * 16, 8);
		for (uint32_t d = 0; d < CXS_SC_DIM; d++)
			xc[d] = cxs_kt_getd(kt, h[d]);
		for (uint64_t p = lo; p < hi; p++) {
			for (uint32_t d = 0; d < CXS_SC_DIM; d++)
				h[d] = cxs_kt_ld(kt, coords + (p * CXS_SC_DIM + d) * 8, 8);
			h[CXS_SC_DIM] = cxs_kt_ld(kt, meta + p * 16, 8);
			h[CXS_SC_DIM + 1] = cxs_kt_ld(kt, meta + p * 16 + 8, 8);
			double dist = 0;
			for (uint32_t d = 0; d < CXS_SC_DIM; d++) {
				double v = cxs_kt_getd(kt, h[d]) - xc[d];
				dist += v * v;
			}
			uint64_t slot = cxs_kt_get(kt, h[CXS_SC_DIM]);
			double cost = cxs_kt_getd(kt, h[CXS_SC_DIM + 1]);
			bool sw = dist < cost;
			if (sw)
				gain += dist - cost;
			else
				lower[slot] += cost - dist;
			cxs_kt_stored(kt, priv + (p - lo) * 16, dist);
			cxs_kt_store(kt, priv + (p - lo) * 16 + 8, 8, sw);
			cxs_kt_compute(kt, 3 * CXS_SC_DIM + 12);
		}
		for (uint32_t k = 0; k < CXS_SC_KMAX; k++)
			cxs_kt_stored(kt, s + L->lower_off + ((uint64_t)t * CXS_SC_KMAX + k) * 8, lower[k]);
		cxs_kt_stored(kt, part + (uint64_t)t * LINE, gain);
		cxs_kt_barrier(kt, bar, T);
		/* P2 */
		double closing = 0;
		for (uint32_t k = slo; k < shi; k++) {
			if (cxs_kt_load(kt, table + 8 * k, 8) == FREE_SLOT)
				continue;
			double low = L->z;
			for (uint32_t u0 = 0; u0 < T; u0 += 64) {
				uint32_t hl[64], n = 0;
				for (uint32_t u = u0; u < T && n < 64; u++)
					hl[n++] = cxs_kt_ld(kt, s + L->lower_off + ((uint64_t)u * CXS_SC_KMAX + k) * 8, 8);
				for (uint32_t b = 0; b < n; b++)
					low += cxs_kt_getd(kt, hl[b]);
			}
			cxs_kt_stored(kt, gl + 8 * k, low);
			if (low > 0)
				closing += low;
			cxs_kt_compute(kt, T + 8);
		}
		cxs_kt_stored(kt, part + (uint64_t)t * LINE + 8, closing);
		cxs_kt_barrier(kt, bar, T);
		/* P3: the same decision on every thread */
		double total = L->z;
		for (uint32_t u0 = 0; u0 < T; u0 += 32) {
			uint32_t hp[64], n = 0;
			for (uint32_t u = u0; u < T && n < 64; u++) {
				hp[n++] = cxs_kt_ld(kt, part + (uint64_t)u * LINE, 8);
				hp[n++] = cxs_kt_ld(kt, part + (uint64_t)u * LINE + 8, 8);
			}
			for (uint32_t b = 0; b < n; b += 2)
				total += cxs_kt_getd(kt, hp[b]) - cxs_kt_getd(kt, hp[b + 1]);
		}
		uint64_t tab[CXS_SC_KMAX];
		double gll[CXS_SC_KMAX];
		uint32_t ht[2 * CXS_SC_KMAX];
		for (uint32_t k = 0; k < CXS_SC_KMAX; k++) {
			ht[2 * k] = cxs_kt_ld(kt, table + 8 * k, 8);
			ht[2 * k + 1] = cxs_kt_ld(kt, gl + 8 * k, 8);
		}
		uint32_t xslot = CXS_SC_KMAX;
		for (uint32_t k = 0; k < CXS_SC_KMAX; k++) {
			tab[k] = cxs_kt_get(kt, ht[2 * k]);
			gll[k] = cxs_kt_getd(kt, ht[2 * k + 1]);
			bool closes = tab[k] != FREE_SLOT && gll[k] > 0;
			if (xslot == CXS_SC_KMAX && (tab[k] == FREE_SLOT || closes))
				xslot = k;
		}
		bool open = total < 0 && xslot < CXS_SC_KMAX && tab[xs] != x;
		cxs_kt_compute(kt, 4 * CXS_SC_KMAX + 4 * T);
		/* P4 */
		if (open) {
			for (uint64_t p = lo; p < hi; p++) {
				uint32_t hm = cxs_kt_ld(kt, meta + p * 16, 8);
				uint32_t hx = cxs_kt_ld(kt, priv + (p - lo) * 16, 8);
				uint32_t hs = cxs_kt_ld(kt, priv + (p - lo) * 16 + 8, 8);
				uint64_t slot = cxs_kt_get(kt, hm);
				uint64_t xcost = cxs_kt_get(kt, hx);
				bool sw = cxs_kt_get(kt, hs) != 0;
				cxs_kt_compute(kt, 6);
				if (sw || (tab[slot] != FREE_SLOT && gll[slot] > 0)) {
					cxs_kt_store(kt, meta + p * 16, 8, xslot);
					cxs_kt_store(kt, meta + p * 16 + 8, 8, xcost);
					switched++;
				}
			}
			opened++;
		}
		cxs_kt_barrier(kt, bar, T);
		/* P5 */
		if (open && t == 0) {
			for (uint32_t k = 0; k < CXS_SC_KMAX; k++)
				if (tab[k] != FREE_SLOT && gll[k] > 0)
					cxs_kt_store(kt, table + 8 * k, 8, FREE_SLOT);
			cxs_kt_store(kt, table + 8 * xslot, 8, x);
		}
	}
	/* The final cost: partials in thread order. */
	double mine = 0;
	for (uint64_t p = lo; p < hi; p++)
		mine += cxs_kt_loadd(kt, meta + p * 16 + 8);
	cxs_kt_stored(kt, part + (uint64_t)t * LINE + 16, mine);
	cxs_kt_barrier(kt, bar, T);
	if (t == 0) {
		double total = 0;
		for (uint32_t u = 0; u < T; u++)
			total += cxs_kt_loadd(kt, part + (uint64_t)u * LINE + 16);
		uint64_t centres = 0;
		for (uint32_t k = 0; k < CXS_SC_KMAX; k++)
			centres += cxs_kt_load(kt, table + 8 * k, 8) != FREE_SLOT;
		cxs_kt_stored(kt, s + OFF_FINAL, total);
		cxs_kt_store(kt, s + OFF_FINAL + 8, 8, centres);
		cxs_kt_store(kt, s + OFF_FINAL + 16, 8, opened);
		cxs_kt_result(kt, "centres", centres);
	}
	cxs_kt_barrier(kt, bar, T);
	cxs_kt_roi_end(kt);
	cxs_kt_check_words(kt, L->meta_off + lo * 16, (hi - lo) * 16);
	if (t == 0) {
		cxs_kt_check_words(kt, OFF_FINAL, LINE);
		cxs_kt_check_words(kt, L->table_off, CXS_SC_KMAX * 8);
	}
	cxs_kt_result(kt, "candidates", CXS_SC_ITERS);
	cxs_kt_result(kt, "opened", opened);
	cxs_kt_result(kt, "points_switched", switched);
}

const struct cxs_kernel cxs_kernel_streamcluster = {
	.name = "streamcluster",
	.doc = "modelled after PARSEC's streamcluster: k-median local search (pgain) over size "
	       "32-dimensional points in CXL memory, per-thread partial gains, barriers",
	.default_size = 8192,
	.deterministic = true,
	.build = build,
	.run = run,
};
