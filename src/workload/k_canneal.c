/*
 * k_canneal.c — simulated annealing of a netlist placement, modelled after
 * PARSEC's canneal: threads swap the elements at two random locations of a
 * shared chip, accepting a swap that lowers the routing cost or, with the
 * annealing probability, one that raises it. Random, fine-grained accesses
 * all over a large shared data set, little locality. Not the original
 * program: canneal swaps with lock-free atomic pointer exchanges and
 * tolerates stale neighbour positions; here a swap locks every location it
 * depends on, so the cost it tracks is exact and can be verified.
 *
 * Netlist. size = E elements and E locations on a grid of width
 * G = ceil(sqrt(E)) (location l at (l % G, l / G)); the placement is a
 * permutation. Each element has up to CXS_CN_NBR neighbours (undirected
 * seeded random edges); cost = sum over edges of the Manhattan distance
 * between the two ends.
 *
 * Shared layout (64-byte lines):
 *   line 0     header: E, G, elems_off, locs_off, initial cost, locks_off
 *   line 1     barrier
 *   line 2     final (thread 0, after the ROI): recomputed cost, tracked
 *              cost, initial cost, swaps accepted
 *   per thread one line: cost delta of its swaps (int64), recomputed
 *              partial cost, swaps accepted
 *   elems      E lines: location, neighbour count, CXS_CN_NBR neighbour ids
 *   locs       E words: the element at each location (packed, 8 a line, as
 *              canneal's location array)
 *   locks      E lines: the location's lock word (own line)
 *
 * A move (locations a != b drawn from the thread's stream):
 *   1. read the elements A, B at a, b; their neighbour lists (issued
 *      together); the neighbours' locations (issued together) — unlocked;
 *   2. lock the set {a, b, neighbours' locations} in ascending order
 *      (deadlock-free); re-read A, B and the neighbours' locations: if any
 *      changed, unlock and retry (an element moves only under the locks of
 *      both its locations, so what is checked under the locks is stable);
 *   3. delta = change of the cost of A's and B's edges; accept if delta < 0
 *      or rand < exp(-delta / temperature); swap (4 stores); unlock.
 * CXS_CN_STEPS temperature steps of E / T moves a thread, temperature halved
 * each step, a barrier between steps. ~75 memory operations a move (a third
 * of them lock traffic): ~0.6 M a thread at E = 65536, T = 64. Charged
 * compute: ~60 instructions a move (sorting the lock set, the cost
 * arithmetic).
 *
 * Not deterministic. After the ROI each thread checks its share of locations
 * (the element there is where its record says it is: with E locations and E
 * elements that makes the placement a permutation), that every lock is free,
 * and recomputes its elements' cost; thread 0 checks that the recomputed
 * total equals the initial cost plus every accepted delta.
 */
#include "cxlsim/kthread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64u
#define CXS_CN_NBR 6u
#define CXS_CN_EDGES_PER_ELEM 3u /* tries; ~2.5 edges an element after collisions */
#define CXS_CN_STEPS 8u
#define CXS_CN_T0 64.0 /* initial temperature, in grid steps */
#define CXS_CN_E_MAX (1u << 19) /* 64 MiB of element and location lines */
#define MAX_LOCKS (2 + 2 * CXS_CN_NBR)
#define OFF_HDR 0
#define OFF_BAR LINE
#define OFF_FINAL (2 * LINE)
#define OFF_THREADS (3 * LINE)

struct cn_layout {
	uint64_t e, g, elems_off, locs_off, locks_off, initial_cost;
};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return *s >> 17;
}

static uint64_t dist(const struct cn_layout *L, uint64_t a, uint64_t b)
{
	int64_t dx = (int64_t)(a % L->g) - (int64_t)(b % L->g);
	int64_t dy = (int64_t)(a / L->g) - (int64_t)(b / L->g);
	return (uint64_t)((dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy));
}

