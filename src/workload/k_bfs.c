/*
 * k_bfs.c — breadth-first search, modelled after GAPBS's bfs (the top-down
 * half of its direction-optimising search): depth of every vertex from the
 * highest-degree vertex of a generated graph (graph_priv.h; workload.variant
 * 0 kron, 1 road), with GAPBS's sliding queue (graph.c). Not the original
 * program: depths instead of a parent tree (the parent a vertex gets depends
 * on which thread is first; its depth does not), no bottom-up steps.
 *
 * Memory behaviour: per frontier vertex two index loads and its neighbour
 * ids (sequential), then one depth load per neighbour at a random address
 * and an atomic swap per vertex discovered (kron: no locality, irregular,
 * MLP from the batches; road: neighbours close by, hundreds of levels with
 * two barriers each).
 *
 * Shared layout: header line (levels), the BFS regions (graph.c), the graph.
 * Result: depth[] and the level count, checked against the reference run.
 * Size: vertices (kron: a power of two); ~2 x 8 x nv loads at kron.
 */
#include "cxlsim/kthread.h"

#include "graph_priv.h"
#include "kinfo_priv.h"
#include "klayout_priv.h"

static int build(struct cxs_kimage *img, char *err, size_t errlen)
{
	struct kgraph g;
	if (kgraph_generate(&g, "bfs", (uint32_t)img->variant, img->size, img->seed, false, err,
			    errlen) != 0)
		return -1;
	struct bfs_info *I = calloc(1, sizeof *I);
	if (!I) {
		kgraph_free(&g);
		snprintf(err, errlen, "bfs: out of memory");
		return -1;
	}
	img->info = I;
	uint64_t off = 0;
	I->hdr_off = klay_take(&off, KL_LINE);
	kgraph_bfs_place(g.nv, false, &off, &I->b);
	kgraph_place(&g, &off, &I->g);
	img->private_bytes = KL_LINE;
	if (klay_alloc(img, "bfs", off, err, errlen) != 0) {
		kgraph_free(&g);
		return -1;
	}
	kgraph_write(&g, &I->g, img->shared);
	kgraph_bfs_init(&I->b, g.nv, kgraph_hub(&g), img->shared);
	kgraph_free(&g);
	return 0;
}

static void run(struct cxs_kt *kt)
{
	const struct bfs_info *I = cxs_kt_image(kt)->info;
	cxs_kt_roi_begin(kt);
	uint32_t levels = kgraph_bfs(kt, &I->g, &I->b);
	if (cxs_kt_id(kt) == 0)
		kst64(kt, I->hdr_off, levels);
	cxs_kt_roi_end(kt);
	kgraph_bfs_clear_queue(kt, &I->b, I->g.nv);
	cxs_kt_barrier(kt, ksh(kt, I->b.barrier_off), cxs_kt_count(kt));
	kcheck_share(kt, I->b.depth_off, 4 * (uint64_t)I->g.nv);
	kcheck_share(kt, I->b.queue_off, 4 * (uint64_t)I->g.nv);
	if (cxs_kt_id(kt) == 0) {
		cxs_kt_check_words(kt, I->hdr_off, 8);
		cxs_kt_check_words(kt, I->b.tail_off, 8);
	}
	cxs_kt_result(kt, "levels", cxs_kt_id(kt) == 0 ? levels : 0);
}

const struct cxs_kernel cxs_kernel_bfs = {
	.name = "bfs",
	.doc = "modelled after GAPBS's bfs: top-down level-synchronous BFS depths from the hub of a generated graph (variant " KGRAPH_KINDS "; size vertices)",
	.default_size = 65536,
	.deterministic = true,
	.build = build,
	.run = run,
};
