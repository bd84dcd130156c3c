/*
 * k_pr.c — PageRank, modelled after GAPBS's pr (pull direction, Jacobi
 * iterations): PR_ITERS iterations of
 *     contrib[u] = rank[u] / degree(u)                  (own vertices)  barrier
 *     rank[v]    = (1 - 0.85) / nv + 0.85 sum contrib[u] over neighbours  barrier
 * on a generated graph (graph_priv.h; workload.variant 0 kron, 1 road).
 * Not the original program: a fixed iteration count instead of GAPBS's
 * tolerance test (the work must not depend on timing), doubles.
 *
 * Memory behaviour: a streaming pass over rank and contrib, then per edge a
 * sequential neighbour id and a random 8-byte contrib gather (kron: no
 * locality, MLP-rich: a batch of independent gathers; road: mostly cache
 * hits) — CAMP's pr-kron is its hyper-parallel example.
 *
 * Shared layout: barrier line, rank[nv], contrib[nv] (doubles), the graph.
 * Result: rank[] after the last iteration (checked against the reference).
 */
#include "cxlsim/kthread.h"

#include "graph_priv.h"
#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	struct kgraph g;
	if (kgraph_generate(&g, "pr", (uint32_t)img->variant, img->size, img->seed, false, err,
			    errlen) != 0)
		return -1;
	struct pr_info *I = calloc(1, sizeof *I);
	if (!I) {
		kgraph_free(&g);
		snprintf(err, errlen, "pr: out of memory");
		return -1;
	}
	img->info = I;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->rank_off = klay_take(&off, 8 * (uint64_t)g.nv);
	I->contrib_off = klay_take(&off, 8 * (uint64_t)g.nv);
	kgraph_place(&g, &off, &I->g);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "pr", off, err, errlen) != 0) {
		kgraph_free(&g);
		return -1;
	}
	kgraph_write(&g, &I->g, img->shared);
	for (uint32_t v = 0; v < g.nv; v++)
		kputd(img->shared, I->rank_off + 8 * (uint64_t)v, 1.0 / g.nv);
	kgraph_free(&g);
	return 0;
}

static void run(struct cxs_kt *kt)
{
	const struct pr_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt), nv = I->g.nv;
	uint64_t lo, hi;
	kshare(nv, cxs_kt_id(kt), T, &lo, &hi);
	const double base = (1.0 - PR_DAMP) / nv;
	cxs_kt_roi_begin(kt);
	for (uint32_t it = 0; it < PR_ITERS; it++) {
		for (uint64_t v = lo; v < hi; v += 8) {
			uint32_t n = hi - v < 8 ? (uint32_t)(hi - v) : 8, hr[8], h0[8], h1[8];
			for (uint32_t k = 0; k < n; k++) {
				hr[k] = cxs_kt_ld(kt, ksh(kt, I->rank_off + 8 * (v + k)), 8);
				h0[k] = cxs_kt_ld(kt, ksh(kt, I->g.index_off + 4 * (v + k)), 4);
				h1[k] = cxs_kt_ld(kt, ksh(kt, I->g.index_off + 4 * (v + k) + 4), 4);
			}
			for (uint32_t k = 0; k < n; k++) {
				double r = cxs_kt_getd(kt, hr[k]);
				uint32_t deg = (uint32_t)(cxs_kt_get(kt, h1[k]) - cxs_kt_get(kt, h0[k]));
				kstd(kt, I->contrib_off + 8 * (v + k), deg ? r / deg : 0.0);
				cxs_kt_compute(kt, 6);
			}
		}
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
		for (uint64_t v = lo; v < hi; v += 8) {
			uint32_t n = hi - v < 8 ? (uint32_t)(hi - v) : 8, u[8], m;
			double sum[8] = {0};
			uint8_t src[KGRAPH_BATCH];
			uint32_t w[KGRAPH_BATCH], pos[KGRAPH_BATCH], h[KGRAPH_BATCH];
			struct kedges e;
			for (uint32_t k = 0; k < n; k++)
				u[k] = (uint32_t)(v + k);
			kedges_begin(kt, &e, &I->g, u, n);
			while ((m = kedges_next(kt, &e, src, w, pos)) > 0) {
				for (uint32_t k = 0; k < m; k++)
					h[k] = cxs_kt_ld(kt, ksh(kt, I->contrib_off + 8 * (uint64_t)w[k]), 8);
				for (uint32_t k = 0; k < m; k++)
					sum[src[k]] += cxs_kt_getd(kt, h[k]);
				cxs_kt_compute(kt, 2 * m);
			}
			for (uint32_t k = 0; k < n; k++)
				kstd(kt, I->rank_off + 8 * (v + k), base + PR_DAMP * sum[k]);
			cxs_kt_compute(kt, 3 * n);
		}
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	}
	cxs_kt_roi_end(kt);
	kcheck_share(kt, I->rank_off, 8 * (uint64_t)nv);
	kcheck_share(kt, I->contrib_off, 8 * (uint64_t)nv);
}

const struct cxs_kernel cxs_kernel_pr = {
	.name = "pr",
	.doc = "modelled after GAPBS's pr: pull PageRank, 3 Jacobi iterations over a generated graph (variant " KGRAPH_KINDS "; size vertices)",
	.default_size = 32768,
	.deterministic = true,
	.build = build,
	.run = run,
};