/* e^-x for x >= 0: a short series on x/16, squared four times (no libm). */
static double exp_neg(double x)
{
	if (x > 40)
		return 0.0;
	double y = x / 16, e = 1 - y + y * y / 2 - y * y * y / 6 + y * y * y * y / 24;
	for (int i = 0; i < 4; i++)
		e *= e;
	return e;
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	uint32_t T = img->nthreads;
	if (img->size < 2 || img->size > CXS_CN_E_MAX) {
		snprintf(err, errlen, "canneal: size (elements) must be 2..%u (got %" PRIu64 ")",
			 CXS_CN_E_MAX, img->size);
		return -1;
	}
	struct cn_layout *L = calloc(1, sizeof *L);
	uint64_t *perm = malloc(img->size * sizeof *perm);
	if (!L || !perm) {
		free(L), free(perm);
		snprintf(err, errlen, "canneal: out of memory");
		return -1;
	}
	L->e = img->size;
	for (L->g = 1; L->g * L->g < L->e; L->g++)
		;
	L->elems_off = OFF_THREADS + (uint64_t)T * LINE;
	L->locs_off = L->elems_off + L->e * LINE;
	L->locks_off = L->locs_off + (L->e * 8 + LINE - 1) / LINE * LINE;
	img->shared_bytes = L->locks_off + L->e * LINE;
	img->private_bytes = LINE;
	img->info = L;
	img->shared = calloc(1, img->shared_bytes);
	if (!img->shared) {
		free(perm);
		snprintf(err, errlen, "canneal: out of memory for %" PRIu64 " bytes", img->shared_bytes);
		return -1;
	}
	uint8_t *sh = img->shared;
	uint64_t s = img->seed ^ UINT64_C(0xca22ea1);
	for (uint64_t i = 0; i < L->e; i++)
		perm[i] = i;
	for (uint64_t i = L->e - 1; i > 0; i--) { /* random placement */
		uint64_t j = lcg(&s) % (i + 1), x = perm[i];
		perm[i] = perm[j], perm[j] = x;
	}
	for (uint64_t i = 0; i < L->e; i++) {
		uint64_t *el = (uint64_t *)(sh + L->elems_off + i * LINE);
		uint64_t *lc = (uint64_t *)(sh + L->locs_off + perm[i] * 8);
		el[0] = perm[i];
		*lc = i;
	}
	uint64_t cost = 0;
	for (uint64_t i = 0; i < L->e; i++)
		for (uint32_t k = 0; k < CXS_CN_EDGES_PER_ELEM; k++) {
			uint64_t j = lcg(&s) % L->e;
			uint64_t *a = (uint64_t *)(sh + L->elems_off + i * LINE);
			uint64_t *b = (uint64_t *)(sh + L->elems_off + j * LINE);
			bool dup = j == i;
			for (uint64_t m = 0; m < a[1] && !dup; m++)
				dup = a[2 + m] == j;
			if (dup || a[1] == CXS_CN_NBR || b[1] == CXS_CN_NBR)
				continue;
			a[2 + a[1]++] = j;
			b[2 + b[1]++] = i;
			cost += dist(L, a[0], b[0]);
		}
	L->initial_cost = cost;
	uint64_t hdr[6] = {L->e, L->g, L->elems_off, L->locs_off, L->initial_cost, L->locks_off};
	memcpy(sh + OFF_HDR, hdr, sizeof hdr);
	free(perm);
	return 0;
}

static void unlock_all(struct cxs_kt *kt, const struct cn_layout *L, const uint64_t *set,
		       uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		cxs_kt_unlock(kt, cxs_kt_shared(kt) + L->locks_off + set[i] * LINE);
}

/*
 * One move between locations a and b at temperature temp. Returns 1 if the
 * swap was accepted (*delta its cost change), 0 if rejected, -1 if the
 * unlocked reads were stale (retry).
 */
