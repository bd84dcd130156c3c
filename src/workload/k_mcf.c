/*
 * k_mcf.c — network simplex pricing and potential refresh, modelled after
 * SPEC CPU 2017's 505.mcf (the rate benchmark: each thread runs its own
 * copy, like SPECrate's copies): a network of size / T nodes and ARCS x as
 * many arcs per thread, a spanning tree over the nodes (pred, child,
 * sibling pointers, as mcf's node records) and ITERS iterations of
 *   1  price_out: scan the arcs (mcf's arc records: tail, head, cost, flow,
 *      ident), for every non-basic arc compute the reduced cost
 *      cost - pot[tail] + pot[head]; the most negative enters
 *   2  pivot: the entering arc's cost difference is added to the tree
 *      cost of its tail's node (the basis change, simplified)
 *   3  refresh_potential: a depth-first walk of the whole tree through the
 *      child and sibling pointers, pot[v] = pot[pred[v]] + tree cost[v]
 * Not the original program: no flow, no leaving-arc ratio test; the walk
 * and the scan are mcf's two hot loops.
 *
 * Memory behaviour: the scan is sequential over 32-byte arcs with two
 * random node loads each (independent: MLP); the walk is a pointer chase
 * over 64-byte nodes in DFS order, every step dependent (latency-bound,
 * 429/505.mcf's signature).
 *
 * Shared layout per thread: nodes (64 B: pot (i64), pred, child, sibling,
 * tree cost), arcs (32 B: tail, head, cost (i64), ident). Result: the nodes
 * and arcs after the iterations.
 */
#include "cxlsim/kthread.h"

#include "kinfo_priv.h"
#include "klayout_priv.h"

static uint64_t node_at(const struct mcf_info *I, uint32_t t, uint32_t v)
{
	return I->base_off + t * I->stride + (uint64_t)v * MCF_NODE_BYTES;
}

static uint64_t arc_at(const struct mcf_info *I, uint32_t t, uint64_t a)
{
	return I->base_off + t * I->stride + I->nodes * MCF_NODE_BYTES + a * MCF_ARC_BYTES;
}

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	uint32_t T = img->nthreads;
	if (!ksize_ok(img, "mcf", "nodes", 16 * (uint64_t)T, UINT64_C(1) << 24, err, errlen))
		return -1;
	struct mcf_info *I = calloc(1, sizeof *I);
	if (!I) {
		snprintf(err, errlen, "mcf: out of memory");
		return -1;
	}
	img->info = I;
	I->nodes = img->size / T;
	I->arcs = MCF_ARCS * I->nodes;
	I->stride = I->nodes * MCF_NODE_BYTES + I->arcs * MCF_ARC_BYTES;
	uint64_t off = 0;
	I->base_off = klay_take(&off, 0);
	klay_take(&off, I->stride * T);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "mcf", off, err, errlen) != 0)
		return -1;
	uint8_t *m = img->shared;
	uint32_t *last_child = malloc(I->nodes * sizeof *last_child);
	if (!last_child) {
		snprintf(err, errlen, "mcf: out of memory");
		return -1;
	}
	for (uint32_t t = 0; t < T; t++) {
		uint64_t s = img->seed * 31 + t;
		for (uint32_t v = 0; v < I->nodes; v++) {
			uint64_t o = node_at(I, t, v);
			kput64(m, o, 0);
			kput32(m, o + 12, MCF_NONE);
			kput32(m, o + 16, MCF_NONE);
			kput64(m, o + 24, 1 + krand(&s) % 100);
			last_child[v] = MCF_NONE;
		}
		/* A random tree: each node's parent an earlier node, children scattered in memory. */
		kput32(m, node_at(I, t, 0) + 8, MCF_NONE);
		for (uint32_t v = 1; v < I->nodes; v++) {
			uint32_t p = (uint32_t)(krand(&s) % v);
			kput32(m, node_at(I, t, v) + 8, p);
			if (last_child[p] == MCF_NONE)
				kput32(m, node_at(I, t, p) + 12, v);
			else
				kput32(m, node_at(I, t, last_child[p]) + 16, v);
			last_child[p] = v;
		}
		for (uint64_t a = 0; a < I->arcs; a++) {
			uint64_t o = arc_at(I, t, a);
			kput32(m, o, (uint32_t)(krand(&s) % I->nodes));
			kput32(m, o + 4, (uint32_t)(krand(&s) % I->nodes));
			kput64(m, o + 8, 1 + krand(&s) % 1000);
			kput32(m, o + 16, krand(&s) % 8 == 0); /* ident: 1 basic, 0 at a bound */
		}
	}
	free(last_child);
	return 0;
}

