/*
 * k_sssp.c — single-source shortest paths, modelled after GAPBS's sssp
 * (delta-stepping's relaxation rounds, here with delta = infinity: frontier
 * Bellman-Ford): from the hub of a generated weighted graph (graph_priv.h;
 * weights 1..255; variant 0 kron, 1 road), rounds of three phases:
 *   P1  every vertex that improved last round activates its neighbours: an
 *       atomic swap on a byte map picks one thread per vertex, which appends
 *       it to the shared active queue (local buffer, fetch-and-add per 64)
 *   P2  each active vertex (a share of the queue each) pulls
 *       min over neighbours of dist[u] + w(u, v); an improvement goes to
 *       cand[v] and the thread's private list of changed vertices
 *   P3  each thread writes its changed vertices' cand into dist
 * until a round changes nothing. Jacobi (P2 reads only the previous round's
 * distances), so the rounds and the result do not depend on timing. Not the
 * original program: no buckets (delta), pull relaxation.
 *
 * Memory behaviour: per active vertex its index and neighbour ids
 * (sequential), a random dist load and a weight load per edge; atomics and
 * queue appends per activation; four barriers a round (kron: ~10 rounds,
 * road: hundreds).
 *
 * Shared layout: barrier line, tail line, 2 x T count lines, header (rounds),
 * dist[nv], cand[nv] (u32), active byte map, queue u32[nv], the weighted
 * graph. Private: the changed list (u32[nv]). Result: dist[], cand[], the
 * round count (the queue is cleared after the ROI: its order is not
 * deterministic).
 */
#include "cxlsim/kthread.h"

#include "graph_priv.h"
#include "kinfo_priv.h"
#include "klayout_priv.h"

#define QBUF 64u

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	struct kgraph g;
	if (kgraph_generate(&g, "sssp", (uint32_t)img->variant, img->size, img->seed, true, err,
			    errlen) != 0)
		return -1;
	struct sssp_info *I = calloc(1, sizeof *I);
	if (!I) {
		kgraph_free(&g);
		snprintf(err, errlen, "sssp: out of memory");
		return -1;
	}
	img->info = I;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->tail_off = klay_take(&off, KL_LINE);
	I->counts_off = klay_take(&off, 2 * (uint64_t)img->nthreads * KL_LINE);
	I->hdr_off = klay_take(&off, KL_LINE);
	I->dist_off = klay_take(&off, 4 * (uint64_t)g.nv);
	I->cand_off = klay_take(&off, 4 * (uint64_t)g.nv);
	I->active_off = klay_take(&off, g.nv);
	I->queue_off = klay_take(&off, 4 * (uint64_t)g.nv);
	kgraph_place(&g, &off, &I->g);
	I->source = kgraph_hub(&g);
	img->private_bytes = 4 * (uint64_t)g.nv + KL_LINE;
	if (klay_alloc(img, "sssp", off, err, errlen) != 0) {
		kgraph_free(&g);
		return -1;
	}
	kgraph_write(&g, &I->g, img->shared);
	memset(img->shared + I->dist_off, 0xff, 4 * (size_t)g.nv);
	memset(img->shared + I->cand_off, 0xff, 4 * (size_t)g.nv);
	kput32(img->shared, I->dist_off + 4 * (uint64_t)I->source, 0);
	kgraph_free(&g);
	return 0;
}

struct qbuf {
	uint32_t v[QBUF], n;
};

static void flush(struct cxs_kt *kt, const struct sssp_info *I, struct qbuf *q)
{
	if (q->n == 0)
		return;
	uint64_t at = cxs_kt_fetch_add(kt, ksh(kt, I->tail_off), 8, q->n);
	for (uint32_t i = 0; i < q->n; i++)
		kst32(kt, I->queue_off + 4 * (at + i), q->v[i]);
	q->n = 0;
}

/* P1 for u[0..n): activate their neighbours. */
static void activate(struct cxs_kt *kt, const struct sssp_info *I, const uint32_t *u, uint32_t n,
		     struct qbuf *q)
{
	struct kedges e;
	uint8_t src[KGRAPH_BATCH];
	uint32_t v[KGRAPH_BATCH], pos[KGRAPH_BATCH], h[KGRAPH_BATCH], m;
	kedges_begin(kt, &e, &I->g, u, n);
	while ((m = kedges_next(kt, &e, src, v, pos)) > 0) {
		for (uint32_t k = 0; k < m; k++)
			h[k] = cxs_kt_ld(kt, ksh(kt, I->active_off + v[k]), 1);
		for (uint32_t k = 0; k < m; k++) {
			cxs_kt_compute(kt, 3);
			if (cxs_kt_get(kt, h[k]) != 0 ||
			    cxs_kt_swap(kt, ksh(kt, I->active_off + v[k]), 1, 1) != 0)
				continue;
			q->v[q->n++] = v[k];
			if (q->n == QBUF)
				flush(kt, I, q);
		}
	}
}