static int move(struct cxs_kt *kt, const struct cn_layout *L, uint64_t a, uint64_t b, double temp,
		int64_t *delta)
{
	uint64_t s = cxs_kt_shared(kt), elems = s + L->elems_off, locs = s + L->locs_off;
	uint64_t locks = s + L->locks_off;
	uint32_t h[2 * (2 + CXS_CN_NBR)];
	h[0] = cxs_kt_ld(kt, locs + a * 8, 8);
	h[1] = cxs_kt_ld(kt, locs + b * 8, 8);
	uint64_t ea = cxs_kt_get(kt, h[0]), eb = cxs_kt_get(kt, h[1]);
	/* neighbour lists: count and ids, both elements at once */
	for (uint32_t k = 0; k < 1 + CXS_CN_NBR; k++) {
		h[k] = cxs_kt_ld(kt, elems + ea * LINE + 8 + 8 * k, 8);
		h[1 + CXS_CN_NBR + k] = cxs_kt_ld(kt, elems + eb * LINE + 8 + 8 * k, 8);
	}
	uint64_t nbr[2][CXS_CN_NBR], nn[2];
	nn[0] = cxs_kt_get(kt, h[0]);
	nn[1] = cxs_kt_get(kt, h[1 + CXS_CN_NBR]);
	for (uint32_t k = 0; k < CXS_CN_NBR; k++) {
		nbr[0][k] = cxs_kt_get(kt, h[1 + k]);
		nbr[1][k] = cxs_kt_get(kt, h[2 + CXS_CN_NBR + k]);
	}
	/* the neighbours' locations (unlocked) */
	uint64_t nloc[2][CXS_CN_NBR];
	for (int x = 0; x < 2; x++)
		for (uint32_t k = 0; k < nn[x]; k++)
			h[x * CXS_CN_NBR + k] = cxs_kt_ld(kt, elems + nbr[x][k] * LINE, 8);
	for (int x = 0; x < 2; x++)
		for (uint32_t k = 0; k < nn[x]; k++)
			nloc[x][k] = cxs_kt_get(kt, h[x * CXS_CN_NBR + k]);
	/* the lock set, ascending, without duplicates */
	uint64_t set[MAX_LOCKS];
	uint32_t n = 0;
	set[n++] = a, set[n++] = b;
	for (int x = 0; x < 2; x++)
		for (uint32_t k = 0; k < nn[x]; k++)
			set[n++] = nloc[x][k];
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && set[j - 1] > set[j]; j--) {
			uint64_t v = set[j];
			set[j] = set[j - 1], set[j - 1] = v;
		}
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (m == 0 || set[m - 1] != set[i])
			set[m++] = set[i];
	cxs_kt_compute(kt, 40);
	for (uint32_t i = 0; i < m; i++)
		cxs_kt_lock(kt, locks + set[i] * LINE);
	/* re-read under the locks */
	h[0] = cxs_kt_ld(kt, locs + a * 8, 8);
	h[1] = cxs_kt_ld(kt, locs + b * 8, 8);
	for (int x = 0; x < 2; x++)
		for (uint32_t k = 0; k < nn[x]; k++)
			h[2 + x * CXS_CN_NBR + k] = cxs_kt_ld(kt, elems + nbr[x][k] * LINE, 8);
	bool stale = cxs_kt_get(kt, h[0]) != ea || cxs_kt_get(kt, h[1]) != eb;
	for (int x = 0; x < 2; x++)
		for (uint32_t k = 0; k < nn[x]; k++)
			stale |= cxs_kt_get(kt, h[2 + x * CXS_CN_NBR + k]) != nloc[x][k];
	if (stale) {
		unlock_all(kt, L, set, m);
		return -1;
	}
	/* ea moves a -> b, eb moves b -> a; an edge between them keeps its length */
	int64_t d = 0;
	for (uint32_t k = 0; k < nn[0]; k++)
		if (nbr[0][k] != eb)
			d += (int64_t)dist(L, b, nloc[0][k]) - (int64_t)dist(L, a, nloc[0][k]);
	for (uint32_t k = 0; k < nn[1]; k++)
		if (nbr[1][k] != ea)
			d += (int64_t)dist(L, a, nloc[1][k]) - (int64_t)dist(L, b, nloc[1][k]);
	double u = (double)(cxs_kt_rand(kt) >> 11) / 9007199254740992.0;
	cxs_kt_compute(kt, 20);
	bool accept = d < 0 || u < exp_neg((double)d / temp);
	if (accept) {
		cxs_kt_store(kt, locs + a * 8, 8, eb);
		cxs_kt_store(kt, locs + b * 8, 8, ea);
		cxs_kt_store(kt, elems + ea * LINE, 8, b);
		cxs_kt_store(kt, elems + eb * LINE, 8, a);
		*delta = d;
	}
	unlock_all(kt, L, set, m);
	return accept;
}

