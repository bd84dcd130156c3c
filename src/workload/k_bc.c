/*
 * k_bc.c — betweenness centrality from one source, modelled after GAPBS's bc
 * (Brandes: a BFS counting shortest paths, then dependencies accumulated
 * level by level backwards): from the hub of a generated graph
 * (graph_priv.h; variant 0 kron, 1 road):
 *   1  the BFS of graph.c, keeping the queue and each level's window
 *   2  forward, level d = 1, 2, ...: each vertex of the level (a share of its
 *      window per thread) pulls sigma[v] = sum of sigma[u] over neighbours u
 *      at depth d - 1                                           barrier
 *   3  backward, d = last - 1 .. 0: delta[v] = sum over neighbours w at depth
 *      d + 1 of sigma[v] / sigma[w] * (1 + delta[w])             barrier
 * Not the original program: one source (GAPBS: several), pull sums in
 * neighbour order (deterministic doubles) instead of GAPBS's successor
 * bitmap.
 *
 * Memory behaviour: the BFS's (random depth loads, atomics), then two passes
 * over the edges level by level: per edge a depth and a sigma (or delta)
 * gather, random in kron; a barrier per level per pass.
 *
 * Shared layout: header (levels), the BFS regions with level starts,
 * sigma[nv], delta[nv] (doubles), the graph. Result: depth, sigma, delta.
 */
#include "cxlsim/kthread.h"

#include "graph_priv.h"
#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	struct kgraph g;
	if (kgraph_generate(&g, "bc", (uint32_t)img->variant, img->size, img->seed, false, err,
			    errlen) != 0)
		return -1;
	struct bc_info *I = calloc(1, sizeof *I);
	if (!I) {
		kgraph_free(&g);
		snprintf(err, errlen, "bc: out of memory");
		return -1;
	}
	img->info = I;
	uint64_t off = 0;
	I->hdr_off = klay_take(&off, KL_LINE);
	kgraph_bfs_place(g.nv, true, &off, &I->b);
	I->sigma_off = klay_take(&off, 8 * (uint64_t)g.nv);
	I->delta_off = klay_take(&off, 8 * (uint64_t)g.nv);
	kgraph_place(&g, &off, &I->g);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "bc", off, err, errlen) != 0) {
		kgraph_free(&g);
		return -1;
	}
	kgraph_write(&g, &I->g, img->shared);
	uint32_t src = kgraph_hub(&g);
	kgraph_bfs_init(&I->b, g.nv, src, img->shared);
	kputd(img->shared, I->sigma_off + 8 * (uint64_t)src, 1.0);
	kgraph_free(&g);
	return 0;
}

/*
 * One level's pass over u[0..n) at depth d: forward pulls sigma from depth
 * d - 1, backward pulls the dependency from depth d + 1.
 */
static void pass(struct cxs_kt *kt, const struct bc_info *I, const uint32_t *u, uint32_t n,
		 uint32_t d, bool forward)
{
	struct kedges e;
	uint8_t src[KGRAPH_BATCH];
	uint32_t v[KGRAPH_BATCH], pos[KGRAPH_BATCH], hd[KGRAPH_BATCH], hx[KGRAPH_BATCH];
	uint32_t hs[8], m;
	bool use[KGRAPH_BATCH];
	double acc[8] = {0}, mine[8] = {0};
	if (!forward) {
		for (uint32_t k = 0; k < n; k++)
			hs[k] = cxs_kt_ld(kt, ksh(kt, I->sigma_off + 8 * (uint64_t)u[k]), 8);
		for (uint32_t k = 0; k < n; k++)
			mine[k] = cxs_kt_getd(kt, hs[k]);
	}
	uint32_t want = forward ? d - 1 : d + 1;
	kedges_begin(kt, &e, &I->g, u, n);
	while ((m = kedges_next(kt, &e, src, v, pos)) > 0) {
		for (uint32_t k = 0; k < m; k++)
			hd[k] = cxs_kt_ld(kt, ksh(kt, I->b.depth_off + 4 * (uint64_t)v[k]), 4);
		for (uint32_t k = 0; k < m; k++) {
			uint32_t dv = (uint32_t)cxs_kt_get(kt, hd[k]);
			use[k] = dv == want;
			if (!use[k])
				continue;
			hx[k] = cxs_kt_ld(kt, ksh(kt, I->sigma_off + 8 * (uint64_t)v[k]), 8);
			if (!forward)
				hd[k] = cxs_kt_ld(kt, ksh(kt, I->delta_off + 8 * (uint64_t)v[k]), 8);
		}
		for (uint32_t k = 0; k < m; k++) {
			if (!use[k])
				continue;
			double sw = cxs_kt_getd(kt, hx[k]);
			if (forward)
				acc[src[k]] += sw;
			else
				acc[src[k]] += mine[src[k]] / sw * (1.0 + cxs_kt_getd(kt, hd[k]));
		}
		cxs_kt_compute(kt, 4 * m);
	}
	for (uint32_t k = 0; k < n; k++)
		kstd(kt, (forward ? I->sigma_off : I->delta_off) + 8 * (uint64_t)u[k], acc[k]);
}