/* P2 for u[0..n): relax from the neighbours; returns how many improved. */
static uint32_t relax(struct cxs_kt *kt, const struct sssp_info *I, const uint32_t *u, uint32_t n,
		      uint32_t *nchanged)
{
	struct kedges e;
	uint8_t src[KGRAPH_BATCH];
	uint32_t v[KGRAPH_BATCH], pos[KGRAPH_BATCH], hd[KGRAPH_BATCH], hw[KGRAPH_BATCH], m;
	uint32_t hs[8], best[8], own[8], improved = 0;
	for (uint32_t k = 0; k < n; k++)
		hs[k] = cxs_kt_ld(kt, ksh(kt, I->dist_off + 4 * (uint64_t)u[k]), 4);
	for (uint32_t k = 0; k < n; k++) {
		best[k] = own[k] = (uint32_t)cxs_kt_get(kt, hs[k]);
		cxs_kt_store(kt, ksh(kt, I->active_off + u[k]), 1, 0);
	}
	kedges_begin(kt, &e, &I->g, u, n);
	while ((m = kedges_next(kt, &e, src, v, pos)) > 0) {
		for (uint32_t k = 0; k < m; k++) {
			hd[k] = cxs_kt_ld(kt, ksh(kt, I->dist_off + 4 * (uint64_t)v[k]), 4);
			hw[k] = cxs_kt_ld(kt, ksh(kt, I->g.w_off + 4 * (uint64_t)pos[k]), 4);
		}
		for (uint32_t k = 0; k < m; k++) {
			uint32_t d = (uint32_t)cxs_kt_get(kt, hd[k]), w = (uint32_t)cxs_kt_get(kt, hw[k]);
			if (d != UINT32_MAX && d + w < best[src[k]])
				best[src[k]] = d + w;
		}
		cxs_kt_compute(kt, 3 * m);
	}
	for (uint32_t k = 0; k < n; k++)
		if (best[k] < own[k]) {
			kst32(kt, I->cand_off + 4 * (uint64_t)u[k], best[k]);
			cxs_kt_store(kt, kpv(kt, 4 * (uint64_t)(*nchanged)++), 4, u[k]);
			improved++;
		}
	return improved;
}

static void run(struct cxs_kt *kt)
{
	const struct sssp_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt), t = cxs_kt_id(kt), round = 0;
	uint32_t nchanged = 0;
	struct qbuf q = {.n = 0};
	cxs_kt_roi_begin(kt);
	if (t == 0)
		cxs_kt_store(kt, kpv(kt, 0), 4, I->source), nchanged = 1;
	for (;; round++) {
		/* P1: the vertices this thread changed last round activate their neighbours. */
		for (uint32_t i = 0; i < nchanged; i += 8) {
			uint32_t n = nchanged - i < 8 ? nchanged - i : 8, u[8], h[8];
			for (uint32_t k = 0; k < n; k++)
				h[k] = cxs_kt_ld(kt, kpv(kt, 4 * (uint64_t)(i + k)), 4);
			for (uint32_t k = 0; k < n; k++)
				u[k] = (uint32_t)cxs_kt_get(kt, h[k]);
			activate(kt, I, u, n, &q);
		}
		flush(kt, I, &q);
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
		uint64_t nact = kld64(kt, I->tail_off);
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T); /* all have read the tail */
		if (t == 0)
			kst64(kt, I->tail_off, 0);
		/* P2: relax the active vertices. */
		uint64_t a, b, improved = 0;
		kshare(nact, t, T, &a, &b);
		nchanged = 0;
		for (uint64_t i = a; i < b; i += 8) {
			uint32_t n = b - i < 8 ? (uint32_t)(b - i) : 8, u[8], h[8];
			for (uint32_t k = 0; k < n; k++)
				h[k] = cxs_kt_ld(kt, ksh(kt, I->queue_off + 4 * (i + k)), 4);
			for (uint32_t k = 0; k < n; k++)
				u[k] = (uint32_t)cxs_kt_get(kt, h[k]);
			improved += relax(kt, I, u, n, &nchanged);
		}
		kst64(kt, I->counts_off + ((uint64_t)(round % 2) * T + t) * KL_LINE, improved);
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
		/* P3: publish this thread's improvements. */
		for (uint32_t i = 0; i < nchanged; i++) {
			uint32_t v = (uint32_t)cxs_kt_load(kt, kpv(kt, 4 * (uint64_t)i), 4);
			kst32(kt, I->dist_off + 4 * (uint64_t)v, kld32(kt, I->cand_off + 4 * (uint64_t)v));
		}
		uint64_t total = 0;
		for (uint32_t i = 0; i < T; i++)
			total += kld64(kt, I->counts_off + ((uint64_t)(round % 2) * T + i) * KL_LINE);
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
		if (total == 0)
			break;
	}
	kst64(kt, I->counts_off + (uint64_t)t * KL_LINE, 0);
	kst64(kt, I->counts_off + ((uint64_t)T + t) * KL_LINE, 0);
	if (t == 0)
		kst64(kt, I->hdr_off, round + 1);
	cxs_kt_roi_end(kt);
	uint64_t lo, hi;
	kshare((I->g.nv + UINT64_C(1)) / 2, t, T, &lo, &hi);
	for (uint64_t w = lo; w < hi; w++)
		kst64(kt, I->queue_off + 8 * w, 0);
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	kcheck_share(kt, I->dist_off, 4 * (uint64_t)I->g.nv);
	kcheck_share(kt, I->cand_off, 4 * (uint64_t)I->g.nv);
	kcheck_share(kt, I->active_off, I->g.nv);
	kcheck_share(kt, I->queue_off, 4 * (uint64_t)I->g.nv);
	if (t == 0)
		cxs_kt_check_words(kt, I->hdr_off, 8);
	cxs_kt_result(kt, "rounds", t == 0 ? round + 1 : 0);
}

const struct cxs_kernel cxs_kernel_sssp = {
	.name = "sssp",
	.doc = "modelled after GAPBS's sssp: frontier Bellman-Ford (delta-stepping without buckets) from the hub of a generated weighted graph (variant " KGRAPH_KINDS "; size vertices)",
	.default_size = 16384,
	.deterministic = true,
	.build = build,
	.run = run,
};