static void run(struct cxs_kt *kt)
{
	const struct cn_layout *L = cxs_kt_image(kt)->info;
	uint64_t s = cxs_kt_shared(kt), bar = s + OFF_BAR;
	uint32_t t = cxs_kt_id(kt), T = cxs_kt_count(kt);
	uint64_t mine = s + OFF_THREADS + (uint64_t)t * LINE;
	uint64_t moves = L->e / T ? L->e / T : 1, tried = 0, accepted = 0, retries = 0;
	int64_t tracked = 0;
	double temp = CXS_CN_T0;
	cxs_kt_roi_begin(kt);
	for (uint32_t step = 0; step < CXS_CN_STEPS; step++, temp /= 2) {
		for (uint64_t i = 0; i < moves; i++) {
			uint64_t a = cxs_kt_rand(kt) % L->e, b = cxs_kt_rand(kt) % L->e;
			tried++;
			if (a == b)
				continue;
			int64_t d = 0;
			int r;
			while ((r = move(kt, L, a, b, temp, &d)) < 0)
				retries++;
			if (r) {
				accepted++;
				tracked += d;
			}
		}
		cxs_kt_barrier(kt, bar, T);
	}
	cxs_kt_roi_end(kt);

	/* The placement is a permutation; the locks are free; the cost adds up. */
	uint64_t lo = L->e * t / T, hi = L->e * (t + 1) / T, cost2 = 0;
	for (uint64_t l = lo; l < hi; l++) {
		uint64_t lock = cxs_kt_load(kt, s + L->locks_off + l * LINE, 8);
		uint64_t e = cxs_kt_load(kt, s + L->locs_off + l * 8, 8);
		if (lock != 0)
			cxs_kt_fail(kt, "canneal: the lock of location %" PRIu64 " is still held", l);
		if (e >= L->e)
			cxs_kt_fail(kt, "canneal: location %" PRIu64 " holds element %" PRIu64
				    " (there are %" PRIu64 ")", l, e, L->e);
		uint64_t back = cxs_kt_load(kt, s + L->elems_off + e * LINE, 8);
		if (back != l)
			cxs_kt_fail(kt, "canneal: location %" PRIu64 " holds element %" PRIu64
				    ", whose record says location %" PRIu64, l, e, back);
	}
	for (uint64_t e = lo; e < hi; e++) {
		uint64_t rec = s + L->elems_off + e * LINE;
		uint64_t at = cxs_kt_load(kt, rec, 8), nn = cxs_kt_load(kt, rec + 8, 8);
		for (uint64_t k = 0; k < nn; k++) {
			uint64_t nb = cxs_kt_load(kt, rec + 16 + 8 * k, 8);
			cost2 += dist(L, at, cxs_kt_load(kt, s + L->elems_off + nb * LINE, 8));
		}
	}
	cxs_kt_store(kt, mine, 8, (uint64_t)tracked);
	cxs_kt_store(kt, mine + 8, 8, cost2);
	cxs_kt_store(kt, mine + 16, 8, accepted);
	cxs_kt_barrier(kt, bar, T);
	if (t == 0) {
		int64_t deltas = 0;
		uint64_t twice = 0, acc = 0;
		for (uint32_t u = 0; u < T; u++) {
			uint64_t a = s + OFF_THREADS + (uint64_t)u * LINE;
			deltas += (int64_t)cxs_kt_load(kt, a, 8);
			twice += cxs_kt_load(kt, a + 8, 8);
			acc += cxs_kt_load(kt, a + 16, 8);
		}
		uint64_t want = (uint64_t)((int64_t)L->initial_cost + deltas);
		if (twice % 2 != 0 || twice / 2 != want)
			cxs_kt_fail(kt, "canneal: the placement costs %" PRIu64 " (recomputed, counted "
				    "twice: %" PRIu64 ") but the swaps tracked %" PRIu64 " (initial %"
				    PRIu64 " %+" PRId64 ")", twice / 2, twice, want, L->initial_cost,
				    deltas);
		cxs_kt_store(kt, s + OFF_FINAL, 8, twice / 2);
		cxs_kt_store(kt, s + OFF_FINAL + 8, 8, want);
		cxs_kt_store(kt, s + OFF_FINAL + 16, 8, L->initial_cost);
		cxs_kt_store(kt, s + OFF_FINAL + 24, 8, acc);
		cxs_kt_result(kt, "cost_initial", L->initial_cost);
		cxs_kt_result(kt, "cost_final", twice / 2);
	}
	cxs_kt_result(kt, "swaps_tried", tried);
	cxs_kt_result(kt, "swaps_accepted", accepted);
	cxs_kt_result(kt, "stale_retries", retries);
}

const struct cxs_kernel cxs_kernel_canneal = {
	.name = "canneal",
	.doc = "modelled after PARSEC's canneal: simulated annealing of a size-element netlist "
	       "placement, random location swaps under location locks (ascending order)",
	.default_size = 65536,
	.deterministic = false,
	.build = build,
	.run = run,
};