static void refresh(struct cxs_kt *kt, const struct mcf_info *I, uint32_t t)
{
	uint32_t v = kld32(kt, node_at(I, t, 0) + 12);
	while (v != MCF_NONE) {
		uint64_t o = node_at(I, t, v);
		uint32_t hp = cxs_kt_ld(kt, ksh(kt, o + 8), 4), hc = cxs_kt_ld(kt, ksh(kt, o + 12), 4);
		uint32_t hs = cxs_kt_ld(kt, ksh(kt, o + 16), 4), hw = cxs_kt_ld(kt, ksh(kt, o + 24), 8);
		uint32_t p = (uint32_t)cxs_kt_get(kt, hp);
		int64_t pot = (int64_t)kld64(kt, node_at(I, t, p)) + (int64_t)cxs_kt_get(kt, hw);
		kst64(kt, o, (uint64_t)pot);
		uint32_t child = (uint32_t)cxs_kt_get(kt, hc), sib = (uint32_t)cxs_kt_get(kt, hs);
		cxs_kt_compute(kt, 10);
		if (child != MCF_NONE) {
			v = child;
			continue;
		}
		while (sib == MCF_NONE && v != MCF_NONE) { /* climb until a sibling */
			v = p;
			if (v == 0) {
				v = MCF_NONE;
				break;
			}
			uint32_t h1 = cxs_kt_ld(kt, ksh(kt, node_at(I, t, v) + 16), 4);
			uint32_t h2 = cxs_kt_ld(kt, ksh(kt, node_at(I, t, v) + 8), 4);
			sib = (uint32_t)cxs_kt_get(kt, h1);
			p = (uint32_t)cxs_kt_get(kt, h2);
			cxs_kt_compute(kt, 4);
		}
		if (v != MCF_NONE)
			v = sib;
	}
}

static void run(struct cxs_kt *kt)
{
	const struct mcf_info *I = cxs_kt_image(kt)->info;
	uint32_t t = cxs_kt_id(kt);
	cxs_kt_roi_begin(kt);
	for (uint32_t it = 0; it < MCF_ITERS; it++) {
		int64_t best = 0;
		uint64_t best_arc = UINT64_MAX;
		for (uint64_t a0 = 0; a0 < I->arcs; a0 += 8) {
			uint32_t n = I->arcs - a0 < 8 ? (uint32_t)(I->arcs - a0) : 8, h[8][3], hp[8][2];
			for (uint32_t k = 0; k < n; k++) {
				uint64_t o = arc_at(I, t, a0 + k);
				h[k][0] = cxs_kt_ld(kt, ksh(kt, o), 8);
				h[k][1] = cxs_kt_ld(kt, ksh(kt, o + 8), 8);
				h[k][2] = cxs_kt_ld(kt, ksh(kt, o + 16), 4);
			}
			int64_t cost[8];
			bool basic[8];
			for (uint32_t k = 0; k < n; k++) {
				uint64_t th = cxs_kt_get(kt, h[k][0]);
				cost[k] = (int64_t)cxs_kt_get(kt, h[k][1]);
				basic[k] = cxs_kt_get(kt, h[k][2]) != 0;
				if (basic[k])
					continue;
				hp[k][0] = cxs_kt_ld(kt, ksh(kt, node_at(I, t, (uint32_t)th)), 8);
				hp[k][1] = cxs_kt_ld(kt, ksh(kt, node_at(I, t, (uint32_t)(th >> 32))), 8);
			}
			for (uint32_t k = 0; k < n; k++) {
				cxs_kt_compute(kt, 6);
				if (basic[k])
					continue;
				int64_t red = cost[k] - (int64_t)cxs_kt_get(kt, hp[k][0]) +
					      (int64_t)cxs_kt_get(kt, hp[k][1]);
				if (red < best) {
					best = red;
					best_arc = a0 + k;
				}
			}
		}
		if (best_arc != UINT64_MAX) {
			uint64_t o = arc_at(I, t, best_arc);
			uint32_t tail = kld32(kt, o);
			kst32(kt, o + 16, 1);
			uint64_t w = node_at(I, t, tail) + 24;
			kst64(kt, w, kld64(kt, w) + (uint64_t)(-best % 97));
		}
		refresh(kt, I, t);
	}
	cxs_kt_roi_end(kt);
	cxs_kt_check_words(kt, I->base_off + t * I->stride, I->stride);
}

const struct cxs_kernel cxs_kernel_mcf = {
	.name = "mcf",
	.doc = "modelled after SPEC CPU 2017's 505.mcf (rate: a copy a thread): arc pricing scans and depth-first potential refreshes over size / T nodes and 6x as many arcs",
	.default_size = 16384,
	.deterministic = true,
	.build = build,
	.run = run,
};