/* Runs pass() over this thread's share of level d's window. */
static void level(struct cxs_kt *kt, const struct bc_info *I, uint32_t d, bool forward)
{
	uint64_t s = kld64(kt, I->b.levels_off + 8 * (uint64_t)d);
	uint64_t t = kld64(kt, I->b.levels_off + 8 * ((uint64_t)d + 1)), a, b;
	kshare(t - s, cxs_kt_id(kt), cxs_kt_count(kt), &a, &b);
	for (uint64_t i = s + a; i < s + b; i += 8) {
		uint32_t n = s + b - i < 8 ? (uint32_t)(s + b - i) : 8, u[8], h[8];
		for (uint32_t k = 0; k < n; k++)
			h[k] = cxs_kt_ld(kt, ksh(kt, I->b.queue_off + 4 * (i + k)), 4);
		for (uint32_t k = 0; k < n; k++)
			u[k] = (uint32_t)cxs_kt_get(kt, h[k]);
		pass(kt, I, u, n, d, forward);
	}
	cxs_kt_barrier(kt, ksh(kt, I->b.barrier_off), cxs_kt_count(kt));
}

static void run(struct cxs_kt *kt)
{
	const struct bc_info *I = cxs_kt_image(kt)->info;
	uint32_t t = cxs_kt_id(kt);
	cxs_kt_roi_begin(kt);
	uint32_t levels = kgraph_bfs(kt, &I->g, &I->b);
	for (uint32_t d = 1; d < levels; d++)
		level(kt, I, d, true);
	for (uint32_t d = levels - 1; d-- > 0;)
		level(kt, I, d, false);
	if (t == 0)
		kst64(kt, I->hdr_off, levels);
	cxs_kt_roi_end(kt);
	kgraph_bfs_clear_queue(kt, &I->b, I->g.nv);
	cxs_kt_barrier(kt, ksh(kt, I->b.barrier_off), cxs_kt_count(kt));
	kcheck_share(kt, I->b.depth_off, 4 * (uint64_t)I->g.nv);
	kcheck_share(kt, I->b.queue_off, 4 * (uint64_t)I->g.nv);
	kcheck_share(kt, I->b.levels_off, 8 * ((uint64_t)I->g.nv + 1));
	kcheck_share(kt, I->sigma_off, 8 * (uint64_t)I->g.nv);
	kcheck_share(kt, I->delta_off, 8 * (uint64_t)I->g.nv);
	if (t == 0) {
		cxs_kt_check_words(kt, I->hdr_off, 8);
		cxs_kt_check_words(kt, I->b.tail_off, 8);
	}
	cxs_kt_result(kt, "levels", t == 0 ? levels : 0);
}

const struct cxs_kernel cxs_kernel_bc = {
	.name = "bc",
	.doc = "modelled after GAPBS's bc: Brandes betweenness from the hub (BFS path counts, backward dependencies by level) of a generated graph (variant " KGRAPH_KINDS "; size vertices)",
	.default_size = 32768,
	.deterministic = true,
	.build = build,
	.run = run,
};
