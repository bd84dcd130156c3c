/*
 * k_cc.c — connected components, modelled after GAPBS's cc (its
 * Shiloach-Vishkin variant: hooking by minimum label, then shortcutting):
 * synchronous rounds of
 *     next[v] = min(label[v], label[u] for every neighbour u, label[label[v]])
 * until no label changes, on a generated graph (graph_priv.h; variant 0
 * kron, 1 road). The fixpoint is the smallest vertex id of each component.
 * Not the original program: Jacobi rounds with two label arrays (GAPBS
 * updates in place, so its round count depends on timing; ours must not),
 * the shortcut folded into the same pass.
 *
 * Memory behaviour: per round a stream over the own labels and the CSR, a
 * random label gather per edge and one dependent load (the shortcut) per
 * vertex; a changed-count per thread and a barrier per round (kron: ~5
 * rounds; road: tens).
 *
 * Shared layout: barrier line, 2 x T count lines, header (rounds), label
 * arrays A and B (u32[nv]), the graph. Result: the final labels and the round
 * count, checked against the reference.
 */
#include "cxlsim/kthread.h"

#include "graph_priv.h"
#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	struct kgraph g;
	if (kgraph_generate(&g, "cc", (uint32_t)img->variant, img->size, img->seed, false, err,
			    errlen) != 0)
		return -1;
	struct cc_info *I = calloc(1, sizeof *I);
	if (!I) {
		kgraph_free(&g);
		snprintf(err, errlen, "cc: out of memory");
		return -1;
	}
	img->info = I;
	uint64_t off = 0;
	I->bar_off = klay_take(&off, KL_LINE);
	I->counts_off = klay_take(&off, 2 * (uint64_t)img->nthreads * KL_LINE);
	I->hdr_off = klay_take(&off, KL_LINE);
	I->lab_off[0] = klay_take(&off, 4 * (uint64_t)g.nv);
	I->lab_off[1] = klay_take(&off, 4 * (uint64_t)g.nv);
	kgraph_place(&g, &off, &I->g);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "cc", off, err, errlen) != 0) {
		kgraph_free(&g);
		return -1;
	}
	kgraph_write(&g, &I->g, img->shared);
	for (uint32_t v = 0; v < g.nv; v++)
		kput32(img->shared, I->lab_off[0] + 4 * (uint64_t)v, v);
	kgraph_free(&g);
	return 0;
}

static void run(struct cxs_kt *kt)
{
	const struct cc_info *I = cxs_kt_image(kt)->info;
	uint32_t T = cxs_kt_count(kt), t = cxs_kt_id(kt), nv = I->g.nv, round = 0;
	uint64_t lo, hi;
	kshare(nv, t, T, &lo, &hi);
	cxs_kt_roi_begin(kt);
	for (;; round++) {
		uint64_t cur = I->lab_off[round % 2], nxt = I->lab_off[1 - round % 2], changed = 0;
		for (uint64_t v = lo; v < hi; v += 8) {
			uint32_t n = hi - v < 8 ? (uint32_t)(hi - v) : 8, u[8], own[8], best[8], m;
			uint32_t hl[8], w[KGRAPH_BATCH], pos[KGRAPH_BATCH], h[KGRAPH_BATCH];
			uint8_t src[KGRAPH_BATCH];
			struct kedges e;
			for (uint32_t k = 0; k < n; k++) {
				u[k] = (uint32_t)(v + k);
				hl[k] = cxs_kt_ld(kt, ksh(kt, cur + 4 * (v + k)), 4);
			}
			for (uint32_t k = 0; k < n; k++)
				best[k] = own[k] = (uint32_t)cxs_kt_get(kt, hl[k]);
			for (uint32_t k = 0; k < n; k++) /* the shortcut: label of the label */
				hl[k] = cxs_kt_ld(kt, ksh(kt, cur + 4 * (uint64_t)own[k]), 4);
			kedges_begin(kt, &e, &I->g, u, n);
			for (uint32_t k = 0; k < n; k++) {
				uint32_t j = (uint32_t)cxs_kt_get(kt, hl[k]);
				if (j < best[k])
					best[k] = j;
			}
			while ((m = kedges_next(kt, &e, src, w, pos)) > 0) {
				for (uint32_t k = 0; k < m; k++)
					h[k] = cxs_kt_ld(kt, ksh(kt, cur + 4 * (uint64_t)w[k]), 4);
				for (uint32_t k = 0; k < m; k++) {
					uint32_t l = (uint32_t)cxs_kt_get(kt, h[k]);
					if (l < best[src[k]])
						best[src[k]] = l;
				}
				cxs_kt_compute(kt, 2 * m);
			}
			for (uint32_t k = 0; k < n; k++) {
				kst32(kt, nxt + 4 * (v + k), best[k]);
				changed += best[k] != own[k];
			}
			cxs_kt_compute(kt, 4 * n);
		}
		kst64(kt, I->counts_off + ((uint64_t)(round % 2) * T + t) * KL_LINE, changed);
		cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
		uint64_t total = 0;
		for (uint32_t i = 0; i < T; i++)
			total += kld64(kt, I->counts_off + ((uint64_t)(round % 2) * T + i) * KL_LINE);
		if (total == 0)
			break;
	}
	/* Everyone has read both parities: clear ours, then the result is in nxt (= cur). */
	cxs_kt_barrier(kt, ksh(kt, I->bar_off), T);
	kst64(kt, I->counts_off + (uint64_t)t * KL_LINE, 0);
	kst64(kt, I->counts_off + ((uint64_t)T + t) * KL_LINE, 0);
	if (t == 0)
		kst64(kt, I->hdr_off, round + 1);
	cxs_kt_roi_end(kt);
	kcheck_share(kt, I->lab_off[0], 4 * (uint64_t)nv);
	kcheck_share(kt, I->lab_off[1], 4 * (uint64_t)nv);
	if (t == 0)
		cxs_kt_check_words(kt, I->hdr_off, 8);
	cxs_kt_result(kt, "rounds", t == 0 ? round + 1 : 0);
}

const struct cxs_kernel cxs_kernel_cc = {
	.name = "cc",
	.doc = "modelled after GAPBS's cc: min-label hooking with shortcuts in synchronous rounds over a generated graph (variant " KGRAPH_KINDS "; size vertices)",
	.default_size = 32768,
	.deterministic = true,
	.build = build,
	.run = run,
};
